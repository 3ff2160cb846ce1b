//! The CLI's job runner: a long command runs its `flow::job::Job` on a thread of its own,
//! stopped by the command's stop signals, draws one progress line on stderr through its
//! `Follow`, and reports from `Job::Output`. `scan`, `triage`, `flushcheck`, `capacity`,
//! `trimcheck` and the setting sweeps use it.

use std::sync::atomic::AtomicBool;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::{Duration, Instant};

use anyhow::Context;

use crate::flow::job::{Job, JobContext};
use crate::flow::progress::ProgressLine;
use crate::sys::signals::StopSignals;

/// How a command reads its job's messages: its progress line, and what it keeps for the
/// report.
pub trait Follow<M> {
    /// How often the job's progress is wanted, and the line redrawn without news.
    fn every(&self) -> Duration;

    /// Hears one message: the line's new text, when it changes.
    fn hear(&mut self, msg: M) -> Option<String>;

    /// Once per `every`, news or not, so the line's clock runs while a read or a flush hangs.
    fn tick(&mut self) -> Option<String> {
        None
    }
}

/// Runs `job` to its end, stopped by `signals` (it winds down and puts back what it changed);
/// the progress line shows on a terminal only and is cleared at the end.
pub fn run_job<J: Job>(
    job: J,
    signals: &StopSignals,
    follow: &mut dyn Follow<J::Msg>,
) -> anyhow::Result<J::Output> {
    run_with_flag(job, signals.flag(), ProgressLine::on_terminal(), follow)
}

/// `run_job` with its stop flag and its line given (tests).
pub fn run_with_flag<J: Job>(
    job: J,
    stop: &AtomicBool,
    line: ProgressLine,
    follow: &mut dyn Follow<J::Msg>,
) -> anyhow::Result<J::Output> {
    let every = follow.every();
    let name = job.name();
    let (tx, rx) = mpsc::channel::<J::Msg>();
    let ended = std::thread::scope(|scope| {
        let thread = std::thread::Builder::new()
            .name(job.thread_name())
            .spawn_scoped(scope, move || {
                let send = move |m| tx.send(m).is_ok();
                job.run(&JobContext::new(stop, &send, every))
            })
            .with_context(|| format!("cannot start the {name}'s thread"))?;
        let mut next_tick = Instant::now() + every;
        loop {
            let text = match rx.recv_timeout(next_tick.saturating_duration_since(Instant::now())) {
                Ok(msg) => follow.hear(msg),
                Err(RecvTimeoutError::Timeout) => {
                    next_tick = Instant::now() + every;
                    follow.tick()
                }
                Err(RecvTimeoutError::Disconnected) => break,
            };
            if let Some(text) = text {
                line.show(&text);
            }
        }
        anyhow::Ok(thread.join())
    });
    line.clear();
    match ended? {
        Ok(output) => Ok(output),
        // A panic in the job is a bug: it ends the command as it would have on this thread.
        Err(panic) => std::panic::resume_unwind(panic),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::Ordering;

    /// Counts to `n` or until stopped, sending each number; hands back where it stopped.
    struct Count(u32);

    impl Job for Count {
        type Msg = u32;
        type Output = u32;
        fn name(&self) -> &'static str {
            "count"
        }
        fn cannot_start(&self, _: &std::io::Error) -> u32 {
            0
        }
        fn run(self, ctx: &JobContext<'_, u32>) -> u32 {
            let mut i = 0;
            while i < self.0 && !ctx.stopped() {
                i += 1;
                ctx.send(i);
                std::thread::sleep(Duration::from_millis(1));
            }
            i
        }
    }

    #[derive(Default)]
    struct Heard {
        msgs: Vec<u32>,
        ticks: u32,
        stop_at: Option<(u32, &'static AtomicBool)>,
    }

    impl Follow<u32> for Heard {
        fn every(&self) -> Duration {
            Duration::from_millis(1)
        }
        fn hear(&mut self, msg: u32) -> Option<String> {
            if let Some((at, flag)) = self.stop_at
                && msg == at
            {
                flag.store(true, Ordering::Relaxed);
            }
            self.msgs.push(msg);
            Some(format!("{msg}"))
        }
        fn tick(&mut self) -> Option<String> {
            self.ticks += 1;
            None
        }
    }

    #[test]
    fn the_job_runs_to_its_end_every_message_is_heard_and_its_output_returned() {
        let stop = AtomicBool::new(false);
        let mut heard = Heard::default();
        let out = run_with_flag(Count(20), &stop, ProgressLine::new(false), &mut heard).unwrap();
        assert_eq!(out, 20);
        assert_eq!(heard.msgs, (1..=20).collect::<Vec<_>>());
        assert!(heard.ticks > 0, "the clock ticks while the job runs");
    }

    #[test]
    fn the_stop_flag_stops_the_job_and_what_it_did_is_handed_back() {
        static STOP: AtomicBool = AtomicBool::new(false);
        let mut heard = Heard {
            stop_at: Some((5, &STOP)),
            ..Heard::default()
        };
        let out =
            run_with_flag(Count(u32::MAX), &STOP, ProgressLine::new(false), &mut heard).unwrap();
        assert!((5..100).contains(&out), "{out}");
        assert_eq!(heard.msgs.last(), Some(&out));
    }
}
