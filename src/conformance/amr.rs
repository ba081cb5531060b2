//! Adaptive refinement conformance: the device adaptation (`amr_*` kernels) against the f64
//! reference [`AdaptiveMesh`], adaptation after adaptation on the same device trees: the same
//! smoothed flags (in the rounds of the CPU twin of the device's smoothing), the same trees, slots
//! and free rings id for id, the projected solution to f32 round-off, the same DG mesh buffers
//! (faces by color, neighbours, geometry) and launch records, and the solver's rhs through those
//! records against the f64 operator;
//! and the device's flags against the reference indicator (with and without the jump term).

use super::dg::{
    all_boundaries, all_boundaries_colored, all_boundaries_of, config, max_rel, operator,
    periodic_mesh, vortex,
};
use super::Report;
use crate::error::{Error, Result};
use crate::mesh::NO_ELEMENT;
use crate::order::Ordering;
use crate::runtime::{Runtime, WIDE_WORKGROUP_SIZE};
use crate::solver::dg::amr::gpu::{
    slots_needed, GpuAdaptOptions, GpuAdaptation, SmoothingPasses, TreeCapacity, QUEUE_SLOTS,
};
use crate::solver::dg::amr::indicator::jumps;
use crate::solver::dg::amr::tree::{FlatTree, EDGE_ALIVE_BIT, NONE as NO_SLOT};
use crate::solver::dg::amr::{
    flags, indicator, scatter, AdaptiveMesh, Compaction, IndicatorField, Projection,
};
use crate::solver::dg::euler::State;
use crate::solver::dg::gpu::{
    adapted_launch_records, edges_by_left, Capacity, GpuConfig, GpuDg, SurfaceLayout,
};
use crate::solver::dg::mesh::{DgEdge, EDGE_INTERIOR};
use crate::solver::dg::{BasisTables, DgMesh, NumericalFlux};

/// The checks of [`crate::conformance::run_all`] on backend `b`.
pub fn amr(report: &mut Report, b: &Runtime) {
    let (gk19, in_order) = (Compaction::Gk19, Compaction::InOrder);
    // The smoothing by the levels (3: stages), and in rounds twice, once with queues of none.
    let [stages, queued, handed_off] = SMOOTHINGS;
    // The faces in color order too (the colored layout), or in left-element order only (the
    // gathered layout, a run's): once with the stages, which read them, and once in rounds.
    let cases = [
        (
            "all boundary kinds",
            all_boundaries(Ordering::Original),
            2,
            5,
            5,
            gk19,
            stages,
            true,
        ),
        (
            "periodic",
            periodic_mesh(),
            1,
            4,
            23,
            gk19,
            handed_off,
            true,
        ),
        // p = 4: amr_refine's workgroups project 60 coefficients per refinement, several
        // rounds of their threads.
        ("periodic", periodic_mesh(), 4, 2, 29, gk19, stages, true),
        (
            "all boundary kinds",
            all_boundaries(Ordering::Original),
            2,
            5,
            5,
            in_order,
            stages,
            true,
        ),
        (
            "periodic",
            periodic_mesh(),
            1,
            4,
            31,
            in_order,
            queued,
            true,
        ),
        (
            "all boundary kinds",
            all_boundaries(Ordering::Original),
            2,
            4,
            7,
            in_order,
            stages,
            false,
        ),
        (
            "periodic",
            periodic_mesh(),
            1,
            4,
            37,
            in_order,
            queued,
            false,
        ),
        // Faces in 7 base colors, 14 planes: amr_faces scans the workgroup's marks in two
        // passes of 4 words and amr_geometry's last workgroup its counts in four of 4 planes.
        (
            "all boundary kinds, 7 base colors",
            all_boundaries_colored(400, 7),
            1,
            3,
            43,
            in_order,
            stages,
            true,
        ),
        // Past 256 workgroups of 256 slots (about 77,000 elements after the first round):
        // amr_geometry's last workgroup numbers several workgroups a thread.
        (
            "all boundary kinds, 48,000 elements",
            all_boundaries_of(48_000, Ordering::Original),
            1,
            1,
            41,
            in_order,
            stages,
            true,
        ),
    ];
    for (label, base, p, rounds, seed, compaction, smoothing, color_order) in cases {
        // The large mesh's solver has room for 3 times its elements (16 would pass lavapipe's
        // 128 MiB a buffer).
        let large = label.contains("48,000");
        let room = if large { 3 } else { 16 };
        let faces = if color_order {
            "color and left-element order"
        } else {
            "left-element order only, gathered"
        };
        let name = format!(
            "amr device adaptation = reference ({label}, compaction {compaction}, smoothing \
             {smoothing}, faces in {faces}) p={p}, {rounds} rounds"
        );
        report.check(&name, b.kind(), "ids exact, rel 2e-5, rhs rel 5e-5", || {
            let base = base?;
            let setup = AdaptSetup {
                compaction,
                smoothing,
                color_order,
                room,
            };
            let (summary, most) = device_adaptation(b, &base, p, rounds, seed, setup)?;
            let slots_numbered_alone = WIDE_WORKGROUP_SIZE * WIDE_WORKGROUP_SIZE;
            ensure(!large || most > slots_numbered_alone as usize, || {
                format!("at most {most} elements: not past {slots_numbered_alone}")
            })?;
            Ok((summary, true))
        });
    }
    report.check(
        "amr device smoothing of a ripple five levels down = reference, in 6 stages and in rounds \
         (queues of 128 and of 0)",
        b.kind(),
        "flags and stages exact",
        || Ok((device_ripple(b)?, true)),
    );
    report.check(
        "amr device smoothing of flags mostly -1 on a mesh graded over 7 levels = reference, in \
         stages and in rounds (queues of 128 and of 0)",
        b.kind(),
        "flags exact, 24 flag sets each",
        || Ok((device_graded_smoothing(b)?, true)),
    );
    report.check(
        "amr device flags = reference indicator, 3 fields, 2 with jumps; pass 0's the same",
        b.kind(),
        "exact off 1e-4 of a limit",
        || Ok((device_flags(b)?, true)),
    );
    report.check(
        "amr device: an adaptation queued behind its smoothing runs only as decided",
        b.kind(),
        "unchanged when not run; bits of the host-queued one when run",
        || queued_adaptations(b),
    );
    report.check(
        "amr device: a face lost from the trees is an error at the next smoothing",
        b.kind(),
        "error naming the missing face",
        || lost_face_is_an_error(b),
    );
}

