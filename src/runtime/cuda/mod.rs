//! The CUDA backend of the runtime (feature `cuda`): the twins of the WGSL kernels in
//! `shaders/cuda/` (same file stem, same parameter order, same `#[repr(C)]` structs), compiled
//! by NVRTC at run time for the device's architecture and launched through cudarc.
//!
//! * [`CudaDevice`]: device 0, its compute capability, the stream every launch goes to (launches
//!   of one stream run in order, so per-color launches need no extra synchronization), and
//!   the NVRTC compile (`--gpu-architecture=compute_XY`, the WGSL override constants as `-D`
//!   defines) with a cache of compiled modules.
//! * `backend`: the runtime's operations on it (device memory, kernels, texture objects,
//!   prepared plans, event timing).
//!
//! libcuda and libnvrtc are loaded at run time: a build with `--features cuda` runs anywhere and
//! says clearly when there is no NVIDIA driver.

mod backend;

pub(crate) use backend::reads_ahead_by_kernel;
use backend::PinnedBlock;
pub use backend::{CudaKernel, CudaPlan, CudaTexture, DeviceMemory, PendingCopy, SpanEvents};

use crate::error::{Error, Result};
use cudarc::driver::{CudaContext, CudaFunction, CudaModule, CudaStream};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// Macro embedding `shaders/cuda/<path>` as a (path, source) pair.
macro_rules! cuda_source {
    ($path:literal) => {
        (
            $path,
            include_str!(concat!("../../../shaders/cuda/", $path)),
        )
    };
}

/// Every CUDA source under `shaders/cuda/`, embedded at build time (kernels `*.cu`, shared code
/// `common/*.cuh`). A test checks this list against the directory and the WGSL twins.
pub const CUDA_FILES: &[(&str, &str)] = &[
    cuda_source!("common/amr_reorder.cuh"),
    cuda_source!("common/amr_tree.cuh"),
    cuda_source!("common/amr_indicator.cuh"),
    cuda_source!("common/amr_face_owner.cuh"),
    cuda_source!("common/amr_book.cuh"),
    cuda_source!("common/group_scan.cuh"),
    cuda_source!("common/amr_raise.cuh"),
    cuda_source!("common/scan_blocks.cuh"),
    cuda_source!("common/dg_edge.cuh"),
    cuda_source!("common/dg_euler.cuh"),
    cuda_source!("common/dg_rk.cuh"),
    cuda_source!("common/dg_tables.cuh"),
    cuda_source!("common/dispatch.cuh"),
    cuda_source!("common/f32_pair.cuh"),
    cuda_source!("common/smooth_relocate.cuh"),
    cuda_source!("common/swe_cell.cuh"),
    cuda_source!("common/swe_clock.cuh"),
    cuda_source!("common/swe_control.cuh"),
    cuda_source!("common/swe_flux.cuh"),
    cuda_source!("common/swe_muscl.cuh"),
    cuda_source!("common/swe_drain.cuh"),
    cuda_source!("common/swe_share.cuh"),
    cuda_source!("common/vcolor_first_fit.cuh"),
    cuda_source!("common/vcolor_hash.cuh"),
    cuda_source!("common/vcolor_eject_propose.cuh"),
    cuda_source!("common/vcolor_eject_resolve.cuh"),
    cuda_source!("common/vcolor_eject_apply.cuh"),
    cuda_source!("common/vcolor_eject_record.cuh"),
    cuda_source!("amr_coarsen.cu"),
    cuda_source!("amr_compact.cu"),
    cuda_source!("amr_scan.cu"),
    cuda_source!("amr_faces.cu"),
    cuda_source!("amr_flag.cu"),
    cuda_source!("amr_geometry.cu"),
    cuda_source!("amr_permute.cu"),
    cuda_source!("amr_radix.cu"),
    cuda_source!("amr_mark.cu"),
    cuda_source!("amr_refine.cu"),
    cuda_source!("amr_smooth.cu"),
    cuda_source!("amr_settle.cu"),
    cuda_source!("dg_limit.cu"),
    cuda_source!("dg_local_dt.cu"),
    cuda_source!("dg_stage.cu"),
    cuda_source!("dg_surface.cu"),
    cuda_source!("dg_trace.cu"),
    cuda_source!("dg_flux.cu"),
    cuda_source!("dg_time.cu"),
    cuda_source!("stream_copy.cu"),
    cuda_source!("dg_volume.cu"),
    cuda_source!("reduce_min.cu"),
    cuda_source!("scan_add.cu"),
    cuda_source!("scan_blocks.cu"),
    cuda_source!("smooth_buffer.cu"),
    cuda_source!("smooth_hardware.cu"),
    cuda_source!("smooth_texel.cu"),
    cuda_source!("swe_cell_gather.cu"),
    cuda_source!("swe_edge_flux.cu"),
    cuda_source!("swe_local_dt.cu"),
    cuda_source!("swe_time.cu"),
    cuda_source!("swe_boundary_values.cu"),
    cuda_source!("swe_gauges.cu"),
    cuda_source!("swe_update.cu"),
    cuda_source!("swe_fused_step.cu"),
    cuda_source!("swe_fused_clock.cu"),
    cuda_source!("swe_reconstruct.cu"),
    cuda_source!("swe_edge_flux2.cu"),
    cuda_source!("swe_drain.cu"),
    cuda_source!("swe_drain_fix.cu"),
    cuda_source!("vcolor_assign.cu"),
    cuda_source!("vcolor_compact.cu"),
    cuda_source!("vcolor_detect.cu"),
    cuda_source!("vcolor_class_count.cu"),
    cuda_source!("vcolor_class_offsets.cu"),
    cuda_source!("vcolor_class_bucket.cu"),
    cuda_source!("vcolor_recolor.cu"),
    cuda_source!("vcolor_max.cu"),
    cuda_source!("vcolor_eject_start.cu"),
    cuda_source!("vcolor_eject_propose.cu"),
    cuda_source!("vcolor_eject_resolve.cu"),
    cuda_source!("vcolor_eject_apply.cu"),
    cuda_source!("vcolor_eject_count.cu"),
    cuda_source!("vcolor_eject_tail.cu"),
];

