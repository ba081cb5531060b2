//! Metric tensor fields: analytic ones and per-vertex ones read from a file or computed.
//!
//! A 2D metric is a symmetric positive definite matrix `M = Q diag(1/h_1^2, 1/h_2^2) Q^T`: the
//! ideal edge along the unit eigenvector `Q^i` has Euclidean length `h_i`, so it has metric
//! length `sqrt(u^T M u) = 1`. It is stored as `[m11, m12, m22]`.
//!
//! The analytic fields are defined in coordinates normalised to the mesh bounding box,
//! `xi = (x - x_min) / L`, `eta = (y - y_min) / L` with `L` the larger box side, so each one
//! makes sense on any mesh; a metric `M_n` in those coordinates is `M_n / L^2` in physical ones.
//! Since the smoothing equations and the normalised quality (see [`super::quality`]) do not
//! change when `M` is multiplied by a constant, only the shape and relative size matter.

use crate::error::{Error, Result};
use crate::mesh::Mesh;
use crate::solver::swe::expr::Expr;
use std::path::Path;

/// A symmetric 2x2 matrix `[m11, m12, m22]`.
pub type Sym2 = [f64; 3];

/// `M = l1 v v^T + l2 v_perp v_perp^T` for a unit vector `v`.
pub fn sym_from_eigen(l1: f64, l2: f64, v: [f64; 2]) -> Sym2 {
    let (c, s) = (v[0], v[1]);
    [
        l1 * c * c + l2 * s * s,
        (l1 - l2) * c * s,
        l1 * s * s + l2 * c * c,
    ]
}

/// Eigenvalues `(l1, l2)` with `l1 >= l2` and the unit eigenvector of `l1`:
/// `l = (a + c)/2 +- sqrt(((a - c)/2)^2 + b^2)`.
pub fn sym_eigen(m: Sym2) -> (f64, f64, [f64; 2]) {
    let [a, b, c] = m;
    let mean = 0.5 * (a + c);
    let rad = (0.25 * (a - c) * (a - c) + b * b).sqrt();
    let (l1, l2) = (mean + rad, mean - rad);
    // Two expressions of the same eigenvector; take the better-conditioned one.
    let v1 = [b, l1 - a];
    let v2 = [l1 - c, b];
    let (n1, n2) = (v1[0].hypot(v1[1]), v2[0].hypot(v2[1]));
    let v = if n1 == 0.0 && n2 == 0.0 {
        [1.0, 0.0]
    } else if n1 >= n2 {
        [v1[0] / n1, v1[1] / n1]
    } else {
        [v2[0] / n2, v2[1] / n2]
    };
    (l1, l2, v)
}

/// True when `m` is finite and positive definite (`m11 > 0`, `det > 0`).
pub fn is_spd(m: Sym2) -> bool {
    m.iter().all(|v| v.is_finite()) && m[0] > 0.0 && m[0] * m[2] - m[1] * m[1] > 0.0
}

/// Sizes of the analytic fields, as fractions of the bounding-box side `L`.
const H_MAX: f64 = 0.08;
const H_MIN: f64 = 0.006;

/// Default function of the Hessian metric (normalised coordinates): a steep circular front.
pub const DEFAULT_HESSIAN: &str = "tanh(30*((x-0.5)^2 + (y-0.5)^2 - 0.09))";

/// Target interpolation error of the Hessian metric: `M = R clamp(|Lambda| / eps) R^T`.
const HESSIAN_EPS: f64 = 0.02;

/// The analytic metric fields (sizes relative to the box side `L`, coordinates normalised).
#[derive(Clone, Debug)]
pub enum AnalyticMetric {
    /// Constant anisotropic metric: sizes 0.08 along 30 degrees and 0.02 across (aspect 4).
    Uniform,
    /// Boundary layer on the bottom side: `h_y(d) = h_min + (h_max - h_min)(1 - exp(-d/0.15))`
    /// at distance `d` from `y = y_min`, `h_x = h_max`.
    BoundaryLayer,
    /// Shock along the curve `eta = 0.5 + 0.2 sin(2 pi xi)`: across it
    /// `h_n = h_min + (h_max - h_min)(1 - exp(-|phi| / (0.04 |grad phi|)))` with the level set
    /// `phi = eta - 0.5 - 0.2 sin(2 pi xi)`, along it `h_max`.
    Shock,
    /// Hessian metric of a function `f(x, y)` of the normalised coordinates:
    /// `M = R diag(clamp(|lambda_i| / eps, 1/h_max^2, 1/h_min^2)) R^T` with `H = R Lambda R^T`
    /// the Hessian by central differences and `eps` = 0.02.
    Hessian(Expr),
}

