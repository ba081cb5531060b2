// #include "common/dispatch.cuh"
// #include "common/amr_tree.cuh"
// #include "common/amr_face_owner.cuh"
// #include "common/amr_book.cuh"
// #include "common/group_scan.cuh"

// CUDA twin of shaders/amr_geometry.wgsl. The adapted mesh per slot, one thread per slot up to
// the capacity, after amr_compact listed the holes:
// - the compaction's second half (GK19 Algorithm 4; AdaptiveMesh::compact in
//   src/solver/dg/amr/tree.rs): occupied slot p at or past the new active count n (below the
//   slots in use), number H + j in the compaction scan (amr_scan 1: its block prefixes plus its
//   block offsets; H holes), moves into hole j with its coefficients (the high and the low
//   words of register 0's double-float pairs), and its thread writes the rest of the slot it
//   moved into below; slot p < n is a hole when the scan counts it (its number and the next
//   differ), which this thread reads instead of the slot the move writes;
// - the geometry for the DG kernels (element_geometry in src/solver/dg/mesh.rs): with
//   x = v0 + J xi, the inverse Jacobian (xi_x, xi_y, eta_x, eta_y) = (J11, -J01, -J10, J00) /
//   det J, 1 / det J and the smallest height det J / longest side; the slots from the new
//   active count n up to those in use get zeros and no neighbours, as on the host, and the
//   launch returns at once past them (they have those already: cleared when they were last
//   in use, or by the solver's upload). Both neighbour blocks are cleared for amr_faces;
// - the face marks (AdaptiveMesh::faces and build_dg_mesh in src/solver/dg/amr), with GK19's
//   compaction in `items` (in order, numbered here; below): items[c * NE + i] = 1 when the element
//   is the left (finer, or side 0 of an edge between equals) side of a face of color c. An element
//   has at most one face per color, so the scan next numbers the faces by color, by left slot
//   within a color: each color's launch is dense and reads its left elements in memory order
//   (locality). Without COLOR_ORDER (the gathered layout, which reads the faces in left-element
//   order only) one plane instead: items[i] = the number of faces the element owns, 0 to 3, and the
//   scan numbers them by left slot;
// - the low words of the solver's register 0 (its double-float pairs) cleared from n up to the
//   slots in use, as the other per-slot arrays; below n they are what coarsening (zero for a
//   parent), refinement (zero for the children) and compaction (moved with the high words)
//   left, so an element the adaptation did not touch keeps its pairs whole.
// n and the slots in use come from the counts amr_scan 0 left (compaction_bounds; amr_scan 2,
// or in order amr_faces, stores n as the active count); the face marks from n up to the slots
// in use are cleared, and past them they are 0 already.
// With the compaction in order (IN_ORDER; Compaction::InOrder in src/solver/dg/amr/tree.rs)
// there is no compaction scan: slot i < n takes the element amr_refine staged there (its id in
// compaction_scan, its coefficients in register STAGING) and writes its own slot. Each thread
// then marks its own slot, so the launch numbers the faces itself, as the WGSL twin: its blocks
// of 256 slots add their packed marks in shared memory and store their counts per plane in
// face_groups, and the last of those blocks to finish (a ticket) turns them into each block's
// first number per plane and the planes' first numbers, then settles the counts and writes the
// solver's launch records (common/amr_book.cuh; amr_faces stores the new active count). Then
// come 4 threads per slot (as the WGSL twin's FIELD_THREADS), past the slots' blocks: thread
// S + f NE + i moves field f of slot i's coefficients from register STAGING, or clears its low
// words past n, so that the slot's own thread keeps only the geometry and the face marks.
//
// The WGSL override constants are preprocessor defines here (the host passes -D values); the
// capacity NE is the module constant of common/dispatch.cuh (WGSL: range.capacity).

#ifndef NP
#define NP 1u
#endif
// 1 with the compaction in order (the WGSL pipeline constant); STAGING: the register where
// amr_refine staged the elements in their new slots.
#ifndef IN_ORDER
#define IN_ORDER 0u
#endif
#ifndef STAGING
#define STAGING 1u
#endif
// 1: the face marks per color (amr_faces writes the faces in color order and in left-element
// order); 0: one plane of face counts (left-element order only; COLOR_ORDER in amr_faces).
#ifndef COLOR_ORDER
#define COLOR_ORDER 1u
#endif

