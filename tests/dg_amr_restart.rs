//! Checkpoint and restart of adaptive DG runs on the GPU adapter (lavapipe in CI; fails, never
//! skips, without one): a run continued from a mid-run checkpoint ends in the same bits as one
//! never stopped (solution words, element count, the adapted trees id for id, the CSV and every
//! PNG), on the device adaptation path and on the host path, from a checkpoint right after an
//! adaptation and from one at an output time between two adaptations; a checkpoint of another
//! base mesh, level count, order, backend or path, or one that does not hold together, is an
//! error naming the file and what differs.

use chromaflow::checkpoint::{Checkpoint, FILE_NAME};
use chromaflow::runtime::Runtime;
use chromaflow::solver::dg::amr::tree::FlatTree;
use chromaflow::solver::dg::amr::AmrOptions;
use chromaflow::solver::dg::{Case, Simulation, SimulationOptions, SnapshotOptions};
use chromaflow::solver::RunControl;
use std::path::{Path, PathBuf};

fn rt() -> Runtime {
    Runtime::wgpu().expect("a GPU adapter is required (CI: lavapipe)")
}

/// The vortex on ~200 triangles at p = 1, 3 levels, adapting every 5 steps, outputs every 0.05.
fn case(on_host: bool, t_end: f64) -> Case {
    let mut case = Case::vortex(200);
    case.order = 1;
    case.t_end = t_end;
    case.snapshot_every = Some(0.05);
    case.amr = Some(AmrOptions {
        max_level: 3,
        every: Some(5),
        on_host,
        ..AmrOptions::default()
    });
    case
}

/// What a run ends with: the solution's bits, the element count, the trees, and every file.
#[derive(Debug, PartialEq)]
struct End {
    solution: Vec<u64>,
    elements: usize,
    trees: FlatTree,
    steps: u64,
    files: Vec<(String, Vec<u8>)>,
}

fn files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut v: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .expect("out dir")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e != "ckpt"))
        .map(|p| {
            let name = p.file_name().unwrap_or_default().to_string_lossy().into();
            (name, std::fs::read(&p).expect("read"))
        })
        .collect();
    v.sort();
    v
}

/// Run `case` into `out` as `rc` says; the end state.
fn run(case: &Case, out: &Path, rc: &RunControl) -> chromaflow::error::Result<End> {
    let mut sim = Simulation::new(case, &rt(), &SimulationOptions::default())?;
    let summary = sim.run(out, &SnapshotOptions::default(), rc, |_, _| {})?;
    let solution = sim.solution()?.iter().map(|v| v.to_bits()).collect();
    let trees = sim.adaptive_trees()?.expect("an adaptive run has trees");
    Ok(End {
        solution,
        elements: summary.elements,
        trees,
        steps: summary.steps,
        files: files(out),
    })
}

fn checkpoint_every(every: f64) -> RunControl {
    RunControl {
        checkpoint_every: Some(every),
        ..RunControl::default()
    }
}

fn restart(from: &Path, every: f64) -> RunControl {
    RunControl {
        restart: Some(from.to_path_buf()),
        ..checkpoint_every(every)
    }
}

/// Stop at `t_stop` with checkpoints every `every`, continue from the last one to 0.2, and
/// compare with `full`; returns the checkpoint's steps since the last adaptation.
fn stop_and_continue(dir: &Path, on_host: bool, t_stop: f64, every: f64, full: &End) -> u64 {
    let out = dir.join(format!("part-{on_host}-{every}"));
    run(&case(on_host, t_stop), &out, &checkpoint_every(every)).expect("first part");
    let ck_path = out.join(FILE_NAME);
    let ck = Checkpoint::read(&ck_path).expect("checkpoint");
    assert!(ck.header.t < t_stop && ck.header.t > 0.0, "{}", ck.header.t);
    let since = ck
        .value(&ck_path, "steps since adaptation")
        .expect("counter");
    let end = run(&case(on_host, 0.2), &out, &restart(&ck_path, every)).expect("restart");
    assert_eq!(end.steps, full.steps);
    assert_eq!(end.elements, full.elements);
    assert!(end.trees == full.trees, "the adapted trees differ");
    assert!(end.solution == full.solution, "the solution differs");
    assert_eq!(
        end.files.iter().map(|f| &f.0).collect::<Vec<_>>(),
        full.files.iter().map(|f| &f.0).collect::<Vec<_>>()
    );
    for (a, b) in end.files.iter().zip(&full.files) {
        assert!(a.1 == b.1, "{} differs after the restart", a.0);
    }
    since
}

