//! The DG operator on nonconforming triangle meshes (hanging nodes, one level of difference):
//! the builder's geometric face classification, trace continuity across half faces, free-stream
//! preservation, conservation, and the exact weak form on coarse elements next to refined ones
//! (their two half-face integrals add up to the whole side's). CPU f64 reference only; the GPU
//! kernels are compared with it in the conformance suite (tests/conformance.rs).

use chromaflow::color::nonconforming::NOT_A_CHILD;
use chromaflow::color::{color_faces, refine, refine_colors, FaceColoringOptions, NcFaceKind};
use chromaflow::conformance::dg::{mixed_boundaries, nonconforming_mesh, refine_pattern};
use chromaflow::error::Result;
use chromaflow::mesh::{generate, Topology};
use chromaflow::solver::dg::euler::{self, conserved, State, GAMMA};
use chromaflow::solver::dg::mesh::EDGE_INTERIOR;
use chromaflow::solver::dg::{BasisTables, BoundaryKind, DgMesh, NumericalFlux, Operator, StateFn};

fn walls(_: i32) -> Result<BoundaryKind> {
    Ok(BoundaryKind::Wall)
}

fn exact(_: i32) -> Result<BoundaryKind> {
    Ok(BoundaryKind::Exact)
}

/// The meshes of the tests: three refinement patterns of a small unstructured square.
fn meshes(bc: &dyn Fn(i32) -> Result<BoundaryKind>) -> Vec<DgMesh> {
    [(1u64, 90usize), (2, 120), (3, 70)]
        .iter()
        .map(|&(seed, cells)| nonconforming_mesh(cells, seed, &refine_pattern(seed), bc).unwrap())
        .collect()
}

fn operator<'a>(dm: &'a DgMesh, tables: &'a BasisTables, state_fn: StateFn) -> Operator<'a> {
    Operator {
        mesh: dm,
        tables,
        flux: NumericalFlux::Rusanov,
        state_fn,
        states: vec![conserved(1.1, 0.3, -0.2, 0.9)],
    }
}

/// A polynomial sum c_ab x^a y^b of total degree <= p with coefficients from `seed`.
struct Poly(Vec<(i32, i32, f64)>);

impl Poly {
    fn new(p: usize, seed: u64) -> Poly {
        let mut s = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
        let mut terms = Vec::new();
        for a in 0..=p {
            for b in 0..=p - a {
                s ^= s << 13;
                s ^= s >> 7;
                s ^= s << 17;
                terms.push((
                    a as i32,
                    b as i32,
                    (s >> 11) as f64 / (1u64 << 53) as f64 - 0.5,
                ));
            }
        }
        Poly(terms)
    }

    fn at(&self, x: f64, y: f64) -> f64 {
        self.0
            .iter()
            .map(|&(a, b, c)| c * x.powi(a) * y.powi(b))
            .sum()
    }

    /// (d/dx, d/dy), exactly.
    fn gradient(&self, x: f64, y: f64) -> [f64; 2] {
        self.0.iter().fold([0.0, 0.0], |g, &(a, b, c)| {
            [
                g[0] + c * a as f64 * x.powi(a - 1) * y.powi(b),
                g[1] + c * b as f64 * x.powi(a) * y.powi(b - 1),
            ]
        })
    }
}

/// Element count with a side split into two faces (coarse next to refined).
fn coarse_next_to_fine(dm: &DgMesh) -> usize {
    dm.neighbors
        .iter()
        .filter(|n| n[3..].iter().any(Option::is_some))
        .count()
}

