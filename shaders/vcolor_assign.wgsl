// #include "common/dispatch.wgsl"
// #include "common/vcolor_first_fit.wgsl"

// Speculative greedy vertex coloring (Li et al.), assignment phase: every uncolored vertex of
// the worklist takes the smallest color (1-based) not used by its neighbours of the same class,
// reading neighbour colors as they are now (a neighbour colored in this same dispatch may be
// missed: the conflict phase catches that). The worklist holds live_count[0] vertices, a number
// the previous round left on the GPU, so several rounds run per submit without the host.

@group(0) @binding(0) var<storage, read> adjacency_offsets: array<u32>;
@group(0) @binding(1) var<storage, read> adjacency: array<u32>;
@group(0) @binding(2) var<storage, read> vertex_class: array<u32>;
@group(0) @binding(3) var<storage, read> worklist: array<u32>;
@group(0) @binding(4) var<storage, read_write> colors: array<u32>;
@group(0) @binding(5) var<storage, read> live_count: array<u32>;
@group(1) @binding(0) var<uniform> range: ItemRange;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = linear_index(gid, nwg);
    if (i >= min(range.count, live_count[0])) {
        return;
    }
    let v = worklist[range.first + i];
    if (colors[v] != 0u) {
        return;
    }
    colors[v] = smallest_free_color(v);
}
