// #include "common/dispatch.cuh"
// #include "common/smooth_relocate.cuh"

// CUDA twin of shaders/smooth_hardware.wgsl: vertex smoothing with the metric read through the
// texture unit's linear filter (a float4 CUDA array, cudaFilterModeLinear, clamp addressing,
// normalised coordinates over the mesh bounding box; created in src/cuda/smooth.rs). The
// filter's weights are 9-bit fixed point with 8 fractional bits (1/256 steps); see
// TextureSampler's Quantized8 mode.

struct HardwareMetric {
    cudaTextureObject_t texture;
    __device__ __forceinline__ float3 operator()(const SmoothParams& params, float2 x) const {
        float u = (x.x - params.lo.x) * params.inv_extent.x;
        float v = (x.y - params.lo.y) * params.inv_extent.y;
        return texel_xyz(tex2D<float4>(texture, u, v));
    }
};

extern "C" __global__ void smooth_hardware(
    float2* positions,
    const u32* __restrict__ cavity,
    SmoothParams params,
    cudaTextureObject_t metric_texture,
    ItemRange range) {
    await_previous_launches();
    HardwareMetric metric;
    metric.texture = metric_texture;
    smooth_item(positions, cavity, params, metric, range);
}
