// #include "common/dispatch.wgsl"

// Color reduction, ejection round, step 3 of 3: winners take their proposed color; a colored
// vertex holding the color a same-class neighbouring winner takes is ejected (uncolored, and
// that color becomes its tabu). Every thread writes only its own vertex and reads the
// winners' flags and proposals, which this launch does not change, so the round is race-free
// and the partial coloring stays proper. defect[v] = 1 for the vertices left uncolored: their
// prefix sum's total is the round's defect count (0: the top color is gone).

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
    if (v >= range.count) {
        return;
    }
    if (winner[v] != 0u) {
        colors[v] = proposal[v];
        defect[v] = 0u;
        return;
    }
    let c = colors[v];
    if (c == 0u) {
        defect[v] = 1u;
        return;
    }
    let class_v = vertex_class[v];
    for (var j = adjacency_offsets[v]; j < adjacency_offsets[v + 1u]; j = j + 1u) {
        let u = adjacency[j];
        if (vertex_class[u] == class_v && winner[u] != 0u && proposal[u] == c) {
            colors[v] = 0u;
            tabu[v] = c;
            defect[v] = 1u;
            return;
        }
    }
    defect[v] = 0u;
}
