// #include "common/dispatch.cuh"

// CUDA twin of shaders/common/scan_blocks.wgsl. The first launch of the exclusive prefix sum
// of u32 values (src/runtime/scan.rs), shared by scan_blocks and amr_scan (which does the
// adaptation's bookkeeping in the last block): the caller passes `item`, the value of item k
// (input[k], or one it computes as it reads it). Each block scans SCAN_BLOCK = 1024 items
// (SCAN_THREADS = 256 threads x 4 items) in shared memory, output[i] = sum_{block start <= k <
// i} input[k], and stores the block's total in block_sums[b]; the LAST block to finish
// (ticket[0] counts the finished ones) then scans block_sums in place, tile by tile with a
// running carry, and writes the grand total to sums[0]. scan_add (or a caller's kernel) adds
// block_sums[i / SCAN_BLOCK] to output[i]. Sums wrap modulo 2^32.
//
// Parts: with a stride s = range.color > 0, sums[k] = sum_{i < k s} input[i] for 1 <= k <= (n -
// 1) / s, final after this launch: the block holding item k s stores its local prefix there,
// the last block adds the block offset.
//
// Live blocks: with LIVE_BLOCKS (a define of the including kernel, 0 by default) the caller's
// `live_ranges(blocks, ranges)` writes the ranges of live blocks (first, end), increasing and
// apart, and returns how many. A block outside them holds only items of 0 whose numbers no
// reader reads; it returns at once, without a ticket, and the last block scans the live blocks'
// totals only, one after the other (as the WGSL twin).
//
// No block waits on another. Visibility (the threadFenceReduction pattern): a block's total
// and parts are stored, then __threadfence() orders them before the ticket's atomicAdd; the
// last block fences again and reads them with volatile loads (from L2, not a stale L1 line).
// The last block resets the ticket to 0, so a prepared scan can run again.

// Threads of a scan block (the runtime launches the blocks of a kernel as wide as its WGSL
// twin's @workgroup_size) and the items each scans.
#define SCAN_THREADS 256u
#define SCAN_THREADS_LOG2 8u
#define ITEMS_PER_THREAD 4u
// The half of thread_sums that the last Hillis-Steele level of scan_tile wrote.
#define FINAL_HALF (1u - (SCAN_THREADS_LOG2 - 1u) % 2u)
// One padding word per 32 (the banks): thread t's 4 consecutive items fall in distinct banks.
#define TILE_WORDS 1056u

__device__ __forceinline__ u32 slot(u32 i) {
    return i + i / 32u;
}

// Exclusive scan of the SCAN_BLOCK words of `tile` in place; returns the tile's total to every
// thread. Call with the tile written and a barrier passed; ends with a barrier. A thread's
// items are read into registers at once and written once (as the WGSL twin).
__device__ u32 scan_tile(u32* tile, u32* thread_sums, u32 lid) {
    u32 items[ITEMS_PER_THREAD];
#pragma unroll
    for (u32 k = 0u; k < ITEMS_PER_THREAD; k = k + 1u) {
        items[k] = tile[slot(lid * ITEMS_PER_THREAD + k)];
    }
    u32 sum = 0u;
#pragma unroll
    for (u32 k = 0u; k < ITEMS_PER_THREAD; k = k + 1u) {
        u32 v = items[k];
        items[k] = sum;
        sum = sum + v;
    }
    u32 inclusive = sum;
    thread_sums[lid] = inclusive;
    __syncthreads();
    // The levels alternate between the two halves of thread_sums, one barrier a level (as the
    // WGSL twin).
#pragma unroll
    for (u32 level = 0u; level < SCAN_THREADS_LOG2; level = level + 1u) {
        u32 offset = 1u << level;
        u32 read_half = (level % 2u) * SCAN_THREADS;
        if (lid >= offset) {
            inclusive = inclusive + thread_sums[read_half + lid - offset];
        }
        thread_sums[SCAN_THREADS - read_half + lid] = inclusive;
        __syncthreads();
    }
    // Inclusive minus own is exclusive, also when the sums wrap.
    u32 before = inclusive - sum;
    u32 tile_total = thread_sums[FINAL_HALF * SCAN_THREADS + SCAN_THREADS - 1u];
#pragma unroll
    for (u32 k = 0u; k < ITEMS_PER_THREAD; k = k + 1u) {
        tile[slot(lid * ITEMS_PER_THREAD + k)] = items[k] + before;
    }
    __syncthreads();
    return tile_total;
}

