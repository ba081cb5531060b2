// #include "common/dispatch.cuh"
// #include "common/swe_control.cuh"

// CUDA twin of shaders/swe_time.wgsl. One thread: turn the reduced CFL step into this step's
// dt, clamped to hit t_end exactly: dt = min(dt_cfl, t_end - t), t = t_end when clamped (0 once
// t >= t_end, so extra steps of a batch are no-ops; last_dt keeps the last positive dt); a
// negative dt_cfl (a cell went NaN/Inf) is passed on as dt < 0: no step, the host stops. Folds
// the step's edge event counters into the run totals. The counters were written by earlier
// launches of the stream, so plain loads and stores stand in for atomicLoad / atomicStore.
// The depth stop recorded by the last update (counters[4..8], common/swe_cell.cuh) is copied
// into the control block once; from then on dt = 0 (no step) and the host stops.

/// WGSL max() on u32.
__device__ __forceinline__ u32 max_u32(u32 a, u32 b) {
    return a > b ? a : b;
}

extern "C" __global__ void swe_time(
    const float* __restrict__ dt_min,
    Control* __restrict__ control,
    u32* __restrict__ counters,
    ItemRange range) {
    u32 gid = blockIdx.x * blockDim.x + threadIdx.x;
    if (gid != 0u || range.count == 0u) {
        return;
    }
    if (control->stop_cell == NO_CELL && counters[4] != NO_CELL) {
        control->stop_cell = counters[4];
        control->stop_depth = from_ordered_bits(counters[5]);
        control->stop_step = counters[6] / 2u;
        control->stop_t = __uint_as_float(counters[7]);
    }
    if (control->stop_cell != NO_CELL) {
        control->dt = 0.0f;
        for (int k = 0; k < 4; k = k + 1) {
            counters[k] = 0u;
        }
        return;
    }
    float dt_cfl = dt_min[0];
    float remaining = control->t_end - control->t;
    float dt = 0.0f;
    if (dt_cfl < 0.0f) {
        dt = dt_cfl;
    } else if (remaining > 0.0f) {
        dt = fminf(dt_cfl, remaining);
        if (dt_cfl >= remaining) {
            control->t = control->t_end;
        } else {
            control->t = control->t + dt;
        }
        control->steps = control->steps + 1u;
        control->last_dt = dt;
        u32 nonhyp = counters[0];
        u32 fallback = counters[1];
        control->nonhyperbolic = control->nonhyperbolic + nonhyp;
        control->fallback = control->fallback + fallback;
        control->chi_clamped = control->chi_clamped + counters[2];
        control->max_step_nonhyperbolic = max_u32(control->max_step_nonhyperbolic, nonhyp);
        control->max_step_fallback = max_u32(control->max_step_fallback, fallback);
    }
    control->clipped = control->clipped + counters[3];
    control->dt = dt;
    for (int k = 0; k < 4; k = k + 1) {
        counters[k] = 0u;
    }
}
