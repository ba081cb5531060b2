//! Files written whole or not at all.

use crate::error::{Error, Result};
use std::io::Write;
use std::path::Path;

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
    {
        let mut w = std::io::BufWriter::new(tmp.as_file_mut());
        fill(&mut w).map_err(io_err)?;
        w.flush().map_err(io_err)?;
    }
    tmp.as_file().sync_all().map_err(io_err)?;
    tmp.persist(path).map_err(|e| io_err(e.error))?;
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
