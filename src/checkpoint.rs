//! Checkpoints: the whole state of a run in one file, written atomically, so that `--restart`
//! continues to the same bits as a run that was never stopped (on the same backend).
//!
//! Layout: the line `chromaflow checkpoint 1`, one line of JSON ([`Header`]: solver, where the
//! run stood, fingerprints of the case and of the ordered mesh, length and FNV-1a hash of the
//! payload), then the payload: the solver's device state as raw little-endian words.

use crate::error::{Error, Result};
use crate::files::{atomic_write, read_limited, MAX_INPUT_BYTES};
use std::path::Path;

const MAGIC: &str = "chromaflow checkpoint 1\n";

/// File name of the checkpoint in a run's output directory.
pub const FILE_NAME: &str = "checkpoint.ckpt";

/// Where a run stood, and what it ran on.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Header {
    /// `swe` or `dg`.
    pub solver: String,
    /// The device that wrote it (another one continues, but not to the same bits).
    pub device: String,
    /// [`fingerprint`] of the case (output settings and final time excluded).
    pub case: u64,
    /// [`fingerprint`] of the ordered mesh as the solver sees it.
    pub mesh: u64,
    pub t: f64,
    pub steps: u64,
    /// Output times completed (the initial output not counted).
    pub outputs: u64,
    /// Data rows of the run's CSV at that point.
    pub csv_rows: u64,
    payload_len: u64,
    payload_hash: u64,
}

/// A checkpoint: the header and the solver's state words.
#[derive(Clone, Debug, PartialEq)]
pub struct Checkpoint {
    pub header: Header,
    pub payload: Vec<u32>,
}

/// FNV-1a, 64 bit: a stable hash for fingerprints and payload checks (not a security measure).
pub fn fingerprint(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ b as u64).wrapping_mul(0x0100_0000_01b3)
    })
}

impl Checkpoint {
    /// A checkpoint of `payload`; `header`'s payload fields are filled in here.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        solver: &str,
        device: String,
        case: u64,
        mesh: u64,
        (t, steps): (f64, u64),
        (outputs, csv_rows): (u64, u64),
        payload: Vec<u32>,
    ) -> Checkpoint {
        let bytes: &[u8] = bytemuck::cast_slice(&payload);
        Checkpoint {
            header: Header {
                solver: solver.into(),
                device,
                case,
                mesh,
                t,
                steps,
                outputs,
                csv_rows,
                payload_len: bytes.len() as u64,
                payload_hash: fingerprint(bytes),
            },
            payload,
        }
    }

    /// Write atomically (the previous checkpoint stays until the new one is complete).
    pub fn write(&self, path: &Path) -> Result<()> {
        let header = serde_json::to_string(&self.header).map_err(std::io::Error::other);
        let header = header.map_err(|e| Error::io(path, e))?;
        atomic_write(path, |w| {
            w.write_all(MAGIC.as_bytes())?;
            w.write_all(header.as_bytes())?;
            w.write_all(b"\n")?;
            for word in &self.payload {
                w.write_all(&word.to_le_bytes())?;
            }
            Ok(())
        })
    }

    /// Read and check a checkpoint; a truncated, corrupt or foreign file is an error naming it.
    pub fn read(path: &Path) -> Result<Checkpoint> {
        Checkpoint::parse(path, &read_limited(path, MAX_INPUT_BYTES)?)
    }

    /// Parse the bytes of a checkpoint file; `path` is only named in errors.
    pub fn parse(path: &Path, data: &[u8]) -> Result<Checkpoint> {
        let bad = |msg: &str| Error::parse(path, 0, format!("not a usable checkpoint: {msg}"));
        let rest = data
            .strip_prefix(MAGIC.as_bytes())
            .ok_or_else(|| bad("it does not start with 'chromaflow checkpoint 1'"))?;
        let end = rest
            .iter()
            .position(|&b| b == b'\n')
            .ok_or_else(|| bad("no header line"))?;
        let header: Header =
            serde_json::from_slice(&rest[..end]).map_err(|e| bad(&format!("header: {e}")))?;
        let bytes = &rest[end + 1..];
        if bytes.len() as u64 != header.payload_len || bytes.len() % 4 != 0 {
            return Err(bad(&format!(
                "{} bytes of state, the header says {} (truncated?)",
                bytes.len(),
                header.payload_len
            )));
        }
        if fingerprint(bytes) != header.payload_hash {
            return Err(bad("the state does not match its checksum (corrupt)"));
        }
        let payload = bytes
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect();
        Ok(Checkpoint { header, payload })
    }

    /// Check that this checkpoint belongs to `solver` on this case and mesh.
    pub fn check(&self, path: &Path, solver: &str, case: u64, mesh: u64) -> Result<()> {
        let h = &self.header;
        let what = if h.solver != solver {
            format!("it was written by '{}', not '{solver}'", h.solver)
        } else if h.case != case {
            "it was written for another case (physics, initial state, scheme or ordering differ)"
                .into()
        } else if h.mesh != mesh {
            "it was written for another mesh or ordering".into()
        } else if !(h.t.is_finite() && h.t >= 0.0) {
            format!("its time {} is not usable", h.t)
        } else {
            return Ok(());
        };
        Err(Error::Invalid(format!(
            "{}: cannot restart from this checkpoint: {what}",
            path.display()
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Round trip, and every corruption a clear error (never a panic).
    #[test]
    fn round_trip_and_corruption() -> Result<()> {
        let dir = tempfile::tempdir().map_err(|e| Error::io("tempdir", e))?;
        let path = dir.path().join(FILE_NAME);
        let ck = Checkpoint::new("swe", "cpu".into(), 1, 2, (0.5, 7), (3, 4), vec![1, 2, 3]);
        ck.write(&path)?;
        assert_eq!(Checkpoint::read(&path)?, ck);
        ck.check(&path, "swe", 1, 2)?;
        for (solver, case, mesh, want) in [
            ("dg", 1, 2, "written by 'swe'"),
            ("swe", 9, 2, "another case"),
            ("swe", 1, 9, "another mesh"),
        ] {
            let msg = ck
                .check(&path, solver, case, mesh)
                .err()
                .map(|e| e.to_string());
            assert!(msg.is_some_and(|m| m.contains(want)));
        }
        let data = std::fs::read(&path).map_err(|e| Error::io(&path, e))?;
        let mut flipped = data.clone();
        if let Some(b) = flipped.last_mut() {
            *b ^= 1;
        }
        for (bytes, want) in [
            (&data[..data.len() - 4], "truncated"),
            (&flipped[..], "checksum"),
            (&data[5..], "does not start"),
        ] {
            std::fs::write(&path, bytes).map_err(|e| Error::io(&path, e))?;
            let msg = Checkpoint::read(&path).err().map(|e| e.to_string());
            assert!(msg.as_deref().is_some_and(|m| m.contains(want)), "{msg:?}");
        }
        Ok(())
    }
}
