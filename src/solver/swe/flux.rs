//! The per-edge fluctuations of the three schemes in f64: the CPU reference of
//! `shaders/common/swe_flux.wgsl`, written to be read side by side with it.
//!
//! For an edge with unit normal η (pointing from the left cell L into the right cell R) the
//! states are rotated into the edge frame, w = T_η W = (h1, q1n, q1τ, h2, q2n, q2τ), and the
//! 1D normal problem ∂t w + ∂x F1(w) = B1(w) ∂x w + S1(w) ∂x H yields two fluctuations D⁻ (to L)
//! and D⁺ (to R) with the path-conservation identity (spec §2.2)
//!
//! D⁻ + D⁺ = F1(w_R) − F1(w_L) − B̄ (w_R − w_L) − S̄ (H_R − H_L).
//!
//! The 4 coupled rows (h1, q1n, h2, q2n) use the total jump R4 of spec §3.3 with the Roe
//! averages of §3.1; the tangential rows follow §5.4 (Roe schemes) or §6.5 (IFCP). Velocities
//! are desingularised (spec §10, Brodtkorb & Holm eq. 26) so dry layers give no NaN; the
//! desingularisation is the identity for h ≥ κ, so wet results are the plain formulas.

// Index loops over the 4 and 6 state components mirror the WGSL kernel line by line.
#![allow(clippy::needless_range_loop)]

use super::{Physics, Scheme};

/// Index of each component in a state vector W = (h1, q1x, q1y, h2, q2x, q2y).
pub const H1: usize = 0;
pub const H2: usize = 3;

/// Rotated state of one side of an edge: (h1, q1n, q1τ, h2, q2n, q2τ).
pub type Rotated = [f64; 6];

/// Desingularised depth of spec §10 eq. (26): h* = max(h, min(h²/(2κ) + κ/2, κ)) for h ≥ 0,
/// which equals h for h ≥ κ and is bounded below by κ/2, so u = q/h* never divides by zero.
pub fn desingularised_depth(h: f64, kappa: f64) -> f64 {
    if h >= kappa {
        h
    } else {
        h.max(h * h / (2.0 * kappa) + 0.5 * kappa)
    }
}

/// Rotate a state into the edge frame: q_n = q·η, q_τ = q·τ with τ = (−η_y, η_x).
pub fn rotate(w: &[f64; 6], nx: f64, ny: f64) -> Rotated {
    [
        w[0],
        w[1] * nx + w[2] * ny,
        -w[1] * ny + w[2] * nx,
        w[3],
        w[4] * nx + w[5] * ny,
        -w[4] * ny + w[5] * nx,
    ]
}

/// Inverse of [`rotate`]: x = n η_x − t η_y, y = n η_y + t η_x per layer.
pub fn unrotate(d: &Rotated, nx: f64, ny: f64) -> [f64; 6] {
    [
        d[0],
        d[1] * nx - d[2] * ny,
        d[1] * ny + d[2] * nx,
        d[3],
        d[4] * nx - d[5] * ny,
        d[4] * ny + d[5] * nx,
    ]
}

/// Mirror ghost of a wall (spec §9): same depths, normal momenta negated, tangential kept.
pub fn wall_ghost(w: &Rotated) -> Rotated {
    [w[0], -w[1], w[2], w[3], -w[4], w[5]]
}

/// Roe-averaged quantities of the normal problem on one edge (spec §3.1).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RoeAverages {
    /// hb_k = (h_k,L + h_k,R)/2.
    pub hb: [f64; 2],
    /// √h-weighted normal velocities un_k.
    pub un: [f64; 2],
    /// √h-weighted tangential velocities ut_k.
    pub ut: [f64; 2],
    /// c2_k = g hb_k.
    pub c2: [f64; 2],
}

/// Desingularised velocities (u_n, u_τ) of layer `k` (0 upper, 1 lower) of a rotated state.
pub fn layer_velocity(w: &Rotated, k: usize, kappa: f64) -> (f64, f64) {
    let hs = desingularised_depth(w[3 * k], kappa);
    (w[3 * k + 1] / hs, w[3 * k + 2] / hs)
}

/// Roe averages of spec §3.1 with desingularised velocities: un = (u_L √h_L + u_R √h_R) /
/// (√h_L + √h_R), which is (q_L/√h_L + q_R/√h_R)/(√h_L + √h_R) for wet states.
pub fn roe_averages(wl: &Rotated, wr: &Rotated, phys: &Physics) -> RoeAverages {
    let mut a = RoeAverages {
        hb: [0.0; 2],
        un: [0.0; 2],
        ut: [0.0; 2],
        c2: [0.0; 2],
    };
    for k in 0..2 {
        let (hl, hr) = (wl[3 * k], wr[3 * k]);
        let (sl, sr) = (hl.max(0.0).sqrt(), hr.max(0.0).sqrt());
        let (unl, utl) = layer_velocity(wl, k, phys.dry_tol);
        let (unr, utr) = layer_velocity(wr, k, phys.dry_tol);
        a.hb[k] = 0.5 * (hl + hr);
        let s = sl + sr;
        if s > 0.0 {
            a.un[k] = (unl * sl + unr * sr) / s;
            a.ut[k] = (utl * sl + utr * sr) / s;
        }
        a.c2[k] = phys.g * a.hb[k];
    }
    a
}

