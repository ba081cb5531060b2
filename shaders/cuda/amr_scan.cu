// #include "common/dispatch.cuh"
// #include "common/scan_blocks.cuh"
// #include "common/amr_tree.cuh"
// #include "common/amr_book.cuh"

// CUDA twin of shaders/amr_scan.wgsl. The first launch of a phase's scan
// (common/scan_blocks.cuh) with the bookkeeping between the adaptation's phases in its last
// block (thread 0, range.pad = the phase), from the scan's total and parts (the total in word
// 0, the prefix at k NE in word k: book_parts, the last block's copy of sums). The kernels
// after it add the block offsets as they read a number (block_sums[i / SCAN_BLOCK]), so no
// launch adds them. Phase 0 scans only the blocks that hold marks of the slots and edge ids in
// use (as the WGSL twin's scan_set_live_ranges).
//   0: after amr_mark (three parts of NE, in order four, then the edge ids): the numbers of
//      clusters, refined elements, freed split blocks and split edges, and the smoothing's top
//      (amr_smooth) handed to C_TOP_LEVEL for the host, the solver's clock copied past the
//      counters (C_CLOCK), and whether the adaptation runs (C_DECISION; the later phases
//      return at once unless it does);
//   1: after coarsening and refining, over the compaction's marks, which this launch computes
//      as it reads them (COMPACTION_ITEMS = 1, below; n = NE): the freed element, split and
//      interior blocks join their rings (amr_coarsen placed them past the lengths, amr_refine
//      counted them in), split blocks are taken from the ring first, then new ids (amr_refine
//      counted the new ones for its interior edges already), element and interior blocks
//      likewise, new slots, the new count, and the holes below it (half the compaction's
//      marks); with the compaction in order (IN_ORDER) there is no phase 1 nor 2:
//      amr_geometry's last workgroup settles these counts and numbers the faces itself;
//   2: after amr_geometry (NE marks per color; GK19's compaction): the new active count,
//      the face offsets of the 2K colors, the DG solver's launch records (dispatch.cuh): 0 the
//      elements, 1 + c the faces of color c, 1 + 2K all faces, 2 + 2K all faces with a
//      thread per face node (dg_flux's grid); and the far faces cleared for amr_faces to
//      count (common/amr_book). Without
//      COLOR_ORDER (one plane of face counts per slot, the faces in left-element order only)
//      every color's range is empty at 0: the faces have no color order to launch.
//
// launches: the DG solver's launch records (GpuDg::launch_words), LAUNCH_WORDS words each.
// slots: the slots (the compaction's marks).

// 1 for the compaction's scan (phase 1): its items are computed as they are read, a launch
// less. A define (the WGSL pipeline constant), so that the other phases keep a plain read.
#ifndef COMPACTION_ITEMS
#define COMPACTION_ITEMS 0u
#endif

// 1 with the compaction in order (the WGSL pipeline constant): phase 0's marks have a fourth
// part of slots; phases 1 and 2 do not run (amr_geometry does their bookkeeping).
#ifndef IN_ORDER
#define IN_ORDER 0u
#endif

// 0 for phase 2 over one plane of face counts (amr_geometry's COLOR_ORDER = 0; the WGSL
// pipeline constant).
#ifndef COLOR_ORDER
#define COLOR_ORDER 1u
#endif

// LIVE_BLOCKS (the WGSL pipeline constant): 1 for phase 0's scan, over the live blocks only.
// common/scan_blocks.cuh reads it and holds its default, 0.

// The compaction's mark of slot p (as the WGSL twin): 1 for a hole below the new active count
// n and for an occupied slot at or past it.
__device__ __forceinline__ u32 compaction_item(u32 p, const u32* slots, const u32* counters) {
    uint2 bounds = compaction_bounds(counters[C_ACTIVE], counters[C_CLUSTERS], counters[C_REFINES]);
    u32 slot = slots[p];
    bool hole = p < bounds.x && slot == NONE;
    bool moves = p >= bounds.x && p < bounds.y && slot != NONE;
    return (hole || moves) ? 1u : 0u;
}

// What the adaptation after this smoothing does, as the host decides it from the same counts
// (as the WGSL twin): not due, no room, nothing to change, or it runs; the counts come loaded
// (`ids`: the active slots, the element and the edge ids in use).
__device__ __forceinline__ u32 decision(u32 clusters, u32 refines, u32 steps, u32 due, uint3 ids,
                                        const AmrParams& params) {
    if (steps < due) {
        return ADAPT_NOT_DUE;
    }
    bool room = ids.x + 3u * refines <= params.slot_capacity &&
                ids.y + 4u * refines <= params.element_capacity &&
                ids.z + 9u * refines <= params.edge_capacity;
    if (!room) {
        return ADAPT_NO_ROOM;
    }
    if (clusters == 0u && refines == 0u) {
        return ADAPT_NOTHING;
    }
    return ADAPT_RUNS;
}

