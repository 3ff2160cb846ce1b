//! The flush check's timing check, the same for `disktriage flushcheck` and the TUI's job: the
//! write guard before anything touches the device, the plan against the opened device, the
//! rotation rate (`sys::rotation`, or `--rpm`), whether the write cache can be switched; then
//! `run_timing` measures, `flush::timing::judge` judges and the history records.
//!
//! The write cache is switched off through the session journal, behind a `RestoreGuard` with
//! the disk claimed, as a setting sweep does; it is put back at the end of that phase, after an
//! error and after a stop. It is a whole disk's: not switched for a partition's check.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use anyhow::bail;

use super::target::add_to_history;
use super::{CacheOff, CacheSwitch, Progress, TimingConfig, TimingEnd, run_timing};
use crate::changes::guard::RestoreGuard;
use crate::changes::{Changer, Journal};
use crate::flow::job::{Job, JobContext};
use crate::flow::write_target::{WriteTarget, prepare_write};
use crate::flush::timing::{Judgement, Rotation, TimingFacts, dirty_words, judge};
use crate::history::{FLUSH_TIMING_TEST, FlushRecord, HistoryEntry};
use crate::model::text::neutralize_controls;
use crate::model::{BlockDevice, ChosenDevice, Lifetime, SettingKind};
use crate::report::flushcheck::timing::TimingReport;
use crate::sys::{DriveControl, LinuxDrives, SysRoot, direct, rotation, scan::whole_disk};

/// The timing check as the CLI's job: `check` on its thread, each write's progress as it comes
/// (the line says when one hangs), errors typed (a guard's refusal is a usage error).
pub struct TimingJob {
    pub path: PathBuf,
    pub confirmation: Option<String>,
    pub rpm: Option<u32>,
    pub journal_dir: PathBuf,
    pub history_dir: Option<PathBuf>,
    /// The guard's restore on a panic in any thread (`check`'s `panic_hook`).
    pub panic_hook: bool,
}

/// What the timing job says: how far it is.
#[derive(Debug, Clone, PartialEq)]
pub enum TimingMsg {
    Progress(Progress),
    /// Its thread did not start.
    Refused(String),
}

impl Job for TimingJob {
    type Msg = TimingMsg;
    type Output = anyhow::Result<TimingRun>;

    fn name(&self) -> &'static str {
        "flushcheck"
    }

    fn cannot_start(&self, error: &std::io::Error) -> TimingMsg {
        TimingMsg::Refused(format!("cannot start the flush check: {error}"))
    }

    fn run(self, ctx: &JobContext<'_, TimingMsg>) -> anyhow::Result<TimingRun> {
        let req = TimingRequest {
            path: &self.path,
            confirmation: self.confirmation.as_deref(),
            rpm: self.rpm,
            journal_dir: &self.journal_dir,
            history_dir: self.history_dir.as_deref(),
            expect: None,
        };
        let mut progress = |p: Progress| {
            ctx.send(TimingMsg::Progress(p));
        };
        check(&req, self.panic_hook, &mut progress, ctx.stop_flag())
    }
}

/// The highest `--rpm` taken (the fastest disks turn at 15,000 rpm).
pub const MAX_RPM: u32 = 30_000;
/// The lowest rate a drive can report (VPD B1h and IDENTIFY word 217 start at 0401h).
pub const MIN_RPM: u32 = 1025;

/// What a timing check is asked: the CLI's arguments, or the TUI's.
pub struct TimingRequest<'a> {
    pub path: &'a Path,
    /// The device's name as the admin typed it.
    pub confirmation: Option<&'a str>,
    pub rpm: Option<u32>,
    /// Where the cache switch is journaled.
    pub journal_dir: &'a Path,
    /// The history the finished check is added to (none: not recorded).
    pub history_dir: Option<&'a Path>,
    /// The device as the admin chose it on a screen.
    pub expect: Option<&'a ChosenDevice>,
}

/// A timing check that ran (to its end, or stopped, or failed mid-run): what the report
/// shows, and what the caller says or exits with.
pub struct TimingRun {
    pub device: String,
    pub name: String,
    pub disk_name: String,
    pub model: Option<String>,
    pub serial: Option<String>,
    pub facts: TimingFacts,
    /// `None` when the run did not finish (`ended` says why).
    pub judgement: Option<Judgement>,
    pub ended: Option<String>,
    /// The failed operation, when a write or flush failed.
    pub failed: Option<String>,
    pub restored: Vec<String>,
    /// Why the write cache could not be put back.
    pub restore_error: Option<String>,
}

