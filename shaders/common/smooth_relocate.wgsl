// #include "common/dispatch.wgsl"

// Anisotropic vertex smoothing (Pain et al.; Rokos, Gorman, Kelly), shared by the three metric
// sampling kernels, which each define `fn metric_at(x: vec2<f32>) -> vec3<f32>` returning the
// metric [m11, m12, m22] at x. CPU reference: src/solver/smooth/cpu.rs (relocate, cavity_ok),
// same arithmetic per neighbour and per cavity triangle, in f64.
//
// For free vertex p with cavity neighbours y_l and M_l = M((p + y_l) / 2):
//   A = sum M_l, r = sum M_l (y_l - p) = q - A p,
//   interior: (D + A) d = w r with D_jj = max(A_jj, (1 + sigma) |A_12|),
//   boundary: d = w (t . r) / (2 t^T A t) t along the unit tangent t of the boundary line.
// The move p + d / 2^k is taken for the smallest k <= max_halvings that keeps every cavity
// triangle's orientation with 2 area > min_shape * sum l^2 and keeps the cavity's worst shape in
// the metric A above min(its old value, shape_floor); otherwise the vertex stays.
//
// Data layout (src/solver/smooth/gpu.rs, `DeviceLayout`): vertices are renumbered into slots,
// the free vertices first, color by color, each color in Morton order of position, then the
// fixed vertices. Thread i of the dispatch of a color moves slot range.first + i, so a warp
// reads and writes consecutive positions and its cavities lie close together in space (and in
// the texture). A slot's cavity is a walk over its link (the opposite edges of its triangles,
// as slots): an entry with COUNT_BIT is a neighbour counted once in A and r; an entry with
// LINK_BIT closes the cavity triangle (p, previous entry, this entry). For an interior vertex
// the walk is its neighbour cycle with the first neighbour repeated at the end, for a boundary
// vertex the path between its boundary neighbours. Walks are stored sliced-ELL: the free slots
// in chunks of LANES, entry j of slot s at entries + chunk_base[s / LANES] + j * LANES +
// s % LANES, so a warp's j-th loads are one contiguous run.

struct SmoothParams {
    lo: vec2<f32>,
    inv_extent: vec2<f32>,
    size: u32,
    first_boundary_color: u32,
    max_halvings: u32,
    first_boundary_slot: u32,
    sigma: f32,
    relax: f32,
    min_shape: f32,
    shape_floor: f32,
    lens: u32,
    chunk_base: u32,
    entries: u32,
    bpairs: u32,
}

const LANES: u32 = 32u;
const COUNT_BIT: u32 = 0x80000000u;
const LINK_BIT: u32 = 0x40000000u;
const SLOT_MASK: u32 = 0x3fffffffu;

// Positions by slot.
@group(0) @binding(0) var<storage, read_write> positions: array<vec2<f32>>;
// Sections (offsets in params): walk length per free slot, first entry of each chunk of LANES
// free slots (relative to `entries`), the walk entries, and the two boundary neighbours of each
// boundary slot (slot - first_boundary_slot).
@group(0) @binding(1) var<storage, read> cavity: array<u32>;
@group(1) @binding(0) var<uniform> range: ItemRange;
@group(2) @binding(0) var<uniform> params: SmoothParams;

// Bilinear footprint of x on the texture, clamp-to-edge: t = (x - lo) / extent * S - 1/2,
// corners floor(t) and floor(t) + 1 clamped to 0..S-1, weights frac(t).
struct Footprint {
    i0: vec2<i32>,
    i1: vec2<i32>,
    a: vec2<f32>,
}

fn footprint(x: vec2<f32>) -> Footprint {
    let t = (x - params.lo) * params.inv_extent * f32(params.size) - vec2<f32>(0.5);
    let f = floor(t);
    let top = vec2<i32>(i32(params.size) - 1);
    let i = vec2<i32>(f);
    return Footprint(clamp(i, vec2<i32>(0), top), clamp(i + vec2<i32>(1), vec2<i32>(0), top), t - f);
}

fn bilinear(a: vec2<f32>, t00: vec3<f32>, t10: vec3<f32>, t01: vec3<f32>, t11: vec3<f32>) -> vec3<f32> {
    return (1.0 - a.x) * (1.0 - a.y) * t00 + a.x * (1.0 - a.y) * t10 + (1.0 - a.x) * a.y * t01
        + a.x * a.y * t11;
}

fn cross3(a: vec2<f32>, b: vec2<f32>, c: vec2<f32>) -> f32 {
    return (b.x - a.x) * (c.y - a.y) - (c.x - a.x) * (b.y - a.y);
}

fn sq(a: vec2<f32>, b: vec2<f32>) -> f32 {
    let d = a - b;
    return d.x * d.x + d.y * d.y;
}

