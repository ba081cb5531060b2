//! CUDA min-reduction: the twin of [`crate::gpu::reduce::MinReduction`] (`reduce_min.cu`),
//! launched on the device's stream so results never visit the host.

use super::{driver_err, item_range, launch_blocks, CudaDevice};
use crate::error::Result;
use crate::gpu::reduce::ITEMS_PER_GROUP;
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
