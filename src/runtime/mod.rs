//! The runtime: the one layer that knows a compute backend. Everything above it (mesh
//! preparation, solvers, the application) describes GPU work in backend-neutral terms and
//! this module runs it on wgpu (WGSL kernels) or, with feature `cuda`, on CUDA (the twins in
//! `shaders/cuda/`, compiled by NVRTC at run time).
//!
//! The vocabulary:
//! * [`Runtime`]: an opened backend (a wgpu adapter or CUDA device 0); cheap to clone.
//! * [`Buffer`]: device memory, created from host data or zeroed, read back, written, copied.
//! * [`Kernel`]: a kernel built from a shader stem (`shaders/<stem>.wgsl` or
//!   `shaders/cuda/<stem>.cu`) plus named constants (WGSL override constants, NVRTC `-D`
//!   defines); its interface (the bindings, in order) is reflected from the WGSL with naga.
//! * [`Texture`]: a 2D rgba float texture sampled with bilinear filtering (the smoothing metric).
//! * [`PlanBuilder`] / [`Plan`]: an ordered list of launches (kernel, arguments, [`ItemRange`],
//!   thread count), one per color where a kernel runs per color, split into named segments
//!   for timing. A plan is prepared once (bind groups, range uniforms, launch parameters) and
//!   queued many times: [`Runtime::queue`] records `repeats` copies in order (one stream;
//!   wgpu submits every [`wgpu::SUBMIT_LAUNCHES`] launches so the device starts while the host
//!   records).
//!   Launches run in order and each sees the writes of the ones before it. (On CUDA sm_90 and
//!   later a launch may start while the one before it drains: every CUDA kernel first waits for
//!   the kernels before it, `await_previous_launches` in shaders/cuda/common/dispatch.cuh, so
//!   only the launch latency overlaps; [`GpuOptions::no_launch_overlap`] turns it off.)
//! * [`Runtime::time`]: seconds per segment from timestamp queries or CUDA events.
//! * Device-sized launches ([`PlanBuilder::launch_device`]): the item range and the workgroup
//!   grid come from a [`LAUNCH_WORDS`]-word record that earlier device work wrote, so a plan
//!   recorded once follows counts that change on the device (an adapted mesh). wgpu dispatches
//!   them indirectly (`dispatch_workgroups_indirect`: exactly the written grid); CUDA cannot
//!   take a grid size from device memory, so it launches the host's upper bound and the
//!   threads past the written count return.
//! * Host bounds ([`ThreadBound`], [`PlanBuilder::bounded`]): a count the host knows to hold
//!   for the items a launch must cover (the elements of an adapted mesh), read each time the
//!   plan is queued, so that a launch sized for the buffers' capacity starts only the threads
//!   the mesh needs: CUDA launches (device-sized or not) and wgpu's host-sized dispatches take
//!   the smaller of the two; wgpu's indirect dispatches are exact anyway.
//! * [`Runtime::readbacks`]: how many times the host waited for device data (read-backs), to
//!   hold a loop to a sync budget.
//!
//! Kernel arguments follow one convention on both backends: the WGSL bindings sorted by
//! (group, binding) with group 1 reserved for the [`ItemRange`] and samplers folded into their
//! texture; CUDA kernels take the same list as parameters (storage buffers as pointers, uniform
//! structs by value, textures as texture objects) with the range last, by value.

pub mod bandwidth;
pub mod clock_hold;
pub mod disk_cache;
pub mod half;
pub mod interface;
pub mod launch_cost;
pub mod reduce;
pub mod scan;
pub mod shaders;
pub mod wgpu;

#[cfg(feature = "cuda")]
pub mod cuda;

use crate::error::{Error, Result};
use std::sync::Arc;

pub use self::wgpu::context::{list_adapters, AdapterSummary, GpuOptions};

/// Threads per workgroup (CUDA block) of the per-item kernels (WORKGROUP_SIZE in
/// shaders/common/dispatch.wgsl and shaders/cuda/common/dispatch.cuh), and of every kernel a
/// device launch record sizes; a kernel's own width is [`Kernel::workgroup_size`].
pub const WORKGROUP_SIZE: u32 = 64;

/// Threads per workgroup of the per-item kernels whose threads mostly return at once
/// (WIDE_WORKGROUP_SIZE in shaders/common/dispatch.wgsl and its CUDA twin): the adaptation's
/// amr_mark and amr_compact. The runtime reads each kernel's width from its WGSL
/// ([`Kernel::workgroup_size`]).
pub const WIDE_WORKGROUP_SIZE: u32 = 256;

/// Words of a device launch record (LAUNCH_WORDS in shaders/common/dispatch.wgsl and its CUDA
/// twin): `[first, count, groups x, groups y, groups z, 0, 0, 0]`, written on the device
/// (e.g. `write_launch` in shaders/amr_scan.wgsl) and read by kernels launched with a range whose count is
/// [`DEVICE_COUNT`] and, on wgpu, by the indirect dispatch.
pub const LAUNCH_WORDS: u32 = 8;

/// The count of a range whose first item and count are device words: the kernel reads
/// `first, count` from the launch record at word `range.first` of its launch-words buffer.
pub const DEVICE_COUNT: u32 = u32::MAX;

/// Workgroups per grid dimension a launch record asks for at most (MAX_GROUPS_PER_DIM in
/// shaders/common/dispatch.wgsl: WebGPU's guaranteed limit).
pub const MAX_GROUPS_PER_DIM: u32 = 65535;

/// The launch record of items `first .. first + count` as the device writes it (`launch_grid`
/// in shaders/common/dispatch.wgsl): one thread per item in at least one workgroup, rows of at
/// most [`MAX_GROUPS_PER_DIM`] workgroups.
pub fn launch_record(first: u32, count: u32) -> [u32; LAUNCH_WORDS as usize] {
    launch_record_threads(first, count, count)
}

/// The launch record of items `first .. first + count` with a grid of `threads` threads
/// (`write_launch_threads` in shaders/amr_scan.wgsl): for a kernel that gives each item
/// several threads (`dg_flux`, a thread per edge node).
pub fn launch_record_threads(first: u32, count: u32, threads: u32) -> [u32; LAUNCH_WORDS as usize] {
    let groups = threads.div_ceil(WORKGROUP_SIZE).max(1);
    let x = groups.min(MAX_GROUPS_PER_DIM);
    [first, count, x, groups.div_ceil(x), 1, 0, 0, 0]
}

/// The constant of a kernel that is not compiled in but given at launch: the element capacity
/// NE of the solver's buffers, the stride of its per-element arrays (`range.capacity` in WGSL,
/// the module constant `NE` in CUDA). The buffers grow with an adaptive mesh; with the
/// capacity compiled in, every growth compiled every kernel again (1-5 s of a first adaptive
/// run on an H200), with it given at launch a kernel compiles once whatever the mesh's size.
/// Passed among a kernel's constants like the others ([`Runtime::kernel`]).
pub const CAPACITY_CONSTANT: &str = "NE";

/// [`CAPACITY_CONSTANT`] for buffers that never grow (a solver sized exactly to a fixed mesh),
/// for kernels that run faster with it compiled in: CUDA compiles it in (`-DNE`; NVCC's code
/// for a constant stride is 5-11% faster for some DG kernels, 2x slower for another: the DG
/// solver picks per kernel and order, src/solver/dg/gpu.rs); wgpu still takes it at launch
/// (within 0-1% per step there), so its pipeline serves every capacity.
pub const FIXED_CAPACITY_CONSTANT: &str = "NE_FIXED";

/// How a kernel was asked to take its capacity.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum CapacityArg {
    /// [`CAPACITY_CONSTANT`]: at launch on both backends.
    AtLaunch(u32),
    /// [`FIXED_CAPACITY_CONSTANT`]: compiled in where that is faster (CUDA).
    Fixed(u32),
}