// Slot p's number in the compaction scan.
__device__ __forceinline__ u32 compaction_number(
    u32 p, const u32* compaction_scan, const u32* compaction_offsets) {
    return compaction_scan[p] + compaction_offsets[p / SCAN_BLOCK];
}

// Whether slot p < n is a hole: its compaction mark, the scan's next number less its own (past
// the last slot the total, H holes and H moves).
__device__ __forceinline__ bool is_hole(
    u32 p, u32 holes_below, const u32* compaction_scan, const u32* compaction_offsets) {
    u32 next = p + 1u < NE ? compaction_number(p + 1u, compaction_scan, compaction_offsets)
                           : 2u * holes_below;
    return next != compaction_number(p, compaction_scan, compaction_offsets);
}

// face_groups' words before the blocks' counts: the ticket and a first number per plane.
#define FACE_GROUP_WORDS 64u
// The field threads per slot with the compaction in order, one per conserved field (the WGSL
// twin's FIELD_THREADS; src/solver/dg/amr/gpu.rs sizes the launch).
#define FIELD_THREADS 4u

// With the compaction in order, field f of slot i (as the WGSL twin): the element amr_refine
// staged in new slot i < n moves there, its NP rows of field f, high and low words; from n up
// to the slots in use the low words are cleared.
__device__ __forceinline__ void move_field(u32 i, u32 f, const u32* counters, float* regs,
                                           float* regs_lo) {
    bool runs = counters[C_DECISION] == ADAPT_RUNS;
    uint2 bounds = compaction_bounds(counters[C_ACTIVE], counters[C_CLUSTERS], counters[C_REFINES]);
    if (!runs || f >= FIELD_THREADS || i >= bounds.y) {
        return;
    }
    u32 staged = STAGING * 4u * NP * NE;
#pragma unroll
    for (u32 k = 0u; k < NP; k = k + 1u) {
        u32 row = (f * NP + k) * NE + i;
        if (i < bounds.x) {
            regs[row] = regs[staged + row];
            regs_lo[row] = regs_lo[staged + row];
        } else {
            regs_lo[row] = 0.0f;
        }
    }
}

// The geometry of element `id` and the colors of the faces it owns (NONE where it owns none), as
// the WGSL twin: every load first.
struct ElementGeometry {
    float4 inv_jac;
    float inv_det;
    float height;
    u32 owned[3];
};

__device__ __forceinline__ ElementGeometry element_geometry(
    u32 id,
    u32 edge_ids,
    const float2* vertices,
    const uint4* element_edges,
    const uint4* edge_tree,
    const uint2* edge_sides) {
    float2 v0 = vertices[3u * id];
    float2 v1 = vertices[3u * id + 1u];
    float2 v2 = vertices[3u * id + 2u];
    uint4 edges = element_edges[id];
    ElementGeometry g;
    g.owned[0] = owned_face_color(id, edges.x, edge_tree, edge_sides, edge_ids);
    g.owned[1] = owned_face_color(id, edges.y, edge_tree, edge_sides, edge_ids);
    g.owned[2] = owned_face_color(id, edges.z, edge_tree, edge_sides, edge_ids);
    float2 a = v1 - v0;
    float2 b = v2 - v0;
    float d = a.x * b.y - b.x * a.y;
    g.inv_jac = make_float4(b.y, -b.x, -a.y, a.x) / d;
    g.inv_det = 1.0f / d;
    g.height = d / fmaxf(length(a), fmaxf(length(b), length(v2 - v1)));
    return g;
}

// Slot i's geometry and, with GK19's compaction, its face marks in `items`.
__device__ __forceinline__ void store_geometry(u32 i, const ElementGeometry& g, float4* inv_jac,
                                               float* inv_det, float* heights, u32* items,
                                               u32 colors) {
    inv_jac[i] = g.inv_jac;
    inv_det[i] = g.inv_det;
    heights[i] = g.height;
    if (IN_ORDER != 0u) {
        return;
    }
    if (COLOR_ORDER == 0u) {
        items[i] = (g.owned[0] != NONE ? 1u : 0u) + (g.owned[1] != NONE ? 1u : 0u)
            + (g.owned[2] != NONE ? 1u : 0u);
        return;
    }
    for (u32 c = 0u; c < colors; c = c + 1u) {
        bool mine = g.owned[0] == c || g.owned[1] == c || g.owned[2] == c;
        items[c * NE + i] = mine ? 1u : 0u;
    }
}

