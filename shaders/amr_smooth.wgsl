// #include "common/dispatch.wgsl"
// #include "common/amr_tree.wgsl"

// The 2:1 smoothing of the flags (GK19 Algorithm 2) in stages by level, each one launch
// (AdaptiveMesh::smooth_flags_in_stages in src/solver/dg/amr/tree.rs is its CPU twin). With
// a_i = level_i + f_i the level element i ends at:
//   pass 0 (range.color = 0), thread t = slot t: its slot_info (level and siblings' slots), its
//      flag made admissible (no refinement past the maximum level, no coarsening of a root, a
//      -1 only if all four siblings are active and flagged -1: the cluster rule, on the flags
//      as they came) and stored, and top = max_i a_i into counters[C_SMOOTH_TOP];
//   stage s = range.color >= 1, thread t = face t of the current mesh, while 2 s <= top: the
//      side that would end more than one level coarser than the other is raised to one below
//      it, f_j <- max(f_j, a_i - 1 - level_j); a raise that lifts a -1 lifts its siblings' -1
//      too; and a slot a raise or a lift makes end at the stage's top v = top - 2 s + 1 has its
//      neighbours raised to v - 1 right away (follow_up), with the cluster rule.
// Stage s raises to v and v - 1 only: every a = v + 2 and v + 1 was reached before it, so its
// face pass settles the faces whose higher side ends there, and the follow-ups settle those of
// the slots that reach v during it (the face pass may have read them before); a slot raised to
// v - 1 waits for the next stage. So after stage s every face whose higher side ends at v or
// more holds, and no later raise undoes it: the stages s = 1 .. top / 2 end at the least
// admissible flags above the start, the same as any order of the forced raises
// (AdaptiveMesh::smooth_flags), with no host check for convergence. A raise is an atomic max (a
// compare-exchange loop on the i32 bits) and a read sees the flag as it stands.

override NE: u32 = 1u;

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
// sibling that is not active), written by pass 0 so that a stage reaches a slot's level and its
// siblings in one load.
@group(0) @binding(6) var<storage, read_write> slot_info: array<vec4<u32>>;
@group(1) @binding(0) var<uniform> range: ItemRange;
@group(2) @binding(0) var<uniform> params: AmrParams;

// Pass 0: the largest a_i of the workgroup (one atomic on the counters per workgroup).
var<workgroup> group_top: atomic<u32>;
// A stage: top and the faces, read by one thread of the workgroup for all.
var<workgroup> stage_counts: vec2<u32>;

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

// Slot across side k of slot pos in the current mesh: sides 0..2, then the second halves of
// split sides (3..5); NONE on a boundary (the faces' pairs, as the solver's neighbours).
fn neighbour(pos: u32, k: u32) -> u32 {
    if (k < 3u) {
        return neighbors[pos][k];
    }
    return neighbors[NE + pos][k - 3u];
}

// Slot x now ends at `value`, the stage's top: its neighbours that would end lower than
// value - 1 are raised to it, with the cluster rule (those raises end below the stage's top, so
// nothing more follows from them).
fn follow_up(x: u32, value: i32) {
    // #unroll
    for (var k = 0u; k < 6u; k = k + 1u) {
        let m = neighbour(x, k);
        if (m != NONE) {
            let info = slot_info[m];
            let need = value - 1 - i32(info.x);
            let old = raise_flag(m, info.x, need);
            if (old < need && old < 0) {
                // #unroll
                for (var c = 0u; c < 3u; c = c + 1u) {
                    let sibling = info[1u + c];
                    if (sibling != NONE) {
                        raise_flag(sibling, info.x, 0);
                    }
                }
            }
        }
    }
}

// Raise slot pos (its slot_info `info`) to `wanted`; when that lifts its -1, lift its siblings'
// -1 too (the cluster rule): exactly one raise lifts a given -1, the one that swapped it. A slot
// this makes end at `top` (the stage's top) is followed up, since the face pass of this stage
// may have read it before.
fn raise(pos: u32, info: vec4<u32>, wanted: i32, top: i32) {
    let old = raise_flag(pos, info.x, wanted);
    if (old >= wanted) {
        return;
    }
    let level = i32(info.x);
    if (level + wanted >= top) {
        follow_up(pos, level + wanted);
    }
    if (old >= 0) {
        return;
    }
    // #unroll
    for (var c = 0u; c < 3u; c = c + 1u) {
        let sibling = info[1u + c];
        if (sibling != NONE && raise_flag(sibling, info.x, 0) < 0 && level >= top) {
            follow_up(sibling, level);
        }
    }
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

// The 2:1 rule across face f in the stage whose top is `top`.
fn face_rule(f: u32, top: i32) {
    let l = faces[8u * f];
    let r = faces[8u * f + 1u];
    if (r == NONE) {
        return;
    }
    let info_l = slot_info[l];
    let info_r = slot_info[r];
    let after_l = i32(info_l.x) + admissible(atomicLoad(&flags[l]), info_l.x);
    let after_r = i32(info_r.x) + admissible(atomicLoad(&flags[r]), info_r.x);
    if (after_l - after_r > 1) {
        raise(r, info_r, after_l - 1 - i32(info_r.x), top);
    } else if (after_r - after_l > 1) {
        raise(l, info_l, after_r - 1 - i32(info_l.x), top);
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
        stage_counts = vec2<u32>(
            atomicLoad(&counters[C_SMOOTH_TOP]),
            atomicLoad(&counters[C_COLOR_OFFSETS + 2u * params.base_colors]),
        );
    }
    let counts = workgroupUniformLoad(&stage_counts);
    // Stage s raises to top - 2 s + 1 and top - 2 s; below 1 nothing is left to raise.
    if (counts.x < 2u * range.color) {
        return;
    }
    if (t < range.count && t < counts.y) {
        face_rule(t, i32(counts.x + 1u - 2u * range.color));
    }
}
