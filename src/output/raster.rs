//! Software rasterization primitives on an RGBA8 buffer: watertight triangle fill with
//! per-pixel shading, and anti-aliased line segments of any width.
//!
//! # Triangles
//! Vertices are snapped to a fixed-point grid of [`SUBPIXEL`] steps per pixel, so the edge
//! functions
//!
//! `E_ab(p) = (b.x - a.x) (p.y - a.y) - (b.y - a.y) (p.x - a.x)`
//!
//! are evaluated exactly in `i64`. After orienting each triangle so that its doubled area
//! `E_01(v2)` is positive, a pixel centre `p` is inside when all three `E >= 0`. Pixels exactly
//! on an edge are claimed by one side only (a top-left style tie rule that depends only on the
//! edge direction, and a shared edge runs in opposite directions in its two triangles), so
//! triangles sharing an edge neither leave cracks nor paint a pixel twice.
//!
//! The scan is a bounding-box walk with incremental edge functions: one add per edge per pixel.
//! The normalized barycentric coordinates are `l_i = E_i / (E_0 + E_1 + E_2)`, which the
//! shading closure receives for Gouraud interpolation.
//!
//! # Lines
//! A segment of half-width `h` covers pixel centre `c` by `clamp(h + 1/2 - d(c), 0, 1)`, where
//! `d` is the distance from `c` to the segment (round caps). This is a box-filtered coverage
//! estimate: cheap, anti-aliased, and correct for any slope and width.

/// Fixed-point steps per pixel (8 bits of subpixel precision, like GPU rasterizers).
pub const SUBPIXEL: i64 = 256;

/// A pixel rectangle `[x0, x1) x [y0, y1)` that drawing is clipped to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rect {
    pub x0: i64,
    pub y0: i64,
    pub x1: i64,
    pub y1: i64,
}

impl Rect {
    pub fn width(&self) -> i64 {
        self.x1 - self.x0
    }
    pub fn height(&self) -> i64 {
        self.y1 - self.y0
    }
}

/// An RGBA8 pixel buffer borrowed from an image, with its width and clip rectangle.
pub struct Canvas<'a> {
    pub buf: &'a mut [u8],
    pub width: i64,
    pub clip: Rect,
}

/// Snap a pixel-space coordinate to the fixed-point grid.
pub fn to_fixed(v: f64) -> i64 {
    (v * SUBPIXEL as f64).round() as i64
}

#[inline]
fn edge(a: [i64; 2], b: [i64; 2], p: [i64; 2]) -> i64 {
    (b[0] - a[0]) * (p[1] - a[1]) - (b[1] - a[1]) * (p[0] - a[0])
}

/// Tie rule for pixels exactly on edge `a -> b`: antisymmetric in the edge direction, so of
/// the two triangles sharing an edge exactly one includes its on-edge pixels.
#[inline]
fn owns_edge(a: [i64; 2], b: [i64; 2]) -> bool {
    let (dx, dy) = (b[0] - a[0], b[1] - a[1]);
    dy > 0 || (dy == 0 && dx < 0)
}

