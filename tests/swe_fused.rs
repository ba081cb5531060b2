//! The fused first-order step (`swe_fused_step` + `swe_fused_clock`, the default at order 1)
//! beyond the conformance rows (src/conformance/swe.rs: GPU = f64 lagged-Δt reference for
//! every scheme, driven boundaries with gauges, a dry layer, orderings, the spec table and the
//! lake at rest): the ping-pong state buffers across odd batches and checkpoints, the NaN
//! signal, friction on the lake at rest, mass over a long run, and the `swe` and `bench swe`
//! commands. Runs on lavapipe in CI; fails (not skips) without an adapter.

use chromaflow::order::{prepare, Ordering, PrepareOptions};
use chromaflow::runtime::Runtime;
use chromaflow::solver::swe::case::{Case, DEFAULT_SEED};
use chromaflow::solver::swe::cpu::CpuSolver;
use chromaflow::solver::swe::diag::{layer_masses, max_speed};
use chromaflow::solver::swe::friction::Friction;
use chromaflow::solver::swe::gpu::{FluxLayout, GpuSolver};
use chromaflow::solver::swe::mesh::{criss_cross, EdgeKind, SweMesh};
use chromaflow::solver::swe::{Physics, Scheme};

fn rt() -> Runtime {
    Runtime::wgpu().expect("a GPU adapter is required (CI: lavapipe)")
}

/// Built-in `case` on the criss-cross mesh M(n), walls all round.
fn setup(case: &str, n: usize) -> (Case, SweMesh, Vec<f64>, Vec<[f64; 6]>) {
    let case = Case::builtin(case).unwrap();
    let raw = criss_cross(n).unwrap();
    let ordered = prepare(&raw, &PrepareOptions::new(Ordering::Rcm, DEFAULT_SEED)).unwrap();
    let mesh = SweMesh::new(&ordered, |_| EdgeKind::Wall).unwrap();
    let (depth, state) = case.initial_state(&mesh).unwrap();
    (case, mesh, depth, state)
}

fn fused(
    rt: &Runtime,
    case: &Case,
    mesh: &SweMesh,
    depth: &[f64],
    state: &[[f64; 6]],
) -> GpuSolver {
    GpuSolver::new(
        rt,
        mesh,
        depth,
        state,
        Scheme::PvmIfcp,
        case.physics,
        case.cfl,
        FluxLayout::Fused,
    )
    .unwrap()
}

/// Odd batches leave the state in the other buffer: 3 + 4 steps, 7 steps in one batch and 7
/// single steps give the same bits, and match the f64 lagged-Δt reference (|Δh| ≤ 5e-6 m,
/// |Δq| ≤ 2e-5 m² s⁻¹, f32 round-off over 7 steps); the unlagged reference is farther.
#[test]
fn odd_batches_and_single_steps_give_the_same_bits() {
    let rt = rt();
    let (case, mesh, depth, state) = setup("test1", 12);
    let mut a = fused(&rt, &case, &mesh, &depth, &state);
    a.steps(3).unwrap();
    a.steps(4).unwrap();
    let mut b = fused(&rt, &case, &mesh, &depth, &state);
    b.steps(7).unwrap();
    let mut c = fused(&rt, &case, &mesh, &depth, &state);
    for _ in 0..7 {
        c.steps(1).unwrap();
    }
    let sa = a.read_state().unwrap();
    assert_eq!(sa, b.read_state().unwrap());
    assert_eq!(sa, c.read_state().unwrap());
    assert_eq!(a.read_control().unwrap(), b.read_control().unwrap());
    assert_eq!(a.read_control().unwrap().steps, 7);
    let reference = |lagged: bool| {
        let mut r = CpuSolver::new(
            &mesh,
            depth.clone(),
            state.clone(),
            Scheme::PvmIfcp,
            case.physics,
            case.cfl,
        )
        .unwrap();
        r.lagged_dt = lagged;
        r.run_steps(7);
        r
    };
    let diff = |r: &CpuSolver| {
        let mut d = [0.0f64; 2];
        for (x, y) in sa.iter().zip(&r.state) {
            for k in 0..6 {
                let j = usize::from(k % 3 != 0);
                d[j] = d[j].max((x[k] - y[k]).abs());
            }
        }
        d
    };
    let lagged = reference(true);
    let [dh, dq] = diff(&lagged);
    assert!(dh <= 5e-6 && dq <= 2e-5, "dh {dh:e} dq {dq:e}");
    let t = a.read_control().unwrap().t as f64;
    assert!(
        (t - lagged.t).abs() <= 1e-6 * lagged.t,
        "t {t} vs {}",
        lagged.t
    );
    let [uh, _] = diff(&reference(false));
    assert!(
        uh > 10.0 * dh,
        "the unlagged reference is no farther: {uh:e} vs {dh:e}"
    );
}