/// Total jump R4 = A Δw4 − S̄ ΔH of the coupled rows (h1, q1n, h2, q2n), spec §3.3.
pub fn total_jump(wl: &Rotated, wr: &Rotated, dhb: f64, a: &RoeAverages, r: f64) -> [f64; 4] {
    let dh1 = wr[0] - wl[0];
    let dq1 = wr[1] - wl[1];
    let dh2 = wr[3] - wl[3];
    let dq2 = wr[4] - wl[4];
    let (u1, u2) = (a.un[0], a.un[1]);
    let (c21, c22) = (a.c2[0], a.c2[1]);
    [
        dq1,
        (c21 - u1 * u1) * dh1 + 2.0 * u1 * dq1 + c21 * (dh2 - dhb),
        dq2,
        r * c22 * dh1 + (c22 - u2 * u2) * dh2 + 2.0 * u2 * dq2 - c22 * dhb,
    ]
}

/// The 4×4 Roe matrix A of spec §3.2 applied to v without forming it (spec §6.2).
pub fn apply_a(v: &[f64; 4], a: &RoeAverages, r: f64) -> [f64; 4] {
    let (u1, u2) = (a.un[0], a.un[1]);
    let (c21, c22) = (a.c2[0], a.c2[1]);
    [
        v[1],
        (c21 - u1 * u1) * v[0] + 2.0 * u1 * v[1] + c21 * v[2],
        v[3],
        r * c22 * v[0] + (c22 - u2 * u2) * v[2] + 2.0 * u2 * v[3],
    ]
}

/// Characteristic polynomial of A in factored form (spec §4.1) and its derivative:
/// p(λ) = [(λ−u1)² − c1²][(λ−u2)² − c2²] − r c1² c2².
pub fn char_poly(l: f64, u1: f64, u2: f64, c21: f64, c22: f64, r: f64) -> (f64, f64) {
    let a = (l - u1) * (l - u1) - c21;
    let b = (l - u2) * (l - u2) - c22;
    (
        a * b - r * c21 * c22,
        2.0 * (l - u1) * b + 2.0 * (l - u2) * a,
    )
}

/// Eigenvalues of A (ascending) and whether they are real and distinct.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Eigen4 {
    pub l: [f64; 4],
    /// True when the internal pair is real and distinct (deflated discriminant > 0).
    pub hyperbolic: bool,
}

/// Newton iterations of [`eig4`] per external root (spec §4.4: 6 covers r down to 0.1).
pub const EIG4_ITERATIONS: usize = 6;

/// Exact eigenvalues by the safeguarded-Newton route EIG4 of spec §4.4: external roots
/// bracketed by the bounds of §4.3 (λ4 ∈ (max_k(u_k+c_k), max_k u_k + c_e]), internal roots by
/// deflation of the monic quartic, polished by one Newton step.
pub fn eig4(u1: f64, u2: f64, c21: f64, c22: f64, r: f64) -> Eigen4 {
    let (c1, c2) = (c21.sqrt(), c22.sqrt());
    let ce = (c21 + c22).sqrt();
    let um = (u1 * c21 + u2 * c22) / (c21 + c22);
    let mu = 0.5 * ((c21 + c22) + ((c21 - c22) * (c21 - c22) + 4.0 * r * c21 * c22).sqrt());
    let cp = mu.sqrt();
    let mut lo4 = (u1 + c1).max(u2 + c2);
    let mut hi4 = u1.max(u2) + ce;
    let mut l4 = (um + cp).max(lo4).min(hi4);
    let mut lo1 = u1.min(u2) - ce;
    let mut hi1 = (u1 - c1).min(u2 - c2);
    let mut l1 = (um - cp).max(lo1).min(hi1);
    for _ in 0..EIG4_ITERATIONS {
        let (f, d) = char_poly(l4, u1, u2, c21, c22, r);
        if f > 0.0 {
            hi4 = l4;
        } else {
            lo4 = l4;
        }
        let n = l4 - f / d;
        l4 = if n >= lo4 && n <= hi4 {
            n
        } else {
            0.5 * (lo4 + hi4)
        };
        let (f, d) = char_poly(l1, u1, u2, c21, c22, r);
        if f > 0.0 {
            lo1 = l1;
        } else {
            hi1 = l1;
        }
        let n = l1 - f / d;
        l1 = if n >= lo1 && n <= hi1 {
            n
        } else {
            0.5 * (lo1 + hi1)
        };
    }
    let qa = -2.0 * (u1 + u2);
    let qb = (u1 * u1 - c21) + 4.0 * u1 * u2 + (u2 * u2 - c22);
    let s_sum = l1 + l4;
    let p_prod = l1 * l4;
    let s = qa + s_sum;
    let t = qb + s_sum * s - p_prod;
    let disc = 0.25 * s * s - t;
    let sq = disc.max(0.0).sqrt();
    let mut l2 = -0.5 * s - sq;
    let mut l3 = -0.5 * s + sq;
    for l in [&mut l2, &mut l3] {
        let (f, d) = char_poly(*l, u1, u2, c21, c22, r);
        let step = f / d;
        if step.abs() < 0.5 * sq {
            *l -= step;
        }
    }
    Eigen4 {
        l: [l1, l2, l3, l4],
        hyperbolic: disc > 0.0,
    }
}

/// Approximate eigenvalues for r → 1 (spec §4.2); `hyperbolic` is c_i² ≥ 0.
pub fn approx_eig(a: &RoeAverages, phys: &Physics) -> Eigen4 {
    let (h1, h2) = (a.hb[0], a.hb[1]);
    let (u1, u2) = (a.un[0], a.un[1]);
    let hs = h1 + h2;
    let um = (u1 * h1 + u2 * h2) / hs;
    let uc = (u1 * h2 + u2 * h1) / hs;
    let ce = (phys.g * hs).sqrt();
    let gp = (1.0 - phys.r) * phys.g;
    let du = u1 - u2;
    let ci2 = gp * h1 * h2 / hs * (1.0 - du * du / (gp * hs));
    let ci = ci2.max(0.0).sqrt();
    Eigen4 {
        l: [um - ce, uc - ci, uc + ci, um + ce],
        hyperbolic: ci2 >= 0.0,
    }
}

