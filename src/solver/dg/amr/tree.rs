//! Element and edge trees of an adaptively refined triangle mesh (GK19 sections 3-4), the f64
//! reference of the GPU adaptation: refine, coarsen, 2:1 smoothing, in-place slots with
//! compaction, connectivity from the trees and the nonconforming edge coloring.
//!
//! Identities. Elements and edges have ids that never move; children are allocated in blocks
//! (4 element ids per refined element, 2 edge ids per split edge, 3 ids for the interior edges
//! of a refined element), freed blocks are reused first, in the order they were freed. Active
//! elements occupy *positions* (the slots of the solution arrays): a coarsened parent takes its
//! first child's slot, a refined element's first child takes its parent's slot and the others
//! fill freed slots, then the end; compaction then closes the holes ([`Compaction`]): GK19's
//! Algorithm 4 moves the last occupied slots into the holes below the active count, or the
//! elements are placed in the order of the slots they came from (a refined element's children
//! in its place, a coarsened cluster's parent in its first child's), so that the slots keep
//! the order they had (children next to each other, where their parent was).
//!
//! Children. Child j < 3 of (v0, v1, v2) is the corner child at v_j, child 3 the centre one
//! ([`child_vertices`]). Every child's local side s is parallel to the parent's side s: the
//! first half of parent side s (as the parent walks it) is side s of child s, the second half
//! side s of child s + 1, and side s of child s + 2 is the interior edge it shares with the
//! centre child (left: the corner child, right: the centre child).
//!
//! Edges. An edge stores, at its own level, the element on each side (or none, when that side
//! is coarser) with the local side index. A split edge's first child is the half its left
//! element walks first. The faces the solver loops
//! over are the live leaf edges; a face with a missing side takes its parent edge's element
//! there (one level coarser) and the half of that element's side it covers. Faces are oriented
//! with the finer element on the left.
//!
//! Colors (GK19 section 3.5, generalised to K base colors): a root edge keeps its color
//! c < K; the children of an edge of color c get c and (c + K) mod 2K; an interior edge takes
//! the color of the parent side it is parallel to. Every element's side s then has a color
//! congruent to its root's side-s color mod K (three distinct residues), and the two faces on a
//! split side differ by K, so no two faces of an element share a color: 2K colors, 6 for a
//! conforming 3-colored base mesh.

use std::collections::VecDeque;

use super::projection::{child_vertices, Projection};
use crate::error::{Error, Result};
use crate::solver::dg::euler::State;
use crate::solver::dg::mesh::{DgMesh, EDGE_INTERIOR};

/// Marks a missing element, edge, child, parent or slot.
pub const NONE: u32 = u32::MAX;

#[derive(Clone, Debug)]
struct Element {
    vertices: [[f64; 2]; 3],
    level: u8,
    parent: u32,
    /// First of four consecutive child ids, [`NONE`] for a leaf.
    first_child: u32,
    /// The edges of the three sides, at this element's level.
    edges: [u32; 3],
    /// Slot of an active element, [`NONE`] otherwise.
    position: u32,
}

#[derive(Clone, Debug)]
struct Edge {
    level: u8,
    parent: u32,
    /// First of two consecutive child ids along the edge, [`NONE`] for a leaf.
    first_child: u32,
    /// Left and right element at this level, [`NONE`] where that side is coarser (or, on the
    /// right, for boundary edges).
    elements: [u32; 2],
    locals: [u8; 2],
    kind: u32,
    state: usize,
    color: u8,
    alive: bool,
}

impl Edge {
    /// A slot of a new block before it is filled.
    fn unused() -> Edge {
        Edge {
            level: 0,
            parent: NONE,
            first_child: NONE,
            elements: [NONE; 2],
            locals: [0; 2],
            kind: EDGE_INTERIOR,
            state: 0,
            color: 0,
            alive: false,
        }
    }
}

/// One face of the active mesh: where the surface integral runs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Face {
    /// Slots of the left (finer or equal) and right element; right is [`NONE`] on the boundary.
    pub left: u32,
    pub right: u32,
    pub left_local: u8,
    pub right_local: u8,
    /// 0: the right element's whole side; 1, 2: its first or second half.
    pub right_half: u8,
    pub kind: u32,
    pub state: usize,
    pub color: u8,
    /// Outward normal of the left element, length and midpoint.
    pub normal: [f64; 2],
    pub length: f64,
    pub midpoint: [f64; 2],
}

/// What one adaptation did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AdaptCounts {
    pub refined: usize,
    pub coarsened: usize,
}

/// How an adaptation closes the holes that coarsening leaves and places the children that
/// refinement appends.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Compaction {
    /// GK19 Algorithm 4: the last occupied slots move into the holes below the new active
    /// count. Every adaptation scatters the elements it touches (children in freed slots far
    /// from their parent's, moved elements far from their neighbours), so the slots lose their
    /// order and a Morton reorder ([`super::reorder`]) has to restore it.
    Gk19,
    /// The new slot of every element is the number of new elements that come from the slots
    /// before the one it came from: with s(p) = 4 for a refined element, 0 for children 1..3 of
    /// a coarsened cluster and 1 otherwise, slot p's elements go to sum_{q < p} s(q) onwards.
    /// The order is kept: children sit next to each other where their parent sat, a parent
    /// where its first child sat. The default: no reorders after the first (on an H200 the
    /// DMR at 7 levels reordered in 720 of 5,008 adaptations with GK19's compaction, once with
    /// this one) and two dependent launches fewer per adaptation (BENCHMARKS.md, session 26).
    #[default]
    InOrder,
}

