//! Structured and semi-structured mesh generators for tests and benchmarks of the coloring and
//! ordering machinery: 3D boxes of every element kind (tetrahedra, hexahedra, prisms, pyramids,
//! hybrids), closed triangulated surfaces (geodesic sphere, torus, genus-2 voxel surface) and
//! simple 2D grids (split squares with chosen or random diagonals, quads, periodic grids).
//!
//! Why these shapes: each one exercises a different case of face coloring. Split-square grids
//! with random diagonals give unstructured-looking element graphs cheaply at any size; closed
//! surfaces have no boundary faces, so coloring conflicts cannot escape through the boundary;
//! tori and the genus-2 surface are not planar, so a 3-edge-coloring of their dual graph is not
//! guaranteed to exist (a snark may hide there); hybrids mix kinds with different face counts.
//!
//! Every generator validates its arguments and returns [`Error::Invalid`] instead of
//! panicking. Elements follow the Gmsh local numbering of [`ElementKind`], with positive
//! orientation (counter-clockwise 2D elements, positive-volume 3D elements); surface triangles
//! are oriented with outward normals.

use crate::mesh::validate::{cross, dot, sub};
use std::collections::{HashMap, HashSet};

use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::error::{Error, Result};
use crate::mesh::model::{ElementKind, Mesh};
use crate::mesh::topology::{Topology, NO_ELEMENT};

/// How each square of a split-square grid is cut into two triangles.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Diagonals {
    /// Every square is cut along the (i, j)-(i+1, j+1) diagonal.
    Uniform,
    /// Each square picks one of the two diagonals at random (seeded).
    Random { seed: u64 },
}

/// How each cube of [`tet_box`] is split into tetrahedra.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TetSplit {
    /// Five tetrahedra per cube (a central one and four corners), mirrored on alternate cubes
    /// so that face diagonals match.
    Five,
    /// Six tetrahedra around the main diagonal (Kuhn / Freudenthal split).
    Six,
}

fn invalid(msg: impl Into<String>) -> Error {
    Error::Invalid(msg.into())
}

/// Reject grids whose vertex or element count would not fit the u32 indices of [`Mesh`].
fn check_size(what: &str, dims: &[usize], min: usize, points: u128, elements: u128) -> Result<()> {
    if let Some(d) = dims.iter().find(|&&d| d < min) {
        return Err(invalid(format!(
            "{what}: every cell count must be at least {min}, got {d}"
        )));
    }
    if points >= u32::MAX as u128 || elements >= u32::MAX as u128 {
        return Err(invalid(format!(
            "{what}: {points} points / {elements} elements do not fit 32-bit indices"
        )));
    }
    Ok(())
}

fn normalize(a: [f64; 3]) -> [f64; 3] {
    let n = dot(a, a).sqrt();
    if n > 0.0 {
        [a[0] / n, a[1] / n, a[2] / n]
    } else {
        a
    }
}

/// Unnormalized normal of triangle (a, b, c).
fn tri_normal(p: &[[f64; 3]], t: [u32; 3]) -> [f64; 3] {
    let (a, b, c) = (p[t[0] as usize], p[t[1] as usize], p[t[2] as usize]);
    cross(sub(b, a), sub(c, a))
}

fn seeded(seed: u64) -> ChaCha8Rng {
    ChaCha8Rng::seed_from_u64(seed)
}

/// Index of lattice point (i, j) of an (nx+1) x (ny+1) grid.
fn vid2(nx: usize, i: usize, j: usize) -> u32 {
    (j * (nx + 1) + i) as u32
}

/// Index of lattice point (i, j, k) of an (nx+1) x (ny+1) x (nz+1) grid.
fn vid3(nx: usize, ny: usize, i: usize, j: usize, k: usize) -> u32 {
    ((k * (ny + 1) + j) * (nx + 1) + i) as u32
}

/// The points of the unit square (`dims = [nx, ny]`) or cube (`[nx, ny, nz]`) cut into cells,
/// numbered by [`vid2`] / [`vid3`], once the lattice, `centers` (one extra point per cell)
/// and `per_cell` elements per cell are known to fit 32-bit indices. Room is reserved for the
/// elements.
fn unit_lattice(what: &str, dims: &[usize], per_cell: u128, centers: bool) -> Result<Mesh> {
    let cells: u128 = dims.iter().map(|&d| d as u128).product();
    let lattice: u128 = dims.iter().map(|&d| d as u128 + 1).product();
    let extra = if centers { cells } else { 0 };
    check_size(what, dims, 1, lattice + extra, per_cell * cells)?;
    let mut mesh = Mesh::new(dims.len());
    let elements = (per_cell * cells) as usize;
    mesh.kinds.reserve(elements);
    mesh.offsets.reserve(elements);
    mesh.region_tags.reserve(elements);
    mesh.points.reserve((lattice + extra) as usize);
    let [nx, ny, nz] = [dims[0], dims[1], dims.get(2).copied().unwrap_or(0)];
    for k in 0..=nz {
        for j in 0..=ny {
            for i in 0..=nx {
                let z = if nz == 0 { 0.0 } else { k as f64 / nz as f64 };
                mesh.points
                    .push([i as f64 / nx as f64, j as f64 / ny as f64, z]);
            }
        }
    }
    Ok(mesh)
}

