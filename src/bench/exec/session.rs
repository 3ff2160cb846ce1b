//! One test run from request to report, shared by the CLI and the TUI: `check` (nothing
//! opened for writing, no file laid out), `ready` (target prepared, write guard first; plan
//! built), `Ready::launch` (the runner), then the report every output format renders.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use anyhow::Context;

use crate::bench::catalog::build::build_plan;
use crate::bench::exec::engines::directory::METADATA_NO_WITNESS;
use crate::bench::exec::memory::check_memory;
use crate::bench::exec::pattern::DataPattern;
use crate::bench::exec::run_input::{RunEvent, RunInput};
use crate::bench::exec::runner::{self, RunHandle};
use crate::bench::exec::target::{self, TargetRequest};
use crate::bench::exec::test_file;
use crate::bench::plan::Plan;
use crate::bench::plan::TargetFacts;
use crate::bench::plan::params::TestParams;
use crate::bench::plan::test_name::TestName;
use crate::bench::results::outcome::{
    RUN_JSON_SCHEMA, RunOutcome, RunReport, TargetClass, TargetInfo,
};
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
    /// The device as the admin chose it (the TUI's inventory): a block device that is no longer
    /// it is refused before any I/O.
    pub device: Option<crate::model::ChosenDevice>,
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
    /// The test file this run created: kept by `finish`, removed by `finish_removing_test_file`
    /// or when the session is dropped unfinished.
    created: Option<test_file::CreatedFile>,
}

/// Checks, opens and starts. Errors (refused writes, bad parameters, open failures) come back
/// before any I/O is done.
pub fn start(root: &SysRoot, req: &RunRequest) -> anyhow::Result<Session> {
    start_with_stop(root, req, None)
}

/// `start`, with a flag a signal sets to stop laying out a new test file. A test file this
/// run created is removed whenever the start fails.
pub fn start_with_stop(
    root: &SysRoot,
    req: &RunRequest,
    stop: Option<&AtomicBool>,
) -> anyhow::Result<Session> {
    start_watched(root, req, stop, None)
}

/// `start_with_stop`, counting a new test file's bytes laid out in `laid_out` (the TUI's
/// progress).
pub fn start_watched(
    root: &SysRoot,
    req: &RunRequest,
    stop: Option<&AtomicBool>,
    laid_out: Option<&AtomicU64>,
) -> anyhow::Result<Session> {
    if req.test.info().family.runs_in_directory() {
        return start_directory(root, req);
    }
    check(root, req)?;
    ready(root, req, stop, laid_out)?.launch()
}

/// Everything a run checks before it touches its target: the write guard on the live system,
/// the parameters, the plan and its buffers' memory. Nothing is written or created. A run
/// over several targets checks every one before any starts.
pub fn check(root: &SysRoot, req: &RunRequest) -> anyhow::Result<target::Checked> {
    if req.test.info().family.runs_in_directory() {
        // A directory test writes only in a scratch directory it makes itself.
        return Ok(target::Checked {
            object: target::TargetObject::New {
                dir: None,
                path: req.target.clone(),
                name: String::new(),
            },
            facts: TargetFacts {
                size: 1,
                logical_block_size: 4096,
                max_request: None,
                is_file: true,
            },
            writes_allowed: true,
        });
    }
    let checked = target::check(&TargetRequest {
        path: &req.target,
        root,
        test: req.test,
        params: &req.params,
        confirmation: req.confirmation.as_deref(),
        stop: None,
        laid_out: None,
        chosen: req.device.as_ref(),
    })?;
    planned(req, &checked.facts, checked.writes_allowed)?;
    Ok(checked)
}

/// The plan of `req` on a target with `facts`, refused when its buffers would not fit in
/// memory: 256 MiB x QD 1024 would otherwise meet the OOM killer, unexplained.
fn planned(req: &RunRequest, facts: &TargetFacts, writes: bool) -> anyhow::Result<Plan> {
    build_plan(req.test, &req.params, facts, writes)
        .and_then(|plan| {
            check_memory(&plan, crate::sys::host::available_memory())?;
            Ok(plan)
        })
        .map_err(|e| {
            anyhow::Error::new(e).context(format!(
                "cannot run {} on {}",
                req.test,
                req.target.display()
            ))
        })
}

/// A target opened (a new test file laid out) and its plan built, ready to start.
pub struct Ready {
    prepared: target::PreparedTarget,
    plan: Plan,
    test: TestName,
}

/// Opens the target of `req` (laying out a new test file) and builds its plan, without
/// starting: a run over several targets readies every one first. A test file it created is
/// removed (if still that file) when the plan is refused or the `Ready` is dropped.
pub fn ready(
    root: &SysRoot,
    req: &RunRequest,
    stop: Option<&AtomicBool>,
    laid_out: Option<&AtomicU64>,
) -> anyhow::Result<Ready> {
    let prepared = target::prepare(&TargetRequest {
        path: &req.target,
        root,
        test: req.test,
        params: &req.params,
        confirmation: req.confirmation.as_deref(),
        stop,
        laid_out,
        chosen: req.device.as_ref(),
    })?;
    // A refusal here drops `prepared`, and with it the file this run created.
    let plan = planned(req, &prepared.facts, prepared.writes_allowed)?;
    Ok(Ready {
        prepared,
        plan,
        test: req.test,
    })
}

