//! The history's recorders, the one place each kind of result is added from (a test's
//! repeats, a scan, a triage's disks, a flush check) and a finished test's earlier runs
//! recalled for Results.

use super::*;

/// What `History::record_and_recall` did.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Recalled {
    /// The id of the record added (none when it could not be written).
    pub recorded: Option<String>,
    /// The disk's runs of other sessions, the newest, oldest first.
    pub past: Vec<HistoryEntry>,
    /// Lines worth showing (the history unwritable or unreadable, a bad line).
    pub notes: Vec<String>,
}

/// How a test not added to the history is said, before the reason.
pub const NOT_ADDED: &str = "the run was not added to the history";

impl History {
    /// The one recorder of both faces: adds a test's `runs` on `disk` as one entry; `stop`
    /// ends a wait for the lock. `None` when there is nothing to add; else the id and
    /// warnings, or why not (a sentence from `NOT_ADDED`).
    pub fn record_test(
        &self,
        disk: DiskIdentity,
        runs: &[RunReport],
        drive_cache: Option<String>,
        stop: &dyn Fn() -> bool,
    ) -> Option<Result<(String, Vec<String>), String>> {
        let entry = HistoryEntry::of_runs(disk, runs, drive_cache)?;
        Some(self.record(entry, stop))
    }

    /// The one recorder: adds `entry`; its id and warnings, or why not.
    pub fn record(
        &self,
        entry: HistoryEntry,
        stop: &dyn Fn() -> bool,
    ) -> Result<(String, Vec<String>), String> {
        match self.append_unless(&entry, stop) {
            Ok(warnings) => Ok((entry.id, warnings)),
            Err(e) => Err(format!("{NOT_ADDED}: {e:#}")),
        }
    }

    /// `record` for several entries at once: each id, or why none.
    pub fn record_all(
        &self,
        entries: Vec<HistoryEntry>,
        stop: &dyn Fn() -> bool,
    ) -> Result<(Vec<String>, Vec<String>), String> {
        match self.append_all_unless(&entries, stop) {
            Ok(warnings) => Ok((entries.into_iter().map(|e| e.id).collect(), warnings)),
            Err(e) => Err(format!("{NOT_ADDED}: {e:#}")),
        }
    }

    /// The one recorder of a surface scan (TUI and CLI), as `record` does.
    pub fn record_scan(
        &self,
        disk: DiskIdentity,
        update: &ScanUpdate,
        target: &str,
        stop: &dyn Fn() -> bool,
    ) -> Result<(String, Vec<String>), String> {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default();
        let started = now.saturating_sub(update.elapsed).as_secs();
        let entry = HistoryEntry::of_scan(
            disk,
            &update.device,
            target,
            update.block,
            started,
            ScanRecord::of(update),
        );
        self.record(entry, stop)
    }

    /// When a TUI test is over: adds it, then reads back the `keep` newest runs of the disk
    /// that are not this session's (`mine`). Nothing fails: problems become notes.
    pub fn record_and_recall(
        &self,
        disk: DiskIdentity,
        runs: &[RunReport],
        drive_cache: Option<String>,
        mine: &std::collections::HashSet<String>,
        keep: usize,
    ) -> Recalled {
        let mut out = Recalled::default();
        match self.record_test(disk.clone(), runs, drive_cache, &|| false) {
            Some(Ok((id, warnings))) => {
                out.recorded = Some(id);
                out.notes.extend(warnings);
            }
            Some(Err(not_added)) => out.notes.push(not_added),
            None => {}
        }
        match self.load() {
            Ok(loaded) => {
                if let Some(first) = loaded.problems.first() {
                    let more = loaded.problems.len() - 1;
                    out.notes.push(if more > 0 {
                        format!("{first} (and {more} more)")
                    } else {
                        first.clone()
                    });
                }
                let test = runs.first().map(|r| r.test.id()).unwrap_or_default();
                out.past = recall(&loaded, &disk, test, keep, |id| {
                    mine.contains(id) || out.recorded.as_deref() == Some(id)
                });
            }
            Err(e) => out.notes.push(format!("cannot read the history: {e:#}")),
        }
        for n in &mut out.notes {
            *n = crate::model::text::neutralize_controls(n);
        }
        out
    }
}

/// `disk`'s other runs: the `keep` newest, and `test`'s newest however old.
pub(super) fn recall(
    loaded: &Loaded,
    disk: &DiskIdentity,
    test: &str,
    keep: usize,
    mine: impl Fn(&str) -> bool,
) -> Vec<HistoryEntry> {
    let mut past: Vec<&HistoryEntry> = loaded.of_disk(disk).filter(|e| !mine(&e.id)).collect();
    let skip = past.len().saturating_sub(keep);
    let same_test = past.iter().rposition(|e| e.test == test);
    let mut kept: Vec<HistoryEntry> = Vec::with_capacity(keep + 1);
    for (i, e) in past.drain(..).enumerate() {
        if i >= skip || Some(i) == same_test {
            kept.push(e.clone());
        }
    }
    kept
}
