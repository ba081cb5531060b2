//! Sequential greedy vertex coloring of a graph in CSR form (e.g.
//! [`Topology::vertex_neighbors`](crate::mesh::Topology)): vertices with one color can be
//! updated in one GPU pass without touching each other (vertex smoothing).
//!
//! Algorithm (the sequential greedy of Gebremedhin & Manne, as in the speculative-coloring
//! paper's Algorithm 1): visit the vertices in a chosen order; mark the colors of the already
//! colored neighbours in a color-indexed mask, stamped with the current vertex so the mask
//! never needs clearing; give the vertex the smallest unmarked color (first fit). The order
//! decides the quality:
//!
//! * natural: index order;
//! * largest-first: by decreasing degree (ties by index), a Welsh–Powell order;
//! * smallest-last (Matula–Beck): repeatedly remove a vertex of minimum remaining degree
//!   (bucket queue, O(V + E)) and color in the reverse removal order; it uses at most
//!   `degeneracy + 1` colors.
//!
//! With `separate_boundary`, boundary vertices get their own colors: they are colored first
//! among themselves and interior vertices then use colors numbered after them, so no color
//! class mixes boundary and interior vertices (a solver can run a boundary pass with a
//! different kernel, or skip it).

use crate::error::{Error, Result};
use crate::mesh::topology::Csr;

/// Vertex visiting order of the greedy coloring.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, clap::ValueEnum)]
pub enum VertexOrder {
    /// Index order.
    Natural,
    /// Decreasing degree.
    LargestFirst,
    /// Reverse of the smallest-degree-last elimination order.
    SmallestLast,
}

impl std::str::FromStr for VertexOrder {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match s.to_ascii_lowercase().replace('_', "-").as_str() {
            "natural" | "first-fit" => Ok(VertexOrder::Natural),
            "largest-first" | "lf" => Ok(VertexOrder::LargestFirst),
            "smallest-last" | "sl" => Ok(VertexOrder::SmallestLast),
            other => Err(Error::Invalid(format!(
                "unknown vertex order '{other}' (expected natural, largest-first or smallest-last)"
            ))),
        }
    }
}

/// A vertex coloring: `colors[v]` in `0..num_colors`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VertexColoring {
    pub colors: Vec<u32>,
    pub num_colors: usize,
    /// Vertices of each color.
    pub counts: Vec<usize>,
    /// With separated boundary: colors `0..boundary_colors` are boundary-only, the rest
    /// interior-only. Otherwise 0.
    pub boundary_colors: usize,
}

impl VertexColoring {
    /// Vertices grouped by color: CSR whose row `c` lists the vertices of color `c`, ascending.
    pub fn classes(&self) -> Csr {
        let pairs: Vec<(u32, u32)> = self
            .colors
            .iter()
            .enumerate()
            .map(|(v, &c)| (c, v as u32))
            .collect();
        Csr::from_pairs(self.num_colors, &pairs)
    }
}

fn check_graph(graph: &Csr) -> Result<()> {
    let n = graph.num_rows();
    if graph.offsets.last().copied().unwrap_or(0) as usize != graph.indices.len() {
        return Err(Error::Invalid(
            "vertex coloring: CSR offsets do not match the index array".into(),
        ));
    }
    if let Some(&v) = graph.indices.iter().find(|&&v| v as usize >= n) {
        return Err(Error::Invalid(format!(
            "vertex coloring: neighbour {v} out of range ({n} vertices)"
        )));
    }
    Ok(())
}

/// Vertex order for `subset` (vertices with `subset[v]`, or all when `None`), degrees counted
/// within the subset.
fn visit_order(graph: &Csr, order: VertexOrder, subset: Option<&[bool]>) -> Vec<u32> {
    let n = graph.num_rows();
    let inside = |v: usize| subset.is_none_or(|s| s[v]);
    let verts: Vec<u32> = (0..n as u32).filter(|&v| inside(v as usize)).collect();
    let degree = |v: usize| graph.row(v).iter().filter(|&&w| inside(w as usize)).count();
    match order {
        VertexOrder::Natural => verts,
        VertexOrder::LargestFirst => {
            let mut keyed: Vec<(usize, u32)> =
                verts.iter().map(|&v| (degree(v as usize), v)).collect();
            keyed.sort_unstable_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
            keyed.into_iter().map(|(_, v)| v).collect()
        }
        VertexOrder::SmallestLast => smallest_last(graph, &verts, degree, inside),
    }
}

