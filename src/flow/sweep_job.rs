//! The setting sweep as a job (`SweepJob`), for both faces: on its thread it drives the state
//! machine (`flow::setting_sweep`), switching each value through the journal's `Changer`
//! behind the `RestoreGuard` it is given, running and measuring each test, and putting the
//! value at start back whatever ended the sweep. A stop is checked before each step; the run
//! in progress is stopped by the same flag.
//!
//! `disktriage run --sweep-*` claims the disk and makes the job itself; the screen sends a
//! `SweepOrder`, which claims the disk over the session's journal when the job is made.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use anyhow::{Context, bail};

use super::job::{Job, JobContext, JobEnv, Order, PutBack};
use super::setting_sweep::{self, Next, RunEnd, SettingSweep, SweepStage};
use crate::bench::analysis::setting_sweep::{self as sweep, SweepKind, SweepSample, SweepStep};
use crate::bench::exec::run_input::RunEvent;
use crate::bench::exec::session::RunRequest;
use crate::bench::plan::Plan;
use crate::bench::plan::metric::Metric;
use crate::bench::plan::test_name::TestName;
use crate::bench::results::outcome::{RunReport, TargetInfo};
use crate::changes::guard::RestoreGuard;
use crate::changes::{ChangeError, Changer, Journal, RestoreOutcome};
use crate::drive_state;
use crate::model::{BlockDevice, ChosenDevice, Lifetime, SettingKind};
use crate::sys::DriveControl;

/// The sweep job's name (`Cmd::StopJob` stops it by it).
pub const NAME: &str = "sweep";

/// Makes one run of the sweep (its value is set), stopped by the flag, telling what it says
/// through its last argument: `disktriage run`'s test run or the screen's, a stand-in in tests.
pub type StepRunner =
    Box<dyn FnMut(&SweepStep, &AtomicBool, &(dyn Fn(SweepMsg) + Sync)) -> StepOutcome + Send>;

/// Makes one run of `request` for the screen's sweep, stopped by the flag, telling its start,
/// events and report: the TUI gives every job its own (`JobEnv::stand_in`), tests theirs.
pub type RunOne =
    Arc<dyn Fn(&RunRequest, &AtomicBool, &(dyn Fn(SweepMsg) + Sync)) -> StepOutcome + Send + Sync>;

/// The sweep of one disk, ready to run: its values read and its settings claimed (or why
/// they could not be: the job then says so and does nothing).
pub struct SweepJob {
    pub sweep: Sweep,
    /// Over a changer of its own: every switch goes through it, and it puts the value at
    /// start back at the end.
    pub guard: Result<RestoreGuard, String>,
    pub run_one: StepRunner,
    /// Where what it put back is added as well (the TUI's: said on the way out).
    pub put_back: Option<PutBack>,
}

/// What the sweep says as it goes.
#[derive(Debug, Clone)]
pub enum SweepMsg {
    /// Run `done` of `total` begins: `test` under `value` (its label), repeat `repeat` of
    /// `repeats` (from 1).
    Step {
        done: usize,
        total: usize,
        value: String,
        repeat: u32,
        repeats: u32,
        test: TestName,
    },
    /// The run started with this plan (its ETA) on this target.
    Started {
        plan: Box<Plan>,
        target: Box<TargetInfo>,
        notes: Vec<String>,
    },
    /// The bytes of a new test file written so far, before the run starts.
    LaidOut(u64),
    /// What the run says as it goes.
    Event(RunEvent),
    /// The run's report (stopped, failed or measured).
    Finished(Box<RunReport>),
    /// The run was refused before it started, or its report could not be made: why.
    RunFailed(String),
    /// The machine after each move (claim, switch, run, put-back); `Done` is the end.
    State(Box<SettingSweep>),
    /// Nothing ran or was switched: the claim was refused, or the thread did not start.
    Refused(String),
}

/// How the sweep ended: its runs, and what was put back (or why not).
pub struct SweepEnded {
    pub driven: Driven,
    pub restored: Result<Vec<RestoreOutcome>, ChangeError>,
}

impl Job for SweepJob {
    type Msg = SweepMsg;
    type Output = SweepEnded;