/// Adaptations queued behind their smoothing (`smooth_flags_ahead`), which the device runs
/// only by amr_scan 0's decision: flags that change nothing, a refinement past the solver's
/// slots and flags read where no adaptation is due (the clock short of the steps asked for)
/// must leave the trees, the solver's mesh buffers and its solution as they were (a kernel
/// that ignored the decision would refine, or write past the slots); flags that refine and
/// coarsen must give the trees and the solution of the host's queueing after its read-back
/// (`smooth`, `apply`) bit for bit. A run's smoothing (`smooth_with_clock`) queues its
/// adaptation after one that changed the mesh, and not after one that changed nothing.
fn queued_adaptations(rt: &Runtime) -> Result<(String, bool)> {
    let base = all_boundaries(Ordering::Original)?;
    let mut seed = 41;
    let mut outcomes = Vec::new();
    // (case, the flags' kind, the solver's slots over its elements, the steps asked for)
    for (case, flag, room, due) in [
        ("nothing", 0, 16, 0),
        ("no room", 1, 2, 0),
        ("not due", 2, 16, 1),
    ] {
        let am = AdaptiveMesh::new(&base, 3)?;
        let dm = am.dg_mesh()?;
        let n = am.num_active();
        let AdaptFixture { mut dg, ga, .. } =
            fixture_with_slots(rt, am, 1, n + room, 16, SmoothingPasses::Stages, true)?;
        let (trees, state) = (ga.download()?.to_flat(), dg.read_state()?);
        let flags = match flag {
            2 => rand_flags(n, &mut seed),
            f => vec![f; n],
        };
        ga.set_flags(&flags)?;
        let (_, smoothed) = ga.smooth_flags_ahead(due)?;
        let kept = ga.download()?.to_flat() == trees
            && dg.read_state()? == state
            && check_mesh_buffers(rt, &dg, &dm).is_ok();
        // After an adaptation that changed nothing, the next smoothing with the clock reads
        // the counts before it queues the adaptation.
        let waits = case != "nothing" || {
            ga.apply(&mut dg, &smoothed, None)?;
            !ga.smooth_with_clock(0)?.1.queued
        };
        outcomes.push((
            format!("{case}: {:?}, kept {kept}", smoothed.decision),
            kept && waits && !smoothed.ran_ahead(),
        ));
    }
    let flags = rand_flags(AdaptiveMesh::new(&base, 3)?.num_active(), &mut seed);
    let mut results = Vec::new();
    for ahead in [false, true] {
        let AdaptFixture { mut dg, ga, .. } = adapt_fixture(rt, &base, 1)?;
        ga.set_flags(&flags)?;
        let smoothed = if ahead {
            ga.smooth_flags_ahead(0)?.1
        } else {
            ga.smooth(None)?
        };
        let report = ga.apply(&mut dg, &smoothed, None)?;
        results.push((
            ga.download()?.to_flat(),
            dg.read_state()?,
            report,
            smoothed.ran_ahead(),
        ));
        // After one that changed the mesh, the next is queued behind its smoothing.
        if !ga.smooth_with_clock(0)?.1.queued {
            return Ok((
                "no adaptation queued after one that changed the mesh".into(),
                false,
            ));
        }
    }
    let same = results[0].0 == results[1].0 && results[0].1 == results[1].1;
    let changed = results[1].2.counts != Default::default();
    outcomes.push((
        format!("runs: {:?}, same as the host's {same}", results[1].2.counts),
        same && changed && results[1].3 && !results[0].3,
    ));
    let ok = outcomes.iter().all(|(_, ok)| *ok);
    let text: Vec<String> = outcomes.into_iter().map(|(t, _)| t).collect();
    Ok((text.join("; "), ok))
}

/// The trees on the device with one live interior edge's two sides cleared (an edge no
/// element owns: amr_faces, a thread per slot, never visits it), then an adaptation that
/// refines an element away from it: the adapted mesh lacks that face, and the next smoothing
/// must say so (C_SIDE_UNITS), not hand on a mesh with a hole. Without the corruption the same
/// steps succeed.
fn lost_face_is_an_error(rt: &Runtime) -> Result<(String, bool)> {
    let mut outcomes = Vec::new();
    for corrupt in [false, true] {
        let AdaptFixture { mut dg, ga, am, .. } =
            adapt_fixture(rt, &all_boundaries(Ordering::Original)?, 1)?;
        let flat = am.to_flat();
        let slot = |side: [u32; 2]| flat.element_tree[side[0] as usize][3];
        // A live leaf interior edge, and an element touching neither of its sides.
        let edge = (0..flat.edge_tree.len())
            .find(|&e| {
                let t = flat.edge_tree[e];
                t[0] & EDGE_ALIVE_BIT != 0 && t[2] == NO_SLOT && t[3] & 0xf == EDGE_INTERIOR
            })
            .ok_or_else(|| Error::Run("no interior edge in the fixture".into()))?;
        let sides = flat.edge_sides[edge].map(slot);
        let far = (0..am.num_active() as u32)
            .find(|s| {
                let id = flat.slots[*s as usize] as usize;
                !sides.contains(s)
                    && flat.element_edges[id][..3].iter().all(|&e| {
                        flat.edge_sides[e as usize]
                            .iter()
                            .all(|side| side[0] == NO_SLOT || !sides.contains(&slot(*side)))
                    })
            })
            .ok_or_else(|| Error::Run("no element away from the edge".into()))?;
        if corrupt {
            // Its sides are the 4 words of the edge in the part before the slots
            // (GpuAdaptation::state_words).
            let mut words = ga.state_words()?;
            let at = words.len() - am.num_active() - 4 * flat.edge_tree.len() + 4 * edge;
            words[at] = NO_SLOT;
            words[at + 2] = NO_SLOT;
            ga.set_state_words(&words)?;
        }
        let mut flags = vec![0i8; am.num_active()];
        flags[far as usize] = 1;
        ga.set_flags(&flags)?;
        let smoothed = ga.smooth(None)?;
        let adapted = ga.apply(&mut dg, &smoothed, None)?;
        ga.set_flags(&vec![0; adapted.num_elements])?;
        outcomes.push(ga.smooth(None).map(|_| ()));
    }
    let missing =
        |o: &Result<()>| matches!(o, Err(e) if e.to_string().contains("a face is missing"));
    let describe = |o: &Result<()>| {
        o.as_ref()
            .map_or_else(|e| e.to_string(), |()| "no error".to_string())
    };
    Ok((
        format!(
            "intact: {}; edge cleared: {}",
            describe(&outcomes[0]),
            describe(&outcomes[1])
        ),
        outcomes[0].is_ok() && missing(&outcomes[1]),
    ))
}

