//! GPU exclusive prefix sum of u32 in two launches for any count that fits u32
//! (`scan_blocks` + `scan_add`, WGSL and CUDA twins). Launch 1 scans blocks of [`SCAN_BLOCK`]
//! items in workgroup memory and stores each block's total; the last workgroup to finish (an
//! atomic ticket, no workgroup ever waits on another) scans the block totals in place, tile by
//! tile, and writes the grand total. Launch 2 adds the block offsets; a scan of at most one
//! block needs only launch 1, and a caller's own kernel may add the offsets instead
//! ([`PrefixSum::record_blocks`]). Recorded into the caller's plan; the grand total, and with
//! parts ([`PrefixSum::with_parts`]) the prefix at every multiple of a stride, stay on the
//! device ([`PrefixSum::total`]), final after launch 1. CPU reference: [`exclusive_scan_cpu`].

use super::{Arg, Buffer, ItemRange, Kernel, OwnedKernelSpec, PlanBuilder, Runtime};
use crate::args;
use crate::error::{Error, Result};

/// Items scanned by one workgroup ([`SCAN_THREADS`] threads x 4 items); also the block totals
/// the last workgroup scans per pass of its loop.
pub const SCAN_BLOCK: u32 = 1024;

/// Threads of a scan workgroup (SCAN_THREADS in shaders/common/scan_blocks.wgsl and its CUDA
/// twin), four items each. With 64 threads of 16 items a thread's chain of loads, workgroup
/// memory and stores was 16 long; a scan of one block on an H200 took 10.2 us on Vulkan and
/// 8.5 with 256 threads of 4 (BENCHMARKS.md, session 17).
pub const SCAN_THREADS: u32 = 256;

/// CPU reference: `out[i] = sum_{k < i} input[k]` (wrapping like the GPU's u32).
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

/// Blocks of a scan of `n` items: ceil(n / [`SCAN_BLOCK`]), at least one (a scan of nothing
/// still writes its total, 0).
fn blocks(n: u32) -> u32 {
    n.div_ceil(SCAN_BLOCK).max(1)
}

/// Words of the sums of a scan of up to `capacity` items with parts every `stride` items: the
/// total, then the prefix at k stride for 1 <= k <= (capacity - 1) / stride.
fn sums_words(capacity: u32, stride: u32) -> u32 {
    match stride {
        0 => 1,
        s => 1 + capacity.saturating_sub(1) / s,
    }
}

/// Launches a scan of `n` items records: 1 up to one block, else 2.
pub fn scan_launches(n: u32) -> usize {
    if n > SCAN_BLOCK {
        2
    } else {
        1
    }
}

/// A prepared exclusive scan of up to `capacity` values of an input buffer into an output
/// buffer.
pub struct PrefixSum {
    blocks: Kernel,
    add: Kernel,
    input: Buffer,
    output: Buffer,
    /// The block totals, scanned in place by launch 1's last workgroup.
    block_sums: Buffer,
    /// Word 0: the grand total; word k >= 1: the prefix at item k `stride`.
    sums: Buffer,
    /// Items per part (0: no parts).
    stride: u32,
    /// Word 0: launch 1's workgroups that have finished their block; 0 between scans (the last
    /// workgroup resets it after reading it, and it starts zeroed).
    ticket: Buffer,
    capacity: u32,
}

impl PrefixSum {
    /// Prepare a scan of up to `capacity` values of `input` into `output`.
    pub fn new(rt: &Runtime, input: &Buffer, output: &Buffer, capacity: u32) -> Result<PrefixSum> {
        PrefixSum::with_parts(rt, input, output, capacity, 0)
    }

    /// The kernels a prefix sum builds (stems, no constants), for building them ahead
    /// ([`Runtime::kernel_list`]).
    pub fn kernel_specs() -> [OwnedKernelSpec; 2] {
        [("scan_blocks", vec![]), ("scan_add", vec![])]
    }

