//! The f64 CPU reference solver: the same edge kernel ([`super::flux::edge_contribution`]), the
//! same accumulate-then-update structure and the same time-step clamp as the GPU driver, so the
//! tests can judge the f32 GPU results against it.

// Index loops over the 4 and 6 state components mirror the WGSL kernel line by line.
#![allow(clippy::needless_range_loop)]

use super::boundary::DrivenBoundaries;
use super::flux::{edge_contribution, Neighbor};
use super::mesh::{EdgeKind, SweMesh};
use super::{Counters, Physics, Scheme};
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
    /// Simulated time.
    pub t: f64,
    /// Steps taken.
    pub steps: u64,
    /// Event counters (non-hyperbolic edges, fallbacks, clamps, clips).
    pub counters: Counters,
    /// Prescribed discharges and elevations of the driven boundary edges.
    pub boundaries: DrivenBoundaries,
    acc: Vec<[f64; 6]>,
    speed_sum: Vec<f64>,
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
        let edges = mesh
            .face_order
            .iter()
            .map(|&f| {
                let f = f as usize;
                CpuEdge {
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
            t: 0.0,
            steps: 0,
            counters: Counters::default(),
            boundaries,
            acc: vec![[0.0; 6]; n],
            speed_sum: vec![0.0; n],
        })
    }

    /// Edge pass: accumulate every edge's contributions and CFL speeds (spec §2.4).
    fn edge_pass(&mut self) -> Counters {
        let mut c = Counters::default();
        for a in self.acc.iter_mut() {
            *a = [0.0; 6];
        }
        self.speed_sum.iter_mut().for_each(|s| *s = 0.0);
        for (slot, e) in self.edges.iter().enumerate() {
            let driven = |kind: fn(f64) -> Neighbor<'static>| {
                kind(
                    self.boundaries
                        .value(self.boundaries.slot_driver[slot], self.t),
                )
            };
            let neighbor = match e.kind {
                EdgeKind::Interior if e.right != NO_ELEMENT as usize => {
                    Neighbor::Cell(&self.state[e.right], self.depth[e.right])
                }
                EdgeKind::Open => Neighbor::Open,
                EdgeKind::Discharge => driven(Neighbor::Discharge),
                EdgeKind::Elevation => driven(Neighbor::Elevation),
                _ => Neighbor::Wall,
            };
            let out = edge_contribution(
                &self.state[e.left],
                self.depth[e.left],
                neighbor,
                e.nx,
                e.ny,
                self.scheme,
                &self.phys,
            );
            c.nonhyperbolic += out.nonhyperbolic as u64;
            c.fallback += out.fallback as u64;
            c.chi_clamped += out.chi_clamped as u64;
            for k in 0..6 {
                self.acc[e.left][k] += e.length * out.left[k];
            }
            self.speed_sum[e.left] += e.length * out.lam_max;
            if matches!(neighbor, Neighbor::Cell(..)) {
                for k in 0..6 {
                    self.acc[e.right][k] += e.length * out.right[k];
                }
                self.speed_sum[e.right] += e.length * out.lam_max;
            }
        }
        c
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
    /// clamped. Returns the Δt taken (0 when t ≥ t_end).
    pub fn step(&mut self, t_end: f64) -> f64 {
        let remaining = t_end - self.t;
        if remaining <= 0.0 {
            return 0.0;
        }
        let c = self.edge_pass();
        let dt_cfl = self.cfl_dt();
        let dt = dt_cfl.min(remaining);
        if dt_cfl >= remaining {
            self.t = t_end;
        } else {
            self.t += dt;
        }
        self.steps += 1;
        self.counters.add_step(&c);
        let kappa = self.phys.dry_tol;
        for (i, w) in self.state.iter_mut().enumerate() {
            let s = dt / self.areas[i];
            for k in 0..6 {
                w[k] -= s * self.acc[i][k];
            }
            for h in [0, 3] {
                if w[h] < 0.0 {
                    w[h] = 0.0;
                    self.counters.clipped += 1;
                }
                if w[h] < kappa {
                    w[h + 1] = 0.0;
                    w[h + 2] = 0.0;
                }
            }
        }
        dt
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
