// Which faces an element owns, shared by amr_geometry (its face marks) and amr_faces (the faces
// it writes), so that both apply one rule. The including kernel includes common/amr_tree.wgsl
// and declares edge_tree and edge_sides (its layout).

// Color of the face that element `id` owns on its side over edge e (it is the face's left
// side: e is a live leaf with the element on side 0, or on side 1 with side 0 coarser); NONE
// when the side has no face of its own (a split side, or the right side of a face). Both
// sides are loaded at once, with the edge's node.
fn owned_face_color(id: u32, e: u32, edge_ids: u32) -> u32 {
    let t = edge_tree[e];
    let side0 = edge_sides[2u * e].x;
    let side1 = edge_sides[2u * e + 1u].x;
    let owns = side0 == id || (side0 == NONE && side1 == id);
    return select(NONE, (t.x >> 8u) & 0xffu, is_face_edge(e, t, edge_ids) && owns);
}

// The faces an element owns (`owned`: their colors, NONE where it owns none) as packed marks,
// for a workgroup to number its slots' faces itself (amr_geometry and amr_faces with the
// compaction in order): word w holds planes 3w .. 3w + 2 in lanes of MARK_LANE_BITS bits
// (plane c at bit MARK_LANE_BITS (c % 3)). With the color order a 1 in the plane of each
// owned color; else one plane, the number of owned faces. A lane holds the sum over the 256
// slots of a workgroup (at most 3 x 256 < 2^10), so a sum of packed words adds lane by lane.
const MARK_LANE_BITS: u32 = 10u;
const MARK_LANE_MASK: u32 = 0x3ffu;
// Words of the most planes: MAX_COLORS = 42 in src/solver/dg/amr/gpu.rs, 3 a word.
const MARK_WORDS: u32 = 14u;

fn face_mark_word(owned: vec3<u32>, w: u32, color_order: bool) -> u32 {
    let held = owned != vec3<u32>(NONE);
    if (!color_order) {
        return select(0u, dot(select(vec3<u32>(0u), vec3<u32>(1u), held), vec3<u32>(1u)),
                      w == 0u);
    }
    var word = 0u;
    for (var s = 0u; s < 3u; s = s + 1u) {
        if (held[s] && owned[s] / 3u == w) {
            word = word + (1u << (MARK_LANE_BITS * (owned[s] % 3u)));
        }
    }
    return word;
}

// Lane `lane` (0 to 2) of a packed word of marks.
fn mark_lane(word: u32, lane: u32) -> u32 {
    return (word >> (MARK_LANE_BITS * lane)) & MARK_LANE_MASK;
}
