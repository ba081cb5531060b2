//! The adaptation on the device (GK19 section 4): flags from the indicator, 2:1 smoothing,
//! cluster and refinement numbering by scans, coarsening and refinement in place with the L2
//! projection, compaction, and the new mesh's geometry, faces (by color), neighbours and launch
//! records, written straight into the DG solver's buffers. The host reads the counters back
//! once per adaptation, after smoothing (what the smoothed flags ask for, is there room), in
//! a run together with the clock ([`GpuAdaptation::smooth_with_clock`]); the new
//! element count follows from them, and the solver's kernels take their element count and face
//! ranges from the launch records, so nothing else comes back. In a run the adaptation is
//! queued behind that read-back, before the host has the counts, so the device adapts while
//! the host waits instead of idling until the host's next submission: the smoothing's last
//! scan decides on the device whether it runs ([`AdaptDecision`]: due, room, anything to
//! change), every later kernel returns at once otherwise, and the host, deciding the same from
//! the counts, checks that they agree. Every kernel
//! (`shaders/amr_*.wgsl`, CUDA twins in `shaders/cuda/`) does what the f64 reference
//! [`AdaptiveMesh`] does, in the same order of ids and slots, so a read-back tree equals the
//! reference's.
//!
//! The compaction follows the mesh's [`Compaction`]. In order (the default), `amr_mark` also
//! marks the slots a coarsened cluster vacates (children 1..3), so the marks' scan gives every
//! old slot p the new slot p + 3 (refined before p) - (vacated before p) of what came from it;
//! `amr_refine` stages each element there (a refined element's children, else the element in
//! slot p, a coarsened parent included) in the solver's stage register
//! ([`GpuDg::STAGING_REGISTER`]), with its id, and `amr_geometry` moves it into its slot: no
//! compaction scan and no `amr_compact`. Since each slot's thread then marks its own slot's
//! faces, `amr_geometry` numbers them too, without a face scan: its workgroups of 256 slots
//! count their faces per color in workgroup memory, its last workgroup (a ticket) turns the
//! counts into each workgroup's first numbers and does the bookkeeping `amr_scan` 2 does after
//! GK19's compaction (shaders/common/amr_book.wgsl), and `amr_faces` numbers the faces within
//! each workgroup by a scan in workgroup memory (shaders/common/group_scan.wgsl). GK19's
//! Algorithm 4 scans the holes and the slots past the new count and moves the latter into the
//! former (`amr_compact`, then `amr_geometry`), whose face marks `amr_scan` 2 then scans.
//!
//! At these sizes every phase is bound by its launches and by chains of dependent loads, so the
//! phases are few and their loads batched: in a run, pass 0 of the smoothing computes the flags
//! itself (amr_flag's indicator, `shaders/common/amr_indicator.wgsl`), the 2:1 rules after pass 0
//! are a launch per level below 8 levels on CUDA and 5 on wgpu, whose dependent launches each pay a
//! barrier (the stages, each over all faces, each settling a level for good;
//! [`SmoothingPasses::for_levels`]) and one launch from there whatever the levels (amr_settle: a
//! thread settles its slot's faces and a workgroup settles the slots that rise in rounds, until a
//! round raises nothing; [`SmoothingPasses`]); GK19's Algorithm 2 repeats a launch per color until
//! nothing changes: the colors keep its plain read-modify-writes race-free, but the rules only
//! raise flags and end at the least admissible flags whatever the order of the raises, so atomic
//! raises need no colors, and neither the stages nor a rise settled by whoever made it need a
//! convergence check (the colors stay for the surface integral, whose scatter they keep race-free);
//! the coarsening's decisions (which split edges a cluster frees) and the edges the refinement
//! splits (which the smoothed flags tell before the coarsening runs) are marked with the clusters
//! and share their scan, every scan is one launch (amr_scan: `scan_blocks` with its parts,
//! src/runtime/scan.rs) whose last workgroup also does the bookkeeping between phases from the
//! scan's total and parts, the compaction's scan computes its marks as it reads them (a pipeline of
//! its own), the kernels reading a scan's numbers add its block offsets themselves (no launch of
//! their own), the geometry shares a launch with the face marks and the compaction's moves (a moved
//! element's thread writes the hole's slot), and the faces kernel (a thread per slot writing the
//! faces its element owns) also writes the split masks and counts the far faces. Where the mesh is
//! large enough to be bound by the sectors its scattered loads pull in (240k elements on an H200),
//! the kernels read few and neighbouring words: a smoothing stage reads one word per side of a face
//! and amr_settle one per face neighbour (each slot's level + flag, kept apart from its flag and
//! tree records).
//!
//! The launches over the current mesh (the flag, the smoothing) carry the solver's bounds of
//! its counts ([`CountBounds`]), so CUDA, which cannot size a grid from a launch record, starts
//! the threads of the mesh and not of the buffers' capacity. The launches sized for the buffers
//! do the work of the slots and edge ids in use only: `amr_mark` strides the edge ids in use
//! over at most 2 NE threads, `amr_scan` 0 (a pipeline of its own, `LIVE_BLOCKS`) skips the
//! blocks past the active slots and the edge ids in use, and `amr_geometry` returns past the
//! slots in use (BENCHMARKS.md, session 31). The smoothing's read-back checks
//! what the last adaptation left against them, and that its faces cover every element side
//! (6 half sides per element, counted by the faces kernel): a face lost from the trees is an
//! error there, not a hole in the mesh.

use super::indicator::IndicatorField;
use super::projection::Projection;
use super::tree::{AdaptCounts, AdaptiveMesh, Compaction, FlatTree, NONE};
use crate::args;
use crate::error::{Error, Result};
use crate::runtime::scan::PrefixSum;
use crate::runtime::{
    Arg, Buffer, DeviceTimer, ItemRange, Kernel, OwnedKernelSpec, Plan, PlanBuilder, Recorded,
    Runtime, CAPACITY_CONSTANT, WIDE_WORKGROUP_SIZE,
};
use crate::solver::dg::basis::{dubiner, dubiner_gradient, mode_indices};
use crate::solver::dg::euler::GAMMA;
use crate::solver::dg::gpu::{record_word, CountBounds, GpuDg, SurfaceLayout};

/// Counter words (the C_* constants of shaders/common/amr_tree.wgsl).
mod counter {
    pub const ACTIVE: usize = 0;
    pub const ELEMENT_IDS: usize = 1;
    pub const EDGE_IDS: usize = 2;
    pub const RINGS: usize = 3;
    /// The smoothing's top: the largest level + flag after its pass 0 (amr_smooth.wgsl).
    pub const TOP_LEVEL: usize = 9;
    pub const CLUSTERS: usize = 10;
    pub const REFINES: usize = 11;
    pub const ERROR: usize = 17;
    /// Faces whose slots lie far apart (`amr_faces`, `amr_permute`, [`super::super::reorder`]).
    pub const FAR_FACES: usize = 18;
    /// What amr_scan 0 decided of the adaptation after the smoothing ([`super::AdaptDecision`]).
    pub const DECISION: usize = 19;
    pub const COLOR_OFFSETS: usize = 20;
    /// Element half sides the faces of the last adaptation cover (`amr_faces`): 6 per element.
    pub const SIDE_UNITS: usize = 63;
    pub const LEN: usize = 64;
}

/// Words after the counters that take a copy of the solver's clock (amr_scan 0, C_CLOCK;
/// [`GpuAdaptation::smooth_with_clock`]), so that one read-back gives a run both.
pub const CLOCK_WORDS: usize = 8;

/// The clock's step count among its words (an f32; [`crate::solver::dg::gpu`]'s clock).
const CLOCK_STEPS_WORD: usize = 5;

/// The copy of the solver's clock in counter words `c` (amr_scan 0, C_CLOCK).
fn clock_words(c: &[u32]) -> [f32; CLOCK_WORDS] {
    std::array::from_fn(|k| f32::from_bits(c[counter::LEN + k]))
}

/// Words after the clock (C_DUE_STEPS .. C_SMOOTH_HANDED in shaders/common/amr_tree.wgsl):
/// the clock steps a batch must reach for its adaptation to be due (the host's, read once by
/// amr_scan 0), the smoothing's top as its pass 0 gathers it, and amr_settle's ticket, the
/// lengths of its two hand-off lists and the slots its last workgroup settled from them.
mod after_clock {
    pub const DUE_STEPS: usize = super::counter::LEN + super::CLOCK_WORDS;
    pub const SMOOTH_HANDED: usize = DUE_STEPS + 5;
    /// Words of the counters buffer, the clock and these included.
    pub const WORDS: usize = SMOOTH_HANDED + 1;
}

/// Slots a workgroup of amr_settle queues for a round before it hands the rest to the launch's
/// last workgroup (amr_settle.wgsl's QUEUE_SLOTS; at most [`MAX_QUEUE_SLOTS`]).
pub const QUEUE_SLOTS: usize = 128;

/// The most [`SmoothingPasses::Rounds`]' queue may take (amr_settle.wgsl's MAX_QUEUE).
pub const MAX_QUEUE_SLOTS: usize = 128;

