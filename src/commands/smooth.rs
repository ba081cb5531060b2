//! `chromaflow smooth` (anisotropic vertex smoothing of a mesh to a metric field, with quality
//! statistics, PNGs, CSV, .msh and .vtu) and `chromaflow bench smooth` (the table of Rokos,
//! Gorman and Kelly: 1000 iterations on meshes of 25k to 5.6M vertices, three metric sampling
//! paths).

use crate::commands::progress::{bar, spinner};
use crate::commands::GlobalArgs;
use chromaflow::error::Error;
use chromaflow::mesh::load_or_builtin;
use chromaflow::solver::smooth::bench::{bench_input, time_sampling, BenchInput};
use chromaflow::solver::smooth::gpu::ITERATIONS_PER_SUBMIT;
use chromaflow::solver::smooth::quality::HISTOGRAM_BINS;
use chromaflow::solver::smooth::texture::check_size;
use chromaflow::solver::smooth::{
    schedule_gpu, MetricSpec, QualitySummary, Sampling, SmoothParams, Smoothing, SmoothingOptions,
};
use chromaflow::solver::RunControl;
use clap::Args;
use std::path::PathBuf;

/// Built-in mesh used when none is given.
const DEFAULT_MESH: &str = "rect:4000";

/// Options of `chromaflow smooth`.
#[derive(Args, Debug)]
pub struct SmoothArgs {
    /// Mesh file (.msh) or built-in spec (e.g. rect:4000, disk:3000); default rect:4000.
    #[arg(conflicts_with = "builtin")]
    pub mesh: Option<String>,
    /// Built-in mesh spec (same as giving it as the mesh argument).
    #[arg(long, value_name = "SPEC")]
    pub builtin: Option<String>,
    /// Metric field: uniform, boundary-layer, shock, hessian, hessian:EXPR (x, y in [0, 1]
    /// over the bounding box), vertex:NAME (NAME evaluated at the vertices and resampled).
    /// Default shock.
    #[arg(long, conflicts_with = "metric_file")]
    pub metric: Option<String>,
    /// Metric at the mesh vertices: one line `m11 m12 m22` per vertex (# comments allowed).
    #[arg(long, value_name = "FILE")]
    pub metric_file: Option<PathBuf>,
    /// Smoothing iterations (sweeps over all colors).
    #[arg(long, default_value_t = 1000)]
    pub iterations: usize,
    /// How the kernel reads the metric.
    #[arg(long, value_enum, default_value_t = Sampling::Hardware)]
    pub sampling: Sampling,
    /// Texels per side of the metric texture (2..=8192).
    #[arg(long, default_value_t = 512)]
    pub texture_size: u32,
    /// Sub-samples per texel and axis when resampling the metric (1..=16).
    #[arg(long, default_value_t = 2)]
    pub supersample: u32,
    /// Diagonal dominance margin sigma.
    #[arg(long, default_value_t = 0.01)]
    pub sigma: f64,
    /// Relaxation w in (0, 1].
    #[arg(long, default_value_t = 0.5)]
    pub relax: f64,
    /// Record the quality every K iterations (default: about 50 rows).
    #[arg(long, value_name = "K")]
    pub quality_every: Option<usize>,
    /// Also run the CPU f64 reference with exact and with 1/256-quantised filter weights (as
    /// NVIDIA's texture units) and report the final quality of both.
    #[arg(long)]
    pub predict_quantized: bool,
    /// Output directory: before.png, after.png, quality.csv, smoothed.msh, smoothed.vtu,
    /// summary.json.
    #[arg(long, default_value = "out/smooth")]
    pub out: PathBuf,
    /// Replace an earlier run's files in the output directory (removed first).
    #[arg(long, conflicts_with = "restart")]
    pub overwrite: bool,
    /// Write checkpoint.ckpt into the output directory at the first quality record at or past
    /// every N iterations (one is always written when a run is interrupted).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub checkpoint_every: Option<u64>,
    /// Continue an earlier run from its checkpoint, with the same mesh, metric and options,
    /// into the same output directory, up to --iterations in all (to the same bits on the same
    /// backend).
    #[arg(long, value_name = "FILE")]
    pub restart: Option<PathBuf>,
    /// Print the summary as JSON.
    #[arg(long)]
    pub json: bool,
}