fn ensure(ok: bool, what: impl FnOnce() -> String) -> Result<()> {
    if ok {
        Ok(())
    } else {
        Err(Error::Run(what()))
    }
}

/// |a - b| <= tol (1 + |b|), elementwise.
pub fn close(a: &[f64], b: &[f64], tol: f64, what: &str) -> Result<()> {
    ensure(a.len() == b.len(), || {
        format!("{what}: {} values, want {}", a.len(), b.len())
    })?;
    for (i, (x, y)) in a.iter().zip(b).enumerate() {
        ensure((x - y).abs() <= tol * (1.0 + y.abs()), || {
            format!("{what}[{i}]: device {x}, reference {y}")
        })?;
    }
    Ok(())
}

/// Map of the reference triangle onto `v`.
pub fn map(v: &[[f64; 2]; 3], r: [f64; 2]) -> [f64; 2] {
    [
        v[0][0] + r[0] * (v[1][0] - v[0][0]) + r[1] * (v[2][0] - v[0][0]),
        v[0][1] + r[0] * (v[1][1] - v[0][1]) + r[1] * (v[2][1] - v[0][1]),
    ]
}

/// A smooth state with every mode excited, per element slot (`[mode][equation]`).
pub fn smooth_state(am: &AdaptiveMesh, tables: &BasisTables) -> Vec<Vec<State>> {
    let rule = &tables.vol;
    (0..am.num_active())
        .map(|i| {
            let v = am.vertices(i);
            (0..tables.np)
                .map(|k| {
                    let mut u = [0.0; 4];
                    for (q, (x, w)) in rule.points.iter().zip(&rule.weights).enumerate() {
                        let p = map(&v, *x);
                        let phi = tables.vol_phi[q * tables.np + k];
                        let s = [
                            1.0 + 0.3 * (3.0 * p[0]).sin() * p[1],
                            0.2 * p[0] * p[0],
                            -0.1 * p[1],
                            2.5 + (2.0 * p[1]).cos(),
                        ];
                        for eq in 0..4 {
                            u[eq] += w * s[eq] * phi;
                        }
                    }
                    u
                })
                .collect()
        })
        .collect()
}

/// Pseudo-random flags: +1 one time in five, -1 two times in five.
pub fn rand_flags(n: usize, seed: &mut u64) -> Vec<i8> {
    weighted_flags(n, seed, [1, 2, 5])
}

/// Pseudo-random flags, `[plus, minus, out_of]`: +1 `plus` times in `out_of`, -1 `minus` times.
fn weighted_flags(n: usize, seed: &mut u64, [plus, minus, out_of]: [u64; 3]) -> Vec<i8> {
    (0..n)
        .map(|_| {
            *seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            match (*seed >> 33) % out_of {
                r if r < plus => 1,
                r if r < plus + minus => -1,
                _ => 0,
            }
        })
        .collect()
}

/// Units of f32 round-off that the device's geometry may carry against the f64 reference's.
/// An f32 vertex is off by up to half an ulp per level of midpoints, and a length, position or
/// height from vertices at most X from the origin by a few roundings of ε (1 + X); a quantity
/// from their differences over a length h (a normal, the inverse Jacobian, 1/det J) by as
/// many relative units of ε (1 + X) / h. Measured on lavapipe over every adaptation check (up
/// to 7 levels): at most 0.64 of these units (the old 1e-5 (1 + |v|) was 40-80x looser for
/// lengths and midpoints, and within 1.1x of the inverse Jacobian's error on small elements).
const GEOMETRY_ROUNDINGS: f64 = 8.0;

/// What f32 geometry can give, absolute (`length` 1) or relative to a quantity from vertex
/// differences over `length`: GEOMETRY_ROUNDINGS ε (1 + `extent`) / `length`.
fn geometry_tol(extent: f64, length: f64) -> f64 {
    GEOMETRY_ROUNDINGS * f64::from(f32::EPSILON) * (1.0 + extent) / length
}

/// |a - b| <= tol, elementwise (`what` names the values in the error).
fn within(a: &[f64], b: &[f64], tol: f64, what: impl Fn() -> String) -> Result<()> {
    for (i, (x, y)) in a.iter().zip(b).enumerate() {
        ensure((x - y).abs() <= tol, || {
            format!(
                "{}[{i}]: device {x}, reference {y}, tolerance {tol:.3e}",
                what()
            )
        })?;
    }
    Ok(())
}

/// The device's faces `got` against the reference's `want` in the same order (`order` names
/// it): nodes and sides exact, geometry to [`geometry_tol`] of the face's ends (at most its
/// half length from its midpoint): length and midpoint absolute, the normal over the length.
fn check_faces(got: &[DgEdge], want: &[DgEdge], order: &str) -> Result<()> {
    for (j, (g, w)) in got.iter().zip(want).enumerate() {
        ensure(
            (g.left, g.right, g.info) == (w.left, w.right, w.info),
            || format!("face {j} in {order}: device {g:?}, reference {w:?}"),
        )?;
        let length = f64::from(w.length);
        let extent = f64::from(w.mx.abs().max(w.my.abs())) + 0.5 * length;
        within(
            &[g.length, g.mx, g.my].map(f64::from),
            &[w.length, w.mx, w.my].map(f64::from),
            geometry_tol(extent, 1.0),
            || format!("face {j} in {order}: length and midpoint"),
        )?;
        within(
            &[g.nx, g.ny].map(f64::from),
            &[w.nx, w.ny].map(f64::from),
            geometry_tol(extent, length),
            || format!("face {j} in {order}: normal"),
        )?;
    }
    Ok(())
}

