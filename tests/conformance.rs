//! The conformance suite (src/conformance, what `chromaflow parity` runs on every backend)
//! instantiated on wgpu (lavapipe in CI): one test per workload, failing with every FAIL row.
//! The shallow-water long runs (spec table, lake at rest; skipped by `parity --quick`) have
//! their own test. Fails (not skips) without an adapter.

use chromaflow::conformance::{self, Report, Status};
use chromaflow::runtime::Runtime;

/// Run `workload` on wgpu; fail listing every failed row, or if nothing passed.
fn run(workload: impl FnOnce(&mut Report, &Runtime)) {
    let rt = Runtime::wgpu().expect("a GPU adapter is required (CI: lavapipe)");
    let mut report = Report::default();
    workload(&mut report, &rt);
    let failed: Vec<String> = report.failed().map(|r| r.to_string()).collect();
    assert!(
        failed.is_empty(),
        "{} of {} checks failed:\n{}",
        failed.len(),
        report.rows.len(),
        failed.join("\n")
    );
    assert!(report.count(Status::Pass) > 0, "no check passed");
}

#[test]
fn swe() {
    run(|report, rt| conformance::swe(report, rt, true));
}

#[test]
fn swe_long() {
    run(conformance::swe_long);
}

#[test]
fn dg() {
    run(conformance::dg);
}

#[test]
fn amr() {
    run(conformance::amr);
}

#[test]
fn smooth() {
    run(|report, rt| {
        conformance::smooth(report, rt);
        // The diagnostic probe (INFO; an error is a FAIL).
        conformance::smooth::probe(report, rt, &mut Vec::new());
    });
}

#[test]
fn coloring() {
    run(conformance::coloring);
}
