// #include "common/dispatch.cuh"
// #include "common/swe_control.cuh"
// #include "common/swe_cell.cuh"

// CUDA twin of shaders/swe_update.wgsl. Cell update (2): W_i -= dt / |V_i| * acc_i with dt
// from the GPU time kernel (no host round trip), then the depth stop (check_depth_stop: a depth
// far below 0 before clipping is recorded and no cell is updated after that launch), the
// dry-layer rules of spec section 10: a negative thickness is clipped to 0 (counted: clipping breaks exact conservation) and a layer
// thinner than DRY_TOL loses its momentum; then friction, semi-implicit (interface drag, Manning
// on the lower layer; see src/solver/swe/friction.rs). Clears the accumulator for the next
// step. STAGE 0: forward Euler (order 1). Heun's SSP-RK2 (order 2): STAGE 1 keeps W^n in
// cells_old and writes W*; STAGE 2 writes (W^n + W* - dt/|V| acc(W*)) / 2 (friction before
// averaging). CPU reference: CpuSolver::step / apply_update.

#ifndef STAGE
#define STAGE 0u
#endif

extern "C" __global__ void swe_update(
    const Control* __restrict__ control,
    float4* __restrict__ cells,
    float4* __restrict__ acc,
    u32* __restrict__ counters,
    float4* __restrict__ cells_old,
    ItemRange range) {
    await_previous_launches();
    u32 i = linear_index();
    if (i >= range.count) {
        return;
    }
    u32 c = range.first + i;
    float4 w0 = cells[2u * c];
    float4 w1 = cells[2u * c + 1u];
    float4 a0 = acc[2u * c];
    float4 a1 = acc[2u * c + 1u];
    acc[2u * c] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    acc[2u * c + 1u] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    u32 tag = stop_tag(control->steps);
    if (control->dt <= 0.0f || depth_stopped(tag, counters)) {
        return;
    }
    float s = control->dt / w1.w;
    float4 n0 = w0 - s * a0;
    float4 n1 = make_float4(w1.x - s * a1.x, w1.y - s * a1.y, w1.z, w1.w);
    check_depth_stop(n0, c, tag, control->t, counters);
    u32 clipped = dry_rules(n0, n1);
    friction(n0, n1, control->dt);
    if (STAGE == 1u) {
        cells_old[2u * c] = w0;
        cells_old[2u * c + 1u] = w1;
    } else if (STAGE == 2u) {
        float4 o0 = cells_old[2u * c];
        float4 o1 = cells_old[2u * c + 1u];
        n0 = 0.5f * (o0 + n0);
        n1 = make_float4(0.5f * (o1.x + n1.x), 0.5f * (o1.y + n1.y), n1.z, n1.w);
        clipped = clipped + dry_rules(n0, n1);
    }
    if (clipped != 0u) {
        atomicAdd(&counters[3], clipped);
    }
    cells[2u * c] = n0;
    cells[2u * c + 1u] = n1;
}
