//! `chromaflow dg`: run the DG Euler solver on a builtin case (vortex, dmr, kh) or a TOML case
//! file, writing density (and optionally pressure, Mach, speed) PNG snapshots, VTU files and a
//! CSV of conserved totals and errors (the run itself is the library's
//! [`Simulation::run`]; this adapter parses flags and prints). `chromaflow bench dg`: time per step of DMR p = 1 under
//! 5-color greedy vs 3-color GK coloring, with and without renumbering (Algorithm 5, and for
//! 3 colors also its chain variant coalescing the second color), and p = 1..4 throughput,
//! with the surface kernel's modelled GB/s against the device's measured copy bandwidth.

use crate::commands::progress::bar;
use crate::commands::GlobalArgs;
use chromaflow::color::faces::greedy_face_coloring;
use chromaflow::error::Error;
use chromaflow::mesh::{MeshSource, Topology};
use chromaflow::order::{apply_ordering, prepare, OrderedMesh, Ordering, PrepareOptions};
use chromaflow::output::write_json_atomic;
use chromaflow::runtime::bandwidth::copy_bandwidth;
use chromaflow::runtime::{median, BackendKind, GpuOptions, Runtime};
use chromaflow::solver::dg::cpu::Operator;
use chromaflow::solver::dg::gpu::{GpuConfig, GpuDg, Kernel};
use chromaflow::solver::dg::{
    BasisTables, Case, DgMesh, NumericalFlux, Quantity, Simulation, SimulationOptions,
};
use clap::Args;
use std::path::PathBuf;
use std::time::Instant;

/// Options of `chromaflow dg`.
#[derive(Args, Debug)]
pub struct DgArgs {
    /// TOML case file.
    #[arg(long, conflicts_with = "builtin")]
    pub case: Option<PathBuf>,
    /// Builtin case: vortex, dmr (double Mach reflection), kh (Kelvin-Helmholtz).
    #[arg(long)]
    pub builtin: Option<String>,
    /// Polynomial order p (0..=4).
    #[arg(long)]
    pub order: Option<usize>,
    /// Mesh file (.msh) or builtin spec replacing the case's mesh.
    #[arg(long, conflicts_with = "cells")]
    pub mesh: Option<String>,
    /// About this many triangles for the builtin rectangle mesh of the case.
    #[arg(long)]
    pub cells: Option<usize>,
    /// Element/face ordering.
    #[arg(long, value_enum, default_value_t = Ordering::ColorRenumbered)]
    pub ordering: Ordering,
    /// Numerical flux.
    #[arg(long, value_enum)]
    pub flux: Option<NumericalFlux>,
    /// Output directory.
    #[arg(long, default_value = "out/dg")]
    pub out: PathBuf,
    /// Snapshot interval in time units (default: the case's).
    #[arg(long)]
    pub snapshot_every: Option<f64>,
    /// Final time (default: the case's).
    #[arg(long)]
    pub t_end: Option<f64>,
    /// CFL number (default: the case's).
    #[arg(long)]
    pub cfl: Option<f64>,
    /// Fixed time step instead of the CFL one.
    #[arg(long)]
    pub dt: Option<f64>,
    /// Extra fields to plot besides density: pressure, mach, speed (comma separated).
    #[arg(long, value_delimiter = ',')]
    pub fields: Vec<String>,
    /// Also write a VTU file per snapshot.
    #[arg(long)]
    pub vtu: bool,
    /// Steps recorded per GPU submit.
    #[arg(long, default_value_t = 50)]
    pub batch: usize,
    /// Mesh seed.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
}

