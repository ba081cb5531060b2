//! wgpu driver of the DG solver: the kernels `dg_volume`, `dg_surface` (one dispatch per edge
//! color), `dg_stage`, `dg_limit`, `dg_local_dt` + min-reduction + `dg_time`, recorded many
//! steps per submit; the time step and the clock stay on the GPU, the host reads only for
//! output. Each kernel has its f64 twin in [`super::cpu`] / [`super::rk`].
//!
//! Registers: R0 = U^n, R1..R3 stage states (see [`super::rk`]), R4 = the unlimited output of a
//! stage when the limiter is on (the limiter reads R4 and writes the stage's register, so
//! neighbours are always read before they are limited). All registers and the rhs use the
//! c[eq][k][element] layout.

use super::basis::BasisTables;
use super::case::StateFn;
use super::euler::{NumericalFlux, State};
use super::mesh::{DgEdge, DgMesh};
use super::rk::{self, Stage};
use crate::error::{Error, Result};
use crate::gpu::buffers::{bind_buffers, storage_from, storage_layout, storage_zeroed, Readback};
use crate::gpu::context::GpuContext;
use crate::gpu::dispatch::{range_layout, ItemRange, RangeSet};
use crate::gpu::legacy_reduce::MinReduction;
use crate::gpu::shaders::compute_pipeline;
use crate::gpu::timing::PassTimer;
use crate::gpu::Backend;
use crate::mesh::NO_ELEMENT;

/// Registers on the GPU: the scheme's four plus the limiter's scratch.
pub(crate) const GPU_REGISTERS: usize = rk::REGISTERS + 1;
pub(crate) const SCRATCH: u32 = rk::REGISTERS as u32;

/// Mirrors `Stage` in shaders/dg_stage.wgsl and shaders/cuda/dg_stage.cu (48 bytes).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, bytemuck::Pod, bytemuck::Zeroable)]
pub(crate) struct GpuStage {
    a: [f32; 4],
    a2: [f32; 4],
    b: f32,
    b2: f32,
    dst: u32,
    dst2: u32,
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

/// The GPU clock after a batch of steps.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Clock {
    pub t: f64,
    pub dt: f64,
    pub steps: u64,
}

/// The host-side data of the DG kernels for one mesh, order and configuration, shared by the
/// wgpu driver ([`GpuDg`]) and the CUDA one (`crate::cuda::dg::CudaDg`): the same buffers and
/// the same launch ranges on both backends.
pub(crate) struct DgInputs {
    /// [`BasisTables::packed`].
    pub tables: Vec<f32>,
    /// (xi_x, xi_y, eta_x, eta_y) per element.
    pub inv_jac: Vec<[f32; 4]>,
    /// 1 / det J per element.
    pub inv_det: Vec<f32>,
    /// Smallest height per element (CFL).
    pub heights: Vec<f32>,
    /// Face neighbours ([`NO_ELEMENT`]: none), w unused.
    pub neighbors: Vec<[u32; 4]>,
    pub edges: Vec<DgEdge>,
    /// The case function's parameters (two vec4), then the inflow states, then a zero.
    pub case_data: Vec<[f32; 4]>,
    /// The scheme's stages in GPU form.
    pub stages: Vec<GpuStage>,
    /// Volume: one range per stage (pad = source register).
    pub volume_ranges: Vec<ItemRange>,
    /// Surface: per stage, one range per color (color = bits of the stage time fraction,
    /// pad = source register); index `stage * colors + color`.
    pub surface_ranges: Vec<ItemRange>,
    /// Stage update: one range per stage (count = DOFs per register, color = stage index).
    pub stage_ranges: Vec<ItemRange>,
    /// Limiter: one range per stage, plus a last one (R4 -> R0, slope on) for `limit_once`.
    pub limit_ranges: Vec<ItemRange>,
    /// Time kernel: phase 0 (step start), phase 1 (step end).
    pub time_ranges: Vec<ItemRange>,
}

