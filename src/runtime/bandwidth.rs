//! Device copy bandwidth with the `stream_copy` kernel (WGSL and CUDA twin): the yardstick the
//! benchmarks' effective GB/s are compared with. A kernel rather than a buffer copy, because
//! copy_buffer_to_buffer is no yardstick on every driver (see shaders/stream_copy.wgsl).

use super::{median, ItemRange, PlanBuilder, Runtime};
use crate::args;
use crate::error::{Error, Result};

/// Copies per timed plan, so launch and submit overheads are amortised.
pub const COPIES_PER_PLAN: usize = 8;

/// A measured device-to-device copy bandwidth.
#[derive(Clone, Debug, serde::Serialize)]
pub struct CopyBandwidth {
    /// Bytes read plus bytes written per second, in GB/s (the convention of the cards' copy
    /// figures in BENCHMARKS.md).
    pub gb_per_s: f64,
    /// Bytes per copied buffer.
    pub buffer_bytes: u64,
    pub method: String,
}

/// [`COPIES_PER_PLAN`] copies of `bytes` (capped by [`Runtime::max_buffer_bytes`]) back and
/// forth between two buffers, timed on the device where it can (else the wall clock of
/// submit + wait); the median of `samples` runs after a warm-up run (first touch and lazy
/// zeroing excluded).
pub fn copy_bandwidth(rt: &Runtime, bytes: u64, samples: u32) -> Result<CopyBandwidth> {
    let vec4s = (bytes.min(rt.max_buffer_bytes()) / 16).min(u32::MAX as u64) as u32;
    if vec4s == 0 {
        return Err(Error::Invalid("copy bandwidth: buffer size is 0".into()));
    }
    let a = rt.zeroed::<[f32; 4]>("copy a", vec4s as usize)?;
    let b = rt.zeroed::<[f32; 4]>("copy b", vec4s as usize)?;
    let copy = rt.kernel("stream_copy", &[])?;
    let mut plan = PlanBuilder::new();
    plan.segment("copy");
    for i in 0..COPIES_PER_PLAN {
        let args = if i % 2 == 0 { args![a, b] } else { args![b, a] };
        plan.launch(&copy, &args, ItemRange::all(vec4s));
    }
    let plan = rt.prepare(&plan)?;
    rt.run(&plan, 1)?;
    let mut seconds = Vec::new();
    let mut from_device = true;
    for _ in 0..samples.max(1) {
        let t = rt.time(&plan, 1)?;
        from_device &= t.from_device;
        seconds.push(t.sum());
    }
    let size = 16 * vec4s as u64;
    let timer = if from_device {
        "timed on the device"
    } else {
        "wall clock of submit + wait"
    };
    Ok(CopyBandwidth {
        gb_per_s: 2.0 * size as f64 * COPIES_PER_PLAN as f64 / median(&seconds) / 1e9,
        buffer_bytes: size,
        method: format!(
            "stream_copy kernel ({}), {COPIES_PER_PLAN} copies per submit, {timer}, median of {}",
            rt.kind(),
            seconds.len()
        ),
    })
}
