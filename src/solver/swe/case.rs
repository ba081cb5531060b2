//! Cases: TOML case files and the built-in cases (Test 1, Test 2 of the paper, lake at rest).
//!
//! A case gives the mesh, the depth H(x, y) below the reference level, the initial layers,
//! r, g, the boundary conditions per boundary tag (name or number), the final time, the CFL
//! number and the outputs. Fields are numbers or expressions of the cell barycentre
//! ([`super::expr`]): H may use x, y; h1 may use x, y, H; h2 may use x, y, H, h1; the
//! velocities u1x, u1y, u2x, u2y may use x, y, H, h1, h2. Unknown keys are errors
//! (`deny_unknown_fields`), and every error names the file and the key.
//!
//! ```toml
//! name = "test1"
//! [mesh]
//! builtin = "cross:50"          # or: file = "meshes/basin.msh" (relative to the case file)
//! domain = [-5.0, 5.0, -5.0, 5.0] # box a built-in mesh is mapped onto
//! ordering = "rcm"              # original, rcm, ... (optional)
//! seed = 0                      # seed of the face coloring (optional, default 0)
//! [physics]
//! r = 0.5
//! g = 9.81                      # optional
//! [initial]
//! H = 6.0
//! h1 = "if(sqrt(x^2 + y^2) > 1.5, 4.0, 0.5)"
//! h2 = "H - h1"
//! [run]
//! scheme = "pvm-ifcp"           # pvm-ifcp, ir-roe, roe
//! order = 1                     # 1, or 2: limited MUSCL reconstruction + Heun (optional)
//! final_time = 0.1
//! cfl = 0.9
//! max_mass_drift = 0.01         # mass guard, walls only: stop when a layer's mass has
//!                               # drifted by more than this fraction (optional, default 5e-2)
//! [friction]                    # optional, semi-implicit (see super::friction)
//! manning = 0.025               # Manning n of the bottom under the lower layer (s m^-1/3)
//! interface = 0.001             # quadratic drag coefficient between the layers
//! [boundary]
//! default = "wall"              # wall or open; keys are tag names or numbers
//! right = "open"
//! [output]
//! snapshot_every = 0.05
//! fields = ["h1", "h2", "eta1", "eta2", "speed1", "speed2"]
//! ```
//!
//! Fields may also come from a raster file ([`crate::raster`]: ESRI ASCII grid or GeoTIFF,
//! relative to the case file), sampled bilinearly at the barycentres, with an explicit choice
//! for points outside it or next to no-data pixels: `H = { raster = "bathy.asc", outside =
//! "error" }` (`"error"`, the default; `"clamp"`; or a number). Boundaries may be driven
//! ([`super::boundary`]): `left = { discharge = 2.5 }` (m³ s⁻¹ into the domain) or
//! `right = { elevation = "tide.csv" }` (m; a CSV of `t, value` rows, linear in between).
//! Gauges ([`super::gauge`]) are `[[gauges]]` tables with `name`, `x`, `y`, sampled every step
//! or every `[output] gauge_every` seconds into `gauge_<name>.csv`. Both work at either
//! `order`: at order 2 a driven edge's ghost is built from the reconstructed edge state and a
//! gauge samples after the full (two-stage) step.
//!
//! The mass guard ([`super::MassGuard`]): in a closed domain (every boundary a wall) each
//! layer's mass is conserved to round-off, so a run whose layer mass has drifted by more than
//! `[run] max_mass_drift` (`--max-mass-drift`; positive, default
//! [`super::DEFAULT_MAX_MASS_DRIFT`] = 5e-2, 4.7 times the largest drift of the repository's
//! legitimate runs, streams colliding at order 2) of its initial mass stops with exit 1 at the output time, checkpoint or
//! interrupt where it is seen, without writing that state. With open or driven boundaries mass
//! enters and leaves, and the guard is off (the run says so).

use super::boundary::{BoundaryCondition, DrivenBoundaries, TimeSeries};
use super::expr::Expr;
use super::friction::Friction;
use super::gauge::{GaugeSpec, Gauges, MAX_GAUGES};
use super::mesh::{EdgeKind, SweMesh};
use super::{check_max_mass_drift, check_order, Physics, Scheme};
use crate::error::{Error, Result};
use crate::mesh::MeshSource;
use crate::order::{prepare, Ordering, PrepareOptions};
use crate::output::format_number as num;
use crate::raster::{Outside, Raster};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// A number, an expression string or a raster table in a case file.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(untagged)]
pub enum FieldSpec {
    Number(f64),
    Expr(String),
    Raster(RasterSpec),
}

