//! `chromaflow dg`: run the DG Euler solver on a builtin case (vortex, gk19-vortex, dmr, kh) or
//! a TOML case file, writing density (and optionally pressure, Mach, speed) PNG snapshots, VTU
//! files and a CSV of conserved totals and errors (the run itself is the library's
//! [`Simulation::run`]; this adapter parses flags and prints). `chromaflow bench dg`: time per
//! step of DMR p = 1 under 5-color greedy vs 3-color GK coloring, with and without renumbering
//! (Algorithm 5, and for 3 colors also its chain variant coalescing the second color), and
//! p = 1..4 throughput, with the surface kernel's modelled GB/s against the device's measured
//! copy bandwidth (the timing and the model are [`chromaflow::solver::dg::bench`]'s).

use crate::commands::progress::RunProgress;
use crate::commands::{GlobalArgs, RunArgs};
use chromaflow::error::Error;
use chromaflow::mesh::MeshSource;
use chromaflow::order::{prepare, Ordering, PrepareOptions};
use chromaflow::output::write_json_atomic;
use chromaflow::runtime::bandwidth::copy_bandwidth;
use chromaflow::runtime::BackendKind;
use chromaflow::solver::dg::amr::driver::{DEVICE_TIMING_EVERY, DEVICE_TIMING_WARMUP};
use chromaflow::solver::dg::amr::{
    AmrOptions, AmrStats, Compaction, IndicatorField, ReorderPolicy,
};
use chromaflow::solver::dg::bench::{
    bench_one, ordering_variants, BenchRow, BenchSetup, COPY_SAMPLES, SURFACE_BYTES_MODEL,
};
use chromaflow::solver::dg::cpu;
use chromaflow::solver::dg::gpu::SurfaceLayout;
use chromaflow::solver::dg::plot;
use chromaflow::solver::dg::{
    Case, DgMesh, NumericalFlux, Quantity, RunSummary, Simulation, SimulationOptions,
    SnapshotOptions,
};
use chromaflow::solver::MAX_BATCH;
use clap::Args;
use std::path::PathBuf;
use std::time::Instant;

/// Most isolines `--contours` draws (more would fill a PNG).
const MAX_CONTOURS: usize = 1000;

