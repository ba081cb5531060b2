//! Adaptation of a running DG solution: indicator -> flags -> 2:1 smoothing -> coarsen and
//! refine with L2 projection -> compaction -> the new DG mesh (faces by color, halves,
//! neighbours, geometry). This is the f64 reference path; the solver stays on the device and
//! hands its coefficients over at every adaptation.

use super::gpu::{
    self, GpuAdaptOptions, GpuAdaptation, PhaseSeconds, Smoothed, SmoothingPasses, TreeCapacity,
    CLOCK_WORDS, QUEUE_SLOTS,
};
use super::indicator::{flags, gather, indicator, jumps, scatter, IndicatorField};
use super::projection::Projection;
use super::reorder::{self, far_fraction, GpuReorder, MortonFrame, ReorderPolicy};
use super::tree::{AdaptCounts, AdaptiveMesh, Compaction, Face, NONE};
use crate::error::{Error, Result};
use crate::runtime::scan::PrefixSum;
use crate::runtime::{DeviceTimer, Runtime};
use crate::solver::dg::basis::BasisTables;
use crate::solver::dg::gpu::{Capacity, GpuDg};
use crate::solver::dg::mesh::{element_geometry, DgMesh, EdgeInfo};
use std::time::Instant;

/// The reorder policy's far-face baseline right after a reorder: the far faces come one
/// adaptation late (with the smoothing's read-back), so the next adaptation reads the reorder's
/// result and takes it as the baseline (a checkpoint keeps the marker with the baseline).
pub const BASELINE_PENDING: f64 = -1.0;

/// How a DG run adapts its mesh.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AmrOptions {
    /// Levels of refinement above the base mesh (each level halves the element size).
    pub max_level: u8,
    /// Steps between adaptations; `None`: GK19's "the solution moves two cells", 4p + 4
    /// (8 / 12 / 16 / 20 for p = 1..4).
    pub every: Option<usize>,
    /// eps of GK19 section 4.8 in units of the indicator field; `None`: 2% of the field's
    /// range over the initial state's element means.
    pub threshold: Option<f64>,
    /// Refine above eps * delta, coarsen below eps / delta.
    pub delta: f64,
    pub field: IndicatorField,
    /// Add to h |grad q| the largest jump of q's element means across the faces
    /// ([`super::indicator::jumps`]): for steps that lie on element edges.
    pub jumps: bool,
    /// Adapt on the host (read the solution back, the f64 reference, write the new mesh)
    /// instead of on the device.
    pub on_host: bool,
    /// When device adaptations reorder the elements along a Morton curve
    /// ([`super::reorder`]); the host path keeps the compaction's order.
    pub reorder: ReorderPolicy,
    /// How an adaptation closes its holes, on the host and on the device ([`Compaction`]).
    pub compaction: Compaction,
    /// How the device's smoothing applies the 2:1 rules; `None`: by the levels and the
    /// backend ([`SmoothingPasses::for_levels`]).
    pub smoothing: Option<SmoothingPasses>,
}

impl Default for AmrOptions {
    fn default() -> Self {
        AmrOptions {
            max_level: 3,
            every: None,
            threshold: None,
            delta: 2.0,
            field: IndicatorField::Density,
            jumps: false,
            on_host: false,
            reorder: ReorderPolicy::Auto,
            compaction: Compaction::default(),
            smoothing: None,
        }
    }
}

impl AmrOptions {
    /// The device smoothing's passes on `rt`: the chosen ones, or those for the levels and
    /// the cost of its dependent launches ([`SmoothingPasses::for_levels`]).
    pub fn device_smoothing(&self, rt: &Runtime) -> SmoothingPasses {
        self.smoothing.unwrap_or_else(|| {
            SmoothingPasses::for_levels(self.max_level, rt.cheap_dependent_launches())
        })
    }

    /// Steps between adaptations at order `p`.
    pub fn steps_between(&self, p: usize) -> usize {
        self.every.unwrap_or(4 * p + 4).max(1)
    }

