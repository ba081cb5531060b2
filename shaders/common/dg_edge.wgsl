// The DG edge record and the state outside a boundary edge, shared by the colored surface
// kernel (dg_surface) and the gathered flux kernel (dg_flux). A kernel that includes this file
// declares `case_data` (the case function's parameters at [0], [1], inflow state s at [2 + s]).

struct DgEdge {
    left: u32,
    right: u32,
    info: u32,   // left_local | right_local << 2 | kind << 4 | right_half << 7 | state << 9
    nx: f32,
    ny: f32,
    length: f32,
    mx: f32,
    my: f32,
}

// The ghost state of boundary edge e at the node of whole-edge parameter tq at time t, from
// the inside state u: a wall mirrors the momentum, an inflow edge takes its constant state, an
// exact edge the case function at x = m + (tq - 1/2) L tau, an outflow edge copies u.
fn boundary_ghost(u: vec4<f32>, e: DgEdge, tq: f32, t: f32) -> vec4<f32> {
    let kind = (e.info >> 4u) & 7u;
    if (kind == EDGE_WALL) {
        return wall_ghost(u, vec2<f32>(e.nx, e.ny));
    }
    if (kind == EDGE_INFLOW) {
        return case_data[2u + (e.info >> 9u)];
    }
    if (kind == EDGE_EXACT) {
        let x = vec2<f32>(e.mx, e.my) + (tq - 0.5) * e.length * vec2<f32>(-e.ny, e.nx);
        return case_state(x, t, case_data[0], case_data[1]);
    }
    return u;
}
