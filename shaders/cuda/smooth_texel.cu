// #include "common/dispatch.cuh"
// #include "common/smooth_relocate.cuh"

// CUDA twin of shaders/smooth_texel.wgsl: vertex smoothing with the metric texels (rgba32float,
// row-major) in global memory, four texel loads and the bilinear interpolation written in the
// kernel (exact f32 weights), the same formula as the WGSL textureLoad path. The loads go
// through the read-only data cache (__ldg), the texture path of NVIDIA's memory hierarchy that
// textureLoad uses, without the filter.

struct TexelMetric {
    const float4* __restrict__ texels;
    __device__ __forceinline__ float3 load(const SmoothParams& params, int2 i) const {
        return texel_xyz(__ldg(&texels[(u32)i.y * params.size + (u32)i.x]));
    }
    __device__ __forceinline__ float3 operator()(const SmoothParams& params, float2 x) const {
        Footprint fp = footprint(params, x);
        float3 t00 = load(params, make_int2(fp.i0.x, fp.i0.y));
        float3 t10 = load(params, make_int2(fp.i1.x, fp.i0.y));
        float3 t01 = load(params, make_int2(fp.i0.x, fp.i1.y));
        float3 t11 = load(params, make_int2(fp.i1.x, fp.i1.y));
        return bilinear(fp.a, t00, t10, t01, t11);
    }
};

extern "C" __global__ void smooth_texel(
    float2* positions,
    const u32* __restrict__ cavity,
    SmoothParams params,
    const float4* __restrict__ metric_texels,
    ItemRange range) {
    await_previous_launches();
    TexelMetric metric;
    metric.texels = metric_texels;
    smooth_item(positions, cavity, params, metric, range);
}
