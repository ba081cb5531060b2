//! DG cases: initial/exact state functions, boundary conditions, mesh and run parameters, built
//! in (`vortex`, `dmr`, `kh`) or read from a TOML case file.
//!
//! ```toml
//! name = "my case"
//! mesh = "meshes/channel.msh"   # a .msh file (relative to the case file) or a builtin spec
//! refine = 1                    # optional: split every triangle into 4 this many times (0..=8)
//! t_end = 0.5
//! order = 2                     # optional: p, cfl, limiter, flux, snapshot_every
//! limiter = true
//!
//! [initial]                     # kind = constant | vortex | double_mach | kelvin_helmholtz
//! kind = "constant"
//! rho = 1.0
//! u = 0.5
//! v = 0.0
//! p = 1.0
//!
//! [amr]                         # optional adaptive refinement (GK19)
//! levels = 4                    # levels above the mesh; every, threshold, delta, field optional
//!
//! [[boundary]]                  # one per tag (number `tag` or physical `name`)
//! name = "inlet"
//! kind = "inflow"               # wall | outflow | inflow (rho,u,v,p) | exact | periodic (partner)
//! rho = 1.0
//! u = 0.5
//! v = 0.0
//! p = 1.0
//! ```

use super::amr::{AmrOptions, IndicatorField, ReorderPolicy};
use super::euler::{conserved, NumericalFlux, State, GAMMA};
use super::mesh::BoundaryKind;
use crate::color::nonconforming::refine_uniformly;
use crate::error::{Error, Result};
use crate::mesh::{Mesh, MeshSource};
use crate::output::format_number as num;
use std::path::{Path, PathBuf};

/// A state as a function of (x, y, t): initial condition, exact solution and prescribed
/// boundary state. Mirrored by `case_state` in shaders/common/dg_euler.wgsl (`CASE_FN` id and
/// the parameters of [`StateFn::params`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum StateFn {
    /// A uniform state (id 0).
    Constant(State),
    /// Shu's isentropic vortex (id 1), centred at (x0, y0) at t = 0, advected by (u_inf, v_inf)
    /// in a free stream rho = p = 1: with r^2 = |x - x0 - u_inf t|^2,
    /// (du, dv) = beta / (2 pi) e^{(1 - r^2)/2} (-(y - yc), x - xc),
    /// T = 1 - (gamma - 1) beta^2 / (8 gamma pi^2) e^{1 - r^2}, rho = T^{1/(gamma-1)}, p = rho^gamma.
    /// Exact for all t.
    Vortex {
        x0: f64,
        y0: f64,
        u_inf: f64,
        v_inf: f64,
        beta: f64,
    },
    /// Double Mach reflection (id 2): a Mach 10 shock at 60 degrees to the wall through
    /// (1/6, 0) at t = 0; post-shock (8, 8.25 cos 30, -8.25 sin 30, 116.5) left of
    /// x_s = 1/6 + (y + 20 t) / sqrt(3), pre-shock (1.4, 0, 0, 1) right of it. Exact away from
    /// the reflection (used on the top and left boundaries).
    DoubleMach,
    /// Kelvin–Helmholtz layers (id 3): rho = 2, u = 0.5 for |y| < 0.5, else rho = 1, u = -0.5;
    /// p = 2.5; v = w sin(4 pi x)(e^{-(y+1/2)^2/(2 s^2)} + e^{-(y-1/2)^2/(2 s^2)}), w = 0.1,
    /// s = 0.05/sqrt(2). Time independent (prescribed on the top and bottom).
    KelvinHelmholtz,
}

impl StateFn {
    pub fn id(&self) -> u32 {
        match self {
            StateFn::Constant(_) => 0,
            StateFn::Vortex { .. } => 1,
            StateFn::DoubleMach => 2,
            StateFn::KelvinHelmholtz => 3,
        }
    }