/// The device's mesh buffers against those the host builds from the reference's DG mesh: the
/// faces in color order where the solver keeps it ([`GpuDg::color_order`]), and in
/// left-element order always.
pub fn check_mesh_buffers(rt: &Runtime, dg: &GpuDg, dm: &DgMesh) -> Result<()> {
    let (_, [inv_jac, inv_det, heights, neighbors, edges]) = dg.device_buffers();
    let ne = dm.num_elements;
    let cap = dg.capacity().elements;
    let by_left: Vec<DgEdge> = rt.read(dg.edges_by_left(), 0, dm.edges.len())?;
    if dg.color_order() {
        let got: Vec<DgEdge> = rt.read(edges, 0, dm.edges.len())?;
        check_faces(&got, &dm.gpu_edges(), "color order")?;
        // dg_flux's copy: the same records, bit for bit, in left-element order.
        let want = edges_by_left(&got);
        let bits = |e: &DgEdge| bytemuck::bytes_of(e).to_vec();
        if let Some(j) = (0..want.len()).find(|&j| bits(&by_left[j]) != bits(&want[j])) {
            return Err(Error::Run(format!(
                "face {j} in left-element order: device {:?}, the device's faces sorted {:?}",
                by_left[j], want[j]
            )));
        }
    } else {
        check_faces(
            &by_left,
            &edges_by_left(&dm.gpu_edges()),
            "left-element order",
        )?;
    }
    let jac: Vec<[f32; 4]> = rt.read(inv_jac, 0, ne)?;
    let idet: Vec<f32> = rt.read(inv_det, 0, ne)?;
    let h: Vec<f32> = rt.read(heights, 0, ne)?;
    // Each element's geometry to geometry_tol of its vertices: the height absolute, the inverse
    // Jacobian (relative to its largest entry) and 1/det J over the height.
    let max_abs = |v: &[f64]| v.iter().fold(0.0f64, |m, x| m.max(x.abs()));
    for i in 0..ne {
        let extent = max_abs(dm.vertices[i].as_flattened());
        let height = dm.min_height[i];
        let relative = geometry_tol(extent, height);
        let scale = max_abs(&dm.inv_jacobian[i]);
        within(
            &jac[i].map(f64::from),
            &dm.inv_jacobian[i],
            relative * scale,
            || format!("element {i}: inverse Jacobian"),
        )?;
        let inv_det = 1.0 / dm.det[i];
        within(
            &[f64::from(idet[i])],
            &[inv_det],
            relative * inv_det.abs(),
            || format!("element {i}: 1/det J"),
        )?;
        within(
            &[f64::from(h[i])],
            &[height],
            geometry_tol(extent, 1.0),
            || format!("element {i}: height"),
        )?;
    }
    let nb: Vec<[u32; 4]> = rt.read(neighbors, 0, 2 * cap)?;
    let id = |o: Option<usize>| o.map_or(NO_ELEMENT, |v| v as u32);
    for i in 0..ne {
        let n = &dm.neighbors[i];
        let split = (0..3)
            .filter(|&j| n[j + 3].is_some())
            .fold(0, |m, j| m | 1 << j);
        let want = (
            [id(n[0]), id(n[1]), id(n[2]), split],
            [id(n[3]), id(n[4]), id(n[5])],
        );
        ensure(nb[i] == want.0 && nb[cap + i][..3] == want.1, || {
            format!(
                "element {i}: neighbours {:?} {:?}, reference {want:?}",
                nb[i],
                nb[cap + i]
            )
        })?;
    }
    Ok(())
}

/// What the device-adaptation checks start from: a smooth state on `base` (3 levels) at
/// order `p`, a solver with room for the rounds without growing (the flags refine one element
/// in five), and its device adaptation.
pub(super) struct AdaptFixture {
    pub tables: BasisTables,
    pub proj: Projection,
    pub am: AdaptiveMesh,
    pub coef: Vec<Vec<State>>,
    pub dm: DgMesh,
    pub cfg: GpuConfig,
    pub dg: GpuDg,
    pub ga: GpuAdaptation,
}

pub(super) fn adapt_fixture(rt: &Runtime, base: &DgMesh, p: usize) -> Result<AdaptFixture> {
    adapt_fixture_with(rt, base, p, AdaptSetup::default())
}

/// How a check's device adaptation is set up.
#[derive(Clone, Copy, Debug)]
pub(super) struct AdaptSetup {
    /// How it closes its holes.
    pub compaction: Compaction,
    /// How its smoothing applies the 2:1 rules.
    pub smoothing: SmoothingPasses,
    /// Whether it writes the faces in color order too: the solver in the colored layout, else in
    /// the gathered one ([`crate::solver::dg::amr::gpu::writes_color_order`]).
    pub color_order: bool,
    /// Room for this many times the elements (slots and tree ids) without growing.
    pub room: usize,
}

impl Default for AdaptSetup {
    fn default() -> AdaptSetup {
        AdaptSetup {
            compaction: Compaction::default(),
            smoothing: SmoothingPasses::Stages,
            color_order: true,
            room: 16,
        }
    }
}

/// [`adapt_fixture`] set up by `setup`.
pub(super) fn adapt_fixture_with(
    rt: &Runtime,
    base: &DgMesh,
    p: usize,
    setup: AdaptSetup,
) -> Result<AdaptFixture> {
    let mut am = AdaptiveMesh::new(base, 3)?;
    am.compaction = setup.compaction;
    let grown = am.num_active() * setup.room;
    let ne = slots_needed(grown, grown / 4);
    fixture_with_slots(
        rt,
        am,
        p,
        ne,
        setup.room,
        setup.smoothing,
        setup.color_order,
    )
}

/// [`adapt_fixture`] on the adaptive mesh `am` as it stands, whose smoothing applies the 2:1
/// rules by `smoothing`.
fn adapt_fixture_smoothed(
    rt: &Runtime,
    am: AdaptiveMesh,
    p: usize,
    smoothing: SmoothingPasses,
) -> Result<AdaptFixture> {
    // Room for the rounds without growing (the flags refine one element in five).
    let grown = am.num_active() * 16;
    fixture_with_slots(
        rt,
        am,
        p,
        slots_needed(grown, grown / 4),
        16,
        smoothing,
        true,
    )
}

