// #include "common/dispatch.cuh"
// #include "common/vcolor_hash.cuh"

// CUDA twin of shaders/vcolor_eject_propose.wgsl. Color reduction, ejection round, step 1 of 3,
// over the defect list (grid-stride loop): every defect v proposes a color c in 1 .. k-1
// (k = range.color) that minimizes the number of same-class neighbours holding c: the smallest
// free color if there is one, else the color that ejects the fewest neighbours, ties broken by a
// hash of (v, c, round); the tabu color only if free. round_number = round_base[0] +
// range.pad (the round within the submit).

#define MAX_EJECT_COLORS 32u

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
    u32 threads = gridDim.x * gridDim.y * WORKGROUP_SIZE;
    u32 first = linear_index();
    u32 k = min(range.color, MAX_EJECT_COLORS + 1u);
    u32 round_number = round_base[0] + range.pad;
    u32 len = defect_count[0];
    for (u32 i = first; i < len; i = i + threads) {
        u32 v = defects[i];
        u32 holders[MAX_EJECT_COLORS];
        for (u32 c = 0u; c < MAX_EJECT_COLORS; c = c + 1u) {
            holders[c] = 0u;
        }
        u32 class_v = vertex_class[v];
        for (u32 j = adjacency_offsets[v]; j < adjacency_offsets[v + 1u]; j = j + 1u) {
            u32 u = adjacency[j];
            u32 c = colors[u];
            if (vertex_class[u] == class_v && c != 0u && c < k) {
                holders[c - 1u] = holders[c - 1u] + 1u;
            }
        }
        u32 best = 0u;
        u32 best_holders = 0xffffffffu;
        u32 best_tie = 0xffffffffu;
        for (u32 c = 1u; c < k; c = c + 1u) {
            u32 h = holders[c - 1u];
            if (h != 0u && c == tabu[v]) {
                continue;
            }
            u32 tie = h == 0u ? c : round_hash(v * MAX_EJECT_COLORS + c, round_number);
            if (h < best_holders || (h == best_holders && tie < best_tie)) {
                best = c;
                best_holders = h;
                best_tie = tie;
            }
        }
        proposal[v] = best;
    }
}
