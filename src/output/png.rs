//! PNG snapshots of fields on 2D meshes: filled cells (flat or Gouraud), class colors,
//! wireframe, colored edges, a colorbar or class legend, and a title line.
//!
//! # Layout
//! ```text
//! +--------------------------------------------+
//! |                  title                     |
//! | +-------------------------------+  label   |
//! | |                               |  +--+ max|
//! | |   mesh, bounding box fitted   |  |  |-   |
//! | |   with its aspect ratio kept  |  |  |-   |
//! | |                               |  +--+ min|
//! | +-------------------------------+  [] NaN  |
//! +--------------------------------------------+
//! ```
//! Mesh coordinates map to pixels by `px = ox + (x - xmin) s`, `py = oy + (ymax - y) s` with
//! one scale `s = min(plot_w / (xmax - xmin), plot_h / (ymax - ymin))`, so circles stay round;
//! the drawing is centred in the plot area. Text uses the embedded 8x8 font scaled 1x to 4x
//! with the image size (2x from 480 pixels).
//!
//! # Shading
//! A value `v` maps to `t = (v - lo) / (hi - lo)`, clamped to [0, 1], then to colormap entry
//! `round(255 t)`. Per-vertex fields interpolate the *value* with barycentric weights before the
//! lookup (`v = l0 v0 + l1 v1 + l2 v2`), which keeps the gradient in colormap space smooth;
//! quads are split along their 0-2 diagonal. Non-finite values (NaN, +-inf) are painted
//! [`NAN_COLOR`] and counted; a triangle with a non-finite vertex value is painted whole.
//!
//! Triangles are rasterized with exact fixed-point edge functions (see [`super::raster`]), so
//! a conforming mesh has no cracks; a 1M-triangle mesh renders at 2048x2048 well under a second.

use std::path::Path;

use image::RgbaImage;

use super::colormap::{categorical, Colormap};
use super::font::{draw_text, text_width, GLYPH_SIZE};
use super::raster::{to_fixed, Canvas, Rect};
use crate::error::{Error, Result};
use crate::mesh::{ElementKind, Mesh, Topology};

/// Color of cells (or triangles) whose value is NaN or infinite: magenta, found in no colormap.
pub const NAN_COLOR: [u8; 4] = [255, 0, 255, 255];
pub(super) const BACKGROUND: [u8; 4] = [255, 255, 255, 255];
const TEXT_COLOR: [u8; 4] = [20, 20, 20, 255];
const FRAME_COLOR: [u8; 3] = [60, 60, 60];
const WIRE_COLOR: [u8; 3] = [25, 25, 25];
/// Fill of the mesh under colored edges: light enough for every palette color to stand out.
const EDGE_BACKDROP: [u8; 4] = [225, 225, 225, 255];
/// Images larger than this many pixels are refused (a typo in a size should not allocate 40 GB).
pub const MAX_PIXELS: u64 = 1 << 28;
/// Classes listed by the legend before it summarizes the rest as "+N more".
const MAX_LEGEND_CLASSES: usize = 32;

/// How to draw a plot. `Default` gives 1200x1000, viridis, automatic range, colorbar, no
/// wireframe.
#[derive(Clone, Debug, PartialEq)]
pub struct PlotOptions {
    /// Image width in pixels.
    pub width: u32,
    /// Image height in pixels.
    pub height: u32,
    /// Title line at the top (empty: no title line).
    pub title: String,
    /// Name of the field, printed above the colorbar or legend.
    pub label: String,
    /// Colormap of scalar fields.
    pub colormap: Colormap,
    /// Fixed value range `(lo, hi)`; `None` takes the min and max of the finite values.
    pub range: Option<(f64, f64)>,
    /// Draw element edges as thin dark lines (they fade on meshes too fine for the image).
    pub wireframe: bool,
    /// Draw the colorbar (scalar fields) or class legend (class fields and edge colorings).
    pub colorbar: bool,
    /// Isolines drawn over a per-pixel field ([`super::render_triangle_field`]): this many
    /// levels evenly spaced inside the color range, `lo + k (hi - lo) / (N + 1)`, k = 1..=N;
    /// 0 draws none. The mesh renderers ignore it.
    pub contours: usize,
}

impl Default for PlotOptions {
    fn default() -> Self {
        PlotOptions {
            width: 1200,
            height: 1000,
            title: String::new(),
            label: String::new(),
            colormap: Colormap::Viridis,
            range: None,
            wireframe: false,
            colorbar: true,
            contours: 0,
        }
    }
}