/// [`adapt_fixture_smoothed`] with a solver of `ne` element slots (tree ids for `room` times
/// the elements), in the gathered layout without the color order unless `color_order`.
fn fixture_with_slots(
    rt: &Runtime,
    am: AdaptiveMesh,
    p: usize,
    ne: usize,
    room: usize,
    smoothing: SmoothingPasses,
    color_order: bool,
) -> Result<AdaptFixture> {
    let tables = BasisTables::new(p);
    let proj = Projection::new(p);
    let coef = smooth_state(&am, &tables);
    let grown = am.num_active() * room;
    let dm = am.dg_mesh()?;
    let cfg = config(NumericalFlux::Hllc, true, vortex());
    let capacity = Capacity {
        elements: ne,
        edges: 3 * ne,
    };
    let mut dg = GpuDg::with_capacity(rt, &dm, &tables, &cfg, capacity)?;
    if !color_order {
        dg.set_surface(SurfaceLayout::Gathered)?;
    }
    dg.set_solution(&scatter(&coef, tables.np))?;
    let tree = TreeCapacity::with_room(grown, am.element_ids(), am.edge_ids(), 2.0);
    let options = GpuAdaptOptions {
        field: IndicatorField::Density,
        threshold: 1.0,
        delta: 2.0,
        jumps: false,
        smoothing,
        host_flags: true,
    };
    let ga = GpuAdaptation::new(rt, &am, &dg, &dm.color_offsets, p, options, tree)?;
    Ok(AdaptFixture {
        tables,
        proj,
        am,
        coef,
        dm,
        cfg,
        dg,
        ga,
    })
}

/// `base` on trees of 7 levels refined six times toward `point` (the element nearest it, its
/// flag smoothed each time), and of its finest elements the one whose refinement forces raises
/// down the most levels (GK19's ripple): the mesh, the flags that refine that element alone,
/// and the lowest level they raise once smoothed.
pub fn graded_ripple(base: &DgMesh, point: [f64; 2]) -> Result<(AdaptiveMesh, Vec<i8>, u8)> {
    let proj = Projection::new(0);
    let mut am = AdaptiveMesh::new(base, 7)?;
    let mut coef = vec![vec![[1.0; 4]]; am.num_active()];
    let distance = |am: &AdaptiveMesh, pos: usize| {
        let v = am.vertices(pos);
        let c = [0, 1].map(|k| (v[0][k] + v[1][k] + v[2][k]) / 3.0);
        (c[0] - point[0]).hypot(c[1] - point[1])
    };
    for _ in 0..6 {
        let faces = am.faces()?;
        let nearest = (0..am.num_active())
            .min_by(|&a, &b| distance(&am, a).total_cmp(&distance(&am, b)))
            .ok_or_else(|| Error::Invalid("graded_ripple: an empty mesh".into()))?;
        let mut f = vec![0; am.num_active()];
        f[nearest] = 1;
        am.smooth_flags(&faces, &mut f);
        am.adapt(&f, &mut coef, &proj)?;
    }
    let faces = am.faces()?;
    let ripple = |pos: usize| {
        let mut start = vec![0; am.num_active()];
        start[pos] = 1;
        let mut smoothed = start.clone();
        am.smooth_flags(&faces, &mut smoothed);
        let lowest = (0..start.len())
            .filter(|&j| smoothed[j] > start[j])
            .map(|j| am.level(j))
            .min()
            .unwrap_or(u8::MAX);
        (lowest, start)
    };
    let (lowest, start) = (0..am.num_active())
        .filter(|&pos| am.level(pos) == 6)
        .map(ripple)
        .min_by_key(|r| r.0)
        .ok_or_else(|| Error::Run("graded_ripple: no element at level 6".into()))?;
    Ok((am, start, lowest))
}

/// The smoothings the device checks run: the stages by level, the rounds, and the rounds with
/// queues of none (every rise handed to the last workgroup, whose lists then settle it).
const SMOOTHINGS: [SmoothingPasses; 3] = [
    SmoothingPasses::Stages,
    SmoothingPasses::Rounds {
        queue_slots: QUEUE_SLOTS,
    },
    SmoothingPasses::Rounds { queue_slots: 0 },
];

/// The device's smoothing of [`graded_ripple`]'s flags on the periodic mesh: a chain of raises
/// five links long (a = 7 -> .. -> 2), against the ordered smoothing's flags and the CPU twins'
/// (stages and rounds), by every one of `SMOOTHINGS`: the stages a level a stage, in as many
/// stages as the host's twin, the rounds with every raised slot handed off when the queues take
/// none.
pub fn device_ripple(rt: &Runtime) -> Result<String> {
    let (am, start, lowest) = graded_ripple(&periodic_mesh()?, [0.02, 0.5])?;
    ensure(lowest <= 1, || {
        format!("the ripple reaches level {lowest} only, not 1: too short to test the stages")
    })?;
    let faces = am.faces()?;
    let mut want = start.clone();
    am.smooth_flags(&faces, &mut want);
    let mut staged = start.clone();
    let stages = am.smooth_flags_in_stages(&faces, &mut staged);
    let mut in_rounds = start.clone();
    am.smooth_flags_in_rounds(&faces, &mut in_rounds, QUEUE_SLOTS);
    ensure(staged == want && in_rounds == want, || {
        "the CPU twins' stages or rounds give other flags".into()
    })?;
    let raised = (0..start.len()).filter(|&j| want[j] > start[j]).count();
    let mut handed = Vec::new();
    for smoothing in SMOOTHINGS {
        let fixture = adapt_fixture_smoothed(rt, am.clone(), 1, smoothing)?;
        fixture.ga.set_flags(&start)?;
        let smoothed = fixture.ga.smooth(None)?;
        ensure(fixture.ga.read_flags()? == want, || {
            format!("{smoothing}: the device's smoothed flags differ from the reference's")
        })?;
        match smoothing {
            SmoothingPasses::Stages => ensure(smoothed.stages == stages, || {
                format!(
                    "{} stages on the device, {stages} on the host",
                    smoothed.stages
                )
            })?,
            // Queues of none hand off every slot that rises, each at least once.
            SmoothingPasses::Rounds { queue_slots } => {
                ensure(queue_slots > 0 || smoothed.handed_off >= raised, || {
                    format!(
                        "queues of none: {} slots handed off, {raised} raised",
                        smoothed.handed_off
                    )
                })?;
                handed.push(smoothed.handed_off);
            }
        }
    }
    Ok(format!(
        "{} elements, {raised} raised down to level {lowest}: in {stages} stages; in rounds, \
         handed off {} with queues of {QUEUE_SLOTS} and {} with none",
        start.len(),
        handed[0],
        handed[1]
    ))
}