/// sgn with sgn(0) = 0 (spec §11: zero eigenvalues split half to each side).
pub fn sgn(x: f64) -> f64 {
    if x > 0.0 {
        1.0
    } else if x < 0.0 {
        -1.0
    } else {
        0.0
    }
}

/// Fluctuations of one edge in the rotated frame, plus the CFL speed and event flags.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct NormalFluctuations {
    /// D⁻ (to the left cell), rows (h1, q1n, q1τ, h2, q2n, q2τ).
    pub dm: Rotated,
    /// D⁺ (to the right cell).
    pub dp: Rotated,
    /// ‖D‖∞ = max(|λ1|, |λ4|, |un_1|, |un_2|) for the CFL condition (3).
    pub lam_max: f64,
    /// The (exact or approximate) internal eigenvalues were complex on this edge.
    pub nonhyperbolic: bool,
    /// A Roe scheme used the IFCP fluctuation here (non-hyperbolic or dry edge, spec §4.5, §10).
    pub fallback: bool,
    /// IFCP had to clamp χ_int into (λ1, λ4) (spec §6.1 guard).
    pub chi_clamped: bool,
}

/// PVM-IFCP (spec §6): Q = α0 I + α1 A + α2 A² with P(x) = α0 + α1 x + α2 x² interpolating |x|
/// at λ1, λ4 and χ_int = S_ext·max(|λ2|, |λ3|), S_ext = sgn(λ1 + λ4) (1 if zero);
/// D4∓ = ½ (R4 ∓ Q v) with v = (Δh1, Δq1n, Δh2 − ΔH, Δq2n) (the at-rest well-balanced
/// variant of §6.3); tangential rows by mass-flux upwinding (§6.5).
pub fn ifcp(wl: &Rotated, wr: &Rotated, dhb: f64, phys: &Physics) -> NormalFluctuations {
    let a = roe_averages(wl, wr, phys);
    let mut out = NormalFluctuations {
        lam_max: a.un[0].abs().max(a.un[1].abs()),
        ..Default::default()
    };
    if a.hb[0] + a.hb[1] <= phys.dry_tol {
        // Both layers dry along the edge: nothing moves (spec §6.1 "skip the edge").
        return out;
    }
    let e = approx_eig(&a, phys);
    out.nonhyperbolic = !e.hyperbolic;
    let [l1, l2, l3, l4] = e.l;
    let s_ext = if l1 + l4 != 0.0 { sgn(l1 + l4) } else { 1.0 };
    let mut chi = s_ext * l2.abs().max(l3.abs());
    let width = l4 - l1;
    if !(chi > l1 && chi < l4) {
        chi = chi.max(l1 + 1e-3 * width).min(l4 - 1e-3 * width);
        out.chi_clamped = true;
    }
    // Newton form of the interpolating parabola: P(x) = |λ1| + d1 (x−λ1) + d2 (x−λ1)(x−λ4).
    let d1 = (l4.abs() - l1.abs()) / (l4 - l1);
    let d2 = ((chi.abs() - l1.abs()) / (chi - l1) - d1) / (chi - l4);
    let alpha2 = d2;
    let alpha1 = d1 - d2 * (l1 + l4);
    let alpha0 = l1.abs() - d1 * l1 + d2 * l1 * l4;

    let r4 = total_jump(wl, wr, dhb, &a, phys.r);
    let v = [
        wr[0] - wl[0],
        wr[1] - wl[1],
        (wr[3] - wl[3]) - dhb,
        wr[4] - wl[4],
    ];
    let av = apply_a(&v, &a, phys.r);
    let inner = [
        alpha1 * v[0] + alpha2 * av[0],
        alpha1 * v[1] + alpha2 * av[1],
        alpha1 * v[2] + alpha2 * av[2],
        alpha1 * v[3] + alpha2 * av[3],
    ];
    let a_inner = apply_a(&inner, &a, phys.r);
    let mut d4m = [0.0; 4];
    let mut d4p = [0.0; 4];
    for c in 0..4 {
        let qv = alpha0 * v[c] + a_inner[c];
        d4m[c] = 0.5 * (r4[c] - qv);
        d4p[c] = 0.5 * (r4[c] + qv);
    }
    out.lam_max = out.lam_max.max(l1.abs()).max(l4.abs());
    let mut dm = [d4m[0], d4m[1], 0.0, d4m[2], d4m[3], 0.0];
    let mut dp = [d4p[0], d4p[1], 0.0, d4p[2], d4p[3], 0.0];
    for k in 0..2 {
        let (_, vtl) = layer_velocity(wl, k, phys.dry_tol);
        let (_, vtr) = layer_velocity(wr, k, phys.dry_tol);
        let qnl = wl[3 * k + 1];
        let qnr = wr[3 * k + 1];
        let g = qnl + dm[3 * k];
        let vt_star = if g >= 0.0 { vtl } else { vtr };
        dm[3 * k + 2] = g * vt_star - qnl * vtl;
        dp[3 * k + 2] = qnr * vtr - g * vt_star;
    }
    out.dm = dm;
    out.dp = dp;
    out
}

