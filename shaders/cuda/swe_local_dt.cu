// #include "common/dispatch.cuh"

// CUDA twin of shaders/swe_local_dt.wgsl. Local CFL step of each cell, condition (3):
// dt_i = 2 CFL |V_i| / sum_j |G_ij| lam_ij (the sum is acc[2i + 1].z after the flux pass); cells
// where nothing moves get BIG, cells with a NaN or Inf get -1 (the run stops there). A
// min-reduction (reduce_min.cu) then gives the global step without leaving the GPU.

#ifndef CFL
#define CFL 0.9f
#endif
#define BIG 3.0e38f

/// Not NaN or Inf, tested on the bits (exponent all ones) as the WGSL does.
__device__ __forceinline__ bool finite_bits(float x) {
    return (__float_as_uint(x) & 0x7f800000u) != 0x7f800000u;
}

extern "C" __global__ void swe_local_dt(
    const float4* __restrict__ cells,
    const float4* __restrict__ acc,
    float* __restrict__ dt_local,
    ItemRange range) {
    await_previous_launches();
    u32 i = linear_index();
    if (i >= range.count) {
        return;
    }
    u32 c = range.first + i;
    float s = acc[2u * c + 1u].z;
    float4 w0 = cells[2u * c];
    float4 w1 = cells[2u * c + 1u];
    bool finite = finite_bits(w0.x) && finite_bits(w0.y) && finite_bits(w0.z)
        && finite_bits(w0.w) && finite_bits(w1.x) && finite_bits(w1.y) && finite_bits(s);
    dt_local[c] = !finite ? -1.0f : s > 0.0f ? 2.0f * CFL * w1.w / s : BIG;
}