/// Call `f(i, j, k)` for every cell of an `nx` x `ny` x `nz` grid, `i` fastest.
fn for_each_cell([nx, ny, nz]: [usize; 3], mut f: impl FnMut(usize, usize, usize)) {
    for k in 0..nz {
        for j in 0..ny {
            for i in 0..nx {
                f(i, j, k);
            }
        }
    }
}

/// The corners (v00, v10, v11, v01) of square (i, j) of an `nx`-wide 2D lattice.
fn square(nx: usize, i: usize, j: usize) -> [u32; 4] {
    [
        vid2(nx, i, j),
        vid2(nx, i + 1, j),
        vid2(nx, i + 1, j + 1),
        vid2(nx, i, j + 1),
    ]
}

/// The two counter-clockwise triangles of square (v00, v10, v11, v01): along v00-v11 when
/// `main` is true, else along v10-v01.
fn split_square(v00: u32, v10: u32, v11: u32, v01: u32, main: bool) -> [[u32; 3]; 2] {
    if main {
        [[v00, v10, v11], [v00, v11, v01]]
    } else {
        [[v00, v10, v01], [v10, v11, v01]]
    }
}

fn diagonal_picker(d: Diagonals) -> impl FnMut() -> bool {
    let mut rng = match d {
        Diagonals::Uniform => None,
        Diagonals::Random { seed } => Some(seeded(seed)),
    };
    move || match rng.as_mut() {
        None => true,
        Some(r) => r.random_bool(0.5),
    }
}

/// Unit square split into `nx` x `ny` squares, each cut into two counter-clockwise triangles.
///
/// With `nx = ny = 1378` and random diagonals this is the benchmark mesh of about 3.8M
/// triangles and 5.7M edges (the size of GK's rectangle mesh E).
pub fn tri_grid(nx: usize, ny: usize, diagonals: Diagonals) -> Result<Mesh> {
    let mut mesh = unit_lattice("tri_grid", &[nx, ny], 2, false)?;
    mesh.connectivity.reserve(6 * nx * ny);
    let mut pick = diagonal_picker(diagonals);
    for_each_cell([nx, ny, 1], |i, j, _| {
        let [v00, v10, v11, v01] = square(nx, i, j);
        for t in split_square(v00, v10, v11, v01, pick()) {
            mesh.push_element(ElementKind::Triangle, &t, 1);
        }
    });
    Ok(mesh)
}

/// Unit square split into `nx` x `ny` counter-clockwise quadrilaterals.
pub fn quad_grid(nx: usize, ny: usize) -> Result<Mesh> {
    let mut mesh = unit_lattice("quad_grid", &[nx, ny], 1, false)?;
    for_each_cell([nx, ny, 1], |i, j, _| {
        mesh.push_element(ElementKind::Quad, &square(nx, i, j), 1);
    });
    Ok(mesh)
}

/// Hybrid 2D grid: each square stays a quadrilateral or, with probability `tri_fraction`, is
/// cut into two triangles along a random diagonal.
pub fn tri_quad_grid(nx: usize, ny: usize, tri_fraction: f64, seed: u64) -> Result<Mesh> {
    if !(0.0..=1.0).contains(&tri_fraction) {
        return Err(invalid(format!(
            "tri_quad_grid: tri_fraction must be in [0, 1], got {tri_fraction}"
        )));
    }
    let mut mesh = unit_lattice("tri_quad_grid", &[nx, ny], 2, false)?;
    let mut rng = seeded(seed);
    for_each_cell([nx, ny, 1], |i, j, _| {
        let q @ [v00, v10, v11, v01] = square(nx, i, j);
        if rng.random_bool(tri_fraction) {
            for t in split_square(v00, v10, v11, v01, rng.random_bool(0.5)) {
                mesh.push_element(ElementKind::Triangle, &t, 1);
            }
        } else {
            mesh.push_element(ElementKind::Quad, &q, 1);
        }
    });
    Ok(mesh)
}

/// The split-square grid of `nx` x `ny` cells whose opposite sides are identified (vertex
/// (i, j) is vertex (i mod nx, j mod ny)): a triangulation of the torus, with point (i, j) at
/// `point(i, j)` and every triangle reversed when `reverse`. `nx` and `ny` must be at least 3.
fn periodic_grid(
    what: &str,
    [nx, ny]: [usize; 2],
    diagonals: Diagonals,
    point: impl Fn(usize, usize) -> [f64; 3],
    reverse: bool,
) -> Result<Mesh> {
    let cells = nx as u128 * ny as u128;
    check_size(what, &[nx, ny], 3, cells, 2 * cells)?;
    let mut mesh = Mesh::new(2);
    for_each_cell([nx, ny, 1], |i, j, _| mesh.points.push(point(i, j)));
    let id = |i: usize, j: usize| ((j % ny) * nx + (i % nx)) as u32;
    let mut pick = diagonal_picker(diagonals);
    for_each_cell([nx, ny, 1], |i, j, _| {
        let [v00, v10, v11, v01] = [id(i, j), id(i + 1, j), id(i + 1, j + 1), id(i, j + 1)];
        for [a, b, c] in split_square(v00, v10, v11, v01, pick()) {
            let t = if reverse { [a, c, b] } else { [a, b, c] };
            mesh.push_element(ElementKind::Triangle, &t, 1);
        }
    });
    Ok(mesh)
}

