// CUDA twin of shaders/common/swe_cell.wgsl: the per-cell rules after an update
// W -= dt/|V| acc (shared by swe_update and swe_fused_step): the depth stop, the dry-layer
// rules of spec section 10 and friction. The WGSL override constants are -D defines here; the defaults below
// stand where the host passes none (the same guards as in common/swe_flux.cuh).
// CPU reference: CpuSolver::apply_update and Friction::apply.

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
// The depth stop, -0.5 H_ref (super::depth_stop_level): a layer depth below it before draining
// and clipping is a blow-up, not a wet/dry front or a collision (those undershoot by
// 0.12 H_ref at most).
#ifndef STAGE
#define STAGE 0u
#endif
#ifndef DEPTH_STOP
#define DEPTH_STOP -3.0e38f
#endif

// The launch that updates cells: 2 step + 1 for Heun's second stage (STAGE 2), 2 step
// otherwise, so that a record (counters[6]) from an earlier launch is smaller.
__device__ __forceinline__ u32 stop_tag(u32 step) {
    return 2u * step + (STAGE == 2u ? 1u : 0u);
}

// Record a cell whose updated, not yet clipped, state w0 has a layer depth below DEPTH_STOP:
// counters[4] the lowest such cell, [5] the lowest depth (ordered_bits), [6] the launch
// (stop_tag), [7] the time the step reaches (the same for every cell of a launch). 2 compares
// per cell when nothing fires.
__device__ __forceinline__ void check_depth_stop(float4 w0, u32 c, u32 tag, float t,
                                                 u32* counters) {
    float lowest = fminf(w0.x, w0.w);
    if (lowest < DEPTH_STOP) {
        atomicMax(&counters[6], tag);
        atomicMin(&counters[4], c);
        atomicMin(&counters[5], ordered_bits(lowest));
        atomicExch(&counters[7], __float_as_uint(t));
    }
}

// Whether the depth stop fired in an earlier launch than `tag` (one word: cells of the same
// launch may fire while this one runs): then no cell is updated any more.
__device__ __forceinline__ bool depth_stopped(u32 tag, const u32* counters) {
    u32 fired = *(volatile const u32*)(counters + 6);
    return fired != 0u && fired < tag;
}

// Thin films: the momentum of a layer thinner than FILM_DEPTH = eps is desingularised,
// q <- h u with u = sqrt(2) h q / sqrt(h^4 + max(h^4, eps^4)) (spec section 10 eq. (23), the
// Kurganov-Petrova form), i.e. q is scaled by sqrt(2) h^2 / sqrt(h^4 + eps^4) < 1 (exactly 1 at
// h = eps; thicker layers are left alone).
#ifndef FILM_DEPTH
#define FILM_DEPTH 1.0e-2f
#endif

__device__ __forceinline__ float film_factor(float h) {
    float h2 = h * h;
    float e2 = FILM_DEPTH * FILM_DEPTH;
    return 1.4142135f * h2 / sqrtf(h2 * h2 + e2 * e2);
}

// Clip negative depths (returns how many), zero the momentum of dry layers and desingularise
// that of thin films.
__device__ __forceinline__ u32 dry_rules(float4& w0, float4& w1) {
    u32 clipped = 0u;
    if (w0.x < 0.0f) {
        w0.x = 0.0f;
        clipped = clipped + 1u;
    }
    if (w0.x < DRY_TOL) {
        w0.y = 0.0f;
        w0.z = 0.0f;
    } else if (w0.x < FILM_DEPTH) {
        float f = film_factor(w0.x);
        w0.y = f * w0.y;
        w0.z = f * w0.z;
    }
    if (w0.w < 0.0f) {
        w0.w = 0.0f;
        clipped = clipped + 1u;
    }
    if (w0.w < DRY_TOL) {
        w1.x = 0.0f;
        w1.y = 0.0f;
    } else if (w0.w < FILM_DEPTH) {
        float f = film_factor(w0.w);
        w1.x = f * w1.x;
        w1.y = f * w1.y;
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
