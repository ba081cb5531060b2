// #include "common/dispatch.cuh"

// CUDA twin of shaders/scan_add.wgsl. Second half of the block scan: output[i] +=
// block_offsets[i / 256], turning per-block exclusive sums into a global exclusive prefix sum.

#define SCAN_BLOCK 256u

extern "C" __global__ void scan_add(
    const u32* __restrict__ block_offsets,
    u32* __restrict__ output,
    ItemRange range) {
    u32 i = linear_index();
    if (i >= range.count) {
        return;
    }
    output[i] = output[i] + block_offsets[i / SCAN_BLOCK];
}
