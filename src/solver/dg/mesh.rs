//! The mesh as the DG operator sees it: per-element affine maps, per-edge connectivity with
//! boundary conditions, edges grouped by color (one GPU dispatch per color), periodic pairs
//! merged into interior edges.
//!
//! Element i maps the reference triangle by x = x_0 + J (xi, eta), J = [x_1 - x_0, x_2 - x_0]
//! (vertices counter-clockwise, so det J = 2 |Omega_i| > 0); basis gradients are
//! grad phi = J^{-T} grad_ref phi, stored as the four entries (xi_x, xi_y, eta_x, eta_y).
//! Edge s has a left element (normal n points out of it) and a right element or, on the
//! boundary, a ghost state built from a [`BoundaryKind`].
//!
//! Nonconforming meshes (hanging nodes, neighbouring levels differing by one): a coarse side
//! next to two refined elements is two faces, each the whole edge of its fine (left) element
//! and one half of the coarse (right) element's edge ([`EdgeInfo::right_half`]).

use crate::color::nonconforming::{check_nonconforming_coloring, NonconformingMesh};
use crate::error::{Error, Result};
use crate::mesh::{Geometry2d, Mesh, Topology, NO_ELEMENT};
use crate::order::OrderedMesh;
use crate::parallel;

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
    /// left_local | right_local << 2 | kind << 4 (3 bits) | right_half << 7 | state << 9.
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
    /// 0: the face is the right element's whole local edge `right_local`; 1 or 2: it is the
    /// first or second half of that edge as the right element walks it counter-clockwise
    /// (parameter [0, 1/2] or [1/2, 1]). Left node q at parameter t_q meets the right element
    /// at its parameter 1 - t_q on a whole edge, ((h - 1) + (1 - t_q)) / 2 on half h: basis
    /// row `right_local + 3 * right_half` at node `nqe - 1 - q`. A half face always has the
    /// finer element on the left, walking its whole edge; normal, length and midpoint are the
    /// face's own.
    pub right_half: u8,
    pub kind: u32,
    pub state: usize,
    pub normal: [f64; 2],
    pub length: f64,
    pub midpoint: [f64; 2],
}

impl EdgeInfo {
    /// [`DgEdge::info`]: left_local | right_local << 2 | kind << 4 (3 bits) | right_half << 7
    /// | state << 9, as the kernels unpack it.
    pub fn packed_info(&self) -> u32 {
        self.left_local as u32
            | (self.right_local as u32) << 2
            | self.kind << 4
            | (self.right_half as u32) << 7
            | (self.state as u32) << 9
    }

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
    /// Face neighbours (periodic partners included), `None` on the boundary: slot j the
    /// neighbour across local side j, slot j + 3 the second neighbour when side j is split into
    /// two faces (a hanging node; `None` on a conforming side).
    pub neighbors: Vec<[Option<usize>; 6]>,
    /// Edges grouped by color.
    pub edges: Vec<EdgeInfo>,
    /// Edges of color c are `color_offsets[c]..color_offsets[c + 1]`.
    pub color_offsets: Vec<usize>,
}

/// Relative tolerance of the geometric face classification (lengths, positions on an edge).
const GEOMETRY_TOL: f64 = 1e-6;

impl DgMesh {
    /// Build from an ordered (colored, renumbered) mesh; `bc(tag)` gives each boundary tag's
    /// condition. Periodic tags are paired by translation and their edges merged.
    pub fn build(om: &OrderedMesh, bc: &dyn Fn(i32) -> Result<BoundaryKind>) -> Result<DgMesh> {
        let mut color = vec![0usize; om.topo.num_faces()];
        for c in 0..om.color_offsets.len() - 1 {
            for f in om.faces_of_color(c) {
                color[f] = c;
            }
        }
        Self::assemble(&om.mesh, &om.topo, &color, bc)
    }

