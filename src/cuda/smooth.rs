//! Vertex smoothing on CUDA: the twin of [`crate::solver::smooth::GpuSmoother`] (see its module
//! doc) with the same device layout ([`DeviceLayout`]: slots color by color, Morton order inside
//! a color, sliced-ELL cavity walks), the same kernel parameters and the same schedule: one
//! launch per color per iteration, all on one stream, so color c + 1 sees the moves of color c.
//!
//! The metric is read three ways ([`Sampling`]), by `shaders/cuda/smooth_{hardware,texel,
//! buffer}.cu` with `shaders/cuda/common/smooth_relocate.cuh`:
//!
//! * hardware: a float4 CUDA array behind a texture object with linear filtering, clamp
//!   addressing and normalised coordinates ([`MetricTextureObject`], created through the driver
//!   API, which cudarc's safe API does not wrap);
//! * shader: the texels in global memory read through the read-only data cache, bilinear
//!   interpolation in the kernel;
//! * buffer: the texels in global memory with ordinary loads, bilinear interpolation in the
//!   kernel.
//!
//! Texels are always f32 (CUDA filters float32 textures), so [`CudaSmoother::precision`] is
//! [`TexelPrecision::F32`] on every path. Runs are timed with a pair of CUDA events around all
//! launches.

use super::{driver_err, launch_for, CudaDevice};
use crate::error::{Error, Result};
use crate::gpu::dispatch::ItemRange;
use crate::solver::smooth::gpu::{
    cavity_array, device_params, slot_positions, GpuParams, RunTiming, SmoothDevice,
};
use crate::solver::smooth::layout::DeviceLayout;
use crate::solver::smooth::{
    MetricTexture, Sampling, Schedule, SmoothParams, SmoothTopology, TexelPrecision,
};
use cudarc::driver::{sys, CudaContext, CudaFunction, CudaSlice, PushKernelArg};
use std::sync::Arc;
use std::time::Instant;

/// The metric as a filtered CUDA texture: a `size x size` float4 CUDA array and a texture
/// object reading it with linear filtering, clamp-to-edge addressing and normalised
/// coordinates (the twin of the wgpu texture and sampler). Both are destroyed on drop.
pub struct MetricTextureObject {
    ctx: Arc<CudaContext>,
    array: sys::CUarray,
    texture: sys::CUtexObject,
}

impl MetricTextureObject {
    /// Upload `tex` into a CUDA array and create the texture object.
    pub fn new(dev: &CudaDevice, tex: &MetricTexture) -> Result<MetricTextureObject> {
        let size = tex.size as usize;
        if tex.texels.len() != size * size {
            return Err(Error::Invalid(format!(
                "metric texture of side {size} has {} texels",
                tex.texels.len()
            )));
        }
        let ctx = dev.context().clone();
        ctx.bind_to_thread()
            .map_err(driver_err("bind context for texture"))?;
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
            .map_err(driver_err("create metric array"))?;
        // From here on `Drop` releases the array (and the texture once it exists).
        let mut obj = MetricTextureObject {
            ctx,
            array,
            texture: 0,
        };
        let row_bytes = size * std::mem::size_of::<[f32; 4]>();
        // Every field spelled out: CUmemorytype has no zero variant, so a zeroed struct would
        // be invalid.
        let copy = sys::CUDA_MEMCPY2D {
            srcXInBytes: 0,
            srcY: 0,
            srcMemoryType: sys::CUmemorytype::CU_MEMORYTYPE_HOST,
            srcHost: tex.texels.as_ptr().cast(),
            srcDevice: 0,
            srcArray: std::ptr::null_mut(),
            srcPitch: row_bytes,
            dstXInBytes: 0,
            dstY: 0,
            dstMemoryType: sys::CUmemorytype::CU_MEMORYTYPE_ARRAY,
            dstHost: std::ptr::null_mut(),
            dstDevice: 0,
            dstArray: obj.array,
            dstPitch: 0,
            WidthInBytes: row_bytes,
            Height: size,
        };
        // SAFETY: the source is `size` rows of `row_bytes` bytes in `tex.texels` (length checked
        // above), alive for this synchronous copy; the destination array has the same extent.
        unsafe { sys::cuMemcpy2D_v2(&copy) }
            .result()
            .map_err(driver_err("upload metric array"))?;
        // SAFETY: zero bytes are valid for this plain C struct (integers, a union of handles
        // and integers, and CUresourcetype whose zero is CU_RESOURCE_TYPE_ARRAY); the union
        // member set below is the one `resType` selects.
        let mut res: sys::CUDA_RESOURCE_DESC = unsafe { std::mem::zeroed() };
        res.resType = sys::CUresourcetype::CU_RESOURCE_TYPE_ARRAY;
        res.res.array =
            sys::CUDA_RESOURCE_DESC_st__bindgen_ty_1__bindgen_ty_1 { hArray: obj.array };
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
            .map_err(driver_err("create metric texture object"))?;
        obj.texture = texture;
        Ok(obj)
    }

