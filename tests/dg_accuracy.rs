//! DG accuracy in f32 on the GPU adapter (lavapipe in CI; issue 13): the isentropic vortex
//! converges at order p + 1 and agrees with the f64 CPU reference. Before the stage update kept
//! its registers as f32 pairs in difference form, the f32-rounded Runge-Kutta weights (summing
//! to 1 +- 3e-8) drained ~1e-8 of the mass per step and increments below half an ulp were lost,
//! an error growing with the step count that flattened the rates. Fails (not skips) without an
//! adapter.

use chromaflow::color::refine_uniformly;
use chromaflow::mesh::generate::{rectangle, split_square_grid};
use chromaflow::mesh::Mesh;
use chromaflow::order::{prepare, Ordering, PrepareOptions};
use chromaflow::runtime::Runtime;
use chromaflow::solver::dg::basis::PHI0;
use chromaflow::solver::dg::cpu::{run, Operator};
use chromaflow::solver::dg::euler::conserved;
use chromaflow::solver::dg::gpu::{GpuConfig, GpuDg};
use chromaflow::solver::dg::{BasisTables, BoundaryKind, DgMesh, NumericalFlux, StateFn};

/// Shu's vortex (beta = 5) advected diagonally, as in tests/dg_cpu.rs.
const VORTEX: StateFn = StateFn::Vortex {
    x0: 0.0,
    y0: 0.0,
    u_inf: 1.0,
    v_inf: 1.0,
    beta: 5.0,
    radius: 1.0,
    p_inf: 1.0,
};

/// Final time: long enough for a few hundred steps on the finest mesh.
const T_END: f64 = 0.25;

/// The vortex on [-3, 3]^2 split n x n (criss-cross), exact boundary states.
fn mesh(n: usize) -> DgMesh {
    dg_mesh(&split_square_grid(-3.0, 3.0, -3.0, 3.0, n, n).expect("mesh"))
}

/// The DG mesh of `mesh`, ordered, with exact boundary states.
fn dg_mesh(mesh: &Mesh) -> DgMesh {
    let om = prepare(mesh, &PrepareOptions::new(Ordering::ColorRenumbered, 1)).expect("order");
    DgMesh::build(&om, &|_| Ok(BoundaryKind::Exact)).expect("dg mesh")
}

fn operator<'a>(dm: &'a DgMesh, tables: &'a BasisTables) -> Operator<'a> {
    Operator {
        mesh: dm,
        tables,
        flux: NumericalFlux::Hllc,
        state_fn: VORTEX,
        states: vec![],
    }
}

/// L2 density error at T_END of the GPU run with the fixed step `dt`.
fn gpu_error(rt: &Runtime, dm: &DgMesh, tables: &BasisTables, dt: f64) -> f64 {
    let op = operator(dm, tables);
    let cfg = GpuConfig {
        flux: NumericalFlux::Hllc,
        state_fn: VORTEX,
        states: vec![],
        cfl: 0.3,
        fixed_dt: Some(dt),
        limiter: false,
    };
    let gpu = GpuDg::new(rt, dm, tables, &cfg).expect("gpu solver");
    gpu.set_solution(&op.project(&|x, y| VORTEX.eval(x, y, 0.0)))
        .expect("upload");
    gpu.set_clock(0.0, T_END).expect("clock");
    // The f32 clock may end with one extra step of an ulp of t: queue room for it.
    let steps = (T_END / dt).round() as usize;
    gpu.queue_steps(steps + 2).expect("steps");
    let clock = gpu.read_clock().expect("clock");
    assert_eq!(clock.t, T_END as f32 as f64, "{clock:?}");
    op.l2_density_error(&gpu.read_state().expect("download"), T_END)
}

/// A fixed step of CFL 0.3 on mesh `dm` (from the initial state), rounded so that a whole
/// number of steps reaches T_END.
fn fixed_step(op: &Operator) -> f64 {
    let c0 = op.project(&|x, y| VORTEX.eval(x, y, 0.0));
    T_END / (T_END / op.cfl_dt(&c0, 0.3)).ceil()
}

