//! The adaptive mesh against its invariants: faces that meet point to point, the 2:1 rule,
//! at most 2K colors with none repeated at an element, conservation and reversibility.

use super::*;
use crate::conformance::amr::{graded_ripple, map, rand_flags, smooth_state};
use crate::conformance::dg::periodic_mesh;
use crate::mesh::generate;
use crate::order::{prepare, Ordering, PrepareOptions};
use crate::solver::dg::amr::gpu::QUEUE_SLOTS;
use crate::solver::dg::basis::edge_point;
use crate::solver::dg::basis::BasisTables;
use crate::solver::dg::euler::State;
use crate::solver::dg::mesh::{BoundaryKind, DgMesh};

fn wall_box() -> DgMesh {
    let mesh = generate::rectangle(0.0, 2.0, 0.0, 1.0, 60, 5).expect("mesh");
    let om = prepare(&mesh, &PrepareOptions::new(Ordering::ColorRenumbered, 3)).expect("prepare");
    DgMesh::build(&om, &|_| Ok(BoundaryKind::Wall)).expect("dg mesh")
}

fn det(v: &[[f64; 2]; 3]) -> f64 {
    (v[1][0] - v[0][0]) * (v[2][1] - v[0][1]) - (v[2][0] - v[0][0]) * (v[1][1] - v[0][1])
}

/// Parameter on the right element's side of the left parameter t.
fn right_parameter(f: &Face, t: f64) -> f64 {
    match f.right_half {
        0 => 1.0 - t,
        h => (f64::from(h) - 1.0 + 1.0 - t) / 2.0,
    }
}

/// Every invariant the solver relies on; `periodic` skips the point-to-point check (partners
/// lie a period apart).
fn check(am: &AdaptiveMesh, periodic: bool) {
    let faces = am.faces().expect("faces");
    let n = am.num_active();
    let mut colors: Vec<Vec<u8>> = vec![Vec::new(); n];
    let mut perimeter_seen = vec![0.0; n];
    for f in &faces {
        let (l, r) = (f.left as usize, f.right);
        assert!(l < n && (r == NONE || (r as usize) < n));
        assert!(
            f.color < 2 * am.base_colors,
            "color {} of {}",
            f.color,
            am.base_colors
        );
        colors[l].push(f.color);
        perimeter_seen[l] += f.length;
        let vl = am.vertices(l);
        for t in [0.0, 0.3, 1.0] {
            let pl = map(&vl, edge_point(f.left_local as usize, t));
            let along = [
                f.midpoint[0] + (t - 0.5) * f.length * -f.normal[1],
                f.midpoint[1] + (t - 0.5) * f.length * f.normal[0],
            ];
            assert!((pl[0] - along[0]).hypot(pl[1] - along[1]) < 1e-12);
            if r != NONE && !periodic {
                let pr = map(
                    &am.vertices(r as usize),
                    edge_point(f.right_local as usize, right_parameter(f, t)),
                );
                assert!(
                    (pl[0] - pr[0]).hypot(pl[1] - pr[1]) < 1e-12,
                    "face {l}|{r} half {}: {pl:?} vs {pr:?}",
                    f.right_half
                );
            }
        }
        if r != NONE {
            let r = r as usize;
            colors[r].push(f.color);
            perimeter_seen[r] += f.length;
            let (ll, lr) = (am.level(l), am.level(r));
            if f.right_half == 0 {
                assert_eq!(ll, lr, "whole face between levels {ll} and {lr}");
            } else {
                assert_eq!(ll, lr + 1, "half face between levels {ll} and {lr}");
            }
        }
    }
    for i in 0..n {
        let mut c = colors[i].clone();
        c.sort_unstable();
        let len = c.len();
        c.dedup();
        assert_eq!(
            c.len(),
            len,
            "element {i} has two faces of one color: {:?}",
            colors[i]
        );
        let v = am.vertices(i);
        let perimeter: f64 = (0..3)
            .map(|s| {
                let (a, b) = (v[s], v[(s + 1) % 3]);
                (b[0] - a[0]).hypot(b[1] - a[1])
            })
            .sum();
        assert!((perimeter - perimeter_seen[i]).abs() < 1e-12 * perimeter.max(1.0));
        assert!(det(&v) > 0.0);
    }
}

