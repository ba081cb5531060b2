// CUDA twin of shaders/common/swe_control.wgsl: time and event counters of a two-layer
// shallow-water run, kept on the GPU (mirrors GpuControl in src/solver/swe/gpu.rs). The host
// writes t_end and reads it back only to print or save.
struct Control {
    float t;
    float dt;
    float t_end;
    u32 steps;
    u32 nonhyperbolic;
    u32 fallback;
    u32 chi_clamped;
    u32 clipped;
    u32 max_step_nonhyperbolic;
    u32 max_step_fallback;
    float last_dt;
    // Fused step only: the CFL step (3) of the last fused pass, i.e. of the state before the
    // step that just ended (the paper's lagged dt); 0 before the first pass, < 0 once a cell
    // went NaN/Inf.
    float dt_cfl;
};

// The dt of a fused step (swe_fused_step and swe_fused_clock compute it alike):
// min(dt_cfl, t_end - t); 0 once t >= t_end or before the first pass (no update, only the
// speeds); a negative dt_cfl (blow-up) is passed on.
__device__ __forceinline__ float fused_dt(Control c) {
    if (c.dt_cfl < 0.0f) {
        return c.dt_cfl;
    }
    float remaining = c.t_end - c.t;
    if (remaining > 0.0f) {
        return fminf(c.dt_cfl, remaining);
    }
    return 0.0f;
}

// An f32 as a u32 of the same order (negatives below positives), so a u32 atomicMin gives the
// minimum of floats: x >= 0 sets the sign bit, x < 0 flips every bit.
__device__ __forceinline__ u32 ordered_bits(float x) {
    u32 b = __float_as_uint(x);
    return (b & 0x80000000u) != 0u ? ~b : (b | 0x80000000u);
}

// The inverse of ordered_bits.
__device__ __forceinline__ float from_ordered_bits(u32 u) {
    return __uint_as_float((u & 0x80000000u) != 0u ? (u & 0x7fffffffu) : ~u);
}