impl DgInputs {
    pub(crate) fn new(mesh: &DgMesh, tables: &BasisTables, cfg: &GpuConfig) -> Result<DgInputs> {
        let ne = mesh.num_elements;
        let ndof = 4 * tables.np * ne;
        if ne == 0 {
            return Err(Error::Invalid("the DG mesh has no elements".into()));
        }
        if cfg.states.len() > 255 {
            return Err(Error::Invalid("at most 255 inflow states".into()));
        }
        let inv_jac: Vec<[f32; 4]> = mesh
            .inv_jacobian
            .iter()
            .map(|g| g.map(|v| v as f32))
            .collect();
        let inv_det: Vec<f32> = mesh.det.iter().map(|d| (1.0 / d) as f32).collect();
        let heights: Vec<f32> = mesh.min_height.iter().map(|&h| h as f32).collect();
        let neighbors: Vec<[u32; 4]> = mesh
            .neighbors
            .iter()
            .map(|n| {
                let f = |o: Option<usize>| o.map_or(NO_ELEMENT, |v| v as u32);
                [f(n[0]), f(n[1]), f(n[2]), NO_ELEMENT]
            })
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
        let ne32 = ne as u32;
        let volume_ranges = stages
            .iter()
            .map(|s| ItemRange {
                first: 0,
                count: ne32,
                color: 0,
                pad: s.src as u32,
            })
            .collect();
        let nc = mesh.num_colors();
        let mut surface_ranges = Vec::with_capacity(stages.len() * nc);
        for s in &stages {
            for c in 0..nc {
                surface_ranges.push(ItemRange {
                    first: mesh.color_offsets[c] as u32,
                    count: (mesh.color_offsets[c + 1] - mesh.color_offsets[c]) as u32,
                    color: (s.c as f32).to_bits(),
                    pad: s.src as u32,
                });
            }
        }
        let stage_ranges = (0..stages.len())
            .map(|i| ItemRange {
                first: 0,
                count: ndof as u32,
                color: i as u32,
                pad: 0,
            })
            .collect();
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
            edges: mesh.gpu_edges(),
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

/// The clock words the host writes: [t, dt, t_end, fixed_dt, cfl, steps, 0, 0].
pub(crate) fn clock_words(t: f64, t_end: f64, fixed_dt: f64, cfl: f64) -> [f32; 8] {
    [
        t as f32,
        0.0,
        t_end as f32,
        fixed_dt as f32,
        cfl as f32,
        0.0,
        0.0,
        0.0,
    ]
}

/// The clock words `limit_once` writes: the limiter skips work when dt = 0 (a finished run),
/// so give it a nonzero dt.
pub(crate) const LIMIT_CLOCK: [f32; 8] = [0.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0];

/// The clock read back from its words.
pub(crate) fn clock_from_words(c: &[f32]) -> Result<Clock> {
    if c.len() < 6 {
        return Err(Error::Gpu(format!("clock of {} words", c.len())));
    }
    Ok(Clock {
        t: c[0] as f64,
        dt: c[1] as f64,
        steps: c[5] as u64,
    })
}

/// The DG solver's buffers and pipelines for one mesh and order.
pub struct GpuDg {
    pub num_elements: usize,
    pub np: usize,
    /// Unknowns per register: 4 np ne.
    pub ndof: usize,
    pub num_colors: usize,
    pub num_stages: usize,
    limiter: bool,
    cfl: f64,
    fixed_dt: f64,
    regs: wgpu::Buffer,
    rhs: wgpu::Buffer,
    clock: wgpu::Buffer,
    volume: wgpu::ComputePipeline,
    surface: wgpu::ComputePipeline,
    stage: wgpu::ComputePipeline,
    limit: wgpu::ComputePipeline,
    local_dt: wgpu::ComputePipeline,
    time: wgpu::ComputePipeline,
    volume_bg: wgpu::BindGroup,
    surface_bg: wgpu::BindGroup,
    stage_bg: wgpu::BindGroup,
    limit_bg: wgpu::BindGroup,
    local_dt_bg: wgpu::BindGroup,
    time_bg: wgpu::BindGroup,
    volume_ranges: RangeSet,
    surface_ranges: RangeSet,
    stage_ranges: RangeSet,
    limit_ranges: RangeSet,
    element_range: RangeSet,
    time_ranges: RangeSet,
    reduction: MinReduction,
    readback: Readback,
}

/// Which kernel a pass of [`GpuDg::advance_timed`] ran (for per-kernel timings).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kernel {
    Volume,
    Surface,
    Stage,
    Limit,
    TimeStep,
}

impl GpuDg {
    pub fn new(
        ctx: &GpuContext,
        mesh: &DgMesh,
        tables: &BasisTables,
        cfg: &GpuConfig,
    ) -> Result<GpuDg> {
        let inputs = DgInputs::new(mesh, tables, cfg)?;
        let ne = mesh.num_elements;
        let np = tables.np;
        let ndof = 4 * np * ne;
        let dev = &ctx.device;
        let rl = range_layout(dev);
        let constants: Vec<(&str, f64)> = vec![
            ("GAMMA", super::euler::GAMMA),
            ("FLUX", cfg.flux.id() as f64),
            ("CASE_FN", cfg.state_fn.id() as f64),
            ("NP", np as f64),
            ("NQ", tables.nq() as f64),
            ("NQE", tables.nqe() as f64),
            ("NE", ne as f64),
        ];
        let mut dt_constants = constants.clone();
        dt_constants.push(("ORDER", tables.p as f64));

        let regs = storage_zeroed::<f32>(ctx, "dg registers", GPU_REGISTERS * ndof)?;
        let rhs = storage_zeroed::<f32>(ctx, "dg rhs", ndof)?;
        let clock = storage_zeroed::<f32>(ctx, "dg clock", 8)?;
        let table_buf = storage_from(ctx, "dg basis tables", &inputs.tables)?;
        let inv_jac = storage_from(ctx, "dg inverse jacobians", &inputs.inv_jac)?;
        let inv_det = storage_from(ctx, "dg 1/det J", &inputs.inv_det)?;
        let heights = storage_from(ctx, "dg min heights", &inputs.heights)?;
        let neighbors = storage_from(ctx, "dg neighbours", &inputs.neighbors)?;
        let edges = storage_from(ctx, "dg edges", &inputs.edges)?;
        let case_buf = storage_from(ctx, "dg case data", &inputs.case_data)?;
        let local_dt_buf = storage_zeroed::<f32>(ctx, "dg local dt", ne)?;
        let reduction = MinReduction::new(ctx, &local_dt_buf, ne as u32)?;

        let vol_l = storage_layout(dev, "dg volume", &[true, false, true, true]);
        let surf_l = storage_layout(
            dev,
            "dg surface",
            &[true, false, true, true, true, true, true],
        );
        let stage_l = storage_layout(dev, "dg stage", &[false, true, true, true]);
        let limit_l = storage_layout(dev, "dg limit", &[false, true, true, true]);
        let dt_l = storage_layout(dev, "dg local dt", &[true, true, false]);
        let time_l = storage_layout(dev, "dg time", &[true, false]);
        let volume = compute_pipeline(dev, "dg_volume", &[&vol_l, &rl], &constants)?;
        let surface = compute_pipeline(dev, "dg_surface", &[&surf_l, &rl], &constants)?;
        let stage = compute_pipeline(dev, "dg_stage", &[&stage_l, &rl], &[])?;
        let limit = compute_pipeline(dev, "dg_limit", &[&limit_l, &rl], &constants)?;
        let local_dt = compute_pipeline(dev, "dg_local_dt", &[&dt_l, &rl], &dt_constants)?;
        let time = compute_pipeline(dev, "dg_time", &[&time_l, &rl], &[])?;

        let stage_buf = storage_from(ctx, "dg stages", &inputs.stages)?;

        let volume_bg = bind_buffers(
            dev,
            "dg volume",
            &vol_l,
            &[&regs, &rhs, &table_buf, &inv_jac],
        );
        let surface_bg = bind_buffers(
            dev,
            "dg surface",
            &surf_l,
            &[&regs, &rhs, &table_buf, &edges, &inv_det, &case_buf, &clock],
        );
        let stage_bg = bind_buffers(
            dev,
            "dg stage",
            &stage_l,
            &[&regs, &rhs, &clock, &stage_buf],
        );
        let limit_bg = bind_buffers(
            dev,
            "dg limit",
            &limit_l,
            &[&regs, &table_buf, &neighbors, &clock],
        );
        let local_dt_bg =
            bind_buffers(dev, "dg local dt", &dt_l, &[&regs, &heights, &local_dt_buf]);
        let time_bg = bind_buffers(dev, "dg time", &time_l, &[reduction.result(), &clock]);

        let nc = mesh.num_colors();
        let num_stages = inputs.stages.len();
        let volume_ranges = RangeSet::new(ctx, &rl, inputs.volume_ranges)?;
        let surface_ranges = RangeSet::new(ctx, &rl, inputs.surface_ranges)?;
        let stage_ranges = RangeSet::new(ctx, &rl, inputs.stage_ranges)?;
        let limit_ranges = RangeSet::new(ctx, &rl, inputs.limit_ranges)?;
        let element_range = RangeSet::single(ctx, &rl, ne as u32)?;
        let time_ranges = RangeSet::new(ctx, &rl, inputs.time_ranges)?;
        Ok(GpuDg {
            num_elements: ne,
            np,
            ndof,
            num_colors: nc,
            num_stages,
            limiter: cfg.limiter,
            cfl: cfg.cfl,
            fixed_dt: cfg.fixed_dt.unwrap_or(0.0),
            regs,
            rhs,
            clock,
            volume,
            surface,
            stage,
            limit,
            local_dt,
            time,
            volume_bg,
            surface_bg,
            stage_bg,
            limit_bg,
            local_dt_bg,
            time_bg,
            volume_ranges,
            surface_ranges,
            stage_ranges,
            limit_ranges,
            element_range,
            time_ranges,
            reduction,
            readback: Readback::new(),
        })
    }

