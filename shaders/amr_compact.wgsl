// #include "common/dispatch.wgsl"
// #include "common/amr_tree.wgsl"
// #include "common/scan_fused.wgsl"
// #include "common/scan_numbers.wgsl"

// In-place compaction (GK19 Algorithm 4; AdaptiveMesh::compact in src/solver/dg/amr/tree.rs),
// one thread per slot, phase range.pad:
//   0: items[p] = 1 for a hole below the new active count n and for an occupied slot at or
//      past it (the two sets are equally large), scanned in this launch
//      (common/scan_fused.wgsl): holes come first. The scan's last workgroup takes the split,
//      element and interior blocks refining used from their rings (new ids past them;
//      amr_refine counted the new ones for its interior edges already) and stores the new
//      slot and active counts and the number of holes H;
//   1: hole number j, in slot order, is listed at holes[j];
//   2: occupied slot p past n, number H + j, moves into hole j with its coefficients.

override NP: u32 = 3u;
override NE: u32 = 1u;

@group(0) @binding(0) var<storage, read_write> slots: array<u32>;
@group(0) @binding(1) var<storage, read_write> element_tree: array<vec4<u32>>;
// The compaction marks.
@group(0) @binding(2) var<storage, read_write> scan_in: array<u32>;
@group(0) @binding(3) var<storage, read_write> scan_out: array<u32>;
@group(0) @binding(4) var<storage, read_write> holes: array<u32>;
@group(0) @binding(5) var<storage, read_write> counters: array<u32>;
@group(0) @binding(6) var<storage, read_write> regs: array<f32>;
@group(0) @binding(7) var<storage, read_write> scan_blocks_prefix: array<atomic<u32>>;
@group(0) @binding(8) var<storage, read_write> scan_state: array<atomic<u32>>;
@group(1) @binding(0) var<uniform> range: ItemRange;
@group(2) @binding(0) var<uniform> params: AmrParams;

// Take `wanted` blocks of ring r, oldest first: returns how many must be new ids instead.
fn take(r: u32, wanted: u32) -> u32 {
    let len = counters[C_RINGS + 2u * r + 1u];
    let taken = min(wanted, len);
    counters[C_RINGS + 2u * r] = (counters[C_RINGS + 2u * r] + taken) % ring_size(params, r);
    counters[C_RINGS + 2u * r + 1u] = len - taken;
    return wanted - taken;
}

// The scan's bookkeeping (its last workgroup; every workgroup has read the counts the
// adaptation started with before it took its ticket).
fn scan_done(lid: u32) {
    if (lid != 0u) {
        return;
    }
    counters[C_EDGE_IDS] = counters[C_EDGE_IDS] + 2u * take(1u, counters[C_SPLITS]);
    let refines = counters[C_REFINES];
    counters[C_ELEMENT_IDS] = counters[C_ELEMENT_IDS] + 4u * take(0u, refines);
    counters[C_EDGE_IDS] = counters[C_EDGE_IDS] + 3u * take(2u, refines);
    let bounds = compaction_bounds(counters[C_ACTIVE], counters[C_CLUSTERS], refines);
    counters[C_SLOTS] = bounds.y;
    counters[C_NEW_ACTIVE] = bounds.x;
    counters[C_COMPACT_HOLES] = scan_total() / 2u;
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(
    @builtin(local_invocation_id) lid: vec3<u32>,
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
) {
    let group = wid.x + wid.y * nwg.x;
    if (group >= scan_blocks_per_part(range.count)) {
        return;
    }
    let p = group * WORKGROUP_SIZE + lid.x;
    // The new count n and the slots in use, from the counts the adaptation started with (the
    // active count changes after compaction, in amr_geometry's scan).
    var hole = false;
    var moves = false;
    if (p < range.count) {
        let bounds =
            compaction_bounds(counters[C_ACTIVE], counters[C_CLUSTERS], counters[C_REFINES]);
        hole = p < bounds.x && slots[p] == NONE;
        moves = p >= bounds.x && p < bounds.y && slots[p] != NONE;
    }
    if (range.pad == 0u) {
        if (p < range.count) {
            scan_in[p] = select(0u, 1u, hole || moves);
        }
        fused_scan(lid.x, group, 1u, range.count);
    } else if (range.pad == 1u) {
        if (hole) {
            holes[scan_number(0u, p, range.count)] = p;
        }
    } else if (moves) {
        let to = holes[scan_number(0u, p, range.count) - counters[C_COMPACT_HOLES]];
        let id = slots[p];
        slots[to] = id;
        element_tree[id].w = to;
        // #unroll
        for (var j = 0u; j < 4u * NP; j = j + 1u) {
            regs[j * NE + to] = regs[j * NE + p];
        }
    }
}