/// The field to draw on the mesh.
#[derive(Clone, Copy, Debug)]
pub enum Field<'a> {
    /// One value per element, flat shaded.
    Cell(&'a [f64]),
    /// One value per mesh point, Gouraud shaded (value interpolated, then mapped).
    Vertex(&'a [f64]),
    /// One class per element (a coloring, a region), drawn with the categorical palette.
    CellClass(&'a [u32]),
    /// No field: elements filled white (combine with `wireframe`).
    None,
}

/// What a render used and found.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RenderStats {
    /// Value range mapped onto the colormap (`None` for class fields and `Field::None`).
    pub range: Option<(f64, f64)>,
    /// Number of non-finite field values (NaN or infinite), drawn in [`NAN_COLOR`].
    pub nan_count: usize,
    /// Pixels covered by triangles.
    pub pixels_filled: usize,
    /// Image size.
    pub width: u32,
    pub height: u32,
    /// Mesh-to-pixel mapping used (to place annotations or probe pixels).
    pub transform: PixelTransform,
    /// Plot area `[x0, y0, x1, y1)` in pixels, the mesh drawing is clipped to it.
    pub plot_area: [u32; 4],
    /// Colorbar gradient rectangle `[x0, y0, x1, y1)` (frame included), when one was drawn.
    pub colorbar: Option<[u32; 4]>,
}

/// Maps mesh coordinates to pixel coordinates (y down):
/// `px = ox + (x - xmin) scale`, `py = oy + (ymax - y) scale`.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PixelTransform {
    pub xmin: f64,
    pub ymax: f64,
    pub scale: f64,
    pub ox: f64,
    pub oy: f64,
}

impl PixelTransform {
    /// Pixel position of mesh point `(x, y)`; pixel `(i, j)` covers `[i, i+1) x [j, j+1)`.
    pub fn to_pixel(&self, x: f64, y: f64) -> [f64; 2] {
        [
            self.ox + (x - self.xmin) * self.scale,
            self.oy + (self.ymax - y) * self.scale,
        ]
    }
}

pub(super) fn rect_u32(r: Rect) -> [u32; 4] {
    [r.x0, r.y0, r.x1, r.y1].map(|v| v.clamp(0, i64::from(u32::MAX)) as u32)
}

/// Render `field` on the 2D `mesh`. See [`render_with_stats`].
pub fn render(mesh: &Mesh, field: Field, opts: &PlotOptions) -> Result<RgbaImage> {
    render_with_stats(mesh, field, opts).map(|(img, _)| img)
}

/// Render `field` on the 2D `mesh` and report the range used and the number of NaNs.
///
/// Errors: a mesh that is not 2D (or holds 3D elements, out-of-range vertex indices or
/// non-finite coordinates), a field whose length is not the element or point count, an
/// invalid fixed range, an image too small for the layout or larger than [`MAX_PIXELS`].
pub fn render_with_stats(
    mesh: &Mesh,
    field: Field,
    opts: &PlotOptions,
) -> Result<(RgbaImage, RenderStats)> {
    validate_mesh(mesh)?;
    check_field_len(mesh, &field)?;
    let (scalar, nan_count) = match field {
        Field::Cell(v) | Field::Vertex(v) => (Some(v), v.iter().filter(|x| !x.is_finite()).count()),
        _ => (None, 0),
    };
    let range = match scalar {
        Some(values) => Some(resolve_range(values, opts.range)?),
        None => None,
    };
    let legend = match (field, range) {
        (_, Some((lo, hi))) => Legend::Bar { lo, hi },
        (Field::CellClass(c), _) => Legend::Classes(distinct_classes(c)),
        _ => Legend::Nothing,
    };
    let layout = Layout::new(opts, &legend, nan_count)?;
    let mut img = RgbaImage::from_pixel(opts.width, opts.height, image::Rgba(BACKGROUND));
    let view = View::fit(mesh, layout.plot);

    let lut = opts.colormap.lut();
    let (lo, hi) = range.unwrap_or((0.0, 1.0));
    let inv_span = 1.0 / (hi - lo);
    let index = |t: f64| ((t * 255.0 + 0.5).clamp(0.0, 255.0)) as usize;
    let mut filled = 0;
    {
        let mut canvas = Canvas {
            buf: &mut img,
            width: i64::from(opts.width),
            clip: layout.plot,
        };
        for_each_triangle(mesh, |e, tri| {
            let v = tri.map(|i| view.fixed[i as usize]);
            filled += match field {
                Field::Cell(vals) => {
                    let x = vals[e];
                    let c = if x.is_finite() {
                        lut[index((x - lo) * inv_span)]
                    } else {
                        NAN_COLOR
                    };
                    canvas.fill_triangle(v, |_, _| c)
                }
                Field::Vertex(vals) => {
                    let x = tri.map(|i| vals[i as usize]);
                    if x.iter().all(|x| x.is_finite()) {
                        let t0 = (x[0] - lo) * inv_span;
                        let (d1, d2) = ((x[1] - x[0]) * inv_span, (x[2] - x[0]) * inv_span);
                        canvas.fill_triangle(v, |l1, l2| lut[index(t0 + l1 * d1 + l2 * d2)])
                    } else {
                        canvas.fill_triangle(v, |_, _| NAN_COLOR)
                    }
                }
                Field::CellClass(classes) => {
                    let [r, g, b] = categorical(classes[e]);
                    canvas.fill_triangle(v, |_, _| [r, g, b, 255])
                }
                Field::None => canvas.fill_triangle(v, |_, _| BACKGROUND),
            };
        });
        if opts.wireframe {
            draw_wireframe(&mut canvas, mesh, &view.pixels);
        }
    }
    draw_title(&mut img, opts, &layout);
    let bar = draw_legend(&mut img, opts, &layout, &legend, nan_count);
    let stats = RenderStats {
        range,
        nan_count,
        pixels_filled: filled,
        width: opts.width,
        height: opts.height,
        transform: view.transform,
        plot_area: rect_u32(layout.plot),
        colorbar: bar.map(rect_u32),
    };
    Ok((img, stats))
}

