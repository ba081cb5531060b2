// #include "common/dispatch.cuh"
// #include "common/amr_tree.cuh"

// CUDA twin of shaders/amr_compact.wgsl. In-place compaction (GK19 Algorithm 4;
// AdaptiveMesh::compact in src/solver/dg/amr/tree.rs), its first half, one thread per slot,
// after amr_scan 1 numbered the holes below the new active count n and the occupied slots at
// or past it (the two sets are equally large; holes first): hole number j, in slot order, is
// listed at holes[j]. amr_geometry then moves occupied slot p past n, number H + j, into hole j
// (the numbers are the scan's block prefixes plus its block offsets).

extern "C" __global__ void amr_compact(
    const u32* __restrict__ slots,
    const u32* __restrict__ items_scan,
    u32* holes,
    const u32* __restrict__ counters,
    const u32* __restrict__ block_offsets,
    ItemRange range) {
    await_previous_launches();
    u32 p = wide_linear_index();
    if (p >= range.count) {
        return;
    }
    // Nothing when amr_scan 0 decided that the adaptation does not run (the decision loaded
    // with the kernel's first loads, not before them).
    bool runs = counters[C_DECISION] == ADAPT_RUNS;
    u32 new_active = counters[C_NEW_ACTIVE];
    u32 slot = slots[p];
    if (runs && p < new_active && slot == NONE) {
        holes[items_scan[p] + block_offsets[p / SCAN_BLOCK]] = p;
    }
}
