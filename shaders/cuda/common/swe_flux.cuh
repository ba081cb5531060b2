// CUDA twin of shaders/common/swe_flux.wgsl (line by line, f32): the per-edge fluctuations of
// PVM-IFCP, IR-Roe and classical Roe. CPU reference (f64, same structure and names):
// src/solver/swe/flux.rs. Spec: shared/specs/two-layer-shallow-water.md.
//
// Cell data: two float4 per cell, w0 = (h1, q1x, q1y, h2), w1 = (q2x, q2y, H, area).
// Rotated state (edge frame, normal n from L to R, tangent t = (-ny, nx)):
//   c = (h1, q1n, h2, q2n) (the coupled 4x4 normal problem), t = (q1t, q2t).
// Fluctuations: D- (to L) and D+ (to R) with D- + D+ = F(wR) - F(wL) - B(wR - wL) - S(HR - HL).
//
// The WGSL override constants are preprocessor defines here (the host passes -D values).

#ifndef GRAVITY
#define GRAVITY 9.81f
#endif
#ifndef DENSITY_RATIO
#define DENSITY_RATIO 0.5f
#endif
#ifndef DRY_TOL
#define DRY_TOL 1.0e-4f
#endif
// 0 = PVM-IFCP, 1 = IR-Roe, 2 = classical Roe (Scheme::shader_id).
#ifndef SCHEME
#define SCHEME 0u
#endif

#define NO_ELEMENT 0xffffffffu
#define KIND_INTERIOR 0u
#define KIND_WALL 1u
#define KIND_OPEN 2u
#define KIND_DISCHARGE 3u
#define KIND_ELEVATION 4u
#define DISCHARGE_ITERATIONS 24
// Bits of the per-edge event flags (counted per step).
#define FLAG_NONHYPERBOLIC 1u
#define FLAG_FALLBACK 2u
#define FLAG_CHI_CLAMPED 4u
#define EIG4_ITERATIONS 6

struct SweEdge {
    u32 left;
    u32 right;  // NO_ELEMENT on the boundary
    float nx;   // unit normal, left -> right
    float ny;
    float length;
    u32 kind;   // KIND_*
    float value;  // driven edges: q_b or eta_b of this step (swe_boundary_values)
    u32 pad;
};

struct Rot {
    float4 c;
    float2 t;
};

struct RoeAverages {
    float2 hb;
    float2 un;
    float2 ut;
    float2 c2;
};

struct Eig {
    float4 l;
    bool hyperbolic;
};

// Rotated-frame fluctuations: 4 coupled rows + 2 tangential rows per side.
struct Fluct {
    float4 dm;
    float2 dmt;
    float4 dp;
    float2 dpt;
    float lam;
    u32 flags;
};

// Contributions of an edge per unit length, x-y frame, mass rows in flux form (section 2.2):
// left = (G1, D-q1x, D-q1y, G2 | D-q2x, D-q2y), right = (-G1, D+q1x, D+q1y, -G2 | D+q2x, D+q2y).
struct EdgeOut {
    float4 left0;
    float2 left1;
    float4 right0;
    float2 right1;
    float lam;
    u32 flags;
};

// Desingularised depth, section 10 eq. (26): h for h >= kappa, max(h, h^2/(2 kappa) + kappa/2) below.
__device__ float desing(float h) {
    if (h >= DRY_TOL) {
        return h;
    }
    return fmaxf(h, h * h / (2.0f * DRY_TOL) + 0.5f * DRY_TOL);
}

__device__ Rot rotate_state(float4 w0, float4 w1, float nx, float ny) {
    Rot r;
    r.c = make_float4(w0.x, w0.y * nx + w0.z * ny, w0.w, w1.x * nx + w1.y * ny);
    r.t = make_float2(-w0.y * ny + w0.z * nx, -w1.x * ny + w1.y * nx);
    return r;
}

