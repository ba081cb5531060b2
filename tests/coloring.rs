//! Face coloring (GK), nonconforming mapping and vertex coloring on generated meshes.

use chromaflow::color::{
    check_face_coloring, check_nonconforming_coloring, check_vertex_coloring, coarsen_colors,
    color_faces, color_vertices, greedy_face_coloring, map_child_color, refine, refine_colors,
    FaceColoring, FaceColoringOptions, NcFaceKind, VertexOrder,
};
use chromaflow::mesh::generate3d::{
    genus2_surface, hex_box, hybrid_box, periodic_tri_grid, prism_box, pyramid_box, sphere,
    tet_box, torus, tri_grid, tri_quad_grid, Diagonals, TetSplit,
};
use chromaflow::mesh::{ElementKind, Mesh, Topology, NO_ELEMENT};
use std::time::Instant;

fn color(mesh: &Mesh, seed: u64) -> (Topology, FaceColoring) {
    let topo = Topology::build(mesh).expect("topology");
    let col = color_faces(mesh, &topo, &FaceColoringOptions::with_seed(seed)).expect("coloring");
    check_face_coloring(&topo, &col.colors).expect("valid coloring");
    assert_eq!(col.counts.iter().sum::<usize>(), topo.num_faces());
    (topo, col)
}

/// Colors with the minimum for the element kind, and each class is a near-perfect share.
fn assert_minimal(mesh: &Mesh, expected: usize) {
    assert_eq!(mesh.max_faces_per_element(), expected);
    let topo = Topology::build(mesh).expect("topology");
    for (seed, propagate) in [(1, true), (2, true), (3, false), (4, false)] {
        let opts = FaceColoringOptions {
            propagate,
            ..FaceColoringOptions::with_seed(seed)
        };
        let col = color_faces(mesh, &topo, &opts).expect("coloring");
        check_face_coloring(&topo, &col.colors).expect("valid coloring");
        assert_eq!(
            col.num_colors,
            expected,
            "{:?}: fell back (stats {:?})",
            mesh.element_kinds(),
            col.stats
        );
        assert!(!col.fallback);
    }
}

#[test]
fn triangles_get_three_colors() {
    let m = tri_grid(40, 30, Diagonals::Random { seed: 3 }).unwrap();
    assert_minimal(&m, 3);
    // GK's plain greedy order leaves conflicts here: the resolution moves are exercised.
    let topo = Topology::build(&m).unwrap();
    let plain = FaceColoringOptions {
        propagate: false,
        ..FaceColoringOptions::with_seed(1)
    };
    let col = color_faces(&m, &topo, &plain).unwrap();
    assert!(col.stats.greedy_conflicts > 0 && col.stats.swaps > 0 && col.stats.resolves > 0);
    assert_minimal(&tri_grid(25, 25, Diagonals::Uniform).unwrap(), 3);
}

#[test]
fn quads_get_four_colors() {
    assert_minimal(&chromaflow::mesh::generate3d::quad_grid(30, 20).unwrap(), 4);
}

#[test]
fn tetrahedra_get_four_colors() {
    assert_minimal(&tet_box(6, 5, 4, TetSplit::Five).unwrap(), 4);
    assert_minimal(&tet_box(5, 5, 5, TetSplit::Six).unwrap(), 4);
}

#[test]
fn hexahedra_get_six_colors() {
    assert_minimal(&hex_box(8, 6, 5).unwrap(), 6);
}

#[test]
fn prisms_get_five_colors() {
    assert_minimal(
        &prism_box(8, 7, 4, Diagonals::Random { seed: 5 }).unwrap(),
        5,
    );
}

#[test]
fn pyramids_get_five_colors() {
    assert_minimal(&pyramid_box(4, 4, 3).unwrap(), 5);
}

#[test]
fn hybrid_meshes_get_max_faces_colors() {
    let with_hex = hybrid_box(6, 5, 4, true, 11).unwrap();
    assert_eq!(with_hex.element_kinds().len(), 4);
    assert_minimal(&with_hex, 6);
    let no_hex = hybrid_box(6, 5, 4, false, 12).unwrap();
    assert_eq!(
        no_hex.element_kinds(),
        vec![
            ElementKind::Tetrahedron,
            ElementKind::Prism,
            ElementKind::Pyramid
        ]
    );
    assert_minimal(&no_hex, 5);
    assert_minimal(&tri_quad_grid(20, 20, 0.5, 4).unwrap(), 4);
}

#[test]
fn closed_sphere_finishes_with_three_colors() {
    let s = sphere(12, 0.3, 7).unwrap();
    let (topo, col) = color(&s, 1);
    assert_eq!(topo.num_boundary_faces(), 0);
    let plain = FaceColoringOptions {
        propagate: false,
        ..FaceColoringOptions::with_seed(9)
    };
    let p = color_faces(&s, &topo, &plain).unwrap();
    check_face_coloring(&topo, &p.colors).unwrap();
    assert_eq!(p.num_colors, 3);
    assert!(p.stats.swaps > 0 && p.stats.resolves > 0);
    // Planar-equivalent triangulation: a 3-edge-coloring exists (four color theorem).
    assert_eq!(col.num_colors, 3);
    // Closed cubic graph: every color class is a perfect matching.
    assert!(col.counts.iter().all(|&c| c == s.num_elements() / 2));
}

#[test]
fn torus_and_genus2_finish() {
    for mesh in [
        torus(12, 9, Diagonals::Random { seed: 2 }).unwrap(),
        torus(10, 6, Diagonals::Uniform).unwrap(),
        genus2_surface(2, 3).unwrap(),
    ] {
        let (topo, col) = color(&mesh, 5);
        assert_eq!(topo.num_boundary_faces(), 0);
        assert!(col.num_colors == 3 || (col.num_colors == 4 && col.fallback));
    }
}

#[test]
fn periodic_grid_is_colored() {
    let m = periodic_tri_grid(16, 12, Diagonals::Random { seed: 8 }).unwrap();
    let (topo, col) = color(&m, 3);
    assert_eq!(topo.num_boundary_faces(), 0);
    assert!(col.num_colors <= 4);
}

