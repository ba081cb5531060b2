// #include "common/dispatch.wgsl"
// #include "common/amr_tree.wgsl"

// Geometry of the active elements for the DG kernels, one thread per slot up to the capacity
// (element_geometry in src/solver/dg/mesh.rs): with x = v0 + J xi, the inverse Jacobian
// (xi_x, xi_y, eta_x, eta_y) = (J11, -J01, -J10, J00) / det J, 1 / det J and the smallest
// height det J / longest side. Clears both neighbour blocks for the face kernel; slots past
// the active count get zeros and no neighbours, as on the host.

override NE: u32 = 1u;

@group(0) @binding(0) var<storage, read> slots: array<u32>;
@group(0) @binding(1) var<storage, read> vertices: array<vec2<f32>>;
@group(0) @binding(2) var<storage, read_write> inv_jac: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read_write> inv_det: array<f32>;
@group(0) @binding(4) var<storage, read_write> heights: array<f32>;
@group(0) @binding(5) var<storage, read_write> neighbors: array<vec4<u32>>;
@group(0) @binding(6) var<storage, read> counters: array<u32>;
@group(1) @binding(0) var<uniform> range: ItemRange;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = linear_index(gid, nwg);
    if (i >= range.count) {
        return;
    }
    neighbors[i] = vec4<u32>(NONE, NONE, NONE, 0u);
    neighbors[NE + i] = vec4<u32>(NONE);
    if (i >= counters[C_ACTIVE]) {
        inv_jac[i] = vec4<f32>(0.0);
        inv_det[i] = 0.0;
        heights[i] = 0.0;
        return;
    }
    let id = slots[i];
    let v0 = vertices[3u * id];
    let v1 = vertices[3u * id + 1u];
    let v2 = vertices[3u * id + 2u];
    let a = v1 - v0;
    let b = v2 - v0;
    let d = a.x * b.y - b.x * a.y;
    inv_jac[i] = vec4<f32>(b.y, -b.x, -a.y, a.x) / d;
    inv_det[i] = 1.0 / d;
    let longest = max(length(a), max(length(b), length(v2 - v1)));
    heights[i] = d / longest;
}
