//! What a launch costs apart from its work: the yardstick for plans made of many small launches
//! (an adaptation, an ejection round, a time step on a small mesh), where the device time is
//! not the kernels' bytes but their count.
//!
//! A plan of `launches` dependent `stream_copy` launches of `items` threads each (a → b, b → a,
//! ...: each must see the previous one's writes, so every launch pays its barrier; with
//! `alternate`, every other launch is `scan_add` over the same items instead, so the kernel
//! changes at every launch as in an adaptation's plan) is measured
//! four ways: the host's recording and submitting alone, the device time between the first and
//! the last launch (timestamps or CUDA events), and submit-to-done on the host clock; with
//! host-sized grids and with device-sized grids from a launch record (indirect dispatch on
//! wgpu). Apart from those, the round trip of one launch followed by a 4-byte read-back: what
//! every host decision in a loop costs at least.

use super::{median, ItemRange, PlanBuilder, Runtime};
use crate::args;
use crate::error::{Error, Result};
use std::time::Instant;

/// Microseconds per launch of one way of launching, medians over the samples.
#[derive(Clone, Debug, serde::Serialize)]
pub struct PerLaunch {
    /// Host time to record and submit the plan, per launch (the host returns before the
    /// device is done).
    pub host_us: f64,
    /// Device time of the plan per launch (0 when the device has no timestamps).
    pub device_us: f64,
    /// Host time from the start of recording to the device being done, per launch.
    pub wall_us: f64,
}

/// The launch costs of one runtime.
#[derive(Clone, Debug, serde::Serialize)]
pub struct LaunchCosts {
    pub backend: String,
    pub device: String,
    /// Launches per plan.
    pub launches: usize,
    /// Threads per launch.
    pub items: u32,
    /// Whether the launches alternate between two kernels.
    pub alternate: bool,
    /// Host-sized grids.
    pub direct: PerLaunch,
    /// Grids from a device launch record (indirect dispatch on wgpu; the host's bound on CUDA).
    pub device_sized: PerLaunch,
    /// One launch, queued and waited for through a 4-byte read-back, in microseconds.
    pub round_trip_us: f64,
    /// Whether `device_us` comes from the device's clock.
    pub from_device: bool,
}

/// How the launches of [`launch_costs`] look: how many, how wide, one kernel or two.
#[derive(Clone, Copy, Debug)]
pub struct LaunchShape {
    /// Dependent launches per plan (at least 2).
    pub launches: usize,
    /// Threads per launch (at least 1).
    pub items: u32,
    /// Every other launch runs `scan_add` instead of `stream_copy`.
    pub alternate: bool,
}

/// Measure `shape`'s dependent launches per plan, `samples` times each (after one warm-up).
pub fn launch_costs(rt: &Runtime, shape: LaunchShape, samples: usize) -> Result<LaunchCosts> {
    let LaunchShape {
        launches,
        items,
        alternate,
    } = shape;
    if launches < 2 {
        return Err(Error::Invalid(format!(
            "launch costs: {launches} launches per plan; at least 2 (they alternate two buffers)"
        )));
    }
    if items == 0 {
        return Err(Error::Invalid(
            "launch costs: 0 items per launch; at least 1".into(),
        ));
    }
    let a = rt.zeroed::<[f32; 4]>("launch cost a", items as usize)?;
    let b = rt.zeroed::<[f32; 4]>("launch cost b", items as usize)?;
    let records = rt.upload("launch cost record", &super::launch_record(0, items))?;
    let copy = rt.kernel("stream_copy", &[])?;
    let add = rt.kernel("scan_add", &[])?;
    let build = |device_sized: bool| -> Result<super::Plan> {
        let mut plan = PlanBuilder::new();
        plan.segment("launches");
        for i in 0..launches {
            // Even launches copy a into b; odd ones copy b back into a, or with `alternate` add
            // a's words to b's (scan_add: one block offset each 1024 words), reading what the
            // copy before them wrote.
            let (kernel, args) = if i % 2 == 0 {
                (&copy, args![a, b])
            } else if alternate {
                (&add, args![a, b])
            } else {
                (&copy, args![b, a])
            };
            if device_sized {
                plan.launch_device(kernel, &args, ItemRange::new(0, 0), items, &records);
            } else {
                plan.launch(kernel, &args, ItemRange::all(items));
            }
        }
        rt.prepare(&plan)
    };
    let per_launch = |plan: &super::Plan| -> Result<(PerLaunch, bool)> {
        rt.run(plan, 1)?;
        let (mut host, mut device, mut wall) = (Vec::new(), Vec::new(), Vec::new());
        let mut from_device = true;
        for _ in 0..samples.max(1) {
            let started = Instant::now();
            rt.queue(plan, 1)?;
            host.push(started.elapsed().as_secs_f64());
            rt.wait()?;
            wall.push(started.elapsed().as_secs_f64());
            let t = rt.time(plan, 1)?;
            from_device &= t.from_device;
            device.push(if t.from_device { t.sum() } else { 0.0 });
        }
        let us = |v: &[f64]| 1e6 * median(v) / launches as f64;
        Ok((
            PerLaunch {
                host_us: us(&host),
                device_us: us(&device),
                wall_us: us(&wall),
            },
            from_device,
        ))
    };
    let (direct, direct_clock) = per_launch(&build(false)?)?;
    let (device_sized, record_clock) = per_launch(&build(true)?)?;
    let mut one = PlanBuilder::new();
    one.launch(&copy, &args![a, b], ItemRange::all(items));
    let one = rt.prepare(&one)?;
    rt.run(&one, 1)?;
    let mut trips = Vec::new();
    for _ in 0..samples.max(1) {
        let started = Instant::now();
        rt.queue(&one, 1)?;
        rt.read::<f32>(&b, 0, 1)?;
        trips.push(started.elapsed().as_secs_f64());
    }
    Ok(LaunchCosts {
        backend: rt.kind().name().into(),
        device: rt.name(),
        launches,
        items,
        alternate,
        direct,
        device_sized,
        round_trip_us: 1e6 * median(&trips),
        from_device: direct_clock && record_clock,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::WORKGROUP_SIZE;

    /// Every figure is measured (positive and finite), a plan is never done before it was
    /// submitted, and a plan of one launch is refused with the reason.
    #[test]
    fn launch_costs_are_measured_and_ordered() {
        let rt = Runtime::wgpu().unwrap();
        let shape = |launches, items, alternate| LaunchShape {
            launches,
            items,
            alternate,
        };
        let c = launch_costs(&rt, shape(8, WORKGROUP_SIZE, false), 3).unwrap();
        for p in [&c.direct, &c.device_sized] {
            assert!(p.host_us > 0.0 && p.host_us.is_finite(), "{c:?}");
            assert!(p.wall_us >= p.host_us, "{c:?}");
            assert!(
                p.device_us >= 0.0 && (p.device_us > 0.0) == c.from_device,
                "{c:?}"
            );
        }
        assert!(
            c.round_trip_us > 0.0 && c.round_trip_us.is_finite(),
            "{c:?}"
        );
        let wide = launch_costs(&rt, shape(6, 3000, true), 2).unwrap();
        assert!(wide.direct.wall_us > 0.0 && wide.alternate, "{wide:?}");
        let err = launch_costs(&rt, shape(1, 64, false), 1)
            .unwrap_err()
            .to_string();
        assert!(err.contains("at least 2"), "{err}");
        let err = launch_costs(&rt, shape(4, 0, false), 1)
            .unwrap_err()
            .to_string();
        assert!(err.contains("0 items"), "{err}");
    }
}
