//! Element and face renumbering for coalesced GPU memory access, and [`prepare`], the one
//! preparation pipeline every solver consumes: mesh -> topology -> face coloring (seeded) ->
//! ordering -> [`OrderedMesh`].
//!
//! * reverse Cuthill–McKee from a George–Liu pseudo-peripheral node ([`rcm`](mod@rcm));
//! * Gibbs–Poole–Stockmeyer ([`gps`](mod@gps));
//! * GK Algorithm 5, numbering elements from the first face-color group ([`color`]);
//! * Algorithm 5 along chains of the first two color groups, coalescing both ([`color`]).
//!
//! [`apply_ordering`] applies one [`Ordering`] consistently to a mesh, its topology and its
//! face coloring: elements are permuted, faces are grouped by color (the GPU runs one pass
//! per group: faces of color c are `color_offsets[c]..color_offsets[c+1]`) and ordered within
//! each group, left/right elements are renamed, and the permutations are returned so solvers
//! can permute their own per-element and per-face arrays.
//!
//! Conventions: `new_to_old[new] = old` (the form [`Mesh::permute_elements`] takes) and
//! `old_to_new[old] = new`. After ordering, every interior face has `left < right` (the
//! [`Topology`] convention); a face whose elements had to be swapped for that is flagged in
//! `face_flipped`, and its vertex list is re-read from the new left element, so the face
//! normal still points from left to right.

pub mod color;
pub mod gps;
pub mod rcm;

pub use color::{chain_renumbering, color_renumbering, ColorRenumbering};
pub use gps::gps;
pub use rcm::{level_order, pseudo_peripheral_node, rcm};

use crate::color::faces::{check_face_coloring, color_faces, FaceColoring, FaceColoringOptions};
use crate::error::{Error, Result};
use crate::mesh::model::Mesh;
use crate::mesh::topology::{Csr, Topology, NO_ELEMENT};

const NONE: u32 = u32::MAX;

/// [`Ordering::ColorChains`] ranks elements in breadth-first order from a pseudo-peripheral
/// node ([`level_order`]: RCM's level structure at a third of RCM's cost, and the same chain
/// layout quality) and cuts chains into pieces spanning at most this many times that order's
/// bandwidth in rank ([`chain_renumbering`]'s `max_spread`). On the 626K-triangle DMR mesh
/// ([`color_locality`]): uncut, color 1 is 0.909 coalesced but color 2 misses 27 % more
/// sectors than under Algorithm 5; at 16x, 0.896 and as many misses as Algorithm 5; at 4x,
/// 0.75.
pub const CHAIN_SPREAD: u32 = 16;

/// An element/face ordering strategy. Faces are always grouped by color.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, clap::ValueEnum)]
pub enum Ordering {
    /// Elements as given; faces in their original order within each color.
    #[value(name = "original")]
    Original,
    /// Elements in reverse Cuthill–McKee order; faces by ascending left element per color.
    #[value(name = "rcm")]
    Rcm,
    /// Elements in Gibbs–Poole–Stockmeyer order; faces by ascending left element per color.
    #[value(name = "gps")]
    Gps,
    /// GK Algorithm 5 on the original face order.
    #[value(name = "color")]
    ColorRenumbered,
    /// GK Algorithm 5 with the first color group sorted by RCM position.
    #[value(name = "rcm+color")]
    RcmColorGrouped,
    /// GK Algorithm 5 with the first color group sorted by GPS position.
    #[value(name = "gps+color")]
    GpsColorGrouped,
    /// GK Algorithm 5 with the first color group ordered along chains of the first two
    /// colors, so the second color's pass is coalesced too; chains cut to bands of a
    /// breadth-first order and placed in that order.
    #[value(name = "chain+color")]
    ColorChains,
}

impl Ordering {
    /// Every ordering, for sweeps and benchmarks.
    pub const ALL: [Ordering; 7] = [
        Ordering::Original,
        Ordering::Rcm,
        Ordering::Gps,
        Ordering::ColorRenumbered,
        Ordering::RcmColorGrouped,
        Ordering::GpsColorGrouped,
        Ordering::ColorChains,
    ];