impl CapacityArg {
    pub(crate) fn value(self) -> u32 {
        match self {
            CapacityArg::AtLaunch(c) | CapacityArg::Fixed(c) => c,
        }
    }
}

/// The range of items a launch works on (`first .. first + count`), plus two words a kernel may
/// use for its own parameters (a color, a register, a stage time). Mirrors `ItemRange` in
/// shaders/common/dispatch.wgsl (a dynamic-offset uniform, where the runtime adds the kernel's
/// capacity, [`RangeRecord`]) and shaders/cuda/common/dispatch.cuh (passed by value).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, bytemuck::Pod, bytemuck::Zeroable)]
pub struct ItemRange {
    pub first: u32,
    pub count: u32,
    pub color: u32,
    pub pad: u32,
}

/// What a WGSL kernel's `range` uniform holds: the launch's [`ItemRange`] and its kernel's
/// capacity ([`Kernel::capacity`], 0 for a kernel built without one), padded to 16-byte rows.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct RangeRecord {
    pub range: ItemRange,
    pub capacity: u32,
    pub reserved: [u32; 3],
}

impl ItemRange {
    /// Items `first .. first + count`, extra words zero.
    pub fn new(first: u32, count: u32) -> ItemRange {
        ItemRange {
            first,
            count,
            color: 0,
            pad: 0,
        }
    }

    /// Items `0 .. count`.
    pub fn all(count: u32) -> ItemRange {
        ItemRange::new(0, count)
    }

    /// One range per color from CSR-style offsets: range c is `offsets[c] .. offsets[c + 1]`
    /// with `color = c`. Errors unless the offsets are non-decreasing with at least one color.
    pub fn per_color(offsets: &[u32]) -> Result<Vec<ItemRange>> {
        if offsets.len() < 2 || offsets.windows(2).any(|w| w[1] < w[0]) {
            return Err(Error::Invalid(format!(
                "color offsets must be non-decreasing with at least one color, got {offsets:?}"
            )));
        }
        Ok(offsets
            .windows(2)
            .enumerate()
            .map(|(c, w)| ItemRange {
                first: w[0],
                count: w[1] - w[0],
                color: c as u32,
                pad: 0,
            })
            .collect())
    }
}

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
    /// error tells how to rebuild. Says nothing about drivers: see [`Runtime::new`].
    pub fn ensure_compiled(self) -> Result<()> {
        match self {
            BackendKind::Wgpu => Ok(()),
            BackendKind::Cuda if cfg!(feature = "cuda") => Ok(()),
            BackendKind::Cuda => Err(Error::Invalid(format!(
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

/// Precision of the texels a [`Texture`] is sampled at.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub enum TexelPrecision {
    F32,
    F16,
}

/// The opened backend behind a [`Runtime`].
pub(crate) enum Device {
    Wgpu(Box<self::wgpu::WgpuDevice>),
    #[cfg(feature = "cuda")]
    Cuda(Box<self::cuda::CudaDevice>),
}

/// An opened compute backend. Clones share the device.
#[derive(Clone)]
pub struct Runtime {
    device: Arc<Device>,
    /// Read-backs so far (each waits for the device): see [`Runtime::readbacks`].
    readbacks: Arc<std::sync::atomic::AtomicU64>,
    /// Kernels built so far, by stem, CUDA entry and constants: a kernel asked for again (the
    /// scans every prefix sum builds, an adaptive solver rebuilt with more room) is not
    /// compiled again.
    kernels: Arc<std::sync::Mutex<std::collections::HashMap<KernelKey, Kernel>>>,
    /// Whether [`Runtime::time`] times every launch on its own ([`Runtime::set_time_each_launch`]).
    time_each_launch: Arc<std::sync::atomic::AtomicBool>,
    /// CUDA: `stream_copy`, which copies a small read-back, once built
    /// ([`Runtime::read_copier`]): no kernel lookup per read.
    #[cfg(feature = "cuda")]
    read_copier: Arc<std::sync::OnceLock<Kernel>>,
}

/// A kernel's stem, CUDA entry point, compiled constants (values by their bits), whether wgpu
/// builds it without runtime checks ([`shaders::trusted_kernels`], which `bench backends`
/// switches between its columns on one runtime) and the capacity of its CUDA module (at launch
/// or compiled in).
type KernelKey = (
    String,
    Option<String>,
    Vec<(String, u64)>,
    bool,
    Option<CapacityArg>,
);

/// The cache key of a kernel asked for now: `constants` without the capacity, and
/// `module_capacity` where the backend loads a module per capacity (CUDA).
fn kernel_key(
    stem: &str,
    cuda_entry: Option<&str>,
    constants: &[(&str, f64)],
    module_capacity: Option<CapacityArg>,
) -> KernelKey {
    (
        stem.to_string(),
        cuda_entry.map(str::to_string),
        constants
            .iter()
            .map(|(n, v)| (n.to_string(), v.to_bits()))
            .collect(),
        shaders::trusted_kernels(),
        module_capacity,
    )
}

/// A kernel's constants that are compiled in (all but its capacity).
type CompiledConstants<'a> = Vec<(&'a str, f64)>;

/// `constants` without the capacity ([`CAPACITY_CONSTANT`] or [`FIXED_CAPACITY_CONSTANT`]),
/// and the capacity when given: a whole number that fits a u32, else an error naming the
/// kernel.
fn split_capacity<'a>(
    stem: &str,
    constants: &[(&'a str, f64)],
) -> Result<(Option<CapacityArg>, CompiledConstants<'a>)> {
    let mut capacity = None;
    let mut compiled = Vec::with_capacity(constants.len());
    for &(name, value) in constants {
        let arg: fn(u32) -> CapacityArg = match name {
            CAPACITY_CONSTANT => CapacityArg::AtLaunch,
            FIXED_CAPACITY_CONSTANT => CapacityArg::Fixed,
            _ => {
                compiled.push((name, value));
                continue;
            }
        };
        if !(value >= 0.0 && value <= f64::from(u32::MAX) && value.fract() == 0.0) {
            return Err(Error::Gpu(format!(
                "kernel shaders/{stem}.wgsl: capacity {name} = {value} is not a count of elements"
            )));
        }
        capacity = Some(arg(value as u32));
    }
    Ok((capacity, compiled))
}

/// A kernel to build: its stem and constants ([`Runtime::kernel`]).
pub type KernelSpec<'a> = (&'a str, &'a [(&'a str, f64)]);

/// A [`KernelSpec`] that owns its constants (for lists built by a function, e.g. to build
/// kernels ahead of their use).
pub type OwnedKernelSpec = (&'static str, Vec<(&'static str, f64)>);

/// Device memory of one backend; clones share the allocation.
#[derive(Clone)]
pub struct Buffer {
    pub(crate) inner: BufferInner,
    bytes: u64,
}

#[derive(Clone)]
pub(crate) enum BufferInner {
    Wgpu(::wgpu::Buffer),
    #[cfg(feature = "cuda")]
    Cuda(Arc<self::cuda::DeviceMemory>),
}

impl Buffer {
    /// Size in bytes (as asked for; the allocation may be padded).
    pub fn bytes(&self) -> u64 {
        self.bytes
    }
}

/// A 2D rgba float texture sampled with bilinear filtering, clamp-to-edge addressing and
/// normalised coordinates (WGSL `texture_2d<f32>` + sampler, a CUDA texture object; kernels
/// that read texels directly get the texel buffer on CUDA).
#[derive(Clone)]
pub struct Texture {
    pub(crate) inner: TextureInner,
    precision: TexelPrecision,
    size: u32,
}

#[derive(Clone)]
pub(crate) enum TextureInner {
    Wgpu(Arc<self::wgpu::WgpuTexture>),
    #[cfg(feature = "cuda")]
    Cuda(Arc<self::cuda::CudaTexture>),
}

