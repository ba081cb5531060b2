// STAGE before the includes: common/swe_share.cuh reads it (the WGSL twin's override may be
// declared after its use; a macro may not).
#ifndef STAGE
#define STAGE 1u
#endif

// #include "common/dispatch.cuh"
// #include "common/swe_control.cuh"
// #include "common/swe_flux.cuh"
// #include "common/swe_muscl.cuh"
// #include "common/swe_drain.cuh"
// #include "common/swe_share.cuh"

// CUDA twin of shaders/swe_drain_fix.wgsl. Second order, the edge-scatter update (after
// swe_drain, before swe_update): where a cell drains in this launch (drain_flag holds its tag;
// one load per thread otherwise), every cell that drains or has a draining neighbour
// recomputes its share of each edge (edge_share, the states reconstructed as in
// swe_edge_flux2) and rewrites its accumulator (the speed sum stays) with each edge's layer
// rows scaled by theta of the cell the layer's mass flux leaves (common/swe_drain.cuh);
// rewritten, not corrected, so the rounding of a large unscaled sum cannot eat the draining
// margin. Both cells of an edge compute the same flux, so each edge's mass still leaves one
// cell as it enters the other.
// CPU reference: CpuSolver::accumulate in src/solver/swe/cpu.rs.

extern "C" __global__ void swe_drain_fix(
    const Control* __restrict__ control,
    const SweEdge* __restrict__ edges,
    const uint4* __restrict__ cell_edges,
    const uint2* __restrict__ edge_slots,
    const float4* __restrict__ deltas,
    const float4* __restrict__ cells,
    float4* __restrict__ acc,
    const float4* __restrict__ drain,
    u32* __restrict__ drain_flag,
    ItemRange range) {
    await_previous_launches();
    u32 i = linear_index();
    u32 tag = 2u * control->steps + (STAGE == 2u ? 1u : 0u);
    if (i >= range.count || *(volatile u32*)drain_flag != tag) {
        return;
    }
    u32 c = range.first + i;
    float dt = control->dt;
    if (dt <= 0.0f || !needs_fix(c, tag, dt, edges, cell_edges, drain)) {
        return;
    }
    float4 w0 = cells[2u * c];
    float4 w1 = cells[2u * c + 1u];
    uint4 slots = cell_edges[c];
    u32 slot[3] = {slots.x, slots.y, slots.z};
    float2 mine = theta_of(c, tag, dt, drain);
    float4 sum0 = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    float2 sum1 = make_float2(0.0f, 0.0f);
    for (int k = 0; k < 3; k = k + 1) {
        u32 s = slot[k];
        if (s != NO_ELEMENT) {
            EdgeShare sh = edge_share(c, s, w0, w1, edges, edge_slots, deltas, cells);
            float2 scale = drain_scale(sh, mine, theta_of(sh.other, tag, dt, drain));
            float len = sh.length;
            float4 fl0 = make_float4(scale.x * sh.fl0.x, scale.x * sh.fl0.y, scale.x * sh.fl0.z,
                                     scale.y * sh.fl0.w);
            sum0 = sum0 + len * (fl0 + make_float4(0.0f, sh.own.x, sh.own.y, 0.0f));
            sum1 = sum1 + len * make_float2(scale.y * sh.fl1.x + sh.own.z,
                                            scale.y * sh.fl1.y + sh.own.w);
        }
    }
    acc[2u * c] = sum0;
    float4 a1 = acc[2u * c + 1u];
    acc[2u * c + 1u] = make_float4(sum1.x, sum1.y, a1.z, a1.w);
}
