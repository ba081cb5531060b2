//! The 2D Euler equations and the numerical fluxes (f64 reference of
//! `shaders/common/dg_euler.wgsl`).
//!
//! U = (rho, rho u, rho v, E), F(U) = (rho u, rho u^2 + p, rho u v, (E + p) u),
//! G(U) = (rho v, rho u v, rho v^2 + p, (E + p) v), p = (gamma - 1)(E - rho |u|^2 / 2).

/// Adiabatic index of air.
pub const GAMMA: f64 = 1.4;

/// Conserved state.
pub type State = [f64; 4];

/// Numerical flux at element interfaces.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, clap::ValueEnum, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum NumericalFlux {
    /// Local Lax–Friedrichs: F* = (F_L + F_R) . n / 2 - lambda_max (U_R - U_L) / 2.
    #[default]
    Rusanov,
    /// Toro's HLLC with Davis/Einfeldt wave-speed estimates.
    Hllc,
}

impl NumericalFlux {
    /// The id baked into the kernels (`FLUX` override constant).
    pub fn id(self) -> u32 {
        match self {
            NumericalFlux::Rusanov => 0,
            NumericalFlux::Hllc => 1,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            NumericalFlux::Rusanov => "rusanov",
            NumericalFlux::Hllc => "hllc",
        }
    }
}

/// Pressure p = (gamma - 1)(E - (m_x^2 + m_y^2) / (2 rho)).
pub fn pressure(u: &State) -> f64 {
    (GAMMA - 1.0) * (u[3] - 0.5 * (u[1] * u[1] + u[2] * u[2]) / u[0])
}

/// Conserved state from primitive (rho, u, v, p).
pub fn conserved(rho: f64, vx: f64, vy: f64, p: f64) -> State {
    [
        rho,
        rho * vx,
        rho * vy,
        p / (GAMMA - 1.0) + 0.5 * rho * (vx * vx + vy * vy),
    ]
}

/// Sound speed c = sqrt(gamma p / rho), with p clamped at 0 so it stays real.
pub fn sound_speed(u: &State) -> f64 {
    (GAMMA * pressure(u).max(0.0) / u[0]).sqrt()
}

/// Largest wave speed |u . n| + c (n unit).
pub fn max_speed(u: &State, n: [f64; 2]) -> f64 {
    ((u[1] * n[0] + u[2] * n[1]) / u[0]).abs() + sound_speed(u)
}

/// Physical fluxes (F, G).
pub fn flux(u: &State) -> (State, State) {
    let p = pressure(u);
    let (vx, vy) = (u[1] / u[0], u[2] / u[0]);
    (
        [u[1], u[1] * vx + p, u[2] * vx, (u[3] + p) * vx],
        [u[2], u[1] * vy, u[2] * vy + p, (u[3] + p) * vy],
    )
}

/// Normal flux F n_x + G n_y.
pub fn normal_flux(u: &State, n: [f64; 2]) -> State {
    let (f, g) = flux(u);
    std::array::from_fn(|i| f[i] * n[0] + g[i] * n[1])
}

/// Rusanov flux.
pub fn rusanov(ul: &State, ur: &State, n: [f64; 2]) -> State {
    let (fl, fr) = (normal_flux(ul, n), normal_flux(ur, n));
    let lam = max_speed(ul, n).max(max_speed(ur, n));
    std::array::from_fn(|i| 0.5 * (fl[i] + fr[i]) - 0.5 * lam * (ur[i] - ul[i]))
}

