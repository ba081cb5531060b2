// #include "common/dispatch.wgsl"

// Anisotropic vertex smoothing (Pain et al.; Rokos, Gorman, Kelly), shared by the three metric
// sampling kernels, which each define `fn metric_at(x: vec2<f32>) -> vec3<f32>` returning the
// metric [m11, m12, m22] at x. CPU reference: src/solver/smooth/cpu.rs (relocate, cavity_ok),
// same operations in the same order, in f64.
//
// For free vertex p with cavity neighbours y_l and M_l = M((p + y_l) / 2):
//   A = sum M_l, r = sum M_l (y_l - p) = q - A p,
//   interior: (D + A) d = w r with D_jj = max(A_jj, (1 + sigma) |A_12|),
//   boundary: d = w (t . r) / (2 t^T A t) t along the unit tangent t of the boundary line.
// The move p + d / 2^k is taken for the smallest k <= max_halvings that keeps every cavity
// triangle's orientation with 2 area > min_shape * sum l^2 and keeps the cavity's worst shape in
// the metric A above min(its old value, shape_floor); otherwise the vertex stays.

struct SmoothParams {
    lo: vec2<f32>,
    inv_extent: vec2<f32>,
    size: u32,
    first_boundary_color: u32,
    max_halvings: u32,
    nbr_offsets: u32,
    sigma: f32,
    relax: f32,
    min_shape: f32,
    nbr: u32,
    ve_offsets: u32,
    ve: u32,
    tris: u32,
    bpairs: u32,
    shape_floor: f32,
    pad0: u32,
    pad1: u32,
    pad2: u32,
}

@group(0) @binding(0) var<storage, read_write> positions: array<vec2<f32>>;
// Free vertices color by color; a dispatch covers one color's range.
@group(0) @binding(1) var<storage, read> order: array<u32>;
// Sections (offsets in params): neighbour CSR offsets and indices, vertex-triangle CSR offsets
// and indices, triangle corners (3 per triangle), boundary neighbour pairs (2 per vertex).
@group(0) @binding(2) var<storage, read> cavity: array<u32>;
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

// Acceptable move (cpu.rs cavity_ok): every cavity triangle keeps its orientation with
// 2 area > min_shape * sum l^2, and the worst metric shape of the cavity does not drop below
// min(its old value, shape_floor).
fn cavity_ok(v: u32, p: vec2<f32>, x: vec2<f32>, a: vec3<f32>) -> bool {
    let begin = cavity[params.ve_offsets + v];
    let end = cavity[params.ve_offsets + v + 1u];
    var worst_old = 3.0e38;
    var worst_new = 3.0e38;
    for (var j = begin; j < end; j = j + 1u) {
        let base = params.tris + 3u * cavity[params.ve + j];
        let c0 = cavity[base];
        let c1 = cavity[base + 1u];
        let c2 = cavity[base + 2u];
        var o1 = c0;
        var o2 = c1;
        if (c0 == v) {
            o1 = c1;
            o2 = c2;
        } else if (c1 == v) {
            o1 = c2;
            o2 = c0;
        }
        let y1 = positions[o1];
        let y2 = positions[o2];
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
    // Normalised metric shape q = 2 sqrt(3) sqrt(det A) s (1 for an equilateral triangle of A).
    let norm = 2.0 * sqrt(3.0) * sqrt(max(a.x * a.z - a.y * a.y, 0.0));
    return norm * worst_new >= min(norm * worst_old, params.shape_floor);
}

fn relocate(v: u32, boundary: bool) {
    let p = positions[v];
    var a = vec3<f32>(0.0);
    var r = vec2<f32>(0.0);
    let begin = cavity[params.nbr_offsets + v];
    let end = cavity[params.nbr_offsets + v + 1u];
    for (var j = begin; j < end; j = j + 1u) {
        let y = positions[cavity[params.nbr + j]];
        let m = metric_at(0.5 * (p + y));
        let d = y - p;
        a = a + m;
        r = r + vec2<f32>(m.x * d.x + m.y * d.y, m.y * d.x + m.z * d.y);
    }
    let w = params.relax;
    var step = vec2<f32>(0.0);
    if (boundary) {
        let ya = positions[cavity[params.bpairs + 2u * v]];
        let yb = positions[cavity[params.bpairs + 2u * v + 1u]];
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
        let s = w * (t.x * r.x + t.y * r.y) / (2.0 * mh);
        step = s * t;
    } else {
        let off = (1.0 + params.sigma) * abs(a.y);
        let b11 = max(a.x, off) + a.x;
        let b22 = max(a.z, off) + a.z;
        let b12 = a.y;
        let det = b11 * b22 - b12 * b12;
        if (!(det > 0.0)) {
            return;
        }
        step = vec2<f32>(w * (b22 * r.x - b12 * r.y) / det, w * (b11 * r.y - b12 * r.x) / det);
    }
    var f = 1.0;
    for (var k = 0u; k <= params.max_halvings; k = k + 1u) {
        let x = p + f * step;
        if (cavity_ok(v, p, x, a)) {
            positions[v] = x;
            return;
        }
        f = f * 0.5;
    }
}

// One thread per vertex of the dispatched color; a color is all interior or all boundary, so
// the branch is uniform over the dispatch.
fn smooth_item(gid: vec3<u32>, nwg: vec3<u32>) {
    let i = linear_index(gid, nwg);
    if (i >= range.count) {
        return;
    }
    relocate(order[range.first + i], range.color >= params.first_boundary_color);
}
