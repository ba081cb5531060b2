//! GPU exclusive prefix sum of u32 (`scan_blocks.wgsl` + `scan_add.wgsl`): blocks of 256 are
//! scanned in shared memory, their totals scanned recursively, and the block offsets added
//! back. Recorded into the caller's pass; the grand total stays on the GPU ([`PrefixSum::total`]).
//! CPU reference: [`exclusive_scan_cpu`].

use crate::error::{Error, Result};
use crate::gpu::buffers::{bind_buffers, storage_layout, storage_zeroed};
use crate::gpu::context::GpuContext;
use crate::gpu::dispatch::{grid_for, range_layout, ItemRange, RangeSet, WORKGROUP_SIZE};
use crate::gpu::shaders::compute_pipeline;

/// Items scanned by one workgroup.
pub const SCAN_BLOCK: u32 = 256;

/// CPU reference: out[i] = sum_{k < i} input[k] (wrapping like the GPU's u32).
pub fn exclusive_scan_cpu(input: &[u32]) -> Vec<u32> {
    let mut acc = 0u32;
    input
        .iter()
        .map(|&v| {
            let out = acc;
            acc = acc.wrapping_add(v);
            out
        })
        .collect()
}

/// A prepared scan of the first `n` entries of an input buffer into an output buffer.
pub struct PrefixSum {
    block_pipeline: wgpu::ComputePipeline,
    add_pipeline: wgpu::ComputePipeline,
    /// Per level: block-scan bind group, number of blocks.
    levels: Vec<(wgpu::BindGroup, u32)>,
    /// Per level above the first: add-back bind group, items at that level below.
    adds: Vec<(wgpu::BindGroup, u32)>,
    ranges: RangeSet,
    sums: Vec<wgpu::Buffer>,
    capacity: u32,
}

/// Items per level of a scan of `n` values with `levels` levels: n, ceil(n/256), ...
fn level_sizes(n: u32, levels: usize) -> Vec<u32> {
    let mut sizes = vec![n.max(1)];
    while sizes.len() < levels {
        let last = *sizes.last().expect("non-empty");
        sizes.push(last.div_ceil(SCAN_BLOCK));
    }
    sizes
}

fn level_ranges(sizes: &[u32]) -> Vec<ItemRange> {
    sizes
        .iter()
        .map(|&len| ItemRange {
            first: 0,
            count: len,
            color: 0,
            pad: 0,
        })
        .collect()
}

impl PrefixSum {
    /// Prepare a scan of `n` values of `input` into `output` (both `n` u32 long at least).
    pub fn new(
        ctx: &GpuContext,
        input: &wgpu::Buffer,
        output: &wgpu::Buffer,
        n: u32,
    ) -> Result<PrefixSum> {
        let block_layout = storage_layout(&ctx.device, "scan blocks", &[true, false, false]);
        let add_layout = storage_layout(&ctx.device, "scan add", &[true, false]);
        let rl = range_layout(&ctx.device);
        let block_pipeline =
            compute_pipeline(&ctx.device, "scan_blocks", &[&block_layout, &rl], &[])?;
        let add_pipeline = compute_pipeline(&ctx.device, "scan_add", &[&add_layout, &rl], &[])?;

        // Level 0 scans input -> output; level k scans sums[k-1] in place into scanned[k-1].
        let mut levels_needed = 1;
        while level_sizes(n, levels_needed)
            .last()
            .is_some_and(|&l| l > SCAN_BLOCK)
        {
            levels_needed += 1;
        }
        let sizes = level_sizes(n, levels_needed);
        let mut sums = Vec::new();
        let mut scanned = Vec::new();
        for &len in &sizes {
            sums.push(storage_zeroed::<u32>(
                ctx,
                "scan block sums",
                len.div_ceil(SCAN_BLOCK) as usize,
            )?);
            // Level 0 writes the caller's output; its own slot is never read.
            let out_len = if scanned.is_empty() { 1 } else { len as usize };
            scanned.push(storage_zeroed::<u32>(ctx, "scan level output", out_len)?);
        }
        let mut levels = Vec::new();
        for (k, &len) in sizes.iter().enumerate() {
            let (src, dst) = if k == 0 {
                (input, output)
            } else {
                (&sums[k - 1], &scanned[k])
            };
            let bg = bind_buffers(
                &ctx.device,
                "scan level",
                &block_layout,
                &[src, dst, &sums[k]],
            );
            levels.push((bg, len.div_ceil(SCAN_BLOCK)));
        }
        // Add-back: level k's output gets offsets from level k+1's scanned output.
        let mut adds = Vec::new();
        for k in (0..sizes.len().saturating_sub(1)).rev() {
            let dst = if k == 0 { output } else { &scanned[k] };
            let bg = bind_buffers(
                &ctx.device,
                "scan add",
                &add_layout,
                &[&scanned[k + 1], dst],
            );
            adds.push((bg, sizes[k]));
        }
        let ranges = RangeSet::new(ctx, &rl, level_ranges(&sizes))?;
        let mut sums_all = sums;
        sums_all.extend(scanned);
        Ok(PrefixSum {
            block_pipeline,
            add_pipeline,
            levels,
            adds,
            ranges,
            sums: sums_all,
            capacity: n.max(1),
        })
    }

