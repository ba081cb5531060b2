//! Green–Gauss cell gradients by colored edge scatter (`shaders/green_gauss_gradient.wgsl`),
//! the smallest complete use of the per-color machinery, and its f64 CPU reference.
//!
//! Area-weighted gradient of cell i: G_i = sum_{faces f of i} u_f n_f l_f with
//! u_f = (u_L + u_R) / 2 on interior faces and u_f = u_L on boundary faces, n_f the unit normal
//! pointing out of i; grad u_i = G_i / A_i. Exact for linear u on cells with no boundary face.

use crate::args;
use crate::error::{Error, Result};
use crate::mesh::{Geometry2d, Topology, NO_ELEMENT};
use crate::runtime::{ItemRange, Kernel, PlanBuilder, Runtime};

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

/// The compiled gradient kernel (WGSL only: it has no CUDA twin, being the smallest test of
/// the per-color machinery rather than a solver kernel).
pub struct GradientKernel {
    kernel: Kernel,
}

impl GradientKernel {
    pub fn new(rt: &Runtime) -> Result<GradientKernel> {
        Ok(GradientKernel {
            kernel: rt.kernel("green_gauss_gradient", &[])?,
        })
    }

    /// Area-weighted gradients of `values` with edges grouped by color: edges
    /// `color_offsets[c] .. color_offsets[c + 1]` have color c and share no cell.
    pub fn run(
        &self,
        rt: &Runtime,
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
        let edge_buf = rt.upload("edges", edges)?;
        let value_buf = rt.upload("cell values", values)?;
        let grad_buf = rt.zeroed::<[f32; 2]>("weighted gradient", values.len())?;
        let mut plan = PlanBuilder::new();
        plan.launch_ranges(
            &self.kernel,
            &args![edge_buf, value_buf, grad_buf],
            &ItemRange::per_color(color_offsets)?,
        );
        rt.run(&rt.prepare(&plan)?, 1)?;
        rt.read(&grad_buf, 0, values.len())
    }
}
