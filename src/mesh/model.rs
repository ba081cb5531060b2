//! The mesh model: points, elements of any supported kind (mixed allowed), tagged boundary
//! facets and physical-group names. Connectivity is stored CSR-style so mixed meshes cost
//! nothing extra; derived topology lives in [`crate::mesh::topology`].

use std::collections::BTreeMap;

/// Relative degeneracy threshold: an element whose area (volume) is below this times its longest
/// edge squared (cubed) is rejected by validation; smaller overlaps are not reported.
pub const DEGENERACY_TOLERANCE: f64 = 1e-12;

/// Element kinds. 2D: triangle, quadrilateral. 3D: tetrahedron, hexahedron, prism, pyramid.
///
/// Local vertex numbering follows Gmsh (counter-clockwise for 2D elements).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
pub enum ElementKind {
    Triangle,
    Quad,
    Tetrahedron,
    Hexahedron,
    Prism,
    Pyramid,
}

impl ElementKind {
    /// Number of vertices of the (linear) element.
    pub const fn num_vertices(self) -> usize {
        match self {
            ElementKind::Triangle => 3,
            ElementKind::Quad => 4,
            ElementKind::Tetrahedron => 4,
            ElementKind::Hexahedron => 8,
            ElementKind::Prism => 6,
            ElementKind::Pyramid => 5,
        }
    }

    /// Topological dimension (2 or 3).
    pub const fn dim(self) -> usize {
        match self {
            ElementKind::Triangle | ElementKind::Quad => 2,
            _ => 3,
        }
    }

    /// Faces of the element as local vertex lists (edges for 2D elements), in Gmsh numbering.
    /// 2D edges are listed counter-clockwise so the outward normal of edge (a, b) is
    /// (b - a) rotated by -90 degrees.
    pub fn local_faces(self) -> &'static [&'static [usize]] {
        match self {
            ElementKind::Triangle => &[&[0, 1], &[1, 2], &[2, 0]],
            ElementKind::Quad => &[&[0, 1], &[1, 2], &[2, 3], &[3, 0]],
            ElementKind::Tetrahedron => &[&[0, 2, 1], &[0, 1, 3], &[0, 3, 2], &[1, 2, 3]],
            ElementKind::Hexahedron => &[
                &[0, 3, 2, 1],
                &[0, 1, 5, 4],
                &[0, 4, 7, 3],
                &[1, 2, 6, 5],
                &[2, 3, 7, 6],
                &[4, 5, 6, 7],
            ],
            ElementKind::Prism => &[
                &[0, 2, 1],
                &[3, 4, 5],
                &[0, 1, 4, 3],
                &[0, 3, 5, 2],
                &[1, 2, 5, 4],
            ],
            ElementKind::Pyramid => &[
                &[0, 3, 2, 1],
                &[0, 1, 4],
                &[1, 2, 4],
                &[2, 3, 4],
                &[3, 0, 4],
            ],
        }
    }

    /// Number of faces (edges in 2D): the minimal number of face colors for this kind.
    pub fn num_faces(self) -> usize {
        self.local_faces().len()
    }

    /// Gmsh element type number of the linear element.
    pub const fn gmsh_type(self) -> u32 {
        match self {
            ElementKind::Triangle => 2,
            ElementKind::Quad => 3,
            ElementKind::Tetrahedron => 4,
            ElementKind::Hexahedron => 5,
            ElementKind::Prism => 6,
            ElementKind::Pyramid => 7,
        }
    }

    /// VTK cell type number.
    pub const fn vtk_type(self) -> u8 {
        match self {
            ElementKind::Triangle => 5,
            ElementKind::Quad => 9,
            ElementKind::Tetrahedron => 10,
            ElementKind::Hexahedron => 12,
            ElementKind::Prism => 13,
            ElementKind::Pyramid => 14,
        }
    }

    /// The Medit keyword of the section that lists elements of this kind.
    pub fn medit_keyword(self) -> &'static str {
        match self {
            ElementKind::Triangle => "Triangles",
            ElementKind::Quad => "Quadrilaterals",
            ElementKind::Tetrahedron => "Tetrahedra",
            ElementKind::Hexahedron => "Hexahedra",
            ElementKind::Prism => "Prisms",
            ElementKind::Pyramid => "Pyramids",
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            ElementKind::Triangle => "triangle",
            ElementKind::Quad => "quadrilateral",
            ElementKind::Tetrahedron => "tetrahedron",
            ElementKind::Hexahedron => "hexahedron",
            ElementKind::Prism => "prism",
            ElementKind::Pyramid => "pyramid",
        }
    }
}

