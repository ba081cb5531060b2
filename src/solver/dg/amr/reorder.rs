//! Locality of an adapted mesh restored on the device. GK19's compaction fills holes with the
//! last slots and refinement puts children wherever slots are free, so after many adaptations
//! face neighbours sit far apart in memory and the surface kernel (which reads both sides of
//! each face) loses its coalescing. The reorder sorts the element slots along a Morton curve of
//! the centroids, then the faces by color and left slot, on the device:
//!
//! 1. `amr_radix`: an LSD radix sort of (key, slot) pairs by the keys' top 24 bits, in
//!    [`RADIX_PASSES`] passes of [`RADIX_BITS`] bits from digit [`RADIX_FIRST_DIGIT`], each
//!    three launches: the digits counted per group of [`WORKGROUP_SIZE`] slots, the runtime's
//!    exclusive scan over the counts (digit-major), and a stable scatter ([`radix_order`]). The
//!    first count makes the pairs: a 32-bit key per active slot, the centroid's cell on a
//!    2^16 x 2^16 grid of the base mesh's box with the x and y bits interleaved
//!    ([`morton_key`]), and the slot;
//! 2. `amr_permute`: new slot i takes old slot `order[i]`: the element id (and the tree's slot
//!    record), the solution, the geometry and the neighbour blocks are gathered, every stored
//!    slot (neighbours, faces' left and right) renamed, and the faces put in order by color
//!    and left slot by a scan over (color, slot) marks ([`permute_tree`],
//!    [`locality::permute`], [`locality::permute_coefficients`]).
//!
//! Every step is a copy or an integer operation (the keys' f32 steps included, see
//! [`morton_key`]), so the device result equals the CPU reference bit for bit.
//!
//! When: `amr_faces` (after every adaptation) and `amr_permute` (after a reorder) count the faces
//! whose slots differ by more than [`FAR_SLOTS`], into a counter word the next adaptation reads
//! back anyway with the smoothing's counters: the policy sees the far faces one adaptation late,
//! those of the mesh the adaptation started from, so that an adaptation still reads back once. A
//! far face's right element lies outside what the neighbouring threads of its launch read, so each
//! far face costs the surface kernel memory sectors of its own while a near one shares them: the
//! kernel's extra time over the Morton order grows with the far fraction f. The right side is about
//! half of the kernel's element traffic, so f rising by [`AUTO_TRIGGER`] = 0.1 above its value
//! right after the last reorder is about a 10% slower surface kernel: the policy
//! [`ReorderPolicy::Auto`] reorders then.

use super::gpu::{GpuAdaptation, PhaseSeconds, SwitchedTimer};
use super::locality::{self, params};
pub use super::locality::{far_faces, MortonFrame, ReorderParams, FAR_SLOTS};
use super::tree::{AdaptiveMesh, FlatTree};
use crate::args;
use crate::error::{Error, Result};
use crate::runtime::scan::PrefixSum;
use crate::runtime::{
    Arg, Buffer, DeviceTimer, ItemRange, Kernel, OwnedKernelSpec, Plan, PlanBuilder, Runtime,
    CAPACITY_CONSTANT, WORKGROUP_SIZE,
};
use crate::solver::dg::gpu::GpuDg;
use crate::solver::smooth::layout::morton;

/// Bits of a radix digit (`RADIX_BITS` of shaders/common/amr_reorder.wgsl).
pub const RADIX_BITS: u32 = 8;
/// The lowest digit sorted: digit 0 (the finest 16 x 16 cells of each 2^12 x 2^12 cell of the
/// key's grid) keeps the slots' order, next to each other. At 9 levels of the double Mach
/// reflection a 2^12 cell holds at most ~13 of the finest elements, all contiguous after the
/// sort, so the faces stay near; a pass (3 launches) fewer.
pub const RADIX_FIRST_DIGIT: u32 = 1;
/// Passes, digits RADIX_FIRST_DIGIT.. of the 32-bit keys: the sorted pairs end in half
/// `RADIX_PASSES % 2` of the key and order buffers.
pub const RADIX_PASSES: u32 = 32 / RADIX_BITS - RADIX_FIRST_DIGIT;
/// Values of a digit.
const RADIX: usize = 1 << RADIX_BITS;
/// Rise of the far fraction over its value after the last reorder that triggers the next
/// under [`ReorderPolicy::Auto`] (about 10% more surface-kernel time; module docs).
pub const AUTO_TRIGGER: f64 = 0.10;
/// Counter word of the far faces (`C_FAR_FACES` of shaders/common/amr_tree.wgsl).
const FAR_FACES_WORD: usize = 18;

