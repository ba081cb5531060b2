//! Coloring of nonconforming triangle meshes after one level of isotropic refinement
//! (Giuliani & Krivodonova, section 3.2 and Algorithm 4).
//!
//! A refined triangle is split into four by its edge midpoints. Next to an unrefined
//! neighbour this leaves a hanging node: the coarse element's edge faces two *child* edges,
//! so a coarse triangle can have up to six faces and six colors are needed. Starting from a
//! conforming 3-coloring (colors `c` in 1..=3 in GK's notation), GK color the refined mesh by
//! a mapping, with no search at all:
//!
//! * a face untouched by refinement keeps its color;
//! * child `m` (1 or 2) of a split parent edge of color `c` gets `((c + 3m - 4) mod 6) + 1`:
//!   the first child keeps `c`, the second gets `c + 3`. Children are ordered counter-clockwise
//!   as seen from the parent edge's *left* element, so the numbering is unambiguous;
//! * the three interior edges of a refined triangle take the color of the parent edge they are
//!   parallel to.
//!
//! Why it is valid: a corner child has one half of each of two parent edges (colors `c_i` or
//! `c_i + 3`) and an interior edge (color `c_j`), with `c_i`, `c_k`, `c_j` the three distinct
//! parent colors, so the colors differ modulo 3; the center child carries the three parent
//! colors; a coarse element sees `c` and `c + 3` on a split edge and colors of other residues
//! elsewhere. Coarsening merges four children back; the parent edge takes the color of the
//! interior edge parallel to it, which restores the parent coloring exactly.
//!
//! Colors here are 0-based like everywhere else in the crate (GK's color `c` is our `c - 1`).
//! To coarsen only some elements, coarsen the colors back to the conforming mesh
//! ([`coarsen_colors`]) and refine again with the smaller set: the mapping is a pure function
//! of the parent coloring, so the result is what GK's incremental update produces.

use crate::color::faces::check_face_coloring;
use crate::error::{Error, Result};
use crate::mesh::model::{BoundaryFacet, ElementKind, Mesh};
use crate::mesh::topology::{Csr, Topology, NO_ELEMENT, UNTAGGED};

/// Marks "no such face / vertex".
const NONE: u32 = u32::MAX;

/// Marks an element that is not a child of a refined element.
pub const NOT_A_CHILD: u8 = u8::MAX;

/// What a face of the refined mesh is with respect to the conforming parent mesh.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NcFaceKind {
    /// A parent face that was not split (neither neighbour refined).
    Original,
    /// Child `m` (1 or 2) of a split parent face, in GK's order.
    Child(u8),
    /// An interior edge of a refined triangle.
    Interior,
}

/// A triangle mesh with one level of isotropic refinement and hanging nodes.
///
/// `topo` lists the faces the solver loops over: a coarse element next to a refined one has
/// two faces (the two child edges) on that side, both with the coarse element's local edge
/// index. Faces keep the orientation of their parent (the element on the parent's left side is
/// the left element), so `left` is not necessarily the lower-numbered element here.
#[derive(Clone, Debug)]
pub struct NonconformingMesh {
    /// The refined mesh: unrefined parents and the children of refined ones, plus midpoints.
    pub mesh: Mesh,
    /// Faces with their left/right elements, element-to-face CSR, adjacency.
    pub topo: Topology,
    /// Kind of each face.
    pub face_kind: Vec<NcFaceKind>,
    /// Parent face of each face: itself for `Original`, the split parent for `Child`, the
    /// parallel parent edge for `Interior`.
    pub parent_face: Vec<u32>,
    /// Parent element of each element of the refined mesh.
    pub element_parent: Vec<u32>,
    /// Which child: 0..3 the corner child at parent vertex i, 3 the center child,
    /// [`NOT_A_CHILD`] for an unrefined element.
    pub element_child: Vec<u8>,
    /// Refinement flag of each parent element.
    pub refined: Vec<bool>,
    /// Midpoint vertex of each parent face that was split (`u32::MAX` otherwise).
    pub face_midpoint: Vec<u32>,
    /// Number of faces of the parent mesh.
    pub num_parent_faces: usize,
}

