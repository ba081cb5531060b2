// #include "common/dispatch.wgsl"
// #include "common/amr_tree.wgsl"

// One pass of the 2:1 smoothing of the flags (GK19 Algorithm 2; AdaptiveMesh::smooth_flags in
// src/solver/dg/amr/tree.rs), in two phases (range.pad):
//   0: per slot: no refinement past the maximum level, no coarsening of a root, and a coarsening
//      flag stands only if all four siblings are active and flagged -1 (the cluster rule);
//   1: per face of color range.color (the faces of the current mesh, grouped by color with the
//      offsets in the counters): the side that would end more than one level coarser than the
//      other is raised by one. No two faces of a color share an element, so no races.
// Any change sets counters[C_CHANGED]; the host repeats passes until one changes nothing.

@group(0) @binding(0) var<storage, read> slots: array<u32>;
@group(0) @binding(1) var<storage, read> element_tree: array<vec4<u32>>;
@group(0) @binding(2) var<storage, read_write> flags: array<i32>;
// DgEdge records (8 words: left, right, info, normal, length, midpoint).
@group(0) @binding(3) var<storage, read> faces: array<u32>;
@group(0) @binding(4) var<storage, read_write> counters: array<u32>;
@group(1) @binding(0) var<uniform> range: ItemRange;
@group(2) @binding(0) var<uniform> params: AmrParams;

fn level_after(pos: u32) -> i32 {
    return i32(element_tree[slots[pos]].x) + flags[pos];
}

fn cluster_rule(i: u32) {
    let level = element_tree[slots[i]].x;
    var f = flags[i];
    if ((f > 0 && level >= params.max_level) || (f < 0 && level == 0u)) {
        f = 0;
        flags[i] = 0;
    }
    if (f >= 0) {
        return;
    }
    let block = element_tree[element_tree[slots[i]].y].z;
    var whole = true;
    for (var c = 0u; c < 4u; c = c + 1u) {
        let pos = element_tree[block + c].w;
        if (pos == NONE) {
            whole = false;
        } else if (flags[pos] >= 0) {
            whole = false;
        }
    }
    if (!whole) {
        flags[i] = 0;
        counters[C_CHANGED] = 1u;
    }
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = linear_index(gid, nwg);
    if (range.pad == 0u) {
        if (i < min(range.count, counters[C_ACTIVE])) {
            cluster_rule(i);
        }
        return;
    }
    let first = counters[C_COLOR_OFFSETS + range.color];
    let count = counters[C_COLOR_OFFSETS + range.color + 1u] - first;
    if (i >= min(range.count, count)) {
        return;
    }
    let l = faces[8u * (first + i)];
    let r = faces[8u * (first + i) + 1u];
    if (r == NONE) {
        return;
    }
    let after_l = level_after(l);
    let after_r = level_after(r);
    if (after_l - after_r > 1) {
        flags[r] = flags[r] + 1;
        counters[C_CHANGED] = 1u;
    } else if (after_r - after_l > 1) {
        flags[l] = flags[l] + 1;
        counters[C_CHANGED] = 1u;
    }
}
