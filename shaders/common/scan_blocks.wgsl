// #include "common/dispatch.wgsl"

// The first launch of the exclusive prefix sum of u32 values (src/runtime/scan.rs), shared by
// scan_blocks and amr_scan (which does the adaptation's bookkeeping in the last workgroup):
// the including kernel defines `fn scan_item(k: u32) -> u32`, the value of item k (input[k],
// or one it computes as it reads it). Each workgroup scans one block of SCAN_BLOCK = 1024
// items (SCAN_THREADS = 256 threads x 4 items) in workgroup memory, output[i] = sum_{block
// start <= k < i} input[k], and stores the block's total in block_sums[b]; the LAST workgroup
// to finish (ticket[0] counts the finished ones) then scans block_sums in place, tile by tile
// with a running carry, so block_sums[b] = sum_{c < b} total_c, and writes the grand total to
// sums[0]. scan_add (or a caller's kernel) adds block_sums[i / SCAN_BLOCK] to output[i]. All
// sums wrap modulo 2^32 like the CPU reference.
//
// Live blocks: the including kernel also defines LIVE_BLOCKS and, when it is not 0,
// `fn scan_set_live_ranges(blocks: u32) -> u32`, which writes the ranges of live blocks (first,
// end), increasing and apart, to live_ranges and returns how many. A block outside them holds
// only items of 0 whose numbers no reader reads (past the counts of a scan sized for the
// buffers' capacity): its workgroup returns at once, without a ticket, and the last workgroup
// scans the live blocks' totals only, one after the other (their offsets are those of the
// whole scan; a block outside keeps the offset it had). With LIVE_BLOCKS 0 every block is live.
//
// Parts: with a stride s = range.color > 0, sums[k] = sum_{i < k s} input[i] for 1 <= k <= (n -
// 1) / s, final after this launch (so a kernel that needs the prefix at a few part boundaries
// need not wait for the offsets to be added): the workgroup holding item k s stores its local
// prefix there, the last workgroup adds the block offset.
//
// No workgroup waits on another (no forward-progress assumption): the workgroups that are not
// last simply finish. Visibility: the block totals, the parts and the ticket are atomics
// (device scope); storageBarrier() is a device-scope acquire-release barrier over storage
// memory (naga emits OpControlBarrier(Workgroup, Device, AcquireRelease | UniformMemory)), so a
// workgroup's total is released before its ticket increment, and the last workgroup, having
// read the final ticket value, acquires every total before it reads them. The last workgroup
// resets the ticket to 0 after it has read it, so a prepared scan can run again (the next
// launch sees the reset: launches are ordered). It hands the total and the first parts to its
// caller's bookkeeping in workgroup memory (book_parts) after a workgroup barrier, where a
// storage barrier made those in `sums` visible (amr_scan 0.2-0.75 us a launch faster on an
// H200, CUDA and Vulkan).

@group(0) @binding(0) var<storage, read> input: array<u32>;
@group(0) @binding(1) var<storage, read_write> output: array<u32>;
@group(0) @binding(2) var<storage, read_write> block_sums: array<atomic<u32>>;
@group(0) @binding(3) var<storage, read_write> sums: array<atomic<u32>>;
@group(0) @binding(4) var<storage, read_write> ticket: array<atomic<u32>>;
@group(1) @binding(0) var<uniform> range: ItemRange;

// Threads of a scan workgroup (SCAN_THREADS in src/runtime/scan.rs; the kernels including this
// declare @workgroup_size(SCAN_THREADS)) and the items each scans: with 64 threads of 16 a
// thread's chain of loads, workgroup memory and stores was four times as long (a one-block
// scan on an H200: Vulkan 10.2 -> 8.5 us).
const SCAN_THREADS: u32 = 256u;
const SCAN_THREADS_LOG2: u32 = 8u;
const ITEMS_PER_THREAD: u32 = 4u;
// One padding word per 32 (the banks): thread t's 4 consecutive items t*4 .. t*4+3 then fall
// in distinct banks across a warp.
const TILE_WORDS: u32 = 1056u;

