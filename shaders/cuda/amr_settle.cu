// #include "common/dispatch.cuh"
// #include "common/amr_tree.cuh"
// #include "common/amr_raise.cuh"

// CUDA twin of shaders/amr_settle.wgsl. The 2:1 rules of the smoothing in one launch after
// amr_smooth's pass 0, whatever the levels (AdaptiveMesh::smooth_flags_in_rounds in
// src/solver/dg/amr/tree.rs is its CPU twin). With a_i = level_i + f_i in `after`, thread t =
// slot t settles slot t: across each of its faces (its face neighbours) the side that would end
// more than one level coarser than the other is raised to one below it, a_j <- max(a_j,
// a_i - 1), and a raise that lifts a -1 lifts its siblings' -1 too. Every slot that rises goes
// to its block's queue, whose threads settle it in the next round (rounds until the queue
// stays empty), or, past QUEUE_SLOTS in a round, to a list that the launch's last block settles
// in rounds of its own (a slot waits in a list once: handoff[slot] is 1 meanwhile). Every raise
// is forced and every rise is followed by a settle of the raised slot, reading its neighbours'
// a as they stand (volatile loads: stale, never too high), so the settle after the last rise
// of either side of a face sees the face hold or raises the other side: every face and cluster
// holds at the end, at the least admissible flags above the start (AdaptiveMesh::smooth_flags).
// A block that handed slots off stores them, orders them before its ticket's atomicAdd with
// __threadfence() (as common/scan_blocks) and sets the ticket's flag (TICKET_HANDED); the last
// block fences again and reads the lists with volatile loads only when the flag is set (as the
// WGSL twin).
//
// slot_info: per slot, its element's level and the slots of its three siblings (amr_smooth's
// pass 0). after: per slot, a = level + flag as the smoothing stands. handoff: 3 NE words, per
// slot 1 while it waits in a list, then the two lists (C_SMOOTH_LISTS holds their lengths); all
// 0 between smoothings. neighbors: [i] sides 0..2 with the mask of split sides in w, [NE + i]
// the second halves.

#ifndef QUEUE_SLOTS
#define QUEUE_SLOTS 128u
#endif
// Slots a block's queue takes in a round before it hands the rest off (at most MAX_QUEUE; 0
// hands every raised slot to the last block's lists, which tests that path).
#define MAX_QUEUE 128u
// The ticket's flag that a block handed slots off (its low bits count the tickets).
#define TICKET_HANDED 0x80000000u

// The block's queue, two halves (the round's slots and the next round's) with their lengths; a
// round's length, whether this is the launch's last block (0: no; 1: yes, and no block handed a
// slot off; 2: yes, with hand-offs) and a list's length, read by one thread for all.
__shared__ u32 queue[2u * MAX_QUEUE];
__shared__ u32 queue_length[2];
__shared__ u32 round_length;
__shared__ u32 list_length;
__shared__ u32 is_last;
// Whether a thread of this block handed a slot off: only then has it entries to release before
// its ticket.
__shared__ u32 handed_any;

// The launch's buffers, and the queue half and the list that this thread's follows go to.
struct Rounds {
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
    handed_any = 1u;
    // A slot waits in a list once, so a list holds at most the active slots.
    u32 k = atomicAdd(ch.counters + C_SMOOTH_LISTS + ch.list_out, 1u);
    if (k >= NE) {
        atomicExch(ch.counters + C_ERROR, 1u);
        return;
    }
    *(volatile u32*)(ch.handoff + (1u + ch.list_out) * NE + k) = pos;
}

// Slot n's a as it stands, 0 for no slot (n NONE: no rule to apply).
__device__ __forceinline__ u32 after_of(const Rounds& ch, u32 n) {
    return n == NONE ? 0u : load_after(ch.after, n);
}

