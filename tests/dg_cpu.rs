//! DG f64 CPU reference: isentropic-vortex convergence at order p + 1, free-stream
//! preservation on a distorted mesh, conservation with periodic boundaries, case-file errors.

use chromaflow::conformance::dg::{adapted_mesh, all_boundaries};
use chromaflow::mesh::generate::{rectangle, split_square_grid};
use chromaflow::order::{prepare, Ordering, PrepareOptions};
use chromaflow::solver::dg::cpu::{run, Operator};
use chromaflow::solver::dg::euler::conserved;
use chromaflow::solver::dg::{BasisTables, BoundaryKind, Case, DgMesh, NumericalFlux, StateFn};
use std::path::Path;

fn vortex() -> StateFn {
    StateFn::Vortex {
        x0: 0.0,
        y0: 0.0,
        u_inf: 1.0,
        v_inf: 1.0,
        beta: 5.0,
        radius: 1.0,
        p_inf: 1.0,
    }
}

fn dg_mesh(mesh: &chromaflow::mesh::Mesh, bc: &dyn Fn(i32) -> BoundaryKind) -> DgMesh {
    let om = prepare(mesh, &PrepareOptions::new(Ordering::ColorRenumbered, 1)).expect("ordering");
    DgMesh::build(&om, &|t| Ok(bc(t))).expect("dg mesh")
}

/// L2 density error at t = 1 of the vortex on [-3, 3]^2 (exact boundary states) on criss-cross
/// meshes halved twice, HLLC flux, CFL 0.3. Rusanov converges at the same order but is more
/// dissipative, so it reaches the asymptotic rate only on finer (slower) meshes.
#[test]
fn vortex_converges_at_order_p_plus_one() {
    let t_end = 1.0;
    for (p, grids) in [
        (1usize, [10usize, 20, 40]),
        (2, [6, 12, 24]),
        (3, [6, 12, 24]),
    ] {
        let tables = BasisTables::new(p);
        let mut errors = Vec::new();
        for n in grids {
            let mesh = split_square_grid(-3.0, 3.0, -3.0, 3.0, n, n).expect("mesh");
            let dm = dg_mesh(&mesh, &|_| BoundaryKind::Exact);
            let op = Operator {
                mesh: &dm,
                tables: &tables,
                flux: NumericalFlux::Hllc,
                state_fn: vortex(),
                states: vec![],
            };
            let f = vortex();
            let mut c = op.project(&|x, y| f.eval(x, y, 0.0));
            run(&op, &mut c, t_end, 0.3, None, false);
            errors.push(op.l2_density_error(&c, t_end));
        }
        let rates: Vec<f64> = errors.windows(2).map(|w| (w[0] / w[1]).log2()).collect();
        let overall = (errors[0] / errors[2]).log2() / 2.0;
        println!("p={p}: L2 density errors {errors:?}, rates {rates:?}, overall {overall:.2}");
        assert!(
            (overall - (p as f64 + 1.0)).abs() < 0.3,
            "p={p}: rate {overall:.2} (errors {errors:?})"
        );
    }
}

#[test]
fn free_stream_is_preserved_on_a_distorted_mesh() {
    let mesh = rectangle(0.0, 1.0, 0.0, 1.0, 300, 7).expect("mesh");
    let u0 = conserved(1.2, 0.7, -0.4, 1.5);
    let dm = dg_mesh(&mesh, &|t| match t {
        1 => BoundaryKind::Exact,
        2 => BoundaryKind::Outflow,
        3 => BoundaryKind::Inflow(0),
        _ => BoundaryKind::Exact,
    });
    for p in 0..=4 {
        let tables = BasisTables::new(p);
        for flux in [NumericalFlux::Rusanov, NumericalFlux::Hllc] {
            let op = Operator {
                mesh: &dm,
                tables: &tables,
                flux,
                state_fn: StateFn::Constant(u0),
                states: vec![u0],
            };
            let c0 = op.project(&|_, _| u0);
            let m = op.mean(&c0, 0);
            assert!(
                (0..4).all(|eq| (m[eq] - u0[eq]).abs() < 1e-12),
                "mean {m:?}"
            );
            let mut c = c0.clone();
            run(&op, &mut c, 0.05, 0.3, None, true);
            let err = c
                .iter()
                .zip(&c0)
                .map(|(a, b)| (a - b).abs())
                .fold(0.0, f64::max);
            assert!(err < 1e-11, "p={p} {flux:?}: free-stream drift {err:e}");
        }
    }
}

