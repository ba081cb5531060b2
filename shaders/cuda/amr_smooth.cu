// #include "common/dispatch.cuh"
// #include "common/amr_tree.cuh"
// #include "common/amr_indicator.cuh"
// #include "common/amr_raise.cuh"

// CUDA twin of shaders/amr_smooth.wgsl. The 2:1 smoothing of the flags (GK19 Algorithm 2):
// pass 0, then either stages by level, each one launch (below 8 levels on CUDA, 5 on wgpu), or
// amr_settle's rounds in one launch (AdaptiveMesh::smooth_flags_in_stages in
// src/solver/dg/amr/tree.rs is the stages' CPU twin). With a_i = level_i + f_i the level element
// i ends at, kept per slot in `after` (amr_mark turns it back into the flags):
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
// after, and a read sees a as it stands (volatile loads). A stage thread reads one word per side
// (a_i), not the flag and the slot_info record (20 bytes): at 240k elements a stage is bound by
// the sectors its scattered loads pull in; slot_info is read by a raise alone, for its level
// and siblings.
//
// flags: the flags' i32 bits as they came (pass 0 reads them). slot_info: per slot, its
// element's level and the slots of its three siblings (NONE for a root, or for a sibling that
// is not active), written by pass 0 so that a raise reaches a slot's level and its siblings in
// one load. faces: DgEdge records (8 words: left, right, info, normal, length, midpoint).
// after: per slot, a = level + flag as the smoothing stands.

// Flag bits `bits` of an element at `level` as the smoothing reads them: within -1..1, 0 for
// a refinement past the maximum level or a coarsening of a root.
__device__ __forceinline__ int admissible(u32 bits, u32 level, const AmrParams& params) {
    int f = max(-1, min((int)bits, 1));
    if ((f > 0 && level >= params.max_level) || (f < 0 && level == 0u)) {
        return 0;
    }
    return f;
}

// With FLAGGED = 1 (the WGSL pipeline constant), pass 0 computes each slot's flag from the
// indicator (amr_flag's, a launch less before it: what a run's smoothing does) instead of
// reading `flags`; from these, amr_flag's inputs (the stages do not read them).
#ifndef FLAGGED
#define FLAGGED 0u
#endif
struct IndicatorInputs {
    const float* regs;
    const float4* centroid_basis;
    const float4* inv_jac;
    const float* heights;
    const uint4* neighbors;
};

// The flag of slot s as it came: the indicator's (FLAGGED) or the one in `flags`.
__device__ __forceinline__ u32 raw_flag(
    u32 s,
    const u32* flags,
    const IndicatorInputs& in,
    const AmrParams& params) {
    return FLAGGED != 0u ? (u32)indicator_flag(s, in.regs, in.centroid_basis, in.inv_jac,
                                               in.heights, in.neighbors, params)
                         : flags[s];
}

// Pass 0: the flags as they came of the block's slots (raw_flag), for their siblings.
__shared__ u32 group_flags[WORKGROUP_SIZE];

// Pass 0, first half, for slot t, thread lid of its block: its slot_info stored and returned,
// and its flag as it came kept in group_flags for its siblings (0 past the active slots).
__device__ uint4 slot_record(
    u32 t,
    u32 lid,
    const u32* slots,
    const uint4* element_tree,
    const u32* flags,
    const u32* counters,
    uint4* slot_info,
    const IndicatorInputs& in,
    const AmrParams& params) {
    u32 info[4] = {0u, NONE, NONE, NONE};
    u32 raw = 0u;
    if (t < *(const volatile u32*)(counters + C_ACTIVE)) {
        u32 id = slots[t];
        uint4 own = element_tree[id];
        info[0] = own.x;
        if (own.y != NONE) {
            u32 block = element_tree[own.y].z;
            u32 k = 1u;
#pragma unroll
            for (u32 c = 0u; c < 4u; c = c + 1u) {
                if (block + c != id) {
                    info[k] = element_tree[block + c].w;
                    k = k + 1u;
                }
            }
        }
        slot_info[t] = make_uint4(info[0], info[1], info[2], info[3]);
        raw = raw_flag(t, flags, in, params);
    }
    group_flags[lid] = raw;
    return make_uint4(info[0], info[1], info[2], info[3]);
}

