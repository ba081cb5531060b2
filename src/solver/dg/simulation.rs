//! A DG run from a [`Case`] in a few lines, for the `dg` command and library users alike:
//!
//! ```no_run
//! # fn main() -> chromaflow::error::Result<()> {
//! use chromaflow::runtime::Runtime;
//! use chromaflow::solver::dg::{Case, Simulation, SimulationOptions};
//! let case = Case::vortex(400);
//! let mut sim = Simulation::new(&case, &Runtime::wgpu()?, &SimulationOptions::default())?;
//! sim.advance_to(0.5)?;
//! println!("L2 density error {:?}", sim.l2_density_error()?);
//! # Ok(())
//! # }
//! ```
//!
//! It prepares the mesh (case -> mesh -> [`prepare`](crate::order::prepare) -> [`DgMesh::build`]), projects the
//! initial state, drives [`GpuDg`] from output time to output time (many steps per submit, the
//! clock on the GPU) and reads the solution back only there, for the conserved totals, the
//! density error, PNG/VTU snapshots and the CSV of a whole run ([`Simulation::run`]).
//!
//! Snapshots show each element's polynomial as it is: PNGs evaluate it once per pixel
//! ([`super::plot::ModalField`], in parallel), VTUs hold VTK Lagrange triangles of degree p with
//! the fields at their nodes (ParaView interpolates them exactly), listed with their times in
//! the collection [`COLLECTION`]. A run times its setup, its stepping and its outputs apart
//! ([`RunSummary`]).

use super::amr::driver::{build_kernels_ahead, device_capacity, DeviceAdaptation};
use super::amr::gpu::{
    slots_needed, writes_color_order, AdaptDecision, PhaseSeconds, Smoothed, TreeCapacity,
    TreeWords,
};
use super::amr::locality::{self, MortonFrame};
use super::amr::reorder::ReorderPolicy;
use super::amr::tree::FlatTree;
use super::amr::{Adaptivity, AmrStats};
use super::cpu::Operator;
use super::euler::State;
use super::gpu::{
    build_gathered_kernels, clock_from_words, Capacity, Clock, GpuConfig, GpuDg, Kernel,
    SurfaceLayout,
};
use super::plot::ModalField;
pub use super::plot::Quantity;
use super::{BasisTables, Case, DgMesh, StateFn};
use crate::checkpoint::{self, fingerprint, unusable, Checkpoint};
use crate::error::{Error, Result};
use crate::mesh::io::{lagrange_triangle_nodes, write_vtu_lagrange_triangles};
use crate::mesh::{ElementKind, Mesh};
use crate::order::{prepare_timed, Ordering, PrepareOptions, PrepareTimes};
use crate::output::{add_to_collection, save_triangle_field_png, CsvWriter, PlotOptions};
use crate::runtime::Runtime;
use crate::solver::{clock_stalls, interrupted, output_times, RunControl, MAX_BATCH};
use std::cell::{Cell, OnceCell};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// File name of the CSV of conserved totals that [`Simulation::run`] writes.
pub const TOTALS_CSV: &str = "dg_totals.csv";

/// File name of the ParaView collection listing the VTU snapshots with their times.
pub const COLLECTION: &str = "dg.pvd";

/// What a snapshot writes: a PNG per field (with `contours` isolines when nonzero) and, with
/// `vtu`, a VTU of Lagrange triangles with every field at the nodes.
#[derive(Clone, Debug, PartialEq)]
pub struct SnapshotOptions {
    /// Fields drawn and written, in order.
    pub fields: Vec<Quantity>,
    /// Also write `dg_{index:04}.vtu` and list it in [`COLLECTION`].
    pub vtu: bool,
    /// Isolines over each PNG ([`PlotOptions::contours`]); 0 for none.
    pub contours: usize,
}

impl Default for SnapshotOptions {
    fn default() -> Self {
        SnapshotOptions {
            fields: vec![Quantity::Density],
            vtu: false,
            contours: 0,
        }
    }
}

/// Wall-clock seconds of building a [`Simulation`], by phase, in the order they run.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SetupTimes {
    /// Mesh read or generated (sampling, triangulation) and validated.
    pub mesh: f64,
    /// Face topology, face coloring and element/face ordering ([`prepare_timed`]).
    pub prepare: PrepareTimes,
    /// DG geometry: element maps, edges with their boundary conditions, grouped by color.
    pub geometry: f64,
    /// Initial L2 projection on the host (with adaptive refinement: and the first
    /// refinements, each followed by a projection).
    pub projection: f64,
    /// GPU solver: kernels compiled (or loaded from the pipeline cache), buffers allocated
    /// and the mesh uploaded.
    pub solver: f64,
    /// Initial state to the device (limited there when the case limits).
    pub upload: f64,
}

impl SetupTimes {
    pub fn total(&self) -> f64 {
        let p = &self.prepare;
        self.mesh
            + p.topology
            + p.coloring
            + p.ordering
            + self.geometry
            + self.projection
            + self.solver
            + self.upload
    }
}

/// Wall-clock seconds of a run's outputs, by kind.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct OutputTimes {
    /// Solution read back from the device, once per output time (also the check that it is
    /// finite at the end of every advance).
    pub readback: f64,
    /// Conserved totals and the L2 density error (host, f64, elements in parallel).
    pub diagnostics: f64,
    /// Snapshots (PNGs, VTUs) and CSV rows rendered and written.
    pub files: f64,
    /// Checkpoints written.
    pub checkpoints: f64,
}

impl OutputTimes {
    pub fn total(&self) -> f64 {
        self.readback + self.diagnostics + self.files + self.checkpoints
    }
}

/// Columns of [`TOTALS_CSV`]: the totals are the domain integrals of the conserved variables.
pub const TOTALS_COLUMNS: [&str; 8] = [
    "t",
    "steps",
    "mass",
    "momentum_x",
    "momentum_y",
    "energy",
    "l2_density_error",
    "elements",
];

/// The wall cost of one adaptation as a run pays it, and of the steps between two
/// ([`Simulation::time_adaptation_walls`]).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct AdaptationWall {
    /// Elements before the adaptation.
    pub elements: usize,
    /// Seconds of one batch of steps between two adaptations, its clock read back.
    pub steps_seconds: f64,
    /// Seconds the adaptation adds to two batches of steps (the batch before it and the one
    /// after it, each with its clock read back).
    pub adapt_seconds: f64,
    /// Read-backs (host waits for device data) the adaptation adds to those two batches'.
    pub readbacks: u64,
    /// Where `adapt_seconds` goes: what it adds to the first batch (its flags and smoothing,
    /// queued behind the steps and read with the clock), the host's time between the two
    /// batches (the adaptation's calls), and what it adds to the second batch (the adaptation's
    /// device work, queued ahead of the steps).
    pub first_batch_seconds: f64,
    pub host_seconds: f64,
    pub second_batch_seconds: f64,
    /// What a third batch, right after the second, takes more than the plain one before the
    /// adaptation: the part of `second_batch_seconds` that stays with the adapted mesh (its
    /// size and its order in memory) rather than with the adaptation's own device work. Not in
    /// `adapt_seconds`.
    pub later_batch_seconds: f64,
    /// Whether this adaptation also reordered the elements along a Morton curve (the
    /// locality policy's reorder, queued with the adaptation: its device work lands in the
    /// second batch).
    pub reordered: bool,
    /// Whether this adaptation first grew the buffers (the trees read back and the solver,
    /// the adaptation and the reorder rebuilt for more room, their kernels compiled for it):
    /// a run pays that once per growth, not per adaptation.
    pub grew: bool,
    /// Whether this adaptation coarsened or refined anything (one that changed nothing stops
    /// after its smoothing).
    pub changed: bool,
    /// The device time of the adaptation's work (its flags and smoothing, its kernels, a
    /// reorder: [`AmrStats::device_seconds`]), read after the batch after it; None when it
    /// was not timed (no timestamps, or not one of the adaptations a run times).
    pub device_seconds: Option<f64>,
}

