// #include "common/dispatch.cuh"
// #include "common/dg_euler.cuh"
// #include "common/dg_tables.cuh"
// #include "common/dg_edge.cuh"

// CUDA twin of shaders/dg_surface.wgsl. DG surface term, one thread per edge, one launch per
// edge color (Operator::rhs, second loop). With F* the numerical flux at edge node q (left
// parameter t_q, right 1 - t_q on its whole edge, or ((h - 1) + (1 - t_q)) / 2 when the edge is
// half h of the right element's side next to a hanging node; L_e is then the half face's
// length):
//   rhs_k(L) -= L_e / det J_L sum_q w_q phi_k(x_q) (F*(U_L, U_R) - F(U_0L)) . n
//   rhs_k(R) += L_e / det J_R sum_q w_q phi_k(x_q) (F*(U_L, U_R) - F(U_0R)) . n
// with U_0K = c_0 phi_0 the element's mean (deviation form, dg_euler.cuh; dg_volume subtracts
// the same F(U_0K)).
// U_R is a ghost state on boundary edges. No two edges of one color share an element, so the
// read-modify-write of rhs needs no atomics; launches of one stream run in order, so color
// c + 1 sees the writes of color c.
//
// inv_det: 1 / det J per element. case_data: [0], [1] the case function's parameters,
// [2 + s] inflow state s (conserved). clock: t, dt, ..., t_lo (dg_time.cu). range: first/count
// the color's edges, color the bits of the stage time fraction c, pad the register.
//
// launches: launch records (dispatch.cuh), read when range.count is DEVICE_COUNT (an adapted
// mesh).

/// The mean U_0 = c_0 phi_0 of element i in register reg (the deviation form's reference
/// state).
__device__ __forceinline__ float4 element_mean(const float* __restrict__ regs, u32 reg, u32 i) {
    return PHI0 * make_float4(regs[dof(reg, 0u, 0u, i)], regs[dof(reg, 1u, 0u, i)],
                              regs[dof(reg, 2u, 0u, i)], regs[dof(reg, 3u, 0u, i)]);
}

/// rhs_k(i) += a, the four equations of mode k of element i: a plain read-modify-write for the
/// colored launches (no two edges of a color share an element), atomicAdd for the one-launch
/// variant over all edges.
template <bool ATOMIC>
__device__ __forceinline__ void add_rhs(float* rhs, u32 k, u32 i, float4 a) {
    float v[4] = {a.x, a.y, a.z, a.w};
    #pragma unroll
    for (u32 eq = 0u; eq < 4u; eq = eq + 1u) {
        u32 j = dof(0u, eq, k, i);
        if (ATOMIC) {
            atomicAdd(&rhs[j], v[eq]);
        } else {
            rhs[j] = rhs[j] + v[eq];
        }
    }
}

