// CUDA twin of shaders/common/vcolor_eject_resolve.wgsl: ejection round, step 2, per defect,
// shared by vcolor_eject_resolve and vcolor_eject_tail. Needs common/vcolor_hash.cuh.

/// 1 when defect v keeps its proposal p = proposal[v] in round `round_number`, else 0 (also for
/// p = 0): v loses to a same-class uncolored neighbour u that proposed p with a higher priority
/// (round_hash(u, round) smaller, ties by number).
__device__ __forceinline__ u32 proposal_wins(
    u32 v,
    u32 round_number,
    const u32* adjacency_offsets,
    const u32* adjacency,
    const u32* vertex_class,
    const u32* colors,
    const u32* proposal) {
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
    return wins;
}
