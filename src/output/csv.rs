//! CSV time series (one row per step or sample) and atomic JSON statistics files.
//!
//! Numbers are written in the shortest form that parses back to the same `f64` (Rust's
//! `Display`/`LowerExp` are round-trip exact), in plain notation for `1e-4 <= |v| < 1e15` and
//! exponent notation otherwise, so a time series loses no precision and stays readable.
//! Non-finite values are written `NaN`, `inf`, `-inf`, which numpy and pandas read back.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// Appends rows of numbers to a CSV file with a fixed header.
///
/// Every row is flushed to the operating system as soon as it is written, so when the solver
/// process dies the file holds every completed row (a power loss may still drop the last
/// rows, which the OS had not yet written to disk; fsyncing per row would cost too much).
#[derive(Debug)]
pub struct CsvWriter {
    path: PathBuf,
    out: BufWriter<File>,
    columns: usize,
    rows: usize,
}

/// Quote a header field when it holds a comma, quote or line break (RFC 4180).
fn csv_field(name: &str) -> String {
    if name.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", name.replace('"', "\"\""))
    } else {
        name.to_string()
    }
}

/// Shortest round-trip text of `v`: plain notation for moderate magnitudes, exponent otherwise.
pub fn format_number(v: f64) -> String {
    let a = v.abs();
    if v.is_finite() && (a == 0.0 || (1e-4..1e15).contains(&a)) {
        format!("{v}")
    } else {
        format!("{v:e}")
    }
}

impl CsvWriter {
    /// Create (truncate) `path`, creating parent directories, and write the header line.
    pub fn create(path: impl AsRef<Path>, columns: &[&str]) -> Result<Self> {
        let path = path.as_ref().to_path_buf();
        if columns.is_empty() {
            return Err(Error::Invalid(format!(
                "{}: a CSV file needs at least one column",
                path.display()
            )));
        }
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
        }
        let file = File::create(&path).map_err(|e| Error::io(&path, e))?;
        let mut w = CsvWriter {
            path,
            out: BufWriter::new(file),
            columns: columns.len(),
            rows: 0,
        };
        let header: Vec<String> = columns.iter().map(|c| csv_field(c)).collect();
        w.write_line(&header.join(","))?;
        Ok(w)
    }

    /// Continue `path` after its first `rows` data rows (a restart): later rows, from the part
    /// of the run being redone, are dropped; the header must equal `columns`.
    pub fn resume(path: impl AsRef<Path>, columns: &[&str], rows: usize) -> Result<Self> {
        let path = path.as_ref().to_path_buf();
        let text = crate::files::read_text(&path, crate::files::MAX_INPUT_BYTES)?;
        let header: Vec<String> = columns.iter().map(|c| csv_field(c)).collect();
        let kept: Vec<&str> = text.lines().take(rows + 1).collect();
        if kept.first() != Some(&header.join(",").as_str()) || kept.len() != rows + 1 {
            return Err(Error::parse(
                &path,
                0,
                format!(
                    "cannot continue it: expected its header and {rows} rows, found {} lines \
                     (not this run's CSV?)",
                    kept.len()
                ),
            ));
        }
        crate::files::atomic_write(&path, |w| {
            w.write_all(format!("{}\n", kept.join("\n")).as_bytes())
        })?;
        let file = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .map_err(|e| Error::io(&path, e))?;
        Ok(CsvWriter {
            path,
            out: BufWriter::new(file),
            columns: columns.len(),
            rows,
        })
    }

    fn write_line(&mut self, line: &str) -> Result<()> {
        let path = &self.path;
        writeln!(self.out, "{line}")
            .and_then(|_| self.out.flush())
            .map_err(|e| Error::io(path, e))
    }

    /// Append one row; its length must equal the number of columns.
    pub fn row(&mut self, values: &[f64]) -> Result<()> {
        if values.len() != self.columns {
            return Err(Error::Invalid(format!(
                "{}: row {} has {} values, expected {} (one per column)",
                self.path.display(),
                self.rows + 1,
                values.len(),
                self.columns
            )));
        }
        let line: Vec<String> = values.iter().map(|&v| format_number(v)).collect();
        self.write_line(&line.join(","))?;
        self.rows += 1;
        Ok(())
    }

    /// Number of data rows written so far (the header not counted).
    pub fn rows_written(&self) -> usize {
        self.rows
    }

    /// The file being written.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// Write `value` as pretty-printed JSON (with a final newline) atomically, creating parent
/// directories: readers see the old file or the complete new one, never a mix.
pub fn write_json_atomic(path: impl AsRef<Path>, value: &serde_json::Value) -> Result<()> {
    let path = path.as_ref();
    crate::files::atomic_write(path, |w| {
        serde_json::to_writer_pretty(&mut *w, value).map_err(std::io::Error::other)?;
        w.write_all(b"\n")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tmp() -> Result<tempfile::TempDir> {
        tempfile::tempdir().map_err(|e| Error::io("tempdir", e))
    }

    #[test]
    fn numbers_round_trip() {
        for v in [
            0.0,
            -0.0,
            1.0,
            0.1,
            1.0 / 3.0,
            1e-300,
            6.02e23,
            -2.5e-7,
            123456.789,
            f64::MAX,
        ] {
            let s = format_number(v);
            assert_eq!(s.parse::<f64>().ok(), Some(v), "{s}");
        }
        assert_eq!(format_number(0.25), "0.25");
        assert_eq!(format_number(1e-7), "1e-7");
        assert_eq!(format_number(f64::NAN), "NaN");
        assert_eq!(format_number(f64::NEG_INFINITY), "-inf");
    }

    #[test]
    fn writes_header_and_rows_immediately() -> Result<()> {
        let dir = tmp()?;
        let path = dir.path().join("sub/series.csv");
        let mut w = CsvWriter::create(&path, &["step", "time", "mass, total"])?;
        w.row(&[1.0, 0.5, 1.0 / 3.0])?;
        // Read while the writer is still open: the row must already be on disk.
        let text = std::fs::read_to_string(&path).map_err(|e| Error::io(&path, e))?;
        assert_eq!(
            text,
            "step,time,\"mass, total\"\n1,0.5,0.3333333333333333\n"
        );
        let msg = w
            .row(&[1.0])
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(
            msg.contains("series.csv") && msg.contains("has 1 values, expected 3"),
            "{msg}"
        );
        assert_eq!(w.rows_written(), 1);
        Ok(())
    }

    #[test]
    fn json_is_atomic_and_parses() -> Result<()> {
        let dir = tmp()?;
        let path = dir.path().join("stats.json");
        let v = serde_json::json!({"cells": 12, "l2": 1.5e-9});
        write_json_atomic(&path, &v)?;
        let text = std::fs::read_to_string(&path).map_err(|e| Error::io(&path, e))?;
        let back: serde_json::Value =
            serde_json::from_str(&text).map_err(|e| Error::Invalid(e.to_string()))?;
        assert_eq!(back, v);
        assert!(CsvWriter::create(dir.path().join("x.csv"), &[]).is_err());
        Ok(())
    }
}
