//! GPU speculative greedy vertex coloring (Li et al., "High performance and scalable GPU graph
//! coloring"), in WGSL: `vcolor_assign`, `vcolor_detect`, `vcolor_compact`, with the worklist
//! compacted by the GPU prefix sum of [`crate::gpu::scan`] (no per-element atomics).
//!
//! Each round: (1) every uncolored worklist vertex takes the smallest color unused by its
//! neighbours (speculatively, racing with its neighbours); (2) a vertex that shares its color
//! with a neighbour of higher priority (a hash of the vertex number, ties by number) is
//! flagged; (3) flagged vertices are uncolored and, in the data-driven variant, compacted into
//! the next worklist at their prefix-sum positions. The highest-priority vertex of every
//! conflict keeps its color, so each round colors at least one vertex for good and the loop
//! ends; a round cap turns a bug into an error, not a hang. Hashed priorities keep the number
//! of rounds small on wide GPUs, where most of a round's vertices read stale neighbour colors.
//!
//! Afterwards an iterated-greedy pass (Culberson) recolors the old color classes one by one,
//! each class in one dispatch of `vcolor_recolor` (a color class is an independent set, so
//! there are no races); the speculative rounds typically leave one color more than sequential
//! greedy and this pass takes it back. Timing (`seconds`) covers the rounds, the recoloring
//! and the read-back of the colors, like a host-side coloring that ends with colors in memory.
//!
//! Topology-driven: every round visits all vertices (colored ones return at once).
//! Data-driven: a round visits only the vertices still uncolored.
//!
//! Vertex classes: neighbours of another class are ignored, and class k's colors are shifted
//! past those of classes < k afterwards, so e.g. boundary vertices get color classes of their
//! own. The CPU reference is the sequential greedy coloring; results are verified conflict-free.

use crate::error::{Error, Result};
use crate::gpu::buffers::{bind_buffers, storage_from, storage_layout, storage_zeroed, Readback};
use crate::gpu::context::GpuContext;
use crate::gpu::dispatch::{range_layout, ItemRange, RangeSet};
use crate::gpu::legacy_scan::PrefixSum;
use crate::gpu::shaders::compute_pipeline;
use crate::gpu::Backend;
use crate::mesh::Csr;
use std::time::Instant;

/// Which speculative variant to run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum, serde::Serialize)]
pub enum GpuColoringVariant {
    /// Every round visits all vertices.
    Topology,
    /// Every round visits the compacted worklist of uncolored vertices.
    Data,
}

/// Result of a GPU vertex coloring.
#[derive(Clone, Debug)]
pub struct GpuVertexColoring {
    /// 0-based color of each vertex; classes occupy disjoint color ranges.
    pub colors: Vec<u32>,
    pub num_colors: usize,
    /// Rounds of assign / detect / compact.
    pub rounds: usize,
    /// Conflicts found in each round.
    pub conflicts_per_round: Vec<u32>,
    /// Wall time of the rounds (uploads excluded, per-round count read-backs included).
    pub seconds: f64,
}

/// Iterated-greedy recoloring passes after the speculative coloring (never adds colors; one
/// pass took the extra speculative color back on every mesh measured, the second is cheap).
pub(crate) const IG_PASSES: usize = 2;

/// Speculative rounds recorded per submit: the host reads the conflict counts once per submit
/// (rounds after the last conflict find nothing to do). A read-back per round cost more than
/// the rounds themselves on Vulkan.
const ROUNDS_PER_SUBMIT: usize = 4;

impl GpuVertexColoring {
    /// The coloring of a graph without vertices.
    pub fn empty() -> Self {
        GpuVertexColoring {
            colors: Vec::new(),
            num_colors: 0,
            rounds: 0,
            conflicts_per_round: Vec::new(),
            seconds: 0.0,
        }
    }
}

