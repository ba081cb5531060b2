// CUDA twin of shaders/common/amr_indicator.wgsl: the refinement indicator's flag of a slot
// (indicator() and flags() in src/solver/dg/amr/indicator.rs), shared by amr_flag and
// amr_smooth's pass 0 when it computes the flags itself. eps_i = h_i |grad q(U_i)| at the
// centroid (GK19 eq. 10), +1 above threshold * delta, -1 below threshold / delta, else 0; only
// 0 / +1 when refining only. q is density, pressure or energy (params.field); for pressure
//   grad p = (gamma - 1) (grad E - (m . grad m) / rho + |m|^2 grad rho / (2 rho^2)).
// With params.jumps, eps_i += max_j |q(U_i mean) - q(U_j mean)| over the face neighbours j
// (jumps() in indicator.rs): a step on the element edges (projected, each side constant) has
// no gradient inside an element, but a jump across its faces.
//
// regs: register 0's high words, 4 NP rows of NE. centroid_basis: per mode k, (phi_k,
// d phi_k / d xi, d phi_k / d eta, 0) at the reference centroid. neighbors: face neighbours
// (dg_limit.cu's layout): [i] sides 0..2 and the mask of split sides in w, [NE + i] the second
// neighbours of split sides.

#ifndef NP
#define NP 3u
#endif

__device__ __forceinline__ float2 field_gradient(
    float4 u, float4 gx, float4 gy, const AmrParams& params) {
    if (params.field == 0u) {
        return make_float2(gx.x, gy.x);
    }
    if (params.field == 2u) {
        return make_float2(gx.w, gy.w);
    }
    float m2 = u.y * u.y + u.z * u.z;
    float px = gx.w - (u.y * gx.y + u.z * gx.z) / u.x + m2 * gx.x / (2.0f * u.x * u.x);
    float py = gy.w - (u.y * gy.y + u.z * gy.z) / u.x + m2 * gy.x / (2.0f * u.x * u.x);
    return (params.gamma - 1.0f) * make_float2(px, py);
}

__device__ __forceinline__ float field_value(float4 u, const AmrParams& params) {
    if (params.field == 0u) {
        return u.x;
    }
    if (params.field == 2u) {
        return u.w;
    }
    return (params.gamma - 1.0f) * (u.w - 0.5f * (u.y * u.y + u.z * u.z) / u.x);
}

// q at the mean of element j (mode 0 times the constant phi_0).
__device__ __forceinline__ float mean_value(
    const float* regs, const float4* centroid_basis, u32 j, const AmrParams& params) {
    float4 a = make_float4(regs[j], regs[NP * NE + j], regs[2u * NP * NE + j],
                           regs[3u * NP * NE + j]);
    return field_value(centroid_basis[0].x * a, params);
}

// Largest |q(mean i) - q(mean j)| over the neighbours j in nb.xyz (NONE: none).
__device__ __forceinline__ float largest_jump(
    const float* regs, const float4* centroid_basis, float q, uint4 nb, float jump,
    const AmrParams& params) {
    float m = jump;
    u32 side[3] = {nb.x, nb.y, nb.z};
    for (u32 s = 0u; s < 3u; s = s + 1u) {
        if (side[s] != NONE) {
            m = fmaxf(m, fabsf(mean_value(regs, centroid_basis, side[s], params) - q));
        }
    }
    return m;
}

// The flag of the element in slot i.
__device__ __forceinline__ int indicator_flag(
    u32 i,
    const float* regs,
    const float4* centroid_basis,
    const float4* inv_jac,
    const float* heights,
    const uint4* neighbors,
    const AmrParams& params) {
    float4 g = inv_jac[i];
    float4 u = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    float4 gx = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    float4 gy = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    for (u32 k = 0u; k < NP; k = k + 1u) {
        float4 b = centroid_basis[k];
        float4 a = make_float4(
            regs[(0u * NP + k) * NE + i],
            regs[(1u * NP + k) * NE + i],
            regs[(2u * NP + k) * NE + i],
            regs[(3u * NP + k) * NE + i]);
        u = u + b.x * a;
        gx = gx + (b.y * g.x + b.z * g.z) * a;
        gy = gy + (b.y * g.y + b.z * g.w) * a;
    }
    float eps = heights[i] * length(field_gradient(u, gx, gy, params));
    if (params.jumps != 0u) {
        float q = mean_value(regs, centroid_basis, i, params);
        uint4 nb = neighbors[i];
        float jump = largest_jump(regs, centroid_basis, q, nb, 0.0f, params);
        if (nb.w != 0u) {
            jump = largest_jump(regs, centroid_basis, q, neighbors[NE + i], jump, params);
        }
        eps = eps + jump;
    }
    int f = 0;
    if (eps > params.threshold * params.delta) {
        f = 1;
    } else if (eps < params.threshold / params.delta && params.refine_only == 0u) {
        f = -1;
    }
    return f;
}
