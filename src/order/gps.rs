//! Gibbs–Poole–Stockmeyer (GPS) bandwidth and profile reduction.
//!
//! Per connected component:
//!
//! 1. **Pseudo-diameter.** From a minimum-degree node v build L(v); for the nodes w of the last
//!    level, by increasing degree (one per distinct degree, Lewis's shrinking, so the cost stays
//!    a handful of searches), build L(w). If some L(w) is deeper, restart from w. Otherwise the
//!    endpoints are v and the w whose L(w) has the smallest width.
//! 2. **Level structure of minimal width.** Each node x gets the pair (i, j) = (level of x in
//!    L(v), depth - 1 - level of x in L(u)). Nodes with i = j are placed at that level. The
//!    others fall into connected components, processed from largest to smallest: a component
//!    goes wholly to its i-levels or wholly to its j-levels, whichever gives the smaller
//!    maximum level width (ties: the side whose rooted structure was narrower).
//! 3. **Numbering.** Start at the endpoint of smaller degree (level 0). Level by level: number
//!    the unnumbered neighbours in the current level of the already numbered nodes of the
//!    level, in numbering order, by increasing degree; then carry on into the next level from
//!    the numbered nodes of this level, again by increasing degree; a level with nodes left
//!    unreached restarts from its minimum-degree unnumbered node.
//!
//! Bandwidth is invariant under reversing the order; the direction with the smaller profile is
//! kept (reversal usually wins, as for Cuthill–McKee).

use super::rcm::{degrees, Bfs, Levels};
use crate::mesh::topology::Csr;

const NONE: u32 = u32::MAX;

/// Per-node work arrays shared by all components (entries of a component are reset to NONE
/// before the next one starts, so nothing is cleared globally).
struct Work {
    /// Level in L(v) (the "i" of the pair).
    ilev: Vec<u32>,
    /// Reversed level in L(u) (the "j" of the pair).
    jlev: Vec<u32>,
    /// Combined level.
    level: Vec<u32>,
    /// Numbered flag.
    numbered: Vec<bool>,
    /// Position scratch for profiles.
    pos: Vec<u32>,
}

/// GPS order: `perm[new] = old`.
pub fn gps(graph: &Csr) -> Vec<u32> {
    let n = graph.num_rows();
    let degree = degrees(graph);
    let mut bfs = Bfs::new(n);
    let mut done = vec![false; n];
    let mut work = Work {
        ilev: vec![NONE; n],
        jlev: vec![NONE; n],
        level: vec![NONE; n],
        numbered: vec![false; n],
        pos: vec![NONE; n],
    };
    let mut order = Vec::with_capacity(n);
    for s in 0..n as u32 {
        if done[s as usize] {
            continue;
        }
        let comp = bfs.levels(graph, s, |_| true);
        for &v in &comp.nodes {
            done[v as usize] = true;
        }
        let start = comp
            .nodes
            .iter()
            .copied()
            .min_by_key(|&v| (degree[v as usize], v))
            .unwrap_or(s);
        let (v, u, lv, lu) = pseudo_diameter(graph, &degree, start, &mut bfs);
        let k = combine_levels(graph, &comp.nodes, &lv, &lu, &mut work);
        let mut comp_order = number(graph, &degree, &comp.nodes, v, u, k, &mut work);
        // Keep the direction with the smaller profile (bandwidth is the same both ways).
        let forward = component_profile(graph, &comp_order, &mut work.pos);
        comp_order.reverse();
        let backward = component_profile(graph, &comp_order, &mut work.pos);
        if forward < backward {
            comp_order.reverse();
        }
        for &x in &comp.nodes {
            work.ilev[x as usize] = NONE;
            work.jlev[x as usize] = NONE;
            work.level[x as usize] = NONE;
        }
        order.extend_from_slice(&comp_order);
    }
    order
}

