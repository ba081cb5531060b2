//! Kernels built without wgpu's runtime checks (`--trusted-kernels`) give the same results as
//! the checked build. Its own test binary: the switch is process-wide.

use chromaflow::color::gpu_vertices::{color_vertices_gpu, GpuColoringVariant};
use chromaflow::color::vertices::check_vertex_coloring;
use chromaflow::mesh::{generate, Geometry2d, Topology};
use chromaflow::order::{prepare, Ordering, PrepareOptions};
use chromaflow::runtime::scan::{exclusive_scan_cpu, gpu_exclusive_scan};
use chromaflow::runtime::shaders::{set_trusted_kernels, trusted_kernels};
use chromaflow::runtime::Runtime;
use chromaflow::solver::gradient::{gpu_edges, GradientKernel};

#[test]
fn unchecked_kernels_match_checked_kernels() {
    let rt = Runtime::wgpu().expect("a GPU adapter is required");
    let mesh = generate::builtin("rect:3000@2").unwrap();
    let ordered = prepare(&mesh, &PrepareOptions::new(Ordering::Rcm, 0)).unwrap();
    let geom = Geometry2d::build(&ordered.mesh, &ordered.topo);
    let faces: Vec<u32> = (0..ordered.topo.num_faces() as u32).collect();
    let offsets: Vec<u32> = ordered.color_offsets.iter().map(|&o| o as u32).collect();
    let edges = gpu_edges(&ordered.topo, &geom, &faces);
    let values: Vec<f32> = geom
        .centroids
        .iter()
        .map(|c| (3.0 * c[0]).sin() as f32 + c[1] as f32)
        .collect();
    let scan_input: Vec<u32> = (0..70_000u32).map(|i| (i * 7) % 3).collect();
    let topo = Topology::build(&mesh).unwrap();

    let mut results = Vec::new();
    for trusted in [false, true] {
        set_trusted_kernels(trusted);
        assert_eq!(trusted_kernels(), trusted);
        let grad = GradientKernel::new(&rt)
            .unwrap()
            .run(&rt, &edges, &offsets, &values)
            .unwrap();
        let (scan, total) = gpu_exclusive_scan(&rt, &scan_input).unwrap();
        assert_eq!(scan, exclusive_scan_cpu(&scan_input), "trusted = {trusted}");
        assert_eq!(total, scan_input.iter().sum::<u32>());
        let coloring =
            color_vertices_gpu(&rt, &topo.vertex_neighbors, None, GpuColoringVariant::Data)
                .unwrap();
        check_vertex_coloring(&topo.vertex_neighbors, &coloring.colors, None).unwrap();
        rt.wait().unwrap();
        results.push(grad);
    }
    // Same kernel, same inputs, same order of operations: bitwise equal.
    assert_eq!(results[0], results[1]);
}