impl Texture {
    /// Precision of the stored texels.
    pub fn precision(&self) -> TexelPrecision {
        self.precision
    }

    /// Side length in texels.
    pub fn size(&self) -> u32 {
        self.size
    }
}

/// A compiled kernel with its reflected interface.
#[derive(Clone)]
pub struct Kernel {
    pub(crate) inner: KernelInner,
    /// `shaders/<stem>.wgsl`.
    stem: String,
    /// Argument slots, in launch order (see the module doc).
    pub(crate) slots: Arc<Vec<interface::Binding>>,
    /// Threads per workgroup (CUDA block), from the WGSL entry point.
    workgroup_size: u32,
    /// The capacity it was asked for (0 without one): on wgpu written into each launch's range
    /// record, on CUDA set in the module it was loaded into or compiled in.
    capacity: u32,
}

#[derive(Clone)]
pub(crate) enum KernelInner {
    Wgpu(Arc<self::wgpu::WgpuKernel>),
    #[cfg(feature = "cuda")]
    Cuda(Arc<self::cuda::CudaKernel>),
}

impl Kernel {
    /// The shader stem the kernel was built from.
    pub fn stem(&self) -> &str {
        &self.stem
    }

    /// Threads per workgroup (CUDA block): [`WORKGROUP_SIZE`] for most per-item kernels,
    /// [`WIDE_WORKGROUP_SIZE`] for the adaptation's near-empty ones, the scan's own
    /// ([`scan::SCAN_THREADS`]) for the scans, 1 for the single-thread clocks. A launch of `threads` threads
    /// runs ceil(threads / workgroup_size) workgroups.
    pub fn workgroup_size(&self) -> u32 {
        self.workgroup_size
    }

    /// The capacity the kernel was asked for (0 without one).
    pub fn capacity(&self) -> u32 {
        self.capacity
    }
}

/// One argument of a launch.
#[derive(Clone)]
pub enum Arg {
    /// A storage buffer (read-only or read-write as the kernel declares it).
    Buffer(Buffer),
    /// A small struct passed by value (a WGSL uniform).
    Params(Vec<u8>),
    /// A texture (with its sampler where the kernel declares one).
    Texture(Texture),
}

impl From<&Buffer> for Arg {
    fn from(b: &Buffer) -> Arg {
        Arg::Buffer(b.clone())
    }
}

impl From<&Texture> for Arg {
    fn from(t: &Texture) -> Arg {
        Arg::Texture(t.clone())
    }
}

impl Arg {
    /// A uniform struct passed by value.
    pub fn params<T: bytemuck::Pod>(value: &T) -> Arg {
        Arg::Params(bytemuck::bytes_of(value).to_vec())
    }
}

/// The arguments of a launch, by reference: `args![edges, cells, acc]`.
#[macro_export]
macro_rules! args {
    ($($a:expr),* $(,)?) => {
        [$($crate::runtime::Arg::from(&$a)),*]
    };
}

/// A thread count the host sets and launches read when their plan is queued
/// ([`PlanBuilder::bounded`]): the host's knowledge of how many items a launch sized for the
/// buffers' capacity must cover (the elements of an adapted mesh, GK19's n + 3 refined - 3
/// clusters, which the host computes from the counts it reads back anyway). A backend
/// starts `min(threads, bound)` threads, or on wgpu exactly a device-written grid; the kernel
/// still checks its count, so a bound too high costs only idle threads, one too low skips
/// items. Shared by its clones: one `set` moves every plan that reads it.
#[derive(Clone, Debug)]
pub struct ThreadBound(Arc<std::sync::atomic::AtomicU32>);

impl ThreadBound {
    pub fn new(threads: u32) -> ThreadBound {
        ThreadBound(Arc::new(std::sync::atomic::AtomicU32::new(threads)))
    }

    /// Bound the launches that read this from the next queue (or CUDA submit) on; work
    /// already queued keeps the bound it was queued with.
    pub fn set(&self, threads: u32) {
        self.0.store(threads, std::sync::atomic::Ordering::Relaxed);
    }

    pub fn get(&self) -> u32 {
        self.0.load(std::sync::atomic::Ordering::Relaxed)
    }
}

/// One kernel launch: `threads` threads (in workgroups of the kernel's
/// [`Kernel::workgroup_size`]) over `range`.
#[derive(Clone)]
pub struct Launch {
    pub kernel: Kernel,
    pub args: Vec<Arg>,
    pub range: ItemRange,
    /// The threads launched, or with `grid` an upper bound of them (what CUDA launches).
    pub threads: u32,
    /// The launch record (buffer, first word) whose workgroup grid (words 2..5) the device
    /// wrote: wgpu dispatches it indirectly.
    pub grid: Option<(Buffer, u32)>,
    /// A host bound of the threads needed: at most `min(threads, bound)` are started.
    pub bound: Option<ThreadBound>,
}

impl Launch {
    /// The threads to start as the bound stands now (at least one).
    pub(crate) fn bounded_threads(threads: u32, bound: Option<&ThreadBound>) -> u32 {
        bound.map_or(threads, |b| threads.min(b.get())).max(1)
    }
}

/// A named run of launches, timed as one unit by [`Runtime::time`].
#[derive(Clone, Debug, PartialEq)]
pub struct Segment {
    pub label: &'static str,
    /// Index of its first launch in the plan.
    pub start: usize,
}

/// Builds a launch plan: launches in order, grouped into timing segments.
#[derive(Clone, Default)]
pub struct PlanBuilder {
    launches: Vec<Launch>,
    segments: Vec<Segment>,
}

impl PlanBuilder {
    pub fn new() -> PlanBuilder {
        PlanBuilder::default()
    }

    /// Start a new timing segment; launches until the next call belong to it.
    pub fn segment(&mut self, label: &'static str) -> &mut Self {
        self.segments.retain(|s| s.start < self.launches.len());
        self.segments.push(Segment {
            label,
            start: self.launches.len(),
        });
        self
    }

    /// Launch `kernel` with one thread per item of `range`.
    pub fn launch(&mut self, kernel: &Kernel, args: &[Arg], range: ItemRange) -> &mut Self {
        self.launch_threads(kernel, args, range, range.count)
    }

    /// Launch `kernel` with `threads` threads (e.g. whole workgroups of a reduction).
    pub fn launch_threads(
        &mut self,
        kernel: &Kernel,
        args: &[Arg],
        range: ItemRange,
        threads: u32,
    ) -> &mut Self {
        if self.segments.is_empty() {
            self.segments.push(Segment {
                label: "",
                start: 0,
            });
        }
        self.launches.push(Launch {
            kernel: kernel.clone(),
            args: args.to_vec(),
            range,
            threads,
            grid: None,
            bound: None,
        });
        self
    }

    /// Bound the last launch's threads by `bound` as it stands when the plan is queued
    /// ([`ThreadBound`]): the caller keeps it at least the items the kernel must cover from
    /// then until the work completes. Work recorded ahead ([`Runtime::record`]) on wgpu takes
    /// the bound at recording.
    pub fn bounded(&mut self, bound: &ThreadBound) -> &mut Self {
        if let Some(l) = self.launches.last_mut() {
            l.bound = Some(bound.clone());
        }
        self
    }

    /// Launch `kernel` sized on the device: `range.first` is the first word of a launch record
    /// in `records` and `range.count` is [`DEVICE_COUNT`], so the kernel takes its first item
    /// and count from the record (`color` and `pad` stay the host's); the workgroups are the
    /// record's grid on wgpu (indirect dispatch) and `max_threads` on CUDA, which cannot take
    /// a grid from device memory (threads past the record's count return). A kernel that reads
    /// its own count elsewhere may take the grid alone (`records` not among `args`).
    pub fn launch_device(
        &mut self,
        kernel: &Kernel,
        args: &[Arg],
        range: ItemRange,
        max_threads: u32,
        records: &Buffer,
    ) -> &mut Self {
        let record = range.first;
        self.launch_threads(
            kernel,
            args,
            ItemRange {
                count: DEVICE_COUNT,
                ..range
            },
            max_threads,
        );
        if let Some(l) = self.launches.last_mut() {
            l.grid = Some((records.clone(), record));
        }
        self
    }

