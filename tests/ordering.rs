//! Orderings: permutations, consistency of the permuted mesh/topology/coloring, bandwidth,
//! and the GK Algorithm 5 layout.

use chromaflow::color::{
    check_face_coloring, color_faces, greedy_face_coloring, FaceColoring, FaceColoringOptions,
};
use chromaflow::mesh::generate3d::{
    hybrid_box, quad_grid, sphere, tet_box, tri_grid, Diagonals, TetSplit,
};
use chromaflow::mesh::{Mesh, Topology, NO_ELEMENT};
use chromaflow::order::{
    apply_ordering, bandwidth, coalesced_fraction, color_locality, gps, invert_permutation,
    is_permutation, prepare, profile, rcm, ColorLocality, OrderedMesh, Ordering, PrepareOptions,
};
use rand::seq::SliceRandom;
use rand::SeedableRng;
use std::time::Instant;

fn shuffled(mesh: &Mesh, seed: u64) -> Mesh {
    let mut perm: Vec<u32> = (0..mesh.num_elements() as u32).collect();
    perm.shuffle(&mut rand_chacha::ChaCha8Rng::seed_from_u64(seed));
    let mut m = mesh.clone();
    m.permute_elements(&perm);
    m
}

fn sorted(v: &[u32]) -> Vec<u32> {
    let mut v = v.to_vec();
    v.sort_unstable();
    v
}

/// The ordered mesh describes the same mesh as the input, and its topology is what
/// `Topology::build` gives on the permuted mesh (same faces, same left/right, same face vertex
/// orientation), only in another face order.
fn check_consistent(mesh: &Mesh, o: &chromaflow::order::OrderedMesh) {
    let ne = mesh.num_elements();
    let topo = Topology::build(mesh).unwrap();
    let nf = topo.num_faces();
    assert!(is_permutation(&o.element_new_to_old) && is_permutation(&o.face_new_to_old));
    assert_eq!(
        invert_permutation(&o.element_new_to_old),
        o.element_old_to_new
    );
    assert_eq!(invert_permutation(&o.face_new_to_old), o.face_old_to_new);
    assert_eq!((o.mesh.num_elements(), o.topo.num_faces()), (ne, nf));
    for e in 0..ne {
        let old = o.element_new_to_old[e] as usize;
        assert_eq!(o.mesh.element(e), mesh.element(old));
        assert_eq!(o.mesh.kinds[e], mesh.kinds[old]);
    }
    for f in 0..nf {
        let old = o.face_new_to_old[f] as usize;
        assert_eq!(
            sorted(o.topo.face_vertices.row(f)),
            sorted(topo.face_vertices.row(old))
        );
        let map = |e: u32| {
            if e == NO_ELEMENT {
                NO_ELEMENT
            } else {
                o.element_new_to_old[e as usize]
            }
        };
        let (l, r) = (map(o.topo.left[f]), map(o.topo.right[f]));
        if o.face_flipped[f] {
            assert_eq!((l, r), (topo.right[old], topo.left[old]));
        } else {
            assert_eq!((l, r), (topo.left[old], topo.right[old]));
        }
        if o.topo.right[f] != NO_ELEMENT {
            assert!(o.topo.left[f] < o.topo.right[f]);
        }
    }
    // Same as rebuilding from scratch, up to the face order.
    let fresh = Topology::build(&o.mesh).unwrap();
    let key = |t: &Topology, f: usize| {
        (
            sorted(t.face_vertices.row(f)),
            t.left[f],
            t.right[f],
            t.left_local[f],
            t.right_local[f],
            t.face_vertices.row(f).to_vec(),
        )
    };
    let mut a: Vec<_> = (0..nf).map(|f| key(&o.topo, f)).collect();
    let mut b: Vec<_> = (0..nf).map(|f| key(&fresh, f)).collect();
    a.sort();
    b.sort();
    assert_eq!(a, b);
    // Element -> faces rows name the same faces in the same local order.
    for e in 0..ne {
        let mine: Vec<Vec<u32>> = o
            .topo
            .element_faces
            .row(e)
            .iter()
            .map(|&f| sorted(o.topo.face_vertices.row(f as usize)))
            .collect();
        let theirs: Vec<Vec<u32>> = fresh
            .element_faces
            .row(e)
            .iter()
            .map(|&f| sorted(fresh.face_vertices.row(f as usize)))
            .collect();
        assert_eq!(mine, theirs);
        let mut ve_ok = true;
        for &v in o.mesh.element(e) {
            ve_ok &= o.topo.vertex_elements.row(v as usize).contains(&(e as u32));
        }
        assert!(ve_ok);
    }
    // Coloring: still proper, grouped by color with matching offsets.
    check_face_coloring(&o.topo, &o.coloring.colors).unwrap();
    assert_eq!(o.color_offsets.len(), o.coloring.num_colors + 1);
    assert_eq!(*o.color_offsets.last().unwrap(), nf);
    for c in 0..o.coloring.num_colors {
        assert!(o
            .faces_of_color(c)
            .all(|f| o.coloring.colors[f] as usize == c));
        assert_eq!(o.coloring.counts[c], o.faces_of_color(c).len());
    }
}