/// Levels from which the smoothing runs in rounds ([`SmoothingPasses::for_levels`]) where
/// dependent launches are cheap ([`Runtime::cheap_dependent_launches`]: CUDA): below them the
/// stages by level cost as little or less (BENCHMARKS.md, sessions 32 and 34, on an H200).
pub const ROUNDS_FROM_LEVELS: u8 = 8;

/// The same where each dependent launch pays a pipeline barrier (wgpu): from 5 levels the
/// rounds cost less than the stages, or within a µs of them, on GK19's DMR, Kelvin-Helmholtz
/// and vortex (BENCHMARKS.md, session 34, on an H200).
pub const ROUNDS_FROM_LEVELS_BEHIND_BARRIERS: u8 = 5;

/// How the smoothing applies the 2:1 rules after its pass 0 (amr_smooth.wgsl): both end at the
/// least admissible flags above the start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SmoothingPasses {
    /// A launch per level below the maximum, each over all faces (the stages past the top level
    /// less one return at once): cheap launches, as many as the levels.
    Stages,
    /// One launch (amr_settle): a thread settles its slot's faces and its workgroup the slots
    /// that rise, in
    /// rounds, queueing `queue_slots` a round before it hands the rest to the last workgroup
    /// (0 hands off every rise): as long as the longest chain of raises, whatever the levels.
    Rounds { queue_slots: usize },
}

impl std::fmt::Display for SmoothingPasses {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SmoothingPasses::Stages => write!(f, "stages"),
            SmoothingPasses::Rounds { queue_slots } => {
                write!(f, "rounds, queues of {queue_slots}")
            }
        }
    }
}

impl SmoothingPasses {
    /// Stages below [`ROUNDS_FROM_LEVELS`] levels where dependent launches are cheap
    /// (`cheap_launches`: [`Runtime::cheap_dependent_launches`]), else below
    /// [`ROUNDS_FROM_LEVELS_BEHIND_BARRIERS`]; rounds from there.
    pub fn for_levels(max_level: u8, cheap_launches: bool) -> SmoothingPasses {
        let from = if cheap_launches {
            ROUNDS_FROM_LEVELS
        } else {
            ROUNDS_FROM_LEVELS_BEHIND_BARRIERS
        };
        if max_level >= from {
            SmoothingPasses::Rounds {
                queue_slots: QUEUE_SLOTS,
            }
        } else {
            SmoothingPasses::Stages
        }
    }

    /// `auto` (None: by the levels), `stages` or `rounds` (queues of [`QUEUE_SLOTS`]).
    pub fn parse(name: &str) -> Result<Option<SmoothingPasses>> {
        match name {
            "auto" => Ok(None),
            "stages" => Ok(Some(SmoothingPasses::Stages)),
            "rounds" => Ok(Some(SmoothingPasses::Rounds {
                queue_slots: QUEUE_SLOTS,
            })),
            other => Err(Error::Invalid(format!(
                "smoothing '{other}': expected auto, stages or rounds"
            ))),
        }
    }
}

/// What amr_scan 0 decided of the adaptation the smoothed flags ask for (the ADAPT_* words of
/// shaders/common/amr_tree.wgsl); the host decides the same from the counts it reads back
/// (a smoothing's read-back checks that they agree). Every kernel of the adaptation after
/// the smoothing returns at once unless it runs, so the host can queue the adaptation behind
/// the smoothing before it has read what the smoothing asks for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum AdaptDecision {
    /// The adaptation coarsens or refines something and the buffers hold it.
    #[default]
    Runs,
    /// No cluster coarsens and no element refines: nothing would move.
    Nothing,
    /// The buffers cannot hold it (grow them and start again).
    NoRoom,
    /// The clock stopped at the run's end before the batch's steps were all taken: no
    /// adaptation is due there.
    NotDue,
}

impl AdaptDecision {
    fn from_word(word: u32) -> Result<AdaptDecision> {
        Ok(match word {
            0 => AdaptDecision::Runs,
            1 => AdaptDecision::Nothing,
            2 => AdaptDecision::NoRoom,
            3 => AdaptDecision::NotDue,
            w => {
                return Err(Error::Run(format!(
                    "adaptation: the device's decision word is {w}, not one of 0..3"
                )))
            }
        })
    }
}

/// Threads per slot that `amr_refine` and `amr_geometry` add with the compaction in order, each
/// staging or moving one conserved field's coefficients (their FIELD_THREADS): the slot's own
/// thread keeps a shorter chain.
const FIELD_THREADS: usize = 4;

/// Words of amr_geometry's face numbers by workgroup before the workgroups' (FACE_GROUP_WORDS
/// in shaders/amr_geometry.wgsl): the ticket and a first number per plane.
const FACE_GROUP_WORDS: usize = 64;

/// Most face colors the counters hold (2K for K base colors).
const MAX_COLORS: usize = counter::SIDE_UNITS - counter::COLOR_OFFSETS - 1;

// amr_geometry's face numbers hold a first number per color after the ticket, and its packed
// marks 3 colors a word in MARK_WORDS = 14 words (shaders/common/amr_face_owner.wgsl).
const _: () = assert!(MAX_COLORS < FACE_GROUP_WORDS && MAX_COLORS <= 3 * 14);

/// The adaptation's uniform parameters; mirrors `AmrParams` in shaders/common/amr_tree.wgsl
/// (and its CUDA twin).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, bytemuck::Pod, bytemuck::Zeroable)]
pub struct AmrParams {
    element_capacity: u32,
    edge_capacity: u32,
    ring_elements: u32,
    ring_splits: u32,
    ring_interiors: u32,
    base_colors: u32,
    max_level: u32,
    field: u32,
    refine_only: u32,
    threshold: f32,
    delta: f32,
    gamma: f32,
    /// 1: the indicator adds the largest jump of the element means ([`super::indicator::jumps`]).
    jumps: u32,
    /// Element slots NE of the solver's buffers (amr_scan 0's room check).
    slot_capacity: u32,
    /// Quadrature nodes per face: the grid of the solver's face-node launch record (the
    /// bookkeeping after the face numbers, [`crate::solver::dg::gpu::face_nodes_record`]).
    face_nodes: u32,
    pad: u32,
}

/// Id capacities of the trees on the device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TreeCapacity {
    pub elements: usize,
    pub edges: usize,
}

impl TreeCapacity {
    /// Room to refine `refines` elements: each takes 4 element ids, splits at most 3 edges
    /// (2 ids each) and adds 3 interior edges.
    pub fn fits(&self, refines: usize, element_ids: usize, edge_ids: usize) -> bool {
        self.elements >= element_ids + 4 * refines && self.edges >= edge_ids + 9 * refines
    }

    /// [`TreeCapacity::fits`] with room to grow by `factor`.
    pub fn with_room(refines: usize, element_ids: usize, edge_ids: usize, factor: f64) -> Self {
        let grow = |n: usize| (n as f64 * factor).ceil() as usize;
        TreeCapacity {
            elements: grow(element_ids + 4 * refines),
            edges: grow(edge_ids + 9 * refines),
        }
    }
}

/// Slots an adaptation of `active` elements refining `refines` of them needs before
/// compaction: three more per refined element.
pub fn slots_needed(active: usize, refines: usize) -> usize {
    active + 3 * refines
}

/// What the smoothed flags ask of the next adaptation, with the counts it starts from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Smoothed {
    /// Stages of the smoothing that could raise a flag, the top level less one, with
    /// [`SmoothingPasses::Stages`] ([`AdaptiveMesh::smooth_flags_in_stages`]'s count; the
    /// launches past them return at once); 0 in rounds.
    pub stages: usize,
    /// Slots the smoothing in rounds handed to its last workgroup (0 when every round of raises
    /// fitted its workgroup's queue; [`AdaptiveMesh::smooth_flags_in_rounds`]).
    pub handed_off: usize,
    pub active: usize,
    pub clusters: usize,
    pub refines: usize,
    pub element_ids: usize,
    pub edge_ids: usize,
    /// Faces of the mesh the adaptation starts from (the last adaptation's, after its reorder
    /// if one ran), and of them those whose slots lie more than
    /// [`FAR_SLOTS`](super::locality::FAR_SLOTS) apart: counted on the device at the end of the
    /// last adaptation (or reorder) and read back late, with these counts, so that an
    /// adaptation reads back once.
    pub faces: usize,
    pub far_faces: usize,
    /// What the device decided of the adaptation (the same as the host from these counts).
    pub decision: AdaptDecision,
    /// Whether the adaptation was queued behind the smoothing
    /// ([`GpuAdaptation::smooth_with_clock`]): then it has run on the device exactly when
    /// `decision` is [`AdaptDecision::Runs`], and [`GpuAdaptation::apply`] only moves the
    /// solver onto the new mesh.
    pub queued: bool,
}

impl Smoothed {
    /// Whether the device adapted the mesh already (queued and decided to run): the solver
    /// must then move onto the new mesh ([`GpuAdaptation::apply`]) before anything else.
    pub fn ran_ahead(&self) -> bool {
        self.queued && self.decision == AdaptDecision::Runs
    }
}

