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
// compare-exchange loop on the i32 bits) and a read sees the flag as it stands (volatile loads).
//
// flags: the flags' i32 bits. neighbors: the current mesh's face neighbours (the DG solver's):
// NE blocks of (side 0, 1, 2, split mask), then NE of the second halves. slot_info: per slot,
// its element's level and the slots of its three siblings (NONE for a root, or for a sibling
// that is not active), written by pass 0 so that a stage reaches a slot's level and its
// siblings in one load. faces: DgEdge records (8 words: left, right, info, normal, length,
// midpoint).
//
// The WGSL override constant is a preprocessor define here (the host passes a -D value).

#ifndef NE
#define NE 1u
#endif

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

// Slot across side k of slot pos in the current mesh: sides 0..2, then the second halves of
// split sides (3..5); NONE on a boundary (the faces' pairs, as the solver's neighbours).
__device__ __forceinline__ u32 neighbour(const uint4* neighbors, u32 pos, u32 k) {
    return k < 3u ? word(neighbors, pos, k) : word(neighbors, NE + pos, k - 3u);
}

// Slot x now ends at `value`, the stage's top: its neighbours that would end lower than
// value - 1 are raised to it, with the cluster rule (those raises end below the stage's top, so
// nothing more follows from them).
__device__ void follow_up(
    u32 x,
    int value,
    const uint4* slot_info,
    u32* flags,
    const uint4* neighbors,
    const AmrParams& params) {
#pragma unroll
    for (u32 k = 0u; k < 6u; k = k + 1u) {
        u32 m = neighbour(neighbors, x, k);
        if (m != NONE) {
            uint4 info = slot_info[m];
            int need = value - 1 - (int)info.x;
            int old = raise_flag(flags, m, info.x, need, params);
            if (old < need && old < 0) {
#pragma unroll
                for (u32 c = 0u; c < 3u; c = c + 1u) {
                    u32 s = sibling(info, c);
                    if (s != NONE) {
                        raise_flag(flags, s, info.x, 0, params);
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
__device__ void raise(
    u32* flags,
    u32 pos,
    uint4 info,
    int wanted,
    int top,
    const uint4* slot_info,
    const uint4* neighbors,
    const AmrParams& params) {
    int old = raise_flag(flags, pos, info.x, wanted, params);
    if (old >= wanted) {
        return;
    }
    int level = (int)info.x;
    if (level + wanted >= top) {
        follow_up(pos, level + wanted, slot_info, flags, neighbors, params);
    }
    if (old >= 0) {
        return;
    }
#pragma unroll
    for (u32 c = 0u; c < 3u; c = c + 1u) {
        u32 s = sibling(info, c);
        if (s != NONE && raise_flag(flags, s, info.x, 0, params) < 0 && level >= top) {
            follow_up(s, level, slot_info, flags, neighbors, params);
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

// The 2:1 rule across face f in the stage whose top is `top`.
__device__ void face_rule(
    u32 f,
    int top,
    const uint4* slot_info,
    u32* flags,
    const u32* faces,
    const uint4* neighbors,
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
        raise(flags, r, info_r, after_l - 1 - (int)info_r.x, top, slot_info, neighbors, params);
    } else if (after_r - after_l > 1) {
        raise(flags, l, info_l, after_r - 1 - (int)info_l.x, top, slot_info, neighbors, params);
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
    const uint4* __restrict__ neighbors,
    uint4* slot_info,
    AmrParams params,
    ItemRange range) {
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
    // Stage s raises to top - 2 s + 1 and top - 2 s; below 1 nothing is left to raise.
    if (stage_counts[0] < 2u * range.color) {
        return;
    }
    if (t < range.count && t < stage_counts[1]) {
        int top = (int)(stage_counts[0] + 1u - 2u * range.color);
        face_rule(t, top, slot_info, flags, faces, neighbors, params);
    }
}
