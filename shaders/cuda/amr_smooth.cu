// #include "common/dispatch.cuh"
// #include "common/amr_tree.cuh"

// CUDA twin of shaders/amr_smooth.wgsl. The 2:1 smoothing of the flags (GK19 Algorithm 2) in
// two launches over the slots (AdaptiveMesh::smooth_flags_by_chains in
// src/solver/dg/amr/tree.rs is its CPU twin). With a_i = level_i + f_i the level element i ends
// at:
//   pass 0 (range.color = 0), thread t = slot t: its slot_info (level and siblings' slots), its
//      flag made admissible (no refinement past the maximum level, no coarsening of a root, a
//      -1 only if all four siblings are active and flagged -1: the cluster rule, on the flags
//      as they came) and stored, and top = max_i a_i into counters[C_SMOOTH_TOP];
//   the chains (range.color = 1), thread t = slot t: slot t's neighbours that would end more
//      than one level below it are raised to one below it, f_j <- max(f_j, a_i - 1 - level_j),
//      a raise that lifts a -1 lifts its siblings' -1 too, and every slot a thread raised is
//      followed by that thread in turn, its neighbours raised from the level it was raised to.
// Why one launch ends at the admissible flags: the mesh is 2:1 now, so a face can break the
// rule only where the higher side's neighbour is no finer than it, the one neighbour across
// that side, the first of the solver's neighbour records. At the end, take any slot i: if no
// thread raised it, its own thread read its final a_i and raised its neighbours to a_i - 1 or
// more; if one did, the thread whose raise left a_i did so when it followed i. Raises are
// atomic maxima, so no later one undoes that. Every raise is forced, so this ends at the least
// admissible flags above the start, as any order of the forced raises does
// (AdaptiveMesh::smooth_flags); no host check for convergence and no launch per level. A raise
// is an atomic max (a compare-exchange loop on the i32 bits) and a read sees the flag as it
// stands (volatile loads).
//
// How far a thread follows: a slot followed at level v raises its neighbours to v - 1 and lifts
// siblings at their own level, at most v - 1, so the slots a thread still has to follow form
// groups of at most 12 (3 neighbours, each with 3 siblings) at falling levels, the first below
// a_t <= max_level, and only a slot at level 2 or more can raise. With max_level <= MAX_LEVELS,
// (MAX_LEVELS - 1) groups of 12 are room for every chain; a thread short of room (never, by
// the above) sets bit 2 of counters[C_ERROR].
//
// flags: the flags' i32 bits. slot_info: per slot, its element's level and the slots of its
// three siblings (NONE for a root, or for a sibling that is not active), written by pass 0 so
// that the chains reach a slot's level and its siblings in one load. neighbors: the solver's
// neighbour records, per slot the slot across each side (on a split side one of its two
// halves), NONE on the boundary, and the split mask.

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

// Sibling c (0..2) of a slot from its slot_info record.
__device__ __forceinline__ u32 sibling(uint4 info, u32 c) {
    return c == 0u ? info.y : (c == 1u ? info.z : info.w);
}

// Raise the flag of slot pos (at `level`) to `wanted` unless it is there already; the flag it
// had when this call raised it, or `wanted` when it did not.
__device__ int raise_flag(u32* flags, u32 pos, u32 level, int wanted, const AmrParams& params) {
    u32 old = load_flag(flags, pos);
    int f = admissible(old, level, params);
    while (f < wanted) {
        u32 seen = atomicCAS(flags + pos, old, (u32)wanted);
        if (seen == old) {
            return f;
        }
        old = seen;
        f = admissible(old, level, params);
    }
    return wanted;
}

