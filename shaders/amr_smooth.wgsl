// #include "common/dispatch.wgsl"
// #include "common/amr_tree.wgsl"

// The 2:1 smoothing of the flags (GK19 Algorithm 2) in two launches
// (AdaptiveMesh::smooth_flags_by_chains in src/solver/dg/amr/tree.rs is its CPU twin). With
// a_i = level_i + f_i the level element i ends at, kept per slot in `after` as 2 a_i + m_i,
// m_i = 1 while the slot is a -1 no raise has lifted (amr_mark turns a back into the flags):
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
//      the workgroup queues its raises and takes them up together in the next round (a round a
//      link); a raise the queue has no room for its raiser follows at once, depth first.
// Every value a slot takes is enforced by the thread that set it (its start value by its own
// thread), so when the launch ends every forcing holds: the flags are admissible, and as every
// raise was forced they are the least admissible flags above the start, whatever the order of
// the raises (AdaptiveMesh::smooth_flags). GK19 repeats its per-color passes until nothing
// changes; here a launch ends the smoothing, with no host check. Every link of a chain lowers
// a by one at least (a neighbour to a - 1, a lifted cluster to its level, at most a - 1), so
// from a <= max_level a chain has at most max_level links: the rounds a workgroup runs, and
// what CHAIN_SLOTS holds for the 12 levels a case may have. The longest chain of the launch
// goes to counters[C_SMOOTH_CHAIN] (the host checks it against that bound; a thread that would
// overflow its stack stops there and reports more).

@group(0) @binding(0) var<storage, read> slots: array<u32>;
@group(0) @binding(1) var<storage, read> element_tree: array<vec4<u32>>;
// The flags' i32 bits as they came (pass 0 reads them).
@group(0) @binding(2) var<storage, read> flags: array<u32>;
// Face neighbours (dg_limit.wgsl's layout): [i] sides 0..2 and the mask of split sides in w,
// [capacity + i] the second halves' neighbours of the split sides.
@group(0) @binding(3) var<storage, read> neighbors: array<vec4<u32>>;
@group(0) @binding(4) var<storage, read_write> counters: array<atomic<u32>>;
// Per slot: its element's level and the slots of its three siblings (NONE for a root, or for a
// sibling that is not active), written by pass 0 so that a lifted -1 reaches its cluster in
// one load.
@group(0) @binding(5) var<storage, read_write> slot_info: array<vec4<u32>>;
// Per slot: 2 a + m as the smoothing stands (pass 0 stores it, the chains raise it).
@group(0) @binding(6) var<storage, read_write> after: array<atomic<u32>>;
@group(1) @binding(0) var<uniform> range: ItemRange;
@group(2) @binding(0) var<uniform> params: AmrParams;

// Slots a chain's stack holds: its start and the 12 links of the 12 levels a case may have,
// and three spare.
const CHAIN_SLOTS: u32 = 16u;
// Forcings of a slot x, bit k of a mask: its sides' neighbours (k = 0..2), the second halves'
// of split sides (3..5), and from k = CLUSTERS the siblings of the neighbours whose -1 the
// forcing lifted (CLUSTERS + 3 n + c: sibling c of neighbour n).
const SECOND_HALVES: u32 = 3u;
const CLUSTERS: u32 = 8u;

// Flag bits `bits` of an element at `level` as the smoothing reads them: within -1..1, 0 for
// a refinement past the maximum level or a coarsening of a root.
fn admissible(bits: u32, level: u32) -> i32 {
    let f = clamp(bitcast<i32>(bits), -1, 1);
    if ((f > 0 && level >= params.max_level) || (f < 0 && level == 0u)) {
        return 0;
    }
    return f;
}

// Pass 0 for slot t: slot_info, and 2 a_t + m_t from the admissible flag stored in after[t].
fn first_pass(t: u32) {
    if (t >= min(range.count, atomicLoad(&counters[C_ACTIVE]))) {
        return;
    }
    let id = slots[t];
    let own = element_tree[id];
    let level = own.x;
    var info = vec4<u32>(level, NONE, NONE, NONE);
    if (own.y != NONE) {
        let block = element_tree[own.y].z;
        var k = 1u;
        // #unroll
        for (var c = 0u; c < 4u; c = c + 1u) {
            if (block + c != id) {
                info[k] = element_tree[block + c].w;
                k = k + 1u;
            }
        }
    }
    slot_info[t] = info;
    var f = admissible(flags[t], level);
    if (f < 0) {
        // A root's -1 was read as 0 above, so this slot has siblings.
        // #unroll
        for (var c = 0u; c < 3u; c = c + 1u) {
            let sibling = info[1u + c];
            if (sibling == NONE || admissible(flags[sibling], level) >= 0) {
                f = 0;
            }
        }
    }
    atomicStore(&after[t], 2u * u32(i32(level) + f) + select(0u, 1u, f < 0));
}

