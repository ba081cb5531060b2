//! Cavities, the color schedule and the f64 reference of one smoothing sweep, written to be
//! read side by side with `shaders/common/smooth_relocate.wgsl`: the same arithmetic per
//! neighbour and per cavity triangle. The kernel visits them along the vertex's link in its own
//! numbering ([`super::layout`]); neighbour sums may thus add in another order (f32 rounding
//! only), the triangle tests give identical results in any order and corner order.
//!
//! [`relocate`] computes, for a free vertex `p` with cavity neighbours `y_l`,
//! `A = sum M_l`, `r = q - A p = sum M_l (y_l - p)` (`M_l` at the edge midpoint), then the step
//! `d = w (D + A)^{-1} r` (interior) or `d = w (t.r) / (2 t^T A t) t` (boundary line with unit
//! tangent `t`), and accepts `p + d / 2^k` for the smallest `k <= max_halvings` for which every
//! cavity triangle keeps its orientation and `2 area > min_shape * sum l^2`, and the worst shape
//! of the cavity measured in its metric stays above `min(its old value, shape_floor)`
//! ([`cavity_ok`]); otherwise the vertex stays. The last condition is what keeps the minimum
//! element quality from collapsing: the relocation equalises metric edge lengths, which on its
//! own can flatten a triangle at a corner of the cavity. Since a cavity triangle cannot flip, an interior vertex stays inside its cavity and a
//! sliding vertex between its two boundary neighbours: no vertex leaves the domain.

use super::metric::Sym2;
use super::SmoothParams;
use crate::color::vertices::{color_vertices, VertexOrder};
use crate::error::{Error, Result};
use crate::mesh::{Csr, Mesh, Topology};

/// How a vertex may move.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VertexKind {
    /// Free in the plane.
    Interior,
    /// On a straight boundary line between boundary neighbours `a` and `b` (same tag on both
    /// boundary edges): slides along `b - a`.
    Sliding { a: u32, b: u32 },
    /// Corner, tag change, curved boundary or non-manifold boundary vertex: never moves.
    Fixed,
}

/// Relative tolerance of the collinearity test of a boundary vertex's two boundary edges:
/// `|e1 x e2| <= 1e-9 |e1| |e2|`.
const COLLINEAR_TOL: f64 = 1e-9;

/// What the sweep needs of the mesh: neighbours, incident triangles and vertex kinds.
#[derive(Clone, Debug)]
pub struct SmoothTopology {
    pub neighbors: Csr,
    pub vertex_elements: Csr,
    pub triangles: Vec<[u32; 3]>,
    pub kind: Vec<VertexKind>,
}

impl SmoothTopology {
    /// Build from a 2D triangle mesh (errors otherwise).
    pub fn build(mesh: &Mesh) -> Result<SmoothTopology> {
        let triangles = mesh.planar_triangles("vertex smoothing")?;
        let topo = Topology::build(mesh)?;
        let n = mesh.num_points();
        let mut bedges: Vec<Vec<(u32, i32)>> = vec![Vec::new(); n];
        for f in 0..topo.num_faces() {
            if topo.is_boundary(f) {
                let fv = topo.face_vertices.row(f);
                let tag = topo.boundary_tag[f];
                bedges[fv[0] as usize].push((fv[1], tag));
                bedges[fv[1] as usize].push((fv[0], tag));
            }
        }
        let p = &mesh.points;
        let kind = bedges
            .iter()
            .enumerate()
            .map(|(v, e)| match e.as_slice() {
                [] => VertexKind::Interior,
                [(a, ta), (b, tb)] if ta == tb => {
                    let d = |u: u32| [p[u as usize][0] - p[v][0], p[u as usize][1] - p[v][1]];
                    let (e1, e2) = (d(*a), d(*b));
                    let cross = e1[0] * e2[1] - e1[1] * e2[0];
                    let dot = e1[0] * e2[0] + e1[1] * e2[1];
                    let norms = e1[0].hypot(e1[1]) * e2[0].hypot(e2[1]);
                    if dot < 0.0 && cross.abs() <= COLLINEAR_TOL * norms {
                        VertexKind::Sliding { a: *a, b: *b }
                    } else {
                        VertexKind::Fixed
                    }
                }
                _ => VertexKind::Fixed,
            })
            .collect();
        Ok(SmoothTopology {
            neighbors: topo.vertex_neighbors,
            vertex_elements: topo.vertex_elements,
            triangles,
            kind,
        })
    }

