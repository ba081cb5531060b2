//! `chromaflow parity`: run the cases of the GPU test suites (tests/swe_gpu.rs,
//! tests/dg_gpu.rs, tests/gpu_coloring.rs) on every available backend (wgpu, and CUDA when built with
//! `--features cuda` on a machine with an NVIDIA driver) and compare each with the CPU
//! reference under the tests' tolerances. Prints a table (max differences, PASS / FAIL / SKIP,
//! and INFO for diagnostic rows without a criterion); any FAIL gives a nonzero exit. This is
//! how the CUDA backend is checked on the GPU machine (CI has no NVIDIA GPU).

use crate::commands::GlobalArgs;
use chromaflow::color::gpu_vertices::{color_vertices_gpu, GpuColoringVariant};
use chromaflow::color::vertices::{check_vertex_coloring, color_vertices, VertexOrder};
use chromaflow::error::{Error, Result};
use chromaflow::mesh::{generate, Csr, Mesh, Topology};
use chromaflow::order::{Ordering, PrepareOptions};
use chromaflow::runtime::scan::exclusive_scan_cpu;
use chromaflow::runtime::{BackendKind, GpuOptions, Runtime};
use chromaflow::solver::swe::case::{Case, DEFAULT_SEED};
use chromaflow::solver::swe::cpu::CpuSolver;
use chromaflow::solver::swe::diag::layer_masses;
use chromaflow::solver::swe::gpu::{FluxLayout, GpuSolver};
use chromaflow::solver::swe::mesh::{criss_cross, EdgeKind, SweMesh};
use chromaflow::solver::swe::Scheme;
use clap::Args;

/// Options of `chromaflow parity`.
#[derive(Args, Debug, Clone, Default)]
pub struct ParityArgs {
    /// Backends to check (comma-separated). Default: every backend compiled in; one that
    /// cannot start is then reported as SKIP, while a backend named here that cannot start
    /// is a FAIL.
    #[arg(long, value_delimiter = ',', value_enum)]
    pub backends: Vec<BackendKind>,
    /// Skip the long runs (spec table on M(50) to t = 0.1 s, lake at rest to t = 5 s).
    #[arg(long)]
    pub quick: bool,
    /// Print JSON instead of a markdown table.
    #[arg(long)]
    pub json: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
enum Status {
    Pass,
    Fail,
    Skip,
    /// A diagnostic measurement without a pass/fail criterion.
    Info,
}

/// One line of the report.
#[derive(Clone, Debug, serde::Serialize)]
struct Row {
    check: String,
    backend: String,
    result: String,
    tolerance: String,
    status: Status,
}

#[derive(Default)]
struct Report {
    rows: Vec<Row>,
}

impl Report {
    /// Run `f` (returning the measured result and whether it is within tolerance) and record
    /// it; an error is a FAIL with the error as the result.
    fn check(
        &mut self,
        check: &str,
        backend: BackendKind,
        tolerance: &str,
        f: impl FnOnce() -> Result<(String, bool)>,
    ) {
        let (result, status) = match f() {
            Ok((r, true)) => (r, Status::Pass),
            Ok((r, false)) => (r, Status::Fail),
            Err(e) => (format!("error: {e}"), Status::Fail),
        };
        self.rows.push(Row {
            check: check.to_string(),
            backend: backend.name().to_string(),
            result,
            tolerance: tolerance.to_string(),
            status,
        });
    }

    /// Run `f` and record its result as a diagnostic row (INFO); an error is a FAIL.
    fn info(&mut self, check: &str, backend: &str, f: impl FnOnce() -> Result<String>) {
        let (result, status) = match f() {
            Ok(r) => (r, Status::Info),
            Err(e) => (format!("error: {e}"), Status::Fail),
        };
        self.rows.push(Row {
            check: check.to_string(),
            backend: backend.to_string(),
            result,
            tolerance: "-".into(),
            status,
        });
    }

    fn count(&self, status: Status) -> usize {
        self.rows.iter().filter(|r| r.status == status).count()
    }

