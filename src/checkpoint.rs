//! Checkpoints: the whole state of a run in one file, written atomically, so that `--restart`
//! continues to the same bits as a run that was never stopped (on the same backend).
//!
//! Layout: the line `chromaflow checkpoint 2`, one line of JSON ([`Header`]: solver, where the
//! run stood, fingerprints of the case and of the ordered mesh, the settings a restart must
//! share, named whole numbers of the solver's state, the payload's named sections, length and
//! FNV-1a hash of the payload), the line `checksum` and 16 hex digits, then the payload: the
//! solver's device state as raw little-endian words. The checksum is the FNV-1a hash of the
//! JSON line (newline included) followed by the payload, so a changed byte anywhere in the
//! header (a digit of `t`, `steps` or a value) is caught as well as one in the state: FNV-1a
//! changes under any one changed byte, since each step (xor a byte, multiply by an odd number
//! modulo 2⁶⁴) is a bijection. Format 1 files (the same without the checksum line, their
//! header outside every hash) are refused with a message saying so: their header cannot be
//! trusted, and a run can be started again. Files without settings, values or sections (one
//! unnamed payload) read as before.

use crate::error::{Error, Result};
use crate::files::{atomic_write, read_limited, MAX_INPUT_BYTES};
use std::collections::BTreeMap;
use std::path::Path;

const MAGIC: &str = "chromaflow checkpoint 2\n";

/// The first line of format 1 (header outside the checksum), refused by name.
const MAGIC_1: &str = "chromaflow checkpoint 1\n";

/// The start of the line after the header.
const CHECKSUM: &str = "checksum ";

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
    /// Settings a restart must share, by name (order, levels, backend, ...): compared one by
    /// one, so a mismatch names the setting instead of only saying that the case differs.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub settings: BTreeMap<String, String>,
    /// Whole numbers of the solver's state besides the payload, by name (counts, capacities;
    /// an f64 as its bits).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub values: BTreeMap<String, u64>,
    /// The payload's parts in order: name and length in words (none: one unnamed part).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    sections: Vec<(String, u64)>,
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
    fnv1a_continue(0xcbf2_9ce4_8422_2325, bytes)
}

