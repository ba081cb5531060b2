// #include "common/dispatch.wgsl"
// #include "common/swe_flux.wgsl"

// Colored edge scatter, one dispatch per edge color: each thread owns one edge, computes its
// fluctuations once and adds |edge| * contribution to both cells' accumulators (plain
// read-modify-write: no two edges of one color share a cell), plus |edge| * lam_max to each
// cell's CFL sum (acc[2c + 1].z). CPU reference: CpuSolver::edge_pass in src/solver/swe/cpu.rs.

@group(0) @binding(0) var<storage, read> edges: array<SweEdge>;
@group(0) @binding(1) var<storage, read> cells: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read_write> acc: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read_write> counters: array<atomic<u32>, 8>;
@group(1) @binding(0) var<uniform> range: ItemRange;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = linear_index(gid, nwg);
    if (i >= range.count) {
        return;
    }
    let e = edges[range.first + i];
    let wl0 = cells[2u * e.left];
    let wl1 = cells[2u * e.left + 1u];
    var wr0 = wl0;
    var wr1 = wl1;
    if (e.kind == KIND_INTERIOR) {
        wr0 = cells[2u * e.right];
        wr1 = cells[2u * e.right + 1u];
    }
    let out = edge_contribution(wl0, wl1, wr0, wr1, e.kind, e.nx, e.ny, e.value);
    let len = e.length;
    acc[2u * e.left] = acc[2u * e.left] + len * out.left0;
    acc[2u * e.left + 1u] = acc[2u * e.left + 1u] + len * vec4<f32>(out.left1, out.lam, 0.0);
    if (e.kind == KIND_INTERIOR) {
        acc[2u * e.right] = acc[2u * e.right] + len * out.right0;
        acc[2u * e.right + 1u] = acc[2u * e.right + 1u] + len * vec4<f32>(out.right1, out.lam, 0.0);
    }
    if (out.flags != 0u) {
        if ((out.flags & FLAG_NONHYPERBOLIC) != 0u) {
            atomicAdd(&counters[0], 1u);
        }
        if ((out.flags & FLAG_FALLBACK) != 0u) {
            atomicAdd(&counters[1], 1u);
        }
        if ((out.flags & FLAG_CHI_CLAMPED) != 0u) {
            atomicAdd(&counters[2], 1u);
        }
    }
}
