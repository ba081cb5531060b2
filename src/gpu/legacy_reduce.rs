//! GPU min-reduction (`shaders/reduce_min.wgsl`): a chain of passes, each shrinking its input
//! by 256 (64 threads x 4 items), recorded into the caller's encoder so a solver's time step
//! never leaves the GPU. Used for CFL time steps.

use crate::error::Result;
use crate::gpu::buffers::{bind_buffers, storage_layout, storage_zeroed, Readback};
use crate::gpu::context::GpuContext;
use crate::gpu::dispatch::{grid_for, range_layout, RangeSet, WORKGROUP_SIZE};
use crate::gpu::shaders::compute_pipeline;

/// Inputs reduced by one workgroup of one pass.
pub const ITEMS_PER_GROUP: u32 = WORKGROUP_SIZE * 4;

/// A prepared reduction of a fixed-size f32 buffer to its minimum.
pub struct MinReduction {
    pipeline: wgpu::ComputePipeline,
    stages: Vec<(wgpu::BindGroup, RangeSet, u32)>,
    buffers: Vec<wgpu::Buffer>,
}

impl MinReduction {
    /// Prepare the passes that reduce the first `n` values of `input`.
    pub fn new(ctx: &GpuContext, input: &wgpu::Buffer, n: u32) -> Result<MinReduction> {
        let data_layout = storage_layout(&ctx.device, "reduce data", &[true, false]);
        let rl = range_layout(&ctx.device);
        let pipeline = compute_pipeline(&ctx.device, "reduce_min", &[&data_layout, &rl], &[])?;
        let mut stages = Vec::new();
        let mut buffers: Vec<wgpu::Buffer> = Vec::new();
        let mut len = n.max(1);
        loop {
            let groups = len.div_ceil(ITEMS_PER_GROUP);
            let out = storage_zeroed::<f32>(ctx, "reduce partial", groups as usize)?;
            let src = buffers.last().unwrap_or(input);
            let bg = bind_buffers(&ctx.device, "reduce stage", &data_layout, &[src, &out]);
            let ranges = RangeSet::single(ctx, &rl, len)?;
            stages.push((bg, ranges, groups));
            buffers.push(out);
            if groups == 1 {
                break;
            }
            len = groups;
        }
        Ok(MinReduction {
            pipeline,
            stages,
            buffers,
        })
    }

    /// The one-element buffer that holds the minimum after [`MinReduction::record`].
    pub fn result(&self) -> &wgpu::Buffer {
        self.buffers.last().expect("at least one stage")
    }

    /// Record the passes into `pass`.
    pub fn record(&self, ctx: &GpuContext, pass: &mut wgpu::ComputePass<'_>) -> Result<()> {
        for (bg, ranges, groups) in &self.stages {
            let (x, y) = grid_for(
                *groups * WORKGROUP_SIZE,
                WORKGROUP_SIZE,
                ctx.limits.max_compute_workgroups_per_dimension,
            )?;
            pass.set_pipeline(&self.pipeline);
            pass.set_bind_group(0, bg, &[]);
            ranges.bind(pass, 0);
            pass.dispatch_workgroups(x, y, 1);
        }
        Ok(())
    }
}

/// Minimum of `values` on the GPU (convenience for tests and one-off use).
pub fn gpu_min(ctx: &GpuContext, values: &[f32]) -> Result<f32> {
    let input = crate::gpu::buffers::storage_from(ctx, "min input", values)?;
    let red = MinReduction::new(ctx, &input, values.len() as u32)?;
    let mut enc = ctx
        .device
        .create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("min") });
    {
        let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: Some("min"),
            timestamp_writes: None,
        });
        red.record(ctx, &mut pass)?;
    }
    ctx.queue.submit([enc.finish()]);
    let v: Vec<f32> = Readback::new().read_all(ctx, red.result(), 1)?;
    Ok(v[0])
}