    /// Reject what cannot adapt, naming the key.
    pub fn validate(&self, order: usize) -> Result<()> {
        let bad = |msg: String| Err(Error::Invalid(format!("adaptive refinement: {msg}")));
        if order == 0 {
            return bad("needs order >= 1 (the indicator is a gradient)".into());
        }
        if self.max_level > 12 {
            return bad(format!("levels must be 0..=12, got {}", self.max_level));
        }
        if self.every == Some(0) {
            return bad("every (steps between adaptations) must be at least 1".into());
        }
        if !(self.delta >= 1.0 && self.delta.is_finite()) {
            return bad(format!("delta must be >= 1, got {}", self.delta));
        }
        if let Some(t) = self.threshold {
            if !(t > 0.0 && t.is_finite()) {
                return bad(format!("threshold must be positive, got {t}"));
            }
        }
        Ok(())
    }
}

/// Totals over a run's adaptations, with wall seconds per phase (GK19 Table 2's breakdown).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct AmrStats {
    pub adaptations: usize,
    pub refined: usize,
    pub coarsened: usize,
    /// The host's adaptations' smoothing passes (up to the first that changed nothing).
    pub smoothing_passes: usize,
    /// The adaptations on the device; their smoothing stages that could raise
    /// ([`Smoothed::stages`]) and the slots their smoothing in rounds handed to its last
    /// workgroup ([`Smoothed::handed_off`]), all and the most of one.
    pub device_adaptations: usize,
    pub device_smoothing_stages: usize,
    pub device_smoothing_stages_max: usize,
    pub device_smoothing_handed_off: usize,
    pub device_smoothing_handed_off_max: usize,
    /// Device adaptations whose smoothed flags coarsened and refined nothing: the mesh and the
    /// solution stayed as they were, so the phases after the smoothing did not run.
    pub device_unchanged: usize,
    /// The host's adaptations (`adaptations - device_adaptations`): the most passes of one,
    /// and the slots the same smoothings hand off in rounds as the device runs them
    /// ([`AdaptiveMesh::smooth_flags_in_rounds`]), all and the most of one.
    pub host_smoothing_passes_max: usize,
    pub rounds_smoothing_handed_off: usize,
    pub rounds_smoothing_handed_off_max: usize,
    /// Indicator and flags.
    pub indicator_seconds: f64,
    /// 2:1 smoothing of the flags.
    pub smoothing_seconds: f64,
    /// Coarsening, refinement with projection, compaction.
    pub adapt_seconds: f64,
    /// Faces, colors, neighbours and geometry of the new mesh.
    pub connectivity_seconds: f64,
    /// Solution read-back and the new mesh and solution written to the device.
    pub transfer_seconds: f64,
    /// Trees put on the device and the adaptation's kernels taken (at the first device
    /// adaptation and when the buffers grow; a [`crate::solver::dg::Simulation`] builds the
    /// kernels ahead, with its solver's, so there they are found built).
    pub setup_seconds: f64,
    /// Morton reorders of the elements, and their seconds (waited for).
    pub reorders: usize,
    pub reorder_seconds: f64,
    /// Fraction of the faces whose slots lie far apart ([`super::reorder::FAR_SLOTS`]) as the
    /// last device adaptation read it: one adaptation late, that of the mesh it started from
    /// (the previous adaptation's, after its reorder if one ran), counted on the device and read
    /// with the smoothing's counters so that an adaptation reads back once.
    pub far_fraction: f64,
    /// Times the trees were put on the device (the first device adaptation, then each time the
    /// buffers grew): the adaptations that read more back than the counters.
    pub setups: usize,
    /// Device time of the device adaptations' work queued untimed (a run's): their flags,
    /// smoothing, coarsening, refinement, compaction, connectivity and reorders, each plan's
    /// span between timestamps taken once the work before it was done
    /// ([`crate::runtime::DeviceTimer`]), and the spans read. Queued behind the steps, that
    /// work is not in [`AmrStats::seconds`] (the host's time in the adaptation calls) but in the
    /// run's stepping time, where it is what the adaptation costs the device; 0 without
    /// timestamps and on the host path. Only one device adaptation in
    /// [`DEVICE_TIMING_EVERY`] is timed (timestamps cost a few µs of device time each):
    /// `device_timed` of them.
    pub device_seconds: f64,
    pub device_spans: usize,
    pub device_timed: usize,
}

impl AmrStats {
    /// All phases together.
    pub fn seconds(&self) -> f64 {
        self.indicator_seconds
            + self.smoothing_seconds
            + self.adapt_seconds
            + self.connectivity_seconds
            + self.transfer_seconds
            + self.setup_seconds
            + self.reorder_seconds
    }
}