/// Integral of each conserved quantity: sum_i (det J_i / 2) sqrt(2) c_{i,0}.
fn totals(am: &AdaptiveMesh, coef: &[Vec<State>]) -> State {
    let mut s = [0.0; 4];
    for (i, c) in coef.iter().enumerate() {
        let a = det(&am.vertices(i)) / 2.0 * std::f64::consts::SQRT_2;
        for eq in 0..4 {
            s[eq] += a * c[0][eq];
        }
    }
    s
}

#[test]
fn random_adaptations_keep_every_invariant_and_the_totals() {
    for (base, periodic) in [(wall_box(), false), (periodic_mesh().expect("mesh"), true)] {
        let p = 2;
        let tables = BasisTables::new(p);
        let proj = Projection::new(p);
        let mut am = AdaptiveMesh::new(&base, 4).expect("tree");
        check(&am, periodic);
        let mut coef = smooth_state(&am, &tables);
        let start = totals(&am, &coef);
        let mut seed = 11;
        let mut max_level = 0;
        let mut coarsened = 0;
        for _ in 0..12 {
            let faces = am.faces().expect("faces");
            let mut f = rand_flags(am.num_active(), &mut seed);
            am.smooth_flags(&faces, &mut f);
            let counts = am.adapt(&f, &mut coef, &proj).expect("adapt");
            coarsened += counts.coarsened;
            check(&am, periodic);
            let now = totals(&am, &coef);
            for eq in 0..4 {
                assert!((now[eq] - start[eq]).abs() < 1e-12 * start[eq].abs().max(1.0));
            }
            max_level = max_level.max((0..am.num_active()).map(|i| am.level(i)).max().unwrap());
        }
        assert_eq!(
            max_level, 4,
            "the random flags should reach the maximum level"
        );
        assert!(
            coarsened > 0,
            "the random flags should coarsen some clusters"
        );
    }
}

/// The bound the device launches over the faces take after an adaptation (GpuAdaptation::apply,
/// CountBounds): at most 6 faces more per refined element, 3 per element in all; the element
/// count the host computes, n + 3 refined - 3 clusters; and the faces covering every element
/// side, 6 half sides per element (what the host checks of amr_faces' C_SIDE_UNITS).
#[test]
fn an_adaptation_adds_at_most_six_faces_per_refinement() {
    for (base, periodic) in [(wall_box(), false), (periodic_mesh().expect("mesh"), true)] {
        let proj = Projection::new(1);
        let mut am = AdaptiveMesh::new(&base, 4).expect("tree");
        let mut coef = smooth_state(&am, &BasisTables::new(1));
        let mut seed = 23;
        let mut most_added = 0.0f64;
        for round in 0..16 {
            let faces = am.faces().expect("faces").len();
            let n = am.num_active();
            let mut f = rand_flags(n, &mut seed);
            am.smooth_flags(&am.faces().expect("faces"), &mut f);
            let counts = am.adapt(&f, &mut coef, &proj).expect("adapt");
            let (after, n_after) = (am.faces().expect("faces").len(), am.num_active());
            assert_eq!(
                n_after,
                n + 3 * counts.refined - 3 * counts.coarsened,
                "round {round}"
            );
            // amr_faces' count of the element half sides its faces cover (C_SIDE_UNITS): 2 for
            // a face's left side, whole; 2 or 1 for its right, whole or half.
            let covered: usize = am
                .faces()
                .expect("faces")
                .iter()
                .map(|f| match (f.right, f.right_half) {
                    (NONE, _) => 2,
                    (_, 0) => 4,
                    _ => 3,
                })
                .sum();
            assert_eq!(covered, 6 * n_after, "round {round}: half sides covered");
            assert!(
                after <= faces + 6 * counts.refined && after <= 3 * n_after,
                "round {round} (periodic {periodic}): {faces} -> {after} faces, {n_after} \
                 elements, {} refined",
                counts.refined
            );
            if counts.refined > 0 && after > faces {
                most_added = most_added.max((after - faces) as f64 / counts.refined as f64);
            }
        }
        assert!(most_added > 3.0, "no adaptation added faces ({most_added})");
    }
}

