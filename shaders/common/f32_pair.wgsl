// Numbers kept as f32 pairs hi + lo (the DG registers in dg_stage, the DG clock in dg_time):
// a sum goes into lo, and lo's part on the grid ulp(hi) moves into hi exactly.

// x rounded to the nearest multiple of 2^k (ties away from zero) with integer operations on its
// bits (adding half the unit carries into the exponent where it must), so the remainder x - t is
// exact and no compiler algebra can fold it away (Vulkan compilers may simplify (a + b) - a to
// b, which breaks TwoSum-style compensation).
fn round_to(x: f32, k: i32) -> f32 {
    let bits = bitcast<u32>(x);
    let clear = k - (max(i32((bits >> 23u) & 0xffu), 1) - 150);
    if (clear <= 0) {
        return x;
    }
    if (clear > 24) {
        return 0.0;
    }
    if (clear == 24) {
        // 2^(k-1) <= |x| < 2^k: +-2^k.
        return bitcast<f32>((bits & 0x80000000u) | (u32(k + 127) << 23u));
    }
    return bitcast<f32>((bits + (1u << u32(clear - 1))) & ~((1u << u32(clear)) - 1u));
}

// The pair (hb + t, lo - t) with t = lo rounded to the grid ulp(hb) = 2^(E(hb) - 23): lo - t is
// exact, hb + t too unless it crosses a binade upward (then it rounds once, by half an ulp),
// and hi stays the nearest f32 to hi + lo (|lo| <= ulp(hb) / 2) for the kernels that read hi.
fn split_pair(hb: f32, lo: f32) -> vec2<f32> {
    let e = max(i32((bitcast<u32>(hb) >> 23u) & 0xffu), 1) - 127;
    let t = round_to(lo, e - 23);
    return vec2<f32>(hb + t, lo - t);
}
