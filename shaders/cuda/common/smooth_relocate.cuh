// #include "common/dispatch.cuh"

// CUDA twin of shaders/common/smooth_relocate.wgsl: anisotropic vertex smoothing (Pain et al.;
// Rokos, Gorman, Kelly), shared by the three metric sampling kernels. Each kernel passes a
// functor `metric` with `__device__ float3 operator()(const SmoothParams&, float2 x) const`
// returning the metric [m11, m12, m22] at x (WGSL: the kernel's `fn metric_at`). CPU
// reference: src/solver/smooth/cpu.rs (relocate, cavity_ok); see the WGSL file for the
// equations, the slot numbering and the sliced-ELL cavity walks, which are the same here.
//
// The WGSL uniform `params` is a kernel parameter passed by value (SmoothParams, mirroring
// GpuParams in src/solver/smooth/gpu.rs: 16 words, float2 fields at 8-byte offsets).

struct SmoothParams {
    float2 lo;
    float2 inv_extent;
    u32 size;
    u32 first_boundary_color;
    u32 max_halvings;
    u32 first_boundary_slot;
    float sigma;
    float relax;
    float min_shape;
    float shape_floor;
    u32 lens;
    u32 chunk_base;
    u32 entries;
    u32 bpairs;
};

#define SMOOTH_LANES 32u
#define SMOOTH_UNROLL 4u
#define SMOOTH_COUNT_BIT 0x80000000u
#define SMOOTH_LINK_BIT 0x40000000u
#define SMOOTH_SLOT_MASK 0x3fffffffu

/// float3 arithmetic the WGSL code writes with operators (named, to stay clear of other
/// headers' operators).
__device__ __forceinline__ float3 f3_add(float3 a, float3 b) {
    return make_float3(a.x + b.x, a.y + b.y, a.z + b.z);
}
__device__ __forceinline__ float3 f3_scale(float s, float3 a) {
    return make_float3(s * a.x, s * a.y, s * a.z);
}

// Bilinear footprint of x on the texture, clamp-to-edge: t = (x - lo) / extent * S - 1/2,
// corners floor(t) and floor(t) + 1 clamped to 0..S-1, weights frac(t).
struct Footprint {
    int2 i0;
    int2 i1;
    float2 a;
};

__device__ __forceinline__ Footprint footprint(const SmoothParams& params, float2 x) {
    float s = (float)params.size;
    float2 t = make_float2((x.x - params.lo.x) * params.inv_extent.x * s - 0.5f,
                           (x.y - params.lo.y) * params.inv_extent.y * s - 0.5f);
    float2 f = make_float2(floorf(t.x), floorf(t.y));
    int top = (int)params.size - 1;
    int ix = (int)f.x;
    int iy = (int)f.y;
    Footprint fp;
    fp.i0 = make_int2(min(max(ix, 0), top), min(max(iy, 0), top));
    fp.i1 = make_int2(min(max(ix + 1, 0), top), min(max(iy + 1, 0), top));
    fp.a = t - f;
    return fp;
}

__device__ __forceinline__ float3 bilinear(float2 a, float3 t00, float3 t10, float3 t01, float3 t11) {
    return f3_add(f3_add(f3_add(f3_scale((1.0f - a.x) * (1.0f - a.y), t00),
                                f3_scale(a.x * (1.0f - a.y), t10)),
                         f3_scale((1.0f - a.x) * a.y, t01)),
                  f3_scale(a.x * a.y, t11));
}

/// The metric components of a texel (xyz of rgba).
__device__ __forceinline__ float3 texel_xyz(float4 t) {
    return make_float3(t.x, t.y, t.z);
}

__device__ __forceinline__ float cross3(float2 a, float2 b, float2 c) {
    return (b.x - a.x) * (c.y - a.y) - (c.x - a.x) * (b.y - a.y);
}

__device__ __forceinline__ float sq(float2 a, float2 b) {
    float2 d = a - b;
    return d.x * d.x + d.y * d.y;
}

__device__ __forceinline__ float metric_sq(float3 m, float2 a, float2 b) {
    float2 e = b - a;
    return e.x * (m.x * e.x + m.y * e.y) + e.y * (m.y * e.x + m.z * e.y);
}

