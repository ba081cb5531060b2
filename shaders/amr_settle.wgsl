// #include "common/dispatch.wgsl"
// #include "common/amr_tree.wgsl"
// #include "common/amr_raise.wgsl"

// The 2:1 rules of the smoothing in one launch after amr_smooth's pass 0, whatever the levels
// (from 8 levels on CUDA, 5 on wgpu: SmoothingPasses::for_levels in src/solver/dg/amr/gpu.rs;
// AdaptiveMesh::smooth_flags_in_rounds in src/solver/dg/amr/tree.rs is its CPU twin). With
// a_i = level_i + f_i in `after` as pass 0 left it, thread t = slot t settles slot t: across
// each of its faces (its face neighbours) the side that would end more than one level coarser
// than the other is raised to one below it, a_j <- max(a_j, a_i - 1), and a raise that lifts a
// -1 (a_j = level_j - 1) lifts its siblings' -1 too (a <- max(a, level_j)). Every slot that
// rises goes to its workgroup's queue, whose threads settle it in the next round (rounds until
// the queue stays empty), or, past QUEUE_SLOTS in a round, to a list that the launch's last
// workgroup settles in rounds of its own (a slot waits in a list once: handoff[slot] is 1
// meanwhile).
// Why this ends at the least admissible flags above the start (AdaptiveMesh::smooth_flags):
// every raise is forced, so no a passes them; the a only rise, and every rise is followed by
// a settle of the raised slot, reading its neighbours' a as they stand (a read may be stale,
// never too high), after the rise. Take the last rise of either side of a face: its settle
// reads the other side at most at its final a and raises it if the rule asks, so every face
// (and cluster) holds at the end, with no host check and no launch per level (amr_smooth's
// stages take max_level - 1 launches). A workgroup's rounds settle the slots a rise reaches
// together, a round per link of the longest chain of raises from its slots (a ripple loses a
// level a link), so the launch takes that chain's time; most workgroups raise little and stop
// after a round or two. A raise is an atomic max on after; the ticket, the lists' lengths and
// their entries are atomics. A workgroup that handed slots off orders its entries before its
// ticket with storageBarrier() (as common/scan_blocks) and sets the ticket's flag
// (TICKET_HANDED); the last workgroup reads the lists only when the flag is set, so in the
// usual smoothing, with no hand-off, its path ends at its ticket (amr_settle 1.3-2.0 us faster
// on an H200, CUDA and Vulkan).

@group(0) @binding(0) var<storage, read_write> counters: array<atomic<u32>>;
// Per slot: its element's level and the slots of its three siblings (amr_smooth's pass 0).
@group(0) @binding(1) var<storage, read> slot_info: array<vec4<u32>>;
// Per slot: a = level + flag as the smoothing stands.
@group(0) @binding(2) var<storage, read_write> after: array<atomic<u32>>;
// 3 NE words: per slot 1 while it waits in a list, then the two lists (C_SMOOTH_LISTS holds
// their lengths). All 0 between smoothings.
@group(0) @binding(3) var<storage, read_write> handoff: array<atomic<u32>>;
// The face neighbours: [i] sides 0..2 with the mask of split sides in w, [NE + i] the second
// halves.
@group(0) @binding(4) var<storage, read> neighbors: array<vec4<u32>>;
@group(1) @binding(0) var<uniform> range: ItemRange;

// Slots a workgroup's queue takes in a round before it hands the rest off (at most MAX_QUEUE; 0
// hands every raised slot to the last workgroup's lists, which tests that path).
override QUEUE_SLOTS: u32 = 128u;
const MAX_QUEUE: u32 = 128u;
// The ticket's flag that a workgroup handed slots off (its low bits count the tickets).
const TICKET_HANDED: u32 = 0x80000000u;