#[test]
fn refining_everything_then_coarsening_everything_restores_the_mesh_and_the_solution() {
    let base = wall_box();
    for p in [1, 3] {
        let tables = BasisTables::new(p);
        let proj = Projection::new(p);
        let mut am = AdaptiveMesh::new(&base, 3).expect("tree");
        let mut coef = smooth_state(&am, &tables);
        let original = coef.clone();
        let vertices: Vec<_> = (0..am.num_active()).map(|i| am.vertices(i)).collect();
        for _ in 0..3 {
            let faces = am.faces().expect("faces");
            let mut f = vec![1; am.num_active()];
            am.smooth_flags(&faces, &mut f);
            am.adapt(&f, &mut coef, &proj).expect("refine");
        }
        assert_eq!(am.num_active(), base.num_elements * 64);
        check(&am, false);
        for _ in 0..3 {
            let faces = am.faces().expect("faces");
            let mut f = vec![-1; am.num_active()];
            am.smooth_flags(&faces, &mut f);
            am.adapt(&f, &mut coef, &proj).expect("coarsen");
            check(&am, false);
        }
        assert_eq!(am.num_active(), base.num_elements);
        assert_eq!(am.faces().expect("faces").len(), base.edges.len());
        // Slots may have moved: match elements by their vertices.
        for (i, c) in coef.iter().enumerate() {
            let j = vertices
                .iter()
                .position(|v| *v == am.vertices(i))
                .expect("a base element");
            for (a, b) in c.iter().zip(&original[j]) {
                for eq in 0..4 {
                    assert!((a[eq] - b[eq]).abs() < 1e-12, "p={p} element {j}");
                }
            }
        }
    }
}

#[test]
fn smoothing_enforces_two_to_one_and_spreads_refinement() {
    let base = wall_box();
    let proj = Projection::new(1);
    let tables = BasisTables::new(1);
    let mut am = AdaptiveMesh::new(&base, 5).expect("tree");
    let mut coef = smooth_state(&am, &tables);
    // Refine one corner element five times: the 2:1 rule forces a graded neighbourhood.
    for _ in 0..5 {
        let n = am.num_active();
        let target = (0..n)
            .min_by(|&a, &b| {
                let ca = am.vertices(a).iter().map(|v| v[0] + v[1]).sum::<f64>();
                let cb = am.vertices(b).iter().map(|v| v[0] + v[1]).sum::<f64>();
                ca.total_cmp(&cb)
            })
            .unwrap();
        let mut f = vec![0; n];
        f[target] = 1;
        let faces = am.faces().expect("faces");
        am.smooth_flags(&faces, &mut f);
        am.adapt(&f, &mut coef, &proj).expect("adapt");
        check(&am, false);
    }
    let levels: Vec<u8> = (0..am.num_active()).map(|i| am.level(i)).collect();
    assert_eq!(*levels.iter().max().unwrap(), 5);
    for l in 1..5 {
        assert!(levels.contains(&l), "no element at level {l}: not graded");
    }
}

#[test]
fn six_colors_on_a_three_colored_base() {
    let base = wall_box();
    assert_eq!(base.num_colors(), 3);
    let proj = Projection::new(0);
    let mut am = AdaptiveMesh::new(&base, 3).expect("tree");
    let mut coef = vec![vec![[1.0; 4]]; am.num_active()];
    let mut seed = 5;
    let mut used = [false; 6];
    for _ in 0..6 {
        let faces = am.faces().expect("faces");
        for f in &faces {
            used[f.color as usize] = true;
        }
        let mut f = rand_flags(am.num_active(), &mut seed);
        am.smooth_flags(&faces, &mut f);
        am.adapt(&f, &mut coef, &proj).expect("adapt");
        check(&am, false);
    }
    assert!(used.iter().all(|&u| u), "all six colors appear: {used:?}");
}

#[test]
fn indicator_is_height_times_the_gradient() {
    // rho = 2 + 3x - 4y on an element: |grad rho| = 5, eps = 5 h.
    let p = 1;
    let tables = BasisTables::new(p);
    let base = wall_box();
    let am = AdaptiveMesh::new(&base, 1).expect("tree");
    let mut coef = smooth_state(&am, &tables);
    for (i, c) in coef.iter_mut().enumerate() {
        let v = am.vertices(i);
        // Linear interpolation of rho at the vertices, projected exactly onto P1.
        let rho: Vec<f64> = v.iter().map(|x| 2.0 + 3.0 * x[0] - 4.0 * x[1]).collect();
        for (k, ck) in c.iter_mut().enumerate() {
            ck[0] = (0..tables.nq())
                .map(|q| {
                    let r = tables.vol.points[q];
                    let val = rho[0] * (1.0 - r[0] - r[1]) + rho[1] * r[0] + rho[2] * r[1];
                    tables.vol.weights[q] * val * tables.vol_phi[q * tables.np + k]
                })
                .sum();
        }
    }
    let eps = indicator(&tables, IndicatorField::Density, &coef, |i| {
        (base.inv_jacobian[i], base.min_height[i])
    });
    for (i, e) in eps.iter().enumerate() {
        assert!(
            (e - 5.0 * base.min_height[i]).abs() < 1e-10,
            "element {i}: {e}"
        );
    }
    assert_eq!(flags(&[0.1, 1.0, 3.0], 1.0, 2.0), vec![-1, 0, 1]);
}

