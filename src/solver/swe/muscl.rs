//! Second order in space: a limited MUSCL reconstruction on the triangles (the f64 CPU
//! reference of `shaders/swe_reconstruct.wgsl` and `shaders/swe_edge_flux2.wgsl`).
//!
//! **Reconstructed variables** per cell: h1, the interface η2 = h2 − H, and the four velocities
//! u1x, u1y, u2x, u2y (desingularised, spec §10). Reconstructing the surfaces (h1 and η2, so
//! η1 = h1 + η2) keeps the lake at rest exact: at rest their gradients vanish, every edge sees
//! Δη1 = Δη2 = Δh1 = 0 and the fluctuations (spec §3.3) vanish whatever the bottom does.
//!
//! **Gradients**: least squares over the three neighbours, ∇φ_i = Σ_k c_ik (φ_k − φ_i) with
//! c_ik = M_i⁻¹ δ_ik, M_i = Σ_k δ_ik δ_ikᵀ, δ_ik the offset of neighbour k's barycentre (exact
//! for linear fields). Across a boundary edge the neighbour is the cell mirrored at the edge
//! with the cell's own values (a zero-gradient ghost). **Limiter**: Barth–Jespersen, each
//! gradient scaled by α = min_k min(1, (φ_max − φ_i)/(∇φ·d_k)) (φ_min for a negative increment)
//! over the edge midpoints d_k, so the edge values make no new extrema. φ_min/max are taken over
//! the 2-ring (the cell, its face neighbours and theirs): with the face neighbours alone the
//! limiter clips even *linear* data on triangles (an edge midpoint can lie beyond every
//! neighbour's barycentre along the gradient), and the vortex of `tests/swe_order2.rs` (to
//! t = 0.25 s) then converged at 1.79 and 1.66 instead of 1.92 and 1.99. The depth H gets the
//! same limited gradient, once.
//!
//! **Positivity and dry layers**: h2 at an edge is h2_i + (∇η2 + ∇H)·d. A layer that is dry in
//! the cell (h < κ), or whose reconstructed depth would be negative at one of the three edge
//! midpoints, is reconstructed flat (first order: zero depth and velocity slopes; for the lower
//! layer ∇η2 = −∇H). The other layer keeps its slopes. The reconstructed edge depths are
//! therefore never negative, but the PVM-IFCP mass flux itself is not positivity preserving
//! (at wet/dry fronts and where streams collide a stage takes more out of a cell than it
//! holds, whatever Δt: the shelf front of issue 15 still made 2.5e-3 of its lower layer's
//! mass with Δt limited by 3 Δt |Γ_k| λ_k / |V| ≤ 1). So each stage drains
//! ([`drain_factor`]): the rows of a layer on the edges through which a cell would lose more
//! than it holds are scaled down on both cells, which keeps every depth ≥ 0 with no clipping
//! and each layer's mass exact.
//!
//! **Edge term** (Castro, Gallardo & Parés 2006, path-conservative schemes with reconstruction
//! of states): the semi-discrete scheme is
//!
//! dW_i/dt = −1/|V_i| [Σ_j |Γ_ij| D⁻(W_ij⁻, W_ij⁺) + ∫_{V_i} (∇·F(P_i) − B(P_i)∇P_i − S(P_i)∇H)]
//!
//! with P_i the linear reconstruction. In the momentum rows of layer 1 the integrand is
//! ∇·(q1 ⊗ u1) + g h1 ∇(h1 + h2 − H) = ∇·(q1 ⊗ u1) + g h1 ∇η1, of layer 2
//! ∇·(q2 ⊗ u2) + g h2 (∇η2 + r ∇h1). The advective part goes by the divergence theorem with the
//! edge midpoint rule, Σ_j |Γ_ij| [q⁻ (u⁻·n) − q_i (u_i·n)] (the subtracted term sums to 0 on a
//! closed cell and makes each edge's share vanish for a flat reconstruction); the pressure part
//! is linear in x, so the barycentre rule is exact: |V_i| g h1_i ∇η1 = Σ_j |Γ_ij| g h1_i (η1⁻ −
//! η1_i) n_ij (exact for linear η1). Both are per-edge terms, so the edge kernel adds them to
//! its cells' accumulators, and at rest every term is exactly zero. The mass rows stay in flux
//! form (G = qn⁻ + D⁻ of the depth row), so mass is conserved exactly as at first order.

