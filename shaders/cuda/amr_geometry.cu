// #include "common/dispatch.cuh"
// #include "common/amr_tree.cuh"

// CUDA twin of shaders/amr_geometry.wgsl. Geometry of the active elements for the DG kernels,
// one thread per slot up to the capacity (element_geometry in src/solver/dg/mesh.rs): with
// x = v0 + J xi, the inverse Jacobian (xi_x, xi_y, eta_x, eta_y) = (J11, -J01, -J10, J00) / det J,
// 1 / det J and the smallest height det J / longest side. Clears both neighbour blocks for the
// face kernel; slots past the active count get zeros and no neighbours, as on the host.
//
// The WGSL override constant is a preprocessor define here (the host passes a -D value).

#ifndef NE
#define NE 1u
#endif

extern "C" __global__ void amr_geometry(
    const u32* __restrict__ slots,
    const float2* __restrict__ vertices,
    float4* inv_jac,
    float* inv_det,
    float* heights,
    uint4* neighbors,
    const u32* __restrict__ counters,
    ItemRange range) {
    u32 i = linear_index();
    if (i >= range.count) {
        return;
    }
    neighbors[i] = make_uint4(NONE, NONE, NONE, 0u);
    neighbors[NE + i] = make_uint4(NONE, NONE, NONE, NONE);
    if (i >= counters[C_ACTIVE]) {
        inv_jac[i] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        inv_det[i] = 0.0f;
        heights[i] = 0.0f;
        return;
    }
    u32 id = slots[i];
    float2 v0 = vertices[3u * id];
    float2 v1 = vertices[3u * id + 1u];
    float2 v2 = vertices[3u * id + 2u];
    float2 a = v1 - v0;
    float2 b = v2 - v0;
    float d = a.x * b.y - b.x * a.y;
    inv_jac[i] = make_float4(b.y, -b.x, -a.y, a.x) / d;
    inv_det[i] = 1.0f / d;
    float longest = fmaxf(length(a), fmaxf(length(b), length(v2 - v1)));
    heights[i] = d / longest;
}
