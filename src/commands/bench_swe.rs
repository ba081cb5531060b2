//! `chromaflow bench swe`: Test 1 of the paper for a range of mesh sizes, each scheme, each
//! cell ordering and both flux layouts (colored edge scatter vs cell-centred gather), with
//! wall times, steps, cell updates per second, kernel times from timestamp queries and an
//! effective bandwidth.
//!
//! Bytes-moved model (f32; the minimum traffic of each kernel if every load missed cache):
//! * edge scatter, per step: interior edge 224 B (edge record 32, two cells 2·32, two
//!   accumulator read-modify-writes 2·64), boundary edge 128 B (32 + 32 + 64);
//! * cell gather, per step: per cell 16 B (edge slots) + 32 B (accumulator store), per edge
//!   visit 32 B (edge) + 32 B per cell read (two for interior edges); interior edges are
//!   visited twice;
//! * update part, per cell and step: 36 B local Δt (acc vec4 16, cell vec4 16, Δt 4), 4 B
//!   reduction, 128 B update (cell and accumulator read, cell written, accumulator cleared).
//!
//! Effective GB/s = modelled bytes / measured time (flux pass alone, and whole step).

use crate::commands::progress::bar;
use crate::commands::GlobalArgs;
use chromaflow::error::Error;
use chromaflow::order::{prepare, Ordering, PrepareOptions};
use chromaflow::runtime::{median, BackendKind, GpuOptions, Runtime};
use chromaflow::solver::swe::case::{Case, DEFAULT_SEED};
use chromaflow::solver::swe::gpu::{FluxLayout, GpuSolver, KernelTimes};
use chromaflow::solver::swe::mesh::{fit_to_domain, EdgeKind, SweMesh};
use chromaflow::solver::swe::Scheme;
use clap::Args;
use std::time::Instant;

/// Options of `chromaflow bench swe`.
#[derive(Args, Debug, Clone)]
pub struct BenchSweArgs {
    /// Target mesh sizes in triangles (comma-separated).
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "4000,16000,64000,256000,1024000,2080560"
    )]
    pub sizes: Vec<usize>,
    /// Schemes (comma-separated; default all).
    #[arg(long, value_delimiter = ',', value_enum)]
    pub schemes: Vec<Scheme>,
    /// Cell orderings (comma-separated).
    #[arg(
        long,
        value_delimiter = ',',
        value_enum,
        default_value = "original,rcm,gps,color"
    )]
    pub orderings: Vec<Ordering>,
    /// Flux layouts: scatter (colored edges), gather (cell-centred), atomic (one atomicAdd
    /// launch over all edges; CUDA only), comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "scatter,gather")]
    pub layouts: Vec<String>,
    /// Mesh family: rect (Delaunay of the square, as unstructured as the paper's) or cross
    /// (criss-cross M(n)).
    #[arg(long, default_value = "rect")]
    pub mesh: String,
    /// Steps timed with timestamp queries after each run (kernel times).
    #[arg(long, default_value_t = 20)]
    pub kernel_steps: u32,
    /// Most steps per submit.
    #[arg(long, default_value_t = 256)]
    pub batch: u32,
    /// Print JSON instead of a markdown table.
    #[arg(long)]
    pub json: bool,
}

/// One benchmark row.
#[derive(Clone, Debug, serde::Serialize)]
pub struct BenchRow {
    pub cells: usize,
    pub edges: usize,
    pub colors: usize,
    pub scheme: String,
    pub ordering: String,
    pub layout: String,
    pub steps: u32,
    pub seconds: f64,
    pub cell_updates_per_second: f64,
    pub flux_ms_per_step: f64,
    pub update_ms_per_step: f64,
    pub timestamps: bool,
    pub flux_bytes_per_step: f64,
    pub update_bytes_per_step: f64,
    pub flux_gb_per_s: f64,
    pub total_gb_per_s: f64,
}

