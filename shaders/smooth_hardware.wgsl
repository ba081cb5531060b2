// #include "common/smooth_relocate.wgsl"

// Vertex smoothing with the metric read through the sampler's hardware linear filter
// (clamp-to-edge, normalised coordinates over the mesh bounding box). The filter's weights have
// the adapter's precision (1/256 steps on NVIDIA); see TextureSampler's Quantized8 mode.

@group(2) @binding(1) var metric_texture: texture_2d<f32>;
@group(2) @binding(2) var metric_sampler: sampler;

fn metric_at(x: vec2<f32>) -> vec3<f32> {
    let uv = (x - params.lo) * params.inv_extent;
    return textureSampleLevel(metric_texture, metric_sampler, uv, 0.0).xyz;
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    smooth_item(gid, nwg);
}