#[test]
fn builder_orients_half_faces_geometrically_and_agrees_with_the_refinement() {
    let mesh = generate::rectangle(0.0, 1.0, 0.0, 1.0, 90, 1).unwrap();
    let topo = Topology::build(&mesh).unwrap();
    let col = color_faces(&mesh, &topo, &FaceColoringOptions::with_seed(1)).unwrap();
    let pattern = refine_pattern(1);
    let flags: Vec<bool> = (0..mesh.num_elements()).map(pattern).collect();
    let nc = refine(&mesh, &topo, &flags).unwrap();
    let colors = refine_colors(&nc, &col.colors).unwrap();
    let dm = DgMesh::build_nonconforming(&nc, &colors, &walls).unwrap();
    assert_eq!(dm.edges.len(), nc.topo.num_faces());
    assert!(dm.det.iter().all(|&d| d > 0.0));
    let mut seen = [0usize; 3];
    let mut flipped = 0;
    for e in &dm.edges {
        // The face the edge came from, by midpoint.
        let f = (0..nc.topo.num_faces())
            .find(|&f| {
                let v = nc.topo.face_vertices.row(f);
                let (a, b) = (nc.mesh.points[v[0] as usize], nc.mesh.points[v[1] as usize]);
                (0.5 * (a[0] + b[0]) - e.midpoint[0]).abs() < 1e-12
                    && (0.5 * (a[1] + b[1]) - e.midpoint[1]).abs() < 1e-12
            })
            .unwrap();
        seen[e.right_half as usize] += 1;
        if e.right_half == 0 {
            continue;
        }
        // Child m of a parent split next to one refined side: the coarse element walks the
        // parent a -> b if it was the parent's left element (child 1 is then its first half),
        // else b -> a (child 1 is its second half).
        let NcFaceKind::Child(m) = nc.face_kind[f] else {
            panic!("face {f}: a half face that is not a child edge");
        };
        let coarse_was_left = nc.topo.left[f] as usize == e.right.unwrap();
        flipped += coarse_was_left as usize;
        let want = if coarse_was_left { m } else { 3 - m };
        assert_eq!(e.right_half, want, "face {f}");
        // The fine element walks its whole edge, and that edge is the face.
        let v = dm.vertices[e.left];
        let (a, b) = (v[e.left_local], v[(e.left_local + 1) % 3]);
        let (p0, p1) = (e.point(0.0), e.point(1.0));
        assert!((a[0] - p0[0]).hypot(a[1] - p0[1]) < 1e-12);
        assert!((b[0] - p1[0]).hypot(b[1] - p1[1]) < 1e-12);
        assert_ne!(nc.element_child[e.left], NOT_A_CHILD);
        assert_eq!(nc.element_child[e.right.unwrap()], NOT_A_CHILD);
    }
    assert!(seen[1] > 0 && seen[2] > 0, "half faces {seen:?}");
    assert!(
        flipped > 0 && flipped < seen[1] + seen[2],
        "flipped {flipped} of {seen:?}"
    );
    // Both fine elements of a split side are the coarse element's neighbours on that side, in
    // slots j and j + 3 (what the limiter's bounds read); each fine element sees the coarse one.
    assert!(coarse_next_to_fine(&dm) > 0);
    for e in dm.edges.iter().filter(|e| e.right_half != 0) {
        let (c, j) = (e.right.unwrap(), e.right_local);
        let slots = dm.neighbors[c];
        assert!(slots[j].is_some() && slots[j + 3].is_some() && slots[j] != slots[j + 3]);
        assert!(slots[j] == Some(e.left) || slots[j + 3] == Some(e.left));
        assert_eq!(dm.neighbors[e.left][e.left_local], Some(c));
    }
    // A broken coloring is refused.
    let mut bad = colors.clone();
    let f = nc.topo.element_faces.row(0)[0] as usize;
    let g = nc.topo.element_faces.row(0)[1] as usize;
    bad[f] = bad[g];
    assert!(DgMesh::build_nonconforming(&nc, &bad, &walls).is_err());
}

#[test]
fn traces_agree_across_half_faces_for_polynomial_states() {
    for dm in meshes(&walls) {
        assert!(coarse_next_to_fine(&dm) > 0);
        for p in 1..=4 {
            let tables = BasisTables::new(p);
            let op = operator(&dm, &tables, StateFn::Constant([1.0, 0.0, 0.0, 2.5]));
            let fs: Vec<Poly> = (0..4).map(|eq| Poly::new(p, 17 * p as u64 + eq)).collect();
            let c = op.project(&|x, y| std::array::from_fn(|eq| fs[eq].at(x, y)));
            let nqe = tables.nqe();
            let mut worst = 0.0f64;
            for e in dm.edges.iter().filter(|e| e.kind == EDGE_INTERIOR) {
                let r = e.right.unwrap();
                let (cl, cr) = (op.element(&c, e.left), op.element(&c, r));
                for q in 0..nqe {
                    let ul = Operator::eval(&cl, tables.edge_row(e.left_local, 0, q));
                    let row = tables.edge_row(e.right_local, e.right_half as usize, nqe - 1 - q);
                    let ur = Operator::eval(&cr, row);
                    let x = e.point(tables.edge_t[q]);
                    for eq in 0..4 {
                        let want = fs[eq].at(x[0], x[1]);
                        worst = worst
                            .max((ul[eq] - ur[eq]).abs())
                            .max((ul[eq] - want).abs());
                    }
                }
            }
            assert!(worst < 1e-12, "p={p}: traces differ by {worst}");
        }
    }
}

