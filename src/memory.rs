//! Host memory: what a mesh is estimated to need against what is available, checked before a
//! mesh is generated or read, so an oversized request ends in a clear error naming the size,
//! the estimate and the limit, not in the kernel's out-of-memory killer.
//!
//! The limit is the `MemAvailable` line of /proc/meminfo (Linux; no check elsewhere) unless
//! [`set_limit`] (the CLI's `--max-memory GIB`) sets one. The estimates are peak resident bytes
//! per element measured on the optimised dev build (see [`GENERATED_BYTES_PER_ELEMENT`] and
//! [`FILE_BYTES_FACTOR`]) with a margin; they cover generating or reading, validating,
//! coloring and reordering the mesh, which dominate the host side of every run.

use crate::error::{Error, Result};
use std::sync::atomic::{AtomicU64, Ordering};

/// Peak host bytes per element while a built-in mesh is generated, validated, colored and
/// ordered, and a shallow-water or smoothing run's host copies are built: the growth of the
/// peak resident size of the optimised dev build from 50k to 200k triangles was 340 B per triangle
/// for `mesh info`, 730 for `swe` and 270 for `smooth`; doubled as a margin.
pub const GENERATED_BYTES_PER_ELEMENT: u64 = 1500;

/// Peak host bytes per element of a DG run of `np = (p + 1)(p + 2) / 2` modes, on top of the
/// mesh: measured 1,700 B at p = 1 and 4,500 B at p = 4 (20k to 80k triangles), about
/// 1000 + 230 np; with a margin of 1.5.
pub fn dg_bytes_per_element(order: usize) -> u64 {
    let np = ((order + 1) * (order + 2) / 2) as u64;
    1500 + 350 * np
}

/// Peak host bytes per byte of a mesh file while it is read and validated: the file itself
/// plus the parsed elements, which take up to about 3 times an ASCII file's size (more
/// for binary files, which are denser); with a margin.
pub const FILE_BYTES_FACTOR: u64 = 8;

/// The limit [`set_limit`] set, in bytes (0: none, use `MemAvailable`).
static LIMIT: AtomicU64 = AtomicU64::new(0);

/// Set the memory a run may use, in bytes (`None`: the system's available memory).
pub fn set_limit(bytes: Option<u64>) {
    LIMIT.store(bytes.unwrap_or(0), Ordering::Relaxed);
}

/// The memory a run may use, in bytes, and where that figure comes from; `None` when there is
/// no limit set and the system does not say.
pub fn limit() -> Option<(u64, &'static str)> {
    match LIMIT.load(Ordering::Relaxed) {
        0 => mem_available().map(|b| (b, "available (MemAvailable in /proc/meminfo)")),
        b => Some((b, "allowed by --max-memory")),
    }
}

/// `MemAvailable` from /proc/meminfo, in bytes.
fn mem_available() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    kib.checked_mul(1024)
}

/// Bytes as GiB with 2 decimals (MiB below 1 GiB, bytes below 1 MiB).
pub fn gib(bytes: u64) -> String {
    let (b, mib) = (bytes as f64, (1u64 << 20) as f64);
    if b < mib {
        format!("{bytes} bytes")
    } else if b < 1024.0 * mib {
        format!("{:.2} MiB", b / mib)
    } else {
        format!("{:.2} GiB", b / (1024.0 * mib))
    }
}

/// Error when `estimate` bytes exceed the limit; `what` names the request (e.g. `rect:1e9:
/// about 1000000000 triangles`).
pub fn check(what: &str, estimate: u64) -> Result<()> {
    match limit() {
        Some((limit, source)) if estimate > limit => Err(Error::Invalid(format!(
            "{what} needs an estimated {} of host memory, more than the {} {source}; use a \
             smaller mesh, or --max-memory GIB to allow more",
            gib(estimate),
            gib(limit)
        ))),
        _ => Ok(()),
    }
}

/// [`check`] for a DG run of polynomial order `order` on `elements` elements of the mesh `what`.
pub fn check_dg(what: &str, elements: usize, order: usize) -> Result<()> {
    let estimate = (elements as u64).saturating_mul(dg_bytes_per_element(order));
    check(
        &format!("a DG run of order {order} on {what} ({elements} elements)"),
        estimate,
    )
}

/// [`check`] for a generated mesh of `elements` elements.
pub fn check_generated(what: &str, elements: usize) -> Result<()> {
    let estimate = (elements as u64).saturating_mul(GENERATED_BYTES_PER_ELEMENT);
    check(&format!("{what} ({elements} elements)"), estimate)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One test for the process-wide limit (tests run in parallel threads).
    #[test]
    fn estimates_are_checked_against_the_limit() {
        set_limit(Some(1 << 30));
        assert!(check_generated("rect:1000", 1000).is_ok());
        let msg = check_generated("rect:1000000000", 1_000_000_000)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(
            msg.contains("rect:1000000000 (1000000000 elements) needs an estimated 1396.98 GiB")
                && msg.contains("more than the 1.00 GiB allowed by --max-memory"),
            "{msg}"
        );
        set_limit(None);
        if cfg!(target_os = "linux") {
            assert!(limit().is_some_and(|(b, _)| b > 0));
        }
    }
}