#[test]
fn periodic_boundaries_conserve_mass_momentum_energy() {
    let mesh = split_square_grid(-5.0, 5.0, -5.0, 5.0, 6, 6).expect("mesh");
    let dm = dg_mesh(&mesh, &|t| match t {
        1 => BoundaryKind::Periodic(3),
        3 => BoundaryKind::Periodic(1),
        2 => BoundaryKind::Periodic(4),
        _ => BoundaryKind::Periodic(2),
    });
    assert!(dm.edges.iter().all(|e| e.right.is_some()), "fully periodic");
    for p in [1usize, 2] {
        let tables = BasisTables::new(p);
        let op = Operator {
            mesh: &dm,
            tables: &tables,
            flux: NumericalFlux::Hllc,
            state_fn: vortex(),
            states: vec![],
        };
        let f = vortex();
        let mut c = op.project(&|x, y| f.eval(x, y, 0.0));
        let before = op.totals(&c);
        run(&op, &mut c, 0.3, 0.3, None, true);
        let after = op.totals(&c);
        for eq in 0..4 {
            let rel = (after[eq] - before[eq]).abs() / before[eq].abs().max(1.0);
            assert!(
                rel < 1e-12,
                "p={p} eq {eq}: {} -> {}",
                before[eq],
                after[eq]
            );
        }
    }
}

#[test]
fn case_files_parse_and_errors_name_file_and_key() {
    let path = Path::new("cases/channel.toml");
    let ok = r#"
        name = "channel"
        mesh = "rect:200"
        t_end = 0.1
        order = 1
        [initial]
        kind = "constant"
        rho = 1.0
        u = 0.5
        v = 0.0
        p = 1.0
        [[boundary]]
        tag = 4
        kind = "inflow"
        rho = 1.0
        u = 0.5
        v = 0.0
        p = 1.0
        [[boundary]]
        name = "right"
        kind = "outflow"
    "#;
    let case = Case::from_toml(ok, path).expect("valid case");
    assert_eq!(case.order, 1);
    assert_eq!(case.states.len(), 1);
    let bad_kind = ok.replace("kind = \"outflow\"", "kind = \"slip\"");
    let e = Case::from_toml(&bad_kind, path).unwrap_err().to_string();
    assert!(
        e.contains("channel.toml") && e.contains("boundary[1].kind"),
        "{e}"
    );
    let bad_key = ok.replace("t_end = 0.1", "t_end = 0.1\ncfl_number = 3");
    let e = Case::from_toml(&bad_key, path).unwrap_err().to_string();
    assert!(
        e.contains("channel.toml") && e.contains("cfl_number"),
        "{e}"
    );
    let bad_state = ok.replace("rho = 1.0\n        u = 0.5\n        v = 0.0\n        p = 1.0\n        [[boundary]]\n        tag = 4", "rho = -1.0\n        u = 0.5\n        v = 0.0\n        p = 1.0\n        [[boundary]]\n        tag = 4");
    let e = Case::from_toml(&bad_state, path).unwrap_err().to_string();
    assert!(e.contains("initial") && e.contains("positive"), "{e}");
}

#[test]
fn double_mach_cpu_steps_stay_positive() {
    let case = Case::double_mach(400);
    let mesh = case.build_mesh(1).expect("mesh");
    let om = prepare(&mesh, &PrepareOptions::new(Ordering::Rcm, 1)).expect("order");
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
    let mut c = vec![0.0; c0.len()];
    op.limit(&c0, &mut c, true);
    run(&op, &mut c, 0.02, case.cfl, None, true);
    for i in 0..dm.num_elements {
        let u = op.mean(&c, i);
        assert!(
            u[0] > 0.0 && chromaflow::solver::dg::euler::pressure(&u) > 0.0,
            "element {i}: {u:?}"
        );
    }
}

