//! Driven open boundaries (prescribed discharge and elevation), gauges and raster fields of the
//! shallow-water solver: physics on the f64 CPU reference, GPU (lavapipe in CI) = CPU.

use chromaflow::mesh::generate::split_square_grid;
use chromaflow::order::{prepare, Ordering, PrepareOptions};
use chromaflow::runtime::Runtime;
use chromaflow::solver::swe::boundary::{BoundaryCondition, DrivenBoundaries, TimeSeries};
use chromaflow::solver::swe::case::{Case, DEFAULT_SEED};
use chromaflow::solver::swe::cpu::CpuSolver;
use chromaflow::solver::swe::diag::layer_masses;
use chromaflow::solver::swe::friction::Friction;
use chromaflow::solver::swe::gauge::{GaugeSpec, Gauges, SampleClock};
use chromaflow::solver::swe::gpu::{Extras, FluxLayout, GpuSolver};
use chromaflow::solver::swe::mesh::{EdgeKind, SweMesh};
use chromaflow::solver::swe::{Physics, Scheme};
use std::collections::BTreeMap;
use std::path::Path;

fn rt() -> Runtime {
    Runtime::wgpu().expect("a GPU adapter is required (CI: lavapipe)")
}

/// Tags of `split_square_grid`: 1 bottom, 2 right, 3 top, 4 left.
const RIGHT: i32 = 2;
const LEFT: i32 = 4;

/// A channel [0, len] × [0, width] of nx × ny criss-cross squares, walls except the given
/// conditions, and its driven boundaries.
fn channel(
    len: f64,
    width: f64,
    nx: usize,
    ny: usize,
    conditions: &[(i32, BoundaryCondition)],
) -> (SweMesh, DrivenBoundaries) {
    let mesh = split_square_grid(0.0, len, 0.0, width, nx, ny).unwrap();
    let ordered = prepare(
        &mesh,
        &PrepareOptions::new(Ordering::Original, DEFAULT_SEED),
    )
    .unwrap();
    let map: BTreeMap<i32, (String, BoundaryCondition)> = conditions
        .iter()
        .map(|(t, bc)| (*t, (t.to_string(), bc.clone())))
        .collect();
    let sm = SweMesh::new(&ordered, |tag| {
        map.get(&tag).map_or(EdgeKind::Wall, |(_, bc)| bc.kind)
    })
    .unwrap();
    let db = DrivenBoundaries::new(&sm, &map).unwrap();
    (sm, db)
}

fn driven(kind: EdgeKind, series: TimeSeries) -> BoundaryCondition {
    BoundaryCondition {
        kind,
        series: Some(series),
    }
}

fn series(text: &str) -> TimeSeries {
    TimeSeries::parse(Path::new("series.csv"), text).unwrap()
}

fn cpu(
    sm: &SweMesh,
    db: &DrivenBoundaries,
    depth: &[f64],
    state: &[[f64; 6]],
    scheme: Scheme,
    phys: Physics,
) -> CpuSolver {
    CpuSolver::new_driven(
        sm,
        depth.to_vec(),
        state.to_vec(),
        scheme,
        phys,
        0.9,
        db.clone(),
    )
    .unwrap()
}

/// Discharge through the vertical line x = const, from the cells whose centroids lie in each
/// of `bins` slabs: Q ≈ Σ |V_i| (q1x + q2x)_i / slab width.
fn section_discharges(sm: &SweMesh, s: &CpuSolver, len: f64, bins: usize) -> Vec<f64> {
    let mut q = vec![0.0; bins];
    for (i, p) in sm.geom.centroids.iter().enumerate() {
        let b = ((p[0] / len * bins as f64) as usize).min(bins - 1);
        q[b] += sm.geom.areas[i] * (s.state[i][1] + s.state[i][4]);
    }
    q.iter().map(|v| v / (len / bins as f64)).collect()
}

/// A uniform two-layer stream (layers at different velocities) with the discharge it carries
/// prescribed at the inflow and the level it has prescribed at the outflow stays uniform: the
/// characteristic ghosts equal the interior state (free-stream preservation, f64).
#[test]
fn driven_boundaries_matching_a_uniform_stream_keep_it_uniform() {
    let (h1, u1, h2, u2, width) = (1.0, 0.4, 2.0, 0.2, 1.0);
    let q = (h1 * u1 + h2 * u2) * width;
    let (sm, db) = channel(
        10.0,
        width,
        10,
        1,
        &[
            (LEFT, driven(EdgeKind::Discharge, TimeSeries::constant(q))),
            (
                RIGHT,
                driven(EdgeKind::Elevation, TimeSeries::constant(0.0)),
            ),
        ],
    );
    let n = sm.num_cells();
    let want = [h1, h1 * u1, 0.0, h2, h2 * u2, 0.0];
    let phys = Physics {
        r: 0.8,
        ..Physics::default()
    };
    for scheme in Scheme::ALL {
        let mut s = cpu(&sm, &db, &vec![3.0; n], &vec![want; n], scheme, phys);
        s.run_to(2.0);
        for w in &s.state {
            for k in 0..6 {
                assert!((w[k] - want[k]).abs() < 1e-10, "{scheme}: {w:?}");
            }
        }
    }
}

