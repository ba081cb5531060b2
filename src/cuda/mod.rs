//! Transitional: the CUDA host drivers not yet on [`crate::runtime`].

pub mod dg;
pub mod kernels;
pub mod smooth;
pub mod swe;

pub use crate::runtime::cuda::*;

use crate::solver::swe::gpu::GpuControl;
use crate::solver::swe::mesh::SweEdge;
use cudarc::driver::{DeviceRepr, ValidAsZeroBits};

// SAFETY: plain #[repr(C)] structs of u32/f32 (bytemuck::Pod), laid out as the CUDA structs
// of the same name in shaders/cuda/common/.
unsafe impl DeviceRepr for SweEdge {}
unsafe impl DeviceRepr for GpuControl {}
// SAFETY: #[repr(C)] Pod struct of 16 u32/f32 words, laid out as SmoothParams in
// shaders/cuda/common/smooth_relocate.cuh (its float2 fields sit at offsets 0 and 8).
unsafe impl DeviceRepr for crate::solver::smooth::gpu::GpuParams {}
// SAFETY: all-zero bytes are a valid value of these Pod structs.
unsafe impl ValidAsZeroBits for GpuControl {}
