// #include "common/dispatch.wgsl"
// #include "common/swe_control.wgsl"
// #include "common/swe_flux.wgsl"
// #include "common/swe_cell.wgsl"
// #include "common/swe_muscl.wgsl"
// #include "common/swe_drain.wgsl"
// #include "common/swe_share.wgsl"

// One fused first-order step, cell-centred: each thread owns one cell, computes the
// fluctuations of its three edges (each interior edge is computed by both its cells, as in
// swe_cell_gather), updates the cell with this step's dt (fused_dt: the CFL step of the
// previous pass, clamped to t_end) as swe_update does (dry-layer rules, friction) and writes it
// to the other state buffer (the state is read once and written once per step), then computes
// the local CFL step (3) from the speeds of this pass,
//   dt_i = 2 CFL |V_i| / sum_j |G_ij| lam_ij   (BIG where nothing moves, -1 where the new state
//   or the speed sum is NaN/Inf),
// and folds its workgroup's minimum into dt_min with one atomicMin (ordered_bits).
// swe_fused_clock then turns that minimum into the next step's dt: step n runs with the speeds
// of W^{n-1} (the paper's lagged dt; the first step with those of W^0, from a pass with dt = 0).
// Order 2 (Heun, after swe_reconstruct wrote the increments of the stage's input state):
// STAGE 1 reads W^n from `cells` and writes W* to `cells_next` (W^n stays where it is), with
// the edge states reconstructed and the in-cell terms as in swe_edge_flux2, and gives the
// local CFL step; STAGE 2 reads W* from `cells`, updates it with control.dt (set by
// swe_fused_clock between the stages) and averages with the cell's own W^n, read from
// `cells_old` (the buffer stage 1 read): (W^n + W* - dt/|V| acc(W*)) / 2 into `cells_next`,
// as swe_update STAGE 2 does; it gives no CFL step. STAGE 0: order 1 (edge_slots, deltas,
// cells_old and drain unread).
// Order 2 keeps every layer depth >= 0 with its mass exact by draining (common/swe_drain.wgsl, common/swe_share.wgsl):
// each stage is this kernel twice. DRAIN 0, the pass: a cell whose outflow would take more
// water than it has writes its drain record (theta < 1) and dt_min[2] = the launch's tag, and
// leaves its output to the fix; the others are updated as above. DRAIN 1, the fix (only
// where dt_min[2] holds this launch's tag; one load per thread otherwise): a cell that drains
// or has a draining neighbour is updated again with every edge's layer rows scaled by theta
// of the cell its mass flux leaves (no events counted, no CFL step).
// The depth stop (check_depth_stop) is checked on every updated cell before clipping (at
// order 2 before draining: the pass checks the unscaled update of a draining cell), with
// the step and the time the step reaches as swe_fused_clock will count them; once it fired,
// passes take no step (dt = 0: the state is copied).
// CPU reference: CpuSolver::step with lagged_dt (src/solver/swe/cpu.rs).

override CFL: f32 = 0.9;
override STAGE: u32 = 0u;
override DRAIN: u32 = 0u;
const BIG: f32 = 3.0e38;

@group(0) @binding(0) var<storage, read> control: Control;
@group(0) @binding(1) var<storage, read> edges: array<SweEdge>;
@group(0) @binding(2) var<storage, read> cell_edges: array<vec4<u32>>;
@group(0) @binding(3) var<storage, read> edge_slots: array<vec2<u32>>;
@group(0) @binding(4) var<storage, read> deltas: array<vec4<f32>>;
@group(0) @binding(5) var<storage, read> cells: array<vec4<f32>>;
@group(0) @binding(6) var<storage, read_write> cells_next: array<vec4<f32>>;
@group(0) @binding(7) var<storage, read_write> counters: array<atomic<u32>, 8>;
// dt_min[0]: the pass's minimum CFL step (ordered_bits); dt_min[1] != 0: the last step was
// rejected (swe_fused_clock), this pass writes nothing (its output buffer holds the state);
// dt_min[2]: the tag of the last launch in which a cell drained (order 2).
@group(0) @binding(8) var<storage, read_write> dt_min: array<atomic<u32>, 3>;
@group(0) @binding(9) var<storage, read> cells_old: array<vec4<f32>>;
@group(0) @binding(10) var<storage, read_write> drain: array<vec4<f32>>;
@group(1) @binding(0) var<uniform> range: ItemRange;

var<workgroup> partial: array<f32, WORKGROUP_SIZE>;

