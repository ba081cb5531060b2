// #include "common/dispatch.wgsl"
// #include "common/amr_tree.wgsl"
// #include "common/amr_indicator.wgsl"

// The 2:1 smoothing of the flags (GK19 Algorithm 2): pass 0, then pass 1 in rounds or the
// stages by level (AdaptiveMesh::smooth_flags_in_rounds and smooth_flags_in_stages in
// src/solver/dg/amr/tree.rs are its CPU twins; the host picks by the levels, SmoothingPasses in
// src/solver/dg/amr/gpu.rs). With
// a_i = level_i + f_i the level element i ends at, kept per slot in `after` (amr_mark turns it
// back into the flags):
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
//      rises goes to its workgroup's queue, whose threads settle it in the next round (rounds
//      until the queue stays empty), or, past QUEUE_SLOTS in a round, to a list that the
//      launch's last workgroup settles in rounds of its own (a slot waits in a list once:
//      handoff[slot] is 1 meanwhile);
//   or stage s = range.color - 1 >= 1, thread t = face t of the current mesh, while s < top:
//      the same rule across the face, with no settle after a rise; stage s works toward
//      v = top - s (its raises end at a <= v: a face raise at a_i - 1, a lifted cluster at its
//      level; every a = v + 1 was reached in a stage before it), so after it every face whose
//      higher side ends at v + 1 or more holds for good, and the stages s = 1 .. top - 1 end at
//      the same flags. A launch per level below the maximum (the stages past top - 1 return
//      at once): with few levels they cost less than pass 1's chain of loads (BENCHMARKS.md,
//      session 32).
// Why pass 1 ends at the least admissible flags above the start (AdaptiveMesh::smooth_flags):
// every raise is forced, so no a passes them; the a only rise, and every rise is followed by
// a settle of the raised slot, reading its neighbours' a as they stand (a read may be stale,
// never too high), after the rise. Take the last rise of either side of a face: its settle
// reads the other side at most at its final a and raises it if the rule asks, so every face
// (and cluster) holds at the end, with no host check and no launch per level (the stages by
// level that this replaced took max_level - 1 launches, each bound by its launch and a chain
// of loads). A workgroup's rounds settle the slots a rise reaches together, a round per link
// of the longest chain of raises from its slots (a ripple loses a level a link), so the
// launch's time is that chain's, not the size of what rises; most workgroups raise nothing and
// stop after one round. A raise is an atomic max on after; the ticket, the lists' lengths and
// their entries are atomics, and storageBarrier() orders every workgroup's entries before its
// ticket (as common/scan_blocks).

@group(0) @binding(0) var<storage, read> slots: array<u32>;
@group(0) @binding(1) var<storage, read> element_tree: array<vec4<u32>>;
// The flags' i32 bits as they came (pass 0 reads them).
@group(0) @binding(2) var<storage, read> flags: array<u32>;
@group(0) @binding(3) var<storage, read_write> counters: array<atomic<u32>>;
// Per slot: its element's level and the slots of its three siblings (NONE for a root, or for a
// sibling that is not active), written by pass 0 so that a raise reaches a slot's level and its
// siblings in one load.
@group(0) @binding(4) var<storage, read_write> slot_info: array<vec4<u32>>;
// Per slot: a = level + flag as the smoothing stands (pass 0 stores it, pass 1 raises it).
@group(0) @binding(5) var<storage, read_write> after: array<atomic<u32>>;
// Pass 1's hand-off, 3 NE words: per slot 1 while it waits in a list, then the two lists
// (C_SMOOTH_LISTS holds their lengths). All 0 between smoothings.
@group(0) @binding(6) var<storage, read_write> handoff: array<atomic<u32>>;
// With FLAGGED = 1, what pass 0 computes the flags from (amr_flag's inputs): register 0's high
// words, the centroid basis, the inverse Jacobians, the heights; and the face neighbours (also
// pass 1's faces: [i] sides 0..2 with the mask of split sides in w, [NE + i] the second halves).
@group(0) @binding(7) var<storage, read> regs: array<f32>;
@group(0) @binding(8) var<storage, read> centroid_basis: array<vec4<f32>>;
@group(0) @binding(9) var<storage, read> inv_jac: array<vec4<f32>>;
@group(0) @binding(10) var<storage, read> heights: array<f32>;
@group(0) @binding(11) var<storage, read> neighbors: array<vec4<u32>>;
// DgEdge records (8 words: left, right, info, normal, length, midpoint): the stages' faces.
@group(0) @binding(12) var<storage, read> faces: array<u32>;
@group(1) @binding(0) var<uniform> range: ItemRange;

