// #include "common/dispatch.wgsl"
// #include "common/vcolor_hash.wgsl"

// Speculative greedy vertex coloring, conflict phase: worklist entry i is flagged (1) when its
// vertex v shares its color with a neighbour u of the same class that has higher priority.
// Priorities are a hash of the vertex number (ties broken by the number), so in every conflict
// one vertex keeps its color and each round makes progress. Hashing matters on a wide GPU: with
// plain vertex numbers, mesh numbering creates long chains of decreasing numbers and the
// conflicts untangle one link per round (hundreds of rounds measured on an H100); random
// priorities keep chains short, as in Jones-Plassmann.

@group(0) @binding(0) var<storage, read> adjacency_offsets: array<u32>;
@group(0) @binding(1) var<storage, read> adjacency: array<u32>;
@group(0) @binding(2) var<storage, read> vertex_class: array<u32>;
@group(0) @binding(3) var<storage, read> worklist: array<u32>;
@group(0) @binding(4) var<storage, read> colors: array<u32>;
@group(0) @binding(5) var<storage, read_write> conflict: array<u32>;
@group(0) @binding(6) var<storage, read> live_count: array<u32>;
@group(1) @binding(0) var<uniform> range: ItemRange;

/// True when u beats v in a conflict.
fn wins(u: u32, v: u32) -> bool {
    let pu = lowbias32(u);
    let pv = lowbias32(v);
    return pu < pv || (pu == pv && u < v);
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = linear_index(gid, nwg);
    if (i >= range.count) {
        return;
    }
    // Entries past the live worklist are cleared so the prefix sum over the whole dispatched
    // range counts only this round's conflicts.
    if (i >= live_count[0]) {
        conflict[i] = 0u;
        return;
    }
    let v = worklist[i];
    let c = colors[v];
    let class_v = vertex_class[v];
    var flag = 0u;
    for (var j = adjacency_offsets[v]; j < adjacency_offsets[v + 1u]; j = j + 1u) {
        let u = adjacency[j];
        if (colors[u] == c && vertex_class[u] == class_v && wins(u, v)) {
            flag = 1u;
        }
    }
    conflict[i] = flag;
}
