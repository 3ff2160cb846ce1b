//! The setting sweep as a pure state machine: one test (or the cache preset's two) under each
//! value of a disk's I/O scheduler or write cache, repeats interleaved
//! (`bench::analysis::setting_sweep::order`), and the value at start put back at the end,
//! after a failure and after a stop.
//!
//! The steps are check (`scheduler_values`, `cache_values`), claim, switch, run, measure, put
//! back. The machine does no I/O: it says what to do next ([`Next`]) and is told what came of
//! it; `flow::sweep_job` drives it. The refusals and the sentences a sweep says are here, once.

use crate::bench::analysis::setting_sweep::{
    self as sweep, SweepKind, SweepResult, SweepSample, SweepStep,
};
use crate::bench::plan::metric::Metric;
use crate::bench::plan::test_name::TestName;
use crate::bench::results::outcome::RunReport;
use crate::model::{CacheStatus, SchedulerSet};

/// Where a sweep is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SweepStage {
    /// Waiting for the device's settings to be claimed, before anything runs.
    Claiming,
    /// Waiting for the switch to the next value.
    Switching,
    /// A run is in progress.
    Running,
    /// Waiting for the value found at start to be set back.
    Restoring,
    Done,
}

/// What the driver does next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Next {
    /// Set the value `settings[i]`, then tell [`SettingSweep::switched`].
    Switch(usize),
    /// Make this run (its value is set), then tell [`SettingSweep::ran`].
    Run(SweepStep),
    /// Put the value at start (`settings[0]`) back, then tell [`SettingSweep::switched`].
    PutBack,
    /// The sweep is over: show its result.
    Done,
    /// The claim was refused: nothing ran or was switched (`error` says why).
    Refused,
    /// Nothing: an answer the sweep does not wait for.
    Wait,
}

/// What one run of a sweep came to.
#[derive(Debug, Clone, PartialEq)]
pub struct RunEnd {
    /// Stopped (by `x`, a signal): the sweep ends after it.
    pub stopped: bool,
    /// The run failed: the sweep ends with this error.
    pub error: Option<String>,
    /// The run's figure (`None`: too few I/Os for one).
    pub figure: Option<f64>,
}

impl RunEnd {
    /// A run that measured `figure`.
    pub fn figure(figure: Option<f64>) -> RunEnd {
        RunEnd {
            stopped: false,
            error: None,
            figure,
        }
    }

    /// A run stopped before it finished.
    pub fn stopped() -> RunEnd {
        RunEnd {
            stopped: true,
            error: None,
            figure: None,
        }
    }

    /// A run refused or failed: `error` says why.
    pub fn failed(error: String) -> RunEnd {
        RunEnd {
            stopped: false,
            error: Some(error),
            figure: None,
        }
    }

    /// What `report`, a run of `test`, came to: its figure in the test's metric, or the
    /// failure that ends the sweep.
    pub fn of_report(test: TestName, report: &RunReport) -> RunEnd {
        RunEnd {
            stopped: report.outcome.stopped,
            error: report.error().map(|e| run_failed(test, &e)),
            figure: Metric::for_test(test).of(report),
        }
    }
}

/// A sweep in progress, or the last one, finished.
#[derive(Debug, Clone, PartialEq)]
pub struct SettingSweep {
    pub kind: SweepKind,
    /// The disk whose setting changes.
    pub device: String,
    /// The values, the one found at start first.
    pub settings: Vec<String>,
    pub tests: Vec<TestName>,
    pub repeats: u32,
    pub steps: Vec<SweepStep>,
    /// The step in progress (`steps.len()` once all are made).
    pub at: usize,
    /// The value the device has now (an index into `settings`).
    pub current: usize,
    pub samples: Vec<SweepSample>,
    pub stage: SweepStage,
    /// Asked to stop: the sweep ends after the run in progress (which stops too).
    pub stopping: bool,
    pub error: Option<String>,
    /// The value found at start could not be set back: why.
    pub restore_error: Option<String>,
}

impl SettingSweep {
    /// A sweep of `device` through `settings` (the value at start first), waiting for its claim.
    pub fn new(
        kind: SweepKind,
        device: String,
        settings: Vec<String>,
        tests: Vec<TestName>,
        repeats: u32,
    ) -> SettingSweep {
        SettingSweep {
            kind,
            device,
            steps: sweep::order(settings.len(), repeats, tests.len()),
            settings,
            tests,
            repeats,
            at: 0,
            current: 0,
            samples: Vec::new(),
            stage: SweepStage::Claiming,
            stopping: false,
            error: None,
            restore_error: None,
        }
    }

