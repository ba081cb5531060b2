// #include "common/dispatch.cuh"
// #include "common/amr_tree.cuh"

// CUDA twin of shaders/amr_smooth.wgsl. One pass of the 2:1 smoothing of the flags (GK19
// Algorithm 2; AdaptiveMesh::smooth_flags in src/solver/dg/amr/tree.rs), every rule in one
// launch over the faces of the current mesh (there are at least as many faces as elements:
// each element has three sides, a face touches two). Thread t:
//   slot t: no refinement past the maximum level and no coarsening of a root (read that way
//      everywhere, stored by a compare-exchange that never undoes a raise), and a coarsening
//      flag stands only if all four siblings are active and flagged -1 (the cluster rule);
//   face t: the side that would end more than one level coarser than the other is raised to
//      one level below it.
// The rules only raise flags (-1 -> 0 -> +1) and every raise is forced, so the passes end at
// the least admissible flags above the start whatever the order of the raises: no colors are
// needed, a raise is an atomic max (a compare-exchange loop on the i32 bits) and a read sees
// the flag as it stands (volatile loads). range.color is the pass number within the
// submission; a raise records it in counters[C_LAST_CHANGE] (atomic max), which amr_count
// phase 0 hands to counters[C_CHANGED] at the end of the submission: below the last pass means
// settled.
//
// flags: the flags' i32 bits. faces: DgEdge records (8 words: left, right, info, normal,
// length, midpoint).

// Flag bits `bits` of an element at `level` as the smoothing reads them: within -1..1, 0 for
// a refinement past the maximum level or a coarsening of a root.
__device__ __forceinline__ int admissible(u32 bits, u32 level, const AmrParams& params) {
    int f = max(-1, min((int)bits, 1));
    if ((f > 0 && level >= params.max_level) || (f < 0 && level == 0u)) {
        return 0;
    }
    return f;
}

__device__ __forceinline__ u32 load_flag(const u32* flags, u32 pos) {
    return *(const volatile u32*)(flags + pos);
}

// Raise the flag of slot pos (at `level`) to `wanted` unless it is there already.
__device__ void raise_flag(
    u32* flags, u32* counters, u32 pos, u32 level, int wanted, const AmrParams& params,
    u32 pass_number) {
    u32 old = load_flag(flags, pos);
    while (admissible(old, level, params) < wanted) {
        u32 seen = atomicCAS(flags + pos, old, (u32)wanted);
        if (seen == old) {
            atomicMax(&counters[C_LAST_CHANGE], pass_number);
            return;
        }
        old = seen;
    }
}

// Store the flag of slot pos as it reads (a refinement past the maximum level or a coarsening
// of a root becomes 0), so later phases read it so too; a raise since the load wins.
__device__ int settle(u32* flags, u32 pos, u32 level, const AmrParams& params) {
    u32 bits = load_flag(flags, pos);
    while (true) {
        int f = admissible(bits, level, params);
        if (f == max(-1, min((int)bits, 1))) {
            return f;
        }
        u32 seen = atomicCAS(flags + pos, bits, (u32)f);
        if (seen == bits) {
            return f;
        }
        bits = seen;
    }
}

extern "C" __global__ void amr_smooth(
    const u32* __restrict__ slots,
    const uint4* __restrict__ element_tree,
    u32* flags,
    const u32* __restrict__ faces,
    u32* counters,
    AmrParams params,
    ItemRange range) {
    u32 t = linear_index();
    if (t >= range.count) {
        return;
    }
    if (t < *(const volatile u32*)(counters + C_ACTIVE)) {
        u32 id = slots[t];
        u32 level = element_tree[id].x;
        int f = settle(flags, t, level, params);
        if (f < 0) {
            u32 block = element_tree[element_tree[id].y].z;
            bool whole = true;
            for (u32 c = 0u; c < 4u; c = c + 1u) {
                u32 pos = element_tree[block + c].w;
                if (pos == NONE || admissible(load_flag(flags, pos), level, params) >= 0) {
                    whole = false;
                }
            }
            if (!whole) {
                raise_flag(flags, counters, t, level, 0, params, range.color);
            }
        }
    }
    if (t < *(const volatile u32*)(counters + C_COLOR_OFFSETS + 2u * params.base_colors)) {
        u32 l = faces[8u * t];
        u32 r = faces[8u * t + 1u];
        if (r == NONE) {
            return;
        }
        u32 level_l = element_tree[slots[l]].x;
        u32 level_r = element_tree[slots[r]].x;
        int after_l = (int)level_l + admissible(load_flag(flags, l), level_l, params);
        int after_r = (int)level_r + admissible(load_flag(flags, r), level_r, params);
        if (after_l - after_r > 1) {
            raise_flag(
                flags, counters, r, level_r, after_l - 1 - (int)level_r, params, range.color);
        } else if (after_r - after_l > 1) {
            raise_flag(
                flags, counters, l, level_l, after_r - 1 - (int)level_l, params, range.color);
        }
    }
}
