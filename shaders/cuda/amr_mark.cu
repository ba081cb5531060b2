// #include "common/dispatch.cuh"
// #include "common/amr_tree.cuh"

// CUDA twin of shaders/amr_mark.wgsl. The smoothed flags, f_i = a_i - level_i from amr_smooth's
// `after`, stored for the phases after it; which slots start a coarsening cluster, which refine,
// what each cluster frees and which edges the refinement splits, for one exclusive scan over the
// four parts (five in order) (a thread per slot up to the capacity NE, zeros past the active
// slots, and the edge ids in use at a stride of the launch's threads, at most 2 NE: most of the
// edge capacity is room to refine, with no thread of its own):
//   marks[i] = 1 where slot i holds the first child of a cluster flagged -1,
//   marks[NE + i] = 1 where slot i is flagged +1,
//   marks[2 NE + i] = the split edges of the cluster's parent whose halves are freed, and
//      work[i] the mask of their sides (AdaptiveMesh::coarsen in src/solver/dg/amr/tree.rs):
//      per side, the halves are freed unless the element across is still refined when the
//      cluster runs in the reference's order, i.e. refined and not a cluster of a smaller slot;
//   marks[3 NE + i] = 1, with the compaction in order (IN_ORDER = 1; Compaction::InOrder in
//      src/solver/dg/amr/tree.rs), where slot i holds a child of a coarsening cluster other
//      than its first: the slot the cluster vacates (its parent takes the first child's), so
//      that the scan gives every slot the number of new elements before it (amr_refine);
//   marks[E0 + e] = 1 where edge e is split (AdaptiveMesh::split_edge, edges in id order):
//      a live edge with an element flagged +1 on a side that is a leaf once the coarsening
//      has run, and split_sides[e] = which sides refine (bit 0 side 0, bit 1 side 1), NONE for
//      an edge that is not split. An edge with halves becomes a leaf when the cluster across
//      from the refining side coarsens (its halves are freed then: the refining side is a
//      leaf, so not refined), which the smoothed flags tell here, before amr_coarsen runs.
// (E0 = 3 NE, or 4 NE in order: edge_part.) The scan numbers the clusters, the refined elements and
// the split edges in the CPU reference's order (AdaptiveMesh::adapt) and places each cluster's
// freed split blocks in their ring; amr_refine gives split edge number j its halves from the side
// that writes them (side 0 when it refines, else side 1: split_sides tells each refining element
// whether it is that side and whether the other side refines too, without reading what the
// refinement rewrites). Nothing in the trees changes here (a smoothing that asks for more room than
// there is leaves them as they were): amr_coarsen takes the halves of the kept sides from the
// parent's edges.
//
// NE, the capacity, is the module constant of common/dispatch.cuh (WGSL: range.capacity).

// 1 with the compaction in order (the WGSL pipeline constant).
#ifndef IN_ORDER
#define IN_ORDER 0u
#endif

// The smoothed flag of active slot pos (its element's record `own`).
__device__ __forceinline__ int smoothed_flag(u32 pos, uint4 own, const u32* after) {
    return (int)after[pos] - (int)own.x;
}

// Whether slot pos holds the first child of a coarsening cluster (smoothed flags: the whole
// cluster is flagged -1 when its first child is).
__device__ bool starts_cluster(
    u32 pos, const u32* slots, const uint4* element_tree, const u32* after, const u32* counters) {
    if (pos >= counters[C_ACTIVE]) {
        return false;
    }
    u32 id = slots[pos];
    uint4 own = element_tree[id];
    u32 parent = own.y;
    return smoothed_flag(pos, own, after) < 0 && parent != NONE && element_tree[parent].z == id;
}

// The sides of the parent of the cluster starting at slot i whose split edges are freed.
__device__ u32 freed_sides(
    u32 i,
    const u32* slots,
    const uint4* element_tree,
    const u32* after,
    const u32* counters,
    const uint4* element_edges,
    const uint2* edge_sides) {
    u32 parent = element_tree[slots[i]].y;
    u32 mask = 0u;
    for (u32 s = 0u; s < 3u; s = s + 1u) {
        u32 e = word(element_edges, parent, s);
        u32 side = edge_sides[2u * e].x != parent ? 1u : 0u;
        u32 other = edge_sides[2u * e + 1u - side].x;
        bool refined = false;
        if (other != NONE) {
            u32 first = element_tree[other].z;
            if (first != NONE) {
                u32 pos = element_tree[first].w;
                refined = !(pos != NONE && pos < i &&
                            starts_cluster(pos, slots, element_tree, after, counters));
            }
        }
        if (!refined) {
            mask = mask | (1u << s);
        }
    }
    return mask;
}