/// HLLC flux (Toro): wave speeds S_L = min(u_L - c_L, u_R - c_R), S_R = max(u_L + c_L,
/// u_R + c_R), contact speed
/// S* = (p_R - p_L + rho_L u_L (S_L - u_L) - rho_R u_R (S_R - u_R))
///      / (rho_L (S_L - u_L) - rho_R (S_R - u_R)),
/// star states U*_K = rho_K (S_K - u_K)/(S_K - S*) (1, S* n + u_K^t, E_K/rho_K +
/// (S* - u_K)(S* + p_K / (rho_K (S_K - u_K)))), with u the normal and u^t the tangential velocity.
pub fn hllc(ul: &State, ur: &State, n: [f64; 2]) -> State {
    let (pl, pr) = (pressure(ul), pressure(ur));
    let (unl, unr) = (
        (ul[1] * n[0] + ul[2] * n[1]) / ul[0],
        (ur[1] * n[0] + ur[2] * n[1]) / ur[0],
    );
    let (cl, cr) = (sound_speed(ul), sound_speed(ur));
    let sl = (unl - cl).min(unr - cr);
    let sr = (unl + cl).max(unr + cr);
    let fl = normal_flux(ul, n);
    let fr = normal_flux(ur, n);
    if sl >= 0.0 {
        return fl;
    }
    if sr <= 0.0 {
        return fr;
    }
    let dl = ul[0] * (sl - unl);
    let dr = ur[0] * (sr - unr);
    let sm = (pr - pl + unl * dl - unr * dr) / (dl - dr);
    let star = |u: &State, p: f64, un: f64, s: f64| -> State {
        let fac = u[0] * (s - un) / (s - sm);
        let vt = [u[1] / u[0] - un * n[0], u[2] / u[0] - un * n[1]];
        [
            fac,
            fac * (sm * n[0] + vt[0]),
            fac * (sm * n[1] + vt[1]),
            fac * (u[3] / u[0] + (sm - un) * (sm + p / (u[0] * (s - un)))),
        ]
    };
    if sm >= 0.0 {
        let us = star(ul, pl, unl, sl);
        std::array::from_fn(|i| fl[i] + sl * (us[i] - ul[i]))
    } else {
        let us = star(ur, pr, unr, sr);
        std::array::from_fn(|i| fr[i] + sr * (us[i] - ur[i]))
    }
}

/// The chosen numerical flux.
pub fn numerical_flux(kind: NumericalFlux, ul: &State, ur: &State, n: [f64; 2]) -> State {
    match kind {
        NumericalFlux::Rusanov => rusanov(ul, ur, n),
        NumericalFlux::Hllc => hllc(ul, ur, n),
    }
}

/// The change of the primitive variables from a state u (velocity v = m / rho) to u + du, from
/// du alone (the deviation form of the kernels, issue 13):
/// dv = (dm - v drho) / (rho + drho), v1 = v + dv, dp = (gamma - 1)(dE - (dm . v1 + m . dv) / 2).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PrimitiveChange {
    pub dv: [f64; 2],
    /// The velocity of u + du.
    pub v1: [f64; 2],
    pub dp: f64,
}

/// [`PrimitiveChange`] from u, its velocity v and the deviation du.
pub fn primitive_change(u: &State, v: [f64; 2], du: &State) -> PrimitiveChange {
    let r1 = u[0] + du[0];
    let dv = [(du[1] - v[0] * du[0]) / r1, (du[2] - v[1] * du[0]) / r1];
    let v1 = [v[0] + dv[0], v[1] + dv[1]];
    let dp = (GAMMA - 1.0)
        * (du[3] - 0.5 * ((du[1] * v1[0] + du[2] * v1[1]) + (u[1] * dv[0] + u[2] * dv[1])));
    PrimitiveChange { dv, v1, dp }
}

/// The normal flux's change F(u + du) . n - F(u) . n from du, for u with pressure p and the
/// change c = [`primitive_change`]: (dm . n, dm u1_n + m dv_n + dp n, (dE + dp) u1_n +
/// (E + p) dv_n), where u1_n = v1 . n and dv_n = dv . n. Its rounding scales with |du|, where
/// normal_flux(u + du) - normal_flux(u) rounds at |F|.
pub fn normal_flux_change(
    u: &State,
    p: f64,
    c: &PrimitiveChange,
    du: &State,
    n: [f64; 2],
) -> State {
    let un1 = c.v1[0] * n[0] + c.v1[1] * n[1];
    let dun = c.dv[0] * n[0] + c.dv[1] * n[1];
    [
        du[1] * n[0] + du[2] * n[1],
        du[1] * un1 + u[1] * dun + c.dp * n[0],
        du[2] * un1 + u[2] * dun + c.dp * n[1],
        (du[3] + c.dp) * un1 + (u[3] + p) * dun,
    ]
}

