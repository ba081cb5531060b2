// CUDA twin of shaders/common/amr_tree.wgsl. The adaptive trees on the GPU, shared by the amr_*
// kernels (FlatTree in src/solver/dg/amr/tree.rs is the same layout; src/solver/dg/amr/gpu.rs
// drives the phases):
//   element_tree[id]  = (level, parent, first child, slot)
//   element_edges[id] = (edge of side 0, 1, 2, 0)
//   vertices[3 id + j]
//   edge_tree[id]     = (level | color << 8 | alive << 16, parent, first child, kind | state << 4)
//   edge_sides[2 id + s] = (element, local side) on side s
// Freed blocks wait in three rings (element blocks of 4, split-edge blocks of 2, interior-edge
// blocks of 3) inside one buffer; the counters hold their heads and lengths and what one phase
// hands the next. Shared records are written a 32-bit word at a time: two threads may write
// different words of one record in the same phase, never the same word. Here that means a store
// to one member (`.x`, ..., `.w`) or through word(), never a whole-record read-modify-write.
//
// The WGSL uniform `params` is a kernel parameter passed by value (AmrParams, mirroring
// AmrParams in src/solver/dg/amr/gpu.rs: 16 words).

#define NONE 0xffffffffu
#define EDGE_ALIVE 0x10000u
#define EDGE_INTERIOR 0u

// Counter words (mod counter in src/solver/dg/amr/gpu.rs).
#define C_ACTIVE 0u
#define C_ELEMENT_IDS 1u
#define C_EDGE_IDS 2u
// Ring r: head at C_RINGS + 2 r, length at C_RINGS + 2 r + 1.
#define C_RINGS 3u
// The smoothing's top (max of level + flag after its pass 0), handed on by amr_scan 0.
#define C_TOP_LEVEL 9u
#define C_CLUSTERS 10u
#define C_REFINES 11u
#define C_SPLIT_FREES 12u
#define C_SPLITS 13u
#define C_SLOTS 14u
#define C_NEW_ACTIVE 15u
#define C_COMPACT_HOLES 16u
#define C_ERROR 17u
// Faces whose two slots lie more than FAR_SLOTS apart (amr_faces, amr_permute).
#define C_FAR_FACES 18u
// What amr_scan 0 decided of the adaptation after the smoothing (ADAPT_* below): unless it
// is ADAPT_RUNS, every kernel after amr_scan 0 returns at once, so the host may queue the
// adaptation behind the smoothing before it has read the counts (GpuAdaptation::apply). In the
// counters' first 128 bytes, with the counts those kernels load with it.
#define C_DECISION 19u
// Face color offsets: 2K + 1 words, up to word 62 (K <= 21).
#define C_COLOR_OFFSETS 20u
// The element half sides the adapted mesh's faces cover (amr_faces: 2 for a face's left side,
// whole, and 2 or 1 for its right side, whole or half; amr_scan 2 clears it): 6 per element
// when no face is missing (a watertight mesh), which the host checks at the next smoothing.
#define C_SIDE_UNITS 63u
// The solver's clock (CLOCK_WORDS = 8 words) copied past the counters by amr_scan 0, so that
// one read-back gives a run the clock and the smoothing's counts.
#define C_CLOCK 64u
#define CLOCK_WORDS 8u
// After the clock: the clock's step count (its word 5, an f32) the batch before this
// adaptation must reach for the adaptation to be due (the host writes it with the flags; 0
// when the host decides at once; amr_scan 0 reads it once), and the smoothing's top as its
// pass 0 gathers it (amr_smooth; 0 between adaptations).
#define C_DUE_STEPS 72u
#define C_SMOOTH_TOP 73u
// The smoothing's rounds (amr_settle): the ticket that finds its last block, the lengths of its
// two hand-off lists (the slots that did not fit their block's queue; the last block settles
// them and leaves both at 0), and how many it settled (0 when every round fitted its queue).
#define C_SMOOTH_TICKET 74u
#define C_SMOOTH_LISTS 75u
#define C_SMOOTH_HANDED 77u
#define ADAPT_RUNS 0u
// No cluster to coarsen and no element to refine: nothing would move.
#define ADAPT_NOTHING 1u
// More slots or tree ids than the buffers hold (the host grows them and starts again).
#define ADAPT_NO_ROOM 2u
// The clock stopped at the run's end before the batch's steps were all taken.
#define ADAPT_NOT_DUE 3u

