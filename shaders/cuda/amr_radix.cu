// #include "common/dispatch.cuh"
// #include "common/amr_tree.cuh"
// #include "common/amr_reorder.cuh"

// CUDA twin of shaders/amr_radix.wgsl. One pass of the LSD radix sort of the (key, slot) pairs
// (reorder::radix_order, the exact CPU reference), one thread per slot up to the capacity,
// slots i in groups w = i / WORKGROUP_SIZE (a block each; G groups); pass p = range.color sorts
// by digit d = (key >> 8 (p + RADIX_FIRST_DIGIT)) & 255 from half p % 2 of keys/order (NE words each) into the other
// half:
//   0: counts[d G + w] = the occupied slots of group w with digit d (slots past the active
//      count have none); the exclusive scan over the RADIX G counts (digit-major, one launch:
//      this kernel adds its block offsets) then gives group w's first place for digit d;
//   1: pair i moves to that place plus its rank among the slots of its group before it with
//      the same digit: a stable counting sort by the digit.
// After the RADIX_PASSES passes the sorted pairs are in half RADIX_PASSES % 2.
//
// NE, the capacity, is the module constant of common/dispatch.cuh (WGSL: range.capacity).

extern "C" __global__ void amr_radix(
    u32* keys,
    u32* order,
    u32* counts,
    const u32* __restrict__ places,
    const u32* __restrict__ block_offsets,
    const u32* __restrict__ counters,
    ItemRange range) {
    await_previous_launches();
    __shared__ u32 tally[RADIX];
    __shared__ u32 group_digits[WORKGROUP_SIZE];
    u32 lid = threadIdx.x;
    u32 i = linear_index();
    u32 group = i / WORKGROUP_SIZE;
    u32 groups = (NE + WORKGROUP_SIZE - 1u) / WORKGROUP_SIZE;
    u32 src_half = (range.color % 2u) * NE;
    bool occupied = i < range.count && i < counters[C_ACTIVE];
    u32 digit = RADIX;
    if (occupied) {
        digit = (keys[src_half + i] >> (RADIX_BITS * (RADIX_FIRST_DIGIT + range.color))) & (RADIX - 1u);
    }
    if (range.pad == 0u) {
        for (u32 d = lid; d < RADIX; d = d + WORKGROUP_SIZE) {
            tally[d] = 0u;
        }
        __syncthreads();
        if (occupied) {
            atomicAdd(&tally[digit], 1u);
        }
        __syncthreads();
        if (group < groups) {
            for (u32 d = lid; d < RADIX; d = d + WORKGROUP_SIZE) {
                counts[d * groups + group] = tally[d];
            }
        }
        return;
    }
    group_digits[lid] = digit;
    __syncthreads();
    if (occupied) {
        u32 rank = 0u;
        for (u32 j = 0u; j < lid; j = j + 1u) {
            rank = rank + (group_digits[j] == digit ? 1u : 0u);
        }
        u32 at = digit * groups + group;
        u32 to = NE - src_half + places[at] + block_offsets[at / SCAN_BLOCK] + rank;
        keys[to] = keys[src_half + i];
        order[to] = order[src_half + i];
    }
}
