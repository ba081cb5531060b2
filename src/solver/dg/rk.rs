//! Strong-stability-preserving Runge–Kutta schemes matched to the DG order, written as register
//! updates so the CPU reference and the GPU `dg_stage` kernel run the same table.
//!
//! Registers: R0 holds U^n (and U^{n+1} at the end), R1..R3 hold stage states. Stage s
//! evaluates L = rhs(R_src) at time t + c_src dt and writes
//! R_dst = sum_j a_j R_j + b dt L (and optionally a second combination R_dst2), reading every
//! register before writing, element by element.
//!
//! Every combination is convex (sum_j a_j = 1, [`scheme`]'s tables are written so), and it is
//! evaluated in difference form around a base register B (the first with a_B != 0):
//!
//!   R_dst = R_B + (sum_{j != B} a_j (R_j - R_B) + b dt L).
//!
//! The bracket is an increment of size O(dt L), so the coefficients' rounding only scales the
//! increment and a constant state stays constant whatever the precision. The GPU kernels
//! evaluate the same form on registers kept as f32 pairs (hi + lo, see `shaders/dg_stage.wgsl`):
//! with `sum_j a_j R_j` in plain f32 the f32-rounded coefficients sum to 1 +- 3e-8, which scaled
//! the whole solution every stage and drained ~1e-8 of the mass per step (issue 13), and
//! increments below half an ulp of U were lost every stage.
//!
//! * p = 0: forward Euler; p = 1: SSPRK(2,2) (Heun); p = 2: SSPRK(3,3) (Shu–Osher);
//! * p = 3, 4: SSPRK(5,4) of Spiteri and Ruuth (fourth order; for p = 4 the time error is
//!   O(dt^4), below the spatial error at the CFL numbers used).

/// One stage.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Stage {
    /// Register the right-hand side is evaluated on.
    pub src: usize,
    /// Time of that register's state, as a fraction of dt past t^n.
    pub c: f64,
    pub a: [f64; 4],
    pub b: f64,
    pub dst: usize,
    /// A second combination from the same reads (a2, b2, dst2).
    pub second: Option<([f64; 4], f64, usize)>,
}

/// Number of registers the schemes use (R0..R3).
pub const REGISTERS: usize = 4;

/// The SSP scheme for order p.
pub fn scheme(p: usize) -> Vec<Stage> {
    let st = |src, c, a, b, dst| Stage {
        src,
        c,
        a,
        b,
        dst,
        second: None,
    };
    match p {
        0 => vec![st(0, 0.0, [1.0, 0.0, 0.0, 0.0], 1.0, 0)],
        1 => vec![
            st(0, 0.0, [1.0, 0.0, 0.0, 0.0], 1.0, 1),
            st(1, 1.0, [0.5, 0.5, 0.0, 0.0], 0.5, 0),
        ],
        2 => vec![
            st(0, 0.0, [1.0, 0.0, 0.0, 0.0], 1.0, 1),
            st(1, 1.0, [0.75, 0.25, 0.0, 0.0], 0.25, 1),
            st(1, 0.5, [1.0 / 3.0, 2.0 / 3.0, 0.0, 0.0], 2.0 / 3.0, 0),
        ],
        _ => {
            // Spiteri–Ruuth SSPRK(5,4) in Shu–Osher form.
            let b10 = 0.391752226571890;
            let (a20, a21, b21) = (0.444370493651235, 0.555629506348765, 0.368410593050371);
            let (a30, a32, b32) = (0.620101851488403, 0.379898148511597, 0.251891774271694);
            let (a40, a43, b43) = (0.178079954393132, 0.821920045606868, 0.544974750228521);
            let (a52, a53, b53) = (0.517231671970585, 0.096059710526147, 0.063692468666290);
            let (a54, b54) = (0.386708617503269, 0.226007483236906);
            let c1 = b10;
            let c2 = a21 * c1 + b21;
            let c3 = a32 * c2 + b32;
            let c4 = a43 * c3 + b43;
            // U^{n+1} = a52 U2 + a53 U3 + b53 dt L(U3) + a54 U4 + b54 dt L(U4): stage 4 keeps
            // the first part, divided by w = a52 + a53 so that it is itself a convex
            // combination, in R0, and stage 5 adds w R0 + a54 R1 (w + a54 = 1).
            let w = a52 + a53;
            let mut s4 = st(3, c3, [a40, 0.0, 0.0, a43], b43, 1);
            s4.second = Some(([0.0, 0.0, a52 / w, a53 / w], b53 / w, 0));
            vec![
                st(0, 0.0, [1.0, 0.0, 0.0, 0.0], b10, 1),
                st(1, c1, [a20, a21, 0.0, 0.0], b21, 2),
                st(2, c2, [a30, 0.0, a32, 0.0], b32, 3),
                s4,
                st(1, c4, [w, a54, 0.0, 0.0], b54, 0),
            ]
        }
    }
}