/// The physical fluxes' change (F(u + du) - F(u), G(u + du) - G(u)) from du (the volume
/// kernel's form of [`normal_flux_change`] for n = x and y), for u with pressure p.
pub fn flux_change(u: &State, p: f64, c: &PrimitiveChange, du: &State) -> (State, State) {
    let dh = du[3] + c.dp;
    let h = u[3] + p;
    (
        [
            du[1],
            du[1] * c.v1[0] + u[1] * c.dv[0] + c.dp,
            du[2] * c.v1[0] + u[2] * c.dv[0],
            dh * c.v1[0] + h * c.dv[0],
        ],
        [
            du[2],
            du[1] * c.v1[1] + u[1] * c.dv[1],
            du[2] * c.v1[1] + u[2] * c.dv[1] + c.dp,
            dh * c.v1[1] + h * c.dv[1],
        ],
    )
}

/// U*_K - U_K of [`hllc`]'s star state from d = S* - u_n alone: with fac - rho = rho d / (S - S*)
/// and Y = S* + p / (rho (S - u_n)), (fac - rho)(1, S* n + u_t, E / rho + d Y) + rho d (0, n, Y).
#[allow(clippy::too_many_arguments)]
fn hllc_star_change(
    u: &State,
    p: f64,
    v: [f64; 2],
    un: f64,
    s: f64,
    sm: f64,
    d: f64,
    n: [f64; 2],
) -> State {
    let dfac = u[0] * d / (s - sm);
    let vt = [v[0] - un * n[0], v[1] - un * n[1]];
    let y = sm + p / (u[0] * (s - un));
    let rd = u[0] * d;
    [
        dfac,
        dfac * (sm * n[0] + vt[0]) + rd * n[0],
        dfac * (sm * n[1] + vt[1]) + rd * n[1],
        dfac * (u[3] / u[0] + d * y) + rd * y,
    ]
}

/// F*(ul, ul + du) - F(ul) . n: the numerical flux's departure from the left state's normal
/// flux, computed from the jump du so that it vanishes with du in any precision (the kernels'
/// `numerical_flux_change`). Rusanov: (F(ur) - F(ul)) . n / 2 - lambda du / 2. HLLC: the star
/// states' departures with S* - u_nL = (dp - du_n rho_R (S_R - u_nR)) / (d_L - d_R) and
/// S* - u_nR = (dp - du_n rho_L (S_L - u_nL)) / (d_L - d_R), d_K = rho_K (S_K - u_nK).
pub fn numerical_flux_change(kind: NumericalFlux, ul: &State, du: &State, n: [f64; 2]) -> State {
    let ur: State = std::array::from_fn(|i| ul[i] + du[i]);
    let pl = pressure(ul);
    let vl = [ul[1] / ul[0], ul[2] / ul[0]];
    let c = primitive_change(ul, vl, du);
    let unl = vl[0] * n[0] + vl[1] * n[1];
    let unr = c.v1[0] * n[0] + c.v1[1] * n[1];
    let pr = pl + c.dp;
    let cl = (GAMMA * pl.max(0.0) / ul[0]).sqrt();
    let cr = (GAMMA * pr.max(0.0) / ur[0]).sqrt();
    let df = normal_flux_change(ul, pl, &c, du, n);
    if kind == NumericalFlux::Rusanov {
        let lam = (unl.abs() + cl).max(unr.abs() + cr);
        return std::array::from_fn(|i| 0.5 * df[i] - 0.5 * lam * du[i]);
    }
    let sl = (unl - cl).min(unr - cr);
    let sr = (unl + cl).max(unr + cr);
    if sl >= 0.0 {
        return [0.0; 4];
    }
    if sr <= 0.0 {
        return df;
    }
    let dun = c.dv[0] * n[0] + c.dv[1] * n[1];
    let dl = ul[0] * (sl - unl);
    let dr = ur[0] * (sr - unr);
    let dsl = (c.dp - dun * dr) / (dl - dr);
    let sm = unl + dsl;
    if sm >= 0.0 {
        let s = hllc_star_change(ul, pl, vl, unl, sl, sm, dsl, n);
        return s.map(|v| sl * v);
    }
    let dsr = (c.dp - dun * dl) / (dl - dr);
    let s = hllc_star_change(&ur, pr, c.v1, unr, sr, sm, dsr, n);
    std::array::from_fn(|i| df[i] + sr * s[i])
}

