//! The host side of a DG run's setup and outputs against the serial f64 loops they replaced:
//! the initial L2 projection (elements in parallel blocks) is bit for bit the serial one, the
//! L2 density error (partial sums per block) agrees with the serial sum to round-off, and the
//! DG mesh (element maps in parallel, edges grouped by a counting sort) keeps the ordered
//! mesh's faces in their order. No GPU needed.

use chromaflow::order::{prepare, Ordering, PrepareOptions};
use chromaflow::parallel::BLOCK;
use chromaflow::solver::dg::cpu::Operator;
use chromaflow::solver::dg::euler::State;
use chromaflow::solver::dg::mesh::element_geometry;
use chromaflow::solver::dg::quadrature::TriangleRule;
use chromaflow::solver::dg::{BasisTables, Case, DgMesh};

#[test]
fn dg_mesh_keeps_the_ordered_faces_and_maps_every_element() {
    let case = Case::vortex(3 * BLOCK + 500);
    let mesh = case.build_mesh(3).expect("mesh");
    let om = prepare(&mesh, &PrepareOptions::new(Ordering::ColorRenumbered, 3)).expect("order");
    let dm = DgMesh::build(&om, &|t| case.boundary(&om.mesh, t)).expect("dg mesh");
    // No periodic sides: edge f is face f (grouped by color already), oriented as it was.
    assert_eq!(dm.color_offsets, om.color_offsets);
    assert_eq!(dm.edges.len(), om.topo.num_faces());
    for (f, e) in dm.edges.iter().enumerate() {
        let right = om.topo.right[f];
        assert_eq!(e.left, om.topo.left[f] as usize, "edge {f}");
        assert_eq!(e.right.map_or(u32::MAX, |r| r as u32), right, "edge {f}");
    }
    let pts = om.mesh.points_2d();
    for i in 0..dm.num_elements {
        let v = om.mesh.element(i).iter().map(|&k| pts[k as usize]);
        let v: Vec<[f64; 2]> = v.collect();
        assert_eq!(dm.vertices[i].as_slice(), v.as_slice(), "element {i}");
        let (g, d, _) = element_geometry(&dm.vertices[i]);
        assert_eq!((dm.inv_jacobian[i], dm.det[i]), (g, d), "element {i}");
    }
}

/// A vortex case on a mesh of several parallel blocks, the last one partial.
fn vortex_mesh() -> (Case, DgMesh) {
    let case = Case::vortex(3 * BLOCK + 500);
    let mesh = case.build_mesh(3).expect("mesh");
    let om = prepare(&mesh, &PrepareOptions::new(Ordering::ColorRenumbered, 3)).expect("order");
    let dm = DgMesh::build(&om, &|t| case.boundary(&om.mesh, t)).expect("dg mesh");
    assert!(dm.num_elements > 3 * BLOCK && dm.num_elements % BLOCK != 0);
    (case, dm)
}

fn operator<'a>(case: &Case, dm: &'a DgMesh, tables: &'a BasisTables) -> Operator<'a> {
    Operator {
        mesh: dm,
        tables,
        flux: case.flux,
        state_fn: case.initial,
        states: vec![],
    }
}

/// The projection as one serial loop, c[(eq np + k) ne + i] += w_q u_eq(x_q) phi_k(x_q).
fn serial_projection(op: &Operator, f: &dyn Fn(f64, f64) -> State) -> Vec<f64> {
    let (tb, ne) = (op.tables, op.mesh.num_elements);
    let np = tb.np;
    let rule = TriangleRule::exact_to(2 * tb.p + 6);
    let phis: Vec<Vec<f64>> = rule.points.iter().map(|x| tb.eval(x[0], x[1])).collect();
    let mut c = vec![0.0; op.ndof()];
    for i in 0..ne {
        for (q, x) in rule.points.iter().enumerate() {
            let [px, py] = op.mesh.map(i, x[0], x[1]);
            let u = f(px, py);
            for k in 0..np {
                for eq in 0..4 {
                    c[(eq * np + k) * ne + i] += rule.weights[q] * u[eq] * phis[q][k];
                }
            }
        }
    }
    c
}

/// The L2 density error as one serial sum over elements and points.
fn serial_l2_density_error(op: &Operator, c: &[f64], t: f64) -> f64 {
    let (tb, ne) = (op.tables, op.mesh.num_elements);
    let rule = TriangleRule::exact_to(2 * tb.p + 6);
    let mut sum = 0.0;
    for i in 0..ne {
        for (q, x) in rule.points.iter().enumerate() {
            let phi = tb.eval(x[0], x[1]);
            let [px, py] = op.mesh.map(i, x[0], x[1]);
            let rho: f64 = (0..tb.np).map(|k| c[k * ne + i] * phi[k]).sum();
            let exact = op.state_fn.density(px, py, t);
            sum += rule.weights[q] * op.mesh.det[i] * (rho - exact).powi(2);
        }
    }
    sum.sqrt()
}

#[test]
fn parallel_projection_is_the_serial_one_bit_for_bit() {
    let (case, dm) = vortex_mesh();
    for p in 0..=4 {
        let tables = BasisTables::new(p);
        let op = operator(&case, &dm, &tables);
        let f = |x: f64, y: f64| case.initial.eval(x, y, 0.0);
        let parallel = op.project(&f);
        let serial = serial_projection(&op, &f);
        assert_eq!(parallel.len(), serial.len());
        let differ = parallel
            .iter()
            .zip(&serial)
            .position(|(a, b)| a.to_bits() != b.to_bits());
        assert_eq!(differ, None, "p = {p}: first differing coefficient");
    }
}

#[test]
fn parallel_l2_error_is_the_serial_sum_to_round_off() {
    let (case, dm) = vortex_mesh();
    for p in [1, 4] {
        let tables = BasisTables::new(p);
        let op = operator(&case, &dm, &tables);
        let c = op.project(&|x, y| case.initial.eval(x, y, 0.0));
        // At t = 0 the projection error; at t = 0.3 the exact solution has moved on, an error
        // of order one in the vortex core.
        for t in [0.0, 0.3] {
            let parallel = op.l2_density_error(&c, t);
            let serial = serial_l2_density_error(&op, &c, t);
            assert!(parallel > 0.0, "p = {p}, t = {t}");
            // Sums of ~1e5 positive terms in two orders: a few ulps per term at most.
            let rel = (parallel - serial).abs() / serial;
            assert!(
                rel < 1e-12,
                "p = {p}, t = {t}: {parallel:e} vs {serial:e} ({rel:e})"
            );
            assert_eq!(parallel.to_bits(), op.l2_density_error(&c, t).to_bits());
        }
    }
}
