//! The device reorder (`amr_radix`, `amr_permute`) against its exact CPU reference
//! ([`crate::solver::dg::amr::reorder`]), interleaved with device adaptations that go on
//! matching the f64 reference on the reordered layout.

use super::amr::{adapt_fixture_with, check_mesh_buffers, rand_flags, AdaptFixture, AdaptSetup};
use super::dg::{max_rel, operator};
use super::Report;
use crate::error::{Error, Result};
use crate::mesh::NO_ELEMENT;
use crate::runtime::Runtime;
use crate::solver::dg::amr::reorder::{
    far_faces, morton_keys, permute_tree, radix_order, GpuReorder, MortonFrame,
};
use crate::solver::dg::amr::{scatter, AdaptiveMesh};
use crate::solver::dg::gpu::{adapted_launch_records, edges_by_left, GpuDg};
use crate::solver::dg::mesh::DgEdge;
use crate::solver::dg::DgMesh;

/// The checks of [`crate::conformance::run_all`] on backend `b`.
pub fn reorder(report: &mut Report, b: &Runtime) {
    let cases = [
        (
            "all boundary kinds",
            super::dg::all_boundaries(crate::order::Ordering::Original),
            2,
            4,
            5,
        ),
        ("periodic", super::dg::periodic_mesh(), 1, 4, 23),
    ];
    for (label, base, p, rounds, seed) in cases {
        let name = format!("amr device reorder = exact reference ({label}) p={p}, {rounds} rounds");
        report.check(&name, b.kind(), "bit for bit", || {
            let base = base?;
            Ok((device_reorder(b, &base, p, rounds, seed, true)?, true))
        });
    }
    // A run's: the gathered layout, whose adaptations write the faces in left-element order
    // only, which the reorder then reads.
    report.check(
        "amr device reorder = exact reference (periodic, faces in left-element order only) p=1, \
         3 rounds",
        b.kind(),
        "bit for bit",
        || {
            let base = super::dg::periodic_mesh()?;
            Ok((device_reorder(b, &base, 1, 3, 43, false)?, true))
        },
    );
}

fn ensure(ok: bool, what: impl FnOnce() -> String) -> Result<()> {
    if ok {
        Ok(())
    } else {
        Err(Error::Run(what()))
    }
}

/// Integral of the density: sum_i (det J_i / 2) sqrt(2) c_{rho,0,i} with `c[eq][k][i]`.
pub fn mass(dm: &DgMesh, c: &[f64]) -> f64 {
    (0..dm.num_elements)
        .map(|i| dm.det[i] / 2.0 * std::f64::consts::SQRT_2 * c[i])
        .sum()
}

/// The mesh invariants after a reorder: at most 2K colors, no element with two faces of one
/// color, the 2:1 rule across every face (a half face joins levels l + 1 and l).
pub fn check_invariants(am: &AdaptiveMesh) -> Result<()> {
    let n = am.num_active();
    let mut seen: Vec<u64> = vec![0; n];
    for f in am.faces()? {
        ensure(f.color < 2 * am.base_colors, || {
            format!("face color {} of {} base colors", f.color, am.base_colors)
        })?;
        let bit = 1u64 << f.color;
        for e in [f.left, f.right] {
            if e != crate::solver::dg::amr::NONE {
                ensure(seen[e as usize] & bit == 0, || {
                    format!("element {e} has two faces of color {}", f.color)
                })?;
                seen[e as usize] |= bit;
            }
        }
        if f.right != crate::solver::dg::amr::NONE {
            let (l, r) = (am.level(f.left as usize), am.level(f.right as usize));
            let want = if f.right_half == 0 { r } else { r + 1 };
            ensure(l == want, || {
                format!(
                    "face {}|{} half {} joins levels {l} and {r}",
                    f.left, f.right, f.right_half
                )
            })?;
        }
    }
    Ok(())
}

/// Slot `s` renamed by `new_of` ([`NO_ELEMENT`] stays).
fn renamed(s: u32, new_of: &[u32]) -> u32 {
    if s == NO_ELEMENT {
        s
    } else {
        new_of[s as usize]
    }
}