/// A boundary facet given explicitly by the mesh file (a line in 2D, a triangle or
/// quadrilateral in 3D), carrying the physical tag of its group.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BoundaryFacet {
    pub vertices: Vec<u32>,
    pub tag: i32,
}

/// An unstructured mesh of one spatial dimension (2 or 3), possibly with mixed element kinds.
#[derive(Clone, Debug, Default)]
pub struct Mesh {
    /// Spatial dimension of the elements: 2 or 3.
    pub dim: usize,
    /// Vertex coordinates (z = 0 for 2D meshes).
    pub points: Vec<[f64; 3]>,
    /// Kind of each element.
    pub kinds: Vec<ElementKind>,
    /// CSR offsets into `connectivity`, length `kinds.len() + 1`.
    pub offsets: Vec<u32>,
    /// Element vertex indices (0-based), element e is `connectivity[offsets[e]..offsets[e+1]]`.
    pub connectivity: Vec<u32>,
    /// Physical (region) tag of each element; 0 when the file gave none.
    pub region_tags: Vec<i32>,
    /// Boundary facets with physical tags, as given by the file.
    pub boundary_facets: Vec<BoundaryFacet>,
    /// Physical group names: (dimension, tag) -> name.
    pub physical_names: BTreeMap<(usize, i32), String>,
    /// The file's own element and node numbers, so messages name what the user can find in
    /// the file; empty for generated meshes.
    pub numbering: FileNumbering,
}

/// The numbering conventions of the mesh formats, for naming elements and nodes in messages.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum NumberingScheme {
    /// No file: 0-based positions in the mesh.
    #[default]
    Positions,
    /// Gmsh element and node tags (any positive integers, possibly sparse).
    Gmsh,
    /// Medit: vertices 1-based, elements 1-based within their keyword section (`Triangles`, ...).
    Medit,
    /// VTU: cells and points 0-based in file order, as the connectivity array and ParaView's
    /// Cell ID / Point ID give them (the format has no 1-based numbering).
    Vtu,
}

/// The number the file gave each element and node (see [`Mesh::element_label`]). Kept in step
/// with the mesh by validation (dropped vertices) and [`Mesh::permute_elements`]; a mesh whose
/// lists do not match its counts falls back to positions.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FileNumbering {
    pub scheme: NumberingScheme,
    /// File number of each element, in mesh order.
    pub elements: Vec<u64>,
    /// File number of each node (vertex), in mesh order.
    pub nodes: Vec<u64>,
}

impl Mesh {
    /// An empty mesh of the given dimension.
    pub fn new(dim: usize) -> Self {
        Mesh {
            dim,
            offsets: vec![0],
            ..Default::default()
        }
    }

    /// Element `e` as the file numbers it, e.g. `Gmsh element 17 (triangle)`, `Medit Triangles 5
    /// (triangle)`, `VTU cell 12 (triangle)`; `element 3 (triangle)` for generated meshes.
    pub fn element_label(&self, e: usize) -> String {
        let kind = self.kinds.get(e).map_or("?", |k| k.name());
        let n = &self.numbering;
        let file_number = (n.elements.len() == self.num_elements())
            .then(|| n.elements.get(e).copied())
            .flatten();
        match (n.scheme, file_number) {
            (NumberingScheme::Gmsh, Some(t)) => format!("Gmsh element {t} ({kind})"),
            (NumberingScheme::Medit, Some(t)) => {
                let section = self.kinds.get(e).map_or("?", |k| k.medit_keyword());
                format!("Medit {section} {t} ({kind})")
            }
            (NumberingScheme::Vtu, Some(t)) => format!("VTU cell {t} ({kind})"),
            _ => format!("element {e} ({kind})"),
        }
    }