/// `prepare` is topology -> face coloring with the seed -> ordering.
#[test]
fn prepare_is_topology_coloring_ordering() {
    assert_eq!(
        PrepareOptions::default(),
        PrepareOptions::new(Ordering::Original, 0)
    );
    let mesh = shuffled(&tri_grid(14, 11, Diagonals::Random { seed: 1 }).unwrap(), 3);
    let topo = Topology::build(&mesh).unwrap();
    for seed in [0, 1, 7] {
        let coloring = color_faces(&mesh, &topo, &FaceColoringOptions::with_seed(seed)).unwrap();
        for ordering in [Ordering::Original, Ordering::Rcm, Ordering::ColorChains] {
            let by_hand = apply_ordering(&mesh, &topo, &coloring, ordering).unwrap();
            let opts = PrepareOptions::new(ordering, seed);
            let o = prepare(&mesh, &opts).unwrap();
            assert_eq!(o.ordering, ordering);
            assert_eq!(
                o.coloring.colors, by_hand.coloring.colors,
                "{ordering} {seed}"
            );
            assert_eq!(o.element_new_to_old, by_hand.element_new_to_old);
            assert_eq!(o.face_new_to_old, by_hand.face_new_to_old);
            assert_eq!(o.color_offsets, by_hand.color_offsets);
        }
    }
}

#[test]
fn every_ordering_is_consistent() {
    let meshes = [
        shuffled(&tri_grid(14, 11, Diagonals::Random { seed: 1 }).unwrap(), 3),
        shuffled(&quad_grid(9, 7).unwrap(), 4),
        shuffled(&tet_box(3, 3, 2, TetSplit::Five).unwrap(), 5),
        hybrid_box(3, 3, 3, true, 6).unwrap(),
        sphere(3, 0.2, 2).unwrap(),
    ];
    for mesh in &meshes {
        for ordering in Ordering::ALL {
            let o = prepare(mesh, &PrepareOptions::new(ordering, 7)).unwrap();
            assert_eq!(o.ordering, ordering);
            check_consistent(mesh, &o);
        }
    }
}

/// GK Algorithm 5 layout: color-0 face k has left element k and (if interior) right element
/// N1 + k; the other color groups are sorted by ascending left element.
fn check_algorithm5_layout(o: &chromaflow::order::OrderedMesh) {
    let interior = check_first_group(o);
    // Minimal coloring of a single-kind mesh: color 0 numbers every element.
    assert_eq!(o.faces_of_color(0).len() + interior, o.mesh.num_elements());
}

/// Color-0 face k is (k, N1 + k) (interior faces first), the other groups are sorted by
/// ascending left element. Returns the interior faces of color 0.
fn check_first_group(o: &OrderedMesh) -> usize {
    let n1 = o.faces_of_color(0).len();
    let mut interior = 0;
    for k in o.faces_of_color(0) {
        assert_eq!(o.topo.left[k] as usize, k);
        if o.topo.right[k] != NO_ELEMENT {
            assert_eq!(o.topo.right[k] as usize, n1 + k, "face {k}");
            interior += 1;
        } else {
            assert!(k >= interior, "boundary faces come after interior ones");
        }
    }
    for c in 1..o.coloring.num_colors {
        let r = o.faces_of_color(c);
        let lefts: Vec<u32> = r.map(|f| o.topo.left[f]).collect();
        assert!(lefts.windows(2).all(|w| w[0] < w[1]));
    }
    interior
}

