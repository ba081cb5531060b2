// #include "common/dispatch.wgsl"

// Green-Gauss cell gradient accumulated edge by edge, one dispatch per edge color:
//   grad u_i = (1 / A_i) * sum_faces u_f n_f l_f,  u_f = (u_L + u_R) / 2 (interior), u_L (boundary).
// Each thread owns one edge and adds its term to the left cell and subtracts it from the right
// cell; the coloring guarantees no two edges of one dispatch touch the same cell. The 1/A_i
// scaling is applied by the host-side reader (the kernel accumulates area-weighted gradients).

struct Edge {
    left: u32,
    right: u32,   // 0xffffffff on the boundary
    nx: f32,      // unit normal, left -> right
    ny: f32,
    length: f32,
    pad0: u32,
    pad1: u32,
    pad2: u32,
}

@group(0) @binding(0) var<storage, read> edges: array<Edge>;
@group(0) @binding(1) var<storage, read> cell_values: array<f32>;
@group(0) @binding(2) var<storage, read_write> weighted_gradient: array<vec2<f32>>;
@group(1) @binding(0) var<uniform> range: ItemRange;

const NO_ELEMENT: u32 = 0xffffffffu;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = linear_index(gid, nwg);
    if (i >= range.count) {
        return;
    }
    let e = edges[range.first + i];
    let ul = cell_values[e.left];
    var uf = ul;
    if (e.right != NO_ELEMENT) {
        uf = 0.5 * (ul + cell_values[e.right]);
    }
    let flux = uf * e.length * vec2<f32>(e.nx, e.ny);
    weighted_gradient[e.left] = weighted_gradient[e.left] + flux;
    if (e.right != NO_ELEMENT) {
        weighted_gradient[e.right] = weighted_gradient[e.right] - flux;
    }
}