// Force a >= wanted on slot y: bit 0 whether this raised it (then its forcings are ours), bit
// 1 whether that lifted its -1 (then its cluster's lifting is ours).
fn force(y: u32, wanted: u32) -> u32 {
    if (y == NONE) {
        return 0u;
    }
    let old = atomicMax(&after[y], 2u * wanted);
    if (old >= 2u * wanted) {
        return 0u;
    }
    return 1u | ((old & 1u) << 1u);
}

// Neighbour n (0..5) of slot x.
fn neighbour(x: u32, n: u32) -> u32 {
    if (n < SECOND_HALVES) {
        return neighbors[x][n];
    }
    return neighbors[range.capacity + x][n - SECOND_HALVES];
}

// Slot x's forcing k: the slot it forces, and the a it forces there from x at a = v.
fn forced(x: u32, v: u32, k: u32) -> vec2<u32> {
    if (k < CLUSTERS) {
        return vec2<u32>(neighbour(x, k), v - 1u);
    }
    let info = slot_info[neighbour(x, (k - CLUSTERS) / 3u)];
    return vec2<u32>(info[1u + (k - CLUSTERS) % 3u], info.x);
}

// Slot x's neighbour n (0..5) from its two neighbour records.
fn side_neighbour(nb: vec4<u32>, second: vec4<u32>, n: u32) -> u32 {
    if (n < SECOND_HALVES) {
        return nb[n];
    }
    return second[n - SECOND_HALVES];
}

// Force slot x's face neighbours (records nb and second, both halves' loads issued together)
// to a >= wanted: the neighbours raised (bit n) and, in bits 8.., those whose -1 that lifted.
fn force_neighbours(nb: vec4<u32>, second: vec4<u32>, wanted: u32) -> u32 {
    var forced_bits = 0u;
    // #unroll
    for (var k = 0u; k < 3u; k = k + 1u) {
        let r = force(nb[k], wanted);
        forced_bits = forced_bits | ((r & 1u) << k) | ((r >> 1u) << (8u + k));
        if (((nb.w >> k) & 1u) != 0u) {
            let r2 = force(second[k], wanted);
            let n = SECOND_HALVES + k;
            forced_bits = forced_bits | ((r2 & 1u) << n) | ((r2 >> 1u) << (8u + n));
        }
    }
    return forced_bits;
}

// Lift the cluster of slot y, whose -1 a raise lifted (its record `info`): the siblings
// raised to y's level (bit c).
fn lift_cluster(info: vec4<u32>) -> u32 {
    var raised = 0u;
    // #unroll
    for (var c = 0u; c < 3u; c = c + 1u) {
        raised = raised | ((force(info[1u + c], info.x) & 1u) << c);
    }
    return raised;
}

// Enforce slot x at a = v: its face neighbours to v - 1, then the clusters whose -1 that
// lifted to their level. Returns the forcings that raised their slot (bit k, as above).
fn enforce(x: u32, v: u32) -> u32 {
    if (v == 0u) {
        return 0u;
    }
    let nb = neighbors[x];
    let second = neighbors[range.capacity + x];
    let forced_bits = force_neighbours(nb, second, v - 1u);
    var raised = forced_bits & 0xffu;
    var lifted = forced_bits >> 8u;
    while (lifted != 0u) {
        let n = firstTrailingBit(lifted);
        lifted = lifted & (lifted - 1u);
        let info = slot_info[side_neighbour(nb, second, n)];
        raised = raised | (lift_cluster(info) << (CLUSTERS + 3u * n));
    }
    return raised;
}

