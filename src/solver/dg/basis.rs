//! The orthonormal Dubiner basis on the reference triangle T = {(xi, eta): xi, eta >= 0,
//! xi + eta <= 1}, orders p = 0..=4, and the tables the DG kernels read.
//!
//! With r = 2 xi - 1, s = 2 eta - 1 and the collapsed coordinate a = 2 (1 + r) / (1 - s) - 1,
//! b = s, mode (i, j), i + j <= p, is
//!
//!   phi_ij = 2 sqrt(2) P_i^(0,0)(a) P_j^(2i+1,0)(b) (1 - b)^i,
//!
//! with P^(alpha,beta) the Jacobi polynomials normalised on [-1, 1] (Hesthaven–Warburton,
//! Simplex2DP, scaled by 2 because T has area 1/2). Then `int_T phi_k phi_l = delta_kl`, so the
//! DG mass matrix of an element is `|det J| I` and needs no inversion. Modes are ordered by total
//! degree, so the first `(q+1)(q+2)/2` of them span P_q (the limiter relies on that: mode 0 is the
//! constant `sqrt(2)`, modes 1, 2 the linear part).

use super::quadrature::{gauss_legendre01, TriangleRule};

/// Highest supported polynomial order.
pub const MAX_ORDER: usize = 4;

/// Number of basis functions of order p: (p + 1)(p + 2) / 2.
pub const fn num_basis(p: usize) -> usize {
    (p + 1) * (p + 2) / 2
}

/// Value of the constant mode: phi_0 = sqrt(2), so the element mean of a component is
/// `c_0 phi_0 = sqrt(2) c_0` (the other modes are orthogonal to constants).
pub const PHI0: f64 = std::f64::consts::SQRT_2;

/// The (i, j) index pairs of the modes, ordered by total degree.
pub fn mode_indices(p: usize) -> Vec<(usize, usize)> {
    let mut v = Vec::with_capacity(num_basis(p));
    for d in 0..=p {
        for i in (0..=d).rev() {
            v.push((i, d - i));
        }
    }
    v
}

/// Normalised Jacobi polynomial P_n^(alpha, 0)(x).
fn jacobi(x: f64, alpha: f64, n: usize) -> f64 {
    jacobi_ab(x, alpha, 0.0, n)
}

/// Derivative of the normalised Jacobi polynomial:
/// d/dx P_n^(alpha,0) = sqrt(n (n + alpha + 1)) P_{n-1}^(alpha+1,1); the beta = 1 polynomial is
/// evaluated through the general recurrence below.
fn jacobi_derivative(x: f64, alpha: f64, n: usize) -> f64 {
    if n == 0 {
        return 0.0;
    }
    (n as f64 * (n as f64 + alpha + 1.0)).sqrt() * jacobi_ab(x, alpha + 1.0, 1.0, n - 1)
}

/// Normalised Jacobi polynomial P_n^(alpha, beta), integer alpha and beta, by the
/// Hesthaven–Warburton recurrence (orthonormal on [-1, 1] with weight (1-x)^alpha (1+x)^beta).
fn jacobi_ab(x: f64, alpha: f64, beta: f64, n: usize) -> f64 {
    let ab = alpha + beta;
    let fact = |v: f64| -> f64 { (1..v.round() as usize).map(|k| k as f64).product::<f64>() };
    let gamma0 =
        2f64.powf(ab + 1.0) / (ab + 1.0) * fact(alpha + 1.0) * fact(beta + 1.0) / fact(ab + 1.0);
    let p0 = 1.0 / gamma0.sqrt();
    if n == 0 {
        return p0;
    }
    let gamma1 = (alpha + 1.0) * (beta + 1.0) / (ab + 3.0) * gamma0;
    let p1 = ((ab + 2.0) * x / 2.0 + (alpha - beta) / 2.0) / gamma1.sqrt();
    if n == 1 {
        return p1;
    }
    let mut aold = 2.0 / (2.0 + ab) * ((alpha + 1.0) * (beta + 1.0) / (ab + 3.0)).sqrt();
    let (mut pm1, mut pi) = (p0, p1);
    for i in 1..n {
        let fi = i as f64;
        let h1 = 2.0 * fi + ab;
        let anew = 2.0 / (h1 + 2.0)
            * ((fi + 1.0) * (fi + 1.0 + ab) * (fi + 1.0 + alpha) * (fi + 1.0 + beta)
                / (h1 + 1.0)
                / (h1 + 3.0))
                .sqrt();
        let bnew = -(alpha * alpha - beta * beta) / h1 / (h1 + 2.0);
        let pn = (-aold * pm1 + (x - bnew) * pi) / anew;
        pm1 = pi;
        pi = pn;
        aold = anew;
    }
    pi
}

