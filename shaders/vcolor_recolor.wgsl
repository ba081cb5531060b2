// #include "common/dispatch.wgsl"
// #include "common/vcolor_first_fit.wgsl"

// Iterated greedy (color reduction), step 4 of 4: the host launches this kernel once per old
// color c = range.color, highest first; the vertices of class c, order[class_first[c - 1] ..
// class_first[c]] (vcolor_class_bucket), take the smallest color unused by the neighbours
// recolored before them (all colors were cleared). An old color class is an independent set (in
// every vertex class), so the vertices of one launch never read each other's new colors: no
// races, and the result never needs more colors than the old coloring. The launch covers the
// class in a grid-stride loop: its size lives on the GPU, the grid is the host's choice.

@group(0) @binding(0) var<storage, read> adjacency_offsets: array<u32>;
@group(0) @binding(1) var<storage, read> adjacency: array<u32>;
@group(0) @binding(2) var<storage, read> vertex_class: array<u32>;
@group(0) @binding(3) var<storage, read> order: array<u32>;
@group(0) @binding(4) var<storage, read> class_first: array<u32>;
@group(0) @binding(5) var<storage, read_write> colors: array<u32>;
@group(1) @binding(0) var<uniform> range: ItemRange;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let threads = nwg.x * nwg.y * WORKGROUP_SIZE;
    let end = class_first[range.color];
    for (var i = class_first[range.color - 1u] + linear_index(gid, nwg); i < end; i = i + threads) {
        let v = order[i];
        colors[v] = smallest_free_color(v);
    }
}