#[test]
fn algorithm5_layout_holds() {
    let tri = shuffled(&tri_grid(20, 15, Diagonals::Random { seed: 4 }).unwrap(), 1);
    let tet = tet_box(3, 3, 3, TetSplit::Six).unwrap();
    let closed = sphere(4, 0.3, 1).unwrap();
    for mesh in [&tri, &tet, &closed] {
        for ordering in [
            Ordering::ColorRenumbered,
            Ordering::RcmColorGrouped,
            Ordering::GpsColorGrouped,
            Ordering::ColorChains,
        ] {
            let o = prepare(mesh, &PrepareOptions::new(ordering, 3)).unwrap();
            check_algorithm5_layout(&o);
            // Color-0 reads are fully coalesced on both sides.
            let (l, _) = coalesced_fraction(&o.topo, &o.color_offsets[..2]);
            assert!(l > 0.99);
        }
    }
}

#[test]
fn rcm_and_gps_reduce_bandwidth_of_a_shuffled_mesh() {
    for mesh in [
        shuffled(&tri_grid(40, 25, Diagonals::Random { seed: 2 }).unwrap(), 9),
        shuffled(&tet_box(6, 5, 4, TetSplit::Six).unwrap(), 8),
        shuffled(&sphere(8, 0.3, 5).unwrap(), 7),
    ] {
        let topo = Topology::build(&mesh).unwrap();
        let adj = topo.element_adjacency(mesh.num_elements());
        let bw0 = bandwidth(&adj, None);
        let pf0 = profile(&adj, None);
        for perm in [rcm(&adj), gps(&adj)] {
            assert!(is_permutation(&perm));
            let inv = invert_permutation(&perm);
            let (bw, pf) = (bandwidth(&adj, Some(&inv)), profile(&adj, Some(&inv)));
            assert!(bw <= bw0 && pf <= pf0);
            // A shuffled mesh has bandwidth ~ n; a good ordering ~ sqrt(n) in 2D.
            assert!(bw * 5 < bw0, "bandwidth {bw} vs shuffled {bw0}");
        }
        // The ordered mesh reports the same bandwidth from its own topology.
        let o = prepare(&mesh, &PrepareOptions::new(Ordering::Rcm, 1)).unwrap();
        assert_eq!(o.bandwidth(), bandwidth(&adj, Some(&o.element_old_to_new)));
    }
}

#[test]
fn disconnected_graphs_are_ordered() {
    // Two separate grids in one mesh: both orderings still return bijections.
    let a = tri_grid(5, 4, Diagonals::Uniform).unwrap();
    let mut m = a.clone();
    let off = m.num_points() as u32;
    m.points
        .extend(a.points.iter().map(|p| [p[0] + 3.0, p[1], 0.0]));
    for e in 0..a.num_elements() {
        let v: Vec<u32> = a.element(e).iter().map(|&x| x + off).collect();
        m.push_element(a.kinds[e], &v, 1);
    }
    let topo = Topology::build(&m).unwrap();
    let adj = topo.element_adjacency(m.num_elements());
    assert!(is_permutation(&rcm(&adj)) && is_permutation(&gps(&adj)));
    for ordering in Ordering::ALL {
        check_consistent(&m, &prepare(&m, &PrepareOptions::new(ordering, 1)).unwrap());
    }
}

#[test]
fn ordering_names_round_trip() {
    for o in Ordering::ALL {
        assert_eq!(o.name().parse::<Ordering>().unwrap(), o);
        assert_eq!(o.to_string(), o.name());
        use clap::ValueEnum;
        assert_eq!(Ordering::from_str(o.name(), true).unwrap(), o);
    }
    assert_eq!(
        "RCM_color".parse::<Ordering>().unwrap(),
        Ordering::RcmColorGrouped
    );
    assert_eq!(
        "chain-color".parse::<Ordering>().unwrap(),
        Ordering::ColorChains
    );
    assert!("metis".parse::<Ordering>().is_err());
}

#[test]
fn improper_coloring_is_rejected() {
    let m = tri_grid(3, 3, Diagonals::Uniform).unwrap();
    let topo = Topology::build(&m).unwrap();
    let mut col = color_faces(&m, &topo, &FaceColoringOptions::default()).unwrap();
    col.colors.iter_mut().for_each(|c| *c = 0);
    assert!(apply_ordering(&m, &topo, &col, Ordering::ColorRenumbered).is_err());
}

#[test]
fn metrics_on_a_path() {
    // Path 0-1-2-3 numbered as given, then reversed halves.
    let pairs = [(0, 1), (1, 0), (1, 2), (2, 1), (2, 3), (3, 2)];
    let g = chromaflow::mesh::Csr::from_pairs(4, &pairs);
    assert_eq!(bandwidth(&g, None), 1);
    assert_eq!(profile(&g, None), 3);
    let p = [0u32, 2, 1, 3];
    assert_eq!(bandwidth(&g, Some(&p)), 2);
}

