//! Gridded data (rasters) for fields given on a regular grid: bathymetry, initial layers.
//!
//! Two formats, recognised by content: the ESRI ASCII grid (`.asc`: a header of `ncols`,
//! `nrows`, `xllcorner`/`xllcenter`, `yllcorner`/`yllcenter`, `cellsize` (or `dx` and `dy`),
//! optional `NODATA_value`, then `nrows` rows of `ncols` values, the northernmost row first)
//! and GeoTIFF (one band of float32 or float64 samples, integer samples accepted too,
//! georeferenced by ModelTiepoint and ModelPixelScale; PixelIsArea unless the GeoKey directory
//! says PixelIsPoint; the GDAL_NODATA tag gives the no-data value), decoded by the `tiff`
//! crate. Files are read through [`crate::files::read_limited`].
//!
//! [`Raster::sample`] interpolates bilinearly between pixel centres (the value of a pixel
//! belongs to its centre); within the raster's extent but outside the hull of the centres (the
//! half-pixel border) the nearest centres' values are extended. A point outside the extent, or
//! one whose stencil touches a no-data pixel, gets what [`Outside`] says.

use crate::error::{Error, Result};
use std::path::{Path, PathBuf};

/// Largest raster file read.
pub const MAX_RASTER_BYTES: u64 = 1 << 30;

/// Most pixels of a raster (an allocation bound: 2^28 f64 are 2 GiB).
pub const MAX_PIXELS: u64 = 1 << 28;

/// Largest ratio of decoded to file bytes a compressed GeoTIFF may have (decoding bound).
pub const MAX_COMPRESSION: u64 = 256;

/// What a sample outside the raster's extent, or touching a no-data pixel, gives.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Outside {
    /// An error naming the raster and the point.
    Error,
    /// The nearest point of the extent (outside), the remaining valid pixels of the stencil,
    /// weights renormalised (no data; an error when all four are missing).
    Clamp,
    /// This value.
    Value(f64),
}

impl std::fmt::Display for Outside {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Outside::Error => f.write_str("error"),
            Outside::Clamp => f.write_str("clamp"),
            Outside::Value(v) => write!(f, "{v}"),
        }
    }
}

/// A regular grid of values. Pixel (row r, column c), rows from the north, has its centre at
/// (x0 + c·dx, y0 − r·dy).
#[derive(Clone, Debug, PartialEq)]
pub struct Raster {
    pub ncols: usize,
    pub nrows: usize,
    /// x of the centres of column 0.
    pub x0: f64,
    /// y of the centres of row 0 (the northernmost).
    pub y0: f64,
    pub dx: f64,
    pub dy: f64,
    /// Row-major values, row 0 first.
    pub values: Vec<f64>,
    /// The no-data value, if any.
    pub nodata: Option<f64>,
    /// The file it came from (named in errors).
    pub source: PathBuf,
}

fn parse_err(path: &Path, line: usize, msg: impl Into<String>) -> Error {
    Error::parse(path, line, msg)
}

impl Raster {
    /// Read a raster file (ESRI ASCII grid or GeoTIFF, recognised by content).
    pub fn from_file(path: &Path) -> Result<Raster> {
        let bytes = crate::files::read_limited(path, MAX_RASTER_BYTES)?;
        Self::parse(path, &bytes)
    }

    /// Parse raster bytes: TIFF when they start with a TIFF byte-order mark, else an ESRI
    /// ASCII grid.
    pub fn parse(path: &Path, bytes: &[u8]) -> Result<Raster> {
        if bytes.starts_with(b"II*\0")
            || bytes.starts_with(b"MM\0*")
            || bytes.starts_with(b"II+\0")
            || bytes.starts_with(b"MM\0+")
        {
            return Self::parse_tiff(path, bytes);
        }
        let text = std::str::from_utf8(bytes).map_err(|e| {
            parse_err(
                path,
                0,
                format!(
                    "neither a TIFF nor an ASCII grid (not text: invalid UTF-8 at byte offset {})",
                    e.valid_up_to()
                ),
            )
        })?;
        Self::parse_asc(path, text.strip_prefix('\u{feff}').unwrap_or(text))
    }

