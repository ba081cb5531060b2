//! Overlapping elements in a planar 2D mesh, whether or not they share an edge: two stacked
//! triangulations of one domain, a triangle inside another, a patch pasted over its neighbours.
//!
//! Broad phase: a uniform grid whose cell side is the mean of the elements' larger bounding-box
//! side; every element is listed in the cells its bounding box covers (a counting sort). Two
//! elements are compared only when their boxes overlap with positive area, and only in the
//! cell that holds the lower-left corner of the boxes' intersection, so each pair is tested
//! once. For meshes whose elements are of comparable size near each other this is O(n)
//! expected: each box covers a few cells and each cell holds a few boxes.
//!
//! Narrow phase, exact: the elements are convex and counter-clockwise (validation has
//! reoriented them and refused non-convex quadrilaterals). Two convex polygons have disjoint
//! interiors if and only if a line through an edge of one of them has the other polygon on its
//! closed outer side (the separating axis theorem in 2D). With the exact orientation predicate
//! orient(p, q, r) = (p - r) x (q - r) (Shewchuk's adaptive arithmetic, [`robust::orient2d`]),
//! elements that touch along an edge or at a vertex, or whose vertex lies on a neighbour's edge,
//! are never reported. An overlap is reported when its area (the one polygon clipped by the
//! other) exceeds [`DEGENERACY_TOLERANCE`] h^2, h the longer of the two elements' longest box
//! sides: the bound under which validation calls an element degenerate, so a hanging vertex
//! rounded a few ulps past its edge is touching, not overlapping.

use crate::error::{Error, Result};
use crate::mesh::model::Mesh;
use crate::mesh::model::DEGENERACY_TOLERANCE;

/// A grid cell budget: at most this many cell entries per element (boxes much larger than the
/// mean widen the cells until the lists fit).
const ENTRIES_PER_ELEMENT: usize = 16;