/// A 2D periodic (toroidal) triangulation: the split-square grid on the unit square with
/// opposite sides identified. Points lie on the grid (x = i / nx, y = j / ny); elements that
/// wrap around use the vertices of the opposite side, so the geometry of the wrapping
/// elements is not meaningful: this mesh is for connectivity (coloring, ordering) only.
/// `nx` and `ny` must be at least 3 so that no two triangles share more than one edge.
pub fn periodic_tri_grid(nx: usize, ny: usize, diagonals: Diagonals) -> Result<Mesh> {
    let point = |i: usize, j: usize| [i as f64 / nx as f64, j as f64 / ny as f64, 0.0];
    periodic_grid("periodic_tri_grid", [nx, ny], diagonals, point, false)
}

/// A closed triangulated torus surface in 3D (major radius 1, minor radius 0.4): the
/// periodic grid of [`periodic_tri_grid`] with `n_major` cells around the axis and `n_minor`
/// around the tube, mapped onto the torus. `dim` is 2 (a surface mesh) with z coordinates.
pub fn torus(n_major: usize, n_minor: usize, diagonals: Diagonals) -> Result<Mesh> {
    let (big_r, small_r) = (1.0f64, 0.4f64);
    let point = |i: usize, j: usize| {
        let phi = 2.0 * std::f64::consts::PI * j as f64 / n_minor as f64;
        let theta = 2.0 * std::f64::consts::PI * i as f64 / n_major as f64;
        let rho = big_r + small_r * phi.cos();
        [rho * theta.cos(), rho * theta.sin(), small_r * phi.sin()]
    };
    // With (theta, phi) increasing this parametrization has outward normal d/dtheta x d/dphi
    // pointing inward; reverse each triangle to orient it outward.
    periodic_grid("torus", [n_major, n_minor], diagonals, point, true)
}

/// The 12 vertices and 20 faces of the icosahedron with golden-ratio coordinates.
fn icosahedron() -> ([[f64; 3]; 12], [[usize; 3]; 20]) {
    let t = (1.0 + 5f64.sqrt()) / 2.0;
    let v = [
        [-1.0, t, 0.0],
        [1.0, t, 0.0],
        [-1.0, -t, 0.0],
        [1.0, -t, 0.0],
        [0.0, -1.0, t],
        [0.0, 1.0, t],
        [0.0, -1.0, -t],
        [0.0, 1.0, -t],
        [t, 0.0, -1.0],
        [t, 0.0, 1.0],
        [-t, 0.0, -1.0],
        [-t, 0.0, 1.0],
    ];
    let f = [
        [0, 11, 5],
        [0, 5, 1],
        [0, 1, 7],
        [0, 7, 10],
        [0, 10, 11],
        [1, 5, 9],
        [5, 11, 4],
        [11, 10, 2],
        [10, 7, 6],
        [7, 1, 8],
        [3, 9, 4],
        [3, 4, 2],
        [3, 2, 6],
        [3, 6, 8],
        [3, 8, 9],
        [4, 9, 5],
        [2, 4, 11],
        [6, 2, 10],
        [8, 6, 7],
        [9, 8, 1],
    ];
    (v, f)
}

