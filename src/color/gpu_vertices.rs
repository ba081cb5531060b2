//! GPU speculative greedy vertex coloring (Li et al., "High performance and scalable GPU graph
//! coloring") on the [`Runtime`] (WGSL kernels or their CUDA twins): `vcolor_assign`,
//! `vcolor_detect`, `vcolor_compact`, with the worklist compacted by the prefix sum of
//! [`crate::runtime::scan`] (no per-element atomics).
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
//! Afterwards the color reduction of [`crate::color::reduce`] (iterated greedy class by class,
//! then ejection of the top class, in sweeps while the count drops) takes back the colors the
//! random order of the speculative rounds costs; [`ColorReduction::OFF`] skips it. Timing
//! (`seconds`) covers the rounds, the reduction and the read-back of the colors, like a
//! host-side coloring that ends with colors in memory.
//!
//! Topology-driven: every round visits all vertices (colored ones return at once).
//! Data-driven: a round visits only the vertices still uncolored.
//!
//! Vertex classes: neighbours of another class are ignored, and class k's colors are shifted
//! past those of classes < k afterwards, so e.g. boundary vertices get color classes of their
//! own. The CPU reference is the sequential greedy coloring; results are verified conflict-free.

use crate::args;
use crate::color::reduce::{ColorReducer, ColorReduction, ReductionReport, SubmitWork};
use crate::error::{Error, Result};
use crate::mesh::Csr;
use crate::runtime::scan::PrefixSum;
use crate::runtime::{Buffer, ItemRange, Kernel, Plan, PlanBuilder, Runtime};
use std::time::{Duration, Instant};

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
    /// Wall time of the rounds, the reduction and the read-back of the colors (uploads and
    /// plan preparation excluded, per-submit count read-backs included).
    pub seconds: f64,
    /// The color reduction after the rounds (colors before and after, sweeps, time).
    pub reduction: ReductionReport,
    /// GPU work of the whole coloring: the rounds, the reduction and the read-back of the
    /// colors.
    pub work: SubmitWork,
}

/// Speculative rounds recorded per submit: the host reads the conflict counts once per submit
/// (rounds after the last conflict find nothing to do). A read-back per round cost more than
/// the rounds themselves on Vulkan.
const ROUNDS_PER_SUBMIT: usize = 4;

// Each submit's rounds alternate the two worklists, so every submit starts from the first.
const _: () = assert!(ROUNDS_PER_SUBMIT % 2 == 0);

impl GpuVertexColoring {
    /// The coloring of a graph without vertices.
    pub fn empty() -> Self {
        GpuVertexColoring {
            colors: Vec::new(),
            num_colors: 0,
            rounds: 0,
            conflicts_per_round: Vec::new(),
            seconds: 0.0,
            reduction: ReductionReport::default(),
            work: SubmitWork::default(),
        }
    }
}

