//! Face (edge in 2D) coloring after Giuliani & Krivodonova (GK), "Face coloring in unstructured
//! CFD codes": partition the faces so that no element has two faces of one color, with the
//! minimal number of colors `n` = faces per element (3 triangles, 4 quadrilaterals and
//! tetrahedra, 5 prisms and pyramids, 6 hexahedra; the maximum over the kinds of a hybrid mesh).
//! A boundary face only constrains its left element (the ghost cell is never written twice).
//!
//! This is edge coloring of the element graph G (a node per element, a line per interior
//! face, a half-line per boundary face). The algorithm:
//!
//! 1. **Modified greedy** (GK Algorithm 2). Visit the faces once; give face `e_k` a color chosen
//!    uniformly at random from `C \ C_k`, where `C_k` are the colors already on the faces of its
//!    left and right elements. When `C \ C_k` is empty the face stays uncolored: a *conflict*.
//! 2. **Conflict resolution** (GK Algorithm 3). Take a random conflict `e` and repeat:
//!    * RESOLVE: `C \ C_k` is not empty: color `e` with a random free color; take another
//!      random conflict.
//!    * SWAP: otherwise pick a color `c` that exactly one of the two elements carries, on face
//!      `g` (never the face the conflict just came from): `e` takes `c` and `g` becomes the
//!      conflict. Neither element gains a repeated color, so the conflict count is unchanged;
//!      the conflict walks a Kempe-like alternating chain until it finds a free color (at a
//!      boundary or next to another conflict).
//!    * DOUBLE: when the walk comes back to a face it already visited (a loop), after a random
//!      number (`0..=max_extra_swaps`) of further swaps, pick a color `c` carried by *both*
//!      elements, give it to `e` and uncolor the two faces that had it: one more conflict, but
//!      the loop is broken. Then take another random conflict.
//!
//! GK give no termination proof, and some closed surfaces admit no minimal coloring (a torus
//! triangulation whose element graph is a snark has no 3-edge-coloring). So every stage runs
//! under a move budget (`effort` moves per face, at least `min_moves`). When the budget is
//! spent the palette grows by one color (logged with `log::warn!`) and resolution continues
//! from the current state. With `2Δ - 1` colors (Δ = faces per element) every conflict has a
//! free color, so resolution then ends after one RESOLVE per conflict: the whole procedure is
//! bounded.
//!
//! Data layout: colors are a `u8` per face, each element keeps a bit mask of the colors on its
//! faces (one load answers "which colors are free"), the conflict list is a flat vector in
//! which the current conflict's slot is rewritten in place, and visited faces are marked with
//! a per-walk stamp, so the hot loop touches flat arrays only.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::error::{Error, Result};
use crate::mesh::model::Mesh;
use crate::mesh::topology::{Topology, NO_ELEMENT};

/// Marks a face without color (a conflict while coloring).
pub const UNCOLORED: u8 = u8::MAX;

/// Most colors a coloring may use (the per-element color masks are 32-bit).
pub const MAX_COLORS: usize = 32;

/// Parameters of [`color_faces`].
#[derive(Clone, Debug, PartialEq)]
pub struct FaceColoringOptions {
    /// Seed of the ChaCha8 generator: the same seed and mesh give the same coloring.
    pub seed: u64,
    /// Number of colors to aim for; `None` means the minimum for the element kinds present
    /// ([`Mesh::max_faces_per_element`]). Fewer than that is an error.
    pub num_colors: Option<usize>,
    /// Move budget of each resolution stage, in moves per face.
    pub effort: f64,
    /// Lower bound on the move budget of each stage (small meshes get a fair chance).
    pub min_moves: u64,
    /// After a loop is detected, swap a random number of times in `0..=max_extra_swaps` before
    /// doubling (GK's optional variability).
    pub max_extra_swaps: u32,
    /// On budget exhaustion add a color (with a warning) instead of returning an error.
    pub allow_fallback: bool,
    /// Greedy visiting order: `true` colors forced faces (one free color left) first, which
    /// cuts the conflicts to resolve several-fold; `false` is GK's plain index order.
    pub propagate: bool,
}

