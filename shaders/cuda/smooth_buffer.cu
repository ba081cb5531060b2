// #include "common/dispatch.cuh"
// #include "common/smooth_relocate.cuh"

// CUDA twin of shaders/smooth_buffer.wgsl: vertex smoothing with the metric texels in a plain
// storage buffer (row-major, rgba32float layout) read with ordinary global loads, and bilinear
// interpolation in the kernel.

struct BufferMetric {
    const float4* texels;
    __device__ __forceinline__ float3 texel(const SmoothParams& params, int2 i) const {
        return texel_xyz(texels[(u32)i.y * params.size + (u32)i.x]);
    }
    __device__ __forceinline__ float3 operator()(const SmoothParams& params, float2 x) const {
        Footprint fp = footprint(params, x);
        return bilinear(fp.a, texel(params, fp.i0), texel(params, make_int2(fp.i1.x, fp.i0.y)),
                        texel(params, make_int2(fp.i0.x, fp.i1.y)), texel(params, fp.i1));
    }
};

extern "C" __global__ void smooth_buffer(
    float2* positions,
    const u32* cavity,
    SmoothParams params,
    const float4* metric_texels,
    ItemRange range) {
    await_previous_launches();
    BufferMetric metric;
    metric.texels = metric_texels;
    smooth_item(positions, cavity, params, metric, range);
}
