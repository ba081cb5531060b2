//! The Morton reorder of adapted meshes (issue 12, locality) on the GPU adapter (lavapipe in
//! CI; fails, never skips, without one): the device reorder equals its exact CPU reference bit
//! for bit with the adaptations after it still matching the f64 mesh; an adaptive run that
//! reorders after every adaptation is the same solution as one that never does; the reorder
//! brings the far faces back down; the policy's flag and case key judge bad input; an
//! adaptation that changes nothing stops after its smoothing and does not count towards a
//! reorder.

use chromaflow::conformance::dg::{all_boundaries, periodic_mesh};
use chromaflow::conformance::reorder::device_reorder;
use chromaflow::order::Ordering;
use chromaflow::runtime::Runtime;
use chromaflow::solver::dg::amr::reorder::{
    far_faces, far_fraction, reorder_reference, MortonFrame,
};
use chromaflow::solver::dg::amr::{AdaptiveMesh, AmrOptions, AmrStats, ReorderPolicy};
use chromaflow::solver::dg::gpu::adapted_launch_records;
use chromaflow::solver::dg::{BoundaryKind, Case, Simulation, SimulationOptions};
use std::collections::HashMap;

fn rt() -> Runtime {
    Runtime::wgpu().expect("a GPU adapter is required (CI: lavapipe)")
}

#[test]
fn device_reorder_equals_the_exact_reference_and_later_adaptations_follow() {
    let rt = rt();
    let walls = all_boundaries(Ordering::Original).expect("mesh");
    let summary = device_reorder(&rt, &walls, 2, 4, 5, true).unwrap_or_else(|e| panic!("{e}"));
    eprintln!("all boundary kinds: {summary}");
    let periodic = periodic_mesh().expect("mesh");
    let summary = device_reorder(&rt, &periodic, 1, 4, 23, true).unwrap_or_else(|e| panic!("{e}"));
    eprintln!("periodic: {summary}");
    // A run's gathered layout: the adaptations write the faces in left-element order only.
    let summary = device_reorder(&rt, &periodic, 1, 3, 43, false).unwrap_or_else(|e| panic!("{e}"));
    eprintln!("periodic, faces in left-element order only: {summary}");
}

/// A periodic vortex adapting every 2 steps under `policy`: its solution by element (the
/// vertices' bits), element count and the adaptation's totals.
fn vortex_run(policy: ReorderPolicy) -> (HashMap<[u64; 6], Vec<f64>>, usize, AmrStats) {
    let mut case = Case::vortex(300);
    case.boundaries = vec![
        (1, BoundaryKind::Periodic(3)),
        (3, BoundaryKind::Periodic(1)),
        (2, BoundaryKind::Periodic(4)),
        (4, BoundaryKind::Periodic(2)),
    ];
    case.order = 1;
    case.t_end = 0.2;
    case.amr = Some(AmrOptions {
        max_level: 2,
        every: Some(2),
        reorder: policy,
        ..AmrOptions::default()
    });
    let opts = SimulationOptions {
        fixed_dt: Some(0.01),
        ..SimulationOptions::default()
    };
    let mut sim = Simulation::new(&case, &rt(), &opts).expect("simulation");
    sim.advance_to(0.2).expect("run");
    let dm = sim.mesh().clone();
    let n = dm.num_elements;
    let c = sim.solution().expect("solution").to_vec();
    let rows = c.len() / n;
    let by_element = (0..n)
        .map(|i| {
            let v = dm.vertices[i];
            let key = [v[0][0], v[0][1], v[1][0], v[1][1], v[2][0], v[2][1]].map(f64::to_bits);
            (key, (0..rows).map(|r| c[r * n + i]).collect())
        })
        .collect();
    let stats = sim.amr_stats().expect("stats");
    assert!(stats.adaptations >= 8, "{stats:?}");
    (by_element, n, stats)
}

