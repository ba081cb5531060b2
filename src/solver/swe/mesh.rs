//! The solver's view of a mesh: cells (area, barycentre, depth H) and edges grouped by color in
//! the layout the GPU reads, plus the deterministic criss-cross mesh M(n) of spec §12.
//!
//! Edge colors ([`crate::color`]): no two edges of one color share a cell, so one dispatch per
//! color can add an edge's contributions to both cells with plain read-modify-writes. Cells and
//! faces come colored and renumbered by one [`Ordering`] ([`crate::order::prepare`]); results
//! depend on the ordering only through f32 summation order.

use crate::error::{Error, Result};
use crate::mesh::{Geometry2d, Mesh, Topology};
use crate::order::{OrderedMesh, Ordering};

/// Boundary behaviour of an edge (the `kind` field of [`SweEdge`]).
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum EdgeKind {
    /// Interior edge between two cells.
    #[default]
    Interior = 0,
    /// Reflecting wall: mirror ghost, zero mass flux (spec §9).
    Wall = 1,
    /// Open / transmissive: zero-gradient ghost (a copy of the inner state).
    Open = 2,
    /// Prescribed discharge: characteristic ghost ([`super::flux::driven_ghost`]), the edge's
    /// `value` is the outward normal discharge per unit length.
    Discharge = 3,
    /// Prescribed free-surface elevation: characteristic ghost, the edge's `value` is η_b.
    Elevation = 4,
}

/// One edge as the WGSL kernels read it (mirrors `SweEdge` in shaders/common/swe_flux.wgsl).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct SweEdge {
    /// Left cell (the normal points out of it).
    pub left: u32,
    /// Right cell, `u32::MAX` on the boundary.
    pub right: u32,
    pub nx: f32,
    pub ny: f32,
    pub length: f32,
    /// [`EdgeKind`] as u32.
    pub kind: u32,
    /// Boundary data of a driven edge at the current step (q_b or η_b), written by
    /// `swe_boundary_values` before the flux pass; 0 elsewhere.
    pub value: f32,
    pub pad: u32,
}

/// A triangle mesh prepared for the solver: geometry in f64, faces grouped by color.
#[derive(Clone, Debug)]
pub struct SweMesh {
    pub mesh: Mesh,
    pub topo: Topology,
    pub geom: Geometry2d,
    /// Faces grouped by color (and by left cell inside a color, for locality).
    pub face_order: Vec<u32>,
    /// Color c is `face_order[color_offsets[c] .. color_offsets[c + 1]]`.
    pub color_offsets: Vec<u32>,
    /// Kind of each face (indexed by face number, not by `face_order`).
    pub face_kind: Vec<EdgeKind>,
    /// The cell ordering applied.
    pub ordering: Ordering,
    /// `element_new_to_old[cell] =` the cell's number in the input mesh.
    pub element_new_to_old: Vec<u32>,
}

impl SweMesh {
    /// Check that `mesh` is one the solver takes: planar 2D, triangles only, not empty. [`SweMesh::new`]
    /// checks this too; callers check it before [`crate::order::prepare`] to fail early.
    pub fn check(mesh: &Mesh) -> Result<()> {
        mesh.planar_triangles("the shallow-water solver")
            .map(|_| ())
    }

    /// The solver's view of a prepared mesh (a 2D triangle mesh, colored and ordered by
    /// [`crate::order::prepare`]): geometry and edge kinds. `boundary` maps a boundary tag to
    /// the edge kind.
    pub fn new(ordered: &OrderedMesh, boundary: impl Fn(i32) -> EdgeKind) -> Result<SweMesh> {
        Self::check(&ordered.mesh)?;
        let topo = ordered.topo.clone();
        let mesh = ordered.mesh.clone();
        let geom = Geometry2d::build(&mesh, &topo);
        if let Some(e) = geom.areas.iter().position(|&a| a <= 0.0) {
            return Err(Error::invalid_mesh(format!(
                "triangle {e} has non-positive area {} (clockwise or degenerate)",
                geom.areas[e]
            )));
        }
        let face_kind: Vec<EdgeKind> = (0..topo.num_faces())
            .map(|f| {
                if topo.is_boundary(f) {
                    boundary(topo.boundary_tag[f])
                } else {
                    EdgeKind::Interior
                }
            })
            .collect();
        Ok(SweMesh {
            face_order: (0..topo.num_faces() as u32).collect(),
            color_offsets: ordered.color_offsets.iter().map(|&o| o as u32).collect(),
            mesh,
            topo,
            geom,
            face_kind,
            ordering: ordered.ordering,
            element_new_to_old: ordered.element_new_to_old.clone(),
        })
    }