/// The full CUDA source of kernel file `stem` (`shaders/cuda/<stem>.cu`) with its
/// `// #include "common/..."` lines expanded, as for the WGSL kernels (files of the
/// `CHROMAFLOW_KERNEL_DIR` directory's `cuda/` replacing the embedded ones).
pub fn kernel_source(stem: &str) -> Result<String> {
    crate::runtime::shaders::expand_includes(&format!("{stem}.cu"), &|f| {
        crate::runtime::shaders::source_file(CUDA_FILES, "cuda/", f)
    })
}

/// A `-D` define for an f32 constant (the WGSL override constants): shortest round-trip form
/// with an `f` suffix, e.g. `-DGRAVITY=9.81e0f`.
pub fn define_f32(name: &str, value: f64) -> String {
    format!("-D{name}={:e}f", value as f32)
}

/// A `-D` define for a u32 constant, e.g. `-DSCHEME=2u`.
pub fn define_u32(name: &str, value: u32) -> String {
    format!("-D{name}={value}u")
}

/// NVRTC's options for a kernel: the architecture (`--gpu-architecture=compute_XY`), then
/// division and square root as WGSL has them on Vulkan (within 2.5 ulp, hardware
/// approximations) instead of NVRTC's default IEEE-rounded subroutines: the twins then compute
/// alike, and the shallow-water step, bound by those instructions, runs at the WGSL kernel's
/// speed. Denormals stay (no --ftz): the DG registers' lo words need them. Then the `-D`
/// defines.
pub fn nvrtc_options(arch_option: String, defines: &[String]) -> Vec<String> {
    let mut options = vec![
        arch_option,
        "--prec-div=false".to_string(),
        "--prec-sqrt=false".to_string(),
    ];
    options.extend(defines.iter().cloned());
    options
}

