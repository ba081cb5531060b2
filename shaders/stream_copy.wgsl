// #include "common/dispatch.wgsl"

// Streaming copy dst[i] = src[i] of vec4<f32>, one thread per element: the yardstick the
// benchmarks' effective bandwidths are compared with (what the SMs can stream, read + write).
// copy_buffer_to_buffer is no yardstick on every driver: on NVIDIA's Vulkan driver it runs at
// about a fifth of this.

@group(0) @binding(0) var<storage, read> src: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read_write> dst: array<vec4<f32>>;
@group(1) @binding(0) var<uniform> range: ItemRange;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = linear_index(gid, nwg);
    if (i >= range.count) {
        return;
    }
    dst[range.first + i] = src[range.first + i];
}