impl Default for FaceColoringOptions {
    fn default() -> Self {
        FaceColoringOptions {
            seed: 0,
            num_colors: None,
            effort: 200.0,
            min_moves: 200_000,
            max_extra_swaps: 3,
            allow_fallback: true,
            propagate: true,
        }
    }
}

impl FaceColoringOptions {
    /// Default options with the given seed.
    pub fn with_seed(seed: u64) -> Self {
        FaceColoringOptions {
            seed,
            ..Default::default()
        }
    }
}

/// What the coloring did, for reports and benchmarks.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ColoringStats {
    /// Faces the greedy pass left uncolored.
    pub greedy_conflicts: usize,
    /// RESOLVE moves (a conflict colored with a free color).
    pub resolves: u64,
    /// SWAP moves (a conflict moved to a neighbouring face).
    pub swaps: u64,
    /// DOUBLE moves (a loop broken by creating one more conflict).
    pub doubles: u64,
    /// Loops detected (a walk returned to a visited face).
    pub loops: u64,
    /// Largest number of simultaneous conflicts.
    pub max_conflicts: usize,
    /// Resolution stages run: 1, plus one per fallback color.
    pub stages: usize,
}

impl ColoringStats {
    /// All conflict-resolution moves.
    pub fn moves(&self) -> u64 {
        self.resolves + self.swaps + self.doubles
    }
}

/// A face coloring: `colors[f]` in `0..num_colors` for every face `f`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FaceColoring {
    /// Color of each face.
    pub colors: Vec<u8>,
    /// Number of colors (the palette size; every color is normally used).
    pub num_colors: usize,
    /// Faces of each color.
    pub counts: Vec<usize>,
    /// The minimum for the element kinds (or the requested count): `num_colors > target`
    /// exactly when `fallback` is set.
    pub target_colors: usize,
    /// True when the target count was not reached within the budget and colors were added.
    pub fallback: bool,
    /// Move counts.
    pub stats: ColoringStats,
}

impl FaceColoring {
    /// Wrap a finished color array (palette = largest color + 1), e.g. a permuted coloring.
    pub fn from_colors(colors: Vec<u8>) -> FaceColoring {
        let num_colors = colors
            .iter()
            .filter(|&&c| c != UNCOLORED)
            .map(|&c| c as usize + 1)
            .max()
            .unwrap_or(0);
        let counts = count_colors(&colors, num_colors);
        FaceColoring {
            colors,
            num_colors,
            counts,
            target_colors: num_colors,
            fallback: false,
            stats: ColoringStats::default(),
        }
    }

    /// Faces of color `c`, ascending.
    pub fn faces_of_color(&self, c: usize) -> impl Iterator<Item = usize> + '_ {
        self.colors
            .iter()
            .enumerate()
            .filter(move |(_, &x)| x as usize == c)
            .map(|(f, _)| f)
    }
}

fn count_colors(colors: &[u8], num_colors: usize) -> Vec<usize> {
    let mut counts = vec![0usize; num_colors];
    for &c in colors {
        if (c as usize) < num_colors {
            counts[c as usize] += 1;
        }
    }
    counts
}

/// Uniformly random set bit of a non-zero mask.
#[inline]
fn random_bit(mask: u32, rng: &mut ChaCha8Rng) -> u32 {
    let n = mask.count_ones();
    let mut m = mask;
    if n > 1 {
        for _ in 0..rng.random_range(0..n) {
            m &= m - 1;
        }
    }
    m.trailing_zeros()
}

/// State of the plain greedy baseline: face colors plus per-element color masks.
struct State<'a> {
    left: &'a [u32],
    right: &'a [u32],
    colors: Vec<u8>,
    masks: Vec<u32>,
}