/// Matula–Beck smallest-last order with a bucket queue (doubly linked lists per degree).
fn smallest_last(
    graph: &Csr,
    verts: &[u32],
    degree: impl Fn(usize) -> usize,
    inside: impl Fn(usize) -> bool,
) -> Vec<u32> {
    const NIL: u32 = u32::MAX;
    let n = graph.num_rows();
    let mut deg = vec![0usize; n];
    let mut max_deg = 0;
    for &v in verts {
        deg[v as usize] = degree(v as usize);
        max_deg = max_deg.max(deg[v as usize]);
    }
    let mut head = vec![NIL; max_deg + 1];
    let mut next = vec![NIL; n];
    let mut prev = vec![NIL; n];
    let mut removed = vec![false; n];
    let push = |v: u32, d: usize, head: &mut [u32], next: &mut [u32], prev: &mut [u32]| {
        next[v as usize] = head[d];
        prev[v as usize] = NIL;
        if head[d] != NIL {
            prev[head[d] as usize] = v;
        }
        head[d] = v;
    };
    let unlink = |v: u32, d: usize, head: &mut [u32], next: &mut [u32], prev: &mut [u32]| {
        let (p, nx) = (prev[v as usize], next[v as usize]);
        if p != NIL {
            next[p as usize] = nx;
        } else {
            head[d] = nx;
        }
        if nx != NIL {
            prev[nx as usize] = p;
        }
    };
    // Push in reverse so that each bucket pops in ascending index order.
    for &v in verts.iter().rev() {
        push(v, deg[v as usize], &mut head, &mut next, &mut prev);
    }
    let mut removal = Vec::with_capacity(verts.len());
    let mut low = 0usize;
    while removal.len() < verts.len() {
        while low <= max_deg && head[low] == NIL {
            low += 1;
        }
        if low > max_deg {
            break;
        }
        let v = head[low];
        unlink(v, low, &mut head, &mut next, &mut prev);
        removed[v as usize] = true;
        removal.push(v);
        for &w in graph.row(v as usize) {
            let w = w as usize;
            if inside(w) && !removed[w] {
                let d = deg[w];
                unlink(w as u32, d, &mut head, &mut next, &mut prev);
                deg[w] = d - 1;
                push(w as u32, d - 1, &mut head, &mut next, &mut prev);
            }
        }
        // A neighbour may now sit one bucket lower.
        low = low.saturating_sub(1);
    }
    removal.reverse();
    removal
}

/// First-fit over `order`; colors start at `base`; neighbours outside `subset` are ignored.
fn first_fit(
    graph: &Csr,
    order: &[u32],
    base: u32,
    subset: Option<&[bool]>,
    colors: &mut [u32],
    mask: &mut Vec<u32>,
) -> usize {
    let mut used = 0usize;
    for &v in order {
        for &w in graph.row(v as usize) {
            let w = w as usize;
            let c = colors[w];
            if c != u32::MAX && subset.is_none_or(|s| s[w]) {
                let c = (c - base) as usize;
                if c >= mask.len() {
                    mask.resize(c + 1, u32::MAX);
                }
                mask[c] = v;
            }
        }
        let c = mask.iter().position(|&m| m != v).unwrap_or(mask.len());
        if c == mask.len() {
            mask.push(u32::MAX);
        }
        colors[v as usize] = base + c as u32;
        used = used.max(c + 1);
    }
    used
}

