//! Derived topology: faces (edges in 2D) with their left and right elements, element-to-face
//! and vertex adjacency in CSR form.
//!
//! Faces are found by sorting the (sorted-vertex key, element, local face) triples of every
//! element face: a counting sort by the key's smallest vertex, then each vertex's few entries
//! by the rest of the key (`sort_face_entries`), linear in `sum(faces per element)`. The
//! left element of a face is the lowest-numbered element that has it; the face's vertices are
//! listed in the left element's local orientation, so its normal points out of the left
//! element into the right one.

use crate::error::{Error, Result};
use crate::mesh::model::Mesh;

/// Marks "no element" on the right of a boundary face.
pub const NO_ELEMENT: u32 = u32::MAX;

/// Tag given to boundary faces that the mesh file did not tag.
pub const UNTAGGED: i32 = 0;

/// Compressed sparse rows: row `i` is `indices[offsets[i]..offsets[i+1]]`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Csr {
    pub offsets: Vec<u32>,
    pub indices: Vec<u32>,
}

impl Csr {
    pub fn row(&self, i: usize) -> &[u32] {
        &self.indices[self.offsets[i] as usize..self.offsets[i + 1] as usize]
    }
    pub fn num_rows(&self) -> usize {
        self.offsets.len().saturating_sub(1)
    }
    /// Build from per-row lists given as (row, value) pairs; rows keep insertion order.
    pub fn from_pairs(num_rows: usize, pairs: &[(u32, u32)]) -> Csr {
        let mut offsets = vec![0u32; num_rows + 1];
        for &(r, _) in pairs {
            offsets[r as usize + 1] += 1;
        }
        for i in 0..num_rows {
            offsets[i + 1] += offsets[i];
        }
        let mut fill = offsets.clone();
        let mut indices = vec![0u32; pairs.len()];
        for &(r, v) in pairs {
            indices[fill[r as usize] as usize] = v;
            fill[r as usize] += 1;
        }
        Csr { offsets, indices }
    }
}

/// Faces of a mesh and the adjacency derived from them.
#[derive(Clone, Debug, Default)]
pub struct Topology {
    /// Face vertices (2 per face in 2D), oriented as seen from the left element.
    pub face_vertices: Csr,
    /// Left element of each face.
    pub left: Vec<u32>,
    /// Right element of each face, [`NO_ELEMENT`] on the boundary.
    pub right: Vec<u32>,
    /// Local face index of the face within its left element.
    pub left_local: Vec<u8>,
    /// Local face index within the right element (0 on the boundary).
    pub right_local: Vec<u8>,
    /// Boundary tag of each face ([`UNTAGGED`] for interior faces and untagged boundary faces).
    pub boundary_tag: Vec<i32>,
    /// Faces of each element, in local face order.
    pub element_faces: Csr,
    /// Elements touching each vertex.
    pub vertex_elements: Csr,
    /// Vertices joined to each vertex by an element edge (sorted).
    pub vertex_neighbors: Csr,
}

fn face_key(verts: &[u32]) -> [u32; 4] {
    let mut k = [u32::MAX; 4];
    k[..verts.len()].copy_from_slice(verts);
    k[..verts.len()].sort_unstable();
    k
}