    /// The command-line name.
    pub fn name(self) -> &'static str {
        match self {
            Ordering::Original => "original",
            Ordering::Rcm => "rcm",
            Ordering::Gps => "gps",
            Ordering::ColorRenumbered => "color",
            Ordering::RcmColorGrouped => "rcm+color",
            Ordering::GpsColorGrouped => "gps+color",
            Ordering::ColorChains => "chain+color",
        }
    }
}

impl std::fmt::Display for Ordering {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Ordering {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        let key = s.trim().to_ascii_lowercase().replace(['_', '-'], "+");
        match key.as_str() {
            "original" | "none" | "natural" => Ok(Ordering::Original),
            "rcm" => Ok(Ordering::Rcm),
            "gps" => Ok(Ordering::Gps),
            "color" | "colour" | "gk" | "algorithm5" => Ok(Ordering::ColorRenumbered),
            "rcm+color" | "color+rcm" => Ok(Ordering::RcmColorGrouped),
            "gps+color" | "color+gps" => Ok(Ordering::GpsColorGrouped),
            "chain+color" | "color+chain" | "chain" | "chains" => Ok(Ordering::ColorChains),
            _ => Err(Error::Invalid(format!(
                "unknown ordering '{s}' (expected one of: {})",
                Ordering::ALL.map(|o| o.name()).join(", ")
            ))),
        }
    }
}

/// A mesh, topology and coloring renumbered by one [`Ordering`].
#[derive(Clone, Debug)]
pub struct OrderedMesh {
    pub ordering: Ordering,
    /// Elements permuted (points and boundary facets untouched).
    pub mesh: Mesh,
    /// Faces grouped by color, renumbered consistently with `mesh`.
    pub topo: Topology,
    /// Color of each new face (non-decreasing).
    pub coloring: FaceColoring,
    /// Faces of color c are `color_offsets[c]..color_offsets[c + 1]`.
    pub color_offsets: Vec<usize>,
    pub element_old_to_new: Vec<u32>,
    pub element_new_to_old: Vec<u32>,
    pub face_old_to_new: Vec<u32>,
    pub face_new_to_old: Vec<u32>,
    /// Per new face: left and right were swapped relative to the input topology.
    pub face_flipped: Vec<bool>,
}

impl OrderedMesh {
    /// Faces of color `c` as a range of new face indices.
    pub fn faces_of_color(&self, c: usize) -> std::ops::Range<usize> {
        self.color_offsets[c]..self.color_offsets[c + 1]
    }

    /// Bandwidth of the element adjacency in the new numbering.
    pub fn bandwidth(&self) -> usize {
        bandwidth(&self.topo.element_adjacency(self.mesh.num_elements()), None)
    }
}

/// How [`prepare`] colors and orders a mesh.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct PrepareOptions {
    /// Element/face ordering applied after the coloring.
    pub ordering: Ordering,
    /// Seed of the face coloring ([`FaceColoringOptions::seed`]): the same mesh, seed and
    /// ordering give the same [`OrderedMesh`].
    pub seed: u64,
}

impl PrepareOptions {
    pub fn new(ordering: Ordering, seed: u64) -> PrepareOptions {
        PrepareOptions { ordering, seed }
    }
}

impl Default for PrepareOptions {
    /// [`Ordering::Original`], seed 0 (the face coloring's default seed).
    fn default() -> Self {
        PrepareOptions {
            ordering: Ordering::Original,
            seed: FaceColoringOptions::default().seed,
        }
    }
}

/// The preparation pipeline: the colored, ordered mesh every solver consumes. Its steps:
///
/// 1. the face topology of `mesh` ([`Topology::build`]);
/// 2. a proper face coloring with the seed `opts.seed` ([`color_faces`]; the GPU runs one
///    pass per color);
/// 3. `opts.ordering` applied to the mesh, topology and coloring together ([`apply_ordering`]).
///
/// Callers with a coloring of their own (another algorithm, a fixed number of colors) call
/// [`apply_ordering`] directly.
pub fn prepare(mesh: &Mesh, opts: &PrepareOptions) -> Result<OrderedMesh> {
    prepare_timed(mesh, opts).map(|(om, _)| om)
}

