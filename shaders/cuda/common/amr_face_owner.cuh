// CUDA twin of shaders/common/amr_face_owner.wgsl: which faces an element owns, shared by
// amr_geometry (its face marks) and amr_faces (the faces it writes), so that both apply one
// rule. Needs common/amr_tree.cuh.

// Color of the face that element `id` owns on its side over edge e (it is the face's left
// side: e is a live leaf with the element on side 0, or on side 1 with side 0 coarser); NONE
// when the side has no face of its own (a split side, or the right side of a face). Both
// sides are loaded at once, with the edge's node.
__device__ __forceinline__ u32 owned_face_color(
    u32 id, u32 e, const uint4* edge_tree, const uint2* edge_sides, u32 edge_ids) {
    uint4 t = edge_tree[e];
    u32 side0 = edge_sides[2u * e].x;
    u32 side1 = edge_sides[2u * e + 1u].x;
    bool owns = side0 == id || (side0 == NONE && side1 == id);
    return is_face_edge(e, t, edge_ids) && owns ? (t.x >> 8u) & 0xffu : NONE;
}

// The faces an element owns (`owned`: their colors, NONE where it owns none) as packed marks,
// as the WGSL twin: word w holds planes 3w .. 3w + 2 in lanes of MARK_LANE_BITS bits; with the
// color order a 1 in the plane of each owned color, else one plane, the number of owned faces.
#define MARK_LANE_BITS 10u
#define MARK_LANE_MASK 0x3ffu
// Words of the most planes: MAX_COLORS = 42 in src/solver/dg/amr/gpu.rs, 3 a word.
#define MARK_WORDS 14u

__device__ __forceinline__ u32 face_mark_word(const u32 owned[3], u32 w, bool color_order) {
    if (!color_order) {
        u32 count = (owned[0] != NONE ? 1u : 0u) + (owned[1] != NONE ? 1u : 0u) +
                    (owned[2] != NONE ? 1u : 0u);
        return w == 0u ? count : 0u;
    }
    u32 word = 0u;
#pragma unroll
    for (u32 s = 0u; s < 3u; s = s + 1u) {
        if (owned[s] != NONE && owned[s] / 3u == w) {
            word = word + (1u << (MARK_LANE_BITS * (owned[s] % 3u)));
        }
    }
    return word;
}

// Lane `lane` (0 to 2) of a packed word of marks.
__device__ __forceinline__ u32 mark_lane(u32 word, u32 lane) {
    return (word >> (MARK_LANE_BITS * lane)) & MARK_LANE_MASK;
}
