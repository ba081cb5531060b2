//! Color reduction after the GPU speculative vertex coloring, on the GPU ([`Runtime`] kernels
//! `vcolor_class_*`, `vcolor_recolor`, `vcolor_max`, `vcolor_eject_*`) with an exact CPU
//! reference ([`reduce_colors_cpu`]).
//!
//! The speculative rounds behave like a greedy coloring in random order: on lattice-like graphs
//! they use more colors than greedy in the natural order (10-12 against 8 on the tetrahedral
//! box, whose natural order is a lattice sweep). Each *sweep* of the reduction does two things:
//!
//! 1. **Iterated greedy** (Culberson): save the colors, clear them, and recolor the old color
//!    classes one after another, highest first, each class in one launch: every vertex of the
//!    class takes the smallest color no same-class neighbour holds. A class is an independent
//!    set, so a launch has no races, and a vertex never gets a color above its class's rank in
//!    the order, so the count never grows; first fit leaves no empty class (a vertex gets color
//!    c only if every color below c is held by a neighbour), so colors stay 1..k. Highest first
//!    puts the few vertices of the last, smallest classes in the front. Largest class first
//!    would keep the order the speculative rounds produced (their classes already shrink with
//!    the color) and change nothing. Iterated greedy alone is not enough on lattices: in a CPU
//!    model of the rounds (all vertices of a round choosing at once) on a 227k-vertex
//!    tetrahedral box it went from 11 colors to 9 in five passes and then cycled at 9 for 150
//!    passes, one above greedy natural's 8; random class orders did no better.
//! 2. **Ejection** of the top class k (a parallel ejection-chain local search): its vertices
//!    become uncolored "defects". Each round every defect proposes the color in 1..k-1 held by
//!    the fewest same-class neighbours (a free one if any; ties by a hash of vertex, color and
//!    round; not the color it was ejected from unless free), a defect keeps its proposal unless
//!    a neighbouring defect with a higher round priority proposed the same color, and winners
//!    take their color and eject the neighbours that held it. Proposals and resolutions write
//!    only their own vertex and read what the previous launch wrote; two winners ejecting one
//!    vertex write the same values and neighbouring winners hold different colors, so each
//!    round is deterministic and the partial coloring stays proper. In the same CPU model the
//!    ejection took the 227k-vertex box from 9 colors to 8 in 23 rounds. When no defect is
//!    left, the top color is gone (k - 1 colors). An attempt
//!    stops after [`ColorReduction::eject_rounds`] rounds, or earlier when the defect count,
//!    shrinking over the last [`EJECT_WINDOW`] rounds as it did, would not reach zero within
//!    that bound; a failed attempt restores the saved colors, so the count never grows.
//!
//! Sweeps repeat while the count drops, at most [`ColorReduction::sweeps`] times. A successful
//! last ejection is followed by one more iterated-greedy pass, which closes any class the
//! ejection emptied, so colors are always 1..k without gaps.
//!
//! **Near misses.** An attempt that ends with at most [`NEAR_MISS_DEFECTS`] defects left is
//! followed by another sweep even though the count did not drop, at most
//! [`ColorReduction::retries`] times per reduction. Where the speculative rounds leave the
//! reduction depends on the GPU's scheduling, and from some of those colorings the attempt on
//! the last color above greedy's count stalls with one or two defects. In this CPU reference,
//! fed first-fit colorings in random orders and models of the rounds (each vertex seeing a
//! random part of its neighbours' choices of the same round), 1 to 5 of every 30 starts ended
//! one color above greedy natural on tetrahedral boxes of 69k to 227k vertices, every time
//! with 1 or 2 defects left; a stalled defect still wandered after 512 rounds, so more rounds
//! do not help. Retrying the attempt from the same coloring with other tie-breaking hashes
//! failed 5, 2 and 1 times in 100 (1, 2, 3 tries); another sweep first recolors the classes in
//! another order (iterated greedy on the restored coloring), so its attempt starts elsewhere:
//! with one such sweep 5 of 540 starts still failed, with two or four none did (boxes of 69k,
//! 133k and 227k vertices, three start models, 60 seeds each); on the 1.03M box one of three
//! starts needed two. A near miss costs one iterated-greedy pass and one more attempt, whose
//! rounds after the first few have few defects. The final attempt on a tetrahedral box (the
//! color greedy cannot remove either) ends with tens (69k vertices) to thousands (1M) of
//! defects and is not retried; on random geometric graphs it often ends with one to three, and
//! the retries then buy a lower count at that cost (1M vertices, four starts: ejection submits
//! 4-6 without retries, 5-12 with two, 5-20 with four; 14-16 colors without, 14-15 with,
//! greedy natural 17).

//! The GPU side costs what the work costs:
//!
//! * An iterated-greedy pass is one submit: `vcolor_class_count` saves and clears the colors and
//!   counts the old classes, `vcolor_class_offsets` (one workgroup) scans the k counts,
//!   `vcolor_class_bucket` sorts the vertices by old color into segments, then one
//!   `vcolor_recolor` launch per class walks only that class's segment (a grid-stride loop:
//!   the segment's length stays on the GPU), and `vcolor_max` ends the pass; its 4 bytes are
//!   the pass's only read-back. Three passes over all vertices and k launches over one class
//!   each, where a launch per class over all vertices cost k passes.
//! * The ejection rounds run over the list of defects, not over all vertices: the attempt's
//!   start lists the top class, and each round's `vcolor_eject_apply` writes the next list (the
//!   losers and the vertices the winners ejected, each once). After the start and after each
//!   round, `vcolor_eject_count` (one thread) turns the list's length into the launch record of
//!   the next round's three launches ([`PlanBuilder::launch_device`]: wgpu dispatches exactly
//!   the list's workgroups, none once the list is empty; CUDA launches the host's bound) and
//!   logs it. So the grid follows the defects without the host, and rounds after the last
//!   defect is placed dispatch nothing but the one-thread count. Submits hold
//!   [`EJECT_WINDOW`] rounds each and end with one read-back of their defect log (the count
//!   after every round), for the stop rule. Longer submits (8, 8, 16, 32, then 64 rounds) read
//!   back less but ran up to 24 rounds past the last defect, and on the H100 under wgpu an
//!   empty round costs launches and barriers like a full one: in an A/B there they were no
//!   faster than 8-round submits on the 1M-vertex tetrahedral box or random geometric graph,
//!   so the simpler schedule stays. The list's order varies with the GPU's
//!   scheduling; the result does not, since every defect's step depends only on the colors
//!   and proposals around it.
//! * Rounds on short lists, at most [`ColorReduction::tail_defects`] defects, which is most
//!   rounds after the first few, run in the tail kernel `vcolor_eject_tail`: one workgroup
//!   loops propose / resolve / apply / list copy with storage barriers between the steps, up
//!   to [`TAIL_ROUNDS`] rounds in one launch and one submit, the defect log read back once.
//!   The steps are the round kernels' own code (shaders/common/vcolor_eject_*.wgsl), so the
//!   colors are theirs bit for bit. The tail stops after the round that empties the list,
//!   hands a list grown past the bound back to the launched rounds, and at a window's end
//!   gives the attempt up where the stop rule does (`tail_gives_up`); the host judges every
//!   round as before, whichever submit ran it. The class size is not read back, so attempts
//!   start in the tail until one finds its class past the bound (it hands it back before any
//!   round; the classes of the later, lower counts are larger).
//!
//! So a reduction's launches follow the colors and the rounds ([`ReductionReport::launches`],
//! [`ReductionReport::submits`], [`ReductionReport::read_backs`] count them, and
//! [`ReductionReport::tail_submits`] the tail's launches), and the vertices it touches follow
//! the defects.
//!
//! Vertex classes: neighbours of another class are ignored throughout, as in the speculative
//! rounds; the count being reduced is the largest color over all classes.

