// #include "common/dispatch.cuh"
// #include "common/amr_tree.cuh"

// CUDA twin of shaders/amr_mark.wgsl. Which slots start a coarsening cluster and which refine,
// one thread per slot up to the capacity (zeros past the active slots), for one exclusive scan
// over both halves:
//   marks[i] = 1 where slot i holds the first child of a cluster flagged -1,
//   marks[NE + i] = 1 where slot i is flagged +1.
// The scan numbers the clusters and the refined elements in slot order (the CPU reference's
// order in AdaptiveMesh::adapt).
//
// The WGSL override constant is a preprocessor define here (the host passes a -D value).

#ifndef NE
#define NE 1u
#endif

extern "C" __global__ void amr_mark(
    const u32* __restrict__ slots,
    const uint4* __restrict__ element_tree,
    const int* __restrict__ flags,
    u32* marks,
    const u32* __restrict__ counters,
    ItemRange range) {
    u32 i = linear_index();
    if (i >= range.count) {
        return;
    }
    u32 cluster = 0u;
    u32 refine = 0u;
    if (i < counters[C_ACTIVE]) {
        u32 id = slots[i];
        u32 parent = element_tree[id].y;
        if (flags[i] < 0 && parent != NONE && element_tree[parent].z == id) {
            cluster = 1u;
        }
        if (flags[i] > 0) {
            refine = 1u;
        }
    }
    marks[i] = cluster;
    marks[NE + i] = refine;
}
