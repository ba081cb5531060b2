// CUDA twin of shaders/common/dg_euler.wgsl: 2D Euler physics for the DG kernels (f32 twin of
// src/solver/dg/euler.rs and case.rs). U = (rho, rho u, rho v, E), p = (gamma - 1)(E - |m|^2 / (2 rho)).
//
// The WGSL override constants are preprocessor defines here (the host passes -D values).

#ifndef GAMMA
#define GAMMA 1.4f
#endif
// Numerical flux: 0 Rusanov (local Lax-Friedrichs), 1 HLLC.
#ifndef FLUX
#define FLUX 0u
#endif
// State function of the case: 0 constant, 1 isentropic vortex, 2 double Mach, 3 Kelvin-Helmholtz.
#ifndef CASE_FN
#define CASE_FN 0u
#endif

#define EDGE_INTERIOR 0u
#define EDGE_WALL 1u
#define EDGE_OUTFLOW 2u
#define EDGE_INFLOW 3u
#define EDGE_EXACT 4u
#define PI 3.14159265358979f
// The constant basis function phi_0 = sqrt(2) (an element's mean is c_0 phi_0).
#define PHI0 1.41421356237f

__device__ __forceinline__ float pressure(float4 u) {
    return (GAMMA - 1.0f) * (u.w - 0.5f * (u.y * u.y + u.z * u.z) / u.x);
}

__device__ __forceinline__ float sound_speed(float4 u) {
    return sqrtf(GAMMA * fmaxf(pressure(u), 0.0f) / u.x);
}

__device__ __forceinline__ float4 conserved(float rho, float vx, float vy, float p) {
    return make_float4(rho, rho * vx, rho * vy, p / (GAMMA - 1.0f) + 0.5f * rho * (vx * vx + vy * vy));
}

// Deviation form (issue 13; see dg_euler.wgsl): the kernels integrate F(U) - F(U_0) around each
// element's mean U_0, and these helpers give such differences from the deviation du alone, so
// their rounding scales with |du|, not with |F|.

// The primitive variables' change from u (velocity v = m / rho, pressure p) to u + du:
//   dv = (dm - v drho) / (rho + drho),  v1 = v + dv,  dp = (gamma - 1)(dE - (dm . v1 + m . dv) / 2).
struct PrimitiveChange {
    float2 dv;
    float2 v1;
    float dp;
};

__device__ __forceinline__ PrimitiveChange primitive_change(float4 u, float2 v, float4 du) {
    PrimitiveChange c;
    c.dv = (make_float2(du.y, du.z) - du.x * v) / make_float2(u.x + du.x, u.x + du.x);
    c.v1 = v + c.dv;
    c.dp = (GAMMA - 1.0f) * (du.w - 0.5f * ((du.y * c.v1.x + du.z * c.v1.y) + (u.y * c.dv.x + u.z * c.dv.y)));
    return c;
}

// (F n_x + G n_y)(u + du) - (F n_x + G n_y)(u), u with pressure p and change c:
//   (dm . n, dm u1_n + m dv_n + dp n, (dE + dp) u1_n + (E + p) dv_n).
__device__ __forceinline__ float4 normal_flux_change(float4 u, float p, PrimitiveChange c, float4 du, float2 n) {
    float un1 = c.v1.x * n.x + c.v1.y * n.y;
    float dun = c.dv.x * n.x + c.dv.y * n.y;
    return make_float4(
        du.y * n.x + du.z * n.y,
        du.y * un1 + u.y * dun + c.dp * n.x,
        du.z * un1 + u.z * dun + c.dp * n.y,
        (du.w + c.dp) * un1 + (u.w + p) * dun);
}

// U*_K - U_K of HLLC's star state (hllc() in euler.rs) with d = S* - u_n: with fac - rho = rho d / (S - S*) and
// Y = S* + p / (rho (S - u_n)),
//   (fac - rho)(1, S* n + u_t, E / rho + d Y) + rho d (0, n, Y).
__device__ __forceinline__ float4 hllc_star_change(float4 u, float p, float2 v, float un, float s, float sm, float d, float2 n) {
    float dfac = u.x * d / (s - sm);
    float2 vt = v - un * n;
    float y = sm + p / (u.x * (s - un));
    float rd = u.x * d;
    return make_float4(
        dfac,
        dfac * (sm * n.x + vt.x) + rd * n.x,
        dfac * (sm * n.y + vt.y) + rd * n.y,
        dfac * (u.w / u.x + d * y) + rd * y);
}

