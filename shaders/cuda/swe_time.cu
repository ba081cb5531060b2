// #include "common/dispatch.cuh"
// #include "common/swe_control.cuh"
// #include "common/swe_clock.cuh"

// CUDA twin of shaders/swe_time.wgsl. One thread: turn the reduced CFL step into this step's
// dt, clamped to hit t_end exactly: dt = min(dt_cfl, t_end - t), t = t_end when clamped (0 once
// t >= t_end, so extra steps of a batch are no-ops; last_dt keeps the last positive dt); a
// negative dt_cfl (a cell went NaN/Inf) is passed on as dt < 0: no step, the host stops. Folds
// the step's edge event counters into the run totals. The counters were written by earlier
// launches of the stream, so plain loads and stores stand in for atomicLoad / atomicStore.
// The depth stop recorded by the last update (counters[4..8], common/swe_cell.cuh) is copied
// into the control block once; from then on dt = 0 (no step) and the host stops.

extern "C" __global__ void swe_time(
    const float* __restrict__ dt_min,
    Control* __restrict__ control,
    u32* __restrict__ counters,
    ItemRange range) {
    await_previous_launches();
    u32 gid = blockIdx.x * blockDim.x + threadIdx.x;
    if (gid != 0u || range.count == 0u) {
        return;
    }
    take_depth_stop(control, counters);
    if (control->stop_cell != NO_CELL) {
        control->dt = 0.0f;
        clear_step_events(counters);
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
        count_step_events(control, counters);
    }
    control->clipped = control->clipped + counters[3];
    control->dt = dt;
    clear_step_events(counters);
}
