//! The progress line of a headless run on stderr (`run` on one target or several, the setting
//! sweeps): redrawn in place, cleared at the end, drawn only when stderr is a terminal.

use std::io::{self, IsTerminal};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::bench::exec::run_input::RunEvent;
use crate::bench::plan::{Job, Plan};
use crate::model::{BytesPerSec, clock};
use crate::report::output::write_stderr;

/// A progress line on stderr, or nothing when it is off.
#[derive(Debug, Clone, Copy)]
pub struct ProgressLine {
    shown: bool,
}

impl ProgressLine {
    /// Shown when stderr is a terminal.
    pub fn on_terminal() -> Self {
        Self::new(io::stderr().is_terminal())
    }

    pub fn new(shown: bool) -> Self {
        ProgressLine { shown }
    }

    pub fn shown(self) -> bool {
        self.shown
    }

    /// Replaces the line with `text`. Stderr is locked per write, not per run, so another
    /// thread's warning or panic message does not wait for the run to end.
    pub fn show(self, text: &str) {
        if self.shown {
            write_stderr(&format!("\r\x1b[K{text}"));
        }
    }

    /// Erases the line, at the end of a run.
    pub fn clear(self) {
        if self.shown {
            write_stderr("\r\x1b[K");
        }
    }
}

/// What is left of a run: the plan's expected duration less the time since the start.
#[derive(Debug, Clone)]
pub struct Eta {
    started: Instant,
    plan: Plan,
    /// Until the runner says which phases probe the engines, none is counted.
    expected: Option<Duration>,
}

impl Eta {
    /// From now, for `plan`.
    pub fn start(plan: &Plan) -> Self {
        Eta {
            started: Instant::now(),
            expected: plan.expected_duration(),
            plan: plan.clone(),
        }
    }

    /// Takes the probe into account when the runner names the phases that probe.
    pub fn saw(&mut self, event: &RunEvent) {
        if let RunEvent::Probes { phases } = event {
            self.expected = crate::bench::exec::probe::expected_duration(&self.plan, phases);
        }
    }

    /// "  ETA 1:05", or nothing when the run's length is not known (a count-bounded run).
    pub fn text(&self) -> String {
        self.expected
            .map(|e| e.saturating_sub(self.started.elapsed()))
            .map_or(String::new(), |left| format!("  ETA {}", clock(left)))
    }
}

/// "12.3 MB/s  456 IOPS": an interval's rate and I/O count per second.
pub fn rate_text(bytes_per_sec: f64, iops: f64) -> String {
    format!(
        "{:.1} MB/s  {iops:.0} IOPS",
        BytesPerSec(bytes_per_sec).mb_per_sec()
    )
}

/// Reads one run's events until it finishes, drawing the phase, its figures and the ETA on
/// `line`. With repeats, `repeat` (this one, how many) is named before the phase.
pub fn follow_run(
    rx: &mpsc::Receiver<RunEvent>,
    plan: &Plan,
    line: ProgressLine,
    repeat: (u32, u32),
) {
    let mut eta = Eta::start(plan);
    let mut label = String::new();
    let mut phase = (0, plan.phases.len());
    let mut measuring_since: Option<Instant> = None;
    for event in rx.iter() {
        if !line.shown() {
            continue;
        }
        eta.saw(&event);
        match event {
            RunEvent::Probes { .. } | RunEvent::PhaseFinished { .. } => {}
            RunEvent::PhaseStarted {
                index,
                count,
                label: l,
                job,
                probing,
            } => {
                label = if repeat.1 > 1 {
                    format!("repeat {}/{} {l}", repeat.0, repeat.1)
                } else {
                    l
                };
                phase = (index + 1, count);
                measuring_since = None;
                let what = before_measuring(probing, &job);
                line.show(&format!("[{}/{} {label}] {what}", phase.0, phase.1));
            }
            RunEvent::Probed { index } => {
                if let Some(p) = plan.phases.get(index) {
                    let what = before_measuring(false, &p.job);
                    line.show(&format!("[{}/{} {label}] {what}", phase.0, phase.1));
                }
            }
            RunEvent::Measuring { .. } => measuring_since = Some(Instant::now()),
            RunEvent::Point { point, .. } => {
                let lat = point.latency().map_or(String::new(), |l| {
                    format!("  p99 {:.3} ms", l.p99_ns as f64 / 1e6)
                });
                line.show(&format!(
                    "[{}/{} {label}] {:.1} s  {}{lat}{}",
                    phase.0,
                    phase.1,
                    measuring_since.map_or(0.0, |t| t.elapsed().as_secs_f64()),
                    rate_text(point.rate(), point.iops()),
                    eta.text(),
                ));
            }
        }
    }
    line.clear();
}

/// What a phase does before it measures: "probing the engines", "warming up", "starting".
fn before_measuring(probing: bool, job: &Job) -> &'static str {
    if probing {
        "probing the engines (io_uring vs sync threads)"
    } else if job.warmup.is_zero() {
        "starting"
    } else {
        "warming up"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rate_reads_in_mb_per_second_and_whole_iops() {
        assert_eq!(rate_text(12_345_678.0, 456.4), "12.3 MB/s  456 IOPS");
    }
}