/// Closed geodesic sphere: every icosahedron face is split into `freq`² triangles and the
/// points are projected onto the unit sphere; then a fraction `flip_fraction` of the edges
/// is flipped at random (seeded) so the element graph is no longer the regular one.
///
/// Counts: 20 freq² triangles, 30 freq² edges, 10 freq² + 2 vertices (`freq = 192` gives the
/// 1.1M-edge benchmark sphere). `dim` is 2 (a surface mesh).
pub fn sphere(freq: usize, flip_fraction: f64, seed: u64) -> Result<Mesh> {
    check_size(
        "sphere",
        &[freq],
        1,
        10 * (freq as u128).pow(2) + 2,
        20 * (freq as u128).pow(2),
    )?;
    let (iv, faces) = icosahedron();
    let n = freq;
    let mut mesh = Mesh::new(2);
    for p in iv {
        mesh.points.push(normalize(p));
    }
    // Points strictly inside each icosahedron edge, shared by its two faces, numbered from
    // the lower-indexed corner.
    let mut edge_base: HashMap<(usize, usize), u32> = HashMap::new();
    for f in &faces {
        for k in 0..3 {
            let (a, b) = (f[k].min(f[(k + 1) % 3]), f[k].max(f[(k + 1) % 3]));
            if edge_base.contains_key(&(a, b)) {
                continue;
            }
            edge_base.insert((a, b), mesh.points.len() as u32);
            for s in 1..n {
                let w = s as f64 / n as f64;
                let p = [
                    iv[a][0] * (1.0 - w) + iv[b][0] * w,
                    iv[a][1] * (1.0 - w) + iv[b][1] * w,
                    iv[a][2] * (1.0 - w) + iv[b][2] * w,
                ];
                mesh.points.push(normalize(p));
            }
        }
    }
    // Point at steps (i along A->B, j along A->C) of face (A, B, C).
    let mut grid = vec![0u32; (n + 1) * (n + 1)];
    for f in &faces {
        let [a, b, c] = *f;
        let edge_point = |u: usize, w: usize, s: usize| -> u32 {
            // s steps from u towards w, 0 < s < n.
            let (lo, hi) = (u.min(w), u.max(w));
            let from_lo = if u == lo { s } else { n - s };
            edge_base[&(lo, hi)] + (from_lo - 1) as u32
        };
        for i in 0..=n {
            for j in 0..=(n - i) {
                let id = if i == 0 && j == 0 {
                    a as u32
                } else if i == n {
                    b as u32
                } else if j == n {
                    c as u32
                } else if j == 0 {
                    edge_point(a, b, i)
                } else if i == 0 {
                    edge_point(a, c, j)
                } else if i + j == n {
                    edge_point(b, c, j)
                } else {
                    let (wi, wj) = (i as f64 / n as f64, j as f64 / n as f64);
                    let p = [
                        iv[a][0] + (iv[b][0] - iv[a][0]) * wi + (iv[c][0] - iv[a][0]) * wj,
                        iv[a][1] + (iv[b][1] - iv[a][1]) * wi + (iv[c][1] - iv[a][1]) * wj,
                        iv[a][2] + (iv[b][2] - iv[a][2]) * wi + (iv[c][2] - iv[a][2]) * wj,
                    ];
                    mesh.points.push(normalize(p));
                    (mesh.points.len() - 1) as u32
                };
                grid[i * (n + 1) + j] = id;
            }
        }
        let g = |i: usize, j: usize| grid[i * (n + 1) + j];
        for i in 0..n {
            for j in 0..(n - i) {
                push_outward(&mut mesh, [g(i, j), g(i + 1, j), g(i, j + 1)]);
                if i + j + 1 < n {
                    push_outward(&mut mesh, [g(i + 1, j), g(i + 1, j + 1), g(i, j + 1)]);
                }
            }
        }
    }
    if flip_fraction > 0.0 {
        flip_random_edges(&mut mesh, flip_fraction, seed, true)?;
    }
    Ok(mesh)
}

/// Push a triangle of a surface around the origin, oriented with its normal pointing away
/// from the origin.
fn push_outward(mesh: &mut Mesh, t: [u32; 3]) {
    let nrm = tri_normal(&mesh.points, t);
    let c = mesh.points[t[0] as usize];
    if dot(nrm, c) < 0.0 {
        mesh.push_element(ElementKind::Triangle, &[t[0], t[2], t[1]], 1);
    } else {
        mesh.push_element(ElementKind::Triangle, &t, 1);
    }
}

/// Flip a random set of edges of a triangle mesh (planar or surface, open or closed), in one
/// pass over the edges in random order: each interior edge is flipped with probability
/// `fraction` when (a) neither of its triangles was already changed in this pass, (b) both
/// end vertices keep at least 4 edges, (c) the new edge does not exist yet, and, when
/// `geometric` is set, (d) both new triangles keep the orientation of the old pair (no
/// inverted element). Returns the number of flips.
///
/// Triangles (a, b, c) and (b, a, d) sharing edge a-b become (c, a, d) and (d, b, c).
pub fn flip_random_edges(
    mesh: &mut Mesh,
    fraction: f64,
    seed: u64,
    geometric: bool,
) -> Result<usize> {
    if !mesh.kinds.iter().all(|&k| k == ElementKind::Triangle) {
        return Err(invalid(
            "flip_random_edges: mesh must contain only triangles",
        ));
    }
    if !(0.0..=1.0).contains(&fraction) {
        return Err(invalid(format!(
            "flip_random_edges: fraction must be in [0, 1], got {fraction}"
        )));
    }
    let topo = Topology::build(mesh)?;
    let nf = topo.num_faces();
    let mut rng = seeded(seed);
    let mut order: Vec<u32> = (0..nf as u32).collect();
    order.shuffle(&mut rng);
    let mut degree: Vec<u32> = (0..mesh.num_points())
        .map(|v| topo.vertex_neighbors.row(v).len() as u32)
        .collect();
    let mut touched = vec![false; mesh.num_elements()];
    let mut created: HashSet<(u32, u32)> = HashSet::new();
    let mut flips = 0;
    for f in order {
        let f = f as usize;
        let (l, r) = (topo.left[f] as usize, topo.right[f]);
        if r == NO_ELEMENT || touched[l] || touched[r as usize] || !rng.random_bool(fraction) {
            continue;
        }
        let r = r as usize;
        let fv = topo.face_vertices.row(f);
        let (a, b) = (fv[0], fv[1]);
        let third = |tri: &[u32]| tri.iter().copied().find(|&v| v != a && v != b);
        let (Some(c), Some(d)) = (third(mesh.element(l)), third(mesh.element(r))) else {
            continue;
        };
        if c == d || degree[a as usize] <= 4 || degree[b as usize] <= 4 {
            continue;
        }
        let key = (c.min(d), c.max(d));
        if topo
            .vertex_neighbors
            .row(c as usize)
            .binary_search(&d)
            .is_ok()
            || created.contains(&key)
        {
            continue;
        }
        let (t1, t2) = ([c, a, d], [d, b, c]);
        if geometric {
            let old = {
                let n1 = tri_normal(&mesh.points, [a, b, c]);
                let n2 = tri_normal(&mesh.points, [b, a, d]);
                [n1[0] + n2[0], n1[1] + n2[1], n1[2] + n2[2]]
            };
            if dot(tri_normal(&mesh.points, t1), old) <= 0.0
                || dot(tri_normal(&mesh.points, t2), old) <= 0.0
            {
                continue;
            }
        }
        let (ol, or) = (mesh.offsets[l] as usize, mesh.offsets[r] as usize);
        mesh.connectivity[ol..ol + 3].copy_from_slice(&t1);
        mesh.connectivity[or..or + 3].copy_from_slice(&t2);
        touched[l] = true;
        touched[r] = true;
        degree[a as usize] -= 1;
        degree[b as usize] -= 1;
        degree[c as usize] += 1;
        degree[d as usize] += 1;
        created.insert(key);
        flips += 1;
    }
    Ok(flips)
}

