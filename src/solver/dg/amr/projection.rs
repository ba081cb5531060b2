//! L2 projection between a triangle and its four children (GK19 sections 4.4 and 4.5), as
//! precomputed weights so refining or coarsening an element is a small matrix product.
//!
//! A triangle (v0, v1, v2) splits at its edge midpoints m01, m12, m20 into the corner children
//! C0 = (v0, m01, m20), C1 = (m01, v1, m12), C2 = (m20, m12, v2) and the centre child
//! C3 = (m12, m20, m01), all counter-clockwise. In the parent's reference coordinates child c
//! is xi_p = A_c xi_c + b_c with A_c = I/2 for the corners and -I/2 for the centre, so
//! |det A_c| = 1/4. With the orthonormal basis (int_T phi_k phi_l = delta_kl) and
//!
//!   W^c_{km} = int_T phi_k(xi) phi_m(A_c xi + b_c) dxi,
//!
//! refinement is c^child_k = sum_m W^c_{km} c^parent_m (exact: a parent polynomial is one on
//! each child) and coarsening the L2 projection c^parent_m = 1/4 sum_c sum_k W^c_{km} c^c_k.
//! Since sum_c (W^c)^T W^c / 4 = I, refining and then coarsening returns every coefficient to
//! round-off, and both keep the element's integral (mode 0), so mass is conserved.

use crate::solver::dg::basis::{dubiner, mode_indices, num_basis};
use crate::solver::dg::euler::State;
use crate::solver::dg::quadrature::TriangleRule;

/// Parent reference coordinates of child `child`'s reference point `xi`.
pub fn child_to_parent(child: usize, xi: [f64; 2]) -> [f64; 2] {
    match child {
        0 => [0.5 * xi[0], 0.5 * xi[1]],
        1 => [0.5 + 0.5 * xi[0], 0.5 * xi[1]],
        2 => [0.5 * xi[0], 0.5 + 0.5 * xi[1]],
        _ => [0.5 - 0.5 * xi[0], 0.5 - 0.5 * xi[1]],
    }
}

/// Vertices of the four children of a triangle, in the order of [`child_to_parent`].
pub fn child_vertices(v: &[[f64; 2]; 3]) -> [[[f64; 2]; 3]; 4] {
    let mid = |a: [f64; 2], b: [f64; 2]| [0.5 * (a[0] + b[0]), 0.5 * (a[1] + b[1])];
    let (m01, m12, m20) = (mid(v[0], v[1]), mid(v[1], v[2]), mid(v[2], v[0]));
    [
        [v[0], m01, m20],
        [m01, v[1], m12],
        [m20, m12, v[2]],
        [m12, m20, m01],
    ]
}

/// The weights W^c of one polynomial order.
#[derive(Clone, Debug)]
pub struct Projection {
    /// Polynomial order p.
    pub p: usize,
    pub np: usize,
    /// `weights[(c * np + k) * np + m]` = W^c_{km}.
    pub weights: Vec<f64>,
}

impl Projection {
    pub fn new(p: usize) -> Projection {
        let modes = mode_indices(p);
        let np = num_basis(p);
        let rule = TriangleRule::exact_to(2 * p);
        let mut weights = vec![0.0; 4 * np * np];
        for c in 0..4 {
            for (x, w) in rule.points.iter().zip(&rule.weights) {
                let xp = child_to_parent(c, *x);
                for (k, &(ki, kj)) in modes.iter().enumerate() {
                    let pk = dubiner(ki, kj, x[0], x[1]);
                    for (m, &(mi, mj)) in modes.iter().enumerate() {
                        weights[(c * np + k) * np + m] += w * pk * dubiner(mi, mj, xp[0], xp[1]);
                    }
                }
            }
        }
        Projection { p, np, weights }
    }

    /// Coefficients of child `c` from the parent's (both `[mode][equation]`).
    pub fn refine(&self, parent: &[State], c: usize) -> Vec<State> {
        let np = self.np;
        (0..np)
            .map(|k| {
                let row = &self.weights[(c * np + k) * np..][..np];
                let mut u = [0.0; 4];
                for (w, pm) in row.iter().zip(parent) {
                    for eq in 0..4 {
                        u[eq] += w * pm[eq];
                    }
                }
                u
            })
            .collect()
    }

