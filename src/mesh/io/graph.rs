//! Graphs for vertex coloring from the files graph collections use: Matrix Market (`.mtx`,
//! SuiteSparse: coordinate format; pattern, real, integer or complex values, which are
//! ignored; general, symmetric, skew-symmetric or hermitian) and DIMACS (`.col`: `c` comments,
//! `p edge N M`, `e U V`). Either becomes the symmetric adjacency the colorings take: a
//! [`Csr`] with sorted rows, without self-loops (a matrix diagonal) or repeated edges.
//! Errors name the file and line like the mesh readers; counts from the file never size an
//! allocation beyond what the remaining bytes can hold.

use std::path::Path;

use super::msh::Reader;
use crate::error::{Error, Result};
use crate::mesh::topology::Csr;

/// Read a graph file, the format recognised by content (see [`parse_graph`]).
pub fn read_graph(path: &Path) -> Result<Csr> {
    let data = crate::files::read_limited(path, crate::files::MAX_INPUT_BYTES)?;
    parse_graph(path, &data)
}

/// Parse graph bytes: Matrix Market when they start with `%%MatrixMarket`, DIMACS otherwise.
pub fn parse_graph(path: &Path, data: &[u8]) -> Result<Csr> {
    let data = data.strip_prefix(b"\xef\xbb\xbf").unwrap_or(data);
    let mut r = Reader::new(path, data, "the header");
    let first = data
        .iter()
        .position(|c| !c.is_ascii_whitespace())
        .unwrap_or(0);
    if data[first..].starts_with(b"%%MatrixMarket") {
        parse_matrix_market(&mut r)
    } else {
        parse_dimacs(&mut r)
    }
}

fn parse_matrix_market(r: &mut Reader) -> Result<Csr> {
    let header = String::from_utf8_lossy(r.rest_of_line()).to_ascii_lowercase();
    let words: Vec<&str> = header.split_whitespace().collect();
    let symmetries = ["general", "symmetric", "skew-symmetric", "hermitian"];
    let values = match words[..] {
        [_, "matrix", "coordinate", field, sym] if symmetries.contains(&sym) => match field {
            "pattern" => 0,
            "real" | "integer" | "double" => 1,
            "complex" => 2,
            _ => return Err(r.err(1, format!("unknown Matrix Market field '{field}'"))),
        },
        _ => {
            return Err(r.err(
                1,
                format!(
                    "expected '%%MatrixMarket matrix coordinate FIELD SYMMETRY', found '{}'",
                    header.trim()
                ),
            ))
        }
    };
    r.comments = Some(b'%');
    r.section = "the size line";
    r.skip_ws();
    let (line, rows) = (r.line, r.count("the number of rows")?);
    let cols = r.count("the number of columns")?;
    let nnz = r.count("the number of entries")?;
    check_vertex_count(r, rows, line)?;
    if rows != cols {
        return Err(r.err(
            line,
            format!("the matrix is {rows} x {cols}; a graph needs a square one"),
        ));
    }
    r.section = "the entries";
    let mut edges = Vec::with_capacity(r.reserve_bound(nnz, 4));
    for k in 0..nnz {
        let more = || format!("expected {} more entries", nnz - k);
        let (a, b) = (vertex(r, rows, &more)?, vertex(r, rows, &more)?);
        for _ in 0..values {
            r.num::<f64>("a value", &more)?;
        }
        edges.push((a, b));
    }
    adjacency_from_edges(rows, edges).map_err(|e| r.err(0, e.to_string()))
}

/// Refuse a vertex count the file cannot mean: isolated vertices take no bytes, so up to 8
/// per byte of the file (and a million in any file) are believed; more would only reserve
/// memory for a lying header.
fn check_vertex_count(r: &Reader, n: usize, line: usize) -> Result<()> {
    let limit = (r.pos + r.remaining()).saturating_mul(8).max(1 << 20);
    if n > limit.min(u32::MAX as usize - 1) {
        return Err(r.err(
            line,
            format!(
                "{n} vertices in a file of {} bytes is not believable",
                r.pos + r.remaining()
            ),
        ));
    }
    Ok(())
}

/// A 1-based vertex number in `1..=n`, returned 0-based.
fn vertex(r: &mut Reader, n: usize, more: &dyn Fn() -> String) -> Result<u32> {
    r.skip_ws();
    let line = r.line;
    let v: usize = r.num("a vertex number", more)?;
    if v == 0 || v > n {
        return Err(r.err(line, format!("vertex {v} is out of range 1..={n}")));
    }
    Ok((v - 1) as u32)
}