/// Rates p + 1 +- 0.3 for p = 1..3 between the two finest meshes of tests/dg_cpu.rs's
/// refinements (the coarser ones are pre-asymptotic at p = 3) with HLLC at a fixed CFL step, and at
/// p = 3 (errors down to ~7e-6, where the f32 drift showed: 3e-5 on the finest mesh) the finest
/// mesh within 1% of the f64 reference on the same steps (measured 0.015% since the right-hand
/// side is in deviation form, issue 13; the free-stream test below checks that form directly).
#[test]
fn vortex_converges_at_order_p_plus_one_in_f32() {
    let rt = Runtime::wgpu().expect("a GPU adapter is required (CI: lavapipe)");
    for (p, grids) in [(1usize, [24usize, 48]), (2, [12, 24]), (3, [12, 24])] {
        let tables = BasisTables::new(p);
        let mut errors = Vec::new();
        let mut reference = None;
        for n in grids {
            let dm = mesh(n);
            let op = operator(&dm, &tables);
            let dt = fixed_step(&op);
            errors.push(gpu_error(&rt, &dm, &tables, dt));
            if p == 3 && n == grids[1] {
                let mut c = op.project(&|x, y| VORTEX.eval(x, y, 0.0));
                run(&op, &mut c, T_END, 0.3, Some(dt), false);
                reference = Some(op.l2_density_error(&c, T_END));
            }
        }
        let rate = (errors[0] / errors[1]).log2();
        println!("p={p}: GPU f32 errors {errors:?}, rate {rate:.2}, f64 reference {reference:?}");
        assert!(
            (rate - (p as f64 + 1.0)).abs() <= 0.3,
            "p={p}: rate {rate:.2} (errors {errors:?})"
        );
        if let Some(reference) = reference {
            let last = errors[1];
            assert!(
                (last - reference).abs() <= 0.01 * reference,
                "p={p}: GPU {last:e} against the f64 reference {reference:e}"
            );
        }
    }
}

/// Target 3 of issue 13 on successive refinements: an unstructured Delaunay mesh of [-3, 3]^2
/// refined uniformly (every triangle split in four, so h halves exactly and the meshes are
/// nested), the vortex to T_END at a fixed CFL 0.3 step on the GPU in f32. Every rate between
/// successive levels must be at least p + 1 - 0.3 (and at most p + 1 + 0.3), and the finest
/// p = 3 error within 1% of the f64 reference on the same steps. Measured (lavapipe): p = 1
/// 1.93 (960 -> 3,840 triangles), p = 2 2.93 and 3.00 (240 -> 960 -> 3,840), p = 3 3.97
/// (960 -> 3,840, error 2.07e-6, f64 reference 2.07e-6); 240 -> 960 at p = 3 is 3.68, still
/// pre-asymptotic on these 15-triangle-per-unit-area meshes, so p = 3 starts at 960. 41 s wall
/// (`cargo test`, dev profile) on 2 shared cores, most of it p = 3 on 3,840 triangles.
#[test]
fn vortex_converges_at_order_p_plus_one_on_nested_meshes() {
    let rt = Runtime::wgpu().expect("a GPU adapter is required (CI: lavapipe)");
    for (p, base_cells, levels) in NESTED_STUDY {
        let tables = BasisTables::new(p);
        let base = rectangle(-3.0, 3.0, -3.0, 3.0, base_cells, 1).expect("mesh");
        let mut errors = Vec::new();
        let mut elements = Vec::new();
        let mut reference = None;
        for k in levels.clone() {
            let dm = dg_mesh(&refine_uniformly(base.clone(), k).expect("refine"));
            let op = operator(&dm, &tables);
            let dt = fixed_step(&op);
            errors.push(gpu_error(&rt, &dm, &tables, dt));
            elements.push(dm.num_elements);
            if p == 3 && k == *levels.end() {
                let mut c = op.project(&|x, y| VORTEX.eval(x, y, 0.0));
                run(&op, &mut c, T_END, 0.3, Some(dt), false);
                reference = Some(op.l2_density_error(&c, T_END));
            }
        }
        // h ~ sqrt(area / elements): rate = log(e_0 / e_1) / log(h_0 / h_1).
        let rates: Vec<f64> = (1..errors.len())
            .map(|i| {
                (errors[i - 1] / errors[i]).ln()
                    / (0.5 * (elements[i] as f64 / elements[i - 1] as f64).ln())
            })
            .collect();
        println!(
            "p={p}: elements {elements:?}, GPU f32 errors {errors:?}, rates {rates:.2?}, \
             f64 reference {reference:?}"
        );
        for (i, rate) in rates.iter().enumerate() {
            assert!(
                (rate - (p as f64 + 1.0)).abs() <= 0.3,
                "p={p}: rate {rate:.2} from {} to {} elements (errors {errors:?})",
                elements[i],
                elements[i + 1]
            );
        }
        if let Some(reference) = reference {
            let last = errors[errors.len() - 1];
            assert!(
                (last - reference).abs() <= 0.01 * reference,
                "p={p}: GPU {last:e} against the f64 reference {reference:e}"
            );
        }
    }
}

