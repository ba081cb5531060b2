// #include "common/dispatch.cuh"
// #include "common/scan_blocks.cuh"

// CUDA twin of shaders/scan_blocks.wgsl: the first of the two launches of the exclusive prefix
// sum (common/scan_blocks.cuh; the second, scan_add or a kernel consuming the scan, adds the
// block offsets).

extern "C" __global__ void scan_blocks(
    const u32* __restrict__ input,
    u32* __restrict__ output,
    u32* block_sums,
    u32* sums,
    u32* ticket,
    ItemRange range) {
    await_previous_launches();
    // Every block of a plain scan is live (LIVE_BLOCKS 0).
    auto every_block = [](u32 blocks, uint2* ranges) -> u32 {
        ranges[0] = make_uint2(0u, blocks);
        return 1u;
    };
    scan_blocks_run([&](u32 k) { return input[k]; }, every_block, output, block_sums, sums,
                    ticket, range, threadIdx.x, blockIdx.x + blockIdx.y * gridDim.x);
}