    /// Upload coefficients (c[eq][k][i], f64) into register `reg`.
    fn write_register(&self, ctx: &GpuContext, reg: u32, c: &[f64]) -> Result<()> {
        if c.len() != self.ndof {
            return Err(Error::Invalid(format!(
                "expected {} coefficients, got {}",
                self.ndof,
                c.len()
            )));
        }
        let v: Vec<f32> = c.iter().map(|&x| x as f32).collect();
        let offset = (reg as usize * self.ndof * 4) as u64;
        ctx.queue
            .write_buffer(&self.regs, offset, bytemuck::cast_slice(&v));
        Ok(())
    }

    /// Set the solution U^n (register 0).
    pub fn set_solution(&self, ctx: &GpuContext, c: &[f64]) -> Result<()> {
        self.write_register(ctx, 0, c)
    }

    /// Read the solution U^n.
    pub fn solution(&mut self, ctx: &GpuContext) -> Result<Vec<f64>> {
        let v: Vec<f32> = self.readback.read(ctx, &self.regs, 0, self.ndof)?;
        Ok(v.into_iter().map(f64::from).collect())
    }

    /// Reset the clock: time t, run end t_end, no steps taken.
    pub fn set_clock(&self, ctx: &GpuContext, t: f64, t_end: f64) {
        let c = clock_words(t, t_end, self.fixed_dt, self.cfl);
        ctx.queue
            .write_buffer(&self.clock, 0, bytemuck::cast_slice(&c));
    }

