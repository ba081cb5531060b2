// #include "common/dispatch.cuh"

// CUDA twin of shaders/vcolor_class_count.wgsl. Iterated greedy (color reduction), step 1 of 4:
// save and clear the colors and count the vertices of each old color class, class_size[c - 1]
// += 1, in shared memory for colors up to LOCAL_CLASSES (one global atomicAdd per class and
// block), straight to the global count above.

#define LOCAL_CLASSES 64u

extern "C" __global__ void vcolor_class_count(
    u32* __restrict__ colors,
    u32* __restrict__ old_colors,
    u32* __restrict__ class_size,
    ItemRange range) {
    await_previous_launches();
    __shared__ u32 local_size[LOCAL_CLASSES];
    u32 lid = threadIdx.x;
    local_size[lid] = 0u;
    __syncthreads();
    u32 v = linear_index();
    if (v < range.count) {
        u32 c = colors[v];
        old_colors[v] = c;
        colors[v] = 0u;
        if (c != 0u && c <= LOCAL_CLASSES) {
            atomicAdd(&local_size[c - 1u], 1u);
        } else if (c != 0u) {
            atomicAdd(&class_size[c - 1u], 1u);
        }
    }
    __syncthreads();
    u32 s = local_size[lid];
    if (s != 0u) {
        atomicAdd(&class_size[lid], s);
    }
}