/// The adaptive mesh of a DG run with its projection and options.
#[derive(Debug)]
pub struct Adaptivity {
    mesh: AdaptiveMesh,
    /// The faces of `mesh` as it stands (the new mesh's faces are the next smoothing's).
    faces: Vec<Face>,
    projection: Projection,
    pub options: AmrOptions,
    /// The threshold in use (resolved from the initial state when not given).
    pub threshold: f64,
    pub stats: AmrStats,
    /// The trees on the device once the run adapts there.
    device: Option<GpuAdaptation>,
    /// The device reorder, unless the policy is never.
    reorder: Option<GpuReorder>,
    /// Device adaptations since the last reorder, and the far fraction right after it.
    since_reorder: usize,
    /// [`BASELINE_PENDING`] right after a reorder, until the next adaptation reads its result.
    far_baseline: f64,
    /// Whether `mesh` lags the device's trees.
    host_stale: bool,
    /// The box the reorder's Morton keys are computed in, fixed when the trees first go to
    /// the device (from the host's f64 trees) and kept for the run: a later attach (more room)
    /// or a restart would otherwise take it from the device's f32 trees, and keys near a grid
    /// line could order differently from a run never stopped.
    frame: Option<MortonFrame>,
    /// Spans of the device adaptations' untimed work ([`AmrStats::device_seconds`]), from the
    /// first attach (None without timestamps), and which adaptations it times: one in
    /// `timing_every` (0: none).
    timer: Option<DeviceTimer>,
    timing_every: usize,
    /// Device adaptations since the trees last went to the device.
    since_attach: usize,
}

/// A run times the device work of one adaptation in this many: timestamps around its plans
/// cost a few µs of device time each (3-8 µs an adaptation on an H200 at 33k elements,
/// BENCHMARKS.md session 23), which the others are spared.
pub const DEVICE_TIMING_EVERY: usize = 8;
/// Adaptations after the trees go to the device that are never timed: their plans' first
/// queues pay one-time costs (on CUDA the second queue of a plan captures its graph, host work
/// the device would wait on inside the span).
pub const DEVICE_TIMING_WARMUP: usize = 2;

/// Spans a device timer holds between two reads: read when fewer than two adaptations'
/// ([`SPANS_PER_ADAPTATION`] each) are left, so no timed adaptation's work goes untimed.
const TIMER_SPANS: u32 = 256;
/// The most spans one device adaptation takes: its flags, its smoothing (or the two as one),
/// the adaptation and a reorder.
const SPANS_PER_ADAPTATION: usize = 4;

/// Solver buffers for `n` elements adapting on the device: room for the mesh to double (with
/// the three extra slots of each refined element until compaction) before the buffers must
/// grow, and three faces per slot.
pub fn device_capacity(n: usize) -> Capacity {
    let elements = 2 * n.max(1);
    Capacity {
        elements,
        edges: 3 * elements,
    }
}

/// Build the kernels of the device adaptation of order `p` on a solver of `ne` element slots
/// with `compaction`, `smoothing` and the faces in color order or not (`color_order`,
/// [`gpu::writes_color_order`] of its layout), the prefix sums' and, with `reorder`, the Morton
/// reorder's, into `rt`'s kernel cache ([`Runtime::kernel_list`], in parallel), so that the
/// first [`GpuAdaptation::new`] and [`GpuReorder::new`] find them there: an adaptive run builds
/// them while it builds its solver ([`crate::solver::dg::Simulation::new`]) instead of at its
/// first adaptation.
pub fn build_kernels_ahead(
    rt: &Runtime,
    p: usize,
    ne: usize,
    compaction: Compaction,
    smoothing: SmoothingPasses,
    color_order: bool,
    reorder: bool,
) -> Result<()> {
    let np = (p + 1) * (p + 2) / 2;
    let mut specs = gpu::kernel_specs(np, ne, compaction, smoothing, false, color_order);
    specs.extend(PrefixSum::kernel_specs());
    if reorder {
        specs.extend(reorder::kernel_specs(np, ne));
    }
    rt.kernel_list(&specs).map(|_| ())
}

