// #include "common/dispatch.cuh"
// #include "common/dg_euler.cuh"
// #include "common/dg_tables.cuh"
// #include "common/dg_rk.cuh"

// CUDA twin of shaders/dg_volume.wgsl. DG volume term, one thread per element
// (Operator::rhs, first loop):
//   rhs_k = sum_q w_q (F(U_q) - F(U_0)) . (J^{-T} grad_ref phi_k)(x_q),  U_0 = c_0 phi_0,
// in deviation form (dg_euler.cuh; dg_surface subtracts the same F(U_0) . n, and the two
// cancel exactly; so does dg_flux with LIFT = 1).
// The thread reads the element's coefficients of register range.pad (coalesced) and
// overwrites rhs; the colored surface kernel adds the edge terms afterwards. With LIFT = 1 the
// thread adds them itself from the edge fluxes dg_flux wrote for its three sides:
//   rhs_k += 1 / det J sum_s sum_q phi_k(x_{s,q}) flux[side_slot(i, s NQE + q)].
//
// With STAGE = 1 (and LIFT = 1) the thread applies Runge-Kutta stage range.color to its element
// (common/dg_rk.cuh) instead of writing rhs: the rhs never goes to memory. That is safe in
// place because after dg_trace no kernel of the stage reads another element's coefficients.
// The host fuses at low order only (gpu.rs, FUSED_STAGE_MAX_ORDER).
//
// inv_jac: (xi_x, xi_y, eta_x, eta_y) per element. inv_det: 1 / det J per element and fluxes
// the edge fluxes of dg_flux, NQE per element side (both read with LIFT = 1 only); with
// HANGING = 1 (a mesh with hanging nodes) a side split into two faces (bit s of neighbors[i].w,
// dg_limit's layout) sums both halves: plane s at half 1's nodes, plane 3 + s at half 2's. clock
// (dt = clock[1]), stages and regs_lo (the low words of R0..R3) are read with STAGE = 1 only.
//
// launches: launch records (dispatch.cuh), read when range.count is DEVICE_COUNT (an adapted
// mesh).

#ifndef LIFT
#define LIFT 0u
#endif
#ifndef HANGING
#define HANGING 0u
#endif
#ifndef STAGE
#define STAGE 0u
#endif

