// #include "common/dispatch.wgsl"

// Iterated greedy (color reduction), step 2 of 4, one workgroup: the exclusive prefix sum of
// the class sizes of colors 1 .. k (k = range.count), class_first[c - 1] = sum of the sizes of
// colors < c and class_first[k] = n, so class c occupies order[class_first[c - 1] ..
// class_first[c]]. class_next (the fill cursor of vcolor_class_bucket) starts at class_first;
// class_size is zeroed for the next pass and largest[0] for the vcolor_max that ends the pass.
// Chunks of WORKGROUP_SIZE classes are scanned in workgroup memory (Hillis-Steele), so a
// coloring with thousands of colors costs a loop, not a thread per color.

@group(0) @binding(0) var<storage, read_write> class_size: array<u32>;
@group(0) @binding(1) var<storage, read_write> class_first: array<u32>;
@group(0) @binding(2) var<storage, read_write> class_next: array<u32>;
@group(0) @binding(3) var<storage, read_write> largest: array<u32>;
@group(1) @binding(0) var<uniform> range: ItemRange;

var<workgroup> sums: array<u32, WORKGROUP_SIZE>;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(local_invocation_id) lid: vec3<u32>) {
    var carry = 0u;
    for (var base = 0u; base < range.count; base = base + WORKGROUP_SIZE) {
        let i = base + lid.x;
        var s = 0u;
        if (i < range.count) {
            s = class_size[i];
            class_size[i] = 0u;
        }
        sums[lid.x] = s;
        workgroupBarrier();
        for (var offset = 1u; offset < WORKGROUP_SIZE; offset = offset * 2u) {
            var add = 0u;
            if (lid.x >= offset) {
                add = sums[lid.x - offset];
            }
            workgroupBarrier();
            sums[lid.x] = sums[lid.x] + add;
            workgroupBarrier();
        }
        if (i < range.count) {
            let first = carry + sums[lid.x] - s;
            class_first[i] = first;
            class_next[i] = first;
        }
        carry = carry + sums[WORKGROUP_SIZE - 1u];
        workgroupBarrier();
    }
    if (lid.x == 0u) {
        class_first[range.count] = carry;
        largest[0] = 0u;
    }
}
