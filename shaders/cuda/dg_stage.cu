// #include "common/dispatch.cuh"

// CUDA twin of shaders/dg_stage.wgsl. One SSP Runge-Kutta stage (rk::step), one thread per
// DOF j of a register:
//   R_dst[j] = sum_r a_r R_r[j] + b dt rhs[j]   (and optionally R_dst2 with a2, b2).
// Each thread reads every register at j before writing, so in-place stages are safe. dt = 0
// (the run reached t_end) leaves all registers untouched. range: count the DOFs per register,
// color the stage index.

/// Mirrors GpuStage in src/solver/dg/gpu.rs (48 bytes).
struct Stage {
    float4 a;
    float4 a2;
    float b;
    float b2;
    u32 dst;
    u32 dst2;   // 0xffffffff: none
};

__device__ __forceinline__ float combine(
    const float* regs, const float* __restrict__ rhs, float4 a, float b, float dt, u32 j, u32 n) {
    float v = b * dt * rhs[j];
    #pragma unroll
    for (int r = 0; r < 4; r = r + 1) {
        if (at(a, r) != 0.0f) {
            v = v + at(a, r) * regs[(u32)r * n + j];
        }
    }
    return v;
}

extern "C" __global__ void dg_stage(
    float* regs,
    const float* __restrict__ rhs,
    const float* __restrict__ clock,
    const Stage* __restrict__ stages,
    ItemRange range) {
    u32 j = linear_index();
    u32 n = range.count;
    float dt = clock[1];
    if (j >= n || dt == 0.0f) {
        return;
    }
    Stage s = stages[range.color];
    float v = combine(regs, rhs, s.a, s.b, dt, j, n);
    if (s.dst2 != 0xffffffffu) {
        regs[s.dst2 * n + j] = combine(regs, rhs, s.a2, s.b2, dt, j, n);
    }
    regs[s.dst * n + j] = v;
}
