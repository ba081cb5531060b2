// The adaptive trees on the GPU, shared by the amr_* kernels (FlatTree in
// src/solver/dg/amr/tree.rs is the same layout; src/solver/dg/amr/gpu.rs drives the phases):
//   element_tree[id]  = (level, parent, first child, slot)
//   element_edges[id] = (edge of side 0, 1, 2, 0)
//   vertices[3 id + j]
//   edge_tree[id]     = (level | color << 8 | alive << 16, parent, first child, kind | state << 4)
//   edge_sides[2 id + s] = (element, local side) on side s
// Freed blocks wait in three rings (element blocks of 4, split-edge blocks of 2, interior-edge
// blocks of 3) inside one buffer; the counters hold their heads and lengths and what one phase
// hands the next. Shared records are written a 32-bit word at a time: two threads may write
// different words of one record in the same phase, never the same word.

const NONE: u32 = 0xffffffffu;
const EDGE_ALIVE: u32 = 0x10000u;
const EDGE_INTERIOR: u32 = 0u;

// Counter words (mod counter in src/solver/dg/amr/gpu.rs).
const C_ACTIVE: u32 = 0u;
const C_ELEMENT_IDS: u32 = 1u;
const C_EDGE_IDS: u32 = 2u;
// Ring r: head at C_RINGS + 2 r, length at C_RINGS + 2 r + 1.
const C_RINGS: u32 = 3u;
// The smoothing's top (max of level + flag after its pass 0), handed on by amr_scan 0.
const C_TOP_LEVEL: u32 = 9u;
const C_CLUSTERS: u32 = 10u;
const C_REFINES: u32 = 11u;
const C_SPLIT_FREES: u32 = 12u;
const C_SPLITS: u32 = 13u;
const C_SLOTS: u32 = 14u;
const C_NEW_ACTIVE: u32 = 15u;
const C_COMPACT_HOLES: u32 = 16u;
const C_ERROR: u32 = 17u;
// Faces whose two slots lie more than FAR_SLOTS apart (amr_faces, amr_permute).
const C_FAR_FACES: u32 = 18u;
// What amr_scan 0 decided of the adaptation after the smoothing (ADAPT_* below): unless it
// is ADAPT_RUNS, every kernel after amr_scan 0 returns at once, so the host may queue the
// adaptation behind the smoothing before it has read the counts (GpuAdaptation::apply). In the
// counters' first 128 bytes, with the counts those kernels load with it.
const C_DECISION: u32 = 19u;
// Face color offsets: 2K + 1 words, up to word 62 (K <= 21).
const C_COLOR_OFFSETS: u32 = 20u;
// The element half sides the adapted mesh's faces cover (amr_faces: 2 for a face's left side,
// whole, and 2 or 1 for its right side, whole or half; amr_scan 2 clears it): 6 per element
// when no face is missing (a watertight mesh), which the host checks at the next smoothing.
const C_SIDE_UNITS: u32 = 63u;
// The solver's clock (CLOCK_WORDS = 8 words) copied past the counters by amr_scan 0, so that
// one read-back gives a run the clock and the smoothing's counts.
const C_CLOCK: u32 = 64u;
const CLOCK_WORDS: u32 = 8u;
// After the clock: the clock's step count (its word 5, an f32) the batch before this
// adaptation must reach for the adaptation to be due (the host writes it with the flags; 0
// when the host decides at once; amr_scan 0 reads it once), and the smoothing's top as its
// pass 0 gathers it (amr_smooth; 0 between adaptations).
const C_DUE_STEPS: u32 = 72u;
const C_SMOOTH_TOP: u32 = 73u;
// The smoothing's rounds (amr_settle): the ticket that finds its last workgroup, the lengths of
// its two hand-off lists (the slots that did not fit their workgroup's queue; the last
// workgroup settles them and leaves both at 0), and how many it settled (0 when every round
// fitted its queue).
const C_SMOOTH_TICKET: u32 = 74u;
const C_SMOOTH_LISTS: u32 = 75u;
const C_SMOOTH_HANDED: u32 = 77u;
const ADAPT_RUNS: u32 = 0u;
// No cluster to coarsen and no element to refine: nothing would move.
const ADAPT_NOTHING: u32 = 1u;
// More slots or tree ids than the buffers hold (the host grows them and starts again).
const ADAPT_NO_ROOM: u32 = 2u;
// The clock stopped at the run's end before the batch's steps were all taken.
const ADAPT_NOT_DUE: u32 = 3u;