// The face planes: the 2K colors, or one plane of face counts without COLOR_ORDER.
__device__ __forceinline__ u32 face_planes(const AmrParams& params) {
    return COLOR_ORDER != 0u ? 2u * params.base_colors : 1u;
}

// With GK19's compaction, slot i's thread (as the WGSL twin's gk19_slot): its moves, geometry
// and marks.
__device__ void gk19_slot(
    u32 i,
    u32* slots,
    const float2* vertices,
    float4* inv_jac,
    float* inv_det,
    float* heights,
    uint4* neighbors,
    const u32* counters,
    const uint4* element_edges,
    const uint4* edge_tree,
    const uint2* edge_sides,
    u32* items,
    float* regs_lo,
    uint4* element_tree,
    float* regs,
    const u32* compaction_scan,
    const u32* compaction_offsets,
    const u32* holes,
    const AmrParams& params) {
    if (i >= NE) {
        return;
    }
    // Nothing when amr_scan 0 decided that the adaptation does not run (the decision loaded
    // with the kernel's first loads, not before them).
    bool runs = counters[C_DECISION] == ADAPT_RUNS;
    // The new count n and the slots in use (amr_scan 2 settles the counts after this launch).
    uint2 bounds =
        compaction_bounds(counters[C_ACTIVE], counters[C_CLUSTERS], counters[C_REFINES]);
    u32 holes_below = counters[C_COMPACT_HOLES];
    u32 edge_ids = counters[C_EDGE_IDS];
    // The slots past those in use hold what this launch writes past n already (as the WGSL
    // twin).
    if (!runs || i >= bounds.y) {
        return;
    }
    u32 colors = 2u * params.base_colors;
    neighbors[i] = make_uint4(NONE, NONE, NONE, 0u);
    neighbors[NE + i] = make_uint4(NONE, NONE, NONE, NONE);
    if (i < bounds.x) {
        // A hole's element moves into it, and that element's thread writes the slot.
        if (!is_hole(i, holes_below, compaction_scan, compaction_offsets)) {
            ElementGeometry g = element_geometry(slots[i], edge_ids, vertices, element_edges,
                                                 edge_tree, edge_sides);
            store_geometry(i, g, inv_jac, inv_det, heights, items, colors);
        }
        return;
    }
    u32 id = slots[i];
    if (id != NONE) {
        u32 to = holes[compaction_number(i, compaction_scan, compaction_offsets) - holes_below];
        slots[to] = id;
        element_tree[id].w = to;
        for (u32 j = 0u; j < 4u * NP; j = j + 1u) {
            regs[j * NE + to] = regs[j * NE + i];
            regs_lo[j * NE + to] = regs_lo[j * NE + i];
        }
        ElementGeometry g =
            element_geometry(id, edge_ids, vertices, element_edges, edge_tree, edge_sides);
        store_geometry(to, g, inv_jac, inv_det, heights, items, colors);
    }
    for (u32 j = 0u; j < 4u * NP; j = j + 1u) {
        regs_lo[j * NE + i] = 0.0f;
    }
    inv_jac[i] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    inv_det[i] = 0.0f;
    heights[i] = 0.0f;
    u32 planes = face_planes(params);
    for (u32 c = 0u; c < planes; c = c + 1u) {
        items[c * NE + i] = 0u;
    }
}

// With the compaction in order, what slot i's thread stores (as the WGSL twin): nothing (state
// 0), the element amr_refine staged there with its geometry (1, below n), or zeros and no
// neighbours (2, from n up to the slots in use); loaded before the block's ticket, stored after.
struct InOrderSlot {
    u32 state;
    u32 id;
    ElementGeometry geometry;
};