    /// One launch per range (per color), in order; empty ranges are skipped.
    pub fn launch_ranges(
        &mut self,
        kernel: &Kernel,
        args: &[Arg],
        ranges: &[ItemRange],
    ) -> &mut Self {
        for r in ranges.iter().filter(|r| r.count > 0) {
            self.launch(kernel, args, *r);
        }
        self
    }

    pub fn launches(&self) -> &[Launch] {
        &self.launches
    }

    /// Append `other`'s launches and segments after this plan's (two plans that run back to
    /// back as one: one submission, one CUDA graph).
    pub fn append(&mut self, other: &PlanBuilder) -> &mut Self {
        let offset = self.launches.len();
        self.segments.retain(|s| s.start < offset);
        self.segments.extend(other.segments.iter().map(|s| Segment {
            label: s.label,
            start: s.start + offset,
        }));
        self.launches.extend(other.launches.iter().cloned());
        self
    }

    pub fn is_empty(&self) -> bool {
        self.launches.is_empty()
    }

    /// Check every launch's arguments against its kernel's interface.
    fn check(&self) -> Result<()> {
        for (i, l) in self.launches.iter().enumerate() {
            if let Some((records, word)) = &l.grid {
                if l.kernel.workgroup_size != WORKGROUP_SIZE {
                    return Err(Error::Gpu(format!(
                        "launch {i} of kernel {}: a device-sized launch needs workgroups of \
                         {WORKGROUP_SIZE} threads (the device's launch records are gridded so), \
                         the kernel has {}",
                        l.kernel.stem, l.kernel.workgroup_size
                    )));
                }
                let end = u64::from(word + LAUNCH_WORDS) * 4;
                if end > records.bytes || word % LAUNCH_WORDS != 0 {
                    return Err(Error::Gpu(format!(
                        "launch {i} of kernel {}: launch record at word {word} of a buffer of {} \
                         bytes (records are {LAUNCH_WORDS} aligned words)",
                        l.kernel.stem, records.bytes
                    )));
                }
            }
            let slots = &l.kernel.slots;
            if l.args.len() != slots.len() {
                return Err(Error::Gpu(format!(
                    "launch {i} of kernel {}: {} arguments given, the kernel takes {} ({})",
                    l.kernel.stem,
                    l.args.len(),
                    slots.len(),
                    slots
                        .iter()
                        .map(|s| s.name.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                )));
            }
            for (a, s) in l.args.iter().zip(slots.iter()) {
                let ok = matches!(
                    (a, &s.kind),
                    (Arg::Buffer(_), interface::BindingKind::Storage { .. })
                        | (Arg::Params(_), interface::BindingKind::Uniform { .. })
                        | (Arg::Texture(_), interface::BindingKind::Texture)
                );
                if !ok {
                    return Err(Error::Gpu(format!(
                        "launch {i} of kernel {}: argument '{}' has the wrong kind ({:?} expected)",
                        l.kernel.stem, s.name, s.kind
                    )));
                }
                if let (Arg::Params(p), interface::BindingKind::Uniform { size }) = (a, &s.kind) {
                    if p.len() != *size as usize {
                        return Err(Error::Gpu(format!(
                            "launch {i} of kernel {}: '{}' is {} bytes, the kernel's struct {}",
                            l.kernel.stem,
                            s.name,
                            p.len(),
                            size
                        )));
                    }
                }
            }
        }
        Ok(())
    }
}

/// A prepared plan, ready to be queued any number of times.
pub struct Plan {
    pub(crate) inner: PlanInner,
    segments: Vec<Segment>,
    launches: usize,
    /// Each launch's kernel stem, for timing launch by launch ([`Plan::launch_labels`]).
    stems: Vec<String>,
    launch_labels: std::sync::OnceLock<Vec<&'static str>>,
}

/// Work recorded by [`Runtime::record`], waiting for [`Runtime::submit`]; dropping it
/// discards it.
pub struct Recorded {
    launches: usize,
    commands: RecordedCommands,
}

impl Recorded {
    /// Error unless this was recorded of `plan` (checked by its launch count).
    fn check(&self, plan: &Plan) -> Result<()> {
        if self.launches != plan.launches {
            return Err(Error::Invalid(format!(
                "submit: the recorded work has {} launches per run, the plan {}",
                self.launches, plan.launches
            )));
        }
        Ok(())
    }
}

enum RecordedCommands {
    Wgpu(Vec<::wgpu::CommandBuffer>),
    #[cfg(feature = "cuda")]
    OnSubmit {
        repeats: u32,
    },
}

/// Device time of queued work, read long after without holding the work up: each
/// [`Runtime::queue_timed`] or [`Runtime::submit_timed`] puts its work between two timestamps
/// (wgpu: timestamp queries written at the bottom of the pipe, in the work's submission; CUDA:
/// timing events on the stream), each taken once the work queued before it is done, so a span is
/// the device time of its work alone. [`Runtime::drain_timer`] reads them all at once. Clones
/// share the spans. From [`Runtime::device_timer`]: none on an adapter without timestamps.
#[derive(Clone)]
pub struct DeviceTimer {
    spans: Arc<std::sync::Mutex<TimerSpans>>,
}

enum TimerSpans {
    Wgpu(self::wgpu::SpanTimer),
    #[cfg(feature = "cuda")]
    Cuda(self::cuda::SpanEvents),
}

impl std::fmt::Debug for DeviceTimer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeviceTimer").finish_non_exhaustive()
    }
}

impl DeviceTimer {
    fn lock(&self) -> Result<std::sync::MutexGuard<'_, TimerSpans>> {
        self.spans
            .lock()
            .map_err(|_| Error::Gpu("device timer poisoned".into()))
    }

    /// Spans taken since the last drain.
    pub fn len(&self) -> Result<usize> {
        Ok(match &*self.lock()? {
            TimerSpans::Wgpu(t) => t.len(),
            #[cfg(feature = "cuda")]
            TimerSpans::Cuda(t) => t.len(),
        })
    }

    /// Whether no span was taken since the last drain.
    pub fn is_empty(&self) -> Result<bool> {
        Ok(self.len()? == 0)
    }
}

/// The byte offset and length of a read-back of `count` elements of `T` from element `first`
/// of `buffer`, or an error when they pass its end.
fn read_range<T>(buffer: &Buffer, first: usize, count: usize) -> Result<(u64, u64)> {
    let size = std::mem::size_of::<T>();
    let offset = (first * size) as u64;
    let bytes = (count * size) as u64;
    if offset + bytes > buffer.bytes {
        return Err(Error::Gpu(format!(
            "read-back of {bytes} bytes at offset {offset} exceeds buffer size {}",
            buffer.bytes
        )));
    }
    Ok((offset, bytes))
}

/// A read-back queued by [`Runtime::read_ahead`], to be finished by [`Runtime::finish_read`];
/// dropping it discards the words (on CUDA once the copy is done, which frees its memory).
pub struct PendingRead<T> {
    copy: Option<PendingCopy>,
    _words: std::marker::PhantomData<T>,
}

enum PendingCopy {
    Wgpu(self::wgpu::buffers::PendingCopy),
    #[cfg(feature = "cuda")]
    Cuda(self::cuda::PendingCopy),
}

pub(crate) enum PlanInner {
    Wgpu(self::wgpu::WgpuPlan),
    #[cfg(feature = "cuda")]
    Cuda(self::cuda::CudaPlan),
}

