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

// The jump U_ghost - U at boundary edge e's node of whole-edge parameter tq at time t, where
// the inside state U = u0 + du is the element's mean plus its higher modes' trace (deviation
// form, dg_euler.wgsl: the ghost less the mean first, so the jump is exact where the ghost is
// close to the state): a wall reverses the normal momentum, (0, -2 (m . n) n, 0); an inflow
// edge takes its constant state, an exact edge the case function at x = m + (tq - 1/2) L tau;
// an outflow edge copies U (no jump).
fn boundary_jump(u0: vec4<f32>, du: vec4<f32>, e: DgEdge, tq: f32, t: f32) -> vec4<f32> {
    let kind = (e.info >> 4u) & 7u;
    let n = vec2<f32>(e.nx, e.ny);
    if (kind == EDGE_WALL) {
        let mn = 2.0 * dot((u0 + du).yz, n);
        return vec4<f32>(0.0, -mn * n.x, -mn * n.y, 0.0);
    }
    if (kind == EDGE_INFLOW) {
        return (case_data[2u + (e.info >> 9u)] - u0) - du;
    }
    if (kind == EDGE_EXACT) {
        let x = vec2<f32>(e.mx, e.my) + (tq - 0.5) * e.length * vec2<f32>(-e.ny, e.nx);
        return (case_state(x, t, case_data[0], case_data[1]) - u0) - du;
    }
    return vec4<f32>(0.0);
}
