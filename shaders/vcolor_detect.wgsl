// #include "common/dispatch.wgsl"

// Speculative greedy vertex coloring, conflict phase: worklist entry i is flagged (1) when its
// vertex v shares its color with a neighbour u of the same class and u < v, so in every
// conflict the lowest-numbered vertex keeps its color and each round makes progress.

@group(0) @binding(0) var<storage, read> adjacency_offsets: array<u32>;
@group(0) @binding(1) var<storage, read> adjacency: array<u32>;
@group(0) @binding(2) var<storage, read> vertex_class: array<u32>;
@group(0) @binding(3) var<storage, read> worklist: array<u32>;
@group(0) @binding(4) var<storage, read> colors: array<u32>;
@group(0) @binding(5) var<storage, read_write> conflict: array<u32>;
@group(1) @binding(0) var<uniform> range: ItemRange;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = linear_index(gid, nwg);
    if (i >= range.count) {
        return;
    }
    let v = worklist[i];
    let c = colors[v];
    let class_v = vertex_class[v];
    var flag = 0u;
    for (var j = adjacency_offsets[v]; j < adjacency_offsets[v + 1u]; j = j + 1u) {
        let u = adjacency[j];
        if (u < v && colors[u] == c && vertex_class[u] == class_v) {
            flag = 1u;
        }
    }
    conflict[i] = flag;
}