/// Most quality records (CSV rows) of one run: each is kept in memory.
const MAX_QUALITY_RECORDS: usize = 1_000_000;

fn histogram_text(s: &QualitySummary) -> String {
    s.histogram
        .iter()
        .map(|c| c.to_string())
        .collect::<Vec<_>>()
        .join(" ")
}

pub fn run(args: &SmoothArgs, global: &GlobalArgs) -> anyhow::Result<()> {
    let options = SmoothingOptions {
        params: SmoothParams {
            sigma: args.sigma,
            relax: args.relax,
            ..SmoothParams::default()
        },
        sampling: args.sampling,
        texture_size: args.texture_size,
        supersample: args.supersample,
    };
    options.check()?;
    let every = args
        .quality_every
        .unwrap_or((args.iterations / 50).max(1))
        .max(1);
    let records = args.iterations.div_ceil(every);
    if records > MAX_QUALITY_RECORDS {
        return Err(Error::Invalid(format!(
            "--iterations {} with --quality-every {every} gives {records} quality records, more \
             than the limit of {MAX_QUALITY_RECORDS} (raise --quality-every)",
            args.iterations
        ))
        .into());
    }
    if args.restart.is_none() {
        chromaflow::files::claim_output_dir(&args.out, args.overwrite)?;
    }
    let control = RunControl {
        checkpoint_every: args.checkpoint_every.map(|n| n as f64),
        restart: args.restart.clone(),
        ..RunControl::default()
    };
    chromaflow::interrupt::install();
    let mesh_name = args
        .mesh
        .clone()
        .or_else(|| args.builtin.clone())
        .unwrap_or_else(|| DEFAULT_MESH.to_string());
    let sp = spinner(&format!("loading {mesh_name}"), global.quiet);
    let mesh = load_or_builtin(&mesh_name)?;
    let spec = MetricSpec::resolve(args.metric.as_deref(), args.metric_file.as_deref(), &mesh)?;
    sp.set_message(format!("resampling metric {}", spec.name()));
    let backend = global.runtime()?;
    let colors = match &args.restart {
        Some(path) => Some(Smoothing::checkpoint_colors(path, &mesh)?),
        None => None,
    };
    let mut sm = Smoothing::with_colors(mesh, &spec, &options, &backend, colors.as_deref())?
        .with_name(mesh_name.as_str());
    sp.finish_and_clear();

    let pb = bar(args.iterations as u64, "smoothing", global.quiet);
    sm.run_controlled(&args.out, args.iterations, every, &control, |done| {
        pb.set_position(done as u64)
    })?;
    pb.finish_and_clear();

    let prediction = args.predict_quantized.then(|| {
        let sp = spinner("CPU reference, exact and 1/256 weights", global.quiet);
        let p = sm.predict_quantized();
        sp.finish_and_clear();
        p
    });
    let summary = sm.write_summary(&args.out, prediction.as_ref())?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&summary)?);
        return Ok(());
    }
    let schedule = sm.schedule();
    println!(
        "{mesh_name}: {} vertices ({} free), {} triangles, {} colors ({} boundary); metric {}, \
         {}x{} texture ({:?}), sampling {}, {} iterations on {} in {:.3} s",
        sm.mesh().num_points(),
        schedule.order.len(),
        sm.topology().triangles.len(),
        schedule.num_colors(),
        schedule.num_colors() - schedule.first_boundary_color,
        sm.metric_name(),
        args.texture_size,
        args.texture_size,
        sm.precision(),
        args.sampling,
        args.iterations,
        sm.device_name(),
        sm.gpu_seconds()
    );
    let bins: Vec<String> = (0..HISTOGRAM_BINS)
        .map(|k| format!("{:.1}-{:.1}", k as f64 / 10.0, (k + 1) as f64 / 10.0))
        .collect();
    println!("| quality | min | mean | histogram ({}) |", bins.join(" "));
    println!("|---|---|---|---|");
    let after = sm.quality();
    for (name, s) in [("before", sm.quality_before()), ("after", &after)] {
        println!(
            "| {name} | {:.4} | {:.4} | {} |",
            s.min,
            s.mean,
            histogram_text(s)
        );
    }
    if let Some(p) = &prediction {
        println!(
            "CPU reference with 1/256 filter weights (NVIDIA): mean quality {:+.2e}, min quality \
             {:+.2e} relative to exact weights",
            p.mean_quality_change, p.min_quality_change
        );
    }
    println!("wrote {}", args.out.display());
    Ok(())
}

