//! `chromaflow color` (face or vertex coloring with verification and a GK-style table, or the
//! vertex coloring of a graph file), `chromaflow bench color` (GPU speculative vertex coloring
//! against sequential greedy) and `chromaflow graph` (write a test graph).

use crate::commands::progress::spinner;
use crate::commands::GlobalArgs;
use chromaflow::color::bench::{
    bench_graph, random_geometric_graph, time_gpu_coloring, time_greedy_coloring,
};
use chromaflow::color::faces::{check_face_coloring, face_buffer_bytes};
use chromaflow::color::gpu_vertices::{color_vertices_gpu_with, GpuColoringVariant};
use chromaflow::color::reduce::ColorReduction;
use chromaflow::color::vertices::{check_vertex_coloring, color_vertices, VertexOrder};
use chromaflow::error::Error;
use chromaflow::mesh::generate3d::{tet_box, TetSplit};
use chromaflow::mesh::io::{read_graph, write_graph};
use chromaflow::mesh::{load_or_builtin, Csr, Topology};
use chromaflow::order::{bandwidth, prepare, Ordering, PrepareOptions};
use chromaflow::output::{save_edges_png, topology_edges, PlotOptions};
use clap::Args;
use std::path::PathBuf;
use std::time::Instant;

/// The color reduction after the GPU speculative rounds (iterated greedy class by class, then
/// ejection of the top color; see `chromaflow::color::reduce`).
#[derive(Args, Debug, Clone)]
pub struct ReduceArgs {
    /// Skip the color reduction after the GPU speculative rounds (to compare).
    #[arg(long)]
    pub no_reduce: bool,
    /// Most reduction sweeps (iterated greedy + an attempt to eject the top color); sweeps stop
    /// as soon as one does not lower the count.
    #[arg(long, value_name = "N", default_value_t = ColorReduction::default().sweeps)]
    pub reduce_sweeps: usize,
    /// Most rounds of one ejection attempt (a multiple of 8; an attempt also stops when 8
    /// rounds do not lower the number of uncolored vertices). 0: iterated greedy only.
    #[arg(long, value_name = "N", default_value_t = ColorReduction::default().eject_rounds)]
    pub reduce_rounds: usize,
    /// Most extra sweeps after near misses (ejection attempts that ended with at most 8
    /// uncolored vertices), so the result does not hang on where the speculative rounds left it.
    #[arg(long, value_name = "N", default_value_t = ColorReduction::default().retries)]
    pub reduce_retries: usize,
    /// Ejection rounds on at most N uncolored vertices run in one launch of one workgroup (up
    /// to 32 rounds per launch and read-back) instead of four launches per round; the colors
    /// are the same. 0: launched rounds only (to compare).
    #[arg(long, value_name = "N", default_value_t = ColorReduction::default().tail_defects)]
    pub reduce_tail: u32,
}

impl ReduceArgs {
    /// The reduction these flags ask for.
    pub fn reduction(&self) -> ColorReduction {
        if self.no_reduce {
            return ColorReduction::OFF;
        }
        ColorReduction {
            sweeps: self.reduce_sweeps,
            eject_rounds: self.reduce_rounds,
            retries: self.reduce_retries,
            tail_defects: self.reduce_tail,
        }
    }
}

/// Options of `chromaflow color`.
#[derive(Args, Debug)]
pub struct ColorArgs {
    /// Mesh file (.msh, .mesh, .meshb, .vtu) or built-in spec (e.g. rect:20000).
    #[arg(required_unless_present = "graph")]
    pub mesh: Option<String>,
    /// Color the vertices of this graph (Matrix Market .mtx or DIMACS .col) instead of a mesh:
    /// every greedy order and both GPU variants (or the one --gpu names), each checked.
    #[arg(
        long,
        value_name = "FILE",
        conflicts_with_all = ["mesh", "faces", "vertices", "separate_boundary", "png", "vtu"]
    )]
    pub graph: Option<PathBuf>,
    /// Color the faces (edges in 2D); the default.
    #[arg(long, conflicts_with = "vertices")]
    pub faces: bool,
    /// Color the vertices instead (for vertex smoothing).
    #[arg(long)]
    pub vertices: bool,
    /// Seed of the randomized face coloring.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Element/face ordering applied after face coloring.
    #[arg(long, value_enum, default_value_t = Ordering::Original)]
    pub ordering: Ordering,
    /// Vertex visit order of the sequential greedy vertex coloring.
    #[arg(long, value_enum, default_value_t = VertexOrder::Natural)]
    pub vertex_order: VertexOrder,
    /// Also color vertices on the GPU with this speculative variant.
    #[arg(long, value_enum)]
    pub gpu: Option<GpuColoringVariant>,
    /// Give boundary vertices color classes of their own.
    #[arg(long)]
    pub separate_boundary: bool,
    #[command(flatten)]
    pub reduce: ReduceArgs,
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
    /// Write a PNG of the face coloring (2D meshes).
    #[arg(long, value_name = "FILE")]
    pub png: Option<PathBuf>,
    /// Write the mesh with the colors as cell data (face coloring: per element, the colors of
    /// its faces are not a cell field, so the element's lowest face color is written) or
    /// point data (vertex coloring).
    #[arg(long, value_name = "FILE")]
    pub vtu: Option<PathBuf>,
}

