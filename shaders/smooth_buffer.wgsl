// #include "common/smooth_relocate.wgsl"

// Vertex smoothing with the metric texels in a plain storage buffer (row-major, rgba32float
// layout) and bilinear interpolation in the shader.

@group(2) @binding(1) var<storage, read> metric_texels: array<vec4<f32>>;

fn texel(i: vec2<i32>) -> vec3<f32> {
    return metric_texels[u32(i.y) * params.size + u32(i.x)].xyz;
}

fn metric_at(x: vec2<f32>) -> vec3<f32> {
    let fp = footprint(x);
    return bilinear(fp.a, texel(fp.i0), texel(vec2<i32>(fp.i1.x, fp.i0.y)),
        texel(vec2<i32>(fp.i0.x, fp.i1.y)), texel(fp.i1));
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    smooth_item(gid, nwg);
}