/// Seconds per step of each kernel group of a step, in step order ([`GpuDg::time_kernels`]).
pub type KernelSeconds = Vec<(Kernel, f64)>;

/// The seconds of `kernel`'s group in `times` (0 when it did not run).
pub fn group_seconds(times: &[(Kernel, f64)], kernel: Kernel) -> f64 {
    times
        .iter()
        .filter(|(k, _)| *k == kernel)
        .map(|(_, s)| s)
        .sum()
}

/// How to prepare and step a [`Simulation`]; the defaults are the `dg` command's.
#[derive(Clone, Debug, PartialEq)]
pub struct SimulationOptions {
    /// Element/face ordering of the mesh (GK Algorithm 5 by default).
    pub ordering: Ordering,
    /// Seed of the mesh generator and the face coloring, for reproducible runs.
    pub seed: u64,
    /// Fixed time step instead of the CFL one.
    pub fixed_dt: Option<f64>,
    /// Steps queued per GPU submit: more hides the submit cost, fewer reads the clock more often.
    pub batch: usize,
    /// The surface integral's layout; None: gathered (adapted meshes too: on an H200 it steps
    /// GK19's adaptive cases 1.8-2.8x faster than the colored layout, BENCHMARKS.md).
    pub surface: Option<SurfaceLayout>,
}

impl Default for SimulationOptions {
    fn default() -> Self {
        SimulationOptions {
            ordering: Ordering::ColorRenumbered,
            seed: 1,
            fixed_dt: None,
            batch: 50,
            surface: None,
        }
    }
}

/// What [`Simulation::run`] did.
#[derive(Clone, Debug)]
pub struct RunSummary {
    /// Time steps since the start of the simulation.
    pub steps: u64,
    /// Final time.
    pub t: f64,
    /// Wall-clock seconds of the run, outputs included (setup not).
    pub wall_seconds: f64,
    /// Of which stepping: queueing steps and waiting for the device (adaptations not included).
    pub step_seconds: f64,
    /// Of which outputs: read-backs, totals, errors, PNGs, VTUs, CSV rows and checkpoints
    /// ([`OutputTimes::total`] of `outputs`).
    pub output_seconds: f64,
    /// The outputs by kind.
    pub outputs: OutputTimes,
    /// The L2 density error at the last output time, when the case has an exact solution and
    /// the run recorded one.
    pub l2_density_error: Option<f64>,
    /// Steps taken by this run (from its start or restart point).
    pub run_steps: u64,
    /// Building the simulation before the run.
    pub setup: SetupTimes,
    /// Snapshots written, the initial one included.
    pub snapshots: usize,
    /// Every file written: the CSV, then the PNGs and VTUs in snapshot order.
    pub files: Vec<PathBuf>,
    /// What the adaptive refinement did, when the case adapts.
    pub amr: Option<AmrStats>,
    /// Elements at the end.
    pub elements: usize,
}

/// A DG simulation of one case on one device: the prepared mesh and the GPU solver, with the
/// time and step count the host keeps (the GPU clock restarts at every [`advance_to`]).
///
/// [`advance_to`]: Simulation::advance_to
pub struct Simulation {
    case: Case,
    /// The ordered mesh (the VTU's geometry; element i is DG element i); built from the
    /// active elements on first use after each adaptation.
    mesh: OnceCell<Mesh>,
    dm: DgMesh,
    tables: BasisTables,
    gpu: GpuDg,
    batch: usize,
    fixed_dt: Option<f64>,
    t: f64,
    steps: u64,
    /// The solution at `t`, read back once per output time.
    solution: OnceCell<Vec<f64>>,
    /// The adaptive mesh when the case adapts (`mesh` and `dm` are then its active elements).
    amr: Option<Adaptivity>,
    /// Whether `dm` lags the device's adapted mesh (rebuilt by [`Simulation::sync_mesh`]).
    dm_stale: bool,
    /// Steps since the last adaptation: an adaptive run adapts every K steps counted across
    /// output times and restarts.
    since_adaptation: usize,
    /// [`mesh_fingerprint`] of the ordered base mesh (before any refinement).
    base_mesh: u64,
    setup: SetupTimes,
    /// Seconds spent reading the solution back, in all ([`Simulation::solution`]).
    readback_seconds: Cell<f64>,
}

impl Simulation {
    /// Build the case's mesh, color and order it ([`prepare`](crate::order::prepare); `opts.seed` seeds both), build
    /// the DG mesh and the GPU solver on `rt`, and set the L2 projection of the initial state
    /// (limited when the case limits) at t = 0.
    pub fn new(case: &Case, rt: &Runtime, opts: &SimulationOptions) -> Result<Simulation> {
        validate(case, opts)?;
        let started = Instant::now();
        let mesh = case.build_mesh(opts.seed)?;
        crate::memory::check_dg(&case.mesh.to_string(), mesh.num_elements(), case.order)?;
        let mesh_seconds = started.elapsed().as_secs_f64();
        let (om, prepare) = prepare_timed(&mesh, &PrepareOptions::new(opts.ordering, opts.seed))?;
        let started = Instant::now();
        let dm = DgMesh::build(&om, &|t| case.boundary(&om.mesh, t))?;
        let base_mesh = mesh_fingerprint(&dm);
        let tables = BasisTables::new(case.order);
        let mut setup = SetupTimes {
            mesh: mesh_seconds,
            prepare,
            geometry: started.elapsed().as_secs_f64(),
            ..SetupTimes::default()
        };
        let started = Instant::now();
        let project =
            |dm: &DgMesh| operator(case, dm, &tables).project(&|x, y| case.initial.eval(x, y, 0.0));
        let cfg = GpuConfig::for_case(case, opts.fixed_dt);
        let (mesh, dm, c0, amr, capacity) = match case.amr {
            Some(options) => {
                let mut amr = Adaptivity::new(&dm, case.order, options)?;
                let (dm, c0) = amr.initial(&tables, project)?;
                let capacity = if options.on_host {
                    Capacity::with_room(&dm, 2.0)
                } else {
                    device_capacity(dm.num_elements)
                };
                (OnceCell::new(), dm, c0, Some(amr), capacity)
            }
            None => {
                let c0 = project(&dm);
                let capacity = Capacity::of(&dm);
                (OnceCell::from(om.mesh), dm, c0, None, capacity)
            }
        };
        setup.projection = started.elapsed().as_secs_f64();
        let started = Instant::now();
        let layout = opts.surface.unwrap_or(SurfaceLayout::Gathered);
        // An adaptive run on the device builds the kernels of the gathered layout (with and
        // without hanging nodes), of the adaptation and of the reorder on other threads while
        // the solver's step kernels build, instead of after them and at its first adaptation.
        let device_amr = amr.as_ref().map(|a| a.options).filter(|o| !o.on_host);
        let (gpu, built_ahead) = std::thread::scope(|scope| {
            let gathered = (device_amr.is_some() && layout == SurfaceLayout::Gathered)
                .then(|| scope.spawn(|| build_gathered_kernels(rt, &dm, &tables, &cfg, capacity)));
            let adaptation = device_amr.map(|o| {
                scope.spawn(move || {
                    let reorder = o.reorder != ReorderPolicy::Never;
                    let (ne, smoothing) = (capacity.elements, o.device_smoothing(rt));
                    let color_order = writes_color_order(layout);
                    build_kernels_ahead(
                        rt,
                        case.order,
                        ne,
                        o.compaction,
                        smoothing,
                        color_order,
                        reorder,
                    )
                })
            });
            let gpu = GpuDg::with_capacity(rt, &dm, &tables, &cfg, capacity);
            let built = [gathered, adaptation]
                .into_iter()
                .flatten()
                .try_for_each(|b| {
                    b.join()
                        .unwrap_or_else(|_| Err(Error::Gpu("a kernel build panicked".into())))
                });
            (gpu, built)
        });
        let mut gpu = gpu?;
        built_ahead?;
        gpu.set_surface(layout)?;
        setup.solver = started.elapsed().as_secs_f64();
        let started = Instant::now();
        let mut sim = Simulation {
            case: case.clone(),
            mesh,
            dm,
            tables,
            gpu,
            batch: opts.batch,
            fixed_dt: opts.fixed_dt,
            t: 0.0,
            steps: 0,
            solution: OnceCell::new(),
            amr,
            dm_stale: false,
            since_adaptation: 0,
            base_mesh,
            setup,
            readback_seconds: Cell::new(0.0),
        };
        if case.limiter {
            let limited = sim.gpu.limit_once(&c0)?;
            sim.solution = OnceCell::from(limited);
        } else {
            sim.gpu.set_solution(&c0)?;
        }
        sim.setup.upload = started.elapsed().as_secs_f64();
        Ok(sim)
    }

