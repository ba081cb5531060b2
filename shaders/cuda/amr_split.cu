// #include "common/dispatch.cuh"
// #include "common/amr_tree.cuh"

// CUDA twin of shaders/amr_split.wgsl. Which edges the refinement splits, one thread per edge
// id (AdaptiveMesh::split_edge in src/solver/dg/amr/tree.rs, edges in id order): items[e] = 1
// for a live leaf edge with an element flagged +1 on a side (scanned next, amr_scan 1), and
// split_sides[e] = which sides refine (bit 0 side 0, bit 1 side 1), NONE for an edge that is
// not split; amr_refine gives the split edges their halves from the side that writes them.

__device__ __forceinline__ bool refines(u32 element, const uint4* element_tree, const int* flags) {
    if (element == NONE) {
        return false;
    }
    u32 pos = element_tree[element].w;
    return pos != NONE && flags[pos] > 0;
}

extern "C" __global__ void amr_split(
    const uint4* __restrict__ element_tree,
    const uint4* __restrict__ edge_tree,
    const uint2* __restrict__ edge_sides,
    const int* __restrict__ flags,
    u32* items,
    const u32* __restrict__ counters,
    u32* split_sides,
    ItemRange range) {
    await_previous_launches();
    u32 e = wide_linear_index();
    if (e >= range.count) {
        return;
    }
    // Nothing when amr_scan 0 decided that the adaptation does not run (the decision loaded
    // with the kernel's first loads, not before them).
    bool runs = counters[C_DECISION] == ADAPT_RUNS;
    u32 edge_ids = counters[C_EDGE_IDS];
    if (!runs) {
        return;
    }
    // The record of an edge id in use only: the launch runs over the edge capacity.
    bool live = e < edge_ids && (edge_tree[e].x & EDGE_ALIVE) != 0u;
    u32 sides = 0u;
    if (live && edge_tree[e].z == NONE) {
        sides = (refines(edge_sides[2u * e].x, element_tree, flags) ? 1u : 0u) |
                (refines(edge_sides[2u * e + 1u].x, element_tree, flags) ? 2u : 0u);
    }
    items[e] = sides != 0u ? 1u : 0u;
    split_sides[e] = sides != 0u ? sides : NONE;
}