impl Compaction {
    /// The compaction named `name`: `gk19` or `in-order`.
    pub fn parse(name: &str) -> Result<Compaction> {
        match name {
            "gk19" => Ok(Compaction::Gk19),
            "in-order" => Ok(Compaction::InOrder),
            other => Err(Error::Invalid(format!(
                "unknown compaction {other:?}: expected in-order or gk19"
            ))),
        }
    }
}

impl std::fmt::Display for Compaction {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Compaction::Gk19 => "gk19",
            Compaction::InOrder => "in-order",
        })
    }
}

/// The adaptive mesh: trees over a conforming base mesh.
#[derive(Clone, Debug)]
pub struct AdaptiveMesh {
    pub max_level: u8,
    /// Colors of the base mesh (K); the adapted mesh uses at most 2K.
    pub base_colors: u8,
    /// How [`AdaptiveMesh::adapt`] closes the holes (the device adaptation follows it).
    pub compaction: Compaction,
    elements: Vec<Element>,
    edges: Vec<Edge>,
    free_element_blocks: VecDeque<u32>,
    free_split_blocks: VecDeque<u32>,
    free_interior_blocks: VecDeque<u32>,
    /// Element id in each slot ([`NONE`]: a hole).
    slots: Vec<u32>,
}

impl AdaptiveMesh {
    /// The base mesh as the roots (levels 0), `max_level` levels of refinement allowed.
    pub fn new(base: &DgMesh, max_level: u8) -> Result<AdaptiveMesh> {
        let k = base.num_colors();
        if k > 127 {
            return Err(Error::Invalid(format!(
                "adaptive refinement needs at most 127 base edge colors, the mesh has {k}"
            )));
        }
        let mut elements: Vec<Element> = (0..base.num_elements)
            .map(|i| Element {
                vertices: base.vertices[i],
                level: 0,
                parent: NONE,
                first_child: NONE,
                edges: [NONE; 3],
                position: i as u32,
            })
            .collect();
        let mut edges = Vec::with_capacity(base.edges.len());
        for c in 0..k {
            for e in &base.edges[base.color_offsets[c]..base.color_offsets[c + 1]] {
                let id = edges.len() as u32;
                elements[e.left].edges[e.left_local] = id;
                let right = e.right.map_or(NONE, |r| r as u32);
                if let Some(r) = e.right {
                    elements[r].edges[e.right_local] = id;
                }
                edges.push(Edge {
                    level: 0,
                    parent: NONE,
                    first_child: NONE,
                    elements: [e.left as u32, right],
                    locals: [e.left_local as u8, e.right_local as u8],
                    kind: e.kind,
                    state: e.state,
                    color: c as u8,
                    alive: true,
                });
            }
        }
        if let Some(i) = elements.iter().position(|el| el.edges.contains(&NONE)) {
            return Err(Error::Invalid(format!(
                "element {i} of the base mesh has a side without an edge"
            )));
        }
        Ok(AdaptiveMesh {
            max_level,
            base_colors: k as u8,
            compaction: Compaction::default(),
            slots: (0..elements.len() as u32).collect(),
            elements,
            edges,
            free_element_blocks: VecDeque::new(),
            free_split_blocks: VecDeque::new(),
            free_interior_blocks: VecDeque::new(),
        })
    }

    /// Element ids in use (live or freed).
    pub fn element_ids(&self) -> usize {
        self.elements.len()
    }

    /// Edge ids in use (live or freed).
    pub fn edge_ids(&self) -> usize {
        self.edges.len()
    }

    /// Number of active elements (slots 0..n after an adaptation).
    pub fn num_active(&self) -> usize {
        self.slots.len()
    }

    /// Refinement level of the element in slot `pos`.
    pub fn level(&self, pos: usize) -> u8 {
        self.elements[self.slots[pos] as usize].level
    }

    /// Vertices of the element in slot `pos`.
    pub fn vertices(&self, pos: usize) -> [[f64; 2]; 3] {
        self.elements[self.slots[pos] as usize].vertices
    }

    /// Whether the element in slot `pos` has three siblings (it can be coarsened).
    fn sibling_block(&self, pos: usize) -> Option<u32> {
        let p = self.elements[self.slots[pos] as usize].parent;
        (p != NONE).then(|| self.elements[p as usize].first_child)
    }

    fn side_of(&self, edge: u32, element: u32) -> usize {
        usize::from(self.edges[edge as usize].elements[0] != element)
    }

