//! f64 CPU reference of the DG operator, read side by side with the kernels
//! (`dg_volume`, `dg_surface`, `dg_limit`, `dg_local_dt`, and the gathered surface integral's
//! `dg_trace`, `dg_flux` and `dg_volume` with LIFT: [`Operator::traces`],
//! [`Operator::edge_fluxes`], [`Operator::gathered_rhs`]).
//!
//! Coefficients are stored `c[eq][k][i]` (index `(eq * np + k) * ne + i`), as on the GPU. With
//! the orthonormal basis the semi-discrete scheme of element i is
//!
//!   dc_k/dt = sum_q w_q F(U(x_q)) . (J^{-T} grad_ref phi_k)(x_q)
//!           - (1 / det J_i) sum_{edges} L_e sum_q w^e_q phi_k(x_q) F*(U_i, U_ghost or U_j) . n,
//!
//! with the volume rule weights w_q summing to 1/2 and edge weights w^e_q summing to 1. Like the
//! kernels, [`Operator::rhs`] evaluates it in deviation form (F and F* less F(U_0i), U_0i the
//! element's mean), which is the same in exact arithmetic.

use super::basis::{BasisTables, PHI0};
use super::case::StateFn;
use super::euler::{self, NumericalFlux, State};
use super::mesh::{
    DgMesh, EdgeInfo, EDGE_EXACT, EDGE_INFLOW, EDGE_INTERIOR, EDGE_OUTFLOW, EDGE_WALL,
};
use super::quadrature::TriangleRule;
use crate::parallel;

/// Absolute density and pressure floor of the positivity limiter.
pub const POSITIVITY_EPS: f64 = 1e-10;
/// Floor relative to the element's mean: eps = max(POSITIVITY_EPS, POSITIVITY_REL * mean). The
/// GPU solvers run in f32, where a node pressure limited to 1e-10 by one kernel comes out
/// negative in another (FMA contraction, another summation order): NaN sound speed. 1e-4 of
/// the mean is many f32 ulps of the energy even where kinetic energy dominates.
pub const POSITIVITY_REL: f64 = 1e-4;
/// Relative tolerance of the slope limiter's bound test (cells within it are left alone).
pub const LIMITER_TOL: f64 = 1e-6;

/// Planes of edge fluxes per element in the gathered layout: side s, whole or its first half,
/// at plane s; the second half of a side split at a hanging node at plane 3 + s.
pub const FLUX_PLANES: usize = 6;

/// The flux plane of side `local`, half `half` (0 the whole side, 1 and 2 its halves).
pub fn flux_plane(local: usize, half: usize) -> usize {
    if half == 2 {
        3 + local
    } else {
        local
    }
}

/// The DG operator on one mesh.
#[derive(Clone, Debug)]
pub struct Operator<'a> {
    pub mesh: &'a DgMesh,
    pub tables: &'a BasisTables,
    pub flux: NumericalFlux,
    pub state_fn: StateFn,
    pub states: Vec<State>,
}

impl<'a> Operator<'a> {
    pub fn ndof(&self) -> usize {
        4 * self.tables.np * self.mesh.num_elements
    }

    #[inline]
    fn idx(&self, eq: usize, k: usize, i: usize) -> usize {
        (eq * self.tables.np + k) * self.mesh.num_elements + i
    }

    /// Coefficients of element i as `[k][eq]`.
    pub fn element(&self, c: &[f64], i: usize) -> Vec<State> {
        (0..self.tables.np)
            .map(|k| std::array::from_fn(|eq| c[self.idx(eq, k, i)]))
            .collect()
    }

    /// U = sum_k c_k phi_k at a node with basis values `phi`.
    pub fn eval(coef: &[State], phi: &[f64]) -> State {
        let mut u = [0.0; 4];
        for (ck, p) in coef.iter().zip(phi) {
            for eq in 0..4 {
                u[eq] += ck[eq] * p;
            }
        }
        u
    }

    /// Ghost state of a boundary edge at point x, time t.
    pub fn ghost(&self, e: &EdgeInfo, ul: &State, x: [f64; 2], t: f64) -> State {
        match e.kind {
            EDGE_WALL => euler::wall_ghost(ul, e.normal),
            EDGE_OUTFLOW => *ul,
            EDGE_INFLOW => self.states[e.state],
            EDGE_EXACT => self.state_fn.eval(x[0], x[1], t),
            _ => *ul,
        }
    }

