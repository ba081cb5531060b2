// #include "common/dispatch.cuh"
// #include "common/vcolor_first_fit.cuh"

// CUDA twin of shaders/vcolor_recolor.wgsl. Iterated-greedy recoloring (Culberson): all colors
// were cleared and old colors saved; the host launches this kernel once per old color
// c = range.color, highest first. Every vertex whose old color is c takes the smallest color
// unused by the neighbours recolored before it. An old color class is an independent set (in
// every vertex class), so the vertices of one launch never read each other's new colors: no
// races, and the result never needs more colors than the old coloring.

extern "C" __global__ void vcolor_recolor(
    const u32* __restrict__ adjacency_offsets,
    const u32* __restrict__ adjacency,
    const u32* __restrict__ vertex_class,
    const u32* __restrict__ old_colors,
    u32* colors,
    ItemRange range) {
    u32 v = linear_index();
    if (v >= range.count || old_colors[v] != range.color) {
        return;
    }
    colors[v] = smallest_free_color(v, adjacency_offsets, adjacency, vertex_class, colors);
}
