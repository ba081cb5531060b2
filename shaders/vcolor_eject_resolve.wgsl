// #include "common/dispatch.wgsl"
// #include "common/vcolor_hash.wgsl"
// #include "common/vcolor_eject_resolve.wgsl"

// Color reduction, ejection round, step 2 of 3, over the defect list (defects[0 ..
// defect_count[0]], a grid-stride loop): winner[v] = 1 when defect v keeps its proposal
// (proposal_wins in common/vcolor_eject_resolve.wgsl), 0 for the other defects; vertices off
// the list are not written (step 3 reads only the list's). round_number = round_base[0] +
// range.pad.

@group(0) @binding(0) var<storage, read> adjacency_offsets: array<u32>;
@group(0) @binding(1) var<storage, read> adjacency: array<u32>;
@group(0) @binding(2) var<storage, read> vertex_class: array<u32>;
@group(0) @binding(3) var<storage, read> colors: array<u32>;
@group(0) @binding(4) var<storage, read> proposal: array<u32>;
@group(0) @binding(5) var<storage, read> round_base: array<u32>;
@group(0) @binding(6) var<storage, read> defects: array<u32>;
@group(0) @binding(7) var<storage, read> defect_count: array<u32>;
@group(0) @binding(8) var<storage, read_write> winner: array<u32>;
@group(1) @binding(0) var<uniform> range: ItemRange;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let threads = nwg.x * nwg.y * WORKGROUP_SIZE;
    let round_number = round_base[0] + range.pad;
    let len = defect_count[0];
    for (var i = linear_index(gid, nwg); i < len; i = i + threads) {
        let v = defects[i];
        winner[v] = proposal_wins(v, round_number);
    }
}
