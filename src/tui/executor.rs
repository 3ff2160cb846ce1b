//! Carries out what `App::update` asks (`Cmd`) and answers with messages (`Msg`): journaled
//! setting changes through the session's `Changer`, drive reads through `DriveControl` (off
//! the UI thread), exports; every long-running task (a run, a scan, a triage, a flush check)
//! is a job started and stopped by the one runner (`tui::jobs`). Tested on `FakeDrives`.

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::mpsc::Sender;
use std::sync::{Arc, OnceLock};

use super::drive_reads;
use super::jobs::{INTERVAL, Jobs};
pub use super::runs::{RunChecker, RunStarter};
use super::runs::{RunJob, SeveralJob};
use crate::bench::exec::session::{self, RunRequest};
use crate::bench::results::outcome::RunReport;
use crate::changes::guard::SharedChanger;
use crate::changes::{Changer, JournalNote, RestoreScope};
use crate::event::{Cmd, Msg, TaskError};
use crate::flow::job::{JobEnv, PutBack};
use crate::history::{self, History};
use crate::persist::{self, PersistOptions};
use crate::sys::{DriveControl, SysRoot};

/// Which journal entries this session made, by device and setting, so "keep" can drop them.
#[derive(Debug, Clone, PartialEq, Eq)]
struct JournalId {
    device: String,
    scheduler: bool,
    id: u64,
}

/// Carries out `Cmd`s: journaled setting changes, drive reads, runs, exports.
pub struct Executor {
    root: SysRoot,
    tx: Sender<Msg>,
    drives: Arc<dyn DriveControl>,
    /// The session's journaled changer, or why there is none.
    changer: Result<SharedChanger, String>,
    start: RunStarter,
    check: RunChecker,
    journal_ids: Vec<JournalId>,
    /// The runs, scans, triages and flush checks under way.
    jobs: Jobs,
    /// Where finished runs are recorded (none: not recorded, as in most tests).
    history: Option<History>,
    /// The records this session added, not offered back as past runs.
    recorded: HashSet<String>,
    /// The system root udev rules are written under (`/`).
    persist_root: PathBuf,
    /// Stand-ins for a job's parts (tests: what gathers a triage's facts, what runs a flush
    /// check), given to every job's `JobEnv`.
    stand_ins: Vec<Box<dyn Fn(JobEnv) -> JobEnv + Send>>,
    /// What the jobs put back of the settings they switched.
    put_back: PutBack,
}

/// How many of a disk's past runs Results shows (the newest).
pub const PAST_RUNS: usize = 8;

