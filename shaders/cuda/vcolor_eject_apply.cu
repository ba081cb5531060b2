// #include "common/dispatch.cuh"

// CUDA twin of shaders/vcolor_eject_apply.wgsl. Color reduction, ejection round, step 3 of 3,
// over the defect list: each winner takes its proposed color and ejects the same-class
// neighbours that held it (uncolored, that color becomes their tabu); the losers and the ejected
// vertices form the next list, next_defects[0 .. next_count[0]]. A vertex two winners eject is
// listed once, by the winner whose atomicExch first stamps listed[u] with the round. Appends
// are gathered per block (claims at adjacency positions below 64 kept as bits, one atomicAdd
// per block; later positions take a slot at once), in a grid-stride loop over whole blocks.
// Colors are read volatile: other threads eject in this launch.

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
    __shared__ u32 local_count;
    __shared__ u32 local_first;
    u32 lid = threadIdx.x;
    u32 threads = gridDim.x * gridDim.y * WORKGROUP_SIZE;
    u32 group = blockIdx.x + blockIdx.y * gridDim.x;
    u32 len = defect_count[0];
    u32 stamp = round_base[0] + range.pad + 1u;
    volatile u32* shared_colors = colors;
    for (u32 chunk = group * WORKGROUP_SIZE; chunk < len; chunk = chunk + threads) {
        if (lid == 0u) {
            local_count = 0u;
        }
        __syncthreads();
        u32 i = chunk + lid;
        u32 v = 0u;
        bool won = false;
        u32 entries = 0u;
        u32 claimed[2] = {0u, 0u};
        u32 begin = 0u;
        if (i < len) {
            v = defects[i];
            if (winner[v] != 0u) {
                won = true;
                u32 c = proposal[v];
                shared_colors[v] = c;
                u32 class_v = vertex_class[v];
                begin = adjacency_offsets[v];
                for (u32 j = begin; j < adjacency_offsets[v + 1u]; j = j + 1u) {
                    u32 u = adjacency[j];
                    if (vertex_class[u] == class_v && shared_colors[u] == c) {
                        shared_colors[u] = 0u;
                        tabu[u] = c;
                        if (atomicExch(&listed[u], stamp) != stamp) {
                            u32 at = j - begin;
                            if (at < 64u) {
                                claimed[at / 32u] = claimed[at / 32u] | (1u << (at % 32u));
                                entries = entries + 1u;
                            } else {
                                next_defects[atomicAdd(&next_count[0], 1u)] = u;
                            }
                        }
                    }
                }
            } else {
                entries = 1u;
            }
        }
        u32 slot = atomicAdd(&local_count, entries);
        __syncthreads();
        if (lid == 0u) {
            local_first = atomicAdd(&next_count[0], local_count);
        }
        __syncthreads();
        u32 at = local_first + slot;
        if (i < len && !won) {
            next_defects[at] = v;
        }
        for (u32 half = 0u; half < 2u; half = half + 1u) {
            u32 bits = claimed[half];
            while (bits != 0u) {
                u32 b = (u32)(__ffs((int)bits) - 1);
                bits = bits & (bits - 1u);
                next_defects[at] = adjacency[begin + 32u * half + b];
                at = at + 1u;
            }
        }
    }
}