// Mirror ghost of a wall (section 9): normal momenta negated.
__device__ Rot wall_ghost(Rot w) {
    Rot g;
    g.c = make_float4(w.c.x, -w.c.y, w.c.z, -w.c.w);
    g.t = w.t;
    return g;
}

// Driven boundary, external mode (CPU reference: barotropic_boundary in flux.rs): the outgoing
// Riemann invariant R = u + 2 sqrt(g h) of the interior (h = h1 + h2, u = (q1n + q2n) / h) is
// kept; elevation: h_b = max(eta_b + H, 0); discharge q_b (outward): the subcritical root of
// 2c^3 - R c^2 + q_b g = 0 (c = sqrt(g h_b)) by bracketed Newton, critical c = R/3 when none
// (the bracket's cube root is taken of at least 1e-30: pow of 0 is not portable).
// Then u_b = R - 2 c_b; a dry interior facing an elevation sees a reservoir at rest at that level
// (u_b = 0, h_b exact). Supercritical outflow prescribes nothing: the ghost is the interior.
// Ghost layers in the interior's proportions s = h_b / h, every normal velocity shifted by
// u_b - u, tangential velocities kept; a dry interior puts h_b in the lower layer.
__device__ Rot driven_ghost(Rot l, float hh, u32 kind, float value) {
    float h = l.c.x + l.c.z;
    float qn = l.c.y + l.c.w;
    bool wet = h > DRY_TOL;
    float u = 0.0f;
    if (wet) {
        u = qn / h;
    }
    float ci = sqrtf(GRAVITY * fmaxf(h, 0.0f));
    if (wet && u >= ci) {
        return l;
    }
    float r_out = u + 2.0f * ci;
    float cb = 0.0f;
    if (kind == KIND_ELEVATION) {
        cb = sqrtf(GRAVITY * fmaxf(value + hh, 0.0f));
    } else {
        float lo = fmaxf(r_out / 3.0f, 0.0f);
        float hi = 0.5f * fmaxf(r_out, 0.0f) + powf(fmaxf(0.5f * fabsf(value) * GRAVITY, 1.0e-30f), 1.0f / 3.0f);
        cb = lo;
        if (2.0f * lo * lo * lo - r_out * lo * lo + value * GRAVITY < 0.0f) {
            cb = fminf(fmaxf(ci, lo), hi);
            for (int it = 0; it < DISCHARGE_ITERATIONS; it = it + 1) {
                float f = 2.0f * cb * cb * cb - r_out * cb * cb + value * GRAVITY;
                float d = 6.0f * cb * cb - 2.0f * r_out * cb;
                if (f > 0.0f) {
                    hi = cb;
                } else {
                    lo = cb;
                }
                float n = cb - f / d;
                cb = (n >= lo && n <= hi) ? n : 0.5f * (lo + hi);
            }
        }
    }
    float hb = cb * cb / GRAVITY;
    float du = (r_out - 2.0f * cb) - u;
    if (kind == KIND_ELEVATION && !wet) {
        hb = fmaxf(value + hh, 0.0f);
        du = 0.0f;
    }
    float s = 0.0f;
    float2 hl = make_float2(0.0f, hb);
    if (wet) {
        s = hb / h;
        hl = s * make_float2(l.c.x, l.c.z);
    }
    Rot g;
    g.c = make_float4(hl.x, s * l.c.y + hl.x * du, hl.y, s * l.c.w + hl.y * du);
    g.t = s * l.t;
    return g;
}

// The state beyond a boundary edge of the given kind (H beyond it is the interior's hh).
__device__ Rot boundary_state(Rot l, float hh, u32 kind, float value) {
    if (kind == KIND_WALL) {
        return wall_ghost(l);
    }
    if (kind == KIND_DISCHARGE || kind == KIND_ELEVATION) {
        return driven_ghost(l, hh, kind, value);
    }
    return l;
}