    /// Read the clock.
    pub fn clock(&mut self, ctx: &GpuContext) -> Result<Clock> {
        let c: Vec<f32> = self.readback.read(ctx, &self.clock, 0, 8)?;
        clock_from_words(&c)
    }

    fn record_rhs(
        &self,
        ctx: &GpuContext,
        pass: &mut wgpu::ComputePass<'_>,
        stage: usize,
    ) -> Result<()> {
        self.volume_ranges
            .dispatch_one(ctx, pass, &self.volume, &self.volume_bg, stage)?;
        for c in 0..self.num_colors {
            self.surface_ranges.dispatch_one(
                ctx,
                pass,
                &self.surface,
                &self.surface_bg,
                stage * self.num_colors + c,
            )?;
        }
        Ok(())
    }

    fn record_time(&self, pass: &mut wgpu::ComputePass<'_>, phase: usize) {
        pass.set_pipeline(&self.time);
        pass.set_bind_group(0, &self.time_bg, &[]);
        self.time_ranges.bind(pass, phase);
        pass.dispatch_workgroups(1, 1, 1);
    }

    fn record_dt(&self, ctx: &GpuContext, pass: &mut wgpu::ComputePass<'_>) -> Result<()> {
        self.element_range
            .dispatch_one(ctx, pass, &self.local_dt, &self.local_dt_bg, 0)?;
        self.reduction.record(ctx, pass)?;
        self.record_time(pass, 0);
        Ok(())
    }