/// Visit every pixel of `clip` whose centre lies in the triangle with fixed-point vertices `v`
/// (pixel coordinates times [`SUBPIXEL`], y down), with the tie rules of the module doc:
/// `visit(x, y, l1, l2)` gets the pixel and its barycentric coordinates with respect to `v[1]`
/// and `v[2]` (`l0 = 1 - l1 - l2`). Degenerate triangles visit nothing. Returns the number of
/// pixels visited.
pub fn scan_triangle<F: FnMut(i64, i64, f64, f64)>(
    v: [[i64; 2]; 3],
    clip: Rect,
    mut visit: F,
) -> usize {
    let area = edge(v[0], v[1], v[2]);
    if area == 0 {
        return 0;
    }
    // Orient counter-clockwise in the edge-function sense; remember whether 1 and 2 swapped
    // so the barycentric coordinates handed to `visit` still refer to the caller's order.
    let (v, swapped, area) = if area < 0 {
        ([v[0], v[2], v[1]], true, -area)
    } else {
        (v, false, area)
    };
    let s = SUBPIXEL;
    let half = s / 2;
    let minx = v[0][0].min(v[1][0]).min(v[2][0]);
    let maxx = v[0][0].max(v[1][0]).max(v[2][0]);
    let miny = v[0][1].min(v[1][1]).min(v[2][1]);
    let maxy = v[0][1].max(v[1][1]).max(v[2][1]);
    // Pixel x covers centre x*s + s/2: first centre >= min, last centre <= max.
    let x_start = (minx - half + s - 1).div_euclid(s).max(clip.x0);
    let x_end = (maxx - half).div_euclid(s).min(clip.x1 - 1);
    let y_start = (miny - half + s - 1).div_euclid(s).max(clip.y0);
    let y_end = (maxy - half).div_euclid(s).min(clip.y1 - 1);
    if x_start > x_end || y_start > y_end {
        return 0;
    }
    // E_i is the edge opposite vertex i, so E_i / area is barycentric coordinate i.
    let edges = [(v[1], v[2]), (v[2], v[0]), (v[0], v[1])];
    let p0 = [x_start * s + half, y_start * s + half];
    let mut row = [0i64; 3];
    let mut dx = [0i64; 3];
    let mut dy = [0i64; 3];
    for (i, &(a, b)) in edges.iter().enumerate() {
        let bias = if owns_edge(a, b) { 0 } else { -1 };
        row[i] = edge(a, b, p0) + bias;
        dx[i] = -(b[1] - a[1]) * s;
        dy[i] = (b[0] - a[0]) * s;
    }
    let inv_area = 1.0 / area as f64;
    let mut count = 0;
    for y in y_start..=y_end {
        let mut w = row;
        let mut seen = false;
        for x in x_start..=x_end {
            if (w[0] | w[1] | w[2]) >= 0 {
                seen = true;
                let (l1, l2) = (w[1] as f64 * inv_area, w[2] as f64 * inv_area);
                if swapped {
                    visit(x, y, l2, l1)
                } else {
                    visit(x, y, l1, l2)
                }
                count += 1;
            } else if seen {
                // Triangles are convex: once the span is left it does not come back.
                break;
            }
            w[0] += dx[0];
            w[1] += dx[1];
            w[2] += dx[2];
        }
        row[0] += dy[0];
        row[1] += dy[1];
        row[2] += dy[2];
    }
    count
}

/// The rows `y_start..=y_end` of pixel centres a triangle with fixed-point vertices `v` can
/// cover (the same bounds [`scan_triangle`] walks), unclipped.
pub fn triangle_rows(v: &[[i64; 2]; 3]) -> (i64, i64) {
    let (s, half) = (SUBPIXEL, SUBPIXEL / 2);
    let miny = v[0][1].min(v[1][1]).min(v[2][1]);
    let maxy = v[0][1].max(v[1][1]).max(v[2][1]);
    (
        (miny - half + s - 1).div_euclid(s),
        (maxy - half).div_euclid(s),
    )
}