// Pass 0 for slot t: slot_info, the admissible flag stored, and a_t (0 past the active slots).
__device__ u32 first_pass(
    u32 t,
    const u32* slots,
    const uint4* element_tree,
    u32* flags,
    const u32* counters,
    uint4* slot_info,
    const AmrParams& params) {
    if (t >= *(const volatile u32*)(counters + C_ACTIVE)) {
        return 0u;
    }
    u32 id = slots[t];
    uint4 own = element_tree[id];
    u32 level = own.x;
    u32 info[4] = {level, NONE, NONE, NONE};
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
    u32 bits = load_flag(flags, t);
    int f = admissible(bits, level, params);
    if (f < 0) {
        // A root's -1 was read as 0 above, so this slot has siblings. Only this thread writes
        // this flag in pass 0, and a sibling's own pass may have lifted its -1 already, for a
        // reason that lifts this one too.
#pragma unroll
        for (u32 c = 1u; c < 4u; c = c + 1u) {
            if (info[c] == NONE || admissible(load_flag(flags, info[c]), level, params) >= 0) {
                f = 0;
            }
        }
    }
    if (f != (int)bits) {
        atomicExch(flags + t, (u32)f);
    }
    return (u32)((int)level + f);
}

// Slots a chain thread may still have to follow (the header's bound).
#define CHAIN_ROOM (12u * (MAX_LEVELS - 1u))

// The chains from slot t: its neighbours raised where the rule asks, then every slot this
// thread raised followed in turn (last raised first), with the level it raised it to.
__device__ void chains(
    u32 t,
    const uint4* slot_info,
    u32* flags,
    const uint4* neighbors,
    u32* counters,
    const AmrParams& params) {
    if (t >= *(const volatile u32*)(counters + C_ACTIVE)) {
        return;
    }
    uint4 own = slot_info[t];
    // (slot, level + flag this thread raised it to); slot t first, at a_t as it stands.
    uint2 pending[CHAIN_ROOM];
    pending[0] = make_uint2(t, (u32)((int)own.x + admissible(load_flag(flags, t), own.x, params)));
    u32 n = 1u;
    while (n > 0u) {
        n = n - 1u;
        uint2 from = pending[n];
        int after = (int)from.y;
        if (after < 2) {
            continue;
        }
        uint4 across = neighbors[from.x];
        for (u32 side = 0u; side < 3u; side = side + 1u) {
            u32 j = side == 0u ? across.x : (side == 1u ? across.y : across.z);
            if (j == NONE) {
                continue;
            }
            uint4 info = slot_info[j];
            int wanted = after - 1 - (int)info.x;
            int was = raise_flag(flags, j, info.x, wanted, params);
            if (was >= wanted) {
                continue;
            }
            // This thread raised j (and lifts its cluster when that took its -1): follow them.
            if (n + 4u > CHAIN_ROOM) {
                atomicOr(counters + C_ERROR, C_ERROR_CHAINS);
                return;
            }
            pending[n] = make_uint2(j, (u32)(after - 1));
            n = n + 1u;
            if (was >= 0) {
                continue;
            }
#pragma unroll
            for (u32 c = 0u; c < 3u; c = c + 1u) {
                u32 s = sibling(info, c);
                if (s != NONE && raise_flag(flags, s, info.x, 0, params) < 0) {
                    pending[n] = make_uint2(s, info.x);
                    n = n + 1u;
                }
            }
        }
    }
}

// Pass 0: the largest a_i of the block (one atomic on the counters per block).
__shared__ u32 group_top;

extern "C" __global__ void amr_smooth(
    const u32* __restrict__ slots,
    const uint4* __restrict__ element_tree,
    u32* flags,
    const uint4* __restrict__ neighbors,
    u32* counters,
    uint4* slot_info,
    AmrParams params,
    ItemRange range) {
    await_previous_launches();
    u32 t = linear_index();
    if (range.color == 0u) {
        if (threadIdx.x == 0u) {
            group_top = 0u;
        }
        __syncthreads();
        u32 after = first_pass(t, slots, element_tree, flags, counters, slot_info, params);
        atomicMax(&group_top, after);
        __syncthreads();
        if (threadIdx.x == 0u && group_top > 0u) {
            atomicMax(&counters[C_SMOOTH_TOP], group_top);
        }
        return;
    }
    chains(t, slot_info, flags, neighbors, counters, params);
}