/// Wall-clock seconds of the steps of [`prepare`].
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PrepareTimes {
    /// Face topology ([`Topology::build`]).
    pub topology: f64,
    /// Face coloring ([`color_faces`]).
    pub coloring: f64,
    /// Ordering applied to mesh, topology and coloring ([`apply_ordering`]).
    pub ordering: f64,
}

/// [`prepare`], timing each of its steps.
pub fn prepare_timed(mesh: &Mesh, opts: &PrepareOptions) -> Result<(OrderedMesh, PrepareTimes)> {
    let started = std::time::Instant::now();
    let topo = Topology::build(mesh)?;
    let topology = started.elapsed().as_secs_f64();
    let started = std::time::Instant::now();
    let coloring = color_faces(mesh, &topo, &FaceColoringOptions::with_seed(opts.seed))?;
    let color_seconds = started.elapsed().as_secs_f64();
    let started = std::time::Instant::now();
    let om = apply_ordering(mesh, &topo, &coloring, opts.ordering)?;
    let times = PrepareTimes {
        topology,
        coloring: color_seconds,
        ordering: started.elapsed().as_secs_f64(),
    };
    Ok((om, times))
}

/// Apply `ordering` to `mesh`, its topology `topo` and a proper face coloring of it.
pub fn apply_ordering(
    mesh: &Mesh,
    topo: &Topology,
    coloring: &FaceColoring,
    ordering: Ordering,
) -> Result<OrderedMesh> {
    let ne = mesh.num_elements();
    let nf = topo.num_faces();
    if topo.element_faces.num_rows() != ne && nf > 0 {
        return Err(Error::Invalid(format!(
            "ordering: topology has {} elements, mesh has {ne}",
            topo.element_faces.num_rows()
        )));
    }
    check_face_coloring(topo, &coloring.colors)
        .map_err(|e| Error::Invalid(format!("ordering needs a proper face coloring: {e}")))?;
    let k = coloring.num_colors;
    if let Some(f) = coloring.colors.iter().position(|&c| c as usize >= k) {
        return Err(Error::Invalid(format!(
            "ordering: face {f} has color {} but the coloring has {k} colors",
            coloring.colors[f]
        )));
    }

    let adjacency = || topo.element_adjacency(ne);
    let (element_new_to_old, first_group, color_map) = match ordering {
        Ordering::Original => ((0..ne as u32).collect(), None, identity_map(k)),
        Ordering::Rcm => (rcm(&adjacency()), None, identity_map(k)),
        Ordering::Gps => (gps(&adjacency()), None, identity_map(k)),
        Ordering::ColorRenumbered | Ordering::RcmColorGrouped | Ordering::GpsColorGrouped => {
            let rank = match ordering {
                Ordering::RcmColorGrouped => Some(invert_permutation(&rcm(&adjacency()))),
                Ordering::GpsColorGrouped => Some(invert_permutation(&gps(&adjacency()))),
                _ => None,
            };
            let r = color_renumbering(topo, ne, &coloring.colors, k, rank.as_deref())?;
            (r.element_new_to_old, Some(r.first_group), r.color_map)
        }
        Ordering::ColorChains => {
            let adj = adjacency();
            let rank = invert_permutation(&level_order(&adj));
            let bw = bandwidth(&adj, Some(&rank)).max(1);
            let spread = u32::try_from(bw)
                .unwrap_or(u32::MAX)
                .saturating_mul(CHAIN_SPREAD);
            let r = chain_renumbering(topo, ne, &coloring.colors, k, Some(&rank), Some(spread))?;
            (r.element_new_to_old, Some(r.first_group), r.color_map)
        }
    };
    let element_old_to_new = invert_permutation(&element_new_to_old);
    let colors: Vec<u8> = coloring
        .colors
        .iter()
        .map(|&c| color_map[c as usize])
        .collect();
    let by_left = ordering != Ordering::Original;
    let (face_new_to_old, color_offsets) = order_faces(
        topo,
        &colors,
        k,
        &element_old_to_new,
        first_group.as_deref(),
        by_left,
    );
    let face_old_to_new = invert_permutation(&face_new_to_old);

    let new_mesh = permuted_mesh(mesh, &element_new_to_old);
    let (new_topo, face_flipped) = permute_topology(
        &new_mesh,
        topo,
        &element_old_to_new,
        &element_new_to_old,
        &face_new_to_old,
        &face_old_to_new,
    );
    let new_colors: Vec<u8> = face_new_to_old
        .iter()
        .map(|&f| colors[f as usize])
        .collect();
    let counts = (0..k)
        .map(|c| color_offsets[c + 1] - color_offsets[c])
        .collect();
    let new_coloring = FaceColoring {
        colors: new_colors,
        num_colors: k,
        counts,
        target_colors: coloring.target_colors,
        fallback: coloring.fallback,
        stats: coloring.stats.clone(),
    };
    Ok(OrderedMesh {
        ordering,
        mesh: new_mesh,
        topo: new_topo,
        coloring: new_coloring,
        color_offsets,
        element_old_to_new,
        element_new_to_old,
        face_old_to_new,
        face_new_to_old,
        face_flipped,
    })
}