impl Ready {
    /// Starts the run.
    pub fn launch(mut self) -> anyhow::Result<Session> {
        let plan = self.plan;
        let prepared = &mut self.prepared;
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
            transport: prepared.info.transport,
            scratch: None,
        })?;
        Ok(Session {
            handle,
            events,
            plan,
            target: prepared.info.clone(),
            notes: std::mem::take(&mut prepared.notes),
            test: self.test,
            started_unix,
            created: prepared.created_file.take(),
        })
    }
}

/// A directory test (the metadata test): its scratch directory, the open target, is made
/// first and removed when the plan is refused or the runner cannot start. Its phases run on
/// `engines::directory` in the common runner.
fn start_directory(root: &SysRoot, req: &RunRequest) -> anyhow::Result<Session> {
    let prepared = target::prepare_directory(&req.target, root, req.test)?;
    let plan = build_plan(req.test, &req.params, &prepared.facts, true)
        .and_then(|plan| {
            check_memory(&plan, crate::sys::host::available_memory())?;
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
    let fd = prepared.scratch.dir_fd().with_context(|| {
        format!(
            "cannot open the scratch directory {}",
            prepared.scratch.path().display()
        )
    })?;
    let handle = runner::start(RunInput {
        plan: plan.clone(),
        fd: Arc::new(fd),
        pattern: None,
        // No block device to count bytes on: files are counted, not bytes.
        stat: None,
        no_stat_reason: Some(METADATA_NO_WITNESS.into()),
        events: Some(tx),
        block_device: false,
        size_at_start: 0,
        transport: None,
        scratch: Some(Arc::new(Mutex::new(prepared.scratch))),
    })?;
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
    /// Passes the run's events to `send` and `stop` on to the run, looking at least every
    /// `poll`, until the run ends. When `send` returns false nobody is listening: the run stops.
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

    /// Waits for the runner, removes the test file the run created (if it is still at its
    /// path), and builds the report, which says so.
    pub fn finish_removing_test_file(mut self) -> anyhow::Result<RunReport> {
        let created = self.created.take();
        let mut report = self.finish_inner()?;
        if let Some(file) = created {
            let path = report.target.path.display().to_string();
            report.notes.push(match file.remove() {
                Ok(true) => format!("the test file {path} was removed"),
                Ok(false) => format!(
                    "the test file {path} was left alone: another file (or none) is at its path \
                     now, so the one this run made was renamed or replaced meanwhile"
                ),
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
        let faster = crate::bench::results::guards::faster_than_link(&report);
        report.notes.extend(faster);
        Ok(report)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicU64;

    /// A start refused for its memory need lays out nothing, so it cannot remove a file put at
    /// the path during the layout (an older order laid out first, then removed by path).
    #[test]
    fn a_refused_start_never_removes_a_file_put_at_its_path() {
        // Only where the memory check refuses 256 MiB x QD 1024 (256 GiB of buffers).
        if crate::sys::host::available_memory().is_none_or(|m| m > 256 << 30) {
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("new.bin");
        let laid_out = Arc::new(AtomicU64::new(0));
        let done = Arc::new(AtomicBool::new(false));
        // The racer: once the layout has begun, the test file is renamed away and another file
        // is put at its path.
        let racer = {
            let (path, laid_out, done) = (path.clone(), Arc::clone(&laid_out), Arc::clone(&done));
            let moved = dir.path().join("moved.bin");
            std::thread::spawn(move || {
                while !done.load(Ordering::Relaxed) {
                    if laid_out.load(Ordering::Relaxed) > 0 {
                        std::fs::rename(&path, &moved).unwrap();
                        std::fs::write(&path, b"someone else's file").unwrap();
                        return true;
                    }
                    std::thread::sleep(Duration::from_micros(100));
                }
                false
            })
        };
        let req = RunRequest {
            target: path.clone(),
            test: TestName::SeqWrite,
            params: TestParams {
                bs: Some(256 << 20),
                qd: Some(1024),
                size: Some(256 << 20),
                ..TestParams::default()
            },
            confirmation: None,
            temperature: TempPoll::Off,
            device: None,
        };
        let refused = start_watched(&SysRoot::host(), &req, None, Some(laid_out.as_ref()));
        done.store(true, Ordering::Relaxed);
        let raced = racer.join().unwrap();
        let e = refused.err().unwrap();
        assert!(format!("{e:#}").contains("of memory"), "{e:#}");
        if raced {
            assert_eq!(
                std::fs::read(&path).unwrap(),
                b"someone else's file",
                "the file put at the path was removed"
            );
        }
        assert!(!raced, "the file was laid out before the refusal");
        assert!(!path.exists());
    }
}