/// Endpoints (v, u) of a pseudo-diameter with their rooted level structures.
fn pseudo_diameter(
    graph: &Csr,
    degree: &[u32],
    start: u32,
    bfs: &mut Bfs,
) -> (u32, u32, Levels, Levels) {
    let mut v = start;
    let mut lv = bfs.levels(graph, v, |_| true);
    // The depth grows strictly at every restart, so this loop is bounded by the component size.
    'outer: loop {
        let last = lv.level(lv.depth() - 1);
        let mut cands: Vec<(u32, u32)> = last.iter().map(|&w| (degree[w as usize], w)).collect();
        cands.sort_unstable();
        cands.dedup_by_key(|c| c.0);
        let mut best: Option<(usize, u32, Levels)> = None;
        for &(_, w) in &cands {
            if w == v {
                continue;
            }
            let lw = bfs.levels(graph, w, |_| true);
            if lw.depth() > lv.depth() {
                v = w;
                lv = lw;
                continue 'outer;
            }
            let width = lw.width();
            if best.as_ref().is_none_or(|b| width < b.0) {
                best = Some((width, w, lw));
            }
        }
        return match best {
            Some((_, u, lu)) => (v, u, lv, lu),
            None => {
                // Single-node component.
                let lu = lv.clone();
                (v, v, lv, lu)
            }
        };
    }
}

/// Step 2: the combined level of every node of the component, in `work.level`; returns the
/// number of levels.
fn combine_levels(graph: &Csr, nodes: &[u32], lv: &Levels, lu: &Levels, work: &mut Work) -> usize {
    let k = lv.depth();
    for l in 0..k {
        for &x in lv.level(l) {
            work.ilev[x as usize] = l as u32;
        }
    }
    // L(u) is at most as deep as L(v) (else v would have been replaced by u).
    for l in 0..lu.depth() {
        for &x in lu.level(l) {
            work.jlev[x as usize] = (k - 1).saturating_sub(l) as u32;
        }
    }
    let mut width = vec![0usize; k];
    let mut loose: Vec<u32> = Vec::new();
    for &x in nodes {
        let x = x as usize;
        if work.ilev[x] == work.jlev[x] {
            work.level[x] = work.ilev[x];
            width[work.ilev[x] as usize] += 1;
        } else {
            loose.push(x as u32);
        }
    }
    // Connected components of the loose nodes (BFS through loose nodes only; a visited loose
    // node is tagged with level IN_COMPONENT until its component is placed).
    const IN_COMPONENT: u32 = NONE - 1;
    let mut comps: Vec<Vec<u32>> = Vec::new();
    for &x in &loose {
        if work.level[x as usize] != NONE {
            continue;
        }
        work.level[x as usize] = IN_COMPONENT;
        let mut comp = vec![x];
        let mut head = 0;
        while head < comp.len() {
            let y = comp[head] as usize;
            head += 1;
            for &w in graph.row(y) {
                if work.level[w as usize] == NONE {
                    work.level[w as usize] = IN_COMPONENT;
                    comp.push(w);
                }
            }
        }
        comps.push(comp);
    }
    comps.sort_by_key(|c| std::cmp::Reverse(c.len()));
    let v_narrower = lv.width() <= lu.width();
    let mut count_i = vec![0usize; k];
    let mut count_j = vec![0usize; k];
    for comp in &comps {
        for &y in comp {
            count_i[work.ilev[y as usize] as usize] += 1;
            count_j[work.jlev[y as usize] as usize] += 1;
        }
        let widest = |count: &[usize]| {
            (0..k)
                .filter(|&l| count[l] > 0)
                .map(|l| width[l] + count[l])
                .max()
                .unwrap_or(0)
        };
        let (h, l) = (widest(&count_i), widest(&count_j));
        let use_i = h < l || (h == l && v_narrower);
        for &y in comp {
            let y = y as usize;
            count_i[work.ilev[y] as usize] = 0;
            count_j[work.jlev[y] as usize] = 0;
            let lvl = if use_i { work.ilev[y] } else { work.jlev[y] };
            work.level[y] = lvl;
            width[lvl as usize] += 1;
        }
    }
    k
}

