// #include "common/dispatch.wgsl"
// #include "common/amr_tree.wgsl"
// #include "common/amr_indicator.wgsl"
// #include "common/amr_raise.wgsl"

// The 2:1 smoothing of the flags (GK19 Algorithm 2): pass 0, then either stages by level, each
// one launch (below 8 levels on CUDA, 5 on wgpu: SmoothingPasses::for_levels in
// src/solver/dg/amr/gpu.rs), or amr_settle's rounds in one launch
// (AdaptiveMesh::smooth_flags_in_stages in src/solver/dg/amr/tree.rs is the stages' CPU twin).
// With a_i = level_i + f_i the level element i ends at, kept per slot in `after` (amr_mark
// turns it back into the flags):
//   pass 0 (range.color = 0), thread t = slot t: its slot_info (level and siblings' slots), its
//      flag made admissible (no refinement past the maximum level, no coarsening of a root, a
//      -1 only if all four siblings are active and flagged -1: the cluster rule, on the flags
//      as they came: read from `flags`, or with FLAGGED computed here from the indicator, the
//      slot's own and, when it is -1, its siblings': from the flags the workgroup's threads
//      shared, or computed again for a sibling whose slot is not in the workgroup), a_t
//      stored in after[t], and top = max_i a_i into counters[C_SMOOTH_TOP];
//   stage s = range.color >= 1, thread t = face t of the current mesh, while s < top: the side
//      that would end more than one level coarser than the other is raised to one below it,
//      a_j <- max(a_j, a_i - 1); a raise that lifts a -1 (a_j = level_j - 1) lifts its
//      siblings' -1 too (a <- max(a, level_j)).
// Stage s works toward v = top - s: raises in it end at a <= v (a face raise at a_i - 1, a
// lifted cluster at its level), and every a = v + 1 was reached in a stage before it, so after
// stage s every face whose higher side ends at v + 1 or more holds and no later raise undoes
// it. The stages s = 1 .. top - 1 thus end at the least admissible flags above the start, the
// same as any order of the forced raises (AdaptiveMesh::smooth_flags), with no chains of raises
// followed within a thread and no host check for convergence. A raise is an atomic max on
// after, and a read sees a as it stands. A stage thread reads one word per side (a_i), not the
// flag and the slot_info record (20 bytes): at 240k elements a stage is bound by the sectors
// its scattered loads pull in; slot_info is read by a raise alone, for its level and siblings.

@group(0) @binding(0) var<storage, read> slots: array<u32>;
@group(0) @binding(1) var<storage, read> element_tree: array<vec4<u32>>;
// The flags' i32 bits as they came (pass 0 reads them).
@group(0) @binding(2) var<storage, read> flags: array<u32>;
// DgEdge records (8 words: left, right, info, normal, length, midpoint).
@group(0) @binding(3) var<storage, read> faces: array<u32>;
@group(0) @binding(4) var<storage, read_write> counters: array<atomic<u32>>;
// Per slot: its element's level and the slots of its three siblings (NONE for a root, or for a
// sibling that is not active), written by pass 0 so that a raise reaches a slot's level and its
// siblings in one load.
@group(0) @binding(5) var<storage, read_write> slot_info: array<vec4<u32>>;
// Per slot: a = level + flag as the smoothing stands (pass 0 stores it, the stages raise it).
@group(0) @binding(6) var<storage, read_write> after: array<atomic<u32>>;
// With FLAGGED = 1, what pass 0 computes the flags from (amr_flag's inputs; the stages do not
// read them): register 0's high words, the centroid basis, the inverse Jacobians, the heights
// and the face neighbours (common/amr_indicator.wgsl).
@group(0) @binding(7) var<storage, read> regs: array<f32>;
@group(0) @binding(8) var<storage, read> centroid_basis: array<vec4<f32>>;
@group(0) @binding(9) var<storage, read> inv_jac: array<vec4<f32>>;
@group(0) @binding(10) var<storage, read> heights: array<f32>;
@group(0) @binding(11) var<storage, read> neighbors: array<vec4<u32>>;
@group(1) @binding(0) var<uniform> range: ItemRange;

// 1: pass 0 computes each slot's flag from the indicator (amr_flag's, a launch less before
// it: what a run's smoothing does), instead of reading `flags` (a host's flags, or amr_flag's).
override FLAGGED: u32 = 0u;
override NP: u32 = 3u;
@group(2) @binding(0) var<uniform> params: AmrParams;

// Pass 0: the largest a_i of the workgroup (one atomic on the counters per workgroup).
var<workgroup> group_top: atomic<u32>;
// Pass 0: the flags as they came of the workgroup's slots (raw_flag), for their siblings.
var<workgroup> group_flags: array<u32, WORKGROUP_SIZE>;
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

// A stage leaves a slot that rises to the next stage (common/amr_raise.wgsl).
fn follow(pos: u32) {}

// The flag of slot t as it came: the indicator's (FLAGGED) or the one in `flags`.
fn raw_flag(t: u32) -> u32 {
    if (FLAGGED != 0u) {
        return bitcast<u32>(indicator_flag(t));
    }
    return flags[t];
}

// Pass 0, first half, for slot t, thread lid of its workgroup: its slot_info stored and
// returned, and its flag as it came kept in group_flags for its siblings (0 past the active
// slots).
fn slot_record(t: u32, lid: u32) -> vec4<u32> {
    var info = vec4<u32>(0u, NONE, NONE, NONE);
    var raw = 0u;
    if (t < atomicLoad(&counters[C_ACTIVE])) {
        let id = slots[t];
        let own = element_tree[id];
        info.x = own.x;
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
        raw = raw_flag(t);
    }
    group_flags[lid] = raw;
    return info;
}

// Pass 0, second half (after a barrier), for slot t of the workgroup whose first slot is
// `base`: its admissible flag, a_t stored in after[t] and returned (0 past the active slots).
// A sibling's flag comes from group_flags when its slot is in this workgroup (with the in-order
// compaction siblings mostly are: a refinement puts its children in consecutive slots), else
// from raw_flag.
fn first_pass(t: u32, info: vec4<u32>, base: u32) -> u32 {
    if (t >= atomicLoad(&counters[C_ACTIVE])) {
        return 0u;
    }
    let level = info.x;
    var f = admissible(group_flags[t - base], level);
    if (f < 0) {
        // A root's -1 was read as 0 above, so this slot has siblings.
        // #unroll
        for (var c = 0u; c < 3u; c = c + 1u) {
            let sibling = info[1u + c];
            if (sibling == NONE) {
                f = 0;
            } else {
                var bits = 0u;
                if (sibling >= base && sibling - base < WORKGROUP_SIZE) {
                    bits = group_flags[sibling - base];
                } else {
                    bits = raw_flag(sibling);
                }
                if (admissible(bits, level) >= 0) {
                    f = 0;
                }
            }
        }
    }
    let a = u32(i32(level) + f);
    atomicStore(&after[t], a);
    return a;
}

// The 2:1 rule across face f.
fn face_rule(f: u32) {
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
        let info = slot_record(t, lid);
        workgroupBarrier();
        atomicMax(&group_top, first_pass(t, info, t - lid));
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
