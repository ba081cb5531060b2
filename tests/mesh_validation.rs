//! Every reader and validation error, each from a small malformed file in tests/data/ (or a mesh
//! built in code where no file can express the fault): the message must name the file and the
//! line, element or vertex at fault.

use std::path::{Path, PathBuf};

use chromaflow::error::Error;
use chromaflow::mesh::geometry::polygon_area_centroid;
use chromaflow::mesh::{load, validate, BoundaryFacet, ElementKind, Mesh};

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join("data")
        .join(name)
}

/// Load a file that must fail; return the message after checking that it names the file.
fn load_err(name: &str) -> String {
    let path = data(name);
    let msg = match load(&path) {
        Ok(m) => panic!(
            "{name} loaded ({} elements) but should fail",
            m.num_elements()
        ),
        Err(e) => e.to_string(),
    };
    assert!(msg.contains(name), "message does not name the file: {msg}");
    msg
}

fn assert_has(msg: &str, parts: &[&str]) {
    for p in parts {
        assert!(msg.contains(p), "message lacks '{p}': {msg}");
    }
}

#[test]
fn missing_file() {
    let msg = load_err("does_not_exist.msh");
    let err = load(&data("does_not_exist.msh")).unwrap_err();
    assert!(matches!(err, Error::Io { .. }), "{err:?}");
    assert!(!msg.is_empty());
}

#[test]
fn truncated_file() {
    let msg = load_err("truncated.msh");
    assert_has(
        &msg,
        &["unexpected end of file in $Nodes", "expected 2 more nodes"],
    );
}

#[test]
fn unsupported_version() {
    let msg = load_err("version3.msh");
    assert_has(
        &msg,
        &[
            "version3.msh:2:",
            "version 3.0 is not supported; use 2.2, 4.0 or 4.1",
        ],
    );
}

#[test]
fn not_a_msh_file() {
    let msg = load_err("not_msh.msh");
    assert_has(&msg, &["not_msh.msh:1:", "not a Gmsh .msh file", "solid"]);
}

#[test]
fn bad_number() {
    let msg = load_err("bad_number.msh");
    assert_has(&msg, &["bad_number.msh:7:", "bad number '1.0x'", "$Nodes"]);
}

#[test]
fn undefined_node() {
    let msg = load_err("undefined_node.msh");
    assert_has(
        &msg,
        &["element 17 (line 14) references node 99 which is not defined"],
    );
}

#[test]
fn higher_order_element_reads_its_corners() {
    // A second-order triangle: its three corners are kept, the mid-edge nodes dropped.
    let m = load(&data("second_order.msh")).unwrap();
    assert_eq!(m.kinds, vec![ElementKind::Triangle]);
    assert_eq!(m.num_points(), 3);
    assert_eq!(m.points[2], [0.0, 1.0, 0.0]);
}

#[test]
fn unsupported_format() {
    let msg = load_err("inputs/make_inputs.py");
    assert_has(
        &msg,
        &["unsupported mesh format '.py': the content is none of .msh, .mesh, .meshb, .vtu"],
    );
}

#[test]
fn nan_coordinates() {
    let msg = load_err("nan_coords.msh");
    assert_has(&msg, &["Gmsh node 3 has non-finite coordinate (NaN, 1, 0)"]);
}

#[test]
fn degenerate_element() {
    let msg = load_err("degenerate.msh");
    assert_has(&msg, &["Gmsh element 3 (triangle) is degenerate: area 0"]);
}

#[test]
fn non_manifold_face() {
    let msg = load_err("nonmanifold.msh");
    assert_has(
        &msg,
        &[
            "non-manifold face with vertices [Gmsh node 1, Gmsh node 2]",
            "shared by 3 elements",
            "(Gmsh element 1 (triangle), Gmsh element 2 (triangle), Gmsh element 3 (triangle))",
        ],
    );
}

#[test]
fn duplicate_element() {
    let msg = load_err("duplicate.msh");
    assert_has(
        &msg,
        &["Gmsh element 1 (triangle) and Gmsh element 2 (triangle) are duplicates"],
    );
}