    pub fn active(&self) -> bool {
        self.stage != SweepStage::Done
    }

    /// The figures so far (all of them once done): the table both faces show.
    pub fn result(&self) -> SweepResult {
        SweepResult::build(
            self.kind,
            &self.device,
            &self.settings,
            self.repeats,
            &self.tests,
            &self.samples,
        )
    }

    /// "Scheduler sweep, run 5 of 12: bfq, repeat 2 of 3".
    pub fn progress(&self) -> String {
        let Some(step) = self.steps.get(self.at) else {
            return format!("{}: putting the value at start back", self.kind.title());
        };
        format!(
            "{}, run {} of {}: {}, repeat {} of {}",
            self.kind.title(),
            self.at + 1,
            self.steps.len(),
            sweep::label(self.kind, &self.settings[step.setting]),
            step.repeat + 1,
            self.repeats
        )
    }

    /// What the device's settings are claimed as: "scheduler sweep of sda".
    pub fn claim_label(&self) -> String {
        claim_label(self.kind, &self.device)
    }

    /// The answer to the claim: the first run under the value at start; or, when another
    /// disktriage holds the device, the refusal, and nothing run or switched.
    pub fn claimed(&mut self, result: Result<(), String>) -> Next {
        if self.stage != SweepStage::Claiming {
            return Next::Wait;
        }
        match result {
            Ok(()) if self.stopping => self.finish(),
            Ok(()) => self.next(),
            Err(e) => {
                self.error = Some(format!("cannot sweep {}: {e}", self.device));
                self.stage = SweepStage::Done;
                Next::Refused
            }
        }
    }

    /// Asks the sweep to stop: no run starts after this one (the driver stops the run in
    /// progress), and the value at start comes back.
    pub fn stop(&mut self) {
        self.stopping = true;
    }

    /// Ends the sweep now, between steps (a stop seen before the next switch or run): the
    /// value at start comes back.
    pub fn stop_now(&mut self) -> Next {
        self.stopping = true;
        self.end()
    }

    /// The answer to a switch (`Next::Switch`) or to the put-back (`Next::PutBack`): done,
    /// or why not.
    pub fn switched(&mut self, result: Result<(), String>) -> Next {
        let wanted = self.wanted();
        match (self.stage, result) {
            (SweepStage::Switching, Ok(())) => {
                self.current = wanted;
                // A stop while the switch was under way: no more runs.
                if self.stopping {
                    return self.end();
                }
                self.run()
            }
            (SweepStage::Switching, Err(e)) => {
                self.error = Some(e);
                self.end()
            }
            (SweepStage::Restoring, Ok(())) => {
                self.current = 0;
                self.finish()
            }
            (SweepStage::Restoring, Err(e)) => {
                // The session's journal still puts it back on exit.
                self.restore_error = Some(format!("{e}; it is put back on exit"));
                self.finish()
            }
            _ => Next::Wait,
        }
    }

    /// The answer to a switch as the device reports its value afterwards (`Ok(value)`), or
    /// why the switch failed: a device that acknowledged and ignored it is caught here.
    pub fn reported(&mut self, reported: Result<String, String>) -> Next {
        let wanted = self.wanted();
        let result = reported.and_then(|now| {
            if now == self.settings[wanted] {
                Ok(())
            } else {
                Err(format!(
                    "asked {} for {}, it reports {now}",
                    self.device,
                    sweep::label(self.kind, &self.settings[wanted])
                ))
            }
        });
        self.switched(result)
    }

    /// Is the sweep waiting for a switch of `device`?
    pub fn waits_for_switch(&self, device: &str) -> bool {
        matches!(self.stage, SweepStage::Switching | SweepStage::Restoring) && self.device == device
    }

    /// Is it putting the value at start back?
    pub fn restoring(&self) -> bool {
        self.stage == SweepStage::Restoring
    }

    /// The answer to a run (`Next::Run`): its figure is kept, a stop or a failure ends the
    /// sweep; then the next switch, run, or the end.
    pub fn ran(&mut self, end: RunEnd) -> Next {
        if let Some(step) = self.steps.get(self.at).copied()
            && !end.stopped
            && end.error.is_none()
        {
            self.samples.push(SweepSample {
                step,
                value: end.figure,
            });
        }
        if end.stopped {
            self.stopping = true;
        }
        if let Some(e) = end.error {
            self.error = Some(e);
        }
        self.at += 1;
        self.next()
    }

    /// A run was refused before it started (the device became busy, its parameters do not
    /// fit): the sweep ends there and the value at start comes back.
    pub fn refused(&mut self, e: String) -> Next {
        self.error = Some(e);
        self.end()
    }