/// When an adaptive run reorders its elements.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ReorderPolicy {
    /// When the far fraction of the faces has risen by [`AUTO_TRIGGER`] since the last reorder
    /// (from 0 before the first). The fraction is the previous adaptation's (read one late,
    /// with the smoothing's counters): an adaptation decides on the far-face share of the mesh
    /// it started from, after the previous reorder if one ran.
    #[default]
    Auto,
    Never,
    /// After every K-th adaptation that changed the mesh (one that changed nothing leaves it
    /// in its order).
    Every(usize),
}

impl ReorderPolicy {
    /// `auto`, `never` or `every:K` (K >= 1).
    pub fn parse(s: &str) -> Result<ReorderPolicy> {
        let bad = || {
            Error::Invalid(format!(
                "amr reorder: '{s}' is not auto, never or every:K with K >= 1"
            ))
        };
        match s.trim() {
            "auto" => Ok(ReorderPolicy::Auto),
            "never" => Ok(ReorderPolicy::Never),
            other => {
                let k = other.strip_prefix("every:").ok_or_else(bad)?;
                match k.trim().parse::<usize>() {
                    Ok(k) if k >= 1 => Ok(ReorderPolicy::Every(k)),
                    _ => Err(bad()),
                }
            }
        }
    }

    /// Whether to reorder after an adaptation: `since` adaptations since the last reorder
    /// (this one included), `far` the far fraction of the faces of the mesh the adaptation
    /// started from (one late, see [`ReorderPolicy::Auto`]), `baseline` right after the last
    /// reorder.
    pub fn due(&self, since: usize, far: f64, baseline: f64) -> bool {
        match *self {
            ReorderPolicy::Auto => far > baseline + AUTO_TRIGGER,
            ReorderPolicy::Never => false,
            ReorderPolicy::Every(k) => since >= k,
        }
    }
}

impl std::fmt::Display for ReorderPolicy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReorderPolicy::Auto => write!(f, "auto"),
            ReorderPolicy::Never => write!(f, "never"),
            ReorderPolicy::Every(k) => write!(f, "every:{k}"),
        }
    }
}

impl MortonFrame {
    /// The frame of `mesh`'s vertices (all element ids).
    pub fn of(mesh: &AdaptiveMesh) -> MortonFrame {
        MortonFrame::of_flat(&mesh.to_flat())
    }

    /// The frame of the vertices of `flat` (all element ids).
    pub fn of_flat(flat: &FlatTree) -> MortonFrame {
        let (mut lo, mut hi) = ([f64::INFINITY; 2], [f64::NEG_INFINITY; 2]);
        for v in flat.element_vertices.iter().flatten() {
            for k in 0..2 {
                lo[k] = lo[k].min(v[k]);
                hi[k] = hi[k].max(v[k]);
            }
        }
        let scale = |k: usize| {
            let extent = 3.0 * (hi[k] - lo[k]);
            if extent > 0.0 && extent.is_finite() {
                (65535.0 / extent) as f32
            } else {
                0.0
            }
        };
        MortonFrame {
            origin: [(3.0 * lo[0]) as f32, (3.0 * lo[1]) as f32],
            scale: [scale(0), scale(1)],
        }
    }
}

/// Morton key of a triangle with f32 vertices `v` (what `amr_radix`'s first count computes):
/// the vertex sum s = (v0 + v1) + v2, q = (s - origin) * scale clamped to [0, 65535] and
/// truncated, x bits at the even positions and y bits at the odd. No product is followed by a
/// sum, so no backend fuses the steps into an fma: the same bits on every device.
pub fn morton_key(v: &[[f32; 2]; 3], frame: &MortonFrame) -> u32 {
    let cell = |k: usize| {
        let s = (v[0][k] + v[1][k]) + v[2][k];
        ((s - frame.origin[k]) * frame.scale[k]).clamp(0.0, 65535.0) as u32
    };
    morton(cell(0), cell(1))
}

/// Keys of the active slots of `flat` (vertices rounded to f32, as on the device).
pub fn morton_keys(flat: &FlatTree, frame: &MortonFrame) -> Vec<u32> {
    flat.slots
        .iter()
        .map(|&id| {
            let v = flat.element_vertices[id as usize].map(|p| p.map(|x| x as f32));
            morton_key(&v, frame)
        })
        .collect()
}