    /// The faces of the active mesh, in edge id order.
    pub fn faces(&self) -> Result<Vec<Face>> {
        let mut faces = Vec::new();
        for (id, e) in self.edges.iter().enumerate() {
            if !e.alive || e.first_child != NONE {
                continue;
            }
            // (slot, local side, half) of side s.
            let side = |s: usize| -> Option<(u32, u8, u8)> {
                if e.elements[s] != NONE {
                    let el = &self.elements[e.elements[s] as usize];
                    return Some((el.position, e.locals[s], 0));
                }
                if e.parent == NONE {
                    return None;
                }
                let p = &self.edges[e.parent as usize];
                if p.elements[s] == NONE {
                    return None;
                }
                let m = (id as u32 - p.first_child) as u8;
                let half = if s == 0 { m + 1 } else { 2 - m };
                Some((
                    self.elements[p.elements[s] as usize].position,
                    p.locals[s],
                    half,
                ))
            };
            let mut face = Face {
                left: NONE,
                right: NONE,
                left_local: 0,
                right_local: 0,
                right_half: 0,
                kind: e.kind,
                state: e.state,
                color: e.color,
                normal: [0.0; 2],
                length: 0.0,
                midpoint: [0.0; 2],
            };
            let interior = e.kind == EDGE_INTERIOR;
            (
                face.left,
                face.left_local,
                face.right,
                face.right_local,
                face.right_half,
            ) = match (side(0), if interior { side(1) } else { None }) {
                (Some(l), None) if !interior && l.2 == 0 => (l.0, l.1, NONE, 0, 0),
                (Some(l), Some(r)) if l.2 == 0 => (l.0, l.1, r.0, r.1, r.2),
                (Some(l), Some(r)) if r.2 == 0 => (r.0, r.1, l.0, l.1, l.2),
                _ => {
                    return Err(Error::Invalid(format!(
                        "adaptive mesh: edge {id} (level {}) has no element on a side",
                        e.level
                    )))
                }
            };
            // Geometry from the left element's own side (its frame across a periodic pair).
            let v = self.elements[self.slots[face.left as usize] as usize].vertices;
            let (a, b) = (
                v[face.left_local as usize],
                v[(face.left_local as usize + 1) % 3],
            );
            let (dx, dy) = (b[0] - a[0], b[1] - a[1]);
            face.length = (dx * dx + dy * dy).sqrt();
            face.normal = [dy / face.length, -dx / face.length];
            face.midpoint = [0.5 * (a[0] + b[0]), 0.5 * (a[1] + b[1])];
            faces.push(face);
        }
        Ok(faces)
    }

    /// Make `flags` (per slot: 1 refine, -1 coarsen, 0 keep) admissible: no refinement past
    /// `max_level`, coarsening only of whole sibling clusters, and the 2:1 rule
    /// |level_i - level_j| <= 1 across every face after the adaptation (GK19 eq. 8). Smoothing
    /// is GK19 Algorithm 2: per face, color by color, the coarser-to-be side is raised by one
    /// step, repeated until nothing changes. Returns the number of passes.
    ///
    /// The result does not depend on the order of the raises: every raise is forced (any
    /// admissible flags above the start are at least as high there), and the admissible flags
    /// are closed under the elementwise minimum, so smoothing ends at the least admissible
    /// flags above the start whatever the order. [`AdaptiveMesh::smooth_flags_in_stages`] and
    /// [`AdaptiveMesh::smooth_flags_in_rounds`] reach the same flags as the device does.
    pub fn smooth_flags(&self, faces: &[Face], flags: &mut [i8]) -> usize {
        self.clamp_flags(flags);
        let mut by_color: Vec<&Face> = faces.iter().filter(|f| f.right != NONE).collect();
        by_color.sort_by_key(|f| f.color);
        let mut passes = 0;
        loop {
            passes += 1;
            let mut changed = self.cluster_rule(flags);
            for f in &by_color {
                let (l, r) = (f.left as usize, f.right as usize);
                let after_l = i32::from(self.level(l)) + i32::from(flags[l]);
                let after_r = i32::from(self.level(r)) + i32::from(flags[r]);
                if after_l - after_r > 1 {
                    flags[r] += 1;
                    changed = true;
                } else if after_r - after_l > 1 {
                    flags[l] += 1;
                    changed = true;
                }
            }
            if !changed {
                return passes;
            }
        }
    }

    /// The smoothing of [`AdaptiveMesh::smooth_flags`] in stages by level, as the device runs it
    /// (amr_smooth.wgsl), each stage evaluated on the flags as it found them. With
    /// a_i = level_i + f_i: pass 0 makes the flags admissible and applies the cluster rule to
    /// them as they came, top = max_i a_i; then stage s = 1 .. top - 1 raises across every face
    /// f_j <- max(f_j, a_i - 1 - level_j), and a raise that lifts a -1 lifts the -1 of its
    /// siblings too. Raises in stage s end at a <= top - s and every a = top - s + 1 was reached
    /// before it, so each stage settles the faces whose higher side ends one level above its
    /// own for good: the stages end at the least admissible flags above the start, the ordered
    /// smoothing's. Returns the stages that can raise (top - 1, at least 0).
    pub fn smooth_flags_in_stages(&self, faces: &[Face], flags: &mut [i8]) -> usize {
        self.smooth_in_stages(faces, flags, usize::MAX)
    }

