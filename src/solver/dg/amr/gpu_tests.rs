//! The device adaptation against the f64 reference, adaptation after adaptation on the same
//! device trees (lavapipe in CI): the same smoothed flags and passes, the same trees, slots and
//! free rings id for id, the projected solution to f32 round-off, and the same DG mesh buffers
//! (faces by color, neighbours, geometry).

use super::gpu::{slots_needed, GpuAdaptOptions, GpuAdaptation, TreeCapacity};
use super::tests::{rand_flags, smooth_state, wall_box};
use super::*;
use crate::conformance::dg::{config, periodic_mesh, vortex};
use crate::mesh::NO_ELEMENT;
use crate::runtime::Runtime;
use crate::solver::dg::basis::BasisTables;
use crate::solver::dg::euler::NumericalFlux;
use crate::solver::dg::gpu::{Capacity, GpuDg};
use crate::solver::dg::mesh::{DgEdge, DgMesh};

/// |a - b| <= tol (1 + |b|), elementwise.
fn close(a: &[f64], b: &[f64], tol: f64, what: &str) {
    assert_eq!(a.len(), b.len(), "{what}: lengths");
    for (i, (x, y)) in a.iter().zip(b).enumerate() {
        assert!(
            (x - y).abs() <= tol * (1.0 + y.abs()),
            "{what}[{i}]: device {x}, reference {y}"
        );
    }
}

/// The device's mesh buffers against those the host builds from the reference's DG mesh.
fn check_mesh_buffers(rt: &Runtime, dg: &GpuDg, dm: &DgMesh) {
    let (_, [inv_jac, inv_det, heights, neighbors, edges]) = dg.device_buffers();
    let ne = dm.num_elements;
    let cap = dg.capacity().elements;
    let got: Vec<DgEdge> = rt.read(edges, 0, dm.edges.len()).expect("edges");
    for (j, (g, w)) in got.iter().zip(dm.gpu_edges()).enumerate() {
        assert_eq!(
            (g.left, g.right, g.info),
            (w.left, w.right, w.info),
            "face {j}"
        );
        close(
            &[g.nx, g.ny, g.length, g.mx, g.my].map(f64::from),
            &[w.nx, w.ny, w.length, w.mx, w.my].map(f64::from),
            1e-5,
            "face geometry",
        );
    }
    let jac: Vec<[f32; 4]> = rt.read(inv_jac, 0, ne).expect("jacobians");
    let idet: Vec<f32> = rt.read(inv_det, 0, ne).expect("dets");
    let h: Vec<f32> = rt.read(heights, 0, ne).expect("heights");
    for i in 0..ne {
        let scale = dm.inv_jacobian[i]
            .iter()
            .fold(0.0f64, |m, v| m.max(v.abs()));
        for (g, w) in jac[i].iter().zip(dm.inv_jacobian[i]) {
            assert!(
                (f64::from(*g) - w).abs() <= 1e-5 * scale,
                "element {i} jacobian"
            );
        }
        close(&[f64::from(idet[i])], &[1.0 / dm.det[i]], 1e-5, "1/det");
        close(&[f64::from(h[i])], &[dm.min_height[i]], 1e-5, "height");
    }
    let nb: Vec<[u32; 4]> = rt.read(neighbors, 0, 2 * cap).expect("neighbours");
    let id = |o: Option<usize>| o.map_or(NO_ELEMENT, |v| v as u32);
    for i in 0..ne {
        let n = &dm.neighbors[i];
        let split = (0..3)
            .filter(|&j| n[j + 3].is_some())
            .fold(0, |m, j| m | 1 << j);
        assert_eq!(nb[i], [id(n[0]), id(n[1]), id(n[2]), split], "element {i}");
        assert_eq!(&nb[cap + i][..3], &[id(n[3]), id(n[4]), id(n[5])]);
    }
}

