//! The shallow-water benchmark (Test 1 of the paper), shared by `bench swe` and
//! `bench backends`: the meshes ([`bench_mesh`]), one configuration timed on a device
//! ([`bench_config`]: the whole run on the wall clock, then the flux pass and the update chain
//! on the device's timers) and two bytes-moved models behind its effective bandwidths.
//!
//! Kernel-traffic model (f32; the traffic of each kernel if every load missed cache):
//! * edge scatter, per step: interior edge 224 B (edge record 32, two cells 2·32, two
//!   accumulator read-modify-writes 2·64), boundary edge 128 B (32 + 32 + 64);
//! * cell gather, per step: per cell 16 B (edge slots) + 32 B (accumulator store), per edge
//!   visit 32 B (edge) + 32 B per cell read (two for interior edges); interior edges are
//!   visited twice;
//! * update part, per cell and step: 36 B local Δt (acc vec4 16, cell vec4 16, Δt 4), 4 B
//!   reduction, 128 B update (cell and accumulator read, cell written, accumulator cleared);
//! * fused step, per step: per cell 80 B (own state 32 read, 32 written, edge slots 16), per
//!   edge visit 32 B (edge) + 32 B for the neighbour's state (interior edges, visited twice);
//!   the clock kernel's few words are not counted.
//!
//! Compulsory model ([`min_step_bytes`]): every buffer a kernel touches counted once per read
//! and once per write, as if the caches held everything else (neighbour states, the second
//! visit of an edge): the state read once and written once plus the static geometry for the
//! fused step, 80 B per cell + 32 B per edge; the unfused steps add the accumulators and the
//! update chain. Its GB/s against the copy bandwidth (`bench swe` measures it) says how close a
//! step is to the memory bound.
//!
//! Effective GB/s = modelled bytes / measured time (flux pass alone, and whole step).

use super::case::Case;
use super::gpu::{FluxLayout, GpuSolver, KernelTimes};
use super::mesh::{fit_to_domain, SweMesh};
use super::Scheme;
use crate::error::{Error, Result};
use crate::mesh::Mesh;
use crate::order::Ordering;
use crate::runtime::{median, Runtime};
use std::time::Instant;

/// The bytes models of [`flux_bytes`], [`update_bytes`] and [`min_step_bytes`] in one line
/// (reports carry it).
pub const BYTES_MODEL: &str = "kernel traffic per step: scatter 224 B per interior edge, 128 B per boundary edge; gather 48 B per cell + 192 B per interior edge + 64 B per boundary edge; update 168 B per cell; fused 80 B per cell + 128 B per interior edge + 32 B per boundary edge. Compulsory per step (state read once and written once plus static geometry): fused 80 B per cell + 32 B per edge; scatter 264 B per cell + 32 B per edge; gather 248 B per cell + 32 B per edge";

/// Most steps per submit of the whole run, by default.
pub const DEFAULT_BATCH: u32 = 256;

/// One benchmark row: a configuration's whole run and kernel times.
#[derive(Clone, Debug, serde::Serialize)]
pub struct BenchRow {
    pub cells: usize,
    pub edges: usize,
    pub colors: usize,
    pub scheme: String,
    pub ordering: String,
    pub layout: String,
    /// Steps of the whole run.
    pub steps: u32,
    /// Wall seconds of the whole run.
    pub seconds: f64,
    pub cell_updates_per_second: f64,
    pub flux_ms_per_step: f64,
    pub update_ms_per_step: f64,
    /// Whether the kernel times come from device timers (else the flux time is a wall time
    /// and the update time is 0).
    pub timestamps: bool,
    pub flux_bytes_per_step: f64,
    pub update_bytes_per_step: f64,
    pub flux_gb_per_s: f64,
    pub total_gb_per_s: f64,
    /// Compulsory bytes of a whole step ([`min_step_bytes`]).
    pub min_bytes_per_step: f64,
    /// `min_bytes_per_step` over the measured step time.
    pub min_gb_per_s: f64,
}

/// Modelled kernel traffic of the flux pass per step (see the module doc); the fused step
/// kernel for [`FluxLayout::Fused`].
pub fn flux_bytes(mesh: &SweMesh, layout: FluxLayout) -> f64 {
    let nb = mesh.topo.num_boundary_faces() as f64;
    let ni = mesh.num_faces() as f64 - nb;
    let cells = mesh.num_cells() as f64;
    match layout {
        FluxLayout::ColoredScatter | FluxLayout::AtomicScatter => 224.0 * ni + 128.0 * nb,
        FluxLayout::CellGather => 48.0 * cells + 2.0 * 96.0 * ni + 64.0 * nb,
        FluxLayout::Fused => 80.0 * cells + 2.0 * 64.0 * ni + 32.0 * nb,
    }
}

/// Modelled kernel traffic of local Δt + reduction + update per step (0 for the fused step,
/// whose update is in its one kernel).
pub fn update_bytes(cells: usize, layout: FluxLayout) -> f64 {
    match layout {
        FluxLayout::Fused => 0.0,
        _ => 168.0 * cells as f64,
    }
}

