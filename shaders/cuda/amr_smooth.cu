// #include "common/dispatch.cuh"
// #include "common/amr_tree.cuh"

// CUDA twin of shaders/amr_smooth.wgsl. The 2:1 smoothing of the flags (GK19 Algorithm 2) in
// two launches (AdaptiveMesh::smooth_flags_by_chains in src/solver/dg/amr/tree.rs is its CPU
// twin). With a_i = level_i + f_i the level element i ends at, kept per slot in `after` as
// 2 a_i + m_i, m_i = 1 while the slot is a -1 no raise has lifted (amr_mark turns a back into
// the flags):
//   pass 0 (range.color = 0), thread t = slot t: its slot_info (level and siblings' slots) and
//      its flag made admissible (no refinement past the maximum level, no coarsening of a root,
//      a -1 only if all four siblings are active and flagged -1: the cluster rule, on the flags
//      as they came), stored in after[t];
//   the chains (range.color = 1), thread t = slot t: what a_t forces is enforced, and what
//      that raises in turn, in rounds. A slot x at a forces its face neighbours (both halves
//      of a split side) to at least a - 1 (the 2:1 rule), and a raise that lifts a -1 forces
//      the slot's siblings to their level (the cluster rule; a slot that was no -1 has no
//      sibling that is one, by pass 0). A forcing is an atomic max of 2 a on after: it clears
//      m on a raise, and the value it returns tells the raiser whether it lifted a -1, so the
//      raiser lifts the cluster too. Every raise is then enforced by the thread that made it:
//      the block queues its raises and takes them up together in the next round (a round a
//      link); a raise the queue has no room for its raiser follows at once, depth first.
// Every value a slot takes is enforced by the thread that set it (its start value by its own
// thread), so when the launch ends every forcing holds: the flags are admissible, and as every
// raise was forced they are the least admissible flags above the start, whatever the order of
// the raises (AdaptiveMesh::smooth_flags). GK19 repeats its per-color passes until nothing
// changes; here a launch ends the smoothing, with no host check. Every link of a chain lowers
// a by one at least (a neighbour to a - 1, a lifted cluster to its level, at most a - 1), so
// from a <= max_level a chain has at most max_level links: the rounds a block runs, and
// what CHAIN_SLOTS holds for the 12 levels a case may have. The longest chain of the launch
// goes to counters[C_SMOOTH_CHAIN] (the host checks it against that bound; a thread that would
// overflow its stack stops there and reports more).
//
// flags: the flags' i32 bits as they came (pass 0 reads them). neighbors: face neighbours
// (dg_limit.cu's layout): [i] sides 0..2 and the mask of split sides in w, [NE + i] the
// second halves' neighbours of the split sides. slot_info: per slot, its element's level and
// the slots of its three siblings (NONE for a root, or for a sibling that is not active),
// written by pass 0 so that a lifted -1 reaches its cluster in one load. after: per slot,
// 2 a + m as the smoothing stands.

// Slots a chain's stack holds: its start and the 12 links of the 12 levels a case may have,
// and three spare.
#define CHAIN_SLOTS 16u
// Forcings of a slot x, bit k of a mask: its sides' neighbours (k = 0..2), the second halves'
// of split sides (3..5), and from k = CLUSTERS the siblings of the neighbours whose -1 the
// forcing lifted (CLUSTERS + 3 n + c: sibling c of neighbour n).
#define SECOND_HALVES 3u
#define CLUSTERS 8u

// Flag bits `bits` of an element at `level` as the smoothing reads them: within -1..1, 0 for
// a refinement past the maximum level or a coarsening of a root.
__device__ __forceinline__ int admissible(u32 bits, u32 level, const AmrParams& params) {
    int f = max(-1, min((int)bits, 1));
    if ((f > 0 && level >= params.max_level) || (f < 0 && level == 0u)) {
        return 0;
    }
    return f;
}

// Component c (0..3) of a uint4.
__device__ __forceinline__ u32 word(uint4 v, u32 c) {
    return c == 0u ? v.x : (c == 1u ? v.y : (c == 2u ? v.z : v.w));
}

