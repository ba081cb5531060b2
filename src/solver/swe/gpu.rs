//! The wgpu host driver: buffers, pipelines and the per-step command sequence
//!
//! flux pass (one dispatch per edge color, or the cell-centred gather) → local Δt per cell →
//! GPU min-reduction → time kernel (Δt = min(Δt_CFL, t_end − t), t advanced on the GPU) →
//! cell update (reads Δt from the GPU),
//!
//! recorded many steps per submit; the host reads back only the small control block (time,
//! steps, counters) between batches and the state when it prints or saves.
//!
//! Layout (f32): cells are two vec4 per cell, (h1, q1x, q1y, h2) and (q2x, q2y, H, |V|);
//! accumulators are two vec4 per cell, the 6 update components plus the CFL sum.

use super::mesh::SweMesh;
use super::{Counters, Physics, Scheme};
use crate::error::{Error, Result};
use crate::gpu::buffers::{bind_buffers, storage_from, storage_layout, storage_zeroed, Readback};
use crate::gpu::context::GpuContext;
use crate::gpu::dispatch::{range_layout, RangeSet};
use crate::gpu::legacy_reduce::MinReduction;
use crate::gpu::shaders::compute_pipeline;
use crate::gpu::timing::PassTimer;
use crate::gpu::Backend;

/// Mirrors `Control` in shaders/common/swe_control.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
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
    pub pad: u32,
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
        }
    }
}

/// How the fluxes are gathered into the cells.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize)]
pub enum FluxLayout {
    /// One thread per edge, one dispatch per edge color, contributions to both cells.
    #[default]
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
            FluxLayout::ColoredScatter => "edge-scatter",
            FluxLayout::CellGather => "cell-gather",
            FluxLayout::AtomicScatter => "atomic-scatter",
        }
    }
}

/// A two-layer shallow-water solver on a compute device: the backend boundary of this
/// workload. Implemented by [`GpuSolver`] (wgpu) and, with feature `cuda`, by
/// `crate::cuda::swe::CudaSolver`; the driver and the benchmark only use this trait.
pub trait SweDevice {
    /// The device the solver runs on (adapter or CUDA device name).
    fn device_name(&self) -> String;
    /// The flux layout in use.
    fn flux_layout(&self) -> FluxLayout;
    /// Set the time the next steps stop at (the last step is clamped to hit it exactly).
    fn set_end_time(&mut self, t_end: f32) -> Result<()>;
    /// Queue `n` steps (steps past t_end are no-ops) without waiting for them.
    fn queue_steps(&mut self, n: u32) -> Result<()>;
    /// Take exactly `n` steps without a time clamp and wait for them.
    fn steps(&mut self, n: u32) -> Result<()>;
    /// Read the control block (time, last Δt, steps, counters).
    fn read_control(&mut self) -> Result<GpuControl>;
    /// The state, converted to f64 W = (h1, q1x, q1y, h2, q2x, q2y) per cell.
    fn read_state(&mut self) -> Result<Vec<[f64; 6]>>;
    /// Take `n` steps (no clamp), timing the flux pass and the rest of each step separately.
    fn time_steps(&mut self, n: u32) -> Result<KernelTimes>;
    /// Advance to `t_end` in batches of at most `max_batch` steps (see [`advance_device`]).
    fn advance(
        &mut self,
        t_end: f64,
        max_batch: u32,
        progress: &mut dyn FnMut(&GpuControl),
    ) -> Result<GpuControl> {
        advance_device(self, t_end, max_batch, progress)
    }
}

/// Advance `dev` to `t_end`, queueing batches of at most `max_batch` steps sized from the last
/// Δt; `progress(control)` is called after each batch. Errors when the time stops advancing or
/// becomes NaN (a blown-up solution).
pub fn advance_device<D: SweDevice + ?Sized>(
    dev: &mut D,
    t_end: f64,
    max_batch: u32,
    progress: &mut dyn FnMut(&GpuControl),
) -> Result<GpuControl> {
    let target = t_end as f32;
    dev.set_end_time(target)?;
    let mut ctl = dev.read_control()?;
    while ctl.t < target {
        let est = if ctl.last_dt > 0.0 {
            (((target - ctl.t) / ctl.last_dt).ceil() as u32).saturating_add(1)
        } else {
            1
        };
        dev.queue_steps(est.clamp(1, max_batch.max(1)))?;
        let next = dev.read_control()?;
        if !next.t.is_finite() || !next.dt.is_finite() || (next.t <= ctl.t && next.t < target) {
            return Err(Error::Gpu(format!(
                "the solution stopped advancing at t = {} after {} steps (dt = {}): \
                 it probably blew up (NaN); try a smaller CFL number",
                next.t, next.steps, next.dt
            )));
        }
        ctl = next;
        progress(&ctl);
    }
    Ok(ctl)
}