var<workgroup> tile: array<u32, TILE_WORDS>;
// The thread totals' Hillis-Steele scan in two halves: level l reads half l % 2 and writes the
// other, so a level needs one barrier, not two (one in place had to wait for every read before
// any write: the scans 0.2-0.8 us a launch faster on an H200, CUDA and Vulkan). The last level
// wrote half FINAL_HALF.
const THREAD_SUMS_WORDS: u32 = 512u;
const FINAL_HALF: u32 = 1u - (SCAN_THREADS_LOG2 - 1u) % 2u;
var<workgroup> thread_sums: array<u32, THREAD_SUMS_WORDS>;
var<workgroup> is_last: u32;
// The last workgroup's total (word 0) and parts 1 .. BOOK_PARTS - 1 for its caller's
// bookkeeping, in workgroup memory: read after a workgroup barrier, not a storage barrier (at
// least MAX_COLORS + 1 words, the most amr_scan reads).
const BOOK_PARTS: u32 = 64u;
var<workgroup> book_parts: array<u32, BOOK_PARTS>;
// With LIVE_BLOCKS: the ranges of live blocks (scan_set_live_ranges, by thread 0), how many,
// how many blocks they hold, and whether this one is live.
const MAX_LIVE_RANGES: u32 = 8u;
var<workgroup> live_ranges: array<vec2<u32>, MAX_LIVE_RANGES>;
var<workgroup> live_range_count: u32;
var<workgroup> live_block_count: u32;
var<workgroup> block_live: u32;

// Live block number q (of live_block_count, in order), with LIVE_BLOCKS; else block q.
fn live_block(q: u32) -> u32 {
    if (LIVE_BLOCKS == 0u) {
        return q;
    }
    var rest = q;
    for (var r = 0u; r < live_range_count; r = r + 1u) {
        let size = live_ranges[r].y - live_ranges[r].x;
        if (rest < size) {
            return live_ranges[r].x + rest;
        }
        rest = rest - size;
    }
    return q;
}

fn slot(i: u32) -> u32 {
    return i + i / 32u;
}

// Exclusive scan of the SCAN_BLOCK words of `tile` in place (sequential over each thread's 4
// consecutive items, Hillis-Steele over the 256 thread totals in two halves of thread_sums);
// returns the tile's total to every thread. Call with the tile written and a barrier passed;
// ends with a barrier. A thread's items are read into registers at once and written back once,
// where the loop used to read, overwrite and read them again in workgroup memory (a
// one-workgroup scan on an H200: 1 us less on CUDA, 0.4 on wgpu).
fn scan_tile(lid: u32) -> u32 {
    var items: array<u32, ITEMS_PER_THREAD>;
    // #unroll
    for (var k = 0u; k < ITEMS_PER_THREAD; k = k + 1u) {
        items[k] = tile[slot(lid * ITEMS_PER_THREAD + k)];
    }
    var sum = 0u;
    // #unroll
    for (var k = 0u; k < ITEMS_PER_THREAD; k = k + 1u) {
        let v = items[k];
        items[k] = sum;
        sum = sum + v;
    }
    var inclusive = sum;
    thread_sums[lid] = inclusive;
    workgroupBarrier();
    // #unroll
    for (var level = 0u; level < SCAN_THREADS_LOG2; level = level + 1u) {
        let offset = 1u << level;
        let read_half = (level % 2u) * SCAN_THREADS;
        if (lid >= offset) {
            inclusive = inclusive + thread_sums[read_half + lid - offset];
        }
        thread_sums[SCAN_THREADS - read_half + lid] = inclusive;
        workgroupBarrier();
    }
    // Inclusive minus own is exclusive, also when the sums wrap.
    let before = inclusive - sum;
    let tile_total = thread_sums[FINAL_HALF * SCAN_THREADS + SCAN_THREADS - 1u];
    // #unroll
    for (var k = 0u; k < ITEMS_PER_THREAD; k = k + 1u) {
        tile[slot(lid * ITEMS_PER_THREAD + k)] = items[k] + before;
    }
    workgroupBarrier();
    return tile_total;
}

