//! Conformance of the scan, the min-reduction, bounded launches, read-backs queued ahead, device
//! timers and the speculative vertex coloring.

use super::Report;
use crate::color::gpu_vertices::{color_vertices_gpu, GpuColoringVariant};
use crate::color::reduce::{
    hashed_order_coloring, reduce_colors_cpu, reduce_colors_gpu, ColorReduction,
};
use crate::color::vertices::{check_vertex_coloring, color_vertices, VertexOrder};
use crate::error::Result;
use crate::mesh::generate3d::{tet_box, TetSplit};
use crate::mesh::{generate, Csr, Topology};
use crate::runtime::reduce::gpu_min;
use crate::runtime::scan::{exclusive_scan_cpu, gpu_exclusive_scan};
use crate::runtime::{ItemRange, PlanBuilder, Runtime, ThreadBound, WORKGROUP_SIZE};

/// No edge joins two vertices of one color; classes use disjoint colors.
fn proper(adj: &Csr, colors: &[u32], class: Option<&[u32]>) -> bool {
    let edges_ok =
        (0..adj.num_rows()).all(|v| adj.row(v).iter().all(|&u| colors[v] != colors[u as usize]));
    let classes_ok = class.is_none_or(|class| {
        let mut owner = std::collections::HashMap::new();
        colors
            .iter()
            .zip(class)
            .all(|(&c, &k)| *owner.entry(c).or_insert(k) == k)
    });
    edges_ok && classes_ok
}

/// Whether `equal(n)` holds for every size `n`, as a check result: "all equal" or the sizes
/// where it fails.
fn equal_at(
    sizes: &[usize],
    mut equal: impl FnMut(usize) -> Result<bool>,
) -> Result<(String, bool)> {
    let mut bad = Vec::new();
    for &n in sizes {
        if !equal(n)? {
            bad.push(n);
        }
    }
    Ok(if bad.is_empty() {
        ("all equal".to_string(), true)
    } else {
        (format!("mismatch at n = {bad:?}"), false)
    })
}

