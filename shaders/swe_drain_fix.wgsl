// #include "common/dispatch.wgsl"
// #include "common/swe_control.wgsl"
// #include "common/swe_flux.wgsl"
// #include "common/swe_muscl.wgsl"
// #include "common/swe_drain.wgsl"
// #include "common/swe_share.wgsl"

// Second order, the edge-scatter update (after swe_drain, before swe_update): where a cell
// drains in this launch (drain_flag holds its tag; one load per thread otherwise), every cell
// that drains or has a draining neighbour recomputes its share of each edge (edge_share, the
// states reconstructed as in swe_edge_flux2) and rewrites its accumulator (the speed sum
// stays) with each edge's layer rows scaled by theta of the cell the layer's mass flux leaves
// (common/swe_drain.wgsl); rewritten, not corrected, so the rounding of a large unscaled sum
// cannot eat the draining margin. Both cells of an edge compute the same flux, so each edge's
// mass still leaves one cell as it enters the other. CPU reference: CpuSolver::accumulate in
// src/solver/swe/cpu.rs.

override STAGE: u32 = 1u;

@group(0) @binding(0) var<storage, read> control: Control;
@group(0) @binding(1) var<storage, read> edges: array<SweEdge>;
@group(0) @binding(2) var<storage, read> cell_edges: array<vec4<u32>>;
@group(0) @binding(3) var<storage, read> edge_slots: array<vec2<u32>>;
@group(0) @binding(4) var<storage, read> deltas: array<vec4<f32>>;
@group(0) @binding(5) var<storage, read> cells: array<vec4<f32>>;
@group(0) @binding(6) var<storage, read_write> acc: array<vec4<f32>>;
@group(0) @binding(7) var<storage, read> drain: array<vec4<f32>>;
@group(0) @binding(8) var<storage, read_write> drain_flag: array<atomic<u32>, 1>;
@group(1) @binding(0) var<uniform> range: ItemRange;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = linear_index(gid, nwg);
    let tag = 2u * control.steps + select(0u, 1u, STAGE == 2u);
    if (i >= range.count || atomicLoad(&drain_flag[0]) != tag) {
        return;
    }
    let c = range.first + i;
    let dt = control.dt;
    if (dt <= 0.0 || !needs_fix(c, tag, dt)) {
        return;
    }
    let w0 = cells[2u * c];
    let w1 = cells[2u * c + 1u];
    let slots = cell_edges[c];
    let mine = theta_of(c, tag, dt);
    var sum0 = vec4<f32>(0.0);
    var sum1 = vec2<f32>(0.0);
    for (var k = 0; k < 3; k = k + 1) {
        let s = slots[k];
        if (s != NO_ELEMENT) {
            let sh = edge_share(c, s, w0, w1);
            let scale = drain_scale(sh, mine, theta_of(sh.other, tag, dt));
            let len = sh.length;
            let fl0 = sh.fl0 * vec4<f32>(scale.x, scale.x, scale.x, scale.y);
            sum0 = sum0 + len * (fl0 + vec4<f32>(0.0, sh.own.xy, 0.0));
            sum1 = sum1 + len * (scale.y * sh.fl1 + sh.own.zw);
        }
    }
    acc[2u * c] = sum0;
    acc[2u * c + 1u] = vec4<f32>(sum1, acc[2u * c + 1u].zw);
}
