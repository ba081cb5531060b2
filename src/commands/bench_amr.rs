//! `chromaflow bench amr`: the seconds of each adaptation phase (GK19 Table 3) on the device
//! and on the host's f64 path, for the same case in one run.

use crate::commands::GlobalArgs;
use chromaflow::error::Error;
use chromaflow::runtime::median;
use chromaflow::solver::dg::amr::driver::DEVICE_TIMING_EVERY;
use chromaflow::solver::dg::amr::gpu::{PhaseSeconds, SmoothingPasses};
use chromaflow::solver::dg::amr::{AmrOptions, AmrStats, Compaction, ReorderPolicy};
use chromaflow::solver::dg::gpu::{Kernel, SurfaceLayout};
use chromaflow::solver::dg::simulation::{group_seconds, KernelSeconds};
use chromaflow::solver::dg::{AdaptationWall, Case, Simulation, SimulationOptions};
use clap::Args;

/// Options of `chromaflow bench amr`.
#[derive(Args, Debug)]
pub struct BenchAmrArgs {
    /// Builtin case: vortex, gk19-vortex, dmr, kh.
    #[arg(long, default_value = "dmr")]
    pub builtin: String,
    /// About this many triangles in the base mesh.
    #[arg(long)]
    pub cells: Option<usize>,
    /// Polynomial order.
    #[arg(long, default_value_t = 1)]
    pub order: usize,
    /// Levels of refinement above the base mesh.
    #[arg(long, default_value_t = 4)]
    pub levels: u8,
    /// eps of GK19 section 4.8 (refine above eps * delta, coarsen below eps / delta), in
    /// units of the density; default: 2% of its range over the initial element means.
    #[arg(long)]
    pub threshold: Option<f64>,
    /// Time steps between adaptations (1..=1000000).
    #[arg(long, default_value_t = 8, value_parser = super::bench_steps())]
    pub every: usize,
    /// Adaptations timed, the median reported (1..=1000000).
    #[arg(long, default_value_t = 20, value_parser = super::bench_steps())]
    pub adaptations: usize,
    /// Skip the host path.
    #[arg(long)]
    pub device_only: bool,
    /// After the device adaptations, time the surface kernel on the adapted mesh and on the
    /// same mesh reordered along a Morton curve (what GK19's compaction costs in locality).
    #[arg(long)]
    pub locality: bool,
    /// When the device path reorders the elements along a Morton curve: auto, never or
    /// every:K (the "reorder" phase is its device time when it runs; the far faces are counted
    /// with the faces of every adaptation).
    #[arg(long, default_value = "auto")]
    pub reorder: String,
    /// How an adaptation closes its holes: in-order (every element in the order of the slot
    /// it came from; the default, as `dg` runs) or gk19 (GK19's Algorithm 4).
    #[arg(long, default_value = "in-order")]
    pub compaction: String,
    /// Time every launch on its own ("phase: kernel" rows; on CUDA in one graph per plan, as
    /// a run issues it): what each adaptation kernel costs on this backend. Each launch pays a
    /// timestamp pair or event of its own, so the rows add up to more than the phases.
    #[arg(long)]
    pub per_launch: bool,
    /// How the device's smoothing applies the 2:1 rules: auto (stages below 8 levels on CUDA
    /// and 5 on wgpu, rounds from there, as `dg` runs), stages (a launch per level) or rounds
    /// (one launch).
    #[arg(long, default_value = "auto")]
    pub smoothing: String,
    /// Surface integral layout of the steps between adaptations: gathered (the default, as
    /// `dg` runs) or colored (a launch per face color; the steps every adaptation share of
    /// BENCHMARKS.md before session 18 were measured with).
    #[arg(long, default_value = "gathered")]
    pub surface: SurfaceLayout,
    /// Print JSON instead of a markdown table.
    #[arg(long)]
    pub json: bool,
}

/// The phase of a timing label: the label itself, or with `--per-launch` its part before
/// ": " ("compact: amr_scan" -> "compact").
fn phase_of(label: &str) -> &str {
    label.split_once(": ").map_or(label, |(phase, _)| phase)
}