/// Options of `chromaflow dg`.
#[derive(Args, Debug)]
pub struct DgArgs {
    /// TOML case file.
    #[arg(long, conflicts_with = "builtin")]
    pub case: Option<PathBuf>,
    /// Builtin case: vortex, gk19-vortex (GK19 section 5.1.1), dmr (double Mach reflection), kh
    /// (Kelvin-Helmholtz).
    #[arg(long)]
    pub builtin: Option<String>,
    /// Polynomial order p (0..=4).
    #[arg(long)]
    pub order: Option<usize>,
    /// Mesh file (.msh) or builtin spec replacing the case's mesh.
    #[arg(long, conflicts_with = "cells")]
    pub mesh: Option<String>,
    /// About this many triangles for the builtin rectangle mesh of the case (before --refine).
    #[arg(long)]
    pub cells: Option<usize>,
    /// Refine the case's mesh uniformly K times (0..=8; default: the case's `refine`, else 0):
    /// every triangle split into four by its edge midpoints, so h halves and the elements
    /// quadruple each time, boundary tags and periodic pairs kept. Runs with K = 0, 1, 2, ...
    /// are a convergence study on nested meshes.
    #[arg(long, value_name = "K")]
    pub refine: Option<u8>,
    /// Element/face ordering.
    #[arg(long, value_enum, default_value_t = Ordering::ColorRenumbered)]
    pub ordering: Ordering,
    /// Surface integral layout: gathered (traces, edge fluxes, lift; the default, with or
    /// without --amr-levels), colored (one launch per edge color) or atomic (CUDA only).
    #[arg(long)]
    pub surface: Option<SurfaceLayout>,
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
    /// Also write a VTU file per snapshot (VTK Lagrange triangles of degree p, fields at the
    /// nodes) and the collection dg.pvd listing them with their times (open it in ParaView).
    #[arg(long)]
    pub vtu: bool,
    /// Draw N isolines over every PNG, evenly spaced inside the color range (DMR pictures
    /// conventionally show 30 density contours); 0 for none.
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub contours: usize,
    /// Steps recorded per GPU submit.
    #[arg(long, default_value_t = 50, value_parser = clap::value_parser!(u32).range(1..=MAX_BATCH as i64))]
    pub batch: u32,
    #[command(flatten)]
    pub run: RunArgs,
    /// Mesh seed.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Adaptive refinement with this many levels above the mesh (GK19); 0 keeps the mesh.
    #[arg(long)]
    pub amr_levels: Option<u8>,
    /// Steps between adaptations (default 4p + 4: the solution moves about two cells).
    #[arg(long)]
    pub amr_every: Option<usize>,
    /// Refinement threshold eps (refine above eps * delta, coarsen below eps / delta; default
    /// 2% of the indicator field's initial range).
    #[arg(long)]
    pub amr_threshold: Option<f64>,
    /// Field whose gradient drives the refinement: density, pressure or energy.
    #[arg(long)]
    pub amr_field: Option<String>,
    /// Add to the indicator h |grad q| the largest jump of q's element means across the faces,
    /// so steps that lie on element edges refine (GK19's Kelvin-Helmholtz from two triangles).
    #[arg(long)]
    pub amr_jumps: bool,
    /// Adapt on the host (the f64 reference path: solution read back, mesh written) instead of
    /// on the GPU.
    #[arg(long)]
    pub amr_on_host: bool,
    /// When GPU adaptations reorder the elements along a Morton curve of their centroids (and
    /// the faces by color and left element) to restore memory locality: auto (when the faces
    /// whose elements lie far apart in memory have risen by 10% of all faces since the last
    /// reorder), never, or every:K (after every K-th adaptation that changed the mesh).
    #[arg(long)]
    pub amr_reorder: Option<String>,
    /// How an adaptation closes the holes coarsening leaves and places the children refinement
    /// makes: in-order (every element in the order of the slot it came from: children next to
    /// each other where their parent was, so the slots keep their order and seldom need a
    /// reorder) or gk19 (GK19's Algorithm 4: the last slots move into the holes).
    #[arg(long)]
    pub amr_compaction: Option<String>,
    /// Also run the f64 CPU reference (single-threaded: minutes from ~10,000 triangles at
    /// p = 3) on the same mesh to the final time, at the case's CFL number or --dt, and print its
    /// L2 density error next to the device's (cases with an exact solution, no --amr-levels).
    #[arg(long)]
    pub reference: bool,
}

