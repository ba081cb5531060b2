//! The adaptive mesh in a checkpoint: the trees of an adaptive DG run as named sections of a
//! [`Checkpoint`], and their checks on the way back, so that a restart continues on the mesh
//! the run had, slot for slot and id for id.
//!
//! Two forms. On the device path (once the trees live there) the section [`DEVICE_TREES`]
//! holds the device's words ([`GpuAdaptation::state_words`](super::amr::gpu::GpuAdaptation::state_words):
//! counters, free rings with their heads, f32 vertices), read with the tree capacity the run
//! had ([`TreeWords`]). On the host path (and before the first device adaptation) the sections
//! `host ...` hold the [`FlatTree`] of the f64 [`AdaptiveMesh`], vertices as f64 bits. Either
//! is checked ([`check_flat`]) before any of it is used: a tree that parsed but does not hold
//! together is an error naming the element or edge, never a panic later.

use super::amr::gpu::TreeWords;
use super::amr::tree::FlatTree;
use super::amr::{AdaptiveMesh, NONE};
use crate::checkpoint::{unusable, Checkpoint};
use crate::error::Result;
use std::path::Path;

/// Section of the device's tree words.
pub const DEVICE_TREES: &str = "device trees";

/// Sections of the host's trees, in the order written.
const HOST_SECTIONS: [&str; 9] = [
    "host element tree",
    "host element edges",
    "host element vertices",
    "host edge tree",
    "host edge sides",
    "host slots",
    "host free element blocks",
    "host free split blocks",
    "host free interior blocks",
];

/// Append the host trees `flat` to `ck` (vertices as the bits of their f64 coordinates).
pub fn push_host_trees(ck: &mut Checkpoint, flat: &FlatTree) {
    let flatten = |v: &[[u32; 4]]| v.iter().flatten().copied().collect::<Vec<u32>>();
    let vertices: Vec<u32> = flat
        .element_vertices
        .iter()
        .flatten()
        .flatten()
        .flat_map(|x| {
            let b = x.to_bits();
            [b as u32, (b >> 32) as u32]
        })
        .collect();
    let sides: Vec<u32> = flat
        .edge_sides
        .iter()
        .flatten()
        .flatten()
        .copied()
        .collect();
    let parts: [&[u32]; 9] = [
        &flatten(&flat.element_tree),
        &flatten(&flat.element_edges),
        &vertices,
        &flatten(&flat.edge_tree),
        &sides,
        &flat.slots,
        &flat.free[0],
        &flat.free[1],
        &flat.free[2],
    ];
    for (name, words) in HOST_SECTIONS.iter().zip(parts) {
        ck.push_section(name, words);
    }
}

/// The host trees of [`push_host_trees`], with lengths checked.
fn read_host_trees(ck: &Checkpoint, path: &Path) -> Result<FlatTree> {
    let mut parts = Vec::with_capacity(HOST_SECTIONS.len());
    for name in HOST_SECTIONS {
        parts.push(ck.section(path, name)?);
    }
    let ne = parts[0].len() / 4;
    let nd = parts[3].len() / 4;
    let lengths = [4 * ne, 4 * ne, 12 * ne, 4 * nd, 4 * nd];
    for (k, &len) in lengths.iter().enumerate() {
        if parts[k].len() != len {
            return Err(unusable(
                path,
                &format!(
                    "section '{}' has {} words, {len} for {ne} elements and {nd} edges",
                    HOST_SECTIONS[k],
                    parts[k].len()
                ),
            ));
        }
    }
    let quads = |w: &[u32]| -> Vec<[u32; 4]> {
        w.chunks_exact(4)
            .map(|q| [q[0], q[1], q[2], q[3]])
            .collect()
    };
    let coordinate = |w: &[u32]| f64::from_bits(u64::from(w[0]) | u64::from(w[1]) << 32);
    Ok(FlatTree {
        element_tree: quads(parts[0]),
        element_edges: quads(parts[1]),
        element_vertices: parts[2]
            .chunks_exact(12)
            .map(|v| {
                std::array::from_fn(|j| {
                    [
                        coordinate(&v[4 * j..4 * j + 2]),
                        coordinate(&v[4 * j + 2..4 * j + 4]),
                    ]
                })
            })
            .collect(),
        edge_tree: quads(parts[3]),
        edge_sides: parts[4]
            .chunks_exact(4)
            .map(|s| [[s[0], s[1]], [s[2], s[3]]])
            .collect(),
        slots: parts[5].to_vec(),
        free: [parts[6].to_vec(), parts[7].to_vec(), parts[8].to_vec()],
    })
}