use crate::args;
use crate::error::{Error, Result};
use crate::mesh::Csr;
use crate::runtime::{
    Buffer, ItemRange, Kernel, Plan, PlanBuilder, Runtime, LAUNCH_WORDS, WORKGROUP_SIZE,
};
use std::time::{Duration, Instant};

/// The ejection step runs when the count k satisfies k - 1 <= this (the proposal kernel counts
/// the holders of each color in a fixed array); with more colors a sweep is iterated greedy
/// only. Mirrors MAX_EJECT_COLORS in shaders/vcolor_eject_propose.wgsl.
pub const MAX_EJECT_COLORS: usize = 32;

/// Rounds over which the stop rule of an ejection attempt measures the defects' shrinking, and
/// the rounds of every submit (the defect log read back per submit holds their counts);
/// attempts are whole multiples of it.
pub const EJECT_WINDOW: usize = 8;

/// An ejection attempt that ends with at most this many defects is a near miss: another sweep
/// follows (see the module docs). On tetrahedral boxes, stalled attempts on the last color
/// above greedy's count end with 1 or 2 defects and the attempts that cannot succeed with tens
/// (69k vertices) to thousands (1M); on random geometric graphs the last attempt often ends
/// with a few as well.
pub const NEAR_MISS_DEFECTS: u32 = 8;

// Every submit's rounds alternate the two defect lists, so each submit starts from the first.
const _: () = assert!(EJECT_WINDOW % 2 == 0);

/// Most rounds of one submit of the tail kernel (`vcolor_eject_tail`, one launch): four
/// windows, read back once per 32 rounds instead of once per 8. It stops by itself after the
/// round that empties the list or grows it past the bound, and where the stop rule gives the
/// attempt up, so a longer submit runs no rounds the host ignores (but within the f32 margin
/// of `tail_gives_up`).
pub const TAIL_ROUNDS: usize = 4 * EJECT_WINDOW;

/// The defect log's entry for a round the tail kernel did not run (NOT_RUN in
/// shaders/vcolor_eject_tail.wgsl).
const NOT_RUN: u32 = u32::MAX;

/// Default of [`ColorReduction::tail_defects`]: 4 x [`WORKGROUP_SIZE`], from a cost model to
/// be checked on the H100 (`--reduce-tail` sets it). The tail's workgroup walks a list of D
/// defects in ceil(D / 64) passes per step, one defect's neighbours per thread and pass, where
/// a launched round walks it in one pass of ceil(D / 64) workgroups but pays four launches
/// with their barriers and indirect dispatches, whatever D (on the H100 under wgpu 70-120 us
/// per round at the idle clock, and 5.5 us per indirect launch with the clock hold, BENCHMARKS
/// "What a launch costs"), and a 65 us read-back per 8 rounds where the tail pays one per 32.
/// If a pass, one defect's dependent loads over its neighbours, costs a few microseconds, a
/// tail round of up to about four passes stays below a launched one; past that the launched
/// rounds win more as the list grows.
pub const DEFAULT_TAIL_DEFECTS: u32 = 4 * WORKGROUP_SIZE;

/// Colors each thread of `vcolor_max` reads.
const MAX_ITEMS_PER_THREAD: u32 = 4;

/// How hard the color reduction tries.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct ColorReduction {
    /// Most sweeps (iterated greedy + ejection attempt); sweeps stop as soon as one does not
    /// lower the count. 0 turns the reduction off.
    pub sweeps: usize,
    /// Most rounds of one ejection attempt (rounded up to a multiple of [`EJECT_WINDOW`]); 0
    /// leaves iterated greedy only.
    pub eject_rounds: usize,
    /// Most extra sweeps after near misses (attempts that ended with at most
    /// [`NEAR_MISS_DEFECTS`] defects), per reduction; they count against `sweeps` too.
    pub retries: usize,
    /// Defect lists of at most this many vertices run their rounds in the tail kernel, one
    /// workgroup, up to [`TAIL_ROUNDS`] rounds in one launch; longer lists in launched rounds
    /// (four launches each). 0: launched rounds only. The colors are the same either way.
    pub tail_defects: u32,
}

impl Default for ColorReduction {
    /// 16 sweeps, 64 rounds per ejection attempt, 2 sweeps after near misses, the tail kernel
    /// for lists of at most [`DEFAULT_TAIL_DEFECTS`]. On the 1.03M-vertex tetrahedral box
    /// (lavapipe, whole GPU coloring) three sweeps took the speculative rounds' 11 colors to 8:
    /// ejections of 16 and 40 rounds, and an attempt at 7 stopped after 16 rounds.
    fn default() -> Self {
        ColorReduction {
            sweeps: 16,
            eject_rounds: 64,
            retries: 2,
            tail_defects: DEFAULT_TAIL_DEFECTS,
        }
    }
}

impl ColorReduction {
    /// No reduction: the colors of the speculative rounds.
    pub const OFF: ColorReduction = ColorReduction {
        sweeps: 0,
        eject_rounds: 0,
        retries: 0,
        tail_defects: 0,
    };

    /// Rounds of one attempt: `eject_rounds` rounded up to a multiple of [`EJECT_WINDOW`].
    fn rounds_cap(&self) -> usize {
        self.eject_rounds.div_ceil(EJECT_WINDOW) * EJECT_WINDOW
    }
}

