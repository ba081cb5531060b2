//! The wgpu driver: positions, cavities and the color schedule on the device, the metric as a
//! texture (hardware filter or textureLoad) or a storage buffer, one dispatch per color per
//! iteration (`shaders/smooth_{hardware,texel,buffer}.wgsl` with
//! `shaders/common/smooth_relocate.wgsl`; CPU reference in [`super::cpu`]).
//!
//! Many iterations are recorded per submit, one compute pass per iteration, each timed with
//! timestamp queries when the adapter has them.

use super::cpu::{Schedule, SmoothTopology, VertexKind};
use super::texture::{MetricTexture, TexelPrecision};
use super::{Sampling, SmoothParams};
use crate::error::{Error, Result};
use crate::gpu::buffers::{bind_buffers, storage_from, storage_layout, Readback};
use crate::gpu::context::GpuContext;
use crate::gpu::dispatch::{range_layout, ItemRange, RangeSet};
use crate::gpu::shaders::compute_pipeline;
use crate::gpu::timing::PassTimer;
use std::time::Instant;
use wgpu::util::DeviceExt;

/// Iterations recorded per submit.
const ITERATIONS_PER_SUBMIT: usize = 50;

/// Mirrors `SmoothParams` in shaders/common/smooth_relocate.wgsl.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, bytemuck::Pod, bytemuck::Zeroable)]
struct GpuParams {
    lo: [f32; 2],
    inv_extent: [f32; 2],
    size: u32,
    first_boundary_color: u32,
    max_halvings: u32,
    nbr_offsets: u32,
    sigma: f32,
    relax: f32,
    min_shape: f32,
    nbr: u32,
    ve_offsets: u32,
    ve: u32,
    tris: u32,
    bpairs: u32,
    shape_floor: f32,
    pad: [u32; 3],
}