/// Refine the flagged elements of a conforming triangle mesh into four children each (one
/// level; every flag set is admissible since neighbours then differ by at most one level).
pub fn refine(mesh: &Mesh, topo: &Topology, refine: &[bool]) -> Result<NonconformingMesh> {
    let ne = mesh.num_elements();
    if !mesh.kinds.iter().all(|&k| k == ElementKind::Triangle) {
        return Err(Error::Invalid(
            "nonconforming refinement: only triangle meshes are supported".into(),
        ));
    }
    if refine.len() != ne || topo.element_faces.num_rows() != ne {
        return Err(Error::Invalid(format!(
            "nonconforming refinement: {} flags and {} topology rows for {ne} elements",
            refine.len(),
            topo.element_faces.num_rows()
        )));
    }
    let nf = topo.num_faces();
    let mut out = Mesh::new(mesh.dim);
    out.points = mesh.points.clone();
    out.boundary_facets = mesh.boundary_facets.clone();
    out.physical_names = mesh.physical_names.clone();

    // Midpoints of split faces.
    let mut face_midpoint = vec![NONE; nf];
    for (f, mid) in face_midpoint.iter_mut().enumerate() {
        let r = topo.right[f];
        let split = refine[topo.left[f] as usize] || (r != NO_ELEMENT && refine[r as usize]);
        if split {
            let fv = topo.face_vertices.row(f);
            let (a, b) = (mesh.points[fv[0] as usize], mesh.points[fv[1] as usize]);
            *mid = out.points.len() as u32;
            out.points.push([
                0.5 * (a[0] + b[0]),
                0.5 * (a[1] + b[1]),
                0.5 * (a[2] + b[2]),
            ]);
        }
    }

    // Elements: children c_i = (v_i, m_i, m_{i+2}) for i < 3 and the center (m0, m1, m2),
    // where m_i is the midpoint of local edge i = (v_i, v_{i+1}). All counter-clockwise when
    // the parent is.
    let mut first_new = vec![0u32; ne];
    let mut element_parent = Vec::with_capacity(ne);
    let mut element_child = Vec::with_capacity(ne);
    let mut mids = vec![[NONE; 3]; ne];
    for e in 0..ne {
        first_new[e] = out.num_elements() as u32;
        let v = mesh.element(e);
        let tag = mesh.region_tags[e];
        if !refine[e] {
            out.push_element(ElementKind::Triangle, v, tag);
            element_parent.push(e as u32);
            element_child.push(NOT_A_CHILD);
            continue;
        }
        let row = topo.element_faces.row(e);
        if row.len() != 3 {
            return Err(Error::Invalid(format!(
                "nonconforming refinement: element {e} has {} faces in the topology",
                row.len()
            )));
        }
        let m = [0, 1, 2].map(|i| face_midpoint[row[i] as usize]);
        mids[e] = m;
        for i in 0..3 {
            out.push_element(ElementKind::Triangle, &[v[i], m[i], m[(i + 2) % 3]], tag);
            element_parent.push(e as u32);
            element_child.push(i as u8);
        }
        out.push_element(ElementKind::Triangle, &m, tag);
        element_parent.push(e as u32);
        element_child.push(3);
    }

    // Faces.
    struct Face {
        verts: [u32; 2],
        left: u32,
        right: u32,
        left_local: u8,
        right_local: u8,
        tag: i32,
        kind: NcFaceKind,
        parent: u32,
    }
    let mut faces: Vec<Face> = Vec::with_capacity(nf + 4 * ne);
    // The element holding the half of parent edge `local` of parent `e` that touches the
    // edge's start (first = true) or end vertex, in e's own traversal, and its local index.
    let half_owner = |e: u32, local: u8, first: bool| -> (u32, u8) {
        let e = e as usize;
        if !refine[e] {
            return (first_new[e], local);
        }
        if first {
            (first_new[e] + local as u32, 0)
        } else {
            (first_new[e] + (local as u32 + 1) % 3, 2)
        }
    };
    for (f, &m) in face_midpoint.iter().enumerate() {
        let (l, r) = (topo.left[f], topo.right[f]);
        let (ll, rl) = (topo.left_local[f], topo.right_local[f]);
        let fv = topo.face_vertices.row(f);
        let tag = topo.boundary_tag.get(f).copied().unwrap_or(UNTAGGED);
        if m == NONE {
            faces.push(Face {
                verts: [fv[0], fv[1]],
                left: first_new[l as usize],
                right: if r == NO_ELEMENT {
                    NO_ELEMENT
                } else {
                    first_new[r as usize]
                },
                left_local: ll,
                right_local: rl,
                tag,
                kind: NcFaceKind::Original,
                parent: f as u32,
            });
            continue;
        }
        // The left element traverses the parent as a -> b; child 1 is (a, m), child 2 is
        // (m, b): counter-clockwise order as seen from the left element (GK's rule). The right
        // element traverses b -> a, so its first half is child 2.
        for (child, verts) in [(1u8, [fv[0], m]), (2u8, [m, fv[1]])] {
            let (left, left_local) = half_owner(l, ll, child == 1);
            let (right, right_local) = if r == NO_ELEMENT {
                (NO_ELEMENT, 0)
            } else {
                half_owner(r, rl, child == 2)
            };
            faces.push(Face {
                verts,
                left,
                right,
                left_local,
                right_local,
                tag,
                kind: NcFaceKind::Child(child),
                parent: f as u32,
            });
        }
    }
    for e in 0..ne {
        if !refine[e] {
            continue;
        }
        let m = mids[e];
        let row = topo.element_faces.row(e);
        let center = first_new[e] + 3;
        // Center edge j = (m_j, m_{j+1}) is corner (j+1)'s edge 1, parallel to parent edge
        // j + 2.
        for j in 0..3 {
            faces.push(Face {
                verts: [m[j], m[(j + 1) % 3]],
                left: center,
                right: first_new[e] + ((j as u32 + 1) % 3),
                left_local: j as u8,
                right_local: 1,
                tag: UNTAGGED,
                kind: NcFaceKind::Interior,
                parent: row[(j + 2) % 3],
            });
        }
    }

    let nnf = faces.len();
    let mut topo_out = Topology {
        face_vertices: Csr {
            offsets: (0..=nnf as u32).map(|i| 2 * i).collect(),
            indices: faces.iter().flat_map(|f| f.verts).collect(),
        },
        left: faces.iter().map(|f| f.left).collect(),
        right: faces.iter().map(|f| f.right).collect(),
        left_local: faces.iter().map(|f| f.left_local).collect(),
        right_local: faces.iter().map(|f| f.right_local).collect(),
        boundary_tag: faces.iter().map(|f| f.tag).collect(),
        ..Default::default()
    };
    let nne = out.num_elements();
    let mut pairs: Vec<(u32, u8, u32)> = Vec::with_capacity(2 * nnf);
    for (i, f) in faces.iter().enumerate() {
        pairs.push((f.left, f.left_local, i as u32));
        if f.right != NO_ELEMENT {
            pairs.push((f.right, f.right_local, i as u32));
        }
    }
    pairs.sort_unstable();
    let ef: Vec<(u32, u32)> = pairs.iter().map(|&(e, _, f)| (e, f)).collect();
    topo_out.element_faces = Csr::from_pairs(nne, &ef);
    let mut ve = Vec::with_capacity(out.connectivity.len());
    for e in 0..nne {
        for &v in out.element(e) {
            ve.push((v, e as u32));
        }
    }
    topo_out.vertex_elements = Csr::from_pairs(out.num_points(), &ve);
    let mut vv: Vec<(u32, u32)> = faces
        .iter()
        .flat_map(|f| [(f.verts[0], f.verts[1]), (f.verts[1], f.verts[0])])
        .collect();
    vv.sort_unstable();
    vv.dedup();
    topo_out.vertex_neighbors = Csr::from_pairs(out.num_points(), &vv);

    Ok(NonconformingMesh {
        face_kind: faces.iter().map(|f| f.kind).collect(),
        parent_face: faces.iter().map(|f| f.parent).collect(),
        mesh: out,
        topo: topo_out,
        element_parent,
        element_child,
        refined: refine.to_vec(),
        face_midpoint,
        num_parent_faces: nf,
    })
}

