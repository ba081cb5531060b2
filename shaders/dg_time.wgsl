// #include "common/dispatch.wgsl"

// One thread. Clock: [t, dt, t_end, fixed_dt, cfl, steps].
// range.color 0 (step start): dt = fixed_dt if > 0 else cfl * min_i dt_i (from the reduction),
//   clamped to t_end - t (0 once t_end is reached: the step's kernels then do nothing).
// range.color 1 (step end): t += dt (t = t_end exactly when clamped), steps += 1 if dt > 0.

@group(0) @binding(0) var<storage, read> dt_min: array<f32>;
@group(0) @binding(1) var<storage, read_write> clock: array<f32>;
@group(1) @binding(0) var<uniform> range: ItemRange;

@compute @workgroup_size(1)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    if (gid.x != 0u) {
        return;
    }
    let t = clock[0];
    let t_end = clock[2];
    if (range.color == 0u) {
        var dt = clock[3];
        if (dt <= 0.0) {
            dt = clock[4] * dt_min[0];
        }
        let remaining = t_end - t;
        if (remaining <= 0.0) {
            dt = 0.0;
        } else if (dt >= remaining) {
            dt = remaining;
        }
        clock[1] = dt;
    } else {
        let dt = clock[1];
        if (dt > 0.0) {
            if (t + dt >= t_end || t_end - (t + dt) < 1e-6 * dt) {
                clock[0] = t_end;
            } else {
                clock[0] = t + dt;
            }
            clock[5] = clock[5] + 1.0;
        }
    }
}
