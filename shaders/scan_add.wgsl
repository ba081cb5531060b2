// #include "common/dispatch.wgsl"

// Second half of the block scan: output[i] += block_offsets[i / 256], turning per-block
// exclusive sums into a global exclusive prefix sum.

@group(0) @binding(0) var<storage, read> block_offsets: array<u32>;
@group(0) @binding(1) var<storage, read_write> output: array<u32>;
@group(1) @binding(0) var<uniform> range: ItemRange;

const SCAN_BLOCK: u32 = 256u;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = linear_index(gid, nwg);
    if (i >= range.count) {
        return;
    }
    output[i] = output[i] + block_offsets[i / SCAN_BLOCK];
}
