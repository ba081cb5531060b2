//! `chromaflow bench backends`: wgpu against CUDA kernel by kernel, in one process, to answer
//! "is wgpu within 1.2x of CUDA on every kernel at 1M+ cells".
//!
//! Each workload builds its mesh, ordering and initial state once and runs them on three
//! columns: CUDA (when compiled in and a driver loads; otherwise the column carries the
//! reason), wgpu with the default runtime checks, and wgpu with the checks off
//! (`--trusted-kernels` semantics: the flag is set only while that column's pipelines are
//! built and run). Both wgpu columns share one adapter and device, so they differ only in the
//! kernels. The per-kernel timings come from the library's benchmark modules, as in
//! `bench dg`, `bench swe`, `bench smooth` and `bench color`.

use crate::commands::GlobalArgs;
use chromaflow::color::bench::{bench_graph, time_gpu_coloring};
use chromaflow::color::gpu_vertices::GpuColoringVariant;
use chromaflow::color::reduce::ColorReduction;
use chromaflow::error::Error;
use chromaflow::order::{prepare, Ordering, PrepareOptions};
use chromaflow::output::write_json_atomic;
use chromaflow::runtime::shaders::{set_trusted_kernels, trusted_kernels};
use chromaflow::runtime::{BackendKind, GpuOptions, Runtime};
use chromaflow::solver::dg::bench::{bench_one, BenchSetup as DgBenchSetup};
use chromaflow::solver::dg::gpu::{Kernel, SurfaceLayout};
use chromaflow::solver::dg::{Case as DgCase, DgMesh};
use chromaflow::solver::smooth::bench::{bench_input, time_sampling, BenchInput as SmoothInput};
use chromaflow::solver::smooth::{schedule_gpu, Sampling, SmoothParams};
use chromaflow::solver::swe::bench::{
    bench_config, bench_mesh, parse_layout, BenchInput as SweBenchInput, DEFAULT_BATCH,
};
use chromaflow::solver::swe::case::{Case as SweCase, DEFAULT_SEED as SWE_SEED};
use chromaflow::solver::swe::gpu::FluxLayout;
use chromaflow::solver::swe::mesh::{EdgeKind, SweMesh};
use chromaflow::solver::swe::Scheme;
use clap::Args;
use std::path::PathBuf;

/// The ratio the command judges against.
const TARGET_RATIO: f64 = 1.2;

/// Steps per submit of the shallow-water whole run (as `bench swe`'s default).
const SWE_BATCH: u32 = DEFAULT_BATCH;

/// The environment variable that forces trusted kernels process-wide.
const TRUSTED_ENV: &str = "CHROMAFLOW_TRUSTED_KERNELS";