#[test]
fn clockwise_triangle_is_reoriented() {
    let mut mesh = chromaflow::mesh::read_msh(&data("clockwise.msh")).unwrap();
    let report = validate(&mut mesh).unwrap();
    assert_eq!(report.reoriented, 1);
    assert_eq!(report.first_reoriented, Some(1));
    assert_eq!(report.untagged_boundary_faces, 0);
    let mesh = load(&data("clockwise.msh")).unwrap();
    for e in 0..mesh.num_elements() {
        let pts: Vec<[f64; 2]> = mesh
            .element(e)
            .iter()
            .map(|&v| {
                let p = mesh.points[v as usize];
                [p[0], p[1]]
            })
            .collect();
        let (area, _) = polygon_area_centroid(&pts);
        assert!((area - 0.5).abs() < 1e-15, "element {e} area {area}");
    }
    assert_eq!(mesh.region_tags, vec![7, 7]);
    assert_eq!(mesh.boundary_tag_by_name("wall"), Some(5));
}

#[test]
fn unused_vertex_is_dropped() {
    let mut mesh = chromaflow::mesh::read_msh(&data("unused_vertex.msh")).unwrap();
    assert_eq!(mesh.num_points(), 5);
    let report = validate(&mut mesh).unwrap();
    assert_eq!(report.dropped_vertices, 1);
    assert_eq!(mesh.num_points(), 4);
    assert!(mesh.points.iter().all(|p| p[0] <= 1.0));
    // Connectivity renumbered: node tags 1, 2, 4, 5 are now vertices 0, 1, 2, 3.
    assert_eq!(mesh.element(0), &[0, 1, 2]);
    assert_eq!(mesh.element(1), &[0, 2, 3]);
}

/// The unit square as two counter-clockwise triangles with its four sides tagged.
fn two_triangles() -> Mesh {
    let mut m = Mesh::new(2);
    m.points = vec![
        [0.0, 0.0, 0.0],
        [1.0, 0.0, 0.0],
        [1.0, 1.0, 0.0],
        [0.0, 1.0, 0.0],
    ];
    m.push_element(ElementKind::Triangle, &[0, 1, 2], 1);
    m.push_element(ElementKind::Triangle, &[0, 2, 3], 1);
    for (a, b) in [(0, 1), (1, 2), (2, 3), (3, 0)] {
        m.boundary_facets.push(BoundaryFacet {
            vertices: vec![a, b],
            tag: 1,
        });
    }
    m
}

#[test]
fn index_out_of_range() {
    let mut m = two_triangles();
    m.connectivity[4] = 500;
    let msg = validate(&mut m).unwrap_err().to_string();
    assert_has(
        &msg,
        &["element 1 (triangle) references vertex index 500 but the mesh has 4 vertices"],
    );
}

#[test]
fn facet_index_out_of_range() {
    let mut m = two_triangles();
    m.boundary_facets[2].vertices[1] = 9;
    let msg = validate(&mut m).unwrap_err().to_string();
    assert_has(&msg, &["boundary facet 2", "references vertex 9"]);
}

#[test]
fn no_elements_and_bad_dimension() {
    let mut m = Mesh::new(2);
    m.points = vec![[0.0; 3]];
    let msg = validate(&mut m).unwrap_err().to_string();
    assert_has(&msg, &["no elements"]);
    let mut m = two_triangles();
    m.dim = 1;
    let msg = validate(&mut m).unwrap_err().to_string();
    assert_has(&msg, &["dimension 1 is not supported"]);
}

#[test]
fn near_degenerate_is_relative_to_size() {
    // A sliver with area ~1e-13 h^2 is rejected; the same shape scaled by 1e-6 is too, and a
    // fine but valid triangle of size 1e-6 is accepted.
    let mut m = Mesh::new(2);
    m.points = vec![[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.5, 2e-13, 0.0]];
    m.push_element(ElementKind::Triangle, &[0, 1, 2], 0);
    let msg = validate(&mut m.clone()).unwrap_err().to_string();
    assert_has(&msg, &["element 0 (triangle) is degenerate"]);
    for p in &mut m.points {
        p[0] *= 1e-6;
        p[1] *= 1e-6;
    }
    assert!(validate(&mut m.clone()).is_err());
    m.points[2][1] = 1e-6;
    let report = validate(&mut m).unwrap();
    assert!((report.total_measure - 0.5e-12).abs() < 1e-24);
}