/// The base register of a combination `a`: the first with a nonzero weight (the kernels pick
/// it the same way).
pub fn base_register(a: &[f64; 4]) -> usize {
    a.iter().position(|&v| v != 0.0).unwrap_or(0)
}

/// A right-hand side `rhs(state, t, out)`.
pub type RhsFn<'a> = dyn FnMut(&[f64], f64, &mut [f64]) + 'a;

/// Run one step of `scheme` on a system of `n` unknowns with `rhs(state, t, out)`, registers
/// in `regs` (REGISTERS * n, R0 = U^n on entry and U^{n+1} on exit), and an optional
/// `post(register)` applied to every stage's first output (the limiter).
pub fn step(
    stages: &[Stage],
    regs: &mut [f64],
    n: usize,
    t: f64,
    dt: f64,
    rhs: &mut RhsFn,
    post: &mut dyn FnMut(&mut [f64]),
) {
    let mut l = vec![0.0; n];
    for s in stages {
        rhs(&regs[s.src * n..(s.src + 1) * n], t + s.c * dt, &mut l);
        let combine = |regs: &[f64], a: &[f64; 4], b: f64, i: usize| -> f64 {
            let base = base_register(a);
            let rb = regs[base * n + i];
            let mut increment = b * dt * l[i];
            for (j, aj) in a.iter().enumerate() {
                if *aj != 0.0 && j != base {
                    increment += aj * (regs[j * n + i] - rb);
                }
            }
            rb + increment
        };
        let first: Vec<f64> = (0..n).map(|i| combine(regs, &s.a, s.b, i)).collect();
        if let Some((a2, b2, d2)) = s.second {
            let second: Vec<f64> = (0..n).map(|i| combine(regs, &a2, b2, i)).collect();
            regs[d2 * n..(d2 + 1) * n].copy_from_slice(&second);
        }
        regs[s.dst * n..(s.dst + 1) * n].copy_from_slice(&first);
        post(&mut regs[s.dst * n..(s.dst + 1) * n]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The difference form needs convex combinations: sum_j a_j = 1 for every output.
    #[test]
    fn every_combination_is_convex() {
        for p in 0..=4 {
            for s in scheme(p) {
                let mut outputs = vec![s.a];
                outputs.extend(s.second.map(|(a, _, _)| a));
                for a in outputs {
                    let sum: f64 = a.iter().sum();
                    assert!((sum - 1.0).abs() < 1e-14, "p={p}: {a:?} sums to {sum}");
                }
            }
        }
    }

    /// Empirical order on y' = -y^2 + sin(t) (nonlinear, non-autonomous).
    #[test]
    fn schemes_reach_their_order() {
        let solve = |stages: &[Stage], nsteps: usize| -> f64 {
            let dt = 1.0 / nsteps as f64;
            let mut regs = vec![0.0; REGISTERS];
            regs[0] = 1.0;
            for k in 0..nsteps {
                step(
                    stages,
                    &mut regs,
                    1,
                    k as f64 * dt,
                    dt,
                    &mut |y, t, out| out[0] = -y[0] * y[0] + t.sin(),
                    &mut |_| {},
                );
            }
            regs[0]
        };
        let reference = solve(&scheme(3), 4000);
        for (p, order) in [(0usize, 1.0), (1, 2.0), (2, 3.0), (3, 4.0)] {
            let run = |nsteps: usize| solve(&scheme(p), nsteps);
            let (e1, e2) = ((run(20) - reference).abs(), (run(40) - reference).abs());
            let rate = (e1 / e2).log2();
            assert!((rate - order).abs() < 0.25, "p={p}: rate {rate}");
        }
    }
}
