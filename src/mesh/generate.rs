//! Built-in 2D mesh generators, deterministic for a given seed, and the `builtin` spec parser.
//!
//! Unstructured triangulations ([`rectangle`], [`disk`]) are the Delaunay triangulation of a
//! Poisson-disk sample: boundary points are placed first at a spacing s in [r, 2r), then
//! Bridson's algorithm fills the interior with points at least r apart, trying k candidates on
//! the circle of radius r(1 + eps) around an active point (Roberts' variant, which packs more
//! densely than the annulus sampler). Because every point is at least r from every other and
//! the sample is nearly maximal (no empty disk of radius much above r), the Delaunay triangles
//! have angles of about 30 degrees or more: sin(theta_min) >= r / (2 R_max) with R_max the
//! largest circumradius. The domain is convex and every boundary point is a hull vertex, so the
//! Delaunay triangulation covers exactly the domain polygon and its triangle count is known
//! before triangulating: T = 2V - B - 2 (V points, B of them on the boundary). That count is
//! used to rescale r until T is within 3 % of the target.
//!
//! Structured meshes: [`quad_grid`] (nx x ny quadrilaterals) and [`split_square_grid`] (each
//! square split into 4 triangles through its centre: the "criss-cross" mesh M(n) of the
//! shallow-water specification, 4 nx ny cells and 2n(3n+1) edges for nx = ny = n).
//!
//! Boundary tags of rectangles: 1 "bottom" (y = y0), 2 "right" (x = x1), 3 "top" (y = y1),
//! 4 "left" (x = x0); disks: 1 "boundary". Region tag 1 "domain". Every generator returns a mesh
//! that went through [`validate`], with counter-clockwise elements.

use std::f64::consts::PI;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use spade::{DelaunayTriangulation, HasPosition, Point2, Triangulation};

use crate::error::{Error, Result};
use crate::mesh::model::{BoundaryFacet, ElementKind, Mesh};
use crate::mesh::validate::validate;

/// Boundary tag of the side y = y0 of generated rectangles.
pub const TAG_BOTTOM: i32 = 1;
/// Boundary tag of the side x = x1.
pub const TAG_RIGHT: i32 = 2;
/// Boundary tag of the side y = y1.
pub const TAG_TOP: i32 = 3;
/// Boundary tag of the side x = x0.
pub const TAG_LEFT: i32 = 4;
/// Boundary tag of the circle of generated disks.
pub const TAG_BOUNDARY: i32 = 1;
/// Region tag of all generated elements.
pub const TAG_DOMAIN: i32 = 1;

/// Default seed of the builtin specs.
pub const DEFAULT_SEED: u64 = 1;

/// Candidates tried around an active point before it retires (Bridson's k).
const CANDIDATES: usize = 16;

/// Points per r^2 that the sampler reaches in the interior, measured; used for the first guess of r.
const DENSITY: f64 = 0.885;

/// Largest target accepted (u32 indices, and about 100 bytes per triangle while generating).
const MAX_TARGET: usize = 200_000_000;

#[derive(Clone, Copy, Debug)]
enum Domain {
    Rect { x0: f64, x1: f64, y0: f64, y1: f64 },
    Disk { cx: f64, cy: f64, radius: f64 },
}

impl Domain {
    fn area(&self) -> f64 {
        match *self {
            Domain::Rect { x0, x1, y0, y1 } => (x1 - x0) * (y1 - y0),
            Domain::Disk { radius, .. } => PI * radius * radius,
        }
    }

    fn bbox(&self) -> (f64, f64, f64, f64) {
        match *self {
            Domain::Rect { x0, x1, y0, y1 } => (x0, x1, y0, y1),
            Domain::Disk { cx, cy, radius } => (cx - radius, cx + radius, cy - radius, cy + radius),
        }
    }

    /// Strictly inside (points on the boundary are placed separately).
    fn contains(&self, p: [f64; 2]) -> bool {
        match *self {
            Domain::Rect { x0, x1, y0, y1 } => p[0] > x0 && p[0] < x1 && p[1] > y0 && p[1] < y1,
            Domain::Disk { cx, cy, radius } => {
                let (dx, dy) = (p[0] - cx, p[1] - cy);
                dx * dx + dy * dy < radius * radius
            }
        }
    }