/// Release-mode timing on the 3.8M-triangle mesh, plus an export of its (shuffled) element
/// graph for an external RCM comparison. Run with
/// `cargo test --release --test ordering -- --ignored --nocapture`.
#[test]
#[ignore]
fn timing_large_mesh() {
    let mesh = tri_grid(1378, 1378, Diagonals::Random { seed: 1 }).unwrap();
    let mesh = shuffled(&mesh, 2);
    let topo = Topology::build(&mesh).unwrap();
    let ne = mesh.num_elements();
    let col = color_faces(&mesh, &topo, &FaceColoringOptions::with_seed(1)).unwrap();
    println!("{} elements, {} faces", ne, topo.num_faces());
    let t = Instant::now();
    let r =
        chromaflow::order::color_renumbering(&topo, ne, &col.colors, col.num_colors, None).unwrap();
    println!(
        "  Algorithm 5 element renumbering: {:.3} s",
        t.elapsed().as_secs_f64()
    );
    assert!(is_permutation(&r.element_new_to_old));
    for ordering in [
        Ordering::ColorRenumbered,
        Ordering::ColorChains,
        Ordering::Rcm,
        Ordering::Gps,
    ] {
        let t = Instant::now();
        let o = apply_ordering(&mesh, &topo, &col, ordering).unwrap();
        let (l, rr) = coalesced_fraction(&o.topo, &o.color_offsets);
        println!(
            "  apply_ordering({ordering}): {:.3} s (permutations + permuted mesh, topology, coloring); bandwidth {}, coalesced left {:.3} right {:.3}",
            t.elapsed().as_secs_f64(),
            o.bandwidth(),
            l,
            rr
        );
    }
    let adj = topo.element_adjacency(ne);
    for (name, f) in [
        ("rcm", rcm as fn(&chromaflow::mesh::Csr) -> Vec<u32>),
        ("gps", gps),
    ] {
        let t = Instant::now();
        let perm = f(&adj);
        let dt = t.elapsed().as_secs_f64();
        let inv = invert_permutation(&perm);
        println!(
            "  {name}: {dt:.3} s, bandwidth {} (shuffled {}), profile {}",
            bandwidth(&adj, Some(&inv)),
            bandwidth(&adj, None),
            profile(&adj, Some(&inv))
        );
    }
    if let Ok(dir) = std::env::var("CHROMAFLOW_EXPORT_GRAPH") {
        let write = |name: &str, v: &[u32]| {
            let bytes: Vec<u8> = v.iter().flat_map(|x| x.to_le_bytes()).collect();
            std::fs::write(std::path::Path::new(&dir).join(name), bytes).unwrap();
        };
        write("offsets.u32", &adj.offsets);
        write("indices.u32", &adj.indices);
        println!("  exported the element graph to {dir}");
    }
}

/// `mesh` without the elements whose centroid lies in one of three disks (interior holes,
/// and one cut into the boundary), with the remaining elements shuffled.
fn with_holes(mesh: &Mesh) -> Mesh {
    let holes = [([0.3, 0.3], 0.12), ([0.7, 0.6], 0.15), ([1.0, 0.2], 0.1)];
    let mut m = Mesh::new(mesh.dim);
    m.points = mesh.points.clone();
    for e in 0..mesh.num_elements() {
        let v = mesh.element(e);
        let c = v.iter().fold([0.0, 0.0], |a, &i| {
            let p = mesh.points[i as usize];
            [a[0] + p[0] / v.len() as f64, a[1] + p[1] / v.len() as f64]
        });
        let inside = holes
            .iter()
            .any(|(o, r)| (c[0] - o[0]).hypot(c[1] - o[1]) < *r);
        if !inside {
            m.push_element(mesh.kinds[e], v, 1);
        }
    }
    shuffled(&m, 11)
}

/// Meshes for the chain layout: (name, mesh).
fn chain_meshes() -> Vec<(&'static str, Mesh)> {
    vec![
        (
            "rect:20000@1",
            chromaflow::mesh::builtin("rect:20000@1").unwrap(),
        ),
        ("disk:5000", chromaflow::mesh::builtin("disk:5000").unwrap()),
        (
            "dmr 20000",
            chromaflow::solver::dg::Case::double_mach(20000)
                .build_mesh(1)
                .unwrap(),
        ),
        (
            "rect:20000@1 with holes",
            with_holes(&chromaflow::mesh::builtin("rect:20000@1").unwrap()),
        ),
        (
            "shuffled tri_grid 60x40",
            shuffled(&tri_grid(60, 40, Diagonals::Random { seed: 3 }).unwrap(), 5),
        ),
    ]
}

