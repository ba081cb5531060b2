//! `chromaflow dg`: run the DG Euler solver on a builtin case (vortex, dmr, kh) or a TOML case
//! file, writing density (and optionally pressure, Mach, speed) PNG snapshots, VTU files and a
//! CSV of conserved totals and errors. `chromaflow bench dg`: time per step of DMR p = 1 under
//! 5-color greedy vs 3-color GK coloring, with and without renumbering, and p = 1..4 throughput.

use crate::cli::GlobalArgs;
use crate::color::faces::greedy_face_coloring;
use crate::commands::progress::bar;
use crate::error::Error;
use crate::gpu::timing::median;
use crate::gpu::{Backend, GpuOptions};
use crate::mesh::{Mesh, Topology};
use crate::order::{apply_ordering, order_mesh, OrderedMesh, Ordering};
use crate::output::{save_field_png, write_json_atomic, CsvWriter, Field, PlotOptions};
use crate::solver::dg::cpu::Operator;
use crate::solver::dg::euler::{pressure, sound_speed};
use crate::solver::dg::gpu::{new_dg_device, GpuConfig, Kernel};
use crate::solver::dg::{BasisTables, Case, DgMesh, MeshSource, NumericalFlux};
use clap::Args;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Options of `chromaflow dg`.
#[derive(Args, Debug)]
pub struct DgArgs {
    /// TOML case file.
    #[arg(long, conflicts_with = "builtin")]
    pub case: Option<PathBuf>,
    /// Builtin case: vortex, dmr (double Mach reflection), kh (Kelvin-Helmholtz).
    #[arg(long)]
    pub builtin: Option<String>,
    /// Polynomial order p (0..=4).
    #[arg(long)]
    pub order: Option<usize>,
    /// Mesh file (.msh) or builtin spec replacing the case's mesh.
    #[arg(long, conflicts_with = "cells")]
    pub mesh: Option<String>,
    /// About this many triangles for the builtin rectangle mesh of the case.
    #[arg(long)]
    pub cells: Option<usize>,
    /// Element/face ordering.
    #[arg(long, value_enum, default_value_t = Ordering::ColorRenumbered)]
    pub ordering: Ordering,
    /// Numerical flux.
    #[arg(long, value_enum)]
    pub flux: Option<NumericalFlux>,
    /// Output directory.
    #[arg(long, default_value = "out/dg")]
    pub out: PathBuf,
    /// Snapshot interval in time units (default: the case's).
    #[arg(long)]
    pub snapshot_every: Option<f64>,
    /// Final time (default: the case's).
    #[arg(long)]
    pub t_end: Option<f64>,
    /// CFL number (default: the case's).
    #[arg(long)]
    pub cfl: Option<f64>,
    /// Fixed time step instead of the CFL one.
    #[arg(long)]
    pub dt: Option<f64>,
    /// Extra fields to plot besides density: pressure, mach, speed (comma separated).
    #[arg(long, value_delimiter = ',')]
    pub fields: Vec<String>,
    /// Also write a VTU file per snapshot.
    #[arg(long)]
    pub vtu: bool,
    /// Steps recorded per GPU submit.
    #[arg(long, default_value_t = 50)]
    pub batch: usize,
    /// Mesh seed.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
}

fn load_case(args: &DgArgs) -> anyhow::Result<Case> {
    let mut case = match (&args.case, &args.builtin) {
        (Some(path), _) => Case::from_file(path)?,
        (None, Some(name)) => Case::builtin(name, args.cells)?,
        (None, None) => Case::builtin("dmr", args.cells)?,
    };
    if let Some(n) = args.cells {
        if let MeshSource::Rectangle { n: cells, .. } = &mut case.mesh {
            *cells = n;
        }
    }
    if let Some(m) = &args.mesh {
        case.mesh = MeshSource::Spec(m.clone());
    }
    if let Some(p) = args.order {
        if p > crate::solver::dg::basis::MAX_ORDER {
            return Err(Error::Invalid(format!("--order must be 0..=4, got {p}")).into());
        }
        case.order = p;
    }
    if let Some(f) = args.flux {
        case.flux = f;
    }
    if let Some(t) = args.t_end {
        if t.is_nan() || t <= 0.0 {
            return Err(Error::Invalid(format!("--t-end must be positive, got {t}")).into());
        }
        case.t_end = t;
    }
    if let Some(c) = args.cfl {
        if c.is_nan() || c <= 0.0 || c > 1.0 {
            return Err(Error::Invalid(format!("--cfl must be in (0, 1], got {c}")).into());
        }
        case.cfl = c;
    }
    if let Some(s) = args.snapshot_every {
        if s.is_nan() || s <= 0.0 {
            return Err(
                Error::Invalid(format!("--snapshot-every must be positive, got {s}")).into(),
            );
        }
        case.snapshot_every = Some(s);
    }
    Ok(case)
}

