//! The DG solver on a compute device ([`crate::runtime`], wgpu or CUDA): the kernels
//! `dg_volume`, the surface integral ([`SurfaceLayout`]: `dg_surface` one launch per edge
//! color, on CUDA optionally one atomicAdd launch over all edges, or on conforming meshes
//! `dg_trace` + `dg_flux` with the lift in `dg_volume`), `dg_stage`, `dg_limit`,
//! `dg_local_dt` + min-reduction + `dg_time`, prepared once
//! as plans and queued many steps per submit; the time step and the clock stay on the GPU, the
//! host reads only for output. Each kernel has its f64 twin in [`super::cpu`] / [`super::rk`].
//!
//! Registers: R0 = U^n, R1..R3 stage states (see [`super::rk`]), R4 = the unlimited output of a
//! stage when the limiter is on (the limiter reads R4 and writes the stage's register, so
//! neighbours are always read before they are limited). All registers and the rhs use the
//! `c[eq][k][element]` layout. R0..R3 are f32 pairs hi + lo: the kernels read hi, `dg_stage`
//! updates both exactly (no increment below an ulp of hi is lost), and the host reads and
//! writes the solution as hi + lo, so an f64 initial projection is kept to ~2^-48 and the
//! checkpoint holds both words.

use super::basis::BasisTables;
use super::case::{Case, StateFn};
use super::cpu::FLUX_PLANES;
use super::euler::{NumericalFlux, State};
use super::mesh::{DgEdge, DgMesh};
use super::rk::{self, Stage};
use crate::args;
use crate::error::{Error, Result};
use crate::mesh::NO_ELEMENT;
use crate::runtime::reduce::MinReduction;
use crate::runtime::{
    launch_record, launch_record_threads, Arg, Buffer, ItemRange, OwnedKernelSpec, Plan,
    PlanBuilder, Runtime, ThreadBound, CAPACITY_CONSTANT, DEVICE_COUNT, FIXED_CAPACITY_CONSTANT,
    LAUNCH_WORDS,
};

/// Registers on the GPU: the scheme's four plus the limiter's scratch.
const GPU_REGISTERS: usize = rk::REGISTERS + 1;
const SCRATCH: u32 = rk::REGISTERS as u32;

/// Mirrors `Stage` in shaders/dg_stage.wgsl and shaders/cuda/dg_stage.cu (64 bytes).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, bytemuck::Pod, bytemuck::Zeroable)]
struct GpuStage {
    a: [f32; 4],
    a2: [f32; 4],
    b: f32,
    b2: f32,
    /// Register of the result's hi word (the limiter's scratch when the limiter is on).
    dst: u32,
    dst2: u32,
    /// The stage's register, whose lo word the stage sets (0 when `dst` is the scratch).
    lo_dst: u32,
    pad: [u32; 3],
}

/// How the surface integral is evaluated. Every layout is race-free without float atomics
/// except [`SurfaceLayout::Atomic`] (CUDA only, a comparison).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SurfaceLayout {
    /// `dg_surface`, one thread per edge and one launch per edge color: each thread reads both
    /// elements' coefficients and adds its edge's integral into both rhs (no two edges of a
    /// color share an element). Any mesh, hanging nodes included.
    #[default]
    Colored,
    /// `dg_surface_atomic`: one launch over all edges with atomicAdd (CUDA only).
    Atomic,
    /// `dg_trace` (per element: its deviations from its mean at its sides' nodes, read
    /// coalesced), `dg_flux` (per edge, one launch: the numerical flux less each side's mean
    /// flux into slots the two sides own) and the lift in `dg_volume` (per element: rhs += its
    /// sides' fluxes against the basis). No colors, no scattered reads of higher coefficients,
    /// no read-modify-write of rhs. At a hanging node the coarse side's halves have flux slots
    /// of their own, and `dg_flux` takes the coarse trace at a half's nodes from the
    /// coefficients.
    Gathered,
}

impl SurfaceLayout {
    /// The layout's name on the command line and in reports.
    pub fn name(self) -> &'static str {
        match self {
            SurfaceLayout::Colored => "colored",
            SurfaceLayout::Atomic => "atomic",
            SurfaceLayout::Gathered => "gathered",
        }
    }
}

impl std::str::FromStr for SurfaceLayout {
    type Err = Error;

    fn from_str(name: &str) -> Result<SurfaceLayout> {
        [
            SurfaceLayout::Colored,
            SurfaceLayout::Atomic,
            SurfaceLayout::Gathered,
        ]
        .into_iter()
        .find(|l| l.name() == name)
        .ok_or_else(|| {
            Error::Invalid(format!(
                "unknown surface layout '{name}' (expected colored, gathered or atomic)"
            ))
        })
    }
}

/// Run parameters of the GPU solver.
#[derive(Clone, Debug)]
pub struct GpuConfig {
    pub flux: NumericalFlux,
    /// Exact / prescribed state function (boundary ghosts of kind `Exact`).
    pub state_fn: StateFn,
    /// Inflow states (boundary ghosts of kind `Inflow(i)`).
    pub states: Vec<State>,
    pub cfl: f64,
    /// Fixed time step instead of the CFL one.
    pub fixed_dt: Option<f64>,
    /// Slope + positivity limiter after every stage.
    pub limiter: bool,
}

impl GpuConfig {
    /// The configuration a case asks for (its flux, initial and boundary states, CFL number
    /// and limiter), with an optional fixed time step.
    pub fn for_case(case: &Case, fixed_dt: Option<f64>) -> GpuConfig {
        GpuConfig {
            flux: case.flux,
            state_fn: case.initial,
            states: case.states.clone(),
            cfl: case.cfl,
            fixed_dt,
            limiter: case.limiter,
        }
    }
}

/// The GPU clock after a batch of steps.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Clock {
    /// The time, the device's f32 pair t + t_lo summed exactly.
    pub t: f64,
    pub dt: f64,
    pub steps: u64,
}

/// The host-side data of the DG kernels for one mesh, order and configuration: what the buffers
/// hold and the launch ranges the plans are recorded from.
struct DgInputs {
    /// [`BasisTables::packed`].
    tables: Vec<f32>,
    /// (xi_x, xi_y, eta_x, eta_y) per element.
    inv_jac: Vec<[f32; 4]>,
    /// 1 / det J per element.
    inv_det: Vec<f32>,
    /// Smallest height per element (CFL).
    heights: Vec<f32>,
    /// Face neighbours ([`NO_ELEMENT`]: none): element i at i (sides 0..3, w = bit j set when
    /// side j is split into two faces), its second neighbours of split sides at ne + i (so a
    /// conforming mesh's limiter reads the first block only, coalesced as before).
    neighbors: Vec<[u32; 4]>,
    edges: Vec<DgEdge>,
    /// No face is half of a side (no hanging node): the gathered surface layout applies.
    conforming: bool,
    /// The case function's parameters (two vec4), then the inflow states, then a zero.
    case_data: Vec<[f32; 4]>,
    /// The scheme's stages in GPU form.
    stages: Vec<GpuStage>,
    /// Volume: one range per stage (color = stage index, pad = source register).
    volume_ranges: Vec<ItemRange>,
    /// Surface: per stage, one range per color (color = bits of the stage time fraction,
    /// pad = source register); index `stage * colors + color`.
    surface_ranges: Vec<ItemRange>,
    /// Stage update: one range per stage (count = DOFs per register, color = stage index).
    stage_ranges: Vec<ItemRange>,
    /// Limiter: one range per stage, plus a last one (R4 -> R0, slope on) for `limit_once`.
    limit_ranges: Vec<ItemRange>,
    /// Time kernel: phase 0 (step start), phase 1 (step end).
    time_ranges: Vec<ItemRange>,
}