/// Slots in the order of their keys' top 24 bits (digits from [`RADIX_FIRST_DIGIT`]), ties in
/// slot order: the LSD radix sort of `amr_radix`, pass by pass (a stable counting sort by each
/// 8-bit digit): the digits counted per group of
/// [`WORKGROUP_SIZE`] slots, digit-major, the counts' exclusive scan, then each pair to its
/// group's place for its digit plus its rank among the group's pairs before it with that digit.
pub fn radix_order(keys: &[u32]) -> Vec<u32> {
    let group_size = WORKGROUP_SIZE as usize;
    let groups = keys.len().div_ceil(group_size);
    let mut pairs: Vec<(u32, u32)> = keys.iter().zip(0..).map(|(&k, i)| (k, i)).collect();
    for pass in 0..RADIX_PASSES {
        let digit =
            |k: u32| (k >> (RADIX_BITS * (RADIX_FIRST_DIGIT + pass))) as usize & (RADIX - 1);
        let mut places = vec![0usize; RADIX * groups];
        for (i, &(k, _)) in pairs.iter().enumerate() {
            places[digit(k) * groups + i / group_size] += 1;
        }
        let mut sum = 0;
        for place in places.iter_mut() {
            (*place, sum) = (sum, sum + *place);
        }
        let mut sorted = vec![(0, 0); pairs.len()];
        for (i, &(k, s)) in pairs.iter().enumerate() {
            let at = digit(k) * groups + i / group_size;
            sorted[places[at]] = (k, s);
            places[at] += 1;
        }
        pairs = sorted;
    }
    pairs.into_iter().map(|(_, i)| i).collect()
}

/// `flat` with new slot i holding the element of old slot `order[i]` (each element's slot
/// record follows); ids, trees, vertices and free rings are untouched.
pub fn permute_tree(flat: &FlatTree, order: &[u32]) -> FlatTree {
    let mut out = flat.clone();
    out.slots = order.iter().map(|&o| flat.slots[o as usize]).collect();
    for (new, &id) in out.slots.iter().enumerate() {
        out.element_tree[id as usize][3] = new as u32;
    }
    out
}

/// `far` of `faces` as a fraction (0 without faces).
pub fn far_fraction(far: usize, faces: usize) -> f64 {
    if faces == 0 {
        0.0
    } else {
        far as f64 / faces as f64
    }
}

/// The f64 reference of the whole reorder: the order of `mesh`'s active slots along the
/// Morton curve of `frame`, the trees with the slots in that order, and its DG mesh (faces by
/// color and left slot).
pub fn reorder_reference(
    mesh: &AdaptiveMesh,
    frame: &MortonFrame,
) -> Result<(Vec<u32>, AdaptiveMesh)> {
    let flat = mesh.to_flat();
    let order = radix_order(&morton_keys(&flat, frame));
    let permuted = permute_tree(&flat, &order);
    Ok((
        order,
        AdaptiveMesh::from_flat(&permuted, mesh.max_level, mesh.base_colors)?,
    ))
}

/// Coefficients `c[eq][k][i]` of `n` elements in the slot order `order` (new i = old
/// `order[i]`).
pub fn permute_coefficients(c: &[f64], n: usize, order: &[u32]) -> Vec<f64> {
    let order: Vec<usize> = order.iter().map(|&o| o as usize).collect();
    locality::permute_coefficients(c, n, &order)
}

/// The reorder on the device, prepared on a [`GpuAdaptation`]'s trees and its solver's buffers.
pub struct GpuReorder {
    rt: Runtime,
    plan: Plan,
    keys: Buffer,
    order: Buffer,
    counters: Buffer,
    /// Slots per half of `keys` and `order`.
    slot_capacity: usize,
    /// Spans of device time around the untimed reorders while timing is on
    /// ([`GpuReorder::set_timer`]).
    timer: SwitchedTimer,
}

/// The reorder's kernels (stem and constants) for `np` modes and `ne` slots: amr_radix,
/// amr_permute.
pub(super) fn kernel_specs(np: usize, ne: usize) -> [OwnedKernelSpec; 2] {
    [
        ("amr_radix", vec![(CAPACITY_CONSTANT, ne as f64)]),
        (
            "amr_permute",
            vec![("NP", np as f64), (CAPACITY_CONSTANT, ne as f64)],
        ),
    ]
}

