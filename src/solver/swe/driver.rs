//! Running a case on the GPU with outputs: the host advances the GPU solver from output time
//! to output time (many steps per submit, Δt and t kept on the GPU) and reads the state back
//! only at those times, to write a CSV row (time, steps, Δt, mass of each layer and its relative
//! drift, min/max of every field, event counters), PNG snapshots of the chosen fields with
//! colorbars, and VTU files on request. Gauge samples, taken on the GPU, are read back after
//! every batch of steps and appended to one CSV per gauge ([`super::gauge`]).

use super::case::{Case, Setup};
use super::diag::{field, field_title, layer_masses, min_max};
use super::gauge::{self, GaugeSample};
use super::gpu::{unpack_cells, Extras, FluxLayout, GpuControl, GpuSolver};
use super::mesh::{EdgeKind, SweMesh};
use super::{mass_drift, Counters, MassGuard, DEFAULT_MAX_MASS_DRIFT};
use crate::checkpoint::{self, fingerprint, Checkpoint};
use crate::error::Result;
use crate::output::{save_field_png, Colormap, CsvWriter, Field, PlotOptions};
use crate::runtime::Runtime;
use crate::solver::{interrupted, output_times, RunControl};
use std::path::PathBuf;
use std::time::Instant;

/// Fields of the CSV min/max columns.
pub const CSV_FIELDS: &[&str] = &["h1", "h2", "eta1", "eta2", "speed1", "speed2"];

/// What a finished run reports.
#[derive(Clone, Debug, serde::Serialize)]
pub struct RunSummary {
    pub case: String,
    pub scheme: String,
    /// Spatial order (1 or 2).
    pub order: u32,
    pub ordering: String,
    pub cells: usize,
    pub edges: usize,
    pub colors: usize,
    /// The compute device (and backend) that ran it.
    pub device: String,
    pub steps: u64,
    pub t: f64,
    /// Wall-clock seconds of the time loop, outputs included.
    pub wall_seconds: f64,
    /// Of which stepping: queueing steps and waiting for the device.
    pub step_seconds: f64,
    /// Of which outputs after the start: read-backs, CSV rows, snapshots, checkpoints.
    pub output_seconds: f64,
    /// The flux layout ([`FluxLayout::name`]).
    pub layout: String,
    /// Relative mass change of each layer ([`super::mass_drift`], |M_k(t) − M_k(0)| / M_k(0),
    /// against both layers' mass for a layer that starts empty): the conservation error when
    /// `closed`, otherwise mostly what entered and left through the open and driven boundaries.
    pub mass_drift: [f64; 2],
    /// Every boundary edge is a wall, so no mass enters or leaves.
    pub closed: bool,
    /// The mass guard's bound ([`MassGuard`]) when `closed`; None (off) otherwise.
    pub mass_guard: Option<f64>,
    pub counters: Counters,
    /// Files written (PNG, VTU, CSV).
    pub files: Vec<PathBuf>,
}

fn colormap_for(name: &str) -> Colormap {
    match name {
        "eta1" | "eta2" => Colormap::CoolWarm,
        "speed1" | "speed2" => Colormap::Magma,
        _ => Colormap::Viridis,
    }
}

/// Write the PNG (and VTU) snapshot `index` of `state` at time `t`; returns the files.
pub fn write_snapshot(
    case: &Case,
    mesh: &SweMesh,
    depth: &[f64],
    state: &[[f64; 6]],
    t: f64,
    index: usize,
) -> Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    let dir = &case.output.dir;
    let size = case.output.image_size;
    for name in &case.output.fields {
        let values = field(name, state, depth, case.physics.dry_tol).unwrap_or_default();
        let path = dir.join(format!("{name}_{index:04}.png"));
        let (what, label) = field_title(name);
        let opts = PlotOptions {
            width: size,
            height: (size as f64 * 0.85) as u32,
            title: format!(
                "{} {}{} t={t:.4}s: {what}",
                case.name,
                case.scheme,
                if case.order == 2 { " order 2" } else { "" }
            ),
            label: label.to_string(),
            colormap: colormap_for(name),
            ..PlotOptions::default()
        };
        save_field_png(&mesh.mesh, Field::Cell(&values), &opts, &path)?;
        files.push(path);
    }
    if case.output.vtu {
        let fields: Vec<(String, Vec<f64>)> = super::case::FIELD_NAMES
            .iter()
            .map(|n| {
                (
                    n.to_string(),
                    field(n, state, depth, case.physics.dry_tol).unwrap_or_default(),
                )
            })
            .collect();
        let refs: Vec<(&str, &[f64])> = fields
            .iter()
            .map(|(n, v)| (n.as_str(), v.as_slice()))
            .collect();
        let name = format!("{}_{index:04}.vtu", case.name);
        let path = dir.join(&name);
        crate::mesh::write_vtu(&mesh.mesh, &path, &[], &refs)?;
        // The collection ParaView opens as one time series.
        crate::output::add_to_collection(&dir.join(format!("{}.pvd", case.name)), t, &name)?;
        files.push(path);
    }
    Ok(files)
}