/// A checkpoint taken between odd steps restores the state, the lagged Δt and the buffer
/// parity: the restored run continues to the same bits.
#[test]
fn restart_continues_to_the_same_bits() {
    let rt = rt();
    let (case, mesh, depth, state) = setup("test2", 10);
    let mut a = fused(&rt, &case, &mesh, &depth, &state);
    a.steps(5).unwrap();
    let words = a.save_words().unwrap();
    a.steps(6).unwrap();
    let mut b = fused(&rt, &case, &mesh, &depth, &state);
    b.steps(2).unwrap();
    b.restore_words(&words).unwrap();
    b.steps(6).unwrap();
    assert_eq!(a.read_state().unwrap(), b.read_state().unwrap());
    assert_eq!(a.read_control().unwrap(), b.read_control().unwrap());
}

/// A NaN in the state stops the run (the local Δt −1 signal of the fused step reaches the
/// clock) with an error naming the cell.
#[test]
fn a_nan_stops_the_run_naming_the_cell() {
    let rt = rt();
    let (case, mesh, depth, mut state) = setup("test1", 8);
    state[17][1] = f64::NAN;
    let mut g = fused(&rt, &case, &mesh, &depth, &state);
    let err = g
        .advance_to(0.1, 16, &mut |_| true)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("blew up") && err.contains("element 17 (triangle)"),
        "{err}"
    );
    assert_eq!(g.read_control().unwrap().steps, 0, "no step was taken");
}

/// The lake at rest over the Gaussian bump with Manning and interface friction stays at rest
/// on the fused path (max |u| ≤ 1e-5 m/s after 300 steps) and each layer's mass is conserved
/// on Test 1 over 300 steps (relative 1e-6, f32).
#[test]
fn lake_stays_at_rest_with_friction_and_mass_is_conserved() {
    let rt = rt();
    let (case, mesh, depth, state) = setup("lake", 16);
    let phys = Physics {
        friction: Friction {
            manning: 0.03,
            interface: 0.002,
        },
        ..case.physics
    };
    let mut g = GpuSolver::new(
        &rt,
        &mesh,
        &depth,
        &state,
        Scheme::PvmIfcp,
        phys,
        case.cfl,
        FluxLayout::Fused,
    )
    .unwrap();
    g.steps(300).unwrap();
    let u = max_speed(&g.read_state().unwrap(), phys.dry_tol);
    assert!(u <= 1e-5, "max |u| {u:e}");

    let (case, mesh, depth, state) = setup("test1", 16);
    let m0 = layer_masses(&mesh.geom.areas, &state);
    let mut g = fused(&rt, &case, &mesh, &depth, &state);
    g.steps(300).unwrap();
    let m = layer_masses(&mesh.geom.areas, &g.read_state().unwrap());
    for k in 0..2 {
        let drift = (m[k] - m0[k]).abs() / m0[k];
        assert!(drift <= 1e-6, "layer {k}: {drift:e}");
    }
}

fn chromaflow(args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_chromaflow"))
        .args(args)
        .output()
        .unwrap()
}

/// `swe` runs the fused step by default at order 1 and the scatter on request; both conserve
/// mass on Test 1 and report a closed domain (with the mass guard on).
#[test]
fn swe_command_runs_the_fused_step_by_default() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("t1");
    let out = out.to_str().unwrap();
    for (extra, layout) in [(None, "fused"), (Some("--scatter"), "edge-scatter")] {
        let mut args = vec![
            "-q",
            "swe",
            "--cells",
            "400",
            "--final-time",
            "0.05",
            "--json",
            "--overwrite",
            "--out",
            out,
        ];
        args.extend(extra);
        let o = chromaflow(&args);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let summary: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(summary["layout"], layout);
        assert_eq!(summary["closed"], true);
        assert_eq!(summary["mass_guard"], 5e-2, "walls: the default mass guard");
        assert_eq!(summary["t"].as_f64().unwrap() as f32, 0.05f32);
        for k in 0..2 {
            let drift = summary["mass_drift"][k].as_f64().unwrap();
            assert!(drift <= 1e-6, "{layout} layer {k}: {drift}");
        }
    }
}

