// #include "common/dispatch.wgsl"
// #include "common/scan_tile.wgsl"

// The exclusive scan of the items a kernel has just produced, fused into that kernel's launch
// (FusedScan in src/runtime/scan.rs): no launch of the scan's own before its consumer, and no
// launch after it to add block offsets; the consumer adds them as it reads a number
// (common/scan_numbers.wgsl). Items come in `parts` parts of `part_len` each, item j of part k
// at scan_in[k part_len + j]; the scan runs over the parts one after another, so the number of
// item (k, j) is sum of every earlier part's items plus part k's items before j.
//
// Workgroup g holds items j = 64 g + lid of every part: block b = k B + g of part k, B =
// scan_blocks_per_part(part_len). The workgroup scans its blocks in workgroup memory (up to
// SCAN_LANES parts at a time), writes each item's prefix within its block to scan_out at the
// item's index and the block's total to scan_blocks_prefix[b], and takes a ticket of the
// block's chunk (SCAN_BLOCK blocks, ticket in scan_state). The LAST workgroup to take a
// chunk's ticket scans the chunk's totals in place (scan_blocks_prefix[b] = the items of the
// chunk's blocks before b), stores the chunk's total at its state word and takes the scan's
// ticket (scan_state[0]); the last of those scans the chunk totals in place (their prefixes),
// stores the total at scan_state[1] and part k's first number at scan_state[1 + k], and calls
// the kernel's `scan_done(lid)` (bookkeeping on the counts: its whole workgroup, after the
// scan's words are stored). So item (k, j)'s number is scan_out[k part_len + j] +
// scan_blocks_prefix[b] + scan_state[scan_chunk_word(b / SCAN_BLOCK)].
//
// No workgroup waits on another (no forward-progress assumption): those not last finish.
// Visibility as in scan_blocks.wgsl: totals, prefixes and tickets are device-scope atomics, and
// storageBarrier() releases a workgroup's stores before its tickets and acquires the others'
// after the last ticket. Each last arriver resets its ticket, so a prepared plan runs again.
//
// The kernel declares scan_in (its items, read), scan_out: array<u32>, scan_blocks_prefix and
// scan_state: array<atomic<u32>> (FusedScan's buffers), and fn scan_done(lid: u32); it calls
// fused_scan in uniform control flow (every thread of a workgroup whose block exists, items past
// part_len read as 0), after writing its own items.

const SCAN_LANES: u32 = 8u;

var<workgroup> scan_lanes: array<u32, SCAN_LANES * WORKGROUP_SIZE>;
// Per part, whether this workgroup took its chunk's last ticket.
var<workgroup> scan_chunk_last: array<u32, WORKGROUP_SIZE>;

fn fused_scan(lid: u32, group: u32, parts: u32, part_len: u32) {
    let per_part = scan_blocks_per_part(part_len);
    let blocks = parts * per_part;
    let j = group * WORKGROUP_SIZE + lid;
    for (var base = 0u; base < parts; base = base + SCAN_LANES) {
        var own: array<u32, SCAN_LANES>;
        var add: array<u32, SCAN_LANES>;
        // #unroll
        for (var k = 0u; k < SCAN_LANES; k = k + 1u) {
            own[k] = 0u;
            if (base + k < parts && j < part_len) {
                own[k] = scan_in[(base + k) * part_len + j];
            }
            scan_lanes[k * WORKGROUP_SIZE + lid] = own[k];
        }
        workgroupBarrier();
        for (var offset = 1u; offset < WORKGROUP_SIZE; offset = offset * 2u) {
            // #unroll
            for (var k = 0u; k < SCAN_LANES; k = k + 1u) {
                add[k] = 0u;
                if (lid >= offset) {
                    add[k] = scan_lanes[k * WORKGROUP_SIZE + lid - offset];
                }
            }
            workgroupBarrier();
            // #unroll
            for (var k = 0u; k < SCAN_LANES; k = k + 1u) {
                scan_lanes[k * WORKGROUP_SIZE + lid] = scan_lanes[k * WORKGROUP_SIZE + lid] + add[k];
            }
            workgroupBarrier();
        }
        // Inclusive minus own is exclusive, also when the sums wrap; the last thread's
        // inclusive sum is the block's total.
        // #unroll
        for (var k = 0u; k < SCAN_LANES; k = k + 1u) {
            if (base + k < parts) {
                let inclusive = scan_lanes[k * WORKGROUP_SIZE + lid];
                if (j < part_len) {
                    scan_out[(base + k) * part_len + j] = inclusive - own[k];
                }
                if (lid == WORKGROUP_SIZE - 1u) {
                    atomicStore(&scan_blocks_prefix[(base + k) * per_part + group], inclusive);
                }
            }
        }
        // The lanes are read before the next parts overwrite them.
        workgroupBarrier();
    }
    // Release this workgroup's totals before its tickets.
    storageBarrier();
    if (lid < parts) {
        let c = (lid * per_part + group) / SCAN_BLOCK;
        let in_chunk = min(SCAN_BLOCK, blocks - c * SCAN_BLOCK);
        let ticket = atomicAdd(&scan_state[scan_chunk_word(c) + 1u], 1u);
        scan_chunk_last[lid] = select(0u, 1u, ticket == in_chunk - 1u);
    }
    for (var k = 0u; k < parts; k = k + 1u) {
        if (workgroupUniformLoad(&scan_chunk_last[k]) != 0u) {
            scan_finish_chunk(lid, (k * per_part + group) / SCAN_BLOCK, blocks, parts, per_part);
        }
    }
}

