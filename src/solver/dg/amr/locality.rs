//! Memory locality of an adapted mesh. GK19's compaction fills holes with the last slots, so
//! after many adaptations neighbouring elements sit far apart in memory and the surface
//! kernel (which reads both sides of each face) loses cache hits. This reorders a DG mesh along
//! a Morton (Z-order) curve of the element centroids, then its faces by color and left
//! element, to measure what that order is worth against the adapted one.

use crate::solver::dg::mesh::DgMesh;
use crate::solver::smooth::layout::morton_keys;

/// Element order along the Morton curve of the centroids (quantised to 2^16 per axis of the
/// bounding box); ties keep the current order.
pub fn morton_order(dm: &DgMesh) -> Vec<usize> {
    let centroid = |v: &[[f64; 2]; 3]| {
        [
            (v[0][0] + v[1][0] + v[2][0]) / 3.0,
            (v[0][1] + v[1][1] + v[2][1]) / 3.0,
        ]
    };
    let c: Vec<[f64; 2]> = dm.vertices.iter().map(centroid).collect();
    let keys = morton_keys(&c);
    let mut order: Vec<usize> = (0..c.len()).collect();
    order.sort_by_key(|&i| keys[i]);
    order
}

/// `dm` with its elements in `order` (new element i is old element `order[i]`), and faces
/// sorted within each color by left element, then right element.
pub fn permute(dm: &DgMesh, order: &[usize]) -> DgMesh {
    let n = dm.num_elements;
    let mut new_of = vec![0usize; n];
    for (new, &old) in order.iter().enumerate() {
        new_of[old] = new;
    }
    let pick = |i: usize| order[i];
    let mut out = DgMesh {
        num_elements: n,
        vertices: (0..n).map(|i| dm.vertices[pick(i)]).collect(),
        inv_jacobian: (0..n).map(|i| dm.inv_jacobian[pick(i)]).collect(),
        det: (0..n).map(|i| dm.det[pick(i)]).collect(),
        min_height: (0..n).map(|i| dm.min_height[pick(i)]).collect(),
        neighbors: (0..n)
            .map(|i| dm.neighbors[pick(i)].map(|o| o.map(|j| new_of[j])))
            .collect(),
        edges: Vec::with_capacity(dm.edges.len()),
        color_offsets: dm.color_offsets.clone(),
    };
    for c in 0..dm.num_colors() {
        let mut faces: Vec<_> = dm.edges[dm.color_offsets[c]..dm.color_offsets[c + 1]]
            .iter()
            .map(|e| {
                let mut e = *e;
                e.left = new_of[e.left];
                e.right = e.right.map(|r| new_of[r]);
                e
            })
            .collect();
        faces.sort_by_key(|e| (e.left, e.right));
        out.edges.extend(faces);
    }
    out
}

/// Coefficients `c[eq][k][i]` of `n` elements in the order of [`permute`].
pub fn permute_coefficients(c: &[f64], n: usize, order: &[usize]) -> Vec<f64> {
    c.chunks_exact(n)
        .flat_map(|row| order.iter().map(move |&i| row[i]))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conformance::dg::{adapted_mesh, periodic_mesh};

    #[test]
    fn a_permuted_mesh_has_the_same_faces_and_neighbours() {
        let dm = adapted_mesh(&periodic_mesh(), 3).expect("adapted mesh");
        let order = morton_order(&dm);
        let mut sorted = order.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..dm.num_elements).collect::<Vec<_>>());
        let p = permute(&dm, &order);
        assert_eq!(p.edges.len(), dm.edges.len());
        // Every face maps to one face of the same color with the same data.
        let key =
            |m: &DgMesh, e: &crate::solver::dg::mesh::EdgeInfo, map: &dyn Fn(usize) -> usize| {
                (
                    map(e.left),
                    e.right.map(map),
                    e.left_local,
                    e.right_local,
                    e.right_half,
                    m.vertices[e.left].map(|v| v.map(f64::to_bits)),
                )
            };
        for c in 0..dm.num_colors() {
            let range = |m: &DgMesh| m.color_offsets[c]..m.color_offsets[c + 1];
            let mut a: Vec<_> = dm.edges[range(&dm)]
                .iter()
                .map(|e| key(&dm, e, &|i| i))
                .collect();
            let mut b: Vec<_> = p.edges[range(&p)]
                .iter()
                .map(|e| key(&p, e, &|i| order[i]))
                .collect();
            a.sort();
            b.sort();
            assert_eq!(a, b, "color {c}");
        }
        for (i, &old) in order.iter().enumerate() {
            let got = p.neighbors[i].map(|o| o.map(|j| order[j]));
            assert_eq!(got, dm.neighbors[old], "element {i}");
        }
        // Morton order keeps neighbours closer than the adapted order on average.
        let spread = |m: &DgMesh| -> f64 {
            m.edges
                .iter()
                .filter_map(|e| e.right.map(|r| (r as f64 - e.left as f64).abs()))
                .sum::<f64>()
        };
        assert!(
            spread(&p) <= spread(&dm),
            "{} > {}",
            spread(&p),
            spread(&dm)
        );
    }
}

/// A face is far when its left and right slots differ by more than this
/// (`FAR_SLOTS` of the shaders): about the slots a 32-thread launch over one color's faces
/// spans (left slots about 4 apart).
pub const FAR_SLOTS: usize = 128;

/// The reorder kernels' uniform parameters; mirrors `ReorderParams` in
/// shaders/common/amr_reorder.wgsl (and its CUDA twin).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, bytemuck::Pod, bytemuck::Zeroable)]
pub struct ReorderParams {
    origin: [f32; 2],
    scale: [f32; 2],
    colors: u32,
    face_capacity: u32,
    pad: [u32; 2],
}

/// The grid the keys quantise: a centroid's vertex sum s maps to cell (s - origin) * scale,
/// with origin = 3 (x0, y0) and scale = 65535 / (3 (x1 - x0), 3 (y1 - y0)) over the box of
/// every vertex (refinement stays inside the base mesh's box). A run takes it once, from the
/// host's f64 trees when they first go to the device, and keeps it (checkpoints hold it): the
/// device's f32 trees can give a box that differs in the last bits, and keys near a grid line
/// would then sort differently.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MortonFrame {
    pub origin: [f32; 2],
    pub scale: [f32; 2],
}

/// Faces of `dm` whose left and right slots differ by more than [`FAR_SLOTS`] (what
/// `amr_faces` counts after an adaptation and `amr_permute` after a reorder).
pub fn far_faces(dm: &DgMesh) -> usize {
    dm.edges
        .iter()
        .filter(|e| e.right.is_some_and(|r| r.abs_diff(e.left) > FAR_SLOTS))
        .count()
}

pub(super) fn params(frame: &MortonFrame, colors: usize, face_capacity: usize) -> ReorderParams {
    ReorderParams {
        origin: frame.origin,
        scale: frame.scale,
        colors: colors as u32,
        face_capacity: face_capacity as u32,
        pad: [0; 2],
    }
}
