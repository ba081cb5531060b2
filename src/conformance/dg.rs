//! DG conformance: the Euler operator's GPU kernels against the f64 CPU operator.

use super::{ready, Report};
use crate::color::{color_faces, nonconforming, FaceColoringOptions};
use crate::error::{Error, Result};
use crate::mesh::{generate, Topology};
use crate::order::{apply_ordering, prepare, Ordering, PrepareOptions};
use crate::runtime::Runtime;
use crate::solver::dg::amr::{AdaptiveMesh, Projection};
use crate::solver::dg::cpu::run;
use crate::solver::dg::euler::{conserved, State};
use crate::solver::dg::gpu::{Capacity, GpuConfig, GpuDg, SurfaceLayout};
use crate::solver::dg::{BasisTables, BoundaryKind, DgMesh, NumericalFlux, Operator, StateFn};

/// Largest |a − b| relative to max |b| (infinite on NaN or a length mismatch).
pub(super) fn max_rel(a: &[f64], b: &[f64]) -> f64 {
    if a.len() != b.len() {
        return f64::INFINITY;
    }
    let scale = b.iter().fold(0.0f64, |m, v| m.max(v.abs())).max(1e-30);
    let mut worst = 0.0f64;
    for (x, y) in a.iter().zip(b) {
        let d = (x - y).abs() / scale;
        if !d.is_finite() {
            return f64::INFINITY;
        }
        worst = worst.max(d);
    }
    worst
}

/// The test mesh with every boundary kind: the unit square, 160 cells, one boundary tag each
/// of wall, outflow, inflow (state 0) and exact.
pub fn all_boundaries(ordering: Ordering) -> Result<DgMesh> {
    all_boundaries_of(160, ordering)
}

/// [`all_boundaries`] of about `cells` cells with its faces in `colors` colors instead of the
/// fewest (3): the adaptation's numbers then span 2 `colors` planes.
pub fn all_boundaries_colored(cells: usize, colors: usize) -> Result<DgMesh> {
    let mesh = generate::rectangle(0.0, 1.0, 0.0, 1.0, cells, 3)?;
    let topo = Topology::build(&mesh)?;
    let options = FaceColoringOptions {
        num_colors: Some(colors),
        ..FaceColoringOptions::with_seed(2)
    };
    let coloring = color_faces(&mesh, &topo, &options)?;
    if coloring.num_colors != colors || coloring.counts.contains(&0) {
        return Err(Error::Run(format!(
            "the test mesh's faces took {} colors ({:?} faces each), {colors} wanted",
            coloring.num_colors, coloring.counts
        )));
    }
    let om = apply_ordering(&mesh, &topo, &coloring, Ordering::Original)?;
    DgMesh::build(&om, &mixed_boundaries)
}

/// [`all_boundaries`] with about `cells` cells.
pub fn all_boundaries_of(cells: usize, ordering: Ordering) -> Result<DgMesh> {
    let mesh = generate::rectangle(0.0, 1.0, 0.0, 1.0, cells, 3)?;
    let om = prepare(&mesh, &PrepareOptions::new(ordering, 2))?;
    DgMesh::build(&om, &mixed_boundaries)
}

/// The periodic test mesh: the unit square split 5 x 5, opposite sides paired.
pub fn periodic_mesh() -> Result<DgMesh> {
    let mesh = generate::split_square_grid(0.0, 1.0, 0.0, 1.0, 5, 5)?;
    let om = prepare(&mesh, &PrepareOptions::new(Ordering::ColorRenumbered, 1))?;
    DgMesh::build(&om, &|t| {
        Ok(match t {
            1 => BoundaryKind::Periodic(3),
            3 => BoundaryKind::Periodic(1),
            2 => BoundaryKind::Periodic(4),
            _ => BoundaryKind::Periodic(2),
        })
    })
}

/// Refinement flags of [`nonconforming_mesh`]: about 2 in 5 elements, pseudo-random by
/// `seed` (a splitmix64 hash of the element index).
pub fn refine_pattern(seed: u64) -> impl Fn(usize) -> bool {
    move |i| {
        let mut z = (i as u64 ^ seed.rotate_left(32)).wrapping_add(0x9e37_79b9_7f4a_7c15);
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        (z ^ (z >> 31)) % 5 < 2
    }
}