/// Options of `chromaflow bench backends`. The global `--backend` and `--trusted-kernels` are
/// ignored (every column is run); `--adapter` picks the wgpu adapter.
#[derive(Args, Debug)]
pub struct BenchBackendsArgs {
    /// Workloads to run (comma-separated).
    #[arg(
        long,
        value_enum,
        value_delimiter = ',',
        default_value = "dg,swe,smooth,color"
    )]
    pub only: Vec<Workload>,
    /// About this many triangles in the DG double Mach reflection mesh.
    #[arg(long, default_value_t = 1_050_000)]
    pub dg_cells: usize,
    /// DG polynomial orders (comma-separated, 0..=4).
    #[arg(long, value_delimiter = ',', default_value = "1,2,3,4")]
    pub orders: Vec<usize>,
    /// About this many cells (triangles) in the shallow-water mesh (Test 1, rect family).
    #[arg(long, default_value_t = 1_024_000)]
    pub swe_cells: usize,
    /// Shallow-water cell ordering.
    #[arg(long, value_enum, default_value_t = Ordering::Rcm)]
    pub swe_ordering: Ordering,
    /// Shallow-water layouts: fused (one kernel per step), scatter (colored edges) and/or
    /// gather (cell-centred), the last two with the update chain.
    #[arg(long, value_delimiter = ',', default_value = "fused,scatter")]
    pub swe_layouts: Vec<String>,
    /// About this many vertices in the smoothing mesh.
    #[arg(long, default_value_t = 1_002_001)]
    pub smooth_vertices: usize,
    /// Smoothing iterations per measurement (1..=1000000).
    #[arg(long, default_value_t = 1000, value_parser = super::bench_steps())]
    pub smooth_iterations: usize,
    /// Texels per side of the smoothing metric texture.
    #[arg(long, default_value_t = 1024)]
    pub texture_size: u32,
    /// About this many vertices in the graph of the GPU vertex coloring.
    #[arg(long, default_value_t = 1_000_000)]
    pub color_vertices: usize,
    /// DG steps per measurement; shallow-water steps per kernel timing (1..=1000000).
    #[arg(long, default_value_t = 20, value_parser = super::bench_steps())]
    pub steps: usize,
    /// Repetitions, the median reported (DG step time, shallow-water kernel times, colorings;
    /// 1..=1000).
    #[arg(long, default_value_t = 3, value_parser = super::bench_repeats())]
    pub repeats: usize,
    /// Print JSON instead of markdown tables.
    #[arg(long)]
    pub json: bool,
    /// Also write the JSON to this file.
    #[arg(long)]
    pub out: Option<PathBuf>,
}

/// A workload of the comparison.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Workload {
    /// DG double Mach reflection, per kernel group and order.
    Dg,
    /// Two-layer shallow water, Test 1, flux and update chain per scheme.
    Swe,
    /// Metric-field vertex smoothing, per sampling path.
    Smooth,
    /// GPU speculative vertex coloring, per variant (whole coloring).
    Color,
}

impl Workload {
    fn name(self) -> &'static str {
        match self {
            Workload::Dg => "dg",
            Workload::Swe => "swe",
            Workload::Smooth => "smooth",
            Workload::Color => "color",
        }
    }
}

/// One column of the tables.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Column {
    Cuda,
    Checked,
    Trusted,
}

impl Column {
    const ALL: [Column; 3] = [Column::Cuda, Column::Checked, Column::Trusted];

    fn key(self) -> &'static str {
        match self {
            Column::Cuda => "cuda",
            Column::Checked => "wgpu_checked",
            Column::Trusted => "wgpu_trusted",
        }
    }

    fn label(self) -> &'static str {
        match self {
            Column::Cuda => "CUDA",
            Column::Checked => "wgpu checked",
            Column::Trusted => "wgpu trusted",
        }
    }

    fn index(self) -> usize {
        self as usize
    }
}

/// Sets whether wgpu pipelines built from now on skip the runtime checks and puts the previous
/// setting back when dropped (early returns included), so one column cannot leak into the
/// next or into the rest of the process.
struct KernelChecks {
    previous: bool,
}

impl KernelChecks {
    fn set(trusted: bool) -> KernelChecks {
        let previous = trusted_kernels();
        set_trusted_kernels(trusted);
        KernelChecks { previous }
    }
}

impl Drop for KernelChecks {
    fn drop(&mut self) {
        set_trusted_kernels(self.previous);
    }
}

/// The opened backends: one wgpu device for both wgpu columns, CUDA or why not.
struct Devices {
    wgpu: Runtime,
    cuda: Result<Runtime, String>,
    quiet: bool,
}

impl Devices {
    /// Run `f` on `col`'s backend with that column's kernel checks; `None` when the column has
    /// no backend.
    fn run<T>(
        &self,
        col: Column,
        what: &str,
        f: impl FnOnce(&Runtime) -> chromaflow::error::Result<T>,
    ) -> Option<chromaflow::error::Result<T>> {
        let backend = match col {
            Column::Cuda => self.cuda.as_ref().ok()?,
            Column::Checked | Column::Trusted => &self.wgpu,
        };
        if !self.quiet {
            eprintln!("bench backends: {what} on {}", col.label());
        }
        let _checks = KernelChecks::set(col == Column::Trusted);
        Some(f(backend))
    }
}