    /// Parse an ESRI ASCII grid. Errors name the file and the line.
    pub fn parse_asc(path: &Path, text: &str) -> Result<Raster> {
        let mut ncols = None;
        let mut nrows = None;
        let mut xll: Option<(f64, bool)> = None;
        let mut yll: Option<(f64, bool)> = None;
        let mut cellsize = None;
        let (mut dx, mut dy) = (None, None);
        let mut nodata = None;
        let mut lines = text.lines().enumerate().peekable();
        // Header: lines whose first token starts with a letter.
        while let Some(&(i, line)) = lines.peek() {
            let mut tok = line.split_whitespace();
            let Some(key) = tok.next() else {
                lines.next();
                continue;
            };
            if !key.starts_with(|c: char| c.is_ascii_alphabetic()) {
                break;
            }
            lines.next();
            let ln = i + 1;
            let value = tok
                .next()
                .ok_or_else(|| parse_err(path, ln, format!("header key '{key}' has no value")))?;
            if let Some(extra) = tok.next() {
                return Err(parse_err(
                    path,
                    ln,
                    format!("header line '{key}' has more than one value ('{extra}')"),
                ));
            }
            let number = || -> Result<f64> {
                value
                    .parse::<f64>()
                    .ok()
                    .filter(|v| v.is_finite())
                    .ok_or_else(|| {
                        parse_err(path, ln, format!("{key}: '{value}' is not a finite number"))
                    })
            };
            let count = || -> Result<usize> {
                value
                    .parse::<usize>()
                    .ok()
                    .filter(|&n| n > 0)
                    .ok_or_else(|| {
                        parse_err(
                            path,
                            ln,
                            format!("{key}: '{value}' is not a positive integer"),
                        )
                    })
            };
            let lower = key.to_ascii_lowercase();
            let slot_taken = match lower.as_str() {
                "ncols" => ncols.replace(count()?).is_some(),
                "nrows" => nrows.replace(count()?).is_some(),
                "xllcorner" => xll.replace((number()?, false)).is_some(),
                "xllcenter" => xll.replace((number()?, true)).is_some(),
                "yllcorner" => yll.replace((number()?, false)).is_some(),
                "yllcenter" => yll.replace((number()?, true)).is_some(),
                "cellsize" => cellsize.replace(number()?).is_some(),
                "dx" => dx.replace(number()?).is_some(),
                "dy" => dy.replace(number()?).is_some(),
                "nodata_value" => nodata.replace(number()?).is_some(),
                _ => {
                    return Err(parse_err(
                        path,
                        ln,
                        format!(
                            "unknown header key '{key}' (expected ncols, nrows, xllcorner or \
                             xllcenter, yllcorner or yllcenter, cellsize, NODATA_value)"
                        ),
                    ))
                }
            };
            if slot_taken {
                return Err(parse_err(
                    path,
                    ln,
                    format!("header key '{key}' given twice"),
                ));
            }
        }
        let need = |what: &str| parse_err(path, 0, format!("the header has no {what}"));
        let ncols = ncols.ok_or_else(|| need("ncols"))?;
        let nrows = nrows.ok_or_else(|| need("nrows"))?;
        let (xll, x_centre) = xll.ok_or_else(|| need("xllcorner or xllcenter"))?;
        let (yll, y_centre) = yll.ok_or_else(|| need("yllcorner or yllcenter"))?;
        let (dx, dy) = match (cellsize, dx, dy) {
            (Some(c), None, None) => (c, c),
            (None, Some(a), Some(b)) => (a, b),
            _ => return Err(need("cellsize (or dx and dy, not both forms)")),
        };
        let pixels = ncols as u64 * nrows as u64;
        // An ASCII value takes at least two bytes (a digit and a separator).
        if pixels > MAX_PIXELS || pixels > text.len() as u64 / 2 + 1 {
            return Err(parse_err(
                path,
                0,
                format!(
                    "{ncols} x {nrows} pixels: more than the file's {} bytes can hold",
                    text.len()
                ),
            ));
        }
        let mut values = Vec::with_capacity(pixels as usize);
        let mut last_line = 0;
        for (i, line) in lines {
            last_line = i + 1;
            for tok in line.split_whitespace() {
                if values.len() as u64 == pixels {
                    return Err(parse_err(
                        path,
                        i + 1,
                        format!("more than ncols x nrows = {pixels} values ('{tok}')"),
                    ));
                }
                let v = tok
                    .parse::<f64>()
                    .ok()
                    .filter(|v| v.is_finite())
                    .ok_or_else(|| {
                        parse_err(
                            path,
                            i + 1,
                            format!(
                                "value '{tok}' (row {}, column {}) is not a finite number",
                                values.len() / ncols + 1,
                                values.len() % ncols + 1
                            ),
                        )
                    })?;
                values.push(v);
            }
        }
        if (values.len() as u64) < pixels {
            return Err(parse_err(
                path,
                last_line,
                format!(
                    "{} values, expected ncols x nrows = {ncols} x {nrows} = {pixels}",
                    values.len()
                ),
            ));
        }
        let half = |centre: bool, d: f64| if centre { 0.0 } else { 0.5 * d };
        Self::checked(Raster {
            ncols,
            nrows,
            x0: xll + half(x_centre, dx),
            y0: yll + half(y_centre, dy) + (nrows - 1) as f64 * dy,
            dx,
            dy,
            values,
            nodata,
            source: path.to_path_buf(),
        })
    }

