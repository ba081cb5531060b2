//! `chromaflow smooth` (anisotropic vertex smoothing of a mesh to a metric field, with quality
//! statistics, PNGs, CSV, .msh and .vtu) and `chromaflow bench smooth` (the table of Rokos,
//! Gorman and Kelly: 1000 iterations on meshes of 25k to 5.6M vertices, three metric sampling
//! paths).

use crate::commands::progress::{bar, spinner};
use crate::commands::GlobalArgs;
use chromaflow::color::gpu_vertices::{color_vertices_gpu, GpuColoringVariant};
use chromaflow::error::Error;
use chromaflow::mesh::{generate, load_or_builtin, write_msh41, write_vtu, Mesh};
use chromaflow::output::{save_field_png, write_json_atomic, CsvWriter, Field, PlotOptions};
use chromaflow::runtime::{GpuOptions, Runtime};
use chromaflow::solver::smooth::cpu::{min_shape, positions, set_positions};
use chromaflow::solver::smooth::gpu::{GpuSmoother, RunTiming, ITERATIONS_PER_SUBMIT};
use chromaflow::solver::smooth::quality::HISTOGRAM_BINS;
use chromaflow::solver::smooth::texture::check_size;
use chromaflow::solver::smooth::{
    metric_normalization, metric_quality, sweep_cpu, MetricSpec, MetricTexture, QualitySummary,
    Sampling, Schedule, SmoothParams, SmoothTopology, TexelPrecision, TextureSampler, WeightMode,
};
use clap::Args;
use std::path::{Path, PathBuf};

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
    /// Print the summary as JSON.
    #[arg(long)]
    pub json: bool,
}

/// The backend `--backend` names (wgpu: the adapter `--adapter` picks; CUDA: device 0).
fn open_backend(global: &GlobalArgs) -> anyhow::Result<Runtime> {
    Ok(Runtime::new(
        global.backend,
        &GpuOptions {
            adapter: global.adapter.clone(),
        },
    )?)
}

/// Color with the GPU speculative coloring on `backend`, boundary vertices in classes of their
/// own.
pub fn schedule_gpu(
    backend: &Runtime,
    topo: &SmoothTopology,
) -> chromaflow::error::Result<Schedule> {
    let classes = topo.classes();
    let col = color_vertices_gpu(
        backend,
        &topo.neighbors,
        Some(&classes),
        GpuColoringVariant::Data,
    )?;
    Schedule::from_colors(topo, &col.colors)
}

fn histogram_text(s: &QualitySummary) -> String {
    s.histogram
        .iter()
        .map(|c| c.to_string())
        .collect::<Vec<_>>()
        .join(" ")
}

fn quality_png(
    mesh: &Mesh,
    q: &[f64],
    title: String,
    path: &Path,
) -> chromaflow::error::Result<()> {
    let opts = PlotOptions {
        title,
        label: "metric quality (VL)".into(),
        range: Some((0.0, 1.0)),
        wireframe: true,
        ..PlotOptions::default()
    };
    save_field_png(mesh, Field::Cell(q), &opts, path).map(|_| ())
}