fn load_case(args: &DgArgs) -> anyhow::Result<Case> {
    let mut case = match (&args.case, &args.builtin) {
        (Some(path), _) => Case::from_file(path)?,
        (None, Some(name)) => Case::builtin(name, args.cells)?,
        (None, None) => Case::builtin("dmr", args.cells)?,
    };
    if let Some(n) = args.cells {
        if let MeshSource::Rectangle { n: cells, .. } = &mut case.mesh {
            *cells = n;
        }
    }
    if let Some(m) = &args.mesh {
        case.mesh = MeshSource::from_arg(m);
    }
    if let Some(p) = args.order {
        if p > chromaflow::solver::dg::basis::MAX_ORDER {
            return Err(Error::Invalid(format!("--order must be 0..=4, got {p}")).into());
        }
        case.order = p;
    }
    if let Some(f) = args.flux {
        case.flux = f;
    }
    if let Some(t) = args.t_end {
        if t.is_nan() || t <= 0.0 {
            return Err(Error::Invalid(format!("--t-end must be positive, got {t}")).into());
        }
        case.t_end = t;
    }
    if let Some(c) = args.cfl {
        if c.is_nan() || c <= 0.0 || c > 1.0 {
            return Err(Error::Invalid(format!("--cfl must be in (0, 1], got {c}")).into());
        }
        case.cfl = c;
    }
    if let Some(s) = args.snapshot_every {
        if s.is_nan() || s <= 0.0 {
            return Err(
                Error::Invalid(format!("--snapshot-every must be positive, got {s}")).into(),
            );
        }
        case.snapshot_every = Some(s);
    }
    Ok(case)
}

pub fn run(args: &DgArgs, global: &GlobalArgs) -> anyhow::Result<()> {
    let case = load_case(args)?;
    let mut fields = vec![Quantity::Density];
    for f in &args.fields {
        let q: Quantity = f.parse().map_err(|_| {
            Error::Invalid(format!(
                "--fields: unknown field '{f}' (expected pressure, mach, speed)"
            ))
        })?;
        if q != Quantity::Density {
            fields.push(q);
        }
    }
    if let Some(dt) = args.dt {
        if !(dt > 0.0 && dt.is_finite()) {
            return Err(Error::Invalid(format!("--dt must be positive, got {dt}")).into());
        }
    }
    let backend = Runtime::new(
        global.backend,
        &GpuOptions {
            adapter: global.adapter.clone(),
        },
    )?;
    let opts = SimulationOptions {
        ordering: args.ordering,
        seed: args.seed,
        fixed_dt: args.dt,
        batch: args.batch,
    };
    let mut sim = Simulation::new(&case, &backend, &opts)?;
    if !global.quiet {
        let dm = sim.mesh();
        eprintln!(
            "dg: {} | {} triangles, {} edges in {} colors ({}), p = {}, {} flux, limiter {}, {}",
            case.name,
            dm.num_elements,
            dm.edges.len(),
            dm.num_colors(),
            args.ordering,
            case.order,
            case.flux.name(),
            if case.limiter { "on" } else { "off" },
            sim.device_name()
        );
    }
    let pb = bar(1000, "time", global.quiet);
    let summary = sim.run(&args.out, &fields, args.vtu, |t, _| {
        pb.set_position((1000.0 * t / case.t_end) as u64)
    })?;
    pb.finish_and_clear();
    if !global.quiet {
        let secs = summary.wall_seconds;
        eprintln!(
            "dg: t = {} after {} steps in {secs:.2} s ({:.3} ms/step); wrote {} snapshots to {}",
            summary.t,
            summary.steps,
            1e3 * secs / summary.steps.max(1) as f64,
            summary.snapshots,
            args.out.display()
        );
    }
    Ok(())
}

/// Options of `chromaflow bench dg`.
#[derive(Args, Debug)]
pub struct BenchDgArgs {
    /// About this many triangles in the DMR mesh.
    #[arg(long, default_value_t = 20000)]
    pub cells: usize,
    /// Time steps per measurement.
    #[arg(long, default_value_t = 20)]
    pub steps: usize,
    /// Repetitions (the median is reported).
    #[arg(long, default_value_t = 3)]
    pub repeats: usize,
    /// MiB per buffer of the device copy-bandwidth measurement (0 skips it).
    #[arg(long, default_value_t = 512)]
    pub copy_mib: u64,
    /// Print JSON instead of a markdown table.
    #[arg(long)]
    pub json: bool,
    /// Also write the JSON to this file.
    #[arg(long)]
    pub out: Option<PathBuf>,
}

/// One row of `bench dg` (also what `bench backends` reads per DG order).
pub(crate) struct BenchRow {
    pub label: String,
    pub p: usize,
    pub colors: usize,
    /// Runge-Kutta stages per step.
    pub stages: usize,
    pub seconds_per_step: f64,
    pub dof_per_s: f64,
    pub gbytes_per_s: f64,
    /// Seconds per step of each kernel group, sorted by name; empty without device timers.
    pub kernels: Vec<(Kernel, f64)>,
    /// "ok", or why the timed run is not a physical one (a stalled clock, non-finite values):
    /// a benchmark of a run that stopped advancing would time kernels on frozen data.
    pub run_check: String,
}

