//! Gmsh `.msh` reader for format versions 2.2, 4.0 and 4.1, ASCII and binary, written for
//! precise error messages: every error names the file and the line (ASCII) or the byte offset
//! and section (binary), and no input can make it panic (every length is checked before
//! slicing, every count from the file is bounded by the bytes that are left before memory is
//! reserved). Its cursor ([`Reader`]) and raw element store ([`RawFile`]) serve the Medit, VTU
//! and graph readers too.
//!
//! What is kept: nodes (tags may be sparse; they are renumbered 0-based in file order), the
//! elements of the highest dimension present (2: triangles, quadrilaterals; 3: tetrahedra,
//! hexahedra, prisms, pyramids) with their physical tag as region tag (0 if none), the elements
//! one dimension lower as [`BoundaryFacet`]s with their physical tag, and `$PhysicalNames`.
//! High-order elements keep their corner nodes (Gmsh lists them first), with one warning per
//! file. Points (type 15) and lower-dimensional elements are ignored, unknown sections
//! (`$Periodic`, `$NodeData`, ...) skipped. In 4.x files the physical tag of an element is the
//! first physical tag of its entity in `$Entities`; in 2.2 files it is the element's first tag.
//!
//! Binary files: the `$MeshFormat` line is followed by the integer 1 written in the writer's byte
//! order, which tells little- from big-endian. In 2.2 the data-size field is sizeof(double) and
//! integers are 4 bytes; in 4.1 it is sizeof(size_t) (4 or 8), used for counts and tags; in 4.0
//! counts are 8-byte unsigned longs and tags 4-byte ints. 4.0 also puts an entity block's tag
//! before its dimension, interleaves node tags with coordinates and gives points a full
//! bounding box in `$Entities`.

use std::collections::HashMap;
use std::path::Path;
use std::str::FromStr;

use crate::error::{Error, Result};
use crate::mesh::model::{BoundaryFacet, ElementKind, Mesh, NumberingScheme};

/// Read a Gmsh `.msh` file (2.2, 4.0 or 4.1, ASCII or binary). The mesh is not validated.
pub fn read_msh(path: &Path) -> Result<Mesh> {
    super::check_memory(path)?;
    let data = crate::files::read_limited(path, crate::files::MAX_INPUT_BYTES)?;
    parse_msh(path, data.strip_prefix(b"\xef\xbb\xbf").unwrap_or(&data))
}

