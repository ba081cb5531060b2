//! Per-pixel PNG rendering of a field defined on each triangle by a function of its barycentric
//! coordinates (a DG solution: one polynomial per element), in parallel over rows.
//!
//! # Method
//! 1. Every triangle's vertices go through the plot transform into the rasterizer's fixed point
//!    ([`super::raster`]), and the triangle is binned into the horizontal strips of rows its
//!    bounding box touches (a counting sort; several strips per thread for balance).
//! 2. Threads ([`std::thread::scope`]) take strips round-robin; each scan-converts its
//!    triangles clipped to the strip with the watertight tie rules, so every pixel centre is
//!    claimed by exactly one triangle, and evaluates that triangle's function once at the
//!    pixel centre's barycentric coordinates: no more samples than pixels, and a triangle's
//!    per-element preparation ([`TriangleField::local`]) runs once per strip it touches.
//! 3. The color range is the min and max of the finite pixel values (or the fixed one); since
//!    the legend's width, and so the plot area, depends on the range's tick labels, the layout
//!    starts from [`TriangleField::range_hint`] and the pixels are redone, once, only when the
//!    final range moves the plot area.
//! 4. Rows are colored in parallel (the value's colormap entry, [`NAN_COLOR`] for non-finite
//!    values), isolines drawn (below), an optional mesh overlay, the title and the colorbar.
//!
//! # Isolines
//! With `opts.contours = N`, the levels are `lo + k (hi - lo) / (N + 1)`, k = 1..=N. Per pixel,
//! with `f = (v - lo) (N + 1) / (hi - lo)` the value in level units, the distance to the nearest
//! level in pixels is `d = |f - round(f)| / |grad f|`, the gradient by central differences of the
//! neighbouring pixel values (one-sided at the border of the drawing), and the pixel is blended
//! towards black by `clamp(1 - d, 0, 1)`: anti-aliased lines about one pixel wide, drawn per
//! pixel from the values already computed. Where the field jumps between elements the line
//! follows the element edge at which a level is crossed.

use std::path::Path;

use image::RgbaImage;

use super::png::{
    draw_legend, draw_overlay, draw_title, fit_box, rect_u32, resolve_range, validate_mesh,
    write_png_atomic, Layout, Legend, PlotOptions, RenderStats, BACKGROUND, NAN_COLOR,
};
use super::raster::{scan_triangle, to_fixed, triangle_rows, Rect};
use crate::error::{Error, Result};
use crate::mesh::Mesh;

/// Color of isolines.
const CONTOUR_COLOR: [u8; 3] = [0, 0, 0];

/// A scalar field given on each triangle as a function of the barycentric coordinates
/// `(l1, l2)` with respect to the triangle's vertices 1 and 2 (for a DG element mapped by
/// `x = v0 + xi (v1 - v0) + eta (v2 - v0)` these are its reference coordinates `(xi, eta)`).
pub trait TriangleField: Sync {
    /// Per-triangle data prepared once before its pixels are evaluated (e.g. the element's
    /// polynomial coefficients in a basis cheap to evaluate).
    type Local;
    /// The triangles, vertices in mesh coordinates.
    fn triangles(&self) -> &[[[f64; 2]; 3]];
    /// The data of triangle `t` for [`TriangleField::value`].
    fn local(&self, t: usize) -> Self::Local;
    /// The value at barycentric coordinates `(l1, l2)` of the triangle `local` was made for.
    fn value(&self, local: &Self::Local, l1: f64, l2: f64) -> f64;
    /// A cheap estimate of the value range (e.g. the element means), used to lay out the
    /// colorbar before the pixels are known; the drawn range is still the pixels'.
    fn range_hint(&self) -> Option<(f64, f64)> {
        None
    }
}

/// Per-pixel values of the plot area: `values[y * width + x]` relative to its corner, with
/// `covered` marking pixels inside a triangle.
struct PixelValues {
    area: Rect,
    values: Vec<f32>,
    covered: Vec<bool>,
}

impl PixelValues {
    fn width(&self) -> usize {
        self.area.width() as usize
    }

    /// (min, max) of the finite covered values (None when there are none) and the number of
    /// covered non-finite ones.
    fn range_and_nans(&self) -> (Option<(f64, f64)>, usize) {
        let mut lo = f32::INFINITY;
        let mut hi = f32::NEG_INFINITY;
        let mut nans = 0;
        for (&v, &c) in self.values.iter().zip(&self.covered) {
            if !c {
                continue;
            }
            if v.is_finite() {
                lo = lo.min(v);
                hi = hi.max(v);
            } else {
                nans += 1;
            }
        }
        ((lo <= hi).then_some((f64::from(lo), f64::from(hi))), nans)
    }
}

