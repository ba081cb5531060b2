// #include "common/dispatch.cuh"

// CUDA twin of shaders/vcolor_max.wgsl. The number of colors of a vertex coloring:
// largest[0] = max(colors[0 .. range.count]) (colors are 1-based). Each block reduces
// WORKGROUP_SIZE * 4 colors in shared memory and merges its maximum with one atomicMax. The
// host zeroes largest[0] first.

#define ITEMS_PER_THREAD 4u

extern "C" __global__ void vcolor_max(
    const u32* __restrict__ colors,
    u32* __restrict__ largest,
    ItemRange range) {
    await_previous_launches();
    __shared__ u32 partial[WORKGROUP_SIZE];
    u32 lid = threadIdx.x;
    u32 group = blockIdx.x + blockIdx.y * gridDim.x;
    u32 base = group * WORKGROUP_SIZE * ITEMS_PER_THREAD;
    u32 m = 0u;
    for (u32 k = 0u; k < ITEMS_PER_THREAD; k = k + 1u) {
        u32 idx = base + k * WORKGROUP_SIZE + lid;
        if (idx < range.count) {
            m = max(m, colors[idx]);
        }
    }
    partial[lid] = m;
    __syncthreads();
    for (u32 stride = WORKGROUP_SIZE / 2u; stride > 0u; stride = stride / 2u) {
        if (lid < stride) {
            partial[lid] = max(partial[lid], partial[lid + stride]);
        }
        __syncthreads();
    }
    if (lid == 0u) {
        atomicMax(&largest[0], partial[0]);
    }
}
