//! The mesh as the DG operator sees it: per-element affine maps, per-edge connectivity with
//! boundary conditions, edges grouped by color (one GPU dispatch per color), periodic pairs
//! merged into interior edges.
//!
//! Element i maps the reference triangle by x = x_0 + J (xi, eta), J = [x_1 - x_0, x_2 - x_0]
//! (vertices counter-clockwise, so det J = 2 |Omega_i| > 0); basis gradients are
//! grad phi = J^{-T} grad_ref phi, stored as the four entries (xi_x, xi_y, eta_x, eta_y).
//! Edge s has a left element (normal n points out of it) and a right element or, on the
//! boundary, a ghost state built from a [`BoundaryKind`].

use crate::error::{Error, Result};
use crate::mesh::{Geometry2d, NO_ELEMENT};
use crate::order::OrderedMesh;

/// Boundary condition of a boundary tag.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum BoundaryKind {
    /// Reflecting wall: ghost = U with the normal momentum reversed.
    Wall,
    /// Supersonic outflow / extrapolation: ghost = U.
    Outflow,
    /// Inflow of a constant state: ghost = `states[i]` of the case.
    Inflow(usize),
    /// Prescribed state: ghost = the case's state function at (x, t).
    Exact,
    /// Paired with another tag (translation): the edge becomes interior.
    Periodic(i32),
}

/// Edge kind codes shared with the kernels (`EDGE_*` in shaders/common/dg_euler.wgsl).
pub const EDGE_INTERIOR: u32 = 0;
pub const EDGE_WALL: u32 = 1;
pub const EDGE_OUTFLOW: u32 = 2;
pub const EDGE_INFLOW: u32 = 3;
pub const EDGE_EXACT: u32 = 4;

/// Marks a periodic edge until its partner is found.
const PERIODIC_PENDING: u32 = 255;

/// One edge (mirrors `DgEdge` in the kernels, 32 bytes).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct DgEdge {
    pub left: u32,
    /// Right element, [`NO_ELEMENT`] on the boundary.
    pub right: u32,
    /// left_local | right_local << 2 | kind << 4 | state << 8.
    pub info: u32,
    pub nx: f32,
    pub ny: f32,
    pub length: f32,
    pub mx: f32,
    pub my: f32,
}

/// Edge data in f64 for the CPU reference.
#[derive(Clone, Copy, Debug)]
pub struct EdgeInfo {
    pub left: usize,
    pub right: Option<usize>,
    pub left_local: usize,
    pub right_local: usize,
    pub kind: u32,
    pub state: usize,
    pub normal: [f64; 2],
    pub length: f64,
    pub midpoint: [f64; 2],
}

impl EdgeInfo {
    /// Point at parameter t of the edge as walked by its left element:
    /// x = m + (t - 1/2) L tau, tau = (-n_y, n_x).
    pub fn point(&self, t: f64) -> [f64; 2] {
        let s = (t - 0.5) * self.length;
        [
            self.midpoint[0] - s * self.normal[1],
            self.midpoint[1] + s * self.normal[0],
        ]
    }
}

/// The DG mesh.
#[derive(Clone, Debug)]
pub struct DgMesh {
    pub num_elements: usize,
    /// Vertices of each element (counter-clockwise).
    pub vertices: Vec<[[f64; 2]; 3]>,
    /// (xi_x, xi_y, eta_x, eta_y) of each element.
    pub inv_jacobian: Vec<[f64; 4]>,
    /// det J = 2 * area.
    pub det: Vec<f64>,
    /// Smallest height of each element (CFL length).
    pub min_height: Vec<f64>,
    /// Face neighbours (periodic partners included), `None` on the boundary.
    pub neighbors: Vec<[Option<usize>; 3]>,
    /// Edges grouped by color.
    pub edges: Vec<EdgeInfo>,
    /// Edges of color c are `color_offsets[c]..color_offsets[c + 1]`.
    pub color_offsets: Vec<usize>,
}

