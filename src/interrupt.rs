//! SIGINT and SIGTERM for the time loops: the first signal only sets a flag, which the loops
//! poll at step boundaries (they then write a final snapshot and checkpoint and return
//! [`crate::error::Error::Interrupted`]); the second exits at once with status 130, first
//! removing the temporary file [`crate::files::atomic_write`] is filling, so that no partial
//! file is left either way. Without [`install`] nothing changes (library users keep their own
//! signal handling).

use std::path::Path;
use std::sync::atomic::{AtomicPtr, AtomicU32, Ordering};

static SIGNALS: AtomicU32 = AtomicU32::new(0);
/// The temporary file being written, as a C string owned here (null: none).
static TEMP: AtomicPtr<std::ffi::c_char> = AtomicPtr::new(std::ptr::null_mut());

/// Route SIGINT and SIGTERM to this module (process-wide; call once, from `main`).
pub fn install() {
    #[cfg(unix)]
    // SAFETY: the handler only touches atomics and calls async-signal-safe unlink and _exit.
    unsafe {
        let h = handler as extern "C" fn(libc::c_int) as libc::sighandler_t;
        libc::signal(libc::SIGINT, h);
        libc::signal(libc::SIGTERM, h);
    }
}

#[cfg(unix)]
extern "C" fn handler(_: libc::c_int) {
    if SIGNALS.fetch_add(1, Ordering::SeqCst) > 0 {
        let p = TEMP.load(Ordering::SeqCst);
        // SAFETY: p is null or a live C string registered by `writing`; both calls are
        // async-signal-safe.
        unsafe {
            if !p.is_null() {
                libc::unlink(p);
            }
            libc::_exit(130);
        }
    }
}

/// True once a stop was asked for.
pub fn requested() -> bool {
    SIGNALS.load(Ordering::SeqCst) > 0
}

/// Register (Some) or clear (None) the temporary file being written.
pub(crate) fn writing(path: Option<&Path>) {
    #[cfg(unix)]
    let new = path
        .and_then(|p| {
            use std::os::unix::ffi::OsStrExt;
            std::ffi::CString::new(p.as_os_str().as_bytes()).ok()
        })
        .map_or(std::ptr::null_mut(), std::ffi::CString::into_raw);
    #[cfg(not(unix))]
    let new = {
        let _ = path;
        std::ptr::null_mut()
    };
    let old = TEMP.swap(new, Ordering::SeqCst);
    if !old.is_null() {
        // SAFETY: `old` came from CString::into_raw above and is no longer published.
        drop(unsafe { std::ffi::CString::from_raw(old) });
    }
}
