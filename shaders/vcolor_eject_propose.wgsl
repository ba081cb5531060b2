// #include "common/dispatch.wgsl"
// #include "common/vcolor_hash.wgsl"
// #include "common/vcolor_eject_propose.wgsl"

// Color reduction, ejection round, step 1 of 3, over the defect list (defects[0 ..
// defect_count[0]], every uncolored vertex; a grid-stride loop, the grid is the host's
// choice): every defect v proposes a color in 1 .. k-1 (k = range.color <= MAX_EJECT_COLORS +
// 1), proposed_color in common/vcolor_eject_propose.wgsl. round_number = round_base[0] +
// range.pad (the round within the submit; range.first and range.count name the launch record
// the grid came from). Only `proposal` is written, so every thread reads the colors of the
// previous round.

@group(0) @binding(0) var<storage, read> adjacency_offsets: array<u32>;
@group(0) @binding(1) var<storage, read> adjacency: array<u32>;
@group(0) @binding(2) var<storage, read> vertex_class: array<u32>;
@group(0) @binding(3) var<storage, read> colors: array<u32>;
@group(0) @binding(4) var<storage, read> tabu: array<u32>;
@group(0) @binding(5) var<storage, read> round_base: array<u32>;
@group(0) @binding(6) var<storage, read> defects: array<u32>;
@group(0) @binding(7) var<storage, read> defect_count: array<u32>;
@group(0) @binding(8) var<storage, read_write> proposal: array<u32>;
@group(1) @binding(0) var<uniform> range: ItemRange;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let threads = nwg.x * nwg.y * WORKGROUP_SIZE;
    let k = min(range.color, MAX_EJECT_COLORS + 1u);
    let round_number = round_base[0] + range.pad;
    let len = defect_count[0];
    for (var i = linear_index(gid, nwg); i < len; i = i + threads) {
        let v = defects[i];
        proposal[v] = proposed_color(v, k, round_number);
    }
}