pub fn run(args: &ColorArgs, global: &GlobalArgs) -> anyhow::Result<()> {
    if let Some(path) = &args.graph {
        return run_graph(args, path, global);
    }
    let name = args.mesh.as_deref().unwrap_or_default();
    let sp = spinner(&format!("loading {name}"), global.quiet);
    let mesh = load_or_builtin(name)?;
    sp.finish_and_clear();
    if args.vertices {
        return run_vertices(args, name, &mesh, global);
    }
    let topo = Topology::build(&mesh)?;
    let before = bandwidth(&topo.element_adjacency(mesh.num_elements()), None);
    let start = Instant::now();
    let ordered = prepare(&mesh, &PrepareOptions::new(args.ordering, args.seed))?;
    let seconds = start.elapsed().as_secs_f64();
    let coloring = &ordered.coloring;
    let check = check_face_coloring(&ordered.topo, &coloring.colors);
    let after = ordered.bandwidth();
    let nf = ordered.topo.num_faces();
    // GK report the savings for their DG solver: Euler (4 equations), p = 1 (3 basis), f64.
    let saved = face_buffer_bytes(3, 4, nf, 8);
    let report = serde_json::json!({
        "mesh": name,
        "elements": mesh.num_elements(),
        "faces": nf,
        "boundary_faces": ordered.topo.num_boundary_faces(),
        "target_colors": coloring.target_colors,
        "colors": coloring.num_colors,
        "fallback": coloring.fallback,
        "faces_per_color": coloring.counts,
        "seconds": seconds,
        "seed": args.seed,
        "ordering": args.ordering.name(),
        "bandwidth_before": before,
        "bandwidth_after": after,
        "check": check.as_ref().map(|_| "ok".to_string()).unwrap_or_else(|e| e.clone()),
        "scatter_buffer_bytes_saved_p1_euler_f64": saved,
        "greedy_conflicts": coloring.stats.greedy_conflicts,
        "swaps": coloring.stats.swaps,
        "doubles": coloring.stats.doubles,
    });
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        println!("| mesh | elements | faces | colors | faces per color | time (s) | check |");
        println!("|---|---|---|---|---|---|---|");
        let per: Vec<String> = coloring.counts.iter().map(|c| c.to_string()).collect();
        println!(
            "| {} | {} | {} | {}{} | {} | {:.3} | {} |",
            name,
            mesh.num_elements(),
            nf,
            coloring.num_colors,
            if coloring.fallback { " (fallback)" } else { "" },
            per.join(" / "),
            seconds,
            if check.is_ok() { "ok" } else { "FAILED" }
        );
        println!(
            "ordering {}: element adjacency bandwidth {before} -> {after}",
            args.ordering
        );
        println!(
            "per-face scatter buffers avoided (GK: 2 x 3 basis x 4 equations x faces x 8 B): {:.1} MB",
            saved as f64 / 1e6
        );
    }
    if let Some(png) = &args.png {
        let colors: Vec<u32> = coloring.colors.iter().map(|&c| c as u32).collect();
        let opts = PlotOptions {
            title: format!(
                "{}: {} faces, {} colors ({})",
                name, nf, coloring.num_colors, args.ordering
            ),
            colorbar: false,
            ..PlotOptions::default()
        };
        save_edges_png(
            &ordered.mesh,
            &topology_edges(&ordered.topo),
            &colors,
            &opts,
            png,
        )?;
    }
    if let Some(vtu) = &args.vtu {
        let lowest: Vec<f64> = (0..ordered.mesh.num_elements())
            .map(|e| {
                ordered
                    .topo
                    .element_faces
                    .row(e)
                    .iter()
                    .map(|&f| coloring.colors[f as usize])
                    .min()
                    .unwrap_or(0) as f64
            })
            .collect();
        chromaflow::mesh::io::write_vtu(
            &ordered.mesh,
            vtu,
            &[],
            &[("lowest_face_color", &lowest)],
        )?;
    }
    if let Err(e) = check {
        return Err(Error::InvalidMesh {
            origin: None,
            msg: format!("face coloring check failed: {e}"),
        }
        .into());
    }
    Ok(())
}

