//! The f64 CPU reference solver: the same edge kernel ([`super::flux::edge_contribution`]), the
//! same accumulate-then-update structure and the same time-step clamp as the GPU driver, so the
//! tests can judge the f32 GPU results against it. At order 2 each step is Heun's SSP-RK2
//! (W* = W + Δt L(W), W^{n+1} = ½ (W + W* + Δt L(W*)), Δt from the first stage) with the
//! [`super::muscl`] reconstruction in L and each stage's fluctuations scaled by the draining
//! factors ([`super::muscl::drain_factor`]) where a cell would lose more of a layer than it
//! holds; friction follows every stage (semi-implicit).

// Index loops over the 4 and 6 state components mirror the WGSL kernel line by line.
#![allow(clippy::needless_range_loop)]

use super::boundary::DrivenBoundaries;
use super::flux::{edge_contribution, Neighbor};
use super::mesh::{EdgeKind, SweMesh};
use super::muscl::{drain_factor, edge_parts2, Reconstruction};
use super::{depth_stop_level, Counters, DepthStop, Physics, Scheme};
use crate::error::{Error, Result};
use crate::mesh::NO_ELEMENT;

#[derive(Clone, Copy, Debug)]
struct CpuEdge {
    left: usize,
    right: usize,
    nx: f64,
    ny: f64,
    length: f64,
    kind: EdgeKind,
    /// Slots of the edge in its left and right cell (order 2).
    slots: [u32; 2],
}

/// f64 reference solver on one mesh.
#[derive(Clone, Debug)]
pub struct CpuSolver {
    edges: Vec<CpuEdge>,
    areas: Vec<f64>,
    /// Depth H of each cell (below the reference level).
    pub depth: Vec<f64>,
    /// State W = (h1, q1x, q1y, h2, q2x, q2y) of each cell.
    pub state: Vec<[f64; 6]>,
    pub scheme: Scheme,
    pub phys: Physics,
    /// CFL number γ of (3).
    pub cfl: f64,
    /// Spatial order, 1 or 2 ([`super::check_order`]); 2 adds the reconstruction and Heun.
    pub order: u32,
    /// Simulated time.
    pub t: f64,
    /// Steps taken.
    pub steps: u64,
    /// Event counters (non-hyperbolic edges, fallbacks, clamps, clips).
    pub counters: Counters,
    /// Prescribed discharges and elevations of the driven boundary edges.
    pub boundaries: DrivenBoundaries,
    /// Take step n with the CFL step (3) of W^{n−1} (the first with that of W^0), as the fused
    /// GPU step does (the paper's lagged Δt, spec §8), instead of that of W^n; a step whose
    /// lagged Δt exceeds the Courant limit 1 of W^n's speeds is taken with W^n's CFL step.
    pub lagged_dt: bool,
    /// With `lagged_dt`: the CFL step of the last real step's edge pass.
    lagged_cfl: Option<f64>,
    /// The depth stop level ([`depth_stop_level`] of the initial state): a layer depth below
    /// it before draining (order 2) and clipping stops the run.
    pub stop_level: f64,
    /// Where the depth stop fired; no step is taken after it.
    pub stop: Option<DepthStop>,
    /// The lowest layer depth before draining (order 2) and clipping of any cell and step so
    /// far (+∞ before the first step): how far a run undershoots, to compare with
    /// [`CpuSolver::stop_level`].
    pub lowest_depth: f64,
    /// (Edge, layer) pairs whose fluctuations the draining factor scaled (order 2), summed
    /// over stages and steps.
    pub drained: u64,
    acc: Vec<[f64; 6]>,
    speed_sum: Vec<f64>,
    /// Each cell's outflow Σ_j |Γ_ij| max(0, G_ij) per layer in the last edge pass (order 2).
    outflow: Vec<[f64; 2]>,
    /// The mass rows of the accumulators before draining (the depth stop's update).
    undrained: Vec<[f64; 2]>,
    /// The last edge pass's fluctuations (left, right) per edge, per unit length.
    fluctuations: Vec<([f64; 6], [f64; 6])>,
    recon: Reconstruction,
}