/// Step 3: number the component level by level (see module doc).
fn number(
    graph: &Csr,
    degree: &[u32],
    nodes: &[u32],
    v: u32,
    u: u32,
    k: usize,
    work: &mut Work,
) -> Vec<u32> {
    // Start from the end of smaller degree; if that is u, flip the levels.
    let start = if degree[u as usize] < degree[v as usize] {
        for &x in nodes {
            work.level[x as usize] = (k - 1) as u32 - work.level[x as usize];
        }
        u
    } else {
        v
    };
    // Nodes sorted by (level, degree, index), for the restart rule.
    let mut sorted = nodes.to_vec();
    sorted.sort_unstable_by_key(|&x| (work.level[x as usize], degree[x as usize], x));
    let mut level_begin = vec![0usize; k + 1];
    for &x in &sorted {
        level_begin[work.level[x as usize] as usize + 1] += 1;
    }
    for l in 0..k {
        level_begin[l + 1] += level_begin[l];
    }
    let level = &work.level;
    let numbered = &mut work.numbered;
    let mut order: Vec<u32> = Vec::with_capacity(nodes.len());
    let mut buf: Vec<(u32, u32)> = Vec::new();
    // Append the unnumbered neighbours of `x` that lie in level `l`, by increasing degree.
    let mut push_neighbours = |x: u32, l: u32, order: &mut Vec<u32>, numbered: &mut [bool]| {
        buf.clear();
        for &w in graph.row(x as usize) {
            if level[w as usize] == l && !numbered[w as usize] {
                numbered[w as usize] = true;
                buf.push((degree[w as usize], w));
            }
        }
        buf.sort_unstable();
        order.extend(buf.iter().map(|&(_, w)| w));
    };
    let mut level_start = 0usize;
    for l in 0..k {
        let l32 = l as u32;
        if l == 0 {
            order.push(start);
            numbered[start as usize] = true;
        } else {
            let prev_end = order.len();
            for idx in level_start..prev_end {
                push_neighbours(order[idx], l32, &mut order, numbered);
            }
            level_start = prev_end;
        }
        let mut head = level_start;
        let mut cursor = level_begin[l];
        loop {
            while head < order.len() {
                push_neighbours(order[head], l32, &mut order, numbered);
                head += 1;
            }
            while cursor < level_begin[l + 1] && numbered[sorted[cursor] as usize] {
                cursor += 1;
            }
            if cursor == level_begin[l + 1] {
                break;
            }
            let w = sorted[cursor];
            numbered[w as usize] = true;
            order.push(w);
        }
    }
    order
}

/// Profile of a component numbered by `order`, using `pos` (NONE on entry and exit) for the
/// positions.
fn component_profile(graph: &Csr, order: &[u32], pos: &mut [u32]) -> u64 {
    for (p, &x) in order.iter().enumerate() {
        pos[x as usize] = p as u32;
    }
    let mut total = 0u64;
    for (p, &x) in order.iter().enumerate() {
        let first = graph
            .row(x as usize)
            .iter()
            .map(|&w| pos[w as usize])
            .min()
            .unwrap_or(p as u32)
            .min(p as u32);
        total += (p as u32 - first) as u64;
    }
    for &x in order {
        pos[x as usize] = NONE;
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grid(nx: u32, ny: u32) -> Csr {
        let id = |i: u32, j: u32| j * nx + i;
        let mut pairs = Vec::new();
        for j in 0..ny {
            for i in 0..nx {
                if i + 1 < nx {
                    pairs.push((id(i, j), id(i + 1, j)));
                    pairs.push((id(i + 1, j), id(i, j)));
                }
                if j + 1 < ny {
                    pairs.push((id(i, j), id(i, j + 1)));
                    pairs.push((id(i, j + 1), id(i, j)));
                }
            }
        }
        pairs.sort_unstable();
        Csr::from_pairs((nx * ny) as usize, &pairs)
    }

    #[test]
    fn grid_bandwidth_is_the_short_side() {
        let g = grid(20, 5);
        let perm = gps(&g);
        assert!(crate::order::is_permutation(&perm));
        let inv = crate::order::invert_permutation(&perm);
        // Diagonal levels of width <= 5: bandwidth at most about two level widths.
        let bw = crate::order::bandwidth(&g, Some(&inv));
        assert!(bw <= 2 * 5, "gps bandwidth {bw}");
    }
}