#[test]
fn non_convex_quad_rejected() {
    let mut m = Mesh::new(2);
    m.points = vec![
        [0.0, 0.0, 0.0],
        [2.0, 0.0, 0.0],
        [0.5, 0.5, 0.0],
        [0.0, 2.0, 0.0],
    ];
    m.push_element(ElementKind::Quad, &[0, 1, 2, 3], 0);
    let msg = validate(&mut m).unwrap_err().to_string();
    assert_has(&msg, &["element 0 (quadrilateral) is not convex"]);
}

#[test]
fn surface_in_3d_skips_orientation() {
    // An octahedron surface: 8 triangles on a closed surface, with mixed orientation.
    let mut m = Mesh::new(2);
    m.points = vec![
        [1.0, 0.0, 0.0],
        [-1.0, 0.0, 0.0],
        [0.0, 1.0, 0.0],
        [0.0, -1.0, 0.0],
        [0.0, 0.0, 1.0],
        [0.0, 0.0, -1.0],
    ];
    for (a, b, c) in [
        (0, 2, 4),
        (2, 1, 4),
        (1, 3, 4),
        (3, 0, 4),
        (2, 0, 5),
        (1, 2, 5),
        (3, 1, 5),
        (0, 3, 5),
    ] {
        m.push_element(ElementKind::Triangle, &[a, b, c], 0);
    }
    let before = m.connectivity.clone();
    let report = validate(&mut m).unwrap();
    assert!(report.embedded_surface);
    assert_eq!(report.reoriented, 0);
    assert_eq!(m.connectivity, before);
    assert_eq!(report.num_boundary_faces, 0);
    // Each face is an equilateral triangle of side sqrt(2): area sqrt(3)/2.
    assert!((report.total_measure - 8.0 * 3f64.sqrt() / 2.0).abs() < 1e-12);
    // A flat (degenerate) triangle on the surface is still caught.
    m.points[4] = [0.5, 0.5, 0.0];
    assert!(validate(&mut m).is_err());
}

#[test]
fn inverted_tetrahedron_is_reoriented() {
    let mut m = Mesh::new(3);
    m.points = vec![
        [0.0, 0.0, 0.0],
        [1.0, 0.0, 0.0],
        [0.0, 1.0, 0.0],
        [0.0, 0.0, 1.0],
        [1.0, 1.0, 1.0],
    ];
    m.push_element(ElementKind::Tetrahedron, &[0, 2, 1, 3], 0);
    m.push_element(ElementKind::Tetrahedron, &[1, 2, 3, 4], 0);
    let report = validate(&mut m).unwrap();
    assert_eq!(report.reoriented, 1);
    assert_eq!(report.first_reoriented, Some(0));
    assert_eq!(m.element(0), &[0, 1, 2, 3]);
    assert!((report.total_measure - (1.0 / 6.0 + 1.0 / 3.0)).abs() < 1e-15);
}

#[test]
fn inverted_hexahedron_is_reoriented() {
    let mut m = Mesh::new(3);
    for z in [0.0, 1.0] {
        for (x, y) in [(0.0, 0.0), (1.0, 0.0), (1.0, 1.0), (0.0, 1.0)] {
            m.points.push([x, y, z]);
        }
    }
    // Top and bottom swapped: negative volume.
    m.push_element(ElementKind::Hexahedron, &[4, 5, 6, 7, 0, 1, 2, 3], 0);
    let report = validate(&mut m).unwrap();
    assert_eq!(report.reoriented, 1);
    assert!((report.total_measure - 1.0).abs() < 1e-14);
    let again = validate(&mut m).unwrap();
    assert_eq!(again.reoriented, 0);
}