/// What a row measures: one kernel group on the device's timer, a sum of kernel groups, or a
/// whole run on the host's wall clock.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
enum Kind {
    /// A kernel (group) timed on the device, or the finest timing a workload exposes; the rows
    /// the 1.2x verdict covers.
    Kernel,
    /// A sum of kernel rows.
    Sum,
    /// Host wall clock of a whole run (launch and read-back overheads included).
    Wall,
}

/// One table row: a kernel (or a whole run) with its time per step in each column.
struct Row {
    name: String,
    kind: Kind,
    ms: [Option<f64>; 3],
}

impl Row {
    fn ratio(&self, col: Column) -> Option<f64> {
        let cuda = self.ms[Column::Cuda.index()]?;
        let wgpu = self.ms[col.index()]?;
        (cuda > 0.0).then(|| wgpu / cuda)
    }
}

/// One workload's table.
struct Table {
    workload: Workload,
    title: String,
    unit: &'static str,
    size: serde_json::Value,
    rows: Vec<Row>,
    /// Measurements that failed: (column, what, error).
    errors: Vec<(Column, String, String)>,
}

impl Table {
    fn new(workload: Workload, unit: &'static str) -> Table {
        Table {
            workload,
            title: String::new(),
            unit,
            size: serde_json::Value::Null,
            rows: Vec::new(),
            errors: Vec::new(),
        }
    }

    /// Record `ms` for row `name` in `col`, adding the row (in first-seen order) if new.
    fn set(&mut self, name: &str, kind: Kind, col: Column, ms: Option<f64>) {
        let i = match self.rows.iter().position(|r| r.name == name) {
            Some(i) => i,
            None => {
                self.rows.push(Row {
                    name: name.to_string(),
                    kind,
                    ms: [None; 3],
                });
                self.rows.len() - 1
            }
        };
        self.rows[i].ms[col.index()] = ms;
    }

    /// Run `f` on every column; its result goes to `record`, its error to the table's errors.
    fn each_column<T>(
        &mut self,
        dev: &Devices,
        what: &str,
        mut f: impl FnMut(&Runtime) -> chromaflow::error::Result<T>,
        mut record: impl FnMut(&mut Table, Column, T),
    ) {
        for col in Column::ALL {
            match dev.run(col, what, &mut f) {
                None => {}
                Some(Ok(v)) => record(self, col, v),
                Some(Err(e)) => self.errors.push((
                    col,
                    what.to_string(),
                    crate::commands::error_message(&e.into()),
                )),
            }
        }
    }
}

/// DG kernel groups in table order, with their row names.
const DG_KERNELS: [(Kernel, &str); 5] = [
    (Kernel::Volume, "volume"),
    (Kernel::Surface, "surface"),
    (Kernel::Stage, "stage"),
    (Kernel::Limit, "limit"),
    (Kernel::TimeStep, "time step (local dt, min, clock)"),
];

fn dg(args: &BenchBackendsArgs, dev: &Devices) -> anyhow::Result<Table> {
    let mut table = Table::new(Workload::Dg, "ms per step");
    let case = DgCase::double_mach(args.dg_cells);
    let mesh = case.build_mesh(1)?;
    let om = prepare(&mesh, &PrepareOptions::new(Ordering::ColorRenumbered, 1))?;
    let dm = DgMesh::build(&om, &|t| case.boundary(&om.mesh, t))?;
    let label = "3-color GK, Algorithm 5";
    table.title = format!(
        "DG double Mach reflection, {} triangles, {label} ({} colors), {} steps, median of {}",
        dm.num_elements,
        dm.num_colors(),
        args.steps.max(1),
        args.repeats.max(1)
    );
    table.size = serde_json::json!({
        "triangles": dm.num_elements,
        "edges": dm.edges.len(),
        "colors": dm.num_colors(),
        "ordering": label,
        "orders": args.orders,
        "steps": args.steps.max(1),
        "repeats": args.repeats.max(1),
    });
    for &p in &args.orders {
        let setup = DgBenchSetup::new(&dm, &case, p);
        table.each_column(
            dev,
            &format!("dg p = {p}"),
            |b| {
                bench_one(
                    b,
                    &setup,
                    args.steps,
                    args.repeats,
                    label,
                    SurfaceLayout::Colored,
                )
            },
            |t, col, row| {
                for (k, name) in DG_KERNELS {
                    let ms = row.kernel_seconds(k).map(|s| s * 1e3);
                    t.set(&format!("p={p} {name}"), Kind::Kernel, col, ms);
                }
                let sum: f64 = row.kernels.iter().map(|(_, s)| s * 1e3).sum();
                let sum = (!row.kernels.is_empty()).then_some(sum);
                t.set(&format!("p={p} kernels per step"), Kind::Sum, col, sum);
                let wall = Some(row.seconds_per_step * 1e3);
                t.set(&format!("p={p} whole step (wall)"), Kind::Wall, col, wall);
            },
        );
    }
    Ok(table)
}

