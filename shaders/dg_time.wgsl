// #include "common/dispatch.wgsl"
// #include "common/f32_pair.wgsl"

// One thread. Clock: [t, dt, t_end, fixed_dt, cfl, steps, t_lo]; the time is the f32 pair
// t + t_lo (f32_pair.wgsl), so the steps' sum is kept to ~eps dt per step: an f32 t alone
// lost up to half an ulp of t every step (2e-6 of time after 500 steps to t = 1, issue 13),
// and the run's end compared the solution at t_end with one at a slightly different time.
// range.color 0 (step start): dt = fixed_dt if > 0 else cfl * min_i dt_i (from the reduction),
//   clamped to t_end - t (0 once t_end is reached: the step's kernels then do nothing).
// range.color 1 (step end): t += dt (t = t_end, t_lo = 0 exactly when clamped), steps += 1
//   if dt > 0.

@group(0) @binding(0) var<storage, read> dt_min: array<f32>;
@group(0) @binding(1) var<storage, read_write> clock: array<f32>;
@group(1) @binding(0) var<uniform> range: ItemRange;

@compute @workgroup_size(1)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    if (gid.x != 0u) {
        return;
    }
    let t = clock[0];
    let t_lo = clock[6];
    let t_end = clock[2];
    // t_end - (t + t_lo): t_end - t is exact near the end (Sterbenz).
    let remaining = (t_end - t) - t_lo;
    if (range.color == 0u) {
        var dt = clock[3];
        if (dt <= 0.0) {
            dt = clock[4] * dt_min[0];
        }
        if (remaining <= 0.0) {
            dt = 0.0;
        } else if (dt >= remaining) {
            dt = remaining;
        }
        clock[1] = dt;
    } else {
        let dt = clock[1];
        if (dt > 0.0) {
            if (remaining - dt < 1e-6 * dt) {
                clock[0] = t_end;
                clock[6] = 0.0;
            } else {
                let next = split_pair(t, t_lo + dt);
                clock[0] = next.x;
                clock[6] = next.y;
            }
            clock[5] = clock[5] + 1.0;
        }
    }
}
