// #include "common/dispatch.cuh"
// #include "common/dg_euler.cuh"
// #include "common/dg_tables.cuh"
// #include "common/dg_edge.cuh"

// CUDA twin of shaders/dg_flux.wgsl. DG edge fluxes of the gathered surface integral
// (Operator::edge_fluxes), one thread per edge node (edge range.first + t / NQE, node
// q = t % NQE; see the twin for why), all edges in one launch: with
// U_K = U_0K + dU_K the means plus the traces dg_trace wrote (U_R a ghost state on boundary
// edges) and, in deviation form (dg_euler.cuh),
// G_K = (F*(U_L, U_R) - F(U_0K)) . n w_q L_e at node q (left parameter t_q, right 1 - t_q),
//   flux[side_slot(L, l NQE + q)] = -G_L,  flux[side_slot(R, r NQE + NQE - 1 - q)] = +G_R,
// so every element side owns its slots: no colors, no atomics. The jump of the means
// U_0R - U_0L is taken from their hi and lo words (means: c_0 hi and lo of element i at 2i and
// 2i + 1, written by dg_trace). Conforming meshes only.
//
// case_data: [0], [1] the case function's parameters, [2 + s] inflow state s (conserved).
// clock: t, dt, ..., t_lo (dg_time.cu). range: first/count the edges (NQE threads each), color the bits of the stage
// time fraction c.

extern "C" __global__ void dg_flux(
    const float4* __restrict__ traces,
    float4* __restrict__ fluxes,
    const float* __restrict__ tables,
    const DgEdge* __restrict__ edges,
    const float4* __restrict__ case_data,
    const float* __restrict__ clock,
    const float4* __restrict__ means,
    ItemRange range) {
    await_previous_launches();
    u32 thread = linear_index();
    u32 s = thread / NQE;
    u32 q = thread % NQE;
    if (s >= range.count) {
        return;
    }
    DgEdge e = edges[range.first + s];
    u32 left = (e.info & 3u) * NQE;
    u32 right = ((e.info >> 2u) & 3u) * NQE;
    bool interior = e.right != 0xffffffffu;
    float2 n = make_float2(e.nx, e.ny);
    float4 ml = means[2u * e.left];
    float4 u0l = PHI0 * ml;
    float4 dul = traces[side_slot(e.left, left + q)];
    // The jump U_R - U_L, and U_0R - U_0L (0 on a boundary edge).
    float4 du;
    float4 d0 = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    if (interior) {
        d0 = PHI0 * ((means[2u * e.right] - ml) + (means[2u * e.right + 1u] - means[2u * e.left + 1u]));
        du = d0 + (traces[side_slot(e.right, right + NQE - 1u - q)] - dul);
    } else {
        float t = clock[0] + (clock[6] + __uint_as_float(range.color) * clock[1]);
        du = boundary_jump(u0l, dul, e, tables[t_edge_t(q)], t, case_data);
    }
    float2 v0l = make_float2(u0l.y / u0l.x, u0l.z / u0l.x);
    float p0l = pressure(u0l);
    // F* - F(U_0L) . n = (F(U_L) - F(U_0L)) . n + (F* - F(U_L) . n).
    float4 fl = normal_flux_change(u0l, p0l, primitive_change(u0l, v0l, dul), dul, n)
        + numerical_flux_change(u0l + dul, du, n);
    float w = tables[t_edge_w(q)] * e.length;
    fluxes[side_slot(e.left, left + q)] = -1.0f * (w * fl);
    if (interior) {
        // F(U_0R) . n - F(U_0L) . n: the right side's terms are the left's minus this.
        float4 df0 = normal_flux_change(u0l, p0l, primitive_change(u0l, v0l, d0), d0, n);
        fluxes[side_slot(e.right, right + NQE - 1u - q)] = w * (fl - df0);
    }
}