/// The CSV header.
pub fn csv_columns() -> Vec<String> {
    let mut c: Vec<String> = [
        "t",
        "steps",
        "dt",
        "mass1",
        "mass2",
        "mass1_drift",
        "mass2_drift",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    for f in CSV_FIELDS {
        c.push(format!("{f}_min"));
        c.push(format!("{f}_max"));
    }
    c.extend(["nonhyperbolic", "fallback", "clipped", "rejected"].map(String::from));
    c
}

fn csv_row(
    t: f64,
    case: &Case,
    mesh: &SweMesh,
    depth: &[f64],
    state: &[[f64; 6]],
    ctl: &GpuControl,
    m0: [f64; 2],
) -> Vec<f64> {
    let m = layer_masses(&mesh.geom.areas, state);
    let drift = mass_drift(m0, m);
    let mut row = vec![
        t,
        ctl.steps as f64,
        ctl.last_dt as f64,
        m[0],
        m[1],
        drift[0],
        drift[1],
    ];
    for f in CSV_FIELDS {
        let v = field(f, state, depth, case.physics.dry_tol).unwrap_or_default();
        let (lo, hi) = min_max(&v);
        row.extend([lo, hi]);
    }
    row.extend([
        ctl.nonhyperbolic as f64,
        ctl.fallback as f64,
        ctl.clipped as f64,
        ctl.rejected as f64,
    ]);
    row
}

/// Steps queued per batch between control read-backs when the caller does not choose.
pub const DEFAULT_BATCH: u32 = 256;

/// A shallow-water case on a device: the prepared mesh and initial state, the GPU solver, and
/// the time loop with its outputs. The library's way to run a case:
/// `Simulation::new(&case, &rt, FluxLayout::default())?.advance_to(t)?`.
pub struct Simulation {
    case: Case,
    setup: Setup,
    solver: GpuSolver,
    layout: FluxLayout,
    /// Steps per batch between read-backs of the control block (at most
    /// [`crate::solver::MAX_BATCH`]).
    pub max_batch: u32,
}

impl Simulation {
    /// Prepare `case` (mesh, ordering, boundaries, initial state) and upload it to `rt`.
    pub fn new(case: &Case, rt: &Runtime, layout: FluxLayout) -> Result<Simulation> {
        let setup = case.prepare()?;
        let extras = Extras {
            boundaries: setup.boundaries.clone(),
            gauges: setup.gauges.clone(),
        };
        let solver = GpuSolver::with_extras(
            rt,
            &setup.mesh,
            &setup.depth,
            &setup.state,
            case.scheme,
            case.physics,
            case.cfl,
            layout,
            case.order,
            &extras,
        )?;
        Ok(Simulation {
            case: case.clone(),
            setup,
            solver,
            layout,
            max_batch: DEFAULT_BATCH,
        })
    }

    pub fn case(&self) -> &Case {
        &self.case
    }

    /// The prepared mesh, cell depths and initial state.
    pub fn setup(&self) -> &Setup {
        &self.setup
    }

    pub fn solver(&mut self) -> &mut GpuSolver {
        &mut self.solver
    }

    /// Advance to time `t` (the last step is clamped to hit it); errors when the solution
    /// blows up. Gauge samples accumulate until [`Simulation::take_gauge_samples`].
    pub fn advance_to(&mut self, t: f64) -> Result<GpuControl> {
        loop {
            let ctl = self.solver.advance_to(t, self.max_batch, &mut |_| true)?;
            if ctl.t >= t as f32 {
                return Ok(ctl);
            }
        }
    }

    /// The gauge samples taken since the last call (the first holds the initial state).
    pub fn take_gauge_samples(&mut self) -> Vec<GaugeSample> {
        self.solver.take_gauge_samples()
    }

    /// The state W = (h1, q1x, q1y, h2, q2x, q2y) per cell (waits for queued steps).
    pub fn state(&mut self) -> Result<Vec<[f64; 6]>> {
        self.solver.read_state()
    }

    /// Time, last step, steps and event counters.
    pub fn control(&mut self) -> Result<GpuControl> {
        self.solver.read_control()
    }

    /// Mass of each layer now, sum_i A_i h_k,i.
    pub fn masses(&mut self) -> Result<[f64; 2]> {
        let state = self.state()?;
        Ok(layer_masses(&self.setup.mesh.geom.areas, &state))
    }

    /// Write snapshot `index` of the current state into the case's output directory.
    pub fn write_snapshot(&mut self, index: usize) -> Result<Vec<PathBuf>> {
        let state = self.state()?;
        let t = self.control()?.t as f64;
        write_snapshot(
            &self.case,
            &self.setup.mesh,
            &self.setup.depth,
            &state,
            t,
            index,
        )
    }

    /// Fingerprint of the ordered mesh as the GPU sees it (edges and cell centroids).
    fn mesh_fingerprint(&self) -> u64 {
        let m = &self.setup.mesh;
        let edges = fingerprint(bytemuck::cast_slice(&m.gpu_edges()));
        edges ^ fingerprint(bytemuck::cast_slice(&m.geom.centroids)).rotate_left(1)
    }

    /// Run the case to its final time with its outputs (CSV row and snapshots at every output
    /// time), bounded, checkpointed and resumed as `rc` says; `progress(t, steps)` is called
    /// after every batch of steps. On an interrupt ([`crate::interrupt`]) it stops at a step
    /// boundary, writes a snapshot and a checkpoint and returns
    /// [`Error::Interrupted`](crate::error::Error::Interrupted).
    pub fn run(
        &mut self,
        rc: &RunControl,
        mut progress: impl FnMut(f64, u64),
    ) -> Result<RunSummary> {
        let ck_path = self.case.output.dir.join(checkpoint::FILE_NAME);
        let fp = (self.case.fingerprint(), self.mesh_fingerprint());
        let restart = rc.restart_from("swe", fp.0, fp.1)?;
        let times = output_times(
            self.case.final_time,
            self.case.output.snapshot_every,
            rc.max_snapshots,
        )?;
        let (case, setup, solver) = (&self.case, &self.setup, &mut self.solver);
        let mesh = &setup.mesh;
        let m0 = layer_masses(&mesh.geom.areas, &setup.state);
        let closed = mesh
            .face_kind
            .iter()
            .all(|&k| matches!(k, EdgeKind::Interior | EdgeKind::Wall));
        let guard = closed.then_some(MassGuard {
            initial: m0,
            bound: case.max_mass_drift.unwrap_or(DEFAULT_MAX_MASS_DRIFT),
        });
        if !closed {
            log::info!(
                "{}: mass guard off: open or driven boundaries let mass enter and leave",
                case.name
            );
            if let Some(d) = case.max_mass_drift {
                log::warn!(
                    "{}: max mass drift {d} is ignored: the domain has open or driven boundaries",
                    case.name
                );
            }
        }
        // The mass guard on a state on the host (no-op when the domain is open).
        let check_mass = |state: &[[f64; 6]], ctl: &GpuControl| -> Result<()> {
            guard.map_or(Ok(()), |g| {
                let m = layer_masses(&mesh.geom.areas, state);
                g.check(m, ctl.t as f64, ctl.steps as u64)
            })
        };
        let mut files = Vec::new();
        let csv_path = case.output.dir.join(format!("{}.csv", case.name));
        let cols = csv_columns();
        let cols: Vec<&str> = cols.iter().map(|s| s.as_str()).collect();
        let mut csv = None;
        let mut done = 0;
        let gauge_paths: Vec<PathBuf> = case
            .gauges
            .iter()
            .map(|g| case.output.dir.join(format!("gauge_{}.csv", g.name)))
            .collect();
        let mut gauge_csvs = Vec::new();
        if let Some(ck) = &restart {
            solver.restore_words(&ck.payload)?;
            let rows = solver.gauge_samples_taken()? as usize;
            for p in &gauge_paths {
                gauge_csvs.push(CsvWriter::resume(p, &gauge::COLUMNS, rows)?);
            }
            done = ck.header.outputs;
            if case.output.csv {
                csv = Some(CsvWriter::resume(
                    &csv_path,
                    &cols,
                    ck.header.csv_rows as usize,
                )?);
            }
        } else {
            if case.output.csv {
                let mut w = CsvWriter::create(&csv_path, &cols)?;
                let ctl = solver.read_control()?;
                w.row(&csv_row(
                    0.0,
                    case,
                    mesh,
                    &setup.depth,
                    &setup.state,
                    &ctl,
                    m0,
                ))?;
                csv = Some(w);
                files.push(csv_path);
            }
            files.extend(write_snapshot(
                case,
                mesh,
                &setup.depth,
                &setup.state,
                0.0,
                0,
            )?);
            for p in &gauge_paths {
                gauge_csvs.push(CsvWriter::create(p, &gauge::COLUMNS)?);
                files.push(p.clone());
            }
        }
        let dry_tol = case.physics.dry_tol;
        let mut flush_gauges = |solver: &mut GpuSolver| -> Result<()> {
            for s in solver.take_gauge_samples() {
                for (w, cell) in gauge_csvs.iter_mut().zip(&s.cells) {
                    w.row(&gauge::row(s.t, cell, dry_tol))?;
                }
            }
            Ok(())
        };
        flush_gauges(solver)?;
        let start = Instant::now();
        let mut ctl = solver.read_control()?;
        let mut next_ck = rc.next_checkpoint(ctl.t as f64);
        let mut state = setup.state.clone();
        let (mut step_seconds, mut output_seconds) = (0.0, 0.0);
        let save = |solver: &mut GpuSolver, ctl: &GpuControl, done: u64, rows: u64| {
            let words = solver.save_words()?;
            let cells: &[[f32; 4]] = bytemuck::cast_slice(&words[..8 * mesh.num_cells()]);
            check_mass(&unpack_cells(cells), ctl)?;
            let pos = (ctl.t as f64, ctl.steps as u64);
            let ck = Checkpoint::new(
                "swe",
                solver.device_name(),
                fp.0,
                fp.1,
                pos,
                (done, rows),
                words,
            );
            ck.write(&ck_path)
        };
        for (i, t_out) in times.enumerate().skip(done as usize) {
            loop {
                let stepping = Instant::now();
                ctl = solver.advance_to(t_out, self.max_batch, &mut |c| {
                    progress(c.t as f64, c.steps as u64);
                    !crate::interrupt::requested() && (c.t as f64) < next_ck
                })?;
                step_seconds += stepping.elapsed().as_secs_f64();
                flush_gauges(solver)?;
                let rows = csv.as_ref().map_or(0, |w| w.rows_written() as u64);
                if crate::interrupt::requested() {
                    state = solver.read_state()?;
                    check_mass(&state, &ctl)?;
                    write_snapshot(case, mesh, &setup.depth, &state, ctl.t as f64, i + 1)?;
                    save(solver, &ctl, i as u64, rows)?;
                    return Err(interrupted(ctl.t as f64, ctl.steps as u64, &ck_path));
                }
                if ctl.t as f64 >= next_ck {
                    let saving = Instant::now();
                    save(solver, &ctl, i as u64, rows)?;
                    output_seconds += saving.elapsed().as_secs_f64();
                    next_ck = rc.next_checkpoint(ctl.t as f64);
                }
                if ctl.t >= t_out as f32 {
                    break;
                }
            }
            let writing = Instant::now();
            state = solver.read_state()?;
            if state.iter().flatten().any(|v| !v.is_finite()) {
                return Err(solver.blow_up(&ctl));
            }
            check_mass(&state, &ctl)?;
            if let Some(w) = csv.as_mut() {
                w.row(&csv_row(t_out, case, mesh, &setup.depth, &state, &ctl, m0))?;
            }
            files.extend(write_snapshot(
                case,
                mesh,
                &setup.depth,
                &state,
                t_out,
                i + 1,
            )?);
            output_seconds += writing.elapsed().as_secs_f64();
        }
        let wall = start.elapsed().as_secs_f64();
        let m = layer_masses(&mesh.geom.areas, &state);
        Ok(RunSummary {
            case: case.name.clone(),
            scheme: case.scheme.to_string(),
            order: case.order,
            ordering: mesh.ordering.to_string(),
            cells: mesh.num_cells(),
            edges: mesh.num_faces(),
            colors: mesh.num_colors(),
            device: solver.device_name(),
            steps: ctl.steps as u64,
            t: ctl.t as f64,
            wall_seconds: wall,
            step_seconds,
            output_seconds,
            layout: self.layout.name().to_string(),
            mass_drift: mass_drift(m0, m),
            closed,
            mass_guard: guard.map(|g| g.bound),
            counters: ctl.counters(),
            files,
        })
    }
}