/// A strip's index and its rows of the value and coverage buffers.
type StripJob<'a> = (usize, &'a mut [f32], &'a mut [bool]);

/// Number of worker threads: the machine's parallelism.
fn threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Evaluate `field` at the centre of every pixel of `area` that a triangle covers (see the
/// module doc), with the triangles mapped by `transform`.
fn rasterize<F: TriangleField>(
    field: &F,
    transform: &super::PixelTransform,
    area: Rect,
) -> PixelValues {
    let tris = field.triangles();
    let (w, h) = (area.width() as usize, area.height() as usize);
    let workers = threads();
    // Fixed-point vertices, in parallel chunks.
    let mut fixed = vec![[[0i64; 2]; 3]; tris.len()];
    let chunk = tris.len().div_ceil(workers).max(1);
    std::thread::scope(|s| {
        for (out, tri) in fixed.chunks_mut(chunk).zip(tris.chunks(chunk)) {
            s.spawn(move || {
                for (f, t) in out.iter_mut().zip(tri) {
                    *f = t.map(|p| transform.to_pixel(p[0], p[1]).map(to_fixed));
                }
            });
        }
    });
    // Strips of rows, binned by a counting sort of the rows each triangle may cover.
    let strips = (4 * workers).clamp(1, h.max(1));
    let rows_per = h.div_ceil(strips).max(1);
    let strips = h.div_ceil(rows_per).max(1);
    let strip_span = |f: &[[i64; 2]; 3]| -> Option<(usize, usize)> {
        let (y0, y1) = triangle_rows(f);
        let (y0, y1) = (y0.max(area.y0), y1.min(area.y1 - 1));
        (y0 <= y1).then(|| {
            (
                (y0 - area.y0) as usize / rows_per,
                (y1 - area.y0) as usize / rows_per,
            )
        })
    };
    let mut start = vec![0usize; strips + 1];
    for f in &fixed {
        if let Some((a, b)) = strip_span(f) {
            for s in a..=b {
                start[s + 1] += 1;
            }
        }
    }
    for s in 0..strips {
        start[s + 1] += start[s];
    }
    let mut bins = vec![0u32; start[strips]];
    let mut next = start.clone();
    for (t, f) in fixed.iter().enumerate() {
        if let Some((a, b)) = strip_span(f) {
            for s in a..=b {
                bins[next[s]] = t as u32;
                next[s] += 1;
            }
        }
    }
    let mut values = vec![f32::NAN; w * h];
    let mut covered = vec![false; w * h];
    // Strips round-robin over the threads, each with its own rows of the buffers.
    let mut work: Vec<Vec<StripJob>> = (0..workers).map(|_| Vec::new()).collect();
    for (s, (v, c)) in values
        .chunks_mut(rows_per * w)
        .zip(covered.chunks_mut(rows_per * w))
        .enumerate()
    {
        work[s % workers].push((s, v, c));
    }
    let (fixed, bins, start) = (&fixed, &bins, &start);
    std::thread::scope(|sc| {
        for jobs in work {
            sc.spawn(move || {
                for (s, vals, cov) in jobs {
                    let y0 = area.y0 + (s * rows_per) as i64;
                    let clip = Rect {
                        y0,
                        y1: (y0 + rows_per as i64).min(area.y1),
                        ..area
                    };
                    for &t in &bins[start[s]..start[s + 1]] {
                        let t = t as usize;
                        let local = field.local(t);
                        scan_triangle(fixed[t], clip, |x, y, l1, l2| {
                            let i = (y - y0) as usize * w + (x - area.x0) as usize;
                            vals[i] = field.value(&local, l1, l2) as f32;
                            cov[i] = true;
                        });
                    }
                }
            });
        }
    });
    PixelValues {
        area,
        values,
        covered,
    }
}

/// Render `field` per pixel (see the module doc) with `opts` (size, title, label, colormap,
/// fixed range, colorbar, isolines; `wireframe` draws the triangles' edges, as `overlay` does
/// for another mesh over the same domain). Errors: no triangles, non-finite coordinates, an
/// invalid fixed range or image size, an invalid overlay mesh.
pub fn render_triangle_field<F: TriangleField>(
    field: &F,
    opts: &PlotOptions,
    overlay: Option<&Mesh>,
) -> Result<(RgbaImage, RenderStats)> {
    let tris = field.triangles();
    if tris.is_empty() {
        return Err(Error::Invalid("PNG rendering: no triangles".into()));
    }
    let mut lo = [f64::INFINITY; 2];
    let mut hi = [f64::NEG_INFINITY; 2];
    for (t, tri) in tris.iter().enumerate() {
        for p in tri {
            if !(p[0].is_finite() && p[1].is_finite()) {
                return Err(Error::invalid_mesh(format!(
                    "triangle {t} has a vertex with non-finite coordinates ({}, {})",
                    p[0], p[1]
                )));
            }
            for d in 0..2 {
                lo[d] = lo[d].min(p[d]);
                hi[d] = hi[d].max(p[d]);
            }
        }
    }
    if let Some(m) = overlay {
        validate_mesh(m)?;
    }
    let fixed_range = match opts.range {
        Some(r) => Some(resolve_range(&[], Some(r))?),
        None => None,
    };
    let mut range = fixed_range
        .or_else(|| field.range_hint())
        .map_or(Ok((0.0, 1.0)), |(a, b)| resolve_range(&[a, b], None))?;
    let mut nans = 0;
    let mut layout = Layout::new(
        opts,
        &Legend::Bar {
            lo: range.0,
            hi: range.1,
        },
        nans,
    )?;
    let mut transform = fit_box(lo, hi, layout.plot);
    let mut pixels = rasterize(field, &transform, layout.plot);
    // At most one more pass: the second layout's plot area is taken as final.
    for pass in 0..2 {
        let (found, n) = pixels.range_and_nans();
        nans = n;
        if fixed_range.is_none() {
            range = match found {
                Some((a, b)) => resolve_range(&[a, b], None)?,
                None => (0.0, 1.0),
            };
        }
        let next = Layout::new(
            opts,
            &Legend::Bar {
                lo: range.0,
                hi: range.1,
            },
            nans,
        )?;
        let moved = next.plot != layout.plot;
        layout = next;
        if !moved || pass == 1 {
            break;
        }
        transform = fit_box(lo, hi, layout.plot);
        pixels = rasterize(field, &transform, layout.plot);
    }
    if pixels.area != layout.plot {
        // The second pass moved the plot area again: keep the values, lay them out as drawn.
        layout.plot = pixels.area;
    }
    let mut img = RgbaImage::from_pixel(opts.width, opts.height, image::Rgba(BACKGROUND));
    let filled = colorize(&mut img, &pixels, opts, range);
    if opts.contours > 0 {
        draw_isolines(&mut img, &pixels, opts.contours, range);
    }
    let stats = RenderStats {
        range: Some(range),
        nan_count: nans,
        pixels_filled: filled,
        width: opts.width,
        height: opts.height,
        transform,
        plot_area: rect_u32(layout.plot),
        colorbar: None,
    };
    if opts.wireframe {
        draw_overlay(&mut img, &stats, &triangle_mesh(tris));
    }
    if let Some(m) = overlay {
        draw_overlay(&mut img, &stats, m);
    }
    draw_title(&mut img, opts, &layout);
    let legend = Legend::Bar {
        lo: range.0,
        hi: range.1,
    };
    let bar = draw_legend(&mut img, opts, &layout, &legend, nans);
    Ok((
        img,
        RenderStats {
            colorbar: bar.map(rect_u32),
            ..stats
        },
    ))
}

/// Render `field` ([`render_triangle_field`]) and write it as a PNG at `path` atomically.
pub fn save_triangle_field_png<F: TriangleField>(
    field: &F,
    opts: &PlotOptions,
    overlay: Option<&Mesh>,
    path: &Path,
) -> Result<RenderStats> {
    let (img, stats) = render_triangle_field(field, opts, overlay)?;
    write_png_atomic(&img, path)?;
    Ok(stats)
}

/// The triangles as a mesh (unshared points), for the wireframe.
fn triangle_mesh(tris: &[[[f64; 2]; 3]]) -> Mesh {
    let mut mesh = Mesh::new(2);
    for (t, tri) in tris.iter().enumerate() {
        mesh.points.extend(tri.iter().map(|p| [p[0], p[1], 0.0]));
        let b = 3 * t as u32;
        mesh.push_element(crate::mesh::ElementKind::Triangle, &[b, b + 1, b + 2], 1);
    }
    mesh
}

/// Parallel per-row work on the plot area: `f(rgba, y)` gets the RGBA bytes of row `y` of the
/// area (relative to its top) on the worker threads.
fn for_rows<F>(img: &mut RgbaImage, px: &PixelValues, f: F)
where
    F: Fn(&mut [u8], usize) + Sync,
{
    let a = px.area;
    let stride = img.width() as usize * 4;
    let rows: Vec<(usize, &mut [u8])> = img
        .chunks_mut(stride)
        .enumerate()
        .skip(a.y0 as usize)
        .take(a.height() as usize)
        .map(|(y, row)| {
            let seg = &mut row[a.x0 as usize * 4..a.x1 as usize * 4];
            (y - a.y0 as usize, seg)
        })
        .collect();
    let workers = threads();
    let per = rows.len().div_ceil(workers).max(1);
    let mut rows = rows;
    std::thread::scope(|s| {
        while !rows.is_empty() {
            let take = per.min(rows.len());
            let part: Vec<_> = rows.drain(..take).collect();
            let f = &f;
            s.spawn(move || {
                for (y, seg) in part {
                    f(seg, y);
                }
            });
        }
    });
}

/// Colormap index of value `v` in `range`: `round(255 t)`, `t = (v - lo) / (hi - lo)` clamped.
fn lut_index(v: f64, lo: f64, inv_span: f64) -> usize {
    (((v - lo) * inv_span * 255.0 + 0.5).clamp(0.0, 255.0)) as usize
}

/// Paint the covered pixels with their colormap colors; returns their number.
fn colorize(img: &mut RgbaImage, px: &PixelValues, opts: &PlotOptions, range: (f64, f64)) -> usize {
    let lut = opts.colormap.lut();
    let (lo, inv_span) = (range.0, 1.0 / (range.1 - range.0));
    let w = px.width();
    for_rows(img, px, |seg, y| {
        let vals = &px.values[y * w..(y + 1) * w];
        let cov = &px.covered[y * w..(y + 1) * w];
        for ((out, &v), &c) in seg.chunks_exact_mut(4).zip(vals).zip(cov) {
            if c {
                let v = f64::from(v);
                let color = if v.is_finite() {
                    lut[lut_index(v, lo, inv_span)]
                } else {
                    NAN_COLOR
                };
                out.copy_from_slice(&color);
            }
        }
    });
    px.covered.iter().filter(|&&c| c).count()
}

/// Blend isolines over the covered pixels (see the module doc).
fn draw_isolines(img: &mut RgbaImage, px: &PixelValues, levels: usize, range: (f64, f64)) {
    let (w, h) = (px.width(), px.area.height() as usize);
    let scale = (levels + 1) as f64 / (range.1 - range.0);
    let level = |i: usize| -> Option<f64> {
        let v = f64::from(px.values[i]);
        (px.covered[i] && v.is_finite()).then_some((v - range.0) * scale)
    };
    for_rows(img, px, |seg, y| {
        for (x, out) in seg.chunks_exact_mut(4).enumerate() {
            let i = y * w + x;
            let Some(f) = level(i) else { continue };
            let nearest = f.round();
            if nearest < 1.0 || nearest > levels as f64 {
                continue;
            }
            // One-sided differences where a neighbour is missing.
            let diff = |a: Option<f64>, b: Option<f64>| match (a, b) {
                (Some(a), Some(b)) => 0.5 * (b - a),
                (Some(a), None) => f - a,
                (None, Some(b)) => b - f,
                (None, None) => 0.0,
            };
            let left = (x > 0).then(|| level(i - 1)).flatten();
            let right = (x + 1 < w).then(|| level(i + 1)).flatten();
            let up = (y > 0).then(|| level(i - w)).flatten();
            let down = (y + 1 < h).then(|| level(i + w)).flatten();
            let grad = diff(left, right).hypot(diff(up, down));
            let dist = (f - nearest).abs();
            let coverage = if grad > 0.0 {
                (1.0 - dist / grad).clamp(0.0, 1.0)
            } else if dist == 0.0 {
                1.0
            } else {
                0.0
            };
            if coverage > 0.0 {
                for (c, &k) in out.iter_mut().zip(&CONTOUR_COLOR) {
                    let old = f64::from(*c);
                    *c = (old + (f64::from(k) - old) * coverage).round() as u8;
                }
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::{render_with_stats, Field};

    /// f(x, y) = x + 2 y on a mesh of triangles, as a triangle field.
    struct Linear {
        tris: Vec<[[f64; 2]; 3]>,
    }

    impl TriangleField for Linear {
        type Local = [[f64; 2]; 3];
        fn triangles(&self) -> &[[[f64; 2]; 3]] {
            &self.tris
        }
        fn local(&self, t: usize) -> [[f64; 2]; 3] {
            self.tris[t]
        }
        fn value(&self, v: &[[f64; 2]; 3], l1: f64, l2: f64) -> f64 {
            let l0 = 1.0 - l1 - l2;
            let x = l0 * v[0][0] + l1 * v[1][0] + l2 * v[2][0];
            let y = l0 * v[0][1] + l1 * v[1][1] + l2 * v[2][1];
            x + 2.0 * y
        }
    }

    #[test]
    fn linear_field_matches_gouraud_rendering() -> Result<()> {
        let mesh = crate::mesh::builtin("rect:400@3")?;
        let tris: Vec<[[f64; 2]; 3]> = (0..mesh.num_elements())
            .map(|e| {
                let v = mesh.element(e);
                std::array::from_fn(|k| {
                    let p = mesh.points[v[k] as usize];
                    [p[0], p[1]]
                })
            })
            .collect();
        let vertex: Vec<f64> = mesh.points.iter().map(|p| p[0] + 2.0 * p[1]).collect();
        let opts = PlotOptions {
            width: 300,
            height: 260,
            range: Some((0.0, 3.0)),
            ..PlotOptions::default()
        };
        let field = Linear { tris };
        let (gouraud, gs) = render_with_stats(&mesh, Field::Vertex(&vertex), &opts)?;
        let (pixel, ps) = render_triangle_field(&field, &opts, None)?;
        assert_eq!(gs.plot_area, ps.plot_area);
        assert_eq!(gs.pixels_filled, ps.pixels_filled);
        // The range of the drawn pixels lies just inside the vertex range [0, 3].
        let auto = PlotOptions {
            range: None,
            ..opts.clone()
        };
        let (_, st) = render_triangle_field(&field, &auto, None)?;
        let (lo, hi) = st.range.expect("range");
        assert!(
            (0.0..0.05).contains(&lo) && hi <= 3.0 && hi > 2.95,
            "{lo} {hi}"
        );
        // Same colors: both interpolate a linear function exactly (to the f32 values and the
        // colormap's rounding).
        let worst = gouraud
            .pixels()
            .zip(pixel.pixels())
            .map(|(a, b)| {
                a.0.iter()
                    .zip(b.0.iter())
                    .map(|(x, y)| x.abs_diff(*y))
                    .max()
                    .unwrap_or(0)
            })
            .max()
            .unwrap_or(0);
        assert!(worst <= 3, "largest channel difference {worst}");
        Ok(())
    }

    #[test]
    fn isolines_darken_pixels_near_levels_only() -> Result<()> {
        let tris = vec![
            [[0.0, 0.0], [1.0, 0.0], [1.0, 1.0]],
            [[0.0, 0.0], [1.0, 1.0], [0.0, 1.0]],
        ];
        let field = Linear { tris };
        let plain = PlotOptions {
            width: 240,
            height: 200,
            colorbar: false,
            range: Some((0.0, 3.0)),
            ..PlotOptions::default()
        };
        let lined = PlotOptions {
            contours: 2,
            ..plain.clone()
        };
        let (a, st) = render_triangle_field(&field, &plain, None)?;
        let (b, _) = render_triangle_field(&field, &lined, None)?;
        // Levels at 1 and 2: x + 2y = 1 passes through (1, 0) and (0, 0.5).
        let on = st.transform.to_pixel(0.5, 0.25).map(|v| v as u32);
        let off = st.transform.to_pixel(0.5, 0.5).map(|v| v as u32);
        let dark = |img: &RgbaImage, p: [u32; 2]| {
            img.get_pixel(p[0], p[1]).0[..3]
                .iter()
                .map(|&c| u32::from(c))
                .sum::<u32>()
        };
        assert!(dark(&b, on) + 200 < dark(&a, on), "no line at level 1");
        assert_eq!(dark(&b, off), dark(&a, off), "line away from the levels");
        Ok(())
    }
}
