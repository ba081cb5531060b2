//! `chromaflow parity`: run the conformance suite ([`chromaflow::conformance`]: shallow water, DG,
//! scan, min-reduction, vertex coloring, smoothing, each against its CPU reference) on every
//! available backend (wgpu, and CUDA when built with `--features cuda` on a machine with an
//! NVIDIA driver). Prints a table (max differences, PASS / FAIL / SKIP, and INFO for diagnostic
//! rows without a criterion); any FAIL gives a nonzero exit. This is how the CUDA backend is
//! checked on the GPU machine (CI has no NVIDIA GPU; tests/conformance.rs runs the suite on wgpu).

use crate::commands::GlobalArgs;
use chromaflow::conformance::{self, Report, Row, Status};
use chromaflow::error::Error;
use chromaflow::runtime::{BackendKind, Runtime};
use clap::Args;

/// Options of `chromaflow parity`.
#[derive(Args, Debug, Clone, Default)]
pub struct ParityArgs {
    /// Backends to check (comma-separated). Default: every backend compiled in; one that
    /// cannot start is then reported as SKIP, while a backend named here that cannot start
    /// is a FAIL.
    #[arg(long, value_delimiter = ',', value_enum)]
    pub backends: Vec<BackendKind>,
    /// Skip the long runs (spec table on M(50) to t = 0.1 s, lake at rest to t = 5 s).
    #[arg(long)]
    pub quick: bool,
    /// Print JSON instead of a markdown table.
    #[arg(long)]
    pub json: bool,
}

/// Run `chromaflow parity`.
pub fn run(args: &ParityArgs, global: &GlobalArgs) -> anyhow::Result<()> {
    let explicit = !args.backends.is_empty();
    for kind in &args.backends {
        kind.ensure_compiled()?;
    }
    let kinds = if explicit {
        args.backends.clone()
    } else {
        BackendKind::compiled()
    };
    let opts = global.gpu_options();
    let mut report = Report::default();
    let mut devices = Vec::new();
    let mut probes = Vec::new();
    for kind in kinds {
        match Runtime::new(kind, &opts) {
            Ok(b) => {
                devices.push(b.name());
                if !args.json && !global.quiet {
                    eprintln!("parity: running on {} [{kind}]", b.name());
                }
                conformance::run_all(&mut report, &b, args.quick, &mut probes);
            }
            Err(e) => report.rows.push(Row {
                check: "open backend".into(),
                backend: kind.name().into(),
                result: e.to_string(),
                tolerance: "-".into(),
                status: if explicit { Status::Fail } else { Status::Skip },
            }),
        }
    }
    conformance::probe_across(&mut report, &probes);
    let failures = report.failures();
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&serde_json::json!({
                "devices": devices,
                "failures": failures,
                "rows": report.rows,
            }))?
        );
    } else {
        println!("| check | backend | result | tolerance | status |");
        println!("|---|---|---|---|---|");
        for r in &report.rows {
            println!(
                "| {} | {} | {} | {} | {} |",
                r.check,
                r.backend,
                r.result.replace('|', "/").replace('\n', " "),
                r.tolerance,
                r.status.label()
            );
        }
        println!();
        println!(
            "{} passed, {failures} failed, {} skipped, {} info",
            report.count(Status::Pass),
            report.count(Status::Skip),
            report.count(Status::Info)
        );
    }
    if failures > 0 {
        return Err(Error::Gpu(format!("{failures} parity checks failed")).into());
    }
    Ok(())
}