/// `{ raster = "file.asc", outside = "error" | "clamp" | value }`.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RasterSpec {
    raster: PathBuf,
    outside: Option<OutsideSpec>,
}

#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(untagged)]
enum OutsideSpec {
    Value(f64),
    Mode(String),
}

/// A boundary entry: `"wall"`, `"open"` or a driven table.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(untagged)]
enum BoundaryEntry {
    Kind(String),
    Driven(DrivenEntry),
}

/// `{ discharge = Q }` or `{ elevation = η }`, Q and η a number or a CSV file.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
struct DrivenEntry {
    discharge: Option<SeriesEntry>,
    elevation: Option<SeriesEntry>,
}

#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(untagged)]
enum SeriesEntry {
    Value(f64),
    File(PathBuf),
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct GaugeEntry {
    name: String,
    x: f64,
    y: f64,
}

/// A field of the case: an expression of the barycentre (and earlier fields), or a raster
/// sampled at the barycentre.
#[derive(Clone, Debug)]
pub enum FieldSource {
    Expr(Expr),
    Raster {
        raster: Arc<Raster>,
        outside: Outside,
    },
}

impl FieldSource {
    /// The value at variables `vars` (x, y first).
    pub fn eval(&self, vars: &[f64]) -> Result<f64> {
        match self {
            FieldSource::Expr(e) => Ok(e.eval(vars)),
            FieldSource::Raster { raster, outside } => raster.sample(vars[0], vars[1], *outside),
        }
    }