/// The device's smoothing of pseudo-random flags, most of them -1 (so that raises lift whole
/// clusters) and some +1, on [`graded_ripple`]'s mesh of seven levels, against the ordered
/// smoothing's flags: raises and lifts at every level, where the ripple check raises along one
/// chain and the adaptations' flags seldom flag a whole cluster -1; by every one of
/// `SMOOTHINGS`.
pub fn device_graded_smoothing(rt: &Runtime) -> Result<String> {
    const FLAG_SETS: usize = 24;
    let (am, _, _) = graded_ripple(&periodic_mesh()?, [0.02, 0.5])?;
    let faces = am.faces()?;
    let n = am.num_active();
    let (mut raised, mut kept, mut handed) = (0, 0, 0);
    for smoothing in SMOOTHINGS {
        let fixture = adapt_fixture_smoothed(rt, am.clone(), 1, smoothing)?;
        let mut seed = 7u64;
        for set in 0..FLAG_SETS {
            // +1 one time in twenty, -1 seventeen times in twenty.
            let start = weighted_flags(n, &mut seed, [1, 17, 20]);
            let mut want = start.clone();
            am.smooth_flags(&faces, &mut want);
            fixture.ga.set_flags(&start)?;
            let smoothed = fixture.ga.smooth(None)?;
            let got = fixture.ga.read_flags()?;
            ensure(got == want, || {
                let j = (0..n).find(|&j| got[j] != want[j]).unwrap_or(0);
                format!(
                    "{smoothing}, flag set {set}: slot {j} (level {}) smoothed to {} on the \
                     device, {} by the reference",
                    am.level(j),
                    got[j],
                    want[j]
                )
            })?;
            match smoothing {
                SmoothingPasses::Stages => {
                    raised += (0..n).filter(|&j| want[j] > 0 && start[j] <= 0).count();
                    kept += (0..n).filter(|&j| want[j] == 0 && start[j] < 0).count();
                }
                SmoothingPasses::Rounds { queue_slots: 0 } => handed += smoothed.handed_off,
                SmoothingPasses::Rounds { .. } => {}
            }
        }
    }
    // A flag raised to +1 from 0 or -1 rose in amr_settle: with queues of none, it was handed off.
    ensure(handed >= raised, || {
        format!("queues of none: {handed} slots handed off, {raised} raised to refine")
    })?;
    Ok(format!(
        "{n} elements, {FLAG_SETS} flag sets: {raised} raised to refine, {kept} kept from \
         coarsening; {handed} slots handed off by the rounds with queues of none"
    ))
}