    fn failures(&self) -> usize {
        self.count(Status::Fail)
    }
}

/// Run `chromaflow parity`.
pub fn run(args: &ParityArgs, global: &GlobalArgs) -> anyhow::Result<()> {
    let explicit = !args.backends.is_empty();
    for kind in &args.backends {
        kind.ensure_compiled()?;
    }
    let kinds = if explicit {
        args.backends.clone()
    } else {
        BackendKind::compiled()
    };
    let opts = GpuOptions {
        adapter: global.adapter.clone(),
    };
    let mut report = Report::default();
    let mut devices = Vec::new();
    let mut probes = Vec::new();
    for kind in kinds {
        match Runtime::new(kind, &opts) {
            Ok(b) => {
                devices.push(b.name());
                if !args.json && !global.quiet {
                    eprintln!("parity: running on {} [{kind}]", b.name());
                }
                swe_checks(&mut report, &b, args.quick);
                dg_checks(&mut report, &b);
                coloring_checks(&mut report, &b);
                smooth_checks(&mut report, &b);
                smooth_probe(&mut report, &b, &mut probes);
            }
            Err(e) => report.rows.push(Row {
                check: "open backend".into(),
                backend: kind.name().into(),
                result: e.to_string(),
                tolerance: "-".into(),
                status: if explicit { Status::Fail } else { Status::Skip },
            }),
        }
    }
    smooth_probe_across(&mut report, &probes);
    let failures = report.failures();
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&serde_json::json!({
                "devices": devices,
                "failures": failures,
                "rows": report.rows,
            }))?
        );
    } else {
        println!("| check | backend | result | tolerance | status |");
        println!("|---|---|---|---|---|");
        for r in &report.rows {
            println!(
                "| {} | {} | {} | {} | {} |",
                r.check,
                r.backend,
                r.result.replace('|', "/").replace('\n', " "),
                r.tolerance,
                match r.status {
                    Status::Pass => "PASS",
                    Status::Fail => "FAIL",
                    Status::Skip => "SKIP",
                    Status::Info => "INFO",
                }
            );
        }
        println!();
        println!(
            "{} passed, {failures} failed, {} skipped, {} info",
            report.count(Status::Pass),
            report.count(Status::Skip),
            report.count(Status::Info)
        );
    }
    if failures > 0 {
        return Err(Error::Gpu(format!("{failures} parity checks failed")).into());
    }
    Ok(())
}

/// A prepared shallow-water problem (as in tests/swe_gpu.rs).
struct Run {
    case: Case,
    mesh: SweMesh,
    depth: Vec<f64>,
    state: Vec<[f64; 6]>,
}

fn prepare(case: &str, mesh: &Mesh, ordering: Ordering) -> Result<Run> {
    let case = Case::builtin(case)?;
    let ordered = chromaflow::order::prepare(mesh, &PrepareOptions::new(ordering, DEFAULT_SEED))?;
    let sm = SweMesh::new(&ordered, |_| EdgeKind::Wall)?;
    let (depth, state) = case.initial_state(&sm)?;
    Ok(Run {
        case,
        mesh: sm,
        depth,
        state,
    })
}

fn device(b: &Runtime, r: &Run, scheme: Scheme, layout: FluxLayout) -> Result<GpuSolver> {
    GpuSolver::new(
        b,
        &r.mesh,
        &r.depth,
        &r.state,
        scheme,
        r.case.physics,
        r.case.cfl,
        layout,
    )
}

fn cpu(r: &Run, scheme: Scheme, steps: u64) -> Result<CpuSolver> {
    let mut c = CpuSolver::new(
        &r.mesh,
        r.depth.clone(),
        r.state.clone(),
        scheme,
        r.case.physics,
        r.case.cfl,
    )?;
    c.run_steps(steps);
    Ok(c)
}

/// Largest |a − b| over cells, for depth rows (h1, h2) and momentum rows separately.
fn max_diff(a: &[[f64; 6]], b: &[[f64; 6]]) -> (f64, f64) {
    let mut dh: f64 = 0.0;
    let mut dq: f64 = 0.0;
    for (x, y) in a.iter().zip(b) {
        for k in 0..6 {
            let d = (x[k] - y[k]).abs();
            if !d.is_finite() {
                return (f64::INFINITY, f64::INFINITY);
            }
            if k % 3 == 0 {
                dh = dh.max(d);
            } else {
                dq = dq.max(d);
            }
        }
    }
    (dh, dq)
}

/// The flux layouts a backend runs (the atomic scatter is CUDA only).
fn layouts(b: &Runtime) -> Vec<FluxLayout> {
    let mut l = vec![FluxLayout::ColoredScatter, FluxLayout::CellGather];
    if b.kind() == BackendKind::Cuda {
        l.push(FluxLayout::AtomicScatter);
    }
    l
}