/// Parse the bytes of a `.msh` file; `path` is only used in error messages.
pub fn parse_msh(path: &Path, data: &[u8]) -> Result<Mesh> {
    let mut r = Reader::new(path, data, "$MeshFormat");
    let mut file = RawFile {
        scheme: NumberingScheme::Gmsh,
        ..RawFile::default()
    };
    r.read_all(&mut file)?;
    file.into_mesh(&r)
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Version {
    V2,
    V40,
    V41,
}

/// Gmsh element type facts: (number of nodes, name, dimension). `None` for unknown types.
fn gmsh_type_info(t: i64) -> Option<(usize, &'static str, usize)> {
    Some(match t {
        1 => (2, "line", 1),
        2 => (3, "triangle", 2),
        3 => (4, "quadrangle", 2),
        4 => (4, "tetrahedron", 3),
        5 => (8, "hexahedron", 3),
        6 => (6, "prism", 3),
        7 => (5, "pyramid", 3),
        8 => (3, "second-order line", 1),
        9 => (6, "second-order triangle", 2),
        10 => (9, "second-order quadrangle", 2),
        11 => (10, "second-order tetrahedron", 3),
        12 => (27, "second-order hexahedron", 3),
        13 => (18, "second-order prism", 3),
        14 => (14, "second-order pyramid", 3),
        15 => (1, "point", 0),
        16 => (8, "second-order serendipity quadrangle", 2),
        17 => (20, "second-order serendipity hexahedron", 3),
        18 => (15, "second-order serendipity prism", 3),
        19 => (13, "second-order serendipity pyramid", 3),
        20 => (9, "third-order incomplete triangle", 2),
        21 => (10, "third-order triangle", 2),
        22 => (12, "fourth-order incomplete triangle", 2),
        23 => (15, "fourth-order triangle", 2),
        24 => (15, "fifth-order incomplete triangle", 2),
        25 => (21, "fifth-order triangle", 2),
        26 => (4, "third-order line", 1),
        27 => (5, "fourth-order line", 1),
        28 => (6, "fifth-order line", 1),
        29 => (20, "third-order tetrahedron", 3),
        30 => (35, "fourth-order tetrahedron", 3),
        31 => (56, "fifth-order tetrahedron", 3),
        92 => (64, "third-order hexahedron", 3),
        93 => (125, "fourth-order hexahedron", 3),
        _ => return None,
    })
}

/// The linear Gmsh type whose corners a (possibly high-order) type starts with; `None` for
/// points, which are skipped.
fn linear_type(t: i64) -> Option<u8> {
    Some(match t {
        1 | 8 | 26..=28 => 1,
        2 | 9 | 20..=25 => 2,
        3 | 10 | 16 => 3,
        4 | 11 | 29..=31 => 4,
        5 | 12 | 17 | 92 | 93 => 5,
        6 | 13 | 18 => 6,
        7 | 14 | 19 => 7,
        _ => return None,
    })
}

/// Vertices of a linear Gmsh type.
pub(super) fn corner_count(lin: u8) -> usize {
    gmsh_type_info(i64::from(lin)).map_or(0, |i| i.0)
}

/// The element kind of a supported linear 2D/3D Gmsh type.
fn kind_of(t: u8) -> Option<ElementKind> {
    Some(match t {
        2 => ElementKind::Triangle,
        3 => ElementKind::Quad,
        4 => ElementKind::Tetrahedron,
        5 => ElementKind::Hexahedron,
        6 => ElementKind::Prism,
        7 => ElementKind::Pyramid,
        _ => return None,
    })
}

/// Everything read from the file before nodes are resolved; the Medit and VTU readers fill it
/// too (with Gmsh type numbers) to share node resolution, tags and high-order handling.
#[derive(Default)]
pub(super) struct RawFile {
    version_seen: bool,
    pub(super) node_tags: Vec<u64>,
    pub(super) points: Vec<[f64; 3]>,
    nodes_seen: bool,
    elements_seen: bool,
    /// Gmsh type (1..=7) of each kept element.
    types: Vec<u8>,
    /// Element tag from the file.
    tags: Vec<u64>,
    phys: Vec<i32>,
    /// CSR offsets into `nodes`.
    pub(super) offsets: Vec<usize>,
    pub(super) nodes: Vec<u64>,
    /// Line (ASCII) or byte offset (binary) of each element, for error messages.
    locs: Vec<usize>,
    /// (dim, entity tag) -> first physical tag (4.1 `$Entities`).
    entity_phys: HashMap<(usize, i32), i32>,
    physical_names: Vec<((usize, i32), String)>,
    /// File type -> count of the high-order elements read as their corners.
    high_order: std::collections::BTreeMap<i64, usize>,
    /// How the format numbers elements and nodes (`tags`, `node_tags`), kept in the mesh.
    pub(super) scheme: NumberingScheme,
}

/// Cursor over a mesh file with error locations; shared with the Medit and VTU readers.
pub(super) struct Reader<'a> {
    pub(super) path: &'a Path,
    data: &'a [u8],
    pub(super) pos: usize,
    /// 1-based line of `pos` (exact in ASCII files; binary files report byte offsets instead).
    pub(super) line: usize,
    pub(super) binary: bool,
    pub(super) big_endian: bool,
    /// Width in bytes of size_t fields in 4.1 binary files.
    size_t: usize,
    version: Version,
    pub(super) section: &'static str,
    /// Comment character, skipped to the end of the line (`#` Medit, `%` Matrix Market); with
    /// one, a word where a number belongs is a keyword after a lying count.
    pub(super) comments: Option<u8>,
}

/// A short printable rendering of a token for messages.
fn show(tok: &[u8]) -> String {
    let s = String::from_utf8_lossy(&tok[..tok.len().min(40)]).into_owned();
    if tok.len() > 40 {
        format!("{s}...")
    } else {
        s
    }
}

impl<'a> Reader<'a> {
    pub(super) fn new(path: &'a Path, data: &'a [u8], section: &'static str) -> Self {
        Reader {
            path,
            data,
            pos: 0,
            line: 1,
            binary: false,
            big_endian: false,
            size_t: 8,
            version: Version::V2,
            section,
            comments: None,
        }
    }

    /// Location text: "line L" for ASCII files, "byte offset B in $Section" for binary ones.
    fn where_at(&self, line: usize, offset: usize) -> String {
        if self.binary {
            format!("byte offset {offset} in {}", self.section)
        } else {
            format!("line {line}")
        }
    }

    /// An error at a line (ASCII) or at the current byte offset (binary).
    pub(super) fn err(&self, line: usize, msg: impl Into<String>) -> Error {
        if self.binary {
            Error::parse(
                self.path,
                0,
                format!(
                    "{} (byte offset {} in {})",
                    msg.into(),
                    self.pos,
                    self.section
                ),
            )
        } else {
            Error::parse(self.path, line, msg)
        }
    }

    pub(super) fn eof_err(&self, expected: &str) -> Error {
        self.err(
            self.line,
            format!("unexpected end of file in {}, {expected}", self.section),
        )
    }

    pub(super) fn skip_ws(&mut self) {
        while let Some(&c) = self.data.get(self.pos) {
            if Some(c) == self.comments {
                while self.data.get(self.pos).is_some_and(|&c| c != b'\n') {
                    self.pos += 1;
                }
                continue;
            }
            if !c.is_ascii_whitespace() {
                break;
            }
            if c == b'\n' {
                self.line += 1;
            }
            self.pos += 1;
        }
    }

    /// Next whitespace-separated token and its line, or `None` at end of file.
    pub(super) fn token(&mut self) -> Option<(&'a [u8], usize)> {
        self.skip_ws();
        if self.pos >= self.data.len() {
            return None;
        }
        let start = self.pos;
        while self
            .data
            .get(self.pos)
            .is_some_and(|c| !c.is_ascii_whitespace())
        {
            self.pos += 1;
        }
        Some((&self.data[start..self.pos], self.line))
    }

