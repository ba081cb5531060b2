// #include "common/dispatch.wgsl"

// Color reduction, ejection round, step 3 of 3: each winner takes its proposed color and ejects
// the same-class neighbours that held it (uncolored, that color becomes their tabu, defect flag
// set). Races are benign: two winners ejecting one vertex write the same values; a winner never
// ejects a winner (neighbouring winners proposed different colors) nor reads a neighbour's
// color as its own proposal while that neighbour changes it (same reason), and a vertex being
// ejected reads winner[v] = 0 (resolve cleared it), so the outcome is deterministic and the
// partial coloring stays proper. Work is proportional to the winners' degrees.

@group(0) @binding(0) var<storage, read> adjacency_offsets: array<u32>;
@group(0) @binding(1) var<storage, read> adjacency: array<u32>;
@group(0) @binding(2) var<storage, read> vertex_class: array<u32>;
@group(0) @binding(3) var<storage, read> proposal: array<u32>;
@group(0) @binding(4) var<storage, read> winner: array<u32>;
@group(0) @binding(5) var<storage, read_write> colors: array<u32>;
@group(0) @binding(6) var<storage, read_write> tabu: array<u32>;
@group(0) @binding(7) var<storage, read_write> defect: array<u32>;
@group(1) @binding(0) var<uniform> range: ItemRange;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let v = linear_index(gid, nwg);
    if (v >= range.count || winner[v] == 0u) {
        return;
    }
    let c = proposal[v];
    colors[v] = c;
    defect[v] = 0u;
    let class_v = vertex_class[v];
    for (var j = adjacency_offsets[v]; j < adjacency_offsets[v + 1u]; j = j + 1u) {
        let u = adjacency[j];
        if (vertex_class[u] == class_v && colors[u] == c) {
            colors[u] = 0u;
            tabu[u] = c;
            defect[u] = 1u;
        }
    }
}
