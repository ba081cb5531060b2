// CUDA twin of shaders/common/group_scan.wgsl: the exclusive prefix sum of one uint4 per thread
// over a block of WIDE_WORKGROUP_SIZE = 256 threads (common/dispatch.cuh), four independent
// sums at once, and the block's total: Hillis-Steele in two halves of group_sums, one barrier a
// level, as the WGSL twin. Call from every thread of the block; it ends with a barrier.

#define GROUP_SCAN_LOG2 8u
#define GROUP_SCAN_FINAL_HALF (1u - (GROUP_SCAN_LOG2 - 1u) % 2u)

__shared__ uint4 group_sums[2u * WIDE_WORKGROUP_SIZE];

struct GroupScan {
    uint4 before;
    uint4 total;
};

__device__ __forceinline__ uint4 add4(uint4 a, uint4 b) {
    return make_uint4(a.x + b.x, a.y + b.y, a.z + b.z, a.w + b.w);
}

__device__ __forceinline__ uint4 sub4(uint4 a, uint4 b) {
    return make_uint4(a.x - b.x, a.y - b.y, a.z - b.z, a.w - b.w);
}

__device__ GroupScan group_scan(u32 lid, uint4 value) {
    uint4 inclusive = value;
    group_sums[lid] = inclusive;
    __syncthreads();
#pragma unroll
    for (u32 level = 0u; level < GROUP_SCAN_LOG2; level = level + 1u) {
        u32 offset = 1u << level;
        u32 read_half = (level % 2u) * WIDE_WORKGROUP_SIZE;
        if (lid >= offset) {
            inclusive = add4(inclusive, group_sums[read_half + lid - offset]);
        }
        group_sums[WIDE_WORKGROUP_SIZE - read_half + lid] = inclusive;
        __syncthreads();
    }
    uint4 total =
        group_sums[GROUP_SCAN_FINAL_HALF * WIDE_WORKGROUP_SIZE + WIDE_WORKGROUP_SIZE - 1u];
    // Every thread has read the total before a next call writes group_sums again.
    __syncthreads();
    GroupScan scan;
    scan.before = sub4(inclusive, value);
    scan.total = total;
    return scan;
}

// Lane k (0 to 3) of a uint4.
__device__ __forceinline__ u32 lane4(uint4 v, u32 k) {
    return k == 0u ? v.x : (k == 1u ? v.y : (k == 2u ? v.z : v.w));
}