/// The reorder's device seconds over the timed adaptations it ran in (its row of the phase
/// table is a median over all, mostly 0): their median and how many.
fn reorder_when_run(rows: &[(usize, PhaseSeconds)]) -> Option<(f64, usize)> {
    let ran: Vec<f64> = rows
        .iter()
        .filter_map(|(_, p)| {
            let s: f64 = p
                .iter()
                .filter(|(l, _)| phase_of(l) == "reorder")
                .map(|(_, s)| s)
                .sum();
            (s > 0.0).then_some(s)
        })
        .collect();
    (!ran.is_empty()).then(|| (median(&ran), ran.len()))
}

/// Median seconds per phase, in the order the phases first appear, and the median elements.
fn medians(rows: &[(usize, PhaseSeconds)]) -> (f64, PhaseSeconds) {
    let mut labels: Vec<&'static str> = Vec::new();
    for (_, phases) in rows {
        for (l, _) in phases {
            if !labels.contains(l) {
                labels.push(l);
            }
        }
    }
    let per_label = labels
        .iter()
        .map(|l| {
            let v: Vec<f64> = rows
                .iter()
                // From +0: an adaptation without the phase (a reorder that did not run) is 0 s.
                .map(|(_, p)| {
                    p.iter()
                        .filter(|(k, _)| k == l)
                        .fold(0.0, |acc, (_, s)| acc + s)
                })
                .collect();
            (*l, median(&v))
        })
        .collect();
    let elements: Vec<f64> = rows.iter().map(|(n, _)| *n as f64).collect();
    (median(&elements), per_label)
}

/// Seconds per step of each step kernel group as adapted and along a Morton curve.
type StepKernels = (KernelSeconds, KernelSeconds);

/// Untimed adaptations as a run pays them. The locality policy's reorders ride on some
/// adaptations (their device work lands in the second batch), so the adaptations with one
/// and without one are reported apart, and the mean over all is what a run pays on average.
struct WallMedians {
    /// Median over the adaptations that changed the mesh without a reorder (over all that
    /// changed it when every one reordered, over all when none changed it).
    adapt: f64,
    /// Adaptations that changed the mesh, and those that changed nothing (they stop after the
    /// smoothing) with their median.
    changed: usize,
    unchanged: usize,
    adapt_unchanged: Option<f64>,
    /// Median over the adaptations with a reorder, and how many there were.
    adapt_reordered: Option<f64>,
    reordered: usize,
    /// Mean over all the adaptations, reorders and those that changed nothing included.
    adapt_mean: f64,
    /// Adaptations that did not grow the buffers: the figures are over these (a growth
    /// rebuilds the solver and compiles its kernels, once per growth; over all when every one
    /// grew).
    steady: usize,
    /// Adaptations that grew the buffers.
    grew: usize,
    steps: f64,
    /// The most read-backs one adaptation adds.
    reads: u64,
    /// Medians of [`AdaptationWall`]'s parts over the same adaptations as `adapt`: first
    /// batch, host, second batch, and the later batch's extra time.
    parts: [f64; 4],
    /// Median device time of the same adaptations' work (timestamps) over those a run times
    /// (one in [`DEVICE_TIMING_EVERY`]), and how many those were.
    device: Option<f64>,
    device_timed: usize,
}