__shared__ u32 tile[TILE_WORDS];
// Two halves for the thread totals' Hillis-Steele levels (the WGSL twin's THREAD_SUMS_WORDS).
__shared__ u32 thread_sums[2u * SCAN_THREADS];
__shared__ u32 is_last;
// The last block's total (word 0) and parts 1 .. BOOK_PARTS - 1 for its caller's bookkeeping,
// in shared memory (as the WGSL twin).
#define BOOK_PARTS 64u
__shared__ u32 book_parts[BOOK_PARTS];

#ifndef LIVE_BLOCKS
#define LIVE_BLOCKS 0u
#endif
// With LIVE_BLOCKS: the ranges of live blocks (the caller's, by thread 0), how many, and how
// many blocks they hold.
#define MAX_LIVE_RANGES 8u
__shared__ uint2 live_ranges[MAX_LIVE_RANGES];
__shared__ u32 live_range_count;
__shared__ u32 live_block_count;

// Live block number q (of live_block_count, in order), with LIVE_BLOCKS; else block q.
__device__ __forceinline__ u32 live_block(u32 q) {
    if (LIVE_BLOCKS == 0u) {
        return q;
    }
    u32 rest = q;
    for (u32 r = 0u; r < live_range_count; r = r + 1u) {
        u32 size = live_ranges[r].y - live_ranges[r].x;
        if (rest < size) {
            return live_ranges[r].x + rest;
        }
        rest = rest - size;
    }
    return q;
}