fn locked(c: &SharedChanger) -> std::sync::MutexGuard<'_, Changer> {
    c.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn locked_log(log: &PutBack) -> std::sync::MutexGuard<'_, Vec<crate::changes::RestoreOutcome>> {
    log.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Executor {
    /// An executor on the system under `root`: drive commands through `drives`, settings
    /// through `changer` (or why not), runs through `start`, every result on `tx`.
    pub fn new(
        root: SysRoot,
        tx: Sender<Msg>,
        drives: Arc<dyn DriveControl>,
        changer: Result<SharedChanger, String>,
        start: RunStarter,
    ) -> Self {
        Executor {
            root,
            jobs: Jobs::new(tx.clone()),
            tx,
            drives,
            changer,
            start,
            check: Arc::new(|root, request| session::check(root, request).map(|_| ())),
            journal_ids: Vec::new(),
            history: None,
            recorded: HashSet::new(),
            persist_root: PathBuf::from("/"),
            stand_ins: Vec::new(),
            put_back: PutBack::default(),
        }
    }

    /// Gives the jobs `part` wherever one asks for a `T` (`JobEnv::stand_in`): a triage's
    /// `Gatherer`, a flush check's `FlushChecker` (tests).
    pub fn with_stand_in<T: std::any::Any + Clone + Send + Sync>(mut self, part: T) -> Self {
        self.stand_ins
            .push(Box::new(move |env: JobEnv| env.with_stand_in(part.clone())));
        self
    }

    /// What a job is made with: what only the executor owns.
    fn job_env(&self) -> JobEnv {
        let mut env = JobEnv::new(self.root.clone(), Arc::clone(&self.drives), INTERVAL)
            // A sweep's runs are made as the screen's runs are.
            .with_stand_in(super::runs::sweep_runner(
                Arc::clone(&self.start),
                self.root.clone(),
                Arc::clone(&self.drives),
                self.tx.clone(),
            ));
        env.history = self.history.clone();
        env.put_back = Arc::clone(&self.put_back);
        env.journal_dir = self
            .changer
            .as_ref()
            .ok()
            .map(|c| locked(c).journal().dir().to_path_buf());
        self.stand_ins.iter().fold(env, |env, give| give(env))
    }

    /// Checks the targets of a run on several devices with `check` instead of
    /// `session::check` (tests).
    #[cfg(test)]
    pub fn with_run_check(mut self, check: RunChecker) -> Self {
        self.check = check;
        self
    }

    /// Records every finished run in `history` and loads the disk's past runs from it.
    pub fn with_history(mut self, history: History) -> Self {
        self.history = Some(history);
        self
    }

    /// Adds what the jobs put back to `put_back` (the session's report on the way out).
    pub fn with_put_back(mut self, put_back: PutBack) -> Self {
        self.put_back = put_back;
        self
    }

    /// Writes udev rules under `root` instead of `/` (tests).
    #[cfg(test)]
    pub fn with_persist_root(mut self, root: impl Into<PathBuf>) -> Self {
        self.persist_root = root.into();
        self
    }

    /// Adds a finished test to the history and sends the disk's past runs (those of other
    /// sessions, the newest `PAST_RUNS`). Failures are a line on the status bar.
    fn record_history(&mut self, record: usize, runs: &[RunReport], drive_cache: Option<String>) {
        let Some(history) = &self.history else { return };
        let Some(first) = runs.first() else { return };
        let disk = history::identity_of(&self.root, &first.target);
        self.send(Msg::RecordDisk {
            record,
            disk: disk.clone(),
        });
        let recalled =
            history.record_and_recall(disk, runs, drive_cache, &self.recorded, PAST_RUNS);
        if recalled.recorded.is_some() {
            self.send(Msg::HistoryRecorded {
                record,
                runs: runs.len(),
            });
        }
        self.recorded.extend(recalled.recorded);
        if !recalled.past.is_empty() {
            self.send(Msg::PastRuns(recalled.past));
        }
        for n in recalled.notes {
            self.send(Msg::HistoryNote(n));
        }
    }

    fn send(&self, msg: Msg) {
        let _ = self.tx.send(msg);
    }

    /// Tells the app about changes a killed or crashed session left behind.
    pub fn offer_orphans(&self) {
        let Ok(changer) = &self.changer else { return };
        let Ok(orphans) = locked(changer).orphans() else {
            return;
        };
        let lines = orphans
            .iter()
            .map(|e| {
                // The journal is a file: its values may hold anything.
                crate::model::text::neutralize_controls(&format!(
                    "{}: {} back to {} (set by disktriage pid {})",
                    e.device.name,
                    e.original.kind(),
                    e.original.value(),
                    e.owner.pid
                ))
            })
            .collect();
        self.send(Msg::Orphans(lines));
    }

    fn remember(&mut self, device: &str, scheduler: bool, note: &JournalNote) {
        if let JournalNote::Recorded { id, .. } = note
            && !self.journal_ids.iter().any(|j| j.id == *id)
        {
            self.journal_ids.push(JournalId {
                device: device.to_string(),
                scheduler,
                id: *id,
            });
        }
    }

    fn keep(&mut self, device: &str, scheduler: bool) {
        let Ok(changer) = &self.changer else { return };
        let ids: Vec<u64> = self
            .journal_ids
            .iter()
            .filter(|j| j.device == device && j.scheduler == scheduler)
            .map(|j| j.id)
            .collect();
        for id in ids {
            if locked(changer).keep(id).is_ok() {
                self.journal_ids.retain(|j| j.id != id);
            }
        }
    }

    /// Makes a journaled change through the session's changer, refused when the name holds
    /// another device than `chosen`.
    fn change<T>(
        &self,
        device: &str,
        chosen: Option<&crate::model::ChosenDevice>,
        apply: impl FnOnce(
            &Changer,
            &crate::model::BlockDevice,
        ) -> Result<T, crate::changes::ChangeError>,
    ) -> Result<T, TaskError> {
        let changer = self
            .changer
            .as_ref()
            .map_err(|why| TaskError::ChangesUnavailable(why.clone()))?;
        let dev = self.drives.chosen_device(device, chosen)?;
        Ok(apply(&locked(changer), &dev)?)
    }

    pub fn execute(&mut self, cmd: Cmd) {
        match cmd {
            Cmd::RefreshInventory => {
                let inv = self.root.inventory().map_err(TaskError::from);
                self.send(Msg::Inventory(inv));
            }
            Cmd::SetScheduler {
                device,
                name,
                chosen,
            } => {
                let result = self
                    .change(&device, chosen.as_ref(), |c, dev| {
                        c.set_scheduler(dev, &name, false)
                    })
                    .map(|change| {
                        self.remember(&device, true, &change.journal);
                        change.after.active.unwrap_or(change.requested)
                    });
                self.send(Msg::SchedulerSet { device, result });
            }
            Cmd::KeepScheduler { device } => self.keep(&device, true),
            Cmd::SetDriveCache {
                device,
                enabled,
                chosen,
            } => {
                let result = self
                    .change(&device, chosen.as_ref(), |c, dev| {
                        c.set_write_cache(dev, enabled, false)
                    })
                    .map(|change| {
                        self.remember(&device, false, &change.journal);
                        Box::new(change)
                    });
                self.send(Msg::DriveCacheSet { device, result });
            }
            Cmd::KeepDriveCache { device } => self.keep(&device, false),
            Cmd::ReadDriveStatus { device, health } => {
                drive_reads::read_status(&self.drives, &self.tx, device, health);
            }
            Cmd::StartSelfTest {
                device,
                kind,
                chosen,
            } => drive_reads::start_self_test(&self.drives, &self.tx, device, kind, chosen),
            Cmd::PollSelfTest { device } => {
                drive_reads::poll_self_test(&self.drives, &self.tx, device);
            }
            Cmd::RestoreOrphans => {
                let lines = match &self.changer {
                    Err(why) => vec![why.clone()],
                    Ok(changer) => match locked(changer).restore(RestoreScope::Orphans) {
                        Ok(outcomes) => crate::report::restore::render_text(&outcomes)
                            .lines()
                            .map(str::to_string)
                            .collect(),
                        Err(e) => vec![format!("could not restore: {e}")],
                    },
                };
                self.send(Msg::Restored(lines));
            }
            Cmd::ProbeFileTarget { device, mount } => {
                let result = probe_file_target(device, mount).map_err(TaskError::from);
                self.send(Msg::FileTarget(result));
            }
            Cmd::StartRun(request) => self.start_run(&request),
            Cmd::StartSeveral(targets) => self.start_several(targets),
            Cmd::StopRun => {
                self.jobs.stop("run");
                self.jobs.stop("several");
            }
            Cmd::Export {
                reports,
                format,
                stem,
                dir,
            } => {
                let result = crate::report::export::export(&reports, format, &stem, &dir)
                    .map_err(TaskError::from);
                self.send(Msg::Exported(result));
            }
            Cmd::RecordHistory {
                record,
                runs,
                drive_cache,
            } => self.record_history(record, &runs, drive_cache),
            Cmd::PlanPersist {
                device,
                scheduler,
                class,
                chosen,
            } => self.plan_persist(device, scheduler, class, chosen),
            Cmd::WritePersist(rule) => {
                let result = persist::install(&rule, &self.persist_root).map_err(TaskError::from);
                self.send(Msg::Persisted(result));
            }
            Cmd::StartJob(order) => {
                let job = order.job(&self.job_env());
                self.jobs.start(job);
            }
            Cmd::StopJob(name) => self.jobs.stop(name),
            Cmd::RecordScan { update, path } => self.record_scan(&update, &path),
            Cmd::Quit => {}
        }
    }

    /// Plans the udev rule that makes `scheduler` permanent, writing nothing (the admin
    /// confirms it first).
    fn plan_persist(
        &self,
        device: String,
        scheduler: String,
        class: bool,
        chosen: Option<crate::model::ChosenDevice>,
    ) {
        // The rule is planned from what sysfs says about the name now: it must still
        // be the device chosen, or the rule would name another disk's serial.
        if let Err(e) = self.drives.chosen_device(&device, chosen.as_ref())
            && matches!(e, crate::sys::DriveError::NotChosen(_))
        {
            self.send(Msg::PersistPlanned {
                device,
                scheduler,
                class,
                result: Err(TaskError::from(e)),
            });
            return;
        }
        let opts = PersistOptions {
            target_root: self.persist_root.clone(),
            class,
            dry_run: true,
        };
        let result = persist::persist_scheduler(&self.root, &device, &scheduler, &opts)
            .map(Box::new)
            .map_err(TaskError::from);
        self.send(Msg::PersistPlanned {
            device,
            scheduler,
            class,
            result,
        });
    }

    /// Adds an ended scan to the history through the one recorder; a failure is a line on
    /// the status bar.
    fn record_scan(&mut self, update: &crate::event::ScanUpdate, path: &std::path::Path) {
        let Some(history) = &self.history else { return };
        let disk = self.root.disk_identity(&update.device);
        let notes = match history.record_scan(disk, update, &path.display().to_string(), &|| false)
        {
            Ok((_, warnings)) => warnings,
            Err(not_added) => vec![not_added],
        };
        for note in notes {
            self.send(Msg::HistoryNote(note));
        }
    }

    /// Starts a run: its job starts the session on a thread of its own, then relays its
    /// events and report.
    fn start_run(&mut self, request: &RunRequest) {
        self.jobs.start(RunJob {
            start: Arc::clone(&self.start),
            root: self.root.clone(),
            request: request.clone(),
            drives: Arc::clone(&self.drives),
            tx: self.tx.clone(),
        });
    }

    /// Starts the targets of a run on several devices together, each a job relayed with its
    /// index; none starts unless every one passes the checks (`SeveralJob`).
    fn start_several(&mut self, targets: Vec<(usize, RunRequest)>) {
        let gate = Arc::new(OnceLock::new());
        let all = Arc::new(targets.clone());
        let jobs = targets
            .into_iter()
            .map(|(index, request)| SeveralJob {
                index,
                request,
                start: Arc::clone(&self.start),
                check: Arc::clone(&self.check),
                gate: Arc::clone(&gate),
                all: Arc::clone(&all),
                root: self.root.clone(),
            })
            .collect();
        self.jobs.start_all(jobs);
    }

    /// Stops every job and waits (a few seconds; a metadata run longer). A flush check puts
    /// the write cache back itself, before the session does; what jobs put back is logged in
    /// `put_back`.
    pub fn shutdown(&mut self) {
        locked_log(&self.put_back).clear();
        self.jobs.stop_all();
    }
}