/// What a device adaptation did.
#[derive(Clone, Debug, PartialEq)]
pub enum DeviceAdaptation {
    /// Adapted: the counts and, when timed, the seconds of each phase.
    Done(AdaptCounts, PhaseSeconds),
    /// Nothing changed: the buffers need room for what the smoothed flags ask for.
    NeedsRoom(Smoothed),
}

impl Adaptivity {
    /// Trees over `base` for order `p`.
    pub fn new(base: &DgMesh, p: usize, options: AmrOptions) -> Result<Adaptivity> {
        options.validate(p)?;
        let mut mesh = AdaptiveMesh::new(base, options.max_level)?;
        mesh.compaction = options.compaction;
        Ok(Adaptivity {
            faces: mesh.faces()?,
            mesh,
            projection: Projection::new(p),
            threshold: options.threshold.unwrap_or(f64::NAN),
            options,
            stats: AmrStats::default(),
            device: None,
            reorder: None,
            since_reorder: 0,
            far_baseline: 0.0,
            host_stale: false,
            frame: None,
            timer: None,
            timing_every: DEVICE_TIMING_EVERY,
            since_attach: 0,
        })
    }

    /// Time the device work of one adaptation in `every` (0: none; the default is
    /// [`DEVICE_TIMING_EVERY`]).
    pub fn set_device_timing(&mut self, every: usize) {
        self.timing_every = every;
    }

    /// Whether the next device adaptation is timed: one in `timing_every` after the
    /// [`DEVICE_TIMING_WARMUP`] that follow each attach.
    fn times_next(&self) -> bool {
        let k = self.since_attach;
        self.timing_every > 0
            && k >= DEVICE_TIMING_WARMUP
            && (k - DEVICE_TIMING_WARMUP) % self.timing_every == 0
    }

    /// Levels of the active elements, by slot.
    pub fn levels(&self) -> Vec<u8> {
        (0..self.mesh.num_active())
            .map(|i| self.mesh.level(i))
            .collect()
    }

    /// The DG mesh of the active elements: geometry per slot, faces grouped by color (GK19's
    /// edge reordering: each color's launch is dense), within a color by left slot.
    pub fn dg_mesh(&self) -> Result<DgMesh> {
        build_dg_mesh(&self.mesh, &self.faces)
    }

    /// Resolve the initial state: project it (`project(mesh)` gives `c[eq][k][i]`), refine (no
    /// coarsening: the state is projected anew each time), and repeat until no element is
    /// refined, at most `max_level` times, so the initial condition is represented on the
    /// finest elements it asks for.
    pub fn initial(
        &mut self,
        tables: &BasisTables,
        project: impl Fn(&DgMesh) -> Vec<f64>,
    ) -> Result<(DgMesh, Vec<f64>)> {
        let mut dm = self.dg_mesh()?;
        let mut c = project(&dm);
        if self.threshold.is_nan() {
            self.threshold = default_threshold(&dm, tables, self.options.field, &c);
        }
        for _ in 0..self.options.max_level {
            let (next, _, counts) = self.adapt_with(tables, &dm, &c, false)?;
            dm = next;
            c = project(&dm);
            if counts.refined == 0 {
                break;
            }
        }
        Ok((dm, c))
    }

    /// One adaptation of the solution `c` (`c[eq][k][i]` on `dm`, the current DG mesh):
    /// returns the new mesh, the projected coefficients and what changed.
    pub fn adapt(
        &mut self,
        tables: &BasisTables,
        dm: &DgMesh,
        c: &[f64],
    ) -> Result<(DgMesh, Vec<f64>, AdaptCounts)> {
        self.adapt_with(tables, dm, c, true)
    }