// book_parts (common/scan_blocks.cuh) holds every part that phase 2 reads in color order (as
// the WGSL twin).
static_assert(BOOK_PARTS >= C_SIDE_UNITS - C_COLOR_OFFSETS - 1u, "book_parts holds the colors");

__device__ void count_phase(
    u32 phase,
    u32* counters,
    u32* launches,
    const u32* clock,
    const AmrParams& params) {
    // The total and the parts, from the scan's shared memory (book_parts).
    const u32* s = book_parts;
    u32 total = s[0];
    switch (phase) {
        case 0u: {
            // Every count and clock word loaded before the first store (as the WGSL twin).
            u32 clusters = s[1];
            u32 marked = s[2];
            u32 frees_marked = s[3];
            // In order, the vacated slots (the fourth part) come before the edges.
            u32 edges_from = s[3u + IN_ORDER];
            u32 top = counters[C_SMOOTH_TOP];
            u32 due = counters[C_DUE_STEPS];
            uint3 ids =
                make_uint3(counters[C_ACTIVE], counters[C_ELEMENT_IDS], counters[C_EDGE_IDS]);
            u32 clock_words[CLOCK_WORDS];
#pragma unroll
            for (u32 k = 0u; k < CLOCK_WORDS; k = k + 1u) {
                clock_words[k] = clock[k];
            }
            counters[C_CLUSTERS] = clusters;
            counters[C_REFINES] = marked - clusters;
            counters[C_SPLIT_FREES] = frees_marked - marked;
            counters[C_SPLITS] = total - edges_from;
            counters[C_TOP_LEVEL] = top;
            counters[C_SMOOTH_TOP] = 0u;
#pragma unroll
            for (u32 k = 0u; k < CLOCK_WORDS; k = k + 1u) {
                counters[C_CLOCK + k] = clock_words[k];
            }
            u32 steps = (u32)__uint_as_float(clock_words[5]);
            counters[C_DECISION] = decision(clusters, marked - clusters, steps, due, ids, params);
            // Read once: a smoothing the host queues without writing it is due at once.
            counters[C_DUE_STEPS] = 0u;
            break;
        }
        case 1u: {
            settle(total / 2u, counters, params);
            break;
        }
        case 2u: {
            u32 new_active = counters[C_NEW_ACTIVE];
            counters[C_ACTIVE] = new_active;
            book_faces(total, new_active, counters, launches, s, params);
            break;
        }
        default: {
            break;
        }
    }
}

extern "C" __global__ void amr_scan(
    const u32* __restrict__ input,
    u32* __restrict__ output,
    u32* block_sums,
    u32* sums,
    u32* ticket,
    u32* counters,
    u32* launches,
    const u32* __restrict__ clock,
    const u32* __restrict__ slots,
    AmrParams params,
    ItemRange range) {
    await_previous_launches();
    // The phases after the smoothing's run only in an adaptation that runs (as the WGSL twin).
    if (range.pad != 0u && counters[C_DECISION] != ADAPT_RUNS) {
        return;
    }
    // Item k of this launch's scan (common/scan_blocks.cuh).
    auto item = [&](u32 k) -> u32 {
        return COMPACTION_ITEMS != 0u ? compaction_item(k, slots, counters) : input[k];
    };
    // The live ranges of blocks of phase 0, with LIVE_BLOCKS (as the WGSL twin): per part of
    // NE slots the active slots' marks and the number after them, then the marks of the edge
    // ids in use; at most five ranges (MAX_LIVE_RANGES holds eight).
    auto set_live_ranges = [&](u32 blocks, uint2* ranges) -> u32 {
        u32 ne = params.slot_capacity;
        u32 parts = 3u + IN_ORDER;
        u32 num_active = counters[C_ACTIVE];
        u32 count = 0u;
        for (u32 j = 0u; j <= parts; j = j + 1u) {
            u32 first = j * ne;
            u32 last = first + (j == parts ? counters[C_EDGE_IDS] : num_active);
            uint2 live = make_uint2(first / SCAN_BLOCK, min(last / SCAN_BLOCK + 1u, blocks));
            if (count > 0u && live.x <= ranges[count - 1u].y) {
                ranges[count - 1u].y = max(ranges[count - 1u].y, live.y);
            } else {
                ranges[count] = live;
                count = count + 1u;
            }
        }
        return count;
    };
    bool last = scan_blocks_run(item, set_live_ranges, output, block_sums, sums, ticket, range,
                                threadIdx.x, blockIdx.x + blockIdx.y * gridDim.x);
    if (last && threadIdx.x == 0u) {
        count_phase(range.pad, counters, launches, clock, params);
    }
}
