//! DG kernels on the GPU adapter (lavapipe in CI) against the f64 CPU reference: rhs for every
//! order on a mesh with every boundary kind, periodic pairs, the limiter, full steps, f32
//! conservation, and a coarse double Mach reflection run. Fails (not skips) without an adapter.

use chromaflow::mesh::generate::{rectangle, split_square_grid};
use chromaflow::order::{prepare, Ordering, PrepareOptions};
use chromaflow::output::{save_field_png, Field, PlotOptions};
use chromaflow::runtime::Runtime;
use chromaflow::solver::dg::cpu::{run, Operator};
use chromaflow::solver::dg::euler::conserved;
use chromaflow::solver::dg::gpu::{GpuConfig, GpuDg};
use chromaflow::solver::dg::{BasisTables, BoundaryKind, Case, DgMesh, NumericalFlux, StateFn};

fn rt() -> Runtime {
    Runtime::wgpu().expect("a GPU adapter is required (CI: lavapipe)")
}

fn vortex() -> StateFn {
    StateFn::Vortex {
        x0: 0.4,
        y0: 0.6,
        u_inf: 0.5,
        v_inf: 0.3,
        beta: 1.0,
    }
}

/// Largest |a - b| relative to max |b|, with the index of the worst entry.
fn max_rel(a: &[f64], b: &[f64]) -> (f64, usize) {
    let scale = b.iter().fold(0.0f64, |m, v| m.max(v.abs())).max(1e-30);
    let mut worst = (0.0, 0);
    for (i, (x, y)) in a.iter().zip(b).enumerate() {
        let d = (x - y).abs() / scale;
        if d > worst.0 {
            worst = (d, i);
        }
    }
    worst
}

fn all_boundaries(ordering: Ordering) -> DgMesh {
    let mesh = rectangle(0.0, 1.0, 0.0, 1.0, 160, 3).expect("mesh");
    let om = prepare(&mesh, &PrepareOptions::new(ordering, 2)).expect("order");
    DgMesh::build(&om, &|t| {
        Ok(match t {
            1 => BoundaryKind::Wall,
            2 => BoundaryKind::Outflow,
            3 => BoundaryKind::Inflow(0),
            _ => BoundaryKind::Exact,
        })
    })
    .expect("dg mesh")
}

fn config(flux: NumericalFlux, limiter: bool, state_fn: StateFn) -> GpuConfig {
    GpuConfig {
        flux,
        state_fn,
        states: vec![conserved(1.1, 0.3, -0.2, 0.9)],
        cfl: 0.3,
        fixed_dt: None,
        limiter,
    }
}

#[test]
fn gpu_rhs_matches_cpu_for_every_order_and_boundary_kind() {
    let rt = rt();
    for (ordering, flux) in [
        (Ordering::Original, NumericalFlux::Rusanov),
        (Ordering::ColorRenumbered, NumericalFlux::Hllc),
    ] {
        let dm = all_boundaries(ordering);
        for p in 0..=4 {
            let tables = BasisTables::new(p);
            let cfg = config(flux, false, vortex());
            let op = Operator {
                mesh: &dm,
                tables: &tables,
                flux,
                state_fn: cfg.state_fn,
                states: cfg.states.clone(),
            };
            let f = vortex();
            let c = op.project(&|x, y| f.eval(x, y, 0.0));
            // Round the input to f32 so both sides see the same coefficients.
            let c: Vec<f64> = c.iter().map(|&v| v as f32 as f64).collect();
            let mut cpu = vec![0.0; op.ndof()];
            op.rhs(&c, 0.25, &mut cpu);
            let gpu = GpuDg::new(&rt, &dm, &tables, &cfg).expect("gpu solver");
            let g = gpu.eval_rhs(&c, 0.25).expect("gpu rhs");
            let (err, at) = max_rel(&g, &cpu);
            assert!(
                err < 2e-5,
                "{ordering} {flux:?} p={p}: rel err {err:e} at {at}: gpu {} cpu {}",
                g[at],
                cpu[at]
            );
        }
    }
}

fn periodic_mesh() -> DgMesh {
    let mesh = split_square_grid(0.0, 1.0, 0.0, 1.0, 5, 5).expect("mesh");
    let om = prepare(&mesh, &PrepareOptions::new(Ordering::ColorRenumbered, 1)).expect("order");
    DgMesh::build(&om, &|t| {
        Ok(match t {
            1 => BoundaryKind::Periodic(3),
            3 => BoundaryKind::Periodic(1),
            2 => BoundaryKind::Periodic(4),
            _ => BoundaryKind::Periodic(2),
        })
    })
    .expect("dg mesh")
}

