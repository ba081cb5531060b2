//! The GPU layer: context (adapter choice, features, limits), embedded shaders, buffers,
//! per-color dispatch, timing, and the kernels shared by the solvers.
//!
//! Backend boundary: solvers talk to the device through per-workload traits (each solver's
//! `*Device` trait) whose wgpu implementation lives beside the solver; a CUDA implementation
//! (feature `cuda`) implements the same traits, selected by [`BackendKind`].

pub mod buffers;
pub mod context;
pub mod dispatch;
pub mod gradient;
pub mod reduce;
pub mod scan;
pub mod shaders;
pub mod timing;

pub use context::{list_adapters, AdapterSummary, GpuContext, GpuOptions};

/// Which compute backend runs the kernels. Only wgpu exists so far; the CUDA backend (feature
/// `cuda`) adds its variant here and implements the solvers' device traits.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum, serde::Serialize)]
pub enum BackendKind {
    /// WGSL kernels through wgpu (Vulkan, Metal, DX12).
    #[default]
    Wgpu,
}