    /// Text that identifies the field by content (for checkpoint fingerprints): the expression,
    /// or the raster's values and geometry and the outside rule (not its path).
    pub fn identity(&self) -> String {
        match self {
            FieldSource::Expr(e) => e.text().to_string(),
            FieldSource::Raster { raster, outside } => {
                format!("raster #{:016x} outside {outside}", raster.fingerprint())
            }
        }
    }
}

#[derive(Clone, Debug, Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct MeshSection {
    file: Option<PathBuf>,
    builtin: Option<String>,
    domain: Option<Vec<f64>>,
    ordering: Option<String>,
    seed: Option<u64>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct PhysicsSection {
    r: f64,
    g: Option<f64>,
    dry_tolerance: Option<f64>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(non_snake_case)]
struct InitialSection {
    H: FieldSpec,
    h1: FieldSpec,
    h2: FieldSpec,
    u1x: Option<FieldSpec>,
    u1y: Option<FieldSpec>,
    u2x: Option<FieldSpec>,
    u2y: Option<FieldSpec>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RunSection {
    scheme: Option<String>,
    final_time: f64,
    cfl: Option<f64>,
    order: Option<u32>,
    max_mass_drift: Option<f64>,
}

#[derive(Clone, Debug, Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct FrictionSection {
    manning: Option<f64>,
    interface: Option<f64>,
}

#[derive(Clone, Debug, Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct OutputSection {
    dir: Option<PathBuf>,
    snapshot_every: Option<f64>,
    fields: Option<Vec<String>>,
    vtu: Option<bool>,
    csv: Option<bool>,
    image_size: Option<u32>,
    gauge_every: Option<f64>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct CaseFile {
    name: Option<String>,
    mesh: Option<MeshSection>,
    physics: PhysicsSection,
    initial: InitialSection,
    run: RunSection,
    friction: Option<FrictionSection>,
    boundary: Option<BTreeMap<String, BoundaryEntry>>,
    gauges: Option<Vec<GaugeEntry>>,
    output: Option<OutputSection>,
}

/// Seed of the face coloring when the case and the command line name none (runs are
/// reproducible).
pub const DEFAULT_SEED: u64 = 0;

/// Fields a snapshot can show.
pub const FIELD_NAMES: &[&str] = &["h1", "h2", "eta1", "eta2", "speed1", "speed2", "H"];

/// Output settings of a case.
#[derive(Clone, Debug, PartialEq)]
pub struct OutputSpec {
    /// Output directory (default `out/swe-<name>`).
    pub dir: PathBuf,
    /// Snapshot interval in simulated seconds (None: initial and final state only).
    pub snapshot_every: Option<f64>,
    /// Fields rendered to PNG at each snapshot.
    pub fields: Vec<String>,
    /// Also write a VTU file per snapshot.
    pub vtu: bool,
    /// Write the CSV time series.
    pub csv: bool,
    /// PNG width and height in pixels.
    pub image_size: u32,
    /// Gauge sample interval in simulated seconds (0: every step).
    pub gauge_every: f64,
}

/// A fully resolved case.
#[derive(Clone, Debug)]
pub struct Case {
    pub name: String,
    /// The file the case came from (None for built-ins); named in error messages.
    pub origin: Option<PathBuf>,
    /// A mesh file or a built-in spec (`cross:N` is the criss-cross mesh M(N) of spec §12).
    pub mesh: MeshSource,
    /// Box [x0, x1, y0, y1] a built-in mesh is mapped onto (built-ins live on the unit square).
    pub domain: Option<[f64; 4]>,
    /// Cell and face ordering ([`crate::order`]).
    pub ordering: Ordering,
    /// Seed of the face coloring.
    pub seed: u64,
    pub physics: Physics,
    pub scheme: Scheme,
    pub final_time: f64,
    pub cfl: f64,
    /// Spatial order, 1 or 2 (limited MUSCL reconstruction and Heun's SSP-RK2).
    pub order: u32,
    /// Bound of the mass guard in a closed domain ([`super::MassGuard`]); None: the default
    /// [`super::DEFAULT_MAX_MASS_DRIFT`].
    pub max_mass_drift: Option<f64>,
    /// Boundary conditions by tag name or number; `default` (wall or open) for the rest.
    pub boundary: BTreeMap<String, BoundaryCondition>,
    pub default_boundary: EdgeKind,
    /// Gauges (points whose solution is written every step or every `gauge_every`).
    pub gauges: Vec<GaugeSpec>,
    depth: FieldSource,
    h1: FieldSource,
    h2: FieldSource,
    velocity: [FieldSource; 4],
    pub output: OutputSpec,
}

const VARS_H: &[&str] = &["x", "y"];
const VARS_H1: &[&str] = &["x", "y", "H"];
const VARS_H2: &[&str] = &["x", "y", "H", "h1"];
const VARS_U: &[&str] = &["x", "y", "H", "h1", "h2"];

/// Names of the built-in cases.
pub const BUILTINS: &[&str] = &["test1", "test2", "lake"];

fn parse_kind(v: &str) -> Option<EdgeKind> {
    match v.to_ascii_lowercase().as_str() {
        "wall" | "reflective" | "slip" => Some(EdgeKind::Wall),
        "open" | "transmissive" | "outflow" => Some(EdgeKind::Open),
        _ => None,
    }
}

fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].matches('\n').count() + 1
}

impl Case {
    /// A built-in case: `test1` (internal circular dambreak, r = 0.5), `test2` (two unstable
    /// layers over a Gaussian bump, r = 0.98), both exactly as in the paper (domain [−5, 5]²,
    /// walls, t = 0.1 s, CFL 0.9), or `lake` (lake at rest over the Test 2 bump, spec §13.2,
    /// t = 5 s). All on the criss-cross mesh M(50) unless overridden.
    pub fn builtin(name: &str) -> Result<Case> {
        let (r, depth, h1, h2, t) = match name {
            "test1" => (
                0.5,
                "6",
                "if(sqrt(x^2 + y^2) > 1.5, 4.0, 0.5)",
                "H - h1",
                0.1,
            ),
            "test2" => (
                0.98,
                "1 - 1.5*exp(-x^2 - y^2)",
                "if(x >= 0, 4.0, 0.5)",
                "if(x >= 0, 0.5, 4.0)",
                0.1,
            ),
            "lake" => (0.98, "1 - 1.5*exp(-x^2 - y^2)", "1", "H + 1", 5.0),
            other => {
                return Err(Error::Invalid(format!(
                    "unknown built-in case '{other}' (available: {})",
                    BUILTINS.join(", ")
                )))
            }
        };
        let zero = || FieldSource::Expr(Expr::constant(0.0));
        Ok(Case {
            name: name.to_string(),
            origin: None,
            mesh: MeshSource::Builtin("cross:50".into()),
            domain: Some([-5.0, 5.0, -5.0, 5.0]),
            ordering: Ordering::Original,
            seed: DEFAULT_SEED,
            physics: Physics {
                r,
                ..Physics::default()
            },
            scheme: Scheme::default(),
            final_time: t,
            cfl: 0.9,
            order: 1,
            max_mass_drift: None,
            boundary: BTreeMap::new(),
            default_boundary: EdgeKind::Wall,
            gauges: Vec::new(),
            depth: FieldSource::Expr(Expr::parse(depth, VARS_H)?),
            h1: FieldSource::Expr(Expr::parse(h1, VARS_H1)?),
            h2: FieldSource::Expr(Expr::parse(h2, VARS_H2)?),
            velocity: [zero(), zero(), zero(), zero()],
            output: OutputSpec {
                dir: PathBuf::from(format!("out/swe-{name}")),
                snapshot_every: None,
                fields: FIELD_NAMES[..6].iter().map(|s| s.to_string()).collect(),
                vtu: false,
                csv: true,
                image_size: 800,
                gauge_every: 0.0,
            },
        })
    }