/// Reflecting-wall ghost state: the normal momentum reversed, m_g = m - 2 (m . n) n.
pub fn wall_ghost(u: &State, n: [f64; 2]) -> State {
    let mn = u[1] * n[0] + u[2] * n[1];
    [u[0], u[1] - 2.0 * mn * n[0], u[2] - 2.0 * mn * n[1], u[3]]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fluxes_are_consistent_and_hllc_resolves_contacts() {
        let u = conserved(1.3, 0.4, -0.2, 2.0);
        for n in [[1.0, 0.0], [0.6, 0.8]] {
            let f = normal_flux(&u, n);
            for kind in [NumericalFlux::Rusanov, NumericalFlux::Hllc] {
                let g = numerical_flux(kind, &u, &u, n);
                for i in 0..4 {
                    assert!((f[i] - g[i]).abs() < 1e-12);
                }
            }
        }
        // Stationary contact: HLLC gives the exact (pressure-only) flux, Rusanov diffuses.
        let (a, b) = (conserved(1.0, 0.0, 0.0, 1.0), conserved(0.1, 0.0, 0.0, 1.0));
        let h = hllc(&a, &b, [1.0, 0.0]);
        assert!(h[0].abs() < 1e-14 && (h[1] - 1.0).abs() < 1e-14 && h[3].abs() < 1e-14);
        assert!(rusanov(&a, &b, [1.0, 0.0])[0] > 0.1);
    }

    /// The deviation forms are the full fluxes' differences (f64, so to rounding), in every
    /// branch of HLLC (supersonic either way, contact moving either way) and for Rusanov.
    #[test]
    fn flux_changes_are_differences_of_fluxes() {
        let base = conserved(1.1, 0.3, -0.2, 0.9);
        let cases = [
            (base, conserved(0.7, -0.4, 0.5, 0.6)),
            (base, conserved(1.3, 0.6, 0.1, 1.4)),
            (
                conserved(1.0, 3.0, 0.2, 1.0),
                conserved(0.8, 2.8, -0.1, 0.7),
            ),
            (
                conserved(1.0, -3.0, 0.2, 1.0),
                conserved(0.8, -2.7, 0.3, 0.9),
            ),
            // At rest, the higher pressure pushes the contact right (S* > 0), then left.
            (conserved(1.0, 0.0, 0.0, 2.0), conserved(0.9, 0.0, 0.0, 1.0)),
            (conserved(0.9, 0.0, 0.0, 1.0), conserved(1.0, 0.0, 0.0, 2.0)),
        ];
        for (ul, ur) in cases {
            let du: State = std::array::from_fn(|i| ur[i] - ul[i]);
            let (pl, vl) = (pressure(&ul), [ul[1] / ul[0], ul[2] / ul[0]]);
            let c = primitive_change(&ul, vl, &du);
            let (fl, gl) = flux(&ul);
            let (fr, gr) = flux(&ur);
            let (df, dg) = flux_change(&ul, pl, &c, &du);
            for n in [[1.0, 0.0], [0.6, -0.8], [-0.28, 0.96]] {
                let dn = normal_flux_change(&ul, pl, &c, &du, n);
                let (nl, nr) = (normal_flux(&ul, n), normal_flux(&ur, n));
                for kind in [NumericalFlux::Rusanov, NumericalFlux::Hllc] {
                    let want = numerical_flux(kind, &ul, &ur, n);
                    let got = numerical_flux_change(kind, &ul, &du, n);
                    for i in 0..4 {
                        assert!((nl[i] + got[i] - want[i]).abs() < 1e-13, "{kind:?} {n:?}");
                    }
                }
                for i in 0..4 {
                    assert!((dn[i] - (nr[i] - nl[i])).abs() < 1e-13);
                    assert!((df[i] - (fr[i] - fl[i])).abs() < 1e-13);
                    assert!((dg[i] - (gr[i] - gl[i])).abs() < 1e-13);
                }
            }
        }
    }

    #[test]
    fn wall_ghost_gives_zero_mass_flux() {
        let u = conserved(1.0, 0.3, 0.5, 1.0);
        let n = [0.6, 0.8];
        for kind in [NumericalFlux::Rusanov, NumericalFlux::Hllc] {
            let f = numerical_flux(kind, &u, &wall_ghost(&u, n), n);
            assert!(f[0].abs() < 1e-14 && f[3].abs() < 1e-14, "{kind:?}: {f:?}");
        }
    }
}
