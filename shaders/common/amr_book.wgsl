// #include "common/dispatch.wgsl"
// #include "common/amr_tree.wgsl"

// The bookkeeping after the adaptation's coarsening and refining and after its face numbers,
// shared by amr_scan (phases 1 and 2 in its last workgroup) and amr_geometry (its last
// workgroup, with the compaction in order, where it numbers the faces itself). One thread runs
// it. The including kernel declares `counters` (array<u32>, read_write), `launches` (the DG
// solver's launch records, GpuDg::launch_words), `params`, the COLOR_ORDER constant, and
// `fn face_color_start(c: u32) -> u32`: the first face number of color c, 0 < c < 2K (read
// only with COLOR_ORDER).

// Launch record r: items first .. first + count and a workgroup grid of `threads` threads.
fn write_launch_threads(r: u32, first: u32, count: u32, threads: u32) {
    let w = r * LAUNCH_WORDS;
    let grid = launch_grid(threads);
    launches[w] = first;
    launches[w + 1u] = count;
    launches[w + 2u] = grid.x;
    launches[w + 3u] = grid.y;
    launches[w + 4u] = grid.z;
}

// Launch record r: items first .. first + count, a thread each.
fn write_launch(r: u32, first: u32, count: u32) {
    write_launch_threads(r, first, count, count);
}

// Ring r's (head, length) after taking `wanted` blocks, oldest first, and in z how many of
// them must be new ids instead.
fn take(r: u32, head: u32, len: u32, wanted: u32) -> vec3<u32> {
    let taken = min(wanted, len);
    return vec3<u32>((head + taken) % ring_size(params, r), len - taken, wanted - taken);
}

// After coarsening and refining (phase 1; in order, with the face numbers): the coarsening's
// frees join their rings (amr_coarsen placed them past the lengths; a smoothing alone leaves
// the rings as they were), then the takes, the new slots and count, and the compaction's holes.
// Returns the new count. Every count is loaded before the first store: a load after a store to
// the same buffer waits for it (phase 0's scan about 1 us a launch faster on Vulkan on an H200).
fn settle(holes: u32) -> u32 {
    let clusters = counters[C_CLUSTERS];
    let refines = counters[C_REFINES];
    let split_frees = counters[C_SPLIT_FREES];
    let splits = counters[C_SPLITS];
    let num_active = counters[C_ACTIVE];
    let element_ids = counters[C_ELEMENT_IDS];
    let edge_ids = counters[C_EDGE_IDS];
    var rings: array<u32, 6>;
    // #unroll
    for (var k = 0u; k < 6u; k = k + 1u) {
        rings[k] = counters[C_RINGS + k];
    }
    let elements = take(0u, rings[0], rings[1] + clusters, refines);
    let split_blocks = take(1u, rings[2], rings[3] + split_frees, splits);
    let interiors = take(2u, rings[4], rings[5] + clusters, refines);
    let bounds = compaction_bounds(num_active, clusters, refines);
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

// After the faces are numbered (`total` of them, on `new_active` elements): the face offsets of
// the 2K colors, the DG solver's launch records (dispatch.wgsl): 0 the elements, 1 + c the
// faces of color c, 1 + 2K all faces, 2 + 2K all faces with a thread per face node (dg_flux's
// grid); and the far faces and covered half sides cleared for amr_faces to count. The caller
// stores the new active count (amr_scan 2 here, amr_faces in order: amr_geometry's launch reads
// the count it starts from to the end). Without COLOR_ORDER (the faces in left-element order
// only) every color's range is empty at 0: the faces have no color order to launch.
fn book_faces(total: u32, new_active: u32) {
    counters[C_FAR_FACES] = 0u;
    counters[C_SIDE_UNITS] = 0u;
    let colors = 2u * params.base_colors;
    write_launch(0u, 0u, new_active);
    // Color c's faces are first .. next, the offsets carried in registers (reading back the
    // offsets just stored cost the launch 0.3 us on Vulkan on an H200).
    var first = 0u;
    for (var c = 0u; c < colors; c = c + 1u) {
        var next = first;
        if (COLOR_ORDER != 0u) {
            next = total;
            if (c + 1u < colors) {
                next = face_color_start(c + 1u);
            }
        }
        counters[C_COLOR_OFFSETS + c] = first;
        write_launch(1u + c, first, next - first);
        first = next;
    }
    counters[C_COLOR_OFFSETS + colors] = total;
    write_launch(1u + colors, 0u, total);
    write_launch_threads(2u + colors, 0u, total, total * params.face_nodes);
}
