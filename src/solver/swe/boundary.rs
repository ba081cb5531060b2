//! Driven open boundaries: a prescribed discharge or a prescribed free-surface elevation per
//! boundary tag, constant or a time series, and their per-edge values as the GPU reads them.
//!
//! The ghost state itself is [`super::flux::driven_ghost`] (f64) and `boundary_ghost` in
//! `shaders/common/swe_flux.wgsl` (f32): the outgoing Riemann invariant of the external mode is
//! kept, the incoming one replaced by the prescribed value. Each step starts with the kernel
//! `swe_boundary_values` writing g(t^n) (linear in time between the series' points, held
//! constant before the first and after the last) into the `value` field of every driven edge;
//! the CPU reference evaluates the same series at its own t^n.
//!
//! A discharge Q (m³ s⁻¹, positive into the domain) is spread uniformly along its boundary:
//! every edge gets the outward normal discharge per unit length q_b = −Q / L, L the boundary's
//! total length. An elevation η_b is in metres above the reference level (η₁ = h1 + h2 − H).

use super::mesh::{EdgeKind, SweMesh};
use crate::error::{Error, Result};
use crate::output::format_number as num;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Largest time-series file read.
pub const MAX_SERIES_BYTES: u64 = 16 << 20;

/// g(t) of a driven boundary: points (t_i, g_i) with strictly increasing t_i, linear in
/// between, constant outside; one point is a constant.
#[derive(Clone, Debug, PartialEq)]
pub struct TimeSeries {
    points: Vec<[f64; 2]>,
    /// The CSV file it came from (None for a constant).
    pub source: Option<PathBuf>,
}

impl TimeSeries {
    /// A constant value.
    pub fn constant(v: f64) -> TimeSeries {
        TimeSeries {
            points: vec![[0.0, v]],
            source: None,
        }
    }

    /// The points (t, g).
    pub fn points(&self) -> &[[f64; 2]] {
        &self.points
    }

    /// Read a CSV time series through the bounded reader ([`crate::files::read_text`]).
    pub fn from_file(path: &Path) -> Result<TimeSeries> {
        let text = crate::files::read_text(path, MAX_SERIES_BYTES)?;
        Self::parse(path, &text)
    }

    /// Parse CSV text: one `t, value` pair per line (comma, semicolon, tab or spaces between),
    /// `#` comments and blank lines skipped, an optional header line first; times strictly
    /// increasing, every number finite. Errors name the file and the line.
    pub fn parse(path: &Path, text: &str) -> Result<TimeSeries> {
        let mut points: Vec<[f64; 2]> = Vec::new();
        let mut seen_line = false;
        for (i, raw) in text.lines().enumerate() {
            let line = raw.split('#').next().unwrap_or("").trim();
            if line.is_empty() {
                continue;
            }
            let bad = |msg: String| Error::parse(path, i + 1, msg);
            let fields: Vec<&str> = line
                .split([',', ';', '\t', ' '])
                .map(str::trim)
                .filter(|f| !f.is_empty())
                .collect();
            let first_is_header =
                !seen_line && fields.first().is_some_and(|f| f.parse::<f64>().is_err());
            seen_line = true;
            if first_is_header {
                continue;
            }
            if fields.len() != 2 {
                return Err(bad(format!(
                    "expected two columns 't, value', found {} in '{line}'",
                    fields.len()
                )));
            }
            let mut v = [0.0; 2];
            for (k, (f, what)) in fields.iter().zip(["time", "value"]).enumerate() {
                v[k] = f
                    .parse::<f64>()
                    .ok()
                    .filter(|x| x.is_finite() && (x.abs() < 1e30))
                    .ok_or_else(|| bad(format!("{what} '{f}' is not a finite number")))?;
            }
            if let Some(prev) = points.last() {
                if v[0] <= prev[0] {
                    return Err(bad(format!(
                        "time {} does not increase (the line before has t = {})",
                        num(v[0]),
                        num(prev[0])
                    )));
                }
            }
            points.push(v);
        }
        if points.is_empty() {
            return Err(Error::parse(path, 0, "no 't, value' rows"));
        }
        Ok(TimeSeries {
            points,
            source: Some(path.to_path_buf()),
        })
    }