/// Render an edge coloring: the mesh filled light gray, each edge `edges[i]` (a pair of point
/// indices) drawn 2 pixels wide in palette color `colors[i]`, and a legend of the colors used.
/// `opts.colormap` and `opts.range` are not used; `opts.wireframe` adds thin element edges
/// under the colored ones.
pub fn render_edges(
    mesh: &Mesh,
    edges: &[[u32; 2]],
    colors: &[u32],
    opts: &PlotOptions,
) -> Result<RgbaImage> {
    validate_mesh(mesh)?;
    if edges.len() != colors.len() {
        return Err(Error::Invalid(format!(
            "edge coloring length mismatch: {} edges but {} colors (expected {})",
            edges.len(),
            colors.len(),
            edges.len()
        )));
    }
    let np = mesh.num_points();
    if let Some((i, e)) = edges
        .iter()
        .enumerate()
        .find(|(_, e)| e.iter().any(|&v| v as usize >= np))
    {
        return Err(Error::Invalid(format!(
            "edge {i} joins points {} and {}, but the mesh has only {np} points",
            e[0], e[1]
        )));
    }
    let legend = Legend::Classes(distinct_classes(colors));
    let layout = Layout::new(opts, &legend, 0)?;
    let mut img = RgbaImage::from_pixel(opts.width, opts.height, image::Rgba(BACKGROUND));
    let view = View::fit(mesh, layout.plot);
    {
        let mut canvas = Canvas {
            buf: &mut img,
            width: i64::from(opts.width),
            clip: layout.plot,
        };
        for_each_triangle(mesh, |_, tri| {
            canvas.fill_triangle(tri.map(|i| view.fixed[i as usize]), |_, _| EDGE_BACKDROP);
        });
        if opts.wireframe {
            draw_wireframe(&mut canvas, mesh, &view.pixels);
        }
        for (e, &c) in edges.iter().zip(colors) {
            let (a, b) = (view.pixels[e[0] as usize], view.pixels[e[1] as usize]);
            canvas.draw_segment(a, b, 1.0, categorical(c), 1.0);
        }
    }
    draw_title(&mut img, opts, &layout);
    draw_legend(&mut img, opts, &layout, &legend, 0);
    Ok(img)
}

/// The edges of a 2D topology as point-index pairs, in face order: the `edges` argument of
/// [`render_edges`] for a face coloring indexed by face. (For a 3D topology each face yields
/// its first and last vertex, which is not meaningful to draw.)
pub fn topology_edges(topo: &Topology) -> Vec<[u32; 2]> {
    (0..topo.face_vertices.num_rows())
        .map(|f| {
            let r = topo.face_vertices.row(f);
            match (r.first(), r.last()) {
                (Some(&a), Some(&b)) => [a, b],
                _ => [0, 0],
            }
        })
        .collect()
}

/// Encode `img` as PNG and write it atomically (see [`crate::files::atomic_write`]): a reader sees
/// the previous file or the complete new one, never a partial PNG. Parent directories are
/// created; errors name `path`.
pub fn write_png_atomic(img: &RgbaImage, path: &Path) -> Result<()> {
    use image::ImageEncoder;
    crate::files::atomic_write(path, |w| {
        let enc = image::codecs::png::PngEncoder::new_with_quality(
            w,
            image::codecs::png::CompressionType::Fast,
            image::codecs::png::FilterType::Adaptive,
        );
        enc.write_image(
            img.as_raw(),
            img.width(),
            img.height(),
            image::ExtendedColorType::Rgba8,
        )
        .map_err(|e| match e {
            image::ImageError::IoError(io) => io,
            other => std::io::Error::other(other),
        })
    })
}

/// Render `field` and write it as a PNG at `path` atomically; returns the render statistics.
pub fn save_field_png(
    mesh: &Mesh,
    field: Field,
    opts: &PlotOptions,
    path: &Path,
) -> Result<RenderStats> {
    let (img, stats) = render_with_stats(mesh, field, opts)?;
    write_png_atomic(&img, path)?;
    Ok(stats)
}

