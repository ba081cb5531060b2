//! The runtime's operations on a [`CudaDevice`]: raw device allocations, the twin kernels of
//! the WGSL ones, texture objects, and prepared plans launched in order on the device's one
//! stream (launches of a stream run in order, so color c + 1 sees the writes of color c).

use super::{driver_err, kernel_source, CudaDevice};
use crate::error::{Error, Result};
use crate::runtime::interface::{cuda_parameters, BindingKind, KernelInterface, ScalarType};
use crate::runtime::{
    Arg, BufferInner, CapacityArg, ItemRange, Kernel, KernelInner, Launch, Plan, PlanBuilder,
    PlanInner, TexelPrecision, TextureInner, ThreadBound,
};
use cudarc::driver::{result, sys, CudaContext, CudaEvent, CudaFunction, CudaStream};
use std::ffi::c_void;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, OnceLock};

/// Bytes of one item of `stream_copy` (a float4), which copies a small read-back queued ahead.
const COPY_ITEM_BYTES: u64 = 16;

/// The largest read-back queued ahead that `stream_copy` writes into mapped page-locked memory;
/// larger ones, and those at an offset that is not a whole float4, go to the copy engine. A
/// copy-engine copy between two launches held the stream about 9 µs on an H200 and a copy
/// kernel about 2 (BENCHMARKS.md, session 38); past a few pages the engine's bandwidth wins.
const KERNEL_READ_MAX_BYTES: u64 = 64 * 1024;

/// Programmatic stream serialization: a launch may begin as the kernel before it drains (each
/// kernel waits for it in await_previous_launches, dispatch.cuh).
fn overlap_attribute() -> sys::CUlaunchAttribute {
    // SAFETY: a union of plain integers; the field this attribute reads is set below.
    let mut value: sys::CUlaunchAttributeValue = unsafe { std::mem::zeroed() };
    value.programmaticStreamSerializationAllowed = 1;
    sys::CUlaunchAttribute {
        id: sys::CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION,
        pad: [0; 4],
        value,
    }
}

/// Whether [`CudaDevice::read_ahead`] copies `bytes` bytes at byte `offset` with a kernel.
pub(crate) fn reads_ahead_by_kernel(offset: u64, bytes: u64) -> bool {
    offset % COPY_ITEM_BYTES == 0 && bytes <= KERNEL_READ_MAX_BYTES
}

/// A device allocation on the device's stream, freed (in stream order) on drop.
pub struct DeviceMemory {
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    ptr: sys::CUdeviceptr,
}

impl Drop for DeviceMemory {
    fn drop(&mut self) {
        // Errors cannot be reported from drop; a failed bind leaves the memory to the
        // context's teardown.
        if self.ptr != 0 && self.ctx.bind_to_thread().is_ok() {
            // SAFETY: the pointer was allocated by malloc_async on this stream and is freed
            // once, after all work queued on the stream (which may still read it).
            let _ = unsafe { result::free_async(self.ptr, self.stream.cu_stream()) };
        }
    }
}

// SAFETY: the pointer is a device address, usable from any thread once the context is bound.
unsafe impl Send for DeviceMemory {}
// SAFETY: as above; the struct is never mutated after creation.
unsafe impl Sync for DeviceMemory {}

/// Page-locked host memory that a read-back queued ahead copies into (a copy into pageable
/// memory would wait for the stream before returning), mapped into the device's address space
/// so a kernel may write it; freed on drop.
pub struct PinnedBlock {
    ctx: Arc<CudaContext>,
    ptr: *mut c_void,
    /// The block's address on the device.
    device_ptr: sys::CUdeviceptr,
    bytes: usize,
}

impl Drop for PinnedBlock {
    fn drop(&mut self) {
        if self.ctx.bind_to_thread().is_ok() {
            // SAFETY: allocated by malloc_host and freed once; a copy into it is waited for
            // before the block is dropped or reused (PendingCopy keeps it until then).
            let _ = unsafe { result::free_host(self.ptr) };
        }
    }
}

// SAFETY: host memory owned by the block alone; the context is bound before it is freed.
unsafe impl Send for PinnedBlock {}
// SAFETY: as above; read only after the copy into it is done.
unsafe impl Sync for PinnedBlock {}

/// A read-back queued on the stream ([`crate::runtime::Runtime::read_ahead`]): its block and
/// the event recorded after the copy. Dropped unfinished, it waits for the copy before freeing
/// the block.
pub struct PendingCopy {
    block: Option<PinnedBlock>,
    bytes: usize,
    done: CudaEvent,
}

impl Drop for PendingCopy {
    fn drop(&mut self) {
        if self.block.is_some() {
            let _ = self.done.synchronize();
        }
    }
}

/// Spans of device time around queued work ([`crate::runtime::DeviceTimer`] on CUDA): a timing
/// event recorded on the stream before the work and one after it, each completing once the work
/// queued before it is done; read all at once (`CudaDevice::drain_spans`).
pub struct SpanEvents {
    pairs: Vec<(CudaEvent, CudaEvent)>,
    capacity: usize,
    /// Events of drained spans, recorded again by later spans (none created per span).
    free: Vec<CudaEvent>,
}

impl SpanEvents {
    /// Spans taken since the last drain.
    pub fn len(&self) -> usize {
        self.pairs.len()
    }

