// #include "common/dispatch.cuh"
// #include "common/amr_tree.cuh"
// #include "common/amr_face_owner.cuh"
// #include "common/amr_reorder.cuh"
// #include "common/group_scan.cuh"

// CUDA twin of shaders/amr_faces.wgsl. The faces of the adapted mesh from the trees
// (AdaptiveMesh::faces and build_dg_mesh in src/solver/dg/amr), after amr_geometry's marks and
// their scan, one thread per slot writing the faces its element owns (those amr_geometry
// marked: the element is the face's left side), so that a block's loads and stores fall on
// neighbouring slots and face numbers (per edge id they scattered, and most threads of the
// edge capacity had no face: amr_faces took 74 us at 240k elements on an H200). Face j of
// edge e: on each side the element at the
// edge's level, or the parent edge's element one level coarser (with the half it covers:
// 1 + m on the left, 2 - m on the right for child m); the finer side is the left one; normal,
// length and midpoint from the left element's own side. Writes the DgEdge record and the face
// neighbours: side s of the left element, and of the right one s or s + 3 for its second
// half, setting bit s of the right element's split mask (the first block's w, an atomic or).
// A face whose slots lie more than FAR_SLOTS apart counts in counters[C_FAR_FACES]
// (reorder::far_faces, as amr_permute counts it; the bookkeeping before cleared it), one atomic per
// block (most faces are far before a reorder: one per face would all hit one word), and so the
// element half sides the faces cover in counters[C_SIDE_UNITS] (6 per element unless a face is
// missing: the host checks it, since a thread per slot never sees an edge no element owns);
// an edge without an element where one is needed in counters[C_ERROR].
// Each face also goes to its place in left-element order (GpuDg::edges_by_left, dg_flux's
// order: by left slot, then by color): the faces of every color whose left slots come before
// the thread's, from the face scan at each color's plane less its value at the plane's start
// (the color's offset; from the counters, volatile loads, this kernel took 1.4x its time at
// 240k elements on an H200), then its own faces of smaller colors. Without COLOR_ORDER (the
// gathered layout, whose solver reads the faces in left-element order only) the faces are
// written in that order alone, numbered by the scan of amr_geometry's one plane of face counts
// per slot: half the stores, and one scan plane instead of 2K.
//
// With the compaction in order (IN_ORDER) amr_geometry numbered the faces by blocks of 256
// slots instead of a scan (face_numbers: from word 1 the planes' first numbers, from
// FACE_GROUP_WORDS each block's first number per plane), and each block here numbers its
// slots' faces within those by a scan of the same packed marks. The new active count comes from
// counters[C_NEW_ACTIVE], and the first thread stores it as the active count (as the WGSL twin).
//
// faces: DgEdge records (left, right, info, nx, ny, length, mx, my), two uint4 stores each.
// neighbors: 4 words per slot, NE blocks of (side 0, 1, 2, split mask), then NE of the second
// halves.
//
// NE, the capacity, is the module constant of common/dispatch.cuh (WGSL: range.capacity).

// 1: the faces in color order and in left-element order; 0: in left-element order only (the
// WGSL pipeline constant).
#ifndef COLOR_ORDER
#define COLOR_ORDER 1u
#endif
// 1 with the compaction in order: the faces numbered by blocks of slots (amr_geometry).
#ifndef IN_ORDER
#define IN_ORDER 0u
#endif
// face_numbers' words before the blocks' first numbers (amr_geometry).
#define FACE_GROUP_WORDS 64u