fn swe_checks(report: &mut Report, b: &Runtime, quick: bool) {
    let kind = b.kind();
    let m16 = criss_cross(16);
    // GPU ≡ CPU after 10 steps of Tests 1 and 2 on M(16), every scheme and flux layout.
    for case in ["test1", "test2"] {
        for scheme in Scheme::ALL {
            for layout in layouts(b) {
                let name = format!("swe {case} {scheme} {} M(16) 10 steps", layout.name());
                report.check(&name, kind, "dh 5e-5, dq 2e-4, same counters", || {
                    let m = m16.as_ref().map_err(|e| Error::Invalid(e.to_string()))?;
                    let r = prepare(case, m, Ordering::Original)?;
                    let mut g = device(b, &r, scheme, layout)?;
                    g.steps(10)?;
                    let c = cpu(&r, scheme, 10)?;
                    let (dh, dq) = max_diff(&g.read_state()?, &c.state);
                    let ctl = g.read_control()?;
                    let counters_ok = ctl.counters() == c.counters;
                    let t_ok = ((ctl.t as f64) - c.t).abs() <= 1e-6 * c.t;
                    Ok((
                        format!(
                            "dh {dh:.2e} dq {dq:.2e} steps {} counters {}",
                            ctl.steps,
                            if counters_ok { "equal" } else { "DIFFER" }
                        ),
                        dh <= 5e-5 && dq <= 2e-4 && ctl.steps == 10 && counters_ok && t_ok,
                    ))
                });
            }
        }
    }
    // Independence of the ordering and layout: 15 steps of Test 1 mapped back to the input
    // numbering agree with the colored scatter in the original ordering.
    report.check(
        "swe test1 orderings x layouts M(16) 15 steps",
        kind,
        "dh 2e-5, dq 1e-4",
        || {
            let m = m16.as_ref().map_err(|e| Error::Invalid(e.to_string()))?;
            let base = prepare("test1", m, Ordering::Original)?;
            let mut g = device(b, &base, Scheme::PvmIfcp, FluxLayout::ColoredScatter)?;
            g.steps(15)?;
            let reference = g.read_state()?;
            let (mut dh_max, mut dq_max) = (0.0f64, 0.0f64);
            for ordering in [
                Ordering::Original,
                Ordering::Rcm,
                Ordering::Gps,
                Ordering::ColorRenumbered,
            ] {
                for layout in layouts(b) {
                    let r = prepare("test1", m, ordering)?;
                    let mut g = device(b, &r, Scheme::PvmIfcp, layout)?;
                    g.steps(15)?;
                    let s = g.read_state()?;
                    let mut back = vec![[0.0; 6]; s.len()];
                    for (new, &old) in r.mesh.element_new_to_old.iter().enumerate() {
                        back[old as usize] = s[new];
                    }
                    let (dh, dq) = max_diff(&back, &reference);
                    dh_max = dh_max.max(dh);
                    dq_max = dq_max.max(dq);
                }
            }
            Ok((
                format!("dh {dh_max:.2e} dq {dq_max:.2e}"),
                dh_max <= 2e-5 && dq_max <= 1e-4,
            ))
        },
    );
    dry_check(report, b);
    if quick {
        return;
    }
    spec_table_checks(report, b);
    lake_checks(report, b);
}

/// Dry upper layer (spec §10): no NaN, Roe schemes fall back to IFCP, GPU ≈ CPU.
fn dry_check(report: &mut Report, b: &Runtime) {
    let text = r#"
[mesh]
builtin = "cross:12"
domain = [-5.0, 5.0, -5.0, 5.0]
[physics]
r = 0.9
[initial]
H = 2.0
h1 = "if(x < 0, 1.0, 0.0)"
h2 = "H - 1"
[run]
final_time = 1.0
"#;
    for scheme in Scheme::ALL {
        let name = format!("swe dry upper layer {scheme} 40 steps");
        report.check(&name, b.kind(), "finite, fallbacks, dh 1e-3", || {
            let case = Case::from_toml(text, std::path::Path::new("dry.toml"))?;
            let setup = case.prepare()?;
            let r = Run {
                case,
                mesh: setup.mesh,
                depth: setup.depth,
                state: setup.state,
            };
            let mut g = device(b, &r, scheme, FluxLayout::ColoredScatter)?;
            g.steps(40)?;
            let s = g.read_state()?;
            let c = cpu(&r, scheme, 40)?;
            let finite = s.iter().flatten().all(|v| v.is_finite());
            let ctl = g.read_control()?;
            let fallbacks_ok =
                scheme == Scheme::PvmIfcp || (ctl.fallback > 0 && c.counters.fallback > 0);
            let (dh, _) = max_diff(&s, &c.state);
            Ok((
                format!(
                    "dh {dh:.2e} finite {finite} fallbacks {} (cpu {})",
                    ctl.fallback, c.counters.fallback
                ),
                finite && fallbacks_ok && dh <= 1e-3,
            ))
        });
    }
}