/// A supercritical stream (Froude 3) is not disturbed by its driven boundaries: at the outflow
/// every characteristic leaves, so a prescribed elevation 1 m above the stream's surface is
/// ignored; at the inflow the stream's own discharge gives back the stream's state.
#[test]
fn supercritical_stream_passes_driven_boundaries_unchanged() {
    let (h, u) = (0.1, 3.0 * (9.81f64 * 0.1).sqrt());
    let (sm, db) = channel(
        10.0,
        1.0,
        10,
        1,
        &[
            (
                LEFT,
                driven(EdgeKind::Discharge, TimeSeries::constant(h * u)),
            ),
            (
                RIGHT,
                driven(EdgeKind::Elevation, TimeSeries::constant(1.0)),
            ),
        ],
    );
    let n = sm.num_cells();
    let want = [0.0, 0.0, 0.0, h, h * u, 0.0];
    for scheme in Scheme::ALL {
        let mut s = cpu(
            &sm,
            &db,
            &vec![0.5; n],
            &vec![want; n],
            scheme,
            Physics::default(),
        );
        s.run_to(3.0);
        for w in &s.state {
            for k in 0..6 {
                assert!((w[k] - want[k]).abs() < 1e-10, "{scheme}: {w:?}");
            }
        }
    }
}

/// A rising level floods a dry basin 2 m long: a flat bed 0.5 m below the reference level, dry
/// at the start, and the level prescribed at the open end rising from 0.4 m below the reference to 0
/// over 4 s. The ghost of a dry interior puts the water in the lower layer; nothing goes
/// negative or non-finite, the upper layer stays dry, the basin fills to the prescribed level
/// (its mean volume over 20..60 s is the basin's at η = 0 within 3%), and the GPU agrees with
/// the CPU over the first 30 steps of the flood (|Δh| ≤ 1e-3 m: fronts amplify round-off).
#[test]
fn rising_level_floods_a_dry_basin() {
    let level = series("0, -0.4\n4, 0\n1000, 0\n");
    let (sm, db) = channel(
        2.0,
        1.0,
        10,
        1,
        &[(RIGHT, driven(EdgeKind::Elevation, level))],
    );
    let depth = vec![0.5; sm.num_cells()];
    let state = vec![[0.0; 6]; sm.num_cells()];
    let phys = Physics::default();
    let mut c = cpu(&sm, &db, &depth, &state, Scheme::PvmIfcp, phys);
    c.run_to(20.0);
    // Without friction the filled basin keeps a lightly damped seiche (node at the open end,
    // period 4L/√(gh) ≈ 3.6 s): its time mean is the prescribed level.
    let mut volumes = Vec::new();
    for k in 1..=80 {
        c.run_to(20.0 + 0.5 * k as f64);
        volumes.push(layer_masses(&sm.geom.areas, &c.state)[1]);
        assert!(c.state.iter().flatten().all(|v| v.is_finite()));
        assert!(
            c.state.iter().all(|w| w[0] == 0.0 && w[3] >= 0.0),
            "upper layer stays dry"
        );
    }
    let mean = volumes.iter().sum::<f64>() / volumes.len() as f64;
    assert!(
        (mean - 1.0).abs() < 0.03,
        "mean volume {mean}: the basin holds 1 m³ at η = 0"
    );
    let rt = rt();
    let extras = Extras {
        boundaries: db.clone(),
        gauges: None,
    };
    let mut g = GpuSolver::with_extras(
        &rt,
        &sm,
        &depth,
        &state,
        Scheme::PvmIfcp,
        phys,
        0.9,
        FluxLayout::ColoredScatter,
        1,
        &extras,
    )
    .unwrap();
    let mut cg = cpu(&sm, &db, &depth, &state, Scheme::PvmIfcp, phys);
    g.steps(30).unwrap();
    cg.run_steps(30);
    let st = g.read_state().unwrap();
    assert!(st.iter().flatten().all(|v| v.is_finite()));
    let wet = cg.state.iter().filter(|w| w[3] > 1e-3).count();
    assert!(
        wet > 4 && wet < sm.num_cells(),
        "the flood front is inside: {wet} wet cells"
    );
    let dh = st
        .iter()
        .zip(&cg.state)
        .map(|(a, b)| (a[3] - b[3]).abs())
        .fold(0.0, f64::max);
    assert!(dh < 1e-3, "GPU vs CPU dh {dh:e}");
}

