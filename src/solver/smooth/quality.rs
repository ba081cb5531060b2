//! Element quality in metric space: the Vasilevskii–Lipnikov functional
//!
//! ```text
//! Q = 12 sqrt(3) |e|_M / P_M^2 * F(P_M / 3),   F(x) = (min(x, 1/x) (2 - min(x, 1/x)))^3
//! ```
//!
//! with `|e|_M = |e| sqrt(det M)` the metric area and `P_M` the metric perimeter (edge lengths
//! `sqrt(u^T M u)`), `M` taken at the centroid. `Q = 1` exactly for a triangle that is
//! equilateral with unit sides in the metric; the first factor measures shape, `F` size.
//!
//! Vertex smoothing keeps the number of elements, so the metric is first scaled by `c` such
//! that the mesh's metric area equals that of as many ideal triangles:
//! `c sum_e |e| sqrt(det M_e) = N_e sqrt(3)/4` (see [`metric_normalization`]); without that the
//! size factor would only report that the metric asks for a different element count.

use super::metric::Sym2;

/// Vasilevskii–Lipnikov quality of triangle `p` in the metric `m` (negative area: inverted).
pub fn vl_quality(p: [[f64; 2]; 3], m: Sym2) -> f64 {
    let det = (m[0] * m[2] - m[1] * m[1]).max(0.0);
    let cross =
        (p[1][0] - p[0][0]) * (p[2][1] - p[0][1]) - (p[2][0] - p[0][0]) * (p[1][1] - p[0][1]);
    let area = 0.5 * cross * det.sqrt();
    let len = |a: [f64; 2], b: [f64; 2]| {
        let u = [b[0] - a[0], b[1] - a[1]];
        (u[0] * (m[0] * u[0] + m[1] * u[1]) + u[1] * (m[1] * u[0] + m[2] * u[1]))
            .max(0.0)
            .sqrt()
    };
    let perim = len(p[0], p[1]) + len(p[1], p[2]) + len(p[2], p[0]);
    if super::cpu::not_above(perim, 0.0) {
        return 0.0;
    }
    let x = perim / 3.0;
    let f = x.min(1.0 / x);
    let size = (f * (2.0 - f)).powi(3);
    12.0 * 3f64.sqrt() * area / (perim * perim) * size
}

fn corners(pos: &[[f64; 2]], t: [u32; 3]) -> [[f64; 2]; 3] {
    t.map(|v| pos[v as usize])
}

fn centroid(p: [[f64; 2]; 3]) -> [f64; 2] {
    [
        (p[0][0] + p[1][0] + p[2][0]) / 3.0,
        (p[0][1] + p[1][1] + p[2][1]) / 3.0,
    ]
}

/// The factor `c` that makes the metric area of the mesh `N_e sqrt(3)/4` (see module doc).
pub fn metric_normalization(
    pos: &[[f64; 2]],
    triangles: &[[u32; 3]],
    metric: &impl Fn([f64; 2]) -> Sym2,
) -> f64 {
    let total: f64 = triangles
        .iter()
        .map(|&t| {
            let p = corners(pos, t);
            let m = metric(centroid(p));
            let cross = (p[1][0] - p[0][0]) * (p[2][1] - p[0][1])
                - (p[2][0] - p[0][0]) * (p[1][1] - p[0][1]);
            0.5 * cross.abs() * (m[0] * m[2] - m[1] * m[1]).max(0.0).sqrt()
        })
        .sum();
    if total > 0.0 {
        triangles.len() as f64 * 3f64.sqrt() / 4.0 / total
    } else {
        1.0
    }
}

/// Quality of every triangle in the metric `c M`.
pub fn metric_quality(
    pos: &[[f64; 2]],
    triangles: &[[u32; 3]],
    metric: &impl Fn([f64; 2]) -> Sym2,
    c: f64,
) -> Vec<f64> {
    triangles
        .iter()
        .map(|&t| {
            let p = corners(pos, t);
            let m = metric(centroid(p)).map(|v| v * c);
            vl_quality(p, m)
        })
        .collect()
}

/// Number of histogram bins over [0, 1].
pub const HISTOGRAM_BINS: usize = 10;

/// Minimum, mean and a 10-bin histogram over [0, 1] of element qualities.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct QualitySummary {
    pub count: usize,
    pub min: f64,
    pub mean: f64,
    /// Bin `k` counts qualities in `[k/10, (k+1)/10)` (the last bin includes 1; negative
    /// values, inverted elements, count in bin 0).
    pub histogram: Vec<usize>,
}

impl QualitySummary {
    pub fn of(q: &[f64]) -> QualitySummary {
        let mut histogram = vec![0usize; HISTOGRAM_BINS];
        for &v in q {
            let k = (v * HISTOGRAM_BINS as f64).floor().clamp(0.0, 9.0) as usize;
            histogram[k] += 1;
        }
        let n = q.len();
        QualitySummary {
            count: n,
            min: q.iter().copied().fold(f64::INFINITY, f64::min),
            mean: if n > 0 {
                q.iter().sum::<f64>() / n as f64
            } else {
                0.0
            },
            histogram,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ideal_triangle_scores_one_and_others_less() {
        let s3 = 3f64.sqrt() / 2.0;
        let eq = [[0.0, 0.0], [1.0, 0.0], [0.5, s3]];
        assert!((vl_quality(eq, [1.0, 0.0, 1.0]) - 1.0).abs() < 1e-12);
        // Stretched by 4 along x: ideal for the metric diag(1/16, 1).
        let st = [[0.0, 0.0], [4.0, 0.0], [2.0, s3]];
        assert!((vl_quality(st, [1.0 / 16.0, 0.0, 1.0]) - 1.0).abs() < 1e-12);
        assert!(vl_quality(st, [1.0, 0.0, 1.0]) < 0.5);
        // Twice too large in the metric: shape 1, size factor (0.5 * 1.5)^3.
        assert!((vl_quality(eq, [4.0, 0.0, 4.0]) - 0.75f64.powi(3)).abs() < 1e-12);
        let inverted = [[0.0, 0.0], [0.5, s3], [1.0, 0.0]];
        assert!(vl_quality(inverted, [1.0, 0.0, 1.0]) < 0.0);
        let s = QualitySummary::of(&[0.05, 0.5, 1.0]);
        assert_eq!(s.histogram[0], 1);
        assert_eq!(s.histogram[9], 1);
        assert!((s.mean - 1.55 / 3.0).abs() < 1e-12);
    }
}
