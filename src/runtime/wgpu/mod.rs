//! The wgpu backend of the runtime: WGSL kernels on Vulkan, Metal or DX12.
//!
//! A kernel's bind group layouts come from its reflected interface (group 0: storage buffers,
//! group 1: the item range as a dynamic-offset uniform, group 2: uniform structs, textures and
//! samplers). A prepared plan holds one bind group per distinct (kernel, group, arguments) and
//! all its item ranges in one uniform buffer, so queueing it only records
//! set_pipeline / set_bind_group / dispatch; `repeats` copies go into compute passes of
//! [`SUBMIT_LAUNCHES`] launches, one submit each (wgpu puts a barrier between the dispatches of
//! a pass and orders submits, so each launch sees the writes of the ones before it). Timed runs use one pass per segment with timestamp queries.

pub mod buffers;
pub mod context;
pub mod dispatch;
pub mod timing;

use super::interface::{BindingKind, KernelInterface, RANGE_GROUP};
use super::shaders::{kernel_source, trusted_kernels, unroll_loops};
use super::{
    Arg, BufferInner, KernelInner, PlanBuilder, PlanInner, RangeRecord, TexelPrecision,
    TextureInner,
};
use crate::error::{Error, Result};
use buffers::{storage_from, storage_zeroed, PendingCopy, Readback};
use context::{GpuContext, GpuOptions};
use dispatch::{grid_for, range_layout};
use std::sync::{Arc, Mutex};
use std::time::Instant;
use timing::PassTimer;
pub use timing::SpanTimer;

/// Launches per submit when wgpu queues a plan ([`crate::runtime::Runtime::queue`]). The device starts on a command buffer only
/// once it is submitted, and recording costs the host about as much per launch as a small
/// launch costs the device (2.5 and 2.3 µs on the H100, `bench launches`), so a plan recorded
/// into one submit runs after all of its recording. Submitting every 32 launches lets the
/// device run while the host records the rest; a submit costs the host about 17 µs. On the
/// H100 (session 9) it made an adaptive DG step (p = 1, 5 levels) 15% faster and an adaptation
/// at 33k elements 10-20% faster than one submit per plan; 8 launches per submit gained less
/// on the steps.
pub const SUBMIT_LAUNCHES: usize = 32;

/// A wgpu device with its read-back staging buffer, the item-range layout every kernel
/// shares and the pipeline cache its kernels are compiled through.
pub struct WgpuDevice {
    ctx: GpuContext,
    readback: Mutex<Readback>,
    range_layout: wgpu::BindGroupLayout,
    cache: Option<CacheFile>,
    /// Pipelines compiled so far ([`crate::runtime::Runtime::kernels_compiled`]).
    compiled: std::sync::atomic::AtomicU64,
}

/// wgpu's pipeline cache and the file it was loaded from and is saved to (when the device is
/// dropped, if its contents changed).
struct CacheFile {
    cache: wgpu::PipelineCache,
    path: std::path::PathBuf,
    /// Key of the bytes loaded (0 when none), to skip rewriting an unchanged cache.
    loaded: u64,
}

impl CacheFile {
    /// Open the cache of `ctx`'s adapter in `dir`: None when the backend has no pipeline
    /// cache (wgpu implements it on Vulkan). The file name holds the adapter's vendor and
    /// device ([`wgpu::util::pipeline_cache_key`]) and a key of its name, driver, this crate's
    /// version and the kernel sources (`shaders::wgsl_sources`); wgpu checks its own header
    /// against the driver (`pipelineCacheUUID`) too. Data wgpu rejects are ignored with a warning.
    fn open(ctx: &GpuContext, dir: &std::path::Path) -> Option<CacheFile> {
        if !ctx.features.contains(wgpu::Features::PIPELINE_CACHE) {
            return None;
        }
        let adapter = wgpu::util::pipeline_cache_key(&ctx.info)?;
        let i = &ctx.info;
        let build = super::disk_cache::key(&[
            i.name.as_bytes(),
            i.driver.as_bytes(),
            i.driver_info.as_bytes(),
            env!("CARGO_PKG_VERSION").as_bytes(),
            &super::disk_cache::sources_key(&super::shaders::wgsl_sources()).to_le_bytes(),
        ]);
        let path = dir.join(format!("{adapter}_{build:016x}.bin"));
        let data = super::disk_cache::load(&path);
        let dev = &ctx.device;
        let create = |data: Option<&[u8]>| {
            // SAFETY: `data` is what `PipelineCache::get_data` returned for an adapter with the
            // same cache key (the file name), written whole; wgpu validates its header (magic,
            // version, backend, adapter, driver UUID, length) before the driver sees it, and
            // rejected data are dropped below.
            unsafe {
                dev.create_pipeline_cache(&wgpu::PipelineCacheDescriptor {
                    label: Some("chromaflow kernels"),
                    data,
                    fallback: false,
                })
            }
        };
        let scope = dev.push_error_scope(wgpu::ErrorFilter::Validation);
        let mut cache = create(data.as_deref());
        let mut loaded = data.as_deref().map_or(0, |d| super::disk_cache::key(&[d]));
        if let Some(e) = pollster::block_on(scope.pop()) {
            log::warn!(
                "pipeline cache {} ignored (it will be rewritten): {e}",
                path.display()
            );
            cache = create(None);
            loaded = 0;
        }
        log::info!(
            "pipeline cache {} ({})",
            path.display(),
            if loaded == 0 { "new" } else { "loaded" }
        );
        Some(CacheFile {
            cache,
            path,
            loaded,
        })
    }
}

