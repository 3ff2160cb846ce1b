//! The triage's last step, the same for `disktriage triage` and the TUI's triage key: the
//! gathered facts judged (`triage::judge_all`), each disk's changes since its previous triage,
//! the report, and the history's entries the next triage compares with. It lives here, not in
//! `triage`, because it builds the report and uses the history, which lie above `triage`.
//!
//! `TriageJob` is the TUI's triage: it checks every name still holds the chosen device, gathers
//! read-only within the bound (`triage::gather`), relays each disk's progress, then `assemble`s
//! and records. A stopped triage is shown but not recorded: the next triage would compare
//! against partial facts.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use super::job::{Job, JobContext, JobEnv, Order};
use crate::history::{
    CAPACITY_TEST, FLUSH_VERIFY_TEST, History, HistoryEntry, Loaded, TRIM_TEST, utc_minute,
};
use crate::model::ChosenDevice;
use crate::model::DiskIdentity;
use crate::report::triage::{DiskReport, TriageReport};
use crate::sys::{DriveControl, DriveError, SysRoot};
use crate::triage::facts::{CheckFact, PreviousTriage, SmrFact};
use crate::triage::{DiskFacts, FlushFact, changes, judge_all};
use crate::triage::{GatherOptions, Progress};

/// When and where a triage ran, for its report.
#[derive(Debug, Clone, PartialEq)]
pub struct TriageRun {
    pub host: Option<String>,
    pub started_unix: u64,
    pub seconds: f64,
    pub bound_seconds: f64,
}

/// Judges `facts` and builds the report, each disk with what changed since its previous
/// triage in `earlier` (`None`: not read). `identities[i]` is what the history knows disk `i` by.
pub fn assemble(
    facts: Vec<DiskFacts>,
    identities: &[DiskIdentity],
    earlier: Option<&Loaded>,
    run: TriageRun,
) -> TriageReport {
    let mut facts = facts;
    // Each disk's previous triage, looked up once: the growth rules and the changes read it.
    let previous: Vec<_> = (0..facts.len())
        .map(|i| {
            let (loaded, id) = (earlier?, identities.get(i)?);
            loaded.last_triage(id, run.started_unix.saturating_add(1))
        })
        .collect();
    if let Some(loaded) = earlier {
        for ((disk, id), before) in facts.iter_mut().zip(identities).zip(&previous) {
            disk.flush = flush_fact(loaded, id);
            disk.smr = loaded.last_smrcheck(id).map(|(started, r)| SmrFact {
                verdict: r.verdict.clone(),
                medium: r.medium.clone(),
                when: utc_minute(started),
            });
            disk.capacity = check_fact(loaded, id, CAPACITY_TEST);
            disk.trim = check_fact(loaded, id, TRIM_TEST);
            disk.previous = before.map(|(since, before)| PreviousTriage {
                since_unix: since,
                now_unix: run.started_unix,
                values: before.values.clone(),
            });
        }
    }
    let judgements = judge_all(&facts);
    let disks = facts
        .into_iter()
        .zip(judgements)
        .zip(previous)
        .map(|((facts, judgement), before)| {
            let now = changes::record_of(&facts, &judgement);
            let changes = before
                .map(|(since, before)| changes::changes(before, since, &now))
                .unwrap_or_default();
            DiskReport {
                facts,
                judgement,
                changes,
            }
        })
        .collect();
    TriageReport {
        host: run.host,
        started_unix: run.started_unix,
        seconds: run.seconds,
        bound_seconds: run.bound_seconds,
        disks,
        of: crate::report::triage::TriageOf::Disks,
    }
}

/// The newest flush check of `disk` in the history, as the rules read it.
fn flush_fact(loaded: &Loaded, disk: &DiskIdentity) -> Option<FlushFact> {
    let (started, test, record) = loaded.last_flushcheck(disk)?;
    Some(FlushFact {
        verify: test == FLUSH_VERIFY_TEST,
        verdict: record.verdict.clone(),
        sentence: record.sentence.clone(),
        when: utc_minute(started),
        lost: record.lost_count.unwrap_or(0),
    })
}

/// The newest capacity probe or TRIM check (`test`) of `disk` in the history.
fn check_fact(loaded: &Loaded, disk: &DiskIdentity, test: &str) -> Option<CheckFact> {
    let (started, record) = loaded.last_check(disk, test)?;
    Some(CheckFact {
        verdict: record.verdict.clone(),
        sentence: record.sentence.clone(),
        when: utc_minute(started),
    })
}

