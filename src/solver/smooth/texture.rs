//! The metric on a regular texture covering the mesh bounding box, and the CPU bilinear
//! sampler every kernel is judged against.
//!
//! Texel `(i, j)` of an `S x S` texture holds the metric around the point
//! `lo + ((i + 1/2) / S, (j + 1/2) / S) * extent`, averaged over `k x k` sub-samples of the
//! texel (super-sampling, so features narrower than a texel are blurred rather than aliased).
//! Values are divided by one positive `scale` (the largest diagonal entry) so they fit half
//! floats too; the smoothing equations do not change when `M` is scaled.
//!
//! Sampling at `x`, as a GPU linear filter with clamp-to-edge addressing does: with
//! `t = (x - lo) / extent * S - 1/2`, `i0 = floor(t)`, `alpha = t - i0`,
//!
//! ```text
//! M(x) = (1-a)(1-b) T[i0, j0] + a (1-b) T[i0+1, j0] + (1-a) b T[i0, j0+1] + a b T[i0+1, j0+1]
//! ```
//!
//! with indices clamped to `0..S-1`. NVIDIA's texture units compute `a` and `b` in fixed point
//! with 8 fractional bits; [`WeightMode::Quantized8`] rounds them to multiples of 1/256 to
//! predict what that does.

use super::metric::{box_frame, AnalyticMetric, MetricSpec, Sym2, VertexMetric};
use crate::error::{Error, Result};
use crate::mesh::Mesh;
pub use crate::runtime::half::{f16_bits_to_f32, f32_to_f16_bits};

/// Largest accepted texture side: wgpu's default `max_texture_dimension_2d` (8192 texels,
/// 1 GiB of rgba32float).
pub const MAX_TEXTURE_SIZE: u32 = 8192;
/// Largest accepted super-sampling factor per axis.
pub const MAX_SUPERSAMPLE: u32 = 16;

/// The metric field on an `size x size` texture (see the module doc).
#[derive(Clone, Debug, PartialEq)]
pub struct MetricTexture {
    pub size: u32,
    /// Lower corner of the covered box.
    pub lo: [f64; 2],
    /// Width and height of the covered box.
    pub extent: [f64; 2],
    /// `[m11, m12, m22, 0] / scale`, row `j` (y) after row `j - 1`: texel `j * size + i`.
    pub texels: Vec<[f32; 4]>,
    /// The factor the texels were divided by.
    pub scale: f64,
}

/// Error unless `1 <= supersample <= 16` and `2 <= size <= 8192`.
pub fn check_size(size: u32, supersample: u32) -> Result<()> {
    if !(2..=MAX_TEXTURE_SIZE).contains(&size) {
        return Err(Error::Invalid(format!(
            "texture size {size} is out of range: it must be between 2 and {MAX_TEXTURE_SIZE} \
             texels per side"
        )));
    }
    if !(1..=MAX_SUPERSAMPLE).contains(&supersample) {
        return Err(Error::Invalid(format!(
            "super-sampling factor {supersample} is out of range: it must be between 1 and \
             {MAX_SUPERSAMPLE}"
        )));
    }
    Ok(())
}

fn mesh_box(mesh: &Mesh) -> Result<([f64; 2], [f64; 2])> {
    let (lo, hi) = mesh.bounding_box();
    let ext = [hi[0] - lo[0], hi[1] - lo[1]];
    if !(ext[0] > 0.0 && ext[1] > 0.0 && ext[0].is_finite() && ext[1].is_finite()) {
        return Err(Error::Invalid(format!(
            "the mesh bounding box [{}, {}] x [{}, {}] has no area",
            lo[0], hi[0], lo[1], hi[1]
        )));
    }
    Ok(([lo[0], lo[1]], ext))
}

impl MetricTexture {
    /// Resample `spec` onto a `size x size` texture over the bounding box of `mesh` with
    /// `supersample^2` sub-samples per texel.
    pub fn from_spec(
        spec: &MetricSpec,
        mesh: &Mesh,
        size: u32,
        supersample: u32,
    ) -> Result<MetricTexture> {
        match spec {
            MetricSpec::Analytic(a) => Self::from_analytic(a, mesh, size, supersample),
            MetricSpec::Vertex { values, .. } => {
                Self::from_vertices(values, mesh, size, supersample)
            }
        }
    }