fn swe(args: &BenchBackendsArgs, dev: &Devices) -> anyhow::Result<Table> {
    let mut table = Table::new(Workload::Swe, "ms per step");
    let layouts: Vec<FluxLayout> = args
        .swe_layouts
        .iter()
        .map(|s| parse_layout(s))
        .collect::<Result<_, _>>()?;
    if layouts.contains(&FluxLayout::AtomicScatter) {
        return Err(Error::Invalid(
            "--swe-layouts: atomic has no wgpu counterpart (WGSL has no float atomics); use \
             scatter or gather"
                .into(),
        )
        .into());
    }
    let case = SweCase::builtin("test1")?;
    let raw = bench_mesh("rect", args.swe_cells)?;
    let ordered = prepare(&raw, &PrepareOptions::new(args.swe_ordering, SWE_SEED))?;
    let mesh = SweMesh::new(&ordered, |_| EdgeKind::Wall)?;
    let (depth, state) = case.initial_state(&mesh)?;
    let input = SweBenchInput {
        mesh: &mesh,
        depth: &depth,
        state: &state,
        case: &case,
        ordering: args.swe_ordering,
    };
    let steps = args.steps.max(1) as u32;
    table.title = format!(
        "Two-layer shallow water, Test 1 to t = {} s, {} cells ({} ordering, {} colors); kernels \
         over {steps} steps, median of {}",
        case.final_time,
        mesh.num_cells(),
        args.swe_ordering,
        mesh.num_colors(),
        args.repeats.max(1)
    );
    table.size = serde_json::json!({
        "cells": mesh.num_cells(),
        "edges": mesh.num_faces(),
        "colors": mesh.num_colors(),
        "ordering": args.swe_ordering.name(),
        "final_time": case.final_time,
        "kernel_steps": steps,
        "repeats": args.repeats.max(1),
    });
    for scheme in Scheme::ALL {
        for &layout in &layouts {
            let tag = format!("{scheme} {}", layout.name());
            table.each_column(
                dev,
                &format!("swe {tag}"),
                |b| bench_config(b, &input, scheme, layout, steps, args.repeats, SWE_BATCH),
                |t, col, row| {
                    let timed = |ms: f64| row.timestamps.then_some(ms);
                    t.set(
                        &format!("{tag} flux"),
                        Kind::Kernel,
                        col,
                        timed(row.flux_ms_per_step),
                    );
                    t.set(
                        &format!("{tag} update chain (local dt, min, clock, update)"),
                        Kind::Kernel,
                        col,
                        timed(row.update_ms_per_step),
                    );
                    t.set(
                        &format!("{tag} flux + update"),
                        Kind::Sum,
                        col,
                        timed(row.flux_ms_per_step + row.update_ms_per_step),
                    );
                    let wall = row.seconds * 1e3 / row.steps.max(1) as f64;
                    t.set(
                        &format!("{tag} whole run (wall)"),
                        Kind::Wall,
                        col,
                        Some(wall),
                    );
                },
            );
        }
    }
    Ok(table)
}

