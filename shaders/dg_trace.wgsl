// #include "common/dispatch.wgsl"
// #include "common/dg_tables.wgsl"

// DG traces of the gathered surface integral (Operator::traces), one thread per element: the
// state of element i at the NQE Gauss nodes of each of its sides s, in the side's own
// orientation,
//   trace[side_slot(i, s NQE + q)] = sum_{k >= 1} c_k(i) phi_k(x_{s,q}),
// its deviation from the mean c_0 phi_0 (deviation form, dg_euler: dg_flux adds the means),
// in the side-major layout of side_slot (the workgroup stages each side and writes it as one
// span, so reads and writes are coalesced here), and dg_flux reads states instead of
// gathering every coefficient of both elements per edge. It also copies the
// mean coefficient c_0 as hi and lo words next to each other (means[2i], means[2i + 1]), so
// dg_flux reads one element's mean in one 32-byte sector instead of four, and the jump of the
// means across an edge keeps the lo words: (c_0R - c_0L) + (lo_R - lo_L) (an f32 jump of the hi
// words alone has an absolute error ~6e-8 that acts like a forcing of size lambda 6e-8 / h
// on every element mean, the p = 3 f32 floor of issue 13).

@group(0) @binding(0) var<storage, read> regs: array<f32>;
@group(0) @binding(1) var<storage, read> tables: array<f32>;
@group(0) @binding(2) var<storage, read_write> traces: array<vec4<f32>>;
// Low words of R0..R3 (same layout as regs).
@group(0) @binding(3) var<storage, read> regs_lo: array<f32>;
// c_0 hi and lo of element i at 2i and 2i + 1.
@group(0) @binding(4) var<storage, read_write> means: array<vec4<f32>>;
// Launch records (dispatch.wgsl): read when range.count is DEVICE_COUNT (an adapted mesh).
@group(0) @binding(5) var<storage, read> launches: array<u32>;
// first/count: the elements; pad: register.
@group(1) @binding(0) var<uniform> range: ItemRange;

// The element count, read once for the workgroup (its barriers need a uniform one).
var<workgroup> element_count: u32;

// One side's (or the means') values of the workgroup's elements, staged so that the workgroup
// writes them as one contiguous span: in the side-major layout (side_slot) a thread's NQE
// values of a side are neighbours, so a warp's stores straight from registers would each cover
// every other 16 bytes of a sector (they made this kernel 1.3-1.5x slower on the H100).
var<workgroup> staged: array<vec4<f32>, WORKGROUP_SIZE * MAX_NQE>;

// Write staged[0 .. per_thread * live) to out[base ..], per_thread values per live element,
// a warp's stores consecutive. Every thread of the workgroup calls it (it has barriers).
fn write_staged(lid: u32, live: u32, per_thread: u32, base: u32, means_out: bool) {
    workgroupBarrier();
    let span = live * per_thread;
    for (var k = 0u; k < per_thread; k = k + 1u) {
        let o = lid + k * WORKGROUP_SIZE;
        if (o < span) {
            if (means_out) {
                means[base + o] = staged[o];
            } else {
                traces[base + o] = staged[o];
            }
        }
    }
    workgroupBarrier();
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(
    @builtin(local_invocation_id) lid: vec3<u32>,
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
) {
    let first = (wid.x + wid.y * nwg.x) * WORKGROUP_SIZE;
    if (lid.x == 0u) {
        element_count = range.count;
        if (range.count == DEVICE_COUNT) {
            element_count = launches[range.first + 1u];
        }
    }
    let count = workgroupUniformLoad(&element_count);
    if (first >= count) {
        return;
    }
    let live = min(count - first, WORKGROUP_SIZE);
    let i = first + lid.x;
    let reg = range.pad;
    // 3 MAX_NQE states.
    var u: array<vec4<f32>, 15>;
    // #unroll
    for (var j = 0u; j < 3u * NQE; j = j + 1u) {
        u[j] = vec4<f32>(0.0);
    }
    if (lid.x < live) {
        staged[2u * lid.x] = vec4<f32>(regs[dof(reg, 0u, 0u, i)], regs[dof(reg, 1u, 0u, i)],
                                       regs[dof(reg, 2u, 0u, i)], regs[dof(reg, 3u, 0u, i)]);
        staged[2u * lid.x + 1u] = vec4<f32>(regs_lo[dof(reg, 0u, 0u, i)],
                                            regs_lo[dof(reg, 1u, 0u, i)],
                                            regs_lo[dof(reg, 2u, 0u, i)],
                                            regs_lo[dof(reg, 3u, 0u, i)]);
        // #unroll
        for (var k = 1u; k < NP; k = k + 1u) {
            let c = vec4<f32>(regs[dof(reg, 0u, k, i)], regs[dof(reg, 1u, k, i)],
                              regs[dof(reg, 2u, k, i)], regs[dof(reg, 3u, k, i)]);
            // j = s NQE + q: one loop so that u is indexed by a literal (NQE is a pipeline
            // constant, so s NQE + q would be a run-time index under wgpu's checks).
            // #unroll
            for (var j = 0u; j < 3u * NQE; j = j + 1u) {
                u[j] = u[j] + c * tables[t_edge_phi(j / NQE, j % NQE, k)];
            }
        }
    }
    write_staged(lid.x, live, 2u, 2u * first, true);
    // #unroll
    for (var j = 0u; j < 3u * NQE; j = j + 1u) {
        staged[lid.x * NQE + j % NQE] = u[j];
        if (j % NQE == NQE - 1u) {
            // The side j / NQE of elements first.. is traces[side_slot(first, j - j % NQE) ..].
            write_staged(lid.x, live, NQE, side_slot(first, j - j % NQE), false);
        }
    }
}