#[test]
fn constant_states_stay_constant() {
    let moving = conserved(1.2, 0.4, -0.3, 1.1);
    let rest = conserved(0.9, 0.0, 0.0, 1.3);
    for (bc, u) in [
        (&exact as &dyn Fn(i32) -> Result<BoundaryKind>, moving),
        (&walls, rest),
    ] {
        for dm in meshes(bc) {
            for p in 0..=4 {
                let tables = BasisTables::new(p);
                let op = operator(&dm, &tables, StateFn::Constant(u));
                let c = op.project(&|_, _| u);
                let mut out = vec![0.0; c.len()];
                op.rhs(&c, 0.0, &mut out);
                let worst = out.iter().fold(0.0f64, |m, v| m.max(v.abs()));
                assert!(worst < 1e-11, "p={p} {u:?}: |rhs| {worst}");
            }
        }
    }
}

#[test]
fn interior_fluxes_cancel_only_boundary_fluxes_remain() {
    let vortex = chromaflow::conformance::dg::vortex();
    for dm in meshes(&mixed_boundaries) {
        for p in 0..=3 {
            let tables = BasisTables::new(p);
            let op = operator(&dm, &tables, vortex);
            let c = op.project(&|x, y| vortex.eval(x, y, 0.0));
            let t = 0.1;
            let mut out = vec![0.0; c.len()];
            op.rhs(&c, t, &mut out);
            let ne = dm.num_elements;
            // sum_i det_i dc_0(i)/dt = -sum_boundary L sum_q w_q phi_0 F*_q . n.
            let mut total: State = [0.0; 4];
            for i in 0..ne {
                for (eq, s) in total.iter_mut().enumerate() {
                    *s += dm.det[i] * out[eq * tables.np * ne + i];
                }
            }
            let mut boundary: State = [0.0; 4];
            for e in dm.edges.iter().filter(|e| e.right.is_none()) {
                let coef = op.element(&c, e.left);
                for q in 0..tables.nqe() {
                    let phi = tables.edge_row(e.left_local, 0, q);
                    let ul = Operator::eval(&coef, phi);
                    let ug = op.ghost(e, &ul, e.point(tables.edge_t[q]), t);
                    let f = euler::numerical_flux(op.flux, &ul, &ug, e.normal);
                    for eq in 0..4 {
                        boundary[eq] -= e.length * tables.edge_w[q] * phi[0] * f[eq];
                    }
                }
            }
            for eq in 0..4 {
                let scale = boundary[eq].abs().max(1.0);
                assert!(
                    (total[eq] - boundary[eq]).abs() < 1e-12 * scale,
                    "p={p} eq {eq}: {} vs boundary {}",
                    total[eq],
                    boundary[eq]
                );
            }
        }
    }
}

