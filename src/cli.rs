//! Command-line interface (clap derive): one subcommand per job, global verbosity, adapter and
//! backend choice.

use crate::commands::{self, GlobalArgs};
use chromaflow::runtime::BackendKind;
use clap::{Parser, Subcommand};

/// chromaflow: portable GPU solvers on colored unstructured meshes.
#[derive(Parser, Debug)]
#[command(name = "chromaflow", version, about, long_about = None)]
pub struct Cli {
    #[command(flatten)]
    pub global: GlobalArgs,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// List GPU adapters with backend, type, driver, key features and limits.
    Devices {
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Mesh tools: info, convert, plot.
    #[command(subcommand)]
    Mesh(commands::mesh::MeshCommand),
    /// Color the faces (Giuliani–Krivodonova) or vertices of a mesh, or the vertices of a
    /// graph file (--graph), verify and report.
    Color(crate::commands::color::ColorArgs),
    /// Write a graph for `color --graph`: a random geometric graph or a mesh's vertex graph.
    Graph(crate::commands::color::GraphArgs),
    /// Benchmarks on the chosen adapter (markdown tables; --json for machines).
    #[command(subcommand)]
    Bench(BenchCommand),
    /// Two-layer shallow water: run a case (built-in or TOML file) on the GPU.
    Swe(crate::commands::swe::SweArgs),
    /// Discontinuous Galerkin 2D Euler: vortex, double Mach reflection, Kelvin-Helmholtz, case files.
    Dg(crate::commands::dg::DgArgs),
    /// Anisotropic vertex smoothing to a metric field on the GPU (PNGs, CSV, .msh, .vtu).
    Smooth(crate::commands::smooth::SmoothArgs),
    /// Backend parity: shallow water and vertex coloring on every available backend (wgpu,
    /// CUDA) against the CPU reference; a PASS/FAIL table, nonzero exit on failure.
    Parity(crate::commands::parity::ParityArgs),
}

/// Benchmark subcommands.
#[derive(Subcommand, Debug)]
pub enum BenchCommand {
    /// GPU speculative vertex coloring against the sequential greedy coloring.
    Color(crate::commands::color::BenchColorArgs),
    /// Two-layer shallow water, Test 1: sizes x schemes x orderings x flux layouts.
    Swe(crate::commands::bench_swe::BenchSweArgs),
    /// DG double Mach reflection: 5-color greedy vs 3-color GK, Algorithm 5 and chain
    /// renumbering, p = 1..4.
    Dg(crate::commands::dg::BenchDgArgs),
    /// Vertex smoothing: 1000 iterations, three metric sampling paths (Rokos et al.'s table).
    Smooth(crate::commands::smooth::BenchSmoothArgs),
    /// wgpu (runtime checks on and off) against CUDA, kernel by kernel, in one run.
    ///
    /// DG, shallow water, smoothing and vertex coloring at ~1M cells, each on CUDA, on wgpu
    /// with the default runtime checks and on wgpu as with --trusted-kernels. Ignores the
    /// global --backend and --trusted-kernels (it runs every column itself); --adapter picks
    /// the wgpu adapter. Without CUDA the column says why and wgpu runs alone.
    Backends(crate::commands::bench_backends::BenchBackendsArgs),
    /// Adaptive refinement (GK19 Table 3): seconds of each adaptation phase on the device and
    /// on the host's f64 path, for one case.
    Amr(crate::commands::bench_amr::BenchAmrArgs),
    /// What a launch and a read-back cost apart from their work: host recording, device time
    /// and submit-to-done per launch of a plan of small dependent launches.
    Launches(crate::commands::bench_launches::BenchLaunchesArgs),
}

/// Without a usable XDG_RUNTIME_DIR (unset or not an absolute directory: ssh, containers, CI)
/// the Vulkan loader's window-system probing prints "XDG_RUNTIME_DIR is invalid or not set"
/// on every run. Point it at a private temporary directory (mode 0700, removed on exit) before
/// any Vulkan call; a usable one is left alone.
pub fn private_runtime_dir() -> Option<tempfile::TempDir> {
    let usable = std::env::var_os("XDG_RUNTIME_DIR")
        .map(std::path::PathBuf::from)
        .is_some_and(|p| p.is_absolute() && p.is_dir());
    if usable || !cfg!(unix) {
        return None;
    }
    let dir = tempfile::Builder::new()
        .prefix("chromaflow-xdg-")
        .tempdir()
        .ok()?;
    // Single-threaded here: nothing else reads the environment yet.
    std::env::set_var("XDG_RUNTIME_DIR", dir.path());
    Some(dir)
}

/// Set up env_logger: RUST_LOG wins; else -q = error, default = warn, -v info, -vv debug.
pub fn init_logging(g: &GlobalArgs) {
    let level = if g.quiet {
        "error"
    } else {
        match g.verbose {
            // The Vulkan loader's own chatter (wgpu_hal) only with -v: without a driver it
            // prints several errors before our one clear message.
            0 => "warn,wgpu_hal=off",
            1 => "info",
            2 => "debug",
            _ => "trace",
        }
    };
    let env = env_logger::Env::default().default_filter_or(level);
    let _ = env_logger::Builder::from_env(env)
        .format_timestamp(None)
        .try_init();
}

/// Exit code for an error: 2 for invalid user input, 130 for an interrupted run, 1 otherwise.
pub fn exit_code(e: &anyhow::Error) -> u8 {
    match e.downcast_ref::<chromaflow::error::Error>() {
        Some(chromaflow::error::Error::Invalid(_)) => 2,
        Some(chromaflow::error::Error::Interrupted(_)) => 130,
        _ => 1,
    }
}

/// Run a parsed command line.
pub fn run(cli: Cli) -> anyhow::Result<()> {
    // `bench backends` opens every backend itself and measures both kernel-check settings.
    if let Command::Bench(BenchCommand::Backends(_)) = &cli.command {
        if cli.global.backend != BackendKind::Wgpu || cli.global.trusted_kernels {
            log::warn!(
                "bench backends ignores --backend and --trusted-kernels: it runs every column"
            );
        }
    } else {
        cli.global.backend.ensure_compiled()?;
    }
    chromaflow::runtime::shaders::set_trusted_kernels(cli.global.trusted_kernels);
    chromaflow::memory::set_limit(cli.global.max_memory);
    match cli.command {
        Command::Devices { json } => commands::devices::run(json),
        Command::Mesh(cmd) => commands::mesh::run(cmd, &cli.global),
        Command::Color(args) => commands::color::run(&args, &cli.global),
        Command::Graph(args) => commands::color::write(&args, &cli.global),
        Command::Bench(BenchCommand::Color(args)) => commands::color::bench(&args, &cli.global),
        Command::Bench(BenchCommand::Swe(args)) => commands::bench_swe::run(&args, &cli.global),
        Command::Swe(args) => commands::swe::run(&args, &cli.global),
        Command::Dg(args) => commands::dg::run(&args, &cli.global),
        Command::Bench(BenchCommand::Dg(args)) => commands::dg::bench(&args, &cli.global),
        Command::Bench(BenchCommand::Smooth(args)) => commands::smooth::bench(&args, &cli.global),
        Command::Bench(BenchCommand::Amr(args)) => commands::bench_amr::run(&args, &cli.global),
        Command::Bench(BenchCommand::Launches(args)) => {
            commands::bench_launches::run(&args, &cli.global)
        }
        Command::Bench(BenchCommand::Backends(args)) => {
            commands::bench_backends::run(&args, &cli.global)
        }
        Command::Smooth(args) => commands::smooth::run(&args, &cli.global),
        Command::Parity(args) => commands::parity::run(&args, &cli.global),
    }
}
