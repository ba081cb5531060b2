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