    fn name(&self) -> &'static str {
        NAME
    }

    fn cannot_start(&self, error: &std::io::Error) -> SweepMsg {
        SweepMsg::Refused(format!("cannot start the sweep: {error}"))
    }

    /// The run in progress stops within a moment; a metadata test first deletes its files,
    /// which on a slow disk takes minutes. The put-back follows.
    fn stop_wait(&self) -> Duration {
        let in_directory = self
            .sweep
            .tests
            .iter()
            .any(|t| t.info().family.runs_in_directory());
        Duration::from_secs(if in_directory { 300 } else { 10 })
    }

    fn run(self, ctx: &JobContext<'_, SweepMsg>) -> SweepEnded {
        let SweepJob {
            sweep,
            guard,
            mut run_one,
            put_back,
        } = self;
        let guard = match guard {
            Ok(g) => g,
            Err(e) => {
                ctx.send(SweepMsg::Refused(e.clone()));
                return SweepEnded {
                    driven: Driven {
                        error: Some(e),
                        ..Driven::default()
                    },
                    restored: Ok(Vec::new()),
                };
            }
        };
        let total = sweep.settings.len() * sweep.repeats as usize * sweep.tests.len();
        let mut done = 0;
        let say = |m: SweepMsg| {
            ctx.send(m);
        };
        let stop = ctx.stop_flag();
        let mut tell = |m: &SettingSweep| say(SweepMsg::State(Box::new(m.clone())));
        let (driven, mut machine) = drive_telling(&sweep, &guard, stop, &mut tell, |step| {
            done += 1;
            say(SweepMsg::Step {
                done,
                total,
                value: sweep::label(sweep.kind, &sweep.settings[step.setting]),
                repeat: step.repeat + 1,
                repeats: sweep.repeats,
                test: sweep.tests[step.test],
            });
            run_one(step, stop, &say)
        });
        let restored = guard.restore_now();
        if let (Some(log), Ok(outcomes)) = (put_back, &restored) {
            log.lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .extend(outcomes.iter().cloned());
        }
        let failed = match &restored {
            Ok(outcomes) => outcomes
                .iter()
                .find(|o| o.failed())
                .map(|o| format!("{:?}", o.result)),
            Err(e) => Some(e.to_string()),
        };
        if machine.stage == SweepStage::Restoring {
            machine.switched(failed.map_or(Ok(()), Err));
        } else if let Some(e) = failed {
            machine.restore_error = Some(format!("{e}; it is put back on exit"));
        }
        tell(&machine);
        SweepEnded { driven, restored }
    }
}

/// A sweep as the screen asks for it: `request`'s test on `device` under each of `settings`
/// (the value at start first), `repeats` times, interleaved.
#[derive(Debug, Clone, PartialEq)]
pub struct SweepOrder {
    pub kind: SweepKind,
    pub device: String,
    pub settings: Vec<String>,
    /// The test as it runs under every value (with its confirmation, once given, and the
    /// device as the admin chose it).
    pub request: RunRequest,
    pub repeats: u32,
}

impl Order for SweepOrder {
    type Job = SweepJob;

    /// The job, the device's settings claimed over the session's journal; refused when another
    /// sweep holds it, the session has no journal, or the name holds another device now.
    fn job(self, env: &JobEnv) -> SweepJob {
        let chosen = self.request.device.clone();
        let found = env
            .drives
            .chosen_device(&self.device, chosen.as_ref())
            .map_err(|e| e.to_string());
        let guard = found
            .clone()
            .and_then(|dev| claimed_guard(env, &dev, self.kind));
        let device = found
            .unwrap_or_else(|_| BlockDevice::unknown(&self.device, self.request.target.clone()));
        let run_one = env.stand_in::<RunOne>();
        let request = self.request;
        SweepJob {
            sweep: Sweep {
                kind: self.kind,
                device,
                settings: self.settings,
                tests: vec![request.test],
                repeats: self.repeats,
                chosen,
            },
            guard,
            put_back: Some(Arc::clone(&env.put_back)),
            run_one: Box::new(move |_, stop, say| match &run_one {
                Some(run) => run(&request, stop, say),
                None => StepOutcome::Failed("this session cannot run tests".into()),
            }),
        }
    }

    fn stamp(&mut self, chosen: &dyn Fn(&str) -> Option<ChosenDevice>) {
        if self.request.device.is_none() {
            self.request.device = chosen(&self.device);
        }
    }
}

/// The screen's sweep's changer, the device claimed, behind its guard. It restores only the
/// swept setting: the session's own switches share the journal and are the session's.
fn claimed_guard(env: &JobEnv, dev: &BlockDevice, kind: SweepKind) -> Result<RestoreGuard, String> {
    let Some(dir) = &env.journal_dir else {
        return Err(
            "the session has no change journal, so the setting could not be put back: \
             nothing was changed"
                .into(),
        );
    };
    let journal = Journal::open(dir)
        .map_err(|e| format!("cannot open the change journal in {}: {e}", dir.display()))?;
    let setting = match kind {
        SweepKind::Scheduler => SettingKind::Scheduler,
        SweepKind::WriteCache => SettingKind::DriveWriteCache,
    };
    let changer =
        Changer::new(Arc::clone(&env.drives), journal, Lifetime::Session).only(&dev.name, setting);
    changer
        .claim(dev, &setting_sweep::claim_label(kind, &dev.name))
        .map_err(|e| e.to_string())?;
    // The screen says what was put back: nothing is printed under it.
    Ok(RestoreGuard::new(changer, |_| {}))
}