/// The smoothing ends at the least admissible flags above the start whatever the order of the
/// raises: the ordered passes (faces color by color, and in the opposite order within each
/// color), the device's stages by level and its rounds (with queues of 128 slots a round, of
/// one, and of none, when every rise is handed to the lists) give the same flags, those flags
/// are a fixed point, and lowering any raised flag by one is not (smoothing raises it back).
/// The stages are all needed: without the last one, some rounds end short of the least
/// admissible flags. Queues of none hand slots off into more than one list, so the lists'
/// rounds are tested.
#[test]
fn smoothing_reaches_the_least_admissible_flags_in_any_order() {
    let base = wall_box();
    let proj = Projection::new(0);
    let mut am = AdaptiveMesh::new(&base, 4).expect("tree");
    let mut coef = vec![vec![[1.0; 4]]; am.num_active()];
    let mut seed = 19;
    let (mut raised, mut most_passes, mut handed, mut most_lists) = (0, 0, 0, 0);
    let mut last_stage_needed = 0;
    for _ in 0..8 {
        let faces = am.faces().expect("faces");
        let start = rand_flags(am.num_active(), &mut seed);
        let mut ordered = start.clone();
        let passes = am.smooth_flags(&faces, &mut ordered);
        let mut reversed = start.clone();
        let backwards: Vec<Face> = faces.iter().rev().copied().collect();
        am.smooth_flags(&backwards, &mut reversed);
        assert_eq!(ordered, reversed);
        let mut staged = start.clone();
        let stages = am.smooth_flags_in_stages(&faces, &mut staged);
        assert_eq!(ordered, staged);
        let mut short = start.clone();
        am.smooth_in_stages(&faces, &mut short, stages.saturating_sub(1));
        if short != ordered {
            last_stage_needed += 1;
        }
        for queue_slots in [QUEUE_SLOTS, 1, 0] {
            let mut in_rounds = start.clone();
            let settled = am.smooth_flags_in_rounds(&faces, &mut in_rounds, queue_slots);
            assert_eq!(ordered, in_rounds, "queues of {queue_slots}");
            if queue_slots == 0 {
                handed += settled.slots;
                most_lists = most_lists.max(settled.lists);
            }
        }
        most_passes = most_passes.max(passes);
        let mut again = ordered.clone();
        assert_eq!(am.smooth_flags(&faces, &mut again), 1);
        assert_eq!(again, ordered, "not a fixed point");
        for j in 0..start.len() {
            if ordered[j] - 1 < start[j] {
                continue;
            }
            raised += 1;
            let mut lower = ordered.clone();
            lower[j] -= 1;
            am.smooth_flags(&faces, &mut lower);
            assert_eq!(lower, ordered, "flag {j} need not be raised");
        }
        am.adapt(&ordered, &mut coef, &proj).expect("adapt");
        check(&am, false);
    }
    assert!(raised > 100, "only {raised} raised flags");
    assert!(
        most_passes > 2,
        "the rules should cascade ({most_passes} passes)"
    );
    assert!(
        last_stage_needed > 0,
        "no round needed its last stage: the stages are not tested"
    );
    assert!(handed > 100, "only {handed} slots handed off");
    assert!(
        most_lists > 1,
        "the hand-offs fitted one list: the lists' rounds are not tested"
    );
}

/// A refinement at the finest level of a graded mesh forces a chain of raises down every level
/// (GK19's ripple: a = 7 -> 6 -> .. -> 1, six links): the six stages settle it, a level a stage,
/// to the ordered smoothing's flags, and five stages do not.
#[test]
fn staged_smoothing_carries_a_chain_down_every_level() {
    let (am, start, lowest) = graded_ripple(&wall_box(), [0.33, 0.71]).expect("graded mesh");
    assert_eq!(lowest, 0, "the chain should reach level 0");
    let faces = am.faces().expect("faces");
    let mut ordered = start.clone();
    am.smooth_flags(&faces, &mut ordered);
    let mut staged = start.clone();
    let stages = am.smooth_flags_in_stages(&faces, &mut staged);
    assert_eq!(stages, 6);
    assert_eq!(staged, ordered);
    let mut short = start.clone();
    am.smooth_in_stages(&faces, &mut short, 5);
    assert_ne!(short, ordered, "the chain should need the sixth stage");
}