// The chain from slot y, raised to a = v at `depth` links from its start, followed depth first
// by this thread (what the workgroup's queue has no room for). Returns the most links it
// reached.
fn follow_chain(y: u32, v: u32, depth: u32) -> u32 {
    var chain_slot: array<u32, CHAIN_SLOTS>;
    var chain_value: array<u32, CHAIN_SLOTS>;
    var chain_left: array<u32, CHAIN_SLOTS>;
    chain_slot[0] = y;
    chain_value[0] = v;
    chain_left[0] = enforce(y, v);
    var held = 1u;
    var deepest = depth;
    loop {
        let top = held - 1u;
        let left = chain_left[top];
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
        let k = firstTrailingBit(left);
        chain_left[top] = left & (left - 1u);
        let next = forced(chain_slot[top], chain_value[top], k);
        chain_slot[held] = next.x;
        chain_value[held] = next.y;
        chain_left[held] = enforce(next.x, next.y);
        deepest = max(deepest, depth + held);
        held = held + 1u;
    }
    return deepest;
}

// Raises the workgroup follows together, a round a link: per round, slot and
// (a | links from the start << 8) of each raise made in the round before, in two halves (this
// round's, the next's).
const QUEUE: u32 = 256u;
var<workgroup> queue: array<vec2<u32>, 2u * QUEUE>;
var<workgroup> queued: array<atomic<u32>, 2>;
var<workgroup> round_items: u32;

// Queue slot y, raised to a = w at `depth` links from its start, for round `next`; when the
// queue has no room this thread follows it at once. Returns the most links that reached.
fn queue_raise(y: u32, w: u32, depth: u32, next: u32) -> u32 {
    let at = atomicAdd(&queued[next], 1u);
    if (at < QUEUE) {
        queue[next * QUEUE + at] = vec2<u32>(y, w | (depth << 8u));
        return depth;
    }
    return follow_chain(y, w, depth);
}

// Enforce slot x at a = v (`depth` links from its start) as enforce does, queueing each
// raise for round `next` from the records at hand. Returns the most links that reached.
fn enforce_queued(x: u32, v: u32, depth: u32, next: u32) -> u32 {
    if (v == 0u) {
        return 0u;
    }
    let nb = neighbors[x];
    let second = neighbors[range.capacity + x];
    let forced_bits = force_neighbours(nb, second, v - 1u);
    var deepest = 0u;
    var raised = forced_bits & 0xffu;
    while (raised != 0u) {
        let n = firstTrailingBit(raised);
        raised = raised & (raised - 1u);
        let y = side_neighbour(nb, second, n);
        deepest = max(deepest, queue_raise(y, v - 1u, depth + 1u, next));
    }
    var lifted = forced_bits >> 8u;
    while (lifted != 0u) {
        let n = firstTrailingBit(lifted);
        lifted = lifted & (lifted - 1u);
        let info = slot_info[side_neighbour(nb, second, n)];
        var siblings = lift_cluster(info);
        while (siblings != 0u) {
            let c = firstTrailingBit(siblings);
            siblings = siblings & (siblings - 1u);
            deepest = max(deepest, queue_raise(info[1u + c], info.x, depth + 1u, next));
        }
    }
    return deepest;
}

// The chains of the workgroup's slots: each enforces its own a, then the raises are followed
// in rounds, every thread taking its share of the raises the round before made. Returns the
// most links this thread's chains reached.
fn chains(t: u32, lid: u32) -> u32 {
    if (lid < 2u) {
        atomicStore(&queued[lid], 0u);
    }
    workgroupBarrier();
    var deepest = 0u;
    if (t < min(range.count, atomicLoad(&counters[C_ACTIVE]))) {
        deepest = enforce_queued(t, atomicLoad(&after[t]) >> 1u, 0u, 0u);
    }
    var round = 0u;
    loop {
        let current = round & 1u;
        workgroupBarrier();
        if (lid == 0u) {
            round_items = min(atomicLoad(&queued[current]), QUEUE);
        }
        let items = workgroupUniformLoad(&round_items);
        if (items == 0u) {
            break;
        }
        for (var i = lid; i < items; i = i + WORKGROUP_SIZE) {
            let item = queue[current * QUEUE + i];
            let reached = enforce_queued(item.x, item.y & 0xffu, item.y >> 8u, current ^ 1u);
            deepest = max(deepest, reached);
        }
        workgroupBarrier();
        if (lid == 0u) {
            atomicStore(&queued[current], 0u);
        }
        round = round + 1u;
    }
    return deepest;
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(
    @builtin(global_invocation_id) gid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    let t = linear_index(gid, nwg);
    if (range.color == 0u) {
        first_pass(t);
        return;
    }
    let deepest = chains(t, lid);
    if (deepest > 0u) {
        atomicMax(&counters[C_SMOOTH_CHAIN], deepest);
    }
}