/// Options of `chromaflow bench smooth`.
#[derive(Args, Debug)]
pub struct BenchSmoothArgs {
    /// Vertex counts of the built-in unit-square meshes (the paper's: 25472, 56878, 157673,
    /// 402849, 1002001, 4004001, 5654659); the Delaunay generator hits them within a few %.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "25472,56878,157673,402849,1002001,4004001,5654659"
    )]
    pub sizes: Vec<usize>,
    /// Smoothing iterations per measurement (1..=1000000).
    #[arg(long, default_value_t = 1000, value_parser = super::bench_steps())]
    pub iterations: usize,
    /// Sampling paths to time.
    #[arg(
        long,
        value_enum,
        value_delimiter = ',',
        default_value = "hardware,shader,buffer"
    )]
    pub sampling: Vec<Sampling>,
    /// Metric field (see `chromaflow smooth --help`).
    #[arg(long, default_value = "shock")]
    pub metric: String,
    /// Texels per side of the metric texture.
    #[arg(long, default_value_t = 1024)]
    pub texture_size: u32,
    /// Print JSON lines instead of a markdown table.
    #[arg(long)]
    pub json: bool,
}

pub fn bench(args: &BenchSmoothArgs, global: &GlobalArgs) -> anyhow::Result<()> {
    check_size(args.texture_size, 1)?;
    if args.sampling.is_empty() {
        return Err(Error::Invalid("--sampling needs at least one path".into()).into());
    }
    let backend = global.runtime()?;
    let params = SmoothParams::default();
    if !args.json {
        let prec = backend.texel_precision();
        let timing = format!(
            "seconds = wall time from queuing the first iteration to the GPU finishing the \
             last (host-side recording and launch overhead included, overlapped with the GPU \
             after the first batch), kernel = sum of the GPU times of the batches of \
             {ITERATIONS_PER_SUBMIT} iterations (timestamp queries or CUDA events, one launch \
             per color per iteration, barriers between launches included)"
        );
        println!(
            "adapter: {}; metric {}, {}x{} texture ({prec:?} texels for the texture paths), {} \
             iterations; {timing}",
            backend.name(),
            args.metric,
            args.texture_size,
            args.texture_size,
            args.iterations
        );
        let mut head = vec!["vertices".to_string(), "colors".to_string()];
        for s in &args.sampling {
            head.extend([
                format!("{s} s"),
                format!("{s} kernel s"),
                format!("{s} updates/s"),
            ]);
        }
        println!("| {} |", head.join(" | "));
        println!("|{}", "---|".repeat(head.len()));
    }
    for &n in &args.sizes {
        let sp = spinner(&format!("mesh with {n} vertices"), global.quiet);
        let BenchInput {
            mesh,
            topo,
            tex,
            start,
        } = bench_input(n, &args.metric, args.texture_size)?;
        let schedule = schedule_gpu(&backend, &topo)?;
        sp.finish_and_clear();
        let mut row = vec![
            mesh.num_points().to_string(),
            schedule.num_colors().to_string(),
        ];
        let mut json = serde_json::json!({
            "vertices": mesh.num_points(),
            "free_vertices": schedule.order.len(),
            "colors": schedule.num_colors(),
            "iterations": args.iterations,
            "metric": args.metric,
            "texture_size": args.texture_size,
            "adapter": backend.name(),
            "backend": backend.kind(),
        });
        for &sampling in &args.sampling {
            let m = time_sampling(
                &backend,
                &topo,
                &schedule,
                &tex,
                sampling,
                &params,
                &start,
                args.iterations,
            )?;
            let (t, updates) = (m.timing, m.updates_per_second());
            row.extend([
                format!("{:.3}", t.wall_seconds),
                t.kernel_seconds
                    .map(|k| format!("{k:.3}"))
                    .unwrap_or_else(|| "-".into()),
                format!("{updates:.3e}"),
            ]);
            json[sampling.name()] = serde_json::json!({
                "seconds": t.wall_seconds,
                "kernel_seconds": t.kernel_seconds,
                "vertex_updates_per_second": updates,
                "texel_precision": format!("{:?}", m.precision),
            });
        }
        if args.json {
            println!("{json}");
        } else {
            println!("| {} |", row.join(" | "));
        }
    }
    Ok(())
}
