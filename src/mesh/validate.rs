//! Mesh validation: everything a solver relies on, checked once after reading or generating.
//!
//! Checks, in order (each is linear in the mesh size except the two sorts noted):
//! 1. the dimension is 2 or 3, there is at least one element, the CSR arrays are consistent and
//!    every element kind has the mesh's dimension;
//! 2. every element and boundary-facet vertex index is in range;
//! 3. every coordinate is finite;
//! 4. no element is degenerate: a 2D element with |A| < 1e-12 h^2, or a 3D element with
//!    |V| < 1e-12 h^3, where h is its longest edge, is rejected (the bound is relative so it does
//!    not depend on the mesh's units);
//! 5. orientation: planar 2D elements with negative shoelace area
//!    A = 1/2 sum (x_i y_{i+1} - x_{i+1} y_i) and 3D elements with negative volume
//!    V = 1/3 sum_faces (c_f - c_e) . S_f (S_f the outward vector area of face f, c_f its
//!    centroid, c_e the element's) are reoriented in place, because the solvers compute outward
//!    normals from the vertex order. 2D meshes that are not planar (surfaces embedded in 3D) have
//!    no global "counter-clockwise"; only their degeneracy is checked (with |cross product|);
//! 6. planar quadrilaterals must be convex (all four corner triangles of one sign), since the
//!    geometry code treats them as simple convex polygons;
//! 7. vertices that no element uses are dropped and connectivity and boundary facets renumbered;
//!    boundary facets that then reference a dropped vertex are dropped too (both with a warning);
//! 8. duplicate elements (same vertex set; one sort of element hashes);
//! 9. [`Topology::build`]: non-manifold faces (one sort of faces).
//!
//! 10. planar 2D meshes: no two elements overlap, whether or not they share an edge (a fold
//!     across a shared edge, two stacked triangulations, a triangle inside another; see
//!     the `overlap` module: a grid of bounding boxes and an exact orientation predicate).
//!
//! Messages name elements and vertices as the file numbers them ([`Mesh::element_label`]: Gmsh
//! tags, Medit 1-based numbers, VTU 0-based cell and point numbers); generated meshes give
//! 0-based positions.

use crate::error::{Error, Result};
use crate::mesh::model::{ElementKind, Mesh};
use crate::mesh::topology::{Topology, NO_ELEMENT, UNTAGGED};

pub use crate::mesh::model::DEGENERACY_TOLERANCE;

/// What validation found and changed.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct ValidationReport {
    /// Spatial dimension of the elements (2 or 3).
    pub dim: usize,
    /// Number of vertices after unused ones were dropped.
    pub num_points: usize,
    /// Number of elements.
    pub num_elements: usize,
    /// Number of boundary facets kept.
    pub num_boundary_facets: usize,
    /// Elements whose vertex order was reversed to make them counter-clockwise (2D) or
    /// positively oriented (3D).
    pub reoriented: usize,
    /// The first reoriented element, if any.
    pub first_reoriented: Option<usize>,
    /// Vertices used by no element, removed.
    pub dropped_vertices: usize,
    /// Boundary facets that referenced removed vertices, removed.
    pub dropped_facets: usize,
    /// True for a 2D mesh that does not lie in a plane z = const (a surface in 3D): no
    /// orientation was checked.
    pub embedded_surface: bool,
    /// Smallest element area (2D) or volume (3D), absolute value.
    pub min_measure: f64,
    /// Total area (2D) or volume (3D), sum of absolute values.
    pub total_measure: f64,
    /// Number of faces (edges in 2D).
    pub num_faces: usize,
    /// Number of boundary faces.
    pub num_boundary_faces: usize,
    /// Boundary faces that no tagged boundary facet covers.
    pub untagged_boundary_faces: usize,
}