// The workgroup's queue, two halves (the round's slots and the next round's) with their
// lengths; a round's length, whether this is the launch's last workgroup (0: no; 1: yes, and
// no workgroup handed a slot off; 2: yes, with hand-offs) and a list's length, read by one
// thread for all.
var<workgroup> queue: array<u32, 2u * MAX_QUEUE>;
var<workgroup> queue_length: array<atomic<u32>, 2>;
var<workgroup> round_length: u32;
var<workgroup> is_last: u32;
var<workgroup> list_length: u32;
// Whether a thread of this workgroup handed a slot off: only then has it entries to release
// before its ticket.
var<workgroup> handed_any: atomic<u32>;
// The queue half and the list that this thread's follows go to.
var<private> queue_out: u32;
var<private> list_out: u32;

// Slot pos to be settled after a rise: in the queue's next round, or when that is full handed to
// list list_out, unless it waits there already (its settle then reads the a it ends at).
fn follow(pos: u32) {
    let q = atomicAdd(&queue_length[queue_out], 1u);
    if (q < min(QUEUE_SLOTS, MAX_QUEUE)) {
        queue[queue_out * MAX_QUEUE + q] = pos;
        return;
    }
    if (atomicExchange(&handoff[pos], 1u) != 0u) {
        return;
    }
    atomicStore(&handed_any, 1u);
    // A slot waits in a list once, so a list holds at most the active slots.
    let k = atomicAdd(&counters[C_SMOOTH_LISTS + list_out], 1u);
    if (k >= range.capacity) {
        atomicStore(&counters[C_ERROR], 1u);
        return;
    }
    atomicStore(&handoff[(1u + list_out) * range.capacity + k], pos);
}

// Slot n's a as it stands, 0 for no slot (n NONE: no rule to apply).
fn after_of(n: u32) -> u32 {
    if (n == NONE) {
        return 0u;
    }
    return atomicLoad(&after[n]);
}

// The 2:1 rule across the face of slot x (at a) and its neighbour n (at b): the lower side raised
// to one below the higher.
fn face_rule(x: u32, a: u32, n: u32, b: u32) {
    if (n == NONE) {
        return;
    }
    if (a > b + 1u) {
        raise(n, a - 1u);
    } else if (b > a + 1u) {
        raise(x, b - 1u);
    }
}

// Settle slot x: the rule across each of its faces. Its a and all its neighbours' are read
// before the first rule, so a settle waits on one round trip rather than one per face (the
// loads would otherwise wait on the raises before them): a read may be stale, never too high,
// and it comes after the rise that this settle follows (above); a raise of x during it follows
// x again.
fn settle(x: u32) {
    let sides = neighbors[x];
    // The second halves, read where a side is split (bit s of sides.w).
    let halves = select(vec3<u32>(NONE), neighbors[range.capacity + x].xyz,
                        (vec3<u32>(sides.w) & vec3<u32>(1u, 2u, 4u)) != vec3<u32>(0u));
    let a = atomicLoad(&after[x]);
    let whole = vec3<u32>(after_of(sides.x), after_of(sides.y), after_of(sides.z));
    let second = vec3<u32>(after_of(halves.x), after_of(halves.y), after_of(halves.z));
    // #unroll
    for (var s = 0u; s < 3u; s = s + 1u) {
        face_rule(x, a, sides[s], whole[s]);
        face_rule(x, a, halves[s], second[s]);
    }
}

// Settle `item` (NONE: nothing) in this thread, then, with the whole workgroup, the slots that
// rise in rounds until a round raises nothing: a round's slots spread over the threads, its
// rises queued for the next one. Called in uniform control flow with both queue halves empty,
// and leaves them so.
fn settle_in_rounds(item: u32, lid: u32) {
    queue_out = 0u;
    if (item != NONE) {
        settle(item);
    }
    var half = 0u;
    loop {
        workgroupBarrier();
        if (lid == 0u) {
            round_length = min(atomicLoad(&queue_length[half]), min(QUEUE_SLOTS, MAX_QUEUE));
        }
        let n = workgroupUniformLoad(&round_length);
        if (n == 0u) {
            break;
        }
        queue_out = 1u - half;
        for (var k = lid; k < n; k = k + WORKGROUP_SIZE) {
            settle(queue[half * MAX_QUEUE + k]);
        }
        // Every thread done with the round's half before it is emptied for the next round.
        workgroupBarrier();
        if (lid == 0u) {
            atomicStore(&queue_length[half], 0u);
        }
        half = 1u - half;
    }
    // With QUEUE_SLOTS 0 the half's length counted hand-offs: emptied before the next call's
    // follows.
    if (lid == 0u) {
        atomicStore(&queue_length[half], 0u);
    }
    workgroupBarrier();
}

