// CUDA twin of shaders/common/f32_pair.wgsl. Numbers kept as f32 pairs hi + lo (the DG
// registers in dg_stage, the DG clock in dg_time): a sum goes into lo, and lo's part on the
// grid ulp(hi) moves into hi exactly.

/// x rounded to the nearest multiple of 2^k (ties away from zero) with integer operations on
/// its bits, so the remainder x - t is exact.
__device__ __forceinline__ float round_to(float x, int k) {
    u32 bits = __float_as_uint(x);
    int clear = k - (max((int)((bits >> 23) & 0xffu), 1) - 150);
    if (clear <= 0) {
        return x;
    }
    if (clear > 24) {
        return 0.0f;
    }
    if (clear == 24) {
        return __uint_as_float((bits & 0x80000000u) | ((u32)(k + 127) << 23));
    }
    return __uint_as_float((bits + (1u << (u32)(clear - 1))) & ~((1u << (u32)clear) - 1u));
}

/// The pair (hb + t, lo - t) with t = lo rounded to the grid ulp(hb) = 2^(E(hb) - 23).
__device__ __forceinline__ float2 split_pair(float hb, float lo) {
    int e = max((int)((__float_as_uint(hb) >> 23) & 0xffu), 1) - 127;
    float t = round_to(lo, e - 23);
    return make_float2(hb + t, lo - t);
}