    /// [`AdaptiveMesh::smooth_flags_in_stages`] cut to its first `most_stages` stages (what
    /// shows that the last stages are needed).
    pub(super) fn smooth_in_stages(
        &self,
        faces: &[Face],
        flags: &mut [i8],
        most_stages: usize,
    ) -> usize {
        self.first_pass(flags);
        let n = self.num_active();
        let after = |flags: &[i8], pos: usize| i32::from(self.level(pos)) + i32::from(flags[pos]);
        let top = (0..n).map(|pos| after(flags, pos)).max().unwrap_or(0);
        let stages = (top - 1).max(0) as usize;
        for _ in 0..stages.min(most_stages) {
            let mut next = flags.to_vec();
            for f in faces.iter().filter(|f| f.right != NONE) {
                let (l, r) = (f.left as usize, f.right as usize);
                for (low, after_high) in [(r, after(flags, l)), (l, after(flags, r))] {
                    let forced = after_high - 1 - i32::from(self.level(low));
                    if forced > i32::from(next[low]) {
                        next[low] = forced as i8;
                    }
                }
            }
            for pos in 0..n {
                if flags[pos] < 0 && next[pos] >= 0 {
                    for sibling in self.sibling_slots(pos) {
                        next[sibling] = next[sibling].max(0);
                    }
                }
            }
            flags.copy_from_slice(&next);
        }
        stages
    }

    /// The smoothing of [`AdaptiveMesh::smooth_flags`] as the device runs it (amr_smooth.wgsl),
    /// its workgroups one after the other, with a_i = level_i + f_i: pass 0 makes the flags
    /// admissible and applies the cluster rule to them as they came; then every slot is settled
    /// (across each of its faces the side that would end more than one level coarser is raised
    /// to one below the other, a_j <- max(a_j, a_i - 1), and a raise that lifts a -1 lifts its
    /// siblings' -1 too), a workgroup of [`SMOOTHING_WORKGROUP`] slots at a time, and the slots
    /// that rise are settled in the workgroup's next round, up to `queue_slots` a round, the
    /// rest handed to a list settled after every workgroup (by the device's last workgroup,
    /// in workgroups of slots and their rounds, into the other list, until one stays empty).
    /// Every raise is forced and every rise is followed by a settle that reads the neighbours
    /// as they stand, so it ends at the least admissible flags above the start, the ordered
    /// smoothing's. Returns the slots settled from the lists and the lists that held them (on
    /// the device the workgroups interleave, so its counts may differ).
    pub fn smooth_flags_in_rounds(
        &self,
        faces: &[Face],
        flags: &mut [i8],
        queue_slots: usize,
    ) -> HandOffs {
        self.first_pass(flags);
        let n = self.num_active();
        let level = |pos: usize| i32::from(self.level(pos));
        let mut neighbors = vec![Vec::new(); n];
        for f in faces.iter().filter(|f| f.right != NONE) {
            neighbors[f.left as usize].push(f.right as usize);
            neighbors[f.right as usize].push(f.left as usize);
        }
        let mut rounds = Rounds {
            after: (0..n)
                .map(|pos| level(pos) + i32::from(flags[pos]))
                .collect(),
            levels: (0..n).map(level).collect(),
            siblings: (0..n)
                .map(|pos| self.sibling_slots(pos).collect())
                .collect(),
            neighbors,
            queue_slots,
            queue: [Vec::new(), Vec::new()],
            queue_out: 0,
            lists: [Vec::new(), Vec::new()],
            waiting: vec![false; n],
            list_out: 0,
            read: Vec::new(),
        };
        let slots: Vec<usize> = (0..n).collect();
        for group in slots.chunks(SMOOTHING_WORKGROUP) {
            rounds.settle_in_rounds(group);
        }
        let mut handed = HandOffs::default();
        let mut list = 0;
        while !rounds.lists[list].is_empty() {
            rounds.list_out = 1 - list;
            let held = std::mem::take(&mut rounds.lists[list]);
            handed.slots += held.len();
            handed.lists += 1;
            for group in held.chunks(SMOOTHING_WORKGROUP) {
                group.iter().for_each(|&x| rounds.waiting[x] = false);
                rounds.settle_in_rounds(group);
            }
            list = 1 - list;
        }
        for (pos, f) in flags.iter_mut().enumerate().take(n) {
            *f = (rounds.after[pos] - rounds.levels[pos]) as i8;
        }
        handed
    }

    /// Pass 0 of the device's smoothing: the flags made admissible and the cluster rule applied
    /// to them as they came.
    fn first_pass(&self, flags: &mut [i8]) {
        self.clamp_flags(flags);
        let n = self.num_active();
        let mut next = flags.to_vec();
        self.cluster_rule_of(flags, &mut next[..n]);
        flags.copy_from_slice(&next);
    }