    pub fn num_vertices(&self) -> usize {
        self.kind.len()
    }

    /// Coloring classes: 0 interior, 1 sliding boundary, 2 fixed.
    pub fn classes(&self) -> Vec<u32> {
        self.kind
            .iter()
            .map(|k| match k {
                VertexKind::Interior => 0,
                VertexKind::Sliding { .. } => 1,
                VertexKind::Fixed => 2,
            })
            .collect()
    }

    /// Number of vertices that may move.
    pub fn num_free(&self) -> usize {
        self.kind
            .iter()
            .filter(|k| **k != VertexKind::Fixed)
            .count()
    }
}

/// The parallel schedule: free vertices grouped by color, interior colors first, then the
/// boundary colors, so each dispatch runs one code path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Schedule {
    /// Free vertices, color by color.
    pub order: Vec<u32>,
    /// Color `c` is `order[offsets[c]..offsets[c + 1]]`.
    pub offsets: Vec<u32>,
    /// Colors `first_boundary_color..` hold sliding boundary vertices.
    pub first_boundary_color: usize,
}

impl Schedule {
    /// From any vertex coloring: checks that no two neighbouring free vertices share a color
    /// and that no color mixes interior and boundary vertices; fixed vertices are left out.
    pub fn from_colors(topo: &SmoothTopology, colors: &[u32]) -> Result<Schedule> {
        let n = topo.num_vertices();
        if colors.len() != n {
            return Err(Error::Invalid(format!(
                "{} colors for {n} vertices",
                colors.len()
            )));
        }
        if let Some(&c) = colors.iter().find(|&&c| c as usize >= n) {
            return Err(Error::Invalid(format!(
                "color {c} for {n} vertices: a coloring needs fewer colors than vertices"
            )));
        }
        let class = topo.classes();
        let ncol = colors.iter().map(|&c| c as usize + 1).max().unwrap_or(0);
        let mut color_class = vec![u32::MAX; ncol];
        for v in 0..n {
            if class[v] == 2 {
                continue;
            }
            let c = colors[v] as usize;
            if color_class[c] != u32::MAX && color_class[c] != class[v] {
                return Err(Error::Invalid(format!(
                    "color {c} holds both interior and boundary vertices (vertex {v})"
                )));
            }
            color_class[c] = class[v];
            if let Some(&u) = topo
                .neighbors
                .row(v)
                .iter()
                .find(|&&u| class[u as usize] != 2 && colors[u as usize] == colors[v])
            {
                return Err(Error::Invalid(format!(
                    "neighbouring vertices {v} and {u} share color {c}"
                )));
            }
        }
        // New numbering: interior colors, then boundary colors, empty colors dropped.
        let mut renum = vec![u32::MAX; ncol];
        let mut next = 0u32;
        for want in [0, 1] {
            for c in 0..ncol {
                if color_class[c] == want {
                    renum[c] = next;
                    next += 1;
                }
            }
        }
        let first_boundary_color = color_class.iter().filter(|&&k| k == 0).count();
        let mut keyed: Vec<(u32, u32)> = (0..n)
            .filter(|&v| class[v] != 2)
            .map(|v| (renum[colors[v] as usize], v as u32))
            .collect();
        keyed.sort_unstable();
        let mut offsets = vec![0u32; next as usize + 1];
        for &(c, _) in &keyed {
            offsets[c as usize + 1] += 1;
        }
        for c in 0..next as usize {
            offsets[c + 1] += offsets[c];
        }
        Ok(Schedule {
            order: keyed.into_iter().map(|(_, v)| v).collect(),
            offsets,
            first_boundary_color,
        })
    }