    /// Prepare a scan that also leaves the exclusive prefix at every multiple of `stride` in
    /// [`PrefixSum::total`]: word k = `sum_{i < k stride} input[i]` for `1 <= k <= (n - 1) /
    /// stride` (`stride` 0: none), final with the total after launch 1.
    pub fn with_parts(
        rt: &Runtime,
        input: &Buffer,
        output: &Buffer,
        capacity: u32,
        stride: u32,
    ) -> Result<PrefixSum> {
        let [(blocks_stem, _), (add_stem, _)] = PrefixSum::kernel_specs();
        Ok(PrefixSum {
            blocks: rt.kernel(blocks_stem, &[])?,
            add: rt.kernel(add_stem, &[])?,
            input: input.clone(),
            output: output.clone(),
            block_sums: rt.zeroed::<u32>("scan block sums", blocks(capacity) as usize)?,
            sums: rt.zeroed::<u32>("scan sums", sums_words(capacity, stride) as usize)?,
            stride,
            ticket: rt.zeroed::<u32>("scan ticket", 1)?,
            capacity,
        })
    }

    /// The buffer whose element 0 holds the sum of the scanned inputs after the launches ran
    /// (and element k >= 1 the prefix at part k, see [`PrefixSum::with_parts`]).
    pub fn total(&self) -> &Buffer {
        &self.sums
    }

    /// The block offsets after launch 1: the scan of item i is `output[i] +
    /// offsets[i / SCAN_BLOCK]` until launch 2 (or a caller's kernel) adds them.
    pub fn block_offsets(&self) -> &Buffer {
        &self.block_sums
    }

    /// Append the scan of all `capacity` inputs to `plan`.
    pub fn record(&self, plan: &mut PlanBuilder) {
        self.record_first(plan, self.capacity)
            .expect("the capacity fits the prepared block sums");
    }

    /// Append the scan of the first `n` inputs (n <= capacity) to `plan`: [`scan_launches`]`(n)`
    /// launches.
    pub fn record_first(&self, plan: &mut PlanBuilder, n: u32) -> Result<()> {
        self.record_blocks(plan, n)?;
        if n > SCAN_BLOCK {
            plan.launch(
                &self.add,
                &args![self.block_sums, self.output],
                ItemRange::new(SCAN_BLOCK, n - SCAN_BLOCK),
            );
        }
        Ok(())
    }

    /// Append launch 1 alone for the first `n` inputs: the block scans, the total and the
    /// parts, and the [`PrefixSum::block_offsets`]; the caller's next kernel adds the offsets
    /// to the items past the first block (as `scan_add` does) before anything reads them.
    pub fn record_blocks(&self, plan: &mut PlanBuilder, n: u32) -> Result<()> {
        self.record_blocks_with(plan, &self.blocks, &[], n, 0)
    }

    /// [`PrefixSum::record_blocks`] with a caller's kernel built on common/scan_blocks.wgsl
    /// (its bindings first, then `extra`, and `pad` in the range's last word): e.g. amr_scan,
    /// which does the adaptation's bookkeeping in the scan's last workgroup.
    pub fn record_blocks_with(
        &self,
        plan: &mut PlanBuilder,
        kernel: &Kernel,
        extra: &[Arg],
        n: u32,
        pad: u32,
    ) -> Result<()> {
        if n > self.capacity {
            return Err(Error::Invalid(format!(
                "scan prepared for {} items, asked for {n}",
                self.capacity
            )));
        }
        let mut bindings = args![
            self.input,
            self.output,
            self.block_sums,
            self.sums,
            self.ticket
        ]
        .to_vec();
        bindings.extend_from_slice(extra);
        plan.launch_threads(
            kernel,
            &bindings,
            ItemRange {
                first: 0,
                count: n,
                color: self.stride,
                pad,
            },
            blocks(n) * kernel.workgroup_size(),
        );
        Ok(())
    }
}

/// Exclusive scan of `values` on the device and the total (tests and one-off use).
pub fn gpu_exclusive_scan(rt: &Runtime, values: &[u32]) -> Result<(Vec<u32>, u32)> {
    let input = rt.upload("scan input", values)?;
    let output = rt.zeroed::<u32>("scan output", values.len().max(1))?;
    let scan = PrefixSum::new(rt, &input, &output, values.len() as u32)?;
    let mut plan = PlanBuilder::new();
    scan.record(&mut plan);
    rt.run(&rt.prepare(&plan)?, 1)?;
    let out = rt.read::<u32>(&output, 0, values.len())?;
    let total = rt.read::<u32>(scan.total(), 0, 1)?[0];
    Ok((out, total))
}