/// Exact 3-edge-colorability of a small cubic graph by backtracking.
fn three_edge_colorable(topo: &Topology) -> bool {
    fn go(f: usize, topo: &Topology, colors: &mut Vec<u8>) -> bool {
        if f == colors.len() {
            return true;
        }
        for c in 0..3u8 {
            let clash = |e: u32| {
                e != NO_ELEMENT
                    && topo
                        .element_faces
                        .row(e as usize)
                        .iter()
                        .any(|&g| (g as usize) < f && colors[g as usize] == c)
            };
            if !clash(topo.left[f]) && !clash(topo.right[f]) {
                colors[f] = c;
                if go(f + 1, topo, colors) {
                    return true;
                }
            }
        }
        false
    }
    let mut colors = vec![0u8; topo.num_faces()];
    go(0, topo, &mut colors)
}

#[test]
fn small_tori_are_three_colored_when_possible() {
    // Smallest simplicial torus triangulations (9 vertices, 18 triangles) reached by random
    // flips: whenever an exact search finds a 3-edge-coloring, GK must find one too (no
    // fallback); otherwise it must fall back to exactly 4 colors.
    let mut m = periodic_tri_grid(3, 3, Diagonals::Uniform).unwrap();
    for step in 0..60u64 {
        let before = m.clone();
        let _ = chromaflow::mesh::generate3d::flip_random_edges(&mut m, 0.1, step, false);
        let Ok(topo) = Topology::build(&m) else {
            m = before;
            continue;
        };
        let col = color_faces(&m, &topo, &FaceColoringOptions::with_seed(step)).unwrap();
        check_face_coloring(&topo, &col.colors).unwrap();
        if three_edge_colorable(&topo) {
            assert_eq!(col.num_colors, 3, "step {step}");
        } else {
            assert_eq!((col.num_colors, col.fallback), (4, true), "step {step}");
        }
    }
}

#[test]
fn strict_mode_reports_budget_exhaustion() {
    let m = tri_grid(30, 30, Diagonals::Random { seed: 1 }).unwrap();
    let topo = Topology::build(&m).unwrap();
    let opts = FaceColoringOptions {
        effort: 0.0,
        min_moves: 0,
        allow_fallback: false,
        propagate: false,
        ..Default::default()
    };
    let err = color_faces(&m, &topo, &opts).unwrap_err().to_string();
    assert!(err.contains("no 3-coloring"), "{err}");
}

#[test]
fn budget_zero_forces_a_bounded_fallback() {
    // With no move budget, resolution cannot run: colors are added until every conflict has a
    // free color, and the result is still valid.
    let m = tri_grid(30, 30, Diagonals::Random { seed: 1 }).unwrap();
    let topo = Topology::build(&m).unwrap();
    let opts = FaceColoringOptions {
        effort: 0.0,
        min_moves: 0,
        propagate: false,
        ..Default::default()
    };
    let col = color_faces(&m, &topo, &opts).unwrap();
    check_face_coloring(&topo, &col.colors).unwrap();
    assert!(col.fallback && col.num_colors > 3 && col.num_colors <= 5);
}

#[test]
fn same_seed_same_colors_other_seed_differs() {
    let m = tri_grid(30, 20, Diagonals::Random { seed: 4 }).unwrap();
    let (_, a) = color(&m, 42);
    let (_, b) = color(&m, 42);
    let (_, c) = color(&m, 43);
    assert_eq!(a.colors, b.colors);
    assert_ne!(a.colors, c.colors);
}

#[test]
fn greedy_baseline_uses_more_colors() {
    let m = tri_grid(60, 60, Diagonals::Random { seed: 9 }).unwrap();
    let topo = Topology::build(&m).unwrap();
    let g = greedy_face_coloring(&m, &topo).unwrap();
    check_face_coloring(&topo, &g.colors).unwrap();
    assert!(g.num_colors > 3 && g.num_colors <= 5, "{}", g.num_colors);
    let t = tet_box(5, 5, 5, TetSplit::Six).unwrap();
    let topo = Topology::build(&t).unwrap();
    let g = greedy_face_coloring(&t, &topo).unwrap();
    check_face_coloring(&topo, &g.colors).unwrap();
    assert!(g.num_colors > 4 && g.num_colors <= 7);
}

#[test]
fn nonconforming_refinement_uses_six_colors_and_coarsens_back() {
    let mesh = tri_grid(12, 10, Diagonals::Random { seed: 6 }).unwrap();
    let (topo, col) = color(&mesh, 2);
    let ne = mesh.num_elements();
    for (k, flags) in [
        (0usize, (0..ne).map(|e| e % 3 == 0).collect::<Vec<bool>>()),
        (1, (0..ne).map(|e| e % 2 == 1).collect()),
        (2, vec![true; ne]),
        (3, vec![false; ne]),
    ] {
        let nc = refine(&mesh, &topo, &flags).unwrap();
        nc.validate().unwrap();
        let refined = flags.iter().filter(|&&b| b).count();
        assert_eq!(nc.mesh.num_elements(), ne + 3 * refined);
        let colors = refine_colors(&nc, &col.colors).unwrap();
        check_nonconforming_coloring(&nc, &colors).unwrap();
        assert!(colors.iter().all(|&c| c < 6));
        if k < 2 {
            // A coarse element next to refined ones has more than three faces, so six colors
            // are really used.
            assert!(colors.iter().any(|&c| c >= 3));
            let max_faces = (0..nc.mesh.num_elements())
                .map(|e| nc.topo.element_faces.row(e).len())
                .max()
                .unwrap();
            assert!(max_faces > 3);
        }
        // Child colors follow GK's mapping, first child keeps the parent color.
        for (f, &cf) in colors.iter().enumerate() {
            let p = nc.parent_face[f] as usize;
            match nc.face_kind[f] {
                NcFaceKind::Child(m) => {
                    assert_eq!(cf, map_child_color(col.colors[p], m));
                    if m == 1 {
                        assert_eq!(cf, col.colors[p]);
                    }
                }
                _ => assert_eq!(cf, col.colors[p]),
            }
        }
        assert_eq!(coarsen_colors(&nc, &colors).unwrap(), col.colors);
    }
}