// Index loops over the 3 slots and 6 variables mirror the WGSL kernels line by line.
#![allow(clippy::needless_range_loop)]

use super::flux::{edge_contribution, EdgeContribution, Neighbor};
use super::mesh::{EdgeKind, SweMesh};
use super::{Physics, Scheme};
use crate::mesh::NO_ELEMENT;

/// Reconstructed increments of one cell at one of its edge midpoints:
/// (δh1, δu1x, δu1y, δh2, δu2x, δu2y, δH, δη2), the GPU's two vec4 per slot.
pub type Deltas = [f64; 8];

/// Static reconstruction data of one cell (GPU layout in [`Reconstruction::gpu_cells`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ReconCell {
    /// Neighbour through the cell's k-th face ([`NO_ELEMENT`] on the boundary: mirror ghost).
    pub neighbors: [u32; 3],
    /// Least-squares weights c_k: ∇φ = Σ_k c_k (φ_k − φ_i).
    pub weights: [[f64; 2]; 3],
    /// Edge midpoint minus barycentre, d_k, per face.
    pub offsets: [[f64; 2]; 3],
    /// Limited gradient of the depth H (static).
    pub depth_slope: [f64; 2],
}

/// The mesh data of the reconstruction: per cell ([`ReconCell`]) and, per edge in
/// `face_order`, the slot (face position 0..2) of the edge in its left and right cell.
#[derive(Clone, Debug)]
pub struct Reconstruction {
    pub cells: Vec<ReconCell>,
    /// `[slot in left, slot in right]` per edge in `face_order` (right: u32::MAX on boundaries).
    pub edge_slots: Vec<[u32; 2]>,
}

/// Barth–Jespersen factor of one variable: the largest α ≤ 1 with φ_i + α Δ_k inside
/// [φ_min, φ_max] for every edge increment Δ_k = ∇φ·d_k.
pub fn barth_jespersen(phi: f64, lo: f64, hi: f64, increments: &[f64; 3]) -> f64 {
    let mut alpha: f64 = 1.0;
    for &d in increments {
        if d > 0.0 {
            alpha = alpha.min((hi - phi) / d);
        } else if d < 0.0 {
            alpha = alpha.min((lo - phi) / d);
        }
    }
    alpha.max(0.0)
}

/// Least-squares gradient Σ_k c_k (φ_k − φ_i) of one variable, limited by Barth–Jespersen
/// within `bounds` (the 2-ring's min and max).
fn limited_gradient(
    cell: &ReconCell,
    phi: f64,
    neighbours: &[f64; 3],
    bounds: (f64, f64),
) -> [f64; 2] {
    let mut g = [0.0; 2];
    let (lo, hi) = bounds;
    for k in 0..3 {
        let d = neighbours[k] - phi;
        g[0] += cell.weights[k][0] * d;
        g[1] += cell.weights[k][1] * d;
    }
    let inc = [0, 1, 2].map(|k| g[0] * cell.offsets[k][0] + g[1] * cell.offsets[k][1]);
    let a = barth_jespersen(phi, lo, hi, &inc);
    [a * g[0], a * g[1]]
}

fn dot(g: [f64; 2], d: [f64; 2]) -> f64 {
    g[0] * d[0] + g[1] * d[1]
}

