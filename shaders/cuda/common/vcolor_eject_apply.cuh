// CUDA twin of shaders/common/vcolor_eject_apply.wgsl: ejection round, step 3, one block's
// chunk of the defect list, shared by vcolor_eject_apply and vcolor_eject_tail. Each winner
// takes its proposed color and ejects the same-class neighbours that held it (uncolored, that
// color becomes their tabu); the losers and the ejected vertices form the next list,
// next_defects[0 .. next_count[0]] (next_count in global memory for the round kernel, in
// shared memory for the tail). A vertex two winners eject is listed once, by the winner whose
// atomicExch first stamps listed[u] with the round's stamp. Appends are gathered per block
// (claims at adjacency positions below 64 kept as bits, one atomicAdd per block; later
// positions take a slot at once). Colors are read volatile: other threads eject in this step.

/// Step 3 for list entry i (< len, else only the barriers) of a chunk of WORKGROUP_SIZE
/// entries, thread `lid` of the block; `stamp` = round + 1; local_count and local_first are the
/// block's shared words. Has __syncthreads(): every thread of the block calls it.
__device__ __forceinline__ void apply_chunk(
    u32 i,
    u32 len,
    u32 lid,
    u32 stamp,
    const u32* adjacency_offsets,
    const u32* adjacency,
    const u32* vertex_class,
    const u32* proposal,
    const u32* winner,
    const u32* defects,
    volatile u32* colors,
    u32* tabu,
    u32* listed,
    u32* next_defects,
    u32* next_count,
    u32* local_count,
    u32* local_first) {
    if (lid == 0u) {
        *local_count = 0u;
    }
    __syncthreads();
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
            colors[v] = c;
            u32 class_v = vertex_class[v];
            begin = adjacency_offsets[v];
            for (u32 j = begin; j < adjacency_offsets[v + 1u]; j = j + 1u) {
                u32 u = adjacency[j];
                if (vertex_class[u] == class_v && colors[u] == c) {
                    colors[u] = 0u;
                    tabu[u] = c;
                    if (atomicExch(&listed[u], stamp) != stamp) {
                        u32 at = j - begin;
                        if (at < 64u) {
                            claimed[at / 32u] = claimed[at / 32u] | (1u << (at % 32u));
                            entries = entries + 1u;
                        } else {
                            next_defects[atomicAdd(next_count, 1u)] = u;
                        }
                    }
                }
            }
        } else {
            entries = 1u;
        }
    }
    u32 slot = atomicAdd(local_count, entries);
    __syncthreads();
    if (lid == 0u) {
        *local_first = atomicAdd(next_count, *local_count);
    }
    __syncthreads();
    u32 at = *local_first + slot;
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