    /// The slots of the active siblings of the element in slot `pos` (none for a root).
    fn sibling_slots(&self, pos: usize) -> impl Iterator<Item = usize> + '_ {
        let own = self.slots[pos];
        self.sibling_block(pos)
            .into_iter()
            .flat_map(|block| block..block + 4)
            .filter(move |&s| s != own)
            .map(|s| self.elements[s as usize].position)
            .filter(|&p| p != NONE)
            .map(|p| p as usize)
    }

    /// No refinement past the maximum level, no coarsening of a root, flags within -1..=1.
    fn clamp_flags(&self, flags: &mut [i8]) {
        let n = self.num_active();
        for (pos, f) in flags.iter_mut().enumerate().take(n) {
            let level = self.level(pos);
            if *f > 0 && level >= self.max_level {
                *f = 0;
            }
            if *f < 0 && level == 0 {
                *f = 0;
            }
            *f = (*f).clamp(-1, 1);
        }
    }

    /// A coarsening flag stands only if all four siblings are active and flagged -1.
    fn cluster_rule(&self, flags: &mut [i8]) -> bool {
        let mut changed = false;
        for pos in 0..self.num_active() {
            if flags[pos] < 0 && !self.whole_cluster(pos, flags) {
                flags[pos] = 0;
                changed = true;
            }
        }
        changed
    }

    /// The cluster rule on `flags` written to `next` (pass 0 of the device's smoothing).
    fn cluster_rule_of(&self, flags: &[i8], next: &mut [i8]) {
        for (pos, f) in next.iter_mut().enumerate() {
            if flags[pos] < 0 && !self.whole_cluster(pos, flags) {
                *f = (*f).max(0);
            }
        }
    }

    /// Whether the element in slot `pos` and its three siblings are active and flagged -1.
    fn whole_cluster(&self, pos: usize, flags: &[i8]) -> bool {
        self.sibling_block(pos).is_some_and(|block| {
            (block..block + 4).all(|s| {
                let el = &self.elements[s as usize];
                el.position != NONE && flags[el.position as usize] < 0
            })
        })
    }

    /// Adapt by admissible `flags` (see [`AdaptiveMesh::smooth_flags`]), carrying the
    /// coefficients of each slot (`[mode][equation]`) by L2 projection. Coarsening runs first
    /// so refinement reuses the slots and ids it frees; compaction closes the remaining holes
    /// (as [`AdaptiveMesh::compaction`] says).
    pub fn adapt(
        &mut self,
        flags: &[i8],
        coef: &mut Vec<Vec<State>>,
        proj: &Projection,
    ) -> Result<AdaptCounts> {
        let n = self.num_active();
        if flags.len() != n || coef.len() != n {
            return Err(Error::Invalid(format!(
                "adapt: {} flags and {} coefficient sets for {n} elements",
                flags.len(),
                coef.len()
            )));
        }
        let refine: Vec<u32> = (0..n)
            .filter(|&p| flags[p] > 0)
            .map(|p| self.slots[p])
            .collect();
        let mut counts = AdaptCounts::default();
        let starts_cluster = |p: usize| {
            let id = self.slots[p];
            let parent = self.elements[id as usize].parent;
            flags[p] < 0 && parent != NONE && self.elements[parent as usize].first_child == id
        };
        // Clusters in the order of their first child's slot.
        let clusters: Vec<u32> = (0..n)
            .filter(|&p| starts_cluster(p))
            .map(|p| self.elements[self.slots[p] as usize].parent)
            .collect();
        // For the compaction in order, the slots as they were and what each becomes: its
        // element, its children, or nothing (children 1..3 of a coarsened cluster; the parent
        // takes child 0's place).
        let in_order = (self.compaction == Compaction::InOrder).then(|| {
            let sizes: Vec<u8> = (0..n)
                .map(|p| match flags[p] {
                    f if f > 0 => 4,
                    0 => 1,
                    _ => u8::from(starts_cluster(p)),
                })
                .collect();
            (self.slots.clone(), sizes)
        });
        let mut holes = Vec::new();
        for &parent in &clusters {
            self.coarsen(parent, coef, proj, &mut holes);
        }
        counts.coarsened = clusters.len();
        let mut split = Vec::new();
        for &id in &refine {
            for &e in &self.elements[id as usize].edges {
                if self.edges[e as usize].first_child == NONE {
                    split.push(e);
                }
            }
        }
        split.sort_unstable();
        split.dedup();
        for e in split {
            self.split_edge(e);
        }
        let mut hole = holes.into_iter();
        for &id in &refine {
            self.refine(id, coef, proj, &mut hole);
            counts.refined += 1;
        }
        match in_order {
            Some((old_slots, sizes)) => self.place_in_order(&old_slots, &sizes, coef),
            None => {
                let mut holes: Vec<u32> = hole.collect();
                holes.sort_unstable();
                self.compact(&holes, coef);
            }
        }
        Ok(counts)
    }

    fn coarsen(
        &mut self,
        parent: u32,
        coef: &mut [Vec<State>],
        proj: &Projection,
        holes: &mut Vec<u32>,
    ) {
        let block = self.elements[parent as usize].first_child;
        let pos: Vec<u32> = (block..block + 4)
            .map(|c| self.elements[c as usize].position)
            .collect();
        let merged = proj.coarsen([
            &coef[pos[0] as usize],
            &coef[pos[1] as usize],
            &coef[pos[2] as usize],
            &coef[pos[3] as usize],
        ]);
        coef[pos[0] as usize] = merged;
        self.slots[pos[0] as usize] = parent;
        for &p in &pos[1..] {
            self.slots[p as usize] = NONE;
            holes.push(p);
        }
        for c in block..block + 4 {
            self.elements[c as usize].position = NONE;
        }
        let el = &mut self.elements[parent as usize];
        el.position = pos[0];
        el.first_child = NONE;
        let sides = el.edges;
        self.free_element_blocks.push_back(block);
        let interior = self.elements[block as usize + 3].edges[0];
        for e in interior..interior + 3 {
            self.edges[e as usize].alive = false;
        }
        self.free_interior_blocks.push_back(interior);
        for e in sides {
            let s = self.side_of(e, parent);
            let edge = &self.edges[e as usize];
            let other = edge.elements[1 - s];
            let other_refined = other != NONE && self.elements[other as usize].first_child != NONE;
            let first = edge.first_child;
            if other_refined {
                for c in first..first + 2 {
                    self.edges[c as usize].elements[s] = NONE;
                }
            } else {
                for c in first..first + 2 {
                    self.edges[c as usize].alive = false;
                }
                self.edges[e as usize].first_child = NONE;
                self.free_split_blocks.push_back(first);
            }
        }
    }

    fn split_edge(&mut self, e: u32) {
        let edge = self.edges[e as usize].clone();
        let k = self.base_colors;
        let child = |color| Edge {
            level: edge.level + 1,
            parent: e,
            first_child: NONE,
            elements: [NONE; 2],
            locals: [0; 2],
            kind: edge.kind,
            state: edge.state,
            color,
            alive: true,
        };
        let first = take_block(
            &mut self.free_split_blocks,
            &mut self.edges,
            2,
            Edge::unused,
        );
        self.edges[first as usize] = child(edge.color);
        self.edges[first as usize + 1] = child((edge.color + k) % (2 * k));
        self.edges[e as usize].first_child = first;
    }

    fn refine(
        &mut self,
        id: u32,
        coef: &mut Vec<Vec<State>>,
        proj: &Projection,
        holes: &mut impl Iterator<Item = u32>,
    ) {
        let parent = self.elements[id as usize].clone();
        let level = parent.level + 1;
        let verts = child_vertices(&parent.vertices);
        let block = take_block(&mut self.free_element_blocks, &mut self.elements, 4, || {
            Element {
                vertices: [[0.0; 2]; 3],
                level: 0,
                parent: NONE,
                first_child: NONE,
                edges: [NONE; 3],
                position: NONE,
            }
        });
        let parent_coef = coef[parent.position as usize].clone();
        let mut positions = [parent.position; 4];
        for p in positions.iter_mut().skip(1) {
            *p = holes.next().unwrap_or_else(|| {
                self.slots.push(NONE);
                coef.push(Vec::new());
                (self.slots.len() - 1) as u32
            });
        }
        for c in 0..4 {
            let cid = block + c as u32;
            self.elements[cid as usize] = Element {
                vertices: verts[c],
                level,
                parent: id,
                first_child: NONE,
                edges: [NONE; 3],
                position: positions[c],
            };
            self.slots[positions[c] as usize] = cid;
            coef[positions[c] as usize] = proj.refine(&parent_coef, c);
        }
        let el = &mut self.elements[id as usize];
        el.first_child = block;
        el.position = NONE;
        // Halves of the parent's sides.
        for s in 0..3 {
            let e = parent.edges[s];
            let side = self.side_of(e, id);
            let first = self.edges[e as usize].first_child;
            // The parent walks its side forwards on the left of the edge, backwards on the right.
            let (a, b) = if side == 0 {
                (first, first + 1)
            } else {
                (first + 1, first)
            };
            for (child, half) in [(s, a), ((s + 1) % 3, b)] {
                let cid = block + child as u32;
                self.elements[cid as usize].edges[s] = half;
                let h = &mut self.edges[half as usize];
                h.elements[side] = cid;
                h.locals[side] = s as u8;
            }
        }
        // Interior edges: side s of corner child s + 2 (left) and of the centre child (right).
        let interior = take_block(
            &mut self.free_interior_blocks,
            &mut self.edges,
            3,
            Edge::unused,
        );
        for s in 0..3 {
            let corner = (s + 2) % 3;
            let e = interior + s as u32;
            self.edges[e as usize] = Edge {
                level,
                parent: NONE,
                first_child: NONE,
                elements: [block + corner as u32, block + 3],
                locals: [s as u8; 2],
                kind: EDGE_INTERIOR,
                state: 0,
                color: self.edges[parent.edges[s] as usize].color,
                alive: true,
            };
            self.elements[(block + corner as u32) as usize].edges[s] = e;
            self.elements[(block + 3) as usize].edges[s] = e;
        }
    }

    /// GK19 Algorithm 4: fill the holes below the active count with the last occupied slots.
    fn compact(&mut self, holes: &[u32], coef: &mut Vec<Vec<State>>) {
        let active = self.slots.iter().filter(|&&s| s != NONE).count();
        let to: Vec<u32> = holes
            .iter()
            .copied()
            .filter(|&h| (h as usize) < active)
            .collect();
        let from: Vec<usize> = (active..self.slots.len())
            .filter(|&p| self.slots[p] != NONE)
            .collect();
        debug_assert_eq!(to.len(), from.len());
        for (&t, &f) in to.iter().zip(&from) {
            let id = self.slots[f];
            self.slots[t as usize] = id;
            self.elements[id as usize].position = t;
            coef.swap(t as usize, f);
        }
        self.slots.truncate(active);
        coef.truncate(active);
    }
}

