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
    assert_has(&msg, &["vertex 2 has non-finite coordinate (NaN, 1, 0)"]);
}

#[test]
fn degenerate_element() {
    let msg = load_err("degenerate.msh");
    assert_has(&msg, &["element 2 (triangle) is degenerate: area 0"]);
}

#[test]
fn non_manifold_face() {
    let msg = load_err("nonmanifold.msh");
    assert_has(&msg, &["non-manifold", "shared by 3 elements", "(0, 1, 2)"]);
}

#[test]
fn duplicate_element() {
    let msg = load_err("duplicate.msh");
    assert_has(&msg, &["elements 0 and 1 are duplicates"]);
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
        &["element 1 references vertex 500 but the mesh has 4 vertices"],
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