    /// Whether no span was taken since the last drain.
    pub fn is_empty(&self) -> bool {
        self.pairs.is_empty()
    }

    /// Whether the next span would pass the capacity.
    pub fn is_full(&self) -> bool {
        self.pairs.len() >= self.capacity
    }
}

/// A twin kernel: its function and, per argument, how the CUDA parameter takes it.
pub struct CudaKernel {
    function: CudaFunction,
    /// Per argument: true where a texture argument is passed as its texel buffer (a pointer)
    /// rather than its texture object.
    texels_as_pointer: Vec<bool>,
}

/// A texture object over a float4 CUDA array (bilinear, clamp, normalised coordinates) and the
/// same texels in global memory for kernels that read them directly.
pub struct CudaTexture {
    ctx: Arc<CudaContext>,
    array: sys::CUarray,
    texture: sys::CUtexObject,
    texels: DeviceMemory,
}

// SAFETY: handles of the driver, usable from any thread once the context is bound.
unsafe impl Send for CudaTexture {}
// SAFETY: as above; never mutated after creation.
unsafe impl Sync for CudaTexture {}

impl Drop for CudaTexture {
    fn drop(&mut self) {
        // Work still queued may read the texture: wait for it first.
        if self.ctx.bind_to_thread().is_err() || self.ctx.synchronize().is_err() {
            return;
        }
        if self.texture != 0 {
            // SAFETY: created by this struct, destroyed once, no launch reads it any more.
            let _ = unsafe { sys::cuTexObjectDestroy(self.texture) };
        }
        if !self.array.is_null() {
            // SAFETY: created by this struct; its texture object is destroyed above.
            let _ = unsafe { sys::cuArrayDestroy(self.array) };
        }
    }
}

/// One argument word of a prepared launch.
enum ParamValue {
    Pointer(sys::CUdeviceptr),
    Bytes(Vec<u8>),
    Texture(sys::CUtexObject),
}

struct PreparedLaunch {
    function: sys::CUfunction,
    values: Vec<ParamValue>,
    range: ItemRange,
    /// The threads to launch at most (a device-sized launch's upper bound).
    threads: u32,
    /// The host's bound of the threads needed, read at each launch or graph launch.
    bound: Option<ThreadBound>,
    /// Threads per block: the kernel's workgroup size.
    block_threads: u32,
}

impl PreparedLaunch {
    /// The grid as the bound stands now.
    fn blocks(&self) -> u32 {
        Launch::bounded_threads(self.threads, self.bound.as_ref()).div_ceil(self.block_threads)
    }

    /// Pointers to the parameter values, the range last, as a launch or node takes them.
    fn parameter_pointers(&self, ptrs: &mut Vec<*mut c_void>) {
        ptrs.clear();
        for v in &self.values {
            ptrs.push(match v {
                ParamValue::Pointer(p) => p as *const sys::CUdeviceptr as *mut c_void,
                ParamValue::Bytes(b) => b.as_ptr() as *mut c_void,
                ParamValue::Texture(t) => t as *const sys::CUtexObject as *mut c_void,
            });
        }
        ptrs.push(&self.range as *const ItemRange as *mut c_void);
    }
}

/// A prepared plan: raw launch parameters, and the resources they point at kept alive.
pub struct CudaPlan {
    /// The launches as one CUDA graph, captured on the plan's second queue (a plan queued
    /// once never pays the capture): one host call then issues them all, where separate
    /// launches cost about 4.4 µs each on the host and as much again on the device for short
    /// kernels (`bench launches`). Declared first: destroyed before the kernels' modules.
    graph: OnceLock<GraphExec>,
    /// Queues of the plan so far.
    queued: AtomicU32,
    launches: Vec<PreparedLaunch>,
    _kernels: Vec<Arc<CudaKernel>>,
    _args: Vec<Arg>,
}

// SAFETY: the raw function handles and device pointers are owned by the kept resources; the
// graph is an opaque driver handle usable from any thread with the context current.
unsafe impl Send for CudaPlan {}
// SAFETY: as above; the launches never change after creation, the graph is set once, and its
// bounded nodes' grids change only through the driver (thread-safe) with atomic records.
unsafe impl Sync for CudaPlan {}

/// An instantiated CUDA graph of a plan's launches, with the graph it was instantiated from
/// (whose node handles name the kernel nodes of bounded launches for updates).
struct GraphExec {
    exec: sys::CUgraphExec,
    graph: sys::CUgraph,
    /// Per launch with a host bound: its index in the plan, its kernel node, and the blocks
    /// the executable graph launches it with now.
    bounded: Vec<(usize, sys::CUgraphNode, AtomicU32)>,
}

impl Drop for GraphExec {
    fn drop(&mut self) {
        // SAFETY: the handles came from cuGraphInstantiateWithFlags and the capture, and are
        // destroyed once; the driver frees a graph still running when it completes.
        unsafe {
            sys::cuGraphExecDestroy(self.exec);
            sys::cuGraphDestroy(self.graph);
        }
    }
}

fn memory(b: &BufferInner) -> Result<&DeviceMemory> {
    match b {
        BufferInner::Cuda(m) => Ok(m),
        _ => Err(Error::Gpu(
            "a wgpu buffer passed to the CUDA backend".into(),
        )),
    }
}

impl CudaDevice {
    fn bind(&self) -> Result<()> {
        self.context()
            .bind_to_thread()
            .map_err(driver_err("bind context"))
    }

