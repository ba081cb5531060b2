// #include "common/dispatch.cuh"
// #include "common/dg_euler.cuh"
// #include "common/dg_tables.cuh"
// #include "common/dg_edge.cuh"

// CUDA twin of shaders/dg_flux.wgsl. DG edge fluxes of the gathered surface integral
// (Operator::edge_fluxes), one thread per edge, all edges in one launch: with U_L, U_R the
// traces dg_trace wrote (U_R a ghost state on boundary edges) and
// F*_q = F*(U_L, U_R) . n w_q L_e at node q (left parameter t_q, right 1 - t_q),
//   flux[side_slot(L, l NQE + q)] = -F*_q,  flux[side_slot(R, r NQE + NQE - 1 - q)] = +F*_q,
// so every element side owns its slots: no colors, no atomics. Conforming meshes only.
//
// case_data: [0], [1] the case function's parameters, [2 + s] inflow state s (conserved).
// clock: t, dt, ..., t_lo (dg_time.cu). range: first/count the edges, color the bits of the stage
// time fraction c.

extern "C" __global__ void dg_flux(
    const float4* __restrict__ traces,
    float4* __restrict__ fluxes,
    const float* __restrict__ tables,
    const DgEdge* __restrict__ edges,
    const float4* __restrict__ case_data,
    const float* __restrict__ clock,
    ItemRange range) {
    u32 s = linear_index();
    if (s >= range.count) {
        return;
    }
    DgEdge e = edges[range.first + s];
    u32 left = (e.info & 3u) * NQE;
    u32 right = ((e.info >> 2u) & 3u) * NQE;
    bool interior = e.right != 0xffffffffu;
    float2 n = make_float2(e.nx, e.ny);
    float t = clock[0] + (clock[6] + __uint_as_float(range.color) * clock[1]);
    #pragma unroll
    for (u32 q = 0u; q < NQE; q = q + 1u) {
        float4 ul = traces[side_slot(e.left, left + q)];
        float4 ur;
        if (interior) {
            ur = traces[side_slot(e.right, right + NQE - 1u - q)];
        } else {
            ur = boundary_ghost(ul, e, tables[t_edge_t(q)], t, case_data);
        }
        float4 f = (tables[t_edge_w(q)] * e.length) * numerical_flux(ul, ur, n);
        fluxes[side_slot(e.left, left + q)] = -1.0f * f;
        if (interior) {
            fluxes[side_slot(e.right, right + NQE - 1u - q)] = f;
        }
    }
}
