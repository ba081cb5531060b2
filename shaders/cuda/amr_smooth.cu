// #include "common/dispatch.cuh"
// #include "common/amr_tree.cuh"
// #include "common/amr_indicator.cuh"

// CUDA twin of shaders/amr_smooth.wgsl. The 2:1 smoothing of the flags (GK19 Algorithm 2):
// pass 0, then pass 1 in rounds or the stages by level (AdaptiveMesh::smooth_flags_in_rounds and
// smooth_flags_in_stages in src/solver/dg/amr/tree.rs are its CPU twins; the host picks by the
// levels, SmoothingPasses in src/solver/dg/amr/gpu.rs). With a_i = level_i + f_i the level
// element i ends at, kept per slot in `after` (amr_mark turns it back into the flags):
//   pass 0 (range.color = 0), thread t = slot t: its slot_info (level and siblings' slots), its
//      flag made admissible (no refinement past the maximum level, no coarsening of a root, a
//      -1 only if all four siblings are active and flagged -1: the cluster rule, on the flags
//      as they came: read from `flags`, or with FLAGGED computed here from the indicator, the
//      slot's own and, when it is -1, its siblings'), a_t stored in after[t], and top =
//      max_i a_i into counters[C_SMOOTH_TOP];
//   pass 1 (range.color = 1), thread t = slot t settles slot t: across each of its faces (its
//      face neighbours) the side that would end more than one level coarser than the other is
//      raised to one below it, a_j <- max(a_j, a_i - 1), and a raise that lifts a -1
//      (a_j = level_j - 1) lifts its siblings' -1 too (a <- max(a, level_j)). Every slot that
//      rises goes to its block's queue, whose threads settle it in the next round (rounds
//      until the queue stays empty), or, past QUEUE_SLOTS in a round, to a list that the
//      launch's last block settles in rounds of its own (a slot waits in a list once:
//      handoff[slot] is 1 meanwhile);
//   or stage s = range.color - 1 >= 1, thread t = face t of the current mesh, while s < top:
//      the same rule across the face, with no settle after a rise; stage s works toward
//      v = top - s, so after it every face whose higher side ends at v + 1 or more holds for
//      good, and the stages s = 1 .. top - 1 end at the same flags (a launch per level below the
//      maximum: with few levels they cost less than pass 1's chain of loads).
// Every raise is forced and every rise is followed by a settle of the raised slot, reading its
// neighbours' a as they stand (volatile loads: stale, never too high), so the settle after the
// last rise of either side of a face sees the face hold or raises the other side: every face
// and cluster holds at the end, at the least admissible flags above the start
// (AdaptiveMesh::smooth_flags), in one launch instead of one per level; a block's rounds take
// a round per link of the longest chain of raises from its slots. The hand-offs are stored,
// then __threadfence() orders them before the ticket's atomicAdd; the last block fences again
// and reads them with volatile loads (as common/scan_blocks).
//
// flags: the flags' i32 bits as they came (pass 0 reads them). slot_info: per slot, its
// element's level and the slots of its three siblings (NONE for a root, or for a sibling that
// is not active), written by pass 0 so that a raise reaches a slot's level and its siblings in
// one load. after: per slot, a = level + flag as the smoothing stands. handoff: 3 NE words,
// per slot 1 while it waits in a list, then the two lists (C_SMOOTH_LISTS holds their lengths);
// all 0 between smoothings. neighbors: [i] sides 0..2 with the mask of split sides in w,
// [NE + i] the second halves (pass 1's faces, and the indicator's with FLAGGED). faces: DgEdge
// records (8 words: left, right, info, normal, length, midpoint), the stages' faces.

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

#ifndef QUEUE_SLOTS
#define QUEUE_SLOTS 128u
#endif
// Slots a pass-1 block's queue takes in a round before it hands the rest off (at most
// MAX_QUEUE; 0 hands every raised slot to the last block's lists, which tests that path).
#define MAX_QUEUE 128u

// Pass 1: the block's queue, two halves (the round's slots and the next round's) with their
// lengths; a round's length and a list's length, read by one thread for all.
__shared__ u32 queue[2u * MAX_QUEUE];
__shared__ u32 queue_length[2];
__shared__ u32 round_length;
__shared__ u32 list_length;

// Pass 1's buffers, and the queue half and the list that this thread's follows go to.
struct Rounds {
    // Pass 1 follows every rise; a stage leaves it to the next stage.
    bool follows;
    u32 queue_out;
    u32 list_out;
    const uint4* slot_info;
    const uint4* neighbors;
    u32* after;
    u32* handoff;
    u32* counters;
};