/// A channel at rest fed by a prescribed inflow discharge (ramped up from 0 to Q over 10 s, a
/// CSV time series) against a prescribed level downstream reaches the steady state, uniform
/// flow on the flat frictionless bottom, with the prescribed discharge through every
/// cross-section (single layer: the upper layer dry; and two layers). The seiche the start-up
/// leaves between the two reflecting ends decays by numerical dissipation alone (about a
/// factor 10 every 25 s on this mesh), hence the long run.
#[test]
fn prescribed_inflow_discharge_reaches_steady_state_through_every_section() {
    let (len, width, q_in) = (10.0, 1.0, 0.5);
    let ramp = series("t, Q\n0, 0\n10, 0.5\n1000, 0.5\n");
    let (sm, db) = channel(
        len,
        width,
        40,
        2,
        &[
            (LEFT, driven(EdgeKind::Discharge, ramp)),
            (
                RIGHT,
                driven(EdgeKind::Elevation, TimeSeries::constant(0.0)),
            ),
        ],
    );
    let n = sm.num_cells();
    for (label, layers) in [("one layer", [0.0, 1.0]), ("two layers", [0.4, 0.6])] {
        let state = vec![[layers[0], 0.0, 0.0, layers[1], 0.0, 0.0]; n];
        let phys = Physics {
            r: 0.9,
            ..Physics::default()
        };
        let mut s = cpu(&sm, &db, &vec![1.0; n], &state, Scheme::PvmIfcp, phys);
        s.run_to(160.0);
        let before = s.state.clone();
        s.run_to(161.0);
        let change = s
            .state
            .iter()
            .zip(&before)
            .flat_map(|(a, b)| (0..6).map(move |k| (a[k] - b[k]).abs()))
            .fold(0.0, f64::max);
        let sections = section_discharges(&sm, &s, len, 20);
        let worst = sections
            .iter()
            .map(|qs| (qs - q_in).abs() / q_in)
            .fold(0.0, f64::max);
        eprintln!(
            "{label}: change over the last second {change:.2e}, worst section error {worst:.2e}"
        );
        assert!(change < 1e-4, "{label}: not steady, change {change:e}");
        assert!(worst < 1e-3, "{label}: sections {sections:?}");
        // The level at the outflow is the prescribed one.
        let eta = |w: &[f64; 6]| w[0] + w[3] - 1.0;
        let out: Vec<f64> = (0..n)
            .filter(|&c| sm.geom.centroids[c][0] > len - 0.25)
            .map(|c| eta(&s.state[c]))
            .collect();
        assert!(
            out.iter().all(|e| e.abs() < 5e-3),
            "{label}: outflow levels {out:?}"
        );
    }
}

/// The built-in lake at rest (two layers over a bump) with the surface level prescribed on all
/// four sides at the lake's own level stays at rest: f64 to round-off, the GPU (f32) to its
/// round-off, both flux layouts.
#[test]
fn prescribed_level_on_a_lake_at_rest_keeps_it_at_rest() {
    let layouts = [FluxLayout::ColoredScatter, FluxLayout::CellGather];
    lake_at_rest_with_prescribed_level(1, Physics::default().friction, &layouts);
}

/// The same at order 2 with Manning and interface friction: the reconstruction of the lake's
/// flat surfaces gives edge states at the prescribed level, so the characteristic ghosts equal
/// them, and friction of still water is zero.
#[test]
fn prescribed_level_on_a_lake_at_rest_keeps_it_at_rest_at_order_2() {
    let friction = Friction {
        manning: 0.025,
        interface: 0.002,
    };
    lake_at_rest_with_prescribed_level(2, friction, &[FluxLayout::ColoredScatter]);
}

/// The built-in lake with η = 2 m prescribed on all four sides, at `order` with `friction`:
/// every scheme on the CPU (200 steps, max |q| < 1e-12) and PVM-IFCP on the GPU in each of
/// `layouts` (200 steps, max |q| < 2e-5, the surface within 2e-5 m).
fn lake_at_rest_with_prescribed_level(order: u32, friction: Friction, layouts: &[FluxLayout]) {
    let lake = Case::builtin("lake").unwrap();
    let phys = Physics {
        friction,
        ..lake.physics
    };
    let mesh = chromaflow::solver::swe::mesh::criss_cross(12).unwrap();
    let ordered = prepare(&mesh, &PrepareOptions::new(Ordering::Rcm, DEFAULT_SEED)).unwrap();
    let level = driven(EdgeKind::Elevation, TimeSeries::constant(2.0));
    let conds: BTreeMap<i32, (String, BoundaryCondition)> = (1..=4)
        .map(|t| (t, (t.to_string(), level.clone())))
        .collect();
    let sm = SweMesh::new(&ordered, |_| EdgeKind::Elevation).unwrap();
    let db = DrivenBoundaries::new(&sm, &conds).unwrap();
    let (depth, state) = lake.initial_state(&sm).unwrap();
    let max_q = |st: &[[f64; 6]]| {
        st.iter()
            .flat_map(|w| [w[1], w[2], w[4], w[5]])
            .fold(0.0f64, |m, v| m.max(v.abs()))
    };
    for scheme in Scheme::ALL {
        let mut s = cpu(&sm, &db, &depth, &state, scheme, phys);
        s.order = order;
        s.run_steps(200);
        assert!(
            max_q(&s.state) < 1e-12,
            "{scheme} order {order}: f64 |q| {:e}",
            max_q(&s.state)
        );
    }
    let rt = rt();
    for &layout in layouts {
        let extras = Extras {
            boundaries: db.clone(),
            gauges: None,
        };
        let mut g = GpuSolver::with_extras(
            &rt,
            &sm,
            &depth,
            &state,
            Scheme::PvmIfcp,
            phys,
            0.9,
            layout,
            order,
            &extras,
        )
        .unwrap();
        g.steps(200).unwrap();
        let st = g.read_state().unwrap();
        let q = max_q(&st);
        assert!(q < 2e-5, "{layout:?} order {order}: f32 |q| {q:e}");
        let eta_err = st
            .iter()
            .zip(&depth)
            .map(|(w, h)| (w[0] + w[3] - h - 2.0).abs())
            .fold(0.0, f64::max);
        assert!(
            eta_err < 2e-5,
            "{layout:?} order {order}: surface moved by {eta_err:e}"
        );
    }
}