#[test]
fn nonconforming_child_order_follows_the_left_element() {
    // The first child of a split edge starts at the parent's first vertex as seen from the
    // parent's left element (counter-clockwise), whichever side was refined.
    let mesh = tri_grid(4, 4, Diagonals::Random { seed: 1 }).unwrap();
    let (topo, _) = color(&mesh, 1);
    let flags: Vec<bool> = (0..mesh.num_elements()).map(|e| e % 2 == 0).collect();
    let nc = refine(&mesh, &topo, &flags).unwrap();
    for f in 0..nc.topo.num_faces() {
        if let NcFaceKind::Child(m) = nc.face_kind[f] {
            let p = nc.parent_face[f] as usize;
            let pv = topo.face_vertices.row(p);
            let cv = nc.topo.face_vertices.row(f);
            if m == 1 {
                assert_eq!(cv[0], pv[0]);
            } else {
                assert_eq!(cv[1], pv[1]);
            }
            assert_eq!(nc.element_parent[nc.topo.left[f] as usize], topo.left[p]);
        }
    }
}

#[test]
fn nonconforming_rejects_non_three_colorings() {
    let mesh = tri_grid(3, 3, Diagonals::Uniform).unwrap();
    let topo = Topology::build(&mesh).unwrap();
    let nc = refine(&mesh, &topo, &vec![true; mesh.num_elements()]).unwrap();
    let g = greedy_face_coloring(&mesh, &topo).unwrap();
    if g.num_colors > 3 {
        assert!(refine_colors(&nc, &g.colors).is_err());
    }
    assert!(refine_colors(&nc, &[0, 1]).is_err());
}

#[test]
fn vertex_colorings_are_valid() {
    for mesh in [
        tri_grid(30, 20, Diagonals::Random { seed: 2 }).unwrap(),
        tet_box(5, 4, 4, TetSplit::Six).unwrap(),
        sphere(6, 0.2, 3).unwrap(),
    ] {
        let topo = Topology::build(&mesh).unwrap();
        let g = &topo.vertex_neighbors;
        let boundary = topo.boundary_vertices(mesh.num_points());
        let mut counts = Vec::new();
        for order in [
            VertexOrder::Natural,
            VertexOrder::LargestFirst,
            VertexOrder::SmallestLast,
        ] {
            let c = color_vertices(g, order, None).unwrap();
            check_vertex_coloring(g, &c.colors, None).unwrap();
            counts.push(c.num_colors);
            let sep = color_vertices(g, order, Some(&boundary)).unwrap();
            check_vertex_coloring(g, &sep.colors, Some(&boundary)).unwrap();
            assert!(sep.num_colors >= c.num_colors);
            if boundary.iter().any(|&b| b) {
                assert!(sep.boundary_colors > 0);
                for (v, &b) in boundary.iter().enumerate() {
                    assert_eq!(b, (sep.colors[v] as usize) < sep.boundary_colors);
                }
            }
            assert_eq!(sep.classes().indices.len(), mesh.num_points());
        }
        // Smallest-last never needs more than degeneracy + 1 <= max degree + 1.
        let max_deg = (0..g.num_rows()).map(|v| g.row(v).len()).max().unwrap();
        assert!(counts[2] <= max_deg + 1);
    }
    // A checker that can fail.
    let mesh = tri_grid(3, 3, Diagonals::Uniform).unwrap();
    let topo = Topology::build(&mesh).unwrap();
    let zeros = vec![0u32; mesh.num_points()];
    assert!(check_vertex_coloring(&topo.vertex_neighbors, &zeros, None).is_err());
}

/// Release-mode timing of the big targets (GK's mesh-E size and sphere C size). Run with
/// `cargo test --release --test coloring -- --ignored --nocapture`.
#[test]
#[ignore]
fn timing_large_meshes() {
    let t0 = Instant::now();
    let mesh = tri_grid(1378, 1378, Diagonals::Random { seed: 1 }).unwrap();
    let topo = Topology::build(&mesh).unwrap();
    println!(
        "triangle grid: {} elements, {} edges (generate + topology {:.2} s)",
        mesh.num_elements(),
        topo.num_faces(),
        t0.elapsed().as_secs_f64()
    );
    let t = Instant::now();
    let col = color_faces(&mesh, &topo, &FaceColoringOptions::with_seed(1)).unwrap();
    println!(
        "  GK 3-coloring: {:.3} s, {} colors, counts {:?}, {:?}",
        t.elapsed().as_secs_f64(),
        col.num_colors,
        col.counts,
        col.stats
    );
    check_face_coloring(&topo, &col.colors).unwrap();
    let t = Instant::now();
    let plain = FaceColoringOptions {
        propagate: false,
        ..FaceColoringOptions::with_seed(1)
    };
    let col = color_faces(&mesh, &topo, &plain).unwrap();
    println!(
        "  GK 3-coloring, plain greedy order: {:.3} s, {} colors, {:?}",
        t.elapsed().as_secs_f64(),
        col.num_colors,
        col.stats
    );
    check_face_coloring(&topo, &col.colors).unwrap();
    let t = Instant::now();
    let g = greedy_face_coloring(&mesh, &topo).unwrap();
    println!(
        "  greedy first-fit: {:.3} s, {} colors",
        t.elapsed().as_secs_f64(),
        g.num_colors
    );
    let t = Instant::now();
    let s = sphere(192, 0.3, 1).unwrap();
    let stopo = Topology::build(&s).unwrap();
    println!(
        "sphere: {} elements, {} edges (generate + topology {:.2} s)",
        s.num_elements(),
        stopo.num_faces(),
        t.elapsed().as_secs_f64()
    );
    let t = Instant::now();
    let scol = color_faces(&s, &stopo, &FaceColoringOptions::with_seed(1)).unwrap();
    println!(
        "  GK 3-coloring: {:.3} s, {} colors, {:?}",
        t.elapsed().as_secs_f64(),
        scol.num_colors,
        scol.stats
    );
    check_face_coloring(&stopo, &scol.colors).unwrap();
    let t = Instant::now();
    let scol = color_faces(&s, &stopo, &plain).unwrap();
    println!(
        "  GK 3-coloring, plain greedy order: {:.3} s, {} colors, {:?}",
        t.elapsed().as_secs_f64(),
        scol.num_colors,
        scol.stats
    );
    check_face_coloring(&stopo, &scol.colors).unwrap();
}

fn graph_file(name: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/graphs")
        .join(name)
}

