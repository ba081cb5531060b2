//! The wgpu driver: positions and cavity walks on the device in the slot numbering of
//! [`DeviceLayout`] (free vertices color by color, Morton order inside a color), the metric as a
//! texture (hardware filter or textureLoad) or a storage buffer, one dispatch per color per
//! iteration (`shaders/smooth_{hardware,texel,buffer}.wgsl` with
//! `shaders/common/smooth_relocate.wgsl`; CPU reference in [`super::cpu`]). Positions go in and
//! come out in the caller's numbering.
//!
//! [`ITERATIONS_PER_SUBMIT`] iterations are recorded into one compute pass per submit: pipeline
//! and the data and metric bind groups are set once per pass, each dispatch only rebinds its
//! color's range (a dynamic uniform offset); wgpu puts a barrier between consecutive dispatches
//! of a pass, so color c + 1 sees the moves of color c. Submits are not waited for one by one:
//! the CPU records the next batch while the GPU runs the previous one. Each pass is timed with
//! one pair of timestamp queries when the adapter has them.

use super::cpu::{Schedule, SmoothTopology};
use super::layout::DeviceLayout;
use super::texture::{MetricTexture, TexelPrecision};
use super::{Sampling, SmoothParams};
use crate::error::{Error, Result};
use crate::gpu::buffers::{bind_buffers, storage_from, storage_layout, Readback};
use crate::gpu::context::GpuContext;
use crate::gpu::dispatch::{grid_for, range_layout, ItemRange, RangeSet, WORKGROUP_SIZE};
use crate::gpu::shaders::compute_pipeline;
use crate::gpu::timing::PassTimer;
use crate::gpu::Backend;
use std::time::Instant;
use wgpu::util::DeviceExt;

/// Iterations recorded per submit (one compute pass, one timestamp pair).
pub const ITERATIONS_PER_SUBMIT: usize = 100;

/// Submits whose timestamps are read back together (2 queries each, within wgpu's 4096 per
/// query set); longer runs read them back in groups.
const TIMED_SUBMITS: usize = 1000;

/// Mirrors `SmoothParams` in shaders/common/smooth_relocate.wgsl (and its CUDA twin in
/// shaders/cuda/common/smooth_relocate.cuh, passed by value).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, bytemuck::Pod, bytemuck::Zeroable)]
pub(crate) struct GpuParams {
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
    /// Wall time from the start of recording the first batch until the GPU finished the last
    /// one (recording overlaps the GPU work of the previous batch).
    pub wall_seconds: f64,
    /// Sum over the submits of the GPU time of their compute pass (all dispatches and the
    /// barriers between them), from timestamp queries (None without them).
    pub kernel_seconds: Option<f64>,
}

/// Smoothing state on the GPU.
pub struct GpuSmoother {
    sampling: Sampling,
    precision: TexelPrecision,
    n: usize,
    free: usize,
    positions: wgpu::Buffer,
    pipeline: wgpu::ComputePipeline,
    data_group: wgpu::BindGroup,
    metric_group: wgpu::BindGroup,
    range_layout: wgpu::BindGroupLayout,
    ranges: RangeSet,
    /// (range index, workgroups x, workgroups y) of each non-empty color.
    grids: Vec<(usize, u32, u32)>,
    /// Caller's vertex of each slot.
    vertex_of: Vec<u32>,
    /// Color of each free slot.
    colors_of_slots: Vec<u32>,
    readback: Readback,
}

/// The texture format the hardware and shader paths use on this adapter.
pub fn texture_format(ctx: &GpuContext) -> (wgpu::TextureFormat, TexelPrecision) {
    if ctx.float32_filterable() {
        (wgpu::TextureFormat::Rgba32Float, TexelPrecision::F32)
    } else {
        (wgpu::TextureFormat::Rgba16Float, TexelPrecision::F16)
    }
}

