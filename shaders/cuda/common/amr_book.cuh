// CUDA twin of shaders/common/amr_book.wgsl: the bookkeeping after the adaptation's coarsening
// and refining and after its face numbers, shared by amr_scan (phases 1 and 2 in its last
// block) and amr_geometry (its last block, with the compaction in order). One thread runs it.
// Needs common/dispatch.cuh and common/amr_tree.cuh. `color_starts[c]` is the first face number
// of color c, 0 < c < 2K (read only with COLOR_ORDER).

// The WGSL twins' pipeline constant, with its default (the host passes -D values; the including
// kernel's own default agrees).
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

// Ring r's (head, length) after taking `wanted` blocks, oldest first, and in z how many of them
// must be new ids instead.
__device__ __forceinline__ uint3 take(u32 r, u32 head, u32 len, u32 wanted,
                                      const AmrParams& params) {
    u32 taken = min(wanted, len);
    return make_uint3((head + taken) % ring_size(params, r), len - taken, wanted - taken);
}

// After coarsening and refining (phase 1; in order, with the face numbers; as the WGSL twin):
// the coarsening's frees join their rings, then the takes, the new slots and count, and the
// compaction's holes. Returns the new count. Every count is loaded before the first store.
__device__ __forceinline__ u32 settle(u32 holes, u32* counters, const AmrParams& params) {
    u32 clusters = counters[C_CLUSTERS];
    u32 refines = counters[C_REFINES];
    u32 split_frees = counters[C_SPLIT_FREES];
    u32 splits = counters[C_SPLITS];
    u32 num_active = counters[C_ACTIVE];
    u32 element_ids = counters[C_ELEMENT_IDS];
    u32 edge_ids = counters[C_EDGE_IDS];
    u32 rings[6];
#pragma unroll
    for (u32 k = 0u; k < 6u; k = k + 1u) {
        rings[k] = counters[C_RINGS + k];
    }
    uint3 elements = take(0u, rings[0], rings[1] + clusters, refines, params);
    uint3 split_blocks = take(1u, rings[2], rings[3] + split_frees, splits, params);
    uint3 interiors = take(2u, rings[4], rings[5] + clusters, refines, params);
    uint2 bounds = compaction_bounds(num_active, clusters, refines);
    counters[C_RINGS] = elements.x;
    counters[C_RINGS + 1u] = elements.y;
    counters[C_RINGS + 2u] = split_blocks.x;
    counters[C_RINGS + 3u] = split_blocks.y;
    counters[C_RINGS + 4u] = interiors.x;
    counters[C_RINGS + 5u] = interiors.y;
    counters[C_ELEMENT_IDS] = element_ids + 4u * elements.z;
    counters[C_EDGE_IDS] = edge_ids + 2u * split_blocks.z + 3u * interiors.z;
    counters[C_SLOTS] = bounds.y;
    counters[C_NEW_ACTIVE] = bounds.x;
    counters[C_COMPACT_HOLES] = holes;
    return bounds.x;
}

// After the faces are numbered (`total` of them, on `new_active` elements; as the WGSL twin):
// the face offsets of the 2K colors, the DG solver's launch records, and the far faces and
// covered half sides cleared for amr_faces to count. The caller stores the new active count.
__device__ void book_faces(u32 total, u32 new_active, u32* counters, u32* launches,
                           const u32* color_starts, const AmrParams& params) {
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