    fn alloc(&self, bytes: u64) -> Result<DeviceMemory> {
        self.bind()?;
        let stream = self.stream().clone();
        // Whole float4s, so a read-back's copy kernel (`read_ahead`) may round a word range up
        // to them and stay in the allocation.
        let allocated = bytes.max(4).next_multiple_of(COPY_ITEM_BYTES);
        // SAFETY: a plain allocation of at least 16 bytes on this stream.
        let ptr = unsafe { result::malloc_async(stream.cu_stream(), allocated as usize) }
            .map_err(driver_err("allocate"))?;
        Ok(DeviceMemory {
            ctx: self.context().clone(),
            stream,
            ptr,
        })
    }

    pub fn has_timestamps(&self) -> bool {
        true
    }

    pub fn max_buffer_bytes(&self) -> u64 {
        u64::MAX
    }

    pub fn texel_precision(&self) -> TexelPrecision {
        TexelPrecision::F32
    }

    pub(crate) fn upload(&self, _label: &str, bytes: &[u8]) -> Result<BufferInner> {
        let m = self.alloc(bytes.len() as u64)?;
        if !bytes.is_empty() {
            // SAFETY: `m` holds at least `bytes.len()` bytes; pageable host memory is staged
            // before the call returns.
            unsafe { result::memcpy_htod_async(m.ptr, bytes, m.stream.cu_stream()) }
                .map_err(driver_err("upload"))?;
        }
        Ok(BufferInner::Cuda(Arc::new(m)))
    }

    pub(crate) fn zeroed(&self, _label: &str, bytes: u64) -> Result<BufferInner> {
        let m = self.alloc(bytes)?;
        // SAFETY: `m` holds at least max(bytes, 4) bytes.
        unsafe { result::memset_d8_async(m.ptr, 0, bytes.max(4) as usize, m.stream.cu_stream()) }
            .map_err(driver_err("clear"))?;
        Ok(BufferInner::Cuda(Arc::new(m)))
    }

    pub(crate) fn write(&self, buffer: &BufferInner, offset: u64, bytes: &[u8]) -> Result<()> {
        let m = memory(buffer)?;
        self.bind()?;
        // SAFETY: the runtime checked offset + len against the buffer's size; pageable host
        // memory is staged before the call returns.
        unsafe { result::memcpy_htod_async(m.ptr + offset, bytes, m.stream.cu_stream()) }
            .map_err(driver_err("write"))
    }

    /// `count` elements of `T` from byte `offset`.
    pub(crate) fn read<T: bytemuck::Pod>(
        &self,
        buffer: &BufferInner,
        offset: u64,
        count: usize,
    ) -> Result<Vec<T>> {
        let m = memory(buffer)?;
        self.bind()?;
        let mut out = vec![T::zeroed(); count];
        let bytes: &mut [u8] = bytemuck::cast_slice_mut(&mut out);
        // SAFETY: the runtime checked the range against the buffer's size; `out` outlives the
        // copy because the stream is synchronized below.
        unsafe { result::memcpy_dtoh_async(bytes, m.ptr + offset, m.stream.cu_stream()) }
            .map_err(driver_err("read back (a kernel failed?)"))?;
        self.synchronize()?;
        Ok(out)
    }

    /// A span timer for up to `capacity` spans.
    pub(crate) fn span_timer(&self, capacity: u32) -> SpanEvents {
        SpanEvents {
            pairs: Vec::new(),
            capacity: capacity.max(1) as usize,
            free: Vec::new(),
        }
    }

    /// A timing event of `timer`'s (a free one, else a new one) recorded on the stream
    /// behind the work queued so far.
    fn timing_event(&self, timer: &mut SpanEvents) -> Result<CudaEvent> {
        let event = match timer.free.pop() {
            Some(event) => event,
            None => self
                .context()
                .new_event(Some(sys::CUevent_flags::CU_EVENT_DEFAULT))
                .map_err(driver_err("create a timing event"))?,
        };
        event
            .record(self.stream())
            .map_err(driver_err("record a timing event"))?;
        Ok(event)
    }

    /// Queue `repeats` runs of `plan` between the events of `timer`'s next span (untimed when
    /// the timer is full).
    pub(crate) fn queue_timed(
        &self,
        plan: &Plan,
        repeats: u32,
        timer: &mut SpanEvents,
    ) -> Result<()> {
        if timer.is_full() {
            return self.queue(plan, repeats);
        }
        self.bind()?;
        let before = self.timing_event(timer)?;
        self.queue(plan, repeats)?;
        let after = self.timing_event(timer)?;
        timer.pairs.push((before, after));
        Ok(())
    }

    /// Seconds of each span of `timer` since its last drain (waits for their work).
    pub(crate) fn drain_spans(&self, timer: &mut SpanEvents) -> Result<Vec<f64>> {
        self.bind()?;
        let pairs = std::mem::take(&mut timer.pairs);
        let mut seconds = Vec::with_capacity(pairs.len());
        for (before, after) in pairs {
            after
                .synchronize()
                .map_err(driver_err("wait for a timing event (a kernel failed?)"))?;
            let ms = before
                .elapsed_ms(&after)
                .map_err(driver_err("event time"))?;
            seconds.push(f64::from(ms) * 1e-3);
            timer.free.extend([before, after]);
        }
        Ok(seconds)
    }