impl Reconstruction {
    /// Neighbours, least-squares weights, edge offsets and the limited depth gradient of every
    /// cell of `mesh` with depths `depth`.
    pub fn new(mesh: &SweMesh, depth: &[f64]) -> Reconstruction {
        let g = &mesh.geom;
        let topo = &mesh.topo;
        let mut cells: Vec<ReconCell> = (0..mesh.num_cells())
            .map(|c| {
                let x = g.centroids[c];
                let mut cell = ReconCell {
                    neighbors: [NO_ELEMENT; 3],
                    weights: [[0.0; 2]; 3],
                    offsets: [[0.0; 2]; 3],
                    depth_slope: [0.0; 2],
                };
                let mut delta = [[0.0; 2]; 3];
                for (k, &f) in topo.element_faces.row(c).iter().enumerate().take(3) {
                    let f = f as usize;
                    let m = g.midpoints[f];
                    cell.offsets[k] = [m[0] - x[0], m[1] - x[1]];
                    let other = if topo.left[f] as usize == c {
                        topo.right[f]
                    } else {
                        topo.left[f]
                    };
                    cell.neighbors[k] = other;
                    delta[k] = if other == NO_ELEMENT {
                        // Mirror of the barycentre at the edge line: 2 ((m − x)·n) n.
                        let n = g.normals[f];
                        let s = 2.0 * dot(cell.offsets[k], n);
                        [s * n[0], s * n[1]]
                    } else {
                        let y = g.centroids[other as usize];
                        [y[0] - x[0], y[1] - x[1]]
                    };
                }
                let (mut a, mut b, mut d) = (0.0, 0.0, 0.0);
                for v in &delta {
                    a += v[0] * v[0];
                    b += v[0] * v[1];
                    d += v[1] * v[1];
                }
                let det = a * d - b * b;
                if det > 1e-12 * (a * d).max(f64::MIN_POSITIVE) {
                    for k in 0..3 {
                        let v = delta[k];
                        cell.weights[k] =
                            [(d * v[0] - b * v[1]) / det, (a * v[1] - b * v[0]) / det];
                    }
                }
                cell
            })
            .collect();
        let slopes: Vec<[f64; 2]> = cells
            .iter()
            .enumerate()
            .map(|(c, cell)| {
                let b = ring_bounds(&cells, c, |j| depth[j]);
                limited_gradient(cell, depth[c], &neighbour_values(cell, depth, c), b)
            })
            .collect();
        for (cell, s) in cells.iter_mut().zip(slopes) {
            cell.depth_slope = s;
        }
        let slot = |c: u32, f: u32| -> u32 {
            if c == NO_ELEMENT {
                return u32::MAX;
            }
            topo.element_faces
                .row(c as usize)
                .iter()
                .position(|&x| x == f)
                .map_or(u32::MAX, |k| k as u32)
        };
        let edge_slots = mesh
            .face_order
            .iter()
            .map(|&f| {
                let fu = f as usize;
                [slot(topo.left[fu], f), slot(topo.right[fu], f)]
            })
            .collect();
        Reconstruction { cells, edge_slots }
    }

    /// Per cell, four vec4 of f32: (c0, c1), (c2, ∇H), (d0, d1), (d2, 0, 0).
    pub fn gpu_cells(&self) -> Vec<[f32; 4]> {
        let f = |v: f64| v as f32;
        let mut out = Vec::with_capacity(4 * self.cells.len());
        for c in &self.cells {
            let (w, d, s) = (c.weights, c.offsets, c.depth_slope);
            out.push([f(w[0][0]), f(w[0][1]), f(w[1][0]), f(w[1][1])]);
            out.push([f(w[2][0]), f(w[2][1]), f(s[0]), f(s[1])]);
            out.push([f(d[0][0]), f(d[0][1]), f(d[1][0]), f(d[1][1])]);
            out.push([f(d[2][0]), f(d[2][1]), 0.0, 0.0]);
        }
        out
    }

    /// Per cell the three neighbours (u32::MAX for a boundary ghost) and a pad word.
    pub fn gpu_neighbors(&self) -> Vec<[u32; 4]> {
        self.cells
            .iter()
            .map(|c| [c.neighbors[0], c.neighbors[1], c.neighbors[2], 0])
            .collect()
    }

