//! Coloring from Rust: the faces of a small Delaunay mesh colored with the Giuliani–Krivodonova
//! algorithm and the mesh reordered for the GPU (GK Algorithm 5), then the vertices colored on
//! the default adapter with the speculative GPU coloring. Both colorings are checked to be
//! proper (no two faces of an element, no two neighbouring vertices share a color).
//!
//! `cargo run --example color`; `cargo test --example color` runs it as a test.

use chromaflow::color::gpu_vertices::{color_vertices_gpu, GpuColoringVariant};
use chromaflow::color::{check_face_coloring, check_vertex_coloring};
use chromaflow::error::{Error, Result};
use chromaflow::mesh::{generate, Topology};
use chromaflow::order::{prepare, Ordering, PrepareOptions};
use chromaflow::runtime::Runtime;

fn main() -> Result<()> {
    let mesh = generate::builtin("rect:2000")?;
    let ordered = prepare(&mesh, &PrepareOptions::new(Ordering::ColorRenumbered, 1))?;
    let faces = &ordered.coloring;
    check_face_coloring(&ordered.topo, &faces.colors)
        .map_err(|e| Error::Invalid(format!("face coloring: {e}")))?;
    let per_color: Vec<String> = faces.counts.iter().map(|c| c.to_string()).collect();
    println!(
        "faces: {} elements, {} faces in {} colors ({} per color){}, element bandwidth {}",
        ordered.mesh.num_elements(),
        ordered.topo.num_faces(),
        faces.num_colors,
        per_color.join(" / "),
        if faces.fallback { ", fallback" } else { "" },
        ordered.bandwidth()
    );

    let topo = Topology::build(&ordered.mesh)?;
    let graph = &topo.vertex_neighbors;
    let rt = Runtime::wgpu()?;
    let vertices = color_vertices_gpu(&rt, graph, None, GpuColoringVariant::Data)?;
    check_vertex_coloring(graph, &vertices.colors, None)
        .map_err(|e| Error::Invalid(format!("vertex coloring: {e}")))?;
    let used = vertices.colors.iter().max().map_or(0, |&c| c as usize + 1);
    let mut counts = vec![0usize; used.max(vertices.num_colors)];
    for &c in &vertices.colors {
        counts[c as usize] += 1;
    }
    let per_color: Vec<String> = counts.iter().map(|c| c.to_string()).collect();
    println!(
        "vertices: {} in {} colors ({} per color) after {} speculative rounds on {}",
        ordered.mesh.num_points(),
        vertices.num_colors,
        per_color.join(" / "),
        vertices.rounds,
        rt.name()
    );
    Ok(())
}

#[test]
fn example_runs() {
    main().unwrap();
}