fn locality(o: &OrderedMesh) -> Vec<ColorLocality> {
    color_locality(&o.topo, &o.color_offsets)
}

fn report(name: &str, coloring: &str, o: &OrderedMesh) -> String {
    let per: Vec<String> = locality(o)
        .iter()
        .enumerate()
        .map(|(c, l)| {
            format!(
                "c{c}: coalesced {:.3} sectors/warp {:.1} misses {:.3} bw {}",
                l.coalesced, l.sectors_per_warp, l.sector_misses, l.bandwidth
            )
        })
        .collect();
    format!("{name} [{coloring}] {}: {}", o.ordering, per.join(" | "))
}

/// The chain layout on a 3-colored triangle mesh: Algorithm 5's color-0 layout and every
/// consistency property, plus a coalesced second color group (Algorithm 5 leaves it
/// scattered).
#[test]
fn chain_ordering_coalesces_the_second_color() {
    for (name, mesh) in chain_meshes() {
        let topo = Topology::build(&mesh).unwrap();
        let col = color_faces(&mesh, &topo, &FaceColoringOptions::with_seed(1)).unwrap();
        assert_eq!(col.num_colors, 3, "{name}: GK 3-coloring");
        let alg5 = apply_ordering(&mesh, &topo, &col, Ordering::ColorRenumbered).unwrap();
        let chains = apply_ordering(&mesh, &topo, &col, Ordering::ColorChains).unwrap();
        check_consistent(&mesh, &chains);
        let interior = check_first_group(&chains);
        // Every element is in a color-0 face (the meshes' triangles all have 3 faces).
        assert_eq!(
            chains.faces_of_color(0).len() + interior,
            mesh.num_elements()
        );
        let (a, c) = (locality(&alg5), locality(&chains));
        println!("{}", report(name, "GK 3", &alg5));
        println!("{}", report(name, "GK 3", &chains));
        // Color 0 keeps Algorithm 5's layout: pairs, then its boundary faces.
        assert!(
            c[0].coalesced > 0.95 && c[0].coalesced == a[0].coalesced,
            "{name}"
        );
        // Measured 0.85..0.88 on these meshes (0.896 on the 626K-triangle DMR mesh); with
        // 3 pairs in 7 oriented the wrong way it drops to ~0.2, Algorithm 5 gives 0.05..0.1.
        assert!(
            c[1].coalesced > 0.8,
            "{name}: color 1 coalesced {:.3}",
            c[1].coalesced
        );
        assert!(c[1].coalesced > a[1].coalesced + 0.5, "{name}");
        // Measured ~0.4x.
        assert!(
            c[1].sectors_per_warp < 0.6 * a[1].sectors_per_warp,
            "{name}"
        );
        // Color-1 faces along a chain are (k + 1, N1 + k): the right element is N1 + left - 1
        // (measured: 91..93 % of the group; every pair flipped would give N1 + left + 1).
        let n1 = chains.faces_of_color(0).len() as u32;
        let along = chains
            .faces_of_color(1)
            .filter(|&f| chains.topo.right[f] == n1 + chains.topo.left[f] - 1)
            .count();
        assert!(
            along as f64 > 0.85 * chains.faces_of_color(1).len() as f64,
            "{name}"
        );
    }
}

/// Fallback colorings (4 colors requested, 5-color greedy) and 3D meshes: still a valid,
/// consistent ordering with Algorithm 5's color-0 layout; the second group gains what the
/// pairs allow.
#[test]
fn chain_ordering_with_more_colors() {
    let rect = chromaflow::mesh::builtin("rect:5000@2").unwrap();
    let holes = with_holes(&rect);
    let tet = shuffled(&tet_box(4, 4, 3, TetSplit::Six).unwrap(), 2);
    for (name, mesh) in [("rect:5000@2", &rect), ("holes", &holes), ("tet box", &tet)] {
        let topo = Topology::build(mesh).unwrap();
        let four = FaceColoringOptions {
            num_colors: Some(mesh.max_faces_per_element() + 1),
            ..FaceColoringOptions::with_seed(3)
        };
        let colorings: Vec<(&str, FaceColoring)> = vec![
            ("minimal + 1", color_faces(mesh, &topo, &four).unwrap()),
            ("greedy", greedy_face_coloring(mesh, &topo).unwrap()),
        ];
        for (cname, col) in &colorings {
            let alg5 = apply_ordering(mesh, &topo, col, Ordering::ColorRenumbered).unwrap();
            let chains = apply_ordering(mesh, &topo, col, Ordering::ColorChains).unwrap();
            check_consistent(mesh, &chains);
            check_first_group(&chains);
            println!("{}", report(name, cname, &alg5));
            println!("{}", report(name, cname, &chains));
            let (a, c) = (locality(&alg5), locality(&chains));
            assert!(c[0].coalesced >= a[0].coalesced - 0.05, "{name} {cname}");
            assert!(c[1].coalesced >= a[1].coalesced, "{name} {cname}");
        }
    }
}