/// Per-vertex classes (all 0 when none are given), checked against the vertex count; `None`
/// for an empty graph.
fn vertex_classes(n: usize, class: Option<&[u32]>) -> Result<Option<Vec<u32>>> {
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
fn round_cap(n: usize) -> usize {
    n + 64
}

/// The device side of the speculative rounds of one coloring.
struct Rounds {
    variant: GpuColoringVariant,
    n: u32,
    assign: Kernel,
    detect: Kernel,
    compact: Kernel,
    /// Adjacency offsets, adjacency, vertex classes.
    graph: [Buffer; 3],
    /// Worklists: data-driven round r of a submit reads `work[r % 2]` and compacts into the
    /// other; topology-driven rounds always read `work[0]`, all vertices.
    work: [Buffer; 2],
    colors: Buffer,
    conflict: Buffer,
    position: Buffer,
    /// The worklist length of every topology-driven round: all vertices.
    all: Buffer,
    /// One scan per round of a submit. Its total is the round's conflict count and, in the
    /// data-driven variant, the worklist length the next round reads (round 0 reads the last
    /// scan's, left by the previous submit), so the length never leaves the GPU.
    scans: Vec<PrefixSum>,
    /// Conflict count of each round of a submit (each round's compact launch writes its
    /// own), read back once per submit.
    log: Buffer,
    /// Prepared submits by the item count they dispatch.
    plans: Vec<(u32, Plan)>,
}

impl Rounds {
    fn new(
        rt: &Runtime,
        graph: [Buffer; 3],
        colors: &Buffer,
        variant: GpuColoringVariant,
        n: u32,
    ) -> Result<Rounds> {
        let identity: Vec<u32> = (0..n).collect();
        let conflict = rt.zeroed::<u32>("conflict flags", n as usize)?;
        let position = rt.zeroed::<u32>("worklist positions", n as usize)?;
        let scans = (0..ROUNDS_PER_SUBMIT)
            .map(|_| PrefixSum::new(rt, &conflict, &position, n))
            .collect::<Result<Vec<_>>>()?;
        // The first submit's round 0 sees the whole worklist.
        rt.write(scans[ROUNDS_PER_SUBMIT - 1].total(), 0, &[n])?;
        Ok(Rounds {
            variant,
            n,
            assign: rt.kernel("vcolor_assign", &[])?,
            detect: rt.kernel("vcolor_detect", &[])?,
            compact: rt.kernel("vcolor_compact", &[])?,
            graph,
            work: [
                rt.upload("worklist a", &identity)?,
                rt.zeroed::<u32>("worklist b", n as usize)?,
            ],
            colors: colors.clone(),
            conflict,
            position,
            all: rt.upload("all vertices", &[n])?,
            scans,
            log: rt.zeroed::<u32>("conflicts per round", ROUNDS_PER_SUBMIT)?,
            plans: Vec::new(),
        })
    }

    /// The items a submit dispatches when the worklist holds `count` vertices: the next power
    /// of two (at most n), so a coloring prepares a few submits, not one per worklist length.
    /// The kernels stop at the GPU-side length, which can only be smaller.
    fn dispatched(&self, count: u32) -> u32 {
        match self.variant {
            GpuColoringVariant::Topology => self.n,
            GpuColoringVariant::Data => count.next_power_of_two().min(self.n),
        }
    }

    /// The index in `plans` of the submit that dispatches `items` threads per launch,
    /// prepared on first use.
    fn plan(&mut self, rt: &Runtime, items: u32) -> Result<usize> {
        if let Some(i) = self.plans.iter().position(|(k, _)| *k == items) {
            return Ok(i);
        }
        let [offsets, adjacency, class] = &self.graph;
        let range = ItemRange::all(items);
        let mut p = PlanBuilder::new();
        for r in 0..ROUNDS_PER_SUBMIT {
            let (cur, next, live) = match self.variant {
                GpuColoringVariant::Topology => (&self.work[0], &self.work[1], &self.all),
                GpuColoringVariant::Data => (
                    &self.work[r % 2],
                    &self.work[1 - r % 2],
                    self.scans[(r + ROUNDS_PER_SUBMIT - 1) % ROUNDS_PER_SUBMIT].total(),
                ),
            };
            p.launch(
                &self.assign,
                &args![*offsets, *adjacency, *class, *cur, self.colors, *live],
                range,
            );
            p.launch(
                &self.detect,
                &args![
                    *offsets,
                    *adjacency,
                    *class,
                    *cur,
                    self.colors,
                    self.conflict,
                    *live
                ],
                range,
            );
            // The scan covers exactly the dispatched entries: detect cleared the flags past
            // the live worklist, those past `items` are stale.
            self.scans[r].record_first(&mut p, items)?;
            p.launch(
                &self.compact,
                &args![
                    *cur,
                    self.conflict,
                    self.position,
                    *next,
                    self.colors,
                    *live,
                    *self.scans[r].total(),
                    self.log
                ],
                ItemRange {
                    color: r as u32,
                    ..range
                },
            );
        }
        let plan = rt.prepare(&p)?;
        self.plans.push((items, plan));
        Ok(self.plans.len() - 1)
    }

    /// Queue the rounds of `plans[plan]` and read back their conflict counts (which the
    /// compact launches logged): one submit and one read-back; counted in `work`.
    fn submit(&self, rt: &Runtime, plan: usize, work: &mut SubmitWork) -> Result<Vec<u32>> {
        let plan = &self.plans[plan].1;
        rt.queue(plan, 1)?;
        work.launches += plan.len();
        work.submits += 2;
        work.read_backs += 1;
        rt.read(&self.log, 0, ROUNDS_PER_SUBMIT)
    }
}

/// Color the graph `adj` on `rt` with the default color reduction. `class[v]` (optional)
/// separates vertex classes.
pub fn color_vertices_gpu(
    rt: &Runtime,
    adj: &Csr,
    class: Option<&[u32]>,
    variant: GpuColoringVariant,
) -> Result<GpuVertexColoring> {
    color_vertices_gpu_with(rt, adj, class, variant, &ColorReduction::default())
}

/// [`color_vertices_gpu`] with a chosen color reduction ([`ColorReduction::OFF`]: none).
pub fn color_vertices_gpu_with(
    rt: &Runtime,
    adj: &Csr,
    class: Option<&[u32]>,
    variant: GpuColoringVariant,
    reduction: &ColorReduction,
) -> Result<GpuVertexColoring> {
    let n = adj.num_rows();
    let Some(classes) = vertex_classes(n, class)? else {
        return Ok(GpuVertexColoring::empty());
    };
    let n32 = n as u32;
    let graph = [
        rt.upload("adjacency offsets", &adj.offsets)?,
        rt.upload("adjacency", &adj.indices)?,
        rt.upload("vertex classes", &classes)?,
    ];
    let colors = rt.zeroed::<u32>("colors", n)?;
    let mut rounds = Rounds::new(rt, graph.clone(), &colors, variant, n32)?;
    rounds.plan(rt, rounds.dispatched(n32))?;

    // Reduction resources are made before the clock starts, like the round resources.
    let mut reducer = ColorReducer::new(rt, &graph, &colors, n32)?;
    // The uploads finish and the read-back staging is sized before the clock starts.
    rt.read::<u32>(&colors, 0, n)?;

    let start = Instant::now();
    let mut setup = Duration::ZERO;
    // Worklist length the host last saw (the GPU-side length can only be smaller).
    let mut count = n32;
    let mut conflicts_per_round = Vec::new();
    let mut work = SubmitWork::default();
    'submits: loop {
        if conflicts_per_round.len() >= round_cap(n) {
            return Err(Error::Gpu(format!(
                "GPU vertex coloring did not converge in {} rounds",
                conflicts_per_round.len()
            )));
        }
        let t = Instant::now();
        let plan = rounds.plan(rt, rounds.dispatched(count))?;
        setup += t.elapsed();
        let log = rounds.submit(rt, plan, &mut work)?;
        for &conflicts in &log {
            conflicts_per_round.push(conflicts);
            if conflicts == 0 {
                break 'submits;
            }
        }
        count = *log.last().expect("rounds per submit > 0");
    }
    let rounds_done = (start.elapsed() - setup).as_secs_f64();
    let reduction = reducer.run(reduction)?;
    let recolored = rounds_done + reduction.seconds;
    let raw: Vec<u32> = rt.read(&colors, 0, n)?;
    let seconds = (start.elapsed() - setup - reducer.setup_time()).as_secs_f64();
    let rounds_work = work;
    work.launches += reduction.launches;
    work.submits += reduction.submits + 1;
    work.read_backs += reduction.read_backs + 1;
    log::debug!(
        "GPU vertex coloring: rounds {:.2} ms ({} launches, {} submits, {} read-backs), \
         reduction {:.2} ms ({} -> {} colors; iterated greedy {:.2} ms, ejection {:.2} ms in \
         {} rounds, {} ejection submits, {} near misses; {} launches, {} submits, {} \
         read-backs), read-back {:.2} ms",
        rounds_done * 1e3,
        rounds_work.launches,
        rounds_work.submits,
        rounds_work.read_backs,
        reduction.seconds * 1e3,
        reduction.colors_before,
        reduction.colors_after,
        reduction.greedy_seconds * 1e3,
        reduction.eject_seconds * 1e3,
        reduction.eject_rounds,
        reduction.eject_submits,
        reduction.near_misses,
        reduction.launches,
        reduction.submits,
        reduction.read_backs,
        (seconds - recolored) * 1e3
    );
    let (colors, num_colors) = shift_classes(&raw, &classes);
    Ok(GpuVertexColoring {
        colors,
        num_colors,
        rounds: conflicts_per_round.len(),
        conflicts_per_round,
        seconds,
        reduction,
        work,
    })
}

/// Turn per-class 1-based colors into global 0-based colors with class k's range after the
/// ranges of classes < k. Returns the colors and the number of colors used.
fn shift_classes(raw: &[u32], classes: &[u32]) -> (Vec<u32>, usize) {
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
