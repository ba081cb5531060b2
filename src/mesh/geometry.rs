//! Geometry of 2D meshes (triangles and quadrilaterals): face normals and lengths, element
//! areas, centroids and minimum heights, in f64.
//!
//! Area by the shoelace formula A = 1/2 sum (x_i y_{i+1} - x_{i+1} y_i); the outward unit normal
//! of an edge (a, b) of a counter-clockwise element is n = (b_y - a_y, a_x - b_x) / |b - a|.
//! Minimum height: for a triangle the smallest altitude 2A / max edge; for other polygons
//! A / max edge (the smaller side of a rectangle).

use crate::mesh::model::{ElementKind, Mesh};
use crate::mesh::topology::Topology;
use crate::parallel;

/// Per-face and per-element geometry of a 2D mesh.
#[derive(Clone, Debug, Default)]
pub struct Geometry2d {
    /// Outward unit normal of each face, pointing from the left into the right element.
    pub normals: Vec<[f64; 2]>,
    /// Length of each face.
    pub lengths: Vec<f64>,
    /// Midpoint of each face.
    pub midpoints: Vec<[f64; 2]>,
    /// Signed area of each element (positive for counter-clockwise elements).
    pub areas: Vec<f64>,
    /// Centroid of each element.
    pub centroids: Vec<[f64; 2]>,
    /// Minimum height of each element (see module doc).
    pub min_heights: Vec<f64>,
}

/// Signed area and centroid of a polygon given counter-clockwise.
pub fn polygon_area_centroid(pts: &[[f64; 2]]) -> (f64, [f64; 2]) {
    let n = pts.len();
    let (mut a, mut cx, mut cy) = (0.0, 0.0, 0.0);
    for i in 0..n {
        let p = pts[i];
        let q = pts[(i + 1) % n];
        let cross = p[0] * q[1] - q[0] * p[1];
        a += cross;
        cx += (p[0] + q[0]) * cross;
        cy += (p[1] + q[1]) * cross;
    }
    a *= 0.5;
    if a == 0.0 {
        let m = pts
            .iter()
            .fold([0.0, 0.0], |s, p| [s[0] + p[0], s[1] + p[1]]);
        return (0.0, [m[0] / n as f64, m[1] / n as f64]);
    }
    (a, [cx / (6.0 * a), cy / (6.0 * a)])
}

impl Geometry2d {
    /// Compute the geometry. The mesh must be 2D with counter-clockwise elements (as
    /// validation leaves it).
    pub fn build(mesh: &Mesh, topo: &Topology) -> Geometry2d {
        assert_eq!(mesh.dim, 2, "Geometry2d needs a 2D mesh");
        let p = |v: u32| {
            let q = mesh.points[v as usize];
            [q[0], q[1]]
        };
        let nf = topo.num_faces();
        let mut g = Geometry2d {
            normals: Vec::with_capacity(nf),
            lengths: Vec::with_capacity(nf),
            midpoints: Vec::with_capacity(nf),
            ..Default::default()
        };
        // Faces, then elements, in parallel blocks (each item's arithmetic as one loop's).
        let faces = parallel::map_blocks(nf, parallel::BLOCK, |faces| {
            let block: Vec<_> = faces
                .map(|f| {
                    let fv = topo.face_vertices.row(f);
                    let (a, b) = (p(fv[0]), p(fv[1]));
                    let (dx, dy) = (b[0] - a[0], b[1] - a[1]);
                    let len = (dx * dx + dy * dy).sqrt();
                    (
                        [dy / len, -dx / len],
                        len,
                        [0.5 * (a[0] + b[0]), 0.5 * (a[1] + b[1])],
                    )
                })
                .collect();
            block
        });
        for (n, len, m) in faces.into_iter().flatten() {
            g.normals.push(n);
            g.lengths.push(len);
            g.midpoints.push(m);
        }
        let ne = mesh.num_elements();
        g.areas.reserve(ne);
        g.centroids.reserve(ne);
        g.min_heights.reserve(ne);
        let elements = parallel::map_blocks(ne, parallel::BLOCK, |elements| {
            let block: Vec<_> = elements
                .map(|e| {
                    let mut corners = [[0.0; 2]; 8];
                    let vs = mesh.element(e);
                    for (c, &v) in corners.iter_mut().zip(vs) {
                        *c = p(v);
                    }
                    let pts = &corners[..vs.len()];
                    let (area, c) = polygon_area_centroid(pts);
                    let max_edge = (0..pts.len())
                        .map(|i| {
                            let (a, b) = (pts[i], pts[(i + 1) % pts.len()]);
                            ((b[0] - a[0]).powi(2) + (b[1] - a[1]).powi(2)).sqrt()
                        })
                        .fold(0.0, f64::max);
                    let h = match mesh.kinds[e] {
                        ElementKind::Triangle => 2.0 * area.abs() / max_edge,
                        _ => area.abs() / max_edge,
                    };
                    (area, c, h)
                })
                .collect();
            block
        });
        for (area, c, h) in elements.into_iter().flatten() {
            g.areas.push(area);
            g.centroids.push(c);
            g.min_heights.push(h);
        }
        g
    }
}
