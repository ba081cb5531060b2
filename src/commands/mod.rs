//! Implementations of the CLI subcommands: each parses its arguments into library types,
//! calls the library and prints.

pub mod bench_amr;
pub mod bench_backends;
pub mod bench_launches;
pub mod bench_swe;
pub mod color;
pub mod devices;
pub mod dg;
pub mod mesh;
pub mod parity;
pub mod progress;
pub mod smooth;
pub mod swe;

use chromaflow::runtime::{BackendKind, GpuOptions, Runtime};
use chromaflow::solver::RunControl;
use clap::Args;
use std::path::{Path, PathBuf};

/// Most timed steps, iterations or adaptations in one benchmark measurement: a benchmark is
/// timed, not run to an end, so a larger count only holds the machine (and some grow memory
/// with the count).
pub const MAX_BENCH_STEPS: u64 = 1_000_000;

/// Most repetitions of one benchmark measurement (the median is reported).
pub const MAX_BENCH_REPEATS: u64 = 1000;

/// Parser of a benchmark's step, iteration or adaptation count: 1..=[`MAX_BENCH_STEPS`].
pub fn bench_steps() -> clap::builder::RangedU64ValueParser<usize> {
    clap::builder::RangedU64ValueParser::new().range(1..=MAX_BENCH_STEPS)
}

/// Parser of a benchmark's repetition count: 1..=[`MAX_BENCH_REPEATS`].
pub fn bench_repeats() -> clap::builder::RangedU64ValueParser<usize> {
    clap::builder::RangedU64ValueParser::new().range(1..=MAX_BENCH_REPEATS)
}

/// Options every subcommand accepts.
#[derive(Args, Debug, Clone, Default)]
pub struct GlobalArgs {
    /// More log output (-v info, -vv debug, -vvv trace); RUST_LOG overrides.
    #[arg(short, long, action = clap::ArgAction::Count, global = true)]
    pub verbose: u8,
    /// Only errors; no progress bars.
    #[arg(short, long, global = true, conflicts_with = "verbose")]
    pub quiet: bool,
    /// GPU adapter to use: a case-insensitive substring of its name (see `chromaflow devices`).
    /// Also read from CHROMAFLOW_ADAPTER.
    #[arg(long, global = true, value_name = "NAME")]
    pub adapter: Option<String>,
    /// Build WGSL kernels without wgpu's runtime bounds checks and loop bounding (faster; a
    /// kernel bug could then corrupt GPU memory instead of reading zeros).
    #[arg(long, global = true)]
    pub trusted_kernels: bool,
    /// Compute backend.
    #[arg(long, global = true, value_enum, default_value_t = BackendKind::Wgpu)]
    pub backend: BackendKind,
    /// Compile every kernel afresh instead of keeping compiled kernels between runs in
    /// $XDG_CACHE_HOME/chromaflow (else ~/.cache/chromaflow): wgpu's pipeline cache on
    /// Vulkan, NVRTC's PTX on CUDA.
    #[arg(long, global = true)]
    pub no_pipeline_cache: bool,
    /// On an NVIDIA GPU under wgpu, leave its clocks to the driver instead of holding an idle
    /// CUDA context on it (which keeps the clocks up between bursts of work; see
    /// chromaflow::runtime::clock_hold).
    #[arg(long, global = true)]
    pub no_clock_hold: bool,
    /// On CUDA (sm_90 and later), start each kernel only after the one before it has
    /// finished instead of overlapping its launch with the previous kernel's tail (for
    /// comparing, or to rule the overlap out when chasing a driver problem).
    #[arg(long, global = true)]
    pub no_launch_overlap: bool,
    /// Host memory a run may use, in GiB: meshes (built-in or files) estimated to need more
    /// are refused before they are built. Default: the available memory (MemAvailable).
    #[arg(long, global = true, value_name = "GIB", value_parser = parse_gib)]
    pub max_memory: Option<u64>,
}

/// A positive, finite number of GiB as bytes.
fn parse_gib(s: &str) -> Result<u64, String> {
    match s.trim().parse::<f64>() {
        Ok(g) if g > 0.0 && g.is_finite() && g < 1e9 => Ok((g * (1u64 << 30) as f64) as u64),
        _ => Err(format!("'{s}' is not a positive number of GiB")),
    }
}

impl GlobalArgs {
    /// The device options `--adapter`, `--no-pipeline-cache`, `--no-clock-hold` and
    /// `--no-launch-overlap` give.
    pub fn gpu_options(&self) -> GpuOptions {
        GpuOptions {
            adapter: self.adapter.clone(),
            no_clock_hold: self.no_clock_hold,
            no_launch_overlap: self.no_launch_overlap,
            pipeline_cache: if self.no_pipeline_cache {
                None
            } else {
                chromaflow::runtime::disk_cache::default_dir()
            },
        }
    }

    /// The runtime `--backend` names (wgpu: the adapter `--adapter` picks; CUDA: device 0).
    pub fn runtime(&self) -> chromaflow::error::Result<Runtime> {
        Runtime::new(self.backend, &self.gpu_options())
    }
}

/// The error and its causes joined by ": ", skipping a cause whose text the message already
/// contains (our errors often embed their source).
pub fn error_message(e: &anyhow::Error) -> String {
    let mut msg = String::new();
    for cause in e.chain() {
        let text = cause.to_string();
        if msg.contains(&text) {
            continue;
        }
        if !msg.is_empty() {
            msg.push_str(": ");
        }
        msg.push_str(&text);
    }
    msg
}

/// Bounds, checkpoints and restarts of a solver run (`swe`, `dg`).
#[derive(Args, Debug, Clone, Default)]
pub struct RunArgs {
    /// Most output times a run may have [default: 10000].
    #[arg(long, value_name = "N")]
    pub max_snapshots: Option<u64>,
    /// Write checkpoint.ckpt into the output directory about every T simulated seconds (one
    /// is always written when a run is interrupted).
    #[arg(long, value_name = "T")]
    pub checkpoint_every: Option<f64>,
    /// Continue an earlier run from its checkpoint, with the same case and options, into the
    /// same output directory (to the same bits on the same backend).
    #[arg(long, value_name = "FILE")]
    pub restart: Option<PathBuf>,
    /// Replace an earlier run's files in the output directory (removed first).
    #[arg(long, conflicts_with = "restart")]
    pub overwrite: bool,
}

impl RunArgs {
    /// Claim `out` for a new run (not on a restart), take over SIGINT/SIGTERM (the run polls
    /// them) and say how the library bounds the run.
    pub fn control(&self, out: &Path) -> anyhow::Result<RunControl> {
        chromaflow::interrupt::install();
        if self.restart.is_none() {
            chromaflow::files::claim_output_dir(out, self.overwrite)?;
        }
        let default = RunControl::default();
        Ok(RunControl {
            max_snapshots: self.max_snapshots.unwrap_or(default.max_snapshots),
            checkpoint_every: self.checkpoint_every,
            restart: self.restart.clone(),
        })
    }
}