impl Topology {
    /// Extract faces and adjacency. Fails on a face shared by more than two elements
    /// (non-manifold) and on two elements with the same vertex set (duplicates).
    pub fn build(mesh: &Mesh) -> Result<Topology> {
        let ne = mesh.num_elements();
        let entries = sort_face_entries(face_entries(mesh));

        let mut topo = Topology::default();
        let mut face_pairs_ef: Vec<(u32, u32)> = Vec::with_capacity(entries.len());
        let mut fv_offsets = vec![0u32];
        let mut fv_indices = Vec::with_capacity(entries.len() * 2);
        let mut i = 0;
        while i < entries.len() {
            let mut j = i + 1;
            while j < entries.len() && entries[j].0 == entries[i].0 {
                j += 1;
            }
            if j - i > 2 {
                let els: Vec<String> = entries[i..j]
                    .iter()
                    .map(|t| mesh.element_label(t.1 as usize))
                    .collect();
                let key: Vec<u32> = entries[i]
                    .0
                    .into_iter()
                    .filter(|&v| v != u32::MAX)
                    .collect();
                return Err(Error::invalid_mesh(format!(
                    "non-manifold face with vertices {} is shared by {} elements ({}); at most two may share a face",
                    mesh.vertex_list(&key),
                    j - i,
                    els.join(", ")
                )));
            }
            let (_, le, llf) = entries[i];
            let face = topo.left.len() as u32;
            let verts = mesh.element(le as usize);
            for &lv in mesh.kinds[le as usize].local_faces()[llf as usize] {
                fv_indices.push(verts[lv]);
            }
            fv_offsets.push(fv_indices.len() as u32);
            topo.left.push(le);
            topo.left_local.push(llf);
            face_pairs_ef.push((le, face));
            if j - i == 2 {
                let (_, re, rlf) = entries[i + 1];
                topo.right.push(re);
                topo.right_local.push(rlf);
                face_pairs_ef.push((re, face));
            } else {
                topo.right.push(NO_ELEMENT);
                topo.right_local.push(0);
            }
            i = j;
        }
        let nf = topo.left.len();
        topo.face_vertices = Csr {
            offsets: fv_offsets,
            indices: fv_indices,
        };

        // Element -> faces in local order.
        let mut elem_faces = Csr::from_pairs(ne, &face_pairs_ef);
        for e in 0..ne {
            let (a, b) = (
                elem_faces.offsets[e] as usize,
                elem_faces.offsets[e + 1] as usize,
            );
            let row = &mut elem_faces.indices[a..b];
            row.sort_unstable_by_key(|&f| {
                if topo.left[f as usize] == e as u32 {
                    topo.left_local[f as usize]
                } else {
                    topo.right_local[f as usize]
                }
            });
        }
        topo.element_faces = elem_faces;
        check_duplicates(mesh, &topo)?;

        // Boundary tags from the file's facets.
        topo.boundary_tag = vec![UNTAGGED; nf];
        if !mesh.boundary_facets.is_empty() {
            let mut facet_keys: Vec<([u32; 4], i32)> = mesh
                .boundary_facets
                .iter()
                .filter(|f| f.vertices.len() <= 4)
                .map(|f| (face_key(&f.vertices), f.tag))
                .collect();
            facet_keys.sort_unstable();
            for f in 0..nf {
                if topo.right[f] != NO_ELEMENT {
                    continue;
                }
                let key = face_key(topo.face_vertices.row(f));
                if let Ok(pos) = facet_keys.binary_search_by(|p| p.0.cmp(&key)) {
                    topo.boundary_tag[f] = facet_keys[pos].1;
                }
            }
        }

        // Vertex -> elements.
        let mut ve = Vec::with_capacity(mesh.connectivity.len());
        for e in 0..ne {
            for &v in mesh.element(e) {
                ve.push((v, e as u32));
            }
        }
        topo.vertex_elements = Csr::from_pairs(mesh.num_points(), &ve);

        // Vertex -> vertex through face polygon edges (every element edge lies on some face
        // polygon in 3D; in 2D the faces are the edges).
        let mut vv: Vec<(u32, u32)> = Vec::with_capacity(nf * 4);
        for f in 0..nf {
            let fvs = topo.face_vertices.row(f);
            let n = fvs.len();
            let pairs = if n == 2 { 1 } else { n };
            for k in 0..pairs {
                let (a, b) = (fvs[k], fvs[(k + 1) % n]);
                vv.push((a, b));
                vv.push((b, a));
            }
        }
        topo.vertex_neighbors = sorted_unique_rows(mesh.num_points(), &vv);
        Ok(topo)
    }

    pub fn num_faces(&self) -> usize {
        self.left.len()
    }

    pub fn is_boundary(&self, f: usize) -> bool {
        self.right[f] == NO_ELEMENT
    }

    pub fn num_boundary_faces(&self) -> usize {
        self.right.iter().filter(|&&r| r == NO_ELEMENT).count()
    }

