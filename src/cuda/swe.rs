//! The two-layer shallow-water solver on CUDA: the same buffers, kernels and per-step sequence
//! as [`crate::solver::swe::gpu::GpuSolver`] (see its module doc), with the CUDA twins of the
//! WGSL kernels launched on one stream:
//!
//! flux (one launch per edge color over the color's edge range, or the cell gather, or one
//! atomicAdd launch over all edges) → local Δt → min-reduction → time kernel → cell update,
//!
//! many steps queued per batch; launches of one stream run in order, so color c + 1 sees the
//! writes of color c without extra synchronization. Physical constants are `-D` defines.

use super::kernels::CudaMinReduction;
use super::{define_f32, define_u32, driver_err, item_range, launch_for, CudaDevice};
use crate::error::{Error, Result};
use crate::gpu::dispatch::ItemRange;
use crate::solver::swe::gpu::{pack_cells, FluxLayout, GpuControl, KernelTimes, SweDevice};
use crate::solver::swe::mesh::{SweEdge, SweMesh};
use crate::solver::swe::{Physics, Scheme};
use cudarc::driver::{sys, CudaEvent, CudaFunction, CudaSlice, LaunchConfig, PushKernelArg};

/// A two-layer shallow-water run on a CUDA device.
pub struct CudaSolver<'a> {
    dev: &'a CudaDevice,
    n_cells: u32,
    layout: FluxLayout,
    edges: CudaSlice<SweEdge>,
    cells: CudaSlice<[f32; 4]>,
    acc: CudaSlice<[f32; 4]>,
    counters: CudaSlice<u32>,
    control: CudaSlice<GpuControl>,
    dt_local: CudaSlice<f32>,
    /// Cell-gather only: each cell's three edge positions.
    slots: Option<CudaSlice<[u32; 4]>>,
    flux: CudaFunction,
    /// Ranges of the flux launches: one per color, or one covering all cells / all edges.
    flux_ranges: Vec<ItemRange>,
    local_dt: CudaFunction,
    time: CudaFunction,
    update: CudaFunction,
    reduction: CudaMinReduction,
}