impl State<'_> {
    /// Colors on the faces of the two elements of face `f`.
    #[inline]
    fn used(&self, f: usize) -> u32 {
        let r = self.right[f];
        self.masks[self.left[f] as usize]
            | if r == NO_ELEMENT {
                0
            } else {
                self.masks[r as usize]
            }
    }

    #[inline]
    fn set(&mut self, f: usize, c: u8) {
        self.colors[f] = c;
        let bit = 1u32 << c;
        self.masks[self.left[f] as usize] |= bit;
        let r = self.right[f];
        if r != NO_ELEMENT {
            self.masks[r as usize] |= bit;
        }
    }
}

/// Packed per-face state of the resolution loop: one cache line serves a whole step.
#[derive(Clone, Copy, Debug)]
#[repr(C)]
struct FaceRec {
    left: u32,
    right: u32,
    /// Walk stamp (loop detection).
    stamp: u32,
    color: u8,
    /// Position of the face in its left / right element's face list.
    left_slot: u8,
    right_slot: u8,
    _pad: u8,
}

/// Packed per-element state: the colors of its faces and the faces, `N` = most faces of an
/// element (3 to 6 here), so an element is 16 to 32 bytes.
#[derive(Clone, Copy, Debug)]
#[repr(C)]
struct ElemRec<const N: usize> {
    colors: [u8; N],
    faces: [u32; N],
}

impl<const N: usize> ElemRec<N> {
    #[inline]
    fn mask(&self) -> u32 {
        let mut m = 0u32;
        for &c in &self.colors {
            if c != UNCOLORED {
                m |= 1u32 << c;
            }
        }
        m
    }

    #[inline]
    fn face_with_color(&self, c: u8) -> u32 {
        for i in 0..N {
            if self.colors[i] == c {
                return self.faces[i];
            }
        }
        NO_ELEMENT
    }
}

/// The coloring state in packed form (see [`FaceRec`], [`ElemRec`]).
struct Packed<const N: usize> {
    faces: Vec<FaceRec>,
    elems: Vec<ElemRec<N>>,
}

impl<const N: usize> Packed<N> {
    fn new(topo: &Topology, num_elements: usize) -> Result<Self> {
        let nf = topo.num_faces();
        let mut faces: Vec<FaceRec> = (0..nf)
            .map(|f| FaceRec {
                left: topo.left[f],
                right: topo.right[f],
                stamp: 0,
                color: UNCOLORED,
                left_slot: 0,
                right_slot: 0,
                _pad: 0,
            })
            .collect();
        let mut elems = vec![
            ElemRec::<N> {
                colors: [UNCOLORED; N],
                faces: [NO_ELEMENT; N],
            };
            num_elements
        ];
        for (e, rec) in elems.iter_mut().enumerate() {
            for (i, &f) in topo.element_faces.row(e).iter().enumerate() {
                rec.faces[i] = f;
                let fr = &mut faces[f as usize];
                if fr.left == e as u32 {
                    fr.left_slot = i as u8;
                } else if fr.right == e as u32 {
                    fr.right_slot = i as u8;
                } else {
                    return Err(Error::Invalid(format!(
                        "face coloring: element {e} lists face {f}, which does not touch it"
                    )));
                }
            }
        }
        Ok(Packed { faces, elems })
    }

    #[inline]
    fn mask(&self, e: u32) -> u32 {
        if e == NO_ELEMENT {
            0
        } else {
            self.elems[e as usize].mask()
        }
    }

    #[inline]
    fn set(&mut self, f: usize, c: u8) {
        let fr = &mut self.faces[f];
        fr.color = c;
        let (l, r, ls, rs) = (fr.left, fr.right, fr.left_slot, fr.right_slot);
        self.elems[l as usize].colors[ls as usize] = c;
        if r != NO_ELEMENT {
            self.elems[r as usize].colors[rs as usize] = c;
        }
    }

    #[inline]
    fn face_with_color(&self, e: u32, c: u8) -> u32 {
        self.elems[e as usize].face_with_color(c)
    }
}