    /// Queue a copy of `bytes` bytes at byte `offset` of `buffer` into page-locked memory
    /// behind the work queued so far, and an event after it: by `copier` (`stream_copy`, given
    /// where [`reads_ahead_by_kernel`]) into the block's device mapping, else by the copy
    /// engine.
    pub(crate) fn read_ahead(
        &self,
        buffer: &BufferInner,
        offset: u64,
        bytes: u64,
        copier: Option<&Kernel>,
    ) -> Result<PendingCopy> {
        let m = memory(buffer)?;
        self.bind()?;
        let items = bytes.div_ceil(COPY_ITEM_BYTES).max(1);
        let block = self.pinned_block((items * COPY_ITEM_BYTES) as usize)?;
        match copier {
            Some(copier) if reads_ahead_by_kernel(offset, bytes) => {
                self.launch_copy(copier, m.ptr + offset, block.device_ptr, items as u32)?
            }
            // SAFETY: the block holds at least `bytes` bytes and stays alive (in the
            // PendingCopy) until the event after the copy has completed; the runtime checked
            // the range against the buffer's size.
            _ => unsafe {
                let host = std::slice::from_raw_parts_mut(block.ptr.cast::<u8>(), bytes as usize);
                result::memcpy_dtoh_async(host, m.ptr + offset, m.stream.cu_stream())
                    .map_err(driver_err("read back ahead"))?
            },
        }
        let done = m
            .stream
            .record_event(Some(sys::CUevent_flags::CU_EVENT_DISABLE_TIMING))
            .map_err(driver_err("record a read-back event"))?;
        Ok(PendingCopy {
            block: Some(block),
            bytes: bytes as usize,
            done,
        })
    }

    /// A free page-locked block of at least `bytes` bytes, else a new one.
    fn pinned_block(&self, bytes: usize) -> Result<PinnedBlock> {
        let reused = {
            let mut free = self
                .pinned
                .lock()
                .map_err(|_| Error::Gpu("pinned read-back blocks poisoned".into()))?;
            free.iter()
                .position(|b| b.bytes >= bytes)
                .map(|k| free.swap_remove(k))
        };
        if let Some(block) = reused {
            return Ok(block);
        }
        let mut block = PinnedBlock {
            ctx: self.context().clone(),
            // SAFETY: a plain page-locked allocation, mapped into the device's address space.
            ptr: unsafe { result::malloc_host(bytes, sys::CU_MEMHOSTALLOC_DEVICEMAP) }
                .map_err(driver_err("allocate page-locked memory"))?,
            device_ptr: 0,
            bytes,
        };
        // SAFETY: the pointer was returned by cuMemHostAlloc with DEVICEMAP in this context
        // (bound); the block frees it on drop should this fail.
        unsafe { sys::cuMemHostGetDevicePointer_v2(&mut block.device_ptr, block.ptr, 0) }
            .result()
            .map_err(driver_err("map page-locked memory into the device"))?;
        Ok(block)
    }

    /// Queue `copier` (`stream_copy`: `dst[i] = src[i]` of `items` float4s) from device address
    /// `src` to `dst`, behind the work queued so far.
    fn launch_copy(
        &self,
        copier: &Kernel,
        src: sys::CUdeviceptr,
        dst: sys::CUdeviceptr,
        items: u32,
    ) -> Result<()> {
        let KernelInner::Cuda(kernel) = &copier.inner else {
            return Err(Error::Gpu(
                "a wgpu kernel passed to the CUDA backend".into(),
            ));
        };
        let block_threads = copier.workgroup_size();
        let (mut src, mut dst) = (src, dst);
        let mut range = ItemRange {
            first: 0,
            count: items,
            color: 0,
            pad: 0,
        };
        let mut params: [*mut c_void; 3] = [
            (&mut src as *mut sys::CUdeviceptr).cast(),
            (&mut dst as *mut sys::CUdeviceptr).cast(),
            (&mut range as *mut ItemRange).cast(),
        ];
        let mut overlap = overlap_attribute();
        let config = sys::CUlaunchConfig {
            gridDimX: items.div_ceil(block_threads),
            gridDimY: 1,
            gridDimZ: 1,
            blockDimX: block_threads,
            blockDimY: 1,
            blockDimZ: 1,
            sharedMemBytes: 0,
            hStream: self.stream().cu_stream(),
            attrs: &mut overlap,
            numAttrs: u32::from(self.overlaps_launches()),
        };
        // SAFETY: stream_copy takes (const float4*, float4*, ItemRange) and starts with
        // await_previous_launches; `src` holds `items` float4s (allocations are whole float4s
        // and the offset is one), `dst` is a mapped block of at least as many; the values
        // pointed at live through the call, which copies them.
        unsafe {
            sys::cuLaunchKernelEx(
                &config,
                kernel.function.cu_function(),
                params.as_mut_ptr(),
                std::ptr::null_mut(),
            )
        }
        .result()
        .map_err(driver_err("launch a read-back copy"))
    }