/// The driven channels of the GPU = CPU tests: a time-series inflow discharge (the ramp
/// crosses several points within the steps) with an outflowing discharge, or with a tidal
/// elevation, at the other end.
fn driven_channel_runs() -> [(&'static str, Vec<(i32, BoundaryCondition)>); 2] {
    let inflow = series("0, 0.2\n0.05, 0.8\n0.1, 0.5\n0.2, 1.2\n10, 1.2\n");
    [
        (
            "discharge in, discharge out",
            vec![
                (LEFT, driven(EdgeKind::Discharge, inflow.clone())),
                (
                    RIGHT,
                    driven(EdgeKind::Discharge, TimeSeries::constant(-0.3)),
                ),
            ],
        ),
        (
            "discharge in, tide out",
            vec![
                (LEFT, driven(EdgeKind::Discharge, inflow)),
                (
                    RIGHT,
                    driven(
                        EdgeKind::Elevation,
                        series("0, 0\n0.1, 0.15\n0.2, -0.1\n10, 0\n"),
                    ),
                ),
            ],
        ),
    ]
}

/// Depth 2 + 0.2 sin(1.3 x) and two moving layers (h1 = 0.8 + 0.1 cos 2y, u1 = (0.1, 0.05),
/// u2 = (−0.05, 0)) on a channel's cells.
fn two_layer_channel_state(sm: &SweMesh) -> (Vec<f64>, Vec<[f64; 6]>) {
    let depth: Vec<f64> = sm
        .geom
        .centroids
        .iter()
        .map(|p| 2.0 + 0.2 * (p[0] * 1.3).sin())
        .collect();
    let state = sm
        .geom
        .centroids
        .iter()
        .zip(&depth)
        .map(|(p, &h)| {
            let h1 = 0.8 + 0.1 * (p[1] * 2.0).cos();
            [h1, 0.1 * h1, 0.05 * h1, h - h1, -0.05 * (h - h1), 0.0]
        })
        .collect();
    (depth, state)
}

/// Largest |Δh| (h1, h2) and |Δq| (the momenta) between two states.
fn max_dh_dq(a: &[[f64; 6]], b: &[[f64; 6]]) -> (f64, f64) {
    let (mut dh, mut dq) = (0.0f64, 0.0f64);
    for (a, b) in a.iter().zip(b) {
        for k in 0..6 {
            let d = (a[k] - b[k]).abs();
            if k % 3 == 0 {
                dh = dh.max(d);
            } else {
                dq = dq.max(d);
            }
        }
    }
    (dh, dq)
}

/// GPU = CPU with driven boundaries: the two driven channels of [`driven_channel_runs`];
/// every scheme and both wgpu flux layouts, 40 steps: |Δh| ≤ 5e-5 m, |Δq| ≤ 2e-4 m² s⁻¹ (the
/// plain solver's bounds), the same time.
#[test]
fn driven_boundaries_gpu_matches_cpu() {
    let rt = rt();
    for (label, conds) in driven_channel_runs() {
        let (sm, db) = channel(4.0, 1.0, 12, 3, &conds);
        let (depth, state) = two_layer_channel_state(&sm);
        let phys = Physics {
            r: 0.7,
            ..Physics::default()
        };
        for scheme in Scheme::ALL {
            let mut c = cpu(&sm, &db, &depth, &state, scheme, phys);
            c.run_steps(40);
            for layout in [FluxLayout::ColoredScatter, FluxLayout::CellGather] {
                let extras = Extras {
                    boundaries: db.clone(),
                    gauges: None,
                };
                let mut g = GpuSolver::with_extras(
                    &rt, &sm, &depth, &state, scheme, phys, 0.9, layout, 1, &extras,
                )
                .unwrap();
                g.steps(40).unwrap();
                let (dh, dq) = max_dh_dq(&g.read_state().unwrap(), &c.state);
                let t = g.read_control().unwrap().t as f64;
                eprintln!("{label} {scheme} {layout:?}: dh {dh:.2e} dq {dq:.2e} t {t}");
                assert!(
                    dh <= 5e-5 && dq <= 2e-4,
                    "{label} {scheme} {layout:?}: dh {dh:e} dq {dq:e}"
                );
                assert!((t - c.t).abs() <= 1e-5 * c.t, "{label}: t {t} vs {}", c.t);
            }
        }
        // The inflow really enters: the mass grew by about the discharge's time integral.
        let mut c = cpu(&sm, &db, &depth, &state, Scheme::PvmIfcp, phys);
        let m0 = layer_masses(&sm.geom.areas, &c.state);
        c.run_to(0.05);
        let m1 = layer_masses(&sm.geom.areas, &c.state);
        assert!(m1[0] + m1[1] > m0[0] + m0[1], "{label}: no mass entered");
    }
}

/// GPU = CPU with driven boundaries at order 2 (`swe_edge_flux2` builds the ghosts from the
/// reconstructed edge states, Heun's second stage takes the boundary values at t^n + Δt), with
/// Manning and interface friction and two gauges sampled every step: the driven channels of
/// [`driven_channel_runs`], every scheme, 40 steps: the state within |Δh| ≤ 5e-5 m,
/// |Δq| ≤ 2e-4 m² s⁻¹ and the same time (the first-order bounds), and 41 gauge samples (the
/// initial state, then one after every full step) within the same bounds of the f64
/// reference's.
#[test]
fn driven_boundaries_at_order_2_gpu_matches_cpu() {
    let rt = rt();
    let phys = Physics {
        r: 0.7,
        friction: Friction {
            manning: 0.025,
            interface: 0.002,
        },
        ..Physics::default()
    };
    for (label, conds) in driven_channel_runs() {
        let (sm, db) = channel(4.0, 1.0, 12, 3, &conds);
        let (depth, state) = two_layer_channel_state(&sm);
        let specs = [("inlet", 0.2, 0.5), ("outlet", 3.9, 0.3)].map(|(name, x, y)| GaugeSpec {
            name: name.to_string(),
            x,
            y,
        });
        let gauges = Gauges::locate(&specs, 0.0, &sm).unwrap();
        for scheme in Scheme::ALL {
            let mut c = cpu(&sm, &db, &depth, &state, scheme, phys);
            c.order = 2;
            let mut want = vec![gauges.gather(0.0, &c.state, &depth)];
            for _ in 0..40 {
                c.step(f64::INFINITY);
                want.push(gauges.gather(c.t, &c.state, &depth));
            }
            let extras = Extras {
                boundaries: db.clone(),
                gauges: Some(gauges.clone()),
            };
            let mut g = GpuSolver::with_extras(
                &rt,
                &sm,
                &depth,
                &state,
                scheme,
                phys,
                0.9,
                FluxLayout::ColoredScatter,
                2,
                &extras,
            )
            .unwrap();
            g.steps(40).unwrap();
            let (dh, dq) = max_dh_dq(&g.read_state().unwrap(), &c.state);
            let t = g.read_control().unwrap().t as f64;
            let samples = g.take_gauge_samples();
            assert_eq!(samples.len(), 41, "{label} {scheme}: one sample per step");
            let (mut sh, mut sq, mut st) = (0.0f64, 0.0f64, 0.0f64);
            for (a, w) in samples.iter().zip(&want) {
                st = st.max((a.t - w.t).abs());
                let six = |v: &[f64; 7]| [v[0], v[1], v[2], v[3], v[4], v[5]];
                let ga: Vec<[f64; 6]> = a.cells.iter().map(six).collect();
                let gw: Vec<[f64; 6]> = w.cells.iter().map(six).collect();
                let (h, q) = max_dh_dq(&ga, &gw);
                sh = sh.max(h);
                sq = sq.max(q);
            }
            eprintln!(
                "{label} {scheme} order 2: dh {dh:.2e} dq {dq:.2e} t {t}; gauges dh {sh:.2e} \
                 dq {sq:.2e} dt {st:.1e}"
            );
            assert!(
                dh <= 5e-5 && dq <= 2e-4,
                "{label} {scheme}: dh {dh:e} dq {dq:e}"
            );
            assert!((t - c.t).abs() <= 1e-5 * c.t, "{label}: t {t} vs {}", c.t);
            assert!(
                sh <= 5e-5 && sq <= 2e-4 && st <= 1e-5,
                "{label} {scheme}: gauges dh {sh:e} dq {sq:e} dt {st:e}"
            );
        }
    }
}

/// Gauges GPU = CPU on Test 1 (M(16)): three gauges sampled every step for 25 steps (26 rows
/// with the initial state), then every 0.05 s: the same sample count, times within f32
/// round-off and values within the plain solver's bounds.
#[test]
fn gauges_sample_the_cells_holding_their_points_gpu_matches_cpu() {
    let case = Case::builtin("test1").unwrap();
    let mesh = chromaflow::solver::swe::mesh::criss_cross(16).unwrap();
    let ordered = prepare(&mesh, &PrepareOptions::new(Ordering::Rcm, DEFAULT_SEED)).unwrap();
    let sm = SweMesh::new(&ordered, |_| EdgeKind::Wall).unwrap();
    let (depth, state) = case.initial_state(&sm).unwrap();
    let specs = vec![
        GaugeSpec {
            name: "centre".into(),
            x: 0.1,
            y: 0.05,
        },
        GaugeSpec {
            name: "ring".into(),
            x: 1.5,
            y: 0.3,
        },
        GaugeSpec {
            name: "far".into(),
            x: -4.0,
            y: 3.0,
        },
    ];
    let rt = rt();
    for every in [0.0, 0.05] {
        let gauges = Gauges::locate(&specs, every, &sm).unwrap();
        for (g, &c) in specs.iter().zip(&gauges.cells) {
            assert_eq!(sm.locate(g.x, g.y), Some(c as usize));
        }
        let extras = Extras {
            boundaries: DrivenBoundaries::default(),
            gauges: Some(gauges.clone()),
        };
        let mut g = GpuSolver::with_extras(
            &rt,
            &sm,
            &depth,
            &state,
            Scheme::PvmIfcp,
            case.physics,
            case.cfl,
            FluxLayout::ColoredScatter,
            1,
            &extras,
        )
        .unwrap();
        g.steps(25).unwrap();
        let got = g.take_gauge_samples();
        assert_eq!(g.gauge_samples_taken().unwrap() as usize, got.len());
        let mut c = CpuSolver::new(
            &sm,
            depth.clone(),
            state.clone(),
            Scheme::PvmIfcp,
            case.physics,
            case.cfl,
        )
        .unwrap();
        let mut clock = SampleClock::default();
        let mut want = Vec::new();
        if clock.due(every, 0.0, 0.0, 0) {
            want.push(gauges.gather(0.0, &c.state, &depth));
        }
        for _ in 0..25 {
            let dt = c.step(f64::INFINITY);
            if clock.due(every, c.t, dt, c.steps) {
                want.push(gauges.gather(c.t, &c.state, &depth));
            }
        }
        if every == 0.0 {
            assert_eq!(got.len(), 26);
        } else {
            assert!(got.len() > 2 && got.len() < 26, "{} samples", got.len());
        }
        assert_eq!(got.len(), want.len(), "every {every}");
        for (a, b) in got.iter().zip(&want) {
            assert!((a.t - b.t).abs() <= 1e-6, "t {} vs {}", a.t, b.t);
            for (x, y) in a.cells.iter().zip(&b.cells) {
                for k in 0..7 {
                    let tol = if k == 0 || k == 3 || k == 6 {
                        5e-5
                    } else {
                        2e-4
                    };
                    assert!(
                        (x[k] - y[k]).abs() <= tol,
                        "every {every} t {}: {x:?} vs {y:?}",
                        a.t
                    );
                }
            }
        }
    }
}

/// A gauge outside the mesh is an error naming it.
#[test]
fn gauge_outside_the_mesh_is_named() {
    let text = "[mesh]\nbuiltin = \"cross:4\"\n[physics]\nr = 0.5\n[initial]\nH = 1.0\nh1 = 0.5\n\
                h2 = 0.5\n[run]\nfinal_time = 0.1\n[[gauges]]\nname = \"inside\"\nx = 0.2\ny = 0.2\n\
                [[gauges]]\nname = \"pier\"\nx = 7.0\ny = 0.5\n";
    let case = Case::from_toml(text, Path::new("g.toml")).unwrap();
    let e = case.prepare().unwrap_err().to_string();
    assert!(
        e.contains("g.toml: [[gauges]]: gauge 'pier' at (7, 0.5) lies outside the mesh"),
        "{e}"
    );
}

/// f(x, y) = 2 + 0.1 x − 0.05 y: bilinear interpolation reproduces it exactly.
fn linear(x: f64, y: f64) -> f64 {
    2.0 + 0.1 * x - 0.05 * y
}

/// An ESRI ASCII grid of `linear` on [−6, 6]² (cells of 0.5, corner-registered).
fn write_asc(path: &Path) {
    let (n, dx) = (24, 0.5);
    let mut text = format!(
        "ncols {n}\nnrows {n}\nxllcorner -6\nyllcorner -6.0\ncellsize {dx}\nNODATA_value -9999\n"
    );
    for r in 0..n {
        let y = 6.0 - (r as f64 + 0.5) * dx;
        let row: Vec<String> = (0..n)
            .map(|c| format!("{}", linear(-6.0 + (c as f64 + 0.5) * dx, y)))
            .collect();
        text.push_str(&row.join(" "));
        text.push('\n');
    }
    std::fs::write(path, text).unwrap();
}

/// A GeoTIFF of `linear` on [−6, 6]², f32 or f64, PixelIsArea (tie point at the top-left
/// corner) or PixelIsPoint (tie point at the top-left pixel's centre).
fn write_tiff(path: &Path, double: bool, pixel_is_point: bool) {
    use tiff::encoder::{colortype, TiffEncoder};
    use tiff::tags::Tag;
    let (n, dx) = (24u32, 0.5);
    let values: Vec<f64> = (0..n)
        .flat_map(|r| {
            (0..n).map(move |c| linear(-6.0 + (c as f64 + 0.5) * dx, 6.0 - (r as f64 + 0.5) * dx))
        })
        .collect();
    let mut file = std::fs::File::create(path).unwrap();
    let mut enc = TiffEncoder::new(&mut file).unwrap();
    let corner = if pixel_is_point { 0.5 * dx } else { 0.0 };
    let geo = |img: &mut tiff::encoder::DirectoryEncoder<'_, _, _>| {
        img.write_tag(Tag::ModelPixelScaleTag, &[dx, dx, 0.0][..])
            .unwrap();
        img.write_tag(
            Tag::ModelTiepointTag,
            &[0.0, 0.0, 0.0, -6.0 + corner, 6.0 - corner, 0.0][..],
        )
        .unwrap();
        if pixel_is_point {
            img.write_tag(Tag::GeoKeyDirectoryTag, &[1u16, 1, 0, 1, 1025, 0, 1, 2][..])
                .unwrap();
        }
    };
    if double {
        let mut img = enc.new_image::<colortype::Gray64Float>(n, n).unwrap();
        geo(img.encoder());
        img.write_data(&values).unwrap();
    } else {
        let mut img = enc.new_image::<colortype::Gray32Float>(n, n).unwrap();
        geo(img.encoder());
        let v32: Vec<f32> = values.iter().map(|&v| v as f32).collect();
        img.write_data(&v32).unwrap();
    }
}