    /// Boundary points in counter-clockwise order at spacing in [r, 2r), with the tag of the
    /// segment that starts at each point.
    fn boundary(&self, r: f64) -> Vec<([f64; 2], i32)> {
        match *self {
            Domain::Rect { x0, x1, y0, y1 } => {
                let nx = ((x1 - x0) / r).floor().max(1.0) as usize;
                let ny = ((y1 - y0) / r).floor().max(1.0) as usize;
                let mut pts = Vec::with_capacity(2 * (nx + ny));
                let lerp = |a: f64, b: f64, i: usize, n: usize| a + (b - a) * i as f64 / n as f64;
                for i in 0..nx {
                    pts.push(([lerp(x0, x1, i, nx), y0], TAG_BOTTOM));
                }
                for j in 0..ny {
                    pts.push(([x1, lerp(y0, y1, j, ny)], TAG_RIGHT));
                }
                for i in 0..nx {
                    pts.push(([lerp(x1, x0, i, nx), y1], TAG_TOP));
                }
                for j in 0..ny {
                    pts.push(([x0, lerp(y1, y0, j, ny)], TAG_LEFT));
                }
                pts
            }
            Domain::Disk { cx, cy, radius } => {
                let n = (2.0 * PI * radius / r).floor().max(3.0) as usize;
                (0..n)
                    .map(|i| {
                        let t = 2.0 * PI * i as f64 / n as f64;
                        ([cx + radius * t.cos(), cy + radius * t.sin()], TAG_BOUNDARY)
                    })
                    .collect()
            }
        }
    }
}

/// A uniform background grid of square cells of side r / sqrt(2) for the sampler's "is any
/// point closer than r?" test. A cell's diagonal is r, so it holds at most one sample point
/// (all samples, boundary points included, are at least 0.82 r apart, see [`Domain::boundary`]);
/// the point's coordinates are stored in the cell itself (NaN = empty), so a query reads the
/// 5 x 5 block of cells around the candidate without chasing indices.
struct Grid {
    x0: f64,
    y0: f64,
    inv: f64,
    nx: usize,
    ny: usize,
    cells: Vec<[f64; 2]>,
}

impl Grid {
    fn new(bbox: (f64, f64, f64, f64), r: f64) -> Grid {
        let inv = std::f64::consts::SQRT_2 / r;
        let nx = (((bbox.1 - bbox.0) * inv).ceil() as usize).max(1) + 1;
        let ny = (((bbox.3 - bbox.2) * inv).ceil() as usize).max(1) + 1;
        Grid {
            x0: bbox.0,
            y0: bbox.2,
            inv,
            nx,
            ny,
            cells: vec![[f64::NAN; 2]; nx * ny],
        }
    }

    fn cell(&self, p: [f64; 2]) -> (usize, usize) {
        let i = ((p[0] - self.x0) * self.inv).floor().max(0.0) as usize;
        let j = ((p[1] - self.y0) * self.inv).floor().max(0.0) as usize;
        (i.min(self.nx - 1), j.min(self.ny - 1))
    }

    /// Store `p`; returns false (and stores nothing) if its cell is taken, which the spacing
    /// rules exclude but which is checked rather than assumed.
    fn insert(&mut self, p: [f64; 2]) -> bool {
        let (i, j) = self.cell(p);
        let c = &mut self.cells[j * self.nx + i];
        if c[0].is_nan() {
            *c = p;
            true
        } else {
            false
        }
    }

    /// True when no stored point is closer than r to `p`.
    fn is_free(&self, p: [f64; 2], r2: f64) -> bool {
        let (i, j) = self.cell(p);
        let (i0, i1) = (i.saturating_sub(2), (i + 2).min(self.nx - 1));
        for jj in j.saturating_sub(2)..=(j + 2).min(self.ny - 1) {
            let row = &self.cells[jj * self.nx + i0..=jj * self.nx + i1];
            for q in row {
                let (dx, dy) = (q[0] - p[0], q[1] - p[1]);
                // NaN (empty cell) compares false.
                if dx * dx + dy * dy < r2 {
                    return false;
                }
            }
        }
        true
    }
}