/// Chain ordering of a disconnected mesh and of a mesh with one element.
#[test]
fn chain_ordering_degenerate_meshes() {
    let single = tri_grid(1, 1, Diagonals::Uniform).unwrap();
    let mut one = Mesh::new(2);
    one.points = single.points.clone();
    one.push_element(single.kinds[0], single.element(0), 1);
    for mesh in [&single, &one] {
        let o = prepare(mesh, &PrepareOptions::new(Ordering::ColorChains, 1)).unwrap();
        check_consistent(mesh, &o);
    }
}

/// `color_locality` on hand-made groups: a coalesced one, a reversed one, a boundary face.
#[test]
fn color_locality_of_known_layouts() {
    let mut t = Topology::default();
    // Color 0: (k, 64 + k) for k < 64, fully coalesced. Color 1: (k, 64 + 63 - k), right side
    // reversed. Color 2: one boundary face.
    for k in 0..64u32 {
        t.left.push(k);
        t.right.push(64 + k);
    }
    for k in 0..64u32 {
        t.left.push(k);
        t.right.push(127 - k);
    }
    t.left.push(5);
    t.right.push(NO_ELEMENT);
    let l = color_locality(&t, &[0, 64, 128, 129]);
    assert_eq!(l[0].faces, 64);
    assert_eq!(l[0].coalesced, 1.0);
    assert_eq!(l[0].bandwidth, 64);
    // A warp of 32 faces reads 4 sectors per side.
    assert_eq!(l[0].sectors_per_warp, 8.0);
    // Every sector (8 elements) fetched once: 16 sectors for 64 faces.
    assert_eq!(l[0].sector_misses, 0.25);
    assert_eq!(l[1].coalesced, 0.0);
    assert_eq!(l[1].bandwidth, 127);
    assert_eq!(l[1].sectors_per_warp, 8.0);
    assert_eq!(l[1].sector_misses, 0.25);
    assert_eq!((l[2].faces, l[2].coalesced, l[2].bandwidth), (1, 0.0, 0));
    assert_eq!((l[2].sectors_per_warp, l[2].sector_misses), (1.0, 1.0));
    // Consistent with the weaker left/right metric on the coalesced group.
    assert_eq!(coalesced_fraction(&t, &[0, 64]), (1.0, 1.0));
}

/// Locality per color of Algorithm 5 and the chain ordering on the `bench dg` DMR mesh and on
/// meshes of about 1M triangles, with the ordering times. Run with
/// `cargo test --release --test ordering -- --ignored --nocapture chain_locality_large`.
#[test]
#[ignore]
fn chain_locality_large() {
    let meshes = [
        (
            "dmr 627326",
            chromaflow::solver::dg::Case::double_mach(627_326)
                .build_mesh(1)
                .unwrap(),
        ),
        (
            "rect:1000000@1",
            chromaflow::mesh::builtin("rect:1000000@1").unwrap(),
        ),
        (
            "disk:1000000",
            chromaflow::mesh::builtin("disk:1000000").unwrap(),
        ),
    ];
    for (name, mesh) in meshes {
        let topo = Topology::build(&mesh).unwrap();
        let col = color_faces(&mesh, &topo, &FaceColoringOptions::with_seed(1)).unwrap();
        println!(
            "{name}: {} elements, {} faces, {} colors",
            mesh.num_elements(),
            topo.num_faces(),
            col.num_colors
        );
        for ordering in [
            Ordering::ColorRenumbered,
            Ordering::RcmColorGrouped,
            Ordering::ColorChains,
        ] {
            let t = Instant::now();
            let o = apply_ordering(&mesh, &topo, &col, ordering).unwrap();
            let dt = t.elapsed().as_secs_f64();
            println!("  {:.3} s  {}", dt, report(name, "GK 3", &o));
        }
    }
}