/// Color the faces of `mesh` (GK Algorithms 2 and 3; see the module documentation).
///
/// Errors: `topo` does not match `mesh`; fewer colors requested than an element has faces;
/// more than [`MAX_COLORS`]; or the budget is spent while `allow_fallback` is off.
pub fn color_faces(
    mesh: &Mesh,
    topo: &Topology,
    opts: &FaceColoringOptions,
) -> Result<FaceColoring> {
    check_topology(mesh, topo)?;
    let ne = mesh.num_elements();
    let row_max = (0..topo.element_faces.num_rows())
        .map(|e| topo.element_faces.row(e).len())
        .max()
        .unwrap_or(0);
    match row_max {
        0..=3 => color_packed::<3>(mesh, topo, opts, ne),
        4 => color_packed::<4>(mesh, topo, opts, ne),
        5 => color_packed::<5>(mesh, topo, opts, ne),
        6 => color_packed::<6>(mesh, topo, opts, ne),
        7 | 8 => color_packed::<8>(mesh, topo, opts, ne),
        n => Err(Error::Invalid(format!(
            "face coloring: an element has {n} faces; at most 8 are supported"
        ))),
    }
}

fn color_packed<const N: usize>(
    mesh: &Mesh,
    topo: &Topology,
    opts: &FaceColoringOptions,
    ne: usize,
) -> Result<FaceColoring> {
    let min_colors = mesh.max_faces_per_element().max(if N > 6 { N } else { 0 });
    let target = opts.num_colors.unwrap_or(min_colors);
    if target < min_colors {
        return Err(Error::Invalid(format!(
            "face coloring: {target} colors requested but an element has {min_colors} faces"
        )));
    }
    if target > MAX_COLORS {
        return Err(Error::Invalid(format!(
            "face coloring: at most {MAX_COLORS} colors are supported, {target} requested"
        )));
    }
    if opts.effort.is_nan() || opts.effort < 0.0 {
        return Err(Error::Invalid(format!(
            "face coloring: effort must be a non-negative number, got {}",
            opts.effort
        )));
    }
    let nf = topo.num_faces();
    let mut rng = ChaCha8Rng::seed_from_u64(opts.seed);
    let mut st = Packed::<N>::new(topo, ne)?;
    let mut stats = ColoringStats::default();

    // Stage 1: modified greedy (GK Algorithm 2).
    let mut k = target;
    let palette = |k: usize| if k >= 32 { u32::MAX } else { (1u32 << k) - 1 };
    let mut full = palette(k);
    let mut conflicts: Vec<u32> = Vec::new();
    if opts.propagate {
        greedy_propagating(&mut st, full, &mut rng, &mut conflicts);
    } else {
        for f in 0..nf {
            let fr = st.faces[f];
            let free = full & !(st.mask(fr.left) | st.mask(fr.right));
            if free == 0 {
                conflicts.push(f as u32);
            } else {
                st.set(f, random_bit(free, &mut rng) as u8);
            }
        }
    }
    stats.greedy_conflicts = conflicts.len();
    stats.max_conflicts = conflicts.len();

    // Stage 2: conflict resolution (GK Algorithm 3), growing the palette on budget exhaustion.
    // With 2 * N - 1 colors every conflict has a free color (each of its elements carries at
    // most N - 1 other faces), which bounds the number of stages.
    let guaranteed = (2 * N - 1).max(target).min(MAX_COLORS);
    let budget = ((opts.effort * nf as f64) as u64).max(opts.min_moves);
    let mut walk = 0u32;
    loop {
        stats.stages += 1;
        // At the guaranteed size every move is a RESOLVE: one move per conflict, no budget.
        let stage_budget = if k >= guaranteed { u64::MAX } else { budget };
        let done = resolve(
            &mut st,
            &mut conflicts,
            full,
            stage_budget,
            opts.max_extra_swaps,
            &mut rng,
            &mut walk,
            &mut stats,
        );
        if done {
            break;
        }
        if !opts.allow_fallback {
            return Err(Error::Invalid(format!(
                "face coloring: no {k}-coloring found within {budget} moves ({} conflicts left); \
                 raise the effort or allow fallback",
                conflicts.len()
            )));
        }
        if k >= guaranteed {
            return Err(Error::Invalid(format!(
                "face coloring: {} conflicts left with {k} colors",
                conflicts.len()
            )));
        }
        log::warn!(
            "face coloring: no {k}-coloring found within {budget} moves ({} conflicts left); \
             falling back to {} colors",
            conflicts.len(),
            k + 1
        );
        k += 1;
        full = palette(k);
    }
    let colors: Vec<u8> = st.faces.iter().map(|f| f.color).collect();
    let counts = count_colors(&colors, k);
    Ok(FaceColoring {
        colors,
        num_colors: k,
        counts,
        target_colors: target,
        fallback: k > target,
        stats,
    })
}