// Roe averages (section 3.1) with desingularised velocities.
__device__ RoeAverages roe_averages(Rot l, Rot r) {
    float2 hl = make_float2(l.c.x, l.c.z);
    float2 hr = make_float2(r.c.x, r.c.z);
    float2 sl = make_float2(sqrtf(fmaxf(hl.x, 0.0f)), sqrtf(fmaxf(hl.y, 0.0f)));
    float2 sr = make_float2(sqrtf(fmaxf(hr.x, 0.0f)), sqrtf(fmaxf(hr.y, 0.0f)));
    float2 dl = make_float2(desing(hl.x), desing(hl.y));
    float2 dr = make_float2(desing(hr.x), desing(hr.y));
    float2 unl = make_float2(l.c.y, l.c.w) / dl;
    float2 unr = make_float2(r.c.y, r.c.w) / dr;
    float2 utl = l.t / dl;
    float2 utr = r.t / dr;
    float2 s = sl + sr;
    float2 un = make_float2(0.0f, 0.0f);
    float2 ut = make_float2(0.0f, 0.0f);
    #pragma unroll
    for (int k = 0; k < 2; k = k + 1) {
        if (at(s, k) > 0.0f) {
            at(un, k) = (at(unl, k) * at(sl, k) + at(unr, k) * at(sr, k)) / at(s, k);
            at(ut, k) = (at(utl, k) * at(sl, k) + at(utr, k) * at(sr, k)) / at(s, k);
        }
    }
    float2 hb = 0.5f * (hl + hr);
    RoeAverages a;
    a.hb = hb;
    a.un = un;
    a.ut = ut;
    a.c2 = GRAVITY * hb;
    return a;
}

// Total jump R4 = A dw4 - S dH (section 3.3); (dh2 - dH) formed exactly as written.
__device__ float4 total_jump(Rot l, Rot r, float dhb, RoeAverages a) {
    float4 d = r.c - l.c;
    float u1 = a.un.x;
    float u2 = a.un.y;
    return make_float4(
        d.y,
        (a.c2.x - u1 * u1) * d.x + 2.0f * u1 * d.y + a.c2.x * (d.z - dhb),
        d.w,
        DENSITY_RATIO * a.c2.y * d.x + (a.c2.y - u2 * u2) * d.z + 2.0f * u2 * d.w - a.c2.y * dhb);
}

// The 4x4 Roe matrix A applied matrix-free (section 6.2).
__device__ float4 apply_a(float4 v, RoeAverages a) {
    float u1 = a.un.x;
    float u2 = a.un.y;
    return make_float4(
        v.y,
        (a.c2.x - u1 * u1) * v.x + 2.0f * u1 * v.y + a.c2.x * v.z,
        v.w,
        DENSITY_RATIO * a.c2.y * v.x + (a.c2.y - u2 * u2) * v.z + 2.0f * u2 * v.w);
}

// Characteristic polynomial in factored form and its derivative (section 4.1).
__device__ float2 char_poly(float l, float u1, float u2, float c21, float c22) {
    float a = (l - u1) * (l - u1) - c21;
    float b = (l - u2) * (l - u2) - c22;
    return make_float2(a * b - DENSITY_RATIO * c21 * c22, 2.0f * (l - u1) * b + 2.0f * (l - u2) * a);
}

