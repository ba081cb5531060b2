// #include "common/dispatch.cuh"
// #include "common/amr_tree.cuh"

// CUDA twin of shaders/amr_count.wgsl. The bookkeeping between the adaptation phases, one
// thread (range.pad = the phase). Counts come from the exclusive scans as
// out[n - 1] + in[n - 1]:
//   0: after the scan of amr_mark's three parts (NE each): the numbers of clusters, refined
//      elements and freed split blocks, and the last smoothing pass that raised a flag
//      (amr_smooth) handed to C_CHANGED for the host;
//   1: after coarsening and the split scan: the freed element, split and interior blocks join
//      their rings, and the number of edges to split;
//   2: after refining and the compaction scan (n = NE): split blocks taken from the ring first,
//      then new ids (amr_refine counted the new ones for its interior edges already), element
//      and interior blocks likewise, new slots, the new count, and the holes below it (half
//      the compaction's marks);
//   3: after compaction and the face scan (NE marks per color): the new active count, the face
//      offsets of the 2K colors, the DG solver's launch records (dispatch.cuh): 0 the
//      elements, 1 + c the faces of color c, 1 + 2K all faces; and the far faces cleared for
//      amr_faces to count.
//
// marks, marks_scan: amr_mark's cluster, refine and freed-split marks (3 NE) and their scan. items, items_scan: the
// phase's own marks and scan (n = range.count items). launches: the DG solver's launch records
// (GpuDg::launch_words), LAUNCH_WORDS words each.
//
// The WGSL override constant is a preprocessor define here (the host passes a -D value).

#ifndef NE
#define NE 1u
#endif

__device__ __forceinline__ u32 items_total(
    const u32* items, const u32* items_scan, ItemRange range) {
    u32 n = range.count;
    return items_scan[n - 1u] + items[n - 1u];
}

// Launch record r: items first .. first + count and their workgroup grid.
__device__ __forceinline__ void write_launch(u32* launches, u32 r, u32 first, u32 count) {
    u32 w = r * LAUNCH_WORDS;
    uint3 grid = launch_grid(count);
    launches[w] = first;
    launches[w + 1u] = count;
    launches[w + 2u] = grid.x;
    launches[w + 3u] = grid.y;
    launches[w + 4u] = grid.z;
}

// Take `wanted` blocks of ring r, oldest first: returns how many must be new ids instead.
__device__ __forceinline__ u32 take(u32 r, u32 wanted, u32* counters, const AmrParams& params) {
    u32 len = counters[C_RINGS + 2u * r + 1u];
    u32 taken = min(wanted, len);
    counters[C_RINGS + 2u * r] = (counters[C_RINGS + 2u * r] + taken) % ring_size(params, r);
    counters[C_RINGS + 2u * r + 1u] = len - taken;
    return wanted - taken;
}

extern "C" __global__ void amr_count(
    u32* counters,
    const u32* __restrict__ marks,
    const u32* __restrict__ marks_scan,
    const u32* __restrict__ items,
    const u32* __restrict__ items_scan,
    u32* __restrict__ launches,
    AmrParams params,
    ItemRange range) {
    if (linear_index() != 0u) {
        return;
    }
    switch (range.pad) {
        case 0u: {
            u32 clusters = marks_scan[NE];
            u32 marked = marks_scan[2u * NE];
            counters[C_CLUSTERS] = clusters;
            counters[C_REFINES] = marked - clusters;
            counters[C_SPLIT_FREES] = marks_scan[3u * NE - 1u] + marks[3u * NE - 1u] - marked;
            counters[C_CHANGED] = counters[C_LAST_CHANGE];
            counters[C_LAST_CHANGE] = 0u;
            break;
        }
        case 1u: {
            u32 clusters = counters[C_CLUSTERS];
            counters[C_RINGS + 1u] = counters[C_RINGS + 1u] + clusters;
            counters[C_RINGS + 3u] = counters[C_RINGS + 3u] + counters[C_SPLIT_FREES];
            counters[C_RINGS + 5u] = counters[C_RINGS + 5u] + clusters;
            counters[C_SPLITS] = items_total(items, items_scan, range);
            break;
        }
        case 2u: {
            counters[C_EDGE_IDS] =
                counters[C_EDGE_IDS] + 2u * take(1u, counters[C_SPLITS], counters, params);
            u32 refines = counters[C_REFINES];
            u32 num_active = counters[C_ACTIVE];
            u32 holes = 3u * counters[C_CLUSTERS];
            counters[C_ELEMENT_IDS] =
                counters[C_ELEMENT_IDS] + 4u * take(0u, refines, counters, params);
            counters[C_EDGE_IDS] = counters[C_EDGE_IDS] + 3u * take(2u, refines, counters, params);
            counters[C_SLOTS] = slots_in_use(num_active, refines, holes);
            counters[C_NEW_ACTIVE] = num_active + 3u * refines - holes;
            counters[C_COMPACT_HOLES] = items_total(items, items_scan, range) / 2u;
            break;
        }
        case 3u: {
            counters[C_ACTIVE] = counters[C_NEW_ACTIVE];
            counters[C_FAR_FACES] = 0u;
            u32 colors = 2u * params.base_colors;
            u32 per_color = NE;
            for (u32 c = 0u; c < colors; c = c + 1u) {
                counters[C_COLOR_OFFSETS + c] = items_scan[c * per_color];
            }
            u32 faces = items_total(items, items_scan, range);
            counters[C_COLOR_OFFSETS + colors] = faces;
            write_launch(launches, 0u, 0u, counters[C_ACTIVE]);
            for (u32 c = 0u; c < colors; c = c + 1u) {
                u32 first = counters[C_COLOR_OFFSETS + c];
                write_launch(launches, 1u + c, first, counters[C_COLOR_OFFSETS + c + 1u] - first);
            }
            write_launch(launches, 1u + colors, 0u, faces);
            break;
        }
        default: {
            break;
        }
    }
}