/// The same ripple (six links down every level): a workgroup's rounds settle it with no
/// hand-off, and with queues of none the lists settle it, to the ordered smoothing's flags.
#[test]
fn smoothing_in_rounds_carries_a_ripple_down_every_level() {
    let (am, start, lowest) = graded_ripple(&wall_box(), [0.33, 0.71]).expect("graded mesh");
    assert_eq!(lowest, 0, "the chain should reach level 0");
    let faces = am.faces().expect("faces");
    let mut ordered = start.clone();
    am.smooth_flags(&faces, &mut ordered);
    let mut in_rounds = start.clone();
    let settled = am.smooth_flags_in_rounds(&faces, &mut in_rounds, QUEUE_SLOTS);
    assert_eq!(settled.slots, 0);
    assert_eq!(in_rounds, ordered);
    let mut handed_off = start.clone();
    let settled = am.smooth_flags_in_rounds(&faces, &mut handed_off, 0).slots;
    assert_eq!(handed_off, ordered);
    let rises = (0..start.len()).filter(|&j| ordered[j] > start[j]).count();
    assert!(
        settled >= rises && rises >= 6,
        "{settled} settled from the lists, {rises} raised"
    );
}

/// The active elements by their vertices (bit for bit), each with its slot.
fn by_vertices(am: &AdaptiveMesh) -> std::collections::HashMap<[u64; 6], usize> {
    (0..am.num_active())
        .map(|p| {
            let v = am.vertices(p);
            let key = [v[0][0], v[0][1], v[1][0], v[1][1], v[2][0], v[2][1]].map(f64::to_bits);
            (key, p)
        })
        .collect()
}

/// Random adaptations with both compactions from one start: the same elements with the same
/// coefficients, only in other slots (and with other ids: refinement numbers children in slot
/// order); in order, what came from one slot comes before what came from the next (an element
/// that stays, a refined element's four children one after the other, a coarsened cluster's
/// parent in its first child's place).
#[test]
fn the_compaction_in_order_places_what_gk19_places_in_the_order_of_the_slots() {
    let base = wall_box();
    let proj = Projection::new(1);
    let tables = BasisTables::new(1);
    let mut gk19 = AdaptiveMesh::new(&base, 4).expect("tree");
    let mut in_order = gk19.clone();
    in_order.compaction = Compaction::InOrder;
    let mut coef_gk19 = smooth_state(&gk19, &tables);
    let mut coef = coef_gk19.clone();
    let mut seed = 11;
    let (mut refined, mut coarsened) = (0, 0);
    for _ in 0..8 {
        let faces = in_order.faces().expect("faces");
        let mut f = rand_flags(in_order.num_active(), &mut seed);
        in_order.smooth_flags(&faces, &mut f);
        let here = by_vertices(&in_order);
        let g: Vec<i8> = {
            let mut g = vec![0; f.len()];
            for (key, &p) in &by_vertices(&gk19) {
                g[p] = f[here[key]];
            }
            g
        };
        let before = in_order.to_flat();
        let counts = in_order
            .adapt(&f, &mut coef, &proj)
            .expect("adapt in order");
        assert_eq!(
            gk19.adapt(&g, &mut coef_gk19, &proj).expect("adapt"),
            counts
        );
        refined += counts.refined;
        coarsened += counts.coarsened;
        check(&in_order, false);
        let (a, b) = (by_vertices(&in_order), by_vertices(&gk19));
        assert_eq!(a.len(), b.len());
        for (key, &p) in &a {
            assert_eq!(coef[p], coef_gk19[b[key]], "the element in slot {p}");
        }
        let after = in_order.to_flat();
        let new_slot = |id: u32| after.element_tree[id as usize][3];
        let mut last = None;
        // (A coarsened cluster's ids may be a refined element's children now.)
        for (&id, &flag) in before.slots.iter().zip(&f) {
            let parent = before.element_tree[id as usize][1];
            let placed: Vec<u32> = match flag {
                0 => vec![new_slot(id)],
                1 => {
                    let first = after.element_tree[id as usize][2];
                    (first..first + 4).map(new_slot).collect()
                }
                _ if before.element_tree[parent as usize][2] == id => vec![new_slot(parent)],
                _ => Vec::new(),
            };
            for s in placed {
                assert_eq!(
                    s,
                    last.map_or(0, |l: u32| l + 1),
                    "slot order broken at {id}"
                );
                last = Some(s);
            }
        }
        assert_eq!(last.map_or(0, |l| l as usize + 1), in_order.num_active());
    }
    assert!(
        refined > 0 && coarsened > 0,
        "{refined} refined, {coarsened} coarsened"
    );
}