extern "C" __global__ void dg_volume(
    float* regs,
    float* __restrict__ rhs,
    const float* __restrict__ tables,
    const float4* __restrict__ inv_jac,
    const float* __restrict__ inv_det,
    const float4* __restrict__ fluxes,
    const float* __restrict__ clock,
    const Stage* __restrict__ stages,
    float* regs_lo,
    const u32* __restrict__ launches,
    const uint4* __restrict__ neighbors,
    ItemRange range) {
    await_previous_launches();
    u32 i = linear_index();
    u32 count = range.count;
    if (count == DEVICE_COUNT) {
        count = launches[range.first + 1u];
    }
    if (i >= count) {
        return;
    }
    u32 reg = range.pad;
    float4 c[MAX_NP];
    float4 r[MAX_NP];
    #pragma unroll
    for (u32 k = 0u; k < NP; k = k + 1u) {
        c[k] = make_float4(regs[dof(reg, 0u, k, i)], regs[dof(reg, 1u, k, i)],
                           regs[dof(reg, 2u, k, i)], regs[dof(reg, 3u, k, i)]);
        r[k] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    }
    float4 g = inv_jac[i];
    // The element's mean U_0 and, per node, the higher modes' part dU = U - U_0.
    float4 u0 = PHI0 * c[0];
    float2 v0 = make_float2(u0.y / u0.x, u0.z / u0.x);
    float p0 = pressure(u0);
    float h0 = u0.w + p0;
    // Not unrolled: unrolling the node loop too makes the p = 4 kernel too large for the
    // instruction cache (fetch stalls were most of its time on the H100).
    #pragma unroll 1
    for (u32 q = 0u; q < NQ; q = q + 1u) {
        float4 du = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        #pragma unroll
        for (u32 k = 1u; k < NP; k = k + 1u) {
            du = du + tables[t_vol_phi(q, k)] * c[k];
        }
        PrimitiveChange ch = primitive_change(u0, v0, du);
        float dh = du.w + ch.dp;
        float4 f = make_float4(du.y, du.y * ch.v1.x + u0.y * ch.dv.x + ch.dp,
                               du.z * ch.v1.x + u0.z * ch.dv.x, dh * ch.v1.x + h0 * ch.dv.x);
        float4 h = make_float4(du.z, du.y * ch.v1.y + u0.y * ch.dv.y,
                               du.z * ch.v1.y + u0.z * ch.dv.y + ch.dp, dh * ch.v1.y + h0 * ch.dv.y);
        float w = tables[t_vol_w(q)];
        #pragma unroll
        for (u32 k = 0u; k < NP; k = k + 1u) {
            float dxi = tables[t_vol_dxi(q, k)];
            float deta = tables[t_vol_deta(q, k)];
            float gx = dxi * g.x + deta * g.z;
            float gy = dxi * g.y + deta * g.w;
            r[k] = r[k] + w * (gx * f + gy * h);
        }
    }
    if (LIFT == 1u) {
        float d = inv_det[i];
        u32 split = HANGING == 1u ? neighbors[i].w : 0u;
        // Not unrolled, like the node loop.
        #pragma unroll 1
        for (u32 j = 0u; j < 3u * NQE; j = j + 1u) {
            u32 s = j / NQE;
            float4 f = d * fluxes[side_slot(i, j)];
            if (((split >> s) & 1u) == 0u) {
                #pragma unroll
                for (u32 k = 0u; k < NP; k = k + 1u) {
                    r[k] = r[k] + tables[t_edge_phi(s, j % NQE, k)] * f;
                }
            } else {
                float4 f2 = d * fluxes[side_slot(i, j + 3u * NQE)];
                #pragma unroll
                for (u32 k = 0u; k < NP; k = k + 1u) {
                    r[k] = r[k] + tables[t_edge_phi(3u + s, j % NQE, k)] * f
                        + tables[t_edge_phi(6u + s, j % NQE, k)] * f2;
                }
            }
        }
    }
    if (STAGE == 1u) {
        float dt = clock[1];
        if (dt == 0.0f) {
            return;
        }
        Stage s = stages[range.color];
        u32 n = 4u * NP * NE;
        if (s.dst2 != 0xffffffffu) {
            #pragma unroll
            for (u32 k = 0u; k < NP; k = k + 1u) {
                stage_apply(regs, regs_lo, s, dt, r[k].x, dof(0u, 0u, k, i), n);
                stage_apply(regs, regs_lo, s, dt, r[k].y, dof(0u, 1u, k, i), n);
                stage_apply(regs, regs_lo, s, dt, r[k].z, dof(0u, 2u, k, i), n);
                stage_apply(regs, regs_lo, s, dt, r[k].w, dof(0u, 3u, k, i), n);
            }
            return;
        }
        // Every DOF's loads first, then every store (see the twin).
        float4 hi[MAX_NP];
        #pragma unroll
        for (u32 k = 0u; k < NP; k = k + 1u) {
            float2 x = stage_sum(regs, regs_lo, s.a, s.b, dt, r[k].x, dof(0u, 0u, k, i), n);
            float2 y = stage_sum(regs, regs_lo, s.a, s.b, dt, r[k].y, dof(0u, 1u, k, i), n);
            float2 z = stage_sum(regs, regs_lo, s.a, s.b, dt, r[k].z, dof(0u, 2u, k, i), n);
            float2 w = stage_sum(regs, regs_lo, s.a, s.b, dt, r[k].w, dof(0u, 3u, k, i), n);
            hi[k] = make_float4(x.x, y.x, z.x, w.x);
            r[k] = make_float4(x.y, y.y, z.y, w.y);
        }
        #pragma unroll
        for (u32 k = 0u; k < NP; k = k + 1u) {
            stage_store(regs, regs_lo, s, make_float2(hi[k].x, r[k].x), dof(0u, 0u, k, i), n);
            stage_store(regs, regs_lo, s, make_float2(hi[k].y, r[k].y), dof(0u, 1u, k, i), n);
            stage_store(regs, regs_lo, s, make_float2(hi[k].z, r[k].z), dof(0u, 2u, k, i), n);
            stage_store(regs, regs_lo, s, make_float2(hi[k].w, r[k].w), dof(0u, 3u, k, i), n);
        }
        return;
    }
    #pragma unroll
    for (u32 k = 0u; k < NP; k = k + 1u) {
        rhs[dof(0u, 0u, k, i)] = r[k].x;
        rhs[dof(0u, 1u, k, i)] = r[k].y;
        rhs[dof(0u, 2u, k, i)] = r[k].z;
        rhs[dof(0u, 3u, k, i)] = r[k].w;
    }
}
