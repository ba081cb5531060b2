//! The DG solution as pictures and high-order cells: each element's polynomial evaluated per
//! pixel ([`ModalField`], a [`TriangleField`] for [`crate::output::render_triangle_field`]) and
//! at the nodes of VTK Lagrange triangles ([`ModalField::at_points`] at the nodes of
//! [`crate::mesh::io::lagrange_triangle_nodes`]).
//!
//! Evaluating the Dubiner basis at every pixel would cost two Jacobi recurrences per mode, so
//! each element's modal coefficients are first converted to the monomial basis of its reference
//! coordinates, `u(xi, eta) = sum_(a+b<=p) m_ab xi^a eta^b` with `m = c M` for the fixed
//! matrix `M` of [`monomial_matrix`]; a pixel then costs one power table and `(p+1)(p+2)/2`
//! multiply-adds per conserved variable.

use super::basis::{dubiner, mode_indices, num_basis, MAX_ORDER, PHI0};
use super::euler::{pressure, sound_speed, State};
use crate::error::{Error, Result};
use crate::output::TriangleField;

/// Largest number of modes (p = [`MAX_ORDER`]).
const MAX_MODES: usize = num_basis(MAX_ORDER);

/// `M[k][m]`: the monomial coefficients of Dubiner mode k (modes in [`mode_indices`] order),
/// monomial m = `xi^a eta^b` with `(a, b)` the m-th entry of [`mode_indices`] (every exponent
/// pair of total degree <= p, by degree). Found by interpolation: both bases span P_p, so the
/// Vandermonde system on the `(p+1)(p+2)/2` points `(i/p, j/p)` (unisolvent for P_p) gives
/// each mode's coefficients exactly up to round-off.
pub fn monomial_matrix(p: usize) -> Vec<f64> {
    let exps = mode_indices(p);
    let n = exps.len();
    let q = p.max(1) as f64;
    let nodes: Vec<[f64; 2]> = exps
        .iter()
        .map(|&(i, j)| {
            if p == 0 {
                [1.0 / 3.0, 1.0 / 3.0]
            } else {
                [i as f64 / q, j as f64 / q]
            }
        })
        .collect();
    // Vandermonde V[node][monomial] and right-hand sides B[node][mode].
    let mut v: Vec<f64> = nodes
        .iter()
        .flat_map(|x| {
            exps.iter()
                .map(|&(a, b)| x[0].powi(a as i32) * x[1].powi(b as i32))
        })
        .collect();
    let mut b: Vec<f64> = nodes
        .iter()
        .flat_map(|x| exps.iter().map(|&(i, j)| dubiner(i, j, x[0], x[1])))
        .collect();
    // Gaussian elimination with partial pivoting, all right-hand sides at once.
    for col in 0..n {
        let pivot = (col..n)
            .max_by(|&r, &s| v[r * n + col].abs().total_cmp(&v[s * n + col].abs()))
            .unwrap_or(col);
        for k in 0..n {
            v.swap(col * n + k, pivot * n + k);
            b.swap(col * n + k, pivot * n + k);
        }
        for r in 0..n {
            if r == col {
                continue;
            }
            let f = v[r * n + col] / v[col * n + col];
            if f == 0.0 {
                continue;
            }
            for k in 0..n {
                v[r * n + k] -= f * v[col * n + k];
                b[r * n + k] -= f * b[col * n + k];
            }
        }
    }
    // Row m of the solved system holds monomial m's coefficient of every mode: transpose.
    let mut out = vec![0.0; n * n];
    for m in 0..n {
        for k in 0..n {
            out[k * n + m] = b[m * n + k] / v[m * n + m];
        }
    }
    out
}

/// One derived quantity of a DG solution on its elements, as a per-pixel field: the element's
/// conserved variables in the monomial basis, the quantity evaluated at each pixel.
pub struct ModalField<'a> {
    triangles: &'a [[[f64; 2]; 3]],
    /// Coefficients `c[eq][k][element]`.
    c: &'a [f64],
    quantity: Quantity,
    /// Conserved variables the quantity needs (density: 1; the others: 4).
    eqs: usize,
    np: usize,
    exps: Vec<(usize, usize)>,
    mono: Vec<f64>,
    p: usize,
}

