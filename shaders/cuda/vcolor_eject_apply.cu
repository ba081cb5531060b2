// #include "common/dispatch.cuh"
// #include "common/vcolor_eject_apply.cuh"

// CUDA twin of shaders/vcolor_eject_apply.wgsl. Color reduction, ejection round, step 3 of 3,
// over the defect list: winners take their colors and eject the neighbours holding them, the
// losers and the ejected vertices form the next list, next_defects[0 .. next_count[0]]
// (apply_chunk in common/vcolor_eject_apply.cuh), in a grid-stride loop over whole blocks. The
// stamp of round round_base[0] + range.pad is that round + 1.

extern "C" __global__ void vcolor_eject_apply(
    const u32* __restrict__ adjacency_offsets,
    const u32* __restrict__ adjacency,
    const u32* __restrict__ vertex_class,
    const u32* __restrict__ proposal,
    const u32* __restrict__ winner,
    const u32* __restrict__ round_base,
    const u32* __restrict__ defects,
    const u32* __restrict__ defect_count,
    u32* colors,
    u32* __restrict__ tabu,
    u32* __restrict__ listed,
    u32* __restrict__ next_defects,
    u32* __restrict__ next_count,
    ItemRange range) {
    await_previous_launches();
    __shared__ u32 local_count;
    __shared__ u32 local_first;
    u32 lid = threadIdx.x;
    u32 threads = gridDim.x * gridDim.y * WORKGROUP_SIZE;
    u32 group = blockIdx.x + blockIdx.y * gridDim.x;
    u32 len = defect_count[0];
    u32 stamp = round_base[0] + range.pad + 1u;
    for (u32 chunk = group * WORKGROUP_SIZE; chunk < len; chunk = chunk + threads) {
        apply_chunk(chunk + lid, len, lid, stamp, adjacency_offsets, adjacency, vertex_class,
                    proposal, winner, defects, colors, tabu, listed, next_defects, next_count,
                    &local_count, &local_first);
    }
}