    fn adapt_with(
        &mut self,
        tables: &BasisTables,
        dm: &DgMesh,
        c: &[f64],
        coarsen: bool,
    ) -> Result<(DgMesh, Vec<f64>, AdaptCounts)> {
        let mut clock = Instant::now();
        let mut lap = || {
            let now = Instant::now();
            let s = (now - clock).as_secs_f64();
            clock = now;
            s
        };
        let np = tables.np;
        if dm.num_elements != self.mesh.num_active() || c.len() != 4 * np * dm.num_elements {
            return Err(Error::Invalid(format!(
                "adapt: a solution of {} values on {} elements, the adaptive mesh has {}",
                c.len(),
                dm.num_elements,
                self.mesh.num_active()
            )));
        }
        let mut coef = gather(c, np);
        let mut eps = indicator(tables, self.options.field, &coef, |i| {
            (dm.inv_jacobian[i], dm.min_height[i])
        });
        if self.options.jumps {
            let jump = jumps(self.options.field, &coef, &dm.neighbors);
            eps.iter_mut().zip(jump).for_each(|(e, j)| *e += j);
        }
        let mut f = flags(&eps, self.threshold, self.options.delta);
        if !coarsen {
            f.iter_mut().for_each(|x| *x = (*x).max(0));
        }
        self.stats.indicator_seconds += lap();
        let start = f.clone();
        let passes = self.mesh.smooth_flags(&self.faces, &mut f);
        self.stats.smoothing_seconds += lap();
        self.count_hand_offs_in_rounds(start, &f)?;
        // Not the path's work: a statistic of the device's smoothing.
        let _untimed = lap();
        let counts = self.mesh.adapt(&f, &mut coef, &self.projection)?;
        let c = scatter(&coef, np);
        self.stats.adapt_seconds += lap();
        self.faces = self.mesh.faces()?;
        let next = self.dg_mesh()?;
        self.stats.connectivity_seconds += lap();
        self.stats.adaptations += 1;
        self.stats.refined += counts.refined;
        self.stats.coarsened += counts.coarsened;
        self.stats.smoothing_passes += passes;
        self.stats.host_smoothing_passes_max = self.stats.host_smoothing_passes_max.max(passes);
        Ok((next, c, counts))
    }

    /// Smooth `start` again in rounds as the device does, which must give `smoothed` (both are
    /// the least admissible flags above `start`), and count the slots handed off.
    fn count_hand_offs_in_rounds(&mut self, mut start: Vec<i8>, smoothed: &[i8]) -> Result<()> {
        let handed = self
            .mesh
            .smooth_flags_in_rounds(&self.faces, &mut start, QUEUE_SLOTS)
            .slots;
        if start != smoothed {
            return Err(Error::Run(
                "adapt: the smoothing in rounds gave other flags than the ordered one".into(),
            ));
        }
        self.stats.rounds_smoothing_handed_off += handed;
        self.stats.rounds_smoothing_handed_off_max =
            self.stats.rounds_smoothing_handed_off_max.max(handed);
        Ok(())
    }

    /// Count seconds of moving data to and from the device.
    pub fn add_transfer_seconds(&mut self, seconds: f64) {
        self.stats.transfer_seconds += seconds;
    }

    /// Count seconds of putting the trees on the device.
    pub fn add_setup_seconds(&mut self, seconds: f64) {
        self.stats.setup_seconds += seconds;
    }

    /// Whether the trees are on the device.
    pub fn on_device(&self) -> bool {
        self.device.is_some()
    }

    /// The flags and the smoothing of the next device adaptation of the solution in the solver
    /// the trees were attached to, queued behind the steps queued so far and read back with a
    /// copy of its clock, with the adaptation itself queued behind the read-back, to run on
    /// the device if the clock reached `due_steps` steps and the smoothed flags change
    /// something the buffers hold ([`GpuAdaptation::smooth_with_clock`]): the clock's words and
    /// the smoothing, for [`Adaptivity::adapt_on_device`], which must come next when the
    /// adaptation ran ([`Smoothed::ran_ahead`]); `None` (nothing queued) when the trees are not
    /// on the device or adapt on the host. A run so waits once per adaptation cycle.
    pub fn smooth_with_clock(
        &self,
        due_steps: u32,
    ) -> Result<Option<([f32; CLOCK_WORDS], Smoothed)>> {
        match &self.device {
            Some(device) if !self.options.on_host => {
                device.timer().time_next(self.times_next());
                Ok(Some(device.smooth_with_clock(due_steps)?))
            }
            _ => Ok(None),
        }
    }

    /// Put the trees on the device for `gpu`, whose mesh is `dm` (this adaptive mesh's active
    /// elements, as [`Adaptivity::dg_mesh`] gives them), with id room to refine every element.
    pub fn attach_device(&mut self, gpu: &GpuDg, dm: &DgMesh) -> Result<()> {
        self.sync_host()?;
        let n = self.mesh.num_active();
        let capacity =
            TreeCapacity::with_room(n, self.mesh.element_ids(), self.mesh.edge_ids(), 1.5);
        self.attach_device_with(gpu, dm, capacity)
    }

