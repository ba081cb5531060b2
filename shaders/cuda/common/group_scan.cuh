// CUDA twin of shaders/common/group_scan.wgsl: the exclusive prefix sum of one uint4 per thread
// over a block of WIDE_WORKGROUP_SIZE = 256 threads (common/dispatch.cuh), four independent
// sums at once, and the block's total. The same sums as the WGSL twin's Hillis-Steele, by warp
// shuffles here: each warp scans its 32 values in registers, the 8 warp totals go through
// shared memory, and each thread adds those of the warps before its own (two barriers where
// the WGSL twin, without shuffles, needs one a level). Call from every thread of the block; it
// ends with a barrier.

#define GROUP_SCAN_WARPS (WIDE_WORKGROUP_SIZE / 32u)

__shared__ uint4 group_sums[GROUP_SCAN_WARPS];

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
    u32 lane = lid % 32u;
    u32 warp = lid / 32u;
    uint4 inclusive = value;
#pragma unroll
    for (u32 offset = 1u; offset < 32u; offset = offset * 2u) {
        uint4 up = make_uint4(__shfl_up_sync(0xffffffffu, inclusive.x, offset),
                              __shfl_up_sync(0xffffffffu, inclusive.y, offset),
                              __shfl_up_sync(0xffffffffu, inclusive.z, offset),
                              __shfl_up_sync(0xffffffffu, inclusive.w, offset));
        if (lane >= offset) {
            inclusive = add4(inclusive, up);
        }
    }
    if (lane == 31u) {
        group_sums[warp] = inclusive;
    }
    __syncthreads();
    uint4 warps_before = make_uint4(0u, 0u, 0u, 0u);
    uint4 total = make_uint4(0u, 0u, 0u, 0u);
#pragma unroll
    for (u32 w = 0u; w < GROUP_SCAN_WARPS; w = w + 1u) {
        uint4 sum = group_sums[w];
        if (w < warp) {
            warps_before = add4(warps_before, sum);
        }
        total = add4(total, sum);
    }
    // Every thread has read the warp totals before a next call writes them again.
    __syncthreads();
    GroupScan scan;
    scan.before = add4(warps_before, sub4(inclusive, value));
    scan.total = total;
    return scan;
}

// Lane k (0 to 3) of a uint4.
__device__ __forceinline__ u32 lane4(uint4 v, u32 k) {
    return k == 0u ? v.x : (k == 1u ? v.y : (k == 2u ? v.z : v.w));
}