/// Matrix Market (SciPy's writer: pattern/real/integer, general/symmetric, with diagonals and
/// repeated entries) and DIMACS files: the right vertex and edge counts, a symmetric loop-free
/// adjacency, and every CPU order and both GPU variants conflict-free.
#[test]
fn graph_files_are_colored_conflict_free() {
    use chromaflow::color::gpu_vertices::{color_vertices_gpu, GpuColoringVariant};
    let rt =
        chromaflow::runtime::Runtime::wgpu().expect("a GPU adapter is required (CI: lavapipe)");
    for (name, n, m, chi) in [
        ("grid_pattern.mtx", 120, 218, 2),
        ("general_real.mtx", 60, 215, 2),
        ("integer_sym.mtx", 40, 111, 2),
        ("myciel4.col", 23, 71, 5),
    ] {
        let g =
            chromaflow::mesh::io::read_graph(&graph_file(name)).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!((g.num_rows(), g.indices.len() / 2), (n, m), "{name}");
        for v in 0..n {
            let row = g.row(v);
            assert!(
                row.windows(2).all(|w| w[0] < w[1]) && !row.contains(&(v as u32)),
                "{name}"
            );
            assert!(
                row.iter().all(|&u| g.row(u as usize).contains(&(v as u32))),
                "{name}"
            );
        }
        for order in [
            VertexOrder::Natural,
            VertexOrder::LargestFirst,
            VertexOrder::SmallestLast,
        ] {
            let c = color_vertices(&g, order, None).unwrap();
            check_vertex_coloring(&g, &c.colors, None).unwrap();
            assert!(c.num_colors >= chi, "{name}");
        }
        for variant in [GpuColoringVariant::Topology, GpuColoringVariant::Data] {
            let c = color_vertices_gpu(&rt, &g, None, variant).unwrap();
            check_vertex_coloring(&g, &c.colors, None).unwrap();
            assert!(c.num_colors >= chi, "{name}");
        }
    }
}

/// Malformed graph files: each error names the file, the line and what is wrong; counts that
/// lie (1e12 entries, 4e9 vertices) end in an error, not an allocation; fuzzed files never
/// panic.
#[test]
fn malformed_graph_files_name_the_line() {
    use chromaflow::mesh::io::parse_graph;
    let p = std::path::Path::new("bad.mtx");
    let err = |text: &str| parse_graph(p, text.as_bytes()).unwrap_err().to_string();
    let mm = "%%MatrixMarket matrix coordinate pattern general\n";
    let e = err("%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n4\n");
    assert!(
        e.contains("bad.mtx:1: expected '%%MatrixMarket matrix coordinate"),
        "{e}"
    );
    let e = err(&format!("{mm}% a comment\n%\n3 4 1\n1 2\n"));
    assert!(e.contains("bad.mtx:4: the matrix is 3 x 4"), "{e}");
    let e = err(&format!("{mm}% comment\n3 3 2\n1 2\n3 7\n"));
    assert!(
        e.contains("bad.mtx:5: vertex 7 is out of range 1..=3"),
        "{e}"
    );
    let e = err(&format!("{mm}3 3 2\n1 2\n0 3\n"));
    assert!(
        e.contains("bad.mtx:4: vertex 0 is out of range 1..=3"),
        "{e}"
    );
    let e = err(&format!("{mm}3 3 1000000000000\n1 2\n"));
    assert!(
        e.contains("unexpected end of file in the entries, expected 999999999999 more"),
        "{e}"
    );
    let e = err(&format!("{mm}3 3 1\n1 x\n"));
    assert!(
        e.contains("bad.mtx:3: unexpected 'x' in the entries"),
        "{e}"
    );
    let e = err("c x\ne 1 2\n");
    assert!(
        e.contains("bad.mtx:2:") && e.contains("expected 'p edge N M'"),
        "{e}"
    );
    let e = err("p edge 3 1\ne 1 4\n");
    assert!(
        e.contains("bad.mtx:2: vertex 4 is out of range 1..=3"),
        "{e}"
    );
    assert!(err("").contains("no 'p edge N M' line"));
    let e = err(&format!("{mm}4000000000 4000000000 0\n"));
    assert!(
        e.contains("bad.mtx:2: 4000000000 vertices in a file of"),
        "{e}"
    );
    // Every prefix and random corruptions of every sample: an error or a graph, never a panic.
    use rand::{Rng, SeedableRng};
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(16);
    for name in [
        "grid_pattern.mtx",
        "general_real.mtx",
        "integer_sym.mtx",
        "myciel4.col",
    ] {
        let bytes = std::fs::read(graph_file(name)).unwrap();
        for len in (0..bytes.len()).step_by(bytes.len() / 60 + 1) {
            let _ = parse_graph(p, &bytes[..len]);
        }
        for _ in 0..60 {
            let mut b = bytes.clone();
            for _ in 0..rng.random_range(1..4) {
                let i = rng.random_range(0..b.len());
                b[i] = [b'9', b' ', b'%', b'\n', rng.random()][rng.random_range(0..5)];
            }
            let _ = parse_graph(p, &b);
        }
    }
}

/// The generator's random geometric graph: the asked size and about the asked mean degree
/// (fewer neighbours at the boundary); written as .mtx and .col it reads back the same, as
/// .csr it is the binary layout.
#[test]
fn random_geometric_graph_round_trips_through_both_formats() {
    use chromaflow::color::bench::random_geometric_graph;
    use chromaflow::mesh::io::{read_graph, write_graph};
    let g = random_geometric_graph(4000, 12.0, 5).unwrap();
    assert_eq!(g.num_rows(), 4000);
    let mean = g.indices.len() as f64 / 4000.0;
    assert!((8.0..12.5).contains(&mean), "mean degree {mean}");
    let dir = tempfile::tempdir().unwrap();
    for name in ["g.mtx", "g.col"] {
        let path = dir.path().join(name);
        write_graph(&g, &path).unwrap();
        let back = read_graph(&path).unwrap();
        assert_eq!(
            (back.offsets.as_slice(), back.indices.as_slice()),
            (g.offsets.as_slice(), g.indices.as_slice()),
            "{name}"
        );
    }
    // Binary CSR for GPU libraries' benchmarks: int32 n, nnz, offsets, indices.
    let csr = dir.path().join("g.csr");
    write_graph(&g, &csr).unwrap();
    let b = std::fs::read(&csr).unwrap();
    assert_eq!(b.len(), 4 * (2 + g.offsets.len() + g.indices.len()));
    assert_eq!(
        b[..8],
        [
            4000u32.to_le_bytes(),
            (g.indices.len() as u32).to_le_bytes()
        ]
        .concat()
    );
    assert!(random_geometric_graph(10, 0.0, 1).is_err());
}