/// The accepted metric names, for messages and help texts.
pub const METRIC_NAMES: &str = "uniform, boundary-layer, shock, hessian, hessian:EXPR (EXPR a \
function of x and y normalised to [0, 1] over the bounding box), vertex:NAME (NAME evaluated at \
the mesh vertices and resampled like a metric file)";

impl AnalyticMetric {
    /// Parse a metric name (see [`METRIC_NAMES`]).
    pub fn parse(name: &str) -> Result<AnalyticMetric> {
        let n = name.trim();
        if let Some(expr) = n.strip_prefix("hessian:") {
            return Ok(AnalyticMetric::Hessian(Expr::parse(expr, &["x", "y"])?));
        }
        match n.to_ascii_lowercase().replace('_', "-").as_str() {
            "uniform" => Ok(AnalyticMetric::Uniform),
            "boundary-layer" | "bl" => Ok(AnalyticMetric::BoundaryLayer),
            "shock" => Ok(AnalyticMetric::Shock),
            "hessian" => Ok(AnalyticMetric::Hessian(Expr::parse(
                DEFAULT_HESSIAN,
                &["x", "y"],
            )?)),
            _ => Err(Error::Invalid(format!(
                "unknown metric '{name}'; known metrics: {METRIC_NAMES}"
            ))),
        }
    }

    /// Short name for titles and file names.
    pub fn name(&self) -> String {
        match self {
            AnalyticMetric::Uniform => "uniform".into(),
            AnalyticMetric::BoundaryLayer => "boundary-layer".into(),
            AnalyticMetric::Shock => "shock".into(),
            AnalyticMetric::Hessian(e) => format!("hessian:{}", e.text()),
        }
    }

    /// The metric in normalised coordinates at `(xi, eta)`.
    pub fn eval_normalized(&self, xi: f64, eta: f64) -> Sym2 {
        let grade = |d: f64, width: f64| H_MIN + (H_MAX - H_MIN) * (1.0 - (-d / width).exp());
        match self {
            AnalyticMetric::Uniform => {
                let a = 30f64.to_radians();
                sym_from_eigen(
                    1.0 / (H_MAX * H_MAX),
                    16.0 / (H_MAX * H_MAX),
                    [a.cos(), a.sin()],
                )
            }
            AnalyticMetric::BoundaryLayer => {
                let hy = grade(eta.max(0.0), 0.15);
                [1.0 / (H_MAX * H_MAX), 0.0, 1.0 / (hy * hy)]
            }
            AnalyticMetric::Shock => {
                let k = 2.0 * std::f64::consts::PI;
                let phi = eta - 0.5 - 0.2 * (k * xi).sin();
                let g = [-0.2 * k * (k * xi).cos(), 1.0];
                let gn = g[0].hypot(g[1]);
                let hn = grade(phi.abs() / gn, 0.04);
                sym_from_eigen(
                    1.0 / (hn * hn),
                    1.0 / (H_MAX * H_MAX),
                    [g[0] / gn, g[1] / gn],
                )
            }
            AnalyticMetric::Hessian(f) => {
                let d = 1e-4;
                let v = |x: f64, y: f64| f.eval(&[x, y]);
                let f0 = v(xi, eta);
                let fxx = (v(xi + d, eta) - 2.0 * f0 + v(xi - d, eta)) / (d * d);
                let fyy = (v(xi, eta + d) - 2.0 * f0 + v(xi, eta - d)) / (d * d);
                let fxy = (v(xi + d, eta + d) - v(xi + d, eta - d) - v(xi - d, eta + d)
                    + v(xi - d, eta - d))
                    / (4.0 * d * d);
                let (l1, l2, e) = sym_eigen([fxx, fxy, fyy]);
                let clamp = |l: f64| {
                    let l = if l.is_finite() { l.abs() } else { 0.0 };
                    (l / HESSIAN_EPS).clamp(1.0 / (H_MAX * H_MAX), 1.0 / (H_MIN * H_MIN))
                };
                sym_from_eigen(clamp(l1), clamp(l2), e)
            }
        }
    }

