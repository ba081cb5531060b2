//! The GPU driver, written once over [`Runtime`] (wgpu or CUDA): buffers, kernels and one
//! prepared step plan
//!
//! flux segment (the driven edges' boundary values, then one launch per edge color, or the
//! cell-centred gather, or on CUDA one atomicAdd launch over all edges) → update segment: local
//! Δt per cell → GPU min-reduction → time kernel (Δt = min(Δt_CFL, t_end − t), t advanced on
//! the GPU) → cell update (reads Δt from the GPU), and at order 2 (Heun) the flux segment
//! starts with the reconstruction, the update with the draining kernels (`swe_drain`,
//! `swe_drain_fix`), and a second flux and update segment follow with the same Δt
//! (boundary values at t^n + Δt; the edge counters of that second stage are folded into the run
//! totals by the next step's time kernel), then the gauges; or, the default, the fused step
//! ([`FluxLayout::Fused`]): the driven edges' values → `swe_fused_step` (per cell: gather the
//! edge fluxes, update with this step's Δt into the other state buffer, local CFL step folded
//! into one atomic-min word per workgroup) → `swe_fused_clock` (one thread: clock, counters,
//! the next Δt_CFL) → the gauges, the state buffers swapping every step (at order 2:
//! reconstruction, stage 1's pass and draining fix into a scratch buffer (W*), the clock,
//! reconstruction of W*, stage 2's pass and fix into the other state buffer),
//!
//! queued many steps per submit; the host reads back only the small control block (time,
//! steps, counters) between batches and the state when it prints or saves.
//!
//! Layout (f32): cells are two vec4 per cell, (h1, q1x, q1y, h2) and (q2x, q2y, H, |V|);
//! accumulators are two vec4 per cell, the 6 update components plus the CFL sum.

use super::boundary::DrivenBoundaries;
use super::gauge::{GaugeSample, Gauges};
use super::mesh::SweMesh;
use super::{Counters, DepthStop, Physics, Scheme};
use crate::args;
use crate::error::{Error, Result};
use crate::runtime::reduce::MinReduction;
use crate::runtime::{Buffer, ItemRange, Plan, PlanBuilder, Runtime};
use crate::solver::{clock_stalls, MAX_BATCH};

/// Mirrors `Control` in shaders/common/swe_control.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct GpuControl {
    pub t: f32,
    pub dt: f32,
    pub t_end: f32,
    pub steps: u32,
    pub nonhyperbolic: u32,
    pub fallback: u32,
    pub chi_clamped: u32,
    pub clipped: u32,
    pub max_step_nonhyperbolic: u32,
    pub max_step_fallback: u32,
    /// The last positive Δt (Δt is 0 for the no-op steps past t_end).
    pub last_dt: f32,
    /// Fused step ([`FluxLayout::Fused`]) only: the CFL step (3) of the last pass, the next
    /// step's Δt before the clamp (0 before the first pass, negative once a cell went NaN/Inf);
    /// 0 on the other layouts.
    pub dt_cfl: f32,
    /// Fused step only: steps rejected (their Δt above the Courant limit of the state they
    /// updated) and taken again.
    pub rejected: u32,
    /// The depth stop: the lowest-numbered cell whose layer depth fell below
    /// [`super::depth_stop_level`] before draining and clipping, [`NO_CELL`] while none did.
    pub stop_cell: u32,
    /// The step that fired the depth stop.
    pub stop_step: u32,
    /// The time that step reached.
    pub stop_t: f32,
    /// The lowest layer depth (before draining and clipping) of the cells that fired it.
    pub stop_depth: f32,
}

/// No cell: the depth stop has not fired ([`GpuControl::stop_cell`]).
pub const NO_CELL: u32 = u32::MAX;

/// Words of the event counters buffer: 0..4 the step's edge and clip counts (folded into the
/// control block by the time kernels), 4..8 the depth stop's record (lowest cell, lowest depth
/// as [`ordered_bits`], the launch 2 step + (1 for Heun's second stage), time bits), written
/// by the update kernels.
const COUNTER_WORDS: [u32; 8] = [0, 0, 0, 0, NO_CELL, NO_CELL, 0, 0];

impl Default for GpuControl {
    fn default() -> Self {
        GpuControl {
            t: 0.0,
            dt: 0.0,
            t_end: 0.0,
            steps: 0,
            nonhyperbolic: 0,
            fallback: 0,
            chi_clamped: 0,
            clipped: 0,
            max_step_nonhyperbolic: 0,
            max_step_fallback: 0,
            last_dt: 0.0,
            dt_cfl: 0.0,
            rejected: 0,
            stop_cell: NO_CELL,
            stop_step: 0,
            stop_t: 0.0,
            stop_depth: 0.0,
        }
    }
}

impl GpuControl {
    /// The run's event counters.
    pub fn counters(&self) -> Counters {
        Counters {
            nonhyperbolic: self.nonhyperbolic as u64,
            fallback: self.fallback as u64,
            chi_clamped: self.chi_clamped as u64,
            clipped: self.clipped as u64,
            max_step_nonhyperbolic: self.max_step_nonhyperbolic as u64,
            max_step_fallback: self.max_step_fallback as u64,
            rejected: self.rejected as u64,
        }
    }

    /// The depth stop's record, if it fired.
    pub fn depth_stop(&self) -> Option<DepthStop> {
        (self.stop_cell != NO_CELL).then_some(DepthStop {
            cell: self.stop_cell as usize,
            step: self.stop_step as u64,
            t: self.stop_t as f64,
            depth: self.stop_depth as f64,
        })
    }
}

/// How the fluxes are gathered into the cells.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize)]
pub enum FluxLayout {
    /// One cell-centred kernel per step (`swe_fused_step`; per stage at order 2, after the
    /// reconstruction): gathers the cell's edge fluxes, updates the cell into a second state
    /// buffer and computes its local CFL step, whose workgroup minimum it folds into one word;
    /// a one-thread kernel (`swe_fused_clock`) advances the clock. Δt of step n comes from the
    /// speeds of W^{n−1} (the paper's lagged Δt, spec §8; the first step from those of W^0).
    /// The default.
    #[default]
    Fused,
    /// One thread per edge, one dispatch per edge color, contributions to both cells.
    ColoredScatter,
    /// One thread per cell computing its own three edges (each edge twice), no coloring.
    CellGather,
    /// One thread per edge in one launch over all edges, contributions added with float
    /// atomics (CUDA only: WGSL has no float atomics); for comparison with the coloring.
    AtomicScatter,
}

