//! Colormaps for scalar fields and a categorical palette for class labels (colorings).
//!
//! A scalar `v` is first normalized with the plot range, `t = (v - lo) / (hi - lo)` clamped to
//! [0, 1], then looked up. The sequential maps (viridis, magma, inferno) are perceptually
//! uniform: equal steps in `t` are equal perceived steps, so gradients are not invented by the
//! map. Use the diverging cool-warm map for signed fields centred on zero, grayscale for print.

use crate::error::{Error, Result};
use crate::output::tables::{COOLWARM_POINTS, INFERNO, MAGMA, VIRIDIS};

/// A continuous colormap. `Viridis` is the default.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Colormap {
    /// matplotlib's viridis: dark blue (#440154) to yellow (#fde725).
    #[default]
    Viridis,
    /// matplotlib's magma: black (#000004) to pale yellow (#fcfdbf).
    Magma,
    /// matplotlib's inferno: black (#000004) to pale yellow (#fcffa4).
    Inferno,
    /// Moreland's smooth cool-warm diverging map: blue, light gray at `t = 0.5`, red.
    CoolWarm,
    /// Linear gray ramp, black to white: `r = g = b = round(255 t)`.
    Grayscale,
}

/// Names accepted by [`Colormap::from_name`] (canonical name first for each map).
const NAMES: &[(&str, Colormap)] = &[
    ("viridis", Colormap::Viridis),
    ("magma", Colormap::Magma),
    ("inferno", Colormap::Inferno),
    ("coolwarm", Colormap::CoolWarm),
    ("cool-warm", Colormap::CoolWarm),
    ("grayscale", Colormap::Grayscale),
    ("gray", Colormap::Grayscale),
    ("grey", Colormap::Grayscale),
    ("greys", Colormap::Grayscale),
];

impl Colormap {
    /// Every colormap, in the order listed by [`Colormap::names`].
    pub const ALL: [Colormap; 5] = [
        Colormap::Viridis,
        Colormap::Magma,
        Colormap::Inferno,
        Colormap::CoolWarm,
        Colormap::Grayscale,
    ];

    /// Canonical lowercase name.
    pub fn name(self) -> &'static str {
        match self {
            Colormap::Viridis => "viridis",
            Colormap::Magma => "magma",
            Colormap::Inferno => "inferno",
            Colormap::CoolWarm => "coolwarm",
            Colormap::Grayscale => "grayscale",
        }
    }

    /// Canonical names of all colormaps.
    pub fn names() -> Vec<&'static str> {
        Self::ALL.iter().map(|c| c.name()).collect()
    }

    /// Parse a colormap name (case-insensitive; `gray`/`grey`/`greys` and `cool-warm` are
    /// accepted aliases). The error lists the valid names.
    pub fn from_name(name: &str) -> Result<Colormap> {
        let key = name.trim().to_ascii_lowercase();
        NAMES
            .iter()
            .find(|(n, _)| *n == key)
            .map(|(_, c)| *c)
            .ok_or_else(|| {
                Error::Invalid(format!(
                    "unknown colormap '{name}'; valid names: {}",
                    Self::names().join(", ")
                ))
            })
    }

    /// Color at normalized position `t` (clamped to [0, 1]; NaN maps to `t = 0`).
    ///
    /// Table maps use the nearest of their 256 entries, `i = round(255 t)`; cool-warm
    /// interpolates linearly between its 32 control points in sRGB.
    pub fn sample(self, t: f64) -> [u8; 3] {
        let t = if t.is_nan() { 0.0 } else { t.clamp(0.0, 1.0) };
        let nearest = |table: &[[u8; 3]; 256]| table[(t * 255.0).round() as usize];
        match self {
            Colormap::Viridis => nearest(&VIRIDIS),
            Colormap::Magma => nearest(&MAGMA),
            Colormap::Inferno => nearest(&INFERNO),
            Colormap::Grayscale => {
                let g = (t * 255.0).round() as u8;
                [g, g, g]
            }
            Colormap::CoolWarm => {
                let x = t * (COOLWARM_POINTS.len() - 1) as f64;
                let k = (x.floor() as usize).min(COOLWARM_POINTS.len() - 2);
                let f = (x - k as f64) as f32;
                let (a, b) = (COOLWARM_POINTS[k], COOLWARM_POINTS[k + 1]);
                let mix = |i: usize| {
                    ((a[i] + (b[i] - a[i]) * f) * 255.0)
                        .round()
                        .clamp(0.0, 255.0) as u8
                };
                [mix(0), mix(1), mix(2)]
            }
        }
    }

    /// The map sampled at `t = i / 255` for `i = 0..256`, as opaque RGBA: the per-pixel
    /// lookup table of the rasterizer.
    pub fn lut(self) -> [[u8; 4]; 256] {
        let mut lut = [[0u8; 4]; 256];
        for (i, e) in lut.iter_mut().enumerate() {
            let [r, g, b] = self.sample(i as f64 / 255.0);
            *e = [r, g, b, 255];
        }
        lut
    }
}

impl std::str::FromStr for Colormap {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        Colormap::from_name(s)
    }
}