/// Compile `shaders/cuda/<stem>.cu` to PTX for `arch` (e.g. `compute_90`) with the runtime's
/// options and `defines` (none: the twins' `#ifndef` defaults): what [`CudaDevice::module`]
/// compiles, without a device or driver, so that a machine with NVRTC but no NVIDIA GPU (CI)
/// checks that every twin compiles. Errors name the file and give NVRTC's log.
pub fn compile_check(stem: &str, arch: &str, defines: &[String]) -> Result<()> {
    nvrtc_present().map_err(Error::Gpu)?;
    let source = kernel_source(stem)?;
    let opts = cudarc::nvrtc::CompileOptions {
        options: nvrtc_options(format!("--gpu-architecture={arch}"), defines),
        name: Some(format!("{stem}.cu")),
        ..Default::default()
    };
    cudarc::nvrtc::compile_ptx_with_opts(&source, opts)
        .map(|_| ())
        .map_err(|e| {
            Error::Gpu(format!(
                "NVRTC failed on shaders/cuda/{stem}.cu for {arch}: {}",
                compile_message(&e)
            ))
        })
}

/// Whether the NVIDIA driver library (libcuda) and NVRTC can be loaded, with the reason when
/// not. Never panics (cudarc's loaders panic when a library is missing).
pub fn libraries_present() -> std::result::Result<(), String> {
    // SAFETY: only tries to open the shared libraries by name (dlopen), nothing is called.
    let driver = unsafe { cudarc::driver::sys::is_culib_present() };
    if !driver {
        return Err(
            "no NVIDIA driver: libcuda could not be loaded (is this a machine with an NVIDIA GPU \
             and driver? check LD_LIBRARY_PATH)"
                .into(),
        );
    }
    nvrtc_present().map_err(|e| format!("the NVIDIA driver is present but {e}"))
}

/// Whether NVRTC (libnvrtc) can be loaded, with the reason when not; needs no driver.
fn nvrtc_present() -> std::result::Result<(), String> {
    // SAFETY: only tries to open libnvrtc by name (dlopen), nothing is called.
    if unsafe { cudarc::nvrtc::sys::is_culib_present() } {
        return Ok(());
    }
    Err(
        "NVRTC (libnvrtc, CUDA 13) could not be loaded: install the CUDA toolkit's NVRTC (or \
         the PyPI package nvidia-cuda-nvrtc) and add its lib directory to LD_LIBRARY_PATH"
            .into(),
    )
}

/// Convert a cudarc driver error into the crate's error with context.
pub fn driver_err(what: &str) -> impl FnOnce(cudarc::driver::DriverError) -> Error + '_ {
    move |e| Error::Gpu(format!("CUDA {what}: {e}"))
}

/// Compiled modules by (file stem, defines, capacity).
type ModuleCache = HashMap<(String, Vec<String>, Option<u32>), Arc<CudaModule>>;

/// NVRTC's PTX by (file stem, defines): one compile serves the modules of every capacity.
type PtxCache = HashMap<(String, Vec<String>), String>;

/// The oldest driver (as cuDriverGetVersion reports it, 1000 major + 10 minor) with every
/// entry point the backend calls: CUDA 12.3 added cuStreamGetCaptureInfo_v3, which names the
/// graph node of a bounded launch for later grid updates.
const MIN_DRIVER_VERSION: i32 = 12030;

/// The CUDA device the solvers run on: device 0 of the driver, one stream.
pub struct CudaDevice {
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    /// A stream of its own that plans' launches are captured from into graphs (the default
    /// stream cannot capture); nothing runs on it.
    capture_stream: std::sync::OnceLock<Arc<CudaStream>>,
    name: String,
    capability: (i32, i32),
    /// Whether kernels are launched with programmatic stream serialization: sm_90 and later,
    /// unless [`crate::runtime::GpuOptions::no_launch_overlap`].
    overlap_launches: bool,
    modules: Mutex<ModuleCache>,
    /// The PTX of every module compiled, for loading it again with another capacity.
    ptx: Mutex<PtxCache>,
    /// Page-locked host blocks of finished read-backs queued ahead, for the next ones.
    pinned: Mutex<Vec<PinnedBlock>>,
    /// Modules compiled so far, by NVRTC or from the PTX disk cache
    /// ([`crate::runtime::Runtime::kernels_compiled`]).
    compiled: std::sync::atomic::AtomicU64,
    /// Directory of NVRTC's PTX kept between runs (`<cache>/cuda`), when enabled.
    ptx_dir: Option<std::path::PathBuf>,
}

