// #include "common/dispatch.wgsl"
// #include "common/dg_euler.wgsl"
// #include "common/dg_tables.wgsl"

// Per-element CFL limit (Operator::cfl_dt before the min): h_i / ((2p + 1)(|v_i| + c_i)) from
// the element mean of register 0; the min-reduction and dg_time turn it into dt. Slots past a
// device count (an adapted mesh, launched over all NE slots) get BIG, so the minimum over the
// slots is the elements'.

override ORDER: f32 = 1.0;
const SQRT2: f32 = 1.41421356237;
const BIG: f32 = 3.0e38;

@group(0) @binding(0) var<storage, read> regs: array<f32>;
@group(0) @binding(1) var<storage, read> min_height: array<f32>;
@group(0) @binding(2) var<storage, read_write> local_dt: array<f32>;
// Launch records (dispatch.wgsl): read when range.count is DEVICE_COUNT (an adapted mesh).
@group(0) @binding(3) var<storage, read> launches: array<u32>;
@group(1) @binding(0) var<uniform> range: ItemRange;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = linear_index(gid, nwg);
    var count = range.count;
    if (count == DEVICE_COUNT) {
        count = launches[range.first + 1u];
    }
    if (i >= count) {
        if (i < range.capacity) {
            local_dt[i] = BIG;
        }
        return;
    }
    let u = vec4<f32>(regs[dof(0u, 0u, 0u, i)], regs[dof(0u, 1u, 0u, i)],
                      regs[dof(0u, 2u, 0u, i)], regs[dof(0u, 3u, 0u, i)]) * SQRT2;
    let speed = length(u.yz) / u.x + sound_speed(u);
    local_dt[i] = min_height[i] / ((2.0 * ORDER + 1.0) * speed);
}
