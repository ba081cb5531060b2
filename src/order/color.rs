//! Color-based renumbering, GK Algorithm 5 ("Reordering and renumbering").
//!
//! With faces grouped by color and `N1` faces in the first color group, the left and right
//! elements of the k-th face of that group become elements `k` and `N1 + k`: threads k of the
//! first surface pass read and write elements k and N1 + k, fully coalesced. With the minimal
//! number of colors every element has exactly one face of each color, so this numbers every
//! element. Faces of the other colors cannot be helped by element numbering any more; they are
//! sorted by ascending left element so at least the left accesses are mostly in order.
//!
//! Refinements over the paper's pseudocode, each keeping its layout:
//! * boundary faces of the first group are placed after its interior faces, so the property
//!   "left = k, right = N1 + k" holds for *every* interior face of the group (GK's counter only
//!   advances on interior faces, which would shift the right elements after each boundary
//!   face);
//! * the first group is the color class that covers the most elements (all of them, and so
//!   every class ties, for minimal colorings of single-kind meshes); it is relabelled color 0;
//! * elements the first group does not reach (hybrid meshes, fallback colorings) are numbered
//!   after the others, in order;
//! * optionally the first group is sorted by an element rank (e.g. RCM position), so that
//!   elements 0..N1 and N1.. each inherit that locality ("rcm+color").

use crate::error::{Error, Result};
use crate::mesh::topology::{Topology, NO_ELEMENT};

const NONE: u32 = u32::MAX;

/// GK Algorithm 5's output.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ColorRenumbering {
    /// Element permutation, `new -> old`.
    pub element_new_to_old: Vec<u32>,
    /// Faces of the first color group in their new order.
    pub first_group: Vec<u32>,
    /// Interior faces at the start of `first_group` (the layout holds for k < this).
    pub first_group_interior: usize,
    /// Old color -> new color: the chosen first class becomes 0, the others keep their order.
    pub color_map: Vec<u8>,
}

/// Run GK Algorithm 5 on a proper face coloring (`colors[f] < num_colors`). `rank`, when
/// given, orders the first group by the rank of its lower-ranked element (and makes that
/// element the "left" one, numbered k).
pub fn color_renumbering(
    topo: &Topology,
    num_elements: usize,
    colors: &[u8],
    num_colors: usize,
    rank: Option<&[u32]>,
) -> Result<ColorRenumbering> {
    let nf = topo.num_faces();
    if colors.len() != nf {
        return Err(Error::Invalid(format!(
            "color renumbering: {} colors for {nf} faces",
            colors.len()
        )));
    }
    if let Some(f) = colors.iter().position(|&c| c as usize >= num_colors) {
        return Err(Error::Invalid(format!(
            "color renumbering: face {f} has color {} of {num_colors}",
            colors[f]
        )));
    }
    if rank.is_some_and(|r| r.len() != num_elements) {
        return Err(Error::Invalid(
            "color renumbering: rank length differs from the element count".into(),
        ));
    }
    // The class covering most elements goes first.
    let mut cover = vec![0usize; num_colors];
    for f in 0..nf {
        cover[colors[f] as usize] += if topo.right[f] == NO_ELEMENT { 1 } else { 2 };
    }
    let first = (0..num_colors)
        .max_by_key(|&c| (cover[c], std::cmp::Reverse(c)))
        .unwrap_or(0);
    let mut color_map: Vec<u8> = vec![0; num_colors];
    let mut next = 1u8;
    for (c, m) in color_map.iter_mut().enumerate() {
        if c == first {
            *m = 0;
        } else {
            *m = next;
            next += 1;
        }
    }

    let mut interior: Vec<u32> = Vec::new();
    let mut boundary: Vec<u32> = Vec::new();
    for (f, &c) in colors.iter().enumerate() {
        if c as usize == first {
            if topo.right[f] == NO_ELEMENT {
                boundary.push(f as u32);
            } else {
                interior.push(f as u32);
            }
        }
    }
    // (face, element numbered k, element numbered N1 + k).
    let mut pairs: Vec<(u32, u32, u32)> = interior
        .iter()
        .map(|&f| {
            let (l, r) = (topo.left[f as usize], topo.right[f as usize]);
            match rank {
                Some(rk) if rk[r as usize] < rk[l as usize] => (f, r, l),
                _ => (f, l, r),
            }
        })
        .collect();
    if let Some(rk) = rank {
        pairs.sort_by_key(|&(_, a, _)| rk[a as usize]);
        boundary.sort_by_key(|&f| rk[topo.left[f as usize] as usize]);
    }
    let n1 = pairs.len() + boundary.len();
    let mut new_id = vec![NONE; num_elements];
    let mut assign = |e: u32, id: usize| -> Result<()> {
        if new_id[e as usize] != NONE {
            return Err(Error::Invalid(format!(
                "color renumbering: element {e} has two faces of color {first}; the coloring is not proper"
            )));
        }
        new_id[e as usize] = id as u32;
        Ok(())
    };
    for (k, &(_, a, b)) in pairs.iter().enumerate() {
        assign(a, k)?;
        assign(b, n1 + k)?;
    }
    for (k, &f) in boundary.iter().enumerate() {
        assign(topo.left[f as usize], pairs.len() + k)?;
    }
    let mut rest: Vec<u32> = (0..num_elements as u32)
        .filter(|&e| new_id[e as usize] == NONE)
        .collect();
    if let Some(rk) = rank {
        rest.sort_by_key(|&e| rk[e as usize]);
    }
    for (i, e) in rest.into_iter().enumerate() {
        new_id[e as usize] = (n1 + pairs.len() + i) as u32;
    }
    let mut element_new_to_old = vec![0u32; num_elements];
    for (old, &new) in new_id.iter().enumerate() {
        element_new_to_old[new as usize] = old as u32;
    }
    let mut first_group: Vec<u32> = pairs.iter().map(|p| p.0).collect();
    first_group.extend_from_slice(&boundary);
    Ok(ColorRenumbering {
        element_new_to_old,
        first_group_interior: pairs.len(),
        first_group,
        color_map,
    })
}
