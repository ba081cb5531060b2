//! How the smoothing data lies on the device (read by `shaders/common/smooth_relocate.wgsl`),
//! built for memory locality:
//!
//! * Vertices are renumbered into *slots*: the free vertices first, color by color in schedule
//!   order, each color sorted by the Morton key of its starting position, then the fixed
//!   vertices (also in Morton order). Thread `i` of a color's dispatch moves slot
//!   `first + i`, so there is no indirection through a vertex list, a warp reads and writes
//!   consecutive positions, and the cavities of a warp lie close together in space, hence in
//!   the positions of the other colors and in the metric texture.
//! * A slot's cavity is one *walk* over its link (the edges opposite it in its triangles), in
//!   slots: entries flagged [`COUNT_BIT`] are the neighbours, each once, in the order they are
//!   summed into `A` and `r`; an entry flagged [`LINK_BIT`] closes the cavity triangle
//!   `(p, previous entry, this entry)`. An interior vertex's walk is its neighbour cycle with
//!   the first neighbour repeated at the end, a boundary vertex's the path between its boundary
//!   neighbours; other links (non-manifold vertices) are split into several trails, so every
//!   triangle is visited exactly once. One list thus replaces the neighbour CSR, the
//!   vertex-triangle CSR and the triangle corners, and each neighbour position is read once
//!   per pass over the cavity.
//! * Walks are stored sliced-ELL: the free slots in chunks of [`LANES`], entry `j` of slot `s`
//!   at `chunk_base[s / LANES] + j * LANES + s % LANES`, so the `j`-th loads of a warp are one
//!   contiguous run of 128 bytes. The kernel reads [`UNROLL`] entries at a time with no bounds
//!   test, so each walk is padded to a multiple of it with entries that point at the slot
//!   itself (a position and a texel the thread reads anyway) and carry no flag.
//!
//! The CPU reference ([`super::cpu`]) keeps the caller's numbering; [`DeviceLayout::slot_of`]
//! and [`DeviceLayout::vertex_of`] map between the two.

use super::cpu::{Schedule, SmoothTopology, VertexKind};
use crate::error::{Error, Result};

/// Slots per sliced-ELL chunk (LANES in smooth_relocate.wgsl).
pub const LANES: usize = 32;
/// Walk entries the kernel reads at a time (UNROLL): chunk widths are multiples of it.
pub const UNROLL: usize = 4;
/// Walk entry flag: a neighbour, summed into `A` and `r` (COUNT_BIT in the kernel).
pub const COUNT_BIT: u32 = 1 << 31;
/// Walk entry flag: closes a cavity triangle with the previous entry (LINK_BIT).
pub const LINK_BIT: u32 = 1 << 30;
/// Walk entry bits holding the slot (SLOT_MASK).
pub const SLOT_MASK: u32 = LINK_BIT - 1;

/// The slot numbering and the cavity walks of a mesh and schedule.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeviceLayout {
    /// Caller's vertex in each slot: free vertices color by color, then the fixed ones.
    pub vertex_of: Vec<u32>,
    /// Slot of each of the caller's vertices.
    pub slot_of: Vec<u32>,
    /// Walk length per free slot.
    pub lens: Vec<u32>,
    /// First entry of each chunk of [`LANES`] free slots in `entries`.
    pub chunk_base: Vec<u32>,
    /// The walks, sliced-ELL. Past its length a walk is padded up to a multiple of [`UNROLL`]
    /// with its own slot, without flags (read, then masked out, by the kernel); the rest of a
    /// chunk's width is 0 and never read.
    pub entries: Vec<u32>,
    /// The slots of the two boundary neighbours of each boundary slot, from
    /// `first_boundary_slot` on.
    pub bpairs: Vec<u32>,
    /// First slot of the boundary colors (= number of interior free vertices).
    pub first_boundary_slot: u32,
}

/// Interleave the low 16 bits of `x` and `y` (x in the even bits).
pub fn morton(x: u32, y: u32) -> u32 {
    let spread = |v: u32| {
        let mut v = v & 0xffff;
        v = (v | (v << 8)) & 0x00ff_00ff;
        v = (v | (v << 4)) & 0x0f0f_0f0f;
        v = (v | (v << 2)) & 0x3333_3333;
        (v | (v << 1)) & 0x5555_5555
    };
    spread(x) | (spread(y) << 1)
}

