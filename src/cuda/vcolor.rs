//! GPU speculative greedy vertex coloring on CUDA: the twin of
//! [`crate::color::gpu_vertices::color_vertices_gpu`] (see its module doc for the algorithm)
//! with the CUDA kernels `vcolor_assign`, `vcolor_detect`, `vcolor_compact` and
//! `vcolor_recolor`, and the worklist compacted by [`CudaPrefixSum`].

use super::kernels::CudaPrefixSum;
use super::{driver_err, item_range, launch_for, CudaDevice};
use crate::color::gpu_vertices::{
    round_cap, shift_classes, vertex_classes, GpuColoringVariant, GpuVertexColoring, IG_PASSES,
};
use crate::error::{Error, Result};
use crate::gpu::dispatch::ItemRange;
use crate::mesh::Csr;
use cudarc::driver::{CudaFunction, CudaSlice, PushKernelArg};
use std::time::Instant;

/// The graph and the kernels of one coloring.
struct Kernels {
    assign: CudaFunction,
    detect: CudaFunction,
    compact: CudaFunction,
    recolor: CudaFunction,
}

/// Color the graph `adj` on the CUDA device. `class[v]` (optional) separates vertex classes.
/// Same results contract as the wgpu version: colors 0-based, classes in disjoint ranges.
pub fn color_vertices_cuda(
    dev: &CudaDevice,
    adj: &Csr,
    class: Option<&[u32]>,
    variant: GpuColoringVariant,
) -> Result<GpuVertexColoring> {
    let n = adj.num_rows();
    let Some(classes) = vertex_classes(n, class)? else {
        return Ok(GpuVertexColoring::empty());
    };
    let k = Kernels {
        assign: dev.function("vcolor_assign", "vcolor_assign", &[])?,
        detect: dev.function("vcolor_detect", "vcolor_detect", &[])?,
        compact: dev.function("vcolor_compact", "vcolor_compact", &[])?,
        recolor: dev.function("vcolor_recolor", "vcolor_recolor", &[])?,
    };
    let n32 = n as u32;
    let stream = dev.stream();
    let up = |what: &'static str| driver_err(what);
    let offsets = stream.clone_htod(&adj.offsets).map_err(up("upload"))?;
    // A graph without edges still needs a non-empty buffer.
    let adjacency = if adj.indices.is_empty() {
        stream.alloc_zeros::<u32>(1).map_err(up("alloc"))?
    } else {
        stream.clone_htod(&adj.indices).map_err(up("upload"))?
    };
    let class_buf = stream.clone_htod(&classes).map_err(up("upload"))?;
    let identity: Vec<u32> = (0..n32).collect();
    let work = [
        stream.clone_htod(&identity).map_err(up("upload"))?,
        stream.alloc_zeros::<u32>(n).map_err(up("alloc"))?,
    ];
    let mut colors = stream.alloc_zeros::<u32>(n).map_err(up("alloc"))?;
    let conflict = stream.alloc_zeros::<u32>(n).map_err(up("alloc"))?;
    let position = stream.alloc_zeros::<u32>(n).map_err(up("alloc"))?;
    let scan = CudaPrefixSum::new(dev, n32)?;
    // Worklist length on the device, as the kernels read it (the twin of the wgpu version's
    // GPU-side length; here the host still syncs once per round, which costs little on CUDA).
    let mut live = stream.clone_htod(&[n32]).map_err(up("upload"))?;

    let start = Instant::now();
    let mut count = n32;
    let mut dir = 0usize;
    let mut conflicts_per_round = Vec::new();
    loop {
        if conflicts_per_round.len() >= round_cap(n) {
            return Err(Error::Gpu(format!(
                "GPU vertex coloring did not converge in {} rounds",
                conflicts_per_round.len()
            )));
        }
        let (cur, next) = (&work[dir], &work[1 - dir]);
        let range = item_range(0, count);
        let cfg = launch_for(count);
        let mut b = stream.launch_builder(&k.assign);
        b.arg(&offsets)
            .arg(&adjacency)
            .arg(&class_buf)
            .arg(cur)
            .arg(&colors)
            .arg(&live)
            .arg(&range);
        // SAFETY: vcolor_assign(offsets, adjacency, class, worklist, colors, live, ItemRange);
        // the worklist holds `count` vertex numbers < n.
        unsafe { b.launch(cfg) }.map_err(up("launch vcolor_assign"))?;
        let mut b = stream.launch_builder(&k.detect);
        b.arg(&offsets)
            .arg(&adjacency)
            .arg(&class_buf)
            .arg(cur)
            .arg(&colors)
            .arg(&conflict)
            .arg(&live)
            .arg(&range);
        // SAFETY: vcolor_detect(offsets, adjacency, class, worklist, colors, conflict, live,
        // range).
        unsafe { b.launch(cfg) }.map_err(up("launch vcolor_detect"))?;
        // The scan must cover exactly the current worklist: flags past `count` are stale.
        scan.launch(dev, &conflict, &position, count)?;
        let mut b = stream.launch_builder(&k.compact);
        b.arg(cur)
            .arg(&conflict)
            .arg(&position)
            .arg(next)
            .arg(&colors)
            .arg(&live)
            .arg(&range);
        // SAFETY: vcolor_compact(worklist, conflict, position, next_worklist, colors, live,
        // range).
        unsafe { b.launch(cfg) }.map_err(up("launch vcolor_compact"))?;
        let total = stream
            .clone_dtoh(scan.total())
            .map_err(up("read conflicts (a kernel failed?)"))?;
        dev.synchronize()?;
        let conflicts = total[0];
        conflicts_per_round.push(conflicts);
        if conflicts == 0 {
            break;
        }
        if variant == GpuColoringVariant::Data {
            count = conflicts;
            dir = 1 - dir;
            stream
                .memcpy_dtod(scan.total(), &mut live)
                .map_err(up("copy worklist length"))?;
        }
    }
    // First fit never exceeds max degree + 1, which bounds the recoloring launches without
    // reading the colors back (launches for unused colors match no vertex).
    let top = (0..n).map(|v| adj.row(v).len() as u32).max().unwrap_or(0) + 1;
    let mut old_colors = stream.alloc_zeros::<u32>(n).map_err(up("alloc"))?;
    iterated_greedy(
        dev,
        &k.recolor,
        [&offsets, &adjacency, &class_buf],
        &mut colors,
        &mut old_colors,
        n32,
        top,
    )?;
    let raw = stream
        .clone_dtoh(&colors)
        .map_err(up("read colors (a kernel failed?)"))?;
    dev.synchronize()?;
    let seconds = start.elapsed().as_secs_f64();
    let (colors, num_colors) = shift_classes(&raw, &classes);
    Ok(GpuVertexColoring {
        colors,
        num_colors,
        rounds: conflicts_per_round.len(),
        conflicts_per_round,
        seconds,
    })
}