    /// Parse a GeoTIFF: the first image, one band, georeferenced by ModelTiepoint and
    /// ModelPixelScale. Errors name the file and what is missing or malformed.
    pub fn parse_tiff(path: &Path, bytes: &[u8]) -> Result<Raster> {
        use tiff::decoder::{Decoder, DecodingResult, Limits};
        use tiff::tags::Tag;
        let tiff_err = |e: tiff::TiffError| parse_err(path, 0, format!("TIFF: {e}"));
        // Decoded size bound: what the file can back at a generous compression ratio, so a
        // header claiming a huge image cannot make the decoder allocate it.
        let max_decoded = (bytes.len() as u64 * MAX_COMPRESSION).clamp(16 << 20, MAX_PIXELS * 8);
        let mut limits = Limits::default();
        limits.decoding_buffer_size = max_decoded as usize;
        limits.intermediate_buffer_size = max_decoded as usize;
        limits.ifd_value_size = 1 << 20;
        let mut dec = Decoder::new(std::io::Cursor::new(bytes))
            .map_err(tiff_err)?
            .with_limits(limits);
        let (w, h) = dec.dimensions().map_err(tiff_err)?;
        match dec.colortype().map_err(tiff_err)? {
            tiff::ColorType::Gray(_) => {}
            other => {
                return Err(parse_err(
                    path,
                    0,
                    format!("TIFF: {other:?} samples; a raster must have one band (gray)"),
                ))
            }
        }
        let tag = |dec: &mut Decoder<_>, t: Tag, name: &str| -> Result<Vec<f64>> {
            dec.find_tag(t)
                .map_err(tiff_err)?
                .ok_or_else(|| {
                    parse_err(path, 0, format!("TIFF: no {name} tag: not georeferenced"))
                })?
                .into_f64_vec()
                .map_err(|e| parse_err(path, 0, format!("TIFF: {name}: {e}")))
        };
        let scale = tag(&mut dec, Tag::ModelPixelScaleTag, "ModelPixelScale")?;
        let tie = tag(&mut dec, Tag::ModelTiepointTag, "ModelTiepoint")?;
        if scale.len() < 2 || tie.len() < 6 {
            return Err(parse_err(
                path,
                0,
                format!(
                    "TIFF: ModelPixelScale has {} values (need 3), ModelTiepoint {} (need 6)",
                    scale.len(),
                    tie.len()
                ),
            ));
        }
        if tie.len() > 6 {
            return Err(parse_err(
                path,
                0,
                "TIFF: several tie points (a warped raster); one tie point and a pixel scale are supported",
            ));
        }
        // GeoKey 1025 GTRasterTypeGeoKey: 1 PixelIsArea (default), 2 PixelIsPoint.
        let pixel_is_point = match dec.find_tag(Tag::GeoKeyDirectoryTag).map_err(tiff_err)? {
            Some(v) => {
                let keys = v
                    .into_u16_vec()
                    .map_err(|e| parse_err(path, 0, format!("TIFF: GeoKeyDirectory: {e}")))?;
                keys.get(4..)
                    .unwrap_or(&[])
                    .chunks_exact(4)
                    .any(|k| k[0] == 1025 && k[1] == 0 && k[3] == 2)
            }
            None => false,
        };
        let nodata = match dec.find_tag(Tag::GdalNodata).map_err(tiff_err)? {
            Some(v) => {
                let s = v
                    .into_string()
                    .map_err(|e| parse_err(path, 0, format!("TIFF: GDAL_NODATA: {e}")))?;
                let s = s.trim_matches(|c: char| c == '\0' || c.is_whitespace());
                Some(s.parse::<f64>().map_err(|_| {
                    parse_err(path, 0, format!("TIFF: GDAL_NODATA '{s}' is not a number"))
                })?)
            }
            None => None,
        };
        let pixels = w as u64 * h as u64;
        if pixels == 0 || pixels > MAX_PIXELS || pixels > max_decoded {
            return Err(parse_err(
                path,
                0,
                format!(
                    "TIFF: {w} x {h} pixels: more than a file of {} bytes can hold (at most \
                     {MAX_COMPRESSION}:1 compression, {MAX_PIXELS} pixels)",
                    bytes.len()
                ),
            ));
        }
        let values: Vec<f64> = match dec.read_image().map_err(tiff_err)? {
            DecodingResult::F32(v) => v.into_iter().map(f64::from).collect(),
            DecodingResult::F64(v) => v,
            DecodingResult::U8(v) => v.into_iter().map(f64::from).collect(),
            DecodingResult::U16(v) => v.into_iter().map(f64::from).collect(),
            DecodingResult::U32(v) => v.into_iter().map(f64::from).collect(),
            DecodingResult::I8(v) => v.into_iter().map(f64::from).collect(),
            DecodingResult::I16(v) => v.into_iter().map(f64::from).collect(),
            DecodingResult::I32(v) => v.into_iter().map(f64::from).collect(),
            other => {
                return Err(parse_err(
                    path,
                    0,
                    format!("TIFF: unsupported sample type {}", decoding_name(&other)),
                ))
            }
        };
        if values.len() as u64 != pixels {
            return Err(parse_err(
                path,
                0,
                format!("TIFF: {} samples for {w} x {h} pixels", values.len()),
            ));
        }
        let (dx, dy) = (scale[0], scale[1]);
        let (i, j, x, y) = (tie[0], tie[1], tie[3], tie[4]);
        let half = if pixel_is_point { 0.0 } else { 0.5 };
        Self::checked(Raster {
            ncols: w as usize,
            nrows: h as usize,
            x0: x + (half - i) * dx,
            y0: y - (half - j) * dy,
            dx,
            dy,
            values,
            nodata,
            source: path.to_path_buf(),
        })
    }