__device__ __forceinline__ InOrderSlot in_order_slot(
    u32 i,
    const u32* counters,
    const float2* vertices,
    const uint4* element_edges,
    const uint4* edge_tree,
    const uint2* edge_sides,
    const u32* compaction_scan) {
    InOrderSlot slot;
    slot.state = 0u;
    slot.id = NONE;
    slot.geometry.inv_jac = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    slot.geometry.inv_det = 0.0f;
    slot.geometry.height = 0.0f;
    slot.geometry.owned[0] = NONE;
    slot.geometry.owned[1] = NONE;
    slot.geometry.owned[2] = NONE;
    if (i >= NE) {
        return slot;
    }
    bool runs = counters[C_DECISION] == ADAPT_RUNS;
    u32 refines = counters[C_REFINES];
    u32 clusters = counters[C_CLUSTERS];
    uint2 bounds = compaction_bounds(counters[C_ACTIVE], clusters, refines);
    u32 edge_ids = settled_edge_ids(counters[C_EDGE_IDS], counters[C_SPLITS],
                                    counters[C_RINGS + 3u] + counters[C_SPLIT_FREES], refines,
                                    counters[C_RINGS + 5u] + clusters);
    if (!runs || i >= bounds.y) {
        return slot;
    }
    slot.state = 2u;
    if (i < bounds.x) {
        slot.state = 1u;
        slot.id = compaction_scan[i];
        slot.geometry =
            element_geometry(slot.id, edge_ids, vertices, element_edges, edge_tree, edge_sides);
    }
    return slot;
}

__device__ __forceinline__ void store_in_order_slot(
    u32 i,
    const InOrderSlot& slot,
    u32* slots,
    float4* inv_jac,
    float* inv_det,
    float* heights,
    uint4* neighbors,
    uint4* element_tree) {
    if (slot.state == 0u) {
        return;
    }
    neighbors[i] = make_uint4(NONE, NONE, NONE, 0u);
    neighbors[NE + i] = make_uint4(NONE, NONE, NONE, NONE);
    store_geometry(i, slot.geometry, inv_jac, inv_det, heights, nullptr, 0u);
    if (slot.state == 1u) {
        slots[i] = slot.id;
        element_tree[slot.id].w = i;
    }
}

// Whether the adaptation runs, then whether this is the last block; the block's packed marks;
// the planes' first numbers (the last block's, for the bookkeeping).
__shared__ u32 group_flag;
__shared__ u32 group_marks[MARK_WORDS];
__shared__ u32 plane_starts[FACE_GROUP_WORDS];

// Counts c .. c + 3 of block g (0 past the planes), from L2.
__device__ __forceinline__ uint4 group_counts(const u32* face_groups, u32 g, u32 c, u32 planes) {
    const volatile u32* w = face_groups + FACE_GROUP_WORDS + g * planes + c;
    return make_uint4(c < planes ? w[0] : 0u, c + 1u < planes ? w[1] : 0u,
                      c + 2u < planes ? w[2] : 0u, c + 3u < planes ? w[3] : 0u);
}

// The last block, once every block's counts are stored (as the WGSL twin's number_groups):
// the first number of each block holding slots below n in each plane, the planes' first
// numbers, and the bookkeeping.
__device__ void number_groups(u32 lid, u32 planes, u32* counters, u32* face_groups,
                              u32* launches, const AmrParams& params) {
    u32 n = compaction_bounds(counters[C_ACTIVE], counters[C_CLUSTERS], counters[C_REFINES]).x;
    u32 live = (n + WIDE_WORKGROUP_SIZE - 1u) / WIDE_WORKGROUP_SIZE;
    u32 run = (live + WIDE_WORKGROUP_SIZE - 1u) / WIDE_WORKGROUP_SIZE;
    u32 first = min(lid * run, live);
    u32 end = min(first + run, live);
    u32 start = 0u;
    for (u32 c = 0u; c < planes; c = c + 4u) {
        // The first block's counts kept (most threads number one block or none).
        uint4 sum = make_uint4(0u, 0u, 0u, 0u);
        uint4 first_counts = sum;
        for (u32 g = first; g < end; g = g + 1u) {
            uint4 counts = group_counts(face_groups, g, c, planes);
            if (g == first) {
                first_counts = counts;
            }
            sum = add4(sum, counts);
        }
        GroupScan scan = group_scan(lid, sum);
        uint4 number = scan.before;
        for (u32 g = first; g < end; g = g + 1u) {
            uint4 counts = g == first ? first_counts : group_counts(face_groups, g, c, planes);
            volatile u32* w = face_groups + FACE_GROUP_WORDS + g * planes + c;
#pragma unroll
            for (u32 k = 0u; k < 4u; k = k + 1u) {
                if (c + k < planes) {
                    w[k] = lane4(number, k);
                }
            }
            number = add4(number, counts);
        }
#pragma unroll
        for (u32 k = 0u; k < 4u; k = k + 1u) {
            if (c + k < planes) {
                if (lid == 0u) {
                    plane_starts[c + k] = start;
                }
                start = start + lane4(scan.total, k);
            }
        }
    }
    if (lid == 0u) {
        for (u32 c = 0u; c < planes; c = c + 1u) {
            face_groups[1u + c] = plane_starts[c];
        }
        u32 new_active = settle(0u, counters, params);
        book_faces(start, new_active, counters, launches, plane_starts, params);
        *(volatile u32*)face_groups = 0u;
    }
}

