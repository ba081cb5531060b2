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
// s % LANES, so a warp's j-th loads are one contiguous run. Walks are read UNROLL entries at a
// time, their neighbour positions and metric samples all issued before they are summed (the
// sums are masked, not branched), so a thread waits for a few memory round trips per cavity
// instead of a few per neighbour.

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
const UNROLL: u32 = 4u;
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

// Where a slot's walk lives: entry j is cavity[first + j * LANES]. Entries from len up to a
// multiple of UNROLL are the slot itself without flags, so a walk is read UNROLL entries at a
// time without bounds tests: the loads of a group are independent and in flight together.
struct Walk {
    first: u32,
    len: u32,
}

fn walk_of(s: u32) -> Walk {
    let base = params.entries + cavity[params.chunk_base + s / LANES];
    return Walk(base + s % LANES, cavity[params.lens + s]);
}

fn entry(w: Walk, j: u32) -> u32 {
    return cavity[w.first + j * LANES];
}

fn at(e: u32) -> vec2<f32> {
    return positions[e & SLOT_MASK];
}

// A = sum M_l and r = sum M_l (y_l - p) so far.
struct Sums {
    a: vec3<f32>,
    r: vec2<f32>,
}

// Add neighbour y with edge metric m when entry e counts (branch-free).
fn add_neighbour(s: Sums, e: u32, p: vec2<f32>, y: vec2<f32>, m: vec3<f32>) -> Sums {
    let d = y - p;
    let c = (e & COUNT_BIT) != 0u;
    let r = s.r + vec2<f32>(m.x * d.x + m.y * d.y, m.y * d.x + m.z * d.y);
    return Sums(select(s.a, s.a + m, c), select(s.r, r, c));
}

// The cavity test so far: all triangles acceptable, worst metric shape before and after.
struct Worst {
    ok: bool,
    before: f32,
    after: f32,
}

// Fold in cavity triangle (p, y1, y2) when entry e (the one at y2) closes one (branch-free).
fn add_triangle(w: Worst, e: u32, p: vec2<f32>, x: vec2<f32>, a: vec3<f32>, y1: vec2<f32>, y2: vec2<f32>) -> Worst {
    let link = (e & LINK_BIT) != 0u;
    let old_area = cross3(p, y1, y2);
    let new_area = cross3(x, y1, y2);
    let sum_l2 = sq(y1, x) + sq(y2, x) + sq(y1, y2);
    let sgn = sign(old_area);
    let fine = new_area * sgn > params.min_shape * sum_l2;
    let m12 = metric_sq(a, y1, y2);
    let q_old = old_area * sgn / (metric_sq(a, p, y1) + metric_sq(a, p, y2) + m12);
    let q_new = new_area * sgn / (metric_sq(a, x, y1) + metric_sq(a, x, y2) + m12);
    return Worst(w.ok & (fine | !link), select(w.before, min(w.before, q_old), link),
        select(w.after, min(w.after, q_new), link));
}

// Acceptable move (cpu.rs cavity_ok): every cavity triangle keeps its orientation with
// 2 area > min_shape * sum l^2, and the worst metric shape of the cavity does not drop below
// min(its old value, shape_floor). A triangle's corners may come in either order: the
// orientation sign compensates exactly.
fn cavity_ok(w: Walk, p: vec2<f32>, x: vec2<f32>, a: vec3<f32>) -> bool {
    var acc = Worst(true, 3.0e38, 3.0e38);
    // The first entry of a walk never closes a triangle, so `prev` starts anywhere.
    var prev = p;
    for (var j = 0u; j < w.len; j = j + UNROLL) {
        let e0 = entry(w, j);
        let e1 = entry(w, j + 1u);
        let e2 = entry(w, j + 2u);
        let e3 = entry(w, j + 3u);
        let y0 = at(e0);
        let y1 = at(e1);
        let y2 = at(e2);
        let y3 = at(e3);
        acc = add_triangle(acc, e0, p, x, a, prev, y0);
        acc = add_triangle(acc, e1, p, x, a, y0, y1);
        acc = add_triangle(acc, e2, p, x, a, y1, y2);
        acc = add_triangle(acc, e3, p, x, a, y2, y3);
        if (!acc.ok) {
            return false;
        }
        prev = y3;
    }
    // Normalised metric shape q = 2 sqrt(3) sqrt(det A) s (1 for an equilateral triangle of A).
    let norm = 2.0 * sqrt(3.0) * sqrt(max(a.x * a.z - a.y * a.y, 0.0));
    return norm * acc.after >= min(norm * acc.before, params.shape_floor);
}

fn relocate(s: u32, boundary: bool) {
    let p = positions[s];
    let w = walk_of(s);
    var sums = Sums(vec3<f32>(0.0), vec2<f32>(0.0));
    for (var j = 0u; j < w.len; j = j + UNROLL) {
        let e0 = entry(w, j);
        let e1 = entry(w, j + 1u);
        let e2 = entry(w, j + 2u);
        let e3 = entry(w, j + 3u);
        let y0 = at(e0);
        let y1 = at(e1);
        let y2 = at(e2);
        let y3 = at(e3);
        let m0 = metric_at(0.5 * (p + y0));
        let m1 = metric_at(0.5 * (p + y1));
        let m2 = metric_at(0.5 * (p + y2));
        let m3 = metric_at(0.5 * (p + y3));
        sums = add_neighbour(sums, e0, p, y0, m0);
        sums = add_neighbour(sums, e1, p, y1, m1);
        sums = add_neighbour(sums, e2, p, y2, m2);
        sums = add_neighbour(sums, e3, p, y3, m3);
    }
    let a = sums.a;
    let r = sums.r;
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