    fn record_stage(
        &self,
        ctx: &GpuContext,
        pass: &mut wgpu::ComputePass<'_>,
        s: usize,
    ) -> Result<()> {
        self.stage_ranges
            .dispatch_one(ctx, pass, &self.stage, &self.stage_bg, s)?;
        if self.limiter {
            self.limit_ranges
                .dispatch_one(ctx, pass, &self.limit, &self.limit_bg, s)?;
        }
        Ok(())
    }

    /// The right-hand side of `c` at time t (for the comparison with the CPU reference).
    pub fn eval_rhs(&mut self, ctx: &GpuContext, c: &[f64], t: f64) -> Result<Vec<f64>> {
        self.set_solution(ctx, c)?;
        self.set_clock(ctx, t, t);
        let mut enc = ctx
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("dg rhs"),
            });
        {
            let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("dg rhs"),
                timestamp_writes: None,
            });
            // Stage 0 of every scheme evaluates register 0 at time t.
            self.record_rhs(ctx, &mut pass, 0)?;
        }
        ctx.queue.submit([enc.finish()]);
        let v: Vec<f32> = self.readback.read(ctx, &self.rhs, 0, self.ndof)?;
        Ok(v.into_iter().map(f64::from).collect())
    }

    /// Apply the slope + positivity limiter once to `c` (for the comparison with the CPU).
    pub fn limit_once(&mut self, ctx: &GpuContext, c: &[f64]) -> Result<Vec<f64>> {
        self.write_register(ctx, SCRATCH, c)?;
        ctx.queue
            .write_buffer(&self.clock, 0, bytemuck::cast_slice(&LIMIT_CLOCK));
        let mut enc = ctx
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("dg limit"),
            });
        {
            let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("dg limit"),
                timestamp_writes: None,
            });
            let last = self.limit_ranges.len() - 1;
            self.limit_ranges
                .dispatch_one(ctx, &mut pass, &self.limit, &self.limit_bg, last)?;
        }
        ctx.queue.submit([enc.finish()]);
        self.solution(ctx)
    }

    /// Record and submit `steps` full time steps (dt from the GPU reduction or fixed) in one
    /// compute pass and one submit; steps past t_end do nothing. Does not wait.
    pub fn advance(&mut self, ctx: &GpuContext, steps: usize) -> Result<()> {
        let mut enc = ctx
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("dg steps"),
            });
        {
            let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("dg steps"),
                timestamp_writes: None,
            });
            for _ in 0..steps {
                self.record_dt(ctx, &mut pass)?;
                for s in 0..self.num_stages {
                    self.record_rhs(ctx, &mut pass, s)?;
                    self.record_stage(ctx, &mut pass, s)?;
                }
                self.record_time(&mut pass, 1);
            }
        }
        ctx.queue.submit([enc.finish()]);
        Ok(())
    }

    /// Like [`GpuDg::advance`], with one compute pass per kernel group so `timer` can time
    /// them; returns the kernel of each pass in order.
    pub fn advance_timed(
        &mut self,
        ctx: &GpuContext,
        steps: usize,
        timer: &mut PassTimer,
    ) -> Result<Vec<Kernel>> {
        let mut enc = ctx
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("dg timed steps"),
            });
        let mut kinds = Vec::new();
        for _ in 0..steps {
            {
                let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
                    label: Some("dg dt"),
                    timestamp_writes: timer.next_pass(),
                });
                self.record_dt(ctx, &mut pass)?;
            }
            kinds.push(Kernel::TimeStep);
            for s in 0..self.num_stages {
                {
                    let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
                        label: Some("dg volume"),
                        timestamp_writes: timer.next_pass(),
                    });
                    self.volume_ranges.dispatch_one(
                        ctx,
                        &mut pass,
                        &self.volume,
                        &self.volume_bg,
                        s,
                    )?;
                }
                kinds.push(Kernel::Volume);
                {
                    let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
                        label: Some("dg surface"),
                        timestamp_writes: timer.next_pass(),
                    });
                    for c in 0..self.num_colors {
                        self.surface_ranges.dispatch_one(
                            ctx,
                            &mut pass,
                            &self.surface,
                            &self.surface_bg,
                            s * self.num_colors + c,
                        )?;
                    }
                }
                kinds.push(Kernel::Surface);
                {
                    let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
                        label: Some("dg stage"),
                        timestamp_writes: timer.next_pass(),
                    });
                    self.stage_ranges.dispatch_one(
                        ctx,
                        &mut pass,
                        &self.stage,
                        &self.stage_bg,
                        s,
                    )?;
                }
                kinds.push(Kernel::Stage);
                if self.limiter {
                    let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
                        label: Some("dg limit"),
                        timestamp_writes: timer.next_pass(),
                    });
                    self.limit_ranges.dispatch_one(
                        ctx,
                        &mut pass,
                        &self.limit,
                        &self.limit_bg,
                        s,
                    )?;
                    kinds.push(Kernel::Limit);
                }
            }
            {
                let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
                    label: Some("dg time"),
                    timestamp_writes: timer.next_pass(),
                });
                self.record_time(&mut pass, 1);
            }
            kinds.push(Kernel::TimeStep);
        }
        timer.resolve(&mut enc);
        ctx.queue.submit([enc.finish()]);
        Ok(kinds)
    }
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
    }
}