    /// Wait for a read-back queued ahead (not for the work queued after it).
    pub(crate) fn finish_read<T: bytemuck::Pod>(&self, mut pending: PendingCopy) -> Result<Vec<T>> {
        pending
            .done
            .synchronize()
            .map_err(driver_err("read back (a kernel failed?)"))?;
        let block = pending
            .block
            .take()
            .ok_or_else(|| Error::Gpu("read-back finished twice".into()))?;
        let mut out = vec![T::zeroed(); pending.bytes / std::mem::size_of::<T>()];
        // SAFETY: the copy into the block is done (its event completed); the block holds at
        // least `bytes` bytes.
        let host = unsafe { std::slice::from_raw_parts(block.ptr.cast::<u8>(), pending.bytes) };
        bytemuck::cast_slice_mut::<T, u8>(&mut out).copy_from_slice(host);
        self.pinned
            .lock()
            .map_err(|_| Error::Gpu("pinned read-back blocks poisoned".into()))?
            .push(block);
        Ok(out)
    }

    pub(crate) fn copy(
        &self,
        src: &BufferInner,
        src_offset: u64,
        dst: &BufferInner,
        dst_offset: u64,
        bytes: u64,
    ) -> Result<()> {
        let (s, d) = (memory(src)?, memory(dst)?);
        self.bind()?;
        // SAFETY: the runtime checked offset + `bytes` against both sizes.
        unsafe {
            result::memcpy_dtod_async(
                d.ptr + dst_offset,
                s.ptr + src_offset,
                bytes as usize,
                s.stream.cu_stream(),
            )
        }
        .map_err(driver_err("copy"))
    }

    pub(crate) fn kernel(
        &self,
        stem: &str,
        cuda_entry: Option<&str>,
        constants: &[(&str, f64)],
        capacity: Option<CapacityArg>,
        iface: &KernelInterface,
    ) -> Result<KernelInner> {
        // Kernels may be built on several threads at once (Runtime::kernels): each binds the
        // context before the driver loads a module or looks a function up.
        self.bind()?;
        let mut defines: Vec<String> = constants
            .iter()
            .map(|(name, value)| match iface.override_type(name) {
                Some(ScalarType::U32) => super::define_u32(name, *value as u32),
                Some(ScalarType::I32) => format!("-D{name}={}", *value as i64),
                _ => super::define_f32(name, *value),
            })
            .collect();
        // A fixed capacity is compiled in (dispatch.cuh then declares no module constant NE);
        // one given at launch is set in a module of its own.
        let module_capacity = match capacity {
            Some(CapacityArg::Fixed(c)) => {
                defines.push(super::define_u32("NE", c));
                None
            }
            Some(CapacityArg::AtLaunch(c)) => Some(c),
            None => None,
        };
        let entry = cuda_entry.unwrap_or(stem);
        let function = self.function(stem, entry, &defines, module_capacity)?;
        let source = kernel_source(stem)?;
        let params = cuda_parameters(&source, entry)
            .ok_or_else(|| Error::Gpu(format!("shaders/cuda/{stem}.cu has no kernel {entry}")))?;
        let args = iface.arguments();
        if params.len() != args.len() + 1 {
            return Err(Error::Gpu(format!(
                "kernel {entry} of shaders/cuda/{stem}.cu takes {} parameters, its WGSL twin {} \
                 arguments plus the item range",
                params.len(),
                args.len()
            )));
        }
        let texels_as_pointer = args
            .iter()
            .zip(&params)
            .map(|(a, p)| a.kind == BindingKind::Texture && p.contains('*'))
            .collect();
        Ok(KernelInner::Cuda(Arc::new(CudaKernel {
            function,
            texels_as_pointer,
        })))
    }