    fn checked(r: Raster) -> Result<Raster> {
        if !(r.dx > 0.0 && r.dy > 0.0 && r.dx.is_finite() && r.dy.is_finite()) {
            return Err(parse_err(
                &r.source,
                0,
                format!("pixel size {} x {} must be positive and finite", r.dx, r.dy),
            ));
        }
        let e = r.extent();
        if !e.iter().all(|v| v.is_finite()) || !r.x0.is_finite() || !r.y0.is_finite() {
            return Err(parse_err(
                &r.source,
                0,
                "the raster's origin or extent is not finite",
            ));
        }
        if let Some(k) = r.values.iter().position(|v| !v.is_finite()) {
            if !r.nodata.is_some_and(|nd| nd.is_nan()) {
                return Err(parse_err(
                    &r.source,
                    0,
                    format!(
                        "pixel (row {}, column {}) is {} (not finite, and not the no-data value)",
                        k / r.ncols + 1,
                        k % r.ncols + 1,
                        r.values[k]
                    ),
                ));
            }
        }
        Ok(r)
    }

    /// The extent [x_min, x_max, y_min, y_max]: the pixels' outer edges.
    pub fn extent(&self) -> [f64; 4] {
        [
            self.x0 - 0.5 * self.dx,
            self.x0 + (self.ncols as f64 - 0.5) * self.dx,
            self.y0 - (self.nrows as f64 - 0.5) * self.dy,
            self.y0 + 0.5 * self.dy,
        ]
    }