// Block `block` of the scan, by its thread `lid`; true in the last block, after the block
// offsets, the parts and the total are stored and visible to the whole block.
template <typename Item, typename LiveRanges>
__device__ bool scan_blocks_run(
    Item item,
    LiveRanges set_live_ranges,
    u32* __restrict__ output,
    u32* block_sums,
    u32* sums,
    u32* ticket,
    ItemRange range,
    u32 lid,
    u32 block) {
    u32 n = range.count;
    u32 stride = range.color;
    // ceil(n / SCAN_BLOCK) without overflow, at least one block (n = 0 writes sums[0] = 0).
    u32 blocks = n == 0u ? 1u : (n - 1u) / SCAN_BLOCK + 1u;
    // Blocks past the last one (a 2D grid rounds up) take no ticket.
    if (block >= blocks) {
        return false;
    }
    // A block outside the live ranges returns before it reads anything.
    if (LIVE_BLOCKS != 0u) {
        if (lid == 0u) {
            u32 count = set_live_ranges(blocks, live_ranges);
            u32 held = 0u;
            for (u32 r = 0u; r < count; r = r + 1u) {
                held = held + live_ranges[r].y - live_ranges[r].x;
            }
            live_range_count = count;
            live_block_count = held;
        }
        __syncthreads();
        bool live = false;
        for (u32 r = 0u; r < live_range_count; r = r + 1u) {
            live = live || (block >= live_ranges[r].x && block < live_ranges[r].y);
        }
        if (!live) {
            return false;
        }
    }
    u32 base = block * SCAN_BLOCK;
    // Coalesced: thread t moves items t, t + 256, ...; the scan reads 4 consecutive ones.
    for (u32 k = 0u; k < ITEMS_PER_THREAD; k = k + 1u) {
        u32 i = k * SCAN_THREADS + lid;
        tile[slot(i)] = i < n - base ? item(base + i) : 0u;
    }
    __syncthreads();
    u32 block_total = scan_tile(tile, thread_sums, lid);
    for (u32 k = 0u; k < ITEMS_PER_THREAD; k = k + 1u) {
        u32 i = k * SCAN_THREADS + lid;
        if (i < n - base) {
            output[base + i] = tile[slot(i)];
        }
    }
    // The parts whose items k s lie in this block, a thread each, apart from the stores above
    // (as the WGSL twin).
    if (stride != 0u && n > base) {
        u32 last_item = base + min(n - base, SCAN_BLOCK) - 1u;
        u32 first_item = max(base, 1u);
        u32 first_part = first_item / stride + (first_item % stride == 0u ? 0u : 1u);
        for (u32 k = first_part + lid; k <= last_item / stride; k = k + SCAN_THREADS) {
            *(volatile u32*)(sums + k) = tile[slot(k * stride - base)];
        }
    }
    if (lid == 0u) {
        *(volatile u32*)(block_sums + block) = block_total;
    }
    // Release this block's total and every thread's parts before thread 0's ticket (one fence
    // for both, as the WGSL twin).
    __threadfence();
    __syncthreads();
    if (lid == 0u) {
        u32 tickets = LIVE_BLOCKS != 0u ? live_block_count : blocks;
        is_last = atomicAdd(ticket, 1u) == tickets - 1u ? 1u : 0u;
    }
    __syncthreads();
    if (is_last == 0u) {
        return false;
    }
    // Acquire every live block's total (all their tickets were taken before ours).
    __threadfence();
    u32 carry = 0u;
    u32 scanned = LIVE_BLOCKS != 0u ? live_block_count : blocks;
    for (u32 start = 0u; start < scanned; start = start + SCAN_BLOCK) {
        // The totals' loads all first, then the tile; the scanned tile read into registers
        // before the stores (as the WGSL twin).
        u32 totals[ITEMS_PER_THREAD];
#pragma unroll
        for (u32 k = 0u; k < ITEMS_PER_THREAD; k = k + 1u) {
            u32 i = k * SCAN_THREADS + lid;
            totals[k] =
                i < scanned - start ? *(volatile u32*)(block_sums + live_block(start + i)) : 0u;
        }
#pragma unroll
        for (u32 k = 0u; k < ITEMS_PER_THREAD; k = k + 1u) {
            tile[slot(k * SCAN_THREADS + lid)] = totals[k];
        }
        __syncthreads();
        u32 tile_total = scan_tile(tile, thread_sums, lid);
#pragma unroll
        for (u32 k = 0u; k < ITEMS_PER_THREAD; k = k + 1u) {
            totals[k] = tile[slot(k * SCAN_THREADS + lid)];
        }
#pragma unroll
        for (u32 k = 0u; k < ITEMS_PER_THREAD; k = k + 1u) {
            u32 i = k * SCAN_THREADS + lid;
            if (i < scanned - start) {
                block_sums[live_block(start + i)] = carry + totals[k];
            }
        }
        carry = carry + tile_total;
    }
    // The scanned totals, stored by other threads of this block, before the parts read them (a
    // part in a block outside the live ranges, which no reader reads, takes a stale offset).
    __syncthreads();
    if (stride != 0u && n != 0u) {
        for (u32 k = 1u + lid; k <= (n - 1u) / stride; k = k + SCAN_THREADS) {
            u32 offset = *(volatile u32*)(block_sums + k * stride / SCAN_BLOCK);
            u32 part = *(volatile u32*)(sums + k) + offset;
            sums[k] = part;
            if (k < BOOK_PARTS) {
                book_parts[k] = part;
            }
        }
    }
    if (lid == 0u) {
        sums[0] = carry;
        *ticket = 0u;
        book_parts[0] = carry;
    }
    // The total and the parts, from other threads of this block, before the caller's
    // bookkeeping reads them (book_parts).
    __syncthreads();
    return true;
}