impl DgInputs {
    /// The inputs of `mesh` in buffers of `capacity` elements (the DOF stride): per-element
    /// arrays padded to it, launches over the mesh's elements only.
    fn new(
        mesh: &DgMesh,
        tables: &BasisTables,
        cfg: &GpuConfig,
        capacity: Capacity,
    ) -> Result<DgInputs> {
        let ne = mesh.num_elements;
        if ne == 0 {
            return Err(Error::Invalid("the DG mesh has no elements".into()));
        }
        if ne > capacity.elements || mesh.edges.len() > capacity.edges {
            return Err(Error::Invalid(format!(
                "a DG mesh of {ne} elements and {} edges in buffers for {} and {}",
                mesh.edges.len(),
                capacity.elements,
                capacity.edges
            )));
        }
        let capacity_edges = capacity.edges;
        let capacity = capacity.elements;
        let ndof = 4 * tables.np * capacity;
        if cfg.states.len() > 255 {
            return Err(Error::Invalid("at most 255 inflow states".into()));
        }
        let mut inv_jac: Vec<[f32; 4]> = mesh
            .inv_jacobian
            .iter()
            .map(|g| g.map(|v| v as f32))
            .collect();
        inv_jac.resize(capacity, [0.0; 4]);
        let mut inv_det: Vec<f32> = mesh.det.iter().map(|d| (1.0 / d) as f32).collect();
        let mut heights: Vec<f32> = mesh.min_height.iter().map(|&h| h as f32).collect();
        inv_det.resize(capacity, 0.0);
        heights.resize(capacity, 0.0);
        let f = |o: Option<usize>| o.map_or(NO_ELEMENT, |v| v as u32);
        let split = |n: &[Option<usize>; 6]| {
            (0..3)
                .filter(|&j| n[j + 3].is_some())
                .fold(0, |m, j| m | 1 << j)
        };
        // Two blocks of `capacity` vec4s (the kernels read the second at NE + i).
        let unused = capacity - ne;
        let neighbors: Vec<[u32; 4]> = mesh
            .neighbors
            .iter()
            .map(|n| [f(n[0]), f(n[1]), f(n[2]), split(n)])
            .chain(std::iter::repeat_n(
                [NO_ELEMENT, NO_ELEMENT, NO_ELEMENT, 0],
                unused,
            ))
            .chain(
                mesh.neighbors
                    .iter()
                    .map(|n| [f(n[3]), f(n[4]), f(n[5]), NO_ELEMENT]),
            )
            .chain(std::iter::repeat_n([NO_ELEMENT; 4], unused))
            .collect();
        let prm = cfg.state_fn.params();
        let mut case_data: Vec<[f32; 4]> = vec![
            [prm[0], prm[1], prm[2], prm[3]],
            [prm[4], prm[5], prm[6], prm[7]],
        ];
        case_data.extend(cfg.states.iter().map(|s| s.map(|v| v as f32)));
        case_data.push([0.0; 4]);
        let stages = rk::scheme(tables.p);
        let gpu_stages: Vec<GpuStage> = stages.iter().map(|s| gpu_stage(s, cfg.limiter)).collect();
        let (volume_ranges, surface_ranges) = element_ranges(ne, &mesh.color_offsets, &stages);
        let stage_ranges = (0..stages.len())
            .map(|i| ItemRange {
                first: 0,
                count: ndof as u32,
                color: i as u32,
                pad: 0,
            })
            .collect();
        let limit_ranges = limiter_ranges(ne, &stages);
        let time_ranges = (0..2)
            .map(|c| ItemRange {
                first: 0,
                count: 1,
                color: c,
                pad: 0,
            })
            .collect();
        Ok(DgInputs {
            tables: tables.packed(),
            inv_jac,
            inv_det,
            heights,
            neighbors,
            edges: {
                let mut edges = mesh.gpu_edges();
                edges.resize(capacity_edges, DgEdge::default());
                edges
            },
            conforming: mesh.edges.iter().all(|e| e.right_half == 0),
            case_data,
            stages: gpu_stages,
            volume_ranges,
            surface_ranges,
            stage_ranges,
            limit_ranges,
            time_ranges,
        })
    }
}

/// Volume ranges (one per stage, color = stage index, pad = source register) and surface
/// ranges (per stage, one per color: color = bits of the stage time fraction, pad = source
/// register) of `ne` elements with faces at `color_offsets`.
fn element_ranges(
    ne: usize,
    color_offsets: &[usize],
    stages: &[Stage],
) -> (Vec<ItemRange>, Vec<ItemRange>) {
    let ne32 = ne as u32;
    let volume_ranges = stages
        .iter()
        .enumerate()
        .map(|(index, s)| ItemRange {
            first: 0,
            count: ne32,
            color: index as u32,
            pad: s.src as u32,
        })
        .collect();
    let nc = color_offsets.len() - 1;
    let mut surface_ranges = Vec::with_capacity(stages.len() * nc);
    for s in stages {
        for c in 0..nc {
            surface_ranges.push(ItemRange {
                first: color_offsets[c] as u32,
                count: (color_offsets[c + 1] - color_offsets[c]) as u32,
                color: (s.c as f32).to_bits(),
                pad: s.src as u32,
            });
        }
    }
    (volume_ranges, surface_ranges)
}

/// Limiter ranges over `ne` elements: one per stage, plus a last one (R4 -> R0, slope on).
fn limiter_ranges(ne: usize, stages: &[Stage]) -> Vec<ItemRange> {
    let ne32 = ne as u32;
    let mut limit_ranges: Vec<ItemRange> = stages
        .iter()
        .map(|s| ItemRange {
            first: 0,
            count: ne32,
            color: 0,
            pad: SCRATCH | (s.dst as u32) << 8 | 1 << 16,
        })
        .collect();
    limit_ranges.push(ItemRange {
        first: 0,
        count: ne32,
        color: 0,
        pad: SCRATCH | 1 << 16,
    });
    limit_ranges
}

/// The launch records of `ne` elements with faces at `color_offsets` and `nqe` nodes per face
/// ([`GpuDg::launch_words`]): record 0 the elements, 1 + c the faces of color c, 1 + colors
/// all faces, 2 + colors all faces with a grid of a thread per face node (`dg_flux`'s).
pub fn mesh_launch_records(ne: usize, color_offsets: &[usize], nqe: usize) -> Vec<u32> {
    let faces = color_offsets.last().copied().unwrap_or(0) as u32;
    std::iter::once(launch_record(0, ne as u32))
        .chain(
            color_offsets
                .windows(2)
                .map(|w| launch_record(w[0] as u32, (w[1] - w[0]) as u32)),
        )
        .chain(std::iter::once(launch_record(0, faces)))
        .chain(std::iter::once(launch_record_threads(
            0,
            faces,
            faces * nqe as u32,
        )))
        .flatten()
        .collect()
}

/// The launch records a device adaptation leaves for its mesh `dm` (`nqe` nodes per face): the
/// mesh's ([`mesh_launch_records`]), with every color's range empty at 0 when it wrote the faces
/// in left-element order only (`color_order` false: the bookkeeping without COLOR_ORDER).
pub fn adapted_launch_records(dm: &DgMesh, nqe: usize, color_order: bool) -> Vec<u32> {
    let mut records = mesh_launch_records(dm.num_elements, &dm.color_offsets, nqe);
    if !color_order {
        for c in 0..dm.num_colors() {
            let first = record_word(1 + c) as usize;
            records[first..first + LAUNCH_WORDS as usize].copy_from_slice(&launch_record(0, 0));
        }
    }
    records
}

/// The launch record of every face with a thread per face node, among `colors` face colors
/// ([`mesh_launch_records`]).
pub fn face_nodes_record(colors: usize) -> usize {
    2 + colors
}

/// The first word of launch record `r` of [`mesh_launch_records`]: 0 the elements, 1 + c the
/// faces of color c.
pub fn record_word(r: usize) -> u32 {
    r as u32 * LAUNCH_WORDS
}

/// How the kernels of a solver for `mesh` in buffers of `capacity` take it: fixed (compiled in
/// where that is faster, [`for_kernel`]) when the buffers hold exactly the mesh, as a solver
/// that never adapts; at launch when they have room to grow into, as an adaptive run's, so
/// that its growths compile nothing (src/runtime, [`CAPACITY_CONSTANT`]).
fn capacity_constant(mesh: &DgMesh, capacity: Capacity) -> &'static str {
    if capacity == Capacity::of(mesh) {
        FIXED_CAPACITY_CONSTANT
    } else {
        CAPACITY_CONSTANT
    }
}

/// The DG kernels as their speed depends on how they take the capacity.
#[derive(Clone, Copy, Debug)]
enum StrideUser {
    /// `dg_volume` of the colored layout.
    Volume,
    /// `dg_volume` lifting the gathered layout's fluxes (with the stage fused at p <= 2).
    VolumeLift,
    /// `dg_trace`.
    Trace,
    /// `dg_flux`.
    Flux,
    /// `dg_surface` (colored, and CUDA's atomic variant).
    Surface,
    /// `dg_limit`, `dg_local_dt`: not measured apart (no limiter in the benchmark).
    Other,
}

/// Whether `kernel` at order `p` steps faster with a fixed capacity compiled in than given at
/// launch, on CUDA (wgpu takes it at launch either way, 0-1% slower per step than compiled in).
/// `chromaflow --backend cuda bench dg --vortex --cells 800000 --surface gathered,colored`, an
/// H200, ms per step compiled in / at launch (BENCHMARKS.md, session 19 run 4): dg_flux p = 3
/// 1.248 / 0.673 and p = 4 2.193 / 0.956 (equal below); dg_trace p = 2 0.189 / 0.199, p = 4
/// 0.788 / 0.716; the lifting dg_volume p = 1 0.181 / 0.202, p = 3 1.057 / 1.018, p = 4 2.501 /
/// 2.375; the colored dg_volume p = 3 0.853 / 0.896, p = 4 1.985 / 1.766; dg_surface p = 1
/// 0.646 / 0.689, p = 4 14.84 / 15.22. dg_flux's loss is occupancy: with the stride known NVCC
/// gives it 168 registers a thread at p = 3 and 241 at p = 4 (72 and 64 at launch; ptxas -v).
fn compiled_capacity_is_faster(kernel: StrideUser, p: usize) -> bool {
    match kernel {
        StrideUser::Flux => false,
        StrideUser::Trace | StrideUser::VolumeLift => p <= 2,
        StrideUser::Volume => p <= 3,
        StrideUser::Surface | StrideUser::Other => true,
    }
}