    /// Parameters as the kernels read them (8 floats).
    pub fn params(&self) -> [f32; 8] {
        let mut p = [0f32; 8];
        match *self {
            StateFn::Constant(u) => {
                for i in 0..4 {
                    p[i] = u[i] as f32;
                }
            }
            StateFn::Vortex {
                x0,
                y0,
                u_inf,
                v_inf,
                beta,
            } => {
                p[..5].copy_from_slice(&[
                    x0 as f32,
                    y0 as f32,
                    u_inf as f32,
                    v_inf as f32,
                    beta as f32,
                ]);
            }
            StateFn::DoubleMach | StateFn::KelvinHelmholtz => {}
        }
        p
    }

    /// The density at (x, y, t): `eval(x, y, t)[0]` to the bit, without the other fields' work
    /// (the L2 density error evaluates it at every quadrature point of every element).
    pub fn density(&self, x: f64, y: f64, t: f64) -> f64 {
        match *self {
            StateFn::Vortex {
                x0,
                y0,
                u_inf,
                v_inf,
                beta,
            } => vortex_core([x0, y0, u_inf, v_inf, beta], x, y, t).rho,
            _ => self.eval(x, y, t)[0],
        }
    }

    /// The state at (x, y, t).
    pub fn eval(&self, x: f64, y: f64, t: f64) -> State {
        use std::f64::consts::PI;
        match *self {
            StateFn::Constant(u) => u,
            StateFn::Vortex {
                x0,
                y0,
                u_inf,
                v_inf,
                beta,
            } => {
                let VortexCore { dx, dy, e, rho } =
                    vortex_core([x0, y0, u_inf, v_inf, beta], x, y, t);
                let du = beta / (2.0 * PI) * e;
                conserved(rho, u_inf - du * dy, v_inf + du * dx, rho.powf(GAMMA))
            }
            StateFn::DoubleMach => {
                let xs = 1.0 / 6.0 + (y + 20.0 * t) / 3f64.sqrt();
                if x < xs {
                    let a = PI / 6.0;
                    conserved(8.0, 8.25 * a.cos(), -8.25 * a.sin(), 116.5)
                } else {
                    conserved(1.4, 0.0, 0.0, 1.0)
                }
            }
            StateFn::KelvinHelmholtz => {
                let (w, s) = (0.1, 0.05 / 2f64.sqrt());
                let inner = y.abs() < 0.5;
                let v = w
                    * (4.0 * PI * x).sin()
                    * ((-(y + 0.5).powi(2) / (2.0 * s * s)).exp()
                        + (-(y - 0.5).powi(2) / (2.0 * s * s)).exp());
                if inner {
                    conserved(2.0, 0.5, v, 2.5)
                } else {
                    conserved(1.0, -0.5, v, 2.5)
                }
            }
        }
    }
}

/// The vortex's offset (dx, dy) from its centre, e = e^{(1 - r^2)/2} and density rho at
/// (x, y, t), from [x0, y0, u_inf, v_inf, beta] ([`StateFn::Vortex`]): shared by `eval` and
/// `density` so both give the same bits.
struct VortexCore {
    dx: f64,
    dy: f64,
    e: f64,
    rho: f64,
}

fn vortex_core([x0, y0, u_inf, v_inf, beta]: [f64; 5], x: f64, y: f64, t: f64) -> VortexCore {
    use std::f64::consts::PI;
    let (dx, dy) = (x - x0 - u_inf * t, y - y0 - v_inf * t);
    let e = (0.5 * (1.0 - (dx * dx + dy * dy))).exp();
    let temp = 1.0 - (GAMMA - 1.0) * beta * beta / (8.0 * GAMMA * PI * PI) * e * e;
    VortexCore {
        dx,
        dy,
        e,
        rho: temp.powf(1.0 / (GAMMA - 1.0)),
    }
}

