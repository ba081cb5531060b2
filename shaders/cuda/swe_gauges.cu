// #include "common/dispatch.cuh"
// #include "common/swe_control.cuh"

// CUDA twin of shaders/swe_gauges.wgsl. Gauges, last launch of a step (after the update; once
// more before the first step for the initial state): one thread (gauges are few) decides
// whether this step is a sample: a step of dt > 0 (or no step yet) ending at
// t >= next * GAUGE_EVERY (GAUGE_EVERY = 0: every step); if so it appends
// (t, h1, q1x, q1y | h2, q2x, q2y, H) of each gauge's cell as sample `count` and moves next to
// max(next + 1, floor(t / GAUGE_EVERY) + 1). The host reads the samples back in batches and
// resets count; a full buffer counts the lost sample in `dropped`. range.count is the number
// of gauges. CPU reference: SampleClock::due and Gauges::gather in src/solver/swe/gauge.rs.

#ifndef GAUGE_EVERY
#define GAUGE_EVERY 0.0f
#endif
#ifndef GAUGE_CAPACITY
#define GAUGE_CAPACITY 1u
#endif

struct GaugeState {
    u32 next;
    u32 count;
    u32 total;
    u32 dropped;
};

extern "C" __global__ void swe_gauges(
    const Control* __restrict__ control,
    const float4* __restrict__ cells,
    const u32* __restrict__ gauge_cells,
    GaugeState* __restrict__ gauge,
    float4* __restrict__ samples,
    ItemRange range) {
    await_previous_launches();
    u32 gid = blockIdx.x * blockDim.x + threadIdx.x;
    if (gid != 0u || range.count == 0u) {
        return;
    }
    float t = control->t;
    bool due = (control->dt > 0.0f || control->steps == 0u) && t >= (float)gauge->next * GAUGE_EVERY;
    if (!due) {
        return;
    }
    if (gauge->count >= GAUGE_CAPACITY) {
        gauge->dropped = gauge->dropped + 1u;
        return;
    }
    u32 base = gauge->count * range.count;
    for (u32 g = 0u; g < range.count; g = g + 1u) {
        u32 c = gauge_cells[g];
        float4 w0 = cells[2u * c];
        float4 w1 = cells[2u * c + 1u];
        samples[2u * (base + g)] = make_float4(t, w0.x, w0.y, w0.z);
        samples[2u * (base + g) + 1u] = make_float4(w0.w, w1.x, w1.y, w1.z);
    }
    gauge->count = gauge->count + 1u;
    gauge->total = gauge->total + 1u;
    if (GAUGE_EVERY > 0.0f) {
        u32 k = (u32)floorf(t / GAUGE_EVERY) + 1u;
        gauge->next = gauge->next + 1u > k ? gauge->next + 1u : k;
    }
}