    /// The value a switch in progress is for.
    fn wanted(&self) -> usize {
        match self.stage {
            SweepStage::Switching => self.steps.get(self.at).map_or(0, |s| s.setting),
            _ => 0,
        }
    }

    /// The next step: a switch, a run, or the end.
    fn next(&mut self) -> Next {
        match self.steps.get(self.at).copied() {
            Some(step) if !self.stopping && self.error.is_none() => {
                if step.setting == self.current {
                    return self.run();
                }
                self.stage = SweepStage::Switching;
                Next::Switch(step.setting)
            }
            _ => self.end(),
        }
    }

    fn run(&mut self) -> Next {
        match self.steps.get(self.at).copied() {
            Some(step) => {
                self.stage = SweepStage::Running;
                Next::Run(step)
            }
            None => Next::Wait,
        }
    }

    /// Puts the value at start back, or ends when it is there already.
    fn end(&mut self) -> Next {
        if self.current != 0 {
            self.stage = SweepStage::Restoring;
            return Next::PutBack;
        }
        self.finish()
    }

    fn finish(&mut self) -> Next {
        self.stage = SweepStage::Done;
        self.at = self.steps.len().min(self.at);
        Next::Done
    }
}

/// What a sweep claims `device`'s settings as, so that a second sweep of it (or a switch
/// elsewhere) is refused until this one ends: "scheduler sweep of sda".
pub fn claim_label(kind: SweepKind, device: &str) -> String {
    format!("{} of {device}", kind.title().to_lowercase())
}

/// "seq-write failed: I/O error": a run of the sweep that failed, and so ended it.
pub fn run_failed(test: TestName, error: &str) -> String {
    format!("{test} failed: {error}")
}

/// "cannot sweep the scheduler of sda": how every refusal to sweep `device` begins.
pub fn cannot_sweep(kind: SweepKind, device: &str) -> String {
    match kind {
        SweepKind::Scheduler => format!("cannot sweep the scheduler of {device}"),
        SweepKind::WriteCache => format!("cannot sweep the write cache of {device}"),
    }
}

/// The schedulers a sweep of `device` goes through (the active one first) and notes for the
/// admin; or why it cannot be swept (a bio-based device has no scheduler, a name asked for
/// is not offered).
pub fn scheduler_values(
    device: &str,
    set: &SchedulerSet,
    asked: &[String],
) -> Result<(Vec<String>, Vec<String>), String> {
    let why = |e: &str| format!("{}: {e}", cannot_sweep(SweepKind::Scheduler, device));
    let Some(active) = set.active.clone() else {
        return Err(why("the kernel offers none for it"));
    };
    let values = sweep::scheduler_values(&set.available, &active, asked).map_err(|e| why(&e))?;
    let mut notes = Vec::new();
    if !asked.is_empty() && !asked.contains(&active) {
        notes.push(format!(
            "{active}, the scheduler at start, is part of the sweep: the differences are to it"
        ));
    }
    Ok((values, notes))
}

/// The write cache values a sweep of `device` goes through (the state at start first); or why
/// not: the status unread (`Err`), no cache to switch, or its state unknown.
pub fn cache_values(
    device: &str,
    status: Result<&CacheStatus, String>,
) -> Result<Vec<String>, String> {
    let why = |e: &str| format!("{}: {e}", cannot_sweep(SweepKind::WriteCache, device));
    let status = status.map_err(|e| why(&e))?;
    match (&status.drive, &status.drive_unavailable) {
        (Some(cache), _) => sweep::cache_values(cache).map_err(|e| why(&e)),
        (None, Some(reason)) => Err(why(reason)),
        (None, None) => Err(why("the drive's cache state is unknown")),
    }
}

