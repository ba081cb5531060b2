// #include "common/dispatch.cuh"
// #include "common/amr_tree.cuh"

// CUDA twin of shaders/amr_faces.wgsl. The faces of the adapted mesh from the trees
// (AdaptiveMesh::faces and build_dg_mesh in src/solver/dg/amr), one thread per slot (phases 0,
// 2) or edge id (phase 1), range.pad:
//   0: slot i marks items[c * NE + i] when its element is the left (finer, or side 0 of an
//      edge between equals) side of a face of color c; an element has at most one face per
//      color, so the scan next numbers the faces by color, by left slot within a color: each
//      color's launch is dense and reads its left elements in memory order (locality);
//   1: face j of edge e: on each side the element at the edge's level, or the parent edge's
//      element one level coarser (with the half it covers: 1 + m on the left, 2 - m on the
//      right for child m); the finer side is the left one; normal, length and midpoint from
//      the left element's own side. Writes the DgEdge record and the face neighbours: side s
//      of the left element, and of the right one s or s + 3 for its second half. An edge
//      without an element where one is needed counts in counters[C_ERROR].
//   2: per slot, the split mask (bit s: side s has two faces) in the first block's w.
//
// faces: DgEdge records (left, right, info, nx, ny, length, mx, my).
//
// The WGSL override constant is a preprocessor define here (the host passes a -D value).

#ifndef NE
#define NE 1u
#endif

// (slot, local side, half) of side s of edge e; slot NONE when there is none.
__device__ uint3 side_of(
    u32 e,
    u32 s,
    const uint4* element_tree,
    const uint4* edge_tree,
    const uint2* edge_sides) {
    uint2 here = edge_sides[2u * e + s];
    if (here.x != NONE) {
        return make_uint3(element_tree[here.x].w, here.y, 0u);
    }
    u32 parent = edge_tree[e].y;
    if (parent == NONE) {
        return make_uint3(NONE, 0u, 0u);
    }
    uint2 up = edge_sides[2u * parent + s];
    if (up.x == NONE) {
        return make_uint3(NONE, 0u, 0u);
    }
    u32 m = e - edge_tree[parent].z;
    u32 half = 2u - m;
    if (s == 0u) {
        half = m + 1u;
    }
    return make_uint3(element_tree[up.x].w, up.y, half);
}

__device__ __forceinline__ bool is_face(u32 e, const uint4* edge_tree, const u32* counters) {
    uint4 t = edge_tree[e];
    return e < counters[C_EDGE_IDS] && (t.x & EDGE_ALIVE) != 0u && t.z == NONE;
}

// Color of the face that element `id` owns on local side s (it is the face's left side: its
// edge there is a live leaf with the element on side 0, or on side 1 with side 0 coarser);
// NONE when the side has no face of its own (a split side, or the right side of a face).
__device__ u32 left_face_color(
    u32 id,
    u32 s,
    const uint4* element_edges,
    const uint4* edge_tree,
    const uint2* edge_sides,
    const u32* counters) {
    uint4 edges = element_edges[id];
    u32 e = s == 0u ? edges.x : (s == 1u ? edges.y : edges.z);
    if (!is_face(e, edge_tree, counters)) {
        return NONE;
    }
    u32 side0 = edge_sides[2u * e].x;
    if (side0 == id || (side0 == NONE && edge_sides[2u * e + 1u].x == id)) {
        return (edge_tree[e].x >> 8u) & 0xffu;
    }
    return NONE;
}

__device__ void write_face(
    u32 e,
    const uint4* element_tree,
    const float2* vertices,
    const uint4* edge_tree,
    const uint2* edge_sides,
    const u32* items_scan,
    u32* faces,
    uint4* neighbors,
    u32* counters,
    const u32* slots,
    const AmrParams& params) {
    uint4 t = edge_tree[e];
    u32 kind = t.w & 0xfu;
    u32 state = t.w >> 4u;
    bool interior = kind == EDGE_INTERIOR;
    uint3 l = side_of(e, 0u, element_tree, edge_tree, edge_sides);
    uint3 r = make_uint3(NONE, 0u, 0u);
    if (interior) {
        r = side_of(e, 1u, element_tree, edge_tree, edge_sides);
    }
    if (l.x == NONE || (interior && r.x == NONE) || (!interior && l.z != 0u)) {
        counters[C_ERROR] = 1u;
        return;
    }
    if (l.z != 0u) {
        if (r.z != 0u) {
            counters[C_ERROR] = 1u;
            return;
        }
        uint3 swap = l;
        l = r;
        r = swap;
    }
    u32 color = (t.x >> 8u) & 0xffu;
    u32 j = items_scan[color * NE + l.x];
    u32 id = slots[l.x];
    float2 a = vertices[3u * id + l.y];
    float2 b = vertices[3u * id + (l.y + 1u) % 3u];
    float2 d = b - a;
    float len = length(d);
    faces[8u * j] = l.x;
    faces[8u * j + 1u] = r.x;
    faces[8u * j + 2u] = l.y | (r.y << 2u) | (kind << 4u) | (r.z << 7u) | (state << 9u);
    faces[8u * j + 3u] = __float_as_uint(d.y / len);
    faces[8u * j + 4u] = __float_as_uint(-d.x / len);
    faces[8u * j + 5u] = __float_as_uint(len);
    faces[8u * j + 6u] = __float_as_uint(0.5f * (a.x + b.x));
    faces[8u * j + 7u] = __float_as_uint(0.5f * (a.y + b.y));
    if (r.x != NONE) {
        word(neighbors, l.x, l.y) = r.x;
        if (r.z == 2u) {
            word(neighbors, NE + r.x, r.y) = l.x;
        } else {
            word(neighbors, r.x, r.y) = l.x;
        }
    }
}

extern "C" __global__ void amr_faces(
    const uint4* __restrict__ element_tree,
    const float2* __restrict__ vertices,
    const uint4* __restrict__ edge_tree,
    const uint2* __restrict__ edge_sides,
    u32* items,
    const u32* __restrict__ items_scan,
    u32* faces,
    uint4* neighbors,
    u32* counters,
    const u32* __restrict__ slots,
    const uint4* __restrict__ element_edges,
    AmrParams params,
    ItemRange range) {
    u32 i = linear_index();
    if (i >= range.count) {
        return;
    }
    if (range.pad == 0u) {
        u32 owned[3] = {NONE, NONE, NONE};
        if (i < counters[C_ACTIVE]) {
            u32 id = slots[i];
            for (u32 s = 0u; s < 3u; s = s + 1u) {
                owned[s] = left_face_color(id, s, element_edges, edge_tree, edge_sides, counters);
            }
        }
        for (u32 c = 0u; c < 2u * params.base_colors; c = c + 1u) {
            bool mine = owned[0] == c || owned[1] == c || owned[2] == c;
            items[c * NE + i] = mine ? 1u : 0u;
        }
    } else if (range.pad == 1u) {
        if (is_face(i, edge_tree, counters)) {
            write_face(i, element_tree, vertices, edge_tree, edge_sides, items_scan, faces,
                       neighbors, counters, slots, params);
        }
    } else if (i < counters[C_ACTIVE]) {
        u32 mask = 0u;
        for (u32 s = 0u; s < 3u; s = s + 1u) {
            if (word(neighbors, NE + i, s) != NONE) {
                mask = mask | (1u << s);
            }
        }
        neighbors[i].w = mask;
    }
}
