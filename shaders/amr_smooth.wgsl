// #include "common/dispatch.wgsl"
// #include "common/amr_tree.wgsl"

// One pass of the 2:1 smoothing of the flags (GK19 Algorithm 2; AdaptiveMesh::smooth_flags in
// src/solver/dg/amr/tree.rs), every rule in one launch over the faces of the current mesh
// (there are at least as many faces as elements: each element has three sides, a face touches
// two). Thread t:
//   slot t: no refinement past the maximum level and no coarsening of a root (read that way
//      everywhere, stored by a compare-exchange that never undoes a raise), and a coarsening
//      flag stands only if all four siblings are active and flagged -1 (the cluster rule);
//   face t: the side that would end more than one level coarser than the other is raised to
//      one level below it.
// A thread that raises a flag follows the raises it forces (chase), so chains of them settle
// in few passes.
// The rules only raise flags (-1 -> 0 -> +1) and every raise is forced, so the passes end at
// the least admissible flags above the start whatever the order of the raises: no colors are
// needed, a raise is an atomic max (a compare-exchange loop on the i32 bits) and a read sees
// the flag as it stands. range.color is the pass number within the submission; a workgroup
// that raised records it in counters[C_LAST_CHANGE] (atomic max), which amr_count phase 0
// hands to counters[C_CHANGED] at the end of the submission: below the last pass means
// settled. A pass after one that raised nothing returns at once. Pass 0 (range.color = 0) only
// writes slot_info for the passes after it.

override NE: u32 = 1u;
// Slots a chase holds waiting and examines at most (chase).
const CHASE_STACK: u32 = 8u;
// A chase's mark for a neighbour it need not raise (a raise asks for at least 0).
const NO_RAISE: i32 = -1;
const CHASE_STEPS: u32 = 32u;

@group(0) @binding(0) var<storage, read> slots: array<u32>;
@group(0) @binding(1) var<storage, read> element_tree: array<vec4<u32>>;
// The flags' i32 bits.
@group(0) @binding(2) var<storage, read_write> flags: array<atomic<u32>>;
// DgEdge records (8 words: left, right, info, normal, length, midpoint).
@group(0) @binding(3) var<storage, read> faces: array<u32>;
@group(0) @binding(4) var<storage, read_write> counters: array<atomic<u32>>;
// The current mesh's face neighbours (the DG solver's): NE blocks of (side 0, 1, 2, split
// mask), then NE of the second halves.
@group(0) @binding(5) var<storage, read> neighbors: array<vec4<u32>>;
// Per slot: its element's level and the slots of its three siblings (NONE for a root, or for a
// sibling that is not active), written by pass 0 so that the passes reach a slot's level and
// its siblings' slots in one load: the chase's steps are chains of dependent loads, and each
// load of the chain is a memory latency.
@group(0) @binding(6) var<storage, read_write> slot_info: array<vec4<u32>>;
@group(1) @binding(0) var<uniform> range: ItemRange;
@group(2) @binding(0) var<uniform> params: AmrParams;

// Read by one thread of the workgroup for all: the last pass that raised, the active slots,
// the faces.
var<workgroup> pass_counts: vec3<u32>;
// Whether a thread of the workgroup raised a flag: one atomic on the counters per workgroup.
var<workgroup> raised_in_group: atomic<u32>;

// Flag bits `bits` of an element at `level` as the smoothing reads them: within -1..1, 0 for
// a refinement past the maximum level or a coarsening of a root.
fn admissible(bits: u32, level: u32) -> i32 {
    let f = clamp(bitcast<i32>(bits), -1, 1);
    if ((f > 0 && level >= params.max_level) || (f < 0 && level == 0u)) {
        return 0;
    }
    return f;
}

fn level_of(pos: u32) -> u32 {
    return slot_info[pos].x;
}

fn flag_of(pos: u32, level: u32) -> i32 {
    return admissible(atomicLoad(&flags[pos]), level);
}

// Raise the flag of slot pos (at `level`) to `wanted` unless it is there already; whether
// this call raised it.
fn raise_flag(pos: u32, level: u32, wanted: i32) -> bool {
    var old = atomicLoad(&flags[pos]);
    var raised = false;
    while (!raised && admissible(old, level) < wanted) {
        let r = atomicCompareExchangeWeak(&flags[pos], old, bitcast<u32>(wanted));
        raised = r.exchanged;
        old = r.old_value;
    }
    if (raised) {
        atomicStore(&raised_in_group, 1u);
    }
    return raised;
}

// Slot across side k of slot pos in the current mesh: sides 0..2, then the second halves of
// split sides (3..5); NONE on a boundary (the faces' pairs, as the solver's neighbours).
fn neighbour(pos: u32, k: u32) -> u32 {
    if (k < 3u) {
        return neighbors[pos][k];
    }
    return neighbors[NE + pos][k - 3u];
}