/// Per-vertex values of a per-element-vertex quantity, averaged over the elements around
/// each vertex (a continuous rendering of the discontinuous polynomials).
fn vertex_field(mesh: &Mesh, per_elem_vertex: &[[f64; 3]]) -> Vec<f64> {
    let mut sum = vec![0.0; mesh.num_points()];
    let mut cnt = vec![0.0; mesh.num_points()];
    for (e, vals) in per_elem_vertex.iter().enumerate() {
        for (v, val) in mesh.element(e).iter().zip(vals) {
            sum[*v as usize] += val;
            cnt[*v as usize] += 1.0;
        }
    }
    sum.iter()
        .zip(&cnt)
        .map(|(s, c)| if *c > 0.0 { s / c } else { f64::NAN })
        .collect()
}

/// A plotting mesh: every element split into m^2 sub-triangles on the lattice (i/m, j/m) of
/// its reference triangle (m = 2p for p >= 2, else 1), points not shared between elements, so
/// each element's polynomial is drawn sub-sampled and smooth inside, discontinuous across edges.
struct PlotMesh {
    mesh: Mesh,
    /// Basis values at each lattice point, `[point][mode]`.
    phi: Vec<f64>,
    points_per_element: usize,
}

impl PlotMesh {
    fn new(dm: &DgMesh, tables: &BasisTables) -> PlotMesh {
        let m = if tables.p >= 2 { 2 * tables.p } else { 1 };
        let mut lattice = Vec::new();
        for j in 0..=m {
            for i in 0..=m - j {
                lattice.push([i as f64 / m as f64, j as f64 / m as f64]);
            }
        }
        let row_start = |j: usize| -> usize { (0..j).map(|r| m + 1 - r).sum() };
        let at = |i: usize, j: usize| -> u32 { (row_start(j) + i) as u32 };
        let mut mesh = Mesh::new(2);
        let npe = lattice.len();
        for e in 0..dm.num_elements {
            let base = (e * npe) as u32;
            for x in &lattice {
                let [px, py] = dm.map(e, x[0], x[1]);
                mesh.points.push([px, py, 0.0]);
            }
            for j in 0..m {
                for i in 0..m - j {
                    let up = [at(i, j), at(i + 1, j), at(i, j + 1)].map(|v| base + v);
                    mesh.push_element(crate::mesh::ElementKind::Triangle, &up, 1);
                    if i + j + 1 < m {
                        let down = [at(i + 1, j), at(i + 1, j + 1), at(i, j + 1)].map(|v| base + v);
                        mesh.push_element(crate::mesh::ElementKind::Triangle, &down, 1);
                    }
                }
            }
        }
        let phi = lattice
            .iter()
            .flat_map(|x| tables.eval(x[0], x[1]))
            .collect();
        PlotMesh {
            mesh,
            phi,
            points_per_element: npe,
        }
    }

    /// Values of a derived quantity at every plotting point.
    fn values(&self, op: &Operator, c: &[f64], name: &str) -> Vec<f64> {
        let np = op.tables.np;
        (0..op.mesh.num_elements)
            .flat_map(|e| {
                let coef = op.element(c, e);
                (0..self.points_per_element)
                    .map(|q| {
                        derived(
                            name,
                            &Operator::eval(&coef, &self.phi[q * np..(q + 1) * np]),
                        )
                    })
                    .collect::<Vec<f64>>()
            })
            .collect()
    }
}

/// Derived quantity of a state by name.
fn derived(name: &str, u: &[f64; 4]) -> f64 {
    match name {
        "pressure" => pressure(u),
        "mach" => (u[1] * u[1] + u[2] * u[2]).sqrt() / u[0] / sound_speed(u).max(1e-300),
        "speed" => (u[1] * u[1] + u[2] * u[2]).sqrt() / u[0],
        _ => u[0],
    }
}

/// What a snapshot needs besides the solution.
struct Snapshots<'a> {
    out: &'a Path,
    om: &'a OrderedMesh,
    op: &'a Operator<'a>,
    fields: &'a [String],
    case: &'a Case,
    vtu: bool,
    plot: &'a PlotMesh,
}

