// #include "common/dispatch.cuh"
// #include "common/vcolor_hash.cuh"
// #include "common/vcolor_eject_propose.cuh"

// CUDA twin of shaders/vcolor_eject_propose.wgsl. Color reduction, ejection round, step 1 of 3,
// over the defect list (grid-stride loop): every defect v proposes a color in 1 .. k-1 (k =
// range.color), proposed_color in common/vcolor_eject_propose.cuh. round_number =
// round_base[0] + range.pad (the round within the submit).

extern "C" __global__ void vcolor_eject_propose(
    const u32* __restrict__ adjacency_offsets,
    const u32* __restrict__ adjacency,
    const u32* __restrict__ vertex_class,
    const u32* __restrict__ colors,
    const u32* __restrict__ tabu,
    const u32* __restrict__ round_base,
    const u32* __restrict__ defects,
    const u32* __restrict__ defect_count,
    u32* __restrict__ proposal,
    ItemRange range) {
    await_previous_launches();
    u32 threads = gridDim.x * gridDim.y * WORKGROUP_SIZE;
    u32 k = min(range.color, MAX_EJECT_COLORS + 1u);
    u32 round_number = round_base[0] + range.pad;
    u32 len = defect_count[0];
    for (u32 i = linear_index(); i < len; i = i + threads) {
        u32 v = defects[i];
        proposal[v] = proposed_color(
            v, k, round_number, adjacency_offsets, adjacency, vertex_class, colors, tabu);
    }
}