    /// [`Adaptivity::attach_device`] with trees of `capacity` (a restart's: the capacity the
    /// run had).
    pub fn attach_device_with(
        &mut self,
        gpu: &GpuDg,
        dm: &DgMesh,
        capacity: TreeCapacity,
    ) -> Result<()> {
        self.sync_host()?;
        self.read_device_time()?;
        self.device = None;
        self.reorder = None;
        self.since_attach = 0;
        self.stats.setups += 1;
        let options = GpuAdaptOptions {
            field: self.options.field,
            threshold: self.threshold,
            delta: self.options.delta,
            jumps: self.options.jumps,
            smoothing: self.options.device_smoothing(gpu.runtime()),
            host_flags: false,
        };
        let mut device = GpuAdaptation::new(
            gpu.runtime(),
            &self.mesh,
            gpu,
            &dm.color_offsets,
            self.projection.p,
            options,
            capacity,
        )?;
        if self.timer.is_none() {
            self.timer = gpu.runtime().device_timer(TIMER_SPANS);
        }
        device.set_timer(self.timer.clone());
        // The first adaptation's late far faces: those of the mesh uploaded.
        device.set_far_faces(super::reorder::far_faces(dm))?;
        let frame = *self
            .frame
            .get_or_insert_with(|| MortonFrame::of(&self.mesh));
        if self.options.reorder != ReorderPolicy::Never {
            let mut reorder =
                GpuReorder::new(gpu.runtime(), &device, gpu, self.projection.p, &frame)?;
            reorder.set_timer(self.timer.clone());
            self.reorder = Some(reorder);
        }
        self.device = Some(device);
        Ok(())
    }

    /// The trees on the device (None before the first device adaptation and on the host
    /// path).
    pub fn device(&self) -> Option<&GpuAdaptation> {
        self.device.as_ref()
    }

    /// Device adaptations since the last reorder and the far fraction right after it: what
    /// the reorder policy decides from ([`BASELINE_PENDING`] when a reorder ran after the last
    /// adaptation: the next adaptation reads its result, one late, and takes it).
    pub fn reorder_state(&self) -> (usize, f64) {
        (self.since_reorder, self.far_baseline)
    }

    /// The host's trees (they lag the device's until [`Adaptivity::sync_host`]).
    pub fn host_mesh(&self) -> &AdaptiveMesh {
        &self.mesh
    }

    /// The Morton frame of the reorder, once the trees have been on the device.
    pub fn morton_frame(&self) -> Option<MortonFrame> {
        self.frame
    }

    /// Continue from `mesh` (a checkpoint's trees) with the threshold the run had (the totals
    /// keep counting this process's adaptations) and its Morton frame (None before the trees
    /// first went to the device); the trees go to the device again at the next device
    /// adaptation (or by [`Adaptivity::restore_device`]).
    pub fn restore(
        &mut self,
        mesh: AdaptiveMesh,
        threshold: f64,
        (since_reorder, far_baseline): (usize, f64),
        frame: Option<MortonFrame>,
    ) -> Result<()> {
        self.read_device_time()?;
        self.faces = mesh.faces()?;
        self.mesh = mesh;
        self.mesh.compaction = self.options.compaction;
        self.threshold = threshold;
        self.frame = frame;
        (self.since_reorder, self.far_baseline) = (since_reorder, far_baseline);
        self.device = None;
        self.reorder = None;
        self.host_stale = false;
        Ok(())
    }

    /// Put the trees on the device for `gpu` (whose mesh is `dm`) as a checkpoint holds them:
    /// trees of `capacity`, then `words` ([`GpuAdaptation::state_words`]) written over them, so
    /// free rings, ids and f32 vertices are the device's word for word; the host's trees are
    /// then read back from them.
    pub fn restore_device(
        &mut self,
        gpu: &GpuDg,
        dm: &DgMesh,
        capacity: TreeCapacity,
        words: &[u32],
    ) -> Result<()> {
        self.attach_device_with(gpu, dm, capacity)?;
        if let Some(device) = &self.device {
            device.set_state_words(words)?;
        }
        self.host_stale = true;
        self.sync_host()
    }

