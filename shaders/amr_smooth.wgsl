// #include "common/dispatch.wgsl"
// #include "common/amr_tree.wgsl"

// The 2:1 smoothing of the flags (GK19 Algorithm 2) in stages over the slots, each one launch
// settling CHAIN_LINKS + 1 levels (AdaptiveMesh::smooth_flags_in_stages in
// src/solver/dg/amr/tree.rs is its CPU twin). With a_i = level_i + f_i the level element i
// ends at:
//   pass 0 (range.color = 0), thread t = slot t: its slot_info (level and siblings' slots), its
//      flag made admissible (no refinement past the maximum level, no coarsening of a root, a
//      -1 only if all four siblings are active and flagged -1: the cluster rule, on the flags
//      as they came) and stored, and top = max_i a_i into counters[C_SMOOTH_TOP];
//   stage s = range.color >= 1, thread t = slot t, while (s - 1) (CHAIN_LINKS + 1) < top - 1:
//      slot t's neighbours that would end more than one level below it are raised to one below
//      it, f_j <- max(f_j, a_t - 1 - level_j), a raise that lifts a -1 lifts its siblings' -1
//      too (link 1); the thread follows what link k raised (the slot and the siblings it
//      lifted) the same way, making link k + 1, for k <= CHAIN_LINKS.
// Only the first of the solver's neighbour records is read: the mesh is 2:1 now, so a face can
// break the rule only where the higher side's neighbour is no finer than it, the one neighbour
// across that side. Why a stage settles CHAIN_LINKS + 1 levels: say every a >= u + 1 has been
// reached and its faces hold when it starts. Then so has every a = u (only a neighbour at
// u + 1 forces one), and a raise of link k ends at a <= u - k. Take a slot that ends at
// w >= u - CHAIN_LINKS: if it was at w when the stage started, its own thread read w and raised
// its neighbours; else the raise that left w was of a link k <= u - w <= CHAIN_LINKS, so its
// thread followed it. Raises are atomic maxima, so no later one undoes that: after the stage
// every a >= u - CHAIN_LINKS is reached and its faces hold, and after s stages every
// a >= top - s (CHAIN_LINKS + 1) + 1; faces whose higher side ends at 1 hold anyway. Stages past
// that return at once. Every raise is forced, so the stages end at the least admissible flags
// above the start, as any order of the forced raises does (AdaptiveMesh::smooth_flags); no host
// check for convergence. A raise is an atomic max (a compare-exchange loop on the i32 bits) and
// a read sees the flag as it stands. Following every link (one stage) was tried: a thread then
// follows a whole cascade of raises alone, slower than the launches it saves (BENCHMARKS.md,
// session 20).
//
// Room: a slot followed raises at most 3 neighbours, each lifting at most 3 siblings, so a
// thread holds at most 12 slots of each link up to CHAIN_LINKS (LIFO: one link's slots wait
// while a later link's are followed); one short of room (never, by that) sets C_ERROR_CHAINS
// in counters[C_ERROR].

@group(0) @binding(0) var<storage, read> slots: array<u32>;
@group(0) @binding(1) var<storage, read> element_tree: array<vec4<u32>>;
// The flags' i32 bits.
@group(0) @binding(2) var<storage, read_write> flags: array<atomic<u32>>;
// The solver's neighbour records: per slot the slot across each side (on a split side one of
// its two halves), NONE on the boundary, and the split mask.
@group(0) @binding(3) var<storage, read> neighbors: array<vec4<u32>>;
@group(0) @binding(4) var<storage, read_write> counters: array<atomic<u32>>;
// Per slot: its element's level and the slots of its three siblings (NONE for a root, or for a
// sibling that is not active), written by pass 0 so that a stage reaches a slot's level and its
// siblings in one load.
@group(0) @binding(5) var<storage, read_write> slot_info: array<vec4<u32>>;
@group(1) @binding(0) var<uniform> range: ItemRange;
@group(2) @binding(0) var<uniform> params: AmrParams;

// Pass 0: the largest a_i of the workgroup (one atomic on the counters per workgroup).
var<workgroup> group_top: atomic<u32>;

// Raises a stage's thread follows after its own slot's (1 to 3; the host sizes the stages by
// it, amr::gpu::CHAIN_LINKS).
override CHAIN_LINKS: u32 = 1u;
// Slots a thread may hold to follow (the header's bound for the most links).
const CHAIN_ROOM: u32 = 36u;