// Pass 0, second half (after a barrier), for slot t of the block whose first slot is `base`:
// its admissible flag, a_t stored in after[t] and returned (0 past the active slots). A
// sibling's flag comes from group_flags when its slot is in this block (with the in-order
// compaction siblings mostly are: a refinement puts its children in consecutive slots), else
// from raw_flag.
__device__ u32 first_pass(
    u32 t,
    uint4 info,
    u32 base,
    const u32* flags,
    const u32* counters,
    u32* after,
    const IndicatorInputs& in,
    const AmrParams& params) {
    if (t >= *(const volatile u32*)(counters + C_ACTIVE)) {
        return 0u;
    }
    u32 level = info.x;
    int f = admissible(group_flags[t - base], level, params);
    if (f < 0) {
        // A root's -1 was read as 0 above, so this slot has siblings.
        u32 siblings[3] = {info.y, info.z, info.w};
#pragma unroll
        for (u32 c = 0u; c < 3u; c = c + 1u) {
            u32 sibling = siblings[c];
            if (sibling == NONE) {
                f = 0;
            } else {
                u32 bits = sibling >= base && sibling - base < WORKGROUP_SIZE
                               ? group_flags[sibling - base]
                               : raw_flag(sibling, flags, in, params);
                if (admissible(bits, level, params) >= 0) {
                    f = 0;
                }
            }
        }
    }
    u32 a = (u32)((int)level + f);
    after[t] = a;
    return a;
}

// The 2:1 rule across face f.
__device__ void face_rule(u32 f, const uint4* slot_info, u32* after, const u32* faces) {
    u32 l = faces[8u * f];
    u32 r = faces[8u * f + 1u];
    if (r == NONE) {
        return;
    }
    u32 after_l = load_after(after, l);
    u32 after_r = load_after(after, r);
    if (after_l > after_r + 1u) {
        raise(after, slot_info, r, after_l - 1u, [](u32) {});
    } else if (after_r > after_l + 1u) {
        raise(after, slot_info, l, after_r - 1u, [](u32) {});
    }
}

// Pass 0: the largest a_i of the block (one atomic on the counters per block). A stage: top
// and the faces, read by one thread of the block for all.
__shared__ u32 group_top;
__shared__ u32 stage_counts[2];

extern "C" __global__ void amr_smooth(
    const u32* __restrict__ slots,
    const uint4* __restrict__ element_tree,
    const u32* __restrict__ flags,
    const u32* __restrict__ faces,
    u32* counters,
    uint4* slot_info,
    u32* after,
    const float* __restrict__ regs,
    const float4* __restrict__ centroid_basis,
    const float4* __restrict__ inv_jac,
    const float* __restrict__ heights,
    const uint4* __restrict__ neighbors,
    AmrParams params,
    ItemRange range) {
    await_previous_launches();
    u32 t = linear_index();
    if (range.color == 0u) {
        if (threadIdx.x == 0u) {
            group_top = 0u;
        }
        IndicatorInputs in = {regs, centroid_basis, inv_jac, heights, neighbors};
        uint4 info = slot_record(t, threadIdx.x, slots, element_tree, flags, counters, slot_info,
                                 in, params);
        __syncthreads();
        u32 a = first_pass(t, info, t - threadIdx.x, flags, counters, after, in, params);
        atomicMax(&group_top, a);
        __syncthreads();
        if (threadIdx.x == 0u && group_top > 0u) {
            atomicMax(&counters[C_SMOOTH_TOP], group_top);
        }
        return;
    }
    if (threadIdx.x == 0u) {
        const volatile u32* c = counters;
        stage_counts[0] = c[C_SMOOTH_TOP];
        stage_counts[1] = c[C_COLOR_OFFSETS + 2u * params.base_colors];
    }
    __syncthreads();
    // Stage s raises toward top - s; below 1 nothing is left to raise.
    if (range.color >= stage_counts[0]) {
        return;
    }
    if (t < range.count && t < stage_counts[1]) {
        face_rule(t, slot_info, after, faces);
    }
}
