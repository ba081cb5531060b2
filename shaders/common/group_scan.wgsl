// The exclusive prefix sum of one vec4<u32> per thread over a workgroup of
// WIDE_WORKGROUP_SIZE = 256 threads (common/dispatch.wgsl), four independent sums at once:
// before_t = sum_{u < t} value_u, lane by lane, and the workgroup's total. Hillis-Steele over
// the thread values in two halves of group_sums (level l reads half l % 2 and writes the
// other, one barrier a level, as common/scan_blocks.wgsl's scan_tile). Used where a kernel
// numbers its own items instead of a scan launch after it (amr_geometry and amr_faces with the
// compaction in order). Call from uniform control flow; it ends with a barrier, so a next call
// may follow at once.

const GROUP_SCAN_LOG2: u32 = 8u;
// The half the last level writes (level GROUP_SCAN_LOG2 - 1 reads half (log2 - 1) % 2).
const GROUP_SCAN_FINAL_HALF: u32 = 1u - (GROUP_SCAN_LOG2 - 1u) % 2u;

var<workgroup> group_sums: array<vec4<u32>, 512>;

struct GroupScan {
    before: vec4<u32>,
    total: vec4<u32>,
}

fn group_scan(lid: u32, value: vec4<u32>) -> GroupScan {
    var inclusive = value;
    group_sums[lid] = inclusive;
    workgroupBarrier();
    // #unroll
    for (var level = 0u; level < GROUP_SCAN_LOG2; level = level + 1u) {
        let offset = 1u << level;
        let read_half = (level % 2u) * WIDE_WORKGROUP_SIZE;
        if (lid >= offset) {
            inclusive = inclusive + group_sums[read_half + lid - offset];
        }
        group_sums[WIDE_WORKGROUP_SIZE - read_half + lid] = inclusive;
        workgroupBarrier();
    }
    let total = group_sums[GROUP_SCAN_FINAL_HALF * WIDE_WORKGROUP_SIZE + WIDE_WORKGROUP_SIZE - 1u];
    // Every thread has read the total before a next call writes group_sums again.
    workgroupBarrier();
    return GroupScan(inclusive - value, total);
}