/// Spec §12 table on M(50) to t = 0.1 and per-layer mass conservation.
fn spec_table_checks(report: &mut Report, b: &Runtime) {
    let m50 = criss_cross(50);
    let rows = [
        (
            "test1",
            Scheme::PvmIfcp,
            23,
            [0.44021, 4.36851, 2.00000, 5.49991],
        ),
        (
            "test1",
            Scheme::IrRoe,
            22,
            [0.43756, 4.37654, 2.00000, 5.49996],
        ),
        (
            "test2",
            Scheme::PvmIfcp,
            19,
            [0.40601, 4.14141, 0.39617, 4.12630],
        ),
        (
            "test2",
            Scheme::IrRoe,
            19,
            [0.40238, 4.14212, 0.40178, 4.12612],
        ),
    ];
    for (case, scheme, steps, extrema) in rows {
        for layout in layouts(b) {
            let name = format!("swe spec table {case} {scheme} {} M(50)", layout.name());
            report.check(
                &name,
                b.kind(),
                "steps +0/+1, extrema 3e-5, mass 1e-6",
                || {
                    let m = m50.as_ref().map_err(|e| Error::Invalid(e.to_string()))?;
                    let r = prepare(case, m, Ordering::Original)?;
                    let m0 = layer_masses(&r.mesh.geom.areas, &r.state);
                    let mut g = device(b, &r, scheme, layout)?;
                    let ctl = g.advance(0.1, 64, &mut |_| {})?;
                    let s = g.read_state()?;
                    let ext = |k: usize| {
                        s.iter()
                            .map(|w| w[k])
                            .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), x| {
                                (a.min(x), b.max(x))
                            })
                    };
                    let (h1, h2) = (ext(0), ext(3));
                    let dext = [h1.0, h1.1, h2.0, h2.1]
                        .into_iter()
                        .zip(extrema)
                        .map(|(g, w)| (g - w).abs())
                        .fold(0.0f64, f64::max);
                    let m1 = layer_masses(&r.mesh.geom.areas, &s);
                    let drift = (0..2)
                        .map(|k| (m1[k] - m0[k]).abs() / m0[k])
                        .fold(0.0f64, f64::max);
                    let ok = ctl.t == 0.1f32
                        && (ctl.steps == steps || ctl.steps == steps + 1)
                        && ctl.nonhyperbolic == 0
                        && dext <= 3e-5
                        && drift <= 1e-6;
                    Ok((
                        format!(
                            "steps {} (spec {steps}) extrema {dext:.2e} mass {drift:.2e}",
                            ctl.steps
                        ),
                        ok,
                    ))
                },
            );
        }
    }
}

/// Spec §13.2: the lake at rest stays at rest on M(50) to t = 5 s.
fn lake_checks(report: &mut Report, b: &Runtime) {
    for scheme in [Scheme::PvmIfcp, Scheme::IrRoe] {
        let name = format!("swe lake at rest {scheme} M(50) t=5");
        report.check(&name, b.kind(), "|u| 1e-5, elevation 1e-6", || {
            let m = criss_cross(50)?;
            let r = prepare("lake", &m, Ordering::Original)?;
            let mut g = device(b, &r, scheme, FluxLayout::ColoredScatter)?;
            let ctl = g.advance(5.0, 128, &mut |_| {})?;
            let s = g.read_state()?;
            let mut umax: f64 = 0.0;
            let mut drift: f64 = 0.0;
            for (i, w) in s.iter().enumerate() {
                umax = umax
                    .max(w[1].hypot(w[2]) / w[0])
                    .max(w[4].hypot(w[5]) / w[3]);
                let w0 = r.state[i];
                drift = drift
                    .max(((w[0] + w[3]) - (w0[0] + w0[3])).abs())
                    .max((w[3] - w0[3]).abs());
            }
            Ok((
                format!("steps {} |u| {umax:.2e} drift {drift:.2e}", ctl.steps),
                (700..760).contains(&ctl.steps) && umax <= 1e-5 && drift <= 1e-6,
            ))
        });
    }
}

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