/// Compulsory bytes of one first-order step (see the module doc): per cell the state read
/// (32 B) and written (32 B) and the edge slots (16 B) of the fused step; the unfused steps
/// read the state in the flux pass (32 B), accumulate (scatter: read-modify-write 64 B;
/// gather: store 32 B, slots 16 B) and run the update chain (168 B); plus 32 B per edge record.
pub fn min_step_bytes(mesh: &SweMesh, layout: FluxLayout) -> f64 {
    let per_cell = match layout {
        FluxLayout::Fused => 80.0,
        FluxLayout::ColoredScatter | FluxLayout::AtomicScatter => 32.0 + 64.0 + 168.0,
        FluxLayout::CellGather => 32.0 + 16.0 + 32.0 + 168.0,
    };
    per_cell * mesh.num_cells() as f64 + 32.0 * mesh.num_faces() as f64
}

/// Side n of the criss-cross mesh M(n) with about `cells` = 4n² triangles (n even, ≥ 2).
pub fn cross_side(cells: usize) -> usize {
    let n = ((cells as f64 / 4.0).sqrt() / 2.0).round() as usize * 2;
    n.max(2)
}

/// The benchmark mesh of about `size` triangles of family `family` (rect: Delaunay of the
/// square; cross: criss-cross M(n)), fitted to Test 1's domain [-5, 5]^2.
pub fn bench_mesh(family: &str, size: usize) -> Result<Mesh> {
    let mut raw = match family {
        "rect" => crate::mesh::builtin(&format!("rect:{size}"))?,
        "cross" => crate::mesh::builtin(&format!("cross:{}", cross_side(size)))?,
        o => {
            return Err(Error::Invalid(format!(
                "unknown mesh family '{o}' (rect or cross)"
            )))
        }
    };
    fit_to_domain(&mut raw, [-5.0, 5.0, -5.0, 5.0])?;
    Ok(raw)
}

/// A flux layout by name: fused, scatter (edge-scatter), gather (cell-gather), atomic
/// (atomic-scatter).
pub fn parse_layout(s: &str) -> Result<FluxLayout> {
    match s.trim() {
        "fused" => Ok(FluxLayout::Fused),
        "scatter" | "edge-scatter" => Ok(FluxLayout::ColoredScatter),
        "gather" | "cell-gather" => Ok(FluxLayout::CellGather),
        "atomic" | "atomic-scatter" => Ok(FluxLayout::AtomicScatter),
        o => Err(Error::Invalid(format!(
            "unknown layout '{o}' (expected fused, scatter, gather or atomic)"
        ))),
    }
}

/// One mesh of the benchmark with its initial state, shared by every configuration and
/// backend run on it.
#[derive(Clone, Copy)]
pub struct BenchInput<'a> {
    pub mesh: &'a SweMesh,
    pub depth: &'a [f64],
    pub state: &'a [[f64; 6]],
    pub case: &'a Case,
    /// The ordering `mesh` was built with (for the report).
    pub ordering: Ordering,
}

/// Run one configuration on `rt`: the whole case to its final time (wall clock, batches of
/// at most `batch` steps), then `kernel_steps` unclamped steps timed per kernel group,
/// `kernel_repeats` times (median per group).
pub fn bench_config(
    rt: &Runtime,
    input: &BenchInput,
    scheme: Scheme,
    layout: FluxLayout,
    kernel_steps: u32,
    kernel_repeats: usize,
    batch: u32,
) -> Result<BenchRow> {
    let BenchInput {
        mesh,
        depth,
        state,
        case,
        ordering,
    } = *input;
    let mut g = GpuSolver::new(
        rt,
        mesh,
        depth,
        state,
        scheme,
        case.physics,
        case.cfl,
        layout,
    )?;
    let start = Instant::now();
    let ctl = g.advance_to(case.final_time, batch, &mut |_| true)?;
    let seconds = start.elapsed().as_secs_f64();
    let k = kernel_steps.max(1);
    let mut flux = Vec::new();
    let mut update = Vec::new();
    let mut timestamps = true;
    let mut steps = k;
    for _ in 0..kernel_repeats.max(1) {
        let t = g.time_steps(k)?;
        steps = t.steps;
        flux.push(t.flux);
        update.push(t.update);
        timestamps &= t.timestamps;
    }
    let times = KernelTimes {
        steps,
        flux: median(&flux),
        update: median(&update),
        timestamps,
    };
    let fb = flux_bytes(mesh, layout);
    let ub = update_bytes(mesh.num_cells(), layout);
    let mb = min_step_bytes(mesh, layout);
    let per_step = |s: f64| s / times.steps as f64;
    let step_time = if times.timestamps {
        per_step(times.flux + times.update)
    } else {
        per_step(times.flux)
    };
    Ok(BenchRow {
        cells: mesh.num_cells(),
        edges: mesh.num_faces(),
        colors: mesh.num_colors(),
        scheme: scheme.to_string(),
        ordering: ordering.to_string(),
        layout: layout.name().to_string(),
        steps: ctl.steps,
        seconds,
        cell_updates_per_second: mesh.num_cells() as f64 * ctl.steps as f64 / seconds.max(1e-12),
        flux_ms_per_step: per_step(times.flux) * 1e3,
        update_ms_per_step: per_step(times.update) * 1e3,
        timestamps: times.timestamps,
        flux_bytes_per_step: fb,
        update_bytes_per_step: ub,
        flux_gb_per_s: if times.timestamps {
            fb / per_step(times.flux).max(1e-12) / 1e9
        } else {
            f64::NAN
        },
        total_gb_per_s: (fb + ub) / step_time.max(1e-12) / 1e9,
        min_bytes_per_step: mb,
        min_gb_per_s: mb / step_time.max(1e-12) / 1e9,
    })
}
