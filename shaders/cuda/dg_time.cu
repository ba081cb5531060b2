// #include "common/dispatch.cuh"
// #include "common/f32_pair.cuh"

// CUDA twin of shaders/dg_time.wgsl. One thread. Clock: [t, dt, t_end, fixed_dt, cfl, steps,
// t_lo]; the time is the f32 pair t + t_lo (f32_pair.cuh), so the steps' sum is kept to
// ~eps dt per step.
// range.color 0 (step start): dt = fixed_dt if > 0 else cfl * min_i dt_i (from the reduction),
//   clamped to t_end - t (0 once t_end is reached: the step's kernels then do nothing).
// range.color 1 (step end): t += dt (t = t_end, t_lo = 0 exactly when clamped), steps += 1
//   if dt > 0.

extern "C" __global__ void dg_time(
    const float* __restrict__ dt_min,
    float* __restrict__ clock,
    ItemRange range) {
    await_previous_launches();
    u32 gid = blockIdx.x * blockDim.x + threadIdx.x;
    if (gid != 0u) {
        return;
    }
    float t = clock[0];
    float t_lo = clock[6];
    float t_end = clock[2];
    // t_end - (t + t_lo): t_end - t is exact near the end (Sterbenz).
    float remaining = (t_end - t) - t_lo;
    if (range.color == 0u) {
        float dt = clock[3];
        if (dt <= 0.0f) {
            dt = clock[4] * dt_min[0];
        }
        if (remaining <= 0.0f) {
            dt = 0.0f;
        } else if (dt >= remaining) {
            dt = remaining;
        }
        clock[1] = dt;
    } else {
        float dt = clock[1];
        if (dt > 0.0f) {
            if (remaining - dt < 1e-6f * dt) {
                clock[0] = t_end;
                clock[6] = 0.0f;
            } else {
                float2 next = split_pair(t, t_lo + dt);
                clock[0] = next.x;
                clock[6] = next.y;
            }
            clock[5] = clock[5] + 1.0f;
        }
    }
}
