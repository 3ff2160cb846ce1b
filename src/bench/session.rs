//! One test run from request to report, shared by the CLI and the TUI: prepare the target
//! (write guard first), build the plan, start the runner, and when it is done assemble the
//! report that every output format renders.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use super::catalog::TestName;
use super::outcome::{RUN_JSON_SCHEMA, RunOutcome, RunReport, TargetClass, TargetInfo};
use super::pattern::DataPattern;
use super::runner::{self, RunEvent, RunHandle, RunInput};
use super::spec::{self, Plan, TestParams};
use super::target::{self, TargetRequest};
use crate::sys::SysRoot;

/// Whether to read the drive's temperature during a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TempPoll {
    /// Every 5 s on SATA and NVMe; off for USB bridges and drives without a sensor.
    #[default]
    Default,
    Off,
    /// At this interval (at least 1 s), on any drive that answers.
    Every(std::time::Duration),
}

/// What to run where.
#[derive(Debug, Clone, PartialEq)]
pub struct RunRequest {
    pub target: PathBuf,
    pub test: TestName,
    pub params: TestParams,
    /// What the admin typed to confirm writing.
    pub confirmation: Option<String>,
    pub temperature: TempPoll,
}

/// A run in progress.
pub struct Session {
    pub handle: RunHandle,
    pub events: Receiver<RunEvent>,
    pub plan: Plan,
    pub target: TargetInfo,
    pub notes: Vec<String>,
    pub test: TestName,
    started_unix: u64,
    /// The test file this run created, if it did: kept by `finish`, removed by
    /// `finish_removing_test_file` (and when the session is dropped unfinished).
    created: Option<target::CreatedFile>,
}

/// Checks, opens and starts. Errors (refused writes, bad parameters, open failures) come back
/// before any I/O is done.
pub fn start(root: &SysRoot, req: &RunRequest) -> anyhow::Result<Session> {
    start_with_stop(root, req, None)
}

/// `start`, with a flag a signal sets: it stops the layout of a new test file (which is then
/// removed). A test file this run created is removed again whenever the start fails.
pub fn start_with_stop(
    root: &SysRoot,
    req: &RunRequest,
    stop: Option<&AtomicBool>,
) -> anyhow::Result<Session> {
    start_watched(root, req, stop, None)
}

/// `start_with_stop`, keeping the bytes of a new test file written so far in `laid_out` while
/// the file is laid out (the TUI shows its progress).
pub fn start_watched(
    root: &SysRoot,
    req: &RunRequest,
    stop: Option<&AtomicBool>,
    laid_out: Option<&AtomicU64>,
) -> anyhow::Result<Session> {
    if let Some(runner) = req.test.info().family.directory_runner() {
        return start_directory(root, req, runner);
    }
    let mut prepared = target::prepare(&TargetRequest {
        path: &req.target,
        root,
        test: req.test,
        params: &req.params,
        confirmation: req.confirmation.as_deref(),
        stop,
        laid_out,
    })?;
    // The buffers are checked against the machine's memory before any is allocated: settings
    // the plan accepts (256 MiB x QD 1024) would otherwise end in the OOM killer, unexplained.
    let plan = spec::build_plan(
        req.test,
        &req.params,
        &prepared.facts,
        prepared.writes_allowed,
    )
    .and_then(|plan| {
        spec::check_memory(&plan, crate::sys::host::available_memory())?;
        Ok(plan)
    });
    let plan = match plan {
        Ok(plan) => plan,
        Err(e) => {
            // A file this run created for a test that will not run is not left behind.
            if prepared.info.created {
                let _ = crate::sys::direct::remove_file(&req.target);
            }
            return Err(anyhow::Error::new(e).context(format!(
                "cannot run {} on {}",
                req.test,
                req.target.display()
            )));
        }
    };
    // A rewrite writes back what it reads: it has no pattern.
    let pattern = if plan.writes() && !plan.rewrites() {
        Some(DataPattern::new(
            plan.data,
            plan.max_bs() as usize,
            plan.huge_pages,
        )?)
    } else {
        None
    };
    let started_unix = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let (tx, events) = mpsc::channel();
    let handle = runner::start(RunInput {
        plan: plan.clone(),
        fd: Arc::clone(&prepared.fd),
        pattern,
        stat: prepared.stat.clone(),
        no_stat_reason: prepared.no_stat_reason.clone(),
        events: Some(tx),
        block_device: prepared.info.kind == TargetClass::BlockDevice,
        size_at_start: prepared.info.size_bytes,
    })?;
    Ok(Session {
        handle,
        events,
        plan,
        target: prepared.info,
        notes: prepared.notes,
        test: req.test,
        started_unix,
        created: prepared.created_file.take(),
    })
}