/// True when a Roe scheme may not be used on this edge: a layer is (nearly) dry on either side,
/// where a_p divides by c2_1 and N_p → 0 (spec §10), so the IFCP fluctuation is used instead.
fn roe_needs_dry_fallback(wl: &Rotated, wr: &Rotated, phys: &Physics) -> bool {
    wl[H1].min(wr[H1]).min(wl[H2]).min(wr[H2]) < phys.dry_tol
}

/// Wave strengths of IR-Roe (spec §5.2): right eigenvectors v_p = (1, λ_p, a_p, a_p λ_p) with
/// a_p = ((λ_p − un1)² − c2_1)/c2_1, scaled left eigenvectors
/// ℓ_p = (r c2_2 (λ_p − 2un1), r c2_2, a_p c2_1 (λ_p − 2un2), a_p c2_1), N_p = ℓ_p·v_p.
/// Returns (a_p, ℓ_p / N_p) for p = 1..4.
pub fn roe_eigenvectors(a: &RoeAverages, lam: &[f64; 4], r: f64) -> ([f64; 4], [[f64; 4]; 4]) {
    let (u1, u2) = (a.un[0], a.un[1]);
    let (c21, c22) = (a.c2[0], a.c2[1]);
    let mut ap = [0.0; 4];
    let mut left = [[0.0; 4]; 4];
    for p in 0..4 {
        let l = lam[p];
        let a_p = ((l - u1) * (l - u1) - c21) / c21;
        let n_p = 2.0 * r * c22 * (l - u1) + 2.0 * a_p * a_p * c21 * (l - u2);
        ap[p] = a_p;
        left[p] = [
            r * c22 * (l - 2.0 * u1) / n_p,
            r * c22 / n_p,
            a_p * c21 * (l - 2.0 * u2) / n_p,
            a_p * c21 / n_p,
        ];
    }
    (ap, left)
}

/// IR-Roe (spec §5): D4m = Σ_p ½(1 − sgn λ_p) β_p v_p, β_p = ℓ_p·R4/N_p, D4p = R4 − D4m,
/// eigenvalues by EIG4; tangential momenta on the Roe shear waves (§5.4):
/// `Dm_t = ut·D4m[h] + min(un, 0)(Δqτ − ut Δh)`, `Dp_t = ut·D4p[h] + max(un, 0)(Δqτ − ut Δh)`.
/// Falls back to [`ifcp`] on non-hyperbolic or dry edges (spec §4.5, §10).
pub fn ir_roe(wl: &Rotated, wr: &Rotated, dhb: f64, phys: &Physics) -> NormalFluctuations {
    if roe_needs_dry_fallback(wl, wr, phys) {
        return NormalFluctuations {
            fallback: true,
            ..ifcp(wl, wr, dhb, phys)
        };
    }
    let a = roe_averages(wl, wr, phys);
    let e = eig4(a.un[0], a.un[1], a.c2[0], a.c2[1], phys.r);
    if !e.hyperbolic {
        return NormalFluctuations {
            fallback: true,
            nonhyperbolic: true,
            ..ifcp(wl, wr, dhb, phys)
        };
    }
    let r4 = total_jump(wl, wr, dhb, &a, phys.r);
    let (ap, left) = roe_eigenvectors(&a, &e.l, phys.r);
    let mut d4m = [0.0; 4];
    for p in 0..4 {
        let l = e.l[p];
        let beta =
            left[p][0] * r4[0] + left[p][1] * r4[1] + left[p][2] * r4[2] + left[p][3] * r4[3];
        let w = 0.5 * (1.0 - sgn(l)) * beta;
        d4m[0] += w;
        d4m[1] += w * l;
        d4m[2] += w * ap[p];
        d4m[3] += w * ap[p] * l;
    }
    let d4p = [
        r4[0] - d4m[0],
        r4[1] - d4m[1],
        r4[2] - d4m[2],
        r4[3] - d4m[3],
    ];
    let mut dm = [d4m[0], d4m[1], 0.0, d4m[2], d4m[3], 0.0];
    let mut dp = [d4p[0], d4p[1], 0.0, d4p[2], d4p[3], 0.0];
    for k in 0..2 {
        let (un, ut) = (a.un[k], a.ut[k]);
        let shear = (wr[3 * k + 2] - wl[3 * k + 2]) - ut * (wr[3 * k] - wl[3 * k]);
        dm[3 * k + 2] = ut * dm[3 * k] + un.min(0.0) * shear;
        dp[3 * k + 2] = ut * dp[3 * k] + un.max(0.0) * shear;
    }
    NormalFluctuations {
        dm,
        dp,
        lam_max: e.l[0]
            .abs()
            .max(e.l[3].abs())
            .max(a.un[0].abs())
            .max(a.un[1].abs()),
        ..Default::default()
    }
}

