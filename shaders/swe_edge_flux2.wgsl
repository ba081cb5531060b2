// #include "common/dispatch.wgsl"
// #include "common/swe_flux.wgsl"
// #include "common/swe_muscl.wgsl"

// Second order, step 2 of a stage: the colored edge scatter of swe_edge_flux on the states
// reconstructed at the edge midpoint (cell value + the increments swe_reconstruct wrote for
// this edge's slot in each cell), plus each cell's in-cell terms: the advective flux
// difference q-(u-.n) - q_i(u_i.n) per layer and the pressure terms g h1_i d(eta1) n and
// g h2_i (d(eta2) + r d(h1)) n (muscl.rs explains why these make the scheme second order and
// keep the lake at rest exact). A boundary edge (wall, open, or driven with the edge's value)
// builds its ghost by boundary_state from the reconstructed left state. CPU reference:
// edge_contribution2 in src/solver/swe/muscl.rs.
// Each cell's outflow per layer, sum_j |G_ij| max(0, G_ij) (G the mass flux out of it), is
// added to `outflow` for the draining factor (swe_drain, which clears it).

@group(0) @binding(0) var<storage, read> edges: array<SweEdge>;
@group(0) @binding(1) var<storage, read> cells: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read> deltas: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read> slots: array<vec2<u32>>;
@group(0) @binding(4) var<storage, read_write> acc: array<vec4<f32>>;
@group(0) @binding(5) var<storage, read_write> counters: array<atomic<u32>, 8>;
@group(0) @binding(6) var<storage, read_write> outflow: array<vec2<f32>>;
@group(1) @binding(0) var<uniform> range: ItemRange;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = linear_index(gid, nwg);
    if (i >= range.count) {
        return;
    }
    let e = edges[range.first + i];
    let s = slots[range.first + i];
    let wl0 = cells[2u * e.left];
    let wl1 = cells[2u * e.left + 1u];
    let dl0 = deltas[s.x];
    let dl1 = deltas[s.x + 1u];
    let el = state_at_edge(wl0, wl1, dl0, dl1);
    var er = el;
    var wr0 = wl0;
    var wr1 = wl1;
    var dr0 = dl0;
    var dr1 = dl1;
    if (e.kind == KIND_INTERIOR) {
        wr0 = cells[2u * e.right];
        wr1 = cells[2u * e.right + 1u];
        dr0 = deltas[s.y];
        dr1 = deltas[s.y + 1u];
        er = state_at_edge(wr0, wr1, dr0, dr1);
    }
    let out = edge_contribution(el.w0, el.w1, er.w0, er.w1, e.kind, e.nx, e.ny, e.value);
    let tl = in_cell_terms(wl0, wl1, dl0, dl1, e.nx, e.ny);
    let len = e.length;
    acc[2u * e.left] = acc[2u * e.left] + len * (out.left0 + vec4<f32>(0.0, tl.x, tl.y, 0.0));
    acc[2u * e.left + 1u] = acc[2u * e.left + 1u] + len * vec4<f32>(out.left1 + tl.zw, out.lam, 0.0);
    if (e.kind == KIND_INTERIOR) {
        let tr = in_cell_terms(wr0, wr1, dr0, dr1, -e.nx, -e.ny);
        acc[2u * e.right] = acc[2u * e.right] + len * (out.right0 + vec4<f32>(0.0, tr.x, tr.y, 0.0));
        acc[2u * e.right + 1u] = acc[2u * e.right + 1u] + len * vec4<f32>(out.right1 + tr.zw, out.lam, 0.0);
    }
    let g = len * vec2<f32>(out.left0.x, out.left0.w);
    if (any(g > vec2<f32>(0.0))) {
        outflow[e.left] = outflow[e.left] + max(g, vec2<f32>(0.0));
    }
    if (e.kind == KIND_INTERIOR && any(g < vec2<f32>(0.0))) {
        outflow[e.right] = outflow[e.right] + max(-g, vec2<f32>(0.0));
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