/// Closed surface of a union of unit voxels: every voxel face not shared with another voxel
/// becomes a quad, cut into two outward-oriented triangles along a random diagonal. The
/// voxel set must be face-connected with no two voxels meeting only along an edge or at a
/// vertex without a common neighbour (the plates built here satisfy that), so the surface is
/// a manifold. Unused lattice points are dropped.
fn voxel_surface(
    n: [usize; 3],
    inside: impl Fn(usize, usize, usize) -> bool,
    seed: u64,
) -> Result<Mesh> {
    let [nx, ny, nz] = n;
    let is_in = |i: isize, j: isize, k: isize| -> bool {
        i >= 0
            && j >= 0
            && k >= 0
            && (i as usize) < nx
            && (j as usize) < ny
            && (k as usize) < nz
            && inside(i as usize, j as usize, k as usize)
    };
    let mut rng = seeded(seed);
    let mut new_id = vec![u32::MAX; (nx + 1) * (ny + 1) * (nz + 1)];
    let mut mesh = Mesh::new(2);
    let mut point = |mesh: &mut Mesh, p: [usize; 3]| -> u32 {
        let g = vid3(nx, ny, p[0], p[1], p[2]) as usize;
        if new_id[g] == u32::MAX {
            new_id[g] = mesh.points.len() as u32;
            mesh.points.push([p[0] as f64, p[1] as f64, p[2] as f64]);
        }
        new_id[g]
    };
    for k in 0..nz {
        for j in 0..ny {
            for i in 0..nx {
                if !inside(i, j, k) {
                    continue;
                }
                let c = [i, j, k];
                for axis in 0..3 {
                    for side in [0usize, 1] {
                        let mut nb = [i as isize, j as isize, k as isize];
                        nb[axis] += if side == 1 { 1 } else { -1 };
                        if is_in(nb[0], nb[1], nb[2]) {
                            continue;
                        }
                        let (u, v) = ((axis + 1) % 3, (axis + 2) % 3);
                        let mut base = c;
                        base[axis] += side;
                        let mut q = [base; 4];
                        q[1][u] += 1;
                        q[2][u] += 1;
                        q[2][v] += 1;
                        q[3][v] += 1;
                        // (u, v, axis) is a cyclic permutation of (x, y, z): q is
                        // counter-clockwise seen from +axis, so reverse it on the low side.
                        if side == 0 {
                            q.swap(1, 3);
                        }
                        let ids = [
                            point(&mut mesh, q[0]),
                            point(&mut mesh, q[1]),
                            point(&mut mesh, q[2]),
                            point(&mut mesh, q[3]),
                        ];
                        let [a, b, cc, d] = ids;
                        let tris = if rng.random_bool(0.5) {
                            [[a, b, cc], [a, cc, d]]
                        } else {
                            [[a, b, d], [b, cc, d]]
                        };
                        for t in tris {
                            mesh.push_element(ElementKind::Triangle, &t, 1);
                        }
                    }
                }
            }
        }
    }
    if mesh.num_elements() == 0 {
        return Err(invalid("voxel surface: the voxel set is empty"));
    }
    Ok(mesh)
}

/// A closed genus-2 surface: the boundary of a plate with two square holes (a "figure 8"
/// block of 5 x 3 x 1 voxel blocks with holes at blocks (1, 1) and (3, 1)), each block made of
/// `scale`³ voxels, triangulated with random diagonals. `dim` is 2 (a surface mesh).
pub fn genus2_surface(scale: usize, seed: u64) -> Result<Mesh> {
    check_size(
        "genus2_surface",
        &[scale],
        1,
        (6 * scale as u128 + 1).pow(3),
        4 * (6 * scale as u128).pow(2) * 6,
    )?;
    let s = scale;
    voxel_surface(
        [5 * s, 3 * s, s],
        |i, j, _k| {
            let (bi, bj) = (i / s, j / s);
            !(bj == 1 && (bi == 1 || bi == 3))
        },
        seed,
    )
}

