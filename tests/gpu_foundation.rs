//! The GPU foundation on whatever adapter is present (lavapipe in CI): context creation,
//! per-color edge scatter against its f64 CPU reference, the min-reduction across 2D grids,
//! and the binding-size guard. These tests fail (not skip) when no adapter exists.

use chromaflow::mesh::{ElementKind, Geometry2d, Mesh, Topology};
use chromaflow::runtime::reduce::gpu_min;
use chromaflow::runtime::wgpu::context::{GpuContext, GpuOptions};
use chromaflow::runtime::wgpu::dispatch::grid_for;
use chromaflow::runtime::Runtime;
use chromaflow::solver::gradient::{gpu_edges, weighted_gradient_cpu, GradientKernel};

fn rt() -> Runtime {
    Runtime::wgpu().expect("a GPU adapter is required (CI: lavapipe)")
}

fn ctx() -> GpuContext {
    GpuContext::new(&GpuOptions::default()).expect("a GPU adapter is required (CI: lavapipe)")
}

/// n x n squares, each split along a diagonal whose direction alternates, slightly distorted.
fn grid_mesh(n: usize) -> Mesh {
    let mut m = Mesh::new(2);
    for j in 0..=n {
        for i in 0..=n {
            let (x, y) = (i as f64 / n as f64, j as f64 / n as f64);
            let wobble = if i % n == 0 || j % n == 0 {
                0.0
            } else {
                0.2 / n as f64
            };
            m.points
                .push([x + wobble * ((7 * i + 3 * j) % 5) as f64 / 5.0, y, 0.0]);
        }
    }
    let v = |i: usize, j: usize| (j * (n + 1) + i) as u32;
    for j in 0..n {
        for i in 0..n {
            let (a, b, c, d) = (v(i, j), v(i + 1, j), v(i + 1, j + 1), v(i, j + 1));
            if (i + j) % 2 == 0 {
                m.push_element(ElementKind::Triangle, &[a, b, c], 1);
                m.push_element(ElementKind::Triangle, &[a, c, d], 1);
            } else {
                m.push_element(ElementKind::Triangle, &[a, b, d], 1);
                m.push_element(ElementKind::Triangle, &[b, c, d], 1);
            }
        }
    }
    m
}

/// Greedy face coloring (first free color per face), grouped: (face order, offsets).
fn greedy_colored_faces(topo: &Topology, ne: usize) -> (Vec<u32>, Vec<u32>) {
    let mut used = vec![0u32; ne];
    let mut color = vec![0u32; topo.num_faces()];
    for f in 0..topo.num_faces() {
        let mut mask = used[topo.left[f] as usize];
        if !topo.is_boundary(f) {
            mask |= used[topo.right[f] as usize];
        }
        let c = (!mask).trailing_zeros();
        color[f] = c;
        used[topo.left[f] as usize] |= 1 << c;
        if !topo.is_boundary(f) {
            used[topo.right[f] as usize] |= 1 << c;
        }
    }
    let nc = *color.iter().max().unwrap() as usize + 1;
    let mut order: Vec<u32> = (0..topo.num_faces() as u32).collect();
    order.sort_by_key(|&f| color[f as usize]);
    let mut offsets = vec![0u32; nc + 1];
    for &c in &color {
        offsets[c as usize + 1] += 1;
    }
    for c in 0..nc {
        offsets[c + 1] += offsets[c];
    }
    (order, offsets)
}

#[test]
fn adapter_is_found_and_reports_limits() {
    let ctx = ctx();
    let s = ctx.summary();
    assert!(!s.name.is_empty());
    assert!(s.max_storage_buffer_binding_size >= 128 << 20);
    assert!(s.max_compute_workgroups_per_dimension >= 65535);
}

#[test]
fn colored_gradient_matches_cpu_reference_and_telescopes() {
    let rt = rt();
    let mesh = grid_mesh(24);
    let topo = Topology::build(&mesh).unwrap();
    let geom = Geometry2d::build(&mesh, &topo);
    let (order, offsets) = greedy_colored_faces(&topo, mesh.num_elements());
    // u = 2x - 3y + 1 evaluated at centroids.
    let values: Vec<f64> = geom
        .centroids
        .iter()
        .map(|c| 2.0 * c[0] - 3.0 * c[1] + 1.0)
        .collect();
    let cpu = weighted_gradient_cpu(&topo, &geom, &values);
    let values32: Vec<f32> = values.iter().map(|&v| v as f32).collect();
    let kernel = GradientKernel::new(&rt).unwrap();
    let gpu = kernel
        .run(&rt, &gpu_edges(&topo, &geom, &order), &offsets, &values32)
        .unwrap();
    // Each entry sums at most 3 terms of size ~|u| * h; f32 rounding gives ~1e-7 relative.
    for (i, (g, c)) in gpu.iter().zip(&cpu).enumerate() {
        for d in 0..2 {
            let tol = 1e-5 * (1.0 + c[d].abs());
            assert!(
                (g[d] as f64 - c[d]).abs() <= tol,
                "cell {i} dim {d}: gpu {} cpu {}",
                g[d],
                c[d]
            );
        }
    }
    // Interior terms cancel pairwise (+ on the left cell, - on the right), so the GPU's total
    // must equal the boundary sum  sum_{boundary f} u_L n_f l_f  computed directly.
    let mut boundary = [0.0f64; 2];
    for f in 0..topo.num_faces() {
        if topo.is_boundary(f) {
            let u = values[topo.left[f] as usize] * geom.lengths[f];
            boundary[0] += u * geom.normals[f][0];
            boundary[1] += u * geom.normals[f][1];
        }
    }
    let total = gpu
        .iter()
        .fold([0.0f64; 2], |s, g| [s[0] + g[0] as f64, s[1] + g[1] as f64]);
    for d in 0..2 {
        assert!(
            (total[d] - boundary[d]).abs() < 1e-4 * (1.0 + boundary[d].abs()),
            "dim {d}: sum of gradients {} vs boundary integral {}",
            total[d],
            boundary[d]
        );
    }
}