/// Uniform refinement, `levels` times: [`refine`] with every element flagged (no hanging
/// nodes), so h halves and the element count is 4^levels NE, each mesh nested in the next (the
/// standard sequence of a convergence study). New vertices are the straight edge midpoints
/// (curved boundaries are not followed); children keep their parent's region tag and each
/// boundary facet is split into its two halves with the facet's tag, so periodic pairs (split
/// alike on both sides) still pair by translation. Errors on non-triangle meshes and on a
/// boundary facet that is not an edge of the mesh.
pub fn refine_uniformly(mut mesh: Mesh, levels: usize) -> Result<Mesh> {
    for _ in 0..levels {
        let topo = Topology::build(&mesh)?;
        let nc = refine(&mesh, &topo, &vec![true; mesh.num_elements()])?;
        let edge_key = |v: &[u32]| (v[0].min(v[1]), v[0].max(v[1]));
        let mut faces: Vec<((u32, u32), usize)> = (0..topo.num_faces())
            .map(|f| (edge_key(topo.face_vertices.row(f)), f))
            .collect();
        faces.sort_unstable();
        let mut facets = Vec::with_capacity(2 * mesh.boundary_facets.len());
        for (i, facet) in mesh.boundary_facets.iter().enumerate() {
            let face = (facet.vertices.len() == 2)
                .then(|| edge_key(&facet.vertices))
                .and_then(|key| faces.binary_search_by(|p| p.0.cmp(&key)).ok());
            let Some(pos) = face else {
                return Err(Error::invalid_mesh(format!(
                    "uniform refinement: boundary facet {i} (vertices {}, tag {}) is not an \
                     edge of the mesh",
                    mesh.vertex_list(&facet.vertices),
                    facet.tag
                )));
            };
            let mid = nc.face_midpoint[faces[pos].1];
            let (a, b) = (facet.vertices[0], facet.vertices[1]);
            for half in [[a, mid], [mid, b]] {
                facets.push(BoundaryFacet {
                    vertices: half.to_vec(),
                    tag: facet.tag,
                });
            }
        }
        mesh = nc.mesh;
        mesh.boundary_facets = facets;
    }
    Ok(mesh)
}