/// A complete case.
#[derive(Clone, Debug)]
pub struct Case {
    pub name: String,
    /// The built-in cases' rectangles are generated with the run's seed.
    pub mesh: MeshSource,
    pub initial: StateFn,
    /// The initial function is the exact solution for all t (errors are reported).
    pub exact: bool,
    /// Boundary condition per tag.
    pub boundaries: Vec<(i32, BoundaryKind)>,
    /// Boundary tag names to resolve against the mesh (case files): (name, kind).
    pub named_boundaries: Vec<(String, BoundaryKind)>,
    /// Constant inflow states, indexed by [`BoundaryKind::Inflow`].
    pub states: Vec<State>,
    pub t_end: f64,
    pub order: usize,
    pub cfl: f64,
    pub limiter: bool,
    pub flux: NumericalFlux,
    /// Snapshot interval in time (None: start and end only).
    pub snapshot_every: Option<f64>,
    /// For DMR: bottom-boundary edges with x < this are prescribed (post-shock), the rest wall.
    pub split_bottom_at: Option<f64>,
    /// Adaptive refinement (None: the mesh stays as built).
    pub amr: Option<AmrOptions>,
    /// Uniform refinements of the built mesh (0..=[`MAX_REFINE`]): each splits every triangle
    /// into four by its edge midpoints, so h halves and the meshes of 0, 1, 2, ... are nested
    /// (a convergence study's successive refinements).
    pub refine: u8,
}

/// Most uniform refinements a case may ask for: 4^8 = 65,536 triangles per base triangle.
pub const MAX_REFINE: u8 = 8;

/// Tag given to the prescribed part of the DMR bottom boundary.
pub const DMR_INFLOW_TAG: i32 = 5;

impl Case {
    /// The isentropic vortex on [-5, 5]^2 with exact boundary states, advected diagonally.
    pub fn vortex(cells: usize) -> Case {
        Case {
            name: "isentropic vortex".into(),
            mesh: MeshSource::Rectangle {
                x0: -5.0,
                x1: 5.0,
                y0: -5.0,
                y1: 5.0,
                n: cells,
            },
            initial: StateFn::Vortex {
                x0: 0.0,
                y0: 0.0,
                u_inf: 1.0,
                v_inf: 1.0,
                beta: 5.0,
            },
            exact: true,
            boundaries: (1..=4).map(|t| (t, BoundaryKind::Exact)).collect(),
            named_boundaries: Vec::new(),
            states: Vec::new(),
            t_end: 2.0,
            order: 2,
            cfl: 0.3,
            limiter: false,
            flux: NumericalFlux::Rusanov,
            snapshot_every: Some(0.5),
            split_bottom_at: None,
            amr: None,
            refine: 0,
        }
    }

    /// The vortex of [`Case::vortex`] on the fully periodic square (opposite sides paired):
    /// PyFR's throughput benchmark setup (no boundary states to evaluate, no limiter). The
    /// vortex is not periodic, so the exact solution holds only while it is far from the sides.
    pub fn periodic_vortex(cells: usize) -> Case {
        Case {
            name: "isentropic vortex, periodic".into(),
            exact: false,
            boundaries: vec![
                (1, BoundaryKind::Periodic(3)),
                (3, BoundaryKind::Periodic(1)),
                (2, BoundaryKind::Periodic(4)),
                (4, BoundaryKind::Periodic(2)),
            ],
            ..Case::vortex(cells)
        }
    }

    /// Double Mach reflection on [0, 3.5] x [0, 1] up to t = 0.2: wall on the bottom for
    /// x >= 1/6, exact shock states on the top, left and bottom x < 1/6, outflow on the right.
    pub fn double_mach(cells: usize) -> Case {
        Case {
            name: "double Mach reflection".into(),
            mesh: MeshSource::Rectangle {
                x0: 0.0,
                x1: 3.5,
                y0: 0.0,
                y1: 1.0,
                n: cells,
            },
            initial: StateFn::DoubleMach,
            exact: false,
            boundaries: vec![
                (1, BoundaryKind::Wall),
                (2, BoundaryKind::Outflow),
                (3, BoundaryKind::Exact),
                (4, BoundaryKind::Exact),
                (DMR_INFLOW_TAG, BoundaryKind::Exact),
            ],
            named_boundaries: Vec::new(),
            states: Vec::new(),
            t_end: 0.2,
            order: 1,
            cfl: 0.2,
            limiter: true,
            flux: NumericalFlux::Rusanov,
            snapshot_every: Some(0.05),
            split_bottom_at: Some(1.0 / 6.0),
            amr: None,
            refine: 0,
        }
    }