    /// Build from a mesh with hanging nodes ([`refine`](crate::color::nonconforming::refine))
    /// and a coloring of its faces (e.g. [`refine_colors`], checked here with
    /// [`check_nonconforming_coloring`]): one dispatch per color stays race-free because a
    /// coarse element's two half faces on a split side have different colors.
    ///
    /// Orientation and `right_half` are decided from the geometry alone (face and element edge
    /// lengths, the face midpoint's position along the coarse edge), not from the refinement's
    /// bookkeeping, so this builder cross-checks any other producer of the faces. Periodic
    /// boundaries work when both sides are refined alike (edges pair one to one); otherwise
    /// the pairing fails with an error.
    ///
    /// [`refine_colors`]: crate::color::nonconforming::refine_colors
    pub fn build_nonconforming(
        nc: &NonconformingMesh,
        face_colors: &[u8],
        bc: &dyn Fn(i32) -> Result<BoundaryKind>,
    ) -> Result<DgMesh> {
        check_nonconforming_coloring(nc, face_colors)
            .map_err(|m| Error::Invalid(format!("nonconforming DG mesh: {m}")))?;
        let color: Vec<usize> = face_colors.iter().map(|&c| c as usize).collect();
        Self::assemble(&nc.mesh, &nc.topo, &color, bc)
    }

