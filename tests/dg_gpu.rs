//! DG on the GPU adapter (lavapipe in CI) beyond the conformance suite (tests/conformance.rs
//! runs its rhs, limiter and step checks): a coarse double Mach reflection run stays positive,
//! a solver grown to more room compiles nothing and steps as before, and the atomic surface
//! variant is a clear error on wgpu. Fails (not skips) without an adapter.

use chromaflow::conformance::dg::{config, periodic_mesh, vortex};
use chromaflow::order::{prepare, OrderedMesh, Ordering, PrepareOptions};
use chromaflow::output::{save_field_png, Field, PlotOptions};
use chromaflow::runtime::Runtime;
use chromaflow::solver::dg::cpu::Operator;
use chromaflow::solver::dg::gpu::{Capacity, GpuConfig, GpuDg, SurfaceLayout};
use chromaflow::solver::dg::{BasisTables, Case, DgMesh, NumericalFlux};

fn rt() -> Runtime {
    Runtime::wgpu().expect("a GPU adapter is required (CI: lavapipe)")
}

/// The double Mach reflection on about `cells` triangles: the case, its ordered and DG meshes.
fn double_mach(cells: usize) -> (Case, OrderedMesh, DgMesh) {
    let case = Case::double_mach(cells);
    let mesh = case.build_mesh(1).expect("mesh");
    let om = prepare(&mesh, &PrepareOptions::new(Ordering::ColorRenumbered, 1)).expect("order");
    let dm = DgMesh::build(&om, &|t| case.boundary(&om.mesh, t)).expect("dg mesh");
    (case, om, dm)
}

/// The f64 operator of `case` on `dm`.
fn operator<'a>(case: &Case, dm: &'a DgMesh, tables: &'a BasisTables) -> Operator<'a> {
    Operator {
        mesh: dm,
        tables,
        flux: case.flux,
        state_fn: case.initial,
        states: vec![],
    }
}

