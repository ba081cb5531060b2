// Second order: the states reconstructed at an edge midpoint and the in-cell terms of a cell's
// share of an edge (shared by swe_edge_flux2 and swe_fused_step at order 2); needs
// common/swe_flux.wgsl. CPU reference: state_at_edge and in_cell_terms in
// src/solver/swe/muscl.rs.

struct EdgeState {
    w0: vec4<f32>,
    w1: vec4<f32>,
}

// The cell state (w0, w1) reconstructed with increments (d0, d1): h + dh, q = h (u + du), H + dH.
fn state_at_edge(w0: vec4<f32>, w1: vec4<f32>, d0: vec4<f32>, d1: vec4<f32>) -> EdgeState {
    let u1 = w0.yz / desing(w0.x);
    let u2 = w1.xy / desing(w0.w);
    let h1 = w0.x + d0.x;
    let h2 = w0.w + d0.w;
    let q1 = h1 * (u1 + d0.yz);
    let q2 = h2 * (u2 + d1.xy);
    return EdgeState(vec4<f32>(h1, q1.x, q1.y, h2), vec4<f32>(q2.x, q2.y, w1.z + d1.z, w1.w));
}

fn advective(h: f32, u: vec2<f32>, nx: f32, ny: f32) -> vec2<f32> {
    let un = u.x * nx + u.y * ny;
    return h * u * un;
}

// In-cell terms (q1x, q1y, q2x, q2y) of a cell's share of an edge with outward normal n.
fn in_cell_terms(w0: vec4<f32>, w1: vec4<f32>, d0: vec4<f32>, d1: vec4<f32>, nx: f32, ny: f32) -> vec4<f32> {
    let u1 = w0.yz / desing(w0.x);
    let u2 = w1.xy / desing(w0.w);
    let n = vec2<f32>(nx, ny);
    let e1 = advective(w0.x + d0.x, u1 + d0.yz, nx, ny) - advective(w0.x, u1, nx, ny);
    let e2 = advective(w0.w + d0.w, u2 + d1.xy, nx, ny) - advective(w0.w, u2, nx, ny);
    let p1 = GRAVITY * w0.x * (d0.x + d1.w);
    let p2 = GRAVITY * w0.w * (d1.w + DENSITY_RATIO * d0.x);
    return vec4<f32>(e1 + p1 * n, e2 + p2 * n);
}