    /// The common part of the builders: element maps, edges (oriented finer element left, see
    /// [`orient_face`]) with boundary kinds, periodic pairing, edges grouped by `color`.
    fn assemble(
        mesh: &Mesh,
        topo: &Topology,
        color: &[usize],
        bc: &dyn Fn(i32) -> Result<BoundaryKind>,
    ) -> Result<DgMesh> {
        let tris = mesh.planar_triangles("the DG solver")?;
        let geom = Geometry2d::build(mesh, topo);
        let pts = mesh.points_2d();
        let ne = tris.len();
        let mut vertices = Vec::with_capacity(ne);
        let mut inv_jacobian = Vec::with_capacity(ne);
        let mut det = Vec::with_capacity(ne);
        let blocks = parallel::map_blocks(ne, parallel::BLOCK, |elements| {
            let maps: Vec<_> = tris[elements]
                .iter()
                .map(|t| {
                    let v = [pts[t[0] as usize], pts[t[1] as usize], pts[t[2] as usize]];
                    let (g, d, _) = element_geometry(&v);
                    (v, g, d)
                })
                .collect();
            maps
        });
        for (v, g, d) in blocks.into_iter().flatten() {
            vertices.push(v);
            inv_jacobian.push(g);
            det.push(d);
        }
        let nf = topo.num_faces();
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
                right_half: 0,
                kind: EDGE_INTERIOR,
                state: 0,
                normal: geom.normals[f],
                length: geom.lengths[f],
                midpoint: geom.midpoints[f],
            };
            if topo.right[f] != NO_ELEMENT {
                e.right = Some(topo.right[f] as usize);
                e.right_local = topo.right_local[f] as usize;
                orient_face(&mut e, &vertices)
                    .map_err(|m| Error::Invalid(format!("face {f}: {m}")))?;
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
                    BoundaryKind::Periodic(partner) if partner == tag => {
                        return Err(Error::Invalid(format!(
                            "periodic boundary {tag} names itself as its partner (it needs the \
                             opposite boundary's tag)"
                        )));
                    }
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
        // with the smallest color free at both elements (a new color if needed).
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
        let mut color_offsets = vec![0usize; ncolors + 1];
        for &i in &keep {
            color_offsets[edge_color[i] + 1] += 1;
        }
        for c in 0..ncolors {
            color_offsets[c + 1] += color_offsets[c];
        }
        // Grouped by color, in their order within each color (a stable counting sort).
        let mut order = vec![0usize; keep.len()];
        let mut next = color_offsets.clone();
        for &i in &keep {
            order[next[edge_color[i]]] = i;
            next[edge_color[i]] += 1;
        }
        let edges: Vec<EdgeInfo> = order.iter().map(|&i| edges[i]).collect();
        let mut neighbors = vec![[None; 6]; ne];
        for e in &edges {
            if let Some(r) = e.right {
                for (i, side, other) in [(e.left, e.left_local, r), (r, e.right_local, e.left)] {
                    let slots = &mut neighbors[i];
                    let slot = [side, side + 3]
                        .into_iter()
                        .find(|&j| slots[j].is_none())
                        .ok_or_else(|| {
                            Error::Invalid(format!(
                                "element {i}: more than two faces on side {side}"
                            ))
                        })?;
                    slots[slot] = Some(other);
                }
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
                info: e.packed_info(),
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

/// Orient an interior face from geometry alone: equal lengths of the face and both elements'
/// local edges make a conforming face (`right_half` 0, orientation kept); a face half as long
/// as one side's edge is a half face, flipped if needed so the coarse element is on the right,
/// with `right_half` 1 or 2 from where the face midpoint lies on the coarse edge as the coarse
/// element walks it (parameter 1/4 or 3/4).
fn orient_face(e: &mut EdgeInfo, vertices: &[[[f64; 2]; 3]]) -> std::result::Result<(), String> {
    let Some(r) = e.right else {
        return Ok(());
    };
    let edge = |i: usize, local: usize| (vertices[i][local], vertices[i][(local + 1) % 3]);
    let dist = |a: [f64; 2], b: [f64; 2]| (b[0] - a[0]).hypot(b[1] - a[1]);
    let close = |a: f64, b: f64| (a - b).abs() <= GEOMETRY_TOL * b;
    let len = |i: usize, local: usize| {
        let (a, b) = edge(i, local);
        dist(a, b)
    };
    let (ll, lr) = (len(e.left, e.left_local), len(r, e.right_local));
    let l = e.length;
    if close(l, ll) && close(l, lr) {
        e.right_half = 0;
        return Ok(());
    }
    let mut coarse = r;
    if close(l, lr) && close(2.0 * l, ll) {
        // The coarse element is on the left: swap the sides.
        coarse = e.left;
        e.left = r;
        e.right = Some(coarse);
        std::mem::swap(&mut e.left_local, &mut e.right_local);
        e.normal = [-e.normal[0], -e.normal[1]];
    } else if !(close(l, ll) && close(2.0 * l, lr)) {
        return Err(format!(
            "length {l} against element edges {ll} and {lr}: neither conforming nor a half face \
             (neighbouring elements may differ by one refinement level)"
        ));
    }
    let (a, b) = edge(e.left, e.left_local);
    let (ca, cb) = edge(coarse, e.right_local);
    let d = [cb[0] - ca[0], cb[1] - ca[1]];
    let dd = d[0] * d[0] + d[1] * d[1];
    let m = [e.midpoint[0] - ca[0], e.midpoint[1] - ca[1]];
    let s = (m[0] * d[0] + m[1] * d[1]) / dd;
    let off = (m[0] * d[1] - m[1] * d[0]).abs() / dd.sqrt();
    // The fine element's edge must be the half face itself, not just as long.
    let on_face = dist(a, e.point(0.0)).max(dist(b, e.point(1.0)));
    if off > GEOMETRY_TOL * l || on_face > GEOMETRY_TOL * l {
        return Err("the half face does not lie on the coarse element's edge".to_string());
    }
    e.right_half = if (s - 0.25).abs() < 0.05 {
        1
    } else if (s - 0.75).abs() < 0.05 {
        2
    } else {
        return Err(format!(
            "half face at parameter {s} of the coarse edge, expected 1/4 or 3/4"
        ));
    };
    Ok(())
}

/// Pair the boundary edges of tags a and b (b = a translated): each edge of `fa` gets the
/// element of its partner in `fb` as right element. The translation is the difference of the
/// two tags' mean edge midpoints; edges are matched in order along the boundary direction.
fn pair_periodic(edges: &mut [EdgeInfo], fa: &[usize], fb: &[usize], a: i32, b: i32) -> Result<()> {
    if fa.len() != fb.len() || fa.is_empty() {
        return Err(Error::Invalid(format!(
            "periodic boundaries {a} and {b} have {} and {} edges; they must match one to one \
             (on a nonconforming mesh: refined alike on both sides)",
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