// Pass 0 for slot t: slot_info, and 2 a_t + m_t from the admissible flag stored in after[t].
__device__ void first_pass(
    u32 t,
    u32 count,
    const u32* slots,
    const uint4* element_tree,
    const u32* flags,
    const u32* counters,
    uint4* slot_info,
    u32* after,
    const AmrParams& params) {
    if (t >= min(count, *(const volatile u32*)(counters + C_ACTIVE))) {
        return;
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
    int f = admissible(flags[t], level, params);
    if (f < 0) {
        // A root's -1 was read as 0 above, so this slot has siblings.
#pragma unroll
        for (u32 c = 1u; c < 4u; c = c + 1u) {
            if (info[c] == NONE || admissible(flags[info[c]], level, params) >= 0) {
                f = 0;
            }
        }
    }
    after[t] = 2u * (u32)((int)level + f) + (f < 0 ? 1u : 0u);
}

// The chains' buffers: face neighbours, slot_info and after.
struct Chains {
    const uint4* neighbors;
    const uint4* slot_info;
    u32* after;
};

// Force a >= wanted on slot y: bit 0 whether this raised it (then its forcings are ours), bit
// 1 whether that lifted its -1 (then its cluster's lifting is ours).
__device__ __forceinline__ u32 force(const Chains& b, u32 y, u32 wanted) {
    if (y == NONE) {
        return 0u;
    }
    u32 old = atomicMax(b.after + y, 2u * wanted);
    if (old >= 2u * wanted) {
        return 0u;
    }
    return 1u | ((old & 1u) << 1u);
}

// Neighbour n (0..5) of slot x.
__device__ __forceinline__ u32 neighbour(const Chains& b, u32 x, u32 n) {
    if (n < SECOND_HALVES) {
        return word(b.neighbors[x], n);
    }
    return word(b.neighbors[NE + x], n - SECOND_HALVES);
}

// Slot x's forcing k: the slot it forces, and the a it forces there from x at a = v.
__device__ uint2 forced(const Chains& b, u32 x, u32 v, u32 k) {
    if (k < CLUSTERS) {
        return make_uint2(neighbour(b, x, k), v - 1u);
    }
    uint4 info = b.slot_info[neighbour(b, x, (k - CLUSTERS) / 3u)];
    return make_uint2(word(info, 1u + (k - CLUSTERS) % 3u), info.x);
}

// Slot x's neighbour n (0..5) from its two neighbour records.
__device__ __forceinline__ u32 side_neighbour(uint4 nb, uint4 second, u32 n) {
    return n < SECOND_HALVES ? word(nb, n) : word(second, n - SECOND_HALVES);
}

// Force slot x's face neighbours (records nb and second, both halves' loads issued together)
// to a >= wanted: the neighbours raised (bit n) and, in bits 8.., those whose -1 that lifted.
__device__ __forceinline__ u32 force_neighbours(
    const Chains& b, uint4 nb, uint4 second, u32 wanted) {
    u32 forced_bits = 0u;
#pragma unroll
    for (u32 k = 0u; k < 3u; k = k + 1u) {
        u32 r = force(b, word(nb, k), wanted);
        forced_bits = forced_bits | ((r & 1u) << k) | ((r >> 1u) << (8u + k));
        if (((nb.w >> k) & 1u) != 0u) {
            u32 r2 = force(b, word(second, k), wanted);
            u32 n = SECOND_HALVES + k;
            forced_bits = forced_bits | ((r2 & 1u) << n) | ((r2 >> 1u) << (8u + n));
        }
    }
    return forced_bits;
}

// Lift the cluster of slot y, whose -1 a raise lifted (its record `info`): the siblings
// raised to y's level (bit c).
__device__ __forceinline__ u32 lift_cluster(const Chains& b, uint4 info) {
    u32 raised = 0u;
#pragma unroll
    for (u32 c = 0u; c < 3u; c = c + 1u) {
        raised = raised | ((force(b, word(info, 1u + c), info.x) & 1u) << c);
    }
    return raised;
}

// Enforce slot x at a = v: its face neighbours to v - 1, then the clusters whose -1 that
// lifted to their level. Returns the forcings that raised their slot (bit k, as above).
__device__ u32 enforce(const Chains& b, u32 x, u32 v) {
    if (v == 0u) {
        return 0u;
    }
    uint4 nb = b.neighbors[x];
    uint4 second = b.neighbors[NE + x];
    u32 forced_bits = force_neighbours(b, nb, second, v - 1u);
    u32 raised = forced_bits & 0xffu;
    u32 lifted = forced_bits >> 8u;
    while (lifted != 0u) {
        u32 n = (u32)(__ffs(lifted) - 1);
        lifted = lifted & (lifted - 1u);
        uint4 info = b.slot_info[side_neighbour(nb, second, n)];
        raised = raised | (lift_cluster(b, info) << (CLUSTERS + 3u * n));
    }
    return raised;
}

// The chain from slot y, raised to a = v at `depth` links from its start, followed depth first
// by this thread (what the block's queue has no room for). Returns the most links it reached.
__device__ u32 follow_chain(const Chains& b, u32 y, u32 v, u32 depth) {
    u32 chain_slot[CHAIN_SLOTS];
    u32 chain_value[CHAIN_SLOTS];
    u32 chain_left[CHAIN_SLOTS];
    chain_slot[0] = y;
    chain_value[0] = v;
    chain_left[0] = enforce(b, y, v);
    u32 held = 1u;
    u32 deepest = depth;
    for (;;) {
        u32 top = held - 1u;
        u32 left = chain_left[top];
        if (left == 0u) {
            held = top;
            if (held == 0u) {
                break;
            }
            continue;
        }
        if (depth + held >= CHAIN_SLOTS) {
            // Past the bound (see above): reported, not followed.
            return CHAIN_SLOTS;
        }
        u32 k = (u32)(__ffs(left) - 1);
        chain_left[top] = left & (left - 1u);
        uint2 next = forced(b, chain_slot[top], chain_value[top], k);
        chain_slot[held] = next.x;
        chain_value[held] = next.y;
        chain_left[held] = enforce(b, next.x, next.y);
        deepest = max(deepest, depth + held);
        held = held + 1u;
    }
    return deepest;
}

// Raises the block follows together, a round a link: per round, slot and
// (a | links from the start << 8) of each raise made in the round before, in two halves (this
// round's, the next's).
#define QUEUE 256u
__shared__ uint2 queue[2u * QUEUE];
__shared__ u32 queued[2];
__shared__ u32 round_items;

// Queue slot y, raised to a = w at `depth` links from its start, for round `next`; when the
// queue has no room this thread follows it at once. Returns the most links that reached.
__device__ u32 queue_raise(const Chains& b, u32 y, u32 w, u32 depth, u32 next) {
    u32 at = atomicAdd(&queued[next], 1u);
    if (at < QUEUE) {
        queue[next * QUEUE + at] = make_uint2(y, w | (depth << 8u));
        return depth;
    }
    return follow_chain(b, y, w, depth);
}

// Enforce slot x at a = v (`depth` links from its start) as enforce does, queueing each raise
// for round `next` from the records at hand. Returns the most links that reached.
__device__ u32 enforce_queued(const Chains& b, u32 x, u32 v, u32 depth, u32 next) {
    if (v == 0u) {
        return 0u;
    }
    uint4 nb = b.neighbors[x];
    uint4 second = b.neighbors[NE + x];
    u32 forced_bits = force_neighbours(b, nb, second, v - 1u);
    u32 deepest = 0u;
    u32 raised = forced_bits & 0xffu;
    while (raised != 0u) {
        u32 n = (u32)(__ffs(raised) - 1);
        raised = raised & (raised - 1u);
        u32 y = side_neighbour(nb, second, n);
        deepest = max(deepest, queue_raise(b, y, v - 1u, depth + 1u, next));
    }
    u32 lifted = forced_bits >> 8u;
    while (lifted != 0u) {
        u32 n = (u32)(__ffs(lifted) - 1);
        lifted = lifted & (lifted - 1u);
        uint4 info = b.slot_info[side_neighbour(nb, second, n)];
        u32 siblings = lift_cluster(b, info);
        while (siblings != 0u) {
            u32 c = (u32)(__ffs(siblings) - 1);
            siblings = siblings & (siblings - 1u);
            deepest = max(deepest, queue_raise(b, word(info, 1u + c), info.x, depth + 1u, next));
        }
    }
    return deepest;
}

// The chains of the block's slots: each enforces its own a, then the raises are followed in
// rounds, every thread taking its share of the raises the round before made. Returns the most
// links this thread's chains reached.
__device__ u32 chains(const Chains& b, u32 t, u32 count, const u32* counters) {
    u32 lid = threadIdx.x;
    if (lid < 2u) {
        queued[lid] = 0u;
    }
    __syncthreads();
    u32 deepest = 0u;
    if (t < min(count, *(const volatile u32*)(counters + C_ACTIVE))) {
        deepest = enforce_queued(b, t, *(const volatile u32*)(b.after + t) >> 1u, 0u, 0u);
    }
    for (u32 round = 0u;; round = round + 1u) {
        u32 current = round & 1u;
        __syncthreads();
        if (lid == 0u) {
            round_items = min(*(volatile u32*)&queued[current], QUEUE);
        }
        __syncthreads();
        u32 items = round_items;
        if (items == 0u) {
            break;
        }
        for (u32 i = lid; i < items; i = i + WORKGROUP_SIZE) {
            uint2 item = queue[current * QUEUE + i];
            u32 reached = enforce_queued(b, item.x, item.y & 0xffu, item.y >> 8u, current ^ 1u);
            deepest = max(deepest, reached);
        }
        __syncthreads();
        if (lid == 0u) {
            queued[current] = 0u;
        }
    }
    return deepest;
}

extern "C" __global__ void amr_smooth(
    const u32* __restrict__ slots,
    const uint4* __restrict__ element_tree,
    const u32* __restrict__ flags,
    const uint4* __restrict__ neighbors,
    u32* counters,
    uint4* slot_info,
    u32* after,
    AmrParams params,
    ItemRange range) {
    await_previous_launches();
    u32 t = linear_index();
    if (range.color == 0u) {
        first_pass(t, range.count, slots, element_tree, flags, counters, slot_info, after, params);
        return;
    }
    Chains b = {neighbors, slot_info, after};
    u32 deepest = chains(b, t, range.count, counters);
    if (deepest > 0u) {
        atomicMax(&counters[C_SMOOTH_CHAIN], deepest);
    }
}