/// The cavity buffer (lens, chunk bases, walk entries, boundary pairs) and its section offsets.
pub(crate) fn cavity_array(layout: &DeviceLayout) -> Result<(Vec<u32>, [u32; 4])> {
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
pub(crate) fn device_params(
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
    /// Upload everything; `pos` are the starting positions (rounded to f32).
    pub fn new(
        ctx: &GpuContext,
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
        let max_dim = ctx.limits.max_texture_dimension_2d;
        if sampling != Sampling::Buffer && tex.size > max_dim {
            return Err(Error::Gpu(format!(
                "texture size {} exceeds this adapter's max_texture_dimension_2d ({max_dim}); \
                 use --texture-size {max_dim} or less",
                tex.size
            )));
        }
        let layout = DeviceLayout::build(topo, schedule, pos)?;
        let (cavity, b) = cavity_array(&layout)?;
        let gp = device_params(tex, schedule, &layout, params, b);
        let pos32 = slot_positions(&layout.vertex_of, pos);
        let positions = storage_from(ctx, "smooth positions", &pos32)?;
        let cavity_buf = storage_from(ctx, "smooth cavities", &cavity)?;
        let params_buf = ctx
            .device
            .create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: Some("smooth params"),
                contents: bytemuck::bytes_of(&gp),
                usage: wgpu::BufferUsages::UNIFORM,
            });
        let data_layout = storage_layout(&ctx.device, "smooth data", &[false, true]);
        let data_group = bind_buffers(
            &ctx.device,
            "smooth data",
            &data_layout,
            &[&positions, &cavity_buf],
        );
        let (format, tex_precision) = texture_format(ctx);
        let precision = match sampling {
            Sampling::Buffer => TexelPrecision::F32,
            _ => tex_precision,
        };
        let uniform_entry = wgpu::BindGroupLayoutEntry {
            binding: 0,
            visibility: wgpu::ShaderStages::COMPUTE,
            ty: wgpu::BindingType::Buffer {
                ty: wgpu::BufferBindingType::Uniform,
                has_dynamic_offset: false,
                min_binding_size: None,
            },
            count: None,
        };
        let texture_entry = |filterable: bool| wgpu::BindGroupLayoutEntry {
            binding: 1,
            visibility: wgpu::ShaderStages::COMPUTE,
            ty: wgpu::BindingType::Texture {
                sample_type: wgpu::TextureSampleType::Float { filterable },
                view_dimension: wgpu::TextureViewDimension::D2,
                multisampled: false,
            },
            count: None,
        };
        let make_texture = || {
            let size = wgpu::Extent3d {
                width: tex.size,
                height: tex.size,
                depth_or_array_layers: 1,
            };
            let t = ctx.device.create_texture(&wgpu::TextureDescriptor {
                label: Some("metric texture"),
                size,
                mip_level_count: 1,
                sample_count: 1,
                dimension: wgpu::TextureDimension::D2,
                format,
                usage: wgpu::TextureUsages::TEXTURE_BINDING | wgpu::TextureUsages::COPY_DST,
                view_formats: &[],
            });
            let (bytes, texel_bytes): (Vec<u8>, u32) = match precision {
                TexelPrecision::F32 => (bytemuck::cast_slice(&tex.texels).to_vec(), 16),
                TexelPrecision::F16 => (bytemuck::cast_slice(&tex.texels_f16()).to_vec(), 8),
            };
            ctx.queue.write_texture(
                wgpu::TexelCopyTextureInfo {
                    texture: &t,
                    mip_level: 0,
                    origin: wgpu::Origin3d::ZERO,
                    aspect: wgpu::TextureAspect::All,
                },
                &bytes,
                wgpu::TexelCopyBufferLayout {
                    offset: 0,
                    bytes_per_row: Some(tex.size * texel_bytes),
                    rows_per_image: Some(tex.size),
                },
                size,
            );
            t.create_view(&wgpu::TextureViewDescriptor::default())
        };
        let (metric_layout, metric_group) = match sampling {
            Sampling::Hardware => {
                let layout =
                    ctx.device
                        .create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
                            label: Some("smooth metric (hardware)"),
                            entries: &[
                                uniform_entry,
                                texture_entry(true),
                                wgpu::BindGroupLayoutEntry {
                                    binding: 2,
                                    visibility: wgpu::ShaderStages::COMPUTE,
                                    ty: wgpu::BindingType::Sampler(
                                        wgpu::SamplerBindingType::Filtering,
                                    ),
                                    count: None,
                                },
                            ],
                        });
                let view = make_texture();
                let sampler = ctx.device.create_sampler(&wgpu::SamplerDescriptor {
                    label: Some("metric sampler"),
                    address_mode_u: wgpu::AddressMode::ClampToEdge,
                    address_mode_v: wgpu::AddressMode::ClampToEdge,
                    mag_filter: wgpu::FilterMode::Linear,
                    min_filter: wgpu::FilterMode::Linear,
                    ..Default::default()
                });
                let group = ctx.device.create_bind_group(&wgpu::BindGroupDescriptor {
                    label: Some("smooth metric (hardware)"),
                    layout: &layout,
                    entries: &[
                        wgpu::BindGroupEntry {
                            binding: 0,
                            resource: params_buf.as_entire_binding(),
                        },
                        wgpu::BindGroupEntry {
                            binding: 1,
                            resource: wgpu::BindingResource::TextureView(&view),
                        },
                        wgpu::BindGroupEntry {
                            binding: 2,
                            resource: wgpu::BindingResource::Sampler(&sampler),
                        },
                    ],
                });
                (layout, group)
            }
            Sampling::Shader => {
                let layout =
                    ctx.device
                        .create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
                            label: Some("smooth metric (texel)"),
                            entries: &[uniform_entry, texture_entry(false)],
                        });
                let view = make_texture();
                let group = ctx.device.create_bind_group(&wgpu::BindGroupDescriptor {
                    label: Some("smooth metric (texel)"),
                    layout: &layout,
                    entries: &[
                        wgpu::BindGroupEntry {
                            binding: 0,
                            resource: params_buf.as_entire_binding(),
                        },
                        wgpu::BindGroupEntry {
                            binding: 1,
                            resource: wgpu::BindingResource::TextureView(&view),
                        },
                    ],
                });
                (layout, group)
            }
            Sampling::Buffer => {
                let texels = storage_from(ctx, "metric texels", &tex.texels)?;
                let layout =
                    ctx.device
                        .create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
                            label: Some("smooth metric (buffer)"),
                            entries: &[
                                uniform_entry,
                                wgpu::BindGroupLayoutEntry {
                                    binding: 1,
                                    visibility: wgpu::ShaderStages::COMPUTE,
                                    ty: wgpu::BindingType::Buffer {
                                        ty: wgpu::BufferBindingType::Storage { read_only: true },
                                        has_dynamic_offset: false,
                                        min_binding_size: None,
                                    },
                                    count: None,
                                },
                            ],
                        });
                let group = ctx.device.create_bind_group(&wgpu::BindGroupDescriptor {
                    label: Some("smooth metric (buffer)"),
                    layout: &layout,
                    entries: &[
                        wgpu::BindGroupEntry {
                            binding: 0,
                            resource: params_buf.as_entire_binding(),
                        },
                        wgpu::BindGroupEntry {
                            binding: 1,
                            resource: texels.as_entire_binding(),
                        },
                    ],
                });
                (layout, group)
            }
        };
        let rl = range_layout(&ctx.device);
        let pipeline = compute_pipeline(
            &ctx.device,
            sampling.kernel(),
            &[&data_layout, &rl, &metric_layout],
            &[],
        )?;
        let ranges = RangeSet::from_offsets(ctx, &rl, &schedule.offsets)?;
        let grids = grids(ctx, &ranges)?;
        let colors_of_slots = (0..schedule.num_colors())
            .flat_map(|c| std::iter::repeat_n(c as u32, schedule.color(c).len()))
            .collect();
        Ok(GpuSmoother {
            sampling,
            precision,
            n,
            free: layout.free(),
            positions,
            pipeline,
            data_group,
            metric_group,
            range_layout: rl,
            ranges,
            grids,
            vertex_of: layout.vertex_of,
            colors_of_slots,
            readback: Readback::new(),
        })
    }

    pub fn sampling(&self) -> Sampling {
        self.sampling
    }

    /// Precision of the texels the kernel reads (f16 only for textures on adapters without
    /// FLOAT32_FILTERABLE).
    pub fn precision(&self) -> TexelPrecision {
        self.precision
    }

    /// Number of vertices moved per iteration.
    pub fn free_vertices(&self) -> usize {
        self.free
    }

    /// Record `iterations` sweeps over `grids` (ranges of `ranges`) into `pass`.
    fn record(
        &self,
        pass: &mut wgpu::ComputePass<'_>,
        ranges: &RangeSet,
        grids: &[(usize, u32, u32)],
        iterations: usize,
    ) {
        pass.set_pipeline(&self.pipeline);
        pass.set_bind_group(0, &self.data_group, &[]);
        pass.set_bind_group(2, &self.metric_group, &[]);
        for _ in 0..iterations {
            for &(i, x, y) in grids {
                ranges.bind(pass, i);
                pass.dispatch_workgroups(x, y, 1);
            }
        }
    }

    /// Run `iterations` sweeps (one dispatch per color each).
    pub fn run(&mut self, ctx: &GpuContext, iterations: usize) -> Result<RunTiming> {
        let submits = iterations.div_ceil(ITERATIONS_PER_SUBMIT);
        let mut timer = PassTimer::new(ctx, submits.clamp(1, TIMED_SUBMITS) as u32);
        let start = Instant::now();
        let mut kernel = 0.0;
        let mut wall_seconds = 0.0;
        let mut done = 0;
        loop {
            timer.reset();
            let group_end = iterations.min(done + TIMED_SUBMITS * ITERATIONS_PER_SUBMIT);
            while done < group_end {
                let k = (group_end - done).min(ITERATIONS_PER_SUBMIT);
                done += k;
                let mut enc = ctx
                    .device
                    .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                        label: Some("smooth iterations"),
                    });
                {
                    let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
                        label: Some("smooth sweeps"),
                        timestamp_writes: timer.next_pass(),
                    });
                    self.record(&mut pass, &self.ranges, &self.grids, k);
                }
                if done == group_end {
                    timer.resolve(&mut enc);
                }
                ctx.queue.submit([enc.finish()]);
            }
            if done == iterations {
                ctx.wait()?;
                wall_seconds = start.elapsed().as_secs_f64();
            }
            if timer.uses_timestamps() && group_end > 0 {
                kernel += timer.pass_seconds(ctx)?.iter().sum::<f64>();
            }
            if done == iterations {
                break;
            }
        }
        Ok(RunTiming {
            wall_seconds,
            kernel_seconds: timer.uses_timestamps().then_some(kernel),
        })
    }

    /// One sweep with one dispatch per vertex, in slot order: the sequential color-by-color
    /// sweep the parallel one must equal (a race-freedom check for tests).
    pub fn run_sequential(&mut self, ctx: &GpuContext) -> Result<()> {
        let ranges: Vec<ItemRange> = self
            .colors_of_slots
            .iter()
            .enumerate()
            .map(|(k, &c)| ItemRange {
                first: k as u32,
                count: 1,
                color: c,
                pad: 0,
            })
            .collect();
        let one_by_one = RangeSet::new(ctx, &self.range_layout, ranges)?;
        let grids = grids(ctx, &one_by_one)?;
        let mut enc = ctx
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("smooth sequential sweep"),
            });
        {
            let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("smooth sequential sweep"),
                timestamp_writes: None,
            });
            self.record(&mut pass, &one_by_one, &grids, 1);
        }
        ctx.queue.submit([enc.finish()]);
        ctx.wait()
    }

    /// Current positions in the caller's numbering (f32, as the kernel holds them).
    pub fn positions(&mut self, ctx: &GpuContext) -> Result<Vec<[f32; 2]>> {
        let by_slot: Vec<[f32; 2]> = self.readback.read_all(ctx, &self.positions, self.n)?;
        let mut out = vec![[0.0f32; 2]; self.n];
        for (&v, p) in self.vertex_of.iter().zip(by_slot) {
            out[v as usize] = p;
        }
        Ok(out)
    }

    /// Current positions widened to f64.
    pub fn positions_f64(&mut self, ctx: &GpuContext) -> Result<Vec<[f64; 2]>> {
        Ok(self
            .positions(ctx)?
            .iter()
            .map(|p| [p[0] as f64, p[1] as f64])
            .collect())
    }

    /// Replace the positions (caller's numbering, rounded to f32).
    pub fn set_positions(&self, ctx: &GpuContext, pos: &[[f64; 2]]) -> Result<()> {
        if pos.len() != self.n {
            return Err(Error::Invalid(format!(
                "{} positions for {} vertices",
                pos.len(),
                self.n
            )));
        }
        let p32 = slot_positions(&self.vertex_of, pos);
        ctx.queue
            .write_buffer(&self.positions, 0, bytemuck::cast_slice(&p32));
        Ok(())
    }

    /// The free vertices (caller's numbering) in the order the kernels see them: schedule
    /// colors in order, each sorted by the Morton key of its starting position.
    pub fn order(&self) -> &[u32] {
        &self.vertex_of[..self.free]
    }
}

