// #include "common/dispatch.wgsl"
// #include "common/scan_blocks.wgsl"
// #include "common/amr_tree.wgsl"
// #include "common/amr_book.wgsl"

// The first launch of a phase's scan (common/scan_blocks.wgsl) with the bookkeeping between
// the adaptation's phases in its last workgroup (thread 0, range.pad = the phase), from the
// scan's total and parts (the total in word 0, the prefix at k NE in word k: book_parts, the
// last workgroup's copy of sums). The kernels after it add the block offsets as they read a
// number (block_sums[i / SCAN_BLOCK]), so no launch adds them. Phase 0 scans only the blocks
// that hold marks of the slots and edge ids in use (scan_set_live_ranges).
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
//      the face offsets of the 2K colors, the DG solver's launch records (dispatch.wgsl): 0 the
//      elements, 1 + c the faces of color c, 1 + 2K all faces, 2 + 2K all faces with a
//      thread per face node (dg_flux's grid); and the far faces cleared for amr_faces to
//      count (common/amr_book). Without
//      COLOR_ORDER (one plane of face counts per slot, the faces in left-element order only)
//      every color's range is empty at 0: the faces have no color order to launch.

@group(0) @binding(5) var<storage, read_write> counters: array<u32>;
// The DG solver's launch records (GpuDg::launch_words), LAUNCH_WORDS words each.
@group(0) @binding(6) var<storage, read_write> launches: array<u32>;
// The DG solver's clock (GpuDg::clock_buffer), its f32 bits.
@group(0) @binding(7) var<storage, read> clock: array<u32>;
// The slots (the compaction's marks).
@group(0) @binding(8) var<storage, read> slots: array<u32>;
@group(2) @binding(0) var<uniform> params: AmrParams;

// 1 for the compaction's scan (phase 1): its items are computed as they are read, a launch
// less. A pipeline constant, so that the other phases keep a plain read of their input.
override COMPACTION_ITEMS: u32 = 0u;
// 1 with the compaction in order (Compaction::InOrder): phase 0's marks have a fourth part of
// slots (amr_mark); phases 1 and 2 do not run (amr_geometry does their bookkeeping).
override IN_ORDER: u32 = 0u;
// 0 for phase 2 over one plane of face counts (amr_geometry's COLOR_ORDER = 0).
override COLOR_ORDER: u32 = 1u;

// The compaction's mark of slot p (GK19 Algorithm 4; amr_compact): 1 for a hole below the new
// active count n and for an occupied slot at or past it (the two sets are equally large; the
// scan numbers the holes first).
fn compaction_item(p: u32) -> u32 {
    let bounds = compaction_bounds(counters[C_ACTIVE], counters[C_CLUSTERS], counters[C_REFINES]);
    let slot = slots[p];
    let hole = p < bounds.x && slot == NONE;
    let moves = p >= bounds.x && p < bounds.y && slot != NONE;
    return select(0u, 1u, hole || moves);
}

// 1 for phase 0's scan, over the live blocks only (scan_set_live_ranges); a pipeline constant,
// so that the other phases keep the plain scan of every block.
override LIVE_BLOCKS: u32 = 0u;

// The live ranges of blocks of phase 0 (common/scan_blocks.wgsl): per part of NE slots (three,
// in order four) the active slots' marks and the number after them (the part's count), then
// the marks of the edge ids in use. The marks past them are 0 (amr_mark writes the slots' up to
// NE, and no edge id past those in use has been marked since the trees went to the device:
// the ids in use only grow) and no reader reads their numbers; most of the edge capacity is
// room to refine. At most five ranges (MAX_LIVE_RANGES holds eight).
fn scan_set_live_ranges(blocks: u32) -> u32 {
    let ne = params.slot_capacity;
    let parts = 3u + IN_ORDER;
    let num_active = counters[C_ACTIVE];
    var count = 0u;
    for (var j = 0u; j <= parts; j = j + 1u) {
        let first = j * ne;
        let last = first + select(num_active, counters[C_EDGE_IDS], j == parts);
        let live = vec2<u32>(first / SCAN_BLOCK, min(last / SCAN_BLOCK + 1u, blocks));
        if (count > 0u && live.x <= live_ranges[count - 1u].y) {
            live_ranges[count - 1u].y = max(live_ranges[count - 1u].y, live.y);
        } else {
            live_ranges[count] = live;
            count = count + 1u;
        }
    }
    return count;
}