impl BenchRow {
    /// Seconds per step of kernel `k`, when it was timed.
    pub fn kernel_seconds(&self, k: Kernel) -> Option<f64> {
        self.kernels.iter().find(|(x, _)| *x == k).map(|(_, s)| *s)
    }
}

/// What one DG benchmark row needs besides the device, prepared once so that every backend
/// runs the same mesh, basis tables and initial state (the projection is slow at 1M cells).
pub(crate) struct DgBenchSetup<'a> {
    pub dm: &'a DgMesh,
    pub case: &'a Case,
    pub tables: BasisTables,
    pub c0: Vec<f64>,
}

impl<'a> DgBenchSetup<'a> {
    pub fn new(dm: &'a DgMesh, case: &'a Case, p: usize) -> DgBenchSetup<'a> {
        let tables = BasisTables::new(p);
        let c0 = Operator {
            mesh: dm,
            tables: &tables,
            flux: case.flux,
            state_fn: case.initial,
            states: vec![],
        }
        .project(&|x, y| case.initial.eval(x, y, 0.0));
        DgBenchSetup {
            dm,
            case,
            tables,
            c0,
        }
    }
}

/// Time `steps` steps of `setup` on `backend`: a warm-up run, then the median of `repeats`
/// wall-clock runs, and per-kernel times from the device's timers over min(steps, 8) steps.
pub(crate) fn bench_one(
    backend: &Runtime,
    setup: &DgBenchSetup,
    steps: usize,
    repeats: usize,
    label: &str,
    atomic_surface: bool,
) -> anyhow::Result<BenchRow> {
    let DgBenchSetup {
        dm,
        case,
        tables,
        c0,
    } = setup;
    let steps = steps.max(1);
    let p = tables.p;
    let mut gpu = GpuDg::new(
        backend,
        dm,
        tables,
        &GpuConfig {
            flux: case.flux,
            state_fn: case.initial,
            states: vec![],
            cfl: case.cfl,
            fixed_dt: None,
            limiter: true,
        },
    )?;
    gpu.set_atomic_surface(atomic_surface)?;
    let mut samples = Vec::new();
    let mut run_check = String::new();
    let mut kernel_times: std::collections::HashMap<Kernel, Vec<f64>> = Default::default();
    for rep in 0..repeats.max(1) + 1 {
        gpu.limit_once(c0)?;
        gpu.set_clock(0.0, 1e9)?;
        gpu.wait()?;
        let start = Instant::now();
        gpu.advance(steps)?;
        gpu.wait()?;
        let secs = start.elapsed().as_secs_f64();
        if rep > 0 {
            samples.push(secs / steps as f64);
        }
        if rep == 0 {
            run_check = check_bench_run(&gpu, steps)?;
        }
        if rep == 1 {
            let n = steps.min(8);
            if let Some(passes) = gpu.time_kernels(n)? {
                for (k, s) in passes {
                    kernel_times.entry(k).or_default().push(s / n as f64);
                }
            }
        }
    }
    let per_step = median(&samples);
    let ndof = 4 * tables.np * dm.num_elements;
    let stages = chromaflow::solver::dg::rk::scheme(p).len();
    // Bytes per stage: volume reads c, writes rhs; surface reads c of both sides, reads and
    // writes rhs of both; stage reads R0, rhs, a stage register and writes one; limiter reads
    // and writes one register: about 12 register-sized transfers, in f32.
    let bytes = stages as f64 * 12.0 * ndof as f64 * 4.0;
    let mut kernels: Vec<(Kernel, f64)> = kernel_times
        .into_iter()
        .map(|(k, v)| (k, v.iter().sum::<f64>()))
        .collect();
    kernels.sort_by_key(|(k, _)| format!("{k:?}"));
    Ok(BenchRow {
        label: label.to_string(),
        p,
        colors: dm.num_colors(),
        stages,
        seconds_per_step: per_step,
        dof_per_s: ndof as f64 * stages as f64 / per_step,
        gbytes_per_s: bytes / per_step / 1e9,
        kernels,
        run_check,
    })
}