/// Classical Roe (spec §7): the 6×6 Roe matrix A_η and S̄_η in the x-y frame, the eigenvector
/// matrix K (columns r_p = T⁻¹(1, λ_p, ut_1, a_p, a_p λ_p, a_p ut_2) and the two shear vectors)
/// and K⁻¹ in closed form, P⁻ = ½ K (I − sgn Λ) K⁻¹ formed as a matrix and applied to
/// A_η ΔW − S̄_η ΔH. Identical to IR-Roe in exact arithmetic (spec §7.2), but every product is a
/// dense 6×6 one, as in the paper's classical implementation. Inputs and outputs are in the
/// x-y frame. Same fallbacks as [`ir_roe`].
pub fn classical_roe(
    wl_xy: &[f64; 6],
    wr_xy: &[f64; 6],
    dhb: f64,
    nx: f64,
    ny: f64,
    phys: &Physics,
) -> ([f64; 6], [f64; 6], NormalFluctuations) {
    let wl = rotate(wl_xy, nx, ny);
    let wr = rotate(wr_xy, nx, ny);
    let fallback = |nonhyperbolic: bool| {
        let f = NormalFluctuations {
            fallback: true,
            nonhyperbolic,
            ..ifcp(&wl, &wr, dhb, phys)
        };
        (unrotate(&f.dm, nx, ny), unrotate(&f.dp, nx, ny), f)
    };
    if roe_needs_dry_fallback(&wl, &wr, phys) {
        return fallback(false);
    }
    let a = roe_averages(&wl, &wr, phys);
    let e = eig4(a.un[0], a.un[1], a.c2[0], a.c2[1], phys.r);
    if !e.hyperbolic {
        return fallback(true);
    }
    let g = phys.g;
    // Roe-averaged x-y velocities from the rotated averages: (ũ, ṽ) = un η + ut τ.
    let mut amat = [[0.0f64; 6]; 6];
    let mut sbar = [0.0f64; 6];
    for k in 0..2 {
        let (u, v) = (a.un[k] * nx - a.ut[k] * ny, a.un[k] * ny + a.ut[k] * nx);
        let c2 = a.c2[k];
        let o = 3 * k;
        amat[o][o + 1] = nx;
        amat[o][o + 2] = ny;
        amat[o + 1][o] = (c2 - u * u) * nx - u * v * ny;
        amat[o + 1][o + 1] = 2.0 * u * nx + v * ny;
        amat[o + 1][o + 2] = u * ny;
        amat[o + 2][o] = -u * v * nx + (c2 - v * v) * ny;
        amat[o + 2][o + 1] = v * nx;
        amat[o + 2][o + 2] = u * nx + 2.0 * v * ny;
        sbar[o + 1] = g * a.hb[k] * nx;
        sbar[o + 2] = g * a.hb[k] * ny;
    }
    amat[1][3] += g * a.hb[0] * nx;
    amat[2][3] += g * a.hb[0] * ny;
    amat[4][0] += phys.r * g * a.hb[1] * nx;
    amat[5][0] += phys.r * g * a.hb[1] * ny;

    let mut dw = [0.0; 6];
    for c in 0..6 {
        dw[c] = wr_xy[c] - wl_xy[c];
    }
    let mut res = [0.0; 6];
    for row in 0..6 {
        res[row] = (0..6).map(|c| amat[row][c] * dw[c]).sum::<f64>() - sbar[row] * dhb;
    }

    // Eigenvectors: K[:, p] for p < 4 from the rotated r_p; K[:, 4], K[:, 5] the shear vectors.
    let (ap, left) = roe_eigenvectors(&a, &e.l, phys.r);
    let mut kmat = [[0.0f64; 6]; 6];
    let mut kinv = [[0.0f64; 6]; 6];
    let lam6 = [e.l[0], e.l[1], e.l[2], e.l[3], a.un[0], a.un[1]];
    for p in 0..4 {
        let l = e.l[p];
        let rot = [1.0, l, a.ut[0], ap[p], ap[p] * l, ap[p] * a.ut[1]];
        let xy = unrotate(&rot, nx, ny);
        for row in 0..6 {
            kmat[row][p] = xy[row];
        }
        // Left row in rotated coordinates (τ slots 0), then times T: (a, b, c) ↦
        // (a, b η_x − c η_y, b η_y + c η_x) per layer.
        let lr = [left[p][0], left[p][1], 0.0, left[p][2], left[p][3], 0.0];
        kinv[p] = rotate_row(&lr, nx, ny);
    }
    let shear1 = unrotate(&[0.0, 0.0, 1.0, 0.0, 0.0, 0.0], nx, ny);
    let shear2 = unrotate(&[0.0, 0.0, 0.0, 0.0, 0.0, 1.0], nx, ny);
    for row in 0..6 {
        kmat[row][4] = shear1[row];
        kmat[row][5] = shear2[row];
    }
    kinv[4] = rotate_row(&[-a.ut[0], 0.0, 1.0, 0.0, 0.0, 0.0], nx, ny);
    kinv[5] = rotate_row(&[0.0, 0.0, 0.0, -a.ut[1], 0.0, 1.0], nx, ny);

    let mut pm = [[0.0f64; 6]; 6];
    for row in 0..6 {
        for col in 0..6 {
            pm[row][col] = (0..6)
                .map(|p| kmat[row][p] * 0.5 * (1.0 - sgn(lam6[p])) * kinv[p][col])
                .sum();
        }
    }
    let mut dm = [0.0; 6];
    let mut dp = [0.0; 6];
    for row in 0..6 {
        dm[row] = (0..6).map(|c| pm[row][c] * res[c]).sum();
        dp[row] = res[row] - dm[row];
    }
    let info = NormalFluctuations {
        dm: rotate(&dm, nx, ny),
        dp: rotate(&dp, nx, ny),
        lam_max: e.l[0]
            .abs()
            .max(e.l[3].abs())
            .max(a.un[0].abs())
            .max(a.un[1].abs()),
        ..Default::default()
    };
    (dm, dp, info)
}

/// A row vector given in rotated coordinates, expressed in x-y coordinates (row · T).
fn rotate_row(row: &[f64; 6], nx: f64, ny: f64) -> [f64; 6] {
    [
        row[0],
        row[1] * nx - row[2] * ny,
        row[1] * ny + row[2] * nx,
        row[3],
        row[4] * nx - row[5] * ny,
        row[4] * ny + row[5] * nx,
    ]
}

