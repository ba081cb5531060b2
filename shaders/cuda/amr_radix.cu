// #include "common/dispatch.cuh"
// #include "common/amr_tree.cuh"
// #include "common/amr_reorder.cuh"

// CUDA twin of shaders/amr_radix.wgsl. One pass of the LSD radix sort of the (key, slot) pairs
// (reorder::radix_order, the exact CPU reference), one thread per slot up to the capacity;
// pass p = range.color sorts by digit d = (key >> 4 p) & 15 from half p % 2 of keys/order
// (NE words each) into the other half:
//   0: marks[d' NE + i] = 1 where d' is slot i's digit, 0 elsewhere (slots past the active
//      count mark nothing); the exclusive scan over the 16 NE marks (digit-major) then gives
//      each pair its place, stable within a digit;
//   1: pair i moves to marks_scan[d NE + i].
// After the 8 passes the sorted pairs are back in half 0.
//
// The WGSL override constant is a preprocessor define here (the host passes a -D value).

#ifndef NE
#define NE 1u
#endif

extern "C" __global__ void amr_radix(
    u32* keys,
    u32* order,
    u32* marks,
    const u32* __restrict__ marks_scan,
    const u32* __restrict__ counters,
    ItemRange range) {
    await_previous_launches();
    u32 i = linear_index();
    if (i >= range.count) {
        return;
    }
    u32 src_half = (range.color % 2u) * NE;
    u32 shift = RADIX_BITS * range.color;
    bool occupied = i < counters[C_ACTIVE];
    u32 digit = RADIX;
    if (occupied) {
        digit = (keys[src_half + i] >> shift) & (RADIX - 1u);
    }
    if (range.pad == 0u) {
        for (u32 d = 0u; d < RADIX; d = d + 1u) {
            marks[d * NE + i] = d == digit ? 1u : 0u;
        }
    } else if (occupied) {
        u32 to = NE - src_half + marks_scan[digit * NE + i];
        keys[to] = keys[src_half + i];
        order[to] = order[src_half + i];
    }
}