fn device_matches_reference(base: DgMesh, p: usize, rounds: usize, seed: u64) {
    let rt = Runtime::wgpu().expect("a Vulkan adapter (lavapipe in CI)");
    let tables = BasisTables::new(p);
    let proj = Projection::new(p);
    let mut am = AdaptiveMesh::new(&base, 3).expect("tree");
    let mut coef = smooth_state(&am, &tables);
    let n0 = am.num_active();
    // Room for the rounds without growing (random flags refine one element in five).
    let grown = n0 * 16;
    let ne = slots_needed(grown);
    let dm = am.dg_mesh().expect("dg mesh");
    let cfg = config(NumericalFlux::Hllc, true, vortex());
    let capacity = Capacity {
        elements: ne,
        edges: 3 * ne,
    };
    let mut dg = GpuDg::with_capacity(&rt, &dm, &tables, &cfg, capacity).expect("solver");
    dg.set_solution(&scatter(&coef, tables.np))
        .expect("solution");
    let flat = am.to_flat();
    let tree = TreeCapacity::with_room(grown, flat.element_tree.len(), flat.edge_tree.len(), 2.0);
    let options = GpuAdaptOptions {
        field: IndicatorField::Density,
        threshold: 1.0,
        delta: 2.0,
    };
    let ga = GpuAdaptation::new(&rt, &am, &dg, &dm.color_offsets, p, options, tree)
        .expect("device trees");
    let mut seed = seed;
    let mut coarsened = 0;
    for round in 0..rounds {
        assert!(ga.has_room().expect("counters"), "round {round}: room");
        let faces = am.faces().expect("faces");
        let raw = rand_flags(am.num_active(), &mut seed);
        let mut flags = raw.clone();
        let passes = am.smooth_flags(&faces, &mut flags);
        ga.set_flags(&raw).expect("flags");
        assert_eq!(
            ga.smooth().expect("smooth"),
            passes,
            "round {round}: passes"
        );
        assert_eq!(
            ga.read_flags().expect("flags"),
            flags,
            "round {round}: flags"
        );
        let counts = am.adapt(&flags, &mut coef, &proj).expect("adapt");
        coarsened += counts.coarsened;
        let report = ga.apply(&mut dg).expect("device adaptation");
        assert_eq!(report.counts, counts, "round {round}");
        assert_eq!(report.num_elements, am.num_active(), "round {round}");
        let (mut got, mut want) = (ga.download().expect("read back").to_flat(), am.to_flat());
        for (g, w) in got.element_vertices.iter().zip(&want.element_vertices) {
            close(g.as_flattened(), w.as_flattened(), 1e-6, "vertices");
        }
        got.element_vertices.clear();
        want.element_vertices.clear();
        // Freed ids keep what they held; compare the live edges and every flag bit.
        assert_eq!(
            got.edge_tree.len(),
            want.edge_tree.len(),
            "round {round}: edge ids"
        );
        for (e, (g, w)) in got.edge_tree.iter().zip(&want.edge_tree).enumerate() {
            assert_eq!(g[0], w[0], "round {round}: edge {e}");
            if w[0] & tree::EDGE_ALIVE_BIT != 0 {
                assert_eq!(g, w, "round {round}: edge {e}");
                assert_eq!(
                    got.edge_sides[e], want.edge_sides[e],
                    "round {round}: edge {e}"
                );
            }
        }
        got.edge_tree.clear();
        want.edge_tree.clear();
        got.edge_sides.clear();
        want.edge_sides.clear();
        assert_eq!(got, want, "round {round}: trees");
        close(
            &dg.read_state().expect("state"),
            &scatter(&coef, tables.np),
            2e-5,
            "coefficients",
        );
        check_mesh_buffers(&rt, &dg, &am.dg_mesh().expect("dg mesh"));
    }
    assert!(
        coarsened > 0,
        "the random flags should coarsen some clusters"
    );
}

#[test]
fn device_adaptation_equals_the_reference_on_a_wall_box() {
    device_matches_reference(wall_box(), 2, 5, 5);
}

#[test]
fn device_adaptation_equals_the_reference_on_a_periodic_square() {
    device_matches_reference(periodic_mesh().expect("mesh"), 1, 4, 23);
}

#[test]
fn device_flags_follow_the_reference_indicator() {
    let rt = Runtime::wgpu().expect("a Vulkan adapter (lavapipe in CI)");
    let p = 2;
    let tables = BasisTables::new(p);
    let mut am = AdaptiveMesh::new(&wall_box(), 2).expect("tree");
    let proj = Projection::new(p);
    let mut coef = smooth_state(&am, &tables);
    // A tree with two levels so heights and Jacobians differ between elements.
    let mut seed = 3;
    let faces = am.faces().expect("faces");
    let mut f: Vec<i8> = rand_flags(am.num_active(), &mut seed)
        .iter()
        .map(|&x| x.max(0))
        .collect();
    am.smooth_flags(&faces, &mut f);
    am.adapt(&f, &mut coef, &proj).expect("adapt");
    let dm = am.dg_mesh().expect("dg mesh");
    let n = am.num_active();
    let cfg = config(NumericalFlux::Hllc, false, vortex());
    let capacity = Capacity {
        elements: slots_needed(n),
        edges: 3 * slots_needed(n),
    };
    let dg = GpuDg::with_capacity(&rt, &dm, &tables, &cfg, capacity).expect("solver");
    dg.set_solution(&scatter(&coef, tables.np))
        .expect("solution");
    let flat = am.to_flat();
    for field in [
        IndicatorField::Density,
        IndicatorField::Pressure,
        IndicatorField::Energy,
    ] {
        let eps = indicator(&tables, field, &coef, |i| {
            (dm.inv_jacobian[i], dm.min_height[i])
        });
        let mut sorted = eps.clone();
        sorted.sort_by(f64::total_cmp);
        // The median: about a quarter refine and a quarter coarsen with delta = 2.
        let threshold = sorted[n / 2];
        let options = GpuAdaptOptions {
            field,
            threshold,
            delta: 2.0,
        };
        let tree = TreeCapacity::with_room(n, flat.element_tree.len(), flat.edge_tree.len(), 1.0);
        let ga = GpuAdaptation::new(&rt, &am, &dg, &dm.color_offsets, p, options, tree)
            .expect("device trees");
        ga.compute_flags().expect("flags");
        let got = ga.read_flags().expect("flags");
        let want = flags(&eps, threshold, 2.0);
        let (mut refine, mut coarsen) = (0, 0);
        for i in 0..n {
            // f32 may flip an element within round-off of either limit.
            let near = [threshold * 2.0, threshold / 2.0]
                .iter()
                .any(|&t| (eps[i] - t).abs() <= 1e-4 * t);
            if !near {
                assert_eq!(got[i], want[i], "{field:?}: element {i}, eps {}", eps[i]);
            }
            refine += usize::from(want[i] > 0);
            coarsen += usize::from(want[i] < 0);
        }
        assert!(
            refine > n / 10 && coarsen > n / 10,
            "{field:?}: {refine} / {coarsen}"
        );
    }
}
