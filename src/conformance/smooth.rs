//! Smoothing conformance: metric-field vertex smoothing on every sampling path against the
//! f64 CPU reference, and the hardware-filter probe compared across backends.

use super::{ready, Report};
use crate::error::Result;
use crate::mesh::generate;
use crate::runtime::{BackendKind, Runtime};
use crate::solver::smooth::cpu::positions;
use crate::solver::smooth::gpu::GpuSmoother;
use crate::solver::smooth::{
    sweep_cpu, MetricSpec, MetricTexture, Sampling, Schedule, SmoothParams, SmoothTopology,
    TexelPrecision, TextureSampler, WeightMode,
};

/// Largest |a - b| over the coordinates of positions.
fn max_position_diff(a: &[[f64; 2]], b: &[[f64; 2]]) -> f64 {
    a.iter()
        .zip(b)
        .map(|(p, q)| (p[0] - q[0]).abs().max((p[1] - q[1]).abs()))
        .fold(0.0, f64::max)
}

/// The smoothing problem of every check: rect:700@5 with the shock metric on a 48x48 texture,
/// the starting positions rounded to f32 (what the GPU starts from), on the deterministic
/// sequential greedy schedule, the same on every backend: the GPU speculative coloring is racy,
/// and on different schedules the backends would run different experiments (with different
/// 1/256-weight effects; on the H200 the wgpu and CUDA 20-sweep references differed). The GPU
/// coloring has its own checks ([`super::coloring`]).
struct Setup {
    topo: SmoothTopology,
    schedule: Schedule,
    tex: MetricTexture,
    start: Vec<[f64; 2]>,
}

const SPEC: &str = "rect:700@5";

fn setup() -> Result<Setup> {
    let mesh = generate::builtin(SPEC)?;
    let topo = SmoothTopology::build(&mesh)?;
    let schedule = Schedule::greedy(&topo)?;
    let metric = MetricSpec::resolve(Some("shock"), None, &mesh)?;
    let tex = MetricTexture::from_spec(&metric, &mesh, 48, 2)?;
    let start = positions(&mesh)
        .iter()
        .map(|p| [p[0] as f32 as f64, p[1] as f32 as f64])
        .collect();
    Ok(Setup {
        topo,
        schedule,
        tex,
        start,
    })
}

/// Metric-field vertex smoothing: each sampling path on the `Setup` problem, after one sweep
/// and after 20, against the f64 CPU reference from the same f32 starting positions and
/// schedule; the sweeps must move vertices (by more than 1e-3). One sweep: 2e-6 of the unit box
/// for the shader and buffer paths, which compute the bilinear weights in f32 like the
/// reference does in f64 (positions are O(1), one sweep moves a vertex by O(h); f32 has 6e-8
/// relative precision, the step's sums of ~10 terms lose a few bits more); for the hardware
/// filter, which may round its weights (on NVIDIA to 1/256), 2e-6 plus twice the largest change
/// that rounding the reference's weights to 1/256 makes (which must not be zero), so the check
/// holds on lavapipe (exact weights) and on NVIDIA. k sweeps: the f32 part scaled by k
/// (differences of successive sweeps add at most linearly) and the quantization effect measured
/// after the same k sweeps.
pub fn smooth(report: &mut Report, b: &Runtime) {
    let prepared = setup();
    let params = SmoothParams::default();
    for sweeps in [1usize, 20] {
        for sampling in Sampling::ALL {
            let name = format!("smooth {sampling} {SPEC} shock {sweeps} sweep(s)");
            let tolerance = match sampling {
                Sampling::Hardware => {
                    format!("{:.0e} + 2 x 1/256-weight effect", 2e-6 * sweeps as f64)
                }
                _ => format!("{:.0e}", 2e-6 * sweeps as f64),
            };
            report.check(&name, b.kind(), &tolerance, || {
                let Setup {
                    topo,
                    schedule,
                    tex,
                    start,
                } = ready(&prepared)?;
                let mut g = GpuSmoother::new(b, topo, schedule, tex, sampling, &params, start)?;
                g.run(sweeps)?;
                let got = g.positions_f64()?;
                let reference = |weights, precision| {
                    let smp = TextureSampler::new(tex, weights, precision);
                    let mut pos = start.clone();
                    for _ in 0..sweeps {
                        sweep_cpu(&mut pos, topo, schedule, &|x| smp.sample(x), &params);
                    }
                    pos
                };
                let base = 2e-6 * sweeps as f64;
                let texels = match sampling {
                    Sampling::Buffer => TexelPrecision::F32,
                    _ => g.precision(),
                };
                let want = reference(WeightMode::Exact, texels);
                let (tol, quant) = match sampling {
                    Sampling::Hardware => {
                        let q = reference(WeightMode::Quantized8, texels);
                        let quant = max_position_diff(&want, &q);
                        (base + 2.0 * quant, Some(quant))
                    }
                    _ => (base, None),
                };
                let moved = max_position_diff(&want, start);
                let d = max_position_diff(&got, &want);
                let finite = got.iter().flatten().all(|v| v.is_finite());
                let result = match quant {
                    Some(q) => format!(
                        "max diff {d:.2e} (tolerance {tol:.2e}, 1/256 effect {q:.2e}), \
                         moved {moved:.2e}"
                    ),
                    None => format!("max diff {d:.2e}, moved {moved:.2e}"),
                };
                // The weight model must matter (1/256 weights change the reference), or the
                // hardware tolerance would not model the filter.
                let modeled = quant.is_none_or(|q| q > 0.0);
                Ok((result, finite && moved > 1e-3 && modeled && d <= tol))
            });
        }
    }
}

