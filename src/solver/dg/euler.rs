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
