// #include "common/dispatch.cuh"
// #include "common/swe_control.cuh"

// CUDA twin of shaders/swe_update.wgsl. Cell update (2): W_i -= dt / |V_i| * acc_i with dt
// from the GPU time kernel (no host round trip), then the dry-layer rules of spec section 10: a
// negative thickness is clipped to 0 (counted: clipping breaks exact conservation) and a layer
// thinner than DRY_TOL loses its momentum; then friction, semi-implicit (interface drag, Manning
// on the lower layer; see src/solver/swe/friction.rs). Clears the accumulator for the next
// step. STAGE 0: forward Euler (order 1). Heun's SSP-RK2 (order 2): STAGE 1 keeps W^n in
// cells_old and writes W*; STAGE 2 writes (W^n + W* - dt/|V| acc(W*)) / 2 (friction before
// averaging). CPU reference: CpuSolver::step / apply_update.

#ifndef DRY_TOL
#define DRY_TOL 1.0e-4f
#endif
#ifndef GRAVITY
#define GRAVITY 9.81f
#endif
#ifndef DENSITY_RATIO
#define DENSITY_RATIO 0.5f
#endif
#ifndef MANNING
#define MANNING 0.0f
#endif
#ifndef INTERFACE_DRAG
#define INTERFACE_DRAG 0.0f
#endif
#ifndef STAGE
#define STAGE 0u
#endif

// Clip negative depths (returns how many) and zero the momentum of dry layers.
__device__ __forceinline__ u32 dry_rules(float4& w0, float4& w1) {
    u32 clipped = 0u;
    if (w0.x < 0.0f) {
        w0.x = 0.0f;
        clipped = clipped + 1u;
    }
    if (w0.x < DRY_TOL) {
        w0.y = 0.0f;
        w0.z = 0.0f;
    }
    if (w0.w < 0.0f) {
        w0.w = 0.0f;
        clipped = clipped + 1u;
    }
    if (w0.w < DRY_TOL) {
        w1.x = 0.0f;
        w1.y = 0.0f;
    }
    return clipped;
}

// Interface drag then Manning bottom friction over dt, both implicit with |u| frozen.
__device__ __forceinline__ void friction(float4& w0, float4& w1, float dt) {
    float h1 = w0.x;
    float h2 = w0.w;
    if (INTERFACE_DRAG > 0.0f && h1 >= DRY_TOL && h2 >= DRY_TOL) {
        float2 du = make_float2(w0.y / h1 - w1.x / h2, w0.z / h1 - w1.y / h2);
        float speed = sqrtf(du.x * du.x + du.y * du.y);
        float k1 = dt * INTERFACE_DRAG * speed / h1;
        float k2 = dt * DENSITY_RATIO * INTERFACE_DRAG * speed / h2;
        float2 dn = (1.0f / (1.0f + k1 + k2)) * du;
        w0 = make_float4(h1, w0.y - h1 * k1 * dn.x, w0.z - h1 * k1 * dn.y, h2);
        w1 = make_float4(w1.x + h2 * k2 * dn.x, w1.y + h2 * k2 * dn.y, w1.z, w1.w);
    }
    if (MANNING > 0.0f && h2 >= DRY_TOL) {
        float speed = sqrtf(w1.x * w1.x + w1.y * w1.y) / h2;
        float k = dt * GRAVITY * MANNING * MANNING * speed / powf(h2, 4.0f / 3.0f);
        w1 = make_float4(w1.x / (1.0f + k), w1.y / (1.0f + k), w1.z, w1.w);
    }
}

extern "C" __global__ void swe_update(
    const Control* __restrict__ control,
    float4* __restrict__ cells,
    float4* __restrict__ acc,
    u32* __restrict__ counters,
    float4* __restrict__ cells_old,
    ItemRange range) {
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
    if (control->dt <= 0.0f) {
        return;
    }
    float s = control->dt / w1.w;
    float4 n0 = w0 - s * a0;
    float4 n1 = make_float4(w1.x - s * a1.x, w1.y - s * a1.y, w1.z, w1.w);
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