    /// g(t): linear between the points, the first value before and the last after them.
    pub fn value_at(&self, t: f64) -> f64 {
        let p = &self.points;
        let last = p.len() - 1;
        if t <= p[0][0] {
            return p[0][1];
        }
        if t >= p[last][0] {
            return p[last][1];
        }
        let i = p.partition_point(|q| q[0] <= t) - 1;
        let w = (t - p[i][0]) / (p[i + 1][0] - p[i][0]);
        p[i][1] + w * (p[i + 1][1] - p[i][1])
    }

    /// The last time the series gives (0 for a constant).
    pub fn end_time(&self) -> f64 {
        self.points[self.points.len() - 1][0]
    }
}

/// The condition on one boundary tag of a case.
#[derive(Clone, Debug, PartialEq)]
pub struct BoundaryCondition {
    /// Wall, Open, Discharge or Elevation.
    pub kind: EdgeKind,
    /// The prescribed discharge Q (m³ s⁻¹, into the domain) or elevation η_b (m) for the
    /// driven kinds.
    pub series: Option<TimeSeries>,
}

impl BoundaryCondition {
    /// A wall or open boundary (nothing prescribed).
    pub fn plain(kind: EdgeKind) -> BoundaryCondition {
        BoundaryCondition { kind, series: None }
    }
}

/// One driven boundary of a prepared mesh: its series and the factor from g(t) to the edge
/// value (−1/L for a discharge, 1 for an elevation).
#[derive(Clone, Debug, PartialEq)]
pub struct Driver {
    /// The case's key of the boundary (tag name or number).
    pub key: String,
    pub kind: EdgeKind,
    pub series: TimeSeries,
    /// Total length L of the boundary's edges.
    pub length: f64,
    /// Edge value = scale · g(t).
    pub scale: f64,
}

/// The driven boundaries of a prepared mesh, in the edge order of the GPU (`face_order`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DrivenBoundaries {
    pub drivers: Vec<Driver>,
    /// (edge slot in `face_order`, driver index) of every driven edge.
    pub edges: Vec<(u32, u32)>,
    /// Driver of each edge slot (`u32::MAX` for edges that are not driven).
    pub slot_driver: Vec<u32>,
}

/// One driven edge as `swe_boundary_values` reads it (mirrors `DrivenEdge` in
/// shaders/swe_boundary_values.wgsl): its slot in the edge buffer, its series' points
/// `series[first .. first + count]` and the factor to the edge value.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct GpuDrivenEdge {
    pub slot: u32,
    pub first: u32,
    pub count: u32,
    pub scale: f32,
}

impl DrivenBoundaries {
    /// Collect the driven edges of `mesh` (whose boundary faces already carry their kinds):
    /// `conditions` maps a boundary tag to its case key and condition.
    pub fn new(
        mesh: &SweMesh,
        conditions: &BTreeMap<i32, (String, BoundaryCondition)>,
    ) -> Result<DrivenBoundaries> {
        let mut index = BTreeMap::new();
        let mut drivers = Vec::new();
        for (&tag, (key, bc)) in conditions {
            if let (EdgeKind::Discharge | EdgeKind::Elevation, Some(series)) = (bc.kind, &bc.series)
            {
                index.insert(tag, drivers.len() as u32);
                drivers.push(Driver {
                    key: key.clone(),
                    kind: bc.kind,
                    series: series.clone(),
                    length: 0.0,
                    scale: 1.0,
                });
            }
        }
        let mut edges = Vec::new();
        let mut slot_driver = vec![u32::MAX; mesh.num_faces()];
        for (slot, &f) in mesh.face_order.iter().enumerate() {
            let f = f as usize;
            if !matches!(mesh.face_kind[f], EdgeKind::Discharge | EdgeKind::Elevation) {
                continue;
            }
            let tag = mesh.topo.boundary_tag[f];
            let &d = index.get(&tag).ok_or_else(|| {
                Error::Invalid(format!(
                    "boundary edge {f} (tag {tag}) is driven but its tag has no prescribed value"
                ))
            })?;
            drivers[d as usize].length += mesh.geom.lengths[f];
            edges.push((slot as u32, d));
            slot_driver[slot] = d;
        }
        for d in drivers.iter_mut() {
            if d.length <= 0.0 {
                return Err(Error::Invalid(format!(
                    "[boundary] {}: the boundary has no edges",
                    d.key
                )));
            }
            if d.kind == EdgeKind::Discharge {
                d.scale = -1.0 / d.length;
            }
        }
        Ok(DrivenBoundaries {
            drivers,
            edges,
            slot_driver,
        })
    }

