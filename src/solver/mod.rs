//! Solvers, one folder per workload, and the bounds every time loop shares.

pub mod dg;
pub mod gradient;
pub mod smooth;
pub mod swe;

use crate::checkpoint::Checkpoint;
use crate::error::{Error, Result};
use std::path::PathBuf;

/// Most steps queued in one queue call: every recorded step holds command memory until it runs.
pub const MAX_BATCH: u32 = 4096;

/// Default cap on the output times of one run (each writes files).
pub const MAX_SNAPSHOTS: u64 = 10_000;

/// How a whole run (`Simulation::run` of `swe` and `dg`) is bounded, checkpointed, resumed.
#[derive(Clone, Debug, PartialEq)]
pub struct RunControl {
    /// Most output times (each writes files).
    pub max_snapshots: u64,
    /// Write [`crate::checkpoint::FILE_NAME`] into the output directory at the first step
    /// boundary past every multiple of this simulated time (and always on an interrupt).
    pub checkpoint_every: Option<f64>,
    /// Continue from this checkpoint instead of starting at t = 0.
    pub restart: Option<PathBuf>,
}

impl Default for RunControl {
    fn default() -> Self {
        RunControl {
            max_snapshots: MAX_SNAPSHOTS,
            checkpoint_every: None,
            restart: None,
        }
    }
}

impl RunControl {
    /// The restart checkpoint, read and checked against `solver`, case and mesh fingerprints.
    pub fn restart_from(&self, solver: &str, case: u64, mesh: u64) -> Result<Option<Checkpoint>> {
        self.restart_with(solver, case, mesh, &std::collections::BTreeMap::new())
    }

    /// [`RunControl::restart_from`], also checking the named `settings`
    /// ([`Checkpoint::check_with`]).
    pub fn restart_with(
        &self,
        solver: &str,
        case: u64,
        mesh: u64,
        settings: &std::collections::BTreeMap<String, String>,
    ) -> Result<Option<Checkpoint>> {
        if let Some(e) = self
            .checkpoint_every
            .filter(|e| !(*e > 0.0 && e.is_finite()))
        {
            return Err(Error::Invalid(format!(
                "--checkpoint-every {e} must be > 0"
            )));
        }
        let Some(path) = &self.restart else {
            return Ok(None);
        };
        let ck = Checkpoint::read(path)?;
        ck.check_with(path, solver, case, mesh, settings)?;
        Ok(Some(ck))
    }

    /// The first checkpoint time after `t` (infinite without checkpoints).
    pub fn next_checkpoint(&self, t: f64) -> f64 {
        self.checkpoint_every
            .map_or(f64::INFINITY, |e| ((t / e + 1e-6).floor() + 1.0) * e)
    }
}

/// The error of an interrupted run, saying where it stopped and what it left.
pub fn interrupted(t: f64, steps: u64, checkpoint: &std::path::Path) -> Error {
    Error::Interrupted(format!(
        "interrupted at t = {t} after {steps} steps; wrote a final snapshot and {} \
         (continue with --restart {})",
        checkpoint.display(),
        checkpoint.display()
    ))
}

/// Output times k·every below `t_final` (less a relative 1e-9), then `t_final`, generated
/// lazily; more than `max` of them is an error.
pub fn output_times(
    t_final: f64,
    every: Option<f64>,
    max: u64,
) -> Result<impl Iterator<Item = f64>> {
    let e = every.unwrap_or(t_final);
    let n = (t_final * (1.0 - 1e-9) / e).ceil().max(1.0);
    if !(t_final > 0.0 && e > 0.0 && n <= max as f64) {
        return Err(Error::Invalid(format!(
            "final time {t_final} with snapshots every {e} gives {n} output times, more than \
             the limit of {max} (raise the limit or the interval)"
        )));
    }
    let n = n as u64;
    Ok((1..=n).map(move |k| if k == n { t_final } else { k as f64 * e }))
}

/// Why a time step `dt` cannot carry an f32 clock to `t` (t + dt == t there), if it cannot.
pub fn clock_stalls(t: f64, dt: f64) -> Option<String> {
    let (t32, dt32) = (t as f32, dt as f32);
    (!(dt32.is_finite() && t32 + dt32 > t32)).then(|| {
        format!("time step {dt:e} cannot advance the f32 clock near t = {t} (t + dt == t there)")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_times_are_lazy_and_capped() -> Result<()> {
        let v: Vec<f64> = output_times(0.1, Some(0.05), 10)?.collect();
        assert_eq!(v, vec![0.05, 0.1]);
        assert_eq!(output_times(1.0, None, 1)?.collect::<Vec<_>>(), vec![1.0]);
        assert_eq!(output_times(1.0, Some(0.3), 10)?.count(), 4);
        // 1e11 output times once took gigabytes up front; now an error, at once.
        let msg = output_times(1e9, Some(0.01), MAX_SNAPSHOTS)
            .err()
            .map(|e| e.to_string());
        assert!(msg.is_some_and(|m| m.contains("more than the limit of 10000")));
        assert!(output_times(1.0, Some(f64::MIN_POSITIVE), u64::MAX).is_err());
        Ok(())
    }

    #[test]
    fn clock_resolution() {
        assert!(clock_stalls(0.1, 1e-30).is_some());
        assert!(clock_stalls(0.1, f64::NAN).is_some());
        assert!(clock_stalls(0.1, 1e-6).is_none());
    }
}