    /// Jump U_ghost - U_L at a boundary node of edge e, where U_L = u0 + du is the left
    /// element's mean plus its higher modes' trace (the kernels' form: the difference from the
    /// mean first, so it is exact where the ghost is close to the state).
    pub fn boundary_jump(
        &self,
        e: &EdgeInfo,
        u0: &State,
        du: &State,
        x: [f64; 2],
        t: f64,
    ) -> State {
        let ul: State = std::array::from_fn(|i| u0[i] + du[i]);
        match e.kind {
            EDGE_WALL => {
                let mn = 2.0 * (ul[1] * e.normal[0] + ul[2] * e.normal[1]);
                [0.0, -mn * e.normal[0], -mn * e.normal[1], 0.0]
            }
            EDGE_INFLOW | EDGE_EXACT => {
                let g = self.ghost(e, &ul, x, t);
                std::array::from_fn(|i| (g[i] - u0[i]) - du[i])
            }
            _ => [0.0; 4],
        }
    }

    /// dU = sum_{k >= 1} c_k phi_k, an element's deviation from its mean at a node.
    fn deviation(coef: &[State], phi: &[f64]) -> State {
        Self::eval(&coef[1..], &phi[1..])
    }

    /// The right-hand side at time t (volume + surface terms), in the kernels' deviation form:
    /// element i integrates F(U) - F(U_0i) and F* - F(U_0i) . n with U_0i = c_0 phi_0 its mean,
    /// which changes nothing exactly (the divergence of the constant F(U_0i) is zero and both
    /// rules are exact for it) but keeps f32 rounding at |U - U_0i| instead of |F| (issue 13).
    pub fn rhs(&self, c: &[f64], t: f64, out: &mut [f64]) {
        let tb = self.tables;
        let (np, nqe) = (tb.np, tb.nqe());
        self.volume_terms(c, out);
        for e in &self.mesh.edges {
            let cl = self.element(c, e.left);
            let cr = e.right.map(|r| self.element(c, r));
            let u0l = cl[0].map(|v| v * PHI0);
            let u0r = cr.as_ref().map_or(u0l, |cr| cr[0].map(|v| v * PHI0));
            let v0l = [u0l[1] / u0l[0], u0l[2] / u0l[0]];
            let p0l = euler::pressure(&u0l);
            let d0: State = std::array::from_fn(|i| u0r[i] - u0l[i]);
            // F(U_0R) . n - F(U_0L) . n: the right side's terms are the left's minus this.
            let ch0 = euler::primitive_change(&u0l, v0l, &d0);
            let df0 = euler::normal_flux_change(&u0l, p0l, &ch0, &d0, e.normal);
            let mut rl = vec![[0.0; 4]; np];
            let mut rr = vec![[0.0; 4]; np];
            for q in 0..nqe {
                // The left element walks its whole edge; the right one meets node q at its
                // node nqe - 1 - q of the whole edge or of half `right_half` of it.
                let phil = tb.edge_row(e.left_local, 0, q);
                let phir = tb.edge_row(e.right_local, e.right_half as usize, nqe - 1 - q);
                let dul = Self::deviation(&cl, phil);
                let du: State = match &cr {
                    Some(cr) => {
                        let dur = Self::deviation(cr, phir);
                        std::array::from_fn(|i| d0[i] + (dur[i] - dul[i]))
                    }
                    None => self.boundary_jump(e, &u0l, &dul, e.point(tb.edge_t[q]), t),
                };
                let ul: State = std::array::from_fn(|i| u0l[i] + dul[i]);
                // F* - F(U_0L) . n = (F(U_L) - F(U_0L)) . n + (F* - F(U_L) . n).
                let chl = euler::primitive_change(&u0l, v0l, &dul);
                let dfl = euler::normal_flux_change(&u0l, p0l, &chl, &dul, e.normal);
                let fnum = euler::numerical_flux_change(self.flux, &ul, &du, e.normal);
                let w = tb.edge_w[q] * e.length;
                for k in 0..np {
                    for eq in 0..4 {
                        let fl = dfl[eq] + fnum[eq];
                        rl[k][eq] -= w * phil[k] * fl;
                        rr[k][eq] += w * phir[k] * (fl - df0[eq]);
                    }
                }
            }
            let dl = 1.0 / self.mesh.det[e.left];
            for k in 0..np {
                for eq in 0..4 {
                    out[self.idx(eq, k, e.left)] += rl[k][eq] * dl;
                }
            }
            if let Some(r) = e.right {
                let dr = 1.0 / self.mesh.det[r];
                for k in 0..np {
                    for eq in 0..4 {
                        out[self.idx(eq, k, r)] += rr[k][eq] * dr;
                    }
                }
            }
        }
        debug_assert!(self
            .mesh
            .edges
            .iter()
            .all(|e| e.right.is_some() == (e.kind == EDGE_INTERIOR)));
    }