    pub(crate) fn texture(
        &self,
        _label: &str,
        size: u32,
        texels: &[[f32; 4]],
    ) -> Result<TextureInner> {
        let size = size as usize;
        let ctx = self.context().clone();
        self.bind()?;
        let texel_memory = self.alloc((texels.len() * 16) as u64)?;
        // SAFETY: the allocation holds all texels; pageable memory is staged before return.
        unsafe {
            result::memcpy_htod_async(
                texel_memory.ptr,
                bytemuck::cast_slice::<[f32; 4], u8>(texels),
                self.stream().cu_stream(),
            )
        }
        .map_err(driver_err("upload texels"))?;
        let desc = sys::CUDA_ARRAY_DESCRIPTOR {
            Width: size,
            Height: size,
            Format: sys::CUarray_format::CU_AD_FORMAT_FLOAT,
            NumChannels: 4,
        };
        let mut array: sys::CUarray = std::ptr::null_mut();
        // SAFETY: `desc` is a valid descriptor and `array` a valid place for the handle; the
        // context is current on this thread.
        unsafe { sys::cuArrayCreate_v2(&mut array, &desc) }
            .result()
            .map_err(driver_err("create texture array"))?;
        // From here on `Drop` releases the array (and the texture once it exists).
        let mut tex = CudaTexture {
            ctx,
            array,
            texture: 0,
            texels: texel_memory,
        };
        let row_bytes = size * std::mem::size_of::<[f32; 4]>();
        // Every field spelled out: CUmemorytype has no zero variant.
        let copy = sys::CUDA_MEMCPY2D {
            srcXInBytes: 0,
            srcY: 0,
            srcMemoryType: sys::CUmemorytype::CU_MEMORYTYPE_HOST,
            srcHost: texels.as_ptr().cast(),
            srcDevice: 0,
            srcArray: std::ptr::null_mut(),
            srcPitch: row_bytes,
            dstXInBytes: 0,
            dstY: 0,
            dstMemoryType: sys::CUmemorytype::CU_MEMORYTYPE_ARRAY,
            dstHost: std::ptr::null_mut(),
            dstDevice: 0,
            dstArray: tex.array,
            dstPitch: 0,
            WidthInBytes: row_bytes,
            Height: size,
        };
        // SAFETY: the source is `size` rows of `row_bytes` bytes (length checked by the
        // runtime), alive for this synchronous copy; the array has the same extent.
        unsafe { sys::cuMemcpy2D_v2(&copy) }
            .result()
            .map_err(driver_err("upload texture array"))?;
        // SAFETY: zero bytes are valid for this plain C struct (integers, a union of handles
        // and integers, and CUresourcetype whose zero is CU_RESOURCE_TYPE_ARRAY); the union
        // member set below is the one `resType` selects.
        let mut res: sys::CUDA_RESOURCE_DESC = unsafe { std::mem::zeroed() };
        res.resType = sys::CUresourcetype::CU_RESOURCE_TYPE_ARRAY;
        res.res.array =
            sys::CUDA_RESOURCE_DESC_st__bindgen_ty_1__bindgen_ty_1 { hArray: tex.array };
        // SAFETY: zero bytes are valid here: integers, floats, and CUaddress_mode /
        // CUfilter_mode whose zero values are WRAP and POINT.
        let mut tdesc: sys::CUDA_TEXTURE_DESC = unsafe { std::mem::zeroed() };
        tdesc.addressMode = [sys::CUaddress_mode::CU_TR_ADDRESS_MODE_CLAMP; 3];
        tdesc.filterMode = sys::CUfilter_mode::CU_TR_FILTER_MODE_LINEAR;
        tdesc.flags = sys::CU_TRSF_NORMALIZED_COORDINATES;
        let mut texture: sys::CUtexObject = 0;
        // SAFETY: `res` names the live array, `tdesc` is fully initialised, no view
        // descriptor (null is allowed); the context is current on this thread.
        unsafe { sys::cuTexObjectCreate(&mut texture, &res, &tdesc, std::ptr::null()) }
            .result()
            .map_err(driver_err("create texture object"))?;
        tex.texture = texture;
        Ok(TextureInner::Cuda(Arc::new(tex)))
    }

    pub(crate) fn prepare(&self, builder: &PlanBuilder) -> Result<PlanInner> {
        let mut launches = Vec::with_capacity(builder.launches().len());
        let mut kernels = Vec::new();
        let mut kept = Vec::new();
        for l in builder.launches() {
            let KernelInner::Cuda(k) = &l.kernel.inner else {
                return Err(Error::Gpu(
                    "a wgpu kernel passed to the CUDA backend".into(),
                ));
            };
            let mut values = Vec::with_capacity(l.args.len());
            for (i, a) in l.args.iter().enumerate() {
                values.push(match a {
                    Arg::Buffer(b) => ParamValue::Pointer(memory(&b.inner)?.ptr),
                    Arg::Params(p) => ParamValue::Bytes(p.clone()),
                    Arg::Texture(t) => {
                        let TextureInner::Cuda(t) = &t.inner else {
                            return Err(Error::Gpu(
                                "a wgpu texture passed to the CUDA backend".into(),
                            ));
                        };
                        if k.texels_as_pointer[i] {
                            ParamValue::Pointer(t.texels.ptr)
                        } else {
                            ParamValue::Texture(t.texture)
                        }
                    }
                });
                kept.push(a.clone());
            }
            // A device-written grid (`l.grid`) cannot size a CUDA launch: `threads` (or the
            // host's bound) is then an upper bound, and the kernel returns past the record's
            // count.
            launches.push(PreparedLaunch {
                function: k.function.cu_function(),
                values,
                range: l.range,
                threads: l.threads,
                bound: l.bound.clone(),
                block_threads: l.kernel.workgroup_size(),
            });
            kernels.push(k.clone());
        }
        Ok(PlanInner::Cuda(CudaPlan {
            graph: OnceLock::new(),
            queued: AtomicU32::new(0),
            launches,
            _kernels: kernels,
            _args: kept,
        }))
    }

    /// Launch `range` of the plan's launches on `stream`. While the stream is capturing, `nodes`
    /// takes the kernel node of each launch with a host bound.
    fn launch_range(
        &self,
        plan: &CudaPlan,
        range: std::ops::Range<usize>,
        stream: sys::CUstream,
        mut nodes: Option<&mut Vec<(usize, sys::CUgraphNode, AtomicU32)>>,
    ) -> Result<()> {
        let mut ptrs: Vec<*mut c_void> = Vec::with_capacity(16);
        let mut overlap = overlap_attribute();
        for (i, l) in plan.launches[range.clone()].iter().enumerate() {
            l.parameter_pointers(&mut ptrs);
            let blocks = l.blocks();
            let config = sys::CUlaunchConfig {
                gridDimX: blocks,
                gridDimY: 1,
                gridDimZ: 1,
                blockDimX: l.block_threads,
                blockDimY: 1,
                blockDimZ: 1,
                sharedMemBytes: 0,
                hStream: stream,
                attrs: &mut overlap,
                numAttrs: u32::from(self.overlaps_launches()),
            };
            // SAFETY: the parameter list matches the kernel's (checked against the WGSL
            // interface when the kernel was built and the plan prepared); the values pointed
            // at live in `plan` for the duration of the call, which copies them; the device
            // memory they name is kept alive by the plan. With the attribute, every kernel
            // waits for the ones before it first (await_previous_launches in dispatch.cuh).
            unsafe {
                sys::cuLaunchKernelEx(&config, l.function, ptrs.as_mut_ptr(), std::ptr::null_mut())
            }
            .result()
            .map_err(driver_err("launch"))?;
            if let (Some(nodes), Some(_)) = (nodes.as_deref_mut(), &l.bound) {
                nodes.push((
                    range.start + i,
                    captured_node(stream)?,
                    AtomicU32::new(blocks),
                ));
            }
        }
        Ok(())
    }