impl Drop for WgpuDevice {
    /// Save the pipeline cache when kernels were compiled into it.
    fn drop(&mut self) {
        let Some(c) = &self.cache else { return };
        match c.cache.get_data() {
            Some(data) if super::disk_cache::key(&[&data]) != c.loaded => {
                super::disk_cache::store(&c.path, &data)
            }
            _ => {}
        }
    }
}

/// A compute pipeline and the layouts of its groups other than the range group.
pub struct WgpuKernel {
    pipeline: wgpu::ComputePipeline,
    /// (group, layout, interface indices of its arguments)
    groups: Vec<(u32, wgpu::BindGroupLayout, Vec<usize>)>,
    /// Whether group 2 of the kernel holds a sampler beside its texture.
    samplers: Vec<(u32, u32)>,
}

/// A texture with its view and the bilinear, clamp-to-edge sampler kernels read it with.
pub struct WgpuTexture {
    view: wgpu::TextureView,
    sampler: wgpu::Sampler,
}

/// One prepared launch.
struct PreparedLaunch {
    kernel: Arc<WgpuKernel>,
    /// (group, index into `WgpuPlan::bind_groups`)
    groups: Vec<(u32, usize)>,
    range_offset: u32,
    grid: (u32, u32),
    /// A device-written grid: (buffer, byte offset of its three workgroup counts).
    indirect: Option<(wgpu::Buffer, u64)>,
    /// A host bound of the threads (bound, threads, workgroup size), read at recording: a
    /// host-sized dispatch then covers `min(threads, bound)` threads instead of `grid`'s
    /// ([`crate::runtime::ThreadBound`]).
    bound: Option<(crate::runtime::ThreadBound, u32, u32)>,
}

/// A prepared plan.
pub struct WgpuPlan {
    launches: Vec<PreparedLaunch>,
    bind_groups: Vec<wgpu::BindGroup>,
    range_group: wgpu::BindGroup,
    _uniforms: Vec<wgpu::Buffer>,
    _range_buffer: wgpu::Buffer,
}

fn wgpu_buffer(b: &BufferInner) -> Result<&wgpu::Buffer> {
    match b {
        BufferInner::Wgpu(b) => Ok(b),
        #[cfg(feature = "cuda")]
        _ => Err(Error::Gpu(
            "a CUDA buffer passed to the wgpu backend".into(),
        )),
    }
}

fn wgpu_kernel(k: &KernelInner) -> Result<&Arc<WgpuKernel>> {
    match k {
        KernelInner::Wgpu(k) => Ok(k),
        #[cfg(feature = "cuda")]
        _ => Err(Error::Gpu(
            "a CUDA kernel passed to the wgpu backend".into(),
        )),
    }
}

fn wgpu_texture(t: &TextureInner) -> Result<&Arc<WgpuTexture>> {
    match t {
        TextureInner::Wgpu(t) => Ok(t),
        #[cfg(feature = "cuda")]
        _ => Err(Error::Gpu(
            "a CUDA texture passed to the wgpu backend".into(),
        )),
    }
}

fn wgpu_plan(p: &PlanInner) -> Result<&WgpuPlan> {
    match p {
        PlanInner::Wgpu(p) => Ok(p),
        #[cfg(feature = "cuda")]
        _ => Err(Error::Gpu("a CUDA plan passed to the wgpu backend".into())),
    }
}