/// A solver for `mesh` on `backend` (wgpu or CUDA), behind [`SweDevice`].
#[allow(clippy::too_many_arguments)]
pub fn new_swe_device<'a>(
    backend: &'a Backend,
    mesh: &SweMesh,
    depth: &[f64],
    state: &[[f64; 6]],
    scheme: Scheme,
    phys: Physics,
    cfl: f64,
    layout: FluxLayout,
) -> Result<Box<dyn SweDevice + 'a>> {
    match crate::gpu::legacy(backend) {
        crate::gpu::Device::Wgpu(ctx) => Ok(Box::new(GpuSolver::new(
            ctx, mesh, depth, state, scheme, phys, cfl, layout,
        )?)),
        #[cfg(feature = "cuda")]
        crate::gpu::Device::Cuda(dev) => Ok(Box::new(crate::cuda::swe::CudaSolver::new(
            dev, mesh, depth, state, scheme, phys, cfl, layout,
        )?)),
    }
}

impl SweDevice for GpuSolver<'_> {
    fn device_name(&self) -> String {
        self.ctx.info.name.clone()
    }
    fn flux_layout(&self) -> FluxLayout {
        self.layout
    }
    fn set_end_time(&mut self, t_end: f32) -> Result<()> {
        self.set_t_end(t_end);
        Ok(())
    }
    fn queue_steps(&mut self, n: u32) -> Result<()> {
        self.submit_steps(n)
    }
    fn steps(&mut self, n: u32) -> Result<()> {
        self.run_steps(n)
    }
    fn read_control(&mut self) -> Result<GpuControl> {
        self.control()
    }
    fn read_state(&mut self) -> Result<Vec<[f64; 6]>> {
        self.state()
    }
    fn time_steps(&mut self, n: u32) -> Result<KernelTimes> {
        self.timed_steps(n)
    }
}

/// Seconds spent per kernel group, from timestamp queries (or wall clock without them).
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize)]
pub struct KernelTimes {
    /// The flux pass (all colors, or the gather kernel).
    pub flux: f64,
    /// Local Δt, reduction, time kernel and update.
    pub update: f64,
    /// True when measured with GPU timestamps.
    pub timestamps: bool,
}

/// A two-layer shallow-water run on the GPU.
pub struct GpuSolver<'a> {
    ctx: &'a GpuContext,
    n_cells: u32,
    layout: FluxLayout,
    cells: wgpu::Buffer,
    control: wgpu::Buffer,
    flux_pipeline: wgpu::ComputePipeline,
    flux_bind: wgpu::BindGroup,
    flux_ranges: RangeSet,
    dt_pipeline: wgpu::ComputePipeline,
    dt_bind: wgpu::BindGroup,
    time_pipeline: wgpu::ComputePipeline,
    time_bind: wgpu::BindGroup,
    update_pipeline: wgpu::ComputePipeline,
    update_bind: wgpu::BindGroup,
    cell_range: RangeSet,
    one_range: RangeSet,
    reduction: MinReduction,
    readback: Readback,
    _buffers: Vec<wgpu::Buffer>,
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

