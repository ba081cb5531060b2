// #include "common/dispatch.cuh"
// #include "common/swe_control.cuh"
// #include "common/swe_flux.cuh"
// #include "common/swe_cell.cuh"
// #include "common/swe_muscl.cuh"
// #include "common/swe_drain.cuh"
// #include "common/swe_share.cuh"

// CUDA twin of shaders/swe_fused_step.wgsl. One fused first-order step, cell-centred: each
// thread owns one cell, computes the fluctuations of its three edges (each interior edge is
// computed by both its cells, as in swe_cell_gather), updates the cell with this step's dt
// (fused_dt: the CFL step of the previous pass, clamped to t_end) as swe_update does (dry-layer
// rules, friction) and writes it to the other state buffer (the state is read once and written
// once per step), then computes the local CFL step (3) from the speeds of this pass,
//   dt_i = 2 CFL |V_i| / sum_j |G_ij| lam_ij   (BIG where nothing moves, -1 where the new state
//   or the speed sum is NaN/Inf),
// and folds its block's minimum into dt_min with one atomicMin (ordered_bits).
// swe_fused_clock then turns that minimum into the next step's dt: step n runs with the speeds
// of W^{n-1} (the paper's lagged dt; the first step with those of W^0, from a pass with dt = 0).
// Order 2 (Heun, after swe_reconstruct wrote the increments of the stage's input state):
// STAGE 1 reads W^n from `cells` and writes W* to `cells_next` (W^n stays where it is), with
// the edge states reconstructed and the in-cell terms as in swe_edge_flux2, and gives the
// local CFL step; STAGE 2 reads W* from `cells`, updates it with control.dt (set by
// swe_fused_clock between the stages) and averages with the cell's own W^n, read from
// `cells_old` (the buffer stage 1 read): (W^n + W* - dt/|V| acc(W*)) / 2 into `cells_next`,
// as swe_update STAGE 2 does; it gives no CFL step. STAGE 0: order 1 (edge_slots, deltas,
// cells_old and drain unread).
// Order 2 keeps every layer depth >= 0 with its mass exact by draining (common/swe_drain.cuh,
// common/swe_share.cuh): each stage is this kernel twice. DRAIN 0, the pass: a cell whose
// outflow would take more water than it has writes its drain record (theta < 1) and
// dt_min[2] = the launch's tag, and leaves its output to the fix; the others are updated as
// above. DRAIN 1, the fix (only where dt_min[2] holds this launch's tag; one load per thread
// otherwise): a cell that drains or has a draining neighbour is updated again with every
// edge's layer rows scaled by theta of the cell its mass flux leaves (no events counted, no
// CFL step).
// The depth stop (check_depth_stop) is checked on every updated cell before clipping (at
// order 2 before draining: the pass checks the unscaled update of a draining cell), with
// the step and the time the step reaches as swe_fused_clock will count them; once it fired,
// passes take no step (dt = 0: the state is copied).
// CPU reference: CpuSolver::step with lagged_dt (src/solver/swe/cpu.rs).

#ifndef CFL
#define CFL 0.9f
#endif
#ifndef STAGE
#define STAGE 0u
#endif
#ifndef DRAIN
#define DRAIN 0u
#endif
#define BIG 3.0e38f

/// Not NaN or Inf, tested on the bits (exponent all ones) as the WGSL does.
__device__ __forceinline__ bool finite_bits(float x) {
    return (__float_as_uint(x) & 0x7f800000u) != 0x7f800000u;
}

