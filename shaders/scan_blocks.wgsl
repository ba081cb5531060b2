// #include "common/dispatch.wgsl"

// Exclusive prefix sum of u32 values within blocks of SCAN_BLOCK = 256 items (64 threads x 4
// consecutive items): output[i] = sum_{block start <= k < i} input[k], and block_sums[b] = the
// block's total. The host scans block_sums the same way (recursively) and adds the block
// offsets back with scan_add. Used for worklist compaction without atomics.

@group(0) @binding(0) var<storage, read> input: array<u32>;
@group(0) @binding(1) var<storage, read_write> output: array<u32>;
@group(0) @binding(2) var<storage, read_write> block_sums: array<u32>;
@group(1) @binding(0) var<uniform> range: ItemRange;

const ITEMS_PER_THREAD: u32 = 4u;
const SCAN_BLOCK: u32 = 256u;

var<workgroup> thread_sums: array<u32, WORKGROUP_SIZE>;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(
    @builtin(local_invocation_id) lid: vec3<u32>,
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
) {
    let block = wid.x + wid.y * nwg.x;
    let base = block * SCAN_BLOCK + lid.x * ITEMS_PER_THREAD;
    var local_prefix: array<u32, 4>;
    var total = 0u;
    for (var k = 0u; k < ITEMS_PER_THREAD; k = k + 1u) {
        let idx = base + k;
        local_prefix[k] = total;
        if (idx < range.count) {
            total = total + input[idx];
        }
    }
    thread_sums[lid.x] = total;
    workgroupBarrier();
    // Hillis-Steele inclusive scan of the 64 per-thread totals.
    for (var offset = 1u; offset < WORKGROUP_SIZE; offset = offset * 2u) {
        var add = 0u;
        if (lid.x >= offset) {
            add = thread_sums[lid.x - offset];
        }
        workgroupBarrier();
        thread_sums[lid.x] = thread_sums[lid.x] + add;
        workgroupBarrier();
    }
    let thread_prefix = thread_sums[lid.x] - total;
    for (var k = 0u; k < ITEMS_PER_THREAD; k = k + 1u) {
        let idx = base + k;
        if (idx < range.count) {
            output[idx] = thread_prefix + local_prefix[k];
        }
    }
    if (lid.x == WORKGROUP_SIZE - 1u) {
        block_sums[block] = thread_sums[lid.x];
    }
}
