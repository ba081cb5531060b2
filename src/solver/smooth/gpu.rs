//! The smoothing driver, written once over the [`Runtime`] (wgpu or CUDA): positions and
//! cavity walks on the device in the slot numbering of [`DeviceLayout`] (free vertices color by
//! color, Morton order inside a color), the metric as a texture (hardware filter, or texel reads
//! in the kernel) or a storage buffer, one launch per color per iteration
//! (`shaders/smooth_{hardware,texel,buffer}.wgsl` with `shaders/common/smooth_relocate.wgsl`,
//! and their CUDA twins; CPU reference in [`super::cpu`]). Positions go in and come out in the
//! caller's numbering.
//!
//! Runs queue prepared plans of [`ITERATIONS_PER_SUBMIT`] sweeps (one queue call) without
//! waiting for each, so the host records the next batch while the device runs
//! the previous one; launches run in order, so color c + 1 sees the moves of color c. With
//! device timers (timestamp queries, CUDA events) each batch is timed as one unit.

use super::cpu::{Schedule, SmoothTopology};
use super::layout::DeviceLayout;
use super::texture::{MetricTexture, TexelPrecision};
use super::{Sampling, SmoothParams};
use crate::error::{Error, Result};
use crate::runtime::{Arg, Buffer, ItemRange, Kernel, Plan, PlanBuilder, Runtime};
use std::time::Instant;

/// Iterations per queued plan (one queue call; one timing on devices with timers).
pub const ITERATIONS_PER_SUBMIT: usize = 100;

/// Mirrors `SmoothParams` in shaders/common/smooth_relocate.wgsl (a uniform) and its CUDA twin
/// in shaders/cuda/common/smooth_relocate.cuh (passed by value).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, bytemuck::Pod, bytemuck::Zeroable)]
struct GpuParams {
    lo: [f32; 2],
    inv_extent: [f32; 2],
    size: u32,
    first_boundary_color: u32,
    max_halvings: u32,
    first_boundary_slot: u32,
    sigma: f32,
    relax: f32,
    min_shape: f32,
    shape_floor: f32,
    lens: u32,
    chunk_base: u32,
    entries: u32,
    bpairs: u32,
}

/// Timing of [`GpuSmoother::run`].
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize)]
pub struct RunTiming {
    /// Wall time from queuing the first batch until the device finished the last one
    /// (recording overlaps the device work of the previous batch).
    pub wall_seconds: f64,
    /// Sum of the device times of the batches (all launches and the barriers between them),
    /// from timestamp queries or CUDA events (None without device timers).
    pub kernel_seconds: Option<f64>,
}

/// Smoothing state on the device of a [`Runtime`].
pub struct GpuSmoother {
    rt: Runtime,
    sampling: Sampling,
    precision: TexelPrecision,
    n: usize,
    free: usize,
    positions: Buffer,
    kernel: Kernel,
    /// positions, cavities, parameters, metric (texture or texel buffer).
    args: Vec<Arg>,
    /// The per-color ranges of one sweep.
    ranges: Vec<ItemRange>,
    /// Prepared plans of k sweeps, by k (<= [`ITERATIONS_PER_SUBMIT`]).
    batches: Vec<(usize, Plan)>,
    /// One launch per free vertex in slot order (prepared on first use: tests only).
    sequential: Option<Plan>,
    /// Caller's vertex of each slot.
    vertex_of: Vec<u32>,
    /// Color of each free slot.
    colors_of_slots: Vec<u32>,
}

/// The cavity buffer (lens, chunk bases, walk entries, boundary pairs) and its section offsets.
fn cavity_array(layout: &DeviceLayout) -> Result<(Vec<u32>, [u32; 4])> {
    let parts: [&[u32]; 4] = [
        &layout.lens,
        &layout.chunk_base,
        &layout.entries,
        &layout.bpairs,
    ];
    let total: usize = parts.iter().map(|p| p.len()).sum();
    if total > u32::MAX as usize {
        return Err(Error::Invalid(format!(
            "mesh too large for 32-bit cavity indices ({total} entries)"
        )));
    }
    let mut data: Vec<u32> = Vec::with_capacity(total);
    let mut bases = [0u32; 4];
    for (base, part) in bases.iter_mut().zip(parts) {
        *base = data.len() as u32;
        data.extend_from_slice(part);
    }
    Ok((data, bases))
}