    /// Kelvin–Helmholtz on [-1, 1]^2, periodic in x, prescribed states on top and bottom.
    pub fn kelvin_helmholtz(cells: usize) -> Case {
        Case {
            name: "Kelvin-Helmholtz".into(),
            mesh: MeshSource::Rectangle {
                x0: -1.0,
                x1: 1.0,
                y0: -1.0,
                y1: 1.0,
                n: cells,
            },
            initial: StateFn::KelvinHelmholtz,
            exact: false,
            boundaries: vec![
                (1, BoundaryKind::Exact),
                (3, BoundaryKind::Exact),
                (2, BoundaryKind::Periodic(4)),
                (4, BoundaryKind::Periodic(2)),
            ],
            named_boundaries: Vec::new(),
            states: Vec::new(),
            t_end: 1.0,
            order: 2,
            cfl: 0.2,
            limiter: true,
            flux: NumericalFlux::Hllc,
            snapshot_every: Some(0.25),
            split_bottom_at: None,
            amr: None,
            refine: 0,
        }
    }

    /// A builtin case by name (`vortex`, `dmr`, `kh`) with about `cells` triangles.
    pub fn builtin(name: &str, cells: Option<usize>) -> Result<Case> {
        match name.to_ascii_lowercase().as_str() {
            "vortex" => Ok(Case::vortex(cells.unwrap_or(1600))),
            "dmr" | "double-mach" | "double_mach" => Ok(Case::double_mach(cells.unwrap_or(6000))),
            "kh" | "kelvin-helmholtz" => Ok(Case::kelvin_helmholtz(cells.unwrap_or(3000))),
            other => Err(Error::Invalid(format!(
                "unknown builtin DG case '{other}' (expected vortex, dmr or kh)"
            ))),
        }
    }

    /// Set the uniform refinements ([`Case::refine`]), refused above [`MAX_REFINE`] with the
    /// element count they would give; `source` names the setting in the error (`--refine`,
    /// `key 'refine'`).
    pub fn set_refine(&mut self, levels: u8, source: &str) -> Result<()> {
        if levels > MAX_REFINE {
            let factor = 4u64.pow(u32::from(levels));
            let would = match self.mesh {
                MeshSource::Rectangle { n, .. } => format!(
                    "about {} triangles ({n} x 4^{levels})",
                    factor.saturating_mul(n as u64)
                ),
                _ => format!("4^{levels} = {factor} times the mesh's triangles"),
            };
            return Err(Error::Invalid(format!(
                "{source}: {levels} uniform refinements would give {would}; at most \
                 {MAX_REFINE} are allowed"
            )));
        }
        self.refine = levels;
        Ok(())
    }

    /// Build the mesh ([`MeshSource::build`] with `seed`), retagging the DMR bottom boundary,
    /// then refine it uniformly [`Case::refine`] times (boundary tags carried to the halves of
    /// each boundary edge: [`refine_uniformly`]).
    pub fn build_mesh(&self, seed: u64) -> Result<Mesh> {
        if self.refine > MAX_REFINE {
            return Err(Error::Invalid(format!(
                "case '{}': refine {} exceeds the maximum of {MAX_REFINE} uniform refinements",
                self.name, self.refine
            )));
        }
        let mut mesh = self.mesh.build(seed)?;
        if let Some(xs) = self.split_bottom_at {
            for f in &mut mesh.boundary_facets {
                if f.tag == 1 {
                    let mx: f64 = f
                        .vertices
                        .iter()
                        .map(|&v| mesh.points[v as usize][0])
                        .sum::<f64>()
                        / f.vertices.len() as f64;
                    if mx < xs {
                        f.tag = DMR_INFLOW_TAG;
                    }
                }
            }
        }
        refine_uniformly(mesh, usize::from(self.refine))
    }

