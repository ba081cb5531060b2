// #include "common/dispatch.cuh"
// #include "common/vcolor_hash.cuh"
// #include "common/vcolor_eject_propose.cuh"
// #include "common/vcolor_eject_resolve.cuh"
// #include "common/vcolor_eject_apply.cuh"
// #include "common/vcolor_eject_record.cuh"

// CUDA twin of shaders/vcolor_eject_tail.wgsl. Color reduction, the tail of an ejection
// attempt: ONE block (the host launches WORKGROUP_SIZE threads) runs many rounds on a short
// defect list in one launch, each round the three steps of the launched rounds (the same
// per-defect functions, common/vcolor_eject_*.cuh) with __syncthreads() between them, which
// makes the block's global writes visible to the block; the next list (next_defects, its
// length in shared memory) is copied back into `defects`. round_base = [first round, defects
// after the last window boundary at or before it, rounds to run (at most range.count), the
// attempt's cap on rounds]; range.color = k, range.pad = the bound. Rounds stop after the one
// that empties the list, grows it past the bound, or ends a window of EJECT_WINDOW rounds where
// the host's stop rule gives the attempt up (gives_up). defect_log[0] is the length at the
// start, entry r the length after round r, rounds not run read NOT_RUN; at the end the list is
// in defects[0 .. defect_count[0]], the other list's length is zero and the launch record fits
// the list. The buffers the steps write are plain pointers (no __restrict__ const: no
// read-only cache across the steps).

#define EJECT_WINDOW 8u
#define NOT_RUN 0xffffffffu
/// Windows added to the windows left before the tail gives up on the log test (1/64), so that
/// f32 rounding never makes it stop where the host's f64 rule goes on.
#define STOP_MARGIN 0.015625f

/// The host's stop rule (`hopeless` in src/color/reduce.rs) in f32: the last window took the
/// defects from `previous` to `now`; shrinking by that ratio per window they would not reach
/// zero within `windows_left` (plus STOP_MARGIN).
__device__ __forceinline__ bool gives_up(u32 previous, u32 now, u32 windows_left) {
    if (now >= previous) {
        return true;
    }
    if (now == 0u) {
        return false;
    }
    return logf((float)now) >
           ((float)windows_left + STOP_MARGIN) * logf((float)previous / (float)now);
}

extern "C" __global__ void vcolor_eject_tail(
    const u32* __restrict__ adjacency_offsets,
    const u32* __restrict__ adjacency,
    const u32* __restrict__ vertex_class,
    const u32* __restrict__ round_base,
    u32* colors,
    u32* tabu,
    u32* proposal,
    u32* winner,
    u32* listed,
    u32* defects,
    u32* defect_count,
    u32* next_defects,
    u32* emptied_count,
    u32* record,
    u32* defect_log,
    ItemRange range) {
    await_previous_launches();
    __shared__ u32 local_count;
    __shared__ u32 local_first;
    __shared__ u32 next_count;
    u32 lid = threadIdx.x;
    u32 k = min(range.color, MAX_EJECT_COLORS + 1u);
    u32 bound = range.pad;
    u32 first = round_base[0];
    u32 window_defects = round_base[1];
    u32 rounds = min(round_base[2], range.count);
    u32 cap = round_base[3];
    u32 len = defect_count[0];
    if (lid == 0u) {
        next_count = 0u;
        defect_log[0] = len;
    }
    __syncthreads();
    u32 ran = 0u;
    while (ran < rounds && len != 0u && len <= bound) {
        u32 round_number = first + ran;
        for (u32 i = lid; i < len; i = i + WORKGROUP_SIZE) {
            u32 v = defects[i];
            proposal[v] = proposed_color(
                v, k, round_number, adjacency_offsets, adjacency, vertex_class, colors, tabu);
        }
        __syncthreads();
        for (u32 i = lid; i < len; i = i + WORKGROUP_SIZE) {
            u32 v = defects[i];
            winner[v] = proposal_wins(
                v, round_number, adjacency_offsets, adjacency, vertex_class, colors, proposal);
        }
        __syncthreads();
        for (u32 chunk = 0u; chunk < len; chunk = chunk + WORKGROUP_SIZE) {
            apply_chunk(chunk + lid, len, lid, round_number + 1u, adjacency_offsets, adjacency,
                        vertex_class, proposal, winner, defects, colors, tabu, listed,
                        next_defects, &next_count, &local_count, &local_first);
        }
        __syncthreads();
        len = next_count;
        __syncthreads();
        if (lid == 0u) {
            next_count = 0u;
        }
        for (u32 i = lid; i < len; i = i + WORKGROUP_SIZE) {
            defects[i] = next_defects[i];
        }
        __syncthreads();
        ran = ran + 1u;
        if (lid == 0u) {
            defect_log[ran] = len;
        }
        u32 done = first + ran;
        if (done % EJECT_WINDOW == 0u) {
            u32 windows_left = (max(cap, done) - done) / EJECT_WINDOW;
            bool stop = done >= 2u * EJECT_WINDOW && gives_up(window_defects, len, windows_left);
            window_defects = len;
            if (stop) {
                break;
            }
        }
    }
    if (lid == 0u) {
        for (u32 r = ran + 1u; r <= rounds; r = r + 1u) {
            defect_log[r] = NOT_RUN;
        }
        defect_count[0] = len;
        emptied_count[0] = 0u;
        write_defect_record(record, len);
    }
}