// EIG4 (section 4.4): bracketed safeguarded Newton for the external roots, deflation for the
// internal pair, one Newton polish.
__device__ Eig eig4(float u1, float u2, float c21, float c22) {
    float r = DENSITY_RATIO;
    float c1 = sqrtf(c21);
    float c2 = sqrtf(c22);
    float ce = sqrtf(c21 + c22);
    float um = (u1 * c21 + u2 * c22) / (c21 + c22);
    float mu = 0.5f * ((c21 + c22) + sqrtf((c21 - c22) * (c21 - c22) + 4.0f * r * c21 * c22));
    float cp = sqrtf(mu);
    float lo4 = fmaxf(u1 + c1, u2 + c2);
    float hi4 = fmaxf(u1, u2) + ce;
    float l4 = fminf(fmaxf(um + cp, lo4), hi4);
    float lo1 = fminf(u1, u2) - ce;
    float hi1 = fminf(u1 - c1, u2 - c2);
    float l1 = fminf(fmaxf(um - cp, lo1), hi1);
    #pragma unroll
    for (int it = 0; it < EIG4_ITERATIONS; it = it + 1) {
        float2 fd = char_poly(l4, u1, u2, c21, c22);
        if (fd.x > 0.0f) {
            hi4 = l4;
        } else {
            lo4 = l4;
        }
        float n = l4 - fd.x / fd.y;
        l4 = (n >= lo4 && n <= hi4) ? n : 0.5f * (lo4 + hi4);
        fd = char_poly(l1, u1, u2, c21, c22);
        if (fd.x > 0.0f) {
            lo1 = l1;
        } else {
            hi1 = l1;
        }
        n = l1 - fd.x / fd.y;
        l1 = (n >= lo1 && n <= hi1) ? n : 0.5f * (lo1 + hi1);
    }
    float qa = -2.0f * (u1 + u2);
    float qb = (u1 * u1 - c21) + 4.0f * u1 * u2 + (u2 * u2 - c22);
    float s_sum = l1 + l4;
    float s = qa + s_sum;
    float t = qb + s_sum * s - l1 * l4;
    float disc = 0.25f * s * s - t;
    float sq = sqrtf(fmaxf(disc, 0.0f));
    float l2 = -0.5f * s - sq;
    float l3 = -0.5f * s + sq;
    float2 fd = char_poly(l2, u1, u2, c21, c22);
    float step = fd.x / fd.y;
    if (fabsf(step) < 0.5f * sq) {
        l2 = l2 - step;
    }
    fd = char_poly(l3, u1, u2, c21, c22);
    step = fd.x / fd.y;
    if (fabsf(step) < 0.5f * sq) {
        l3 = l3 - step;
    }
    Eig e;
    e.l = make_float4(l1, l2, l3, l4);
    e.hyperbolic = disc > 0.0f;
    return e;
}

// Approximate eigenvalues for r -> 1 (section 4.2).
__device__ Eig approx_eig(RoeAverages a) {
    float h1 = a.hb.x;
    float h2 = a.hb.y;
    float u1 = a.un.x;
    float u2 = a.un.y;
    float hs = h1 + h2;
    float um = (u1 * h1 + u2 * h2) / hs;
    float uc = (u1 * h2 + u2 * h1) / hs;
    float ce = sqrtf(GRAVITY * hs);
    float gp = (1.0f - DENSITY_RATIO) * GRAVITY;
    float du = u1 - u2;
    float ci2 = gp * h1 * h2 / hs * (1.0f - du * du / (gp * hs));
    float ci = sqrtf(fmaxf(ci2, 0.0f));
    Eig e;
    e.l = make_float4(um - ce, uc - ci, uc + ci, um + ce);
    e.hyperbolic = ci2 >= 0.0f;
    return e;
}