    /// One adaptation on the device of the solution in `gpu` (which moves onto the new mesh);
    /// the host's trees lag until [`Adaptivity::sync_host`]. It starts from `smoothed`, the
    /// smoothing [`Adaptivity::smooth_with_clock`] read back for this solution with nothing
    /// queued since, or else computes the flags and smooths them. With `timed`, also the
    /// seconds of each phase (slower: the phases are waited for apart; `smoothed` is not used).
    /// When the buffers cannot hold what the flags ask for, nothing changes and the answer says
    /// how much is needed.
    pub fn adapt_on_device(
        &mut self,
        gpu: &mut GpuDg,
        timed: bool,
        smoothed: Option<Smoothed>,
    ) -> Result<DeviceAdaptation> {
        let device = self.device.as_ref().ok_or_else(|| {
            Error::Invalid("adapt_on_device: the trees are not on the device".into())
        })?;
        let clock = Instant::now();
        let mut phases = PhaseSeconds::new();
        let mut timing = timed.then_some(&mut phases);
        // A smoothing whose adaptation ran ahead is used even when timed: its phases ran.
        let smoothed = match smoothed {
            Some(queued) if !timed || queued.ran_ahead() => queued,
            _ => {
                device.timer().time_next(self.times_next());
                device.flag_and_smooth(timing.as_deref_mut())?
            }
        };
        if !device.has_room(&smoothed) {
            return Ok(DeviceAdaptation::NeedsRoom(smoothed));
        }
        let smoothing = clock.elapsed().as_secs_f64();
        self.stats.smoothing_seconds += smoothing;
        // An adaptation that coarsens and refines nothing stops here (GpuAdaptation::apply).
        let report = device.apply(gpu, &smoothed, timing.as_deref_mut())?;
        let changes = report.counts != AdaptCounts::default();
        if changes {
            self.stats.adapt_seconds += clock.elapsed().as_secs_f64() - smoothing;
            self.since_reorder += 1;
        } else {
            self.stats.device_unchanged += 1;
        }
        // The far faces come one adaptation late, with the smoothing's read-back: those of the
        // mesh this adaptation started from, so after a reorder they are its result, the new
        // baseline.
        let far = far_fraction(report.far_faces, report.faces);
        self.stats.far_fraction = far;
        if self.far_baseline < 0.0 {
            self.far_baseline = far;
        }
        if let Some(reorder) = &self.reorder {
            // Only an adaptation that changed the mesh counts towards a reorder, and none is
            // due while nothing changed since the last one (the mesh is in its order).
            if self.since_reorder > 0
                && self
                    .options
                    .reorder
                    .due(self.since_reorder, far, self.far_baseline)
            {
                let started = Instant::now();
                reorder.timer().time_next(device.timer().timing());
                reorder.run(timing)?;
                self.far_baseline = BASELINE_PENDING;
                self.stats.reorders += 1;
                self.stats.reorder_seconds += started.elapsed().as_secs_f64();
                self.since_reorder = 0;
            }
        }
        self.stats.device_timed += usize::from(device.timer().timing());
        device.timer().time_next(false);
        self.since_attach += 1;
        self.stats.adaptations += 1;
        self.stats.refined += report.counts.refined;
        self.stats.coarsened += report.counts.coarsened;
        self.stats.device_adaptations += 1;
        self.stats.device_smoothing_stages += report.smoothing_stages;
        self.stats.device_smoothing_stages_max = self
            .stats
            .device_smoothing_stages_max
            .max(report.smoothing_stages);
        self.stats.device_smoothing_handed_off += report.smoothing_handed_off;
        self.stats.device_smoothing_handed_off_max = self
            .stats
            .device_smoothing_handed_off_max
            .max(report.smoothing_handed_off);
        self.host_stale |= changes;
        // Read the spans while the next adaptation's still fit (a wait once in many).
        if let Some(timer) = &self.timer {
            if timer.len()? + 2 * SPANS_PER_ADAPTATION > TIMER_SPANS as usize {
                self.read_device_time()?;
            }
        }
        Ok(DeviceAdaptation::Done(report.counts, phases))
    }

    /// Add the device time of the adaptations' work queued since the last read to
    /// [`AmrStats::device_seconds`] (waits for that work; nothing without a timer).
    pub fn read_device_time(&mut self) -> Result<()> {
        let Some(device) = &self.device else {
            return Ok(());
        };
        let spans = device.drain_timer()?;
        self.stats.device_seconds += spans.iter().sum::<f64>();
        self.stats.device_spans += spans.len();
        Ok(())
    }