impl GpuReorder {
    /// Prepare the reorder of `adaptation`'s slots in `dg`'s buffers (order `p`), keys on
    /// `frame`.
    pub fn new(
        rt: &Runtime,
        adaptation: &GpuAdaptation,
        dg: &GpuDg,
        p: usize,
        frame: &MortonFrame,
    ) -> Result<GpuReorder> {
        let ne = adaptation.slot_capacity();
        let face_capacity = dg.capacity().edges;
        let colors = adaptation.num_colors();
        if ne != dg.capacity().elements {
            return Err(Error::Invalid(format!(
                "reorder: trees for {ne} slots on a solver for {}",
                dg.capacity().elements
            )));
        }
        let np = (p + 1) * (p + 2) / 2;
        let tree = adaptation.slot_buffers();
        let (regs, [inv_jac, inv_det, heights, neighbors, faces]) = dg.device_buffers();
        let keys = rt.zeroed::<u32>("reorder keys", 2 * ne)?;
        let order = rt.zeroed::<u32>("reorder slots", 2 * ne)?;
        // The digit counts per group of slots, then the face marks per color and slot.
        let digit_counts = RADIX * ne.div_ceil(WORKGROUP_SIZE as usize);
        let marks_len = digit_counts.max(colors * ne);
        let marks = rt.zeroed::<u32>("reorder marks", marks_len)?;
        let marks_scan = rt.zeroed::<u32>("reorder mark numbers", marks_len)?;
        let scratch =
            rt.zeroed::<u32>("reorder scratch", (8 * np + 16) * ne + 8 * face_capacity)?;
        let prm = Arg::params(&params(frame, colors, face_capacity));
        let all = |pad: u32, color: u32, count: usize| ItemRange {
            first: 0,
            count: count as u32,
            color,
            pad,
        };
        // The reorder's kernels at once (Runtime::kernels: in parallel).
        let [radix, permute]: [Kernel; 2] = rt
            .kernel_list(&kernel_specs(np, ne))?
            .try_into()
            .map_err(|_| Error::Gpu("reorder: a kernel is missing".into()))?;
        let mut plan = PlanBuilder::new();
        plan.segment("reorder");
        let digit_sum = PrefixSum::new(rt, &marks, &marks_scan, digit_counts as u32)?;
        let mut radix_args = args![
            keys,
            order,
            marks,
            marks_scan,
            *digit_sum.block_offsets(),
            *tree.counters,
            *tree.slots,
            *tree.vertices
        ]
        .to_vec();
        radix_args.push(prm.clone());
        for pass in 0..RADIX_PASSES {
            plan.launch(&radix, &radix_args, all(0, pass, ne));
            digit_sum.record_blocks(&mut plan, digit_counts as u32)?;
            plan.launch(&radix, &radix_args, all(1, pass, ne));
        }
        let face_sum = PrefixSum::new(rt, &marks, &marks_scan, (colors * ne) as u32)?;
        let mut permute_args = args![
            *tree.slots,
            *tree.element_tree,
            order,
            *regs,
            *inv_jac,
            *inv_det,
            *heights,
            *neighbors,
            *faces,
            marks,
            marks_scan,
            *tree.counters,
            scratch,
            *face_sum.block_offsets(),
            *dg.low_words(),
            *dg.edges_by_left(),
            *tree.element_edges,
            *tree.edge_tree
        ]
        .to_vec();
        permute_args.push(prm);
        plan.launch(&permute, &permute_args, all(0, 0, ne));
        plan.launch(&permute, &permute_args, all(1, 0, ne));
        plan.launch(&permute, &permute_args, all(2, 0, face_capacity));
        face_sum.record_blocks(&mut plan, (colors * ne) as u32)?;
        plan.launch(&permute, &permute_args, all(3, 0, face_capacity));
        Ok(GpuReorder {
            rt: rt.clone(),
            plan: rt.prepare(&plan)?,
            keys,
            order,
            counters: tree.counters.clone(),
            slot_capacity: ne,
            timer: SwitchedTimer::default(),
        })
    }

    /// Time the reorders queued untimed while timing is on ([`Self::timer`]) as spans of
    /// `timer`.
    pub fn set_timer(&mut self, timer: Option<DeviceTimer>) {
        self.timer = SwitchedTimer::new(timer);
    }

