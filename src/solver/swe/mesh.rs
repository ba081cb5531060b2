//! The solver's view of a mesh: cells (area, barycentre, depth H) and edges grouped by color in
//! the layout the GPU reads, plus the deterministic criss-cross mesh M(n) of spec §12 and a
//! reverse Cuthill–McKee cell ordering.
//!
//! Edge colors: no two edges of one color share a cell, so one dispatch per color can add an
//! edge's contributions to both cells with plain read-modify-writes. A triangle mesh's dual graph
//! has degree ≤ 3, so a greedy coloring in face order needs at most 5 colors (usually 4).

use crate::error::{Error, Result};
use crate::mesh::{ElementKind, Geometry2d, Mesh, Topology, NO_ELEMENT};

/// Boundary behaviour of an edge (the `kind` field of [`SweEdge`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EdgeKind {
    /// Interior edge between two cells.
    #[default]
    Interior = 0,
    /// Reflecting wall: mirror ghost, zero mass flux (spec §9).
    Wall = 1,
    /// Open / transmissive: zero-gradient ghost (a copy of the inner state).
    Open = 2,
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
    pub pad: [u32; 2],
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
}

impl SweMesh {
    /// Prepare `mesh`: it must be a 2D triangle mesh. `boundary` maps a boundary tag to the
    /// edge kind.
    pub fn new(mesh: Mesh, boundary: impl Fn(i32) -> EdgeKind) -> Result<SweMesh> {
        if !mesh.is_triangle_mesh() {
            return Err(Error::invalid_mesh(
                "the shallow-water solver needs a 2D mesh of triangles only",
            ));
        }
        if mesh.num_elements() == 0 {
            return Err(Error::invalid_mesh("the mesh has no triangles"));
        }
        let topo = Topology::build(&mesh)?;
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
        let (face_order, color_offsets) = greedy_face_colors(&topo, mesh.num_elements());
        Ok(SweMesh {
            mesh,
            topo,
            geom,
            face_order,
            color_offsets,
            face_kind,
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
                    pad: [0; 2],
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
            let side = |p: [f64; 3], q: [f64; 3]| (q[0] - p[0]) * (y - p[1]) - (q[1] - p[1]) * (x - p[0]);
            side(a, b) >= 0.0 && side(b, cc) >= 0.0 && side(cc, a) >= 0.0
        })
    }
}

/// Greedy face coloring in face order (first color not used by either cell), grouped by color
/// and, inside a color, sorted by left cell. Returns (face order, color offsets).
pub fn greedy_face_colors(topo: &Topology, num_cells: usize) -> (Vec<u32>, Vec<u32>) {
    let mut used = vec![0u32; num_cells];
    let mut color = vec![0u32; topo.num_faces()];
    for f in 0..topo.num_faces() {
        let (l, r) = (topo.left[f] as usize, topo.right[f]);
        let mut mask = used[l];
        if r != NO_ELEMENT {
            mask |= used[r as usize];
        }
        let c = (!mask).trailing_zeros();
        color[f] = c;
        used[l] |= 1 << c;
        if r != NO_ELEMENT {
            used[r as usize] |= 1 << c;
        }
    }
    let nc = color.iter().max().map_or(1, |&c| c as usize + 1);
    let mut order: Vec<u32> = (0..topo.num_faces() as u32).collect();
    order.sort_by_key(|&f| (color[f as usize], topo.left[f as usize]));
    let mut offsets = vec![0u32; nc + 1];
    for &c in &color {
        offsets[c as usize + 1] += 1;
    }
    for c in 0..nc {
        offsets[c + 1] += offsets[c];
    }
    (order, offsets)
}

/// The criss-cross mesh M(n) of spec §12 on [x0, x1] × [y0, y1]: n × n squares, each split into
/// 4 triangles through its centre (4n² cells, 2n(3n + 1) edges). Boundary tags 1 bottom,
/// 2 right, 3 top, 4 left, with those physical names.
pub fn criss_cross(n: usize, x0: f64, x1: f64, y0: f64, y1: f64) -> Result<Mesh> {
    if n == 0 || !(x1 > x0) || !(y1 > y0) {
        return Err(Error::Invalid(format!(
            "criss-cross mesh needs n ≥ 1 and a non-empty box, got n = {n}, [{x0}, {x1}] × [{y0}, {y1}]"
        )));
    }
    let mut m = Mesh::new(2);
    let (dx, dy) = ((x1 - x0) / n as f64, (y1 - y0) / n as f64);
    for j in 0..=n {
        for i in 0..=n {
            m.points
                .push([x0 + i as f64 * dx, y0 + j as f64 * dy, 0.0]);
        }
    }
    let corner = |i: usize, j: usize| (j * (n + 1) + i) as u32;
    let centre0 = m.points.len();
    for j in 0..n {
        for i in 0..n {
            m.points.push([
                x0 + (i as f64 + 0.5) * dx,
                y0 + (j as f64 + 0.5) * dy,
                0.0,
            ]);
        }
    }
    for j in 0..n {
        for i in 0..n {
            let c = (centre0 + j * n + i) as u32;
            let (a, b, cc, d) = (
                corner(i, j),
                corner(i + 1, j),
                corner(i + 1, j + 1),
                corner(i, j + 1),
            );
            m.push_element(ElementKind::Triangle, &[a, b, c], 1);
            m.push_element(ElementKind::Triangle, &[b, cc, c], 1);
            m.push_element(ElementKind::Triangle, &[cc, d, c], 1);
            m.push_element(ElementKind::Triangle, &[d, a, c], 1);
        }
    }
    for k in 0..n {
        let facets = [
            (corner(k, 0), corner(k + 1, 0), 1),
            (corner(n, k), corner(n, k + 1), 2),
            (corner(k + 1, n), corner(k, n), 3),
            (corner(0, k + 1), corner(0, k), 4),
        ];
        for (a, b, tag) in facets {
            m.boundary_facets.push(crate::mesh::BoundaryFacet {
                vertices: vec![a, b],
                tag,
            });
        }
    }
    for (tag, name) in [(1, "bottom"), (2, "right"), (3, "top"), (4, "left")] {
        m.physical_names.insert((1, tag), name.to_string());
    }
    Ok(m)
}

/// Reverse Cuthill–McKee ordering of the cells (breadth-first from a minimum-degree cell,
/// neighbours by increasing degree, reversed): `perm[new] = old`.
pub fn rcm_permutation(mesh: &Mesh) -> Result<Vec<u32>> {
    let topo = Topology::build(mesh)?;
    let n = mesh.num_elements();
    let adj = topo.element_adjacency(n);
    let degree = |c: usize| adj.row(c).len();
    let mut visited = vec![false; n];
    let mut order = Vec::with_capacity(n);
    let mut starts: Vec<usize> = (0..n).collect();
    starts.sort_by_key(|&c| (degree(c), c));
    for s in starts {
        if visited[s] {
            continue;
        }
        visited[s] = true;
        let mut head = order.len();
        order.push(s as u32);
        while head < order.len() {
            let c = order[head] as usize;
            head += 1;
            let mut nb: Vec<usize> = adj
                .row(c)
                .iter()
                .map(|&x| x as usize)
                .filter(|&x| !visited[x])
                .collect();
            nb.sort_by_key(|&x| (degree(x), x));
            for x in nb {
                visited[x] = true;
                order.push(x as u32);
            }
        }
    }
    order.reverse();
    Ok(order)
}