/// The hardware-filter probe of one backend (see [`probe`]): positions after one sweep of the
/// hardware and shader paths from the same start on the same schedule.
pub struct HwProbe {
    backend: BackendKind,
    precision: TexelPrecision,
    hardware: Vec<[f64; 2]>,
    shader: Vec<[f64; 2]>,
    /// The vertices of the first color: their moves see only starting positions, so their
    /// differences come from the metric samples alone (no propagation through later colors).
    first: Vec<u32>,
}

/// Largest |a - b| over the coordinates of the vertices `on` (all when None), and how many of
/// them differ by more than 1e-6 (NaN included).
fn diff_on(a: &[[f64; 2]], b: &[[f64; 2]], on: Option<&[u32]>) -> (f64, usize) {
    let d = |v: usize| (a[v][0] - b[v][0]).abs().max((a[v][1] - b[v][1]).abs());
    let ds: Vec<f64> = match on {
        Some(vs) => vs.iter().map(|&v| d(v as usize)).collect(),
        None => (0..a.len().min(b.len())).map(d).collect(),
    };
    // NaN counts as a difference (and stays the maximum once met).
    let max = ds
        .iter()
        .fold(0.0f64, |m, &d| if d.is_nan() || d > m { d } else { m });
    (max, ds.iter().filter(|&&x| x.is_nan() || x > 1e-6).count())
}

/// Diagnostic (INFO) for the hardware filter: one sweep of the `Setup` problem (on its
/// schedule, the same on every backend). The hardware sweep is compared with the CPU reference
/// under three models of the filter weights: exact, rounded to 1/256 (the checks' model) and
/// truncated to 1/256, first over the first color's vertices (no propagation: a model that
/// matches the hardware gives f32 noise, ~1e-7, with no vertex above 1e-6) and then over all
/// vertices; and with the shader path (exact bilinear in the kernel) of the same backend. The
/// positions are appended to `probes` for [`probe_across`].
pub fn probe(report: &mut Report, b: &Runtime, probes: &mut Vec<HwProbe>) {
    let name = format!("smooth hw-filter probe {SPEC} shock greedy 1 sweep");
    let kind = b.kind();
    report.info(&name, kind.name(), || {
        let Setup {
            topo,
            schedule,
            tex,
            start,
        } = setup()?;
        let params = SmoothParams::default();
        let sweep = |sampling| -> Result<_> {
            let mut g = GpuSmoother::new(b, &topo, &schedule, &tex, sampling, &params, &start)?;
            g.run(1)?;
            Ok((g.positions_f64()?, g.precision()))
        };
        let (hardware, precision) = sweep(Sampling::Hardware)?;
        let (shader, _) = sweep(Sampling::Shader)?;
        let cpu = |weights| {
            let smp = TextureSampler::new(&tex, weights, precision);
            let mut pos = start.clone();
            sweep_cpu(&mut pos, &topo, &schedule, &|x| smp.sample(x), &params);
            pos
        };
        let exact = cpu(WeightMode::Exact);
        let round = cpu(WeightMode::Quantized8);
        let trunc = cpu(WeightMode::Truncated8);
        let first = schedule.color(0).to_vec();
        let c0 = Some(first.as_slice());
        let f = |(d, n): (f64, usize)| format!("{d:.1e} ({n})");
        let text = format!(
            "hw - cpu, max (vertices > 1e-6): first color, {} v: round {}, trunc {}, exact {}; \
             all {} v: round {}, trunc {}, exact {}; cpu effect: round {:.1e}, trunc {:.1e}; \
             hw - shader {:.1e}",
            first.len(),
            f(diff_on(&hardware, &round, c0)),
            f(diff_on(&hardware, &trunc, c0)),
            f(diff_on(&hardware, &exact, c0)),
            hardware.len(),
            f(diff_on(&hardware, &round, None)),
            f(diff_on(&hardware, &trunc, None)),
            f(diff_on(&hardware, &exact, None)),
            diff_on(&round, &exact, None).0,
            diff_on(&trunc, &exact, None).0,
            diff_on(&hardware, &shader, None).0,
        );
        probes.push(HwProbe {
            backend: kind,
            precision,
            hardware,
            shader,
            first,
        });
        Ok(text)
    });
}

/// Check across backends: the hardware sweeps of [`probe`] (same start, schedule and
/// texture) against each other, within 1e-6 (f32 noise; the shader sweeps' difference is shown
/// as the floor): CUDA's texture object must filter like Vulkan's sampler on the same GPU
/// (measured on an H100: 3e-8). INFO only when the texel precisions differ.
pub fn probe_across(report: &mut Report, probes: &[HwProbe]) {
    for (i, a) in probes.iter().enumerate() {
        for b in &probes[i + 1..] {
            let pair = format!("{} vs {}", b.backend.name(), a.backend.name());
            let name = "smooth hw-filter probe across backends";
            let c0 = Some(a.first.as_slice());
            let (h0, n0) = diff_on(&b.hardware, &a.hardware, c0);
            let (h, n) = diff_on(&b.hardware, &a.hardware, None);
            let s0 = diff_on(&b.shader, &a.shader, c0).0;
            let s = diff_on(&b.shader, &a.shader, None).0;
            let result = format!(
                "{pair}: hw: first color {h0:.1e} ({n0} v > 1e-6), all {h:.1e} ({n}); \
                 shader: first color {s0:.1e}, all {s:.1e}"
            );
            if a.precision == b.precision {
                // Same texels, schedule and start: both texture units must filter alike.
                report.check(name, b.backend, "1e-6 (hardware sweeps alike)", || {
                    Ok((result, h <= 1e-6))
                });
            } else {
                report.info(name, &pair, || {
                    Ok(format!(
                        "{result} (texels {:?} vs {:?}: not comparable)",
                        b.precision, a.precision
                    ))
                });
            }
        }
    }
}
