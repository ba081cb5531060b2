// #include "common/dispatch.wgsl"
// #include "common/amr_tree.wgsl"
// #include "common/amr_reorder.wgsl"

// One pass of the LSD radix sort of the (key, slot) pairs (reorder::radix_order, the exact CPU
// reference), one thread per slot up to the capacity, slots i in groups w = i / WORKGROUP_SIZE
// (a workgroup each; G groups); pass p = range.color sorts by digit
// d = (key >> 8 (p + RADIX_FIRST_DIGIT)) & 255 from half p % 2 of keys/order (NE words each)
// into the other half:
//   0: counts[d G + w] = the occupied slots of group w with digit d (slots past the active
//      count have none); the exclusive scan over the RADIX G counts (digit-major, one launch:
//      this kernel adds its block offsets) then gives group w's first place for digit d;
//   1: pair i moves to that place plus its rank among the slots of its group before it with
//      the same digit: a stable counting sort by the digit.
// After the RADIX_PASSES passes the sorted pairs are in half RADIX_PASSES % 2. (Counts per
// group instead of a mark per slot and digit: RADIX / WORKGROUP_SIZE words per slot to scan
// instead of RADIX, so a pass can take 8 bits, half the passes of 4-bit digits.)
// The first pass's counting makes the pairs it sorts (no launch of their own): the Morton key
// of slot i's centroid (reorder::morton_key, the exact CPU reference), with s = (v0 + v1) + v2
// the centroid's sum in f32, q = (s - origin) * scale on a 65536^2 grid (clamped),
// key = x bits at even positions, y bits at odd, and order[i] = i. The f32 steps have no
// product followed by a sum, so no backend can fuse them: the keys are the same bits
// everywhere.

@group(0) @binding(0) var<storage, read_write> keys: array<u32>;
@group(0) @binding(1) var<storage, read_write> order: array<u32>;
@group(0) @binding(2) var<storage, read_write> counts: array<u32>;
@group(0) @binding(3) var<storage, read> places: array<u32>;
@group(0) @binding(4) var<storage, read> block_offsets: array<u32>;
@group(0) @binding(5) var<storage, read> counters: array<u32>;
@group(0) @binding(6) var<storage, read> slots: array<u32>;
@group(0) @binding(7) var<storage, read> vertices: array<vec2<f32>>;
@group(1) @binding(0) var<uniform> range: ItemRange;
@group(2) @binding(0) var<uniform> params: ReorderParams;

var<workgroup> tally: array<atomic<u32>, RADIX>;
var<workgroup> group_digits: array<u32, WORKGROUP_SIZE>;

// The low 16 bits of v at the even bit positions.
fn spread(x: u32) -> u32 {
    var v = x & 0xffffu;
    v = (v | (v << 8u)) & 0x00ff00ffu;
    v = (v | (v << 4u)) & 0x0f0f0f0fu;
    v = (v | (v << 2u)) & 0x33333333u;
    return (v | (v << 1u)) & 0x55555555u;
}

// The Morton key of active slot i's centroid.
fn morton_key(i: u32) -> u32 {
    let id = slots[i];
    let s = (vertices[3u * id] + vertices[3u * id + 1u]) + vertices[3u * id + 2u];
    let q = clamp((s - params.origin) * params.scale, vec2<f32>(0.0), vec2<f32>(65535.0));
    return spread(u32(q.x)) | (spread(u32(q.y)) << 1u);
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(
    @builtin(global_invocation_id) gid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    let i = linear_index(gid, nwg);
    let group = i / WORKGROUP_SIZE;
    let groups = (range.capacity + WORKGROUP_SIZE - 1u) / WORKGROUP_SIZE;
    let src_half = (range.color % 2u) * range.capacity;
    let occupied = i < range.count && i < counters[C_ACTIVE];
    var digit = RADIX;
    if (occupied) {
        var key: u32;
        if (range.color == 0u && range.pad == 0u) {
            key = morton_key(i);
            keys[i] = key;
            order[i] = i;
        } else {
            key = keys[src_half + i];
        }
        digit = (key >> (RADIX_BITS * (RADIX_FIRST_DIGIT + range.color))) & (RADIX - 1u);
    }
    if (range.pad == 0u) {
        for (var d = lid; d < RADIX; d = d + WORKGROUP_SIZE) {
            atomicStore(&tally[d], 0u);
        }
        workgroupBarrier();
        if (occupied) {
            atomicAdd(&tally[digit], 1u);
        }
        workgroupBarrier();
        if (group < groups) {
            for (var d = lid; d < RADIX; d = d + WORKGROUP_SIZE) {
                counts[d * groups + group] = atomicLoad(&tally[d]);
            }
        }
        return;
    }
    group_digits[lid] = digit;
    workgroupBarrier();
    if (occupied) {
        var rank = 0u;
        for (var j = 0u; j < lid; j = j + 1u) {
            rank = rank + select(0u, 1u, group_digits[j] == digit);
        }
        let at = digit * groups + group;
        let to = range.capacity - src_half + places[at] + block_offsets[at / SCAN_BLOCK] + rank;
        keys[to] = keys[src_half + i];
        order[to] = order[src_half + i];
    }
}