impl<'a> ModalField<'a> {
    /// `quantity` of the order-`p` solution `c` (`c[eq][k][element]`) on `triangles` (element
    /// i maps the reference triangle by `x = v0 + xi (v1 - v0) + eta (v2 - v0)`).
    pub fn new(triangles: &'a [[[f64; 2]; 3]], p: usize, c: &'a [f64], quantity: Quantity) -> Self {
        let np = num_basis(p);
        debug_assert_eq!(c.len(), 4 * np * triangles.len());
        ModalField {
            triangles,
            c,
            quantity,
            eqs: if quantity == Quantity::Density { 1 } else { 4 },
            np,
            exps: mode_indices(p),
            mono: monomial_matrix(p),
            p,
        }
    }

    /// The quantity at reference points `ref_points` (xi, eta) of every element:
    /// `out[e * ref_points.len() + n]`, elements in parallel chunks.
    pub fn at_points(&self, ref_points: &[[f64; 2]]) -> Vec<f64> {
        let per = ref_points.len();
        let ne = self.triangles.len();
        let mut out = vec![0.0; ne * per];
        let workers = std::thread::available_parallelism().map_or(1, |n| n.get());
        let chunk = ne.div_ceil(workers).max(1);
        std::thread::scope(|s| {
            for (k, part) in out.chunks_mut(chunk * per.max(1)).enumerate() {
                s.spawn(move || {
                    for (j, vals) in part.chunks_mut(per.max(1)).enumerate() {
                        let local = self.local(k * chunk + j);
                        for (v, x) in vals.iter_mut().zip(ref_points) {
                            *v = self.value(&local, x[0], x[1]);
                        }
                    }
                });
            }
        });
        out
    }

    fn coef(&self, eq: usize, k: usize, e: usize) -> f64 {
        self.c[(eq * self.np + k) * self.triangles.len() + e]
    }
}

impl TriangleField for ModalField<'_> {
    /// Monomial coefficients `[eq][m]` of the element's conserved variables.
    type Local = [[f64; MAX_MODES]; 4];

    fn triangles(&self) -> &[[[f64; 2]; 3]] {
        self.triangles
    }

    fn local(&self, e: usize) -> Self::Local {
        let np = self.np;
        let mut out = [[0.0; MAX_MODES]; 4];
        for (eq, row) in out.iter_mut().enumerate().take(self.eqs) {
            for k in 0..np {
                let ck = self.coef(eq, k, e);
                for (m, r) in row.iter_mut().enumerate().take(np) {
                    *r += ck * self.mono[k * np + m];
                }
            }
        }
        out
    }

    fn value(&self, local: &Self::Local, xi: f64, eta: f64) -> f64 {
        let mut px = [1.0; MAX_ORDER + 1];
        let mut py = [1.0; MAX_ORDER + 1];
        for d in 1..=self.p {
            px[d] = px[d - 1] * xi;
            py[d] = py[d - 1] * eta;
        }
        let mut u: State = [0.0; 4];
        for (ue, row) in u.iter_mut().zip(local).take(self.eqs) {
            *ue = self
                .exps
                .iter()
                .zip(row)
                .map(|(&(a, b), m)| m * px[a] * py[b])
                .sum();
        }
        self.quantity.eval(&u)
    }

    /// The range of the quantity of the element means.
    fn range_hint(&self) -> Option<(f64, f64)> {
        let mut lo = f64::INFINITY;
        let mut hi = f64::NEG_INFINITY;
        for e in 0..self.triangles.len() {
            let mut u: State = [0.0; 4];
            for (eq, ue) in u.iter_mut().enumerate().take(self.eqs) {
                *ue = self.coef(eq, 0, e) * PHI0;
            }
            let v = self.quantity.eval(&u);
            if v.is_finite() {
                lo = lo.min(v);
                hi = hi.max(v);
            }
        }
        (lo <= hi).then_some((lo, hi))
    }
}

/// What [`bench_png`] measured: median seconds over the repeats.
#[derive(Clone, Debug, serde::Serialize)]
pub struct PngTiming {
    pub elements: usize,
    pub p: usize,
    pub width: u32,
    pub height: u32,
    /// Worker threads the renderer used.
    pub threads: usize,
    /// Per-pixel rendering (rasterization, evaluation, colors, legend).
    pub render_seconds: f64,
    /// PNG encoding and the atomic write.
    pub write_seconds: f64,
    /// Both: one snapshot's density PNG.
    pub total_seconds: f64,
}

