// #include "common/dispatch.wgsl"
// #include "common/vcolor_first_fit.wgsl"

// Iterated-greedy recoloring (Culberson): all colors were cleared and old colors saved; the
// host dispatches this kernel once per old color c = range.color, highest first. Every vertex
// whose old color is c takes the smallest color unused by the neighbours recolored before it.
// An old color class is an independent set (in every vertex class), so the vertices of one
// dispatch never read each other's new colors: no races, and the result never needs more
// colors than the old coloring.

@group(0) @binding(0) var<storage, read> adjacency_offsets: array<u32>;
@group(0) @binding(1) var<storage, read> adjacency: array<u32>;
@group(0) @binding(2) var<storage, read> vertex_class: array<u32>;
@group(0) @binding(3) var<storage, read> old_colors: array<u32>;
@group(0) @binding(4) var<storage, read_write> colors: array<u32>;
@group(1) @binding(0) var<uniform> range: ItemRange;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let v = linear_index(gid, nwg);
    if (v >= range.count || old_colors[v] != range.color) {
        return;
    }
    colors[v] = smallest_free_color(v);
}
