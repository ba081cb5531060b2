// CUDA twin of shaders/common/vcolor_hash.wgsl: integer hashes shared by the vertex-coloring
// kernels (vcolor_detect's conflict priorities, the ejection rounds of the color reduction).

/// lowbias32 integer hash (Chris Wellons): a cheap bijection with good avalanche.
__device__ __forceinline__ u32 lowbias32(u32 v) {
    u32 x = v;
    x = x ^ (x >> 16u);
    x = x * 0x7feb352du;
    x = x ^ (x >> 15u);
    x = x * 0x846ca68bu;
    x = x ^ (x >> 16u);
    return x;
}

/// A hash of (x, round) that changes from round to round: h(x xor h(round + golden ratio)).
__device__ __forceinline__ u32 round_hash(u32 x, u32 round_number) {
    return lowbias32(x ^ lowbias32(round_number + 0x9e3779b9u));
}
