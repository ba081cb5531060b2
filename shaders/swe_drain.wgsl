// #include "common/dispatch.wgsl"
// #include "common/swe_control.wgsl"
// #include "common/swe_cell.wgsl"
// #include "common/swe_drain.wgsl"

// Second order, the edge-scatter update (after swe_time set this stage's dt): the draining
// factor of every cell (common/swe_drain.wgsl) from its outflow per layer (summed by
// swe_edge_flux2, cleared here) and its depth h; a cell that drains (theta < 1) writes its
// record and drain_flag = the launch's tag (2 step + 1 for Heun's second stage, as stop_tag),
// for swe_drain_fix. CPU reference: CpuSolver::accumulate in src/solver/swe/cpu.rs.

// Declared for common/swe_cell.wgsl (whose friction and dry rules are not used here).
override DRY_TOL: f32 = 1.0e-4;
override GRAVITY: f32 = 9.81;
override DENSITY_RATIO: f32 = 0.5;
override STAGE: u32 = 1u;

@group(0) @binding(0) var<storage, read> control: Control;
@group(0) @binding(1) var<storage, read> cells: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read> acc: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read_write> outflow: array<vec2<f32>>;
@group(0) @binding(4) var<storage, read_write> drain: array<vec4<f32>>;
@group(0) @binding(5) var<storage, read_write> drain_flag: array<atomic<u32>, 1>;
@group(0) @binding(6) var<storage, read_write> counters: array<atomic<u32>, 8>;
@group(1) @binding(0) var<uniform> range: ItemRange;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = linear_index(gid, nwg);
    if (i >= range.count) {
        return;
    }
    let c = range.first + i;
    let out = outflow[c];
    outflow[c] = vec2<f32>(0.0);
    let dt = control.dt;
    if (dt <= 0.0 || all(out == vec2<f32>(0.0))) {
        return;
    }
    let w0 = cells[2u * c];
    let s = dt / cells[2u * c + 1u].w;
    let theta = vec2<f32>(drain_factor(w0.x, s * out.x), drain_factor(w0.w, s * out.y));
    if (any(theta < vec2<f32>(1.0))) {
        let tag = stop_tag(control.steps);
        drain[c] = drain_record(tag, dt, theta);
        atomicStore(&drain_flag[0], tag);
        if (!depth_stopped(tag)) {
            check_depth_stop(w0 - s * acc[2u * c], c, tag, control.t);
        }
    }
}
