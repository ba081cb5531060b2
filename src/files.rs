//! Files written whole or not at all, and read only when regular and of bounded size.

use crate::error::{Error, Result};
use std::io::{Read, Write};
use std::path::Path;

/// Largest input file read (meshes included): /dev/zero or a FIFO must not fill the memory.
pub const MAX_INPUT_BYTES: u64 = 4 << 30;

/// Largest case file read.
pub const MAX_CASE_BYTES: u64 = 16 << 20;

/// Read a regular file of at most `limit` bytes; a directory, device or FIFO is an error
/// naming the path (without reading from it).
pub fn read_limited(path: &Path, limit: u64) -> Result<Vec<u8>> {
    let meta = std::fs::metadata(path).map_err(|e| Error::io(path, e))?;
    let kind = if meta.is_dir() {
        "a directory"
    } else if !meta.is_file() {
        "not a regular file (a device, FIFO or socket)"
    } else {
        ""
    };
    let too_big = |n: u64| {
        Error::Invalid(format!(
            "{}: {n} bytes, more than the {limit} bytes an input file may have",
            path.display()
        ))
    };
    if !kind.is_empty() {
        return Err(Error::Invalid(format!(
            "{}: is {kind}, expected a file",
            path.display()
        )));
    }
    if meta.len() > limit {
        return Err(too_big(meta.len()));
    }
    let mut data = Vec::with_capacity(meta.len() as usize);
    std::fs::File::open(path)
        .and_then(|f| f.take(limit + 1).read_to_end(&mut data))
        .map_err(|e| Error::io(path, e))?;
    if data.len() as u64 > limit {
        return Err(too_big(data.len() as u64));
    }
    Ok(data)
}

/// A UTF-8 text input file ([`read_limited`] to `limit` bytes) without a leading byte-order mark.
pub fn read_text(path: &Path, limit: u64) -> Result<String> {
    let data = read_limited(path, limit)?;
    let text = String::from_utf8(data).map_err(|e| {
        Error::parse(
            path,
            0,
            format!(
                "not UTF-8 text (invalid byte at offset {})",
                e.utf8_error().valid_up_to()
            ),
        )
    })?;
    Ok(match text.strip_prefix('\u{feff}') {
        Some(rest) => rest.to_string(),
        None => text,
    })
}

/// What a run writes into its output directory; `overwrite` removes only these (not meshes:
/// an input may sit there).
const OUTPUT_EXTENSIONS: &[&str] = &["png", "vtu", "pvd", "csv", "ckpt", "json"];

/// Make `dir` the output directory of a new run (created when missing). When it already holds
/// an earlier run's outputs (or temporary files an interrupted one left), refuse, so the two
/// runs' files never mix; with `overwrite`, remove those files first (nothing else).
pub fn claim_output_dir(dir: &Path, overwrite: bool) -> Result<()> {
    if dir.exists() && !dir.is_dir() {
        return Err(Error::Invalid(format!(
            "output directory {}: exists and is not a directory",
            dir.display()
        )));
    }
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    let mut old = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(|e| Error::io(dir, e))? {
        let path = entry.map_err(|e| Error::io(dir, e))?.path();
        let name = path.file_name().unwrap_or_default().to_string_lossy();
        let ext = path.extension().unwrap_or_default().to_string_lossy();
        let ours = OUTPUT_EXTENSIONS.contains(&ext.as_ref())
            || (name.starts_with('.') && name.ends_with(".tmp"));
        if ours && path.is_file() {
            old.push(path);
        }
    }
    match old.first() {
        None => Ok(()),
        Some(first) if !overwrite => Err(Error::Invalid(format!(
            "output directory {} holds {} files of an earlier run (e.g. {}); use --overwrite \
             to replace them, --restart to continue that run, or another --out",
            dir.display(),
            old.len(),
            first.display()
        ))),
        Some(_) => old
            .iter()
            .try_for_each(|p| std::fs::remove_file(p).map_err(|e| Error::io(p, e))),
    }
}

/// Write a file atomically: create the parent directories, stream the contents through
/// `fill` into a temporary file `.<name>.XXXXXX.tmp` next to `path`, flush and fsync it, then
/// rename it onto `path` (atomic on POSIX file systems when both live in one directory).
///
/// On any failure the temporary file is removed and the error names `path`.
pub fn atomic_write<F>(path: &Path, fill: F) -> Result<()>
where
    F: FnOnce(&mut dyn Write) -> std::io::Result<()>,
{
    let io_err = |e: std::io::Error| Error::io(path, e);
    let name = path.file_name().ok_or_else(|| {
        Error::Invalid(format!(
            "{}: not a file path (no file name)",
            path.display()
        ))
    })?;
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => std::path::PathBuf::from("."),
    };
    std::fs::create_dir_all(&dir).map_err(|e| Error::io(&dir, e))?;
    let mut builder = tempfile::Builder::new();
    let prefix = format!(".{}.", name.to_string_lossy());
    builder.prefix(&prefix).suffix(".tmp");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        // Like a plain `File::create`: 0o666 minus the umask, not tempfile's private 0o600.
        builder.permissions(std::fs::Permissions::from_mode(0o666));
    }
    let mut tmp = builder.tempfile_in(&dir).map_err(io_err)?;
    // A second SIGINT exits at once: it removes this file first (crate::interrupt).
    crate::interrupt::writing(Some(tmp.path()));
    let written = (|| {
        let mut w = std::io::BufWriter::new(tmp.as_file_mut());
        fill(&mut w)?;
        w.flush()?;
        drop(w);
        tmp.as_file().sync_all()?;
        tmp.persist(path).map_err(|e| e.error)
    })();
    crate::interrupt::writing(None);
    written.map_err(io_err)?;
    // Make the rename itself durable; failure here loses nothing already visible, so it is
    // not reported (some file systems refuse to fsync directories).
    #[cfg(unix)]
    if let Ok(d) = std::fs::File::open(&dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;

    #[test]
    fn atomic_write_creates_dirs_and_leaves_no_temp() -> Result<()> {
        let dir = tempfile::tempdir().map_err(|e| Error::io("tempdir", e))?;
        let path = dir.path().join("a/b/out.txt");
        atomic_write(&path, |w| w.write_all(b"hello"))?;
        atomic_write(&path, |w| w.write_all(b"world"))?;
        let text = std::fs::read_to_string(&path).map_err(|e| Error::io(&path, e))?;
        assert_eq!(text, "world");
        let entries = std::fs::read_dir(dir.path().join("a/b"))
            .map_err(|e| Error::io(dir.path(), e))?
            .count();
        assert_eq!(entries, 1);
        Ok(())
    }

    #[test]
    fn atomic_write_failure_keeps_old_file() -> Result<()> {
        let dir = tempfile::tempdir().map_err(|e| Error::io("tempdir", e))?;
        let path = dir.path().join("keep.txt");
        atomic_write(&path, |w| w.write_all(b"old"))?;
        let res = atomic_write(&path, |w| {
            w.write_all(b"partial")?;
            Err(std::io::Error::other("encoder failed"))
        });
        let msg = res.err().map(|e| e.to_string()).unwrap_or_default();
        assert!(
            msg.contains("keep.txt") && msg.contains("encoder failed"),
            "{msg}"
        );
        let text = std::fs::read_to_string(&path).map_err(|e| Error::io(&path, e))?;
        assert_eq!(text, "old");
        assert_eq!(
            std::fs::read_dir(dir.path())
                .map_err(|e| Error::io(dir.path(), e))?
                .count(),
            1
        );
        Ok(())
    }
}