    /// The volume terms alone (`dg_volume`), overwriting out, in deviation form:
    /// sum_q w_q (F(U_q) - F(U_0)) . (J^{-T} grad_ref phi_k)(x_q) with U_0 the element's mean.
    pub fn volume_terms(&self, c: &[f64], out: &mut [f64]) {
        let tb = self.tables;
        let (np, nq) = (tb.np, tb.nq());
        let ne = self.mesh.num_elements;
        out.iter_mut().for_each(|v| *v = 0.0);
        for i in 0..ne {
            let coef = self.element(c, i);
            let g = self.mesh.inv_jacobian[i];
            let u0 = coef[0].map(|v| v * PHI0);
            let v0 = [u0[1] / u0[0], u0[2] / u0[0]];
            let p0 = euler::pressure(&u0);
            let mut res = vec![[0.0; 4]; np];
            for q in 0..nq {
                let du = Self::deviation(&coef, &tb.vol_phi[q * np..(q + 1) * np]);
                let ch = euler::primitive_change(&u0, v0, &du);
                let (f, gf) = euler::flux_change(&u0, p0, &ch, &du);
                let w = tb.vol.weights[q];
                for (k, r) in res.iter_mut().enumerate() {
                    let (dxi, deta) = (tb.vol_dxi[q * np + k], tb.vol_deta[q * np + k]);
                    let gx = dxi * g[0] + deta * g[2];
                    let gy = dxi * g[1] + deta * g[3];
                    for eq in 0..4 {
                        r[eq] += w * (f[eq] * gx + gf[eq] * gy);
                    }
                }
            }
            for (k, r) in res.iter().enumerate() {
                for eq in 0..4 {
                    out[self.idx(eq, k, i)] = r[eq];
                }
            }
        }
    }

    /// f64 twin of `dg_trace`: element i's deviation from its mean (modes k >= 1) at the NQE
    /// Gauss nodes of each of its sides s, in the side's own orientation, at `(3 i + s) nqe + q`.
    pub fn traces(&self, c: &[f64]) -> Vec<State> {
        let tb = self.tables;
        let nqe = tb.nqe();
        let mut out = Vec::with_capacity(3 * nqe * self.mesh.num_elements);
        for i in 0..self.mesh.num_elements {
            let coef = self.element(c, i);
            for s in 0..3 {
                for q in 0..nqe {
                    out.push(Self::deviation(&coef, tb.edge_row(s, 0, q)));
                }
            }
        }
        out
    }

    /// f64 twin of `dg_flux` on the deviation `traces` ([`Operator::traces`]) of `c` at time t,
    /// in deviation form: with G_K = (F*(U_L, U_R) - F(U_0K)) . n w_q L_e (U_0K the means of
    /// `c`), -G_L in the left side's slot q and +G_R in the right side's slot nqe - 1 - q, at
    /// `(FLUX_PLANES i + plane) nqe + slot` ([`flux_plane`]). On half `h` of a coarse right
    /// side (a hanging node) the right trace is taken at that half's nodes from the
    /// coefficients, as the colored surface kernel does.
    pub fn edge_fluxes(&self, c: &[f64], traces: &[State], t: f64) -> Vec<State> {
        let tb = self.tables;
        let nqe = tb.nqe();
        let mut out = vec![[0.0; 4]; FLUX_PLANES * nqe * self.mesh.num_elements];
        for e in &self.mesh.edges {
            let trace_left = (3 * e.left + e.left_local) * nqe;
            let left = (FLUX_PLANES * e.left + e.left_local) * nqe;
            let half = e.right_half as usize;
            let right = e
                .right
                .map(|r| (FLUX_PLANES * r + flux_plane(e.right_local, half)) * nqe);
            let right_trace = |r: usize, q: usize| -> State {
                if half == 0 {
                    traces[(3 * r + e.right_local) * nqe + nqe - 1 - q]
                } else {
                    let row = tb.edge_row(e.right_local, half, nqe - 1 - q);
                    Self::deviation(&self.element(c, r), row)
                }
            };
            let u0l = self.mean(c, e.left);
            let u0r = e.right.map_or(u0l, |r| self.mean(c, r));
            let v0l = [u0l[1] / u0l[0], u0l[2] / u0l[0]];
            let p0l = euler::pressure(&u0l);
            let d0: State = std::array::from_fn(|i| u0r[i] - u0l[i]);
            let ch0 = euler::primitive_change(&u0l, v0l, &d0);
            let df0 = euler::normal_flux_change(&u0l, p0l, &ch0, &d0, e.normal);
            for q in 0..nqe {
                let dul = traces[trace_left + q];
                let du: State = match e.right {
                    Some(r) => {
                        let dur = right_trace(r, q);
                        std::array::from_fn(|i| d0[i] + (dur[i] - dul[i]))
                    }
                    None => self.boundary_jump(e, &u0l, &dul, e.point(tb.edge_t[q]), t),
                };
                let ul: State = std::array::from_fn(|i| u0l[i] + dul[i]);
                let chl = euler::primitive_change(&u0l, v0l, &dul);
                let dfl = euler::normal_flux_change(&u0l, p0l, &chl, &dul, e.normal);
                let fnum = euler::numerical_flux_change(self.flux, &ul, &du, e.normal);
                let w = tb.edge_w[q] * e.length;
                let fl: State = std::array::from_fn(|i| dfl[i] + fnum[i]);
                out[left + q] = fl.map(|v| -w * v);
                if let Some(r) = right {
                    out[r + nqe - 1 - q] = std::array::from_fn(|i| w * (fl[i] - df0[i]));
                }
            }
        }
        out
    }