/// GK's modified greedy with forced moves first: faces are visited in index order and get a
/// random free color, but whenever coloring a face leaves a neighbouring face (one sharing an
/// element) with at most one free color, that face is handled next (depth first). A forced
/// face then takes its last color before another choice can remove it, which leaves far fewer
/// conflicts for the resolution stage than the plain index order.
fn greedy_propagating<const N: usize>(
    st: &mut Packed<N>,
    full: u32,
    rng: &mut ChaCha8Rng,
    conflicts: &mut Vec<u32>,
) {
    let nf = st.faces.len();
    // Faces already handled (colored or recorded as a conflict).
    let mut done = vec![false; nf];
    let mut stack: Vec<u32> = Vec::new();
    for f0 in 0..nf {
        if done[f0] {
            continue;
        }
        stack.push(f0 as u32);
        while let Some(f) = stack.pop() {
            let f = f as usize;
            if done[f] {
                continue;
            }
            done[f] = true;
            let fr = st.faces[f];
            let free = full & !(st.mask(fr.left) | st.mask(fr.right));
            if free == 0 {
                conflicts.push(f as u32);
                continue;
            }
            st.set(f, random_bit(free, rng) as u8);
            for e in [fr.left, fr.right] {
                if e == NO_ELEMENT {
                    continue;
                }
                for &g in &st.elems[e as usize].faces {
                    if g == NO_ELEMENT || done[g as usize] {
                        continue;
                    }
                    let gr = st.faces[g as usize];
                    let free_g = full & !(st.mask(gr.left) | st.mask(gr.right));
                    if free_g & free_g.wrapping_sub(1) == 0 {
                        stack.push(g);
                    }
                }
            }
        }
    }
}

