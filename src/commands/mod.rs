//! Implementations of the CLI subcommands: each parses its arguments into library types,
//! calls the library and prints.

pub mod bench_backends;
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
use clap::Args;

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

impl GlobalArgs {
    /// The device options `--adapter` gives.
    pub fn gpu_options(&self) -> GpuOptions {
        GpuOptions {
            adapter: self.adapter.clone(),
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