    /// The schedule of the sequential greedy coloring with boundary classes.
    pub fn greedy(topo: &SmoothTopology) -> Result<Schedule> {
        let boundary: Vec<bool> = topo
            .kind
            .iter()
            .map(|k| *k != VertexKind::Interior)
            .collect();
        let c = color_vertices(&topo.neighbors, VertexOrder::Natural, Some(&boundary))?;
        Self::from_colors(topo, &c.colors)
    }

    pub fn num_colors(&self) -> usize {
        self.offsets.len() - 1
    }

    /// A color per vertex of `n` that [`Schedule::from_colors`] turns back into this schedule
    /// (fixed vertices, which it leaves out, get 0).
    pub fn colors(&self, n: usize) -> Vec<u32> {
        let mut colors = vec![0u32; n];
        for c in 0..self.num_colors() {
            for &v in self.color(c) {
                colors[v as usize] = c as u32;
            }
        }
        colors
    }

    /// Vertices of color `c`.
    pub fn color(&self, c: usize) -> &[u32] {
        &self.order[self.offsets[c] as usize..self.offsets[c + 1] as usize]
    }

    /// Vertices per color.
    pub fn counts(&self) -> Vec<u32> {
        self.offsets.windows(2).map(|w| w[1] - w[0]).collect()
    }
}

/// True unless `a > b` (so NaN on either side counts as "not above"): the guards below must
/// reject NaN steps exactly like the kernel's `!(a > b)`.
pub fn not_above(a: f64, b: f64) -> bool {
    !matches!(a.partial_cmp(&b), Some(std::cmp::Ordering::Greater))
}

/// Twice the signed area of (a, b, c), evaluated as `(b - a) x (c - a)`.
fn cross3(a: [f64; 2], b: [f64; 2], c: [f64; 2]) -> f64 {
    (b[0] - a[0]) * (c[1] - a[1]) - (c[0] - a[0]) * (b[1] - a[1])
}

/// `e^T m e` for the edge `b - a`.
fn metric_sq(m: Sym2, a: [f64; 2], b: [f64; 2]) -> f64 {
    let e = [b[0] - a[0], b[1] - a[1]];
    e[0] * (m[0] * e[0] + m[1] * e[1]) + e[1] * (m[1] * e[0] + m[2] * e[1])
}

/// True when moving vertex `v` from `p` to `x` is acceptable (see the module doc): every
/// cavity triangle keeps its orientation with `2 area > min_shape * sum l^2`, and the worst
/// metric shape `q = 2 sqrt(3) sqrt(det A) 2 area / sum l_A^2` of the cavity (lengths in the
/// cavity metric `A`, the sum of its edge metrics; `q = 1` for a triangle equilateral in `A`)
/// stays at least `min(q_old, shape_floor)`: moves are free while the cavity is well shaped and
/// may never make a poorly shaped cavity worse.
pub fn cavity_ok(
    v: usize,
    p: [f64; 2],
    x: [f64; 2],
    pos: &[[f64; 2]],
    topo: &SmoothTopology,
    a: Sym2,
    params: &SmoothParams,
) -> bool {
    let min_shape = params.min_shape;
    let mut worst_old = f64::INFINITY;
    let mut worst_new = f64::INFINITY;
    for &e in topo.vertex_elements.row(v) {
        let t = topo.triangles[e as usize];
        let k = t.iter().position(|&u| u as usize == v).unwrap_or(0);
        let o1 = pos[t[(k + 1) % 3] as usize];
        let o2 = pos[t[(k + 2) % 3] as usize];
        let old = cross3(p, o1, o2);
        let new = cross3(x, o1, o2);
        let sq = |a: [f64; 2], b: [f64; 2]| (a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2);
        let sum_l2 = sq(o1, x) + sq(o2, x) + sq(o1, o2);
        let sgn = if old > 0.0 {
            1.0
        } else if old < 0.0 {
            -1.0
        } else {
            0.0
        };
        if not_above(new * sgn, min_shape * sum_l2) {
            return false;
        }
        let m12 = metric_sq(a, o1, o2);
        worst_old = worst_old.min(old * sgn / (metric_sq(a, p, o1) + metric_sq(a, p, o2) + m12));
        worst_new = worst_new.min(new * sgn / (metric_sq(a, x, o1) + metric_sq(a, x, o2) + m12));
    }
    // Normalised metric shape q = 2 sqrt(3) sqrt(det A) s, 1 for an equilateral triangle of A.
    let norm = 2.0 * 3f64.sqrt() * (a[0] * a[2] - a[1] * a[1]).max(0.0).sqrt();
    norm * worst_new >= (norm * worst_old).min(params.shape_floor)
}