/// Greedy vertex coloring of `graph` in the given order. With `boundary = Some(flags)`,
/// vertices flagged as boundary get colors disjoint from the interior ones (see module doc).
pub fn color_vertices(
    graph: &Csr,
    order: VertexOrder,
    boundary: Option<&[bool]>,
) -> Result<VertexColoring> {
    check_graph(graph)?;
    let n = graph.num_rows();
    let mut colors = vec![u32::MAX; n];
    let mut mask = Vec::new();
    let (num_colors, boundary_colors) = match boundary {
        None => {
            let ord = visit_order(graph, order, None);
            (first_fit(graph, &ord, 0, None, &mut colors, &mut mask), 0)
        }
        Some(flags) => {
            if flags.len() != n {
                return Err(Error::Invalid(format!(
                    "vertex coloring: {} boundary flags for {n} vertices",
                    flags.len()
                )));
            }
            let interior: Vec<bool> = flags.iter().map(|&b| !b).collect();
            let ord_b = visit_order(graph, order, Some(flags));
            let nb = first_fit(graph, &ord_b, 0, Some(flags), &mut colors, &mut mask);
            mask.clear();
            let ord_i = visit_order(graph, order, Some(&interior));
            let ni = first_fit(
                graph,
                &ord_i,
                nb as u32,
                Some(&interior),
                &mut colors,
                &mut mask,
            );
            (nb + ni, nb)
        }
    };
    let mut counts = vec![0usize; num_colors];
    for &c in &colors {
        counts[c as usize] += 1;
    }
    Ok(VertexColoring {
        colors,
        num_colors,
        counts,
        boundary_colors,
    })
}

/// Check a vertex coloring: every vertex colored, no edge joins two vertices of one color,
/// and, when `boundary` flags are given, no color is shared by a boundary and an interior
/// vertex.
pub fn check_vertex_coloring(
    graph: &Csr,
    colors: &[u32],
    boundary: Option<&[bool]>,
) -> Result<(), String> {
    let n = graph.num_rows();
    if colors.len() != n {
        return Err(format!("{} colors for {n} vertices", colors.len()));
    }
    for v in 0..n {
        if colors[v] == u32::MAX {
            return Err(format!("vertex {v} is not colored"));
        }
        for &w in graph.row(v) {
            if w as usize != v && colors[w as usize] == colors[v] {
                return Err(format!(
                    "adjacent vertices {v} and {w} share color {}",
                    colors[v]
                ));
            }
        }
    }
    if let Some(flags) = boundary {
        if flags.len() != n {
            return Err(format!("{} boundary flags for {n} vertices", flags.len()));
        }
        let max = colors.iter().copied().max().unwrap_or(0) as usize;
        // 1 = used by a boundary vertex, 2 = by an interior one.
        let mut kind = vec![0u8; max + 1];
        for v in 0..n {
            kind[colors[v] as usize] |= if flags[v] { 1 } else { 2 };
        }
        if let Some(c) = kind.iter().position(|&k| k == 3) {
            return Err(format!(
                "color {c} is used by both boundary and interior vertices"
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Cycle of `n` vertices.
    fn cycle(n: u32) -> Csr {
        let mut pairs = Vec::new();
        for v in 0..n {
            pairs.push((v, (v + 1) % n));
            pairs.push(((v + 1) % n, v));
        }
        pairs.sort_unstable();
        Csr::from_pairs(n as usize, &pairs)
    }

    #[test]
    fn odd_cycle_needs_three() {
        for order in [
            VertexOrder::Natural,
            VertexOrder::LargestFirst,
            VertexOrder::SmallestLast,
        ] {
            let g = cycle(7);
            let c = color_vertices(&g, order, None).unwrap();
            check_vertex_coloring(&g, &c.colors, None).unwrap();
            assert_eq!(c.num_colors, 3);
        }
    }

    #[test]
    fn smallest_last_is_a_permutation() {
        let g = cycle(10);
        let ord = visit_order(&g, VertexOrder::SmallestLast, None);
        let mut s = ord.clone();
        s.sort_unstable();
        assert_eq!(s, (0..10).collect::<Vec<_>>());
    }

    #[test]
    fn parse_orders() {
        assert_eq!(
            "largest-first".parse::<VertexOrder>().unwrap(),
            VertexOrder::LargestFirst
        );
        assert!("random".parse::<VertexOrder>().is_err());
    }
}