/// The exclusive prefix sum at every level count (n = 1 .. 1000003) and the min-reduction,
/// against the CPU exactly; a bounded launch as its bound moves (`bounded_copies`); read-backs
/// queued ahead of work that overwrites their words (`read_ahead_copies`); the
/// speculative vertex coloring on rect:20000@3 in both variants
/// (proper, checked by [`check_vertex_coloring`] too, no conflict in the last round, at most
/// 1.1 x the sequential greedy count + 1: Li et al. report a few percent more), with boundary
/// classes on disk:3000@1 (disjoint colors, numbered without gaps), and on a path of 3
/// vertices (2 colors; a class list of the wrong length is an error).
pub fn coloring(report: &mut Report, b: &Runtime) {
    let kind = b.kind();
    report.check(
        "prefix sum n = 1 .. 1000003 (7 sizes)",
        kind,
        "exact",
        || {
            equal_at(&[1, 5, 256, 257, 65_536, 65_537, 1_000_003], |n| {
                let values: Vec<u32> = (0..n)
                    .map(|i| ((i * 2_654_435_761) >> 7) as u32 % 3)
                    .collect();
                let (gpu, total) = gpu_exclusive_scan(b, &values)?;
                Ok(gpu == exclusive_scan_cpu(&values) && total == values.iter().sum::<u32>())
            })
        },
    );
    report.check("min-reduction n = 1 .. 1000003", kind, "exact", || {
        equal_at(&[1, 255, 256, 257, 65_537, 1_000_003], |n| {
            let values: Vec<f32> = (0..n)
                .map(|i| 1.0 + (((i * 2_654_435_761) >> 5) % 100_000) as f32)
                .collect();
            let want = values.iter().copied().fold(f32::INFINITY, f32::min);
            Ok(gpu_min(b, &values)? == want)
        })
    });
    report.check(
        "bounded launch: the bound as queued, 5 queues of one plan",
        kind,
        "exact",
        || bounded_copies(b),
    );
    report.check(
        "read-ahead: the words as queued, with later work queued behind it",
        kind,
        "exact",
        || read_ahead_copies(b),
    );
    report.check(
        "device timer: spans of the work queued in them, read later",
        kind,
        "a long plan's span > 8 x a one-launch plan's, spans <= the wall time; 1 of 3 tries",
        || timed_spans(b),
    );
    for variant in [GpuColoringVariant::Topology, GpuColoringVariant::Data] {
        let name = format!("vertex coloring {variant:?} rect:20000@3");
        report.check(&name, kind, "proper, colors <= 1.1 greedy + 1", || {
            let mesh = generate::builtin("rect:20000@3")?;
            let topo = Topology::build(&mesh)?;
            let adj = &topo.vertex_neighbors;
            let greedy = color_vertices(adj, VertexOrder::Natural, None)?.num_colors;
            let res = color_vertices_gpu(b, adj, None, variant)?;
            let ok = proper(adj, &res.colors, None)
                && check_vertex_coloring(adj, &res.colors, None).is_ok()
                && res.conflicts_per_round.last() == Some(&0)
                && res.num_colors as f64 <= 1.1 * greedy as f64 + 1.0;
            Ok((
                format!(
                    "{} colors (greedy {greedy}), {} rounds",
                    res.num_colors, res.rounds
                ),
                ok,
            ))
        });
    }
    // The default runs this box's rounds in the tail kernel; 0 in the launched rounds alone.
    for (name, tail_defects) in [
        (
            "color reduction tet box 10, hashed-order start",
            ColorReduction::default().tail_defects,
        ),
        (
            "color reduction tet box 10, hashed-order start, launched rounds only",
            0,
        ),
    ] {
        report.check(name, kind, "exact (CPU reference)", || {
            let adj = Topology::build(&tet_box(10, 10, 10, TetSplit::Six)?)?.vertex_neighbors;
            let start = hashed_order_coloring(&adj);
            let opts = ColorReduction {
                tail_defects,
                ..ColorReduction::default()
            };
            let (cpu, cpu_report) = reduce_colors_cpu(&adj, None, &start, &opts)?;
            let (gpu, gpu_report) = reduce_colors_gpu(b, &adj, None, &start, &opts)?;
            Ok((
                format!(
                    "{} -> {} colors, {} ejections, {} tail submits",
                    gpu_report.colors_before,
                    gpu_report.colors_after,
                    gpu_report.ejections,
                    gpu_report.tail_submits
                ),
                gpu == cpu
                    && gpu_report.colors_after == cpu_report.colors_after
                    && gpu_report.tail_submits == cpu_report.tail_submits,
            ))
        });
    }
    report.check(
        "vertex coloring boundary classes disk:3000@1",
        kind,
        "proper, disjoint classes, no gaps",
        || {
            let mesh = generate::builtin("disk:3000@1")?;
            let topo = Topology::build(&mesh)?;
            let class: Vec<u32> = topo
                .boundary_vertices(mesh.num_points())
                .iter()
                .map(|&x| x as u32)
                .collect();
            let res = color_vertices_gpu(
                b,
                &topo.vertex_neighbors,
                Some(&class),
                GpuColoringVariant::Data,
            )?;
            let used: std::collections::BTreeSet<u32> = res.colors.iter().copied().collect();
            let ok = proper(&topo.vertex_neighbors, &res.colors, Some(&class))
                && used.len() == res.num_colors;
            Ok((format!("{} colors", res.num_colors), ok))
        },
    );
    report.check(
        "vertex coloring path of 3, bad class length",
        kind,
        "2 colors, error",
        || {
            let adj = Csr::from_pairs(3, &[(0, 1), (1, 0), (1, 2), (2, 1)]);
            let rejected =
                color_vertices_gpu(b, &adj, Some(&[0, 1]), GpuColoringVariant::Data).is_err();
            let res = color_vertices_gpu(b, &adj, None, GpuColoringVariant::Topology)?;
            Ok((
                format!("{} colors, bad classes rejected {rejected}", res.num_colors),
                rejected && res.num_colors == 2 && proper(&adj, &res.colors, None),
            ))
        },
    );
}