/// Write the PNGs (and VTU) of snapshot `index` at time t.
fn write_snapshot(s: &Snapshots, c: &[f64], t: f64, index: usize) -> anyhow::Result<()> {
    let Snapshots {
        out,
        om,
        op,
        fields,
        case,
        vtu,
        plot,
    } = *s;
    let tb = op.tables;
    let np = tb.np;
    let ne = op.mesh.num_elements;
    let mut cell_fields = Vec::new();
    let mut point_fields = Vec::new();
    for name in fields {
        let per: Vec<[f64; 3]> = (0..ne)
            .map(|i| {
                let coef = op.element(c, i);
                std::array::from_fn(|v| {
                    derived(
                        name,
                        &Operator::eval(&coef, &tb.vertex_phi[v * np..(v + 1) * np]),
                    )
                })
            })
            .collect();
        let values = vertex_field(&om.mesh, &per);
        let means: Vec<f64> = (0..ne).map(|i| derived(name, &op.mean(c, i))).collect();
        let opts = PlotOptions {
            title: format!("{}: {name}, p = {}, t = {t:.4}", case.name, tb.p),
            label: name.clone(),
            width: 1400,
            height: if matches!(case.initial, crate::solver::dg::StateFn::DoubleMach) {
                520
            } else {
                1000
            },
            ..PlotOptions::default()
        };
        let path = out.join(format!("{name}_{index:04}.png"));
        let sampled = plot.values(op, c, name);
        save_field_png(&plot.mesh, Field::Vertex(&sampled), &opts, &path)?;
        point_fields.push((name.clone(), values));
        cell_fields.push((format!("{name}_mean"), means));
    }
    if vtu {
        let pf: Vec<(&str, &[f64])> = point_fields
            .iter()
            .map(|(n, v)| (n.as_str(), v.as_slice()))
            .collect();
        let cf: Vec<(&str, &[f64])> = cell_fields
            .iter()
            .map(|(n, v)| (n.as_str(), v.as_slice()))
            .collect();
        crate::mesh::write_vtu(&om.mesh, &out.join(format!("dg_{index:04}.vtu")), &pf, &cf)?;
    }
    Ok(())
}

pub fn run(args: &DgArgs, global: &GlobalArgs) -> anyhow::Result<()> {
    let case = load_case(args)?;
    for f in &args.fields {
        if !matches!(f.as_str(), "density" | "pressure" | "mach" | "speed") {
            return Err(Error::Invalid(format!(
                "--fields: unknown field '{f}' (expected pressure, mach, speed)"
            ))
            .into());
        }
    }
    let mut fields = vec!["density".to_string()];
    fields.extend(args.fields.iter().filter(|f| *f != "density").cloned());
    let mesh = case.build_mesh(args.seed)?;
    let om = order_mesh(&mesh, args.ordering, args.seed)?;
    let dm = DgMesh::build(&om, &|t| case.boundary(&om.mesh, t))?;
    let tables = BasisTables::new(case.order);
    let op = Operator {
        mesh: &dm,
        tables: &tables,
        flux: case.flux,
        state_fn: case.initial,
        states: case.states.clone(),
    };
    let backend = Backend::new(
        global.backend,
        &GpuOptions {
            adapter: global.adapter.clone(),
        },
    )?;
    let mut gpu = new_dg_device(
        &backend,
        &dm,
        &tables,
        &GpuConfig {
            flux: case.flux,
            state_fn: case.initial,
            states: case.states.clone(),
            cfl: case.cfl,
            fixed_dt: args.dt,
            limiter: case.limiter,
        },
    )?;
    let c0 = op.project(&|x, y| case.initial.eval(x, y, 0.0));
    if case.limiter {
        gpu.limit_once(&c0)?;
    } else {
        gpu.set_solution(&c0)?;
    }
    std::fs::create_dir_all(&args.out).map_err(|e| Error::io(&args.out, e))?;
    let csv_path = args.out.join("dg_totals.csv");
    let mut csv = CsvWriter::create(
        &csv_path,
        &[
            "t",
            "steps",
            "mass",
            "momentum_x",
            "momentum_y",
            "energy",
            "l2_density_error",
        ],
    )?;
    if !global.quiet {
        eprintln!(
            "dg: {} | {} triangles, {} edges in {} colors ({}), p = {}, {} flux, limiter {}, {}",
            case.name,
            dm.num_elements,
            dm.edges.len(),
            dm.num_colors(),
            args.ordering,
            case.order,
            case.flux.name(),
            if case.limiter { "on" } else { "off" },
            gpu.device_name()
        );
    }
    let every = case.snapshot_every.unwrap_or(case.t_end);
    let mut t = 0.0;
    let mut steps = 0u64;
    let mut index = 0;
    let started = Instant::now();
    let pb = bar(1000, "time", global.quiet);
    let plot = PlotMesh::new(&dm, &tables);
    let snapshots = Snapshots {
        out: &args.out,
        om: &om,
        op: &op,
        fields: &fields,
        case: &case,
        vtu: args.vtu,
        plot: &plot,
    };
    let record =
        |c: &[f64], t: f64, steps: u64, index: usize, csv: &mut CsvWriter| -> anyhow::Result<()> {
            let tot = op.totals(c);
            let err = if case.exact {
                op.l2_density_error(c, t)
            } else {
                f64::NAN
            };
            csv.row(&[t, steps as f64, tot[0], tot[1], tot[2], tot[3], err])?;
            write_snapshot(&snapshots, c, t, index)
        };
    let c = gpu.solution()?;
    record(&c, 0.0, 0, index, &mut csv)?;
    while t < case.t_end * (1.0 - 1e-9) {
        let target = (t + every).min(case.t_end);
        gpu.set_clock(t, target)?;
        loop {
            gpu.advance(args.batch.max(1))?;
            let clock = gpu.clock()?;
            pb.set_position((1000.0 * clock.t / case.t_end) as u64);
            if clock.t >= target as f32 as f64 || clock.dt == 0.0 {
                steps += clock.steps;
                t = target;
                break;
            }
        }
        let c = gpu.solution()?;
        if c.iter().any(|v| !v.is_finite()) {
            return Err(Error::Gpu(format!("the solution has NaN or Inf at t = {t}")).into());
        }
        index += 1;
        record(&c, t, steps, index, &mut csv)?;
    }
    pb.finish_and_clear();
    if !global.quiet {
        let secs = started.elapsed().as_secs_f64();
        eprintln!(
            "dg: t = {t} after {steps} steps in {secs:.2} s ({:.3} ms/step); wrote {} snapshots to {}",
            1e3 * secs / steps.max(1) as f64,
            index + 1,
            args.out.display()
        );
    }
    Ok(())
}