/// The history's entry for one disk of a triage.
pub fn entry_of(report: &TriageReport, disk: &DiskReport, identity: DiskIdentity) -> HistoryEntry {
    HistoryEntry::of_triage(
        identity,
        &disk.facts.identity.device,
        disk.facts.identity.model.clone(),
        report.started_unix,
        disk.facts.seconds,
        changes::record_of(&disk.facts, &disk.judgement),
    )
}

/// Adds each disk of `report` to `history` (`identities` in the report's order). Returns the
/// lines worth showing: warnings, and why an entry was not added. `stop` ends a wait for the
/// history's lock.
pub fn record(
    history: &History,
    report: &TriageReport,
    identities: &[DiskIdentity],
    stop: &dyn Fn() -> bool,
) -> Vec<String> {
    let entries = report
        .disks
        .iter()
        .zip(identities)
        .map(|(disk, identity)| entry_of(report, disk, identity.clone()))
        .collect();
    match history.record_all(entries, stop) {
        Ok((_, warnings)) => warnings,
        Err(not_added) => vec![not_added],
    }
}

/// Gathers the facts of the named disks, sending progress, ending when the flag is set. A
/// stand-in in tests.
pub type Gatherer = Arc<
    dyn Fn(
            &SysRoot,
            &[String],
            &GatherOptions,
            Option<Sender<Progress>>,
            &AtomicBool,
        ) -> Vec<DiskFacts>
        + Send
        + Sync,
>;

/// The program's gatherer: `triage::gather_until`, which ends at its bound or soon after the
/// stop flag is set, with what was gathered.
pub fn real_gatherer() -> Gatherer {
    Arc::new(crate::triage::gather_until)
}

/// The triage job's name (`Cmd::StopJob` stops it by it).
pub const NAME: &str = "triage";

/// A triage as the screen asks for it: `devices` (kernel names) read-only within
/// `options.bound`.
#[derive(Debug, Clone, PartialEq)]
pub struct TriageOrder {
    pub devices: Vec<String>,
    /// Each device as the admin chose it (in `devices`' order; empty: stamped by the app).
    pub chosen: Vec<Option<ChosenDevice>>,
    pub options: GatherOptions,
}

impl Order for TriageOrder {
    type Job = TriageJob;

    /// The job, gathering with the stand-in `Gatherer` a test gave, else the real one.
    fn job(self, env: &JobEnv) -> TriageJob {
        TriageJob {
            root: env.root.clone(),
            devices: self.devices,
            chosen: self.chosen,
            options: self.options,
            drives: Arc::clone(&env.drives),
            history: env.history.clone(),
            gatherer: env.stand_in::<Gatherer>().unwrap_or_else(real_gatherer),
        }
    }

    fn stamp(&mut self, chosen: &dyn Fn(&str) -> Option<ChosenDevice>) {
        if self.chosen.is_empty() {
            self.chosen = self.devices.iter().map(|d| chosen(d)).collect();
        }
    }
}

/// What one triage needs besides its disks.
pub struct TriageJob {
    pub root: SysRoot,
    pub devices: Vec<String>,
    pub chosen: Vec<Option<ChosenDevice>>,
    pub options: GatherOptions,
    pub drives: Arc<dyn DriveControl>,
    pub history: Option<History>,
    pub gatherer: Gatherer,
}

/// What the triage says: each disk's progress as it goes, then the report; or why it did
/// not start.
#[derive(Debug, Clone)]
pub enum TriageMsg {
    Progress(Box<Progress>),
    Finished(Box<TriageReport>),
    Refused(String),
}

/// What the triage job sends: its own news, and the history's notes after the report.
#[derive(Debug, Clone)]
pub enum TriageNews {
    Triage(TriageMsg),
    HistoryNote(String),
}

impl Job for TriageJob {
    type Msg = TriageNews;
    type Output = ();

    fn name(&self) -> &'static str {
        NAME
    }

    fn cannot_start(&self, error: &std::io::Error) -> TriageNews {
        TriageNews::Triage(TriageMsg::Refused(format!(
            "cannot start the triage: {error}"
        )))
    }

    fn run(self, ctx: &JobContext<'_, TriageNews>) {
        run(&self, ctx);
    }
}