    /// Per edge in `face_order`, the index of its increments in the GPU deltas buffer (two
    /// vec4 per slot, six per cell): 6 cell + 2 slot for the left and right cell.
    pub fn gpu_edge_slots(&self, mesh: &SweMesh) -> Vec<[u32; 2]> {
        mesh.face_order
            .iter()
            .zip(&self.edge_slots)
            .map(|(&f, s)| {
                let f = f as usize;
                let at = |c: u32, k: u32| {
                    if c == NO_ELEMENT || k == u32::MAX {
                        u32::MAX
                    } else {
                        6 * c + 2 * k
                    }
                };
                [at(mesh.topo.left[f], s[0]), at(mesh.topo.right[f], s[1])]
            })
            .collect()
    }

    /// The limited increments of every cell at its three edge midpoints (spec of the module).
    pub fn reconstruct(
        &self,
        state: &[[f64; 6]],
        depth: &[f64],
        phys: &Physics,
    ) -> Vec<[Deltas; 3]> {
        let kappa = phys.dry_tol;
        let vars: Vec<[f64; 6]> = state
            .iter()
            .zip(depth)
            .map(|(w, &hh)| reconstructed_variables(w, hh, kappa))
            .collect();
        self.cells
            .iter()
            .enumerate()
            .map(|(c, cell)| reconstruct_cell(&self.cells, cell, c, &vars, state[c], phys))
            .collect()
    }
}

/// φ at the three neighbours of cell `c` (the cell's own value for a boundary ghost).
fn neighbour_values(cell: &ReconCell, phi: &[f64], c: usize) -> [f64; 3] {
    cell.neighbors.map(|j| {
        if j == NO_ELEMENT {
            phi[c]
        } else {
            phi[j as usize]
        }
    })
}

/// The variables the reconstruction works on: (h1, η2 = h2 − H, u1x, u1y, u2x, u2y), with
/// desingularised velocities u = q/h* (spec §10).
pub fn reconstructed_variables(w: &[f64; 6], depth: f64, kappa: f64) -> [f64; 6] {
    let d1 = super::flux::desingularised_depth(w[0], kappa);
    let d2 = super::flux::desingularised_depth(w[3], kappa);
    [
        w[0],
        w[3] - depth,
        w[1] / d1,
        w[2] / d1,
        w[4] / d2,
        w[5] / d2,
    ]
}

/// Bounds (min, max) of φ over cell `c`, its face neighbours and theirs (the 2-ring).
fn ring_bounds(cells: &[ReconCell], c: usize, phi: impl Fn(usize) -> f64) -> (f64, f64) {
    let (mut lo, mut hi) = (phi(c), phi(c));
    for &j in &cells[c].neighbors {
        if j == NO_ELEMENT {
            continue;
        }
        for &m in cells[j as usize].neighbors.iter().chain([&j]) {
            if m != NO_ELEMENT {
                lo = lo.min(phi(m as usize));
                hi = hi.max(phi(m as usize));
            }
        }
    }
    (lo, hi)
}

fn reconstruct_cell(
    cells: &[ReconCell],
    cell: &ReconCell,
    c: usize,
    vars: &[[f64; 6]],
    w: [f64; 6],
    phys: &Physics,
) -> [Deltas; 3] {
    let mut grad = [[0.0; 2]; 6];
    for v in 0..6 {
        let around = cell.neighbors.map(|j| {
            if j == NO_ELEMENT {
                vars[c][v]
            } else {
                vars[j as usize][v]
            }
        });
        let b = ring_bounds(cells, c, |j| vars[j][v]);
        grad[v] = limited_gradient(cell, vars[c][v], &around, b);
    }
    let gh = cell.depth_slope;
    let mut gh2 = [grad[1][0] + gh[0], grad[1][1] + gh[1]];
    let (h1, h2) = (w[0], w[3]);
    let kappa = phys.dry_tol;
    let layer1_flat = h1 < kappa || cell.offsets.iter().any(|&d| h1 + dot(grad[0], d) < 0.0);
    let layer2_flat = h2 < kappa || cell.offsets.iter().any(|&d| h2 + dot(gh2, d) < 0.0);
    if layer1_flat {
        for v in [0, 2, 3] {
            grad[v] = [0.0; 2];
        }
    }
    if layer2_flat {
        grad[1] = [-gh[0], -gh[1]];
        gh2 = [0.0; 2];
        grad[4] = [0.0; 2];
        grad[5] = [0.0; 2];
    }
    cell.offsets.map(|d| {
        [
            dot(grad[0], d),
            dot(grad[2], d),
            dot(grad[3], d),
            dot(gh2, d),
            dot(grad[4], d),
            dot(grad[5], d),
            dot(gh, d),
            dot(grad[1], d),
        ]
    })
}

