// #include "common/dispatch.cuh"
// #include "common/dg_euler.cuh"
// #include "common/dg_tables.cuh"

// CUDA twin of shaders/dg_volume.wgsl. DG volume term, one thread per element
// (Operator::rhs, first loop):
//   rhs_k = sum_q w_q F(U_q) . (J^{-T} grad_ref phi_k)(x_q)
// The thread reads the element's coefficients of register range.pad (coalesced) and
// overwrites rhs; the surface kernel adds the edge terms afterwards.
//
// inv_jac: (xi_x, xi_y, eta_x, eta_y) per element.

extern "C" __global__ void dg_volume(
    const float* __restrict__ regs,
    float* __restrict__ rhs,
    const float* __restrict__ tables,
    const float4* __restrict__ inv_jac,
    ItemRange range) {
    u32 i = linear_index();
    if (i >= range.count) {
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
    #pragma unroll
    for (u32 q = 0u; q < NQ; q = q + 1u) {
        float4 u = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        #pragma unroll
        for (u32 k = 0u; k < NP; k = k + 1u) {
            u = u + tables[t_vol_phi(q, k)] * c[k];
        }
        float p = pressure(u);
        float vx = u.y / u.x;
        float vy = u.z / u.x;
        float4 f = make_float4(u.y, u.y * vx + p, u.z * vx, (u.w + p) * vx);
        float4 h = make_float4(u.z, u.y * vy, u.z * vy + p, (u.w + p) * vy);
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
    #pragma unroll
    for (u32 k = 0u; k < NP; k = k + 1u) {
        rhs[dof(0u, 0u, k, i)] = r[k].x;
        rhs[dof(0u, 1u, k, i)] = r[k].y;
        rhs[dof(0u, 2u, k, i)] = r[k].z;
        rhs[dof(0u, 3u, k, i)] = r[k].w;
    }
}
