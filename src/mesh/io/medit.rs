//! Medit / Gamma Mesh Format reader (Mmg, PRAgMaTIc, Gmsh, meshio): `.mesh` (ASCII, `#`
//! comments) and `.meshb` (binary, versions 1-4 as libMeshb writes them).
//!
//! Kept: `Vertices`, and the elements of the highest dimension with their reference as region
//! tag; elements one dimension lower (edges in 2D, triangles and quadrilaterals in 3D) become
//! boundary facets tagged with their reference. Vertex references, `Corners`, `Ridges`,
//! `Normals` and every other keyword are skipped. Element vertices are 1-based in the file.
//!
//! Binary layout: int32 1 in the writer's byte order, int32 version; then keywords, each an
//! int32 code, the file position of the next keyword (int32 before version 3, int64 from 3),
//! and for data keywords a record count and the records. Reals are float32 in version 1 and
//! float64 after; integers are int32 except in version 4 (int64). Unknown keywords are skipped
//! through their next-keyword position.

use std::path::Path;

use super::msh::{push_element, RawFile, Reader};
use crate::error::Result;
use crate::mesh::model::{Mesh, NumberingScheme};

/// Element keywords: (ASCII name, binary code, Gmsh type, vertices).
const ELEMENTS: [(&str, i64, u8, usize); 8] = [
    ("Edges", 5, 1, 2),
    ("Triangles", 6, 2, 3),
    ("Quadrilaterals", 7, 3, 4),
    ("Tetrahedra", 8, 4, 4),
    ("Hexahedra", 10, 5, 8),
    ("Hexaedra", 10, 5, 8),
    ("Prisms", 9, 6, 6),
    ("Pyramids", 49, 7, 5),
];

/// True when `data` starts like a Medit file (the binary magic or an ASCII keyword).
pub(super) fn looks_like_medit(data: &[u8]) -> bool {
    if data.len() >= 8 && matches!(&data[..4], [1, 0, 0, 0] | [0, 0, 0, 1]) {
        return true;
    }
    let mut r = Reader::new(Path::new(""), data, "");
    r.comments = Some(b'#');
    matches!(r.token(), Some((b"MeshVersionFormatted" | b"Dimension", _)))
}

/// Parse the bytes of a `.mesh` or `.meshb` file; `path` is only used in error messages.
pub fn parse_medit(path: &Path, data: &[u8]) -> Result<Mesh> {
    let mut file = RawFile::with_elements(NumberingScheme::Medit);
    let binary = data.len() >= 4 && matches!(&data[..4], [1, 0, 0, 0] | [0, 0, 0, 1]);
    let mut r = Reader::new(path, data, "the header");
    if binary {
        read_binary(&mut r, &mut file)?;
    } else {
        read_ascii(&mut r, &mut file)?;
    }
    if file.points.is_empty() {
        return Err(r.err(r.line, "no Vertices in the file"));
    }
    file.into_mesh(&r)
}

/// Record a vertex; its node tag is its 1-based position in the file, as elements refer to it.
fn add_vertex(file: &mut RawFile, p: [f64; 3]) {
    file.node_tags.push(file.node_tags.len() as u64 + 1);
    file.points.push(p);
}

fn read_ascii(r: &mut Reader, file: &mut RawFile) -> Result<()> {
    r.comments = Some(b'#');
    let mut dim = 0usize;
    while let Some((kw, line)) = r.token() {
        if kw == b"End" {
            break;
        }
        if !kw[0].is_ascii_alphabetic() {
            return Err(r.err(
                line,
                format!(
                    "expected a keyword, found '{}'",
                    String::from_utf8_lossy(&kw[..kw.len().min(40)])
                ),
            ));
        }
        let elem = ELEMENTS.iter().find(|e| e.0.as_bytes() == kw);
        match (kw, elem) {
            (b"MeshVersionFormatted", _) => {
                r.section = "MeshVersionFormatted";
                r.count("the version")?;
            }
            (b"Dimension", _) => {
                r.section = "Dimension";
                dim = r.count("the dimension")?;
                if dim != 2 && dim != 3 {
                    return Err(r.err(line, format!("dimension {dim} is not 2 or 3")));
                }
            }
            (b"Vertices", _) => {
                r.section = "Vertices";
                if dim == 0 {
                    return Err(r.err(line, "Vertices before Dimension"));
                }
                let n = r.count("the number of vertices")?;
                let cap = r.reserve_bound(n, 2 * dim + 2);
                file.points.reserve(cap);
                for i in 0..n {
                    let more = || format!("expected {} more vertices", n - i);
                    let mut p = [0.0; 3];
                    for c in p.iter_mut().take(dim) {
                        *c = r.num("a coordinate", &more)?;
                    }
                    r.num::<i64>("the vertex reference", &more)?;
                    add_vertex(file, p);
                }
            }
            (_, Some(&(name, _, t, nv))) => {
                r.section = name;
                let n = r.count("the number of elements")?;
                file.nodes.reserve(r.reserve_bound(n, 2 * nv + 2) * nv);
                for i in 0..n {
                    let more = || format!("expected {} more {}", n - i, name.to_lowercase());
                    r.skip_ws();
                    let at = r.line;
                    for _ in 0..nv {
                        file.nodes.push(r.num("a vertex number", &more)?);
                    }
                    let tag: i32 = r.num("the element reference", &more)?;
                    push_element(file, (t, i64::from(t)), i as u64 + 1, tag, at);
                }
            }
            _ => skip_ascii_keyword(r),
        }
    }
    Ok(())
}

