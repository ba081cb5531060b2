// #include "common/dispatch.wgsl"
// #include "common/vcolor_hash.wgsl"

// Color reduction, ejection round, step 2 of 3: an uncolored vertex v wins its proposal unless a
// same-class uncolored neighbour u proposed the same color with a higher priority
// (round_hash(u, round_number) smaller, ties by number), so two neighbours never take one color.
// winner[v] = 1 for winners, 0 for every other vertex. round_number = round_base[0] + range.first.

@group(0) @binding(0) var<storage, read> adjacency_offsets: array<u32>;
@group(0) @binding(1) var<storage, read> adjacency: array<u32>;
@group(0) @binding(2) var<storage, read> vertex_class: array<u32>;
@group(0) @binding(3) var<storage, read> colors: array<u32>;
@group(0) @binding(4) var<storage, read> proposal: array<u32>;
@group(0) @binding(5) var<storage, read> round_base: array<u32>;
@group(0) @binding(6) var<storage, read_write> winner: array<u32>;
@group(1) @binding(0) var<uniform> range: ItemRange;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let v = linear_index(gid, nwg);
    if (v >= range.count) {
        return;
    }
    let p = proposal[v];
    if (colors[v] != 0u || p == 0u) {
        winner[v] = 0u;
        return;
    }
    let round_number = round_base[0] + range.first;
    let pv = round_hash(v, round_number);
    let class_v = vertex_class[v];
    var wins = 1u;
    for (var j = adjacency_offsets[v]; j < adjacency_offsets[v + 1u]; j = j + 1u) {
        let u = adjacency[j];
        if (vertex_class[u] == class_v && colors[u] == 0u && proposal[u] == p) {
            let pu = round_hash(u, round_number);
            if (pu < pv || (pu == pv && u < v)) {
                wins = 0u;
            }
        }
    }
    winner[v] = wins;
}