/// Validate `mesh` in place (see the module doc for the checks and fixes) and report.
pub fn validate(mesh: &mut Mesh) -> Result<ValidationReport> {
    check_structure(mesh)?;
    check_indices(mesh)?;
    check_coordinates(mesh)?;
    let mut report = ValidationReport {
        dim: mesh.dim,
        ..Default::default()
    };
    report.embedded_surface = mesh.dim == 2 && !mesh.is_planar();
    check_measures_and_orient(mesh, &mut report)?;
    if report.reoriented > 0 {
        log::warn!(
            "reoriented {} element(s) with negative orientation (first: {})",
            report.reoriented,
            mesh.element_label(report.first_reoriented.unwrap_or(0))
        );
    }
    drop_unused_vertices(mesh, &mut report);
    check_duplicates(mesh)?;
    let topo = Topology::build(mesh)?;
    if !report.embedded_surface {
        check_folds(mesh, &topo)?;
        super::overlap::check_overlaps(mesh)?;
    }
    report.num_points = mesh.num_points();
    report.num_elements = mesh.num_elements();
    report.num_boundary_facets = mesh.boundary_facets.len();
    report.num_faces = topo.num_faces();
    report.num_boundary_faces = topo.num_boundary_faces();
    report.untagged_boundary_faces = (0..topo.num_faces())
        .filter(|&f| topo.right[f] == NO_ELEMENT && topo.boundary_tag[f] == UNTAGGED)
        .count();
    Ok(report)
}

/// Dimension, element count, CSR consistency and element kinds.
fn check_structure(mesh: &Mesh) -> Result<()> {
    if mesh.dim != 2 && mesh.dim != 3 {
        return Err(Error::invalid_mesh(format!(
            "mesh dimension {} is not supported; chromaflow needs 2D (triangles, quadrilaterals) \
             or 3D (tetrahedra, hexahedra, prisms, pyramids) elements",
            mesh.dim
        )));
    }
    let ne = mesh.num_elements();
    if ne == 0 {
        return Err(Error::invalid_mesh("mesh has no elements"));
    }
    if ne > u32::MAX as usize - 1 || mesh.num_points() > u32::MAX as usize - 1 {
        return Err(Error::invalid_mesh(format!(
            "mesh too large: {} elements, {} vertices (at most {} each)",
            ne,
            mesh.num_points(),
            u32::MAX - 1
        )));
    }
    if mesh.offsets.len() != ne + 1 || mesh.region_tags.len() != ne {
        return Err(Error::invalid_mesh(format!(
            "inconsistent mesh arrays: {} element kinds, {} offsets (expected {}), {} region tags",
            ne,
            mesh.offsets.len(),
            ne + 1,
            mesh.region_tags.len()
        )));
    }
    if mesh.offsets[0] != 0 || mesh.offsets[ne] as usize != mesh.connectivity.len() {
        return Err(Error::invalid_mesh(format!(
            "inconsistent mesh arrays: offsets run from {} to {} but connectivity has {} entries",
            mesh.offsets[0],
            mesh.offsets[ne],
            mesh.connectivity.len()
        )));
    }
    for (e, kind) in mesh.kinds.iter().enumerate() {
        let n = mesh.offsets[e + 1].wrapping_sub(mesh.offsets[e]) as usize;
        if n != kind.num_vertices() {
            return Err(Error::invalid_mesh(format!(
                "{} has {n} vertices, expected {}",
                mesh.element_label(e),
                kind.num_vertices()
            )));
        }
        if kind.dim() != mesh.dim {
            return Err(Error::invalid_mesh(format!(
                "{} is {}D but the mesh is {}D",
                mesh.element_label(e),
                kind.dim(),
                mesh.dim
            )));
        }
    }
    Ok(())
}