impl CudaDevice {
    /// Open device 0, its PTX cached under `opts.pipeline_cache`. A clear error when the driver
    /// or NVRTC is missing or there is no device.
    pub fn new(opts: &crate::runtime::GpuOptions) -> Result<CudaDevice> {
        libraries_present().map_err(|e| Error::Gpu(format!("--backend cuda: {e}")))?;
        let ctx = CudaContext::new(0).map_err(driver_err("cannot open device 0"))?;
        let mut version = 0;
        // SAFETY: writes the driver's CUDA version into `version`.
        unsafe { cudarc::driver::sys::cuDriverGetVersion(&mut version) }
            .result()
            .map_err(driver_err("driver version"))?;
        if version < MIN_DRIVER_VERSION {
            return Err(Error::Gpu(format!(
                "--backend cuda: the driver supports CUDA {}.{}, chromaflow needs {}.{} or later \
                 (graph updates of bounded launches); update the NVIDIA driver",
                version / 1000,
                version % 1000 / 10,
                MIN_DRIVER_VERSION / 1000,
                MIN_DRIVER_VERSION % 1000 / 10
            )));
        }
        let name = ctx.name().map_err(driver_err("device name"))?;
        let capability = ctx
            .compute_capability()
            .map_err(driver_err("compute capability"))?;
        let stream = ctx.default_stream();
        Ok(CudaDevice {
            ctx,
            stream,
            capture_stream: std::sync::OnceLock::new(),
            name,
            capability,
            overlap_launches: capability.0 >= 9 && !opts.no_launch_overlap,
            modules: Mutex::new(HashMap::new()),
            ptx: Mutex::new(HashMap::new()),
            pinned: Mutex::new(Vec::new()),
            compiled: std::sync::atomic::AtomicU64::new(0),
            ptx_dir: opts.pipeline_cache.as_ref().map(|d| d.join("cuda")),
        })
    }