// F*(ul, ul + du) - F(ul) . n, the numerical flux's departure from the left state's flux, from
// the jump du: Rusanov or HLLC as in euler.rs, with S* - u_n of either side from the jumps
// in pressure and normal velocity, S* - u_nL = (dp - du_n rho_R (S_R - u_nR)) / (d_L - d_R).
__device__ __forceinline__ float4 numerical_flux_change(float4 ul, float4 du, float2 n) {
    float4 ur = ul + du;
    float pl = pressure(ul);
    float2 vl = make_float2(ul.y / ul.x, ul.z / ul.x);
    PrimitiveChange c = primitive_change(ul, vl, du);
    float unl = vl.x * n.x + vl.y * n.y;
    float unr = c.v1.x * n.x + c.v1.y * n.y;
    float pr = pl + c.dp;
    float cl = sqrtf(GAMMA * fmaxf(pl, 0.0f) / ul.x);
    float cr = sqrtf(GAMMA * fmaxf(pr, 0.0f) / ur.x);
    float4 df = normal_flux_change(ul, pl, c, du, n);
    if (FLUX != 1u) {
        float lam = fmaxf(fabsf(unl) + cl, fabsf(unr) + cr);
        return 0.5f * df - (0.5f * lam) * du;
    }
    float sl = fminf(unl - cl, unr - cr);
    float sr = fmaxf(unl + cl, unr + cr);
    if (sl >= 0.0f) {
        return make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    }
    if (sr <= 0.0f) {
        return df;
    }
    float dun = c.dv.x * n.x + c.dv.y * n.y;
    float dl = ul.x * (sl - unl);
    float dr = ur.x * (sr - unr);
    float dsl = (c.dp - dun * dr) / (dl - dr);
    float sm = unl + dsl;
    if (sm >= 0.0f) {
        return sl * hllc_star_change(ul, pl, vl, unl, sl, sm, dsl, n);
    }
    float dsr = (c.dp - dun * dl) / (dl - dr);
    return df + sr * hllc_star_change(ur, pr, c.v1, unr, sr, sm, dsr, n);
}

// The case's state function at (x, t) (StateFn::eval); params p0, p1 = StateFn::params.
__device__ __forceinline__ float4 case_state(float2 x, float t, float4 p0, float4 p1) {
    if (CASE_FN == 1u) {
        // p1 = (beta, radius, p_inf, 0).
        float2 d = x - make_float2(p0.x, p0.y) - t * make_float2(p0.z, p0.w);
        float r2 = (d.x * d.x + d.y * d.y) / (p1.y * p1.y);
        float e = expf(0.5f * (1.0f - r2));
        float beta = p1.x;
        float du = beta / (2.0f * PI) * e / p1.y;
        float temp = 1.0f - (GAMMA - 1.0f) * beta * beta / (8.0f * GAMMA * PI * PI * p1.z) * e * e;
        float rho = powf(temp, 1.0f / (GAMMA - 1.0f));
        return conserved(rho, p0.z - du * d.y, p0.w + du * d.x, p1.z * powf(rho, GAMMA));
    }
    if (CASE_FN == 2u) {
        float xs = 1.0f / 6.0f + (x.y + 20.0f * t) / sqrtf(3.0f);
        if (x.x < xs) {
            return conserved(8.0f, 8.25f * cosf(PI / 6.0f), -8.25f * sinf(PI / 6.0f), 116.5f);
        }
        return conserved(1.4f, 0.0f, 0.0f, 1.0f);
    }
    if (CASE_FN == 3u) {
        float w = 0.1f;
        float s = 0.05f / sqrtf(2.0f);
        float v = w * sinf(4.0f * PI * x.x) * (expf(-(x.y + 0.5f) * (x.y + 0.5f) / (2.0f * s * s))
            + expf(-(x.y - 0.5f) * (x.y - 0.5f) / (2.0f * s * s)));
        if (fabsf(x.y) < 0.5f) {
            return conserved(2.0f, 0.5f, v, 2.5f);
        }
        return conserved(1.0f, -0.5f, v, 2.5f);
    }
    return p0;
}