// PVM-IFCP (section 6): Q = a0 I + a1 A + a2 A^2 interpolating |x| at l1, l4 and
// chi = sgn(l1 + l4) max(|l2|, |l3|); D-/+ = (R4 -/+ Q v)/2 with v = (dh1, dq1n, dh2 - dH, dq2n)
// (at-rest well-balanced variant, section 6.3); tangential momenta upwinded with the layer mass
// flux (section 6.5).
__device__ Fluct ifcp(Rot l, Rot r, float dhb) {
    RoeAverages a = roe_averages(l, r);
    Fluct out;
    out.dm = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    out.dmt = make_float2(0.0f, 0.0f);
    out.dp = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    out.dpt = make_float2(0.0f, 0.0f);
    out.lam = fmaxf(fabsf(a.un.x), fabsf(a.un.y));
    out.flags = 0u;
    if (a.hb.x + a.hb.y <= DRY_TOL) {
        return out;
    }
    Eig e = approx_eig(a);
    if (!e.hyperbolic) {
        out.flags = out.flags | FLAG_NONHYPERBOLIC;
    }
    float l1 = e.l.x;
    float l4 = e.l.w;
    float s_ext = 1.0f;
    if (l1 + l4 != 0.0f) {
        s_ext = sign(l1 + l4);
    }
    float chi = s_ext * fmaxf(fabsf(e.l.y), fabsf(e.l.z));
    float width = l4 - l1;
    if (!(chi > l1 && chi < l4)) {
        chi = fminf(fmaxf(chi, l1 + 1.0e-3f * width), l4 - 1.0e-3f * width);
        out.flags = out.flags | FLAG_CHI_CLAMPED;
    }
    float d1 = (fabsf(l4) - fabsf(l1)) / (l4 - l1);
    float d2 = ((fabsf(chi) - fabsf(l1)) / (chi - l1) - d1) / (chi - l4);
    float alpha2 = d2;
    float alpha1 = d1 - d2 * (l1 + l4);
    float alpha0 = fabsf(l1) - d1 * l1 + d2 * l1 * l4;

    float4 r4 = total_jump(l, r, dhb, a);
    float4 d = r.c - l.c;
    float4 v = make_float4(d.x, d.y, d.z - dhb, d.w);
    float4 qv = alpha0 * v + apply_a(alpha1 * v + alpha2 * apply_a(v, a), a);
    out.dm = 0.5f * (r4 - qv);
    out.dp = 0.5f * (r4 + qv);
    out.lam = fmaxf(out.lam, fmaxf(fabsf(l1), fabsf(l4)));
    float2 vtl = l.t / make_float2(desing(l.c.x), desing(l.c.z));
    float2 vtr = r.t / make_float2(desing(r.c.x), desing(r.c.z));
    float2 qnl = make_float2(l.c.y, l.c.w);
    float2 qnr = make_float2(r.c.y, r.c.w);
    float2 g = qnl + make_float2(out.dm.x, out.dm.z);
    float2 vt_star = make_float2(g.x >= 0.0f ? vtl.x : vtr.x, g.y >= 0.0f ? vtl.y : vtr.y);
    out.dmt = g * vt_star - qnl * vtl;
    out.dpt = qnr * vtr - g * vt_star;
    return out;
}

// A layer is (nearly) dry on either side: Roe schemes fall back to IFCP (section 10).
__device__ bool roe_needs_dry_fallback(Rot l, Rot r) {
    return fminf(fminf(l.c.x, r.c.x), fminf(l.c.z, r.c.z)) < DRY_TOL;
}

// Closed-form eigenvectors (section 5.2): a_p and the left vectors divided by N_p.
struct RoeVectors {
    float4 ap;
    float4 left[4];
};

__device__ RoeVectors roe_eigenvectors(RoeAverages a, float4 lam) {
    float r = DENSITY_RATIO;
    float u1 = a.un.x;
    float u2 = a.un.y;
    float c21 = a.c2.x;
    float c22 = a.c2.y;
    RoeVectors out;
    #pragma unroll
    for (int p = 0; p < 4; p = p + 1) {
        float l = at(lam, p);
        float ap = ((l - u1) * (l - u1) - c21) / c21;
        float np = 2.0f * r * c22 * (l - u1) + 2.0f * ap * ap * c21 * (l - u2);
        at(out.ap, p) = ap;
        out.left[p] = make_float4(r * c22 * (l - 2.0f * u1), r * c22, ap * c21 * (l - 2.0f * u2), ap * c21) / np;
    }
    return out;
}

__device__ float dot4(float4 a, float4 b) {
    return a.x * b.x + a.y * b.y + a.z * b.z + a.w * b.w;
}