impl CpuSolver {
    /// A solver on `mesh` with cell depths `depth` and initial state `state` (a mesh without
    /// driven boundary edges).
    pub fn new(
        mesh: &SweMesh,
        depth: Vec<f64>,
        state: Vec<[f64; 6]>,
        scheme: Scheme,
        phys: Physics,
        cfl: f64,
    ) -> Result<CpuSolver> {
        let none = DrivenBoundaries::default();
        Self::new_driven(mesh, depth, state, scheme, phys, cfl, none)
    }

    /// A solver whose mesh may have driven boundary edges (Discharge, Elevation), with their
    /// prescribed values ([`DrivenBoundaries::new`] on the same mesh).
    pub fn new_driven(
        mesh: &SweMesh,
        depth: Vec<f64>,
        state: Vec<[f64; 6]>,
        scheme: Scheme,
        phys: Physics,
        cfl: f64,
        boundaries: DrivenBoundaries,
    ) -> Result<CpuSolver> {
        boundaries.check_mesh(mesh)?;
        let n = mesh.num_cells();
        if depth.len() != n || state.len() != n {
            return Err(Error::Invalid(format!(
                "{} cells but {} depths and {} states",
                n,
                depth.len(),
                state.len()
            )));
        }
        phys.validate()?;
        let recon = Reconstruction::new(mesh, &depth);
        let stop_level = depth_stop_level(&depth, &state, &phys);
        let edges = mesh
            .face_order
            .iter()
            .zip(&recon.edge_slots)
            .map(|(&f, &slots)| {
                let f = f as usize;
                CpuEdge {
                    slots,
                    left: mesh.topo.left[f] as usize,
                    right: mesh.topo.right[f] as usize,
                    nx: mesh.geom.normals[f][0],
                    ny: mesh.geom.normals[f][1],
                    length: mesh.geom.lengths[f],
                    kind: mesh.face_kind[f],
                }
            })
            .collect();
        Ok(CpuSolver {
            edges,
            areas: mesh.geom.areas.clone(),
            depth,
            state,
            scheme,
            phys,
            cfl,
            order: 1,
            t: 0.0,
            steps: 0,
            counters: Counters::default(),
            boundaries,
            lagged_dt: false,
            lagged_cfl: None,
            stop_level,
            stop: None,
            lowest_depth: f64::INFINITY,
            drained: 0,
            acc: vec![[0.0; 6]; n],
            speed_sum: vec![0.0; n],
            outflow: vec![[0.0; 2]; n],
            undrained: vec![[0.0; 2]; n],
            fluctuations: Vec::new(),
            recon,
        })
    }

    /// Edge pass on `state`: every edge's fluctuations ([`CpuSolver::fluctuations`], summed into
    /// the accumulators by [`CpuSolver::accumulate`] once Δt is known) and CFL speeds (spec
    /// §2.4); at order 2 on the reconstructed edge states, with the in-cell terms added to the
    /// accumulators here and each cell's outflow per layer summed for the draining factor.
    fn edge_pass(&mut self, state: &[[f64; 6]]) -> Counters {
        let mut c = Counters::default();
        for a in self.acc.iter_mut() {
            *a = [0.0; 6];
        }
        self.speed_sum.iter_mut().for_each(|s| *s = 0.0);
        self.outflow.iter_mut().for_each(|o| *o = [0.0; 2]);
        self.fluctuations.clear();
        let deltas =
            (self.order == 2).then(|| self.recon.reconstruct(state, &self.depth, &self.phys));
        for (slot, e) in self.edges.iter().enumerate() {
            let interior = e.kind == EdgeKind::Interior && e.right != NO_ELEMENT as usize;
            // q_b or η_b of a driven edge at the stage's time (t^n, then t^n + Δt for Heun's
            // second stage), as swe_boundary_values writes it into the edge.
            let value = match e.kind {
                EdgeKind::Discharge | EdgeKind::Elevation => self
                    .boundaries
                    .value(self.boundaries.slot_driver[slot], self.t),
                _ => 0.0,
            };
            let out = match &deltas {
                Some(d) => {
                    let (out, own) = edge_parts2(
                        &state[e.left],
                        self.depth[e.left],
                        &d[e.left][e.slots[0] as usize],
                        interior.then(|| {
                            (
                                &state[e.right],
                                self.depth[e.right],
                                &d[e.right][e.slots[1] as usize],
                            )
                        }),
                        e.kind,
                        value,
                        e.nx,
                        e.ny,
                        self.scheme,
                        &self.phys,
                    );
                    for (cell, t) in [(e.left, own[0]), (e.right, own[1])] {
                        if cell == e.left || interior {
                            for (k, v) in [1, 2, 4, 5].into_iter().zip(t) {
                                self.acc[cell][k] += e.length * v;
                            }
                        }
                    }
                    for (m, h) in [0, 3].into_iter().enumerate() {
                        let g = e.length * out.left[h];
                        if g > 0.0 {
                            self.outflow[e.left][m] += g;
                        } else if interior {
                            self.outflow[e.right][m] -= g;
                        }
                    }
                    out
                }
                None => {
                    let neighbor = match e.kind {
                        _ if interior => Neighbor::Cell(&state[e.right], self.depth[e.right]),
                        EdgeKind::Open => Neighbor::Open,
                        EdgeKind::Discharge => Neighbor::Discharge(value),
                        EdgeKind::Elevation => Neighbor::Elevation(value),
                        _ => Neighbor::Wall,
                    };
                    edge_contribution(
                        &state[e.left],
                        self.depth[e.left],
                        neighbor,
                        e.nx,
                        e.ny,
                        self.scheme,
                        &self.phys,
                    )
                }
            };
            c.nonhyperbolic += out.nonhyperbolic as u64;
            c.fallback += out.fallback as u64;
            c.chi_clamped += out.chi_clamped as u64;
            self.speed_sum[e.left] += e.length * out.lam_max;
            if interior {
                self.speed_sum[e.right] += e.length * out.lam_max;
            }
            self.fluctuations.push((out.left, out.right));
        }
        c
    }