/// Morton keys of the points on a 65536^2 grid over their bounding box (NaN counts as 0).
pub fn morton_keys(pos: &[[f64; 2]]) -> Vec<u32> {
    let mut lo = [f64::INFINITY; 2];
    let mut hi = [f64::NEG_INFINITY; 2];
    for p in pos {
        for k in 0..2 {
            if p[k].is_finite() {
                lo[k] = lo[k].min(p[k]);
                hi[k] = hi[k].max(p[k]);
            }
        }
    }
    let cell = |v: f64, k: usize| {
        let ext = hi[k] - lo[k];
        if ext.is_nan() || ext <= 0.0 || !v.is_finite() {
            return 0;
        }
        // `as` saturates, so rounding at the top edge stays in range.
        ((v - lo[k]) / ext * 65535.0) as u32
    };
    pos.iter()
        .map(|p| morton(cell(p[0], 0), cell(p[1], 1)))
        .collect()
}

/// Append the walk of vertex `v` (entries in slots, with flags) to `out`.
fn walk(v: usize, topo: &SmoothTopology, slot_of: &[u32], out: &mut Vec<u32>) {
    // The opposite edge of v in each triangle, corners in the order cpu::cavity_ok takes them.
    let edges: Vec<[u32; 2]> = topo
        .vertex_elements
        .row(v)
        .iter()
        .map(|&e| {
            let t = topo.triangles[e as usize];
            let k = t.iter().position(|&u| u as usize == v).unwrap_or(0);
            [t[(k + 1) % 3], t[(k + 2) % 3]]
        })
        .collect();
    let mut used = vec![false; edges.len()];
    let mut trail: Vec<(u32, bool)> = Vec::with_capacity(edges.len() + 1);
    while let Some(first) = used.iter().position(|u| !u) {
        // Start a trail at a link vertex of odd remaining degree (an end of a path) if any.
        let odd = |u: u32| {
            edges
                .iter()
                .zip(&used)
                .filter(|(e, used)| !**used && e.contains(&u))
                .count()
                % 2
                == 1
        };
        let start = edges
            .iter()
            .zip(&used)
            .filter(|(_, used)| !**used)
            .flat_map(|(e, _)| *e)
            .find(|&u| odd(u))
            .unwrap_or(edges[first][0]);
        let mut cur = start;
        trail.push((cur, false));
        while let Some(i) = (0..edges.len()).find(|&i| !used[i] && edges[i].contains(&cur)) {
            used[i] = true;
            cur = if edges[i][0] == cur {
                edges[i][1]
            } else {
                edges[i][0]
            };
            trail.push((cur, true));
        }
    }
    let neighbors = topo.neighbors.row(v);
    let mut counted: Vec<u32> = Vec::with_capacity(neighbors.len());
    for (u, link) in trail {
        let mut e = slot_of[u as usize];
        if link {
            e |= LINK_BIT;
        }
        if neighbors.contains(&u) && !counted.contains(&u) {
            counted.push(u);
            e |= COUNT_BIT;
        }
        out.push(e);
    }
    // Neighbours in no triangle (not in a valid triangle mesh) still count in A and r.
    for &u in neighbors {
        if !counted.contains(&u) {
            counted.push(u);
            out.push(slot_of[u as usize] | COUNT_BIT);
        }
    }
}

/// Error unless the schedule lists each free vertex once, interior colors holding interior
/// vertices and boundary colors sliding ones, and every vertex of the mesh is either in the
/// schedule or fixed.
fn check_schedule(topo: &SmoothTopology, schedule: &Schedule) -> Result<()> {
    let n = topo.num_vertices();
    let bad = |m: String| Err(Error::Invalid(format!("smoothing schedule: {m}")));
    let o = &schedule.offsets;
    if o.is_empty()
        || o[0] != 0
        || o.windows(2).any(|w| w[1] < w[0])
        || *o.last().unwrap_or(&0) as usize != schedule.order.len()
        || schedule.first_boundary_color > schedule.num_colors()
    {
        return bad(format!(
            "offsets {:?} do not cover {} vertices with first boundary color {}",
            if o.len() > 16 { &o[..16] } else { o },
            schedule.order.len(),
            schedule.first_boundary_color
        ));
    }
    let mut seen = vec![false; n];
    for c in 0..schedule.num_colors() {
        let boundary = c >= schedule.first_boundary_color;
        for &v in schedule.color(c) {
            let Some(kind) = topo.kind.get(v as usize) else {
                return bad(format!("vertex {v} out of range ({n} vertices)"));
            };
            if std::mem::replace(&mut seen[v as usize], true) {
                return bad(format!("vertex {v} listed twice"));
            }
            let fits = match kind {
                VertexKind::Interior => !boundary,
                VertexKind::Sliding { .. } => boundary,
                VertexKind::Fixed => false,
            };
            if !fits {
                return bad(format!(
                    "vertex {v} ({kind:?}) does not belong in color {c}"
                ));
            }
        }
    }
    if let Some(v) = (0..n).find(|&v| !seen[v] && topo.kind[v] != VertexKind::Fixed) {
        return bad(format!("free vertex {v} is in no color"));
    }
    Ok(())
}