// 1: pass 0 computes each slot's flag from the indicator (amr_flag's, a launch less before
// it: what a run's smoothing does), instead of reading `flags` (a host's flags, or amr_flag's).
override FLAGGED: u32 = 0u;
override NP: u32 = 3u;
// Slots a pass-1 workgroup's queue takes in a round before it hands the rest off (at most
// MAX_QUEUE; 0 hands every raised slot to the last workgroup's lists, which tests that path).
override QUEUE_SLOTS: u32 = 128u;
const MAX_QUEUE: u32 = 128u;
@group(2) @binding(0) var<uniform> params: AmrParams;

// Pass 0: the largest a_i of the workgroup (one atomic on the counters per workgroup).
var<workgroup> group_top: atomic<u32>;
// Pass 1: the workgroup's queue, two halves (the round's slots and the next round's) with
// their lengths; a round's length, whether this is the launch's last workgroup and a list's
// length, read by one thread for all.
var<workgroup> queue: array<u32, 2u * MAX_QUEUE>;
var<workgroup> queue_length: array<atomic<u32>, 2>;
var<workgroup> round_length: u32;
var<workgroup> is_last: u32;
var<workgroup> list_length: u32;
// A stage: top and the faces, read by one thread of the workgroup for all.
var<workgroup> stage_counts: vec2<u32>;
// Pass 1: the queue half and the list that this thread's follows go to.
var<private> queue_out: u32;
var<private> list_out: u32;

// Flag bits `bits` of an element at `level` as the smoothing reads them: within -1..1, 0 for
// a refinement past the maximum level or a coarsening of a root.
fn admissible(bits: u32, level: u32) -> i32 {
    let f = clamp(bitcast<i32>(bits), -1, 1);
    if ((f > 0 && level >= params.max_level) || (f < 0 && level == 0u)) {
        return 0;
    }
    return f;
}

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
    // A slot waits in a list once, so a list holds at most the active slots.
    let k = atomicAdd(&counters[C_SMOOTH_LISTS + list_out], 1u);
    if (k >= range.capacity) {
        atomicStore(&counters[C_ERROR], 1u);
        return;
    }
    atomicStore(&handoff[(1u + list_out) * range.capacity + k], pos);
}

// Raise slot pos to a = wanted; when that lifts its -1, lift its siblings' -1 too (the cluster
// rule): exactly one raise lifts a given -1, the one whose atomic max saw level - 1. Every slot
// that rises is followed. The slot's record is loaded with the atomic max rather than after it,
// one round trip less on the chain of a raise.
fn raise(pos: u32, wanted: u32) {
    let info = slot_info[pos];
    let old = atomicMax(&after[pos], wanted);
    if (old >= wanted) {
        return;
    }
    // Pass 1 follows every rise; a stage leaves it to the next stage.
    let rounds = range.color == 1u;
    if (rounds) {
        follow(pos);
    }
    if (old + 1u != info.x) {
        return;
    }
    // #unroll
    for (var c = 0u; c < 3u; c = c + 1u) {
        let sibling = info[1u + c];
        if (sibling != NONE && atomicMax(&after[sibling], info.x) < info.x && rounds) {
            follow(sibling);
        }
    }
}

// A stage's rule across face f (both sides' a loaded together: one round trip on its chain).
fn stage_face(f: u32) {
    let l = faces[8u * f];
    let r = faces[8u * f + 1u];
    if (r == NONE) {
        return;
    }
    let after_l = atomicLoad(&after[l]);
    let after_r = atomicLoad(&after[r]);
    if (after_l > after_r + 1u) {
        raise(r, after_l - 1u);
    } else if (after_r > after_l + 1u) {
        raise(l, after_r - 1u);
    }
}