// Whether the active element `element` refines (its smoothed flag is +1).
__device__ __forceinline__ bool refines(u32 element, const uint4* element_tree, const u32* after) {
    if (element == NONE) {
        return false;
    }
    uint4 own = element_tree[element];
    return own.w != NONE && smoothed_flag(own.w, own, after) > 0;
}

// Whether the element `element` (not a leaf) has children that coarsen: its first child is
// active and starts a cluster.
__device__ bool children_coarsen(
    u32 element,
    const u32* slots,
    const uint4* element_tree,
    const u32* after,
    const u32* counters) {
    if (element == NONE) {
        return false;
    }
    u32 first = element_tree[element].z;
    if (first == NONE) {
        return false;
    }
    u32 pos = element_tree[first].w;
    return pos != NONE && starts_cluster(pos, slots, element_tree, after, counters);
}

// The sides of edge e that refine when e is split, 0 when it is not (the split marks above).
__device__ u32 split_sides_of(
    u32 e,
    const u32* slots,
    const uint4* element_tree,
    const u32* after,
    const u32* counters,
    const uint4* edge_tree,
    const uint2* edge_sides) {
    uint4 t = edge_tree[e];
    if ((t.x & EDGE_ALIVE) == 0u) {
        return 0u;
    }
    u32 left = edge_sides[2u * e].x;
    u32 right = edge_sides[2u * e + 1u].x;
    u32 sides = (refines(left, element_tree, after) ? 1u : 0u) |
                (refines(right, element_tree, after) ? 2u : 0u);
    if (sides == 0u || t.z == NONE) {
        return sides;
    }
    // Halves: only one side is a leaf, the one that refines; they go when the other's
    // children coarsen.
    u32 other = sides == 1u ? right : left;
    return children_coarsen(other, slots, element_tree, after, counters) ? sides : 0u;
}

extern "C" __global__ void amr_mark(
    const u32* __restrict__ slots,
    const uint4* __restrict__ element_tree,
    int* flags,
    u32* marks,
    const u32* __restrict__ counters,
    const uint4* __restrict__ element_edges,
    const uint2* __restrict__ edge_sides,
    u32* work,
    const u32* __restrict__ after,
    const uint4* __restrict__ edge_tree,
    u32* split_sides,
    AmrParams params,
    ItemRange range) {
    await_previous_launches();
    u32 i = wide_linear_index();
    if (i >= range.count) {
        return;
    }
    if (i < NE) {
        bool refined = false;
        bool vacated = false;
        if (i < counters[C_ACTIVE]) {
            int f = smoothed_flag(i, element_tree[slots[i]], after);
            flags[i] = f;
            refined = f > 0;
            vacated = f < 0;
        }
        bool cluster = starts_cluster(i, slots, element_tree, after, counters);
        u32 mask = 0u;
        if (cluster) {
            mask = freed_sides(i, slots, element_tree, after, counters, element_edges, edge_sides);
        }
        marks[i] = cluster ? 1u : 0u;
        marks[NE + i] = refined ? 1u : 0u;
        marks[2u * NE + i] = __popc(mask);
        work[i] = mask;
        if (IN_ORDER != 0u) {
            marks[3u * NE + i] = vacated && !cluster ? 1u : 0u;
        }
    }
    // The edge ids in use at a stride of the launch's threads (range.count, at least NE); the
    // marks past them stay 0 (amr_scan 0 skips their blocks).
    u32 edge_ids = counters[C_EDGE_IDS];
    for (u32 e = i; e < edge_ids; e = e + range.count) {
        u32 sides = split_sides_of(e, slots, element_tree, after, counters, edge_tree, edge_sides);
        marks[edge_part(NE, IN_ORDER) + e] = sides != 0u ? 1u : 0u;
        split_sides[e] = sides != 0u ? sides : NONE;
    }
}
