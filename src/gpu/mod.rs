//! Transitional: the kernels and drivers not yet on [`crate::runtime`] reach the wgpu and CUDA
//! devices through [`Device`], a borrowed view of a runtime's device.

pub mod gradient;
pub mod legacy_reduce;

pub use crate::runtime::wgpu::{buffers, context, dispatch, timing};
pub use crate::runtime::{
    list_adapters, AdapterSummary, BackendKind, GpuOptions, CUDA_REBUILD_HINT,
};
pub use crate::runtime::{reduce, scan};
pub use context::GpuContext;

/// Transitional name of [`crate::runtime::Runtime`].
pub type Backend = crate::runtime::Runtime;

pub mod shaders {
    pub use crate::runtime::shaders::*;
    pub use crate::runtime::wgpu::compute_pipeline;
}

/// The device behind a [`crate::runtime::Runtime`], for the drivers that still name it.
pub enum Device<'a> {
    Wgpu(&'a GpuContext),
    #[cfg(feature = "cuda")]
    Cuda(&'a crate::cuda::CudaDevice),
}

/// The device of `rt`.
pub fn legacy(rt: &crate::runtime::Runtime) -> Device<'_> {
    if let Some(ctx) = rt.wgpu_context() {
        return Device::Wgpu(ctx);
    }
    #[cfg(feature = "cuda")]
    if let Some(dev) = rt.cuda_device() {
        return Device::Cuda(dev);
    }
    unreachable!("a runtime is either wgpu or CUDA")
}