/// A vertex moved across an edge folds its triangles over their neighbours: once reoriented
/// and accepted (exit 0 with garbage), now an overlap error naming the elements.
#[test]
fn folded_mesh_is_an_overlap_error() {
    let fan = |cx: f64| {
        let mut m = Mesh::new(2);
        m.points = vec![
            [0.0, 0.0, 0.0],
            [2.0, 0.0, 0.0],
            [2.0, 2.0, 0.0],
            [0.0, 2.0, 0.0],
            [cx, 1.0, 0.0],
        ];
        for t in [[0, 1, 4], [1, 2, 4], [2, 3, 4], [3, 0, 4]] {
            m.push_element(ElementKind::Triangle, &t, 1);
        }
        m
    };
    assert!(validate(&mut fan(1.0)).is_ok());
    let msg = validate(&mut fan(3.0)).map(|_| ()).unwrap_err().to_string();
    assert_has(&msg, &["overlap", "tangled"]);
}

/// Write `text` to a file named `name` in a fresh temporary folder; keep the folder alive.
fn temp_file(name: &str, text: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name);
    std::fs::write(&path, text).unwrap();
    (dir, path)
}

fn load_text_err(name: &str, text: &str) -> String {
    let (_dir, path) = temp_file(name, text);
    let msg = load(&path).map(|_| ()).unwrap_err().to_string();
    assert!(msg.contains(name), "message does not name the file: {msg}");
    msg
}

/// Gmsh tags are sparse and unordered: element 205 lies inside element 101 (no shared vertex),
/// and node 15, first in the file, is used by nothing.
const GMSH_SPARSE_OVERLAP: &str = "$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$Nodes\n7\n\
15 5 5 0\n10 0 0 0\n20 1 0 0\n30 0 1 0\n40 0.2 0.2 0\n50 0.6 0.2 0\n60 0.2 0.6 0\n$EndNodes\n\
$Elements\n2\n101 2 2 1 1 10 20 30\n205 2 2 1 1 40 50 60\n$EndElements\n";

#[test]
fn messages_name_gmsh_tags() {
    let msg = load_text_err("sparse.msh", GMSH_SPARSE_OVERLAP);
    assert_has(
        &msg,
        &[
            "Gmsh element 101 (triangle) and Gmsh element 205 (triangle) overlap",
            "both cover the point (0.33333333333333",
        ],
    );
    // Node numbers follow the drop of node 15, and survive an element renumbering.
    let apart = GMSH_SPARSE_OVERLAP
        .replace("40 0.2 0.2", "40 2.2 0.2")
        .replace("50 0.6 0.2 0\n60 0.2 0.6", "50 2.6 0.2 0\n60 2.2 0.6");
    let (_dir, path) = temp_file("apart.msh", &apart);
    let mut mesh = load(&path).unwrap();
    assert_eq!(mesh.numbering.nodes, [10, 20, 30, 40, 50, 60]);
    assert_eq!(mesh.vertex_label(3), "Gmsh node 40");
    mesh.permute_elements(&[1, 0]);
    assert_eq!(mesh.element_label(0), "Gmsh element 205 (triangle)");
    // A bad coordinate names its node tag, a degenerate element its element tag.
    let nan = GMSH_SPARSE_OVERLAP.replace("50 0.6 0.2", "50 nan 0.2");
    assert_has(
        &load_text_err("nan.msh", &nan),
        &["Gmsh node 50 has non-finite coordinate (NaN, 0.2, 0)"],
    );
    let flat = GMSH_SPARSE_OVERLAP.replace("60 0.2 0.6", "60 1.0 0.2");
    assert_has(
        &load_text_err("flat.msh", &flat),
        &["Gmsh element 205 (triangle) is degenerate"],
    );
}

#[test]
fn messages_name_medit_numbers_per_section() {
    // Quadrilateral 2 (the file's third element) has three collinear corners.
    let text = "MeshVersionFormatted 2\nDimension 2\nVertices\n6\n0 0 1\n1 0 1\n1 1 1\n0 1 1\n\
                2 0 1\n3 0 1\nTriangles\n1\n1 2 4 0\nQuadrilaterals\n2\n2 5 3 4 0\n2 5 6 3 0\nEnd\n";
    let msg = load_text_err("quads.mesh", text);
    assert_has(
        &msg,
        &["Medit Quadrilaterals 2 (quadrilateral) is not convex"],
    );
    let text = text.replace("Vertices\n6\n0 0 1", "Vertices\n6\n1e999 0 1");
    assert_has(
        &load_text_err("inf.mesh", &text),
        &["Medit vertex 1 has non-finite coordinate (inf, 0, 0)"],
    );
}