impl<'a> CudaSolver<'a> {
    /// Upload the mesh and initial state and compile the kernels (physical constants as `-D`
    /// defines, like the WGSL override constants of the wgpu solver).
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        dev: &'a CudaDevice,
        mesh: &SweMesh,
        depth: &[f64],
        state: &[[f64; 6]],
        scheme: Scheme,
        phys: Physics,
        cfl: f64,
        layout: FluxLayout,
    ) -> Result<CudaSolver<'a>> {
        phys.validate()?;
        let n = mesh.num_cells();
        if depth.len() != n || state.len() != n {
            return Err(Error::Invalid(format!(
                "{n} cells but {} depths and {} states",
                depth.len(),
                state.len()
            )));
        }
        let stream = dev.stream();
        let up = driver_err("upload");
        let edges = stream.clone_htod(&mesh.gpu_edges()).map_err(up)?;
        let cells = stream
            .clone_htod(&pack_cells(state, depth, &mesh.geom.areas))
            .map_err(driver_err("upload"))?;
        let acc = stream
            .alloc_zeros::<[f32; 4]>(2 * n)
            .map_err(driver_err("alloc"))?;
        let counters = stream.alloc_zeros::<u32>(8).map_err(driver_err("alloc"))?;
        let control = stream
            .clone_htod(&[GpuControl {
                t_end: f32::MAX,
                ..Default::default()
            }])
            .map_err(driver_err("upload"))?;
        let dt_local = stream.alloc_zeros::<f32>(n).map_err(driver_err("alloc"))?;
        let flux_defines = vec![
            define_f32("GRAVITY", phys.g),
            define_f32("DENSITY_RATIO", phys.r),
            define_f32("DRY_TOL", phys.dry_tol),
            define_u32("SCHEME", scheme.shader_id()),
        ];
        let n_edges = mesh.num_faces() as u32;
        let (flux, flux_ranges, slots) = match layout {
            FluxLayout::ColoredScatter => {
                let offsets = &mesh.color_offsets;
                if offsets.len() < 2 || offsets.windows(2).any(|w| w[1] < w[0]) {
                    return Err(Error::Invalid(format!(
                        "color offsets must be non-decreasing with at least one color, got \
                         {offsets:?}"
                    )));
                }
                let ranges = offsets
                    .windows(2)
                    .enumerate()
                    .map(|(c, w)| ItemRange {
                        first: w[0],
                        count: w[1] - w[0],
                        color: c as u32,
                        pad: 0,
                    })
                    .collect();
                let f = dev.function("swe_edge_flux", "swe_edge_flux", &flux_defines)?;
                (f, ranges, None)
            }
            FluxLayout::AtomicScatter => {
                let f = dev.function("swe_edge_flux", "swe_edge_flux_atomic", &flux_defines)?;
                (f, vec![item_range(0, n_edges)], None)
            }
            FluxLayout::CellGather => {
                let s = stream
                    .clone_htod(&mesh.cell_edge_slots())
                    .map_err(driver_err("upload"))?;
                let f = dev.function("swe_cell_gather", "swe_cell_gather", &flux_defines)?;
                (f, vec![item_range(0, n as u32)], Some(s))
            }
        };
        let local_dt = dev.function("swe_local_dt", "swe_local_dt", &[define_f32("CFL", cfl)])?;
        let time = dev.function("swe_time", "swe_time", &[])?;
        let update = dev.function(
            "swe_update",
            "swe_update",
            &[define_f32("DRY_TOL", phys.dry_tol)],
        )?;
        let reduction = CudaMinReduction::new(dev, n as u32)?;
        Ok(CudaSolver {
            dev,
            n_cells: n as u32,
            layout,
            edges,
            cells,
            acc,
            counters,
            control,
            dt_local,
            slots,
            flux,
            flux_ranges,
            local_dt,
            time,
            update,
            reduction,
        })
    }

    /// Queue the flux pass.
    fn launch_flux(&self) -> Result<()> {
        let stream = self.dev.stream();
        for r in &self.flux_ranges {
            if r.count == 0 {
                continue;
            }
            let mut b = stream.launch_builder(&self.flux);
            b.arg(&self.edges)
                .arg(&self.cells)
                .arg(&self.acc)
                .arg(&self.counters);
            if let Some(slots) = &self.slots {
                b.arg(slots);
            }
            b.arg(r);
            // SAFETY: the parameter lists of swe_edge_flux / swe_edge_flux_atomic (edges,
            // cells, acc, counters, range) and swe_cell_gather (…, cell_edges, range); every
            // index the kernels form lies inside the uploaded mesh buffers.
            unsafe { b.launch(launch_for(r.count)) }.map_err(driver_err("launch flux kernel"))?;
        }
        Ok(())
    }

    /// Queue local Δt, the min-reduction, the time kernel and the cell update.
    fn launch_update(&self) -> Result<()> {
        let stream = self.dev.stream();
        let cells = item_range(0, self.n_cells);
        let mut b = stream.launch_builder(&self.local_dt);
        b.arg(&self.cells)
            .arg(&self.acc)
            .arg(&self.dt_local)
            .arg(&cells);
        // SAFETY: swe_local_dt(const float4* cells, const float4* acc, float* dt, ItemRange).
        unsafe { b.launch(launch_for(self.n_cells)) }.map_err(driver_err("launch swe_local_dt"))?;
        self.reduction.launch(self.dev, &self.dt_local)?;
        let one = item_range(0, 1);
        let mut b = stream.launch_builder(&self.time);
        b.arg(self.reduction.result())
            .arg(&self.control)
            .arg(&self.counters)
            .arg(&one);
        let single = LaunchConfig {
            grid_dim: (1, 1, 1),
            block_dim: (1, 1, 1),
            shared_mem_bytes: 0,
        };
        // SAFETY: swe_time(const float* dt_min, Control*, u32* counters, ItemRange).
        unsafe { b.launch(single) }.map_err(driver_err("launch swe_time"))?;
        let mut b = stream.launch_builder(&self.update);
        b.arg(&self.control)
            .arg(&self.cells)
            .arg(&self.acc)
            .arg(&self.counters)
            .arg(&cells);
        // SAFETY: swe_update(const Control*, float4* cells, float4* acc, u32*, ItemRange).
        unsafe { b.launch(launch_for(self.n_cells)) }.map_err(driver_err("launch swe_update"))?;
        Ok(())
    }

    /// Set the time the next steps stop at (written into the control block in stream order).
    pub fn set_t_end(&mut self, t_end: f32) -> Result<()> {
        let stream = self.dev.stream().clone();
        // SAFETY: GpuControl is 12 u32/f32 words; word 2 is t_end.
        let mut words = unsafe { self.control.transmute_mut::<f32>(12) }
            .ok_or_else(|| Error::Gpu("control block smaller than 12 words".into()))?;
        let mut field = words.slice_mut(2..3);
        stream
            .memcpy_htod(&[t_end], &mut field)
            .map_err(driver_err("write t_end"))
    }

    /// Queue `n` steps (steps past t_end are no-ops).
    pub fn submit_steps(&mut self, n: u32) -> Result<()> {
        for _ in 0..n {
            self.launch_flux()?;
            self.launch_update()?;
        }
        Ok(())
    }

    /// Take exactly `n` steps without a time clamp (t_end = f32::MAX).
    pub fn run_steps(&mut self, n: u32) -> Result<()> {
        self.set_t_end(f32::MAX)?;
        self.submit_steps(n)?;
        self.dev.synchronize()
    }

    /// Read the control block (waits for the queued steps).
    pub fn control(&mut self) -> Result<GpuControl> {
        let v = self
            .dev
            .stream()
            .clone_dtoh(&self.control)
            .map_err(driver_err("read control (a kernel failed?)"))?;
        self.dev.synchronize()?;
        Ok(v[0])
    }

    /// The state, converted to f64 W = (h1, q1x, q1y, h2, q2x, q2y) per cell.
    pub fn state(&mut self) -> Result<Vec<[f64; 6]>> {
        let raw = self
            .dev
            .stream()
            .clone_dtoh(&self.cells)
            .map_err(driver_err("read state (a kernel failed?)"))?;
        self.dev.synchronize()?;
        Ok(crate::solver::swe::gpu::unpack_cells(&raw))
    }

    /// Take `n` steps (no clamp), timing the flux pass and the rest of each step with CUDA
    /// events.
    pub fn timed_steps(&mut self, n: u32) -> Result<KernelTimes> {
        self.set_t_end(f32::MAX)?;
        let stream = self.dev.stream();
        let mark = || -> Result<CudaEvent> {
            stream
                .record_event(Some(sys::CUevent_flags::CU_EVENT_DEFAULT))
                .map_err(driver_err("record event"))
        };
        let mut marks = Vec::with_capacity(2 * n as usize + 1);
        marks.push(mark()?);
        for _ in 0..n {
            self.launch_flux()?;
            marks.push(mark()?);
            self.launch_update()?;
            marks.push(mark()?);
        }
        self.dev.synchronize()?;
        let mut times = KernelTimes {
            flux: 0.0,
            update: 0.0,
            timestamps: true,
        };
        for (i, w) in marks.windows(2).enumerate() {
            let ms = w[0].elapsed_ms(&w[1]).map_err(driver_err("event time"))? as f64;
            if i % 2 == 0 {
                times.flux += ms * 1e-3;
            } else {
                times.update += ms * 1e-3;
            }
        }
        Ok(times)
    }
}

impl SweDevice for CudaSolver<'_> {
    fn device_name(&self) -> String {
        self.dev.description()
    }
    fn flux_layout(&self) -> FluxLayout {
        self.layout
    }
    fn set_end_time(&mut self, t_end: f32) -> Result<()> {
        self.set_t_end(t_end)
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
