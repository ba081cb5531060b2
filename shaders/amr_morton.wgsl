// #include "common/dispatch.wgsl"
// #include "common/amr_tree.wgsl"
// #include "common/amr_reorder.wgsl"

// Morton keys of the active elements (reorder::morton_key, the exact CPU reference), one
// thread per slot i < the active count: with s = (v0 + v1) + v2 the centroid's sum in f32,
// q = (s - origin) * scale on a 65536^2 grid (clamped), key = x bits at even positions, y bits
// at odd; order[i] = i, the values the radix passes carry. The f32 steps have no product
// followed by a sum, so no backend can fuse them: the keys are the same bits everywhere.

@group(0) @binding(0) var<storage, read> slots: array<u32>;
@group(0) @binding(1) var<storage, read> vertices: array<vec2<f32>>;
@group(0) @binding(2) var<storage, read> counters: array<u32>;
@group(0) @binding(3) var<storage, read_write> keys: array<u32>;
@group(0) @binding(4) var<storage, read_write> order: array<u32>;
@group(1) @binding(0) var<uniform> range: ItemRange;
@group(2) @binding(0) var<uniform> params: ReorderParams;

// The low 16 bits of v at the even bit positions.
fn spread(x: u32) -> u32 {
    var v = x & 0xffffu;
    v = (v | (v << 8u)) & 0x00ff00ffu;
    v = (v | (v << 4u)) & 0x0f0f0f0fu;
    v = (v | (v << 2u)) & 0x33333333u;
    return (v | (v << 1u)) & 0x55555555u;
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = linear_index(gid, nwg);
    if (i >= range.count || i >= counters[C_ACTIVE]) {
        return;
    }
    let id = slots[i];
    let s = (vertices[3u * id] + vertices[3u * id + 1u]) + vertices[3u * id + 2u];
    let q = clamp((s - params.origin) * params.scale, vec2<f32>(0.0), vec2<f32>(65535.0));
    keys[i] = spread(u32(q.x)) | (spread(u32(q.y)) << 1u);
    order[i] = i;
}