    /// Read and check a TOML case file. Errors name the file and the key.
    pub fn from_file(path: &Path) -> Result<Case> {
        let text = crate::files::read_text(path, crate::files::MAX_CASE_BYTES)?;
        Self::from_toml(&text, path)
    }

    /// Parse case text; `path` is used for messages and to resolve relative mesh paths.
    pub fn from_toml(text: &str, path: &Path) -> Result<Case> {
        let file: CaseFile = toml::from_str(text).map_err(|e| {
            let line = e.span().map(|s| line_of(text, s.start)).unwrap_or(0);
            // serde's words for a wrong type in an untagged number-or-string field.
            let msg = e
                .message()
                .trim()
                .replace(
                    "data did not match any variant of untagged enum FieldSpec",
                    "expected a number, an expression string or { raster = \"file\", outside = \
                     \"error\" | \"clamp\" | value }",
                )
                .replace(
                    "data did not match any variant of untagged enum BoundaryEntry",
                    "expected \"wall\", \"open\", { discharge = Q } or { elevation = η } (Q, η a \
                     number or a CSV file of 't, value' rows)",
                );
            Error::parse(path, line, msg)
        })?;
        let bad = |key: &str, msg: String| Error::parse(path, 0, format!("{key}: {msg}"));
        let name = file.name.clone().unwrap_or_else(|| {
            path.file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_else(|| "case".into())
        });
        let base = path.parent().unwrap_or(Path::new(""));
        let ms = file.mesh.clone().unwrap_or_default();
        let mesh = match (&ms.file, &ms.builtin) {
            (Some(_), Some(_)) => {
                return Err(bad(
                    "[mesh]",
                    "give either 'file' or 'builtin', not both".into(),
                ))
            }
            (Some(f), None) => {
                let p = if f.is_absolute() {
                    f.clone()
                } else {
                    base.join(f)
                };
                if !p.exists() {
                    return Err(bad(
                        "[mesh] file",
                        format!("mesh file '{}' does not exist", p.display()),
                    ));
                }
                MeshSource::File(p)
            }
            (None, Some(b)) => MeshSource::Builtin(b.clone()),
            (None, None) => {
                return Err(bad(
                    "[mesh]",
                    "missing mesh: give 'file = \"mesh.msh\"' or 'builtin = \"cross:50\"'".into(),
                ))
            }
        };
        let ordering = match &ms.ordering {
            Some(o) => o
                .parse::<Ordering>()
                .map_err(|e| bad("[mesh] ordering", e.to_string()))?,
            None => Ordering::Original,
        };
        let domain = match ms.domain.as_deref() {
            None => None,
            Some(&[x0, x1, y0, y1])
                if (x1 - x0) > 0.0 && (y1 - y0) > 0.0 && (x1 - x0 + y1 - y0).is_finite() =>
            {
                Some([x0, x1, y0, y1])
            }
            Some(d) => {
                return Err(bad(
                    "[mesh] domain",
                    format!(
                        "[{}] must be [x0, x1, y0, y1] with x0 < x1, y0 < y1 and finite widths",
                        d.iter().map(|&v| num(v)).collect::<Vec<_>>().join(", ")
                    ),
                ))
            }
        };
        let physics = Physics {
            r: file.physics.r,
            g: file.physics.g.unwrap_or(9.81),
            dry_tol: file.physics.dry_tolerance.unwrap_or(1e-4),
            friction: Friction {
                manning: file
                    .friction
                    .as_ref()
                    .and_then(|f| f.manning)
                    .unwrap_or(0.0),
                interface: file
                    .friction
                    .as_ref()
                    .and_then(|f| f.interface)
                    .unwrap_or(0.0),
            },
        };
        for (key, v) in [
            ("[friction] manning", physics.friction.manning),
            ("[friction] interface", physics.friction.interface),
        ] {
            if !(v >= 0.0 && v.is_finite()) {
                return Err(bad(key, format!("{} must be finite and >= 0", num(v))));
            }
        }
        if !(physics.r > 0.0 && physics.r < 1.0) {
            return Err(bad(
                "[physics] r",
                format!(
                    "density ratio r = ρ1/ρ2 = {} must lie strictly between 0 and 1",
                    num(physics.r)
                ),
            ));
        }
        if !(physics.g > 0.0 && physics.g.is_finite()) {
            return Err(bad(
                "[physics] g",
                format!("gravity {} must be > 0", num(physics.g)),
            ));
        }
        if !(physics.dry_tol > 0.0 && physics.dry_tol.is_finite()) {
            return Err(bad(
                "[physics] dry_tolerance",
                format!("{} must be > 0", num(physics.dry_tol)),
            ));
        }
        let scheme = match &file.run.scheme {
            Some(s) => Scheme::from_name(s).map_err(|e| bad("[run] scheme", e.to_string()))?,
            None => Scheme::default(),
        };
        if !(file.run.final_time > 0.0 && file.run.final_time.is_finite()) {
            return Err(bad(
                "[run] final_time",
                format!("{} must be > 0", num(file.run.final_time)),
            ));
        }
        let order = file.run.order.unwrap_or(1);
        check_order(order).map_err(|e| bad("[run] order", e.to_string()))?;
        let cfl = file.run.cfl.unwrap_or(0.9);
        if !(cfl > 0.0 && cfl <= 1.0) {
            return Err(bad("[run] cfl", format!("{} must lie in (0, 1]", num(cfl))));
        }
        if let Some(d) = file.run.max_mass_drift {
            check_max_mass_drift(d).map_err(|e| bad("[run] max_mass_drift", e.to_string()))?;
        }
        let relative = |f: &Path| {
            if f.is_absolute() {
                f.to_path_buf()
            } else {
                base.join(f)
            }
        };
        let rasters = std::cell::RefCell::new(BTreeMap::<PathBuf, Arc<Raster>>::new());
        let field = |key: &str, spec: &FieldSpec, vars: &[&str]| -> Result<FieldSource> {
            let at = format!("[initial] {key}");
            match spec {
                FieldSpec::Number(v) => Ok(FieldSource::Expr(Expr::constant(*v))),
                FieldSpec::Expr(s) => Expr::parse(s, vars)
                    .map(FieldSource::Expr)
                    .map_err(|e| bad(&at, e.to_string())),
                FieldSpec::Raster(r) => {
                    let outside = match &r.outside {
                        None => Outside::Error,
                        Some(OutsideSpec::Value(v)) if v.is_finite() => Outside::Value(*v),
                        Some(OutsideSpec::Mode(m)) if m == "error" => Outside::Error,
                        Some(OutsideSpec::Mode(m)) if m == "clamp" => Outside::Clamp,
                        Some(other) => {
                            return Err(bad(
                                &format!("{at} outside"),
                                format!("{other:?} is not \"error\", \"clamp\" or a finite number"),
                            ))
                        }
                    };
                    let file = relative(&r.raster);
                    let cached = rasters.borrow().get(&file).cloned();
                    let raster = match cached {
                        Some(r) => r,
                        None => {
                            let loaded = Arc::new(
                                Raster::from_file(&file)
                                    .map_err(|e| bad(&format!("{at} raster"), e.to_string()))?,
                            );
                            rasters.borrow_mut().insert(file, loaded.clone());
                            loaded
                        }
                    };
                    Ok(FieldSource::Raster { raster, outside })
                }
            }
        };
        let vel = |key: &str, spec: &Option<FieldSpec>| -> Result<FieldSource> {
            spec.as_ref()
                .map_or(Ok(FieldSource::Expr(Expr::constant(0.0))), |s| {
                    field(key, s, VARS_U)
                })
        };
        let init = &file.initial;
        let mut boundary = BTreeMap::new();
        let mut default_boundary = EdgeKind::Wall;
        for (k, v) in file.boundary.clone().unwrap_or_default() {
            let at = format!("[boundary] {k}");
            let bc = match v {
                BoundaryEntry::Kind(name) => {
                    BoundaryCondition::plain(parse_kind(&name).ok_or_else(|| {
                        bad(
                            &at,
                            format!(
                                "unknown boundary condition '{name}' (expected wall, open, \
                             {{ discharge = Q }} or {{ elevation = η }})"
                            ),
                        )
                    })?)
                }
                BoundaryEntry::Driven(d) => {
                    let (kind, entry) = match (d.discharge, d.elevation) {
                        (Some(q), None) => (EdgeKind::Discharge, q),
                        (None, Some(e)) => (EdgeKind::Elevation, e),
                        _ => {
                            return Err(bad(
                                &at,
                                "give exactly one of 'discharge' and 'elevation'".into(),
                            ))
                        }
                    };
                    let series = match entry {
                        SeriesEntry::Value(v) if v.is_finite() && v.abs() < 1e30 => {
                            TimeSeries::constant(v)
                        }
                        SeriesEntry::Value(v) => {
                            return Err(bad(&at, format!("value {v} is not a finite number")))
                        }
                        SeriesEntry::File(f) => TimeSeries::from_file(&relative(&f))
                            .map_err(|e| bad(&at, e.to_string()))?,
                    };
                    BoundaryCondition {
                        kind,
                        series: Some(series),
                    }
                }
            };
            if k == "default" {
                if bc.series.is_some() {
                    return Err(bad(
                        &at,
                        "the default boundary is wall or open; drive boundaries by name or tag"
                            .into(),
                    ));
                }
                default_boundary = bc.kind;
            } else {
                boundary.insert(k, bc);
            }
        }
        let gauge_entries = file.gauges.clone().unwrap_or_default();
        if gauge_entries.len() > MAX_GAUGES {
            return Err(bad(
                "[[gauges]]",
                format!("{} gauges, at most {MAX_GAUGES}", gauge_entries.len()),
            ));
        }
        let mut gauges: Vec<GaugeSpec> = Vec::new();
        for (i, g) in gauge_entries.into_iter().enumerate() {
            let at = format!("[[gauges]] {} ('{}')", i + 1, g.name);
            let name_ok = !g.name.is_empty()
                && g.name.len() <= 64
                && g.name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '.');
            if !name_ok {
                return Err(bad(
                    &at,
                    "name must be 1 to 64 letters, digits, '_', '-' or '.' (it names the CSV file)"
                        .into(),
                ));
            }
            if gauges.iter().any(|o| o.name == g.name) {
                return Err(bad(&at, "two gauges have this name".into()));
            }
            if !(g.x.is_finite() && g.y.is_finite()) {
                return Err(bad(&at, "x and y must be finite".into()));
            }
            gauges.push(GaugeSpec {
                name: g.name,
                x: g.x,
                y: g.y,
            });
        }
        let out = file.output.clone().unwrap_or_default();
        if let Some(s) = out.snapshot_every {
            if !(s > 0.0 && s.is_finite()) {
                return Err(bad(
                    "[output] snapshot_every",
                    format!("{} must be > 0", num(s)),
                ));
            }
        }
        let fields = out
            .fields
            .clone()
            .unwrap_or_else(|| FIELD_NAMES[..6].iter().map(|s| s.to_string()).collect());
        if let Some(f) = fields.iter().find(|f| !FIELD_NAMES.contains(&f.as_str())) {
            return Err(bad(
                "[output] fields",
                format!(
                    "unknown field '{f}' (available: {})",
                    FIELD_NAMES.join(", ")
                ),
            ));
        }
        let gauge_every = out.gauge_every.unwrap_or(0.0);
        if !(gauge_every >= 0.0 && gauge_every.is_finite()) {
            return Err(bad(
                "[output] gauge_every",
                format!("{} must be ≥ 0 (0: every step)", num(gauge_every)),
            ));
        }
        let image_size = out.image_size.unwrap_or(800);
        if !(64..=8192).contains(&image_size) {
            return Err(bad(
                "[output] image_size",
                format!("{image_size} must lie in 64 ..= 8192"),
            ));
        }
        Ok(Case {
            origin: Some(path.to_path_buf()),
            mesh,
            domain,
            ordering,
            seed: ms.seed.unwrap_or(DEFAULT_SEED),
            physics,
            scheme,
            final_time: file.run.final_time,
            cfl,
            order,
            max_mass_drift: file.run.max_mass_drift,
            boundary,
            default_boundary,
            gauges,
            depth: field("H", &init.H, VARS_H)?,
            h1: field("h1", &init.h1, VARS_H1)?,
            h2: field("h2", &init.h2, VARS_H2)?,
            velocity: [
                vel("u1x", &init.u1x)?,
                vel("u1y", &init.u1y)?,
                vel("u2x", &init.u2x)?,
                vel("u2y", &init.u2y)?,
            ],
            output: OutputSpec {
                dir: out
                    .dir
                    .clone()
                    .unwrap_or_else(|| PathBuf::from(format!("out/swe-{name}"))),
                snapshot_every: out.snapshot_every,
                fields,
                vtu: out.vtu.unwrap_or(false),
                csv: out.csv.unwrap_or(true),
                image_size,
                gauge_every,
            },
            name,
        })
    }

    /// Fingerprint of what decides the solution (physics with friction, scheme, CFL, order,
    /// boundaries, gauges, initial state, by content: a series or raster moved to another path
    /// keeps it), for checkpoints: the final time and the outputs may change on a restart.
    pub fn fingerprint(&self) -> u64 {
        let text = format!(
            "{:?} {:?} {} {} {:?} {:?} {:?} {:?} {:?} {:?} {:?} {}",
            self.physics,
            self.scheme,
            self.cfl,
            self.order,
            self.boundary
                .iter()
                .map(|(k, bc)| (k, bc.kind, bc.series.as_ref().map(TimeSeries::points)))
                .collect::<Vec<_>>(),
            self.default_boundary,
            self.depth.identity(),
            self.h1.identity(),
            self.h2.identity(),
            self.velocity
                .iter()
                .map(FieldSource::identity)
                .collect::<Vec<_>>(),
            self.gauges,
            self.output.gauge_every
        );
        crate::checkpoint::fingerprint(text.as_bytes())
    }

    fn err(&self, key: &str, msg: String) -> Error {
        match &self.origin {
            Some(p) => Error::parse(p, 0, format!("{key}: {msg}")),
            None => Error::Invalid(format!("case '{}': {key}: {msg}", self.name)),
        }
    }

    /// The boundary conditions of a mesh by tag (with the case's key): checks that every named
    /// boundary exists.
    pub fn boundary_map(
        &self,
        mesh: &crate::mesh::Mesh,
    ) -> Result<BTreeMap<i32, (String, BoundaryCondition)>> {
        let mut map = BTreeMap::new();
        let mut keys = BTreeMap::new();
        for (key, bc) in &self.boundary {
            let tag = match key.parse::<i32>() {
                Ok(t) if mesh.boundary_facets.iter().any(|f| f.tag == t) => t,
                Ok(t) => {
                    return Err(self.err(
                        &format!("[boundary] {key}"),
                        format!("the mesh has no boundary facet with tag {t}"),
                    ))
                }
                Err(_) => mesh.boundary_tag_by_name(key).ok_or_else(|| {
                    let names: Vec<String> = mesh
                        .physical_names
                        .iter()
                        .filter(|((d, _), _)| *d + 1 == mesh.dim)
                        .map(|((_, t), n)| format!("{n} ({t})"))
                        .collect();
                    self.err(
                        &format!("[boundary] {key}"),
                        format!(
                            "the mesh has no boundary named '{key}' (named boundaries: {})",
                            if names.is_empty() {
                                "none; use tag numbers".to_string()
                            } else {
                                names.join(", ")
                            }
                        ),
                    )
                })?,
            };
            if let Some(first) = keys.insert(tag, key) {
                return Err(self.err(
                    &format!("[boundary] {key}"),
                    format!("tag {tag} already has a condition from '{first}'"),
                ));
            }
            map.insert(tag, (key.clone(), bc.clone()));
        }
        Ok(map)
    }

    /// Cell depths H and initial states at the cell barycentres (spec §2.1). Errors when a
    /// layer thickness is negative or a value is not finite, naming the key and the cell.
    pub fn initial_state(&self, mesh: &SweMesh) -> Result<(Vec<f64>, Vec<[f64; 6]>)> {
        let n = mesh.num_cells();
        let mut depth = Vec::with_capacity(n);
        let mut state = Vec::with_capacity(n);
        for c in 0..n {
            let [x, y] = mesh.geom.centroids[c];
            let at = |key: &'static str| {
                move |e: Error| self.err(&format!("[initial] {key}"), format!("cell {c}: {e}"))
            };
            let hh = self.depth.eval(&[x, y]).map_err(at("H"))?;
            let h1 = self.h1.eval(&[x, y, hh]).map_err(at("h1"))?;
            let h2 = self.h2.eval(&[x, y, hh, h1]).map_err(at("h2"))?;
            let u = self
                .velocity
                .iter()
                .zip(["u1x", "u1y", "u2x", "u2y"])
                .map(|(e, key)| e.eval(&[x, y, hh, h1, h2]).map_err(at(key)))
                .collect::<Result<Vec<f64>>>()?;
            for (key, v) in [
                ("H", hh),
                ("h1", h1),
                ("h2", h2),
                ("u1x", u[0]),
                ("u1y", u[1]),
                ("u2x", u[2]),
                ("u2y", u[3]),
            ] {
                if !(v as f32).is_finite() {
                    return Err(self.err(
                        &format!("[initial] {key}"),
                        format!(
                            "value {v:e} at cell {c} ({x:.4}, {y:.4}) is not finite in f32 (the \
                             GPU's precision)"
                        ),
                    ));
                }
            }
            for (key, h) in [("h1", h1), ("h2", h2)] {
                if h < 0.0 {
                    return Err(self.err(
                        &format!("[initial] {key}"),
                        format!(
                            "negative layer thickness {} at cell {c} ({x:.4}, {y:.4}); layer depths must be ≥ 0",
                            num(h)
                        ),
                    ));
                }
            }
            depth.push(hh);
            state.push([h1, h1 * u[0], h1 * u[1], h2, h2 * u[2], h2 * u[3]]);
        }
        Ok((depth, state))
    }
}

