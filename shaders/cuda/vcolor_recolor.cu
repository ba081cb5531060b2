// #include "common/dispatch.cuh"
// #include "common/vcolor_first_fit.cuh"

// CUDA twin of shaders/vcolor_recolor.wgsl. Iterated greedy (color reduction), step 4 of 4: the
// host launches this kernel once per old color c = range.color, highest first; the vertices of
// class c, order[class_first[c - 1] .. class_first[c]], take the smallest color unused by the
// neighbours recolored before them. A class is an independent set, so the vertices of one
// launch never read each other's new colors. Grid-stride loop over the class.

extern "C" __global__ void vcolor_recolor(
    const u32* __restrict__ adjacency_offsets,
    const u32* __restrict__ adjacency,
    const u32* __restrict__ vertex_class,
    const u32* __restrict__ order,
    const u32* __restrict__ class_first,
    u32* colors,
    ItemRange range) {
    await_previous_launches();
    u32 threads = gridDim.x * gridDim.y * WORKGROUP_SIZE;
    u32 end = class_first[range.color];
    for (u32 i = class_first[range.color - 1u] + linear_index(); i < end; i = i + threads) {
        u32 v = order[i];
        colors[v] = smallest_free_color(v, adjacency_offsets, adjacency, vertex_class, colors);
    }
}