/// GK's child-edge mapping on 0-based colors: child `m` (1 or 2) of a parent edge of color
/// `c` gets `((c + 3m - 4) mod 6) + 1` in GK's 1-based notation, i.e. `c` for the first child
/// and `c + 3` for the second.
pub fn map_child_color(c: u8, m: u8) -> u8 {
    let c1 = c as i32 + 1;
    ((c1 + 3 * m as i32 - 4).rem_euclid(6) + 1 - 1) as u8
}

/// Colors of the refined mesh from a 3-coloring of the parent faces (GK Algorithm 4).
pub fn refine_colors(nc: &NonconformingMesh, parent_colors: &[u8]) -> Result<Vec<u8>> {
    if parent_colors.len() != nc.num_parent_faces {
        return Err(Error::Invalid(format!(
            "nonconforming coloring: {} parent colors for {} parent faces",
            parent_colors.len(),
            nc.num_parent_faces
        )));
    }
    if let Some(f) = parent_colors.iter().position(|&c| c >= 3) {
        return Err(Error::Invalid(format!(
            "nonconforming coloring needs a 3-coloring of the parent mesh; face {f} has color {}",
            parent_colors[f]
        )));
    }
    Ok(nc
        .face_kind
        .iter()
        .zip(&nc.parent_face)
        .map(|(&kind, &p)| {
            let c = parent_colors[p as usize];
            match kind {
                NcFaceKind::Original | NcFaceKind::Interior => c,
                NcFaceKind::Child(m) => map_child_color(c, m),
            }
        })
        .collect())
}

