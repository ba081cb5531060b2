// Integer hashes shared by the vertex-coloring kernels (vcolor_detect's conflict priorities,
// the ejection rounds of the color reduction). The CPU reference in src/color/reduce.rs has the
// same functions.

/// lowbias32 integer hash (Chris Wellons): a cheap bijection with good avalanche.
fn lowbias32(v: u32) -> u32 {
    var x = v;
    x = x ^ (x >> 16u);
    x = x * 0x7feb352du;
    x = x ^ (x >> 15u);
    x = x * 0x846ca68bu;
    x = x ^ (x >> 16u);
    return x;
}

/// A hash of (x, round) that changes from round to round: h(x xor h(round + golden ratio)).
fn round_hash(x: u32, round_number: u32) -> u32 {
    return lowbias32(x ^ lowbias32(round_number + 0x9e3779b9u));
}
