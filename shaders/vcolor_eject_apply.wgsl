// #include "common/dispatch.wgsl"
// #include "common/vcolor_eject_apply.wgsl"

// Color reduction, ejection round, step 3 of 3, over the defect list (defects[0 ..
// defect_count[0]]): winners take their colors and eject the neighbours holding them, the
// losers and the ejected vertices form the next round's list, next_defects[0 ..
// next_count[0]] (vcolor_eject_count emptied it); see common/vcolor_eject_apply.wgsl. The
// stamp of round round_base[0] + range.pad is that round + 1. The loop over the list is a
// grid-stride loop in whole workgroups, so the barriers stay in uniform control flow.

@group(0) @binding(0) var<storage, read> adjacency_offsets: array<u32>;
@group(0) @binding(1) var<storage, read> adjacency: array<u32>;
@group(0) @binding(2) var<storage, read> vertex_class: array<u32>;
@group(0) @binding(3) var<storage, read> proposal: array<u32>;
@group(0) @binding(4) var<storage, read> winner: array<u32>;
@group(0) @binding(5) var<storage, read> round_base: array<u32>;
@group(0) @binding(6) var<storage, read> defects: array<u32>;
@group(0) @binding(7) var<storage, read> defect_count: array<u32>;
@group(0) @binding(8) var<storage, read_write> colors: array<u32>;
@group(0) @binding(9) var<storage, read_write> tabu: array<u32>;
@group(0) @binding(10) var<storage, read_write> listed: array<atomic<u32>>;
@group(0) @binding(11) var<storage, read_write> next_defects: array<u32>;
@group(0) @binding(12) var<storage, read_write> next_count: array<atomic<u32>>;
@group(1) @binding(0) var<uniform> range: ItemRange;

var<workgroup> list_length: u32;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(
    @builtin(local_invocation_id) lid: vec3<u32>,
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
) {
    let threads = nwg.x * nwg.y * WORKGROUP_SIZE;
    let group = wid.x + wid.y * nwg.x;
    if (lid.x == 0u) {
        list_length = defect_count[0];
    }
    let len = workgroupUniformLoad(&list_length);
    let stamp = round_base[0] + range.pad + 1u;
    for (var chunk = group * WORKGROUP_SIZE; chunk < len; chunk = chunk + threads) {
        apply_chunk(chunk + lid.x, len, lid.x, stamp);
    }
}
