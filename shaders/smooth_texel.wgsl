// #include "common/smooth_relocate.wgsl"

// Vertex smoothing with the metric texture read by four textureLoads and interpolated
// bilinearly in the shader (exact f32 weights).

@group(2) @binding(1) var metric_texture: texture_2d<f32>;

fn metric_at(x: vec2<f32>) -> vec3<f32> {
    let fp = footprint(x);
    let t00 = textureLoad(metric_texture, vec2<i32>(fp.i0.x, fp.i0.y), 0).xyz;
    let t10 = textureLoad(metric_texture, vec2<i32>(fp.i1.x, fp.i0.y), 0).xyz;
    let t01 = textureLoad(metric_texture, vec2<i32>(fp.i0.x, fp.i1.y), 0).xyz;
    let t11 = textureLoad(metric_texture, vec2<i32>(fp.i1.x, fp.i1.y), 0).xyz;
    return bilinear(fp.a, t00, t10, t01, t11);
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    smooth_item(gid, nwg);
}
