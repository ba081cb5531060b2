// CUDA twin of shaders/common/swe_clock.wgsl, shared by the two clock kernels (swe_time and
// swe_fused_clock): the depth stop's record goes into the control block once, and a step's
// edge event counters into the run's totals. The counters were written by earlier launches of
// the stream, so plain loads and stores stand in for atomicLoad / atomicStore.

/// WGSL max() on u32.
__device__ __forceinline__ u32 max_u32(u32 a, u32 b) {
    return a > b ? a : b;
}

// Copy the depth stop recorded by the last update (counters[4..8], common/swe_cell.cuh) into
// the control block, once; from then on the clock takes no step and the host stops.
__device__ __forceinline__ void take_depth_stop(Control* control, const u32* counters) {
    if (control->stop_cell == NO_CELL && counters[4] != NO_CELL) {
        control->stop_cell = counters[4];
        control->stop_depth = from_ordered_bits(counters[5]);
        control->stop_step = counters[6] / 2u;
        control->stop_t = __uint_as_float(counters[7]);
    }
}

// Add a taken step's edge events (non-hyperbolic states, Roe -> IFCP fallbacks, clamped chi)
// to the run's totals and the largest per step.
__device__ __forceinline__ void count_step_events(Control* control, const u32* counters) {
    u32 nonhyp = counters[0];
    u32 fallback = counters[1];
    control->nonhyperbolic = control->nonhyperbolic + nonhyp;
    control->fallback = control->fallback + fallback;
    control->chi_clamped = control->chi_clamped + counters[2];
    control->max_step_nonhyperbolic = max_u32(control->max_step_nonhyperbolic, nonhyp);
    control->max_step_fallback = max_u32(control->max_step_fallback, fallback);
}

// Clear the per-step counters (edge events and clipped depths, counters[0..4]) for the next step.
__device__ __forceinline__ void clear_step_events(u32* counters) {
    for (int k = 0; k < 4; k = k + 1) {
        counters[k] = 0u;
    }
}