/// Both kinds of checkpoint on one adaptation path: at 0.07 (the first step boundary past it
/// is right after an adaptation) and at the output time 0.1 (between two adaptations).
fn restart_equals_uninterrupted(on_host: bool) {
    let dir = tempfile::tempdir().expect("tempdir");
    let full = run(
        &case(on_host, 0.2),
        &dir.path().join("full"),
        &RunControl::default(),
    )
    .expect("uninterrupted run");
    assert!(
        full.elements > 200,
        "the vortex was refined: {}",
        full.elements
    );
    assert_eq!(
        stop_and_continue(dir.path(), on_host, 0.1, 0.07, &full),
        0,
        "a checkpoint past 0.07 comes right after an adaptation"
    );
    // Checkpoints at the output times 0.05, 0.1 and 0.15: at least one lies between two
    // adaptations (the others right after one), so the steps since the last adaptation carry.
    let between = [(0.07, 0.05), (0.15, 0.1), (0.17, 0.15)]
        .iter()
        .map(|&(stop, every)| stop_and_continue(dir.path(), on_host, stop, every, &full))
        .filter(|&since| since > 0)
        .count();
    assert!(between > 0, "no checkpoint between two adaptations");
}

#[test]
fn device_path_restart_equals_uninterrupted() {
    restart_equals_uninterrupted(false);
}

#[test]
fn host_path_restart_equals_uninterrupted() {
    restart_equals_uninterrupted(true);
}

/// The error of restarting `case` from `ck`, which must name the file and contain `want`.
fn refused(case: &Case, ck: &Path, out: &Path, want: &str) {
    let msg = run(case, out, &restart(ck, 0.1))
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(
        msg.contains(want) && msg.contains(&ck.display().to_string()),
        "expected '{want}' naming {}: {msg}",
        ck.display()
    );
}

/// Replace `from` by `to` in the checkpoint's header line (the header is not under the
/// payload's checksum: what it says is checked against the trees instead).
fn edit_header(src: &Path, dst: &Path, from: &str, to: &str) -> PathBuf {
    let bytes = std::fs::read(src).expect("read");
    let split = bytes
        .iter()
        .enumerate()
        .filter(|(_, &b)| b == b'\n')
        .nth(1)
        .map(|(i, _)| i)
        .expect("header line");
    let header = String::from_utf8_lossy(&bytes[..split]).into_owned();
    assert!(header.contains(from), "{from} not in {header}");
    let mut out = header.replace(from, to).into_bytes();
    out.extend_from_slice(&bytes[split..]);
    std::fs::write(dst, out).expect("write");
    dst.to_path_buf()
}

#[test]
fn mismatched_or_broken_adaptive_checkpoints_are_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    let out = d.join("part");
    run(&case(false, 0.1), &out, &checkpoint_every(0.07)).expect("run");
    let ck = out.join(FILE_NAME);
    let other = d.join("other");
    let mut levels = case(false, 0.2);
    levels.amr = levels.amr.map(|a| AmrOptions { max_level: 2, ..a });
    refused(&levels, &ck, &other, "amr levels is 3 there, 2 here");
    let mut order = case(false, 0.2);
    order.order = 2;
    refused(&order, &ck, &other, "order is 1 there, 2 here");
    refused(
        &case(true, 0.2),
        &ck,
        &other,
        "amr path is device there, host here",
    );
    let mut mesh = case(false, 0.2);
    mesh.mesh = Case::vortex(260).mesh;
    refused(&mesh, &ck, &other, "another mesh");
    let mut plain = case(false, 0.2);
    plain.amr = None;
    refused(&plain, &ck, &other, "amr levels is 3 there, none here");

    let cuda = edit_header(&ck, &d.join("cuda.ckpt"), "\"wgpu\"", "\"cuda\"");
    refused(
        &case(false, 0.2),
        &cuda,
        &other,
        "backend is cuda there, wgpu here",
    );
    let elements = Checkpoint::read(&ck)
        .and_then(|c| c.value(&ck, "elements"))
        .expect("elements");
    let lying = edit_header(
        &ck,
        &d.join("lying.ckpt"),
        &format!("\"elements\":{elements}"),
        &format!("\"elements\":{}", elements + 4),
    );
    refused(&case(false, 0.2), &lying, &other, "it says");

    let bytes = std::fs::read(&ck).expect("read");
    let cut = d.join("cut.ckpt");
    std::fs::write(&cut, &bytes[..bytes.len() - 8]).expect("write");
    refused(&case(false, 0.2), &cut, &other, "truncated");
    let mut flipped = bytes.clone();
    let at = bytes.len() - 100;
    flipped[at] ^= 0x10;
    let corrupt = d.join("corrupt.ckpt");
    std::fs::write(&corrupt, &flipped).expect("write");
    refused(&case(false, 0.2), &corrupt, &other, "checksum");
}
