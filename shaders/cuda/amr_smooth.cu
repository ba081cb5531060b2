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
// A thread that raises a flag follows the raises it forces (chase), so chains of them settle
// in few passes.
// The rules only raise flags (-1 -> 0 -> +1) and every raise is forced, so the passes end at
// the least admissible flags above the start whatever the order of the raises: no colors are
// needed, a raise is an atomic max (a compare-exchange loop on the i32 bits) and a read sees
// the flag as it stands (volatile loads). range.color is the pass number within the
// submission; a raise records it in counters[C_LAST_CHANGE] (atomic max), which amr_count
// phase 0 hands to counters[C_CHANGED] at the end of the submission: below the last pass means
// settled.
//
// flags: the flags' i32 bits. neighbors: the current mesh's face neighbours (the DG solver's):
// NE blocks of (side 0, 1, 2, split mask), then NE of the second halves. faces: DgEdge records (8 words: left, right, info, normal,
// length, midpoint).
//
// The WGSL override constant is a preprocessor define here (the host passes a -D value).

#ifndef NE
#define NE 1u
#endif
// Slots a chase holds waiting and examines at most (chase).
#define CHASE_STACK 8u
#define CHASE_STEPS 32u

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

// Raise the flag of slot pos (at `level`) to `wanted` unless it is there already; whether
// this call raised it.
__device__ bool raise_flag(
    u32* flags, u32* counters, u32 pos, u32 level, int wanted, const AmrParams& params,
    u32 pass_number) {
    u32 old = load_flag(flags, pos);
    while (admissible(old, level, params) < wanted) {
        u32 seen = atomicCAS(flags + pos, old, (u32)wanted);
        if (seen == old) {
            atomicMax(&counters[C_LAST_CHANGE], pass_number);
            return true;
        }
        old = seen;
    }
    return false;
}

// Slot across side k of slot pos in the current mesh: sides 0..2, then the second halves of
// split sides (3..5); NONE on a boundary (the faces' pairs, as the solver's neighbours).
__device__ __forceinline__ u32 neighbour(const uint4* neighbors, u32 pos, u32 k) {
    return k < 3u ? word(neighbors, pos, k) : word(neighbors, NE + pos, k - 3u);
}

// The raises a raise of slot `start` forces, followed in this thread (depth first, CHASE_STACK
// slots waiting, CHASE_STEPS slots examined at most): its face neighbours that would end more
// than one level coarser, and, once its flag no longer asks to coarsen, its siblings' -1 (the
// cluster rule). A chain of forced raises then settles in one pass instead of one pass a link;
// what the bounds leave waits for the next pass.
__device__ void chase(
    u32 start,
    const u32* slots,
    const uint4* element_tree,
    u32* flags,
    u32* counters,
    const uint4* neighbors,
    const AmrParams& params,
    u32 pass_number) {
    u32 waiting[CHASE_STACK];
    waiting[0] = start;
    u32 top = 1u;
    for (u32 step = 0u; step < CHASE_STEPS && top > 0u; step = step + 1u) {
        top = top - 1u;
        u32 pos = waiting[top];
        u32 id = slots[pos];
        u32 level = element_tree[id].x;
        int f = admissible(load_flag(flags, pos), level, params);
        int after = (int)level + f;
        for (u32 k = 0u; k < 6u; k = k + 1u) {
            u32 j = neighbour(neighbors, pos, k);
            if (j == NONE) {
                continue;
            }
            u32 level_j = element_tree[slots[j]].x;
            if (raise_flag(flags, counters, j, level_j, after - 1 - (int)level_j, params,
                           pass_number) &&
                top < CHASE_STACK) {
                waiting[top] = j;
                top = top + 1u;
            }
        }
        u32 parent = element_tree[id].y;
        if (f < 0 || parent == NONE) {
            continue;
        }
        u32 block = element_tree[parent].z;
        for (u32 c = 0u; c < 4u; c = c + 1u) {
            u32 sibling = element_tree[block + c].w;
            if (sibling != NONE &&
                raise_flag(flags, counters, sibling, level, 0, params, pass_number) &&
                top < CHASE_STACK) {
                waiting[top] = sibling;
                top = top + 1u;
            }
        }
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
    const uint4* __restrict__ neighbors,
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
            if (!whole && raise_flag(flags, counters, t, level, 0, params, range.color)) {
                chase(t, slots, element_tree, flags, counters, neighbors, params, range.color);
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
        u32 raised = NONE;
        if (after_l - after_r > 1 &&
            raise_flag(
                flags, counters, r, level_r, after_l - 1 - (int)level_r, params, range.color)) {
            raised = r;
        } else if (after_r - after_l > 1 &&
                   raise_flag(flags, counters, l, level_l, after_r - 1 - (int)level_l, params,
                              range.color)) {
            raised = l;
        }
        if (raised != NONE) {
            chase(raised, slots, element_tree, flags, counters, neighbors, params, range.color);
        }
    }
}
