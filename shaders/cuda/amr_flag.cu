// #include "common/dispatch.cuh"
// #include "common/amr_tree.cuh"
// #include "common/amr_indicator.cuh"

// CUDA twin of shaders/amr_flag.wgsl. Refinement flags from the indicator, one thread per slot
// (common/amr_indicator.cuh; indicator() and flags() in src/solver/dg/amr/indicator.rs): eps_i
// = h_i |grad q(U_i)| (GK19 eq. 10), with params.jumps plus the largest jump of q's element
// means across the faces.
//
// The WGSL override constants are preprocessor defines here (the host passes -D values); the
// capacity NE is the module constant of common/dispatch.cuh (WGSL: range.capacity).

extern "C" __global__ void amr_flag(
    const float* __restrict__ regs,
    const float4* __restrict__ centroid_basis,
    const float4* __restrict__ inv_jac,
    const float* __restrict__ heights,
    const uint4* __restrict__ neighbors,
    int* flags,
    const u32* __restrict__ counters,
    AmrParams params,
    ItemRange range) {
    await_previous_launches();
    u32 i = linear_index();
    if (i >= min(range.count, counters[C_ACTIVE])) {
        return;
    }
    flags[i] = indicator_flag(i, regs, centroid_basis, inv_jac, heights, neighbors, params);
}
