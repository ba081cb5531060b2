// #include "common/dispatch.wgsl"

// One SSP Runge-Kutta stage (rk::step), one thread per DOF j of a register:
//   R_dst[j] = sum_r a_r R_r[j] + b dt rhs[j]   (and optionally R_dst2 with a2, b2).
// Each thread reads every register at j before writing, so in-place stages are safe. dt = 0
// (the run reached t_end) leaves all registers untouched.

struct Stage {
    a: vec4<f32>,
    a2: vec4<f32>,
    b: f32,
    b2: f32,
    dst: u32,
    dst2: u32,   // 0xffffffff: none
}

@group(0) @binding(0) var<storage, read_write> regs: array<f32>;
@group(0) @binding(1) var<storage, read> rhs: array<f32>;
@group(0) @binding(2) var<storage, read> clock: array<f32>;
@group(0) @binding(3) var<storage, read> stages: array<Stage>;
// count: DOFs per register; color: stage index.
@group(1) @binding(0) var<uniform> range: ItemRange;

fn combine(a: vec4<f32>, b: f32, dt: f32, j: u32, n: u32) -> f32 {
    var v = b * dt * rhs[j];
    // #unroll
    for (var r = 0u; r < 4u; r = r + 1u) {
        if (a[r] != 0.0) {
            v = v + a[r] * regs[r * n + j];
        }
    }
    return v;
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let j = linear_index(gid, nwg);
    let n = range.count;
    let dt = clock[1];
    if (j >= n || dt == 0.0) {
        return;
    }
    let s = stages[range.color];
    let v = combine(s.a, s.b, dt, j, n);
    if (s.dst2 != 0xffffffffu) {
        regs[s.dst2 * n + j] = combine(s.a2, s.b2, dt, j, n);
    }
    regs[s.dst * n + j] = v;
}
