// #include "common/dispatch.wgsl"
// #include "common/swe_control.wgsl"
// #include "common/swe_flux.wgsl"

// Driven boundaries, first launch of a stage: one thread per driven edge writes the boundary
// value of the clock's time t (t^n; t^n + dt before Heun's second stage at order 2) into its
// edge (edges[slot].value), which the flux kernels hand to boundary_state: value = scale * g(t)
// with g the boundary's series (t_i, g_i), linear in between, the first value before t_0 and
// the last after t_last (binary search). scale is -1/L for a discharge (q_b per unit length,
// outward) and 1 for an elevation.
// CPU reference: DrivenBoundaries::value in src/solver/swe/boundary.rs.

struct DrivenEdge {
    slot: u32,
    first: u32,
    count: u32,
    scale: f32,
}

@group(0) @binding(0) var<storage, read> control: Control;
@group(0) @binding(1) var<storage, read> driven: array<DrivenEdge>;
@group(0) @binding(2) var<storage, read> series: array<vec2<f32>>;
@group(0) @binding(3) var<storage, read_write> edges: array<SweEdge>;
@group(1) @binding(0) var<uniform> range: ItemRange;

fn series_value(first: u32, count: u32, t: f32) -> f32 {
    let last = first + count - 1u;
    if (t <= series[first].x) {
        return series[first].y;
    }
    if (t >= series[last].x) {
        return series[last].y;
    }
    var lo = first;
    var hi = last;
    while (hi - lo > 1u) {
        let mid = lo + (hi - lo) / 2u;
        if (series[mid].x <= t) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    let a = series[lo];
    let b = series[hi];
    return a.y + (t - a.x) / (b.x - a.x) * (b.y - a.y);
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = linear_index(gid, nwg);
    if (i >= range.count) {
        return;
    }
    let d = driven[range.first + i];
    edges[d.slot].value = d.scale * series_value(d.first, d.count, control.t);
}
