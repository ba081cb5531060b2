//! Reverse Cuthill–McKee with a George–Liu pseudo-peripheral start node, and the rooted
//! level structures shared with [`super::gps`](mod@super::gps).
//!
//! Cuthill–McKee numbers the nodes breadth-first from a start node, visiting the unnumbered
//! neighbours of each node by increasing degree; reversing the order (George) keeps the
//! bandwidth and usually shrinks the profile. The start node matters: a node of large
//! eccentricity gives many narrow levels. George & Liu's FNROOT finds one cheaply: from a root
//! r build the level structure L(r); take a node x of minimum degree in the last level; if
//! L(x) is deeper than L(r), set r = x and repeat; otherwise x is pseudo-peripheral.
//! Each connected component is handled separately, starting from a minimum-degree node.

use crate::mesh::topology::Csr;

/// Rooted level structure: `nodes` in BFS order, level `i` is
/// `nodes[starts[i]..starts[i+1]]`.
#[derive(Clone, Debug, Default)]
pub(crate) struct Levels {
    pub nodes: Vec<u32>,
    pub starts: Vec<usize>,
}

impl Levels {
    pub fn depth(&self) -> usize {
        self.starts.len().saturating_sub(1)
    }
    pub fn level(&self, i: usize) -> &[u32] {
        &self.nodes[self.starts[i]..self.starts[i + 1]]
    }
    pub fn width(&self) -> usize {
        (0..self.depth())
            .map(|i| self.starts[i + 1] - self.starts[i])
            .max()
            .unwrap_or(0)
    }
}

/// Reusable BFS workspace: `mark[v] == stamp` means visited in the current search.
pub(crate) struct Bfs {
    pub mark: Vec<u32>,
    pub stamp: u32,
}

impl Bfs {
    pub fn new(n: usize) -> Self {
        Bfs {
            mark: vec![0; n],
            stamp: 0,
        }
    }

    fn next_stamp(&mut self) -> u32 {
        self.stamp = self.stamp.wrapping_add(1);
        if self.stamp == 0 {
            self.mark.fill(0);
            self.stamp = 1;
        }
        self.stamp
    }

    /// Level structure rooted at `root`, restricted to nodes with `allowed(v)`.
    pub fn levels(&mut self, graph: &Csr, root: u32, allowed: impl Fn(u32) -> bool) -> Levels {
        let s = self.next_stamp();
        let mut lv = Levels {
            nodes: vec![root],
            starts: Vec::new(),
        };
        self.mark[root as usize] = s;
        let mut begin = 0;
        while begin < lv.nodes.len() {
            let end = lv.nodes.len();
            lv.starts.push(begin);
            for i in begin..end {
                let v = lv.nodes[i] as usize;
                for &w in graph.row(v) {
                    if self.mark[w as usize] != s && allowed(w) {
                        self.mark[w as usize] = s;
                        lv.nodes.push(w);
                    }
                }
            }
            begin = end;
        }
        lv.starts.push(lv.nodes.len());
        lv
    }
}

/// Degree of every node.
pub(crate) fn degrees(graph: &Csr) -> Vec<u32> {
    (0..graph.num_rows())
        .map(|v| graph.offsets[v + 1] - graph.offsets[v])
        .collect()
}

/// George–Liu pseudo-peripheral node of `start`'s component (see module doc). Returns the
/// node and its level structure.
pub(crate) fn pseudo_peripheral(
    graph: &Csr,
    degree: &[u32],
    start: u32,
    bfs: &mut Bfs,
    allowed: &impl Fn(u32) -> bool,
) -> (u32, Levels) {
    let mut r = start;
    let mut lr = bfs.levels(graph, r, allowed);
    // Each accepted step strictly increases the depth, so this ends after at most
    // (component size) steps; in practice two or three.
    loop {
        let last = lr.level(lr.depth() - 1);
        let x = last
            .iter()
            .copied()
            .min_by_key(|&v| (degree[v as usize], v))
            .unwrap_or(r);
        if x == r {
            return (r, lr);
        }
        let lx = bfs.levels(graph, x, allowed);
        if lx.depth() > lr.depth() {
            r = x;
            lr = lx;
        } else {
            return (x, lx);
        }
    }
}

/// Public wrapper: a pseudo-peripheral node of the component containing `start`.
pub fn pseudo_peripheral_node(graph: &Csr, start: u32) -> u32 {
    let degree = degrees(graph);
    let mut bfs = Bfs::new(graph.num_rows());
    pseudo_peripheral(graph, &degree, start, &mut bfs, &|_| true).0
}

/// Cuthill–McKee order of one component from `root`, appended to `order`; neighbours of each
/// node are numbered by increasing degree (ties by index).
fn cuthill_mckee_from(
    graph: &Csr,
    degree: &[u32],
    root: u32,
    numbered: &mut [bool],
    order: &mut Vec<u32>,
) {
    let mut head = order.len();
    order.push(root);
    numbered[root as usize] = true;
    let mut buf: Vec<(u32, u32)> = Vec::new();
    while head < order.len() {
        let v = order[head] as usize;
        head += 1;
        buf.clear();
        for &w in graph.row(v) {
            if !numbered[w as usize] {
                numbered[w as usize] = true;
                buf.push((degree[w as usize], w));
            }
        }
        buf.sort_unstable();
        order.extend(buf.iter().map(|&(_, w)| w));
    }
}

