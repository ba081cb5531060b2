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
//!
//! [`chain_renumbering`] ("chain+color") keeps that layout for the first group and also makes
//! the second one coalesced; see its documentation.

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

/// Input checks shared by the renumberings.
fn check_inputs(
    topo: &Topology,
    num_elements: usize,
    colors: &[u8],
    num_colors: usize,
    rank: Option<&[u32]>,
) -> Result<()> {
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
    Ok(())
}

/// The class covering the most elements (ties: the lowest color).
fn first_class(topo: &Topology, colors: &[u8], num_colors: usize) -> usize {
    let mut cover = vec![0usize; num_colors];
    for (f, &c) in colors.iter().enumerate() {
        cover[c as usize] += if topo.right[f] == NO_ELEMENT { 1 } else { 2 };
    }
    (0..num_colors)
        .max_by_key(|&c| (cover[c], std::cmp::Reverse(c)))
        .unwrap_or(0)
}

/// Old color -> new color: `leading[i]` becomes i, the others follow in their order.
fn color_map_with(num_colors: usize, leading: &[usize]) -> Vec<u8> {
    let mut color_map: Vec<u8> = vec![0; num_colors];
    let mut next = leading.len() as u8;
    for (c, m) in color_map.iter_mut().enumerate() {
        if let Some(i) = leading.iter().position(|&l| l == c) {
            *m = i as u8;
        } else {
            *m = next;
            next += 1;
        }
    }
    color_map
}

fn not_proper(e: u32, color: usize) -> Error {
    Error::Invalid(format!(
        "color renumbering: element {e} has two faces of color {color}; the coloring is not proper"
    ))
}

/// Interior and boundary faces of color `class`, in face order.
fn class_faces(topo: &Topology, colors: &[u8], class: usize) -> (Vec<u32>, Vec<u32>) {
    let mut interior: Vec<u32> = Vec::new();
    let mut boundary: Vec<u32> = Vec::new();
    for (f, &c) in colors.iter().enumerate() {
        if c as usize == class {
            if topo.right[f] == NO_ELEMENT {
                boundary.push(f as u32);
            } else {
                interior.push(f as u32);
            }
        }
    }
    (interior, boundary)
}

/// Number the elements: pair k of `pairs` = (element numbered k, element numbered N1 + k)
/// with N1 = pairs + boundary faces; the boundary faces' elements come next
/// (pairs.len() + j, ordered by `rank` when given), then every element not yet numbered
/// (by `rank` when given, else in order). Returns `new -> old`.
fn number_elements(
    topo: &Topology,
    num_elements: usize,
    pairs: &[(u32, u32)],
    boundary: &mut [u32],
    first: usize,
    rank: Option<&[u32]>,
) -> Result<Vec<u32>> {
    if let Some(rk) = rank {
        boundary.sort_by_key(|&f| rk[topo.left[f as usize] as usize]);
    }
    let n1 = pairs.len() + boundary.len();
    let mut new_id = vec![NONE; num_elements];
    let mut assign = |e: u32, id: usize| -> Result<()> {
        if new_id[e as usize] != NONE {
            return Err(not_proper(e, first));
        }
        new_id[e as usize] = id as u32;
        Ok(())
    };
    for (k, &(a, b)) in pairs.iter().enumerate() {
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
    Ok(element_new_to_old)
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
    check_inputs(topo, num_elements, colors, num_colors, rank)?;
    // The class covering most elements goes first.
    let first = first_class(topo, colors, num_colors);
    let color_map = color_map_with(num_colors, &[first]);

    let (interior, mut boundary) = class_faces(topo, colors, first);
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
    }
    let ends: Vec<(u32, u32)> = pairs.iter().map(|&(_, a, b)| (a, b)).collect();
    let element_new_to_old =
        number_elements(topo, num_elements, &ends, &mut boundary, first, rank)?;
    let mut first_group: Vec<u32> = pairs.iter().map(|p| p.0).collect();
    first_group.extend_from_slice(&boundary);
    Ok(ColorRenumbering {
        element_new_to_old,
        first_group_interior: pairs.len(),
        first_group,
        color_map,
    })
}