impl AdaptiveMesh {
    /// [`Compaction::InOrder`]: the elements that came from old slot p (the element
    /// `old_slots[p]` held, its children, or the parent that took its place; `sizes[p]` of
    /// them) go to the new slots sum_{q < p} sizes[q] onwards, with their coefficients.
    fn place_in_order(&mut self, old_slots: &[u32], sizes: &[u8], coef: &mut Vec<Vec<State>>) {
        let mut from = Vec::with_capacity(self.slots.len());
        for (p, (&id, &size)) in old_slots.iter().zip(sizes).enumerate() {
            match size {
                4 => {
                    let first = self.elements[id as usize].first_child;
                    from.extend((first..first + 4).map(|c| self.elements[c as usize].position));
                }
                1 => from.push(p as u32),
                _ => {}
            }
        }
        let slots: Vec<u32> = from.iter().map(|&f| self.slots[f as usize]).collect();
        let moved: Vec<Vec<State>> = from
            .iter()
            .map(|&f| std::mem::take(&mut coef[f as usize]))
            .collect();
        for (i, &id) in slots.iter().enumerate() {
            self.elements[id as usize].position = i as u32;
        }
        self.slots = slots;
        *coef = moved;
    }
}

/// Slots a workgroup of the device's smoothing settles together (amr_smooth.wgsl's
/// WORKGROUP_SIZE), with the rounds of what they raise.
pub const SMOOTHING_WORKGROUP: usize = 64;