/// The new position of vertex `v` (see the module doc); `metric` gives M at a point.
pub fn relocate(
    v: usize,
    pos: &[[f64; 2]],
    topo: &SmoothTopology,
    metric: &impl Fn([f64; 2]) -> Sym2,
    params: &SmoothParams,
) -> [f64; 2] {
    let p = pos[v];
    let kind = topo.kind[v];
    if kind == VertexKind::Fixed {
        return p;
    }
    let mut a = [0.0; 3];
    let mut r = [0.0; 2];
    for &u in topo.neighbors.row(v) {
        let y = pos[u as usize];
        let m = metric([0.5 * (p[0] + y[0]), 0.5 * (p[1] + y[1])]);
        let d = [y[0] - p[0], y[1] - p[1]];
        for c in 0..3 {
            a[c] += m[c];
        }
        r[0] += m[0] * d[0] + m[1] * d[1];
        r[1] += m[1] * d[0] + m[2] * d[1];
    }
    let w = params.relax;
    let step = match kind {
        VertexKind::Interior => {
            let off = (1.0 + params.sigma) * a[1].abs();
            let b11 = a[0].max(off) + a[0];
            let b22 = a[2].max(off) + a[2];
            let b12 = a[1];
            let det = b11 * b22 - b12 * b12;
            if not_above(det, 0.0) {
                return p;
            }
            [
                w * (b22 * r[0] - b12 * r[1]) / det,
                w * (b11 * r[1] - b12 * r[0]) / det,
            ]
        }
        VertexKind::Sliding { a: ia, b: ib } => {
            let (ya, yb) = (pos[ia as usize], pos[ib as usize]);
            let e = [yb[0] - ya[0], yb[1] - ya[1]];
            let len = e[0].hypot(e[1]);
            if not_above(len, 0.0) {
                return p;
            }
            let t = [e[0] / len, e[1] / len];
            let mh = t[0] * (a[0] * t[0] + a[1] * t[1]) + t[1] * (a[1] * t[0] + a[2] * t[1]);
            if not_above(mh, 0.0) {
                return p;
            }
            let s = w * (t[0] * r[0] + t[1] * r[1]) / (2.0 * mh);
            [s * t[0], s * t[1]]
        }
        VertexKind::Fixed => return p,
    };
    let mut f = 1.0;
    for _ in 0..=params.max_halvings {
        let x = [p[0] + f * step[0], p[1] + f * step[1]];
        if cavity_ok(v, p, x, pos, topo, a, params) {
            return x;
        }
        f *= 0.5;
    }
    p
}

/// One sweep: every color in order, each vertex of a color relocated against the current
/// positions (vertices of one color are never neighbours, so the order inside a color does not
/// matter; that is what the GPU exploits).
pub fn sweep_cpu(
    pos: &mut [[f64; 2]],
    topo: &SmoothTopology,
    schedule: &Schedule,
    metric: &impl Fn([f64; 2]) -> Sym2,
    params: &SmoothParams,
) {
    for c in 0..schedule.num_colors() {
        for &v in schedule.color(c) {
            pos[v as usize] = relocate(v as usize, pos, topo, metric, params);
        }
    }
}