    /// The run's timer of the reorders, and whether they are timed now.
    pub fn timer(&self) -> &SwitchedTimer {
        &self.timer
    }

    /// Reorder (queued); with `phases`, timed and added as "reorder" and "locality". The
    /// solution moves whole: register 0's high and low words ([`GpuDg::low_words`]).
    pub fn run(&self, phases: Option<&mut PhaseSeconds>) -> Result<()> {
        let Some(phases) = phases else {
            return self.rt.queue_timed(&self.plan, 1, self.timer.active());
        };
        for (label, s) in self.rt.time(&self.plan, 1)?.entries() {
            match phases.iter_mut().find(|(l, _)| *l == label) {
                Some(entry) => entry.1 += s,
                None => phases.push((label, s)),
            }
        }
        Ok(())
    }

    /// The far faces counted at the end of the last reorder (a read-back of its own, which
    /// waits for it: the adaptations get it one late instead).
    pub fn far_faces(&self) -> Result<usize> {
        Ok(self.rt.read::<u32>(&self.counters, FAR_FACES_WORD, 1)?[0] as usize)
    }

    /// The first `n` sorted keys and the slot order of the last reorder (waits for it): in
    /// the half of the buffers the last radix pass wrote.
    pub fn sorted(&self, n: usize) -> Result<(Vec<u32>, Vec<u32>)> {
        let at = (RADIX_PASSES % 2) as usize * self.slot_capacity;
        Ok((
            self.rt.read(&self.keys, at, n)?,
            self.rt.read(&self.order, at, n)?,
        ))
    }
}

impl std::fmt::Debug for GpuReorder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GpuReorder").finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn radix_order_is_a_stable_sort_by_key() {
        let mut seed = 7u64;
        let keys: Vec<u32> = (0..1000)
            .map(|_| {
                seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1);
                // Few distinct keys so ties occur, spread over all four bytes.
                ((seed >> 40) as u32 % 37).wrapping_mul(0x0101_0101)
            })
            .collect();
        let mut want: Vec<u32> = (0..keys.len() as u32).collect();
        want.sort_by_key(|&i| keys[i as usize] >> (RADIX_BITS * RADIX_FIRST_DIGIT));
        assert_eq!(radix_order(&keys), want);
        // The lowest digit is not sorted: keys differing only there keep the slots' order.
        assert_eq!(radix_order(&[0x105, 0x103, 0x0ff]), vec![2, 0, 1]);
    }

    #[test]
    fn policies_parse_and_fire() {
        assert_eq!(ReorderPolicy::parse("auto").unwrap(), ReorderPolicy::Auto);
        assert_eq!(ReorderPolicy::parse("never").unwrap(), ReorderPolicy::Never);
        assert_eq!(
            ReorderPolicy::parse("every:3").unwrap(),
            ReorderPolicy::Every(3)
        );
        for bad in ["every:0", "every:", "sometimes", "every:-1", ""] {
            let e = ReorderPolicy::parse(bad).unwrap_err().to_string();
            assert!(e.contains("every:K"), "{bad}: {e}");
        }
        assert_eq!(ReorderPolicy::Every(3).to_string(), "every:3");
        assert!(!ReorderPolicy::Every(3).due(2, 1.0, 0.0));
        assert!(ReorderPolicy::Every(3).due(3, 0.0, 0.0));
        assert!(!ReorderPolicy::Never.due(100, 1.0, 0.0));
        assert!(!ReorderPolicy::Auto.due(100, 0.25, 0.2));
        assert!(ReorderPolicy::Auto.due(1, 0.31, 0.2));
    }

    #[test]
    fn keys_follow_the_centroid_cells() {
        let frame = MortonFrame {
            origin: [0.0; 2],
            scale: [65535.0 / 3.0; 2],
        };
        // Centroid (1, 0): x cell 65535 (all x bits), y cell 0.
        let v = [[1.0, 0.0], [1.0, 0.0], [1.0, 0.0]];
        assert_eq!(morton_key(&v, &frame), 0x5555_5555);
        let v = [[0.0, 1.0], [0.0, 1.0], [0.0, 1.0]];
        assert_eq!(morton_key(&v, &frame), 0xaaaa_aaaa);
        // Outside the box: clamped.
        let v = [[-1.0, 2.0], [-1.0, 2.0], [-1.0, 2.0]];
        assert_eq!(morton_key(&v, &frame), 0xaaaa_aaaa);
    }
}