/// What the host sets once: the indicator and the limits.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GpuAdaptOptions {
    pub field: IndicatorField,
    pub threshold: f64,
    pub delta: f64,
    /// Add the largest jump of the element means across the faces to the indicator.
    pub jumps: bool,
    /// How the smoothing applies the 2:1 rules ([`SmoothingPasses::for_levels`]).
    pub smoothing: SmoothingPasses,
    /// Also build the plans that start from flags the host sets or amr_flag computes
    /// ([`GpuAdaptation::set_flags`] with [`GpuAdaptation::smooth`],
    /// [`GpuAdaptation::compute_flags`]): the checks' way in. A run computes the flags in
    /// the smoothing's pass 0 (its stages launch that kernel too) and compiles neither
    /// amr_flag nor the pass 0 that reads the flags.
    pub host_flags: bool,
}

/// Whether the adaptation of a solver in `layout` writes the faces in color order as well as
/// in left-element order: the colored and atomic layouts launch per color. The gathered layout
/// reads the left-element order only; without the color order amr_faces stores each face once,
/// and the faces are numbered by one count per slot instead of a mark per color and slot (the
/// solver's color order then goes stale, [`GpuDg::adopt`]).
pub fn writes_color_order(layout: SurfaceLayout) -> bool {
    layout != SurfaceLayout::Gathered
}

/// The plans that start from flags the host sets or amr_flag computes
/// ([`GpuAdaptOptions::host_flags`]).
struct HostFlagPlans {
    /// Flags from the indicator.
    flag: Plan,
    /// The smoothing of the flags as they are (pass 0, the stages or amr_settle), then the
    /// clusters and refinements numbered and the solver's clock copied after the counters.
    smooth: Plan,
}

/// Seconds of named phases, in the order they ran.
pub type PhaseSeconds = Vec<(&'static str, f64)>;

/// What one device adaptation did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GpuAdaptReport {
    pub counts: AdaptCounts,
    /// Stages of the smoothing that could raise ([`Smoothed::stages`]) and the slots it
    /// handed off ([`Smoothed::handed_off`]).
    pub smoothing_stages: usize,
    pub smoothing_handed_off: usize,
    pub num_elements: usize,
    /// Faces of the mesh the adaptation started from, and of them those whose slots lie more
    /// than [`FAR_SLOTS`](super::locality::FAR_SLOTS) apart (what triggers a reorder): one
    /// adaptation late, the counts [`Smoothed`] read with the smoothing's counters, since the
    /// new mesh's are on the device only (read them with [`GpuAdaptation::face_counts`], at
    /// the price of a read-back of its own).
    pub faces: usize,
    pub far_faces: usize,
}

/// The device trees' buffers that a pass over the slots after an adaptation works on (the
/// reorder, [`super::reorder::GpuReorder`]).
pub struct SlotBuffers<'a> {
    pub slots: &'a Buffer,
    pub element_tree: &'a Buffer,
    pub vertices: &'a Buffer,
    pub counters: &'a Buffer,
    /// Each element's edges and the edge nodes: a face's color.
    pub element_edges: &'a Buffer,
    pub edge_tree: &'a Buffer,
}

/// The trees on the device and the prepared phases.
pub struct GpuAdaptation {
    rt: Runtime,
    capacity: TreeCapacity,
    slot_capacity: usize,
    max_level: u8,
    base_colors: u8,
    /// How the adaptation closes its holes (the mesh's when the trees went up).
    compaction: Compaction,
    /// How the smoothing applies the 2:1 rules.
    smoothing: SmoothingPasses,
    /// Whether the faces are written in color order too ([`writes_color_order`] of the
    /// solver's layout when the trees went up).
    color_order: bool,
    element_tree: Buffer,
    element_edges: Buffer,
    vertices: Buffer,
    edge_tree: Buffer,
    edge_sides: Buffer,
    slots: Buffer,
    ring_buffer: Buffer,
    counters: Buffer,
    flags: Buffer,
    /// The solver's bounds of the mesh's counts: the flag and smoothing launches read them,
    /// the smoothing's read-back checks them.
    bounds: CountBounds,
    /// Whether an adaptation ran on these trees: then its faces' half sides
    /// (`counter::SIDE_UNITS`) are checked at the next smoothing.
    adapted: std::cell::Cell<bool>,
    /// Whether [`GpuAdaptation::smooth_with_clock`] queues the adaptation behind the smoothing:
    /// after an adaptation that changed the mesh (and at first).
    queue_ahead: std::cell::Cell<bool>,
    /// With [`GpuAdaptOptions::host_flags`].
    host_plans: Option<HostFlagPlans>,
    /// The flags and the smoothing as one plan (one submission, one CUDA graph): pass 0
    /// computes the flags itself (amr_smooth with FLAGGED), a launch less than the host
    /// plans' flags then smoothing.
    flag_smooth_plan: Plan,
    /// Everything after smoothing, a timing segment per phase.
    adapt_plan: Plan,
    /// `adapt_plan` recorded while an untimed smoothing ran (the host records it while the
    /// smoothing's read-back waits for the device), for the next [`GpuAdaptation::apply`].
    adapt_ahead: std::cell::RefCell<Option<Recorded>>,
    /// Launches of each phase ([`GpuAdaptation::launches`]).
    launches: Vec<(&'static str, usize)>,
    /// Spans of device time around the untimed plans queued while timing is on (the run's,
    /// [`Self::set_timer`]).
    timer: SwitchedTimer,
}

/// A run's device timer ([`super::AmrStats::device_seconds`]) and whether the plans queued now
/// are its spans: a run times one adaptation in [`super::driver::DEVICE_TIMING_EVERY`].
#[derive(Default)]
pub struct SwitchedTimer {
    timer: Option<DeviceTimer>,
    on: std::cell::Cell<bool>,
}

impl SwitchedTimer {
    /// `timer`, off.
    pub fn new(timer: Option<DeviceTimer>) -> SwitchedTimer {
        SwitchedTimer {
            timer,
            on: std::cell::Cell::new(false),
        }
    }

    /// Whether the plans queued from now on are timed.
    pub fn time_next(&self, on: bool) {
        self.on.set(on);
    }

    /// Whether the plans queued now are timed (a timer, and timing on).
    pub fn timing(&self) -> bool {
        self.active().is_some()
    }

    /// The timer when the plans queued now are timed.
    pub fn active(&self) -> Option<&DeviceTimer> {
        self.timer.as_ref().filter(|_| self.on.get())
    }

    /// Seconds of the timer's spans since it was last drained (waits for their work); none
    /// without a timer.
    pub fn drain(&self, rt: &Runtime) -> Result<Vec<f64>> {
        match &self.timer {
            Some(timer) => rt.drain_timer(timer),
            None => Ok(Vec::new()),
        }
    }
}

/// Launches of each phase of the adaptation as the plans record them.
#[derive(Default)]
struct LaunchTally {
    phases: Vec<(&'static str, usize)>,
    /// Launches of the plan being recorded when the last phase was counted.
    recorded: usize,
}

impl LaunchTally {
    /// The launches `plan` recorded since the last count are phase `label`'s.
    fn count(&mut self, label: &'static str, plan: &PlanBuilder) {
        let n = plan.launches().len();
        self.phases.push((label, n - self.recorded));
        self.recorded = n;
    }