/// A directory test (the metadata test): its scratch directory is made first, and removed
/// again (it is dropped) when the plan is refused or the runner cannot start.
fn start_directory(
    root: &SysRoot,
    req: &RunRequest,
    runner: super::family::DirectoryRunner,
) -> anyhow::Result<Session> {
    let prepared = target::prepare_directory(&req.target, root, req.test)?;
    let plan = spec::build_plan(req.test, &req.params, &prepared.facts, true)
        .and_then(|plan| {
            spec::check_memory(&plan, crate::sys::host::available_memory())?;
            Ok(plan)
        })
        .map_err(|e| {
            anyhow::Error::new(e).context(format!(
                "cannot run {} in {}",
                req.test,
                req.target.display()
            ))
        })?;
    let started_unix = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let (tx, events) = mpsc::channel();
    let handle = runner::start_directory(
        runner,
        super::family::DirectoryRun {
            plan: plan.clone(),
            scratch: prepared.scratch,
            events: Some(tx),
        },
    )?;
    Ok(Session {
        handle,
        events,
        plan,
        target: prepared.info,
        notes: prepared.notes,
        test: req.test,
        started_unix,
        created: None,
    })
}

impl Session {
    /// Passes the run's events to `send` until the run ends, and `stop` on to the run, looking
    /// at it at least every `poll`. When `send` returns false (nobody is listening any more)
    /// the run is stopped: nobody would see it.
    pub fn relay(&self, stop: &AtomicBool, poll: Duration, mut send: impl FnMut(RunEvent) -> bool) {
        loop {
            if stop.load(Ordering::Relaxed) {
                self.handle.stop();
            }
            match self.events.recv_timeout(poll) {
                Ok(ev) => {
                    if !send(ev) {
                        self.handle.stop();
                        return;
                    }
                }
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => return,
            }
        }
    }

    /// The report of a finished run.
    pub fn report(
        test: TestName,
        target: TargetInfo,
        plan: Plan,
        notes: Vec<String>,
        started_unix: u64,
        outcome: RunOutcome,
    ) -> RunReport {
        RunReport {
            schema: RUN_JSON_SCHEMA,
            tool: format!("disktriage {}", env!("CARGO_PKG_VERSION")),
            started_unix,
            host: crate::sys::host::host_info(),
            test,
            target,
            plan,
            outcome,
            notes,
        }
    }

    /// Waits for the runner and builds the report. A test file the run created stays (the
    /// command line's rule: the admin may test it again).
    pub fn finish(mut self) -> anyhow::Result<RunReport> {
        if let Some(file) = self.created.take() {
            file.keep();
        }
        self.finish_inner()
    }

    /// Waits for the runner, removes the test file the run created (only that file: the one
    /// it created, if it is still at its path), and builds the report, which says so.
    pub fn finish_removing_test_file(mut self) -> anyhow::Result<RunReport> {
        let created = self.created.take();
        let mut report = self.finish_inner()?;
        if let Some(file) = created {
            let path = report.target.path.display().to_string();
            report.notes.push(match file.remove() {
                Ok(()) => format!("the test file {path} was removed"),
                Err(e) => format!(
                    "could not remove the test file {path}: {} - remove it by hand",
                    crate::sys::error::describe_io(&e)
                ),
            });
        }
        Ok(report)
    }

    fn finish_inner(self) -> anyhow::Result<RunReport> {
        let outcome = self.handle.join()?;
        let mut report = Session::report(
            self.test,
            self.target,
            self.plan,
            self.notes,
            self.started_unix,
            outcome,
        );
        let faster = super::guards::faster_than_link(&report);
        report.notes.extend(faster);
        Ok(report)
    }
}
