// #include "common/dispatch.cuh"
// #include "common/dg_euler.cuh"
// #include "common/dg_tables.cuh"

// CUDA twin of shaders/dg_local_dt.wgsl. Per-element CFL limit (Operator::cfl_dt before the
// min): h_i / ((2p + 1)(|v_i| + c_i)) from the element mean of register 0; the min-reduction
// (reduce_min.cu) and dg_time turn it into dt without leaving the GPU. Slots past a device
// count (an adapted mesh, launched over all NE slots) get BIG, so the minimum over the slots is
// the elements'.
//
// launches: launch records (dispatch.cuh), read when range.count is DEVICE_COUNT (an adapted
// mesh).

#ifndef ORDER
#define ORDER 1.0f
#endif
#define SQRT2 1.41421356237f
#define BIG 3.0e38f

extern "C" __global__ void dg_local_dt(
    const float* __restrict__ regs,
    const float* __restrict__ min_height,
    float* __restrict__ local_dt,
    const u32* __restrict__ launches,
    ItemRange range) {
    await_previous_launches();
    u32 i = linear_index();
    u32 count = range.count;
    if (count == DEVICE_COUNT) {
        count = launches[range.first + 1u];
    }
    if (i >= count) {
        if (i < NE) {
            local_dt[i] = BIG;
        }
        return;
    }
    float4 u = SQRT2 * make_float4(regs[dof(0u, 0u, 0u, i)], regs[dof(0u, 1u, 0u, i)],
                                   regs[dof(0u, 2u, 0u, i)], regs[dof(0u, 3u, 0u, i)]);
    float speed = sqrtf(u.y * u.y + u.z * u.z) / u.x + sound_speed(u);
    local_dt[i] = min_height[i] / ((2.0f * ORDER + 1.0f) * speed);
}