fn run_vertices(
    args: &ColorArgs,
    name: &str,
    mesh: &chromaflow::mesh::Mesh,
    global: &GlobalArgs,
) -> anyhow::Result<()> {
    let topo = Topology::build(mesh)?;
    let graph = &topo.vertex_neighbors;
    let boundary = topo.boundary_vertices(mesh.num_points());
    let flags = args.separate_boundary.then_some(&boundary[..]);
    let start = Instant::now();
    let cpu = color_vertices(graph, args.vertex_order, flags)?;
    let cpu_seconds = start.elapsed().as_secs_f64();
    check_vertex_coloring(graph, &cpu.colors, flags).map_err(Error::Invalid)?;
    let mut gpu_report = serde_json::Value::Null;
    if let Some(variant) = args.gpu {
        let backend = global.runtime()?;
        let class: Vec<u32> = boundary.iter().map(|&b| b as u32).collect();
        let res = color_vertices_gpu_with(
            &backend,
            graph,
            args.separate_boundary.then_some(&class[..]),
            variant,
            &args.reduce.reduction(),
        )?;
        check_vertex_coloring(graph, &res.colors, flags).map_err(Error::Invalid)?;
        gpu_report = serde_json::json!({
            "adapter": backend.name(),
            "backend": backend.kind(),
            "variant": format!("{variant:?}"),
            "colors": res.num_colors,
            "rounds": res.rounds,
            "conflicts_per_round": res.conflicts_per_round,
            "seconds": res.seconds,
            "reduction": res.reduction,
            "work": res.work,
        });
    }
    let report = serde_json::json!({
        "mesh": name,
        "vertices": mesh.num_points(),
        "order": format!("{:?}", args.vertex_order),
        "separate_boundary": args.separate_boundary,
        "colors": cpu.num_colors,
        "boundary_colors": cpu.boundary_colors,
        "vertices_per_color": cpu.counts,
        "seconds": cpu_seconds,
        "check": "ok",
        "gpu": gpu_report,
    });
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        println!(
            "{}: {} vertices, greedy ({:?}) {} colors ({} boundary) in {:.3} s, check ok",
            name,
            mesh.num_points(),
            args.vertex_order,
            cpu.num_colors,
            cpu.boundary_colors,
            cpu_seconds
        );
        if !gpu_report.is_null() {
            let r = &gpu_report["reduction"];
            println!(
                "GPU {} ({}): {} colors in {} rounds, {:.4} s (reduction: {} -> {} largest color in {:.4} s), check ok",
                gpu_report["variant"].as_str().unwrap_or(""),
                gpu_report["adapter"].as_str().unwrap_or(""),
                gpu_report["colors"],
                gpu_report["rounds"],
                gpu_report["seconds"].as_f64().unwrap_or(0.0),
                r["colors_before"],
                r["colors_after"],
                r["seconds"].as_f64().unwrap_or(0.0)
            );
        }
    }
    if let Some(vtu) = &args.vtu {
        let c: Vec<f64> = cpu.colors.iter().map(|&c| c as f64).collect();
        chromaflow::mesh::io::write_vtu(mesh, vtu, &[("vertex_color", &c)], &[])?;
    }
    Ok(())
}

/// Options of `chromaflow bench color`.
#[derive(Args, Debug)]
pub struct BenchColorArgs {
    /// Triangle counts of the built-in rectangle meshes to color (about half as many vertices).
    #[arg(long, value_delimiter = ',', default_value = "100000,1000000,4000000")]
    pub sizes: Vec<usize>,
    /// Color this graph (Matrix Market .mtx or DIMACS .col) instead of the rectangle meshes.
    #[arg(long, value_name = "FILE", conflicts_with = "sizes")]
    pub graph: Option<PathBuf>,
    /// Repetitions per measurement, the median reported (1..=1000).
    #[arg(long, default_value_t = 3, value_parser = super::bench_repeats())]
    pub repeat: usize,
    /// Print JSON lines instead of a markdown table.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub reduce: ReduceArgs,
}

