// #include "common/dispatch.cuh"
// #include "common/vcolor_first_fit.cuh"

// CUDA twin of shaders/vcolor_assign.wgsl. Speculative greedy vertex coloring (Li et al.),
// assignment phase: every uncolored vertex of the worklist takes the smallest color (1-based)
// not used by its neighbours of the same class, reading neighbour colors as they are now (a
// neighbour colored in this same launch may be missed: the conflict phase catches that).

extern "C" __global__ void vcolor_assign(
    const u32* __restrict__ adjacency_offsets,
    const u32* __restrict__ adjacency,
    const u32* __restrict__ vertex_class,
    const u32* __restrict__ worklist,
    u32* colors,
    const u32* __restrict__ live_count,
    ItemRange range) {
    await_previous_launches();
    u32 i = linear_index();
    if (i >= min(range.count, live_count[0])) {
        return;
    }
    u32 v = worklist[range.first + i];
    if (colors[v] != 0u) {
        return;
    }
    colors[v] = smallest_free_color(v, adjacency_offsets, adjacency, vertex_class, colors);
}
