// #include "common/dispatch.wgsl"

// One pass of a tree min-reduction: each workgroup reduces WORKGROUP_SIZE * 4 consecutive
// inputs to one output, out[w] = min(in[k]) over its block. The host chains passes
// (n -> n / 256 -> ...) until one value is left, so the minimum never visits the host.

@group(0) @binding(0) var<storage, read> input: array<f32>;
@group(0) @binding(1) var<storage, read_write> output: array<f32>;
@group(1) @binding(0) var<uniform> range: ItemRange;

const ITEMS_PER_THREAD: u32 = 4u;
const BIG: f32 = 3.0e38;

var<workgroup> partial: array<f32, WORKGROUP_SIZE>;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(
    @builtin(local_invocation_id) lid: vec3<u32>,
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
) {
    let group = wid.x + wid.y * nwg.x;
    let base = group * WORKGROUP_SIZE * ITEMS_PER_THREAD;
    var m = BIG;
    for (var k = 0u; k < ITEMS_PER_THREAD; k = k + 1u) {
        let idx = base + k * WORKGROUP_SIZE + lid.x;
        if (idx < range.count) {
            m = min(m, input[range.first + idx]);
        }
    }
    partial[lid.x] = m;
    workgroupBarrier();
    for (var stride = WORKGROUP_SIZE / 2u; stride > 0u; stride = stride / 2u) {
        if (lid.x < stride) {
            partial[lid.x] = min(partial[lid.x], partial[lid.x + stride]);
        }
        workgroupBarrier();
    }
    if (lid.x == 0u) {
        output[group] = partial[0];
    }
}
