//! Criterion benchmarks of the CPU coloring and ordering machinery: GK face coloring (with the
//! forced-first greedy and with GK's plain order), the first-fit baseline, Algorithm 5
//! renumbering, full ordering application, RCM and GPS, and greedy vertex coloring.
//!
//! Meshes are mid-sized (about 0.5M faces) so the whole bench runs in a couple of minutes;
//! the full-size targets (5.7M edges, 1.1M-edge sphere) are timed by the ignored tests
//! `timing_large_meshes` (tests/coloring.rs) and `timing_large_mesh` (tests/ordering.rs).

use chromaflow::color::{
    color_faces, color_vertices, greedy_face_coloring, FaceColoringOptions, VertexOrder,
};
use chromaflow::mesh::generate3d::{sphere, tet_box, tri_grid, Diagonals, TetSplit};
use chromaflow::mesh::Topology;
use chromaflow::order::{apply_ordering, color_renumbering, gps, rcm, Ordering};
use criterion::{criterion_group, criterion_main, Criterion};
use std::hint::black_box;

fn face_coloring(c: &mut Criterion) {
    let mut g = c.benchmark_group("face_coloring");
    g.sample_size(10);
    let tri = tri_grid(400, 400, Diagonals::Random { seed: 1 }).expect("mesh");
    let tri_topo = Topology::build(&tri).expect("topology");
    let sph = sphere(60, 0.3, 1).expect("mesh");
    let sph_topo = Topology::build(&sph).expect("topology");
    let tet = tet_box(30, 30, 30, TetSplit::Six).expect("mesh");
    let tet_topo = Topology::build(&tet).expect("topology");
    let plain = |seed| FaceColoringOptions {
        propagate: false,
        ..FaceColoringOptions::with_seed(seed)
    };
    g.bench_function("gk_triangles_480k_edges", |b| {
        b.iter(|| color_faces(&tri, &tri_topo, &FaceColoringOptions::with_seed(1)).expect("ok"))
    });
    g.bench_function("gk_plain_order_triangles_480k_edges", |b| {
        b.iter(|| color_faces(&tri, &tri_topo, &plain(1)).expect("ok"))
    });
    g.bench_function("greedy_first_fit_triangles_480k_edges", |b| {
        b.iter(|| greedy_face_coloring(&tri, &tri_topo).expect("ok"))
    });
    g.bench_function("gk_sphere_108k_edges", |b| {
        b.iter(|| color_faces(&sph, &sph_topo, &FaceColoringOptions::with_seed(1)).expect("ok"))
    });
    g.bench_function("gk_plain_order_sphere_108k_edges", |b| {
        b.iter(|| color_faces(&sph, &sph_topo, &plain(1)).expect("ok"))
    });
    g.bench_function("gk_tets_340k_faces", |b| {
        b.iter(|| color_faces(&tet, &tet_topo, &FaceColoringOptions::with_seed(1)).expect("ok"))
    });
    g.finish();
}

fn ordering(c: &mut Criterion) {
    let mut g = c.benchmark_group("ordering");
    g.sample_size(10);
    let tri = tri_grid(400, 400, Diagonals::Random { seed: 2 }).expect("mesh");
    let topo = Topology::build(&tri).expect("topology");
    let col = color_faces(&tri, &topo, &FaceColoringOptions::with_seed(1)).expect("coloring");
    let ne = tri.num_elements();
    let adj = topo.element_adjacency(ne);
    g.bench_function("algorithm5_renumbering_480k_edges", |b| {
        b.iter(|| color_renumbering(&topo, ne, &col.colors, col.num_colors, None).expect("ok"))
    });
    g.bench_function("apply_color_ordering_480k_edges", |b| {
        b.iter(|| apply_ordering(&tri, &topo, &col, Ordering::ColorRenumbered).expect("ok"))
    });
    g.bench_function("rcm_320k_elements", |b| b.iter(|| rcm(black_box(&adj))));
    g.bench_function("gps_320k_elements", |b| b.iter(|| gps(black_box(&adj))));
    g.finish();
}

fn vertex_coloring(c: &mut Criterion) {
    let mut g = c.benchmark_group("vertex_coloring");
    g.sample_size(10);
    let tri = tri_grid(400, 400, Diagonals::Random { seed: 3 }).expect("mesh");
    let topo = Topology::build(&tri).expect("topology");
    let boundary = topo.boundary_vertices(tri.num_points());
    for order in [VertexOrder::Natural, VertexOrder::SmallestLast] {
        g.bench_function(format!("{order:?}_160k_vertices"), |b| {
            b.iter(|| color_vertices(&topo.vertex_neighbors, order, Some(&boundary)).expect("ok"))
        });
    }
    g.finish();
}

criterion_group!(benches, face_coloring, ordering, vertex_coloring);
criterion_main!(benches);