    /// The next counts are of a new plan.
    fn next_plan(&mut self) {
        self.recorded = 0;
    }
}

/// The adaptation's kernels (stem and constants) for `np` modes, `ne` slots, `compaction`,
/// `smoothing` and `host_flags` ([`GpuAdaptOptions::host_flags`]), in the order
/// [`GpuAdaptation::new`] binds them, so that a run compiles nothing it does not launch:
/// - amr_flag and amr_smooth reading the flags, with the host's flags only (a run's pass 0
///   computes the flags, and its stages launch that kernel);
/// - amr_settle, for the rounds only;
/// - GK19's compaction's two, last.
pub(super) fn kernel_specs(
    np: usize,
    ne: usize,
    compaction: Compaction,
    smoothing: SmoothingPasses,
    host_flags: bool,
    color_order: bool,
) -> Vec<OwnedKernelSpec> {
    let capacity = (CAPACITY_CONSTANT, ne as f64);
    let (np, ne) = (np as f64, ne as f64);
    let in_order = (
        "IN_ORDER",
        f64::from(u8::from(compaction == Compaction::InOrder)),
    );
    // amr_refine stages the elements in their new slots in this register, amr_geometry moves
    // them from it (the compaction in order).
    let staging = ("STAGING", f64::from(GpuDg::STAGING_REGISTER));
    let with_np = vec![("NP", np), (CAPACITY_CONSTANT, ne)];
    // The faces in color order too (writes_color_order): amr_geometry's marks and numbers,
    // the face scan's bookkeeping (phase 2, GK19's compaction) and amr_faces.
    let color_order = ("COLOR_ORDER", f64::from(u8::from(color_order)));
    // In order, amr_faces numbers the faces within workgroups of slots.
    let faces = vec![(CAPACITY_CONSTANT, ne), color_order, in_order];
    // amr_coarsen and amr_refine copy the coefficients their projections read to the
    // solver's scratch register, for their workgroups' threads to project together.
    let projection = vec![
        ("NP", np),
        (CAPACITY_CONSTANT, ne),
        ("SCRATCH", f64::from(GpuDg::SCRATCH_REGISTER)),
    ];
    let with_order = |mut constants: Vec<(&'static str, f64)>| {
        constants.extend([in_order, staging]);
        constants
    };
    let mut specs = Vec::new();
    if host_flags {
        // The flags, and pass 0 reading them (with its stages).
        specs.extend([
            ("amr_flag", with_np.clone()),
            ("amr_smooth", with_np.clone()),
        ]);
    }
    specs.extend([
        ("amr_scan", vec![in_order, color_order]),
        // Phase 0's, over the blocks of the marks in use only.
        ("amr_scan", vec![in_order, ("LIVE_BLOCKS", 1.0)]),
        // Pass 0 computing the flags itself (a run's smoothing).
        (
            "amr_smooth",
            [with_np.clone(), vec![("FLAGGED", 1.0)]].concat(),
        ),
        ("amr_mark", vec![(CAPACITY_CONSTANT, ne), in_order]),
        ("amr_coarsen", projection.clone()),
        ("amr_refine", with_order(projection)),
        (
            "amr_geometry",
            [with_order(with_np), vec![color_order]].concat(),
        ),
        ("amr_faces", faces),
    ]);
    if let SmoothingPasses::Rounds { queue_slots } = smoothing {
        // The 2:1 rules in rounds (from 8 levels on CUDA, 5 on wgpu).
        let queue = ("QUEUE_SLOTS", queue_slots as f64);
        specs.push(("amr_settle", vec![capacity, queue]));
    }
    if compaction == Compaction::Gk19 {
        // The compaction's scan, which computes its marks as it reads them, and its holes.
        specs.extend([
            ("amr_scan", vec![("COMPACTION_ITEMS", 1.0)]),
            ("amr_compact", vec![]),
        ]);
    }
    specs
}

impl GpuAdaptation {
    /// Upload `mesh` (whose active elements are `dg`'s mesh, with faces at `color_offsets`) and
    /// prepare the phases on `dg`'s buffers. `dg` needs [`slots_needed`] element slots and three
    /// faces per slot; its surface layout decides whether the faces are written in color order
    /// too ([`writes_color_order`]).
    pub fn new(
        rt: &Runtime,
        mesh: &AdaptiveMesh,
        dg: &GpuDg,
        color_offsets: &[usize],
        p: usize,
        options: GpuAdaptOptions,
        capacity: TreeCapacity,
    ) -> Result<GpuAdaptation> {
        let flat = mesh.to_flat();
        let active = flat.slots.len();
        let (ne, dg_edges) = (dg.capacity().elements, dg.capacity().edges);
        let colors = 2 * mesh.base_colors as usize;
        if let SmoothingPasses::Rounds { queue_slots } = options.smoothing {
            if queue_slots > MAX_QUEUE_SLOTS {
                return Err(Error::Invalid(format!(
                    "device adaptation: smoothing queues of {queue_slots} slots, at most \
                     {MAX_QUEUE_SLOTS}"
                )));
            }
        }
        if colors > MAX_COLORS || color_offsets.len() != colors + 1 {
            return Err(Error::Invalid(format!(
                "device adaptation: {} face colors given for {colors}, at most {MAX_COLORS}",
                color_offsets.len().saturating_sub(1)
            )));
        }
        let color_order = writes_color_order(dg.surface_layout());
        if ne < active || dg_edges < 3 * ne {
            return Err(Error::Invalid(format!(
                "device adaptation: {active} elements in a solver for {ne} elements and \
                 {dg_edges} faces (it needs three faces per element slot)"
            )));
        }
        let rings = ring_sizes(capacity);
        let params = AmrParams {
            element_capacity: capacity.elements as u32,
            edge_capacity: capacity.edges as u32,
            ring_elements: rings[0] as u32,
            ring_splits: rings[1] as u32,
            ring_interiors: rings[2] as u32,
            base_colors: u32::from(mesh.base_colors),
            max_level: u32::from(mesh.max_level),
            field: match options.field {
                IndicatorField::Density => 0,
                IndicatorField::Pressure => 1,
                IndicatorField::Energy => 2,
            },
            refine_only: 0,
            threshold: options.threshold as f32,
            delta: options.delta as f32,
            gamma: GAMMA as f32,
            jumps: u32::from(options.jumps),
            slot_capacity: ne as u32,
            face_nodes: dg.nodes_per_face() as u32,
            pad: 0,
        };
        let padded = |mut v: Vec<[u32; 4]>, n: usize, fill: [u32; 4]| {
            v.resize(n, fill);
            v
        };
        let element_tree = rt.upload(
            "amr element tree",
            &padded(flat.element_tree.clone(), capacity.elements, [NONE; 4]),
        )?;
        let element_edges = rt.upload(
            "amr element edges",
            &padded(flat.element_edges.clone(), capacity.elements, [NONE; 4]),
        )?;
        let mut vertices: Vec<[f32; 2]> = flat
            .element_vertices
            .iter()
            .flat_map(|v| v.map(|x| x.map(|c| c as f32)))
            .collect();
        vertices.resize(3 * capacity.elements, [0.0; 2]);
        let vertices = rt.upload("amr vertices", &vertices)?;
        let edge_tree = rt.upload(
            "amr edge tree",
            &padded(flat.edge_tree.clone(), capacity.edges, [0, NONE, NONE, 0]),
        )?;
        let mut sides: Vec<[u32; 2]> = flat.edge_sides.iter().flatten().copied().collect();
        sides.resize(2 * capacity.edges, [NONE, 0]);
        let edge_sides = rt.upload("amr edge sides", &sides)?;
        let mut slots = flat.slots.clone();
        slots.resize(ne, NONE);
        let slots = rt.upload("amr slots", &slots)?;
        let mut ring_data = vec![NONE; rings.iter().sum()];
        let mut counters = vec![0u32; after_clock::WORDS];
        let mut base = 0;
        for (r, free) in flat.free.iter().enumerate() {
            if free.len() > rings[r] {
                return Err(Error::Invalid(format!(
                    "device adaptation: {} free blocks in ring {r} of {}",
                    free.len(),
                    rings[r]
                )));
            }
            ring_data[base..base + free.len()].copy_from_slice(free);
            counters[counter::RINGS + 2 * r + 1] = free.len() as u32;
            base += rings[r];
        }
        counters[counter::ACTIVE] = active as u32;
        counters[counter::ELEMENT_IDS] = flat.element_tree.len() as u32;
        counters[counter::EDGE_IDS] = flat.edge_tree.len() as u32;
        for (c, &o) in color_offsets.iter().enumerate() {
            counters[counter::COLOR_OFFSETS + c] = o as u32;
        }
        let ring_buffer = rt.upload("amr free rings", &ring_data)?;
        let counters = rt.upload("amr counters", &counters)?;
        let flags = rt.zeroed::<i32>("amr flags", ne)?;
        let work = rt.zeroed::<u32>("amr side masks", ne)?;
        let holes = rt.zeroed::<u32>("amr holes", ne)?;
        // Cluster, refine and freed-split marks (amr_mark), NE each, in order the vacated
        // slots too, then the split marks of the edge ids, and their scan.
        let compaction = mesh.compaction;
        let in_order = compaction == Compaction::InOrder;
        let marks_len = (3 + usize::from(in_order)) * ne + capacity.edges;
        let marks = rt.zeroed::<u32>("amr cluster, refine, free and split marks", marks_len)?;
        let marks_scan =
            rt.zeroed::<u32>("amr cluster, refine, free and split numbers", marks_len)?;
        // Faces are numbered by (color, left slot), NE marks per color; without the color
        // order by left slot, a count per slot.
        let face_items = if color_order { colors * ne } else { ne };
        let items_len = face_items.max(ne);
        let items = rt.zeroed::<u32>("amr phase marks", items_len)?;
        // Per edge, which sides of a split edge refine (amr_mark for amr_refine).
        let split_sides = rt.zeroed::<u32>("amr split edge sides", capacity.edges)?;
        let items_scan = rt.zeroed::<u32>("amr phase numbers", items_len)?;
        // In order, amr_geometry numbers the faces by workgroups of slots itself: a ticket, the
        // planes' first numbers, then a count (and first number) per workgroup and plane.
        let face_planes = if color_order { colors } else { 1 };
        let face_groups = rt.zeroed::<u32>(
            "amr face numbers by workgroup",
            FACE_GROUP_WORDS + ne.div_ceil(WIDE_WORKGROUP_SIZE as usize) * face_planes,
        )?;
        let projection = Projection::new(p);
        let weights: Vec<f32> = projection.weights.iter().map(|&w| w as f32).collect();
        let weights = rt.upload("amr projection weights", &weights)?;
        let basis: Vec<[f32; 4]> = mode_indices(p)
            .iter()
            .map(|&(i, j)| {
                let c = 1.0 / 3.0;
                let g = dubiner_gradient(i, j, c, c);
                [dubiner(i, j, c, c) as f32, g[0] as f32, g[1] as f32, 0.0]
            })
            .collect();
        let centroid_basis = rt.upload("amr centroid basis", &basis)?;

        // Every kernel of the adaptation at once (Runtime::kernel_list: in parallel). Compiled
        // at the first attach only (or ahead of it, build_kernels_ahead): the capacity is given
        // at launch, so an attach with more room compiles nothing.
        let mut kernels = rt
            .kernel_list(&kernel_specs(
                projection.np,
                ne,
                compaction,
                options.smoothing,
                options.host_flags,
                color_order,
            ))?
            .into_iter();
        let mut next = || {
            kernels
                .next()
                .ok_or_else(|| Error::Gpu("device adaptation: a kernel is missing".into()))
        };
        // amr_flag and the pass 0 that reads the flags.
        let host_kernels = if options.host_flags {
            Some((next()?, next()?))
        } else {
            None
        };
        let scan_kernel = next()?;
        let marks_scan_kernel = next()?;
        let flagged_smooth_kernel = next()?;
        let mark_kernel = next()?;
        let coarsen_kernel = next()?;
        let refine_kernel = next()?;
        let geometry_kernel = next()?;
        let faces_kernel = next()?;
        // The rounds' amr_settle.
        let settle_kernel = match options.smoothing {
            SmoothingPasses::Rounds { .. } => Some(next()?),
            SmoothingPasses::Stages => None,
        };
        // GK19's compaction: its scan and amr_compact.
        let compaction_kernels = match compaction {
            Compaction::Gk19 => Some((next()?, next()?)),
            Compaction::InOrder => None,
        };
        let (regs, [inv_jac, inv_det, heights, neighbors, faces]) = dg.device_buffers();
        let prm = Arg::params(&params);

        let mut flag_args = args![
            *regs,
            centroid_basis,
            *inv_jac,
            *heights,
            *neighbors,
            flags,
            counters
        ]
        .to_vec();
        flag_args.push(prm.clone());
        // Sized by the solver's element record (on CUDA its element bound), as the smoothing
        // below.
        let bounds = dg.count_bounds().clone();

        let mut tally = LaunchTally::default();

        // The marks' and the faces' scans leave their prefix at every multiple of NE (the
        // parts amr_scan's bookkeeping reads); the kernels reading a scan's numbers add its
        // block offsets themselves.
        let marks_sum =
            PrefixSum::with_parts(rt, &marks, &marks_scan, marks_len as u32, ne as u32)?;
        let slot_sum = PrefixSum::new(rt, &items, &items_scan, ne as u32)?;
        // GK19's compaction's face scan (in order amr_geometry numbers the faces).
        let face_sum = match (in_order, color_order) {
            (true, _) => None,
            (false, true) => Some(PrefixSum::with_parts(
                rt,
                &items,
                &items_scan,
                face_items as u32,
                ne as u32,
            )?),
            (false, false) => Some(PrefixSum::new(rt, &items, &items_scan, face_items as u32)?),
        };
        let launch_words = dg.launch_words();
        // The scan of `scan` over its first `items` with the bookkeeping of `phase` in its last
        // workgroup (amr_scan).
        let mut scan_extra = args![counters, *launch_words, *dg.clock_buffer(), slots].to_vec();
        scan_extra.push(prm.clone());
        let scan_phase = |plan: &mut PlanBuilder, phase: u32, scan: &PrefixSum, items: usize| {
            // Phase 0's scan reads only the blocks that hold the marks of the slots and edge
            // ids in use (amr_scan.wgsl, LIVE_BLOCKS).
            let kernel = if phase == 0 {
                &marks_scan_kernel
            } else {
                &scan_kernel
            };
            scan.record_blocks_with(plan, kernel, &scan_extra, items as u32, phase)
        };
        // Each slot's level and siblings' slots, written by pass 0 for the raises.
        let slot_info = rt.zeroed::<[u32; 4]>("amr slot levels and siblings", ne)?;
        // Each slot's level + flag as the smoothing stands (amr_mark turns them into flags).
        let after = rt.zeroed::<u32>("amr smoothed levels", ne)?;
        // amr_flag's inputs last: pass 0 with FLAGGED computes the flags from them.
        // The stages read the faces in left-element order: the copy every layout keeps.
        let mut smooth_args = args![
            slots,
            element_tree,
            flags,
            *dg.edges_by_left(),
            counters,
            slot_info,
            after,
            *regs,
            centroid_basis,
            *inv_jac,
            *heights,
            *neighbors
        ]
        .to_vec();
        smooth_args.push(prm.clone());
        // The rounds' amr_settle, with its hand-off: per slot whether it waits in a list, then
        // the two lists.
        let settle = match settle_kernel {
            Some(kernel) => {
                let handoff = rt.zeroed::<u32>("amr smoothing hand-off", 3 * ne)?;
                let args = args![counters, slot_info, after, handoff, *neighbors].to_vec();
                Some((kernel, args))
            }
            None => None,
        };
        // The marks of the slots and of the edge ids (the split edges): a thread per slot, and
        // the edge ids in use at a stride of the launch's threads (most of the edge capacity
        // is room to refine, with no thread of its own).
        let mark_threads = ne.max(capacity.edges.min(2 * ne));
        let mut mark_args = args![
            slots,
            element_tree,
            flags,
            marks,
            counters,
            element_edges,
            edge_sides,
            work,
            after,
            edge_tree,
            split_sides
        ]
        .to_vec();
        mark_args.push(prm.clone());
        // The smoothing with its pass 0 `first` (labelled `label`), then the stages or
        // amr_settle (a thread per slot of the current mesh, one launch whatever the levels);
        // then the clusters and the elements to refine are numbered and their counts tell the
        // host whether the adaptation fits.
        let smoothing = |first: &Kernel, label: &'static str, tally: &mut LaunchTally| {
            let mut smooth = PlanBuilder::new();
            let slots_range = ItemRange::all(ne as u32);
            smooth
                .segment(label)
                .launch(first, &smooth_args, slots_range)
                .bounded(&bounds.elements);
            match &settle {
                Some((settle_kernel, settle_args)) => {
                    smooth
                        .launch(settle_kernel, settle_args, slots_range)
                        .bounded(&bounds.elements);
                }
                // Stage s (range.color s) sized by the solver's launch record of all the
                // current mesh's faces: exactly on wgpu; on CUDA by the solver's face bound.
                // The stages launch pass 0's kernel (FLAGGED or not; their code is the same).
                None => {
                    for stage in 1..u32::from(mesh.max_level.max(1)) {
                        let all_faces = ItemRange {
                            first: record_word(1 + colors),
                            count: 0,
                            color: stage,
                            pad: 0,
                        };
                        smooth
                            .launch_device(
                                first,
                                &smooth_args,
                                all_faces,
                                dg_edges as u32,
                                launch_words,
                            )
                            .bounded(&bounds.faces);
                    }
                }
            }
            tally.count(label, &smooth);
            smooth.segment("determine parents").launch(
                &mark_kernel,
                &mark_args,
                ItemRange::all(mark_threads as u32),
            );
            scan_phase(&mut smooth, 0, &marks_sum, marks_len)?;
            tally.count("determine parents", &smooth);
            tally.next_plan();
            Ok::<PlanBuilder, Error>(smooth)
        };
        // With host_flags the flags, and pass 0 reading them (a host's, or amr_flag's); in a
        // run's plan pass 0 computes them itself (a launch less): the launches counted are the
        // run's.
        let host_plans = match &host_kernels {
            Some((flag_kernel, smooth_kernel)) => {
                let mut flag = PlanBuilder::new();
                flag.segment("flag")
                    .launch_device(
                        flag_kernel,
                        &flag_args,
                        ItemRange::new(record_word(0), 0),
                        ne as u32,
                        dg.launch_words(),
                    )
                    .bounded(&bounds.elements);
                let smooth = smoothing(smooth_kernel, "smooth", &mut LaunchTally::default())?;
                Some(HostFlagPlans {
                    flag: rt.prepare(&flag)?,
                    smooth: rt.prepare(&smooth)?,
                })
            }
            None => None,
        };
        let flag_smooth = smoothing(&flagged_smooth_kernel, "flag and smooth", &mut tally)?;
        let mut adapt = PlanBuilder::new();