fn raster_case(dir: &Path, raster: &str, domain: f64, outside: &str) -> String {
    let text = format!(
        "[mesh]\nbuiltin = \"rect:600@3\"\ndomain = [-{domain}, {domain}, -{domain}, {domain}]\n\
         [physics]\nr = 0.5\n[initial]\nH = {{ raster = \"{raster}\"{outside} }}\nh1 = 0.5\n\
         h2 = \"H - h1\"\n[run]\nfinal_time = 0.1\n"
    );
    std::fs::write(dir.join("case.toml"), &text).unwrap();
    text
}

/// Bathymetry from an ESRI ASCII grid and from GeoTIFFs (f32, f64, PixelIsArea and
/// PixelIsPoint) is the raster sampled bilinearly at the cell barycentres: a linear field comes
/// back exactly (f64 to 1e-12, f32 samples to their rounding).
#[test]
fn raster_bathymetry_is_bilinear_at_barycentres() {
    let dir = tempfile::tempdir().unwrap();
    write_asc(&dir.path().join("bathy.asc"));
    write_tiff(&dir.path().join("bathy32.tif"), false, false);
    write_tiff(&dir.path().join("bathy64.tif"), true, false);
    write_tiff(&dir.path().join("point64.tif"), true, true);
    for (file, tol) in [
        ("bathy.asc", 1e-12),
        ("bathy64.tif", 1e-12),
        ("point64.tif", 1e-12),
        ("bathy32.tif", 1e-6),
    ] {
        raster_case(dir.path(), file, 5.0, "");
        let case = Case::from_file(&dir.path().join("case.toml")).unwrap();
        let setup = case.prepare().unwrap();
        let err = setup
            .mesh
            .geom
            .centroids
            .iter()
            .zip(&setup.depth)
            .map(|(p, h)| (h - linear(p[0], p[1])).abs())
            .fold(0.0, f64::max);
        assert!(err <= tol, "{file}: {err:e}");
        assert!(setup
            .state
            .iter()
            .zip(&setup.depth)
            .all(|(w, h)| (w[3] - (h - 0.5)).abs() < 1e-12));
    }
}

