// #include "common/dispatch.cuh"
// #include "common/amr_tree.cuh"
// #include "common/amr_reorder.cuh"

// CUDA twin of shaders/amr_morton.wgsl. Morton keys of the active elements
// (reorder::morton_key, the exact CPU reference), one thread per slot i < the active count:
// with s = (v0 + v1) + v2 the centroid's sum in f32, q = (s - origin) * scale on a 65536^2 grid
// (clamped), key = x bits at even positions, y bits at odd; order[i] = i, the values the radix
// passes carry. The f32 steps have no product followed by a sum, so no backend can fuse them:
// the keys are the same bits everywhere.

// The low 16 bits of v at the even bit positions.
__device__ __forceinline__ u32 spread(u32 x) {
    u32 v = x & 0xffffu;
    v = (v | (v << 8u)) & 0x00ff00ffu;
    v = (v | (v << 4u)) & 0x0f0f0f0fu;
    v = (v | (v << 2u)) & 0x33333333u;
    return (v | (v << 1u)) & 0x55555555u;
}

extern "C" __global__ void amr_morton(
    const u32* __restrict__ slots,
    const float2* __restrict__ vertices,
    const u32* __restrict__ counters,
    u32* keys,
    u32* order,
    ReorderParams params,
    ItemRange range) {
    await_previous_launches();
    u32 i = linear_index();
    if (i >= range.count || i >= counters[C_ACTIVE]) {
        return;
    }
    u32 id = slots[i];
    float2 s = (vertices[3u * id] + vertices[3u * id + 1u]) + vertices[3u * id + 2u];
    float qx = fminf(fmaxf(__fmul_rn(__fsub_rn(s.x, params.origin.x), params.scale.x), 0.0f), 65535.0f);
    float qy = fminf(fmaxf(__fmul_rn(__fsub_rn(s.y, params.origin.y), params.scale.y), 0.0f), 65535.0f);
    keys[i] = spread((u32)qx) | (spread((u32)qy) << 1u);
    order[i] = i;
}