    /// The texture object handle the kernel takes (`cudaTextureObject_t`).
    pub fn handle(&self) -> u64 {
        self.texture
    }
}

impl Drop for MetricTextureObject {
    fn drop(&mut self) {
        // Errors cannot be reported from drop; a failed bind leaves the handles to the context's
        // teardown.
        // Work still queued (after a failed launch, say) may read the texture: wait for it.
        if self.ctx.bind_to_thread().is_err() || self.ctx.synchronize().is_err() {
            return;
        }
        if self.texture != 0 {
            // SAFETY: the texture object was created by this struct and is destroyed once; the
            // context was synchronized above, so no launch reads it any more.
            let _ = unsafe { sys::cuTexObjectDestroy(self.texture) };
        }
        if !self.array.is_null() {
            // SAFETY: the array was created by this struct, its texture object is destroyed
            // above, and it is destroyed once.
            let _ = unsafe { sys::cuArrayDestroy(self.array) };
        }
    }
}

/// Where the kernel reads the metric.
enum Metric {
    Texture(MetricTextureObject),
    Texels(CudaSlice<[f32; 4]>),
}

/// Smoothing state on a CUDA device (see the module doc).
pub struct CudaSmoother<'a> {
    dev: &'a CudaDevice,
    sampling: Sampling,
    n: usize,
    free: usize,
    positions: CudaSlice<[f32; 2]>,
    cavity: CudaSlice<u32>,
    params: GpuParams,
    metric: Metric,
    func: CudaFunction,
    /// The non-empty color ranges, in schedule order.
    ranges: Vec<ItemRange>,
    /// Caller's vertex of each slot.
    vertex_of: Vec<u32>,
}