    /// Device name and compute capability, e.g. "NVIDIA H100 80GB HBM3 (CUDA, sm_90)", and
    /// ", launches in order" where kernel launches do not overlap on a device where they
    /// could (`--no-launch-overlap`).
    pub fn description(&self) -> String {
        let in_order = if self.capability.0 >= 9 && !self.overlap_launches {
            ", launches in order"
        } else {
            ""
        };
        format!(
            "{} (CUDA, sm_{}{}{in_order})",
            self.name, self.capability.0, self.capability.1
        )
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// Compute capability (major, minor).
    pub fn capability(&self) -> (i32, i32) {
        self.capability
    }

    pub fn context(&self) -> &Arc<CudaContext> {
        &self.ctx
    }

    /// Whether a kernel's launch may overlap the previous kernel's tail (programmatic stream
    /// serialization; each kernel waits for the ones before it in `await_previous_launches`).
    pub fn overlaps_launches(&self) -> bool {
        self.overlap_launches
    }

    /// The stream every launch and copy of this backend goes to.
    pub fn stream(&self) -> &Arc<CudaStream> {
        &self.stream
    }

    /// The stream graphs are captured from ([`CudaDevice::stream`] runs them).
    pub fn capture_stream(&self) -> Result<&Arc<CudaStream>> {
        if let Some(s) = self.capture_stream.get() {
            return Ok(s);
        }
        let created = self
            .ctx
            .new_stream()
            .map_err(driver_err("create the graph capture stream"))?;
        Ok(self.capture_stream.get_or_init(|| created))
    }

    /// Modules compiled so far (not counting those loaded again for another capacity).
    pub fn kernels_compiled(&self) -> u64 {
        self.compiled.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Wait for all queued work.
    pub fn synchronize(&self) -> Result<()> {
        self.stream
            .synchronize()
            .map_err(driver_err("synchronize (a kernel failed?)"))
    }

    /// The NVRTC architecture option for this device, e.g. `--gpu-architecture=compute_90`.
    pub fn arch_option(&self) -> String {
        format!(
            "--gpu-architecture=compute_{}{}",
            self.capability.0, self.capability.1
        )
    }

    /// Compile `shaders/cuda/<stem>.cu` with `defines` (`-DNAME=value` strings) for this device
    /// and load it with its constant `NE` (dispatch.cuh) set to `capacity` when given (cached
    /// per stem, defines and capacity; the PTX per stem and defines).
    pub fn module(
        &self,
        stem: &str,
        defines: &[String],
        capacity: Option<u32>,
    ) -> Result<Arc<CudaModule>> {
        let key = (stem.to_string(), defines.to_vec(), capacity);
        if let Some(m) = self
            .modules
            .lock()
            .map_err(|_| Error::Gpu("CUDA module cache poisoned".into()))?
            .get(&key)
        {
            return Ok(m.clone());
        }
        let module = self.load(stem, defines)?;
        if let Some(capacity) = capacity {
            self.set_capacity(&module, stem, capacity)?;
        }
        self.modules
            .lock()
            .map_err(|_| Error::Gpu("CUDA module cache poisoned".into()))?
            .insert(key, module.clone());
        Ok(module)
    }

    /// A fresh module of `stem` with `defines`: its PTX from memory, the disk cache or NVRTC.
    fn load(&self, stem: &str, defines: &[String]) -> Result<Arc<CudaModule>> {
        let file = format!("shaders/cuda/{stem}.cu");
        let ptx_key = (stem.to_string(), defines.to_vec());
        let known = self
            .ptx
            .lock()
            .map_err(|_| Error::Gpu("CUDA PTX cache poisoned".into()))?
            .get(&ptx_key)
            .cloned();
        if let Some(text) = known {
            return self.load_ptx(&file, text);
        }
        self.compiled
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let source = kernel_source(stem)?;
        let options = nvrtc_options(self.arch_option(), defines);
        let cached = self.ptx_path(stem, &source, &options);
        if let Some(path) = &cached {
            if let Some((text, module)) = self.load_cached(path) {
                self.remember_ptx(ptx_key, text)?;
                return Ok(module);
            }
        }
        let opts = cudarc::nvrtc::CompileOptions {
            options,
            name: Some(format!("{stem}.cu")),
            ..Default::default()
        };
        let text = cudarc::nvrtc::compile_ptx_with_opts(&source, opts)
            .map_err(|e| Error::Gpu(format!("NVRTC failed on {file}: {}", compile_message(&e))))?
            .to_src();
        let module = self.load_ptx(&file, text.clone())?;
        if let Some(path) = &cached {
            crate::runtime::disk_cache::store(path, text.as_bytes());
        }
        self.remember_ptx(ptx_key, text)?;
        Ok(module)
    }

    /// Load PTX `text` of `file` into a module.
    fn load_ptx(&self, file: &str, text: String) -> Result<Arc<CudaModule>> {
        self.ctx
            .load_module(cudarc::nvrtc::Ptx::from_src(text))
            .map_err(|e| {
                Error::Gpu(format!(
                    "CUDA could not load the PTX of {file} ({}): {e}; a driver older than the \
                     NVRTC that compiled it gives CUDA_ERROR_UNSUPPORTED_PTX_VERSION",
                    self.arch_option()
                ))
            })
    }

    /// Keep the PTX of `key` for the modules of other capacities.
    fn remember_ptx(&self, key: (String, Vec<String>), text: String) -> Result<()> {
        self.ptx
            .lock()
            .map_err(|_| Error::Gpu("CUDA PTX cache poisoned".into()))?
            .insert(key, text);
        Ok(())
    }

    /// Set `module`'s constant `NE` (the capacity, shaders/cuda/common/dispatch.cuh, which every
    /// twin includes) once, before any launch of it. A module without the symbol has no code
    /// that reads it (the driver's compile may drop an unused constant): nothing to set.
    fn set_capacity(&self, module: &Arc<CudaModule>, stem: &str, capacity: u32) -> Result<()> {
        let Ok(mut word) = module.get_global("NE", &self.stream) else {
            return Ok(());
        };
        if word.len() != std::mem::size_of::<u32>() {
            return Err(Error::Gpu(format!(
                "shaders/cuda/{stem}.cu: its constant NE is {} bytes, not a u32",
                word.len()
            )));
        }
        self.stream
            .memcpy_htod(&capacity.to_le_bytes(), &mut word)
            .map_err(driver_err("set a module's capacity"))?;
        self.stream
            .synchronize()
            .map_err(driver_err("set a module's capacity"))
    }

    /// The cache file of the PTX of `stem` compiled from `source` with `options` (None when
    /// the cache is off): named by a key of the source, the options (architecture and
    /// defines), the device's compute capability and NVRTC's version.
    fn ptx_path(&self, stem: &str, source: &str, options: &[String]) -> Option<std::path::PathBuf> {
        let dir = self.ptx_dir.as_ref()?;
        let (mut major, mut minor) = (0, 0);
        // SAFETY: NVRTC was loaded by `new` (libraries_present); the call writes two ints.
        let _ = unsafe { cudarc::nvrtc::sys::nvrtcVersion(&mut major, &mut minor) };
        let capability = format!(
            "{}.{} nvrtc {major}.{minor}",
            self.capability.0, self.capability.1
        );
        let mut parts: Vec<&[u8]> = vec![source.as_bytes(), capability.as_bytes()];
        parts.extend(options.iter().map(|o| o.as_bytes()));
        let key = crate::runtime::disk_cache::key(&parts);
        Some(dir.join(format!("{stem}-{key:016x}.ptx")))
    }

    /// The PTX of a cached file and its module, or None (with a warning when the file exists
    /// but cannot be used: it is then compiled again and replaced).
    fn load_cached(&self, path: &std::path::Path) -> Option<(String, Arc<CudaModule>)> {
        let bytes = crate::runtime::disk_cache::load(path)?;
        let text = match String::from_utf8(bytes) {
            Ok(t) if t.contains(".entry") => t,
            _ => {
                log::warn!("cached PTX {} is not PTX; compiling again", path.display());
                return None;
            }
        };
        match self
            .ctx
            .load_module(cudarc::nvrtc::Ptx::from_src(text.clone()))
        {
            Ok(m) => Some((text, m)),
            Err(e) => {
                log::warn!(
                    "cached PTX {} not loaded ({e}); compiling again",
                    path.display()
                );
                None
            }
        }
    }

    /// Kernel `entry` of `shaders/cuda/<stem>.cu` compiled with `defines`, in the module of
    /// `capacity` ([`CudaDevice::module`]).
    pub fn function(
        &self,
        stem: &str,
        entry: &str,
        defines: &[String],
        capacity: Option<u32>,
    ) -> Result<CudaFunction> {
        self.module(stem, defines, capacity)?
            .load_function(entry)
            .map_err(|e| {
                Error::Gpu(format!(
                    "CUDA kernel {entry} of shaders/cuda/{stem}.cu: {e}"
                ))
            })
    }
}

/// NVRTC's error with its log (the compiler messages) when there is one.
fn compile_message(e: &cudarc::nvrtc::CompileError) -> String {
    match e {
        cudarc::nvrtc::CompileError::CompileError {
            nvrtc,
            options,
            log,
        } => format!(
            "{nvrtc:?} with options {options:?}\n--- NVRTC log ---\n{}",
            log.to_string_lossy()
        ),
        other => format!("{other:?}"),
    }
}