impl DeviceLayout {
    /// Slots and walks for `topo` and `schedule`; `pos` (the starting positions) only decides
    /// the Morton order.
    pub fn build(
        topo: &SmoothTopology,
        schedule: &Schedule,
        pos: &[[f64; 2]],
    ) -> Result<DeviceLayout> {
        let n = topo.num_vertices();
        if pos.len() != n {
            return Err(Error::Invalid(format!(
                "{} positions for {n} vertices",
                pos.len()
            )));
        }
        if n > SLOT_MASK as usize {
            return Err(Error::Invalid(format!(
                "mesh too large for 30-bit vertex slots ({n} vertices)"
            )));
        }
        check_schedule(topo, schedule)?;
        let keys = morton_keys(pos);
        let by_key = |vs: &mut Vec<u32>| vs.sort_unstable_by_key(|&v| (keys[v as usize], v));
        let mut vertex_of: Vec<u32> = Vec::with_capacity(n);
        for c in 0..schedule.num_colors() {
            let mut vs = schedule.color(c).to_vec();
            by_key(&mut vs);
            vertex_of.extend(vs);
        }
        let free = vertex_of.len();
        let mut fixed: Vec<u32> = (0..n as u32)
            .filter(|&v| topo.kind[v as usize] == VertexKind::Fixed)
            .collect();
        by_key(&mut fixed);
        vertex_of.extend(fixed);
        let mut slot_of = vec![0u32; n];
        for (s, &v) in vertex_of.iter().enumerate() {
            slot_of[v as usize] = s as u32;
        }

        let mut walks: Vec<u32> = Vec::new();
        let mut starts: Vec<usize> = Vec::with_capacity(free + 1);
        starts.push(0);
        for &v in &vertex_of[..free] {
            walk(v as usize, topo, &slot_of, &mut walks);
            starts.push(walks.len());
        }
        let lens: Vec<u32> = starts.windows(2).map(|w| (w[1] - w[0]) as u32).collect();
        let mut chunk_base = Vec::with_capacity(free.div_ceil(LANES));
        let mut total = 0usize;
        for chunk in lens.chunks(LANES) {
            chunk_base.push(total);
            let width =
                (chunk.iter().copied().max().unwrap_or(0) as usize).next_multiple_of(UNROLL);
            total += width * LANES;
        }
        if total > u32::MAX as usize / 2 {
            return Err(Error::Invalid(format!(
                "mesh too large for 32-bit cavity indices ({total} walk entries)"
            )));
        }
        let mut entries = vec![0u32; total];
        for s in 0..free {
            let base = chunk_base[s / LANES] + s % LANES;
            let walk = &walks[starts[s]..starts[s + 1]];
            let padded = walk.len().next_multiple_of(UNROLL);
            for j in 0..padded {
                entries[base + j * LANES] = walk.get(j).copied().unwrap_or(s as u32);
            }
        }
        let first_boundary_slot = schedule.offsets[schedule.first_boundary_color];
        let bpairs = vertex_of[first_boundary_slot as usize..free]
            .iter()
            .flat_map(|&v| match topo.kind[v as usize] {
                VertexKind::Sliding { a, b } => [slot_of[a as usize], slot_of[b as usize]],
                _ => [0, 0],
            })
            .collect();
        Ok(DeviceLayout {
            vertex_of,
            slot_of,
            lens,
            chunk_base: chunk_base.into_iter().map(|b| b as u32).collect(),
            entries,
            bpairs,
            first_boundary_slot,
        })
    }

    /// Number of free slots.
    pub fn free(&self) -> usize {
        self.lens.len()
    }

    /// Entries of the walk of free slot `s`.
    pub fn walk(&self, s: usize) -> impl Iterator<Item = u32> + '_ {
        let base = self.chunk_base[s / LANES] as usize + s % LANES;
        (0..self.lens[s] as usize).map(move |j| self.entries[base + j * LANES])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mesh::generate;