/// The case's adaptive refinement with the command line's overrides.
fn amr_options(args: &DgArgs, case: &Case) -> anyhow::Result<Option<AmrOptions>> {
    let mut amr = case.amr;
    if let Some(levels) = args.amr_levels {
        amr = (levels > 0).then(|| AmrOptions {
            max_level: levels,
            ..amr.unwrap_or_default()
        });
    }
    let tuned = args.amr_every.is_some()
        || args.amr_threshold.is_some()
        || args.amr_field.is_some()
        || args.amr_jumps
        || args.amr_on_host
        || args.amr_reorder.is_some()
        || args.amr_compaction.is_some();
    let Some(mut amr) = amr else {
        if tuned {
            return Err(Error::Invalid(
                "--amr-every, --amr-threshold, --amr-field, --amr-jumps, --amr-on-host, \
                 --amr-reorder and --amr-compaction need --amr-levels (or an [amr] table in \
                 the case file)"
                    .into(),
            )
            .into());
        }
        return Ok(None);
    };
    amr.on_host |= args.amr_on_host;
    amr.jumps |= args.amr_jumps;
    if args.amr_every.is_some() {
        amr.every = args.amr_every;
    }
    if args.amr_threshold.is_some() {
        amr.threshold = args.amr_threshold;
    }
    if let Some(f) = &args.amr_field {
        amr.field =
            IndicatorField::parse(f).map_err(|e| Error::Invalid(format!("--amr-field: {e}")))?;
    }
    if let Some(r) = &args.amr_reorder {
        amr.reorder =
            ReorderPolicy::parse(r).map_err(|e| Error::Invalid(format!("--amr-reorder: {e}")))?;
    }
    if let Some(c) = &args.amr_compaction {
        amr.compaction =
            Compaction::parse(c).map_err(|e| Error::Invalid(format!("--amr-compaction: {e}")))?;
    }
    amr.validate(case.order)?;
    Ok(Some(amr))
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
    if let Some(k) = args.refine {
        case.set_refine(k, "--refine")?;
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
    case.amr = amr_options(args, &case)?;
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
    if args.contours > MAX_CONTOURS {
        return Err(Error::Invalid(format!(
            "--contours must be at most {MAX_CONTOURS}, got {}",
            args.contours
        ))
        .into());
    }
    if args.reference && !(case.exact && case.amr.is_none()) {
        return Err(Error::Invalid(
            "--reference needs a case with an exact solution (vortex or a constant state) and \
             no adaptive refinement"
                .into(),
        )
        .into());
    }
    let opened = Instant::now();
    let backend = global.runtime()?;
    let device_seconds = opened.elapsed().as_secs_f64();
    let rc = args.run.control(&args.out)?;
    let opts = SimulationOptions {
        ordering: args.ordering,
        seed: args.seed,
        fixed_dt: args.dt,
        batch: args.batch as usize,
        surface: args.surface,
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
    let mut progress = RunProgress::new(&case.name, case.t_end, global.quiet);
    let snapshots = SnapshotOptions {
        fields,
        vtu: args.vtu,
        contours: args.contours,
    };
    let summary = sim.run(&args.out, &snapshots, &rc, |t, steps| {
        progress.update(t, steps)
    })?;
    progress.finish();
    if !global.quiet {
        let secs = summary.wall_seconds;
        eprintln!(
            "dg: t = {} after {} steps; wrote {} snapshots to {}",
            summary.t,
            summary.steps,
            summary.snapshots,
            args.out.display()
        );
        for line in time_report(&summary, device_seconds) {
            eprintln!("dg: {line}");
        }
        if let Some(a) = summary.amr {
            let ms = |s: f64| 1e3 * s / a.adaptations.max(1) as f64;
            // Per adaptation: the device's stages (or in rounds, the slots its last workgroup
            // settled), or the host's passes.
            let smoothing_rounds = if a.device_adaptations > 0 {
                let n = a.device_adaptations as f64;
                if a.device_smoothing_stages > 0 {
                    (a.device_smoothing_stages as f64 / n, "stages")
                } else {
                    (a.device_smoothing_handed_off as f64 / n, "slots handed off")
                }
            } else {
                let n = a.adaptations.max(1) as f64;
                (a.smoothing_passes as f64 / n, "passes")
            };
            eprintln!(
                "dg: adaptive refinement: {} adaptations ({} refined, {} coarsened, {} on the \
                 device changed nothing and stopped after the smoothing), {} elements \
                 at the end; {:.3} s adapting ({:.1}% of the run), per adaptation: indicator \
                 {:.3} ms, smoothing {:.3} ms ({:.1} {}), coarsen/refine/compact {:.3} ms, \
                 connectivity {:.3} ms, transfers {:.3} ms, setup {:.3} s in all ({})",
                a.adaptations,
                a.refined,
                a.coarsened,
                a.device_unchanged,
                summary.elements,
                a.seconds(),
                100.0 * a.seconds() / secs.max(1e-12),
                ms(a.indicator_seconds),
                ms(a.smoothing_seconds),
                smoothing_rounds.0,
                smoothing_rounds.1,
                ms(a.adapt_seconds),
                ms(a.connectivity_seconds),
                ms(a.transfer_seconds),
                a.setup_seconds,
                if case.amr.is_some_and(|o| o.on_host) {
                    "host f64 path"
                } else {
                    "on the GPU: flags in smoothing; coarsen/refine/compact with connectivity; \
                     host time in the adaptation calls; the device's work is queued behind the \
                     steps, in their time, and timed below"
                },
            );
            if a.device_adaptations > 0 {
                eprintln!(
                    "dg: {}",
                    device_time_line(&a, secs, backend.has_timestamps())
                );
            }
            if let Some(o) = case.amr.filter(|o| !o.on_host) {
                eprintln!(
                    "dg: locality: compaction {}, {} Morton reorders ({}), {:.3} s in all; \
                     {:.1}% of the faces far apart in memory at the last adaptation's start",
                    o.compaction,
                    a.reorders,
                    o.reorder,
                    a.reorder_seconds,
                    100.0 * a.far_fraction
                );
            }
        }
    }
    let error = match summary.l2_density_error {
        Some(e) => Some(e),
        None => sim.l2_density_error()?,
    };
    if let Some(error) = error {
        println!(
            "L2 density error at t = {}: {error:.4e} (device)",
            sim.time()
        );
        if args.reference {
            let started = std::time::Instant::now();
            let (reference, steps) = reference_error(&sim, args.dt);
            println!(
                "L2 density error at t = {}: {reference:.4e} (f64 CPU reference, {steps} steps \
                 in {:.1} s); device / reference = {:.4}",
                sim.time(),
                started.elapsed().as_secs_f64(),
                error / reference
            );
        }
    }
    Ok(())
}

/// What the device adaptations' work took on the device (flags, smoothing, the adaptation's
/// kernels, reorders: [`AmrStats::device_seconds`]) against the run's `wall` seconds.
fn device_time_line(a: &AmrStats, wall: f64, timestamps: bool) -> String {
    if !timestamps {
        return "adaptation on the device: not timed (the adapter has no timestamps)".into();
    }
    if a.device_timed == 0 {
        return format!(
            "adaptation on the device: not timed (a run times one adaptation in {} after the \
             first {} on the device; this one had {})",
            DEVICE_TIMING_EVERY, DEVICE_TIMING_WARMUP, a.device_adaptations
        );
    }
    let each = a.device_seconds / a.device_timed as f64;
    let all = each * a.device_adaptations as f64;
    format!(
        "adaptation on the device: {:.1} us per adaptation (the device time of its flags, \
         smoothing, kernels and reorder, timed on {} of the {} adaptations), about {:.3} s in \
         all, {:.1}% of the run (bench amr measures what an adaptation adds to a run's time)",
        1e6 * each,
        a.device_timed,
        a.device_adaptations,
        all,
        100.0 * all / wall.max(1e-12)
    )
}

/// Where the time of a `dg` run went, as report lines: the setup by phase, the run as
/// stepping (device steps, adaptations apart), outputs by kind and the rest, and the total
/// against setup plus stepping (what the run costs beyond its kernels).
fn time_report(summary: &RunSummary, device_seconds: f64) -> [String; 3] {
    let (s, p, o) = (&summary.setup, &summary.setup.prepare, &summary.outputs);
    let setup = device_seconds + s.total();
    let adapting = summary.amr.map_or(0.0, |a| a.seconds());
    let other = summary.wall_seconds - summary.step_seconds - o.total() - adapting;
    let total = setup + summary.wall_seconds;
    [
        format!(
            "setup {setup:.2} s: device {device_seconds:.2}, mesh {:.2}, topology {:.2}, \
             coloring {:.2}, ordering {:.2}, DG geometry {:.2}, initial projection {:.2}, solver \
             and kernels {:.2}, initial state to the device {:.2}",
            s.mesh,
            p.topology,
            p.coloring,
            p.ordering,
            s.geometry,
            s.projection,
            s.solver,
            s.upload
        ),
        format!(
            "run {:.2} s: stepping {:.2} s ({:.3} ms/step over {} steps){}, outputs {:.2} s \
             (read-backs {:.2}, totals and errors {:.2}, snapshots and CSV {:.2}, checkpoints \
             {:.2}), other {other:.2} s",
            summary.wall_seconds,
            summary.step_seconds,
            1e3 * summary.step_seconds / summary.run_steps.max(1) as f64,
            summary.run_steps,
            if adapting > 0.0 {
                format!(", adapting {adapting:.2} s")
            } else {
                String::new()
            },
            o.total(),
            o.readback,
            o.diagnostics,
            o.files,
            o.checkpoints,
        ),
        format!(
            "total {total:.2} s = {:.2} x (setup + stepping)",
            total / (setup + summary.step_seconds).max(1e-12)
        ),
    ]
}

/// The L2 density error of the f64 CPU reference run of `sim`'s case on its mesh to its time
/// (initial limiting and limiter as the device run), and the steps it took.
fn reference_error(sim: &Simulation, dt: Option<f64>) -> (f64, usize) {
    let case = sim.case();
    let op = sim.operator();
    let mut c = op.project(&|x, y| case.initial.eval(x, y, 0.0));
    if case.limiter {
        let mut limited = c.clone();
        op.limit(&c, &mut limited, true);
        c = limited;
    }
    let steps = cpu::run(&op, &mut c, sim.time(), case.cfl, dt, case.limiter);
    (op.l2_density_error(&c, sim.time()), steps)
}

/// Options of `chromaflow bench dg`.
#[derive(Args, Debug)]
pub struct BenchDgArgs {
    /// About this many triangles in the DMR mesh.
    #[arg(long, default_value_t = 20000)]
    pub cells: usize,
    /// Time steps per measurement (1..=1000000; default 20, with --vortex 200: about a second
    /// of work per repeat at p = 4 on an H100 at 800k triangles, since short runs on a GPU
    /// that has just woken up measure its clock ramp, not the kernels).
    #[arg(long, value_parser = super::bench_steps())]
    pub steps: Option<usize>,
    /// Repetitions, the median reported (1..=1000).
    #[arg(long, default_value_t = 3, value_parser = super::bench_repeats())]
    pub repeats: usize,
    /// MiB per buffer of the device copy-bandwidth measurement (0 skips it; at most 65536).
    #[arg(long, default_value_t = 512, value_parser = clap::value_parser!(u64).range(0..=65536))]
    pub copy_mib: u64,
    /// Print JSON instead of a markdown table.
    #[arg(long)]
    pub json: bool,
    /// Also write the JSON to this file.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Instead of the GPU tables, time the snapshot density PNG (1400 x 1000, per-pixel, all
    /// host threads) of the vortex projected on about this many triangles (no device needed).
    #[arg(long, value_name = "CELLS")]
    pub png_cells: Option<usize>,
    /// Polynomial order of `--png-cells`.
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u32).range(0..=4))]
    pub png_order: u32,
    /// Instead of the DMR tables, PyFR's throughput benchmark: the isentropic vortex on a
    /// fully periodic square of about --cells triangles, no limiter, each of --orders in each
    /// of --surface; prints DOF-RHS/s = elements x (p+1)(p+2)/2 x 4 x RHS evaluations per
    /// second (PyFR's convention, whole steps).
    #[arg(long)]
    pub vortex: bool,
    /// Polynomial orders of --vortex (comma-separated, 0..=4).
    #[arg(long, value_delimiter = ',', default_value = "1,2,3,4",
          value_parser = clap::value_parser!(u32).range(0..=4))]
    pub orders: Vec<u32>,
    /// Surface layouts of --vortex (comma-separated: colored, gathered, atomic; atomic is
    /// CUDA only).
    #[arg(long, value_delimiter = ',', default_value = "colored,gathered")]
    pub surface: Vec<SurfaceLayout>,
    /// A fixed time step for --vortex instead of the CFL one, so that no step computes its dt
    /// on the device (PyFR's benchmark runs a fixed dt = 2^-14 = 6.103515625e-5).
    #[arg(long, value_parser = positive_dt)]
    pub dt: Option<f64>,
}

