//! `disktriage run --sweep-sched` and `--sweep-cache`: the test under each value of the
//! disk's I/O scheduler or of the drive's write cache, repeats interleaved, and the table of
//! `bench::analysis::setting_sweep`. The steps, refusals and sentences are
//! `flow::setting_sweep`'s. This command checks the target, claims the disk's settings, reads
//! the values, runs the TUI's sweep job (`flow::sweep_job::SweepJob`) with its test runs
//! (`run_step`) and prints the table.
//!
//! Changes go through the journal behind a `RestoreGuard`, which puts the value found at start
//! back however the sweep ends (`changes::guard`). A stop signal ends the sweep with the run in
//! progress; the table of what completed is printed and the exit status is 128 + the signal.

use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use anyhow::{Context, bail};

use super::job::run_job;
use super::params::params_from_args;
use crate::bench::analysis::setting_sweep::{
    CACHE_PRESET, CACHE_PRESET_WRITE_BYTES, DEFAULT_REPEATS, MAX_REPEATS, SweepKind, SweepResult,
    SweepStep,
};
use crate::bench::exec::run_input::RunEvent;
use crate::bench::exec::session::{self, RunRequest, TempPoll};
use crate::bench::plan::params::TestParams;
use crate::bench::plan::test_name::TestName;
use crate::changes::guard::RestoreGuard;
use crate::changes::{Changer, Journal};
use crate::cli::{DEFAULT_TEST, RunArgs};
use crate::flow::progress::{Eta, rate_text};
use crate::flow::setting_sweep;
use crate::flow::sweep_job::{
    StepOutcome, Sweep, SweepEnded, SweepJob, SweepMsg, outcome_of, values,
};
use crate::model::text::neutralize_controls;
use crate::model::{BlockDevice, Lifetime};
use crate::report::output::{output_width, write_stderr, write_stdout};
use crate::report::setting_sweep::{self as render, SweepEnd};
use crate::sys::direct::{self, PathKind};
use crate::sys::signals::{Catch, StopSignals};
use crate::sys::{DriveControl, LinuxDrives, SysRoot};

/// A test of the sweep with its parameters.
type SweptTest = (TestName, TestParams);

/// The tests of the sweep and each one's parameters: the one asked for, or for a cache sweep
/// without --test seed 000's pair (its seq-write transfers 1 GiB unless told how much).
fn tests_of(args: &RunArgs) -> anyhow::Result<(Vec<SweptTest>, Vec<String>)> {
    let base = params_from_args(args);
    if args.sweep_cache && args.test.is_none() {
        let bounded = base.io_size.is_some() || base.count.is_some() || base.time.is_some();
        let tests = CACHE_PRESET
            .iter()
            .map(|&t| {
                let mut p = base.clone();
                if t == TestName::SeqWrite && !bounded {
                    p.io_size = Some(CACHE_PRESET_WRITE_BYTES);
                }
                (t, p)
            })
            .collect();
        let write = if bounded {
            "seq-write (as long as the options say, instead of 1 GiB)"
        } else {
            "seq-write of 1 GiB"
        };
        let note = format!(
            "the write cache preset (seed 000): {write} and sync-latency, each with the cache \
             on and off"
        );
        return Ok((tests, vec![note]));
    }
    let test: TestName = args.test.as_deref().unwrap_or(DEFAULT_TEST).parse()?;
    Ok((vec![(test, base)], Vec::new()))
}

/// The disk a sweep of `target` changes: a block device's whole disk.
fn disk_of(drives: &dyn DriveControl, target: &Path) -> anyhow::Result<BlockDevice> {
    let shown = neutralize_controls(&target.display().to_string());
    let PathKind::BlockDevice { name, .. } =
        direct::identify(target).with_context(|| format!("cannot look at {shown}"))?
    else {
        bail!("a sweep changes a setting of a disk: {shown} is not a block device");
    };
    Ok(drives.resolve(&name)?.device)
}

