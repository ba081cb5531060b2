//! `chromaflow mesh info|convert|plot`.

use crate::commands::progress::spinner;
use crate::commands::GlobalArgs;
use chromaflow::error::Error;
use chromaflow::mesh::quality::{element_quality, triangle_min_angle_deg, Stats};
use chromaflow::mesh::{load_or_builtin, ElementKind, Geometry2d, Mesh, Topology};
use chromaflow::output::{save_field_png, Colormap, Field, PlotOptions};
use clap::Subcommand;
use std::collections::BTreeMap;
use std::path::Path;
use std::path::PathBuf;

/// A mesh argument: a .msh file, or a built-in spec (rect, rect:N, rect:N@SEED, disk:N,
/// quad:NXxNY, cross:N).
pub type MeshArg = String;

#[derive(Subcommand, Debug)]
pub enum MeshCommand {
    /// Counts, element kinds, quality statistics and boundary tags.
    Info {
        /// Mesh file (.msh) or built-in spec (e.g. disk:5000).
        mesh: MeshArg,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Convert a mesh: writes .msh (Gmsh 4.1 ASCII) or .vtu (ParaView) by extension.
    Convert {
        /// Input mesh file or built-in spec.
        input: MeshArg,
        /// Output file (.msh or .vtu).
        output: PathBuf,
    },
    /// Plot a 2D mesh to PNG, cells colored by a field.
    Plot {
        /// Mesh file or built-in spec.
        mesh: MeshArg,
        /// Output PNG.
        #[arg(short, long, default_value = "mesh.png")]
        output: PathBuf,
        /// Cell field: quality (radius ratio), area, region, none.
        #[arg(long, default_value = "quality")]
        field: String,
        /// Image width and height in pixels.
        #[arg(long, default_value_t = 1024)]
        size: u32,
        /// Draw the mesh edges.
        #[arg(long)]
        wireframe: bool,
        /// Colormap name (viridis, magma, coolwarm, gray).
        #[arg(long, default_value = "viridis")]
        colormap: String,
    },
}

pub fn run(cmd: MeshCommand, global: &GlobalArgs) -> anyhow::Result<()> {
    match cmd {
        MeshCommand::Info { mesh, json } => info(&mesh, json, global),
        MeshCommand::Convert { input, output } => convert(&input, &output, global),
        MeshCommand::Plot {
            mesh,
            output,
            field,
            size,
            wireframe,
            colormap,
        } => plot(&mesh, &output, &field, size, wireframe, &colormap, global),
    }
}

fn load(arg: &str, global: &GlobalArgs) -> anyhow::Result<Mesh> {
    let sp = spinner(&format!("loading {arg}"), global.quiet);
    let mesh = load_or_builtin(arg)?;
    sp.finish_and_clear();
    Ok(mesh)
}

/// Everything `mesh info` reports, serializable for --json.
#[derive(serde::Serialize)]
struct MeshInfo {
    source: String,
    dim: usize,
    vertices: usize,
    elements: usize,
    element_kinds: BTreeMap<String, usize>,
    faces: usize,
    boundary_faces: usize,
    boundary_tags: BTreeMap<String, usize>,
    regions: BTreeMap<String, usize>,
    bounding_box: ([f64; 3], [f64; 3]),
    quality: Option<Stats>,
    min_angle_deg: Option<Stats>,
    area: Option<Stats>,
    total_area: Option<f64>,
}

fn info(arg: &str, json: bool, global: &GlobalArgs) -> anyhow::Result<()> {
    let mesh = load(arg, global)?;
    let topo = Topology::build(&mesh)?;
    let mut kinds = BTreeMap::new();
    for k in &mesh.kinds {
        *kinds.entry(k.name().to_string()).or_insert(0) += 1;
    }
    let mut tags = BTreeMap::new();
    for f in 0..topo.num_faces() {
        if topo.is_boundary(f) {
            let name = mesh.boundary_name(topo.boundary_tag[f]);
            *tags.entry(name).or_insert(0) += 1;
        }
    }
    let mut regions = BTreeMap::new();
    for &t in &mesh.region_tags {
        let name = mesh
            .physical_names
            .get(&(mesh.dim, t))
            .cloned()
            .unwrap_or_else(|| t.to_string());
        *regions.entry(name).or_insert(0) += 1;
    }
    let planar = mesh.dim == 2 && mesh.points.iter().all(|p| p[2] == 0.0);
    let q: Vec<f64> = element_quality(&mesh).into_iter().flatten().collect();
    let angles: Vec<f64> = (0..mesh.num_elements())
        .filter(|&e| mesh.kinds[e] == ElementKind::Triangle)
        .map(|e| {
            let v = mesh.element(e);
            let p = |i: usize| mesh.points[v[i] as usize];
            triangle_min_angle_deg(p(0), p(1), p(2))
        })
        .collect();
    let geom = planar.then(|| Geometry2d::build(&mesh, &topo));
    let report = MeshInfo {
        source: arg.to_string(),
        dim: mesh.dim,
        vertices: mesh.num_points(),
        elements: mesh.num_elements(),
        element_kinds: kinds,
        faces: topo.num_faces(),
        boundary_faces: topo.num_boundary_faces(),
        boundary_tags: tags,
        regions,
        bounding_box: mesh.bounding_box(),
        quality: (!q.is_empty()).then(|| Stats::of(q.iter().copied())),
        min_angle_deg: (!angles.is_empty()).then(|| Stats::of(angles.iter().copied())),
        area: geom.as_ref().map(|g| Stats::of(g.areas.iter().copied())),
        total_area: geom.as_ref().map(|g| g.areas.iter().sum()),
    };
    if json {
        println!("{}", serde_json::to_string_pretty(&report)?);
        return Ok(());
    }
    println!("mesh        {}", report.source);
    println!(
        "dimension   {}   vertices {}   elements {}   faces {} ({} on the boundary)",
        report.dim, report.vertices, report.elements, report.faces, report.boundary_faces
    );
    let kinds: Vec<String> = report
        .element_kinds
        .iter()
        .map(|(k, n)| format!("{n} {k}"))
        .collect();
    println!("elements    {}", kinds.join(", "));
    let (lo, hi) = report.bounding_box;
    println!(
        "bbox        [{:.6}, {:.6}] x [{:.6}, {:.6}] x [{:.6}, {:.6}]",
        lo[0], hi[0], lo[1], hi[1], lo[2], hi[2]
    );
    let fmt_stats = |s: &Stats| format!("min {:.4}  mean {:.4}  max {:.4}", s.min, s.mean, s.max);
    if let Some(s) = &report.quality {
        println!(
            "quality     {}  (radius ratio / scaled Jacobian, 1 = ideal)",
            fmt_stats(s)
        );
    }
    if let Some(s) = &report.min_angle_deg {
        println!("min angle   {} degrees", fmt_stats(s));
    }
    if let (Some(s), Some(total)) = (&report.area, report.total_area) {
        println!("area        {}  total {:.6}", fmt_stats(s), total);
    }
    for (name, n) in &report.boundary_tags {
        println!("boundary    {name}: {n} faces");
    }
    for (name, n) in &report.regions {
        println!("region      {name}: {n} elements");
    }
    Ok(())
}

fn convert(input: &str, output: &Path, global: &GlobalArgs) -> anyhow::Result<()> {
    let mesh = load(input, global)?;
    let ext = output
        .extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    match ext.as_str() {
        "msh" => chromaflow::mesh::io::write_msh41(&mesh, output)?,
        "vtu" => {
            let region: Vec<f64> = mesh.region_tags.iter().map(|&t| t as f64).collect();
            let quality: Vec<f64> = element_quality(&mesh)
                .into_iter()
                .map(|q| q.unwrap_or(f64::NAN))
                .collect();
            chromaflow::mesh::io::write_vtu(
                &mesh,
                output,
                &[],
                &[("region", &region), ("quality", &quality)],
            )?
        }
        _ => {
            return Err(Error::Invalid(format!(
                "{}: unknown output format '.{ext}' (use .msh or .vtu)",
                output.display()
            ))
            .into())
        }
    }
    log::info!("wrote {}", output.display());
    if !global.quiet {
        println!(
            "wrote {} ({} vertices, {} elements)",
            output.display(),
            mesh.num_points(),
            mesh.num_elements()
        );
    }
    Ok(())
}

fn plot(
    arg: &str,
    output: &Path,
    field: &str,
    size: u32,
    wireframe: bool,
    colormap: &str,
    global: &GlobalArgs,
) -> anyhow::Result<()> {
    let mesh = load(arg, global)?;
    if mesh.dim != 2 {
        return Err(
            Error::Invalid(format!("mesh plot needs a 2D mesh; {arg} is {}D", mesh.dim)).into(),
        );
    }
    let colormap = Colormap::from_name(colormap)?;
    let values: Vec<f64>;
    let classes: Vec<u32>;
    let (field_data, label) = match field {
        "quality" => {
            values = element_quality(&mesh)
                .into_iter()
                .map(|q| q.unwrap_or(f64::NAN))
                .collect();
            (Field::Cell(&values), "element quality")
        }
        "area" => {
            let topo = Topology::build(&mesh)?;
            values = Geometry2d::build(&mesh, &topo).areas;
            (Field::Cell(&values), "element area")
        }
        "region" => {
            classes = mesh.region_tags.iter().map(|&t| t.max(0) as u32).collect();
            (Field::CellClass(&classes), "region")
        }
        "none" => (Field::None, ""),
        other => {
            return Err(Error::Invalid(format!(
                "unknown field '{other}' (use quality, area, region or none)"
            ))
            .into())
        }
    };
    let opts = PlotOptions {
        width: size,
        height: size,
        title: format!(
            "{arg}: {} elements, {} vertices",
            mesh.num_elements(),
            mesh.num_points()
        ),
        label: label.to_string(),
        colormap,
        wireframe,
        colorbar: matches!(field_data, Field::Cell(_)),
        ..PlotOptions::default()
    };
    save_field_png(&mesh, field_data, &opts, output)?;
    if !global.quiet {
        println!("wrote {}", output.display());
    }
    Ok(())
}
