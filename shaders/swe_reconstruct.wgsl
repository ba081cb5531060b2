// #include "common/dispatch.wgsl"
// #include "common/swe_flux.wgsl"

// Second order, step 1 of a stage: the limited MUSCL reconstruction of each cell (one thread
// per cell). Variables (h1, eta2 = h2 - H, u1x, u1y | u2x, u2y) with desingularised velocities;
// least-squares gradients over the three face neighbours (a boundary ghost repeats the cell's
// own values); Barth-Jespersen limiting against the min/max over the 2-ring (the cell, its face
// neighbours and theirs); a layer that is dry (h < DRY_TOL) or would get a negative depth at an
// edge midpoint is reconstructed flat (for the lower layer grad eta2 = -grad H). Writes the
// increments at the cell's three edge midpoints, two vec4 per slot:
// (dh1, du1x, du1y, dh2), (du2x, du2y, dH, deta2). CPU reference: src/solver/swe/muscl.rs.
//
// Static data per cell (Reconstruction::gpu_cells): (c0, c1), (c2, grad H), (d0, d1), (d2, 0, 0)
// with c_k the least-squares weights and d_k the edge midpoints relative to the barycentre.

@group(0) @binding(0) var<storage, read> cells: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read> recon: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read> neighbors: array<vec4<u32>>;
@group(0) @binding(3) var<storage, read_write> deltas: array<vec4<f32>>;
@group(1) @binding(0) var<uniform> range: ItemRange;

// The reconstructed variables of a cell: a = (h1, eta2, u1x, u1y), b = (u2x, u2y).
struct Vars {
    a: vec4<f32>,
    b: vec2<f32>,
}

fn cell_vars(c: u32) -> Vars {
    let w0 = cells[2u * c];
    let w1 = cells[2u * c + 1u];
    let d1 = desing(w0.x);
    let d2 = desing(w0.w);
    return Vars(vec4<f32>(w0.x, w0.w - w1.z, w0.y / d1, w0.z / d1), vec2<f32>(w1.x / d2, w1.y / d2));
}

// Barth-Jespersen factor per component for the edge increments inc[k] (see barth_jespersen).
fn bj4(phi: vec4<f32>, lo: vec4<f32>, hi: vec4<f32>, inc: array<vec4<f32>, 3>) -> vec4<f32> {
    var alpha = vec4<f32>(1.0);
    // #unroll
    for (var k = 0; k < 3; k = k + 1) {
        let d = inc[k];
        let bound = select(select(vec4<f32>(1.0), (lo - phi) / d, d < vec4<f32>(0.0)), (hi - phi) / d, d > vec4<f32>(0.0));
        alpha = min(alpha, bound);
    }
    return max(alpha, vec4<f32>(0.0));
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = linear_index(gid, nwg);
    if (i >= range.count) {
        return;
    }
    let c = range.first + i;
    let me = cell_vars(c);
    let nb = neighbors[c];
    var lo_a = me.a;
    var hi_a = me.a;
    var lo_b = me.b;
    var hi_b = me.b;
    var va: array<vec4<f32>, 3>;
    var vb: array<vec2<f32>, 3>;
    for (var k = 0; k < 3; k = k + 1) {
        let j = nb[k];
        va[k] = me.a;
        vb[k] = me.b;
        if (j == NO_ELEMENT) {
            continue;
        }
        let v = cell_vars(j);
        va[k] = v.a;
        vb[k] = v.b;
        lo_a = min(lo_a, v.a);
        hi_a = max(hi_a, v.a);
        lo_b = min(lo_b, v.b);
        hi_b = max(hi_b, v.b);
        let nn = neighbors[j];
        for (var m = 0; m < 3; m = m + 1) {
            if (nn[m] != NO_ELEMENT) {
                let u = cell_vars(nn[m]);
                lo_a = min(lo_a, u.a);
                hi_a = max(hi_a, u.a);
                lo_b = min(lo_b, u.b);
                hi_b = max(hi_b, u.b);
            }
        }
    }
    let r0 = recon[4u * c];
    let r1 = recon[4u * c + 1u];
    let r2 = recon[4u * c + 2u];
    let r3 = recon[4u * c + 3u];
    let w = array<vec2<f32>, 3>(r0.xy, r0.zw, r1.xy);
    let d = array<vec2<f32>, 3>(r2.xy, r2.zw, r3.xy);
    let grad_h = r1.zw;
    // Gradients: x and y parts of the 4 + 2 variables.
    var ax = vec4<f32>(0.0);
    var ay = vec4<f32>(0.0);
    var bx = vec2<f32>(0.0);
    var by = vec2<f32>(0.0);
    // #unroll
    for (var k = 0; k < 3; k = k + 1) {
        let da = va[k] - me.a;
        let db = vb[k] - me.b;
        ax = ax + w[k].x * da;
        ay = ay + w[k].y * da;
        bx = bx + w[k].x * db;
        by = by + w[k].y * db;
    }
    var inc_a: array<vec4<f32>, 3>;
    var inc_b: array<vec4<f32>, 3>;
    // #unroll
    for (var k = 0; k < 3; k = k + 1) {
        inc_a[k] = ax * d[k].x + ay * d[k].y;
        inc_b[k] = vec4<f32>(bx * d[k].x + by * d[k].y, 0.0, 0.0);
    }
    let alpha_a = bj4(me.a, lo_a, hi_a, inc_a);
    let alpha_b = bj4(vec4<f32>(me.b, 0.0, 0.0), vec4<f32>(lo_b, 0.0, 0.0), vec4<f32>(hi_b, 0.0, 0.0), inc_b).xy;
    ax = alpha_a * ax;
    ay = alpha_a * ay;
    bx = alpha_b * bx;
    by = alpha_b * by;
    var g_h2 = vec2<f32>(ax.y + grad_h.x, ay.y + grad_h.y);
    let h1 = me.a.x;
    let h2 = cells[2u * c].w;
    var flat1 = h1 < DRY_TOL;
    var flat2 = h2 < DRY_TOL;
    // #unroll
    for (var k = 0; k < 3; k = k + 1) {
        flat1 = flat1 || h1 + (ax.x * d[k].x + ay.x * d[k].y) < 0.0;
        flat2 = flat2 || h2 + (g_h2.x * d[k].x + g_h2.y * d[k].y) < 0.0;
    }
    if (flat1) {
        ax = vec4<f32>(0.0, ax.y, 0.0, 0.0);
        ay = vec4<f32>(0.0, ay.y, 0.0, 0.0);
    }
    if (flat2) {
        ax.y = -grad_h.x;
        ay.y = -grad_h.y;
        g_h2 = vec2<f32>(0.0);
        bx = vec2<f32>(0.0);
        by = vec2<f32>(0.0);
    }
    // #unroll
    for (var k = 0; k < 3; k = k + 1) {
        let ia = ax * d[k].x + ay * d[k].y;
        let ib = bx * d[k].x + by * d[k].y;
        let dh2 = g_h2.x * d[k].x + g_h2.y * d[k].y;
        let dh = grad_h.x * d[k].x + grad_h.y * d[k].y;
        deltas[6u * c + 2u * u32(k)] = vec4<f32>(ia.x, ia.z, ia.w, dh2);
        deltas[6u * c + 2u * u32(k) + 1u] = vec4<f32>(ib.x, ib.y, dh, ia.y);
    }
}