/// [`IG_PASSES`] iterated-greedy passes (Culberson): save the colors, clear them, then recolor
/// the old color classes one after another, highest first, one `vcolor_recolor` launch each
/// over all vertices.
fn iterated_greedy(
    dev: &CudaDevice,
    recolor: &CudaFunction,
    graph: [&CudaSlice<u32>; 3],
    colors: &mut CudaSlice<u32>,
    old_colors: &mut CudaSlice<u32>,
    n: u32,
    top: u32,
) -> Result<()> {
    let stream = dev.stream();
    let [offsets, adjacency, class] = graph;
    for _ in 0..IG_PASSES {
        stream
            .memcpy_dtod(colors, old_colors)
            .map_err(driver_err("copy colors"))?;
        stream
            .memset_zeros(colors)
            .map_err(driver_err("clear colors"))?;
        for i in 0..top {
            let range = ItemRange {
                first: 0,
                count: n,
                color: top - i,
                pad: 0,
            };
            let mut b = stream.launch_builder(recolor);
            b.arg(offsets)
                .arg(adjacency)
                .arg(class)
                .arg(&*old_colors)
                .arg(&*colors)
                .arg(&range);
            // SAFETY: vcolor_recolor(offsets, adjacency, class, old_colors, colors, range).
            unsafe { b.launch(launch_for(n)) }.map_err(driver_err("launch vcolor_recolor"))?;
        }
    }
    Ok(())
}
