//! Every setting disktriage changes (I/O scheduler, drive write cache) goes through here: the
//! original is recorded in the journal BEFORE the change is made, the device is read back
//! afterwards, and what is reported is what the device says, not what was asked.
//!
//! `Changer` is the API the CLI, the TUI and `run` use:
//! - `set_write_cache` / `set_scheduler`: journal, apply, read back;
//! - `keep`: the admin keeps a change (the setting leaves the journal);
//! - `restore`: puts originals back (this session's, or everything left over by processes that
//!   are gone), reading each back and reporting per setting.
//!
//! Each of these holds the journal's lock (`Journal::lock`) from its first read of the device
//! to its last write of the journal, so a change and a restore of the same setting never
//! interleave: whichever comes second sees what the first did.
//!
//! # Which original is put back
//!
//! Several changes of one setting of one device can be outstanding at once (a session's, then
//! a single-shot command's). The rule:
//! - The original is the value before the FIRST outstanding change; a later change keeps it,
//!   recording only what it found (`found`: what a session puts back when it ends).
//! - Single-shot changes share one entry, a session's changes of a setting the session's; a
//!   session after another change, or the reverse, gets its own entry with the same original.
//! - A session on exit (`RestoreScope::Mine`; a killed one's: `Orphans`) undoes only its own
//!   change: if the device still holds what it set and nobody changed it since, it puts back
//!   what it found; else it leaves the device alone, hands its entry to `disktriage restore`
//!   (as a single-shot entry), and says so.
//! - `disktriage restore` (`All`) puts back the first original in one write and clears the
//!   setting's entries, leaving a live session's to it unless `--force`.
//! - `--keep` (and the TUI's keep) removes the setting's entries: nothing undoes a kept value.
//!
//! # Which device
//!
//! Each entry records the device's identity (`DeviceId`: number, serial, and
//! `DriveControl::identity`'s `diskseq`, loop image and inode, WWN, model). A recorded name is
//! used only if it is a plain kernel name (`is_kernel_name`) under `/sys/block`; else the entry
//! fails and stays for the admin. A device with another identity now (replugged, a loop device
//! on another image) is gone for good: its entry is dropped, nothing written, and the outcome
//! says what differs. Older entries without identity go by name, number and serial, with a note.
//!
//! Files: this one makes changes (`Changer`, its outcomes, the words for them); `restore`
//! puts originals back; `journal` keeps them on disk; `guard` (`RestoreGuard`) restores on
//! exit, signal and panic.

pub mod guard;
pub mod journal;
mod restore;

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use serde::Serialize;

pub use journal::{DeviceClaim, Journal, JournalError, Locked, Recorded};

use crate::model::{
    BlockDevice, DeviceId, DriveCache, JournalEntry, KernelWriteCache, Lifetime, SchedulerSet,
    Setting, SettingKind, Transport,
};
use crate::sys::{DriveControl, DriveError};

#[derive(Debug, thiserror::Error)]
pub enum ChangeError {
    #[error(transparent)]
    Drive(#[from] DriveError),
    #[error(transparent)]
    Journal(#[from] JournalError),
    /// Failed part-way: the device lost its original, which is recorded.
    #[error("{error}; the original ({original}) is recorded: `disktriage restore` puts it back")]
    Partial { error: DriveError, original: String },
}

/// What happened to the journal for one change.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum JournalNote {
    /// The original is recorded (now, or by an earlier change).
    Recorded {
        id: u64,
        /// What `disktriage restore` puts back.
        original: String,
        /// The value this change found: what a session puts back when it ends.
        found: String,
        lifetime: Lifetime,
        earlier: bool,
    },
    /// `--keep`: nothing recorded; `dropped` lists the older originals removed.
    Kept { dropped: Vec<String> },
    /// Nothing changed: the device already had the value.
    Unchanged,
    /// The change did not take: nothing to restore.
    NotApplied,
    /// Back at the recorded original: the entry is gone.
    BackToOriginal,
}

/// The result of switching the drive's write cache.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CacheChange {
    pub device: String,
    pub transport: Transport,
    pub requested: bool,
    pub before: DriveCache,
    /// Read back from the drive after the change.
    pub after: DriveCache,
    /// The kernel's flush policy afterwards.
    pub kernel_after: Option<KernelWriteCache>,
    pub journal: JournalNote,
    pub notes: Vec<String>,
}

impl CacheChange {
    /// The drive reports the requested state.
    pub fn took_effect(&self) -> bool {
        self.after.enabled == Some(self.requested)
    }
}

/// The result of switching the I/O scheduler.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SchedChange {
    pub device: String,
    pub requested: String,
    pub before: SchedulerSet,
    /// Read back after the change.
    pub after: SchedulerSet,
    pub journal: JournalNote,
    pub notes: Vec<String>,
}