/// What the other side of an edge is.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Neighbor<'a> {
    /// An interior edge: the right cell's state and depth H.
    Cell(&'a [f64; 6], f64),
    /// Wall: mirror ghost with exactly zero mass flux (spec §9).
    Wall,
    /// Open / transmissive: ghost = copy of the left state (zero-gradient), so D⁻ = 0 and the
    /// mass flux is the left state's own normal flux.
    Open,
    /// Prescribed normal discharge per unit length q_b (m² s⁻¹, along the outward normal:
    /// negative flows in), ghost by [`driven_ghost`].
    Discharge(f64),
    /// Prescribed free-surface elevation η_b (m above the reference level), ghost by
    /// [`driven_ghost`].
    Elevation(f64),
}

/// Newton–bisection iterations of the discharge boundary's cubic (bracket [R/3, R/2 + ∛(|q|g/2)]).
pub const DISCHARGE_ITERATIONS: usize = 24;

/// The barotropic boundary state (h_b, u_b) of a driven boundary from the interior total depth
/// h = h1 + h2 and normal velocity u = (q1n + q2n)/h (u = 0 when h ≤ κ), by the characteristic
/// treatment of the external mode: the outgoing Riemann invariant R = u + 2√(gh) is carried
/// from the interior, the incoming one is replaced by the prescribed value:
///
/// - elevation η_b: h_b = max(η_b + H, 0), u_b = R − 2√(g h_b); a dry interior (h ≤ κ) has no
///   outgoing invariant and sees a reservoir at rest at the prescribed level (u_b = 0), so the
///   Riemann problem gives the dry-bed dam-break inflow;
/// - discharge q_b (outward): h_b u_b = q_b with u_b = R − 2c_b, c_b = √(g h_b), i.e. the
///   cubic p(c) = 2c³ − R c² + q_b g = 0 on its subcritical branch c ≥ R/3; when it has no root
///   there (an outflow larger than the interior can carry), c_b = max(R/3, 0), critical flow.
///
/// Returns None for supercritical outflow (u ≥ √(gh)): every characteristic leaves the domain,
/// nothing is prescribed and the ghost is the interior state.
pub fn barotropic_boundary(
    h: f64,
    qn: f64,
    hh: f64,
    kind: Neighbor<'_>,
    phys: &Physics,
) -> Option<(f64, f64)> {
    let g = phys.g;
    let u = if h > phys.dry_tol { qn / h } else { 0.0 };
    let ci = (g * h.max(0.0)).sqrt();
    if h > phys.dry_tol && u >= ci {
        return None;
    }
    let r_out = u + 2.0 * ci;
    let wet = h > phys.dry_tol;
    let cb = match kind {
        Neighbor::Elevation(eta) if !wet => {
            let hb = (eta + hh).max(0.0);
            return Some((hb, 0.0));
        }
        Neighbor::Elevation(eta) => (g * (eta + hh).max(0.0)).sqrt(),
        Neighbor::Discharge(q) => {
            let p = |c: f64| {
                (
                    2.0 * c * c * c - r_out * c * c + q * g,
                    6.0 * c * c - 2.0 * r_out * c,
                )
            };
            let mut lo = (r_out / 3.0).max(0.0);
            let mut hi = 0.5 * r_out.max(0.0) + (0.5 * q.abs() * g).cbrt();
            if p(lo).0 >= 0.0 {
                lo
            } else {
                let mut c = ci.max(lo).min(hi);
                for _ in 0..DISCHARGE_ITERATIONS {
                    let (f, d) = p(c);
                    if f > 0.0 {
                        hi = c;
                    } else {
                        lo = c;
                    }
                    let n = c - f / d;
                    c = if n >= lo && n <= hi {
                        n
                    } else {
                        0.5 * (lo + hi)
                    };
                }
                c
            }
        }
        _ => return None,
    };
    Some((cb * cb / g, r_out - 2.0 * cb))
}

/// Ghost state of a driven boundary (prescribed discharge or elevation) in the edge frame: the
/// barotropic (h_b, u_b) of [`barotropic_boundary`] split into the layers in the interior's
/// proportions, s = h_b/h: h_k,b = s h_k, q_kn,b = s q_kn + h_k,b (u_b − u) (every layer's
/// velocity shifted by the same amount, so the interior's shear passes and Σ q_kn,b = h_b u_b),
/// q_kτ,b = s q_kτ (tangential velocities kept). A dry interior (h ≤ κ) gets all of h_b in the
/// lower layer. The depth H of the ghost is the interior's, so a lake at rest at the prescribed
/// level sees a ghost equal to itself and stays at rest.
pub fn driven_ghost(wl: &Rotated, hl: f64, kind: Neighbor<'_>, phys: &Physics) -> Rotated {
    let h = wl[H1] + wl[H2];
    let qn = wl[1] + wl[4];
    let Some((hb, ub)) = barotropic_boundary(h, qn, hl, kind, phys) else {
        return *wl;
    };
    let wet = h > phys.dry_tol;
    let (s, u) = if wet { (hb / h, qn / h) } else { (0.0, 0.0) };
    let (h1, h2) = if wet {
        (s * wl[H1], s * wl[H2])
    } else {
        (0.0, hb)
    };
    let du = ub - u;
    [
        h1,
        s * wl[1] + h1 * du,
        s * wl[2],
        h2,
        s * wl[4] + h2 * du,
        s * wl[5],
    ]
}

