// #include "common/dispatch.wgsl"
// #include "common/swe_control.wgsl"
// #include "common/swe_cell.wgsl"

// Cell update (2): W_i -= dt / |V_i| * acc_i with dt from the GPU time kernel (no host round
// trip), then the depth stop (check_depth_stop: a depth far below 0 before clipping is recorded
// and no cell is updated after that launch), the dry-layer rules of spec section 10: a
// negative thickness is clipped to 0
// (counted: clipping breaks exact conservation) and a layer thinner than DRY_TOL loses its
// momentum; then friction, semi-implicit (interface drag, Manning on the lower layer; see
// src/solver/swe/friction.rs). Clears the accumulator for the next step.
// STAGE 0: forward Euler (order 1). Heun's SSP-RK2 (order 2): STAGE 1 keeps W^n in cells_old
// and writes W* ; STAGE 2 writes (W^n + W* - dt/|V| acc(W*)) / 2 (friction before averaging).
// CPU reference: CpuSolver::step / apply_update.

override DRY_TOL: f32 = 1.0e-4;
override GRAVITY: f32 = 9.81;
override DENSITY_RATIO: f32 = 0.5;
override STAGE: u32 = 0u;

@group(0) @binding(0) var<storage, read> control: Control;
@group(0) @binding(1) var<storage, read_write> cells: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read_write> acc: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read_write> counters: array<atomic<u32>, 8>;
@group(0) @binding(4) var<storage, read_write> cells_old: array<vec4<f32>>;
@group(1) @binding(0) var<uniform> range: ItemRange;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = linear_index(gid, nwg);
    if (i >= range.count) {
        return;
    }
    let c = range.first + i;
    let w0 = cells[2u * c];
    let w1 = cells[2u * c + 1u];
    let a0 = acc[2u * c];
    let a1 = acc[2u * c + 1u];
    acc[2u * c] = vec4<f32>(0.0);
    acc[2u * c + 1u] = vec4<f32>(0.0);
    let tag = stop_tag(control.steps);
    if (control.dt <= 0.0 || depth_stopped(tag)) {
        return;
    }
    let s = control.dt / w1.w;
    var n0 = w0 - s * a0;
    var n1 = vec4<f32>(w1.xy - s * a1.xy, w1.zw);
    check_depth_stop(n0, c, tag, control.t);
    var clipped = dry_rules(&n0, &n1);
    friction(&n0, &n1, control.dt);
    if (STAGE == 1u) {
        cells_old[2u * c] = w0;
        cells_old[2u * c + 1u] = w1;
    } else if (STAGE == 2u) {
        n0 = 0.5 * (cells_old[2u * c] + n0);
        n1 = vec4<f32>(0.5 * (cells_old[2u * c + 1u].xy + n1.xy), n1.zw);
        clipped = clipped + dry_rules(&n0, &n1);
    }
    if (clipped != 0u) {
        atomicAdd(&counters[3], clipped);
    }
    cells[2u * c] = n0;
    cells[2u * c + 1u] = n1;
}
