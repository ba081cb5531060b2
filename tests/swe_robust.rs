//! Shallow water that stops instead of producing garbage (issue 14) and survives wet/dry
//! fronts (issue 15): the depth stop (a layer depth below −0.5 H_ref before clipping) fires in
//! the same cell and step on the GPU as in the f64 reference, on every update path; legitimate
//! dam breaks over dry land run through; rejected fused steps are counted like the reference
//! counts them. Small criss-cross meshes on lavapipe; fails (not skips) without an adapter.

use chromaflow::runtime::Runtime;
use chromaflow::solver::swe::case::{Case, Setup};
use chromaflow::solver::swe::cpu::CpuSolver;
use chromaflow::solver::swe::diag::layer_masses;
use chromaflow::solver::swe::gpu::{FluxLayout, GpuSolver};
use chromaflow::solver::swe::DepthStop;

fn rt() -> Runtime {
    Runtime::wgpu().expect("a GPU adapter is required (CI: lavapipe)")
}

/// A case on `mesh` over `domain` with the `[initial]` lines given.
fn case(mesh: &str, domain: &str, r: f64, initial: &str, final_time: f64) -> (Case, Setup) {
    let text = format!(
        "[mesh]\nbuiltin = \"{mesh}\"\ndomain = {domain}\n[physics]\nr = {r}\n\
         [initial]\n{initial}\n[run]\nfinal_time = {final_time}\n"
    );
    let case = Case::from_toml(&text, std::path::Path::new("robust.toml")).unwrap();
    let setup = case.prepare().unwrap();
    (case, setup)
}

/// A 1 m upper layer over 5 m in a 10 m square with walls (M(10)), with the `[initial]`
/// velocity lines given.
fn walled(velocities: &str, final_time: f64) -> (Case, Setup) {
    let initial = format!("H = 6.0\nh1 = 1.0\nh2 = \"H - h1\"\n{velocities}");
    case(
        "cross:10",
        "[-5.0, 5.0, -5.0, 5.0]",
        0.5,
        &initial,
        final_time,
    )
}

fn gpu(rt: &Runtime, case: &Case, setup: &Setup, layout: FluxLayout, order: u32) -> GpuSolver {
    GpuSolver::with_order(
        rt,
        &setup.mesh,
        &setup.depth,
        &setup.state,
        case.scheme,
        case.physics,
        case.cfl,
        layout,
        order,
    )
    .unwrap()
}

fn cpu(case: &Case, setup: &Setup, lagged: bool, order: u32) -> CpuSolver {
    let mut c = CpuSolver::new(
        &setup.mesh,
        setup.depth.clone(),
        setup.state.clone(),
        case.scheme,
        case.physics,
        case.cfl,
    )
    .unwrap();
    c.lagged_dt = lagged;
    c.order = order;
    c
}

/// The depth stop fires in the same cell and step on the GPU as in the f64 reference, for the
/// fused and the unfused update at orders 1 and 2 (the layers sheared at ∓40 m/s against the
/// walls: a lower layer cell next to the right wall goes to about −13 m before clipping in step
/// 6, far below the −3 m stop); the times agree to 1e-6 and the lowest depths to 1e-3
/// relative (f32), no state is NaN, and no step is taken after it.
#[test]
fn the_depth_stop_fires_in_the_cell_and_step_of_the_reference() {
    let rt = rt();
    let (case, setup) = walled("u1x = -40.0\nu2x = 40.0", 0.5);
    for (layout, order) in [
        (FluxLayout::Fused, 1),
        (FluxLayout::ColoredScatter, 1),
        (FluxLayout::CellGather, 1),
        (FluxLayout::Fused, 2),
        (FluxLayout::ColoredScatter, 2),
    ] {
        let mut c = cpu(&case, &setup, layout.lagged_dt(), order);
        c.run_to(case.final_time);
        let want: DepthStop = c.stop.expect("the reference stops");
        assert!(c.stop_level < 0.0 && want.depth < c.stop_level, "{want:?}");
        let mut g = gpu(&rt, &case, &setup, layout, order);
        let err = g
            .advance_to(case.final_time, 64, &mut |_| true)
            .unwrap_err()
            .to_string();
        let what = format!("{layout:?} order {order}: {err}; reference {want:?}");
        assert!(
            err.contains("the run stopped at t = ")
                && err.contains(&format!("in step {}", want.step))
                && err.contains("below the depth stop -3 m")
                && err.contains(&format!("element {} (triangle)", want.cell)),
            "{what}"
        );
        let got = g.depth_stop().unwrap().expect("the GPU record");
        assert_eq!((got.cell, got.step), (want.cell, want.step), "{what}");
        assert!((got.t - want.t).abs() <= 1e-6 * want.t, "{what}");
        assert!(
            (got.depth - want.depth).abs() <= 1e-4 * want.depth.abs(),
            "{what}"
        );
        let ctl = g.read_control().unwrap();
        assert!(ctl.steps as u64 <= want.step, "{what}: {ctl:?}");
        let state = g.read_state().unwrap();
        assert!(state.iter().flatten().all(|v| v.is_finite()), "{what}");
        // Nothing moves any more.
        g.queue_steps(3).unwrap();
        assert_eq!(g.read_state().unwrap(), state, "{what}");
    }
}