    /// f64 twin of the gathered surface integral (`dg_trace`, `dg_flux`, then `dg_volume` with
    /// LIFT = 1): the volume terms plus, per element, 1 / det J sum_s sum_q phi_k(x_{s,q})
    /// flux_{s,q}, over both halves of a side split at a hanging node (their nodes and
    /// planes). Equal to [`Operator::rhs`] up to round-off.
    pub fn gathered_rhs(&self, c: &[f64], t: f64, out: &mut [f64]) {
        let tb = self.tables;
        let nqe = tb.nqe();
        let fluxes = self.edge_fluxes(c, &self.traces(c), t);
        self.volume_terms(c, out);
        for i in 0..self.mesh.num_elements {
            let d = 1.0 / self.mesh.det[i];
            let split = self.split_sides(i);
            for s in 0..3 {
                let halves: &[usize] = if split[s] { &[1, 2] } else { &[0] };
                for &h in halves {
                    for q in 0..nqe {
                        let f = fluxes[(FLUX_PLANES * i + flux_plane(s, h)) * nqe + q];
                        for (k, phi) in tb.edge_row(s, h, q).iter().enumerate() {
                            for (eq, fv) in f.iter().enumerate() {
                                out[self.idx(eq, k, i)] += d * phi * fv;
                            }
                        }
                    }
                }
            }
        }
    }

    /// Element means U_i = c_0 phi_0 = sqrt(2) c_0 (the higher modes integrate to zero).
    pub fn mean(&self, c: &[f64], i: usize) -> State {
        std::array::from_fn(|eq| c[self.idx(eq, 0, i)] * PHI0)
    }

    /// The CFL time step dt = cfl min_i h_i / ((2p + 1)(|v_i| + c_i)) from element means.
    pub fn cfl_dt(&self, c: &[f64], cfl: f64) -> f64 {
        let p = self.tables.p as f64;
        (0..self.mesh.num_elements)
            .map(|i| {
                let u = self.mean(c, i);
                let speed = (u[1] * u[1] + u[2] * u[2]).sqrt() / u[0] + euler::sound_speed(&u);
                cfl * self.mesh.min_height[i] / ((2.0 * p + 1.0) * speed)
            })
            .fold(f64::INFINITY, f64::min)
    }

