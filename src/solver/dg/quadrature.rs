//! Quadrature rules for the DG operator.
//!
//! * Edges: Gauss–Legendre on [0, 1] with n points, exact for polynomials of degree 2n - 1.
//!   The DG surface integral of `phi_k F*(U)` needs degree 2p + 1 for a linear flux, so
//!   n = p + 1 points.
//! * Triangle: the collapsed (Duffy) product rule on the reference triangle
//!   {(xi, eta): xi, eta >= 0, xi + eta <= 1}: xi = u (1 - v), eta = v, d(xi) d(eta) =
//!   (1 - v) du dv, with Gauss–Legendre in u and v. A polynomial of degree d becomes degree d
//!   in u and d + 1 in v, so n_u = ceil((d + 1) / 2), n_v = ceil((d + 2) / 2) points are exact
//!   to degree d. The weights sum to 1/2 (the reference area). The volume term
//!   `F(U) . grad phi_k` needs degree 2p for a quadratic flux.
//!
//! Every node is strictly inside its element (no vertex), so the Dubiner basis, singular in
//! its collapsed coordinates only at the vertex (0, 1), is evaluated away from it.

/// Gauss–Legendre nodes and weights on [0, 1] (weights sum to 1), nodes ascending and
/// symmetric: `x[n - 1 - i] = 1 - x[i]`.
pub fn gauss_legendre01(n: usize) -> (Vec<f64>, Vec<f64>) {
    let n = n.max(1);
    let mut x = vec![0.0; n];
    let mut w = vec![0.0; n];
    for i in 0..n.div_ceil(2) {
        // Newton on P_n from the Chebyshev-like initial guess; converges in a few steps.
        let mut z = (std::f64::consts::PI * (i as f64 + 0.75) / (n as f64 + 0.5)).cos();
        let mut dp = 1.0;
        for _ in 0..100 {
            let (p, d) = legendre_and_derivative(n, z);
            dp = d;
            let dz = p / d;
            z -= dz;
            if dz.abs() < 1e-15 {
                let (_, d) = legendre_and_derivative(n, z);
                dp = d;
                break;
            }
        }
        let wi = 2.0 / ((1.0 - z * z) * dp * dp);
        // z descends from near 1; map [-1, 1] -> [0, 1].
        x[i] = 0.5 * (1.0 - z);
        x[n - 1 - i] = 0.5 * (1.0 + z);
        w[i] = 0.5 * wi;
        w[n - 1 - i] = 0.5 * wi;
    }
    (x, w)
}

/// P_n(z) and P_n'(z) by the three-term recurrence.
fn legendre_and_derivative(n: usize, z: f64) -> (f64, f64) {
    let (mut p0, mut p1) = (1.0, z);
    if n == 0 {
        return (1.0, 0.0);
    }
    for k in 2..=n {
        let p2 = ((2 * k - 1) as f64 * z * p1 - (k - 1) as f64 * p0) / k as f64;
        p0 = p1;
        p1 = p2;
    }
    let d = n as f64 * (z * p1 - p0) / (z * z - 1.0);
    (p1, d)
}

/// A quadrature rule on the reference triangle: points (xi, eta) and weights summing to 1/2.
#[derive(Clone, Debug)]
pub struct TriangleRule {
    pub points: Vec<[f64; 2]>,
    pub weights: Vec<f64>,
}

impl TriangleRule {
    /// The collapsed Gauss–Legendre rule exact for polynomials of total degree `degree`.
    pub fn exact_to(degree: usize) -> TriangleRule {
        let nu = (degree + 1).div_ceil(2).max(1);
        let nv = (degree + 2).div_ceil(2).max(1);
        let (xu, wu) = gauss_legendre01(nu);
        let (xv, wv) = gauss_legendre01(nv);
        let mut points = Vec::with_capacity(nu * nv);
        let mut weights = Vec::with_capacity(nu * nv);
        for (v, wvj) in xv.iter().zip(&wv) {
            for (u, wui) in xu.iter().zip(&wu) {
                points.push([u * (1.0 - v), *v]);
                weights.push(wui * wvj * (1.0 - v));
            }
        }
        TriangleRule { points, weights }
    }

    pub fn len(&self) -> usize {
        self.points.len()
    }

    pub fn is_empty(&self) -> bool {
        self.points.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Exact integral of xi^a eta^b over the reference triangle: a! b! / (a + b + 2)!.
    fn monomial_integral(a: usize, b: usize) -> f64 {
        let f = |n: usize| (1..=n).map(|k| k as f64).product::<f64>();
        f(a) * f(b) / f(a + b + 2)
    }

    #[test]
    fn gauss_legendre_is_exact_to_2n_minus_1() {
        for n in 1..=8 {
            let (x, w) = gauss_legendre01(n);
            for d in 0..2 * n {
                let q: f64 = x.iter().zip(&w).map(|(x, w)| w * x.powi(d as i32)).sum();
                assert!(
                    (q - 1.0 / (d as f64 + 1.0)).abs() < 1e-14,
                    "n={n} d={d} q={q}"
                );
            }
            for i in 0..n {
                assert!((x[n - 1 - i] - (1.0 - x[i])).abs() < 1e-15);
            }
        }
    }

    #[test]
    fn triangle_rule_is_exact_to_its_degree() {
        for degree in 0..=12 {
            let rule = TriangleRule::exact_to(degree);
            for a in 0..=degree {
                for b in 0..=degree - a {
                    let q: f64 = rule
                        .points
                        .iter()
                        .zip(&rule.weights)
                        .map(|(p, w)| w * p[0].powi(a as i32) * p[1].powi(b as i32))
                        .sum();
                    let exact = monomial_integral(a, b);
                    assert!((q - exact).abs() < 1e-14, "degree {degree}: x^{a} y^{b}");
                }
            }
        }
    }
}
