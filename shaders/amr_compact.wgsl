// #include "common/dispatch.wgsl"
// #include "common/amr_tree.wgsl"

// In-place compaction (GK19 Algorithm 4; AdaptiveMesh::compact in src/solver/dg/amr/tree.rs),
// its first half, one thread per slot, after amr_scan 1 numbered the holes below the new active
// count n and the occupied slots at or past it (the two sets are equally large; holes first):
// hole number j, in slot order, is listed at holes[j]. amr_geometry then moves occupied slot p
// past n, number H + j, into hole j (the numbers are the scan's block prefixes plus its block
// offsets).

@group(0) @binding(0) var<storage, read> slots: array<u32>;
@group(0) @binding(1) var<storage, read> items_scan: array<u32>;
@group(0) @binding(2) var<storage, read_write> holes: array<u32>;
@group(0) @binding(3) var<storage, read> counters: array<u32>;
// The compaction scan's block offsets (amr_scan leaves them for the reader to add).
@group(0) @binding(4) var<storage, read> block_offsets: array<u32>;
@group(1) @binding(0) var<uniform> range: ItemRange;

@compute @workgroup_size(WIDE_WORKGROUP_SIZE)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let p = wide_linear_index(gid, nwg);
    if (p >= range.count) {
        return;
    }
    // Nothing when amr_scan 0 decided that the adaptation does not run (the decision loaded
    // with the kernel's first loads, not before them).
    let runs = counters[C_DECISION] == ADAPT_RUNS;
    let new_active = counters[C_NEW_ACTIVE];
    let slot = slots[p];
    if (runs && p < new_active && slot == NONE) {
        holes[items_scan[p] + block_offsets[p / SCAN_BLOCK]] = p;
    }
}
