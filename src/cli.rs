//! Command-line interface (clap derive): one subcommand per job, global verbosity, adapter and
//! backend choice.

use crate::commands;
use crate::runtime::BackendKind;
use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;

/// chromaflow: portable GPU solvers on colored unstructured meshes.
#[derive(Parser, Debug)]
#[command(name = "chromaflow", version, about, long_about = None)]
pub struct Cli {
    #[command(flatten)]
    pub global: GlobalArgs,
    #[command(subcommand)]
    pub command: Command,
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
    Mesh(MeshCommand),
    /// Color the faces (Giuliani–Krivodonova) or vertices of a mesh, verify and report.
    Color(crate::commands::color::ColorArgs),
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
}

/// A mesh argument: a .msh file, or a built-in spec (rect, rect:N, rect:N@SEED, disk:N,
/// quad:NXxNY, cross:N).
pub type MeshArg = String;

#[derive(Subcommand, Debug)]
pub enum MeshCommand {
    /// Counts, element kinds, quality statistics and boundary tags.
    Info {
        /// Mesh file (.msh) or built-in spec (e.g. disk:5000).
        mesh: MeshArg,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Convert a mesh: writes .msh (Gmsh 4.1 ASCII) or .vtu (ParaView) by extension.
    Convert {
        /// Input mesh file or built-in spec.
        input: MeshArg,
        /// Output file (.msh or .vtu).
        output: PathBuf,
    },
    /// Plot a 2D mesh to PNG, cells colored by a field.
    Plot {
        /// Mesh file or built-in spec.
        mesh: MeshArg,
        /// Output PNG.
        #[arg(short, long, default_value = "mesh.png")]
        output: PathBuf,
        /// Cell field: quality (radius ratio), area, region, none.
        #[arg(long, default_value = "quality")]
        field: String,
        /// Image width and height in pixels.
        #[arg(long, default_value_t = 1024)]
        size: u32,
        /// Draw the mesh edges.
        #[arg(long)]
        wireframe: bool,
        /// Colormap name (viridis, magma, coolwarm, gray).
        #[arg(long, default_value = "viridis")]
        colormap: String,
    },
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

/// Exit code for an error: 2 for invalid user input, 1 otherwise.
pub fn exit_code(e: &anyhow::Error) -> u8 {
    match e.downcast_ref::<crate::error::Error>() {
        Some(crate::error::Error::Invalid(_)) => 2,
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
    crate::runtime::shaders::set_trusted_kernels(cli.global.trusted_kernels);
    match cli.command {
        Command::Devices { json } => commands::devices::run(json),
        Command::Mesh(cmd) => commands::mesh::run(cmd, &cli.global),
        Command::Color(args) => commands::color::run(&args, &cli.global),
        Command::Bench(BenchCommand::Color(args)) => commands::color::bench(&args, &cli.global),
        Command::Bench(BenchCommand::Swe(args)) => commands::bench_swe::run(&args, &cli.global),
        Command::Swe(args) => commands::swe::run(&args, &cli.global),
        Command::Dg(args) => commands::dg::run(&args, &cli.global),
        Command::Bench(BenchCommand::Dg(args)) => commands::dg::bench(&args, &cli.global),
        Command::Bench(BenchCommand::Smooth(args)) => commands::smooth::bench(&args, &cli.global),
        Command::Bench(BenchCommand::Backends(args)) => {
            commands::bench_backends::run(&args, &cli.global)
        }
        Command::Smooth(args) => commands::smooth::run(&args, &cli.global),
        Command::Parity(args) => commands::parity::run(&args, &cli.global),
    }
}