/// FNV-1a from the state `h` over `bytes`.
fn fnv1a_continue(h: u64, bytes: &[u8]) -> u64 {
    bytes
        .iter()
        .fold(h, |h, &b| (h ^ b as u64).wrapping_mul(0x0100_0000_01b3))
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
                settings: BTreeMap::new(),
                values: BTreeMap::new(),
                sections: Vec::new(),
                payload_len: bytes.len() as u64,
                payload_hash: fingerprint(bytes),
            },
            payload,
        }
    }

    /// Append the part `name` to the payload (a checkpoint built with an empty payload and
    /// then sections only has named parts).
    pub fn push_section(&mut self, name: &str, words: &[u32]) {
        self.payload.extend_from_slice(words);
        self.header
            .sections
            .push((name.to_string(), words.len() as u64));
        let bytes: &[u8] = bytemuck::cast_slice(&self.payload);
        self.header.payload_len = bytes.len() as u64;
        self.header.payload_hash = fingerprint(bytes);
    }

    /// The payload's part `name`; an error naming the file when there is none.
    pub fn section(&self, path: &Path, name: &str) -> Result<&[u32]> {
        let mut start = 0usize;
        for (n, len) in &self.header.sections {
            let len = *len as usize;
            if n == name {
                return self
                    .payload
                    .get(start..start.saturating_add(len))
                    .ok_or_else(|| unusable(path, &format!("its section '{name}' is cut short")));
            }
            start = start.saturating_add(len);
        }
        Err(unusable(path, &format!("it has no section '{name}'")))
    }

    /// Whether the payload has a part `name`.
    pub fn has_section(&self, name: &str) -> bool {
        self.header.sections.iter().any(|(n, _)| n == name)
    }

    /// The whole number `name` of [`Header::values`]; an error naming the file when missing.
    pub fn value(&self, path: &Path, name: &str) -> Result<u64> {
        self.header
            .values
            .get(name)
            .copied()
            .ok_or_else(|| unusable(path, &format!("it has no value '{name}'")))
    }

    /// Write atomically (the previous checkpoint stays until the new one is complete).
    pub fn write(&self, path: &Path) -> Result<()> {
        let bytes = self.to_bytes().map_err(|e| Error::io(path, e))?;
        atomic_write(path, |w| w.write_all(&bytes))
    }

    /// The file's bytes ([`Checkpoint::parse`] reads them back).
    pub fn to_bytes(&self) -> std::io::Result<Vec<u8>> {
        let header = serde_json::to_vec(&self.header).map_err(std::io::Error::other)?;
        let payload: Vec<u8> = self.payload.iter().flat_map(|w| w.to_le_bytes()).collect();
        Ok(seal(&header, &payload))
    }

    /// Read and check a checkpoint; a truncated, corrupt or foreign file is an error naming it.
    pub fn read(path: &Path) -> Result<Checkpoint> {
        Checkpoint::parse(path, &read_limited(path, MAX_INPUT_BYTES)?)
    }

    /// Parse the bytes of a checkpoint file; `path` is only named in errors.
    pub fn parse(path: &Path, data: &[u8]) -> Result<Checkpoint> {
        let bad = |msg: &str| Error::parse(path, 0, format!("not a usable checkpoint: {msg}"));
        if data.starts_with(MAGIC_1.as_bytes()) {
            return Err(bad(
                "it is format 1, written by an earlier version whose header was outside the \
                 checksum; this version reads format 2 only: start the run again",
            ));
        }
        let rest = data
            .strip_prefix(MAGIC.as_bytes())
            .ok_or_else(|| bad("it does not start with 'chromaflow checkpoint 2'"))?;
        let line = |rest: &[u8], what: &str| -> Result<usize> {
            rest.iter()
                .position(|&b| b == b'\n')
                .map(|end| end + 1)
                .ok_or_else(|| bad(&format!("no {what} line")))
        };
        let header_end = line(rest, "header")?;
        let (header_line, rest) = rest.split_at(header_end);
        let sum_end = line(rest, "checksum")?;
        let (sum_line, bytes) = rest.split_at(sum_end);
        let stored = std::str::from_utf8(&sum_line[..sum_end - 1])
            .ok()
            .and_then(|l| l.strip_prefix(CHECKSUM))
            .filter(|hex| hex.len() == 16)
            .and_then(|hex| u64::from_str_radix(hex, 16).ok())
            .ok_or_else(|| bad("the line after the header is not 'checksum' and 16 hex digits"))?;
        if checksum(header_line, bytes) != stored {
            return Err(bad(
                "the header or the state does not match its checksum (corrupt or truncated)",
            ));
        }
        let header: Header = serde_json::from_slice(&header_line[..header_end - 1])
            .map_err(|e| bad(&format!("header: {e}")))?;
        if bytes.len() as u64 != header.payload_len || bytes.len() % 4 != 0 {
            return Err(bad(&format!(
                "{} bytes of state, the header says {} (truncated?)",
                bytes.len(),
                header.payload_len
            )));
        }
        if fingerprint(bytes) != header.payload_hash {
            return Err(bad("the state does not match the header's payload hash"));
        }
        let named = header
            .sections
            .iter()
            .try_fold(0u64, |sum, (_, len)| sum.checked_add(*len));
        if !header.sections.is_empty() && named != Some(bytes.len() as u64 / 4) {
            return Err(bad(&format!(
                "its sections add up to {} words, the state has {}",
                named.map_or("more than 2^64".into(), |n| n.to_string()),
                bytes.len() / 4
            )));
        }
        let payload = bytes
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect();
        Ok(Checkpoint { header, payload })
    }

    /// Check that this checkpoint belongs to `solver` on this case and mesh.
    pub fn check(&self, path: &Path, solver: &str, case: u64, mesh: u64) -> Result<()> {
        self.check_with(path, solver, case, mesh, &BTreeMap::new())
    }

    /// [`Checkpoint::check`], and first that every setting of `settings` or of the checkpoint
    /// is the same in both, naming each that differs ("none" where one side lacks it).
    pub fn check_with(
        &self,
        path: &Path,
        solver: &str,
        case: u64,
        mesh: u64,
        settings: &BTreeMap<String, String>,
    ) -> Result<()> {
        let h = &self.header;
        let none = String::from("none");
        let differ: Vec<String> = settings
            .keys()
            .chain(h.settings.keys())
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .filter_map(|k| {
                let (theirs, ours) = (
                    h.settings.get(k).unwrap_or(&none),
                    settings.get(k).unwrap_or(&none),
                );
                (theirs != ours).then(|| format!("{k} is {theirs} there, {ours} here"))
            })
            .collect();
        let what = if h.solver != solver {
            format!("it was written by '{}', not '{solver}'", h.solver)
        } else if !differ.is_empty() {
            format!("its settings differ: {}", differ.join("; "))
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
        Err(unusable(path, &what))
    }
}

