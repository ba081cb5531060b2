// #include "common/dispatch.wgsl"
// #include "common/scan_blocks.wgsl"

// First of the two launches of the exclusive prefix sum (common/scan_blocks.wgsl; the second,
// scan_add or a kernel consuming the scan, adds the block offsets).

fn scan_item(k: u32) -> u32 {
    return input[k];
}

// Every block of a plain scan is live.
const LIVE_BLOCKS: u32 = 0u;

fn scan_set_live_ranges(blocks: u32) -> u32 {
    live_ranges[0] = vec2<u32>(0u, blocks);
    return 1u;
}

@compute @workgroup_size(SCAN_THREADS)
fn main(
    @builtin(local_invocation_id) lid: vec3<u32>,
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
) {
    scan_blocks_run(lid.x, wid.x + wid.y * nwg.x);
}
