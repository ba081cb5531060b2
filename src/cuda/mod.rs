//! Transitional: the CUDA host drivers not yet on [`crate::runtime`].

pub mod kernels;

pub use crate::runtime::cuda::*;
