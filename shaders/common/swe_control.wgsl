// Time and event counters of a two-layer shallow-water run, kept on the GPU (mirrors
// GpuControl in src/solver/swe/gpu.rs). The host writes t_end and reads it back only to print
// or save.
struct Control {
    t: f32,
    dt: f32,
    t_end: f32,
    steps: u32,
    nonhyperbolic: u32,
    fallback: u32,
    chi_clamped: u32,
    clipped: u32,
    max_step_nonhyperbolic: u32,
    max_step_fallback: u32,
    last_dt: f32,
    // Fused step only: the CFL step (3) of the last fused pass, i.e. of the state before the
    // step that just ended (the paper's lagged dt); 0 before the first pass, < 0 once a cell
    // went NaN/Inf.
    dt_cfl: f32,
    // Fused step only: steps rejected (their dt above the Courant limit of the state they
    // updated) and taken again.
    rejected: u32,
    // The depth stop (common/swe_cell.wgsl), copied from counters[4..8] by the time and clock
    // kernels: the lowest-numbered cell whose layer depth fell below DEPTH_STOP before
    // clipping (NO_CELL while none did), the step that did it, the time that step reached,
    // and the lowest such depth. Once set, no step is taken.
    stop_cell: u32,
    stop_step: u32,
    stop_t: f32,
    stop_depth: f32,
}

// No cell: the depth stop has not fired (Control.stop_cell, counters[4]).
const NO_CELL: u32 = 0xffffffffu;

// The dt of a fused step (swe_fused_step and swe_fused_clock compute it alike):
// min(dt_cfl, t_end - t); 0 once t >= t_end or before the first pass (no update, only the
// speeds); a negative dt_cfl (blow-up) is passed on.
fn fused_dt(c: Control) -> f32 {
    if (c.dt_cfl < 0.0) {
        return c.dt_cfl;
    }
    let remaining = c.t_end - c.t;
    if (remaining > 0.0) {
        return min(c.dt_cfl, remaining);
    }
    return 0.0;
}

// The time after a fused step of dt (swe_fused_clock advances the clock to it): t_end when the
// step was clamped to it, t + dt otherwise.
fn fused_t_after(c: Control, dt: f32) -> f32 {
    if (c.dt_cfl >= c.t_end - c.t) {
        return c.t_end;
    }
    return c.t + dt;
}

// An f32 as a u32 of the same order (negatives below positives), so a u32 atomicMin gives the
// minimum of floats: x >= 0 sets the sign bit, x < 0 flips every bit.
fn ordered_bits(x: f32) -> u32 {
    let b = bitcast<u32>(x);
    return select(b | 0x80000000u, ~b, (b & 0x80000000u) != 0u);
}

// The inverse of ordered_bits.
fn from_ordered_bits(u: u32) -> f32 {
    return bitcast<f32>(select(~u, u & 0x7fffffffu, (u & 0x80000000u) != 0u));
}
