// #include "common/dispatch.cuh"

// CUDA twin of shaders/common/scan_numbers.wgsl: reading a scan fused into the kernel that
// produced its items (common/scan_fused.cuh) in a later launch, or in its own bookkeeping.
// `out`, `blocks_prefix` and `state` are that scan's buffers.

// The exclusive prefix of item j of part `part` (parts of part_len items): its prefix within
// its block, plus the block's within its chunk, plus the chunk's.
__device__ __forceinline__ u32 scan_number(
    const u32* out, const u32* blocks_prefix, const u32* state, u32 part, u32 j, u32 part_len) {
    u32 b = part * scan_blocks_per_part(part_len) + j / WORKGROUP_SIZE;
    return out[part * part_len + j] + *(const volatile u32*)(blocks_prefix + b) +
           *(const volatile u32*)(state + scan_chunk_word(b / SCAN_BLOCK));
}

// The number of part k's first item (0 for part 0), the sum of the parts before it.
__device__ __forceinline__ u32 scan_part_start(const u32* state, u32 k) {
    return k == 0u ? 0u : *(const volatile u32*)(state + 1u + k);
}

// The sum of every item of every part.
__device__ __forceinline__ u32 scan_total(const u32* state) {
    return *(const volatile u32*)(state + 1u);
}
