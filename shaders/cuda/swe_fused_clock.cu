// #include "common/dispatch.cuh"
// #include "common/swe_control.cuh"
// #include "common/swe_clock.cuh"

// CUDA twin of shaders/swe_fused_clock.wgsl. One thread, after swe_fused_step: advance the
// clock by the step's dt (fused_dt, the same value the step used: t = t_end when clamped,
// nothing once t >= t_end; last_dt keeps the last positive dt; a negative dt, a cell gone
// NaN/Inf, is passed on in control.dt and the host stops), fold the step's edge event counters
// into the run totals as swe_time does, and store the pass's minimum local CFL step (dt_min,
// reset here for the next pass) as dt_cfl, the next step's dt before the clamp. A step that
// took no dt (past t_end) keeps the dt_cfl it had, so the lag stays one real step
// (CpuSolver::step with lagged_dt), except the first pass (dt_cfl still 0). The counters and
// dt_min were written by earlier launches of the stream, so plain loads and stores stand in
// for atomicLoad / atomicStore.
// A step whose dt exceeds the Courant limit 1 of the speeds of the state it updated
// (dt CFL > the pass's minimum: the lagged dt fell behind fast-growing speeds) is rejected: t,
// steps and counters stay, dt_cfl becomes that minimum, and at order 1 (ROLLBACK = 1)
// dt_min[1] tells the next pass to write nothing, so the state before the step, still in that
// pass's output buffer, stays current (at order 2 the second stage sees dt = 0 and keeps W^n);
// rejected steps are counted (control.rejected).
// The depth stop recorded by the pass (counters[4..8], common/swe_cell.cuh) is dropped with a
// rejected step (the step is undone) and otherwise copied into the control block once; from
// then on dt = 0 (no step) and the host stops.

#ifndef CFL
#define CFL 0.9f
#endif
#ifndef ROLLBACK
#define ROLLBACK 1u
#endif

extern "C" __global__ void swe_fused_clock(
    u32* __restrict__ dt_min,
    Control* __restrict__ control,
    u32* __restrict__ counters,
    ItemRange range) {
    await_previous_launches();
    u32 gid = blockIdx.x * blockDim.x + threadIdx.x;
    if (gid != 0u || range.count == 0u) {
        return;
    }
    float dt = fused_dt(*control);
    float reduced = from_ordered_bits(dt_min[0]);
    dt_min[0] = 0xffffffffu;
    bool skipped = dt_min[1] != 0u;
    dt_min[1] = 0u;
    // Stopped before this pass: by an earlier step, or by the second stage of the last one
    // (its record's launch, counters[6], is older than this pass's 2 (steps + 1)).
    u32 fired = counters[6];
    bool stopped = control->stop_cell != NO_CELL || (fired != 0u && fired < 2u * (control->steps + 1u));
    bool rejected = !stopped && !skipped && dt > 0.0f && reduced >= 0.0f && dt * CFL > reduced;
    if (rejected) {
        counters[4] = NO_CELL;
        counters[5] = NO_CELL;
        counters[6] = 0u;
        counters[7] = 0u;
    }
    take_depth_stop(control, counters);
    if (skipped || rejected || control->stop_cell != NO_CELL) {
        if (rejected) {
            control->dt_cfl = reduced;
            control->rejected = control->rejected + 1u;
            dt_min[1] = ROLLBACK;
        }
        control->dt = 0.0f;
        clear_step_events(counters);
        return;
    }
    if (dt > 0.0f) {
        control->t = fused_t_after(*control, dt);
        control->steps = control->steps + 1u;
        control->last_dt = dt;
        count_step_events(control, counters);
    }
    control->clipped = control->clipped + counters[3];
    control->dt = dt;
    if (dt != 0.0f || control->dt_cfl <= 0.0f) {
        control->dt_cfl = reduced;
    }
    clear_step_events(counters);
}