// Step cell c with dt (launch `tag`, reaching time t_after); returns its local CFL step.
fn step_cell(c: u32, dt: f32, tag: u32, t_after: f32) -> f32 {
    let w0 = cells[2u * c];
    let w1 = cells[2u * c + 1u];
    let slots = cell_edges[c];
    var mine = vec2<f32>(1.0);
    if (DRAIN == 1u) {
        mine = theta_of(c, tag, dt);
    }
    var sum0 = vec4<f32>(0.0);
    var sum1 = vec4<f32>(0.0);
    var outflow = vec2<f32>(0.0);
    for (var k = 0; k < 3; k = k + 1) {
        let s = slots[k];
        if (s != NO_ELEMENT) {
            let sh = edge_share(c, s, w0, w1);
            let len = sh.length;
            var scale = vec2<f32>(1.0);
            if (DRAIN == 1u) {
                scale = drain_scale(sh, mine, theta_of(sh.other, tag, dt));
            } else if (sh.left) {
                if ((sh.flags & FLAG_NONHYPERBOLIC) != 0u) {
                    atomicAdd(&counters[0], 1u);
                }
                if ((sh.flags & FLAG_FALLBACK) != 0u) {
                    atomicAdd(&counters[1], 1u);
                }
                if ((sh.flags & FLAG_CHI_CLAMPED) != 0u) {
                    atomicAdd(&counters[2], 1u);
                }
            }
            outflow = outflow + len * share_outflow(sh);
            let fl0 = sh.fl0 * vec4<f32>(scale.x, scale.x, scale.x, scale.y);
            sum0 = sum0 + len * (fl0 + vec4<f32>(0.0, sh.own.xy, 0.0));
            sum1 = sum1 + len * vec4<f32>(scale.y * sh.fl1 + sh.own.zw, sh.lam, 0.0);
        }
    }
    // The pass: a draining cell is left to the fix.
    var drains = false;
    if (STAGE != 0u && DRAIN == 0u && dt > 0.0) {
        let s = dt / w1.w;
        let theta = vec2<f32>(drain_factor(w0.x, s * outflow.x), drain_factor(w0.w, s * outflow.y));
        if (any(theta < vec2<f32>(1.0))) {
            drain[c] = drain_record(tag, dt, theta);
            atomicStore(&dt_min[2], tag);
            drains = true;
            // The depth stop sees the depth before draining, as before clipping.
            check_depth_stop(w0 - s * sum0, c, tag, t_after);
        }
    }
    var n0 = w0;
    var n1 = w1;
    if (STAGE == 2u) {
        // No step: W^n is copied.
        n0 = cells_old[2u * c];
        n1 = cells_old[2u * c + 1u];
    }
    if (dt > 0.0 && !drains) {
        let s = dt / w1.w;
        n0 = w0 - s * sum0;
        n1 = vec4<f32>(w1.xy - s * sum1.xy, w1.zw);
        check_depth_stop(n0, c, tag, t_after);
        var clipped = dry_rules(&n0, &n1);
        friction(&n0, &n1, dt);
        if (STAGE == 2u) {
            let old0 = cells_old[2u * c];
            let old1 = cells_old[2u * c + 1u];
            n0 = 0.5 * (old0 + n0);
            n1 = vec4<f32>(0.5 * (old1.xy + n1.xy), n1.zw);
            clipped = clipped + dry_rules(&n0, &n1);
        }
        if (clipped != 0u) {
            atomicAdd(&counters[3], clipped);
        }
    }
    if (!drains) {
        cells_next[2u * c] = n0;
        cells_next[2u * c + 1u] = n1;
    }
    let speeds = sum1.z;
    let inf = vec4<u32>(0x7f800000u);
    let finite = all((bitcast<vec4<u32>>(n0) & inf) != inf)
        && all((bitcast<vec4<u32>>(vec4<f32>(n1.xy, speeds, 0.0)) & inf) != inf);
    return select(-1.0, select(BIG, 2.0 * CFL * w1.w / speeds, speeds > 0.0), finite);
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(
    @builtin(global_invocation_id) gid: vec3<u32>,
    @builtin(local_invocation_id) lid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
) {
    let i = linear_index(gid, nwg);
    var local_dt = BIG;
    let live = i < range.count && atomicLoad(&dt_min[1]) == 0u;
    var dt = select(fused_dt(control), control.dt, STAGE == 2u);
    // Stage 2 runs after the clock counted the step.
    var tag = stop_tag(control.steps + 1u);
    var t_after = fused_t_after(control, dt);
    if (STAGE == 2u) {
        tag = stop_tag(control.steps);
        t_after = control.t;
    }
    // Fired in an earlier stage, or in an earlier step (the clock did not count it).
    if (depth_stopped(tag) || control.stop_cell != NO_CELL) {
        dt = 0.0;
    }
    if (DRAIN == 1u) {
        let c = range.first + i;
        if (live && atomicLoad(&dt_min[2]) == tag && needs_fix(c, tag, dt)) {
            _ = step_cell(c, dt, tag, t_after);
        }
        return;
    }
    if (live) {
        local_dt = step_cell(range.first + i, dt, tag, t_after);
    }
    partial[lid.x] = local_dt;
    workgroupBarrier();
    for (var stride = WORKGROUP_SIZE / 2u; stride > 0u; stride = stride / 2u) {
        if (lid.x < stride) {
            partial[lid.x] = min(partial[lid.x], partial[lid.x + stride]);
        }
        workgroupBarrier();
    }
    if (lid.x == 0u && STAGE != 2u) {
        let word = ordered_bits(partial[0]);
        // Most workgroups find a smaller minimum already there: a load instead of an atomic.
        if (word < atomicLoad(&dt_min[0])) {
            atomicMin(&dt_min[0], word);
        }
    }
}