fn coloring_checks(report: &mut Report, b: &Runtime) {
    let kind = b.kind();
    report.check(
        "prefix sum n = 1 .. 1000003 (7 sizes)",
        kind,
        "exact",
        || {
            let mut bad = Vec::new();
            for n in [1usize, 5, 256, 257, 65_536, 65_537, 1_000_003] {
                let values: Vec<u32> = (0..n)
                    .map(|i| ((i * 2_654_435_761) >> 7) as u32 % 3)
                    .collect();
                let (gpu, total) = chromaflow::runtime::scan::gpu_exclusive_scan(b, &values)?;
                if gpu != exclusive_scan_cpu(&values) || total != values.iter().sum::<u32>() {
                    bad.push(n);
                }
            }
            Ok((
                if bad.is_empty() {
                    "all equal".to_string()
                } else {
                    format!("mismatch at n = {bad:?}")
                },
                bad.is_empty(),
            ))
        },
    );
    report.check("min-reduction n = 1 .. 1000003", kind, "exact", || {
        let mut bad = Vec::new();
        for n in [1usize, 255, 256, 257, 65_537, 1_000_003] {
            let values: Vec<f32> = (0..n)
                .map(|i| 1.0 + (((i * 2_654_435_761) >> 5) % 100_000) as f32)
                .collect();
            let want = values.iter().copied().fold(f32::INFINITY, f32::min);
            if chromaflow::runtime::reduce::gpu_min(b, &values)? != want {
                bad.push(n);
            }
        }
        Ok((
            if bad.is_empty() {
                "all equal".to_string()
            } else {
                format!("mismatch at n = {bad:?}")
            },
            bad.is_empty(),
        ))
    });
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

/// Largest |a - b| over the coordinates of positions.
fn max_position_diff(a: &[[f64; 2]], b: &[[f64; 2]]) -> f64 {
    a.iter()
        .zip(b)
        .map(|(p, q)| (p[0] - q[0]).abs().max((p[1] - q[1]).abs()))
        .fold(0.0, f64::max)
}

/// Metric-field vertex smoothing (tests/smooth_gpu.rs): each sampling path on rect:700@5 with
/// the shock metric on a 48x48 texture, after one sweep and after 20, against the f64 CPU
/// reference from the same f32 starting positions and schedule (the backend's coloring). One
/// sweep: the test's tolerances, 2e-6 for the shader and buffer paths (exact f32 weights) and
/// 2e-6 + twice the change that 1/256 filter weights make to the reference for the hardware
/// filter. k sweeps: the f32 part scaled by k (differences of successive sweeps add at most
/// linearly) and the quantization effect measured after the same k sweeps.
fn smooth_checks(report: &mut Report, b: &Runtime) {
    use chromaflow::solver::smooth::cpu::positions;
    use chromaflow::solver::smooth::gpu::GpuSmoother;
    use chromaflow::solver::smooth::{
        sweep_cpu, MetricSpec, MetricTexture, Sampling, SmoothParams, SmoothTopology,
        TexelPrecision, TextureSampler, WeightMode,
    };
    let spec = "rect:700@5";
    let prepared = (|| -> Result<_> {
        let mesh = generate::builtin(spec)?;
        let topo = SmoothTopology::build(&mesh)?;
        // The deterministic sequential greedy schedule, the same on every backend: the GPU
        // speculative coloring is racy, and on different schedules the backends would run
        // different experiments (with different 1/256-weight effects). The GPU coloring has
        // its own rows above.
        let schedule = chromaflow::solver::smooth::Schedule::greedy(&topo)?;
        let metric = MetricSpec::resolve(Some("shock"), None, &mesh)?;
        let tex = MetricTexture::from_spec(&metric, &mesh, 48, 2)?;
        let start: Vec<[f64; 2]> = positions(&mesh)
            .iter()
            .map(|p| [p[0] as f32 as f64, p[1] as f32 as f64])
            .collect();
        Ok((topo, schedule, tex, start))
    })();
    let params = SmoothParams::default();
    for sweeps in [1usize, 20] {
        for sampling in Sampling::ALL {
            let name = format!("smooth {sampling} {spec} shock {sweeps} sweep(s)");
            let tolerance = match sampling {
                Sampling::Hardware => {
                    format!("{:.0e} + 2 x 1/256-weight effect", 2e-6 * sweeps as f64)
                }
                _ => format!("{:.0e}", 2e-6 * sweeps as f64),
            };
            report.check(&name, b.kind(), &tolerance, || {
                let (topo, schedule, tex, start) = prepared
                    .as_ref()
                    .map_err(|e| Error::Invalid(e.to_string()))?;
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
                let (want, tol, quant) = match sampling {
                    Sampling::Buffer => (reference(WeightMode::Exact, TexelPrecision::F32), base, None),
                    Sampling::Shader => (reference(WeightMode::Exact, g.precision()), base, None),
                    Sampling::Hardware => {
                        let exact = reference(WeightMode::Exact, g.precision());
                        let quant =
                            max_position_diff(&exact, &reference(WeightMode::Quantized8, g.precision()));
                        (exact, base + 2.0 * quant, Some(quant))
                    }
                };
                let moved = max_position_diff(&want, start);
                let d = max_position_diff(&got, &want);
                let finite = got.iter().flatten().all(|v| v.is_finite());
                Ok((
                    match quant {
                        Some(q) => format!(
                            "max diff {d:.2e} (tolerance {tol:.2e}, 1/256 effect {q:.2e}), moved {moved:.2e}"
                        ),
                        None => format!("max diff {d:.2e}, moved {moved:.2e}"),
                    },
                    finite && moved > 1e-3 && d <= tol,
                ))
            });
        }
    }
}

/// The hardware-filter probe of one backend (see [`smooth_probe`]): positions after one sweep
/// of the hardware and shader paths from the same start on the same schedule.
struct HwProbe {
    backend: BackendKind,
    precision: chromaflow::solver::smooth::TexelPrecision,
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

/// Diagnostic (INFO) for the hardware filter: one sweep on rect:700@5 with the shock metric on
/// a 48x48 texture, on the deterministic sequential greedy schedule (the same on every backend,
/// unlike the backend's own speculative GPU coloring the checks above use, which may differ
/// between backends and runs: on the H200 the wgpu and CUDA 20-sweep references differed). The hardware sweep is compared with the CPU reference under three models of the
/// filter weights: exact, rounded to 1/256 (the checks' model) and truncated to 1/256, first
/// over the first color's vertices (no propagation: a model that matches the hardware gives
/// f32 noise, ~1e-7, with no vertex above 1e-6) and then over all vertices; and with the
/// shader path (exact bilinear in the kernel) of the same backend. The positions are kept for
/// [`smooth_probe_across`].
fn smooth_probe(report: &mut Report, b: &Runtime, probes: &mut Vec<HwProbe>) {
    use chromaflow::solver::smooth::cpu::positions;
    use chromaflow::solver::smooth::gpu::GpuSmoother;
    use chromaflow::solver::smooth::{
        sweep_cpu, MetricSpec, MetricTexture, Sampling, Schedule, SmoothParams, SmoothTopology,
        TextureSampler, WeightMode,
    };
    let spec = "rect:700@5";
    let name = format!("smooth hw-filter probe {spec} shock greedy 1 sweep");
    let kind = b.kind();
    report.info(&name, kind.name(), || {
        let mesh = generate::builtin(spec)?;
        let topo = SmoothTopology::build(&mesh)?;
        let schedule = Schedule::greedy(&topo)?;
        let metric = MetricSpec::resolve(Some("shock"), None, &mesh)?;
        let tex = MetricTexture::from_spec(&metric, &mesh, 48, 2)?;
        let start: Vec<[f64; 2]> = positions(&mesh)
            .iter()
            .map(|p| [p[0] as f32 as f64, p[1] as f32 as f64])
            .collect();
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

/// Check across backends: the hardware sweeps of [`smooth_probe`] (same start, schedule and
/// texture) against each other, within 1e-6 (f32 noise; the shader sweeps' difference is shown
/// as the floor): CUDA's texture object must filter like Vulkan's sampler on the same GPU
/// (measured on an H100: 3e-8). INFO only when the texel precisions differ.
fn smooth_probe_across(report: &mut Report, probes: &[HwProbe]) {
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

/// Largest |a − b| relative to max |b|, as in tests/dg_gpu.rs (infinite on NaN or a length
/// mismatch).
fn max_rel(a: &[f64], b: &[f64]) -> f64 {
    if a.len() != b.len() {
        return f64::INFINITY;
    }
    let scale = b.iter().fold(0.0f64, |m, v| m.max(v.abs())).max(1e-30);
    let mut worst = 0.0f64;
    for (x, y) in a.iter().zip(b) {
        let d = (x - y).abs() / scale;
        if !d.is_finite() {
            return f64::INFINITY;
        }
        worst = worst.max(d);
    }
    worst
}

/// The DG test mesh with every boundary kind (tests/dg_gpu.rs `all_boundaries`).
fn dg_all_boundaries(ordering: Ordering) -> Result<chromaflow::solver::dg::DgMesh> {
    use chromaflow::solver::dg::BoundaryKind;
    let mesh = generate::rectangle(0.0, 1.0, 0.0, 1.0, 160, 3)?;
    let om = chromaflow::order::prepare(&mesh, &PrepareOptions::new(ordering, 2))?;
    chromaflow::solver::dg::DgMesh::build(&om, &|t| {
        Ok(match t {
            1 => BoundaryKind::Wall,
            2 => BoundaryKind::Outflow,
            3 => BoundaryKind::Inflow(0),
            _ => BoundaryKind::Exact,
        })
    })
}

/// The periodic DG test mesh (tests/dg_gpu.rs `periodic_mesh`).
fn dg_periodic() -> Result<chromaflow::solver::dg::DgMesh> {
    use chromaflow::solver::dg::BoundaryKind;
    let mesh = generate::split_square_grid(0.0, 1.0, 0.0, 1.0, 5, 5)?;
    let om = chromaflow::order::prepare(&mesh, &PrepareOptions::new(Ordering::ColorRenumbered, 1))?;
    chromaflow::solver::dg::DgMesh::build(&om, &|t| {
        Ok(match t {
            1 => BoundaryKind::Periodic(3),
            3 => BoundaryKind::Periodic(1),
            2 => BoundaryKind::Periodic(4),
            _ => BoundaryKind::Periodic(2),
        })
    })
}

/// The DG run configuration of tests/dg_gpu.rs.
fn dg_config(
    flux: chromaflow::solver::dg::NumericalFlux,
    limiter: bool,
    state_fn: chromaflow::solver::dg::StateFn,
) -> chromaflow::solver::dg::gpu::GpuConfig {
    chromaflow::solver::dg::gpu::GpuConfig {
        flux,
        state_fn,
        states: vec![chromaflow::solver::dg::euler::conserved(
            1.1, 0.3, -0.2, 0.9,
        )],
        cfl: 0.3,
        fixed_dt: None,
        limiter,
    }
}

/// DG Euler (tests/dg_gpu.rs): the rhs for p = 0..4 on a mesh with every boundary kind, the
/// limiter on a shock, and 10 limited steps for p = 1..3 with periodic boundaries, against the
/// f64 CPU operator.
fn dg_checks(report: &mut Report, b: &Runtime) {
    use chromaflow::solver::dg::gpu::GpuDg;
    use chromaflow::solver::dg::{BasisTables, NumericalFlux, Operator, StateFn};
    let kind = b.kind();
    let vortex = StateFn::Vortex {
        x0: 0.4,
        y0: 0.6,
        u_inf: 0.5,
        v_inf: 0.3,
        beta: 1.0,
    };
    for (ordering, flux) in [
        (Ordering::Original, NumericalFlux::Rusanov),
        (Ordering::ColorRenumbered, NumericalFlux::Hllc),
    ] {
        let dm = dg_all_boundaries(ordering);
        for p in 0..=4 {
            let name = format!("dg rhs {ordering} {} p={p} all boundary kinds", flux.name());
            report.check(&name, kind, "rel 2e-5", || {
                let dm = dm.as_ref().map_err(|e| Error::Invalid(e.to_string()))?;
                let tables = BasisTables::new(p);
                let cfg = dg_config(flux, false, vortex);
                let op = Operator {
                    mesh: dm,
                    tables: &tables,
                    flux,
                    state_fn: cfg.state_fn,
                    states: cfg.states.clone(),
                };
                // Round the input to f32 so both sides see the same coefficients.
                let c: Vec<f64> = op
                    .project(&|x, y| vortex.eval(x, y, 0.0))
                    .iter()
                    .map(|&v| v as f32 as f64)
                    .collect();
                let mut cpu = vec![0.0; op.ndof()];
                op.rhs(&c, 0.25, &mut cpu);
                let gpu = GpuDg::new(b, dm, &tables, &cfg)?;
                let g = gpu.eval_rhs(&c, 0.25)?;
                let err = max_rel(&g, &cpu);
                Ok((format!("rel {err:.2e}"), err < 2e-5))
            });
        }
    }
    let rcm = dg_all_boundaries(Ordering::Rcm);
    for p in [1usize, 2] {
        let name = format!("dg limiter rcm p={p} shock");
        report.check(&name, kind, "rel 1e-5, limits", || {
            let dm = rcm.as_ref().map_err(|e| Error::Invalid(e.to_string()))?;
            let dmr = StateFn::DoubleMach;
            let tables = BasisTables::new(p);
            let cfg = dg_config(NumericalFlux::Rusanov, true, dmr);
            let op = Operator {
                mesh: dm,
                tables: &tables,
                flux: cfg.flux,
                state_fn: dmr,
                states: cfg.states.clone(),
            };
            // A shock through the unit square: many cells are limited.
            let c: Vec<f64> = op
                .project(&|x, y| dmr.eval(x + 0.2, y, 0.0))
                .iter()
                .map(|&v| v as f32 as f64)
                .collect();
            let mut cpu = vec![0.0; c.len()];
            op.limit(&c, &mut cpu, true);
            let gpu = GpuDg::new(b, dm, &tables, &cfg)?;
            let g = gpu.limit_once(&c)?;
            let err = max_rel(&g, &cpu);
            let limited = c.iter().zip(&cpu).any(|(a, b)| (a - b).abs() > 1e-3);
            Ok((
                format!("rel {err:.2e} limited {limited}"),
                err < 1e-5 && limited,
            ))
        });
    }
    let periodic = dg_periodic();
    for p in [1usize, 2, 3] {
        let name = format!("dg 10 steps p={p} limiter periodic 5x5");
        report.check(&name, kind, "rel 1e-4, 10 steps, totals 2e-6", || {
            let dm = periodic
                .as_ref()
                .map_err(|e| Error::Invalid(e.to_string()))?;
            let tables = BasisTables::new(p);
            let cfg = dg_config(NumericalFlux::Rusanov, true, vortex);
            let op = Operator {
                mesh: dm,
                tables: &tables,
                flux: cfg.flux,
                state_fn: cfg.state_fn,
                states: cfg.states.clone(),
            };
            let c0: Vec<f64> = op
                .project(&|x, y| vortex.eval(x, y, 0.0))
                .iter()
                .map(|&v| v as f32 as f64)
                .collect();
            let dt = 0.5 * op.cfl_dt(&c0, 0.3);
            let steps = 10;
            let mut cpu = c0.clone();
            chromaflow::solver::dg::cpu::run(&op, &mut cpu, dt * steps as f64, 0.3, Some(dt), true);
            let cfg = chromaflow::solver::dg::gpu::GpuConfig {
                fixed_dt: Some(dt),
                ..cfg
            };
            let gpu = GpuDg::new(b, dm, &tables, &cfg)?;
            gpu.set_solution(&c0)?;
            gpu.set_clock(0.0, dt * steps as f64)?;
            gpu.advance(steps + 2)?;
            let clock = gpu.clock()?;
            let g = gpu.solution()?;
            let err = max_rel(&g, &cpu);
            let (t0, t1) = (op.totals(&c0), op.totals(&g));
            let drift = (0..4)
                .map(|eq| (t1[eq] - t0[eq]).abs() / t0[eq].abs().max(1.0))
                .fold(0.0f64, f64::max);
            Ok((
                format!("rel {err:.2e} steps {} totals {drift:.2e}", clock.steps),
                err < 1e-4 && clock.steps == steps as u64 && drift < 2e-6,
            ))
        });
    }
}