/// What the reduction did.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct ReductionReport {
    /// Largest color before and after (the color count when there are no vertex classes; 0
    /// when the reduction is off).
    pub colors_before: usize,
    pub colors_after: usize,
    /// Iterated-greedy passes run (the closing pass after a last successful ejection included).
    pub sweeps: usize,
    /// Ejection attempts that removed the top class.
    pub ejections: usize,
    /// Ejection attempts that ended with at most [`NEAR_MISS_DEFECTS`] defects and were
    /// followed by another sweep.
    pub near_misses: usize,
    /// Rounds of all attempts that started with defects, failed attempts included (the GPU
    /// also queues the rest of a submit, empty launches counted in `launches`).
    pub eject_rounds: usize,
    /// Submits of ejection rounds ([`EJECT_WINDOW`] launched rounds, or up to [`TAIL_ROUNDS`]
    /// in the tail kernel), each ending with one read-back of the defect log.
    pub eject_submits: usize,
    /// Of which submits of the tail kernel (one launch each, `vcolor_eject_tail`), the rounds
    /// it ran (those past a stop of the host's rule included), and the submits it ended by
    /// handing a list grown past [`ColorReduction::tail_defects`] back to launched rounds.
    pub tail_submits: usize,
    pub tail_rounds: usize,
    pub tail_handbacks: usize,
    /// Kernel launches queued (GPU; 0 for the CPU reference).
    pub launches: usize,
    /// Submissions to the GPU queue: queued plans, buffer copies and read-backs (GPU; 0 for
    /// the CPU reference).
    pub submits: usize,
    /// Read-backs among them, each a wait for the GPU (the color count after each sweep, the
    /// defect log after each submit of ejection rounds).
    pub read_backs: usize,
    /// Wall time of the reduction (GPU: plan preparation excluded).
    pub seconds: f64,
    /// Of which the iterated-greedy passes (each up to its color count's read-back) and the
    /// ejection attempts.
    pub greedy_seconds: f64,
    pub eject_seconds: f64,
}

/// The operations of a reduction, on the GPU or in the CPU reference; [`drive`] sequences them
/// the same way for both.
trait Engine {
    /// Largest color.
    fn max_color(&mut self) -> Result<usize>;
    /// One iterated-greedy pass over old classes k, k-1, .., 1; the largest color after it.
    fn iterated_greedy(&mut self, k: usize) -> Result<usize>;
    /// Save the colors (for [`Engine::restore`]) and uncolor class k.
    fn eject_start(&mut self, k: usize) -> Result<()>;
    /// One submit of rounds numbered `first_round..`; the defects left after each round run.
    fn eject_rounds(&mut self, k: usize, first_round: u32, submit: Submit) -> Result<Vec<u32>>;
    /// Back to the saved colors.
    fn restore(&mut self) -> Result<()>;
    /// Time spent preparing plans so far (left out of the phase times).
    fn setup_time(&self) -> Duration {
        Duration::ZERO
    }
}

/// The reduction's control flow (see the module docs), shared by the GPU and the CPU reference.
fn drive(e: &mut impl Engine, opts: &ColorReduction) -> Result<ReductionReport> {
    if opts.sweeps == 0 {
        return Ok(ReductionReport::default());
    }
    let mut k = e.max_color()?;
    let mut report = ReductionReport {
        colors_before: k,
        ..ReductionReport::default()
    };
    let mut gaps_possible = false;
    // Attempts start in the tail kernel until one finds its first list past the bound.
    let mut tail_first = opts.tail_defects > 0;
    let mut sweeps = 0;
    while sweeps < opts.sweeps && k > 1 {
        let start = k;
        k = greedy_pass(e, k, &mut report)?;
        sweeps += 1;
        gaps_possible = false;
        let mut near_miss = false;
        if (3..=MAX_EJECT_COLORS + 1).contains(&k) {
            let (t, setup) = (Instant::now(), e.setup_time());
            let attempt = eject(e, k, opts, &mut tail_first, &mut report)?;
            report.eject_seconds += (t.elapsed() - (e.setup_time() - setup)).as_secs_f64();
            match attempt {
                Attempt::Ejected => {
                    k -= 1;
                    gaps_possible = true;
                }
                Attempt::Kept { defects } => near_miss = defects <= NEAR_MISS_DEFECTS,
            }
        }
        if k >= start {
            if near_miss && report.near_misses < opts.retries {
                report.near_misses += 1;
                continue;
            }
            break;
        }
    }
    if gaps_possible {
        k = greedy_pass(e, k, &mut report)?;
    }
    report.colors_after = k;
    Ok(report)
}

/// One iterated-greedy pass, counted and timed in `report`; the largest color after it.
fn greedy_pass(e: &mut impl Engine, k: usize, report: &mut ReductionReport) -> Result<usize> {
    let (t, setup) = (Instant::now(), e.setup_time());
    let k = e.iterated_greedy(k)?;
    report.sweeps += 1;
    report.greedy_seconds += (t.elapsed() - (e.setup_time() - setup)).as_secs_f64();
    Ok(k)
}

/// What one submit of ejection rounds runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Submit {
    /// [`EJECT_WINDOW`] launched rounds.
    Launched,
    /// At most `rounds` rounds in the tail kernel, while the list holds at most `bound`
    /// defects: it stops after the round that empties the list or grows it past `bound`, or
    /// that ends a window (rounds counted from the attempt's first) where [`tail_gives_up`]
    /// (the stop rule, [`hopeless`], with the attempt's `cap` on rounds) gives the attempt up;
    /// `window_defects` is the count at the last window boundary before the submit, the rule's
    /// reference at its first boundary.
    Tail {
        rounds: u32,
        bound: u32,
        window_defects: u32,
        cap: u32,
    },
}

/// How an ejection attempt ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Attempt {
    /// The top class is empty.
    Ejected,
    /// The colors were restored; `defects` were left (`u32::MAX` when no round ran).
    Kept { defects: u32 },
}