pub fn bench(args: &BenchColorArgs, global: &GlobalArgs) -> anyhow::Result<()> {
    let backend = global.runtime()?;
    if !args.json {
        println!("device: {} [backend {}]", backend.name(), backend.kind());
        if let Some(path) = &args.graph {
            println!("graph: {}", path.display());
        }
        let variant = |name: &str| {
            format!("GPU {name} colors | before reduction | rounds | s | reduction s | speedup")
        };
        println!(
            "| vertices | greedy colors | greedy s | {} | {} |",
            variant("topology"),
            variant("data")
        );
        println!("|---|---|---|{}", "---|".repeat(12));
    }
    let jobs: Vec<Option<usize>> = match &args.graph {
        Some(_) => vec![None],
        None => args.sizes.iter().copied().map(Some).collect(),
    };
    for job in jobs {
        let graph = &match (job, &args.graph) {
            (Some(n), _) => bench_graph(n)?.1.vertex_neighbors,
            (None, Some(path)) => read_graph(path)?,
            (None, None) => unreachable!("a job is a size or the graph"),
        };
        let (greedy_colors, greedy_s) = time_greedy_coloring(graph, args.repeat)?;
        let mut row = vec![
            graph.num_rows().to_string(),
            greedy_colors.to_string(),
            format!("{greedy_s:.4}"),
        ];
        let mut json = serde_json::json!({
            "graph": args.graph,
            "vertices": graph.num_rows(),
            "greedy_colors": greedy_colors,
            "greedy_seconds": greedy_s,
            "adapter": backend.name(),
            "backend": backend.kind(),
        });
        for variant in [GpuColoringVariant::Topology, GpuColoringVariant::Data] {
            let reduction = args.reduce.reduction();
            let (last, s) = time_gpu_coloring(&backend, graph, variant, &reduction, args.repeat)?;
            let r = &last.reduction;
            row.extend([
                last.num_colors.to_string(),
                before_reduction(&last),
                last.rounds.to_string(),
                format!("{s:.4}"),
                if r.sweeps == 0 {
                    "-".into()
                } else {
                    format!("{:.4}", r.seconds)
                },
                format!("{:.1}x", greedy_s / s),
            ]);
            json[format!("{variant:?}").to_lowercase()] = serde_json::json!({
                "colors": last.num_colors, "rounds": last.rounds, "seconds": s,
                "speedup": greedy_s / s, "reduction": r, "work": last.work,
            });
        }
        if args.json {
            println!("{json}");
        } else {
            println!("| {} |", row.join(" | "));
        }
    }
    Ok(())
}

/// The color count before the reduction (graphs without vertex classes: its largest color), or
/// "-" when no reduction ran.
fn before_reduction(c: &chromaflow::color::gpu_vertices::GpuVertexColoring) -> String {
    if c.reduction.sweeps == 0 {
        "-".into()
    } else {
        c.reduction.colors_before.to_string()
    }
}

