// #include "common/dispatch.cuh"

// CUDA twin of shaders/vcolor_eject_apply.wgsl. Color reduction, ejection round, step 3 of 3:
// each winner takes its proposed color and ejects the same-class neighbours that held it
// (uncolored, that color becomes their tabu, defect flag set). Races are benign (see the WGSL
// file): two winners ejecting one vertex write the same values, and neighbouring winners
// proposed different colors. Colors are read volatile: other threads eject in this launch.

extern "C" __global__ void vcolor_eject_apply(
    const u32* __restrict__ adjacency_offsets,
    const u32* __restrict__ adjacency,
    const u32* __restrict__ vertex_class,
    const u32* __restrict__ proposal,
    const u32* __restrict__ winner,
    u32* colors,
    u32* __restrict__ tabu,
    u32* __restrict__ defect,
    ItemRange range) {
    u32 v = linear_index();
    if (v >= range.count || winner[v] == 0u) {
        return;
    }
    u32 c = proposal[v];
    volatile u32* shared_colors = colors;
    shared_colors[v] = c;
    defect[v] = 0u;
    u32 class_v = vertex_class[v];
    for (u32 j = adjacency_offsets[v]; j < adjacency_offsets[v + 1u]; j = j + 1u) {
        u32 u = adjacency[j];
        if (vertex_class[u] == class_v && shared_colors[u] == c) {
            shared_colors[u] = 0u;
            tabu[u] = c;
            defect[u] = 1u;
        }
    }
}
