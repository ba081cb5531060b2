// Two-layer shallow water: the per-edge fluctuations of PVM-IFCP, IR-Roe and classical Roe in
// f32. CPU reference (f64, same structure and names): src/solver/swe/flux.rs. Spec:
// shared/specs/two-layer-shallow-water.md (section numbers below refer to it).
//
// Cell data: two vec4 per cell, w0 = (h1, q1x, q1y, h2), w1 = (q2x, q2y, H, area).
// Rotated state (edge frame, normal n from L to R, tangent t = (-ny, nx)):
//   c = (h1, q1n, h2, q2n) (the coupled 4x4 normal problem), t = (q1t, q2t).
// Fluctuations: D- (to L) and D+ (to R) with D- + D+ = F(wR) - F(wL) - B(wR - wL) - S(HR - HL).

override GRAVITY: f32 = 9.81;
override DENSITY_RATIO: f32 = 0.5;
override DRY_TOL: f32 = 1.0e-4;
// 0 = PVM-IFCP, 1 = IR-Roe, 2 = classical Roe (Scheme::shader_id).
override SCHEME: u32 = 0u;

const NO_ELEMENT: u32 = 0xffffffffu;
const KIND_INTERIOR: u32 = 0u;
const KIND_WALL: u32 = 1u;
const KIND_OPEN: u32 = 2u;
const KIND_DISCHARGE: u32 = 3u;
const KIND_ELEVATION: u32 = 4u;
const DISCHARGE_ITERATIONS: i32 = 24;
// Bits of the per-edge event flags (counted per step).
const FLAG_NONHYPERBOLIC: u32 = 1u;
const FLAG_FALLBACK: u32 = 2u;
const FLAG_CHI_CLAMPED: u32 = 4u;
const EIG4_ITERATIONS: i32 = 6;

struct SweEdge {
    left: u32,
    right: u32,   // NO_ELEMENT on the boundary
    nx: f32,      // unit normal, left -> right
    ny: f32,
    length: f32,
    kind: u32,    // KIND_*
    value: f32,   // driven edges: q_b or eta_b of this step (swe_boundary_values)
    pad: u32,
}

struct Rot {
    c: vec4<f32>,
    t: vec2<f32>,
}

struct RoeAverages {
    hb: vec2<f32>,
    un: vec2<f32>,
    ut: vec2<f32>,
    c2: vec2<f32>,
}

struct Eig {
    l: vec4<f32>,
    hyperbolic: bool,
}

// Rotated-frame fluctuations: 4 coupled rows + 2 tangential rows per side.
struct Fluct {
    dm: vec4<f32>,
    dmt: vec2<f32>,
    dp: vec4<f32>,
    dpt: vec2<f32>,
    lam: f32,
    flags: u32,
}

// Contributions of an edge per unit length, x-y frame, mass rows in flux form (section 2.2):
// left = (G1, D-q1x, D-q1y, G2 | D-q2x, D-q2y), right = (-G1, D+q1x, D+q1y, -G2 | D+q2x, D+q2y).
struct EdgeOut {
    left0: vec4<f32>,
    left1: vec2<f32>,
    right0: vec4<f32>,
    right1: vec2<f32>,
    lam: f32,
    flags: u32,
}

// Desingularised depth, section 10 eq. (26): h for h >= kappa, max(h, h^2/(2 kappa) + kappa/2) below.
fn desing(h: f32) -> f32 {
    if (h >= DRY_TOL) {
        return h;
    }
    return max(h, h * h / (2.0 * DRY_TOL) + 0.5 * DRY_TOL);
}

fn rotate_state(w0: vec4<f32>, w1: vec4<f32>, nx: f32, ny: f32) -> Rot {
    return Rot(
        vec4<f32>(w0.x, w0.y * nx + w0.z * ny, w0.w, w1.x * nx + w1.y * ny),
        vec2<f32>(-w0.y * ny + w0.z * nx, -w1.x * ny + w1.y * nx),
    );
}

