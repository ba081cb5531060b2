// #include "common/dispatch.cuh"
// #include "common/amr_tree.cuh"
// #include "common/amr_face_owner.cuh"

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
// - the face marks (AdaptiveMesh::faces and build_dg_mesh in src/solver/dg/amr):
//   items[c * NE + i] = 1 when the element is the left (finer, or side 0 of an edge between
//   equals) side of a face of color c. An element has at most one face per color, so the scan
//   next numbers the faces by color, by left slot within a color: each color's launch is dense
//   and reads its left elements in memory order (locality). Without COLOR_ORDER (the gathered
//   layout, which reads the faces in left-element order only) one plane instead:
//   items[i] = the number of faces the element owns, 0 to 3, and the scan numbers them by
//   left slot;
// - the low words of the solver's register 0 (its double-float pairs) cleared from n up to the
//   slots in use, as the other per-slot arrays; below n they are what coarsening (zero for a
//   parent), refinement (zero for the children) and compaction (moved with the high words)
//   left, so an element the adaptation did not touch keeps its pairs whole.
// n and the slots in use come from the counts amr_scan 0 left (compaction_bounds; amr_scan 2
// stores n as the active count after the face scan); the face marks from n up to the slots in
// use are cleared, and past them they are 0 already.
// With the compaction in order (IN_ORDER; Compaction::InOrder in src/solver/dg/amr/tree.rs)
// there is no compaction scan: slot i < n takes the element amr_refine staged there (its id in
// compaction_scan, its coefficients in register STAGING) and writes its own slot; n and the
// edge ids in use are computed here from the counts of amr_scan 0 (amr_scan 2 stores them).
// The launch then has 4 more threads per slot (range.count = 5 NE, as the WGSL twin's
// FIELD_THREADS): thread (1 + f) NE + i moves field f of slot i's coefficients from register
// STAGING, or clears its low words past n, so that the slot's own thread keeps only the geometry
// and the face marks.
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

// The geometry and face marks of element `id` in slot i: every load first (the vertices and
// the edges, then the edges' nodes and sides), the stores after, so a thread waits on one
// chain of dependent loads.
__device__ void element_geometry(
    u32 i,
    u32 id,
    const float2* vertices,
    float4* inv_jac,
    float* inv_det,
    float* heights,
    u32 edge_ids,
    const uint4* element_edges,
    const uint4* edge_tree,
    const uint2* edge_sides,
    u32* items,
    u32 colors) {
    float2 v0 = vertices[3u * id];
    float2 v1 = vertices[3u * id + 1u];
    float2 v2 = vertices[3u * id + 2u];
    uint4 edges = element_edges[id];
    u32 owned[3] = {owned_face_color(id, edges.x, edge_tree, edge_sides, edge_ids),
                    owned_face_color(id, edges.y, edge_tree, edge_sides, edge_ids),
                    owned_face_color(id, edges.z, edge_tree, edge_sides, edge_ids)};
    float2 a = v1 - v0;
    float2 b = v2 - v0;
    float d = a.x * b.y - b.x * a.y;
    inv_jac[i] = make_float4(b.y, -b.x, -a.y, a.x) / d;
    inv_det[i] = 1.0f / d;
    float longest = fmaxf(length(a), fmaxf(length(b), length(v2 - v1)));
    heights[i] = d / longest;
    if (COLOR_ORDER == 0u) {
        items[i] = (owned[0] != NONE ? 1u : 0u) + (owned[1] != NONE ? 1u : 0u)
            + (owned[2] != NONE ? 1u : 0u);
        return;
    }
    for (u32 c = 0u; c < colors; c = c + 1u) {
        bool mine = owned[0] == c || owned[1] == c || owned[2] == c;
        items[c * NE + i] = mine ? 1u : 0u;
    }
}

// The field threads per slot with the compaction in order, one per conserved field (the WGSL
// twin's FIELD_THREADS; src/solver/dg/amr/gpu.rs sizes the launch).
#define FIELD_THREADS 4u

