// Two-layer shallow water, the per-cell rules after an update W -= dt/|V| acc (shared by
// swe_update and swe_fused_step): the depth stop, the dry-layer rules of spec section 10 and
// friction. The including kernel declares DRY_TOL, GRAVITY and DENSITY_RATIO (directly or
// through common/swe_flux.wgsl), STAGE and `counters` (8 atomic words; common/swe_control.wgsl
// before this file). CPU reference: CpuSolver::apply_update and Friction::apply.

override MANNING: f32 = 0.0;
override INTERFACE_DRAG: f32 = 0.0;
// The depth stop, -0.5 H_ref (super::depth_stop_level): a layer depth below it before draining
// and clipping is a blow-up, not a wet/dry front or a collision (those undershoot by
// 0.12 H_ref at most).
override DEPTH_STOP: f32 = -3.0e38;

// The launch that updates cells: 2 step + 1 for Heun's second stage (STAGE 2), 2 step
// otherwise, so that a record (counters[6]) from an earlier launch is smaller.
fn stop_tag(step: u32) -> u32 {
    return 2u * step + select(0u, 1u, STAGE == 2u);
}

// Record a cell whose updated, not yet clipped, state w0 has a layer depth below DEPTH_STOP:
// counters[4] the lowest such cell, [5] the lowest depth (ordered_bits), [6] the launch
// (stop_tag), [7] the time the step reaches (the same for every cell of a launch). 2 compares
// per cell when nothing fires.
fn check_depth_stop(w0: vec4<f32>, c: u32, tag: u32, t: f32) {
    let lowest = min(w0.x, w0.w);
    if (lowest < DEPTH_STOP) {
        atomicMax(&counters[6], tag);
        atomicMin(&counters[4], c);
        atomicMin(&counters[5], ordered_bits(lowest));
        atomicStore(&counters[7], bitcast<u32>(t));
    }
}

// Whether the depth stop fired in an earlier launch than `tag` (one word: cells of the same
// launch may fire while this one runs): then no cell is updated any more.
fn depth_stopped(tag: u32) -> bool {
    let fired = atomicLoad(&counters[6]);
    return fired != 0u && fired < tag;
}

// Thin films: the momentum of a layer thinner than FILM_DEPTH = eps is desingularised,
// q <- h u with u = sqrt(2) h q / sqrt(h^4 + max(h^4, eps^4)) (spec section 10 eq. (23), the
// Kurganov-Petrova form), i.e. q is scaled by sqrt(2) h^2 / sqrt(h^4 + eps^4) < 1 (exactly 1 at
// h = eps; thicker layers are left alone).
override FILM_DEPTH: f32 = 1.0e-2;

fn film_factor(h: f32) -> f32 {
    let h2 = h * h;
    let e2 = FILM_DEPTH * FILM_DEPTH;
    return 1.4142135 * h2 / sqrt(h2 * h2 + e2 * e2);
}

// Clip negative depths (returns how many), zero the momentum of dry layers and desingularise
// that of thin films.
fn dry_rules(w0: ptr<function, vec4<f32>>, w1: ptr<function, vec4<f32>>) -> u32 {
    var clipped = 0u;
    if ((*w0).x < 0.0) {
        (*w0).x = 0.0;
        clipped = clipped + 1u;
    }
    if ((*w0).x < DRY_TOL) {
        (*w0).y = 0.0;
        (*w0).z = 0.0;
    } else if ((*w0).x < FILM_DEPTH) {
        let f = film_factor((*w0).x);
        (*w0).y = f * (*w0).y;
        (*w0).z = f * (*w0).z;
    }
    if ((*w0).w < 0.0) {
        (*w0).w = 0.0;
        clipped = clipped + 1u;
    }
    if ((*w0).w < DRY_TOL) {
        (*w1).x = 0.0;
        (*w1).y = 0.0;
    } else if ((*w0).w < FILM_DEPTH) {
        let f = film_factor((*w0).w);
        (*w1).x = f * (*w1).x;
        (*w1).y = f * (*w1).y;
    }
    return clipped;
}

// Interface drag then Manning bottom friction over dt, both implicit with |u| frozen.
fn friction(w0: ptr<function, vec4<f32>>, w1: ptr<function, vec4<f32>>, dt: f32) {
    let h1 = (*w0).x;
    let h2 = (*w0).w;
    if (INTERFACE_DRAG > 0.0 && h1 >= DRY_TOL && h2 >= DRY_TOL) {
        let du = (*w0).yz / h1 - (*w1).xy / h2;
        let speed = sqrt(du.x * du.x + du.y * du.y);
        let k1 = dt * INTERFACE_DRAG * speed / h1;
        let k2 = dt * DENSITY_RATIO * INTERFACE_DRAG * speed / h2;
        let dn = du * (1.0 / (1.0 + k1 + k2));
        (*w0) = vec4<f32>(h1, (*w0).yz - h1 * k1 * dn, h2);
        (*w1) = vec4<f32>((*w1).xy + h2 * k2 * dn, (*w1).zw);
    }
    if (MANNING > 0.0 && h2 >= DRY_TOL) {
        let q = (*w1).xy;
        let speed = sqrt(q.x * q.x + q.y * q.y) / h2;
        let k = dt * GRAVITY * MANNING * MANNING * speed / pow(h2, 4.0 / 3.0);
        (*w1) = vec4<f32>(q / (1.0 + k), (*w1).zw);
    }
}