/// A case made ready to run: the prepared mesh, cell depths and initial states, the driven
/// boundaries and the gauges.
#[derive(Clone, Debug)]
pub struct Setup {
    pub mesh: SweMesh,
    pub depth: Vec<f64>,
    pub state: Vec<[f64; 6]>,
    pub boundaries: DrivenBoundaries,
    /// None when the case has no gauges.
    pub gauges: Option<Gauges>,
}

impl Case {
    /// Load or build the mesh (a built-in one mapped onto the domain), color and order it with
    /// the case's seed and ordering ([`crate::order::prepare`]), apply the boundary conditions,
    /// evaluate the initial state, collect the driven boundaries (their series must cover the
    /// run) and find the gauges' cells.
    pub fn prepare(&self) -> Result<Setup> {
        let mut raw = self.mesh.build(self.seed)?;
        if let Some(d) = self.domain.filter(|_| !self.mesh.is_file()) {
            super::mesh::fit_to_domain(&mut raw, d)?;
        }
        let map = self.boundary_map(&raw)?;
        let default = self.default_boundary;
        SweMesh::check(&raw)?;
        let ordered = prepare(&raw, &PrepareOptions::new(self.ordering, self.seed))?;
        let mesh = SweMesh::new(&ordered, |tag| {
            map.get(&tag).map_or(default, |(_, bc)| bc.kind)
        })?;
        let (depth, state) = self.initial_state(&mesh)?;
        let boundaries = DrivenBoundaries::new(&mesh, &map)?;
        boundaries
            .check_covers(self.final_time)
            .map_err(|e| self.err("[boundary]", e.to_string()))?;
        let gauges = if self.gauges.is_empty() {
            None
        } else {
            Some(
                Gauges::locate(&self.gauges, self.output.gauge_every, &mesh)
                    .map_err(|e| self.err("[[gauges]]", e.to_string()))?,
            )
        };
        Ok(Setup {
            mesh,
            depth,
            state,
            boundaries,
            gauges,
        })
    }
}