/// Poisson-disk sample of `domain` with spacing `r`: boundary points first (they are the first
/// `boundary.len()` points), then Bridson's algorithm seeded from them.
fn poisson_sample(domain: Domain, r: f64, seed: u64) -> (Vec<[f64; 2]>, Vec<i32>) {
    let boundary = domain.boundary(r);
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let area_bound = (domain.area() / (r * r) * 1.2) as usize + boundary.len() + 16;
    let mut pts: Vec<[f64; 2]> = Vec::with_capacity(area_bound);
    let mut grid = Grid::new(domain.bbox(), r);
    let mut tags = Vec::with_capacity(boundary.len());
    for (p, t) in &boundary {
        grid.insert(*p);
        pts.push(*p);
        tags.push(*t);
    }
    let r2 = r * r;
    let rc = r * (1.0 + 1e-7);
    // Candidate directions: a fixed fan of CANDIDATES unit vectors, rotated by a random angle
    // per point (one sin/cos pair per point instead of one per candidate).
    let fan: Vec<[f64; 2]> = (0..CANDIDATES)
        .map(|c| {
            let t = 2.0 * PI * c as f64 / CANDIDATES as f64;
            [t.cos(), t.sin()]
        })
        .collect();
    // Points are processed first-in first-out: the sample grows as a front from the boundary
    // inwards, which keeps the grid accesses local (much faster than picking active points at
    // random) without changing the minimum-distance property.
    let mut head = 0;
    while head < pts.len() {
        let p = pts[head];
        head += 1;
        let (s, c) = (rng.random::<f64>() * 2.0 * PI).sin_cos();
        for d in &fan {
            let q = [
                p[0] + rc * (c * d[0] - s * d[1]),
                p[1] + rc * (s * d[0] + c * d[1]),
            ];
            if domain.contains(q) && grid.is_free(q, r2) && grid.insert(q) {
                pts.push(q);
            }
        }
    }
    (pts, tags)
}

/// A spade vertex that remembers its index in our point list (bulk loading reorders vertices).
#[derive(Clone, Copy, Debug)]
struct IndexedPoint {
    p: Point2<f64>,
    id: u32,
}

impl HasPosition for IndexedPoint {
    type Scalar = f64;
    fn position(&self) -> Point2<f64> {
        self.p
    }
}

fn check_target(target: usize, what: &str) -> Result<()> {
    if !(2..=MAX_TARGET).contains(&target) {
        return Err(Error::Invalid(format!(
            "{what}: target element count {target} is out of range (2 to {MAX_TARGET})"
        )));
    }
    crate::memory::check_generated(what, target)
}

/// Triangulate a Poisson-disk sample of a convex domain with about `target` triangles.
fn unstructured(domain: Domain, target: usize, seed: u64, what: &str) -> Result<Mesh> {
    check_target(target, what)?;
    let area = domain.area();
    // T ~ 2V = 2 DENSITY A / r^2.
    let mut r = (2.0 * DENSITY * area / target as f64).sqrt();
    let clock = std::time::Instant::now();
    let (mut pts, mut tags) = poisson_sample(domain, r, seed);
    for _ in 0..4 {
        let t = (2 * pts.len()).saturating_sub(tags.len() + 2);
        let ratio = t as f64 / target as f64;
        if (ratio - 1.0).abs() <= 0.03 {
            break;
        }
        r *= ratio.sqrt();
        (pts, tags) = poisson_sample(domain, r, seed);
    }
    let vertices: Vec<IndexedPoint> = pts
        .iter()
        .enumerate()
        .map(|(i, p)| IndexedPoint {
            p: Point2::new(p[0], p[1]),
            id: i as u32,
        })
        .collect();
    log::debug!(
        "{what}: {} points ({} on the boundary) sampled in {:.3} s",
        pts.len(),
        tags.len(),
        clock.elapsed().as_secs_f64()
    );
    let dt: DelaunayTriangulation<IndexedPoint> = DelaunayTriangulation::bulk_load(vertices)
        .map_err(|e| Error::Invalid(format!("{what}: Delaunay triangulation failed: {e:?}")))?;
    log::debug!(
        "{what}: Delaunay triangulation done at {:.3} s",
        clock.elapsed().as_secs_f64()
    );
    let mut mesh = Mesh::new(2);
    mesh.points = pts.iter().map(|p| [p[0], p[1], 0.0]).collect();
    mesh.kinds.reserve(dt.num_inner_faces());
    mesh.offsets.reserve(dt.num_inner_faces());
    mesh.connectivity.reserve(3 * dt.num_inner_faces());
    mesh.region_tags.reserve(dt.num_inner_faces());
    for face in dt.inner_faces() {
        let [a, b, c] = face.vertices().map(|v| v.data().id);
        let (pa, pb, pc) = (pts[a as usize], pts[b as usize], pts[c as usize]);
        let cross = (pb[0] - pa[0]) * (pc[1] - pa[1]) - (pc[0] - pa[0]) * (pb[1] - pa[1]);
        let tri = if cross >= 0.0 { [a, b, c] } else { [a, c, b] };
        mesh.push_element(ElementKind::Triangle, &tri, TAG_DOMAIN);
    }
    let nb = tags.len();
    mesh.boundary_facets = (0..nb)
        .map(|i| BoundaryFacet {
            vertices: vec![i as u32, ((i + 1) % nb) as u32],
            tag: tags[i],
        })
        .collect();
    validate(&mut mesh)?;
    log::debug!(
        "{what}: {} triangles, validated at {:.3} s",
        mesh.num_elements(),
        clock.elapsed().as_secs_f64()
    );
    Ok(mesh)
}