/// Every vertex index of elements and boundary facets is in range; facets have the right size.
fn check_indices(mesh: &Mesh) -> Result<()> {
    let np = mesh.num_points();
    for e in 0..mesh.num_elements() {
        if let Some(&v) = mesh.element(e).iter().find(|&&v| v as usize >= np) {
            return Err(Error::invalid_mesh(format!(
                "{} references vertex index {v} but the mesh has {np} vertices",
                mesh.element_label(e)
            )));
        }
    }
    for (i, f) in mesh.boundary_facets.iter().enumerate() {
        let ok = if mesh.dim == 2 {
            f.vertices.len() == 2
        } else {
            f.vertices.len() == 3 || f.vertices.len() == 4
        };
        if !ok {
            return Err(Error::invalid_mesh(format!(
                "boundary facet {i} has {} vertices; a {}D mesh needs {}",
                f.vertices.len(),
                mesh.dim,
                if mesh.dim == 2 { "2" } else { "3 or 4" }
            )));
        }
        if let Some(&v) = f.vertices.iter().find(|&&v| v as usize >= np) {
            return Err(Error::invalid_mesh(format!(
                "boundary facet {i} (tag {}) references vertex {v} but the mesh has {np} vertices",
                f.tag
            )));
        }
    }
    Ok(())
}

fn check_coordinates(mesh: &Mesh) -> Result<()> {
    if let Some((v, p)) = mesh
        .points
        .iter()
        .enumerate()
        .find(|(_, p)| !p.iter().all(|c| c.is_finite()))
    {
        return Err(Error::invalid_mesh(format!(
            "{} has non-finite coordinate ({}, {}, {})",
            mesh.vertex_label(v),
            p[0],
            p[1],
            p[2]
        )));
    }
    Ok(())
}

/// In a planar 2D mesh, two neighbours list their shared edge in opposite directions. The same
/// direction means one is folded over the other (overlapping elements: a vertex moved across
/// an edge), which reorienting single elements cannot tell from an element listed clockwise.
fn check_folds(mesh: &Mesh, topo: &Topology) -> Result<()> {
    if mesh.dim != 2 {
        return Ok(());
    }
    for f in 0..topo.num_faces() {
        let r = topo.right[f] as usize;
        if topo.right[f] == NO_ELEMENT {
            continue;
        }
        let local = mesh.kinds[r].local_faces()[topo.right_local[f] as usize];
        let fv = topo.face_vertices.row(f);
        if mesh.element(r)[local[0]] == fv[0] {
            return Err(Error::invalid_mesh(format!(
                "{} and {} overlap (one is folded over their shared edge between {} and {}): \
                 the mesh is tangled",
                mesh.element_label(topo.left[f] as usize),
                mesh.element_label(r),
                mesh.vertex_label(fv[0] as usize),
                mesh.vertex_label(fv[1] as usize)
            )));
        }
    }
    Ok(())
}