/// Bandwidth and profile of the reversed order `order[from..]` (positions counted from
/// `from`), using `pos` as scratch (entries of these nodes are overwritten).
fn reversed_quality(graph: &Csr, order: &[u32], pos: &mut [u32]) -> (u32, u64) {
    let n = order.len() as u32;
    for (i, &v) in order.iter().enumerate() {
        pos[v as usize] = n - 1 - i as u32;
    }
    let (mut bw, mut prof) = (0u32, 0u64);
    for &v in order {
        let p = pos[v as usize];
        let mut first = p;
        for &w in graph.row(v as usize) {
            let q = pos[w as usize];
            bw = bw.max(p.abs_diff(q));
            first = first.min(q);
        }
        prof += (p - first) as u64;
    }
    (bw, prof)
}

/// Reverse Cuthill–McKee order: `perm[new] = old`. Components are numbered one after the
/// other (in order of their lowest node). In each component Cuthill–McKee is run from up to
/// three start nodes: the minimum-degree node (the start SciPy and MATLAB use), the George–Liu
/// pseudo-peripheral node found from it, and the other end of that search; the start giving
/// the smallest bandwidth (then profile) after reversal is kept. The whole order is reversed.
pub fn rcm(graph: &Csr) -> Vec<u32> {
    let n = graph.num_rows();
    let degree = degrees(graph);
    let mut bfs = Bfs::new(n);
    let mut numbered = vec![false; n];
    let mut pos = vec![0u32; n];
    let mut order = Vec::with_capacity(n);
    let mut trial = Vec::new();
    for s in 0..n as u32 {
        if numbered[s as usize] {
            continue;
        }
        // The component of s, to find its minimum-degree node.
        let comp = bfs.levels(graph, s, |_| true);
        let min = comp
            .nodes
            .iter()
            .copied()
            .min_by_key(|&v| (degree[v as usize], v))
            .unwrap_or(s);
        let (root, lv) = pseudo_peripheral(graph, &degree, min, &mut bfs, &|_| true);
        let far = lv
            .level(lv.depth() - 1)
            .iter()
            .copied()
            .min_by_key(|&v| (degree[v as usize], v))
            .unwrap_or(root);
        let mut starts = vec![root, min, far];
        starts.dedup();
        let mut best: Option<((u32, u64), u32)> = None;
        if comp.nodes.len() > 2 && starts.len() > 1 {
            for &st in &starts {
                trial.clear();
                cuthill_mckee_from(graph, &degree, st, &mut numbered, &mut trial);
                for &v in &trial {
                    numbered[v as usize] = false;
                }
                let q = reversed_quality(graph, &trial, &mut pos);
                if best.is_none_or(|b| q < b.0) {
                    best = Some((q, st));
                }
            }
        }
        let start = best.map_or(root, |b| b.1);
        cuthill_mckee_from(graph, &degree, start, &mut numbered, &mut order);
    }
    order.reverse();
    order
}

/// Breadth-first order from George–Liu pseudo-peripheral nodes, component by component: the
/// level structure RCM starts from, without RCM's degree ordering and trial starts (about a
/// third of its cost). `perm[new] = old`.
pub fn level_order(graph: &Csr) -> Vec<u32> {
    let n = graph.num_rows();
    let degree = degrees(graph);
    let mut bfs = Bfs::new(n);
    let mut numbered = vec![false; n];
    let mut order = Vec::with_capacity(n);
    for s in 0..n as u32 {
        if numbered[s as usize] {
            continue;
        }
        let (_, lv) = pseudo_peripheral(graph, &degree, s, &mut bfs, &|_| true);
        for &v in &lv.nodes {
            numbered[v as usize] = true;
        }
        order.extend_from_slice(&lv.nodes);
    }
    order
}

#[cfg(test)]
mod tests {
    use super::*;

    fn path(n: u32) -> Csr {
        let mut pairs = Vec::new();
        for v in 0..n - 1 {
            pairs.push((v, v + 1));
            pairs.push((v + 1, v));
        }
        pairs.sort_unstable();
        Csr::from_pairs(n as usize, &pairs)
    }

    #[test]
    fn path_ends_are_peripheral() {
        let g = path(9);
        let p = pseudo_peripheral_node(&g, 4);
        assert!(p == 0 || p == 8);
        let order = rcm(&g);
        let inv = crate::order::invert_permutation(&order);
        assert_eq!(crate::order::bandwidth(&g, Some(&inv)), 1);
    }

    #[test]
    fn level_order_numbers_every_component() {
        // Two paths: 0..5 and 5..9 (shifted), as one graph.
        let a = path(5);
        let mut pairs = Vec::new();
        for v in 0..5u32 {
            for &w in a.row(v as usize) {
                pairs.push((v, w));
                if v < 4 && w < 4 {
                    pairs.push((v + 5, w + 5));
                }
            }
        }
        pairs.sort_unstable();
        let g = Csr::from_pairs(9, &pairs);
        let order = level_order(&g);
        assert!(crate::order::is_permutation(&order));
        let inv = crate::order::invert_permutation(&order);
        assert_eq!(crate::order::bandwidth(&g, Some(&inv)), 1);
    }

    #[test]
    fn levels_cover_component() {
        let g = path(5);
        let mut bfs = Bfs::new(5);
        let lv = bfs.levels(&g, 2, |_| true);
        assert_eq!(lv.depth(), 3);
        assert_eq!(lv.level(0), &[2]);
        assert_eq!(lv.width(), 2);
    }
}