    /// Add the edges' fluctuations (times |Γ|) to the accumulators for a stage of `dt` on
    /// `state`. At order 2 each layer's rows of an edge are scaled by the draining factor
    /// θ_i ([`drain_factor`]) of the cell its mass flux leaves, on both cells, so no layer
    /// depth goes below zero and mass stays exact; returns the number of (edge, layer) pairs
    /// scaled.
    fn accumulate(&mut self, state: &[[f64; 6]], dt: f64) -> u64 {
        let drains = self.order == 2;
        let theta: Vec<[f64; 2]> = if drains {
            (0..state.len())
                .map(|i| {
                    let s = dt / self.areas[i];
                    [0, 1].map(|m| drain_factor(state[i][3 * m], s * self.outflow[i][m]))
                })
                .collect()
        } else {
            Vec::new()
        };
        let mut scaled = 0;
        self.undrained.iter_mut().for_each(|u| *u = [0.0; 2]);
        for (e, (left, right)) in self.edges.iter().zip(&self.fluctuations) {
            let interior = e.kind == EdgeKind::Interior && e.right != NO_ELEMENT as usize;
            let mut scale = [1.0; 2];
            if drains {
                for m in 0..2 {
                    let upwind = if left[3 * m] > 0.0 {
                        Some(e.left)
                    } else if left[3 * m] < 0.0 && interior {
                        Some(e.right)
                    } else {
                        None
                    };
                    if let Some(i) = upwind {
                        scale[m] = theta[i][m];
                        scaled += (scale[m] < 1.0) as u64;
                    }
                }
            }
            for k in 0..6 {
                let s = e.length * scale[k / 3];
                self.acc[e.left][k] += s * left[k];
                if interior {
                    self.acc[e.right][k] += s * right[k];
                }
            }
            for m in 0..2 {
                self.undrained[e.left][m] += e.length * left[3 * m];
                if interior {
                    self.undrained[e.right][m] += e.length * right[3 * m];
                }
            }
        }
        scaled
    }

    /// The CFL step (3) of the current state: min_i 2γ|V_i| / Σ_j |Γ_ij| ‖D_ij‖∞ (∞ when
    /// nothing moves). Valid after an edge pass.
    fn cfl_dt(&self) -> f64 {
        self.areas
            .iter()
            .zip(&self.speed_sum)
            .filter(|(_, &s)| s > 0.0)
            .map(|(&a, &s)| 2.0 * self.cfl * a / s)
            .fold(f64::INFINITY, f64::min)
    }

