// Shared by every per-item kernel: the thread index of a 1D launch spread over a 2D grid of
// workgroups (max_compute_workgroups_per_dimension is 65535, so large launches need rows).

const WORKGROUP_SIZE: u32 = 64u;

/// The range of items (edges of one color, or all cells) a dispatch works on: items
/// first .. first + count. Bound per color through a dynamic uniform offset.
struct ItemRange {
    first: u32,
    count: u32,
    color: u32,
    pad: u32,
}

fn linear_index(gid: vec3<u32>, nwg: vec3<u32>) -> u32 {
    return gid.x + gid.y * nwg.x * WORKGROUP_SIZE;
}
