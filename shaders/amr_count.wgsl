// #include "common/dispatch.wgsl"
// #include "common/amr_tree.wgsl"

// The bookkeeping between the adaptation phases (thread 0, range.pad = the phase), fused with
// the second launch of the phase's scan (src/runtime/scan.rs): thread t >= 1 adds the block
// offset to scan item t - 1 past the first block (scan_add's work; range.count = 1 + the
// items), and in phase 2 lists the compaction's hole with that number (amr_compact's hole
// test, on counts thread 0 does not change). The bookkeeping reads only the scan's sums (its
// total in word 0, its prefix at k NE in word k, final after the scan's first launch), never
// the items being offset.
//   0: after the scan of amr_mark's three parts (NE each): the numbers of clusters, refined
//      elements and freed split blocks, and the smoothing's top (amr_smooth) handed to
//      C_TOP_LEVEL for the host, and the solver's clock copied past the counters (C_CLOCK);
//   1: after coarsening and the split scan: the freed element, split and interior blocks join
//      their rings, and the number of edges to split;
//   2: after refining and the compaction scan (n = NE), with the holes listed: split blocks
//      taken from the ring first,
//      then new ids (amr_refine counted the new ones for its interior edges already), element
//      and interior blocks likewise, new slots, the new count, and the holes below it (half
//      the compaction's marks);
//   3: after compaction and the face scan (NE marks per color): the new active count, the face
//      offsets of the 2K colors, the DG solver's launch records (dispatch.wgsl): 0 the
//      elements, 1 + c the faces of color c, 1 + 2K all faces; and the far faces cleared for
//      amr_faces to count.

@group(0) @binding(0) var<storage, read_write> counters: array<u32>;
// The phase's scan: its sums (total, then the prefix at every multiple of NE), its block
// offsets and its output.
@group(0) @binding(1) var<storage, read> sums: array<u32>;
@group(0) @binding(2) var<storage, read> block_offsets: array<u32>;
@group(0) @binding(3) var<storage, read_write> scan_out: array<u32>;
// The DG solver's launch records (GpuDg::launch_words), LAUNCH_WORDS words each.
@group(0) @binding(4) var<storage, read_write> launches: array<u32>;
// The DG solver's clock (GpuDg::clock_buffer), its f32 bits.
@group(0) @binding(5) var<storage, read> clock: array<u32>;
// The slots and the compaction's list of holes (phase 2).
@group(0) @binding(6) var<storage, read> slots: array<u32>;
@group(0) @binding(7) var<storage, read_write> holes: array<u32>;
@group(1) @binding(0) var<uniform> range: ItemRange;
@group(2) @binding(0) var<uniform> params: AmrParams;

// Launch record r: items first .. first + count and their workgroup grid.
fn write_launch(r: u32, first: u32, count: u32) {
    let w = r * LAUNCH_WORDS;
    let grid = launch_grid(count);
    launches[w] = first;
    launches[w + 1u] = count;
    launches[w + 2u] = grid.x;
    launches[w + 3u] = grid.y;
    launches[w + 4u] = grid.z;
}

// Take `wanted` blocks of ring r, oldest first: returns how many must be new ids instead.
fn take(r: u32, wanted: u32) -> u32 {
    let len = counters[C_RINGS + 2u * r + 1u];
    let taken = min(wanted, len);
    counters[C_RINGS + 2u * r] = (counters[C_RINGS + 2u * r] + taken) % ring_size(params, r);
    counters[C_RINGS + 2u * r + 1u] = len - taken;
    return wanted - taken;
}

// Phase 2: slot p, numbered `number` by the compaction scan, listed at holes[number] when it is
// a hole below the new active count (amr_compact's test, from the counts the adaptation
// started with).
fn list_hole(p: u32, number: u32) {
    let bounds = compaction_bounds(counters[C_ACTIVE], counters[C_CLUSTERS], counters[C_REFINES]);
    if (p < bounds.x && slots[p] == NONE) {
        holes[number] = p;
    }
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let t = linear_index(gid, nwg);
    if (t >= range.count) {
        return;
    }
    if (t != 0u) {
        let i = t - 1u;
        var number = scan_out[i];
        if (i >= SCAN_BLOCK) {
            number = number + block_offsets[i / SCAN_BLOCK];
            scan_out[i] = number;
        }
        if (range.pad == 2u) {
            list_hole(i, number);
        }
        return;
    }
    switch range.pad {
        case 0u: {
            let clusters = sums[1];
            let marked = sums[2];
            counters[C_CLUSTERS] = clusters;
            counters[C_REFINES] = marked - clusters;
            counters[C_SPLIT_FREES] = sums[0] - marked;
            counters[C_TOP_LEVEL] = counters[C_SMOOTH_TOP];
            counters[C_SMOOTH_TOP] = 0u;
            for (var k = 0u; k < CLOCK_WORDS; k = k + 1u) {
                counters[C_CLOCK + k] = clock[k];
            }
        }
        case 1u: {
            let clusters = counters[C_CLUSTERS];
            counters[C_RINGS + 1u] = counters[C_RINGS + 1u] + clusters;
            counters[C_RINGS + 3u] = counters[C_RINGS + 3u] + counters[C_SPLIT_FREES];
            counters[C_RINGS + 5u] = counters[C_RINGS + 5u] + clusters;
            counters[C_SPLITS] = sums[0];
        }
        case 2u: {
            counters[C_EDGE_IDS] = counters[C_EDGE_IDS] + 2u * take(1u, counters[C_SPLITS]);
            let refines = counters[C_REFINES];
            counters[C_ELEMENT_IDS] = counters[C_ELEMENT_IDS] + 4u * take(0u, refines);
            counters[C_EDGE_IDS] = counters[C_EDGE_IDS] + 3u * take(2u, refines);
            let bounds = compaction_bounds(counters[C_ACTIVE], counters[C_CLUSTERS], refines);
            counters[C_SLOTS] = bounds.y;
            counters[C_NEW_ACTIVE] = bounds.x;
            counters[C_COMPACT_HOLES] = sums[0] / 2u;
        }
        case 3u: {
            counters[C_ACTIVE] = counters[C_NEW_ACTIVE];
            counters[C_FAR_FACES] = 0u;
            let colors = 2u * params.base_colors;
            counters[C_COLOR_OFFSETS] = 0u;
            for (var c = 1u; c < colors; c = c + 1u) {
                counters[C_COLOR_OFFSETS + c] = sums[c];
            }
            let faces = sums[0];
            counters[C_COLOR_OFFSETS + colors] = faces;
            write_launch(0u, 0u, counters[C_ACTIVE]);
            for (var c = 0u; c < colors; c = c + 1u) {
                let first = counters[C_COLOR_OFFSETS + c];
                write_launch(1u + c, first, counters[C_COLOR_OFFSETS + c + 1u] - first);
            }
            write_launch(1u + colors, 0u, faces);
        }
        default: {
        }
    }
}
