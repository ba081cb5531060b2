// #include "common/dispatch.cuh"

// CUDA twin of shaders/dg_time.wgsl. One thread. Clock: [t, dt, t_end, fixed_dt, cfl, steps].
// range.color 0 (step start): dt = fixed_dt if > 0 else cfl * min_i dt_i (from the reduction),
//   clamped to t_end - t (0 once t_end is reached: the step's kernels then do nothing).
// range.color 1 (step end): t += dt (t = t_end exactly when clamped), steps += 1 if dt > 0.

extern "C" __global__ void dg_time(
    const float* __restrict__ dt_min,
    float* __restrict__ clock,
    ItemRange range) {
    u32 gid = blockIdx.x * blockDim.x + threadIdx.x;
    if (gid != 0u) {
        return;
    }
    float t = clock[0];
    float t_end = clock[2];
    if (range.color == 0u) {
        float dt = clock[3];
        if (dt <= 0.0f) {
            dt = clock[4] * dt_min[0];
        }
        float remaining = t_end - t;
        if (remaining <= 0.0f) {
            dt = 0.0f;
        } else if (dt >= remaining) {
            dt = remaining;
        }
        clock[1] = dt;
    } else {
        float dt = clock[1];
        if (dt > 0.0f) {
            if (t + dt >= t_end || t_end - (t + dt) < 1e-6f * dt) {
                clock[0] = t_end;
            } else {
                clock[0] = t + dt;
            }
            clock[5] = clock[5] + 1.0f;
        }
    }
}
