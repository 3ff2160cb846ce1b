//! Every setting disktriage changes (I/O scheduler, drive write cache) goes through here: the
//! original is recorded in the journal BEFORE the change is made, the device is read back
//! afterwards, and what is reported is what the device says, not what was asked.
//!
//! `Changer` is the API the CLI, the future TUI and `run` use:
//! - `set_write_cache` / `set_scheduler`: journal, apply, read back;
//! - `keep`: the admin keeps a change (its entry leaves the journal);
//! - `restore`: puts originals back (this session's, or everything left over by processes that
//!   are gone), reading each back and reporting per change.
//!
//! `guard::RestoreGuard` restores a session's changes on drop, on SIGINT/SIGTERM/SIGHUP and on
//! panic. After SIGKILL or a crash, the journal is still there for `disktriage restore`.

pub mod guard;
pub mod journal;

use std::sync::Arc;

use serde::Serialize;

pub use journal::{Journal, JournalError, Recorded};

use crate::model::cache::on_off;
use crate::model::{
    BlockDevice, DeviceId, DriveCache, JournalEntry, KernelWriteCache, Lifetime, SchedulerSet,
    Setting, SettingKind, Transport,
};
use crate::sys::{DriveControl, DriveError, process};

#[derive(Debug, thiserror::Error)]
pub enum ChangeError {
    #[error(transparent)]
    Drive(#[from] DriveError),
    #[error(transparent)]
    Journal(#[from] JournalError),
    /// The change failed part-way and the device no longer holds its original value; the
    /// original is in the journal.
    #[error("{error}; the original ({original}) is recorded: `disktriage restore` puts it back")]
    Partial { error: DriveError, original: String },
}

/// What happened to the journal for one change.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum JournalNote {
    /// The original is recorded (now, or by an earlier change of the same setting).
    Recorded {
        id: u64,
        original: String,
        lifetime: Lifetime,
        earlier: bool,
    },
    /// `--keep`: nothing recorded; `dropped` lists older originals of this setting that are
    /// gone from the journal, so `restore` will not undo the kept value.
    Kept { dropped: Vec<String> },
    /// Nothing changed: the device already had the value.
    Unchanged,
    /// The change did not take: the device still has its original, nothing to restore.
    NotApplied,
    /// The device is back at the recorded original: the entry is gone, nothing to restore.
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
    /// Everything, except session changes of a disktriage that is still running (unless
    /// `force`): `disktriage restore`.
    All { force: bool },
    /// Session changes whose disktriage is gone (killed or crashed): what a new session offers
    /// to put back when it starts. Changes a single-shot command persisted stay.
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
}

impl Changer {
    /// `lifetime`: `Persisted` for single-shot commands, `Session` for long-lived processes
    /// (whose guard restores on exit).
    pub fn new(drives: Arc<dyn DriveControl>, journal: Journal, lifetime: Lifetime) -> Self {
        Changer {
            drives,
            journal,
            lifetime,
        }
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

    /// Records `original` unless `keep`; with `keep`, drops older persisted originals.
    fn journal_first(
        &self,
        dev: &BlockDevice,
        original: Setting,
        keep: bool,
    ) -> Result<(JournalNote, Option<Recorded>), ChangeError> {
        if keep {
            let dropped = self
                .journal
                .remove_persisted(&dev.name, original.kind())?
                .into_iter()
                .map(|e| e.original.value())
                .collect();
            return Ok((JournalNote::Kept { dropped }, None));
        }
        let rec = self
            .journal
            .record(&DeviceId::of(dev), original, self.lifetime)?;
        let note = JournalNote::Recorded {
            id: rec.entry.id,
            original: rec.entry.original.value(),
            lifetime: rec.entry.lifetime,
            earlier: rec.existing,
        };
        Ok((note, Some(rec)))
    }

    /// After a change: when the device holds the recorded original (the change did not
    /// take, or it went back to where it started), there is nothing to restore and the entry
    /// goes.
    fn settle(
        &self,
        rec: Option<&Recorded>,
        now: &Setting,
        note: JournalNote,
    ) -> Result<JournalNote, ChangeError> {
        match rec {
            Some(r) if &r.entry.original == now => {
                self.journal.remove(r.entry.id)?;
                Ok(if r.existing {
                    JournalNote::BackToOriginal
                } else {
                    JournalNote::NotApplied
                })
            }
            _ => Ok(note),
        }
    }

    /// Switches the drive's write cache: read, journal, apply, read back.
    pub fn set_write_cache(
        &self,
        dev: &BlockDevice,
        enabled: bool,
        keep: bool,
    ) -> Result<CacheChange, ChangeError> {
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
        if was == enabled {
            if keep {
                (change.journal, _) =
                    self.journal_first(dev, Setting::DriveWriteCache { enabled: was }, true)?;
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
        let original = Setting::DriveWriteCache { enabled: was };
        let (note, rec) = self.journal_first(dev, original.clone(), keep)?;
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
                return Err(self.failed_change(rec.as_ref(), &original, now.as_ref(), error));
            }
        }
        change.after = after?;
        change.kernel_after = self.drives.device(&dev.name)?.kernel_write_cache;
        change.journal = match &now {
            Some(now) => self.settle(rec.as_ref(), now, note)?,
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
        if was == name {
            if keep {
                (change.journal, _) =
                    self.journal_first(dev, Setting::Scheduler { name: was }, true)?;
            }
            return Ok(change);
        }
        let original = Setting::Scheduler { name: was };
        let (note, rec) = self.journal_first(dev, original.clone(), keep)?;
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
                return Err(self.failed_change(rec.as_ref(), &original, now.as_ref(), error));
            }
        }
        change.after = after?;
        change.journal = match &now {
            Some(now) => self.settle(rec.as_ref(), now, note)?,
            None => note,
        };
        Ok(change)
    }

