//! The GPU layer: context (adapter choice, features, limits), embedded shaders, buffers,
//! per-color dispatch, timing, and the kernels shared by the solvers.
//!
//! Backend boundary: solvers talk to the device through per-workload traits (each solver's
//! `*Device` trait, e.g. [`crate::solver::swe::gpu::SweDevice`]) whose wgpu implementation
//! lives beside the solver; the CUDA implementation (feature `cuda`, `crate::cuda`) implements
//! the same traits. [`Backend`] is an opened backend of the [`BackendKind`] the user chose.

pub mod buffers;
pub mod context;
pub mod dispatch;
pub mod gradient;
pub mod reduce;
pub mod scan;
pub mod shaders;
pub mod timing;

pub use context::{list_adapters, AdapterSummary, GpuContext, GpuOptions};

/// Which compute backend runs the kernels: wgpu (WGSL) always, CUDA (the twins in
/// `shaders/cuda/`, through cudarc and NVRTC) when built with `--features cuda`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, clap::ValueEnum, serde::Serialize)]
pub enum BackendKind {
    /// WGSL kernels through wgpu (Vulkan, Metal, DX12).
    #[default]
    Wgpu,
    /// CUDA kernels compiled by NVRTC at run time (NVIDIA GPUs; needs a build with
    /// `--features cuda`).
    Cuda,
}

/// How to get a CUDA-enabled binary.
pub const CUDA_REBUILD_HINT: &str = "this chromaflow was built without CUDA support; rebuild \
     with `cargo build --release --features cuda` (no CUDA toolkit needed to build: the driver \
     and NVRTC are loaded at run time)";

impl BackendKind {
    pub fn name(self) -> &'static str {
        match self {
            BackendKind::Wgpu => "wgpu",
            BackendKind::Cuda => "cuda",
        }
    }

    /// Whether this binary can run the backend at all (CUDA needs the `cuda` feature); the
    /// error tells how to rebuild. Says nothing about drivers: see [`Backend::new`].
    pub fn ensure_compiled(self) -> crate::error::Result<()> {
        match self {
            BackendKind::Wgpu => Ok(()),
            BackendKind::Cuda if cfg!(feature = "cuda") => Ok(()),
            BackendKind::Cuda => Err(crate::error::Error::Invalid(format!(
                "--backend cuda: {CUDA_REBUILD_HINT}"
            ))),
        }
    }

    /// The backends compiled into this binary.
    pub fn compiled() -> Vec<BackendKind> {
        if cfg!(feature = "cuda") {
            vec![BackendKind::Wgpu, BackendKind::Cuda]
        } else {
            vec![BackendKind::Wgpu]
        }
    }
}

impl std::fmt::Display for BackendKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// An opened compute backend: what the per-workload device traits are created from.
pub enum Backend {
    /// A wgpu adapter and device.
    Wgpu(Box<GpuContext>),
    /// CUDA device 0.
    #[cfg(feature = "cuda")]
    Cuda(crate::cuda::CudaDevice),
}

impl Backend {
    /// Open `kind`: a wgpu adapter (`opts.adapter` picks it) or CUDA device 0. Clear errors
    /// when the binary lacks CUDA support or the machine has no NVIDIA driver.
    pub fn new(kind: BackendKind, opts: &GpuOptions) -> crate::error::Result<Backend> {
        match kind {
            BackendKind::Wgpu => Ok(Backend::Wgpu(Box::new(GpuContext::new(opts)?))),
            #[cfg(feature = "cuda")]
            BackendKind::Cuda => Ok(Backend::Cuda(crate::cuda::CudaDevice::new()?)),
            #[cfg(not(feature = "cuda"))]
            BackendKind::Cuda => Err(crate::error::Error::Invalid(format!(
                "--backend cuda: {CUDA_REBUILD_HINT}"
            ))),
        }
    }

    pub fn kind(&self) -> BackendKind {
        match self {
            Backend::Wgpu(_) => BackendKind::Wgpu,
            #[cfg(feature = "cuda")]
            Backend::Cuda(_) => BackendKind::Cuda,
        }
    }

    /// The device, e.g. "NVIDIA H100 80GB HBM3 (Vulkan)" or "... (CUDA, sm_90)".
    pub fn name(&self) -> String {
        match self {
            Backend::Wgpu(ctx) => format!("{} ({:?})", ctx.info.name, ctx.info.backend),
            #[cfg(feature = "cuda")]
            Backend::Cuda(dev) => dev.description(),
        }
    }
}