/// Two-layer dam breaks over dry land run to t = 1 on the fused and the unfused path without
/// the depth stop firing, each layer's mass conserved to 1e-5 (walls all round; f32): on a
/// flat bed, and the wet/dry front of issue 15 (r = 0.98, the upper layer floods a shelf 0.1 m
/// above the reference level that the lower layer cannot climb), which went NaN at t ≈ 0.27
/// on both paths before thin films had their momentum desingularised (spec §10 eq. (23)).
#[test]
fn dam_breaks_over_dry_land_run_through() {
    let rt = rt();
    let flat = "H = 0.0\nh1 = \"if(x < 0, 0.5, 0)\"\nh2 = \"if(x < 0, 0.5, 0)\"";
    let shelf = "H = \"if(x < 0, 1, -0.1)\"\nh1 = \"if(x < 0, 0.3, 0)\"\n\
                 h2 = \"if(x < 0, H - 0.1, 0)\"";
    for (r, initial) in [(0.5, flat), (0.98, shelf)] {
        let (case, setup) = case("cross:20", "[-5.0, 5.0, -1.0, 1.0]", r, initial, 1.0);
        let m0 = layer_masses(&setup.mesh.geom.areas, &setup.state);
        for layout in [FluxLayout::Fused, FluxLayout::ColoredScatter] {
            let mut g = gpu(&rt, &case, &setup, layout, 1);
            let ctl = g
                .advance_to(1.0, 256, &mut |_| true)
                .unwrap_or_else(|e| panic!("{layout:?} r = {r}: {e}"));
            assert_eq!(ctl.t, 1.0);
            assert!(g.depth_stop().unwrap().is_none());
            let m = layer_masses(&setup.mesh.geom.areas, &g.read_state().unwrap());
            for k in 0..2 {
                let drift = (m[k] - m0[k]).abs() / m0[k];
                assert!(
                    drift <= 1e-5,
                    "{layout:?} r = {r}: layer {k} drift {drift:e}"
                );
            }
        }
    }
}

/// Fused steps whose lagged Δt exceeds the Courant limit of the state they updated are
/// counted as the f64 reference counts them (two streams colliding at ±8 m/s, to t = 0.3), and
/// the unfused path, whose Δt is never lagged, rejects none.
#[test]
fn rejected_steps_are_counted_like_the_reference() {
    let rt = rt();
    let (case, setup) = walled(COLLIDING, 0.3);
    for layout in [FluxLayout::Fused, FluxLayout::ColoredScatter] {
        let mut c = cpu(&case, &setup, layout.lagged_dt(), 1);
        c.run_to(0.3);
        let mut g = gpu(&rt, &case, &setup, layout, 1);
        let ctl = g.advance_to(0.3, 64, &mut |_| true).unwrap();
        assert_eq!(ctl.counters().rejected, c.counters.rejected, "{layout:?}");
        assert_eq!(ctl.steps as u64, c.steps, "{layout:?}");
        assert_eq!(ctl.rejected > 0, layout == FluxLayout::Fused, "{layout:?}");
    }
}

/// Two streams colliding at ±8 m/s (both layers).
const COLLIDING: &str = "u1x = \"if(x < 0, 8, -8)\"\nu2x = \"if(x < 0, 8, -8)\"";

/// The `swe` command reports the rejected steps as the f64 lagged-Δt reference counts them
/// (the colliding streams above, fused by default): in the run report ("rejected steps N") and
/// the last row of the CSV's `rejected` column.
#[test]
fn the_swe_command_reports_rejected_steps() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("collide.toml");
    let text = "[mesh]\nbuiltin = \"cross:10\"\ndomain = [-5.0, 5.0, -5.0, 5.0]\n[physics]\n\
                r = 0.5\n[initial]\nH = 6.0\nh1 = 1.0\nh2 = \"H - h1\"\n\
                u1x = \"if(x < 0, 8, -8)\"\nu2x = \"if(x < 0, 8, -8)\"\n[run]\n\
                final_time = 0.3\n[output]\nfields = [\"h1\"]\n";
    std::fs::write(&path, text).unwrap();
    let case = Case::from_toml(text, &path).unwrap();
    let setup = case.prepare().unwrap();
    let mut c = cpu(&case, &setup, true, 1);
    c.run_to(case.final_time);
    let want = c.counters.rejected;
    assert!(want > 0);
    let out = dir.path().join("out");
    let run = std::process::Command::new(env!("CARGO_BIN_EXE_chromaflow"))
        .args(["swe", "--case"])
        .arg(&path)
        .arg("--out")
        .arg(&out)
        .env("XDG_RUNTIME_DIR", std::env::temp_dir())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(
        run.status.success(),
        "{stdout} {}",
        String::from_utf8_lossy(&run.stderr)
    );
    assert!(
        stdout.contains(&format!("rejected steps {want}\n")),
        "{stdout}"
    );
    let csv = std::fs::read_to_string(out.join("collide.csv")).unwrap();
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let column = header
        .iter()
        .position(|&c| c == "rejected")
        .expect("a rejected column");
    let last: Vec<&str> = csv.lines().last().unwrap().split(',').collect();
    assert_eq!(last[column].parse::<f64>().unwrap(), want as f64, "{csv}");
}