/// What the device's buffers must hold after a reorder by `order`, from what they held before:
/// per-slot words gathered, stored slots renamed, faces by color and left slot (where the
/// solver keeps the color order), and by left slot.
fn check_permuted_buffers(
    rt: &Runtime,
    dg: &GpuDg,
    before: &Snapshot,
    order: &[u32],
    color_offsets: &[usize],
) -> Result<()> {
    let after = Snapshot::take(rt, dg, before.by_left.len())?;
    let n = order.len();
    let mut new_of = vec![NO_ELEMENT; n];
    for (i, &o) in order.iter().enumerate() {
        new_of[o as usize] = i as u32;
    }
    let rows = before.state.len() / n;
    for (i, &o) in order.iter().enumerate() {
        let o = o as usize;
        for j in 0..rows {
            ensure(
                after.state[j * n + i].to_bits() == before.state[j * n + o].to_bits(),
                || format!("coefficient row {j} of new slot {i} (old {o}) differs"),
            )?;
        }
        ensure(after.geometry[i] == before.geometry[o], || {
            format!("geometry of new slot {i} (old {o}) differs")
        })?;
        let cap = after.neighbors.len() / 2;
        for b in 0..2 {
            let (g, w) = (after.neighbors[b * cap + i], before.neighbors[b * cap + o]);
            let want = [
                renamed(w[0], &new_of),
                renamed(w[1], &new_of),
                renamed(w[2], &new_of),
                w[3],
            ];
            ensure(g == want, || {
                format!("neighbour block {b} of new slot {i}: {g:?}, want {want:?}")
            })?;
        }
    }
    let rename = |faces: &[DgEdge]| -> Vec<DgEdge> {
        faces
            .iter()
            .map(|e| DgEdge {
                left: renamed(e.left, &new_of),
                right: renamed(e.right, &new_of),
                ..*e
            })
            .collect()
    };
    let same = |g: &DgEdge, w: &DgEdge| bytemuck::bytes_of(g) == bytemuck::bytes_of(w);
    if let (Some(faces_before), Some(faces_after)) = (&before.faces, &after.faces) {
        for c in 0..color_offsets.len() - 1 {
            let range = color_offsets[c]..color_offsets[c + 1];
            let want = edges_by_left(&rename(&faces_before[range.clone()]));
            for (k, (g, w)) in faces_after[range].iter().zip(&want).enumerate() {
                ensure(same(g, w), || {
                    format!("color {c} face {k}: {g:?}, want {w:?}")
                })?;
            }
        }
    }
    // A left slot's faces are consecutive (in color order), and keep their order renamed.
    let want = edges_by_left(&rename(&before.by_left));
    for (k, (g, w)) in after.by_left.iter().zip(&want).enumerate() {
        ensure(same(g, w), || {
            format!("face {k} in left-element order: {g:?}, want {w:?}")
        })?;
    }
    Ok(())
}

/// The solver's state and mesh buffers as words.
struct Snapshot {
    state: Vec<f64>,
    geometry: Vec<[u32; 6]>,
    neighbors: Vec<[u32; 4]>,
    /// In color order, where the solver keeps it ([`GpuDg::color_order`]).
    faces: Option<Vec<DgEdge>>,
    by_left: Vec<DgEdge>,
}

impl Snapshot {
    fn take(rt: &Runtime, dg: &GpuDg, faces: usize) -> Result<Snapshot> {
        let (_, [inv_jac, inv_det, heights, neighbors, edges]) = dg.device_buffers();
        let n = dg.num_elements;
        let jac: Vec<[f32; 4]> = rt.read(inv_jac, 0, n)?;
        let idet: Vec<f32> = rt.read(inv_det, 0, n)?;
        let h: Vec<f32> = rt.read(heights, 0, n)?;
        Ok(Snapshot {
            state: dg.read_state()?,
            geometry: (0..n)
                .map(|i| {
                    let j = jac[i].map(f32::to_bits);
                    [j[0], j[1], j[2], j[3], idet[i].to_bits(), h[i].to_bits()]
                })
                .collect(),
            neighbors: rt.read(neighbors, 0, 2 * dg.capacity().elements)?,
            faces: match dg.color_order() {
                true => Some(rt.read(edges, 0, faces)?),
                false => None,
            },
            by_left: rt.read(dg.edges_by_left(), 0, faces)?,
        })
    }
}