/// One prepared plan of a `stream_copy` launch over 500 items, bounded by a [`ThreadBound`]
/// set before each of five queues (down, up, to 1, past the items): each queue copies exactly
/// the items of the workgroups the bound asks for, `min(500, 64 ceil(bound / 64))`, and leaves
/// the rest alone. The second queue on CUDA captures the plan's graph and the later ones
/// update its node, so a bound read at prepare or capture only fails here.
/// Two rounds of read-backs queued ahead of copies that overwrite what they read, finished in
/// reverse order: each must hold the buffer as it stood at its point of the queue (a
/// read-ahead that waited for everything, or copied late, would see the last copy's values),
/// and a plain read then the last values. Each round reads three ways, for CUDA's two paths: the
/// whole buffer and its words but the last (at offset 0, a copy kernel, the second rounding its
/// words up to whole float4s), and its words from the second on (an offset that is no whole
/// float4: the copy engine). The second round queues its plan and first read together
/// (`queue_then_read_ahead`, on wgpu one submission), the plan a span of a device timer, which
/// must then hold one positive span.
fn read_ahead_copies(b: &Runtime) -> Result<(String, bool)> {
    const ITEMS: u32 = 300;
    const WORDS: usize = 4 * ITEMS as usize;
    let copy = b.kernel("stream_copy", &[])?;
    let src = b.zeroed::<[f32; 4]>("read-ahead source", ITEMS as usize)?;
    let dst = b.zeroed::<[f32; 4]>("read-ahead destination", ITEMS as usize)?;
    let mut builder = PlanBuilder::new();
    builder.launch(&copy, &crate::args![src, dst], ItemRange::all(ITEMS));
    let plan = b.prepare(&builder)?;
    let values = |round: u32| -> Vec<[f32; 4]> {
        (0..ITEMS).map(|i| [(1000 * round + i) as f32; 4]).collect()
    };
    let words = |round: u32| -> Vec<u32> { bytemuck::cast_vec(values(round)) };
    let timer = b.device_timer(1);
    let mut pending = Vec::new();
    for round in 1..=2 {
        b.write(&src, 0, &values(round))?;
        let items = if round == 1 {
            b.queue(&plan, 1)?;
            b.read_ahead::<[f32; 4]>(&dst, 0, ITEMS as usize)?
        } else {
            b.queue_then_read_ahead::<[f32; 4]>(&plan, timer.as_ref(), &dst, 0, ITEMS as usize)?
        };
        pending.push((
            round,
            items,
            b.read_ahead::<u32>(&dst, 0, WORDS - 1)?,
            b.read_ahead::<u32>(&dst, 1, WORDS - 1)?,
        ));
    }
    b.write(&src, 0, &values(3))?;
    b.queue(&plan, 20)?;
    let mut right = 0;
    while let Some((round, items, head, tail)) = pending.pop() {
        right += usize::from(b.finish_read(items)? == values(round));
        right += usize::from(b.finish_read(head)? == words(round)[..WORDS - 1]);
        right += usize::from(b.finish_read(tail)? == words(round)[1..]);
    }
    let last: Vec<[f32; 4]> = b.read(&dst, 0, ITEMS as usize)?;
    right += usize::from(last == values(3));
    let spans = match &timer {
        Some(timer) => b.drain_timer(timer)?,
        None => vec![1.0],
    };
    let timed = spans.len() == 1 && spans[0] > 0.0;
    Ok((
        format!("{right} of 7 exact; the timed plan's span {spans:?} s"),
        right == 7 && timed,
    ))
}

