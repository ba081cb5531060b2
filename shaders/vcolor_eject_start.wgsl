// #include "common/dispatch.wgsl"

// Color reduction, start of an ejection attempt on the top color k = range.color, over the n =
// range.count vertices: the colors are saved (restored by the host if the attempt fails), the
// tabu colors and the ejection stamps (`listed`) are cleared, and the vertices of color k
// become uncolored "defects" the rounds must place in colors 1 .. k-1, listed in `defects`
// (defect_count[0] long; the host zeroed it). Each workgroup reserves its run of the list with
// one atomicAdd; the order of the list varies from run to run, the rounds' result does not
// (every defect's step depends only on the colors and proposals around it).

@group(0) @binding(0) var<storage, read_write> colors: array<u32>;
@group(0) @binding(1) var<storage, read_write> saved: array<u32>;
@group(0) @binding(2) var<storage, read_write> tabu: array<u32>;
@group(0) @binding(3) var<storage, read_write> listed: array<u32>;
@group(0) @binding(4) var<storage, read_write> defects: array<u32>;
@group(0) @binding(5) var<storage, read_write> defect_count: array<atomic<u32>>;
@group(1) @binding(0) var<uniform> range: ItemRange;

var<workgroup> local_count: atomic<u32>;
var<workgroup> local_first: u32;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(
    @builtin(global_invocation_id) gid: vec3<u32>,
    @builtin(local_invocation_id) lid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
) {
    if (lid.x == 0u) {
        atomicStore(&local_count, 0u);
    }
    workgroupBarrier();
    let v = linear_index(gid, nwg);
    var top = false;
    var rank = 0u;
    if (v < range.count) {
        let c = colors[v];
        saved[v] = c;
        tabu[v] = 0u;
        listed[v] = 0u;
        top = c == range.color;
        if (top) {
            colors[v] = 0u;
            rank = atomicAdd(&local_count, 1u);
        }
    }
    workgroupBarrier();
    if (lid.x == 0u) {
        local_first = atomicAdd(&defect_count[0], atomicLoad(&local_count));
    }
    workgroupBarrier();
    if (top) {
        defects[local_first + rank] = v;
    }
}