impl TimingRun {
    /// The report's view of the run.
    pub fn report(&self) -> TimingReport<'_> {
        TimingReport {
            device: &self.device,
            name: &self.name,
            model: self.model.as_deref(),
            serial: self.serial.as_deref(),
            facts: &self.facts,
            judgement: self.judgement.as_ref(),
            ended: self.ended.clone(),
            restored: self.restored.clone(),
        }
    }
}

/// Checks `--rpm`: 0 (does not rotate) or a rate a drive can report.
pub fn check_rpm(rpm: Option<u32>) -> anyhow::Result<()> {
    if let Some(rpm) = rpm
        && rpm != 0
        && !(MIN_RPM..=MAX_RPM).contains(&rpm)
    {
        crate::model::exit::usage_bail!(
            "--rpm takes 0 (the disk does not rotate) or a rate from {MIN_RPM} to {MAX_RPM}, \
             not {rpm}"
        );
    }
    Ok(())
}

/// The timing check (see the module doc). `panic_hook`: the guard's restore on a panic in any
/// thread (the TUI's session guard has its own).
pub fn check(
    req: &TimingRequest<'_>,
    panic_hook: bool,
    progress: &mut dyn FnMut(Progress),
    stop: &std::sync::atomic::AtomicBool,
) -> anyhow::Result<TimingRun> {
    check_rpm(req.rpm)?;
    // The guard, before anything else touches the device.
    let WriteTarget {
        device,
        name,
        chosen,
    } = prepare_write(req.path, req.confirmation)?;
    if let Some(expected) = req.expect
        && let Some(why) = expected.refusal(Some(&chosen))
    {
        bail!("{}", neutralize_controls(&why));
    }
    let config = TimingConfig::for_device(device.size, device.logical)
        .map_err(|why| anyhow::anyhow!("{name}: {why}"))?;
    let started_unix = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);

    let host = SysRoot::host();
    let drives: Arc<dyn DriveControl> = Arc::new(LinuxDrives::new(host.clone()));
    let disk_name = direct::block_name(whole_disk(device.dev)).unwrap_or_else(|| name.clone());
    let disk = drives.device(&disk_name).ok();
    let identity = host.device_identity(&disk_name);
    let model = disk
        .as_ref()
        .and_then(|d| d.model.clone())
        .or(identity.model);
    let serial = disk.as_ref().and_then(|d| d.serial.clone());
    let kernel_write_cache = disk
        .as_ref()
        .and_then(|d| d.kernel_write_cache)
        .map(|k| k.as_str().to_string());
    let mut rot = rotation::rotation(&name);
    // A loop or zram device has no drive: where its flushes go is all there is to say, unless
    // the admin gave the rate of what is under it.
    let no_drive = crate::sys::flush::without_drive(&disk_name).filter(|_| req.rpm.is_none());
    if let Some(rpm) = req.rpm {
        rot = Rotation {
            rpm: Some(rpm),
            source: "--rpm".into(),
            ..rot
        };
    }

    // The cache switch: possible only on a whole disk whose drive lets the host switch it.
    let mut guarded: Option<(RestoreGuard, BlockDevice)> = None;
    let cache_note = match (&disk, chosen.disk.is_some()) {
        (_, true) => Some(format!(
            "{name} is a partition: the write cache is the whole disk {disk_name}'s, which a \
             partition's check does not switch"
        )),
        (None, false) => Some(format!("{disk_name} is not known to sysfs as a disk")),
        (Some(dev), false) => match cache_switchable(drives.as_ref(), dev) {
            Err(why) => Some(why),
            Ok(()) => match switch_guard(&drives, req.journal_dir, dev, panic_hook) {
                Ok(guard) => {
                    guarded = Some((guard, dev.clone()));
                    None
                }
                Err(why) => Some(why),
            },
        },
    };
    let mut switch = guarded.as_ref().map(|(guard, dev)| JournaledSwitch {
        guard,
        dev,
        restored: Vec::new(),
    });
    let cache = match (&mut switch, cache_note) {
        (Some(s), _) => CacheOff::Switch(s),
        (None, note) => CacheOff::Not(note.unwrap_or_else(|| "not switched".into())),
    };
    let outcome = run_timing(
        &device,
        rot,
        kernel_write_cache,
        &config,
        cache,
        progress,
        stop,
    );
    let mut restored = switch.map(|s| s.restored).unwrap_or_default();
    // Whatever the switch did not put back (an early end), the guard does now.
    let mut restore_error = None;
    if let Some((guard, _)) = &guarded {
        match guard.restore_now() {
            Ok(outcomes) => {
                let text = crate::report::restore::render_text(&outcomes);
                restored.extend(text.lines().map(|l| l.trim().to_string()));
                for o in outcomes.iter().filter(|o| o.failed()) {
                    restore_error = Some(format!("{:?}", o.result));
                }
            }
            Err(e) => restore_error = Some(e.to_string()),
        }
    }

    let (facts, ended, failed) = match outcome {
        Ok(f) => (f, None, None),
        Err(TimingEnd::Stopped(f)) => (*f, Some("stopped".to_string()), None),
        Err(TimingEnd::Failed { error, facts }) => (*facts, Some(error.clone()), Some(error)),
    };
    let facts = TimingFacts { no_drive, ..facts };
    let judgement = ended.is_none().then(|| judge(&facts));
    if let (Some(j), Some(dir)) = (&judgement, req.history_dir) {
        record(dir, &name, &facts, &config, j, started_unix, &|| {
            stop.load(std::sync::atomic::Ordering::Relaxed)
        });
    }
    Ok(TimingRun {
        device: req.path.display().to_string(),
        name,
        disk_name,
        model,
        serial,
        facts,
        judgement,
        ended,
        failed,
        restored,
        restore_error,
    })
}

