//! The vertex-coloring benchmark, shared by `bench color` and `bench backends`: the graph of a
//! Delaunay mesh of the unit square ([`bench_graph`]), the sequential greedy coloring
//! ([`time_greedy_coloring`]) and the GPU speculative coloring ([`time_gpu_coloring`]) timed
//! as medians of repeated runs.

use super::gpu_vertices::{color_vertices_gpu, GpuColoringVariant, GpuVertexColoring};
use super::vertices::{check_vertex_coloring, color_vertices, VertexOrder};
use crate::error::{Error, Result};
use crate::mesh::{generate, Csr, Mesh, Topology};
use crate::runtime::{median, Runtime};
use std::time::Instant;

/// A Delaunay mesh of the unit square with about `triangles` triangles (about half as many
/// vertices) and its topology, whose `vertex_neighbors` is the graph to color.
pub fn bench_graph(triangles: usize) -> Result<(Mesh, Topology)> {
    let mesh = generate::rectangle(0.0, 1.0, 0.0, 1.0, triangles, 1)?;
    let topo = Topology::build(&mesh)?;
    Ok((mesh, topo))
}

/// Median of `repeat` (at least 1) timings that `f` returns.
pub fn median_time(repeat: usize, mut f: impl FnMut() -> Result<f64>) -> Result<f64> {
    let mut t = Vec::with_capacity(repeat);
    for _ in 0..repeat.max(1) {
        t.push(f()?);
    }
    Ok(median(&t))
}

/// The sequential greedy coloring (natural order) of `graph`: its number of colors and the
/// median seconds of `repeat` runs.
pub fn time_greedy_coloring(graph: &Csr, repeat: usize) -> Result<(usize, f64)> {
    let mut colors = 0;
    let s = median_time(repeat, || {
        let t = Instant::now();
        let c = color_vertices(graph, VertexOrder::Natural, None)?;
        colors = c.num_colors;
        Ok(t.elapsed().as_secs_f64())
    })?;
    Ok((colors, s))
}

/// Color `graph` on `rt` with `variant`: a checked warm-up run (pipeline compilation,
/// first-touch), then the median seconds of `repeat` runs, with the last run's coloring.
pub fn time_gpu_coloring(
    rt: &Runtime,
    graph: &Csr,
    variant: GpuColoringVariant,
    repeat: usize,
) -> Result<(GpuVertexColoring, f64)> {
    let warm = color_vertices_gpu(rt, graph, None, variant)?;
    check_vertex_coloring(graph, &warm.colors, None).map_err(Error::Invalid)?;
    let mut last = warm;
    let s = median_time(repeat, || {
        last = color_vertices_gpu(rt, graph, None, variant)?;
        Ok(last.seconds)
    })?;
    Ok((last, s))
}