/// Tetrahedra of the unit cube with corners `c[b]`, bit 0 = +x, bit 1 = +y, bit 2 = +z.
fn cube_tets(split: TetSplit, parity: bool) -> Vec<[usize; 4]> {
    match split {
        TetSplit::Six => {
            // Paths from corner 0 to corner 7 along the axes in every order.
            let perms = [
                [1, 2, 4],
                [1, 4, 2],
                [2, 1, 4],
                [2, 4, 1],
                [4, 1, 2],
                [4, 2, 1],
            ];
            perms.iter().map(|p| [0, p[0], p[0] + p[1], 7]).collect()
        }
        TetSplit::Five if parity => {
            vec![
                [1, 2, 4, 7],
                [0, 1, 2, 4],
                [3, 1, 2, 7],
                [5, 1, 4, 7],
                [6, 2, 4, 7],
            ]
        }
        TetSplit::Five => {
            vec![
                [0, 3, 5, 6],
                [1, 0, 3, 5],
                [2, 0, 3, 6],
                [4, 0, 5, 6],
                [7, 3, 5, 6],
            ]
        }
    }
}

fn signed_volume(p: &[[f64; 3]], t: &[u32; 4]) -> f64 {
    let o = p[t[0] as usize];
    dot(
        sub(p[t[1] as usize], o),
        cross(sub(p[t[2] as usize], o), sub(p[t[3] as usize], o)),
    )
}

/// Push a tetrahedron with positive volume (swapping two vertices if needed).
fn push_tet(mesh: &mut Mesh, mut t: [u32; 4], tag: i32) {
    if signed_volume(&mesh.points, &t) < 0.0 {
        t.swap(1, 2);
    }
    mesh.push_element(ElementKind::Tetrahedron, &t, tag);
}

/// Corner `b` (bit 0 = +x, bit 1 = +y, bit 2 = +z) of cell (i, j, k).
fn corner(nx: usize, ny: usize, i: usize, j: usize, k: usize, b: usize) -> u32 {
    vid3(nx, ny, i + (b & 1), j + ((b >> 1) & 1), k + ((b >> 2) & 1))
}

/// Unit cube split into `nx` x `ny` x `nz` cells, each cut into 5 or 6 tetrahedra.
pub fn tet_box(nx: usize, ny: usize, nz: usize, split: TetSplit) -> Result<Mesh> {
    let mut mesh = unit_lattice("tet_box", &[nx, ny, nz], 6, false)?;
    for_each_cell([nx, ny, nz], |i, j, k| {
        for t in cube_tets(split, (i + j + k) % 2 == 0) {
            push_tet(&mut mesh, t.map(|b| corner(nx, ny, i, j, k, b)), 1);
        }
    });
    Ok(mesh)
}

/// Gmsh hexahedron of cell (i, j, k): bottom face counter-clockwise seen from +z, then top.
fn hex_of(nx: usize, ny: usize, i: usize, j: usize, k: usize) -> [u32; 8] {
    [0, 1, 3, 2, 4, 5, 7, 6].map(|b| corner(nx, ny, i, j, k, b))
}

/// Unit cube split into `nx` x `ny` x `nz` hexahedra.
pub fn hex_box(nx: usize, ny: usize, nz: usize) -> Result<Mesh> {
    let mut mesh = unit_lattice("hex_box", &[nx, ny, nz], 1, false)?;
    for_each_cell([nx, ny, nz], |i, j, k| {
        mesh.push_element(ElementKind::Hexahedron, &hex_of(nx, ny, i, j, k), 1);
    });
    Ok(mesh)
}

/// The two prisms of cell (i, j, k): the cell's bottom square split into two triangles along
/// the main (v00-v11) or the other diagonal, extruded one layer up.
fn prisms_of(nx: usize, ny: usize, i: usize, j: usize, k: usize, main: bool) -> [[u32; 6]; 2] {
    let c = |b| corner(nx, ny, i, j, k, b);
    split_square(0, 1, 3, 2, main).map(|t| {
        let [a, b, cc] = t.map(|x| x as usize);
        [c(a), c(b), c(cc), c(a + 4), c(b + 4), c(cc + 4)]
    })
}

/// Extruded triangles: the unit square split into `nx` x `ny` squares with random diagonals,
/// extruded into `nz` layers of prisms.
pub fn prism_box(nx: usize, ny: usize, nz: usize, diagonals: Diagonals) -> Result<Mesh> {
    let mut mesh = unit_lattice("prism_box", &[nx, ny, nz], 2, false)?;
    let mut pick = diagonal_picker(diagonals);
    let diag: Vec<bool> = (0..nx * ny).map(|_| pick()).collect();
    for_each_cell([nx, ny, nz], |i, j, k| {
        for p in prisms_of(nx, ny, i, j, k, diag[j * nx + i]) {
            mesh.push_element(ElementKind::Prism, &p, 1);
        }
    });
    Ok(mesh)
}