    /// Super-sample an analytic metric: each texel is the mean of `k x k` point values.
    pub fn from_analytic(
        metric: &AnalyticMetric,
        mesh: &Mesh,
        size: u32,
        supersample: u32,
    ) -> Result<MetricTexture> {
        check_size(size, supersample)?;
        let (lo, ext) = mesh_box(mesh)?;
        let (flo, side) = box_frame(mesh);
        let (s, k) = (size as usize, supersample as usize);
        let n = (s * k) as f64;
        let mut values = vec![[0.0; 3]; s * s];
        for j in 0..s {
            for i in 0..s {
                let mut acc = [0.0; 3];
                for b in 0..k {
                    for a in 0..k {
                        let x = lo[0] + ((i * k + a) as f64 + 0.5) / n * ext[0];
                        let y = lo[1] + ((j * k + b) as f64 + 0.5) / n * ext[1];
                        let m = metric.eval([x, y], flo, side);
                        for c in 0..3 {
                            acc[c] += m[c];
                        }
                    }
                }
                let kk = (k * k) as f64;
                values[j * s + i] = [acc[0] / kk, acc[1] / kk, acc[2] / kk];
            }
        }
        Self::from_values(size, lo, ext, &values)
    }

    /// Resample a per-vertex metric, interpolated linearly inside each triangle: the
    /// sub-sample points are rasterised triangle by triangle and averaged per texel; texels
    /// the mesh does not cover (outside a disk, say) copy their nearest covered neighbour
    /// (breadth-first), so bilinear reads near the boundary stay meaningful.
    pub fn from_vertices(
        metric: &VertexMetric,
        mesh: &Mesh,
        size: u32,
        supersample: u32,
    ) -> Result<MetricTexture> {
        check_size(size, supersample)?;
        if metric.values.len() != mesh.num_points() {
            return Err(Error::Invalid(format!(
                "the vertex metric has {} values but the mesh has {} vertices",
                metric.values.len(),
                mesh.num_points()
            )));
        }
        let tris = mesh.triangles().ok_or_else(|| {
            Error::Invalid("resampling a vertex metric needs a triangle mesh".into())
        })?;
        let (lo, ext) = mesh_box(mesh)?;
        let (s, k) = (size as usize, supersample as usize);
        let n = s * k;
        let nf = n as f64;
        let mut sums = vec![[0.0f64; 3]; s * s];
        let mut counts = vec![0u32; s * s];
        let grid = |x: f64, d: usize| (x - lo[d]) / ext[d] * nf - 0.5;
        for t in &tris {
            let p: Vec<[f64; 3]> = t.iter().map(|&v| mesh.points[v as usize]).collect();
            let m: Vec<Sym2> = t.iter().map(|&v| metric.values[v as usize]).collect();
            let area2 = (p[1][0] - p[0][0]) * (p[2][1] - p[0][1])
                - (p[2][0] - p[0][0]) * (p[1][1] - p[0][1]);
            if area2 == 0.0 {
                continue;
            }
            let range = |d: usize| {
                let lo_c = p.iter().map(|q| q[d]).fold(f64::INFINITY, f64::min);
                let hi_c = p.iter().map(|q| q[d]).fold(f64::NEG_INFINITY, f64::max);
                let a = grid(lo_c, d).ceil().max(0.0) as usize;
                let b = grid(hi_c, d).floor().min(nf - 1.0);
                (a, b)
            };
            let ((a0, a1), (b0, b1)) = (range(0), range(1));
            if a1 < 0.0 || b1 < 0.0 {
                continue;
            }
            for b in b0..=(b1 as usize) {
                let y = lo[1] + (b as f64 + 0.5) / nf * ext[1];
                for a in a0..=(a1 as usize) {
                    let x = lo[0] + (a as f64 + 0.5) / nf * ext[0];
                    let bary = |u: usize, v: usize| {
                        ((p[u][0] - x) * (p[v][1] - y) - (p[v][0] - x) * (p[u][1] - y)) / area2
                    };
                    let l = [bary(1, 2), bary(2, 0), bary(0, 1)];
                    if l.iter().any(|&c| c < -1e-12) {
                        continue;
                    }
                    let at = (b / k) * s + a / k;
                    for c in 0..3 {
                        sums[at][c] += l[0] * m[0][c] + l[1] * m[1][c] + l[2] * m[2][c];
                    }
                    counts[at] += 1;
                }
            }
        }
        let mut values: Vec<Option<Sym2>> = sums
            .iter()
            .zip(&counts)
            .map(|(sm, &c)| (c > 0).then(|| sm.map(|v| v / c as f64)))
            .collect();
        fill_empty(&mut values, s)?;
        let values: Vec<Sym2> = values.into_iter().flatten().collect();
        Self::from_values(size, lo, ext, &values)
    }