    fn is_nodata(&self, v: f64) -> bool {
        match self.nodata {
            Some(nd) if nd.is_nan() => v.is_nan(),
            Some(nd) => v == nd,
            None => false,
        }
    }

    /// The value at (x, y), bilinear between pixel centres; outside the extent or next to
    /// no-data pixels as `outside` says. Errors name the raster, the point and the pixel.
    pub fn sample(&self, x: f64, y: f64, outside: Outside) -> Result<f64> {
        let [x_min, x_max, y_min, y_max] = self.extent();
        let (mut px, mut py) = (x, y);
        if !(x >= x_min && x <= x_max && y >= y_min && y <= y_max) {
            match outside {
                Outside::Error => {
                    return Err(Error::Invalid(format!(
                    "{}: point ({x}, {y}) lies outside the raster's extent [{x_min}, {x_max}] x \
                         [{y_min}, {y_max}] (choose outside = \"clamp\" or a value)",
                    self.source.display()
                )))
                }
                Outside::Value(v) => return Ok(v),
                Outside::Clamp => {
                    px = x.clamp(x_min, x_max);
                    py = y.clamp(y_min, y_max);
                }
            }
        }
        let axis = |f: f64, n: usize| -> (usize, f64) {
            let f = f.clamp(0.0, (n - 1) as f64);
            let i = (f.floor() as usize).min(n.saturating_sub(2));
            (i, if n == 1 { 0.0 } else { f - i as f64 })
        };
        let (c, wc) = axis((px - self.x0) / self.dx, self.ncols);
        let (r, wr) = axis((self.y0 - py) / self.dy, self.nrows);
        let mut sum = 0.0;
        let mut weight = 0.0;
        let mut missing = None;
        for (dr, fr) in [(0, 1.0 - wr), (1, wr)] {
            for (dc, fc) in [(0, 1.0 - wc), (1, wc)] {
                let w = fr * fc;
                if w == 0.0 {
                    continue;
                }
                let (rr, cc) = (r + dr, c + dc);
                let v = self.values[rr * self.ncols + cc];
                if self.is_nodata(v) {
                    missing = Some((rr, cc));
                    continue;
                }
                sum += w * v;
                weight += w;
            }
        }
        match (missing, outside) {
            (None, _) => Ok(sum / weight),
            (Some(_), Outside::Value(v)) => Ok(v),
            (Some(_), Outside::Clamp) if weight > 0.0 => Ok(sum / weight),
            (Some((rr, cc)), _) => Err(Error::Invalid(format!(
                "{}: point ({x}, {y}) needs pixel (row {}, column {}), which has no data \
                 (choose outside = \"clamp\" or a value)",
                self.source.display(),
                rr + 1,
                cc + 1
            ))),
        }
    }

    /// A fingerprint of the geometry and values (for checkpoints).
    pub fn fingerprint(&self) -> u64 {
        let mut words: Vec<u64> = vec![self.ncols as u64, self.nrows as u64];
        words.extend(
            [
                self.x0,
                self.y0,
                self.dx,
                self.dy,
                self.nodata.unwrap_or(0.0),
            ]
            .iter()
            .map(|v| v.to_bits()),
        );
        words.extend(self.values.iter().map(|v| v.to_bits()));
        crate::checkpoint::fingerprint(bytemuck::cast_slice(&words))
    }
}