    /// The buffer whose element 0 holds the sum of all inputs after [`PrefixSum::record`]:
    /// the single block total of the top level.
    pub fn total(&self) -> &wgpu::Buffer {
        &self.sums[self.levels.len() - 1]
    }

    /// Scan only the first `n` inputs (n <= the prepared size) from the next submit on. The
    /// new sizes reach the GPU with that submit (queue writes precede its commands).
    pub fn set_count(&mut self, ctx: &GpuContext, n: u32) -> Result<()> {
        if n > self.capacity {
            return Err(Error::Invalid(format!(
                "scan prepared for {} items, asked for {n}",
                self.capacity
            )));
        }
        let sizes = level_sizes(n, self.levels.len());
        for (level, &len) in self.levels.iter_mut().zip(&sizes) {
            level.1 = len.div_ceil(SCAN_BLOCK);
        }
        let nlev = sizes.len();
        for (j, add) in self.adds.iter_mut().enumerate() {
            add.1 = sizes[nlev - 2 - j];
        }
        self.ranges.update(ctx, level_ranges(&sizes))
    }

    /// Record the scan into `pass`.
    pub fn record(&self, ctx: &GpuContext, pass: &mut wgpu::ComputePass<'_>) -> Result<()> {
        let max = ctx.limits.max_compute_workgroups_per_dimension;
        for (k, (bg, blocks)) in self.levels.iter().enumerate() {
            let (x, y) = grid_for(blocks * WORKGROUP_SIZE, WORKGROUP_SIZE, max)?;
            pass.set_pipeline(&self.block_pipeline);
            pass.set_bind_group(0, bg, &[]);
            self.ranges.bind(pass, k);
            pass.dispatch_workgroups(x, y, 1);
        }
        let nlev = self.levels.len();
        for (j, (bg, items)) in self.adds.iter().enumerate() {
            let level = nlev - 2 - j;
            let (x, y) = grid_for(*items, WORKGROUP_SIZE, max)?;
            pass.set_pipeline(&self.add_pipeline);
            pass.set_bind_group(0, bg, &[]);
            self.ranges.bind(pass, level);
            pass.dispatch_workgroups(x, y, 1);
        }
        Ok(())
    }
}

/// Exclusive scan of `values` on the GPU and the total (convenience for tests).
pub fn gpu_exclusive_scan(ctx: &GpuContext, values: &[u32]) -> Result<(Vec<u32>, u32)> {
    use crate::gpu::buffers::{storage_from, Readback};
    let input = storage_from(ctx, "scan input", values)?;
    let output = storage_zeroed::<u32>(ctx, "scan output", values.len())?;
    let scan = PrefixSum::new(ctx, &input, &output, values.len() as u32)?;
    let mut enc = ctx
        .device
        .create_command_encoder(&wgpu::CommandEncoderDescriptor {
            label: Some("scan"),
        });
    {
        let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: Some("scan"),
            timestamp_writes: None,
        });
        scan.record(ctx, &mut pass)?;
    }
    ctx.queue.submit([enc.finish()]);
    let mut rb = Readback::new();
    let out = rb.read_all(ctx, &output, values.len())?;
    let total = rb.read_all::<u32>(ctx, scan.total(), 1)?[0];
    Ok((out, total))
}
