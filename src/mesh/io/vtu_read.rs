//! VTK XML UnstructuredGrid (`.vtu`) reader for what ParaView, VTK, meshio and PRAgMaTIc write:
//! `ascii`, inline `binary` (base64) and `appended` raw or base64 data (VTK's default), each
//! optionally compressed with `vtkZLibDataCompressor`, `UInt32` or `UInt64` headers, either
//! byte order, one `Piece`.
//!
//! Cells of the highest dimension become elements, cells one dimension lower boundary facets;
//! quadratic VTK cells are read as their corner vertices (VTK lists corners first), with the
//! same warning as high-order Gmsh elements. The region tag is the first cell array found among
//! `region_tag` (chromaflow's writer), `gmsh:physical` (meshio), `CellEntityIds` (VTK) and
//! `medit:ref`; 0 without one.
//!
//! Lengths are checked against `NumberOfPoints`/`NumberOfCells` after decoding, and decoding
//! allocates only as much as the file's bytes produce, so a lying header cannot make it reserve
//! memory it does not need.

use std::io::Read;
use std::path::Path;

use base64::Engine;

use super::msh::{push_element, RawFile, Reader};
use crate::error::{Error, Result};
use crate::mesh::model::{Mesh, NumberingScheme};

/// Cell arrays that carry region tags, by preference.
const TAG_ARRAYS: [&str; 4] = ["region_tag", "gmsh:physical", "CellEntityIds", "medit:ref"];

/// VTK cell type of `nodes` nodes -> (linear Gmsh type, Gmsh type read from the file); 0 =
/// skipped (vertices). Lagrange triangles (69) are read as the Gmsh triangle of their order.
fn vtk_to_gmsh(t: i64, nodes: usize) -> Option<(u8, i64)> {
    Some(match t {
        69 => match nodes {
            3 => (2, 2),
            6 => (2, 9),
            10 => (2, 21),
            15 => (2, 23),
            21 => (2, 25),
            _ => return None,
        },
        1 | 2 => (0, 15),
        3 => (1, 1),
        5 => (2, 2),
        9 => (3, 3),
        10 => (4, 4),
        12 => (5, 5),
        13 => (6, 6),
        14 => (7, 7),
        21 => (1, 8),
        22 => (2, 9),
        23 => (3, 16),
        28 => (3, 10),
        24 => (4, 11),
        25 => (5, 17),
        29 => (5, 12),
        26 => (6, 18),
        27 => (7, 19),
        _ => return None,
    })
}

/// A `<DataArray>`: its attributes, the byte offset of its tag and of its inline text.
struct DataArray<'a> {
    attrs: Vec<(&'a str, &'a str)>,
    at: usize,
    text: &'a [u8],
    /// The enclosing element: Points, Cells, CellData or PointData.
    parent: &'a str,
}

impl DataArray<'_> {
    fn attr(&self, key: &str) -> Option<&str> {
        self.attrs.iter().find(|a| a.0 == key).map(|a| a.1)
    }
    fn name(&self) -> &str {
        self.attr("Name").unwrap_or("")
    }
}

struct Vtu<'a> {
    path: &'a Path,
    data: &'a [u8],
    big_endian: bool,
    header_bytes: usize,
    zlib: bool,
    /// The bytes after `_` in `<AppendedData>`, and their offset in the file.
    appended: Option<(usize, &'a [u8])>,
    /// `<AppendedData encoding="base64">` (VTK's default) rather than `raw`.
    appended_b64: bool,
}