impl FluxLayout {
    pub fn name(self) -> &'static str {
        match self {
            FluxLayout::Fused => "fused",
            FluxLayout::ColoredScatter => "edge-scatter",
            FluxLayout::CellGather => "cell-gather",
            FluxLayout::AtomicScatter => "atomic-scatter",
        }
    }

    /// Whether the Δt of step n comes from the state before it (the fused step) rather than
    /// from W^n itself; the CPU reference follows with [`super::cpu::CpuSolver::lagged_dt`].
    pub fn lagged_dt(self) -> bool {
        self == FluxLayout::Fused
    }
}

/// Seconds spent per kernel group, from device timers (or wall clock without them).
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize)]
pub struct KernelTimes {
    /// Steps timed.
    pub steps: u32,
    /// The flux pass (all colors, or the gather kernel; the fused step kernel).
    pub flux: f64,
    /// Local Δt, reduction, time kernel and update (the fused clock kernel).
    pub update: f64,
    /// True when measured on the device (timestamp queries, CUDA events); otherwise `flux`
    /// holds the wall time of the whole steps and `update` is 0.
    pub timestamps: bool,
}

/// Cells in GPU layout: (h1, q1x, q1y, h2), (q2x, q2y, H, |V|).
pub fn pack_cells(state: &[[f64; 6]], depth: &[f64], areas: &[f64]) -> Vec<[f32; 4]> {
    let mut out = Vec::with_capacity(2 * state.len());
    for ((w, &h), &a) in state.iter().zip(depth).zip(areas) {
        out.push([w[0] as f32, w[1] as f32, w[2] as f32, w[3] as f32]);
        out.push([w[4] as f32, w[5] as f32, h as f32, a as f32]);
    }
    out
}

/// The inverse of [`pack_cells`] for the state: W = (h1, q1x, q1y, h2, q2x, q2y) per cell.
pub fn unpack_cells(raw: &[[f32; 4]]) -> Vec<[f64; 6]> {
    raw.chunks_exact(2)
        .map(|c| {
            [
                c[0][0] as f64,
                c[0][1] as f64,
                c[0][2] as f64,
                c[0][3] as f64,
                c[1][0] as f64,
                c[1][1] as f64,
            ]
        })
        .collect()
}

/// The kernels and buffers of the second-order stages (reconstruction, then the edge flux on
/// the reconstructed states).
struct SecondOrder {
    recon_cells: Buffer,
    neighbors: Buffer,
    slots: Buffer,
    deltas: Buffer,
    reconstruct: crate::runtime::Kernel,
    flux: crate::runtime::Kernel,
    colors: Vec<ItemRange>,
    /// Each cell's outflow per layer (`swe_edge_flux2` sums, `swe_drain` clears).
    outflow: Buffer,
    /// The draining records and the tag of the last launch with a draining cell.
    drain: Buffer,
    drain_flag: Buffer,
    cell_edges: Buffer,
    /// `swe_drain` and `swe_drain_fix` for Heun's stages 1 and 2.
    drain_kernels: [crate::runtime::Kernel; 2],
    fix_kernels: [crate::runtime::Kernel; 2],
}

/// What a run may add to the plain solver: driven boundaries (their values are written into
/// the edges before every stage's flux) and gauges (sampled at the end of every step).
#[derive(Clone, Debug, Default)]
pub struct Extras {
    pub boundaries: DrivenBoundaries,
    pub gauges: Option<Gauges>,
}

/// Mirrors `GaugeState` in shaders/swe_gauges.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct GaugeState {
    /// Index k of the next sample mark (t ≥ k·T).
    pub next: u32,
    /// Samples in the buffer, not yet read back.
    pub count: u32,
    /// Samples taken since the start of the run.
    pub total: u32,
    /// Samples lost to a full buffer (0 unless a batch outran the capacity).
    pub dropped: u32,
}

/// Most gauge samples kept on the host before [`GpuSolver::advance_to`] returns early so that
/// the caller can take them ([`GpuSolver::take_gauge_samples`]).
pub const GAUGE_PENDING_LIMIT: usize = 4096;

/// The GPU side of the gauges.
struct GaugeBuffers {
    n: usize,
    capacity: u32,
    state: Buffer,
    samples: Buffer,
    pending: Vec<GaugeSample>,
}

/// The prepared steps of a solver.
enum StepPlans {
    /// The state stays in `cells[0]`. One step: segment "flux" (boundary values of driven
    /// edges, then the fluxes), then segment "update" (local Δt, reduction, time, update), at
    /// order 2 a second "flux" and "update" (Heun's second stage), then the gauges.
    InPlace(Plan),
    /// The fused step: the state alternates between `cells[0]` and `cells[1]`. `one[p]` takes
    /// one step from `cells[p]`, `two[p]` two steps (back to `cells[p]`); a step is segment
    /// "flux" (boundary values, the fused step kernel), segment "update" (the clock kernel),
    /// then the gauges.
    PingPong {
        one: Box<[Plan; 2]>,
        two: Box<[Plan; 2]>,
    },
}

/// A two-layer shallow-water run on a compute device (wgpu or CUDA, as its [`Runtime`]).
pub struct GpuSolver {
    rt: Runtime,
    n_cells: u32,
    /// The state buffers (the same buffer twice unless the step is fused).
    cells: [Buffer; 2],
    /// Which of `cells` holds the current state.
    current: usize,
    control: Buffer,
    counters: Buffer,
    /// Cell centroids, to say where a solution blew up.
    centroids: Vec<[f64; 2]>,
    /// The element kinds and file numbers of the cells, to name them as the mesh file does
    /// ([`crate::mesh::Mesh::element_label`]).
    labels: crate::mesh::Mesh,
    /// The depth stop level ([`super::depth_stop_level`]).
    stop_level: f64,
    steps: StepPlans,
    /// The fused step's [`FusedKernels::dt_min`] words (a rejected step leaves a pass to run).
    fused_words: Option<Buffer>,
    gauges: Option<GaugeBuffers>,
}

