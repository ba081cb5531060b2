// CUDA twin of shaders/common/swe_muscl.wgsl. Second order: the states reconstructed at an
// edge midpoint and the in-cell terms of a cell's share of an edge (shared by swe_edge_flux2 and
// swe_fused_step at order 2); needs common/swe_flux.cuh. CPU reference: state_at_edge and
// in_cell_terms in src/solver/swe/muscl.rs.

struct EdgeState {
    float4 w0;
    float4 w1;
};

// The cell state (w0, w1) reconstructed with increments (d0, d1): h + dh, q = h (u + du), H + dH.
__device__ EdgeState state_at_edge(float4 w0, float4 w1, float4 d0, float4 d1) {
    float d1h = desing(w0.x);
    float d2h = desing(w0.w);
    float2 u1 = make_float2(w0.y / d1h, w0.z / d1h);
    float2 u2 = make_float2(w1.x / d2h, w1.y / d2h);
    float h1 = w0.x + d0.x;
    float h2 = w0.w + d0.w;
    float2 q1 = h1 * (u1 + make_float2(d0.y, d0.z));
    float2 q2 = h2 * (u2 + make_float2(d1.x, d1.y));
    EdgeState s;
    s.w0 = make_float4(h1, q1.x, q1.y, h2);
    s.w1 = make_float4(q2.x, q2.y, w1.z + d1.z, w1.w);
    return s;
}

__device__ __forceinline__ float2 advective(float h, float2 u, float nx, float ny) {
    float un = u.x * nx + u.y * ny;
    return un * (h * u);
}

// In-cell terms (q1x, q1y, q2x, q2y) of a cell's share of an edge with outward normal n.
__device__ float4 in_cell_terms(float4 w0, float4 w1, float4 d0, float4 d1, float nx, float ny) {
    float d1h = desing(w0.x);
    float d2h = desing(w0.w);
    float2 u1 = make_float2(w0.y / d1h, w0.z / d1h);
    float2 u2 = make_float2(w1.x / d2h, w1.y / d2h);
    float2 n = make_float2(nx, ny);
    float2 e1 = advective(w0.x + d0.x, u1 + make_float2(d0.y, d0.z), nx, ny) - advective(w0.x, u1, nx, ny);
    float2 e2 = advective(w0.w + d0.w, u2 + make_float2(d1.x, d1.y), nx, ny) - advective(w0.w, u2, nx, ny);
    float p1 = GRAVITY * w0.x * (d0.x + d1.w);
    float p2 = GRAVITY * w0.w * (d1.w + DENSITY_RATIO * d0.x);
    float2 t1 = e1 + p1 * n;
    float2 t2 = e2 + p2 * n;
    return make_float4(t1.x, t1.y, t2.x, t2.y);
}
