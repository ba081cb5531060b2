//! Transitional: the CUDA host drivers not yet on [`crate::runtime`].

pub mod kernels;
pub mod vcolor;

pub use crate::runtime::cuda::*;
