// #include "common/dispatch.wgsl"
// #include "common/amr_tree.wgsl"

// The bookkeeping after the adaptation's coarsening and refining and after its face numbers,
// shared by amr_scan (phases 1 and 2 in its last workgroup) and amr_geometry (its last
// workgroup, with the compaction in order, where it numbers the faces itself). One thread runs
// it. The including kernel declares `counters` (array<u32>, read_write), `launches` (the DG
// solver's launch records, GpuDg::launch_words), `params`, the IN_ORDER and COLOR_ORDER
// constants, and `fn face_color_start(c: u32) -> u32`: the first face number of color c,
// 0 < c < 2K (read only with COLOR_ORDER).

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

// Take `wanted` blocks of ring r, oldest first: returns how many must be new ids instead.
fn take(r: u32, wanted: u32) -> u32 {
    let len = counters[C_RINGS + 2u * r + 1u];
    let taken = min(wanted, len);
    counters[C_RINGS + 2u * r] = (counters[C_RINGS + 2u * r] + taken) % ring_size(params, r);
    counters[C_RINGS + 2u * r + 1u] = len - taken;
    return wanted - taken;
}

// After coarsening and refining (phase 1; in order, with the face numbers): the coarsening's
// frees join their rings (amr_coarsen placed them past the lengths; a smoothing alone leaves
// the rings as they were), then the takes, the new slots and count, and the compaction's holes.
fn settle(holes: u32) {
    let clusters = counters[C_CLUSTERS];
    counters[C_RINGS + 1u] = counters[C_RINGS + 1u] + clusters;
    counters[C_RINGS + 3u] = counters[C_RINGS + 3u] + counters[C_SPLIT_FREES];
    counters[C_RINGS + 5u] = counters[C_RINGS + 5u] + clusters;
    counters[C_EDGE_IDS] = counters[C_EDGE_IDS] + 2u * take(1u, counters[C_SPLITS]);
    let refines = counters[C_REFINES];
    counters[C_ELEMENT_IDS] = counters[C_ELEMENT_IDS] + 4u * take(0u, refines);
    counters[C_EDGE_IDS] = counters[C_EDGE_IDS] + 3u * take(2u, refines);
    let bounds = compaction_bounds(counters[C_ACTIVE], clusters, refines);
    counters[C_SLOTS] = bounds.y;
    counters[C_NEW_ACTIVE] = bounds.x;
    counters[C_COMPACT_HOLES] = holes;
}

// After the faces are numbered (`total` of them; in order, the counts settled first): the new
// active count, the face offsets of the 2K colors, the DG solver's launch records
// (dispatch.wgsl): 0 the elements, 1 + c the faces of color c, 1 + 2K all faces, 2 + 2K all
// faces with a thread per face node (dg_flux's grid); and the far faces and covered half sides
// cleared for amr_faces to count. Without COLOR_ORDER (the faces in left-element order only)
// every color's range is empty at 0: the faces have no color order to launch.
fn book_faces(total: u32) {
    if (IN_ORDER != 0u) {
        settle(0u);
    }
    let new_active = counters[C_NEW_ACTIVE];
    counters[C_ACTIVE] = new_active;
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
