// #include "common/dispatch.wgsl"
// #include "common/amr_tree.wgsl"

// The 2:1 smoothing of the flags (GK19 Algorithm 2) in stages by level, each one launch
// (AdaptiveMesh::smooth_flags_in_stages in src/solver/dg/amr/tree.rs is its CPU twin). With
// a_i = level_i + f_i the level element i ends at:
//   pass 0 (range.color = 0), thread t = slot t: its slot_info (level and siblings' slots), its
//      flag made admissible (no refinement past the maximum level, no coarsening of a root, a
//      -1 only if all four siblings are active and flagged -1: the cluster rule, on the flags
//      as they came) and stored, and top = max_i a_i into counters[C_SMOOTH_TOP];
//   stage s = range.color >= 1, thread t = face t of the current mesh, while s < top: the side
//      that would end more than one level coarser than the other is raised to one below it,
//      f_j <- max(f_j, a_i - 1 - level_j); a raise that lifts a -1 lifts its siblings' -1 too.
// Stage s works toward v = top - s: raises in it end at a <= v (a face raise at a_i - 1, a
// lifted cluster at its level), and every a = v + 1 was reached in a stage before it, so after
// stage s every face whose higher side ends at v + 1 or more holds and no later raise undoes
// it. The stages s = 1 .. top - 1 thus end at the least admissible flags above the start, the
// same as any order of the forced raises (AdaptiveMesh::smooth_flags), with no chains of raises
// followed within a thread and no host check for convergence. A raise is an atomic max (a
// compare-exchange loop on the i32 bits) and a read sees the flag as it stands.

@group(0) @binding(0) var<storage, read> slots: array<u32>;
@group(0) @binding(1) var<storage, read> element_tree: array<vec4<u32>>;
// The flags' i32 bits.
@group(0) @binding(2) var<storage, read_write> flags: array<atomic<u32>>;
// DgEdge records (8 words: left, right, info, normal, length, midpoint).
@group(0) @binding(3) var<storage, read> faces: array<u32>;
@group(0) @binding(4) var<storage, read_write> counters: array<atomic<u32>>;
// Per slot: its element's level and the slots of its three siblings (NONE for a root, or for a
// sibling that is not active), written by pass 0 so that a stage reaches a slot's level and its
// siblings in one load.
@group(0) @binding(5) var<storage, read_write> slot_info: array<vec4<u32>>;
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

// Raise slot pos (its slot_info `info`) to `wanted`; when that lifts its -1, lift its siblings'
// -1 too (the cluster rule): exactly one raise lifts a given -1, the one that swapped it.
fn raise(pos: u32, info: vec4<u32>, wanted: i32) {
    if (raise_flag(pos, info.x, wanted) >= 0) {
        return;
    }
    // #unroll
    for (var c = 0u; c < 3u; c = c + 1u) {
        let sibling = info[1u + c];
        if (sibling != NONE) {
            raise_flag(sibling, info.x, 0);
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

// The 2:1 rule across face f.
fn face_rule(f: u32) {
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
        raise(r, info_r, after_l - 1 - i32(info_r.x));
    } else if (after_r - after_l > 1) {
        raise(l, info_l, after_r - 1 - i32(info_l.x));
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
    // Stage s raises toward top - s; below 1 nothing is left to raise.
    if (range.color >= counts.x) {
        return;
    }
    if (t < range.count && t < counts.y) {
        face_rule(t);
    }
}
