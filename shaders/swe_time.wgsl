// #include "common/dispatch.wgsl"
// #include "common/swe_control.wgsl"
// #include "common/swe_clock.wgsl"

// One thread: turn the reduced CFL step into this step's dt, clamped to hit t_end exactly:
// dt = min(dt_cfl, t_end - t), t = t_end when clamped (0 once t >= t_end, so extra steps of a
// batch are no-ops; last_dt keeps the last positive dt); a negative dt_cfl (a cell
// went NaN/Inf) is passed on as dt < 0: no step is taken and the host stops. Folds the step's edge event counters into the run totals.
// The depth stop recorded by the last update (counters[4..8], common/swe_cell.wgsl) is copied
// into the control block once; from then on dt = 0 (no step) and the host stops.

@group(0) @binding(0) var<storage, read> dt_min: array<f32>;
@group(0) @binding(1) var<storage, read_write> control: Control;
@group(0) @binding(2) var<storage, read_write> counters: array<atomic<u32>, 8>;
@group(1) @binding(0) var<uniform> range: ItemRange;

@compute @workgroup_size(1)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    if (gid.x != 0u || range.count == 0u) {
        return;
    }
    take_depth_stop();
    if (control.stop_cell != NO_CELL) {
        control.dt = 0.0;
        clear_step_events();
        return;
    }
    let dt_cfl = dt_min[0];
    let remaining = control.t_end - control.t;
    var dt = 0.0;
    if (dt_cfl < 0.0) {
        dt = dt_cfl;
    } else if (remaining > 0.0) {
        dt = min(dt_cfl, remaining);
        if (dt_cfl >= remaining) {
            control.t = control.t_end;
        } else {
            control.t = control.t + dt;
        }
        control.steps = control.steps + 1u;
        control.last_dt = dt;
        count_step_events();
    }
    control.clipped = control.clipped + atomicLoad(&counters[3]);
    control.dt = dt;
    clear_step_events();
}
