// #include "common/dispatch.wgsl"

// Reading a scan fused into the kernel that produced its items (common/scan_fused.wgsl), in a
// later launch: the kernel declares that scan's scan_out: array<u32> and scan_blocks_prefix and
// scan_state: array<atomic<u32>> as the producer does (read_write), so that a kernel may both
// produce a scan in one phase and read it in the next.

// The exclusive prefix of item j of part `part` (parts of part_len items): its prefix within
// its block, plus the block's within its chunk, plus the chunk's.
fn scan_number(part: u32, j: u32, part_len: u32) -> u32 {
    let b = part * scan_blocks_per_part(part_len) + j / WORKGROUP_SIZE;
    return scan_out[part * part_len + j] + atomicLoad(&scan_blocks_prefix[b])
        + atomicLoad(&scan_state[scan_chunk_word(b / SCAN_BLOCK)]);
}

// The number of part k's first item (0 for part 0), the sum of the parts before it.
fn scan_part_start(k: u32) -> u32 {
    if (k == 0u) {
        return 0u;
    }
    return atomicLoad(&scan_state[1u + k]);
}

// The sum of every item of every part.
fn scan_total() -> u32 {
    return atomicLoad(&scan_state[1]);
}