/// The free space of a mounted file system and a new test file's name there.
fn probe_file_target(
    device: String,
    mount: std::path::PathBuf,
) -> anyhow::Result<Box<crate::event::FileTarget>> {
    use crate::sys::dirops;
    use anyhow::Context;
    let (free, total) = dirops::free_space(&mount)
        .with_context(|| format!("cannot read the free space of {}", mount.display()))?;
    let file = dirops::unused_name(&mount, "disktriage-test", "bin")
        .with_context(|| format!("cannot name a test file in {}", mount.display()))?;
    let fstype = crate::sys::direct::filesystem_type(&mount).unwrap_or_else(|| "?".into());
    Ok(Box::new(crate::event::FileTarget {
        device,
        mount,
        fstype,
        free,
        total,
        file,
    }))
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
    use std::sync::mpsc::{self, Receiver};
    use std::time::{Duration, Instant};

    use super::*;
    use crate::bench::exec::session::TempPoll;
    use crate::bench::plan::params::TestParams;
    use crate::bench::plan::test_name::TestName;
    use crate::changes::Journal;
    use crate::event::SeveralMsg;
    use crate::model::{Lifetime, Transport};
    use crate::sys::{FakeDevice, FakeDrives};
    use crate::tui::runs::LAYOUT_POLL;

    struct Lab {
        drives: Arc<FakeDrives>,
        rx: Receiver<Msg>,
        exec: Executor,
        _journal: tempfile::TempDir,
    }

    /// An executor on fake drives (sda, and loop0 without cache control), with a journal in a
    /// temporary directory when `journaled`, and a run-starter that refuses with `refusal`.
    fn lab(journaled: bool, refusal: &'static str) -> Lab {
        let drives = Arc::new(
            FakeDrives::new()
                .with(FakeDevice::new("sda", Transport::Sata))
                .with(FakeDevice::new("loop0", Transport::Loop).without_cache_control()),
        );
        let dir = tempfile::tempdir().unwrap();
        let changer: Result<SharedChanger, String> = if journaled {
            let changer = Changer::new(
                drives.clone(),
                Journal::open(dir.path()).unwrap(),
                Lifetime::Session,
            );
            Ok(Arc::new(Mutex::new(changer)))
        } else {
            Err("changing settings needs root".to_string())
        };
        let (tx, rx) = mpsc::channel();
        let exec = Executor::new(
            SysRoot::new("tests/fixtures/sysfs/host-loop-zram"),
            tx,
            drives.clone(),
            changer,
            Arc::new(move |_, _, _, _| Err(anyhow::anyhow!(refusal))),
        );
        Lab {
            drives,
            rx,
            exec,
            _journal: dir,
        }
    }

    fn next(rx: &Receiver<Msg>) -> Msg {
        rx.recv_timeout(Duration::from_secs(10)).unwrap()
    }

    fn active_scheduler(drives: &FakeDrives, name: &str) -> String {
        let dev = drives.device(name).unwrap();
        drives.scheduler(&dev).unwrap().active.unwrap()
    }

    /// P in the TUI: the plan is a dry run of the rule for the disk's identity, writing it
    /// puts it under the system root, and a disk without an identity says why.
    #[test]
    fn a_persist_plan_writes_nothing_until_confirmed() {
        let (tx, rx) = mpsc::channel();
        let system = tempfile::tempdir().unwrap();
        std::fs::create_dir(system.path().join("etc")).unwrap();
        let mut exec = Executor::new(
            SysRoot::new("tests/fixtures/sysfs/qemu-lab"),
            tx,
            Arc::new(FakeDrives::new()),
            Err("unused".into()),
            Arc::new(|_, _, _, _| Err(anyhow::anyhow!("unused"))),
        )
        .with_persist_root(system.path());
        let rules = system.path().join(crate::persist::RULES_DIR);
        exec.execute(Cmd::PlanPersist {
            device: "nvme0n1".into(),
            scheduler: "none".into(),
            class: false,
            chosen: None,
        });
        let Msg::PersistPlanned { result, .. } = next(&rx) else {
            panic!("no plan")
        };
        let plan = result.unwrap();
        assert!(!plan.written);
        assert!(
            plan.rule.text.contains("ATTRS{serial}==\"DT-NVME-0\""),
            "{}",
            plan.rule.text
        );
        assert_eq!(plan.path, rules.join(&plan.rule.file_name));
        assert!(!rules.exists(), "a plan writes nothing");
        exec.execute(Cmd::WritePersist(Box::new(plan.rule.clone())));
        let Msg::Persisted(Ok(path)) = next(&rx) else {
            panic!("not written")
        };
        assert_eq!(std::fs::read_to_string(path).unwrap(), plan.rule.text);

        exec.execute(Cmd::PlanPersist {
            device: "sdb".into(),
            scheduler: "none".into(),
            class: false,
            chosen: None,
        });
        let Msg::PersistPlanned { result, .. } = next(&rx) else {
            panic!("no answer")
        };
        assert!(
            result
                .unwrap_err()
                .to_string()
                .contains("no stable identity"),
            "the SCSI disk has none"
        );
    }

    #[test]
    fn a_scheduler_change_is_made_and_reported_with_the_scheduler_read_back() {
        let mut lab = lab(true, "unused");
        lab.exec.execute(Cmd::SetScheduler {
            device: "sda".into(),
            name: "bfq".into(),
            chosen: None,
        });
        match next(&lab.rx) {
            Msg::SchedulerSet { device, result } => {
                assert_eq!(device, "sda");
                assert_eq!(result.unwrap(), "bfq");
            }
            other => panic!("unexpected {other:?}"),
        }
        assert_eq!(active_scheduler(&lab.drives, "sda"), "bfq");
    }

    /// A command made for the device on the screen is refused when the name holds another
    /// device by the time it runs (another serial, a new `diskseq`): nothing is switched,
    /// started or planned, and the answer says why.
    #[test]
    fn a_command_for_a_device_that_changed_under_its_name_does_nothing() {
        let mut lab = lab(true, "unused");
        let sda = lab.drives.device("sda").unwrap();
        let before = active_scheduler(&lab.drives, "sda");
        let cache_before = lab.drives.drive_cache(&sda).unwrap();
        let chosen = crate::model::ChosenDevice {
            serial: Some("ANOTHER-DISK".into()),
            diskseq: Some(1),
            ..sda.chosen()
        };
        let refused = |e: &TaskError| {
            e.to_string()
                .contains("sda is no longer the device you chose")
        };
        lab.exec.execute(Cmd::SetScheduler {
            device: "sda".into(),
            name: "bfq".into(),
            chosen: Some(chosen.clone()),
        });
        match next(&lab.rx) {
            Msg::SchedulerSet { result, .. } => {
                assert!(result.as_ref().is_err_and(refused), "{result:?}")
            }
            other => panic!("unexpected {other:?}"),
        }
        assert_eq!(active_scheduler(&lab.drives, "sda"), before);
        lab.exec.execute(Cmd::SetDriveCache {
            device: "sda".into(),
            enabled: !cache_before.enabled.unwrap_or(true),
            chosen: Some(chosen.clone()),
        });
        match next(&lab.rx) {
            Msg::DriveCacheSet { result, .. } => {
                assert!(result.as_ref().is_err_and(refused), "{result:?}")
            }
            other => panic!("unexpected {other:?}"),
        }
        assert_eq!(lab.drives.drive_cache(&sda).unwrap(), cache_before);
        lab.exec.execute(Cmd::StartSelfTest {
            device: "sda".into(),
            kind: crate::model::SelfTestKind::Short,
            chosen: Some(chosen.clone()),
        });
        match next(&lab.rx) {
            Msg::SelfTestStarted { result, .. } => {
                assert!(result.as_ref().is_err_and(refused), "{result:?}")
            }
            other => panic!("unexpected {other:?}"),
        }
        lab.exec.execute(Cmd::PlanPersist {
            device: "sda".into(),
            scheduler: "none".into(),
            class: false,
            chosen: Some(chosen),
        });
        match next(&lab.rx) {
            Msg::PersistPlanned { result, .. } => {
                assert!(result.as_ref().is_err_and(refused), "{result:?}")
            }
            other => panic!("unexpected {other:?}"),
        }
        let sent: Vec<String> = lab
            .drives
            .calls()
            .into_iter()
            .filter(|c| c.starts_with("set_") || c.starts_with("start_"))
            .collect();
        assert!(sent.is_empty(), "{sent:?}");
    }

    /// A scheduler sweep of sda from the screen (mq-deadline at start, then bfq), once.
    fn sweep_sda() -> Cmd {
        use crate::bench::analysis::setting_sweep::SweepKind;
        use crate::flow::job::JobOrder;
        use crate::flow::sweep_job::SweepOrder;
        Cmd::StartJob(JobOrder::new(SweepOrder {
            kind: SweepKind::Scheduler,
            device: "sda".into(),
            settings: vec!["mq-deadline".into(), "bfq".into()],
            request: RunRequest {
                target: "/dev/sda".into(),
                test: crate::bench::plan::test_name::TestName::SeqRead,
                params: Default::default(),
                confirmation: None,
                temperature: session::TempPoll::Off,
                device: None,
            },
            repeats: 1,
        }))
    }

    /// The sweep job's messages until its machine is done (or it is refused).
    fn sweep_until_done(rx: &Receiver<Msg>) -> Vec<crate::flow::sweep_job::SweepMsg> {
        use crate::flow::sweep_job::SweepMsg;
        let mut seen = Vec::new();
        loop {
            let Msg::Job(m) = next(rx) else { continue };
            let m = m.take::<SweepMsg>().unwrap();
            let end = match &m {
                SweepMsg::Refused(_) => true,
                SweepMsg::State(s) => !s.active(),
                _ => false,
            };
            seen.push(m);
            if end {
                return seen;
            }
        }
    }

    /// The TUI's sweep is the CLI's job and takes the same claim: refused while a CLI sweep
    /// (another journal handle on the same directory) holds the device; while it runs, the
    /// CLI's claim and switch are refused; `x` stops the run, the scheduler at start comes
    /// back and the claim goes.
    #[test]
    fn a_tui_sweep_and_a_cli_sweep_of_one_device_exclude_each_other() {
        use crate::flow::sweep_job::{RunOne, StepOutcome, SweepMsg};
        let dir = tempfile::tempdir().unwrap();
        let drives = Arc::new(FakeDrives::new().with(FakeDevice::new("sda", Transport::Sata)));
        let session_changer = Changer::new(
            drives.clone(),
            Journal::open(dir.path()).unwrap(),
            Lifetime::Session,
        );
        let cli = Changer::new(
            drives.clone(),
            Journal::open(dir.path()).unwrap(),
            Lifetime::Session,
        );
        // What the CLI could do while each run is made: claim, switch.
        let (seen_tx, seen_rx) = mpsc::channel::<(String, bool, bool)>();
        let (cli_dir, cli_drives) = (dir.path().to_path_buf(), drives.clone());
        let seen_tx = Mutex::new(seen_tx);
        let run: RunOne = Arc::new(move |_req, stop, _say| {
            let other = Changer::new(
                cli_drives.clone(),
                Journal::open(&cli_dir).unwrap(),
                Lifetime::Session,
            );
            let sda = cli_drives.device("sda").unwrap();
            let claim = other.claim(&sda, "scheduler sweep of sda").is_err();
            let switch = other.set_scheduler(&sda, "none", false).is_err();
            let now = active_scheduler(&cli_drives, "sda");
            let _ = seen_tx.lock().unwrap().send((now.clone(), claim, switch));
            // Under bfq the run goes on until it is stopped.
            while now == "bfq" && !stop.load(std::sync::atomic::Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(10));
            }
            if now == "bfq" {
                return StepOutcome::Stopped;
            }
            StepOutcome::Figure(Some(100.0))
        });
        let (tx, rx) = mpsc::channel();
        let mut exec = Executor::new(
            SysRoot::new("tests/fixtures/sysfs/host-loop-zram"),
            tx,
            drives.clone(),
            Ok(Arc::new(Mutex::new(session_changer))),
            Arc::new(|_, _, _, _| Err(anyhow::anyhow!("unused"))),
        )
        .with_stand_in(run);

        let sda = drives.device("sda").unwrap();
        cli.claim(&sda, "scheduler sweep of sda").unwrap();
        exec.execute(sweep_sda());
        let msgs = sweep_until_done(&rx);
        let [SweepMsg::Refused(e)] = msgs.as_slice() else {
            panic!("{msgs:?}")
        };
        assert!(e.contains("held by another disktriage"), "{e}");
        assert!(drives.set_calls().is_empty(), "nothing switched");
        cli.release("sda");

        exec.execute(sweep_sda());
        // The run under the scheduler at start, then the one under bfq: the CLI is refused
        // during both.
        let first = seen_rx.recv_timeout(Duration::from_secs(10)).unwrap();
        assert_eq!(first, ("mq-deadline".to_string(), true, true));
        let second = seen_rx.recv_timeout(Duration::from_secs(10)).unwrap();
        assert_eq!(second, ("bfq".to_string(), true, true));
        exec.execute(Cmd::StopJob(crate::flow::sweep_job::NAME));
        let msgs = sweep_until_done(&rx);
        let Some(SweepMsg::State(end)) = msgs.last() else {
            panic!("{msgs:?}")
        };
        assert!(end.stopping && end.restore_error.is_none(), "{end:?}");
        assert_eq!(end.samples.len(), 1);
        assert_eq!(active_scheduler(&drives, "sda"), "mq-deadline");
        assert_eq!(
            drives.set_calls(),
            ["set_scheduler sda bfq", "set_scheduler sda mq-deadline"]
        );
        exec.shutdown();
        // The job's claim went with it.
        cli.claim(&sda, "scheduler sweep of sda").unwrap();
    }

    /// Quitting mid-sweep stops the job like any other; it puts the scheduler back before
    /// the session's own restore.
    #[test]
    fn quitting_mid_sweep_puts_the_scheduler_back() {
        use crate::flow::sweep_job::{RunOne, StepOutcome};
        let lab = lab(true, "unused");
        let drives = lab.drives.clone();
        let run: RunOne = Arc::new(move |_req, stop, _say| {
            if active_scheduler(&drives, "sda") != "bfq" {
                return StepOutcome::Figure(Some(1.0));
            }
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(10));
            }
            StepOutcome::Stopped
        });
        let Lab {
            drives, rx, exec, ..
        } = lab;
        let mut exec = exec.with_stand_in(run);
        exec.execute(sweep_sda());
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while active_scheduler(&drives, "sda") != "bfq" {
            assert!(std::time::Instant::now() < deadline, "never switched");
            std::thread::sleep(Duration::from_millis(5));
        }
        exec.shutdown();
        assert_eq!(active_scheduler(&drives, "sda"), "mq-deadline");
        drop(rx);
    }

    #[test]
    fn a_kept_scheduler_stays_when_the_session_restores() {
        let mut lab = lab(true, "unused");
        lab.exec.execute(Cmd::SetScheduler {
            device: "sda".into(),
            name: "kyber".into(),
            chosen: None,
        });
        next(&lab.rx);
        lab.exec.execute(Cmd::KeepScheduler {
            device: "sda".into(),
        });
        let Ok(changer) = &lab.exec.changer else {
            panic!("no changer")
        };
        let restored = locked(changer).restore(RestoreScope::Mine).unwrap();
        assert!(restored.is_empty(), "{restored:?}");
        assert_eq!(active_scheduler(&lab.drives, "sda"), "kyber");
    }

    #[test]
    fn without_a_journal_a_change_says_why_and_touches_nothing() {
        let mut lab = lab(false, "unused");
        lab.exec.execute(Cmd::SetDriveCache {
            device: "sda".into(),
            enabled: false,
            chosen: None,
        });
        match next(&lab.rx) {
            Msg::DriveCacheSet { result, .. } => {
                assert_eq!(
                    result.unwrap_err(),
                    TaskError::ChangesUnavailable("changing settings needs root".into())
                );
            }
            other => panic!("unexpected {other:?}"),
        }
        assert!(lab.drives.set_calls().is_empty());
    }

    #[test]
    fn drive_status_is_read_off_the_ui_thread_and_reported() {
        let mut lab = lab(false, "unused");
        lab.exec.execute(Cmd::ReadDriveStatus {
            device: "loop0".into(),
            health: true,
        });
        match next(&lab.rx) {
            Msg::DriveStatus {
                device,
                cache,
                health,
            } => {
                assert_eq!(device, "loop0");
                // loop0 has no cache control: the reason is shown, not a blank.
                let cache = cache.unwrap();
                assert_eq!(
                    cache.drive_unavailable.as_deref(),
                    Some("not supported on loop")
                );
                assert!(health.is_some_and(|h| h.is_ok()));
            }
            other => panic!("unexpected {other:?}"),
        }
    }

    #[test]
    fn a_refused_run_is_reported_with_its_reason() {
        let mut lab = lab(false, "refusing to write to sda: it is mounted");
        lab.exec.execute(Cmd::StartRun(Box::new(RunRequest {
            target: "/dev/sda".into(),
            test: TestName::SeqRead,
            params: TestParams::default(),
            confirmation: None,
            temperature: TempPoll::Off,
            device: None,
        })));
        match next(&lab.rx) {
            Msg::RunRefused(why) => assert_eq!(why, "refusing to write to sda: it is mounted"),
            other => panic!("unexpected {other:?}"),
        }
        // Nothing is left running, and nothing more is said.
        lab.exec.shutdown();
        assert!(lab.rx.try_recv().is_err());
    }

    /// A start that takes a while (a device busy for its 2 s, a test file being laid out)
    /// happens off the UI thread: `execute` returns at once and the answer comes as a message.
    #[test]
    fn a_slow_start_does_not_hold_the_ui_thread() {
        let (mut exec, rx) = starting_with(Arc::new(|_, _, _, _| {
            std::thread::sleep(Duration::from_millis(1500));
            Err(anyhow::anyhow!("the device stayed busy"))
        }));
        let asked = Instant::now();
        exec.execute(Cmd::StartRun(Box::new(RunRequest {
            target: "/dev/loop0".into(),
            ..file_request()
        })));
        assert!(
            asked.elapsed() < Duration::from_millis(300),
            "the UI thread waited {:?} for the start",
            asked.elapsed()
        );
        match next(&rx) {
            Msg::RunRefused(why) => assert_eq!(why, "the device stayed busy"),
            other => panic!("unexpected {other:?}"),
        }
    }

    /// While a new test file is laid out, the bytes written so far reach the UI as messages,
    /// each a new figure, and none after the start has ended.
    #[test]
    fn the_layout_of_a_new_test_file_is_reported_as_it_goes() {
        let (mut exec, rx) = starting_with(Arc::new(|_, _, _, laid_out: &AtomicU64| {
            for gib in 1..=3u64 {
                laid_out.store(gib << 30, Ordering::Relaxed);
                std::thread::sleep(LAYOUT_POLL * 2);
            }
            Err(anyhow::anyhow!("no space left"))
        }));
        exec.execute(Cmd::StartRun(Box::new(file_request())));
        let mut laid_out = Vec::new();
        loop {
            match next(&rx) {
                Msg::LaidOut(bytes) => laid_out.push(bytes >> 30),
                Msg::RunRefused(why) => {
                    assert_eq!(why, "no space left");
                    break;
                }
                other => panic!("unexpected {other:?}"),
            }
        }
        assert_eq!(laid_out, [1, 2, 3]);
        std::thread::sleep(LAYOUT_POLL * 2);
        assert!(rx.try_recv().is_err(), "a message after the start ended");
    }

    /// A run-starter that waits (up to 5 s) for its stop flag, as the layout of a test file
    /// does, and says it was interrupted; `seen` tells the test it was asked to stop.
    fn waits_for_stop(seen: Arc<AtomicBool>) -> RunStarter {
        Arc::new(move |_, _, stop: &AtomicBool, _: &AtomicU64| {
            let deadline = Instant::now() + Duration::from_secs(5);
            while !stop.load(Ordering::Relaxed) && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(5));
            }
            seen.store(stop.load(Ordering::Relaxed), Ordering::Relaxed);
            Err(anyhow::anyhow!("interrupted while creating the test file"))
        })
    }

    /// An executor whose starts wait for their stop flag (`waits_for_stop`), its messages,
    /// and whether a start saw the stop.
    fn starting_lab() -> (Executor, Receiver<Msg>, Arc<AtomicBool>) {
        let seen = Arc::new(AtomicBool::new(false));
        let (exec, rx) = starting_with(waits_for_stop(Arc::clone(&seen)));
        (exec, rx, seen)
    }

    /// An executor whose runs start with `start`, and its messages. Every target passes the
    /// checks.
    fn starting_with(start: RunStarter) -> (Executor, Receiver<Msg>) {
        let (tx, rx) = mpsc::channel();
        let exec = Executor::new(
            SysRoot::new("tests/fixtures/sysfs/host-loop-zram"),
            tx,
            Arc::new(FakeDrives::new()),
            Err("unused".into()),
            start,
        )
        .with_run_check(Arc::new(|_, _| Ok(())));
        (exec, rx)
    }

    /// A run on several devices where one target is refused by the checks starts none: the
    /// refused one says why, the others that they were not started because of it.
    #[test]
    fn one_refused_target_of_several_starts_none() {
        let started = Arc::new(AtomicU64::new(0));
        let count = Arc::clone(&started);
        let (exec, rx) = starting_with(Arc::new(move |_, _, _, _| {
            count.fetch_add(1, Ordering::Relaxed);
            Err(anyhow::anyhow!("a start"))
        }));
        let mut exec = exec.with_run_check(Arc::new(|_, request: &RunRequest| {
            if request.target == std::path::Path::new("/dev/loop1") {
                anyhow::bail!("refusing to write to loop1: loop1 mounted at /mnt")
            }
            Ok(())
        }));
        let request = |path: &str| RunRequest {
            target: path.into(),
            ..file_request()
        };
        exec.execute(Cmd::StartSeveral(vec![
            (0, request("/dev/loop0")),
            (1, request("/dev/loop1")),
            (2, request("/dev/loop2")),
        ]));
        let mut refused = Vec::new();
        for _ in 0..3 {
            match next(&rx) {
                Msg::Several(SeveralMsg::Refused { index, error }) => refused.push((index, error)),
                other => panic!("unexpected {other:?}"),
            }
        }
        refused.sort();
        assert_eq!(started.load(Ordering::Relaxed), 0, "a target was started");
        assert!(refused[1].1.contains("mounted at /mnt"), "{refused:?}");
        for i in [0, 2] {
            assert!(
                refused[i].1.contains("not started: /dev/loop1 was refused"),
                "{refused:?}"
            );
        }
    }

    fn file_request() -> RunRequest {
        RunRequest {
            target: "/mnt/disktriage-test.bin".into(),
            test: TestName::SeqRead,
            params: TestParams::default(),
            confirmation: None,
            temperature: TempPoll::Off,
            device: None,
        }
    }

    /// A finished test goes to the history; the app is told what disk it was on (Results
    /// finds the same test's earlier runs on that disk by it) and gets the disk's earlier
    /// runs back, the same test's newest among them.
    #[test]
    fn a_recorded_test_is_said_by_its_disk_and_its_earlier_runs_come_back() {
        let dir = tempfile::tempdir().unwrap();
        let history = History::new(dir.path());
        let run = crate::report::run::tests::report(1, crate::bench::exec::engines::SYNC, false);
        let root = SysRoot::new("tests/fixtures/sysfs/host-loop-zram");
        let disk = history::identity_of(&root, &run.target);
        let mut earlier =
            history::HistoryEntry::of_runs(disk.clone(), std::slice::from_ref(&run), None).unwrap();
        earlier.id = "yesterday".into();
        history.append(&earlier).unwrap();
        let mut lab = lab(false, "unused");
        lab.exec = lab.exec.with_history(history);
        lab.exec.execute(Cmd::RecordHistory {
            record: 3,
            runs: vec![run],
            drive_cache: None,
        });
        match next(&lab.rx) {
            Msg::RecordDisk { record, disk: said } => {
                assert_eq!(record, 3);
                assert_eq!(said, disk);
            }
            other => panic!("unexpected {other:?}"),
        }
        assert!(matches!(
            next(&lab.rx),
            Msg::HistoryRecorded { record: 3, runs: 1 }
        ));
        match next(&lab.rx) {
            Msg::PastRuns(past) => {
                let ids: Vec<&str> = past.iter().map(|e| e.id.as_str()).collect();
                assert_eq!(ids, ["yesterday"]);
            }
            other => panic!("unexpected {other:?}"),
        }
    }

    /// An ended scan goes into the history with its map and counts, keyed by the disk.
    #[test]
    fn an_ended_scan_is_recorded_with_its_map_and_counts() {
        use crate::scan::Span;
        use crate::scan::blockmap::BlockMap;
        use crate::scan::buckets::{Bucket, BucketCounts};
        let dir = tempfile::tempdir().unwrap();
        let history = History::new(dir.path());
        let mut lab = lab(false, "unused");
        lab.exec = lab.exec.with_history(History::new(dir.path()));
        let mut map = BlockMap::new(Span::new(0, 64 << 20), 8192);
        map.record(Span::new(0, 64 << 20), Bucket::Under5);
        map.record(Span::new(40 << 20, 1 << 20), Bucket::Err);
        let mut buckets = BucketCounts::default();
        for _ in 0..63 {
            buckets.add(Bucket::Under5);
        }
        buckets.add(Bucket::Err);
        let update = crate::event::ScanUpdate {
            device: "loop0".into(),
            size: 64 << 20,
            sector: 512,
            block: 1 << 20,
            slow_ms: 150,
            position: 64 << 20,
            planned: 64 << 20,
            done: 64 << 20,
            bytes_read: (64 << 20) - 8192,
            bytes_bad: 8192,
            buckets,
            map,
            errors: vec![(Span::new(40 << 20, 8192), 5)],
            slow: vec![],
            timeouts: vec![],
            zone: vec![],
            elapsed: Duration::from_secs(2),
            in_flight: None,
            end: Some(crate::scan::engine::End::Finished),
            verdict: Some("16 unreadable sectors at LBA 81920-81935".into()),
        };
        lab.exec.execute(Cmd::RecordScan {
            update: Box::new(update),
            path: "/dev/loop0".into(),
        });
        let loaded = history.load().unwrap();
        let [entry] = loaded.entries.as_slice() else {
            panic!("{:?}", loaded.entries)
        };
        assert_eq!(entry.test, history::SCAN_TEST);
        assert_eq!(entry.device, "loop0");
        let scan = entry.scan.as_ref().unwrap();
        assert_eq!(scan.map.chars().count(), history::SCAN_MAP_CELLS);
        assert_eq!(scan.map.matches('X').count(), 8, "{}", scan.map);
        assert!(scan.map.chars().all(|c| c == '.' || c == 'X'));
        assert!(scan.buckets.contains(&("ERR".to_string(), 1)));
        assert_eq!(scan.unreadable, vec![(40 << 20, 8192, 5)]);
        assert_eq!(scan.end, "finished");
    }

    /// x on the Run screen while the test file is still being written stops the writing: the
    /// run is refused at once, not after the whole file.
    #[test]
    fn stop_while_starting_stops_the_start() {
        let (mut exec, rx, seen) = starting_lab();
        exec.execute(Cmd::StartRun(Box::new(file_request())));
        let asked = Instant::now();
        exec.execute(Cmd::StopRun);
        match rx.recv_timeout(Duration::from_secs(2)) {
            Ok(Msg::RunRefused(why)) => assert!(why.contains("interrupted"), "{why}"),
            other => panic!("unexpected {other:?}"),
        }
        assert!(asked.elapsed() < Duration::from_secs(2));
        assert!(seen.load(Ordering::Relaxed), "the start never saw the stop");
    }

    /// Quitting while a start is under way (one run, and a run on several devices) stops the
    /// starts and waits for them, so a half-written test file is removed before the program
    /// ends.
    #[test]
    fn quitting_while_starting_stops_and_waits_for_the_starts() {
        let (mut exec, rx, seen) = starting_lab();
        exec.execute(Cmd::StartRun(Box::new(file_request())));
        exec.execute(Cmd::StartSeveral(vec![
            (0, file_request()),
            (1, file_request()),
        ]));
        let asked = Instant::now();
        exec.shutdown();
        assert!(asked.elapsed() < Duration::from_secs(2));
        assert!(seen.load(Ordering::Relaxed));
        let mut refused = Vec::new();
        while let Ok(msg) = rx.try_recv() {
            match msg {
                Msg::RunRefused(_) => refused.push(None),
                Msg::Several(SeveralMsg::Refused { index, .. }) => refused.push(Some(index)),
                other => panic!("unexpected {other:?}"),
            }
        }
        refused.sort();
        assert_eq!(
            refused,
            vec![None, Some(0), Some(1)],
            "every start answered"
        );
    }

    /// Quitting while a flush check runs stops it and waits until it has put the write cache
    /// back (it returns only then), so the session's restore on the way out does not race it.
    #[test]
    fn quitting_during_a_flush_check_stops_it_and_waits_for_it() {
        use crate::event::JobOrder;
        use crate::flow::flushcheck::{FlushChecker, FlushMsg, FlushOrder};
        let (tx, rx) = mpsc::channel();
        let put_back = Arc::new(AtomicBool::new(false));
        let seen = Arc::clone(&put_back);
        let mut exec = Executor::new(
            SysRoot::new("tests/fixtures/sysfs/host-loop-zram"),
            tx,
            Arc::new(FakeDrives::new()),
            Err("unused".into()),
            Arc::new(|_, _, _, _| Err(anyhow::anyhow!("unused"))),
        )
        .with_stand_in::<FlushChecker>(Arc::new(move |_job, _progress, stop| {
            while !stop.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(5));
            }
            // Putting the cache back takes a moment.
            std::thread::sleep(Duration::from_millis(200));
            seen.store(true, Ordering::Relaxed);
            Err("stopped".into())
        }));
        exec.execute(Cmd::StartJob(JobOrder::new(FlushOrder {
            device: "loop0".into(),
            path: "/dev/loop0".into(),
            confirmation: "loop0".into(),
            chosen: None,
        })));
        std::thread::sleep(Duration::from_millis(50));
        exec.shutdown();
        assert!(
            put_back.load(Ordering::Relaxed),
            "shutdown returned before the check had put the cache back"
        );
        let Ok(Msg::Job(m)) = rx.try_recv() else {
            panic!("no message from the flush check");
        };
        assert!(matches!(m.get(), Some(FlushMsg::Failed(_))), "{m:?}");
    }

    /// What a SATA drive with self-tests reports: its logs with one passed short test, a
    /// self-test state that is idle.
    fn sata_with_self_tests() -> crate::sys::FakeDevice {
        use crate::model::{
            AtaSmart, AtaSmartStatus, DriveLogs, ErrorLog, LogRead, SelfTestEntry, SelfTestLog,
            SelfTestOutcome, SelfTestStatus, SmartReading,
        };
        let mut sata = FakeDevice::new("sda", Transport::Sata);
        sata.smart = Ok(SmartReading::Ata(AtaSmart {
            smart_supported: true,
            smart_enabled: true,
            status: AtaSmartStatus::Good,
            status_note: None,
            attributes: Vec::new(),
            drive: Default::default(),
            attribute_problem: None,
        }));
        let idle = SelfTestStatus {
            supported: true,
            unsupported_reason: None,
            running: None,
            last: Some("completed without error".into()),
            short_minutes: Some(2),
            long_minutes: Some(54),
        };
        sata.logs = Ok(DriveLogs {
            device: "sda".into(),
            transport: Transport::Sata,
            source: "ATA SMART logs".into(),
            error_log: LogRead::Read(ErrorLog {
                source: "ATA SMART summary error log (0x01)".into(),
                count: 0,
                entries: Vec::new(),
            }),
            self_test_log: LogRead::Read(SelfTestLog {
                source: "ATA SMART self-test log (0x06)".into(),
                entries: vec![SelfTestEntry {
                    kind: "short".into(),
                    outcome: SelfTestOutcome::Passed,
                    result: "completed without error".into(),
                    power_on_hours: 4660,
                    first_failing_lba: None,
                    remaining_pct: None,
                }],
            }),
            self_test: idle.clone(),
        });
        sata.self_test = Ok(idle);
        sata
    }

    /// Carries out the app's commands on the executor and feeds the answers back until the
    /// loop is quiet, as the TUI's loop does.
    fn pump(app: &mut crate::app::App, lab: &mut Lab, cmds: Vec<Cmd>) {
        let mut queue: std::collections::VecDeque<Cmd> = cmds.into();
        loop {
            while let Some(c) = queue.pop_front() {
                lab.exec.execute(c);
            }
            match lab.rx.recv_timeout(Duration::from_millis(300)) {
                Ok(msg) => queue.extend(app.update(msg)),
                Err(_) => return,
            }
        }
    }

    #[test]
    fn a_self_test_is_started_followed_and_its_failure_reaches_the_health_badge() {
        use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

        use crate::app::{App, Overlay, Screen};
        use crate::model::{
            Inventory, LogRead, SelfTestKind, SelfTestOutcome, SelfTestProgress, Verdict,
        };

        let mut lab = lab(false, "unused");
        lab.drives.add(sata_with_self_tests());
        let mut app = App::new(true, false);
        app.update(Msg::Inventory(Ok(Inventory {
            devices: vec![lab.drives.device("sda").unwrap()],
            usage_complete: true,
            notes: vec![],
            swaps: vec![],
        })));
        let key = |app: &mut App, c: char| {
            app.update(Msg::Key(KeyEvent::new(
                KeyCode::Char(c),
                KeyModifiers::NONE,
            )))
        };
        // h: the health view, SMART and the logs read off the UI thread.
        let cmds = key(&mut app, 'h');
        assert_eq!(app.screen, Screen::Health);
        pump(&mut app, &mut lab, cmds);
        let st = &app.devices.drives["sda"];
        assert_eq!(
            st.health.as_ref().unwrap().as_ref().unwrap().verdict,
            Verdict::Passed
        );
        assert!(st.logs.as_ref().unwrap().is_ok());
        // t asks first; y starts it.
        assert!(key(&mut app, 't').is_empty());
        assert_eq!(
            app.overlay,
            Some(Overlay::SelfTest(
                crate::app::dialogs::self_test::SelfTest {
                    device: "sda".into(),
                    kind: SelfTestKind::Short
                }
            ))
        );
        let running = |pct| crate::model::SelfTestStatus {
            supported: true,
            unsupported_reason: None,
            running: Some(SelfTestProgress {
                kind: Some("short".into()),
                percent_done: pct,
            }),
            last: None,
            short_minutes: Some(2),
            long_minutes: Some(54),
        };
        lab.drives.update("sda", |d| {
            d.self_test_polls = [running(30)].into();
        });
        let cmds = key(&mut app, 'y');
        assert_eq!(
            cmds,
            [Cmd::StartSelfTest {
                device: "sda".into(),
                kind: SelfTestKind::Short,
                chosen: None,
            }]
        );
        pump(&mut app, &mut lab, cmds);
        assert!(
            lab.drives
                .calls()
                .contains(&"start_self_test sda short".to_string())
        );
        let st = &app.devices.drives["sda"];
        assert!(st.watch.is_some(), "followed");
        assert_eq!(
            st.self_test.as_ref().unwrap().as_ref().unwrap().running,
            running(30).running
        );
        // Polled only every 5 s.
        let t0 = app.now;
        assert!(
            app.update(Msg::Tick(t0 + Duration::from_secs(2)))
                .is_empty()
        );
        // The drive ends the test with a read failure; the next poll sees it ended, and the
        // health and logs read again judge the verdict.
        lab.drives.update("sda", |d| {
            let mut done = running(0);
            done.running = None;
            done.last = Some("failed: read element".into());
            d.self_test_polls = [done].into();
            let logs = d.logs.as_mut().unwrap();
            if let LogRead::Read(l) = &mut logs.self_test_log {
                let mut e = l.entries[0].clone();
                e.outcome = SelfTestOutcome::Failed;
                e.result = "failed: read element".into();
                e.first_failing_lba = Some(1234);
                e.power_on_hours = 4661;
                l.entries.insert(0, e);
            }
        });
        let cmds = app.update(Msg::Tick(t0 + Duration::from_secs(5)));
        assert_eq!(
            cmds,
            [Cmd::PollSelfTest {
                device: "sda".into()
            }]
        );
        pump(&mut app, &mut lab, cmds);
        let st = &app.devices.drives["sda"];
        assert!(st.watch.is_none(), "no longer followed");
        let health = st.health.as_ref().unwrap().as_ref().unwrap();
        assert_eq!(health.verdict, Verdict::Warning);
        assert!(
            health.findings[0].text.contains("first failing LBA 1234"),
            "{:?}",
            health.findings
        );
        // No more polls once it ended.
        assert!(
            app.update(Msg::Tick(t0 + Duration::from_secs(60)))
                .iter()
                .all(|c| !matches!(c, Cmd::PollSelfTest { .. }))
        );
    }

    #[test]
    fn a_drive_without_self_tests_says_so_and_nothing_is_sent() {
        let mut lab = lab(false, "unused");
        lab.exec.execute(Cmd::StartSelfTest {
            device: "loop0".into(),
            kind: crate::model::SelfTestKind::Short,
            chosen: None,
        });
        match next(&lab.rx) {
            Msg::SelfTestStarted { result, .. } => {
                let e = result.unwrap_err().to_string();
                assert!(e.contains("not supported on loop"), "{e}");
            }
            other => panic!("unexpected {other:?}"),
        }
    }
}
