//! Diagnostics: per-layer mass (compensated f64 sums, spec §11: a plain sum over 10⁶ cells
//! would hide the conservation test), derived fields for output and their extrema.
//!
//! Fields: h1, h2; free-surface elevation η₁ = h1 + h2 − H; interface elevation η₂ = h2 − H;
//! layer speeds |q_k|/h*_k with the desingularised depth of spec §10; H.

use super::flux::desingularised_depth;

/// Neumaier-compensated sum.
pub fn compensated_sum(values: impl Iterator<Item = f64>) -> f64 {
    let (mut s, mut c) = (0.0f64, 0.0f64);
    for v in values {
        let t = s + v;
        if s.abs() >= v.abs() {
            c += (s - t) + v;
        } else {
            c += (v - t) + s;
        }
        s = t;
    }
    s + c
}

/// Mass (volume) of each layer, M_k = Σ_i |V_i| h_k,i.
pub fn layer_masses(areas: &[f64], state: &[[f64; 6]]) -> [f64; 2] {
    let m = |k: usize| compensated_sum(areas.iter().zip(state).map(|(a, w)| a * w[k]));
    [m(0), m(3)]
}

/// A field value from a cell's state, its depth H and the dry tolerance κ.
type FieldFn = fn(&[f64; 6], f64, f64) -> f64;

fn speed(w: &[f64; 6], k: usize, kappa: f64) -> f64 {
    w[3 * k + 1].hypot(w[3 * k + 2]) / desingularised_depth(w[3 * k], kappa)
}

/// A per-cell output field by name (see [`super::case::FIELD_NAMES`]); None for unknown names.
pub fn field(name: &str, state: &[[f64; 6]], depth: &[f64], dry_tol: f64) -> Option<Vec<f64>> {
    let f: FieldFn = match name {
        "h1" => |w, _, _| w[0],
        "h2" => |w, _, _| w[3],
        "eta1" => |w, h, _| w[0] + w[3] - h,
        "eta2" => |w, h, _| w[3] - h,
        "speed1" => |w, _, k| speed(w, 0, k),
        "speed2" => |w, _, k| speed(w, 1, k),
        "H" => |_, h, _| h,
        _ => return None,
    };
    Some(
        state
            .iter()
            .zip(depth)
            .map(|(w, &h)| f(w, h, dry_tol))
            .collect(),
    )
}

/// (description, colorbar label) of a field name.
pub fn field_title(name: &str) -> (&'static str, &'static str) {
    match name {
        "h1" => ("upper layer h1", "h1 (m)"),
        "h2" => ("lower layer h2", "h2 (m)"),
        "eta1" => ("free surface h1+h2-H", "eta1 (m)"),
        "eta2" => ("interface h2-H", "eta2 (m)"),
        "speed1" => ("upper layer speed", "|u1| (m/s)"),
        "speed2" => ("lower layer speed", "|u2| (m/s)"),
        "H" => ("depth H", "H (m)"),
        _ => ("field", ""),
    }
}

/// (min, max) of a slice, ignoring NaN; (NaN, NaN) when empty.
pub fn min_max(v: &[f64]) -> (f64, f64) {
    let (lo, hi) = v
        .iter()
        .filter(|x| !x.is_nan())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &x| {
            (a.min(x), b.max(x))
        });
    if lo > hi {
        (f64::NAN, f64::NAN)
    } else {
        (lo, hi)
    }
}

/// Largest layer speed over all cells (m s⁻¹).
pub fn max_speed(state: &[[f64; 6]], dry_tol: f64) -> f64 {
    state
        .iter()
        .flat_map(|w| {
            [0, 1]
                .map(|k| w[3 * k + 1].hypot(w[3 * k + 2]) / desingularised_depth(w[3 * k], dry_tol))
        })
        .fold(0.0, f64::max)
}