/// Render `field` on `mesh` with the element edges of `overlay` drawn on top (a mesh over the
/// same domain, e.g. an adapted mesh over a solution drawn on a finer one) and write it as a PNG at
/// `path` atomically; returns the render statistics.
pub fn save_field_png_with_mesh(
    mesh: &Mesh,
    field: Field,
    opts: &PlotOptions,
    overlay: &Mesh,
    path: &Path,
) -> Result<RenderStats> {
    validate_mesh(overlay)?;
    let (mut img, stats) = render_with_stats(mesh, field, opts)?;
    draw_overlay(&mut img, &stats, overlay);
    write_png_atomic(&img, path)?;
    Ok(stats)
}

/// Draw the element edges of `overlay` (validated) on a rendered image, with the render's
/// transform and clipped to its plot area.
pub(super) fn draw_overlay(img: &mut RgbaImage, stats: &RenderStats, overlay: &Mesh) {
    let pixels: Vec<[f64; 2]> = overlay
        .points
        .iter()
        .map(|p| stats.transform.to_pixel(p[0], p[1]))
        .collect();
    let [x0, y0, x1, y1] = stats.plot_area.map(i64::from);
    let mut canvas = Canvas {
        buf: img,
        width: i64::from(stats.width),
        clip: Rect { x0, y0, x1, y1 },
    };
    draw_wireframe(&mut canvas, overlay, &pixels);
}

/// Render an edge coloring ([`render_edges`]) and write it as a PNG at `path` atomically.
pub fn save_edges_png(
    mesh: &Mesh,
    edges: &[[u32; 2]],
    colors: &[u32],
    opts: &PlotOptions,
    path: &Path,
) -> Result<()> {
    let img = render_edges(mesh, edges, colors, opts)?;
    write_png_atomic(&img, path)
}

/// The (lo, hi) range of `values`: `fixed` when given (it must be finite with lo <= hi),
/// otherwise the min and max of the finite values. A zero-width range `v..v` is widened to
/// `v -+ d` with `d = 1e-3 |v|` (or `1e-3` when `v = 0`), so a constant field sits mid-map and
/// the colorbar still has distinct ticks. No finite values at all gives (0, 1).
pub fn resolve_range(values: &[f64], fixed: Option<(f64, f64)>) -> Result<(f64, f64)> {
    let (lo, hi) = match fixed {
        Some((lo, hi)) => {
            if !(lo.is_finite() && hi.is_finite() && lo <= hi) {
                return Err(Error::Invalid(format!(
                    "invalid plot range ({lo}, {hi}): need finite lo <= hi"
                )));
            }
            (lo, hi)
        }
        None => {
            let mut lo = f64::INFINITY;
            let mut hi = f64::NEG_INFINITY;
            for &v in values.iter().filter(|v| v.is_finite()) {
                lo = lo.min(v);
                hi = hi.max(v);
            }
            if lo > hi {
                return Ok((0.0, 1.0));
            }
            (lo, hi)
        }
    };
    if hi - lo > f64::EPSILON * lo.abs().max(hi.abs()) * 4.0 && (hi - lo).is_finite() {
        return Ok((lo, hi));
    }
    let mid = 0.5 * (lo + hi);
    let d = if mid == 0.0 { 1e-3 } else { 1e-3 * mid.abs() };
    Ok((mid - d, mid + d))
}

/// Colorbar ticks: `n >= 2` evenly spaced values from `lo` to `hi` with compact labels.
pub fn tick_labels(lo: f64, hi: f64, n: usize) -> Vec<(f64, String)> {
    let n = n.max(2);
    let step = (hi - lo) / (n - 1) as f64;
    (0..n)
        .map(|k| {
            let v = if k + 1 == n { hi } else { lo + step * k as f64 };
            (v, format_tick(v, step, lo.abs().max(hi.abs())))
        })
        .collect()
}

/// Label for tick value `v` on an axis with tick spacing `step` and largest magnitude `mag`:
/// two digits more than the leading digit of the step, so neighbouring ticks differ (values
/// within `1e-3 step` of zero print as `0`). Plain notation like `0.512` or `12.5` for
/// `1e-2 <= mag < 1e5`, otherwise `1.23e-3`; trailing zeros are dropped.
pub fn format_tick(v: f64, step: f64, mag: f64) -> String {
    if !v.is_finite() {
        return format!("{v}");
    }
    let step = if step > 0.0 && step.is_finite() {
        step
    } else {
        v.abs().max(f64::MIN_POSITIVE)
    };
    if v.abs() < 1e-3 * step {
        return "0".into();
    }
    let step_exp = step.log10().floor() as i32;
    if (1e-2..1e5).contains(&mag) {
        let decimals = (2 - step_exp).clamp(0, 8) as usize;
        let s = trim_zeros(&format!("{v:.decimals$}"));
        if s == "-0" {
            "0".into()
        } else {
            s
        }
    } else {
        let v_exp = v.abs().log10().floor() as i32;
        let digits = (v_exp - step_exp + 2).clamp(0, 6) as usize;
        let s = format!("{v:.digits$e}");
        match s.split_once('e') {
            Some((m, e)) => format!("{}e{e}", trim_zeros(m)),
            None => s,
        }
    }
}

