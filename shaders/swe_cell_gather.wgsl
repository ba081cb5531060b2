// #include "common/dispatch.wgsl"
// #include "common/swe_flux.wgsl"

// Cell-centred gather (no coloring, one dispatch): each thread owns one cell and computes the
// fluctuations of its own three edges, so every interior edge is computed twice. It writes the
// cell's accumulator (sum of |edge| * contribution, CFL sum in acc[2c + 1].z) with plain stores.
// Same results as swe_edge_flux up to f32 summation order; used to compare the two layouts.

@group(0) @binding(0) var<storage, read> edges: array<SweEdge>;
@group(0) @binding(1) var<storage, read> cells: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read_write> acc: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read_write> counters: array<atomic<u32>, 8>;
@group(0) @binding(4) var<storage, read> cell_edges: array<vec4<u32>>;
@group(1) @binding(0) var<uniform> range: ItemRange;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = linear_index(gid, nwg);
    if (i >= range.count) {
        return;
    }
    let c = range.first + i;
    let slots = cell_edges[c];
    var sum0 = vec4<f32>(0.0);
    var sum1 = vec4<f32>(0.0);
    for (var k = 0; k < 3; k = k + 1) {
        let s = slots[k];
        if (s == NO_ELEMENT) {
            continue;
        }
        let e = edges[s];
        let wl0 = cells[2u * e.left];
        let wl1 = cells[2u * e.left + 1u];
        var wr0 = wl0;
        var wr1 = wl1;
        if (e.kind == KIND_INTERIOR) {
            wr0 = cells[2u * e.right];
            wr1 = cells[2u * e.right + 1u];
        }
        let out = edge_contribution(wl0, wl1, wr0, wr1, e.kind, e.nx, e.ny, e.value);
        if (e.left == c) {
            sum0 = sum0 + e.length * out.left0;
            sum1 = sum1 + e.length * vec4<f32>(out.left1, out.lam, 0.0);
            if ((out.flags & FLAG_NONHYPERBOLIC) != 0u) {
                atomicAdd(&counters[0], 1u);
            }
            if ((out.flags & FLAG_FALLBACK) != 0u) {
                atomicAdd(&counters[1], 1u);
            }
            if ((out.flags & FLAG_CHI_CLAMPED) != 0u) {
                atomicAdd(&counters[2], 1u);
            }
        } else {
            sum0 = sum0 + e.length * out.right0;
            sum1 = sum1 + e.length * vec4<f32>(out.right1, out.lam, 0.0);
        }
    }
    acc[2u * c] = sum0;
    acc[2u * c + 1u] = sum1;
}