/// The 6 faces of cell (i, j, k) as corner quads in cyclic order, with the axis and side.
fn cube_faces() -> [(usize, usize, [usize; 4]); 6] {
    let mut out = [(0, 0, [0; 4]); 6];
    let mut n = 0;
    for axis in 0..3 {
        for side in 0..2 {
            let (u, v) = ((axis + 1) % 3, (axis + 2) % 3);
            let base = side << axis;
            out[n] = (
                axis,
                side,
                [
                    base,
                    base | (1 << u),
                    base | (1 << u) | (1 << v),
                    base | (1 << v),
                ],
            );
            n += 1;
        }
    }
    out
}

/// Push a pyramid over quad `q` (cyclic order) with apex `apex`, ordering the base so that it
/// is counter-clockwise seen from the apex (Gmsh convention).
fn push_pyramid(mesh: &mut Mesh, q: [u32; 4], apex: u32, tag: i32) {
    let p = &mesh.points;
    let nrm = cross(
        sub(p[q[1] as usize], p[q[0] as usize]),
        sub(p[q[2] as usize], p[q[0] as usize]),
    );
    let up = sub(p[apex as usize], p[q[0] as usize]);
    let v = if dot(nrm, up) >= 0.0 {
        [q[0], q[1], q[2], q[3], apex]
    } else {
        [q[0], q[3], q[2], q[1], apex]
    };
    mesh.push_element(ElementKind::Pyramid, &v, tag);
}

fn add_center(
    mesh: &mut Mesh,
    nx: usize,
    ny: usize,
    nz: usize,
    i: usize,
    j: usize,
    k: usize,
) -> u32 {
    mesh.points.push([
        (i as f64 + 0.5) / nx as f64,
        (j as f64 + 0.5) / ny as f64,
        (k as f64 + 0.5) / nz as f64,
    ]);
    (mesh.points.len() - 1) as u32
}

/// Unit cube split into `nx` x `ny` x `nz` cells, each cut into six pyramids around a vertex
/// at its center (one pyramid per cube face).
pub fn pyramid_box(nx: usize, ny: usize, nz: usize) -> Result<Mesh> {
    let mut mesh = unit_lattice("pyramid_box", &[nx, ny, nz], 6, true)?;
    for_each_cell([nx, ny, nz], |i, j, k| {
        let apex = add_center(&mut mesh, nx, ny, nz, i, j, k);
        for (_, _, q) in cube_faces() {
            let q = q.map(|b| corner(nx, ny, i, j, k, b));
            push_pyramid(&mut mesh, q, apex, 1);
        }
    });
    Ok(mesh)
}

