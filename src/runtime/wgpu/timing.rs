//! Kernel timing: timestamp queries around compute passes where the adapter has them
//! (TIMESTAMP_QUERY), wall clock around submit + wait otherwise.

use super::buffers::Readback;
use super::context::GpuContext;
use crate::error::Result;
use std::time::Instant;

/// Times up to `capacity` compute passes per measurement with timestamp queries.
pub struct PassTimer {
    queries: Option<(wgpu::QuerySet, wgpu::Buffer)>,
    capacity: u32,
    used: u32,
    period_ns: f64,
    wall_start: Option<Instant>,
    readback: Readback,
}

impl PassTimer {
    /// A timer for up to `capacity` timed passes between [`PassTimer::reset`] calls. One query
    /// set holds at most [`wgpu::QUERY_SET_MAX_QUERIES`] timestamps (two per pass), so larger
    /// requests are capped; passes past the cap are simply not timed.
    pub fn new(ctx: &GpuContext, capacity: u32) -> PassTimer {
        let max_passes = wgpu::QUERY_SET_MAX_QUERIES / 2;
        if capacity > max_passes {
            log::warn!("timing only the first {max_passes} of {capacity} passes (query set limit)");
        }
        let capacity = capacity.clamp(1, max_passes);
        let queries = ctx.has_timestamps().then(|| {
            let set = ctx.device.create_query_set(&wgpu::QuerySetDescriptor {
                label: Some("pass timestamps"),
                ty: wgpu::QueryType::Timestamp,
                count: capacity * 2,
            });
            let resolve = ctx.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("timestamp resolve"),
                size: capacity as u64 * 16,
                usage: wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
                mapped_at_creation: false,
            });
            (set, resolve)
        });
        PassTimer {
            queries,
            capacity,
            used: 0,
            period_ns: ctx.queue.get_timestamp_period() as f64,
            wall_start: None,
            readback: Readback::new(),
        }
    }

    /// Forget earlier passes; the wall clock starts now.
    pub fn reset(&mut self) {
        self.used = 0;
        self.wall_start = Some(Instant::now());
    }

    /// Timestamp writes for the next pass, or `None` without timestamps or past capacity.
    pub fn next_pass(&mut self) -> Option<wgpu::ComputePassTimestampWrites<'_>> {
        let (set, _) = self.queries.as_ref()?;
        if self.used >= self.capacity {
            return None;
        }
        let i = self.used;
        self.used += 1;
        Some(wgpu::ComputePassTimestampWrites {
            query_set: set,
            beginning_of_pass_write_index: Some(2 * i),
            end_of_pass_write_index: Some(2 * i + 1),
        })
    }

    /// Record the resolve of the timestamps written so far (call before submitting).
    pub fn resolve(&self, encoder: &mut wgpu::CommandEncoder) {
        if let Some((set, buf)) = &self.queries {
            if self.used > 0 {
                encoder.resolve_query_set(set, 0..2 * self.used, buf, 0);
            }
        }
    }

    /// Seconds spent in each timed pass (after the submit that resolved them), or the wall
    /// time since [`PassTimer::reset`] as a single entry when timestamps are absent.
    pub fn pass_seconds(&mut self, ctx: &GpuContext) -> Result<Vec<f64>> {
        match &self.queries {
            Some((_, buf)) => {
                let ticks: Vec<u64> = self.readback.read(ctx, buf, 0, 2 * self.used as usize)?;
                Ok(tick_pairs_seconds(&ticks, self.period_ns))
            }
            None => {
                ctx.wait()?;
                let start = self.wall_start.unwrap_or_else(Instant::now);
                Ok(vec![start.elapsed().as_secs_f64()])
            }
        }
    }
}

/// Spans of device time around submitted work, read long after ([`crate::runtime::DeviceTimer`]
/// on wgpu): span i is timestamps 2i (before the work) and 2i + 1 (after it), each written at
/// the bottom of the pipe, i.e. once everything submitted before it is done, by the work's own
/// command buffers ([`SpanTimer::write`]) or by an empty compute pass in a command buffer of its
/// own in the work's submission ([`SpanTimer::next_span`]), so a span costs no submission of
/// its own; the timestamps are resolved and read back all at once ([`SpanTimer::resolve`]).
pub struct SpanTimer {
    set: wgpu::QuerySet,
    resolve: wgpu::Buffer,
    capacity: u32,
    used: u32,
    period_ns: f64,
}

