// #include "common/dispatch.wgsl"
// #include "common/dg_rk.wgsl"

// One SSP Runge-Kutta stage (common/dg_rk.wgsl), one thread per DOF j of a register, rhs read
// from memory (the colored and atomic layouts; the gathered layout applies the stage inside
// dg_volume). dt = 0 (the run reached t_end) leaves all registers untouched.

@group(0) @binding(0) var<storage, read_write> regs: array<f32>;
@group(0) @binding(1) var<storage, read> rhs: array<f32>;
@group(0) @binding(2) var<storage, read> clock: array<f32>;
@group(0) @binding(3) var<storage, read> stages: array<Stage>;
// Low words of R0..R3 (same layout as regs).
@group(0) @binding(4) var<storage, read_write> regs_lo: array<f32>;
// count: DOFs per register; color: stage index.
@group(1) @binding(0) var<uniform> range: ItemRange;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let j = linear_index(gid, nwg);
    let n = range.count;
    let dt = clock[1];
    if (j >= n || dt == 0.0) {
        return;
    }
    stage_apply(stages[range.color], dt, rhs[j], j, n);
}