/// The 2D positions of a mesh.
pub fn positions(mesh: &Mesh) -> Vec<[f64; 2]> {
    mesh.points.iter().map(|p| [p[0], p[1]]).collect()
}

/// Copy 2D positions into a mesh (z kept).
pub fn set_positions(mesh: &mut Mesh, pos: &[[f64; 2]]) {
    for (p, x) in mesh.points.iter_mut().zip(pos) {
        p[0] = x[0];
        p[1] = x[1];
    }
}

/// Smallest `2 area / sum l^2` over the triangles (negative when one is inverted).
pub fn min_shape(pos: &[[f64; 2]], triangles: &[[u32; 3]]) -> f64 {
    triangles
        .iter()
        .map(|t| {
            let [a, b, c] = t.map(|v| pos[v as usize]);
            let sq = |u: [f64; 2], w: [f64; 2]| (u[0] - w[0]).powi(2) + (u[1] - w[1]).powi(2);
            cross3(a, b, c) / (sq(a, b) + sq(b, c) + sq(c, a))
        })
        .fold(f64::INFINITY, f64::min)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mesh::generate;

    #[test]
    fn corners_fixed_sides_slide_and_schedule_is_proper() -> Result<()> {
        let mesh = generate::builtin("rect:300")?;
        let topo = SmoothTopology::build(&mesh)?;
        for (v, k) in topo.kind.iter().enumerate() {
            let p = mesh.points[v];
            let corner = (p[0] == 0.0 || p[0] == 1.0) && (p[1] == 0.0 || p[1] == 1.0);
            let side = p[0] == 0.0 || p[0] == 1.0 || p[1] == 0.0 || p[1] == 1.0;
            match k {
                VertexKind::Fixed => assert!(corner, "vertex {v} at {p:?} fixed"),
                VertexKind::Sliding { .. } => assert!(side && !corner),
                VertexKind::Interior => assert!(!side),
            }
        }
        let s = Schedule::greedy(&topo)?;
        assert_eq!(s.order.len(), topo.num_free());
        assert!(s.first_boundary_color > 0 && s.first_boundary_color < s.num_colors());
        // A checkpoint keeps the schedule as colors: they give it back exactly.
        let n = topo.num_vertices();
        assert_eq!(Schedule::from_colors(&topo, &s.colors(n))?, s);
        let mut bad = s.colors(n);
        bad[0] = n as u32;
        assert!(Schedule::from_colors(&topo, &bad).is_err());
        Ok(())
    }

    #[test]
    fn constant_metric_fixes_the_equilateral_star() {
        // A regular hexagon around a displaced centre: with M = I the centre returns to the
        // middle geometrically, by a factor 1 - w/2 per sweep (D = A for a diagonal A).
        let mut pts = vec![[0.2, 0.1]];
        for k in 0..6 {
            let a = std::f64::consts::PI / 3.0 * k as f64;
            pts.push([a.cos(), a.sin()]);
        }
        let mut mesh = Mesh::new(2);
        for p in &pts {
            mesh.points.push([p[0], p[1], 0.0]);
        }
        for k in 0..6u32 {
            mesh.push_element(
                crate::mesh::ElementKind::Triangle,
                &[0, 1 + k, 1 + (k + 1) % 6],
                1,
            );
        }
        let Ok(topo) = SmoothTopology::build(&mesh) else {
            panic!("topology")
        };
        let params = SmoothParams::default();
        let x = relocate(0, &pts, &topo, &|_| [1.0, 0.0, 1.0], &params);
        assert!((x[0] - 0.2 * 0.75).abs() < 1e-12 && (x[1] - 0.1 * 0.75).abs() < 1e-12);
    }
}