    /// Bring the host's trees up to the device's (a read-back after device adaptations).
    pub fn sync_host(&mut self) -> Result<()> {
        if !self.host_stale {
            return Ok(());
        }
        let clock = Instant::now();
        let device = self
            .device
            .as_ref()
            .ok_or_else(|| Error::Invalid("sync_host: the trees are not on the device".into()))?;
        self.mesh = device.download()?;
        self.faces = self.mesh.faces()?;
        self.host_stale = false;
        self.stats.transfer_seconds += clock.elapsed().as_secs_f64();
        Ok(())
    }
}

/// eps = 2% of the indicator field's range over the element means (1e-12 when uniform).
fn default_threshold(dm: &DgMesh, tables: &BasisTables, field: IndicatorField, c: &[f64]) -> f64 {
    let np = tables.np;
    let ne = dm.num_elements;
    let phi0 = crate::solver::dg::basis::PHI0;
    let values = (0..ne).map(|i| {
        let u: [f64; 4] = std::array::from_fn(|eq| c[eq * np * ne + i] * phi0);
        field.value(&u)
    });
    let (lo, hi) = values.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
        (lo.min(v), hi.max(v))
    });
    (0.02 * (hi - lo)).max(1e-12)
}

impl AdaptiveMesh {
    /// The DG mesh of the active elements: geometry per slot, faces grouped by color (GK19's
    /// edge reordering: each color's launch is dense), within a color by left slot, and up
    /// to six face neighbours per element.
    pub fn dg_mesh(&self) -> Result<DgMesh> {
        build_dg_mesh(self, &self.faces()?)
    }
}

fn build_dg_mesh(am: &AdaptiveMesh, faces: &[Face]) -> Result<DgMesh> {
    let n = am.num_active();
    let mut vertices = Vec::with_capacity(n);
    let mut inv_jacobian = Vec::with_capacity(n);
    let mut det = Vec::with_capacity(n);
    let mut min_height = Vec::with_capacity(n);
    for i in 0..n {
        let v = am.vertices(i);
        let (g, d, h) = element_geometry(&v);
        vertices.push(v);
        inv_jacobian.push(g);
        det.push(d);
        min_height.push(h);
    }
    let num_colors = 2 * am.base_colors as usize;
    // By color, within a color by left slot (unique: an element has one face per color), as
    // the GPU's scan over (color, slot) numbers them: each color's launch reads its left
    // elements in memory order.
    let mut order: Vec<usize> = (0..faces.len()).collect();
    order.sort_by_key(|&f| (faces[f].color, faces[f].left));
    let mut color_offsets = vec![0usize; num_colors + 1];
    for f in faces {
        color_offsets[f.color as usize + 1] += 1;
    }
    for c in 0..num_colors {
        color_offsets[c + 1] += color_offsets[c];
    }
    // Neighbour slots: side s holds the whole face or the first half, s + 3 the second half.
    let mut neighbors = vec![[None; 6]; n];
    let mut put = |i: usize, slot: usize, other: usize| -> Result<()> {
        if neighbors[i][slot].replace(other).is_some() {
            return Err(Error::Invalid(format!(
                "adaptive mesh: element {i} has two faces on neighbour slot {slot}"
            )));
        }
        Ok(())
    };
    let mut edges = Vec::with_capacity(faces.len());
    for &k in &order {
        let f = &faces[k];
        let (l, r) = (f.left as usize, f.right);
        if r != NONE {
            put(l, f.left_local as usize, r as usize)?;
            let second = usize::from(f.right_half == 2);
            put(r as usize, f.right_local as usize + 3 * second, l)?;
        }
        edges.push(EdgeInfo {
            left: l,
            right: (r != NONE).then_some(r as usize),
            left_local: f.left_local as usize,
            right_local: f.right_local as usize,
            right_half: f.right_half,
            kind: f.kind,
            state: f.state,
            normal: f.normal,
            length: f.length,
            midpoint: f.midpoint,
        });
    }
    Ok(DgMesh {
        num_elements: n,
        vertices,
        inv_jacobian,
        det,
        min_height,
        neighbors,
        edges,
        color_offsets,
    })
}
