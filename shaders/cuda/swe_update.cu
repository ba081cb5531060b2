// #include "common/dispatch.cuh"
// #include "common/swe_control.cuh"

// CUDA twin of shaders/swe_update.wgsl. Cell update (2): W_i -= dt / |V_i| * acc_i with dt
// from the GPU time kernel (no host round trip), then the dry-layer rules of spec section 10: a
// negative thickness is clipped to 0 (counted: clipping breaks exact conservation) and a layer
// thinner than DRY_TOL loses its momentum. Clears the accumulator for the next step. CPU
// reference: CpuSolver::step.

#ifndef DRY_TOL
#define DRY_TOL 1.0e-4f
#endif

extern "C" __global__ void swe_update(
    const Control* __restrict__ control,
    float4* __restrict__ cells,
    float4* __restrict__ acc,
    u32* __restrict__ counters,
    ItemRange range) {
    u32 i = linear_index();
    if (i >= range.count) {
        return;
    }
    u32 c = range.first + i;
    float4 w0 = cells[2u * c];
    float4 w1 = cells[2u * c + 1u];
    float4 a0 = acc[2u * c];
    float4 a1 = acc[2u * c + 1u];
    acc[2u * c] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    acc[2u * c + 1u] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    if (control->dt <= 0.0f) {
        return;
    }
    float s = control->dt / w1.w;
    w0 = w0 - s * a0;
    w1 = make_float4(w1.x - s * a1.x, w1.y - s * a1.y, w1.z, w1.w);
    u32 clipped = 0u;
    if (w0.x < 0.0f) {
        w0.x = 0.0f;
        clipped = clipped + 1u;
    }
    if (w0.x < DRY_TOL) {
        w0.y = 0.0f;
        w0.z = 0.0f;
    }
    if (w0.w < 0.0f) {
        w0.w = 0.0f;
        clipped = clipped + 1u;
    }
    if (w0.w < DRY_TOL) {
        w1.x = 0.0f;
        w1.y = 0.0f;
    }
    if (clipped != 0u) {
        atomicAdd(&counters[3], clipped);
    }
    cells[2u * c] = w0;
    cells[2u * c + 1u] = w1;
}