/// What [`AdaptiveMesh::smooth_flags_in_rounds`] handed off: the slots settled from the lists
/// and the lists that held them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HandOffs {
    pub slots: usize,
    pub lists: usize,
}

/// [`AdaptiveMesh::smooth_flags_in_rounds`]'s state: per slot its a, level, active siblings
/// and face neighbours; the workgroup's queue (this round's slots and the next's), and the two
/// hand-off lists (a slot waits in one at most once).
struct Rounds {
    after: Vec<i32>,
    levels: Vec<i32>,
    siblings: Vec<Vec<usize>>,
    neighbors: Vec<Vec<usize>>,
    queue_slots: usize,
    queue: [Vec<usize>; 2],
    queue_out: usize,
    lists: [Vec<usize>; 2],
    waiting: Vec<bool>,
    list_out: usize,
    /// A settle's neighbours with their a as read before its rules (kept to reuse its room).
    read: Vec<(usize, i32)>,
}

impl Rounds {
    /// Slot `pos` to be settled after a rise: in the queue's next round, or when that is full
    /// in list `list_out` unless it waits there already.
    fn follow(&mut self, pos: usize) {
        let out = self.queue_out;
        if self.queue[out].len() < self.queue_slots {
            self.queue[out].push(pos);
        } else if !self.waiting[pos] {
            self.waiting[pos] = true;
            self.lists[self.list_out].push(pos);
        }
    }

    /// Raise slot `pos` to a = `wanted`; a rise that lifts its -1 lifts its siblings' -1.
    fn raise(&mut self, pos: usize, wanted: i32) {
        let old = self.after[pos];
        if old >= wanted {
            return;
        }
        self.after[pos] = wanted;
        self.follow(pos);
        let level = self.levels[pos];
        if old + 1 != level {
            return;
        }
        for k in 0..self.siblings[pos].len() {
            let sibling = self.siblings[pos][k];
            if self.after[sibling] < level {
                self.after[sibling] = level;
                self.follow(sibling);
            }
        }
    }

    /// The 2:1 rule across every face of slot `x`, with its a and its neighbours' read once
    /// before them (as amr_settle loads them).
    fn settle(&mut self, x: usize) {
        let a = self.after[x];
        let mut read = std::mem::take(&mut self.read);
        read.clear();
        read.extend(self.neighbors[x].iter().map(|&n| (n, self.after[n])));
        for &(n, b) in &read {
            if a > b + 1 {
                self.raise(n, a - 1);
            } else if b > a + 1 {
                self.raise(x, b - 1);
            }
        }
        self.read = read;
    }

    /// Settle a workgroup's `slots`, then what rises, a round at a time, until a round raises
    /// nothing.
    fn settle_in_rounds(&mut self, slots: &[usize]) {
        self.queue_out = 0;
        slots.iter().for_each(|&x| self.settle(x));
        let mut half = 0;
        loop {
            let round = std::mem::take(&mut self.queue[half]);
            if round.is_empty() {
                return;
            }
            self.queue_out = 1 - half;
            round.iter().for_each(|&x| self.settle(x));
            half = 1 - half;
        }
    }
}

/// The first id of a block of `len` entries: a freed block if any (oldest first), else new
/// entries made by `fresh` at the end.
fn take_block<T>(
    free: &mut VecDeque<u32>,
    items: &mut Vec<T>,
    len: usize,
    fresh: impl Fn() -> T,
) -> u32 {
    if let Some(first) = free.pop_front() {
        return first;
    }
    let first = items.len() as u32;
    items.extend((0..len).map(|_| fresh()));
    first
}