/// After `steps` steps from t = 0 the clock must count them all with t > 0 and finite, and
/// every coefficient must be finite.
fn check_bench_run(gpu: &GpuDg, steps: usize) -> anyhow::Result<String> {
    let clock = gpu.clock()?;
    if clock.steps != steps as u64 || !(clock.t > 0.0 && clock.t.is_finite()) {
        return Ok(format!(
            "stalled: {} of {steps} steps, t = {:e}, dt = {:e}",
            clock.steps, clock.t, clock.dt
        ));
    }
    let c = gpu.solution()?;
    Ok(match c.iter().position(|v| !v.is_finite()) {
        Some(i) => format!("non-finite coefficient {i} after {steps} steps"),
        None => "ok".to_string(),
    })
}

/// Modelled DRAM bytes the surface kernel (`shaders/dg_surface.wgsl`) moves in one RK stage,
/// f32, every load a miss: per side of an edge, the element's coefficients read
/// (4 equations x NP modes x 4 B), its rhs read and written (2 x 4 x NP x 4 B) and its 1/det J
/// (4 B); per edge, the `DgEdge` record (32 B). Boundary edges have one side; periodic
/// partners count as interior. Basis tables, case data and the clock are left out (small and
/// cached). The number behind `bench dg`'s surface GB/s, so the figure can be recomputed.
pub fn surface_bytes_per_stage(dm: &DgMesh, np: usize) -> f64 {
    let side = (4 * np * 4 + 2 * 4 * np * 4 + 4) as f64;
    let record = std::mem::size_of::<chromaflow::solver::dg::mesh::DgEdge>() as f64;
    let interior = dm.edges.iter().filter(|e| e.right.is_some()).count() as f64;
    let boundary = dm.edges.len() as f64 - interior;
    interior * (record + 2.0 * side) + boundary * (record + side)
}

/// Timed copy runs (the median is reported), after one warm-up run.
const COPY_SAMPLES: u32 = 5;