    /// How long [`Simulation::new`] took, by phase.
    pub fn setup_times(&self) -> SetupTimes {
        self.setup
    }

    /// The elements as a [`Mesh`] (VTU geometry, vertex averages): the ordered mesh, or for an
    /// adaptive run its active elements, built on first use after each adaptation.
    fn element_mesh(&self) -> &Mesh {
        self.mesh.get_or_init(|| mesh_of(&self.dm))
    }

    /// Refinement level of each element (None when the case does not adapt).
    pub fn levels(&self) -> Option<Vec<u8>> {
        self.amr.as_ref().map(Adaptivity::levels)
    }

    /// The adaptive refinement's totals so far (None when the case does not adapt).
    pub fn amr_stats(&self) -> Option<AmrStats> {
        self.amr.as_ref().map(|a| a.stats)
    }

    /// Launches of each phase of a device adaptation
    /// ([`GpuAdaptation::launches`](super::amr::gpu::GpuAdaptation::launches); None when
    /// the trees are not on the device).
    pub fn adaptation_launches(&self) -> Option<Vec<(&'static str, usize)>> {
        let device = self.amr.as_ref()?.device()?;
        Some(device.launches().to_vec())
    }

    /// Adapt the mesh to the current solution (GK19 section 4), moving the GPU solver onto the
    /// new mesh; nothing when the case does not adapt. On the device unless the case asks for
    /// the host: the trees go to the device once (again when they need more room), then only
    /// a few counters come back per adaptation.
    pub fn adapt(&mut self) -> Result<()> {
        self.adapt_from(None)
    }

    /// [`Simulation::adapt`] starting on the device from `smoothed`, the smoothing read back
    /// with the clock for the solution as it stands ([`Simulation::read_clock_with_smoothing`]).
    fn adapt_from(&mut self, smoothed: Option<Smoothed>) -> Result<()> {
        let Some(amr) = self.amr.as_mut() else {
            return Ok(());
        };
        self.since_adaptation = 0;
        if amr.options.on_host {
            let started = Instant::now();
            let c = self.gpu.read_state()?;
            let read = started.elapsed().as_secs_f64();
            let (dm, c, _) = amr.adapt(&self.tables, &self.dm, &c)?;
            let started = Instant::now();
            self.gpu.remesh(&dm, &c)?;
            amr.add_transfer_seconds(read + started.elapsed().as_secs_f64());
            self.dm = dm;
            // The solution is what the device holds (c rounded to its f32 pairs), as after a
            // restart from this point.
            self.solution = OnceCell::new();
        } else {
            self.adapt_on_device(false, smoothed)?;
            self.solution = OnceCell::new();
        }
        self.mesh = OnceCell::new();
        Ok(())
    }

    /// One device adaptation, from `smoothed` when given ([`Adaptivity::adapt_on_device`]):
    /// the trees go to the device first when they are not there, and again (with larger solver
    /// buffers, the flags smoothed again) when the flags ask for more room than there is.
    fn adapt_on_device(
        &mut self,
        timed: bool,
        mut smoothed: Option<Smoothed>,
    ) -> Result<PhaseSeconds> {
        let mut room_for = None;
        loop {
            let Some(amr) = self.amr.as_mut() else {
                return Ok(PhaseSeconds::new());
            };
            if !amr.on_device() || room_for.is_some() {
                let started = Instant::now();
                amr.sync_host()?;
                let dm = amr.dg_mesh()?;
                let capacity = device_capacity(
                    room_for.map_or(dm.num_elements, |s: usize| s.max(dm.num_elements)),
                );
                if self.gpu.capacity().elements < capacity.elements {
                    let c = self.gpu.read_state()?;
                    self.gpu.reserve(&dm, &c, capacity)?;
                }
                amr.attach_device(&self.gpu, &dm)?;
                amr.add_setup_seconds(started.elapsed().as_secs_f64());
                self.dm = dm;
                self.dm_stale = false;
            }
            match amr.adapt_on_device(&mut self.gpu, timed, smoothed.take())? {
                DeviceAdaptation::Done(_, phases) => {
                    self.dm_stale = true;
                    return Ok(phases);
                }
                DeviceAdaptation::NeedsRoom(s) if room_for.is_none() => {
                    room_for = Some(slots_needed(s.active, s.refines));
                }
                DeviceAdaptation::NeedsRoom(s) => {
                    return Err(Error::Run(format!(
                        "adaptation: no room for {} refined of {} elements after growing the \
                         buffers",
                        s.refines, s.active
                    )))
                }
            }
        }
    }

    /// Seconds of each phase of `adaptations` adaptations, `steps` time steps apart (GK19
    /// Table 3): per adaptation, the elements before it and (phase, seconds) pairs, on the
    /// device ([`Adaptivity::adapt_on_device`]) or for the host path from [`AmrStats`], plus
    /// the wall seconds of the whole adaptation ("wall").
    pub fn time_adaptations(
        &mut self,
        steps: usize,
        adaptations: usize,
    ) -> Result<Vec<(usize, PhaseSeconds)>> {
        let mut out = Vec::with_capacity(adaptations);
        for _ in 0..adaptations {
            self.bench_batch(steps, false)?;
            let Some(on_host) = self.amr.as_ref().map(|a| a.options.on_host) else {
                return Err(Error::Invalid(
                    "time_adaptations: the case does not adapt".into(),
                ));
            };
            let elements = self.gpu.num_elements;
            let mut phases = if on_host {
                let before = self.amr_stats().unwrap_or_default();
                let started = Instant::now();
                self.adapt()?;
                let wall = started.elapsed().as_secs_f64();
                let after = self.amr_stats().unwrap_or_default();
                vec![
                    (
                        "indicator",
                        after.indicator_seconds - before.indicator_seconds,
                    ),
                    (
                        "smoothing",
                        after.smoothing_seconds - before.smoothing_seconds,
                    ),
                    ("adapt", after.adapt_seconds - before.adapt_seconds),
                    (
                        "connectivity",
                        after.connectivity_seconds - before.connectivity_seconds,
                    ),
                    (
                        "transfers",
                        after.transfer_seconds - before.transfer_seconds,
                    ),
                    ("wall", wall),
                ]
            } else {
                let started = Instant::now();
                let mut phases = self.adapt_on_device(true, None)?;
                phases.push(("wall", started.elapsed().as_secs_f64()));
                phases
            };
            phases.retain(|(_, s)| s.is_finite());
            out.push((elements, phases));
        }
        self.solution = OnceCell::new();
        self.mesh = OnceCell::new();
        self.sync_mesh()?;
        Ok(out)
    }

