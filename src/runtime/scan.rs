//! GPU exclusive prefix sum of u32 in two launches for any count that fits u32
//! (`scan_blocks` + `scan_add`, WGSL and CUDA twins). Launch 1 scans blocks of [`SCAN_BLOCK`]
//! items in workgroup memory and stores each block's total; the last workgroup to finish (an
//! atomic ticket, no workgroup ever waits on another) scans the block totals in place, tile by
//! tile, and writes the grand total. Launch 2 adds the block offsets; a scan of at most one
//! block needs only launch 1, and a caller's own kernel may add the offsets instead
//! ([`PrefixSum::record_blocks`]). Recorded into the caller's plan; the grand total, and with
//! parts ([`PrefixSum::with_parts`]) the prefix at every multiple of a stride, stay on the
//! device ([`PrefixSum::total`]), final after launch 1. CPU reference: [`exclusive_scan_cpu`].

use super::{Buffer, ItemRange, Kernel, PlanBuilder, Runtime, WORKGROUP_SIZE};
use crate::args;
use crate::error::{Error, Result};

/// Items scanned by one workgroup (64 threads x 16 items); also the block totals the last
/// workgroup scans per pass of its loop.
pub const SCAN_BLOCK: u32 = 1024;

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
        Ok(PrefixSum {
            blocks: rt.kernel("scan_blocks", &[])?,
            add: rt.kernel("scan_add", &[])?,
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
        if n > self.capacity {
            return Err(Error::Invalid(format!(
                "scan prepared for {} items, asked for {n}",
                self.capacity
            )));
        }
        plan.launch_threads(
            &self.blocks,
            &args![
                self.input,
                self.output,
                self.block_sums,
                self.sums,
                self.ticket
            ],
            ItemRange {
                first: 0,
                count: n,
                color: self.stride,
                pad: 0,
            },
            blocks(n) * WORKGROUP_SIZE,
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

/// Words of a fused scan's state before its chunks' words (SCAN_STATE_HEADER in
/// shaders/common/dispatch.wgsl): the scan's ticket, its total, each part's first number.
pub const SCAN_STATE_HEADER: u32 = 64;

/// Most parts a fused scan takes (one header word each after the ticket and the total; part 0's
/// first number is 0).
pub const FUSED_SCAN_MAX_PARTS: u32 = SCAN_STATE_HEADER - 2;

/// Blocks of a fused scan's part of `part_len` items: one per workgroup (at least one).
pub fn fused_blocks_per_part(part_len: u32) -> u32 {
    part_len.div_ceil(WORKGROUP_SIZE).max(1)
}

/// An exclusive scan fused into the launch of the kernel that produces its items
/// (shaders/common/scan_fused.wgsl): `parts` parts of `part_len` items, numbered one part after
/// another. The producing kernel writes each item's prefix within its block of WORKGROUP_SIZE
/// items, the blocks' prefixes within their chunk of SCAN_BLOCK blocks, and the chunks' prefixes,
/// total and parts' first numbers into the state; a later kernel reads item (k, j)'s number as
/// their sum (shaders/common/scan_numbers.wgsl). One launch instead of a producer, the scan's
/// launch and a launch adding its block offsets.
pub struct FusedScan {
    blocks_prefix: Buffer,
    state: Buffer,
    parts: u32,
    part_len: u32,
}

impl FusedScan {
    /// The block and state buffers of a scan of `parts` parts of `part_len` items (zeroed: the
    /// tickets start at 0 and every scan leaves them there).
    pub fn new(rt: &Runtime, parts: u32, part_len: u32) -> Result<FusedScan> {
        if parts == 0 || parts > FUSED_SCAN_MAX_PARTS {
            return Err(Error::Invalid(format!(
                "a fused scan takes 1 to {FUSED_SCAN_MAX_PARTS} parts, asked for {parts}"
            )));
        }
        let blocks = u64::from(parts) * u64::from(fused_blocks_per_part(part_len));
        let blocks = u32::try_from(blocks).map_err(|_| {
            Error::Invalid(format!(
                "a fused scan of {parts} parts of {part_len} items has more blocks than u32 counts"
            ))
        })?;
        let chunks = blocks.div_ceil(SCAN_BLOCK);
        Ok(FusedScan {
            blocks_prefix: rt.zeroed::<u32>("fused scan block prefixes", blocks as usize)?,
            state: rt.zeroed::<u32>(
                "fused scan state",
                (SCAN_STATE_HEADER + 2 * chunks) as usize,
            )?,
            parts,
            part_len,
        })
    }

    /// The blocks' prefixes within their chunks (bound as scan_blocks_prefix).
    pub fn blocks_prefix(&self) -> &Buffer {
        &self.blocks_prefix
    }

    /// The tickets, total, parts' first numbers and chunk prefixes (bound as scan_state).
    pub fn state(&self) -> &Buffer {
        &self.state
    }

    /// Record the scan of items already in `input` (the kernel scan_fused) into `output`'s
    /// within-block prefixes.
    pub fn record_buffer(
        &self,
        rt: &Runtime,
        plan: &mut PlanBuilder,
        input: &Buffer,
        output: &Buffer,
    ) -> Result<()> {
        plan.launch_threads(
            &rt.kernel("scan_fused", &[])?,
            &args![*input, *output, self.blocks_prefix, self.state],
            ItemRange {
                first: 0,
                count: self.part_len,
                color: self.parts,
                pad: 0,
            },
            fused_blocks_per_part(self.part_len) * WORKGROUP_SIZE,
        );
        Ok(())
    }

    /// Every item's number, the total and each part's first number, read back and added up as
    /// scan_numbers.wgsl adds them (`output` holds the within-block prefixes).
    pub fn read_numbers(&self, rt: &Runtime, output: &Buffer) -> Result<FusedNumbers> {
        let n = (self.parts * self.part_len) as usize;
        let local = rt.read::<u32>(output, 0, n)?;
        let words = |b: &Buffer| (b.bytes() / 4) as usize;
        let blocks = rt.read::<u32>(&self.blocks_prefix, 0, words(&self.blocks_prefix))?;
        let state = rt.read::<u32>(&self.state, 0, words(&self.state))?;
        let per_part = fused_blocks_per_part(self.part_len);
        let numbers = (0..n)
            .map(|i| {
                let (k, j) = (i as u32 / self.part_len, i as u32 % self.part_len);
                let b = k * per_part + j / WORKGROUP_SIZE;
                let chunk = state[(SCAN_STATE_HEADER + 2 * (b / SCAN_BLOCK)) as usize];
                local[i]
                    .wrapping_add(blocks[b as usize])
                    .wrapping_add(chunk)
            })
            .collect();
        let part_starts = (0..self.parts as usize)
            .map(|k| if k == 0 { 0 } else { state[1 + k] })
            .collect();
        Ok(FusedNumbers {
            numbers,
            total: state[1],
            part_starts,
            tickets_left: state[0]
                + (0..blocks.len().div_ceil(SCAN_BLOCK as usize))
                    .map(|c| state[SCAN_STATE_HEADER as usize + 2 * c + 1])
                    .sum::<u32>(),
        })
    }
}

/// What [`FusedScan::read_numbers`] reads back.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FusedNumbers {
    /// Item i's exclusive prefix over all parts.
    pub numbers: Vec<u32>,
    pub total: u32,
    /// Each part's first number (0 for part 0).
    pub part_starts: Vec<u32>,
    /// The tickets still taken after the scan (0: every last arriver reset its own).
    pub tickets_left: u32,
}