/// `rounds` adaptations by pseudo-random flags of a smooth state on `base` at order `p`, then
/// one by flags that change nothing, one by flags that only coarsen and one more by
/// pseudo-random flags, on the device (set up by `setup`) and by the reference, both closing
/// their holes by its compaction, compared after each; a summary and the most elements an
/// adaptation left, or the first mismatch as an error.
pub(super) fn device_adaptation(
    rt: &Runtime,
    base: &DgMesh,
    p: usize,
    rounds: usize,
    seed: u64,
    setup: AdaptSetup,
) -> Result<(String, usize)> {
    let color_order = setup.color_order;
    let AdaptFixture {
        tables,
        proj,
        mut am,
        mut coef,
        dm: _,
        cfg,
        mut dg,
        ga,
    } = adapt_fixture_with(rt, base, p, setup)?;
    let mut seed = seed;
    let (mut refined, mut coarsened, mut most) = (0, 0, 0);
    for round in 0..rounds + 3 {
        let faces = am.faces()?;
        // The random rounds, then one whose flags change nothing (the device stops after its
        // smoothing), one that only coarsens (it must not stop there) and a random one on the
        // fewer slots it leaves (the marks of the slots it emptied, which amr_scan reads in the
        // block of the last active one, must not count).
        let raw = match round.checked_sub(rounds) {
            None | Some(2) => rand_flags(am.num_active(), &mut seed),
            Some(0) => vec![0; am.num_active()],
            Some(_) => vec![-1; am.num_active()],
        };
        let mut want_flags = raw.clone();
        am.smooth_flags(&faces, &mut want_flags);
        // The device runs the rounds of the CPU twin, whose flags are the ordered smoothing's.
        let mut in_rounds = raw.clone();
        am.smooth_flags_in_rounds(&faces, &mut in_rounds, QUEUE_SLOTS);
        ensure(in_rounds == want_flags, || {
            format!("round {round}: the smoothing in rounds gives other flags")
        })?;
        ga.set_flags(&raw)?;
        let smoothed = ga.smooth(None)?;
        ensure(ga.has_room(&smoothed), || {
            format!("round {round}: no room left")
        })?;
        ensure(ga.read_flags()? == want_flags, || {
            format!("round {round}: smoothed flags differ")
        })?;
        let lo_rows = 4 * tables.np * dg.capacity().elements;
        let before = (am.to_flat(), rt.read::<f32>(dg.low_words(), 0, lo_rows)?);
        let counts = am.adapt(&want_flags, &mut coef, &proj)?;
        match round.checked_sub(rounds) {
            None | Some(2) => {}
            Some(0) => ensure(counts == Default::default(), || {
                format!("round {round}: flags of 0 adapted the reference: {counts:?}")
            })?,
            Some(_) => ensure(counts.refined == 0 && counts.coarsened > 0, || {
                format!("round {round}: flags of -1 should only coarsen: {counts:?}")
            })?,
        }
        refined += counts.refined;
        coarsened += counts.coarsened;
        most = most.max(am.num_active());
        let report = ga.apply(&mut dg, &smoothed, None)?;
        ensure(
            report.counts == counts && report.num_elements == am.num_active(),
            || format!("round {round}: device {report:?}, reference {counts:?}"),
        )?;
        let (mut got, mut want) = (ga.download()?.to_flat(), am.to_flat());
        for (g, w) in got.element_vertices.iter().zip(&want.element_vertices) {
            close(g.as_flattened(), w.as_flattened(), 1e-6, "vertices")?;
        }
        ensure(got.edge_tree.len() == want.edge_tree.len(), || {
            format!(
                "round {round}: {} edge ids, reference {}",
                got.edge_tree.len(),
                want.edge_tree.len()
            )
        })?;
        // Freed ids keep what they held; compare every edge's flags and the live edges whole.
        for (e, (g, w)) in got.edge_tree.iter().zip(&want.edge_tree).enumerate() {
            let live = w[0] & EDGE_ALIVE_BIT != 0;
            ensure(
                g[0] == w[0] && (!live || (g == w && got.edge_sides[e] == want.edge_sides[e])),
                || format!("round {round}: edge {e}: device {g:?}, reference {w:?}"),
            )?;
        }
        for flat in [&mut got, &mut want] {
            flat.element_vertices.clear();
            flat.edge_tree.clear();
            flat.edge_sides.clear();
        }
        ensure(got == want, || {
            format!("round {round}: element trees, slots or free rings differ")
        })?;
        let state = scatter(&coef, tables.np);
        close(&dg.read_state()?, &state, 2e-5, "coefficients")?;
        // Register 0's low words (the fixture's solution has them): a low word left under
        // another element's high word, or kept under a projection, is an error of f32
        // round-off, within the tolerance above, so they are checked word for word.
        let after = (am.to_flat(), rt.read::<f32>(dg.low_words(), 0, lo_rows)?);
        let kept = check_low_words(&before, &after, dg.capacity().elements)
            .map_err(|e| Error::Run(format!("round {round}: {e}")))?;
        ensure(kept > 0, || {
            format!("round {round}: no element kept its low words")
        })?;
        let dm = am.dg_mesh()?;
        check_mesh_buffers(rt, &dg, &dm)?;
        // The solver's launches follow the device's records: they equal the reference mesh's,
        // and the rhs through them equals the f64 operator's on it.
        let records: Vec<u32> = rt.read_all(dg.launch_words())?;
        let want = adapted_launch_records(&dm, dg.nodes_per_face(), color_order);
        ensure(records == want, || {
            format!("round {round}: launch records {records:?}")
        })?;
        let op = operator(&dm, &tables, &cfg);
        let mut cpu = vec![0.0; op.ndof()];
        op.rhs(&state, 0.25, &mut cpu);
        let err = max_rel(&dg.eval_rhs(&state, 0.25)?, &cpu);
        ensure(err < 5e-5, || {
            format!("round {round}: rhs through the device's launch records off by rel {err:e}")
        })?;
        // The gathered layout on the same records (where the rhs above was the colored
        // one's): the faces in the order the device wrote them, the halves of split sides
        // lifted.
        if color_order {
            dg.set_surface(SurfaceLayout::Gathered)?;
            let err = max_rel(&dg.eval_rhs(&state, 0.25)?, &cpu);
            dg.set_surface(SurfaceLayout::Colored)?;
            ensure(err < 5e-5, || {
                format!(
                    "round {round}: gathered rhs through the device's records off by rel {err:e}"
                )
            })?;
        }
        // Last, as a restart would: the solver moved onto the mesh from the host, then the
        // device's words put back (it leaves the solver on the host's records).
        if round == rounds + 2 {
            check_restored_faces(rt, &mut dg, &dm, &state)
                .map_err(|e| Error::Run(format!("round {round}: {e}")))?;
        }
    }
    ensure(refined > 0 && coarsened > 0, || {
        format!("{refined} refined and {coarsened} coarsened: the rounds should do both")
    })?;
    let summary = format!(
        "{rounds} random rounds, one of no change, one of coarsening only and a random one \
         equal ({refined} refined, {coarsened} coarsened, {} elements, at most {most}); mesh \
         words restored from faces reversed",
        am.num_active()
    );
    Ok((summary, most))
}

/// A checkpoint's restore of the device's mesh words ([`GpuDg::mesh_words`]) with the faces in
/// another order (reversed; checkpoints before 2026-11-30 hold the color order), on the
/// solver `dg` moved onto the reference's mesh `dm` with solution `state` as a restart does:
/// the faces in left-element order come back bit for bit, and in color order each device
/// record takes the place of the reference's face with the same left element and side. A
/// solver whose adaptation wrote the left-element order only refuses the colored layout before
/// and takes it after.
fn check_restored_faces(rt: &Runtime, dg: &mut GpuDg, dm: &DgMesh, state: &[f64]) -> Result<()> {
    let faces = dm.edges.len();
    if !dg.color_order() {
        ensure(dg.set_surface(SurfaceLayout::Colored).is_err(), || {
            "the colored layout was taken on faces in left-element order only".into()
        })?;
    }
    let mut words = dg.mesh_words(faces)?;
    let by_left: Vec<DgEdge> = rt.read(dg.edges_by_left(), 0, faces)?;
    let at = words.len() - faces * std::mem::size_of::<DgEdge>() / 4;
    let reversed: Vec<u32> = words[at..]
        .chunks(std::mem::size_of::<DgEdge>() / 4)
        .rev()
        .flatten()
        .copied()
        .collect();
    words[at..].copy_from_slice(&reversed);
    dg.remesh(dm, state)?;
    dg.set_mesh_words(faces, &words)?;
    let bits = |e: &DgEdge| bytemuck::bytes_of(e).to_vec();
    let restored: Vec<DgEdge> = rt.read(dg.edges_by_left(), 0, faces)?;
    if let Some(j) = (0..faces).find(|&j| bits(&restored[j]) != bits(&by_left[j])) {
        return Err(Error::Run(format!(
            "restored face {j} in left-element order: {:?}, the device's {:?}",
            restored[j], by_left[j]
        )));
    }
    let (_, [.., edges]) = dg.device_buffers();
    let colored: Vec<DgEdge> = rt.read(edges, 0, faces)?;
    // A face is its left element's local side (the finer side is the left one, so the two
    // halves of a split side have distinct left elements).
    let key = |e: &DgEdge| (e.left, e.info & 3);
    let device_faces: std::collections::HashMap<_, _> =
        by_left.iter().map(|d| (key(d), d)).collect();
    ensure(device_faces.len() == faces, || {
        format!(
            "{} of the device's {faces} faces share a left element and side",
            faces - device_faces.len()
        )
    })?;
    for (j, (g, w)) in colored.iter().zip(dm.gpu_edges()).enumerate() {
        let device = device_faces.get(&key(&w));
        ensure(device.is_some_and(|d| bits(d) == bits(g)), || {
            format!("restored face {j} in color order: {g:?}, the device's {device:?}")
        })?;
    }
    ensure(dg.color_order(), || {
        "the color order is not current after the restore".into()
    })?;
    let layout = dg.surface_layout();
    dg.set_surface(SurfaceLayout::Colored)?;
    dg.set_surface(layout)
}