fn trim_zeros(s: &str) -> String {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s.to_string()
    }
}

pub(super) fn validate_mesh(mesh: &Mesh) -> Result<()> {
    if mesh.dim != 2 {
        return Err(Error::Invalid(format!(
            "PNG rendering needs a 2D mesh, got a {}D mesh",
            mesh.dim
        )));
    }
    if mesh.points.is_empty() {
        return Err(Error::Invalid(
            "PNG rendering: the mesh has no points".into(),
        ));
    }
    if let Some((i, p)) = mesh
        .points
        .iter()
        .enumerate()
        .find(|(_, p)| !(p[0].is_finite() && p[1].is_finite()))
    {
        return Err(Error::invalid_mesh(format!(
            "point {i} has non-finite coordinates ({}, {})",
            p[0], p[1]
        )));
    }
    if mesh.offsets.len() != mesh.kinds.len() + 1 {
        return Err(Error::invalid_mesh(format!(
            "{} element kinds but {} connectivity offsets (expected {})",
            mesh.kinds.len(),
            mesh.offsets.len(),
            mesh.kinds.len() + 1
        )));
    }
    let np = mesh.num_points();
    for (e, &kind) in mesh.kinds.iter().enumerate() {
        if kind.dim() != 2 {
            return Err(Error::invalid_mesh(format!(
                "element {e} is a {}; PNG rendering draws triangles and quadrilaterals only",
                kind.name()
            )));
        }
        let (a, b) = (mesh.offsets[e] as usize, mesh.offsets[e + 1] as usize);
        let verts = mesh.connectivity.get(a..b).ok_or_else(|| {
            Error::invalid_mesh(format!(
                "element {e}: connectivity range {a}..{b} out of bounds"
            ))
        })?;
        if verts.len() != kind.num_vertices() {
            return Err(Error::invalid_mesh(format!(
                "element {e} ({}) has {} vertices, expected {}",
                kind.name(),
                verts.len(),
                kind.num_vertices()
            )));
        }
        if let Some(&v) = verts.iter().find(|&&v| v as usize >= np) {
            return Err(Error::invalid_mesh(format!(
                "element {e} uses point {v}, but the mesh has only {np} points"
            )));
        }
    }
    Ok(())
}

fn check_field_len(mesh: &Mesh, field: &Field) -> Result<()> {
    let (what, len, expected, of) = match field {
        Field::Cell(v) => ("per-cell", v.len(), mesh.num_elements(), "elements"),
        Field::Vertex(v) => ("per-vertex", v.len(), mesh.num_points(), "points"),
        Field::CellClass(v) => ("per-cell class", v.len(), mesh.num_elements(), "elements"),
        Field::None => return Ok(()),
    };
    if len != expected {
        return Err(Error::Invalid(format!(
            "field length mismatch: {what} field has {len} values, but the mesh has {expected} {of} (expected {expected})"
        )));
    }
    Ok(())
}

/// Call `f(element, [a, b, c])` for every triangle: triangles as they are, quads split into
/// (0, 1, 2) and (0, 2, 3). Assumes [`validate_mesh`] passed.
fn for_each_triangle<F: FnMut(usize, [u32; 3])>(mesh: &Mesh, mut f: F) {
    for (e, &kind) in mesh.kinds.iter().enumerate() {
        let v = mesh.element(e);
        match kind {
            ElementKind::Triangle => f(e, [v[0], v[1], v[2]]),
            ElementKind::Quad => {
                f(e, [v[0], v[1], v[2]]);
                f(e, [v[0], v[2], v[3]]);
            }
            _ => {}
        }
    }
}

/// Unique element edges (sorted point pairs) drawn as thin anti-aliased lines. Opacity fades
/// with the mean edge length `L` in pixels, `alpha = 0.8 clamp((L - 1.5) / 6, 0.1, 1)`, so a
/// mesh too fine for the image shows as a light tint instead of a black area.
pub(super) fn draw_wireframe(canvas: &mut Canvas, mesh: &Mesh, pixels: &[[f64; 2]]) {
    let mut edges: Vec<(u32, u32)> = Vec::with_capacity(mesh.connectivity.len());
    for (e, &kind) in mesh.kinds.iter().enumerate() {
        let v = mesh.element(e);
        for local in kind.local_faces() {
            let (a, b) = (v[local[0]], v[local[1]]);
            edges.push((a.min(b), a.max(b)));
        }
    }
    edges.sort_unstable();
    edges.dedup();
    if edges.is_empty() {
        return;
    }
    let p = pixels;
    let total: f64 = edges
        .iter()
        .map(|&(a, b)| {
            let (pa, pb) = (p[a as usize], p[b as usize]);
            (pa[0] - pb[0]).hypot(pa[1] - pb[1])
        })
        .sum();
    let mean = total / edges.len() as f64;
    let alpha = 0.8 * ((mean - 1.5) / 6.0).clamp(0.1, 1.0);
    for &(a, b) in &edges {
        canvas.draw_segment(p[a as usize], p[b as usize], 0.5, WIRE_COLOR, alpha);
    }
}