impl Plan {
    /// The launches of each timing segment, in order (one range over all launches when the
    /// builder named none).
    pub(crate) fn segment_ranges(&self) -> Vec<std::ops::Range<usize>> {
        let starts: Vec<usize> = self.segments.iter().map(|s| s.start).collect();
        if starts.is_empty() {
            return std::iter::once(0..self.launches).collect();
        }
        starts
            .iter()
            .enumerate()
            .map(|(i, &a)| a..starts.get(i + 1).copied().unwrap_or(self.launches))
            .collect()
    }

    /// One label per launch for timing launch by launch: `"<segment>: <kernel stem>"`, with
    /// " <k>" added for the k-th launch (k >= 2) of the same kernel in one segment, so
    /// "compact: amr_scan", "compact: amr_compact", "compact: amr_compact 2", ... Made on the
    /// first timing that asks for them, then kept with the plan.
    fn launch_labels(&self) -> &[&'static str] {
        self.launch_labels.get_or_init(|| {
            let mut segment = "";
            // The stems launched so far in the current segment.
            let mut seen: Vec<&str> = Vec::new();
            let mut labels = Vec::with_capacity(self.stems.len());
            for (launch, stem) in self.stems.iter().enumerate() {
                if let Some(s) = self.segments.iter().rfind(|s| s.start == launch) {
                    segment = s.label;
                    seen.clear();
                }
                seen.push(stem);
                let k = seen.iter().filter(|&&st| st == stem).count();
                let label = match (segment.is_empty(), k) {
                    (true, 1) => stem.clone(),
                    (true, k) => format!("{stem} {k}"),
                    (false, 1) => format!("{segment}: {stem}"),
                    (false, k) => format!("{segment}: {stem} {k}"),
                };
                labels.push(intern_label(label));
            }
            labels
        })
    }

    /// Number of launches.
    pub fn len(&self) -> usize {
        self.launches
    }

    pub fn is_empty(&self) -> bool {
        self.launches == 0
    }
}

/// The one `&'static str` of `label`, leaked the first time it is asked for: per-launch timing
/// labels are made from a plan's segments and kernels, so there are as many as the code has
/// (segment, kernel, repeat) triples, whatever the number of plans or runs.
fn intern_label(label: String) -> &'static str {
    static LABELS: std::sync::Mutex<std::collections::BTreeSet<&'static str>> =
        std::sync::Mutex::new(std::collections::BTreeSet::new());
    let mut labels = LABELS
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some(known) = labels.get(label.as_str()) {
        return known;
    }
    let leaked: &'static str = Box::leak(label.into_boxed_str());
    labels.insert(leaked);
    leaked
}

/// Seconds per segment of each repeat of a timed plan, in order: `seconds[r * segments + s]`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Timings {
    pub labels: Vec<&'static str>,
    pub seconds: Vec<f64>,
    /// False when the device has no timestamps: then `seconds` holds one entry, the wall time
    /// of the whole run.
    pub from_device: bool,
}

impl Timings {
    /// Sum of the seconds of all segments labelled `label`.
    pub fn total(&self, label: &str) -> f64 {
        if self.labels.is_empty() {
            return 0.0;
        }
        self.seconds
            .iter()
            .enumerate()
            .filter(|(i, _)| self.labels[i % self.labels.len()] == label)
            .map(|(_, s)| s)
            .sum()
    }

    /// Sum over all segments.
    pub fn sum(&self) -> f64 {
        self.seconds.iter().sum()
    }

    /// (label, seconds) of every timed segment in order.
    pub fn entries(&self) -> impl Iterator<Item = (&'static str, f64)> + '_ {
        let n = self.labels.len().max(1);
        self.seconds
            .iter()
            .enumerate()
            .map(move |(i, &s)| (self.labels.get(i % n).copied().unwrap_or(""), s))
    }
}

/// Dispatch to the backend of a runtime: `backend!(self, d => expr)` evaluates `expr` with `d`
/// the wgpu or CUDA device.
macro_rules! on_device {
    ($rt:expr, $d:ident => $e:expr) => {
        match &*$rt.device {
            Device::Wgpu($d) => $e,
            #[cfg(feature = "cuda")]
            Device::Cuda($d) => $e,
        }
    };
}

impl Runtime {
    /// Open `kind`: a wgpu adapter (`opts.adapter` picks it) or CUDA device 0. Clear errors
    /// when the binary lacks CUDA support or the machine has no NVIDIA driver.
    pub fn new(kind: BackendKind, opts: &GpuOptions) -> Result<Runtime> {
        let device = match kind {
            BackendKind::Wgpu => Device::Wgpu(Box::new(self::wgpu::WgpuDevice::new(opts)?)),
            #[cfg(feature = "cuda")]
            BackendKind::Cuda => Device::Cuda(Box::new(self::cuda::CudaDevice::new(opts)?)),
            #[cfg(not(feature = "cuda"))]
            BackendKind::Cuda => {
                return Err(Error::Invalid(format!(
                    "--backend cuda: {CUDA_REBUILD_HINT}"
                )))
            }
        };
        Ok(Runtime {
            device: Arc::new(device),
            readbacks: Arc::default(),
            kernels: Arc::default(),
            time_each_launch: Arc::default(),
            #[cfg(feature = "cuda")]
            read_copier: Arc::default(),
        })
    }

    /// The default wgpu adapter (tests, examples).
    pub fn wgpu() -> Result<Runtime> {
        Runtime::new(BackendKind::Wgpu, &GpuOptions::default())
    }

    pub fn kind(&self) -> BackendKind {
        match &*self.device {
            Device::Wgpu(_) => BackendKind::Wgpu,
            #[cfg(feature = "cuda")]
            Device::Cuda(_) => BackendKind::Cuda,
        }
    }

    /// The device, e.g. "NVIDIA H100 80GB HBM3 (Vulkan)" or "... (CUDA, sm_90)".
    pub fn name(&self) -> String {
        match &*self.device {
            Device::Wgpu(d) => d.name(),
            #[cfg(feature = "cuda")]
            Device::Cuda(d) => d.description(),
        }
    }

