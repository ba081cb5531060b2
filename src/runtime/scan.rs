//! GPU exclusive prefix sum of u32 (`scan_blocks` + `scan_add`, WGSL and CUDA twins): blocks of
//! [`SCAN_BLOCK`] are scanned in workgroup memory, their totals scanned recursively, and the
//! block offsets added back. Recorded into the caller's plan; the grand total stays on the
//! device ([`PrefixSum::total`]). CPU reference: [`exclusive_scan_cpu`].

use super::{Buffer, ItemRange, Kernel, PlanBuilder, Runtime, WORKGROUP_SIZE};
use crate::args;
use crate::error::{Error, Result};

/// Items scanned by one workgroup.
pub const SCAN_BLOCK: u32 = 256;

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

/// Items per level of a scan of `n` values with `levels` levels: n, ceil(n/256), ...
fn level_sizes(n: u32, levels: usize) -> Vec<u32> {
    let mut sizes = vec![n.max(1)];
    while sizes.len() < levels {
        let last = sizes[sizes.len() - 1];
        sizes.push(last.div_ceil(SCAN_BLOCK));
    }
    sizes
}

/// A prepared exclusive scan of up to `capacity` values of an input buffer into an output
/// buffer.
pub struct PrefixSum {
    blocks: Kernel,
    add: Kernel,
    input: Buffer,
    output: Buffer,
    /// Block totals of each level.
    sums: Vec<Buffer>,
    /// Scanned block totals: `scanned[k - 1]` is the output of level k >= 1.
    scanned: Vec<Buffer>,
    capacity: u32,
}

impl PrefixSum {
    /// Prepare a scan of up to `capacity` values of `input` into `output`.
    pub fn new(rt: &Runtime, input: &Buffer, output: &Buffer, capacity: u32) -> Result<PrefixSum> {
        let blocks = rt.kernel("scan_blocks", &[])?;
        let add = rt.kernel("scan_add", &[])?;
        let mut levels = 1;
        while level_sizes(capacity, levels)
            .last()
            .is_some_and(|&l| l > SCAN_BLOCK)
        {
            levels += 1;
        }
        let sizes = level_sizes(capacity, levels);
        let mut sums = Vec::new();
        let mut scanned = Vec::new();
        for (k, &len) in sizes.iter().enumerate() {
            sums.push(rt.zeroed::<u32>("scan block sums", len.div_ceil(SCAN_BLOCK) as usize)?);
            if k > 0 {
                scanned.push(rt.zeroed::<u32>("scan level output", len as usize)?);
            }
        }
        Ok(PrefixSum {
            blocks,
            add,
            input: input.clone(),
            output: output.clone(),
            sums,
            scanned,
            capacity: capacity.max(1),
        })
    }

    /// The buffer whose element 0 holds the sum of the scanned inputs after the launches ran.
    pub fn total(&self) -> &Buffer {
        &self.sums[self.sums.len() - 1]
    }

    /// Append the scan of all `capacity` inputs to `plan`.
    pub fn record(&self, plan: &mut PlanBuilder) {
        self.record_first(plan, self.capacity)
            .expect("the capacity fits the prepared levels");
    }

    /// Append the scan of the first `n` inputs (n <= capacity) to `plan`.
    pub fn record_first(&self, plan: &mut PlanBuilder, n: u32) -> Result<()> {
        if n > self.capacity {
            return Err(Error::Invalid(format!(
                "scan prepared for {} items, asked for {n}",
                self.capacity
            )));
        }
        let sizes = level_sizes(n, self.sums.len());
        for (k, &len) in sizes.iter().enumerate() {
            let (src, dst) = if k == 0 {
                (&self.input, &self.output)
            } else {
                (&self.sums[k - 1], &self.scanned[k - 1])
            };
            plan.launch_threads(
                &self.blocks,
                &args![*src, *dst, self.sums[k]],
                ItemRange::all(len),
                len.div_ceil(SCAN_BLOCK) * WORKGROUP_SIZE,
            );
        }
        for k in (0..sizes.len().saturating_sub(1)).rev() {
            let dst = if k == 0 {
                &self.output
            } else {
                &self.scanned[k - 1]
            };
            plan.launch(
                &self.add,
                &args![self.scanned[k], *dst],
                ItemRange::all(sizes[k]),
            );
        }
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
