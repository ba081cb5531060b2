// #include "common/dispatch.cuh"

// CUDA twin of shaders/vcolor_eject_start.wgsl. Color reduction, start of an ejection attempt
// on the top color k = range.color: the colors are saved, tabu colors and ejection stamps
// cleared, and the vertices of color k become uncolored defects, listed in `defects`
// (defect_count[0] long; the host zeroed it), one atomicAdd per block.

extern "C" __global__ void vcolor_eject_start(
    u32* __restrict__ colors,
    u32* __restrict__ saved,
    u32* __restrict__ tabu,
    u32* __restrict__ listed,
    u32* __restrict__ defects,
    u32* __restrict__ defect_count,
    ItemRange range) {
    await_previous_launches();
    __shared__ u32 local_count;
    __shared__ u32 local_first;
    u32 lid = threadIdx.x;
    if (lid == 0u) {
        local_count = 0u;
    }
    __syncthreads();
    u32 v = linear_index();
    bool top = false;
    u32 rank = 0u;
    if (v < range.count) {
        u32 c = colors[v];
        saved[v] = c;
        tabu[v] = 0u;
        listed[v] = 0u;
        top = c == range.color;
        if (top) {
            colors[v] = 0u;
            rank = atomicAdd(&local_count, 1u);
        }
    }
    __syncthreads();
    if (lid == 0u) {
        local_first = atomicAdd(&defect_count[0], local_count);
    }
    __syncthreads();
    if (top) {
        defects[local_first + rank] = v;
    }
}