// Block `block` of the scan, by its workgroup's thread `lid`; true in the last workgroup, after
// the block offsets, the parts and the total are stored, and the total and the first parts are
// in book_parts for the whole workgroup.
fn scan_blocks_run(lid: u32, block: u32) -> bool {
    let n = range.count;
    let stride = range.color;
    // ceil(n / SCAN_BLOCK) without overflow, at least one block (n = 0 writes sums[0] = 0).
    let blocks = select((n - 1u) / SCAN_BLOCK + 1u, 1u, n == 0u);
    // Workgroups past the last block (a 2D grid rounds up) take no ticket.
    if (block >= blocks) {
        return false;
    }
    // A block outside the live ranges returns before it reads anything.
    if (LIVE_BLOCKS != 0u) {
        if (lid == 0u) {
            let count = scan_set_live_ranges(blocks);
            var live = 0u;
            var held = 0u;
            for (var r = 0u; r < count; r = r + 1u) {
                let range_blocks = live_ranges[r];
                if (block >= range_blocks.x && block < range_blocks.y) {
                    live = 1u;
                }
                held = held + range_blocks.y - range_blocks.x;
            }
            live_range_count = count;
            live_block_count = held;
            block_live = live;
        }
        if (workgroupUniformLoad(&block_live) == 0u) {
            return false;
        }
    }
    let base = block * SCAN_BLOCK;
    // Coalesced: thread t moves items t, t + 256, ...; the scan reads 4 consecutive ones.
    // #unroll
    for (var k = 0u; k < ITEMS_PER_THREAD; k = k + 1u) {
        let i = k * SCAN_THREADS + lid;
        var v = 0u;
        if (i < n - base) {
            v = scan_item(base + i);
        }
        tile[slot(i)] = v;
    }
    workgroupBarrier();
    let block_total = scan_tile(lid);
    // #unroll
    for (var k = 0u; k < ITEMS_PER_THREAD; k = k + 1u) {
        let i = k * SCAN_THREADS + lid;
        if (i < n - base) {
            output[base + i] = tile[slot(i)];
        }
    }
    // The parts whose items k s lie in this block, a thread each, apart from the stores above:
    // an atomic store among them kept the loop's iterations apart (2 us of a one-workgroup scan
    // on Vulkan on an H200).
    if (stride != 0u && n > base) {
        let last_item = base + min(n - base, SCAN_BLOCK) - 1u;
        let first_item = max(base, 1u);
        let first_part = first_item / stride + select(1u, 0u, first_item % stride == 0u);
        for (var k = first_part + lid; k <= last_item / stride; k = k + SCAN_THREADS) {
            atomicStore(&sums[k], tile[slot(k * stride - base)]);
        }
    }
    if (lid == 0u) {
        atomicStore(&block_sums[block], block_total);
    }
    // Release this block's total and every thread's parts before thread 0's ticket (one
    // barrier for both: a second one, between the parts and the total, cost the scans 0.3-0.9
    // us a launch on Vulkan on an H200).
    storageBarrier();
    if (lid == 0u) {
        let tickets = select(blocks, live_block_count, LIVE_BLOCKS != 0u);
        is_last = select(0u, 1u, atomicAdd(&ticket[0], 1u) == tickets - 1u);
    }
    if (workgroupUniformLoad(&is_last) == 0u) {
        return false;
    }
    // Acquire every live block's total (all their tickets were taken before ours).
    storageBarrier();
    var carry = 0u;
    var scanned = blocks;
    if (LIVE_BLOCKS != 0u) {
        scanned = workgroupUniformLoad(&live_block_count);
    }
    for (var start = 0u; start < scanned; start = start + SCAN_BLOCK) {
        // The totals' atomic loads all first, then the tile; the scanned tile read into
        // registers before the atomic stores (a scan of 2^20 items on an H200, wgpu: 14.8 ->
        // 12.2 us with 64 threads of 16 items).
        var totals: array<u32, ITEMS_PER_THREAD>;
        // #unroll
        for (var k = 0u; k < ITEMS_PER_THREAD; k = k + 1u) {
            let i = k * SCAN_THREADS + lid;
            totals[k] = 0u;
            if (i < scanned - start) {
                totals[k] = atomicLoad(&block_sums[live_block(start + i)]);
            }
        }
        // #unroll
        for (var k = 0u; k < ITEMS_PER_THREAD; k = k + 1u) {
            tile[slot(k * SCAN_THREADS + lid)] = totals[k];
        }
        workgroupBarrier();
        let tile_total = scan_tile(lid);
        // #unroll
        for (var k = 0u; k < ITEMS_PER_THREAD; k = k + 1u) {
            totals[k] = tile[slot(k * SCAN_THREADS + lid)];
        }
        // #unroll
        for (var k = 0u; k < ITEMS_PER_THREAD; k = k + 1u) {
            let i = k * SCAN_THREADS + lid;
            if (i < scanned - start) {
                atomicStore(&block_sums[live_block(start + i)], carry + totals[k]);
            }
        }
        carry = carry + tile_total;
    }
    // The scanned totals, stored by other threads of this workgroup, before the parts read them
    // (a part in a block outside the live ranges, which no reader reads, takes a stale offset).
    storageBarrier();
    if (stride != 0u && n != 0u) {
        for (var k = 1u + lid; k <= (n - 1u) / stride; k = k + SCAN_THREADS) {
            let offset = atomicLoad(&block_sums[k * stride / SCAN_BLOCK]);
            let part = atomicLoad(&sums[k]) + offset;
            atomicStore(&sums[k], part);
            if (k < BOOK_PARTS) {
                book_parts[k] = part;
            }
        }
    }
    if (lid == 0u) {
        atomicStore(&sums[0], carry);
        atomicStore(&ticket[0], 0u);
        book_parts[0] = carry;
    }
    // The total and the parts, from other threads of this workgroup, before the caller's
    // bookkeeping reads them (book_parts).
    workgroupBarrier();
    return true;
}
