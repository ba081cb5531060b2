// #include "common/dispatch.wgsl"
// #include "common/amr_tree.wgsl"
// #include "common/amr_reorder.wgsl"

// One pass of the LSD radix sort of the (key, slot) pairs (reorder::radix_order, the exact CPU
// reference), one thread per slot up to the capacity; pass p = range.color sorts by digit
// d = (key >> 4 p) & 15 from half p % 2 of keys/order (NE words each) into the other half:
//   0: marks[d' NE + i] = 1 where d' is slot i's digit, 0 elsewhere (slots past the active
//      count mark nothing); the exclusive scan over the 16 NE marks (digit-major) then gives
//      each pair its place, stable within a digit;
//   1: pair i moves to marks_scan[d NE + i].
// After the 8 passes the sorted pairs are back in half 0.

override NE: u32 = 1u;

@group(0) @binding(0) var<storage, read_write> keys: array<u32>;
@group(0) @binding(1) var<storage, read_write> order: array<u32>;
@group(0) @binding(2) var<storage, read_write> marks: array<u32>;
@group(0) @binding(3) var<storage, read> marks_scan: array<u32>;
@group(0) @binding(4) var<storage, read> counters: array<u32>;
@group(1) @binding(0) var<uniform> range: ItemRange;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = linear_index(gid, nwg);
    if (i >= range.count) {
        return;
    }
    let src_half = (range.color % 2u) * NE;
    let shift = RADIX_BITS * range.color;
    let occupied = i < counters[C_ACTIVE];
    var digit = RADIX;
    if (occupied) {
        digit = (keys[src_half + i] >> shift) & (RADIX - 1u);
    }
    if (range.pad == 0u) {
        for (var d = 0u; d < RADIX; d = d + 1u) {
            marks[d * NE + i] = select(0u, 1u, d == digit);
        }
    } else if (occupied) {
        let to = NE - src_half + marks_scan[digit * NE + i];
        keys[to] = keys[src_half + i];
        order[to] = order[src_half + i];
    }
}
