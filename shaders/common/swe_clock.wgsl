// Shared by the two clock kernels (swe_time and swe_fused_clock), which declare `control`
// (read_write) and `counters`: the depth stop's record goes into the control block once, and
// a step's edge event counters into the run's totals.

// Copy the depth stop recorded by the last update (counters[4..8], common/swe_cell.wgsl) into
// the control block, once; from then on the clock takes no step and the host stops.
fn take_depth_stop() {
    if (control.stop_cell == NO_CELL && atomicLoad(&counters[4]) != NO_CELL) {
        control.stop_cell = atomicLoad(&counters[4]);
        control.stop_depth = from_ordered_bits(atomicLoad(&counters[5]));
        control.stop_step = atomicLoad(&counters[6]) / 2u;
        control.stop_t = bitcast<f32>(atomicLoad(&counters[7]));
    }
}

// Add a taken step's edge events (non-hyperbolic states, Roe -> IFCP fallbacks, clamped chi)
// to the run's totals and the largest per step.
fn count_step_events() {
    let nonhyp = atomicLoad(&counters[0]);
    let fallback = atomicLoad(&counters[1]);
    control.nonhyperbolic = control.nonhyperbolic + nonhyp;
    control.fallback = control.fallback + fallback;
    control.chi_clamped = control.chi_clamped + atomicLoad(&counters[2]);
    control.max_step_nonhyperbolic = max(control.max_step_nonhyperbolic, nonhyp);
    control.max_step_fallback = max(control.max_step_fallback, fallback);
}

// Clear the per-step counters (edge events and clipped depths, counters[0..4]) for the next step.
fn clear_step_events() {
    for (var k = 0; k < 4; k = k + 1) {
        atomicStore(&counters[k], 0u);
    }
}