fn smooth(args: &BenchBackendsArgs, dev: &Devices) -> anyhow::Result<Table> {
    let mut table = Table::new(Workload::Smooth, "ms per iteration");
    let SmoothInput {
        mesh,
        topo,
        tex,
        start,
    } = bench_input(args.smooth_vertices, "shock", args.texture_size)?;
    // One schedule for every column: the speculative coloring is not deterministic, and the
    // columns must sweep the same colors in the same order.
    let schedule = {
        let _checks = KernelChecks::set(false);
        schedule_gpu(&dev.wgpu, &topo)?
    };
    let params = SmoothParams::default();
    let iterations = args.smooth_iterations.max(1);
    table.title = format!(
        "Vertex smoothing, {} vertices ({} free, {} colors), shock metric on a {}^2 texture, {} \
         iterations",
        mesh.num_points(),
        schedule.order.len(),
        schedule.num_colors(),
        args.texture_size,
        iterations
    );
    table.size = serde_json::json!({
        "vertices": mesh.num_points(),
        "free_vertices": schedule.order.len(),
        "colors": schedule.num_colors(),
        "texture_size": args.texture_size,
        "iterations": iterations,
    });
    for sampling in Sampling::ALL {
        table.each_column(
            dev,
            &format!("smooth {sampling}"),
            |b| {
                time_sampling(
                    b, &topo, &schedule, &tex, sampling, &params, &start, iterations,
                )
            },
            |t, col, m| {
                let per = |s: f64| s * 1e3 / iterations as f64;
                t.set(
                    &format!("{sampling} sampling, sweep kernels"),
                    Kind::Kernel,
                    col,
                    m.timing.kernel_seconds.map(per),
                );
                t.set(
                    &format!("{sampling} sampling, whole run (wall)"),
                    Kind::Wall,
                    col,
                    Some(per(m.timing.wall_seconds)),
                );
            },
        );
    }
    Ok(table)
}

fn color(args: &BenchBackendsArgs, dev: &Devices) -> anyhow::Result<Table> {
    let mut table = Table::new(Workload::Color, "ms per coloring");
    // A Delaunay triangulation of the square has about 2 triangles per vertex.
    let (mesh, topo) = bench_graph(2 * args.color_vertices.max(2))?;
    let graph = &topo.vertex_neighbors;
    table.title = format!(
        "GPU vertex coloring, {} vertices; whole coloring (speculative rounds, color \
         reduction, read-back; wall clock, no per-pass timers), median of {}",
        mesh.num_points(),
        args.repeats.max(1)
    );
    table.size = serde_json::json!({
        "vertices": mesh.num_points(),
        "repeats": args.repeats.max(1),
    });
    for variant in [GpuColoringVariant::Topology, GpuColoringVariant::Data] {
        let name = format!("{variant:?}").to_lowercase();
        table.each_column(
            dev,
            &format!("color {name}"),
            |b| time_gpu_coloring(b, graph, variant, &ColorReduction::default(), args.repeats),
            |t, col, (_, seconds)| {
                let row = format!("{name}-driven, whole coloring");
                t.set(&row, Kind::Kernel, col, Some(seconds * 1e3));
            },
        );
    }
    Ok(table)
}

/// Why the CUDA column is empty (a binary without CUDA says how to rebuild, a machine without
/// the driver says what is missing), or its backend.
fn open_cuda() -> Result<Runtime, String> {
    Runtime::new(BackendKind::Cuda, &GpuOptions::default()).map_err(|e| e.to_string())
}

