// #include "common/dispatch.cuh"
// #include "common/amr_tree.cuh"
// #include "common/amr_indicator.cuh"

// CUDA twin of shaders/amr_smooth.wgsl. The 2:1 smoothing of the flags (GK19 Algorithm 2) in
// two launches, pass 0 and the walks (AdaptiveMesh::smooth_flags_by_walks in
// src/solver/dg/amr/tree.rs is its CPU twin). With a_i = level_i + f_i the level element i
// ends at, kept per slot in `after` (amr_mark turns it back into the flags):
//   pass 0 (range.color = 0), thread t = slot t: its slot_info (level and siblings' slots), its
//      flag made admissible (no refinement past the maximum level, no coarsening of a root, a
//      -1 only if all four siblings are active and flagged -1: the cluster rule, on the flags
//      as they came: read from `flags`, or with FLAGGED computed here from the indicator, the
//      slot's own and, when it is -1, its siblings'), a_t stored in after[t], and top =
//      max_i a_i into counters[C_SMOOTH_TOP];
//   the walks (range.color = 1), thread t = slot t: a walk from t at w = a_t as it stands. Each
//      face neighbour y (the three sides and the second halves of split sides) with
//      a_y < w - 1 is raised to w - 1 (an atomic max); a raise that lifts a -1 (a_y was
//      level_y - 1) lifts its siblings' -1 too (a <- max(a, level_y)); and the walk goes on
//      from every slot it raised, at the a it raised it to, depth first.
// Every raise is forced, and when the launch ends every face holds: a slot never raised was
// checked against all its neighbours at its final a by its own thread, and a raised one by the
// walk of its last raise. So the walks end at the least admissible flags, the same as any order
// of the forced raises (AdaptiveMesh::smooth_flags), in one launch (as the WGSL twin, which
// says more). A chain descends a level a link from at most the top to at least 1: at most 11
// links below the maximum level 12, each with at most 4 frames pending, so WALK_FRAMES frames
// hold any walk; one that would not sets WALK_OVERFLOW in the walk counter and stops. The
// longest chain of raises goes to counters[C_SMOOTH_WALK] (cleared by pass 0). A raise is an
// atomic max on after, and a read sees a as it stands (volatile loads).
//
// flags: the flags' i32 bits as they came (pass 0 reads them). slot_info: per slot, its
// element's level and the slots of its three siblings (NONE for a root, or for a sibling that
// is not active), written by pass 0 so that a raise reaches a slot's level and its siblings in
// one load. after: per slot, a = level + flag as the smoothing stands. neighbors (dg_limit.cu's
// layout): [i] sides 0..2 and the mask of split sides in w, [NE + i] the second neighbours of
// split sides.

// Flag bits `bits` of an element at `level` as the smoothing reads them: within -1..1, 0 for
// a refinement past the maximum level or a coarsening of a root.
__device__ __forceinline__ int admissible(u32 bits, u32 level, const AmrParams& params) {
    int f = max(-1, min((int)bits, 1));
    if ((f > 0 && level >= params.max_level) || (f < 0 && level == 0u)) {
        return 0;
    }
    return f;
}

// Sibling c (0..2) of a slot from its slot_info record.
__device__ __forceinline__ u32 sibling(uint4 info, u32 c) {
    return c == 0u ? info.y : (c == 1u ? info.z : info.w);
}

// Slot pos's a as it stands (raised by other threads of the launch).
__device__ __forceinline__ u32 load_after(const u32* after, u32 pos) {
    return *(const volatile u32*)(after + pos);
}

// With FLAGGED = 1 (the WGSL pipeline constant), pass 0 computes each slot's flag from the
// indicator (amr_flag's, a launch less before it: what a run's smoothing does) instead of
// reading `flags`; from these, amr_flag's inputs.
#ifndef FLAGGED
#define FLAGGED 0u
#endif
struct IndicatorInputs {
    const float* regs;
    const float4* centroid_basis;
    const float4* inv_jac;
    const float* heights;
    const uint4* neighbors;
};

// Pass 0 for slot t: slot_info, a_t from the admissible flag stored in after[t], and a_t (0
// past the active slots).
__device__ u32 first_pass(
    u32 t,
    const u32* slots,
    const uint4* element_tree,
    const u32* flags,
    const u32* counters,
    uint4* slot_info,
    u32* after,
    const IndicatorInputs& in,
    const AmrParams& params) {
    // The flag of a slot as it came: the indicator's (FLAGGED) or the one in `flags`.
    auto raw_flag = [&](u32 s) -> u32 {
        return FLAGGED != 0u ? (u32)indicator_flag(s, in.regs, in.centroid_basis, in.inv_jac,
                                                   in.heights, in.neighbors, params)
                             : flags[s];
    };
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
    int f = admissible(raw_flag(t), level, params);
    if (f < 0) {
        // A root's -1 was read as 0 above, so this slot has siblings.
#pragma unroll
        for (u32 c = 1u; c < 4u; c = c + 1u) {
            if (info[c] == NONE || admissible(raw_flag(info[c]), level, params) >= 0) {
                f = 0;
            }
        }
    }
    u32 a = (u32)((int)level + f);
    after[t] = a;
    return a;
}

// Frames a walk holds (4 a link for 11 links, and the root), and the bit of C_SMOOTH_WALK a
// walk that would need more sets (as the WGSL twin).
#define WALK_FRAMES 48u
#define WALK_OVERFLOW 0x80000000u

// A walk's frames: the slot, and the a it walks from (bits 0..7), the next neighbour to look
// at (8..15) and the raises that led to it (16..).
struct Walk {
    u32 slots[WALK_FRAMES];
    u32 states[WALK_FRAMES];
    u32 frames;
    u32 longest;