// Where a slot's walk lives: entry j is cavity[first + j * LANES] (see the WGSL file).
struct Walk {
    u32 first;
    u32 len;
};

__device__ __forceinline__ Walk walk_of(const u32* cavity, const SmoothParams& params, u32 s) {
    u32 base = params.entries + cavity[params.chunk_base + s / SMOOTH_LANES];
    Walk w;
    w.first = base + s % SMOOTH_LANES;
    w.len = cavity[params.lens + s];
    return w;
}

__device__ __forceinline__ u32 walk_entry(const u32* cavity, Walk w, u32 j) {
    return cavity[w.first + j * SMOOTH_LANES];
}

__device__ __forceinline__ float2 slot_at(const float2* positions, u32 e) {
    return positions[e & SMOOTH_SLOT_MASK];
}

// A = sum M_l and r = sum M_l (y_l - p) so far.
struct Sums {
    float3 a;
    float2 r;
};

// Add neighbour y with edge metric m when entry e counts (branch-free).
__device__ __forceinline__ Sums add_neighbour(Sums s, u32 e, float2 p, float2 y, float3 m) {
    float2 d = y - p;
    bool c = (e & SMOOTH_COUNT_BIT) != 0u;
    float2 r = s.r + make_float2(m.x * d.x + m.y * d.y, m.y * d.x + m.z * d.y);
    Sums out;
    out.a = c ? f3_add(s.a, m) : s.a;
    out.r = c ? r : s.r;
    return out;
}

// The cavity test so far: all triangles acceptable, worst metric shape before and after.
struct Worst {
    bool ok;
    float before;
    float after;
};

// Fold in cavity triangle (p, y1, y2) when entry e (the one at y2) closes one (branch-free).
__device__ __forceinline__ Worst add_triangle(const SmoothParams& params, Worst w, u32 e, float2 p,
                                              float2 x, float3 a, float2 y1, float2 y2) {
    bool link = (e & SMOOTH_LINK_BIT) != 0u;
    float old_area = cross3(p, y1, y2);
    float new_area = cross3(x, y1, y2);
    float sum_l2 = sq(y1, x) + sq(y2, x) + sq(y1, y2);
    float sgn = sign(old_area);
    bool fine = new_area * sgn > params.min_shape * sum_l2;
    float m12 = metric_sq(a, y1, y2);
    float q_old = old_area * sgn / (metric_sq(a, p, y1) + metric_sq(a, p, y2) + m12);
    float q_new = new_area * sgn / (metric_sq(a, x, y1) + metric_sq(a, x, y2) + m12);
    Worst out;
    out.ok = w.ok & (fine | !link);
    out.before = link ? fminf(w.before, q_old) : w.before;
    out.after = link ? fminf(w.after, q_new) : w.after;
    return out;
}

// Acceptable move (cpu.rs cavity_ok): every cavity triangle keeps its orientation with
// 2 area > min_shape * sum l^2, and the worst metric shape of the cavity does not drop below
// min(its old value, shape_floor).
__device__ __forceinline__ bool cavity_ok(const float2* positions, const u32* cavity,
                                          const SmoothParams& params, Walk w, float2 p, float2 x,
                                          float3 a) {
    Worst acc;
    acc.ok = true;
    acc.before = 3.0e38f;
    acc.after = 3.0e38f;
    // The first entry of a walk never closes a triangle, so `prev` starts anywhere.
    float2 prev = p;
    for (u32 j = 0u; j < w.len; j = j + SMOOTH_UNROLL) {
        u32 e0 = walk_entry(cavity, w, j);
        u32 e1 = walk_entry(cavity, w, j + 1u);
        u32 e2 = walk_entry(cavity, w, j + 2u);
        u32 e3 = walk_entry(cavity, w, j + 3u);
        float2 y0 = slot_at(positions, e0);
        float2 y1 = slot_at(positions, e1);
        float2 y2 = slot_at(positions, e2);
        float2 y3 = slot_at(positions, e3);
        acc = add_triangle(params, acc, e0, p, x, a, prev, y0);
        acc = add_triangle(params, acc, e1, p, x, a, y0, y1);
        acc = add_triangle(params, acc, e2, p, x, a, y1, y2);
        acc = add_triangle(params, acc, e3, p, x, a, y2, y3);
        if (!acc.ok) {
            return false;
        }
        prev = y3;
    }
    // Normalised metric shape q = 2 sqrt(3) sqrt(det A) s (1 for an equilateral triangle of A).
    float norm = 2.0f * sqrtf(3.0f) * sqrtf(fmaxf(a.x * a.z - a.y * a.y, 0.0f));
    return norm * acc.after >= fminf(norm * acc.before, params.shape_floor);
}