    /// A texture from texel values (row-major, `size^2` of them), normalised by the largest
    /// diagonal entry.
    pub fn from_values(
        size: u32,
        lo: [f64; 2],
        extent: [f64; 2],
        values: &[Sym2],
    ) -> Result<MetricTexture> {
        let s = size as usize;
        if values.len() != s * s {
            return Err(Error::Invalid(format!(
                "{} texel values for a {size} x {size} texture",
                values.len()
            )));
        }
        if let Some((i, m)) = values
            .iter()
            .enumerate()
            .find(|(_, m)| !super::metric::is_spd(**m))
        {
            return Err(Error::Invalid(format!(
                "metric at texel ({}, {}) is not finite and positive definite: {m:?}",
                i % s,
                i / s
            )));
        }
        let scale = values.iter().map(|m| m[0].max(m[2])).fold(0.0, f64::max);
        let texels = values
            .iter()
            .map(|m| {
                [
                    (m[0] / scale) as f32,
                    (m[1] / scale) as f32,
                    (m[2] / scale) as f32,
                    0.0,
                ]
            })
            .collect();
        Ok(MetricTexture {
            size,
            lo,
            extent,
            texels,
            scale,
        })
    }
}

/// Give every empty texel the value of its nearest filled one (4-neighbour breadth-first).
fn fill_empty(values: &mut [Option<Sym2>], s: usize) -> Result<()> {
    let mut queue: std::collections::VecDeque<usize> =
        (0..values.len()).filter(|&i| values[i].is_some()).collect();
    if queue.is_empty() {
        return Err(Error::Invalid(
            "the vertex metric covers no texel (empty mesh?)".into(),
        ));
    }
    while let Some(i) = queue.pop_front() {
        let (x, y) = (i % s, i / s);
        let v = values[i];
        let mut visit = |j: usize| {
            if values[j].is_none() {
                values[j] = v;
                queue.push_back(j);
            }
        };
        if x > 0 {
            visit(i - 1);
        }
        if x + 1 < s {
            visit(i + 1);
        }
        if y > 0 {
            visit(i - s);
        }
        if y + 1 < s {
            visit(i + s);
        }
    }
    Ok(())
}

/// How the CPU sampler computes the bilinear weights.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub enum WeightMode {
    /// Exact (f64) fractions, as the shader and buffer paths compute them.
    Exact,
    /// Fractions rounded to multiples of 1/256, like NVIDIA's texture filter.
    Quantized8,
    /// Fractions rounded down to multiples of 1/256: a filter that truncates its fixed-point
    /// coordinate instead of rounding it (NVIDIA documents 8 fractional bits for the weights,
    /// not how they are rounded). Used by `parity` to tell the two apart.
    Truncated8,
}

pub use crate::runtime::TexelPrecision;

/// Bilinear sampling of a [`MetricTexture`] in f64 (see the module doc).
pub struct TextureSampler {
    size: usize,
    lo: [f64; 2],
    inv_extent: [f64; 2],
    values: Vec<Sym2>,
    weights: WeightMode,
}

impl TextureSampler {
    pub fn new(tex: &MetricTexture, weights: WeightMode, precision: TexelPrecision) -> Self {
        let values = tex
            .texels
            .iter()
            .map(|t| {
                let t = match precision {
                    TexelPrecision::F32 => *t,
                    TexelPrecision::F16 => t.map(|v| f16_bits_to_f32(f32_to_f16_bits(v))),
                };
                [t[0] as f64, t[1] as f64, t[2] as f64]
            })
            .collect();
        TextureSampler {
            size: tex.size as usize,
            lo: tex.lo,
            inv_extent: [1.0 / tex.extent[0], 1.0 / tex.extent[1]],
            values,
            weights,
        }
    }

