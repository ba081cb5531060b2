//! The refinement indicator (GK19 eq. 10), the flags it gives, and the per-element view of the
//! solver's coefficient layout that the adaptation works on.

use crate::error::{Error, Result};
use crate::solver::dg::basis::{dubiner, dubiner_gradient, mode_indices, BasisTables};
use crate::solver::dg::euler::{State, GAMMA};

/// The quantity whose gradient drives the refinement.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum IndicatorField {
    #[default]
    Density,
    Pressure,
    Energy,
}

impl IndicatorField {
    pub fn parse(name: &str) -> Result<IndicatorField> {
        match name {
            "density" => Ok(IndicatorField::Density),
            "pressure" => Ok(IndicatorField::Pressure),
            "energy" => Ok(IndicatorField::Energy),
            other => Err(Error::Invalid(format!(
                "unknown refinement indicator field '{other}' (expected density, pressure or energy)"
            ))),
        }
    }
}

impl IndicatorField {
    /// The field's value at state U.
    pub fn value(self, u: &State) -> f64 {
        match self {
            IndicatorField::Density => u[0],
            IndicatorField::Energy => u[3],
            IndicatorField::Pressure => crate::solver::dg::euler::pressure(u),
        }
    }
}

/// Gradient of the field at a point from U and its gradient (rows: d/dx, d/dy of U):
/// grad p = (gamma - 1) (grad E - (m . grad m) / rho + |m|^2 grad rho / (2 rho^2)).
fn field_gradient(field: IndicatorField, u: &State, grad: &[State; 2]) -> [f64; 2] {
    std::array::from_fn(|d| match field {
        IndicatorField::Density => grad[d][0],
        IndicatorField::Energy => grad[d][3],
        IndicatorField::Pressure => {
            let (rho, mx, my) = (u[0], u[1], u[2]);
            (GAMMA - 1.0)
                * (grad[d][3] - (mx * grad[d][1] + my * grad[d][2]) / rho
                    + (mx * mx + my * my) * grad[d][0] / (2.0 * rho * rho))
        }
    })
}

/// The refinement indicator eps_i = h_i |grad q(U_i)| at each element's centroid (GK19 eq. 10),
/// with h_i the element's smallest height. `coef` is `[mode][equation]` per element; `geometry`
/// gives (xi_x, xi_y, eta_x, eta_y) and h_i.
pub fn indicator(
    tables: &BasisTables,
    field: IndicatorField,
    coef: &[Vec<State>],
    geometry: impl Fn(usize) -> ([f64; 4], f64),
) -> Vec<f64> {
    let c = 1.0 / 3.0;
    let modes = mode_indices(tables.p);
    let phi: Vec<f64> = modes.iter().map(|&(i, j)| dubiner(i, j, c, c)).collect();
    let dphi: Vec<[f64; 2]> = modes
        .iter()
        .map(|&(i, j)| dubiner_gradient(i, j, c, c))
        .collect();
    coef.iter()
        .enumerate()
        .map(|(e, ck)| {
            let (g, h) = geometry(e);
            let mut u = [0.0; 4];
            let mut grad = [[0.0; 4]; 2];
            for ((a, p), d) in ck.iter().zip(&phi).zip(&dphi) {
                let gx = d[0] * g[0] + d[1] * g[2];
                let gy = d[0] * g[1] + d[1] * g[3];
                for eq in 0..4 {
                    u[eq] += a[eq] * p;
                    grad[0][eq] += a[eq] * gx;
                    grad[1][eq] += a[eq] * gy;
                }
            }
            let gq = field_gradient(field, &u, &grad);
            h * (gq[0] * gq[0] + gq[1] * gq[1]).sqrt()
        })
        .collect()
}

/// The jump term of the indicator: max_j |q(mean U_i) - q(mean U_j)| over each element's face
/// neighbours j (up to six with hanging nodes), mean U = c_0 phi_0. A step of q on the element
/// edges (GK19's Kelvin-Helmholtz layers: each side projects to a constant) has no gradient at
/// any centroid, so h |grad q| alone never sees it; its jump across the faces does. Smooth
/// fields add about h |grad q| more.
pub fn jumps(
    field: IndicatorField,
    coef: &[Vec<State>],
    neighbors: &[[Option<usize>; 6]],
) -> Vec<f64> {
    let phi0 = crate::solver::dg::basis::PHI0;
    let value = |i: usize| field.value(&coef[i][0].map(|c| c * phi0));
    neighbors
        .iter()
        .enumerate()
        .map(|(i, nb)| {
            let q = value(i);
            nb.iter()
                .flatten()
                .map(|&j| (value(j) - q).abs())
                .fold(0.0, f64::max)
        })
        .collect()
}

/// Flags from the indicator (GK19 section 4.8): refine above `threshold * delta`, coarsen
/// candidate below `threshold / delta` (a cluster coarsens only when all four siblings are).
pub fn flags(indicator: &[f64], threshold: f64, delta: f64) -> Vec<i8> {
    indicator
        .iter()
        .map(|&e| {
            if e > threshold * delta {
                1
            } else if e < threshold / delta {
                -1
            } else {
                0
            }
        })
        .collect()
}

/// Coefficients `[element][mode][equation]` from the solver's layout c[(eq * np + k) * ne + i].
pub fn gather(c: &[f64], np: usize) -> Vec<Vec<State>> {
    let ne = c.len() / (4 * np);
    (0..ne)
        .map(|i| {
            (0..np)
                .map(|k| std::array::from_fn(|eq| c[(eq * np + k) * ne + i]))
                .collect()
        })
        .collect()
}

/// The inverse of [`gather`].
pub fn scatter(coef: &[Vec<State>], np: usize) -> Vec<f64> {
    let ne = coef.len();
    let mut c = vec![0.0; 4 * np * ne];
    for (i, ck) in coef.iter().enumerate() {
        for (k, u) in ck.iter().enumerate() {
            for eq in 0..4 {
                c[(eq * np + k) * ne + i] = u[eq];
            }
        }
    }
    c
}