/// Mesh-to-pixel transform and every point mapped through it, also in the rasterizer's
/// fixed point.
struct View {
    transform: PixelTransform,
    pixels: Vec<[f64; 2]>,
    fixed: Vec<[i64; 2]>,
}

/// The transform fitting the box `lo..hi` into `plot` (inset by 2 pixels so edge lines are not
/// cut), one scale for both axes, centred.
pub(super) fn fit_box(lo: [f64; 2], hi: [f64; 2], plot: Rect) -> PixelTransform {
    let inset = 2.0;
    let (aw, ah) = (
        plot.width() as f64 - 2.0 * inset,
        plot.height() as f64 - 2.0 * inset,
    );
    let (bw, bh) = (hi[0] - lo[0], hi[1] - lo[1]);
    let scale = match (bw > 0.0, bh > 0.0) {
        (true, true) => (aw / bw).min(ah / bh),
        (true, false) => aw / bw,
        (false, true) => ah / bh,
        (false, false) => 1.0,
    };
    PixelTransform {
        xmin: lo[0],
        ymax: hi[1],
        scale,
        ox: plot.x0 as f64 + inset + 0.5 * (aw - bw * scale),
        oy: plot.y0 as f64 + inset + 0.5 * (ah - bh * scale),
    }
}

impl View {
    /// Fit the mesh bounding box into `plot` (inset by 2 pixels so edge lines are not cut),
    /// one scale for both axes, centred.
    fn fit(mesh: &Mesh, plot: Rect) -> View {
        let (lo, hi) = mesh.bounding_box();
        let transform = fit_box([lo[0], lo[1]], [hi[0], hi[1]], plot);
        let pixels: Vec<[f64; 2]> = mesh
            .points
            .iter()
            .map(|p| transform.to_pixel(p[0], p[1]))
            .collect();
        let fixed = pixels.iter().map(|p| p.map(to_fixed)).collect();
        View {
            transform,
            pixels,
            fixed,
        }
    }
}

pub(super) enum Legend {
    Bar { lo: f64, hi: f64 },
    Classes(Vec<u32>),
    Nothing,
}

fn distinct_classes(c: &[u32]) -> Vec<u32> {
    let mut v = c.to_vec();
    v.sort_unstable();
    v.dedup();
    v
}

/// Pixel geometry of one plot.
pub(super) struct Layout {
    /// Font scale (1 or 2) and derived glyph size and padding, in pixels.
    scale: u32,
    glyph: i64,
    pad: i64,
    /// Mesh drawing area.
    pub(super) plot: Rect,
    /// Legend column (colorbar or classes), when drawn.
    column: Option<Rect>,
    /// Colorbar tick labels.
    ticks: Vec<(f64, String)>,
}

impl Layout {
    pub(super) fn new(opts: &PlotOptions, legend: &Legend, nan_count: usize) -> Result<Layout> {
        let (w, h) = (i64::from(opts.width), i64::from(opts.height));
        if u64::from(opts.width) * u64::from(opts.height) > MAX_PIXELS {
            return Err(Error::Invalid(format!(
                "image {}x{} is larger than the limit of {MAX_PIXELS} pixels",
                opts.width, opts.height
            )));
        }
        let scale = font_scale(opts.width.min(opts.height));
        let glyph = i64::from(GLYPH_SIZE * scale);
        let pad = 4 * i64::from(scale) + 4;
        let top = if opts.title.is_empty() {
            pad
        } else {
            2 * pad + glyph
        };
        let ticks = match legend {
            Legend::Bar { lo, hi } => tick_labels(*lo, *hi, 5),
            _ => Vec::new(),
        };
        let s = i64::from(scale);
        let label_w = i64::from(text_width(&opts.label, scale));
        let column_w = if !opts.colorbar {
            None
        } else {
            match legend {
                Legend::Bar { .. } => {
                    let tick_w = ticks
                        .iter()
                        .map(|(_, t)| i64::from(text_width(t, scale)))
                        .max()
                        .unwrap_or(0);
                    let nan_w = if nan_count > 0 {
                        glyph + 2 * s + i64::from(text_width(&nan_text(nan_count), scale))
                    } else {
                        0
                    };
                    Some(
                        (bar_width(s) + TICK_TEXT_OFFSET * s + tick_w)
                            .max(label_w)
                            .max(nan_w),
                    )
                }
                Legend::Classes(c) => {
                    let max_label = c
                        .iter()
                        .take(MAX_LEGEND_CLASSES)
                        .map(|k| k.to_string().len())
                        .max()
                        .unwrap_or(1);
                    let more = if c.len() > MAX_LEGEND_CLASSES { 8 } else { 0 };
                    Some((glyph + 3 * s + glyph * max_label.max(more) as i64).max(label_w))
                }
                Legend::Nothing => None,
            }
        };
        // The legend column never takes more than a third of the image (long labels are cut).
        let column_w = column_w.map(|c| c.min(w / 3));
        let plot_x1 = match column_w {
            Some(c) => w - 2 * pad - c,
            None => w - pad,
        };
        let plot = Rect {
            x0: pad,
            y0: top,
            x1: plot_x1,
            y1: h - pad,
        };
        if plot.width() < 16 || plot.height() < 16 {
            return Err(Error::Invalid(format!(
                "image {}x{} is too small for the plot layout (plot area {}x{})",
                opts.width,
                opts.height,
                plot.width().max(0),
                plot.height().max(0)
            )));
        }
        let column = column_w.map(|c| Rect {
            x0: w - pad - c,
            y0: top,
            x1: w - pad,
            y1: h - pad,
        });
        Ok(Layout {
            scale,
            glyph,
            pad,
            plot,
            column,
            ticks,
        })
    }
}

