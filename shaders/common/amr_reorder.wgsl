// The reorder of an adapted mesh's element slots along a Morton curve (src/solver/dg/amr/
// reorder.rs), shared by amr_radix, amr_permute and amr_faces.

// Radix sort: 3 passes of 8-bit digits over the keys' top 24 bits, digits 1 to 3
// (reorder::RADIX_BITS, RADIX_FIRST_DIGIT, RADIX_PASSES): the lowest digit, the finest 16 x 16
// cells of each 2^12 x 2^12 cell, keeps the order the slots had, next to each other.
const RADIX_BITS: u32 = 8u;
const RADIX: u32 = 256u;
const RADIX_FIRST_DIGIT: u32 = 1u;
const RADIX_PASSES: u32 = 3u;
// A face is far when its slots differ by more than this (reorder::FAR_SLOTS): about what a
// 32-thread launch over a color's faces (left slots ~4 apart) spans.
const FAR_SLOTS: u32 = 128u;

// Mirrors ReorderParams in src/solver/dg/amr/reorder.rs.
struct ReorderParams {
    // 3 (x0, y0): three times the corner of the box the keys quantise.
    origin: vec2<f32>,
    // 65535 / (3 (x1 - x0), 3 (y1 - y0)): a centroid sum to 16-bit cells.
    scale: vec2<f32>,
    // Face colors (2K) and the face capacity (for the scratch layout).
    colors: u32,
    face_capacity: u32,
    pad0: u32,
    pad1: u32,
}