/// A nonconforming test mesh: the unstructured unit square of about `cells` triangles
/// (generator seed `seed`), face-3-colored, the elements with `refine(i)` split into four
/// (hanging nodes where a refined element meets an unrefined one), the faces colored by GK's
/// six-color mapping and built with [`DgMesh::build_nonconforming`].
pub fn nonconforming_mesh(
    cells: usize,
    seed: u64,
    refine: &dyn Fn(usize) -> bool,
    bc: &dyn Fn(i32) -> Result<BoundaryKind>,
) -> Result<DgMesh> {
    let mesh = generate::rectangle(0.0, 1.0, 0.0, 1.0, cells, seed)?;
    let topo = Topology::build(&mesh)?;
    let coloring = color_faces(&mesh, &topo, &FaceColoringOptions::with_seed(seed))?;
    let flags: Vec<bool> = (0..mesh.num_elements()).map(refine).collect();
    let nc = nonconforming::refine(&mesh, &topo, &flags)?;
    let colors = nonconforming::refine_colors(&nc, &coloring.colors)?;
    DgMesh::build_nonconforming(&nc, &colors, bc)
}

/// The boundary kinds of [`all_boundaries`] by tag: wall, outflow, inflow (state 0), exact.
pub fn mixed_boundaries(tag: i32) -> Result<BoundaryKind> {
    Ok(match tag {
        1 => BoundaryKind::Wall,
        2 => BoundaryKind::Outflow,
        3 => BoundaryKind::Inflow(0),
        _ => BoundaryKind::Exact,
    })
}

/// The run configuration of the checks: one inflow state, CFL 0.3, adaptive steps.
pub fn config(flux: NumericalFlux, limiter: bool, state_fn: StateFn) -> GpuConfig {
    GpuConfig {
        flux,
        state_fn,
        states: vec![conserved(1.1, 0.3, -0.2, 0.9)],
        cfl: 0.3,
        fixed_dt: None,
        limiter,
    }
}

/// The isentropic vortex the checks project.
pub fn vortex() -> StateFn {
    StateFn::Vortex {
        x0: 0.4,
        y0: 0.6,
        u_inf: 0.5,
        v_inf: 0.3,
        beta: 1.0,
        radius: 1.0,
        p_inf: 1.0,
    }
}

/// A narrow clockwise vortex in GK19's free stream (p = 1 / (gamma M^2), M = 0.4): the
/// kernels' vortex with a width and a free-stream pressure other than 1.
pub fn scaled_vortex() -> StateFn {
    StateFn::Vortex {
        x0: 0.45,
        y0: 0.55,
        u_inf: 0.2,
        v_inf: 0.7,
        beta: -2.0,
        radius: 0.3,
        p_inf: 1.0 / (1.4 * 0.16),
    }
}

/// The CPU operator of the run configuration `cfg`.
pub(super) fn operator<'a>(
    dm: &'a DgMesh,
    tables: &'a BasisTables,
    cfg: &GpuConfig,
) -> Operator<'a> {
    Operator {
        mesh: dm,
        tables,
        flux: cfg.flux,
        state_fn: cfg.state_fn,
        states: cfg.states.clone(),
    }
}

/// `f` projected by `op`, rounded to f32 so both sides see the same coefficients.
fn projected(op: &Operator, f: &(dyn Fn(f64, f64) -> State + Sync)) -> Vec<f64> {
    op.project(f).iter().map(|&v| v as f32 as f64).collect()
}

/// `base` adapted three times by pseudo-random flags (2:1 smoothed, at most 3 levels): the
/// faces, halves, colors and neighbours come from the element and edge trees.
pub fn adapted_mesh(base: &Result<DgMesh>, seed: u64) -> Result<DgMesh> {
    let mut am = AdaptiveMesh::new(ready(base)?, 3)?;
    let projection = Projection::new(0);
    let mut coef = vec![vec![[0.0; 4]]; am.num_active()];
    let mut s = seed;
    for _ in 0..3 {
        let mut flags: Vec<i8> = (0..am.num_active())
            .map(|_| {
                s = s
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                [1, 0, -1][(s >> 33) as usize % 3]
            })
            .collect();
        am.smooth_flags(&am.faces()?, &mut flags);
        am.adapt(&flags, &mut coef, &projection)?;
    }
    am.dg_mesh()
}

