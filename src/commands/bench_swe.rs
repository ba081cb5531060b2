//! `chromaflow bench swe`: Test 1 of the paper for a range of mesh sizes, each scheme, each
//! cell ordering and each layout (the fused step, the colored edge scatter and the cell-centred
//! gather with the update chain), with wall times, steps, cell updates per second, kernel times
//! from timestamp queries, effective bandwidths and the compulsory bytes of a step against
//! the measured copy bandwidth.
//!
//! The benchmark itself (meshes, timing, the bytes-moved model) is
//! [`chromaflow::solver::swe::bench`]; this command loops over the configurations and prints.

use crate::commands::progress::bar;
use crate::commands::GlobalArgs;
use chromaflow::order::{prepare, Ordering, PrepareOptions};
use chromaflow::runtime::bandwidth::copy_bandwidth;
use chromaflow::runtime::BackendKind;
use chromaflow::solver::swe::bench::{
    bench_config, bench_mesh, parse_layout, BenchInput, BYTES_MODEL, DEFAULT_BATCH,
};
use chromaflow::solver::swe::case::{Case, DEFAULT_SEED};
use chromaflow::solver::swe::gpu::FluxLayout;
use chromaflow::solver::swe::mesh::{EdgeKind, SweMesh};
use chromaflow::solver::swe::Scheme;
use chromaflow::solver::MAX_BATCH;
use clap::Args;

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
    /// Layouts: fused (one cell-centred kernel per step plus the clock), or the flux pass
    /// followed by the four-kernel update chain: scatter (colored edges), gather
    /// (cell-centred), atomic (one atomicAdd launch over all edges; CUDA only);
    /// comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "fused,scatter,gather")]
    pub layouts: Vec<String>,
    /// Mesh family: rect (Delaunay of the square, as unstructured as the paper's) or cross
    /// (criss-cross M(n)).
    #[arg(long, default_value = "rect")]
    pub mesh: String,
    /// Steps timed with timestamp queries after each run (kernel times; 1..=1000000).
    #[arg(
        long,
        default_value_t = 20,
        value_parser = clap::value_parser!(u32).range(1..=super::MAX_BENCH_STEPS as i64)
    )]
    pub kernel_steps: u32,
    /// Most steps per submit (1..=4096).
    #[arg(
        long,
        default_value_t = DEFAULT_BATCH,
        value_parser = clap::value_parser!(u32).range(1..=MAX_BATCH as i64)
    )]
    pub batch: u32,
    /// MiB per buffer of the device copy-bandwidth measurement (0 skips it).
    #[arg(long, default_value_t = 512)]
    pub copy_mib: u64,
    /// Print JSON instead of a markdown table.
    #[arg(long)]
    pub json: bool,
}

/// Timed runs of the copy-bandwidth measurement (the median is used).
const COPY_SAMPLES: u32 = 5;

/// Run `chromaflow bench swe`.
pub fn run(args: &BenchSweArgs, global: &GlobalArgs) -> anyhow::Result<()> {
    let backend = global.runtime()?;
    let schemes = if args.schemes.is_empty() {
        Scheme::ALL.to_vec()
    } else {
        args.schemes.clone()
    };
    let layouts: Vec<FluxLayout> = args
        .layouts
        .iter()
        .map(|s| parse_layout(s))
        .collect::<Result<_, _>>()?;
    let copy = if args.copy_mib == 0 {
        None
    } else {
        match copy_bandwidth(&backend, args.copy_mib << 20, COPY_SAMPLES) {
            Ok(c) => Some(c),
            Err(e) => {
                log::warn!("copy bandwidth not measured: {e}");
                None
            }
        }
    };
    let percent_of_copy = |gb_per_s: f64| copy.as_ref().map(|c| 100.0 * gb_per_s / c.gb_per_s);
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
                        &BenchInput {
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
                "bytes_model": BYTES_MODEL,
                "copy_bandwidth": copy,
                "rows": rows,
                "min_percent_of_copy": rows
                    .iter()
                    .map(|r| percent_of_copy(r.min_gb_per_s))
                    .collect::<Vec<_>>(),
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
    match &copy {
        Some(c) => println!(
            "copy bandwidth: {:.1} GB/s (read + write, {} MiB buffers; {})",
            c.gb_per_s,
            c.buffer_bytes >> 20,
            c.method
        ),
        None => println!("copy bandwidth: n/a"),
    }
    println!();
    println!("| cells | scheme | ordering | layout | colors | steps | seconds | cell updates/s | flux ms/step | update ms/step | flux GB/s | step GB/s | compulsory MB/step | compulsory GB/s | % of copy |");
    println!("|---:|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    for r in &rows {
        let pct = percent_of_copy(r.min_gb_per_s).map_or("n/a".to_string(), |p| format!("{p:.0}"));
        println!(
            "| {} | {} | {} | {} | {} | {} | {:.4} | {:.3e} | {:.3} | {:.3} | {:.1} | {:.1} | {:.1} | {:.1} | {pct} |",
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
            r.total_gb_per_s,
            r.min_bytes_per_step / 1e6,
            r.min_gb_per_s
        );
    }
    println!();
    println!("Layouts: fused = one kernel per step (flux gather, update, local dt and its workgroup minimum; the flux column) plus the one-thread clock (the update column), Δt lagged by one step as in the paper; the others = the flux pass, then local dt, min-reduction, clock and update (Δt of the current state).");
    println!("Bytes models ({BYTES_MODEL}). Flux and step GB/s: kernel-traffic bytes / measured time; compulsory GB/s: compulsory bytes / measured step time, and its % of the copy bandwidth.");
    Ok(())
}
