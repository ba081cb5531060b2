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
// 2i + 1, written by dg_trace). At a hanging node the right element is the coarse one and the
// edge is half h of its side r: its trace is taken at that half's nodes from its coefficients
// (register range.pad, modes k >= 1) and +G_R goes to plane r (half 1) or 3 + r (half 2). On an
// adapted mesh (range.count DEVICE_COUNT) the edges come from a launch record, still a thread
// per edge node (launched from the host's bound of the face nodes, as the WGSL twin from the
// record's grid).
//
// case_data: [0], [1] the case function's parameters, [2 + s] inflow state s (conserved).
// clock: t, dt, ..., t_lo (dg_time.cu). range: first/count the edges (NQE threads each), color
// the bits of the stage time fraction c, pad the register. launches: launch records
// (dispatch.cuh).

// The deviation dU of element i (modes k >= 1 of register reg) at node q of table row `row`.
__device__ __forceinline__ float4 deviation_at(
    const float* regs, const float* tables, u32 reg, u32 i, u32 row, u32 q) {
    float4 u = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
#pragma unroll
    for (u32 k = 1u; k < NP; k = k + 1u) {
        float4 c = make_float4(regs[dof(reg, 0u, k, i)], regs[dof(reg, 1u, k, i)],
                               regs[dof(reg, 2u, k, i)], regs[dof(reg, 3u, k, i)]);
        u = u + tables[t_edge_phi(row, q, k)] * c;
    }
    return u;
}

// Node q of edge number `index`.
__device__ __forceinline__ void edge_node(
    u32 index,
    u32 q,
    const float4* __restrict__ traces,
    float4* __restrict__ fluxes,
    const float* __restrict__ tables,
    const DgEdge* __restrict__ edges,
    const float4* __restrict__ case_data,
    const float* __restrict__ clock,
    const float4* __restrict__ means,
    const float* __restrict__ regs,
    const ItemRange& range) {
    DgEdge e = edges[index];
    u32 left = (e.info & 3u) * NQE;
    u32 right_local = (e.info >> 2u) & 3u;
    u32 half = (e.info >> 7u) & 3u;
    // The right side's plane: its side, or 3 + side for the second half of a split side.
    u32 right = (right_local + (half == 2u ? 3u : 0u)) * NQE;
    bool interior = e.right != 0xffffffffu;
    float2 n = make_float2(e.nx, e.ny);
    float4 ml = means[2u * e.left];
    float4 u0l = PHI0 * ml;
    float4 dul = traces[side_slot(e.left, left + q)];
    // The jump U_R - U_L, and U_0R - U_0L (0 on a boundary edge).
    float4 du;
    float4 d0 = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    if (interior) {
        d0 = PHI0
            * ((means[2u * e.right] - ml) + (means[2u * e.right + 1u] - means[2u * e.left + 1u]));
        float4 dur = half == 0u
            ? traces[side_slot(e.right, right + NQE - 1u - q)]
            : deviation_at(regs, tables, range.pad, e.right, right_local + 3u * half, NQE - 1u - q);
        du = d0 + (dur - dul);
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

extern "C" __global__ void dg_flux(
    const float4* __restrict__ traces,
    float4* __restrict__ fluxes,
    const float* __restrict__ tables,
    const DgEdge* __restrict__ edges,
    const float4* __restrict__ case_data,
    const float* __restrict__ clock,
    const float4* __restrict__ means,
    const float* __restrict__ regs,
    const u32* __restrict__ launches,
    ItemRange range) {
    await_previous_launches();
    u32 thread = linear_index();
    u32 first = range.first;
    u32 count = range.count;
    if (range.count == DEVICE_COUNT) {
        first = launches[range.first];
        count = launches[range.first + 1u];
    }
    u32 s = thread / NQE;
    if (s >= count) {
        return;
    }
    edge_node(first + s, thread % NQE, traces, fluxes, tables, edges, case_data, clock, means,
              regs, range);
}