    /// The boundary condition of `tag` on `mesh` (named boundaries resolved by physical name).
    pub fn boundary(&self, mesh: &Mesh, tag: i32) -> Result<BoundaryKind> {
        if let Some((_, k)) = self.boundaries.iter().find(|(t, _)| *t == tag) {
            return Ok(*k);
        }
        let name = mesh.boundary_name(tag);
        if let Some((_, k)) = self.named_boundaries.iter().find(|(n, _)| *n == name) {
            return Ok(*k);
        }
        Err(Error::Invalid(format!(
            "case '{}': boundary tag {tag} ('{name}') of the mesh has no boundary condition",
            self.name
        )))
    }

    /// Read a TOML case file; errors name the file and the offending key.
    pub fn from_file(path: &Path) -> Result<Case> {
        let text = crate::files::read_text(path, crate::files::MAX_CASE_BYTES)?;
        Case::from_toml(&text, path)
    }

    /// Parse a case from TOML text (`path` names it in errors and resolves relative meshes).
    pub fn from_toml(text: &str, path: &Path) -> Result<Case> {
        let file: CaseFile = toml::from_str(text).map_err(|e| {
            let line = e
                .span()
                .map(|s| text[..s.start.min(text.len())].lines().count().max(1))
                .unwrap_or(0);
            Error::parse(path, line, e.message().to_string())
        })?;
        let bad = |key: &str, msg: String| Error::parse(path, 0, format!("key '{key}': {msg}"));
        let prim = |key: &str, s: &StateSpec| -> Result<State> {
            match (s.rho, s.u, s.v, s.p) {
                (Some(rho), Some(u), Some(v), Some(p)) if rho > 0.0 && p > 0.0 => {
                    Ok(conserved(rho, u, v, p))
                }
                (Some(_), Some(_), Some(_), Some(_)) => {
                    Err(bad(key, "rho and p must be positive".to_string()))
                }
                _ => Err(bad(key, "needs rho, u, v and p".to_string())),
            }
        };
        let initial = match file.initial.kind.as_str() {
            "constant" => StateFn::Constant(prim("initial", &file.initial.state())?),
            "vortex" => StateFn::Vortex {
                x0: file.initial.x0.unwrap_or(0.0),
                y0: file.initial.y0.unwrap_or(0.0),
                u_inf: file.initial.u.unwrap_or(1.0),
                v_inf: file.initial.v.unwrap_or(1.0),
                beta: file.initial.beta.unwrap_or(5.0),
            },
            "double_mach" => StateFn::DoubleMach,
            "kelvin_helmholtz" => StateFn::KelvinHelmholtz,
            other => {
                return Err(bad(
                    "initial.kind",
                    format!(
                    "unknown '{other}' (expected constant, vortex, double_mach, kelvin_helmholtz)"
                ),
                ))
            }
        };
        let mut case = Case {
            name: file.name.unwrap_or_else(|| {
                path.file_stem()
                    .map(|s| s.to_string_lossy().into_owned())
                    .unwrap_or_else(|| "case".into())
            }),
            mesh: MeshSource::from_arg(&resolve_mesh(&file.mesh, path)),
            exact: matches!(initial, StateFn::Vortex { .. } | StateFn::Constant(_)),
            initial,
            boundaries: Vec::new(),
            named_boundaries: Vec::new(),
            states: Vec::new(),
            t_end: file.t_end,
            order: file.order.unwrap_or(2),
            cfl: file.cfl.unwrap_or(0.3),
            limiter: file.limiter.unwrap_or(false),
            flux: file.flux.unwrap_or_default(),
            snapshot_every: file.snapshot_every,
            split_bottom_at: None,
            amr: None,
            refine: 0,
        };
        if let Some(levels) = file.refine {
            case.set_refine(levels, "key 'refine'")
                .map_err(|e| Error::parse(path, 0, e.to_string()))?;
        }
        if let Some(a) = &file.amr {
            let field = match &a.field {
                Some(f) => IndicatorField::parse(f).map_err(|e| bad("amr.field", e.to_string()))?,
                None => IndicatorField::Density,
            };
            let amr = AmrOptions {
                max_level: a.levels,
                every: a.every,
                threshold: a.threshold,
                delta: a.delta.unwrap_or(AmrOptions::default().delta),
                field,
                jumps: a.jumps.unwrap_or(false),
                on_host: a.on_host.unwrap_or(false),
                reorder: match &a.reorder {
                    Some(r) => {
                        ReorderPolicy::parse(r).map_err(|e| bad("amr.reorder", e.to_string()))?
                    }
                    None => ReorderPolicy::default(),
                },
            };
            amr.validate(case.order)
                .map_err(|e| bad("amr", e.to_string()))?;
            case.amr = Some(amr);
        }
        if !(case.t_end > 0.0 && case.t_end.is_finite()) {
            return Err(bad(
                "t_end",
                format!("must be positive, got {}", num(case.t_end)),
            ));
        }
        if case.order > super::basis::MAX_ORDER {
            return Err(bad("order", format!("must be 0..=4, got {}", case.order)));
        }
        if !(case.cfl > 0.0 && case.cfl <= 1.0) {
            return Err(bad(
                "cfl",
                format!("must be in (0, 1], got {}", num(case.cfl)),
            ));
        }
        for (i, b) in file.boundary.iter().enumerate() {
            let key = format!("boundary[{i}]");
            let kind = match b.kind.as_str() {
                "wall" => BoundaryKind::Wall,
                "outflow" => BoundaryKind::Outflow,
                "exact" => BoundaryKind::Exact,
                "inflow" => {
                    case.states.push(prim(&key, &b.state())?);
                    BoundaryKind::Inflow(case.states.len() - 1)
                }
                "periodic" => BoundaryKind::Periodic(b.partner.ok_or_else(|| {
                    bad(
                        &format!("{key}.partner"),
                        "periodic needs a partner tag".into(),
                    )
                })?),
                other => {
                    return Err(bad(
                        &format!("{key}.kind"),
                        format!(
                            "unknown '{other}' (expected wall, outflow, inflow, exact, periodic)"
                        ),
                    ))
                }
            };
            match (b.tag, &b.name) {
                (Some(t), None) => case.boundaries.push((t, kind)),
                (None, Some(n)) => case.named_boundaries.push((n.clone(), kind)),
                _ => {
                    return Err(bad(&key, "give exactly one of 'tag' or 'name'".into()));
                }
            }
        }
        if case.states.len() > 16 {
            return Err(bad("boundary", "at most 16 inflow states".into()));
        }
        Ok(case)
    }
}