/// Time the density PNG of the isentropic vortex projected at order `p` on about `cells`
/// triangles, the `dg` command's 1400 x 1000 layout, `repeats` times (median), written into
/// `dir`. The solution comes from the f64 projection on the host: no device is needed.
pub fn bench_png(
    cells: usize,
    p: usize,
    repeats: usize,
    dir: &std::path::Path,
) -> crate::error::Result<PngTiming> {
    use crate::order::{prepare, Ordering, PrepareOptions};
    use crate::output::{render_triangle_field, write_png_atomic, PlotOptions};
    use std::time::Instant;
    let mut case = super::Case::vortex(cells);
    case.order = p;
    let mesh = case.build_mesh(1)?;
    let om = prepare(&mesh, &PrepareOptions::new(Ordering::ColorRenumbered, 1))?;
    let dm = super::DgMesh::build(&om, &|t| case.boundary(&om.mesh, t))?;
    let tables = super::BasisTables::new(p);
    let op = super::Operator {
        mesh: &dm,
        tables: &tables,
        flux: case.flux,
        state_fn: case.initial,
        states: case.states.clone(),
    };
    let c = op.project(&|x, y| case.initial.eval(x, y, 0.0));
    let opts = PlotOptions {
        title: format!("vortex: density, p = {p} (bench)"),
        label: "density".into(),
        width: 1400,
        height: 1000,
        ..PlotOptions::default()
    };
    let path = dir.join("bench_density.png");
    let (mut render, mut write) = (Vec::new(), Vec::new());
    for _ in 0..repeats.max(1) {
        let started = Instant::now();
        let field = ModalField::new(&dm.vertices, p, &c, Quantity::Density);
        let (img, _) = render_triangle_field(&field, &opts, None)?;
        render.push(started.elapsed().as_secs_f64());
        let started = Instant::now();
        write_png_atomic(&img, &path)?;
        write.push(started.elapsed().as_secs_f64());
    }
    let total: Vec<f64> = render.iter().zip(&write).map(|(a, b)| a + b).collect();
    Ok(PngTiming {
        elements: dm.num_elements,
        p,
        width: opts.width,
        height: opts.height,
        threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
        render_seconds: crate::runtime::median(&render),
        write_seconds: crate::runtime::median(&write),
        total_seconds: crate::runtime::median(&total),
    })
}

/// A quantity derived from the conserved state U = (rho, rho u, rho v, E), for snapshots.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Quantity {
    /// rho.
    Density,
    /// p = (gamma - 1)(E - rho |v|^2 / 2).
    Pressure,
    /// |v| / c with c = sqrt(gamma p / rho).
    Mach,
    /// |v| = |rho v| / rho.
    Speed,
}

impl Quantity {
    pub const ALL: [Quantity; 4] = [
        Quantity::Density,
        Quantity::Pressure,
        Quantity::Mach,
        Quantity::Speed,
    ];

    /// The name in file names, plot labels and the command line.
    pub fn name(self) -> &'static str {
        match self {
            Quantity::Density => "density",
            Quantity::Pressure => "pressure",
            Quantity::Mach => "mach",
            Quantity::Speed => "speed",
        }
    }

    /// The quantity at state `u`.
    pub fn eval(self, u: &State) -> f64 {
        let speed = || (u[1] * u[1] + u[2] * u[2]).sqrt() / u[0];
        match self {
            Quantity::Density => u[0],
            Quantity::Pressure => pressure(u),
            Quantity::Mach => speed() / sound_speed(u).max(1e-300),
            Quantity::Speed => speed(),
        }
    }
}

impl std::fmt::Display for Quantity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Quantity {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        Quantity::ALL
            .into_iter()
            .find(|q| q.name() == s)
            .ok_or_else(|| {
                Error::Invalid(format!(
                    "unknown field '{s}' (expected density, pressure, mach, speed)"
                ))
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn monomials_reproduce_the_dubiner_modes() {
        for p in 0..=MAX_ORDER {
            let m = monomial_matrix(p);
            let exps = mode_indices(p);
            let n = exps.len();
            for &(xi, eta) in &[(0.1, 0.2), (0.7, 0.05), (0.3, 0.6), (0.0, 1.0)] {
                for (k, &(i, j)) in exps.iter().enumerate() {
                    let mono: f64 = (0..n)
                        .map(|s| {
                            let (a, b) = exps[s];
                            m[k * n + s] * f64::powi(xi, a as i32) * f64::powi(eta, b as i32)
                        })
                        .sum();
                    let exact = dubiner(i, j, xi, eta);
                    assert!(
                        (mono - exact).abs() < 1e-11,
                        "p = {p}, mode ({i}, {j}) at ({xi}, {eta}): {mono} vs {exact}"
                    );
                }
            }
        }
    }
}