/// Hybrid box mixing hexahedra, prisms, pyramids and tetrahedra conformingly.
///
/// Each column (i, j) of cells is either "quad-topped" (cells are hexahedra or 6-pyramid
/// cubes, both with quadrilateral faces all round) or "triangle-topped" (cells are prism
/// pairs or a mixed cube of 4 side pyramids and 4 tetrahedra on the top and bottom faces,
/// both with the column's diagonal on their z faces). Side faces are always whole squares,
/// so any two columns match, and cells of one column match along z. Kinds are drawn at
/// random (seeded); with `with_hex = false` quad-topped cells are pyramid cubes only, which
/// gives a prism/pyramid/tetrahedron hybrid like GK's Table 6 (5 face colors).
pub fn hybrid_box(nx: usize, ny: usize, nz: usize, with_hex: bool, seed: u64) -> Result<Mesh> {
    let mut mesh = unit_lattice("hybrid_box", &[nx, ny, nz], 8, true)?;
    let mut rng = seeded(seed);
    let columns: Vec<(bool, bool)> = (0..nx * ny)
        .map(|_| (rng.random_bool(0.5), rng.random_bool(0.5)))
        .collect();
    for_each_cell([nx, ny, nz], |i, j, k| {
        let (tri_topped, main_diag) = columns[j * nx + i];
        let second_kind = rng.random_bool(0.5);
        if !tri_topped && with_hex && !second_kind {
            mesh.push_element(ElementKind::Hexahedron, &hex_of(nx, ny, i, j, k), 2);
        } else if tri_topped && !second_kind {
            for p in prisms_of(nx, ny, i, j, k, main_diag) {
                mesh.push_element(ElementKind::Prism, &p, 3);
            }
        } else {
            let apex = add_center(&mut mesh, nx, ny, nz, i, j, k);
            for (axis, side, q) in cube_faces() {
                let q = q.map(|b| corner(nx, ny, i, j, k, b));
                if axis == 2 && tri_topped {
                    let z = (side * 4) as u32;
                    for t in split_square(z, z + 1, z + 3, z + 2, main_diag) {
                        let t = t.map(|b| corner(nx, ny, i, j, k, b as usize));
                        push_tet(&mut mesh, [t[0], t[1], t[2], apex], 5);
                    }
                } else {
                    push_pyramid(&mut mesh, q, apex, 4);
                }
            }
        }
    });
    Ok(mesh)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn euler_characteristic(mesh: &Mesh) -> i64 {
        let topo = Topology::build(mesh).expect("topology");
        mesh.num_points() as i64 - topo.num_faces() as i64 + mesh.num_elements() as i64
    }

    #[test]
    fn surfaces_are_closed_with_expected_genus() {
        let s = sphere(4, 0.2, 1).unwrap();
        assert_eq!(s.num_elements(), 20 * 16);
        assert_eq!(euler_characteristic(&s), 2);
        let t = torus(8, 5, Diagonals::Random { seed: 3 }).unwrap();
        assert_eq!(euler_characteristic(&t), 0);
        let g = genus2_surface(2, 4).unwrap();
        assert_eq!(euler_characteristic(&g), -2);
        for m in [&s, &t, &g] {
            let topo = Topology::build(m).unwrap();
            assert_eq!(topo.num_boundary_faces(), 0);
        }
    }

    #[test]
    fn surface_orientation_is_consistent() {
        // In a consistently oriented closed surface every edge is traversed once in each
        // direction by its two triangles.
        for m in [
            sphere(3, 0.3, 2).unwrap(),
            torus(6, 4, Diagonals::Random { seed: 1 }).unwrap(),
            genus2_surface(1, 5).unwrap(),
        ] {
            let mut directed: Vec<(u32, u32)> = Vec::new();
            for e in 0..m.num_elements() {
                let t = m.element(e);
                for k in 0..3 {
                    directed.push((t[k], t[(k + 1) % 3]));
                }
            }
            directed.sort_unstable();
            let n = directed.len();
            directed.dedup();
            assert_eq!(
                directed.len(),
                n,
                "an edge is traversed twice in one direction"
            );
        }
    }

    #[test]
    fn volume_meshes_fill_the_cube() {
        let meshes = [
            tet_box(3, 2, 2, TetSplit::Five).unwrap(),
            tet_box(2, 3, 2, TetSplit::Six).unwrap(),
            hex_box(3, 2, 2).unwrap(),
            prism_box(3, 2, 2, Diagonals::Random { seed: 1 }).unwrap(),
            pyramid_box(2, 2, 3).unwrap(),
            hybrid_box(4, 3, 3, true, 7).unwrap(),
        ];
        for m in &meshes {
            let topo = Topology::build(m).unwrap();
            // Total volume 1 and every element positively oriented (tets checked exactly).
            let mut vol = 0.0;
            for e in 0..m.num_elements() {
                let v = m.element(e);
                match m.kinds[e] {
                    ElementKind::Tetrahedron => {
                        let s = signed_volume(&m.points, &[v[0], v[1], v[2], v[3]]) / 6.0;
                        assert!(s > 0.0);
                        vol += s;
                    }
                    _ => {
                        // Split into tets through the centroid of each face fan.
                        let mut c = [0.0; 3];
                        for &x in v {
                            for (cd, pd) in c.iter_mut().zip(m.points[x as usize]) {
                                *cd += pd / v.len() as f64;
                            }
                        }
                        for f in m.kinds[e].local_faces() {
                            for q in 1..f.len() - 1 {
                                let (a, b, cc) = (
                                    m.points[v[f[0]] as usize],
                                    m.points[v[f[q]] as usize],
                                    m.points[v[f[q + 1]] as usize],
                                );
                                // An outward face makes (c, a, b, cc) positively oriented.
                                let s = dot(sub(a, c), cross(sub(b, c), sub(cc, c))) / 6.0;
                                assert!(s > 0.0, "{:?} face not outward", m.kinds[e]);
                                vol += s;
                            }
                        }
                    }
                }
            }
            assert!((vol - 1.0).abs() < 1e-9, "volume {vol}");
            // Conforming: every boundary face lies on the cube surface.
            for f in 0..topo.num_faces() {
                if topo.is_boundary(f) {
                    let on_side = (0..3).any(|d| {
                        topo.face_vertices.row(f).iter().all(|&v| {
                            let x = m.points[v as usize][d];
                            x.abs() < 1e-12 || (x - 1.0).abs() < 1e-12
                        })
                    });
                    assert!(on_side, "interior boundary face: mesh not conforming");
                }
            }
        }
        assert_eq!(meshes[5].element_kinds().len(), 4);
    }

    #[test]
    fn flips_keep_triangles_positive() {
        let mut m = tri_grid(10, 10, Diagonals::Uniform).unwrap();
        let n = flip_random_edges(&mut m, 0.5, 9, true).unwrap();
        assert!(n > 0);
        for e in 0..m.num_elements() {
            let v = m.element(e);
            let nrm = tri_normal(&m.points, [v[0], v[1], v[2]]);
            assert!(nrm[2] > 0.0);
        }
        Topology::build(&m).unwrap();
    }

    #[test]
    fn bad_arguments_are_errors() {
        assert!(tri_grid(0, 3, Diagonals::Uniform).is_err());
        assert!(periodic_tri_grid(2, 5, Diagonals::Uniform).is_err());
        assert!(tri_quad_grid(3, 3, 1.5, 0).is_err());
        assert!(tet_box(1 << 12, 1 << 12, 1 << 12, TetSplit::Six).is_err());
    }
}
