//! Checkpoint and restart of adaptive DG runs on the GPU adapter (lavapipe in CI; fails, never
//! skips, without one): a run continued from a mid-run checkpoint ends in the same bits as one
//! never stopped (solution words, element count, the adapted trees id for id, the CSV and every
//! PNG), on the device adaptation path and on the host path, from a checkpoint right after an
//! adaptation and from one at an output time between two adaptations, and with reorders after
//! the restart point on a mesh whose Morton frame the f32 trees would not give back; a
//! checkpoint of another
//! base mesh, level count, order, backend or path, or one that does not hold together, is an
//! error naming the file and what differs.

use chromaflow::checkpoint::{Checkpoint, FILE_NAME};
use chromaflow::mesh::MeshSource;
use chromaflow::runtime::Runtime;
use chromaflow::solver::dg::amr::reorder::{MortonFrame, ReorderPolicy};
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

/// [`case`] on the device path reordering after every second adaptation, on the square
/// [-5.1, 5.3]²: its box is not f32, so the Morton frame taken from the device's f32 trees
/// differs from the one the run took from the host's f64 trees.
fn framed(t_end: f64) -> Case {
    let mut case = case(false, t_end);
    case.mesh = MeshSource::Rectangle {
        x0: -5.1,
        x1: 5.3,
        y0: -5.1,
        y1: 5.3,
        n: 200,
    };
    case.amr = case.amr.map(|a| AmrOptions {
        reorder: ReorderPolicy::Every(2),
        ..a
    });
    case
}