/// The state and depth of a cell reconstructed at an edge midpoint: h + δh, u + δu,
/// q = h u per layer, H + δH.
pub fn state_at_edge(w: &[f64; 6], depth: f64, d: &Deltas, kappa: f64) -> ([f64; 6], f64) {
    let v = reconstructed_variables(w, depth, kappa);
    let h1 = w[0] + d[0];
    let h2 = w[3] + d[3];
    (
        [
            h1,
            h1 * (v[2] + d[1]),
            h1 * (v[3] + d[2]),
            h2,
            h2 * (v[4] + d[4]),
            h2 * (v[5] + d[5]),
        ],
        depth + d[6],
    )
}

/// The in-cell terms of one cell's share of an edge with outward unit normal n, per unit edge
/// length: the advective flux difference q⁻ (u⁻·n) − q_i (u_i·n) per layer (both from the same
/// h·u products, so a flat reconstruction gives exactly 0) and the pressure terms
/// g h1_i δη1 n and g h2_i (δη2 + r δh1) n. Returns (q1x, q1y, q2x, q2y).
pub fn in_cell_terms(
    w: &[f64; 6],
    depth: f64,
    d: &Deltas,
    nx: f64,
    ny: f64,
    phys: &Physics,
) -> [f64; 4] {
    let v = reconstructed_variables(w, depth, phys.dry_tol);
    let advective = |h: f64, ux: f64, uy: f64| {
        let un = ux * nx + uy * ny;
        [h * ux * un, h * uy * un]
    };
    let mut out = [0.0; 4];
    for k in 0..2 {
        let (h, ux, uy) = (w[3 * k], v[2 + 2 * k], v[3 + 2 * k]);
        let (dh, dux, duy) = (d[3 * k], d[3 * k + 1], d[3 * k + 2]);
        let edge = advective(h + dh, ux + dux, uy + duy);
        let centre = advective(h, ux, uy);
        let slope = if k == 0 {
            d[0] + d[7]
        } else {
            d[7] + phys.r * d[0]
        };
        let p = phys.g * h * slope;
        out[2 * k] = edge[0] - centre[0] + p * nx;
        out[2 * k + 1] = edge[1] - centre[1] + p * ny;
    }
    out
}

/// The second-order edge kernel: the edge kernel of [`edge_contribution`] on the states
/// reconstructed at the edge midpoint (`dl`, `dr`: the increments of the left and right cell
/// at this edge), plus each cell's in-cell terms ([`in_cell_terms`]). A boundary edge builds
/// its ghost from the reconstructed left state: a wall or open edge as at first order, a driven
/// edge ([`EdgeKind::Discharge`], [`EdgeKind::Elevation`]) by [`super::flux::driven_ghost`] with
/// the edge's `value` of this step (q_b or η_b), so the characteristic treatment sees the state
/// at the edge midpoint.
#[allow(clippy::too_many_arguments)]
pub fn edge_contribution2(
    wl: &[f64; 6],
    hl: f64,
    dl: &Deltas,
    right: Option<(&[f64; 6], f64, &Deltas)>,
    kind: EdgeKind,
    value: f64,
    nx: f64,
    ny: f64,
    scheme: Scheme,
    phys: &Physics,
) -> EdgeContribution {
    let (mut out, own) = edge_parts2(wl, hl, dl, right, kind, value, nx, ny, scheme, phys);
    let add = |acc: &mut [f64; 6], t: [f64; 4]| {
        acc[1] += t[0];
        acc[2] += t[1];
        acc[4] += t[2];
        acc[5] += t[3];
    };
    add(&mut out.left, own[0]);
    add(&mut out.right, own[1]);
    out
}