fn check_rect(x0: f64, x1: f64, y0: f64, y1: f64, what: &str) -> Result<()> {
    if !(x0.is_finite() && x1.is_finite() && y0.is_finite() && y1.is_finite() && x1 > x0 && y1 > y0)
    {
        return Err(Error::Invalid(format!(
            "{what}: need finite x0 < x1 and y0 < y1, got [{x0}, {x1}] x [{y0}, {y1}]"
        )));
    }
    Ok(())
}

fn rect_names(mesh: &mut Mesh) {
    for (t, n) in [
        (TAG_BOTTOM, "bottom"),
        (TAG_RIGHT, "right"),
        (TAG_TOP, "top"),
        (TAG_LEFT, "left"),
    ] {
        mesh.physical_names.insert((1, t), n.to_string());
    }
    mesh.physical_names
        .insert((2, TAG_DOMAIN), "domain".to_string());
}

/// Unstructured Delaunay triangulation of [x0, x1] x [y0, y1] with about `target_elements`
/// triangles (within a few percent), deterministic for a given `seed`.
pub fn rectangle(
    x0: f64,
    x1: f64,
    y0: f64,
    y1: f64,
    target_elements: usize,
    seed: u64,
) -> Result<Mesh> {
    check_rect(x0, x1, y0, y1, "rectangle")?;
    let mut mesh = unstructured(
        Domain::Rect { x0, x1, y0, y1 },
        target_elements,
        seed,
        "rectangle",
    )?;
    rect_names(&mut mesh);
    Ok(mesh)
}

/// Unstructured Delaunay triangulation of the disk of centre (cx, cy) and `radius` (its
/// boundary is the inscribed polygon through the boundary points) with about `target_elements`
/// triangles, deterministic for a given `seed`.
pub fn disk(cx: f64, cy: f64, radius: f64, target_elements: usize, seed: u64) -> Result<Mesh> {
    if !(cx.is_finite() && cy.is_finite() && radius.is_finite() && radius > 0.0) {
        return Err(Error::Invalid(format!(
            "disk: need a finite centre and a positive radius, got ({cx}, {cy}), {radius}"
        )));
    }
    let mut mesh = unstructured(
        Domain::Disk { cx, cy, radius },
        target_elements,
        seed,
        "disk",
    )?;
    mesh.physical_names
        .insert((1, TAG_BOUNDARY), "boundary".to_string());
    mesh.physical_names
        .insert((2, TAG_DOMAIN), "domain".to_string());
    Ok(mesh)
}

