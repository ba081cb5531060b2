// #include "common/dispatch.cuh"

// CUDA twin of shaders/common/scan_tile.wgsl: the exclusive scan of one tile of SCAN_BLOCK
// words in shared memory (64 threads x 16 items), for scan_blocks' blocks and block totals and
// the chunks of block totals of the fused scans (common/scan_fused.cuh). The tile and the
// thread sums are the caller's shared arrays.

#define ITEMS_PER_THREAD 16u
// One padding word per 32 (the banks): thread t's 16 consecutive items fall in distinct banks.
#define TILE_WORDS 1056u

__device__ __forceinline__ u32 slot(u32 i) {
    return i + i / 32u;
}

// Exclusive scan of the SCAN_BLOCK words of `tile` in place; returns the tile's total to every
// thread. Call with the tile written and a barrier passed; ends with a barrier.
__device__ u32 scan_tile(u32* tile, u32* thread_sums, u32 lid) {
    u32 sum = 0u;
    for (u32 k = 0u; k < ITEMS_PER_THREAD; k = k + 1u) {
        u32 j = slot(lid * ITEMS_PER_THREAD + k);
        u32 v = tile[j];
        tile[j] = sum;
        sum = sum + v;
    }
    thread_sums[lid] = sum;
    __syncthreads();
    for (u32 offset = 1u; offset < WORKGROUP_SIZE; offset = offset * 2u) {
        u32 add = 0u;
        if (lid >= offset) {
            add = thread_sums[lid - offset];
        }
        __syncthreads();
        thread_sums[lid] = thread_sums[lid] + add;
        __syncthreads();
    }
    // Inclusive minus own is exclusive, also when the sums wrap.
    u32 before = thread_sums[lid] - sum;
    u32 tile_total = thread_sums[WORKGROUP_SIZE - 1u];
    for (u32 k = 0u; k < ITEMS_PER_THREAD; k = k + 1u) {
        u32 j = slot(lid * ITEMS_PER_THREAD + k);
        tile[j] = tile[j] + before;
    }
    __syncthreads();
    return tile_total;
}
