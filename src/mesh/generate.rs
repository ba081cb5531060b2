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
    Ok(())
}

/// Triangulate a Poisson-disk sample of a convex domain with about `target` triangles.
fn unstructured(domain: Domain, target: usize, seed: u64, what: &str) -> Result<Mesh> {
    check_target(target, what)?;
    let area = domain.area();
    // T ~ 2V = 2 DENSITY A / r^2.
    let mut r = (2.0 * DENSITY * area / target as f64).sqrt();
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
    let dt: DelaunayTriangulation<IndexedPoint> = DelaunayTriangulation::bulk_load(vertices)
        .map_err(|e| Error::Invalid(format!("{what}: Delaunay triangulation failed: {e:?}")))?;
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
    let mut mesh = unstructured(Domain::Rect { x0, x1, y0, y1 }, target_elements, seed, "rectangle")?;
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
    let mut mesh = unstructured(Domain::Disk { cx, cy, radius }, target_elements, seed, "disk")?;
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
        let y = if j == ny { y1 } else { y0 + (y1 - y0) * j as f64 / ny as f64 };
        for i in 0..=nx {
            let x = if i == nx { x1 } else { x0 + (x1 - x0) * i as f64 / nx as f64 };
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
pub fn split_square_grid(
    x0: f64,
    x1: f64,
    y0: f64,
    y1: f64,
    nx: usize,
    ny: usize,
) -> Result<Mesh> {
    check_rect(x0, x1, y0, y1, "split_square_grid")?;
    check_grid(nx, ny, "split_square_grid")?;
    let mut mesh = lattice(x0, x1, y0, y1, nx, ny);
    let id = |i: usize, j: usize| (j * (nx + 1) + i) as u32;
    let base = mesh.points.len();
    for j in 0..ny {
        for i in 0..nx {
            let (a, c) = (mesh.points[id(i, j) as usize], mesh.points[id(i + 1, j + 1) as usize]);
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
pub const BUILTIN_FORMS: &str = "rect, rect:N, rect:N@SEED (unit square, N triangles, default 2000), \
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
    match name {
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
        _ => Err(bad("unknown mesh name")),
    }
}
