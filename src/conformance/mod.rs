//! The conformance suite: each GPU workload against its CPU reference (or an exact answer),
//! under fixed tolerances, on any [`Runtime`].
//!
//! What is checked:
//! - [`swe`](mod@swe): the two-layer shallow-water solver after 10 steps of Tests 1 and 2 on
//!   M(16) for every scheme and flux layout (GPU f32 vs CPU f64, same event counters),
//!   independence of the cell ordering and the flux layout, a dry upper layer (no NaN, Roe
//!   fallbacks), driven boundaries (time-series discharge and elevation) with gauges sampled
//!   every step; and, unless `quick`, [`swe_long`]: the spec §12 table on M(50) with
//!   per-layer mass conservation and the lake at rest to t = 5 s.
//! - [`dg`](mod@dg): the DG Euler right-hand side for p = 0..4 on a mesh with every boundary
//!   kind, the limiter on a shock, and 10 limited steps with periodic boundaries.
//! - [`amr`](mod@amr): the device adaptation against the f64 adaptive mesh, id for id over
//!   several adaptations, and the device's refinement flags against the reference indicator.
//! - [`reorder`](mod@reorder): the device's Morton reorder of the adapted slots against its exact
//!   reference, bit for bit, with the adaptations after it still matching the f64 mesh.
//! - [`coloring`](mod@coloring): the exclusive prefix sum and the min-reduction (exact), and
//!   the speculative vertex coloring (both variants: proper, near the greedy count, boundary
//!   classes, bad input).
//! - [`smooth`](mod@smooth): metric-field vertex smoothing, every sampling path after 1 and 20
//!   sweeps, and the hardware-filter probe ([`smooth::probe`], diagnostic) whose positions
//!   [`smooth::probe_across`] compares between backends.
//!
//! Each check is written once, as a function of the runtime, and instantiated per backend:
//! `chromaflow parity` runs [`run_all`] on every backend it can open (wgpu and CUDA) and prints
//! the [`Report`]; tests/conformance.rs runs each workload on wgpu (lavapipe in CI).

pub mod amr;
pub mod coloring;
pub mod dg;
pub mod reorder;
pub mod smooth;
pub mod swe;

pub use amr::amr;
pub use coloring::coloring;
pub use dg::dg;
pub use reorder::reorder;
pub use smooth::{probe_across, smooth, HwProbe};
pub use swe::{swe, swe_long};

use crate::error::{Error, Result};
use crate::runtime::{BackendKind, Runtime};

/// The outcome of one check.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub enum Status {
    Pass,
    Fail,
    /// Not run (a backend that could not start when none was asked for by name).
    Skip,
    /// A diagnostic measurement without a pass/fail criterion.
    Info,
}

impl Status {
    /// PASS, FAIL, SKIP or INFO.
    pub fn label(self) -> &'static str {
        match self {
            Status::Pass => "PASS",
            Status::Fail => "FAIL",
            Status::Skip => "SKIP",
            Status::Info => "INFO",
        }
    }
}

/// One line of the report.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Row {
    pub check: String,
    pub backend: String,
    pub result: String,
    pub tolerance: String,
    pub status: Status,
}

impl std::fmt::Display for Row {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} [{}] {}: {} (tolerance {})",
            self.status.label(),
            self.backend,
            self.check,
            self.result,
            self.tolerance
        )
    }
}

/// The rows of the checks run so far.
#[derive(Clone, Debug, Default)]
pub struct Report {
    pub rows: Vec<Row>,
}

impl Report {
    /// Run `f` (returning the measured result and whether it is within tolerance) and record
    /// it; an error is a FAIL with the error as the result.
    pub fn check(
        &mut self,
        check: &str,
        backend: BackendKind,
        tolerance: &str,
        f: impl FnOnce() -> Result<(String, bool)>,
    ) {
        let outcome = f().map(|(r, ok)| (r, if ok { Status::Pass } else { Status::Fail }));
        self.record(check, backend.name(), tolerance, outcome);
    }

    /// Run `f` and record its result as a diagnostic row (INFO); an error is a FAIL.
    pub fn info(&mut self, check: &str, backend: &str, f: impl FnOnce() -> Result<String>) {
        self.record(check, backend, "-", f().map(|r| (r, Status::Info)));
    }

    fn record(
        &mut self,
        check: &str,
        backend: &str,
        tolerance: &str,
        outcome: Result<(String, Status)>,
    ) {
        let (result, status) = outcome.unwrap_or_else(|e| (format!("error: {e}"), Status::Fail));
        self.rows.push(Row {
            check: check.to_string(),
            backend: backend.to_string(),
            result,
            tolerance: tolerance.to_string(),
            status,
        });
    }

    /// How many rows have `status`.
    pub fn count(&self, status: Status) -> usize {
        self.rows.iter().filter(|r| r.status == status).count()
    }

    /// How many rows failed.
    pub fn failures(&self) -> usize {
        self.count(Status::Fail)
    }

    /// The failed rows.
    pub fn failed(&self) -> impl Iterator<Item = &Row> {
        self.rows.iter().filter(|r| r.status == Status::Fail)
    }
}

/// Every check on `rt`, in the order `chromaflow parity` lists them: [`swe`](fn@swe)
/// (without [`swe_long`] when `quick`), [`dg`](fn@dg), [`coloring`](fn@coloring),
/// [`smooth`](fn@smooth), then the hardware-filter probe, whose positions are appended to
/// `probes` for [`probe_across`] once every backend has run.
pub fn run_all(report: &mut Report, rt: &Runtime, quick: bool, probes: &mut Vec<HwProbe>) {
    swe(report, rt, quick);
    dg(report, rt);
    amr(report, rt);
    reorder(report, rt);
    coloring(report, rt);
    smooth(report, rt);
    smooth::probe(report, rt, probes);
}

/// A setup shared by several checks, or the error that each of them then reports.
fn ready<T>(setup: &Result<T>) -> Result<&T> {
    setup.as_ref().map_err(|e| Error::Invalid(e.to_string()))
}