// Mirror ghost of a wall (section 9): normal momenta negated.
fn wall_ghost(w: Rot) -> Rot {
    return Rot(vec4<f32>(w.c.x, -w.c.y, w.c.z, -w.c.w), w.t);
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
fn driven_ghost(l: Rot, hh: f32, kind: u32, value: f32) -> Rot {
    let h = l.c.x + l.c.z;
    let qn = l.c.y + l.c.w;
    let wet = h > DRY_TOL;
    var u = 0.0;
    if (wet) {
        u = qn / h;
    }
    let ci = sqrt(GRAVITY * max(h, 0.0));
    if (wet && u >= ci) {
        return l;
    }
    let r_out = u + 2.0 * ci;
    var cb = 0.0;
    if (kind == KIND_ELEVATION) {
        cb = sqrt(GRAVITY * max(value + hh, 0.0));
    } else {
        var lo = max(r_out / 3.0, 0.0);
        var hi = 0.5 * max(r_out, 0.0) + pow(max(0.5 * abs(value) * GRAVITY, 1.0e-30), 1.0 / 3.0);
        cb = lo;
        if (2.0 * lo * lo * lo - r_out * lo * lo + value * GRAVITY < 0.0) {
            cb = min(max(ci, lo), hi);
            for (var it = 0; it < DISCHARGE_ITERATIONS; it = it + 1) {
                let f = 2.0 * cb * cb * cb - r_out * cb * cb + value * GRAVITY;
                let d = 6.0 * cb * cb - 2.0 * r_out * cb;
                if (f > 0.0) {
                    hi = cb;
                } else {
                    lo = cb;
                }
                let n = cb - f / d;
                cb = select(0.5 * (lo + hi), n, n >= lo && n <= hi);
            }
        }
    }
    var hb = cb * cb / GRAVITY;
    var du = (r_out - 2.0 * cb) - u;
    if (kind == KIND_ELEVATION && !wet) {
        hb = max(value + hh, 0.0);
        du = 0.0;
    }
    var s = 0.0;
    var hl = vec2<f32>(0.0, hb);
    if (wet) {
        s = hb / h;
        hl = s * vec2<f32>(l.c.x, l.c.z);
    }
    return Rot(
        vec4<f32>(hl.x, s * l.c.y + hl.x * du, hl.y, s * l.c.w + hl.y * du),
        s * l.t,
    );
}

// The state beyond a boundary edge of the given kind (H beyond it is the interior's hh).
fn boundary_state(l: Rot, hh: f32, kind: u32, value: f32) -> Rot {
    if (kind == KIND_WALL) {
        return wall_ghost(l);
    }
    if (kind == KIND_DISCHARGE || kind == KIND_ELEVATION) {
        return driven_ghost(l, hh, kind, value);
    }
    return l;
}

// Roe averages (section 3.1) with desingularised velocities.
fn roe_averages(l: Rot, r: Rot) -> RoeAverages {
    let hl = vec2<f32>(l.c.x, l.c.z);
    let hr = vec2<f32>(r.c.x, r.c.z);
    let sl = sqrt(max(hl, vec2<f32>(0.0)));
    let sr = sqrt(max(hr, vec2<f32>(0.0)));
    let dl = vec2<f32>(desing(hl.x), desing(hl.y));
    let dr = vec2<f32>(desing(hr.x), desing(hr.y));
    let unl = vec2<f32>(l.c.y, l.c.w) / dl;
    let unr = vec2<f32>(r.c.y, r.c.w) / dr;
    let utl = l.t / dl;
    let utr = r.t / dr;
    let s = sl + sr;
    var un = vec2<f32>(0.0);
    var ut = vec2<f32>(0.0);
    // #unroll
    for (var k = 0; k < 2; k = k + 1) {
        if (s[k] > 0.0) {
            un[k] = (unl[k] * sl[k] + unr[k] * sr[k]) / s[k];
            ut[k] = (utl[k] * sl[k] + utr[k] * sr[k]) / s[k];
        }
    }
    let hb = 0.5 * (hl + hr);
    return RoeAverages(hb, un, ut, GRAVITY * hb);
}

// Total jump R4 = A dw4 - S dH (section 3.3); (dh2 - dH) formed exactly as written.
fn total_jump(l: Rot, r: Rot, dhb: f32, a: RoeAverages) -> vec4<f32> {
    let d = r.c - l.c;
    let u1 = a.un.x;
    let u2 = a.un.y;
    return vec4<f32>(
        d.y,
        (a.c2.x - u1 * u1) * d.x + 2.0 * u1 * d.y + a.c2.x * (d.z - dhb),
        d.w,
        DENSITY_RATIO * a.c2.y * d.x + (a.c2.y - u2 * u2) * d.z + 2.0 * u2 * d.w - a.c2.y * dhb,
    );
}

// The 4x4 Roe matrix A applied matrix-free (section 6.2).
fn apply_a(v: vec4<f32>, a: RoeAverages) -> vec4<f32> {
    let u1 = a.un.x;
    let u2 = a.un.y;
    return vec4<f32>(
        v.y,
        (a.c2.x - u1 * u1) * v.x + 2.0 * u1 * v.y + a.c2.x * v.z,
        v.w,
        DENSITY_RATIO * a.c2.y * v.x + (a.c2.y - u2 * u2) * v.z + 2.0 * u2 * v.w,
    );
}

// Characteristic polynomial in factored form and its derivative (section 4.1).
fn char_poly(l: f32, u1: f32, u2: f32, c21: f32, c22: f32) -> vec2<f32> {
    let a = (l - u1) * (l - u1) - c21;
    let b = (l - u2) * (l - u2) - c22;
    return vec2<f32>(a * b - DENSITY_RATIO * c21 * c22, 2.0 * (l - u1) * b + 2.0 * (l - u2) * a);
}

// EIG4 (section 4.4): bracketed safeguarded Newton for the external roots, deflation for the
// internal pair, one Newton polish.
fn eig4(u1: f32, u2: f32, c21: f32, c22: f32) -> Eig {
    let r = DENSITY_RATIO;
    let c1 = sqrt(c21);
    let c2 = sqrt(c22);
    let ce = sqrt(c21 + c22);
    let um = (u1 * c21 + u2 * c22) / (c21 + c22);
    let mu = 0.5 * ((c21 + c22) + sqrt((c21 - c22) * (c21 - c22) + 4.0 * r * c21 * c22));
    let cp = sqrt(mu);
    var lo4 = max(u1 + c1, u2 + c2);
    var hi4 = max(u1, u2) + ce;
    var l4 = min(max(um + cp, lo4), hi4);
    var lo1 = min(u1, u2) - ce;
    var hi1 = min(u1 - c1, u2 - c2);
    var l1 = min(max(um - cp, lo1), hi1);
    // #unroll
    for (var it = 0; it < EIG4_ITERATIONS; it = it + 1) {
        var fd = char_poly(l4, u1, u2, c21, c22);
        if (fd.x > 0.0) {
            hi4 = l4;
        } else {
            lo4 = l4;
        }
        var n = l4 - fd.x / fd.y;
        l4 = select(0.5 * (lo4 + hi4), n, n >= lo4 && n <= hi4);
        fd = char_poly(l1, u1, u2, c21, c22);
        if (fd.x > 0.0) {
            lo1 = l1;
        } else {
            hi1 = l1;
        }
        n = l1 - fd.x / fd.y;
        l1 = select(0.5 * (lo1 + hi1), n, n >= lo1 && n <= hi1);
    }
    let qa = -2.0 * (u1 + u2);
    let qb = (u1 * u1 - c21) + 4.0 * u1 * u2 + (u2 * u2 - c22);
    let s_sum = l1 + l4;
    let s = qa + s_sum;
    let t = qb + s_sum * s - l1 * l4;
    let disc = 0.25 * s * s - t;
    let sq = sqrt(max(disc, 0.0));
    var l2 = -0.5 * s - sq;
    var l3 = -0.5 * s + sq;
    var fd = char_poly(l2, u1, u2, c21, c22);
    var step = fd.x / fd.y;
    if (abs(step) < 0.5 * sq) {
        l2 = l2 - step;
    }
    fd = char_poly(l3, u1, u2, c21, c22);
    step = fd.x / fd.y;
    if (abs(step) < 0.5 * sq) {
        l3 = l3 - step;
    }
    return Eig(vec4<f32>(l1, l2, l3, l4), disc > 0.0);
}

// Approximate eigenvalues for r -> 1 (section 4.2).
fn approx_eig(a: RoeAverages) -> Eig {
    let h1 = a.hb.x;
    let h2 = a.hb.y;
    let u1 = a.un.x;
    let u2 = a.un.y;
    let hs = h1 + h2;
    let um = (u1 * h1 + u2 * h2) / hs;
    let uc = (u1 * h2 + u2 * h1) / hs;
    let ce = sqrt(GRAVITY * hs);
    let gp = (1.0 - DENSITY_RATIO) * GRAVITY;
    let du = u1 - u2;
    let ci2 = gp * h1 * h2 / hs * (1.0 - du * du / (gp * hs));
    let ci = sqrt(max(ci2, 0.0));
    return Eig(vec4<f32>(um - ce, uc - ci, uc + ci, um + ce), ci2 >= 0.0);
}

// PVM-IFCP (section 6): Q = a0 I + a1 A + a2 A^2 interpolating |x| at l1, l4 and
// chi = sgn(l1 + l4) max(|l2|, |l3|); D-/+ = (R4 -/+ Q v)/2 with v = (dh1, dq1n, dh2 - dH, dq2n)
// (at-rest well-balanced variant, section 6.3); tangential momenta upwinded with the layer mass
// flux (section 6.5).
fn ifcp(l: Rot, r: Rot, dhb: f32) -> Fluct {
    let a = roe_averages(l, r);
    var out: Fluct;
    out.lam = max(abs(a.un.x), abs(a.un.y));
    out.flags = 0u;
    if (a.hb.x + a.hb.y <= DRY_TOL) {
        return out;
    }
    let e = approx_eig(a);
    if (!e.hyperbolic) {
        out.flags = out.flags | FLAG_NONHYPERBOLIC;
    }
    let l1 = e.l.x;
    let l4 = e.l.w;
    var s_ext = 1.0;
    if (l1 + l4 != 0.0) {
        s_ext = sign(l1 + l4);
    }
    var chi = s_ext * max(abs(e.l.y), abs(e.l.z));
    let width = l4 - l1;
    if (!(chi > l1 && chi < l4)) {
        chi = min(max(chi, l1 + 1.0e-3 * width), l4 - 1.0e-3 * width);
        out.flags = out.flags | FLAG_CHI_CLAMPED;
    }
    let d1 = (abs(l4) - abs(l1)) / (l4 - l1);
    let d2 = ((abs(chi) - abs(l1)) / (chi - l1) - d1) / (chi - l4);
    let alpha2 = d2;
    let alpha1 = d1 - d2 * (l1 + l4);
    let alpha0 = abs(l1) - d1 * l1 + d2 * l1 * l4;

    let r4 = total_jump(l, r, dhb, a);
    let d = r.c - l.c;
    let v = vec4<f32>(d.x, d.y, d.z - dhb, d.w);
    let qv = alpha0 * v + apply_a(alpha1 * v + alpha2 * apply_a(v, a), a);
    out.dm = 0.5 * (r4 - qv);
    out.dp = 0.5 * (r4 + qv);
    out.lam = max(out.lam, max(abs(l1), abs(l4)));
    let vtl = l.t / vec2<f32>(desing(l.c.x), desing(l.c.z));
    let vtr = r.t / vec2<f32>(desing(r.c.x), desing(r.c.z));
    let qnl = vec2<f32>(l.c.y, l.c.w);
    let qnr = vec2<f32>(r.c.y, r.c.w);
    let g = qnl + vec2<f32>(out.dm.x, out.dm.z);
    let vt_star = select(vtr, vtl, g >= vec2<f32>(0.0));
    out.dmt = g * vt_star - qnl * vtl;
    out.dpt = qnr * vtr - g * vt_star;
    return out;
}

// A layer is (nearly) dry on either side: Roe schemes fall back to IFCP (section 10).
fn roe_needs_dry_fallback(l: Rot, r: Rot) -> bool {
    return min(min(l.c.x, r.c.x), min(l.c.z, r.c.z)) < DRY_TOL;
}

// Closed-form eigenvectors (section 5.2): a_p and the left vectors divided by N_p.
struct RoeVectors {
    ap: vec4<f32>,
    left: array<vec4<f32>, 4>,
}

fn roe_eigenvectors(a: RoeAverages, lam: vec4<f32>) -> RoeVectors {
    let r = DENSITY_RATIO;
    let u1 = a.un.x;
    let u2 = a.un.y;
    let c21 = a.c2.x;
    let c22 = a.c2.y;
    var out: RoeVectors;
    // #unroll
    for (var p = 0; p < 4; p = p + 1) {
        let l = lam[p];
        let ap = ((l - u1) * (l - u1) - c21) / c21;
        let np = 2.0 * r * c22 * (l - u1) + 2.0 * ap * ap * c21 * (l - u2);
        out.ap[p] = ap;
        out.left[p] = vec4<f32>(r * c22 * (l - 2.0 * u1), r * c22, ap * c21 * (l - 2.0 * u2), ap * c21) / np;
    }
    return out;
}

// IR-Roe (section 5): D- = sum_p (1 - sgn l_p)/2 beta_p v_p, D+ = R4 - D-; tangential momenta on
// the Roe shear waves (section 5.4). Falls back to IFCP on dry or non-hyperbolic edges.
fn ir_roe(l: Rot, r: Rot, dhb: f32) -> Fluct {
    if (roe_needs_dry_fallback(l, r)) {
        var f = ifcp(l, r, dhb);
        f.flags = f.flags | FLAG_FALLBACK;
        return f;
    }
    let a = roe_averages(l, r);
    let e = eig4(a.un.x, a.un.y, a.c2.x, a.c2.y);
    if (!e.hyperbolic) {
        var f = ifcp(l, r, dhb);
        f.flags = f.flags | FLAG_FALLBACK | FLAG_NONHYPERBOLIC;
        return f;
    }
    let r4 = total_jump(l, r, dhb, a);
    let vecs = roe_eigenvectors(a, e.l);
    var dm = vec4<f32>(0.0);
    // #unroll
    for (var p = 0; p < 4; p = p + 1) {
        let lp = e.l[p];
        let w = 0.5 * (1.0 - sign(lp)) * dot(vecs.left[p], r4);
        dm = dm + w * vec4<f32>(1.0, lp, vecs.ap[p], vecs.ap[p] * lp);
    }
    var out: Fluct;
    out.dm = dm;
    out.dp = r4 - dm;
    let dh = vec2<f32>(r.c.x - l.c.x, r.c.z - l.c.z);
    let shear = (r.t - l.t) - a.ut * dh;
    out.dmt = a.ut * vec2<f32>(out.dm.x, out.dm.z) + min(a.un, vec2<f32>(0.0)) * shear;
    out.dpt = a.ut * vec2<f32>(out.dp.x, out.dp.z) + max(a.un, vec2<f32>(0.0)) * shear;
    out.lam = max(max(abs(e.l.x), abs(e.l.w)), max(abs(a.un.x), abs(a.un.y)));
    out.flags = 0u;
    return out;
}

// A rotated 6-vector (h1, q1n, q1t, h2, q2n, q2t) in x-y components (also a row times T).
fn unrotate6(d: array<f32, 6>, nx: f32, ny: f32) -> array<f32, 6> {
    return array<f32, 6>(
        d[0], d[1] * nx - d[2] * ny, d[1] * ny + d[2] * nx,
        d[3], d[4] * nx - d[5] * ny, d[4] * ny + d[5] * nx,
    );
}

// Classical Roe (section 7): dense 6x6 Roe matrix A and S in the x-y frame, K and K^-1 in
// closed form, P- = K (I - sgn L) K^-1 / 2 formed and applied to A dW - S dH. Same numbers as
// IR-Roe in exact arithmetic. Returns x-y components in the Fluct fields
// (dm, dmt) = ((h1, q1x, h2, q2x), (q1y, q2y)).
fn classical_roe(l: Rot, r: Rot, dhb: f32, nx: f32, ny: f32) -> Fluct {
    if (roe_needs_dry_fallback(l, r)) {
        var f = ifcp(l, r, dhb);
        f.flags = f.flags | FLAG_FALLBACK;
        return fluct_to_xy(f, nx, ny);
    }
    let a = roe_averages(l, r);
    let e = eig4(a.un.x, a.un.y, a.c2.x, a.c2.y);
    if (!e.hyperbolic) {
        var f = ifcp(l, r, dhb);
        f.flags = f.flags | FLAG_FALLBACK | FLAG_NONHYPERBOLIC;
        return fluct_to_xy(f, nx, ny);
    }
    var amat: array<array<f32, 6>, 6>;
    var sbar: array<f32, 6>;
    // #unroll
    for (var k = 0; k < 2; k = k + 1) {
        let u = a.un[k] * nx - a.ut[k] * ny;
        let v = a.un[k] * ny + a.ut[k] * nx;
        let c2 = a.c2[k];
        amat[3 * k][3 * k + 1] = nx;
        amat[3 * k][3 * k + 2] = ny;
        amat[3 * k + 1][3 * k] = (c2 - u * u) * nx - u * v * ny;
        amat[3 * k + 1][3 * k + 1] = 2.0 * u * nx + v * ny;
        amat[3 * k + 1][3 * k + 2] = u * ny;
        amat[3 * k + 2][3 * k] = -u * v * nx + (c2 - v * v) * ny;
        amat[3 * k + 2][3 * k + 1] = v * nx;
        amat[3 * k + 2][3 * k + 2] = u * nx + 2.0 * v * ny;
        sbar[3 * k + 1] = GRAVITY * a.hb[k] * nx;
        sbar[3 * k + 2] = GRAVITY * a.hb[k] * ny;
    }
    amat[1][3] = amat[1][3] + GRAVITY * a.hb.x * nx;
    amat[2][3] = amat[2][3] + GRAVITY * a.hb.x * ny;
    amat[4][0] = amat[4][0] + DENSITY_RATIO * GRAVITY * a.hb.y * nx;
    amat[5][0] = amat[5][0] + DENSITY_RATIO * GRAVITY * a.hb.y * ny;

    let wl = unrotate6(array<f32, 6>(l.c.x, l.c.y, l.t.x, l.c.z, l.c.w, l.t.y), nx, ny);
    let wr = unrotate6(array<f32, 6>(r.c.x, r.c.y, r.t.x, r.c.z, r.c.w, r.t.y), nx, ny);
    var res: array<f32, 6>;
    // #unroll
    for (var row = 0; row < 6; row = row + 1) {
        var s = 0.0;
        // #unroll
        for (var c = 0; c < 6; c = c + 1) {
            s = s + amat[row][c] * (wr[c] - wl[c]);
        }
        res[row] = s - sbar[row] * dhb;
    }

    let vecs = roe_eigenvectors(a, e.l);
    var kmat: array<array<f32, 6>, 6>;
    var kinv: array<array<f32, 6>, 6>;
    var half: array<f32, 6>;
    // #unroll
    for (var p = 0; p < 4; p = p + 1) {
        let lp = e.l[p];
        let ap = vecs.ap[p];
        let col = unrotate6(array<f32, 6>(1.0, lp, a.ut.x, ap, ap * lp, ap * a.ut.y), nx, ny);
        // #unroll
        for (var row = 0; row < 6; row = row + 1) {
            kmat[row][p] = col[row];
        }
        let lf = vecs.left[p];
        kinv[p] = unrotate6(array<f32, 6>(lf.x, lf.y, 0.0, lf.z, lf.w, 0.0), nx, ny);
        half[p] = 0.5 * (1.0 - sign(lp));
    }
    let sh1 = unrotate6(array<f32, 6>(0.0, 0.0, 1.0, 0.0, 0.0, 0.0), nx, ny);
    let sh2 = unrotate6(array<f32, 6>(0.0, 0.0, 0.0, 0.0, 0.0, 1.0), nx, ny);
    // #unroll
    for (var row = 0; row < 6; row = row + 1) {
        kmat[row][4] = sh1[row];
        kmat[row][5] = sh2[row];
    }
    kinv[4] = unrotate6(array<f32, 6>(-a.ut.x, 0.0, 1.0, 0.0, 0.0, 0.0), nx, ny);
    kinv[5] = unrotate6(array<f32, 6>(0.0, 0.0, 0.0, -a.ut.y, 0.0, 1.0), nx, ny);
    half[4] = 0.5 * (1.0 - sign(a.un.x));
    half[5] = 0.5 * (1.0 - sign(a.un.y));

    var dm: array<f32, 6>;
    // #unroll
    for (var row = 0; row < 6; row = row + 1) {
        var s = 0.0;
        // #unroll
        for (var c = 0; c < 6; c = c + 1) {
            var pm = 0.0;
            // #unroll
            for (var p = 0; p < 6; p = p + 1) {
                pm = pm + kmat[row][p] * half[p] * kinv[p][c];
            }
            s = s + pm * res[c];
        }
        dm[row] = s;
    }
    var out: Fluct;
    out.dm = vec4<f32>(dm[0], dm[1], dm[3], dm[4]);
    out.dmt = vec2<f32>(dm[2], dm[5]);
    out.dp = vec4<f32>(res[0], res[1], res[3], res[4]) - out.dm;
    out.dpt = vec2<f32>(res[2], res[5]) - out.dmt;
    out.lam = max(max(abs(e.l.x), abs(e.l.w)), max(abs(a.un.x), abs(a.un.y)));
    out.flags = 0u;
    return out;
}

// Rotated-frame fluctuations to x-y components, in the layout classical_roe returns.
fn fluct_to_xy(f: Fluct, nx: f32, ny: f32) -> Fluct {
    var o = f;
    o.dm = vec4<f32>(f.dm.x, f.dm.y * nx - f.dmt.x * ny, f.dm.z, f.dm.w * nx - f.dmt.y * ny);
    o.dmt = vec2<f32>(f.dm.y * ny + f.dmt.x * nx, f.dm.w * ny + f.dmt.y * nx);
    o.dp = vec4<f32>(f.dp.x, f.dp.y * nx - f.dpt.x * ny, f.dp.z, f.dp.w * nx - f.dpt.y * ny);
    o.dpt = vec2<f32>(f.dp.y * ny + f.dpt.x * nx, f.dp.w * ny + f.dpt.y * nx);
    return o;
}

// The complete edge kernel (section 2.4) for left cell data (wl0, wl1) and the neighbour
// (wr0, wr1) (ignored unless kind == KIND_INTERIOR; boundary_state otherwise, with the edge's
// boundary value).
fn edge_contribution(wl0: vec4<f32>, wl1: vec4<f32>, wr0: vec4<f32>, wr1: vec4<f32>, kind: u32, nx: f32, ny: f32, value: f32) -> EdgeOut {
    let l = rotate_state(wl0, wl1, nx, ny);
    var r = l;
    var hr = wl1.z;
    if (kind == KIND_INTERIOR) {
        r = rotate_state(wr0, wr1, nx, ny);
        hr = wr1.z;
    } else {
        r = boundary_state(l, wl1.z, kind, value);
    }
    let dhb = hr - wl1.z;
    var f: Fluct;
    if (SCHEME == 0u) {
        f = fluct_to_xy(ifcp(l, r, dhb), nx, ny);
    } else if (SCHEME == 1u) {
        f = fluct_to_xy(ir_roe(l, r, dhb), nx, ny);
    } else {
        f = classical_roe(l, r, dhb, nx, ny);
    }
    // Mass rows in flux form: G_k = qn_k,L + D-[h_k]; exactly zero on walls (section 9).
    var g = vec2<f32>(l.c.y, l.c.w) + vec2<f32>(f.dm.x, f.dm.z);
    if (kind == KIND_WALL) {
        g = vec2<f32>(0.0);
    }
    var out: EdgeOut;
    out.left0 = vec4<f32>(g.x, f.dm.y, f.dmt.x, g.y);
    out.left1 = vec2<f32>(f.dm.w, f.dmt.y);
    out.right0 = vec4<f32>(-g.x, f.dp.y, f.dpt.x, -g.y);
    out.right1 = vec2<f32>(f.dp.w, f.dpt.y);
    out.lam = f.lam;
    out.flags = f.flags;
    return out;
}
