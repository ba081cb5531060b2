//! The smoothing benchmark's pieces, shared by `bench smooth` and `bench backends`: the input
//! (a Delaunay mesh of the unit square with a metric texture, [`bench_input`]) and the timing
//! of one sampling path ([`time_sampling`]).

use super::cpu::positions;
use super::gpu::{GpuSmoother, RunTiming};
use super::{
    MetricSpec, MetricTexture, Sampling, Schedule, SmoothParams, SmoothTopology, TexelPrecision,
};
use crate::error::{Error, Result};
use crate::mesh::{generate, Mesh};

/// What the smoothing benchmark runs on.
pub struct BenchInput {
    /// A Delaunay mesh of the unit square.
    pub mesh: Mesh,
    pub topo: SmoothTopology,
    /// The metric resampled on the texture (no super-sampling).
    pub tex: MetricTexture,
    /// The vertex positions of `mesh`, every timing's start.
    pub start: Vec<[f64; 2]>,
}

/// The smoothing benchmark's input for about `n` vertices: a Delaunay mesh of the unit square
/// (about 2 triangles per vertex), its topology, and metric `metric` resampled on a
/// `texture_size` texture.
pub fn bench_input(n: usize, metric: &str, texture_size: u32) -> Result<BenchInput> {
    if n < 3 {
        return Err(Error::Invalid(format!("mesh size {n} is too small")));
    }
    let mesh = generate::rectangle(0.0, 1.0, 0.0, 1.0, 2 * n, 1)?;
    let topo = SmoothTopology::build(&mesh)?;
    let spec = MetricSpec::resolve(Some(metric), None, &mesh)?;
    let tex = MetricTexture::from_spec(&spec, &mesh, texture_size, 1)?;
    let start = positions(&mesh);
    Ok(BenchInput {
        mesh,
        topo,
        tex,
        start,
    })
}

/// What [`time_sampling`] measured.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SamplingTiming {
    pub timing: RunTiming,
    /// Vertices moved per iteration.
    pub free_vertices: usize,
    /// Precision of the texels the kernel read.
    pub precision: TexelPrecision,
    /// Iterations timed.
    pub iterations: usize,
}

impl SamplingTiming {
    /// Vertex updates per second of wall time.
    pub fn updates_per_second(&self) -> f64 {
        (self.free_vertices * self.iterations) as f64 / self.timing.wall_seconds
    }
}

/// Time `iterations` sweeps of one sampling path on `rt`, from `start`, after one warm-up
/// sweep (pipeline compilation and first-touch costs stay out of the timing).
#[allow(clippy::too_many_arguments)]
pub fn time_sampling(
    rt: &crate::runtime::Runtime,
    topo: &SmoothTopology,
    schedule: &Schedule,
    tex: &MetricTexture,
    sampling: Sampling,
    params: &SmoothParams,
    start: &[[f64; 2]],
    iterations: usize,
) -> Result<SamplingTiming> {
    let mut g = GpuSmoother::new(rt, topo, schedule, tex, sampling, params, start)?;
    g.run(1)?;
    g.set_positions(start)?;
    let timing = g.run(iterations)?;
    Ok(SamplingTiming {
        timing,
        free_vertices: g.free_vertices(),
        precision: g.precision(),
        iterations,
    })
}
