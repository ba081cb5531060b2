//! GPU prefix sum against its CPU reference, and the GPU speculative vertex coloring (both
//! variants) checked conflict-free, with class separation, against the sequential greedy count.

use chromaflow::color::gpu_vertices::{color_vertices_gpu, GpuColoringVariant};
use chromaflow::color::vertices::{check_vertex_coloring, color_vertices, VertexOrder};
use chromaflow::mesh::{generate, Csr, Topology};
use chromaflow::runtime::scan::{exclusive_scan_cpu, gpu_exclusive_scan};
use chromaflow::runtime::Runtime;

fn rt() -> Runtime {
    Runtime::wgpu().expect("a GPU adapter is required (CI: lavapipe)")
}

/// No edge joins two vertices of one color; classes use disjoint colors.
fn assert_proper(adj: &Csr, colors: &[u32], class: Option<&[u32]>) {
    for v in 0..adj.num_rows() {
        for &u in adj.row(v) {
            assert_ne!(
                colors[v], colors[u as usize],
                "vertices {v} and {u} share a color"
            );
        }
    }
    if let Some(class) = class {
        for v in 0..colors.len() {
            for w in 0..colors.len() {
                if class[v] != class[w] {
                    assert_ne!(colors[v], colors[w], "classes share color {}", colors[v]);
                }
            }
        }
    }
}

#[test]
fn prefix_sum_matches_cpu_at_every_level_count() {
    let rt = rt();
    for n in [1usize, 5, 256, 257, 65_536, 65_537, 1_000_003] {
        let values: Vec<u32> = (0..n)
            .map(|i| ((i * 2_654_435_761) >> 7) as u32 % 3)
            .collect();
        let (gpu, total) = gpu_exclusive_scan(&rt, &values).unwrap();
        let cpu = exclusive_scan_cpu(&values);
        assert_eq!(gpu.len(), n);
        if let Some(i) = (0..n).find(|&i| gpu[i] != cpu[i]) {
            panic!(
                "n = {n}: first mismatch at {i}: gpu {} cpu {}",
                gpu[i], cpu[i]
            );
        }
        assert_eq!(total, values.iter().sum::<u32>(), "n = {n}");
    }
}

#[test]
fn speculative_coloring_is_conflict_free_in_both_variants() {
    let rt = rt();
    let mesh = generate::builtin("rect:20000@3").unwrap();
    let topo = Topology::build(&mesh).unwrap();
    let adj = &topo.vertex_neighbors;
    let greedy = color_vertices(adj, VertexOrder::Natural, None)
        .unwrap()
        .num_colors;
    for variant in [GpuColoringVariant::Topology, GpuColoringVariant::Data] {
        let res = color_vertices_gpu(&rt, adj, None, variant).unwrap();
        assert_proper(adj, &res.colors, None);
        check_vertex_coloring(adj, &res.colors, None).unwrap();
        assert_eq!(*res.conflicts_per_round.last().unwrap(), 0);
        // Li et al. report at most a few percent more colors than sequential greedy.
        assert!(
            res.num_colors as f64 <= 1.1 * greedy as f64 + 1.0,
            "{variant:?}: {} colors vs greedy {greedy}",
            res.num_colors
        );
    }
}

#[test]
fn boundary_vertices_get_color_classes_of_their_own() {
    let rt = rt();
    let mesh = generate::builtin("disk:3000@1").unwrap();
    let topo = Topology::build(&mesh).unwrap();
    let class: Vec<u32> = topo
        .boundary_vertices(mesh.num_points())
        .iter()
        .map(|&b| b as u32)
        .collect();
    let res = color_vertices_gpu(
        &rt,
        &topo.vertex_neighbors,
        Some(&class),
        GpuColoringVariant::Data,
    )
    .unwrap();
    assert_proper(&topo.vertex_neighbors, &res.colors, Some(&class));
    let used: std::collections::BTreeSet<u32> = res.colors.iter().copied().collect();
    assert_eq!(
        used.len(),
        res.num_colors,
        "colors are numbered without gaps"
    );
}

#[test]
fn mismatched_class_length_is_an_error() {
    let rt = rt();
    let adj = Csr::from_pairs(3, &[(0, 1), (1, 0), (1, 2), (2, 1)]);
    assert!(color_vertices_gpu(&rt, &adj, Some(&[0, 1]), GpuColoringVariant::Data).is_err());
    let res = color_vertices_gpu(&rt, &adj, None, GpuColoringVariant::Topology).unwrap();
    assert_proper(&adj, &res.colors, None);
    assert_eq!(res.num_colors, 2);
}
