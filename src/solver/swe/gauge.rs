//! Gauges: time series of the solution at fixed points, sampled on the GPU.
//!
//! A case lists gauges (`[[gauges]]` with `name`, `x`, `y`); each is the cell that holds its
//! point (an error naming the gauge when none does). After each step's update the one-thread
//! kernel `swe_gauges` decides whether the step is a sample (every step, or with
//! `[output] gauge_every = T` the first step at or after each multiple of T, recording its own
//! time) and copies the gauges' cells (h1, q1x, q1y, h2, q2x, q2y, H) and t into a sample buffer
//! that the host reads back in batches, so no step reads the whole state back. One CSV per
//! gauge, `gauge_<name>.csv`, with the columns [`COLUMNS`] (velocities u = q/h, 0 in a dry
//! layer h < κ; η₁ = h1 + h2 − H, η₂ = h2 − H). The initial state is the first row.

use super::mesh::SweMesh;
use crate::error::{Error, Result};
use crate::solver::MAX_BATCH;

/// The columns of a gauge CSV.
pub const COLUMNS: [&str; 9] = ["t", "h1", "h2", "u1", "v1", "u2", "v2", "eta1", "eta2"];

/// Most gauges a case may have.
pub const MAX_GAUGES: usize = 10_000;

/// Bytes of the GPU sample buffer at most (its capacity in samples per gauge follows, and a
/// batch of steps never takes more steps than that, since a step takes at most one sample).
pub const SAMPLE_BUFFER_BYTES: usize = 16 << 20;

/// A gauge as the case gives it.
#[derive(Clone, Debug, PartialEq)]
pub struct GaugeSpec {
    pub name: String,
    pub x: f64,
    pub y: f64,
}

/// The gauges of a prepared mesh.
#[derive(Clone, Debug, PartialEq)]
pub struct Gauges {
    pub specs: Vec<GaugeSpec>,
    /// The cell holding each gauge's point (in the prepared mesh's numbering).
    pub cells: Vec<u32>,
    /// Sample interval in simulated seconds (0: every step).
    pub every: f64,
}

/// One sample of every gauge: the time and each gauge cell's (h1, q1x, q1y, h2, q2x, q2y, H).
#[derive(Clone, Debug, PartialEq)]
pub struct GaugeSample {
    pub t: f64,
    pub cells: Vec<[f64; 7]>,
}

impl Gauges {
    /// Find the cell of every gauge; a point outside the mesh is an error naming the gauge.
    pub fn locate(specs: &[GaugeSpec], every: f64, mesh: &SweMesh) -> Result<Gauges> {
        let cells = specs
            .iter()
            .map(|g| {
                mesh.locate(g.x, g.y).map(|c| c as u32).ok_or_else(|| {
                    Error::Invalid(format!(
                        "gauge '{}' at ({}, {}) lies outside the mesh",
                        g.name, g.x, g.y
                    ))
                })
            })
            .collect::<Result<Vec<u32>>>()?;
        Ok(Gauges {
            specs: specs.to_vec(),
            cells,
            every,
        })
    }

    /// Samples per gauge the GPU buffer holds: [`SAMPLE_BUFFER_BYTES`] over 32 bytes per gauge
    /// and sample, at most [`MAX_BATCH`].
    pub fn capacity(&self) -> u32 {
        let per_sample = 32 * self.cells.len().max(1);
        (SAMPLE_BUFFER_BYTES / per_sample).clamp(1, MAX_BATCH as usize) as u32
    }

    /// The gauges' cells of a state (CPU side: the same gather as the kernel).
    pub fn gather(&self, t: f64, state: &[[f64; 6]], depth: &[f64]) -> GaugeSample {
        GaugeSample {
            t,
            cells: self
                .cells
                .iter()
                .map(|&c| {
                    let (w, h) = (state[c as usize], depth[c as usize]);
                    [w[0], w[1], w[2], w[3], w[4], w[5], h]
                })
                .collect(),
        }
    }
}

/// The CSV row of one gauge cell (h1, q1x, q1y, h2, q2x, q2y, H) at time t: [`COLUMNS`].
pub fn row(t: f64, cell: &[f64; 7], dry_tol: f64) -> [f64; 9] {
    let [h1, q1x, q1y, h2, q2x, q2y, hh] = *cell;
    let vel = |q: f64, h: f64| if h >= dry_tol { q / h } else { 0.0 };
    [
        t,
        h1,
        h2,
        vel(q1x, h1),
        vel(q1y, h1),
        vel(q2x, h2),
        vel(q2y, h2),
        h1 + h2 - hh,
        h2 - hh,
    ]
}

/// The sampling rule of `swe_gauges`, in f64 for the CPU reference: a step of Δt > 0 ending at
/// t (or the initial state, before any step) is a sample when t ≥ k·T with k the index of the
/// next mark; after a sample k = max(k + 1, ⌊t/T⌋ + 1), so a step that jumps over several marks
/// takes one sample. T = 0 samples every step.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SampleClock {
    /// Index k of the next mark.
    pub next: u32,
}

impl SampleClock {
    /// Whether the state at time t after `steps` steps, the last of Δt = `dt`, is a sample; if
    /// so the clock moves to the next mark.
    pub fn due(&mut self, every: f64, t: f64, dt: f64, steps: u64) -> bool {
        let due = (dt > 0.0 || steps == 0) && t >= self.next as f64 * every;
        if due && every > 0.0 {
            self.next = (self.next + 1).max((t / every).floor() as u32 + 1);
        }
        due
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clock_takes_one_sample_per_mark_and_at_the_start() {
        let mut c = SampleClock::default();
        assert!(c.due(0.5, 0.0, 0.0, 0));
        assert!(!c.due(0.5, 0.3, 0.3, 1));
        assert!(c.due(0.5, 0.6, 0.3, 2));
        assert!(!c.due(0.5, 0.9, 0.3, 3));
        // A step over two marks takes one sample and moves past both.
        assert!(c.due(0.5, 2.1, 1.2, 4));
        assert_eq!(c.next, 5);
        // No-op steps (Δt = 0) past the end take none.
        assert!(!c.due(0.5, 9.0, 0.0, 5));
        let mut every_step = SampleClock::default();
        assert!((0..5).all(|s| every_step.due(0.0, s as f64, 1.0, s)));
    }

    #[test]
    fn rows_give_velocities_and_elevations() {
        let r = row(1.5, &[2.0, 1.0, -2.0, 3.0, 1.5, 0.0, 4.0], 1e-4);
        assert_eq!(r, [1.5, 2.0, 3.0, 0.5, -1.0, 0.5, 0.0, 1.0, -1.0]);
        let dry = row(0.0, &[0.0, 1.0, 1.0, 1.0, 0.0, 0.0, 1.0], 1e-4);
        assert_eq!((dry[3], dry[4]), (0.0, 0.0));
    }
}