/// The 1.2x verdict for one wgpu column over the kernel rows of every table: `None` without a
/// CUDA column.
fn verdict(tables: &[Table], col: Column) -> Option<serde_json::Value> {
    let mut compared = 0;
    let mut within = 0;
    let mut worst: Option<(f64, String)> = None;
    for t in tables {
        for r in t.rows.iter().filter(|r| r.kind == Kind::Kernel) {
            let Some(ratio) = r.ratio(col) else { continue };
            compared += 1;
            if ratio <= TARGET_RATIO {
                within += 1;
            }
            if worst.as_ref().is_none_or(|(w, _)| ratio > *w) {
                worst = Some((ratio, format!("{} {}", t.workload.name(), r.name)));
            }
        }
    }
    let (ratio, kernel) = worst?;
    Some(serde_json::json!({
        "within_target_on_every_kernel": within == compared,
        "kernels_compared": compared,
        "kernels_within_target": within,
        "worst_ratio": ratio,
        "worst_kernel": kernel,
    }))
}

fn fmt_ms(v: Option<f64>) -> String {
    match v {
        None => "-".into(),
        Some(v) if v < 0.1 => format!("{v:.4}"),
        Some(v) => format!("{v:.3}"),
    }
}

fn fmt_ratio(v: Option<f64>) -> String {
    match v {
        None => "-".into(),
        Some(v) if v > TARGET_RATIO => format!("**{v:.2}**"),
        Some(v) => format!("{v:.2}"),
    }
}