struct AmrParams {
    u32 element_capacity;
    u32 edge_capacity;
    u32 ring_elements;
    u32 ring_splits;
    u32 ring_interiors;
    u32 base_colors;
    u32 max_level;
    u32 field;
    u32 refine_only;
    float threshold;
    float delta;
    float gamma;
    // 1: add the largest jump of the field's element means across the faces to the indicator.
    u32 jumps;
    // Element slots NE of the solver's buffers.
    u32 slot_capacity;
    // Quadrature nodes per face (NQE): the grid of the face nodes' launch record (amr_scan 2).
    u32 face_nodes;
    u32 pad3;
};

__device__ __forceinline__ u32 ring_base(const AmrParams& p, u32 r) {
    if (r == 0u) {
        return 0u;
    }
    if (r == 1u) {
        return p.ring_elements;
    }
    return p.ring_elements + p.ring_splits;
}

__device__ __forceinline__ u32 ring_size(const AmrParams& p, u32 r) {
    if (r == 0u) {
        return p.ring_elements;
    }
    if (r == 1u) {
        return p.ring_splits;
    }
    return p.ring_interiors;
}

// Index in the ring buffer of entry k counted from the head of ring r.
__device__ __forceinline__ u32 ring_index(const AmrParams& p, u32 r, u32 head, u32 k) {
    return ring_base(p, r) + (head + k) % ring_size(p, r);
}

/// Word k of record i of a vec4<u32> buffer, as WGSL's arr[i][k]: a 32-bit load or store of
/// that word alone (other threads may write the record's other words in the same launch).
__device__ __forceinline__ u32& word(uint4* arr, u32 i, u32 k) {
    return reinterpret_cast<u32*>(&arr[i])[k];
}
__device__ __forceinline__ u32 word(const uint4* arr, u32 i, u32 k) {
    return reinterpret_cast<const u32*>(&arr[i])[k];
}

/// Component k of a private vec4<u32>, as WGSL's v[k] (read and write).
__device__ __forceinline__ u32& at(uint4& v, u32 k) {
    return k == 0u ? v.x : (k == 1u ? v.y : (k == 2u ? v.z : v.w));
}

/// WGSL length() of a vec2<f32>.
__device__ __forceinline__ float length(float2 v) {
    return sqrtf(v.x * v.x + v.y * v.y);
}

// Slots in use once `refines` of `num_active` elements are refined with `holes` slots freed by
// coarsening: the children fill the holes first, then slots past the active ones.
__device__ __forceinline__ u32 slots_in_use(u32 num_active, u32 refines, u32 holes) {
    return num_active + max(3u * refines, holes) - holes;
}

// The compaction's bounds (GK19 Algorithm 4) from the counts the adaptation started with: x the
// new active count n (the holes below it are filled), y the slots in use (n <= y; the elements
// in slots n .. y move into the holes).
__device__ __forceinline__ uint2 compaction_bounds(
    u32 num_active, u32 clusters, u32 refines) {
    u32 holes = 3u * clusters;
    u32 n = num_active + 3u * refines - holes;
    return make_uint2(n, slots_in_use(num_active, refines, holes));
}

// New split-edge ids the refinement takes: the splits the ring's free blocks cannot hold.
__device__ __forceinline__ u32 new_split_blocks(u32 splits, u32 ring_free) {
    return splits - min(splits, ring_free);
}

// The first of the marks' parts over the edge ids (amr_mark): after the three parts of NE
// slots, and with the compaction in order (in_order = 1) after a fourth, the slots it vacates.
__device__ __forceinline__ u32 edge_part(u32 ne, u32 in_order) {
    return (3u + in_order) * ne;
}

// The edge ids in use once the refinement has taken its ids (what amr_scan's settle stores
// after it): the split blocks and interior blocks the rings cannot hold (the rings' free
// blocks counted with those the coarsening freed into them) come as new ids.
__device__ __forceinline__ u32 settled_edge_ids(u32 edge_ids, u32 splits, u32 split_ring_free,
                                                u32 refines, u32 interior_ring_free) {
    return edge_ids + 2u * new_split_blocks(splits, split_ring_free)
        + 3u * (refines - min(refines, interior_ring_free));
}

// Whether edge e with tree record t is a face of the mesh: a live leaf below the edge ids in
// use.
__device__ __forceinline__ bool is_face_edge(u32 e, uint4 t, u32 edge_ids) {
    return e < edge_ids && (t.x & EDGE_ALIVE) != 0u && t.z == NONE;
}