#[test]
fn an_adaptive_run_that_reorders_equals_one_that_does_not() {
    let (never, n_never, stats_never) = vortex_run(ReorderPolicy::Never);
    let (every, n_every, stats_every) = vortex_run(ReorderPolicy::Every(1));
    let (auto, n_auto, stats_auto) = vortex_run(ReorderPolicy::Auto);
    let reorders_every = stats_every.reorders;
    assert_eq!(stats_never.reorders, 0);
    // One per device adaptation (the initial refinements run on the host).
    assert!(reorders_every >= 8, "{stats_every:?}");
    // Auto reorders when the far faces have grown by 10% of all since the last reorder: not
    // after every adaptation, and it keeps them below the unordered run's.
    assert!(
        stats_auto.reorders >= 1 && stats_auto.reorders < reorders_every,
        "{stats_auto:?}"
    );
    assert!(
        stats_every.far_fraction < stats_never.far_fraction
            && stats_auto.far_fraction < stats_never.far_fraction,
        "far fractions: never {}, every {}, auto {}",
        stats_never.far_fraction,
        stats_every.far_fraction,
        stats_auto.far_fraction
    );
    assert_eq!(n_never, n_auto, "the same elements");
    assert_eq!(n_never, n_every, "the same elements");
    let mut worst = 0.0f64;
    for run in [&every, &auto] {
        for (element, want) in &never {
            let got = run
                .get(element)
                .unwrap_or_else(|| panic!("element {element:?} is missing from a reordered run"));
            for (g, w) in got.iter().zip(want) {
                worst = worst.max((g - w).abs() / (1.0 + w.abs()));
            }
        }
    }
    // f32 round-off (each element's faces add up in the same color order either way).
    assert!(worst <= 1e-6, "largest difference {worst:e}");
    eprintln!(
        "{n_every} elements, {} adaptations; reorders: every {reorders_every}, auto {}; far \
         faces at the end: never {:.1}%, every {:.1}%, auto {:.1}%; largest difference {worst:e}",
        stats_every.adaptations,
        stats_auto.reorders,
        100.0 * stats_never.far_fraction,
        100.0 * stats_every.far_fraction,
        100.0 * stats_auto.far_fraction
    );
}

#[test]
fn the_reorder_brings_the_far_faces_down() {
    // Many random adaptations of the reference mesh scatter the slots; the reorder gathers
    // them along the Morton curve again.
    use chromaflow::mesh::generate;
    use chromaflow::order::{prepare, PrepareOptions};
    let mesh = generate::rectangle(0.0, 1.0, 0.0, 1.0, 600, 3).expect("mesh");
    let om = prepare(&mesh, &PrepareOptions::new(Ordering::ColorRenumbered, 2)).expect("order");
    let base =
        chromaflow::solver::dg::DgMesh::build(&om, &chromaflow::conformance::dg::mixed_boundaries)
            .expect("mesh");
    let mut am = AdaptiveMesh::new(&base, 3).expect("trees");
    let proj = chromaflow::solver::dg::amr::Projection::new(1);
    let tables = chromaflow::solver::dg::BasisTables::new(1);
    let mut coef = chromaflow::conformance::amr::smooth_state(&am, &tables);
    let mut seed = 11;
    for _ in 0..8 {
        let faces = am.faces().expect("faces");
        let mut flags = chromaflow::conformance::amr::rand_flags(am.num_active(), &mut seed);
        am.smooth_flags(&faces, &mut flags);
        am.adapt(&flags, &mut coef, &proj).expect("adapt");
    }
    let dm = am.dg_mesh().expect("mesh");
    let adapted = far_fraction(far_faces(&dm), dm.edges.len());
    let (_, sorted) = reorder_reference(&am, &MortonFrame::of(&am)).expect("reorder");
    let dm = sorted.dg_mesh().expect("mesh");
    let reordered = far_fraction(far_faces(&dm), dm.edges.len());
    eprintln!(
        "{} elements: far faces {:.1}% adapted, {:.1}% reordered",
        am.num_active(),
        100.0 * adapted,
        100.0 * reordered
    );
    assert!(
        reordered < 0.5 * adapted,
        "{reordered} reordered vs {adapted} adapted"
    );
}