    /// What `adaptations` untimed adaptations, `steps` time steps apart, cost a run, as
    /// [`Simulation::advance_to`] runs them: per adaptation, two batches of `steps` steps
    /// with their clocks read back and no adaptation, then two with the adaptation between
    /// them (its flags and smoothing queued behind the first batch and read with its clock);
    /// the adaptation costs the difference. The device work queued behind a wait is paid at
    /// the next one, so each measure ends at the second batch's clock. A third batch after
    /// those tells how much of the second's extra time stays with the adapted mesh.
    pub fn time_adaptation_walls(
        &mut self,
        steps: usize,
        adaptations: usize,
    ) -> Result<Vec<AdaptationWall>> {
        if self.amr.is_none() {
            return Err(Error::Invalid(
                "time_adaptation_walls: the case does not adapt".into(),
            ));
        }
        let rt = self.gpu.runtime().clone();
        let mut out = Vec::with_capacity(adaptations);
        let mut grew = false;
        for _ in 0..adaptations {
            if grew {
                // The first steps of a solver rebuilt for more room pay one-time costs (on
                // wgpu enough to turn the mean over adaptations negative at 106k elements):
                // not a plain batch to compare with.
                self.bench_batch(steps, false)?;
            }
            let elements = self.gpu.num_elements;
            let reads = rt.readbacks();
            let plain = [
                self.bench_batch(steps, false)?.0,
                self.bench_batch(steps, false)?.0,
            ];
            let plain_reads = rt.readbacks() - reads;
            let reads = rt.readbacks();
            let (first, smoothed) = self.bench_batch(steps, true)?;
            let counts = |sim: &Self| {
                sim.amr_stats()
                    .map_or((0, 0, 0), |s| (s.reorders, s.setups, s.device_unchanged))
            };
            let before = counts(self);
            let started = Instant::now();
            self.adapt_from(smoothed)?;
            let host = started.elapsed().as_secs_f64();
            let after = counts(self);
            let (second, _) = self.bench_batch(steps, false)?;
            let readbacks = (rt.readbacks() - reads).saturating_sub(plain_reads);
            let (later, _) = self.bench_batch(steps, false)?;
            let device_seconds = self.read_adaptation_device_time()?;
            grew = after.1 > before.1;
            out.push(AdaptationWall {
                elements,
                steps_seconds: (plain[0] + plain[1]) / 2.0,
                adapt_seconds: first + host + second - plain[0] - plain[1],
                readbacks,
                first_batch_seconds: first - plain[0],
                host_seconds: host,
                second_batch_seconds: second - plain[1],
                later_batch_seconds: later - plain[1],
                reordered: after.0 > before.0,
                grew,
                changed: after.2 == before.2,
                device_seconds,
            });
        }
        self.sync_mesh()?;
        Ok(out)
    }

    /// Time the device work of one adaptation in `every` (0: none); a run times one in
    /// [`crate::solver::dg::amr::driver::DEVICE_TIMING_EVERY`] by default.
    pub fn set_adaptation_timing(&mut self, every: usize) {
        if let Some(amr) = self.amr.as_mut() {
            amr.set_device_timing(every);
        }
    }

    /// The device time of the adaptation work queued since the last read (waits for it), or
    /// None when it is not timed (no timestamps, or the host path).
    fn read_adaptation_device_time(&mut self) -> Result<Option<f64>> {
        let Some(amr) = self.amr.as_mut() else {
            return Ok(None);
        };
        let (seconds, spans) = (amr.stats.device_seconds, amr.stats.device_spans);
        amr.read_device_time()?;
        Ok((amr.stats.device_spans > spans).then_some(amr.stats.device_seconds - seconds))
    }

    /// Surface-kernel seconds per step on the mesh as adapted, and on the same mesh with its
    /// elements along a Morton curve and its faces by color and left element (GK19's
    /// compaction keeps no order); `None` without device timestamps. Consumes the simulation:
    /// the reordered solver no longer matches the adaptive trees.
    pub fn surface_locality(self, steps: usize) -> Result<Option<(f64, f64)>> {
        let surface = |t: &[(Kernel, f64)]| group_seconds(t, Kernel::Surface);
        Ok(self
            .step_kernels_locality(steps)?
            .map(|(adapted, reordered)| (surface(&adapted), surface(&reordered))))
    }

    /// Seconds per step of each kernel group ([`GpuDg::time_kernels`], one entry per group in
    /// step order) on the mesh as adapted and on the same mesh along a Morton curve, as
    /// [`Simulation::surface_locality`] times them.
    pub fn step_kernels_locality(
        mut self,
        steps: usize,
    ) -> Result<Option<(KernelSeconds, KernelSeconds)>> {
        let per_step = |gpu: &GpuDg| -> Result<Option<KernelSeconds>> {
            Ok(gpu.time_kernels(steps)?.map(|t| {
                let mut groups: Vec<(Kernel, f64)> = Vec::new();
                for (k, s) in t {
                    match groups.iter_mut().find(|(g, _)| *g == k) {
                        Some(entry) => entry.1 += s,
                        None => groups.push((k, s)),
                    }
                }
                for entry in &mut groups {
                    entry.1 /= steps.max(1) as f64;
                }
                groups
            }))
        };
        self.sync_mesh()?;
        let Some(adapted) = per_step(&self.gpu)? else {
            return Ok(None);
        };
        let order = locality::morton_order(&self.dm);
        let dm = locality::permute(&self.dm, &order);
        let c =
            locality::permute_coefficients(&self.gpu.read_state()?, self.dm.num_elements, &order);
        self.gpu.remesh(&dm, &c)?;
        Ok(per_step(&self.gpu)?.map(|reordered| (adapted, reordered)))
    }

    /// Bring the host's DG mesh (and [`Simulation::levels`]) up to the device's after device
    /// adaptations: the trees are read back (nothing when they are current).
    pub fn sync_mesh(&mut self) -> Result<()> {
        if !self.dm_stale {
            return Ok(());
        }
        if let Some(amr) = self.amr.as_mut() {
            amr.sync_host()?;
            self.dm = amr.dg_mesh()?;
        }
        self.dm_stale = false;
        Ok(())
    }

    pub fn case(&self) -> &Case {
        &self.case
    }

    /// The DG mesh (elements, edges, colors) in the chosen ordering.
    pub fn mesh(&self) -> &DgMesh {
        &self.dm
    }

    pub fn tables(&self) -> &BasisTables {
        &self.tables
    }