fn identity_map(k: usize) -> Vec<u8> {
    (0..k as u8).collect()
}

/// Faces grouped by color; `first_group` (if any) fixes the order of color 0; other groups
/// are sorted by new left element (the lower new number of the two) when `by_left`, else kept
/// in original order. Returns `new -> old` and the color offsets.
fn order_faces(
    topo: &Topology,
    colors: &[u8],
    k: usize,
    old_to_new: &[u32],
    first_group: Option<&[u32]>,
    by_left: bool,
) -> (Vec<u32>, Vec<usize>) {
    let nf = topo.num_faces();
    let mut offsets = vec![0usize; k + 1];
    for &c in colors {
        offsets[c as usize + 1] += 1;
    }
    for c in 0..k {
        offsets[c + 1] += offsets[c];
    }
    // Stable bucketing by color.
    let mut order = vec![0u32; nf];
    let mut fill = offsets.clone();
    for (f, &c) in colors.iter().enumerate() {
        order[fill[c as usize]] = f as u32;
        fill[c as usize] += 1;
    }
    let new_left = |f: u32| -> u32 {
        let f = f as usize;
        let l = old_to_new[topo.left[f] as usize];
        let r = topo.right[f];
        if r == NO_ELEMENT {
            l
        } else {
            l.min(old_to_new[r as usize])
        }
    };
    // Within a color class every element appears at most once, so the new left elements are
    // distinct and a direct placement by left element sorts the class in O(elements).
    let mut slot = vec![NONE; old_to_new.len()];
    for c in 0..k {
        let group = &mut order[offsets[c]..offsets[c + 1]];
        if c == 0 {
            if let Some(fg) = first_group {
                group.copy_from_slice(fg);
                continue;
            }
        }
        if !by_left {
            continue;
        }
        let mut distinct = true;
        for &f in group.iter() {
            let l = new_left(f) as usize;
            if slot[l] != NONE {
                distinct = false;
            }
            slot[l] = f;
        }
        if distinct {
            let mut i = 0;
            for s in slot.iter_mut() {
                if *s != NONE {
                    group[i] = *s;
                    i += 1;
                    *s = NONE;
                }
            }
        } else {
            slot.iter_mut().for_each(|s| *s = NONE);
            group.sort_by_key(|&f| new_left(f));
        }
    }
    (order, offsets)
}