/// Coarsening (GK Algorithm 4, last loop): the parent coloring recovered from a coloring of
/// the refined mesh. Unsplit faces keep their color; a split parent edge takes the color of
/// the interior edge parallel to it in a refined neighbour.
pub fn coarsen_colors(nc: &NonconformingMesh, colors: &[u8]) -> Result<Vec<u8>> {
    if colors.len() != nc.face_kind.len() {
        return Err(Error::Invalid(format!(
            "coarsening: {} colors for {} faces",
            colors.len(),
            nc.face_kind.len()
        )));
    }
    let mut parent = vec![u8::MAX; nc.num_parent_faces];
    for (f, (&kind, &p)) in nc.face_kind.iter().zip(&nc.parent_face).enumerate() {
        if kind != NcFaceKind::Child(1) && kind != NcFaceKind::Child(2) {
            parent[p as usize] = colors[f];
        }
    }
    if let Some(f) = parent.iter().position(|&c| c == u8::MAX) {
        return Err(Error::Invalid(format!(
            "coarsening: parent face {f} has neither an unsplit face nor a parallel interior edge"
        )));
    }
    Ok(parent)
}

/// Check a coloring of a refined mesh: every face colored and no element (coarse elements
/// with their child edges included) with two faces of one color.
pub fn check_nonconforming_coloring(nc: &NonconformingMesh, colors: &[u8]) -> Result<(), String> {
    check_face_coloring(&nc.topo, colors)
}

