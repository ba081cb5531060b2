//! The DG Euler solver on CUDA: the same buffers, DOF layout (c[reg][eq][k][element]), launch
//! ranges ([`DgInputs`]) and per-step sequence as [`crate::solver::dg::gpu::GpuDg`] (see its
//! module doc), with the CUDA twins of the WGSL kernels launched on one stream:
//!
//! local Δt → min-reduction → time (phase 0), then per RK stage: volume → surface (one launch
//! per edge color) → stage update → limiter, then time (phase 1);
//!
//! many steps queued per batch; launches of one stream run in order, so color c + 1 sees the
//! writes of color c without extra synchronization. The WGSL override constants (order, NP,
//! quadrature sizes, flux, case function) are `-D` defines.

use super::kernels::CudaMinReduction;
use super::{define_f32, define_u32, driver_err, item_range, launch_for, CudaDevice};
use crate::error::{Error, Result};
use crate::gpu::dispatch::ItemRange;
use crate::solver::dg::basis::BasisTables;
use crate::solver::dg::gpu::{
    clock_from_words, clock_words, Clock, DgDevice, DgInputs, GpuConfig, GpuStage, Kernel,
    GPU_REGISTERS, LIMIT_CLOCK, SCRATCH,
};
use crate::solver::dg::mesh::{DgEdge, DgMesh};
use cudarc::driver::{
    sys, CudaEvent, CudaFunction, CudaSlice, DeviceRepr, LaunchConfig, PushKernelArg,
};

// SAFETY: plain #[repr(C)] Pod structs of u32/f32, laid out as `DgEdge` in
// shaders/cuda/dg_surface.cu and `Stage` in shaders/cuda/dg_stage.cu.
unsafe impl DeviceRepr for DgEdge {}
unsafe impl DeviceRepr for GpuStage {}

/// One block of one thread (the time kernel).
const SINGLE: LaunchConfig = LaunchConfig {
    grid_dim: (1, 1, 1),
    block_dim: (1, 1, 1),
    shared_mem_bytes: 0,
};

/// A DG run on a CUDA device (twin of [`crate::solver::dg::gpu::GpuDg`]).
pub struct CudaDg<'a> {
    dev: &'a CudaDevice,
    num_elements: usize,
    ndof: usize,
    num_colors: usize,
    num_stages: usize,
    limiter: bool,
    cfl: f64,
    fixed_dt: f64,
    regs: CudaSlice<f32>,
    rhs: CudaSlice<f32>,
    clock: CudaSlice<f32>,
    tables: CudaSlice<f32>,
    inv_jac: CudaSlice<[f32; 4]>,
    inv_det: CudaSlice<f32>,
    heights: CudaSlice<f32>,
    neighbors: CudaSlice<[u32; 4]>,
    edges: CudaSlice<DgEdge>,
    case_data: CudaSlice<[f32; 4]>,
    stages: CudaSlice<GpuStage>,
    local_dt_buf: CudaSlice<f32>,
    volume: CudaFunction,
    surface: CudaFunction,
    /// `dg_surface_atomic`: one launch over all edges with atomicAdd (for the comparison).
    surface_atomic: CudaFunction,
    /// Use `surface_atomic` instead of the per-color launches.
    atomic_surface: bool,
    stage: CudaFunction,
    limit: CudaFunction,
    local_dt: CudaFunction,
    time: CudaFunction,
    volume_ranges: Vec<ItemRange>,
    surface_ranges: Vec<ItemRange>,
    stage_ranges: Vec<ItemRange>,
    limit_ranges: Vec<ItemRange>,
    time_ranges: Vec<ItemRange>,
    reduction: CudaMinReduction,
}