    /// The f64 reference operator on this mesh (projections, errors, totals of any state).
    pub fn operator(&self) -> Operator<'_> {
        operator(&self.case, &self.dm, &self.tables)
    }

    /// The right-hand side of `c` at time `t` through the solver's plans (on an adapted mesh,
    /// the launch records the adaptation wrote), for comparison with [`Simulation::operator`]'s.
    /// A test's probe, not a step: replaces the solution on the device with `c` and sets the
    /// device clock to `t`.
    pub fn eval_rhs(&mut self, c: &[f64], t: f64) -> Result<Vec<f64>> {
        self.solution = Default::default();
        self.gpu.eval_rhs(c, t)
    }

    /// The solver's launch records as they stand on the device (a read-back;
    /// [`crate::solver::dg::gpu::mesh_launch_records`] gives the host's for a mesh).
    pub fn launch_records(&self) -> Result<Vec<u32>> {
        self.gpu.runtime().read_all(self.gpu.launch_words())
    }

    /// The device the solver runs on.
    pub fn device_name(&self) -> String {
        self.gpu.device_name()
    }

    /// Simulated time.
    pub fn time(&self) -> f64 {
        self.t
    }

    /// Time steps taken since t = 0.
    pub fn steps(&self) -> u64 {
        self.steps
    }

    /// Advance to time `t` ([`Simulation::advance_to_with`] without progress reports).
    pub fn advance_to(&mut self, t: f64) -> Result<()> {
        self.advance_to_with(t, |_, _| true)
    }

    /// Advance to time `target` in batches of steps, calling `progress(t, steps)` after each;
    /// when it returns false the run stops there, at a step boundary short of `target` (call
    /// again to go on, to the same bits). Then checks that the solution is finite (one read
    /// back, kept for [`Simulation::solution`]). The GPU clock is f32: the run ends when it
    /// reaches `target` rounded to f32, and the host time is then `target` exactly. Errors
    /// ([`Error::Run`]) when the clock stops moving or cannot reach `target` in f32, or the
    /// solution blew up; the time and steps then say where it stopped.
    pub fn advance_to_with(
        &mut self,
        target: f64,
        mut progress: impl FnMut(f64, u64) -> bool,
    ) -> Result<()> {
        if !target.is_finite() || target < self.t {
            return Err(Error::Invalid(format!(
                "cannot advance the DG simulation from t = {} to t = {target}",
                self.t
            )));
        }
        if target == self.t {
            return Ok(());
        }
        self.solution = OnceCell::new();
        self.gpu.set_clock(self.t, target)?;
        let end = target as f32 as f64;
        let (mut last, mut base) = (self.t as f32 as f64, self.steps);
        // With adaptive refinement a batch ends at the next adaptation: every K steps, counted
        // on across output times (the clock's steps since it was set are `counted` so far).
        let every = self
            .amr
            .as_ref()
            .map(|a| a.options.steps_between(self.tables.p));
        let mut counted = 0;
        // The smoothing read back with the last clock, for the adaptation right after it.
        let mut smoothed;
        loop {
            let batch = every.map_or(self.batch, |k| k.saturating_sub(self.since_adaptation));
            self.gpu.queue_steps(batch.max(1))?;
            let clock;
            // Due when the clock takes all of the batch's steps: since_adaptation reaches K.
            (clock, smoothed) =
                self.read_clock_with_smoothing((counted as usize + batch) as u32)?;
            self.steps = base + clock.steps;
            self.since_adaptation += (clock.steps - counted) as usize;
            counted = clock.steps;
            let due = every.is_some_and(|k| self.since_adaptation >= k);
            if let Some(s) = smoothed.filter(|s| s.queued) {
                if (s.decision == AdaptDecision::NotDue) == due {
                    return Err(Error::Run(format!(
                        "adaptation: the device decided {:?} after {} steps of the clock, but \
                         the host finds the adaptation {}due",
                        s.decision,
                        clock.steps,
                        if due { "" } else { "not " }
                    )));
                }
            }
            let go_on = progress(clock.t, self.steps);
            if clock.t >= end {
                break;
            }
            self.t = clock.t;
            let blown_up = !(clock.t > last && clock.dt > 0.0 && clock.dt.is_finite());
            let stalls = clock_stalls(target, clock.dt);
            if (blown_up || stalls.is_some()) && smoothed.is_some_and(|s| s.ran_ahead()) {
                // The device adapted already: the solver moves onto its mesh first.
                self.adapt_from(smoothed.take())?;
            }
            if blown_up {
                self.sync_mesh()?;
                return Err(self.blow_up());
            }
            if let Some(why) = stalls {
                return Err(Error::Run(format!(
                    "the DG run cannot reach t = {target} (at t = {} after {} steps): {why}",
                    self.t, self.steps
                )));
            }
            last = clock.t;
            if due {
                (base, counted) = (self.steps, 0);
                self.adapt_from(smoothed.take())?;
                self.solution = OnceCell::new();
                self.gpu.set_clock(clock.t, target)?;
            }
            if !go_on {
                return self.sync_mesh();
            }
        }
        self.t = target;
        // The K-th step since the last adaptation landed on the target: adapt there.
        if every.is_some_and(|k| self.since_adaptation >= k) {
            self.adapt_from(smoothed)?;
        }
        self.sync_mesh()?;
        if self.solution()?.iter().any(|v| !v.is_finite()) {
            return Err(self.blow_up());
        }
        Ok(())
    }

    /// One batch of `steps` steps toward a far end (the steps only move the solution between
    /// the adaptations a benchmark times) and its clock read back, with the flags and the
    /// smoothing queued behind it when `smooth`: its wall seconds and the smoothing.
    fn bench_batch(&mut self, steps: usize, smooth: bool) -> Result<(f64, Option<Smoothed>)> {
        let started = Instant::now();
        self.gpu.set_clock(self.t, self.t + 1e3)?;
        self.gpu.queue_steps(steps)?;
        let (clock, smoothed) = if smooth {
            // The adaptation is due after all `steps` (the clock was set just before them).
            self.read_clock_with_smoothing(steps as u32)?
        } else {
            (self.gpu.read_clock()?, None)
        };
        (self.t, self.steps) = (clock.t, self.steps + clock.steps);
        Ok((started.elapsed().as_secs_f64(), smoothed))
    }

    /// The clock after the steps queued so far. An adaptive run on the device, whose every
    /// batch ends at an adaptation, queues the adaptation's flags and smoothing behind the
    /// batch and reads the clock with the smoothing's counts: one wait per
    /// adaptation cycle instead of two. The adaptation itself is queued behind them and runs
    /// on the device when the clock reached `due_steps` steps since it was set (the batch took
    /// all its steps: [`Adaptivity::smooth_with_clock`]). The smoothing is for an adaptation
    /// right after this, before anything else is queued; when [`Smoothed::ran_ahead`], that
    /// adaptation must come (the device's mesh changed).
    fn read_clock_with_smoothing(&mut self, due_steps: u32) -> Result<(Clock, Option<Smoothed>)> {
        if let Some(amr) = self.amr.as_ref() {
            if let Some((words, smoothed)) = amr.smooth_with_clock(due_steps)? {
                return Ok((clock_from_words(&words)?, Some(smoothed)));
            }
        }
        Ok((self.gpu.read_clock()?, None))
    }

    /// The error for a run that blew up or stalled: time, steps, and the first element with
    /// a NaN or Inf coefficient with its centroid.
    fn blow_up(&self) -> Error {
        let ne = self.dm.num_elements.max(1);
        let bad = self
            .solution()
            .ok()
            .and_then(|c| c.iter().position(|v| !v.is_finite()));
        let at = bad.map_or(String::new(), |k| {
            let v = self.dm.vertices[k % ne];
            let (x, y) = (
                (v[0][0] + v[1][0] + v[2][0]) / 3.0,
                (v[0][1] + v[1][1] + v[2][1]) / 3.0,
            );
            format!(": element {} at ({x:.4}, {y:.4}) has a NaN or Inf", k % ne)
        });
        Error::Run(format!(
            "the DG run stopped at t = {} after {} steps{at}: the solution blew up; try a \
             smaller CFL number or time step",
            self.t, self.steps
        ))
    }

    /// Fingerprints of what decides the solution: the case (final time and snapshots
    /// excluded, they may change on a restart) and the ordered mesh.
    fn fingerprints(&self) -> (u64, u64) {
        let mut case = self.case.clone();
        (case.t_end, case.snapshot_every) = (0.0, None);
        case.mesh = crate::mesh::MeshSource::Builtin(String::new());
        let text = format!("{case:?} {:?}", self.fixed_dt);
        (fingerprint(text.as_bytes()), self.base_mesh)
    }

    /// What a restart of an adaptive run must share with the run that wrote the checkpoint,
    /// by name (so a mismatch says which): the order, the adaptation's options and path, the
    /// backend (its words are the device's) and the surface layout. None without adaptation.
    fn restart_settings(&self) -> BTreeMap<String, String> {
        let Some(amr) = &self.amr else {
            return BTreeMap::new();
        };
        let o = amr.options;
        [
            ("order", self.tables.p.to_string()),
            ("amr levels", o.max_level.to_string()),
            ("amr every", o.steps_between(self.tables.p).to_string()),
            (
                "amr threshold",
                o.threshold.map_or("default".into(), |t| t.to_string()),
            ),
            ("amr delta", o.delta.to_string()),
            ("amr field", format!("{:?}", o.field)),
            ("amr path", if o.on_host { "host" } else { "device" }.into()),
            ("backend", self.gpu.runtime().kind().name().into()),
            ("surface", self.gpu.surface_layout().name().into()),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect()
    }

    /// Write a checkpoint of the current state: the solution's device words (hi, then lo);
    /// for an adaptive run as sections, with the adapted mesh ([`Simulation::push_adaptive`]).
    fn save(&self, path: &Path, fp: (u64, u64), outputs: usize, rows: usize) -> Result<()> {
        let words: Vec<u32> = self
            .gpu
            .state_words()?
            .iter()
            .map(|v| v.to_bits())
            .collect();
        let pos = (self.t, self.steps);
        let adaptive = self.amr.is_some();
        let mut ck = Checkpoint::new(
            "dg",
            self.device_name(),
            fp.0,
            fp.1,
            pos,
            (outputs as u64, rows as u64),
            if adaptive { Vec::new() } else { words.clone() },
        );
        if adaptive {
            ck.header.settings = self.restart_settings();
            ck.push_section(SOLUTION, &words);
            self.push_adaptive(&mut ck)?;
        }
        ck.write(path)
    }

    /// Add the adapted mesh to `ck` (the host's mesh in sync with the device's): element and
    /// face counts, the solver's capacity and its mesh buffers word for word (the device
    /// computed the geometry), the steps since the last adaptation, the threshold, and the
    /// trees: the device's words once they live there, else the host's f64 trees.
    fn push_adaptive(&self, ck: &mut Checkpoint) -> Result<()> {
        let Some(amr) = &self.amr else {
            return Ok(());
        };
        let faces = self.dm.edges.len();
        let capacity = self.gpu.capacity();
        let mut values = vec![
            ("elements", self.dm.num_elements as u64),
            ("faces", faces as u64),
            ("capacity elements", capacity.elements as u64),
            ("capacity edges", capacity.edges as u64),
            ("steps since adaptation", self.since_adaptation as u64),
            ("threshold bits", amr.threshold.to_bits()),
            ("adaptations since reorder", amr.reorder_state().0 as u64),
            ("far baseline bits", amr.reorder_state().1.to_bits()),
        ];
        if let Some(frame) = amr.morton_frame() {
            values.extend(
                MORTON_FRAME
                    .iter()
                    .zip(frame.origin.iter().chain(&frame.scale))
                    .map(|(&name, v)| (name, u64::from(v.to_bits()))),
            );
        }
        ck.push_section(MESH_WORDS, &self.gpu.mesh_words(faces)?);
        match amr.device() {
            Some(device) => {
                let trees = device.capacity();
                values.push(("tree capacity elements", trees.elements as u64));
                values.push(("tree capacity edges", trees.edges as u64));
                ck.push_section(super::restart::DEVICE_TREES, &device.state_words()?);
            }
            None => super::restart::push_host_trees(ck, &amr.host_mesh().to_flat()),
        }
        ck.header
            .values
            .extend(values.into_iter().map(|(k, v)| (k.to_string(), v)));
        Ok(())
    }

    /// Continue from an adaptive checkpoint `ck` (read from `path`): its trees (checked), the
    /// solver rebuilt with the capacity the run had, its mesh and solution words restored, the
    /// trees back on the device where they were, the adaptation count where it stood. Any
    /// failure is an error naming the file.
    fn restore_adaptive(&mut self, ck: &Checkpoint, path: &Path) -> Result<()> {
        let value = |name: &str| -> Result<usize> {
            let v = ck.value(path, name)?;
            usize::try_from(v).map_err(|_| unusable(path, &format!("its {name} {v} is too large")))
        };
        let Some(amr) = self.amr.as_mut() else {
            return Err(unusable(path, "this run does not adapt"));
        };
        let (n, faces) = (value("elements")?, value("faces")?);
        let capacity = Capacity {
            elements: value("capacity elements")?,
            edges: value("capacity edges")?,
        };
        let threshold = f64::from_bits(ck.value(path, "threshold bits")?);
        let since = value("steps since adaptation")?;
        let every = amr.options.steps_between(self.tables.p);
        if since >= every || !(threshold > 0.0 && threshold.is_finite()) {
            return Err(unusable(
                path,
                &format!(
                    "{since} steps since the last adaptation (it adapts every {every}) and                      threshold {threshold}"
                ),
            ));
        }
        let device = match ck.has_section(super::restart::DEVICE_TREES) {
            true => Some(TreeWords {
                capacity: TreeCapacity {
                    elements: value("tree capacity elements")?,
                    edges: value("tree capacity edges")?,
                },
                slot_capacity: capacity.elements,
                max_level: amr.options.max_level,
                base_colors: amr.host_mesh().base_colors,
            }),
            false => None,
        };
        let base_colors = amr.host_mesh().base_colors;
        let trees =
            super::restart::read_trees(ck, path, amr.options.max_level, base_colors, device)?;
        let fit = |e: Error| unusable(path, &format!("its state does not fit this run: {e}"));
        let reorder = (
            value("adaptations since reorder")?,
            f64::from_bits(ck.value(path, "far baseline bits")?),
        );
        amr.restore(trees, threshold, reorder, morton_frame(ck, path)?)
            .map_err(fit)?;
        let dm = amr.dg_mesh().map_err(fit)?;
        if dm.num_elements != n || dm.edges.len() != faces {
            return Err(unusable(
                path,
                &format!(
                    "its trees give {} elements and {} faces, it says {n} and {faces}",
                    dm.num_elements,
                    dm.edges.len()
                ),
            ));
        }
        let words: Vec<f32> = ck
            .section(path, SOLUTION)?
            .iter()
            .map(|&w| f32::from_bits(w))
            .collect();
        let ndof = 4 * self.tables.np * n;
        if words.len() != 2 * ndof {
            return Err(unusable(
                path,
                &format!(
                    "{} solution words for {n} elements, {} expected",
                    words.len(),
                    2 * ndof
                ),
            ));
        }
        let c: Vec<f64> = (0..ndof)
            .map(|i| f64::from(words[i]) + f64::from(words[ndof + i]))
            .collect();
        self.gpu.reserve(&dm, &c, capacity).map_err(fit)?;
        self.gpu.set_state_words(&words).map_err(fit)?;
        self.gpu
            .set_mesh_words(faces, ck.section(path, MESH_WORDS)?)
            .map_err(fit)?;
        if let Some(words) = device {
            let trees = ck.section(path, super::restart::DEVICE_TREES)?;
            amr.restore_device(&self.gpu, &dm, words.capacity, trees)
                .map_err(fit)?;
        }
        self.dm = dm;
        self.dm_stale = false;
        self.mesh = OnceCell::new();
        self.solution = OnceCell::new();
        self.since_adaptation = since;
        Ok(())
    }

    /// The box of the device reorder's Morton keys, None until the trees first go to the
    /// device (and on the host path): a restart must keep it bit for bit.
    pub fn morton_frame(&self) -> Option<MortonFrame> {
        self.amr.as_ref().and_then(|a| a.morton_frame())
    }

    /// The adapted mesh's trees as they stand (synced from the device), None when the case
    /// does not adapt: what a restart must reproduce id for id.
    pub fn adaptive_trees(&mut self) -> Result<Option<FlatTree>> {
        let Some(amr) = self.amr.as_mut() else {
            return Ok(None);
        };
        amr.sync_host()?;
        Ok(Some(amr.host_mesh().to_flat()))
    }

    /// The modal coefficients at the current time, `c[eq][k][element]` (read back once per time).
    pub fn solution(&self) -> Result<&[f64]> {
        if let Some(c) = self.solution.get() {
            return Ok(c);
        }
        let started = Instant::now();
        let c = self.gpu.read_state()?;
        let read = started.elapsed().as_secs_f64();
        self.readback_seconds
            .set(self.readback_seconds.get() + read);
        Ok(self.solution.get_or_init(|| c))
    }

    /// Domain integrals of (rho, rho u, rho v, E): sum_i |Omega_i| mean_i(U), conserved up to
    /// boundary fluxes and f32 round-off.
    pub fn totals(&self) -> Result<State> {
        Ok(self.operator().totals(self.solution()?))
    }

    /// ||rho_h - rho||_L2 = (int (rho_h - rho_exact)^2 dx)^(1/2) at the current time, when the
    /// case's initial function is its exact solution (`None` otherwise).
    pub fn l2_density_error(&self) -> Result<Option<f64>> {
        if !self.case.exact {
            return Ok(None);
        }
        Ok(Some(
            self.operator().l2_density_error(self.solution()?, self.t),
        ))
    }

    /// Write snapshot `index` of the current time into `dir`: one PNG per field,
    /// `{field}_{index:04}.png`, each element's polynomial evaluated per pixel (an adaptive
    /// run's mesh drawn over it), and with `opts.vtu` `dg_{index:04}.vtu`: VTK Lagrange
    /// triangles of degree max(p, 1) with every field at their nodes and the element means as
    /// cell data, added to the collection [`COLLECTION`] in `dir`. Files are written whole;
    /// returns the PNGs and the VTU.
    pub fn write_snapshot(
        &self,
        dir: &Path,
        index: usize,
        opts: &SnapshotOptions,
    ) -> Result<Vec<PathBuf>> {
        std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
        let c = self.solution()?;
        let p = self.tables.p;
        let mut files = Vec::new();
        for &q in &opts.fields {
            let name = q.name();
            let plot = PlotOptions {
                title: format!("{}: {name}, p = {p}, t = {:.4}", self.case.name, self.t),
                label: name.to_string(),
                width: 1400,
                height: if matches!(self.case.initial, StateFn::DoubleMach) {
                    520
                } else {
                    1000
                },
                contours: opts.contours,
                ..PlotOptions::default()
            };
            let path = dir.join(format!("{name}_{index:04}.png"));
            let field = ModalField::new(&self.dm.vertices, p, c, q);
            // An adaptive run shows its mesh over the solution.
            let overlay = self.amr.as_ref().map(|_| self.element_mesh());
            save_triangle_field_png(&field, &plot, overlay, &path)?;
            files.push(path);
        }
        if opts.vtu {
            let name = format!("dg_{index:04}.vtu");
            let path = dir.join(&name);
            self.write_vtu(&path, &opts.fields)?;
            add_to_collection(&dir.join(COLLECTION), self.t, &name)?;
            files.push(path);
        }
        Ok(files)
    }

    /// Write the solution as VTK Lagrange triangles of degree max(p, 1) at `path`: every
    /// field of `fields` at the nodes, their element means as cell data (`{field}_mean`).
    pub fn write_vtu(&self, path: &Path, fields: &[Quantity]) -> Result<()> {
        let c = self.solution()?;
        let p = self.tables.p;
        let degree = p.max(1);
        let lattice: Vec<[f64; 2]> = lagrange_triangle_nodes(degree)
            .iter()
            .map(|&(i, j)| [i as f64 / degree as f64, j as f64 / degree as f64])
            .collect();
        let nodes: Vec<[f64; 2]> = (0..self.dm.num_elements)
            .flat_map(|e| lattice.iter().map(move |x| self.dm.map(e, x[0], x[1])))
            .collect();
        let op = self.operator();
        let mut point_fields = Vec::new();
        let mut cell_fields = Vec::new();
        for &q in fields {
            let field = ModalField::new(&self.dm.vertices, p, c, q);
            point_fields.push((q.name().to_string(), field.at_points(&lattice)));
            let means = (0..self.dm.num_elements).map(|i| q.eval(&op.mean(c, i)));
            cell_fields.push((format!("{}_mean", q.name()), means.collect::<Vec<f64>>()));
        }
        write_vtu_lagrange_triangles(
            path,
            degree,
            &nodes,
            &named(&point_fields),
            &named(&cell_fields),
        )
    }

    /// The whole `dg` job: from t = 0 (or `rc`'s restart checkpoint) to the case's `t_end`, a
    /// snapshot (and a row of [`TOTALS_CSV`] in `out`) at the start and every
    /// `snapshot_every` (default: at the end only), bounded and checkpointed as `rc` says.
    /// `progress(t, steps)` is called after every batch of steps. On an interrupt
    /// ([`crate::interrupt`]) it stops at a step boundary, writes a snapshot and a checkpoint
    /// and returns [`Error::Interrupted`].
    pub fn run(
        &mut self,
        out: &Path,
        snapshots: &SnapshotOptions,
        rc: &RunControl,
        mut progress: impl FnMut(f64, u64),
    ) -> Result<RunSummary> {
        let started = Instant::now();
        let mut clock = RunClock::default();
        let ck_path = out.join(checkpoint::FILE_NAME);
        let fp = self.fingerprints();
        let restart = rc.restart_with("dg", fp.0, fp.1, &self.restart_settings())?;
        let times = output_times(self.case.t_end, self.case.snapshot_every, rc.max_snapshots)?;
        std::fs::create_dir_all(out).map_err(|e| Error::io(out, e))?;
        let csv_path = out.join(TOTALS_CSV);
        let mut files = Vec::new();
        let (mut csv, mut index) = match &restart {
            Some(ck) => {
                let path = rc.restart.as_deref().unwrap_or(&ck_path);
                if self.device_name() != ck.header.device {
                    log::warn!(
                        "{}: written on {}, continuing on {} (not to the same bits)",
                        path.display(),
                        ck.header.device,
                        self.device_name()
                    );
                }
                if self.amr.is_some() {
                    self.restore_adaptive(ck, path)?;
                } else {
                    let words: Vec<f32> = ck.payload.iter().map(|&w| f32::from_bits(w)).collect();
                    self.gpu.set_state_words(&words).map_err(|e| {
                        Error::Invalid(format!(
                            "checkpoint {}: the state does not fit this run ({e})",
                            path.display()
                        ))
                    })?;
                }
                (self.t, self.steps, self.solution) =
                    (ck.header.t, ck.header.steps, OnceCell::new());
                let rows = ck.header.csv_rows as usize;
                (
                    CsvWriter::resume(&csv_path, &TOTALS_COLUMNS, rows)?,
                    ck.header.outputs as usize,
                )
            }
            None => {
                let mut csv = CsvWriter::create(&csv_path, &TOTALS_COLUMNS)?;
                files.push(csv_path);
                files.extend(self.record(out, 0, snapshots, &mut csv, &mut clock)?);
                (csv, 0)
            }
        };
        let first_step = self.steps;
        let mut next_ck = rc.next_checkpoint(self.t);
        for (i, target) in times.enumerate().skip(index) {
            loop {
                let due = next_ck;
                let adapting = self.amr_stats().map_or(0.0, |a| a.seconds());
                let reading = self.readback_seconds.get();
                let stepping = Instant::now();
                self.advance_to_with(target, |t, s| {
                    progress(t, s);
                    !crate::interrupt::requested() && t < due
                })?;
                let adapted = self.amr_stats().map_or(0.0, |a| a.seconds()) - adapting;
                let read = self.readback_seconds.get() - reading;
                clock.step += stepping.elapsed().as_secs_f64() - adapted - read;
                clock.outputs.readback += read;
                if crate::interrupt::requested() {
                    self.write_snapshot(out, i + 1, snapshots)?;
                    self.save(&ck_path, fp, i, csv.rows_written())?;
                    return Err(interrupted(self.t, self.steps, &ck_path));
                }
                if self.t >= next_ck {
                    let started = Instant::now();
                    self.save(&ck_path, fp, i, csv.rows_written())?;
                    clock.outputs.checkpoints += started.elapsed().as_secs_f64();
                    next_ck = rc.next_checkpoint(self.t);
                }
                if self.t >= target {
                    break;
                }
            }
            index = i + 1;
            files.extend(self.record(out, index, snapshots, &mut csv, &mut clock)?);
        }
        if snapshots.vtu {
            files.push(out.join(COLLECTION));
        }
        self.read_adaptation_device_time()?;
        Ok(RunSummary {
            steps: self.steps,
            t: self.t,
            wall_seconds: started.elapsed().as_secs_f64(),
            step_seconds: clock.step,
            output_seconds: clock.outputs.total(),
            outputs: clock.outputs,
            l2_density_error: clock.l2_density_error,
            run_steps: self.steps - first_step,
            setup: self.setup,
            snapshots: index + 1,
            files,
            amr: self.amr_stats(),
            elements: self.dm.num_elements,
        })
    }

    /// One CSV row (NaN error without an exact solution) and snapshot `index`, timed into
    /// `clock`.
    fn record(
        &self,
        out: &Path,
        index: usize,
        snapshots: &SnapshotOptions,
        csv: &mut CsvWriter,
        clock: &mut RunClock,
    ) -> Result<Vec<PathBuf>> {
        let started = Instant::now();
        self.solution()?;
        clock.outputs.readback += started.elapsed().as_secs_f64();
        let started = Instant::now();
        let tot = self.totals()?;
        let l2 = self.l2_density_error()?;
        clock.l2_density_error = l2;
        clock.outputs.diagnostics += started.elapsed().as_secs_f64();
        let started = Instant::now();
        let err = l2.unwrap_or(f64::NAN);
        csv.row(&[
            self.t,
            self.steps as f64,
            tot[0],
            tot[1],
            tot[2],
            tot[3],
            err,
            self.dm.num_elements as f64,
        ])?;
        let written = self.write_snapshot(out, index, snapshots);
        clock.outputs.files += started.elapsed().as_secs_f64();
        written
    }
}