/// Points of an (nx + 1) x (ny + 1) lattice, row by row (index j (nx + 1) + i), and the
/// boundary segments between them, tagged, counter-clockwise.
fn lattice(x0: f64, x1: f64, y0: f64, y1: f64, nx: usize, ny: usize) -> Mesh {
    let mut mesh = Mesh::new(2);
    let id = |i: usize, j: usize| (j * (nx + 1) + i) as u32;
    mesh.points.reserve((nx + 1) * (ny + 1));
    for j in 0..=ny {
        let y = if j == ny {
            y1
        } else {
            y0 + (y1 - y0) * j as f64 / ny as f64
        };
        for i in 0..=nx {
            let x = if i == nx {
                x1
            } else {
                x0 + (x1 - x0) * i as f64 / nx as f64
            };
            mesh.points.push([x, y, 0.0]);
        }
    }
    let mut seg = |a: u32, b: u32, tag: i32| {
        mesh.boundary_facets.push(BoundaryFacet {
            vertices: vec![a, b],
            tag,
        })
    };
    for i in 0..nx {
        seg(id(i, 0), id(i + 1, 0), TAG_BOTTOM);
    }
    for j in 0..ny {
        seg(id(nx, j), id(nx, j + 1), TAG_RIGHT);
    }
    for i in (0..nx).rev() {
        seg(id(i + 1, ny), id(i, ny), TAG_TOP);
    }
    for j in (0..ny).rev() {
        seg(id(0, j + 1), id(0, j), TAG_LEFT);
    }
    rect_names(&mut mesh);
    mesh
}

fn check_grid(nx: usize, ny: usize, what: &str) -> Result<()> {
    if nx == 0 || ny == 0 || nx.saturating_mul(ny) > MAX_TARGET / 4 {
        return Err(Error::Invalid(format!(
            "{what}: grid size {nx} x {ny} is out of range (each at least 1, product at most {})",
            MAX_TARGET / 4
        )));
    }
    Ok(())
}

/// Structured nx x ny quadrilateral grid of [x0, x1] x [y0, y1]; element (i, j) is number
/// j nx + i.
pub fn quad_grid(x0: f64, x1: f64, y0: f64, y1: f64, nx: usize, ny: usize) -> Result<Mesh> {
    check_rect(x0, x1, y0, y1, "quad_grid")?;
    check_grid(nx, ny, "quad_grid")?;
    crate::memory::check_generated(&format!("quad_grid {nx} x {ny}"), nx * ny)?;
    let mut mesh = lattice(x0, x1, y0, y1, nx, ny);
    let id = |i: usize, j: usize| (j * (nx + 1) + i) as u32;
    for j in 0..ny {
        for i in 0..nx {
            mesh.push_element(
                ElementKind::Quad,
                &[id(i, j), id(i + 1, j), id(i + 1, j + 1), id(i, j + 1)],
                TAG_DOMAIN,
            );
        }
    }
    validate(&mut mesh)?;
    Ok(mesh)
}

/// Structured "criss-cross" triangulation: [x0, x1] x [y0, y1] cut into nx x ny rectangles,
/// each split by both diagonals into 4 triangles around an added centre vertex. Square (i, j)
/// gives elements 4 (j nx + i) + 0..4 (bottom, right, top, left triangle); the centre vertices
/// follow the (nx + 1)(ny + 1) lattice vertices.
pub fn split_square_grid(x0: f64, x1: f64, y0: f64, y1: f64, nx: usize, ny: usize) -> Result<Mesh> {
    check_rect(x0, x1, y0, y1, "split_square_grid")?;
    check_grid(nx, ny, "split_square_grid")?;
    crate::memory::check_generated(&format!("split_square_grid {nx} x {ny}"), 4 * nx * ny)?;
    let mut mesh = lattice(x0, x1, y0, y1, nx, ny);
    let id = |i: usize, j: usize| (j * (nx + 1) + i) as u32;
    let base = mesh.points.len();
    for j in 0..ny {
        for i in 0..nx {
            let (a, c) = (
                mesh.points[id(i, j) as usize],
                mesh.points[id(i + 1, j + 1) as usize],
            );
            mesh.points
                .push([0.5 * (a[0] + c[0]), 0.5 * (a[1] + c[1]), 0.0]);
        }
    }
    for j in 0..ny {
        for i in 0..nx {
            let c = (base + j * nx + i) as u32;
            let (p00, p10, p11, p01) = (id(i, j), id(i + 1, j), id(i + 1, j + 1), id(i, j + 1));
            for (a, b) in [(p00, p10), (p10, p11), (p11, p01), (p01, p00)] {
                mesh.push_element(ElementKind::Triangle, &[a, b, c], TAG_DOMAIN);
            }
        }
    }
    validate(&mut mesh)?;
    Ok(mesh)
}