/// The bytes of a checkpoint file with the JSON header `header` (one line, without its
/// newline) and the payload bytes `payload`: the format line, the header, the checksum line,
/// the payload. [`Checkpoint::to_bytes`] writes through it; a test or tool that edits a
/// header by hand seals it again with it.
pub fn seal(header: &[u8], payload: &[u8]) -> Vec<u8> {
    let line = [header, b"\n"].concat();
    let sum = format!("{CHECKSUM}{:016x}\n", checksum(&line, payload));
    [MAGIC.as_bytes(), &line, sum.as_bytes(), payload].concat()
}

/// The file's checksum: FNV-1a of the header line (newline included), then the payload.
fn checksum(header_line: &[u8], payload: &[u8]) -> u64 {
    fnv1a_continue(fingerprint(header_line), payload)
}

/// The error for a checkpoint that parsed but cannot be used, naming the file.
pub fn unusable(path: &Path, msg: &str) -> Error {
    Error::Invalid(format!(
        "{}: cannot restart from this checkpoint: {msg}",
        path.display()
    ))
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
        // Named sections, values and settings survive the round trip; a differing setting is
        // named.
        let mut named = Checkpoint::new("dg", "cpu".into(), 1, 2, (0.25, 3), (0, 1), vec![]);
        named.header.settings.insert("order".into(), "1".into());
        named
            .header
            .values
            .insert("threshold".into(), 0.5f64.to_bits());
        named.push_section("a", &[1, 2]);
        named.push_section("b", &[3]);
        named.write(&path)?;
        let back = Checkpoint::read(&path)?;
        assert_eq!(back, named);
        assert_eq!(back.section(&path, "b")?, &[3]);
        assert_eq!(f64::from_bits(back.value(&path, "threshold")?), 0.5);
        assert!(back.section(&path, "c").is_err() && back.value(&path, "x").is_err());
        let order2 = BTreeMap::from([("order".to_string(), "2".to_string())]);
        let msg = back.check_with(&path, "dg", 1, 2, &order2).err();
        let msg = msg.map(|e| e.to_string()).unwrap_or_default();
        assert!(msg.contains("order is 1 there, 2 here"), "{msg}");
        assert!(back
            .check(&path, "dg", 1, 2)
            .is_err_and(|e| e.to_string().contains("order is 1 there, none here")));
        ck.write(&path)?;
        let data = std::fs::read(&path).map_err(|e| Error::io(&path, e))?;
        let mut flipped = data.clone();
        if let Some(b) = flipped.last_mut() {
            *b ^= 1;
        }
        // A digit of the time changed in the header: caught by the checksum.
        let text = String::from_utf8_lossy(&data).into_owned();
        assert!(text.contains("\"t\":0.5,"), "{text}");
        let later = text.replacen("\"t\":0.5,", "\"t\":0.6,", 1).into_bytes();
        let format1 = [b"chromaflow checkpoint 1\n", &data[MAGIC.len()..]].concat();
        let no_sum = [
            b"chromaflow checkpoint 2\n{}\nchecksum 12\n".as_slice(),
            &[0; 4],
        ]
        .concat();
        for (bytes, want) in [
            (&data[..data.len() - 4], "truncated"),
            (&flipped[..], "checksum"),
            (
                &later[..],
                "the header or the state does not match its checksum",
            ),
            (&data[5..], "does not start"),
            (&format1[..], "format 1"),
            (&no_sum[..], "not 'checksum' and 16 hex digits"),
        ] {
            std::fs::write(&path, bytes).map_err(|e| Error::io(&path, e))?;
            let msg = Checkpoint::read(&path).err().map(|e| e.to_string());
            assert!(msg.as_deref().is_some_and(|m| m.contains(want)), "{msg:?}");
        }
        // Every byte of the header and checksum lines flipped in turn (one bit, or a digit
        // changed to another): never read as a checkpoint.
        let header_end = data.len() - 4 * ck.payload.len();
        for at in MAGIC.len()..header_end {
            for change in [1u8, 2, 0x10] {
                let mut bad = data.clone();
                bad[at] ^= change;
                assert!(
                    Checkpoint::parse(&path, &bad).is_err(),
                    "byte {at} ^ {change} went unnoticed"
                );
            }
        }
        Ok(())
    }
}