impl Vtu<'_> {
    /// The 1-based line of byte `at` (computed only for messages).
    fn line_of(&self, at: usize) -> usize {
        let end = at.min(self.data.len());
        1 + self.data[..end].iter().filter(|&&c| c == b'\n').count()
    }

    /// An error at the line of byte `at`.
    fn err(&self, at: usize, msg: impl Into<String>) -> Error {
        Error::parse(self.path, self.line_of(at), msg)
    }

    /// The values of `da` as f64 (every VTK integer a mesh holds is exact in f64); `count`
    /// values are expected.
    fn values(&self, da: &DataArray, count: usize) -> Result<Vec<f64>> {
        let name = da.name();
        let ty = da.attr("type").unwrap_or("");
        let Some(size) = type_size(ty) else {
            return Err(self.err(da.at, format!("DataArray '{name}': unknown type '{ty}'")));
        };
        let vals = match da.attr("format").unwrap_or("ascii") {
            "ascii" => {
                let mut out = Vec::new();
                for tok in da.text.split(|c| c.is_ascii_whitespace()) {
                    if tok.is_empty() {
                        continue;
                    }
                    let v = std::str::from_utf8(tok).ok().and_then(|s| s.parse().ok());
                    match v {
                        Some(v) => out.push(v),
                        None => {
                            let bad = String::from_utf8_lossy(&tok[..tok.len().min(40)]);
                            // The token's own line: its offset within the file's bytes.
                            let at = tok.as_ptr() as usize - self.data.as_ptr() as usize;
                            return Err(
                                self.err(at, format!("DataArray '{name}': bad number '{bad}'"))
                            );
                        }
                    }
                }
                out
            }
            "binary" => {
                let text: Vec<u8> = da
                    .text
                    .iter()
                    .copied()
                    .filter(|c| !c.is_ascii_whitespace())
                    .collect();
                self.convert(da, ty, size, &self.base64_array(da, &text)?)?
            }
            "appended" => {
                let Some((start, raw)) = self.appended else {
                    return Err(self.err(
                        da.at,
                        format!(
                            "DataArray '{name}' is appended but the file has no <AppendedData>"
                        ),
                    ));
                };
                let off: usize = da
                    .attr("offset")
                    .and_then(|o| o.trim().parse().ok())
                    .ok_or_else(|| {
                        self.err(da.at, format!("DataArray '{name}': missing or bad offset"))
                    })?;
                let bytes = raw.get(off..).ok_or_else(|| {
                    let end = start + raw.len();
                    self.err(
                        da.at,
                        format!("DataArray '{name}': offset {off} is past the end {end}"),
                    )
                })?;
                let payload = if self.appended_b64 {
                    self.base64_array(da, bytes)?
                } else {
                    self.unpack(da, bytes, start + off)?
                };
                self.convert(da, ty, size, &payload)?
            }
            other => {
                return Err(self.err(
                    da.at,
                    format!("DataArray '{name}': unknown format '{other}'"),
                ))
            }
        };
        if vals.len() != count {
            return Err(self.err(
                da.at,
                format!(
                    "DataArray '{name}' has {} values, expected {count}",
                    vals.len()
                ),
            ));
        }
        Ok(vals)
    }

    /// Decode a base64 array from the start of `text`, which may run on into the next array's
    /// data (appended base64): header and data are one base64 stream (uncompressed data from
    /// VTK and meshio) or two (compressed data; an uncompressed header encoded apart is
    /// recognised by its `=` pad).
    fn base64_array(&self, da: &DataArray, text: &[u8]) -> Result<Vec<u8>> {
        let name = da.name();
        let short = || self.err(da.at, format!("DataArray '{name}': base64 data end early"));
        let take =
            |from: usize, len: usize| text.get(from..from.saturating_add(len)).ok_or_else(short);
        let b64 = |s: &[u8]| {
            base64::engine::general_purpose::STANDARD
                .decode(s)
                .map_err(|e| self.err(da.at, format!("DataArray '{name}': bad base64 ({e})")))
        };
        let chars = |bytes: usize| bytes.div_ceil(3).saturating_mul(4);
        let hb = self.header_bytes;
        let word = |b: &[u8], i: usize| -> Result<usize> {
            let w = b.get(i * hb..(i + 1) * hb).ok_or_else(short)?;
            usize::try_from(self.uint(w)).map_err(|_| short())
        };
        let first = b64(take(0, chars(hb))?)?;
        let n = word(&first, 0)?;
        let bytes = if self.zlib {
            let head = chars(n.saturating_add(3).saturating_mul(hb));
            let mut h = b64(take(0, head)?)?;
            let mut data = 0usize;
            for i in 0..n {
                data = data.saturating_add(word(&h, 3 + i)?);
            }
            h.extend(b64(take(head, chars(data))?)?);
            h
        } else if text.get(chars(hb) - 1) == Some(&b'=') {
            let mut h = first;
            h.extend(b64(take(chars(hb), chars(n))?)?);
            h
        } else {
            b64(take(0, chars(hb.saturating_add(n)))?)?
        };
        self.unpack(da, &bytes, da.at)
    }

    /// The uncompressed payload of `[header][data]` (raw or zlib blocks).
    fn unpack(&self, da: &DataArray, b: &[u8], at: usize) -> Result<Vec<u8>> {
        let hb = self.header_bytes;
        let name = da.name();
        let short = || {
            self.err(
                da.at,
                format!("DataArray '{name}': data end early (byte offset {at})"),
            )
        };
        let word = |i: usize| -> Result<usize> {
            let w = b.get(i * hb..(i + 1) * hb).ok_or_else(short)?;
            usize::try_from(self.uint(w)).map_err(|_| short())
        };
        if !self.zlib {
            let n = word(0)?;
            let data = b
                .get(hb..hb.checked_add(n).ok_or_else(short)?)
                .ok_or_else(short)?;
            return Ok(data.to_vec());
        }
        let (nb, bs, last) = (word(0)?, word(1)?, word(2)?);
        if nb.checked_mul(hb).is_none_or(|h| h > b.len()) {
            return Err(short());
        }
        let mut pos = (3 + nb) * hb;
        let mut out = Vec::new();
        for i in 0..nb {
            let c = word(3 + i)?;
            let block = b
                .get(pos..pos.checked_add(c).ok_or_else(short)?)
                .ok_or_else(short)?;
            let want = if i + 1 == nb && last > 0 { last } else { bs };
            let got = flate2::read::ZlibDecoder::new(block)
                .take(want as u64)
                .read_to_end(&mut out)
                .map_err(|e| self.err(da.at, format!("DataArray '{name}': zlib block {i}: {e}")))?;
            if got != want {
                let msg = format!("zlib block {i} holds {got} bytes, the header says {want}");
                return Err(self.err(da.at, format!("DataArray '{name}': {msg}")));
            }
            pos += c;
        }
        Ok(out)
    }

    fn uint(&self, b: &[u8]) -> u64 {
        let mut a = [0u8; 8];
        if self.big_endian {
            a[8 - b.len()..].copy_from_slice(b);
            u64::from_be_bytes(a)
        } else {
            a[..b.len()].copy_from_slice(b);
            u64::from_le_bytes(a)
        }
    }

    /// Raw little/big-endian values of VTK type `ty` to f64.
    fn convert(&self, da: &DataArray, ty: &str, size: usize, b: &[u8]) -> Result<Vec<f64>> {
        if b.len() % size != 0 {
            return Err(self.err(
                da.at,
                format!(
                    "DataArray '{}': {} bytes is not a whole number of {ty} values",
                    da.name(),
                    b.len()
                ),
            ));
        }
        Ok(b.chunks_exact(size)
            .map(|c| {
                let u = self.uint(c);
                match ty {
                    "Float32" => f64::from(f32::from_bits(u as u32)),
                    "Float64" => f64::from_bits(u),
                    "Int8" => f64::from(u as u8 as i8),
                    "Int16" => f64::from(u as u16 as i16),
                    "Int32" => f64::from(u as u32 as i32),
                    "Int64" => u as i64 as f64,
                    _ => u as f64,
                }
            })
            .collect())
    }
}