// Slot pos to be settled after a rise: in the queue's next round, or when that is full handed to
// list list_out, unless it waits there already (its settle then reads the a it ends at).
__device__ void follow(Rounds& ch, u32 pos) {
    u32 q = atomicAdd(&queue_length[ch.queue_out], 1u);
    if (q < min(QUEUE_SLOTS, MAX_QUEUE)) {
        queue[ch.queue_out * MAX_QUEUE + q] = pos;
        return;
    }
    if (atomicExch(ch.handoff + pos, 1u) != 0u) {
        return;
    }
    // A slot waits in a list once, so a list holds at most the active slots.
    u32 k = atomicAdd(ch.counters + C_SMOOTH_LISTS + ch.list_out, 1u);
    if (k >= NE) {
        atomicExch(ch.counters + C_ERROR, 1u);
        return;
    }
    *(volatile u32*)(ch.handoff + (1u + ch.list_out) * NE + k) = pos;
}

// Raise slot pos to a = wanted; when that lifts its -1, lift its siblings' -1 too (the cluster
// rule): exactly one raise lifts a given -1, the one whose atomic max saw level - 1. Every slot
// that rises is followed. The slot's record is loaded with the atomic max rather than after it
// (as the WGSL twin).
__device__ void raise(Rounds& ch, u32 pos, u32 wanted) {
    uint4 info = ch.slot_info[pos];
    u32 old = atomicMax(ch.after + pos, wanted);
    if (old >= wanted) {
        return;
    }
    if (ch.follows) {
        follow(ch, pos);
    }
    if (old + 1u != info.x) {
        return;
    }
#pragma unroll
    for (u32 c = 0u; c < 3u; c = c + 1u) {
        u32 s = sibling(info, c);
        if (s != NONE && atomicMax(ch.after + s, info.x) < info.x && ch.follows) {
            follow(ch, s);
        }
    }
}

// The 2:1 rule across the face of slot x (at a) and its neighbour n: the lower side raised to
// one below the higher.
__device__ void face_rule(Rounds& ch, u32 x, u32 a, u32 n) {
    if (n == NONE) {
        return;
    }
    u32 b = load_after(ch.after, n);
    if (a > b + 1u) {
        raise(ch, n, a - 1u);
    } else if (b > a + 1u) {
        raise(ch, x, b - 1u);
    }
}

// A stage's rule across face f (both sides' a loaded together: one round trip on its chain).
__device__ void stage_face(Rounds& ch, u32 f, const u32* faces) {
    u32 l = faces[8u * f];
    u32 r = faces[8u * f + 1u];
    if (r == NONE) {
        return;
    }
    u32 after_l = load_after(ch.after, l);
    u32 after_r = load_after(ch.after, r);
    if (after_l > after_r + 1u) {
        raise(ch, r, after_l - 1u);
    } else if (after_r > after_l + 1u) {
        raise(ch, l, after_r - 1u);
    }
}

// Settle slot x: the rule across each of its faces, its a read after its neighbours' records
// (a raise of x during it follows x again).
__device__ void settle(Rounds& ch, u32 x) {
    uint4 sides = ch.neighbors[x];
    uint4 halves = make_uint4(NONE, NONE, NONE, NONE);
    if (sides.w != 0u) {
        halves = ch.neighbors[NE + x];
    }
    u32 a = load_after(ch.after, x);
    face_rule(ch, x, a, sides.x);
    if ((sides.w & 1u) != 0u) {
        face_rule(ch, x, a, halves.x);
    }
    face_rule(ch, x, a, sides.y);
    if ((sides.w & 2u) != 0u) {
        face_rule(ch, x, a, halves.y);
    }
    face_rule(ch, x, a, sides.z);
    if ((sides.w & 4u) != 0u) {
        face_rule(ch, x, a, halves.z);
    }
}

// Settle `item` (NONE: nothing) in this thread, then, with the whole block, the slots that rise
// in rounds until a round raises nothing: a round's slots spread over the threads, its rises
// queued for the next one. Called by every thread of the block with both queue halves empty,
// and leaves them so.
__device__ void settle_in_rounds(Rounds& ch, u32 item, u32 lid) {
    ch.queue_out = 0u;
    if (item != NONE) {
        settle(ch, item);
    }
    u32 half = 0u;
    while (true) {
        __syncthreads();
        if (lid == 0u) {
            round_length = min(queue_length[half], min(QUEUE_SLOTS, MAX_QUEUE));
        }
        __syncthreads();
        u32 n = round_length;
        if (n == 0u) {
            break;
        }
        ch.queue_out = 1u - half;
        for (u32 k = lid; k < n; k = k + WORKGROUP_SIZE) {
            settle(ch, queue[half * MAX_QUEUE + k]);
        }
        // Every thread done with the round's half before it is emptied for the next round.
        __syncthreads();
        if (lid == 0u) {
            queue_length[half] = 0u;
        }
        half = 1u - half;
    }
    // With QUEUE_SLOTS 0 the half's length counted hand-offs: emptied before the next call's
    // follows.
    if (lid == 0u) {
        queue_length[half] = 0u;
    }
    __syncthreads();
}

