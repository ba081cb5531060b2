//! One persistent wgpu context: adapter choice, features and limits negotiated once.
//!
//! Adapter order: discrete GPU, integrated GPU, virtual GPU, software (CPU, e.g. lavapipe),
//! other. `--adapter NAME` or the `CHROMAFLOW_ADAPTER` environment variable picks the first
//! adapter whose name contains NAME (case-insensitive) instead. Only Vulkan, Metal and DX12 are
//! enabled: wgpu's GL backend cannot run these compute kernels.

use crate::error::{Error, Result};
use crate::runtime::clock_hold::{self, ClockHold};

/// Environment variable that overrides the adapter choice (substring of the adapter name).
pub const ADAPTER_ENV: &str = "CHROMAFLOW_ADAPTER";

/// Options for opening a device ([`GpuContext`], [`crate::runtime::Runtime::new`]).
#[derive(Clone, Debug, Default)]
pub struct GpuOptions {
    /// Substring of the adapter name to use; falls back to [`ADAPTER_ENV`], then the ranking.
    pub adapter: Option<String>,
    /// Directory of the on-disk kernel cache (wgpu's pipeline cache where the backend has
    /// one, CUDA's PTX; see [`crate::runtime::disk_cache`]); None compiles every kernel afresh.
    /// The command line passes [`crate::runtime::disk_cache::default_dir`] unless
    /// `--no-pipeline-cache`.
    pub pipeline_cache: Option<std::path::PathBuf>,
    /// Leave an NVIDIA GPU's clocks to the driver: no idle CUDA context held on it (see
    /// [`crate::runtime::clock_hold`]; without it the driver runs bursts of Vulkan work at its
    /// idle clock).
    pub no_clock_hold: bool,
    /// On CUDA, start each kernel only once the one before it has finished, instead of
    /// letting its launch overlap the previous kernel's tail (programmatic dependent launch,
    /// sm_90 and later; see `await_previous_launches` in shaders/cuda/common/dispatch.cuh).
    pub no_launch_overlap: bool,
}

/// What a listing of adapters shows.
#[derive(Clone, Debug, serde::Serialize)]
pub struct AdapterSummary {
    pub name: String,
    pub backend: String,
    pub device_type: String,
    pub driver: String,
    pub driver_info: String,
    pub timestamps: bool,
    pub float32_filterable: bool,
    pub shader_f64: bool,
    pub subgroups: bool,
    pub max_storage_buffer_binding_size: u64,
    pub max_buffer_size: u64,
    pub max_compute_workgroups_per_dimension: u32,
    pub max_compute_invocations_per_workgroup: u32,
}

/// The device, queue and negotiated capabilities used by every kernel.
pub struct GpuContext {
    /// wgpu errors no error scope caught, surfaced by [`GpuContext::wait`] instead of the
    /// default handler's panic.
    uncaptured: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
    pub adapter: wgpu::Adapter,
    pub device: wgpu::Device,
    pub queue: wgpu::Queue,
    pub info: wgpu::AdapterInfo,
    pub features: wgpu::Features,
    pub limits: wgpu::Limits,
    /// The CUDA context that keeps an NVIDIA GPU's clocks up ([`crate::runtime::clock_hold`]).
    pub clock_hold: Option<ClockHold>,
}

/// How long [`GpuContext::wait`] polls the device before it blocks. A blocking wait returns
/// tens of microseconds after the device is done (the driver's wake-up), which every read-back
/// of a few counters pays; polling returns within a few. Longer waits block, so a long run does
/// not keep a core spinning; on a CPU adapter the wait blocks at once.
const SPIN_WAIT: std::time::Duration = std::time::Duration::from_millis(2);