fn type_size(ty: &str) -> Option<usize> {
    Some(match ty {
        "Int8" | "UInt8" => 1,
        "Int16" | "UInt16" => 2,
        "Int32" | "UInt32" | "Float32" => 4,
        "Int64" | "UInt64" | "Float64" => 8,
        _ => return None,
    })
}

/// Attributes of a start tag's text (between the name and `>`).
fn attributes(s: &str) -> Vec<(&str, &str)> {
    let mut out = Vec::new();
    let mut rest = s;
    while let Some(eq) = rest.find('=') {
        let key = rest[..eq].trim();
        let after = rest[eq + 1..].trim_start();
        let Some(q) = after.chars().next().filter(|c| *c == '"' || *c == '\'') else {
            break;
        };
        let Some(end) = after[1..].find(q) else {
            break;
        };
        out.push((key, &after[1..1 + end]));
        rest = &after[end + 2..];
    }
    out
}

/// Points (x, y, z flat), cell end offsets, cell types and connectivity, as read.
type CellArrays = (Vec<f64>, Vec<f64>, Vec<f64>, Vec<f64>);

/// The XML of a `.vtu` file scanned: the decoder state, every `<DataArray>`, the point and
/// cell counts and the byte offset of the `<Piece>`.
struct Scanned<'a> {
    v: Vtu<'a>,
    arrays: Vec<DataArray<'a>>,
    np: usize,
    nc: usize,
    piece_at: usize,
}