/// Modelled bytes of the flux pass per step (see module doc).
pub fn flux_bytes(mesh: &SweMesh, layout: FluxLayout) -> f64 {
    let nb = mesh.topo.num_boundary_faces() as f64;
    let ni = mesh.num_faces() as f64 - nb;
    match layout {
        FluxLayout::ColoredScatter | FluxLayout::AtomicScatter => 224.0 * ni + 128.0 * nb,
        FluxLayout::CellGather => 48.0 * mesh.num_cells() as f64 + 2.0 * 96.0 * ni + 64.0 * nb,
    }
}

/// Modelled bytes of local Δt + reduction + update per step.
pub fn update_bytes(cells: usize) -> f64 {
    168.0 * cells as f64
}

/// The benchmark mesh of about `size` triangles of family `family` (rect: Delaunay of the
/// square; cross: criss-cross M(n)), fitted to Test 1's domain [-5, 5]^2.
pub(crate) fn bench_mesh(family: &str, size: usize) -> anyhow::Result<chromaflow::mesh::Mesh> {
    let mut raw = match family {
        "rect" => chromaflow::mesh::builtin(&format!("rect:{size}"))?,
        "cross" => chromaflow::mesh::builtin(&format!("cross:{}", super::swe::cross_side(size)))?,
        o => {
            return Err(Error::Invalid(format!("unknown mesh family '{o}' (rect or cross)")).into())
        }
    };
    fit_to_domain(&mut raw, [-5.0, 5.0, -5.0, 5.0])?;
    Ok(raw)
}

/// One mesh of `bench swe` with its initial state, shared by every configuration and backend
/// run on it.
pub(crate) struct SweBenchInput<'a> {
    pub mesh: &'a SweMesh,
    pub depth: &'a [f64],
    pub state: &'a [[f64; 6]],
    pub case: &'a Case,
    /// The ordering `mesh` was built with (for the report).
    pub ordering: Ordering,
}

/// Run one configuration on `backend`: the whole case to its final time (wall clock, batches
/// of at most `batch` steps), then `kernel_steps` unclamped steps timed per kernel group,
/// `kernel_repeats` times (median per group).
#[allow(clippy::too_many_arguments)]
pub(crate) fn bench_config(
    backend: &Runtime,
    input: &SweBenchInput,
    scheme: Scheme,
    layout: FluxLayout,
    kernel_steps: u32,
    kernel_repeats: usize,
    batch: u32,
) -> anyhow::Result<BenchRow> {
    let SweBenchInput {
        mesh,
        depth,
        state,
        case,
        ordering,
    } = *input;
    let mut g = GpuSolver::new(
        backend,
        mesh,
        depth,
        state,
        scheme,
        case.physics,
        case.cfl,
        layout,
    )?;
    let start = Instant::now();
    let ctl = g.advance(case.final_time, batch, &mut |_| {})?;
    let seconds = start.elapsed().as_secs_f64();
    let k = kernel_steps.max(1);
    let mut flux = Vec::new();
    let mut update = Vec::new();
    let mut timestamps = true;
    for _ in 0..kernel_repeats.max(1) {
        let t = g.time_steps(k)?;
        flux.push(t.flux);
        update.push(t.update);
        timestamps &= t.timestamps;
    }
    let times = KernelTimes {
        flux: median(&flux),
        update: median(&update),
        timestamps,
    };
    let fb = flux_bytes(mesh, layout);
    let ub = update_bytes(mesh.num_cells());
    let per_step = |s: f64| s / k as f64;
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
    })
}

pub(crate) fn parse_layout(s: &str) -> anyhow::Result<FluxLayout> {
    match s.trim() {
        "scatter" | "edge-scatter" => Ok(FluxLayout::ColoredScatter),
        "gather" | "cell-gather" => Ok(FluxLayout::CellGather),
        "atomic" | "atomic-scatter" => Ok(FluxLayout::AtomicScatter),
        o => Err(Error::Invalid(format!(
            "unknown layout '{o}' (expected scatter, gather or atomic)"
        ))
        .into()),
    }
}