fn layout_entry(kind: &BindingKind, binding: u32) -> wgpu::BindGroupLayoutEntry {
    let ty = match kind {
        BindingKind::Storage { read_only } => wgpu::BindingType::Buffer {
            ty: wgpu::BufferBindingType::Storage {
                read_only: *read_only,
            },
            has_dynamic_offset: false,
            min_binding_size: None,
        },
        BindingKind::Uniform { .. } => wgpu::BindingType::Buffer {
            ty: wgpu::BufferBindingType::Uniform,
            has_dynamic_offset: false,
            min_binding_size: None,
        },
        BindingKind::Texture => wgpu::BindingType::Texture {
            sample_type: wgpu::TextureSampleType::Float { filterable: true },
            view_dimension: wgpu::TextureViewDimension::D2,
            multisampled: false,
        },
        BindingKind::Sampler => wgpu::BindingType::Sampler(wgpu::SamplerBindingType::Filtering),
    };
    wgpu::BindGroupLayoutEntry {
        binding,
        visibility: wgpu::ShaderStages::COMPUTE,
        ty,
        count: None,
    }
}

impl WgpuDevice {
    pub fn new(opts: &GpuOptions) -> Result<WgpuDevice> {
        let ctx = GpuContext::new(opts)?;
        let range_layout = range_layout(&ctx.device);
        let cache = opts
            .pipeline_cache
            .as_deref()
            .and_then(|dir| CacheFile::open(&ctx, dir));
        Ok(WgpuDevice {
            ctx,
            readback: Mutex::new(Readback::new()),
            range_layout,
            cache,
            compiled: std::sync::atomic::AtomicU64::new(0),
        })
    }

    pub fn context(&self) -> &GpuContext {
        &self.ctx
    }

    /// Pipelines compiled so far.
    pub fn kernels_compiled(&self) -> u64 {
        self.compiled.load(std::sync::atomic::Ordering::Relaxed)
    }

    pub fn name(&self) -> String {
        format!("{} ({:?})", self.ctx.info.name, self.ctx.info.backend)
    }

    pub fn has_timestamps(&self) -> bool {
        self.ctx.has_timestamps()
    }

    pub fn max_buffer_bytes(&self) -> u64 {
        let l = &self.ctx.limits;
        l.max_storage_buffer_binding_size.min(l.max_buffer_size)
    }

    pub fn texel_precision(&self) -> TexelPrecision {
        if self.ctx.float32_filterable() {
            TexelPrecision::F32
        } else {
            TexelPrecision::F16
        }
    }

    pub(crate) fn upload(&self, label: &str, bytes: &[u8]) -> Result<BufferInner> {
        Ok(BufferInner::Wgpu(storage_from(&self.ctx, label, bytes)?))
    }

    pub(crate) fn zeroed(&self, label: &str, bytes: u64) -> Result<BufferInner> {
        Ok(BufferInner::Wgpu(storage_zeroed::<u8>(
            &self.ctx,
            label,
            bytes.next_multiple_of(4) as usize,
        )?))
    }

    pub(crate) fn write(&self, buffer: &BufferInner, offset: u64, bytes: &[u8]) -> Result<()> {
        let b = wgpu_buffer(buffer)?;
        if offset % 4 != 0 || bytes.len() % 4 != 0 {
            return Err(Error::Gpu(format!(
                "buffer writes must be 4-byte aligned (offset {offset}, {} bytes)",
                bytes.len()
            )));
        }
        self.ctx.queue.write_buffer(b, offset, bytes);
        Ok(())
    }

    /// `count` elements of `T` from byte `offset` (a multiple of `T`'s size).
    pub(crate) fn read<T: bytemuck::Pod>(
        &self,
        buffer: &BufferInner,
        offset: u64,
        count: usize,
    ) -> Result<Vec<T>> {
        let pending = self.read_ahead(buffer, offset, (count * std::mem::size_of::<T>()) as u64)?;
        self.finish_read(pending)
    }

    /// Queue a copy of `bytes` bytes at byte `offset` of `buffer` to the host behind the work
    /// submitted so far.
    pub(crate) fn read_ahead(
        &self,
        buffer: &BufferInner,
        offset: u64,
        bytes: u64,
    ) -> Result<PendingCopy> {
        let b = wgpu_buffer(buffer)?;
        self.readback()?.start(&self.ctx, b, offset, bytes)
    }

    /// Queue `plan` once (a span of `timer` when given) and a read-back behind it, the copy in
    /// the submission of the plan's last command buffer ([`Readback::start_after`]). Where a
    /// timed plan cannot write its own timestamps, the two are queued apart.
    pub(crate) fn queue_then_read_ahead(
        &self,
        plan: &super::Plan,
        timer: Option<&mut SpanTimer>,
        buffer: &BufferInner,
        offset: u64,
        bytes: u64,
    ) -> Result<PendingCopy> {
        let b = wgpu_buffer(buffer)?;
        let inside = self
            .ctx
            .features
            .contains(wgpu::Features::TIMESTAMP_QUERY_INSIDE_ENCODERS);
        let stamps = match timer {
            Some(timer) if !inside => {
                self.queue_timed(plan, 1, timer)?;
                return self.read_ahead(buffer, offset, bytes);
            }
            Some(timer) => timer
                .next_indices()
                .map(|(before, after)| (&*timer, before, after)),
            None => None,
        };
        // Every command buffer but the last goes as soon as it is recorded, so the device
        // starts on a long plan while the host records the rest (SUBMIT_LAUNCHES).
        let mut readback = self.readback()?;
        let mut last = None;
        self.encode_stamped(plan, 1, stamps, |buffer| {
            if let Some(previous) = last.replace(buffer) {
                self.ctx.queue.submit([previous]);
            }
        })?;
        readback.start_after(&self.ctx, last.into_iter().collect(), b, offset, bytes)
    }