impl SchedChange {
    pub fn took_effect(&self) -> bool {
        self.after.active.as_deref() == Some(self.requested.as_str())
    }
}

/// Which journal entries `restore` handles.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RestoreScope {
    /// This process's session changes (the guard, on exit).
    Mine,
    /// `disktriage restore`: all but a live session's changes (unless `force`).
    All { force: bool },
    /// A gone disktriage's session changes, offered to a new session.
    Orphans,
}

/// What restoring one entry came to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "result", rename_all = "snake_case")]
pub enum RestoreResult {
    /// Put back and read back.
    Restored { was: String, now: String },
    /// The device already had the original; the entry is gone.
    AlreadyOriginal,
    /// Left in the journal (a running owner).
    Skipped { reason: String },
    /// Removed without restoring: the device is gone or is another device now.
    Dropped { reason: String },
    /// Restoring failed; the entry stays in the journal.
    Failed { error: String },
}

/// One entry and its outcome.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RestoreOutcome {
    pub entry: JournalEntry,
    #[serde(flatten)]
    pub result: RestoreResult,
    /// What the admin should know besides (an unchecked identity).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

impl RestoreOutcome {
    /// True when the entry needed attention and did not get it (failed).
    pub fn failed(&self) -> bool {
        matches!(self.result, RestoreResult::Failed { .. })
    }
}

/// Applies changes through a `DriveControl`, journal first.
pub struct Changer {
    drives: Arc<dyn DriveControl>,
    journal: Journal,
    lifetime: Lifetime,
    /// Devices claimed (`claim`) by kernel name, held until `release` or drop.
    claims: Mutex<HashMap<String, DeviceClaim>>,
    /// The one device and setting this changer restores (`only`).
    only: Option<(String, SettingKind)>,
}

impl Changer {
    /// `lifetime`: `Persisted` for single-shot commands, else `Session`.
    pub fn new(drives: Arc<dyn DriveControl>, journal: Journal, lifetime: Lifetime) -> Self {
        Changer {
            drives,
            journal,
            lifetime,
            claims: Mutex::new(HashMap::new()),
            only: None,
        }
    }

    /// A changer that restores only `device`'s `kind`: a task inside a session (the screen's
    /// flush check). The journal knows entries by process, so otherwise putting the task's
    /// setting back would undo the admin's own switches too.
    pub fn only(mut self, device: &str, kind: SettingKind) -> Self {
        self.only = Some((device.to_string(), kind));
        self
    }

    /// Claims `dev`'s settings for a sweep (`what`: "scheduler sweep"): until `release`, any
    /// other changer's change or claim of it, in any process, is refused naming this one
    /// (`JournalError::Claimed`). Claiming twice is one claim.
    pub fn claim(&self, dev: &BlockDevice, what: &str) -> Result<(), ChangeError> {
        let mut claims = self.claims.lock().unwrap_or_else(PoisonError::into_inner);
        if !claims.contains_key(&dev.name) {
            let claim = self.journal.claim(&dev.name, what)?;
            claims.insert(dev.name.clone(), claim);
        }
        Ok(())
    }

    /// Gives a claim up (the sweep ended and put its setting back).
    pub fn release(&self, device: &str) {
        self.claims
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(device);
    }

    /// Refuses a change of `dev` while another holds a claim on it.
    fn check_claim(&self, dev: &BlockDevice) -> Result<(), ChangeError> {
        let mine = self
            .claims
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .contains_key(&dev.name);
        if !mine {
            self.journal.check_unclaimed(&dev.name)?;
        }
        Ok(())
    }

    pub fn journal(&self) -> &Journal {
        &self.journal
    }

    pub fn drives(&self) -> &Arc<dyn DriveControl> {
        &self.drives
    }

    pub fn lifetime(&self) -> Lifetime {
        self.lifetime
    }

    /// The device's identity as recorded in the journal.
    fn identify(&self, dev: &BlockDevice) -> DeviceId {
        let mut id = DeviceId::of(dev);
        id.identity = self.drives.identity(dev);
        id
    }

    /// Records `found` first, or with `keep` drops the setting's entries.
    fn journal_first(
        &self,
        j: &mut Locked<'_>,
        dev: &BlockDevice,
        found: Setting,
        set_to: Setting,
        keep: bool,
    ) -> Result<(JournalNote, Option<Recorded>), ChangeError> {
        if keep {
            let mut dropped: Vec<String> = j
                .remove_setting(&dev.name, found.kind())
                .into_iter()
                .map(|e| e.original.value())
                .collect();
            dropped.dedup();
            if !dropped.is_empty() {
                j.save()?;
            }
            return Ok((JournalNote::Kept { dropped }, None));
        }
        let rec = j.record(&self.identify(dev), found, Some(set_to), self.lifetime);
        j.save()?;
        let note = JournalNote::Recorded {
            id: rec.entry.id,
            original: rec.entry.original.value(),
            found: rec.entry.found().value(),
            lifetime: rec.entry.lifetime,
            earlier: rec.existing,
        };
        Ok((note, Some(rec)))
    }