/// The kernel parameters for `layout` with cavity section offsets `b` (from [`cavity_array`]).
fn device_params(
    tex: &MetricTexture,
    schedule: &Schedule,
    layout: &DeviceLayout,
    params: &SmoothParams,
    b: [u32; 4],
) -> GpuParams {
    GpuParams {
        lo: [tex.lo[0] as f32, tex.lo[1] as f32],
        inv_extent: [(1.0 / tex.extent[0]) as f32, (1.0 / tex.extent[1]) as f32],
        size: tex.size,
        first_boundary_color: schedule.first_boundary_color as u32,
        max_halvings: params.max_halvings,
        first_boundary_slot: layout.first_boundary_slot,
        sigma: params.sigma as f32,
        relax: params.relax as f32,
        min_shape: params.min_shape as f32,
        shape_floor: params.shape_floor as f32,
        lens: b[0],
        chunk_base: b[1],
        entries: b[2],
        bpairs: b[3],
    }
}

impl GpuSmoother {
    /// Upload everything and prepare a batch of [`ITERATIONS_PER_SUBMIT`] sweeps; `pos` are the
    /// starting positions (rounded to f32).
    pub fn new(
        rt: &Runtime,
        topo: &SmoothTopology,
        schedule: &Schedule,
        tex: &MetricTexture,
        sampling: Sampling,
        params: &SmoothParams,
        pos: &[[f64; 2]],
    ) -> Result<GpuSmoother> {
        params.check()?;
        let n = topo.num_vertices();
        if pos.len() != n {
            return Err(Error::Invalid(format!(
                "{} positions for {n} vertices",
                pos.len()
            )));
        }
        let ranges = ItemRange::per_color(&schedule.offsets)?;
        let layout = DeviceLayout::build(topo, schedule, pos)?;
        let (cavity, b) = cavity_array(&layout)?;
        let gp = device_params(tex, schedule, &layout, params, b);
        let positions = rt.upload("smooth positions", &slot_positions(&layout.vertex_of, pos))?;
        let cavity = rt.upload("smooth cavities", &cavity)?;
        let (metric, precision) = match sampling {
            Sampling::Buffer => (
                Arg::from(&rt.upload("metric texels", &tex.texels)?),
                TexelPrecision::F32,
            ),
            Sampling::Hardware | Sampling::Shader => {
                let t = rt
                    .texture("metric texture", tex.size, &tex.texels)
                    .map_err(|e| match e {
                        Error::Gpu(m) => Error::Gpu(format!("{m}; use a smaller --texture-size")),
                        e => e,
                    })?;
                let precision = t.precision();
                (Arg::from(&t), precision)
            }
        };
        let colors_of_slots = (0..schedule.num_colors())
            .flat_map(|c| std::iter::repeat_n(c as u32, schedule.color(c).len()))
            .collect();
        let mut smoother = GpuSmoother {
            rt: rt.clone(),
            sampling,
            precision,
            n,
            free: layout.free(),
            kernel: rt.kernel(sampling.kernel(), &[])?,
            args: vec![
                Arg::from(&positions),
                Arg::from(&cavity),
                Arg::params(&gp),
                metric,
            ],
            positions,
            ranges,
            batches: Vec::new(),
            sequential: None,
            vertex_of: layout.vertex_of,
            colors_of_slots,
        };
        smoother.batch(ITERATIONS_PER_SUBMIT)?;
        Ok(smoother)
    }

    pub fn sampling(&self) -> Sampling {
        self.sampling
    }

    /// The device the kernels run on.
    pub fn device_name(&self) -> String {
        self.rt.name()
    }

    /// Precision of the texels the kernel reads (f16 only for textures on wgpu adapters
    /// without FLOAT32_FILTERABLE).
    pub fn precision(&self) -> TexelPrecision {
        self.precision
    }

    /// Number of vertices moved per iteration.
    pub fn free_vertices(&self) -> usize {
        self.free
    }

    /// Index in `batches` of the plan of `k` sweeps, prepared on first use.
    fn batch(&mut self, k: usize) -> Result<usize> {
        if let Some(i) = self.batches.iter().position(|(kk, _)| *kk == k) {
            return Ok(i);
        }
        let mut p = PlanBuilder::new();
        p.segment("sweeps");
        for _ in 0..k {
            p.launch_ranges(&self.kernel, &self.args, &self.ranges);
        }
        self.batches.push((k, self.rt.prepare(&p)?));
        Ok(self.batches.len() - 1)
    }

