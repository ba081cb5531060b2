// #include "common/dispatch.cuh"

// CUDA twin of shaders/scan_add.wgsl. Second launch of the exclusive prefix sum
// (src/runtime/scan.rs): output[i] += block_offsets[i / SCAN_BLOCK] for the items range.first ..
// range.first + range.count, turning scan_blocks' per-block sums into the global exclusive
// prefix sum. Block 0's offset is 0, so the host starts the range at SCAN_BLOCK.

extern "C" __global__ void scan_add(
    const u32* __restrict__ block_offsets,
    u32* __restrict__ output,
    ItemRange range) {
    await_previous_launches();
    u32 t = linear_index();
    if (t >= range.count) {
        return;
    }
    u32 i = range.first + t;
    output[i] = output[i] + block_offsets[i / SCAN_BLOCK];
}
