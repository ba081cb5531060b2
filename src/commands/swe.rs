//! `chromaflow swe`: run a two-layer shallow-water case on the GPU with PNG/VTU/CSV outputs.

use crate::commands::progress::RunProgress;
use crate::commands::{GlobalArgs, RunArgs};
use chromaflow::error::Error;
use chromaflow::mesh::MeshSource;
use chromaflow::order::Ordering;
use chromaflow::solver::swe::bench::cross_side;
use chromaflow::solver::swe::case::{Case, BUILTINS};
use chromaflow::solver::swe::driver::Simulation;
use chromaflow::solver::swe::gpu::FluxLayout;
use chromaflow::solver::swe::{check_max_mass_drift, Scheme};
use chromaflow::solver::MAX_BATCH;
use clap::Args;
use std::path::PathBuf;

/// Options of `chromaflow swe`.
#[derive(Args, Debug, Clone, Default)]
pub struct SweArgs {
    /// TOML case file (see cases/swe_*.toml).
    #[arg(long, value_name = "FILE", conflicts_with = "builtin")]
    pub case: Option<PathBuf>,
    /// Built-in case: test1 (circular internal dambreak), test2 (unstable layers over a bump),
    /// lake (lake at rest). Default: test1.
    #[arg(long, value_parser = clap::builder::PossibleValuesParser::new(BUILTINS))]
    pub builtin: Option<String>,
    /// Numerical scheme (default: the case's, else pvm-ifcp).
    #[arg(long, value_enum)]
    pub scheme: Option<Scheme>,
    /// Spatial order: 1 (the paper's schemes) or 2 (limited MUSCL reconstruction + Heun's
    /// SSP-RK2; fused or --scatter). Default: the case's, else 1.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=2))]
    pub order: Option<u32>,
    /// Mesh file (.msh) or built-in mesh spec (e.g. rect:20000, cross:100); built-in meshes
    /// are mapped onto the case's domain.
    #[arg(long)]
    pub mesh: Option<String>,
    /// Use the criss-cross mesh with about N triangles (4n² for even n).
    #[arg(long, value_name = "N", conflicts_with = "mesh")]
    pub cells: Option<usize>,
    /// Cell ordering.
    #[arg(long, value_enum)]
    pub ordering: Option<Ordering>,
    /// Seed of the face coloring (default: the case's, else 0).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Output directory (default out/swe-<case>).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Snapshot interval in simulated seconds.
    #[arg(long, value_name = "T")]
    pub snapshot_every: Option<f64>,
    /// Final time in seconds.
    #[arg(long)]
    pub final_time: Option<f64>,
    /// CFL number γ in (0, 1].
    #[arg(long)]
    pub cfl: Option<f64>,
    /// Mass guard of a closed domain (walls only): stop with exit 1 when a layer's mass has
    /// drifted by more than this fraction of its initial mass, e.g. by clipping negative depths
    /// (default: the case's `[run] max_mass_drift`, else 5e-2; off with open boundaries).
    #[arg(long, value_name = "F")]
    pub max_mass_drift: Option<f64>,
    /// Also write VTU files.
    #[arg(long)]
    pub vtu: bool,
    /// Use the cell-centred gather kernel and the four-kernel update chain instead of the
    /// fused step (order 1 only).
    #[arg(long, conflicts_with_all = ["atomic", "scatter"])]
    pub gather: bool,
    /// Use one atomicAdd launch over all edges and the update chain instead of the fused step
    /// (order 1 only; CUDA only).
    #[arg(long, conflicts_with = "scatter")]
    pub atomic: bool,
    /// Use the colored edge scatter and the update chain (Δt from the current state) instead
    /// of the fused step.
    #[arg(long)]
    pub scatter: bool,
    /// Most steps recorded in one queue call.
    #[arg(long, default_value_t = 256, value_parser = clap::value_parser!(u32).range(1..=MAX_BATCH as i64))]
    pub batch: u32,
    #[command(flatten)]
    pub run: RunArgs,
    /// Print the summary as JSON.
    #[arg(long)]
    pub json: bool,
}

