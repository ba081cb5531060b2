// #include "common/dispatch.cuh"
// #include "common/amr_tree.cuh"

// CUDA twin of shaders/amr_split.wgsl. Splitting the edges of the elements to refine, one
// thread per edge id (AdaptiveMesh::split_edge in src/solver/dg/amr/tree.rs, edges in id
// order). Phase range.pad:
//   0: items[e] = 1 for a live leaf edge with an element flagged +1 on a side (scanned next);
//   1: edge e number k takes the ring's k-th split block, or new ids past the ring's length;
//      its halves get colors c and (c + K) mod 2K and no elements yet.

__device__ __forceinline__ bool refines(u32 element, const uint4* element_tree, const int* flags) {
    if (element == NONE) {
        return false;
    }
    u32 pos = element_tree[element].w;
    return pos != NONE && flags[pos] > 0;
}

extern "C" __global__ void amr_split(
    const uint4* __restrict__ element_tree,
    uint4* edge_tree,
    uint2* edge_sides,
    const int* __restrict__ flags,
    u32* items,
    const u32* __restrict__ items_scan,
    const u32* __restrict__ rings,
    const u32* __restrict__ counters,
    const u32* __restrict__ block_offsets,
    AmrParams params,
    ItemRange range) {
    await_previous_launches();
    u32 e = linear_index();
    if (e >= range.count) {
        return;
    }
    if (range.pad == 0u) {
        bool live = e < counters[C_EDGE_IDS] && (edge_tree[e].x & EDGE_ALIVE) != 0u;
        u32 split = 0u;
        if (live && edge_tree[e].z == NONE) {
            if (refines(edge_sides[2u * e].x, element_tree, flags) ||
                refines(edge_sides[2u * e + 1u].x, element_tree, flags)) {
                split = 1u;
            }
        }
        items[e] = split;
        return;
    }
    if (items[e] == 0u) {
        return;
    }
    u32 k = items_scan[e] + block_offsets[e / SCAN_BLOCK];
    u32 len = counters[C_RINGS + 3u];
    u32 first;
    if (k < len) {
        first = rings[ring_index(params, 1u, counters[C_RINGS + 2u], k)];
    } else {
        first = counters[C_EDGE_IDS] + 2u * (k - len);
    }
    uint4 t = edge_tree[e];
    u32 colors = 2u * params.base_colors;
    u32 color = (t.x >> 8u) & 0xffu;
    u32 level = (t.x & 0xffu) + 1u;
    edge_tree[first] = make_uint4(level | (color << 8u) | EDGE_ALIVE, e, NONE, t.w);
    u32 second = (color + params.base_colors) % colors;
    edge_tree[first + 1u] = make_uint4(level | (second << 8u) | EDGE_ALIVE, e, NONE, t.w);
    for (u32 h = first; h < first + 2u; h = h + 1u) {
        edge_sides[2u * h] = make_uint2(NONE, 0u);
        edge_sides[2u * h + 1u] = make_uint2(NONE, 0u);
    }
    edge_tree[e].z = first;
}
