// #include "common/dispatch.wgsl"
// #include "common/amr_tree.wgsl"
// #include "common/amr_indicator.wgsl"

// The 2:1 smoothing of the flags (GK19 Algorithm 2) in two launches, pass 0 and the walks
// (AdaptiveMesh::smooth_flags_by_walks in src/solver/dg/amr/tree.rs is its CPU twin). With
// a_i = level_i + f_i the level element i ends at, kept per slot in `after` (amr_mark turns it
// back into the flags):
//   pass 0 (range.color = 0), thread t = slot t: its slot_info (level and siblings' slots), its
//      flag made admissible (no refinement past the maximum level, no coarsening of a root, a
//      -1 only if all four siblings are active and flagged -1: the cluster rule, on the flags
//      as they came: read from `flags`, or with FLAGGED computed here from the indicator, the
//      slot's own and, when it is -1, its siblings'), a_t stored in after[t], and top =
//      max_i a_i into counters[C_SMOOTH_TOP];
//   the walks (range.color = 1), thread t = slot t: a walk from t at w = a_t as it stands. Each
//      face neighbour y (neighbors: the three sides and the second halves of split sides) with
//      a_y < w - 1 is raised to w - 1 (an atomic max); a raise that lifts a -1 (a_y was
//      level_y - 1) lifts its siblings' -1 too (a <- max(a, level_y)); and the walk goes on
//      from every slot it raised, at the a it raised it to, depth first.
// Every raise is forced: w is a value its slot holds, never above the least admissible flags
// above the start. When the launch ends every face holds: a slot never raised was checked
// against all its neighbours at its final a by its own thread, and a raised one by the walk of
// its last raise, which went on from it at that a. So the walks end at the least admissible
// flags, the same as any order of the forced raises (AdaptiveMesh::smooth_flags), in one launch
// with no host check for convergence: where GK19 repeats a launch per color until nothing
// changes, a chain of raises down the levels is followed to its end within the thread that
// starts it. A chain descends a level a link (a face raise to w - 1, a lift to level_y <= w -
// 1), from at most the top to at least 1: at most 11 links below the maximum level 12, each
// with at most 4 frames pending (the raised slot and the siblings its lift raised), so
// WALK_FRAMES frames hold any walk; one that would not sets WALK_OVERFLOW in the walk counter
// and stops (the host fails the adaptation). The longest chain of raises goes to
// counters[C_SMOOTH_WALK] (cleared by pass 0). A walk reads one word per neighbour (a_y), not
// the flag and the slot_info record: slot_info is read by a raise alone, for its level and
// siblings.

@group(0) @binding(0) var<storage, read> slots: array<u32>;
@group(0) @binding(1) var<storage, read> element_tree: array<vec4<u32>>;
// The flags' i32 bits as they came (pass 0 reads them).
@group(0) @binding(2) var<storage, read> flags: array<u32>;
@group(0) @binding(3) var<storage, read_write> counters: array<atomic<u32>>;
// Per slot: its element's level and the slots of its three siblings (NONE for a root, or for a
// sibling that is not active), written by pass 0 so that a raise reaches a slot's level and its
// siblings in one load.
@group(0) @binding(4) var<storage, read_write> slot_info: array<vec4<u32>>;
// Per slot: a = level + flag as the smoothing stands (pass 0 stores it, the stages raise it).
@group(0) @binding(5) var<storage, read_write> after: array<atomic<u32>>;
// With FLAGGED = 1, what pass 0 computes the flags from (amr_flag's inputs): register 0's high
// words, the centroid basis, the inverse Jacobians, the heights and the face neighbours
// (common/amr_indicator.wgsl); the walks follow the neighbours (dg_limit.wgsl's layout: [i]
// sides 0..2 and the mask of split sides in w, [NE + i] the second neighbours of split sides).
@group(0) @binding(6) var<storage, read> regs: array<f32>;
@group(0) @binding(7) var<storage, read> centroid_basis: array<vec4<f32>>;
@group(0) @binding(8) var<storage, read> inv_jac: array<vec4<f32>>;
@group(0) @binding(9) var<storage, read> heights: array<f32>;
@group(0) @binding(10) var<storage, read> neighbors: array<vec4<u32>>;
@group(1) @binding(0) var<uniform> range: ItemRange;

// 1: pass 0 computes each slot's flag from the indicator (amr_flag's, a launch less before
// it: what a run's smoothing does), instead of reading `flags` (a host's flags, or amr_flag's).
override FLAGGED: u32 = 0u;
override NP: u32 = 3u;
@group(2) @binding(0) var<uniform> params: AmrParams;

// Pass 0: the largest a_i of the workgroup (one atomic on the counters per workgroup). The
// walks: the active count, read by one thread of the workgroup for all, and the workgroup's
// longest chain (one atomic on the counters per workgroup).
var<workgroup> group_top: atomic<u32>;
var<workgroup> walk_active: u32;
var<workgroup> group_walk: atomic<u32>;