// The raises a raise of slot `start` forces, followed in this thread (depth first, CHASE_STACK
// slots waiting, CHASE_STEPS slots examined at most): its face neighbours that would end more
// than one level coarser, and, once its flag no longer asks to coarsen, its siblings' -1 (the
// cluster rule). A chain of forced raises then settles in one pass instead of one pass a link;
// what the bounds leave waits for the next pass. A step loads every neighbour's and sibling's
// slot, level and flag before it raises any, and then tries all its raises at once, so their
// chains of dependent loads and their compare-exchanges are in flight together instead of one
// after another.
fn chase(start: u32) {
    var waiting: array<u32, CHASE_STACK>;
    waiting[0] = start;
    var top = 1u;
    for (var step = 0u; step < CHASE_STEPS && top > 0u; step = step + 1u) {
        top = top - 1u;
        let pos = waiting[top];
        let own = slot_info[pos];
        let level = own.x;
        let f = flag_of(pos, level);
        let after = i32(level) + f;
        // Nine candidates: the slots across sides 0..5 and the three siblings (whose -1 the
        // cluster rule lifts once this flag no longer asks to coarsen); each one's level, its
        // flag bits as loaded, and the flag it needs raised to (or NO_RAISE).
        var candidate: array<u32, 9>;
        var level_at: array<u32, 9>;
        var bits: array<u32, 9>;
        var wanted: array<i32, 9>;
        // #unroll
        for (var k = 0u; k < 6u; k = k + 1u) {
            candidate[k] = neighbour(pos, k);
        }
        // #unroll
        for (var c = 0u; c < 3u; c = c + 1u) {
            candidate[6u + c] = NONE;
            if (f >= 0) {
                candidate[6u + c] = own[1u + c];
            }
        }
        // #unroll
        for (var k = 0u; k < 9u; k = k + 1u) {
            wanted[k] = NO_RAISE;
            if (candidate[k] != NONE) {
                var need = 0;
                level_at[k] = level;
                if (k < 6u) {
                    level_at[k] = level_of(candidate[k]);
                    need = after - 1 - i32(level_at[k]);
                }
                bits[k] = atomicLoad(&flags[candidate[k]]);
                if (admissible(bits[k], level_at[k]) < need) {
                    wanted[k] = need;
                }
            }
        }
        // Every raise tried at once from the bits loaded, the compare-exchanges in flight
        // together; one that lost a race to another raise retries in raise_flag.
        var swapped: array<bool, 9>;
        // #unroll
        for (var k = 0u; k < 9u; k = k + 1u) {
            swapped[k] = false;
            if (wanted[k] != NO_RAISE) {
                swapped[k] = atomicCompareExchangeWeak(
                    &flags[candidate[k]],
                    bits[k],
                    bitcast<u32>(wanted[k]),
                ).exchanged;
            }
        }
        // #unroll
        for (var k = 0u; k < 9u; k = k + 1u) {
            if (wanted[k] != NO_RAISE) {
                if (swapped[k]) {
                    atomicStore(&raised_in_group, 1u);
                }
                let raised = swapped[k] || raise_flag(candidate[k], level_at[k], wanted[k]);
                if (raised && top < CHASE_STACK) {
                    waiting[top] = candidate[k];
                    top = top + 1u;
                }
            }
        }
    }
}

// Store the flag of slot pos as it reads (a refinement past the maximum level or a coarsening
// of a root becomes 0), so later phases read it so too; a raise since the load wins.
fn settle(pos: u32, level: u32) -> i32 {
    var bits = atomicLoad(&flags[pos]);
    var f = admissible(bits, level);
    while (f != clamp(bitcast<i32>(bits), -1, 1)) {
        let r = atomicCompareExchangeWeak(&flags[pos], bits, bitcast<u32>(f));
        if (r.exchanged) {
            break;
        }
        bits = r.old_value;
        f = admissible(bits, level);
    }
    return f;
}

fn cluster_rule(i: u32) {
    let own = slot_info[i];
    let level = own.x;
    let f = settle(i, level);
    if (f >= 0) {
        return;
    }
    // A root's -1 was settled to 0 above, so this slot has siblings.
    var whole = true;
    // #unroll
    for (var c = 0u; c < 3u; c = c + 1u) {
        let pos = own[1u + c];
        if (pos == NONE) {
            whole = false;
        } else if (flag_of(pos, level) >= 0) {
            whole = false;
        }
    }
    if (!whole && raise_flag(i, level, 0)) {
        chase(i);
    }
}

fn face_rule(f: u32) {
    let l = faces[8u * f];
    let r = faces[8u * f + 1u];
    if (r == NONE) {
        return;
    }
    let level_l = level_of(l);
    let level_r = level_of(r);
    let after_l = i32(level_l) + flag_of(l, level_l);
    let after_r = i32(level_r) + flag_of(r, level_r);
    if (after_l - after_r > 1) {
        if (raise_flag(r, level_r, after_l - 1 - i32(level_r))) {
            chase(r);
        }
    } else if (after_r - after_l > 1) {
        if (raise_flag(l, level_l, after_r - 1 - i32(level_l))) {
            chase(l);
        }
    }
}

// Pass 0: slot_info of slot t.
fn write_slot_info(t: u32) {
    if (t >= atomicLoad(&counters[C_ACTIVE])) {
        return;
    }
    let id = slots[t];
    let own = element_tree[id];
    var info = vec4<u32>(own.x, NONE, NONE, NONE);
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
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(
    @builtin(global_invocation_id) gid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    if (range.color == 0u) {
        write_slot_info(linear_index(gid, nwg));
        return;
    }
    if (lid == 0u) {
        pass_counts = vec3<u32>(
            atomicLoad(&counters[C_LAST_CHANGE]),
            atomicLoad(&counters[C_ACTIVE]),
            atomicLoad(&counters[C_COLOR_OFFSETS + 2u * params.base_colors]),
        );
        atomicStore(&raised_in_group, 0u);
    }
    let counts = workgroupUniformLoad(&pass_counts);
    // Past a pass that raised nothing the flags are settled, and this pass would only confirm
    // it again (the counter holds the last pass that raised, 0 for none).
    if (counts.x + 1u < range.color) {
        return;
    }
    let t = linear_index(gid, nwg);
    if (t < range.count && t < counts.y) {
        cluster_rule(t);
    }
    if (t < range.count && t < counts.z) {
        face_rule(t);
    }
    workgroupBarrier();
    if (lid == 0u && atomicLoad(&raised_in_group) != 0u) {
        atomicMax(&counters[C_LAST_CHANGE], range.color);
    }
}