/// What the step plans of a solver share: the mesh, the physics and the device buffers.
struct StepInputs<'a> {
    mesh: &'a SweMesh,
    depth: &'a [f64],
    phys: Physics,
    scheme: Scheme,
    cfl: f64,
    order: u32,
    n_cells: u32,
    edges: &'a Buffer,
    cells: &'a [Buffer; 2],
    control: &'a Buffer,
    counters: &'a Buffer,
    flux_consts: &'a [(&'static str, f64); 4],
    /// The depth stop level ([`super::depth_stop_level`]).
    stop_level: f64,
}

impl StepInputs<'_> {
    /// Constants of the kernels that update cells (`swe_update` at `stage`, or the fused step
    /// without the stage).
    fn update_consts(&self) -> Vec<(&'static str, f64)> {
        vec![
            ("DRY_TOL", self.phys.dry_tol),
            ("GRAVITY", self.phys.g),
            ("DENSITY_RATIO", self.phys.r),
            ("MANNING", self.phys.friction.manning),
            ("INTERFACE_DRAG", self.phys.friction.interface),
            ("DEPTH_STOP", self.stop_level),
            ("FILM_DEPTH", self.phys.film_depth()),
        ]
    }
}

/// The kernels and buffers of the fused step.
struct FusedKernels {
    /// `swe_fused_step` at STAGE 0 (order 1), or at STAGE 1 and 2 (Heun's stages).
    stages: Vec<crate::runtime::Kernel>,
    /// Order 2: `swe_fused_step` with DRAIN 1 (the fix after each stage's pass) at STAGE 1
    /// and 2.
    fixes: Vec<crate::runtime::Kernel>,
    /// Order 2: W* between Heun's stages (the state ping-pongs between the two cell buffers,
    /// stage 2 reading W^n from the one stage 1 read), and the draining records (a
    /// placeholder at order 1).
    scratch: Option<Buffer>,
    drain: Buffer,
    clock: crate::runtime::Kernel,
    slots: Buffer,
    /// The pass's minimum local CFL step as [`ordered_bits`] (u32::MAX between passes), 1
    /// when the next pass must write nothing (the last step was rejected, order 1), and the
    /// tag of the last launch in which a cell drained (order 2).
    dt_min: Buffer,
    /// Order 2: the reconstruction kernel and its buffers.
    reconstruction: Option<FusedReconstruction>,
    /// The edges' slots in their cells' increments and the increments (placeholders the
    /// first-order kernel never reads).
    edge_slots: Buffer,
    deltas: Buffer,
}

/// The reconstruction of the fused second-order step (`swe_reconstruct`).
struct FusedReconstruction {
    kernel: crate::runtime::Kernel,
    recon_cells: Buffer,
    neighbors: Buffer,
}

impl FusedKernels {
    fn new(rt: &Runtime, s: &StepInputs) -> Result<FusedKernels> {
        let pass = |stage: u32, drain: u32| {
            let mut consts = s.update_consts();
            consts.push(("SCHEME", s.scheme.shader_id() as f64));
            consts.push(("CFL", s.cfl));
            consts.push(("STAGE", stage as f64));
            consts.push(("DRAIN", drain as f64));
            rt.kernel("swe_fused_step", &consts)
        };
        let kernel = |stage: u32| pass(stage, 0);
        let n = s.n_cells as usize;
        let (fixes, scratch, drain) = if s.order == 2 {
            (
                vec![pass(1, 1)?, pass(2, 1)?],
                Some(rt.zeroed::<[f32; 4]>("swe cells W*", 2 * n)?),
                rt.zeroed::<[f32; 4]>("swe drain records", n)?,
            )
        } else {
            let unused = rt.zeroed::<[f32; 4]>("swe drain records (unused)", 1)?;
            (Vec::new(), None, unused)
        };
        let (stages, reconstruction, edge_slots, deltas) = if s.order == 2 {
            let recon = super::muscl::Reconstruction::new(s.mesh, s.depth);
            let r = FusedReconstruction {
                kernel: rt.kernel("swe_reconstruct", s.flux_consts)?,
                recon_cells: rt.upload("swe reconstruction", &recon.gpu_cells())?,
                neighbors: rt.upload("swe neighbours", &recon.gpu_neighbors())?,
            };
            (
                vec![kernel(1)?, kernel(2)?],
                Some(r),
                rt.upload("swe edge slots", &recon.gpu_edge_slots(s.mesh))?,
                rt.zeroed::<[f32; 4]>("swe edge increments", 6 * s.n_cells as usize)?,
            )
        } else {
            (
                vec![kernel(0)?],
                None,
                rt.zeroed::<[u32; 2]>("swe edge slots (unused)", 1)?,
                rt.zeroed::<[f32; 4]>("swe edge increments (unused)", 1)?,
            )
        };
        Ok(FusedKernels {
            stages,
            fixes,
            scratch,
            drain,
            clock: rt.kernel(
                "swe_fused_clock",
                &[
                    ("CFL", s.cfl),
                    ("ROLLBACK", if s.order == 2 { 0.0 } else { 1.0 }),
                ],
            )?,
            slots: rt.upload("swe cell edges", &s.mesh.cell_edge_slots())?,
            dt_min: rt.upload("swe fused dt min", &[u32::MAX, 0, 0])?,
            reconstruction,
            edge_slots,
            deltas,
        })
    }