    // Push a frame for slot pos raised to w by the `chain`-th raise of the walk (one that
    // cannot raise anything, w < 2, is not pushed); false when the frames are full.
    __device__ bool push(u32 pos, u32 w, u32 chain) {
        longest = max(longest, chain);
        if (w < 2u) {
            return true;
        }
        if (frames == WALK_FRAMES) {
            return false;
        }
        slots[frames] = pos;
        states[frames] = w | (chain << 16u);
        frames = frames + 1u;
        return true;
    }
};

// Neighbour k (0..5) of a slot from its neighbour records: sides 0..2, then the second halves
// of its split sides (NONE where there is none).
__device__ __forceinline__ u32 neighbour(uint4 nb, uint4 halves, u32 k) {
    if (k < 3u) {
        return k == 0u ? nb.x : (k == 1u ? nb.y : nb.z);
    }
    if (((nb.w >> (k - 3u)) & 1u) == 0u) {
        return NONE;
    }
    return k == 3u ? halves.x : (k == 4u ? halves.y : halves.z);
}

// Whether slot root's a as it stands, w, is more than one above a neighbour's: most are not,
// and their threads leave without a walk (as the WGSL twin).
__device__ bool starts_walk(u32 root, const u32* after, const uint4* neighbors) {
    u32 w = load_after(after, root);
    if (w < 2u) {
        return false;
    }
    uint4 nb = neighbors[root];
    uint4 halves = make_uint4(NONE, NONE, NONE, NONE);
    if (nb.w != 0u) {
        halves = neighbors[NE + root];
    }
    for (u32 k = 0u; k < 6u; k = k + 1u) {
        u32 y = neighbour(nb, halves, k);
        if (y != NONE && load_after(after, y) + 1u < w) {
            return true;
        }
    }
    return false;
}

// The walk from slot root (see above); returns its longest chain of raises, with
// WALK_OVERFLOW when its frames ran out.
__device__ u32 walk_from(u32 root, const uint4* slot_info, u32* after, const uint4* neighbors) {
    Walk walk;
    walk.frames = 0u;
    walk.longest = 0u;
    walk.push(root, load_after(after, root), 0u);
    while (walk.frames > 0u) {
        u32 f = walk.frames - 1u;
        u32 x = walk.slots[f];
        u32 w = walk.states[f] & 0xffu;
        u32 k = (walk.states[f] >> 8u) & 0xffu;
        u32 chain = walk.states[f] >> 16u;
        uint4 nb = neighbors[x];
        uint4 halves = make_uint4(NONE, NONE, NONE, NONE);
        if (nb.w != 0u) {
            halves = neighbors[NE + x];
        }
        // Look at the neighbours from k on until one is raised: then the frame keeps its place
        // (k past it) and the walk goes on from the slots raised first.
        bool raised = false;
        while (k < 6u && !raised) {
            u32 y = neighbour(nb, halves, k);
            k = k + 1u;
            if (y == NONE || load_after(after, y) + 1u >= w) {
                continue;
            }
            u32 old = atomicMax(after + y, w - 1u);
            if (old + 1u >= w) {
                continue;
            }
            raised = true;
            walk.states[f] = w | (k << 8u) | (chain << 16u);
            bool room = walk.push(y, w - 1u, chain + 1u);
            uint4 info = slot_info[y];
            if (old + 1u == info.x) {
#pragma unroll
                for (u32 c = 0u; c < 3u; c = c + 1u) {
                    u32 s = sibling(info, c);
                    if (s != NONE && atomicMax(after + s, info.x) < info.x) {
                        room = room && walk.push(s, info.x, chain + 1u);
                    }
                }
            }
            if (!room) {
                return walk.longest | WALK_OVERFLOW;
            }
        }
        if (!raised) {
            walk.frames = f;
        }
    }
    return walk.longest;
}

// Pass 0: the largest a_i of the block (one atomic on the counters per block). The walks: the
// active count, read by one thread of the block for all, and the block's longest chain (one
// atomic on the counters per block).
__shared__ u32 group_top;
__shared__ u32 walk_active;
__shared__ u32 group_walk;

extern "C" __global__ void amr_smooth(
    const u32* __restrict__ slots,
    const uint4* __restrict__ element_tree,
    const u32* __restrict__ flags,
    u32* counters,
    uint4* slot_info,
    u32* after,
    const float* __restrict__ regs,
    const float4* __restrict__ centroid_basis,
    const float4* __restrict__ inv_jac,
    const float* __restrict__ heights,
    const uint4* __restrict__ neighbors,
    AmrParams params,
    ItemRange range) {
    await_previous_launches();
    u32 t = linear_index();
    if (range.color == 0u) {
        if (threadIdx.x == 0u) {
            group_top = 0u;
        }
        if (t == 0u) {
            counters[C_SMOOTH_WALK] = 0u;
        }
        __syncthreads();
        IndicatorInputs in = {regs, centroid_basis, inv_jac, heights, neighbors};
        u32 a = first_pass(t, slots, element_tree, flags, counters, slot_info, after, in, params);
        atomicMax(&group_top, a);
        __syncthreads();
        if (threadIdx.x == 0u && group_top > 0u) {
            atomicMax(&counters[C_SMOOTH_TOP], group_top);
        }
        return;
    }
    if (threadIdx.x == 0u) {
        walk_active = *(const volatile u32*)(counters + C_ACTIVE);
        group_walk = 0u;
    }
    __syncthreads();
    if (t < walk_active && starts_walk(t, after, neighbors)) {
        atomicMax(&group_walk, walk_from(t, slot_info, after, neighbors));
    }
    __syncthreads();
    if (threadIdx.x == 0u && group_walk > 0u) {
        atomicMax(&counters[C_SMOOTH_WALK], group_walk);
    }
}