/// `rounds` device adaptations by pseudo-random flags of a smooth state on `base` at order `p`,
/// each followed by a device reorder: the keys, the order, the trees and every solver buffer
/// equal the exact CPU reference bit for bit; the reordered mesh keeps its invariants and its
/// mass; and the f64 reference, reordered the same way, goes on matching the device through
/// the next adaptation (trees id for id, coefficients to f32 round-off, mesh buffers). The
/// adaptations write the faces in color order too, or (`color_order` false, the solver in the
/// gathered layout) in left-element order only.
pub fn device_reorder(
    rt: &Runtime,
    base: &DgMesh,
    p: usize,
    rounds: usize,
    seed: u64,
    color_order: bool,
) -> Result<String> {
    let AdaptFixture {
        tables,
        proj,
        mut am,
        mut coef,
        dm,
        cfg,
        mut dg,
        ga,
    } = adapt_fixture_with(
        rt,
        base,
        p,
        AdaptSetup {
            color_order,
            ..AdaptSetup::default()
        },
    )?;
    let frame = MortonFrame::of(&am);
    let reorder = GpuReorder::new(rt, &ga, &dg, p, &frame)?;
    let mut seed = seed;
    ga.set_far_faces(far_faces(&dm))?;
    // The far faces and faces after the last reorder (or of the mesh uploaded): what the next
    // adaptation reports, one late.
    let mut last = (far_faces(&dm), dm.edges.len());
    let (mut moved, mut far_before, mut far_after, mut colors) = (0, 0, 0, 0);
    for round in 0..rounds {
        let faces = am.faces()?;
        let mut flags = rand_flags(am.num_active(), &mut seed);
        am.smooth_flags(&faces, &mut flags);
        ga.set_flags(&flags)?;
        let smoothed = ga.smooth(None)?;
        am.adapt(&flags, &mut coef, &proj)?;
        let report = ga.apply(&mut dg, &smoothed, None)?;
        let dm = am.dg_mesh()?;
        // The adaptation itself still matches (on the layout of the last reorder).
        check_mesh_buffers(rt, &dg, &dm)?;
        super::amr::close(
            &dg.read_state()?,
            &scatter(&coef, tables.np),
            2e-5,
            "coefficients after the adaptation",
        )?;
        // The report's counts come one adaptation late: the mesh the adaptation started from.
        ensure((report.far_faces, report.faces) == last, || {
            format!(
                "round {round}: the adaptation reports {} far of {} faces, the mesh it started \
                 from has {} of {}",
                report.far_faces, report.faces, last.0, last.1
            )
        })?;
        // The adapted mesh's counts, read from the device on purpose.
        let (faces_now, far_now) = ga.face_counts()?;
        ensure(
            far_now == far_faces(&dm) && faces_now == dm.edges.len(),
            || {
                format!(
                    "round {round}: device counts {far_now} far of {faces_now} faces, \
                     reference {} of {}",
                    far_faces(&dm),
                    dm.edges.len()
                )
            },
        )?;
        far_before += far_now;
        // The reorder, against the reference applied to the device's own trees and buffers.
        let flat = ga.download()?.to_flat();
        let before = Snapshot::take(rt, &dg, dm.edges.len())?;
        let mass_before = mass(&dm, &before.state);
        reorder.run(None)?;
        let keys = morton_keys(&flat, &frame);
        let order = radix_order(&keys);
        let (got_keys, got_order) = reorder.sorted(order.len())?;
        ensure(got_order == order, || {
            format!("round {round}: the device's Morton order differs")
        })?;
        ensure(
            got_keys
                .iter()
                .zip(&order)
                .all(|(&k, &o)| k == keys[o as usize]),
            || format!("round {round}: the device's sorted keys differ"),
        )?;
        ensure(
            ga.download()?.to_flat() == permute_tree(&flat, &order),
            || format!("round {round}: the reordered trees differ"),
        )?;
        check_permuted_buffers(rt, &dg, &before, &order, &dm.color_offsets)?;
        // The reference follows: the same function per element, the invariants, the mass.
        am = AdaptiveMesh::from_flat(
            &permute_tree(&am.to_flat(), &order),
            am.max_level,
            am.base_colors,
        )?;
        coef = order.iter().map(|&o| coef[o as usize].clone()).collect();
        let dm = am.dg_mesh()?;
        check_invariants(&am)?;
        // 2K colors: 6 on a 3-colored base mesh.
        ensure(dm.num_colors() <= 2 * base.num_colors(), || {
            format!(
                "round {round}: {} colors on a {}-colored base",
                dm.num_colors(),
                base.num_colors()
            )
        })?;
        colors = colors.max(dm.num_colors());
        check_mesh_buffers(rt, &dg, &dm)?;
        // The launch records amr_scan 2 wrote before the reorder stay right: the reorder keeps
        // the element count and each color's faces (sorted within their color), and the rhs
        // through them on the reordered buffers equals the f64 operator's.
        let records: Vec<u32> = rt.read_all(dg.launch_words())?;
        let want = adapted_launch_records(&dm, dg.nodes_per_face(), color_order);
        ensure(records == want, || {
            format!("round {round}: launch records {records:?} after the reorder")
        })?;
        let state = dg.read_state()?;
        let op = operator(&dm, &tables, &cfg);
        let mut cpu = vec![0.0; op.ndof()];
        op.rhs(&state, 0.25, &mut cpu);
        let err = max_rel(&dg.eval_rhs(&state, 0.25)?, &cpu);
        ensure(err < 5e-5, || {
            format!("round {round}: rhs after the reorder off by rel {err:e}")
        })?;
        let mass_after = mass(&dm, &state);
        ensure(
            (mass_after - mass_before).abs() <= 1e-12 * mass_before.abs(),
            || format!("round {round}: mass {mass_before} before the reorder, {mass_after} after"),
        )?;
        let far = reorder.far_faces()?;
        ensure(far == far_faces(&dm), || {
            format!(
                "round {round}: device counts {far} far faces after the reorder, reference {}",
                far_faces(&dm)
            )
        })?;
        far_after += far;
        last = (far, dm.edges.len());
        moved += order
            .iter()
            .enumerate()
            .filter(|(i, &o)| *i != o as usize)
            .count();
    }
    ensure(moved > 0, || {
        "the reorders moved no element: a weak test".into()
    })?;
    Ok(format!(
        "{rounds} rounds equal, {moved} slots moved, far faces {far_before} -> {far_after} ({} \
         elements, {colors} colors from {})",
        am.num_active(),
        base.num_colors()
    ))
}