/// Whether the drive's write cache can be switched off for the cache-off commits; why not.
fn cache_switchable(drives: &dyn DriveControl, dev: &BlockDevice) -> Result<(), String> {
    let cache = drives.drive_cache(dev).map_err(|e| e.to_string())?;
    match cache.enabled {
        None => Err("the drive reports no volatile write cache".into()),
        Some(false) => {
            Err("the drive's write cache was already off: the commits above are with it off".into())
        }
        Some(true) if !cache.changeable => Err(cache
            .fixed_reason
            .unwrap_or_else(|| "the drive does not let the host switch its cache".into())),
        Some(true) => Ok(()),
    }
}

/// The journaled changer behind its guard, with the disk claimed for the check.
fn switch_guard(
    drives: &Arc<dyn DriveControl>,
    journal_dir: &Path,
    dev: &BlockDevice,
    panic_hook: bool,
) -> Result<RestoreGuard, String> {
    let journal = Journal::open(journal_dir).map_err(|e| {
        format!(
            "cannot open the change journal in {}: {e}",
            journal_dir.display()
        )
    })?;
    // Only the write cache of this disk: in the screen's process the session's own switches
    // share the journal's owner, and are the session's to put back.
    let changer = Changer::new(Arc::clone(drives), journal, Lifetime::Session)
        .only(&dev.name, SettingKind::DriveWriteCache);
    changer
        .claim(dev, &format!("flush check of {}", dev.name))
        .map_err(|e| e.to_string())?;
    let guard = RestoreGuard::new(changer, crate::report::restore::announce);
    if panic_hook {
        guard.install_panic_hook();
    }
    Ok(guard)
}

/// Turns the cache off and back through the guard's changer.
struct JournaledSwitch<'a> {
    guard: &'a RestoreGuard,
    dev: &'a BlockDevice,
    /// What was put back, in words.
    restored: Vec<String>,
}

impl CacheSwitch for JournaledSwitch<'_> {
    fn turn_off(&mut self) -> Result<(), String> {
        let change = self
            .guard
            .changer()
            .set_write_cache(self.dev, false, false)
            .map_err(|e| e.to_string())?;
        if !change.took_effect() {
            return Err("the drive still reports it on".into());
        }
        Ok(())
    }

    fn put_back(&mut self) -> Result<(), String> {
        let outcomes = self.guard.restore_now().map_err(|e| e.to_string())?;
        let text = crate::report::restore::render_text(&outcomes);
        self.restored
            .extend(text.lines().map(|l| l.trim().to_string()));
        match outcomes.iter().find(|o| o.failed()) {
            Some(o) => Err(format!("{:?}", o.result)),
            None => Ok(()),
        }
    }
}