/// Outside the raster: an error naming the raster, the key and the cell by default; the value
/// or the nearest edge when the case says so.
#[test]
fn raster_outside_follows_the_case() {
    let dir = tempfile::tempdir().unwrap();
    write_asc(&dir.path().join("bathy.asc"));
    let prepared = |outside: &str| {
        raster_case(dir.path(), "bathy.asc", 8.0, outside);
        Case::from_file(&dir.path().join("case.toml")).and_then(|c| c.prepare())
    };
    let e = prepared("").unwrap_err().to_string();
    assert!(
        e.contains("case.toml: [initial] H: cell")
            && e.contains("bathy.asc: point (")
            && e.contains("outside the raster's extent"),
        "{e}"
    );
    let e = prepared(", outside = \"nearest\"").unwrap_err().to_string();
    assert!(
        e.contains("[initial] H outside") && e.contains("is not \"error\", \"clamp\""),
        "{e}"
    );
    let s = prepared(", outside = 3.5").unwrap();
    assert!(s.mesh.geom.centroids.iter().zip(&s.depth).all(|(p, &h)| {
        // Inside the extent the half-pixel border extends the outer centres' values.
        let inside = p[0].abs() <= 6.0 && p[1].abs() <= 6.0;
        let (x, y) = (p[0].clamp(-5.75, 5.75), p[1].clamp(-5.75, 5.75));
        (inside && (h - linear(x, y)).abs() < 1e-12) || (!inside && h == 3.5)
    }));
    let s = prepared(", outside = \"clamp\"").unwrap();
    assert!(s.mesh.geom.centroids.iter().zip(&s.depth).all(|(p, &h)| {
        let (x, y) = (p[0].clamp(-5.75, 5.75), p[1].clamp(-5.75, 5.75));
        (h - linear(x, y)).abs() < 1e-12
    }));
}