struct AmrParams {
    element_capacity: u32,
    edge_capacity: u32,
    ring_elements: u32,
    ring_splits: u32,
    ring_interiors: u32,
    base_colors: u32,
    max_level: u32,
    field: u32,
    refine_only: u32,
    threshold: f32,
    delta: f32,
    gamma: f32,
    // 1: add the largest jump of the field's element means across the faces to the indicator.
    jumps: u32,
    // Element slots NE of the solver's buffers.
    slot_capacity: u32,
    // Quadrature nodes per face (NQE): the grid of the face nodes' launch record (amr_scan 2).
    face_nodes: u32,
    pad3: u32,
}

fn ring_base(p: AmrParams, r: u32) -> u32 {
    if (r == 0u) {
        return 0u;
    }
    if (r == 1u) {
        return p.ring_elements;
    }
    return p.ring_elements + p.ring_splits;
}

fn ring_size(p: AmrParams, r: u32) -> u32 {
    if (r == 0u) {
        return p.ring_elements;
    }
    if (r == 1u) {
        return p.ring_splits;
    }
    return p.ring_interiors;
}

// Index in the ring buffer of entry k counted from the head of ring r.
fn ring_index(p: AmrParams, r: u32, head: u32, k: u32) -> u32 {
    return ring_base(p, r) + (head + k) % ring_size(p, r);
}

// Slots in use once `refines` of `num_active` elements are refined with `holes` slots freed by
// coarsening: the children fill the holes first, then slots past the active ones.
fn slots_in_use(num_active: u32, refines: u32, holes: u32) -> u32 {
    return num_active + max(3u * refines, holes) - holes;
}

// The compaction's bounds (GK19 Algorithm 4) from the counts the adaptation started with: x the
// new active count n (the holes below it are filled), y the slots in use (n <= y; the elements
// in slots n .. y move into the holes).
fn compaction_bounds(num_active: u32, clusters: u32, refines: u32) -> vec2<u32> {
    let holes = 3u * clusters;
    return vec2<u32>(num_active + 3u * refines - holes, slots_in_use(num_active, refines, holes));
}

// New split-edge ids the refinement takes: the splits the ring's free blocks cannot hold.
fn new_split_blocks(splits: u32, ring_free: u32) -> u32 {
    return splits - min(splits, ring_free);
}

// The first of the marks' parts over the edge ids (amr_mark): after the three parts of NE
// slots, and with the compaction in order (in_order = 1) after a fourth, the slots it vacates.
fn edge_part(ne: u32, in_order: u32) -> u32 {
    return (3u + in_order) * ne;
}

// The edge ids in use once the refinement has taken its ids (what amr_scan's settle stores
// after it): the split blocks and interior blocks the rings cannot hold (the rings' free
// blocks counted with those the coarsening freed into them) come as new ids.
fn settled_edge_ids(edge_ids: u32, splits: u32, split_ring_free: u32, refines: u32,
                    interior_ring_free: u32) -> u32 {
    return edge_ids + 2u * new_split_blocks(splits, split_ring_free)
        + 3u * (refines - min(refines, interior_ring_free));
}

// Whether edge e with tree record t is a face of the mesh: a live leaf below the edge ids in
// use.
fn is_face_edge(e: u32, t: vec4<u32>, edge_ids: u32) -> bool {
    return e < edge_ids && (t.x & EDGE_ALIVE) != 0u && t.z == NONE;
}