// Frames a walk holds (4 a link for 11 links, and the root: see above), and the bit of
// C_SMOOTH_WALK a walk that would need more sets.
const WALK_FRAMES: u32 = 48u;
const WALK_OVERFLOW: u32 = 0x80000000u;

// Flag bits `bits` of an element at `level` as the smoothing reads them: within -1..1, 0 for
// a refinement past the maximum level or a coarsening of a root.
fn admissible(bits: u32, level: u32) -> i32 {
    let f = clamp(bitcast<i32>(bits), -1, 1);
    if ((f > 0 && level >= params.max_level) || (f < 0 && level == 0u)) {
        return 0;
    }
    return f;
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

// A frame of a walk: the slot, and the a it walks from (bits 0..7), the next neighbour to look
// at (8..15) and the raises that led to it (16..).
struct Walk {
    slots: array<u32, WALK_FRAMES>,
    states: array<u32, WALK_FRAMES>,
    frames: u32,
    longest: u32,
}

// Push a frame for slot pos raised to w by the `chain`-th raise of the walk (one that cannot
// raise anything, w < 2, is not pushed); false when the frames are full.
fn push(walk: ptr<function, Walk>, pos: u32, w: u32, chain: u32) -> bool {
    (*walk).longest = max((*walk).longest, chain);
    if (w < 2u) {
        return true;
    }
    if ((*walk).frames == WALK_FRAMES) {
        return false;
    }
    (*walk).slots[(*walk).frames] = pos;
    (*walk).states[(*walk).frames] = w | (chain << 16u);
    (*walk).frames = (*walk).frames + 1u;
    return true;
}

// Neighbour k (0..5) of a slot from its neighbour records: sides 0..2, then the second halves
// of its split sides (NONE where there is none).
fn neighbour(nb: vec4<u32>, halves: vec4<u32>, k: u32) -> u32 {
    if (k < 3u) {
        return nb[k];
    }
    if (((nb.w >> (k - 3u)) & 1u) == 0u) {
        return NONE;
    }
    return halves[k - 3u];
}

// Whether slot root's a as it stands, w, is more than one above a neighbour's: most are not,
// and their threads leave without a walk (whose frames WGSL would zero first).
fn starts_walk(root: u32) -> bool {
    let w = atomicLoad(&after[root]);
    if (w < 2u) {
        return false;
    }
    let nb = neighbors[root];
    var halves = vec4<u32>(NONE);
    if (nb.w != 0u) {
        halves = neighbors[range.capacity + root];
    }
    for (var k = 0u; k < 6u; k = k + 1u) {
        let y = neighbour(nb, halves, k);
        if (y != NONE && atomicLoad(&after[y]) + 1u < w) {
            return true;
        }
    }
    return false;
}

// The walk from slot root (see above); returns its longest chain of raises, with
// WALK_OVERFLOW when its frames ran out.
fn walk_from(root: u32) -> u32 {
    var walk: Walk;
    walk.frames = 0u;
    walk.longest = 0u;
    push(&walk, root, atomicLoad(&after[root]), 0u);
    while (walk.frames > 0u) {
        let f = walk.frames - 1u;
        let x = walk.slots[f];
        let w = walk.states[f] & 0xffu;
        var k = (walk.states[f] >> 8u) & 0xffu;
        let chain = walk.states[f] >> 16u;
        let nb = neighbors[x];
        var halves = vec4<u32>(NONE);
        if (nb.w != 0u) {
            halves = neighbors[range.capacity + x];
        }
        // Look at the neighbours from k on until one is raised: then the frame keeps its place
        // (k past it) and the walk goes on from the slots raised first.
        var raised = false;
        while (k < 6u && !raised) {
            let y = neighbour(nb, halves, k);
            k = k + 1u;
            if (y == NONE || atomicLoad(&after[y]) + 1u >= w) {
                continue;
            }
            let old = atomicMax(&after[y], w - 1u);
            if (old + 1u >= w) {
                continue;
            }
            raised = true;
            walk.states[f] = w | (k << 8u) | (chain << 16u);
            var room = push(&walk, y, w - 1u, chain + 1u);
            let info = slot_info[y];
            if (old + 1u == info.x) {
                // #unroll
                for (var c = 0u; c < 3u; c = c + 1u) {
                    let sibling = info[1u + c];
                    if (sibling != NONE && atomicMax(&after[sibling], info.x) < info.x) {
                        room = room && push(&walk, sibling, info.x, chain + 1u);
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
        if (t == 0u) {
            atomicStore(&counters[C_SMOOTH_WALK], 0u);
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
    if (lid == 0u) {
        walk_active = atomicLoad(&counters[C_ACTIVE]);
        atomicStore(&group_walk, 0u);
    }
    let slots_active = workgroupUniformLoad(&walk_active);
    if (t < slots_active && starts_walk(t)) {
        atomicMax(&group_walk, walk_from(t));
    }
    workgroupBarrier();
    if (lid == 0u) {
        let longest = atomicLoad(&group_walk);
        if (longest > 0u) {
            atomicMax(&counters[C_SMOOTH_WALK], longest);
        }
    }
}