/// The whole triage, on the calling thread.
pub fn run(job: &TriageJob, ctx: &JobContext<'_, TriageNews>) {
    if let Err(why) = check_chosen(job) {
        ctx.send(TriageNews::Triage(TriageMsg::Refused(why)));
        return;
    }
    // The bound's start (the CLI's: before the disks were listed) counts in the time too.
    let started = job.options.since.unwrap_or_else(Instant::now);
    let started_unix = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .as_secs();
    // The history before this triage: each disk's changes are against its last one.
    let (earlier, mut notes) = match &job.history {
        Some(h) => match h.load() {
            Ok(loaded) => {
                let notes = loaded.problems.clone();
                (Some(loaded), notes)
            }
            Err(e) => (None, vec![format!("cannot read the history: {e:#}")]),
        },
        None => (None, Vec::new()),
    };
    let identities: Vec<_> = job
        .devices
        .iter()
        .map(|d| job.root.disk_identity(d))
        .collect();
    let facts = gather_relaying(job, ctx);
    let report = assemble(
        facts,
        &identities,
        earlier.as_ref(),
        TriageRun {
            host: crate::sys::host::host_info().hostname,
            started_unix,
            seconds: started.elapsed().as_secs_f64(),
            bound_seconds: job.options.bound.as_secs_f64(),
        },
    );
    if !ctx.stopped()
        && let Some(history) = &job.history
    {
        notes.extend(record(history, &report, &identities, &|| false));
    }
    ctx.send(TriageNews::Triage(TriageMsg::Finished(Box::new(report))));
    for note in notes {
        ctx.send(TriageNews::HistoryNote(note));
    }
}

/// Every name must still hold the device the admin chose, checked before any is read: a
/// verdict about another disk under the chosen name would be the worst kind of wrong.
fn check_chosen(job: &TriageJob) -> Result<(), String> {
    for (i, device) in job.devices.iter().enumerate() {
        let chosen = job.chosen.get(i).and_then(Option::as_ref);
        match job.drives.chosen_device(device, chosen) {
            Ok(_) => {}
            Err(e @ DriveError::NotChosen(_)) => return Err(e.to_string()),
            Err(e) if chosen.is_some() => return Err(format!("{device}: {e}")),
            // No identity to check (a name typed, not chosen): the gathering says what it
            // can and cannot read.
            Err(_) => {}
        }
    }
    Ok(())
}

