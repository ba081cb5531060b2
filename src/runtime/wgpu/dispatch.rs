//! Per-color dispatch: given items (edges) sorted by color and the color offsets, record one
//! dispatch per color in one compute pass. Each dispatch sees its color's item range through a
//! dynamic offset into one uniform buffer, so a whole sweep is a handful of commands and many
//! sweeps fit in one submit.

use super::context::GpuContext;
use crate::error::{Error, Result};

pub use crate::runtime::{ItemRange, WORKGROUP_SIZE};

/// Workgroup grid (x, y) covering `threads` threads of `wg` each, spilling into y once x would
/// exceed `max_per_dim` (65535 on most adapters). Threads past `threads` must exit early.
pub fn grid_for(threads: u32, wg: u32, max_per_dim: u32) -> Result<(u32, u32)> {
    let groups = threads.div_ceil(wg);
    if groups <= max_per_dim {
        return Ok((groups.max(1), 1));
    }
    let x = max_per_dim;
    let y = groups.div_ceil(x);
    if y > max_per_dim {
        return Err(Error::Gpu(format!(
            "{threads} threads need {groups} workgroups, more than {max_per_dim}^2"
        )));
    }
    Ok((x, y))
}

/// The bind group layout of group 1 (the item range) shared by all per-range kernels.
pub fn range_layout(device: &wgpu::Device) -> wgpu::BindGroupLayout {
    device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
        label: Some("item range"),
        entries: &[wgpu::BindGroupLayoutEntry {
            binding: 0,
            visibility: wgpu::ShaderStages::COMPUTE,
            ty: wgpu::BindingType::Buffer {
                ty: wgpu::BufferBindingType::Uniform,
                has_dynamic_offset: true,
                min_binding_size: wgpu::BufferSize::new(std::mem::size_of::<ItemRange>() as u64),
            },
            count: None,
        }],
    })
}

/// A set of item ranges (e.g. the colors of an edge list) in one uniform buffer.
pub struct RangeSet {
    ranges: Vec<ItemRange>,
    stride: u32,
    bind_group: wgpu::BindGroup,
    buffer: wgpu::Buffer,
}

impl RangeSet {
    /// Ranges from CSR-style offsets: range c is items offsets[c] .. offsets[c + 1].
    pub fn from_offsets(
        ctx: &GpuContext,
        layout: &wgpu::BindGroupLayout,
        offsets: &[u32],
    ) -> Result<RangeSet> {
        if offsets.len() < 2 || offsets.windows(2).any(|w| w[1] < w[0]) {
            return Err(Error::Invalid(format!(
                "color offsets must be non-decreasing with at least one color, got {offsets:?}"
            )));
        }
        let ranges: Vec<ItemRange> = offsets
            .windows(2)
            .enumerate()
            .map(|(c, w)| ItemRange {
                first: w[0],
                count: w[1] - w[0],
                color: c as u32,
                pad: 0,
            })
            .collect();
        Self::new(ctx, layout, ranges)
    }

    /// One range covering items 0 .. n (for per-cell kernels).
    pub fn single(ctx: &GpuContext, layout: &wgpu::BindGroupLayout, n: u32) -> Result<RangeSet> {
        Self::from_offsets(ctx, layout, &[0, n])
    }

    /// Ranges given explicitly.
    pub fn new(
        ctx: &GpuContext,
        layout: &wgpu::BindGroupLayout,
        ranges: Vec<ItemRange>,
    ) -> Result<RangeSet> {
        let align = ctx.limits.min_uniform_buffer_offset_alignment.max(16);
        let stride = (std::mem::size_of::<ItemRange>() as u32).next_multiple_of(align);
        let bytes = Self::pack(&ranges, stride);
        let buffer = wgpu::util::DeviceExt::create_buffer_init(
            &ctx.device,
            &wgpu::util::BufferInitDescriptor {
                label: Some("item ranges"),
                contents: &bytes,
                usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            },
        );
        let bind_group = ctx.device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("item ranges"),
            layout,
            entries: &[wgpu::BindGroupEntry {
                binding: 0,
                resource: wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                    buffer: &buffer,
                    offset: 0,
                    size: wgpu::BufferSize::new(std::mem::size_of::<ItemRange>() as u64),
                }),
            }],
        });
        Ok(RangeSet {
            ranges,
            stride,
            bind_group,
            buffer,
        })
    }

    fn pack(ranges: &[ItemRange], stride: u32) -> Vec<u8> {
        let mut bytes = vec![0u8; stride as usize * ranges.len().max(1)];
        for (i, r) in ranges.iter().enumerate() {
            let at = i * stride as usize;
            bytes[at..at + 16].copy_from_slice(bytemuck::bytes_of(r));
        }
        bytes
    }

    /// Replace the ranges (same number of them) for the next submit, without reallocating.
    pub fn update(&mut self, ctx: &GpuContext, ranges: Vec<ItemRange>) -> Result<()> {
        if ranges.len() != self.ranges.len() {
            return Err(Error::Invalid(format!(
                "range set holds {} ranges, update gave {}",
                self.ranges.len(),
                ranges.len()
            )));
        }
        ctx.queue
            .write_buffer(&self.buffer, 0, &Self::pack(&ranges, self.stride));
        self.ranges = ranges;
        Ok(())
    }

    pub fn ranges(&self) -> &[ItemRange] {
        &self.ranges
    }

    pub fn len(&self) -> usize {
        self.ranges.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ranges.is_empty()
    }

    /// Bind range `i` as group 1 (for kernels whose grid the caller computes).
    pub fn bind(&self, pass: &mut wgpu::ComputePass<'_>, i: usize) {
        pass.set_bind_group(1, &self.bind_group, &[i as u32 * self.stride]);
    }

    /// Record range `i` of `pipeline`: group 0 = `data`, group 1 = the range.
    pub fn dispatch_one(
        &self,
        ctx: &GpuContext,
        pass: &mut wgpu::ComputePass<'_>,
        pipeline: &wgpu::ComputePipeline,
        data: &wgpu::BindGroup,
        i: usize,
    ) -> Result<()> {
        let r = self.ranges[i];
        if r.count == 0 {
            return Ok(());
        }
        let (x, y) = grid_for(
            r.count,
            WORKGROUP_SIZE,
            ctx.limits.max_compute_workgroups_per_dimension,
        )?;
        pass.set_pipeline(pipeline);
        pass.set_bind_group(0, data, &[]);
        self.bind(pass, i);
        pass.dispatch_workgroups(x, y, 1);
        Ok(())
    }

    /// Record every range in order: one dispatch per color. Dispatches in one pass are
    /// separate usage scopes, so color c + 1 sees the writes of color c.
    pub fn dispatch_all(
        &self,
        ctx: &GpuContext,
        pass: &mut wgpu::ComputePass<'_>,
        pipeline: &wgpu::ComputePipeline,
        data: &wgpu::BindGroup,
    ) -> Result<()> {
        for i in 0..self.ranges.len() {
            self.dispatch_one(ctx, pass, pipeline, data, i)?;
        }
        Ok(())
    }
}
