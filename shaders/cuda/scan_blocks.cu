// #include "common/dispatch.cuh"

// CUDA twin of shaders/scan_blocks.wgsl. Exclusive prefix sum of u32 values within blocks of
// SCAN_BLOCK = 256 items (64 threads x 4 consecutive items): output[i] = sum_{block start <= k
// < i} input[k], and block_sums[b] = the block's total. The host scans block_sums the same way
// (recursively) and adds the block offsets back with scan_add. Used for worklist compaction
// without atomics.

#define ITEMS_PER_THREAD 4u
#define SCAN_BLOCK 256u

extern "C" __global__ void scan_blocks(
    const u32* __restrict__ input,
    u32* __restrict__ output,
    u32* __restrict__ block_sums,
    ItemRange range) {
    __shared__ u32 thread_sums[WORKGROUP_SIZE];
    u32 lid = threadIdx.x;
    u32 block = blockIdx.x + blockIdx.y * gridDim.x;
    u32 base = block * SCAN_BLOCK + lid * ITEMS_PER_THREAD;
    u32 local_prefix[4];
    u32 total = 0u;
    for (u32 k = 0u; k < ITEMS_PER_THREAD; k = k + 1u) {
        u32 idx = base + k;
        local_prefix[k] = total;
        if (idx < range.count) {
            total = total + input[idx];
        }
    }
    thread_sums[lid] = total;
    __syncthreads();
    // Hillis-Steele inclusive scan of the 64 per-thread totals.
    for (u32 offset = 1u; offset < WORKGROUP_SIZE; offset = offset * 2u) {
        u32 add = 0u;
        if (lid >= offset) {
            add = thread_sums[lid - offset];
        }
        __syncthreads();
        thread_sums[lid] = thread_sums[lid] + add;
        __syncthreads();
    }
    u32 thread_prefix = thread_sums[lid] - total;
    for (u32 k = 0u; k < ITEMS_PER_THREAD; k = k + 1u) {
        u32 idx = base + k;
        if (idx < range.count) {
            output[idx] = thread_prefix + local_prefix[k];
        }
    }
    if (lid == WORKGROUP_SIZE - 1u) {
        block_sums[block] = thread_sums[lid];
    }
}