/// Fail when two elements of a planar 2D mesh overlap, naming both (as the file numbers them)
/// and a point inside both. The grid cells are split among the host's threads; the reported
/// pair is the first in cell order, whatever the thread count.
pub(crate) fn check_overlaps(mesh: &Mesh) -> Result<()> {
    let ne = mesh.num_elements();
    if mesh.dim != 2 || ne < 2 {
        return Ok(());
    }
    let started = std::time::Instant::now();
    let boxes: Vec<[f64; 4]> = (0..ne).map(|e| bounding_box(mesh, e)).collect();
    let grid = Grid::new(&boxes);
    let cells = grid.num_cells();
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .clamp(1, 64)
        .min(cells.div_ceil(4096));
    let chunk = cells.div_ceil(threads);
    let found: Vec<_> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|k| {
                let (grid, boxes) = (&grid, &boxes);
                let range = k * chunk..((k + 1) * chunk).min(cells);
                scope.spawn(move || first_overlap(mesh, grid, boxes, range))
            })
            .collect();
        workers.into_iter().map(|w| w.join()).collect()
    });
    let mut pairs = 0;
    for result in found {
        let (tested, hit) = result.unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        pairs += tested;
        if let Some((a, b, p)) = hit {
            return Err(Error::invalid_mesh(format!(
                "{} and {} overlap: both cover the point ({}, {}) (a tangled mesh, two \
                 stacked meshes or an element inside another)",
                mesh.element_label(a),
                mesh.element_label(b),
                p[0],
                p[1]
            )));
        }
    }
    log::debug!(
        "overlap check: {ne} elements, {cells} grid cells, {threads} threads, {pairs} box \
         pairs tested exactly, {:.3} s",
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

/// Two overlapping elements and a point inside both.
type Overlap = (usize, usize, [f64; 2]);

/// The first overlapping pair of the cells in `range`, in cell order, and the number of
/// pairs tested exactly.
fn first_overlap(
    mesh: &Mesh,
    grid: &Grid,
    boxes: &[[f64; 4]],
    range: std::ops::Range<usize>,
) -> (usize, Option<Overlap>) {
    let mut pairs = 0;
    for cell in range {
        let members = grid.members(cell);
        for (i, &a) in members.iter().enumerate() {
            let ba = &boxes[a as usize];
            for &b in &members[i + 1..] {
                let bb = &boxes[b as usize];
                let overlap = ba[0] < bb[2] && bb[0] < ba[2] && ba[1] < bb[3] && bb[1] < ba[3];
                if !overlap || grid.cell_of(ba[0].max(bb[0]), ba[1].max(bb[1])) != cell {
                    continue;
                }
                let (a, b) = (a.min(b) as usize, a.max(b) as usize);
                if share_an_edge(mesh.element(a), mesh.element(b)) {
                    continue;
                }
                pairs += 1;
                let (pa, pb) = (Polygon::of(mesh, a), Polygon::of(mesh, b));
                if !interiors_overlap(pa.corners(), pb.corners()) {
                    continue;
                }
                let (area, p) = common_region(pa.corners(), pb.corners());
                let h = [ba, bb]
                    .iter()
                    .map(|b| (b[2] - b[0]).max(b[3] - b[1]))
                    .fold(0.0, f64::max);
                if area > DEGENERACY_TOLERANCE * h * h {
                    return (pairs, Some((a, b, p)));
                }
            }
        }
    }
    (pairs, None)
}

/// True when two elements have a common edge (consecutive in both vertex cycles). Such
/// neighbours never overlap here: validation has made both counter-clockwise and convex, and
/// its fold check has seen them list the edge in opposite directions, so the edge's line
/// separates them.
fn share_an_edge(a: &[u32], b: &[u32]) -> bool {
    let (n, m) = (a.len(), b.len());
    (0..n).any(|i| {
        let (u, v) = (a[i], a[(i + 1) % n]);
        (0..m).any(|j| {
            let (x, y) = (b[j], b[(j + 1) % m]);
            (x == v && y == u) || (x == u && y == v)
        })
    })
}

/// An element's corners in the xy plane (3 or 4), counter-clockwise, without allocating.
struct Polygon {
    p: [[f64; 2]; 4],
    n: usize,
}

impl Polygon {
    fn of(mesh: &Mesh, e: usize) -> Polygon {
        let mut poly = Polygon {
            p: [[0.0; 2]; 4],
            n: 0,
        };
        for &v in mesh.element(e).iter().take(4) {
            let q = mesh.points[v as usize];
            poly.p[poly.n] = [q[0], q[1]];
            poly.n += 1;
        }
        poly
    }

    fn corners(&self) -> &[[f64; 2]] {
        &self.p[..self.n]
    }
}

/// (x min, y min, x max, y max) of element `e`.
fn bounding_box(mesh: &Mesh, e: usize) -> [f64; 4] {
    let mut b = [
        f64::INFINITY,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NEG_INFINITY,
    ];
    for &v in mesh.element(e) {
        let p = mesh.points[v as usize];
        b = [
            b[0].min(p[0]),
            b[1].min(p[1]),
            b[2].max(p[0]),
            b[3].max(p[1]),
        ];
    }
    b
}

/// orient(p, q, r) > 0 when r is left of the directed line p -> q; exact in sign.
fn orient(p: [f64; 2], q: [f64; 2], r: [f64; 2]) -> f64 {
    let c = |a: [f64; 2]| robust::Coord { x: a[0], y: a[1] };
    robust::orient2d(c(p), c(q), c(r))
}

/// True when some edge of the counter-clockwise convex polygon `a` has all of `b` on or right
/// of its line.
fn edge_separates(a: &[[f64; 2]], b: &[[f64; 2]]) -> bool {
    (0..a.len()).any(|i| {
        let (p, q) = (a[i], a[(i + 1) % a.len()]);
        b.iter().all(|&r| orient(p, q, r) <= 0.0)
    })
}

/// Exact: do the interiors of two counter-clockwise convex polygons intersect?
pub(crate) fn interiors_overlap(a: &[[f64; 2]], b: &[[f64; 2]]) -> bool {
    !edge_separates(a, b) && !edge_separates(b, a)
}

/// The area and a point of the intersection of two counter-clockwise convex polygons: `a`
/// clipped by each edge of `b` (Sutherland–Hodgman), its shoelace area and vertex mean (which
/// lies inside a convex polygon); zero area and `a`'s vertex mean if the clip is empty.
fn common_region(a: &[[f64; 2]], b: &[[f64; 2]]) -> (f64, [f64; 2]) {
    let mut poly = a.to_vec();
    for i in 0..b.len() {
        let (p, q) = (b[i], b[(i + 1) % b.len()]);
        let side = |r: [f64; 2]| (q[0] - p[0]) * (r[1] - p[1]) - (q[1] - p[1]) * (r[0] - p[0]);
        let mut out = Vec::with_capacity(poly.len() + 1);
        for k in 0..poly.len() {
            let (s, e) = (poly[k], poly[(k + 1) % poly.len()]);
            let (ds, de) = (side(s), side(e));
            if ds >= 0.0 {
                out.push(s);
            }
            if (ds >= 0.0) != (de >= 0.0) {
                let t = ds / (ds - de);
                out.push([s[0] + t * (e[0] - s[0]), s[1] + t * (e[1] - s[1])]);
            }
        }
        poly = out;
    }
    let mean = |p: &[[f64; 2]]| {
        let n = p.len() as f64;
        p.iter()
            .fold([0.0, 0.0], |m, v| [m[0] + v[0] / n, m[1] + v[1] / n])
    };
    let area = 0.5
        * (0..poly.len())
            .map(|k| {
                let (s, e) = (poly[k], poly[(k + 1) % poly.len()]);
                s[0] * e[1] - e[0] * s[1]
            })
            .sum::<f64>();
    if poly.is_empty() {
        (0.0, mean(a))
    } else {
        (area, mean(&poly))
    }
}

/// Elements listed by the uniform grid cells their bounding boxes cover (CSR).
struct Grid {
    origin: [f64; 2],
    /// Cell side.
    side: f64,
    nx: usize,
    ny: usize,
    offsets: Vec<u32>,
    members: Vec<u32>,
}

impl Grid {
    fn new(boxes: &[[f64; 4]]) -> Grid {
        let n = boxes.len();
        let mut lo = [f64::INFINITY; 2];
        let mut hi = [f64::NEG_INFINITY; 2];
        let mut mean_side = 0.0;
        for b in boxes {
            lo = [lo[0].min(b[0]), lo[1].min(b[1])];
            hi = [hi[0].max(b[2]), hi[1].max(b[3])];
            mean_side += (b[2] - b[0]).max(b[3] - b[1]) / n as f64;
        }
        let extent = (hi[0] - lo[0]).max(hi[1] - lo[1]);
        // At most about 4 cells per element, so the cell array stays O(n).
        let mut side = mean_side.max(extent / (4.0 * n as f64).sqrt());
        let budget = ENTRIES_PER_ELEMENT * n + 1024;
        loop {
            let mut grid = Grid {
                origin: lo,
                side,
                nx: ((hi[0] - lo[0]) / side).floor() as usize + 1,
                ny: ((hi[1] - lo[1]) / side).floor() as usize + 1,
                offsets: Vec::new(),
                members: Vec::new(),
            };
            let total: usize = boxes.iter().map(|b| grid.span(b).2).sum();
            if total > budget {
                side *= 2.0;
                continue;
            }
            grid.fill(boxes, total);
            return grid;
        }
    }

    fn num_cells(&self) -> usize {
        self.nx * self.ny
    }

    /// The cell index along one axis of coordinate `x` (clamped into the grid).
    fn index(&self, x: f64, axis: usize, n: usize) -> usize {
        (((x - self.origin[axis]) / self.side).floor().max(0.0) as usize).min(n - 1)
    }

    fn cell_of(&self, x: f64, y: f64) -> usize {
        self.index(y, 1, self.ny) * self.nx + self.index(x, 0, self.nx)
    }

    /// The x and y cell ranges a box covers, and their number of cells.
    fn span(&self, b: &[f64; 4]) -> ([usize; 2], [usize; 2], usize) {
        let x = [self.index(b[0], 0, self.nx), self.index(b[2], 0, self.nx)];
        let y = [self.index(b[1], 1, self.ny), self.index(b[3], 1, self.ny)];
        (x, y, (x[1] - x[0] + 1) * (y[1] - y[0] + 1))
    }

    /// Counting sort of the elements into the cells their boxes cover.
    fn fill(&mut self, boxes: &[[f64; 4]], total: usize) {
        let mut counts = vec![0u32; self.num_cells() + 1];
        fn visit(grid: &Grid, b: &[f64; 4], f: &mut dyn FnMut(usize)) {
            let (x, y, _) = grid.span(b);
            for iy in y[0]..=y[1] {
                for ix in x[0]..=x[1] {
                    f(iy * grid.nx + ix);
                }
            }
        }
        for b in boxes {
            visit(self, b, &mut |c| counts[c + 1] += 1);
        }
        for c in 0..self.num_cells() {
            counts[c + 1] += counts[c];
        }
        let mut next = counts.clone();
        let mut members = vec![0u32; total];
        for (e, b) in boxes.iter().enumerate() {
            visit(self, b, &mut |c| {
                members[next[c] as usize] = e as u32;
                next[c] += 1;
            });
        }
        self.offsets = counts;
        self.members = members;
    }

    fn members(&self, cell: usize) -> &[u32] {
        &self.members[self.offsets[cell] as usize..self.offsets[cell + 1] as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const UNIT: [[f64; 2]; 3] = [[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]];

    #[test]
    fn touching_polygons_do_not_overlap() {
        // Shared edge, shared vertex, a vertex on the other's edge (a T-junction) and disjoint.
        let shared_edge = [[1.0, 0.0], [1.0, 1.0], [0.0, 1.0]];
        let shared_vertex = [[1.0, 0.0], [2.0, 0.0], [2.0, 1.0]];
        let on_edge = [[0.25, 0.75], [1.0, 1.0], [0.2, 1.0]];
        let apart = [[2.0, 2.0], [3.0, 2.0], [2.0, 3.0]];
        for b in [shared_edge, shared_vertex, on_edge, apart] {
            assert!(!interiors_overlap(&UNIT, &b), "{b:?}");
            assert!(!interiors_overlap(&b, &UNIT), "{b:?}");
        }
    }

    #[test]
    fn overlapping_polygons_are_found_with_a_common_point() {
        let inside = [[0.1, 0.1], [0.2, 0.1], [0.1, 0.2]];
        let crossing = [[0.4, -0.5], [0.6, -0.5], [0.5, 0.5]];
        let same = UNIT;
        let quad = [[-0.5, -0.5], [0.5, -0.5], [0.5, 0.5], [-0.5, 0.5]];
        for b in [&inside[..], &crossing[..], &same[..], &quad[..]] {
            assert!(interiors_overlap(&UNIT, b), "{b:?}");
            assert!(interiors_overlap(b, &UNIT), "{b:?}");
            let (area, p) = common_region(&UNIT, b);
            assert!(area > 0.0);
            let strictly_inside = |poly: &[[f64; 2]]| {
                (0..poly.len()).all(|i| orient(poly[i], poly[(i + 1) % poly.len()], p) > 0.0)
            };
            assert!(
                strictly_inside(&UNIT) && strictly_inside(b),
                "{p:?} for {b:?}"
            );
        }
    }
}
