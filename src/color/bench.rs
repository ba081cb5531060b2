//! The vertex-coloring benchmark, shared by `bench color` and `bench backends`: the graph of a
//! Delaunay mesh of the unit square ([`bench_graph`]) or a random geometric graph
//! ([`random_geometric_graph`], a general graph of uneven degrees), the sequential greedy
//! coloring ([`time_greedy_coloring`]) and the GPU speculative coloring
//! ([`time_gpu_coloring`]) timed as medians of repeated runs.

use super::gpu_vertices::{color_vertices_gpu_with, GpuColoringVariant, GpuVertexColoring};
use super::reduce::ColorReduction;
use super::vertices::{check_vertex_coloring, color_vertices, VertexOrder};
use crate::error::{Error, Result};
use crate::mesh::io::adjacency_from_edges;
use crate::mesh::{generate, Csr, Mesh, Topology};
use crate::runtime::{median, Runtime};
use rand::{Rng, SeedableRng};
use std::time::Instant;

/// A Delaunay mesh of the unit square with about `triangles` triangles (about half as many
/// vertices) and its topology, whose `vertex_neighbors` is the graph to color.
pub fn bench_graph(triangles: usize) -> Result<(Mesh, Topology)> {
    let mesh = generate::rectangle(0.0, 1.0, 0.0, 1.0, triangles, 1)?;
    let topo = Topology::build(&mesh)?;
    Ok((mesh, topo))
}

/// A random geometric graph: `n` points uniform in the unit cube, joined when closer than the
/// radius that gives `degree` neighbours on average away from the boundary. Its degrees vary
/// (Poisson) unlike a mesh's; vertices are numbered cell by cell of a grid of that radius, the
/// locality a file from a mesh or a reordered matrix has.
pub fn random_geometric_graph(n: usize, degree: f64, seed: u64) -> Result<Csr> {
    if n == 0 || n >= u32::MAX as usize || !(degree > 0.0 && degree < n as f64) {
        return Err(Error::Invalid(format!(
            "random geometric graph: {n} vertices and mean degree {degree} are out of range"
        )));
    }
    let r = (3.0 * degree / (4.0 * std::f64::consts::PI * n as f64)).cbrt();
    // Cells no smaller than r (neighbours lie in adjacent cells), no more cells than points.
    let m = ((1.0 / r).floor() as usize).clamp(1, (n as f64).cbrt().ceil() as usize);
    let cell = |p: &[f64; 3]| p.map(|c| ((c * m as f64) as usize).min(m - 1));
    let index = |c: [usize; 3]| (c[2] * m + c[1]) * m + c[0];
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let mut pts: Vec<[f64; 3]> = (0..n).map(|_| rng.random::<[f64; 3]>()).collect();
    pts.sort_by_key(|p| index(cell(p)));
    let mut start = vec![0usize; m * m * m + 1];
    for p in &pts {
        start[index(cell(p)) + 1] += 1;
    }
    for i in 0..m * m * m {
        start[i + 1] += start[i];
    }
    let mut edges = Vec::with_capacity(n * degree.ceil() as usize / 2);
    for (i, p) in pts.iter().enumerate() {
        let c = cell(p);
        for dz in 0..3 {
            for dy in 0..3 {
                for dx in 0..3 {
                    let q = [c[0] + dx, c[1] + dy, c[2] + dz];
                    if q.iter().any(|&k| k == 0 || k > m) {
                        continue;
                    }
                    let k = index(q.map(|k| k - 1));
                    for j in (start[k]..start[k + 1]).filter(|&j| j > i) {
                        let d2: f64 = (0..3).map(|a| (p[a] - pts[j][a]).powi(2)).sum();
                        if d2 < r * r {
                            edges.push((i as u32, j as u32));
                        }
                    }
                }
            }
        }
    }
    adjacency_from_edges(n, edges)
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

/// Color `graph` on `rt` with `variant` and `reduction`: a checked warm-up run (pipeline
/// compilation, first-touch), then the median seconds of `repeat` runs, with the last run's
/// coloring.
pub fn time_gpu_coloring(
    rt: &Runtime,
    graph: &Csr,
    variant: GpuColoringVariant,
    reduction: &ColorReduction,
    repeat: usize,
) -> Result<(GpuVertexColoring, f64)> {
    let warm = color_vertices_gpu_with(rt, graph, None, variant, reduction)?;
    check_vertex_coloring(graph, &warm.colors, None).map_err(Error::Invalid)?;
    let mut last = warm;
    let s = median_time(repeat, || {
        last = color_vertices_gpu_with(rt, graph, None, variant, reduction)?;
        Ok(last.seconds)
    })?;
    Ok((last, s))
}