/// Malformed raster files are errors naming the case key and the file (with its line for a
/// grid); a truncated GeoTIFF and one without georeferencing too.
#[test]
fn malformed_rasters_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write_asc(&d.join("bathy.asc"));
    write_tiff(&d.join("bathy64.tif"), true, false);
    let asc = std::fs::read_to_string(d.join("bathy.asc")).unwrap();
    std::fs::write(
        d.join("bad.asc"),
        asc.replacen("cellsize 0.5", "cellsize 0.5 0.5", 1),
    )
    .unwrap();
    let tif = std::fs::read(d.join("bathy64.tif")).unwrap();
    std::fs::write(d.join("cut.tif"), &tif[..tif.len() / 2]).unwrap();
    {
        use tiff::encoder::{colortype, TiffEncoder};
        let mut f = std::fs::File::create(d.join("plain.tif")).unwrap();
        let mut enc = TiffEncoder::new(&mut f).unwrap();
        enc.write_image::<colortype::Gray32Float>(2, 2, &[1.0, 2.0, 3.0, 4.0])
            .unwrap();
    }
    for (file, want) in [
        (
            "bad.asc",
            "bad.asc:5: header line 'cellsize' has more than one value",
        ),
        ("cut.tif", "cut.tif: TIFF"),
        (
            "plain.tif",
            "plain.tif: TIFF: no ModelPixelScale tag: not georeferenced",
        ),
        ("missing.asc", "missing.asc"),
    ] {
        raster_case(d, file, 5.0, "");
        let e = Case::from_file(&d.join("case.toml"))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("case.toml: [initial] H raster:") && e.contains(want),
            "{file}: {e}"
        );
    }
}

