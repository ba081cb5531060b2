// #include "common/dispatch.wgsl"

// The number of colors of a vertex coloring: largest[0] = max(colors[0 .. range.count]) (colors
// are 1-based, so the maximum is the count). Each workgroup reduces WORKGROUP_SIZE * 4 colors
// in workgroup memory and merges its maximum with one atomicMax, so the color reduction learns
// the count with one launch and a 4-byte read-back. The host zeroes largest[0] first.

@group(0) @binding(0) var<storage, read> colors: array<u32>;
@group(0) @binding(1) var<storage, read_write> largest: array<atomic<u32>>;
@group(1) @binding(0) var<uniform> range: ItemRange;

const ITEMS_PER_THREAD: u32 = 4u;

var<workgroup> partial: array<u32, WORKGROUP_SIZE>;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(
    @builtin(local_invocation_id) lid: vec3<u32>,
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
) {
    let group = wid.x + wid.y * nwg.x;
    let base = group * WORKGROUP_SIZE * ITEMS_PER_THREAD;
    var m = 0u;
    for (var k = 0u; k < ITEMS_PER_THREAD; k = k + 1u) {
        let idx = base + k * WORKGROUP_SIZE + lid.x;
        if (idx < range.count) {
            m = max(m, colors[idx]);
        }
    }
    partial[lid.x] = m;
    workgroupBarrier();
    for (var stride = WORKGROUP_SIZE / 2u; stride > 0u; stride = stride / 2u) {
        if (lid.x < stride) {
            partial[lid.x] = max(partial[lid.x], partial[lid.x + stride]);
        }
        workgroupBarrier();
    }
    if (lid.x == 0u) {
        atomicMax(&largest[0], partial[0]);
    }
}
