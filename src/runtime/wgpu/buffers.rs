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

/// Reads buffers back to the host through one staging buffer that grows as needed and is
/// reused, so repeated read-backs allocate nothing on the device.
pub struct Readback {
    staging: Option<wgpu::Buffer>,
}

impl Default for Readback {
    fn default() -> Self {
        Self::new()
    }
}

impl Readback {
    pub fn new() -> Self {
        Readback { staging: None }
    }

    /// Make sure the staging buffer holds at least `bytes`, so a timed read-back later does not
    /// include allocating it.
    pub fn reserve(&mut self, ctx: &GpuContext, bytes: u64) {
        let bytes = bytes.next_multiple_of(wgpu::COPY_BUFFER_ALIGNMENT).max(4);
        if self.staging.as_ref().is_none_or(|b| b.size() < bytes) {
            self.staging = Some(ctx.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("readback staging"),
                size: bytes,
                usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            }));
        }
    }

    /// Copy `count` elements of `T` starting at element `first` of `src` to the host.
    pub fn read<T: bytemuck::Pod>(
        &mut self,
        ctx: &GpuContext,
        src: &wgpu::Buffer,
        first: usize,
        count: usize,
    ) -> Result<Vec<T>> {
        let size = std::mem::size_of::<T>();
        let bytes = (count * size) as u64;
        if bytes == 0 {
            return Ok(Vec::new());
        }
        let copy_bytes = bytes.next_multiple_of(wgpu::COPY_BUFFER_ALIGNMENT);
        let offset = (first * size) as u64;
        if offset + copy_bytes > src.size() {
            return Err(Error::Gpu(format!(
                "read-back of {copy_bytes} bytes at offset {offset} exceeds buffer size {}",
                src.size()
            )));
        }
        self.reserve(ctx, copy_bytes);
        let staging = self.staging.as_ref().expect("staging buffer created above");
        let mut enc = ctx
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("readback"),
            });
        enc.copy_buffer_to_buffer(src, offset, staging, 0, copy_bytes);
        ctx.queue.submit([enc.finish()]);
        let slice = staging.slice(0..copy_bytes);
        let (tx, rx) = std::sync::mpsc::channel();
        slice.map_async(wgpu::MapMode::Read, move |r| {
            let _ = tx.send(r);
        });
        ctx.wait()?;
        rx.recv()
            .map_err(|_| Error::Gpu("read-back callback dropped".into()))?
            .map_err(|e| Error::Gpu(format!("buffer map failed: {e}")))?;
        let data = {
            let view = slice
                .get_mapped_range()
                .map_err(|e| Error::Gpu(format!("buffer map range failed: {e}")))?;
            bytemuck::cast_slice::<u8, T>(&view[..bytes as usize]).to_vec()
        };
        staging.unmap();
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

/// A copy to the host queued behind the work submitted before it ([`ReadAhead::start`]),
/// waited for alone by [`ReadAhead::finish`].
pub struct PendingCopy {
    staging: wgpu::Buffer,
    /// The bytes asked for, and those copied and mapped (a multiple of 4).
    bytes: u64,
    copy_bytes: u64,
    index: wgpu::SubmissionIndex,
    mapped: std::sync::mpsc::Receiver<std::result::Result<(), wgpu::BufferAsyncError>>,
}

/// Staging buffers of read-backs queued ahead, reused once finished. Each pending copy owns
/// its own (the shared [`Readback`] staging would be remapped under it by a plain read-back).
#[derive(Default)]
pub struct ReadAhead {
    free: Vec<wgpu::Buffer>,
}

impl ReadAhead {
    /// Queue a copy of `bytes` bytes (a multiple of 4) at byte `offset` of `src` behind the
    /// work submitted so far, and its mapping.
    pub fn start(
        &mut self,
        ctx: &GpuContext,
        src: &wgpu::Buffer,
        offset: u64,
        bytes: u64,
    ) -> Result<PendingCopy> {
        let copy_bytes = bytes.next_multiple_of(wgpu::COPY_BUFFER_ALIGNMENT).max(4);
        if offset + copy_bytes > src.size() {
            return Err(Error::Gpu(format!(
                "read-back of {copy_bytes} bytes at offset {offset} exceeds buffer size {}",
                src.size()
            )));
        }
        let staging = match self.free.iter().position(|b| b.size() >= copy_bytes) {
            Some(k) => self.free.swap_remove(k),
            None => ctx.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("read-ahead staging"),
                size: copy_bytes,
                usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            }),
        };
        let mut enc = ctx
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("read-ahead"),
            });
        enc.copy_buffer_to_buffer(src, offset, &staging, 0, copy_bytes);
        let index = ctx.queue.submit([enc.finish()]);
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

    /// Wait for `pending`'s submission alone (not for work submitted after it) and return its
    /// bytes as `T`s.
    pub fn finish<T: bytemuck::Pod>(
        &mut self,
        ctx: &GpuContext,
        pending: PendingCopy,
    ) -> Result<Vec<T>> {
        let mut outcome = None;
        ctx.wait_for(&pending.index, || {
            outcome = pending.mapped.try_recv().ok();
            outcome.is_some()
        })?;
        let outcome = match outcome {
            Some(o) => o,
            None => pending
                .mapped
                .recv()
                .map_err(|_| Error::Gpu("read-ahead callback dropped".into()))?,
        };
        outcome.map_err(|e| Error::Gpu(format!("buffer map failed: {e}")))?;
        let data = {
            let view = pending
                .staging
                .slice(0..pending.copy_bytes)
                .get_mapped_range()
                .map_err(|e| Error::Gpu(format!("buffer map range failed: {e}")))?;
            bytemuck::cast_slice::<u8, T>(&view[..pending.bytes as usize]).to_vec()
        };
        pending.staging.unmap();
        self.free.push(pending.staging);
        Ok(data)
    }
}