/// One ejection attempt on class k, in submits of [`EJECT_WINDOW`] launched rounds, or of the
/// tail kernel while the defects are at most [`ColorReduction::tail_defects`]. The class size
/// is not read back, so while `tail_first` the first submit is the tail's: a short class runs
/// in it at once, a long one is handed back before any round (one submit and read-back lost,
/// and `tail_first` cleared: the classes of lower counts are larger). Rounds are judged one by
/// one, whichever submit ran them: the first that leaves no defect ejects the class, and at
/// every window's end the stop rule may end the attempt; rounds a submit ran past that point
/// (or past the attempt's cap) are ignored and undone by the restore.
fn eject(
    e: &mut impl Engine,
    k: usize,
    opts: &ColorReduction,
    tail_first: &mut bool,
    report: &mut ReductionReport,
) -> Result<Attempt> {
    let cap = opts.rounds_cap();
    if cap == 0 {
        return Ok(Attempt::Kept { defects: u32::MAX });
    }
    e.eject_start(k)?;
    // Defects the last submit left; none run yet: the tail first, or the launched rounds.
    let mut defects = if *tail_first { 0 } else { u32::MAX };
    // Defects after each round of the attempt.
    let mut history: Vec<u32> = Vec::with_capacity(cap);
    let mut submit = 0;
    'attempt: while history.len() < cap {
        submit += 1;
        report.eject_submits += 1;
        let first = history.len();
        let kind = if opts.tail_defects > 0 && defects <= opts.tail_defects {
            let boundary = first / EJECT_WINDOW * EJECT_WINDOW;
            Submit::Tail {
                rounds: (cap - first).min(TAIL_ROUNDS) as u32,
                bound: opts.tail_defects,
                window_defects: if boundary > 0 {
                    history[boundary - 1]
                } else {
                    u32::MAX
                },
                cap: cap as u32,
            }
        } else {
            Submit::Launched
        };
        let log = e.eject_rounds(k, first as u32, kind)?;
        // A tail that ran no round found the list past its bound.
        defects = log.last().copied().unwrap_or(u32::MAX);
        if first == 0 && log.is_empty() {
            *tail_first = false;
        }
        if let Submit::Tail { bound, .. } = kind {
            report.tail_submits += 1;
            report.tail_rounds += log.len();
            report.tail_handbacks += usize::from(defects > bound);
        }
        for &d in log.iter().take(cap - first) {
            history.push(d);
            let r = history.len();
            if d == 0 {
                report.eject_rounds += r;
                report.ejections += 1;
                log::debug!("color reduction: ejected color {k} in {r} rounds ({submit} submits)");
                return Ok(Attempt::Ejected);
            }
            if r % EJECT_WINDOW == 0
                && r >= 2 * EJECT_WINDOW
                && hopeless(
                    history[r - 1 - EJECT_WINDOW],
                    history[r - 1],
                    (cap - r) / EJECT_WINDOW,
                )
            {
                break 'attempt;
            }
        }
    }
    report.eject_rounds += history.len();
    let defects = history.last().copied().unwrap_or(u32::MAX);
    log::debug!(
        "color reduction: color {k} kept, {defects} defects after {} rounds ({submit} submits)",
        history.len()
    );
    e.restore()?;
    Ok(Attempt::Kept { defects })
}

/// Whether an ejection attempt should stop: the last [`EJECT_WINDOW`] rounds took the defects
/// from `previous` to `now` and, shrinking by that ratio per window, they would not reach zero
/// within the `windows_left` (no progress counts as never). The failing attempts seen in the
/// CPU model shrink the defects by about 2x per window from tens of thousands, the successful
/// ones by about 10x; stopping early saves most of a failing attempt's rounds.
fn hopeless(previous: u32, now: u32, windows_left: usize) -> bool {
    if now >= previous {
        return true;
    }
    let shrink = previous as f64 / now as f64;
    (now as f64).ln() / shrink.ln() > windows_left as f64
}

/// Windows [`tail_gives_up`] adds to the windows left (1/64), so that f32 rounding never makes
/// the tail stop where [`hopeless`] goes on: the ratio tested is at most tens, and f32 moves it
/// by about 1e-5. Within the margin the tail runs on (rounds the host then ignores).
const TAIL_STOP_MARGIN: f32 = 1.0 / 64.0;

/// [`hopeless`] as the tail kernel evaluates it (`gives_up` in shaders/vcolor_eject_tail.wgsl,
/// f32): it never gives up where [`hopeless`] goes on, so the host needs no round after a stop.
fn tail_gives_up(previous: u32, now: u32, windows_left: u32) -> bool {
    if now >= previous {
        return true;
    }
    if now == 0 {
        return false;
    }
    (now as f32).ln()
        > (windows_left as f32 + TAIL_STOP_MARGIN) * (previous as f32 / now as f32).ln()
}

/// lowbias32 integer hash (Chris Wellons); shaders/common/vcolor_hash.wgsl.
pub fn lowbias32(v: u32) -> u32 {
    let mut x = v;
    x ^= x >> 16;
    x = x.wrapping_mul(0x7feb352d);
    x ^= x >> 15;
    x = x.wrapping_mul(0x846ca68b);
    x ^= x >> 16;
    x
}

/// A hash of (x, round) that changes from round to round; shaders/common/vcolor_hash.wgsl.
pub fn round_hash(x: u32, round: u32) -> u32 {
    lowbias32(x ^ lowbias32(round.wrapping_add(0x9e37_79b9)))
}

/// First fit (1-based) in a hashed vertex order ([`lowbias32`], ties by number): a model of
/// the speculative rounds on a wide GPU, where most vertices of a round choose at once and
/// hashed priorities settle the conflicts. Lavapipe runs the rounds almost in natural order, so
/// the reduction's tests and conformance checks start from this coloring instead.
pub fn hashed_order_coloring(adj: &Csr) -> Vec<u32> {
    seeded_order_coloring(adj, 0)
}

/// [`hashed_order_coloring`] in another hashed order per `seed` (vertex v ranks by
/// lowbias32(v + seed * 0x9e3779b9); seed 0 is [`hashed_order_coloring`]'s order): the
/// different colorings the speculative rounds hand the reduction from run to run.
pub fn seeded_order_coloring(adj: &Csr, seed: u32) -> Vec<u32> {
    let shift = seed.wrapping_mul(0x9e37_79b9);
    let mut order: Vec<u32> = (0..adj.num_rows() as u32).collect();
    order.sort_by_key(|&v| (lowbias32(v.wrapping_add(shift)), v));
    let mut colors = vec![0u32; adj.num_rows()];
    let mut held = Vec::new();
    for v in order {
        held.clear();
        held.extend(adj.row(v as usize).iter().map(|&u| colors[u as usize]));
        colors[v as usize] = smallest_missing(&mut held);
    }
    colors
}

/// First fit: the smallest color >= 1 not in `held` (0 = uncolored, ignored); sorts `held`.
fn smallest_missing(held: &mut [u32]) -> u32 {
    held.sort_unstable();
    let mut c = 1;
    for &h in held.iter() {
        if h == c {
            c += 1;
        }
    }
    c
}