    /// Vertices by their file numbers, e.g. `[Gmsh node 4, Gmsh node 9, Gmsh node 7]`.
    pub fn vertex_list(&self, vertices: &[u32]) -> String {
        let names: Vec<String> = vertices
            .iter()
            .map(|&v| self.vertex_label(v as usize))
            .collect();
        format!("[{}]", names.join(", "))
    }

    /// Vertex `v` as the file numbers it: `Gmsh node 33`, `Medit vertex 4`, `VTU point 3`, or
    /// `vertex 2` for generated meshes.
    pub fn vertex_label(&self, v: usize) -> String {
        let n = &self.numbering;
        let file_number = (n.nodes.len() == self.num_points())
            .then(|| n.nodes.get(v).copied())
            .flatten();
        match (n.scheme, file_number) {
            (NumberingScheme::Gmsh, Some(t)) => format!("Gmsh node {t}"),
            (NumberingScheme::Medit, Some(t)) => format!("Medit vertex {t}"),
            (NumberingScheme::Vtu, Some(t)) => format!("VTU point {t}"),
            _ => format!("vertex {v}"),
        }
    }

    /// Append an element; returns its index.
    pub fn push_element(&mut self, kind: ElementKind, vertices: &[u32], region_tag: i32) -> usize {
        debug_assert_eq!(vertices.len(), kind.num_vertices());
        self.kinds.push(kind);
        self.connectivity.extend_from_slice(vertices);
        self.offsets.push(self.connectivity.len() as u32);
        self.region_tags.push(region_tag);
        self.kinds.len() - 1
    }

    pub fn num_elements(&self) -> usize {
        self.kinds.len()
    }

    pub fn num_points(&self) -> usize {
        self.points.len()
    }

    /// Vertices of element `e`.
    pub fn element(&self, e: usize) -> &[u32] {
        &self.connectivity[self.offsets[e] as usize..self.offsets[e + 1] as usize]
    }

    /// True when every element is a triangle (the solvers' mesh).
    pub fn is_triangle_mesh(&self) -> bool {
        self.dim == 2 && self.kinds.iter().all(|&k| k == ElementKind::Triangle)
    }

    /// A 2D mesh is planar when every vertex has the same z, up to 1e-12 of the bounding box
    /// size.
    pub fn is_planar(&self) -> bool {
        let (lo, hi) = self.bounding_box();
        let size = (0..3).map(|d| hi[d] - lo[d]).fold(0.0, f64::max);
        hi[2] - lo[2] <= 1e-12 * size
    }

    /// The triangles of a planar 2D triangle mesh, else an error naming `solver`: a surface
    /// in 3D (z varies) would run as if flattened, with garbage results.
    pub fn planar_triangles(&self, solver: &str) -> crate::error::Result<Vec<[u32; 3]>> {
        let bad = |what: String| {
            Err(crate::error::Error::invalid_mesh(format!(
                "{solver} needs {what}"
            )))
        };
        match self.triangles() {
            None => bad(format!(
                "a 2D mesh of triangles only (this one is {}D or has other element kinds)",
                self.dim
            )),
            Some(t) if t.is_empty() => bad("at least one triangle".into()),
            Some(_) if !self.is_planar() => {
                let (lo, hi) = self.bounding_box();
                bad(format!(
                    "a planar mesh; this one is a surface in 3D (z from {} to {})",
                    lo[2], hi[2]
                ))
            }
            Some(t) => Ok(t),
        }
    }