// Pass 1's last block: the handed-off slots settled, list 0 first, a slot per thread with the
// block's rounds after it, each list's hand-offs into the other list, until a list stays empty
// (every hand-off is a rise, and a slot rises at most max_level + 1 times, so this ends). Leaves
// the lists empty, the ticket at 0 and the slots it settled in C_SMOOTH_HANDED.
__device__ void settle_handed_off(Rounds& ch, u32 lid) {
    u32 list = 0u;
    u32 handed = 0u;
    while (true) {
        // The last list's entries and lengths before they are read.
        __threadfence();
        __syncthreads();
        if (lid == 0u) {
            list_length = *(volatile u32*)(ch.counters + C_SMOOTH_LISTS + list);
        }
        __syncthreads();
        u32 n = list_length;
        if (n == 0u) {
            break;
        }
        handed = handed + n;
        ch.list_out = 1u - list;
        for (u32 base = 0u; base < n; base = base + WORKGROUP_SIZE) {
            u32 item = NONE;
            if (base + lid < n) {
                item = *(volatile u32*)(ch.handoff + (1u + list) * NE + base + lid);
                atomicExch(ch.handoff + item, 0u);
            }
            settle_in_rounds(ch, item, lid);
        }
        // Every thread done with the list before it is emptied for the next one's hand-offs.
        __threadfence();
        __syncthreads();
        if (lid == 0u) {
            *(volatile u32*)(ch.counters + C_SMOOTH_LISTS + list) = 0u;
        }
        list = 1u - list;
    }
    if (lid == 0u) {
        *(volatile u32*)(ch.counters + C_SMOOTH_HANDED) = handed;
        *(volatile u32*)(ch.counters + C_SMOOTH_TICKET) = 0u;
    }
}

// With FLAGGED = 1 (the WGSL pipeline constant), pass 0 computes each slot's flag from the
// indicator (amr_flag's, a launch less before it: what a run's smoothing does) instead of
// reading `flags`; from these, amr_flag's inputs (pass 1 reads the neighbours alone).
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

// Pass 0: the largest a_i of the block (one atomic on the counters per block). Pass 1: whether
// this is the launch's last block, read by one thread for all.
__shared__ u32 group_top;
__shared__ u32 is_last;
// A stage: top and the faces, read by one thread of the block for all.
__shared__ u32 stage_counts[2];

extern "C" __global__ void amr_smooth(
    const u32* __restrict__ slots,
    const uint4* __restrict__ element_tree,
    const u32* __restrict__ flags,
    u32* counters,
    uint4* slot_info,
    u32* after,
    u32* handoff,
    const float* __restrict__ regs,
    const float4* __restrict__ centroid_basis,
    const float4* __restrict__ inv_jac,
    const float* __restrict__ heights,
    const uint4* __restrict__ neighbors,
    const u32* __restrict__ faces,
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
        u32 a = first_pass(t, slots, element_tree, flags, counters, slot_info, after, in, params);
        atomicMax(&group_top, a);
        __syncthreads();
        if (threadIdx.x == 0u && group_top > 0u) {
            atomicMax(&counters[C_SMOOTH_TOP], group_top);
        }
        return;
    }
    Rounds ch;
    ch.follows = range.color == 1u;
    ch.queue_out = 0u;
    ch.list_out = 0u;
    ch.slot_info = slot_info;
    ch.neighbors = neighbors;
    ch.after = after;
    ch.handoff = handoff;
    ch.counters = counters;
    if (range.color >= 2u) {
        if (threadIdx.x == 0u) {
            const volatile u32* c = counters;
            stage_counts[0] = c[C_SMOOTH_TOP];
            stage_counts[1] = c[C_COLOR_OFFSETS + 2u * params.base_colors];
        }
        __syncthreads();
        // Stage s raises toward top - s; below 1 nothing is left to raise.
        if (range.color - 1u >= stage_counts[0]) {
            return;
        }
        if (t < range.count && t < stage_counts[1]) {
            stage_face(ch, t, faces);
        }
        return;
    }
    if (threadIdx.x == 0u) {
        queue_length[0] = 0u;
        queue_length[1] = 0u;
    }
    u32 item = NONE;
    if (t < range.count && t < *(const volatile u32*)(counters + C_ACTIVE)) {
        item = t;
    }
    __syncthreads();
    settle_in_rounds(ch, item, threadIdx.x);
    // Release this block's hand-offs before its ticket; every block takes one.
    __threadfence();
    __syncthreads();
    if (threadIdx.x == 0u) {
        u32 blocks = gridDim.x * gridDim.y;
        is_last = atomicAdd(counters + C_SMOOTH_TICKET, 1u) == blocks - 1u ? 1u : 0u;
    }
    __syncthreads();
    if (is_last == 0u) {
        return;
    }
    // Acquire every block's hand-offs (their tickets came before ours).
    __threadfence();
    settle_handed_off(ch, threadIdx.x);
}
