// #include "common/f32_pair.cuh"

// CUDA twin of shaders/common/dg_rk.wgsl. One SSP Runge-Kutta stage (rk::step) at one DOF j of
// a register, in difference form around the base register B (the first with a_B != 0):
//   R_dst[j] = R_B[j] + (sum_{r != B} a_r (R_r[j] - R_B[j]) + b dt rhs[j])
// (and optionally R_dst2 with a2, b2). Registers R0..R3 are f32 pairs R = hi + lo (regs,
// regs_lo, n DOFs per register); the bracket is an O(dt rhs) increment in plain f32 that goes
// into lo, and lo's part on the grid ulp(hi_B) moves into hi (split_pair). Used by dg_stage
// (one thread per DOF) and by dg_volume with STAGE = 1 (one thread per element, rhs in
// registers).

/// Mirrors GpuStage in src/solver/dg/gpu.rs (64 bytes).
struct Stage {
    float4 a;
    float4 a2;
    float b;
    float b2;
    u32 dst;      // register of hi (the limiter's scratch when the limiter is on)
    u32 dst2;     // 0xffffffff: none
    u32 lo_dst;   // the stage's register: lo is the pair's when dst is it, else 0
    u32 pad0;
    u32 pad1;
    u32 pad2;
};

/// (hi_B, lo_B + increment) of sum_r a_r R_r[j] + b dt f in difference form (see the top):
/// stage_combine before its split (see the twin).
__device__ __forceinline__ float2 stage_sum(
    const float* regs, const float* regs_lo, float4 a, float b, float dt, float f, u32 j,
    u32 n) {
    u32 base = a.x != 0.0f ? 0u : (a.y != 0.0f ? 1u : (a.z != 0.0f ? 2u : 3u));
    float hb = regs[base * n + j];
    float lb = regs_lo[base * n + j];
    // Rounded products and sums (no FMA contraction), as the WGSL evaluates them.
    float increment = __fmul_rn(__fmul_rn(b, dt), f);
    #pragma unroll
    for (int r = 0; r < 4; r = r + 1) {
        if (at(a, r) != 0.0f && (u32)r != base) {
            float d = (regs[(u32)r * n + j] - hb) + (regs_lo[(u32)r * n + j] - lb);
            increment = __fadd_rn(increment, __fmul_rn(at(a, r), d));
        }
    }
    return make_float2(hb, lb + increment);
}

/// hi + lo of sum_r a_r R_r[j] + b dt f in difference form (see the top), f = rhs[j].
__device__ __forceinline__ float2 stage_combine(
    const float* regs, const float* regs_lo, float4 a, float b, float dt, float f, u32 j,
    u32 n) {
    float2 v = stage_sum(regs, regs_lo, a, b, dt, f, j, n);
    return split_pair(v.x, v.y);
}

/// Store stage s's dst (not dst2) at DOF j from stage_sum's (hi_B, lo_B + increment) = v.
__device__ __forceinline__ void stage_store(
    float* regs, float* regs_lo, const Stage& s, float2 v, u32 j, u32 n) {
    float2 pair = split_pair(v.x, v.y);
    regs[s.dst * n + j] = pair.x;
    regs_lo[s.lo_dst * n + j] = s.dst == s.lo_dst ? pair.y : 0.0f;
}

/// Stage s at DOF j with rhs value f: reads every register at j before writing, so in-place
/// stages are safe.
__device__ __forceinline__ void stage_apply(
    float* regs, float* regs_lo, const Stage& s, float dt, float f, u32 j, u32 n) {
    float2 v = stage_sum(regs, regs_lo, s.a, s.b, dt, f, j, n);
    if (s.dst2 != 0xffffffffu) {
        float2 v2 = stage_combine(regs, regs_lo, s.a2, s.b2, dt, f, j, n);
        regs[s.dst2 * n + j] = v2.x;
        regs_lo[s.dst2 * n + j] = v2.y;
    }
    stage_store(regs, regs_lo, s, v, j, n);
}