/// Values of an adaptive checkpoint with the Morton frame's f32 bits (origin x, y, scale x, y),
/// present once the trees have been on the device.
const MORTON_FRAME: [&str; 4] = [
    "morton origin x bits",
    "morton origin y bits",
    "morton scale x bits",
    "morton scale y bits",
];

/// The Morton frame an adaptive checkpoint holds (None when it has none: written before the
/// trees first went to the device); an error naming the file when it is partial or unusable
/// (not finite, a negative scale).
fn morton_frame(ck: &Checkpoint, path: &Path) -> Result<Option<MortonFrame>> {
    if !MORTON_FRAME
        .iter()
        .any(|name| ck.header.values.contains_key(*name))
    {
        return Ok(None);
    }
    let mut v = [0f32; 4];
    for (x, name) in v.iter_mut().zip(MORTON_FRAME) {
        *x = u32::try_from(ck.value(path, name)?)
            .map(f32::from_bits)
            .map_err(|_| unusable(path, &format!("its {name} is not 32 bits")))?;
    }
    if !(v.iter().all(|x| x.is_finite()) && v[2] >= 0.0 && v[3] >= 0.0) {
        return Err(unusable(
            path,
            &format!("its Morton frame {v:?} is not usable"),
        ));
    }
    Ok(Some(MortonFrame {
        origin: [v[0], v[1]],
        scale: [v[2], v[3]],
    }))
}