/// Options of `chromaflow bench dg`.
#[derive(Args, Debug)]
pub struct BenchDgArgs {
    /// About this many triangles in the DMR mesh.
    #[arg(long, default_value_t = 20000)]
    pub cells: usize,
    /// Time steps per measurement.
    #[arg(long, default_value_t = 20)]
    pub steps: usize,
    /// Repetitions (the median is reported).
    #[arg(long, default_value_t = 3)]
    pub repeats: usize,
    /// Print JSON instead of a markdown table.
    #[arg(long)]
    pub json: bool,
    /// Also write the JSON to this file.
    #[arg(long)]
    pub out: Option<PathBuf>,
}

struct BenchRow {
    label: String,
    p: usize,
    colors: usize,
    seconds_per_step: f64,
    dof_per_s: f64,
    gbytes_per_s: f64,
    kernels: Vec<(Kernel, f64)>,
}

fn bench_one(
    backend: &Backend,
    om: &OrderedMesh,
    case: &Case,
    p: usize,
    args: &BenchDgArgs,
    label: &str,
) -> anyhow::Result<BenchRow> {
    let dm = DgMesh::build(om, &|t| case.boundary(&om.mesh, t))?;
    let tables = BasisTables::new(p);
    let op = Operator {
        mesh: &dm,
        tables: &tables,
        flux: case.flux,
        state_fn: case.initial,
        states: vec![],
    };
    let mut gpu = new_dg_device(
        backend,
        &dm,
        &tables,
        &GpuConfig {
            flux: case.flux,
            state_fn: case.initial,
            states: vec![],
            cfl: case.cfl,
            fixed_dt: None,
            limiter: true,
        },
    )?;
    let c0 = op.project(&|x, y| case.initial.eval(x, y, 0.0));
    let mut samples = Vec::new();
    let mut kernel_times: std::collections::HashMap<Kernel, Vec<f64>> = Default::default();
    for rep in 0..args.repeats.max(1) + 1 {
        gpu.limit_once(&c0)?;
        gpu.set_clock(0.0, 1e9)?;
        gpu.wait()?;
        let start = Instant::now();
        gpu.advance(args.steps)?;
        gpu.wait()?;
        let secs = start.elapsed().as_secs_f64();
        if rep > 0 {
            samples.push(secs / args.steps as f64);
        }
        if rep == 1 {
            let n = args.steps.min(8);
            if let Some(passes) = gpu.time_kernels(n)? {
                for (k, s) in passes {
                    kernel_times.entry(k).or_default().push(s / n as f64);
                }
            }
        }
    }
    let per_step = median(&samples);
    let ndof = 4 * tables.np * dm.num_elements;
    let stages = crate::solver::dg::rk::scheme(p).len();
    // Bytes per stage: volume reads c, writes rhs; surface reads c of both sides, reads and
    // writes rhs of both; stage reads R0, rhs, a stage register and writes one; limiter reads
    // and writes one register: about 12 register-sized transfers, in f32.
    let bytes = stages as f64 * 12.0 * ndof as f64 * 4.0;
    let mut kernels: Vec<(Kernel, f64)> = kernel_times
        .into_iter()
        .map(|(k, v)| (k, v.iter().sum::<f64>()))
        .collect();
    kernels.sort_by_key(|(k, _)| format!("{k:?}"));
    Ok(BenchRow {
        label: label.to_string(),
        p,
        colors: dm.num_colors(),
        seconds_per_step: per_step,
        dof_per_s: ndof as f64 * stages as f64 / per_step,
        gbytes_per_s: bytes / per_step / 1e9,
        kernels,
    })
}