impl<'a> GpuSolver<'a> {
    /// Upload the mesh and initial state and build the pipelines (physical constants are baked
    /// in as WGSL override constants).
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        ctx: &'a GpuContext,
        mesh: &SweMesh,
        depth: &[f64],
        state: &[[f64; 6]],
        scheme: Scheme,
        phys: Physics,
        cfl: f64,
        layout: FluxLayout,
    ) -> Result<GpuSolver<'a>> {
        phys.validate()?;
        let n = mesh.num_cells();
        if depth.len() != n || state.len() != n {
            return Err(Error::Invalid(format!(
                "{n} cells but {} depths and {} states",
                depth.len(),
                state.len()
            )));
        }
        let dev = &ctx.device;
        let edges = storage_from(ctx, "swe edges", &mesh.gpu_edges())?;
        let cells = storage_from(
            ctx,
            "swe cells",
            &pack_cells(state, depth, &mesh.geom.areas),
        )?;
        let acc = storage_zeroed::<[f32; 4]>(ctx, "swe accumulators", 2 * n)?;
        let counters = storage_zeroed::<u32>(ctx, "swe counters", 8)?;
        let control = storage_from(
            ctx,
            "swe control",
            &[GpuControl {
                t_end: f32::MAX,
                ..Default::default()
            }],
        )?;
        let dt_local = storage_zeroed::<f32>(ctx, "swe local dt", n)?;
        let rl = range_layout(dev);
        let flux_consts = [
            ("GRAVITY", phys.g),
            ("DENSITY_RATIO", phys.r),
            ("DRY_TOL", phys.dry_tol),
            ("SCHEME", scheme.shader_id() as f64),
        ];
        let mut extra = Vec::new();
        let (flux_pipeline, flux_bind, flux_ranges) = match layout {
            FluxLayout::AtomicScatter => {
                return Err(Error::Invalid(
                    "the atomic-scatter flux layout needs float atomics: CUDA backend only \
                     (--backend cuda)"
                        .into(),
                ))
            }
            FluxLayout::ColoredScatter => {
                let l = storage_layout(dev, "swe edge flux", &[true, true, false, false]);
                let p = compute_pipeline(dev, "swe_edge_flux", &[&l, &rl], &flux_consts)?;
                let b = bind_buffers(dev, "swe edge flux", &l, &[&edges, &cells, &acc, &counters]);
                let r = RangeSet::from_offsets(ctx, &rl, &mesh.color_offsets)?;
                (p, b, r)
            }
            FluxLayout::CellGather => {
                let slots = storage_from(ctx, "swe cell edges", &mesh.cell_edge_slots())?;
                let l = storage_layout(dev, "swe cell gather", &[true, true, false, false, true]);
                let p = compute_pipeline(dev, "swe_cell_gather", &[&l, &rl], &flux_consts)?;
                let b = bind_buffers(
                    dev,
                    "swe cell gather",
                    &l,
                    &[&edges, &cells, &acc, &counters, &slots],
                );
                extra.push(slots);
                let r = RangeSet::single(ctx, &rl, n as u32)?;
                (p, b, r)
            }
        };
        let dt_layout = storage_layout(dev, "swe local dt", &[true, true, false]);
        let dt_pipeline =
            compute_pipeline(dev, "swe_local_dt", &[&dt_layout, &rl], &[("CFL", cfl)])?;
        let dt_bind = bind_buffers(dev, "swe local dt", &dt_layout, &[&cells, &acc, &dt_local]);
        let reduction = MinReduction::new(ctx, &dt_local, n as u32)?;
        let time_layout = storage_layout(dev, "swe time", &[true, false, false]);
        let time_pipeline = compute_pipeline(dev, "swe_time", &[&time_layout, &rl], &[])?;
        let time_bind = bind_buffers(
            dev,
            "swe time",
            &time_layout,
            &[reduction.result(), &control, &counters],
        );
        let update_layout = storage_layout(dev, "swe update", &[true, false, false, false]);
        let update_pipeline = compute_pipeline(
            dev,
            "swe_update",
            &[&update_layout, &rl],
            &[("DRY_TOL", phys.dry_tol)],
        )?;
        let update_bind = bind_buffers(
            dev,
            "swe update",
            &update_layout,
            &[&control, &cells, &acc, &counters],
        );
        let cell_range = RangeSet::single(ctx, &rl, n as u32)?;
        let one_range = RangeSet::single(ctx, &rl, 1)?;
        extra.extend([edges, acc, counters, dt_local]);
        Ok(GpuSolver {
            ctx,
            n_cells: n as u32,
            layout,
            cells,
            control,
            flux_pipeline,
            flux_bind,
            flux_ranges,
            dt_pipeline,
            dt_bind,
            time_pipeline,
            time_bind,
            update_pipeline,
            update_bind,
            cell_range,
            one_range,
            reduction,
            readback: Readback::new(),
            _buffers: extra,
        })
    }

    /// The flux layout in use.
    pub fn layout(&self) -> FluxLayout {
        self.layout
    }

    fn record_flux(&self, pass: &mut wgpu::ComputePass<'_>) -> Result<()> {
        self.flux_ranges
            .dispatch_all(self.ctx, pass, &self.flux_pipeline, &self.flux_bind)
    }

    fn record_update(&self, pass: &mut wgpu::ComputePass<'_>) -> Result<()> {
        self.cell_range
            .dispatch_all(self.ctx, pass, &self.dt_pipeline, &self.dt_bind)?;
        self.reduction.record(self.ctx, pass)?;
        pass.set_pipeline(&self.time_pipeline);
        pass.set_bind_group(0, &self.time_bind, &[]);
        self.one_range.bind(pass, 0);
        pass.dispatch_workgroups(1, 1, 1);
        self.cell_range
            .dispatch_all(self.ctx, pass, &self.update_pipeline, &self.update_bind)
    }

    /// Set the time the next steps stop at (the last step is clamped to hit it exactly).
    pub fn set_t_end(&self, t_end: f32) {
        self.ctx.queue.write_buffer(
            &self.control,
            std::mem::offset_of!(GpuControl, t_end) as u64,
            bytemuck::bytes_of(&t_end),
        );
    }

    /// Record and submit `n` steps in one command buffer (steps past t_end are no-ops).
    pub fn submit_steps(&self, n: u32) -> Result<()> {
        let mut enc = self
            .ctx
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("swe steps"),
            });
        {
            let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("swe steps"),
                timestamp_writes: None,
            });
            for _ in 0..n {
                self.record_flux(&mut pass)?;
                self.record_update(&mut pass)?;
            }
        }
        self.ctx.queue.submit([enc.finish()]);
        Ok(())
    }

    /// Take exactly `n` steps without a time clamp (t_end = f32::MAX).
    pub fn run_steps(&mut self, n: u32) -> Result<()> {
        self.set_t_end(f32::MAX);
        self.submit_steps(n)?;
        self.ctx.wait()
    }

    /// Read the control block (time, last Δt, steps, counters).
    pub fn control(&mut self) -> Result<GpuControl> {
        let v: Vec<GpuControl> = self.readback.read_all(self.ctx, &self.control, 1)?;
        Ok(v[0])
    }

    /// Advance to `t_end`, submitting batches of at most `max_batch` steps sized from the last
    /// Δt; `progress(control)` is called after each batch. Errors when the time stops
    /// advancing or becomes NaN (a blown-up solution).
    pub fn advance_to(
        &mut self,
        t_end: f64,
        max_batch: u32,
        mut progress: impl FnMut(&GpuControl),
    ) -> Result<GpuControl> {
        advance_device(self, t_end, max_batch, &mut progress)
    }

    /// The state, converted to f64 W = (h1, q1x, q1y, h2, q2x, q2y) per cell.
    pub fn state(&mut self) -> Result<Vec<[f64; 6]>> {
        let raw: Vec<[f32; 4]> =
            self.readback
                .read_all(self.ctx, &self.cells, 2 * self.n_cells as usize)?;
        Ok(unpack_cells(&raw))
    }

    /// Take `n` steps (no clamp), timing the flux pass and the rest of each step separately
    /// with timestamp queries (wall clock for both together without them).
    pub fn timed_steps(&mut self, n: u32) -> Result<KernelTimes> {
        self.set_t_end(f32::MAX);
        let mut timer = PassTimer::new(self.ctx, 2 * n.max(1));
        timer.reset();
        let mut enc = self
            .ctx
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("swe timed"),
            });
        for _ in 0..n {
            {
                let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
                    label: Some("swe flux"),
                    timestamp_writes: timer.next_pass(),
                });
                self.record_flux(&mut pass)?;
            }
            let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("swe update"),
                timestamp_writes: timer.next_pass(),
            });
            self.record_update(&mut pass)?;
        }
        timer.resolve(&mut enc);
        self.ctx.queue.submit([enc.finish()]);
        self.ctx.wait()?;
        let secs = timer.pass_seconds(self.ctx)?;
        if timer.uses_timestamps() {
            Ok(KernelTimes {
                flux: secs.iter().step_by(2).sum(),
                update: secs.iter().skip(1).step_by(2).sum(),
                timestamps: true,
            })
        } else {
            Ok(KernelTimes {
                flux: secs.first().copied().unwrap_or(0.0),
                update: 0.0,
                timestamps: false,
            })
        }
    }
}
