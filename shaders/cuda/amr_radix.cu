// #include "common/dispatch.cuh"
// #include "common/amr_tree.cuh"
// #include "common/amr_reorder.cuh"

// CUDA twin of shaders/amr_radix.wgsl. One pass of the LSD radix sort of the (key, slot) pairs
// (reorder::radix_order, the exact CPU reference), one thread per slot up to the capacity,
// slots i in groups w = i / WORKGROUP_SIZE (a block each; G groups); pass p = range.color sorts
// by digit d = (key >> 8 (p + RADIX_FIRST_DIGIT)) & 255 from half p % 2 of keys/order (NE
// words each) into the other half:
//   0: counts[d G + w] = the occupied slots of group w with digit d (slots past the active
//      count have none); the exclusive scan over the RADIX G counts (digit-major, one launch:
//      this kernel adds its block offsets) then gives group w's first place for digit d;
//   1: pair i moves to that place plus its rank among the slots of its group before it with
//      the same digit: a stable counting sort by the digit.
// After the RADIX_PASSES passes the sorted pairs are in half RADIX_PASSES % 2.
// The first pass's counting makes the pairs it sorts (no launch of their own): the Morton key
// of slot i's centroid (reorder::morton_key, the exact CPU reference), with s = (v0 + v1) + v2
// the centroid's sum in f32, q = (s - origin) * scale on a 65536^2 grid (clamped),
// key = x bits at even positions, y bits at odd, and order[i] = i. The f32 steps have no
// product followed by a sum (and are rounded as such), so no backend can fuse them: the keys
// are the same bits everywhere.
//
// NE, the capacity, is the module constant of common/dispatch.cuh (WGSL: range.capacity).

// The low 16 bits of v at the even bit positions.
__device__ __forceinline__ u32 spread(u32 x) {
    u32 v = x & 0xffffu;
    v = (v | (v << 8u)) & 0x00ff00ffu;
    v = (v | (v << 4u)) & 0x0f0f0f0fu;
    v = (v | (v << 2u)) & 0x33333333u;
    return (v | (v << 1u)) & 0x55555555u;
}

// The Morton key of active slot i's centroid.
__device__ __forceinline__ u32 morton_key(
    u32 i, const u32* slots, const float2* vertices, const ReorderParams& params) {
    u32 id = slots[i];
    float2 s = (vertices[3u * id] + vertices[3u * id + 1u]) + vertices[3u * id + 2u];
    float qx = fminf(
        fmaxf(__fmul_rn(__fsub_rn(s.x, params.origin.x), params.scale.x), 0.0f), 65535.0f);
    float qy = fminf(
        fmaxf(__fmul_rn(__fsub_rn(s.y, params.origin.y), params.scale.y), 0.0f), 65535.0f);
    return spread((u32)qx) | (spread((u32)qy) << 1u);
}

extern "C" __global__ void amr_radix(
    u32* keys,
    u32* order,
    u32* counts,
    const u32* __restrict__ places,
    const u32* __restrict__ block_offsets,
    const u32* __restrict__ counters,
    const u32* __restrict__ slots,
    const float2* __restrict__ vertices,
    ReorderParams params,
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
        u32 key;
        if (range.color == 0u && range.pad == 0u) {
            key = morton_key(i, slots, vertices, params);
            keys[i] = key;
            order[i] = i;
        } else {
            key = keys[src_half + i];
        }
        digit = (key >> (RADIX_BITS * (RADIX_FIRST_DIGIT + range.color))) & (RADIX - 1u);
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