// With the compaction in order, field f of slot i (as the WGSL twin): the element amr_refine
// staged in new slot i < n moves there, its NP rows of field f, high and low words; past n the
// low words are cleared.
__device__ __forceinline__ void move_field(u32 i, u32 f, u32 new_active, float* regs,
                                           float* regs_lo) {
    u32 staged = STAGING * 4u * NP * NE;
#pragma unroll
    for (u32 k = 0u; k < NP; k = k + 1u) {
        u32 row = (f * NP + k) * NE + i;
        if (i < new_active) {
            regs[row] = regs[staged + row];
            regs_lo[row] = regs_lo[staged + row];
        } else {
            regs_lo[row] = 0.0f;
        }
    }
}

extern "C" __global__ void amr_geometry(
    u32* slots,
    const float2* __restrict__ vertices,
    float4* inv_jac,
    float* inv_det,
    float* heights,
    uint4* neighbors,
    const u32* __restrict__ counters,
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
    AmrParams params,
    ItemRange range) {
    await_previous_launches();
    u32 t = linear_index();
    if (t >= range.count) {
        return;
    }
    u32 i = t % NE;
    // Nothing when amr_scan 0 decided that the adaptation does not run (the decision loaded
    // with the kernel's first loads, not before them).
    bool runs = counters[C_DECISION] == ADAPT_RUNS;
    u32 refines = counters[C_REFINES];
    u32 clusters = counters[C_CLUSTERS];
    // The new count n and the slots in use (amr_scan 2 settles the counts after this launch).
    uint2 bounds = compaction_bounds(counters[C_ACTIVE], clusters, refines);
    u32 holes_below = counters[C_COMPACT_HOLES];
    u32 edge_ids = counters[C_EDGE_IDS];
    // The slots past those in use hold what this launch writes past n already (as the WGSL
    // twin).
    if (!runs || i >= bounds.y) {
        return;
    }
    u32 new_active = bounds.x;
    u32 colors = 2u * params.base_colors;
    if (IN_ORDER != 0u) {
        if (t >= NE) {
            u32 field = t / NE - 1u;
            if (field < FIELD_THREADS) {
                move_field(i, field, new_active, regs, regs_lo);
            }
            return;
        }
        edge_ids = settled_edge_ids(edge_ids, counters[C_SPLITS],
                                    counters[C_RINGS + 3u] + counters[C_SPLIT_FREES], refines,
                                    counters[C_RINGS + 5u] + clusters);
    }
    neighbors[i] = make_uint4(NONE, NONE, NONE, 0u);
    neighbors[NE + i] = make_uint4(NONE, NONE, NONE, NONE);
    if (IN_ORDER != 0u) {
        if (i < new_active) {
            // The element amr_refine staged in new slot i moves there (its coefficients by
            // the field threads).
            u32 id = compaction_scan[i];
            slots[i] = id;
            element_tree[id].w = i;
            element_geometry(i, id, vertices, inv_jac, inv_det, heights, edge_ids, element_edges,
                             edge_tree, edge_sides, items, colors);
            return;
        }
    } else if (i < new_active) {
        // A hole's element moves into it, and that element's thread writes the slot.
        if (!is_hole(i, holes_below, compaction_scan, compaction_offsets)) {
            element_geometry(i, slots[i], vertices, inv_jac, inv_det, heights, edge_ids,
                             element_edges, edge_tree, edge_sides, items, colors);
        }
        return;
    }
    u32 id = slots[i];
    if (IN_ORDER == 0u && id != NONE) {
        u32 to = holes[compaction_number(i, compaction_scan, compaction_offsets) - holes_below];
        slots[to] = id;
        element_tree[id].w = to;
        for (u32 j = 0u; j < 4u * NP; j = j + 1u) {
            regs[j * NE + to] = regs[j * NE + i];
            regs_lo[j * NE + to] = regs_lo[j * NE + i];
        }
        element_geometry(to, id, vertices, inv_jac, inv_det, heights, edge_ids, element_edges,
                         edge_tree, edge_sides, items, colors);
    }
    if (IN_ORDER == 0u) {
        for (u32 j = 0u; j < 4u * NP; j = j + 1u) {
            regs_lo[j * NE + i] = 0.0f;
        }
    }
    inv_jac[i] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    inv_det[i] = 0.0f;
    heights[i] = 0.0f;
    u32 planes = COLOR_ORDER != 0u ? colors : 1u;
    for (u32 c = 0u; c < planes; c = c + 1u) {
        items[c * NE + i] = 0u;
    }
}
