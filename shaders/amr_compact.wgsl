// #include "common/dispatch.wgsl"
// #include "common/amr_tree.wgsl"

// In-place compaction (GK19 Algorithm 4; AdaptiveMesh::compact in src/solver/dg/amr/tree.rs),
// one thread per slot, after amr_scan 1 numbered the holes below the new active count n and
// the occupied slots at or past it (the two sets are equally large; holes first), phase
// range.pad:
//   0: hole number j, in slot order, is listed at holes[j];
//   1: occupied slot p past n, number H + j, moves into hole j with its coefficients (the
//      high and the low words of register 0's double-float pairs).
// The numbers are the scan's block prefixes plus its block offsets.

override NP: u32 = 3u;

@group(0) @binding(0) var<storage, read_write> slots: array<u32>;
@group(0) @binding(1) var<storage, read_write> element_tree: array<vec4<u32>>;
@group(0) @binding(2) var<storage, read> items_scan: array<u32>;
@group(0) @binding(3) var<storage, read_write> holes: array<u32>;
@group(0) @binding(4) var<storage, read> counters: array<u32>;
@group(0) @binding(5) var<storage, read_write> regs: array<f32>;
// The compaction scan's block offsets (amr_scan leaves them for the reader to add).
@group(0) @binding(6) var<storage, read> block_offsets: array<u32>;
// Register 0's low words, 4 NP rows of NE.
@group(0) @binding(7) var<storage, read_write> regs_lo: array<f32>;
@group(1) @binding(0) var<uniform> range: ItemRange;

// Slot p's number in the compaction scan: its block's prefix plus the block's offset.
fn number(p: u32) -> u32 {
    return items_scan[p] + block_offsets[p / SCAN_BLOCK];
}

@compute @workgroup_size(WIDE_WORKGROUP_SIZE)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let p = wide_linear_index(gid, nwg);
    if (p >= range.count) {
        return;
    }
    // Nothing when amr_scan 0 decided that the adaptation does not run (the decision loaded
    // with the kernel's first loads, not before them).
    let runs = counters[C_DECISION] == ADAPT_RUNS;
    // The new count n and the slots in use, from the counts the adaptation started with (the
    // active count changes after compaction, in amr_scan 2).
    let bounds = compaction_bounds(counters[C_ACTIVE], counters[C_CLUSTERS], counters[C_REFINES]);
    let slot = slots[p];
    if (!runs) {
        return;
    }
    if (range.pad == 0u) {
        if (p < bounds.x && slot == NONE) {
            holes[number(p)] = p;
        }
    } else if (p >= bounds.x && p < bounds.y && slot != NONE) {
        let to = holes[number(p) - counters[C_COMPACT_HOLES]];
        slots[to] = slot;
        element_tree[slot].w = to;
        // #unroll
        for (var j = 0u; j < 4u * NP; j = j + 1u) {
            regs[j * range.capacity + to] = regs[j * range.capacity + p];
            regs_lo[j * range.capacity + to] = regs_lo[j * range.capacity + p];
        }
    }
}