// The launch's last workgroup: the handed-off slots settled, list 0 first, a slot per thread with
// the workgroup's rounds after it, each list's hand-offs into the other list, until a list stays
// empty (every hand-off is a rise, and a slot rises at most max_level + 1 times, so this ends).
// Leaves the lists empty, the ticket at 0 and the slots it settled in C_SMOOTH_HANDED.
fn settle_handed_off(lid: u32) {
    var list = 0u;
    var handed = 0u;
    loop {
        // The last list's entries and lengths before they are read.
        storageBarrier();
        if (lid == 0u) {
            list_length = atomicLoad(&counters[C_SMOOTH_LISTS + list]);
        }
        let n = workgroupUniformLoad(&list_length);
        if (n == 0u) {
            break;
        }
        handed = handed + n;
        list_out = 1u - list;
        for (var base = 0u; base < n; base = base + WORKGROUP_SIZE) {
            var item = NONE;
            if (base + lid < n) {
                item = atomicLoad(&handoff[(1u + list) * range.capacity + base + lid]);
                atomicStore(&handoff[item], 0u);
            }
            settle_in_rounds(item, lid);
        }
        // Every thread done with the list before it is emptied for the next one's hand-offs.
        storageBarrier();
        workgroupBarrier();
        if (lid == 0u) {
            atomicStore(&counters[C_SMOOTH_LISTS + list], 0u);
        }
        list = 1u - list;
    }
    if (lid == 0u) {
        atomicStore(&counters[C_SMOOTH_HANDED], handed);
        atomicStore(&counters[C_SMOOTH_TICKET], 0u);
    }
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(
    @builtin(global_invocation_id) gid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    let t = linear_index(gid, nwg);
    if (lid == 0u) {
        atomicStore(&queue_length[0], 0u);
        atomicStore(&queue_length[1], 0u);
        atomicStore(&handed_any, 0u);
    }
    list_out = 0u;
    var item = NONE;
    if (t < range.count && t < atomicLoad(&counters[C_ACTIVE])) {
        item = t;
    }
    workgroupBarrier();
    settle_in_rounds(item, lid);
    // Release this workgroup's hand-offs, if it made any, before its ticket; every workgroup
    // takes one, and one that handed slots off sets the ticket's flag first.
    let handed = workgroupUniformLoad(&handed_any);
    if (handed != 0u) {
        storageBarrier();
    }
    if (lid == 0u) {
        if (handed != 0u) {
            atomicOr(&counters[C_SMOOTH_TICKET], TICKET_HANDED);
        }
        let all = atomicAdd(&counters[C_SMOOTH_TICKET], 1u) + 1u;
        let last = (all & ~TICKET_HANDED) == nwg.x * nwg.y;
        is_last = select(0u, select(1u, 2u, (all & TICKET_HANDED) != 0u), last);
    }
    let last = workgroupUniformLoad(&is_last);
    if (last == 0u) {
        return;
    }
    if (last == 1u) {
        // No workgroup handed a slot off: the lists are empty.
        if (lid == 0u) {
            atomicStore(&counters[C_SMOOTH_HANDED], 0u);
            atomicStore(&counters[C_SMOOTH_TICKET], 0u);
        }
        return;
    }
    // Acquire every workgroup's hand-offs (their tickets came before ours).
    storageBarrier();
    settle_handed_off(lid);
}