/// With rho = 1, zero velocity and a polynomial energy of degree <= p, the fluxes
/// (0, p, 0, 0) and (0, 0, p, 0) are polynomials of degree p, every quadrature is exact and the
/// traces are continuous, so the DG rhs is exactly the L2 projection of
/// -div F = (0, -p_x, -p_y, 0). On a coarse element next to refined ones this holds only if its
/// two half-face integrals add up to the integral over its whole side.
#[test]
fn split_sides_integrate_like_whole_sides() {
    for dm in meshes(&walls) {
        let coarse: Vec<usize> = (0..dm.num_elements)
            .filter(|&i| dm.neighbors[i][3..].iter().any(Option::is_some))
            .collect();
        assert!(!coarse.is_empty());
        for p in 1..=4 {
            let tables = BasisTables::new(p);
            let op = operator(&dm, &tables, StateFn::Constant([1.0, 0.0, 0.0, 2.5]));
            let e = Poly::new(p, 5 + p as u64);
            let c = op.project(&|x, y| [1.0, 0.0, 0.0, 2.5 + 0.3 * e.at(x, y)]);
            let mut out = vec![0.0; c.len()];
            op.rhs(&c, 0.0, &mut out);
            // p = (gamma - 1) E at rest.
            let g = 0.3 * (GAMMA - 1.0);
            let want = op.project(&|x, y| {
                let d = e.gradient(x, y);
                [0.0, -g * d[0], -g * d[1], 0.0]
            });
            let ne = dm.num_elements;
            let np = tables.np;
            let err = |i: usize| -> f64 {
                (0..4 * np)
                    .map(|r| (out[r * ne + i] - want[r * ne + i]).abs())
                    .fold(0.0, f64::max)
            };
            let worst_coarse = coarse.iter().map(|&i| err(i)).fold(0.0, f64::max);
            let worst = (0..ne).map(err).fold(0.0, f64::max);
            assert!(
                worst_coarse < 1e-10 && worst < 1e-10,
                "p={p}: rhs off the weak form by {worst_coarse} (coarse next to fine), {worst}"
            );
        }
    }
}

#[test]
fn conforming_meshes_have_whole_faces_only() {
    let dm = chromaflow::conformance::dg::all_boundaries(chromaflow::order::Ordering::Rcm).unwrap();
    assert!(dm.edges.iter().all(|e| e.right_half == 0));
    assert!(dm
        .neighbors
        .iter()
        .all(|n| n[3..].iter().all(Option::is_none)));
    // The nonconforming builder with nothing refined finds whole faces only.
    let same = nonconforming_mesh(90, 1, &|_| false, &walls).unwrap();
    assert!(same.edges.iter().all(|e| e.right_half == 0));
    assert_eq!(coarse_next_to_fine(&same), 0);
}

/// Zhang–Shu positivity on a coarse element must hold where its fluxes are evaluated, the
/// half-edge nodes of its split sides included: after limiting projected strong shocks, the
/// density and pressure are above the floors at every such node, and some elements violated
/// the floor at a half-edge node alone (so leaving those nodes out would go unnoticed
/// elsewhere).
#[test]
fn positivity_holds_at_half_edge_nodes() {
    let dmr = StateFn::DoubleMach;
    let mut half_only = 0;
    for dm in meshes(&walls) {
        for p in 2..=4 {
            let tables = BasisTables::new(p);
            let op = operator(&dm, &tables, dmr);
            for shift in [0.1, 0.2, 0.3, 0.4] {
                let c0 = op.project(&|x, y| dmr.eval(x + shift, y, 0.0));
                let mut c = vec![0.0; c0.len()];
                op.limit(&c0, &mut c, false);
                for i in 0..dm.num_elements {
                    let split = op.split_sides(i);
                    let mean = op.mean(&c, i);
                    let floor = 0.99e-4 * euler::pressure(&mean);
                    let min_p = |coef: &[State], split: [bool; 3]| {
                        tables
                            .positivity_nodes(split)
                            .map(|phi| euler::pressure(&Operator::eval(coef, phi)))
                            .fold(f64::INFINITY, f64::min)
                    };
                    let raw = op.element(&c0, i);
                    if min_p(&raw, [false; 3]) >= floor && min_p(&raw, split) < floor {
                        half_only += 1;
                    }
                    let limited = op.element(&c, i);
                    let (pmin, rmin) = tables.positivity_nodes(split).fold(
                        (f64::INFINITY, f64::INFINITY),
                        |(pm, rm), phi| {
                            let u = Operator::eval(&limited, phi);
                            (pm.min(euler::pressure(&u)), rm.min(u[0]))
                        },
                    );
                    assert!(
                        pmin >= floor,
                        "p={p} element {i}: node pressure {pmin} < {floor}"
                    );
                    assert!(
                        rmin >= 0.99e-4 * mean[0],
                        "p={p} element {i}: density {rmin}"
                    );
                }
            }
        }
    }
    assert!(
        half_only > 0,
        "no element was limited for a half-edge node alone"
    );
    println!("{half_only} elements limited for a half-edge node alone");
}
