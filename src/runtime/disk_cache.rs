//! Compiled kernels kept on disk between runs, so a second start skips the compilers: wgpu's
//! pipeline cache (Vulkan: the driver's `VkPipelineCache` blob behind wgpu's own validated
//! header) and, on CUDA, NVRTC's PTX per kernel.
//!
//! Files live in one directory ([`default_dir`]: `$XDG_CACHE_HOME/chromaflow`, else
//! `~/.cache/chromaflow`), are written atomically ([`crate::files::atomic_write`]) and named by a
//! key that changes with anything that could make them wrong: the adapter (vendor, device,
//! driver), the kernel sources embedded in this binary, the compile options and the compiler
//! version. A file that cannot be read or used is ignored with a warning and replaced; a cache
//! that cannot be written only costs the next start its compile time. `--no-pipeline-cache`
//! (or [`super::GpuOptions::pipeline_cache`] = None) turns it off.

use std::path::{Path, PathBuf};

/// Largest cache file read (a driver's pipeline blob for every kernel is a few MB).
const MAX_CACHE_BYTES: u64 = 1 << 30;

/// The cache directory: `$XDG_CACHE_HOME/chromaflow` when that variable holds an absolute path,
/// else `$HOME/.cache/chromaflow`; None when neither is set.
pub fn default_dir() -> Option<PathBuf> {
    let xdg = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute());
    let base = xdg.or_else(|| {
        std::env::var_os("HOME")
            .filter(|h| !h.is_empty())
            .map(|h| PathBuf::from(h).join(".cache"))
    })?;
    Some(base.join("chromaflow"))
}

/// A 64-bit key of `parts` (FNV-1a over each part and its length, so part boundaries count).
pub fn key(parts: &[&[u8]]) -> u64 {
    let mut bytes = Vec::new();
    for p in parts {
        bytes.extend_from_slice(&(p.len() as u64).to_le_bytes());
        bytes.extend_from_slice(p);
    }
    crate::checkpoint::fingerprint(&bytes)
}

/// A key of every embedded source file in `files` ((path, text) pairs).
pub fn sources_key(files: &[(&str, &str)]) -> u64 {
    let parts: Vec<&[u8]> = files
        .iter()
        .flat_map(|(p, s)| [p.as_bytes(), s.as_bytes()])
        .collect();
    key(&parts)
}

/// The bytes of cache file `path`, or None when it does not exist or cannot be read (then with
/// a warning).
pub fn load(path: &Path) -> Option<Vec<u8>> {
    if !path.exists() {
        return None;
    }
    match crate::files::read_limited(path, MAX_CACHE_BYTES) {
        Ok(bytes) => Some(bytes),
        Err(e) => {
            log::warn!("kernel cache ignored: {e}");
            None
        }
    }
}

/// Write cache file `path` whole (or not at all); a failure is a warning.
pub fn store(path: &Path, bytes: &[u8]) {
    if let Err(e) = crate::files::atomic_write(path, |w| w.write_all(bytes)) {
        log::warn!("kernel cache not saved: {e}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_separate_parts() {
        assert_ne!(key(&[b"ab", b"c"]), key(&[b"a", b"bc"]));
        assert_eq!(key(&[b"ab", b"c"]), key(&[b"ab", b"c"]));
        assert_ne!(
            sources_key(&[("a.wgsl", "x")]),
            sources_key(&[("a.wgsl", "y")])
        );
    }
}
