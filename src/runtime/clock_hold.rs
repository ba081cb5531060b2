//! Keeping an NVIDIA GPU's clocks up while the wgpu backend uses it.
//!
//! NVIDIA's driver clocks a GPU that runs Vulkan compute work in bursts (time steps between
//! outputs, an adaptation's few hundred microseconds, a read-back per round) down to its idle
//! clock and does not raise it for such bursts: on an H100 the SM clock sat at 345 MHz through
//! a whole wgpu shallow-water run while the same run under CUDA held 1980 MHz, and the wgpu
//! steps took 3 to 4 times their time at full clock (BENCHMARKS.md, session 9). While a CUDA
//! context exists on a GPU the driver keeps it at its compute clocks, idle or not. So on an
//! NVIDIA adapter the wgpu runtime retains the CUDA primary context of the same GPU (matched by
//! PCI bus id) for its lifetime, through the driver library `libcuda` that comes with every
//! NVIDIA driver (no CUDA toolkit, no `cuda` feature needed). It launches nothing; it costs the
//! context's device memory (a few hundred MB) and the driver's initialisation at start.
//! [`crate::runtime::GpuOptions::no_clock_hold`] (`--no-clock-hold`) leaves the clocks to the
//! driver.

use std::ffi::{c_char, c_int, c_uint, c_void};

type CuResult = c_int;
type CuDevice = c_int;

/// The CUDA driver entry points the hold needs (CUDA driver API, stable since CUDA 7).
struct Driver {
    device_get: unsafe extern "C" fn(*mut CuDevice, c_int) -> CuResult,
    bus_id: unsafe extern "C" fn(*mut c_char, c_int, CuDevice) -> CuResult,
    release: unsafe extern "C" fn(CuDevice) -> CuResult,
}

/// A retained CUDA primary context on one GPU, released when dropped.
pub struct ClockHold {
    driver: Driver,
    device: CuDevice,
    /// PCI bus id of the held GPU, as the CUDA driver writes it.
    pub bus_id: String,
    // Keeps the entry points valid; dropped last.
    _library: libloading::Library,
}

impl std::fmt::Debug for ClockHold {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ClockHold({})", self.bus_id)
    }
}

impl Drop for ClockHold {
    fn drop(&mut self) {
        // SAFETY: the device was retained by this hold and the library is still loaded.
        unsafe {
            (self.driver.release)(self.device);
        }
    }
}

/// PCI vendor id of NVIDIA.
pub const NVIDIA_VENDOR: u32 = 0x10de;

#[cfg(windows)]
const LIBRARY: &str = "nvcuda.dll";
#[cfg(not(windows))]
const LIBRARY: &str = "libcuda.so.1";

/// (domain, bus, device, function) of a PCI bus id written `domain:bus:device.function` in hex
/// (wgpu writes a 4-digit domain, the CUDA driver 4 or 8 digits).
pub fn parse_bus_id(id: &str) -> Option<(u32, u32, u32, u32)> {
    let (rest, function) = id.trim().rsplit_once('.')?;
    let mut parts = rest.split(':');
    let hex = |s: Option<&str>| s.and_then(|s| u32::from_str_radix(s, 16).ok());
    let (domain, bus, device) = (hex(parts.next())?, hex(parts.next())?, hex(parts.next())?);
    if parts.next().is_some() {
        return None;
    }
    Some((domain, bus, device, hex(Some(function))?))
}

/// The entry point `name` of the driver library, as a function pointer of type `T`.
///
/// # Safety
/// `T` must be the symbol's C signature.
unsafe fn symbol<T: Copy>(library: &libloading::Library, name: &[u8]) -> Result<T, String> {
    // SAFETY: the caller vouches for the signature.
    unsafe {
        library
            .get::<T>(name)
            .map(|s| *s)
            .map_err(|e| format!("{LIBRARY}: {e}"))
    }
}

/// Retain the CUDA primary context of the GPU at PCI bus id `bus_id` (as wgpu reports it; when
/// it is empty, the only CUDA device if there is exactly one). The reason when it cannot: no
/// driver library, no matching device, a driver error (e.g. the GPU is in exclusive mode and
/// in use).
pub fn hold(bus_id: &str) -> Result<ClockHold, String> {
    // SAFETY: loading the NVIDIA driver library runs its initialisers, which have no
    // preconditions; the symbols are the CUDA driver API's with the signatures declared here.
    unsafe {
        let library = libloading::Library::new(LIBRARY).map_err(|e| format!("{LIBRARY}: {e}"))?;
        let init: unsafe extern "C" fn(c_uint) -> CuResult = symbol(&library, b"cuInit\0")?;
        let count: unsafe extern "C" fn(*mut c_int) -> CuResult =
            symbol(&library, b"cuDeviceGetCount\0")?;
        let retain: unsafe extern "C" fn(*mut *mut c_void, CuDevice) -> CuResult =
            symbol(&library, b"cuDevicePrimaryCtxRetain\0")?;
        let driver = Driver {
            device_get: symbol(&library, b"cuDeviceGet\0")?,
            bus_id: symbol(&library, b"cuDeviceGetPCIBusId\0")?,
            release: symbol(&library, b"cuDevicePrimaryCtxRelease_v2\0")?,
        };
        let check = |what: &str, r: CuResult| {
            if r == 0 {
                Ok(())
            } else {
                Err(format!("{what} failed (CUDA error {r})"))
            }
        };
        check("cuInit", init(0))?;
        let mut n = 0;
        check("cuDeviceGetCount", count(&mut n))?;
        let wanted = parse_bus_id(bus_id);
        let mut found = None;
        for ordinal in 0..n {
            let mut device = 0;
            check("cuDeviceGet", (driver.device_get)(&mut device, ordinal))?;
            let mut buf = [0 as c_char; 64];
            check(
                "cuDeviceGetPCIBusId",
                (driver.bus_id)(buf.as_mut_ptr(), buf.len() as c_int, device),
            )?;
            let id = std::ffi::CStr::from_ptr(buf.as_ptr())
                .to_string_lossy()
                .into_owned();
            let matches = match wanted {
                Some(w) => parse_bus_id(&id) == Some(w),
                None => n == 1,
            };
            if matches {
                found = Some((device, id));
                break;
            }
        }
        let Some((device, id)) = found else {
            return Err(if wanted.is_some() {
                format!("no CUDA device at PCI bus id {bus_id} ({n} CUDA devices)")
            } else {
                format!("the adapter has no PCI bus id and there are {n} CUDA devices")
            });
        };
        let mut context = std::ptr::null_mut();
        check("cuDevicePrimaryCtxRetain", retain(&mut context, device))?;
        Ok(ClockHold {
            driver,
            device,
            bus_id: id,
            _library: library,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bus_ids_of_wgpu_and_cuda_compare_equal() {
        assert_eq!(parse_bus_id("0000:3b:00.0"), Some((0, 0x3b, 0, 0)));
        assert_eq!(
            parse_bus_id("00000000:3B:00.0"),
            parse_bus_id("0000:3b:00.0")
        );
        assert_eq!(parse_bus_id("0001:c1:1f.7"), Some((1, 0xc1, 0x1f, 7)));
        for bad in [
            "",
            "3b:00.0",
            "0000:3b:00",
            "0000:3b:00:00.0",
            "0000:zz:00.0",
        ] {
            assert_eq!(parse_bus_id(bad), None, "{bad}");
        }
    }
}