extern "C" __global__ void amr_geometry(
    u32* slots,
    const float2* __restrict__ vertices,
    float4* inv_jac,
    float* inv_det,
    float* heights,
    uint4* neighbors,
    u32* counters,
    const uint4* __restrict__ element_edges,
    const uint4* __restrict__ edge_tree,
    const uint2* __restrict__ edge_sides,
    u32* items,
    float* regs_lo,
    uint4* element_tree,
    float* regs,
    const u32* __restrict__ compaction_scan,
    const u32* __restrict__ compaction_offsets,
    const u32* __restrict__ holes,
    u32* face_groups,
    u32* launches,
    AmrParams params,
    ItemRange range) {
    await_previous_launches();
    u32 i = wide_linear_index();
    if (IN_ORDER == 0u) {
        gk19_slot(i, slots, vertices, inv_jac, inv_det, heights, neighbors, counters,
                  element_edges, edge_tree, edge_sides, items, regs_lo, element_tree, regs,
                  compaction_scan, compaction_offsets, holes, params);
        return;
    }
    u32 lid = threadIdx.x;
    u32 group = blockIdx.x + blockIdx.y * gridDim.x;
    u32 groups = (NE + WIDE_WORKGROUP_SIZE - 1u) / WIDE_WORKGROUP_SIZE;
    // The field threads take no ticket: they read only counts the bookkeeping keeps.
    if (group >= groups) {
        u32 u = i - groups * WIDE_WORKGROUP_SIZE;
        if (i < range.count) {
            move_field(u % NE, u / NE, counters, regs, regs_lo);
        }
        return;
    }
    if (lid < MARK_WORDS) {
        group_marks[lid] = 0u;
    }
    if (lid == 0u) {
        group_flag = counters[C_DECISION] == ADAPT_RUNS ? 1u : 0u;
    }
    __syncthreads();
    if (group_flag == 0u) {
        return;
    }
    InOrderSlot slot = in_order_slot(i, counters, vertices, element_edges, edge_tree, edge_sides,
                                     compaction_scan);
    u32 planes = face_planes(params);
    u32 words = (planes + 2u) / 3u;
    for (u32 w = 0u; w < words; w = w + 1u) {
        u32 word = face_mark_word(slot.geometry.owned, w, COLOR_ORDER != 0u);
        if (word != 0u) {
            atomicAdd(&group_marks[w], word);
        }
    }
    __syncthreads();
    if (lid < planes) {
        u32 count = mark_lane(group_marks[lid / 3u], lid % 3u);
        *(volatile u32*)(face_groups + FACE_GROUP_WORDS + group * planes + lid) = count;
        // Release this block's counts before the ticket.
        __threadfence();
    }
    __syncthreads();
    if (lid == 0u) {
        group_flag = atomicAdd(face_groups, 1u) == groups - 1u ? 1u : 0u;
    }
    __syncthreads();
    if (group_flag != 0u) {
        // Acquire every block's counts (all their tickets were taken before ours).
        __threadfence();
        number_groups(lid, planes, counters, face_groups, launches, params);
    }
    store_in_order_slot(i, slot, slots, inv_jac, inv_det, heights, neighbors, element_tree);
}