fn wall_medians(walls: &[AdaptationWall]) -> WallMedians {
    let (grew, steady): (Vec<&AdaptationWall>, Vec<&AdaptationWall>) =
        walls.iter().partition(|w| w.grew);
    let steady = if steady.is_empty() {
        grew.clone()
    } else {
        steady
    };
    let (changed, unchanged): (Vec<&AdaptationWall>, Vec<&AdaptationWall>) =
        steady.iter().partition(|w| w.changed);
    let changed = if changed.is_empty() {
        &unchanged
    } else {
        &changed
    };
    let (with, without): (Vec<&AdaptationWall>, Vec<&AdaptationWall>) =
        changed.iter().partition(|w| w.reordered);
    let plain = if without.is_empty() { &with } else { &without };
    let of = |part: fn(&AdaptationWall) -> f64| {
        median(&plain.iter().map(|w| part(w)).collect::<Vec<_>>())
    };
    let adapt: Vec<f64> = steady.iter().map(|w| w.adapt_seconds).collect();
    let device: Vec<f64> = plain.iter().filter_map(|w| w.device_seconds).collect();
    WallMedians {
        adapt: of(|w| w.adapt_seconds),
        changed: steady.len() - unchanged.len(),
        unchanged: unchanged.len(),
        adapt_unchanged: (!unchanged.is_empty()).then(|| {
            median(
                &unchanged
                    .iter()
                    .map(|w| w.adapt_seconds)
                    .collect::<Vec<_>>(),
            )
        }),
        adapt_reordered: (!with.is_empty())
            .then(|| median(&with.iter().map(|w| w.adapt_seconds).collect::<Vec<_>>())),
        reordered: with.len(),
        steady: steady.len(),
        grew: grew.len(),
        adapt_mean: adapt.iter().sum::<f64>() / adapt.len().max(1) as f64,
        steps: median(&steady.iter().map(|w| w.steps_seconds).collect::<Vec<_>>()),
        reads: steady.iter().map(|w| w.readbacks).max().unwrap_or(0),
        parts: [
            of(|w| w.first_batch_seconds),
            of(|w| w.host_seconds),
            of(|w| w.second_batch_seconds),
            of(|w| w.later_batch_seconds),
        ],
        device: (!device.is_empty()).then(|| median(&device)),
        device_timed: device.len(),
    }
}