pub fn bench(args: &BenchDgArgs, global: &GlobalArgs) -> anyhow::Result<()> {
    let backend = Backend::new(
        global.backend,
        &GpuOptions {
            adapter: global.adapter.clone(),
        },
    )?;
    let case = Case::double_mach(args.cells);
    let mesh = case.build_mesh(1)?;
    let topo = Topology::build(&mesh)?;
    let greedy = greedy_face_coloring(&mesh, &topo)?;
    let mut rows = Vec::new();
    let variants: Vec<(String, OrderedMesh)> = vec![
        (
            "5-color greedy, original".into(),
            apply_ordering(&mesh, &topo, &greedy, Ordering::Original)?,
        ),
        (
            "5-color greedy, Algorithm 5".into(),
            apply_ordering(&mesh, &topo, &greedy, Ordering::ColorRenumbered)?,
        ),
        (
            "3-color GK, original".into(),
            order_mesh(&mesh, Ordering::Original, 1)?,
        ),
        (
            "3-color GK, Algorithm 5".into(),
            order_mesh(&mesh, Ordering::ColorRenumbered, 1)?,
        ),
    ];
    for (label, om) in &variants {
        rows.push(bench_one(&backend, om, &case, 1, args, label)?);
    }
    let best = &variants[3].1;
    for p in 2..=4 {
        rows.push(bench_one(
            &backend,
            best,
            &case,
            p,
            args,
            "3-color GK, Algorithm 5",
        )?);
    }
    let json = serde_json::json!({
        "adapter": backend.name(),
        "backend": backend.kind().name(),
        "case": "double Mach reflection",
        "elements": mesh.num_elements(),
        "steps": args.steps,
        "rows": rows.iter().map(|r| serde_json::json!({
            "variant": r.label,
            "p": r.p,
            "colors": r.colors,
            "ms_per_step": r.seconds_per_step * 1e3,
            "dof_updates_per_s": r.dof_per_s,
            "effective_gb_per_s": r.gbytes_per_s,
            "kernel_ms_per_step": r.kernels.iter()
                .map(|(k, s)| (format!("{k:?}").to_lowercase(), serde_json::json!(s * 1e3)))
                .collect::<serde_json::Map<_, _>>(),
        })).collect::<Vec<_>>(),
    });
    if let Some(path) = &args.out {
        write_json_atomic(path, &json)?;
    }
    if args.json {
        println!("{}", serde_json::to_string_pretty(&json)?);
        return Ok(());
    }
    println!(
        "DG Euler, double Mach reflection, {} triangles, {} steps, {}\n",
        mesh.num_elements(),
        args.steps,
        backend.name()
    );
    println!("| variant | p | colors | ms/step | DOF updates/s | eff. GB/s | kernels (ms/step) |");
    println!("|---|---|---|---|---|---|---|");
    for r in &rows {
        let k: Vec<String> = r
            .kernels
            .iter()
            .map(|(k, s)| format!("{k:?} {:.3}", s * 1e3))
            .collect();
        println!(
            "| {} | {} | {} | {:.3} | {:.3e} | {:.2} | {} |",
            r.label,
            r.p,
            r.colors,
            r.seconds_per_step * 1e3,
            r.dof_per_s,
            r.gbytes_per_s,
            if k.is_empty() {
                "n/a (no timestamps)".to_string()
            } else {
                k.join(", ")
            }
        );
    }
    Ok(())
}