    /// The metric in physical coordinates at `x`, for a box with lower corner `lo` and larger
    /// side `side`: `M_n((x - lo) / side) / side^2`.
    pub fn eval(&self, x: [f64; 2], lo: [f64; 2], side: f64) -> Sym2 {
        let m = self.eval_normalized((x[0] - lo[0]) / side, (x[1] - lo[1]) / side);
        let s = 1.0 / (side * side);
        [m[0] * s, m[1] * s, m[2] * s]
    }
}

/// A metric given at the mesh vertices, linearly interpolated inside each triangle.
#[derive(Clone, Debug, PartialEq)]
pub struct VertexMetric {
    pub values: Vec<Sym2>,
}

impl VertexMetric {
    /// Read a metric file: one line `m11 m12 m22` per mesh vertex, in vertex order; blank lines
    /// and lines starting with `#` are skipped. Every tensor must be finite and positive
    /// definite. Errors name the file and the 1-based line.
    pub fn read(path: &Path, num_points: usize) -> Result<VertexMetric> {
        let text = crate::files::read_text(path, crate::files::MAX_INPUT_BYTES)?;
        Self::parse(path, &text, num_points)
    }

    /// Parse the text of a metric file (see [`VertexMetric::read`]).
    pub fn parse(path: &Path, text: &str, num_points: usize) -> Result<VertexMetric> {
        let mut values = Vec::with_capacity(num_points);
        for (i, line) in text.lines().enumerate() {
            let lineno = i + 1;
            let t = line.trim();
            if t.is_empty() || t.starts_with('#') {
                continue;
            }
            let fields: Vec<&str> = t.split_whitespace().collect();
            if fields.len() != 3 {
                return Err(Error::parse(
                    path,
                    lineno,
                    format!(
                        "expected 3 numbers 'm11 m12 m22', found {} field(s)",
                        fields.len()
                    ),
                ));
            }
            let mut m = [0.0; 3];
            for (slot, f) in m.iter_mut().zip(&fields) {
                *slot = f
                    .parse::<f64>()
                    .map_err(|_| Error::parse(path, lineno, format!("'{f}' is not a number")))?;
            }
            if !is_spd(m) {
                return Err(Error::parse(
                    path,
                    lineno,
                    format!(
                        "metric [{} {} {}] is not finite and positive definite (need m11 > 0 \
                         and m11 m22 - m12^2 > 0)",
                        m[0], m[1], m[2]
                    ),
                ));
            }
            if values.len() == num_points {
                return Err(Error::parse(
                    path,
                    lineno,
                    format!("more metric lines than the mesh's {num_points} vertices"),
                ));
            }
            values.push(m);
        }
        if values.len() != num_points {
            return Err(Error::parse(
                path,
                0,
                format!(
                    "{} metric lines but the mesh has {num_points} vertices (one line each)",
                    values.len()
                ),
            ));
        }
        Ok(VertexMetric { values })
    }

    /// An analytic metric evaluated at the mesh vertices (what a solver's error estimate
    /// would hand over).
    pub fn from_analytic(mesh: &Mesh, metric: &AnalyticMetric) -> VertexMetric {
        let (lo, side) = box_frame(mesh);
        VertexMetric {
            values: mesh
                .points
                .iter()
                .map(|p| metric.eval([p[0], p[1]], lo, side))
                .collect(),
        }
    }

    /// Write the file format read by [`VertexMetric::read`].
    pub fn write(&self, path: &Path) -> Result<()> {
        crate::files::atomic_write(path, |w| {
            writeln!(w, "# m11 m12 m22, one line per mesh vertex")?;
            for m in &self.values {
                writeln!(w, "{:e} {:e} {:e}", m[0], m[1], m[2])?;
            }
            Ok(())
        })
    }
}