/// The clock hold of an NVIDIA GPU adapter unless the options say no; None (with the reason
/// in the log) where there is none to take.
fn hold_clocks(info: &wgpu::AdapterInfo, opts: &GpuOptions) -> Option<ClockHold> {
    if opts.no_clock_hold
        || info.vendor != clock_hold::NVIDIA_VENDOR
        || info.device_type == wgpu::DeviceType::Cpu
    {
        return None;
    }
    match clock_hold::hold(&info.device_pci_bus_id) {
        Ok(hold) => {
            log::info!(
                "holding an idle CUDA context on {} (PCI {}) so the driver keeps its clocks up \
                 (--no-clock-hold leaves them to the driver)",
                info.name,
                hold.bus_id
            );
            Some(hold)
        }
        Err(why) => {
            log::info!("{}: clocks left to the driver: {why}", info.name);
            None
        }
    }
}

fn backends() -> wgpu::Backends {
    wgpu::Backends::VULKAN | wgpu::Backends::METAL | wgpu::Backends::DX12
}

/// The instance flags: wgpu's defaults without the validation of indirect dispatches where no
/// D3D12 adapter can be picked (not on Windows); `WGPU_*` environment variables still apply
/// (`WGPU_VALIDATION_INDIRECT_CALL=1` turns it back on).
///
/// That validation injects a compute dispatch, with its barriers, before every
/// `dispatch_workgroups_indirect`, which doubles the launches of an adaptive DG step. What it
/// checks, that no grid dimension exceeds the device limit, holds by construction: every
/// launch record is written by `launch_grid` (shaders/common/dispatch.wgsl), whose dimensions
/// are at most [`crate::runtime::MAX_GROUPS_PER_DIM`], WebGPU's guaranteed minimum of that
/// limit. On D3D12 wgpu also needs it for `@builtin(num_workgroups)` of indirect dispatches
/// (which `linear_index` reads), so it stays on there.
fn instance_flags() -> wgpu::InstanceFlags {
    let mut flags = wgpu::InstanceFlags::default();
    if !cfg!(windows) {
        flags.remove(wgpu::InstanceFlags::VALIDATION_INDIRECT_CALL);
    }
    flags.with_env()
}

fn instance() -> wgpu::Instance {
    let mut desc = wgpu::InstanceDescriptor::new_without_display_handle();
    desc.backends = backends();
    desc.flags = instance_flags();
    wgpu::Instance::new(desc)
}

fn type_rank(t: wgpu::DeviceType) -> u8 {
    match t {
        wgpu::DeviceType::DiscreteGpu => 0,
        wgpu::DeviceType::IntegratedGpu => 1,
        wgpu::DeviceType::VirtualGpu => 2,
        wgpu::DeviceType::Cpu => 3,
        wgpu::DeviceType::Other => 4,
    }
}

fn summarize(a: &wgpu::Adapter) -> AdapterSummary {
    let info = a.get_info();
    let f = a.features();
    let l = a.limits();
    AdapterSummary {
        name: info.name,
        backend: format!("{:?}", info.backend),
        device_type: format!("{:?}", info.device_type),
        driver: info.driver,
        driver_info: info.driver_info,
        timestamps: f.contains(wgpu::Features::TIMESTAMP_QUERY),
        float32_filterable: f.contains(wgpu::Features::FLOAT32_FILTERABLE),
        shader_f64: f.contains(wgpu::Features::SHADER_F64),
        subgroups: f.contains(wgpu::Features::SUBGROUP),
        max_storage_buffer_binding_size: l.max_storage_buffer_binding_size,
        max_buffer_size: l.max_buffer_size,
        max_compute_workgroups_per_dimension: l.max_compute_workgroups_per_dimension,
        max_compute_invocations_per_workgroup: l.max_compute_invocations_per_workgroup,
    }
}

/// All adapters of the enabled backends, best first.
pub fn list_adapters() -> Vec<AdapterSummary> {
    ranked_adapters(&instance()).iter().map(summarize).collect()
}

fn ranked_adapters(instance: &wgpu::Instance) -> Vec<wgpu::Adapter> {
    let mut adapters = pollster::block_on(instance.enumerate_adapters(backends()));
    adapters.sort_by_key(|a| type_rank(a.get_info().device_type));
    adapters
}