/// Per-vertex classes (all 0 when none are given), checked against the vertex count; `None`
/// for an empty graph. Shared by the wgpu and CUDA versions.
pub(crate) fn vertex_classes(n: usize, class: Option<&[u32]>) -> Result<Option<Vec<u32>>> {
    if n == 0 {
        return Ok(None);
    }
    match class {
        Some(c) if c.len() == n => Ok(Some(c.to_vec())),
        Some(c) => Err(Error::Invalid(format!(
            "vertex classes have {} entries but the graph has {n} vertices",
            c.len()
        ))),
        None => Ok(Some(vec![0; n])),
    }
}

/// More rounds than any graph of this size can need means a bug: stop with an error.
pub(crate) fn round_cap(n: usize) -> usize {
    n + 64
}

/// Color the graph `adj` on `backend`: the wgpu kernels of [`color_vertices_gpu`] or their
/// CUDA twins (`crate::cuda::vcolor`, feature `cuda`). `class[v]` (optional) separates vertex
/// classes.
pub fn color_vertices_on(
    backend: &Backend,
    adj: &Csr,
    class: Option<&[u32]>,
    variant: GpuColoringVariant,
) -> Result<GpuVertexColoring> {
    match crate::gpu::legacy(backend) {
        crate::gpu::Device::Wgpu(ctx) => color_vertices_gpu(ctx, adj, class, variant),
        #[cfg(feature = "cuda")]
        crate::gpu::Device::Cuda(dev) => {
            crate::cuda::vcolor::color_vertices_cuda(dev, adj, class, variant)
        }
    }
}