    /// Next token, parsed as `T`. `what` names the value for "bad number" errors; `expected`
    /// says what is still missing, for end-of-file errors.
    pub(super) fn num<T: FromStr>(
        &mut self,
        what: &str,
        expected: &dyn Fn() -> String,
    ) -> Result<T> {
        let Some((tok, line)) = self.token() else {
            return Err(self.eof_err(&expected()));
        };
        // A section marker (Gmsh) or keyword (Medit) where a number belongs: the count lied.
        if tok.first() == Some(&b'$') || (self.comments.is_some() && tok[0].is_ascii_alphabetic()) {
            return Err(self.err(
                line,
                format!(
                    "unexpected '{}' in {}, {}",
                    show(tok),
                    self.section,
                    expected()
                ),
            ));
        }
        std::str::from_utf8(tok)
            .ok()
            .and_then(|s| s.parse::<T>().ok())
            .ok_or_else(|| {
                self.err(
                    line,
                    format!(
                        "bad number '{}' in {} (expected {what})",
                        show(tok),
                        self.section
                    ),
                )
            })
    }

    /// A count from the file: parsed as usize.
    pub(super) fn count(&mut self, what: &str) -> Result<usize> {
        let w = what.to_string();
        self.num::<usize>(what, &move || format!("expected {w}"))
    }

