//! `disktriage run --sweep-sched` and `--sweep-cache`: the test under each value of the
//! disk's I/O scheduler or of the drive's write cache, repeats interleaved, and the table of
//! `bench::analysis::setting_sweep`. The steps, refusals and sentences are the state machine
//! `flow::setting_sweep`, which the TUI's sweep drives too; this command drives it in a loop.
//!
//! Every change goes through the journal (`Changer`, session lifetime) behind a
//! `RestoreGuard`: the value found at start is put back at the end, after an error, and after
//! Ctrl-C, SIGTERM or SIGHUP (the signal stops the run in progress, the sweep ends there,
//! the setting is put back and the table of what completed is printed; the exit status is
//! 128 + the signal), and on a panic. After a SIGKILL the journal still holds the original
//! for `disktriage restore` and for the next start of the screen.

use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use anyhow::{Context, bail};

use super::params::params_from_args;
use crate::bench::analysis::setting_sweep::{
    self as sweep, CACHE_PRESET, CACHE_PRESET_WRITE_BYTES, DEFAULT_REPEATS, MAX_REPEATS, SweepKind,
    SweepResult, SweepSample, SweepStep,
};
use crate::bench::exec::run_input::RunEvent;
use crate::bench::exec::session::{self, RunRequest, TempPoll};
use crate::bench::plan::metric::Metric;
use crate::bench::plan::params::TestParams;
use crate::bench::plan::test_name::TestName;
use crate::changes::guard::RestoreGuard;
use crate::changes::{Changer, Journal};
use crate::cli::{DEFAULT_TEST, RunArgs};
use crate::drive_state;
use crate::flow::progress::{Eta, ProgressLine, rate_text};
use crate::flow::setting_sweep::{self, Next, RunEnd, SettingSweep};
use crate::model::text::neutralize_controls;
use crate::model::{BlockDevice, Lifetime};
use crate::report::output::{output_width, write_stderr, write_stdout};
use crate::report::setting_sweep::{self as render, SweepEnd};
use crate::sys::direct::{self, PathKind};
use crate::sys::signals::{Catch, StopSignals};
use crate::sys::{DriveControl, LinuxDrives, SysRoot};

/// What a sweep goes through.
#[derive(Debug, Clone)]
pub struct Sweep {
    pub kind: SweepKind,
    /// The disk whose setting changes.
    pub device: BlockDevice,
    /// The values, the one found at start first.
    pub settings: Vec<String>,
    pub tests: Vec<TestName>,
    pub repeats: u32,
}

/// What one run of a sweep came to.
#[derive(Debug, Clone, PartialEq)]
pub enum StepOutcome {
    /// The run's figure (`None`: too few I/Os for one).
    Figure(Option<f64>),
    /// Stopped by a signal: the sweep ends.
    Stopped,
    /// Refused or failed: the sweep ends with this error.
    Failed(String),
}

impl From<StepOutcome> for RunEnd {
    fn from(outcome: StepOutcome) -> RunEnd {
        match outcome {
            StepOutcome::Figure(value) => RunEnd::figure(value),
            StepOutcome::Stopped => RunEnd::stopped(),
            StepOutcome::Failed(e) => RunEnd::failed(e),
        }
    }
}

/// The runs a sweep made.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Driven {
    pub samples: Vec<SweepSample>,
    pub error: Option<String>,
    pub stopped: bool,
}

/// Sets one value of the sweep through the journal and checks the device took it.
pub fn apply(changer: &Changer, sweep: &Sweep, value: &str) -> anyhow::Result<()> {
    let dev = &sweep.device;
    match sweep.kind {
        SweepKind::Scheduler => {
            let change = changer.set_scheduler(dev, value, false).with_context(|| {
                format!("cannot switch the scheduler of {} to {value}", dev.name)
            })?;
            if !change.took_effect() {
                bail!(
                    "asked {} for scheduler {value}, it reports {}",
                    dev.name,
                    change.after.active.as_deref().unwrap_or("none active")
                );
            }
        }
        SweepKind::WriteCache => {
            let on = value == crate::model::cache::on_off(true);
            let change = changer
                .set_write_cache(dev, on, false)
                .with_context(|| format!("cannot turn the write cache of {} {value}", dev.name))?;
            if !change.took_effect() {
                bail!(
                    "asked {} for write cache {value}, the drive reports {}",
                    dev.name,
                    crate::model::cache::cache_word(change.after.enabled)
                );
            }
        }
    }
    Ok(())
}