/// The solver's `constants` for `kernel` at order `p`: a fixed capacity stays compiled in only
/// where that is faster ([`compiled_capacity_is_faster`]), else it is given at launch.
fn for_kernel(
    constants: &[(&'static str, f64)],
    kernel: StrideUser,
    p: usize,
) -> Vec<(&'static str, f64)> {
    constants
        .iter()
        .map(|&(name, value)| {
            if name == FIXED_CAPACITY_CONSTANT && !compiled_capacity_is_faster(kernel, p) {
                (CAPACITY_CONSTANT, value)
            } else {
                (name, value)
            }
        })
        .collect()
}

/// The constants of a solver for `mesh` in buffers of `capacity`: the gas, flux, case
/// function, the order's sizes and the capacity ([`capacity_constant`]).
fn solver_constants(
    mesh: &DgMesh,
    tables: &BasisTables,
    cfg: &GpuConfig,
    capacity: Capacity,
) -> Vec<(&'static str, f64)> {
    vec![
        ("GAMMA", super::euler::GAMMA),
        ("FLUX", cfg.flux.id() as f64),
        ("CASE_FN", cfg.state_fn.id() as f64),
        ("NP", tables.np as f64),
        ("NQ", tables.nq() as f64),
        ("NQE", tables.nqe() as f64),
        (capacity_constant(mesh, capacity), capacity.elements as f64),
    ]
}

/// The gathered layout's kernels for a solver with `constants` at order `p`, `hanging` for a
/// mesh with hanging nodes: dg_trace, dg_flux, the lifting dg_volume and, at p <=
/// [`FUSED_STAGE_MAX_ORDER`], the lifting dg_volume with the stage fused.
fn gathered_specs(
    constants: &[(&'static str, f64)],
    p: usize,
    hanging: bool,
) -> Vec<OwnedKernelSpec> {
    let trace: Vec<(&'static str, f64)> = for_kernel(constants, StrideUser::Trace, p)
        .into_iter()
        .filter(|(n, _)| {
            [
                "NP",
                "NQ",
                "NQE",
                CAPACITY_CONSTANT,
                FIXED_CAPACITY_CONSTANT,
            ]
            .contains(n)
        })
        .collect();
    let mut lift = for_kernel(constants, StrideUser::VolumeLift, p);
    lift.push(("LIFT", 1.0));
    lift.push(("HANGING", if hanging { 1.0 } else { 0.0 }));
    let mut specs = vec![
        ("dg_trace", trace),
        ("dg_flux", for_kernel(constants, StrideUser::Flux, p)),
        ("dg_volume", lift.clone()),
    ];
    if p <= FUSED_STAGE_MAX_ORDER {
        lift.push(("STAGE", 1.0));
        specs.push(("dg_volume", lift));
    }
    specs
}

/// Build the gathered layout's kernels of a solver for `mesh` in buffers of `capacity`, for a
/// mesh without and with hanging nodes, into `rt`'s kernel cache ([`Runtime::kernel_list`]),
/// so that [`GpuDg::set_surface`] and the first adapted mesh find them there: an adaptive run
/// builds them while it builds the solver's step ([`crate::solver::dg::Simulation::new`]).
pub fn build_gathered_kernels(
    rt: &Runtime,
    mesh: &DgMesh,
    tables: &BasisTables,
    cfg: &GpuConfig,
    capacity: Capacity,
) -> Result<()> {
    let constants = solver_constants(mesh, tables, cfg, capacity);
    let specs: Vec<OwnedKernelSpec> = [false, true]
        .into_iter()
        .flat_map(|hanging| gathered_specs(&constants, tables.p, hanging))
        .collect();
    rt.kernel_list(&specs).map(|_| ())
}

/// Sizes of the mesh buffers: elements (the DOF stride `NE` of the kernels) and edges. An
/// adapted mesh that fits is written into the same buffers, with no kernel rebuilt.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Capacity {
    pub elements: usize,
    pub edges: usize,
}

impl Capacity {
    /// Exactly the mesh.
    pub fn of(mesh: &DgMesh) -> Capacity {
        Capacity {
            elements: mesh.num_elements,
            edges: mesh.edges.len(),
        }
    }

    /// Room for the mesh grown by `factor` (adaptive runs).
    pub fn with_room(mesh: &DgMesh, factor: f64) -> Capacity {
        let grow = |n: usize| (n as f64 * factor).ceil() as usize;
        Capacity {
            elements: grow(mesh.num_elements),
            edges: grow(mesh.edges.len()),
        }
    }
}

/// The clock words the host writes: [t, dt, t_end, fixed_dt, cfl, steps, t_lo, 0], the time
/// as the f32 pair t + t_lo that `dg_time` advances.
fn clock_words(t: f64, t_end: f64, fixed_dt: f64, cfl: f64) -> [f32; 8] {
    let hi = t as f32;
    [
        hi,
        0.0,
        t_end as f32,
        fixed_dt as f32,
        cfl as f32,
        0.0,
        (t - f64::from(hi)) as f32,
        0.0,
    ]
}

/// The clock words `limit_once` writes: the limiter skips work when dt = 0 (a finished run),
/// so give it a nonzero dt.
const LIMIT_CLOCK: [f32; 8] = [0.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0];

/// The clock read back from its words (as [`GpuDg::clock_buffer`] holds them).
pub(crate) fn clock_from_words(c: &[f32]) -> Result<Clock> {
    if c.len() < 7 {
        return Err(Error::Gpu(format!("clock of {} words", c.len())));
    }
    Ok(Clock {
        t: f64::from(c[0]) + f64::from(c[6]),
        dt: c[1] as f64,
        steps: c[5] as u64,
    })
}

/// Which kernel group a timed segment of a step ran (for per-kernel timings).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kernel {
    Volume,
    /// The surface integral: `dg_surface` (colored, atomic) or `dg_flux` (gathered).
    Surface,
    /// The gathered layout's `dg_trace`.
    Trace,
    Stage,
    Limit,
    /// Local dt, the min-reduction and the clock (at the start and the end of a step).
    TimeStep,
}

/// The highest order whose gathered step applies the Runge-Kutta stage inside `dg_volume`.
/// Measured on the H100 (BENCHMARKS.md, session 10), the fused volume kernel (loading every
/// DOF before storing any) against volume plus `dg_stage`, ms per step at 800k triangles:
/// p = 1: 0.263 against 0.295 (session 7's interleaved fusion); p = 2: 0.893 against
/// 0.382 + 0.639; p = 3, 4: 3.69 and 8.00 against 3.03 and 5.39 (one thread then holds 40-60
/// DOFs' registers at the volume kernel's low occupancy).
const FUSED_STAGE_MAX_ORDER: usize = 2;

/// The segments of the step plan with the kernel group each one times.
const SEGMENTS: [(&str, Kernel); 7] = [
    ("dt", Kernel::TimeStep),
    ("volume", Kernel::Volume),
    ("trace", Kernel::Trace),
    ("surface", Kernel::Surface),
    ("stage", Kernel::Stage),
    ("limit", Kernel::Limit),
    ("time", Kernel::TimeStep),
];

/// A kernel with the arguments it gets at every launch.
struct Bound {
    kernel: crate::runtime::Kernel,
    args: Vec<Arg>,
}

impl Bound {
    fn new(kernel: crate::runtime::Kernel, args: &[Arg]) -> Bound {
        Bound {
            kernel,
            args: args.to_vec(),
        }
    }
}

/// The surface kernels of the layout in use.
enum SurfaceKernels {
    Colored,
    /// `dg_surface_atomic`.
    Atomic(crate::runtime::Kernel),
    Gathered(Box<Gathered>),
}

impl SurfaceKernels {
    fn layout(&self) -> SurfaceLayout {
        match self {
            SurfaceKernels::Colored => SurfaceLayout::Colored,
            SurfaceKernels::Atomic(_) => SurfaceLayout::Atomic,
            SurfaceKernels::Gathered(_) => SurfaceLayout::Gathered,
        }
    }
}

/// The gathered layout's kernels: traces, edge fluxes, and the volume kernel with LIFT = 1
/// (their buffers, NQE states per element side, live in the bound arguments).
struct Gathered {
    trace: Bound,
    /// `dg_flux` over the solver's edges in left-element order ([`GpuDg::edges_by_left`]).
    flux: Bound,
    /// Built for a mesh with hanging nodes (`dg_volume`'s HANGING = 1: the lift reads the
    /// split sides).
    hanging: bool,
    volume: Bound,
    /// `dg_volume` with LIFT = 1 and STAGE = 1: the lift and the stage update in one kernel
    /// (the step plan's; the rhs plan keeps `volume`, which writes the rhs), for orders up to
    /// [`FUSED_STAGE_MAX_ORDER`].
    volume_stage: Option<Bound>,
}

/// What the plans are recorded from: the kernels with their buffers, and the launch ranges.
struct Launches {
    volume: Bound,
    surface: Bound,
    stage: Bound,
    limit: Bound,
    local_dt: Bound,
    time: Bound,
    reduction: MinReduction,
    inputs: DgInputs,
    /// The override constants of the kernels that read the tables and the case.
    constants: Vec<(&'static str, f64)>,
    num_elements: u32,
    num_colors: usize,
    /// Edge quadrature nodes (dg_flux's threads per edge).
    nqe: u32,
    limiter: bool,
    /// A fixed time step: no local dt and no minimum to take (`dg_time` ignores them).
    fixed_dt: bool,
    /// The launch records the kernels read in `device_counts` mode.
    records: Buffer,
    capacity: Capacity,
    /// Launches take their element count and face ranges from `records`, written on the device
    /// (by the adaptation), instead of the host's ranges: the plans outlive any adaptation.
    device_counts: bool,
    /// The host's bounds of the elements and faces the records hold, which bound the
    /// device-sized launches (CUDA starts no more threads than they say).
    bounds: CountBounds,
}

/// Host bounds of an adapted mesh's counts, which the device's launch records hold exactly:
/// the elements (GPU adaptation: n + 3 refined - 3 clusters, known once the smoothing's counts
/// are read back) and the faces (at most 3 per element: every face is a whole side of an
/// element, the finer one's; and at most 6 more per refinement than before it). Shared with
/// the adaptation, whose flag and smoothing launches cover the same mesh.
#[derive(Clone, Debug)]
pub struct CountBounds {
    pub elements: ThreadBound,
    pub faces: ThreadBound,
    /// The face nodes (`dg_flux`'s threads): `nodes_per_face` per face.
    pub face_nodes: ThreadBound,
    nodes_per_face: usize,
}

impl CountBounds {
    fn new(elements: usize, faces: usize, nodes_per_face: usize) -> CountBounds {
        let bounds = CountBounds {
            elements: ThreadBound::new(0),
            faces: ThreadBound::new(0),
            face_nodes: ThreadBound::new(0),
            nodes_per_face,
        };
        bounds.set(elements, faces);
        bounds
    }

    /// Bound the launches by a mesh of `elements` elements and at most `faces` faces (at
    /// most 3 per element, whatever `faces` says).
    pub fn set(&self, elements: usize, faces: usize) {
        let faces = faces.min(3 * elements);
        self.elements.set(elements as u32);
        self.faces.set(faces as u32);
        self.face_nodes.set((faces * self.nodes_per_face) as u32);
    }
}

impl Launches {
    /// Local dt, its minimum and the time kernel's phase 0. With device counts over every slot
    /// (the slots past the count get a huge dt) and the minimum over every slot. With a fixed
    /// dt only the time kernel.
    fn record_dt(&self, p: &mut PlanBuilder) {
        let b = &self.local_dt;
        if self.fixed_dt {
            self.record_time(p, 0);
            return;
        }
        if self.device_counts {
            let slots = self.capacity.elements as u32;
            p.launch_threads(&b.kernel, &b.args, self.device_range(0, 0, 0), slots);
            self.reduction.record_first(p, slots);
        } else {
            p.launch(&b.kernel, &b.args, ItemRange::all(self.num_elements));
            self.reduction.record_first(p, self.num_elements);
        }
        self.record_time(p, 0);
    }

    /// A range read from launch record `r` with the host's `color` and `pad`.
    fn device_range(&self, r: usize, color: u32, pad: u32) -> ItemRange {
        ItemRange {
            first: record_word(r),
            count: DEVICE_COUNT,
            color,
            pad,
        }
    }

    /// `b` over the elements: `range`, or with device counts record 0 (at most every slot).
    fn launch_elements(&self, p: &mut PlanBuilder, b: &Bound, range: ItemRange) {
        if self.device_counts {
            let r = self.device_range(0, range.color, range.pad);
            p.launch_device(
                &b.kernel,
                &b.args,
                r,
                self.capacity.elements as u32,
                &self.records,
            )
            .bounded(&self.bounds.elements);
        } else {
            p.launch(&b.kernel, &b.args, range);
        }
    }

    /// The time kernel in phase 0 (step start) or 1 (step end); one thread.
    fn record_time(&self, p: &mut PlanBuilder, phase: usize) {
        let b = &self.time;
        p.launch(&b.kernel, &b.args, self.inputs.time_ranges[phase]);
    }

    /// The rhs of stage `s`: the volume and surface kernels of layout `surface`.
    fn record_rhs(&self, p: &mut PlanBuilder, s: usize, surface: &SurfaceKernels) {
        if let SurfaceKernels::Gathered(g) = surface {
            self.record_gathered(p, s, g, &g.volume);
            return;
        }
        p.segment("volume");
        self.launch_elements(p, &self.volume, self.inputs.volume_ranges[s]);
        p.segment("surface");
        let nc = self.num_colors;
        let colors = &self.inputs.surface_ranges[s * nc..(s + 1) * nc];
        let kernel = match surface {
            SurfaceKernels::Atomic(kernel) => kernel,
            _ => &self.surface.kernel,
        };
        let args = &self.surface.args;
        if self.device_counts {
            // A color holds at most one face per element (no two share one), so the elements
            // bound its launch; all faces together the face bound (both at most the capacity).
            let (time, reg) = (colors[0].color, colors[0].pad);
            if let SurfaceKernels::Atomic(_) = surface {
                let all = self.device_range(1 + nc, time, reg);
                let bound = self.capacity.edges as u32;
                p.launch_device(kernel, args, all, bound, &self.records)
                    .bounded(&self.bounds.faces);
                return;
            }
            for c in 0..nc {
                let r = self.device_range(1 + c, time, reg);
                let bound = self.capacity.elements as u32;
                p.launch_device(kernel, args, r, bound, &self.records)
                    .bounded(&self.bounds.elements);
            }
            return;
        }
        match surface {
            SurfaceKernels::Atomic(_) => p.launch_ranges(kernel, args, &[self.all_edges(s)]),
            _ => p.launch_ranges(kernel, args, colors),
        };
    }

    /// Stage `s` of the gathered layout: traces, edge fluxes, then `volume` (the lift, and with
    /// STAGE = 1 the stage update too).
    fn record_gathered(&self, p: &mut PlanBuilder, s: usize, g: &Gathered, volume: &Bound) {
        p.segment("trace");
        self.launch_elements(p, &g.trace, self.inputs.volume_ranges[s]);
        p.segment("surface");
        let edges = self.all_edges(s);
        if self.device_counts {
            // Every face of the adapted mesh, a thread per face node (its launch record's grid).
            let record = face_nodes_record(self.num_colors);
            let all = self.device_range(record, edges.color, edges.pad);
            let bound = self.capacity.edges as u32 * self.nqe;
            p.launch_device(&g.flux.kernel, &g.flux.args, all, bound, &self.records)
                .bounded(&self.bounds.face_nodes);
        } else {
            // dg_flux runs a thread per edge node.
            p.launch_threads(&g.flux.kernel, &g.flux.args, edges, edges.count * self.nqe);
        }
        p.segment("volume");
        self.launch_elements(p, volume, self.inputs.volume_ranges[s]);
    }

    /// The edges of every color in left-element order ([`edges_by_left`]).
    fn edges_by_left(&self) -> Vec<DgEdge> {
        edges_by_left(&self.inputs.edges[..self.all_edges(0).count as usize])
    }

    /// Stage `s`'s surface range over the edges of every color (contiguous from the first).
    fn all_edges(&self, s: usize) -> ItemRange {
        let nc = self.num_colors;
        let colors = &self.inputs.surface_ranges[s * nc..(s + 1) * nc];
        ItemRange {
            count: colors.iter().map(|r| r.count).sum(),
            ..colors[0]
        }
    }

    /// Range `k` of the limiter ranges.
    fn record_limit(&self, p: &mut PlanBuilder, k: usize) {
        self.launch_elements(p, &self.limit, self.inputs.limit_ranges[k]);
    }

    /// One full step, a timing segment per kernel group (see [`SEGMENTS`]).
    fn record_step(&self, p: &mut PlanBuilder, surface: &SurfaceKernels) {
        p.segment("dt");
        self.record_dt(p);
        for s in 0..self.inputs.stages.len() {
            let fused = match surface {
                SurfaceKernels::Gathered(g) => g.volume_stage.as_ref().map(|v| (g, v)),
                _ => None,
            };
            if let Some((g, volume_stage)) = fused {
                // The volume kernel applies the stage itself (STAGE = 1).
                self.record_gathered(p, s, g, volume_stage);
            } else {
                self.record_rhs(p, s, surface);
                p.segment("stage");
                let b = &self.stage;
                p.launch(&b.kernel, &b.args, self.inputs.stage_ranges[s]);
            }
            if self.limiter {
                p.segment("limit");
                self.record_limit(p, s);
            }
        }
        p.segment("time");
        self.record_time(p, 1);
    }

    /// The plans: (full step, rhs of stage 0, the limiter once).
    fn plans(&self, rt: &Runtime, surface: &SurfaceKernels) -> Result<(Plan, Plan, Plan)> {
        let mut step = PlanBuilder::new();
        self.record_step(&mut step, surface);
        let mut rhs = PlanBuilder::new();
        // Stage 0 of every scheme evaluates register 0 at the clock's time.
        self.record_rhs(&mut rhs, 0, surface);
        let mut limit = PlanBuilder::new();
        self.record_limit(&mut limit, self.inputs.limit_ranges.len() - 1);
        Ok((rt.prepare(&step)?, rt.prepare(&rhs)?, rt.prepare(&limit)?))
    }
}

/// The DG solver for one mesh and order on a [`Runtime`]: its buffers, kernels and prepared
/// plans (a full step, the rhs, the limiter once). The buffers hold up to a [`Capacity`] of
/// elements and edges; [`GpuDg::remesh`] moves the solver onto another mesh that fits.
pub struct GpuDg {
    rt: Runtime,
    pub num_elements: usize,
    pub np: usize,
    /// Unknowns per register on the host: 4 np ne.
    pub ndof: usize,
    pub num_colors: usize,
    pub num_stages: usize,
    capacity: Capacity,
    tables: BasisTables,
    cfg: GpuConfig,
    cfl: f64,
    fixed_dt: f64,
    regs: Buffer,
    /// Low words of R0..R3 (`regs` = hi).
    regs_lo: Buffer,
    rhs: Buffer,
    clock: Buffer,
    /// Per-element and per-edge mesh buffers, rewritten by [`GpuDg::remesh`].
    mesh_buffers: [Buffer; 5],
    /// The edges again, in left-element order ([`edges_by_left`]): `dg_flux`'s (the gathered
    /// layout), so that a warp's left sides are neighbouring slots. Written by the host for a
    /// mesh it writes and by `amr_faces` and `amr_permute` on the device.
    edges_by_left: Buffer,
    /// Whether the edges buffer (the last of `mesh_buffers`) holds the mesh's faces in color
    /// order, as the colored and atomic layouts read them: false after an adaptation that
    /// wrote the left-element order only ([`GpuDg::adopt`]), until the host writes a mesh.
    color_order: bool,
    /// The basis tables and the case data.
    data_buffers: [Buffer; 3],
    launches: Launches,
    /// The surface layout's kernels.
    surface: SurfaceKernels,
    /// One full step (segments per kernel group, for [`GpuDg::time_kernels`]).
    step: Plan,
    /// The rhs of register 0 at the clock's time.
    rhs_plan: Plan,
    /// The limiter from the scratch register into register 0.
    limit_plan: Plan,
}

impl GpuDg {
    /// Upload the mesh, tables and case data, build the kernels (the order, quadrature sizes,
    /// flux and case function as constants) and prepare the plans.
    pub fn new(
        rt: &Runtime,
        mesh: &DgMesh,
        tables: &BasisTables,
        cfg: &GpuConfig,
    ) -> Result<GpuDg> {
        GpuDg::with_capacity(rt, mesh, tables, cfg, Capacity::of(mesh))
    }

    /// [`GpuDg::new`] with buffers for up to `capacity` (at least the mesh).
    pub fn with_capacity(
        rt: &Runtime,
        mesh: &DgMesh,
        tables: &BasisTables,
        cfg: &GpuConfig,
        capacity: Capacity,
    ) -> Result<GpuDg> {
        let inputs = DgInputs::new(mesh, tables, cfg, capacity)?;
        let ne = mesh.num_elements;
        let cap = capacity.elements;
        let np = tables.np;
        let constants = solver_constants(mesh, tables, cfg, capacity);
        let p = tables.p;
        let mut dt_constants = for_kernel(&constants, StrideUser::Other, p);
        dt_constants.push(("ORDER", p as f64));

        let stride = 4 * np * cap;
        let regs = rt.zeroed::<f32>("dg registers", GPU_REGISTERS * stride)?;
        let regs_lo = rt.zeroed::<f32>("dg registers, low words", rk::REGISTERS * stride)?;
        let rhs = rt.zeroed::<f32>("dg rhs", stride)?;
        let clock = rt.zeroed::<f32>("dg clock", 8)?;
        let table_buf = rt.upload("dg basis tables", &inputs.tables)?;
        let inv_jac = rt.upload("dg inverse jacobians", &inputs.inv_jac)?;
        let inv_det = rt.upload("dg 1/det J", &inputs.inv_det)?;
        let heights = rt.upload("dg min heights", &inputs.heights)?;
        let neighbors = rt.upload("dg neighbours", &inputs.neighbors)?;
        let edges = rt.upload("dg edges", &inputs.edges)?;
        let edges_by_left = rt.zeroed::<DgEdge>("dg edges by left element", capacity.edges)?;
        let case_buf = rt.upload("dg case data", &inputs.case_data)?;
        let stage_buf = rt.upload("dg stages", &inputs.stages)?;
        let local_dt_buf = rt.zeroed::<f32>("dg local dt", cap)?;
        // dg_volume's edge fluxes while the gathered layout is off (read with LIFT = 1 only).
        let no_fluxes = rt.zeroed::<[f32; 4]>("dg no edge fluxes", 1)?;
        // The step's kernels at once (Runtime::kernels: in parallel; a solver rebuilt with
        // more room compiles them again for the new capacity).
        let [volume, surface, stage, limit, local_dt, time] = rt.kernels([
            ("dg_volume", &for_kernel(&constants, StrideUser::Volume, p)),
            (
                "dg_surface",
                &for_kernel(&constants, StrideUser::Surface, p),
            ),
            ("dg_stage", &[]),
            ("dg_limit", &for_kernel(&constants, StrideUser::Other, p)),
            ("dg_local_dt", &dt_constants),
            ("dg_time", &[]),
        ])?;
        let reduction = MinReduction::new(rt, &local_dt_buf, cap as u32)?;
        let records = rt.upload(
            "dg launch records",
            &mesh_launch_records(ne, &mesh.color_offsets, tables.nqe()),
        )?;

        let launches = Launches {
            volume: Bound::new(
                volume,
                &args![
                    regs, rhs, table_buf, inv_jac, inv_det, no_fluxes, clock, stage_buf, regs_lo,
                    records, neighbors
                ],
            ),
            surface: Bound::new(
                surface,
                &args![regs, rhs, table_buf, edges, inv_det, case_buf, clock, records],
            ),
            stage: Bound::new(stage, &args![regs, rhs, clock, stage_buf, regs_lo]),
            limit: Bound::new(limit, &args![regs, table_buf, neighbors, clock, records]),
            local_dt: Bound::new(local_dt, &args![regs, heights, local_dt_buf, records]),
            time: Bound::new(time, &args![*reduction.result(), clock]),
            reduction,
            inputs,
            constants,
            num_elements: ne as u32,
            num_colors: mesh.num_colors(),
            nqe: tables.nqe() as u32,
            limiter: cfg.limiter,
            fixed_dt: cfg.fixed_dt.is_some_and(|dt| dt > 0.0),
            records,
            capacity,
            device_counts: false,
            bounds: CountBounds::new(ne, mesh.edges.len(), tables.nqe()),
        };
        let (step, rhs_plan, limit_plan) = launches.plans(rt, &SurfaceKernels::Colored)?;
        rt.write(&edges_by_left, 0, &launches.edges_by_left())?;
        Ok(GpuDg {
            rt: rt.clone(),
            num_elements: ne,
            np,
            ndof: 4 * np * ne,
            num_colors: mesh.num_colors(),
            num_stages: launches.inputs.stages.len(),
            capacity,
            tables: tables.clone(),
            cfg: cfg.clone(),
            cfl: cfg.cfl,
            fixed_dt: cfg.fixed_dt.unwrap_or(0.0),
            regs,
            regs_lo,
            rhs,
            clock,
            mesh_buffers: [inv_jac, inv_det, heights, neighbors, edges],
            edges_by_left,
            color_order: true,
            data_buffers: [table_buf, case_buf, stage_buf],
            launches,
            surface: SurfaceKernels::Colored,
            step,
            rhs_plan,
            limit_plan,
        })
    }

    /// Move the solver onto `mesh` (an adapted mesh of the same case and order) with solution
    /// `c` (`c[eq][k][i]` on it). A mesh within the capacity is written into the same buffers
    /// and only the plans are recorded again; a larger one gets new buffers with room to grow
    /// by half again. The clock is kept.
    pub fn remesh(&mut self, mesh: &DgMesh, c: &[f64]) -> Result<()> {
        let fits = mesh.num_elements <= self.capacity.elements
            && mesh.edges.len() <= self.capacity.edges
            && mesh.num_colors() == self.num_colors;
        if !fits {
            return self.reserve(mesh, c, Capacity::with_room(mesh, 1.5));
        }
        let inputs = DgInputs::new(mesh, &self.tables, &self.cfg, self.capacity)?;
        let [inv_jac, inv_det, heights, neighbors, edges] = &self.mesh_buffers;
        self.rt.write(inv_jac, 0, &inputs.inv_jac)?;
        self.rt.write(inv_det, 0, &inputs.inv_det)?;
        self.rt.write(heights, 0, &inputs.heights)?;
        self.rt.write(neighbors, 0, &inputs.neighbors)?;
        self.rt.write(edges, 0, &inputs.edges)?;
        self.color_order = true;
        self.launches.inputs = inputs;
        self.launches.num_elements = mesh.num_elements as u32;
        self.launches.device_counts = false;
        self.launches
            .bounds
            .set(mesh.num_elements, mesh.edges.len());
        let records =
            mesh_launch_records(mesh.num_elements, &mesh.color_offsets, self.tables.nqe());
        self.rt.write(&self.launches.records, 0, &records)?;
        self.rt
            .write(&self.edges_by_left, 0, &self.launches.edges_by_left())?;
        self.num_elements = mesh.num_elements;
        self.ndof = 4 * self.np * mesh.num_elements;
        self.lift_hanging_nodes()?;
        (self.step, self.rhs_plan, self.limit_plan) =
            self.launches.plans(&self.rt, &self.surface)?;
        self.set_solution(c)
    }

    /// Move onto `mesh` with solution `c` in new buffers of `capacity` (kernels built again for
    /// the new stride); the clock is kept.
    pub fn reserve(&mut self, mesh: &DgMesh, c: &[f64], capacity: Capacity) -> Result<()> {
        let clock: Vec<f32> = self.rt.read(&self.clock, 0, 8)?;
        let mut grown = GpuDg::with_capacity(&self.rt, mesh, &self.tables, &self.cfg, capacity)?;
        grown.rt.write(&grown.clock, 0, &clock)?;
        grown.set_surface(self.surface.layout())?;
        *self = grown;
        self.set_solution(c)
    }

    /// Take over a mesh of `num_elements` elements that the adaptation kernels wrote into the
    /// mesh buffers and the launch records ([`GpuDg::launch_words`]) on the device. The first
    /// time, the plans are recorded again to read their element count and face ranges from the
    /// records; after that nothing is recorded and nothing is read back. The adaptation left
    /// register 0's low words ([`GpuDg::low_words`]) zero for the elements it made and whole,
    /// moved with their high words, for the others. `faces_at_most` bounds its faces (the
    /// launches over them start no more threads, [`CountBounds`]). `color_order`: whether
    /// it wrote the faces in color order too, which only the gathered layout can do without.
    pub fn adopt(
        &mut self,
        num_elements: usize,
        faces_at_most: usize,
        color_order: bool,
    ) -> Result<()> {
        if !color_order && self.surface.layout() != SurfaceLayout::Gathered {
            return Err(Error::Invalid(format!(
                "an adapted mesh whose faces are in left-element order only, for the {} \
                 surface layout, which reads them per color",
                self.surface.layout().name()
            )));
        }
        if num_elements == 0 || num_elements > self.capacity.elements {
            return Err(Error::Invalid(format!(
                "an adapted mesh of {num_elements} elements does not fit buffers for {} \
                 elements",
                self.capacity.elements
            )));
        }
        self.launches.inputs.conforming = false;
        self.color_order = color_order;
        self.launches.num_elements = num_elements as u32;
        self.launches.bounds.set(num_elements, faces_at_most);
        self.num_elements = num_elements;
        self.ndof = 4 * self.np * num_elements;
        let rebuilt = self.lift_hanging_nodes()?;
        if !self.launches.device_counts || rebuilt {
            self.launches.device_counts = true;
            (self.step, self.rhs_plan, self.limit_plan) =
                self.launches.plans(&self.rt, &self.surface)?;
        }
        Ok(())
    }

    /// The register that holds scratch words between steps (the limiter's within one; high
    /// words only): the adaptation keeps there the coefficients its projections read (a
    /// refined parent's, a coarsened cluster's first child's) while a workgroup projects them.
    pub const SCRATCH_REGISTER: u32 = SCRATCH;

    /// A stage register of the scheme (R1: written by a step's first stage before anything
    /// reads it, so free between steps, high and low words): the adaptation's compaction in
    /// order stages the elements there in their new slots before moving them into register 0.
    pub const STAGING_REGISTER: u32 = 1;

    /// The low words of the registers (`regs` holds the high words of the double-float
    /// pairs), 4 np rows of the element capacity per register: the adaptation and the reorder
    /// move register 0's with its high words and zero them for the elements they make (a
    /// projection is in the high words alone).
    pub fn low_words(&self) -> &Buffer {
        &self.regs_lo
    }

    /// The host's bounds of the counts in the launch records ([`GpuDg::launch_words`]), for
    /// launches of other plans over the same mesh.
    pub fn count_bounds(&self) -> &CountBounds {
        &self.launches.bounds
    }

    /// The launch records the kernels read once the solver follows device counts
    /// ([`GpuDg::adopt`]): [`crate::runtime::LAUNCH_WORDS`] words each, record 0 the elements,
    /// 1 + c the faces of color c, 1 + colors all faces, 2 + colors all faces with a thread
    /// per face node ([`mesh_launch_records`]).
    pub fn launch_words(&self) -> &Buffer {
        &self.launches.records
    }

    /// lo = 0 for register 0 (the solution is its hi words alone), written from the host.
    fn clear_low_words(&self) -> Result<()> {
        let stride = 4 * self.np * self.capacity.elements;
        self.rt.write(&self.regs_lo, 0, &vec![0f32; stride])
    }

    /// The buffers the adaptation kernels work on: the registers' hi words (the solution is
    /// register 0, whose lo words are [`GpuDg::low_words`]) and the mesh buffers (inverse
    /// Jacobians, 1 / det J, heights, neighbours, edges).
    pub fn device_buffers(&self) -> (&Buffer, &[Buffer; 5]) {
        (&self.regs, &self.mesh_buffers)
    }

    /// The edges in left-element order ([`edges_by_left`]), which the adaptation and the
    /// reorder write on the device beside the edges in color order.
    pub fn edges_by_left(&self) -> &Buffer {
        &self.edges_by_left
    }

    /// Whether the edges buffer holds the mesh's faces in color order (false after an
    /// adaptation that wrote the left-element order only, [`GpuDg::adopt`]).
    pub fn color_order(&self) -> bool {
        self.color_order
    }

    /// Where the words of the mesh buffers in use lie, as (buffer, first word, words): the
    /// inverse Jacobians, 1 / det J and heights of the elements, both neighbour blocks, then the
    /// first `faces` edges in left-element order (the copy every layout keeps current).
    fn mesh_parts(&self, faces: usize) -> [(&Buffer, usize, usize); 6] {
        let (n, cap) = (self.num_elements, self.capacity.elements);
        let [inv_jac, inv_det, heights, neighbors, _] = &self.mesh_buffers;
        let edge_words = std::mem::size_of::<DgEdge>() / 4;
        [
            (inv_jac, 0, 4 * n),
            (inv_det, 0, n),
            (heights, 0, n),
            (neighbors, 0, 4 * n),
            (neighbors, 4 * cap, 4 * n),
            (&self.edges_by_left, 0, edge_words * faces),
        ]
    }

    /// The mesh buffers' words in use as the device holds them (an adaptation on the device
    /// computes the geometry in f32 there, which the host's f64 geometry need not round to):
    /// a checkpoint of an adaptive run, restored to the same bits by
    /// [`GpuDg::set_mesh_words`].
    pub fn mesh_words(&self, faces: usize) -> Result<Vec<u32>> {
        let mut words = Vec::new();
        for (buffer, first, count) in self.mesh_parts(faces) {
            words.extend(self.rt.read::<u32>(buffer, first, count)?);
        }
        Ok(words)
    }

    /// Write [`GpuDg::mesh_words`] back (`faces` as they were read, the solver on the same mesh
    /// from the host: [`GpuDg::reserve`]). The faces may come in any order (checkpoints before
    /// 2026-11-30 hold the color order): each takes the place of the host's face with the same
    /// left element and side in color order, and its place in left-element order follows from
    /// that ([`edges_by_left`]), so that every layout reads the device's records in the order
    /// an adaptation writes them.
    pub fn set_mesh_words(&mut self, faces: usize, words: &[u32]) -> Result<()> {
        let parts = self.mesh_parts(faces);
        let expected: usize = parts.iter().map(|p| p.2).sum();
        let host_faces = self.launches.inputs.edges.get(..faces);
        let Some(host_faces) = host_faces.filter(|_| words.len() == expected) else {
            return Err(Error::Invalid(format!(
                "mesh words: {} given, {expected} for {} elements and {faces} faces",
                words.len(),
                self.num_elements
            )));
        };
        let mut at = 0;
        for &(buffer, first, count) in &parts[..parts.len() - 1] {
            if count > 0 {
                self.rt.write(buffer, first, &words[at..at + count])?;
            }
            at += count;
        }
        let faces: Vec<DgEdge> = bytemuck::pod_collect_to_vec(&words[at..]);
        // The faces by (left element, its side): one face each.
        let key = |e: &DgEdge| (e.left, e.info & 3);
        let mut by_key: Vec<((u32, u32), usize)> =
            faces.iter().enumerate().map(|(j, e)| (key(e), j)).collect();
        by_key.sort_unstable();
        if let Some(w) = by_key.windows(2).find(|w| w[0].0 == w[1].0) {
            return Err(Error::Invalid(format!(
                "mesh words: two faces on side {} of element {}",
                w[0].0 .1, w[0].0 .0
            )));
        }
        let color_order = host_faces
            .iter()
            .map(|h| match by_key.binary_search_by_key(&key(h), |k| k.0) {
                Ok(j) => Ok(faces[by_key[j].1]),
                Err(_) => Err(Error::Invalid(format!(
                    "mesh words: no face on side {} of element {}, which the mesh has",
                    h.info & 3,
                    h.left
                ))),
            })
            .collect::<Result<Vec<DgEdge>>>()?;
        self.rt.write(&self.mesh_buffers[4], 0, &color_order)?;
        // By left element, then by color within one: the order the adaptation writes.
        self.rt
            .write(&self.edges_by_left, 0, &edges_by_left(&color_order))?;
        self.color_order = true;
        Ok(())
    }

    /// The runtime the solver runs on.
    pub fn runtime(&self) -> &Runtime {
        &self.rt
    }

    /// Quadrature nodes per face (`dg_flux`'s threads per face; the face-node launch record's
    /// grid, [`face_nodes_record`]).
    pub fn nodes_per_face(&self) -> usize {
        self.tables.nqe()
    }

    /// The element and edge capacity of the buffers.
    pub fn capacity(&self) -> Capacity {
        self.capacity
    }

    /// The device the solver runs on.
    pub fn device_name(&self) -> String {
        self.rt.name()
    }

    /// Upload coefficients (c[eq][k][i], f64) into register `reg` as hi = f32(c) and, for a
    /// paired register (R0..R3), lo = f32(c - hi); the scratch register gets hi only.
    fn write_register(&self, reg: u32, c: &[f64]) -> Result<()> {
        self.check_len(c.len(), 1)?;
        let hi: Vec<f32> = c.iter().map(|&x| x as f32).collect();
        let stride = 4 * self.np * self.capacity.elements;
        if (reg as usize) < rk::REGISTERS {
            let lo: Vec<f32> = c
                .iter()
                .zip(&hi)
                .map(|(&x, &h)| (x - h as f64) as f32)
                .collect();
            self.rt
                .write(&self.regs_lo, reg as usize * stride, &self.strided(lo))?;
        }
        self.rt
            .write(&self.regs, reg as usize * stride, &self.strided(hi))
    }

    /// An error unless `len` is `words` values per unknown.
    fn check_len(&self, len: usize, words: usize) -> Result<()> {
        if len != words * self.ndof {
            return Err(Error::Invalid(format!(
                "expected {} coefficients, got {len}",
                words * self.ndof
            )));
        }
        Ok(())
    }

    /// Host layout (stride ne) to the device's (stride = capacity).
    fn strided(&self, v: Vec<f32>) -> Vec<f32> {
        let (ne, cap) = (self.num_elements, self.capacity.elements);
        if ne == cap {
            return v;
        }
        let mut out = vec![0.0; 4 * self.np * cap];
        for (row, chunk) in v.chunks(ne).enumerate() {
            out[row * cap..row * cap + ne].copy_from_slice(chunk);
        }
        out
    }

    /// Read `4 np ne` host-layout values of a device array that starts at `first`.
    fn read_rows(&self, buffer: &Buffer, first: usize) -> Result<Vec<f64>> {
        Ok(self
            .read_words(buffer, first)?
            .into_iter()
            .map(f64::from)
            .collect())
    }

    /// [`GpuDg::read_rows`] as the device's f32 words.
    fn read_words(&self, buffer: &Buffer, first: usize) -> Result<Vec<f32>> {
        let (ne, cap) = (self.num_elements, self.capacity.elements);
        let v: Vec<f32> = self.rt.read(buffer, first, 4 * self.np * cap)?;
        if ne == cap {
            return Ok(v);
        }
        Ok(v.chunks(cap).flat_map(|row| row[..ne].to_vec()).collect())
    }

    /// Set the solution U^n (register 0), coefficients `c[eq][k][i]`.
    pub fn set_solution(&self, c: &[f64]) -> Result<()> {
        self.write_register(0, c)
    }

    /// Read the solution U^n = hi + lo (waits for queued work).
    pub fn read_state(&self) -> Result<Vec<f64>> {
        let hi = self.read_words(&self.regs, 0)?;
        let lo = self.read_words(&self.regs_lo, 0)?;
        Ok(hi
            .iter()
            .zip(&lo)
            .map(|(&h, &l)| f64::from(h) + f64::from(l))
            .collect())
    }

    /// The solution's device words, hi then lo (`2 ndof`): a checkpoint's payload, restored
    /// to the same bits by [`GpuDg::set_state_words`].
    pub fn state_words(&self) -> Result<Vec<f32>> {
        let mut words = self.read_words(&self.regs, 0)?;
        words.extend(self.read_words(&self.regs_lo, 0)?);
        Ok(words)
    }

    /// Set the solution from [`GpuDg::state_words`].
    pub fn set_state_words(&self, words: &[f32]) -> Result<()> {
        self.check_len(words.len(), 2)?;
        let (hi, lo) = words.split_at(self.ndof);
        self.rt.write(&self.regs, 0, &self.strided(hi.to_vec()))?;
        self.rt.write(&self.regs_lo, 0, &self.strided(lo.to_vec()))
    }

    /// Reset the clock: time t, run end t_end, no steps taken.
    pub fn set_clock(&self, t: f64, t_end: f64) -> Result<()> {
        let c = clock_words(t, t_end, self.fixed_dt, self.cfl);
        self.rt.write(&self.clock, 0, &c)
    }

    /// Read the clock (waits for queued work).
    pub fn read_clock(&self) -> Result<Clock> {
        let c: Vec<f32> = self.rt.read(&self.clock, 0, 8)?;
        clock_from_words(&c)
    }

    /// The clock's buffer (8 words, as [`GpuDg::read_clock`] reads them), for a copy read back
    /// with other counts.
    pub fn clock_buffer(&self) -> &Buffer {
        &self.clock
    }

    /// Queue `steps` full time steps (dt from the GPU reduction or fixed) in one queue call; steps
    /// past t_end do nothing. Does not wait.
    pub fn queue_steps(&self, steps: usize) -> Result<()> {
        self.rt.queue(&self.step, repeats(steps)?)
    }

    /// Wait for all queued work.
    pub fn wait(&self) -> Result<()> {
        self.rt.wait()
    }

    /// The right-hand side of `c` at time t (for the comparison with the CPU reference).
    pub fn eval_rhs(&self, c: &[f64], t: f64) -> Result<Vec<f64>> {
        self.set_solution(c)?;
        self.set_clock(t, t)?;
        self.rt.queue(&self.rhs_plan, 1)?;
        self.read_rows(&self.rhs, 0)
    }

    /// Apply the slope + positivity limiter once to `c`, writing the result into register 0
    /// (lo = 0: the limiter works on hi), and return it.
    pub fn limit_once(&self, c: &[f64]) -> Result<Vec<f64>> {
        self.write_register(SCRATCH, c)?;
        self.clear_low_words()?;
        self.rt.write(&self.clock, 0, &LIMIT_CLOCK)?;
        self.rt.queue(&self.limit_plan, 1)?;
        self.read_state()
    }

    /// Take `steps` steps timing each kernel group on the device: (kernel, seconds) per timed
    /// segment in order, or `None` when the device cannot time kernels.
    pub fn time_kernels(&self, steps: usize) -> Result<Option<Vec<(Kernel, f64)>>> {
        if !self.rt.has_timestamps() {
            return Ok(None);
        }
        let timings = self.rt.time(&self.step, repeats(steps)?)?;
        Ok(Some(
            timings
                .entries()
                .filter_map(|(label, s)| {
                    SEGMENTS
                        .iter()
                        .find(|(l, _)| *l == label)
                        .map(|(_, k)| (*k, s))
                })
                .collect(),
        ))
    }

    /// Accumulate the surface term with one atomicAdd launch over all edges instead of one
    /// launch per color (CUDA only: WGSL has no float atomics, and wgpu says so); off: the
    /// colored layout.
    pub fn set_atomic_surface(&mut self, on: bool) -> Result<()> {
        self.set_surface(if on {
            SurfaceLayout::Atomic
        } else {
            SurfaceLayout::Colored
        })
    }

    /// The surface layout in use.
    pub fn surface_layout(&self) -> SurfaceLayout {
        self.surface.layout()
    }

    /// Evaluate the surface integral with `layout` from the next plan on: builds its kernels
    /// (and for [`SurfaceLayout::Gathered`] its trace and flux buffers, 3 NQE and 6 NQE vec4s
    /// per element, and the means, 2 vec4s per element) and records the plans again. Atomic is
    /// CUDA only.
    pub fn set_surface(&mut self, layout: SurfaceLayout) -> Result<()> {
        if layout == self.surface.layout() {
            return Ok(());
        }
        if layout != SurfaceLayout::Gathered && !self.color_order {
            return Err(Error::Invalid(format!(
                "the {} surface layout reads the faces per color, but the adaptation wrote \
                 them in left-element order only",
                layout.name()
            )));
        }
        let surface = match layout {
            SurfaceLayout::Colored => SurfaceKernels::Colored,
            SurfaceLayout::Atomic => SurfaceKernels::Atomic(
                self.rt
                    .kernel_variant(
                        "dg_surface",
                        Some("dg_surface_atomic"),
                        &for_kernel(&self.launches.constants, StrideUser::Surface, self.tables.p),
                    )
                    .map_err(|e| Error::Invalid(format!("the atomicAdd surface variant: {e}")))?,
            ),
            SurfaceLayout::Gathered => {
                SurfaceKernels::Gathered(Box::new(self.gathered_kernels(self.has_hanging_nodes())?))
            }
        };
        (self.step, self.rhs_plan, self.limit_plan) = self.launches.plans(&self.rt, &surface)?;
        self.surface = surface;
        Ok(())
    }

    /// Whether the mesh may have hanging nodes: not conforming, or adapted on the device.
    fn has_hanging_nodes(&self) -> bool {
        !self.launches.inputs.conforming || self.launches.device_counts
    }

    /// Under the gathered layout, on a mesh with hanging nodes, build its kernels again to lift
    /// split sides (`dg_volume`'s HANGING) when they were built for a conforming mesh; whether
    /// it did (the plans must then be recorded again).
    fn lift_hanging_nodes(&mut self) -> Result<bool> {
        let conforming_lift = matches!(&self.surface, SurfaceKernels::Gathered(g) if !g.hanging);
        let rebuild = conforming_lift && self.has_hanging_nodes();
        if rebuild {
            self.surface = SurfaceKernels::Gathered(Box::new(self.gathered_kernels(true)?));
        }
        Ok(rebuild)
    }

    /// The gathered layout's kernels and buffers; `hanging`: for a mesh with hanging nodes.
    fn gathered_kernels(&self, hanging: bool) -> Result<Gathered> {
        let rt = &self.rt;
        let constants = &self.launches.constants;
        let nqe = self.tables.nqe();
        let slots = 3 * nqe * self.capacity.elements;
        let traces = rt.zeroed::<[f32; 4]>("dg edge traces", slots)?;
        let means =
            rt.zeroed::<[f32; 4]>("dg element means, hi and lo", 2 * self.capacity.elements)?;
        // A plane per side, and one per side for the second half of a side split at a hanging
        // node (cpu::FLUX_PLANES).
        let fluxes =
            rt.zeroed::<[f32; 4]>("dg edge fluxes", FLUX_PLANES * nqe * self.capacity.elements)?;
        let [inv_jac, inv_det, _, neighbors, _] = &self.mesh_buffers;
        let edges = &self.edges_by_left;
        let (regs, rhs, clock) = (&self.regs, &self.rhs, &self.clock);
        let [tables, case_buf, stages] = &self.data_buffers;
        let specs = gathered_specs(constants, self.tables.p, hanging);
        let volume_args = args![
            *regs,
            *rhs,
            *tables,
            *inv_jac,
            *inv_det,
            fluxes,
            *clock,
            *stages,
            self.regs_lo,
            self.launches.records,
            *neighbors
        ];
        let records = &self.launches.records;
        // Built in parallel (Runtime::kernel_list), like the step's kernels.
        let mut kernels = rt.kernel_list(&specs)?.into_iter();
        let mut next = || {
            kernels
                .next()
                .ok_or_else(|| Error::Gpu("gathered layout: a kernel is missing".into()))
        };
        let (trace, flux, volume) = (next()?, next()?, next()?);
        let volume_stage = next().ok();
        Ok(Gathered {
            trace: Bound::new(
                trace,
                &args![*regs, *tables, traces, self.regs_lo, means, *records],
            ),
            flux: Bound::new(
                flux,
                &args![traces, fluxes, *tables, *edges, *case_buf, *clock, means, *regs, *records],
            ),
            hanging,
            volume: Bound::new(volume, &volume_args),
            volume_stage: volume_stage.map(|k| Bound::new(k, &volume_args)),
        })
    }
}

/// `faces` (in color order) in left-element order, a left element's faces in color order
/// (a stable sort): `dg_flux`'s order, as `amr_faces` and `amr_permute` write it on the
/// device. The colors do not matter to its one launch, and a warp's left sides become
/// neighbouring slots: on an H200, `dg_flux` over an adapted mesh of 240k elements took 1.16x
/// its time in this order with the faces in color order.
pub fn edges_by_left(faces: &[DgEdge]) -> Vec<DgEdge> {
    let mut by_left = faces.to_vec();
    by_left.sort_by_key(|e| e.left);
    by_left
}

/// A step count as plan repeats.
fn repeats(steps: usize) -> Result<u32> {
    u32::try_from(steps)
        .map_err(|_| Error::Invalid(format!("{steps} steps in one batch is too many")))
}

/// The GPU form of a stage: with the limiter on, the first output goes to the scratch register
/// and `dg_limit` writes the limited state into the stage's register.
fn gpu_stage(s: &Stage, limiter: bool) -> GpuStage {
    let (a2, b2, dst2) = s
        .second
        .map_or(([0.0; 4], 0.0, u32::MAX), |(a, b, d)| (a, b, d as u32));
    GpuStage {
        a: s.a.map(|v| v as f32),
        a2: a2.map(|v| v as f32),
        b: s.b as f32,
        b2: b2 as f32,
        dst: if limiter { SCRATCH } else { s.dst as u32 },
        dst2,
        lo_dst: s.dst as u32,
        pad: [0; 3],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn capacity_name(constants: &[(&'static str, f64)]) -> &'static str {
        constants
            .iter()
            .find(|(n, _)| [CAPACITY_CONSTANT, FIXED_CAPACITY_CONSTANT].contains(n))
            .map(|(n, _)| *n)
            .expect("a capacity")
    }

    /// A solver with room takes its capacity at launch in every kernel (its growths compile
    /// nothing); a fixed one keeps it compiled in only where that measured faster on CUDA:
    /// never in dg_flux (2x slower at p >= 3), in the lifting dg_volume and dg_trace up to
    /// p = 2, in the colored dg_volume up to p = 3.
    #[test]
    fn a_fixed_capacity_stays_compiled_in_only_where_faster() {
        let at_launch = [("NP", 3.0), (CAPACITY_CONSTANT, 96.0)];
        let fixed = [("NP", 3.0), (FIXED_CAPACITY_CONSTANT, 96.0)];
        let users = [
            StrideUser::Volume,
            StrideUser::VolumeLift,
            StrideUser::Trace,
            StrideUser::Flux,
            StrideUser::Surface,
            StrideUser::Other,
        ];
        for p in 0..=4 {
            for user in users {
                let kept = for_kernel(&at_launch, user, p);
                assert_eq!(capacity_name(&kept), CAPACITY_CONSTANT, "{user:?} p={p}");
                assert_eq!(kept[0], ("NP", 3.0));
            }
            let name = |user| capacity_name(&for_kernel(&fixed, user, p));
            // Compiled in up to order `most`, at launch above it.
            let fixed_to = |most: usize| {
                if p <= most {
                    FIXED_CAPACITY_CONSTANT
                } else {
                    CAPACITY_CONSTANT
                }
            };
            assert_eq!(name(StrideUser::Flux), CAPACITY_CONSTANT, "p={p}");
            assert_eq!(name(StrideUser::VolumeLift), fixed_to(2), "p={p}");
            assert_eq!(name(StrideUser::Trace), fixed_to(2), "p={p}");
            assert_eq!(name(StrideUser::Volume), fixed_to(3), "p={p}");
            assert_eq!(name(StrideUser::Surface), FIXED_CAPACITY_CONSTANT, "p={p}");
        }
    }

    /// dg_flux's order (what amr_faces and amr_permute must write): every face once, by left
    /// element, and a left element's faces in their colors' order (the stable sort keeps it).
    #[test]
    fn edges_by_left_sorts_by_left_element_and_keeps_the_color_order() {
        let dm = crate::conformance::dg::adapted_mesh(&crate::conformance::dg::periodic_mesh(), 3)
            .expect("adapted mesh");
        let faces = dm.gpu_edges();
        let color_of = |j: usize| dm.color_offsets.partition_point(|&o| o <= j) - 1;
        let by_left = edges_by_left(&faces);
        assert_eq!(by_left.len(), faces.len());
        let key = |e: &DgEdge| (e.left, e.right, e.info);
        let place: std::collections::HashMap<_, usize> =
            faces.iter().enumerate().map(|(j, e)| (key(e), j)).collect();
        assert_eq!(
            place.len(),
            faces.len(),
            "faces are told apart by left, right, info"
        );
        let colors: Vec<usize> = by_left.iter().map(|e| color_of(place[&key(e)])).collect();
        for k in 1..by_left.len() {
            let (a, b) = (&by_left[k - 1], &by_left[k]);
            assert!(
                a.left < b.left || (a.left == b.left && colors[k - 1] < colors[k]),
                "faces {} and {k}: left {} color {}, left {} color {}",
                k - 1,
                a.left,
                colors[k - 1],
                b.left,
                colors[k]
            );
        }
    }
}