pub fn run(args: &SmoothArgs, global: &GlobalArgs) -> anyhow::Result<()> {
    let params = SmoothParams {
        sigma: args.sigma,
        relax: args.relax,
        ..SmoothParams::default()
    };
    params.check()?;
    check_size(args.texture_size, args.supersample)?;
    let mesh_name = args
        .mesh
        .clone()
        .or_else(|| args.builtin.clone())
        .unwrap_or_else(|| DEFAULT_MESH.to_string());
    let sp = spinner(&format!("loading {mesh_name}"), global.quiet);
    let mut mesh = load_or_builtin(&mesh_name)?;
    let topo = SmoothTopology::build(&mesh)?;
    let spec = MetricSpec::resolve(args.metric.as_deref(), args.metric_file.as_deref(), &mesh)?;
    sp.set_message(format!("resampling metric {}", spec.name()));
    let tex = MetricTexture::from_spec(&spec, &mesh, args.texture_size, args.supersample)?;
    let backend = open_backend(global)?;
    let schedule = schedule_gpu(&backend, &topo)?;
    sp.finish_and_clear();

    let start = positions(&mesh);
    let mut gpu = GpuSmoother::new(
        &backend,
        &topo,
        &schedule,
        &tex,
        args.sampling,
        &params,
        &start,
    )?;
    // Quality is judged with the exact bilinear metric at the texel precision the kernel reads.
    let sampler = TextureSampler::new(&tex, WeightMode::Exact, gpu.precision());
    let metric = |x: [f64; 2]| sampler.sample(x);
    let norm = metric_normalization(&start, &topo.triangles, &metric);
    let q_before = metric_quality(&start, &topo.triangles, &metric, norm);
    let before = QualitySummary::of(&q_before);

    std::fs::create_dir_all(&args.out).map_err(|e| Error::io(&args.out, e))?;
    let title = |what: &str, s: &QualitySummary| {
        format!(
            "{mesh_name}, metric {}: {what} (min {:.3}, mean {:.3})",
            spec.name(),
            s.min,
            s.mean
        )
    };
    quality_png(
        &mesh,
        &q_before,
        title("before", &before),
        &args.out.join("before.png"),
    )?;
    let mut csv = CsvWriter::create(
        args.out.join("quality.csv"),
        &[
            "iteration",
            "min_quality",
            "mean_quality",
            "min_shape",
            "seconds",
        ],
    )?;
    csv.row(&[
        0.0,
        before.min,
        before.mean,
        min_shape(&start, &topo.triangles),
        0.0,
    ])?;
    let every = args
        .quality_every
        .unwrap_or((args.iterations / 50).max(1))
        .max(1);
    let pb = bar(args.iterations as u64, "smoothing", global.quiet);
    let mut done = 0;
    let mut gpu_seconds = 0.0;
    let mut kernel_seconds: Option<f64> = None;
    let mut pos = start.clone();
    while done < args.iterations {
        let k = every.min(args.iterations - done);
        let t = gpu.run(k)?;
        gpu_seconds += t.wall_seconds;
        if let Some(ks) = t.kernel_seconds {
            *kernel_seconds.get_or_insert(0.0) += ks;
        }
        done += k;
        pos = gpu.positions_f64()?;
        let shape = min_shape(&pos, &topo.triangles);
        if chromaflow::solver::smooth::cpu::not_above(shape, 0.0) {
            return Err(Error::Gpu(format!(
                "iteration {done}: a triangle inverted or collapsed (min 2 area / sum l^2 = \
                 {shape:e}); this is a bug"
            ))
            .into());
        }
        let q = QualitySummary::of(&metric_quality(&pos, &topo.triangles, &metric, norm));
        csv.row(&[done as f64, q.min, q.mean, shape, gpu_seconds])?;
        pb.set_position(done as u64);
    }
    pb.finish_and_clear();
    let q_after = metric_quality(&pos, &topo.triangles, &metric, norm);
    let after = QualitySummary::of(&q_after);
    set_positions(&mut mesh, &pos);
    quality_png(
        &mesh,
        &q_after,
        title(&format!("after {} iterations", args.iterations), &after),
        &args.out.join("after.png"),
    )?;
    write_msh41(&mesh, &args.out.join("smoothed.msh"))?;
    write_vtu(
        &mesh,
        &args.out.join("smoothed.vtu"),
        &[],
        &[("quality", &q_after), ("quality_before", &q_before)],
    )?;

    let mut prediction = serde_json::Value::Null;
    if args.predict_quantized {
        let sp = spinner("CPU reference, exact and 1/256 weights", global.quiet);
        let mut runs = Vec::new();
        for weights in [WeightMode::Exact, WeightMode::Quantized8] {
            let smp = TextureSampler::new(&tex, weights, gpu.precision());
            let mut p = start.clone();
            for _ in 0..args.iterations {
                sweep_cpu(&mut p, &topo, &schedule, &|x| smp.sample(x), &params);
            }
            runs.push(QualitySummary::of(&metric_quality(
                &p,
                &topo.triangles,
                &metric,
                norm,
            )));
        }
        sp.finish_and_clear();
        prediction = serde_json::json!({
            "cpu_exact_weights": runs[0],
            "cpu_quantized_1_256_weights": runs[1],
            "mean_quality_change": runs[1].mean - runs[0].mean,
            "min_quality_change": runs[1].min - runs[0].min,
        });
    }

    let summary = serde_json::json!({
        "mesh": mesh_name,
        "vertices": mesh.num_points(),
        "triangles": topo.triangles.len(),
        "free_vertices": schedule.order.len(),
        "colors": schedule.num_colors(),
        "boundary_colors": schedule.num_colors() - schedule.first_boundary_color,
        "metric": spec.name(),
        "texture_size": args.texture_size,
        "supersample": args.supersample,
        "texel_precision": format!("{:?}", gpu.precision()),
        "sampling": args.sampling,
        "iterations": args.iterations,
        "params": params,
        "adapter": gpu.device_name(),
        "backend": backend.kind(),
        "metric_normalization": norm,
        "quality_before": before,
        "quality_after": after,
        "gpu_seconds": gpu_seconds,
        "kernel_seconds": kernel_seconds,
        "quantization_prediction": prediction,
    });
    write_json_atomic(args.out.join("summary.json"), &summary)?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&summary)?);
        return Ok(());
    }
    println!(
        "{mesh_name}: {} vertices ({} free), {} triangles, {} colors ({} boundary); metric {}, \
         {}x{} texture ({:?}), sampling {}, {} iterations on {} in {:.3} s",
        mesh.num_points(),
        schedule.order.len(),
        topo.triangles.len(),
        schedule.num_colors(),
        schedule.num_colors() - schedule.first_boundary_color,
        spec.name(),
        args.texture_size,
        args.texture_size,
        gpu.precision(),
        args.sampling,
        args.iterations,
        gpu.device_name(),
        gpu_seconds
    );
    let bins: Vec<String> = (0..HISTOGRAM_BINS)
        .map(|k| format!("{:.1}-{:.1}", k as f64 / 10.0, (k + 1) as f64 / 10.0))
        .collect();
    println!("| quality | min | mean | histogram ({}) |", bins.join(" "));
    println!("|---|---|---|---|");
    for (name, s) in [("before", &before), ("after", &after)] {
        println!(
            "| {name} | {:.4} | {:.4} | {} |",
            s.min,
            s.mean,
            histogram_text(s)
        );
    }
    if !prediction.is_null() {
        println!(
            "CPU reference with 1/256 filter weights (NVIDIA): mean quality {:+.2e}, min quality \
             {:+.2e} relative to exact weights",
            prediction["mean_quality_change"].as_f64().unwrap_or(0.0),
            prediction["min_quality_change"].as_f64().unwrap_or(0.0)
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
    /// Smoothing iterations per measurement.
    #[arg(long, default_value_t = 1000)]
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

/// The smoothing benchmark's input for about `n` vertices: a Delaunay mesh of the unit square
/// (about 2 triangles per vertex), its topology, and metric `metric` resampled on a
/// `texture_size` texture.
pub(crate) fn bench_input(
    n: usize,
    metric: &str,
    texture_size: u32,
) -> anyhow::Result<(Mesh, SmoothTopology, MetricTexture)> {
    if n < 3 {
        return Err(Error::Invalid(format!("mesh size {n} is too small")).into());
    }
    let mesh = generate::rectangle(0.0, 1.0, 0.0, 1.0, 2 * n, 1)?;
    let topo = SmoothTopology::build(&mesh)?;
    let spec = MetricSpec::resolve(Some(metric), None, &mesh)?;
    let tex = MetricTexture::from_spec(&spec, &mesh, texture_size, 1)?;
    Ok((mesh, topo, tex))
}

/// What [`time_sampling`] measured.
pub(crate) struct SamplingTiming {
    pub timing: RunTiming,
    pub free_vertices: usize,
    pub precision: TexelPrecision,
}

/// Time `iterations` sweeps of one sampling path on `backend`, from `start`, after one warm-up
/// sweep (pipeline compilation and first-touch costs stay out of the timing).
#[allow(clippy::too_many_arguments)]
pub(crate) fn time_sampling(
    backend: &Runtime,
    topo: &SmoothTopology,
    schedule: &Schedule,
    tex: &MetricTexture,
    sampling: Sampling,
    params: &SmoothParams,
    start: &[[f64; 2]],
    iterations: usize,
) -> anyhow::Result<SamplingTiming> {
    let mut g = GpuSmoother::new(backend, topo, schedule, tex, sampling, params, start)?;
    g.run(1)?;
    g.set_positions(start)?;
    let timing = g.run(iterations)?;
    Ok(SamplingTiming {
        timing,
        free_vertices: g.free_vertices(),
        precision: g.precision(),
    })
}

pub fn bench(args: &BenchSmoothArgs, global: &GlobalArgs) -> anyhow::Result<()> {
    check_size(args.texture_size, 1)?;
    if args.sampling.is_empty() {
        return Err(Error::Invalid("--sampling needs at least one path".into()).into());
    }
    let backend = open_backend(global)?;
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
        let (mesh, topo, tex) = bench_input(n, &args.metric, args.texture_size)?;
        let schedule = schedule_gpu(&backend, &topo)?;
        sp.finish_and_clear();
        let start = positions(&mesh);
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
            let SamplingTiming {
                timing: t,
                free_vertices,
                precision,
            } = time_sampling(
                &backend,
                &topo,
                &schedule,
                &tex,
                sampling,
                &params,
                &start,
                args.iterations,
            )?;
            let updates = (free_vertices * args.iterations) as f64 / t.wall_seconds;
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
                "texel_precision": format!("{precision:?}"),
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
