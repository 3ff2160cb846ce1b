//! `Job`: a long-running task both faces start the same way (a scan, a triage, a flush
//! check). A job is told what it needs when it is made, runs on a thread of its own, tells
//! its progress and its end as its own messages (`Job::Msg`), reads one stop flag, and puts
//! back whatever it changed itself before it returns (the flush check its write cache).
//!
//! The TUI's one runner (`tui::jobs`) starts any job, turns its messages into the screen's
//! and stops every job the same way; the CLI's (`commands::job`) runs one on its thread, draws
//! its messages as the one progress line and hands the job's `Output` to the report. A job
//! that sends often paces itself with `JobContext::interval` and `Every`.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// A long-running task: one file under `src/flow/` and its `pub mod` line in `flow.rs`.
pub trait Job: Send + 'static {
    /// What it tells as it goes and at its end.
    type Msg: Send + 'static;

    /// What it hands back at its end to whoever ran it on the calling thread (the CLI's
    /// report: a scan's whole map, a typed error); the screen hears its messages only.
    type Output: Send + 'static;

    /// Its name; the runner runs one job of a name at a time (a batch of them together).
    fn name(&self) -> &'static str;

    /// Its thread's name (a panic message says it): by default its name.
    fn thread_name(&self) -> String {
        self.name().to_string()
    }

    /// How long a quit waits for it to wind down once stopped.
    fn stop_wait(&self) -> Duration {
        Duration::from_secs(5)
    }

    /// What it says when its thread cannot be started.
    fn cannot_start(&self, error: &std::io::Error) -> Self::Msg;

    /// Runs to its end or until `ctx.stopped()`, telling `ctx` what happens; it puts back
    /// what it changed before it returns.
    fn run(self, ctx: &JobContext<'_, Self::Msg>) -> Self::Output;
}

/// What a running job is given: the stop flag, where its messages go and how often it may
/// send progress.
pub struct JobContext<'a, M> {
    stop: &'a AtomicBool,
    send: &'a (dyn Fn(M) -> bool + Sync),
    /// How often its progress is wanted (the screen: every 250 ms).
    pub interval: Duration,
}

impl<'a, M> JobContext<'a, M> {
    /// A context that sends through `send` (false: nobody listens any more).
    pub fn new(
        stop: &'a AtomicBool,
        send: &'a (dyn Fn(M) -> bool + Sync),
        interval: Duration,
    ) -> Self {
        JobContext {
            stop,
            send,
            interval,
        }
    }

    /// The stop flag itself, for the engines that read it between steps.
    pub fn stop_flag(&self) -> &'a AtomicBool {
        self.stop
    }

    /// Whether the job was asked to stop.
    pub fn stopped(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }

    /// Sends one message; false when nobody listens any more (the session ended).
    pub fn send(&self, msg: M) -> bool {
        (self.send)(msg)
    }
}

/// Paces a job's progress: `due` is true once per `every` (and the first time).
pub struct Every {
    every: Duration,
    last: Option<Instant>,
}

impl Every {
    pub fn new(every: Duration) -> Self {
        Every { every, last: None }
    }

    /// True when `every` has passed since the last true (and the first time); `force`
    /// makes it true now (a phase's end).
    pub fn due(&mut self, force: bool) -> bool {
        let due = force || self.last.is_none_or(|at| at.elapsed() >= self.every);
        if due {
            self.last = Some(Instant::now());
        }
        due
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_is_due_first_then_once_per_interval_or_when_forced() {
        let mut e = Every::new(Duration::from_secs(3600));
        assert!(e.due(false));
        assert!(!e.due(false));
        assert!(e.due(true));
        let mut fast = Every::new(Duration::ZERO);
        assert!(fast.due(false) && fast.due(false));
    }

    #[test]
    fn the_context_reads_the_flag_and_says_when_nobody_listens() {
        let stop = AtomicBool::new(false);
        let (tx, rx) = std::sync::mpsc::channel::<u8>();
        let send = move |m| tx.send(m).is_ok();
        let ctx = JobContext::new(&stop, &send, Duration::from_millis(250));
        assert!(!ctx.stopped());
        assert!(ctx.send(1));
        stop.store(true, Ordering::Relaxed);
        assert!(ctx.stopped());
        drop(rx);
        assert!(!ctx.send(2));
    }
}