/// The case the arguments describe: case file or built-in, with the command-line overrides.
pub fn case_from_args(args: &SweArgs) -> anyhow::Result<Case> {
    let mut case = match (&args.case, &args.builtin) {
        (Some(p), _) => Case::from_file(p)?,
        (None, Some(b)) => Case::builtin(b)?,
        (None, None) => Case::builtin("test1")?,
    };
    if let Some(s) = args.scheme {
        case.scheme = s;
    }
    if let Some(o) = args.order {
        case.order = o;
    }
    if let Some(m) = &args.mesh {
        case.mesh = MeshSource::from_arg(m);
        if case.mesh.is_file() {
            case.domain = None;
        }
    }
    if let Some(n) = args.cells {
        if case.mesh.is_file() {
            return Err(Error::Invalid(
                "--cells picks a built-in criss-cross mesh, but this case reads a mesh file; use --mesh"
                    .into(),
            )
            .into());
        }
        case.mesh = MeshSource::Builtin(format!("cross:{}", cross_side(n)));
    }
    if let Some(o) = args.ordering {
        case.ordering = o;
    }
    if let Some(s) = args.seed {
        case.seed = s;
    }
    if let Some(d) = &args.out {
        case.output.dir = d.clone();
    }
    if let Some(s) = args.snapshot_every {
        if !(s > 0.0 && s.is_finite()) {
            return Err(Error::Invalid(format!("--snapshot-every {s} must be > 0")).into());
        }
        case.output.snapshot_every = Some(s);
    }
    if let Some(t) = args.final_time {
        if !(t > 0.0 && t.is_finite()) {
            return Err(Error::Invalid(format!("--final-time {t} must be > 0")).into());
        }
        case.final_time = t;
    }
    if let Some(c) = args.cfl {
        if !(c > 0.0 && c <= 1.0) {
            return Err(Error::Invalid(format!("--cfl {c} must lie in (0, 1]")).into());
        }
        case.cfl = c;
    }
    if let Some(d) = args.max_mass_drift {
        check_max_mass_drift(d)
            .map_err(|_| Error::Invalid(format!("--max-mass-drift {d} must be > 0 and finite")))?;
        case.max_mass_drift = Some(d);
    }
    if args.vtu {
        case.output.vtu = true;
    }
    Ok(case)
}

/// Run `chromaflow swe`.
pub fn run(args: &SweArgs, global: &GlobalArgs) -> anyhow::Result<()> {
    let case = case_from_args(args)?;
    let backend = global.runtime()?;
    let rc = args.run.control(&case.output.dir)?;
    let layout = if args.gather {
        FluxLayout::CellGather
    } else if args.atomic {
        FluxLayout::AtomicScatter
    } else if args.scatter {
        FluxLayout::ColoredScatter
    } else {
        FluxLayout::default()
    };
    let mut sim = Simulation::new(&case, &backend, layout)?;
    sim.max_batch = args.batch;
    let mut progress = RunProgress::new(&case.name, case.final_time, global.quiet || args.json);
    let summary = sim.run(&rc, |t, steps| progress.update(t, steps))?;
    progress.finish();
    if args.json {
        println!("{}", serde_json::to_string_pretty(&summary)?);
        return Ok(());
    }
    println!(
        "{}: {} order {} on {} cells ({} edges, {} colors, ordering {}, {}) on {}",
        summary.case,
        summary.scheme,
        summary.order,
        summary.cells,
        summary.edges,
        summary.colors,
        summary.ordering,
        layout.name(),
        summary.device
    );
    println!(
        "t = {:.6} s in {} steps, {:.3} s wall: stepping {:.3} s ({:.3e} cell updates/s), \
         outputs {:.3} s",
        summary.t,
        summary.steps,
        summary.wall_seconds,
        summary.step_seconds,
        summary.cells as f64 * summary.steps as f64 / summary.step_seconds.max(1e-12),
        summary.output_seconds
    );
    let mass = if summary.closed {
        "mass drift"
    } else {
        "mass change (open or driven boundaries: mass enters and leaves through them, so this \
         is no conservation error, and the mass guard is off)"
    };
    println!(
        "{mass}: upper {:.2e}, lower {:.2e}; non-hyperbolic edge evaluations {} (max {} per step), Roe→IFCP fallbacks {}, clipped depths {}, rejected steps {}",
        summary.mass_drift[0],
        summary.mass_drift[1],
        summary.counters.nonhyperbolic,
        summary.counters.max_step_nonhyperbolic,
        summary.counters.fallback,
        summary.counters.clipped,
        summary.counters.rejected
    );
    println!(
        "wrote {} files to {}",
        summary.files.len(),
        case.output.dir.display()
    );
    Ok(())
}
