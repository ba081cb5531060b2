//! Vertex smoothing on the GPU beyond the conformance suite (tests/conformance.rs compares each
//! sampling path with the f64 CPU reference): race freedom on the GPU coloring's schedule, and
//! the mesh guarantees (validity, boundary, topology, quality) on every analytic metric.

use chromaflow::mesh::{generate, Mesh};
use chromaflow::runtime::Runtime;
use chromaflow::solver::smooth::cpu::{min_shape, positions};
use chromaflow::solver::smooth::{
    metric_normalization, metric_quality, schedule_gpu, GpuSmoother, MetricSpec, MetricTexture,
    QualitySummary, Sampling, Schedule, SmoothParams, SmoothTopology, TextureSampler, VertexKind,
    WeightMode,
};

fn rt() -> Runtime {
    Runtime::wgpu().expect("a GPU adapter is required (CI: lavapipe)")
}

struct Case {
    mesh: Mesh,
    topo: SmoothTopology,
    schedule: Schedule,
    tex: MetricTexture,
    start: Vec<[f64; 2]>,
}

/// Mesh, cavities, the GPU speculative coloring with boundary classes, the metric texture,
/// and the starting positions rounded to f32 (what the GPU starts from).
fn case(rt: &Runtime, spec: &str, metric: &str, size: u32) -> Case {
    let mesh = generate::builtin(spec).unwrap();
    let topo = SmoothTopology::build(&mesh).unwrap();
    let schedule = schedule_gpu(rt, &topo).unwrap();
    let spec = MetricSpec::resolve(Some(metric), None, &mesh).unwrap();
    let tex = MetricTexture::from_spec(&spec, &mesh, size, 2).unwrap();
    let start = positions(&mesh)
        .iter()
        .map(|p| [p[0] as f32 as f64, p[1] as f32 as f64])
        .collect();
    Case {
        mesh,
        topo,
        schedule,
        tex,
        start,
    }
}

/// The parallel sweep (one dispatch per color) equals the sequential one (one dispatch per
/// vertex, same order) bit for bit over several iterations: no two vertices of a dispatch
/// read each other's positions.
#[test]
fn parallel_sweep_equals_sequential_color_by_color_sweep() {
    let rt = rt();
    let c = case(&rt, "rect:400@2", "boundary-layer", 32);
    let params = SmoothParams::default();
    for sampling in [Sampling::Buffer, Sampling::Hardware] {
        let mut par = GpuSmoother::new(
            &rt,
            &c.topo,
            &c.schedule,
            &c.tex,
            sampling,
            &params,
            &c.start,
        )
        .unwrap();
        let mut seq = GpuSmoother::new(
            &rt,
            &c.topo,
            &c.schedule,
            &c.tex,
            sampling,
            &params,
            &c.start,
        )
        .unwrap();
        par.run(3).unwrap();
        for _ in 0..3 {
            seq.run_sequential().unwrap();
        }
        let (a, b) = (par.positions().unwrap(), seq.positions().unwrap());
        assert_ne!(
            a,
            c.start
                .iter()
                .map(|p| [p[0] as f32, p[1] as f32])
                .collect::<Vec<_>>()
        );
        for (v, (p, q)) in a.iter().zip(&b).enumerate() {
            assert!(
                p[0].to_bits() == q[0].to_bits() && p[1].to_bits() == q[1].to_bits(),
                "{sampling}: vertex {v}: parallel {p:?} sequential {q:?}"
            );
        }
    }
}

/// Minimum VL quality floor: smoothing may lower the worst element a little while it
/// improves the rest (the relocation equalises edge lengths, it does not maximise the
/// minimum), but never below this fraction of the starting minimum.
const MIN_QUALITY_FLOOR: f64 = 0.5;