/// Spans of a device timer around a plan of one copy and one of 64 copies (each moving 1 MiB),
/// queued as short, long, short with nothing waited for, then a long one recorded ahead and
/// submitted timed after the timer was read: every span must be positive, each long one more
/// than 8 times either short one (a span taken before its work, or after it, or a timestamp
/// reused unreset, breaks that), and their sum within the wall time from the first queue to the
/// read. Both plans are queued twice untimed first: a span measures the device from the end of
/// the work before it, so a plan's first queues (on CUDA the second captures its graph, host
/// work the device waits on) would be in it. An adapter with timestamps must give a timer, one
/// without none.
fn timed_spans(b: &Runtime) -> Result<(String, bool)> {
    const ITEMS: u32 = 1 << 16;
    let Some(timer) = b.device_timer(4) else {
        let ok = !b.has_timestamps();
        return Ok(("no timer (the adapter has no timestamps)".into(), ok));
    };
    let copy = b.kernel("stream_copy", &[])?;
    let src = b.zeroed::<[f32; 4]>("timed copy source", ITEMS as usize)?;
    let dst = b.zeroed::<[f32; 4]>("timed copy destination", ITEMS as usize)?;
    let mut one = PlanBuilder::new();
    one.launch(&copy, &crate::args![src, dst], ItemRange::all(ITEMS));
    let mut many = PlanBuilder::new();
    for _ in 0..64 {
        many.launch(&copy, &crate::args![src, dst], ItemRange::all(ITEMS));
    }
    let (one, many) = (b.prepare(&one)?, b.prepare(&many)?);
    for plan in [&one, &one, &many, &many] {
        b.queue(plan, 1)?;
    }
    b.wait()?;
    let us = |s: &[f64]| {
        s.iter()
            .map(|v| format!("{:.1}", v * 1e6))
            .collect::<Vec<_>>()
            .join(", ")
    };
    // On a CPU adapter the other checks running at the same time (cargo runs a file's tests
    // in parallel) can stall one span for milliseconds: up to three attempts, each of which
    // must hold whole. A timer whose spans do not follow the work queued in them fails all
    // three.
    let mut attempts = Vec::new();
    for _ in 0..3 {
        // The timed work queued behind busy work, as a run queues its adaptations: a span
        // opens when the work before it is done, so on an idle stream it would hold the host's
        // time to queue the plan (39.3 us for the first one-launch span on an H200's CUDA,
        // failing the 8 x check against 95.1 us).
        b.queue(&many, 1)?;
        let started = std::time::Instant::now();
        b.queue_timed(&one, 1, Some(&timer))?;
        b.queue_timed(&many, 1, Some(&timer))?;
        b.queue_timed(&one, 1, Some(&timer))?;
        let first = b.drain_timer(&timer)?;
        let wall = started.elapsed().as_secs_f64();
        let recorded = b.record(&many, 1)?;
        b.submit_timed(&many, recorded, Some(&timer))?;
        let second = b.drain_timer(&timer)?;
        let empty = b.drain_timer(&timer)?;
        let ok = match (first.as_slice(), second.as_slice()) {
            ([a, long, c], [again]) => {
                let short = a.max(*c);
                a.min(*c) > 0.0
                    && *long > 8.0 * short
                    && *again > 8.0 * short
                    && a + long + c <= 1.05 * wall
                    && empty.is_empty()
            }
            _ => false,
        };
        attempts.push(format!(
            "spans {} us, then {} us (wall {:.1} us)",
            us(&first),
            us(&second),
            wall * 1e6
        ));
        if ok {
            return Ok((attempts.join("; "), true));
        }
    }
    Ok((attempts.join("; "), false))
}

fn bounded_copies(b: &Runtime) -> Result<(String, bool)> {
    const ITEMS: u32 = 500;
    let copy = b.kernel("stream_copy", &[])?;
    let src = b.zeroed::<[f32; 4]>("bounded copy source", ITEMS as usize)?;
    let dst = b.zeroed::<[f32; 4]>("bounded copy destination", ITEMS as usize)?;
    let bound = ThreadBound::new(ITEMS);
    let mut builder = PlanBuilder::new();
    builder
        .launch(&copy, &crate::args![src, dst], ItemRange::all(ITEMS))
        .bounded(&bound);
    let plan = b.prepare(&builder)?;
    let mut wrong = Vec::new();
    for (round, threads) in [128u32, 64, 320, 1, 1000].into_iter().enumerate() {
        let value = |i: u32| (1000 * (round + 1)) as f32 + i as f32;
        let source: Vec<[f32; 4]> = (0..ITEMS).map(|i| [value(i); 4]).collect();
        b.write(&src, 0, &source)?;
        b.write(&dst, 0, &vec![[0f32; 4]; ITEMS as usize])?;
        bound.set(threads);
        b.queue(&plan, 1)?;
        let copied = ITEMS.min(threads.div_ceil(WORKGROUP_SIZE) * WORKGROUP_SIZE);
        let got: Vec<[f32; 4]> = b.read(&dst, 0, ITEMS as usize)?;
        let right = (0..ITEMS).all(|i| {
            let want = if i < copied { value(i) } else { 0.0 };
            got[i as usize] == [want; 4]
        });
        if !right {
            wrong.push(threads);
        }
    }
    Ok(if wrong.is_empty() {
        ("5 of 5 exact".to_string(), true)
    } else {
        (format!("wrong items copied with bounds {wrong:?}"), false)
    })
}