/// Run GK Algorithm 3 until no conflict is left (true) or `budget` moves are spent (false).
#[allow(clippy::too_many_arguments)]
fn resolve<const N: usize>(
    st: &mut Packed<N>,
    conflicts: &mut Vec<u32>,
    full: u32,
    budget: u64,
    max_extra_swaps: u32,
    rng: &mut ChaCha8Rng,
    walk: &mut u32,
    stats: &mut ColoringStats,
) -> bool {
    let mut moves = 0u64;
    while !conflicts.is_empty() {
        // Start a walk at a random conflict.
        let slot = rng.random_range(0..conflicts.len());
        let mut edge = conflicts[slot] as usize;
        *walk = walk.wrapping_add(1);
        if *walk == 0 {
            st.faces.iter_mut().for_each(|f| f.stamp = 0);
            *walk = 1;
        }
        st.faces[edge].stamp = *walk;
        // Color of the face the conflict just left (excluded from the next swap).
        let mut prev_color: Option<u8> = None;
        // None: no loop seen yet; Some(n): loop seen, n more swaps before doubling.
        let mut countdown: Option<u32> = None;
        loop {
            if moves >= budget {
                return false;
            }
            moves += 1;
            let fr = st.faces[edge];
            let (l, r) = (fr.left, fr.right);
            let (ml, mr) = (st.mask(l), st.mask(r));
            let free = full & !(ml | mr);
            if free != 0 {
                // RESOLVE.
                st.set(edge, random_bit(free, rng) as u8);
                conflicts.swap_remove(slot);
                stats.resolves += 1;
                break;
            }
            if countdown == Some(0) && r != NO_ELEMENT {
                // DOUBLE: a color on both elements, from two distinct faces.
                let both = ml & mr;
                if both != 0 {
                    let c = random_bit(both, rng) as u8;
                    let (gl, gr) = (st.face_with_color(l, c), st.face_with_color(r, c));
                    if gl != gr && gl != NO_ELEMENT && gr != NO_ELEMENT {
                        st.set(gl as usize, UNCOLORED);
                        st.set(gr as usize, UNCOLORED);
                        st.set(edge, c);
                        conflicts[slot] = gl;
                        conflicts.push(gr);
                        stats.max_conflicts = stats.max_conflicts.max(conflicts.len());
                        stats.doubles += 1;
                        break;
                    }
                }
            }
            // SWAP: a color carried by exactly one of the two elements. The face the conflict
            // came from carries `prev_color` in the shared element (one face per color per
            // element), so excluding that color excludes exactly that face.
            let mut options = ml ^ mr;
            if let Some(pc) = prev_color {
                options &= !(1u32 << pc);
            }
            if options == 0 {
                // Cannot happen while each element has fewer faces than colors; restart from
                // another conflict rather than undo the last move.
                break;
            }
            let c = if options & (options - 1) == 0 {
                options.trailing_zeros()
            } else {
                random_bit(options, rng)
            } as u8;
            let owner = if ml & (1u32 << c) != 0 { l } else { r };
            let g = st.face_with_color(owner, c);
            if g == NO_ELEMENT {
                break;
            }
            let g = g as usize;
            st.set(g, UNCOLORED);
            st.set(edge, c);
            conflicts[slot] = g as u32;
            stats.swaps += 1;
            prev_color = Some(c);
            edge = g;
            let gr = &mut st.faces[g];
            if gr.stamp == *walk {
                countdown = match countdown {
                    None => {
                        stats.loops += 1;
                        Some(rng.random_range(0..=max_extra_swaps))
                    }
                    Some(n) => Some(n.saturating_sub(1)),
                };
            } else {
                gr.stamp = *walk;
                if let Some(n) = countdown {
                    countdown = Some(n.saturating_sub(1));
                }
            }
        }
    }
    true
}

fn check_topology(mesh: &Mesh, topo: &Topology) -> Result<()> {
    let ne = mesh.num_elements();
    if topo.element_faces.num_rows() != ne && !(ne == 0 && topo.num_faces() == 0) {
        return Err(Error::Invalid(format!(
            "face coloring: topology has {} elements, mesh has {ne}",
            topo.element_faces.num_rows()
        )));
    }
    let bad = (0..topo.num_faces()).find(|&f| {
        topo.left[f] as usize >= ne || (topo.right[f] != NO_ELEMENT && topo.right[f] as usize >= ne)
    });
    if let Some(f) = bad {
        return Err(Error::Invalid(format!(
            "face coloring: face {f} refers to an element outside the mesh"
        )));
    }
    Ok(())
}

/// Plain greedy first-fit face coloring: each face, in order, takes the lowest color absent
/// from its two elements; the palette grows as needed (up to `2Δ - 1`). This is GK's
/// baseline, typically 5 colors on triangles and 7 on tetrahedra, kept for comparisons.
pub fn greedy_face_coloring(mesh: &Mesh, topo: &Topology) -> Result<FaceColoring> {
    check_topology(mesh, topo)?;
    let nf = topo.num_faces();
    let mut st = State {
        left: &topo.left,
        right: &topo.right,
        colors: vec![UNCOLORED; nf],
        masks: vec![0u32; mesh.num_elements()],
    };
    let mut num_colors = 0usize;
    for f in 0..nf {
        let c = (!st.used(f)).trailing_zeros() as usize;
        if c >= MAX_COLORS {
            return Err(Error::Invalid(format!(
                "greedy face coloring: face {f} needs more than {MAX_COLORS} colors"
            )));
        }
        num_colors = num_colors.max(c + 1);
        st.set(f, c as u8);
    }
    let counts = count_colors(&st.colors, num_colors);
    Ok(FaceColoring {
        colors: st.colors,
        num_colors,
        counts,
        target_colors: num_colors,
        fallback: false,
        stats: ColoringStats::default(),
    })
}