/// `chromaflow graph` writes a graph; `color --graph` and `bench color --graph` color it,
/// without the Vulkan loader's XDG_RUNTIME_DIR lines when the variable is unset.
#[test]
fn color_graph_cli() {
    let bin = env!("CARGO_BIN_EXE_chromaflow");
    let run = |args: &[&str]| {
        // Without XDG_RUNTIME_DIR the binary sets a private one: no loader complaints.
        let out = std::process::Command::new(bin)
            .args(args)
            .env_remove("XDG_RUNTIME_DIR")
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{args:?}: {err}");
        assert!(!err.contains("XDG_RUNTIME_DIR"), "{args:?}: {err}");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let dir = tempfile::tempdir().unwrap();
    let mtx = dir.path().join("box.mtx");
    let out = run(&["graph", mtx.to_str().unwrap(), "--tet-box", "4"]);
    assert!(out.contains("125 vertices"), "{out}");
    let out = run(&["color", "--graph", mtx.to_str().unwrap()]);
    for row in [
        "greedy Natural",
        "greedy SmallestLast",
        "GPU Topology",
        "GPU Data",
    ] {
        assert!(out.contains(&format!("| {row} |")), "{out}");
    }
    let col = graph_file("myciel4.col");
    let json = run(&[
        "color",
        "--graph",
        col.to_str().unwrap(),
        "--gpu",
        "data",
        "--json",
    ]);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(
        (v["vertices"].as_u64(), v["edges"].as_u64()),
        (Some(23), Some(71))
    );
    assert_eq!(v["colorings"].as_array().unwrap().len(), 4);
    let out = run(&[
        "bench",
        "color",
        "--graph",
        col.to_str().unwrap(),
        "--repeat",
        "1",
    ]);
    assert!(out.contains("graph: ") && out.contains("| 23 |"), "{out}");
}

/// The vertex graph of an n x n x n tetrahedral box, greedy's color count in natural order and
/// the bound for the GPU coloring, greedy + 10% rounded down (8 for greedy's 8).
fn tet_box_graph(n: usize) -> (chromaflow::mesh::Csr, usize, usize) {
    let g = Topology::build(&tet_box(n, n, n, TetSplit::Six).unwrap())
        .unwrap()
        .vertex_neighbors;
    let greedy = color_vertices(&g, VertexOrder::Natural, None)
        .unwrap()
        .num_colors;
    (g, greedy, (1.1 * greedy as f64).floor() as usize)
}

/// Colors 1..k all used, and no two neighbours (of one class) share a color.
fn proper_without_gaps(g: &chromaflow::mesh::Csr, colors: &[u32], class: Option<&[u32]>) -> usize {
    let zero_based: Vec<u32> = colors.iter().map(|&c| c - 1).collect();
    let boundary: Option<Vec<bool>> = class.map(|c| c.iter().map(|&k| k != 0).collect());
    if let Some(classes) = class {
        for v in 0..g.num_rows() {
            for &u in g.row(v) {
                let u = u as usize;
                assert!(
                    classes[u] != classes[v] || colors[u] != colors[v],
                    "{u} and {v} share {}",
                    colors[v]
                );
            }
        }
    } else {
        check_vertex_coloring(g, &zero_based, boundary.as_deref()).unwrap();
    }
    let k = *colors.iter().max().unwrap() as usize;
    let used: std::collections::BTreeSet<u32> = colors.iter().copied().collect();
    assert_eq!(used.len(), k, "a color class in 1..={k} is empty");
    k
}

/// A clique of `size` vertices and a path of as many, path vertex i joined to clique vertex i:
/// `size` colors, more than the GPU's workgroup-local class counters hold when size > 64.
fn clique_with_path(size: u32) -> chromaflow::mesh::Csr {
    let mut pairs = Vec::new();
    for a in 0..size {
        for b in 0..size {
            if a != b {
                pairs.push((a, b));
            }
        }
        pairs.extend([(a, size + a), (size + a, a)]);
        if a + 1 < size {
            pairs.extend([(size + a, size + a + 1), (size + a + 1, size + a)]);
        }
    }
    pairs.sort_unstable();
    chromaflow::mesh::Csr::from_pairs(2 * size as usize, &pairs)
}

/// `g` with `hubs` extra vertices (numbered last), hub h joined to `degree` vertices of `g`
/// spread over it.
fn with_hubs(g: &chromaflow::mesh::Csr, hubs: u32, degree: u32) -> chromaflow::mesh::Csr {
    let n = g.num_rows() as u32;
    let mut pairs: Vec<(u32, u32)> = (0..n)
        .flat_map(|v| g.row(v as usize).iter().map(move |&u| (v, u)))
        .collect();
    for h in 0..hubs {
        for i in 0..degree {
            let v = (h * 397 + i * 13) % n;
            pairs.extend([(n + h, v), (v, n + h)]);
        }
    }
    pairs.sort_unstable();
    pairs.dedup();
    chromaflow::mesh::Csr::from_pairs((n + hubs) as usize, &pairs)
}

/// First fit (1-based) in `order`.
fn first_fit_in(g: &chromaflow::mesh::Csr, order: impl Iterator<Item = u32>) -> Vec<u32> {
    let mut colors = vec![0u32; g.num_rows()];
    for v in order {
        let held: std::collections::BTreeSet<u32> = g
            .row(v as usize)
            .iter()
            .map(|&u| colors[u as usize])
            .collect();
        colors[v as usize] = (1..).find(|c| !held.contains(c)).unwrap();
    }
    colors
}

/// The GPU color reduction (iterated greedy + ejection, WGSL on lavapipe) gives exactly the
/// colors of its CPU reference, from random-order greedy colorings of a tetrahedral box, random
/// geometric graphs, a disk with boundary classes and a 70-clique with a path; the count never
/// grows, some ejections succeed (the ejection kernels are exercised) and the result is proper,
/// no gaps. The hubs of degree 90 start in color 1, so iterated greedy (highest class first)
/// recolors them last, into the top class, and the ejection moves them by ejecting their
/// neighbours, at any adjacency position (past 64: the apply kernel's direct path); the clique
/// has colors above the 64 counted in workgroup memory; the runs are repeated, as the GPU's defect lists and
/// class segments are filled in scheduling order and the result must not depend on it. All of
/// it with the tail kernel (these small graphs run their rounds there) and with the launched
/// rounds alone.
#[test]
fn color_reduction_gpu_equals_cpu() {
    use chromaflow::color::bench::random_geometric_graph;
    use chromaflow::color::reduce::{
        hashed_order_coloring, reduce_colors_cpu, reduce_colors_gpu, ColorReduction,
    };
    let rt =
        chromaflow::runtime::Runtime::wgpu().expect("a GPU adapter is required (CI: lavapipe)");
    let tet = Topology::build(&tet_box(7, 7, 7, TetSplit::Six).unwrap())
        .unwrap()
        .vertex_neighbors;
    let rgg = random_geometric_graph(1500, 14.0, 3).unwrap();
    let hubs = with_hubs(&rgg, 4, 90);
    let clique = clique_with_path(70);
    let disk_mesh = chromaflow::mesh::generate::builtin("disk:3000@1").unwrap();
    let disk_topo = Topology::build(&disk_mesh).unwrap();
    let disk_class: Vec<u32> = disk_topo
        .boundary_vertices(disk_mesh.num_points())
        .iter()
        .map(|&b| b as u32)
        .collect();
    let mut ejections = 0;
    let launched = ColorReduction {
        tail_defects: 0,
        ..ColorReduction::default()
    };
    for (opts, g, name, class) in
        [ColorReduction::default(), launched]
            .into_iter()
            .flat_map(|opts| {
                [
                    ("tet box 7", &tet, None),
                    ("rgg 1500", &rgg, None),
                    (
                        "disk, boundary classes",
                        &disk_topo.vertex_neighbors,
                        Some(&disk_class[..]),
                    ),
                    ("rgg 1500 with 4 hubs of degree 90", &hubs, None),
                    ("70-clique with a path", &clique, None),
                ]
                .map(|(name, g, class)| (opts, g, name, class))
            })
    {
        let name = format!("{name}, tail bound {}", opts.tail_defects);
        let name = name.as_str();
        let start = if name.contains("hubs") {
            let n = g.num_rows() as u32;
            first_fit_in(g, (n - 4..n).chain(0..n - 4))
        } else {
            hashed_order_coloring(g)
        };
        let (cpu, cpu_report) = reduce_colors_cpu(g, class, &start, &opts).unwrap();
        let (gpu, gpu_report) = reduce_colors_gpu(&rt, g, class, &start, &opts).unwrap();
        assert!(cpu == gpu, "{name}: GPU and CPU colors differ");
        let (again, _) = reduce_colors_gpu(&rt, g, class, &start, &opts).unwrap();
        assert!(again == gpu, "{name}: two GPU runs differ");
        let strip = |r: &chromaflow::color::reduce::ReductionReport| {
            (
                r.colors_before,
                r.colors_after,
                r.sweeps,
                r.ejections,
                r.near_misses,
                r.eject_rounds,
                r.eject_submits,
                (r.tail_submits, r.tail_rounds, r.tail_handbacks),
            )
        };
        assert_eq!(strip(&cpu_report), strip(&gpu_report), "{name}");
        let k = proper_without_gaps(g, &gpu, class);
        assert_eq!(k, gpu_report.colors_after, "{name}");
        // One read-back for the first count, one per iterated-greedy pass, one per submit of
        // ejection rounds (its defect log).
        assert_eq!(
            gpu_report.read_backs,
            1 + gpu_report.sweeps + gpu_report.eject_submits,
            "{name}: {gpu_report:?}"
        );
        assert!(k <= gpu_report.colors_before, "{name}");
        eprintln!("{name}: {gpu_report:?}");
        ejections += gpu_report.ejections;
    }
    assert!(
        ejections > 0,
        "no ejection succeeded: the test does not cover them"
    );
}

/// The tail kernel (`vcolor_eject_tail`: up to 32 ejection rounds in one launch of one
/// workgroup while the defects are few) gives exactly the colors of the launched rounds (four
/// launches per round), on the GPU and in the CPU reference, also with bounds the defect lists
/// cross both ways: with 128 rounds per attempt the failing attempt at 7 colors on the box
/// wanders between 40 and 63 defects, so at bound 48 the tail takes a list over and hands a
/// grown one back to the launched rounds. The tail runs, and its launches are counted: against
/// the launched rounds alone, every launched submit it replaces saves 4 x 8 launches and each
/// tail submit costs one.
#[test]
fn ejection_tail_gives_the_colors_of_the_launched_rounds() {
    use chromaflow::color::bench::random_geometric_graph;
    use chromaflow::color::reduce::{
        hashed_order_coloring, reduce_colors_cpu, reduce_colors_gpu, ColorReduction,
        ReductionReport, DEFAULT_TAIL_DEFECTS, EJECT_WINDOW,
    };
    let rt =
        chromaflow::runtime::Runtime::wgpu().expect("a GPU adapter is required (CI: lavapipe)");
    let (tet, _, _) = tet_box_graph(12);
    let rgg = random_geometric_graph(3000, 14.0, 5).unwrap();
    let launched = ColorReduction {
        tail_defects: 0,
        eject_rounds: 128,
        ..ColorReduction::default()
    };
    let schedule = |r: &ReductionReport| {
        (
            r.colors_after,
            r.ejections,
            r.near_misses,
            r.eject_rounds,
            r.eject_submits,
            r.tail_submits,
            r.tail_rounds,
            r.tail_handbacks,
        )
    };
    let mut handbacks = 0;
    for (name, g) in [("tet box 12", &tet), ("rgg 3000", &rgg)] {
        let start = hashed_order_coloring(g);
        let (reference, _) = reduce_colors_cpu(g, None, &start, &launched).unwrap();
        let (colors, off) = reduce_colors_gpu(&rt, g, None, &start, &launched).unwrap();
        assert!(
            colors == reference,
            "{name}: launched rounds, GPU and CPU differ"
        );
        assert_eq!(off.tail_submits, 0, "{name}");
        eprintln!("{name}, launched rounds only: {off:?}");
        for bound in [16, 48, DEFAULT_TAIL_DEFECTS] {
            let opts = ColorReduction {
                tail_defects: bound,
                eject_rounds: 128,
                ..ColorReduction::default()
            };
            let (cpu, cpu_report) = reduce_colors_cpu(g, None, &start, &opts).unwrap();
            let (gpu, on) = reduce_colors_gpu(&rt, g, None, &start, &opts).unwrap();
            eprintln!("{name}, tail bound {bound}: {on:?}");
            assert!(
                cpu == reference,
                "{name}, bound {bound}: CPU tail changes the colors"
            );
            assert!(
                gpu == reference,
                "{name}, bound {bound}: GPU tail changes the colors"
            );
            assert_eq!(
                schedule(&cpu_report),
                schedule(&on),
                "{name}, bound {bound}"
            );
            assert!(
                on.tail_submits > 0,
                "{name}, bound {bound}: the tail never ran"
            );
            let launched_submits = |r: &ReductionReport| r.eject_submits - r.tail_submits;
            assert_eq!(
                off.launches as isize - on.launches as isize,
                (4 * EJECT_WINDOW * (launched_submits(&off) - launched_submits(&on))) as isize
                    - on.tail_submits as isize,
                "{name}, bound {bound}"
            );
            assert_eq!(
                on.read_backs,
                1 + on.sweeps + on.eject_submits,
                "{name}, bound {bound}"
            );
            handbacks += on.tail_handbacks;
        }
    }
    assert!(
        handbacks > 0,
        "no defect list grew past a tail bound: the hand-back is not covered"
    );
}

/// Targets on a tetrahedral box (the lattice graph where the speculative rounds lose most
/// against greedy's natural order): the whole GPU coloring, and the reduction started from a
/// random-order greedy coloring (what a wide GPU's rounds give), use at most
/// floor(1.1 x greedy natural) colors (greedy + 10%: 8 for greedy's 8), properly. Without the
/// reduction the random order needs more than that, so the bound is the reduction's doing.
#[test]
fn tet_box_colors_within_ten_percent_of_greedy() {
    use chromaflow::color::gpu_vertices::{color_vertices_gpu, GpuColoringVariant};
    use chromaflow::color::reduce::{hashed_order_coloring, reduce_colors_gpu, ColorReduction};
    let rt =
        chromaflow::runtime::Runtime::wgpu().expect("a GPU adapter is required (CI: lavapipe)");
    let (g, greedy, bound) = tet_box_graph(16);
    let start = hashed_order_coloring(&g);
    let before = *start.iter().max().unwrap() as usize;
    assert!(
        before > bound,
        "random order: {before} colors, bound {bound}"
    );
    let (reduced, report) =
        reduce_colors_gpu(&rt, &g, None, &start, &ColorReduction::default()).unwrap();
    let k = proper_without_gaps(&g, &reduced, None);
    eprintln!("tet box 16: greedy {greedy}, random order {before} -> {k}: {report:?}");
    assert!(k <= bound, "reduced to {k} colors, bound {bound}");
    for variant in [GpuColoringVariant::Topology, GpuColoringVariant::Data] {
        let c = color_vertices_gpu(&rt, &g, None, variant).unwrap();
        check_vertex_coloring(&g, &c.colors, None).unwrap();
        eprintln!("{variant:?}: {} colors, {:?}", c.num_colors, c.reduction);
        assert!(
            c.num_colors <= bound,
            "{variant:?}: {} colors",
            c.num_colors
        );
    }
}

/// The count must not hang on where the speculative rounds leave the reduction: 40 first-fit
/// colorings of a 15,625-vertex tetrahedral box in different hashed orders (11 colors each,
/// greedy natural 8) all end at greedy + 10% (8) with the default reduction. Without the sweeps
/// after near misses, seeds 22 and 31 end at 9, their last attempt stalled with a defect or two
/// (so the starts do reach the case). On the GPU, seed 22's reduction (near miss, another sweep,
/// success) gives exactly the CPU reference's colors.
#[test]
fn tet_box_reduction_reaches_the_bound_from_many_starts() {
    use chromaflow::color::reduce::{
        reduce_colors_cpu, reduce_colors_gpu, seeded_order_coloring, ColorReduction,
    };
    let (g, _, bound) = tet_box_graph(24);
    let opts = ColorReduction::default();
    let no_retries = ColorReduction { retries: 0, ..opts };
    let mut stalled = Vec::new();
    let mut near_misses = 0;
    for seed in 0..40 {
        let start = seeded_order_coloring(&g, seed);
        assert!(*start.iter().max().unwrap() as usize > bound, "seed {seed}");
        let (colors, report) = reduce_colors_cpu(&g, None, &start, &opts).unwrap();
        let k = proper_without_gaps(&g, &colors, None);
        assert!(
            k <= bound,
            "seed {seed}: {k} colors, bound {bound}: {report:?}"
        );
        near_misses += report.near_misses;
        let (_, without) = reduce_colors_cpu(&g, None, &start, &no_retries).unwrap();
        if without.colors_after > bound {
            stalled.push(seed);
        }
    }
    eprintln!("without retries above the bound: seeds {stalled:?}; near misses {near_misses}");
    assert!(
        !stalled.is_empty() && near_misses >= stalled.len(),
        "the starts no longer reach a stalled attempt: the test does not cover the retries"
    );
    let rt =
        chromaflow::runtime::Runtime::wgpu().expect("a GPU adapter is required (CI: lavapipe)");
    let start = seeded_order_coloring(&g, stalled[0]);
    let (cpu, cpu_report) = reduce_colors_cpu(&g, None, &start, &opts).unwrap();
    let (gpu, gpu_report) = reduce_colors_gpu(&rt, &g, None, &start, &opts).unwrap();
    assert!(cpu == gpu, "seed {}: GPU and CPU colors differ", stalled[0]);
    assert!(gpu_report.near_misses > 0, "{gpu_report:?}");
    assert_eq!(
        (gpu_report.colors_after, gpu_report.eject_rounds),
        (cpu_report.colors_after, cpu_report.eject_rounds)
    );
}

/// A model of the speculative rounds on a wide GPU, one start per `seed`: each round the
/// uncolored vertices choose first fit in index order, vertex v seeing the choices of this
/// round made more than `lag_v` positions before its own (lag_v a hash of v and the seed below
/// `window`: the threads in flight at once), then the loser of every conflict (lowbias32
/// priority, as `vcolor_detect`) is uncolored.
fn speculative_rounds_model(g: &chromaflow::mesh::Csr, seed: u32, window: u32) -> Vec<u32> {
    use chromaflow::color::reduce::lowbias32;
    let n = g.num_rows();
    let salt = lowbias32(seed ^ 0x5bd1_e995);
    let wins = |u: u32, v: u32| (lowbias32(u), u) < (lowbias32(v), v);
    let mut colors = vec![0u32; n];
    let mut position = vec![usize::MAX; n];
    let mut work: Vec<u32> = (0..n as u32).collect();
    while !work.is_empty() {
        let mut chosen = vec![0u32; n];
        for (i, &v) in work.iter().enumerate() {
            position[v as usize] = i;
            let lag = (lowbias32(v ^ salt) % window) as usize;
            let held: std::collections::BTreeSet<u32> = g
                .row(v as usize)
                .iter()
                .map(|&u| {
                    let u = u as usize;
                    match (colors[u], position[u]) {
                        (0, p) if p != usize::MAX && p + lag < i => chosen[u],
                        (c, _) => c,
                    }
                })
                .collect();
            chosen[v as usize] = (1..).find(|c| !held.contains(c)).unwrap();
        }
        for &v in &work {
            colors[v as usize] = chosen[v as usize];
            position[v as usize] = usize::MAX;
        }
        let losers: Vec<u32> = work
            .iter()
            .copied()
            .filter(|&v| {
                let c = colors[v as usize];
                g.row(v as usize)
                    .iter()
                    .any(|&u| colors[u as usize] == c && wins(u, v))
            })
            .collect();
        for &v in &losers {
            colors[v as usize] = 0;
        }
        work = losers;
    }
    colors
}

/// The study behind the near-miss retries, on demand (minutes in release: `cargo test
/// --release --test coloring -- --ignored --nocapture many_starts`): tetrahedral boxes of 69k
/// and 227k vertices, 30 starts each from hashed first-fit orders and from the speculative
/// rounds model with 1,000 and 100,000 threads in flight; every default reduction ends at
/// greedy + 10% or below. The counts without retries are printed for comparison.
#[test]
#[ignore]
fn tet_box_reduction_reaches_the_bound_from_many_starts_large() {
    use chromaflow::color::reduce::{reduce_colors_cpu, seeded_order_coloring, ColorReduction};
    let opts = ColorReduction::default();
    let no_retries = ColorReduction { retries: 0, ..opts };
    for cells in [40, 60] {
        let (g, _, bound) = tet_box_graph(cells);
        for model in [
            "hashed order",
            "rounds, 1000 in flight",
            "rounds, 100000 in flight",
        ] {
            let (mut above, mut above_without, mut near_misses) = (0, 0, 0);
            for seed in 0..30 {
                let start = match model {
                    "hashed order" => seeded_order_coloring(&g, seed),
                    "rounds, 1000 in flight" => speculative_rounds_model(&g, seed, 1000),
                    _ => speculative_rounds_model(&g, seed, 100_000),
                };
                let (colors, report) = reduce_colors_cpu(&g, None, &start, &opts).unwrap();
                above += usize::from(proper_without_gaps(&g, &colors, None) > bound);
                near_misses += report.near_misses;
                let (_, without) = reduce_colors_cpu(&g, None, &start, &no_retries).unwrap();
                above_without += usize::from(without.colors_after > bound);
            }
            eprintln!(
                "tet box {cells}, {model}: {above} of 30 above {bound} colors ({above_without} \
                 without retries), {near_misses} near misses"
            );
            assert_eq!(above, 0, "tet box {cells}, {model}");
        }
    }
}

/// A star of 5000 leaves: the reduction's launches follow the colors present (2), not the
/// maximum degree (the recoloring once launched a kernel per possible color, 5001 here), and it
/// waits for the GPU twice.
#[test]
fn star_reduction_launches_follow_the_colors() {
    use chromaflow::color::gpu_vertices::{color_vertices_gpu, GpuColoringVariant};
    let rt =
        chromaflow::runtime::Runtime::wgpu().expect("a GPU adapter is required (CI: lavapipe)");
    let leaves = 5000u32;
    let pairs: Vec<(u32, u32)> = (1..=leaves).flat_map(|l| [(0, l), (l, 0)]).collect();
    let star = chromaflow::mesh::Csr::from_pairs(leaves as usize + 1, &pairs);
    let t = Instant::now();
    let c = color_vertices_gpu(&rt, &star, None, GpuColoringVariant::Data).unwrap();
    eprintln!(
        "star: {} colors, {:?}, {:.3} s wall",
        c.num_colors,
        c.reduction,
        t.elapsed().as_secs_f64()
    );
    check_vertex_coloring(&star, &c.colors, None).unwrap();
    assert_eq!(c.num_colors, 2);
    // vcolor_max; one sweep: count, offsets, bucket, 2 recolor launches, vcolor_max. Each is
    // one submit and one read-back of the largest color.
    assert_eq!(
        (
            c.reduction.launches,
            c.reduction.submits,
            c.reduction.read_backs
        ),
        (7, 4, 2),
        "{:?}",
        c.reduction
    );
    // The whole coloring: per submit of 4 speculative rounds one submit and one read-back of
    // the conflict counts, then the reduction, then the colors' read-back.
    let round_submits = c.rounds.div_ceil(4);
    assert_eq!(
        (c.work.submits, c.work.read_backs),
        (2 * round_submits + 4 + 1, round_submits + 2 + 1),
        "{:?}",
        c.work
    );
}

/// The reduction rejects inputs it cannot work on, naming what is wrong.
#[test]
fn color_reduction_rejects_bad_colorings() {
    use chromaflow::color::reduce::{reduce_colors_cpu, ColorReduction};
    let path = chromaflow::mesh::Csr::from_pairs(3, &[(0, 1), (1, 0), (1, 2), (2, 1)]);
    let opts = ColorReduction::default();
    let err = |colors: &[u32], class: Option<&[u32]>| {
        reduce_colors_cpu(&path, class, colors, &opts)
            .unwrap_err()
            .to_string()
    };
    assert!(err(&[1, 2], None).contains("2 colors for 3 vertices"));
    assert!(err(&[1, 0, 1], None).contains("vertex 1 has color 0"));
    assert!(err(&[1, 1, 2], None).contains("neighbours 0 and 1 share color 1"));
    assert!(err(&[1, 2, 4], None).contains("vertex 2 has color 4, more than the 3 vertices need"));
    assert!(err(&[1, 2, 1], Some(&[0, 0])).contains("vertex classes have 2 entries"));
    // Other classes' neighbours may share a color; the reduction keeps the classes apart.
    let (c, r) = reduce_colors_cpu(&path, Some(&[0, 1, 1]), &[1, 1, 2], &opts).unwrap();
    assert_eq!((c, r.colors_after), (vec![1, 2, 1], 2));
}