impl Canvas<'_> {
    /// Fill the triangle with fixed-point vertices `v` (pixel coordinates times [`SUBPIXEL`],
    /// y down). `shade(l1, l2)` returns the color of a pixel whose barycentric coordinates with
    /// respect to `v[1]` and `v[2]` are `l1`, `l2` (`l0 = 1 - l1 - l2`). Degenerate triangles
    /// draw nothing. Returns the number of pixels written.
    pub fn fill_triangle<F: FnMut(f64, f64) -> [u8; 4]>(
        &mut self,
        v: [[i64; 2]; 3],
        mut shade: F,
    ) -> usize {
        let (buf, width) = (&mut *self.buf, self.width);
        scan_triangle(v, self.clip, |x, y, l1, l2| {
            let i = ((y * width + x) * 4) as usize;
            buf[i..i + 4].copy_from_slice(&shade(l1, l2));
        })
    }

    /// Blend `color` with opacity `alpha * coverage` into pixel (x, y), if inside the clip.
    #[inline]
    fn blend(&mut self, x: i64, y: i64, color: [u8; 3], a: f64) {
        let c = self.clip;
        if x < c.x0 || x >= c.x1 || y < c.y0 || y >= c.y1 || a <= 0.0 {
            return;
        }
        let i = ((y * self.width + x) * 4) as usize;
        let px = &mut self.buf[i..i + 4];
        for (dst, &src) in px.iter_mut().zip(&color) {
            let old = f64::from(*dst);
            *dst = (old + (f64::from(src) - old) * a).round() as u8;
        }
        px[3] = 255;
    }

    /// Draw segment `a`-`b` (pixel coordinates, y down) of total width `2 * half_width` with
    /// round caps and anti-aliased borders, blending `color` at opacity `alpha`.
    pub fn draw_segment(
        &mut self,
        a: [f64; 2],
        b: [f64; 2],
        half_width: f64,
        color: [u8; 3],
        alpha: f64,
    ) {
        let (dx, dy) = (b[0] - a[0], b[1] - a[1]);
        let len2 = dx * dx + dy * dy;
        if !(len2.is_finite() && a[0].is_finite() && a[1].is_finite()) {
            return;
        }
        let reach = half_width + 1.0;
        // Distance from pixel centre (px, py) to the segment, clamped to its end points.
        let coverage = |px: f64, py: f64| {
            let t = if len2 > 0.0 {
                (((px - a[0]) * dx + (py - a[1]) * dy) / len2).clamp(0.0, 1.0)
            } else {
                0.0
            };
            let (qx, qy) = (a[0] + t * dx - px, a[1] + t * dy - py);
            (half_width + 0.5 - (qx * qx + qy * qy).sqrt()).clamp(0.0, 1.0)
        };
        let x_major = dx.abs() >= dy.abs();
        // Along the major axis step one pixel at a time; across it, scan the band of pixels the
        // thick line can touch: reach / cos(angle) on either side of the centre line.
        let (major_lo, major_hi, minor_reach) = if x_major {
            let cos = if len2 > 0.0 {
                dx.abs() / len2.sqrt()
            } else {
                1.0
            };
            (
                a[0].min(b[0]) - reach,
                a[0].max(b[0]) + reach,
                reach / cos.max(0.5) + 1.0,
            )
        } else {
            let cos = dy.abs() / len2.sqrt();
            (
                a[1].min(b[1]) - reach,
                a[1].max(b[1]) + reach,
                reach / cos.max(0.5) + 1.0,
            )
        };
        let (clip_lo, clip_hi) = if x_major {
            (self.clip.x0, self.clip.x1 - 1)
        } else {
            (self.clip.y0, self.clip.y1 - 1)
        };
        let m0 = (major_lo.floor() as i64).max(clip_lo);
        let m1 = (major_hi.ceil() as i64).min(clip_hi);
        for m in m0..=m1 {
            let mc = m as f64 + 0.5;
            // Centre-line position across the major axis at this step (clamped to the segment).
            let centre = if x_major {
                let t = if dx != 0.0 {
                    ((mc - a[0]) / dx).clamp(0.0, 1.0)
                } else {
                    0.0
                };
                a[1] + t * dy
            } else {
                let t = if dy != 0.0 {
                    ((mc - a[1]) / dy).clamp(0.0, 1.0)
                } else {
                    0.0
                };
                a[0] + t * dx
            };
            let n0 = (centre - minor_reach).floor() as i64;
            let n1 = (centre + minor_reach).ceil() as i64;
            for n in n0..=n1 {
                let (x, y) = if x_major { (m, n) } else { (n, m) };
                let cov = coverage(x as f64 + 0.5, y as f64 + 0.5);
                if cov > 0.0 {
                    self.blend(x, y, color, alpha * cov);
                }
            }
        }
    }

    /// Fill the pixel rectangle `r` (clipped) with an opaque color.
    pub fn fill_rect(&mut self, r: Rect, color: [u8; 4]) {
        let x0 = r.x0.max(self.clip.x0);
        let x1 = r.x1.min(self.clip.x1);
        let y0 = r.y0.max(self.clip.y0);
        let y1 = r.y1.min(self.clip.y1);
        for y in y0..y1 {
            for x in x0..x1 {
                let i = ((y * self.width + x) * 4) as usize;
                self.buf[i..i + 4].copy_from_slice(&color);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn canvas(buf: &mut [u8], w: i64, h: i64) -> Canvas<'_> {
        Canvas {
            buf,
            width: w,
            clip: Rect {
                x0: 0,
                y0: 0,
                x1: w,
                y1: h,
            },
        }
    }

    fn fx(p: [f64; 2]) -> [i64; 2] {
        [to_fixed(p[0]), to_fixed(p[1])]
    }

    #[test]
    fn shared_edges_cover_each_pixel_once() {
        // A fan of triangles around an off-grid centre with vertices exactly on pixel centres
        // and edges through pixel centres: every pixel of the square is written exactly once.
        let (w, h) = (40i64, 40i64);
        let mut buf = vec![0u8; (w * h * 4) as usize];
        let mut hits = vec![0u32; (w * h) as usize];
        let c = [20.5, 20.5];
        let ring = [
            [0.0, 0.0],
            [40.0, 0.0],
            [40.0, 40.0],
            [0.0, 40.0],
            [13.5, 40.0],
        ];
        let order = [0, 1, 2, 4, 3, 0];
        for k in 0..5 {
            let tri = [fx(c), fx(ring[order[k]]), fx(ring[order[k + 1]])];
            buf.fill(0);
            canvas(&mut buf, w, h).fill_triangle(tri, |_, _| [1, 1, 1, 1]);
            for (i, p) in buf.chunks_exact(4).enumerate() {
                hits[i] += u32::from(p[3]);
            }
        }
        assert!(
            hits.iter().all(|&n| n == 1),
            "cracks or overdraw: {:?}",
            hits.iter().filter(|&&n| n != 1).count()
        );
    }

    #[test]
    fn barycentrics_follow_caller_order() {
        let mut buf = vec![0u8; 16 * 16 * 4];
        let mut cv = canvas(&mut buf, 16, 16);
        // Clockwise in y-down pixel space, so the rasterizer swaps internally.
        let tri = [fx([0.0, 0.0]), fx([0.0, 16.0]), fx([16.0, 0.0])];
        let mut worst: f64 = 0.0;
        cv.fill_triangle(tri, |l1, l2| {
            worst = worst.max(l1.max(l2));
            [0, 0, 0, 255]
        });
        assert!(worst <= 1.0);
        let mut at = (0.0, 0.0);
        let mut buf2 = vec![0u8; 16 * 16 * 4];
        let mut cv2 = Canvas {
            buf: &mut buf2,
            width: 16,
            clip: Rect {
                x0: 0,
                y0: 14,
                x1: 1,
                y1: 15,
            },
        };
        cv2.fill_triangle(tri, |l1, l2| {
            at = (l1, l2);
            [0, 0, 0, 255]
        });
        // Pixel (0, 14) has centre (0.5, 14.5): close to v1 = (0, 16).
        assert!(at.0 > 0.85 && at.1 < 0.1, "{at:?}");
    }

    #[test]
    fn segment_is_antialiased_and_clipped() {
        let mut buf = vec![255u8; 20 * 20 * 4];
        let mut cv = canvas(&mut buf, 20, 20);
        cv.draw_segment([-5.0, 10.5], [30.0, 10.5], 0.5, [0, 0, 0], 1.0);
        cv.draw_segment([3.0, 2.0], [9.0, 17.0], 1.0, [0, 0, 0], 1.0);
        let dark_row = (0..20).all(|x| buf[((10 * 20 + x) * 4) as usize] < 128);
        assert!(dark_row);
    }
}