#[test]
fn double_mach_reflection_runs_positive_on_a_coarse_mesh() {
    let rt = rt();
    let (case, om, dm) = double_mach(1200);
    let tables = BasisTables::new(1);
    let op = operator(&case, &dm, &tables);
    let c0 = op.project(&|x, y| case.initial.eval(x, y, 0.0));
    let gpu = GpuDg::new(&rt, &dm, &tables, &GpuConfig::for_case(&case, None)).expect("gpu solver");
    // The projected shock overshoots: limit the initial state too (writes register 0).
    gpu.limit_once(&c0).expect("initial limiting");
    let t_end = 0.2;
    gpu.set_clock(0.0, t_end).expect("clock");
    let mut clock = gpu.read_clock().expect("clock");
    while clock.t < t_end {
        gpu.queue_steps(200).expect("advance");
        clock = gpu.read_clock().expect("clock");
        assert!(clock.dt > 0.0 || clock.t >= t_end, "{clock:?}");
    }
    let c = gpu.read_state().expect("download");
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

/// The element capacity of a solver with room to grow is given at launch (CAPACITY_CONSTANT),
/// not compiled in: grown from twice to three times the room (what an adaptive run does as its
/// mesh grows) it compiles no kernel again, and its steps equal bit for bit those of the solver
/// sized exactly to the mesh (the kernels differ only in their strides). Fails when a kernel
/// keeps a size constant (it compiles again) or when a kernel's strides do not follow the
/// capacity (its reads land in other rows).
#[test]
fn a_grown_solver_compiles_nothing_and_steps_as_before() {
    let rt = rt();
    let (case, _, dm) = double_mach(300);
    let tables = BasisTables::new(1);
    let op = operator(&case, &dm, &tables);
    let c0 = op.project(&|x, y| case.initial.eval(x, y, 0.0));
    let cfg = GpuConfig::for_case(&case, None);
    for layout in [SurfaceLayout::Colored, SurfaceLayout::Gathered] {
        let solver = |capacity: Capacity| -> GpuDg {
            let mut gpu =
                GpuDg::with_capacity(&rt, &dm, &tables, &cfg, capacity).expect("gpu solver");
            gpu.set_surface(layout).expect("layout");
            gpu.set_solution(&c0).expect("solution");
            gpu.set_clock(0.0, 1.0).expect("clock");
            gpu
        };
        let room = |times: usize| Capacity {
            elements: times * dm.num_elements,
            edges: times * dm.edges.len(),
        };
        let exact = solver(room(1));
        let mut grown = solver(room(2));
        let compiled = rt.kernels_compiled();
        grown.reserve(&dm, &c0, room(3)).expect("grow");
        assert_eq!(
            rt.kernels_compiled(),
            compiled,
            "{layout:?}: growing the solver compiled kernels again"
        );
        assert_eq!(grown.capacity(), room(3));
        exact.queue_steps(12).expect("steps");
        grown.queue_steps(12).expect("steps");
        let (a, b) = (
            exact.read_state().expect("state"),
            grown.read_state().expect("state"),
        );
        assert_eq!(a.len(), b.len());
        let differ = a
            .iter()
            .zip(&b)
            .filter(|(x, y)| x.to_bits() != y.to_bits())
            .count();
        assert_eq!(
            differ,
            0,
            "{layout:?}: {differ} of {} coefficients differ",
            a.len()
        );
        assert_ne!(a, c0, "{layout:?}: the steps changed nothing");
    }
}

#[test]
fn atomic_surface_on_wgpu_is_a_clear_error() {
    let rt = rt();
    let dm = periodic_mesh().expect("dg mesh");
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
    use chromaflow::solver::dg::{Quantity, Simulation, SimulationOptions, SnapshotOptions};
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
    let snapshots = SnapshotOptions {
        fields: vec![Quantity::Density, Quantity::Pressure],
        vtu: true,
        contours: 5,
    };
    let rc = chromaflow::solver::RunControl::default();
    let summary = sim
        .run(dir.path(), &snapshots, &rc, |_, _| {})
        .expect("run");
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
    expected.push("dg.pvd".to_string());
    assert_eq!(names, expected);
    assert!(summary.files.iter().all(|p| p.is_file()));
    let collection = chromaflow::output::read_collection(&dir.path().join("dg.pvd")).expect("pvd");
    let listed: Vec<(f64, &str)> = collection
        .iter()
        .map(|e| (e.time, e.file.as_str()))
        .collect();
    assert_eq!(
        listed,
        [
            (0.0, "dg_0000.vtu"),
            (0.1, "dg_0001.vtu"),
            (0.2, "dg_0002.vtu")
        ]
    );
    assert_eq!(summary.run_steps, 4);
    assert!(summary.step_seconds > 0.0 && summary.output_seconds > 0.0);
    assert!(summary.step_seconds + summary.output_seconds <= summary.wall_seconds);
    // The report's parts: outputs by kind add up to the outputs; every setup phase ran.
    let o = summary.outputs;
    assert_eq!(o.total(), summary.output_seconds);
    assert!(
        o.readback > 0.0 && o.diagnostics > 0.0 && o.files > 0.0,
        "{o:?}"
    );
    assert_eq!(o.checkpoints, 0.0, "no checkpoints asked for");
    let s = summary.setup;
    let p = s.prepare;
    for (phase, secs) in [
        ("mesh", s.mesh),
        ("topology", p.topology),
        ("coloring", p.coloring),
        ("ordering", p.ordering),
        ("geometry", s.geometry),
        ("projection", s.projection),
        ("solver", s.solver),
        ("upload", s.upload),
    ] {
        assert!(secs > 0.0, "setup phase {phase}: {secs} s of {s:?}");
    }
    let csv = std::fs::read_to_string(dir.path().join(TOTALS_CSV)).expect("csv");
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines[0], TOTALS_COLUMNS.join(","));
    assert_eq!(lines.len(), 4, "{csv}");
    assert!(lines[3].starts_with("0.2,4,"), "{csv}");
    let err = sim.l2_density_error().expect("error").expect("exact case");
    assert!(err.is_finite() && err < 0.2, "L2 density error {err}");
    assert_eq!(
        summary.l2_density_error,
        Some(err),
        "the summary's is the last recorded"
    );
    assert!(
        sim.advance_to(0.1).is_err(),
        "advancing backwards must fail"
    );
}