#[test]
fn messages_name_vtu_cells_as_the_file_numbers_them() {
    // Cell 0 is a boundary line; cells 1 and 2 are the same triangle.
    let text = r#"<?xml version="1.0"?>
<VTKFile type="UnstructuredGrid" version="0.1" byte_order="LittleEndian">
<UnstructuredGrid>
<Piece NumberOfPoints="4" NumberOfCells="4">
<Points>
<DataArray type="Float64" NumberOfComponents="3" format="ascii">0 0 0 1 0 0 1 1 0 0 1 0</DataArray>
</Points>
<Cells>
<DataArray type="Int64" Name="connectivity" format="ascii">0 1 0 1 2 0 2 3 2 1 0</DataArray>
<DataArray type="Int64" Name="offsets" format="ascii">2 5 8 11</DataArray>
<DataArray type="UInt8" Name="types" format="ascii">3 5 5 5</DataArray>
</Cells>
</Piece>
</UnstructuredGrid>
</VTKFile>
"#;
    let msg = load_text_err("dup.vtu", text);
    assert_has(
        &msg,
        &["VTU cell 1 (triangle) and VTU cell 3 (triangle) are duplicates (same vertices [VTU point 0, VTU point 1, VTU point 2])"],
    );
}

/// `mesh` twice over: the copy's vertices are new, moved by (dx, dy).
fn stacked(mesh: &Mesh, dx: f64, dy: f64) -> Mesh {
    let mut m = mesh.clone();
    let np = mesh.num_points() as u32;
    m.points
        .extend(mesh.points.iter().map(|p| [p[0] + dx, p[1] + dy, p[2]]));
    for e in 0..mesh.num_elements() {
        let shifted: Vec<u32> = mesh.element(e).iter().map(|&v| v + np).collect();
        m.push_element(mesh.kinds[e], &shifted, mesh.region_tags[e]);
    }
    m
}

#[test]
fn stacked_triangulations_are_an_overlap_error() {
    let base = chromaflow::mesh::builtin("rect:300").unwrap();
    let (lo, hi) = base.bounding_box();
    let width = hi[0] - lo[0];
    for (dx, dy) in [(0.0, 0.0), (0.013, 0.007), (0.5 * width, 0.0)] {
        let msg = validate(&mut stacked(&base, dx, dy))
            .map(|_| ())
            .unwrap_err()
            .to_string();
        assert_has(&msg, &["overlap: both cover the point ("]);
    }
    // Side by side (touching along a crack of doubled vertices) is no overlap.
    validate(&mut stacked(&base, width, 0.0)).unwrap();
    let quads = chromaflow::mesh::builtin("quad:8x6").unwrap();
    assert!(validate(&mut stacked(&quads, 0.01, 0.0)).is_err());
}

/// A hanging vertex on a neighbour's edge touches it; rounded 1e-15 into the neighbour it still
/// does (below the degeneracy bound); 1e-3 into it is an overlap.
#[test]
fn hanging_vertex_touches_unless_it_cuts_in() {
    let mesh = |inward: f64| {
        let mut m = Mesh::new(2);
        let third = 1.0 / 3.0;
        m.points = vec![
            [0.0, 0.0, 0.0],
            [1.0, 0.0, 0.0],
            [0.0, 1.0, 0.0],
            [1.0, 1.0, 0.0],
            [third, 1.0 - third - inward, 0.0],
        ];
        for t in [[0, 1, 2], [1, 3, 4], [4, 3, 2]] {
            m.push_element(ElementKind::Triangle, &t, 1);
        }
        m
    };
    validate(&mut mesh(0.0)).unwrap();
    validate(&mut mesh(1e-15)).unwrap();
    let msg = validate(&mut mesh(1e-3))
        .map(|_| ())
        .unwrap_err()
        .to_string();
    assert_has(
        &msg,
        &["element 0 (triangle) and element 1 (triangle) overlap"],
    );
}
