// #include "common/dispatch.cuh"
// #include "common/swe_flux.cuh"

// CUDA twin of shaders/swe_edge_flux2.wgsl. Second order, step 2 of a stage: the colored edge
// scatter of swe_edge_flux on the states reconstructed at the edge midpoint (cell value + the
// increments swe_reconstruct wrote for this edge's slot in each cell), plus each cell's in-cell
// terms: the advective flux difference q-(u-.n) - q_i(u_i.n) per layer and the pressure terms
// g h1_i d(eta1) n and g h2_i (d(eta2) + r d(h1)) n. A boundary edge (wall, open, or driven
// with the edge's value) builds its ghost by boundary_state from the reconstructed left state.
// CPU reference: edge_contribution2 in src/solver/swe/muscl.rs.
// Launches of one stream run in order, so color c + 1 sees the writes of color c.

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

extern "C" __global__ void swe_edge_flux2(
    const SweEdge* __restrict__ edges,
    const float4* __restrict__ cells,
    const float4* __restrict__ deltas,
    const uint2* __restrict__ slots,
    float4* __restrict__ acc,
    u32* __restrict__ counters,
    ItemRange range) {
    u32 i = linear_index();
    if (i >= range.count) {
        return;
    }
    SweEdge e = edges[range.first + i];
    uint2 s = slots[range.first + i];
    float4 wl0 = cells[2u * e.left];
    float4 wl1 = cells[2u * e.left + 1u];
    float4 dl0 = deltas[s.x];
    float4 dl1 = deltas[s.x + 1u];
    EdgeState el = state_at_edge(wl0, wl1, dl0, dl1);
    EdgeState er = el;
    float4 wr0 = wl0;
    float4 wr1 = wl1;
    float4 dr0 = dl0;
    float4 dr1 = dl1;
    if (e.kind == KIND_INTERIOR) {
        wr0 = cells[2u * e.right];
        wr1 = cells[2u * e.right + 1u];
        dr0 = deltas[s.y];
        dr1 = deltas[s.y + 1u];
        er = state_at_edge(wr0, wr1, dr0, dr1);
    }
    EdgeOut out = edge_contribution(el.w0, el.w1, er.w0, er.w1, e.kind, e.nx, e.ny, e.value);
    float4 tl = in_cell_terms(wl0, wl1, dl0, dl1, e.nx, e.ny);
    float len = e.length;
    acc[2u * e.left] = acc[2u * e.left] + len * (out.left0 + make_float4(0.0f, tl.x, tl.y, 0.0f));
    acc[2u * e.left + 1u] = acc[2u * e.left + 1u] + len * make_float4(out.left1.x + tl.z, out.left1.y + tl.w, out.lam, 0.0f);
    if (e.kind == KIND_INTERIOR) {
        float4 tr = in_cell_terms(wr0, wr1, dr0, dr1, -e.nx, -e.ny);
        acc[2u * e.right] = acc[2u * e.right] + len * (out.right0 + make_float4(0.0f, tr.x, tr.y, 0.0f));
        acc[2u * e.right + 1u] = acc[2u * e.right + 1u] + len * make_float4(out.right1.x + tr.z, out.right1.y + tr.w, out.lam, 0.0f);
    }
    if (out.flags != 0u) {
        if ((out.flags & FLAG_NONHYPERBOLIC) != 0u) {
            atomicAdd(&counters[0], 1u);
        }
        if ((out.flags & FLAG_FALLBACK) != 0u) {
            atomicAdd(&counters[1], 1u);
        }
        if ((out.flags & FLAG_CHI_CLAMPED) != 0u) {
            atomicAdd(&counters[2], 1u);
        }
    }
}