/// In order, refining everything and coarsening it back gives the base mesh in its own slots
/// (GK19's compaction leaves it permuted), with every coefficient restored.
#[test]
fn refining_and_coarsening_in_order_gives_back_the_slots() {
    let base = wall_box();
    let proj = Projection::new(2);
    let tables = BasisTables::new(2);
    let mut am = AdaptiveMesh::new(&base, 2).expect("tree");
    am.compaction = Compaction::InOrder;
    let start = am.to_flat();
    let mut coef = smooth_state(&am, &tables);
    let original = coef.clone();
    for flag in [1, 1, -1, -1] {
        let faces = am.faces().expect("faces");
        let mut f = vec![flag; am.num_active()];
        am.smooth_flags(&faces, &mut f);
        am.adapt(&f, &mut coef, &proj).expect("adapt");
        check(&am, false);
    }
    assert_eq!(am.to_flat().slots, start.slots);
    for (i, (c, o)) in coef.iter().zip(&original).enumerate() {
        for (a, b) in c.iter().zip(o) {
            for eq in 0..4 {
                assert!((a[eq] - b[eq]).abs() < 1e-12, "element {i}");
            }
        }
    }
}

/// The smoothing by the levels: in stages below 8 levels where dependent launches are cheap
/// (CUDA), below 5 where each pays a barrier (wgpu), in rounds from there.
#[test]
fn the_smoothing_takes_rounds_sooner_behind_barriers() {
    use super::gpu::SmoothingPasses;
    let rounds = SmoothingPasses::Rounds {
        queue_slots: QUEUE_SLOTS,
    };
    for (levels, cheap, expected) in [
        (4, false, SmoothingPasses::Stages),
        (5, false, rounds),
        (7, true, SmoothingPasses::Stages),
        (8, true, rounds),
        (12, false, rounds),
        (1, true, SmoothingPasses::Stages),
    ] {
        assert_eq!(
            SmoothingPasses::for_levels(levels, cheap),
            expected,
            "{levels} levels, cheap dependent launches {cheap}"
        );
    }
}

/// A device adaptation compiles the kernels it launches and no other: amr_flag and amr_smooth
/// reading the flags only with the host's flags (a run's stages launch the pass 0 that computes
/// them), amr_settle only for the rounds, GK19's compaction kernels only for it.
#[test]
fn the_adaptation_kernels_are_those_it_launches() {
    use super::gpu::{kernel_specs, SmoothingPasses};
    let rounds = SmoothingPasses::Rounds {
        queue_slots: QUEUE_SLOTS,
    };
    let count = |smoothing, host_flags, compaction, stem: &str, flagged: bool| {
        kernel_specs(3, 64, compaction, smoothing, host_flags, true)
            .iter()
            .filter(|(s, c)| *s == stem && c.iter().any(|(k, _)| *k == "FLAGGED") == flagged)
            .count()
    };
    let in_order = Compaction::InOrder;
    for (smoothing, host_flags, flag, reading, settle) in [
        (SmoothingPasses::Stages, false, 0, 0, 0),
        (SmoothingPasses::Stages, true, 1, 1, 0),
        (rounds, false, 0, 0, 1),
        (rounds, true, 1, 1, 1),
    ] {
        let case = format!("{smoothing}, host flags {host_flags}");
        assert_eq!(
            count(smoothing, host_flags, in_order, "amr_flag", false),
            flag,
            "{case}"
        );
        let reads = count(smoothing, host_flags, in_order, "amr_smooth", false);
        assert_eq!(reads, reading, "{case}: amr_smooth reading the flags");
        let computes = count(smoothing, host_flags, in_order, "amr_smooth", true);
        assert_eq!(computes, 1, "{case}: amr_smooth computing the flags");
        assert_eq!(
            count(smoothing, host_flags, in_order, "amr_settle", false),
            settle,
            "{case}"
        );
    }
    for (compaction, compacts) in [(Compaction::InOrder, 0), (Compaction::Gk19, 1)] {
        let n = count(rounds, false, compaction, "amr_compact", false);
        assert_eq!(n, compacts, "{compaction:?}: amr_compact");
    }
}
