//! Orderings: permutations, consistency of the permuted mesh/topology/coloring, bandwidth,
//! and the GK Algorithm 5 layout.

use chromaflow::color::{check_face_coloring, color_faces, FaceColoringOptions};
use chromaflow::mesh::generate3d::{
    hybrid_box, quad_grid, sphere, tet_box, tri_grid, Diagonals, TetSplit,
};
use chromaflow::mesh::{Mesh, Topology, NO_ELEMENT};
use chromaflow::order::{
    apply_ordering, bandwidth, coalesced_fraction, gps, invert_permutation, is_permutation,
    order_mesh, profile, rcm, Ordering,
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
            let o = order_mesh(mesh, ordering, 7).unwrap();
            assert_eq!(o.ordering, ordering);
            check_consistent(mesh, &o);
        }
    }
}

/// GK Algorithm 5 layout: color-0 face k has left element k and (if interior) right element
/// N1 + k; the other color groups are sorted by ascending left element.
fn check_algorithm5_layout(o: &chromaflow::order::OrderedMesh) {
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
    // Minimal coloring of a single-kind mesh: color 0 numbers every element.
    assert_eq!(n1 + interior, o.mesh.num_elements());
    for c in 1..o.coloring.num_colors {
        let r = o.faces_of_color(c);
        let lefts: Vec<u32> = r.map(|f| o.topo.left[f]).collect();
        assert!(lefts.windows(2).all(|w| w[0] < w[1]));
    }
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
        ] {
            let o = order_mesh(mesh, ordering, 3).unwrap();
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
        let o = order_mesh(&mesh, Ordering::Rcm, 1).unwrap();
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
        check_consistent(&m, &order_mesh(&m, ordering, 1).unwrap());
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
    for ordering in [Ordering::ColorRenumbered, Ordering::Rcm, Ordering::Gps] {
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