    /// Slope limiter and positivity limiter, `input` -> `out` (mirrors `dg_limit.wgsl`).
    ///
    /// 1. Vertex-based (Barth–Jespersen type) limiter per conserved component: with the mean
    ///    u_i and the bounds [m, M] of the means of i and its face neighbours (both neighbours
    ///    of a split side), the value at each vertex v must satisfy m <= u_v <= M;
    ///    alpha = min_v min(1, (M - u_i)/(u_v - u_i) or (m - u_i)/(u_v - u_i)). If alpha < 1
    ///    the element is reduced to its mean plus alpha times its linear modes (modes of
    ///    degree >= 2 dropped).
    /// 2. Zhang–Shu positivity: theta_rho = min(1, (rho_i - eps)/(rho_i - min_q rho_q)) scales
    ///    the non-constant density modes; then, p being concave in U,
    ///    theta_p = min_q (p_i - eps)/(p_i - p_q) over nodes with p_q < eps scales all
    ///    (eps = max(1e-10, 1e-4 x the element's mean density or pressure))
    ///    non-constant modes. Nodes: volume and edge quadrature points, and the half-edge
    ///    points of sides split by a hanging node.
    pub fn limit(&self, input: &[f64], out: &mut [f64], slope: bool) {
        let tb = self.tables;
        let np = tb.np;
        let ne = self.mesh.num_elements;
        out.copy_from_slice(input);
        if np == 1 {
            return;
        }
        for i in 0..ne {
            let mut coef = self.element(input, i);
            let mean = self.mean(input, i);
            if slope {
                let mut lo = mean;
                let mut hi = mean;
                for nb in self.mesh.neighbors[i].iter().flatten() {
                    let m = self.mean(input, *nb);
                    for eq in 0..4 {
                        lo[eq] = lo[eq].min(m[eq]);
                        hi[eq] = hi[eq].max(m[eq]);
                    }
                }
                for eq in 0..4 {
                    let tol = LIMITER_TOL * (hi[eq].abs().max(lo[eq].abs()) + 1e-12);
                    let mut alpha: f64 = 1.0;
                    for v in 0..3 {
                        let phi = &tb.vertex_phi[v * np..(v + 1) * np];
                        let uv: f64 = (0..np).map(|k| coef[k][eq] * phi[k]).sum();
                        let d = uv - mean[eq];
                        if d > tol {
                            alpha = alpha.min((hi[eq] - mean[eq]) / d);
                        } else if d < -tol {
                            alpha = alpha.min((lo[eq] - mean[eq]) / d);
                        }
                    }
                    if alpha < 1.0 {
                        let alpha = alpha.max(0.0);
                        for (k, ck) in coef.iter_mut().enumerate().skip(1) {
                            ck[eq] = if k < 3 { ck[eq] * alpha } else { 0.0 };
                        }
                    }
                }
            }
            self.positivity(&mut coef, &mean, self.split_sides(i));
            for (k, ck) in coef.iter().enumerate() {
                for eq in 0..4 {
                    out[self.idx(eq, k, i)] = ck[eq];
                }
            }
        }
    }

    /// Sides of element i split into two faces (hanging node): the element's fluxes there are
    /// evaluated on the halves, so positivity must hold at the half-edge nodes too.
    pub fn split_sides(&self, i: usize) -> [bool; 3] {
        let nb = &self.mesh.neighbors[i];
        [nb[3].is_some(), nb[4].is_some(), nb[5].is_some()]
    }

    /// Zhang–Shu scaling of one element's coefficients (see [`Operator::limit`]) at
    /// [`BasisTables::positivity_nodes`] of its `split` sides.
    pub fn positivity(&self, coef: &mut [State], mean: &State, split: [bool; 3]) {
        let tb = self.tables;
        let np = tb.np;
        let nodes = tb.positivity_nodes(split);
        let mut rho_min = f64::INFINITY;
        for phi in nodes.clone() {
            let r: f64 = (0..np).map(|k| coef[k][0] * phi[k]).sum();
            rho_min = rho_min.min(r);
        }
        let eps_rho = POSITIVITY_EPS.max(POSITIVITY_REL * mean[0]);
        if rho_min < eps_rho {
            let theta = ((mean[0] - eps_rho) / (mean[0] - rho_min)).clamp(0.0, 1.0);
            for ck in coef.iter_mut().skip(1) {
                ck[0] *= theta;
            }
        }
        let p_mean = euler::pressure(mean);
        let eps_p = POSITIVITY_EPS.max(POSITIVITY_REL * p_mean);
        let mut theta: f64 = 1.0;
        for phi in nodes {
            let u = Self::eval(coef, phi);
            let p = euler::pressure(&u);
            if p < eps_p {
                theta = theta.min((p_mean - eps_p) / (p_mean - p));
            }
        }
        if theta < 1.0 {
            let theta = theta.max(0.0);
            for ck in coef.iter_mut().skip(1) {
                for v in ck.iter_mut() {
                    *v *= theta;
                }
            }
        }
    }