/// [`edge_contribution2`] in its two parts: the fluctuations of the edge on the reconstructed
/// states (what the draining step scales, [`drain_factor`]) and the in-cell terms of the left
/// and the right cell ([`in_cell_terms`]; zero for the right of a boundary edge), which belong
/// to the cells' own integrals and are not scaled.
#[allow(clippy::too_many_arguments)]
pub fn edge_parts2(
    wl: &[f64; 6],
    hl: f64,
    dl: &Deltas,
    right: Option<(&[f64; 6], f64, &Deltas)>,
    kind: EdgeKind,
    value: f64,
    nx: f64,
    ny: f64,
    scheme: Scheme,
    phys: &Physics,
) -> (EdgeContribution, [[f64; 4]; 2]) {
    let kappa = phys.dry_tol;
    let (el, hel) = state_at_edge(wl, hl, dl, kappa);
    let er = right.map(|(w, h, d)| state_at_edge(w, h, d, kappa));
    let neighbor = match (kind, &er) {
        (EdgeKind::Interior, Some((w, h))) => Neighbor::Cell(w, *h),
        (EdgeKind::Open, _) => Neighbor::Open,
        (EdgeKind::Discharge, _) => Neighbor::Discharge(value),
        (EdgeKind::Elevation, _) => Neighbor::Elevation(value),
        _ => Neighbor::Wall,
    };
    let out = edge_contribution(&el, hel, neighbor, nx, ny, scheme, phys);
    let mut own = [in_cell_terms(wl, hl, dl, nx, ny, phys), [0.0; 4]];
    if let (Some((w, h, d)), Neighbor::Cell(..)) = (right, neighbor) {
        own[1] = in_cell_terms(w, h, d, -nx, -ny, phys);
    }
    (out, own)
}

/// Margin δ of [`drain_factor`]: a draining layer keeps δ of its depth, so that the rounding
/// of the f32 update on the GPU (where a fix recomputes fluxes that the pass summed, in
/// another compiled kernel) cannot take it below zero: with 1e-5 the dam break over dry land
/// at order 2 with outputs every 0.1 s still clipped 1 depth (fused, lavapipe), with 1e-3 none
/// of the tests' runs clips. A near-dry cell keeping 0.1% of its depth changes nothing else.
pub const DRAIN_MARGIN: f64 = 1e-3;