// The 2:1 rule across the face of slot x (at a) and its neighbour n (at b): the lower side raised
// to one below the higher.
__device__ void face_rule(Rounds& ch, u32 x, u32 a, u32 n, u32 b) {
    if (n == NONE) {
        return;
    }
    if (a > b + 1u) {
        raise(ch.after, ch.slot_info, n, a - 1u, [&](u32 pos) { follow(ch, pos); });
    } else if (b > a + 1u) {
        raise(ch.after, ch.slot_info, x, b - 1u, [&](u32 pos) { follow(ch, pos); });
    }
}

// Settle slot x: the rule across each of its faces, its a and all its neighbours' read before
// the first rule (as the WGSL twin: one round trip rather than one per face).
__device__ void settle(Rounds& ch, u32 x) {
    uint4 sides = ch.neighbors[x];
    // The second halves, read where a side is split (bit s of sides.w).
    uint4 split = ch.neighbors[NE + x];
    uint3 halves = make_uint3((sides.w & 1u) != 0u ? split.x : NONE,
                              (sides.w & 2u) != 0u ? split.y : NONE,
                              (sides.w & 4u) != 0u ? split.z : NONE);
    u32 a = load_after(ch.after, x);
    uint3 whole = make_uint3(after_of(ch, sides.x), after_of(ch, sides.y), after_of(ch, sides.z));
    uint3 second =
        make_uint3(after_of(ch, halves.x), after_of(ch, halves.y), after_of(ch, halves.z));
    face_rule(ch, x, a, sides.x, whole.x);
    face_rule(ch, x, a, halves.x, second.x);
    face_rule(ch, x, a, sides.y, whole.y);
    face_rule(ch, x, a, halves.y, second.y);
    face_rule(ch, x, a, sides.z, whole.z);
    face_rule(ch, x, a, halves.z, second.z);
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

// The launch's last block: the handed-off slots settled, list 0 first, a slot per thread with the
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

extern "C" __global__ void amr_settle(
    u32* counters,
    const uint4* __restrict__ slot_info,
    u32* after,
    u32* handoff,
    const uint4* __restrict__ neighbors,
    ItemRange range) {
    await_previous_launches();
    u32 t = linear_index();
    Rounds ch;
    ch.queue_out = 0u;
    ch.list_out = 0u;
    ch.slot_info = slot_info;
    ch.neighbors = neighbors;
    ch.after = after;
    ch.handoff = handoff;
    ch.counters = counters;
    if (threadIdx.x == 0u) {
        queue_length[0] = 0u;
        queue_length[1] = 0u;
        handed_any = 0u;
    }
    u32 item = NONE;
    if (t < range.count && t < *(const volatile u32*)(counters + C_ACTIVE)) {
        item = t;
    }
    __syncthreads();
    settle_in_rounds(ch, item, threadIdx.x);
    // Release this block's hand-offs, if it made any, before its ticket; every block takes one,
    // and one that handed slots off sets the ticket's flag first.
    __syncthreads();
    u32 handed = handed_any;
    if (handed != 0u) {
        __threadfence();
        __syncthreads();
    }
    if (threadIdx.x == 0u) {
        if (handed != 0u) {
            atomicOr(counters + C_SMOOTH_TICKET, TICKET_HANDED);
        }
        u32 all = atomicAdd(counters + C_SMOOTH_TICKET, 1u) + 1u;
        bool last = (all & ~TICKET_HANDED) == gridDim.x * gridDim.y;
        is_last = last ? ((all & TICKET_HANDED) != 0u ? 2u : 1u) : 0u;
    }
    __syncthreads();
    if (is_last == 0u) {
        return;
    }
    if (is_last == 1u) {
        // No block handed a slot off: the lists are empty.
        if (threadIdx.x == 0u) {
            *(volatile u32*)(counters + C_SMOOTH_HANDED) = 0u;
            *(volatile u32*)(counters + C_SMOOTH_TICKET) = 0u;
        }
        return;
    }
    // Acquire every block's hand-offs (their tickets came before ours).
    __threadfence();
    settle_handed_off(ch, threadIdx.x);
}