/// Lower corner and larger side of a mesh's bounding box (side at least 1e-300).
pub fn box_frame(mesh: &Mesh) -> ([f64; 2], f64) {
    let (lo, hi) = mesh.bounding_box();
    let side = (hi[0] - lo[0]).max(hi[1] - lo[1]).max(1e-300);
    ([lo[0], lo[1]], side)
}

/// Where the metric comes from.
#[derive(Clone, Debug)]
pub enum MetricSpec {
    Analytic(AnalyticMetric),
    Vertex { name: String, values: VertexMetric },
}

impl MetricSpec {
    /// From a name (see [`METRIC_NAMES`]) or a metric file; `vertex:NAME` evaluates NAME at the
    /// vertices of `mesh`.
    pub fn resolve(name: Option<&str>, file: Option<&Path>, mesh: &Mesh) -> Result<MetricSpec> {
        match (name, file) {
            (Some(_), Some(_)) => Err(Error::Invalid(
                "give either a metric name or a metric file, not both".into(),
            )),
            (_, Some(path)) => Ok(MetricSpec::Vertex {
                name: path.display().to_string(),
                values: VertexMetric::read(path, mesh.num_points())?,
            }),
            (name, None) => {
                let name = name.unwrap_or("shock");
                if let Some(inner) = name.trim().strip_prefix("vertex:") {
                    let a = AnalyticMetric::parse(inner)?;
                    Ok(MetricSpec::Vertex {
                        name: format!("vertex:{}", a.name()),
                        values: VertexMetric::from_analytic(mesh, &a),
                    })
                } else {
                    Ok(MetricSpec::Analytic(AnalyticMetric::parse(name)?))
                }
            }
        }
    }

    pub fn name(&self) -> String {
        match self {
            MetricSpec::Analytic(a) => a.name(),
            MetricSpec::Vertex { name, .. } => name.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eigen_round_trip() {
        let v = [0.6, 0.8];
        let m = sym_from_eigen(9.0, 2.0, v);
        let (l1, l2, e) = sym_eigen(m);
        assert!((l1 - 9.0).abs() < 1e-12 && (l2 - 2.0).abs() < 1e-12);
        assert!((e[0] * v[0] + e[1] * v[1]).abs() > 1.0 - 1e-12);
    }

    #[test]
    fn analytic_metrics_are_spd_everywhere() -> Result<()> {
        for name in ["uniform", "boundary-layer", "shock", "hessian"] {
            let m = AnalyticMetric::parse(name)?;
            for i in 0..=20 {
                for j in 0..=20 {
                    let v = m.eval_normalized(i as f64 / 20.0, j as f64 / 20.0);
                    assert!(is_spd(v), "{name} at ({i}, {j}): {v:?}");
                }
            }
        }
        Ok(())
    }

    #[test]
    fn unknown_metric_lists_the_names() {
        let e = AnalyticMetric::parse("bogus").err().map(|e| e.to_string());
        let msg = e.unwrap_or_default();
        assert!(
            msg.contains("unknown metric 'bogus'") && msg.contains("shock"),
            "{msg}"
        );
    }

    #[test]
    fn metric_file_errors_name_the_line() {
        let p = Path::new("m.txt");
        let cases = [
            ("1 0 1\n1 0\n", 2, "expected 3 numbers"),
            ("# c\n1 0 1\n\n1 x 1\n", 4, "'x' is not a number"),
            ("1 0 1\n1 2 1\n", 2, "positive definite"),
            ("1 0 1\n1 0 1\n1 0 1\n", 3, "more metric lines"),
        ];
        for (text, line, what) in cases {
            let msg = VertexMetric::parse(p, text, 2)
                .err()
                .map(|e| e.to_string())
                .unwrap_or_default();
            assert!(
                msg.contains(&format!("m.txt:{line}:")) && msg.contains(what),
                "{text:?}: {msg}"
            );
        }
        let short = VertexMetric::parse(p, "1 0 1\n", 2)
            .err()
            .map(|e| e.to_string());
        assert!(short.unwrap_or_default().contains("1 metric lines"));
        let ok = VertexMetric::parse(p, "1 0 1\n2 0.5 1\n", 2);
        assert_eq!(ok.ok().map(|m| m.values.len()), Some(2));
    }
}