#[test]
fn colored_dispatch_is_deterministic_and_offsets_are_checked() {
    let rt = rt();
    let mesh = grid_mesh(16);
    let topo = Topology::build(&mesh).unwrap();
    let geom = Geometry2d::build(&mesh, &topo);
    let (order, offsets) = greedy_colored_faces(&topo, mesh.num_elements());
    let values: Vec<f32> = (0..mesh.num_elements()).map(|i| (i % 7) as f32).collect();
    let kernel = GradientKernel::new(&rt).unwrap();
    let edges = gpu_edges(&topo, &geom, &order);
    let a = kernel.run(&rt, &edges, &offsets, &values).unwrap();
    let b = kernel.run(&rt, &edges, &offsets, &values).unwrap();
    assert_eq!(a, b);
    assert!(kernel.run(&rt, &edges, &[0, 3], &values).is_err());
}

#[test]
fn min_reduction_spans_multiple_passes_and_2d_grids() {
    let rt = rt();
    // 5M values: 19532 workgroups in pass one, then 77, then 1.
    let n = 5_000_000;
    let mut values: Vec<f32> = (0..n as u64)
        .map(|i| 1.0 + ((i * 7919) % 1000) as f32)
        .collect();
    values[4_321_987] = -2.5;
    assert_eq!(gpu_min(&rt, &values).unwrap(), -2.5);
    assert_eq!(gpu_min(&rt, &[3.0]).unwrap(), 3.0);
    assert_eq!(gpu_min(&rt, &[3.0, 1.0, 2.0]).unwrap(), 1.0);
}

#[test]
fn grids_spill_into_y_past_the_per_dimension_limit() {
    assert_eq!(grid_for(64, 64, 65535).unwrap(), (1, 1));
    assert_eq!(grid_for(65535 * 64, 64, 65535).unwrap(), (65535, 1));
    assert_eq!(grid_for(65535 * 64 + 1, 64, 65535).unwrap(), (65535, 2));
    assert!(grid_for(u32::MAX, 1, 65535).is_err());
}

#[test]
fn oversized_buffers_are_an_error_naming_the_limit() {
    let ctx = ctx();
    let max = ctx.limits.max_storage_buffer_binding_size;
    let err = ctx
        .check_binding_size("cell states", max + 1)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("cell states") && err.contains("max_storage_buffer_binding_size"),
        "{err}"
    );
    assert!(ctx.check_binding_size("cell states", max).is_ok());
}

/// The pipeline cache is written when a runtime that compiled kernels is dropped, loaded by
/// the next one, and a corrupt file is ignored (the kernels still build) and rewritten.
#[test]
fn pipeline_cache_is_saved_reused_and_survives_corruption() {
    use chromaflow::runtime::BackendKind;
    let dir = tempfile::tempdir().expect("temp dir");
    let opts = GpuOptions {
        pipeline_cache: Some(dir.path().to_path_buf()),
        ..GpuOptions::default()
    };
    let build = || {
        let rt = Runtime::new(BackendKind::Wgpu, &opts).expect("runtime");
        rt.kernel("scan_add", &[]).expect("kernel");
        rt.kernel("reduce_min", &[]).expect("kernel");
    };
    let files = || -> Vec<std::path::PathBuf> {
        std::fs::read_dir(dir.path())
            .expect("cache dir")
            .map(|e| e.expect("entry").path())
            .collect()
    };
    build();
    let written = files();
    assert_eq!(written.len(), 1, "{written:?}");
    let name = written[0]
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    assert!(name.starts_with("wgpu_pipeline_cache_vulkan_") && name.ends_with(".bin"));
    let good = std::fs::read(&written[0]).expect("cache file");
    build();
    assert_eq!(files(), written, "a second start reuses the same file");
    std::fs::write(&written[0], b"not a pipeline cache").expect("corrupt");
    build();
    assert_eq!(std::fs::read(&written[0]).expect("rewritten"), good);
}

#[test]
fn unknown_adapter_name_is_a_clear_error() {
    let err = GpuContext::new(&GpuOptions {
        adapter: Some("no-such-gpu-xyz".into()),
        ..GpuOptions::default()
    })
    .err()
    .expect("must fail")
    .to_string();
    assert!(
        err.contains("no-such-gpu-xyz") && err.contains("available"),
        "{err}"
    );
}

#[test]
fn invalid_gpu_use_is_an_error_not_a_panic() {
    let ctx = ctx();
    // A query set beyond wgpu's limit is a validation error outside any error scope.
    let _set = ctx.device.create_query_set(&wgpu::QuerySetDescriptor {
        label: Some("too many"),
        ty: wgpu::QueryType::Occlusion,
        count: wgpu::QUERY_SET_MAX_QUERIES + 1,
    });
    let err = ctx.wait().unwrap_err().to_string();
    assert!(err.contains("QuerySet") || err.contains("queries"), "{err}");
    assert!(ctx.wait().is_ok(), "the error is reported once");
}