/// Makes the sweep's runs in `sweep::order` as the setting sweep's state machine says,
/// setting each value through the guard's changer before its runs. Ends early when `stop` is
/// set (seen before each step), a run stops or fails, or a value cannot be set. Does not
/// restore: the caller's guard does (through the journal, whatever ended the sweep). The
/// device's settings are claimed by the caller, before it read the values.
pub fn drive(
    sweep: &Sweep,
    guard: &RestoreGuard,
    stop: &AtomicBool,
    mut run_one: impl FnMut(&SweepStep) -> StepOutcome,
) -> Driven {
    let mut machine = SettingSweep::new(
        sweep.kind,
        sweep.device.name.clone(),
        sweep.settings.clone(),
        sweep.tests.clone(),
        sweep.repeats,
    );
    let mut next = machine.claimed(Ok(()));
    // A step's run follows its switch without a look at `stop` in between: the run itself
    // is stopped by it.
    let mut switched = false;
    loop {
        next = match next {
            Next::Switch(_) | Next::Run(_) if !switched && stop.load(Ordering::Relaxed) => {
                machine.stop_now();
                break;
            }
            Next::Switch(i) => {
                switched = true;
                let set = apply(&guard.changer(), sweep, &sweep.settings[i]);
                machine.switched(set.map_err(|e| format!("{e:#}")))
            }
            Next::Run(step) => {
                switched = false;
                machine.ran(run_one(&step).into())
            }
            Next::PutBack | Next::Done | Next::Refused | Next::Wait => break,
        };
    }
    Driven {
        samples: machine.samples,
        error: machine.error,
        stopped: machine.stopping,
    }
}

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

/// The values a sweep of `dev` goes through (the one found at start first) and notes for
/// the admin; or why this device cannot be swept (a loop device has no drive cache, a
/// bio-based device no scheduler).
pub fn values(
    drives: &dyn DriveControl,
    dev: &BlockDevice,
    kind: SweepKind,
    asked: &[String],
) -> anyhow::Result<(Vec<String>, Vec<String>)> {
    match kind {
        SweepKind::Scheduler => {
            let set = drives
                .scheduler(dev)
                .with_context(|| setting_sweep::cannot_sweep(kind, &dev.name))?;
            setting_sweep::scheduler_values(&dev.name, &set, asked).map_err(anyhow::Error::msg)
        }
        SweepKind::WriteCache => {
            let status = drive_state::cache_status(drives, dev).map_err(|e| e.to_string());
            let settings =
                setting_sweep::cache_values(&dev.name, status.as_ref().map_err(Clone::clone))
                    .map_err(anyhow::Error::msg)?;
            Ok((settings, Vec::new()))
        }
    }
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
    // The disk's settings are this sweep's until it ends (the claim goes with the changer,
    // after the guard put the setting back): a second sweep of the disk is refused before it
    // reads the value at start, which would be this one's temporary value.
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
    };

    let guard = RestoreGuard::new(changer, crate::report::restore::announce);
    guard.install_panic_hook();
    // Ctrl-C, SIGTERM and SIGHUP stop the run in progress and end the sweep; the setting is
    // put back below, as after any other end. A SIGHUP ignored at start stays ignored.
    let signals = StopSignals::catch(Catch::Command)?;
    let stop = signals.flag();

    let progress = std::io::IsTerminal::is_terminal(&std::io::stderr());
    let total = sweep.settings.len() * sweep.repeats as usize * sweep.tests.len();
    let mut done = 0;
    let driven = drive(&sweep, &guard, stop, |step| {
        done += 1;
        let (test, params) = &tests[step.test];
        let request = RunRequest {
            target: args.target.clone(),
            test: *test,
            params: params.clone(),
            confirmation: args.destroy_data.clone(),
            temperature: TempPoll::Off,
            device: None,
        };
        let label = format!(
            "[sweep {done}/{total}: {}, repeat {}/{}] {test}",
            sweep::label(sweep.kind, &sweep.settings[step.setting]),
            step.repeat + 1,
            sweep.repeats
        );
        run_step(
            root,
            history_dir,
            &request,
            stop,
            progress.then_some(label.as_str()),
        )
    });
    let restored = guard.restore_now();

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
    // Refused before anything ran (a write without --destroy-data, bad parameters): the
    // error alone, as a plain run says it.
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

