// Second order: one cell's share of an edge, scaled by the draining factors
// (common/swe_drain.wgsl) where a cell drains (shared by swe_fused_step and swe_drain_fix; the
// including kernel declares STAGE, `edges`, `cell_edges`, `edge_slots`, `deltas`, `cells` and
// `drain`, and includes common/swe_flux.wgsl, common/swe_muscl.wgsl and common/swe_drain.wgsl
// first). CPU reference: edge_parts2 in src/solver/swe/muscl.rs, CpuSolver::accumulate in
// src/solver/swe/cpu.rs.

// Cell c's (state w0, w1) share of edge s: the edge's length, the fluctuation rows (h1 q1x q1y
// h2 | q2x q2y) of its side, the in-cell terms (q1x q1y q2x q2y; order 2), the CFL speed and
// event flags, the edge's mass fluxes out of its left cell (h1, h2 rows) and the cell across it
// (NO_ELEMENT on the boundary).
struct EdgeShare {
    length: f32,
    fl0: vec4<f32>,
    fl1: vec2<f32>,
    own: vec4<f32>,
    lam: f32,
    flags: u32,
    g: vec2<f32>,
    left: bool,
    other: u32,
}

fn edge_share(c: u32, s: u32, w0: vec4<f32>, w1: vec4<f32>) -> EdgeShare {
    let e = edges[s];
    let left = e.left == c;
    var wl0 = w0;
    var wl1 = w1;
    var wr0 = w0;
    var wr1 = w1;
    var other = NO_ELEMENT;
    if (e.kind == KIND_INTERIOR) {
        other = select(e.left, e.right, left);
        let o0 = cells[2u * other];
        let o1 = cells[2u * other + 1u];
        if (left) {
            wr0 = o0;
            wr1 = o1;
        } else {
            wl0 = o0;
            wl1 = o1;
        }
    }
    var out: EdgeOut;
    var own = vec4<f32>(0.0);
    if (STAGE == 0u) {
        out = edge_contribution(wl0, wl1, wr0, wr1, e.kind, e.nx, e.ny, e.value);
    } else {
        let sl = edge_slots[s];
        let dl0 = deltas[sl.x];
        let dl1 = deltas[sl.x + 1u];
        var dr0 = dl0;
        var dr1 = dl1;
        let el = state_at_edge(wl0, wl1, dl0, dl1);
        var er = el;
        if (e.kind == KIND_INTERIOR) {
            dr0 = deltas[sl.y];
            dr1 = deltas[sl.y + 1u];
            er = state_at_edge(wr0, wr1, dr0, dr1);
        }
        out = edge_contribution(el.w0, el.w1, er.w0, er.w1, e.kind, e.nx, e.ny, e.value);
        if (left) {
            own = in_cell_terms(wl0, wl1, dl0, dl1, e.nx, e.ny);
        } else {
            own = in_cell_terms(wr0, wr1, dr0, dr1, -e.nx, -e.ny);
        }
    }
    let fl0 = select(out.right0, out.left0, left);
    let fl1 = select(out.right1, out.left1, left);
    let g = vec2<f32>(out.left0.x, out.left0.w);
    return EdgeShare(e.length, fl0, fl1, own, out.lam, out.flags, g, left, other);
}

// The scale of the share's layer rows: theta of the cell each layer's mass flux leaves
// (`mine` for cell c, `theirs` for the cell across; 1 for inflow from the boundary).
fn drain_scale(sh: EdgeShare, mine: vec2<f32>, theirs: vec2<f32>) -> vec2<f32> {
    let from_left = select(theirs, mine, sh.left);
    let from_right = select(mine, theirs, sh.left);
    return select(select(vec2<f32>(1.0), from_right, sh.g < vec2<f32>(0.0)), from_left, sh.g > vec2<f32>(0.0));
}

// The mass leaving cell c through the share's edge per unit length (h1, h2), >= 0.
fn share_outflow(sh: EdgeShare) -> vec2<f32> {
    return max(select(-sh.g, sh.g, sh.left), vec2<f32>(0.0));
}

// (theta1, theta2) of cell c in the launch of tag and dt (1 unless it drains; 1 for
// NO_ELEMENT).
fn theta_of(c: u32, tag: u32, dt: f32) -> vec2<f32> {
    if (c == NO_ELEMENT) {
        return vec2<f32>(1.0);
    }
    return drain_theta(drain[c], tag, dt);
}

// Whether cell c or a neighbour drains in the launch of tag and dt.
fn needs_fix(c: u32, tag: u32, dt: f32) -> bool {
    var any_drains = any(theta_of(c, tag, dt) < vec2<f32>(1.0));
    let slots = cell_edges[c];
    for (var k = 0; k < 3; k = k + 1) {
        let s = slots[k];
        if (s != NO_ELEMENT) {
            let e = edges[s];
            if (e.kind == KIND_INTERIOR) {
                let other = select(e.left, e.right, e.left == c);
                any_drains = any_drains || any(theta_of(other, tag, dt) < vec2<f32>(1.0));
            }
        }
    }
    return any_drains;
}