/// Check the inputs of a reduction: a 1-based proper coloring of `adj` (within vertex classes)
/// and the classes; returns the classes (all 0 when none are given).
fn check_inputs(adj: &Csr, class: Option<&[u32]>, colors: &[u32]) -> Result<Vec<u32>> {
    let n = adj.num_rows();
    if colors.len() != n {
        return Err(Error::Invalid(format!(
            "color reduction: {} colors for {n} vertices",
            colors.len()
        )));
    }
    let classes = match class {
        Some(c) if c.len() == n => c.to_vec(),
        Some(c) => {
            return Err(Error::Invalid(format!(
                "color reduction: vertex classes have {} entries but the graph has {n} vertices",
                c.len()
            )))
        }
        None => vec![0; n],
    };
    for v in 0..n {
        if colors[v] == 0 {
            return Err(Error::Invalid(format!(
                "color reduction: vertex {v} has color 0 (colors are 1-based)"
            )));
        }
        // The GPU keeps one counter per color, n of them; a proper coloring never needs more.
        if colors[v] as usize > n {
            return Err(Error::Invalid(format!(
                "color reduction: vertex {v} has color {}, more than the {n} vertices need",
                colors[v]
            )));
        }
        for &u in adj.row(v) {
            let u = u as usize;
            if u >= n {
                return Err(Error::Invalid(format!(
                    "color reduction: vertex {v} has neighbour {u} out of range ({n} vertices)"
                )));
            }
            if u != v && classes[u] == classes[v] && colors[u] == colors[v] {
                return Err(Error::Invalid(format!(
                    "color reduction: neighbours {v} and {u} share color {}",
                    colors[v]
                )));
            }
        }
    }
    Ok(classes)
}

/// CPU reference of the reduction: the same rule, order and rounds as the GPU, so
/// [`reduce_colors_gpu`] gives exactly these colors. `colors` are 1-based and proper.
pub fn reduce_colors_cpu(
    adj: &Csr,
    class: Option<&[u32]>,
    colors: &[u32],
    opts: &ColorReduction,
) -> Result<(Vec<u32>, ReductionReport)> {
    let classes = check_inputs(adj, class, colors)?;
    let start = Instant::now();
    let n = colors.len();
    let mut e = CpuEngine {
        adj,
        classes: &classes,
        colors: colors.to_vec(),
        saved: Vec::new(),
        tabu: vec![0; n],
        proposal: vec![0; n],
        winner: vec![0; n],
    };
    let mut report = if n == 0 {
        ReductionReport::default()
    } else {
        drive(&mut e, opts)?
    };
    report.seconds = start.elapsed().as_secs_f64();
    Ok((e.colors, report))
}

/// The CPU reference's state: one array per GPU buffer.
struct CpuEngine<'a> {
    adj: &'a Csr,
    classes: &'a [u32],
    colors: Vec<u32>,
    saved: Vec<u32>,
    tabu: Vec<u32>,
    proposal: Vec<u32>,
    winner: Vec<u32>,
}

impl CpuEngine<'_> {
    /// Same-class neighbours of v.
    fn neighbours(&self, v: usize) -> impl Iterator<Item = usize> + '_ {
        let class_v = self.classes[v];
        self.adj
            .row(v)
            .iter()
            .map(|&u| u as usize)
            .filter(move |&u| self.classes[u] == class_v)
    }

    /// Smallest color >= 1 no same-class neighbour holds (vcolor_first_fit).
    fn first_fit(&self, v: usize) -> u32 {
        let mut held: Vec<u32> = self.neighbours(v).map(|u| self.colors[u]).collect();
        smallest_missing(&mut held)
    }

    /// vcolor_eject_propose for defect v.
    fn propose(&self, v: usize, k: usize, round: u32) -> u32 {
        let mut holders = [0u32; MAX_EJECT_COLORS];
        for u in self.neighbours(v) {
            let c = self.colors[u] as usize;
            if c != 0 && c < k {
                holders[c - 1] += 1;
            }
        }
        let mut best = (0u32, u32::MAX, u32::MAX);
        for c in 1..k as u32 {
            let h = holders[c as usize - 1];
            if h != 0 && c == self.tabu[v] {
                continue;
            }
            let tie = if h == 0 {
                c
            } else {
                round_hash((v as u32).wrapping_mul(MAX_EJECT_COLORS as u32) + c, round)
            };
            if (h, tie) < (best.1, best.2) {
                best = (c, h, tie);
            }
        }
        best.0
    }

    /// One ejection round (vcolor_eject_propose, _resolve, _apply); the defects left.
    fn round(&mut self, k: usize, round: u32) -> u32 {
        let n = self.colors.len();
        for v in 0..n {
            if self.colors[v] == 0 {
                self.proposal[v] = self.propose(v, k, round);
            }
        }
        self.winner = (0..n).map(|v| self.resolve(v, round)).collect();
        // vcolor_eject_apply: a vertex is ejected when a neighbouring winner takes its color
        // (the same whichever winner's thread writes first).
        for v in 0..n {
            if self.winner[v] != 0 {
                self.colors[v] = self.proposal[v];
                continue;
            }
            let c = self.colors[v];
            let ejected = c != 0
                && self
                    .neighbours(v)
                    .any(|u| self.winner[u] != 0 && self.proposal[u] == c);
            if ejected {
                self.colors[v] = 0;
                self.tabu[v] = c;
            }
        }
        self.colors.iter().filter(|&&c| c == 0).count() as u32
    }

    /// vcolor_eject_resolve for vertex v.
    fn resolve(&self, v: usize, round: u32) -> u32 {
        let p = self.proposal[v];
        if self.colors[v] != 0 || p == 0 {
            return 0;
        }
        let pv = (round_hash(v as u32, round), v);
        let beaten = self.neighbours(v).any(|u| {
            self.colors[u] == 0 && self.proposal[u] == p && (round_hash(u as u32, round), u) < pv
        });
        u32::from(!beaten)
    }
}

impl Engine for CpuEngine<'_> {
    fn max_color(&mut self) -> Result<usize> {
        Ok(self.colors.iter().copied().max().unwrap_or(0) as usize)
    }

    fn iterated_greedy(&mut self, k: usize) -> Result<usize> {
        let old = std::mem::take(&mut self.colors);
        self.colors = vec![0; old.len()];
        let mut by_class: Vec<Vec<usize>> = vec![Vec::new(); k + 1];
        for (v, &c) in old.iter().enumerate() {
            by_class[c as usize].push(v);
        }
        for class in by_class.iter().skip(1).rev() {
            for &v in class {
                self.colors[v] = self.first_fit(v);
            }
        }
        self.max_color()
    }

    fn eject_start(&mut self, k: usize) -> Result<()> {
        self.saved = self.colors.clone();
        self.tabu.fill(0);
        for c in self.colors.iter_mut().filter(|c| **c as usize == k) {
            *c = 0;
        }
        Ok(())
    }

    fn eject_rounds(&mut self, k: usize, first_round: u32, submit: Submit) -> Result<Vec<u32>> {
        let mut log = Vec::new();
        match submit {
            Submit::Launched => {
                for r in 0..EJECT_WINDOW as u32 {
                    log.push(self.round(k, first_round + r));
                }
            }
            // vcolor_eject_tail's loop.
            Submit::Tail {
                rounds,
                bound,
                window_defects,
                cap,
            } => {
                let mut len = self.colors.iter().filter(|&&c| c == 0).count() as u32;
                let mut window = window_defects;
                while log.len() < rounds as usize && len != 0 && len <= bound {
                    len = self.round(k, first_round + log.len() as u32);
                    log.push(len);
                    let done = first_round + log.len() as u32;
                    if done % EJECT_WINDOW as u32 == 0 {
                        let windows_left = cap.saturating_sub(done) / EJECT_WINDOW as u32;
                        let stop = done >= 2 * EJECT_WINDOW as u32
                            && tail_gives_up(window, len, windows_left);
                        window = len;
                        if stop {
                            break;
                        }
                    }
                }
            }
        }
        Ok(log)
    }

    fn restore(&mut self) -> Result<()> {
        self.colors.clone_from(&self.saved);
        Ok(())
    }
}