/// A sweep changes a setting of one disk and compares that disk with itself: several targets
/// (or `--members`, `--one-by-one`) are refused before anything is read or switched, rather
/// than the first target swept and the others dropped. Sweeping several disks would need one
/// setting per disk switched together and a table per disk: run one sweep per disk instead.
fn refuse_several_targets(args: &RunArgs, kind: SweepKind) -> anyhow::Result<()> {
    let flag = match kind {
        SweepKind::Scheduler => "--sweep-sched",
        SweepKind::WriteCache => "--sweep-cache",
    };
    if !args.more_targets.is_empty() {
        let all: Vec<String> = std::iter::once(&args.target)
            .chain(&args.more_targets)
            .map(|p| neutralize_controls(&p.display().to_string()))
            .collect();
        bail!(
            "{flag} sweeps one disk, and {} targets were given ({}): run one sweep per disk, \
             one after the other (disktriage run {} {flag} ...); nothing was run or changed",
            all.len(),
            all.join(", "),
            all[0]
        );
    }
    if args.members {
        bail!("{flag} sweeps one disk: it does not go with --members; nothing was run or changed");
    }
    if args.one_by_one {
        bail!(
            "{flag} sweeps one disk: --one-by-one is for several targets; nothing was run or \
             changed"
        );
    }
    Ok(())
}

/// `disktriage run TARGET --sweep-sched [LIST] | --sweep-cache`.
pub fn run(
    root: &SysRoot,
    journal_dir: &Path,
    history_dir: &Path,
    args: &RunArgs,
) -> anyhow::Result<ExitCode> {
    let kind = if args.sweep_cache {
        SweepKind::WriteCache
    } else {
        SweepKind::Scheduler
    };
    refuse_several_targets(args, kind)?;
    let repeats = args.repeats.unwrap_or(DEFAULT_REPEATS);
    if !(1..=MAX_REPEATS).contains(&repeats) {
        bail!("--repeats takes 1 to {MAX_REPEATS}, not {repeats}");
    }
    let (tests, mut notes) = tests_of(args)?;
    let drives: Arc<dyn DriveControl> = Arc::new(LinuxDrives::new(root.clone()));
    let device = disk_of(drives.as_ref(), &args.target)?;
    let journal = Journal::open(journal_dir).with_context(|| {
        format!(
            "cannot open the change journal in {}",
            journal_dir.display()
        )
    })?;
    let changer = Changer::new(Arc::clone(&drives), journal, Lifetime::Session);
    // The claim lasts until the guard has put the setting back: a second sweep is refused
    // before it reads this one's temporary value as the value at start.
    changer.claim(&device, &setting_sweep::claim_label(kind, &device.name))?;
    let asked = args.sweep_sched.clone().unwrap_or_default();
    let (settings, more) = values(drives.as_ref(), &device, kind, &asked)?;
    notes.extend(more);
    let sweep = Sweep {
        kind,
        device,
        settings,
        tests: tests.iter().map(|(t, _)| *t).collect(),
        repeats,
        chosen: None,
    };

    let guard = RestoreGuard::new(changer, crate::report::restore::announce);
    guard.install_panic_hook();
    let signals = StopSignals::catch(Catch::Command)?;
    let stop = signals.flag();

    let run_one = {
        let (root, history_dir, stop) = (root.clone(), history_dir.to_path_buf(), stop.clone());
        let (target, confirmation) = (args.target.clone(), args.destroy_data.clone());
        // The signals' flag stops the run (the job's own is set by the same signals).
        Box::new(
            move |step: &SweepStep, _: &AtomicBool, say: &(dyn Fn(SweepMsg) + Sync)| {
                let (test, params) = &tests[step.test];
                let request = RunRequest {
                    target: target.clone(),
                    test: *test,
                    params: params.clone(),
                    confirmation: confirmation.clone(),
                    temperature: TempPoll::Off,
                    device: None,
                };
                run_step(&root, &history_dir, &request, &stop, say)
            },
        )
    };
    let job = SweepJob {
        sweep: sweep.clone(),
        guard: Ok(guard),
        run_one,
        // The report below says what was put back.
        put_back: None,
    };
    let SweepEnded { driven, restored } = run_job(job, &signals, &mut Follow::default())?;

    let result = SweepResult::build(
        kind,
        &sweep.device.name,
        &sweep.settings,
        repeats,
        &sweep.tests,
        &driven.samples,
    );
    let stopped_by = signals
        .signal()
        .map(|s| s.as_str().to_string())
        .or_else(|| driven.stopped.then(|| "a signal".to_string()));
    let mut end = SweepEnd {
        stopped_by,
        error: driven.error.clone(),
        restored: Vec::new(),
        notes,
    };
    match restored {
        Ok(outcomes) => end.restored = outcomes,
        Err(e) => {
            let e = format!(
                "could not put the {} back: {e}; run `disktriage restore`",
                sweep.kind.noun()
            );
            end.error = Some(end.error.map_or(e.clone(), |first| format!("{first}; {e}")));
        }
    }
    // Refused before anything ran (no --destroy-data, bad parameters): the error alone, as a
    // plain run says it.
    if driven.samples.is_empty()
        && !driven.stopped
        && let Some(e) = &end.error
    {
        bail!("{e}");
    }
    let text = if args.json {
        render::render_json(&result, &end)?
    } else {
        render::render_text(&result, &end, output_width())
    };
    write_stdout(&text)?;
    if let Some(code) = signals.exit_code() {
        return Ok(ExitCode::from(code));
    }
    if let Some(e) = &end.error {
        if args.json {
            write_stderr(&format!("disktriage: {}\n", neutralize_controls(e)));
        }
        return Ok(ExitCode::FAILURE);
    }
    if end.restored.iter().any(|o| o.failed()) {
        return Ok(ExitCode::FAILURE);
    }
    Ok(ExitCode::SUCCESS)
}