/// Check a face coloring: every face colored, and no element with two faces of one color
/// (boundary faces count for their left element only). The message names the first culprit.
pub fn check_face_coloring(topo: &Topology, colors: &[u8]) -> Result<(), String> {
    if colors.len() != topo.num_faces() {
        return Err(format!(
            "{} colors for {} faces",
            colors.len(),
            topo.num_faces()
        ));
    }
    if let Some(f) = colors.iter().position(|&c| c == UNCOLORED) {
        return Err(format!("face {f} is not colored"));
    }
    for e in 0..topo.element_faces.num_rows() {
        let row = topo.element_faces.row(e);
        for (i, &f) in row.iter().enumerate() {
            let f = f as usize;
            if f >= colors.len() {
                return Err(format!("element {e} lists face {f}, which does not exist"));
            }
            for &g in &row[i + 1..] {
                if f != g as usize && colors[f] == colors[g as usize] {
                    return Err(format!(
                        "element {e} has faces {f} and {g} both of color {}",
                        colors[f]
                    ));
                }
            }
        }
    }
    Ok(())
}

/// Bytes of the per-face buffers that coloring makes unnecessary (GK section 5.1): without
/// coloring, each face writes its left and right contributions to a buffer of its own, i.e.
/// `2 x basis functions x equations x faces x bytes per value`.
/// GK's mesh E (5,694,282 edges), Euler (4 equations), p = 1 (3 basis functions), f64: 1.09 GB.
pub fn face_buffer_bytes(
    num_basis: usize,
    num_equations: usize,
    num_faces: usize,
    bytes_per_value: usize,
) -> u64 {
    2 * num_basis as u64 * num_equations as u64 * num_faces as u64 * bytes_per_value as u64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mesh::generate3d::{tri_grid, Diagonals};

    #[test]
    fn random_bit_picks_set_bits_only() {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let mut seen = 0u32;
        for _ in 0..200 {
            let b = random_bit(0b1011_0000, &mut rng);
            assert!(0b1011_0000 & (1 << b) != 0);
            seen |= 1 << b;
        }
        assert_eq!(seen, 0b1011_0000);
    }

    #[test]
    fn small_grid_gets_three_colors() {
        let mesh = tri_grid(6, 5, Diagonals::Random { seed: 2 }).unwrap();
        let topo = Topology::build(&mesh).unwrap();
        let col = color_faces(&mesh, &topo, &FaceColoringOptions::default()).unwrap();
        assert_eq!(col.num_colors, 3);
        assert!(!col.fallback);
        check_face_coloring(&topo, &col.colors).unwrap();
        assert_eq!(col.counts.iter().sum::<usize>(), topo.num_faces());
    }

    #[test]
    fn checker_reports_a_repeated_color() {
        let mesh = tri_grid(2, 2, Diagonals::Uniform).unwrap();
        let topo = Topology::build(&mesh).unwrap();
        let zeros = vec![0u8; topo.num_faces()];
        assert!(check_face_coloring(&topo, &zeros).is_err());
        let mut col = color_faces(&mesh, &topo, &FaceColoringOptions::default())
            .unwrap()
            .colors;
        col[0] = UNCOLORED;
        assert!(check_face_coloring(&topo, &col)
            .unwrap_err()
            .contains("not colored"));
    }

    #[test]
    fn too_few_colors_is_an_error() {
        let mesh = tri_grid(2, 2, Diagonals::Uniform).unwrap();
        let topo = Topology::build(&mesh).unwrap();
        let opts = FaceColoringOptions {
            num_colors: Some(2),
            ..Default::default()
        };
        assert!(color_faces(&mesh, &topo, &opts).is_err());
    }

    #[test]
    fn memory_formula_matches_gk_table_7() {
        let gb = |np| face_buffer_bytes(np, 4, 5_694_282, 8) as f64 / 1e9;
        assert!((gb(3) - 1.09).abs() < 0.01);
        assert!((gb(21) - 7.65).abs() < 0.01);
    }
}