fn collapsed(xi: f64, eta: f64) -> (f64, f64) {
    let (r, s) = (2.0 * xi - 1.0, 2.0 * eta - 1.0);
    let a = if (1.0 - s).abs() > 1e-14 {
        2.0 * (1.0 + r) / (1.0 - s) - 1.0
    } else {
        -1.0
    };
    (a, s)
}

/// Value of mode (i, j) at (xi, eta).
pub fn dubiner(i: usize, j: usize, xi: f64, eta: f64) -> f64 {
    let (a, b) = collapsed(xi, eta);
    2.0 * std::f64::consts::SQRT_2
        * jacobi(a, 0.0, i)
        * jacobi(b, (2 * i + 1) as f64, j)
        * (1.0 - b).powi(i as i32)
}

/// Gradient (d/dxi, d/deta) of mode (i, j) at (xi, eta) (Hesthaven–Warburton GradSimplex2DP,
/// regular everywhere on T including the collapsed vertex (0, 1)).
pub fn dubiner_gradient(i: usize, j: usize, xi: f64, eta: f64) -> [f64; 2] {
    let (a, b) = collapsed(xi, eta);
    let alpha = (2 * i + 1) as f64;
    let fa = jacobi(a, 0.0, i);
    let dfa = jacobi_derivative(a, 0.0, i);
    let gb = jacobi(b, alpha, j);
    let dgb = jacobi_derivative(b, alpha, j);
    let half = 0.5 * (1.0 - b);
    let mut dr = dfa * gb;
    let mut ds = dfa * gb * 0.5 * (1.0 + a);
    if i > 0 {
        dr *= half.powi(i as i32 - 1);
        ds *= half.powi(i as i32 - 1);
    }
    let mut tmp = dgb * half.powi(i as i32);
    if i > 0 {
        tmp -= 0.5 * i as f64 * gb * half.powi(i as i32 - 1);
    }
    ds += fa * tmp;
    let scale = 2f64.powf(i as f64 + 0.5);
    // d/dxi = 2 d/dr; the factor 2 of phi on T.
    [4.0 * scale * dr, 4.0 * scale * ds]
}

/// Point on local edge `e` of the reference triangle at parameter t in [0, 1], walking the
/// edges counter-clockwise: edge 0 from (0,0) to (1,0), edge 1 from (1,0) to (0,1), edge 2
/// from (0,1) to (0,0) (the mesh's local face order, vertices (v0,v1), (v1,v2), (v2,v0)).
pub fn edge_point(e: usize, t: f64) -> [f64; 2] {
    match e {
        0 => [t, 0.0],
        1 => [1.0 - t, t],
        _ => [0.0, 1.0 - t],
    }
}

/// Parameter on a whole local edge of the point at parameter t of half `half` of that edge:
/// t itself for half 0 (the whole edge), (half - 1 + t) / 2 for halves 1 and 2 (the first and
/// second half as the element walks the edge counter-clockwise).
pub fn half_edge_param(half: usize, t: f64) -> f64 {
    if half == 0 {
        t
    } else {
        (half as f64 - 1.0 + t) / 2.0
    }
}

/// Reference vertices, in the mesh's local vertex order.
pub const REF_VERTICES: [[f64; 2]; 3] = [[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]];

/// Precomputed basis values for order p: the volume rule (exact to degree 2p), the edge rule
/// (p + 1 Gauss points, exact to 2p + 1) and the basis at every node. All tables are row-major
/// `[point][mode]`. The GPU receives the same numbers ([`BasisTables::packed`]).
#[derive(Clone, Debug)]
pub struct BasisTables {
    pub p: usize,
    pub np: usize,
    pub vol: TriangleRule,
    pub vol_phi: Vec<f64>,
    pub vol_dxi: Vec<f64>,
    pub vol_deta: Vec<f64>,
    /// Edge nodes t_q on [0, 1] (symmetric: t_{n-1-q} = 1 - t_q) and weights summing to 1.
    pub edge_t: Vec<f64>,
    pub edge_w: Vec<f64>,
    /// `[row][q][mode]`, 9 * nqe * np values; row `local + 3 * half`: phi at
    /// `edge_point(local, half_edge_param(half, t_q))`. Rows 0..3 are the whole edges; rows
    /// 3..9 the halves a coarse element sees next to a refined neighbour (hanging node).
    pub edge_phi: Vec<f64>,
    /// `[vertex][mode]`.
    pub vertex_phi: Vec<f64>,
}