        // Each scan's bookkeeping closes a phase: 1 after coarsening, refining and the
        // compaction marks, 2 after the face marks (amr_scan.wgsl; 0 after the marks above).
        let mut coarsen_args = args![
            slots,
            element_tree,
            element_edges,
            edge_tree,
            edge_sides,
            marks,
            marks_scan,
            work,
            ring_buffer,
            counters,
            holes,
            *regs,
            weights,
            *marks_sum.block_offsets(),
            *dg.low_words()
        ]
        .to_vec();
        coarsen_args.push(prm.clone());
        adapt
            .segment("coarsen")
            .launch(&coarsen_kernel, &coarsen_args, ItemRange::all(ne as u32));
        tally.count("coarsen", &adapt);

        let mut refine_args = args![
            slots,
            element_tree,
            element_edges,
            vertices,
            edge_tree,
            edge_sides,
            flags,
            marks_scan,
            ring_buffer,
            counters,
            holes,
            *regs,
            weights,
            *marks_sum.block_offsets(),
            split_sides,
            *dg.low_words(),
            items_scan
        ]
        .to_vec();
        refine_args.push(prm.clone());
        // In order, the coefficients' staging and moves have threads of their own, one per
        // field and slot, in amr_refine and amr_geometry.
        let slot_threads = (ne * (1 + usize::from(in_order) * FIELD_THREADS)) as u32;
        adapt
            .segment("refine")
            .launch(&refine_kernel, &refine_args, ItemRange::all(slot_threads));
        tally.count("refine", &adapt);

