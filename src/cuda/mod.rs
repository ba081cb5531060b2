//! Transitional: the CUDA host drivers not yet on [`crate::runtime`].

pub mod kernels;
pub mod smooth;
pub mod vcolor;

pub use crate::runtime::cuda::*;

use cudarc::driver::DeviceRepr;

// SAFETY: #[repr(C)] Pod struct of 16 u32/f32 words, laid out as SmoothParams in
// shaders/cuda/common/smooth_relocate.cuh (its float2 fields sit at offsets 0 and 8).
unsafe impl DeviceRepr for crate::solver::smooth::gpu::GpuParams {}