#[test]
fn gpu_steps_match_cpu_and_conserve_with_periodic_boundaries() {
    let rt = rt();
    let dm = periodic_mesh();
    for p in [1usize, 2, 3] {
        let tables = BasisTables::new(p);
        let cfg = config(NumericalFlux::Rusanov, true, vortex());
        let op = Operator {
            mesh: &dm,
            tables: &tables,
            flux: cfg.flux,
            state_fn: cfg.state_fn,
            states: cfg.states.clone(),
        };
        let f = vortex();
        let c0: Vec<f64> = op
            .project(&|x, y| f.eval(x, y, 0.0))
            .iter()
            .map(|&v| v as f32 as f64)
            .collect();
        let dt = 0.5 * op.cfl_dt(&c0, 0.3);
        let steps = 10;
        let mut cpu = c0.clone();
        run(&op, &mut cpu, dt * steps as f64, 0.3, Some(dt), true);
        let gpu = GpuDg::new(
            &rt,
            &dm,
            &tables,
            &GpuConfig {
                fixed_dt: Some(dt),
                ..cfg.clone()
            },
        )
        .expect("gpu solver");
        gpu.set_solution(&c0).expect("upload");
        gpu.set_clock(0.0, dt * steps as f64).expect("clock");
        gpu.advance(steps + 2).expect("advance");
        let clock = gpu.clock().expect("clock");
        assert_eq!(clock.steps, steps as u64, "{clock:?}");
        let g = gpu.solution().expect("download");
        let (err, at) = max_rel(&g, &cpu);
        assert!(err < 1e-4, "p={p}: rel err {err:e} at {at}");
        let (t0, t1) = (op.totals(&c0), op.totals(&g));
        for eq in 0..4 {
            let rel = (t1[eq] - t0[eq]).abs() / t0[eq].abs().max(1.0);
            assert!(rel < 2e-6, "p={p} eq {eq}: total {} -> {}", t0[eq], t1[eq]);
        }
    }
}

#[test]
fn gpu_limiter_matches_cpu() {
    let rt = rt();
    let dm = all_boundaries(Ordering::Rcm);
    let dmr = StateFn::DoubleMach;
    for p in [1usize, 2] {
        let tables = BasisTables::new(p);
        let cfg = config(NumericalFlux::Rusanov, true, dmr);
        let op = Operator {
            mesh: &dm,
            tables: &tables,
            flux: cfg.flux,
            state_fn: dmr,
            states: cfg.states.clone(),
        };
        // A shock through the unit square: many cells are limited.
        let c: Vec<f64> = op
            .project(&|x, y| dmr.eval(x + 0.2, y, 0.0))
            .iter()
            .map(|&v| v as f32 as f64)
            .collect();
        let mut cpu = vec![0.0; c.len()];
        op.limit(&c, &mut cpu, true);
        let gpu = GpuDg::new(&rt, &dm, &tables, &cfg).expect("gpu solver");
        let g = gpu.limit_once(&c).expect("limit");
        let (err, at) = max_rel(&g, &cpu);
        assert!(err < 1e-5, "p={p}: rel err {err:e} at {at}");
        assert!(c.iter().zip(&cpu).any(|(a, b)| (a - b).abs() > 1e-3));
    }
}

