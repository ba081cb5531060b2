//! Friction, applied semi-implicitly after each update (stage) so it stays stable as a layer
//! thins out: the f64 CPU reference of `friction()` in `shaders/swe_update.wgsl`.
//!
//! **Interface drag** (coefficient C_i, dimensionless): a quadratic stress ρ1 C_i |Δu| Δu,
//! Δu = u1 − u2, slows layer 1 and drives layer 2:
//! ∂t q1 = −C_i |Δu| Δu, ∂t q2 = +r C_i |Δu| Δu (so ρ1 q1 + ρ2 q2 is unchanged). With |Δu|
//! frozen and k1 = Δt C_i |Δu| / h1, k2 = Δt r C_i |Δu| / h2 the implicit step is
//! Δu' = Δu / (1 + k1 + k2), u1' = u1 − k1 Δu', u2' = u2 + k2 Δu': exact momentum exchange,
//! and u1', u2' tend to a common velocity (never overshoot) as either layer thins.
//!
//! **Manning bottom friction** (coefficient n, s m^(−1/3)) on the lower layer:
//! ∂t q2 = −g n² |u2| q2 / h2^(4/3), taken implicitly with |u2| frozen:
//! q2' = q2 / (1 + Δt g n² |u2| / h2^(4/3)), which only shrinks q2, however thin the layer.
//!
//! Both act only where the layers involved are wet (h ≥ κ; drier layers have no momentum).
//! A lake at rest has u = 0 and is left exactly as it is.

use super::Physics;
use crate::error::{Error, Result};

/// Friction coefficients of a run (case table `[friction]`).
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize)]
pub struct Friction {
    /// Manning's n of the bottom under the lower layer (s m^(−1/3)); 0 = frictionless.
    pub manning: f64,
    /// Quadratic drag coefficient C_i between the layers (dimensionless); 0 = none.
    pub interface: f64,
}

impl Friction {
    /// Both coefficients finite and ≥ 0.
    pub fn validate(&self) -> Result<()> {
        for (name, v) in [("manning", self.manning), ("interface", self.interface)] {
            if !(v >= 0.0 && v.is_finite()) {
                return Err(Error::Invalid(format!(
                    "friction coefficient {name} = {v} must be finite and >= 0"
                )));
            }
        }
        Ok(())
    }

    /// True when neither term acts.
    pub fn is_none(&self) -> bool {
        self.manning == 0.0 && self.interface == 0.0
    }

    /// Apply interface drag, then bottom friction, over `dt` to one cell's state
    /// W = (h1, q1x, q1y, h2, q2x, q2y).
    pub fn apply(&self, w: &mut [f64; 6], dt: f64, phys: &Physics) {
        let kappa = phys.dry_tol;
        let (h1, h2) = (w[0], w[3]);
        if self.interface > 0.0 && h1 >= kappa && h2 >= kappa {
            let du = [w[1] / h1 - w[4] / h2, w[2] / h1 - w[5] / h2];
            let speed = (du[0] * du[0] + du[1] * du[1]).sqrt();
            let k1 = dt * self.interface * speed / h1;
            let k2 = dt * phys.r * self.interface * speed / h2;
            let s = 1.0 / (1.0 + k1 + k2);
            for a in 0..2 {
                let du_new = du[a] * s;
                w[1 + a] -= h1 * k1 * du_new;
                w[4 + a] += h2 * k2 * du_new;
            }
        }
        if self.manning > 0.0 && h2 >= kappa {
            let speed = (w[4] * w[4] + w[5] * w[5]).sqrt() / h2;
            let k = dt * phys.g * self.manning * self.manning * speed / h2.powf(4.0 / 3.0);
            w[4] /= 1.0 + k;
            w[5] /= 1.0 + k;
        }
    }
}