    /// Elements sharing a face with each element (the element adjacency graph, CSR).
    pub fn element_adjacency(&self, num_elements: usize) -> Csr {
        let mut pairs = Vec::with_capacity(self.num_faces() * 2);
        for f in 0..self.num_faces() {
            if self.right[f] != NO_ELEMENT {
                pairs.push((self.left[f], self.right[f]));
                pairs.push((self.right[f], self.left[f]));
            }
        }
        pairs.sort_unstable();
        Csr::from_pairs(num_elements, &pairs)
    }

    /// Boundary vertices: vertices on at least one boundary face.
    pub fn boundary_vertices(&self, num_points: usize) -> Vec<bool> {
        let mut b = vec![false; num_points];
        for f in 0..self.num_faces() {
            if self.is_boundary(f) {
                for &v in self.face_vertices.row(f) {
                    b[v as usize] = true;
                }
            }
        }
        b
    }
}

/// (sorted-vertex key, element, local face) of every element face, in element and local-face
/// order.
fn face_entries(mesh: &Mesh) -> Vec<([u32; 4], u32, u8)> {
    let ne = mesh.num_elements();
    let mut entries = Vec::with_capacity(ne * 4);
    for e in 0..ne {
        let verts = mesh.element(e);
        for (lf, local) in mesh.kinds[e].local_faces().iter().enumerate() {
            let mut fv = [0u32; 4];
            for (slot, &i) in fv.iter_mut().zip(local.iter()) {
                *slot = verts[i];
            }
            entries.push((face_key(&fv[..local.len()]), e as u32, lf as u8));
        }
    }
    entries
}

/// Face entries (key, element, local face), given in element and local-face order, in the
/// order `sort_unstable` gives them (lexicographic: no two entries are equal, an element
/// having a face once): bucketed by the key's smallest vertex with a stable counting sort,
/// which keeps each bucket in element order, then each bucket (the faces whose smallest vertex
/// it is: a handful) stably by the rest of the key.
fn sort_face_entries(entries: Vec<([u32; 4], u32, u8)>) -> Vec<([u32; 4], u32, u8)> {
    let buckets = entries
        .iter()
        .map(|t| t.0[0] as usize + 1)
        .max()
        .unwrap_or(0);
    let mut start = vec![0u32; buckets + 1];
    for t in &entries {
        start[t.0[0] as usize + 1] += 1;
    }
    for b in 0..buckets {
        start[b + 1] += start[b];
    }
    let mut sorted = vec![([0u32; 4], 0u32, 0u8); entries.len()];
    let mut next = start.clone();
    for t in entries {
        let slot = &mut next[t.0[0] as usize];
        sorted[*slot as usize] = t;
        *slot += 1;
    }
    for b in 0..buckets {
        let bucket = &mut sorted[start[b] as usize..start[b + 1] as usize];
        if bucket.len() > 1 {
            bucket.sort_by_key(|t| t.0);
        }
    }
    sorted
}

/// The CSR of `pairs` (row, value) with every row sorted and without repeats, as sorting and
/// deduplicating the pairs before [`Csr::from_pairs`] gives, with one short sort per row.
fn sorted_unique_rows(num_rows: usize, pairs: &[(u32, u32)]) -> Csr {
    let mut csr = Csr::from_pairs(num_rows, pairs);
    let mut kept = 0usize;
    let mut row_start = 0usize;
    for r in 0..num_rows {
        let row_end = csr.offsets[r + 1] as usize;
        let row = &mut csr.indices[row_start..row_end];
        row.sort_unstable();
        let mut last = None;
        for j in row_start..row_end {
            let v = csr.indices[j];
            if last != Some(v) {
                csr.indices[kept] = v;
                kept += 1;
                last = Some(v);
            }
        }
        row_start = row_end;
        csr.offsets[r + 1] = kept as u32;
    }
    csr.indices.truncate(kept);
    csr
}

/// The vertices of element `e`, sorted, padded with `u32::MAX` (no element has more than 8).
fn sorted_vertices(mesh: &Mesh, e: usize) -> [u32; 8] {
    let mut k = [u32::MAX; 8];
    let v = mesh.element(e);
    k[..v.len()].copy_from_slice(v);
    k[..v.len()].sort_unstable();
    k
}