impl<'a> Scanned<'a> {
    fn find(&self, parent: &str, name: Option<&str>) -> Option<&DataArray<'a>> {
        self.arrays
            .iter()
            .find(|a| a.parent == parent && name.is_none_or(|n| a.name() == n))
    }

    fn need(&self, parent: &str, name: Option<&str>) -> Result<&DataArray<'a>> {
        self.find(parent, name).ok_or_else(|| {
            self.v.err(
                self.piece_at,
                format!("no {} array in <{parent}>", name.unwrap_or("coordinate")),
            )
        })
    }

    /// Points (x, y, z), cell offsets, types and connectivity, checked for length.
    fn cells(&self) -> Result<CellArrays> {
        let v = &self.v;
        let pts_da = self.need("Points", None)?;
        if pts_da.attr("NumberOfComponents").unwrap_or("1").trim() != "3" {
            return Err(v.err(pts_da.at, "Points must have NumberOfComponents=\"3\""));
        }
        let pts = v.values(pts_da, self.np.saturating_mul(3))?;
        let offs = v.values(self.need("Cells", Some("offsets"))?, self.nc)?;
        let types = v.values(self.need("Cells", Some("types"))?, self.nc)?;
        let conn_len = offs.last().copied().unwrap_or(0.0);
        let conn = v.values(self.need("Cells", Some("connectivity"))?, conn_len as usize)?;
        Ok((pts, offs, types, conn))
    }
}