// IR-Roe (section 5): D- = sum_p (1 - sgn l_p)/2 beta_p v_p, D+ = R4 - D-; tangential momenta on
// the Roe shear waves (section 5.4). Falls back to IFCP on dry or non-hyperbolic edges.
__device__ Fluct ir_roe(Rot l, Rot r, float dhb) {
    if (roe_needs_dry_fallback(l, r)) {
        Fluct f = ifcp(l, r, dhb);
        f.flags = f.flags | FLAG_FALLBACK;
        return f;
    }
    RoeAverages a = roe_averages(l, r);
    Eig e = eig4(a.un.x, a.un.y, a.c2.x, a.c2.y);
    if (!e.hyperbolic) {
        Fluct f = ifcp(l, r, dhb);
        f.flags = f.flags | FLAG_FALLBACK | FLAG_NONHYPERBOLIC;
        return f;
    }
    float4 r4 = total_jump(l, r, dhb, a);
    RoeVectors vecs = roe_eigenvectors(a, e.l);
    float4 dm = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    #pragma unroll
    for (int p = 0; p < 4; p = p + 1) {
        float lp = at(e.l, p);
        float w = 0.5f * (1.0f - sign(lp)) * dot4(vecs.left[p], r4);
        dm = dm + w * make_float4(1.0f, lp, at(vecs.ap, p), at(vecs.ap, p) * lp);
    }
    Fluct out;
    out.dm = dm;
    out.dp = r4 - dm;
    float2 dh = make_float2(r.c.x - l.c.x, r.c.z - l.c.z);
    float2 shear = (r.t - l.t) - a.ut * dh;
    out.dmt = a.ut * make_float2(out.dm.x, out.dm.z) + make_float2(fminf(a.un.x, 0.0f), fminf(a.un.y, 0.0f)) * shear;
    out.dpt = a.ut * make_float2(out.dp.x, out.dp.z) + make_float2(fmaxf(a.un.x, 0.0f), fmaxf(a.un.y, 0.0f)) * shear;
    out.lam = fmaxf(fmaxf(fabsf(e.l.x), fabsf(e.l.w)), fmaxf(fabsf(a.un.x), fabsf(a.un.y)));
    out.flags = 0u;
    return out;
}

// A rotated 6-vector (h1, q1n, q1t, h2, q2n, q2t) in x-y components (also a row times T).
struct Vec6 {
    float v[6];
};

__device__ Vec6 vec6(float a, float b, float c, float d, float e, float f) {
    Vec6 o;
    o.v[0] = a;
    o.v[1] = b;
    o.v[2] = c;
    o.v[3] = d;
    o.v[4] = e;
    o.v[5] = f;
    return o;
}

__device__ Vec6 unrotate6(Vec6 d, float nx, float ny) {
    return vec6(
        d.v[0], d.v[1] * nx - d.v[2] * ny, d.v[1] * ny + d.v[2] * nx,
        d.v[3], d.v[4] * nx - d.v[5] * ny, d.v[4] * ny + d.v[5] * nx);
}

// Rotated-frame fluctuations to x-y components, in the layout classical_roe returns.
__device__ Fluct fluct_to_xy(Fluct f, float nx, float ny) {
    Fluct o = f;
    o.dm = make_float4(f.dm.x, f.dm.y * nx - f.dmt.x * ny, f.dm.z, f.dm.w * nx - f.dmt.y * ny);
    o.dmt = make_float2(f.dm.y * ny + f.dmt.x * nx, f.dm.w * ny + f.dmt.y * nx);
    o.dp = make_float4(f.dp.x, f.dp.y * nx - f.dpt.x * ny, f.dp.z, f.dp.w * nx - f.dpt.y * ny);
    o.dpt = make_float2(f.dp.y * ny + f.dpt.x * nx, f.dp.w * ny + f.dpt.y * nx);
    return o;
}

