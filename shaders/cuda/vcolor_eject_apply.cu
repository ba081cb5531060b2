// #include "common/dispatch.cuh"

// CUDA twin of shaders/vcolor_eject_apply.wgsl. Color reduction, ejection round, step 3 of 3:
// winners take their proposed color; a colored vertex holding the color a same-class
// neighbouring winner takes is ejected (uncolored, that color becomes its tabu). Each thread
// writes only its own vertex. defect[v] = 1 for the vertices left uncolored.

extern "C" __global__ void vcolor_eject_apply(
    const u32* __restrict__ adjacency_offsets,
    const u32* __restrict__ adjacency,
    const u32* __restrict__ vertex_class,
    const u32* __restrict__ proposal,
    const u32* __restrict__ winner,
    u32* __restrict__ colors,
    u32* __restrict__ tabu,
    u32* __restrict__ defect,
    ItemRange range) {
    u32 v = linear_index();
    if (v >= range.count) {
        return;
    }
    if (winner[v] != 0u) {
        colors[v] = proposal[v];
        defect[v] = 0u;
        return;
    }
    u32 c = colors[v];
    if (c == 0u) {
        defect[v] = 1u;
        return;
    }
    u32 class_v = vertex_class[v];
    for (u32 j = adjacency_offsets[v]; j < adjacency_offsets[v + 1u]; j = j + 1u) {
        u32 u = adjacency[j];
        if (vertex_class[u] == class_v && winner[u] != 0u && proposal[u] == c) {
            colors[v] = 0u;
            tabu[v] = c;
            defect[v] = 1u;
            return;
        }
    }
    defect[v] = 0u;
}