/// What a finished run of `test` came to for the sweep: its figure, a stop, or the failure
/// that ends the sweep.
pub fn outcome_of(test: TestName, report: &RunReport) -> StepOutcome {
    if report.outcome.stopped {
        return StepOutcome::Stopped;
    }
    match report.error() {
        Some(e) => StepOutcome::Failed(setting_sweep::run_failed(test, &e)),
        None => StepOutcome::Figure(Metric::for_test(test).of(report)),
    }
}

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
    /// The device as the admin chose it (none: as found now): every switch is refused on
    /// another device that takes its name meanwhile.
    pub chosen: Option<ChosenDevice>,
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
    let dev = &changer
        .drives()
        .chosen_device(&sweep.device.name, sweep.chosen.as_ref())
        .with_context(|| format!("cannot switch {}", sweep.device.name))?;
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

/// Makes the sweep's runs as the state machine says, each value set through the guard's
/// changer first. Ends early on `stop`, a run that stops or fails, or a value not set. The
/// caller claims the device before and its guard restores after.
pub fn drive(
    sweep: &Sweep,
    guard: &RestoreGuard,
    stop: &AtomicBool,
    run_one: impl FnMut(&SweepStep) -> StepOutcome,
) -> Driven {
    drive_telling(sweep, guard, stop, &mut |_| {}, run_one).0
}

/// `drive`, telling `tell` the machine after each move; hands the machine back too (the
/// put-back is the caller's).
pub fn drive_telling(
    sweep: &Sweep,
    guard: &RestoreGuard,
    stop: &AtomicBool,
    tell: &mut dyn FnMut(&SettingSweep),
    mut run_one: impl FnMut(&SweepStep) -> StepOutcome,
) -> (Driven, SettingSweep) {
    let mut machine = SettingSweep::new(
        sweep.kind,
        sweep.device.name.clone(),
        sweep.settings.clone(),
        sweep.tests.clone(),
        sweep.repeats,
    );
    let mut next = machine.claimed(Ok(()));
    tell(&machine);
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
        tell(&machine);
    }
    let driven = Driven {
        samples: machine.samples.clone(),
        error: machine.error.clone(),
        stopped: machine.stopping,
    };
    (driven, machine)
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::analysis::setting_sweep::{CACHE_PRESET, SweepResult};
    use crate::bench::plan::metric::Metric;
    use crate::changes::Journal;
    use crate::model::{Lifetime, Transport};
    use crate::sys::{FakeDevice, FakeDrives};
    use std::path::Path;
    use std::sync::Arc;

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
            chosen: None,
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
            chosen: None,
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

    /// The screen's sweep, made from its order as the TUI makes it: another disk that takes
    /// the name mid-sweep (attacks.md 8) is never switched; the sweep ends with why, and
    /// nothing is switched back on it.
    #[test]
    fn a_disk_replaced_under_its_name_mid_sweep_is_not_switched() {
        use crate::bench::exec::session::TempPoll;
        use crate::flow::job::{JobEnv, Order};
        let dir = tempfile::tempdir().unwrap();
        let drives = Arc::new(FakeDrives::new().with(FakeDevice::new("sda", Transport::Sata)));
        let chosen = drives.device("sda").unwrap().chosen();
        let swapper = Arc::clone(&drives);
        let run: RunOne = Arc::new(move |_, _, _| {
            // Another disk takes the name during the first run.
            swapper.update("sda", |d| {
                d.device.serial = Some("OTHER".into());
                d.device.diskseq = Some(99);
            });
            StepOutcome::Figure(Some(1.0))
        });
        let control: Arc<dyn DriveControl> = Arc::clone(&drives) as Arc<dyn DriveControl>;
        let mut env = JobEnv::new(
            crate::sys::SysRoot::new("/nonexistent"),
            control,
            std::time::Duration::from_millis(250),
        )
        .with_stand_in(run);
        env.journal_dir = Some(dir.path().to_path_buf());
        let order = SweepOrder {
            kind: SweepKind::Scheduler,
            device: "sda".into(),
            settings: vec!["mq-deadline".into(), "bfq".into()],
            request: RunRequest {
                target: "/dev/sda".into(),
                test: TestName::SeqRead,
                params: Default::default(),
                confirmation: None,
                temperature: TempPoll::Off,
                device: Some(chosen),
            },
            repeats: 2,
        };
        let stop = AtomicBool::new(false);
        let send = |_: SweepMsg| true;
        let ended = order
            .job(&env)
            .run(&JobContext::new(&stop, &send, std::time::Duration::ZERO));
        assert!(drives.set_calls().is_empty(), "{:?}", drives.set_calls());
        let e = ended.driven.error.unwrap();
        assert!(e.starts_with("cannot switch sda"), "{e}");
        assert_eq!(ended.driven.samples.len(), 1);
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