        // GK19's compaction: its marks scanned (amr_scan 1 computes them as it reads them) and
        // the holes listed; the elements past the new count move into them with the geometry
        // below. In order, amr_refine staged every element in its new slot and the geometry
        // moves it.
        if let Some((compaction_scan_kernel, compact_kernel)) = &compaction_kernels {
            let compact_args = args![
                slots,
                items_scan,
                holes,
                counters,
                *slot_sum.block_offsets()
            ];
            adapt.segment("compact");
            slot_sum.record_blocks_with(
                &mut adapt,
                compaction_scan_kernel,
                &scan_extra,
                ne as u32,
                1,
            )?;
            adapt.launch(compact_kernel, &compact_args, ItemRange::all(ne as u32));
            tally.count("compact", &adapt);
        }

        // The compaction's moves, geometry and face marks per slot (in order also the face
        // numbers), the face scan (GK19's compaction), then the faces with their neighbours,
        // split masks and far-face count per edge.
        let mut geometry_args = args![
            slots,
            vertices,
            *inv_jac,
            *inv_det,
            *heights,
            *neighbors,
            counters,
            element_edges,
            edge_tree,
            edge_sides,
            items,
            *dg.low_words(),
            element_tree,
            *regs,
            items_scan,
            *slot_sum.block_offsets(),
            holes,
            face_groups,
            *launch_words
        ]
        .to_vec();
        geometry_args.push(prm.clone());
        // In order a thread per slot up to the capacity in whole workgroups, which number
        // the faces, then the field threads; else a scan numbers the faces after.
        let geometry_threads = if in_order {
            ne.next_multiple_of(WIDE_WORKGROUP_SIZE as usize) + FIELD_THREADS * ne
        } else {
            ne
        };
        adapt.segment("connectivity").launch(
            &geometry_kernel,
            &geometry_args,
            ItemRange::all(geometry_threads as u32),
        );
        if let Some(face_sum) = &face_sum {
            scan_phase(&mut adapt, 2, face_sum, face_items)?;
        }
        let face_numbers = match &face_sum {
            Some(face_sum) => face_sum.block_offsets(),
            None => &face_groups,
        };
        let mut faces_args = args![
            element_tree,
            vertices,
            edge_tree,
            edge_sides,
            items_scan,
            *faces,
            *neighbors,
            counters,
            slots,
            *face_numbers,
            element_edges,
            *dg.edges_by_left()
        ]
        .to_vec();
        faces_args.push(prm.clone());
        adapt.launch(&faces_kernel, &faces_args, ItemRange::all(ne as u32));
        tally.count("connectivity", &adapt);

        Ok(GpuAdaptation {
            rt: rt.clone(),
            capacity,
            slot_capacity: ne,
            max_level: mesh.max_level,
            base_colors: mesh.base_colors,
            compaction,
            smoothing: options.smoothing,
            color_order,
            host_plans,
            flag_smooth_plan: rt.prepare(&flag_smooth)?,
            adapt_plan: rt.prepare(&adapt)?,
            adapt_ahead: std::cell::RefCell::new(None),
            launches: tally.phases,
            element_tree,
            element_edges,
            vertices,
            edge_tree,
            edge_sides,
            slots,
            ring_buffer,
            counters,
            flags,
            bounds,
            adapted: std::cell::Cell::new(false),
            queue_ahead: std::cell::Cell::new(true),
            timer: SwitchedTimer::default(),
        })
    }

    /// Time the plans queued untimed while timing is on ([`Self::timer`]) as spans of `timer`.
    pub fn set_timer(&mut self, timer: Option<DeviceTimer>) {
        self.timer = SwitchedTimer::new(timer);
    }

    /// The run's timer of this adaptation's plans, and whether they are timed now.
    pub fn timer(&self) -> &SwitchedTimer {
        &self.timer
    }

    /// Seconds of the timer's spans since it was last drained (waits for their work).
    pub fn drain_timer(&self) -> Result<Vec<f64>> {
        self.timer.drain(&self.rt)
    }

    /// Queue `plan` once, a span of the timer when timing.
    fn queue(&self, plan: &Plan) -> Result<()> {
        self.rt.queue_timed(plan, 1, self.timer.active())
    }

    /// Run `plan`; with `phases`, timed (device times where the device has timestamps, else
    /// the wall time of the plan) and added to its segments' entries.
    fn run(&self, plan: &Plan, phases: Option<&mut PhaseSeconds>) -> Result<()> {
        let Some(phases) = phases else {
            return self.queue(plan);
        };
        for (label, s) in self.rt.time(plan, 1)?.entries() {
            match phases.iter_mut().find(|(l, _)| *l == label) {
                Some(entry) => entry.1 += s,
                None => phases.push((label, s)),
            }
        }
        Ok(())
    }

    /// Flags from the indicator of the solution in the solver's register 0 (queued: the
    /// smoothing's read-back waits for it).
    pub fn compute_flags(&self, phases: Option<&mut PhaseSeconds>) -> Result<()> {
        self.run(&self.host_plans("compute_flags")?.flag, phases)
    }

    /// The plans built only with [`GpuAdaptOptions::host_flags`], for `caller`.
    fn host_plans(&self, caller: &str) -> Result<&HostFlagPlans> {
        self.host_plans.as_ref().ok_or_else(|| {
            Error::Invalid(format!(
                "device adaptation: {caller} needs the plans of GpuAdaptOptions::host_flags"
            ))
        })
    }

    /// Set the flags (per active slot) instead of computing them.
    pub fn set_flags(&self, flags: &[i8]) -> Result<()> {
        let v: Vec<i32> = flags.iter().map(|&f| i32::from(f)).collect();
        self.rt.write(&self.flags, 0, &v)
    }

    /// The flags of the active slots.
    pub fn read_flags(&self) -> Result<Vec<i8>> {
        let n = self.read_counters()?[counter::ACTIVE] as usize;
        let v: Vec<i32> = self.rt.read(&self.flags, 0, n)?;
        Ok(v.into_iter().map(|f| f.clamp(-1, 1) as i8).collect())
    }

    /// Smooth the flags (pass 0, then the stages or amr_settle's rounds, then the clusters and
    /// refinements counted) and read back what they ask for. Untimed, the host records the
    /// adaptation's plan while the read-back waits, for [`Self::apply`].
    pub fn smooth(&self, phases: Option<&mut PhaseSeconds>) -> Result<Smoothed> {
        self.smooth_by(&self.host_plans("smooth")?.smooth, phases)
    }

    /// The flags from the indicator and their smoothing as a run queues them (one plan, pass 0
    /// computing the flags), then what the smoothed flags ask for: [`GpuAdaptation::smooth`]
    /// of the indicator's flags.
    pub fn flag_and_smooth(&self, phases: Option<&mut PhaseSeconds>) -> Result<Smoothed> {
        self.smooth_by(&self.flag_smooth_plan, phases)
    }

    /// `smoothing` (a plan that ends with the smoothing) run, and the counts read back; the
    /// adaptation's plan recorded meanwhile unless timed.
    fn smooth_by(&self, smoothing: &Plan, phases: Option<&mut PhaseSeconds>) -> Result<Smoothed> {
        let timed = phases.is_some();
        self.run(smoothing, phases)?;
        if !timed {
            *self.adapt_ahead.borrow_mut() = Some(self.rt.record(&self.adapt_plan, 1)?);
        }
        let c = self.rt.read(&self.counters, 0, after_clock::WORDS)?;
        self.smoothed(&c, None)
    }

    /// Queue the flags and the smoothing (one plan, which also copies the solver's clock,
    /// [`CLOCK_WORDS`] words, after the counters), a read-back of the counters and the clock
    /// behind them, and the adaptation behind that, which runs on the device only if
    /// `due_steps` <= the clock's steps (the batch before it took all its steps, so the
    /// adaptation is due) and the smoothed flags change something the buffers hold
    /// ([`AdaptDecision`]); then wait for the read-back alone (the one a run makes for its
    /// clock anyway). The device adapts while the host reads the counts, instead of idling
    /// from the read-back to the host's next submission. Returns the clock's words after the
    /// smoothing and what the smoothed flags ask for; when [`Smoothed::ran_ahead`], the solver
    /// must move onto the new mesh next ([`GpuAdaptation::apply`]).
    ///
    /// The adaptation is queued so only after one that changed the mesh: one that changed
    /// nothing predicts another (a mesh that resolves a still solution), whose queued kernels
    /// would cost the device a dozen launches that return at once. Then the host reads the
    /// counts first and queues the adaptation only if it runs, as [`GpuAdaptation::smooth`].
    pub fn smooth_with_clock(&self, due_steps: u32) -> Result<([f32; CLOCK_WORDS], Smoothed)> {
        if self.queue_ahead.get() {
            return self.smooth_ahead(&self.flag_smooth_plan, due_steps);
        }
        self.queue(&self.flag_smooth_plan)?;
        *self.adapt_ahead.borrow_mut() = Some(self.rt.record(&self.adapt_plan, 1)?);
        let c = self.rt.read(&self.counters, 0, after_clock::WORDS)?;
        let clock = clock_words(&c);
        Ok((clock, self.smoothed(&c, None)?))
    }