fn parse_dimacs(r: &mut Reader) -> Result<Csr> {
    let mut n = None;
    let mut edges = Vec::new();
    while let Some((tok, line)) = r.token() {
        match (tok, n) {
            (b"c", _) => {
                r.rest_of_line();
            }
            (b"p", None) => {
                r.section = "the problem line";
                r.token();
                let v = r.count("the number of vertices")?;
                let m = r.count("the number of edges")?;
                check_vertex_count(r, v, line)?;
                edges.reserve(r.reserve_bound(m, 4));
                n = Some(v);
                r.section = "the edges";
            }
            (b"e", Some(v)) => {
                let more = || "expected the two ends of the edge".to_string();
                edges.push((vertex(r, v, &more)?, vertex(r, v, &more)?));
            }
            (b"n", Some(_)) => {
                r.rest_of_line();
            }
            _ => {
                let what = String::from_utf8_lossy(&tok[..tok.len().min(40)]);
                let want = if n.is_some() {
                    "an 'e' or 'c' line"
                } else {
                    "'p edge N M' or a 'c' line"
                };
                return Err(r.err(
                    line,
                    format!("not a DIMACS or Matrix Market graph: expected {want}, found '{what}'"),
                ));
            }
        }
    }
    let Some(n) = n else {
        return Err(r.err(r.line, "not a DIMACS graph: no 'p edge N M' line"));
    };
    adjacency_from_edges(n, edges).map_err(|e| r.err(0, e.to_string()))
}

/// The symmetric adjacency of `n` vertices with the undirected `edges` (either direction, any
/// repeats; self-loops are dropped), rows sorted.
pub fn adjacency_from_edges(n: usize, edges: Vec<(u32, u32)>) -> Result<Csr> {
    if edges.len() > (u32::MAX / 2) as usize || n >= u32::MAX as usize {
        return Err(Error::Invalid(format!(
            "graph of {n} vertices and {} edges is too large (32-bit offsets)",
            edges.len()
        )));
    }
    let mut offsets = vec![0u32; n + 1];
    for &(a, b) in edges.iter().filter(|e| e.0 != e.1) {
        offsets[a as usize + 1] += 1;
        offsets[b as usize + 1] += 1;
    }
    for i in 0..n {
        offsets[i + 1] += offsets[i];
    }
    let mut fill = offsets.clone();
    let mut indices = vec![0u32; offsets[n] as usize];
    for (a, b) in edges.into_iter().filter(|e| e.0 != e.1) {
        for (x, y) in [(a, b), (b, a)] {
            indices[fill[x as usize] as usize] = y;
            fill[x as usize] += 1;
        }
    }
    // Sort each row and drop repeats, compacting in place.
    let mut out = 0usize;
    let mut start = 0usize;
    for i in 0..n {
        let end = offsets[i + 1] as usize;
        indices[start..end].sort_unstable();
        let row_start = out;
        for k in start..end {
            if out == row_start || indices[out - 1] != indices[k] {
                indices[out] = indices[k];
                out += 1;
            }
        }
        start = end;
        offsets[i + 1] = out as u32;
    }
    indices.truncate(out);
    Ok(Csr { offsets, indices })
}

/// Write `graph` (symmetric) atomically, by extension: Matrix Market (`.mtx`, pattern
/// symmetric, lower triangle), DIMACS (`.col`), or `.csr`: the whole adjacency as binary
/// little-endian int32 n, nnz, offsets, indices, which GPU graph libraries' own benchmarks
/// (e.g. for cuSPARSE csrcolor) read directly.
pub fn write_graph(graph: &Csr, path: &Path) -> Result<()> {
    let ext = path
        .extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase());
    let dimacs = ext.as_deref() == Some("col");
    let n = graph.num_rows();
    let m = graph.indices.len() / 2;
    crate::files::atomic_write(path, |w| {
        if ext.as_deref() == Some("csr") {
            let head = [n as u32, graph.indices.len() as u32];
            for v in head.iter().chain(&graph.offsets).chain(&graph.indices) {
                w.write_all(&v.to_le_bytes())?;
            }
            return Ok(());
        }
        if dimacs {
            writeln!(w, "c vertex graph written by chromaflow\np edge {n} {m}")?;
        } else {
            writeln!(w, "%%MatrixMarket matrix coordinate pattern symmetric")?;
            writeln!(w, "% written by chromaflow\n{n} {n} {m}")?;
        }
        for v in 0..n {
            for &u in graph.row(v).iter().filter(|&&u| (u as usize) < v) {
                if dimacs {
                    writeln!(w, "e {} {}", v + 1, u + 1)?;
                } else {
                    writeln!(w, "{} {}", v + 1, u + 1)?;
                }
            }
        }
        Ok(())
    })
}
