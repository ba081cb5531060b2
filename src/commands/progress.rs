//! Progress bars that stay quiet with -q and when stderr is not a terminal (time loops then
//! log a line now and then instead).

use indicatif::{ProgressBar, ProgressStyle};
use std::io::IsTerminal;
use std::time::Instant;

/// A bar of `len` steps with a message, hidden when `quiet` or stderr is not a terminal.
pub fn bar(len: u64, msg: &str, quiet: bool) -> ProgressBar {
    if quiet || !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let pb = ProgressBar::new(len);
    pb.set_style(
        ProgressStyle::with_template("{msg} [{bar:40}] {pos}/{len} {per_sec} eta {eta}")
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
    );
    pb.set_message(msg.to_string());
    pb
}

/// A spinner for work of unknown length.
pub fn spinner(msg: &str, quiet: bool) -> ProgressBar {
    if quiet || !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let pb = ProgressBar::new_spinner();
    pb.set_message(msg.to_string());
    pb.enable_steady_tick(std::time::Duration::from_millis(120));
    pb
}

/// Seconds between progress lines when stderr is not a terminal.
const LOG_EVERY: f64 = 10.0;

/// Progress of a time loop: a bar on a terminal; otherwise (unless quiet) a line about every
/// [`LOG_EVERY`] seconds with the simulated time, steps/s and an ETA, so that a long run under
/// a scheduler or in CI shows that it is alive.
pub struct RunProgress {
    bar: ProgressBar,
    name: String,
    final_time: f64,
    log: bool,
    start: Instant,
    /// Time and steps of the first update (a restart starts late) and of the last line.
    first: Option<(f64, u64)>,
    logged: f64,
}

impl RunProgress {
    pub fn new(name: &str, final_time: f64, quiet: bool) -> RunProgress {
        RunProgress {
            bar: bar(1000, name, quiet),
            name: name.to_string(),
            final_time,
            log: !quiet && !std::io::stderr().is_terminal(),
            start: Instant::now(),
            first: None,
            logged: 0.0,
        }
    }

    /// After a batch of steps: simulated time `t` after `steps` steps in all.
    pub fn update(&mut self, t: f64, steps: u64) {
        let (t0, s0) = *self.first.get_or_insert((t, steps));
        let secs = self.start.elapsed().as_secs_f64();
        let line = self.line(t - t0, t, steps - s0, secs);
        self.bar
            .set_position((t / self.final_time * 1000.0).round() as u64);
        self.bar.set_message(line.clone());
        if self.log && secs - self.logged >= LOG_EVERY {
            self.logged = secs;
            eprintln!("{line}");
        }
    }

    /// `done` simulated seconds and `steps` steps in `secs` seconds of this run, now at `t`.
    fn line(&self, done: f64, t: f64, steps: u64, secs: f64) -> String {
        let rate = done / secs.max(1e-9);
        let eta = if rate > 0.0 {
            format!("{:.0} s", (self.final_time - t) / rate)
        } else {
            "unknown".into()
        };
        format!(
            "{}: t = {t:.6} of {} s ({:.1}%), {:.0} steps/s, ETA {eta}",
            self.name,
            self.final_time,
            100.0 * t / self.final_time,
            steps as f64 / secs.max(1e-9)
        )
    }

    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn progress_line_has_time_rate_and_eta() {
        let p = RunProgress::new("case", 10.0, true);
        let line = p.line(2.0, 2.5, 400, 4.0);
        assert_eq!(
            line,
            "case: t = 2.500000 of 10 s (25.0%), 100 steps/s, ETA 15 s"
        );
        assert!(p.line(0.0, 0.0, 0, 1.0).ends_with("ETA unknown"));
    }
}
