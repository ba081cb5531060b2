//! Buffer helpers: checked storage-buffer creation and read-back through a staging buffer.

use super::context::GpuContext;
use crate::error::{Error, Result};
use wgpu::util::DeviceExt;

/// Usage of a storage buffer the host may also write and read back, and that may hold launch
/// records read by indirect dispatches.
pub const STORAGE_RW: wgpu::BufferUsages = wgpu::BufferUsages::STORAGE
    .union(wgpu::BufferUsages::COPY_SRC)
    .union(wgpu::BufferUsages::COPY_DST)
    .union(wgpu::BufferUsages::INDIRECT);

/// A storage buffer initialised from `data`; errors when it exceeds one binding.
pub fn storage_from<T: bytemuck::Pod>(
    ctx: &GpuContext,
    label: &str,
    data: &[T],
) -> Result<wgpu::Buffer> {
    let bytes: &[u8] = bytemuck::cast_slice(data);
    ctx.check_binding_size(label, bytes.len() as u64)?;
    // wgpu rejects zero-sized bindings; keep one element so empty inputs stay valid.
    let padded;
    let contents = if bytes.is_empty() {
        padded = vec![0u8; 16];
        &padded[..]
    } else {
        bytes
    };
    Ok(ctx
        .device
        .create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some(label),
            contents,
            usage: STORAGE_RW,
        }))
}

/// A zero-filled storage buffer of `count` elements of `T`.
pub fn storage_zeroed<T: bytemuck::Pod>(
    ctx: &GpuContext,
    label: &str,
    count: usize,
) -> Result<wgpu::Buffer> {
    let bytes = (count.max(1) * std::mem::size_of::<T>()) as u64;
    ctx.check_binding_size(label, bytes)?;
    Ok(ctx.device.create_buffer(&wgpu::BufferDescriptor {
        label: Some(label),
        size: bytes.next_multiple_of(4),
        usage: STORAGE_RW,
        mapped_at_creation: false,
    }))
}

/// Reads buffers back to the host through staging buffers that are reused, so repeated
/// read-backs allocate nothing on the device. A read-back is a copy into a staging buffer in a
/// submission of its own and its mapping ([`Readback::start`]); waiting for that submission
/// alone ([`PendingCopy::wait`]) lets work submitted after it run meanwhile. Each pending copy
/// owns its staging buffer until it is finished.
#[derive(Default)]
pub struct Readback {
    free: Vec<wgpu::Buffer>,
}

impl Readback {
    pub fn new() -> Self {
        Readback::default()
    }

    /// Queue a copy of `bytes` bytes at byte `offset` of `src` behind the work submitted so
    /// far, and its mapping.
    pub fn start(
        &mut self,
        ctx: &GpuContext,
        src: &wgpu::Buffer,
        offset: u64,
        bytes: u64,
    ) -> Result<PendingCopy> {
        self.start_after(ctx, Vec::new(), src, offset, bytes)
    }

    /// [`Readback::start`] with the copy in one submission after `work` (command buffers not
    /// yet submitted): a submission less (each costs the host about 17 µs, SUBMIT_LAUNCHES).
    pub fn start_after(
        &mut self,
        ctx: &GpuContext,
        work: Vec<wgpu::CommandBuffer>,
        src: &wgpu::Buffer,
        offset: u64,
        bytes: u64,
    ) -> Result<PendingCopy> {
        let copy_bytes = staged_bytes(bytes);
        if offset + copy_bytes > src.size() {
            // The work runs whatever becomes of its read-back.
            ctx.queue.submit(work);
            return Err(Error::Gpu(format!(
                "read-back of {copy_bytes} bytes at offset {offset} exceeds buffer size {}",
                src.size()
            )));
        }
        let staging = match self.free.iter().position(|b| b.size() >= copy_bytes) {
            Some(k) => self.free.swap_remove(k),
            None => staging_buffer(ctx, copy_bytes),
        };
        let mut enc = ctx
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("readback"),
            });
        enc.copy_buffer_to_buffer(src, offset, &staging, 0, copy_bytes);
        let index = ctx
            .queue
            .submit(work.into_iter().chain(std::iter::once(enc.finish())));
        let (tx, mapped) = std::sync::mpsc::channel();
        staging
            .slice(0..copy_bytes)
            .map_async(wgpu::MapMode::Read, move |r| {
                let _ = tx.send(r);
            });
        Ok(PendingCopy {
            staging,
            bytes,
            copy_bytes,
            index,
            mapped,
        })
    }

    /// Take back the staging buffer of a finished copy for later read-backs.
    pub fn recycle(&mut self, staging: wgpu::Buffer) {
        self.free.push(staging);
    }

    /// Copy `count` elements of `T` starting at element `first` of `src` to the host (waits
    /// for the work submitted before).
    pub fn read<T: bytemuck::Pod>(
        &mut self,
        ctx: &GpuContext,
        src: &wgpu::Buffer,
        first: usize,
        count: usize,
    ) -> Result<Vec<T>> {
        let size = std::mem::size_of::<T>();
        if count == 0 {
            return Ok(Vec::new());
        }
        let pending = self.start(ctx, src, (first * size) as u64, (count * size) as u64)?;
        let (data, staging) = pending.wait(ctx)?;
        self.recycle(staging);
        Ok(data)
    }

    /// Read a whole buffer of `T`.
    pub fn read_all<T: bytemuck::Pod>(
        &mut self,
        ctx: &GpuContext,
        src: &wgpu::Buffer,
        count: usize,
    ) -> Result<Vec<T>> {
        self.read(ctx, src, 0, count)
    }
}

/// Bytes a staging buffer copies for a read-back of `bytes` (the copy alignment, at least one
/// word).
fn staged_bytes(bytes: u64) -> u64 {
    bytes.next_multiple_of(wgpu::COPY_BUFFER_ALIGNMENT).max(4)
}

fn staging_buffer(ctx: &GpuContext, bytes: u64) -> wgpu::Buffer {
    ctx.device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("readback staging"),
        size: bytes,
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    })
}

/// A copy to the host queued behind the work submitted before it ([`Readback::start`]).
pub struct PendingCopy {
    staging: wgpu::Buffer,
    /// The bytes asked for, and those copied and mapped (a multiple of 4).
    bytes: u64,
    copy_bytes: u64,
    index: wgpu::SubmissionIndex,
    mapped: std::sync::mpsc::Receiver<std::result::Result<(), wgpu::BufferAsyncError>>,
}

impl PendingCopy {
    /// Wait for this copy's submission alone (not for work submitted after it): its bytes as
    /// `T`s, and its staging buffer for [`Readback::recycle`].
    pub fn wait<T: bytemuck::Pod>(self, ctx: &GpuContext) -> Result<(Vec<T>, wgpu::Buffer)> {
        let mut outcome = None;
        ctx.wait_for(&self.index, || {
            outcome = self.mapped.try_recv().ok();
            outcome.is_some()
        })?;
        let outcome = match outcome {
            Some(o) => o,
            None => self
                .mapped
                .recv()
                .map_err(|_| Error::Gpu("read-back callback dropped".into()))?,
        };
        outcome.map_err(|e| Error::Gpu(format!("buffer map failed: {e}")))?;
        let data = {
            let view = self
                .staging
                .slice(0..self.copy_bytes)
                .get_mapped_range()
                .map_err(|e| Error::Gpu(format!("buffer map range failed: {e}")))?;
            bytemuck::cast_slice::<u8, T>(&view[..self.bytes as usize]).to_vec()
        };
        self.staging.unmap();
        Ok((data, self.staging))
    }
}