/// Section of an adaptive checkpoint with the solution's device words (hi, then lo).
const SOLUTION: &str = "solution";

/// Section of an adaptive checkpoint with the solver's mesh buffers ([`GpuDg::mesh_words`]).
const MESH_WORDS: &str = "dg mesh";

/// FNV-1a of an ordered DG mesh's vertices and face color offsets: what a checkpoint's mesh
/// must match (an adaptive run's: the base mesh before refinement).
fn mesh_fingerprint(dm: &DgMesh) -> u64 {
    fingerprint(bytemuck::cast_slice(&dm.vertices))
        ^ fingerprint(bytemuck::cast_slice(&dm.color_offsets)).rotate_left(1)
}

/// `(name, values)` pairs as the slices the writers take.
fn named(v: &[(String, Vec<f64>)]) -> Vec<(&str, &[f64])> {
    v.iter().map(|(n, x)| (n.as_str(), x.as_slice())).collect()
}

/// Seconds a run spends stepping and on each kind of output, and the last L2 error recorded.
#[derive(Default)]
struct RunClock {
    step: f64,
    outputs: OutputTimes,
    l2_density_error: Option<f64>,
}

/// The f64 reference operator of `case` on `dm`.
fn operator<'a>(case: &Case, dm: &'a DgMesh, tables: &'a BasisTables) -> Operator<'a> {
    Operator {
        mesh: dm,
        tables,
        flux: case.flux,
        state_fn: case.initial,
        states: case.states.clone(),
    }
}

