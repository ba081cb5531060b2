// #include "common/dispatch.cuh"

// CUDA twin of shaders/reduce_min.wgsl. One pass of a tree min-reduction: each block reduces
// WORKGROUP_SIZE * 4 consecutive inputs to one output, out[w] = min(in[k]) over its block. The
// host chains passes (n -> n / 256 -> ...) until one value is left, so the minimum never
// visits the host.

#define ITEMS_PER_THREAD 4u
#define BIG 3.0e38f

extern "C" __global__ void reduce_min(
    const float* __restrict__ input,
    float* __restrict__ output,
    ItemRange range) {
    await_previous_launches();
    __shared__ float partial[WORKGROUP_SIZE];
    u32 lid = threadIdx.x;
    u32 group = blockIdx.x + blockIdx.y * gridDim.x;
    u32 base = group * WORKGROUP_SIZE * ITEMS_PER_THREAD;
    float m = BIG;
    for (u32 k = 0u; k < ITEMS_PER_THREAD; k = k + 1u) {
        u32 idx = base + k * WORKGROUP_SIZE + lid;
        if (idx < range.count) {
            m = fminf(m, input[range.first + idx]);
        }
    }
    partial[lid] = m;
    __syncthreads();
    for (u32 stride = WORKGROUP_SIZE / 2u; stride > 0u; stride = stride / 2u) {
        if (lid < stride) {
            partial[lid] = fminf(partial[lid], partial[lid + stride]);
        }
        __syncthreads();
    }
    if (lid == 0u) {
        output[group] = partial[0];
    }
}