    /// After a change: when the device holds what it found, the entry goes.
    fn settle(
        &self,
        j: &mut Locked<'_>,
        rec: Option<&Recorded>,
        now: &Setting,
        note: JournalNote,
    ) -> Result<JournalNote, ChangeError> {
        let Some(r) = rec else { return Ok(note) };
        if r.entry.found() == now {
            j.remove(r.entry.id);
            j.save()?;
            return Ok(if r.created {
                JournalNote::NotApplied
            } else {
                JournalNote::BackToOriginal
            });
        }
        if let Some(e) = j.get_mut(r.entry.id)
            && e.set_to.as_ref() != Some(now)
        {
            e.set_to = Some(now.clone());
            j.save()?;
        }
        Ok(note)
    }

    /// Switches the drive's write cache: read, journal, apply, read back.
    pub fn set_write_cache(
        &self,
        dev: &BlockDevice,
        enabled: bool,
        keep: bool,
    ) -> Result<CacheChange, ChangeError> {
        let mut j = self.journal.lock()?;
        self.check_claim(dev)?;
        let before = self.drives.drive_cache(dev)?;
        let Some(was) = before.enabled else {
            return Err(DriveError::not_supported_because(
                "drive write cache control",
                dev.transport,
                "the drive reports no volatile write cache",
            )
            .into());
        };
        let mut change = CacheChange {
            device: dev.name.clone(),
            transport: dev.transport,
            requested: enabled,
            before: before.clone(),
            after: before.clone(),
            kernel_after: self.drives.device(&dev.name)?.kernel_write_cache,
            journal: JournalNote::Unchanged,
            notes: Vec::new(),
        };
        let found = Setting::DriveWriteCache { enabled: was };
        let requested = Setting::DriveWriteCache { enabled };
        if was == enabled {
            if keep {
                (change.journal, _) = self.journal_first(&mut j, dev, found, requested, true)?;
            }
            return Ok(change);
        }
        if !before.changeable {
            return Err(DriveError::not_supported_because(
                "drive write cache control",
                dev.transport,
                before
                    .fixed_reason
                    .clone()
                    .unwrap_or_else(|| "the drive does not let the host switch its cache".into()),
            )
            .into());
        }
        let (note, rec) = self.journal_first(&mut j, dev, found.clone(), requested, keep)?;
        let applied = self.drives.set_drive_cache(dev, enabled);
        // Read back whatever happened: the report is what the drive says.
        let after = self.drives.drive_cache(dev);
        let now = after
            .as_ref()
            .ok()
            .and_then(|c| c.enabled)
            .map(|enabled| Setting::DriveWriteCache { enabled });
        match applied {
            Ok(a) => change.notes.extend(a.notes),
            Err(error) => {
                return Err(self.failed_change(&mut j, rec.as_ref(), &found, now.as_ref(), error));
            }
        }
        change.after = after?;
        change.kernel_after = self.drives.device(&dev.name)?.kernel_write_cache;
        change.journal = match &now {
            Some(now) => self.settle(&mut j, rec.as_ref(), now, note)?,
            None => note,
        };
        Ok(change)
    }

    /// Switches the I/O scheduler: read, journal, apply, read back.
    pub fn set_scheduler(
        &self,
        dev: &BlockDevice,
        name: &str,
        keep: bool,
    ) -> Result<SchedChange, ChangeError> {
        let mut j = self.journal.lock()?;
        self.check_claim(dev)?;
        let before = self.drives.scheduler(dev)?;
        let mut change = SchedChange {
            device: dev.name.clone(),
            requested: name.to_string(),
            before: before.clone(),
            after: before.clone(),
            journal: JournalNote::Unchanged,
            notes: Vec::new(),
        };
        let Some(was) = before.active.clone() else {
            return Err(DriveError::not_supported_because(
                "I/O scheduler",
                dev.transport,
                "the kernel offers no scheduler for this queue",
            )
            .into());
        };
        let requested = Setting::Scheduler {
            name: name.to_string(),
        };
        if was == name {
            if keep {
                let found = Setting::Scheduler { name: was };
                (change.journal, _) = self.journal_first(&mut j, dev, found, requested, true)?;
            }
            return Ok(change);
        }
        let found = Setting::Scheduler { name: was };
        let (note, rec) = self.journal_first(&mut j, dev, found.clone(), requested, keep)?;
        let applied = self.drives.set_scheduler(dev, name);
        let after = self.drives.scheduler(dev);
        let now = after
            .as_ref()
            .ok()
            .and_then(|s| s.active.clone())
            .map(|name| Setting::Scheduler { name });
        match applied {
            Ok(a) => change.notes.extend(a.notes),
            Err(error) => {
                return Err(self.failed_change(&mut j, rec.as_ref(), &found, now.as_ref(), error));
            }
        }
        change.after = after?;
        change.journal = match &now {
            Some(now) => self.settle(&mut j, rec.as_ref(), now, note)?,
            None => note,
        };
        Ok(change)
    }