/// The mesh of a DG mesh's triangles with shared vertices merged (an adapted mesh has no point
/// list of its own; midpoints computed on both sides of an edge are bit-identical).
fn mesh_of(dm: &DgMesh) -> Mesh {
    let mut mesh = Mesh::new(2);
    let mut index = std::collections::HashMap::new();
    for v in &dm.vertices {
        let ids = v.map(|p| {
            *index
                .entry((p[0].to_bits(), p[1].to_bits()))
                .or_insert_with(|| {
                    mesh.points.push([p[0], p[1], 0.0]);
                    (mesh.points.len() - 1) as u32
                })
        });
        mesh.push_element(ElementKind::Triangle, &ids, 1);
    }
    mesh
}

/// Reject what the GPU clock cannot run (it would stall or loop forever), naming the case.
fn validate(case: &Case, opts: &SimulationOptions) -> Result<()> {
    let bad = |what: &str, msg: String| {
        Err(Error::Invalid(format!(
            "case '{}': {what} {msg}",
            case.name
        )))
    };
    if case.order > super::basis::MAX_ORDER {
        return bad("order", format!("must be 0..=4, got {}", case.order));
    }
    if !(case.t_end > 0.0 && case.t_end.is_finite()) {
        return bad("t_end", format!("must be positive, got {}", case.t_end));
    }
    if !(case.cfl > 0.0 && case.cfl <= 1.0) {
        return bad("cfl", format!("must be in (0, 1], got {}", case.cfl));
    }
    if let Some(s) = case.snapshot_every {
        if !(s > 0.0 && s.is_finite()) {
            return bad("snapshot_every", format!("must be positive, got {s}"));
        }
    }
    if let Some(dt) = opts.fixed_dt {
        if !(dt > 0.0 && dt.is_finite()) {
            return bad("fixed dt", format!("must be positive, got {dt}"));
        }
        if let Some(why) = clock_stalls(case.t_end, dt) {
            return bad("fixed dt", why);
        }
    }
    if !(1..=MAX_BATCH as usize).contains(&opts.batch) {
        return bad(
            "batch",
            format!("{} must be in 1..={MAX_BATCH}", opts.batch),
        );
    }

    Ok(())
}