    /// Run `iterations` sweeps (one launch per color each) and wait for them.
    pub fn run(&mut self, iterations: usize) -> Result<RunTiming> {
        let full = iterations / ITERATIONS_PER_SUBMIT;
        let rest = iterations % ITERATIONS_PER_SUBMIT;
        let mut work = Vec::new();
        if full > 0 {
            work.push((self.batch(ITERATIONS_PER_SUBMIT)?, full as u32));
        }
        if rest > 0 {
            work.push((self.batch(rest)?, 1));
        }
        let timed = self.rt.has_timestamps();
        let start = Instant::now();
        let mut kernel = 0.0;
        for (i, repeats) in work {
            let plan = &self.batches[i].1;
            if timed {
                kernel += self.rt.time(plan, repeats)?.sum();
            } else {
                for _ in 0..repeats {
                    self.rt.queue(plan, 1)?;
                }
            }
        }
        self.rt.wait()?;
        Ok(RunTiming {
            wall_seconds: start.elapsed().as_secs_f64(),
            kernel_seconds: timed.then_some(kernel),
        })
    }

    /// One sweep with one launch per vertex, in slot order: the sequential color-by-color
    /// sweep the parallel one must equal (a race-freedom check for tests).
    pub fn run_sequential(&mut self) -> Result<()> {
        if self.sequential.is_none() {
            let mut p = PlanBuilder::new();
            for (k, &c) in self.colors_of_slots.iter().enumerate() {
                let range = ItemRange {
                    first: k as u32,
                    count: 1,
                    color: c,
                    pad: 0,
                };
                p.launch(&self.kernel, &self.args, range);
            }
            self.sequential = Some(self.rt.prepare(&p)?);
        }
        if let Some(plan) = &self.sequential {
            self.rt.run(plan, 1)?;
        }
        Ok(())
    }

    /// The device state for a checkpoint: the f32 positions in slot order, as raw words.
    pub fn save_words(&self) -> Result<Vec<u32>> {
        let by_slot: Vec<[f32; 2]> = self.rt.read(&self.positions, 0, self.n)?;
        Ok(by_slot.iter().flatten().map(|x| x.to_bits()).collect())
    }

    /// Put back the words of [`GpuSmoother::save_words`] (2 per vertex), bit for bit.
    pub fn restore_words(&self, words: &[u32]) -> Result<()> {
        if words.len() != 2 * self.n {
            return Err(Error::Invalid(format!(
                "{} position words for {} vertices (expected {})",
                words.len(),
                self.n,
                2 * self.n
            )));
        }
        let by_slot: Vec<[f32; 2]> = words
            .chunks_exact(2)
            .map(|w| [f32::from_bits(w[0]), f32::from_bits(w[1])])
            .collect();
        self.rt.write(&self.positions, 0, &by_slot)
    }

    /// Current positions in the caller's numbering (f32, as the kernel holds them).
    pub fn positions(&self) -> Result<Vec<[f32; 2]>> {
        let by_slot: Vec<[f32; 2]> = self.rt.read(&self.positions, 0, self.n)?;
        let mut out = vec![[0.0f32; 2]; self.n];
        for (&v, p) in self.vertex_of.iter().zip(by_slot) {
            out[v as usize] = p;
        }
        Ok(out)
    }

    /// Current positions widened to f64.
    pub fn positions_f64(&self) -> Result<Vec<[f64; 2]>> {
        Ok(self
            .positions()?
            .iter()
            .map(|p| [p[0] as f64, p[1] as f64])
            .collect())
    }

    /// Replace the positions (caller's numbering, rounded to f32), ordered after the work
    /// queued so far.
    pub fn set_positions(&self, pos: &[[f64; 2]]) -> Result<()> {
        if pos.len() != self.n {
            return Err(Error::Invalid(format!(
                "{} positions for {} vertices",
                pos.len(),
                self.n
            )));
        }
        self.rt
            .write(&self.positions, 0, &slot_positions(&self.vertex_of, pos))
    }

    /// The free vertices (caller's numbering) in the order the kernels see them: schedule
    /// colors in order, each sorted by the Morton key of its starting position.
    pub fn order(&self) -> &[u32] {
        &self.vertex_of[..self.free]
    }
}

/// Positions rounded to f32 in slot order.
fn slot_positions(vertex_of: &[u32], pos: &[[f64; 2]]) -> Vec<[f32; 2]> {
    vertex_of
        .iter()
        .map(|&v| {
            let p = pos[v as usize];
            [p[0] as f32, p[1] as f32]
        })
        .collect()
}