    /// A change that failed: drop a new entry when the device still has its original, else
    /// say the original is recorded.
    fn failed_change(
        &self,
        rec: Option<&Recorded>,
        original: &Setting,
        now: Option<&Setting>,
        error: DriveError,
    ) -> ChangeError {
        match rec {
            Some(r) if now == Some(original) => {
                if !r.existing {
                    // Best effort: a stale entry would only restore the value it already has.
                    let _ = self.journal.remove(r.entry.id);
                }
                ChangeError::Drive(error)
            }
            Some(_) => ChangeError::Partial {
                error,
                original: original.value(),
            },
            None => ChangeError::Drive(error),
        }
    }

    /// The admin keeps a change: its entry leaves the journal, nothing will undo it.
    pub fn keep(&self, id: u64) -> Result<Option<JournalEntry>, ChangeError> {
        Ok(self.journal.remove(id)?)
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

    /// Session entries left by a disktriage that is gone (see `RestoreScope::Orphans`).
    pub fn orphans(&self) -> Result<Vec<JournalEntry>, ChangeError> {
        let me = self.journal.owner();
        Ok(self
            .journal
            .entries()?
            .into_iter()
            .filter(|e| {
                e.lifetime == Lifetime::Session && e.owner != me && !process::is_alive(&e.owner)
            })
            .collect())
    }

    /// Puts back the recorded originals in `scope`, newest first, reading each back. Entries
    /// restored (or found already original, or whose device is gone) leave the journal;
    /// failures and skipped ones stay.
    pub fn restore(&self, scope: RestoreScope) -> Result<Vec<RestoreOutcome>, ChangeError> {
        let me = self.journal.owner();
        let mut entries: Vec<JournalEntry> = self
            .journal
            .entries()?
            .into_iter()
            .filter(|e| match scope {
                RestoreScope::Mine => e.owner == me && e.lifetime == Lifetime::Session,
                RestoreScope::All { .. } => true,
                RestoreScope::Orphans => {
                    e.lifetime == Lifetime::Session && e.owner != me && !process::is_alive(&e.owner)
                }
            })
            .collect();
        entries.sort_by_key(|e| std::cmp::Reverse(e.id));
        let mut outcomes = Vec::new();
        for entry in entries {
            let result = self.restore_one(&entry, scope, me);
            let leaves = matches!(
                result,
                RestoreResult::Restored { .. }
                    | RestoreResult::AlreadyOriginal
                    | RestoreResult::Dropped { .. }
            );
            let result = if leaves {
                match self.journal.remove(entry.id) {
                    Ok(_) => result,
                    Err(e) => RestoreResult::Failed {
                        error: format!("restored, but the journal entry stays: {e}"),
                    },
                }
            } else {
                result
            };
            outcomes.push(RestoreOutcome { entry, result });
        }
        Ok(outcomes)
    }

    fn restore_one(
        &self,
        entry: &JournalEntry,
        scope: RestoreScope,
        me: crate::model::Owner,
    ) -> RestoreResult {
        if let RestoreScope::All { force: false } = scope
            && entry.lifetime == Lifetime::Session
            && entry.owner != me
            && process::is_alive(&entry.owner)
        {
            return RestoreResult::Skipped {
                reason: format!(
                    "disktriage (pid {}) is still running and restores it when it exits \
                     (--force to restore now)",
                    entry.owner.pid
                ),
            };
        }
        let dev = match self.drives.device(&entry.device.name) {
            Ok(dev) => dev,
            Err(DriveError::NoDevice(_)) => {
                return RestoreResult::Dropped {
                    reason: format!(
                        "{} is gone (a device that comes back starts with its defaults)",
                        entry.device.name
                    ),
                };
            }
            Err(e) => {
                return RestoreResult::Failed {
                    error: e.to_string(),
                };
            }
        };
        if let Some(reason) = entry.device.mismatch(&dev) {
            return RestoreResult::Dropped {
                reason: format!("{reason}: not the device that was changed"),
            };
        }
        let kind = entry.original.kind();
        let was = match self.current(&dev, kind) {
            Ok(now) if now == entry.original => return RestoreResult::AlreadyOriginal,
            Ok(now) => now.value(),
            Err(e) => {
                return RestoreResult::Failed {
                    error: e.to_string(),
                };
            }
        };
        if let Err(e) = self.apply(&dev, &entry.original) {
            return RestoreResult::Failed {
                error: e.to_string(),
            };
        }
        match self.current(&dev, kind) {
            Ok(now) if now == entry.original => RestoreResult::Restored {
                was,
                now: now.value(),
            },
            Ok(now) => RestoreResult::Failed {
                error: format!(
                    "wrote {}, the device reports {}",
                    entry.original.value(),
                    now.value()
                ),
            },
            Err(e) => RestoreResult::Failed {
                error: format!("restored, but reading back failed: {e}"),
            },
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

/// "on"/"off" for a cache state that may be absent.
pub fn cache_word(c: &DriveCache) -> &'static str {
    c.enabled.map(on_off).unwrap_or("none")
}

#[cfg(test)]
mod tests;
