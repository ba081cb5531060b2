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
// submission; a block that raised records it in counters[C_LAST_CHANGE] (atomic max), which
// amr_count phase 0 hands to counters[C_CHANGED] at the end of the submission: below the last
// pass means settled. A pass after one that raised nothing returns at once. Pass 0
// (range.color = 0) only writes slot_info for the passes after it.
//
// flags: the flags' i32 bits. neighbors: the current mesh's face neighbours (the DG solver's):
// NE blocks of (side 0, 1, 2, split mask), then NE of the second halves. slot_info: per slot,
// its element's level and the slots of its three siblings (NONE for a root, or for a sibling
// that is not active), written by pass 0 so that the passes reach a slot's level and its
// siblings' slots in one load: the chase's steps are chains of dependent loads, each a memory
// latency. faces: DgEdge records (8 words: left, right, info, normal, length, midpoint).
//
// The WGSL override constant is a preprocessor define here (the host passes a -D value).

#ifndef NE
#define NE 1u
#endif
// Slots a chase holds waiting and examines at most (chase).
#define CHASE_STACK 8u
// A chase's mark for a neighbour it need not raise (a raise asks for at least 0).
#define NO_RAISE (-1)
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

// Read by one thread of the block for all: the last pass that raised, the active slots, the
// faces.
__shared__ u32 pass_counts[3];
// Whether a thread of the block raised a flag: one atomic on the counters per block.
__shared__ u32 raised_in_group;

__device__ __forceinline__ u32 load_flag(const u32* flags, u32 pos) {
    return *(const volatile u32*)(flags + pos);
}

// Raise the flag of slot pos (at `level`) to `wanted` unless it is there already; whether
// this call raised it.
__device__ bool raise_flag(u32* flags, u32 pos, u32 level, int wanted, const AmrParams& params) {
    u32 old = load_flag(flags, pos);
    while (admissible(old, level, params) < wanted) {
        u32 seen = atomicCAS(flags + pos, old, (u32)wanted);
        if (seen == old) {
            raised_in_group = 1u;
            return true;
        }
        old = seen;
    }
    return false;
}

