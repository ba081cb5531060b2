// #include "common/dispatch.wgsl"
// #include "common/swe_control.wgsl"

// Cell update (2): W_i -= dt / |V_i| * acc_i with dt from the GPU time kernel (no host round
// trip), then the dry-layer rules of spec section 10: a negative thickness is clipped to 0
// (counted: clipping breaks exact conservation) and a layer thinner than DRY_TOL loses its
// momentum. Clears the accumulator for the next step. CPU reference: CpuSolver::step.

override DRY_TOL: f32 = 1.0e-4;

@group(0) @binding(0) var<storage, read> control: Control;
@group(0) @binding(1) var<storage, read_write> cells: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read_write> acc: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read_write> counters: array<atomic<u32>, 8>;
@group(1) @binding(0) var<uniform> range: ItemRange;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = linear_index(gid, nwg);
    if (i >= range.count) {
        return;
    }
    let c = range.first + i;
    var w0 = cells[2u * c];
    var w1 = cells[2u * c + 1u];
    let a0 = acc[2u * c];
    let a1 = acc[2u * c + 1u];
    acc[2u * c] = vec4<f32>(0.0);
    acc[2u * c + 1u] = vec4<f32>(0.0);
    if (control.dt <= 0.0) {
        return;
    }
    let s = control.dt / w1.w;
    w0 = w0 - s * a0;
    w1 = vec4<f32>(w1.xy - s * a1.xy, w1.zw);
    var clipped = 0u;
    if (w0.x < 0.0) {
        w0.x = 0.0;
        clipped = clipped + 1u;
    }
    if (w0.x < DRY_TOL) {
        w0.y = 0.0;
        w0.z = 0.0;
    }
    if (w0.w < 0.0) {
        w0.w = 0.0;
        clipped = clipped + 1u;
    }
    if (w0.w < DRY_TOL) {
        w1.x = 0.0;
        w1.y = 0.0;
    }
    if (clipped != 0u) {
        atomicAdd(&counters[3], clipped);
    }
    cells[2u * c] = w0;
    cells[2u * c + 1u] = w1;
}