/// The gauged channel at `order` (with Manning and interface friction at order 2).
fn gauge_case(dir: &Path, out: &str, order: u32) -> Case {
    std::fs::write(dir.join("inflow.csv"), "t,Q\n0,0\n0.05,2\n1,2\n").unwrap();
    let text = format!(
        "name = \"gauged\"\n[mesh]\nbuiltin = \"cross:12\"\ndomain = [0.0, 6.0, 0.0, 2.0]\n\
         [physics]\nr = 0.8\n[initial]\nH = 2.0\nh1 = 0.5\nh2 = 1.5\n[run]\nfinal_time = 0.1\n\
         [boundary]\nleft = {{ discharge = \"inflow.csv\" }}\nright = {{ elevation = 0.0 }}\n\
         [[gauges]]\nname = \"inlet\"\nx = 0.3\ny = 1.0\n[[gauges]]\nname = \"outlet\"\nx = 5.7\n\
         y = 1.0\n[output]\ndir = \"{out}\"\ngauge_every = 0.02\nfields = [\"eta1\"]\n"
    )
    .replace(
        "final_time = 0.1\n",
        &format!("final_time = 0.1\norder = {order}\n"),
    );
    let text = if order == 2 {
        text + "[friction]\nmanning = 0.025\ninterface = 0.002\n"
    } else {
        text
    };
    std::fs::write(dir.join("case.toml"), text).unwrap();
    let mut case = Case::from_file(&dir.join("case.toml")).unwrap();
    case.output.dir = dir.join(out);
    case
}

/// A run writes one CSV per gauge (t, h1, h2, u1, v1, u2, v2, eta1, eta2): the initial state,
/// then the first step at or after every 0.02 s; the inflow raises the level at the inlet
/// gauge. A restart from a checkpoint rewrites the rows after it to the same bytes (the
/// restarted run equals the uninterrupted one). At order 1 and at order 2 with friction.
#[test]
fn gauge_csvs_are_written_and_survive_a_restart() {
    let rt = rt();
    for order in [1, 2] {
        gauge_csvs_survive_a_restart(&rt, order);
    }
}

fn gauge_csvs_survive_a_restart(rt: &Runtime, order: u32) {
    use chromaflow::solver::swe::driver::Simulation;
    use chromaflow::solver::RunControl;
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let case = gauge_case(d, "a", order);
    let mut sim = Simulation::new(&case, rt, FluxLayout::ColoredScatter).unwrap();
    let summary = sim.run(&RunControl::default(), |_, _| {}).unwrap();
    assert!(
        !summary.closed && summary.mass_guard.is_none(),
        "driven: no mass guard"
    );
    let inlet = d.join("a/gauge_inlet.csv");
    assert!(
        summary.files.contains(&inlet) && summary.files.contains(&d.join("a/gauge_outlet.csv"))
    );
    let text = std::fs::read_to_string(&inlet).unwrap();
    let rows: Vec<Vec<f64>> = text
        .lines()
        .skip(1)
        .map(|l| l.split(',').map(|v| v.parse().unwrap()).collect())
        .collect();
    assert_eq!(text.lines().next(), Some("t,h1,h2,u1,v1,u2,v2,eta1,eta2"));
    assert!((5..=6).contains(&rows.len()), "{text}");
    assert_eq!(rows[0], vec![0.0, 0.5, 1.5, 0.0, 0.0, 0.0, 0.0, 0.0, -0.5]);
    for (k, r) in rows.iter().enumerate().skip(1) {
        assert!(
            r[0] >= 0.02 * k as f64 - 1e-6 && r[0] > rows[k - 1][0],
            "{text}"
        );
    }
    let last = rows.last().unwrap();
    assert!(
        last[7] > 1e-3 && last[5] > 0.0,
        "the inflow should raise and move the inlet: {last:?}"
    );

    // Same run with a checkpoint after 0.06 s; garbage after its rows must go on restart.
    let case_b = gauge_case(d, "b", order);
    let rc = RunControl {
        checkpoint_every: Some(0.06),
        ..RunControl::default()
    };
    Simulation::new(&case_b, rt, FluxLayout::ColoredScatter)
        .unwrap()
        .run(&rc, |_, _| {})
        .unwrap();
    let b_inlet = d.join("b/gauge_inlet.csv");
    assert_eq!(std::fs::read(&b_inlet).unwrap(), text.as_bytes());
    let mut spoiled = text.clone();
    spoiled.push_str("9,9,9,9,9,9,9,9,9\n");
    std::fs::write(&b_inlet, &spoiled).unwrap();
    let restart = RunControl {
        restart: Some(d.join("b/checkpoint.ckpt")),
        ..rc
    };
    Simulation::new(&case_b, rt, FluxLayout::ColoredScatter)
        .unwrap()
        .run(&restart, |_, _| {})
        .unwrap();
    assert_eq!(std::fs::read_to_string(&b_inlet).unwrap(), text);
    assert_eq!(
        std::fs::read(d.join("b/gauge_outlet.csv")).unwrap(),
        std::fs::read(d.join("a/gauge_outlet.csv")).unwrap()
    );
}