/// Positions rounded to f32 in slot order.
pub(crate) fn slot_positions(vertex_of: &[u32], pos: &[[f64; 2]]) -> Vec<[f32; 2]> {
    vertex_of
        .iter()
        .map(|&v| {
            let p = pos[v as usize];
            [p[0] as f32, p[1] as f32]
        })
        .collect()
}

/// The workgroup grid of each non-empty range.
fn grids(ctx: &GpuContext, ranges: &RangeSet) -> Result<Vec<(usize, u32, u32)>> {
    ranges
        .ranges()
        .iter()
        .enumerate()
        .filter(|(_, r)| r.count > 0)
        .map(|(i, r)| {
            let (x, y) = grid_for(
                r.count,
                WORKGROUP_SIZE,
                ctx.limits.max_compute_workgroups_per_dimension,
            )?;
            Ok((i, x, y))
        })
        .collect()
}

/// A smoother on an opened backend (wgpu or CUDA): what `chromaflow smooth`, `bench smooth`
/// and `parity` drive. Positions go in and come out in the caller's numbering.
pub trait SmoothDevice {
    /// The device the kernels run on.
    fn device_name(&self) -> String;
    /// Precision of the texels the kernel reads.
    fn precision(&self) -> TexelPrecision;
    /// Number of vertices moved per iteration.
    fn free_vertices(&self) -> usize;
    /// Run `iterations` sweeps (one launch per color each) and wait for them.
    fn run(&mut self, iterations: usize) -> Result<RunTiming>;
    /// Current positions widened to f64.
    fn positions_f64(&mut self) -> Result<Vec<[f64; 2]>>;
    /// Replace the positions (rounded to f32).
    fn set_positions(&mut self, pos: &[[f64; 2]]) -> Result<()>;
}

