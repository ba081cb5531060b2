// #include "common/dispatch.cuh"
// #include "common/f32_pair.cuh"

// CUDA twin of shaders/dg_stage.wgsl. One SSP Runge-Kutta stage (rk::step), one thread per
// DOF j of a register, in difference form around the base register B (the first with
// a_B != 0; every combination is convex):
//   R_dst[j] = R_B[j] + (sum_{r != B} a_r (R_r[j] - R_B[j]) + b dt rhs[j])
// (and optionally R_dst2 with a2, b2). Registers R0..R3 are f32 pairs R = hi + lo (regs,
// regs_lo); the bracket is an O(dt rhs) increment in plain f32 that goes into lo, and lo's
// part on the grid ulp(hi_B) moves into hi (split_pair), so neither the coefficients' f32
// rounding nor increments below half an ulp of hi are lost. Each thread reads every register
// at j before writing, so in-place stages are safe. dt = 0 (the run reached t_end) leaves all
// registers untouched. range: count the DOFs per register, color the stage index.

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

/// hi + lo of sum_r a_r R_r[j] + b dt rhs[j] in difference form (see the top).
__device__ __forceinline__ float2 combine(
    const float* regs, const float* __restrict__ rhs, const float* regs_lo, float4 a, float b,
    float dt, u32 j, u32 n) {
    u32 base = a.x != 0.0f ? 0u : (a.y != 0.0f ? 1u : (a.z != 0.0f ? 2u : 3u));
    float hb = regs[base * n + j];
    float lb = regs_lo[base * n + j];
    // Rounded products and sums (no FMA contraction), as the WGSL evaluates them.
    float increment = __fmul_rn(__fmul_rn(b, dt), rhs[j]);
    #pragma unroll
    for (int r = 0; r < 4; r = r + 1) {
        if (at(a, r) != 0.0f && (u32)r != base) {
            float d = (regs[(u32)r * n + j] - hb) + (regs_lo[(u32)r * n + j] - lb);
            increment = __fadd_rn(increment, __fmul_rn(at(a, r), d));
        }
    }
    return split_pair(hb, lb + increment);
}

extern "C" __global__ void dg_stage(
    float* regs,
    const float* __restrict__ rhs,
    const float* __restrict__ clock,
    const Stage* __restrict__ stages,
    float* regs_lo,
    ItemRange range) {
    u32 j = linear_index();
    u32 n = range.count;
    float dt = clock[1];
    if (j >= n || dt == 0.0f) {
        return;
    }
    Stage s = stages[range.color];
    float2 v = combine(regs, rhs, regs_lo, s.a, s.b, dt, j, n);
    if (s.dst2 != 0xffffffffu) {
        float2 v2 = combine(regs, rhs, regs_lo, s.a2, s.b2, dt, j, n);
        regs[s.dst2 * n + j] = v2.x;
        regs_lo[s.dst2 * n + j] = v2.y;
    }
    regs[s.dst * n + j] = v.x;
    regs_lo[s.lo_dst * n + j] = s.dst == s.lo_dst ? v.y : 0.0f;
}