// Sibling c (0..2) of a slot from its slot_info record.
__device__ __forceinline__ u32 sibling(uint4 info, u32 c) {
    return c == 0u ? info.y : (c == 1u ? info.z : info.w);
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
// what the bounds leave waits for the next pass. A step loads every neighbour's and sibling's
// slot, level and flag before it raises any, and then tries all its raises at once, so their
// chains of dependent loads and their compare-exchanges are in flight together instead of one
// after another.
__device__ void chase(
    u32 start,
    const uint4* slot_info,
    u32* flags,
    const uint4* neighbors,
    const AmrParams& params) {
    u32 waiting[CHASE_STACK];
    waiting[0] = start;
    u32 top = 1u;
    for (u32 step = 0u; step < CHASE_STEPS && top > 0u; step = step + 1u) {
        top = top - 1u;
        u32 pos = waiting[top];
        uint4 own = slot_info[pos];
        u32 level = own.x;
        int f = admissible(load_flag(flags, pos), level, params);
        int after = (int)level + f;
        // Nine candidates: the slots across sides 0..5 and the three siblings (whose -1 the
        // cluster rule lifts once this flag no longer asks to coarsen); each one's level, its
        // flag bits as loaded, and the flag it needs raised to (or NO_RAISE).
        u32 candidate[9];
        u32 level_at[9];
        u32 bits[9];
        int wanted[9];
#pragma unroll
        for (u32 k = 0u; k < 6u; k = k + 1u) {
            candidate[k] = neighbour(neighbors, pos, k);
        }
#pragma unroll
        for (u32 c = 0u; c < 3u; c = c + 1u) {
            candidate[6u + c] = f >= 0 ? sibling(own, c) : NONE;
        }
#pragma unroll
        for (u32 k = 0u; k < 9u; k = k + 1u) {
            wanted[k] = NO_RAISE;
            if (candidate[k] != NONE) {
                int need = 0;
                level_at[k] = level;
                if (k < 6u) {
                    level_at[k] = slot_info[candidate[k]].x;
                    need = after - 1 - (int)level_at[k];
                }
                bits[k] = load_flag(flags, candidate[k]);
                if (admissible(bits[k], level_at[k], params) < need) {
                    wanted[k] = need;
                }
            }
        }
        // Every raise tried at once from the bits loaded, the compare-exchanges in flight
        // together; one that lost a race to another raise retries in raise_flag.
        bool swapped[9];
#pragma unroll
        for (u32 k = 0u; k < 9u; k = k + 1u) {
            swapped[k] = false;
            if (wanted[k] != NO_RAISE) {
                swapped[k] = atomicCAS(flags + candidate[k], bits[k], (u32)wanted[k]) == bits[k];
            }
        }
#pragma unroll
        for (u32 k = 0u; k < 9u; k = k + 1u) {
            if (wanted[k] != NO_RAISE) {
                if (swapped[k]) {
                    raised_in_group = 1u;
                }
                bool raised =
                    swapped[k] || raise_flag(flags, candidate[k], level_at[k], wanted[k], params);
                if (raised && top < CHASE_STACK) {
                    waiting[top] = candidate[k];
                    top = top + 1u;
                }
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

// The cluster rule of slot t (settling its flag first).
__device__ void cluster_rule(
    u32 t,
    const uint4* slot_info,
    u32* flags,
    const uint4* neighbors,
    const AmrParams& params) {
    uint4 own = slot_info[t];
    u32 level = own.x;
    int f = settle(flags, t, level, params);
    if (f >= 0) {
        return;
    }
    // A root's -1 was settled to 0 above, so this slot has siblings.
    bool whole = true;
#pragma unroll
    for (u32 c = 0u; c < 3u; c = c + 1u) {
        u32 pos = sibling(own, c);
        if (pos == NONE || admissible(load_flag(flags, pos), level, params) >= 0) {
            whole = false;
        }
    }
    if (!whole && raise_flag(flags, t, level, 0, params)) {
        chase(t, slot_info, flags, neighbors, params);
    }
}

// The 2:1 rule across face f.
__device__ void face_rule(
    u32 f,
    const uint4* slot_info,
    u32* flags,
    const u32* faces,
    const uint4* neighbors,
    const AmrParams& params) {
    u32 l = faces[8u * f];
    u32 r = faces[8u * f + 1u];
    if (r == NONE) {
        return;
    }
    u32 level_l = slot_info[l].x;
    u32 level_r = slot_info[r].x;
    int after_l = (int)level_l + admissible(load_flag(flags, l), level_l, params);
    int after_r = (int)level_r + admissible(load_flag(flags, r), level_r, params);
    if (after_l - after_r > 1) {
        if (raise_flag(flags, r, level_r, after_l - 1 - (int)level_r, params)) {
            chase(r, slot_info, flags, neighbors, params);
        }
    } else if (after_r - after_l > 1) {
        if (raise_flag(flags, l, level_l, after_r - 1 - (int)level_l, params)) {
            chase(l, slot_info, flags, neighbors, params);
        }
    }
}

// Pass 0: slot_info of slot t.
__device__ void write_slot_info(
    u32 t,
    const u32* slots,
    const uint4* element_tree,
    const u32* counters,
    uint4* slot_info) {
    if (t >= *(const volatile u32*)(counters + C_ACTIVE)) {
        return;
    }
    u32 id = slots[t];
    uint4 own = element_tree[id];
    u32 info[4] = {own.x, NONE, NONE, NONE};
    if (own.y != NONE) {
        u32 block = element_tree[own.y].z;
        u32 k = 1u;
#pragma unroll
        for (u32 c = 0u; c < 4u; c = c + 1u) {
            if (block + c != id) {
                info[k] = element_tree[block + c].w;
                k = k + 1u;
            }
        }
    }
    slot_info[t] = make_uint4(info[0], info[1], info[2], info[3]);
}

extern "C" __global__ void amr_smooth(
    const u32* __restrict__ slots,
    const uint4* __restrict__ element_tree,
    u32* flags,
    const u32* __restrict__ faces,
    u32* counters,
    const uint4* __restrict__ neighbors,
    uint4* slot_info,
    AmrParams params,
    ItemRange range) {
    if (range.color == 0u) {
        write_slot_info(linear_index(), slots, element_tree, counters, slot_info);
        return;
    }
    if (threadIdx.x == 0u) {
        const volatile u32* c = counters;
        pass_counts[0] = c[C_LAST_CHANGE];
        pass_counts[1] = c[C_ACTIVE];
        pass_counts[2] = c[C_COLOR_OFFSETS + 2u * params.base_colors];
        raised_in_group = 0u;
    }
    __syncthreads();
    // Past a pass that raised nothing the flags are settled, and this pass would only confirm
    // it again (the counter holds the last pass that raised, 0 for none).
    if (pass_counts[0] + 1u < range.color) {
        return;
    }
    u32 t = linear_index();
    if (t < range.count && t < pass_counts[1]) {
        cluster_rule(t, slot_info, flags, neighbors, params);
    }
    if (t < range.count && t < pass_counts[2]) {
        face_rule(t, slot_info, flags, faces, neighbors, params);
    }
    __syncthreads();
    if (threadIdx.x == 0u && raised_in_group != 0u) {
        atomicMax(&counters[C_LAST_CHANGE], range.color);
    }
}