#[test]
fn the_reorder_policy_flag_and_key_judge_bad_input() {
    use std::process::Command;
    let out = tempfile::tempdir().expect("tempdir");
    let bad = Command::new(env!("CARGO_BIN_EXE_chromaflow"))
        .args([
            "dg",
            "--builtin",
            "dmr",
            "--cells",
            "300",
            "--amr-levels",
            "1",
        ])
        .args(["--amr-reorder", "every:0", "--out"])
        .arg(out.path())
        .env("XDG_RUNTIME_DIR", std::env::temp_dir())
        .output()
        .expect("run chromaflow");
    let stderr = String::from_utf8_lossy(&bad.stderr);
    assert!(!bad.status.success());
    assert!(
        stderr.contains("--amr-reorder") && stderr.contains("every:0"),
        "{stderr}"
    );
    let path = std::path::Path::new("case.toml");
    let text = |amr: &str| {
        format!(
            "mesh = \"rect:100\"\nt_end = 0.1\norder = 1\n[amr]\nlevels = 2\n{amr}\n[initial]\nkind = \"double_mach\"\n"
        )
    };
    let case = Case::from_toml(&text("reorder = \"every:4\""), path).expect("case");
    assert_eq!(case.amr.expect("amr").reorder, ReorderPolicy::Every(4));
    let case = Case::from_toml(&text(""), path).expect("case");
    assert_eq!(case.amr.expect("amr").reorder, ReorderPolicy::Auto);
    let err = Case::from_toml(&text("reorder = \"sometimes\""), path)
        .expect_err("bad policy")
        .to_string();
    assert!(
        err.contains("amr.reorder") && err.contains("sometimes") && err.contains("case.toml"),
        "{err}"
    );
}

/// Largest |a - b| relative to max |b|.
fn max_rel(a: &[f64], b: &[f64]) -> f64 {
    assert_eq!(a.len(), b.len());
    let scale = b.iter().fold(0.0f64, |m, v| m.max(v.abs())).max(1e-30);
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs() / scale)
        .fold(0.0, f64::max)
}

/// A double Mach reflection adapting on the device with a reorder after every adaptation
/// (`--amr-reorder every:1`): the reorder permutes the slots and faces after amr_scan 3 wrote
/// the solver's launch records, and they stay right (the same element count and faces), so
/// the rhs through them on the reordered mesh equals the f64 operator's; each
/// adaptation without a setup still reads back once (the reorder reads nothing: the far faces
/// ride one adaptation late on the smoothing's counters).
#[test]
fn reordering_after_every_adaptation_keeps_the_launch_records_and_one_read_back() {
    let rt = rt();
    let mut case = Case::double_mach(400);
    case.order = 1;
    case.amr = Some(AmrOptions {
        max_level: 3,
        reorder: ReorderPolicy::Every(1),
        ..AmrOptions::default()
    });
    let mut sim = Simulation::new(&case, &rt, &SimulationOptions::default()).expect("simulation");
    let mut counted = 0;
    for k in 0..6 {
        let before = sim.amr_stats().expect("stats");
        // 8 steps, one adaptation and its reorder, 8 steps: the read-backs it adds to the
        // clocks', the trees synced after.
        let wall = sim.time_adaptation_walls(8, 1).expect("adaptation")[0];
        let after = sim.amr_stats().expect("stats");
        assert_eq!(
            after.reorders,
            before.reorders + 1,
            "adaptation {k}: no reorder"
        );
        if after.setups == before.setups {
            assert!(
                wall.readbacks == 0,
                "adaptation {k} added {} read-backs to the run's clock reads",
                wall.readbacks
            );
            counted += 1;
        }
        let dm = sim.mesh().clone();
        // The run's gathered layout: the adaptation wrote the faces in left-element order only.
        assert_eq!(
            sim.launch_records().expect("records"),
            adapted_launch_records(&dm, sim.tables().nqe(), false),
            "adaptation {k}: launch records after the reorder"
        );
        let c = sim.solution().expect("solution").to_vec();
        let t = sim.time();
        let mut cpu = vec![0.0; c.len()];
        sim.operator().rhs(&c, t, &mut cpu);
        let gpu = sim.eval_rhs(&c, t).expect("rhs");
        let err = max_rel(&gpu, &cpu);
        assert!(
            err < 5e-5,
            "adaptation {k}: rhs through the launch records off by rel {err:e}"
        );
    }
    assert!(counted >= 4, "only {counted} adaptations without a setup");
    let stats = sim.amr_stats().expect("stats");
    assert!(stats.refined > 0 && stats.coarsened > 0, "{stats:?}");
}

