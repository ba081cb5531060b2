// #include "common/dispatch.cuh"
// #include "common/amr_tree.cuh"

// CUDA twin of shaders/amr_smooth.wgsl. The 2:1 smoothing of the flags (GK19 Algorithm 2) in
// stages over the slots, each one launch
// settling CHAIN_LINKS + 1 levels (AdaptiveMesh::smooth_flags_in_stages in
// src/solver/dg/amr/tree.rs is its CPU twin). With a_i = level_i + f_i the level element i
// ends at:
//   pass 0 (range.color = 0), thread t = slot t: its slot_info (level and siblings' slots), its
//      flag made admissible (no refinement past the maximum level, no coarsening of a root, a
//      -1 only if all four siblings are active and flagged -1: the cluster rule, on the flags
//      as they came) and stored, and top = max_i a_i into counters[C_SMOOTH_TOP];
//   stage s = range.color >= 1, thread t = slot t, while (s - 1) (CHAIN_LINKS + 1) < top - 1:
//      slot t's neighbours that would end more than one level below it are raised to one below
//      it, f_j <- max(f_j, a_t - 1 - level_j), a raise that lifts a -1 lifts its siblings' -1
//      too (link 1); the thread follows what link k raised (the slot and the siblings it
//      lifted) the same way, making link k + 1, for k <= CHAIN_LINKS.
// Only the first of the solver's neighbour records is read: the mesh is 2:1 now, so a face can
// break the rule only where the higher side's neighbour is no finer than it, the one neighbour
// across that side. Why a stage settles CHAIN_LINKS + 1 levels: say every a >= u + 1 has been
// reached and its faces hold when it starts. Then so has every a = u (only a neighbour at
// u + 1 forces one), and a raise of link k ends at a <= u - k. Take a slot that ends at
// w >= u - CHAIN_LINKS: if it was at w when the stage started, its own thread read w and raised
// its neighbours; else the raise that left w was of a link k <= u - w <= CHAIN_LINKS, so its
// thread followed it. Raises are atomic maxima, so no later one undoes that: after the stage
// every a >= u - CHAIN_LINKS is reached and its faces hold, and after s stages every
// a >= top - s (CHAIN_LINKS + 1) + 1; faces whose higher side ends at 1 hold anyway. Stages past
// that return at once. Every raise is forced, so the stages end at the least admissible flags
// above the start, as any order of the forced raises does (AdaptiveMesh::smooth_flags); no host
// check for convergence. A raise is an atomic max (a compare-exchange loop on the i32 bits) and
// a read sees the flag as it stands (volatile loads). Following every link (one stage) was
// tried: a thread then follows a whole cascade of raises alone, slower than the launches it
// saves (BENCHMARKS.md, session 20).
//
// Room: a slot followed raises at most 3 neighbours, each lifting at most 3 siblings, so a
// thread holds at most 12 slots of each link up to CHAIN_LINKS (LIFO: one link's slots wait
// while a later link's are followed); one short of room (never, by that) sets C_ERROR_CHAINS
// in counters[C_ERROR].
//
// flags: the flags' i32 bits. slot_info: per slot, its element's level and the slots of its
// three siblings (NONE for a root, or for a sibling that is not active), written by pass 0 so
// that a stage reaches a slot's level and its siblings in one load. neighbors: the solver's
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

// Raises a stage's thread follows after its own slot's (1 to 3; the host sizes the stages by
// it, amr::gpu::CHAIN_LINKS).
#ifndef CHAIN_LINKS
#define CHAIN_LINKS 1u
#endif
// Slots a thread may hold to follow (the header's bound for the most links).
#define CHAIN_ROOM 36u

// Stage work of slot t: its neighbours raised where the rule asks, and every slot this thread
// raised followed in turn (last raised first) from the level it raised it to, up to
// CHAIN_LINKS links.
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
    // (slot, level + flag this thread raised it to, links after slot t's own raises).
    uint3 pending[CHAIN_ROOM];
    pending[0] = make_uint3(
        t, (u32)((int)own.x + admissible(load_flag(flags, t), own.x, params)), 0u);
    u32 n = 1u;
    while (n > 0u) {
        n = n - 1u;
        uint3 item = pending[n];
        int after = (int)item.y;
        if (after < 2) {
            continue;
        }
        bool follow = item.z < CHAIN_LINKS;
        uint4 across = neighbors[item.x];
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
            // This thread raised j, and lifts its cluster when that took its -1.
            if (follow && n + 4u > CHAIN_ROOM) {
                atomicOr(counters + C_ERROR, C_ERROR_CHAINS);
                return;
            }
            if (follow) {
                pending[n] = make_uint3(j, (u32)(after - 1), item.z + 1u);
                n = n + 1u;
            }
            if (was >= 0) {
                continue;
            }
#pragma unroll
            for (u32 c = 0u; c < 3u; c = c + 1u) {
                u32 s = sibling(info, c);
                if (s != NONE && raise_flag(flags, s, info.x, 0, params) < 0 && follow) {
                    pending[n] = make_uint3(s, info.x, item.z + 1u);
                    n = n + 1u;
                }
            }
        }
    }
}

// Pass 0: the largest a_i of the block (one atomic on the counters per block); a stage: the
// top, read by one thread of the block for all.
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
    if (threadIdx.x == 0u) {
        group_top = *(const volatile u32*)(counters + C_SMOOTH_TOP);
    }
    __syncthreads();
    // Stage s settles the levels from top - (s - 1) (CHAIN_LINKS + 1) down; past 1 nothing is
    // left to raise.
    if ((range.color - 1u) * (CHAIN_LINKS + 1u) + 1u >= group_top) {
        return;
    }
    chains(t, slot_info, flags, neighbors, counters, params);
}