    /// The rest of the current line (without the line break), consuming the line break.
    pub(super) fn rest_of_line(&mut self) -> &'a [u8] {
        let start = self.pos;
        while let Some(&c) = self.data.get(self.pos) {
            self.pos += 1;
            if c == b'\n' {
                self.line += 1;
                let end = if self.pos >= 2 && self.data.get(self.pos - 2) == Some(&b'\r') {
                    self.pos - 2
                } else {
                    self.pos - 1
                };
                return &self.data[start..end.max(start)];
            }
        }
        &self.data[start..]
    }

    /// Expect the `$End...` token closing the current section.
    fn expect_end(&mut self) -> Result<()> {
        let end = format!("$End{}", &self.section[1..]);
        match self.token() {
            Some((tok, _)) if tok == end.as_bytes() => Ok(()),
            Some((tok, line)) => {
                Err(self.err(line, format!("expected {end}, found '{}'", show(tok))))
            }
            None => Err(self.eof_err(&format!("expected {end}"))),
        }
    }

    pub(super) fn remaining(&self) -> usize {
        self.data.len().saturating_sub(self.pos)
    }

    /// Take `n` raw bytes (binary sections) or fail with "unexpected end of file".
    pub(super) fn bytes(&mut self, n: usize, expected: &dyn Fn() -> String) -> Result<&'a [u8]> {
        if self.remaining() < n {
            return Err(self.eof_err(&expected()));
        }
        let b = &self.data[self.pos..self.pos + n];
        self.pos += n;
        Ok(b)
    }

    pub(super) fn bin_i32(&mut self, expected: &dyn Fn() -> String) -> Result<i32> {
        let b = self.bytes(4, expected)?;
        let a = [b[0], b[1], b[2], b[3]];
        Ok(if self.big_endian {
            i32::from_be_bytes(a)
        } else {
            i32::from_le_bytes(a)
        })
    }

    fn bin_f64(&mut self, expected: &dyn Fn() -> String) -> Result<f64> {
        let b = self.bytes(8, expected)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(b);
        Ok(if self.big_endian {
            f64::from_be_bytes(a)
        } else {
            f64::from_le_bytes(a)
        })
    }

    /// A signed integer of `len` (4 or 8) bytes.
    pub(super) fn bin_int(&mut self, len: usize, expected: &dyn Fn() -> String) -> Result<i64> {
        let v = decode_uint(self.bytes(len, expected)?, self.big_endian);
        Ok(if len == 4 {
            v as u32 as i32 as i64
        } else {
            v as i64
        })
    }

    /// A float of `len` (4 or 8) bytes.
    pub(super) fn bin_real(&mut self, len: usize, expected: &dyn Fn() -> String) -> Result<f64> {
        if len == 8 {
            return self.bin_f64(expected);
        }
        let v = decode_uint(self.bytes(4, expected)?, self.big_endian);
        Ok(f64::from(f32::from_bits(v as u32)))
    }

    /// A size_t field of a 4.1 binary file (4 or 8 bytes).
    fn bin_size(&mut self, expected: &dyn Fn() -> String) -> Result<u64> {
        let n = self.size_t;
        let b = self.bytes(n, expected)?;
        Ok(decode_uint(b, self.big_endian))
    }

    /// A count written as size_t, converted to usize.
    fn bin_count(&mut self, what: &str) -> Result<usize> {
        let w = what.to_string();
        let v = self.bin_size(&move || format!("expected {w}"))?;
        usize::try_from(v).map_err(|_| self.err(0, format!("{what} {v} is too large")))
    }

    /// A count in a section header: a size_t (binary) or a whole number (ASCII).
    fn header_count(&mut self, what: &str) -> Result<usize> {
        if self.binary {
            self.bin_count(what)
        } else {
            self.count(what)
        }
    }

    /// A 4.x node or element tag: a whole number (ASCII), an int (4.0 binary) or a size_t
    /// (4.1 binary) naming `what`.
    fn tag(&mut self, what: &str, expected: &dyn Fn() -> String) -> Result<u64> {
        match (self.binary, self.version) {
            (false, _) => self.num(what, expected),
            (true, Version::V40) => Ok(u64::try_from(self.bin_i32(expected)?).unwrap_or(u64::MAX)),
            (true, _) => self.bin_size(expected),
        }
    }

    /// Bytes of a tag in 4.x binary files.
    fn tag_len(&self) -> usize {
        if self.version == Version::V40 {
            4
        } else {
            self.size_t
        }
    }

    /// Coordinates of an entity's bounding box: 4.1 gives points only their position.
    fn bbox_len(&self, dim: usize) -> usize {
        if dim == 0 && self.version == Version::V41 {
            3
        } else {
            6
        }
    }

    /// The header of a 4.x $Nodes/$Elements section: (blocks, total); 4.1 adds min/max tags.
    fn header4(&mut self, what: &str) -> Result<(usize, usize)> {
        if self.binary {
            // The binary header starts right after the section line.
            self.rest_of_line();
        }
        let nblocks = self.header_count(&format!("the number of {what} blocks"))?;
        let total = self.header_count(&format!("the number of {what}s"))?;
        if self.version == Version::V41 {
            self.header_count(&format!("the minimum {what} tag"))?;
            self.header_count(&format!("the maximum {what} tag"))?;
        }
        Ok((nblocks, total))
    }

    /// A 4.x block header's entity (dimension, tag): 4.0 writes the tag first.
    fn block_entity(&mut self, more: &dyn Fn() -> String) -> Result<(i64, i64)> {
        let (a, b) = if self.binary {
            (
                i64::from(self.bin_i32(more)?),
                i64::from(self.bin_i32(more)?),
            )
        } else {
            (
                self.num("entity dimension or tag", more)?,
                self.num("entity tag or dimension", more)?,
            )
        };
        Ok(if self.version == Version::V40 {
            (b, a)
        } else {
            (a, b)
        })
    }

    /// One node's x, y, z and `extra` parametric coordinates (dropped).
    fn point(&mut self, extra: usize, more: &dyn Fn() -> String) -> Result<[f64; 3]> {
        let x = self.real("node x coordinate", more)?;
        let y = self.real("node y coordinate", more)?;
        let z = self.real("node z coordinate", more)?;
        for _ in 0..extra {
            self.real("parametric node coordinate", more)?;
        }
        Ok([x, y, z])
    }

    /// A coordinate: an f64 (binary) or a number (ASCII) naming `what`.
    fn real(&mut self, what: &str, expected: &dyn Fn() -> String) -> Result<f64> {
        if self.binary {
            self.bin_f64(expected)
        } else {
            self.num(what, expected)
        }
    }

    /// Make sure `n` records of `record` bytes are present; otherwise report how many of
    /// `what` are missing.
    pub(super) fn need_records(&self, n: usize, record: usize, what: &str) -> Result<()> {
        let have = self.remaining() / record.max(1);
        if have < n {
            return Err(self.eof_err(&format!("expected {} more {what}", n - have)));
        }
        Ok(())
    }

    fn read_all(&mut self, file: &mut RawFile) -> Result<()> {
        while let Some((tok, line)) = self.token() {
            if !file.version_seen {
                if tok != b"$MeshFormat" {
                    return Err(self.err(
                        line,
                        format!(
                            "not a Gmsh .msh file: expected $MeshFormat, found '{}'",
                            show(tok)
                        ),
                    ));
                }
                self.section = "$MeshFormat";
                self.read_format()?;
                file.version_seen = true;
                continue;
            }
            if tok.first() != Some(&b'$') || tok.starts_with(b"$End") {
                return Err(self.err(
                    line,
                    format!(
                        "expected a section header like $Nodes, found '{}'",
                        show(tok)
                    ),
                ));
            }
            match tok {
                b"$MeshFormat" => {
                    return Err(self.err(line, "second $MeshFormat section"));
                }
                b"$PhysicalNames" => {
                    self.section = "$PhysicalNames";
                    self.read_physical_names(file)?;
                }
                b"$Entities" if self.version != Version::V2 => {
                    self.section = "$Entities";
                    if self.binary {
                        self.read_entities_bin(file)?;
                    } else {
                        self.read_entities_ascii(file)?;
                    }
                    self.expect_end()?;
                }
                b"$Nodes" => {
                    self.section = "$Nodes";
                    if file.nodes_seen {
                        return Err(self.err(line, "second $Nodes section"));
                    }
                    file.nodes_seen = true;
                    match self.version {
                        Version::V2 => self.read_nodes2(file)?,
                        _ => self.read_nodes4(file)?,
                    }
                    self.expect_end()?;
                }
                b"$Elements" => {
                    self.section = "$Elements";
                    if file.elements_seen {
                        return Err(self.err(line, "second $Elements section"));
                    }
                    file.elements_seen = true;
                    file.offsets.push(0);
                    match (self.version, self.binary) {
                        (Version::V2, false) => self.read_elements2_ascii(file)?,
                        (Version::V2, true) => self.read_elements2_bin(file)?,
                        _ => self.read_elements4(file)?,
                    }
                    self.expect_end()?;
                }
                _ => self.skip_section(tok, line)?,
            }
        }
        if !file.version_seen {
            return Err(self.err(1, "not a Gmsh .msh file: the file is empty"));
        }
        if !file.nodes_seen {
            return Err(self.err(self.line, "no $Nodes section in the file"));
        }
        if !file.elements_seen {
            return Err(self.err(self.line, "no $Elements section in the file"));
        }
        Ok(())
    }

    /// Skip an unknown section by searching for its `$End...` marker (works for binary data too).
    fn skip_section(&mut self, tok: &[u8], line: usize) -> Result<()> {
        let mut end = b"$End".to_vec();
        end.extend_from_slice(&tok[1..]);
        let rest = &self.data[self.pos..];
        match rest.windows(end.len()).position(|w| w == end.as_slice()) {
            Some(k) => {
                if !self.binary {
                    self.line += rest[..k].iter().filter(|&&c| c == b'\n').count();
                }
                self.pos += k + end.len();
                Ok(())
            }
            None => Err(self.err(
                line,
                format!(
                    "unexpected end of file in section {} (no {} found)",
                    show(tok),
                    show(&end)
                ),
            )),
        }
    }

    fn read_format(&mut self) -> Result<()> {
        let Some((ver, vline)) = self.token() else {
            return Err(self.eof_err("expected the format version"));
        };
        let ver_s = show(ver);
        // Numerically: Gmsh writes "2.2" as well as "2.200000", and 4.0 as "4".
        let num: f64 = ver_s.parse().unwrap_or(f64::NAN);
        self.version = match num {
            v if (2.0..=2.2).contains(&v) => Version::V2,
            4.0 => Version::V40,
            4.1 => Version::V41,
            _ => {
                return Err(self.err(
                    vline,
                    format!("version {ver_s} is not supported; use 2.2, 4.0 or 4.1"),
                ))
            }
        };
        let file_type: u32 = self.num("file type (0 = ASCII, 1 = binary)", &|| {
            "expected file type and data size".into()
        })?;
        let data_size: usize = self.num("data size", &|| "expected the data size".into())?;
        match file_type {
            0 => {}
            1 => {
                self.binary = true;
                let ok = match self.version {
                    Version::V2 | Version::V40 => data_size == 8,
                    Version::V41 => data_size == 8 || data_size == 4,
                };
                if !ok {
                    return Err(self.err(
                        vline,
                        format!("data size {data_size} is not supported (expected 8)"),
                    ));
                }
                self.size_t = data_size;
                self.rest_of_line();
                let b = self.bytes(4, &|| "expected the binary endianness check integer".into())?;
                self.big_endian = match b {
                    [1, 0, 0, 0] => false,
                    [0, 0, 0, 1] => true,
                    _ => {
                        return Err(self.err(
                            vline,
                            format!(
                                "binary endianness check failed: expected the integer 1, found bytes {b:?}"
                            ),
                        ))
                    }
                };
            }
            _ => {
                return Err(self.err(
                    vline,
                    format!("file type {file_type} is not supported (0 = ASCII, 1 = binary)"),
                ))
            }
        }
        self.expect_end()
    }

    fn read_physical_names(&mut self, file: &mut RawFile) -> Result<()> {
        let n = self.count("the number of physical names")?;
        for i in 0..n {
            let more = || format!("expected {} more physical names", n - i);
            let dim: usize = self.num("physical dimension", &more)?;
            let tag: i32 = self.num("physical tag", &more)?;
            let name = self.rest_of_line();
            let name = String::from_utf8_lossy(name);
            let name = name.trim().trim_matches('"').to_string();
            file.physical_names.push(((dim, tag), name));
        }
        self.expect_end()
    }

    fn read_entities_ascii(&mut self, file: &mut RawFile) -> Result<()> {
        let mut counts = [0usize; 4];
        for c in &mut counts {
            *c = self.count("entity count")?;
        }
        for (dim, &n) in counts.iter().enumerate() {
            for i in 0..n {
                let more = || format!("expected {} more entities of dimension {dim}", n - i);
                let tag: i32 = self.num("entity tag", &more)?;
                for _ in 0..self.bbox_len(dim) {
                    self.num::<f64>("entity bounding box coordinate", &more)?;
                }
                let nphys: usize = self.num("number of physical tags", &more)?;
                for k in 0..nphys {
                    let p: i32 = self.num("physical tag", &more)?;
                    if k == 0 {
                        file.entity_phys.insert((dim, tag), p);
                    }
                }
                if dim > 0 {
                    let nb: usize = self.num("number of bounding entities", &more)?;
                    for _ in 0..nb {
                        self.num::<i64>("bounding entity tag", &more)?;
                    }
                }
            }
        }
        Ok(())
    }

    fn read_entities_bin(&mut self, file: &mut RawFile) -> Result<()> {
        // The binary header starts right after the section line.
        self.rest_of_line();
        let mut counts = [0usize; 4];
        for c in &mut counts {
            *c = self.bin_count("entity count")?;
        }
        for (dim, &n) in counts.iter().enumerate() {
            for i in 0..n {
                let more = || format!("expected {} more entities of dimension {dim}", n - i);
                let tag = self.bin_i32(&more)?;
                self.bytes(8 * self.bbox_len(dim), &more)?;
                let nphys = self.bin_size(&more)?;
                for k in 0..nphys {
                    let p = self.bin_i32(&more)?;
                    if k == 0 {
                        file.entity_phys.insert((dim, tag), p);
                    }
                }
                if dim > 0 {
                    let nb = self.bin_size(&more)?;
                    let len = usize::try_from(nb).ok().and_then(|n| n.checked_mul(4));
                    match len {
                        Some(len) => {
                            self.bytes(len, &more)?;
                        }
                        None => return Err(self.eof_err(&more())),
                    }
                }
            }
        }
        Ok(())
    }

    /// Reserve room for up to `n` items, bounded by what the remaining bytes could hold.
    pub(super) fn reserve_bound(&self, n: usize, min_bytes_per_item: usize) -> usize {
        n.min(self.remaining() / min_bytes_per_item.max(1) + 1)
    }

    fn read_nodes2(&mut self, file: &mut RawFile) -> Result<()> {
        let n = self.count("the number of nodes")?;
        if self.binary {
            self.rest_of_line();
            self.need_records(n, 28, "nodes")?;
        }
        let cap = self.reserve_bound(n, 8);
        file.node_tags.reserve(cap);
        file.points.reserve(cap);
        for i in 0..n {
            let more = || format!("expected {} more nodes", n - i);
            let tag = if self.binary {
                let tag = self.bin_i32(&more)?;
                u64::try_from(tag).map_err(|_| self.err(0, format!("negative node tag {tag}")))?
            } else {
                self.num("node tag", &more)?
            };
            let x = self.real("node x coordinate", &more)?;
            let y = self.real("node y coordinate", &more)?;
            let z = self.real("node z coordinate", &more)?;
            file.node_tags.push(tag);
            file.points.push([x, y, z]);
        }
        Ok(())
    }

    /// 4.0 and 4.1: 4.1 lists a block's tags before its coordinates, 4.0 interleaves them.
    fn read_nodes4(&mut self, file: &mut RawFile) -> Result<()> {
        let (nblocks, total) = self.header4("node")?;
        let cap = self.reserve_bound(total, 8);
        file.node_tags.reserve(cap);
        file.points.reserve(cap);
        let mut read = 0usize;
        for b in 0..nblocks {
            let more_blocks = || format!("expected {} more node blocks", nblocks - b);
            let edim = self.block_entity(&more_blocks)?.0;
            let parametric: i64 = if self.binary {
                self.bin_i32(&more_blocks)?.into()
            } else {
                self.num("parametric flag", &more_blocks)?
            };
            let n = self.header_count("the number of nodes in the block")?;
            let extra = if parametric != 0 {
                edim.clamp(0, 3) as usize
            } else {
                0
            };
            let left = total.saturating_sub(read).max(n);
            if self.binary {
                let record = self.tag_len() + 24 + 8 * extra;
                let have = self.remaining() / record;
                if have < n {
                    return Err(self.eof_err(&format!("expected {} more nodes", left - have)));
                }
            }
            let v40 = self.version == Version::V40;
            for i in 0..n {
                let more = || format!("expected {} more nodes", left - i);
                file.node_tags.push(self.tag("node tag", &more)?);
                if v40 {
                    file.points.push(self.point(extra, &more)?);
                }
            }
            for i in 0..if v40 { 0 } else { n } {
                let more = || format!("expected {} more nodes", left - i);
                file.points.push(self.point(extra, &more)?);
            }
            read += n;
        }
        if read != total {
            return Err(self.err(
                self.line,
                format!("$Nodes header announces {total} nodes but the blocks hold {read}"),
            ));
        }
        Ok(())
    }

    /// Check a Gmsh element type: returns (nodes to read, corner nodes to keep, linear type).
    /// High-order elements keep their corners (Gmsh lists them first); points keep nothing.
    fn check_type(&self, t: i64, line: usize, offset: usize) -> Result<(usize, usize, u8)> {
        match (gmsh_type_info(t), linear_type(t)) {
            (Some((n, _, _)), Some(lin)) => Ok((n, corner_count(lin), lin)),
            (Some((n, _, _)), None) => Ok((n, 0, 0)),
            (None, _) => Err(self.err(
                line,
                format!(
                    "unsupported element type {t} (unknown to this reader) at {}",
                    self.where_at(line, offset)
                ),
            )),
        }
    }

    fn read_elements2_ascii(&mut self, file: &mut RawFile) -> Result<()> {
        let n = self.count("the number of elements")?;
        let cap = self.reserve_bound(n, 8);
        reserve_elements(file, cap);
        for i in 0..n {
            let more = || format!("expected {} more elements", n - i);
            let tag: u64 = self.num("element tag", &more)?;
            let line = self.line;
            let t: i64 = self.num("element type", &more)?;
            let (nn, corners, lin) = self.check_type(t, line, 0)?;
            let ntags: usize = self.num("number of element tags", &more)?;
            let mut phys = 0i32;
            for k in 0..ntags {
                let v: i32 = self.num("element tag value", &more)?;
                if k == 0 {
                    phys = v;
                }
            }
            for j in 0..nn {
                let v: u64 = self.num("element node tag", &more)?;
                if j < corners {
                    file.nodes.push(v);
                }
            }
            if corners > 0 {
                push_element(file, (lin, t), tag, phys, line);
            }
        }
        Ok(())
    }

    fn read_elements2_bin(&mut self, file: &mut RawFile) -> Result<()> {
        let n = self.count("the number of elements")?;
        self.rest_of_line();
        let cap = self.reserve_bound(n, 12);
        reserve_elements(file, cap);
        let mut read = 0usize;
        while read < n {
            let left = n - read;
            let more = || format!("expected {left} more elements");
            let header_at = self.pos;
            let t = self.bin_i32(&more)?;
            let count = self.bin_i32(&more)?;
            let ntags = self.bin_i32(&more)?;
            let (nn, corners, lin) = self.check_type(i64::from(t), 0, header_at)?;
            let (Ok(count), Ok(ntags)) = (usize::try_from(count), usize::try_from(ntags)) else {
                return Err(self.err(
                    0,
                    format!(
                        "negative count in element block header ({count} elements, {ntags} tags)"
                    ),
                ));
            };
            if count > left {
                return Err(self.err(
                    0,
                    format!(
                        "element block of {count} elements overruns the {n} elements announced"
                    ),
                ));
            }
            let record = 4 * (1 + ntags + nn);
            if self.remaining() / record < count {
                let have = self.remaining() / record;
                return Err(self.eof_err(&format!("expected {} more elements", left - have)));
            }
            for _ in 0..count {
                let at = self.pos;
                let tag = self.bin_i32(&more)?;
                let mut phys = 0;
                for k in 0..ntags {
                    let v = self.bin_i32(&more)?;
                    if k == 0 {
                        phys = v;
                    }
                }
                for j in 0..nn {
                    let v = self.bin_i32(&more)?;
                    if j < corners {
                        file.nodes.push(u64::try_from(v).unwrap_or(u64::MAX));
                    }
                }
                if corners > 0 {
                    let tag = u64::try_from(tag).unwrap_or(0);
                    push_element(file, (lin, i64::from(t)), tag, phys, at);
                }
            }
            read += count;
        }
        Ok(())
    }

    fn read_elements4(&mut self, file: &mut RawFile) -> Result<()> {
        let (nblocks, total) = self.header4("element")?;
        let cap = self.reserve_bound(total, 8);
        reserve_elements(file, cap);
        let mut read = 0usize;
        for b in 0..nblocks {
            let more_blocks = || format!("expected {} more element blocks", nblocks - b);
            let header_at = self.pos;
            let (edim, etag) = self.block_entity(&more_blocks)?;
            let line = self.line;
            let t: i64 = if self.binary {
                self.bin_i32(&more_blocks)?.into()
            } else {
                self.num("element type", &more_blocks)?
            };
            let n = self.header_count("the number of elements in the block")?;
            let (nn, corners, lin) = self.check_type(t, line, header_at)?;
            let phys = match (usize::try_from(edim), i32::try_from(etag)) {
                (Ok(d), Ok(e)) => file.entity_phys.get(&(d, e)).copied().unwrap_or(0),
                _ => 0,
            };
            let left = total.saturating_sub(read).max(n);
            if self.binary {
                let record = self.tag_len() * (1 + nn);
                let have = self.remaining() / record;
                if have < n {
                    return Err(self.eof_err(&format!("expected {} more elements", left - have)));
                }
            }
            for i in 0..n {
                let more = || format!("expected {} more elements", left - i);
                let at = self.pos;
                let tag = self.tag("element tag", &more)?;
                // Where the element is: its byte offset (binary) or line (ASCII).
                let loc = if self.binary { at } else { self.line };
                for j in 0..nn {
                    let v = self.tag("element node tag", &more)?;
                    if j < corners {
                        file.nodes.push(v);
                    }
                }
                if corners > 0 {
                    push_element(file, (lin, t), tag, phys, loc);
                }
            }
            read += n;
        }
        if read != total {
            return Err(self.err(
                self.line,
                format!("$Elements header announces {total} elements but the blocks hold {read}"),
            ));
        }
        Ok(())
    }
}

