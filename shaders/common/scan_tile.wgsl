// #include "common/dispatch.wgsl"

// The exclusive scan of one tile of SCAN_BLOCK words in workgroup memory (64 threads x 16
// items): scan_blocks' blocks and block totals, and the chunks of block totals of the scans
// fused into the kernels that produce their items (common/scan_fused.wgsl).

const ITEMS_PER_THREAD: u32 = 16u;
// One padding word per 32 (the banks): thread t's 16 consecutive items t*16 .. t*16+15 then
// fall in distinct banks across a warp.
const TILE_WORDS: u32 = 1056u;

var<workgroup> tile: array<u32, TILE_WORDS>;
var<workgroup> thread_sums: array<u32, WORKGROUP_SIZE>;
var<workgroup> is_last: u32;

fn slot(i: u32) -> u32 {
    return i + i / 32u;
}

// Exclusive scan of the SCAN_BLOCK words of `tile` in place (sequential over each thread's 16
// consecutive items, Hillis-Steele over the 64 thread totals); returns the tile's total to
// every thread. Call with the tile written and a barrier passed; ends with a barrier.
fn scan_tile(lid: u32) -> u32 {
    var sum = 0u;
    // #unroll
    for (var k = 0u; k < ITEMS_PER_THREAD; k = k + 1u) {
        let j = slot(lid * ITEMS_PER_THREAD + k);
        let v = tile[j];
        tile[j] = sum;
        sum = sum + v;
    }
    thread_sums[lid] = sum;
    workgroupBarrier();
    for (var offset = 1u; offset < WORKGROUP_SIZE; offset = offset * 2u) {
        var add = 0u;
        if (lid >= offset) {
            add = thread_sums[lid - offset];
        }
        workgroupBarrier();
        thread_sums[lid] = thread_sums[lid] + add;
        workgroupBarrier();
    }
    // Inclusive minus own is exclusive, also when the sums wrap.
    let before = thread_sums[lid] - sum;
    let tile_total = thread_sums[WORKGROUP_SIZE - 1u];
    // #unroll
    for (var k = 0u; k < ITEMS_PER_THREAD; k = k + 1u) {
        let j = slot(lid * ITEMS_PER_THREAD + k);
        tile[j] = tile[j] + before;
    }
    workgroupBarrier();
    return tile_total;
}