    /// [`GpuAdaptation::smooth_with_clock`] of the flags as set ([`GpuAdaptation::set_flags`])
    /// instead of the indicator's.
    pub fn smooth_flags_ahead(&self, due_steps: u32) -> Result<([f32; CLOCK_WORDS], Smoothed)> {
        self.smooth_ahead(&self.host_plans("smooth_flags_ahead")?.smooth, due_steps)
    }

    /// `smoothing` (a plan that ends with the smoothing), the read-back of the counters and
    /// the clock, and the adaptation queued behind it ([`GpuAdaptation::smooth_with_clock`]).
    fn smooth_ahead(
        &self,
        smoothing: &Plan,
        due_steps: u32,
    ) -> Result<([f32; CLOCK_WORDS], Smoothed)> {
        self.rt
            .write(&self.counters, after_clock::DUE_STEPS, &[due_steps])?;
        let counts = self.rt.queue_then_read_ahead::<u32>(
            smoothing,
            self.timer.active(),
            &self.counters,
            0,
            after_clock::WORDS,
        )?;
        self.queue(&self.adapt_plan)?;
        self.adapt_ahead.take();
        let c = self.rt.finish_read(counts)?;
        let clock = clock_words(&c);
        let mut smoothed = self.smoothed(&c, Some(due_steps))?;
        smoothed.queued = true;
        Ok((clock, smoothed))
    }

    /// What the smoothing's counters `c` (through the decision word) say the smoothed flags ask
    /// for; `due_steps` as the host wrote them for this smoothing (None: 0, due at once).
    /// Checks that the device decided what the host decides from the same counts.
    fn smoothed(&self, c: &[u32], due_steps: Option<u32>) -> Result<Smoothed> {
        // The previous adaptation's faces, checked here instead of in a read-back of its own.
        check_faces(c)?;
        let (active, faces) = (
            c[counter::ACTIVE],
            c[counter::COLOR_OFFSETS + self.num_colors()],
        );
        // Every element side is the whole of one face or of two halves: a face the adaptation
        // lost (an edge no element owns, which no thread per slot visits) leaves a hole.
        let covered = c[counter::SIDE_UNITS] as usize;
        if self.adapted.get() && covered != 6 * active as usize {
            return Err(Error::Run(format!(
                "adaptation: the faces of the adapted mesh cover {covered} of its {} element \
                 half sides: a face is missing (the device trees are corrupt)",
                6 * active as usize
            )));
        }
        let (elements_bound, faces_bound) = (self.bounds.elements.get(), self.bounds.faces.get());
        if active > elements_bound || faces > faces_bound {
            return Err(Error::Run(format!(
                "adaptation: the mesh has {active} elements and {faces} faces, but its launches \
                 were bounded by {elements_bound} and {faces_bound}: some were skipped"
            )));
        }
        let top = c[counter::TOP_LEVEL];
        if top > u32::from(self.max_level) {
            return Err(Error::Run(format!(
                "adaptation: the smoothing reports elements ending at level {top}, past the \
                 maximum {}",
                self.max_level
            )));
        }
        let mut smoothed = Smoothed {
            stages: match self.smoothing {
                SmoothingPasses::Stages => top.saturating_sub(1) as usize,
                SmoothingPasses::Rounds { .. } => 0,
            },
            handed_off: c[after_clock::SMOOTH_HANDED] as usize,
            active: c[counter::ACTIVE] as usize,
            clusters: c[counter::CLUSTERS] as usize,
            refines: c[counter::REFINES] as usize,
            element_ids: c[counter::ELEMENT_IDS] as usize,
            edge_ids: c[counter::EDGE_IDS] as usize,
            faces: c[counter::COLOR_OFFSETS + self.num_colors()] as usize,
            far_faces: c[counter::FAR_FACES] as usize,
            decision: AdaptDecision::Runs,
            queued: false,
        };
        // amr_scan 0's rule (decision in amr_scan.wgsl): the clock's steps are an f32.
        let clock_steps = f32::from_bits(c[counter::LEN + CLOCK_STEPS_WORD]) as u32;
        let host = if due_steps.is_some_and(|due| clock_steps < due) {
            AdaptDecision::NotDue
        } else if !self.has_room(&smoothed) {
            AdaptDecision::NoRoom
        } else if smoothed.clusters == 0 && smoothed.refines == 0 {
            AdaptDecision::Nothing
        } else {
            AdaptDecision::Runs
        };
        smoothed.decision = AdaptDecision::from_word(c[counter::DECISION])?;
        if smoothed.decision != host {
            return Err(Error::Run(format!(
                "adaptation: the device decided {:?} and the host {host:?} from the same counts \
                 ({} elements, {} clusters, {} refined, clock at {clock_steps} of {} steps)",
                smoothed.decision,
                smoothed.active,
                smoothed.clusters,
                smoothed.refines,
                due_steps.unwrap_or(0)
            )));
        }
        Ok(smoothed)
    }

    /// Whether the buffers hold the adaptation the smoothed flags ask for (else grow: read the
    /// trees back and start again with more room).
    pub fn has_room(&self, s: &Smoothed) -> bool {
        self.slot_capacity >= slots_needed(s.active, s.refines)
            && self.capacity.fits(s.refines, s.element_ids, s.edge_ids)
    }

    /// Coarsen, refine, compact and build the new mesh and its launch records in `dg`'s buffers
    /// by the smoothed flags, then move `dg` onto it: queued, with nothing read back (the new
    /// element count follows from the smoothed counts, GK19's n + 3 refined - 3 clusters). With
    /// `phases`, run and timed: the seconds of each phase (GK19 Table 3's subroutines) and of
    /// moving the solver ("plans").
    ///
    /// When the flags coarsen no cluster and refine no element, nothing runs: coarsening,
    /// refinement and compaction would move nothing, and the connectivity would rewrite the
    /// faces, neighbours and geometry `dg` has (GK19 runs every phase at every step; with the
    /// vortex adapting every step most adaptations are these). The plan recorded ahead for
    /// the adaptation is dropped unsubmitted and the report's counts are zero. When the
    /// smoothing queued the adaptation behind it ([`GpuAdaptation::smooth_with_clock`]), the
    /// device has run it by the same decision already: only `dg` moves.
    pub fn apply(
        &self,
        dg: &mut GpuDg,
        smoothed: &Smoothed,
        mut phases: Option<&mut PhaseSeconds>,
    ) -> Result<GpuAdaptReport> {
        match smoothed.decision {
            AdaptDecision::NoRoom => {
                return Err(Error::Invalid(format!(
                    "adaptation: no room to refine {} of {} elements in buffers for {} slots",
                    smoothed.refines, smoothed.active, self.slot_capacity
                )))
            }
            AdaptDecision::NotDue => {
                return Err(Error::Invalid(
                    "adaptation: applied where none was due (the clock stopped short of the \
                     batch's steps)"
                        .into(),
                ))
            }
            AdaptDecision::Runs | AdaptDecision::Nothing => {}
        }
        let ahead = self.adapt_ahead.take();
        self.queue_ahead
            .set(smoothed.decision == AdaptDecision::Runs);
        if smoothed.decision == AdaptDecision::Nothing {
            return Ok(GpuAdaptReport {
                counts: AdaptCounts::default(),
                smoothing_stages: smoothed.stages,
                smoothing_handed_off: smoothed.handed_off,
                num_elements: smoothed.active,
                faces: smoothed.faces,
                far_faces: smoothed.far_faces,
            });
        }
        match ahead {
            // Queued behind the smoothing, and run on the device by its decision.
            _ if smoothed.queued => {}
            Some(recorded) if phases.is_none() => {
                self.rt
                    .submit_timed(&self.adapt_plan, recorded, self.timer.active())?
            }
            _ => self.run(&self.adapt_plan, phases.as_deref_mut())?,
        }
        self.adapted.set(true);
        let clock = std::time::Instant::now();
        let n = smoothed.active + 3 * smoothed.refines - 3 * smoothed.clusters;
        // A refinement adds at most 6 faces (3 inside, one more on each side), a cluster
        // coarsened none; the next smoothing checks the count (`smoothed`).
        dg.adopt(n, smoothed.faces + 6 * smoothed.refines, self.color_order)?;
        if let Some(phases) = phases {
            phases.push(("plans", clock.elapsed().as_secs_f64()));
        }
        Ok(GpuAdaptReport {
            counts: AdaptCounts {
                refined: smoothed.refines,
                coarsened: smoothed.clusters,
            },
            smoothing_stages: smoothed.stages,
            smoothing_handed_off: smoothed.handed_off,
            num_elements: n,
            faces: smoothed.faces,
            far_faces: smoothed.far_faces,
        })
    }

    /// Faces of the mesh as it stands on the device and of them the far ones (a read-back of
    /// its own, which waits for the queued work; the adaptations get them one late instead,
    /// [`GpuAdaptReport::far_faces`]).
    pub fn face_counts(&self) -> Result<(usize, usize)> {
        let c = self.read_counters()?;
        check_faces(&c)?;
        Ok((
            c[counter::COLOR_OFFSETS + self.num_colors()] as usize,
            c[counter::FAR_FACES] as usize,
        ))
    }