/// Reduce a 1-based proper coloring on the GPU (uploads it, runs [`ColorReducer`], reads the
/// colors back). Gives exactly the colors of [`reduce_colors_cpu`].
pub fn reduce_colors_gpu(
    rt: &Runtime,
    adj: &Csr,
    class: Option<&[u32]>,
    colors: &[u32],
    opts: &ColorReduction,
) -> Result<(Vec<u32>, ReductionReport)> {
    let classes = check_inputs(adj, class, colors)?;
    if colors.is_empty() {
        return Ok((Vec::new(), ReductionReport::default()));
    }
    let graph = [
        rt.upload("adjacency offsets", &adj.offsets)?,
        rt.upload("adjacency", &adj.indices)?,
        rt.upload("vertex classes", &classes)?,
    ];
    let buffer = rt.upload("colors", colors)?;
    let mut reducer = ColorReducer::new(rt, &graph, &buffer, colors.len() as u32)?;
    let report = reducer.run(opts)?;
    Ok((rt.read(&buffer, 0, colors.len())?, report))
}

/// Threads of a launch over a list of about `items` entries (a grid-stride loop covers the
/// rest): the next power of two, at least one workgroup and at most one thread per vertex, so a
/// coloring prepares a few plans, not one per list length.
fn list_threads(items: u32, n: u32) -> u32 {
    items
        .max(1)
        .next_power_of_two()
        .min(n.next_multiple_of(WORKGROUP_SIZE))
        .max(WORKGROUP_SIZE)
}

/// Append `vcolor_max` over the n colors (the host or `vcolor_class_offsets` zeroes `largest`).
fn launch_max(p: &mut PlanBuilder, max: &Kernel, colors: &Buffer, largest: &Buffer, n: u32) {
    let threads = n.div_ceil(WORKGROUP_SIZE * MAX_ITEMS_PER_THREAD) * WORKGROUP_SIZE;
    p.launch_threads(max, &args![*colors, *largest], ItemRange::all(n), threads);
}

/// What a prepared plan of the reduction does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum PlanKind {
    /// One iterated-greedy pass over old colors k .. 1, ending with `vcolor_max`.
    Greedy { k: usize },
    /// [`EJECT_WINDOW`] ejection rounds below color k, after the start of the attempt when
    /// `start` (so an attempt's first submit carries its start); `threads` bounds the CUDA
    /// launches (wgpu dispatches the grid `vcolor_eject_count` wrote).
    EjectRounds { k: usize, threads: u32, start: bool },
    /// One launch of the tail kernel (rounds below color k on lists of at most `bound`
    /// defects), after the start of the attempt when `start`.
    EjectTail { k: usize, bound: u32, start: bool },
}

/// The device side of the reduction of one coloring: buffers, kernels and the plans by color
/// count, made before any timing starts (plans for a new count are prepared on first use and
/// their preparation is not timed).
pub struct ColorReducer<'a> {
    rt: &'a Runtime,
    n: u32,
    graph: [Buffer; 3],
    colors: Buffer,
    old_colors: Buffer,
    saved: Buffer,
    tabu: Buffer,
    proposal: Buffer,
    winner: Buffer,
    /// Iterated greedy: vertices of each old color class (counting sort), the class sizes,
    /// their prefix sum (class c is `order[class_first[c - 1] .. class_first[c]]`) and the
    /// bucket cursors.
    order: Buffer,
    class_size: Buffer,
    class_first: Buffer,
    class_next: Buffer,
    /// Ejection: the defect lists the rounds alternate between and their lengths (round r of a
    /// launched submit reads list r % 2 and fills the other; the tail copies its next list
    /// back, so every submit starts and ends on the first), the round stamps that list an
    /// ejected vertex once, the launch record of the next round's launches, the submit's
    /// defect log (entry 0 at the start, entry r after round r) and the host's words (first
    /// round; for the tail also the stop rule's reference and the rounds to run).
    defects: [Buffer; 2],
    defect_count: [Buffer; 2],
    listed: Buffer,
    eject_record: Buffer,
    defect_log: Buffer,
    largest: Buffer,
    round_base: Buffer,
    count: Kernel,
    offsets: Kernel,
    bucket: Kernel,
    recolor: Kernel,
    max: Kernel,
    start: Kernel,
    propose: Kernel,
    resolve: Kernel,
    apply: Kernel,
    eject_count: Kernel,
    tail: Kernel,
    /// Defects the host last saw (or expects at an attempt's start): the grid of the next
    /// rounds.
    defects_seen: u32,
    /// An attempt was started: its start launch goes into the next submit of rounds.
    start_pending: bool,
    plans: Vec<(PlanKind, Plan, usize)>,
    max_plan: (Plan, usize),
    counts: SubmitWork,
    setup: Duration,
}

/// GPU work queued by the host: kernel launches, submissions to the queue (queued plans,
/// buffer copies, read-backs) and read-backs (each a wait for the GPU).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct SubmitWork {
    pub launches: usize,
    pub submits: usize,
    pub read_backs: usize,
}