/// A DG solver on a compute device: the backend boundary of this workload. Implemented by
/// [`WgpuDg`] (a [`GpuDg`] with its context) and, with feature `cuda`, by
/// `crate::cuda::dg::CudaDg`; the `dg` command, its benchmark and the parity checks only use
/// this trait.
pub trait DgDevice {
    /// The device the solver runs on (adapter or CUDA device name).
    fn device_name(&self) -> String;
    /// Set the solution U^n (register 0), coefficients c[eq][k][i].
    fn set_solution(&mut self, c: &[f64]) -> Result<()>;
    /// Read the solution U^n (waits for queued work).
    fn solution(&mut self) -> Result<Vec<f64>>;
    /// Reset the clock: time t, run end t_end, no steps taken.
    fn set_clock(&mut self, t: f64, t_end: f64) -> Result<()>;
    /// Read the clock (waits for queued work).
    fn clock(&mut self) -> Result<Clock>;
    /// Queue `steps` full time steps (steps past t_end do nothing); does not wait.
    fn advance(&mut self, steps: usize) -> Result<()>;
    /// Wait for all queued work.
    fn wait(&mut self) -> Result<()>;
    /// The right-hand side of `c` at time t (for the comparison with the CPU reference).
    fn eval_rhs(&mut self, c: &[f64], t: f64) -> Result<Vec<f64>>;
    /// Apply the slope + positivity limiter once to `c`, writing the result into register 0,
    /// and return it.
    fn limit_once(&mut self, c: &[f64]) -> Result<Vec<f64>>;
    /// Take `steps` steps timing each kernel group on the device: (kernel, seconds) per timed
    /// pass in order, or `None` when the device cannot time kernels.
    fn time_kernels(&mut self, steps: usize) -> Result<Option<Vec<(Kernel, f64)>>>;
    /// Accumulate the surface term with one atomicAdd launch over all edges instead of one
    /// launch per color (CUDA only: WGSL has no float atomics).
    fn set_atomic_surface(&mut self, on: bool) -> Result<()> {
        if on {
            return Err(Error::Invalid(
                "the atomicAdd surface variant needs --backend cuda (WGSL has no float atomics)"
                    .into(),
            ));
        }
        Ok(())
    }
}