impl BasisTables {
    pub fn new(p: usize) -> BasisTables {
        let p = p.min(MAX_ORDER);
        let modes = mode_indices(p);
        let np = modes.len();
        let vol = TriangleRule::exact_to(2 * p);
        let eval = |pts: &[[f64; 2]]| -> Vec<f64> {
            pts.iter()
                .flat_map(|x| modes.iter().map(move |&(i, j)| dubiner(i, j, x[0], x[1])))
                .collect()
        };
        let vol_phi = eval(&vol.points);
        let grads: Vec<[f64; 2]> = vol
            .points
            .iter()
            .flat_map(|x| {
                modes
                    .iter()
                    .map(move |&(i, j)| dubiner_gradient(i, j, x[0], x[1]))
            })
            .collect();
        let (edge_t, edge_w) = gauss_legendre01(p + 1);
        let edge_pts: Vec<[f64; 2]> = (0..9)
            .flat_map(|row| {
                edge_t
                    .iter()
                    .map(move |&t| edge_point(row % 3, half_edge_param(row / 3, t)))
            })
            .collect();
        BasisTables {
            p,
            np,
            vol_dxi: grads.iter().map(|g| g[0]).collect(),
            vol_deta: grads.iter().map(|g| g[1]).collect(),
            vol_phi,
            edge_phi: eval(&edge_pts),
            vertex_phi: eval(&REF_VERTICES),
            vol,
            edge_t,
            edge_w,
        }
    }

    /// Number of volume nodes.
    pub fn nq(&self) -> usize {
        self.vol.len()
    }

    /// Number of nodes per edge.
    pub fn nqe(&self) -> usize {
        self.edge_t.len()
    }

    /// Basis values at node q of local edge `local`, on the whole edge (half 0) or on half 1
    /// or 2 of it.
    pub fn edge_row(&self, local: usize, half: usize, q: usize) -> &[f64] {
        let nqe = self.nqe();
        &self.edge_phi[((local + 3 * half) * nqe + q) * self.np..][..self.np]
    }

    /// The nodes where the positivity limiter checks an element: the volume nodes, the nodes
    /// of the three whole edges and, on each side split into two faces (`split[j]`), the nodes
    /// of both halves, where the fluxes of that side are evaluated.
    pub fn positivity_nodes(&self, split: [bool; 3]) -> impl Iterator<Item = &[f64]> + Clone {
        let np = self.np;
        let whole = 3 * self.nqe() * np;
        let halves = (1..3usize).flat_map(move |h| {
            (0..3usize)
                .filter(move |&j| split[j])
                .flat_map(move |j| (0..self.nqe()).map(move |q| self.edge_row(j, h, q)))
        });
        self.vol_phi
            .chunks(np)
            .chain(self.edge_phi[..whole].chunks(np))
            .chain(halves)
    }

    /// Basis values at an arbitrary reference point.
    pub fn eval(&self, xi: f64, eta: f64) -> Vec<f64> {
        mode_indices(self.p)
            .iter()
            .map(|&(i, j)| dubiner(i, j, xi, eta))
            .collect()
    }