impl<'a> ColorReducer<'a> {
    /// Resources to reduce the 1-based coloring in `colors` (n vertices, colors at most n) of
    /// the graph `[offsets, adjacency, vertex classes]`, in place.
    pub fn new(
        rt: &'a Runtime,
        graph: &[Buffer; 3],
        colors: &Buffer,
        n: u32,
    ) -> Result<ColorReducer<'a>> {
        let len = n as usize;
        let largest = rt.zeroed::<u32>("largest color", 1)?;
        let max = rt.kernel("vcolor_max", &[])?;
        let mut p = PlanBuilder::new();
        launch_max(&mut p, &max, colors, &largest, n);
        let max_plan = (rt.prepare(&p)?, p.launches().len());
        Ok(ColorReducer {
            rt,
            n,
            graph: graph.clone(),
            colors: colors.clone(),
            old_colors: rt.zeroed::<u32>("old colors", len)?,
            saved: rt.zeroed::<u32>("saved colors", len)?,
            tabu: rt.zeroed::<u32>("tabu colors", len)?,
            proposal: rt.zeroed::<u32>("proposed colors", len)?,
            winner: rt.zeroed::<u32>("proposal winners", len)?,
            order: rt.zeroed::<u32>("vertices by old color", len)?,
            class_size: rt.zeroed::<u32>("color class sizes", len)?,
            class_first: rt.zeroed::<u32>("color class offsets", len + 1)?,
            class_next: rt.zeroed::<u32>("color class cursors", len)?,
            defects: [
                rt.zeroed::<u32>("defects a", len)?,
                rt.zeroed::<u32>("defects b", len)?,
            ],
            defect_count: [
                rt.zeroed::<u32>("defect count a", 1)?,
                rt.zeroed::<u32>("defect count b", 1)?,
            ],
            listed: rt.zeroed::<u32>("ejection stamps", len)?,
            eject_record: rt.zeroed::<u32>("ejection launch record", LAUNCH_WORDS as usize)?,
            defect_log: rt.zeroed::<u32>("defects per round", EJECT_WINDOW.max(TAIL_ROUNDS) + 1)?,
            largest,
            round_base: rt.zeroed::<u32>("ejection submit words", 4)?,
            count: rt.kernel("vcolor_class_count", &[])?,
            offsets: rt.kernel("vcolor_class_offsets", &[])?,
            bucket: rt.kernel("vcolor_class_bucket", &[])?,
            recolor: rt.kernel("vcolor_recolor", &[])?,
            max,
            start: rt.kernel("vcolor_eject_start", &[])?,
            propose: rt.kernel("vcolor_eject_propose", &[])?,
            resolve: rt.kernel("vcolor_eject_resolve", &[])?,
            apply: rt.kernel("vcolor_eject_apply", &[])?,
            eject_count: rt.kernel("vcolor_eject_count", &[])?,
            tail: rt.kernel("vcolor_eject_tail", &[])?,
            defects_seen: 0,
            start_pending: false,
            plans: Vec::new(),
            max_plan,
            counts: SubmitWork::default(),
            setup: Duration::ZERO,
        })
    }

    /// Run the reduction on the colors in place; `seconds` excludes plan preparation.
    pub fn run(&mut self, opts: &ColorReduction) -> Result<ReductionReport> {
        let start = Instant::now();
        self.setup = Duration::ZERO;
        self.counts = SubmitWork::default();
        let mut report = drive(self, opts)?;
        report.seconds = (start.elapsed() - self.setup).as_secs_f64();
        report.launches = self.counts.launches;
        report.submits = self.counts.submits;
        report.read_backs = self.counts.read_backs;
        Ok(report)
    }

    /// Time the last [`ColorReducer::run`] spent preparing plans (not in its `seconds`).
    pub fn setup_time(&self) -> Duration {
        self.setup
    }

    /// The builder of a plan of `kind`.
    fn build(&self, kind: PlanKind) -> PlanBuilder {
        let [offsets, adjacency, class] = &self.graph;
        let n = self.n;
        let mut p = PlanBuilder::new();
        match kind {
            PlanKind::Greedy { k } => {
                let all = ItemRange::all(n);
                p.launch(
                    &self.count,
                    &args![self.colors, self.old_colors, self.class_size],
                    all,
                );
                p.launch_threads(
                    &self.offsets,
                    &args![
                        self.class_size,
                        self.class_first,
                        self.class_next,
                        self.largest
                    ],
                    ItemRange::all(k as u32),
                    WORKGROUP_SIZE,
                );
                p.launch(
                    &self.bucket,
                    &args![self.old_colors, self.class_next, self.order],
                    all,
                );
                let threads = list_threads(n.div_ceil(k as u32), n);
                for c in (1..=k as u32).rev() {
                    p.launch_threads(
                        &self.recolor,
                        &args![
                            *offsets,
                            *adjacency,
                            *class,
                            self.order,
                            self.class_first,
                            self.colors
                        ],
                        ItemRange {
                            first: 0,
                            count: n,
                            color: c,
                            pad: 0,
                        },
                        threads,
                    );
                }
                launch_max(&mut p, &self.max, &self.colors, &self.largest, n);
            }
            PlanKind::EjectTail { k, bound, start } => {
                if start {
                    self.launch_start(&mut p, k);
                }
                p.launch_threads(
                    &self.tail,
                    &args![
                        *offsets,
                        *adjacency,
                        *class,
                        self.round_base,
                        self.colors,
                        self.tabu,
                        self.proposal,
                        self.winner,
                        self.listed,
                        self.defects[0],
                        self.defect_count[0],
                        self.defects[1],
                        self.defect_count[1],
                        self.eject_record,
                        self.defect_log
                    ],
                    ItemRange {
                        first: 0,
                        count: TAIL_ROUNDS as u32,
                        color: k as u32,
                        pad: bound,
                    },
                    WORKGROUP_SIZE,
                );
            }
            PlanKind::EjectRounds { k, threads, start } => {
                if start {
                    self.launch_start(&mut p, k);
                }
                for r in 0..EJECT_WINDOW {
                    let (cur, next) = (r % 2, 1 - r % 2);
                    // The grid is the record the last count launch wrote (word 0).
                    let range = ItemRange {
                        first: 0,
                        count: 0,
                        color: k as u32,
                        pad: r as u32,
                    };
                    p.launch_device(
                        &self.propose,
                        &args![
                            *offsets,
                            *adjacency,
                            *class,
                            self.colors,
                            self.tabu,
                            self.round_base,
                            self.defects[cur],
                            self.defect_count[cur],
                            self.proposal
                        ],
                        range,
                        threads,
                        &self.eject_record,
                    );
                    p.launch_device(
                        &self.resolve,
                        &args![
                            *offsets,
                            *adjacency,
                            *class,
                            self.colors,
                            self.proposal,
                            self.round_base,
                            self.defects[cur],
                            self.defect_count[cur],
                            self.winner
                        ],
                        range,
                        threads,
                        &self.eject_record,
                    );
                    p.launch_device(
                        &self.apply,
                        &args![
                            *offsets,
                            *adjacency,
                            *class,
                            self.proposal,
                            self.winner,
                            self.round_base,
                            self.defects[cur],
                            self.defect_count[cur],
                            self.colors,
                            self.tabu,
                            self.listed,
                            self.defects[next],
                            self.defect_count[next]
                        ],
                        range,
                        threads,
                        &self.eject_record,
                    );
                    self.launch_count(&mut p, next, r + 1);
                }
            }
        }
        p
    }

    /// Append the start of an attempt on class k (`vcolor_eject_start`, which lists the class
    /// in the first list) and the count of that list.
    fn launch_start(&self, p: &mut PlanBuilder, k: usize) {
        p.launch(
            &self.start,
            &args![
                self.colors,
                self.saved,
                self.tabu,
                self.listed,
                self.defects[0],
                self.defect_count[0]
            ],
            ItemRange {
                first: 0,
                count: self.n,
                color: k as u32,
                pad: 0,
            },
        );
        self.launch_count(p, 0, 0);
    }

    /// Append `vcolor_eject_count` for list `filled` (just filled; the other is emptied),
    /// logged at entry `slot` of the defect log.
    fn launch_count(&self, p: &mut PlanBuilder, filled: usize, slot: usize) {
        p.launch_threads(
            &self.eject_count,
            &args![
                self.defect_count[filled],
                self.defect_count[1 - filled],
                self.eject_record,
                self.defect_log
            ],
            ItemRange::new(slot as u32, 1),
            1,
        );
    }

    /// Queue the plan of `kind` (prepared on first use, untimed): one submit.
    fn queue(&mut self, kind: PlanKind) -> Result<()> {
        let i = match self.plans.iter().position(|(k, _, _)| *k == kind) {
            Some(i) => i,
            None => {
                let t = Instant::now();
                let b = self.build(kind);
                let plan = self.rt.prepare(&b)?;
                self.plans.push((kind, plan, b.launches().len()));
                self.setup += t.elapsed();
                self.plans.len() - 1
            }
        };
        let (_, plan, launches) = &self.plans[i];
        self.rt.queue(plan, 1)?;
        self.counts.launches += launches;
        self.counts.submits += 1;
        Ok(())
    }

    /// Read one word back (a submit and a wait).
    fn read_word(&mut self, buffer: &Buffer) -> Result<u32> {
        self.counts.submits += 1;
        self.counts.read_backs += 1;
        Ok(self.rt.read::<u32>(buffer, 0, 1)?[0])
    }
}

