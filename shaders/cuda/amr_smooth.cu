// #include "common/dispatch.cuh"
// #include "common/amr_tree.cuh"

// CUDA twin of shaders/amr_smooth.wgsl. One pass of the 2:1 smoothing of the flags (GK19
// Algorithm 2; AdaptiveMesh::smooth_flags in src/solver/dg/amr/tree.rs), in two phases
// (range.pad):
//   0: per slot: no refinement past the maximum level, no coarsening of a root, and a coarsening
//      flag stands only if all four siblings are active and flagged -1 (the cluster rule);
//   1: per face of color range.color (the faces of the current mesh, grouped by color with the
//      offsets in the counters): the side that would end more than one level coarser than the
//      other is raised by one. No two faces of a color share an element, so no races.
// Any change sets counters[C_CHANGED]; the host repeats passes until one changes nothing.
//
// faces: DgEdge records (8 words: left, right, info, normal, length, midpoint).

__device__ __forceinline__ int level_after(
    u32 pos, const u32* slots, const uint4* element_tree, const int* flags) {
    return (int)element_tree[slots[pos]].x + flags[pos];
}

__device__ void cluster_rule(
    u32 i,
    const u32* slots,
    const uint4* element_tree,
    int* flags,
    u32* counters,
    const AmrParams& params) {
    u32 level = element_tree[slots[i]].x;
    int f = flags[i];
    if ((f > 0 && level >= params.max_level) || (f < 0 && level == 0u)) {
        f = 0;
        flags[i] = 0;
    }
    if (f >= 0) {
        return;
    }
    u32 block = element_tree[element_tree[slots[i]].y].z;
    bool whole = true;
    for (u32 c = 0u; c < 4u; c = c + 1u) {
        u32 pos = element_tree[block + c].w;
        if (pos == NONE) {
            whole = false;
        } else if (flags[pos] >= 0) {
            whole = false;
        }
    }
    if (!whole) {
        flags[i] = 0;
        counters[C_CHANGED] = 1u;
    }
}

extern "C" __global__ void amr_smooth(
    const u32* __restrict__ slots,
    const uint4* __restrict__ element_tree,
    int* flags,
    const u32* __restrict__ faces,
    u32* counters,
    AmrParams params,
    ItemRange range) {
    u32 i = linear_index();
    if (range.pad == 0u) {
        if (i < min(range.count, counters[C_ACTIVE])) {
            cluster_rule(i, slots, element_tree, flags, counters, params);
        }
        return;
    }
    u32 first = counters[C_COLOR_OFFSETS + range.color];
    u32 count = counters[C_COLOR_OFFSETS + range.color + 1u] - first;
    if (i >= min(range.count, count)) {
        return;
    }
    u32 l = faces[8u * (first + i)];
    u32 r = faces[8u * (first + i) + 1u];
    if (r == NONE) {
        return;
    }
    int after_l = level_after(l, slots, element_tree, flags);
    int after_r = level_after(r, slots, element_tree, flags);
    if (after_l - after_r > 1) {
        flags[r] = flags[r] + 1;
        counters[C_CHANGED] = 1u;
    } else if (after_r - after_l > 1) {
        flags[l] = flags[l] + 1;
        counters[C_CHANGED] = 1u;
    }
}