/// Skip the numbers after a keyword this reader does not use, up to the next keyword.
fn skip_ascii_keyword(r: &mut Reader) {
    loop {
        let (pos, line) = (r.pos, r.line);
        match r.token() {
            Some((tok, _)) if !tok[0].is_ascii_alphabetic() => {}
            Some(_) => {
                (r.pos, r.line) = (pos, line);
                return;
            }
            None => return,
        }
    }
}

fn read_binary(r: &mut Reader, file: &mut RawFile) -> Result<()> {
    r.binary = true;
    r.big_endian = r.bytes(4, &String::new)? == [0, 0, 0, 1];
    let version = r.bin_i32(&|| "expected the version".into())?;
    if !(1..=4).contains(&version) {
        return Err(r.err(0, format!("version {version} is not supported (1 to 4)")));
    }
    let real = if version == 1 { 4 } else { 8 };
    let pos_len = if version >= 3 { 8 } else { 4 };
    let int = if version == 4 { 8 } else { 4 };
    let mut dim = 0usize;
    while r.remaining() > 0 {
        r.section = "the keyword list";
        let at = r.pos;
        let kw = i64::from(r.bin_i32(&|| "expected a keyword code".into())?);
        if kw == 54 {
            break;
        }
        let next = r.bin_int(pos_len, &|| "expected the next keyword position".into())?;
        let elem = ELEMENTS.iter().find(|e| e.1 == kw);
        match (kw, elem) {
            (3, _) => {
                r.section = "Dimension";
                let d = r.bin_int(4, &|| "expected the dimension".into())?;
                if d != 2 && d != 3 {
                    return Err(r.err(0, format!("dimension {d} is not 2 or 3")));
                }
                dim = d as usize;
            }
            (4, _) => {
                r.section = "Vertices";
                if dim == 0 {
                    return Err(r.err(0, "Vertices before Dimension"));
                }
                let n = count(r, int)?;
                r.need_records(n, dim * real + int, "vertices")?;
                file.points.reserve(n);
                for i in 0..n {
                    let more = || format!("expected {} more vertices", n - i);
                    let mut p = [0.0; 3];
                    for c in p.iter_mut().take(dim) {
                        *c = r.bin_real(real, &more)?;
                    }
                    r.bin_int(int, &more)?;
                    add_vertex(file, p);
                }
            }
            (_, Some(&(name, _, t, nv))) => {
                r.section = name;
                let n = count(r, int)?;
                r.need_records(n, (nv + 1) * int, "elements")?;
                file.nodes.reserve(n * nv);
                for i in 0..n {
                    let more = || format!("expected {} more elements", n - i);
                    let at = r.pos;
                    for _ in 0..nv {
                        let v = r.bin_int(int, &more)?;
                        file.nodes.push(u64::try_from(v).unwrap_or(u64::MAX));
                    }
                    let tag = r.bin_int(int, &more)?;
                    let tag = i32::try_from(tag).map_err(|_| {
                        r.err(0, format!("element reference {tag} is out of range"))
                    })?;
                    push_element(file, (t, i64::from(t)), i as u64 + 1, tag, at);
                }
            }
            _ => match usize::try_from(next) {
                Ok(next) if next > r.pos && next <= r.pos + r.remaining() => r.pos = next,
                _ => {
                    return Err(r.err(
                        0,
                        format!(
                            "cannot skip keyword {kw} at byte offset {at}: its next-keyword \
                             position {next} is not after it in the file"
                        ),
                    ))
                }
            },
        }
    }
    Ok(())
}

/// A record count of `len` bytes.
fn count(r: &mut Reader, len: usize) -> Result<usize> {
    let n = r.bin_int(len, &|| "expected the number of records".into())?;
    usize::try_from(n).map_err(|_| r.err(0, format!("negative record count {n}")))
}