/// A [`GpuSmoother`] with the context it runs on.
pub struct WgpuSmoothDevice<'a> {
    ctx: &'a GpuContext,
    smoother: GpuSmoother,
}

impl SmoothDevice for WgpuSmoothDevice<'_> {
    fn device_name(&self) -> String {
        self.ctx.info.name.clone()
    }
    fn precision(&self) -> TexelPrecision {
        self.smoother.precision()
    }
    fn free_vertices(&self) -> usize {
        self.smoother.free_vertices()
    }
    fn run(&mut self, iterations: usize) -> Result<RunTiming> {
        self.smoother.run(self.ctx, iterations)
    }
    fn positions_f64(&mut self) -> Result<Vec<[f64; 2]>> {
        self.smoother.positions_f64(self.ctx)
    }
    fn set_positions(&mut self, pos: &[[f64; 2]]) -> Result<()> {
        self.smoother.set_positions(self.ctx, pos)
    }
}

/// A smoother for `topo` on `backend` (wgpu or CUDA), behind [`SmoothDevice`].
pub fn new_smooth_device<'a>(
    backend: &'a Backend,
    topo: &SmoothTopology,
    schedule: &Schedule,
    tex: &MetricTexture,
    sampling: Sampling,
    params: &SmoothParams,
    pos: &[[f64; 2]],
) -> Result<Box<dyn SmoothDevice + 'a>> {
    match crate::gpu::legacy(backend) {
        crate::gpu::Device::Wgpu(ctx) => Ok(Box::new(WgpuSmoothDevice {
            ctx,
            smoother: GpuSmoother::new(ctx, topo, schedule, tex, sampling, params, pos)?,
        })),
        #[cfg(feature = "cuda")]
        crate::gpu::Device::Cuda(dev) => Ok(Box::new(crate::cuda::smooth::CudaSmoother::new(
            dev, topo, schedule, tex, sampling, params, pos,
        )?)),
    }
}
