// #include "common/dispatch.cuh"
// #include "common/amr_tree.cuh"
// #include "common/amr_indicator.cuh"

// CUDA twin of shaders/amr_smooth.wgsl. The 2:1 smoothing of the flags (GK19 Algorithm 2) in
// rounds, each one launch (AdaptiveMesh::smooth_flags_in_rounds in src/solver/dg/amr/tree.rs
// is its CPU twin). With a_i = level_i + f_i the level element i ends at, kept per slot in
// `after` (amr_mark turns it back into the flags):
//   pass 0 (range.color = 0), thread t = slot t: its slot_info (level and siblings' slots), its
//      flag made admissible (no refinement past the maximum level, no coarsening of a root, a
//      -1 only if all four siblings are active and flagged -1: the cluster rule, on the flags
//      as they came: read from `flags`, or with FLAGGED computed here from the indicator, the
//      slot's own and, when it is -1, its siblings'), a_t stored in after[t], raised[t] = 0,
//      and top = max_i a_i into counters[C_SMOOTH_TOP];
//   round 1 (range.color = 1), thread t = face t of the current mesh: the side that would end
//      more than one level coarser than the other is raised to one below it,
//      a_j <- max(a_j, a_i - 1); a raise that lifts a -1 (a_j = level_j - 1) lifts its
//      siblings' -1 too (a <- max(a, level_j));
//   round r >= 2, thread t = slot t: only a slot raised in round r - 1 (raised[t] = r) works,
//      the same rule across its faces (its neighbours' slots), as the higher side.
// Every raise in round r marks its slot raised[j] = r + 1, so after round r every face holds
// or its higher side is marked r + 1, and raises in round r end at a <= top - r: the rounds
// 1 .. top - 1 end at the least admissible flags above the start (the WGSL twin says why). A
// raise is an atomic max on after, a read sees a and the marks as they stand (volatile loads),
// and every writer of a mark in one round stores the same round.
//
// flags: the flags' i32 bits as they came (pass 0 reads them). slot_info: per slot, its
// element's level and the slots of its three siblings (NONE for a root, or for a sibling that
// is not active), written by pass 0 so that a raise reaches a slot's level and its siblings in
// one load. faces: DgEdge records (8 words: left, right, info, normal, length, midpoint).
// after: per slot, a = level + flag as the smoothing stands. raised: per slot, the round that
// works on it next (0 from pass 0 on). neighbors: per slot one per side (w: the split sides),
// the second halves of split sides at NE + slot.

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

// Word pos of a buffer other threads of the launch write (a slot's a, or its mark) as it
// stands.
__device__ __forceinline__ u32 load_current(const u32* words, u32 pos) {
    return *(const volatile u32*)(words + pos);
}

// What the rounds raise and read: a per slot, the slots' records, and the marks.
struct Smoothing {
    u32* after;
    const uint4* slot_info;
    u32* raised;
};

// Raise slot pos to a = wanted, marking it for round `next`; when that lifts its -1, lift its
// siblings' -1 too (the cluster rule) and mark them: exactly one raise lifts a given -1, the
// one whose atomic max saw level - 1. The slot's record is loaded with the atomic max rather
// than after it (as the WGSL twin).
__device__ void raise(const Smoothing& sm, u32 pos, u32 wanted, u32 next) {
    uint4 info = sm.slot_info[pos];
    u32 old = atomicMax(sm.after + pos, wanted);
    if (old >= wanted) {
        return;
    }
    *(volatile u32*)(sm.raised + pos) = next;
    if (old + 1u != info.x) {
        return;
    }
#pragma unroll
    for (u32 c = 0u; c < 3u; c = c + 1u) {
        u32 s = sibling(info, c);
        if (s != NONE && atomicMax(sm.after + s, info.x) < info.x) {
            *(volatile u32*)(sm.raised + s) = next;
        }
    }
}

