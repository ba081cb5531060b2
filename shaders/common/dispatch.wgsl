// Shared by every per-item kernel: the thread index of a 1D launch spread over a 2D grid of
// workgroups (max_compute_workgroups_per_dimension is 65535, so large launches need rows).

const WORKGROUP_SIZE: u32 = 64u;

/// The range of items (edges of one color, or all cells) a dispatch works on: items
/// first .. first + count. Bound per color through a dynamic uniform offset. `capacity` is the
/// kernel's element capacity NE (the stride of the solver's per-element arrays), given at
/// launch instead of compiled in so that a kernel compiles once whatever the mesh's size
/// (RangeRecord and CAPACITY_CONSTANT in src/runtime; the CUDA twins' module constant NE).
struct ItemRange {
    first: u32,
    count: u32,
    color: u32,
    pad: u32,
    capacity: u32,
}

fn linear_index(gid: vec3<u32>, nwg: vec3<u32>) -> u32 {
    return gid.x + gid.y * nwg.x * WORKGROUP_SIZE;
}

/// Threads per workgroup of the per-item kernels whose threads mostly return at once (the
/// adaptation's amr_mark, amr_compact): a quarter of the workgroups to start. On an H200 the
/// split marks (then a kernel of their own) took 10.2 -> 7.5 us on Vulkan and 8.8 -> 6.3 on
/// CUDA over ~30,000 elements' edges. Such a kernel declares
/// @workgroup_size(WIDE_WORKGROUP_SIZE) (the runtime reads it) and takes its index from
/// wide_linear_index; it cannot be launched from a device record.
const WIDE_WORKGROUP_SIZE: u32 = 256u;

fn wide_linear_index(gid: vec3<u32>, nwg: vec3<u32>) -> u32 {
    return gid.x + gid.y * nwg.x * WIDE_WORKGROUP_SIZE;
}

/// Items per block of the runtime's exclusive scan (SCAN_BLOCK in src/runtime/scan.rs):
/// scan_blocks scans blocks of this many, and scan_add or a kernel consuming the scan adds
/// block_offsets[i / SCAN_BLOCK] to item i.
const SCAN_BLOCK: u32 = 1024u;

/// Words of a device launch record, [first, count, groups x, groups y, groups z, 0, 0, 0]
/// (LAUNCH_WORDS in src/runtime): a launch whose range.count is DEVICE_COUNT takes its first item
/// and count from the record at word range.first of its launch-words buffer, and on wgpu its
/// workgroups from the record's grid (an indirect dispatch).
const LAUNCH_WORDS: u32 = 8u;
const DEVICE_COUNT: u32 = 0xffffffffu;
/// Workgroups per grid dimension a record asks for at most (WebGPU's guaranteed limit).
const MAX_GROUPS_PER_DIM: u32 = 65535u;

/// The workgroup grid of a record for `threads` threads (at least one workgroup): x up to
/// MAX_GROUPS_PER_DIM, then rows, as the host's grid_for; linear_index undoes it.
fn launch_grid(threads: u32) -> vec3<u32> {
    let groups = max((threads + WORKGROUP_SIZE - 1u) / WORKGROUP_SIZE, 1u);
    let x = min(groups, MAX_GROUPS_PER_DIM);
    return vec3<u32>(x, (groups + x - 1u) / x, 1u);
}
