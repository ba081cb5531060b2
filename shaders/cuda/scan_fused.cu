// #include "common/dispatch.cuh"
// #include "common/scan_fused.cuh"

// CUDA twin of shaders/scan_fused.wgsl: the fused scan (common/scan_fused.cuh) over items
// already in a buffer, range.color parts of range.count items each, one thread per item of a
// part; for FusedScan's own uses and tests (src/runtime/scan.rs).

extern "C" __global__ void scan_fused(
    const u32* scan_in,
    u32* scan_out,
    u32* scan_blocks_prefix,
    u32* scan_state,
    ItemRange range) {
    await_previous_launches();
    u32 group = blockIdx.x + blockIdx.y * gridDim.x;
    if (group >= scan_blocks_per_part(range.count)) {
        return;
    }
    FusedScanBuffers scan = {scan_in, scan_out, scan_blocks_prefix, scan_state};
    // Nothing to count past the scan's own words.
    fused_scan(scan, threadIdx.x, group, range.color, range.count, [](u32) {});
}