// With FLAGGED = 1 (the WGSL pipeline constant), pass 0 computes each slot's flag from the
// indicator (amr_flag's, a launch less before it: what a run's smoothing does) instead of
// reading `flags`; from these, amr_flag's inputs (the stages do not read them).
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
    u32* raised,
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
    raised[t] = 0u;
    return a;
}

// Round 1: the 2:1 rule across face f, its raises marked for round 2.
__device__ void face_rule(u32 f, const Smoothing& sm, const u32* faces) {
    u32 l = faces[8u * f];
    u32 r = faces[8u * f + 1u];
    if (r == NONE) {
        return;
    }
    u32 after_l = load_current(sm.after, l);
    u32 after_r = load_current(sm.after, r);
    if (after_l > after_r + 1u) {
        raise(sm, r, after_l - 1u, 2u);
    } else if (after_r > after_l + 1u) {
        raise(sm, l, after_r - 1u, 2u);
    }
}

// The 2:1 rule from slot t, at a_t, to the neighbours `nb` (xyz; NONE past a boundary).
__device__ void push_to(const Smoothing& sm, uint4 nb, u32 a_t, u32 next) {
    u32 q[3] = {nb.x, nb.y, nb.z};
#pragma unroll
    for (u32 s = 0u; s < 3u; s = s + 1u) {
        if (q[s] != NONE && load_current(sm.after, q[s]) + 1u < a_t) {
            raise(sm, q[s], a_t - 1u, next);
        }
    }
}

// Round `round` >= 2 for slot t, raised in the round before: the rule across its faces, it the
// higher side.
__device__ void slot_rule(u32 t, u32 round, const Smoothing& sm, const uint4* neighbors) {
    if (load_current(sm.raised, t) != round) {
        return;
    }
    u32 a_t = load_current(sm.after, t);
    if (a_t < 2u) {
        return;
    }
    uint4 nb = neighbors[t];
    push_to(sm, nb, a_t, round + 1u);
    if (nb.w != 0u) {
        push_to(sm, neighbors[NE + t], a_t, round + 1u);
    }
}

// Pass 0: the largest a_i of the block (one atomic on the counters per block). A round: top
// and the faces (round 1) or the active slots (later rounds), read by one thread of the block
// for all.
__shared__ u32 group_top;
__shared__ u32 round_counts[2];

extern "C" __global__ void amr_smooth(
    const u32* __restrict__ slots,
    const uint4* __restrict__ element_tree,
    const u32* __restrict__ flags,
    const u32* __restrict__ faces,
    u32* counters,
    uint4* slot_info,
    u32* after,
    const float* __restrict__ regs,
    const float4* __restrict__ centroid_basis,
    const float4* __restrict__ inv_jac,
    const float* __restrict__ heights,
    const uint4* __restrict__ neighbors,
    u32* raised,
    AmrParams params,
    ItemRange range) {
    await_previous_launches();
    u32 t = linear_index();
    if (range.color == 0u) {
        if (threadIdx.x == 0u) {
            group_top = 0u;
        }
        __syncthreads();
        IndicatorInputs in = {regs, centroid_basis, inv_jac, heights, neighbors};
        u32 a = first_pass(t, slots, element_tree, flags, counters, slot_info, after, raised, in,
                           params);
        atomicMax(&group_top, a);
        __syncthreads();
        if (threadIdx.x == 0u && group_top > 0u) {
            atomicMax(&counters[C_SMOOTH_TOP], group_top);
        }
        return;
    }
    if (threadIdx.x == 0u) {
        const volatile u32* c = counters;
        round_counts[0] = c[C_SMOOTH_TOP];
        round_counts[1] =
            range.color == 1u ? c[C_COLOR_OFFSETS + 2u * params.base_colors] : c[C_ACTIVE];
    }
    __syncthreads();
    // Round r raises to at most top - r; below 1 nothing is left to raise.
    if (range.color >= round_counts[0] || t >= range.count || t >= round_counts[1]) {
        return;
    }
    Smoothing sm = {after, slot_info, raised};
    if (range.color == 1u) {
        face_rule(t, sm, faces);
    } else {
        slot_rule(t, range.color, sm, neighbors);
    }
}