/// a - b.
pub(crate) fn sub(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

/// a x b.
pub(crate) fn cross(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}

/// a . b.
pub(crate) fn dot(a: [f64; 3], b: [f64; 3]) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

fn norm(a: [f64; 3]) -> f64 {
    dot(a, a).sqrt()
}

/// Longest edge of an element, over the edges of its faces (2D: its edges).
fn max_edge(kind: ElementKind, p: &[[f64; 3]]) -> f64 {
    let mut h2: f64 = 0.0;
    for face in kind.local_faces() {
        let n = face.len();
        let pairs = if n == 2 { 1 } else { n };
        for k in 0..pairs {
            let d = sub(p[face[(k + 1) % n]], p[face[k]]);
            h2 = h2.max(dot(d, d));
        }
    }
    h2.sqrt()
}

/// Signed volume of a 3D element by the divergence theorem over its faces (exact for planar
/// faces; quadrilateral faces use the vector area 1/2 d1 x d2 of their diagonals).
fn signed_volume(kind: ElementKind, p: &[[f64; 3]]) -> f64 {
    if kind == ElementKind::Tetrahedron {
        return dot(sub(p[1], p[0]), cross(sub(p[2], p[0]), sub(p[3], p[0]))) / 6.0;
    }
    let n = p.len() as f64;
    let ce = p.iter().fold([0.0; 3], |s, q| {
        [s[0] + q[0] / n, s[1] + q[1] / n, s[2] + q[2] / n]
    });
    let mut vol = 0.0;
    for face in kind.local_faces() {
        let (s, cf) = if face.len() == 3 {
            let c = cross(sub(p[face[1]], p[face[0]]), sub(p[face[2]], p[face[0]]));
            let m = [0, 1, 2].map(|d| (p[face[0]][d] + p[face[1]][d] + p[face[2]][d]) / 3.0);
            ([0.5 * c[0], 0.5 * c[1], 0.5 * c[2]], m)
        } else {
            let c = cross(sub(p[face[2]], p[face[0]]), sub(p[face[3]], p[face[1]]));
            let m = [0, 1, 2].map(|d| face.iter().map(|&i| p[i][d]).sum::<f64>() / 4.0);
            ([0.5 * c[0], 0.5 * c[1], 0.5 * c[2]], m)
        };
        vol += dot(sub(cf, ce), s) / 3.0;
    }
    vol
}

/// Local vertex permutation that mirrors an element (reverses its orientation).
fn mirror(kind: ElementKind) -> &'static [usize] {
    match kind {
        ElementKind::Triangle => &[0, 2, 1],
        ElementKind::Quad => &[0, 3, 2, 1],
        ElementKind::Tetrahedron => &[0, 2, 1, 3],
        ElementKind::Hexahedron => &[0, 3, 2, 1, 4, 7, 6, 5],
        ElementKind::Prism => &[0, 2, 1, 3, 5, 4],
        ElementKind::Pyramid => &[0, 3, 2, 1, 4],
    }
}

/// Degeneracy, convexity and orientation of every element; reorients negative ones in place.
fn check_measures_and_orient(mesh: &mut Mesh, report: &mut ValidationReport) -> Result<()> {
    let mut min_measure = f64::INFINITY;
    let mut total = 0.0;
    let mut p = [[0.0f64; 3]; 8];
    for e in 0..mesh.num_elements() {
        let kind = mesh.kinds[e];
        let (a, b) = (mesh.offsets[e] as usize, mesh.offsets[e + 1] as usize);
        for (k, &v) in mesh.connectivity[a..b].iter().enumerate() {
            p[k] = mesh.points[v as usize];
        }
        let p = &p[..b - a];
        let h = max_edge(kind, p);
        let (measure, what, scale) = if mesh.dim == 2 {
            let m = if report.embedded_surface {
                let c = if kind == ElementKind::Triangle {
                    cross(sub(p[1], p[0]), sub(p[2], p[0]))
                } else {
                    cross(sub(p[2], p[0]), sub(p[3], p[1]))
                };
                0.5 * norm(c)
            } else {
                shoelace(p)
            };
            (m, "area", h * h)
        } else {
            (signed_volume(kind, p), "volume", h * h * h)
        };
        // NaN-safe: a NaN measure (overflowing coordinates) is degenerate too.
        let nondegenerate = measure.abs() > DEGENERACY_TOLERANCE * scale;
        if !nondegenerate {
            return Err(Error::invalid_mesh(format!(
                "{} is degenerate: {what} {} (longest edge {h})",
                mesh.element_label(e),
                measure.abs()
            )));
        }
        if kind == ElementKind::Quad && !report.embedded_surface {
            let s = measure.signum();
            let convex = (0..4).all(|i| {
                let t = shoelace(&[p[(i + 3) % 4], p[i], p[(i + 1) % 4]]);
                t * s > 0.0
            });
            if !convex {
                return Err(Error::invalid_mesh(format!(
                    "{} is not convex or is self-intersecting",
                    mesh.element_label(e)
                )));
            }
        }
        if measure < 0.0 {
            let old: Vec<u32> = mesh.connectivity[a..b].to_vec();
            for (k, &m) in mirror(kind).iter().enumerate() {
                mesh.connectivity[a + k] = old[m];
            }
            report.reoriented += 1;
            report.first_reoriented.get_or_insert(e);
        }
        min_measure = min_measure.min(measure.abs());
        total += measure.abs();
    }
    report.min_measure = min_measure;
    report.total_measure = total;
    Ok(())
}