/// Contributions of one edge to its two cells' accumulators, in the x-y frame, per unit edge
/// length: cell L is updated by W_L −= Δt/|V_L|·|Γ|·`left`, cell R by W_R −= Δt/|V_R|·|Γ|·`right`.
/// The mass rows are in flux form (spec §2.2): `left[h_k] = G_k = qn_k,L + D⁻[h_k]` and
/// `right[h_k] = −G_k`, so each edge's mass contributions cancel exactly.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct EdgeContribution {
    pub left: [f64; 6],
    pub right: [f64; 6],
    pub lam_max: f64,
    pub nonhyperbolic: bool,
    pub fallback: bool,
    pub chi_clamped: bool,
}

/// The complete edge kernel (spec §2.4) for one edge with unit normal (nx, ny) from L to R.
pub fn edge_contribution(
    wl_xy: &[f64; 6],
    hl: f64,
    neighbor: Neighbor<'_>,
    nx: f64,
    ny: f64,
    scheme: Scheme,
    phys: &Physics,
) -> EdgeContribution {
    let wl = rotate(wl_xy, nx, ny);
    let (wr, hr) = match neighbor {
        Neighbor::Cell(w, h) => (rotate(w, nx, ny), h),
        Neighbor::Wall => (wall_ghost(&wl), hl),
        Neighbor::Open => (wl, hl),
        Neighbor::Discharge(_) | Neighbor::Elevation(_) => {
            (driven_ghost(&wl, hl, neighbor, phys), hl)
        }
    };
    let dhb = hr - hl;
    let (mut dm_xy, mut dp_xy, f) = match scheme {
        Scheme::PvmIfcp => {
            let f = ifcp(&wl, &wr, dhb, phys);
            (unrotate(&f.dm, nx, ny), unrotate(&f.dp, nx, ny), f)
        }
        Scheme::IrRoe => {
            let f = ir_roe(&wl, &wr, dhb, phys);
            (unrotate(&f.dm, nx, ny), unrotate(&f.dp, nx, ny), f)
        }
        Scheme::Roe => {
            let wr_xy = unrotate(&wr, nx, ny);
            classical_roe(wl_xy, &wr_xy, dhb, nx, ny, phys)
        }
    };
    for k in [H1, H2] {
        let g = if matches!(neighbor, Neighbor::Wall) {
            0.0
        } else {
            wl[k + 1] + f.dm[k]
        };
        dm_xy[k] = g;
        dp_xy[k] = -g;
    }
    EdgeContribution {
        left: dm_xy,
        right: dp_xy,
        lam_max: f.lam_max,
        nonhyperbolic: f.nonhyperbolic,
        fallback: f.fallback,
        chi_clamped: f.chi_clamped,
    }
}

#[cfg(test)]
mod tests {
    //! Spec §13.7: unit tests of the building blocks on seeded random states.
    use super::*;
    use rand::{Rng, SeedableRng};

    fn random_state(rng: &mut rand_chacha::ChaCha8Rng, r: f64) -> (Rotated, Rotated, f64) {
        loop {
            let mut side = || -> Rotated {
                let (h1, h2) = (rng.random_range(0.2..5.0), rng.random_range(0.2..5.0));
                [
                    h1,
                    h1 * rng.random_range(-1.0..1.0),
                    h1 * rng.random_range(-1.0..1.0),
                    h2,
                    h2 * rng.random_range(-1.0..1.0),
                    h2 * rng.random_range(-1.0..1.0),
                ]
            };
            let (l, rr) = (side(), side());
            let dh = rng.random_range(-0.5..0.5);
            let phys = Physics {
                r,
                ..Physics::default()
            };
            let a = roe_averages(&l, &rr, &phys);
            if eig4(a.un[0], a.un[1], a.c2[0], a.c2[1], r).hyperbolic {
                return (l, rr, dh);
            }
        }
    }

    fn rng() -> rand_chacha::ChaCha8Rng {
        rand_chacha::ChaCha8Rng::seed_from_u64(7)
    }

    #[test]
    fn eig4_roots_are_ordered_roots_within_the_bounds() {
        let mut g = rng();
        for r in [0.5, 0.8, 0.98, 0.999] {
            let phys = Physics {
                r,
                ..Physics::default()
            };
            for _ in 0..2000 {
                let (l, rr, _) = random_state(&mut g, r);
                let a = roe_averages(&l, &rr, &phys);
                let (u1, u2, c21, c22) = (a.un[0], a.un[1], a.c2[0], a.c2[1]);
                let e = eig4(u1, u2, c21, c22, r);
                let scale = (u1.abs().max(u2.abs()) + (c21 + c22).sqrt()).powi(4);
                for w in e.l.windows(2) {
                    assert!(w[0] <= w[1], "{:?}", e.l);
                }
                for &lam in &e.l {
                    let (p, _) = char_poly(lam, u1, u2, c21, c22, r);
                    assert!(p.abs() <= 1e-9 * scale, "r {r}: p({lam}) = {p:e}");
                }
                let bound = u1.abs().max(u2.abs()) + (c21 + c22).sqrt();
                assert!(e.l[0].abs().max(e.l[3].abs()) <= bound * (1.0 + 1e-12));
            }
        }
    }