    /// Wait for a read-back queued ahead (not for the work queued after it; the staging
    /// buffers stay free for other read-backs meanwhile).
    pub(crate) fn finish_read<T: bytemuck::Pod>(&self, pending: PendingCopy) -> Result<Vec<T>> {
        let (data, staging) = pending.wait(&self.ctx)?;
        self.readback()?.recycle(staging);
        Ok(data)
    }

    fn readback(&self) -> Result<std::sync::MutexGuard<'_, Readback>> {
        self.readback
            .lock()
            .map_err(|_| Error::Gpu("read-back staging poisoned".into()))
    }

    pub(crate) fn copy(
        &self,
        src: &BufferInner,
        src_offset: u64,
        dst: &BufferInner,
        dst_offset: u64,
        bytes: u64,
    ) -> Result<()> {
        let (s, d) = (wgpu_buffer(src)?, wgpu_buffer(dst)?);
        let mut enc = self
            .ctx
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("copy"),
            });
        enc.copy_buffer_to_buffer(s, src_offset, d, dst_offset, bytes.next_multiple_of(4));
        self.ctx.queue.submit([enc.finish()]);
        Ok(())
    }

    pub(crate) fn kernel(
        &self,
        stem: &str,
        cuda_entry: Option<&str>,
        constants: &[(&str, f64)],
        _capacity: Option<super::CapacityArg>,
        iface: &KernelInterface,
    ) -> Result<KernelInner> {
        // The capacity is not compiled in: each launch's range record carries it (prepare).
        if let Some(entry) = cuda_entry {
            return Err(Error::Invalid(format!(
                "kernel {entry} of shaders/cuda/{stem}.cu has no WGSL twin (it needs float \
                 atomics, which WGSL lacks): use --backend cuda"
            )));
        }
        let dev = &self.ctx.device;
        let args = iface.arguments();
        let mut groups = Vec::new();
        let mut samplers = Vec::new();
        let max_group = iface.bindings.iter().map(|b| b.group).max().unwrap_or(0);
        for g in 0..=max_group {
            if g == RANGE_GROUP {
                continue;
            }
            let in_group: Vec<_> = iface.bindings.iter().filter(|b| b.group == g).collect();
            let entries: Vec<_> = in_group
                .iter()
                .map(|b| layout_entry(&b.kind, b.binding))
                .collect();
            let layout = dev.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
                label: Some(stem),
                entries: &entries,
            });
            let arg_indices = args
                .iter()
                .enumerate()
                .filter(|(_, a)| a.group == g)
                .map(|(i, _)| i)
                .collect();
            for b in in_group.iter().filter(|b| b.kind == BindingKind::Sampler) {
                samplers.push((g, b.binding));
            }
            groups.push((g, layout, arg_indices));
        }
        let mut layouts: Vec<&wgpu::BindGroupLayout> = Vec::new();
        for g in 0..=max_group.max(RANGE_GROUP) {
            if g == RANGE_GROUP {
                layouts.push(&self.range_layout);
            } else if let Some((_, l, _)) = groups.iter().find(|(gg, _, _)| *gg == g) {
                layouts.push(l);
            }
        }
        let cache = self.cache.as_ref().map(|c| &c.cache);
        let pipeline = compute_pipeline(dev, stem, &layouts, constants, cache)?;
        self.compiled
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Ok(KernelInner::Wgpu(Arc::new(WgpuKernel {
            pipeline,
            groups,
            samplers,
        })))
    }

    pub(crate) fn texture(
        &self,
        label: &str,
        size: u32,
        texels: &[[f32; 4]],
    ) -> Result<TextureInner> {
        let (format, bytes, texel_bytes): (wgpu::TextureFormat, Vec<u8>, u32) =
            match self.texel_precision() {
                TexelPrecision::F32 => (
                    wgpu::TextureFormat::Rgba32Float,
                    bytemuck::cast_slice(texels).to_vec(),
                    16,
                ),
                TexelPrecision::F16 => {
                    let half: Vec<[u16; 4]> = texels
                        .iter()
                        .map(|t| t.map(super::half::f32_to_f16_bits))
                        .collect();
                    (
                        wgpu::TextureFormat::Rgba16Float,
                        bytemuck::cast_slice(&half).to_vec(),
                        8,
                    )
                }
            };
        let max = self.ctx.limits.max_texture_dimension_2d;
        if size > max {
            return Err(Error::Gpu(format!(
                "texture '{label}' of side {size} exceeds this adapter's {max}"
            )));
        }
        let extent = wgpu::Extent3d {
            width: size,
            height: size,
            depth_or_array_layers: 1,
        };
        let t = self.ctx.device.create_texture(&wgpu::TextureDescriptor {
            label: Some(label),
            size: extent,
            mip_level_count: 1,
            sample_count: 1,
            dimension: wgpu::TextureDimension::D2,
            format,
            usage: wgpu::TextureUsages::TEXTURE_BINDING | wgpu::TextureUsages::COPY_DST,
            view_formats: &[],
        });
        self.ctx.queue.write_texture(
            wgpu::TexelCopyTextureInfo {
                texture: &t,
                mip_level: 0,
                origin: wgpu::Origin3d::ZERO,
                aspect: wgpu::TextureAspect::All,
            },
            &bytes,
            wgpu::TexelCopyBufferLayout {
                offset: 0,
                bytes_per_row: Some(size * texel_bytes),
                rows_per_image: Some(size),
            },
            extent,
        );
        let sampler = self.ctx.device.create_sampler(&wgpu::SamplerDescriptor {
            label: Some(label),
            address_mode_u: wgpu::AddressMode::ClampToEdge,
            address_mode_v: wgpu::AddressMode::ClampToEdge,
            mag_filter: wgpu::FilterMode::Linear,
            min_filter: wgpu::FilterMode::Linear,
            ..Default::default()
        });
        Ok(TextureInner::Wgpu(Arc::new(WgpuTexture {
            view: t.create_view(&wgpu::TextureViewDescriptor::default()),
            sampler,
        })))
    }

    pub(crate) fn prepare(&self, builder: &PlanBuilder) -> Result<PlanInner> {
        let dev = &self.ctx.device;
        let align = self.ctx.limits.min_uniform_buffer_offset_alignment.max(16);
        let stride = (std::mem::size_of::<RangeRecord>() as u32).next_multiple_of(align);
        let max_dim = self.ctx.limits.max_compute_workgroups_per_dimension;
        let launches = builder.launches();
        let mut range_bytes = vec![0u8; stride as usize * launches.len().max(1)];
        let mut bind_groups: Vec<wgpu::BindGroup> = Vec::new();
        // (kernel pointer, group, argument identities) of each bind group, for reuse.
        let mut keys: Vec<(usize, u32, Vec<ArgKey>)> = Vec::new();
        let mut uniforms: Vec<(Vec<u8>, wgpu::Buffer)> = Vec::new();
        for a in launches.iter().flat_map(|l| l.args.iter()) {
            if let Arg::Params(bytes) = a {
                if !uniforms.iter().any(|(c, _)| c == bytes) {
                    let buf = wgpu::util::DeviceExt::create_buffer_init(
                        dev,
                        &wgpu::util::BufferInitDescriptor {
                            label: Some("launch parameters"),
                            contents: bytes,
                            usage: wgpu::BufferUsages::UNIFORM,
                        },
                    );
                    uniforms.push((bytes.clone(), buf));
                }
            }
        }
        let mut prepared = Vec::with_capacity(launches.len());
        for (i, l) in launches.iter().enumerate() {
            let k = wgpu_kernel(&l.kernel.inner)?;
            let at = i * stride as usize;
            let record = RangeRecord {
                range: l.range,
                capacity: l.kernel.capacity(),
                reserved: [0; 3],
            };
            range_bytes[at..at + std::mem::size_of::<RangeRecord>()]
                .copy_from_slice(bytemuck::bytes_of(&record));
            let mut groups = Vec::new();
            for (g, layout, arg_indices) in &k.groups {
                let key: Vec<ArgKey> = arg_indices.iter().map(|&a| arg_key(&l.args[a])).collect();
                let kid = Arc::as_ptr(k) as usize;
                if let Some(idx) = keys
                    .iter()
                    .position(|(kk, gg, ak)| *kk == kid && gg == g && *ak == key)
                {
                    groups.push((*g, idx));
                    continue;
                }
                let mut entries: Vec<(u32, wgpu::BindingResource<'_>)> = Vec::new();
                let slots = &l.kernel.slots;
                for &a in arg_indices {
                    let slot = &slots[a];
                    match &l.args[a] {
                        Arg::Buffer(b) => {
                            entries.push((slot.binding, wgpu_buffer(&b.inner)?.as_entire_binding()))
                        }
                        Arg::Params(bytes) => {
                            let u = uniforms
                                .iter()
                                .find(|(c, _)| c == bytes)
                                .map(|(_, b)| b)
                                .ok_or_else(|| {
                                    Error::Gpu("launch parameters not uploaded".into())
                                })?;
                            entries.push((slot.binding, u.as_entire_binding()));
                        }
                        Arg::Texture(t) => {
                            let t = wgpu_texture(&t.inner)?;
                            entries
                                .push((slot.binding, wgpu::BindingResource::TextureView(&t.view)));
                            for (sg, sb) in &k.samplers {
                                if sg == g {
                                    entries.push((*sb, wgpu::BindingResource::Sampler(&t.sampler)));
                                }
                            }
                        }
                    }
                }
                let entries: Vec<wgpu::BindGroupEntry<'_>> = entries
                    .into_iter()
                    .map(|(binding, resource)| wgpu::BindGroupEntry { binding, resource })
                    .collect();
                bind_groups.push(dev.create_bind_group(&wgpu::BindGroupDescriptor {
                    label: Some(l.kernel.stem()),
                    layout,
                    entries: &entries,
                }));
                keys.push((kid, *g, key));
                groups.push((*g, bind_groups.len() - 1));
            }
            prepared.push(PreparedLaunch {
                kernel: k.clone(),
                groups,
                range_offset: i as u32 * stride,
                grid: grid_for(l.threads.max(1), l.kernel.workgroup_size(), max_dim)?,
                indirect: match &l.grid {
                    Some((records, word)) => Some((
                        wgpu_buffer(&records.inner)?.clone(),
                        u64::from(word + 2) * 4,
                    )),
                    None => None,
                },
                bound: l
                    .bound
                    .clone()
                    .map(|b| (b, l.threads, l.kernel.workgroup_size())),
            });
        }
        let range_buffer = wgpu::util::DeviceExt::create_buffer_init(
            dev,
            &wgpu::util::BufferInitDescriptor {
                label: Some("item ranges"),
                contents: &range_bytes,
                usage: wgpu::BufferUsages::UNIFORM,
            },
        );
        let range_group = dev.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("item ranges"),
            layout: &self.range_layout,
            entries: &[wgpu::BindGroupEntry {
                binding: 0,
                resource: wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                    buffer: &range_buffer,
                    offset: 0,
                    size: wgpu::BufferSize::new(std::mem::size_of::<RangeRecord>() as u64),
                }),
            }],
        });
        Ok(PlanInner::Wgpu(WgpuPlan {
            launches: prepared,
            bind_groups,
            range_group,
            _uniforms: uniforms.into_iter().map(|(_, b)| b).collect(),
            _range_buffer: range_buffer,
        }))
    }

    fn record(
        &self,
        plan: &WgpuPlan,
        pass: &mut wgpu::ComputePass<'_>,
        launches: std::ops::Range<usize>,
    ) {
        let max_dim = self.ctx.limits.max_compute_workgroups_per_dimension;
        let mut last: Option<*const WgpuKernel> = None;
        for l in &plan.launches[launches] {
            let kp = Arc::as_ptr(&l.kernel);
            if last != Some(kp) {
                pass.set_pipeline(&l.kernel.pipeline);
                last = Some(kp);
            }
            for (g, idx) in &l.groups {
                pass.set_bind_group(*g, &plan.bind_groups[*idx], &[]);
            }
            pass.set_bind_group(RANGE_GROUP, &plan.range_group, &[l.range_offset]);
            match (&l.indirect, &l.bound) {
                (Some((buffer, offset)), _) => pass.dispatch_workgroups_indirect(buffer, *offset),
                (None, Some((bound, threads, wg))) => {
                    // Fewer threads than the full grid, which fit the limits at prepare.
                    let bounded = super::Launch::bounded_threads(*threads, Some(bound));
                    let grid = grid_for(bounded, *wg, max_dim).unwrap_or(l.grid);
                    pass.dispatch_workgroups(grid.0, grid.1, 1)
                }
                (None, None) => pass.dispatch_workgroups(l.grid.0, l.grid.1, 1),
            }
        }
    }

    /// Record `repeats` runs of `plan` into command buffers of [`SUBMIT_LAUNCHES`] launches,
    /// each handed to `sink` as soon as it is recorded.
    fn encode(
        &self,
        plan: &super::Plan,
        repeats: u32,
        sink: impl FnMut(wgpu::CommandBuffer),
    ) -> Result<()> {
        self.encode_stamped(plan, repeats, None, sink)
    }

    /// [`WgpuDevice::encode`], with the timestamps `(timer, before, after)` written into the
    /// first command buffer before its pass and into the last after its pass.
    fn encode_stamped(
        &self,
        plan: &super::Plan,
        repeats: u32,
        stamps: Option<(&SpanTimer, u32, u32)>,
        mut sink: impl FnMut(wgpu::CommandBuffer),
    ) -> Result<()> {
        let p = wgpu_plan(&plan.inner)?;
        let n = p.launches.len();
        let total = n * repeats as usize;
        let mut done = 0;
        while done < total {
            let end = total.min(done + SUBMIT_LAUNCHES);
            let mut enc = self
                .ctx
                .device
                .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                    label: Some("plan"),
                });
            if let (Some((timer, before, _)), 0) = (stamps, done) {
                timer.write(&mut enc, before);
            }
            {
                let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
                    label: Some("plan"),
                    timestamp_writes: None,
                });
                let mut at = done;
                while at < end {
                    let first = at % n;
                    let last = n.min(first + (end - at));
                    self.record(p, &mut pass, first..last);
                    at += last - first;
                }
            }
            if let Some((timer, _, after)) = stamps.filter(|_| end == total) {
                timer.write(&mut enc, after);
            }
            sink(enc.finish());
            done = end;
        }
        Ok(())
    }

    /// Record `repeats` runs of `plan` and submit them, [`SUBMIT_LAUNCHES`] launches per submit.
    pub(crate) fn queue(&self, plan: &super::Plan, repeats: u32) -> Result<()> {
        self.encode(plan, repeats, |buffer| {
            self.ctx.queue.submit([buffer]);
        })
    }

    /// Record `repeats` runs of `plan` now, to be submitted by [`WgpuDevice::submit`].
    pub(crate) fn record_ahead(
        &self,
        plan: &super::Plan,
        repeats: u32,
    ) -> Result<Vec<wgpu::CommandBuffer>> {
        let mut buffers = Vec::new();
        self.encode(plan, repeats, |b| buffers.push(b))?;
        Ok(buffers)
    }

    /// Submit command buffers recorded ahead.
    pub(crate) fn submit(&self, buffers: Vec<wgpu::CommandBuffer>) {
        self.ctx.queue.submit(buffers);
    }

    /// A span timer for up to `capacity` spans, or None without timestamps.
    pub(crate) fn span_timer(&self, capacity: u32) -> Option<SpanTimer> {
        SpanTimer::new(&self.ctx, capacity)
    }

    /// Submit `buffers` between the timestamps of `timer`'s next span, in one submission
    /// (untimed when the timer is full).
    pub(crate) fn submit_timed(&self, buffers: Vec<wgpu::CommandBuffer>, timer: &mut SpanTimer) {
        let Some((before, after)) = timer.next_span(&self.ctx) else {
            return self.submit(buffers);
        };
        self.ctx.queue.submit(
            std::iter::once(before)
                .chain(buffers)
                .chain(std::iter::once(after)),
        );
    }

    /// Record `repeats` runs of `plan` and submit them between the timestamps of `timer`'s
    /// next span (untimed when the timer is full). Where encoders can write
    /// timestamps, the plan's own first and last command buffers write them (a few µs of host
    /// time less per span than two command buffers of their own); else the span's two
    /// command buffers go in one submission with the plan's.
    pub(crate) fn queue_timed(
        &self,
        plan: &super::Plan,
        repeats: u32,
        timer: &mut SpanTimer,
    ) -> Result<()> {
        if !self
            .ctx
            .features
            .contains(wgpu::Features::TIMESTAMP_QUERY_INSIDE_ENCODERS)
        {
            let buffers = self.record_ahead(plan, repeats)?;
            self.submit_timed(buffers, timer);
            return Ok(());
        }
        let Some((before, after)) = timer.next_indices() else {
            return self.queue(plan, repeats);
        };
        self.encode_stamped(plan, repeats, Some((timer, before, after)), |buffer| {
            self.ctx.queue.submit([buffer]);
        })
    }

    /// Seconds of each span of `timer` since its last drain (waits for their work).
    pub(crate) fn drain_spans(&self, timer: &mut SpanTimer) -> Result<Vec<f64>> {
        let spans = timer.resolve(&self.ctx);
        if spans == 0 {
            return Ok(Vec::new());
        }
        let pending = self
            .readback()?
            .start(&self.ctx, timer.resolved(), 0, 16 * spans as u64)?;
        let ticks: Vec<u64> = self.finish_read(pending)?;
        Ok(timer.seconds(&ticks))
    }

    /// Seconds of each of `ranges` (launches of `plan`, each range a compute pass between
    /// two timestamps) in each of `repeats` runs.
    pub(crate) fn time(
        &self,
        plan: &super::Plan,
        ranges: &[std::ops::Range<usize>],
        repeats: u32,
    ) -> Result<(Vec<f64>, bool)> {
        let p = wgpu_plan(&plan.inner)?;
        if !self.has_timestamps() {
            let start = Instant::now();
            self.queue(plan, repeats)?;
            self.wait()?;
            return Ok((vec![start.elapsed().as_secs_f64()], false));
        }
        let segments = ranges.len() as u32;
        let per_submit = (wgpu::QUERY_SET_MAX_QUERIES / 2 / segments).max(1);
        let mut seconds = Vec::with_capacity((segments * repeats) as usize);
        let mut done = 0;
        while done < repeats {
            let n = per_submit.min(repeats - done);
            let mut timer = PassTimer::new(&self.ctx, n * segments);
            timer.reset();
            // One submit per repeat, not waited for: the host records repeat r + 1 while the
            // device runs repeat r, as an untimed run would.
            for _ in 0..n {
                let mut enc =
                    self.ctx
                        .device
                        .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                            label: Some("timed plan"),
                        });
                for range in ranges {
                    let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
                        label: Some("timed segment"),
                        timestamp_writes: timer.next_pass(),
                    });
                    self.record(p, &mut pass, range.clone());
                }
                self.ctx.queue.submit([enc.finish()]);
            }
            let mut enc = self
                .ctx
                .device
                .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                    label: Some("timestamp resolve"),
                });
            timer.resolve(&mut enc);
            self.ctx.queue.submit([enc.finish()]);
            self.wait()?;
            seconds.extend(timer.pass_seconds(&self.ctx)?);
            done += n;
        }
        Ok((seconds, true))
    }

    pub fn wait(&self) -> Result<()> {
        self.ctx.wait()
    }
}

