// #include "common/dispatch.wgsl"

// Second launch of the exclusive prefix sum (src/runtime/scan.rs): output[i] +=
// block_offsets[i / SCAN_BLOCK] for the items range.first .. range.first + range.count, turning
// scan_blocks' per-block sums into the global exclusive prefix sum (block_offsets is the
// block totals as scan_blocks' last workgroup scanned them). Block 0's offset is 0, so the
// host starts the range at SCAN_BLOCK.

@group(0) @binding(0) var<storage, read> block_offsets: array<u32>;
@group(0) @binding(1) var<storage, read_write> output: array<u32>;
@group(1) @binding(0) var<uniform> range: ItemRange;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let t = linear_index(gid, nwg);
    if (t >= range.count) {
        return;
    }
    let i = range.first + t;
    output[i] = output[i] + block_offsets[i / SCAN_BLOCK];
}
