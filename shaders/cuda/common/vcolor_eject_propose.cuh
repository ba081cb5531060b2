// CUDA twin of shaders/common/vcolor_eject_propose.wgsl: ejection round, step 1, per defect,
// shared by vcolor_eject_propose and vcolor_eject_tail. WGSL reads the kernel's bindings; here
// the kernel passes them in. Needs common/vcolor_hash.cuh.

/// Colors the proposal counts holders of (MAX_EJECT_COLORS in src/color/reduce.rs).
#define MAX_EJECT_COLORS 32u

/// The color defect v proposes in round `round_number` below color k: the c in 1 .. k-1 that
/// minimizes h(c), the same-class neighbours holding c; a free color (the smallest) if there is
/// one, else the fewest holders, ties broken by round_hash(v * MAX_EJECT_COLORS + c, round);
/// tabu[v] only if free.
__device__ __forceinline__ u32 proposed_color(
    u32 v,
    u32 k,
    u32 round_number,
    const u32* adjacency_offsets,
    const u32* adjacency,
    const u32* vertex_class,
    const u32* colors,
    const u32* tabu) {
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
    return best;
}