fn decoding_name(r: &tiff::decoder::DecodingResult) -> &'static str {
    use tiff::decoder::DecodingResult as D;
    match r {
        D::U64(_) => "u64",
        D::I64(_) => "i64",
        D::F16(_) => "f16",
        _ => "(other)",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GRID: &str =
        "ncols 3\nnrows 2\nxllcorner 0\nyllcorner 0\ncellsize 1\nNODATA_value -9999\n\
                        1 2 3\n4 5 -9999\n";

    #[test]
    fn asc_pixels_are_centred_and_rows_run_north_to_south() {
        let r = Raster::parse_asc(Path::new("g.asc"), GRID).unwrap();
        assert_eq!((r.ncols, r.nrows, r.x0, r.y0), (3, 2, 0.5, 1.5));
        assert_eq!(r.extent(), [0.0, 3.0, 0.0, 2.0]);
        // Centres: (0.5, 1.5) = 1 (north row), (0.5, 0.5) = 4.
        assert_eq!(r.sample(0.5, 1.5, Outside::Error).unwrap(), 1.0);
        assert_eq!(r.sample(0.5, 0.5, Outside::Error).unwrap(), 4.0);
        assert_eq!(r.sample(1.0, 1.0, Outside::Error).unwrap(), 3.0);
        // The half-pixel border extends the nearest centres.
        assert_eq!(r.sample(0.1, 1.9, Outside::Error).unwrap(), 1.0);
        let centre = Raster::parse_asc(
            Path::new("g.asc"),
            &GRID
                .replace("xllcorner 0", "xllcenter 0")
                .replace("yllcorner 0", "yllcenter 0"),
        )
        .unwrap();
        assert_eq!((centre.x0, centre.y0), (0.0, 1.0));
    }

    #[test]
    fn outside_and_nodata_follow_the_choice() {
        let r = Raster::parse_asc(Path::new("g.asc"), GRID).unwrap();
        let e = r.sample(5.0, 1.0, Outside::Error).unwrap_err().to_string();
        assert!(e.contains("g.asc: point (5, 1) lies outside"), "{e}");
        assert_eq!(r.sample(5.0, 1.0, Outside::Value(-7.0)).unwrap(), -7.0);
        assert_eq!(r.sample(5.0, 1.7, Outside::Clamp).unwrap(), 3.0);
        let e = r.sample(2.4, 0.6, Outside::Error).unwrap_err().to_string();
        assert!(
            e.contains("pixel (row 2, column 3), which has no data"),
            "{e}"
        );
        assert_eq!(r.sample(2.5, 0.5, Outside::Value(0.0)).unwrap(), 0.0);
        // Clamp: the stencil's valid pixels, renormalised.
        let v = r.sample(2.0, 1.0, Outside::Clamp).unwrap();
        assert!((v - (2.0 + 3.0 + 5.0) / 3.0).abs() < 1e-12, "{v}");
    }

    #[test]
    fn malformed_grids_name_the_line() {
        let err = |t: &str| {
            Raster::parse_asc(Path::new("g.asc"), t)
                .unwrap_err()
                .to_string()
        };
        assert!(err(&GRID.replace("ncols 3", "ncols x"))
            .contains("g.asc:1: ncols: 'x' is not a positive integer"));
        assert!(err(&GRID.replace("cellsize 1\n", "")).contains("no cellsize"));
        assert!(err(&GRID.replace("4 5", "4 z")).contains("g.asc:8: value 'z' (row 2, column 2)"));
        assert!(err(&GRID.replace("4 5 -9999\n", "")).contains("3 values, expected"));
        assert!(err(&format!("{GRID}7\n")).contains("g.asc:9: more than ncols x nrows"));
        assert!(err(&GRID.replace("cellsize 1", "cellsize -1")).contains("must be positive"));
        assert!(err(&GRID.replace("ncols 3", "ncols 3000000")).contains("more than the file"));
        assert!(err(&GRID.replace("nrows 2", "nrows 2\nfoo 3"))
            .contains("g.asc:3: unknown header key 'foo'"));
    }
}
