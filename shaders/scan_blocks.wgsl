// #include "common/dispatch.wgsl"
// #include "common/scan_blocks.wgsl"

// First of the two launches of the exclusive prefix sum (common/scan_blocks.wgsl; the second,
// scan_add or a kernel consuming the scan, adds the block offsets).

fn scan_item(k: u32) -> u32 {
    return input[k];
}

@compute @workgroup_size(SCAN_THREADS)
fn main(
    @builtin(local_invocation_id) lid: vec3<u32>,
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
) {
    scan_blocks_run(lid.x, wid.x + wid.y * nwg.x);
}