/// The accepted builtin specs, for messages and `--help` texts.
pub const BUILTIN_FORMS: &str =
    "rect, rect:N, rect:N@SEED (unit square, N triangles, default 2000), \
disk, disk:N, disk:N@SEED (unit disk, default 2000), quad:NXxNY (quadrilaterals on the unit \
square), cross:N (N x N squares split into 4 triangles each)";

/// Build a mesh from a builtin spec (see [`BUILTIN_FORMS`]).
pub fn builtin(spec: &str) -> Result<Mesh> {
    let bad = |why: &str| {
        Error::Invalid(format!(
            "bad builtin mesh '{spec}': {why}; accepted forms: {BUILTIN_FORMS}"
        ))
    };
    let (name, arg) = match spec.split_once(':') {
        Some((n, a)) => (n.trim(), Some(a.trim())),
        None => (spec.trim(), None),
    };
    let parse_n = |s: &str| {
        s.parse::<usize>()
            .map_err(|_| bad(&format!("'{s}' is not a positive whole number")))
    };
    let count_seed = |arg: Option<&str>| -> Result<(usize, u64)> {
        match arg {
            None => Ok((2000, DEFAULT_SEED)),
            Some(a) => {
                let (n, seed) = match a.split_once('@') {
                    Some((n, s)) => (
                        n,
                        s.parse::<u64>()
                            .map_err(|_| bad(&format!("seed '{s}' is not a whole number")))?,
                    ),
                    None => (a, DEFAULT_SEED),
                };
                Ok((parse_n(n)?, seed))
            }
        }
    };
    let mesh = match name {
        "rect" => {
            let (n, seed) = count_seed(arg)?;
            rectangle(0.0, 1.0, 0.0, 1.0, n, seed)
        }
        "disk" => {
            let (n, seed) = count_seed(arg)?;
            disk(0.0, 0.0, 1.0, n, seed)
        }
        "quad" => {
            let a = arg.ok_or_else(|| bad("quad needs a size like quad:40x20"))?;
            let (nx, ny) = a
                .split_once(['x', 'X'])
                .ok_or_else(|| bad("quad needs a size like quad:40x20"))?;
            quad_grid(0.0, 1.0, 0.0, 1.0, parse_n(nx)?, parse_n(ny)?)
        }
        "cross" => {
            let a = arg.ok_or_else(|| bad("cross needs a size like cross:50"))?;
            let n = parse_n(a)?;
            split_square_grid(0.0, 1.0, 0.0, 1.0, n, n)
        }
        _ => return Err(bad("unknown mesh name")),
    };
    // Parameter errors from the generators (sizes out of range) get the spec and the forms too.
    mesh.map_err(|e| match e {
        Error::Invalid(msg) => bad(&msg),
        other => other,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mesh::geometry::Geometry2d;
    use crate::mesh::topology::{Topology, NO_ELEMENT, UNTAGGED};

    /// Smallest interior angle of the triangles, in degrees.
    fn min_angle(m: &Mesh) -> f64 {
        let mut worst: f64 = 180.0;
        for e in 0..m.num_elements() {
            let v = m.element(e);
            for k in 0..3 {
                let a = m.points[v[k] as usize];
                let b = m.points[v[(k + 1) % 3] as usize];
                let c = m.points[v[(k + 2) % 3] as usize];
                let (u, w) = ([b[0] - a[0], b[1] - a[1]], [c[0] - a[0], c[1] - a[1]]);
                let cos = (u[0] * w[0] + u[1] * w[1]) / (u[0].hypot(u[1]) * w[0].hypot(w[1]));
                worst = worst.min(cos.clamp(-1.0, 1.0).acos().to_degrees());
            }
        }
        worst
    }

    /// The checks every 2D generated mesh must pass: positive areas summing to `area`, Euler's
    /// formula for a disk-like domain, manifold faces with normals from left to right,
    /// closed elements (sum of length times outward normal is zero) and a fully tagged boundary.
    fn check_2d(m: &Mesh, area: f64, area_tol: f64) -> (Topology, Geometry2d) {
        let topo = Topology::build(m).unwrap();
        let geo = Geometry2d::build(m, &topo);
        assert!(geo.areas.iter().all(|&a| a > 0.0), "clockwise element");
        let total: f64 = geo.areas.iter().sum();
        assert!(
            (total - area).abs() <= area_tol * area,
            "area {total} vs {area}"
        );
        let (v, e, f) = (m.num_points(), topo.num_faces(), m.num_elements());
        assert_eq!(v as i64 - e as i64 + f as i64, 1, "Euler V - E + F");
        let mut closure = vec![[0.0f64; 2]; f];
        for face in 0..e {
            let (l, r) = (topo.left[face] as usize, topo.right[face]);
            let (n, len) = (geo.normals[face], geo.lengths[face]);
            closure[l][0] += len * n[0];
            closure[l][1] += len * n[1];
            if r == NO_ELEMENT {
                assert_ne!(
                    topo.boundary_tag[face], UNTAGGED,
                    "untagged boundary face {face}"
                );
                continue;
            }
            let r = r as usize;
            closure[r][0] -= len * n[0];
            closure[r][1] -= len * n[1];
            let (cl, cr) = (geo.centroids[l], geo.centroids[r]);
            let dot = (cr[0] - cl[0]) * n[0] + (cr[1] - cl[1]) * n[1];
            assert!(
                dot > 0.0,
                "face {face}: normal does not point from left to right"
            );
        }
        // Test domains are of size ~1, so an absolute round-off bound is enough.
        for (el, c) in closure.iter().enumerate() {
            assert!(c[0].hypot(c[1]) < 1e-12, "element {el} not closed");
        }
        // Every interior face has two elements, every element its full set of faces.
        let interior = (0..e).filter(|&k| topo.right[k] != NO_ELEMENT).count();
        let slots: usize = m.kinds.iter().map(|k| k.num_faces()).sum();
        assert_eq!(2 * interior + topo.num_boundary_faces(), slots);
        (topo, geo)
    }

    #[test]
    fn rectangle_quality_count_and_tags() {
        for (target, seed) in [(2000, 1), (500, 7), (20_000, 3)] {
            let m = rectangle(-1.0, 2.0, 0.5, 1.5, target, seed).unwrap();
            let n = m.num_elements() as f64;
            assert!((n / target as f64 - 1.0).abs() < 0.1, "{n} for {target}");
            let (topo, geo) = check_2d(&m, 3.0, 1e-12);
            assert!(min_angle(&m) > 20.0, "min angle {}", min_angle(&m));
            // Boundary faces carry the tag of the side they lie on.
            for f in 0..topo.num_faces() {
                if topo.right[f] != NO_ELEMENT {
                    continue;
                }
                let [x, y] = geo.midpoints[f];
                let expected = if (y - 0.5).abs() < 1e-12 {
                    TAG_BOTTOM
                } else if (x - 2.0).abs() < 1e-12 {
                    TAG_RIGHT
                } else if (y - 1.5).abs() < 1e-12 {
                    TAG_TOP
                } else {
                    assert!((x + 1.0).abs() < 1e-12, "boundary face off the sides");
                    TAG_LEFT
                };
                assert_eq!(topo.boundary_tag[f], expected);
            }
            assert_eq!(m.boundary_tag_by_name("top"), Some(TAG_TOP));
            // The mesh is unstructured: vertex degrees vary.
            let degrees: std::collections::BTreeSet<usize> = (0..m.num_points())
                .map(|v| topo.vertex_neighbors.row(v).len())
                .collect();
            assert!(degrees.len() >= 4, "degrees {degrees:?}");
        }
    }

    #[test]
    fn generators_are_deterministic() {
        let a = rectangle(0.0, 1.0, 0.0, 1.0, 3000, 42).unwrap();
        let b = rectangle(0.0, 1.0, 0.0, 1.0, 3000, 42).unwrap();
        let c = rectangle(0.0, 1.0, 0.0, 1.0, 3000, 43).unwrap();
        assert_eq!(a.points, b.points);
        assert_eq!(a.connectivity, b.connectivity);
        assert_ne!(a.points, c.points);
        let d1 = disk(0.0, 0.0, 1.0, 1000, 5).unwrap();
        let d2 = disk(0.0, 0.0, 1.0, 1000, 5).unwrap();
        assert_eq!(d1.connectivity, d2.connectivity);
    }

    #[test]
    fn disk_area_boundary_and_quality() {
        let m = disk(1.0, -2.0, 0.5, 4000, 9).unwrap();
        assert!((m.num_elements() as f64 / 4000.0 - 1.0).abs() < 0.1);
        // The polygon through the boundary points is within 1 % of the circle's area.
        let (topo, geo) = check_2d(&m, PI * 0.25, 1e-2);
        assert!(min_angle(&m) > 20.0);
        for f in 0..topo.num_faces() {
            if topo.right[f] == NO_ELEMENT {
                assert_eq!(topo.boundary_tag[f], TAG_BOUNDARY);
                let [x, y] = geo.midpoints[f];
                let r = (x - 1.0).hypot(y + 2.0);
                assert!(r > 0.49 && r <= 0.5 + 1e-12);
            }
        }
    }

    #[test]
    fn quad_grid_structure() {
        let m = quad_grid(0.0, 2.0, 0.0, 1.0, 8, 4).unwrap();
        assert_eq!(m.num_elements(), 32);
        assert_eq!(m.num_points(), 45);
        let (topo, geo) = check_2d(&m, 2.0, 1e-14);
        assert_eq!(topo.num_faces(), 8 * 5 + 9 * 4);
        assert_eq!(topo.num_boundary_faces(), 24);
        assert!(geo.areas.iter().all(|&a| (a - 1.0 / 16.0).abs() < 1e-15));
    }

    #[test]
    fn split_square_grid_matches_spec_counts() {
        // Criss-cross mesh M(50) on [-5, 5]^2: 4 n^2 cells, 2n(3n + 1) edges, 4n boundary edges.
        let n = 50;
        let m = split_square_grid(-5.0, 5.0, -5.0, 5.0, n, n).unwrap();
        assert_eq!(m.num_elements(), 10_000);
        let (topo, geo) = check_2d(&m, 100.0, 1e-12);
        assert_eq!(topo.num_faces(), 15_100);
        assert_eq!(topo.num_boundary_faces(), 200);
        assert!(geo.areas.iter().all(|&a| (a - 0.01).abs() < 1e-14));
        // Element 4 (j n + i) + k lies in square (i, j).
        let c = geo.centroids[4 * (3 * n + 7) + 2];
        assert!(c[0] > -5.0 + 0.2 * 7.0 && c[0] < -5.0 + 0.2 * 8.0);
        assert!(c[1] > -5.0 + 0.2 * 3.0 && c[1] < -5.0 + 0.2 * 4.0);
    }

    #[test]
    fn bad_parameters_are_errors() {
        assert!(rectangle(1.0, 0.0, 0.0, 1.0, 100, 1).is_err());
        assert!(rectangle(0.0, 1.0, 0.0, f64::NAN, 100, 1).is_err());
        assert!(rectangle(0.0, 1.0, 0.0, 1.0, 0, 1).is_err());
        assert!(disk(0.0, 0.0, -1.0, 100, 1).is_err());
        assert!(quad_grid(0.0, 1.0, 0.0, 1.0, 0, 3).is_err());
        assert!(split_square_grid(0.0, 1.0, 0.0, 1.0, 3, 0).is_err());
        let err = builtin("rect:12x").unwrap_err().to_string();
        assert!(err.contains("rect:12x") && err.contains("cross:N"), "{err}");
    }

    #[test]
    fn small_targets_still_work() {
        for n in [2, 3, 10, 50] {
            let m = rectangle(0.0, 1.0, 0.0, 1.0, n, 1).unwrap();
            check_2d(&m, 1.0, 1e-12);
            let d = disk(0.0, 0.0, 1.0, n, 1).unwrap();
            assert!(d.num_elements() >= 1);
        }
    }
}