/// The trees as the flat arrays the GPU adaptation works on (`amr_*` kernels): one layout for
/// upload, read-back and comparison. Free lists are rings starting at their heads.
#[derive(Clone, Debug, PartialEq)]
pub struct FlatTree {
    /// Per element id: level, parent, first child, slot.
    pub element_tree: Vec<[u32; 4]>,
    /// Per element id: the edges of its three sides (and a zero).
    pub element_edges: Vec<[u32; 4]>,
    /// Per element id: its three vertices.
    pub element_vertices: Vec<[[f64; 2]; 3]>,
    /// Per edge id: level | color << 8 | alive << 16, parent, first child, kind | state << 4.
    pub edge_tree: Vec<[u32; 4]>,
    /// Per edge id and side: (element, local side).
    pub edge_sides: Vec<[[u32; 2]; 2]>,
    /// Element id per slot.
    pub slots: Vec<u32>,
    /// Freed blocks, oldest first: elements (4 ids), split edges (2), interior edges (3).
    pub free: [Vec<u32>; 3],
}

/// Bits of [`FlatTree::edge_tree`]'s first word.
pub const EDGE_COLOR_SHIFT: u32 = 8;
pub const EDGE_ALIVE_BIT: u32 = 1 << 16;

impl AdaptiveMesh {
    /// The trees in the GPU layout.
    pub fn to_flat(&self) -> FlatTree {
        FlatTree {
            element_tree: self
                .elements
                .iter()
                .map(|e| [u32::from(e.level), e.parent, e.first_child, e.position])
                .collect(),
            element_edges: self
                .elements
                .iter()
                .map(|e| [e.edges[0], e.edges[1], e.edges[2], 0])
                .collect(),
            element_vertices: self.elements.iter().map(|e| e.vertices).collect(),
            edge_tree: self
                .edges
                .iter()
                .map(|e| {
                    [
                        u32::from(e.level)
                            | u32::from(e.color) << EDGE_COLOR_SHIFT
                            | if e.alive { EDGE_ALIVE_BIT } else { 0 },
                        e.parent,
                        e.first_child,
                        e.kind | (e.state as u32) << 4,
                    ]
                })
                .collect(),
            edge_sides: self
                .edges
                .iter()
                .map(|e| {
                    [
                        [e.elements[0], u32::from(e.locals[0])],
                        [e.elements[1], u32::from(e.locals[1])],
                    ]
                })
                .collect(),
            slots: self.slots.clone(),
            free: [
                self.free_element_blocks.iter().copied().collect(),
                self.free_split_blocks.iter().copied().collect(),
                self.free_interior_blocks.iter().copied().collect(),
            ],
        }
    }

    /// The trees from the GPU layout (the inverse of [`AdaptiveMesh::to_flat`]), checked for
    /// ids out of range so a corrupt read-back is an error, not a panic later.
    pub fn from_flat(flat: &FlatTree, max_level: u8, base_colors: u8) -> Result<AdaptiveMesh> {
        let (ne, nd) = (flat.element_tree.len(), flat.edge_tree.len());
        let bad = |what: String| Err(Error::Invalid(format!("adaptive mesh read-back: {what}")));
        if flat.element_edges.len() != ne
            || flat.element_vertices.len() != ne
            || flat.edge_sides.len() != nd
        {
            return bad("array lengths differ".into());
        }
        let id_ok = |v: u32, n: usize| v == NONE || (v as usize) < n;
        let mut elements = Vec::with_capacity(ne);
        for (i, ((t, e), v)) in flat
            .element_tree
            .iter()
            .zip(&flat.element_edges)
            .zip(&flat.element_vertices)
            .enumerate()
        {
            if t[0] > 255
                || !id_ok(t[1], ne)
                || !id_ok(t[2], ne)
                || e[..3].iter().any(|&x| !id_ok(x, nd))
            {
                return bad(format!("element {i} refers to an id out of range"));
            }
            elements.push(Element {
                vertices: *v,
                level: t[0] as u8,
                parent: t[1],
                first_child: t[2],
                edges: [e[0], e[1], e[2]],
                position: t[3],
            });
        }
        let mut edges = Vec::with_capacity(nd);
        for (i, (t, s)) in flat.edge_tree.iter().zip(&flat.edge_sides).enumerate() {
            if !id_ok(t[1], nd)
                || !id_ok(t[2], nd)
                || s.iter().any(|x| !id_ok(x[0], ne) || x[1] > 2)
            {
                return bad(format!("edge {i} refers to an id out of range"));
            }
            edges.push(Edge {
                level: (t[0] & 0xff) as u8,
                parent: t[1],
                first_child: t[2],
                elements: [s[0][0], s[1][0]],
                locals: [s[0][1] as u8, s[1][1] as u8],
                kind: t[3] & 0xf,
                state: (t[3] >> 4) as usize,
                color: (t[0] >> EDGE_COLOR_SHIFT & 0xff) as u8,
                alive: t[0] & EDGE_ALIVE_BIT != 0,
            });
        }
        Ok(AdaptiveMesh {
            max_level,
            base_colors,
            compaction: Compaction::default(),
            elements,
            edges,
            free_element_blocks: flat.free[0].iter().copied().collect(),
            free_split_blocks: flat.free[1].iter().copied().collect(),
            free_interior_blocks: flat.free[2].iter().copied().collect(),
            slots: flat.slots.clone(),
        })
    }
}