/// Color the graph `adj` on the GPU. `class[v]` (optional) separates vertex classes.
pub fn color_vertices_gpu(
    ctx: &GpuContext,
    adj: &Csr,
    class: Option<&[u32]>,
    variant: GpuColoringVariant,
) -> Result<GpuVertexColoring> {
    let n = adj.num_rows();
    let Some(classes) = vertex_classes(n, class)? else {
        return Ok(GpuVertexColoring::empty());
    };
    let n32 = n as u32;
    let offsets_buf = storage_from(ctx, "adjacency offsets", &adj.offsets)?;
    let adj_buf = storage_from(ctx, "adjacency", &adj.indices)?;
    let class_buf = storage_from(ctx, "vertex classes", &classes)?;
    let identity: Vec<u32> = (0..n32).collect();
    let work = [
        storage_from(ctx, "worklist a", &identity)?,
        storage_zeroed::<u32>(ctx, "worklist b", n)?,
    ];
    let colors_buf = storage_zeroed::<u32>(ctx, "colors", n)?;
    let conflict_buf = storage_zeroed::<u32>(ctx, "conflict flags", n)?;
    let position_buf = storage_zeroed::<u32>(ctx, "worklist positions", n)?;
    // Current worklist length, kept on the GPU between the rounds of one submit, and the
    // conflict count of each round of a submit, read back once per submit.
    let live_buf = storage_from(ctx, "live worklist length", &[n32])?;
    let log_buf = storage_zeroed::<u32>(ctx, "conflicts per round", ROUNDS_PER_SUBMIT)?;

    let assign_layout = storage_layout(
        &ctx.device,
        "vcolor assign",
        &[true, true, true, true, false, true],
    );
    let detect_layout = storage_layout(
        &ctx.device,
        "vcolor detect",
        &[true, true, true, true, true, false, true],
    );
    let compact_layout = storage_layout(
        &ctx.device,
        "vcolor compact",
        &[true, true, true, false, false, true],
    );
    let recolor_layout = storage_layout(
        &ctx.device,
        "vcolor recolor",
        &[true, true, true, true, false],
    );
    let rl = range_layout(&ctx.device);
    let assign = compute_pipeline(&ctx.device, "vcolor_assign", &[&assign_layout, &rl], &[])?;
    let detect = compute_pipeline(&ctx.device, "vcolor_detect", &[&detect_layout, &rl], &[])?;
    let compact = compute_pipeline(&ctx.device, "vcolor_compact", &[&compact_layout, &rl], &[])?;
    // Bind groups for both worklist directions: d = 0 reads work[0] and writes work[1].
    let groups: Vec<[wgpu::BindGroup; 3]> = (0..2)
        .map(|d| {
            let (cur, next) = (&work[d], &work[1 - d]);
            [
                bind_buffers(
                    &ctx.device,
                    "vcolor assign",
                    &assign_layout,
                    &[
                        &offsets_buf,
                        &adj_buf,
                        &class_buf,
                        cur,
                        &colors_buf,
                        &live_buf,
                    ],
                ),
                bind_buffers(
                    &ctx.device,
                    "vcolor detect",
                    &detect_layout,
                    &[
                        &offsets_buf,
                        &adj_buf,
                        &class_buf,
                        cur,
                        &colors_buf,
                        &conflict_buf,
                        &live_buf,
                    ],
                ),
                bind_buffers(
                    &ctx.device,
                    "vcolor compact",
                    &compact_layout,
                    &[
                        cur,
                        &conflict_buf,
                        &position_buf,
                        next,
                        &colors_buf,
                        &live_buf,
                    ],
                ),
            ]
        })
        .collect();
    let mut scan = PrefixSum::new(ctx, &conflict_buf, &position_buf, n32)?;
    let mut ranges = RangeSet::single(ctx, &rl, n32)?;
    let mut readback = Readback::new();

    // Recoloring resources are made before the clock starts, like the round resources.
    // First fit never exceeds max degree + 1, which bounds the recoloring dispatches without
    // reading the colors back (dispatches for unused colors match no vertex).
    let top = (0..n).map(|v| adj.row(v).len() as u32).max().unwrap_or(0) + 1;
    let old_colors = storage_zeroed::<u32>(ctx, "old colors", n)?;
    let recolor_group = bind_buffers(
        &ctx.device,
        "vcolor recolor",
        &recolor_layout,
        &[&offsets_buf, &adj_buf, &class_buf, &old_colors, &colors_buf],
    );
    let recolor = compute_pipeline(&ctx.device, "vcolor_recolor", &[&recolor_layout, &rl], &[])?;
    let ig_ranges = RangeSet::new(
        ctx,
        &rl,
        (0..top)
            .map(|i| ItemRange {
                first: 0,
                count: n32,
                color: top - i,
                pad: 0,
            })
            .collect(),
    )?;
    readback.reserve(ctx, 4 * n as u64);
    let start = Instant::now();
    // Threads dispatched per round: the worklist length the host last saw (the GPU-side
    // length can only be smaller; the kernels stop at it).
    let mut count = n32;
    let mut dir = 0usize;
    let mut conflicts_per_round = Vec::new();
    'batches: loop {
        if conflicts_per_round.len() >= round_cap(n) {
            return Err(Error::Gpu(format!(
                "GPU vertex coloring did not converge in {} rounds",
                conflicts_per_round.len()
            )));
        }
        ranges.update(
            ctx,
            vec![ItemRange {
                first: 0,
                count,
                color: 0,
                pad: 0,
            }],
        )?;
        scan.set_count(ctx, count)?;
        let mut enc = ctx
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("vcolor rounds"),
            });
        for r in 0..ROUNDS_PER_SUBMIT {
            {
                let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
                    label: Some("vcolor round"),
                    timestamp_writes: None,
                });
                let g = &groups[(dir + r) % 2];
                ranges.dispatch_one(ctx, &mut pass, &assign, &g[0], 0)?;
                ranges.dispatch_one(ctx, &mut pass, &detect, &g[1], 0)?;
                scan.record(ctx, &mut pass)?;
                ranges.dispatch_one(ctx, &mut pass, &compact, &g[2], 0)?;
            }
            enc.copy_buffer_to_buffer(scan.total(), 0, &log_buf, 4 * r as u64, 4);
            if variant == GpuColoringVariant::Data {
                enc.copy_buffer_to_buffer(scan.total(), 0, &live_buf, 0, 4);
            }
        }
        ctx.queue.submit([enc.finish()]);
        let log: Vec<u32> = readback.read_all(ctx, &log_buf, ROUNDS_PER_SUBMIT)?;
        for &conflicts in &log {
            conflicts_per_round.push(conflicts);
            if conflicts == 0 {
                break 'batches;
            }
        }
        if variant == GpuColoringVariant::Data {
            count = *log.last().expect("rounds per submit > 0");
            dir = (dir + ROUNDS_PER_SUBMIT) % 2;
        }
    }
    let parts = IgParts {
        recolor: &recolor,
        data: &recolor_group,
        colors: &colors_buf,
        old_colors: &old_colors,
        ranges: &ig_ranges,
    };
    let mut enc = ctx
        .device
        .create_command_encoder(&wgpu::CommandEncoderDescriptor {
            label: Some("vcolor iterated greedy"),
        });
    let rounds_done = start.elapsed().as_secs_f64();
    record_iterated_greedy(ctx, &mut enc, &parts, top, IG_PASSES)?;
    ctx.queue.submit([enc.finish()]);
    ctx.wait()?;
    let recolored = start.elapsed().as_secs_f64();
    let raw: Vec<u32> = readback.read_all(ctx, &colors_buf, n)?;
    let seconds = start.elapsed().as_secs_f64();
    log::debug!(
        "GPU vertex coloring: rounds {:.2} ms, recoloring {:.2} ms, read-back {:.2} ms",
        rounds_done * 1e3,
        (recolored - rounds_done) * 1e3,
        (seconds - recolored) * 1e3
    );
    let (colors, num_colors) = shift_classes(&raw, &classes);
    Ok(GpuVertexColoring {
        colors,
        num_colors,
        rounds: conflicts_per_round.len(),
        conflicts_per_round,
        seconds,
    })
}