template <bool ATOMIC>
__device__ __forceinline__ void surface_edge(
    const float* __restrict__ regs,
    float* __restrict__ rhs,
    const float* __restrict__ tables,
    const DgEdge* __restrict__ edges,
    const float* __restrict__ inv_det,
    const float4* __restrict__ case_data,
    const float* __restrict__ clock,
    const u32* __restrict__ launches,
    ItemRange range) {
    u32 s = linear_index();
    u32 first = range.first;
    u32 count = range.count;
    if (count == DEVICE_COUNT) {
        first = launches[range.first];
        count = launches[range.first + 1u];
    }
    if (s >= count) {
        return;
    }
    DgEdge e = edges[first + s];
    u32 reg = range.pad;
    u32 ll = e.info & 3u;
    // The right trace's table row: its whole local edge, or half 1 / 2 of it.
    u32 rl = ((e.info >> 2u) & 3u) + 3u * ((e.info >> 7u) & 3u);
    bool interior = e.right != 0xffffffffu;
    float2 n = make_float2(e.nx, e.ny);
    float t = clock[0] + (clock[6] + __uint_as_float(range.color) * clock[1]);
    // The means U_0K, the traces dU of the higher modes, and per node the jump U_R - U_L.
    // Traces first (k outer, so one element's coefficients are read once and dropped), then
    // the left side's terms in place of the left traces, then rhs_k += phi_k(x_q) F*_q: the
    // thread holds 2 NQE float4s instead of 4 NP, which keeps p = 3, 4 in registers.
    float4 u0l = element_mean(regs, reg, e.left);
    float4 u0r = u0l;
    if (interior) {
        u0r = element_mean(regs, reg, e.right);
    }
    float4 ul[MAX_NQE];
    float4 ur[MAX_NQE];
    #pragma unroll
    for (u32 q = 0u; q < NQE; q = q + 1u) {
        ul[q] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        ur[q] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    }
    #pragma unroll
    for (u32 k = 1u; k < NP; k = k + 1u) {
        float4 cl = make_float4(regs[dof(reg, 0u, k, e.left)], regs[dof(reg, 1u, k, e.left)],
                                regs[dof(reg, 2u, k, e.left)], regs[dof(reg, 3u, k, e.left)]);
        #pragma unroll
        for (u32 q = 0u; q < NQE; q = q + 1u) {
            ul[q] = ul[q] + tables[t_edge_phi(ll, q, k)] * cl;
        }
        if (interior) {
            float4 cr = make_float4(regs[dof(reg, 0u, k, e.right)], regs[dof(reg, 1u, k, e.right)],
                                    regs[dof(reg, 2u, k, e.right)], regs[dof(reg, 3u, k, e.right)]);
            #pragma unroll
            for (u32 q = 0u; q < NQE; q = q + 1u) {
                ur[q] = ur[q] + tables[t_edge_phi(rl, NQE - 1u - q, k)] * cr;
            }
        }
    }
    float2 v0l = make_float2(u0l.y / u0l.x, u0l.z / u0l.x);
    float p0l = pressure(u0l);
    float4 d0 = u0r - u0l;
    // F(U_0R) . n - F(U_0L) . n: the right side's terms are the left's minus this.
    float4 df0 = normal_flux_change(u0l, p0l, primitive_change(u0l, v0l, d0), d0, n);
    #pragma unroll
    for (u32 q = 0u; q < NQE; q = q + 1u) {
        // The jump U_R - U_L.
        float4 du = d0 + (ur[q] - ul[q]);
        if (!interior) {
            du = boundary_jump(u0l, ul[q], e, tables[t_edge_t(q)], t, case_data);
        }
        // F* - F(U_0L) . n = (F(U_L) - F(U_0L)) . n + (F* - F(U_L) . n).
        float4 fl = normal_flux_change(u0l, p0l, primitive_change(u0l, v0l, ul[q]), ul[q], n)
            + numerical_flux_change(u0l + ul[q], du, n);
        float wl = tables[t_edge_w(q)] * e.length;
        ul[q] = wl * fl;
        ur[q] = wl * (fl - df0);
    }
    float dl = inv_det[e.left];
    #pragma unroll
    for (u32 k = 0u; k < NP; k = k + 1u) {
        float4 a = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        #pragma unroll
        for (u32 q = 0u; q < NQE; q = q + 1u) {
            a = a + tables[t_edge_phi(ll, q, k)] * ul[q];
        }
        a = dl * a;
        add_rhs<ATOMIC>(rhs, k, e.left, -1.0f * a);
    }
    if (interior) {
        float dr = inv_det[e.right];
        #pragma unroll
        for (u32 k = 0u; k < NP; k = k + 1u) {
            float4 a = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
            #pragma unroll
            for (u32 q = 0u; q < NQE; q = q + 1u) {
                a = a + tables[t_edge_phi(rl, NQE - 1u - q, k)] * ur[q];
            }
            a = dr * a;
            add_rhs<ATOMIC>(rhs, k, e.right, a);
        }
    }
}

extern "C" __global__ void dg_surface(
    const float* __restrict__ regs,
    float* __restrict__ rhs,
    const float* __restrict__ tables,
    const DgEdge* __restrict__ edges,
    const float* __restrict__ inv_det,
    const float4* __restrict__ case_data,
    const float* __restrict__ clock,
    const u32* __restrict__ launches,
    ItemRange range) {
    await_previous_launches();
    surface_edge<false>(regs, rhs, tables, edges, inv_det, case_data, clock, launches, range);
}

// CUDA only (WGSL has no float atomics): one launch over the edges of every color, rhs
// accumulated with atomicAdd; the variant the colored launches are measured against.
extern "C" __global__ void dg_surface_atomic(
    const float* __restrict__ regs,
    float* __restrict__ rhs,
    const float* __restrict__ tables,
    const DgEdge* __restrict__ edges,
    const float* __restrict__ inv_det,
    const float4* __restrict__ case_data,
    const float* __restrict__ clock,
    const u32* __restrict__ launches,
    ItemRange range) {
    await_previous_launches();
    surface_edge<true>(regs, rhs, tables, edges, inv_det, case_data, clock, launches, range);
}
