//! Green–Gauss cell gradients by colored edge scatter (`shaders/green_gauss_gradient.wgsl`),
//! the smallest complete use of the per-color machinery, and its f64 CPU reference.
//!
//! Area-weighted gradient of cell i: G_i = sum_{faces f of i} u_f n_f l_f with
//! u_f = (u_L + u_R) / 2 on interior faces and u_f = u_L on boundary faces, n_f the unit normal
//! pointing out of i; grad u_i = G_i / A_i. Exact for linear u on cells with no boundary face.

use crate::error::{Error, Result};
use crate::gpu::buffers::{bind_buffers, storage_from, storage_layout, storage_zeroed, Readback};
use crate::gpu::context::GpuContext;
use crate::gpu::dispatch::{range_layout, RangeSet};
use crate::gpu::shaders::compute_pipeline;
use crate::mesh::{Geometry2d, Topology, NO_ELEMENT};

/// One edge as the edge kernels read it (mirrors `Edge` in the WGSL kernel).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct GpuEdge {
    pub left: u32,
    pub right: u32,
    pub nx: f32,
    pub ny: f32,
    pub length: f32,
    pub pad: [u32; 3],
}

/// Edges in the given face order (e.g. grouped by color), as the GPU reads them.
pub fn gpu_edges(topo: &Topology, geom: &Geometry2d, face_order: &[u32]) -> Vec<GpuEdge> {
    face_order
        .iter()
        .map(|&f| {
            let f = f as usize;
            GpuEdge {
                left: topo.left[f],
                right: topo.right[f],
                nx: geom.normals[f][0] as f32,
                ny: geom.normals[f][1] as f32,
                length: geom.lengths[f] as f32,
                pad: [0; 3],
            }
        })
        .collect()
}

/// CPU reference: area-weighted gradients G_i (see module doc), f64.
pub fn weighted_gradient_cpu(topo: &Topology, geom: &Geometry2d, values: &[f64]) -> Vec<[f64; 2]> {
    let mut g = vec![[0.0; 2]; values.len()];
    for f in 0..topo.num_faces() {
        let (l, r) = (topo.left[f] as usize, topo.right[f]);
        let uf = if r == NO_ELEMENT {
            values[l]
        } else {
            0.5 * (values[l] + values[r as usize])
        };
        let [nx, ny] = geom.normals[f];
        let s = uf * geom.lengths[f];
        g[l][0] += s * nx;
        g[l][1] += s * ny;
        if r != NO_ELEMENT {
            g[r as usize][0] -= s * nx;
            g[r as usize][1] -= s * ny;
        }
    }
    g
}

/// The compiled gradient kernel.
pub struct GradientKernel {
    pipeline: wgpu::ComputePipeline,
    data_layout: wgpu::BindGroupLayout,
    range_layout: wgpu::BindGroupLayout,
}

impl GradientKernel {
    pub fn new(ctx: &GpuContext) -> Result<GradientKernel> {
        let data_layout = storage_layout(&ctx.device, "gradient data", &[true, true, false]);
        let range_layout = range_layout(&ctx.device);
        let pipeline = compute_pipeline(
            &ctx.device,
            "green_gauss_gradient",
            &[&data_layout, &range_layout],
            &[],
        )?;
        Ok(GradientKernel {
            pipeline,
            data_layout,
            range_layout,
        })
    }

    /// Area-weighted gradients of `values` with edges grouped by color: edges
    /// `color_offsets[c] .. color_offsets[c + 1]` have color c and share no cell.
    pub fn run(
        &self,
        ctx: &GpuContext,
        edges: &[GpuEdge],
        color_offsets: &[u32],
        values: &[f32],
    ) -> Result<Vec<[f32; 2]>> {
        if color_offsets.last().copied() != Some(edges.len() as u32) {
            return Err(Error::Invalid(format!(
                "color offsets end at {:?} but there are {} edges",
                color_offsets.last(),
                edges.len()
            )));
        }
        let edge_buf = storage_from(ctx, "edges", edges)?;
        let value_buf = storage_from(ctx, "cell values", values)?;
        let grad_buf = storage_zeroed::<[f32; 2]>(ctx, "weighted gradient", values.len())?;
        let data = bind_buffers(
            &ctx.device,
            "gradient data",
            &self.data_layout,
            &[&edge_buf, &value_buf, &grad_buf],
        );
        let ranges = RangeSet::from_offsets(ctx, &self.range_layout, color_offsets)?;
        let mut enc = ctx
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("gradient"),
            });
        {
            let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("gradient"),
                timestamp_writes: None,
            });
            ranges.dispatch_all(ctx, &mut pass, &self.pipeline, &data)?;
        }
        ctx.queue.submit([enc.finish()]);
        Readback::new().read_all(ctx, &grad_buf, values.len())
    }
}