    /// The (normalised) metric at `x`.
    pub fn sample(&self, x: [f64; 2]) -> Sym2 {
        let s = self.size as f64;
        let axis = |d: usize| {
            let t = (x[d] - self.lo[d]) * self.inv_extent[d] * s - 0.5;
            let f = t.floor();
            let mut a = t - f;
            match self.weights {
                WeightMode::Exact => {}
                WeightMode::Quantized8 => a = (a * 256.0).round() / 256.0,
                WeightMode::Truncated8 => a = (a * 256.0).floor() / 256.0,
            }
            let i = f as i64;
            let top = self.size as i64 - 1;
            (i.clamp(0, top) as usize, (i + 1).clamp(0, top) as usize, a)
        };
        let (i0, i1, a) = axis(0);
        let (j0, j1, b) = axis(1);
        let t = |i: usize, j: usize| self.values[j * self.size + i];
        let (t00, t10, t01, t11) = (t(i0, j0), t(i1, j0), t(i0, j1), t(i1, j1));
        let mut m = [0.0; 3];
        for c in 0..3 {
            m[c] = (1.0 - a) * (1.0 - b) * t00[c]
                + a * (1.0 - b) * t10[c]
                + (1.0 - a) * b * t01[c]
                + a * b * t11[c];
        }
        m
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mesh::generate;

    #[test]
    fn half_floats_round_trip() {
        for v in [0.0f32, 1.0, -2.5, 0.1, 65504.0, 6.1e-5, 3.0e-7, 1e-3] {
            let r = f16_bits_to_f32(f32_to_f16_bits(v));
            assert!((r - v).abs() <= v.abs() * 1e-3 + 6e-8, "{v} -> {r}");
        }
        assert_eq!(f32_to_f16_bits(1.0), 0x3c00);
        assert_eq!(f32_to_f16_bits(1e6), 0x7c00);
    }

    #[test]
    fn size_limits_are_errors() {
        let z = check_size(0, 1)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(z.contains("texture size 0 is out of range"), "{z}");
        assert!(check_size(100_000, 1).is_err());
        assert!(check_size(64, 0).is_err());
        assert!(check_size(64, 2).is_ok());
    }

    #[test]
    fn bilinear_reproduces_linear_fields_and_vertex_resampling_matches() -> Result<()> {
        let mesh = generate::builtin("rect:400")?;
        let s = 16u32;
        // A field linear in x and y is reproduced exactly away from the clamped border.
        let vals: Vec<Sym2> = (0..s * s)
            .map(|k| {
                let (i, j) = ((k % s) as f64, (k / s) as f64);
                [2.0 + i, 0.1 * j, 3.0 + j]
            })
            .collect();
        let tex = MetricTexture::from_values(s, [0.0, 0.0], [1.0, 1.0], &vals)?;
        let smp = TextureSampler::new(&tex, WeightMode::Exact, TexelPrecision::F32);
        let x = [0.37, 0.61];
        let m = smp.sample(x);
        let (ti, tj) = (x[0] * 16.0 - 0.5, x[1] * 16.0 - 0.5);
        let want = [
            (2.0 + ti) / tex.scale,
            0.1 * tj / tex.scale,
            (3.0 + tj) / tex.scale,
        ];
        for c in 0..3 {
            assert!((m[c] - want[c]).abs() < 1e-6, "{m:?} vs {want:?}");
        }
        let q = TextureSampler::new(&tex, WeightMode::Quantized8, TexelPrecision::F32);
        let mq = q.sample(x);
        assert!((mq[0] - m[0]).abs() <= 0.5 / 256.0 / tex.scale + 1e-6);
        // Truncated weights move each axis by less than 1/256 of a texel, towards lower indices.
        let tr = TextureSampler::new(&tex, WeightMode::Truncated8, TexelPrecision::F32);
        let mt = tr.sample(x);
        assert!(mt[0] <= m[0] + 1e-12 && m[0] - mt[0] < 1.0 / 256.0 / tex.scale + 1e-6);
        // A constant metric given at the vertices resamples to the same constant.
        let c = [4.0, 1.0, 2.0];
        let vm = VertexMetric {
            values: vec![c; mesh.num_points()],
        };
        let t2 = MetricTexture::from_vertices(&vm, &mesh, 8, 2)?;
        for t in &t2.texels {
            assert!((t[0] as f64 * t2.scale - 4.0).abs() < 1e-5);
            assert!((t[1] as f64 * t2.scale - 1.0).abs() < 1e-5);
        }
        Ok(())
    }
}