/// One run of the sweep, stopped when `stop` is set, with a progress line on stderr when
/// `progress` is given.
fn run_step(
    root: &SysRoot,
    history_dir: &Path,
    request: &RunRequest,
    stop: &Arc<AtomicBool>,
    progress: Option<&str>,
) -> StepOutcome {
    let session = match session::start_with_stop(root, request, Some(stop)) {
        Ok(s) => s,
        Err(e) if stop.load(Ordering::Relaxed) => {
            let _ = e;
            return StepOutcome::Stopped;
        }
        Err(e) => return StepOutcome::Failed(format!("{e:#}")),
    };
    let line = ProgressLine::new(progress.is_some());
    let mut eta = Eta::start(&session.plan);
    session.relay(stop, Duration::from_millis(100), |ev| {
        // The first run of the sweep probes the engines (the others reuse its choice): its
        // ETA counts the probe.
        eta.saw(&ev);
        if let (RunEvent::Point { point, .. }, Some(label)) = (ev, progress) {
            line.show(&format!(
                "{label}  {}{}",
                rate_text(point.rate(), point.iops()),
                eta.text()
            ));
        }
        true
    });
    line.clear();
    let metric = Metric::for_test(request.test);
    match session.finish() {
        Ok(report) if report.outcome.stopped => StepOutcome::Stopped,
        Ok(report) => {
            // Each run of a sweep is a finished run like any other: the history keeps it,
            // with the scheduler or cache state it ran under.
            super::history::record_run(root, history_dir, std::slice::from_ref(&report));
            match report.error() {
                Some(e) => StepOutcome::Failed(setting_sweep::run_failed(request.test, &e)),
                None => StepOutcome::Figure(metric.of(&report)),
            }
        }
        Err(e) => StepOutcome::Failed(format!("{e:#}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Transport;
    use crate::sys::{FakeDevice, FakeDrives};

    fn guard(drives: &Arc<FakeDrives>, dir: &Path) -> RestoreGuard {
        let journal = Journal::open(dir).unwrap();
        let drives: Arc<dyn DriveControl> = Arc::clone(drives) as Arc<dyn DriveControl>;
        RestoreGuard::new(Changer::new(drives, journal, Lifetime::Session), |_| {})
    }

    fn cache_sweep(drives: &FakeDrives, tests: Vec<TestName>, repeats: u32) -> Sweep {
        let device = drives.device("sda").unwrap();
        let cache = drives.drive_cache(&device).unwrap();
        Sweep {
            kind: SweepKind::WriteCache,
            device,
            settings: sweep::cache_values(&cache).unwrap(),
            tests,
            repeats,
        }
    }

    fn cache_on(drives: &FakeDrives) -> Option<bool> {
        let dev = drives.device("sda").unwrap();
        drives.drive_cache(&dev).unwrap().enabled
    }

    #[test]
    fn a_cache_sweep_runs_each_test_with_the_cache_on_and_off_and_puts_it_back() {
        let dir = tempfile::tempdir().unwrap();
        let drives = Arc::new(FakeDrives::new().with(FakeDevice::new("sda", Transport::Sata)));
        let g = guard(&drives, dir.path());
        let sweep = cache_sweep(&drives, CACHE_PRESET.to_vec(), 2);
        assert_eq!(sweep.settings, ["on", "off"]);
        let mut seen = Vec::new();
        let stop = AtomicBool::new(false);
        let driven = drive(&sweep, &g, &stop, |step| {
            // What the drive has while the run is made.
            let on = cache_on(&drives) == Some(true);
            seen.push((sweep.tests[step.test], on));
            // The seed's figures: 33.1 MB/s with the cache, 8.7 without; 0.36 ms per write
            // with it, 11.18 without.
            StepOutcome::Figure(Some(match (sweep.tests[step.test], on) {
                (TestName::SeqWrite, true) => 33.1 + f64::from(step.repeat) * 0.1,
                (TestName::SeqWrite, false) => 8.7 + f64::from(step.repeat) * 0.1,
                (_, true) => 0.36,
                (_, false) => 11.18,
            }))
        });
        use TestName::{SeqWrite, SyncLatency};
        assert_eq!(
            seen,
            [
                (SeqWrite, true),
                (SyncLatency, true),
                (SeqWrite, false),
                (SyncLatency, false),
                (SeqWrite, true),
                (SyncLatency, true),
                (SeqWrite, false),
                (SyncLatency, false),
            ]
        );
        // One switch per value per repeat: off, on, off (and the restore).
        assert_eq!(
            drives.set_calls(),
            [
                "set_drive_cache sda off",
                "set_drive_cache sda on",
                "set_drive_cache sda off"
            ]
        );
        assert!(driven.error.is_none() && !driven.stopped);
        // The cache is off now, and the journal has the original.
        assert_eq!(cache_on(&drives), Some(false));
        let restored = g.restore_now().unwrap();
        assert_eq!(restored.len(), 1);
        assert_eq!(cache_on(&drives), Some(true));

        let r = SweepResult::build(
            sweep.kind,
            "sda",
            &sweep.settings,
            2,
            &sweep.tests,
            &driven.samples,
        );
        assert!(r.complete());
        // The write is faster with the cache on (the start): no state beats it.
        assert_eq!(r.tests[0].verdict.winner(), None);
        assert!(r.tests[0].rows[1].delta.as_ref().unwrap().pct < -70.0);
        assert_eq!(r.tests[0].rows[1].beyond_noise(), "yes, worse");
        assert_eq!(r.tests[1].metric, Metric::MeanLatencyMs);
    }

    #[test]
    fn a_cache_off_at_start_is_the_base_and_on_can_win() {
        let dir = tempfile::tempdir().unwrap();
        let drives = Arc::new(FakeDrives::new().with(FakeDevice::new("sda", Transport::Sata)));
        let dev = drives.device("sda").unwrap();
        drives.set_drive_cache(&dev, false).unwrap();
        let g = guard(&drives, dir.path());
        let sweep = cache_sweep(&drives, vec![TestName::SyncLatency], 3);
        assert_eq!(sweep.settings, ["off", "on"]);
        let stop = AtomicBool::new(false);
        let driven = drive(&sweep, &g, &stop, |step| {
            let on = cache_on(&drives) == Some(true);
            let v = if on { 0.36 } else { 11.18 } + f64::from(step.repeat) * 0.01;
            StepOutcome::Figure(Some(v))
        });
        g.restore_now().unwrap();
        assert_eq!(cache_on(&drives), Some(false), "back off, as found");
        let r = SweepResult::build(
            sweep.kind,
            "sda",
            &sweep.settings,
            3,
            &sweep.tests,
            &driven.samples,
        );
        assert_eq!(r.tests[0].verdict.winner(), Some("on"));
        assert!(
            r.tests[0]
                .verdict
                .describe(r.kind, r.tests[0].metric, "off")
                .starts_with("winner: cache on, -96.")
        );
    }

    #[test]
    fn a_failed_run_or_switch_ends_the_sweep_and_the_original_comes_back() {
        let dir = tempfile::tempdir().unwrap();
        let drives = Arc::new(FakeDrives::new().with(FakeDevice::new("sda", Transport::Sata)));
        let g = guard(&drives, dir.path());
        let sweep = cache_sweep(&drives, vec![TestName::SeqWrite], 3);
        let stop = AtomicBool::new(false);
        let mut runs = 0;
        let driven = drive(&sweep, &g, &stop, |_| {
            runs += 1;
            if runs == 3 {
                StepOutcome::Failed("I/O error".into())
            } else {
                StepOutcome::Figure(Some(1.0))
            }
        });
        assert_eq!(driven.samples.len(), 2);
        assert_eq!(driven.error.as_deref(), Some("I/O error"));
        // Failed under "on" (the third run): the cache had gone off and back on.
        g.restore_now().unwrap();
        assert_eq!(cache_on(&drives), Some(true));

        // The drive refuses the switch: the sweep ends with why, after the runs at start.
        drives.update("sda", |d| {
            d.fail_next_set = Some(crate::sys::DriveError::Invalid("refused".into()))
        });
        let driven = drive(&sweep, &g, &stop, |_| StepOutcome::Figure(Some(1.0)));
        assert_eq!(driven.samples.len(), 1);
        let e = driven.error.unwrap();
        assert!(e.contains("cannot turn the write cache of sda off"), "{e}");
        assert_eq!(cache_on(&drives), Some(true));

        // A drive that acknowledges and ignores the switch is caught.
        drives.update("sda", |d| d.cache_ignores_set = true);
        let driven = drive(&sweep, &g, &stop, |_| StepOutcome::Figure(Some(1.0)));
        let e = driven.error.unwrap();
        assert!(e.contains("the drive reports on"), "{e}");
    }

    #[test]
    fn a_stop_ends_the_sweep_before_the_next_run() {
        let dir = tempfile::tempdir().unwrap();
        let drives = Arc::new(FakeDrives::new().with(FakeDevice::new("sda", Transport::Sata)));
        let g = guard(&drives, dir.path());
        let sweep = Sweep {
            kind: SweepKind::Scheduler,
            device: drives.device("sda").unwrap(),
            settings: vec!["mq-deadline".into(), "none".into(), "bfq".into()],
            tests: vec![TestName::SeqRead],
            repeats: 3,
        };
        let stop = AtomicBool::new(false);
        let mut runs = 0;
        let driven = drive(&sweep, &g, &stop, |_| {
            runs += 1;
            if runs == 2 {
                stop.store(true, Ordering::Relaxed);
                return StepOutcome::Stopped;
            }
            StepOutcome::Figure(Some(1.0))
        });
        assert!(driven.stopped);
        assert_eq!(driven.samples.len(), 1);
        assert_eq!(drives.set_calls(), ["set_scheduler sda none"]);
        g.restore_now().unwrap();
        assert_eq!(
            drives.set_calls(),
            ["set_scheduler sda none", "set_scheduler sda mq-deadline"]
        );
    }

    #[test]
    fn devices_without_the_setting_are_refused_with_the_reason() {
        let drives = FakeDrives::new()
            .with(FakeDevice::new("loop0", Transport::Loop).without_cache_control())
            .with(FakeDevice::new("sda", Transport::Sata));
        let loop0 = drives.device("loop0").unwrap();
        let e = values(&drives, &loop0, SweepKind::WriteCache, &[]).unwrap_err();
        assert_eq!(
            format!("{e:#}"),
            "cannot sweep the write cache of loop0: not supported on loop"
        );
        drives.update("sda", |d| {
            if let Ok(c) = &mut d.cache {
                c.enabled = None;
            }
        });
        let sda = drives.device("sda").unwrap();
        let e = values(&drives, &sda, SweepKind::WriteCache, &[]).unwrap_err();
        assert_eq!(
            format!("{e:#}"),
            "cannot sweep the write cache of sda: the drive reports no volatile write cache"
        );
        // Schedulers: all offered, the active one first; a name not offered is refused.
        let (v, notes) = values(&drives, &sda, SweepKind::Scheduler, &[]).unwrap();
        assert_eq!(v, ["mq-deadline", "none", "kyber", "bfq"]);
        assert!(notes.is_empty());
        let (v, notes) = values(&drives, &sda, SweepKind::Scheduler, &["bfq".into()]).unwrap();
        assert_eq!(v, ["mq-deadline", "bfq"]);
        assert!(notes[0].starts_with("mq-deadline, the scheduler at start"));
        let e = values(&drives, &sda, SweepKind::Scheduler, &["cfq".into()]).unwrap_err();
        assert!(
            format!("{e:#}").contains("offers no I/O scheduler \"cfq\""),
            "{e:#}"
        );
    }
}
