// #include "common/dispatch.cuh"
// #include "common/vcolor_hash.cuh"

// CUDA twin of shaders/vcolor_eject_resolve.wgsl. Color reduction, ejection round, step 2 of 3,
// over the defect list (grid-stride loop): a defect v wins its proposal unless a same-class
// uncolored neighbour u proposed the same color with a higher priority (round_hash(u,
// round_number) smaller, ties by number). winner[v] = 1 for winners, 0 for the other defects.

extern "C" __global__ void vcolor_eject_resolve(
    const u32* __restrict__ adjacency_offsets,
    const u32* __restrict__ adjacency,
    const u32* __restrict__ vertex_class,
    const u32* __restrict__ colors,
    const u32* __restrict__ proposal,
    const u32* __restrict__ round_base,
    const u32* __restrict__ defects,
    const u32* __restrict__ defect_count,
    u32* __restrict__ winner,
    ItemRange range) {
    u32 threads = gridDim.x * gridDim.y * WORKGROUP_SIZE;
    u32 round_number = round_base[0] + range.pad;
    u32 len = defect_count[0];
    for (u32 i = linear_index(); i < len; i = i + threads) {
        u32 v = defects[i];
        u32 p = proposal[v];
        u32 wins = p == 0u ? 0u : 1u;
        u32 pv = round_hash(v, round_number);
        u32 class_v = vertex_class[v];
        for (u32 j = adjacency_offsets[v]; j < adjacency_offsets[v + 1u]; j = j + 1u) {
            u32 u = adjacency[j];
            if (vertex_class[u] == class_v && colors[u] == 0u && proposal[u] == p) {
                u32 pu = round_hash(u, round_number);
                if (pu < pv || (pu == pv && u < v)) {
                    wins = 0u;
                }
            }
        }
        winner[v] = wins;
    }
}
