// #include "common/dispatch.cuh"
// #include "common/dg_rk.cuh"

// CUDA twin of shaders/dg_stage.wgsl. One SSP Runge-Kutta stage (common/dg_rk.cuh), one thread
// per DOF j of a register, rhs read from memory (the colored and atomic layouts; the gathered
// layout applies the stage inside dg_volume). dt = 0 (the run reached t_end) leaves all
// registers untouched. range: count the DOFs per register, color the stage index.

extern "C" __global__ void dg_stage(
    float* regs,
    const float* __restrict__ rhs,
    const float* __restrict__ clock,
    const Stage* __restrict__ stages,
    float* regs_lo,
    ItemRange range) {
    await_previous_launches();
    u32 j = linear_index();
    u32 n = range.count;
    float dt = clock[1];
    if (j >= n || dt == 0.0f) {
        return;
    }
    stage_apply(regs, regs_lo, stages[range.color], dt, rhs[j], j, n);
}