impl Engine for ColorReducer<'_> {
    fn max_color(&mut self) -> Result<usize> {
        self.rt.write(&self.largest, 0, &[0u32])?;
        self.rt.queue(&self.max_plan.0, 1)?;
        self.counts.launches += self.max_plan.1;
        self.counts.submits += 1;
        let largest = self.largest.clone();
        Ok(self.read_word(&largest)? as usize)
    }

    fn iterated_greedy(&mut self, k: usize) -> Result<usize> {
        self.queue(PlanKind::Greedy { k })?;
        let largest = self.largest.clone();
        Ok(self.read_word(&largest)? as usize)
    }

    fn eject_start(&mut self, k: usize) -> Result<()> {
        // Queued with the first rounds, one submit.
        self.rt.write(&self.defect_count[0], 0, &[0u32])?;
        self.start_pending = true;
        // The class size is not read back: launched first rounds' grid assumes an average
        // class (a tail first reads it back when it hands the list back).
        self.defects_seen = self.n.div_ceil(k as u32);
        Ok(())
    }

    fn eject_rounds(&mut self, k: usize, first_round: u32, submit: Submit) -> Result<Vec<u32>> {
        let start = std::mem::take(&mut self.start_pending);
        let (kind, words, rounds) = match submit {
            Submit::Launched => {
                let threads = list_threads(self.defects_seen, self.n);
                let kind = PlanKind::EjectRounds { k, threads, start };
                (kind, [first_round, 0, 0, 0], EJECT_WINDOW)
            }
            Submit::Tail {
                rounds,
                bound,
                window_defects,
                cap,
            } => {
                let kind = PlanKind::EjectTail { k, bound, start };
                (
                    kind,
                    [first_round, window_defects, rounds, cap],
                    rounds as usize,
                )
            }
        };
        self.rt.write(&self.round_base, 0, &words)?;
        let t = Instant::now();
        self.queue(kind)?;
        let queued = t.elapsed();
        self.counts.submits += 1;
        self.counts.read_backs += 1;
        let entries = self.rt.read::<u32>(&self.defect_log, 0, rounds + 1)?;
        let log: Vec<u32> = entries[1..]
            .iter()
            .copied()
            .take_while(|&d| d != NOT_RUN)
            .collect();
        // Entry 0: the list the submit started from (all a tail that ran no round tells).
        self.defects_seen = log.last().copied().unwrap_or(entries[0]);
        log::trace!(
            "color reduction: color {k}, {submit:?} from round {first_round}: queued in {:.0} \
             us, read back after {:.0} us; defects {log:?}",
            queued.as_secs_f64() * 1e6,
            t.elapsed().as_secs_f64() * 1e6
        );
        Ok(log)
    }

    fn restore(&mut self) -> Result<()> {
        self.counts.submits += 1;
        self.rt.copy(&self.saved, &self.colors, self.colors.bytes())
    }

    fn setup_time(&self) -> Duration {
        self.setup
    }
}

#[cfg(test)]
mod tests {
    use super::{hopeless, tail_gives_up, TAIL_STOP_MARGIN};

    /// The stop rule on the defect counts (8 rounds apart) of the CPU model's attempts on the
    /// 1.03M-vertex tetrahedral box: 9 -> 8 went on (and succeeded), 8 -> 7 stops at round 16.
    #[test]
    fn ejection_stops_when_the_defects_shrink_too_slowly() {
        assert!(hopeless(34552, 14357, 6));
        assert!(!hopeless(3614, 304, 6));
        assert!(!hopeless(304, 34, 5));
        assert!(hopeless(40, 40, 5));
        assert!(hopeless(40, 41, 5));
        assert!(hopeless(4, 2, 0));
    }

    /// The tail kernel's f32 copy of the stop rule never gives an attempt up where the host's
    /// goes on (the host then needs no round after the tail's stop), and gives it up wherever
    /// the host's ratio passes the windows left by more than the margin.
    #[test]
    fn tail_gives_up_only_where_the_host_does() {
        let (mut host_stops, mut both_stop) = (0, 0);
        for previous in 1..1500u32 {
            for now in 0..=previous + 1 {
                for windows_left in 0..8u32 {
                    let tail = tail_gives_up(previous, now, windows_left);
                    let host = hopeless(previous, now, windows_left as usize);
                    assert!(
                        !tail || host,
                        "{previous} -> {now}, {windows_left} windows left"
                    );
                    if host && !tail {
                        let ratio = (now as f64).ln() / (previous as f64 / now as f64).ln();
                        assert!(
                            ratio <= windows_left as f64 + 2.0 * TAIL_STOP_MARGIN as f64,
                            "{previous} -> {now}: ratio {ratio}, {windows_left} windows left"
                        );
                    }
                    host_stops += usize::from(host);
                    both_stop += usize::from(host && tail);
                }
            }
        }
        assert!(
            both_stop * 100 >= host_stops * 99,
            "the tail gives up at {both_stop} of the host's {host_stops} stops"
        );
    }
}