#[test]
fn double_mach_reflection_runs_positive_on_a_coarse_mesh() {
    let rt = rt();
    let case = Case::double_mach(1200);
    let mesh = case.build_mesh(1).expect("mesh");
    let om = prepare(&mesh, &PrepareOptions::new(Ordering::ColorRenumbered, 1)).expect("order");
    let dm = DgMesh::build(&om, &|t| case.boundary(&om.mesh, t)).expect("dg mesh");
    let tables = BasisTables::new(1);
    let op = Operator {
        mesh: &dm,
        tables: &tables,
        flux: case.flux,
        state_fn: case.initial,
        states: vec![],
    };
    let c0 = op.project(&|x, y| case.initial.eval(x, y, 0.0));
    let gpu = GpuDg::new(
        &rt,
        &dm,
        &tables,
        &GpuConfig {
            flux: case.flux,
            state_fn: case.initial,
            states: vec![],
            cfl: case.cfl,
            fixed_dt: None,
            limiter: true,
        },
    )
    .expect("gpu solver");
    // The projected shock overshoots: limit the initial state too (writes register 0).
    gpu.limit_once(&c0).expect("initial limiting");
    let t_end = 0.2;
    gpu.set_clock(0.0, t_end).expect("clock");
    let mut clock = gpu.clock().expect("clock");
    while clock.t < t_end {
        gpu.advance(200).expect("advance");
        clock = gpu.clock().expect("clock");
        assert!(clock.dt > 0.0 || clock.t >= t_end, "{clock:?}");
    }
    let c = gpu.solution().expect("download");
    assert!(c.iter().all(|v| v.is_finite()), "NaN in the solution");
    let density: Vec<f64> = (0..dm.num_elements).map(|i| op.mean(&c, i)[0]).collect();
    // Behind the reflected shock the gas is compressed well beyond the incident post-shock 8.
    let max = density.iter().cloned().fold(0.0, f64::max);
    assert!(max > 10.0 && max < 30.0, "max density {max}");
    let png = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("dg_dmr_density.png");
    let opts = PlotOptions {
        title: "double Mach reflection, p = 1, t = 0.2".into(),
        label: "density".into(),
        width: 1400,
        height: 520,
        ..PlotOptions::default()
    };
    save_field_png(&om.mesh, Field::Cell(&density), &opts, &png).expect("png");
    println!("density snapshot: {}", png.display());
    for i in 0..dm.num_elements {
        let u = op.mean(&c, i);
        assert!(u[0] > 0.0, "element {i}: density {}", u[0]);
        assert!(chromaflow::solver::dg::euler::pressure(&u) > 0.0);
    }
}

#[test]
fn atomic_surface_on_wgpu_is_a_clear_error() {
    let rt = rt();
    let dm = periodic_mesh();
    let tables = BasisTables::new(1);
    let cfg = config(NumericalFlux::Rusanov, false, vortex());
    let mut gpu = GpuDg::new(&rt, &dm, &tables, &cfg).expect("gpu solver");
    gpu.set_atomic_surface(false).expect("per-color surface");
    let err = gpu
        .set_atomic_surface(true)
        .expect_err("WGSL has no float atomics")
        .to_string();
    assert!(
        err.contains("atomicAdd") && err.contains("--backend cuda"),
        "{err}"
    );
}

#[test]
fn simulation_run_writes_snapshots_and_totals() {
    use chromaflow::solver::dg::simulation::{TOTALS_COLUMNS, TOTALS_CSV};
    use chromaflow::solver::dg::{Quantity, Simulation, SimulationOptions};
    let mut case = Case::vortex(120);
    case.order = 1;
    case.t_end = 0.2;
    case.snapshot_every = Some(0.1);
    let opts = SimulationOptions {
        fixed_dt: Some(0.05),
        batch: 3,
        ..SimulationOptions::default()
    };
    let mut sim = Simulation::new(&case, &rt(), &opts).expect("simulation");
    let dir = tempfile::tempdir().expect("temp dir");
    let fields = [Quantity::Density, Quantity::Pressure];
    let summary = sim.run(dir.path(), &fields, true, |_, _| {}).expect("run");
    assert_eq!((summary.t, summary.steps, summary.snapshots), (0.2, 4, 3));
    assert_eq!((sim.time(), sim.steps()), (0.2, 4));
    let names: Vec<String> = summary
        .files
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    let mut expected = vec![TOTALS_CSV.to_string()];
    for i in 0..3 {
        expected.extend([
            format!("density_{i:04}.png"),
            format!("pressure_{i:04}.png"),
            format!("dg_{i:04}.vtu"),
        ]);
    }
    assert_eq!(names, expected);
    assert!(summary.files.iter().all(|p| p.is_file()));
    let csv = std::fs::read_to_string(dir.path().join(TOTALS_CSV)).expect("csv");
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines[0], TOTALS_COLUMNS.join(","));
    assert_eq!(lines.len(), 4, "{csv}");
    assert!(lines[3].starts_with("0.2,4,"), "{csv}");
    let err = sim.l2_density_error().expect("error").expect("exact case");
    assert!(err.is_finite() && err < 0.2, "L2 density error {err}");
    assert!(
        sim.advance_to(0.1).is_err(),
        "advancing backwards must fail"
    );
}