/// Pick an adapter: by name when asked, else the best-ranked one.
fn choose_adapter(adapters: Vec<wgpu::Adapter>, wanted: Option<&str>) -> Result<wgpu::Adapter> {
    if adapters.is_empty() {
        return Err(Error::Gpu(
            "no GPU adapter found (Vulkan, Metal or DX12). On Linux without a GPU install a \
             software Vulkan driver: apt-get install mesa-vulkan-drivers"
                .into(),
        ));
    }
    match wanted {
        Some(name) => {
            let needle = name.to_lowercase();
            let names: Vec<String> = adapters.iter().map(|a| a.get_info().name).collect();
            adapters
                .into_iter()
                .find(|a| a.get_info().name.to_lowercase().contains(&needle))
                .ok_or_else(|| {
                    Error::Gpu(format!(
                        "no adapter matches '{name}'; available: {}",
                        names.join(", ")
                    ))
                })
        }
        None => Ok(adapters.into_iter().next().expect("non-empty")),
    }
}

impl GpuContext {
    /// Create the context. Requests timestamps and f32-filterable textures when the adapter
    /// has them (and a pipeline cache when asked), and the adapter's own storage-buffer and
    /// workgroup limits. Subgroups are reported by `devices` but not requested: no kernel uses
    /// them (a subgroup scan of the thread totals gained nothing on an H200, BENCHMARKS.md
    /// session 16).
    pub fn new(opts: &GpuOptions) -> Result<GpuContext> {
        let instance = instance();
        let env = std::env::var(ADAPTER_ENV).ok().filter(|s| !s.is_empty());
        let wanted = opts.adapter.clone().or(env);
        let adapter = choose_adapter(ranked_adapters(&instance), wanted.as_deref())?;
        let info = adapter.get_info();
        let mut wanted_features = wgpu::Features::TIMESTAMP_QUERY
            | wgpu::Features::TIMESTAMP_QUERY_INSIDE_ENCODERS
            | wgpu::Features::FLOAT32_FILTERABLE;
        if opts.pipeline_cache.is_some() {
            wanted_features |= wgpu::Features::PIPELINE_CACHE;
        }
        let features = adapter.features() & wanted_features;
        let al = adapter.limits();
        let limits = wgpu::Limits {
            max_storage_buffer_binding_size: al.max_storage_buffer_binding_size,
            max_buffer_size: al.max_buffer_size,
            max_storage_buffers_per_shader_stage: al.max_storage_buffers_per_shader_stage,
            max_compute_workgroups_per_dimension: al.max_compute_workgroups_per_dimension,
            max_compute_invocations_per_workgroup: al.max_compute_invocations_per_workgroup,
            max_compute_workgroup_size_x: al.max_compute_workgroup_size_x,
            max_compute_workgroup_storage_size: al.max_compute_workgroup_storage_size,
            max_bind_groups: al.max_bind_groups,
            max_dynamic_uniform_buffers_per_pipeline_layout: al
                .max_dynamic_uniform_buffers_per_pipeline_layout,
            ..wgpu::Limits::default()
        };
        let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
            label: Some("chromaflow"),
            required_features: features,
            required_limits: limits.clone(),
            experimental_features: wgpu::ExperimentalFeatures::disabled(),
            memory_hints: wgpu::MemoryHints::Performance,
            trace: wgpu::Trace::Off,
        }))
        .map_err(|e| Error::Gpu(format!("could not open device on '{}': {e}", info.name)))?;
        let uncaptured = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let sink = uncaptured.clone();
        device.on_uncaptured_error(std::sync::Arc::new(move |e: wgpu::Error| {
            log::error!("wgpu: {e}");
            if let Ok(mut v) = sink.lock() {
                v.push(e.to_string());
            }
        }));
        log::info!(
            "GPU: {} ({:?}, {:?}, driver {} {})",
            info.name,
            info.backend,
            info.device_type,
            info.driver,
            info.driver_info
        );
        let clock_hold = hold_clocks(&info, opts);
        Ok(GpuContext {
            uncaptured,
            adapter,
            device,
            queue,
            info,
            features,
            limits,
            clock_hold,
        })
    }

    /// True when kernels can be timed with timestamp queries.
    pub fn has_timestamps(&self) -> bool {
        self.features.contains(wgpu::Features::TIMESTAMP_QUERY)
    }

    /// True when rgba32float textures can be sampled with a linear filter.
    pub fn float32_filterable(&self) -> bool {
        self.features.contains(wgpu::Features::FLOAT32_FILTERABLE)
    }

    /// Error unless a buffer of `bytes` fits in one storage binding.
    pub fn check_binding_size(&self, what: &str, bytes: u64) -> Result<()> {
        let max = self.limits.max_storage_buffer_binding_size;
        if bytes > max {
            return Err(Error::Gpu(format!(
                "{what} needs {} MiB in one storage buffer but this adapter ({}) allows at most \
                 {} MiB per binding (max_storage_buffer_binding_size); use a smaller mesh or a \
                 GPU with a larger limit",
                bytes.div_ceil(1 << 20),
                self.info.name,
                max >> 20
            )));
        }
        Ok(())
    }

    /// Summary of the chosen adapter.
    pub fn summary(&self) -> AdapterSummary {
        summarize(&self.adapter)
    }

    /// Block until all submitted work is done; fails with the first wgpu error that no error
    /// scope caught since the last call.
    pub fn wait(&self) -> Result<()> {
        self.poll_until(
            wgpu::PollStatus::is_queue_empty,
            wgpu::PollType::wait_indefinitely(),
        )
    }

    /// Block until submission `index` is done and `ready()` holds (a map callback it fired),
    /// spinning first as [`GpuContext::wait`] does; work submitted after `index` may still
    /// run. Fails with the first wgpu error no error scope caught.
    pub fn wait_for(
        &self,
        index: &wgpu::SubmissionIndex,
        mut ready: impl FnMut() -> bool,
    ) -> Result<()> {
        self.poll_until(
            |_| ready(),
            wgpu::PollType::Wait {
                submission_index: Some(index.clone()),
                timeout: None,
            },
        )
    }

    /// Poll until `done` holds of a poll's status, spinning for up to [`SPIN_WAIT`], then
    /// block with `block` if it does not yet; then the first uncaptured error.
    fn poll_until(
        &self,
        mut done: impl FnMut(&wgpu::PollStatus) -> bool,
        block: wgpu::PollType,
    ) -> Result<()> {
        let poll = |kind| {
            self.device
                .poll(kind)
                .map_err(|e| Error::Gpu(format!("device poll failed: {e}")))
        };
        // A CPU adapter (lavapipe) runs the kernels on the host's cores: spinning would take
        // one from it.
        let spin = if self.info.device_type == wgpu::DeviceType::Cpu {
            std::time::Duration::ZERO
        } else {
            SPIN_WAIT
        };
        let started = std::time::Instant::now();
        loop {
            if done(&poll(wgpu::PollType::Poll)?) {
                break;
            }
            if started.elapsed() >= spin {
                poll(block)?;
                break;
            }
            std::hint::spin_loop();
        }
        self.take_uncaptured_error()
    }

    /// The first uncaptured wgpu error since the last call, as an error.
    pub fn take_uncaptured_error(&self) -> Result<()> {
        let mut errors = self
            .uncaptured
            .lock()
            .map_err(|_| Error::Gpu("error log poisoned".into()))?;
        if errors.is_empty() {
            return Ok(());
        }
        let first = errors.remove(0);
        let more = errors.len();
        errors.clear();
        Err(Error::Gpu(if more > 0 {
            format!("{first} (and {more} more errors)")
        } else {
            first
        }))
    }
}