/// The topology of the permuted mesh, gathered from the old one (no rebuild): left/right
/// renamed and swapped where needed so that left < right, faces in the new order.
fn permute_topology(
    new_mesh: &Mesh,
    topo: &Topology,
    el_o2n: &[u32],
    el_n2o: &[u32],
    face_n2o: &[u32],
    face_o2n: &[u32],
) -> (Topology, Vec<bool>) {
    let nf = face_n2o.len();
    let mut t = Topology {
        left: Vec::with_capacity(nf),
        right: Vec::with_capacity(nf),
        left_local: Vec::with_capacity(nf),
        right_local: Vec::with_capacity(nf),
        boundary_tag: Vec::with_capacity(nf),
        vertex_neighbors: topo.vertex_neighbors.clone(),
        ..Default::default()
    };
    let mut flipped = Vec::with_capacity(nf);
    let mut fv_offsets = Vec::with_capacity(nf + 1);
    let mut fv_indices = Vec::with_capacity(topo.face_vertices.indices.len());
    fv_offsets.push(0u32);
    for &old in face_n2o {
        let f = old as usize;
        let l = el_o2n[topo.left[f] as usize];
        let r = topo.right[f];
        let r = if r == NO_ELEMENT {
            NO_ELEMENT
        } else {
            el_o2n[r as usize]
        };
        let (ll, rl) = (topo.left_local[f], topo.right_local[f]);
        if r != NO_ELEMENT && r < l {
            t.left.push(r);
            t.right.push(l);
            t.left_local.push(rl);
            t.right_local.push(ll);
            let verts = new_mesh.element(r as usize);
            for &lv in new_mesh.kinds[r as usize].local_faces()[rl as usize] {
                fv_indices.push(verts[lv]);
            }
            flipped.push(true);
        } else {
            t.left.push(l);
            t.right.push(r);
            t.left_local.push(ll);
            t.right_local.push(rl);
            fv_indices.extend_from_slice(topo.face_vertices.row(f));
            flipped.push(false);
        }
        fv_offsets.push(fv_indices.len() as u32);
        t.boundary_tag
            .push(topo.boundary_tag.get(f).copied().unwrap_or_default());
    }
    t.face_vertices = Csr {
        offsets: fv_offsets,
        indices: fv_indices,
    };
    // Element -> faces: rows follow the new element order, local order is unchanged.
    let ef = &topo.element_faces;
    let mut offsets = Vec::with_capacity(el_n2o.len() + 1);
    let mut indices = Vec::with_capacity(ef.indices.len());
    offsets.push(0u32);
    for &old in el_n2o {
        indices.extend(ef.row(old as usize).iter().map(|&f| face_o2n[f as usize]));
        offsets.push(indices.len() as u32);
    }
    t.element_faces = Csr { offsets, indices };
    // Vertex -> elements: same row sizes; filling rows while visiting the new elements in
    // order leaves each row sorted.
    let ve = &topo.vertex_elements;
    let mut fill: Vec<u32> = ve.offsets.clone();
    let mut indices = vec![0u32; ve.indices.len()];
    for e in 0..new_mesh.num_elements() {
        for &v in new_mesh.element(e) {
            let slot = &mut fill[v as usize];
            indices[*slot as usize] = e as u32;
            *slot += 1;
        }
    }
    t.vertex_elements = Csr {
        offsets: ve.offsets.clone(),
        indices,
    };
    (t, flipped)
}

/// `mesh` with its elements renumbered (`new_to_old`), built in preallocated arrays
/// (the same result as [`Mesh::permute_elements`] on a clone, without the clone).
fn permuted_mesh(mesh: &Mesh, new_to_old: &[u32]) -> Mesh {
    let ne = new_to_old.len();
    let mut m = Mesh::new(mesh.dim);
    m.points = mesh.points.clone();
    m.boundary_facets = mesh.boundary_facets.clone();
    m.physical_names = mesh.physical_names.clone();
    m.numbering = mesh.numbering.permuted(new_to_old);
    m.kinds = Vec::with_capacity(ne);
    m.region_tags = Vec::with_capacity(ne);
    m.offsets = Vec::with_capacity(ne + 1);
    m.offsets.push(0);
    m.connectivity = Vec::with_capacity(mesh.connectivity.len());
    for &old in new_to_old {
        let old = old as usize;
        m.kinds.push(mesh.kinds[old]);
        m.region_tags.push(mesh.region_tags[old]);
        m.connectivity.extend_from_slice(mesh.element(old));
        m.offsets.push(m.connectivity.len() as u32);
    }
    m
}