    /// One step towards `t_end`: Δt = min(Δt_CFL, t_end − t), and t = t_end exactly when
    /// clamped; Δt_CFL is that of W^n, or with [`CpuSolver::lagged_dt`] that of the state
    /// before the last step. Returns the Δt taken (0 when t ≥ t_end or once the depth stop
    /// fired: [`CpuSolver::stop`]).
    pub fn step(&mut self, t_end: f64) -> f64 {
        let remaining = t_end - self.t;
        if remaining <= 0.0 || self.stop.is_some() {
            return 0.0;
        }
        let start = self.state.clone();
        let mut c = self.edge_pass(&start);
        let current_cfl = self.cfl_dt();
        let mut dt_cfl = if self.lagged_dt {
            self.lagged_cfl.replace(current_cfl).unwrap_or(current_cfl)
        } else {
            current_cfl
        };
        // A lagged Δt above the Courant limit 1 of W^n's own speeds (Δt γ > Δt_CFL(W^n)) is
        // rejected and the step taken with Δt_CFL(W^n), as swe_fused_clock does.
        if dt_cfl.min(remaining) * self.cfl > current_cfl {
            dt_cfl = current_cfl;
            self.counters.rejected += 1;
        }
        let dt = dt_cfl.min(remaining);
        if dt_cfl >= remaining {
            self.t = t_end;
        } else {
            self.t += dt;
        }
        self.steps += 1;
        self.drained += self.accumulate(&start, dt);
        self.apply_update(dt, None);
        // After the depth stop the GPU updates no cell, Heun's second stage included.
        if self.order == 2 && self.stop.is_none() {
            let stage = self.state.clone();
            let c2 = self.edge_pass(&stage);
            self.drained += self.accumulate(&stage, dt);
            c.nonhyperbolic += c2.nonhyperbolic;
            c.fallback += c2.fallback;
            c.chi_clamped += c2.chi_clamped;
            self.apply_update(dt, Some(&start));
        }
        self.counters.add_step(&c);
        dt
    }

    /// W −= Δt/|V| acc, then the depth stop (a layer depth below [`CpuSolver::stop_level`]
    /// before draining and clipping: the lowest such cell and depth are recorded in
    /// [`CpuSolver::stop`]),
    /// the dry-layer rules (clip negative depths, counted; no momentum below κ) and friction;
    /// with `average` (Heun's second stage) the result is averaged with it,
    /// W = ½ (average + W), and the momentum rule applied again.
    fn apply_update(&mut self, dt: f64, average: Option<&[[f64; 6]]>) {
        let kappa = self.phys.dry_tol;
        let film = self.phys.film_depth();
        let dry_rules = |w: &mut [f64; 6], clipped: &mut u64| {
            for h in [0, 3] {
                if w[h] < 0.0 {
                    w[h] = 0.0;
                    *clipped += 1;
                }
                if w[h] < kappa {
                    w[h + 1] = 0.0;
                    w[h + 2] = 0.0;
                } else if w[h] < film {
                    let f = std::f64::consts::SQRT_2 * w[h] * w[h]
                        / (w[h].powi(4) + film.powi(4)).sqrt();
                    w[h + 1] *= f;
                    w[h + 2] *= f;
                }
            }
        };
        for (i, w) in self.state.iter_mut().enumerate() {
            let s = dt / self.areas[i];
            let undrained = self.undrained[i];
            let lowest = (w[0] - s * undrained[0]).min(w[3] - s * undrained[1]);
            for k in 0..6 {
                w[k] -= s * self.acc[i][k];
            }
            self.lowest_depth = self.lowest_depth.min(lowest);
            if lowest < self.stop_level {
                let stop = self.stop.get_or_insert(DepthStop {
                    cell: i,
                    step: self.steps,
                    t: self.t,
                    depth: lowest,
                });
                stop.depth = stop.depth.min(lowest);
            }
            dry_rules(w, &mut self.counters.clipped);
            self.phys.friction.apply(w, dt, &self.phys);
            if let Some(old) = average {
                for k in 0..6 {
                    w[k] = 0.5 * (old[i][k] + w[k]);
                }
                dry_rules(w, &mut self.counters.clipped);
            }
        }
    }

    /// Step until t = `t_end`; returns the number of steps taken.
    pub fn run_to(&mut self, t_end: f64) -> u64 {
        let s0 = self.steps;
        while self.t < t_end {
            if self.step(t_end) == 0.0 {
                break;
            }
        }
        self.steps - s0
    }

    /// Take exactly `n` steps with no time clamp (for GPU comparisons).
    pub fn run_steps(&mut self, n: u64) {
        for _ in 0..n {
            self.step(f64::INFINITY);
        }
    }
}