/// Two elements with the same vertex set are duplicates. They share every face, so only
/// elements that share a face need comparing.
fn check_duplicates(mesh: &Mesh, topo: &Topology) -> Result<()> {
    for f in 0..topo.num_faces() {
        let (l, r) = (topo.left[f], topo.right[f]);
        if r == NO_ELEMENT || mesh.kinds[l as usize] != mesh.kinds[r as usize] {
            continue;
        }
        // Equal vertex sets have equal sums: most neighbours are told apart without a sort.
        let sum = |e: u32| {
            mesh.element(e as usize)
                .iter()
                .map(|&v| u64::from(v))
                .sum::<u64>()
        };
        if sum(l) == sum(r)
            && sorted_vertices(mesh, l as usize) == sorted_vertices(mesh, r as usize)
        {
            return Err(Error::invalid_mesh(format!(
                "{} and {} are duplicates (same vertices {})",
                mesh.element_label(l as usize),
                mesh.element_label(r as usize),
                mesh.vertex_list(mesh.element(l as usize))
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mesh::generate;
    use crate::mesh::generate3d::{hybrid_box, pyramid_box, Diagonals};

    /// Meshes of every element kind: Delaunay triangles, quadrilaterals, a hybrid 3D box with
    /// hexahedra, and pyramids.
    fn meshes() -> Vec<Mesh> {
        vec![
            generate::rectangle(0.0, 2.0, 0.0, 1.0, 3000, 5).expect("rectangle"),
            generate::quad_grid(0.0, 1.0, 0.0, 1.0, 13, 7).expect("quads"),
            hybrid_box(4, 3, 3, true, 2).expect("hybrid box"),
            pyramid_box(3, 2, 2).expect("pyramids"),
            crate::mesh::generate3d::tri_grid(9, 5, Diagonals::Random { seed: 4 })
                .expect("tri grid"),
        ]
    }

    #[test]
    fn elements_on_the_same_vertices_are_duplicates() {
        use crate::mesh::model::ElementKind;
        let mut mesh = Mesh::new(2);
        mesh.points = vec![[0.0; 3], [1.0, 0.0, 0.0], [1.0, 1.0, 0.0], [0.0, 1.0, 0.0]];
        mesh.push_element(ElementKind::Quad, &[0, 1, 2, 3], 1);
        mesh.push_element(ElementKind::Quad, &[1, 2, 3, 0], 1);
        let err = Topology::build(&mesh)
            .expect_err("duplicate quads")
            .to_string();
        assert!(err.contains("duplicates"), "{err}");
        // Two triangles sharing an edge are not.
        let mut mesh = Mesh::new(2);
        mesh.points = vec![[0.0; 3], [1.0, 0.0, 0.0], [1.0, 1.0, 0.0], [0.0, 1.0, 0.0]];
        mesh.push_element(ElementKind::Triangle, &[0, 1, 3], 1);
        mesh.push_element(ElementKind::Triangle, &[1, 2, 3], 1);
        assert!(Topology::build(&mesh).is_ok());
    }

    #[test]
    fn face_entries_sort_as_a_full_sort_does() {
        for mesh in meshes() {
            let entries = face_entries(&mesh);
            let mut want = entries.clone();
            want.sort_unstable();
            assert_eq!(sort_face_entries(entries), want);
        }
    }

    #[test]
    fn vertex_neighbour_rows_are_the_sorted_deduplicated_pairs() {
        for mesh in meshes() {
            let topo = Topology::build(&mesh).expect("topology");
            let mut pairs = Vec::new();
            for e in 0..mesh.num_elements() {
                let v = mesh.element(e);
                for (k, &a) in v.iter().enumerate() {
                    let b = v[(k + 1) % v.len()];
                    pairs.extend([(a, b), (b, a), (a, a)]);
                }
            }
            let mut want = pairs.clone();
            want.sort_unstable();
            want.dedup();
            let want = Csr::from_pairs(mesh.num_points(), &want);
            assert_eq!(sorted_unique_rows(mesh.num_points(), &pairs), want);
            let rows_sorted = (0..mesh.num_points())
                .all(|v| topo.vertex_neighbors.row(v).windows(2).all(|w| w[0] < w[1]));
            assert!(rows_sorted);
        }
    }
}