/// GK Algorithm 5 with the first group ordered along chains, so that the second color group
/// is coalesced too ("chain+color").
///
/// The interior faces of the first class (relabelled color 0) pair elements (a, b). Each
/// element has at most one face of the second class (relabelled color 1), so under the links
/// "a color-1 face between elements of two different pairs" every pair has at most two
/// neighbours: the pairs form paths and cycles (the union of two matchings). Each path or
/// cycle is walked pair by pair and numbered in walk order, every pair oriented so that it is
/// entered at a and left at b: pair k's elements become k (a_k) and N1 + k (b_k), exactly
/// Algorithm 5's layout, and the color-1 face leaving pair k from b_k enters pair k + 1 at
/// a_{k+1}. That face joins elements k + 1 and N1 + k, so the color-1 group, sorted by lower
/// element, has thread j reading elements j and N1 + j - 1: consecutive on both sides along
/// every chain. Only the first face of each chain breaks the pattern: a path's first pair has
/// no incoming face (its a-element's color-1 face, if any, goes to the boundary or to an
/// element outside the pairs), and a cycle's closing face joins its first and last pair.
///
/// Paths are walked from one of their ends, cycles are broken anywhere. Without `rank` the
/// chains are numbered in walk order (walks start in face order). With `rank` (e.g. RCM or
/// breadth-first positions; a pair's rank is the lower rank of its two elements) walks start
/// at the lowest-ranked free end, then cycle pair; a chain is cut where a pair's rank differs
/// from its piece's first pair's rank by more than `max_spread`, and the pieces are numbered in
/// order of their first pair's rank. In a 3-colored triangle mesh the chains are mostly short
/// (median ~5 pairs) but heavy-tailed (a third of the pairs lie in chains of over 1000 pairs at
/// 200K triangles): such chains snake across the mesh and scatter the third color's faces over
/// the whole numbering; cut to rank bands, they stay where the rank puts them, for one break in
/// color 1 per cut.
///
/// The second class is the non-first class with the most faces between two different pairs
/// (ties: the lowest color). Boundary faces of the first class and elements in no pair are
/// numbered as in Algorithm 5, after the pairs. O(faces + elements), plus O(n log n) for
/// sorting by `rank`.
pub fn chain_renumbering(
    topo: &Topology,
    num_elements: usize,
    colors: &[u8],
    num_colors: usize,
    rank: Option<&[u32]>,
    max_spread: Option<u32>,
) -> Result<ColorRenumbering> {
    check_inputs(topo, num_elements, colors, num_colors, rank)?;
    let first = first_class(topo, colors, num_colors);
    let (interior, mut boundary) = class_faces(topo, colors, first);
    let np = interior.len();
    // Ends of the pairs: end 2p + s is pair p's left (s = 0) or right (s = 1) element.
    let mut end_element = Vec::with_capacity(2 * np);
    let mut end_of = vec![NONE; num_elements];
    for &f in &interior {
        for e in [topo.left[f as usize], topo.right[f as usize]] {
            if end_of[e as usize] != NONE {
                return Err(not_proper(e, first));
            }
            end_of[e as usize] = end_element.len() as u32;
            end_element.push(e);
        }
    }
    // The ends a face joins, when they belong to two different pairs.
    let joined = |f: usize| -> Option<(u32, u32)> {
        let r = topo.right[f];
        if r == NO_ELEMENT {
            return None;
        }
        let (x, y) = (end_of[topo.left[f] as usize], end_of[r as usize]);
        (x != NONE && y != NONE && x / 2 != y / 2).then_some((x, y))
    };
    let mut joins = vec![0usize; num_colors];
    for (f, &c) in colors.iter().enumerate() {
        if c as usize != first && joined(f).is_some() {
            joins[c as usize] += 1;
        }
    }
    let second = (0..num_colors)
        .filter(|&c| c != first)
        .max_by_key(|&c| (joins[c], std::cmp::Reverse(c)));
    // link[end]: the end across that end's color-1 face, if it joins another pair.
    let mut link = vec![NONE; 2 * np];
    if let Some(second) = second {
        for (f, &c) in colors.iter().enumerate() {
            if c as usize != second {
                continue;
            }
            if let Some((x, y)) = joined(f) {
                if let Some(&e) = [x, y].iter().find(|&&e| link[e as usize] != NONE) {
                    return Err(not_proper(end_element[e as usize], second));
                }
                link[x as usize] = y;
                link[y as usize] = x;
            }
        }
    }
    let pair_rank = |rk: &[u32], a: u32| -> u32 {
        rk[end_element[a as usize] as usize].min(rk[end_element[(a ^ 1) as usize] as usize])
    };
    // Walk starts: ends by rank of their element, else in order.
    let starts: Vec<u32> = match rank {
        Some(rk) => {
            let mut keyed: Vec<u64> = (0..2 * np as u64)
                .map(|x| (rk[end_element[x as usize] as usize] as u64) << 32 | x)
                .collect();
            keyed.sort_unstable();
            keyed.into_iter().map(|k| k as u32).collect()
        }
        None => (0..2 * np as u32).collect(),
    };
    // chain[k]: the end pair k is entered at (its a-element); pieces[i]..pieces[i + 1] is a
    // chain or a piece of one.
    let mut chain: Vec<u32> = Vec::with_capacity(np);
    let mut pieces: Vec<usize> = Vec::new();
    let mut visited = vec![false; np];
    let mut walk = |mut a: u32, chain: &mut Vec<u32>, pieces: &mut Vec<usize>| {
        let start = chain.len();
        let mut piece_rank: Option<u32> = None;
        while !visited[a as usize / 2] {
            visited[a as usize / 2] = true;
            if chain.len() == start {
                pieces.push(start);
            }
            if let (Some(rk), Some(spread)) = (rank, max_spread) {
                let r = pair_rank(rk, a);
                match piece_rank {
                    Some(r0) if r.abs_diff(r0) > spread => {
                        pieces.push(chain.len());
                        piece_rank = Some(r);
                    }
                    None => piece_rank = Some(r),
                    _ => {}
                }
            }
            chain.push(a);
            let next = link[(a ^ 1) as usize];
            if next == NONE {
                break;
            }
            a = next;
        }
    };
    // Paths, from an end without a link; then what is left (cycles), broken at the start.
    for &x in &starts {
        if link[x as usize] == NONE {
            walk(x, &mut chain, &mut pieces);
        }
    }
    for &x in &starts {
        walk(x, &mut chain, &mut pieces);
    }
    debug_assert_eq!(chain.len(), np);
    pieces.push(np);
    if let Some(rk) = rank {
        let mut order: Vec<(u32, usize, usize)> = pieces
            .windows(2)
            .map(|w| (pair_rank(rk, chain[w[0]]), w[0], w[1]))
            .collect();
        order.sort_by_key(|p| p.0);
        chain = order
            .iter()
            .flat_map(|&(_, a, b)| chain[a..b].iter().copied())
            .collect();
    }
    let pairs: Vec<(u32, u32)> = chain
        .iter()
        .map(|&a| (end_element[a as usize], end_element[(a ^ 1) as usize]))
        .collect();
    let element_new_to_old =
        number_elements(topo, num_elements, &pairs, &mut boundary, first, rank)?;
    let mut first_group: Vec<u32> = chain.iter().map(|&a| interior[a as usize / 2]).collect();
    first_group.extend_from_slice(&boundary);
    let leading: Vec<usize> = std::iter::once(first).chain(second).collect();
    Ok(ColorRenumbering {
        element_new_to_old,
        first_group_interior: np,
        first_group,
        color_map: color_map_with(num_colors, &leading),
    })
}