/// The draining factor θ ∈ [0, 1] of one layer of a cell for one forward-Euler stage of Δt
/// (the draining time step of Bollermann, Chen, Kurganov & Noelle 2013): with the layer's depth
/// h_i and the depth its outflow would take out, `drop` = Δt/|V_i| O_i with
/// O_i = Σ_j |Γ_ij| max(0, G_ij) (G the mass flux out of the cell), θ = (1 − δ) h_i / drop
/// where the stage would take out more than (1 − δ) h_i, else 1. Every edge whose mass flux
/// leaves cell i (i is its upwind cell for that layer) has the layer's three rows of its
/// fluctuations scaled by θ_i, on both of its cells: the edge acts for θ Δt only. So no layer
/// depth goes negative, whatever the flux and Δt, and the edge's mass leaves one cell as it
/// enters the other (mass is conserved exactly, no clipping). Where no cell drains θ = 1 and
/// the scheme is unchanged. Compared as depths, in the update's own scale, so that f32
/// denormals flushed to zero on a GPU cannot hide a drop that the update then subtracts.
pub fn drain_factor(depth: f64, drop: f64) -> f64 {
    let have = (1.0 - DRAIN_MARGIN) * depth.max(0.0);
    if drop > have {
        have / drop
    } else {
        1.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::order::{prepare, Ordering, PrepareOptions};
    use crate::solver::swe::mesh::criss_cross;

    fn mesh(n: usize) -> SweMesh {
        let m = criss_cross(n).unwrap();
        let ordered = prepare(&m, &PrepareOptions::new(Ordering::Original, 0)).unwrap();
        SweMesh::new(&ordered, |_| EdgeKind::Wall).unwrap()
    }

    /// Linear data away from the boundary is reconstructed exactly: the least-squares gradient
    /// is exact and the 2-ring bounds do not clip it.
    #[test]
    fn linear_fields_are_reconstructed_exactly_inside() {
        let sm = mesh(8);
        let depth: Vec<f64> = sm.geom.centroids.iter().map(|c| 3.0 + 0.1 * c[0]).collect();
        let lin = |c: [f64; 2]| 1.0 + 0.05 * c[0] - 0.03 * c[1];
        let state: Vec<[f64; 6]> = sm
            .geom
            .centroids
            .iter()
            .map(|&c| [lin(c), 0.0, 0.0, 2.0, 0.0, 0.0])
            .collect();
        let r = Reconstruction::new(&sm, &depth);
        let d = r.reconstruct(&state, &depth, &Physics::default());
        let mut checked = 0;
        for (c, cell) in r.cells.iter().enumerate() {
            let inner = cell.neighbors.iter().all(|&j| {
                j != NO_ELEMENT
                    && r.cells[j as usize]
                        .neighbors
                        .iter()
                        .all(|&m| m != NO_ELEMENT)
            });
            if !inner {
                continue;
            }
            for k in 0..3 {
                let o = cell.offsets[k];
                assert!(
                    (d[c][k][0] - (0.05 * o[0] - 0.03 * o[1])).abs() < 1e-13,
                    "cell {c}"
                );
                assert!((d[c][k][6] - 0.1 * o[0]).abs() < 1e-13, "cell {c}: H");
                // η2 = h2 − H is the reconstructed variable, so h2 follows −H's slope.
                assert!((d[c][k][3]).abs() < 1e-13, "cell {c}: h2 {}", d[c][k][3]);
            }
            checked += 1;
        }
        assert!(checked > 100, "{checked}");
    }

    /// The draining factor leaves a layer alone while its outflow takes out at most
    /// (1 − δ) of its depth, scales the outflow to exactly that otherwise, and stops all
    /// outflow of a dry layer.
    #[test]
    fn drain_factor_takes_out_at_most_the_water_there_is() {
        let keep = 1.0 - DRAIN_MARGIN;
        assert_eq!(drain_factor(2.0, 0.0), 1.0);
        assert_eq!(drain_factor(2.0, 2.0 * keep), 1.0);
        for drop in [2.0, 3.0, 1e6] {
            let theta = drain_factor(2.0, drop);
            assert!(
                theta < 1.0 && (theta * drop - 2.0 * keep).abs() < 1e-12,
                "{drop}"
            );
        }
        assert_eq!(drain_factor(0.0, 1e-9), 0.0);
        assert_eq!(drain_factor(-1e-12, 1e-9), 0.0);
        assert_eq!(drain_factor(0.0, 0.0), 1.0);
    }

    /// Limited edge values stay within the 2-ring's bounds, and a flat (zero) increment gives
    /// exactly zero in-cell terms.
    #[test]
    fn limited_values_make_no_new_extrema() {
        let sm = mesh(6);
        let depth = vec![2.0; sm.num_cells()];
        let state: Vec<[f64; 6]> = sm
            .geom
            .centroids
            .iter()
            .map(|c| {
                let h1 = if c[0] * c[1] > 0.0 { 1.5 } else { 0.5 } + 0.1 * c[1].sin();
                [h1, 0.3 * h1 * c[0].cos(), 0.0, 1.0, 0.0, -0.2]
            })
            .collect();
        let r = Reconstruction::new(&sm, &depth);
        let phys = Physics::default();
        let d = r.reconstruct(&state, &depth, &phys);
        for (c, slots) in d.iter().enumerate() {
            let (lo, hi) = ring_bounds(&r.cells, c, |j| state[j][0]);
            for s in slots {
                let h = state[c][0] + s[0];
                assert!(
                    h >= lo - 1e-12 && h <= hi + 1e-12,
                    "cell {c}: {h} not in [{lo}, {hi}]"
                );
            }
            let t = in_cell_terms(&state[c], depth[c], &[0.0; 8], 0.6, 0.8, &phys);
            assert_eq!(t, [0.0; 4]);
        }
    }
}