    /// Coefficients of the parent from its four children, in child order.
    pub fn coarsen(&self, children: [&[State]; 4]) -> Vec<State> {
        let np = self.np;
        let mut parent = vec![[0.0; 4]; np];
        for (c, child) in children.iter().enumerate() {
            for (k, ck) in child.iter().enumerate() {
                let row = &self.weights[(c * np + k) * np..][..np];
                for (pm, w) in parent.iter_mut().zip(row) {
                    for eq in 0..4 {
                        pm[eq] += 0.25 * w * ck[eq];
                    }
                }
            }
        }
        parent
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn eval(coef: &[State], p: usize, xi: [f64; 2]) -> State {
        let mut u = [0.0; 4];
        for (c, &(i, j)) in coef.iter().zip(&mode_indices(p)) {
            let phi = dubiner(i, j, xi[0], xi[1]);
            for eq in 0..4 {
                u[eq] += c[eq] * phi;
            }
        }
        u
    }

    fn sample(np: usize, seed: u64) -> Vec<State> {
        let mut s = seed;
        let mut next = || {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (s >> 11) as f64 / (1u64 << 53) as f64 - 0.5
        };
        (0..np).map(|_| [next(), next(), next(), next()]).collect()
    }

    #[test]
    fn children_reproduce_the_parent_polynomial() {
        for p in 0..=4 {
            let proj = Projection::new(p);
            let parent = sample(proj.np, p as u64 + 1);
            for c in 0..4 {
                let child = proj.refine(&parent, c);
                for xi in [[0.1, 0.2], [0.7, 0.1], [0.3, 0.6], [0.0, 0.0]] {
                    let (a, b) = (
                        eval(&child, p, xi),
                        eval(&parent, p, child_to_parent(c, xi)),
                    );
                    for eq in 0..4 {
                        assert!(
                            (a[eq] - b[eq]).abs() < 1e-12,
                            "p={p} child {c}: {a:?} {b:?}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn refine_then_coarsen_is_the_identity_and_keeps_the_mean() {
        for p in 0..=4 {
            let proj = Projection::new(p);
            let parent = sample(proj.np, 7 + p as u64);
            let kids: Vec<Vec<State>> = (0..4).map(|c| proj.refine(&parent, c)).collect();
            let back = proj.coarsen([&kids[0], &kids[1], &kids[2], &kids[3]]);
            for (a, b) in back.iter().zip(&parent) {
                for eq in 0..4 {
                    assert!((a[eq] - b[eq]).abs() < 1e-13, "p={p}");
                }
            }
            // Mode 0 is the mean: the children's means average to the parent's.
            let mean: f64 = kids.iter().map(|k| k[0][0]).sum::<f64>() / 4.0;
            assert!((mean - parent[0][0]).abs() < 1e-14);
        }
    }

    #[test]
    fn coarsening_is_the_l2_projection() {
        // Discontinuous children: the parent's value is the L2-best polynomial, so its mean is
        // the children's mean and its residual is orthogonal to each parent mode.
        let p = 2;
        let proj = Projection::new(p);
        let kids: Vec<Vec<State>> = (0..4).map(|c| sample(proj.np, 40 + c as u64)).collect();
        let parent = proj.coarsen([&kids[0], &kids[1], &kids[2], &kids[3]]);
        let rule = TriangleRule::exact_to(2 * p);
        for (m, &(mi, mj)) in mode_indices(p).iter().enumerate() {
            let mut r = 0.0;
            for (c, kid) in kids.iter().enumerate() {
                for (x, w) in rule.points.iter().zip(&rule.weights) {
                    let xp = child_to_parent(c, *x);
                    let diff = eval(kid, p, *x)[0] - eval(&parent, p, xp)[0];
                    r += 0.25 * w * diff * dubiner(mi, mj, xp[0], xp[1]);
                }
            }
            assert!(r.abs() < 1e-13, "mode {m}: residual {r}");
        }
    }

    #[test]
    fn child_vertices_match_the_reference_maps() {
        let v = [[0.3, -0.2], [2.0, 0.4], [0.7, 1.9]];
        let map = |xi: [f64; 2]| {
            [
                v[0][0] + xi[0] * (v[1][0] - v[0][0]) + xi[1] * (v[2][0] - v[0][0]),
                v[0][1] + xi[0] * (v[1][1] - v[0][1]) + xi[1] * (v[2][1] - v[0][1]),
            ]
        };
        for (c, cv) in child_vertices(&v).iter().enumerate() {
            for (r, &want) in [[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]].iter().zip(cv) {
                let got = map(child_to_parent(c, *r));
                assert!((got[0] - want[0]).abs() < 1e-14 && (got[1] - want[1]).abs() < 1e-14);
            }
            let det = (cv[1][0] - cv[0][0]) * (cv[2][1] - cv[0][1])
                - (cv[2][0] - cv[0][0]) * (cv[1][1] - cv[0][1]);
            assert!(det > 0.0, "child {c} is not counter-clockwise");
        }
    }
}
