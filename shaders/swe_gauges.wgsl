// #include "common/dispatch.wgsl"
// #include "common/swe_control.wgsl"

// Gauges, last launch of a step (after the update; once more before the first step for the
// initial state): one thread (gauges are few) decides whether this step is a sample: a step of
// dt > 0 (or no step yet) ending at t >= next * GAUGE_EVERY (GAUGE_EVERY = 0: every step); if
// so it appends (t, h1, q1x, q1y | h2, q2x, q2y, H) of each gauge's cell as sample `count` and
// moves next to max(next + 1, floor(t / GAUGE_EVERY) + 1). The host reads the samples back in
// batches and resets count; a full buffer (the host keeps batches shorter than its capacity)
// counts the lost sample in `dropped`. range.count is the number of gauges.
// CPU reference: SampleClock::due and Gauges::gather in src/solver/swe/gauge.rs.

override GAUGE_EVERY: f32 = 0.0;
override GAUGE_CAPACITY: u32 = 1u;

struct GaugeState {
    next: u32,
    count: u32,
    total: u32,
    dropped: u32,
}

@group(0) @binding(0) var<storage, read> control: Control;
@group(0) @binding(1) var<storage, read> cells: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read> gauge_cells: array<u32>;
@group(0) @binding(3) var<storage, read_write> gauge: GaugeState;
@group(0) @binding(4) var<storage, read_write> samples: array<vec4<f32>>;
@group(1) @binding(0) var<uniform> range: ItemRange;

@compute @workgroup_size(1)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    if (gid.x != 0u || range.count == 0u) {
        return;
    }
    let t = control.t;
    let due = (control.dt > 0.0 || control.steps == 0u) && t >= f32(gauge.next) * GAUGE_EVERY;
    if (!due) {
        return;
    }
    if (gauge.count >= GAUGE_CAPACITY) {
        gauge.dropped = gauge.dropped + 1u;
        return;
    }
    let base = gauge.count * range.count;
    for (var g = 0u; g < range.count; g = g + 1u) {
        let c = gauge_cells[g];
        let w0 = cells[2u * c];
        let w1 = cells[2u * c + 1u];
        samples[2u * (base + g)] = vec4<f32>(t, w0.xyz);
        samples[2u * (base + g) + 1u] = vec4<f32>(w0.w, w1.xyz);
    }
    gauge.count = gauge.count + 1u;
    gauge.total = gauge.total + 1u;
    if (GAUGE_EVERY > 0.0) {
        gauge.next = max(gauge.next + 1u, u32(floor(t / GAUGE_EVERY)) + 1u);
    }
}