/// One run of the sweep, stopped when `stop` is set, telling its plan and its events.
fn run_step(
    root: &SysRoot,
    history_dir: &Path,
    request: &RunRequest,
    stop: &Arc<AtomicBool>,
    say: &(dyn Fn(SweepMsg) + Sync),
) -> StepOutcome {
    let session = match session::start_with_stop(root, request, Some(stop)) {
        Ok(s) => s,
        Err(_) if stop.load(Ordering::Relaxed) => return StepOutcome::Stopped,
        Err(e) => return StepOutcome::Failed(format!("{e:#}")),
    };
    say(SweepMsg::Started {
        plan: Box::new(session.plan.clone()),
        target: Box::new(session.target.clone()),
        notes: session.notes.clone(),
    });
    session.relay(stop, Duration::from_millis(100), |ev| {
        say(SweepMsg::Event(ev));
        true
    });
    match session.finish() {
        Ok(report) if report.outcome.stopped => StepOutcome::Stopped,
        Ok(report) => {
            // The history keeps each run, with the scheduler or cache state it ran under.
            super::history::record_run(root, history_dir, std::slice::from_ref(&report));
            outcome_of(request.test, &report)
        }
        Err(e) => StepOutcome::Failed(format!("{e:#}")),
    }
}

/// The progress line: "[sweep 3/12: bfq, repeat 1/3] seq-read  12.3 MB/s  456 IOPS  ETA
/// 0:25", cleared between runs. The first run's ETA counts the engine probe.
#[derive(Default)]
struct Follow {
    label: String,
    eta: Option<Eta>,
}

impl super::job::Follow<SweepMsg> for Follow {
    fn every(&self) -> Duration {
        Duration::from_millis(100)
    }

    fn hear(&mut self, msg: SweepMsg) -> Option<String> {
        match msg {
            SweepMsg::Step {
                done,
                total,
                value,
                repeat,
                repeats,
                test,
            } => {
                self.label =
                    format!("[sweep {done}/{total}: {value}, repeat {repeat}/{repeats}] {test}");
                self.eta = None;
                Some(String::new())
            }
            SweepMsg::Started { plan, .. } => {
                self.eta = Some(Eta::start(&plan));
                None
            }
            SweepMsg::Event(ev) => {
                let eta = self.eta.as_mut()?;
                eta.saw(&ev);
                let RunEvent::Point { point, .. } = ev else {
                    return None;
                };
                Some(format!(
                    "{}  {}{}",
                    self.label,
                    rate_text(point.rate(), point.iops()),
                    eta.text()
                ))
            }
            // The table after the sweep says the rest.
            _ => None,
        }
    }
}