/// Launches of one adaptation.
fn launch_total(launches: &[(&'static str, usize)]) -> usize {
    launches.iter().map(|(_, n)| n).sum()
}

/// The smoothing per adaptation: the device's stages and the slots its smoothing in rounds
/// handed to its last workgroup (mean, most) or the host's passes (mean, most, and the slots
/// the same smoothings hand off in rounds as the device runs them).
fn smoothing_json(stats: Option<AmrStats>, device: bool) -> Option<serde_json::Value> {
    let s = stats?;
    if device {
        let n = s.device_adaptations.max(1) as f64;
        return Some(serde_json::json!({
            "stages_mean": s.device_smoothing_stages as f64 / n,
            "stages_max": s.device_smoothing_stages_max,
            "handed_off_mean": s.device_smoothing_handed_off as f64 / n,
            "handed_off_max": s.device_smoothing_handed_off_max,
        }));
    }
    let n = s.adaptations.saturating_sub(s.device_adaptations).max(1) as f64;
    Some(serde_json::json!({
        "passes_mean": s.smoothing_passes as f64 / n,
        "passes_max": s.host_smoothing_passes_max,
        "handed_off_mean": s.rounds_smoothing_handed_off as f64 / n,
        "handed_off_max": s.rounds_smoothing_handed_off_max,
    }))
}

pub fn run(args: &BenchAmrArgs, global: &GlobalArgs) -> anyhow::Result<()> {
    let rt = global.runtime()?;
    rt.set_time_each_launch(args.per_launch);
    let mut case = Case::builtin(&args.builtin, args.cells)?;
    case.order = args.order;
    let mut results = Vec::new();
    let mut step_kernels: Option<StepKernels> = None;
    let reorder = ReorderPolicy::parse(&args.reorder)?;
    let compaction = Compaction::parse(&args.compaction)
        .map_err(|e| Error::Invalid(format!("--compaction: {e}")))?;
    let chosen = SmoothingPasses::parse(&args.smoothing)
        .map_err(|e| Error::Invalid(format!("--smoothing: {e}")))?;
    let smoothing = chosen
        .unwrap_or_else(|| SmoothingPasses::for_levels(args.levels, rt.cheap_dependent_launches()));
    let mut stats = None;
    let mut host_stats = None;
    let mut launches = None;
    let mut walls = None;
    let mut reorders_timed = None;
    let mut timed_unchanged = None;
    for on_host in [false, true] {
        if on_host && args.device_only {
            continue;
        }
        case.amr = Some(AmrOptions {
            max_level: args.levels,
            every: Some(args.every),
            threshold: args.threshold,
            on_host,
            reorder,
            compaction,
            smoothing: chosen,
            ..AmrOptions::default()
        });
        let options = SimulationOptions {
            surface: Some(args.surface),
            ..SimulationOptions::default()
        };
        let mut sim = Simulation::new(&case, &rt, &options)?;
        let rows = sim.time_adaptations(args.every, args.adaptations)?;
        if !on_host {
            walls = Some(wall_medians(
                &sim.time_adaptation_walls(args.every, args.adaptations)?,
            ));
        }
        if !on_host {
            reorders_timed = reorder_when_run(&rows);
        }
        // GK19 Table 3's phases over the adaptations that changed the mesh; those that changed
        // nothing ran only the flags and the smoothing.
        let (changed, unchanged): (Vec<_>, Vec<_>) = rows
            .iter()
            .cloned()
            .partition(|(_, p)| on_host || p.iter().any(|(l, _)| phase_of(l) == "coarsen"));
        if !on_host {
            timed_unchanged = Some((unchanged.len(), rows.len()));
        }
        let (elements, phases) = medians(if changed.is_empty() {
            &unchanged
        } else {
            &changed
        });
        results.push((
            if on_host { "host f64" } else { "device" },
            elements,
            phases,
        ));
        if on_host {
            host_stats = sim.amr_stats();
        } else {
            stats = sim.amr_stats();
            launches = sim.adaptation_launches();
        }
        if args.locality && !on_host {
            step_kernels = sim.step_kernels_locality(20)?;
        }
    }
    let surface = |t: &[(Kernel, f64)]| group_seconds(t, Kernel::Surface);
    let locality = step_kernels
        .as_ref()
        .map(|(adapted, reordered)| (surface(adapted), surface(reordered)));
    let kernels_json = step_kernels.as_ref().map(|(adapted, reordered)| {
        adapted
            .iter()
            .map(|(k, s)| {
                let morton = 1e6 * group_seconds(reordered, *k);
                serde_json::json!({"kernel": format!("{k:?}"), "adapted_us": 1e6 * s, "morton_us": morton})
            })
            .collect::<Vec<_>>()
    });
    if args.json {
        let json: Vec<serde_json::Value> = results
            .iter()
            .map(|(path, elements, phases)| {
                serde_json::json!({
                    "path": path,
                    "device": rt.name(),
                    "case": args.builtin,
                    "order": args.order,
                    "levels": args.levels,
                    "surface": args.surface.name(),
                    "elements": elements,
                    "surface_per_step_adapted_vs_morton": locality,
                    "step_kernels_per_step": kernels_json,
                    "reorder": reorder.to_string(),
                    "compaction": compaction.to_string(),
                    "smoothing": smoothing.to_string(),
                    "reorders": stats.map(|s| s.reorders),
                    "reorder_us_when_run": reorders_timed.map(|(s, _)| 1e6 * s),
                    "far_fraction": stats.map(|s| s.far_fraction),
                    "untimed_adaptation_us": walls.as_ref().map(|w| 1e6 * w.adapt),
                    "untimed_adaptation_with_reorder_us": walls.as_ref().and_then(|w| w.adapt_reordered.map(|s| 1e6 * s)),
                    "untimed_adaptations_with_reorder": walls.as_ref().map(|w| w.reordered),
                    "untimed_adaptations_that_grew": walls.as_ref().map(|w| w.grew),
                    "untimed_adaptation_mean_us": walls.as_ref().map(|w| 1e6 * w.adapt_mean),
                    "untimed_adaptations_unchanged": walls.as_ref().map(|w| w.unchanged),
                    "untimed_adaptation_unchanged_us": walls.as_ref().and_then(|w| w.adapt_unchanged.map(|s| 1e6 * s)),
                    "timed_adaptations_unchanged": (*path == "device").then_some(timed_unchanged).flatten().map(|(n, _)| n),
                    "untimed_adaptation_parts_us": walls.as_ref().map(|w| serde_json::json!({
                        "first_batch": 1e6 * w.parts[0],
                        "host": 1e6 * w.parts[1],
                        "second_batch": 1e6 * w.parts[2],
                        "later_batch": 1e6 * w.parts[3],
                        "device_time": w.device.map(|s| 1e6 * s),
                    })),
                    "steps_between_us": walls.as_ref().map(|w| 1e6 * w.steps),
                    "added_readbacks_per_adaptation_max": walls.as_ref().map(|w| w.reads),
                    "launches": (*path == "device").then_some(launches.as_ref()).flatten().map(
                        |l| l
                            .iter()
                            .map(|(k, n)| (k.to_string(), serde_json::json!(n)))
                            .collect::<serde_json::Map<_, _>>()
                    ),
                    "launches_per_adaptation_one_submission": launches.as_ref().map(|l| launch_total(l)),
                    "smoothing": if *path == "device" {
                        smoothing_json(stats, true)
                    } else {
                        smoothing_json(host_stats, false)
                    },
                    "microseconds": phases
                        .iter()
                        .map(|(l, s)| (l.to_string(), serde_json::json!(1e6 * s)))
                        .collect::<serde_json::Map<_, _>>(),
                })
            })
            .collect();
        println!("{}", serde_json::to_string_pretty(&json)?);
        return Ok(());
    }
    println!(
        "adaptation of {} (p = {}, {} levels, every {} steps, {} surface) on {}: median of {} \
         adaptations\n",
        args.builtin,
        args.order,
        args.levels,
        args.every,
        args.surface.name(),
        rt.name(),
        args.adaptations
    );
    for (path, elements, phases) in &results {
        let device = *path == "device";
        println!("{path} path, {elements:.0} elements:\n");
        if device {
            println!("| phase | microseconds | launches |\n|---|---:|---:|");
        } else {
            println!("| phase | microseconds |\n|---|---:|");
        }
        for (l, s) in phases {
            let launched = match (args.per_launch, &launches) {
                (true, _) if l.contains(": ") => "1".to_string(),
                (true, _) => String::new(),
                (false, Some(v)) => v
                    .iter()
                    .find(|(k, _)| k == l)
                    .map_or(String::new(), |(_, n)| n.to_string()),
                (false, None) => String::new(),
            };
            if device {
                println!("| {l} | {:.1} | {launched} |", 1e6 * s);
            } else {
                println!("| {l} | {:.1} |", 1e6 * s);
            }
        }
        println!();
    }
    if let Some(l) = &launches {
        println!("device path: {} launches per adaptation", launch_total(l));
    }
    if let Some((n, all)) = timed_unchanged.filter(|(n, _)| *n > 0) {
        println!(
            "device path: {n} of the {all} timed adaptations coarsened and refined nothing and \
             stopped after the smoothing; the phases above are the medians of {}",
            if n == all {
                "those".to_string()
            } else {
                format!("the other {}", all - n)
            }
        );
    }
    if let Some((s, n)) = reorders_timed {
        println!(
            "device path reorder, when it runs: {:.1} us (median of the {n} timed adaptations \
             it ran in)",
            1e6 * s
        );
    }
    if let Some(s) = stats.filter(|s| s.device_adaptations > 0) {
        let per = |n: usize| n as f64 / s.device_adaptations as f64;
        println!(
            "device path smoothing ({smoothing}): {:.2} stages per adaptation, at most {}; {:.2} \
             slots handed to the last workgroup, at most {}",
            per(s.device_smoothing_stages),
            s.device_smoothing_stages_max,
            per(s.device_smoothing_handed_off),
            s.device_smoothing_handed_off_max
        );
    }
    if let Some(s) = host_stats.filter(|s| s.adaptations > s.device_adaptations) {
        let per = |n: usize| n as f64 / (s.adaptations - s.device_adaptations) as f64;
        println!(
            "host f64 path smoothing: {:.2} passes per adaptation, at most {}; in rounds (as \
             the device runs them) {:.2} slots handed off, at most {}",
            per(s.smoothing_passes),
            s.host_smoothing_passes_max,
            per(s.rounds_smoothing_handed_off),
            s.rounds_smoothing_handed_off_max
        );
    }
    println!();
    if let Some(s) = stats {
        println!(
            "device path, reorder {reorder}, compaction {compaction}: {} reorders in {} \
             adaptations, {:.1}% of the faces far apart in memory at the last adaptation's \
             start\n",
            s.reorders,
            s.adaptations,
            100.0 * s.far_fraction
        );
    }
    if let Some(w) = &walls {
        let share = |adapt: f64| 100.0 * adapt / (adapt + w.steps);
        println!(
            "device path as a run pays it (two batches of steps with their clocks, with and \
             without the adaptation between them; phases untimed): {:.1} us per adaptation \
             that changed the mesh, without a reorder ({} of {}), adding at most {} \
             read-backs; the {} steps between two take {:.1} us, so adapting is {:.1}% of the \
             run; medians of its parts: {:.1} \
             us added to the first batch (flags and smoothing), {:.1} us on the host between \
             the batches, {:.1} us added to the second batch (the adaptation's device work); \
             the batch after that takes {:.1} us more than one before the adaptation (the \
             adapted mesh's own cost, not counted above)",
            1e6 * w.adapt,
            w.changed - w.reordered,
            w.steady,
            w.reads,
            args.every,
            1e6 * w.steps,
            share(w.adapt),
            1e6 * w.parts[0],
            1e6 * w.parts[1],
            1e6 * w.parts[2],
            1e6 * w.parts[3]
        );
        if let Some(device) = w.device {
            println!(
                "the same adaptations' work on the device (timestamps around its plans, as a \
                 run's report gives it, on the {} of them a run times, one in {}): {:.1} us \
                 each, median",
                w.device_timed,
                DEVICE_TIMING_EVERY,
                1e6 * device
            );
        }
        if let Some(unchanged) = w.adapt_unchanged {
            println!(
                "{} of the {} adaptations changed nothing and stopped after the smoothing: \
                 {:.1} us each as a run pays it; over all, {:.1} us per adaptation on average, \
                 {:.1}% of the run",
                w.unchanged,
                w.steady,
                1e6 * unchanged,
                1e6 * w.adapt_mean,
                share(w.adapt_mean)
            );
        }
        if let Some(reordered) = w.adapt_reordered {
            println!(
                "with the locality policy's reorders ({} of the {} adaptations, {:.1} us each \
                 as a run pays it): {:.1} us per adaptation on average, {:.1}% of the run",
                w.reordered,
                w.steady,
                1e6 * reordered,
                1e6 * w.adapt_mean,
                share(w.adapt_mean)
            );
        }
        if w.grew > 0 && w.steady < args.adaptations {
            println!(
                "left out of these figures: {} of the {} adaptations, which first grew the \
                 buffers (the solver rebuilt and its kernels compiled for more room, once per \
                 growth)",
                w.grew, args.adaptations
            );
        }
        println!();
    }
    if let Some((adapted, reordered)) = locality {
        println!(
            "surface kernel per step after the adaptations: {:.1} us as adapted, {:.1} us with \
             the elements along a Morton curve ({:.2}x)",
            1e6 * adapted,
            1e6 * reordered,
            adapted / reordered
        );
    }
    if let Some((adapted, reordered)) = &step_kernels {
        let parts: Vec<String> = adapted
            .iter()
            .map(|(k, s)| {
                let morton = group_seconds(reordered, *k);
                format!("{k:?} {:.1} / {:.1}", 1e6 * s, 1e6 * morton)
            })
            .collect();
        let total = |t: &[(Kernel, f64)]| 1e6 * t.iter().map(|(_, s)| s).sum::<f64>();
        println!(
            "step kernels per step, us as adapted / along a Morton curve: {}; all {:.1} / {:.1}",
            parts.join(", "),
            total(adapted),
            total(reordered)
        );
    }
    Ok(())
}
