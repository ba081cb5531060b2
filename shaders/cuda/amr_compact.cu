// #include "common/dispatch.cuh"
// #include "common/amr_tree.cuh"
// #include "common/scan_fused.cuh"
// #include "common/scan_numbers.cuh"

// CUDA twin of shaders/amr_compact.wgsl. In-place compaction (GK19 Algorithm 4;
// AdaptiveMesh::compact in src/solver/dg/amr/tree.rs), one thread per slot, phase range.pad:
//   0: items[p] = 1 for a hole below the new active count n and for an occupied slot at or
//      past it (the two sets are equally large), scanned in this launch
//      (common/scan_fused.cuh): holes come first. The scan's last block takes the split,
//      element and interior blocks refining used from their rings (new ids past them;
//      amr_refine counted the new ones for its interior edges already) and stores the new
//      slot and active counts and the number of holes H;
//   1: hole number j, in slot order, is listed at holes[j];
//   2: occupied slot p past n, number H + j, moves into hole j with its coefficients.
//
// The WGSL override constants are preprocessor defines here (the host passes -D values).

#ifndef NP
#define NP 3u
#endif
#ifndef NE
#define NE 1u
#endif

// Take `wanted` blocks of ring r, oldest first: returns how many must be new ids instead.
__device__ __forceinline__ u32 take(u32 r, u32 wanted, u32* counters, const AmrParams& params) {
    u32 len = counters[C_RINGS + 2u * r + 1u];
    u32 taken = min(wanted, len);
    counters[C_RINGS + 2u * r] = (counters[C_RINGS + 2u * r] + taken) % ring_size(params, r);
    counters[C_RINGS + 2u * r + 1u] = len - taken;
    return wanted - taken;
}

extern "C" __global__ void amr_compact(
    u32* slots,
    uint4* element_tree,
    u32* scan_in,
    u32* scan_out,
    u32* holes,
    u32* counters,
    float* regs,
    u32* scan_blocks_prefix,
    u32* scan_state,
    AmrParams params,
    ItemRange range) {
    await_previous_launches();
    u32 group = blockIdx.x + blockIdx.y * gridDim.x;
    if (group >= scan_blocks_per_part(range.count)) {
        return;
    }
    u32 p = group * WORKGROUP_SIZE + threadIdx.x;
    // The new count n and the slots in use, from the counts the adaptation started with (the
    // active count changes after compaction, in amr_geometry's scan).
    bool hole = false;
    bool moves = false;
    if (p < range.count) {
        uint2 bounds =
            compaction_bounds(counters[C_ACTIVE], counters[C_CLUSTERS], counters[C_REFINES]);
        hole = p < bounds.x && slots[p] == NONE;
        moves = p >= bounds.x && p < bounds.y && slots[p] != NONE;
    }
    if (range.pad == 0u) {
        if (p < range.count) {
            scan_in[p] = (hole || moves) ? 1u : 0u;
        }
        FusedScanBuffers scan = {scan_in, scan_out, scan_blocks_prefix, scan_state};
        // The scan's bookkeeping (its last block; every block has read the counts the
        // adaptation started with before it took its ticket).
        fused_scan(scan, threadIdx.x, group, 1u, range.count, [&](u32 lid) {
            if (lid != 0u) {
                return;
            }
            counters[C_EDGE_IDS] =
                counters[C_EDGE_IDS] + 2u * take(1u, counters[C_SPLITS], counters, params);
            u32 refines = counters[C_REFINES];
            counters[C_ELEMENT_IDS] =
                counters[C_ELEMENT_IDS] + 4u * take(0u, refines, counters, params);
            counters[C_EDGE_IDS] = counters[C_EDGE_IDS] + 3u * take(2u, refines, counters, params);
            uint2 bounds = compaction_bounds(counters[C_ACTIVE], counters[C_CLUSTERS], refines);
            counters[C_SLOTS] = bounds.y;
            counters[C_NEW_ACTIVE] = bounds.x;
            counters[C_COMPACT_HOLES] = scan_total(scan_state) / 2u;
        });
    } else if (range.pad == 1u) {
        if (hole) {
            holes[scan_number(scan_out, scan_blocks_prefix, scan_state, 0u, p, range.count)] = p;
        }
    } else if (moves) {
        u32 number = scan_number(scan_out, scan_blocks_prefix, scan_state, 0u, p, range.count);
        u32 to = holes[number - counters[C_COMPACT_HOLES]];
        u32 id = slots[p];
        slots[to] = id;
        element_tree[id].w = to;
        for (u32 j = 0u; j < 4u * NP; j = j + 1u) {
            regs[j * NE + to] = regs[j * NE + p];
        }
    }
}