template <typename Metric>
__device__ __forceinline__ void relocate(float2* positions, const u32* cavity,
                                         const SmoothParams& params, const Metric& metric_at,
                                         u32 s, bool boundary) {
    float2 p = positions[s];
    Walk w = walk_of(cavity, params, s);
    Sums sums;
    sums.a = make_float3(0.0f, 0.0f, 0.0f);
    sums.r = make_float2(0.0f, 0.0f);
    for (u32 j = 0u; j < w.len; j = j + SMOOTH_UNROLL) {
        u32 e0 = walk_entry(cavity, w, j);
        u32 e1 = walk_entry(cavity, w, j + 1u);
        u32 e2 = walk_entry(cavity, w, j + 2u);
        u32 e3 = walk_entry(cavity, w, j + 3u);
        float2 y0 = slot_at(positions, e0);
        float2 y1 = slot_at(positions, e1);
        float2 y2 = slot_at(positions, e2);
        float2 y3 = slot_at(positions, e3);
        float3 m0 = metric_at(params, 0.5f * (p + y0));
        float3 m1 = metric_at(params, 0.5f * (p + y1));
        float3 m2 = metric_at(params, 0.5f * (p + y2));
        float3 m3 = metric_at(params, 0.5f * (p + y3));
        sums = add_neighbour(sums, e0, p, y0, m0);
        sums = add_neighbour(sums, e1, p, y1, m1);
        sums = add_neighbour(sums, e2, p, y2, m2);
        sums = add_neighbour(sums, e3, p, y3, m3);
    }
    float3 a = sums.a;
    float2 r = sums.r;
    float relax = params.relax;
    float2 step = make_float2(0.0f, 0.0f);
    if (boundary) {
        u32 b = params.bpairs + 2u * (s - params.first_boundary_slot);
        float2 ya = positions[cavity[b]];
        float2 yb = positions[cavity[b + 1u]];
        float2 e = yb - ya;
        float len = sqrtf(e.x * e.x + e.y * e.y);
        if (!(len > 0.0f)) {
            return;
        }
        float2 t = make_float2(e.x / len, e.y / len);
        float mh = t.x * (a.x * t.x + a.y * t.y) + t.y * (a.y * t.x + a.z * t.y);
        if (!(mh > 0.0f)) {
            return;
        }
        float sr = relax * (t.x * r.x + t.y * r.y) / (2.0f * mh);
        step = sr * t;
    } else {
        float off = (1.0f + params.sigma) * fabsf(a.y);
        float b11 = fmaxf(a.x, off) + a.x;
        float b22 = fmaxf(a.z, off) + a.z;
        float b12 = a.y;
        float det = b11 * b22 - b12 * b12;
        if (!(det > 0.0f)) {
            return;
        }
        step = make_float2(relax * (b22 * r.x - b12 * r.y) / det, relax * (b11 * r.y - b12 * r.x) / det);
    }
    float f = 1.0f;
    for (u32 k = 0u; k <= params.max_halvings; k = k + 1u) {
        float2 x = p + f * step;
        if (cavity_ok(positions, cavity, params, w, p, x, a)) {
            positions[s] = x;
            return;
        }
        f = f * 0.5f;
    }
}

// One thread per slot of the launched color; a color is all interior or all boundary, so the
// branch is uniform over the launch.
template <typename Metric>
__device__ __forceinline__ void smooth_item(float2* positions, const u32* cavity,
                                            const SmoothParams& params, const Metric& metric_at,
                                            ItemRange range) {
    u32 i = linear_index();
    if (i >= range.count) {
        return;
    }
    relocate(positions, cavity, params, metric_at, range.first + i,
             range.color >= params.first_boundary_color);
}