/// Run `chromaflow bench swe`.
pub fn run(args: &BenchSweArgs, global: &GlobalArgs) -> anyhow::Result<()> {
    let backend = Runtime::new(
        global.backend,
        &GpuOptions {
            adapter: global.adapter.clone(),
        },
    )?;
    let schemes = if args.schemes.is_empty() {
        Scheme::ALL.to_vec()
    } else {
        args.schemes.clone()
    };
    let layouts: Vec<FluxLayout> = args
        .layouts
        .iter()
        .map(|s| parse_layout(s))
        .collect::<anyhow::Result<_>>()?;
    let case = Case::builtin("test1")?;
    let total = args.sizes.len() * args.orderings.len() * schemes.len() * layouts.len();
    let pb = bar(total as u64, "bench swe", global.quiet || args.json);
    let mut rows = Vec::new();
    for &size in &args.sizes {
        let raw = bench_mesh(&args.mesh, size)?;
        for &ordering in &args.orderings {
            let ordered = prepare(&raw, &PrepareOptions::new(ordering, DEFAULT_SEED))?;
            let mesh = SweMesh::new(&ordered, |_| EdgeKind::Wall)?;
            let (depth, state) = case.initial_state(&mesh)?;
            for &scheme in &schemes {
                for &layout in &layouts {
                    pb.set_message(format!(
                        "{} cells {scheme} {ordering} {}",
                        mesh.num_cells(),
                        layout.name()
                    ));
                    rows.push(bench_config(
                        &backend,
                        &SweBenchInput {
                            mesh: &mesh,
                            depth: &depth,
                            state: &state,
                            case: &case,
                            ordering,
                        },
                        scheme,
                        layout,
                        args.kernel_steps,
                        1,
                        args.batch,
                    )?);
                    pb.inc(1);
                }
            }
        }
    }
    pb.finish_and_clear();
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&serde_json::json!({
                "adapter": backend.name(),
                "backend": backend.kind(),
                "case": "test1",
                "final_time": case.final_time,
                "bytes_model": "scatter: 224 B per interior edge, 128 B per boundary edge; gather: 48 B per cell + 192 B per interior edge + 64 B per boundary edge; update: 168 B per cell (per step)",
                "rows": rows,
            }))?
        );
        return Ok(());
    }
    println!(
        "Test 1 (t = {} s) on {} ({} mesh); kernel times over {} timed steps ({})",
        case.final_time,
        backend.name(),
        args.mesh,
        args.kernel_steps.max(1),
        if backend.kind() == BackendKind::Cuda {
            "CUDA events"
        } else if rows.first().is_some_and(|r| r.timestamps) {
            "timestamp queries"
        } else {
            "wall clock, no timestamps"
        }
    );
    println!();
    println!("| cells | scheme | ordering | layout | colors | steps | seconds | cell updates/s | flux ms/step | update ms/step | flux GB/s | step GB/s |");
    println!("|---:|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|");
    for r in &rows {
        println!(
            "| {} | {} | {} | {} | {} | {} | {:.4} | {:.3e} | {:.3} | {:.3} | {:.1} | {:.1} |",
            r.cells,
            r.scheme,
            r.ordering,
            r.layout,
            r.colors,
            r.steps,
            r.seconds,
            r.cell_updates_per_second,
            r.flux_ms_per_step,
            r.update_ms_per_step,
            r.flux_gb_per_s,
            r.total_gb_per_s
        );
    }
    println!();
    println!("Bytes model per step: edge scatter 224 B per interior edge and 128 B per boundary edge; cell gather 48 B per cell + 192 B per interior edge + 64 B per boundary edge; local dt + reduction + update 168 B per cell. GB/s = modelled bytes / measured kernel time.");
    Ok(())
}