/// Signed area of a planar polygon in the xy plane (shoelace formula).
fn shoelace(p: &[[f64; 3]]) -> f64 {
    let n = p.len();
    let mut s = 0.0;
    for i in 0..n {
        let (a, b) = (p[i], p[(i + 1) % n]);
        s += (a[0] - p[0][0]) * (b[1] - p[0][1]) - (b[0] - p[0][0]) * (a[1] - p[0][1]);
    }
    0.5 * s
}

/// Remove vertices that no element uses, keeping the order of the others.
fn drop_unused_vertices(mesh: &mut Mesh, report: &mut ValidationReport) {
    let np = mesh.num_points();
    let mut used = vec![false; np];
    for &v in &mesh.connectivity {
        used[v as usize] = true;
    }
    let dropped = used.iter().filter(|&&u| !u).count();
    if dropped == 0 {
        return;
    }
    let mut new_index = vec![u32::MAX; np];
    let mut points = Vec::with_capacity(np - dropped);
    let mut first = None;
    for v in 0..np {
        if used[v] {
            new_index[v] = points.len() as u32;
            points.push(mesh.points[v]);
        } else {
            first.get_or_insert(v);
        }
    }
    let first = first.map(|v| mesh.vertex_label(v));
    mesh.points = points;
    if mesh.numbering.nodes.len() == np {
        let kept = (0..np).filter(|&v| used[v]);
        mesh.numbering.nodes = kept.map(|v| mesh.numbering.nodes[v]).collect();
    }
    for v in &mut mesh.connectivity {
        *v = new_index[*v as usize];
    }
    let before = mesh.boundary_facets.len();
    mesh.boundary_facets.retain_mut(|f| {
        for v in &mut f.vertices {
            *v = new_index[*v as usize];
        }
        f.vertices.iter().all(|&v| v != u32::MAX)
    });
    report.dropped_vertices = dropped;
    report.dropped_facets = before - mesh.boundary_facets.len();
    log::warn!(
        "dropped {dropped} vertex(es) used by no element (first: {})",
        first.unwrap_or_default()
    );
    if report.dropped_facets > 0 {
        log::warn!(
            "dropped {} boundary facet(s) on vertices used by no element",
            report.dropped_facets
        );
    }
}

/// Two elements with the same vertex set are an error. Elements are bucketed by a hash of their
/// sorted vertices (one sort of 16-byte entries), and only elements with equal hashes are compared.
fn check_duplicates(mesh: &Mesh) -> Result<()> {
    let sorted = |e: usize| {
        let mut k = [u32::MAX; 8];
        let v = mesh.element(e);
        k[..v.len()].copy_from_slice(v);
        k[..v.len()].sort_unstable();
        k
    };
    // Multiply-xorshift mixing of the sorted vertex list (not cryptographic, just well spread).
    let hash = |k: &[u32; 8]| {
        k.iter().fold(0x243F_6A88_85A3_08D3u64, |h, &v| {
            let x = (h ^ u64::from(v)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
            x ^ (x >> 29)
        })
    };
    let mut keys: Vec<(u64, u32)> = (0..mesh.num_elements())
        .map(|e| (hash(&sorted(e)), e as u32))
        .collect();
    keys.sort_unstable();
    let mut i = 0;
    while i < keys.len() {
        let mut j = i + 1;
        while j < keys.len() && keys[j].0 == keys[i].0 {
            j += 1;
        }
        for x in i..j {
            for y in x + 1..j {
                let (a, b) = (keys[x].1 as usize, keys[y].1 as usize);
                if sorted(a) == sorted(b) {
                    return Err(Error::invalid_mesh(format!(
                        "{} and {} are duplicates (same vertices {})",
                        mesh.element_label(a),
                        mesh.element_label(b),
                        mesh.vertex_list(mesh.element(a))
                    )));
                }
            }
        }
        i = j;
    }
    Ok(())
}