    /// Read-backs of buffers to the host so far on this runtime and its clones (each one waits
    /// for the queued work: a host sync).
    pub fn readbacks(&self) -> u64 {
        self.readbacks.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Time every launch of a plan as a segment of its own in [`Runtime::time`] (on this
    /// runtime and its clones), labelled `"<segment>: <kernel>"` (`bench amr --per-launch`):
    /// a kernel-by-kernel account of a plan, each launch paying a timestamp pair or an event
    /// of its own, so their sum is above the plan's. On CUDA the launches and their events
    /// are captured into one graph, as a run issues a plan, so no launch waits on the host.
    pub fn set_time_each_launch(&self, on: bool) {
        self.time_each_launch
            .store(on, std::sync::atomic::Ordering::Relaxed);
    }

    /// Whether a launch that depends on the one before it costs about a microsecond of device
    /// time: CUDA, whose graphs order their kernels for about 1 µs (their launches overlapping
    /// the kernel before on sm_90). wgpu puts a pipeline barrier between two dispatches that
    /// share a storage buffer, about 2.4 µs on NVIDIA's Vulkan driver (BENCHMARKS.md, session
    /// 18), so a solver that can trade launches for work in one launch trades them sooner there.
    pub fn cheap_dependent_launches(&self) -> bool {
        self.kind() != BackendKind::Wgpu
    }

    /// Whether kernels are timed on the device (timestamps, events) rather than by wall clock.
    pub fn has_timestamps(&self) -> bool {
        on_device!(self, d => d.has_timestamps())
    }

    /// Precision textures are stored at: f32 where the device filters f32 textures, else f16.
    pub fn texel_precision(&self) -> TexelPrecision {
        on_device!(self, d => d.texel_precision())
    }

    /// The largest buffer one kernel argument may address, in bytes (wgpu: the adapter's
    /// storage-binding and buffer limits; CUDA: no limit beyond device memory).
    pub fn max_buffer_bytes(&self) -> u64 {
        on_device!(self, d => d.max_buffer_bytes())
    }

    /// A buffer holding `data`; errors when it exceeds what one binding may address.
    pub fn upload<T: bytemuck::Pod>(&self, label: &str, data: &[T]) -> Result<Buffer> {
        let bytes: &[u8] = bytemuck::cast_slice(data);
        let inner = on_device!(self, d => d.upload(label, bytes)?);
        Ok(Buffer {
            inner,
            bytes: bytes.len() as u64,
        })
    }

    /// A zero-filled buffer of `count` elements of `T`.
    pub fn zeroed<T: bytemuck::Pod>(&self, label: &str, count: usize) -> Result<Buffer> {
        let bytes = (count * std::mem::size_of::<T>()) as u64;
        let inner = on_device!(self, d => d.zeroed(label, bytes)?);
        Ok(Buffer { inner, bytes })
    }

    /// Write `data` at element `first` of `buffer`, ordered after the work queued so far and
    /// before the work queued next.
    pub fn write<T: bytemuck::Pod>(&self, buffer: &Buffer, first: usize, data: &[T]) -> Result<()> {
        let bytes: &[u8] = bytemuck::cast_slice(data);
        let offset = (first * std::mem::size_of::<T>()) as u64;
        if offset + bytes.len() as u64 > buffer.bytes {
            return Err(Error::Gpu(format!(
                "write of {} bytes at offset {offset} exceeds buffer size {}",
                bytes.len(),
                buffer.bytes
            )));
        }
        on_device!(self, d => d.write(&buffer.inner, offset, bytes))
    }

    /// Read `count` elements of `T` from element `first` on (waits for the queued work).
    pub fn read<T: bytemuck::Pod>(
        &self,
        buffer: &Buffer,
        first: usize,
        count: usize,
    ) -> Result<Vec<T>> {
        let (offset, bytes) = read_range::<T>(buffer, first, count)?;
        if bytes == 0 {
            return Ok(Vec::new());
        }
        #[cfg(feature = "cuda")]
        if matches!(&*self.device, Device::Cuda(_))
            && self::cuda::reads_ahead_by_kernel(offset, bytes)
        {
            // A small read by the copy kernel too: the stream's wait is shorter.
            let pending = self.read_ahead::<T>(buffer, first, count)?;
            return self.finish_read(pending);
        }
        self.readbacks
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        // Straight into a Vec<T>: one host copy of the read-back, not two.
        on_device!(self, d => d.read::<T>(&buffer.inner, offset, count))
    }

    /// Queue a read-back of `count` elements of `T` from element `first` behind the work
    /// queued so far, without waiting: [`Runtime::finish_read`] then waits for that work
    /// alone, so the work queued after it (the next phase of a solver) keeps the device busy
    /// while the host waits for the words. The words are those the buffer holds at this point
    /// of the queue, whatever is queued after it.
    pub fn read_ahead<T: bytemuck::Pod>(
        &self,
        buffer: &Buffer,
        first: usize,
        count: usize,
    ) -> Result<PendingRead<T>> {
        let (offset, bytes) = read_range::<T>(buffer, first, count)?;
        let copy = match &*self.device {
            _ if bytes == 0 => None,
            Device::Wgpu(d) => Some(PendingCopy::Wgpu(d.read_ahead(
                &buffer.inner,
                offset,
                bytes,
            )?)),
            #[cfg(feature = "cuda")]
            Device::Cuda(d) => {
                // A small read-back is copied by a kernel, which holds the stream less than
                // the copy engine (self::cuda::reads_ahead_by_kernel).
                let copier = self::cuda::reads_ahead_by_kernel(offset, bytes)
                    .then(|| self.read_copier())
                    .transpose()?;
                Some(PendingCopy::Cuda(d.read_ahead(
                    &buffer.inner,
                    offset,
                    bytes,
                    copier,
                )?))
            }
        };
        Ok(self.pending_read(copy))
    }

    /// A read-back queued (`copy`, None for no words), counted in [`Runtime::readbacks`].
    fn pending_read<T>(&self, copy: Option<PendingCopy>) -> PendingRead<T> {
        self.readbacks
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        PendingRead {
            copy,
            _words: std::marker::PhantomData,
        }
    }

    /// `stream_copy` for CUDA's small read-backs, built at the first.
    #[cfg(feature = "cuda")]
    fn read_copier(&self) -> Result<&Kernel> {
        if let Some(kernel) = self.read_copier.get() {
            return Ok(kernel);
        }
        let kernel = self.kernel("stream_copy", &[])?;
        Ok(self.read_copier.get_or_init(|| kernel))
    }

    /// [`Runtime::queue_timed`] of one run of `plan`, then [`Runtime::read_ahead`] behind it;
    /// on wgpu the copy goes in the submission of the plan's last command buffer, a submission
    /// less (each costs the host about 17 µs).
    pub fn queue_then_read_ahead<T: bytemuck::Pod>(
        &self,
        plan: &Plan,
        timer: Option<&DeviceTimer>,
        buffer: &Buffer,
        first: usize,
        count: usize,
    ) -> Result<PendingRead<T>> {
        let (offset, bytes) = read_range::<T>(buffer, first, count)?;
        let d = match &*self.device {
            Device::Wgpu(d) if bytes > 0 && !plan.is_empty() => d,
            _ => {
                self.queue_timed(plan, 1, timer)?;
                return self.read_ahead(buffer, first, count);
            }
        };
        let mut spans = timer.map(|t| t.lock()).transpose()?;
        let spans = match spans.as_deref_mut() {
            None => None,
            Some(TimerSpans::Wgpu(t)) => Some(t),
            #[cfg(feature = "cuda")]
            Some(_) => {
                return Err(Error::Invalid(
                    "queue_then_read_ahead: the timer is of another backend".into(),
                ))
            }
        };
        let copy = d.queue_then_read_ahead(plan, spans, &buffer.inner, offset, bytes)?;
        Ok(self.pending_read(Some(PendingCopy::Wgpu(copy))))
    }

    /// The words of a read-back queued by [`Runtime::read_ahead`] (waits for the work queued
    /// before it, not after).
    pub fn finish_read<T: bytemuck::Pod>(&self, pending: PendingRead<T>) -> Result<Vec<T>> {
        match (&*self.device, pending.copy) {
            (_, None) => Ok(Vec::new()),
            (Device::Wgpu(d), Some(PendingCopy::Wgpu(copy))) => d.finish_read(copy),
            #[cfg(feature = "cuda")]
            (Device::Cuda(d), Some(PendingCopy::Cuda(copy))) => d.finish_read(copy),
            #[cfg(feature = "cuda")]
            _ => Err(Error::Invalid(
                "finish_read: the read-back was queued on another backend".into(),
            )),
        }
    }

    /// The whole buffer as elements of `T`.
    pub fn read_all<T: bytemuck::Pod>(&self, buffer: &Buffer) -> Result<Vec<T>> {
        let n = buffer.bytes as usize / std::mem::size_of::<T>();
        self.read(buffer, 0, n)
    }

    /// Queue a copy of `bytes` bytes from the start of `src` to the start of `dst`.
    pub fn copy(&self, src: &Buffer, dst: &Buffer, bytes: u64) -> Result<()> {
        self.copy_at(src, 0, dst, 0, bytes)
    }

    /// Queue a copy of `bytes` bytes from byte `src_offset` of `src` to byte `dst_offset` of
    /// `dst` (offsets multiples of 4, as wgpu requires).
    pub fn copy_at(
        &self,
        src: &Buffer,
        src_offset: u64,
        dst: &Buffer,
        dst_offset: u64,
        bytes: u64,
    ) -> Result<()> {
        if src_offset + bytes > src.bytes || dst_offset + bytes > dst.bytes {
            return Err(Error::Gpu(format!(
                "copy of {bytes} bytes from offset {src_offset} of a buffer of {} bytes to \
                 offset {dst_offset} of a buffer of {} bytes",
                src.bytes, dst.bytes
            )));
        }
        if src_offset % 4 != 0 || dst_offset % 4 != 0 {
            return Err(Error::Gpu(format!(
                "buffer copies must start at 4-byte aligned offsets ({src_offset}, {dst_offset})"
            )));
        }
        on_device!(self, d => d.copy(&src.inner, src_offset, &dst.inner, dst_offset, bytes))
    }

    /// Kernel `shaders/<stem>.wgsl` (entry `main`) / `shaders/cuda/<stem>.cu` (entry `<stem>`)
    /// with `constants` (override constants / `-D` defines).
    pub fn kernel(&self, stem: &str, constants: &[(&str, f64)]) -> Result<Kernel> {
        self.kernel_variant(stem, None, constants)
    }

    /// Like [`Runtime::kernel`], with a CUDA-only entry point of the same file (e.g. the
    /// atomicAdd variants): an error on wgpu, whose kernels have one entry each.
    pub fn kernel_variant(
        &self,
        stem: &str,
        cuda_entry: Option<&str>,
        constants: &[(&str, f64)],
    ) -> Result<Kernel> {
        let (capacity, compiled) = split_capacity(stem, constants)?;
        // wgpu reads the capacity from each launch's range record, so one pipeline serves
        // every capacity; CUDA reads it from its module, one loaded per capacity (or compiled
        // in, one compile per capacity).
        let module_capacity = match &*self.device {
            Device::Wgpu(_) => None,
            #[cfg(feature = "cuda")]
            Device::Cuda(_) => capacity,
        };
        let key = kernel_key(stem, cuda_entry, &compiled, module_capacity);
        if let Some(kernel) = self.lock_kernels()?.get(&key).cloned() {
            return Ok(Kernel {
                capacity: capacity.map_or(0, CapacityArg::value),
                ..kernel
            });
        }
        let kernel = self.build_kernel(stem, cuda_entry, &compiled, capacity)?;
        self.lock_kernels()?.insert(key, kernel.clone());
        Ok(kernel)
    }

    /// The kernels of `specs`, each built on a thread of its own (NVRTC's compiles and the
    /// driver's pipeline builds are the setup of a run): the same kernels as
    /// [`Runtime::kernel`] of each, in order.
    pub fn kernels<const N: usize>(&self, specs: [KernelSpec<'_>; N]) -> Result<[Kernel; N]> {
        self.kernel_list(&specs)?
            .try_into()
            .map_err(|_| Error::Gpu("kernel builds: a kernel is missing".into()))
    }

    /// [`Runtime::kernels`] for a list of any length, its constants borrowed
    /// ([`KernelSpec`]) or owned ([`OwnedKernelSpec`]).
    pub fn kernel_list<'a, C>(&self, specs: &[(&str, C)]) -> Result<Vec<Kernel>>
    where
        C: AsRef<[(&'a str, f64)]> + Sync,
    {
        let built: Vec<Result<Kernel>> = std::thread::scope(|scope| {
            let builders: Vec<_> = specs
                .iter()
                .map(|(stem, constants)| scope.spawn(move || self.kernel(stem, constants.as_ref())))
                .collect();
            builders
                .into_iter()
                .map(|builder| {
                    builder
                        .join()
                        .unwrap_or_else(|_| Err(Error::Gpu("a kernel build panicked".into())))
                })
                .collect()
        });
        built.into_iter().collect()
    }

    fn lock_kernels(
        &self,
    ) -> Result<std::sync::MutexGuard<'_, std::collections::HashMap<KernelKey, Kernel>>> {
        self.kernels
            .lock()
            .map_err(|_| Error::Gpu("the kernel cache is poisoned".into()))
    }

    fn build_kernel(
        &self,
        stem: &str,
        cuda_entry: Option<&str>,
        compiled: &[(&str, f64)],
        capacity: Option<CapacityArg>,
    ) -> Result<Kernel> {
        let iface = interface::reflect_kernel(stem)?;
        for (name, _) in compiled {
            if !iface.overrides.iter().any(|o| o.name == *name) {
                return Err(Error::Gpu(format!(
                    "kernel shaders/{stem}.wgsl has no override constant '{name}'"
                )));
            }
        }
        let inner = on_device!(self, d => d.kernel(stem, cuda_entry, compiled, capacity, &iface)?);
        Ok(Kernel {
            inner,
            stem: stem.to_string(),
            slots: Arc::new(iface.arguments()),
            workgroup_size: iface.workgroup_size,
            capacity: capacity.map_or(0, CapacityArg::value),
        })
    }

    /// A `size x size` texture of rgba texels (row-major, `texels.len() == size * size`),
    /// stored at [`Runtime::texel_precision`].
    pub fn texture(&self, label: &str, size: u32, texels: &[[f32; 4]]) -> Result<Texture> {
        if texels.len() != (size as usize) * (size as usize) {
            return Err(Error::Invalid(format!(
                "texture '{label}' of side {size} given {} texels",
                texels.len()
            )));
        }
        let inner = on_device!(self, d => d.texture(label, size, texels)?);
        Ok(Texture {
            inner,
            precision: self.texel_precision(),
            size,
        })
    }

    /// Prepare `builder`'s launches for queueing.
    pub fn prepare(&self, builder: &PlanBuilder) -> Result<Plan> {
        builder.check()?;
        let inner = on_device!(self, d => d.prepare(builder)?);
        Ok(Plan {
            inner,
            segments: builder.segments.clone(),
            launches: builder.launches.len(),
            stems: builder
                .launches
                .iter()
                .map(|l| l.kernel.stem().to_string())
                .collect(),
            launch_labels: std::sync::OnceLock::new(),
        })
    }

    /// Queue `repeats` runs of `plan` in order; does not wait.
    pub fn queue(&self, plan: &Plan, repeats: u32) -> Result<()> {
        if repeats == 0 || plan.is_empty() {
            return Ok(());
        }
        on_device!(self, d => d.queue(plan, repeats))
    }

    /// Record `repeats` runs of `plan` now and submit them later with [`Runtime::submit`], so
    /// the host's recording overlaps device work queued before (e.g. while a read-back waits
    /// for it). wgpu records command buffers; CUDA issues launches as it goes, so there the
    /// recording is the submit and nothing happens until then.
    pub fn record(&self, plan: &Plan, repeats: u32) -> Result<Recorded> {
        let launches = plan.launches;
        let commands = match &*self.device {
            Device::Wgpu(d) => RecordedCommands::Wgpu(d.record_ahead(plan, repeats)?),
            #[cfg(feature = "cuda")]
            Device::Cuda(_) => RecordedCommands::OnSubmit { repeats },
        };
        Ok(Recorded { launches, commands })
    }

    /// Submit what [`Runtime::record`] recorded of `plan` (the same plan: checked by its
    /// launch count); does not wait.
    pub fn submit(&self, plan: &Plan, recorded: Recorded) -> Result<()> {
        recorded.check(plan)?;
        match (&*self.device, recorded.commands) {
            (Device::Wgpu(d), RecordedCommands::Wgpu(buffers)) => {
                d.submit(buffers);
                Ok(())
            }
            #[cfg(feature = "cuda")]
            (Device::Cuda(_), RecordedCommands::OnSubmit { repeats }) => self.queue(plan, repeats),
            #[cfg(feature = "cuda")]
            _ => Err(Error::Invalid(
                "submit: the work was recorded on another backend".into(),
            )),
        }
    }

    /// A timer for up to `capacity` spans between two drains ([`DeviceTimer`]), or None when
    /// the device has no timestamps.
    pub fn device_timer(&self, capacity: u32) -> Option<DeviceTimer> {
        let spans = match &*self.device {
            Device::Wgpu(d) => TimerSpans::Wgpu(d.span_timer(capacity)?),
            #[cfg(feature = "cuda")]
            Device::Cuda(d) => TimerSpans::Cuda(d.span_timer(capacity)),
        };
        Some(DeviceTimer {
            spans: Arc::new(std::sync::Mutex::new(spans)),
        })
    }

    /// [`Runtime::queue`], the work a span of `timer` when one is given (untimed when the
    /// timer already holds the spans it was made for: drain it before). On wgpu the plan's own
    /// first and last command buffers write the timestamps where encoders can
    /// (TIMESTAMP_QUERY_INSIDE_ENCODERS), else two command buffers of their own go in one
    /// submission with the plan's, recorded whole first.
    pub fn queue_timed(
        &self,
        plan: &Plan,
        repeats: u32,
        timer: Option<&DeviceTimer>,
    ) -> Result<()> {
        let Some(timer) = timer else {
            return self.queue(plan, repeats);
        };
        if repeats == 0 || plan.is_empty() {
            return Ok(());
        }
        match (&*self.device, &mut *timer.lock()?) {
            (Device::Wgpu(d), TimerSpans::Wgpu(t)) => d.queue_timed(plan, repeats, t),
            #[cfg(feature = "cuda")]
            (Device::Cuda(d), TimerSpans::Cuda(t)) => d.queue_timed(plan, repeats, t),
            #[cfg(feature = "cuda")]
            _ => Err(Error::Invalid(
                "queue_timed: the timer is of another backend".into(),
            )),
        }
    }

    /// [`Runtime::submit`], the work a span of `timer` when one is given.
    pub fn submit_timed(
        &self,
        plan: &Plan,
        recorded: Recorded,
        timer: Option<&DeviceTimer>,
    ) -> Result<()> {
        let Some(timer) = timer else {
            return self.submit(plan, recorded);
        };
        recorded.check(plan)?;
        match (&*self.device, recorded.commands, &mut *timer.lock()?) {
            (Device::Wgpu(d), RecordedCommands::Wgpu(buffers), TimerSpans::Wgpu(t)) => {
                d.submit_timed(buffers, t);
                Ok(())
            }
            #[cfg(feature = "cuda")]
            (Device::Cuda(d), RecordedCommands::OnSubmit { repeats }, TimerSpans::Cuda(t)) => {
                d.queue_timed(plan, repeats, t)
            }
            #[cfg(feature = "cuda")]
            _ => Err(Error::Invalid(
                "submit_timed: the work or the timer is of another backend".into(),
            )),
        }
    }

    /// Seconds of each span `timer` took since its last drain, in order; waits for their work.
    /// The timer is empty after it.
    pub fn drain_timer(&self, timer: &DeviceTimer) -> Result<Vec<f64>> {
        match (&*self.device, &mut *timer.lock()?) {
            (Device::Wgpu(d), TimerSpans::Wgpu(t)) => d.drain_spans(t),
            #[cfg(feature = "cuda")]
            (Device::Cuda(d), TimerSpans::Cuda(t)) => d.drain_spans(t),
            #[cfg(feature = "cuda")]
            _ => Err(Error::Invalid(
                "drain_timer: the timer is of another backend".into(),
            )),
        }
    }

    /// Queue `repeats` runs of `plan` and wait for them.
    pub fn run(&self, plan: &Plan, repeats: u32) -> Result<()> {
        self.queue(plan, repeats)?;
        self.wait()
    }

    /// Run `plan` `repeats` times, timing each segment of each repeat on the device.
    pub fn time(&self, plan: &Plan, repeats: u32) -> Result<Timings> {
        let each_launch = self
            .time_each_launch
            .load(std::sync::atomic::Ordering::Relaxed);
        let (labels, ranges) = if each_launch {
            (
                plan.launch_labels().to_vec(),
                (0..plan.launches).map(|l| l..l + 1).collect(),
            )
        } else {
            (
                plan.segments.iter().map(|s| s.label).collect(),
                plan.segment_ranges(),
            )
        };
        if repeats == 0 || plan.is_empty() {
            return Ok(Timings {
                labels,
                seconds: Vec::new(),
                from_device: self.has_timestamps(),
            });
        }
        let (seconds, from_device) = match &*self.device {
            Device::Wgpu(d) => d.time(plan, &ranges, repeats)?,
            #[cfg(feature = "cuda")]
            Device::Cuda(d) => d.time(plan, &ranges, repeats, each_launch)?,
        };
        Ok(Timings {
            labels,
            seconds,
            from_device,
        })
    }

    /// Kernels compiled so far: wgpu pipelines, CUDA modules compiled by NVRTC or read from
    /// the PTX cache. A kernel asked for again with other constants counts again; with only
    /// another capacity ([`CAPACITY_CONSTANT`]) it does not.
    pub fn kernels_compiled(&self) -> u64 {
        on_device!(self, d => d.kernels_compiled())
    }

    /// Wait for all queued work; reports an error a kernel or the driver raised meanwhile.
    pub fn wait(&self) -> Result<()> {
        on_device!(self, d => d.wait())
    }
}

/// Median of a list of samples (0 for an empty list).
pub fn median(samples: &[f64]) -> f64 {
    if samples.is_empty() {
        return 0.0;
    }
    let mut s = samples.to_vec();
    s.sort_by(|a, b| a.total_cmp(b));
    let n = s.len();
    if n % 2 == 1 {
        s[n / 2]
    } else {
        0.5 * (s[n / 2 - 1] + s[n / 2])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A kernel built with wgpu's runtime checks is not served when the same kernel is asked
    /// for without them (`bench backends` compares the two on one runtime), nor a kernel with
    /// other constants.
    #[test]
    fn the_kernel_cache_tells_checked_from_trusted_builds() {
        let checked = kernel_key("dg_volume", None, &[("NP", 3.0)], None);
        shaders::set_trusted_kernels(true);
        let trusted = kernel_key("dg_volume", None, &[("NP", 3.0)], None);
        shaders::set_trusted_kernels(false);
        assert_ne!(checked, trusted);
        assert_eq!(checked, kernel_key("dg_volume", None, &[("NP", 3.0)], None));
        assert_ne!(checked, kernel_key("dg_volume", None, &[("NP", 6.0)], None));
        assert_ne!(
            checked,
            kernel_key("dg_volume", Some("dg_volume"), &[("NP", 3.0)], None)
        );
        assert_ne!(
            checked,
            kernel_key(
                "dg_volume",
                None,
                &[("NP", 3.0)],
                Some(CapacityArg::AtLaunch(1000))
            )
        );
        assert_ne!(
            kernel_key(
                "dg_volume",
                None,
                &[("NP", 3.0)],
                Some(CapacityArg::Fixed(1000))
            ),
            kernel_key(
                "dg_volume",
                None,
                &[("NP", 3.0)],
                Some(CapacityArg::AtLaunch(1000))
            )
        );
    }

    /// The capacity is split off the compiled constants, and only a count of elements is one.
    #[test]
    fn the_capacity_is_a_launch_constant() {
        let (capacity, compiled) =
            split_capacity("dg_volume", &[("NP", 3.0), (CAPACITY_CONSTANT, 96.0)]).unwrap();
        assert_eq!(capacity, Some(CapacityArg::AtLaunch(96)));
        assert_eq!(compiled, vec![("NP", 3.0)]);
        let (capacity, _) =
            split_capacity("dg_volume", &[(FIXED_CAPACITY_CONSTANT, 96.0)]).unwrap();
        assert_eq!(capacity, Some(CapacityArg::Fixed(96)));
        for bad in [-1.0, 2.5, 1e12, f64::NAN] {
            for name in [CAPACITY_CONSTANT, FIXED_CAPACITY_CONSTANT] {
                let err = split_capacity("dg_volume", &[(name, bad)]).unwrap_err();
                assert!(err.to_string().contains("dg_volume"), "{err}");
            }
        }
    }
}