// Classical Roe (section 7): dense 6x6 Roe matrix A and S in the x-y frame, K and K^-1 in
// closed form, P- = K (I - sgn L) K^-1 / 2 formed and applied to A dW - S dH. Same numbers as
// IR-Roe in exact arithmetic. Returns x-y components in the Fluct fields
// (dm, dmt) = ((h1, q1x, h2, q2x), (q1y, q2y)).
__device__ Fluct classical_roe(Rot l, Rot r, float dhb, float nx, float ny) {
    if (roe_needs_dry_fallback(l, r)) {
        Fluct f = ifcp(l, r, dhb);
        f.flags = f.flags | FLAG_FALLBACK;
        return fluct_to_xy(f, nx, ny);
    }
    RoeAverages a = roe_averages(l, r);
    Eig e = eig4(a.un.x, a.un.y, a.c2.x, a.c2.y);
    if (!e.hyperbolic) {
        Fluct f = ifcp(l, r, dhb);
        f.flags = f.flags | FLAG_FALLBACK | FLAG_NONHYPERBOLIC;
        return fluct_to_xy(f, nx, ny);
    }
    // WGSL function-scope variables are zero-initialised.
    float amat[6][6] = {};
    float sbar[6] = {};
    #pragma unroll
    for (int k = 0; k < 2; k = k + 1) {
        float u = at(a.un, k) * nx - at(a.ut, k) * ny;
        float v = at(a.un, k) * ny + at(a.ut, k) * nx;
        float c2 = at(a.c2, k);
        amat[3 * k][3 * k + 1] = nx;
        amat[3 * k][3 * k + 2] = ny;
        amat[3 * k + 1][3 * k] = (c2 - u * u) * nx - u * v * ny;
        amat[3 * k + 1][3 * k + 1] = 2.0f * u * nx + v * ny;
        amat[3 * k + 1][3 * k + 2] = u * ny;
        amat[3 * k + 2][3 * k] = -u * v * nx + (c2 - v * v) * ny;
        amat[3 * k + 2][3 * k + 1] = v * nx;
        amat[3 * k + 2][3 * k + 2] = u * nx + 2.0f * v * ny;
        sbar[3 * k + 1] = GRAVITY * at(a.hb, k) * nx;
        sbar[3 * k + 2] = GRAVITY * at(a.hb, k) * ny;
    }
    amat[1][3] = amat[1][3] + GRAVITY * a.hb.x * nx;
    amat[2][3] = amat[2][3] + GRAVITY * a.hb.x * ny;
    amat[4][0] = amat[4][0] + DENSITY_RATIO * GRAVITY * a.hb.y * nx;
    amat[5][0] = amat[5][0] + DENSITY_RATIO * GRAVITY * a.hb.y * ny;

    Vec6 wl = unrotate6(vec6(l.c.x, l.c.y, l.t.x, l.c.z, l.c.w, l.t.y), nx, ny);
    Vec6 wr = unrotate6(vec6(r.c.x, r.c.y, r.t.x, r.c.z, r.c.w, r.t.y), nx, ny);
    float res[6];
    #pragma unroll
    for (int row = 0; row < 6; row = row + 1) {
        float s = 0.0f;
        #pragma unroll
        for (int c = 0; c < 6; c = c + 1) {
            s = s + amat[row][c] * (wr.v[c] - wl.v[c]);
        }
        res[row] = s - sbar[row] * dhb;
    }

    RoeVectors vecs = roe_eigenvectors(a, e.l);
    float kmat[6][6] = {};
    Vec6 kinv[6];
    float halves[6] = {};
    #pragma unroll
    for (int p = 0; p < 4; p = p + 1) {
        float lp = at(e.l, p);
        float ap = at(vecs.ap, p);
        Vec6 col = unrotate6(vec6(1.0f, lp, a.ut.x, ap, ap * lp, ap * a.ut.y), nx, ny);
        #pragma unroll
        for (int row = 0; row < 6; row = row + 1) {
            kmat[row][p] = col.v[row];
        }
        float4 lf = vecs.left[p];
        kinv[p] = unrotate6(vec6(lf.x, lf.y, 0.0f, lf.z, lf.w, 0.0f), nx, ny);
        halves[p] = 0.5f * (1.0f - sign(lp));
    }
    Vec6 sh1 = unrotate6(vec6(0.0f, 0.0f, 1.0f, 0.0f, 0.0f, 0.0f), nx, ny);
    Vec6 sh2 = unrotate6(vec6(0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 1.0f), nx, ny);
    #pragma unroll
    for (int row = 0; row < 6; row = row + 1) {
        kmat[row][4] = sh1.v[row];
        kmat[row][5] = sh2.v[row];
    }
    kinv[4] = unrotate6(vec6(-a.ut.x, 0.0f, 1.0f, 0.0f, 0.0f, 0.0f), nx, ny);
    kinv[5] = unrotate6(vec6(0.0f, 0.0f, 0.0f, -a.ut.y, 0.0f, 1.0f), nx, ny);
    halves[4] = 0.5f * (1.0f - sign(a.un.x));
    halves[5] = 0.5f * (1.0f - sign(a.un.y));

    float dm[6];
    #pragma unroll
    for (int row = 0; row < 6; row = row + 1) {
        float s = 0.0f;
        #pragma unroll
        for (int c = 0; c < 6; c = c + 1) {
            float pm = 0.0f;
            #pragma unroll
            for (int p = 0; p < 6; p = p + 1) {
                pm = pm + kmat[row][p] * halves[p] * kinv[p].v[c];
            }
            s = s + pm * res[c];
        }
        dm[row] = s;
    }
    Fluct out;
    out.dm = make_float4(dm[0], dm[1], dm[3], dm[4]);
    out.dmt = make_float2(dm[2], dm[5]);
    out.dp = make_float4(res[0], res[1], res[3], res[4]) - out.dm;
    out.dpt = make_float2(res[2], res[5]) - out.dmt;
    out.lam = fmaxf(fmaxf(fabsf(e.l.x), fabsf(e.l.w)), fmaxf(fabsf(a.un.x), fabsf(a.un.y)));
    out.flags = 0u;
    return out;
}