    /// L2 projection of `f(x, y)` onto the basis (rule exact to degree 2p + 6, so smooth data
    /// is projected to well below the discretisation error): c_k = sum_q w_q f(x_q) phi_k(x_q)
    /// per element (det J cancels against the orthonormal mass matrix), elements in parallel
    /// blocks ([`parallel::fill_rows`]), each coefficient summed over q in order: the same bits
    /// on any number of threads.
    pub fn project(&self, f: &(dyn Fn(f64, f64) -> State + Sync)) -> Vec<f64> {
        let tb = self.tables;
        let np = tb.np;
        let ne = self.mesh.num_elements;
        let rule = TriangleRule::exact_to(2 * tb.p + 6);
        let phis: Vec<Vec<f64>> = rule.points.iter().map(|x| tb.eval(x[0], x[1])).collect();
        let mut c = vec![0.0; self.ndof()];
        parallel::fill_rows(&mut c, ne, parallel::BLOCK, |elements, rows| {
            let mut acc = vec![[0.0; 4]; np];
            for (j, i) in elements.enumerate() {
                acc.iter_mut().for_each(|a| *a = [0.0; 4]);
                for (q, x) in rule.points.iter().enumerate() {
                    let [px, py] = self.mesh.map(i, x[0], x[1]);
                    let u = f(px, py);
                    for (k, a) in acc.iter_mut().enumerate() {
                        for eq in 0..4 {
                            a[eq] += rule.weights[q] * u[eq] * phis[q][k];
                        }
                    }
                }
                for (k, a) in acc.iter().enumerate() {
                    for eq in 0..4 {
                        rows[eq * np + k][j] = a[eq];
                    }
                }
            }
        });
        c
    }

    /// L2 norm over the domain of the density error against the state function at time t,
    /// (sum_i det J_i sum_q w_q (rho_h - rho)(x_q)^2)^(1/2) with the projection's rule; in f64
    /// on the host, elements in parallel blocks whose partial sums add in block order (the
    /// same bits on any number of threads). Not on the GPU: its f32 would round the error of
    /// an f32-accurate solution.
    pub fn l2_density_error(&self, c: &[f64], t: f64) -> f64 {
        let tb = self.tables;
        let np = tb.np;
        let rule = TriangleRule::exact_to(2 * tb.p + 6);
        let phis: Vec<Vec<f64>> = rule.points.iter().map(|x| tb.eval(x[0], x[1])).collect();
        let partial = parallel::map_blocks(self.mesh.num_elements, parallel::BLOCK, |elements| {
            let mut sum = 0.0;
            for i in elements {
                for (q, x) in rule.points.iter().enumerate() {
                    let [px, py] = self.mesh.map(i, x[0], x[1]);
                    let exact = self.state_fn.density(px, py, t);
                    let rho = (0..np).fold(0.0, |s, k| s + c[self.idx(0, k, i)] * phis[q][k]);
                    sum += rule.weights[q] * self.mesh.det[i] * (rho - exact).powi(2);
                }
            }
            sum
        });
        partial.iter().sum::<f64>().sqrt()
    }

    /// Domain integrals of (rho, rho u, rho v, E): sum_i |Omega_i| U_i = sum_i det J_i c_0 / sqrt(2).
    pub fn totals(&self, c: &[f64]) -> State {
        let mut t = [0.0; 4];
        for i in 0..self.mesh.num_elements {
            let m = self.mean(c, i);
            for eq in 0..4 {
                t[eq] += 0.5 * self.mesh.det[i] * m[eq];
            }
        }
        t
    }
}

/// Run a CPU simulation to `t_end` with CFL time steps (or a fixed dt) and the SSP scheme of
/// order p; returns the number of steps.
pub fn run(
    op: &Operator,
    c: &mut [f64],
    t_end: f64,
    cfl: f64,
    fixed_dt: Option<f64>,
    limiter: bool,
) -> usize {
    let n = op.ndof();
    let stages = super::rk::scheme(op.tables.p);
    let mut regs = vec![0.0; super::rk::REGISTERS * n];
    regs[..n].copy_from_slice(c);
    let mut t = 0.0;
    let mut steps = 0;
    let mut scratch = vec![0.0; n];
    while t < t_end * (1.0 - 1e-12) {
        let dt = fixed_dt
            .unwrap_or_else(|| op.cfl_dt(&regs[..n], cfl))
            .min(t_end - t);
        super::rk::step(
            &stages,
            &mut regs,
            n,
            t,
            dt,
            &mut |u, time, out| op.rhs(u, time, out),
            &mut |r| {
                if limiter {
                    op.limit(r, &mut scratch, limiter);
                    r.copy_from_slice(&scratch);
                }
            },
        );
        t += dt;
        steps += 1;
    }
    c.copy_from_slice(&regs[..n]);
    steps
}
