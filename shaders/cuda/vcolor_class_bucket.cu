// #include "common/dispatch.cuh"

// CUDA twin of shaders/vcolor_class_bucket.wgsl. Iterated greedy (color reduction), step 3 of
// 4: every vertex goes into the segment of its old color c in `order` (counting sort on the
// cursors class_next). Ranks within colors up to LOCAL_CLASSES are taken in shared memory and
// each block reserves one run per class with one global atomicAdd; larger colors take a slot
// each. The order inside a segment does not change the recoloring's result.

#define LOCAL_CLASSES 64u

extern "C" __global__ void vcolor_class_bucket(
    const u32* __restrict__ old_colors,
    u32* __restrict__ class_next,
    u32* __restrict__ order,
    ItemRange range) {
    await_previous_launches();
    __shared__ u32 local_size[LOCAL_CLASSES];
    __shared__ u32 local_first[LOCAL_CLASSES];
    u32 lid = threadIdx.x;
    local_size[lid] = 0u;
    __syncthreads();
    u32 v = linear_index();
    u32 c = 0u;
    u32 rank = 0u;
    if (v < range.count) {
        c = old_colors[v];
        if (c != 0u && c <= LOCAL_CLASSES) {
            rank = atomicAdd(&local_size[c - 1u], 1u);
        }
    }
    __syncthreads();
    u32 s = local_size[lid];
    if (s != 0u) {
        local_first[lid] = atomicAdd(&class_next[lid], s);
    }
    __syncthreads();
    if (c != 0u && c <= LOCAL_CLASSES) {
        order[local_first[c - 1u] + rank] = v;
    } else if (c != 0u) {
        order[atomicAdd(&class_next[c - 1u], 1u)] = v;
    }
}