/// Record `passes` iterated-greedy passes (Culberson): save the colors, clear them, then
/// recolor the old color classes one after another, highest first, one `vcolor_recolor`
/// dispatch each over all vertices (see the kernel). No host work between passes: old colors
/// above the current maximum simply match no vertex.
fn record_iterated_greedy(
    ctx: &GpuContext,
    enc: &mut wgpu::CommandEncoder,
    parts: &IgParts<'_>,
    top: u32,
    passes: usize,
) -> Result<()> {
    let bytes = parts.colors.size();
    for _ in 0..passes {
        enc.copy_buffer_to_buffer(parts.colors, 0, parts.old_colors, 0, bytes);
        enc.clear_buffer(parts.colors, 0, None);
        let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: Some("vcolor iterated greedy"),
            timestamp_writes: None,
        });
        for i in 0..top as usize {
            parts
                .ranges
                .dispatch_one(ctx, &mut pass, parts.recolor, parts.data, i)?;
        }
    }
    Ok(())
}

/// Buffers and pipeline the iterated-greedy passes use.
struct IgParts<'a> {
    recolor: &'a wgpu::ComputePipeline,
    data: &'a wgpu::BindGroup,
    colors: &'a wgpu::Buffer,
    old_colors: &'a wgpu::Buffer,
    /// Range i covers all vertices with `color` = top - i.
    ranges: &'a RangeSet,
}

/// Turn per-class 1-based colors into global 0-based colors with class k's range after the
/// ranges of classes < k. Returns the colors and the number of colors used.
pub(crate) fn shift_classes(raw: &[u32], classes: &[u32]) -> (Vec<u32>, usize) {
    let nclass = classes.iter().copied().max().map_or(0, |m| m as usize + 1);
    let mut max_per_class = vec![0u32; nclass];
    for (&c, &k) in raw.iter().zip(classes) {
        max_per_class[k as usize] = max_per_class[k as usize].max(c);
    }
    let mut base = vec![0u32; nclass];
    for k in 1..nclass {
        base[k] = base[k - 1] + max_per_class[k - 1];
    }
    let colors = raw
        .iter()
        .zip(classes)
        .map(|(&c, &k)| base[k as usize] + c - 1)
        .collect();
    (colors, max_per_class.iter().sum::<u32>() as usize)
}

#[cfg(test)]
mod tests {
    use super::shift_classes;

    #[test]
    fn classes_get_disjoint_color_ranges() {
        let (c, n) = shift_classes(&[1, 2, 1, 2, 3], &[0, 0, 1, 1, 1]);
        assert_eq!(c, vec![0, 1, 2, 3, 4]);
        assert_eq!(n, 5);
    }
}