fn decode_uint(b: &[u8], big_endian: bool) -> u64 {
    let mut v = 0u64;
    if big_endian {
        for &x in b {
            v = (v << 8) | u64::from(x);
        }
    } else {
        for &x in b.iter().rev() {
            v = (v << 8) | u64::from(x);
        }
    }
    v
}

fn reserve_elements(file: &mut RawFile, n: usize) {
    file.types.reserve(n);
    file.tags.reserve(n);
    file.phys.reserve(n);
    file.offsets.reserve(n);
    file.locs.reserve(n);
}

/// Record an element of linear type `t.0` (read as file type `t.1`) whose node tags were just
/// appended to `file.nodes`.
pub(super) fn push_element(file: &mut RawFile, t: (u8, i64), tag: u64, phys: i32, loc: usize) {
    if i64::from(t.0) != t.1 {
        *file.high_order.entry(t.1).or_default() += 1;
    }
    file.types.push(t.0);
    file.tags.push(tag);
    file.phys.push(phys);
    file.offsets.push(file.nodes.len());
    file.locs.push(loc);
}

/// Node tag -> 0-based index: a dense table when tags are compact, a hash map otherwise.
enum NodeMap {
    Dense(Vec<u32>),
    Sparse(HashMap<u64, u32>),
}

impl NodeMap {
    fn get(&self, tag: u64) -> Option<u32> {
        match self {
            NodeMap::Dense(v) => usize::try_from(tag)
                .ok()
                .and_then(|t| v.get(t))
                .copied()
                .filter(|&i| i != u32::MAX),
            NodeMap::Sparse(m) => m.get(&tag).copied(),
        }
    }
}

