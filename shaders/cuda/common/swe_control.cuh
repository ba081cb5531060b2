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
    // Fused step only: steps rejected (their dt above the Courant limit of the state they
    // updated) and taken again.
    u32 rejected;
    // The depth stop (common/swe_cell.cuh), copied from counters[4..8] by the time and clock
    // kernels: the lowest-numbered cell whose layer depth fell below DEPTH_STOP before
    // clipping (NO_CELL while none did), the step that did it, the time that step reached,
    // and the lowest such depth. Once set, no step is taken.
    u32 stop_cell;
    u32 stop_step;
    float stop_t;
    float stop_depth;
};

// No cell: the depth stop has not fired (Control.stop_cell, counters[4]).
#define NO_CELL 0xffffffffu

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

// The time after a fused step of dt (swe_fused_clock advances the clock to it): t_end when the
// step was clamped to it, t + dt otherwise.
__device__ __forceinline__ float fused_t_after(Control c, float dt) {
    if (c.dt_cfl >= c.t_end - c.t) {
        return c.t_end;
    }
    return c.t + dt;
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
