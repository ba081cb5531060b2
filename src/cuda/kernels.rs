//! CUDA prefix sum and min-reduction: the twins of [`crate::gpu::scan::PrefixSum`]
//! (`scan_blocks.cu` + `scan_add.cu`) and [`crate::gpu::reduce::MinReduction`]
//! (`reduce_min.cu`), launched on the device's stream so results never visit the host.

use super::{driver_err, item_range, launch_blocks, launch_for, CudaDevice};
use crate::error::Result;
use crate::gpu::reduce::ITEMS_PER_GROUP;
use crate::gpu::scan::SCAN_BLOCK;
use cudarc::driver::{CudaFunction, CudaSlice, PushKernelArg};

/// A prepared min-reduction of the first `n` values of an f32 buffer: a chain of passes, each
/// shrinking its input by 256.
pub struct CudaMinReduction {
    func: CudaFunction,
    /// Per pass: output buffer, items read.
    stages: Vec<(CudaSlice<f32>, u32)>,
}

impl CudaMinReduction {
    pub fn new(dev: &CudaDevice, n: u32) -> Result<CudaMinReduction> {
        let func = dev.function("reduce_min", "reduce_min", &[])?;
        let mut stages = Vec::new();
        let mut len = n.max(1);
        loop {
            let groups = len.div_ceil(ITEMS_PER_GROUP);
            let out = dev
                .stream()
                .alloc_zeros::<f32>(groups as usize)
                .map_err(driver_err("alloc reduction"))?;
            stages.push((out, len));
            if groups == 1 {
                break;
            }
            len = groups;
        }
        Ok(CudaMinReduction { func, stages })
    }

    /// The one-element buffer that holds the minimum after [`CudaMinReduction::launch`].
    pub fn result(&self) -> &CudaSlice<f32> {
        &self.stages[self.stages.len() - 1].0
    }

    /// Queue the passes reducing `input`.
    pub fn launch(&self, dev: &CudaDevice, input: &CudaSlice<f32>) -> Result<()> {
        for (k, (out, len)) in self.stages.iter().enumerate() {
            let src = if k == 0 { input } else { &self.stages[k - 1].0 };
            let range = item_range(0, *len);
            let mut b = dev.stream().launch_builder(&self.func);
            b.arg(src).arg(out).arg(&range);
            // SAFETY: reduce_min(const float*, float*, ItemRange); `src` holds `len` values and
            // `out` one per block of ITEMS_PER_GROUP.
            unsafe { b.launch(launch_blocks(len.div_ceil(ITEMS_PER_GROUP))) }
                .map_err(driver_err("launch reduce_min"))?;
        }
        Ok(())
    }
}

/// Minimum of `values` on the CUDA device (for the parity checks).
pub fn cuda_min(dev: &CudaDevice, values: &[f32]) -> Result<f32> {
    let input = dev
        .stream()
        .clone_htod(values)
        .map_err(driver_err("upload"))?;
    let red = CudaMinReduction::new(dev, values.len() as u32)?;
    red.launch(dev, &input)?;
    let v = dev
        .stream()
        .clone_dtoh(red.result())
        .map_err(driver_err("read back"))?;
    dev.synchronize()?;
    Ok(v[0])
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

/// A prepared exclusive prefix sum of up to `capacity` u32 values.
pub struct CudaPrefixSum {
    blocks: CudaFunction,
    add: CudaFunction,
    /// Block totals of each level.
    sums: Vec<CudaSlice<u32>>,
    /// Scanned block totals: `scanned[k - 1]` is the output of level k >= 1.
    scanned: Vec<CudaSlice<u32>>,
    capacity: u32,
}

impl CudaPrefixSum {
    pub fn new(dev: &CudaDevice, capacity: u32) -> Result<CudaPrefixSum> {
        let blocks = dev.function("scan_blocks", "scan_blocks", &[])?;
        let add = dev.function("scan_add", "scan_add", &[])?;
        let mut levels = 1;
        while level_sizes(capacity, levels)
            .last()
            .is_some_and(|&l| l > SCAN_BLOCK)
        {
            levels += 1;
        }
        let sizes = level_sizes(capacity, levels);
        let stream = dev.stream();
        let mut sums = Vec::new();
        let mut scanned = Vec::new();
        for (k, &len) in sizes.iter().enumerate() {
            sums.push(
                stream
                    .alloc_zeros::<u32>(len.div_ceil(SCAN_BLOCK) as usize)
                    .map_err(driver_err("alloc scan"))?,
            );
            if k > 0 {
                scanned.push(
                    stream
                        .alloc_zeros::<u32>(len as usize)
                        .map_err(driver_err("alloc scan"))?,
                );
            }
        }
        Ok(CudaPrefixSum {
            blocks,
            add,
            sums,
            scanned,
            capacity: capacity.max(1),
        })
    }

    /// The buffer whose element 0 holds the sum of the inputs after a launch.
    pub fn total(&self) -> &CudaSlice<u32> {
        &self.sums[self.sums.len() - 1]
    }

    /// Queue the exclusive scan of the first `n` values of `input` into `output`.
    pub fn launch(
        &self,
        dev: &CudaDevice,
        input: &CudaSlice<u32>,
        output: &CudaSlice<u32>,
        n: u32,
    ) -> Result<()> {
        if n > self.capacity {
            return Err(crate::error::Error::Invalid(format!(
                "scan prepared for {} items, asked for {n}",
                self.capacity
            )));
        }
        let sizes = level_sizes(n, self.sums.len());
        for (k, &len) in sizes.iter().enumerate() {
            let (src, dst) = if k == 0 {
                (input, output)
            } else {
                (&self.sums[k - 1], &self.scanned[k - 1])
            };
            let range = item_range(0, len);
            let mut b = dev.stream().launch_builder(&self.blocks);
            b.arg(src).arg(dst).arg(&self.sums[k]).arg(&range);
            // SAFETY: scan_blocks(const u32*, u32*, u32*, ItemRange); src and dst hold `len`
            // values, the block sums one per 256.
            unsafe { b.launch(launch_blocks(len.div_ceil(SCAN_BLOCK))) }
                .map_err(driver_err("launch scan_blocks"))?;
        }
        for k in (0..sizes.len().saturating_sub(1)).rev() {
            let dst = if k == 0 { output } else { &self.scanned[k - 1] };
            let range = item_range(0, sizes[k]);
            let mut b = dev.stream().launch_builder(&self.add);
            b.arg(&self.scanned[k]).arg(dst).arg(&range);
            // SAFETY: scan_add(const u32*, u32*, ItemRange); the offsets cover every block of
            // level k.
            unsafe { b.launch(launch_for(sizes[k])) }.map_err(driver_err("launch scan_add"))?;
        }
        Ok(())
    }
}

/// Exclusive scan of `values` on the CUDA device and the total (for the parity checks).
pub fn cuda_exclusive_scan(dev: &CudaDevice, values: &[u32]) -> Result<(Vec<u32>, u32)> {
    let stream = dev.stream();
    let input = stream.clone_htod(values).map_err(driver_err("upload"))?;
    let output = stream
        .alloc_zeros::<u32>(values.len().max(1))
        .map_err(driver_err("alloc"))?;
    let scan = CudaPrefixSum::new(dev, values.len() as u32)?;
    scan.launch(dev, &input, &output, values.len() as u32)?;
    let mut out = stream
        .clone_dtoh(&output)
        .map_err(driver_err("read back"))?;
    let total = stream
        .clone_dtoh(scan.total())
        .map_err(driver_err("read back"))?;
    dev.synchronize()?;
    out.truncate(values.len());
    Ok((out, total[0]))
}
