//! Element quality for 2D meshes, 1 for the ideal element and 0 for a degenerate one.
//!
//! Triangles: radius ratio q = 2 r_in / r_circ = (b + c - a)(c + a - b)(a + b - c) / (a b c).
//! Quadrilaterals: the minimum scaled Jacobian over the four corners,
//! min_k (e_k x e_{k+1}) / (|e_k| |e_{k+1}|), which is 1 for a rectangle.

use crate::mesh::model::{ElementKind, Mesh};

/// Quality of each element (see module doc); `None` for 3D elements.
pub fn element_quality(mesh: &Mesh) -> Vec<Option<f64>> {
    (0..mesh.num_elements())
        .map(|e| {
            let pts: Vec<[f64; 3]> = mesh
                .element(e)
                .iter()
                .map(|&v| mesh.points[v as usize])
                .collect();
            match mesh.kinds[e] {
                ElementKind::Triangle => Some(triangle_radius_ratio(pts[0], pts[1], pts[2])),
                ElementKind::Quad => Some(quad_scaled_jacobian(&pts)),
                _ => None,
            }
        })
        .collect()
}

fn dist(a: [f64; 3], b: [f64; 3]) -> f64 {
    ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2) + (a[2] - b[2]).powi(2)).sqrt()
}

/// Radius ratio 2 r_in / r_circ of a triangle (works for triangles embedded in 3D).
pub fn triangle_radius_ratio(p: [f64; 3], q: [f64; 3], r: [f64; 3]) -> f64 {
    let (a, b, c) = (dist(q, r), dist(r, p), dist(p, q));
    let prod = a * b * c;
    if prod == 0.0 {
        return 0.0;
    }
    ((b + c - a) * (c + a - b) * (a + b - c) / prod).max(0.0)
}

/// Smallest interior angle of a triangle in degrees.
pub fn triangle_min_angle_deg(p: [f64; 3], q: [f64; 3], r: [f64; 3]) -> f64 {
    let (a, b, c) = (dist(q, r), dist(r, p), dist(p, q));
    let angle = |opp: f64, s1: f64, s2: f64| {
        ((s1 * s1 + s2 * s2 - opp * opp) / (2.0 * s1 * s2))
            .clamp(-1.0, 1.0)
            .acos()
    };
    angle(a, b, c)
        .min(angle(b, c, a))
        .min(angle(c, a, b))
        .to_degrees()
}

/// Minimum scaled Jacobian of a planar quadrilateral given counter-clockwise.
pub fn quad_scaled_jacobian(pts: &[[f64; 3]]) -> f64 {
    (0..4)
        .map(|k| {
            let (a, b, c) = (pts[(k + 3) % 4], pts[k], pts[(k + 1) % 4]);
            let e1 = [c[0] - b[0], c[1] - b[1]];
            let e0 = [a[0] - b[0], a[1] - b[1]];
            let cross = e1[0] * e0[1] - e1[1] * e0[0];
            let n = (e0[0].hypot(e0[1])) * (e1[0].hypot(e1[1]));
            if n == 0.0 {
                0.0
            } else {
                cross / n
            }
        })
        .fold(f64::INFINITY, f64::min)
}

/// Summary statistics of a list of values.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize)]
pub struct Stats {
    pub count: usize,
    pub min: f64,
    pub mean: f64,
    pub max: f64,
}

impl Stats {
    /// Min, mean and max of the values (count 0 and zeros when empty).
    pub fn of(values: impl IntoIterator<Item = f64>) -> Stats {
        let (mut n, mut sum, mut lo, mut hi) = (0usize, 0.0, f64::INFINITY, f64::NEG_INFINITY);
        for v in values {
            n += 1;
            sum += v;
            lo = lo.min(v);
            hi = hi.max(v);
        }
        if n == 0 {
            return Stats::default();
        }
        Stats {
            count: n,
            min: lo,
            mean: sum / n as f64,
            max: hi,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equilateral_triangle_and_square_score_one() {
        let s3 = 3f64.sqrt() / 2.0;
        let q = triangle_radius_ratio([0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.5, s3, 0.0]);
        assert!((q - 1.0).abs() < 1e-12);
        let sq = [
            [0.0, 0.0, 0.0],
            [1.0, 0.0, 0.0],
            [1.0, 1.0, 0.0],
            [0.0, 1.0, 0.0],
        ];
        assert!((quad_scaled_jacobian(&sq) - 1.0).abs() < 1e-12);
        let m = triangle_min_angle_deg([0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.5, s3, 0.0]);
        assert!((m - 60.0).abs() < 1e-9);
    }

    #[test]
    fn slivers_score_near_zero() {
        let q = triangle_radius_ratio([0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.5, 1e-4, 0.0]);
        assert!(q < 1e-3, "{q}");
        let right = triangle_radius_ratio([0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]);
        assert!((right - 2.0 * (2f64.sqrt() - 1.0)).abs() < 1e-12);
    }
}