/// Register 0's low words after an adaptation (`after`: the reference's trees and the device's
/// low words, 4 np rows of `ne` slots) against those before it: an element active before with
/// the same vertices (untouched, perhaps moved by the compaction) has the words of its old slot
/// bit for bit; an element the adaptation made (a coarsened parent, a refined child) and every
/// slot past the active count have zeros. The count of elements that kept theirs, or the
/// first slot that breaks the rule.
pub fn check_low_words(
    (tree_before, low_before): &(FlatTree, Vec<f32>),
    (tree_after, low_after): &(FlatTree, Vec<f32>),
    ne: usize,
) -> Result<usize> {
    let rows = low_after.len() / ne;
    let mut old_slot = vec![usize::MAX; tree_before.element_tree.len()];
    for (q, &id) in tree_before.slots.iter().enumerate() {
        if let Some(s) = old_slot.get_mut(id as usize) {
            *s = q;
        }
    }
    let mut kept = 0;
    for p in 0..ne {
        let id = tree_after.slots.get(p).copied().unwrap_or(NO_SLOT) as usize;
        let from = old_slot.get(id).copied().filter(|&q| {
            q != usize::MAX && tree_before.element_vertices[id] == tree_after.element_vertices[id]
        });
        kept += usize::from(from.is_some());
        for j in 0..rows {
            let want = from.map_or(0.0, |q| low_before[j * ne + q]);
            let got = low_after[j * ne + p];
            if got.to_bits() != want.to_bits() {
                return Err(Error::Run(format!(
                    "slot {p} (element {id}), row {j}: low word {got:e}, want {want:e} ({})",
                    match from {
                        Some(q) => format!("kept from slot {q}"),
                        None => "a new element or a free slot: zero".into(),
                    }
                )));
            }
        }
    }
    Ok(kept)
}

/// The device's flags of a smooth state on a two-level mesh, each indicator field, and density
/// and pressure with the jump term (hanging faces included), with the median as threshold and
/// delta 1.25 (so many elements refine and coarsen), against the reference's (elements within
/// 1e-4 of a limit excepted).
pub fn device_flags(rt: &Runtime) -> Result<String> {
    let p = 2;
    let tables = BasisTables::new(p);
    let mut am = AdaptiveMesh::new(&all_boundaries(Ordering::Original)?, 2)?;
    let proj = Projection::new(p);
    let mut coef = smooth_state(&am, &tables);
    let mut seed = 3;
    let faces = am.faces()?;
    let mut f: Vec<i8> = rand_flags(am.num_active(), &mut seed)
        .iter()
        .map(|&x| x.max(0))
        .collect();
    am.smooth_flags(&faces, &mut f);
    am.adapt(&f, &mut coef, &proj)?;
    let dm = am.dg_mesh()?;
    let n = am.num_active();
    let cfg = config(NumericalFlux::Hllc, false, vortex());
    let capacity = Capacity {
        elements: n,
        edges: 3 * n,
    };
    let dg = GpuDg::with_capacity(rt, &dm, &tables, &cfg, capacity)?;
    dg.set_solution(&scatter(&coef, tables.np))?;
    let mut compared = 0;
    let cases = [
        (IndicatorField::Density, false),
        (IndicatorField::Pressure, false),
        (IndicatorField::Energy, false),
        (IndicatorField::Density, true),
        (IndicatorField::Pressure, true),
    ];
    for (field, with_jumps) in cases {
        let mut eps = indicator(&tables, field, &coef, |i| {
            (dm.inv_jacobian[i], dm.min_height[i])
        });
        if with_jumps {
            let jump = jumps(field, &coef, &dm.neighbors);
            eps.iter_mut().zip(jump).for_each(|(e, j)| *e += j);
        }
        let mut sorted = eps.clone();
        sorted.sort_by(f64::total_cmp);
        let (threshold, delta) = (sorted[n / 2], 1.25);
        let options = GpuAdaptOptions {
            field,
            threshold,
            delta,
            jumps: with_jumps,
            smoothing: SmoothingPasses::Stages,
            host_flags: true,
        };
        let tree = TreeCapacity::with_room(n, am.element_ids(), am.edge_ids(), 1.0);
        let ga = GpuAdaptation::new(rt, &am, &dg, &dm.color_offsets, p, options, tree)?;
        ga.compute_flags(None)?;
        let got = ga.read_flags()?;
        let want = flags(&eps, threshold, delta);
        let (mut refine, mut coarsen) = (0, 0);
        for i in 0..n {
            let near = [threshold * delta, threshold / delta]
                .iter()
                .any(|&t| (eps[i] - t).abs() <= 1e-4 * t);
            ensure(near || got[i] == want[i], || {
                format!(
                    "{field:?} (jumps {with_jumps}): element {i} (eps {}) flagged {}, \
                     reference {}",
                    eps[i], got[i], want[i]
                )
            })?;
            compared += usize::from(!near);
            refine += usize::from(want[i] > 0);
            coarsen += usize::from(want[i] < 0);
        }
        ensure(refine > n / 10 && coarsen > n / 10, || {
            format!("{field:?}: {refine} refined and {coarsen} coarsened of {n}: a weak test")
        })?;
        // A run's smoothing computes the flags in its pass 0 (a launch less): the same
        // smoothed flags as amr_flag's flags smoothed.
        ga.smooth(None)?;
        let smoothed = ga.read_flags()?;
        ga.flag_and_smooth(None)?;
        ensure(ga.read_flags()? == smoothed, || {
            format!("{field:?} (jumps {with_jumps}): pass 0's own flags smooth otherwise")
        })?;
        ensure(smoothed.iter().any(|&f| f < 0), || {
            format!("{field:?}: no -1 left by the smoothing: a weak test of pass 0's siblings")
        })?;
    }
    Ok(format!(
        "{compared} flags equal over 3 fields, 2 with the jump term; smoothed the same from \
         pass 0's own flags"
    ))
}