pub fn bench(args: &BenchDgArgs, global: &GlobalArgs) -> anyhow::Result<()> {
    let backend = Runtime::new(
        global.backend,
        &GpuOptions {
            adapter: global.adapter.clone(),
        },
    )?;
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
    let case = Case::double_mach(args.cells);
    let mesh = case.build_mesh(1)?;
    let topo = Topology::build(&mesh)?;
    let greedy = greedy_face_coloring(&mesh, &topo)?;
    let variants: Vec<(String, OrderedMesh)> = vec![
        (
            "5-color greedy, original".into(),
            apply_ordering(&mesh, &topo, &greedy, Ordering::Original)?,
        ),
        (
            "5-color greedy, Algorithm 5".into(),
            apply_ordering(&mesh, &topo, &greedy, Ordering::ColorRenumbered)?,
        ),
        (
            "3-color GK, original".into(),
            prepare(&mesh, &PrepareOptions::new(Ordering::Original, 1))?,
        ),
        (
            "3-color GK, chains".into(),
            prepare(&mesh, &PrepareOptions::new(Ordering::ColorChains, 1))?,
        ),
        (
            "3-color GK, Algorithm 5".into(),
            prepare(&mesh, &PrepareOptions::new(Ordering::ColorRenumbered, 1))?,
        ),
    ];
    // (row, modelled surface bytes per step)
    let mut rows: Vec<(BenchRow, f64)> = Vec::new();
    let mut run = |dm: &DgMesh, p: usize, label: &str, atomic: bool| -> anyhow::Result<()> {
        let setup = DgBenchSetup::new(dm, &case, p);
        let row = bench_one(&backend, &setup, args.steps, args.repeats, label, atomic)?;
        let surface_bytes = row.stages as f64 * surface_bytes_per_stage(dm, setup.tables.np);
        rows.push((row, surface_bytes));
        Ok(())
    };
    // p = 1 for every variant; p = 2..4 for the last one (Algorithm 5) only, and on CUDA the
    // same again with one atomicAdd surface launch instead of one launch per color.
    let last = variants.len() - 1;
    let cuda = backend.kind() == BackendKind::Cuda;
    for (i, (label, om)) in variants.iter().enumerate() {
        let dm = DgMesh::build(om, &|t| case.boundary(&om.mesh, t))?;
        let orders = if i == last { 1..=4 } else { 1..=1 };
        for p in orders {
            run(&dm, p, label, false)?;
            if cuda && i == last {
                run(&dm, p, &format!("{label}, atomicAdd surface"), true)?;
            }
        }
    }
    // Surface GB/s and its share of the copy bandwidth, when the surface kernel was timed.
    let surface = |r: &BenchRow, bytes: f64| -> (Option<f64>, Option<f64>) {
        let gbs = r
            .kernel_seconds(Kernel::Surface)
            .filter(|s| *s > 0.0)
            .map(|s| bytes / s / 1e9);
        let pct = gbs.zip(copy.as_ref()).map(|(g, c)| 100.0 * g / c.gb_per_s);
        (gbs, pct)
    };
    let json = serde_json::json!({
        "adapter": backend.name(),
        "backend": backend.kind().name(),
        "case": "double Mach reflection",
        "elements": mesh.num_elements(),
        "steps": args.steps,
        "copy_bandwidth": copy,
        "surface_bytes_model": "per edge and RK stage: per side 4*NP*4 B coefficients read + 2*4*NP*4 B rhs read-modify-write + 4 B 1/detJ; per edge the 32 B DgEdge record; boundary edges one side",
        "rows": rows.iter().map(|(r, bytes)| {
            let (gbs, pct) = surface(r, *bytes);
            serde_json::json!({
                "variant": r.label,
                "p": r.p,
                "colors": r.colors,
                "ms_per_step": r.seconds_per_step * 1e3,
                "dof_updates_per_s": r.dof_per_s,
                "effective_gb_per_s": r.gbytes_per_s,
                "surface_bytes_per_step": bytes,
                "surface_gb_per_s": gbs,
                "surface_percent_of_copy": pct,
                "run_check": r.run_check,
                "kernel_ms_per_step": r.kernels.iter()
                    .map(|(k, s)| (format!("{k:?}").to_lowercase(), serde_json::json!(s * 1e3)))
                    .collect::<serde_json::Map<_, _>>(),
            })
        }).collect::<Vec<_>>(),
    });
    if let Some(path) = &args.out {
        write_json_atomic(path, &json)?;
    }
    if args.json {
        println!("{}", serde_json::to_string_pretty(&json)?);
        return Ok(());
    }
    println!(
        "DG Euler, double Mach reflection, {} triangles, {} steps, {}",
        mesh.num_elements(),
        args.steps,
        backend.name()
    );
    match &copy {
        Some(c) => println!(
            "copy bandwidth: {:.1} GB/s (read + write, {} MiB buffers; {})\n",
            c.gb_per_s,
            c.buffer_bytes >> 20,
            c.method
        ),
        None => println!("copy bandwidth: n/a\n"),
    }
    println!("| variant | p | colors | ms/step | DOF updates/s | eff. GB/s | surface GB/s | surface % of copy | kernels (ms/step) | run check |");
    println!("|---|---|---|---|---|---|---|---|---|---|");
    let or_na = |v: Option<f64>, digits: usize| {
        v.map_or_else(|| "n/a".to_string(), |v| format!("{v:.digits$}"))
    };
    for (r, bytes) in &rows {
        let k: Vec<String> = r
            .kernels
            .iter()
            .map(|(k, s)| format!("{k:?} {:.3}", s * 1e3))
            .collect();
        let (gbs, pct) = surface(r, *bytes);
        println!(
            "| {} | {} | {} | {:.3} | {:.3e} | {:.2} | {} | {} | {} | {} |",
            r.label,
            r.p,
            r.colors,
            r.seconds_per_step * 1e3,
            r.dof_per_s,
            r.gbytes_per_s,
            or_na(gbs, 1),
            or_na(pct, 1),
            if k.is_empty() {
                "n/a (no timestamps)".to_string()
            } else {
                k.join(", ")
            },
            r.run_check
        );
    }
    println!();
    println!(
        "Surface bytes per edge and RK stage: per side 4*NP*4 B coefficients + 2*4*NP*4 B rhs \
         read-modify-write + 4 B 1/detJ, plus the 32 B edge record; boundary edges one side \
         (surface_bytes_per_stage in src/commands/dg.rs)."
    );
    Ok(())
}
