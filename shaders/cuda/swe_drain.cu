// #include "common/dispatch.cuh"
// #include "common/swe_control.cuh"
// #include "common/swe_cell.cuh"
// #include "common/swe_drain.cuh"

// CUDA twin of shaders/swe_drain.wgsl. Second order, the edge-scatter update (after swe_time
// set this stage's dt): the draining factor of every cell (common/swe_drain.cuh) from its
// outflow per layer (summed by swe_edge_flux2, cleared here) and its depth h; a cell that
// drains (theta < 1) writes its record and drain_flag = the launch's tag (stop_tag), for
// swe_drain_fix, and has the depth stop check its depth before draining, h - dt/|V| acc
// (the update of the cells that do not drain cannot go below 0, swe_update checks them).
// CPU reference: CpuSolver::accumulate and apply_update in src/solver/swe/cpu.rs.

extern "C" __global__ void swe_drain(
    const Control* __restrict__ control,
    const float4* __restrict__ cells,
    const float4* __restrict__ acc,
    float2* __restrict__ outflow,
    float4* __restrict__ drain,
    u32* __restrict__ drain_flag,
    u32* __restrict__ counters,
    ItemRange range) {
    await_previous_launches();
    u32 i = linear_index();
    if (i >= range.count) {
        return;
    }
    u32 c = range.first + i;
    float2 out = outflow[c];
    outflow[c] = make_float2(0.0f, 0.0f);
    float dt = control->dt;
    if (dt <= 0.0f || (out.x == 0.0f && out.y == 0.0f)) {
        return;
    }
    float4 w0 = cells[2u * c];
    float s = dt / cells[2u * c + 1u].w;
    float2 theta = make_float2(drain_factor(w0.x, s * out.x), drain_factor(w0.w, s * out.y));
    if (drains(theta)) {
        u32 tag = stop_tag(control->steps);
        drain[c] = drain_record(tag, dt, theta);
        atomicExch(&drain_flag[0], tag);
        if (!depth_stopped(tag, counters)) {
            check_depth_stop(w0 - s * acc[2u * c], c, tag, control->t, counters);
        }
    }
}