impl DgMesh {
    /// Build from an ordered (colored, renumbered) mesh; `bc(tag)` gives each boundary tag's
    /// condition. Periodic tags are paired by translation and their edges merged.
    pub fn build(om: &OrderedMesh, bc: &dyn Fn(i32) -> Result<BoundaryKind>) -> Result<DgMesh> {
        let mesh = &om.mesh;
        let tris = mesh.triangles().ok_or_else(|| {
            Error::Invalid("the DG solver needs a mesh of triangles only".to_string())
        })?;
        let topo = &om.topo;
        let geom = Geometry2d::build(mesh, topo);
        let pts = mesh.points_2d();
        let ne = tris.len();
        let mut vertices = Vec::with_capacity(ne);
        let mut inv_jacobian = Vec::with_capacity(ne);
        let mut det = Vec::with_capacity(ne);
        for t in &tris {
            let v = [pts[t[0] as usize], pts[t[1] as usize], pts[t[2] as usize]];
            let j = [
                v[1][0] - v[0][0],
                v[2][0] - v[0][0],
                v[1][1] - v[0][1],
                v[2][1] - v[0][1],
            ];
            let d = j[0] * j[3] - j[1] * j[2];
            vertices.push(v);
            inv_jacobian.push([j[3] / d, -j[1] / d, -j[2] / d, j[0] / d]);
            det.push(d);
        }
        let nf = topo.num_faces();
        let mut color = vec![0usize; nf];
        for c in 0..om.color_offsets.len() - 1 {
            for f in om.faces_of_color(c) {
                color[f] = c;
            }
        }
        let mut edges = Vec::with_capacity(nf);
        let mut edge_color = Vec::with_capacity(nf);
        let mut periodic: Vec<(i32, i32)> = Vec::new();
        let mut by_tag: std::collections::BTreeMap<i32, Vec<usize>> = Default::default();
        for (f, &col) in color.iter().enumerate() {
            let mut e = EdgeInfo {
                left: topo.left[f] as usize,
                right: None,
                left_local: topo.left_local[f] as usize,
                right_local: 0,
                kind: EDGE_INTERIOR,
                state: 0,
                normal: geom.normals[f],
                length: geom.lengths[f],
                midpoint: geom.midpoints[f],
            };
            if topo.right[f] != NO_ELEMENT {
                e.right = Some(topo.right[f] as usize);
                e.right_local = topo.right_local[f] as usize;
            } else {
                let tag = topo.boundary_tag[f];
                match bc(tag)? {
                    BoundaryKind::Wall => e.kind = EDGE_WALL,
                    BoundaryKind::Outflow => e.kind = EDGE_OUTFLOW,
                    BoundaryKind::Inflow(s) => {
                        e.kind = EDGE_INFLOW;
                        e.state = s;
                    }
                    BoundaryKind::Exact => e.kind = EDGE_EXACT,
                    BoundaryKind::Periodic(partner) => {
                        e.kind = PERIODIC_PENDING;
                        if !periodic.contains(&(partner, tag))
                            && !periodic.contains(&(tag, partner))
                        {
                            periodic.push((tag, partner));
                        }
                        by_tag.entry(tag).or_default().push(edges.len());
                    }
                }
            }
            edges.push(e);
            edge_color.push(col);
        }
        let mut removed = vec![false; edges.len()];
        for (a, b) in periodic {
            if !by_tag.contains_key(&b) {
                return Err(Error::Invalid(format!(
                    "periodic boundary {a} names partner {b}, which has no boundary edges"
                )));
            }
            let fa = by_tag.get(&a).cloned().unwrap_or_default();
            let fb = by_tag.get(&b).cloned().unwrap_or_default();
            pair_periodic(&mut edges, &fa, &fb, a, b)?;
            for &i in &fb {
                removed[i] = true;
            }
        }
        // Merged edges may clash in color with the partner element's other edges: recolor them
        // with the smallest color free at both elements (a fourth color if needed).
        let mut used = vec![0u32; ne];
        let keep: Vec<usize> = (0..edges.len()).filter(|&i| !removed[i]).collect();
        let merged: Vec<bool> = edges.iter().map(|e| e.kind == PERIODIC_PENDING).collect();
        for &i in &keep {
            if !merged[i] {
                used[edges[i].left] |= 1 << edge_color[i];
                if let Some(r) = edges[i].right {
                    used[r] |= 1 << edge_color[i];
                }
            }
        }
        for &i in &keep {
            if merged[i] {
                let r = edges[i].right.unwrap_or(edges[i].left);
                let c = (!(used[edges[i].left] | used[r])).trailing_zeros() as usize;
                edge_color[i] = c;
                used[edges[i].left] |= 1 << c;
                used[r] |= 1 << c;
                edges[i].kind = EDGE_INTERIOR;
            }
        }
        let ncolors = keep.iter().map(|&i| edge_color[i] + 1).max().unwrap_or(1);
        let mut order = keep.clone();
        order.sort_by_key(|&i| edge_color[i]);
        let mut color_offsets = vec![0usize; ncolors + 1];
        for &i in &order {
            color_offsets[edge_color[i] + 1] += 1;
        }
        for c in 0..ncolors {
            color_offsets[c + 1] += color_offsets[c];
        }
        let edges: Vec<EdgeInfo> = order.iter().map(|&i| edges[i]).collect();
        let mut neighbors = vec![[None; 3]; ne];
        for e in &edges {
            if let Some(r) = e.right {
                neighbors[e.left][e.left_local] = Some(r);
                neighbors[r][e.right_local] = Some(e.left);
            }
        }
        Ok(DgMesh {
            num_elements: ne,
            vertices,
            inv_jacobian,
            det,
            min_height: geom.min_heights.clone(),
            neighbors,
            edges,
            color_offsets,
        })
    }

