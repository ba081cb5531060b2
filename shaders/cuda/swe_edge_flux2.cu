// #include "common/dispatch.cuh"
// #include "common/swe_flux.cuh"
// #include "common/swe_muscl.cuh"

// CUDA twin of shaders/swe_edge_flux2.wgsl. Second order, step 2 of a stage: the colored edge
// scatter of swe_edge_flux on the states reconstructed at the edge midpoint (cell value + the
// increments swe_reconstruct wrote for this edge's slot in each cell), plus each cell's in-cell
// terms: the advective flux difference q-(u-.n) - q_i(u_i.n) per layer and the pressure terms
// g h1_i d(eta1) n and g h2_i (d(eta2) + r d(h1)) n. A boundary edge (wall, open, or driven
// with the edge's value) builds its ghost by boundary_state from the reconstructed left state.
// CPU reference: edge_contribution2 in src/solver/swe/muscl.rs.
// Each cell's outflow per layer, sum_j |G_ij| max(0, G_ij) (G the mass flux out of it), is
// added to `outflow` for the draining factor (swe_drain, which clears it).
// Launches of one stream run in order, so color c + 1 sees the writes of color c.

extern "C" __global__ void swe_edge_flux2(
    const SweEdge* __restrict__ edges,
    const float4* __restrict__ cells,
    const float4* __restrict__ deltas,
    const uint2* __restrict__ slots,
    float4* __restrict__ acc,
    u32* __restrict__ counters,
    float2* __restrict__ outflow,
    ItemRange range) {
    await_previous_launches();
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
    float2 g = make_float2(len * out.left0.x, len * out.left0.w);
    if (g.x > 0.0f || g.y > 0.0f) {
        outflow[e.left] = outflow[e.left] + make_float2(fmaxf(g.x, 0.0f), fmaxf(g.y, 0.0f));
    }
    if (e.kind == KIND_INTERIOR && (g.x < 0.0f || g.y < 0.0f)) {
        outflow[e.right] = outflow[e.right] + make_float2(fmaxf(-g.x, 0.0f), fmaxf(-g.y, 0.0f));
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
