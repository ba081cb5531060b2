// #include "common/dispatch.cuh"
// #include "common/amr_tree.cuh"

// CUDA twin of shaders/amr_smooth.wgsl. The 2:1 smoothing of the flags (GK19 Algorithm 2) in
// stages by level, each one launch (AdaptiveMesh::smooth_flags_in_stages in
// src/solver/dg/amr/tree.rs is its CPU twin). With a_i = level_i + f_i the level element i ends
// at:
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
// compare-exchange loop on the i32 bits) and a read sees the flag as it stands (volatile loads).
//
// flags: the flags' i32 bits. slot_info: per slot, its element's level and the slots of its
// three siblings (NONE for a root, or for a sibling that is not active), written by pass 0 so
// that a stage reaches a slot's level and its siblings in one load. faces: DgEdge records
// (8 words: left, right, info, normal, length, midpoint).

// Flag bits `bits` of an element at `level` as the smoothing reads them: within -1..1, 0 for
// a refinement past the maximum level or a coarsening of a root.
__device__ __forceinline__ int admissible(u32 bits, u32 level, const AmrParams& params) {
    int f = max(-1, min((int)bits, 1));
    if ((f > 0 && level >= params.max_level) || (f < 0 && level == 0u)) {
        return 0;
    }
    return f;
}

__device__ __forceinline__ u32 load_flag(const u32* flags, u32 pos) {
    return *(const volatile u32*)(flags + pos);
}

// Sibling c (0..2) of a slot from its slot_info record.
__device__ __forceinline__ u32 sibling(uint4 info, u32 c) {
    return c == 0u ? info.y : (c == 1u ? info.z : info.w);
}

// Raise the flag of slot pos (at `level`) to `wanted` unless it is there already; the flag it
// had when this call raised it, or `wanted` when it did not.
__device__ int raise_flag(u32* flags, u32 pos, u32 level, int wanted, const AmrParams& params) {
    u32 old = load_flag(flags, pos);
    int f = admissible(old, level, params);
    while (f < wanted) {
        u32 seen = atomicCAS(flags + pos, old, (u32)wanted);
        if (seen == old) {
            return f;
        }
        old = seen;
        f = admissible(old, level, params);
    }
    return wanted;
}

// Raise slot pos (its slot_info `info`) to `wanted`; when that lifts its -1, lift its siblings'
// -1 too (the cluster rule): exactly one raise lifts a given -1, the one that swapped it.
__device__ void raise(u32* flags, u32 pos, uint4 info, int wanted, const AmrParams& params) {
    if (raise_flag(flags, pos, info.x, wanted, params) >= 0) {
        return;
    }
#pragma unroll
    for (u32 c = 0u; c < 3u; c = c + 1u) {
        u32 s = sibling(info, c);
        if (s != NONE) {
            raise_flag(flags, s, info.x, 0, params);
        }
    }
}

// Pass 0 for slot t: slot_info, the admissible flag stored, and a_t (0 past the active slots).
__device__ u32 first_pass(
    u32 t,
    const u32* slots,
    const uint4* element_tree,
    u32* flags,
    const u32* counters,
    uint4* slot_info,
    const AmrParams& params) {
    if (t >= *(const volatile u32*)(counters + C_ACTIVE)) {
        return 0u;
    }
    u32 id = slots[t];
    uint4 own = element_tree[id];
    u32 level = own.x;
    u32 info[4] = {level, NONE, NONE, NONE};
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
    u32 bits = load_flag(flags, t);
    int f = admissible(bits, level, params);
    if (f < 0) {
        // A root's -1 was read as 0 above, so this slot has siblings. Only this thread writes
        // this flag in pass 0, and a sibling's own pass may have lifted its -1 already, for a
        // reason that lifts this one too.
#pragma unroll
        for (u32 c = 1u; c < 4u; c = c + 1u) {
            if (info[c] == NONE || admissible(load_flag(flags, info[c]), level, params) >= 0) {
                f = 0;
            }
        }
    }
    if (f != (int)bits) {
        atomicExch(flags + t, (u32)f);
    }
    return (u32)((int)level + f);
}

// The 2:1 rule across face f.
__device__ void face_rule(
    u32 f,
    const uint4* slot_info,
    u32* flags,
    const u32* faces,
    const AmrParams& params) {
    u32 l = faces[8u * f];
    u32 r = faces[8u * f + 1u];
    if (r == NONE) {
        return;
    }
    uint4 info_l = slot_info[l];
    uint4 info_r = slot_info[r];
    int after_l = (int)info_l.x + admissible(load_flag(flags, l), info_l.x, params);
    int after_r = (int)info_r.x + admissible(load_flag(flags, r), info_r.x, params);
    if (after_l - after_r > 1) {
        raise(flags, r, info_r, after_l - 1 - (int)info_r.x, params);
    } else if (after_r - after_l > 1) {
        raise(flags, l, info_l, after_r - 1 - (int)info_l.x, params);
    }
}

// Pass 0: the largest a_i of the block (one atomic on the counters per block). A stage: top
// and the faces, read by one thread of the block for all.
__shared__ u32 group_top;
__shared__ u32 stage_counts[2];

extern "C" __global__ void amr_smooth(
    const u32* __restrict__ slots,
    const uint4* __restrict__ element_tree,
    u32* flags,
    const u32* __restrict__ faces,
    u32* counters,
    uint4* slot_info,
    AmrParams params,
    ItemRange range) {
    await_previous_launches();
    u32 t = linear_index();
    if (range.color == 0u) {
        if (threadIdx.x == 0u) {
            group_top = 0u;
        }
        __syncthreads();
        u32 after = first_pass(t, slots, element_tree, flags, counters, slot_info, params);
        atomicMax(&group_top, after);
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
        face_rule(t, slot_info, flags, faces, params);
    }
}
