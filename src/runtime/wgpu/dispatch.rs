//! Dispatch geometry on wgpu: 2D workgroup grids past the per-dimension limit, and the layout
//! of the item range every kernel binds at group 1 through a dynamic uniform offset (so one
//! uniform buffer holds every launch's range of a plan).

use crate::error::{Error, Result};
use crate::runtime::RangeRecord;

/// Workgroup grid (x, y) covering `threads` threads of `wg` each, spilling into y once x would
/// exceed `max_per_dim` (65535 on most adapters). Threads past `threads` must exit early.
pub fn grid_for(threads: u32, wg: u32, max_per_dim: u32) -> Result<(u32, u32)> {
    let groups = threads.div_ceil(wg);
    if groups <= max_per_dim {
        return Ok((groups.max(1), 1));
    }
    let x = max_per_dim;
    let y = groups.div_ceil(x);
    if y > max_per_dim {
        return Err(Error::Gpu(format!(
            "{threads} threads need {groups} workgroups, more than {max_per_dim}^2"
        )));
    }
    Ok((x, y))
}

/// The bind group layout of group 1 (the item range with the kernel's capacity, a
/// [`RangeRecord`]) shared by all per-range kernels.
pub fn range_layout(device: &wgpu::Device) -> wgpu::BindGroupLayout {
    device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
        label: Some("item range"),
        entries: &[wgpu::BindGroupLayoutEntry {
            binding: 0,
            visibility: wgpu::ShaderStages::COMPUTE,
            ty: wgpu::BindingType::Buffer {
                ty: wgpu::BufferBindingType::Uniform,
                has_dynamic_offset: true,
                min_binding_size: wgpu::BufferSize::new(std::mem::size_of::<RangeRecord>() as u64),
            },
            count: None,
        }],
    })
}