/// DG Euler against the f64 CPU operator, from coefficients rounded to f32 (what the GPU
/// holds): the rhs for p = 0..4 on [`all_boundaries`] in two orderings (Rusanov and HLLC
/// fluxes), relative 2e-5; the limiter on a shock for p = 1, 2 (RCM ordering), relative 1e-5,
/// and it must limit; and 10 limited steps for p = 1..3 on [`periodic_mesh`] at a fixed dt,
/// relative 1e-4 (one element 2e-3: a limiter decision at alpha ~ 1), exactly 10 steps,
/// conserved totals within 2e-6 (f32); the rhs and the steps in both the colored and the
/// gathered surface layout; 10 steps without the limiter p = 1..4 in the gathered layout,
/// same tolerances. The same on a
/// nonconforming mesh ([`nonconforming_mesh`], hanging nodes): rhs p = 0..4 with every
/// boundary kind, the limiter p = 1..3, and 10 limited steps p = 1..3 in a box of walls (mass
/// and energy conserved), in both layouts (the gathered one lifts a split side's halves); and
/// the rhs on adapted meshes from a solver moved there from its base mesh, both layouts.
pub fn dg(report: &mut Report, b: &Runtime) {
    for (ordering, flux) in [
        (Ordering::Original, NumericalFlux::Rusanov),
        (Ordering::ColorRenumbered, NumericalFlux::Hllc),
    ] {
        let dm = all_boundaries(ordering);
        for p in 0..=4 {
            for layout in [SurfaceLayout::Colored, SurfaceLayout::Gathered] {
                let name = format!(
                    "dg rhs {ordering} {} p={p} all boundary kinds, {} surface",
                    flux.name(),
                    layout.name()
                );
                check_rhs(report, b, &name, &dm, p, flux, layout);
            }
        }
    }
    let original = all_boundaries(Ordering::Original);
    for p in [1usize, 2] {
        for layout in [SurfaceLayout::Colored, SurfaceLayout::Gathered] {
            let name = format!(
                "dg rhs p={p} vortex of width 0.3 in GK19's free stream, all boundary kinds, {} \
                 surface",
                layout.name()
            );
            report.check(&name, b.kind(), "rel 2e-5", || {
                let flux = NumericalFlux::Hllc;
                let err =
                    rhs_error_of(scaled_vortex(), &original, p, flux, |dm, tables, cfg, _| {
                        let mut gpu = GpuDg::new(b, dm, tables, cfg)?;
                        gpu.set_surface(layout)?;
                        Ok(gpu)
                    })?;
                Ok((format!("rel {err:.2e}"), err < 2e-5))
            });
        }
    }
    let rcm = all_boundaries(Ordering::Rcm);
    for p in [1usize, 2] {
        check_limiter(report, b, &format!("dg limiter rcm p={p} shock"), &rcm, p);
    }
    let periodic = periodic_mesh();
    for p in [1usize, 2, 3] {
        for layout in [SurfaceLayout::Colored, SurfaceLayout::Gathered] {
            let name = format!(
                "dg 10 steps p={p} limiter periodic 5x5, {} surface",
                layout.name()
            );
            check_steps(
                report,
                b,
                &name,
                &periodic,
                p,
                &[0, 1, 2, 3],
                (layout, true),
            );
        }
    }
    // Without the limiter, as `bench dg --vortex` runs: p = 1 applies the stage in dg_volume
    // (STAGE = 1), p >= 2 in dg_stage; the 2 steps past the end run with dt = 0.
    for p in 1..=4 {
        let name = format!("dg 10 steps p={p} no limiter periodic 5x5, gathered surface");
        check_steps(
            report,
            b,
            &name,
            &periodic,
            p,
            &[0, 1, 2, 3],
            (SurfaceLayout::Gathered, false),
        );
    }
    let nc = nonconforming_mesh(140, 4, &refine_pattern(4), &mixed_boundaries);
    for p in 0..=4 {
        for layout in [SurfaceLayout::Colored, SurfaceLayout::Gathered] {
            let name = format!(
                "dg rhs nonconforming p={p} all boundary kinds, {} surface",
                layout.name()
            );
            check_rhs(report, b, &name, &nc, p, NumericalFlux::Hllc, layout);
        }
    }
    let reordered = all_boundaries(Ordering::ColorRenumbered);
    for p in [1usize, 3] {
        let name = format!("dg rhs gathered surface p={p}, solver moved onto a reordered mesh");
        report.check(&name, b.kind(), "rel 2e-5", || {
            let err = rhs_error(&reordered, p, NumericalFlux::Hllc, |dm, tables, cfg, c| {
                let base = all_boundaries(Ordering::Original)?;
                let mut gpu = GpuDg::with_capacity(b, &base, tables, cfg, Capacity::of(dm))?;
                gpu.set_surface(SurfaceLayout::Gathered)?;
                gpu.remesh(dm, c)?;
                Ok(gpu)
            })?;
            Ok((format!("rel {err:.2e}"), err < 2e-5))
        });
    }
    // At p = 3 some elements are limited for a half-edge node alone (positivity must hold
    // where the fluxes of a split side are evaluated).
    for p in 1..=3 {
        check_limiter(
            report,
            b,
            &format!("dg limiter nonconforming p={p} shock"),
            &nc,
            p,
        );
    }
    let adapted = [
        (
            "all boundary kinds",
            adapted_mesh(&all_boundaries(Ordering::Original), 7),
        ),
        ("periodic", adapted_mesh(&periodic_mesh(), 8)),
    ];
    for (label, dm) in &adapted {
        for p in [1usize, 3] {
            for layout in [SurfaceLayout::Colored, SurfaceLayout::Gathered] {
                let name = format!(
                    "dg rhs adapted ({label}) p={p}, solver moved from the base mesh, {} surface",
                    layout.name()
                );
                check_remeshed_rhs(report, b, &name, dm, p, layout);
            }
        }
    }
    let walls = nonconforming_mesh(100, 5, &refine_pattern(5), &|_| Ok(BoundaryKind::Wall));
    for p in [1usize, 2, 3] {
        for layout in [SurfaceLayout::Colored, SurfaceLayout::Gathered] {
            let name = format!(
                "dg 10 steps p={p} limiter nonconforming walls, {} surface",
                layout.name()
            );
            check_steps(report, b, &name, &walls, p, &[0, 3], (layout, true));
        }
    }
}

