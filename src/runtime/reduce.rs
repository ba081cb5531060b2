//! GPU min-reduction (`reduce_min.wgsl` and its CUDA twin): a chain of launches, each shrinking
//! its input by [`ITEMS_PER_GROUP`] (64 threads x 4 items per workgroup), recorded into the
//! caller's plan so a solver's time step never leaves the GPU. Used for CFL time steps.

use super::{Buffer, ItemRange, Kernel, PlanBuilder, Runtime, WORKGROUP_SIZE};
use crate::args;
use crate::error::Result;

/// Inputs reduced by one workgroup of one launch.
pub const ITEMS_PER_GROUP: u32 = WORKGROUP_SIZE * 4;

/// A prepared reduction of the first `n` values of an f32 buffer to their minimum.
pub struct MinReduction {
    kernel: Kernel,
    input: Buffer,
    /// Per launch: output buffer, items read.
    stages: Vec<(Buffer, u32)>,
}

impl MinReduction {
    /// Prepare the launches that reduce the first `n` values of `input`.
    pub fn new(rt: &Runtime, input: &Buffer, n: u32) -> Result<MinReduction> {
        let kernel = rt.kernel("reduce_min", &[])?;
        let mut stages = Vec::new();
        let mut len = n.max(1);
        loop {
            let groups = len.div_ceil(ITEMS_PER_GROUP);
            stages.push((rt.zeroed::<f32>("reduce partial", groups as usize)?, len));
            if groups == 1 {
                break;
            }
            len = groups;
        }
        Ok(MinReduction {
            kernel,
            input: input.clone(),
            stages,
        })
    }

    /// The one-element buffer that holds the minimum after the recorded launches ran.
    pub fn result(&self) -> &Buffer {
        &self.stages[self.stages.len() - 1].0
    }

    /// Append the launches to `plan`.
    pub fn record(&self, plan: &mut PlanBuilder) {
        self.record_first(plan, self.stages[0].1);
    }

    /// Append the launches of the minimum of the first `n` inputs (n at most the size it was
    /// made for). Stages past the one that reaches a single value carry it on unchanged, so
    /// the minimum always lands in [`MinReduction::result`].
    pub fn record_first(&self, plan: &mut PlanBuilder, n: u32) {
        let mut len = n.clamp(1, self.stages[0].1);
        for (k, (out, _)) in self.stages.iter().enumerate() {
            let src = if k == 0 {
                &self.input
            } else {
                &self.stages[k - 1].0
            };
            let groups = len.div_ceil(ITEMS_PER_GROUP);
            plan.launch_threads(
                &self.kernel,
                &args![*src, *out],
                ItemRange::all(len),
                groups * WORKGROUP_SIZE,
            );
            len = groups;
        }
    }
}

/// Minimum of `values` on the device (tests and one-off use).
pub fn gpu_min(rt: &Runtime, values: &[f32]) -> Result<f32> {
    let input = rt.upload("min input", values)?;
    let red = MinReduction::new(rt, &input, values.len() as u32)?;
    let mut plan = PlanBuilder::new();
    red.record(&mut plan);
    rt.run(&rt.prepare(&plan)?, 1)?;
    Ok(rt.read::<f32>(red.result(), 0, 1)?[0])
}