/// A finite time step > 0.
fn positive_dt(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(dt) if dt.is_finite() && dt > 0.0 => Ok(dt),
        _ => Err(format!("expected a finite time step > 0, got '{text}'")),
    }
}

/// `bench dg --png-cells N`: the PNG timing of [`plot::bench_png`], written into a temporary
/// directory.
fn bench_png(args: &BenchDgArgs, cells: usize) -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let t = plot::bench_png(cells, args.png_order as usize, args.repeats, dir.path())?;
    let json = serde_json::to_value(&t)?;
    if let Some(path) = &args.out {
        write_json_atomic(path, &json)?;
    }
    if args.json {
        println!("{}", serde_json::to_string_pretty(&json)?);
        return Ok(());
    }
    println!(
        "DG density PNG, vortex, {} triangles, p = {}, {}x{} pixels, {} threads, median of {}",
        t.elements, t.p, t.width, t.height, t.threads, args.repeats
    );
    println!("| render s | encode + write s | total s |");
    println!("|---|---|---|");
    println!(
        "| {:.3} | {:.3} | {:.3} |",
        t.render_seconds, t.write_seconds, t.total_seconds
    );
    Ok(())
}

/// `bench dg --vortex`: DOF-RHS/s of the periodic vortex per order and surface layout.
fn bench_vortex(
    args: &BenchDgArgs,
    backend: &chromaflow::runtime::Runtime,
    copy: Option<&chromaflow::runtime::bandwidth::CopyBandwidth>,
) -> anyhow::Result<()> {
    let case = Case::periodic_vortex(args.cells);
    let mesh = case.build_mesh(1)?;
    let om = prepare(&mesh, &PrepareOptions::new(Ordering::ColorRenumbered, 1))?;
    let dm = DgMesh::build(&om, &|t| case.boundary(&om.mesh, t))?;
    let steps = args.steps.unwrap_or(200);
    let mut rows: Vec<BenchRow> = Vec::new();
    let setup_for = |p: u32| BenchSetup {
        fixed_dt: args.dt,
        ..BenchSetup::new(&dm, &case, p as usize)
    };
    // An untimed run first: the device's clocks ramp up during the first second of work.
    if let (Some(&p), Some(&layout)) = (args.orders.first(), args.surface.first()) {
        bench_one(
            backend,
            &setup_for(p),
            steps,
            args.repeats,
            "warm-up",
            layout,
        )?;
    }
    for &p in &args.orders {
        let setup = setup_for(p);
        for &layout in &args.surface {
            let label = layout.name();
            rows.push(bench_one(
                backend,
                &setup,
                steps,
                args.repeats,
                label,
                layout,
            )?);
        }
    }
    let ms_per_rhs = |r: &BenchRow| r.seconds_per_step * 1e3 / r.stages as f64;
    let json = serde_json::json!({
        "adapter": backend.name(),
        "backend": backend.kind().name(),
        "case": "isentropic vortex, periodic, no limiter",
        "elements": dm.num_elements,
        "steps": steps,
        "fixed_dt": args.dt,
        "copy_bandwidth": copy,
        "rows": rows.iter().map(|r| serde_json::json!({
            "surface": r.label,
            "p": r.p,
            "stages": r.stages,
            "ms_per_step": r.seconds_per_step * 1e3,
            "ms_per_rhs": ms_per_rhs(r),
            "dof_rhs_per_s": r.dof_per_s,
            "run_check": r.run_check,
            "kernel_ms_per_step": r.kernels.iter()
                .map(|(k, s)| (format!("{k:?}").to_lowercase(), serde_json::json!(s * 1e3)))
                .collect::<serde_json::Map<_, _>>(),
        })).collect::<Vec<_>>(),
    });
    if let Some(path) = &args.out {
        write_json_atomic(path, &json)?;
    }
    if args.json {
        println!("{}", serde_json::to_string_pretty(&json)?);
        return Ok(());
    }
    println!(
        "DG Euler, isentropic vortex, periodic, no limiter, {} triangles, {} steps, {}, {}",
        dm.num_elements,
        steps,
        args.dt.map_or("CFL time step".to_string(), |dt| format!(
            "fixed dt = {dt:e}"
        )),
        backend.name()
    );
    println!(
        "DOF-RHS/s = elements x (p+1)(p+2)/2 x 4 x RHS evaluations per second (whole steps)\n"
    );
    println!(
        "| p | surface | stages | ms/step | ms/RHS | DOF-RHS/s | kernels (ms/step) | run check |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    for r in &rows {
        let k: Vec<String> = r
            .kernels
            .iter()
            .map(|(k, s)| format!("{k:?} {:.3}", s * 1e3))
            .collect();
        println!(
            "| {} | {} | {} | {:.3} | {:.3} | {:.3e} | {} | {} |",
            r.p,
            r.label,
            r.stages,
            r.seconds_per_step * 1e3,
            ms_per_rhs(r),
            r.dof_per_s,
            if k.is_empty() {
                "n/a (no timestamps)".to_string()
            } else {
                k.join(", ")
            },
            r.run_check
        );
    }
    Ok(())
}