/// The adaptive mesh a checkpoint holds, in either form, checked: `device` says how the
/// device's words were written (None: the checkpoint must hold the host form).
pub fn read_trees(
    ck: &Checkpoint,
    path: &Path,
    max_level: u8,
    base_colors: u8,
    device: Option<TreeWords>,
) -> Result<AdaptiveMesh> {
    let bad = |e: crate::error::Error| unusable(path, &format!("its adaptive mesh: {e}"));
    let mesh = match device {
        Some(words) => words.decode(ck.section(path, DEVICE_TREES)?).map_err(bad)?,
        None => AdaptiveMesh::from_flat(&read_host_trees(ck, path)?, max_level, base_colors)
            .map_err(bad)?,
    };
    check_flat(&mesh.to_flat(), max_level, base_colors).map_err(bad)?;
    Ok(mesh)
}

/// What the faces, the DG mesh and the solver take for granted of trees that
/// [`AdaptiveMesh::from_flat`] accepted (ids in range): the slots and the active elements'
/// positions name each other one to one, active elements are leaves within `max_level`, every
/// face's elements (its own or its parent edge's) are active, a child edge is one of its
/// parent's two, colors are below 2K, free blocks lie within the ids.
pub fn check_flat(flat: &FlatTree, max_level: u8, base_colors: u8) -> Result<()> {
    let bad = |msg: String| Err(crate::error::Error::Invalid(msg));
    let (ne, nd, n) = (
        flat.element_tree.len(),
        flat.edge_tree.len(),
        flat.slots.len(),
    );
    if n == 0 {
        return bad("no active element".into());
    }
    for (slot, &id) in flat.slots.iter().enumerate() {
        let e = flat.element_tree.get(id as usize);
        if e.is_none_or(|e| e[3] as usize != slot || e[2] != NONE || e[0] > u32::from(max_level)) {
            return bad(format!(
                "slot {slot} holds element {id}, which is not an active leaf there"
            ));
        }
    }
    for (id, e) in flat.element_tree.iter().enumerate() {
        if e[3] != NONE && flat.slots.get(e[3] as usize) != Some(&(id as u32)) {
            return bad(format!(
                "element {id} claims slot {}, which holds another",
                e[3]
            ));
        }
        if e[2] != NONE && e[2] as usize + 4 > ne {
            return bad(format!("element {id} has children past the element ids"));
        }
    }
    let active = |id: u32| {
        flat.element_tree
            .get(id as usize)
            .is_some_and(|e| e[3] != NONE)
    };
    let colors = 2 * u32::from(base_colors);
    for (id, (t, sides)) in flat.edge_tree.iter().zip(&flat.edge_sides).enumerate() {
        if (t[0] >> super::amr::tree::EDGE_COLOR_SHIFT & 0xff) >= colors {
            return bad(format!(
                "edge {id} has color {} of {colors}",
                t[0] >> 8 & 0xff
            ));
        }
        if t[2] != NONE && t[2] as usize + 2 > nd {
            return bad(format!("edge {id} has children past the edge ids"));
        }
        let leaf = t[0] & super::amr::tree::EDGE_ALIVE_BIT != 0 && t[2] == NONE;
        if !leaf {
            continue;
        }
        let parent = match t[1] {
            NONE => None,
            p => match (
                flat.edge_tree.get(p as usize),
                flat.edge_sides.get(p as usize),
            ) {
                (Some(pt), Some(ps)) if (pt[2]..pt[2].saturating_add(2)).contains(&(id as u32)) => {
                    Some(ps)
                }
                _ => return bad(format!("edge {id} is not a child of its parent edge {p}")),
            },
        };
        for (s, side) in sides.iter().enumerate() {
            let own = side[0];
            let through_parent = parent.map_or(NONE, |ps| ps[s][0]);
            if (own != NONE && !active(own))
                || (own == NONE && through_parent != NONE && !active(through_parent))
            {
                return bad(format!("face {id} lies on an element that is not active"));
            }
        }
    }
    let blocks = [(4usize, ne), (2, nd), (3, nd)];
    for (r, (free, (len, ids))) in flat.free.iter().zip(blocks).enumerate() {
        if let Some(b) = free.iter().find(|&&b| b as usize + len > ids) {
            return bad(format!("free block {b} of list {r} lies past the ids"));
        }
    }
    Ok(())
}