// Flag bits `bits` of an element at `level` as the smoothing reads them: within -1..1, 0 for
// a refinement past the maximum level or a coarsening of a root.
fn admissible(bits: u32, level: u32) -> i32 {
    let f = clamp(bitcast<i32>(bits), -1, 1);
    if ((f > 0 && level >= params.max_level) || (f < 0 && level == 0u)) {
        return 0;
    }
    return f;
}

// Raise the flag of slot pos (at `level`) to `wanted` unless it is there already; the flag it
// had when this call raised it, or `wanted` when it did not.
fn raise_flag(pos: u32, level: u32, wanted: i32) -> i32 {
    var old = atomicLoad(&flags[pos]);
    var f = admissible(old, level);
    while (f < wanted) {
        let r = atomicCompareExchangeWeak(&flags[pos], old, bitcast<u32>(wanted));
        if (r.exchanged) {
            return f;
        }
        old = r.old_value;
        f = admissible(old, level);
    }
    return wanted;
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
    let bits = atomicLoad(&flags[t]);
    var f = admissible(bits, level);
    if (f < 0) {
        // A root's -1 was read as 0 above, so this slot has siblings. Only this thread writes
        // this flag in pass 0, and a sibling's own pass may have lifted its -1 already, for a
        // reason that lifts this one too.
        // #unroll
        for (var c = 0u; c < 3u; c = c + 1u) {
            let sibling = info[1u + c];
            if (sibling == NONE || admissible(atomicLoad(&flags[sibling]), level) >= 0) {
                f = 0;
            }
        }
    }
    if (f != bitcast<i32>(bits)) {
        atomicStore(&flags[t], bitcast<u32>(f));
    }
    return u32(i32(level) + f);
}

// Stage work of slot t: its neighbours raised where the rule asks, and every slot this thread
// raised followed in turn (last raised first) from the level it raised it to, up to
// CHAIN_LINKS links.
fn chains(t: u32) {
    if (t >= atomicLoad(&counters[C_ACTIVE])) {
        return;
    }
    let own = slot_info[t];
    // (slot, level + flag this thread raised it to, links after slot t's own raises).
    var pending: array<vec3<u32>, CHAIN_ROOM>;
    pending[0] = vec3<u32>(t, u32(i32(own.x) + admissible(atomicLoad(&flags[t]), own.x)), 0u);
    var n = 1u;
    while (n > 0u) {
        n = n - 1u;
        let item = pending[n];
        let after = i32(item.y);
        if (after < 2) {
            continue;
        }
        let follow = item.z < CHAIN_LINKS;
        let across = neighbors[item.x];
        for (var side = 0u; side < 3u; side = side + 1u) {
            let j = across[side];
            if (j == NONE) {
                continue;
            }
            let info = slot_info[j];
            let wanted = after - 1 - i32(info.x);
            let was = raise_flag(j, info.x, wanted);
            if (was >= wanted) {
                continue;
            }
            // This thread raised j, and lifts its cluster when that took its -1.
            if (follow && n + 4u > CHAIN_ROOM) {
                atomicOr(&counters[C_ERROR], C_ERROR_CHAINS);
                return;
            }
            if (follow) {
                pending[n] = vec3<u32>(j, u32(after - 1), item.z + 1u);
                n = n + 1u;
            }
            if (was >= 0) {
                continue;
            }
            // #unroll
            for (var c = 0u; c < 3u; c = c + 1u) {
                let sibling = info[1u + c];
                if (sibling != NONE && raise_flag(sibling, info.x, 0) < 0 && follow) {
                    pending[n] = vec3<u32>(sibling, info.x, item.z + 1u);
                    n = n + 1u;
                }
            }
        }
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
    if (lid == 0u) {
        atomicStore(&group_top, atomicLoad(&counters[C_SMOOTH_TOP]));
    }
    let top = workgroupUniformLoad(&group_top);
    // Stage s settles the levels from top - (s - 1) (CHAIN_LINKS + 1) down; past 1 nothing is
    // left to raise.
    if ((range.color - 1u) * (CHAIN_LINKS + 1u) + 1u >= top) {
        return;
    }
    chains(t);
}