fn metric_sq(m: vec3<f32>, a: vec2<f32>, b: vec2<f32>) -> f32 {
    let e = b - a;
    return e.x * (m.x * e.x + m.y * e.y) + e.y * (m.y * e.x + m.z * e.y);
}

// Where a slot's walk lives: entry j is cavity[first + j * LANES].
struct Walk {
    first: u32,
    len: u32,
}

fn walk_of(s: u32) -> Walk {
    let base = params.entries + cavity[params.chunk_base + s / LANES];
    return Walk(base + s % LANES, cavity[params.lens + s]);
}

// Acceptable move (cpu.rs cavity_ok): every cavity triangle keeps its orientation with
// 2 area > min_shape * sum l^2, and the worst metric shape of the cavity does not drop below
// min(its old value, shape_floor). A triangle's corners may come in either order: the
// orientation sign compensates exactly.
fn cavity_ok(w: Walk, p: vec2<f32>, x: vec2<f32>, a: vec3<f32>) -> bool {
    var worst_old = 3.0e38;
    var worst_new = 3.0e38;
    var y1 = positions[cavity[w.first] & SLOT_MASK];
    for (var j = 1u; j < w.len; j = j + 1u) {
        let e = cavity[w.first + j * LANES];
        let y2 = positions[e & SLOT_MASK];
        if ((e & LINK_BIT) != 0u) {
            let old_area = cross3(p, y1, y2);
            let new_area = cross3(x, y1, y2);
            let sum_l2 = sq(y1, x) + sq(y2, x) + sq(y1, y2);
            let sgn = sign(old_area);
            if (!(new_area * sgn > params.min_shape * sum_l2)) {
                return false;
            }
            let m12 = metric_sq(a, y1, y2);
            worst_old = min(worst_old, old_area * sgn / (metric_sq(a, p, y1) + metric_sq(a, p, y2) + m12));
            worst_new = min(worst_new, new_area * sgn / (metric_sq(a, x, y1) + metric_sq(a, x, y2) + m12));
        }
        y1 = y2;
    }
    // Normalised metric shape q = 2 sqrt(3) sqrt(det A) s (1 for an equilateral triangle of A).
    let norm = 2.0 * sqrt(3.0) * sqrt(max(a.x * a.z - a.y * a.y, 0.0));
    return norm * worst_new >= min(norm * worst_old, params.shape_floor);
}

fn relocate(s: u32, boundary: bool) {
    let p = positions[s];
    let w = walk_of(s);
    var a = vec3<f32>(0.0);
    var r = vec2<f32>(0.0);
    for (var j = 0u; j < w.len; j = j + 1u) {
        let e = cavity[w.first + j * LANES];
        if ((e & COUNT_BIT) != 0u) {
            let y = positions[e & SLOT_MASK];
            let m = metric_at(0.5 * (p + y));
            let d = y - p;
            a = a + m;
            r = r + vec2<f32>(m.x * d.x + m.y * d.y, m.y * d.x + m.z * d.y);
        }
    }
    let relax = params.relax;
    var step = vec2<f32>(0.0);
    if (boundary) {
        let b = params.bpairs + 2u * (s - params.first_boundary_slot);
        let ya = positions[cavity[b]];
        let yb = positions[cavity[b + 1u]];
        let e = yb - ya;
        let len = sqrt(e.x * e.x + e.y * e.y);
        if (!(len > 0.0)) {
            return;
        }
        let t = e / len;
        let mh = t.x * (a.x * t.x + a.y * t.y) + t.y * (a.y * t.x + a.z * t.y);
        if (!(mh > 0.0)) {
            return;
        }
        let sr = relax * (t.x * r.x + t.y * r.y) / (2.0 * mh);
        step = sr * t;
    } else {
        let off = (1.0 + params.sigma) * abs(a.y);
        let b11 = max(a.x, off) + a.x;
        let b22 = max(a.z, off) + a.z;
        let b12 = a.y;
        let det = b11 * b22 - b12 * b12;
        if (!(det > 0.0)) {
            return;
        }
        step = vec2<f32>(relax * (b22 * r.x - b12 * r.y) / det, relax * (b11 * r.y - b12 * r.x) / det);
    }
    var f = 1.0;
    for (var k = 0u; k <= params.max_halvings; k = k + 1u) {
        let x = p + f * step;
        if (cavity_ok(w, p, x, a)) {
            positions[s] = x;
            return;
        }
        f = f * 0.5;
    }
}

// One thread per slot of the dispatched color; a color is all interior or all boundary, so the
// branch is uniform over the dispatch.
fn smooth_item(gid: vec3<u32>, nwg: vec3<u32>) {
    let i = linear_index(gid, nwg);
    if (i >= range.count) {
        return;
    }
    relocate(range.first + i, range.color >= params.first_boundary_color);
}