impl<'a> CudaDg<'a> {
    /// Upload the mesh, tables and case data and compile the kernels (the WGSL override
    /// constants as `-D` defines).
    pub fn new(
        dev: &'a CudaDevice,
        mesh: &DgMesh,
        tables: &BasisTables,
        cfg: &GpuConfig,
    ) -> Result<CudaDg<'a>> {
        let inputs = DgInputs::new(mesh, tables, cfg)?;
        let ne = mesh.num_elements;
        let ndof = 4 * tables.np * ne;
        let constants = vec![
            define_f32("GAMMA", crate::solver::dg::euler::GAMMA),
            define_u32("FLUX", cfg.flux.id()),
            define_u32("CASE_FN", cfg.state_fn.id()),
            define_u32("NP", tables.np as u32),
            define_u32("NQ", tables.nq() as u32),
            define_u32("NQE", tables.nqe() as u32),
            define_u32("NE", ne as u32),
        ];
        let mut dt_constants = constants.clone();
        dt_constants.push(define_f32("ORDER", tables.p as f64));
        let stream = dev.stream();
        let regs = stream
            .alloc_zeros::<f32>(GPU_REGISTERS * ndof)
            .map_err(driver_err("alloc dg registers"))?;
        let rhs = stream
            .alloc_zeros::<f32>(ndof)
            .map_err(driver_err("alloc dg rhs"))?;
        let clock = stream
            .alloc_zeros::<f32>(8)
            .map_err(driver_err("alloc dg clock"))?;
        let local_dt_buf = stream
            .alloc_zeros::<f32>(ne)
            .map_err(driver_err("alloc dg local dt"))?;
        let up = || driver_err("upload dg data");
        let table_buf = stream.clone_htod(&inputs.tables).map_err(up())?;
        let inv_jac = stream.clone_htod(&inputs.inv_jac).map_err(up())?;
        let inv_det = stream.clone_htod(&inputs.inv_det).map_err(up())?;
        let heights = stream.clone_htod(&inputs.heights).map_err(up())?;
        let neighbors = stream.clone_htod(&inputs.neighbors).map_err(up())?;
        let edges = stream.clone_htod(&inputs.edges).map_err(up())?;
        let case_data = stream.clone_htod(&inputs.case_data).map_err(up())?;
        let stages = stream.clone_htod(&inputs.stages).map_err(up())?;
        let volume = dev.function("dg_volume", "dg_volume", &constants)?;
        let surface = dev.function("dg_surface", "dg_surface", &constants)?;
        let surface_atomic = dev.function("dg_surface", "dg_surface_atomic", &constants)?;
        let stage = dev.function("dg_stage", "dg_stage", &[])?;
        let limit = dev.function("dg_limit", "dg_limit", &constants)?;
        let local_dt = dev.function("dg_local_dt", "dg_local_dt", &dt_constants)?;
        let time = dev.function("dg_time", "dg_time", &[])?;
        let reduction = CudaMinReduction::new(dev, ne as u32)?;
        Ok(CudaDg {
            dev,
            num_elements: ne,
            ndof,
            num_colors: mesh.num_colors(),
            num_stages: inputs.stages.len(),
            limiter: cfg.limiter,
            cfl: cfg.cfl,
            fixed_dt: cfg.fixed_dt.unwrap_or(0.0),
            regs,
            rhs,
            clock,
            tables: table_buf,
            inv_jac,
            inv_det,
            heights,
            neighbors,
            edges,
            case_data,
            stages,
            local_dt_buf,
            volume,
            surface,
            stage,
            limit,
            local_dt,
            time,
            surface_atomic,
            atomic_surface: false,
            volume_ranges: inputs.volume_ranges,
            surface_ranges: inputs.surface_ranges,
            stage_ranges: inputs.stage_ranges,
            limit_ranges: inputs.limit_ranges,
            time_ranges: inputs.time_ranges,
            reduction,
        })
    }

    /// Upload coefficients (c[eq][k][i], f64) into register `reg`.
    fn write_register(&mut self, reg: u32, c: &[f64]) -> Result<()> {
        if c.len() != self.ndof {
            return Err(Error::Invalid(format!(
                "expected {} coefficients, got {}",
                self.ndof,
                c.len()
            )));
        }
        let v: Vec<f32> = c.iter().map(|&x| x as f32).collect();
        let start = reg as usize * self.ndof;
        let stream = self.dev.stream().clone();
        let mut dst = self.regs.slice_mut(start..start + self.ndof);
        stream
            .memcpy_htod(&v, &mut dst)
            .map_err(driver_err("upload dg register"))
    }

    /// Write the eight clock words (in stream order).
    fn write_clock(&mut self, words: &[f32; 8]) -> Result<()> {
        let stream = self.dev.stream().clone();
        stream
            .memcpy_htod(words, &mut self.clock)
            .map_err(driver_err("write dg clock"))
    }

    /// Read register 0 (waits for the queued work).
    fn read_solution(&mut self) -> Result<Vec<f64>> {
        let v = self
            .dev
            .stream()
            .clone_dtoh(&self.regs.slice(0..self.ndof))
            .map_err(driver_err("read dg solution (a kernel failed?)"))?;
        self.dev.synchronize()?;
        Ok(v.into_iter().map(f64::from).collect())
    }

    /// Queue the volume kernel of stage `s`.
    fn launch_volume(&self, s: usize) -> Result<()> {
        let r = &self.volume_ranges[s];
        let mut b = self.dev.stream().launch_builder(&self.volume);
        b.arg(&self.regs)
            .arg(&self.rhs)
            .arg(&self.tables)
            .arg(&self.inv_jac)
            .arg(r);
        // SAFETY: dg_volume(const float* regs, float* rhs, const float* tables,
        // const float4* inv_jac, ItemRange); one thread per element, the register index and
        // NP, NE defines match the allocation of GPU_REGISTERS * 4 NP NE values.
        unsafe { b.launch(launch_for(r.count)) }.map_err(driver_err("launch dg_volume"))?;
        Ok(())
    }

    /// Queue the surface kernel of stage `s`, one launch per edge color (or, with the atomic
    /// variant, one launch over the colors' contiguous edge ranges).
    fn launch_surface(&self, s: usize) -> Result<()> {
        let stream = self.dev.stream();
        let colors = &self.surface_ranges[s * self.num_colors..(s + 1) * self.num_colors];
        if colors.is_empty() {
            return Ok(());
        }
        let all = [ItemRange {
            count: colors.iter().map(|r| r.count).sum(),
            ..colors[0]
        }];
        let (kernel, ranges) = if self.atomic_surface {
            (&self.surface_atomic, &all[..])
        } else {
            (&self.surface, colors)
        };
        for r in ranges {
            if r.count == 0 {
                continue;
            }
            let mut b = stream.launch_builder(kernel);
            b.arg(&self.regs)
                .arg(&self.rhs)
                .arg(&self.tables)
                .arg(&self.edges)
                .arg(&self.inv_det)
                .arg(&self.case_data)
                .arg(&self.clock)
                .arg(r);
            // SAFETY: dg_surface(const float* regs, float* rhs, const float* tables,
            // const DgEdge* edges, const float* inv_det, const float4* case_data,
            // const float* clock, ItemRange); the range lies inside the edge list, every
            // element index and inflow state of an edge inside the uploaded buffers.
            unsafe { b.launch(launch_for(r.count)) }.map_err(driver_err("launch dg_surface"))?;
        }
        Ok(())
    }

    /// Queue the right-hand side of stage `s` (volume then surface).
    fn launch_rhs(&self, s: usize) -> Result<()> {
        self.launch_volume(s)?;
        self.launch_surface(s)
    }

    /// Queue the stage update of stage `s`.
    fn launch_stage(&self, s: usize) -> Result<()> {
        let r = &self.stage_ranges[s];
        let mut b = self.dev.stream().launch_builder(&self.stage);
        b.arg(&self.regs)
            .arg(&self.rhs)
            .arg(&self.clock)
            .arg(&self.stages)
            .arg(r);
        // SAFETY: dg_stage(float* regs, const float* rhs, const float* clock,
        // const Stage* stages, ItemRange); one thread per DOF of a register, the stage index
        // and destination registers lie inside the uploaded stages and registers.
        unsafe { b.launch(launch_for(r.count)) }.map_err(driver_err("launch dg_stage"))?;
        Ok(())
    }

    /// Queue the limiter with range `k` of the limiter ranges.
    fn launch_limit(&self, k: usize) -> Result<()> {
        let r = &self.limit_ranges[k];
        let mut b = self.dev.stream().launch_builder(&self.limit);
        b.arg(&self.regs)
            .arg(&self.tables)
            .arg(&self.neighbors)
            .arg(&self.clock)
            .arg(r);
        // SAFETY: dg_limit(float* regs, const float* tables, const uint4* neighbors,
        // const float* clock, ItemRange); one thread per element, neighbour indices are
        // elements or 0xffffffff (skipped).
        unsafe { b.launch(launch_for(r.count)) }.map_err(driver_err("launch dg_limit"))?;
        Ok(())
    }

    /// Queue the time kernel in phase 0 (step start) or 1 (step end).
    fn launch_time(&self, phase: usize) -> Result<()> {
        let mut b = self.dev.stream().launch_builder(&self.time);
        b.arg(self.reduction.result())
            .arg(&self.clock)
            .arg(&self.time_ranges[phase]);
        // SAFETY: dg_time(const float* dt_min, float* clock, ItemRange); one thread, the
        // clock holds 8 words.
        unsafe { b.launch(SINGLE) }.map_err(driver_err("launch dg_time"))?;
        Ok(())
    }

    /// Queue local Δt, the min-reduction and the time kernel's phase 0.
    fn launch_dt(&self) -> Result<()> {
        let range = item_range(0, self.num_elements as u32);
        let mut b = self.dev.stream().launch_builder(&self.local_dt);
        b.arg(&self.regs)
            .arg(&self.heights)
            .arg(&self.local_dt_buf)
            .arg(&range);
        // SAFETY: dg_local_dt(const float* regs, const float* min_height, float* local_dt,
        // ItemRange); one thread per element.
        unsafe { b.launch(launch_for(range.count)) }.map_err(driver_err("launch dg_local_dt"))?;
        self.reduction.launch(self.dev, &self.local_dt_buf)?;
        self.launch_time(0)
    }

    /// Queue stage `s`'s update and, with the limiter on, its limiting.
    fn launch_stage_and_limit(&self, s: usize) -> Result<()> {
        self.launch_stage(s)?;
        if self.limiter {
            self.launch_limit(s)?;
        }
        Ok(())
    }

    /// Queue `steps` full time steps without waiting.
    fn launch_steps(&self, steps: usize) -> Result<()> {
        for _ in 0..steps {
            self.launch_dt()?;
            for s in 0..self.num_stages {
                self.launch_rhs(s)?;
                self.launch_stage_and_limit(s)?;
            }
            self.launch_time(1)?;
        }
        Ok(())
    }

    /// Like `launch_steps`, recording a CUDA event after each kernel group; returns the
    /// seconds of each group with its kernel.
    fn timed_steps(&self, steps: usize) -> Result<Vec<(Kernel, f64)>> {
        let stream = self.dev.stream();
        let mark = || -> Result<CudaEvent> {
            stream
                .record_event(Some(sys::CUevent_flags::CU_EVENT_DEFAULT))
                .map_err(driver_err("record event"))
        };
        let mut kinds = Vec::new();
        let mut marks = vec![mark()?];
        for _ in 0..steps {
            self.launch_dt()?;
            marks.push(mark()?);
            kinds.push(Kernel::TimeStep);
            for s in 0..self.num_stages {
                self.launch_volume(s)?;
                marks.push(mark()?);
                kinds.push(Kernel::Volume);
                self.launch_surface(s)?;
                marks.push(mark()?);
                kinds.push(Kernel::Surface);
                self.launch_stage(s)?;
                marks.push(mark()?);
                kinds.push(Kernel::Stage);
                if self.limiter {
                    self.launch_limit(s)?;
                    marks.push(mark()?);
                    kinds.push(Kernel::Limit);
                }
            }
            self.launch_time(1)?;
            marks.push(mark()?);
            kinds.push(Kernel::TimeStep);
        }
        self.dev.synchronize()?;
        let mut out = Vec::with_capacity(kinds.len());
        for (k, w) in kinds.into_iter().zip(marks.windows(2)) {
            let ms = w[0].elapsed_ms(&w[1]).map_err(driver_err("event time"))? as f64;
            out.push((k, ms * 1e-3));
        }
        Ok(out)
    }
}