/// Adds the finished check to the history; says on stderr when it cannot.
fn record(
    dir: &Path,
    name: &str,
    facts: &TimingFacts,
    config: &TimingConfig,
    j: &Judgement,
    started_unix: u64,
    stop: &dyn Fn() -> bool,
) {
    let entry = HistoryEntry::of_flushcheck(
        SysRoot::host().disk_identity(name),
        name,
        FLUSH_TIMING_TEST,
        started_unix,
        format!(
            "timing, {} commits of {} bytes, {} dirty",
            config.commits,
            config.block,
            dirty_words(config.dirty_bytes)
        ),
        config.block,
        FlushRecord {
            verdict: j.verdict.as_str().to_string(),
            sentence: j.sentence.clone(),
            commit_ms: j.commit_ms,
            floor_ms: j.floor_ms,
            flush_after_dirty_ms: facts.flush_after_dirty_ms,
            ..FlushRecord::default()
        },
    );
    add_to_history(dir, &entry, stop);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::changes::RestoreScope;

    use crate::model::Transport;
    use crate::sys::{FakeDevice, FakeDrives};

    fn cache_on(drives: &FakeDrives) -> Option<bool> {
        let dev = drives.device("sda").unwrap();
        drives.drive_cache(&dev).unwrap().enabled
    }

    #[test]
    fn the_switch_turns_the_cache_off_and_puts_it_back_through_the_journal() {
        let dir = tempfile::tempdir().unwrap();
        let fake = Arc::new(FakeDrives::new().with(FakeDevice::new("sda", Transport::Sata)));
        let drives: Arc<dyn DriveControl> = Arc::clone(&fake) as Arc<dyn DriveControl>;
        let dev = drives.device("sda").unwrap();
        assert_eq!(cache_switchable(drives.as_ref(), &dev), Ok(()));
        let guard = switch_guard(&drives, dir.path(), &dev, false).unwrap();
        // Another switch of the disk meanwhile is refused (the claim).
        let other = Changer::new(
            Arc::clone(&drives),
            Journal::open(dir.path()).unwrap(),
            Lifetime::Persisted,
        );
        let mut switch = JournaledSwitch {
            guard: &guard,
            dev: &dev,
            restored: Vec::new(),
        };
        switch.turn_off().unwrap();
        assert_eq!(cache_on(&fake), Some(false));
        assert!(other.set_write_cache(&dev, true, false).is_err());
        // The journal holds the original until it is put back.
        assert_eq!(guard.changer().journal().entries().unwrap().len(), 1);
        switch.put_back().unwrap();
        assert_eq!(cache_on(&fake), Some(true));
        assert!(
            switch.restored.iter().any(|l| l.contains("put back to on")),
            "{:?}",
            switch.restored
        );
        assert!(guard.changer().journal().entries().unwrap().is_empty());
    }

    /// The screen's flush check runs in the session's process: neither its put-back nor its
    /// guard's drop may undo the session's own switches (another disk's scheduler, here).
    #[test]
    fn putting_the_cache_back_leaves_the_sessions_other_switches_alone() {
        let dir = tempfile::tempdir().unwrap();
        let fake = Arc::new(
            FakeDrives::new()
                .with(FakeDevice::new("sda", Transport::Sata))
                .with(FakeDevice::new("sdb", Transport::Sata)),
        );
        let drives: Arc<dyn DriveControl> = Arc::clone(&fake) as Arc<dyn DriveControl>;
        let (sda, sdb) = (drives.device("sda").unwrap(), drives.device("sdb").unwrap());
        let session = Changer::new(
            Arc::clone(&drives),
            Journal::open(dir.path()).unwrap(),
            Lifetime::Session,
        );
        let found = drives.scheduler(&sdb).unwrap().active.unwrap();
        let other = drives
            .scheduler(&sdb)
            .unwrap()
            .available
            .into_iter()
            .find(|s| *s != found)
            .unwrap();
        session.set_scheduler(&sdb, &other, false).unwrap();
        let sched_of_sdb = || drives.scheduler(&sdb).unwrap().active.unwrap();
        {
            let guard = switch_guard(&drives, dir.path(), &sda, false).unwrap();
            let mut switch = JournaledSwitch {
                guard: &guard,
                dev: &sda,
                restored: Vec::new(),
            };
            switch.turn_off().unwrap();
            switch.put_back().unwrap();
            assert_eq!(cache_on(&fake), Some(true));
            assert_eq!(sched_of_sdb(), other, "{:?}", switch.restored);
        }
        // The guard is gone; the session's switch still stands, and is the session's to undo.
        assert_eq!(sched_of_sdb(), other);
        let outcomes = session.restore(RestoreScope::Mine).unwrap();
        assert_eq!(outcomes.len(), 1, "{outcomes:?}");
        assert_eq!(sched_of_sdb(), found);
    }

    #[test]
    fn a_cache_that_cannot_be_switched_says_why() {
        let drives =
            FakeDrives::new().with(FakeDevice::new("sda", Transport::Sata).without_cache_control());
        let dev = drives.device("sda").unwrap();
        let why = cache_switchable(&drives, &dev).unwrap_err();
        assert!(!why.is_empty());
        let off = FakeDrives::new().with(FakeDevice::new("sdb", Transport::Sata));
        let sdb = off.device("sdb").unwrap();
        off.set_drive_cache(&sdb, false).unwrap();
        assert_eq!(
            cache_switchable(&off, &sdb).unwrap_err(),
            "the drive's write cache was already off: the commits above are with it off"
        );
    }
}
