// #include "common/dispatch.cuh"
// #include "common/amr_tree.cuh"

// CUDA twin of shaders/amr_compact.wgsl. In-place compaction (GK19 Algorithm 4;
// AdaptiveMesh::compact in src/solver/dg/amr/tree.rs), one thread per slot, after amr_scan 1
// numbered the holes below the new active count n and the occupied slots at or past it (the
// two sets are equally large; holes first), phase range.pad:
//   0: hole number j, in slot order, is listed at holes[j];
//   1: occupied slot p past n, number H + j, moves into hole j with its coefficients (the
//      high and the low words of register 0's double-float pairs).
// The numbers are the scan's block prefixes plus its block offsets.
//
// The WGSL override constants are preprocessor defines here (the host passes -D values); the
// capacity NE is the module constant of common/dispatch.cuh (WGSL: range.capacity).

#ifndef NP
#define NP 3u
#endif

extern "C" __global__ void amr_compact(
    u32* slots,
    uint4* element_tree,
    const u32* __restrict__ items_scan,
    u32* holes,
    const u32* __restrict__ counters,
    float* regs,
    const u32* __restrict__ block_offsets,
    float* regs_lo,
    ItemRange range) {
    await_previous_launches();
    u32 p = wide_linear_index();
    if (p >= range.count) {
        return;
    }
    // Nothing when amr_scan 0 decided that the adaptation does not run (the decision loaded
    // with the kernel's first loads, not before them).
    bool runs = counters[C_DECISION] == ADAPT_RUNS;
    // The new count n and the slots in use, from the counts the adaptation started with (the
    // active count changes after compaction, in amr_scan 2).
    uint2 bounds = compaction_bounds(counters[C_ACTIVE], counters[C_CLUSTERS], counters[C_REFINES]);
    u32 slot = slots[p];
    if (!runs) {
        return;
    }
    // Slot p's number in the compaction scan: its block's prefix plus the block's offset.
    auto number = [&]() { return items_scan[p] + block_offsets[p / SCAN_BLOCK]; };
    if (range.pad == 0u) {
        if (p < bounds.x && slot == NONE) {
            holes[number()] = p;
        }
    } else if (p >= bounds.x && p < bounds.y && slot != NONE) {
        u32 to = holes[number() - counters[C_COMPACT_HOLES]];
        slots[to] = slot;
        element_tree[slot].w = to;
        for (u32 j = 0u; j < 4u * NP; j = j + 1u) {
            regs[j * NE + to] = regs[j * NE + p];
            regs_lo[j * NE + to] = regs_lo[j * NE + p];
        }
    }
}
