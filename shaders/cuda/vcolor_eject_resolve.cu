// #include "common/dispatch.cuh"
// #include "common/vcolor_hash.cuh"

// CUDA twin of shaders/vcolor_eject_resolve.wgsl. Color reduction, ejection round, step 2 of 3:
// an uncolored vertex v wins its proposal unless a same-class uncolored neighbour u proposed
// the same color with a higher priority (round_hash(u, round_number) smaller, ties by number).
// winner[v] = 1 for winners, 0 for every other vertex.

extern "C" __global__ void vcolor_eject_resolve(
    const u32* __restrict__ adjacency_offsets,
    const u32* __restrict__ adjacency,
    const u32* __restrict__ vertex_class,
    const u32* __restrict__ colors,
    const u32* __restrict__ proposal,
    const u32* __restrict__ round_base,
    u32* __restrict__ winner,
    ItemRange range) {
    u32 v = linear_index();
    if (v >= range.count) {
        return;
    }
    u32 p = proposal[v];
    if (colors[v] != 0u || p == 0u) {
        winner[v] = 0u;
        return;
    }
    u32 round_number = round_base[0] + range.first;
    u32 pv = round_hash(v, round_number);
    u32 class_v = vertex_class[v];
    u32 wins = 1u;
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