impl DgDevice for CudaDg<'_> {
    fn set_atomic_surface(&mut self, on: bool) -> Result<()> {
        self.atomic_surface = on;
        Ok(())
    }
    fn device_name(&self) -> String {
        self.dev.description()
    }
    fn set_solution(&mut self, c: &[f64]) -> Result<()> {
        self.write_register(0, c)
    }
    fn solution(&mut self) -> Result<Vec<f64>> {
        self.read_solution()
    }
    fn set_clock(&mut self, t: f64, t_end: f64) -> Result<()> {
        let words = clock_words(t, t_end, self.fixed_dt, self.cfl);
        self.write_clock(&words)
    }
    fn clock(&mut self) -> Result<Clock> {
        let c = self
            .dev
            .stream()
            .clone_dtoh(&self.clock)
            .map_err(driver_err("read dg clock (a kernel failed?)"))?;
        self.dev.synchronize()?;
        clock_from_words(&c)
    }
    fn advance(&mut self, steps: usize) -> Result<()> {
        self.launch_steps(steps)
    }
    fn wait(&mut self) -> Result<()> {
        self.dev.synchronize()
    }
    fn eval_rhs(&mut self, c: &[f64], t: f64) -> Result<Vec<f64>> {
        self.set_solution(c)?;
        self.set_clock(t, t)?;
        // Stage 0 of every scheme evaluates register 0 at time t.
        self.launch_rhs(0)?;
        let v = self
            .dev
            .stream()
            .clone_dtoh(&self.rhs)
            .map_err(driver_err("read dg rhs (a kernel failed?)"))?;
        self.dev.synchronize()?;
        Ok(v.into_iter().map(f64::from).collect())
    }
    fn limit_once(&mut self, c: &[f64]) -> Result<Vec<f64>> {
        self.write_register(SCRATCH, c)?;
        self.write_clock(&LIMIT_CLOCK)?;
        self.launch_limit(self.limit_ranges.len() - 1)?;
        self.read_solution()
    }
    fn time_kernels(&mut self, steps: usize) -> Result<Option<Vec<(Kernel, f64)>>> {
        self.timed_steps(steps).map(Some)
    }
}