/// Run `chromaflow bench backends`.
pub fn run(args: &BenchBackendsArgs, global: &GlobalArgs) -> anyhow::Result<()> {
    if std::env::var(TRUSTED_ENV).is_ok_and(|v| v == "1") {
        return Err(Error::Invalid(format!(
            "bench backends: unset {TRUSTED_ENV}: it turns the runtime checks off process-wide, \
             so the 'wgpu checked' column would run unchecked kernels"
        ))
        .into());
    }
    if let Some(p) = args
        .orders
        .iter()
        .find(|&&p| p > chromaflow::solver::dg::basis::MAX_ORDER)
    {
        return Err(Error::Invalid(format!("--orders: p must be 0..=4, got {p}")).into());
    }
    if args.only.contains(&Workload::Smooth) {
        chromaflow::solver::smooth::texture::check_size(args.texture_size, 1)?;
    }
    if args.only.is_empty() {
        return Err(Error::Invalid("--only needs at least one workload".into()).into());
    }
    let wgpu = Runtime::new(BackendKind::Wgpu, &global.gpu_options())?;
    let dev = Devices {
        wgpu,
        cuda: open_cuda(),
        quiet: global.quiet,
    };
    let cuda_name = dev.cuda.as_ref().ok().map(|b| b.name());
    let wgpu_name = dev.wgpu.name();
    let timestamps = dev.wgpu.has_timestamps();
    let mut tables = Vec::new();
    for w in [
        Workload::Dg,
        Workload::Swe,
        Workload::Smooth,
        Workload::Color,
    ] {
        if !args.only.contains(&w) {
            continue;
        }
        tables.push(match w {
            Workload::Dg => dg(args, &dev)?,
            Workload::Swe => swe(args, &dev)?,
            Workload::Smooth => smooth(args, &dev)?,
            Workload::Color => color(args, &dev)?,
        });
    }
    let columns = serde_json::json!({
        "cuda": match &dev.cuda {
            Ok(_) => serde_json::json!({"available": true, "device": cuda_name, "timer": "CUDA events"}),
            Err(reason) => serde_json::json!({"available": false, "device": null, "reason": reason}),
        },
        "wgpu_checked": {
            "available": true, "device": wgpu_name, "runtime_checks": true,
            "timer": if timestamps { "timestamp queries" } else { "none (no TIMESTAMP_QUERY)" },
        },
        "wgpu_trusted": {
            "available": true, "device": wgpu_name, "runtime_checks": false,
            "timer": if timestamps { "timestamp queries" } else { "none (no TIMESTAMP_QUERY)" },
        },
    });
    let verdicts = serde_json::json!({
        "target_ratio": TARGET_RATIO,
        "wgpu_checked": verdict(&tables, Column::Checked),
        "wgpu_trusted": verdict(&tables, Column::Trusted),
    });
    let failures: usize = tables.iter().map(|t| t.errors.len()).sum();
    let json = serde_json::json!({
        "columns": columns,
        "verdict": verdicts,
        "failures": failures,
        "workloads": tables.iter().map(|t| serde_json::json!({
            "workload": t.workload.name(),
            "title": t.title,
            "unit": t.unit,
            "size": t.size,
            "rows": t.rows.iter().map(|r| serde_json::json!({
                "kernel": r.name,
                "kind": r.kind,
                "cuda_ms": r.ms[Column::Cuda.index()],
                "wgpu_checked_ms": r.ms[Column::Checked.index()],
                "wgpu_trusted_ms": r.ms[Column::Trusted.index()],
                "checked_over_cuda": r.ratio(Column::Checked),
                "trusted_over_cuda": r.ratio(Column::Trusted),
            })).collect::<Vec<_>>(),
            "errors": t.errors.iter().map(|(c, what, e)| serde_json::json!({
                "column": c.key(), "measurement": what, "error": e,
            })).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
    });
    if let Some(path) = &args.out {
        write_json_atomic(path, &json)?;
    }
    if args.json {
        println!("{}", serde_json::to_string_pretty(&json)?);
    } else {
        print_markdown(&dev, &tables, &json);
    }
    if failures > 0 {
        return Err(Error::Gpu(format!(
            "bench backends: {failures} measurement(s) failed (listed with the tables)"
        ))
        .into());
    }
    Ok(())
}

fn print_markdown(dev: &Devices, tables: &[Table], json: &serde_json::Value) {
    println!("# wgpu against CUDA, one run\n");
    match &dev.cuda {
        Ok(b) => println!("- CUDA: {} (CUDA events)", b.name()),
        Err(reason) => println!("- CUDA: n/a ({reason})"),
    }
    println!(
        "- wgpu checked: {} (default runtime checks; {})",
        dev.wgpu.name(),
        json["columns"]["wgpu_checked"]["timer"]
            .as_str()
            .unwrap_or("")
    );
    println!(
        "- wgpu trusted: {} (no runtime checks, as --trusted-kernels)",
        dev.wgpu.name()
    );
    for t in tables {
        println!("\n## {} ({})\n", t.title, t.unit);
        println!(
            "| kernel | CUDA ms | wgpu checked ms | wgpu trusted ms | checked/CUDA | trusted/CUDA |"
        );
        println!("|---|---:|---:|---:|---:|---:|");
        for r in &t.rows {
            println!(
                "| {} | {} | {} | {} | {} | {} |",
                r.name,
                fmt_ms(r.ms[Column::Cuda.index()]),
                fmt_ms(r.ms[Column::Checked.index()]),
                fmt_ms(r.ms[Column::Trusted.index()]),
                fmt_ratio(r.ratio(Column::Checked)),
                fmt_ratio(r.ratio(Column::Trusted)),
            );
        }
        for (col, what, e) in &t.errors {
            println!("\nFAILED: {what} on {}: {e}", col.label());
        }
    }
    println!();
    for col in [Column::Checked, Column::Trusted] {
        let v = &json["verdict"][col.key()];
        if v.is_null() {
            println!(
                "{} within {TARGET_RATIO}x of CUDA on every kernel: n/a (no CUDA column)",
                col.label()
            );
            continue;
        }
        println!(
            "{} within {TARGET_RATIO}x of CUDA on every kernel: {} ({} of {} kernels within; \
             worst {:.2}x, {})",
            col.label(),
            if v["within_target_on_every_kernel"].as_bool() == Some(true) {
                "YES"
            } else {
                "NO"
            },
            v["kernels_within_target"],
            v["kernels_compared"],
            v["worst_ratio"].as_f64().unwrap_or(f64::NAN),
            v["worst_kernel"].as_str().unwrap_or("")
        );
    }
    println!(
        "\nRows: kernel = one kernel group on the device timer (the verdict covers these; the \
         coloring has no per-pass timers, so its whole coloring stands in); sum = kernel rows \
         added; wall = host wall clock of a whole run."
    );
}
