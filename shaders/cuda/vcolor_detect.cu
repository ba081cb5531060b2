// #include "common/dispatch.cuh"
// #include "common/vcolor_hash.cuh"

// CUDA twin of shaders/vcolor_detect.wgsl. Speculative greedy vertex coloring, conflict phase:
// worklist entry i is flagged (1) when its vertex v shares its color with a neighbour u of the
// same class that has higher priority. Priorities are a hash of the vertex number (ties broken
// by the number), so in every conflict one vertex keeps its color and each round makes
// progress (see the WGSL file for why hashing matters on wide GPUs).

/// True when u beats v in a conflict.
__device__ __forceinline__ bool wins(u32 u, u32 v) {
    u32 pu = lowbias32(u);
    u32 pv = lowbias32(v);
    return pu < pv || (pu == pv && u < v);
}

extern "C" __global__ void vcolor_detect(
    const u32* __restrict__ adjacency_offsets,
    const u32* __restrict__ adjacency,
    const u32* __restrict__ vertex_class,
    const u32* __restrict__ worklist,
    const u32* __restrict__ colors,
    u32* __restrict__ conflict,
    const u32* __restrict__ live_count,
    ItemRange range) {
    await_previous_launches();
    u32 i = linear_index();
    if (i >= range.count) {
        return;
    }
    if (i >= live_count[0]) {
        conflict[i] = 0u;
        return;
    }
    u32 v = worklist[i];
    u32 c = colors[v];
    u32 class_v = vertex_class[v];
    u32 flag = 0u;
    for (u32 j = adjacency_offsets[v]; j < adjacency_offsets[v + 1u]; j = j + 1u) {
        u32 u = adjacency[j];
        if (colors[u] == c && vertex_class[u] == class_v && wins(u, v)) {
            flag = 1u;
        }
    }
    conflict[i] = flag;
}