    /// The tables in the order `shaders/common/dg_tables.wgsl` reads them:
    /// `vol_w[nq]`, `vol_phi[nq][np]`, `vol_dxi[nq][np]`, `vol_deta[nq][np]`, `edge_w[nqe]`,
    /// `edge_phi[9][nqe][np]`, `vertex_phi[3][np]`, `edge_t[nqe]`.
    pub fn packed(&self) -> Vec<f32> {
        let mut v = Vec::new();
        for part in [
            &self.vol.weights,
            &self.vol_phi,
            &self.vol_dxi,
            &self.vol_deta,
            &self.edge_w,
            &self.edge_phi,
            &self.vertex_phi,
            &self.edge_t,
        ] {
            v.extend(part.iter().map(|&x| x as f32));
        }
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn basis_is_orthonormal_and_hierarchical() {
        for p in 0..=MAX_ORDER {
            let t = BasisTables::new(p);
            let np = t.np;
            assert_eq!(np, num_basis(p));
            let rule = TriangleRule::exact_to(2 * p + 2);
            for k in 0..np {
                for l in 0..np {
                    let (mk, ml) = (mode_indices(p)[k], mode_indices(p)[l]);
                    let s: f64 = rule
                        .points
                        .iter()
                        .zip(&rule.weights)
                        .map(|(x, w)| {
                            w * dubiner(mk.0, mk.1, x[0], x[1]) * dubiner(ml.0, ml.1, x[0], x[1])
                        })
                        .sum();
                    let want = if k == l { 1.0 } else { 0.0 };
                    assert!((s - want).abs() < 1e-12, "p={p} ({k},{l}): {s}");
                }
            }
            assert!((t.vertex_phi[0] - PHI0).abs() < 1e-14);
        }
    }

    /// Row `local + 3 h` is the whole-edge trace at the mapped parameter: for random
    /// coefficients, sum_k c_k phi_k on half h at node q equals the polynomial evaluated at
    /// edge_point(local, (h - 1 + t_q) / 2); half 0 is the old whole-edge table.
    #[test]
    fn half_edge_rows_are_the_edge_polynomial_at_the_mapped_parameter() {
        let mut seed = 0x9e3779b97f4a7c15u64;
        let mut rnd = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed >> 11) as f64 / (1u64 << 53) as f64 - 0.5
        };
        for p in 0..=MAX_ORDER {
            let t = BasisTables::new(p);
            let c: Vec<f64> = (0..t.np).map(|_| rnd()).collect();
            let dot = |phi: &[f64]| -> f64 { phi.iter().zip(&c).map(|(a, b)| a * b).sum() };
            for local in 0..3 {
                for (q, &tq) in t.edge_t.iter().enumerate() {
                    let whole = edge_point(local, tq);
                    let direct = dot(&t.eval(whole[0], whole[1]));
                    assert!((dot(t.edge_row(local, 0, q)) - direct).abs() < 1e-13);
                    for h in 1..3 {
                        let s = (h as f64 - 1.0 + tq) / 2.0;
                        let x = edge_point(local, s);
                        let want = dot(&t.eval(x[0], x[1]));
                        let got = dot(t.edge_row(local, h, q));
                        assert!(
                            (got - want).abs() < 1e-12,
                            "p={p} edge {local} half {h} node {q}: {got} vs {want}"
                        );
                    }
                }
            }
            // The first half ends where the second starts, at the edge midpoint.
            let m = edge_point(1, 0.5);
            assert_eq!(edge_point(1, half_edge_param(1, 1.0)), m);
            assert_eq!(edge_point(1, half_edge_param(2, 0.0)), m);
            assert_eq!(
                t.packed().len(),
                t.nq() * (1 + 3 * t.np) + t.nqe() * (2 + 9 * t.np) + 3 * t.np
            );
        }
    }

    #[test]
    fn gradients_match_finite_differences() {
        let h = 1e-6;
        for (i, j) in mode_indices(MAX_ORDER) {
            for x in [[0.2, 0.3], [0.1, 0.8], [0.6, 0.05], [0.01, 0.98]] {
                let g = dubiner_gradient(i, j, x[0], x[1]);
                let fx =
                    (dubiner(i, j, x[0] + h, x[1]) - dubiner(i, j, x[0] - h, x[1])) / (2.0 * h);
                let fy =
                    (dubiner(i, j, x[0], x[1] + h) - dubiner(i, j, x[0], x[1] - h)) / (2.0 * h);
                assert!(
                    (g[0] - fx).abs() < 1e-5 * (1.0 + fx.abs()),
                    "({i},{j}) d/dxi"
                );
                assert!(
                    (g[1] - fy).abs() < 1e-5 * (1.0 + fy.abs()),
                    "({i},{j}) d/deta"
                );
            }
            // The collapsed vertex: the gradient formula stays finite and continuous.
            let gv = dubiner_gradient(i, j, 0.0, 1.0);
            let gn = dubiner_gradient(i, j, 0.0, 1.0 - 1e-10);
            assert!((gv[0] - gn[0]).abs() < 1e-4 && (gv[1] - gn[1]).abs() < 1e-4);
        }
    }
}