/// On every analytic metric: each sweep leaves every triangle valid (positive
/// `2 area / sum l^2`, the kernel's rejection test), boundary vertices on their boundary
/// line, fixed vertices fixed, the connectivity untouched; after the run the mean metric
/// quality is higher and the minimum above the floor.
#[test]
fn smoothing_keeps_mesh_valid_and_improves_quality_on_every_metric() {
    let rt = rt();
    let params = SmoothParams::default();
    for metric in ["uniform", "boundary-layer", "shock", "hessian"] {
        let c = case(&rt, "rect:900@3", metric, 64);
        let smp = TextureSampler::new(
            &c.tex,
            WeightMode::Exact,
            chromaflow::solver::smooth::TexelPrecision::F32,
        );
        let f = |x: [f64; 2]| smp.sample(x);
        let norm = metric_normalization(&c.start, &c.topo.triangles, &f);
        let before = QualitySummary::of(&metric_quality(&c.start, &c.topo.triangles, &f, norm));
        let mut g = GpuSmoother::new(
            &rt,
            &c.topo,
            &c.schedule,
            &c.tex,
            Sampling::Shader,
            &params,
            &c.start,
        )
        .unwrap();
        let triangles_before = c.mesh.connectivity.clone();
        let mut pos = c.start.clone();
        for it in 0..60 {
            g.run(1).unwrap();
            pos = g.positions_f64().unwrap();
            let shape = min_shape(&pos, &c.topo.triangles);
            assert!(
                shape > 0.0,
                "{metric}: a triangle inverted or collapsed at iteration {it}: {shape}"
            );
            for (v, k) in c.topo.kind.iter().enumerate() {
                let (p, s) = (pos[v], c.start[v]);
                match k {
                    VertexKind::Fixed => assert_eq!(p, s, "{metric}: fixed vertex {v} moved"),
                    VertexKind::Sliding { .. } => {
                        let on_side = (s[0] == 0.0 || s[0] == 1.0) && p[0] == s[0]
                            || (s[1] == 0.0 || s[1] == 1.0) && p[1] == s[1];
                        assert!(
                            on_side,
                            "{metric}: boundary vertex {v} left its side: {s:?} -> {p:?}"
                        );
                        assert!((0.0..=1.0).contains(&p[0]) && (0.0..=1.0).contains(&p[1]));
                    }
                    VertexKind::Interior => {
                        assert!(
                            p[0] > 0.0 && p[0] < 1.0 && p[1] > 0.0 && p[1] < 1.0,
                            "{metric}: vertex {v} left the domain: {p:?}"
                        );
                    }
                }
            }
        }
        assert_eq!(c.mesh.connectivity, triangles_before);
        let after = QualitySummary::of(&metric_quality(&pos, &c.topo.triangles, &f, norm));
        eprintln!(
            "{metric}: quality min {:.3} -> {:.3}, mean {:.3} -> {:.3}",
            before.min, after.min, before.mean, after.mean
        );
        assert!(
            after.mean > before.mean,
            "{metric}: mean quality did not improve: {before:?} -> {after:?}"
        );
        assert!(
            after.min >= MIN_QUALITY_FLOOR * before.min,
            "{metric}: minimum quality fell below the floor: {before:?} -> {after:?}"
        );
    }
}

/// The library's whole run (`Smoothing`, what `chromaflow smooth` calls): the history has a
/// row per run with the iterations counted, the mesh stays valid, the quality improves, the
/// outputs and the summary are written, and the CPU f64 reference with exact weights ends
/// close to the device's quality.
#[test]
fn smoothing_run_records_history_and_writes_outputs() {
    use chromaflow::solver::smooth::run::{QUALITY_CSV, SUMMARY_JSON};
    use chromaflow::solver::smooth::{Smoothing, SmoothingOptions};
    let rt = rt();
    let mesh = generate::builtin("rect:900@3").unwrap();
    let metric = MetricSpec::resolve(Some("boundary-layer"), None, &mesh).unwrap();
    let options = SmoothingOptions {
        sampling: Sampling::Buffer,
        texture_size: 64,
        ..SmoothingOptions::default()
    };
    let mut sm = Smoothing::new(mesh, &metric, &options, &rt)
        .unwrap()
        .with_name("rect:900@3");
    let dir = tempfile::tempdir().unwrap();
    let mut seen = Vec::new();
    let files = sm
        .run_with_outputs(dir.path(), 25, 10, |done| seen.push(done))
        .unwrap();
    assert_eq!(seen, [10, 20, 25]);
    let its: Vec<usize> = sm.history().iter().map(|r| r.iteration).collect();
    assert_eq!(its, [0, 10, 20, 25]);
    assert_eq!(sm.iterations(), 25);
    assert!(sm.history().iter().all(|r| r.min_shape > 0.0));
    assert!(min_shape(sm.positions(), &sm.topology().triangles) > 0.0);
    let (before, after) = (sm.quality_before().clone(), sm.quality());
    assert!(after.mean > before.mean, "{before:?} -> {after:?}");
    assert_eq!(files.len(), 5, "{files:?}");
    assert!(files.iter().all(|f| f.is_file()), "{files:?}");
    let csv = std::fs::read_to_string(dir.path().join(QUALITY_CSV)).unwrap();
    assert_eq!(csv.lines().count(), 1 + 4, "{csv}");

    let prediction = sm.predict_quantized();
    assert!(
        (prediction.exact.mean - after.mean).abs() < 1e-3,
        "CPU exact {} vs device {}",
        prediction.exact.mean,
        after.mean
    );
    let summary = sm.write_summary(dir.path(), Some(&prediction)).unwrap();
    let written: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join(SUMMARY_JSON)).unwrap())
            .unwrap();
    // (serde_json parses floats to the nearest few ulps, so compare the fields, not the values)
    let keys = |v: &serde_json::Value| v.as_object().unwrap().keys().cloned().collect::<Vec<_>>();
    assert_eq!(keys(&summary), keys(&written));
    assert_eq!(summary["colors"], written["colors"]);
    assert_eq!(summary["iterations"], 25);
    assert_eq!(summary["mesh"], "rect:900@3");
    assert_eq!(summary["sampling"], "buffer");
    assert!(summary["quantization_prediction"]["cpu_exact_weights"]["mean"].is_number());
}