    pub fn num_cells(&self) -> usize {
        self.mesh.num_elements()
    }

    pub fn num_faces(&self) -> usize {
        self.topo.num_faces()
    }

    pub fn num_colors(&self) -> usize {
        self.color_offsets.len() - 1
    }

    /// Edges in `face_order`, f32, as the GPU reads them.
    pub fn gpu_edges(&self) -> Vec<SweEdge> {
        self.face_order
            .iter()
            .map(|&f| {
                let f = f as usize;
                SweEdge {
                    left: self.topo.left[f],
                    right: self.topo.right[f],
                    nx: self.geom.normals[f][0] as f32,
                    ny: self.geom.normals[f][1] as f32,
                    length: self.geom.lengths[f] as f32,
                    kind: self.face_kind[f] as u32,
                    value: 0.0,
                    pad: 0,
                }
            })
            .collect()
    }

    /// For the cell-centred gather kernel: the positions (in `face_order`) of each cell's three
    /// edges, padded to 4 with `u32::MAX`.
    pub fn cell_edge_slots(&self) -> Vec<[u32; 4]> {
        let mut pos = vec![0u32; self.num_faces()];
        for (i, &f) in self.face_order.iter().enumerate() {
            pos[f as usize] = i as u32;
        }
        (0..self.num_cells())
            .map(|c| {
                let mut s = [u32::MAX; 4];
                for (k, &f) in self.topo.element_faces.row(c).iter().enumerate().take(4) {
                    s[k] = pos[f as usize];
                }
                s
            })
            .collect()
    }

    /// Index of the cell containing point (x, y), if any (linear search; for probes).
    pub fn locate(&self, x: f64, y: f64) -> Option<usize> {
        (0..self.num_cells()).find(|&c| {
            let v = self.mesh.element(c);
            let p = |i: usize| self.mesh.points[v[i] as usize];
            let (a, b, cc) = (p(0), p(1), p(2));
            let side =
                |p: [f64; 3], q: [f64; 3]| (q[0] - p[0]) * (y - p[1]) - (q[1] - p[1]) * (x - p[0]);
            side(a, b) >= 0.0 && side(b, cc) >= 0.0 && side(cc, a) >= 0.0
        })
    }
}

/// The criss-cross mesh M(n) of spec §12: [−5, 5]² split into n × n squares, each cut into 4
/// triangles through its centre (4n² cells, 2n(3n + 1) edges), boundary tags 1 bottom, 2 right,
/// 3 top, 4 left.
pub fn criss_cross(n: usize) -> Result<Mesh> {
    crate::mesh::generate::split_square_grid(-5.0, 5.0, -5.0, 5.0, n, n)
}

/// Map a mesh affinely so its bounding box becomes `[x0, x1] × [y0, y1]` (built-in meshes live
/// on the unit square or disk).
pub fn fit_to_domain(mesh: &mut Mesh, domain: [f64; 4]) -> Result<()> {
    let [x0, x1, y0, y1] = domain;
    if !(x1 > x0 && y1 > y0) {
        return Err(Error::Invalid(format!(
            "domain [{x0}, {x1}] × [{y0}, {y1}] is empty"
        )));
    }
    let (lo, hi) = mesh.bounding_box();
    let (sx, sy) = ((x1 - x0) / (hi[0] - lo[0]), (y1 - y0) / (hi[1] - lo[1]));
    for p in mesh.points.iter_mut() {
        p[0] = x0 + (p[0] - lo[0]) * sx;
        p[1] = y0 + (p[1] - lo[1]) * sy;
    }
    Ok(())
}