/// `bench swe` times the fused step next to the scatter and prints the compulsory bytes
/// (80 B per cell + 32 B per edge for the fused step) and the copy bandwidth.
#[test]
fn bench_swe_reports_the_fused_step_and_its_bytes() {
    let o = chromaflow(&[
        "-q",
        "bench",
        "swe",
        "--sizes",
        "1000",
        "--orderings",
        "rcm",
        "--schemes",
        "pvm-ifcp",
        "--layouts",
        "fused,scatter",
        "--kernel-steps",
        "3",
        "--copy-mib",
        "1",
        "--json",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(
        v["copy_bandwidth"]["gb_per_s"].as_f64().unwrap() > 0.0,
        "{v}"
    );
    let rows = v["rows"].as_array().unwrap();
    let layouts: Vec<&str> = rows.iter().map(|r| r["layout"].as_str().unwrap()).collect();
    assert_eq!(layouts, ["fused", "edge-scatter"]);
    let f = &rows[0];
    let (cells, edges) = (f["cells"].as_f64().unwrap(), f["edges"].as_f64().unwrap());
    assert_eq!(
        f["min_bytes_per_step"].as_f64().unwrap(),
        80.0 * cells + 32.0 * edges
    );
    assert!(f["min_gb_per_s"].as_f64().unwrap() > 0.0);
    assert!(
        rows[1]["min_bytes_per_step"].as_f64().unwrap() > f["min_bytes_per_step"].as_f64().unwrap()
    );
    // Test 1 to its final time on both paths (9 steps on this mesh).
    assert!(rows.iter().all(|r| r["steps"].as_u64().unwrap() > 5), "{v}");
    let pct = v["min_percent_of_copy"].as_array().unwrap();
    assert!(
        pct.iter().all(|p| p.as_f64().is_some_and(|p| p > 0.0)),
        "{v}"
    );
}

/// At order 2 the fused stages keep W^n in place: 3 + 4 steps and 7 steps give the same bits,
/// and a restart from a checkpoint continues to them.
#[test]
fn second_order_batches_and_restart_give_the_same_bits() {
    let rt = rt();
    let (case, mesh, depth, state) = setup("test1", 8);
    let make = || {
        GpuSolver::with_order(
            &rt,
            &mesh,
            &depth,
            &state,
            Scheme::IrRoe,
            case.physics,
            0.45,
            FluxLayout::Fused,
            2,
        )
        .unwrap()
    };
    let mut a = make();
    a.steps(3).unwrap();
    let words = a.save_words().unwrap();
    a.steps(4).unwrap();
    let mut b = make();
    b.steps(7).unwrap();
    let mut c = make();
    c.restore_words(&words).unwrap();
    c.steps(4).unwrap();
    let sa = a.read_state().unwrap();
    assert_eq!(sa, b.read_state().unwrap());
    assert_eq!(sa, c.read_state().unwrap());
    assert_eq!(a.read_control().unwrap().steps, 7);
}

/// Two streams collide at ±8 m/s: the speeds grow faster than the lagged Δt follows, and the
/// fused clock rejects the steps whose Δt exceeds the Courant limit 1 of the state they
/// updated and takes them again with that state's CFL step, as the f64 reference with
/// `lagged_dt` does (steps 5 and 7 here): after 12 real steps the same time (relative 1e-4,
/// measured 1.7e-5), the same numbers of rejected steps and of clipped depths, and the state
/// within |Δh| ≤ 1e-3 m, |Δq| ≤ 0.05 m² s⁻¹ (measured 1.3e-4 and 6.3e-3). (The session-6
/// case, an upper layer at 20 m/s into the walls, now ends at the depth stop.)
#[test]
fn steps_above_the_courant_limit_are_rejected_and_retaken() {
    let rt = rt();
    let text = r#"
[mesh]
builtin = "cross:10"
domain = [-5.0, 5.0, -5.0, 5.0]
[physics]
r = 0.5
[initial]
H = 6.0
h1 = 1.0
h2 = "H - h1"
u1x = "if(x < 0, 8, -8)"
u2x = "if(x < 0, 8, -8)"
[run]
final_time = 1.0
"#;
    let case = Case::from_toml(text, std::path::Path::new("wall.toml")).unwrap();
    let setup = case.prepare().unwrap();
    let make = || {
        GpuSolver::new(
            &rt,
            &setup.mesh,
            &setup.depth,
            &setup.state,
            Scheme::PvmIfcp,
            case.physics,
            case.cfl,
            FluxLayout::Fused,
        )
        .unwrap()
    };
    let mut passes = make();
    passes.set_end_time(f32::MAX).unwrap();
    passes.queue_steps(12).unwrap();
    let taken = passes.read_control().unwrap().steps;
    assert!(taken < 12, "no step was rejected ({taken} of 12 passes)");
    let mut g = make();
    g.steps(12).unwrap();
    let mut c = CpuSolver::new(
        &setup.mesh,
        setup.depth.clone(),
        setup.state.clone(),
        Scheme::PvmIfcp,
        case.physics,
        case.cfl,
    )
    .unwrap();
    c.lagged_dt = true;
    c.run_steps(12);
    let (mut dh, mut dq) = (0.0f64, 0.0f64);
    for (x, y) in g.read_state().unwrap().iter().zip(&c.state) {
        for k in 0..6 {
            let d = (x[k] - y[k]).abs();
            if k % 3 == 0 {
                dh = dh.max(d);
            } else {
                dq = dq.max(d);
            }
        }
    }
    let ctl = g.read_control().unwrap();
    let t = ctl.t as f64;
    assert!((t - c.t).abs() <= 1e-4 * c.t, "t {t} vs {}", c.t);
    assert_eq!(ctl.clipped as u64, c.counters.clipped);
    assert!(ctl.rejected > 0);
    assert_eq!(ctl.rejected as u64, c.counters.rejected);
    assert!(dh <= 1e-3 && dq <= 0.05, "dh {dh:e} dq {dq:e}");
}
