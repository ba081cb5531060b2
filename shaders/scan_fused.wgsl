// #include "common/dispatch.wgsl"
// #include "common/scan_fused.wgsl"

// The fused scan (common/scan_fused.wgsl) over items already in a buffer: range.color parts of
// range.count items each, one thread per item of a part. The adaptation's kernels fuse the scan
// into the launch that produces their items; this kernel is the scan alone, for FusedScan's
// own uses and tests (src/runtime/scan.rs), which read the numbers as scan_numbers.wgsl does.

@group(0) @binding(0) var<storage, read> scan_in: array<u32>;
@group(0) @binding(1) var<storage, read_write> scan_out: array<u32>;
@group(0) @binding(2) var<storage, read_write> scan_blocks_prefix: array<atomic<u32>>;
@group(0) @binding(3) var<storage, read_write> scan_state: array<atomic<u32>>;
@group(1) @binding(0) var<uniform> range: ItemRange;

// Nothing to count past the scan's own words.
fn scan_done(lid: u32) {
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(
    @builtin(local_invocation_id) lid: vec3<u32>,
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
) {
    let group = wid.x + wid.y * nwg.x;
    if (group >= scan_blocks_per_part(range.count)) {
        return;
    }
    fused_scan(lid.x, group, range.color, range.count);
}
