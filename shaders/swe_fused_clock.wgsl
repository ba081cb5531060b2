// #include "common/dispatch.wgsl"
// #include "common/swe_control.wgsl"
// #include "common/swe_clock.wgsl"

// One thread, after swe_fused_step: advance the clock by the step's dt (fused_dt, the same
// value the step used: t = t_end when clamped, nothing once t >= t_end; last_dt keeps the
// last positive dt; a negative dt, a cell gone NaN/Inf, is passed on in control.dt and the
// host stops), fold the step's edge event counters into the run totals as swe_time does, and
// store the pass's minimum local CFL step (dt_min, reset here for the next pass) as dt_cfl,
// the next step's dt before the clamp. A step that took no dt (past t_end) keeps the dt_cfl
// it had, so the lag stays one real step (CpuSolver::step with lagged_dt), except the first
// pass (dt_cfl still 0).
// A step whose dt exceeds the Courant limit 1 of the speeds of the state it updated
// (dt CFL > the pass's minimum: the lagged dt fell behind fast-growing speeds) is rejected: t,
// steps and counters stay, dt_cfl becomes that minimum, and at order 1 (ROLLBACK = 1)
// dt_min[1] tells the next pass to write nothing, so the state before the step, still in that
// pass's output buffer, stays current (at order 2 the second stage sees dt = 0 and keeps W^n);
// rejected steps are counted (control.rejected).
// The depth stop recorded by the pass (counters[4..8], common/swe_cell.wgsl) is dropped with a
// rejected step (the step is undone) and otherwise copied into the control block once; from
// then on dt = 0 (no step) and the host stops.

override CFL: f32 = 0.9;
override ROLLBACK: u32 = 1u;

@group(0) @binding(0) var<storage, read_write> dt_min: array<atomic<u32>, 2>;
@group(0) @binding(1) var<storage, read_write> control: Control;
@group(0) @binding(2) var<storage, read_write> counters: array<atomic<u32>, 8>;
@group(1) @binding(0) var<uniform> range: ItemRange;

@compute @workgroup_size(1)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    if (gid.x != 0u || range.count == 0u) {
        return;
    }
    let dt = fused_dt(control);
    let reduced = from_ordered_bits(atomicLoad(&dt_min[0]));
    atomicStore(&dt_min[0], 0xffffffffu);
    let skipped = atomicLoad(&dt_min[1]) != 0u;
    atomicStore(&dt_min[1], 0u);
    // Stopped before this pass: by an earlier step, or by the second stage of the last one
    // (its record's launch, counters[6], is older than this pass's 2 (steps + 1)).
    let fired = atomicLoad(&counters[6]);
    let stopped = control.stop_cell != NO_CELL || (fired != 0u && fired < 2u * (control.steps + 1u));
    let rejected = !stopped && !skipped && dt > 0.0 && reduced >= 0.0 && dt * CFL > reduced;
    if (rejected) {
        atomicStore(&counters[4], NO_CELL);
        atomicStore(&counters[5], NO_CELL);
        atomicStore(&counters[6], 0u);
        atomicStore(&counters[7], 0u);
    }
    take_depth_stop();
    if (skipped || rejected || control.stop_cell != NO_CELL) {
        if (rejected) {
            control.dt_cfl = reduced;
            control.rejected = control.rejected + 1u;
            atomicStore(&dt_min[1], ROLLBACK);
        }
        control.dt = 0.0;
        clear_step_events();
        return;
    }
    if (dt > 0.0) {
        control.t = fused_t_after(control, dt);
        control.steps = control.steps + 1u;
        control.last_dt = dt;
        count_step_events();
    }
    control.clipped = control.clipped + atomicLoad(&counters[3]);
    control.dt = dt;
    if (dt != 0.0 || control.dt_cfl <= 0.0) {
        control.dt_cfl = reduced;
    }
    clear_step_events();
}