    #[test]
    fn eigenvectors_are_biorthonormal() {
        let mut g = rng();
        for r in [0.5, 0.98] {
            let phys = Physics {
                r,
                ..Physics::default()
            };
            for _ in 0..500 {
                let (l, rr, _) = random_state(&mut g, r);
                let a = roe_averages(&l, &rr, &phys);
                let e = eig4(a.un[0], a.un[1], a.c2[0], a.c2[1], r);
                let (ap, left) = roe_eigenvectors(&a, &e.l, r);
                for p in 0..4 {
                    for q in 0..4 {
                        let v = [1.0, e.l[q], ap[q], ap[q] * e.l[q]];
                        let d: f64 = (0..4).map(|i| left[p][i] * v[i]).sum();
                        let want = if p == q { 1.0 } else { 0.0 };
                        assert!((d - want).abs() < 1e-8, "r {r}: l{p}.v{q} = {d}");
                    }
                }
            }
        }
    }

    #[test]
    fn fluctuations_sum_to_the_total_jump_and_vanish_for_equal_states() {
        let mut g = rng();
        for r in [0.5, 0.98] {
            let phys = Physics {
                r,
                ..Physics::default()
            };
            for _ in 0..500 {
                let (l, rr, dh) = random_state(&mut g, r);
                let a = roe_averages(&l, &rr, &phys);
                let r4 = total_jump(&l, &rr, dh, &a, r);
                for f in [ifcp(&l, &rr, dh, &phys), ir_roe(&l, &rr, dh, &phys)] {
                    for (c, row) in [0, 1, 3, 4].into_iter().enumerate() {
                        let s = f.dm[row] + f.dp[row];
                        assert!((s - r4[c]).abs() <= 1e-10 * (1.0 + r4[c].abs()));
                    }
                }
                for f in [ifcp(&l, &l, 0.0, &phys), ir_roe(&l, &l, 0.0, &phys)] {
                    assert!(f.dm.iter().chain(&f.dp).all(|x| x.abs() < 1e-12), "{f:?}");
                }
            }
        }
    }

    #[test]
    fn reflection_identity_gives_the_right_cell_contribution() {
        // D⁻(M w_R, M w_L, H_R, H_L) = M D⁺(w_L, w_R, H_L, H_R), M = diag(1,−1,−1,1,−1,−1).
        let mirror = |w: &Rotated| [w[0], -w[1], -w[2], w[3], -w[4], -w[5]];
        let mut g = rng();
        let phys = Physics {
            r: 0.7,
            ..Physics::default()
        };
        for _ in 0..500 {
            let (l, rr, dh) = random_state(&mut g, phys.r);
            for scheme in [ifcp, ir_roe] {
                let fwd = scheme(&l, &rr, dh, &phys);
                let rev = scheme(&mirror(&rr), &mirror(&l), -dh, &phys);
                let m = mirror(&fwd.dp);
                for k in 0..6 {
                    assert!(
                        (rev.dm[k] - m[k]).abs() <= 1e-10 * (1.0 + m[k].abs()),
                        "{k}"
                    );
                }
            }
        }
    }

    #[test]
    fn ir_roe_equals_classical_roe() {
        let mut g = rng();
        for r in [0.5, 0.98] {
            let phys = Physics {
                r,
                ..Physics::default()
            };
            for _ in 0..500 {
                let (l, rr, dh) = random_state(&mut g, r);
                let ang: f64 = g.random_range(0.0..std::f64::consts::TAU);
                let (nx, ny) = (ang.cos(), ang.sin());
                let (wl, wr) = (unrotate(&l, nx, ny), unrotate(&rr, nx, ny));
                let ir = ir_roe(&l, &rr, dh, &phys);
                let (dm, dp, _) = classical_roe(&wl, &wr, dh, nx, ny, &phys);
                let (irm, irp) = (unrotate(&ir.dm, nx, ny), unrotate(&ir.dp, nx, ny));
                for k in 0..6 {
                    assert!((dm[k] - irm[k]).abs() < 1e-9 * (1.0 + irm[k].abs()));
                    assert!((dp[k] - irp[k]).abs() < 1e-9 * (1.0 + irp[k].abs()));
                }
            }
        }
    }

    #[test]
    fn dry_layers_give_finite_fluctuations_and_roe_falls_back() {
        let phys = Physics {
            r: 0.5,
            ..Physics::default()
        };
        let l = [0.0, 0.0, 0.0, 1.0, 0.3, 0.1];
        let rr = [1e-7, 1e-6, -1e-6, 0.8, -0.2, 0.0];
        for scheme in Scheme::ALL {
            let out = edge_contribution(
                &unrotate(&l, 1.0, 0.0),
                0.5,
                Neighbor::Cell(&unrotate(&rr, 1.0, 0.0), 0.4),
                1.0,
                0.0,
                scheme,
                &phys,
            );
            assert!(
                out.left.iter().chain(&out.right).all(|x| x.is_finite()),
                "{scheme}"
            );
            assert!(out.lam_max.is_finite());
            assert_eq!(out.fallback, scheme != Scheme::PvmIfcp, "{scheme}");
        }
        let dry = [0.0; 6];
        let out = edge_contribution(
            &dry,
            1.0,
            Neighbor::Cell(&dry, 1.0),
            0.6,
            0.8,
            Scheme::PvmIfcp,
            &phys,
        );
        assert!(out.left.iter().all(|x| *x == 0.0));
    }

    #[test]
    fn wall_mass_flux_is_exactly_zero() {
        let phys = Physics {
            r: 0.5,
            ..Physics::default()
        };
        let w = [1.3, 0.4, -0.2, 2.0, -0.7, 0.3];
        for scheme in Scheme::ALL {
            let out = edge_contribution(&w, 2.0, Neighbor::Wall, 0.6, 0.8, scheme, &phys);
            assert_eq!(out.left[H1], 0.0);
            assert_eq!(out.left[H2], 0.0);
        }
    }
}