/// A [`GpuDg`] with the wgpu context it runs on, behind [`DgDevice`].
pub struct WgpuDg<'a> {
    pub ctx: &'a GpuContext,
    pub dg: GpuDg,
}

impl<'a> WgpuDg<'a> {
    pub fn new(
        ctx: &'a GpuContext,
        mesh: &DgMesh,
        tables: &BasisTables,
        cfg: &GpuConfig,
    ) -> Result<WgpuDg<'a>> {
        Ok(WgpuDg {
            ctx,
            dg: GpuDg::new(ctx, mesh, tables, cfg)?,
        })
    }
}

impl DgDevice for WgpuDg<'_> {
    fn device_name(&self) -> String {
        self.ctx.info.name.clone()
    }
    fn set_solution(&mut self, c: &[f64]) -> Result<()> {
        self.dg.set_solution(self.ctx, c)
    }
    fn solution(&mut self) -> Result<Vec<f64>> {
        self.dg.solution(self.ctx)
    }
    fn set_clock(&mut self, t: f64, t_end: f64) -> Result<()> {
        self.dg.set_clock(self.ctx, t, t_end);
        Ok(())
    }
    fn clock(&mut self) -> Result<Clock> {
        self.dg.clock(self.ctx)
    }
    fn advance(&mut self, steps: usize) -> Result<()> {
        self.dg.advance(self.ctx, steps)
    }
    fn wait(&mut self) -> Result<()> {
        self.ctx.wait()
    }
    fn eval_rhs(&mut self, c: &[f64], t: f64) -> Result<Vec<f64>> {
        self.dg.eval_rhs(self.ctx, c, t)
    }
    fn limit_once(&mut self, c: &[f64]) -> Result<Vec<f64>> {
        self.dg.limit_once(self.ctx, c)
    }
    fn time_kernels(&mut self, steps: usize) -> Result<Option<Vec<(Kernel, f64)>>> {
        let passes = steps * (2 + 4 * self.dg.num_stages);
        let mut timer = PassTimer::new(self.ctx, passes as u32);
        if !timer.uses_timestamps() {
            return Ok(None);
        }
        timer.reset();
        let kinds = self.dg.advance_timed(self.ctx, steps, &mut timer)?;
        let times = timer.pass_seconds(self.ctx)?;
        Ok(Some(kinds.into_iter().zip(times).collect()))
    }
}

/// A DG solver for `mesh` on `backend` (wgpu or CUDA), behind [`DgDevice`].
pub fn new_dg_device<'a>(
    backend: &'a Backend,
    mesh: &DgMesh,
    tables: &BasisTables,
    cfg: &GpuConfig,
) -> Result<Box<dyn DgDevice + 'a>> {
    match crate::gpu::legacy(backend) {
        crate::gpu::Device::Wgpu(ctx) => Ok(Box::new(WgpuDg::new(ctx, mesh, tables, cfg)?)),
        #[cfg(feature = "cuda")]
        crate::gpu::Device::Cuda(dev) => Ok(Box::new(crate::cuda::dg::CudaDg::new(
            dev, mesh, tables, cfg,
        )?)),
    }
}
