// #include "common/dispatch.cuh"
// #include "common/vcolor_hash.cuh"
// #include "common/vcolor_eject_resolve.cuh"

// CUDA twin of shaders/vcolor_eject_resolve.wgsl. Color reduction, ejection round, step 2 of 3,
// over the defect list (grid-stride loop): winner[v] = 1 when defect v keeps its proposal
// (proposal_wins in common/vcolor_eject_resolve.cuh), 0 for the other defects.

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
    await_previous_launches();
    u32 threads = gridDim.x * gridDim.y * WORKGROUP_SIZE;
    u32 round_number = round_base[0] + range.pad;
    u32 len = defect_count[0];
    for (u32 i = linear_index(); i < len; i = i + threads) {
        u32 v = defects[i];
        winner[v] = proposal_wins(
            v, round_number, adjacency_offsets, adjacency, vertex_class, colors, proposal);
    }
}