/// Runs the gatherer on a scoped thread and relays its progress. The relay ends when the
/// gathering does, not when the channel closes: a disk's thread stuck in the kernel keeps it open.
fn gather_relaying(job: &TriageJob, ctx: &JobContext<'_, TriageNews>) -> Vec<DiskFacts> {
    let (ptx, prx) = mpsc::channel::<Progress>();
    let stop = ctx.stop_flag();
    std::thread::scope(|scope| {
        let gathering = scope
            .spawn(move || (job.gatherer)(&job.root, &job.devices, &job.options, Some(ptx), stop));
        let forward = |p: Progress| {
            ctx.send(TriageNews::Triage(TriageMsg::Progress(Box::new(p))));
        };
        loop {
            match prx.recv_timeout(Duration::from_millis(100)) {
                Ok(p) => forward(p),
                Err(RecvTimeoutError::Timeout) if gathering.is_finished() => break,
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => break,
            }
        }
        while let Ok(p) = prx.try_recv() {
            forward(p);
        }
        match gathering.join() {
            Ok(facts) => facts,
            // A panic in the gathering is a bug: every disk is unknown, and says so.
            Err(_) => job
                .devices
                .iter()
                .map(|d| DiskFacts {
                    identity: crate::triage::DiskIdentityFacts {
                        device: d.clone(),
                        ..Default::default()
                    },
                    problems: vec!["the gathering failed (a bug in disktriage)".into()],
                    ..Default::default()
                })
                .collect(),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::triage::DiskIdentityFacts;

    fn facts(device: &str) -> DiskFacts {
        DiskFacts {
            identity: DiskIdentityFacts {
                device: device.into(),
                ..Default::default()
            },
            ..Default::default()
        }
    }

    fn run() -> TriageRun {
        TriageRun {
            host: Some("web01".into()),
            started_unix: 1_800_000_000,
            seconds: 8.0,
            bound_seconds: 60.0,
        }
    }

    #[test]
    fn a_triage_is_recorded_per_disk_and_the_next_finds_it_by_identity() {
        let dir = tempfile::tempdir().unwrap();
        let history = History::new(dir.path());
        let ids = vec![
            DiskIdentity::Serial("S1".into()),
            DiskIdentity::Name("loop9".into()),
        ];
        let report = assemble(vec![facts("sdb"), facts("loop9")], &ids, None, run());
        assert_eq!(report.disks.len(), 2);
        assert!(record(&history, &report, &ids, &|| false).is_empty());
        let loaded = history.load().unwrap();
        assert_eq!(loaded.entries.len(), 2);
        assert!(
            loaded
                .entries
                .iter()
                .all(|e| e.test == crate::history::TRIAGE_TEST)
        );
        let (at, record) = loaded.last_triage(&ids[0], u64::MAX).unwrap();
        assert_eq!(at, 1_800_000_000);
        assert_eq!(record.verdict, report.disks[0].judgement.verdict.as_str());
        // The next triage of the same disk finds it and compares.
        let next = assemble(
            vec![facts("sdb"), facts("loop9")],
            &ids,
            Some(&loaded),
            TriageRun {
                started_unix: 1_800_000_100,
                ..run()
            },
        );
        assert_eq!(next.disks.len(), 2);
        // A disk known only by its kernel name is not compared: the name may be another's.
        assert!(loaded.last_triage(&ids[1], u64::MAX).is_none());
    }

    /// A SATA disk whose SMART reads `pending` sectors (197).
    fn sata_with_pending(device: &str, pending: u64) -> DiskFacts {
        use crate::model::{
            AtaAttribute, AtaSmart, AtaSmartStatus, AttributeState, SmartReading, Transport,
        };
        let mut d = facts(device);
        d.smart = Some(crate::smart::assess(
            device,
            Transport::Sata,
            SmartReading::Ata(AtaSmart {
                smart_supported: true,
                smart_enabled: true,
                status: AtaSmartStatus::Good,
                status_note: None,
                attributes: vec![AtaAttribute {
                    id: 197,
                    name: "Current_Pending_Sector".into(),
                    known: true,
                    flags: 0x32,
                    prefailure: false,
                    value: 100,
                    worst: 100,
                    threshold: Some(0),
                    raw: pending,
                    decoded: None,
                    raw_text: None,
                    state: AttributeState::NoThreshold,
                }],
                drive: Default::default(),
                attribute_problem: None,
            }),
        ));
        d
    }

    #[test]
    fn growth_since_the_recorded_triage_is_a_finding_through_the_history_file() {
        let dir = tempfile::tempdir().unwrap();
        let history = History::new(dir.path());
        let ids = vec![DiskIdentity::Serial("S1".into())];
        let first = assemble(vec![sata_with_pending("sdb", 0)], &ids, None, run());
        assert_eq!(first.disks[0].judgement.verdict.as_str(), "healthy");
        assert!(record(&history, &first, &ids, &|| false).is_empty());
        let loaded = history.load().unwrap();
        // Seventeen days later, under another kernel name, 24 pending sectors.
        let later = run().started_unix + 17 * 86_400;
        let next = assemble(
            vec![sata_with_pending("sdc", 24)],
            &ids,
            Some(&loaded),
            TriageRun {
                started_unix: later,
                ..run()
            },
        );
        let j = &next.disks[0].judgement;
        let grew: Vec<&str> = j
            .findings
            .iter()
            .filter(|f| f.rule == "counters-grew")
            .map(|f| f.sentence.as_str())
            .collect();
        assert_eq!(
            grew,
            [
                "the disk got worse: pending sectors 0 -> 24 between 2027-01-15 08:00 UTC and \
              2027-02-01 08:00 UTC"
            ]
        );
        // The same disk again with no new damage: no growth said.
        let again = assemble(
            vec![sata_with_pending("sdb", 0)],
            &ids,
            Some(&loaded),
            run(),
        );
        assert!(
            again.disks[0]
                .judgement
                .findings
                .iter()
                .all(|f| f.rule != "counters-grew")
        );
    }

    #[test]
    fn the_newest_flush_check_of_the_disk_becomes_a_finding() {
        use crate::history::{FLUSH_TIMING_TEST, FlushRecord};
        let dir = tempfile::tempdir().unwrap();
        let history = History::new(dir.path());
        let ids = vec![
            DiskIdentity::Serial("S1".into()),
            DiskIdentity::Serial("S2".into()),
            DiskIdentity::Name("loop9".into()),
        ];
        let timing = |started, verdict: &str| {
            HistoryEntry::of_flushcheck(
                ids[0].clone(),
                "sdb",
                FLUSH_TIMING_TEST,
                started,
                "timing".into(),
                4096,
                FlushRecord {
                    verdict: verdict.into(),
                    sentence: format!("commits {verdict}"),
                    ..Default::default()
                },
            )
        };
        history
            .append(&timing(1_700_000_000, "waits-for-medium"))
            .unwrap();
        history
            .append(&timing(1_700_000_100, "volatile-cache"))
            .unwrap();
        let lost = HistoryEntry::of_flushcheck(
            ids[1].clone(),
            "sdc",
            FLUSH_VERIFY_TEST,
            1_700_000_200,
            "verify".into(),
            4096,
            FlushRecord {
                verdict: "lost".into(),
                sentence: "12 of 800 acknowledged records were lost".into(),
                lost_count: Some(12),
                ..Default::default()
            },
        );
        history.append(&lost).unwrap();
        // Known only by its kernel name: another disk's check must not be pinned on it.
        let by_name = HistoryEntry::of_flushcheck(
            ids[2].clone(),
            "loop9",
            FLUSH_VERIFY_TEST,
            1_700_000_300,
            "verify".into(),
            4096,
            FlushRecord {
                verdict: "lost".into(),
                lost_count: Some(1),
                ..Default::default()
            },
        );
        history.append(&by_name).unwrap();
        let loaded = history.load().unwrap();
        let report = assemble(
            vec![facts("sdb"), facts("sdc"), facts("loop9")],
            &ids,
            Some(&loaded),
            run(),
        );
        let rules = |i: usize| -> Vec<&str> {
            report.disks[i]
                .judgement
                .findings
                .iter()
                .map(|f| f.rule)
                // The facts are empty: "nothing-read" fires too.
                .filter(|r| r.starts_with("flush-"))
                .collect()
        };
        assert_eq!(
            rules(0),
            ["flush-volatile-cache"],
            "the newest timing counts"
        );
        let finding = |i: usize, rule: &str| {
            report.disks[i]
                .judgement
                .findings
                .iter()
                .find(|f| f.rule == rule)
                .cloned()
                .unwrap()
        };
        let f = finding(0, "flush-volatile-cache");
        assert!(
            f.sentence.contains("commits volatile-cache"),
            "{}",
            f.sentence
        );
        assert_eq!(rules(1), ["flush-lost-writes"]);
        let f = finding(1, "flush-lost-writes");
        assert!(
            f.sentence.contains("lost 12 acknowledged writes"),
            "{}",
            f.sentence
        );
        assert_eq!(f.severity.as_str(), "failing");
        assert!(rules(2).is_empty(), "{:?}", rules(2));
    }

    #[test]
    fn the_newest_capacity_probe_and_trim_check_of_the_disk_become_findings() {
        use crate::history::CheckRecord;
        let dir = tempfile::tempdir().unwrap();
        let history = History::new(dir.path());
        let ids = vec![
            DiskIdentity::Serial("S1".into()),
            DiskIdentity::Serial("S2".into()),
            DiskIdentity::Name("loop9".into()),
        ];
        let check = |id: usize, test: &str, started, verdict: &str| {
            let record = CheckRecord {
                verdict: verdict.into(),
                sentence: format!("{verdict}: what it found"),
            };
            HistoryEntry::of_check(ids[id].clone(), "sdb", None, test, started, 1.0, record)
        };
        for e in [
            check(0, CAPACITY_TEST, 1_700_000_000, "fake"),
            check(0, TRIM_TEST, 1_700_000_100, "broken"),
            // A later real verdict supersedes an earlier fake one.
            check(1, CAPACITY_TEST, 1_700_000_000, "fake"),
            check(1, CAPACITY_TEST, 1_700_000_200, "real"),
            check(1, TRIM_TEST, 1_700_000_300, "kept"),
            // Known only by its kernel name: another disk's check must not be pinned on it.
            check(2, CAPACITY_TEST, 1_700_000_400, "fake"),
        ] {
            history.append(&e).unwrap();
        }
        let loaded = history.load().unwrap();
        let report = assemble(
            vec![facts("sdb"), facts("sdc"), facts("loop9")],
            &ids,
            Some(&loaded),
            run(),
        );
        let found = |i: usize| -> Vec<(&str, &str, String)> {
            report.disks[i]
                .judgement
                .findings
                .iter()
                .filter(|f| f.rule.starts_with("capacity-") || f.rule.starts_with("trim-"))
                .map(|f| (f.rule, f.severity.as_str(), f.sentence.clone()))
                .collect()
        };
        assert_eq!(
            found(0),
            [
                (
                    "capacity-fake",
                    "failing",
                    "the capacity probe of 2023-11-14 22:13 UTC: fake: what it found".to_string()
                ),
                (
                    "trim-claim-broken",
                    "suspect",
                    "the TRIM check of 2023-11-14 22:15 UTC: broken: what it found".to_string()
                ),
            ]
        );
        assert!(found(1).is_empty(), "{:?}", found(1));
        assert!(found(2).is_empty(), "{:?}", found(2));
    }
}

#[cfg(test)]
mod job_tests {
    use std::sync::atomic::Ordering;

    use super::*;
    use crate::sys::FakeDrives;

    fn job(gatherer: Gatherer, history: Option<History>) -> TriageJob {
        TriageJob {
            root: SysRoot::new("/nonexistent-root"),
            devices: vec!["loop0".into(), "loop1".into()],
            chosen: Vec::new(),
            options: GatherOptions::default(),
            drives: Arc::new(FakeDrives::default()),
            history,
            gatherer,
        }
    }

    /// Reports each disk half done, then done, and returns plain facts; waits for the stop
    /// flag when `wait_for_stop`.
    fn fake(wait_for_stop: bool) -> Gatherer {
        Arc::new(move |_, devices, _, progress, stop| {
            let progress = progress.unwrap();
            for (i, d) in devices.iter().enumerate() {
                let _ = progress.send(Progress {
                    disk: i,
                    device: d.clone(),
                    step: "surface 1/2".into(),
                    fraction: 0.5,
                    done: None,
                });
            }
            while wait_for_stop && !stop.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(5));
            }
            devices
                .iter()
                .map(|d| DiskFacts {
                    identity: crate::triage::DiskIdentityFacts {
                        device: d.clone(),
                        ..Default::default()
                    },
                    ..Default::default()
                })
                .collect()
        })
    }

    fn run_with(job: TriageJob, stop: &AtomicBool, tx: Sender<TriageNews>) {
        let send = move |m| tx.send(m).is_ok();
        Job::run(
            job,
            &JobContext::new(stop, &send, Duration::from_millis(250)),
        );
    }

    #[test]
    fn progress_is_relayed_then_the_report_and_it_is_recorded() {
        let dir = tempfile::tempdir().unwrap();
        let history = History::new(dir.path());
        let (tx, rx) = mpsc::channel();
        run_with(
            job(fake(false), Some(history.clone())),
            &AtomicBool::new(false),
            tx,
        );
        let msgs: Vec<TriageNews> = rx.iter().collect();
        let progress = msgs
            .iter()
            .filter(|m| matches!(m, TriageNews::Triage(TriageMsg::Progress(_))))
            .count();
        assert_eq!(progress, 2);
        let Some(TriageNews::Triage(TriageMsg::Finished(report))) = msgs
            .iter()
            .find(|m| matches!(m, TriageNews::Triage(TriageMsg::Finished(_))))
        else {
            panic!("no report: {msgs:?}")
        };
        assert_eq!(report.disks.len(), 2);
        assert_eq!(history.load().unwrap().entries.len(), 2);
    }

    #[test]
    fn a_stopped_triage_ends_promptly_and_is_not_recorded() {
        let dir = tempfile::tempdir().unwrap();
        let history = History::new(dir.path());
        let (tx, rx) = mpsc::channel();
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let job = job(fake(true), Some(history.clone()));
        let worker = std::thread::spawn(move || run_with(job, &flag, tx));
        // The first progress line, then the stop.
        assert!(matches!(
            rx.recv_timeout(Duration::from_secs(5)).unwrap(),
            TriageNews::Triage(TriageMsg::Progress(_))
        ));
        let asked = Instant::now();
        stop.store(true, Ordering::Relaxed);
        worker.join().unwrap();
        assert!(asked.elapsed() < Duration::from_secs(2));
        assert!(
            rx.iter()
                .any(|m| matches!(m, TriageNews::Triage(TriageMsg::Finished(_))))
        );
        assert!(history.load().unwrap().entries.is_empty());
    }
}