/// Inverse of a permutation.
pub fn invert_permutation(perm: &[u32]) -> Vec<u32> {
    let mut inv = vec![0u32; perm.len()];
    for (i, &p) in perm.iter().enumerate() {
        inv[p as usize] = i as u32;
    }
    inv
}

/// True when `perm` is a bijection of `0..perm.len()`.
pub fn is_permutation(perm: &[u32]) -> bool {
    let mut seen = vec![false; perm.len()];
    for &p in perm {
        match seen.get_mut(p as usize) {
            Some(s) if !*s => *s = true,
            _ => return false,
        }
    }
    true
}

/// Bandwidth max |p(i) - p(j)| over the edges (i, j) of `graph`, with `old_to_new = p`
/// (identity when `None`).
pub fn bandwidth(graph: &Csr, old_to_new: Option<&[u32]>) -> usize {
    let p = |v: usize| old_to_new.map_or(v as u32, |q| q[v]) as i64;
    let mut bw = 0i64;
    for i in 0..graph.num_rows() {
        let pi = p(i);
        for &j in graph.row(i) {
            bw = bw.max((pi - p(j as usize)).abs());
        }
    }
    bw as usize
}

/// Profile (envelope size) sum over rows i of (i - smallest column in row i, diagonal
/// included) of the symmetric matrix with the sparsity of `graph`, in the numbering
/// `old_to_new` (identity when `None`).
pub fn profile(graph: &Csr, old_to_new: Option<&[u32]>) -> u64 {
    let p = |v: usize| old_to_new.map_or(v as u32, |q| q[v]);
    let mut total = 0u64;
    for i in 0..graph.num_rows() {
        let pi = p(i);
        let first = graph
            .row(i)
            .iter()
            .map(|&j| p(j as usize))
            .min()
            .unwrap_or(pi)
            .min(pi);
        total += (pi - first) as u64;
    }
    total
}

/// Fractions of consecutive face pairs (within a color group) whose left (resp. right)
/// elements are consecutive: the share of coalesced element reads in the surface pass.
pub fn coalesced_fraction(topo: &Topology, color_offsets: &[usize]) -> (f64, f64) {
    let (mut pairs, mut left, mut right) = (0usize, 0usize, 0usize);
    for w in color_offsets.windows(2) {
        for f in w[0]..w[1].saturating_sub(1) {
            pairs += 1;
            if topo.left[f + 1] == topo.left[f].wrapping_add(1) {
                left += 1;
            }
            let (r0, r1) = (topo.right[f], topo.right[f + 1]);
            if r0 != NO_ELEMENT && r1 == r0.wrapping_add(1) {
                right += 1;
            }
        }
    }
    if pairs == 0 {
        return (0.0, 0.0);
    }
    (left as f64 / pairs as f64, right as f64 / pairs as f64)
}

/// Elements per 32-byte sector of an element-fastest f32 array (`c[eq][basis][element]`).
pub const ELEMENTS_PER_SECTOR: u32 = 8;
/// Threads per warp, for [`ColorLocality::sectors_per_warp`].
pub const WARP: usize = 32;
/// Faces a fetched sector stays cached for, in [`ColorLocality::sector_misses`]. A DG p = 1
/// surface pass touches 25 f32 element arrays per side, so 4096 scattered faces touch about
/// 6.5 MB of sectors: a deliberately small share of an H100/H200 L2 (50 MB), so that the
/// metric still separates orderings on meshes of 10^5..10^6 faces.
pub const REUSE_WINDOW: usize = 4096;