/// Color a graph file: the three greedy orders on the CPU, then the GPU variants, each checked.
fn run_graph(args: &ColorArgs, path: &std::path::Path, global: &GlobalArgs) -> anyhow::Result<()> {
    let sp = spinner(&format!("loading {}", path.display()), global.quiet);
    let graph = read_graph(path)?;
    sp.finish_and_clear();
    let (n, m) = (graph.num_rows(), graph.indices.len() / 2);
    let max_degree = (0..n).map(|v| graph.row(v).len()).max().unwrap_or(0);
    let mut rows = Vec::new();
    for order in [
        VertexOrder::Natural,
        VertexOrder::LargestFirst,
        VertexOrder::SmallestLast,
    ] {
        let start = Instant::now();
        let c = color_vertices(&graph, order, None)?;
        let seconds = start.elapsed().as_secs_f64();
        check_vertex_coloring(&graph, &c.colors, None).map_err(Error::Invalid)?;
        rows.push(serde_json::json!({
            "method": format!("greedy {order:?}"), "colors": c.num_colors, "seconds": seconds,
        }));
    }
    let rt = global.runtime()?;
    let variants = match args.gpu {
        Some(v) => vec![v],
        None => vec![GpuColoringVariant::Topology, GpuColoringVariant::Data],
    };
    for variant in variants {
        let (res, seconds) = time_gpu_coloring(&rt, &graph, variant, &args.reduce.reduction(), 3)?;
        check_vertex_coloring(&graph, &res.colors, None).map_err(Error::Invalid)?;
        rows.push(serde_json::json!({
            "method": format!("GPU {variant:?}"), "colors": res.num_colors,
            "before_reduction": before_reduction(&res), "rounds": res.rounds, "seconds": seconds,
            "reduction_seconds": (res.reduction.sweeps > 0).then_some(res.reduction.seconds),
            "reduction": res.reduction, "work": res.work,
        }));
    }
    if args.json {
        let report = serde_json::json!({
            "graph": path, "vertices": n, "edges": m, "max_degree": max_degree,
            "adapter": rt.name(), "backend": rt.kind(), "check": "ok", "colorings": rows,
        });
        println!("{}", serde_json::to_string_pretty(&report)?);
        return Ok(());
    }
    println!(
        "{}: {n} vertices, {m} edges, max degree {max_degree}; GPU: {} [{}]",
        path.display(),
        rt.name(),
        rt.kind()
    );
    println!(
        "| coloring | colors | before reduction | rounds | time (s) | reduction (s) | check |"
    );
    println!("|---|---|---|---|---|---|---|");
    let cell = |r: &serde_json::Value, key: &str| match &r[key] {
        serde_json::Value::Null => "-".to_string(),
        serde_json::Value::String(s) => s.clone(),
        v => v.to_string(),
    };
    for r in rows {
        let reduction = r["reduction_seconds"]
            .as_f64()
            .map_or("-".to_string(), |s| format!("{s:.4}"));
        println!(
            "| {} | {} | {} | {} | {:.4} | {reduction} | ok |",
            r["method"].as_str().unwrap_or(""),
            r["colors"],
            cell(&r, "before_reduction"),
            cell(&r, "rounds"),
            r["seconds"].as_f64().unwrap_or(0.0)
        );
    }
    Ok(())
}

/// Options of `chromaflow graph`.
#[derive(Args, Debug)]
#[command(group(clap::ArgGroup::new("source").required(true).args(["rgg", "tet_box", "mesh"])))]
pub struct GraphArgs {
    /// Output file: Matrix Market (.mtx), DIMACS (.col) or binary CSR (.csr: int32 n, nnz,
    /// offsets, indices, for GPU libraries' own benchmarks).
    pub out: PathBuf,
    /// A random geometric graph of this many vertices in the unit cube.
    #[arg(long, value_name = "N")]
    pub rgg: Option<usize>,
    /// Mean degree of the random geometric graph.
    #[arg(long, default_value_t = 14.0, requires = "rgg")]
    pub degree: f64,
    /// Seed of the random geometric graph.
    #[arg(long, default_value_t = 1, requires = "rgg")]
    pub seed: u64,
    /// The vertex graph of the unit cube cut into N x N x N cells of 6 tetrahedra
    /// ((N + 1)^3 vertices).
    #[arg(long, value_name = "N")]
    pub tet_box: Option<usize>,
    /// The vertex graph of a mesh file or built-in spec.
    #[arg(long, value_name = "MESH")]
    pub mesh: Option<String>,
}

/// Write a graph for `color --graph` and `bench color --graph`.
pub fn write(args: &GraphArgs, global: &GlobalArgs) -> anyhow::Result<()> {
    let sp = spinner("building the graph", global.quiet);
    let graph: Csr = match (args.rgg, args.tet_box, &args.mesh) {
        (Some(n), _, _) => random_geometric_graph(n, args.degree, args.seed)?,
        (_, Some(n), _) => Topology::build(&tet_box(n, n, n, TetSplit::Six)?)?.vertex_neighbors,
        (_, _, Some(spec)) => Topology::build(&load_or_builtin(spec)?)?.vertex_neighbors,
        _ => unreachable!("clap requires one source"),
    };
    write_graph(&graph, &args.out)?;
    sp.finish_and_clear();
    println!(
        "{}: {} vertices, {} edges",
        args.out.display(),
        graph.num_rows(),
        graph.indices.len() / 2
    );
    Ok(())
}