/// The identity of a launch argument, for reusing bind groups.
#[derive(PartialEq)]
enum ArgKey {
    Buffer(wgpu::Buffer),
    Params(Vec<u8>),
    Texture(usize),
}

fn arg_key(a: &Arg) -> ArgKey {
    match a {
        Arg::Buffer(b) => match &b.inner {
            BufferInner::Wgpu(w) => ArgKey::Buffer(w.clone()),
            #[cfg(feature = "cuda")]
            BufferInner::Cuda(_) => ArgKey::Params(Vec::new()),
        },
        Arg::Params(p) => ArgKey::Params(p.clone()),
        Arg::Texture(t) => ArgKey::Texture(match &t.inner {
            TextureInner::Wgpu(w) => Arc::as_ptr(w) as usize,
            #[cfg(feature = "cuda")]
            TextureInner::Cuda(c) => Arc::as_ptr(c) as usize,
        }),
    }
}

/// Compile kernel `name` into a compute pipeline with entry point `main` and an automatic layout
/// from the given bind group layouts, through `cache` when given.
pub fn compute_pipeline(
    device: &wgpu::Device,
    name: &str,
    layouts: &[&wgpu::BindGroupLayout],
    constants: &[(&str, f64)],
    cache: Option<&wgpu::PipelineCache>,
) -> Result<wgpu::ComputePipeline> {
    let source = unroll_loops(&kernel_source(name)?, constants)
        .map_err(|e| Error::Gpu(format!("kernel shaders/{name}.wgsl: {e}")))?;
    let scope = device.push_error_scope(wgpu::ErrorFilter::Validation);
    let desc = wgpu::ShaderModuleDescriptor {
        label: Some(name),
        source: wgpu::ShaderSource::Wgsl(source.into()),
    };
    let module = if trusted_kernels() {
        // SAFETY: every kernel guards its indices by the item range and by mesh connectivity
        // validated on the host; the GPU-vs-CPU tests exercise each one with the checks on.
        // Loops are bounded by degree or level counts. The user opts in explicitly.
        unsafe { device.create_shader_module_trusted(desc, wgpu::ShaderRuntimeChecks::unchecked()) }
    } else {
        device.create_shader_module(desc)
    };
    let opt_layouts: Vec<Option<&wgpu::BindGroupLayout>> =
        layouts.iter().map(|l| Some(*l)).collect();
    let layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
        label: Some(name),
        bind_group_layouts: &opt_layouts,
        immediate_size: 0,
    });
    let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: Some(name),
        layout: Some(&layout),
        module: &module,
        entry_point: Some("main"),
        compilation_options: wgpu::PipelineCompilationOptions {
            constants,
            zero_initialize_workgroup_memory: false,
        },
        cache,
    });
    match pollster::block_on(scope.pop()) {
        Some(e) => Err(Error::Gpu(format!("kernel shaders/{name}.wgsl: {e}"))),
        None => Ok(pipeline),
    }
}