pub fn bench(args: &BenchDgArgs, global: &GlobalArgs) -> anyhow::Result<()> {
    if let Some(cells) = args.png_cells {
        return bench_png(args, cells);
    }
    let backend = global.runtime()?;
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
    if args.vortex {
        return bench_vortex(args, &backend, copy.as_ref());
    }
    let steps = args.steps.unwrap_or(20);
    let case = Case::double_mach(args.cells);
    let mesh = case.build_mesh(1)?;
    let variants = ordering_variants(&mesh)?;
    let mut rows: Vec<BenchRow> = Vec::new();
    let mut run =
        |dm: &DgMesh, p: usize, label: &str, surface: SurfaceLayout| -> anyhow::Result<()> {
            let setup = BenchSetup::new(dm, &case, p);
            rows.push(bench_one(
                &backend,
                &setup,
                steps,
                args.repeats,
                label,
                surface,
            )?);
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
            run(&dm, p, label, SurfaceLayout::Colored)?;
            if cuda && i == last {
                let label = format!("{label}, atomicAdd surface");
                run(&dm, p, &label, SurfaceLayout::Atomic)?;
            }
        }
    }
    let json = serde_json::json!({
        "adapter": backend.name(),
        "backend": backend.kind().name(),
        "case": "double Mach reflection",
        "elements": mesh.num_elements(),
        "steps": steps,
        "copy_bandwidth": copy,
        "surface_bytes_model": SURFACE_BYTES_MODEL,
        "rows": rows.iter().map(|r| {
            let (gbs, pct) = r.surface_gb_per_s(copy.as_ref());
            serde_json::json!({
                "variant": r.label,
                "p": r.p,
                "colors": r.colors,
                "ms_per_step": r.seconds_per_step * 1e3,
                "dof_updates_per_s": r.dof_per_s,
                "effective_gb_per_s": r.gbytes_per_s,
                "surface_bytes_per_step": r.surface_bytes_per_step,
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
        steps,
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
    for r in &rows {
        let k: Vec<String> = r
            .kernels
            .iter()
            .map(|(k, s)| format!("{k:?} {:.3}", s * 1e3))
            .collect();
        let (gbs, pct) = r.surface_gb_per_s(copy.as_ref());
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
         (surface_bytes_per_stage in src/solver/dg/bench.rs)."
    );
    Ok(())
}