    /// Physical point of reference point (xi, eta) in element i.
    pub fn map(&self, i: usize, xi: f64, eta: f64) -> [f64; 2] {
        let v = &self.vertices[i];
        [
            v[0][0] + xi * (v[1][0] - v[0][0]) + eta * (v[2][0] - v[0][0]),
            v[0][1] + xi * (v[1][1] - v[0][1]) + eta * (v[2][1] - v[0][1]),
        ]
    }

    pub fn num_colors(&self) -> usize {
        self.color_offsets.len() - 1
    }

    /// Edges as the kernels read them.
    pub fn gpu_edges(&self) -> Vec<DgEdge> {
        self.edges
            .iter()
            .map(|e| DgEdge {
                left: e.left as u32,
                right: e.right.map_or(NO_ELEMENT, |r| r as u32),
                info: e.left_local as u32
                    | (e.right_local as u32) << 2
                    | e.kind << 4
                    | (e.state as u32) << 8,
                nx: e.normal[0] as f32,
                ny: e.normal[1] as f32,
                length: e.length as f32,
                mx: e.midpoint[0] as f32,
                my: e.midpoint[1] as f32,
            })
            .collect()
    }
}

/// Geometry of the element with counter-clockwise vertices v: the inverse Jacobian entries
/// (xi_x, xi_y, eta_x, eta_y) of x = v0 + J xi, det J = 2 |Omega| and the smallest height
/// 2 |Omega| / longest side (the CFL length).
pub fn element_geometry(v: &[[f64; 2]; 3]) -> ([f64; 4], f64, f64) {
    let j = [
        v[1][0] - v[0][0],
        v[2][0] - v[0][0],
        v[1][1] - v[0][1],
        v[2][1] - v[0][1],
    ];
    let d = j[0] * j[3] - j[1] * j[2];
    let longest = (0..3)
        .map(|s| {
            let (a, b) = (v[s], v[(s + 1) % 3]);
            (b[0] - a[0]).hypot(b[1] - a[1])
        })
        .fold(0.0, f64::max);
    ([j[3] / d, -j[1] / d, -j[2] / d, j[0] / d], d, d / longest)
}

/// Pair the boundary edges of tags a and b (b = a translated): each edge of `fa` gets the
/// element of its partner in `fb` as right element. The translation is the difference of the
/// two tags' mean edge midpoints; edges are matched in order along the boundary direction.
fn pair_periodic(edges: &mut [EdgeInfo], fa: &[usize], fb: &[usize], a: i32, b: i32) -> Result<()> {
    if fa.len() != fb.len() || fa.is_empty() {
        return Err(Error::Invalid(format!(
            "periodic boundaries {a} and {b} have {} and {} edges; they must match one to one",
            fa.len(),
            fb.len()
        )));
    }
    let mean = |f: &[usize]| -> [f64; 2] {
        let n = f.len() as f64;
        let s = f.iter().fold([0.0, 0.0], |s, &i| {
            [s[0] + edges[i].midpoint[0], s[1] + edges[i].midpoint[1]]
        });
        [s[0] / n, s[1] / n]
    };
    let (ma, mb) = (mean(fa), mean(fb));
    let d = [mb[0] - ma[0], mb[1] - ma[1]];
    let dl = (d[0] * d[0] + d[1] * d[1]).sqrt().max(1e-300);
    let tau = [-d[1] / dl, d[0] / dl];
    let key = |i: usize| edges[i].midpoint[0] * tau[0] + edges[i].midpoint[1] * tau[1];
    let mut sa = fa.to_vec();
    let mut sb = fb.to_vec();
    sa.sort_by(|&x, &y| key(x).total_cmp(&key(y)));
    sb.sort_by(|&x, &y| key(x).total_cmp(&key(y)));
    for (&ia, &ib) in sa.iter().zip(&sb) {
        let (pa, pb) = (edges[ia].midpoint, edges[ib].midpoint);
        let err = ((pa[0] + d[0] - pb[0]).powi(2) + (pa[1] + d[1] - pb[1]).powi(2)).sqrt();
        if err > 1e-6 * (1.0 + dl) || (edges[ia].length - edges[ib].length).abs() > 1e-6 * dl {
            return Err(Error::Invalid(format!(
                "periodic boundaries {a} and {b} do not match: edge at ({:.6}, {:.6}) has no \
                 partner at ({:.6}, {:.6})",
                pa[0],
                pa[1],
                pa[0] + d[0],
                pa[1] + d[1]
            )));
        }
        edges[ia].right = Some(edges[ib].left);
        edges[ia].right_local = edges[ib].left_local;
    }
    Ok(())
}