    /// Check that these are the driven boundaries of `mesh`: every Discharge or Elevation edge
    /// has a driver (a solver built without them would have no value to prescribe).
    pub fn check_mesh(&self, mesh: &SweMesh) -> Result<()> {
        for (slot, &f) in mesh.face_order.iter().enumerate() {
            let kind = mesh.face_kind[f as usize];
            if !matches!(kind, EdgeKind::Discharge | EdgeKind::Elevation) {
                continue;
            }
            let d = self.slot_driver.get(slot).copied().unwrap_or(u32::MAX);
            if self
                .drivers
                .get(d as usize)
                .is_none_or(|dr| dr.kind != kind)
            {
                return Err(Error::Invalid(format!(
                    "edge {f} is a {kind:?} boundary edge but has no prescribed value (build the \
                     solver with the mesh's DrivenBoundaries)"
                )));
            }
        }
        Ok(())
    }

    pub fn is_empty(&self) -> bool {
        self.edges.is_empty()
    }

    /// The value of driver `d` at time t: q_b = −Q(t)/L (m² s⁻¹, outward) or η_b(t) (m).
    pub fn value(&self, d: u32, t: f64) -> f64 {
        let dr = &self.drivers[d as usize];
        dr.scale * dr.series.value_at(t)
    }

    /// Check that every time series covers [0, t_end]: a series that ends early would hold its
    /// last value, which is almost never what was meant.
    pub fn check_covers(&self, t_end: f64) -> Result<()> {
        for d in &self.drivers {
            if let Some(src) = &d.series.source {
                let (t0, t1) = (d.series.points[0][0], d.series.end_time());
                if t0 > 0.0 || t1 < t_end {
                    return Err(Error::Invalid(format!(
                        "'{}': the series {} covers t = {} .. {}, not the run's 0 .. {}",
                        d.key,
                        src.display(),
                        num(t0),
                        num(t1),
                        num(t_end)
                    )));
                }
            }
        }
        Ok(())
    }

    /// The GPU tables: one [`GpuDrivenEdge`] per driven edge and all series' points (t, g)
    /// concatenated, in f32.
    pub fn gpu_tables(&self) -> (Vec<GpuDrivenEdge>, Vec<[f32; 2]>) {
        let mut series = Vec::new();
        let mut first = Vec::new();
        for d in &self.drivers {
            first.push(series.len() as u32);
            series.extend(d.series.points.iter().map(|p| [p[0] as f32, p[1] as f32]));
        }
        let edges = self
            .edges
            .iter()
            .map(|&(slot, d)| {
                let dr = &self.drivers[d as usize];
                GpuDrivenEdge {
                    slot,
                    first: first[d as usize],
                    count: dr.series.points.len() as u32,
                    scale: dr.scale as f32,
                }
            })
            .collect();
        (edges, series)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn series_is_linear_between_points_and_constant_outside() {
        let s =
            TimeSeries::parse(Path::new("s.csv"), "t, Q\n# ramp\n0, 1\n2; 3\n\n4\t3\n").unwrap();
        assert_eq!(s.points().len(), 3);
        assert_eq!(s.value_at(-1.0), 1.0);
        assert_eq!(s.value_at(1.0), 2.0);
        assert_eq!(s.value_at(3.0), 3.0);
        assert_eq!(s.value_at(9.0), 3.0);
        assert_eq!(TimeSeries::constant(2.5).value_at(7.0), 2.5);
    }

    #[test]
    fn series_errors_name_the_line() {
        let err = |t: &str| {
            TimeSeries::parse(Path::new("s.csv"), t)
                .unwrap_err()
                .to_string()
        };
        assert!(err("0, 1\n1, 2\n1, 3\n").contains("s.csv:3: time 1 does not increase"));
        assert!(err("0, 1\n1, x\n").contains("s.csv:2: value 'x' is not a finite number"));
        assert!(err("0, 1, 2\n").contains("s.csv:1: expected two columns"));
        assert!(err("0, nan\n").contains("s.csv:1:"));
        assert!(err("# only a comment\n").contains("no 't, value' rows"));
    }
}
