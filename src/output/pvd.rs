//! ParaView collections (`.pvd`): the snapshots of a run as one time series. ParaView opens the
//! `.pvd` and steps through its `<DataSet timestep=... file=...>` entries (file names relative to
//! the collection's directory).
//!
//! [`add_to_collection`] keeps no state between calls: it reads the collection back, replaces
//! the entry of the same file or appends one, and writes it whole (atomically), so a run that
//! is interrupted and restarted, or writes the same snapshot index twice, keeps one consistent
//! collection.

use std::path::Path;

use crate::error::{Error, Result};

/// One snapshot of a collection: its time and its file, relative to the collection.
#[derive(Clone, Debug, PartialEq)]
pub struct CollectionEntry {
    pub time: f64,
    pub file: String,
}

/// The entries of a collection file written by [`add_to_collection`] (an empty list when the
/// file does not exist). Errors name the file and line of an entry that cannot be read.
pub fn read_collection(path: &Path) -> Result<Vec<CollectionEntry>> {
    if !path.exists() {
        return Ok(Vec::new());
    }
    let text = crate::files::read_text(path, crate::files::MAX_CASE_BYTES)?;
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if !line.starts_with("<DataSet") {
            continue;
        }
        let attr = |key: &str| -> Option<&str> {
            let start = line.find(&format!(" {key}=\""))? + key.len() + 3;
            let len = line[start..].find('"')?;
            Some(&line[start..start + len])
        };
        let time = attr("timestep").and_then(|t| t.parse::<f64>().ok());
        match (time, attr("file")) {
            (Some(time), Some(file)) => out.push(CollectionEntry {
                time,
                file: unescape(file),
            }),
            _ => {
                return Err(Error::parse(
                    path,
                    n + 1,
                    "a <DataSet> entry without a numeric timestep and a file",
                ))
            }
        }
    }
    Ok(out)
}

/// Add snapshot `file` (a path relative to the collection's directory) at `time` to the
/// collection at `path`, creating it when missing; an entry of the same file is replaced. The
/// entries stay ordered by time (entries of equal time keep their order).
pub fn add_to_collection(path: &Path, time: f64, file: &str) -> Result<()> {
    if !time.is_finite() {
        return Err(Error::Invalid(format!(
            "{}: snapshot {file} has a non-finite time {time}",
            path.display()
        )));
    }
    let mut entries = read_collection(path)?;
    entries.retain(|e| e.file != file);
    entries.push(CollectionEntry {
        time,
        file: file.to_string(),
    });
    entries.sort_by(|a, b| a.time.total_cmp(&b.time));
    crate::files::atomic_write(path, |w| {
        writeln!(w, "<?xml version=\"1.0\"?>")?;
        writeln!(w, "<VTKFile type=\"Collection\" version=\"0.1\">")?;
        writeln!(w, "  <Collection>")?;
        for e in &entries {
            // `{:?}` of an f64 round-trips exactly.
            writeln!(
                w,
                "    <DataSet timestep=\"{:?}\" part=\"0\" file=\"{}\"/>",
                e.time,
                escape(&e.file)
            )?;
        }
        writeln!(w, "  </Collection>")?;
        writeln!(w, "</VTKFile>")
    })
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('"', "&quot;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

fn unescape(s: &str) -> String {
    s.replace("&quot;", "\"")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_are_added_replaced_and_ordered() -> Result<()> {
        let dir = tempfile::tempdir().map_err(|e| Error::io(Path::new("tmp"), e))?;
        let pvd = dir.path().join("run.pvd");
        add_to_collection(&pvd, 0.0, "a_0000.vtu")?;
        add_to_collection(&pvd, 0.5, "a_0002.vtu")?;
        add_to_collection(&pvd, 0.25, "a_0001.vtu")?;
        // A restarted run writes snapshot 2 again at its proper time.
        add_to_collection(&pvd, 0.75, "a_0002.vtu")?;
        add_to_collection(&pvd, 1.0 / 3.0, "q&\"x.vtu")?;
        let got = read_collection(&pvd)?;
        let files: Vec<&str> = got.iter().map(|e| e.file.as_str()).collect();
        assert_eq!(
            files,
            ["a_0000.vtu", "a_0001.vtu", "q&\"x.vtu", "a_0002.vtu"]
        );
        assert_eq!(got[2].time, 1.0 / 3.0);
        assert_eq!(got[3].time, 0.75);
        assert!(add_to_collection(&pvd, f64::NAN, "b.vtu").is_err());
        std::fs::write(&pvd, "<DataSet part=\"0\" file=\"x.vtu\"/>\n")
            .map_err(|e| Error::io(&pvd, e))?;
        let err = read_collection(&pvd).unwrap_err().to_string();
        assert!(err.contains("run.pvd") && err.contains('1'), "{err}");
        Ok(())
    }
}