    /// Set the grid of every bounded kernel node of `graph` whose bound moved since its last
    /// launch (the driver applies it to the graph's later launches only).
    fn update_bounded_nodes(&self, p: &CudaPlan, graph: &GraphExec) -> Result<()> {
        // Grown at the first node that moved: a plan queued with its bounds unchanged (every
        // batch of steps between two adaptations) allocates nothing here.
        let mut ptrs: Vec<*mut c_void> = Vec::new();
        for (i, node, launched) in &graph.bounded {
            let l = &p.launches[*i];
            let blocks = l.blocks();
            if blocks == launched.load(Ordering::Relaxed) {
                continue;
            }
            l.parameter_pointers(&mut ptrs);
            let params = sys::CUDA_KERNEL_NODE_PARAMS {
                func: l.function,
                gridDimX: blocks,
                gridDimY: 1,
                gridDimZ: 1,
                blockDimX: l.block_threads,
                blockDimY: 1,
                blockDimZ: 1,
                sharedMemBytes: 0,
                kernelParams: ptrs.as_mut_ptr(),
                extra: std::ptr::null_mut(),
                kern: std::ptr::null_mut(),
                ctx: std::ptr::null_mut(),
            };
            // SAFETY: `node` is a kernel node of the graph `graph.exec` was instantiated from
            // (kept alive with it), captured from this launch with the same function, block
            // and parameters; the driver copies the parameter values during the call.
            unsafe { sys::cuGraphExecKernelNodeSetParams_v2(graph.exec, *node, &params) }
                .result()
                .map_err(driver_err("update a bounded launch's grid"))?;
            launched.store(blocks, Ordering::Relaxed);
        }
        Ok(())
    }

    pub(crate) fn queue(&self, plan: &Plan, repeats: u32) -> Result<()> {
        let PlanInner::Cuda(p) = &plan.inner else {
            return Err(Error::Gpu("a wgpu plan passed to the CUDA backend".into()));
        };
        self.bind()?;
        if p.launches.is_empty() || repeats == 0 {
            return Ok(());
        }
        if p.queued.fetch_add(1, Ordering::Relaxed) == 0 {
            for _ in 0..repeats {
                self.launch_range(p, 0..p.launches.len(), self.stream().cu_stream(), None)?;
            }
            return Ok(());
        }
        let graph = match p.graph.get() {
            Some(graph) => graph,
            None => {
                let captured = self.capture(p)?;
                p.graph.get_or_init(|| captured)
            }
        };
        self.update_bounded_nodes(p, graph)?;
        let stream = self.stream().cu_stream();
        for _ in 0..repeats {
            // SAFETY: the graph was instantiated in this context from the plan's launches,
            // whose device memory the plan keeps alive.
            unsafe { sys::cuGraphLaunch(graph.exec, stream) }
                .result()
                .map_err(driver_err("graph launch"))?;
        }
        Ok(())
    }

    /// The plan's launches captured from the stream into an instantiated graph.
    fn capture(&self, p: &CudaPlan) -> Result<GraphExec> {
        let all = 0..p.launches.len();
        self.capture_ranges(p, std::slice::from_ref(&all), &[])
    }

    /// `ranges` of the plan's launches captured into an instantiated graph; with `marks`
    /// (one more than the ranges), an event record node before the first range and after
    /// each (CU_EVENT_RECORD_EXTERNAL: timing nodes, not dependencies).
    fn capture_ranges(
        &self,
        p: &CudaPlan,
        ranges: &[std::ops::Range<usize>],
        marks: &[CudaEvent],
    ) -> Result<GraphExec> {
        let stream = self.capture_stream()?.cu_stream();
        let mode = sys::CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL;
        // SAFETY: the capture stream is this device's own and runs nothing; nothing else is
        // issued on it until the capture ends below.
        unsafe { sys::cuStreamBeginCapture_v2(stream, mode) }
            .result()
            .map_err(driver_err("begin graph capture"))?;
        let mark = |k: usize| -> Result<()> {
            let Some(event) = marks.get(k) else {
                return Ok(());
            };
            let external = sys::CUevent_record_flags::CU_EVENT_RECORD_EXTERNAL as u32;
            // SAFETY: the event is alive (borrowed) and of this context; the stream is the
            // capture stream, so this adds an event record node to the graph.
            unsafe { sys::cuEventRecordWithFlags(event.cu_event(), stream, external) }
                .result()
                .map_err(driver_err("record a timing event in a graph"))
        };
        let mut bounded = Vec::new();
        let launched = mark(0).and_then(|()| {
            ranges.iter().enumerate().try_for_each(|(k, range)| {
                self.launch_range(p, range.clone(), stream, Some(&mut bounded))?;
                mark(k + 1)
            })
        });
        let mut graph: sys::CUgraph = std::ptr::null_mut();
        // SAFETY: ends the capture begun above on the same stream, also when a launch failed.
        let ended = unsafe { sys::cuStreamEndCapture(stream, &mut graph) }
            .result()
            .map_err(driver_err("end graph capture"));
        launched?;
        ended?;
        let mut exec: sys::CUgraphExec = std::ptr::null_mut();
        // SAFETY: `graph` is the captured graph; it lives as long as the executable graph, whose
        // bounded nodes it names.
        let instantiated = unsafe { sys::cuGraphInstantiateWithFlags(&mut exec, graph, 0) }
            .result()
            .map_err(driver_err("instantiate graph"));
        if let Err(e) = instantiated {
            // SAFETY: as above; destroyed once, nothing was instantiated from it.
            unsafe {
                sys::cuGraphDestroy(graph);
            }
            return Err(e);
        }
        Ok(GraphExec {
            exec,
            graph,
            bounded,
        })
    }