/// Scan the XML of a `.vtu` file (see [`parse_vtu`]).
fn scan<'a>(path: &'a Path, data: &'a [u8]) -> Result<Scanned<'a>> {
    let mut v = Vtu {
        path,
        data,
        big_endian: false,
        header_bytes: 4,
        zlib: false,
        appended: None,
        appended_b64: false,
    };
    let mut arrays: Vec<DataArray> = Vec::new();
    let (mut points, mut cells, mut piece_at) = (None, None, None);
    let mut parent = "";
    let mut pos = 0;
    while let Some(lt) = data[pos..].iter().position(|&c| c == b'<') {
        let start = pos + lt;
        let rest = &data[start..];
        let (skip_to, close) = if rest.starts_with(b"<!--") {
            (&b"-->"[..], 3)
        } else {
            (&b">"[..], 1)
        };
        let Some(gt) = rest.windows(skip_to.len()).position(|w| w == skip_to) else {
            return Err(v.err(start, "unterminated XML tag"));
        };
        let end = start + gt + close;
        pos = end;
        let tag = std::str::from_utf8(&data[start + 1..end - 1])
            .map_err(|_| v.err(start, "XML tag is not UTF-8"))?;
        if tag.starts_with(['?', '!', '/']) {
            continue;
        }
        let self_closing = tag.ends_with('/');
        let tag = tag.trim_end_matches('/');
        let (name, attrs) = tag.split_once(char::is_whitespace).unwrap_or((tag, ""));
        let attrs = attributes(attrs);
        let get = |k: &str| attrs.iter().find(|a| a.0 == k).map(|a| a.1);
        match name {
            "VTKFile" => {
                if get("type") != Some("UnstructuredGrid") {
                    return Err(v.err(
                        start,
                        format!(
                            "VTK file type {:?} is not UnstructuredGrid",
                            get("type").unwrap_or("")
                        ),
                    ));
                }
                v.big_endian = get("byte_order") == Some("BigEndian");
                v.header_bytes = if get("header_type") == Some("UInt64") {
                    8
                } else {
                    4
                };
                v.zlib = match get("compressor") {
                    None | Some("") => false,
                    Some("vtkZLibDataCompressor") => true,
                    Some(c) => {
                        return Err(v.err(
                            start,
                            format!("compressor {c} is not supported (only vtkZLibDataCompressor)"),
                        ))
                    }
                };
            }
            "Piece" => {
                if piece_at.is_some() {
                    return Err(v.err(
                        start,
                        "more than one <Piece>; only single-piece files are supported",
                    ));
                }
                let num = |k: &str| get(k).and_then(|s| s.trim().parse::<usize>().ok());
                match (num("NumberOfPoints"), num("NumberOfCells")) {
                    (Some(p), Some(c)) => {
                        (points, cells, piece_at) = (Some(p), Some(c), Some(start))
                    }
                    _ => {
                        return Err(v.err(
                            start,
                            "<Piece> without valid NumberOfPoints and NumberOfCells",
                        ))
                    }
                }
            }
            "Points" | "Cells" | "CellData" | "PointData" => parent = name,
            "DataArray" => {
                let text_end = data[end..]
                    .iter()
                    .position(|&c| c == b'<')
                    .map_or(data.len(), |k| end + k);
                let text = if self_closing {
                    &[][..]
                } else {
                    &data[end..text_end]
                };
                arrays.push(DataArray {
                    attrs,
                    at: start,
                    text,
                    parent,
                });
            }
            "AppendedData" => {
                v.appended_b64 = match get("encoding") {
                    Some("raw") => false,
                    Some("base64") => true,
                    other => {
                        let msg = format!("unknown <AppendedData> encoding {other:?}");
                        return Err(v.err(start, msg));
                    }
                };
                let us = data[end..]
                    .iter()
                    .position(|&c| c == b'_')
                    .ok_or_else(|| v.err(start, "<AppendedData> without the '_' marker"))?;
                v.appended = Some((end + us + 1, &data[end + us + 1..]));
                break;
            }
            _ => {}
        }
    }
    let (Some(np), Some(nc)) = (points, cells) else {
        return Err(Error::parse(
            path,
            1,
            "not a VTK UnstructuredGrid file: no <Piece>",
        ));
    };
    Ok(Scanned {
        v,
        arrays,
        np,
        nc,
        piece_at: piece_at.unwrap_or(0),
    })
}

/// Parse the bytes of a `.vtu` file; `path` is only used in error messages.
pub fn parse_vtu(path: &Path, data: &[u8]) -> Result<Mesh> {
    let sc = scan(path, data)?;
    let (v, nc) = (&sc.v, sc.nc);
    let (pts, offs, types, conn) = sc.cells()?;
    let offs_da = sc.need("Cells", Some("offsets"))?;
    let conn_da = sc.need("Cells", Some("connectivity"))?;
    let tags = match TAG_ARRAYS.iter().find_map(|n| sc.find("CellData", Some(n))) {
        Some(da) => v.values(da, nc)?,
        None => vec![0.0; nc],
    };
    let mut file = RawFile::with_elements(NumberingScheme::Vtu);
    for (i, p) in pts.chunks_exact(3).enumerate() {
        file.node_tags.push(i as u64);
        file.points.push([p[0], p[1], p[2]]);
    }
    let r = Reader::new(path, data, "Cells");
    let conn_line = v.line_of(conn_da.at);
    let mut prev = 0usize;
    for c in 0..nc {
        let o = offs[c];
        let ok = o.fract() == 0.0 && o >= prev as f64 && o <= conn.len() as f64;
        if !ok {
            return Err(v.err(
                offs_da.at,
                format!(
                    "cell {c}: offset {o} is not between {prev} and {}",
                    conn.len()
                ),
            ));
        }
        let (lo, hi) = (prev, o as usize);
        prev = hi;
        let Some((lin, t)) = vtk_to_gmsh(types[c] as i64, hi - lo) else {
            return Err(v.err(
                offs_da.at,
                format!(
                    "cell {c}: unsupported VTK cell type {} with {} nodes",
                    types[c],
                    hi - lo
                ),
            ));
        };
        if lin == 0 {
            continue;
        }
        let corners = super::msh::corner_count(lin);
        if hi - lo < corners {
            return Err(v.err(
                offs_da.at,
                format!("cell {c}: {} vertices for VTK type {}", hi - lo, types[c]),
            ));
        }
        for &x in &conn[lo..lo + corners] {
            file.nodes.push(if x >= 0.0 && x.fract() == 0.0 {
                x as u64
            } else {
                u64::MAX
            });
        }
        push_element(&mut file, (lin, t), c as u64, tags[c] as i32, conn_line);
    }
    file.into_mesh(&r)
}