/// The refusal of a cache sweep of `device` for `reason`, where no status says it.
pub fn cache_refusal(device: &str, reason: &str) -> String {
    format!("{}: {reason}", cannot_sweep(SweepKind::WriteCache, device))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{DriveCache, Transport};

    fn cache(enabled: Option<bool>) -> DriveCache {
        DriveCache {
            enabled,
            changeable: true,
            fixed_reason: None,
            source: "test".into(),
        }
    }

    fn sched(repeats: u32) -> SettingSweep {
        SettingSweep::new(
            SweepKind::Scheduler,
            "sda".into(),
            vec!["mq-deadline".into(), "none".into()],
            vec![TestName::SeqRead],
            repeats,
        )
    }

    /// Drives `sw` with every switch succeeding and every run measuring 1.0, until `Done`,
    /// calling `at` before each answer; returns the actions.
    fn drive(sw: &mut SettingSweep, mut at: impl FnMut(&mut SettingSweep, Next)) -> Vec<Next> {
        let mut seen = Vec::new();
        let mut next = sw.claimed(Ok(()));
        while seen.len() < 100 {
            seen.push(next);
            at(sw, next);
            next = match next {
                Next::Switch(_) | Next::PutBack => sw.switched(Ok(())),
                Next::Run(_) => sw.ran(RunEnd::figure(Some(1.0))),
                Next::Done | Next::Refused | Next::Wait => break,
            };
        }
        seen
    }

    #[test]
    fn each_value_is_switched_to_run_and_the_value_at_start_is_put_back() {
        let mut sw = sched(2);
        let seen = drive(&mut sw, |_, _| {});
        let step = |repeat, setting| {
            Next::Run(SweepStep {
                repeat,
                setting,
                test: 0,
            })
        };
        assert_eq!(
            seen,
            [
                step(0, 0),
                Next::Switch(1),
                step(0, 1),
                Next::Switch(0),
                step(1, 0),
                Next::Switch(1),
                step(1, 1),
                Next::PutBack,
                Next::Done,
            ]
        );
        assert_eq!(sw.samples.len(), 4);
        assert_eq!(sw.current, 0);
        assert!(!sw.active() && sw.error.is_none() && !sw.stopping);
        assert!(sw.result().complete());
    }

    #[test]
    fn a_refused_claim_ends_the_sweep_before_anything_runs() {
        let mut sw = sched(1);
        assert_eq!(sw.claimed(Err("held by pid 7".into())), Next::Refused);
        assert_eq!(sw.error.as_deref(), Some("cannot sweep sda: held by pid 7"));
        assert_eq!(sw.stage, SweepStage::Done);
        assert!(sw.samples.is_empty());
        // A late answer changes nothing.
        assert_eq!(sw.claimed(Ok(())), Next::Wait);
    }

    #[test]
    fn a_stop_before_the_claim_answers_runs_nothing() {
        let mut sw = sched(1);
        sw.stop();
        assert_eq!(sw.claimed(Ok(())), Next::Done);
        assert!(sw.samples.is_empty() && sw.stopping);
    }

    #[test]
    fn a_failed_run_ends_the_sweep_and_the_value_at_start_comes_back() {
        let mut sw = sched(2);
        assert!(matches!(sw.claimed(Ok(())), Next::Run(_)));
        assert_eq!(sw.switched(Ok(())), Next::Wait, "no switch was asked for");
        assert_eq!(sw.ran(RunEnd::figure(Some(1.0))), Next::Switch(1));
        assert!(matches!(sw.switched(Ok(())), Next::Run(_)));
        let failed = RunEnd::failed(run_failed(TestName::SeqRead, "I/O error"));
        assert_eq!(sw.ran(failed), Next::PutBack);
        assert_eq!(sw.error.as_deref(), Some("seq-read failed: I/O error"));
        assert_eq!(sw.switched(Ok(())), Next::Done);
        assert_eq!((sw.current, sw.samples.len()), (0, 1));
        assert_eq!(sw.restore_error, None);
    }

    #[test]
    fn a_failure_under_the_value_at_start_needs_no_put_back() {
        let mut sw = sched(2);
        sw.claimed(Ok(()));
        assert_eq!(sw.ran(RunEnd::failed("refused".into())), Next::Done);
        assert_eq!(sw.current, 0);
    }

    #[test]
    fn a_stopped_run_ends_the_sweep_without_its_figure_and_puts_back() {
        let mut sw = sched(3);
        sw.claimed(Ok(()));
        sw.ran(RunEnd::figure(Some(1.0)));
        sw.switched(Ok(()));
        assert_eq!(sw.ran(RunEnd::stopped()), Next::PutBack);
        assert!(sw.stopping && sw.error.is_none());
        assert_eq!(sw.samples.len(), 1);
        assert_eq!(sw.switched(Ok(())), Next::Done);
        assert!(!sw.result().complete());
    }

    #[test]
    fn a_stop_during_a_switch_runs_nothing_more_and_puts_back() {
        let mut sw = sched(2);
        sw.claimed(Ok(()));
        assert_eq!(sw.ran(RunEnd::figure(Some(1.0))), Next::Switch(1));
        sw.stop();
        assert_eq!(sw.switched(Ok(())), Next::PutBack);
        assert_eq!(sw.switched(Ok(())), Next::Done);
        assert_eq!(sw.samples.len(), 1);
    }

    #[test]
    fn a_stop_between_steps_puts_back_at_once() {
        let mut sw = sched(2);
        sw.claimed(Ok(()));
        sw.ran(RunEnd::figure(Some(1.0)));
        sw.switched(Ok(()));
        assert_eq!(sw.stop_now(), Next::PutBack);
        let mut sw = sched(2);
        sw.claimed(Ok(()));
        assert_eq!(sw.stop_now(), Next::Done, "still at the value at start");
    }

    #[test]
    fn a_failed_switch_ends_the_sweep_and_a_failed_put_back_is_said() {
        let mut sw = sched(2);
        sw.claimed(Ok(()));
        sw.ran(RunEnd::figure(Some(1.0)));
        assert_eq!(
            sw.switched(Err("cannot switch the scheduler of sda: busy".into())),
            Next::Done,
            "the value at start was never left"
        );
        assert_eq!(
            sw.error.as_deref(),
            Some("cannot switch the scheduler of sda: busy")
        );

        let mut sw = sched(1);
        sw.claimed(Ok(()));
        sw.ran(RunEnd::figure(Some(1.0)));
        sw.switched(Ok(()));
        assert_eq!(sw.ran(RunEnd::failed("x".into())), Next::PutBack);
        assert_eq!(sw.switched(Err("gone".into())), Next::Done);
        assert_eq!(
            sw.restore_error.as_deref(),
            Some("gone; it is put back on exit")
        );
        assert_eq!(sw.current, 1, "the device still has the swept value");
    }

    #[test]
    fn a_device_that_ignores_a_switch_is_caught() {
        let mut sw = sched(1);
        sw.claimed(Ok(()));
        sw.ran(RunEnd::figure(Some(1.0)));
        assert!(sw.waits_for_switch("sda") && !sw.waits_for_switch("sdb"));
        assert_eq!(sw.reported(Ok("mq-deadline".into())), Next::Done);
        assert_eq!(
            sw.error.as_deref(),
            Some("asked sda for none, it reports mq-deadline")
        );
    }

    #[test]
    fn the_progress_names_the_run_the_value_and_the_repeat() {
        let mut sw = sched(2);
        sw.claimed(Ok(()));
        sw.ran(RunEnd::figure(Some(1.0)));
        assert_eq!(
            sw.progress(),
            "Scheduler sweep, run 2 of 4: none, repeat 1 of 2"
        );
        assert_eq!(sw.claim_label(), "scheduler sweep of sda");
    }

    #[test]
    fn every_refusal_to_sweep_says_the_device_and_why() {
        let none = SchedulerSet {
            active: None,
            available: Vec::new(),
        };
        assert_eq!(
            scheduler_values("md0", &none, &[]).unwrap_err(),
            "cannot sweep the scheduler of md0: the kernel offers none for it"
        );
        let set = SchedulerSet {
            active: Some("mq-deadline".into()),
            available: vec!["mq-deadline".into(), "none".into(), "bfq".into()],
        };
        let e = scheduler_values("sda", &set, &["cfq".into()]).unwrap_err();
        assert!(
            e.starts_with("cannot sweep the scheduler of sda: ") && e.contains("\"cfq\""),
            "{e}"
        );
        let (values, notes) = scheduler_values("sda", &set, &["bfq".into()]).unwrap();
        assert_eq!(values, ["mq-deadline", "bfq"]);
        assert!(notes[0].starts_with("mq-deadline, the scheduler at start"));
        assert!(scheduler_values("sda", &set, &[]).unwrap().1.is_empty());

        assert_eq!(
            cache_values("sda", Err("permission denied".into())).unwrap_err(),
            "cannot sweep the write cache of sda: permission denied"
        );
        let mut status = CacheStatus::new(
            "loop0",
            Transport::Loop,
            Err("not supported on loop".into()),
            None,
        );
        assert_eq!(
            cache_values("loop0", Ok(&status)).unwrap_err(),
            "cannot sweep the write cache of loop0: not supported on loop"
        );
        status.drive_unavailable = None;
        assert_eq!(
            cache_values("loop0", Ok(&status)).unwrap_err(),
            "cannot sweep the write cache of loop0: the drive's cache state is unknown"
        );
        status.drive = Some(cache(None));
        assert_eq!(
            cache_values("loop0", Ok(&status)).unwrap_err(),
            "cannot sweep the write cache of loop0: the drive reports no volatile write cache"
        );
        status.drive = Some(cache(Some(false)));
        assert_eq!(cache_values("sda", Ok(&status)).unwrap(), ["off", "on"]);
        assert_eq!(
            cache_refusal("zram0", "not supported on zram"),
            "cannot sweep the write cache of zram0: not supported on zram"
        );
    }
}