    /// Seconds of each of `ranges` (launches of `plan`, each range between two events) in
    /// each of `repeats` runs. `in_graph`: the ranges and their events are captured into one
    /// graph, as a run issues a plan queued again, so no launch waits for the host to issue
    /// it (the stream's events would time those waits with the kernels: a few microseconds a
    /// launch, which matters when every launch is timed on its own).
    pub(crate) fn time(
        &self,
        plan: &Plan,
        ranges: &[std::ops::Range<usize>],
        repeats: u32,
        in_graph: bool,
    ) -> Result<(Vec<f64>, bool)> {
        let PlanInner::Cuda(p) = &plan.inner else {
            return Err(Error::Gpu("a wgpu plan passed to the CUDA backend".into()));
        };
        self.bind()?;
        if in_graph {
            return self.time_in_graph(p, ranges, repeats);
        }
        let stream = self.stream();
        let mark = || {
            stream
                .record_event(Some(sys::CUevent_flags::CU_EVENT_DEFAULT))
                .map_err(driver_err("record event"))
        };
        let mut marks = Vec::with_capacity(ranges.len() * repeats as usize + 1);
        marks.push(mark()?);
        for _ in 0..repeats {
            for range in ranges {
                self.launch_range(p, range.clone(), stream.cu_stream(), None)?;
                marks.push(mark()?);
            }
        }
        self.synchronize()?;
        marks
            .windows(2)
            .map(|w| {
                w[0].elapsed_ms(&w[1])
                    .map(|ms| ms as f64 * 1e-3)
                    .map_err(driver_err("event time"))
            })
            .collect::<Result<Vec<f64>>>()
            .map(|s| (s, true))
    }

    /// [`CudaDevice::time`] in one graph, launched `repeats` times (its event nodes are read
    /// after each launch).
    fn time_in_graph(
        &self,
        p: &CudaPlan,
        ranges: &[std::ops::Range<usize>],
        repeats: u32,
    ) -> Result<(Vec<f64>, bool)> {
        let marks = (0..=ranges.len())
            .map(|_| {
                self.ctx
                    .new_event(Some(sys::CUevent_flags::CU_EVENT_DEFAULT))
                    .map_err(driver_err("create a timing event"))
            })
            .collect::<Result<Vec<CudaEvent>>>()?;
        let graph = self.capture_ranges(p, ranges, &marks)?;
        let stream = self.stream().cu_stream();
        let mut seconds = Vec::with_capacity(ranges.len() * repeats as usize);
        for _ in 0..repeats {
            // SAFETY: the graph was instantiated in this context from the plan's launches,
            // whose device memory the plan keeps alive; the events outlive it (dropped after).
            unsafe { sys::cuGraphLaunch(graph.exec, stream) }
                .result()
                .map_err(driver_err("graph launch"))?;
            self.synchronize()?;
            for w in marks.windows(2) {
                let ms = w[0].elapsed_ms(&w[1]).map_err(driver_err("event time"))?;
                seconds.push(ms as f64 * 1e-3);
            }
        }
        drop(graph);
        Ok((seconds, true))
    }

    pub fn wait(&self) -> Result<()> {
        self.synchronize()
    }
}

/// The kernel node the launch just issued on capturing `stream` became: the one node the
/// capture's next operation would depend on.
fn captured_node(stream: sys::CUstream) -> Result<sys::CUgraphNode> {
    let mut status = sys::CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_NONE;
    let mut dependencies: *const sys::CUgraphNode = std::ptr::null();
    let mut count = 0usize;
    // SAFETY: the out pointers are valid; the ones passed as null are optional outputs; the
    // dependency array the driver returns stays valid until the next capture call on `stream`
    // and is read before it.
    unsafe {
        sys::cuStreamGetCaptureInfo_v3(
            stream,
            &mut status,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            &mut dependencies,
            std::ptr::null_mut(),
            &mut count,
        )
    }
    .result()
    .map_err(driver_err("read the capture's last node"))?;
    if status != sys::CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_ACTIVE
        || count != 1
        || dependencies.is_null()
    {
        return Err(Error::Gpu(format!(
            "graph capture: a launch left {count} nodes to depend on (one kernel node expected)"
        )));
    }
    // SAFETY: `count` is 1 and the array is non-null.
    Ok(unsafe { *dependencies })
}