impl NonconformingMesh {
    /// Check the structure: faces refer to existing elements, each element's faces have the
    /// right vertices (a child face lies on the parent edge of its coarse element), and the
    /// face lengths of every element add up to its perimeter (no gap, no overlap).
    pub fn validate(&self) -> Result<(), String> {
        let ne = self.mesh.num_elements();
        let p = &self.mesh.points;
        let dist = |a: u32, b: u32| -> f64 {
            let (x, y) = (p[a as usize], p[b as usize]);
            ((x[0] - y[0]).powi(2) + (x[1] - y[1]).powi(2) + (x[2] - y[2]).powi(2)).sqrt()
        };
        let mut covered = vec![0.0f64; ne];
        for f in 0..self.topo.num_faces() {
            let fv = self.topo.face_vertices.row(f);
            let len = dist(fv[0], fv[1]);
            for (e, local) in [
                (self.topo.left[f], self.topo.left_local[f]),
                (self.topo.right[f], self.topo.right_local[f]),
            ] {
                if e == NO_ELEMENT {
                    continue;
                }
                if e as usize >= ne || local > 2 {
                    return Err(format!("face {f} refers to element {e} local edge {local}"));
                }
                let v = self.mesh.element(e as usize);
                let (a, b) = (v[local as usize], v[(local as usize + 1) % 3]);
                // Each face endpoint must lie on the element edge (a, b).
                for &x in fv {
                    let off = dist(a, x) + dist(x, b) - dist(a, b);
                    if off.abs() > 1e-9 * (1.0 + dist(a, b)) {
                        return Err(format!(
                            "face {f}: vertex {x} is not on edge {local} of element {e}"
                        ));
                    }
                }
                covered[e as usize] += len;
            }
        }
        for (e, &c) in covered.iter().enumerate() {
            let v = self.mesh.element(e);
            let per = dist(v[0], v[1]) + dist(v[1], v[2]) + dist(v[2], v[0]);
            if (c - per).abs() > 1e-9 * (1.0 + per) {
                return Err(format!(
                    "element {e}: faces cover length {c}, perimeter is {per}"
                ));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mesh::generate::rectangle;
    use crate::mesh::validate::validate;

    /// Signed area of triangle `e` (positive when counter-clockwise).
    fn signed_area(m: &Mesh, e: usize) -> f64 {
        let [a, b, c] = [0, 1, 2].map(|i| m.points[m.element(e)[i] as usize]);
        0.5 * ((b[0] - a[0]) * (c[1] - a[1]) - (c[0] - a[0]) * (b[1] - a[1]))
    }

    /// Uniform refinement k = 0..3 of an unstructured rectangle: 4^k NE elements, every one
    /// counter-clockwise, element e's descendants (slots e 4^k .. (e + 1) 4^k) tile exactly its
    /// area, every boundary face of the refined mesh tagged with the tag of the base facet it
    /// lies on (2^k faces per facet), and the mesh checker passes with nothing to fix.
    #[test]
    fn uniform_refinement_nests_keeps_area_and_boundary_tags() {
        let base = rectangle(-1.0, 2.0, 0.0, 1.0, 60, 7).expect("mesh");
        let ne = base.num_elements();
        let facets = base.boundary_facets.clone();
        assert!(facets.iter().all(|f| f.tag != UNTAGGED) && facets.len() > 10);
        let point = |m: &Mesh, v: u32| {
            let p = m.points[v as usize];
            [p[0], p[1]]
        };
        for k in 0..=3usize {
            let mut fine = refine_uniformly(base.clone(), k).expect("refine");
            let per = 4usize.pow(k as u32);
            assert_eq!(fine.num_elements(), per * ne, "k = {k}");
            for e in 0..ne {
                let children: f64 = (e * per..(e + 1) * per)
                    .map(|c| signed_area(&fine, c))
                    .inspect(|&a| assert!(a > 0.0, "k = {k}: a child of {e} is clockwise"))
                    .sum();
                let parent = signed_area(&base, e);
                assert!(
                    (children - parent).abs() <= 1e-13 * parent.abs().max(1e-300),
                    "k = {k}, element {e}: children {children} against {parent}"
                );
            }
            let topo = Topology::build(&fine).expect("topology");
            let mut per_facet = vec![0usize; facets.len()];
            for f in (0..topo.num_faces()).filter(|&f| topo.right[f] == NO_ELEMENT) {
                let fv = topo.face_vertices.row(f);
                let [a, b] = [point(&fine, fv[0]), point(&fine, fv[1])];
                // The base facet (p, q) holding the face: both ends on the segment.
                let on = |p: [f64; 2], q: [f64; 2], x: [f64; 2]| {
                    let d = |u: [f64; 2], v: [f64; 2]| (u[0] - v[0]).hypot(u[1] - v[1]);
                    (d(p, x) + d(x, q) - d(p, q)).abs() <= 1e-12
                };
                let parent = facets.iter().position(|g| {
                    let [p, q] = [point(&base, g.vertices[0]), point(&base, g.vertices[1])];
                    on(p, q, a) && on(p, q, b)
                });
                let parent = parent.unwrap_or_else(|| panic!("k = {k}: face {f} on no facet"));
                assert_eq!(
                    topo.boundary_tag[f], facets[parent].tag,
                    "k = {k}, face {f}"
                );
                per_facet[parent] += 1;
            }
            assert!(per_facet.iter().all(|&n| n == 1 << k), "k = {k}");
            let report = validate(&mut fine).expect("the refined mesh passes the checker");
            assert_eq!(report.untagged_boundary_faces, 0);
            assert_eq!((report.reoriented, report.dropped_vertices), (0, 0));
            assert_eq!(report.num_boundary_facets, facets.len() << k);
            assert!((report.total_measure - 3.0).abs() < 1e-12, "k = {k}");
        }
    }

    /// A boundary facet that is no edge of the mesh is an error naming it, not a panic.
    #[test]
    fn uniform_refinement_rejects_a_facet_that_is_no_edge() {
        let mut mesh = rectangle(0.0, 1.0, 0.0, 1.0, 40, 3).expect("mesh");
        let topo = Topology::build(&mesh).expect("topology");
        let far = (1..mesh.num_points() as u32)
            .find(|v| !topo.vertex_neighbors.row(0).contains(v))
            .expect("a vertex not joined to vertex 0");
        mesh.boundary_facets.push(BoundaryFacet {
            vertices: vec![0, far],
            tag: 9,
        });
        let err = refine_uniformly(mesh, 1)
            .expect_err("not an edge")
            .to_string();
        assert!(
            err.contains("boundary facet") && err.contains("tag 9") && err.contains("not an edge"),
            "{err}"
        );
    }

    #[test]
    fn mapping_matches_gk_formula() {
        // 1-based: c = 1 -> children 1 and 4; c = 3 -> 3 and 6.
        assert_eq!(map_child_color(0, 1), 0);
        assert_eq!(map_child_color(0, 2), 3);
        assert_eq!(map_child_color(2, 1), 2);
        assert_eq!(map_child_color(2, 2), 5);
    }
}
