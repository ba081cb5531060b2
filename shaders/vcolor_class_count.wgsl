// #include "common/dispatch.wgsl"

// Iterated greedy (color reduction), step 1 of 4: save and clear the colors (old_colors[v] =
// colors[v], colors[v] = 0) and count the vertices of each old color class, class_size[c - 1]
// += 1 for the n = range.count vertices. Colors up to LOCAL_CLASSES are counted in workgroup
// memory and merged with one global atomicAdd per class and workgroup (a million vertices over
// ten classes would otherwise queue on ten addresses); larger colors go straight to the global
// count. vcolor_class_offsets zeroes class_size again after reading it.

@group(0) @binding(0) var<storage, read_write> colors: array<u32>;
@group(0) @binding(1) var<storage, read_write> old_colors: array<u32>;
@group(0) @binding(2) var<storage, read_write> class_size: array<atomic<u32>>;
@group(1) @binding(0) var<uniform> range: ItemRange;

const LOCAL_CLASSES: u32 = 64u;

var<workgroup> local_size: array<atomic<u32>, LOCAL_CLASSES>;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(
    @builtin(global_invocation_id) gid: vec3<u32>,
    @builtin(local_invocation_id) lid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
) {
    atomicStore(&local_size[lid.x], 0u);
    workgroupBarrier();
    let v = linear_index(gid, nwg);
    if (v < range.count) {
        let c = colors[v];
        old_colors[v] = c;
        colors[v] = 0u;
        if (c != 0u && c <= LOCAL_CLASSES) {
            atomicAdd(&local_size[c - 1u], 1u);
        } else if (c != 0u) {
            atomicAdd(&class_size[c - 1u], 1u);
        }
    }
    workgroupBarrier();
    let s = atomicLoad(&local_size[lid.x]);
    if (s != 0u) {
        atomicAdd(&class_size[lid.x], s);
    }
}
