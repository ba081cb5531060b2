// #include "common/dispatch.wgsl"
// #include "common/vcolor_hash.wgsl"

// Color reduction, ejection round, step 1 of 3, over the defect list (defects[0 ..
// defect_count[0]], every uncolored vertex; a grid-stride loop, the grid is the host's
// choice): every defect v proposes a color c in 1 .. k-1 (k = range.color <= MAX_EJECT_COLORS +
// 1) that minimizes the number of same-class neighbours holding c: a free color if there is one
// (the smallest), else the color that ejects the fewest neighbours, ties broken by a hash of
// (v, c, round) so that defects wander instead of cycling. The color v was itself ejected from
// (tabu[v]) is not proposed unless free. round_number = round_base[0] + range.pad (the round
// within the submit; range.first and range.count name the launch record the grid came from).
// Only `proposal` is written, so every thread reads the colors of the previous round.

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

const MAX_EJECT_COLORS: u32 = 32u;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let threads = nwg.x * nwg.y * WORKGROUP_SIZE;
    let first = linear_index(gid, nwg);
    let k = min(range.color, MAX_EJECT_COLORS + 1u);
    let round_number = round_base[0] + range.pad;
    let len = defect_count[0];
    for (var i = first; i < len; i = i + threads) {
        let v = defects[i];
        var holders: array<u32, MAX_EJECT_COLORS>;
        let class_v = vertex_class[v];
        for (var j = adjacency_offsets[v]; j < adjacency_offsets[v + 1u]; j = j + 1u) {
            let u = adjacency[j];
            let c = colors[u];
            if (vertex_class[u] == class_v && c != 0u && c < k) {
                holders[c - 1u] = holders[c - 1u] + 1u;
            }
        }
        var best = 0u;
        var best_holders = 0xffffffffu;
        var best_tie = 0xffffffffu;
        for (var c = 1u; c < k; c = c + 1u) {
            let h = holders[c - 1u];
            if (h != 0u && c == tabu[v]) {
                continue;
            }
            let tie = select(round_hash(v * MAX_EJECT_COLORS + c, round_number), c, h == 0u);
            if (h < best_holders || (h == best_holders && tie < best_tie)) {
                best = c;
                best_holders = h;
                best_tie = tie;
            }
        }
        proposal[v] = best;
    }
}