/// A `.vtu` file's cells as written, with its data arrays: what [`parse_vtu`] reduces to a
/// linear mesh, kept whole (high-order nodes and point and cell data included), e.g. to check
/// a high-order output against the solution it came from.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct VtuGrid {
    /// Point coordinates.
    pub points: Vec<[f64; 3]>,
    /// Point indices of each cell: `connectivity[offsets[c]..offsets[c + 1]]`.
    pub connectivity: Vec<usize>,
    /// `offsets[0] = 0`, then the end of each cell's points.
    pub offsets: Vec<usize>,
    /// VTK cell type of each cell.
    pub types: Vec<u8>,
    /// Single-component point arrays by name, one value per point.
    pub point_data: Vec<(String, Vec<f64>)>,
    /// Single-component cell arrays by name, one value per cell.
    pub cell_data: Vec<(String, Vec<f64>)>,
}

impl VtuGrid {
    /// The point array `name`.
    pub fn point_array(&self, name: &str) -> Option<&[f64]> {
        self.point_data
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_slice())
    }

    /// The point indices of cell `c`.
    pub fn cell(&self, c: usize) -> &[usize] {
        &self.connectivity[self.offsets[c]..self.offsets[c + 1]]
    }
}

/// Parse a `.vtu` file into its [`VtuGrid`] (the same encodings as [`parse_vtu`]). Errors name
/// the file and line: bad offsets, point indices out of range, arrays of the wrong length.
pub fn parse_vtu_grid(path: &Path, data: &[u8]) -> Result<VtuGrid> {
    let sc = scan(path, data)?;
    let v = &sc.v;
    let (pts, offs, types, conn) = sc.cells()?;
    let offs_da = sc.need("Cells", Some("offsets"))?;
    let conn_da = sc.need("Cells", Some("connectivity"))?;
    let mut offsets = Vec::with_capacity(sc.nc + 1);
    offsets.push(0);
    for (c, &o) in offs.iter().enumerate() {
        let prev = offsets[c];
        if !(o.fract() == 0.0 && o >= prev as f64 && o <= conn.len() as f64) {
            let msg = format!(
                "cell {c}: offset {o} is not between {prev} and {}",
                conn.len()
            );
            return Err(v.err(offs_da.at, msg));
        }
        offsets.push(o as usize);
    }
    let connectivity = conn
        .iter()
        .enumerate()
        .map(|(k, &x)| {
            if x >= 0.0 && x.fract() == 0.0 && (x as usize) < sc.np {
                Ok(x as usize)
            } else {
                let msg = format!(
                    "connectivity entry {k}: {x} is not a point index below {}",
                    sc.np
                );
                Err(v.err(conn_da.at, msg))
            }
        })
        .collect::<Result<Vec<_>>>()?;
    let arrays = |parent: &str, count: usize| -> Result<Vec<(String, Vec<f64>)>> {
        sc.arrays
            .iter()
            .filter(|a| {
                a.parent == parent && a.attr("NumberOfComponents").unwrap_or("1").trim() == "1"
            })
            .map(|a| Ok((a.name().to_string(), v.values(a, count)?)))
            .collect()
    };
    Ok(VtuGrid {
        points: pts.chunks_exact(3).map(|p| [p[0], p[1], p[2]]).collect(),
        connectivity,
        offsets,
        types: types.iter().map(|&t| t as u8).collect(),
        point_data: arrays("PointData", sc.np)?,
        cell_data: arrays("CellData", sc.nc)?,
    })
}
