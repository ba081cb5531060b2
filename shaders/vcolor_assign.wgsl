// #include "common/dispatch.wgsl"

// Speculative greedy vertex coloring (Li et al.), assignment phase: every uncolored vertex of
// the worklist takes the smallest color (1-based) not used by its neighbours of the same class,
// reading neighbour colors as they are now (a neighbour colored in this same dispatch may be
// missed: the conflict phase catches that). Colors are searched in windows of 32 with a bit mask.
// Also used for iterated-greedy recoloring, one dispatch per old color class (an independent
// set, so no races): then only neighbours already recolored hold a nonzero color.

@group(0) @binding(0) var<storage, read> adjacency_offsets: array<u32>;
@group(0) @binding(1) var<storage, read> adjacency: array<u32>;
@group(0) @binding(2) var<storage, read> vertex_class: array<u32>;
@group(0) @binding(3) var<storage, read> worklist: array<u32>;
@group(0) @binding(4) var<storage, read_write> colors: array<u32>;
@group(1) @binding(0) var<uniform> range: ItemRange;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = linear_index(gid, nwg);
    if (i >= range.count) {
        return;
    }
    let v = worklist[range.first + i];
    if (colors[v] != 0u) {
        return;
    }
    let class_v = vertex_class[v];
    let begin = adjacency_offsets[v];
    let end = adjacency_offsets[v + 1u];
    var window = 0u;
    // Terminates: once window exceeds the degree no neighbour color falls inside it.
    loop {
        var used = 0u;
        for (var j = begin; j < end; j = j + 1u) {
            let u = adjacency[j];
            if (vertex_class[u] == class_v) {
                let c = colors[u];
                if (c > window && c <= window + 32u) {
                    used = used | (1u << (c - window - 1u));
                }
            }
        }
        if (used != 0xffffffffu) {
            colors[v] = window + countTrailingZeros(~used) + 1u;
            return;
        }
        window = window + 32u;
    }
}