    /// A failed change: its new entry goes if the device kept its value.
    fn failed_change(
        &self,
        j: &mut Locked<'_>,
        rec: Option<&Recorded>,
        found: &Setting,
        now: Option<&Setting>,
        error: DriveError,
    ) -> ChangeError {
        match rec {
            Some(r) if now == Some(found) => {
                if r.created {
                    // Best effort: a stale entry would only restore the value it already has.
                    j.remove(r.entry.id);
                    let _ = j.save();
                }
                ChangeError::Drive(error)
            }
            Some(r) => ChangeError::Partial {
                error,
                original: r.entry.original.value(),
            },
            None => ChangeError::Drive(error),
        }
    }

    /// The admin keeps a change: its setting leaves the journal.
    pub fn keep(&self, id: u64) -> Result<Option<JournalEntry>, ChangeError> {
        let mut j = self.journal.lock()?;
        let Some(entry) = j.get(id).cloned() else {
            return Ok(None);
        };
        j.remove_setting(&entry.device.name, entry.original.kind());
        j.save()?;
        Ok(Some(entry))
    }

    /// The current value of the setting an entry is about.
    fn current(&self, dev: &BlockDevice, kind: SettingKind) -> Result<Setting, DriveError> {
        match kind {
            SettingKind::Scheduler => {
                let set = self.drives.scheduler(dev)?;
                set.active
                    .map(|name| Setting::Scheduler { name })
                    .ok_or_else(|| DriveError::not_supported("I/O scheduler", dev.transport))
            }
            SettingKind::DriveWriteCache => {
                let cache = self.drives.drive_cache(dev)?;
                cache
                    .enabled
                    .map(|enabled| Setting::DriveWriteCache { enabled })
                    .ok_or_else(|| {
                        DriveError::not_supported_because(
                            "drive write cache control",
                            dev.transport,
                            "the drive reports no volatile write cache",
                        )
                    })
            }
        }
    }

    fn apply(&self, dev: &BlockDevice, setting: &Setting) -> Result<(), DriveError> {
        match setting {
            Setting::Scheduler { name } => self.drives.set_scheduler(dev, name).map(|_| ()),
            Setting::DriveWriteCache { enabled } => {
                self.drives.set_drive_cache(dev, *enabled).map(|_| ())
            }
        }
    }
}

/// Sentence for a journal note, for reports.
pub fn describe_note(note: &JournalNote, journal_dir: &std::path::Path) -> String {
    match note {
        JournalNote::Recorded {
            original,
            lifetime: Lifetime::Persisted,
            earlier,
            ..
        } => format!(
            "the original ({original}) is recorded in {}{}: `disktriage restore` puts it back; \
             --keep makes a change permanent",
            journal_dir.display(),
            if *earlier {
                " by an earlier change"
            } else {
                ""
            }
        ),
        JournalNote::Recorded {
            original,
            found,
            lifetime: Lifetime::Session,
            ..
        } if found != original => format!(
            "what this session found ({found}) is put back when it ends; the first original \
             ({original}) stays recorded for `disktriage restore`"
        ),
        JournalNote::Recorded {
            original,
            lifetime: Lifetime::Session,
            ..
        } => format!("the original ({original}) is put back when this session ends"),
        JournalNote::Kept { dropped } if dropped.is_empty() => {
            "kept: nothing recorded, this is the setting from now on".into()
        }
        JournalNote::Kept { dropped } => format!(
            "kept: nothing recorded, and the earlier recorded original ({}) is dropped so \
             `disktriage restore` will not undo it",
            dropped.join(", ")
        ),
        JournalNote::Unchanged => "nothing changed, nothing recorded".into(),
        JournalNote::NotApplied => "the device kept its setting, so nothing is recorded".into(),
        JournalNote::BackToOriginal => {
            "this is the recorded original again: its journal entry is removed".into()
        }
    }
}

/// "on"/"off" for a cache state that may be absent ("none").
pub fn cache_word(c: &DriveCache) -> &'static str {
    crate::model::cache::cache_word(c.enabled)
}

#[cfg(test)]
mod tests;