/// Legend text of the NaN swatch, with the number of non-finite values.
fn nan_text(count: usize) -> String {
    format!("NaN ({count})")
}

/// Font scale for an image whose smaller side is `m` pixels: 8 px glyphs below 480, then
/// 16, 24 and 32 px glyphs (2 + (m - 480) / 1000, at most 4), so text stays readable on
/// large snapshots.
fn font_scale(m: u32) -> u32 {
    if m < 480 {
        1
    } else {
        (2 + (m - 480) / 1000).min(4)
    }
}

/// Distance from the colorbar's right edge to its tick labels, in font pixels.
const TICK_TEXT_OFFSET: i64 = 6;

fn bar_width(s: i64) -> i64 {
    10 * s + 8
}

/// Longest prefix of `text` that fits in `max_px`, with "..." when cut.
fn fit_text(text: &str, max_px: i64, scale: u32) -> String {
    let cw = i64::from(GLYPH_SIZE * scale);
    let fits = (max_px / cw).max(0) as usize;
    let n = text.chars().count();
    if n <= fits {
        return text.to_string();
    }
    if fits <= 3 {
        return text.chars().take(fits).collect();
    }
    let mut s: String = text.chars().take(fits - 3).collect();
    s.push_str("...");
    s
}

pub(super) fn draw_title(img: &mut RgbaImage, opts: &PlotOptions, layout: &Layout) {
    if opts.title.is_empty() {
        return;
    }
    let w = i64::from(opts.width);
    let title = fit_text(&opts.title, w - 2 * layout.pad, layout.scale);
    let tw = i64::from(text_width(&title, layout.scale));
    draw_text(
        img,
        (w - tw) / 2,
        layout.pad,
        &title,
        layout.scale,
        TEXT_COLOR,
    );
}

/// Draw the colorbar or class legend; returns the colorbar rectangle when one was drawn.
pub(super) fn draw_legend(
    img: &mut RgbaImage,
    opts: &PlotOptions,
    layout: &Layout,
    legend: &Legend,
    nan_count: usize,
) -> Option<Rect> {
    let col = layout.column?;
    let (s, g, pad, scale) = (
        i64::from(layout.scale),
        layout.glyph,
        layout.pad,
        layout.scale,
    );
    let label = fit_text(&opts.label, col.width(), scale);
    draw_text(img, col.x0, col.y0, &label, scale, TEXT_COLOR);
    let body_top = col.y0 + if label.is_empty() { 0 } else { g + pad };
    let width = i64::from(img.width());
    let full = Rect {
        x0: 0,
        y0: 0,
        x1: width,
        y1: i64::from(img.height()),
    };
    match legend {
        Legend::Bar { .. } => {
            let nan_h = if nan_count > 0 { g + pad } else { 0 };
            let (top, bottom) = (body_top + g / 2, col.y1 - g / 2 - nan_h);
            if bottom - top < 2 * g {
                return None;
            }
            let bar = Rect {
                x0: col.x0,
                y0: top,
                x1: col.x0 + bar_width(s),
                y1: bottom + 1,
            };
            let lut = opts.colormap.lut();
            let mut canvas = Canvas {
                buf: img,
                width,
                clip: full,
            };
            for y in bar.y0..bar.y1 {
                let t = (bottom - y) as f64 / (bottom - top) as f64;
                let row = Rect {
                    y0: y,
                    y1: y + 1,
                    ..bar
                };
                canvas.fill_rect(row, lut[(t * 255.0).round() as usize]);
            }
            draw_frame(&mut canvas, bar);
            let mut labels = Vec::new();
            let n = layout.ticks.len().max(2) - 1;
            for (k, (_, text)) in layout.ticks.iter().enumerate() {
                let y = bottom - (bottom - top) * k as i64 / n as i64;
                // A thin short tick and a wide gap: a thick tick next to the label would read
                // as a minus sign.
                let tick = Rect {
                    x0: bar.x1,
                    y0: y,
                    x1: bar.x1 + 2 * s,
                    y1: y + 1,
                };
                canvas.fill_rect(tick, [FRAME_COLOR[0], FRAME_COLOR[1], FRAME_COLOR[2], 255]);
                labels.push((
                    bar.x1 + TICK_TEXT_OFFSET * s,
                    y - g / 2 + s / 2,
                    text.clone(),
                ));
            }
            if nan_count > 0 {
                let y = col.y1 - g;
                let sw = Rect {
                    x0: col.x0,
                    y0: y,
                    x1: col.x0 + g,
                    y1: y + g,
                };
                canvas.fill_rect(sw, NAN_COLOR);
                labels.push((col.x0 + g + 2 * s, y, nan_text(nan_count)));
            }
            for (x, y, text) in labels {
                let text = fit_text(&text, col.x1 - x, scale);
                draw_text(img, x, y, &text, scale, TEXT_COLOR);
            }
            Some(bar)
        }
        Legend::Classes(classes) => {
            let row_h = g + 3 * s;
            let rows = ((col.y1 - body_top) / row_h).max(0) as usize;
            let shown = classes.len().min(MAX_LEGEND_CLASSES).min(rows);
            let cut = shown < classes.len();
            let shown = if cut { shown.saturating_sub(1) } else { shown };
            for (k, &c) in classes.iter().take(shown).enumerate() {
                let y = body_top + k as i64 * row_h;
                let [r, gr, b] = categorical(c);
                let sw = Rect {
                    x0: col.x0,
                    y0: y,
                    x1: col.x0 + g,
                    y1: y + g,
                };
                let mut canvas = Canvas {
                    buf: img,
                    width,
                    clip: full,
                };
                canvas.fill_rect(sw, [r, gr, b, 255]);
                draw_text(
                    img,
                    col.x0 + g + 3 * s,
                    y,
                    &c.to_string(),
                    scale,
                    TEXT_COLOR,
                );
            }
            if cut {
                let y = body_top + shown as i64 * row_h;
                let more = format!("+{} more", classes.len() - shown);
                let more = fit_text(&more, col.width(), scale);
                draw_text(img, col.x0, y, &more, scale, TEXT_COLOR);
            }
            None
        }
        Legend::Nothing => None,
    }
}

