// #include "common/dispatch.cuh"
// #include "common/scan_tile.cuh"

// CUDA twin of shaders/common/scan_fused.wgsl: the exclusive scan of the items a kernel has
// just produced, fused into that kernel's launch (FusedScan in src/runtime/scan.rs). Items come
// in `parts` parts of `part_len` each, item j of part k at in[k part_len + j]. Block b = k B + g
// (B = scan_blocks_per_part(part_len)) holds items j = 64 g + lid of part k; each block's
// prefixes go to out at the items' indices and its total to blocks_prefix[b]; the last block of
// a chunk (SCAN_BLOCK blocks) to take its ticket scans the chunk's totals in place, and the
// last chunk scans the chunk totals, stores the total at state[1] and part k's first number at
// state[1 + k], and calls the kernel's `done(lid)` (its bookkeeping). Item (k, j)'s number is
// out[k part_len + j] + blocks_prefix[b] + state[scan_chunk_word(b / SCAN_BLOCK)]
// (common/scan_numbers.cuh).
//
// No block waits on another. Visibility as in scan_blocks.cu: the totals, prefixes and tickets
// are written and read through volatile accesses, __threadfence() orders a block's stores before
// its tickets and the last arriver's loads after them. Each last arriver resets its ticket.
// Call fused_scan from every thread of a block whose group exists, after writing its items.

#define SCAN_LANES 8u

/// The buffers of one fused scan: the items, their prefixes within their blocks, the blocks'
/// prefixes within their chunks, and the state (tickets, total, parts, chunk prefixes).
struct FusedScanBuffers {
    const u32* in;
    u32* out;
    u32* blocks_prefix;
    u32* state;
};

__shared__ u32 scan_lanes[SCAN_LANES * WORKGROUP_SIZE];
// Per part, whether this block took its chunk's last ticket.
__shared__ u32 scan_chunk_last[WORKGROUP_SIZE];
__shared__ u32 scan_tile_words[TILE_WORDS];
__shared__ u32 scan_thread_sums[WORKGROUP_SIZE];
__shared__ u32 scan_is_last;

__device__ __forceinline__ u32 scan_load(const u32* p) {
    return *(const volatile u32*)p;
}

__device__ __forceinline__ void scan_store(u32* p, u32 v) {
    *(volatile u32*)p = v;
}

// The last chunk to finish: the chunk totals become their prefixes, then the total and the
// parts' first numbers, then the kernel's bookkeeping.
template <typename Done>
__device__ void scan_finish(
    FusedScanBuffers s, u32 lid, u32 blocks, u32 parts, u32 per_part, Done done) {
    // Acquire every chunk's prefixes and total.
    __threadfence();
    u32 chunks = (blocks - 1u) / SCAN_BLOCK + 1u;
    u32 carry = 0u;
    for (u32 start = 0u; start < chunks; start = start + SCAN_BLOCK) {
        for (u32 k = 0u; k < ITEMS_PER_THREAD; k = k + 1u) {
            u32 i = k * WORKGROUP_SIZE + lid;
            scan_tile_words[slot(i)] =
                i < chunks - start ? scan_load(s.state + scan_chunk_word(start + i)) : 0u;
        }
        __syncthreads();
        u32 tile_total = scan_tile(scan_tile_words, scan_thread_sums, lid);
        for (u32 k = 0u; k < ITEMS_PER_THREAD; k = k + 1u) {
            u32 i = k * WORKGROUP_SIZE + lid;
            if (i < chunks - start) {
                scan_store(s.state + scan_chunk_word(start + i), carry + scan_tile_words[slot(i)]);
            }
        }
        carry = carry + tile_total;
    }
    // The chunk prefixes, stored by other threads of this block, before the parts read them.
    __threadfence();
    __syncthreads();
    if (lid == 0u) {
        scan_store(s.state + 1u, carry);
        scan_store(s.state, 0u);
    } else if (lid < parts) {
        u32 b = lid * per_part;
        u32 chunk = scan_load(s.state + scan_chunk_word(b / SCAN_BLOCK));
        scan_store(s.state + 1u + lid, chunk + scan_load(s.blocks_prefix + b));
    }
    __threadfence();
    __syncthreads();
    done(lid);
}