// Item k of this launch's scan (common/scan_blocks.wgsl).
fn scan_item(k: u32) -> u32 {
    if (COMPACTION_ITEMS != 0u) {
        return compaction_item(k);
    }
    return input[k];
}

// What the adaptation after this smoothing does, as the host decides it from the same counts
// (GpuAdaptation::smoothed): not due when the clock's steps (an f32) fell short of the host's
// due steps (C_DUE_STEPS), else no room when the slots (3 more per refinement) or the tree ids
// (4 element and 9 edge ids per refinement) would pass the buffers (`ids`: the active slots,
// the element and the edge ids in use), else nothing when no cluster coarsens and no element
// refines, else it runs.
fn decision(clusters: u32, refines: u32, steps: u32, due: u32, ids: vec3<u32>) -> u32 {
    if (steps < due) {
        return ADAPT_NOT_DUE;
    }
    let room = ids.x + 3u * refines <= params.slot_capacity
        && ids.y + 4u * refines <= params.element_capacity
        && ids.z + 9u * refines <= params.edge_capacity;
    if (!room) {
        return ADAPT_NO_ROOM;
    }
    if (clusters == 0u && refines == 0u) {
        return ADAPT_NOTHING;
    }
    return ADAPT_RUNS;
}

// The first face number of color c (common/amr_book.wgsl): the face scan's part at c NE.
fn face_color_start(c: u32) -> u32 {
    return book_parts[c];
}

fn count_phase(phase: u32) {
    let total = book_parts[0];
    switch phase {
        case 0u: {
            // Every count and clock word loaded before the first store: a load after a store
            // to the same buffer waits for it (phase 0's scan about 1 us a launch faster on
            // Vulkan on an H200, at 33k-240k elements).
            let clusters = book_parts[1];
            let marked = book_parts[2];
            let frees_marked = book_parts[3];
            // In order, the vacated slots (the fourth part) come before the edges.
            let edges_from = book_parts[3u + IN_ORDER];
            let top = counters[C_SMOOTH_TOP];
            let due = counters[C_DUE_STEPS];
            let ids = vec3<u32>(counters[C_ACTIVE], counters[C_ELEMENT_IDS], counters[C_EDGE_IDS]);
            var clock_words: array<u32, CLOCK_WORDS>;
            // #unroll
            for (var k = 0u; k < CLOCK_WORDS; k = k + 1u) {
                clock_words[k] = clock[k];
            }
            counters[C_CLUSTERS] = clusters;
            counters[C_REFINES] = marked - clusters;
            counters[C_SPLIT_FREES] = frees_marked - marked;
            counters[C_SPLITS] = total - edges_from;
            counters[C_TOP_LEVEL] = top;
            counters[C_SMOOTH_TOP] = 0u;
            // #unroll
            for (var k = 0u; k < CLOCK_WORDS; k = k + 1u) {
                counters[C_CLOCK + k] = clock_words[k];
            }
            let steps = u32(bitcast<f32>(clock_words[5]));
            counters[C_DECISION] = decision(clusters, marked - clusters, steps, due, ids);
            // Read once: a smoothing the host queues without writing it is due at once.
            counters[C_DUE_STEPS] = 0u;
        }
        case 1u: {
            _ = settle(total / 2u);
        }
        case 2u: {
            let new_active = counters[C_NEW_ACTIVE];
            counters[C_ACTIVE] = new_active;
            book_faces(total, new_active);
        }
        default: {
        }
    }
}

// book_parts (common/scan_blocks.wgsl) holds every part that phase 2 reads in color order: at
// most 2K - 1 <= MAX_COLORS - 1 (src/solver/dg/amr/gpu.rs), the color offsets' words less one.
const_assert BOOK_PARTS >= C_SIDE_UNITS - C_COLOR_OFFSETS - 1u;

// Whether this launch's phase runs (C_DECISION), read by one thread for the workgroup.
var<workgroup> phase_runs: u32;

@compute @workgroup_size(SCAN_THREADS)
fn main(
    @builtin(local_invocation_id) lid: vec3<u32>,
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
) {
    // The phases after the smoothing's run only in an adaptation that runs.
    if (lid.x == 0u) {
        phase_runs = select(0u, 1u, range.pad == 0u || counters[C_DECISION] == ADAPT_RUNS);
    }
    if (workgroupUniformLoad(&phase_runs) == 0u) {
        return;
    }
    let last = scan_blocks_run(lid.x, wid.x + wid.y * nwg.x);
    if (last && lid.x == 0u) {
        count_phase(range.pad);
    }
}