/// The rhs of the projected vortex at t = 0.25 with the surface integral in `layout`, GPU
/// against CPU, relative 2e-5.
fn check_rhs(
    report: &mut Report,
    b: &Runtime,
    name: &str,
    dm: &Result<DgMesh>,
    p: usize,
    flux: NumericalFlux,
    layout: SurfaceLayout,
) {
    report.check(name, b.kind(), "rel 2e-5", || {
        let err = rhs_error(dm, p, flux, |dm, tables, cfg, _| {
            let mut gpu = GpuDg::new(b, dm, tables, cfg)?;
            gpu.set_surface(layout)?;
            Ok(gpu)
        })?;
        Ok((format!("rel {err:.2e}"), err < 2e-5))
    });
}

/// The rhs on an adapted mesh from a solver built on a coarser mesh with room for it and
/// moved there ([`GpuDg::remesh`]: element stride = capacity, not the element count), GPU
/// against CPU, relative 5e-5: three levels make 1/det J span 64x, so f32 round-off in the
/// smallest elements' sums weighs more against the largest rhs than on a uniform mesh (2e-5).
/// The layout is set on the conforming base mesh, so the gathered one is built again for the
/// hanging nodes on the move.
fn check_remeshed_rhs(
    report: &mut Report,
    b: &Runtime,
    name: &str,
    dm: &Result<DgMesh>,
    p: usize,
    layout: SurfaceLayout,
) {
    report.check(name, b.kind(), "rel 5e-5", || {
        let err = rhs_error(dm, p, NumericalFlux::Hllc, |dm, tables, cfg, c| {
            let base = all_boundaries(Ordering::Original)?;
            let room = Capacity::with_room(dm, 1.3);
            let mut gpu = GpuDg::with_capacity(b, &base, tables, cfg, room)?;
            gpu.set_surface(layout)?;
            gpu.remesh(dm, c)?;
            Ok(gpu)
        })?;
        Ok((format!("rel {err:.2e}"), err < 5e-5))
    });
}

/// Largest relative rhs difference of the GPU solver `gpu(mesh, tables, config, c)` against
/// the CPU operator for the projected vortex at t = 0.25.
fn rhs_error(
    dm: &Result<DgMesh>,
    p: usize,
    flux: NumericalFlux,
    gpu: impl FnOnce(&DgMesh, &BasisTables, &GpuConfig, &[f64]) -> Result<GpuDg>,
) -> Result<f64> {
    rhs_error_of(vortex(), dm, p, flux, gpu)
}

/// [`rhs_error`] for the projected state `vortex` (at t = 0 for the projection, 0.25 for the
/// rhs and its exact boundary states).
fn rhs_error_of(
    vortex: StateFn,
    dm: &Result<DgMesh>,
    p: usize,
    flux: NumericalFlux,
    gpu: impl FnOnce(&DgMesh, &BasisTables, &GpuConfig, &[f64]) -> Result<GpuDg>,
) -> Result<f64> {
    let dm = ready(dm)?;
    let tables = BasisTables::new(p);
    let cfg = config(flux, false, vortex);
    let op = operator(dm, &tables, &cfg);
    let c = projected(&op, &|x, y| vortex.eval(x, y, 0.0));
    let mut cpu = vec![0.0; op.ndof()];
    op.rhs(&c, 0.25, &mut cpu);
    let g = gpu(dm, &tables, &cfg, &c)?.eval_rhs(&c, 0.25)?;
    Ok(max_rel(&g, &cpu))
}