/// (p, triangles of the base mesh, refinement levels) of the nested-mesh test.
const NESTED_STUDY: [(usize, usize, std::ops::RangeInclusive<usize>); 3] =
    [(1, 60, 2..=3), (2, 60, 1..=3), (3, 60, 2..=3)];

/// The floor of issue 13 in its purest form: in f32 the volume and surface integrals of a free
/// stream's O(1) fluxes cancel only to their rounding, eps |F| / h in every element (2e-4 in L2
/// on the 16,000-triangle vortex), an error the time loop then integrates. In the deviation form
/// (fluxes less those of the element's mean) an element whose neighbours hold its state has an
/// rhs of exactly zero, whatever the mesh and the order; only elements on the boundary, whose
/// ghost state is the f32 free stream rather than c_0 phi_0, see a few ulps.
#[test]
fn free_stream_rhs_is_exactly_zero_away_from_the_boundary() {
    let rt = Runtime::wgpu().expect("a GPU adapter is required (CI: lavapipe)");
    let mesh = rectangle(-1.0, 1.0, -1.0, 1.0, 800, 3).expect("mesh");
    let om = prepare(&mesh, &PrepareOptions::new(Ordering::ColorRenumbered, 1)).expect("order");
    let dm = DgMesh::build(&om, &|_| Ok(BoundaryKind::Exact)).expect("dg mesh");
    let ne = dm.num_elements;
    let inner: Vec<usize> = (0..ne)
        .filter(|&i| !dm.edges.iter().any(|e| e.right.is_none() && e.left == i))
        .collect();
    assert!(
        inner.len() > ne / 2,
        "{} of {ne} elements inside",
        inner.len()
    );
    let u0 = conserved(1.0, 1.0, 1.0, 1.0);
    for flux in [NumericalFlux::Rusanov, NumericalFlux::Hllc] {
        for p in 1..=3 {
            let tables = BasisTables::new(p);
            let np = tables.np;
            // c_0 = U / phi_0, every higher mode exactly zero.
            let mut c = vec![0.0; 4 * np * ne];
            for (eq, u) in u0.iter().enumerate() {
                c[eq * np * ne..eq * np * ne + ne].fill(u / PHI0);
            }
            let cfg = GpuConfig {
                flux,
                state_fn: StateFn::Constant(u0),
                states: vec![],
                cfl: 0.3,
                fixed_dt: None,
                limiter: false,
            };
            let gpu = GpuDg::new(&rt, &dm, &tables, &cfg).expect("gpu solver");
            let rhs = gpu.eval_rhs(&c, 0.0).expect("rhs");
            let worst = |elements: &[usize]| -> f64 {
                (0..4 * np)
                    .flat_map(|row| elements.iter().map(move |&i| row * ne + i))
                    .fold(0.0f64, |m, j| m.max(rhs[j].abs()))
            };
            let all: Vec<usize> = (0..ne).collect();
            println!(
                "{flux:?} p={p}: |rhs| inside {:e}, anywhere {:e}",
                worst(&inner),
                worst(&all)
            );
            assert_eq!(worst(&inner), 0.0, "{flux:?} p={p}");
            assert!(
                worst(&all) < 1e-4,
                "{flux:?} p={p}: |rhs| {:e}",
                worst(&all)
            );
        }
    }
}

/// `dg --reference` prints the device's and the f64 reference's L2 density errors (agreeing on
/// a coarse mesh) and refuses a case without an exact solution.
#[test]
fn dg_reference_prints_both_errors() {
    let dir = tempfile::tempdir().expect("temp dir");
    let run = |args: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_chromaflow"))
            .args(args)
            .current_dir(dir.path())
            .output()
            .expect("chromaflow runs")
    };
    let out = run(&[
        "-q",
        "dg",
        "--builtin",
        "vortex",
        "--cells",
        "150",
        "--order",
        "1",
        "--t-end",
        "0.1",
        "--snapshot-every",
        "0.1",
        "--reference",
        "--out",
        "vortex",
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let errors: Vec<f64> = stdout
        .lines()
        .filter_map(|l| l.strip_prefix("L2 density error at t = 0.1: "))
        .map(|l| l.split(' ').next().and_then(|v| v.parse().ok()).expect(l))
        .collect();
    assert_eq!(errors.len(), 2, "{stdout}");
    assert!((errors[0] / errors[1] - 1.0).abs() < 0.01, "{stdout}");
    assert!(stdout.contains("(f64 CPU reference, "), "{stdout}");
    let out = run(&["dg", "--builtin", "dmr", "--reference", "--out", "dmr"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("--reference needs a case with an exact solution"),
        "{stderr}"
    );
}