/// What a run ends with: the solution's bits, the element count, the trees, every file, the
/// Morton frame and the reorders this process ran.
#[derive(Debug, PartialEq)]
struct End {
    solution: Vec<u64>,
    elements: usize,
    trees: FlatTree,
    steps: u64,
    files: Vec<(String, Vec<u8>)>,
    frame: Option<MortonFrame>,
    reorders: usize,
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
        frame: sim.morton_frame(),
        reorders: summary.amr.map_or(0, |a| a.reorders),
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
/// compare with `full`; returns the checkpoint's steps since the last adaptation and the end.
fn stop_and_continue(
    dir: &Path,
    case: &dyn Fn(f64) -> Case,
    t_stop: f64,
    every: f64,
    full: &End,
) -> (u64, End) {
    let out = dir.join(format!("part-{t_stop}-{every}"));
    run(&case(t_stop), &out, &checkpoint_every(every)).expect("first part");
    let ck_path = out.join(FILE_NAME);
    let ck = Checkpoint::read(&ck_path).expect("checkpoint");
    assert!(ck.header.t < t_stop && ck.header.t > 0.0, "{}", ck.header.t);
    let since = ck
        .value(&ck_path, "steps since adaptation")
        .expect("counter");
    let end = run(&case(0.2), &out, &restart(&ck_path, every)).expect("restart");
    assert_eq!(end.steps, full.steps);
    assert_eq!(end.elements, full.elements);
    assert_eq!(end.frame, full.frame, "the Morton frame differs");
    assert!(end.trees == full.trees, "the adapted trees differ");
    assert!(end.solution == full.solution, "the solution differs");
    assert_eq!(
        end.files.iter().map(|f| &f.0).collect::<Vec<_>>(),
        full.files.iter().map(|f| &f.0).collect::<Vec<_>>()
    );
    for (a, b) in end.files.iter().zip(&full.files) {
        assert!(a.1 == b.1, "{} differs after the restart", a.0);
    }
    (since, end)
}

/// Both kinds of checkpoint on one adaptation path: at 0.07 (the first step boundary past it
/// is right after an adaptation) and at the output time 0.1 (between two adaptations).
fn restart_equals_uninterrupted(on_host: bool) {
    let dir = tempfile::tempdir().expect("tempdir");
    let case = |t| case(on_host, t);
    let full = run(&case(0.2), &dir.path().join("full"), &RunControl::default())
        .expect("uninterrupted run");
    assert!(
        full.elements > 200,
        "the vortex was refined: {}",
        full.elements
    );
    assert_eq!(
        stop_and_continue(dir.path(), &case, 0.1, 0.07, &full).0,
        0,
        "a checkpoint past 0.07 comes right after an adaptation"
    );
    // Checkpoints at the output times 0.05, 0.1 and 0.15: at least one lies between two
    // adaptations (the others right after one), so the steps since the last adaptation carry.
    let between = [(0.07, 0.05), (0.15, 0.1), (0.17, 0.15)]
        .iter()
        .map(|&(stop, every)| stop_and_continue(dir.path(), &case, stop, every, &full).0)
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

/// Reorders after the restart point use the Morton frame the run took when its trees first
/// went to the device, kept in the checkpoint: the frame that the restart's f32 trees give
/// differs on this mesh (so a restart that rebuilt it would be caught by the frame check of
/// [`stop_and_continue`], and could order differently), and the restarted run reorders and
/// still ends in the same bits.
#[test]
fn reorders_after_a_device_restart_keep_the_morton_frame() {
    let dir = tempfile::tempdir().expect("tempdir");
    let full = run(
        &framed(0.2),
        &dir.path().join("full"),
        &RunControl::default(),
    )
    .expect("uninterrupted run");
    let frame = full.frame.expect("the trees went to the device");
    assert_ne!(
        MortonFrame::of_flat(&full.trees),
        frame,
        "the f32 trees give the run's frame back: this mesh cannot tell the two apart"
    );
    let (_, end) = stop_and_continue(dir.path(), &framed, 0.1, 0.07, &full);
    assert!(end.reorders > 0, "no reorder after the restart point");
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

/// The checkpoint `src` with its header changed by `edit`, written to `dst` under a new
/// checksum: what a header says is checked against the run and the trees as well.
fn edit_header(src: &Path, dst: &Path, edit: impl FnOnce(&mut Checkpoint)) -> PathBuf {
    let mut ck = Checkpoint::read(src).expect("read");
    edit(&mut ck);
    ck.write(dst).expect("write");
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

    let cuda = edit_header(&ck, &d.join("cuda.ckpt"), |c| {
        c.header.settings.insert("backend".into(), "cuda".into());
    });
    refused(
        &case(false, 0.2),
        &cuda,
        &other,
        "backend is cuda there, wgpu here",
    );
    let elements = Checkpoint::read(&ck)
        .and_then(|c| c.value(&ck, "elements"))
        .expect("elements");
    let lying = edit_header(&ck, &d.join("lying.ckpt"), |c| {
        c.header.values.insert("elements".into(), elements + 4);
    });
    refused(&case(false, 0.2), &lying, &other, "it says");
    let frame = edit_header(&ck, &d.join("frame.ckpt"), |c| {
        c.header
            .values
            .insert("morton scale x bits".into(), (-1f32).to_bits().into());
    });
    refused(&case(false, 0.2), &frame, &other, "Morton frame");

    // The same lie written into the file's header line by hand: the checksum catches it.
    let bytes = std::fs::read(&ck).expect("read");
    let lines: Vec<usize> = (0..bytes.len()).filter(|&i| bytes[i] == b'\n').collect();
    let header = std::str::from_utf8(&bytes[..lines[1]]).expect("a text header");
    let from = format!("\"elements\":{elements},");
    assert!(header.contains(&from), "{from} not in {header}");
    let mut edited = header
        .replacen(&from, &format!("\"elements\":{},", elements + 4), 1)
        .into_bytes();
    edited.extend_from_slice(&bytes[lines[1]..]);
    let by_hand = d.join("by-hand.ckpt");
    std::fs::write(&by_hand, edited).expect("write");
    refused(&case(false, 0.2), &by_hand, &other, "checksum");

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