/// Timing of [`GpuSmoother::run`].
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize)]
pub struct RunTiming {
    /// Wall time from the first submit to the end of the last one.
    pub wall_seconds: f64,
    /// Sum of the per-iteration pass times from timestamp queries (None without them).
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
    order: Vec<u32>,
    colors_of_order: Vec<u32>,
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

fn cavity_array(topo: &SmoothTopology) -> Result<(Vec<u32>, [u32; 6])> {
    let n = topo.num_vertices();
    let mut data: Vec<u32> = Vec::new();
    let mut bases = [0u32; 6];
    let mut push = |data: &mut Vec<u32>, slot: usize, part: &[u32]| {
        bases[slot] = data.len() as u32;
        data.extend_from_slice(part);
    };
    push(&mut data, 0, &topo.neighbors.offsets);
    push(&mut data, 1, &topo.neighbors.indices);
    push(&mut data, 2, &topo.vertex_elements.offsets);
    push(&mut data, 3, &topo.vertex_elements.indices);
    let tris: Vec<u32> = topo.triangles.iter().flatten().copied().collect();
    push(&mut data, 4, &tris);
    let pairs: Vec<u32> = topo
        .kind
        .iter()
        .flat_map(|k| match k {
            VertexKind::Sliding { a, b } => [*a, *b],
            _ => [0, 0],
        })
        .collect();
    push(&mut data, 5, &pairs);
    if data.len() > u32::MAX as usize || n > u32::MAX as usize / 2 {
        return Err(Error::Invalid(format!(
            "mesh too large for 32-bit cavity indices ({} entries)",
            data.len()
        )));
    }
    Ok((data, bases))
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
        let (cavity, b) = cavity_array(topo)?;
        let gp = GpuParams {
            lo: [tex.lo[0] as f32, tex.lo[1] as f32],
            inv_extent: [(1.0 / tex.extent[0]) as f32, (1.0 / tex.extent[1]) as f32],
            size: tex.size,
            first_boundary_color: schedule.first_boundary_color as u32,
            max_halvings: params.max_halvings,
            nbr_offsets: b[0],
            sigma: params.sigma as f32,
            relax: params.relax as f32,
            min_shape: params.min_shape as f32,
            nbr: b[1],
            ve_offsets: b[2],
            ve: b[3],
            tris: b[4],
            bpairs: b[5],
            shape_floor: params.shape_floor as f32,
            pad: [0; 3],
        };
        let pos32: Vec<[f32; 2]> = pos.iter().map(|p| [p[0] as f32, p[1] as f32]).collect();
        let positions = storage_from(ctx, "smooth positions", &pos32)?;
        let order_buf = storage_from(ctx, "smooth order", &schedule.order)?;
        let cavity_buf = storage_from(ctx, "smooth cavities", &cavity)?;
        let params_buf = ctx
            .device
            .create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: Some("smooth params"),
                contents: bytemuck::bytes_of(&gp),
                usage: wgpu::BufferUsages::UNIFORM,
            });
        let data_layout = storage_layout(&ctx.device, "smooth data", &[false, true, true]);
        let data_group = bind_buffers(
            &ctx.device,
            "smooth data",
            &data_layout,
            &[&positions, &order_buf, &cavity_buf],
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
        let colors_of_order = (0..schedule.num_colors())
            .flat_map(|c| std::iter::repeat_n(c as u32, schedule.color(c).len()))
            .collect();
        Ok(GpuSmoother {
            sampling,
            precision,
            n,
            free: schedule.order.len(),
            positions,
            pipeline,
            data_group,
            metric_group,
            range_layout: rl,
            ranges,
            order: schedule.order.clone(),
            colors_of_order,
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

    fn record(
        &self,
        ctx: &GpuContext,
        pass: &mut wgpu::ComputePass<'_>,
        ranges: &RangeSet,
    ) -> Result<()> {
        pass.set_bind_group(2, &self.metric_group, &[]);
        for i in 0..ranges.len() {
            if ranges.ranges()[i].count == 0 {
                continue;
            }
            ranges.dispatch_one(ctx, pass, &self.pipeline, &self.data_group, i)?;
            pass.set_bind_group(2, &self.metric_group, &[]);
        }
        Ok(())
    }

    /// Run `iterations` sweeps (one dispatch per color each).
    pub fn run(&mut self, ctx: &GpuContext, iterations: usize) -> Result<RunTiming> {
        let batch = iterations.clamp(1, ITERATIONS_PER_SUBMIT);
        let mut timer = PassTimer::new(ctx, batch as u32);
        let start = Instant::now();
        let mut kernel = 0.0;
        let mut done = 0;
        while done < iterations {
            let k = (iterations - done).min(batch);
            timer.reset();
            let mut enc = ctx
                .device
                .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                    label: Some("smooth iterations"),
                });
            for _ in 0..k {
                let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
                    label: Some("smooth sweep"),
                    timestamp_writes: timer.next_pass(),
                });
                self.record(ctx, &mut pass, &self.ranges)?;
            }
            timer.resolve(&mut enc);
            ctx.queue.submit([enc.finish()]);
            if timer.uses_timestamps() {
                kernel += timer.pass_seconds(ctx)?.iter().sum::<f64>();
            } else {
                ctx.wait()?;
            }
            done += k;
        }
        ctx.wait()?;
        Ok(RunTiming {
            wall_seconds: start.elapsed().as_secs_f64(),
            kernel_seconds: timer.uses_timestamps().then_some(kernel),
        })
    }

    /// One sweep with one dispatch per vertex, in schedule order: the sequential
    /// color-by-color sweep the parallel one must equal (a race-freedom check for tests).
    pub fn run_sequential(&mut self, ctx: &GpuContext) -> Result<()> {
        let ranges: Vec<ItemRange> = self
            .colors_of_order
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
            self.record(ctx, &mut pass, &one_by_one)?;
        }
        ctx.queue.submit([enc.finish()]);
        ctx.wait()
    }

    /// Current positions (f32, as the kernel holds them).
    pub fn positions(&mut self, ctx: &GpuContext) -> Result<Vec<[f32; 2]>> {
        self.readback.read_all(ctx, &self.positions, self.n)
    }

    /// Current positions widened to f64.
    pub fn positions_f64(&mut self, ctx: &GpuContext) -> Result<Vec<[f64; 2]>> {
        Ok(self
            .positions(ctx)?
            .iter()
            .map(|p| [p[0] as f64, p[1] as f64])
            .collect())
    }

    /// Replace the positions (rounded to f32).
    pub fn set_positions(&self, ctx: &GpuContext, pos: &[[f64; 2]]) -> Result<()> {
        if pos.len() != self.n {
            return Err(Error::Invalid(format!(
                "{} positions for {} vertices",
                pos.len(),
                self.n
            )));
        }
        let p32: Vec<[f32; 2]> = pos.iter().map(|p| [p[0] as f32, p[1] as f32]).collect();
        ctx.queue
            .write_buffer(&self.positions, 0, bytemuck::cast_slice(&p32));
        Ok(())
    }

    /// The free vertices in schedule order.
    pub fn order(&self) -> &[u32] {
        &self.order
    }
}
