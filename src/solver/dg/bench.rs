//! The DG benchmark (double Mach reflection), shared by `bench dg` and `bench backends`: the
//! colorings and orderings compared ([`ordering_variants`]), one order timed on a device
//! ([`BenchSetup`], [`bench_one`]: the median time per step, the kernel groups on the device's
//! timers, a check that the timed run is a physical one) and the surface kernel's bytes-moved
//! model ([`surface_bytes_per_stage`]).

use super::cpu::Operator;
use super::gpu::{GpuConfig, GpuDg, Kernel, SurfaceLayout};
use super::{BasisTables, Case, DgMesh};
use crate::color::faces::greedy_face_coloring;
use crate::error::Result;
use crate::mesh::{Mesh, Topology};
use crate::order::{apply_ordering, prepare, OrderedMesh, Ordering, PrepareOptions};
use crate::runtime::bandwidth::CopyBandwidth;
use crate::runtime::{median, Runtime};
use std::time::Instant;

/// [`surface_bytes_per_stage`] in one line (reports carry it).
pub const SURFACE_BYTES_MODEL: &str = "per edge and RK stage: per side 4*NP*4 B coefficients read + 2*4*NP*4 B rhs read-modify-write + 4 B 1/detJ; per edge the 32 B DgEdge record; boundary edges one side";

/// Timed runs of the copy-bandwidth measurement (the median is reported), after one warm-up
/// run.
pub const COPY_SAMPLES: u32 = 5;

/// Steps of the per-kernel timing (at most).
const KERNEL_STEPS: usize = 8;

/// One timed DG configuration.
#[derive(Clone, Debug)]
pub struct BenchRow {
    pub label: String,
    pub p: usize,
    pub colors: usize,
    /// Runge-Kutta stages per step.
    pub stages: usize,
    pub seconds_per_step: f64,
    pub dof_per_s: f64,
    /// Effective GB/s of a step: about 12 register-sized f32 transfers per stage.
    pub gbytes_per_s: f64,
    /// Seconds per step of each kernel group, sorted by name; empty without device timers.
    pub kernels: Vec<(Kernel, f64)>,
    /// Modelled bytes the surface kernel moves per step ([`surface_bytes_per_stage`] times
    /// the stages).
    pub surface_bytes_per_step: f64,
    /// "ok", or why the timed run is not a physical one (a stalled clock, non-finite values):
    /// a benchmark of a run that stopped advancing would time kernels on frozen data.
    pub run_check: String,
}

impl BenchRow {
    /// Seconds per step of kernel `k`, when it was timed.
    pub fn kernel_seconds(&self, k: Kernel) -> Option<f64> {
        self.kernels.iter().find(|(x, _)| *x == k).map(|(_, s)| *s)
    }

    /// The surface kernel's modelled GB/s and its percentage of the copy bandwidth `copy`,
    /// when the surface kernel was timed.
    pub fn surface_gb_per_s(&self, copy: Option<&CopyBandwidth>) -> (Option<f64>, Option<f64>) {
        let gbs = self
            .kernel_seconds(Kernel::Surface)
            .filter(|s| *s > 0.0)
            .map(|s| self.surface_bytes_per_step / s / 1e9);
        let pct = gbs.zip(copy).map(|(g, c)| 100.0 * g / c.gb_per_s);
        (gbs, pct)
    }
}

/// What one DG benchmark row needs besides the device, prepared once so that every backend
/// runs the same mesh, basis tables and initial state (the projection is slow at 1M cells).
pub struct BenchSetup<'a> {
    pub dm: &'a DgMesh,
    pub case: &'a Case,
    pub tables: BasisTables,
    pub c0: Vec<f64>,
    /// A fixed time step (no CFL step computed on the device, as in PyFR's benchmark), or the
    /// case's CFL step.
    pub fixed_dt: Option<f64>,
}

impl<'a> BenchSetup<'a> {
    /// Order `p` on `dm`, the initial state of `case` projected.
    pub fn new(dm: &'a DgMesh, case: &'a Case, p: usize) -> BenchSetup<'a> {
        let tables = BasisTables::new(p);
        let c0 = Operator {
            mesh: dm,
            tables: &tables,
            flux: case.flux,
            state_fn: case.initial,
            states: vec![],
        }
        .project(&|x, y| case.initial.eval(x, y, 0.0));
        BenchSetup {
            dm,
            case,
            tables,
            c0,
            fixed_dt: None,
        }
    }
}