    /// One step from `cells[from]` into `cells[1 - from]`, which it returns (segment "flux",
    /// opened by the caller, already holds the boundary values): order 1, the step kernel,
    /// then segment "update": the clock; order 2, reconstruction, stage 1's pass and fix into
    /// the scratch buffer (W*), the clock, then segment "flux" again: the boundary values at
    /// t^n + Δt, reconstruction of W* and stage 2's pass and fix (W^n read from
    /// `cells[from]`).
    fn record(
        &self,
        plan: &mut PlanBuilder,
        s: &StepInputs,
        from: usize,
        launch_boundary_values: &dyn Fn(&mut PlanBuilder),
    ) -> usize {
        let to = 1 - from;
        let stage = |plan: &mut PlanBuilder, k: usize, src: &Buffer, dst: &Buffer| {
            if let Some(r) = &self.reconstruction {
                plan.launch(
                    &r.kernel,
                    &args![*src, r.recon_cells, r.neighbors, self.deltas],
                    ItemRange::all(s.n_cells),
                );
            }
            let launch_args = args![
                *s.control,
                *s.edges,
                self.slots,
                self.edge_slots,
                self.deltas,
                *src,
                *dst,
                *s.counters,
                self.dt_min,
                s.cells[from],
                self.drain
            ];
            plan.launch(&self.stages[k], &launch_args, ItemRange::all(s.n_cells));
            if let Some(fix) = self.fixes.get(k) {
                plan.launch(fix, &launch_args, ItemRange::all(s.n_cells));
            }
        };
        let first_out = self.scratch.as_ref().unwrap_or(&s.cells[to]);
        stage(plan, 0, &s.cells[from], first_out);
        plan.segment("update");
        plan.launch_threads(
            &self.clock,
            &args![self.dt_min, *s.control, *s.counters],
            ItemRange::all(1),
            1,
        );
        if let Some(scratch) = &self.scratch {
            plan.segment("flux");
            launch_boundary_values(plan);
            stage(plan, 1, scratch, &s.cells[to]);
        }
        to
    }
}

/// An f32 as a u32 of the same order (`ordered_bits` in shaders/common/swe_control.wgsl), so
/// that a u32 atomic minimum is the minimum of the floats.
pub fn ordered_bits(x: f32) -> u32 {
    let b = x.to_bits();
    if b & 0x8000_0000 != 0 {
        !b
    } else {
        b | 0x8000_0000
    }
}

/// The inverse of [`ordered_bits`].
pub fn from_ordered_bits(u: u32) -> f32 {
    f32::from_bits(if u & 0x8000_0000 != 0 {
        u & 0x7fff_ffff
    } else {
        !u
    })
}

/// Words of the control block ([`GpuControl`]).
const CONTROL_WORDS: usize = std::mem::size_of::<GpuControl>() / 4;

/// Record the unfused step (flux segment, update chain, Heun's second stage at order 2) into
/// `plan`, the state in `cells[0]`.
fn record_unfused(
    rt: &Runtime,
    s: &StepInputs,
    layout: FluxLayout,
    plan: &mut PlanBuilder,
    launch_boundary_values: &dyn Fn(&mut PlanBuilder),
) -> Result<()> {
    let (mesh, order, n_cells, cfl) = (s.mesh, s.order, s.n_cells, s.cfl);
    let n = n_cells as usize;
    let (edges, cells, control, counters) = (
        s.edges.clone(),
        s.cells[0].clone(),
        s.control.clone(),
        s.counters.clone(),
    );
    let flux_consts = s.flux_consts;
    let acc = rt.zeroed::<[f32; 4]>("swe accumulators", 2 * n)?;
    let dt_local = rt.zeroed::<f32>("swe local dt", n)?;
    let update_consts = |stage: u32| {
        let mut c = s.update_consts();
        c.push(("STAGE", stage as f64));
        c
    };
    // W^n during Heun's second stage (order 2); a placeholder the Euler update never reads.
    let cells_old = rt.zeroed::<[f32; 4]>("swe cells W^n", if order == 2 { 2 * n } else { 1 })?;
    let second_order = if order == 2 {
        let recon = super::muscl::Reconstruction::new(mesh, s.depth);
        let stage_kernels = |stem: &str| -> Result<[crate::runtime::Kernel; 2]> {
            // swe_drain has the depth stop, not the flux.
            let consts = if stem == "swe_drain" {
                update_consts(0)
                    .into_iter()
                    .filter(|(name, _)| *name != "STAGE")
                    .collect()
            } else {
                flux_consts.to_vec()
            };
            let with_stage = |stage: f64| {
                let mut c = consts.clone();
                c.push(("STAGE", stage));
                rt.kernel(stem, &c)
            };
            Ok([with_stage(1.0)?, with_stage(2.0)?])
        };
        Some(SecondOrder {
            recon_cells: rt.upload("swe reconstruction", &recon.gpu_cells())?,
            neighbors: rt.upload("swe neighbours", &recon.gpu_neighbors())?,
            slots: rt.upload("swe edge slots", &recon.gpu_edge_slots(mesh))?,
            deltas: rt.zeroed::<[f32; 4]>("swe edge increments", 6 * n)?,
            reconstruct: rt.kernel("swe_reconstruct", flux_consts)?,
            flux: rt.kernel("swe_edge_flux2", flux_consts)?,
            colors: ItemRange::per_color(&mesh.color_offsets)?,
            outflow: rt.zeroed::<[f32; 2]>("swe outflow", n)?,
            drain: rt.zeroed::<[f32; 4]>("swe drain records", n)?,
            drain_flag: rt.zeroed::<u32>("swe drain flag", 1)?,
            cell_edges: rt.upload("swe cell edges", &mesh.cell_edge_slots())?,
            drain_kernels: stage_kernels("swe_drain")?,
            fix_kernels: stage_kernels("swe_drain_fix")?,
        })
    } else {
        None
    };
    let stage_flux = |plan: &mut PlanBuilder, o: &SecondOrder| {
        plan.launch(
            &o.reconstruct,
            &args![cells, o.recon_cells, o.neighbors, o.deltas],
            ItemRange::all(n_cells),
        );
        plan.launch_ranges(
            &o.flux,
            &args![edges, cells, o.deltas, o.slots, acc, counters, o.outflow],
            &o.colors,
        );
    };
    // Order 2, after the time kernel: the draining factors, then the accumulators of the cells
    // at draining cells corrected (Heun's stage 1 or 2).
    let drain = |plan: &mut PlanBuilder, o: &SecondOrder, stage: usize| {
        plan.launch(
            &o.drain_kernels[stage - 1],
            &args![
                control,
                cells,
                acc,
                o.outflow,
                o.drain,
                o.drain_flag,
                counters
            ],
            ItemRange::all(n_cells),
        );
        plan.launch(
            &o.fix_kernels[stage - 1],
            &args![
                control,
                edges,
                o.cell_edges,
                o.slots,
                o.deltas,
                cells,
                acc,
                o.drain,
                o.drain_flag
            ],
            ItemRange::all(n_cells),
        );
    };
    plan.segment("flux");
    launch_boundary_values(plan);
    match (&second_order, layout) {
        (Some(o), _) => stage_flux(plan, o),
        (None, FluxLayout::ColoredScatter) => {
            let k = rt.kernel("swe_edge_flux", flux_consts)?;
            plan.launch_ranges(
                &k,
                &args![edges, cells, acc, counters],
                &ItemRange::per_color(&mesh.color_offsets)?,
            );
        }
        (None, FluxLayout::AtomicScatter) => {
            let k =
                rt.kernel_variant("swe_edge_flux", Some("swe_edge_flux_atomic"), flux_consts)?;
            plan.launch_ranges(
                &k,
                &args![edges, cells, acc, counters],
                &[ItemRange::all(mesh.num_faces() as u32)],
            );
        }
        (None, FluxLayout::Fused) => {
            return Err(Error::Invalid(
                "the fused step has its own plan, not the flux and update segments".into(),
            ))
        }
        (None, FluxLayout::CellGather) => {
            let slots = rt.upload("swe cell edges", &mesh.cell_edge_slots())?;
            let k = rt.kernel("swe_cell_gather", flux_consts)?;
            plan.launch_ranges(
                &k,
                &args![edges, cells, acc, counters, slots],
                &[ItemRange::all(n_cells)],
            );
        }
    }
    plan.segment("update");
    let local_dt = rt.kernel("swe_local_dt", &[("CFL", cfl)])?;
    plan.launch(
        &local_dt,
        &args![cells, acc, dt_local],
        ItemRange::all(n_cells),
    );
    let reduction = MinReduction::new(rt, &dt_local, n_cells)?;
    reduction.record(plan);
    let time = rt.kernel("swe_time", &[])?;
    plan.launch_threads(
        &time,
        &args![*reduction.result(), control, counters],
        ItemRange::all(1),
        1,
    );
    let first_stage = if order == 2 { 1 } else { 0 };
    if let Some(o) = &second_order {
        drain(plan, o, 1);
    }
    let update = rt.kernel("swe_update", &update_consts(first_stage))?;
    plan.launch(
        &update,
        &args![control, cells, acc, counters, cells_old],
        ItemRange::all(n_cells),
    );
    if let Some(o) = &second_order {
        plan.segment("flux");
        launch_boundary_values(plan);
        stage_flux(plan, o);
        plan.segment("update");
        drain(plan, o, 2);
        let average = rt.kernel("swe_update", &update_consts(2))?;
        plan.launch(
            &average,
            &args![control, cells, acc, counters, cells_old],
            ItemRange::all(n_cells),
        );
    }
    Ok(())
}