    /// Set the far-face count of the mesh the trees were uploaded with (`amr_faces` counts it
    /// only at the end of an adaptation, `amr_permute` at the end of a reorder), for the first
    /// adaptation's late report.
    pub fn set_far_faces(&self, far: usize) -> Result<()> {
        self.rt
            .write(&self.counters, counter::FAR_FACES, &[far as u32])
    }

    /// The buffers of the slots, element trees, vertices and counters.
    pub fn slot_buffers(&self) -> SlotBuffers<'_> {
        SlotBuffers {
            slots: &self.slots,
            element_tree: &self.element_tree,
            vertices: &self.vertices,
            counters: &self.counters,
            element_edges: &self.element_edges,
            edge_tree: &self.edge_tree,
        }
    }

    /// Launches of each phase of one adaptation as a run queues it, in order: "flag and smooth"
    /// (pass 0, which computes the flags, then a stage per level below the maximum or
    /// amr_settle), "determine
    /// parents", then the phases of [`GpuAdaptation::apply`].
    pub fn launches(&self) -> &[(&'static str, usize)] {
        &self.launches
    }

    /// Element slots of the buffers.
    pub fn slot_capacity(&self) -> usize {
        self.slot_capacity
    }

    /// Face colors of the adapted mesh (2K).
    pub fn num_colors(&self) -> usize {
        2 * self.base_colors as usize
    }

    /// Id capacities of the trees on the device.
    pub fn capacity(&self) -> TreeCapacity {
        self.capacity
    }

    /// The buffers of the trees' state in the order of [`part_words`].
    fn tree_buffers(&self) -> [&Buffer; 8] {
        [
            &self.counters,
            &self.ring_buffer,
            &self.element_tree,
            &self.element_edges,
            &self.vertices,
            &self.edge_tree,
            &self.edge_sides,
            &self.slots,
        ]
    }

    /// The trees word for word as the device holds them: the counters, the free rings whole
    /// (their heads are counters), per element id its tree, edges and f32 vertices, per edge id
    /// its tree and sides, the slots of the active elements. A checkpoint of an adaptive run,
    /// restored to the same bits by [`GpuAdaptation::set_state_words`] on trees of the same
    /// [`TreeCapacity`], read on the host by [`TreeWords::decode`].
    pub fn state_words(&self) -> Result<Vec<u32>> {
        let counters = self.read_counters()?;
        let lengths = check_counts(&counters, self.capacity, self.slot_capacity)?;
        let mut words = counters;
        for (buffer, count) in self.tree_buffers().into_iter().zip(lengths).skip(1) {
            words.extend(self.rt.read::<u32>(buffer, 0, count)?);
        }
        Ok(words)
    }

    /// Write [`GpuAdaptation::state_words`] back, checking the counts against the buffers
    /// first (ids, elements, ring heads and lengths).
    pub fn set_state_words(&self, words: &[u32]) -> Result<()> {
        let lengths = check_words(words, self.capacity, self.slot_capacity)?;
        let mut at = 0;
        for (buffer, count) in self.tree_buffers().into_iter().zip(lengths) {
            if count > 0 {
                self.rt.write(buffer, 0, &words[at..at + count])?;
            }
            at += count;
        }
        // Their counters are those of the trees written (a checkpoint's), whose half sides no
        // adaptation here counted.
        self.adapted.set(false);
        Ok(())
    }

    fn read_counters(&self) -> Result<Vec<u32>> {
        self.rt.read(&self.counters, 0, counter::LEN)
    }

    /// The trees as they stand on the device.
    pub fn download(&self) -> Result<AdaptiveMesh> {
        let trees = TreeWords {
            capacity: self.capacity,
            slot_capacity: self.slot_capacity,
            max_level: self.max_level,
            base_colors: self.base_colors,
        };
        let mut mesh = trees.decode(&self.state_words()?)?;
        mesh.compaction = self.compaction;
        Ok(mesh)
    }
}

/// Free ring sizes (element blocks, split-edge blocks, interior-edge blocks) of trees of
/// `capacity`.
fn ring_sizes(capacity: TreeCapacity) -> [usize; 3] {
    [
        capacity.elements / 4 + 1,
        capacity.edges / 2 + 1,
        capacity.edges / 3 + 1,
    ]
}

/// Words of each part of the trees' state for the counts in `counters` (at least
/// `counter::LEN` words): the counters, the free rings whole, per element id its tree (4), edges
/// (4) and vertices (6), per edge id its tree (4) and sides (4), one per active element's slot.
fn part_words(counters: &[u32], capacity: TreeCapacity) -> [usize; 8] {
    let (ne, nd, n) = (
        counters[counter::ELEMENT_IDS] as usize,
        counters[counter::EDGE_IDS] as usize,
        counters[counter::ACTIVE] as usize,
    );
    [
        counter::LEN,
        ring_sizes(capacity).iter().sum(),
        4 * ne,
        4 * ne,
        6 * ne,
        4 * nd,
        4 * nd,
        n,
    ]
}

/// [`part_words`] after checking the counts against trees of `capacity` and `slots` slots.
fn check_counts(counters: &[u32], capacity: TreeCapacity, slots: usize) -> Result<[usize; 8]> {
    let bad = |what: String| Err(Error::Run(format!("adaptive trees: {what}")));
    if counters.len() < counter::LEN {
        return bad(format!("{} words, not even the counters", counters.len()));
    }
    let (ne, nd, n) = (
        counters[counter::ELEMENT_IDS] as usize,
        counters[counter::EDGE_IDS] as usize,
        counters[counter::ACTIVE] as usize,
    );
    if ne > capacity.elements || nd > capacity.edges || n > slots || n == 0 {
        return bad(format!(
            "{ne} element ids, {nd} edge ids and {n} elements for trees of {}, {} and {} slots",
            capacity.elements, capacity.edges, slots
        ));
    }
    for (r, &size) in ring_sizes(capacity).iter().enumerate() {
        let (head, len) = (
            counters[counter::RINGS + 2 * r] as usize,
            counters[counter::RINGS + 2 * r + 1] as usize,
        );
        if head >= size || len > size {
            return bad(format!(
                "free ring {r} has head {head} and length {len} in {size} words"
            ));
        }
    }
    Ok(part_words(counters, capacity))
}

/// [`check_counts`] of the counters that `words` starts with, and that `words` has the length
/// they give.
fn check_words(words: &[u32], capacity: TreeCapacity, slots: usize) -> Result<[usize; 8]> {
    let lengths = check_counts(words, capacity, slots)?;
    let expected: usize = lengths.iter().sum();
    if words.len() != expected {
        return Err(Error::Run(format!(
            "adaptive trees: {} words, the counters ask for {expected}",
            words.len()
        )));
    }
    Ok(lengths)
}

/// What reading [`GpuAdaptation::state_words`] on the host needs: the capacities they were
/// written with and the mesh's level limit and base colors.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TreeWords {
    pub capacity: TreeCapacity,
    pub slot_capacity: usize,
    pub max_level: u8,
    pub base_colors: u8,
}

impl TreeWords {
    /// The trees of `words` ([`GpuAdaptation::state_words`]), checked: counts within the
    /// capacities, ids in range ([`AdaptiveMesh::from_flat`]).
    pub fn decode(&self, words: &[u32]) -> Result<AdaptiveMesh> {
        let lengths = check_words(words, self.capacity, self.slot_capacity)?;
        let mut parts = Vec::with_capacity(lengths.len());
        let mut at = 0;
        for len in lengths {
            parts.push(&words[at..at + len]);
            at += len;
        }
        let c = parts[0];
        let quads = |w: &[u32]| -> Vec<[u32; 4]> {
            w.chunks_exact(4)
                .map(|q| [q[0], q[1], q[2], q[3]])
                .collect()
        };
        let mut base = 0;
        let free = std::array::from_fn(|r| {
            let size = ring_sizes(self.capacity)[r];
            let (head, len) = (
                c[counter::RINGS + 2 * r] as usize,
                c[counter::RINGS + 2 * r + 1] as usize,
            );
            let list = (0..len)
                .map(|k| parts[1][base + (head + k) % size])
                .collect();
            base += size;
            list
        });
        let flat = FlatTree {
            element_tree: quads(parts[2]),
            element_edges: quads(parts[3]),
            element_vertices: parts[4]
                .chunks_exact(6)
                .map(|v| {
                    std::array::from_fn(|j| {
                        [v[2 * j], v[2 * j + 1]].map(|x| f64::from(f32::from_bits(x)))
                    })
                })
                .collect(),
            edge_tree: quads(parts[5]),
            edge_sides: parts[6]
                .chunks_exact(4)
                .map(|s| [[s[0], s[1]], [s[2], s[3]]])
                .collect(),
            slots: parts[7].to_vec(),
            free,
        };
        AdaptiveMesh::from_flat(&flat, self.max_level, self.base_colors)
    }
}

/// An error when the last adaptation's faces found an edge without an element (counters `c`).
fn check_faces(c: &[u32]) -> Result<()> {
    if c[counter::ERROR] != 0 {
        return Err(Error::Run(
            "adaptation: an edge of the adapted mesh has no element on a side".into(),
        ));
    }
    Ok(())
}

impl std::fmt::Debug for GpuAdaptation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GpuAdaptation")
            .field("capacity", &self.capacity)
            .field("slot_capacity", &self.slot_capacity)
            .finish_non_exhaustive()
    }
}
