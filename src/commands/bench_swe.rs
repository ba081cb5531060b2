//! `chromaflow bench swe`: Test 1 of the paper for a range of mesh sizes, each scheme, each
//! cell ordering and both flux layouts (colored edge scatter vs cell-centred gather), with
//! wall times, steps, cell updates per second, kernel times from timestamp queries and an
//! effective bandwidth.
//!
//! The benchmark itself (meshes, timing, the bytes-moved model) is
//! [`chromaflow::solver::swe::bench`]; this command loops over the configurations and prints.

use crate::commands::progress::bar;
use crate::commands::GlobalArgs;
use chromaflow::order::{prepare, Ordering, PrepareOptions};
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
    /// Flux layouts: scatter (colored edges), gather (cell-centred), atomic (one atomicAdd
    /// launch over all edges; CUDA only), comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "scatter,gather")]
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
    /// Print JSON instead of a markdown table.
    #[arg(long)]
    pub json: bool,
}

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