impl SpanTimer {
    /// A timer for up to `capacity` spans between two drains (at most half a query set), or
    /// None without timestamps.
    pub fn new(ctx: &GpuContext, capacity: u32) -> Option<SpanTimer> {
        if !ctx.has_timestamps() {
            return None;
        }
        let capacity = capacity.clamp(1, wgpu::QUERY_SET_MAX_QUERIES / 2);
        let set = ctx.device.create_query_set(&wgpu::QuerySetDescriptor {
            label: Some("span timestamps"),
            ty: wgpu::QueryType::Timestamp,
            count: 2 * capacity,
        });
        let resolve = ctx.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("span timestamp resolve"),
            size: 16 * u64::from(capacity),
            usage: wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
            mapped_at_creation: false,
        });
        Some(SpanTimer {
            set,
            resolve,
            capacity,
            used: 0,
            period_ns: f64::from(ctx.queue.get_timestamp_period()),
        })
    }

    /// Spans taken since the last drain.
    pub fn len(&self) -> usize {
        self.used as usize
    }

    /// Whether no span was taken since the last drain.
    pub fn is_empty(&self) -> bool {
        self.used == 0
    }

    /// Whether the next span would pass the capacity.
    pub fn is_full(&self) -> bool {
        self.used >= self.capacity
    }

    /// The command buffers that write the next span's timestamps, to be submitted right before
    /// and right after its work, in that submission; None when full.
    pub fn next_span(
        &mut self,
        ctx: &GpuContext,
    ) -> Option<(wgpu::CommandBuffer, wgpu::CommandBuffer)> {
        let (before, after) = self.next_indices()?;
        Some((self.mark(ctx, before), self.mark(ctx, after)))
    }

    /// The next span's two timestamp indices, for an encoder that writes them itself
    /// ([`SpanTimer::write`]); None when full.
    pub fn next_indices(&mut self) -> Option<(u32, u32)> {
        if self.is_full() {
            return None;
        }
        let i = self.used;
        self.used += 1;
        Some((2 * i, 2 * i + 1))
    }

    /// Write timestamp `index` into `encoder` at this point (TIMESTAMP_QUERY_INSIDE_ENCODERS:
    /// no command buffer or pass of its own).
    pub fn write(&self, encoder: &mut wgpu::CommandEncoder, index: u32) {
        encoder.write_timestamp(&self.set, index);
    }

    /// An empty compute pass that writes timestamp `index` as it begins.
    fn mark(&self, ctx: &GpuContext, index: u32) -> wgpu::CommandBuffer {
        let mut enc = ctx
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("span timestamp"),
            });
        enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: Some("span timestamp"),
            timestamp_writes: Some(wgpu::ComputePassTimestampWrites {
                query_set: &self.set,
                beginning_of_pass_write_index: Some(index),
                end_of_pass_write_index: None,
            }),
        });
        enc.finish()
    }

    /// Resolve the spans taken since the last drain into the resolve buffer (a submission
    /// behind their work) and empty the timer: the number of spans, whose timestamps the
    /// caller reads from [`SpanTimer::resolved`] and turns into seconds by [`SpanTimer::seconds`].
    pub fn resolve(&mut self, ctx: &GpuContext) -> usize {
        let spans = self.used;
        if spans > 0 {
            let mut enc = ctx
                .device
                .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                    label: Some("span timestamp resolve"),
                });
            enc.resolve_query_set(&self.set, 0..2 * spans, &self.resolve, 0);
            ctx.queue.submit([enc.finish()]);
        }
        self.used = 0;
        spans as usize
    }

    /// The buffer the spans' timestamps are resolved into, two u64 ticks per span.
    pub fn resolved(&self) -> &wgpu::Buffer {
        &self.resolve
    }

    /// Seconds of each span from its resolved ticks.
    pub fn seconds(&self, ticks: &[u64]) -> Vec<f64> {
        tick_pairs_seconds(ticks, self.period_ns)
    }
}

/// Seconds between the timestamps of each pair (start, end) of `ticks`, `period_ns` a tick.
fn tick_pairs_seconds(ticks: &[u64], period_ns: f64) -> Vec<f64> {
    ticks
        .chunks_exact(2)
        .map(|p| p[1].saturating_sub(p[0]) as f64 * period_ns * 1e-9)
        .collect()
}