    /// Triangles as fixed arrays; `None` unless [`Mesh::is_triangle_mesh`].
    pub fn triangles(&self) -> Option<Vec<[u32; 3]>> {
        if !self.is_triangle_mesh() {
            return None;
        }
        Some(
            self.connectivity
                .chunks_exact(3)
                .map(|c| [c[0], c[1], c[2]])
                .collect(),
        )
    }

    /// 2D coordinates of all points.
    pub fn points_2d(&self) -> Vec<[f64; 2]> {
        self.points.iter().map(|p| [p[0], p[1]]).collect()
    }

    /// Sorted list of the distinct element kinds present.
    pub fn element_kinds(&self) -> Vec<ElementKind> {
        let mut k = self.kinds.clone();
        k.sort();
        k.dedup();
        k
    }

    /// The largest number of faces over the element kinds present: the minimal face-color count.
    pub fn max_faces_per_element(&self) -> usize {
        self.element_kinds()
            .iter()
            .map(|k| k.num_faces())
            .max()
            .unwrap_or(0)
    }

    /// Name of a boundary tag, or the tag number as text.
    pub fn boundary_name(&self, tag: i32) -> String {
        self.physical_names
            .get(&(self.dim - 1, tag))
            .cloned()
            .unwrap_or_else(|| tag.to_string())
    }

    /// Find the tag of a named boundary group.
    pub fn boundary_tag_by_name(&self, name: &str) -> Option<i32> {
        self.physical_names
            .iter()
            .find(|((d, _), n)| *d + 1 == self.dim && n.as_str() == name)
            .map(|((_, t), _)| *t)
    }

    /// Axis-aligned bounding box (min, max).
    pub fn bounding_box(&self) -> ([f64; 3], [f64; 3]) {
        let mut lo = [f64::INFINITY; 3];
        let mut hi = [f64::NEG_INFINITY; 3];
        for p in &self.points {
            for d in 0..3 {
                lo[d] = lo[d].min(p[d]);
                hi[d] = hi[d].max(p[d]);
            }
        }
        (lo, hi)
    }

    /// Renumber elements: new element `i` is old element `perm[i]`. Boundary facets and
    /// points are untouched.
    pub fn permute_elements(&mut self, perm: &[u32]) {
        assert_eq!(perm.len(), self.num_elements());
        let mut m = Mesh::new(self.dim);
        m.points = std::mem::take(&mut self.points);
        m.boundary_facets = std::mem::take(&mut self.boundary_facets);
        m.physical_names = std::mem::take(&mut self.physical_names);
        m.numbering = self.numbering.permuted(perm);
        for &old in perm {
            let old = old as usize;
            m.push_element(self.kinds[old], self.element(old), self.region_tags[old]);
        }
        *self = m;
    }
}

impl FileNumbering {
    /// The numbering after elements were renumbered `new -> perm[new]` (nodes unchanged).
    pub fn permuted(&self, perm: &[u32]) -> FileNumbering {
        FileNumbering {
            scheme: self.scheme,
            elements: if self.elements.len() == perm.len() {
                perm.iter()
                    .map(|&old| self.elements[old as usize])
                    .collect()
            } else {
                Vec::new()
            },
            nodes: self.nodes.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A folded (non-planar) triangle surface once ran in the 2D solvers as if flattened.
    #[test]
    fn planar_triangles_refuses_a_surface_in_3d() {
        let mut m = Mesh::new(2);
        m.points = vec![
            [0.0, 0.0, 0.0],
            [1.0, 0.0, 0.0],
            [0.0, 1.0, 0.0],
            [1.0, 1.0, 1.0],
        ];
        m.push_element(ElementKind::Triangle, &[0, 1, 2], 1);
        m.push_element(ElementKind::Triangle, &[1, 3, 2], 1);
        let msg = m.planar_triangles("x").err().map(|e| e.to_string());
        assert!(msg.is_some_and(|m| m.contains("surface in 3D")));
        m.points[3][2] = 0.0;
        assert_eq!(m.planar_triangles("x").map(|t| t.len()).ok(), Some(2));
    }
}