// The complete edge kernel (section 2.4) for left cell data (wl0, wl1) and the neighbour
// (wr0, wr1) (ignored unless kind == KIND_INTERIOR; boundary_state otherwise, with the edge's
// boundary value).
__device__ EdgeOut edge_contribution(float4 wl0, float4 wl1, float4 wr0, float4 wr1, u32 kind, float nx, float ny, float value) {
    Rot l = rotate_state(wl0, wl1, nx, ny);
    Rot r = l;
    float hr = wl1.z;
    if (kind == KIND_INTERIOR) {
        r = rotate_state(wr0, wr1, nx, ny);
        hr = wr1.z;
    } else {
        r = boundary_state(l, wl1.z, kind, value);
    }
    float dhb = hr - wl1.z;
    Fluct f;
    if (SCHEME == 0u) {
        f = fluct_to_xy(ifcp(l, r, dhb), nx, ny);
    } else if (SCHEME == 1u) {
        f = fluct_to_xy(ir_roe(l, r, dhb), nx, ny);
    } else {
        f = classical_roe(l, r, dhb, nx, ny);
    }
    // Mass rows in flux form: G_k = qn_k,L + D-[h_k]; exactly zero on walls (section 9).
    float2 g = make_float2(l.c.y, l.c.w) + make_float2(f.dm.x, f.dm.z);
    if (kind == KIND_WALL) {
        g = make_float2(0.0f, 0.0f);
    }
    EdgeOut out;
    out.left0 = make_float4(g.x, f.dm.y, f.dmt.x, g.y);
    out.left1 = make_float2(f.dm.w, f.dmt.y);
    out.right0 = make_float4(-g.x, f.dp.y, f.dpt.x, -g.y);
    out.right1 = make_float2(f.dp.w, f.dpt.y);
    out.lam = f.lam;
    out.flags = f.flags;
    return out;
}