// The last block of chunk c: the chunk's block totals become their prefixes within the chunk,
// its total goes to its state word, then the scan's ticket.
template <typename Done>
__device__ void scan_finish_chunk(
    FusedScanBuffers s, u32 lid, u32 c, u32 blocks, u32 parts, u32 per_part, Done done) {
    // Acquire every block total of the chunk (all its tickets were taken before ours).
    __threadfence();
    u32 first = c * SCAN_BLOCK;
    u32 n = min(SCAN_BLOCK, blocks - first);
    for (u32 k = 0u; k < ITEMS_PER_THREAD; k = k + 1u) {
        u32 i = k * WORKGROUP_SIZE + lid;
        scan_tile_words[slot(i)] = i < n ? scan_load(s.blocks_prefix + first + i) : 0u;
    }
    __syncthreads();
    u32 chunk_total = scan_tile(scan_tile_words, scan_thread_sums, lid);
    for (u32 k = 0u; k < ITEMS_PER_THREAD; k = k + 1u) {
        u32 i = k * WORKGROUP_SIZE + lid;
        if (i < n) {
            scan_store(s.blocks_prefix + first + i, scan_tile_words[slot(i)]);
        }
    }
    if (lid == 0u) {
        scan_store(s.state + scan_chunk_word(c), chunk_total);
        scan_store(s.state + scan_chunk_word(c) + 1u, 0u);
    }
    // Release the chunk's prefixes and total before the scan's ticket.
    __threadfence();
    __syncthreads();
    if (lid == 0u) {
        u32 chunks = (blocks - 1u) / SCAN_BLOCK + 1u;
        scan_is_last = atomicAdd(s.state, 1u) == chunks - 1u ? 1u : 0u;
    }
    __syncthreads();
    if (scan_is_last != 0u) {
        scan_finish(s, lid, blocks, parts, per_part, done);
    }
}

template <typename Done>
__device__ void fused_scan(
    FusedScanBuffers s, u32 lid, u32 group, u32 parts, u32 part_len, Done done) {
    u32 per_part = scan_blocks_per_part(part_len);
    u32 blocks = parts * per_part;
    u32 j = group * WORKGROUP_SIZE + lid;
    for (u32 base = 0u; base < parts; base = base + SCAN_LANES) {
        u32 own[SCAN_LANES];
#pragma unroll
        for (u32 k = 0u; k < SCAN_LANES; k = k + 1u) {
            own[k] = base + k < parts && j < part_len ? s.in[(base + k) * part_len + j] : 0u;
            scan_lanes[k * WORKGROUP_SIZE + lid] = own[k];
        }
        __syncthreads();
        for (u32 offset = 1u; offset < WORKGROUP_SIZE; offset = offset * 2u) {
            u32 add[SCAN_LANES];
#pragma unroll
            for (u32 k = 0u; k < SCAN_LANES; k = k + 1u) {
                add[k] = lid >= offset ? scan_lanes[k * WORKGROUP_SIZE + lid - offset] : 0u;
            }
            __syncthreads();
#pragma unroll
            for (u32 k = 0u; k < SCAN_LANES; k = k + 1u) {
                scan_lanes[k * WORKGROUP_SIZE + lid] = scan_lanes[k * WORKGROUP_SIZE + lid] + add[k];
            }
            __syncthreads();
        }
        // Inclusive minus own is exclusive, also when the sums wrap; the last thread's
        // inclusive sum is the block's total.
#pragma unroll
        for (u32 k = 0u; k < SCAN_LANES; k = k + 1u) {
            if (base + k < parts) {
                u32 inclusive = scan_lanes[k * WORKGROUP_SIZE + lid];
                if (j < part_len) {
                    s.out[(base + k) * part_len + j] = inclusive - own[k];
                }
                if (lid == WORKGROUP_SIZE - 1u) {
                    scan_store(s.blocks_prefix + (base + k) * per_part + group, inclusive);
                }
            }
        }
        // The lanes are read before the next parts overwrite them.
        __syncthreads();
    }
    // Release this block's totals before its tickets.
    __threadfence();
    __syncthreads();
    if (lid < parts) {
        u32 c = (lid * per_part + group) / SCAN_BLOCK;
        u32 in_chunk = min(SCAN_BLOCK, blocks - c * SCAN_BLOCK);
        u32 ticket = atomicAdd(s.state + scan_chunk_word(c) + 1u, 1u);
        scan_chunk_last[lid] = ticket == in_chunk - 1u ? 1u : 0u;
    }
    __syncthreads();
    for (u32 k = 0u; k < parts; k = k + 1u) {
        if (scan_chunk_last[k] != 0u) {
            scan_finish_chunk(s, lid, (k * per_part + group) / SCAN_BLOCK, blocks, parts, per_part,
                              done);
        }
    }
}