impl std::fmt::Display for Colormap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Categorical palette for class labels (element, edge or vertex colorings, regions).
///
/// The first ten are d3's `category10` (Tableau's classic palette): saturated and mutually
/// distinct, so the 3 or 4 colors of a typical edge coloring stand apart even on a light gray
/// mesh. The last eight are from Kelly's 22 colors of maximum contrast (1965), chosen to stay
/// clear of the first ten. Class `k` uses entry `k mod 18`.
pub const CATEGORICAL: [[u8; 3]; 18] = [
    [0x1f, 0x77, 0xb4], // blue
    [0xff, 0x7f, 0x0e], // orange
    [0x2c, 0xa0, 0x2c], // green
    [0xd6, 0x27, 0x28], // red
    [0x94, 0x67, 0xbd], // purple
    [0x8c, 0x56, 0x4b], // brown
    [0xe3, 0x77, 0xc2], // pink
    [0x7f, 0x7f, 0x7f], // gray
    [0xbc, 0xbd, 0x22], // olive
    [0x17, 0xbe, 0xcf], // cyan
    [0xf3, 0xc3, 0x00], // Kelly vivid yellow
    [0xb3, 0x44, 0x6c], // Kelly strong purplish red
    [0x00, 0x88, 0x56], // Kelly vivid green
    [0x60, 0x4e, 0x97], // Kelly strong violet
    [0x88, 0x2d, 0x17], // Kelly strong reddish brown
    [0x8d, 0xb6, 0x00], // Kelly vivid yellowish green
    [0xa1, 0xca, 0xf1], // Kelly very light blue
    [0xf9, 0x93, 0x79], // Kelly strong yellowish pink
];

/// Palette color of class `k` (wraps around after [`CATEGORICAL`]`.len()` classes).
pub fn categorical(k: u32) -> [u8; 3] {
    CATEGORICAL[k as usize % CATEGORICAL.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(c: [u8; 3]) -> String {
        format!("#{:02x}{:02x}{:02x}", c[0], c[1], c[2])
    }

    #[test]
    fn published_endpoints() {
        assert_eq!(hex(Colormap::Viridis.sample(0.0)), "#440154");
        assert_eq!(hex(Colormap::Viridis.sample(1.0)), "#fde725");
        assert_eq!(hex(Colormap::Viridis.sample(0.5)), "#21918c");
        assert_eq!(hex(Colormap::Magma.sample(0.0)), "#000004");
        assert_eq!(hex(Colormap::Magma.sample(1.0)), "#fcfdbf");
        assert_eq!(hex(Colormap::Inferno.sample(1.0)), "#fcffa4");
        assert_eq!(Colormap::Grayscale.sample(1.0), [255, 255, 255]);
        assert_eq!(Colormap::Grayscale.sample(-3.0), [0, 0, 0]);
    }

    #[test]
    fn coolwarm_is_diverging() {
        let lo = Colormap::CoolWarm.sample(0.0);
        let mid = Colormap::CoolWarm.sample(0.5);
        let hi = Colormap::CoolWarm.sample(1.0);
        assert!(lo[2] > lo[0], "low end is blue: {lo:?}");
        assert!(hi[0] > hi[2], "high end is red: {hi:?}");
        assert!(mid.iter().all(|&c| c > 200), "middle is light: {mid:?}");
        assert_eq!(lo, [85, 72, 193]);
    }

    #[test]
    fn viridis_lightness_increases() {
        let lum = |c: [u8; 3]| 0.2126 * c[0] as f64 + 0.7152 * c[1] as f64 + 0.0722 * c[2] as f64;
        let lut = Colormap::Viridis.lut();
        for i in 1..256 {
            let (a, b) = (lut[i - 1], lut[i]);
            assert!(
                lum([b[0], b[1], b[2]]) >= lum([a[0], a[1], a[2]]) - 0.5,
                "entry {i}"
            );
        }
    }

    #[test]
    fn names_round_trip_and_error_lists_names() {
        for c in Colormap::ALL {
            assert_eq!(Colormap::from_name(c.name()).ok(), Some(c));
        }
        assert_eq!(
            Colormap::from_name(" Gray ").ok(),
            Some(Colormap::Grayscale)
        );
        let msg = match Colormap::from_name("jet") {
            Err(e) => e.to_string(),
            Ok(c) => format!("unexpectedly parsed as {c}"),
        };
        assert!(
            msg.contains("'jet'") && msg.contains("viridis") && msg.contains("coolwarm"),
            "{msg}"
        );
    }

    #[test]
    fn palette_is_distinct() {
        assert!(CATEGORICAL.len() >= 12);
        for (i, &a) in CATEGORICAL.iter().enumerate() {
            for (j, &b) in CATEGORICAL[..i].iter().enumerate() {
                let d2: i32 = (0..3).map(|k| (a[k] as i32 - b[k] as i32).pow(2)).sum();
                assert!(d2 > 40 * 40, "palette entries {j} and {i} too close");
            }
        }
        assert_eq!(categorical(18), categorical(0));
    }
}