// The last workgroup of chunk c: the chunk's block totals become their prefixes within the
// chunk, its total goes to its state word, then the scan's ticket.
fn scan_finish_chunk(lid: u32, c: u32, blocks: u32, parts: u32, per_part: u32) {
    // Acquire every block total of the chunk (all its tickets were taken before ours).
    storageBarrier();
    let first = c * SCAN_BLOCK;
    let n = min(SCAN_BLOCK, blocks - first);
    // #unroll
    for (var k = 0u; k < ITEMS_PER_THREAD; k = k + 1u) {
        let i = k * WORKGROUP_SIZE + lid;
        var v = 0u;
        if (i < n) {
            v = atomicLoad(&scan_blocks_prefix[first + i]);
        }
        tile[slot(i)] = v;
    }
    workgroupBarrier();
    let chunk_total = scan_tile(lid);
    // #unroll
    for (var k = 0u; k < ITEMS_PER_THREAD; k = k + 1u) {
        let i = k * WORKGROUP_SIZE + lid;
        if (i < n) {
            atomicStore(&scan_blocks_prefix[first + i], tile[slot(i)]);
        }
    }
    if (lid == 0u) {
        atomicStore(&scan_state[scan_chunk_word(c)], chunk_total);
        atomicStore(&scan_state[scan_chunk_word(c) + 1u], 0u);
    }
    // Release the chunk's prefixes and total before the scan's ticket.
    storageBarrier();
    if (lid == 0u) {
        let chunks = (blocks - 1u) / SCAN_BLOCK + 1u;
        is_last = select(0u, 1u, atomicAdd(&scan_state[0], 1u) == chunks - 1u);
    }
    if (workgroupUniformLoad(&is_last) != 0u) {
        scan_finish(lid, blocks, parts, per_part);
    }
}

// The last chunk to finish: the chunk totals become their prefixes, then the total and the
// parts' first numbers, then the kernel's bookkeeping.
fn scan_finish(lid: u32, blocks: u32, parts: u32, per_part: u32) {
    // Acquire every chunk's prefixes and total.
    storageBarrier();
    let chunks = (blocks - 1u) / SCAN_BLOCK + 1u;
    var carry = 0u;
    for (var start = 0u; start < chunks; start = start + SCAN_BLOCK) {
        // #unroll
        for (var k = 0u; k < ITEMS_PER_THREAD; k = k + 1u) {
            let i = k * WORKGROUP_SIZE + lid;
            var v = 0u;
            if (i < chunks - start) {
                v = atomicLoad(&scan_state[scan_chunk_word(start + i)]);
            }
            tile[slot(i)] = v;
        }
        workgroupBarrier();
        let tile_total = scan_tile(lid);
        // #unroll
        for (var k = 0u; k < ITEMS_PER_THREAD; k = k + 1u) {
            let i = k * WORKGROUP_SIZE + lid;
            if (i < chunks - start) {
                atomicStore(&scan_state[scan_chunk_word(start + i)], carry + tile[slot(i)]);
            }
        }
        carry = carry + tile_total;
    }
    // The chunk prefixes, stored by other threads of this workgroup, before the parts read them.
    storageBarrier();
    if (lid == 0u) {
        atomicStore(&scan_state[1], carry);
        atomicStore(&scan_state[0], 0u);
    } else if (lid < parts) {
        let b = lid * per_part;
        let chunk = atomicLoad(&scan_state[scan_chunk_word(b / SCAN_BLOCK)]);
        atomicStore(&scan_state[1u + lid], chunk + atomicLoad(&scan_blocks_prefix[b]));
    }
    storageBarrier();
    scan_done(lid);
}