impl<'a> CudaSmoother<'a> {
    /// Upload everything and compile the kernel of `sampling`; `pos` are the starting positions
    /// (rounded to f32).
    pub fn new(
        dev: &'a CudaDevice,
        topo: &SmoothTopology,
        schedule: &Schedule,
        tex: &MetricTexture,
        sampling: Sampling,
        params: &SmoothParams,
        pos: &[[f64; 2]],
    ) -> Result<CudaSmoother<'a>> {
        params.check()?;
        let n = topo.num_vertices();
        if pos.len() != n {
            return Err(Error::Invalid(format!(
                "{} positions for {n} vertices",
                pos.len()
            )));
        }
        let offsets = &schedule.offsets;
        if offsets.len() < 2 || offsets.windows(2).any(|w| w[1] < w[0]) {
            return Err(Error::Invalid(format!(
                "color offsets must be non-decreasing with at least one color, got {offsets:?}"
            )));
        }
        let layout = DeviceLayout::build(topo, schedule, pos)?;
        let (cavity, b) = cavity_array(&layout)?;
        let gp = device_params(tex, schedule, &layout, params, b);
        let stream = dev.stream();
        let positions = stream
            .clone_htod(&slot_positions(&layout.vertex_of, pos))
            .map_err(driver_err("upload positions"))?;
        let cavity = if cavity.is_empty() {
            stream.alloc_zeros::<u32>(1)
        } else {
            stream.clone_htod(&cavity)
        }
        .map_err(driver_err("upload cavities"))?;
        let metric = match sampling {
            Sampling::Hardware => Metric::Texture(MetricTextureObject::new(dev, tex)?),
            Sampling::Shader | Sampling::Buffer => Metric::Texels(
                stream
                    .clone_htod(&tex.texels)
                    .map_err(driver_err("upload metric texels"))?,
            ),
        };
        let func = dev.function(sampling.kernel(), sampling.kernel(), &[])?;
        let ranges = offsets
            .windows(2)
            .enumerate()
            .map(|(c, w)| ItemRange {
                first: w[0],
                count: w[1] - w[0],
                color: c as u32,
                pad: 0,
            })
            .filter(|r| r.count > 0)
            .collect();
        dev.synchronize()?;
        Ok(CudaSmoother {
            dev,
            sampling,
            n,
            free: layout.free(),
            positions,
            cavity,
            params: gp,
            metric,
            func,
            ranges,
            vertex_of: layout.vertex_of,
        })
    }

    pub fn sampling(&self) -> Sampling {
        self.sampling
    }

    /// Precision of the texels the kernel reads: always f32 on CUDA.
    pub fn precision(&self) -> TexelPrecision {
        TexelPrecision::F32
    }

    /// Number of vertices moved per iteration.
    pub fn free_vertices(&self) -> usize {
        self.free
    }

    /// Queue one launch of the kernel over `range`.
    fn launch(&self, range: &ItemRange) -> Result<()> {
        let texture = match &self.metric {
            Metric::Texture(t) => t.handle(),
            Metric::Texels(_) => 0,
        };
        let mut b = self.dev.stream().launch_builder(&self.func);
        b.arg(&self.positions).arg(&self.cavity).arg(&self.params);
        match &self.metric {
            Metric::Texture(_) => b.arg(&texture),
            Metric::Texels(texels) => b.arg(texels),
        };
        b.arg(range);
        // SAFETY: smooth_{hardware,texel,buffer}(float2* positions, const u32* cavity,
        // SmoothParams, cudaTextureObject_t | const float4* texels, ItemRange); GpuParams is
        // laid out as SmoothParams. The range lies inside the free slots, every cavity entry
        // and boundary pair is a slot < n, and the texel indices are clamped to the texture.
        unsafe { b.launch(launch_for(range.count)) }
            .map_err(driver_err("launch smoothing kernel"))?;
        Ok(())
    }

    /// Run `iterations` sweeps (one launch per color each) and wait for them; kernel time from
    /// a pair of CUDA events around all launches.
    pub fn run(&mut self, iterations: usize) -> Result<RunTiming> {
        let stream = self.dev.stream();
        let start = Instant::now();
        let mark = || {
            stream
                .record_event(Some(sys::CUevent_flags::CU_EVENT_DEFAULT))
                .map_err(driver_err("record event"))
        };
        let first = mark()?;
        for _ in 0..iterations {
            for r in &self.ranges {
                self.launch(r)?;
            }
        }
        let last = mark()?;
        self.dev.synchronize()?;
        let wall_seconds = start.elapsed().as_secs_f64();
        let ms = first.elapsed_ms(&last).map_err(driver_err("event time"))?;
        Ok(RunTiming {
            wall_seconds,
            kernel_seconds: Some(ms as f64 * 1e-3),
        })
    }

    /// Current positions in the caller's numbering (f32, as the kernel holds them).
    pub fn positions(&mut self) -> Result<Vec<[f32; 2]>> {
        let by_slot = self
            .dev
            .stream()
            .clone_dtoh(&self.positions)
            .map_err(driver_err("read positions (a kernel failed?)"))?;
        self.dev.synchronize()?;
        let mut out = vec![[0.0f32; 2]; self.n];
        for (&v, p) in self.vertex_of.iter().zip(by_slot) {
            out[v as usize] = p;
        }
        Ok(out)
    }

    /// Current positions widened to f64.
    pub fn positions_f64(&mut self) -> Result<Vec<[f64; 2]>> {
        Ok(self
            .positions()?
            .iter()
            .map(|p| [p[0] as f64, p[1] as f64])
            .collect())
    }

    /// Replace the positions (caller's numbering, rounded to f32).
    pub fn set_positions(&mut self, pos: &[[f64; 2]]) -> Result<()> {
        if pos.len() != self.n {
            return Err(Error::Invalid(format!(
                "{} positions for {} vertices",
                pos.len(),
                self.n
            )));
        }
        let p32 = slot_positions(&self.vertex_of, pos);
        self.dev
            .stream()
            .memcpy_htod(&p32, &mut self.positions)
            .map_err(driver_err("write positions"))?;
        self.dev.synchronize()
    }

    /// The free vertices (caller's numbering) in the order the kernels see them.
    pub fn order(&self) -> &[u32] {
        &self.vertex_of[..self.free]
    }
}

impl SmoothDevice for CudaSmoother<'_> {
    fn device_name(&self) -> String {
        self.dev.description()
    }
    fn precision(&self) -> TexelPrecision {
        CudaSmoother::precision(self)
    }
    fn free_vertices(&self) -> usize {
        CudaSmoother::free_vertices(self)
    }
    fn run(&mut self, iterations: usize) -> Result<RunTiming> {
        CudaSmoother::run(self, iterations)
    }
    fn positions_f64(&mut self) -> Result<Vec<[f64; 2]>> {
        CudaSmoother::positions_f64(self)
    }
    fn set_positions(&mut self, pos: &[[f64; 2]]) -> Result<()> {
        CudaSmoother::set_positions(self, pos)
    }
}