/// Memory-access locality of one color group (one surface pass, thread i on the group's i-th
/// face), from [`color_locality`].
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ColorLocality {
    /// Faces in the group.
    pub faces: usize,
    /// Fraction of consecutive face pairs (f, f + 1) of the group whose left and right elements
    /// both advance by exactly one (both faces interior): threads f and f + 1 read adjacent
    /// elements on both sides. 1 is fully coalesced; GK Algorithm 5 gives ~1 for color 0.
    pub coalesced: f64,
    /// Largest |right - left| over the group's interior faces (0 without interior faces).
    pub bandwidth: usize,
    /// Distinct 32-byte sectors ([`ELEMENTS_PER_SECTOR`] consecutive elements of one f32
    /// array) touched by a warp of [`WARP`] consecutive faces, left and right elements
    /// together, averaged over the group's warps: about 8 to 10 when both sides are
    /// coalesced, up to 64 when every element is in a sector of its own.
    pub sectors_per_warp: f64,
    /// Sector fetches per face of one element array, left and right together, with a sector
    /// cached for [`REUSE_WINDOW`] faces after its last use (accesses in face order): 0.25
    /// when both sides are read in order, up to 2 when no sector is reused in time. The
    /// DRAM-traffic proxy for scattered passes, where `coalesced` is ~0 either way.
    pub sector_misses: f64,
}

/// [`ColorLocality`] of every color group (`color_offsets` as in [`OrderedMesh`]).
pub fn color_locality(topo: &Topology, color_offsets: &[usize]) -> Vec<ColorLocality> {
    let mut sectors: Vec<u32> = Vec::with_capacity(2 * WARP);
    let max_element = topo
        .left
        .iter()
        .chain(topo.right.iter().filter(|&&r| r != NO_ELEMENT))
        .max()
        .map_or(0, |&e| e as usize);
    // Face position (within the group, plus one) of each sector's last access; 0 = never.
    let mut last = vec![0usize; max_element / ELEMENTS_PER_SECTOR as usize + 1];
    color_offsets
        .windows(2)
        .map(|w| {
            let range = w[0]..w[1];
            let mut loc = ColorLocality {
                faces: range.len(),
                ..Default::default()
            };
            let mut both = 0usize;
            for f in range.start..range.end.saturating_sub(1) {
                let (r0, r1) = (topo.right[f], topo.right[f + 1]);
                if r0 != NO_ELEMENT
                    && r1 != NO_ELEMENT
                    && r1 == r0.wrapping_add(1)
                    && topo.left[f + 1] == topo.left[f].wrapping_add(1)
                {
                    both += 1;
                }
            }
            if range.len() > 1 {
                loc.coalesced = both as f64 / (range.len() - 1) as f64;
            }
            for f in range.clone() {
                if topo.right[f] != NO_ELEMENT {
                    loc.bandwidth = loc
                        .bandwidth
                        .max(topo.right[f].abs_diff(topo.left[f]) as usize);
                }
            }
            let (mut total, mut warps) = (0usize, 0usize);
            for start in range.clone().step_by(WARP) {
                sectors.clear();
                for f in start..(start + WARP).min(range.end) {
                    sectors.push(topo.left[f] / ELEMENTS_PER_SECTOR);
                    if topo.right[f] != NO_ELEMENT {
                        sectors.push(topo.right[f] / ELEMENTS_PER_SECTOR);
                    }
                }
                sectors.sort_unstable();
                sectors.dedup();
                total += sectors.len();
                warps += 1;
            }
            if warps > 0 {
                loc.sectors_per_warp = total as f64 / warps as f64;
            }
            last.iter_mut().for_each(|t| *t = 0);
            let mut misses = 0usize;
            for (i, f) in range.clone().enumerate() {
                for e in [topo.left[f], topo.right[f]] {
                    if e == NO_ELEMENT {
                        continue;
                    }
                    let t = &mut last[(e / ELEMENTS_PER_SECTOR) as usize];
                    if *t == 0 || i + 1 - *t > REUSE_WINDOW {
                        misses += 1;
                    }
                    *t = i + 1;
                }
            }
            if !range.is_empty() {
                loc.sector_misses = misses as f64 / range.len() as f64;
            }
            loc
        })
        .collect()
}