fn resolve_mesh(mesh: &str, case_path: &Path) -> String {
    let p = Path::new(mesh);
    let looks_like_file = p.extension().is_some() || mesh.contains(['/', '\\']);
    if looks_like_file && p.is_relative() {
        let base: PathBuf = case_path
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_default();
        let joined = base.join(p);
        if joined.exists() {
            return joined.to_string_lossy().into_owned();
        }
    }
    mesh.to_string()
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct CaseFile {
    name: Option<String>,
    mesh: String,
    refine: Option<u8>,
    t_end: f64,
    order: Option<usize>,
    cfl: Option<f64>,
    limiter: Option<bool>,
    flux: Option<NumericalFlux>,
    snapshot_every: Option<f64>,
    amr: Option<AmrSpec>,
    initial: InitialSpec,
    #[serde(default)]
    boundary: Vec<BoundarySpec>,
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct AmrSpec {
    levels: u8,
    every: Option<usize>,
    threshold: Option<f64>,
    delta: Option<f64>,
    field: Option<String>,
    jumps: Option<bool>,
    on_host: Option<bool>,
    reorder: Option<String>,
}

struct StateSpec {
    rho: Option<f64>,
    u: Option<f64>,
    v: Option<f64>,
    p: Option<f64>,
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct InitialSpec {
    kind: String,
    rho: Option<f64>,
    u: Option<f64>,
    v: Option<f64>,
    p: Option<f64>,
    x0: Option<f64>,
    y0: Option<f64>,
    beta: Option<f64>,
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct BoundarySpec {
    tag: Option<i32>,
    name: Option<String>,
    kind: String,
    rho: Option<f64>,
    u: Option<f64>,
    v: Option<f64>,
    p: Option<f64>,
    partner: Option<i32>,
}

impl InitialSpec {
    fn state(&self) -> StateSpec {
        StateSpec {
            rho: self.rho,
            u: self.u,
            v: self.v,
            p: self.p,
        }
    }
}

impl BoundarySpec {
    fn state(&self) -> StateSpec {
        StateSpec {
            rho: self.rho,
            u: self.u,
            v: self.v,
            p: self.p,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::order::{prepare, Ordering, PrepareOptions};
    use crate::solver::dg::DgMesh;

    /// `refine` from a case file and through [`Case::set_refine`]: the periodic vortex refined
    /// twice has 16 times the triangles, and its periodic sides (split alike) still pair into
    /// interior edges, leaving no boundary edge; more than [`MAX_REFINE`] is refused naming
    /// the key and the count it would give.
    #[test]
    fn refined_case_meshes_keep_periodic_pairs_and_refuse_too_many_levels() {
        let base = Case::periodic_vortex(120).build_mesh(1).expect("mesh");
        let mut case = Case::periodic_vortex(120);
        case.set_refine(2, "--refine").expect("2 levels");
        let om = prepare(
            &case.build_mesh(1).expect("mesh"),
            &PrepareOptions::new(Ordering::ColorRenumbered, 1),
        )
        .expect("order");
        let dm = DgMesh::build(&om, &|t| case.boundary(&om.mesh, t)).expect("dg mesh");
        assert_eq!(dm.num_elements, 16 * base.num_elements());
        assert!(dm.edges.iter().all(|e| e.right.is_some()));
        let err = case.set_refine(9, "--refine").expect_err("9 levels");
        assert_eq!(
            err.to_string(),
            "--refine: 9 uniform refinements would give about 31457280 triangles (120 x 4^9); \
             at most 8 are allowed"
        );
        assert_eq!(case.refine, 2, "a refused value leaves the setting");

        let toml = |refine: &str| {
            format!(
                "mesh = \"rect:100@1\"\nt_end = 1.0\nrefine = {refine}\n\
                 [initial]\nkind = \"vortex\"\n[[boundary]]\ntag = 1\nkind = \"exact\"\n"
            )
        };
        let path = Path::new("study.toml");
        let case = Case::from_toml(&toml("3"), path).expect("refine = 3");
        assert_eq!(case.refine, 3);
        let err = Case::from_toml(&toml("12"), path).expect_err("refine = 12");
        let msg = err.to_string();
        assert!(
            msg.contains("study.toml")
                && msg.contains(
                    "key 'refine': 12 uniform refinements would give 4^12 = 16777216 \
                                 times the mesh's triangles"
                ),
            "{msg}"
        );
    }

    /// `density` is the first field of `eval` (the L2 error relies on it), here for the vortex,
    /// whose density has its own shortcut, at points near and far from the centre.
    #[test]
    fn density_is_the_first_field_of_the_state() {
        let vortex = Case::vortex(100).initial;
        for (x, y, t) in [
            (0.0, 0.0, 0.0),
            (0.3, -0.7, 0.5),
            (2.0, 1.5, 1.0),
            (-4.0, 4.5, 2.0),
        ] {
            let (a, b) = (vortex.density(x, y, t), vortex.eval(x, y, t)[0]);
            assert_eq!(a.to_bits(), b.to_bits(), "({x}, {y}, {t}): {a} vs {b}");
        }
    }
}