    #[test]
    fn walks_visit_every_neighbour_once_and_every_cavity_triangle_once() -> Result<()> {
        for spec in ["rect:600", "disk:500"] {
            let mesh = generate::builtin(spec)?;
            let topo = SmoothTopology::build(&mesh)?;
            let schedule = Schedule::greedy(&topo)?;
            let pos = super::super::cpu::positions(&mesh);
            let l = DeviceLayout::build(&topo, &schedule, &pos)?;
            assert_eq!(l.free(), schedule.order.len());
            for (s, &v) in l.vertex_of.iter().enumerate() {
                assert_eq!(l.slot_of[v as usize] as usize, s);
            }
            for c in 0..schedule.num_colors() {
                let (a, b) = (
                    schedule.offsets[c] as usize,
                    schedule.offsets[c + 1] as usize,
                );
                let mut got = l.vertex_of[a..b].to_vec();
                let mut want = schedule.color(c).to_vec();
                got.sort_unstable();
                want.sort_unstable();
                assert_eq!(got, want, "{spec}: color {c}");
            }
            for s in 0..l.free() {
                let v = l.vertex_of[s] as usize;
                let w: Vec<u32> = l.walk(s).collect();
                let vert = |e: u32| l.vertex_of[(e & SLOT_MASK) as usize];
                let mut counted: Vec<u32> = w
                    .iter()
                    .filter(|&&e| e & COUNT_BIT != 0)
                    .map(|&e| vert(e))
                    .collect();
                counted.sort_unstable();
                let mut nb = topo.neighbors.row(v).to_vec();
                nb.sort_unstable();
                assert_eq!(counted, nb, "{spec}: neighbours of vertex {v}");
                let norm = |a: u32, b: u32| if a < b { [a, b] } else { [b, a] };
                let mut tris: Vec<[u32; 2]> = (1..w.len())
                    .filter(|&j| w[j] & LINK_BIT != 0)
                    .map(|j| norm(vert(w[j - 1]), vert(w[j])))
                    .collect();
                tris.sort_unstable();
                let mut want: Vec<[u32; 2]> = topo
                    .vertex_elements
                    .row(v)
                    .iter()
                    .map(|&e| {
                        let t = topo.triangles[e as usize];
                        let o: Vec<u32> = t.iter().copied().filter(|&u| u as usize != v).collect();
                        norm(o[0], o[1])
                    })
                    .collect();
                want.sort_unstable();
                assert_eq!(tris, want, "{spec}: cavity triangles of vertex {v}");
                let manifold_len = match topo.kind[v] {
                    VertexKind::Interior => nb.len() + 1,
                    _ => nb.len(),
                };
                assert_eq!(w.len(), manifold_len, "{spec}: walk of vertex {v}");
                let base = l.chunk_base[s / LANES] as usize + s % LANES;
                for j in w.len()..w.len().next_multiple_of(UNROLL) {
                    assert_eq!(l.entries[base + j * LANES], s as u32, "{spec}: padding");
                }
            }
        }
        Ok(())
    }

    #[test]
    fn bad_schedules_are_rejected() -> Result<()> {
        let mesh = generate::builtin("rect:200")?;
        let topo = SmoothTopology::build(&mesh)?;
        let pos = super::super::cpu::positions(&mesh);
        let good = Schedule::greedy(&topo)?;
        let mut twice = good.clone();
        twice.order[1] = twice.order[0];
        let mut short = good.clone();
        short.offsets.pop();
        for s in [twice, short] {
            assert!(DeviceLayout::build(&topo, &s, &pos).is_err());
        }
        assert!(DeviceLayout::build(&topo, &good, &pos[1..]).is_err());
        Ok(())
    }

    #[test]
    fn kernel_constants_match() -> Result<()> {
        let src = crate::runtime::shaders::kernel_source("smooth_buffer")?;
        for want in [
            format!("const LANES: u32 = {LANES}u;"),
            format!("const UNROLL: u32 = {UNROLL}u;"),
            format!("const COUNT_BIT: u32 = {COUNT_BIT:#010x}u;"),
            format!("const LINK_BIT: u32 = {LINK_BIT:#010x}u;"),
            format!("const SLOT_MASK: u32 = {SLOT_MASK:#010x}u;"),
        ] {
            assert!(src.contains(&want), "smooth_relocate.wgsl lacks `{want}`");
        }
        Ok(())
    }

    #[test]
    fn morton_order_is_z_shaped() {
        let keys = morton_keys(&[[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [0.4, 0.4]]);
        assert_eq!(keys[0], 0);
        assert!(keys[4] < keys[1] && keys[1] < keys[2] && keys[2] < keys[3]);
    }
}
