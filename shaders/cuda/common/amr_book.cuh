// CUDA twin of shaders/common/amr_book.wgsl: the bookkeeping after the adaptation's coarsening
// and refining and after its face numbers, shared by amr_scan (phases 1 and 2 in its last
// block) and amr_geometry (its last block, with the compaction in order). One thread runs it.
// Needs common/dispatch.cuh and common/amr_tree.cuh. `color_starts[c]` is the first face number
// of color c, 0 < c < 2K (read only with COLOR_ORDER).

// The WGSL twins' pipeline constants, with their defaults (the host passes -D values; the
// including kernel's own defaults agree).
#ifndef IN_ORDER
#define IN_ORDER 0u
#endif
#ifndef COLOR_ORDER
#define COLOR_ORDER 1u
#endif

// Launch record r: items first .. first + count and a workgroup grid of `threads` threads.
__device__ __forceinline__ void write_launch_threads(u32* launches, u32 r, u32 first, u32 count,
                                                     u32 threads) {
    u32 w = r * LAUNCH_WORDS;
    uint3 grid = launch_grid(threads);
    launches[w] = first;
    launches[w + 1u] = count;
    launches[w + 2u] = grid.x;
    launches[w + 3u] = grid.y;
    launches[w + 4u] = grid.z;
}

// Launch record r: items first .. first + count, a thread each.
__device__ __forceinline__ void write_launch(u32* launches, u32 r, u32 first, u32 count) {
    write_launch_threads(launches, r, first, count, count);
}

// Take `wanted` blocks of ring r, oldest first: returns how many must be new ids instead.
__device__ __forceinline__ u32 take(u32 r, u32 wanted, u32* counters, const AmrParams& params) {
    u32 len = counters[C_RINGS + 2u * r + 1u];
    u32 taken = min(wanted, len);
    counters[C_RINGS + 2u * r] = (counters[C_RINGS + 2u * r] + taken) % ring_size(params, r);
    counters[C_RINGS + 2u * r + 1u] = len - taken;
    return wanted - taken;
}

// After coarsening and refining (phase 1; in order, with the face numbers; as the WGSL twin):
// the coarsening's frees join their rings, then the takes, the new slots and count, and the
// compaction's holes.
__device__ __forceinline__ void settle(u32 holes, u32* counters, const AmrParams& params) {
    u32 clusters = counters[C_CLUSTERS];
    counters[C_RINGS + 1u] = counters[C_RINGS + 1u] + clusters;
    counters[C_RINGS + 3u] = counters[C_RINGS + 3u] + counters[C_SPLIT_FREES];
    counters[C_RINGS + 5u] = counters[C_RINGS + 5u] + clusters;
    counters[C_EDGE_IDS] =
        counters[C_EDGE_IDS] + 2u * take(1u, counters[C_SPLITS], counters, params);
    u32 refines = counters[C_REFINES];
    counters[C_ELEMENT_IDS] = counters[C_ELEMENT_IDS] + 4u * take(0u, refines, counters, params);
    counters[C_EDGE_IDS] = counters[C_EDGE_IDS] + 3u * take(2u, refines, counters, params);
    uint2 bounds = compaction_bounds(counters[C_ACTIVE], clusters, refines);
    counters[C_SLOTS] = bounds.y;
    counters[C_NEW_ACTIVE] = bounds.x;
    counters[C_COMPACT_HOLES] = holes;
}

// After the faces are numbered (`total` of them; in order, the counts settled first; as the
// WGSL twin): the new active count, the face offsets of the 2K colors, the DG solver's launch
// records, and the far faces and covered half sides cleared for amr_faces to count.
__device__ void book_faces(u32 total, u32* counters, u32* launches, const u32* color_starts,
                           const AmrParams& params) {
    if (IN_ORDER != 0u) {
        settle(0u, counters, params);
    }
    u32 new_active = counters[C_NEW_ACTIVE];
    counters[C_ACTIVE] = new_active;
    counters[C_FAR_FACES] = 0u;
    counters[C_SIDE_UNITS] = 0u;
    u32 colors = 2u * params.base_colors;
    write_launch(launches, 0u, 0u, new_active);
    // Color c's faces are first .. next, the offsets carried in registers (as the WGSL twin).
    u32 first = 0u;
    for (u32 c = 0u; c < colors; c = c + 1u) {
        u32 next = COLOR_ORDER == 0u ? first : c + 1u < colors ? color_starts[c + 1u] : total;
        counters[C_COLOR_OFFSETS + c] = first;
        write_launch(launches, 1u + c, first, next - first);
        first = next;
    }
    counters[C_COLOR_OFFSETS + colors] = total;
    write_launch(launches, 1u + colors, 0u, total);
    write_launch_threads(launches, 2u + colors, 0u, total, total * params.face_nodes);
}
