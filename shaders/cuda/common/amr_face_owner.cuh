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