impl RawFile {
    /// An empty file ready for elements (the Medit and VTU readers), numbered by `scheme`.
    pub(super) fn with_elements(scheme: NumberingScheme) -> Self {
        RawFile {
            offsets: vec![0],
            scheme,
            ..RawFile::default()
        }
    }

    fn node_map(&self, r: &Reader) -> Result<NodeMap> {
        let n = self.node_tags.len();
        if n >= u32::MAX as usize {
            return Err(r.err(0, format!("too many nodes ({n})")));
        }
        let max = self.node_tags.iter().copied().max().unwrap_or(0);
        let dup = |tag: u64| {
            Error::parse(
                r.path,
                0,
                format!("node tag {tag} is defined twice in $Nodes"),
            )
        };
        if max <= 2 * n as u64 + 1024 {
            let mut v = vec![u32::MAX; max as usize + 1];
            for (i, &t) in self.node_tags.iter().enumerate() {
                if v[t as usize] != u32::MAX {
                    return Err(dup(t));
                }
                v[t as usize] = i as u32;
            }
            Ok(NodeMap::Dense(v))
        } else {
            let mut m = HashMap::with_capacity(n);
            for (i, &t) in self.node_tags.iter().enumerate() {
                if m.insert(t, i as u32).is_some() {
                    return Err(dup(t));
                }
            }
            Ok(NodeMap::Sparse(m))
        }
    }