// Step cell c with dt (launch `tag`, reaching time t_after); returns its local CFL step.
__device__ __forceinline__ float step_cell(
    u32 c,
    float dt,
    u32 tag,
    float t_after,
    const SweEdge* __restrict__ edges,
    const uint4* __restrict__ cell_edges,
    const uint2* __restrict__ edge_slots,
    const float4* __restrict__ deltas,
    const float4* __restrict__ cells,
    float4* __restrict__ cells_next,
    u32* __restrict__ counters,
    u32* __restrict__ dt_min,
    const float4* __restrict__ cells_old,
    float4* __restrict__ drain) {
    float4 w0 = cells[2u * c];
    float4 w1 = cells[2u * c + 1u];
    uint4 slots = cell_edges[c];
    u32 slot[3] = {slots.x, slots.y, slots.z};
    float2 mine = make_float2(1.0f, 1.0f);
    if (DRAIN == 1u) {
        mine = theta_of(c, tag, dt, drain);
    }
    float4 sum0 = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    float4 sum1 = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    float2 outflow = make_float2(0.0f, 0.0f);
    for (int k = 0; k < 3; k = k + 1) {
        u32 s = slot[k];
        if (s != NO_ELEMENT) {
            EdgeShare sh = edge_share(c, s, w0, w1, edges, edge_slots, deltas, cells);
            float len = sh.length;
            float2 scale = make_float2(1.0f, 1.0f);
            if (DRAIN == 1u) {
                scale = drain_scale(sh, mine, theta_of(sh.other, tag, dt, drain));
            } else if (sh.left) {
                if ((sh.flags & FLAG_NONHYPERBOLIC) != 0u) {
                    atomicAdd(&counters[0], 1u);
                }
                if ((sh.flags & FLAG_FALLBACK) != 0u) {
                    atomicAdd(&counters[1], 1u);
                }
                if ((sh.flags & FLAG_CHI_CLAMPED) != 0u) {
                    atomicAdd(&counters[2], 1u);
                }
            }
            outflow = outflow + len * share_outflow(sh);
            float4 fl0 = make_float4(scale.x * sh.fl0.x, scale.x * sh.fl0.y, scale.x * sh.fl0.z,
                                     scale.y * sh.fl0.w);
            sum0 = sum0 + len * (fl0 + make_float4(0.0f, sh.own.x, sh.own.y, 0.0f));
            sum1 = sum1
                + len * make_float4(scale.y * sh.fl1.x + sh.own.z, scale.y * sh.fl1.y + sh.own.w,
                                    sh.lam, 0.0f);
        }
    }
    // The pass: a draining cell is left to the fix.
    bool draining = false;
    if (STAGE != 0u && DRAIN == 0u && dt > 0.0f) {
        float s = dt / w1.w;
        float2 theta = make_float2(drain_factor(w0.x, s * outflow.x), drain_factor(w0.w, s * outflow.y));
        if (drains(theta)) {
            drain[c] = drain_record(tag, dt, theta);
            atomicExch(&dt_min[2], tag);
            draining = true;
            // The depth stop sees the depth before draining, as before clipping.
            check_depth_stop(w0 - s * sum0, c, tag, t_after, counters);
        }
    }
    float4 n0 = w0;
    float4 n1 = w1;
    if (STAGE == 2u) {
        // No step: W^n is copied.
        n0 = cells_old[2u * c];
        n1 = cells_old[2u * c + 1u];
    }
    if (dt > 0.0f && !draining) {
        float s = dt / w1.w;
        n0 = w0 - s * sum0;
        n1 = make_float4(w1.x - s * sum1.x, w1.y - s * sum1.y, w1.z, w1.w);
        check_depth_stop(n0, c, tag, t_after, counters);
        u32 clipped = dry_rules(n0, n1);
        friction(n0, n1, dt);
        if (STAGE == 2u) {
            float4 old0 = cells_old[2u * c];
            float4 old1 = cells_old[2u * c + 1u];
            n0 = 0.5f * (old0 + n0);
            n1 = make_float4(0.5f * (old1.x + n1.x), 0.5f * (old1.y + n1.y), n1.z, n1.w);
            clipped = clipped + dry_rules(n0, n1);
        }
        if (clipped != 0u) {
            atomicAdd(&counters[3], clipped);
        }
    }
    if (!draining) {
        cells_next[2u * c] = n0;
        cells_next[2u * c + 1u] = n1;
    }
    float speeds = sum1.z;
    bool finite = finite_bits(n0.x) && finite_bits(n0.y) && finite_bits(n0.z)
        && finite_bits(n0.w) && finite_bits(n1.x) && finite_bits(n1.y) && finite_bits(speeds);
    return !finite ? -1.0f : speeds > 0.0f ? 2.0f * CFL * w1.w / speeds : BIG;
}

extern "C" __global__ void swe_fused_step(
    const Control* __restrict__ control,
    const SweEdge* __restrict__ edges,
    const uint4* __restrict__ cell_edges,
    const uint2* __restrict__ edge_slots,
    const float4* __restrict__ deltas,
    const float4* __restrict__ cells,
    float4* __restrict__ cells_next,
    u32* __restrict__ counters,
    u32* __restrict__ dt_min,
    const float4* __restrict__ cells_old,
    float4* __restrict__ drain,
    ItemRange range) {
    await_previous_launches();
    __shared__ float partial[WORKGROUP_SIZE];
    u32 lid = threadIdx.x;
    u32 i = linear_index();
    float local_dt = BIG;
    // dt_min[1] != 0: the last step was rejected (swe_fused_clock), this pass writes nothing
    // (its output buffer holds the state).
    bool live = i < range.count && *(volatile u32*)(dt_min + 1) == 0u;
    // Only live threads read the clock and the stop words, and the edge length comes with the
    // share (EdgeShare::length): with both as after the draining merge the order-1 step took
    // 0.315 ms at 4M cells on the H100, with both as now 0.295 (as before that merge).
    if (live) {
        float dt = STAGE == 2u ? control->dt : fused_dt(*control);
        // Stage 2 runs after the clock counted the step.
        u32 tag = stop_tag(control->steps + 1u);
        float t_after = fused_t_after(*control, dt);
        if (STAGE == 2u) {
            tag = stop_tag(control->steps);
            t_after = control->t;
        }
        // Fired in an earlier stage, or in an earlier step (the clock did not count it).
        if (depth_stopped(tag, counters) || control->stop_cell != NO_CELL) {
            dt = 0.0f;
        }
        if (DRAIN == 1u) {
            u32 c = range.first + i;
            if (*(volatile u32*)(dt_min + 2) == tag
                && needs_fix(c, tag, dt, edges, cell_edges, drain)) {
                step_cell(c, dt, tag, t_after, edges, cell_edges, edge_slots, deltas, cells,
                          cells_next, counters, dt_min, cells_old, drain);
            }
        } else {
            local_dt = step_cell(range.first + i, dt, tag, t_after, edges, cell_edges, edge_slots,
                                 deltas, cells, cells_next, counters, dt_min, cells_old, drain);
        }
    }
    if (DRAIN == 1u) {
        return;
    }
    partial[lid] = local_dt;
    __syncthreads();
    for (u32 stride = WORKGROUP_SIZE / 2u; stride > 0u; stride = stride / 2u) {
        if (lid < stride) {
            partial[lid] = fminf(partial[lid], partial[lid + stride]);
        }
        __syncthreads();
    }
    if (lid == 0u && STAGE != 2u) {
        u32 word = ordered_bits(partial[0]);
        // Most blocks find a smaller minimum already there: a load instead of an atomic.
        if (word < *(volatile u32*)dt_min) {
            atomicMin(&dt_min[0], word);
        }
    }
}