/// Time `steps` steps of `setup` on `rt` with the surface integral in `surface`: a warm-up
/// run, then the median of `repeats` wall-clock runs, and per-kernel times from the device's
/// timers over min(steps, 8) steps.
pub fn bench_one(
    rt: &Runtime,
    setup: &BenchSetup,
    steps: usize,
    repeats: usize,
    label: &str,
    surface: SurfaceLayout,
) -> Result<BenchRow> {
    let BenchSetup {
        dm,
        case,
        tables,
        c0,
        fixed_dt,
    } = setup;
    let steps = steps.max(1);
    let p = tables.p;
    let mut gpu = GpuDg::new(rt, dm, tables, &GpuConfig::for_case(case, *fixed_dt))?;
    gpu.set_surface(surface)?;
    let mut samples = Vec::new();
    let mut run_check = String::new();
    let mut kernel_times: std::collections::HashMap<Kernel, Vec<f64>> = Default::default();
    for rep in 0..repeats.max(1) + 1 {
        gpu.limit_once(c0)?;
        gpu.set_clock(0.0, 1e9)?;
        gpu.wait()?;
        let start = Instant::now();
        gpu.queue_steps(steps)?;
        gpu.wait()?;
        let secs = start.elapsed().as_secs_f64();
        if rep > 0 {
            samples.push(secs / steps as f64);
        }
        if rep == 0 {
            run_check = check_bench_run(&gpu, steps)?;
        }
        if rep == 1 {
            let n = steps.min(KERNEL_STEPS);
            if let Some(passes) = gpu.time_kernels(n)? {
                for (k, s) in passes {
                    kernel_times.entry(k).or_default().push(s / n as f64);
                }
            }
        }
    }
    let per_step = median(&samples);
    let ndof = 4 * tables.np * dm.num_elements;
    let stages = super::rk::scheme(p).len();
    // Bytes per stage: volume reads c, writes rhs; surface reads c of both sides, reads and
    // writes rhs of both; stage reads R0, rhs, a stage register and writes one; limiter reads
    // and writes one register: about 12 register-sized transfers, in f32.
    let bytes = stages as f64 * 12.0 * ndof as f64 * 4.0;
    let mut kernels: Vec<(Kernel, f64)> = kernel_times
        .into_iter()
        .map(|(k, v)| (k, v.iter().sum::<f64>()))
        .collect();
    kernels.sort_by_key(|(k, _)| format!("{k:?}"));
    Ok(BenchRow {
        label: label.to_string(),
        p,
        colors: dm.num_colors(),
        stages,
        seconds_per_step: per_step,
        dof_per_s: ndof as f64 * stages as f64 / per_step,
        gbytes_per_s: bytes / per_step / 1e9,
        kernels,
        surface_bytes_per_step: stages as f64 * surface_bytes_per_stage(dm, tables.np),
        run_check,
    })
}

/// After `steps` steps from t = 0 the clock must count them all with t > 0 and finite, and
/// every coefficient must be finite.
fn check_bench_run(gpu: &GpuDg, steps: usize) -> Result<String> {
    let clock = gpu.read_clock()?;
    if clock.steps != steps as u64 || !(clock.t > 0.0 && clock.t.is_finite()) {
        return Ok(format!(
            "stalled: {} of {steps} steps, t = {:e}, dt = {:e}",
            clock.steps, clock.t, clock.dt
        ));
    }
    let c = gpu.read_state()?;
    Ok(match c.iter().position(|v| !v.is_finite()) {
        Some(i) => format!("non-finite coefficient {i} after {steps} steps"),
        None => "ok".to_string(),
    })
}

/// Modelled DRAM bytes the surface kernel (`shaders/dg_surface.wgsl`) moves in one RK stage,
/// f32, every load a miss: per side of an edge, the element's coefficients read
/// (4 equations x NP modes x 4 B), its rhs read and written (2 x 4 x NP x 4 B) and its 1/det J
/// (4 B); per edge, the `DgEdge` record (32 B). Boundary edges have one side; periodic
/// partners count as interior. Basis tables, case data and the clock are left out (small and
/// cached). The number behind `bench dg`'s surface GB/s, so the figure can be recomputed.
pub fn surface_bytes_per_stage(dm: &DgMesh, np: usize) -> f64 {
    let side = (4 * np * 4 + 2 * 4 * np * 4 + 4) as f64;
    let record = std::mem::size_of::<super::mesh::DgEdge>() as f64;
    let interior = dm.edges.iter().filter(|e| e.right.is_some()).count() as f64;
    let boundary = dm.edges.len() as f64 - interior;
    interior * (record + 2.0 * side) + boundary * (record + side)
}

/// The colorings and orderings `bench dg` compares on `mesh`, labelled: 5-color greedy and
/// 3-color GK face colorings, each in the original element order and renumbered (GK
/// Algorithm 5), and for GK also the chain variant coalescing the second color. The last one
/// (GK, Algorithm 5) is the production setup.
pub fn ordering_variants(mesh: &Mesh) -> Result<Vec<(String, OrderedMesh)>> {
    let topo = Topology::build(mesh)?;
    let greedy = greedy_face_coloring(mesh, &topo)?;
    Ok(vec![
        (
            "5-color greedy, original".into(),
            apply_ordering(mesh, &topo, &greedy, Ordering::Original)?,
        ),
        (
            "5-color greedy, Algorithm 5".into(),
            apply_ordering(mesh, &topo, &greedy, Ordering::ColorRenumbered)?,
        ),
        (
            "3-color GK, original".into(),
            prepare(mesh, &PrepareOptions::new(Ordering::Original, 1))?,
        ),
        (
            "3-color GK, chains".into(),
            prepare(mesh, &PrepareOptions::new(Ordering::ColorChains, 1))?,
        ),
        (
            "3-color GK, Algorithm 5".into(),
            prepare(mesh, &PrepareOptions::new(Ordering::ColorRenumbered, 1))?,
        ),
    ])
}