/// The slope + positivity limiter once on a projected shock, relative 1e-5; it must limit.
fn check_limiter(report: &mut Report, b: &Runtime, name: &str, dm: &Result<DgMesh>, p: usize) {
    report.check(name, b.kind(), "rel 1e-5, limits", || {
        let dm = ready(dm)?;
        let dmr = StateFn::DoubleMach;
        let tables = BasisTables::new(p);
        let cfg = config(NumericalFlux::Rusanov, true, dmr);
        let op = operator(dm, &tables, &cfg);
        // A shock through the unit square: many cells are limited.
        let c = projected(&op, &|x, y| dmr.eval(x + 0.2, y, 0.0));
        let mut cpu = vec![0.0; c.len()];
        op.limit(&c, &mut cpu, true);
        let gpu = GpuDg::new(b, dm, &tables, &cfg)?;
        let g = gpu.limit_once(&c)?;
        let err = max_rel(&g, &cpu);
        let limited = c.iter().zip(&cpu).any(|(a, b)| (a - b).abs() > 1e-3);
        Ok((
            format!("rel {err:.2e} limited {limited}"),
            err < 1e-5 && limited,
        ))
    });
}

/// 10 steps of the vortex at a fixed dt (limited or not) in `layout`, queued in three batches
/// (a plan launched, captured and replayed), relative 1e-4, exactly 10 steps, the totals
/// of the equations `conserved` within 2e-6 (f32). One element may differ by up to 2e-3: for
/// p >= 2 the limiter keeps or drops an element's higher modes as alpha is below 1 or not, and
/// on this smooth vortex alpha comes within f32 rounding of 1 (0.999991 in element 6 at p = 3,
/// issue 13), so one decision may go the other way on the device and change that element by
/// its higher modes (4.7e-4).
fn check_steps(
    report: &mut Report,
    b: &Runtime,
    name: &str,
    dm: &Result<DgMesh>,
    p: usize,
    conserved: &[usize],
    (layout, limiter): (SurfaceLayout, bool),
) {
    report.check(
        name,
        b.kind(),
        "rel 1e-4 (one element 2e-3), 10 steps, totals 2e-6",
        || {
            let dm = ready(dm)?;
            let tables = BasisTables::new(p);
            let vortex = vortex();
            let cfg = config(NumericalFlux::Rusanov, limiter, vortex);
            let op = operator(dm, &tables, &cfg);
            let c0 = projected(&op, &|x, y| vortex.eval(x, y, 0.0));
            let dt = 0.5 * op.cfl_dt(&c0, 0.3);
            let steps = 10;
            let mut cpu = c0.clone();
            run(&op, &mut cpu, dt * steps as f64, 0.3, Some(dt), limiter);
            let cfg = GpuConfig {
                fixed_dt: Some(dt),
                ..cfg
            };
            let mut gpu = GpuDg::new(b, dm, &tables, &cfg)?;
            gpu.set_surface(layout)?;
            gpu.set_solution(&c0)?;
            gpu.set_clock(0.0, dt * steps as f64)?;
            // Three queues of the step plan: the first launches it, the second runs it as a
            // captured CUDA graph (on CUDA), the third replays that graph; 2 steps past the end
            // do nothing.
            for batch in [3, 3, steps - 4] {
                gpu.queue_steps(batch)?;
            }
            let clock = gpu.read_clock()?;
            let g = gpu.read_state()?;
            let err = max_rel(&g, &cpu);
            let ne = dm.num_elements;
            let scale = cpu.iter().fold(0.0f64, |m, v| m.max(v.abs())).max(1e-30);
            let mut over: Vec<usize> = (0..g.len())
                .filter(|&j| (g[j] - cpu[j]).abs() > 1e-4 * scale)
                .map(|j| j % ne)
                .collect();
            over.sort_unstable();
            over.dedup();
            let (t0, t1) = (op.totals(&c0), op.totals(&g));
            let drift = conserved
                .iter()
                .map(|&eq| (t1[eq] - t0[eq]).abs() / t0[eq].abs().max(1.0))
                .fold(0.0f64, f64::max);
            Ok((
                format!(
                    "rel {err:.2e} ({} elements over 1e-4) steps {} totals {drift:.2e}",
                    over.len(),
                    clock.steps
                ),
                over.len() <= 1 && err < 2e-3 && clock.steps == steps as u64 && drift < 2e-6,
            ))
        },
    );
}