/// `bench amr` reports the adaptations as a run pays them apart from those that also
/// reordered (a reorder's device work lands in the batch after the adaptation, and a median
/// over both mixed it into the adaptation's own cost). With a reorder every second
/// adaptation, half of the untimed ones carry one; with none, none do. (4 steps apart, so
/// that the mesh does not outgrow its buffers inside the timed window.)
#[test]
fn bench_amr_counts_the_reorders_apart_from_the_adaptations() {
    let bench = |policy: &str| -> serde_json::Value {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_chromaflow"))
            .args([
                "bench",
                "amr",
                "--builtin",
                "dmr",
                "--cells",
                "200",
                "--levels",
                "3",
                "--adaptations",
                "4",
                "--every",
                "4",
                "--device-only",
                "--json",
                "--reorder",
                policy,
            ])
            .env("XDG_RUNTIME_DIR", std::env::temp_dir())
            .output()
            .expect("run chromaflow");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
        json[0].clone()
    };
    let every = bench("every:2");
    assert_eq!(every["untimed_adaptations_that_grew"], 0, "{every}");
    assert_eq!(every["untimed_adaptations_with_reorder"], 2, "{every}");
    assert!(
        every["untimed_adaptation_with_reorder_us"].is_number(),
        "{every}"
    );
    assert!(every["reorder_us_when_run"].as_f64().expect("reorder time") > 0.0);
    // The batch after the second one, timed apart: what stays with the adapted mesh.
    let parts = &every["untimed_adaptation_parts_us"];
    for part in ["first_batch", "host", "second_batch", "later_batch"] {
        assert!(
            parts[part].as_f64().is_some_and(f64::is_finite),
            "{part}: {parts}"
        );
    }
    let never = bench("never");
    assert_eq!(never["untimed_adaptations_that_grew"], 0, "{never}");
    assert_eq!(never["untimed_adaptations_with_reorder"], 0, "{never}");
    assert!(
        never["untimed_adaptation_with_reorder_us"].is_null(),
        "{never}"
    );
    assert!(never["reorder_us_when_run"].is_null(), "{never}");
}

/// An adaptation whose smoothed flags coarsen and refine nothing stops after its smoothing:
/// the solution keeps its bits (its double-float pairs too) and the mesh its elements, the run
/// counts it apart, and it does not count towards a reorder, so with a reorder after every
/// adaptation the reorders are exactly the adaptations that changed the mesh. GK19's vortex at
/// CI size, adapting every step, where about one adaptation in three changes nothing.
#[test]
fn adaptations_that_change_nothing_stop_after_the_smoothing_and_do_not_reorder() {
    let rt = rt();
    let mut case = Case::gk19_vortex(180);
    case.amr = Some(AmrOptions {
        max_level: 3,
        every: Some(1),
        threshold: Some(0.0025),
        reorder: ReorderPolicy::Every(1),
        ..AmrOptions::default()
    });
    let mut sim = Simulation::new(&case, &rt, &SimulationOptions::default()).expect("simulation");
    // The initial refinement ran until nothing changed: adapting again at t = 0 changes nothing.
    let solution = sim.solution().expect("solution").to_vec();
    let levels = sim.levels().expect("levels");
    let initial = sim.amr_stats().expect("stats");
    sim.adapt().expect("adaptation");
    let stats = sim.amr_stats().expect("stats");
    assert_eq!(
        (
            stats.device_unchanged,
            stats.reorders,
            stats.refined - initial.refined,
            stats.coarsened - initial.coarsened
        ),
        (1, 0, 0, 0),
        "an adaptation of the resolved initial condition: {stats:?}"
    );
    let same_bits = sim
        .solution()
        .expect("solution")
        .iter()
        .zip(&solution)
        .all(|(a, b)| a.to_bits() == b.to_bits());
    assert!(same_bits, "the solution changed bits");
    assert_eq!(sim.levels().expect("levels"), levels, "the mesh changed");
    sim.advance_to(0.25).expect("run");
    let stats = sim.amr_stats().expect("stats");
    let changed = stats.device_adaptations - stats.device_unchanged;
    assert!(
        changed > 10 && stats.device_unchanged > 10,
        "{changed} adaptations changed the mesh, {} did not: the case should have both",
        stats.device_unchanged
    );
    assert_eq!(
        stats.reorders, changed,
        "a reorder after every adaptation that changed the mesh, none after the others"
    );
}