/// Regression: the positivity limiter used to floor node pressures at an absolute 1e-10, zero
/// in f32, so kernels that re-evaluate a node with other rounding (FMA) got p < 0 and a NaN
/// sound speed (p = 3 DMR on NVIDIA GPUs). The floor must be a margin relative to the element's
/// mean: after limiting the projected Mach 10 shock at p = 3, every volume and edge node keeps
/// rho_q >= 0.99e-4 rho_mean and p_q >= 0.99e-4 p_mean.
#[test]
fn positivity_floor_leaves_an_f32_margin_at_every_node() {
    use chromaflow::solver::dg::euler::pressure;
    let case = Case::double_mach(600);
    let mesh = case.build_mesh(1).expect("mesh");
    let om = prepare(&mesh, &PrepareOptions::new(Ordering::Rcm, 1)).expect("order");
    let dm = DgMesh::build(&om, &|t| case.boundary(&om.mesh, t)).expect("dg mesh");
    let tables = BasisTables::new(3);
    let op = Operator {
        mesh: &dm,
        tables: &tables,
        flux: case.flux,
        state_fn: case.initial,
        states: vec![],
    };
    let c0 = op.project(&|x, y| case.initial.eval(x, y, 0.0));
    let mut c = vec![0.0; c0.len()];
    op.limit(&c0, &mut c, false);
    let nodes: Vec<&[f64]> = tables.positivity_nodes([false; 3]).collect();
    let mut limited = 0;
    for i in 0..dm.num_elements {
        let mean = op.mean(&c, i);
        let (rho_floor, p_floor) = (0.99e-4 * mean[0], 0.99e-4 * pressure(&mean));
        let raw = op.element(&c0, i);
        let coef = op.element(&c, i);
        let raw_min = nodes
            .iter()
            .map(|phi| pressure(&Operator::eval(&raw, phi)))
            .fold(f64::INFINITY, f64::min);
        if raw_min < p_floor {
            limited += 1;
        }
        for phi in &nodes {
            let u = Operator::eval(&coef, phi);
            assert!(
                u[0] >= rho_floor,
                "element {i}: node density {} < {rho_floor}",
                u[0]
            );
            let p = pressure(&u);
            assert!(p >= p_floor, "element {i}: node pressure {p} < {p_floor}");
        }
    }
    assert!(
        limited > 0,
        "the projected shock must need the pressure limiter somewhere"
    );
}

/// The gathered surface integral (traces per element, fluxes per edge into side slots, lift
/// per element: the f64 twins of dg_trace, dg_flux and dg_volume with LIFT) is the same
/// operator as the edge-by-edge scatter: equal rhs to 1e-12 relative for p = 0..4 on a mesh
/// with wall, outflow, inflow and exact boundaries, in an order that puts edges' local sides
/// and orientations everywhere, and on the same kinds of boundary three levels adapted (hanging
/// nodes: a coarse side's two halves, their nodes and planes). A mismatched node reversal,
/// sign, slot or half would differ at O(1).
#[test]
fn gathered_surface_integral_equals_the_edge_scatter() {
    let mesh = rectangle(0.0, 1.0, 0.0, 1.0, 160, 3).expect("mesh");
    let conforming = dg_mesh(&mesh, &|t| match t {
        1 => BoundaryKind::Wall,
        2 => BoundaryKind::Outflow,
        3 => BoundaryKind::Inflow(0),
        _ => BoundaryKind::Exact,
    });
    let base = all_boundaries(Ordering::Original);
    let adapted = adapted_mesh(&base, 7).expect("adapted mesh");
    assert!(
        adapted.edges.iter().any(|e| e.right_half != 0),
        "the adapted mesh has no hanging node"
    );
    for (dm, p) in [&conforming, &adapted]
        .into_iter()
        .flat_map(|dm| (0..=4usize).map(move |p| (dm, p)))
    {
        let tables = BasisTables::new(p);
        let op = Operator {
            mesh: dm,
            tables: &tables,
            flux: NumericalFlux::Hllc,
            state_fn: vortex(),
            states: vec![conserved(1.2, 0.3, -0.2, 1.1)],
        };
        let f = vortex();
        let c = op.project(&|x, y| f.eval(x - 0.3, y - 0.6, 0.0));
        let mut scatter = vec![0.0; op.ndof()];
        let mut gathered = vec![0.0; op.ndof()];
        op.rhs(&c, 0.25, &mut scatter);
        op.gathered_rhs(&c, 0.25, &mut gathered);
        let scale = scatter.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        let err = scatter
            .iter()
            .zip(&gathered)
            .fold(0.0f64, |m, (a, b)| m.max((a - b).abs()));
        assert!(
            err <= 1e-12 * scale,
            "p={p}: max difference {err:e} of {scale:e}"
        );
    }
}