/// One-pixel frame just inside `r`.
fn draw_frame(canvas: &mut Canvas, r: Rect) {
    let c = [FRAME_COLOR[0], FRAME_COLOR[1], FRAME_COLOR[2], 255];
    canvas.fill_rect(Rect { y1: r.y0 + 1, ..r }, c);
    canvas.fill_rect(Rect { y0: r.y1 - 1, ..r }, c);
    canvas.fill_rect(Rect { x1: r.x0 + 1, ..r }, c);
    canvas.fill_rect(Rect { x0: r.x1 - 1, ..r }, c);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tick_formatting_is_compact() {
        let labels = |lo, hi, n| -> Vec<String> {
            tick_labels(lo, hi, n).into_iter().map(|(_, s)| s).collect()
        };
        assert_eq!(
            labels(0.0, 0.512, 5),
            ["0", "0.128", "0.256", "0.384", "0.512"]
        );
        assert_eq!(labels(0.0, 100.0, 5), ["0", "25", "50", "75", "100"]);
        assert_eq!(
            labels(-1e-3, 1e-3, 5),
            ["-1e-3", "-5e-4", "0", "5e-4", "1e-3"]
        );
        assert_eq!(
            labels(-0.001697, 0.001698, 5),
            ["-1.697e-3", "-8.48e-4", "0", "8.49e-4", "1.698e-3"]
        );
        assert_eq!(labels(1.23e-5, 2.0e-5, 2), ["1.23e-5", "2e-5"]);
        assert_eq!(labels(0.0, 3.0e6, 3), ["0", "1.5e6", "3e6"]);
        assert_eq!(labels(100.0, 100.5, 2), ["100", "100.5"]);
    }

    #[test]
    fn range_rules() -> Result<()> {
        assert_eq!(
            resolve_range(&[3.0, f64::NAN, -1.0, f64::INFINITY], None)?,
            (-1.0, 3.0)
        );
        let (lo, hi) = resolve_range(&[2.0, 2.0], None)?;
        assert!(lo < 2.0 && hi > 2.0 && (lo + hi - 4.0).abs() < 1e-12);
        assert_eq!(resolve_range(&[0.0], None)?, (-1e-3, 1e-3));
        assert_eq!(resolve_range(&[f64::NAN], None)?, (0.0, 1.0));
        assert_eq!(resolve_range(&[5.0], Some((0.0, 1.0)))?, (0.0, 1.0));
        assert!(resolve_range(&[], Some((1.0, 0.0))).is_err());
        assert!(resolve_range(&[], Some((f64::NAN, 0.0))).is_err());
        Ok(())
    }

    #[test]
    fn fit_text_cuts_with_ellipsis() {
        assert_eq!(fit_text("abcdef", 48, 1), "abcdef");
        assert_eq!(fit_text("abcdefgh", 48, 1), "abc...");
    }
}