// (slot, local side, half) of side s of edge e, whose side s holds `here` (element id, local
// side) and whose parent is `parent`; slot NONE when there is none.
__device__ uint3 side_of(
    u32 e,
    u32 s,
    uint2 here,
    u32 parent,
    const uint4* element_tree,
    const uint4* edge_tree,
    const uint2* edge_sides) {
    if (here.x != NONE) {
        return make_uint3(element_tree[here.x].w, here.y, 0u);
    }
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

// Corner k of a triangle with corners v0, v1, v2.
__device__ __forceinline__ float2 corner(float2 v0, float2 v1, float2 v2, u32 k) {
    return k == 0u ? v0 : (k == 1u ? v1 : v2);
}

// Face of edge e that the element in slot i owns on its side s, from corner a to corner b,
// written at `by_color` in color order (with COLOR_ORDER) and at `by_left` in left-element
// order, as the WGSL twin: the owner is the left side, whole, (i, s, 0), so only the right side
// is looked up in the trees.
__device__ uint2 write_face(
    u32 e,
    u32 i,
    u32 s,
    float2 a,
    float2 b,
    u32 by_color,
    u32 by_left,
    const uint4* element_tree,
    const uint4* edge_tree,
    const uint2* edge_sides,
    uint4* faces,
    uint4* faces_by_left,
    u32* neighbors,
    u32* counters) {
    uint4 t = edge_tree[e];
    u32 kind = t.w & 0xfu;
    u32 state = t.w >> 4u;
    bool interior = kind == EDGE_INTERIOR;
    uint2 here0 = edge_sides[2u * e];
    uint2 here1 = edge_sides[2u * e + 1u];
    // The owner's side of the edge: 0 when an element holds side 0 (the owner), else 1.
    u32 own = here0.x != NONE ? 0u : 1u;
    uint2 own_here = own == 1u ? here1 : here0;
    uint3 r = make_uint3(NONE, 0u, 0u);
    if (interior) {
        r = side_of(e, 1u - own, own == 1u ? here0 : here1, t.y, element_tree, edge_tree,
                    edge_sides);
    }
    if ((interior && r.x == NONE) || (!interior && own == 1u) || own_here.y != s) {
        counters[C_ERROR] = 1u;
        return make_uint2(0u, 0u);
    }
    float2 d = b - a;
    float len = length(d);
    u32 info = s | (r.y << 2u) | (kind << 4u) | (r.z << 7u) | (state << 9u);
    float2 mid = 0.5f * (a + b);
    uint4 head = make_uint4(i, r.x, info, __float_as_uint(d.y / len));
    uint4 tail = make_uint4(__float_as_uint(-d.x / len), __float_as_uint(len),
                            __float_as_uint(mid.x), __float_as_uint(mid.y));
    if (COLOR_ORDER != 0u) {
        faces[2u * by_color] = head;
        faces[2u * by_color + 1u] = tail;
    }
    faces_by_left[2u * by_left] = head;
    faces_by_left[2u * by_left + 1u] = tail;
    if (r.x == NONE) {
        return make_uint2(0u, 2u);
    }
    neighbors[4u * i + s] = r.x;
    if (r.z == 2u) {
        neighbors[4u * (NE + r.x) + r.y] = i;
        atomicOr(&neighbors[4u * r.x + 3u], 1u << r.y);
    } else {
        neighbors[4u * r.x + r.y] = i;
    }
    u32 far = max(i, r.x) - min(i, r.x) > FAR_SLOTS ? 1u : 0u;
    return make_uint2(far, r.z == 0u ? 4u : 3u);
}

// The block's far faces and covered half sides, added to counters[C_FAR_FACES] and
// counters[C_SIDE_UNITS] by one thread.
__shared__ u32 group_far;
__shared__ u32 group_units;

// The face planes: the 2K colors, or one plane of face counts without COLOR_ORDER.
__device__ __forceinline__ u32 face_planes(const AmrParams& params) {
    return COLOR_ORDER != 0u ? 2u * params.base_colors : 1u;
}

// The numbers of slot i's faces from the face scan (GK19's compaction; as the WGSL twin): per
// side its number in color order, and in w the faces of lower slots.
__device__ uint4 scanned_numbers(u32 i, const u32 colors[3], const u32* items_scan,
                                 const u32* face_numbers, const AmrParams& params) {
    uint4 numbers = make_uint4(0u, 0u, 0u, 0u);
    if (COLOR_ORDER == 0u) {
        numbers.w = items_scan[i] + face_numbers[i / SCAN_BLOCK];
        return numbers;
    }
    u32 planes = face_planes(params);
    for (u32 c = 0u; c < planes; c = c + 1u) {
        u32 first = c * NE;
        u32 item = first + i;
        u32 number = items_scan[item] + face_numbers[item / SCAN_BLOCK];
        numbers.w += number - (items_scan[first] + face_numbers[first / SCAN_BLOCK]);
        numbers.x = colors[0] == c ? number : numbers.x;
        numbers.y = colors[1] == c ? number : numbers.y;
        numbers.z = colors[2] == c ? number : numbers.z;
    }
    return numbers;
}

// The same numbers with the compaction in order (as the WGSL twin's grouped_numbers): the
// block's first numbers plus the scan of the packed marks over the block's slots. Called by
// every thread of a block of slots.
__device__ uint4 grouped_numbers(u32 lid, u32 group, const u32 colors[3],
                                 const u32* face_numbers, const AmrParams& params) {
    u32 planes = face_planes(params);
    uint4 numbers = make_uint4(0u, 0u, 0u, 0u);
    for (u32 w = 0u; w < (planes + 2u) / 3u; w = w + 4u) {
        uint4 marks = make_uint4(face_mark_word(colors, w, COLOR_ORDER != 0u),
                                 face_mark_word(colors, w + 1u, COLOR_ORDER != 0u),
                                 face_mark_word(colors, w + 2u, COLOR_ORDER != 0u),
                                 face_mark_word(colors, w + 3u, COLOR_ORDER != 0u));
        uint4 before = group_scan(lid, marks).before;
#pragma unroll
        for (u32 k = 0u; k < 4u; k = k + 1u) {
#pragma unroll
            for (u32 lane = 0u; lane < 3u; lane = lane + 1u) {
                u32 plane = 3u * (w + k) + lane;
                if (plane < planes) {
                    u32 within = mark_lane(lane4(before, k), lane);
                    u32 first = face_numbers[FACE_GROUP_WORDS + group * planes + plane];
                    numbers.w += first + within;
                    u32 number = face_numbers[1u + plane] + first + within;
                    numbers.x = colors[0] == plane ? number : numbers.x;
                    numbers.y = colors[1] == plane ? number : numbers.y;
                    numbers.z = colors[2] == plane ? number : numbers.z;
                }
            }
        }
    }
    return numbers;
}

extern "C" __global__ void amr_faces(
    const uint4* __restrict__ element_tree,
    const float2* __restrict__ vertices,
    const uint4* __restrict__ edge_tree,
    const uint2* __restrict__ edge_sides,
    const u32* __restrict__ items_scan,
    uint4* faces,
    u32* neighbors,
    u32* counters,
    const u32* __restrict__ slots,
    const u32* __restrict__ face_numbers,
    const uint4* __restrict__ element_edges,
    uint4* faces_by_left,
    AmrParams params,
    ItemRange range) {
    await_previous_launches();
    u32 i = wide_linear_index();
    u32 group = blockIdx.x + blockIdx.y * gridDim.x;
    if (threadIdx.x == 0u) {
        group_far = 0u;
        group_units = 0u;
    }
    __syncthreads();
    // Nothing when amr_scan 0 decided that the adaptation does not run (the decision loaded
    // with the new count, not before it).
    bool runs = counters[C_DECISION] == ADAPT_RUNS;
    u32 num_active = *(const volatile u32*)(counters + C_NEW_ACTIVE);
    if (runs && i == 0u) {
        counters[C_ACTIVE] = num_active;
    }
    bool live = runs && i < range.count && i < num_active;
    uint4 edges = make_uint4(0u, 0u, 0u, 0u);
    float2 v0 = make_float2(0.0f, 0.0f);
    float2 v1 = v0;
    float2 v2 = v0;
    // The colors of the faces this element owns (NONE for a side it does not own).
    u32 colors[3] = {NONE, NONE, NONE};
    if (live) {
        u32 id = slots[i];
        edges = element_edges[id];
        v0 = vertices[3u * id];
        v1 = vertices[3u * id + 1u];
        v2 = vertices[3u * id + 2u];
        u32 edge_ids = *(const volatile u32*)(counters + C_EDGE_IDS);
        colors[0] = owned_face_color(id, edges.x, edge_tree, edge_sides, edge_ids);
        colors[1] = owned_face_color(id, edges.y, edge_tree, edge_sides, edge_ids);
        colors[2] = owned_face_color(id, edges.z, edge_tree, edge_sides, edge_ids);
    }
    uint4 numbers = make_uint4(0u, 0u, 0u, 0u);
    if (IN_ORDER != 0u) {
        numbers = grouped_numbers(threadIdx.x, group, colors, face_numbers, params);
    }
    uint2 written = make_uint2(0u, 0u);
    if (colors[0] != NONE || colors[1] != NONE || colors[2] != NONE) {
        if (IN_ORDER == 0u) {
            numbers = scanned_numbers(i, colors, items_scan, face_numbers, params);
        }
        for (u32 s = 0u; s < 3u; s = s + 1u) {
            if (colors[s] != NONE) {
                u32 lower = (colors[(s + 1u) % 3u] < colors[s] ? 1u : 0u) +
                            (colors[(s + 2u) % 3u] < colors[s] ? 1u : 0u);
                u32 e = s == 0u ? edges.x : (s == 1u ? edges.y : edges.z);
                u32 by_color = s == 0u ? numbers.x : (s == 1u ? numbers.y : numbers.z);
                uint2 face = write_face(e, i, s, corner(v0, v1, v2, s),
                                        corner(v0, v1, v2, (s + 1u) % 3u), by_color,
                                        numbers.w + lower, element_tree, edge_tree, edge_sides,
                                        faces, faces_by_left, neighbors, counters);
                written = make_uint2(written.x + face.x, written.y + face.y);
            }
        }
    }
    if (written.x != 0u) {
        atomicAdd(&group_far, written.x);
    }
    if (written.y != 0u) {
        atomicAdd(&group_units, written.y);
    }
    __syncthreads();
    if (threadIdx.x == 0u) {
        if (group_far > 0u) {
            atomicAdd(&counters[C_FAR_FACES], group_far);
        }
        if (group_units > 0u) {
            atomicAdd(&counters[C_SIDE_UNITS], group_units);
        }
    }
}