// The 2:1 rule across the face of slot x (at a) and its neighbour n: the lower side raised to
// one below the higher.
fn face_rule(x: u32, a: u32, n: u32) {
    if (n == NONE) {
        return;
    }
    let b = atomicLoad(&after[n]);
    if (a > b + 1u) {
        raise(n, a - 1u);
    } else if (b > a + 1u) {
        raise(x, b - 1u);
    }
}

// Settle slot x: the rule across each of its faces, its a read after its neighbours' records
// (a raise of x during it follows x again).
fn settle(x: u32) {
    let sides = neighbors[x];
    var halves = vec4<u32>(NONE);
    if (sides.w != 0u) {
        halves = neighbors[range.capacity + x];
    }
    let a = atomicLoad(&after[x]);
    // #unroll
    for (var s = 0u; s < 3u; s = s + 1u) {
        face_rule(x, a, sides[s]);
        if (((sides.w >> s) & 1u) != 0u) {
            face_rule(x, a, halves[s]);
        }
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

// The flag of slot t as it came: the indicator's (FLAGGED) or the one in `flags`.
fn raw_flag(t: u32) -> u32 {
    if (FLAGGED != 0u) {
        return bitcast<u32>(indicator_flag(t));
    }
    return flags[t];
}

// Pass 0 for slot t: slot_info, the admissible flag stored, and a_t (0 past the active slots).
fn first_pass(t: u32) -> u32 {
    if (t >= atomicLoad(&counters[C_ACTIVE])) {
        return 0u;
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
    var f = admissible(raw_flag(t), level);
    if (f < 0) {
        // A root's -1 was read as 0 above, so this slot has siblings.
        // #unroll
        for (var c = 0u; c < 3u; c = c + 1u) {
            let sibling = info[1u + c];
            if (sibling == NONE || admissible(raw_flag(sibling), level) >= 0) {
                f = 0;
            }
        }
    }
    let a = u32(i32(level) + f);
    atomicStore(&after[t], a);
    return a;
}

// Pass 1's last workgroup: the handed-off slots settled, list 0 first, a slot per thread with
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
    if (range.color == 0u) {
        if (lid == 0u) {
            atomicStore(&group_top, 0u);
        }
        workgroupBarrier();
        atomicMax(&group_top, first_pass(t));
        workgroupBarrier();
        if (lid == 0u) {
            let top = atomicLoad(&group_top);
            if (top > 0u) {
                atomicMax(&counters[C_SMOOTH_TOP], top);
            }
        }
        return;
    }
    if (range.color >= 2u) {
        if (lid == 0u) {
            stage_counts = vec2<u32>(
                atomicLoad(&counters[C_SMOOTH_TOP]),
                atomicLoad(&counters[C_COLOR_OFFSETS + 2u * params.base_colors]),
            );
        }
        let counts = workgroupUniformLoad(&stage_counts);
        // Stage s raises toward top - s; below 1 nothing is left to raise.
        if (range.color - 1u >= counts.x) {
            return;
        }
        if (t < range.count && t < counts.y) {
            stage_face(t);
        }
        return;
    }
    if (lid == 0u) {
        atomicStore(&queue_length[0], 0u);
        atomicStore(&queue_length[1], 0u);
    }
    list_out = 0u;
    var item = NONE;
    if (t < range.count && t < atomicLoad(&counters[C_ACTIVE])) {
        item = t;
    }
    workgroupBarrier();
    settle_in_rounds(item, lid);
    // Release this workgroup's hand-offs before its ticket; every workgroup takes one.
    storageBarrier();
    workgroupBarrier();
    if (lid == 0u) {
        let last = atomicAdd(&counters[C_SMOOTH_TICKET], 1u) == nwg.x * nwg.y - 1u;
        is_last = select(0u, 1u, last);
    }
    if (workgroupUniformLoad(&is_last) == 0u) {
        return;
    }
    // Acquire every workgroup's hand-offs (their tickets came before ours).
    storageBarrier();
    settle_handed_off(lid);
}