    pub(super) fn into_mesh(self, r: &Reader) -> Result<Mesh> {
        let map = self.node_map(r)?;
        if !self.high_order.is_empty() {
            let kinds: Vec<String> = self
                .high_order
                .iter()
                .map(|(&t, n)| format!("{n} {}", gmsh_type_info(t).map_or("?", |i| i.1)))
                .collect();
            log::warn!(
                "{}: high-order elements read as linear ones from their corner nodes (curved \
                 geometry and the other nodes are dropped): {}",
                r.path.display(),
                kinds.join(", ")
            );
        }
        let dim = self
            .types
            .iter()
            .filter_map(|&t| gmsh_type_info(i64::from(t)).map(|i| i.2))
            .max()
            .unwrap_or(0);
        let mut mesh = Mesh::new(dim);
        let mut verts: Vec<u32> = Vec::with_capacity(8);
        for e in 0..self.types.len() {
            let t = self.types[e];
            let edim = gmsh_type_info(i64::from(t)).map_or(0, |i| i.2);
            if dim < 2 || (edim != dim && edim + 1 != dim) {
                continue;
            }
            verts.clear();
            for &tag in &self.nodes[self.offsets[e]..self.offsets[e + 1]] {
                match map.get(tag) {
                    Some(i) => verts.push(i),
                    None => {
                        let loc = if r.binary {
                            format!("byte offset {}", self.locs[e])
                        } else {
                            format!("line {}", self.locs[e])
                        };
                        let line = if r.binary { 0 } else { self.locs[e] };
                        return Err(Error::parse(
                            r.path,
                            line,
                            format!(
                                "element {} ({loc}) references node {tag} which is not defined",
                                self.tags[e]
                            ),
                        ));
                    }
                }
            }
            if edim == dim {
                if let Some(kind) = kind_of(t) {
                    mesh.push_element(kind, &verts, self.phys[e]);
                    mesh.numbering.elements.push(self.tags[e]);
                }
            } else {
                mesh.boundary_facets.push(BoundaryFacet {
                    vertices: verts.clone(),
                    tag: self.phys[e],
                });
            }
        }
        mesh.points = self.points;
        mesh.physical_names = self.physical_names.into_iter().collect();
        mesh.numbering.scheme = self.scheme;
        mesh.numbering.nodes = self.node_tags;
        Ok(mesh)
    }
}