impl GpuSolver {
    /// Upload the mesh and initial state, build the kernels (physical constants are override
    /// constants / `-D` defines) and prepare the step plan of the first-order scheme (a mesh
    /// without driven boundary edges, no gauges).
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        rt: &Runtime,
        mesh: &SweMesh,
        depth: &[f64],
        state: &[[f64; 6]],
        scheme: Scheme,
        phys: Physics,
        cfl: f64,
        layout: FluxLayout,
    ) -> Result<GpuSolver> {
        Self::with_order(rt, mesh, depth, state, scheme, phys, cfl, layout, 1)
    }

    /// [`GpuSolver::new`] at spatial order `order` (1 or 2), without driven boundaries and
    /// gauges.
    #[allow(clippy::too_many_arguments)]
    pub fn with_order(
        rt: &Runtime,
        mesh: &SweMesh,
        depth: &[f64],
        state: &[[f64; 6]],
        scheme: Scheme,
        phys: Physics,
        cfl: f64,
        layout: FluxLayout,
        order: u32,
    ) -> Result<GpuSolver> {
        let extras = Extras::default();
        Self::with_extras(
            rt, mesh, depth, state, scheme, phys, cfl, layout, order, &extras,
        )
    }

    /// [`GpuSolver::new`] at spatial order `order` (1 or 2), with driven boundaries and gauges.
    /// Order 2 runs Heun's SSP-RK2 with two stages of reconstruct (`swe_reconstruct`) →
    /// colored edge flux (`swe_edge_flux2`) → draining (`swe_drain`, `swe_drain_fix`) →
    /// update, the local Δt, reduction and time kernel before the draining (first stage
    /// only), or with the fused layout reconstruct → fused stage (its pass and its draining
    /// fix), the clock between them; it takes those two layouts. The driven
    /// edges' values are written before each stage's flux, the gauges sampled after the step.
    #[allow(clippy::too_many_arguments)]
    pub fn with_extras(
        rt: &Runtime,
        mesh: &SweMesh,
        depth: &[f64],
        state: &[[f64; 6]],
        scheme: Scheme,
        phys: Physics,
        cfl: f64,
        layout: FluxLayout,
        order: u32,
        extras: &Extras,
    ) -> Result<GpuSolver> {
        phys.validate()?;
        super::check_order(order)?;
        extras.boundaries.check_mesh(mesh)?;
        if order == 2 && !matches!(layout, FluxLayout::ColoredScatter | FluxLayout::Fused) {
            return Err(Error::Invalid(format!(
                "order 2 runs with the {} or {} layout only, not {}",
                FluxLayout::Fused.name(),
                FluxLayout::ColoredScatter.name(),
                layout.name()
            )));
        }
        let n = mesh.num_cells();
        if depth.len() != n || state.len() != n {
            return Err(Error::Invalid(format!(
                "{n} cells but {} depths and {} states",
                depth.len(),
                state.len()
            )));
        }
        let n_cells = n as u32;
        let fused = layout == FluxLayout::Fused;
        let edges = rt.upload("swe edges", &mesh.gpu_edges())?;
        let packed = pack_cells(state, depth, &mesh.geom.areas);
        let cells = rt.upload("swe cells", &packed)?;
        let cells = if fused {
            [cells, rt.upload("swe cells (next)", &packed)?]
        } else {
            [cells.clone(), cells]
        };
        let counters = rt.upload("swe counters", &COUNTER_WORDS)?;
        let control = rt.upload(
            "swe control",
            &[GpuControl {
                t_end: f32::MAX,
                ..Default::default()
            }],
        )?;
        let stop_level = super::depth_stop_level(depth, state, &phys);
        let flux_consts = [
            ("GRAVITY", phys.g),
            ("DENSITY_RATIO", phys.r),
            ("DRY_TOL", phys.dry_tol),
            ("SCHEME", scheme.shader_id() as f64),
        ];
        // Driven boundaries: the edges' values at the stage's time (t^n; t^n + Δt for Heun's
        // second stage, after the time kernel advanced the clock).
        let boundary_values = if extras.boundaries.is_empty() {
            None
        } else {
            let (driven, series) = extras.boundaries.gpu_tables();
            let driven = rt.upload("swe driven edges", &driven)?;
            let series = rt.upload("swe boundary series", &series)?;
            let k = rt.kernel("swe_boundary_values", &[])?;
            let range = ItemRange::all(extras.boundaries.edges.len() as u32);
            Some((k, args![control, driven, series, edges], range))
        };
        let launch_boundary_values = |plan: &mut PlanBuilder| {
            if let Some((k, a, range)) = &boundary_values {
                plan.launch(k, a, *range);
            }
        };
        // After the full step (both stages at order 2), from the buffer the step wrote.
        let gauge_kernel = match extras.gauges.as_ref().filter(|g| !g.cells.is_empty()) {
            Some(g) => {
                let capacity = g.capacity();
                let k = rt.kernel(
                    "swe_gauges",
                    &[
                        ("GAUGE_EVERY", g.every),
                        ("GAUGE_CAPACITY", capacity as f64),
                    ],
                )?;
                let buffers = GaugeBuffers {
                    n: g.cells.len(),
                    capacity,
                    state: rt.zeroed::<GaugeState>("swe gauge state", 1)?,
                    samples: rt.zeroed::<[f32; 4]>(
                        "swe gauge samples",
                        2 * g.cells.len() * capacity as usize,
                    )?,
                    pending: Vec::new(),
                };
                let ids = rt.upload("swe gauge cells", &g.cells)?;
                Some((k, ids, buffers))
            }
            None => None,
        };
        let launch_gauges = |plan: &mut PlanBuilder, cells: &Buffer| {
            if let Some((k, ids, g)) = &gauge_kernel {
                let range = ItemRange::all(g.n as u32);
                plan.launch_threads(
                    k,
                    &args![control, *cells, *ids, g.state, g.samples],
                    range,
                    1,
                );
            }
        };
        // The initial state is the first sample (no step taken yet).
        let mut first = PlanBuilder::new();
        launch_gauges(&mut first, &cells[0]);
        if !first.is_empty() {
            rt.run(&rt.prepare(&first)?, 1)?;
        }
        let inputs = StepInputs {
            mesh,
            depth,
            phys,
            scheme,
            cfl,
            order,
            n_cells,
            edges: &edges,
            cells: &cells,
            control: &control,
            counters: &counters,
            flux_consts: &flux_consts,
            stop_level,
        };
        let mut fused_words = None;
        let (steps, current) = if fused {
            let kernels = FusedKernels::new(rt, &inputs)?;
            fused_words = Some(kernels.dt_min.clone());
            let record = |plan: &mut PlanBuilder, from: usize, gauges: bool| {
                plan.segment("flux");
                launch_boundary_values(plan);
                let to = kernels.record(plan, &inputs, from, &launch_boundary_values);
                if gauges {
                    launch_gauges(plan, &cells[to]);
                }
                to
            };
            // The first pass, with dt = 0: the speeds of W^0 for the first step's Δt.
            let mut probe = PlanBuilder::new();
            let current = record(&mut probe, 0, false);
            rt.run(&rt.prepare(&probe)?, 1)?;
            // One step from `cells[from]`, and two steps (back to it).
            let plans = |from: usize| -> Result<(Plan, Plan)> {
                let mut plan = PlanBuilder::new();
                let to = record(&mut plan, from, true);
                let one = rt.prepare(&plan)?;
                record(&mut plan, to, true);
                Ok((one, rt.prepare(&plan)?))
            };
            let ((one0, two0), (one1, two1)) = (plans(0)?, plans(1)?);
            let steps = StepPlans::PingPong {
                one: Box::new([one0, one1]),
                two: Box::new([two0, two1]),
            };
            (steps, current)
        } else {
            let mut plan = PlanBuilder::new();
            record_unfused(rt, &inputs, layout, &mut plan, &launch_boundary_values)?;
            launch_gauges(&mut plan, &cells[0]);
            (StepPlans::InPlace(rt.prepare(&plan)?), 0)
        };
        let mut solver = GpuSolver {
            rt: rt.clone(),
            n_cells,
            cells,
            current,
            control,
            counters,
            centroids: mesh.geom.centroids.clone(),
            labels: crate::mesh::Mesh {
                kinds: mesh.mesh.kinds.clone(),
                numbering: crate::mesh::FileNumbering {
                    nodes: Vec::new(),
                    ..mesh.mesh.numbering.clone()
                },
                ..crate::mesh::Mesh::new(2)
            },
            stop_level,
            steps,
            fused_words,
            gauges: gauge_kernel.map(|(_, _, g)| g),
        };
        solver.drain_gauges()?;
        Ok(solver)
    }

    /// Read the gauge samples taken since the last read back into the pending list and empty
    /// the GPU buffer (a no-op without gauges). Errors if samples were lost to a full buffer.
    fn drain_gauges(&mut self) -> Result<()> {
        let Some(g) = self.gauges.as_mut() else {
            return Ok(());
        };
        let st = self.rt.read::<GaugeState>(&g.state, 0, 1)?[0];
        if st.dropped > 0 {
            return Err(Error::Run(format!(
                "{} gauge samples were lost: a batch took more steps than the {} samples the \
                 buffer holds",
                st.dropped, g.capacity
            )));
        }
        if st.count == 0 {
            return Ok(());
        }
        let raw = self
            .rt
            .read::<[f32; 4]>(&g.samples, 0, 2 * g.n * st.count as usize)?;
        for sample in raw.chunks_exact(2 * g.n) {
            let cells = sample
                .chunks_exact(2)
                .map(|p| {
                    let (a, b) = (p[0], p[1]);
                    [a[1], a[2], a[3], b[0], b[1], b[2], b[3]].map(|v| v as f64)
                })
                .collect();
            g.pending.push(GaugeSample {
                t: sample[0][0] as f64,
                cells,
            });
        }
        let count_word = std::mem::offset_of!(GaugeState, count) / std::mem::size_of::<u32>();
        self.rt.write(&g.state, count_word, &[0u32])
    }

    /// The gauge samples read back so far (oldest first), leaving none pending.
    pub fn take_gauge_samples(&mut self) -> Vec<GaugeSample> {
        self.gauges
            .as_mut()
            .map(|g| std::mem::take(&mut g.pending))
            .unwrap_or_default()
    }

    /// Samples taken since the start of the run (the initial state included), 0 without gauges.
    pub fn gauge_samples_taken(&self) -> Result<u64> {
        match &self.gauges {
            Some(g) => Ok(self.rt.read::<GaugeState>(&g.state, 0, 1)?[0].total as u64),
            None => Ok(0),
        }
    }

    /// The most steps one queue call may take: a step takes at most one gauge sample, so a batch
    /// stays within the sample buffer.
    fn batch_limit(&self, max_batch: u32) -> u32 {
        let cap = self.gauges.as_ref().map_or(MAX_BATCH, |g| g.capacity);
        max_batch.clamp(1, MAX_BATCH).min(cap)
    }

    /// The device the solver runs on.
    pub fn device_name(&self) -> String {
        self.rt.name()
    }

    /// Set the time the next steps stop at (the last step is clamped to hit it exactly);
    /// ordered between the steps queued before and after.
    pub fn set_end_time(&mut self, t_end: f32) -> Result<()> {
        let word = std::mem::offset_of!(GpuControl, t_end) / std::mem::size_of::<f32>();
        self.rt.write(&self.control, word, &[t_end])
    }

    /// Queue `n` steps (steps past t_end are no-ops) without waiting for them: one queue call,
    /// two for the fused step when `n` is odd (pairs of steps, then one).
    pub fn queue_steps(&mut self, n: u32) -> Result<()> {
        match &self.steps {
            StepPlans::InPlace(plan) => self.rt.queue(plan, n),
            StepPlans::PingPong { one, two } => {
                self.rt.queue(&two[self.current], n / 2)?;
                if n % 2 == 1 {
                    self.rt.queue(&one[self.current], 1)?;
                    self.current = 1 - self.current;
                }
                Ok(())
            }
        }
    }

    /// The buffer holding the current state.
    fn state_buffer(&self) -> &Buffer {
        &self.cells[self.current]
    }

    /// Take exactly `n` steps without a time clamp (t_end = f32::MAX) and wait for them (gauge
    /// samples are read back between batches and kept pending). A step the fused path rejects
    /// (its lagged Δt above the Courant limit, see `swe_fused_clock`) is taken again.
    pub fn steps(&mut self, n: u32) -> Result<()> {
        self.set_end_time(f32::MAX)?;
        let target = self.read_control()?.steps as u64 + n as u64;
        loop {
            let done = self.read_control()?.steps as u64;
            if done >= target {
                return self.check_pending_stop();
            }
            let batch =
                ((target - done).min(u32::MAX as u64) as u32).min(self.batch_limit(MAX_BATCH));
            self.queue_steps(batch)?;
            self.settle()?;
            self.rt.wait()?;
            self.drain_gauges()?;
            let ctl = self.read_control()?;
            self.check_stops(&ctl)?;
            if ctl.steps as u64 >= target {
                return self.check_pending_stop();
            }
        }
    }

    /// After a rejected fused step the next pass must run before the state is read (it writes
    /// nothing, and the state before the rejected step becomes current again): queue it.
    fn settle(&mut self) -> Result<()> {
        let Some(words) = &self.fused_words else {
            return Ok(());
        };
        if self.rt.read::<u32>(words, 1, 1)?[0] != 0 {
            self.queue_steps(1)?;
        }
        Ok(())
    }

    /// Read the control block (time, last Δt, steps, counters); waits for the queued steps.
    pub fn read_control(&self) -> Result<GpuControl> {
        Ok(self.rt.read::<GpuControl>(&self.control, 0, 1)?[0])
    }

    /// The state, converted to f64 W = (h1, q1x, q1y, h2, q2x, q2y) per cell.
    pub fn read_state(&self) -> Result<Vec<[f64; 6]>> {
        let raw = self
            .rt
            .read::<[f32; 4]>(self.state_buffer(), 0, 2 * self.n_cells as usize)?;
        Ok(unpack_cells(&raw))
    }

    /// Take `n` steps (no clamp; the fused step takes `n` rounded up to even), timing the flux
    /// segment and the rest of each step separately on the device (wall clock for both
    /// together, in `flux`, without device timers).
    pub fn time_steps(&mut self, n: u32) -> Result<KernelTimes> {
        self.set_end_time(f32::MAX)?;
        let (t, steps) = match &self.steps {
            StepPlans::InPlace(plan) => (self.rt.time(plan, n)?, n),
            StepPlans::PingPong { two, .. } => {
                let pairs = n.div_ceil(2);
                (self.rt.time(&two[self.current], pairs)?, 2 * pairs)
            }
        };
        Ok(if t.from_device {
            KernelTimes {
                steps,
                flux: t.total("flux"),
                update: t.total("update"),
                timestamps: true,
            }
        } else {
            KernelTimes {
                steps,
                flux: t.sum(),
                update: 0.0,
                timestamps: false,
            }
        })
    }

    /// The device state between steps as words: cells, control block, event counters, and
    /// with gauges their [`GaugeState`] (samples taken; the samples themselves are read back
    /// first, so none is in the buffer).
    pub fn save_words(&mut self) -> Result<Vec<u32>> {
        self.drain_gauges()?;
        let mut words: Vec<u32> =
            self.rt
                .read(self.state_buffer(), 0, 8 * self.n_cells as usize)?;
        words.extend(self.rt.read::<u32>(&self.control, 0, CONTROL_WORDS)?);
        words.extend(
            self.rt
                .read::<u32>(&self.counters, 0, COUNTER_WORDS.len())?,
        );
        if let Some(g) = &self.gauges {
            words.extend(self.rt.read::<u32>(&g.state, 0, 4)?);
        }
        Ok(words)
    }

    /// Restore what [`GpuSolver::save_words`] saved (pending gauge samples are dropped: they
    /// belong to the run being replaced).
    pub fn restore_words(&mut self, words: &[u32]) -> Result<()> {
        let n = 8 * self.n_cells as usize;
        let (c, k) = (CONTROL_WORDS, COUNTER_WORDS.len());
        let expected = n + c + k + if self.gauges.is_some() { 4 } else { 0 };
        if words.len() != expected {
            return Err(Error::Invalid(format!(
                "a state of {} words, expected {expected} for {} cells{}",
                words.len(),
                self.n_cells,
                if self.gauges.is_some() {
                    " and gauges"
                } else {
                    ""
                }
            )));
        }
        self.rt.write(self.state_buffer(), 0, &words[..n])?;
        self.rt.write(&self.control, 0, &words[n..n + c])?;
        self.rt.write(&self.counters, 0, &words[n + c..n + c + k])?;
        if let Some(g) = self.gauges.as_mut() {
            g.pending.clear();
            self.rt.write(&g.state, 0, &words[n + c + k..])?;
        }
        Ok(())
    }

    /// The depth stop level of this run ([`super::depth_stop_level`] of its initial state).
    pub fn stop_level(&self) -> f64 {
        self.stop_level
    }

    /// Stop on what the control block says: the depth stop ([`GpuControl::depth_stop`]), or a
    /// cell gone NaN/Inf (a negative Δt or Δt_CFL, or a time that is not finite).
    fn check_stops(&self, ctl: &GpuControl) -> Result<()> {
        if ctl.depth_stop().is_some() {
            return self.check_pending_stop();
        }
        if ctl.dt < 0.0 || ctl.dt_cfl < 0.0 || !ctl.t.is_finite() {
            return Err(self.blow_up(ctl));
        }
        Ok(())
    }

    /// Where the depth stop fired, if it did, read from the update kernels' record (the
    /// control block gets it at the next time kernel).
    pub fn depth_stop(&self) -> Result<Option<DepthStop>> {
        let words = self.rt.read::<u32>(&self.counters, 4, 4)?;
        let ctl = GpuControl {
            stop_cell: words[0],
            stop_depth: from_ordered_bits(words[1]),
            stop_step: words[2] / 2,
            stop_t: f32::from_bits(words[3]),
            ..GpuControl::default()
        };
        Ok(ctl.depth_stop())
    }

    /// The unfused update records the depth stop after the time kernel of its step, so the
    /// control block shows it one step later: read the record itself (once per call of
    /// [`GpuSolver::advance_to`] or [`GpuSolver::steps`], not per batch) before returning.
    fn check_pending_stop(&self) -> Result<()> {
        match self.depth_stop()? {
            Some(stop) => {
                let label = self.labels.element_label(stop.cell);
                Err(stop.error(self.stop_level, &label, self.centroids[stop.cell]))
            }
            None => Ok(()),
        }
    }

    /// The error for a solution that blew up: time, step, the first cell with a NaN or Inf
    /// and its coordinates.
    pub(crate) fn blow_up(&self, ctl: &GpuControl) -> Error {
        let state = self.read_state().unwrap_or_default();
        let cell = state.iter().position(|w| w.iter().any(|v| !v.is_finite()));
        let at = cell.map_or(String::new(), |c| {
            let [x, y] = self.centroids[c];
            format!(
                ": {} at ({x:.4}, {y:.4}) has (h1, q1x, q1y, h2, q2x, q2y) = {:?}",
                self.labels.element_label(c),
                state[c]
            )
        });
        Error::Run(format!(
            "the solution blew up (NaN or Inf) at t = {} after {} steps{at}; \
             try a smaller CFL number or check the initial state",
            ctl.t, ctl.steps
        ))
    }

    /// Advance to `t_end`, queueing batches of at most `max_batch` (and [`MAX_BATCH`], and the
    /// gauge buffer's capacity) steps sized from the last Δt; `progress(control)` is called
    /// after each batch and stops the run there (at a step boundary, short of `t_end`) by
    /// returning false. Gauge samples are read back after every batch; it also returns short
    /// of `t_end` once [`GAUGE_PENDING_LIMIT`] of them wait to be taken. Errors
    /// ([`Error::Run`]) when a cell goes NaN or Inf (the time kernel then stops stepping), or
    /// when Δt is too small for the f32 clock to reach `t_end`.
    pub fn advance_to(
        &mut self,
        t_end: f64,
        max_batch: u32,
        progress: &mut dyn FnMut(&GpuControl) -> bool,
    ) -> Result<GpuControl> {
        let target = t_end as f32;
        self.set_end_time(target)?;
        let mut ctl = self.read_control()?;
        while ctl.t < target {
            let est = if ctl.last_dt > 0.0 {
                (((target - ctl.t) / ctl.last_dt).ceil() as u32).saturating_add(1)
            } else {
                1
            };
            self.queue_steps(est.clamp(1, self.batch_limit(max_batch)))?;
            self.settle()?;
            let next = self.read_control()?;
            self.drain_gauges()?;
            self.check_stops(&next)?;
            let stall = clock_stalls(t_end, next.last_dt as f64);
            if let Some(why) = stall.filter(|_| next.t < target) {
                return Err(Error::Run(format!(
                    "the run cannot reach t = {t_end} (at t = {} after {} steps): {why}; \
                     the initial state is probably unphysical (depths, velocities)",
                    next.t, next.steps
                )));
            }
            ctl = next;
            let pending = self.gauges.as_ref().map_or(0, |g| g.pending.len());
            if !progress(&ctl) || pending >= GAUGE_PENDING_LIMIT {
                break;
            }
        }
        self.check_pending_stop()?;
        Ok(ctl)
    }
}
