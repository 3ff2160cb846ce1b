//! The session's results: one record per test started from the TUI, with every repeat's
//! report, the figures averaged over the repeats with their spread, and the comparison of two
//! records. Earlier sessions' runs come back from the history as records (`past`) without
//! reports.

use std::path::PathBuf;

use super::{App, Screen};
pub use crate::bench::analysis::compare::{Delta, Significance, Stat, delta};
use crate::bench::analysis::curve::PhaseSample;
pub use crate::bench::analysis::figures::{PhaseFigures, RowFigures};
use crate::bench::analysis::figures::{figures, row};
use crate::bench::exec::session::RunRequest;
use crate::bench::plan::test_name::TestName;
use crate::bench::results::outcome::RunReport;
use crate::event::{Cmd, TaskError};
use crate::history::HistoryEntry;
use crate::model::{DiskIdentity, KernelWriteCache};
use crate::report::export::ExportFormat;

/// One test as the admin started it, with all its repeats.
#[derive(Debug, Clone, PartialEq)]
pub struct RunRecord {
    pub id: usize,
    pub device: String,
    pub test: TestName,
    pub request: RunRequest,
    /// "bs 4k, QD32, 1 worker, random read" once known.
    pub params: String,
    pub scheduler: Option<String>,
    pub kernel_cache: Option<KernelWriteCache>,
    /// The drive's own write cache when the run started ("on", "off", "n/a").
    pub drive_cache: Option<String>,
    pub repeats_wanted: u32,
    pub runs: Vec<RunReport>,
    pub error: Option<String>,
    /// Written to a file (JSON, CSV or fio) since its last repeat finished.
    pub exported: bool,
    /// How many of `runs` the history has taken (it keeps figures, not per-interval series).
    pub runs_in_history: usize,
    /// A run of an earlier session, loaded from the history.
    pub past: Option<Box<HistoryEntry>>,
    /// The device vanished (`devices::Vanished`): no rerun, it would land on another disk.
    pub device_gone: bool,
    /// What the history knows its target by, once known; `Results::earlier_runs` matches
    /// runs across sessions by it.
    pub disk: Option<DiskIdentity>,
}

impl RunRecord {
    /// How the screens number it: "3" for the session's third run, "h1" for the first run
    /// from the history (counted apart: `Results::next_id`).
    pub fn number(&self) -> String {
        match self.past {
            Some(_) => format!("h{}", self.id + 1),
            None => format!("{}", self.id + 1),
        }
    }

    /// `id` counts the session's runs (`Results::next_id`).
    pub fn new(id: usize, device: String, request: RunRequest, repeats: u32) -> Self {
        RunRecord {
            id,
            device,
            test: request.test,
            request,
            params: String::new(),
            scheduler: None,
            kernel_cache: None,
            drive_cache: None,
            repeats_wanted: repeats,
            runs: Vec::new(),
            error: None,
            exported: false,
            runs_in_history: 0,
            past: None,
            device_gone: false,
            disk: None,
        }
    }

    /// Per phase (in plan order), the figures over the completed repeats, or as the history
    /// recorded them.
    pub fn figures(&self) -> Vec<PhaseFigures> {
        match &self.past {
            Some(past) if self.runs.is_empty() => past.figures.clone(),
            _ => figures(&self.runs),
        }
    }

    /// Every phase with a rate, as the charts and grids read them.
    pub fn samples(&self) -> Vec<PhaseSample> {
        self.figures()
            .iter()
            .filter_map(PhaseFigures::sample)
            .collect()
    }

    /// The headline phase (the first one).
    pub fn headline(&self) -> Option<PhaseFigures> {
        self.figures().into_iter().next()
    }

    /// The record's row in Results: one phase's figures, or for several the peak MB/s and
    /// IOPS, the worst p99 and the largest spread.
    pub fn row(&self) -> Option<RowFigures> {
        row(&self.figures())
    }

    /// Has figures to show and compare: a finished repeat, or a past run.
    pub fn has_results(&self) -> bool {
        !self.runs.is_empty() || self.past.is_some()
    }

    /// What it ran on, as the admin named it: "sdb" for a device, the path for a file.
    pub fn target_name(&self) -> String {
        let path = self.request.target.display().to_string();
        match path.strip_prefix("/dev/") {
            Some(_) if !self.device.is_empty() => self.device.clone(),
            _ => path,
        }
    }

    /// When its first repeat started (seconds since the epoch), as the history records it.
    pub fn started_unix(&self) -> Option<u64> {
        match &self.past {
            Some(p) => Some(p.started_unix),
            None => self.runs.first().map(|r| r.started_unix),
        }
    }

    /// Did it run on the same target as `other`? By the history's identity when both have one
    /// (a renamed disk is the same disk; a loop device on another image is not); else two
    /// session runs by path, unless the device went away. A past run never matches by name.
    fn same_target(&self, other: &RunRecord) -> bool {
        match (&self.disk, &other.disk) {
            (Some(a), Some(b)) => a == b,
            _ if self.past.is_none() && other.past.is_none() => {
                !self.device_gone
                    && !other.device_gone
                    && self.request.target == other.request.target
            }
            _ => false,
        }
    }

    /// Repeats completed (a past run's as recorded).
    pub fn repeats_done(&self) -> usize {
        match &self.past {
            Some(p) if self.runs.is_empty() => p.repeats as usize,
            _ => self.runs.len(),
        }
    }

    /// "O_DIRECT" or "BUFFERED", with ", huge pages" (`--huge-pages`), so Compare names that
    /// difference too.
    pub fn io_path(&self) -> Option<&'static str> {
        let path = match &self.past {
            Some(p) if self.runs.is_empty() => Some((p.settings.direct, p.settings.huge_pages)),
            _ => self
                .runs
                .first()
                .map(|r| (r.plan.direct, r.plan.huge_pages)),
        };
        path.map(|(direct, huge)| crate::bench::plan::io_path_label(direct, huge))
    }

    /// What its phases' rates are over ("write-busy" for a rewrite); None for the measured
    /// time.
    pub fn time_base(&self) -> Option<String> {
        self.figures()
            .iter()
            .map(|f| f.time_base)
            .find(|b| b.is_busy())
            .map(|b| b.as_str().to_string())
    }

    /// The engine that ran ("uring", "sync", "auto" when phases differ).
    pub fn engine(&self) -> Option<String> {
        match &self.past {
            Some(p) if self.runs.is_empty() => Some(p.settings.engine.clone()),
            _ => self
                .runs
                .first()
                .map(|r| r.outcome.engine.as_str().to_string()),
        }
    }

    /// A record for a run of an earlier session, from the history. `None` for a test this
    /// version does not know.
    pub fn from_history(id: usize, entry: HistoryEntry) -> Option<RunRecord> {
        let test: TestName = entry.test.parse().ok()?;
        let request = RunRequest {
            target: entry.target.clone().into(),
            test,
            params: Default::default(),
            confirmation: None,
            temperature: Default::default(),
            device: None,
        };
        let s = &entry.settings;
        Some(RunRecord {
            id,
            device: entry.device.clone(),
            test,
            request,
            params: s.params.clone(),
            scheduler: s.scheduler.clone(),
            kernel_cache: s.kernel_cache.as_deref().and_then(|k| k.parse().ok()),
            drive_cache: crate::model::cache::recorded_drive_cache(s.drive_cache.as_deref()),
            repeats_wanted: entry.repeats,
            runs: Vec::new(),
            error: entry.error.clone(),
            // It is in the history already: nothing is lost on quitting.
            exported: true,
            runs_in_history: 0,
            disk: Some(entry.disk.clone()),
            past: Some(Box::new(entry)),
            device_gone: false,
        })
    }
}

impl RunRecord {
    /// The full report: the Results figures (per phase, the mean and each repeat's value),
    /// then every repeat's own report.
    pub fn report_text(&self) -> String {
        if let Some(p) = self.past.as_deref().filter(|_| self.runs.is_empty()) {
            return past_report(p);
        }
        crate::report::run::render_repeats_text(
            &self.runs,
            &format!(
                "mean of {} repeats, as Results and Compare show it:",
                self.runs.len()
            ),
        )
    }
}

/// A past run's report: what the history kept (its settings and figures).
fn past_report(p: &HistoryEntry) -> String {
    use std::fmt::Write as _;
    let s = &p.settings;
    let mut out = format!(
        "past run of {} (from the history), {} on {} ({})\n",
        p.when(),
        p.test,
        p.target,
        p.device
    );
    let _ = writeln!(out, "disk: {}", p.disk);
    let _ = writeln!(
        out,
        "{}; engine {} (asked {}); {}; scheduler {}; drive cache {}; kernel {}",
        s.params,
        s.engine,
        s.engine_asked,
        crate::bench::plan::io_path_label(s.direct, s.huge_pages),
        s.scheduler.as_deref().unwrap_or("-"),
        crate::model::cache::drive_cache_shown(s.drive_cache.as_deref()),
        s.kernel_cache.as_deref().unwrap_or("-"),
    );
    let _ = writeln!(out, "mean of {} repeat(s):", p.repeats);
    for f in &p.figures {
        let spread = f
            .mbps
            .spread_pct
            .map_or(String::new(), |s| format!(" (spread {s:.1} %)"));
        let _ = writeln!(
            out,
            "  {}: {:.1} MB/s{spread}, {:.0} IOPS{}",
            f.label,
            f.mbps.mean,
            f.iops.mean,
            f.p99_ms
                .map_or(String::new(), |p| format!(", p99 {:.3} ms", p.mean))
        );
    }
    if let Some(e) = &p.error {
        let _ = writeln!(out, "error: {e}");
    }
    // The history's values may hold anything; the line breaks must be ours.
    out.lines()
        .map(|l| crate::model::text::neutralize_controls(l) + "\n")
        .collect()
}

/// The session's records and what the Results and Compare screens have selected.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Results {
    pub records: Vec<RunRecord>,
    /// Selected row of Results.
    pub row: usize,
    /// Records marked for comparison (at most two, in marking order).
    pub marks: Vec<usize>,
    /// First row of the Compare table shown.
    pub compare_scroll: u16,
    /// Compare shows the last two runs whatever is marked (`c` on the Run screen); marking a
    /// run, or `c` on Results, ends it.
    pub last_two: bool,
    /// The record an export was asked for, until the loop says how it went.
    exporting: Option<usize>,
}

impl Results {
    pub fn selected(&self) -> Option<&RunRecord> {
        self.records.get(self.row)
    }

    /// Records with results that were not exported (lost on quitting).
    pub fn unsaved(&self) -> impl Iterator<Item = usize> + '_ {
        self.records
            .iter()
            .enumerate()
            .filter(|(_, r)| !r.runs.is_empty() && !r.exported)
            .map(|(i, _)| i)
    }

    /// Of the records not exported, those whose every run the history has taken.
    pub fn unsaved_in_history(&self) -> usize {
        self.unsaved()
            .filter(|&i| self.records[i].runs_in_history >= self.records[i].runs.len())
            .count()
    }

    /// The loop says what the history knows `record`'s target by.
    pub(super) fn identified(&mut self, record: usize, disk: DiskIdentity) {
        if let Some(rec) = self.records.get_mut(record) {
            rec.disk = Some(disk);
        }
    }

    /// The loop added `runs` more of `record`'s runs to the history.
    pub(super) fn recorded_in_history(&mut self, record: usize, runs: usize) {
        if let Some(rec) = self.records.get_mut(record) {
            rec.runs_in_history += runs;
        }
    }

    /// The two records the Compare screen shows: the marked ones, else the last two.
    pub fn comparison(&self) -> Option<(usize, usize)> {
        let done: Vec<usize> = (0..self.records.len())
            .filter(|&i| !self.records[i].runs.is_empty())
            .collect();
        let last_two = (done.len() >= 2).then(|| (done[done.len() - 2], done[done.len() - 1]));
        match self.marks.as_slice() {
            _ if self.last_two => last_two,
            // A is the first marked, as Results shows it.
            [a, b] => Some((*a, *b)),
            _ => last_two,
        }
    }

    /// Earlier runs of `record`'s test on its target, from the session or the history, most
    /// recent first: what `b` compares with. A failed run is no "before".
    pub fn earlier_runs(&self, record: usize) -> Vec<usize> {
        let Some(shown) = self.records.get(record) else {
            return Vec::new();
        };
        // By start time; within the session by run number (a clock step must not reorder
        // runs); a past run before a session run of the same second.
        let order = |i: usize| {
            let r = &self.records[i];
            (r.started_unix().unwrap_or(0), r.past.is_none(), r.id)
        };
        let earlier = |i: usize| match (self.records[i].past.is_none(), shown.past.is_none()) {
            (true, true) => self.records[i].id < shown.id,
            _ => order(i) < order(record),
        };
        let mut found: Vec<usize> = (0..self.records.len())
            .filter(|&i| i != record)
            .filter(|&i| {
                let r = &self.records[i];
                // Cheap tests first: the figures are worked out last.
                r.test == shown.test
                    && r.has_results()
                    && r.error.is_none()
                    && r.same_target(shown)
                    && r.row().is_some()
            })
            .filter(|&i| earlier(i))
            .collect();
        found.sort_by_key(|&i| std::cmp::Reverse(order(i)));
        found
    }

    /// What `b` compares `record` with: its latest earlier run, if `record` has figures.
    pub fn before(&self, record: usize) -> Option<usize> {
        let shown = self.records.get(record)?;
        if !shown.has_results() || shown.row().is_none() {
            return None;
        }
        self.earlier_runs(record).first().copied()
    }

    /// Adds earlier sessions' runs (oldest first) after the session's records, skipping those
    /// already shown; returns how many were added.
    pub fn add_past(&mut self, entries: Vec<HistoryEntry>) -> usize {
        let mut added = 0;
        for e in entries {
            let known = self
                .records
                .iter()
                .any(|r| r.past.as_ref().is_some_and(|p| p.id == e.id));
            if known {
                continue;
            }
            if let Some(rec) = RunRecord::from_history(self.next_id(true), e) {
                self.records.push(rec);
                added += 1;
            }
        }
        added
    }

    /// The next record's number: session runs and past runs are counted apart (#1, #2, ...
    /// and h1, h2, ...), so a history row never takes a run's number.
    pub fn next_id(&self, past: bool) -> usize {
        self.records
            .iter()
            .filter(|r| r.past.is_some() == past)
            .count()
    }

    /// The records in Results' order: the session's runs, then the history's.
    pub fn shown_order(&self) -> Vec<usize> {
        let (session, past): (Vec<usize>, Vec<usize>) =
            (0..self.records.len()).partition(|&i| self.records[i].past.is_none());
        session.into_iter().chain(past).collect()
    }

    /// The session's latest record (past runs from the history are not the session's).
    pub fn latest(&self) -> Option<usize> {
        self.records.iter().rposition(|r| r.past.is_none())
    }

    /// Marks the selected record for comparison, or unmarks it; the oldest of two goes.
    pub(in crate::app) fn toggle_mark(&mut self) {
        let r = self.row;
        self.last_two = false;
        if let Some(pos) = self.marks.iter().position(|&m| m == r) {
            self.marks.remove(pos);
        } else {
            if self.marks.len() == 2 {
                self.marks.remove(0);
            }
            self.marks.push(r);
        }
    }

    /// The command that exports a record, remembered until the loop answers.
    pub(super) fn export(
        &mut self,
        record: usize,
        format: ExportFormat,
        dir: &std::path::Path,
    ) -> Option<Cmd> {
        let rec = self.records.get(record)?;
        self.exporting = Some(record);
        Some(Cmd::Export {
            reports: rec.runs.clone(),
            format,
            stem: crate::report::export::file_stem(&rec.device, rec.test.id(), rec.id + 1),
            dir: dir.to_path_buf(),
        })
    }

    /// The loop wrote the export: the record is safe to discard.
    pub(super) fn exported(&mut self) {
        if let Some(rec) = self.exporting.take().and_then(|i| self.records.get_mut(i)) {
            rec.exported = true;
        }
    }

    /// The export failed: nothing is marked exported.
    pub(super) fn export_failed(&mut self) {
        self.exporting = None;
    }
}

impl App {
    /// `b` on Results: the selected run (B) against its latest earlier run (A), or why there
    /// is none.
    pub(super) fn compare_before(&mut self) -> Vec<Cmd> {
        let row = self.results.row;
        let Some(shown) = self.results.selected() else {
            return Vec::new();
        };
        if !shown.has_results() || shown.row().is_none() {
            let why = format!("run #{} has no figures to compare", shown.number());
            self.info(why);
            return Vec::new();
        }
        let Some(before) = self.results.before(row) else {
            let why = format!(
                "no earlier {} on {} in this session or the history",
                shown.test.id(),
                crate::model::text::neutralize_controls(&shown.target_name())
            );
            self.info(why);
            return Vec::new();
        };
        self.results.last_two = false;
        self.results.marks = vec![before, row];
        self.results.compare_scroll = 0;
        self.screen = Screen::Compare;
        Vec::new()
    }

    /// `c`: the Compare screen, when there are two runs to compare.
    pub(super) fn compare_latest(&mut self) -> Vec<Cmd> {
        // On the Run screen the last two runs; on Results the two marked, if any.
        self.results.last_two = self.screen == Screen::Run;
        if self.results.comparison().is_some() {
            self.results.compare_scroll = 0;
            self.screen = Screen::Compare;
        } else {
            self.error("comparing needs two finished runs: run a test, switch, rerun (R)");
        }
        Vec::new()
    }

    /// Earlier sessions' runs of the disk a run just finished on, into Results; the status
    /// says how many, and which key compares the run with its before.
    pub(super) fn past_runs(&mut self, entries: Vec<HistoryEntry>) -> Vec<Cmd> {
        let added = self.results.add_past(entries);
        if added > 0 {
            // The run just over has a before now: say which key compares the two.
            let before = self.results.latest().and_then(|latest| {
                let earlier = self.results.before(latest)?;
                let number = |i: usize| self.results.records[i].number();
                Some((number(latest), number(earlier)))
            });
            self.info(match before {
                Some((now, was)) => format!(
                    "{added} past run(s) of this disk in Results (h#): b there compares \
                     #{now} with #{was}"
                ),
                None => {
                    format!("{added} past run(s) of this disk from the history in Results (h#)")
                }
            });
        }
        Vec::new()
    }

    /// An export is over: where it went, or why it failed.
    pub(super) fn export_done(&mut self, result: Result<PathBuf, TaskError>) -> Vec<Cmd> {
        match result {
            Ok(path) => {
                self.results.exported();
                self.info(format!("exported to {}", path.display()));
            }
            Err(e) => {
                self.results.export_failed();
                self.error(format!("export failed: {e}"));
            }
        }
        Vec::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::exec::engines::SYNC;

    /// A finished session record of rand-read on zram0 (the shared test report), started at
    /// `unix`, known to the history as `disk` when given.
    fn session(results: &mut Results, unix: u64, disk: Option<&str>) -> usize {
        let mut report = crate::report::run::tests::report(1, SYNC, false);
        report.started_unix = unix;
        let request = RunRequest {
            target: report.target.path.clone(),
            test: report.test,
            params: Default::default(),
            confirmation: None,
            temperature: Default::default(),
            device: None,
        };
        let mut rec = RunRecord::new(results.next_id(false), "zram0".into(), request, 1);
        rec.runs.push(report);
        rec.disk = disk.map(|d| DiskIdentity::Name(d.into()));
        results.records.push(rec);
        results.records.len() - 1
    }

    /// A run of an earlier session on `disk`, started at `unix`, from the history.
    fn past(results: &mut Results, unix: u64, disk: &str, error: Option<&str>) -> usize {
        let mut report = crate::report::run::tests::report(1, SYNC, false);
        report.started_unix = unix;
        let mut entry = HistoryEntry::of_runs(DiskIdentity::Name(disk.into()), &[report], None)
            .expect("an entry");
        entry.error = error.map(str::to_string);
        results.add_past(vec![entry]);
        results.records.len() - 1
    }

    #[test]
    fn earlier_runs_are_the_same_test_on_the_same_disk_newest_first() {
        let mut r = Results::default();
        let old = past(&mut r, 100, "zram0", None);
        let failed = past(&mut r, 150, "zram0", Some("EIO at 0"));
        let other_disk = past(&mut r, 160, "zram1", None);
        let yesterday = past(&mut r, 200, "zram0", None);
        let first = session(&mut r, 300, Some("zram0"));
        let second = session(&mut r, 300, Some("zram0"));
        // This session's earlier run (same second: its number says which came first), then
        // the history's, newest first; not the failed run, not another disk's.
        assert_eq!(r.earlier_runs(second), [first, yesterday, old]);
        assert_eq!(r.earlier_runs(first), [yesterday, old]);
        assert_eq!(r.earlier_runs(yesterday), [old]);
        assert!(r.earlier_runs(old).is_empty());
        assert!(r.earlier_runs(other_disk).is_empty());
        assert_eq!(r.earlier_runs(failed), [old]);
        assert_eq!(r.before(second), Some(first));
        // A run that ended before its first repeat has no figures to set against a before.
        let request = r.records[second].request.clone();
        r.records
            .push(RunRecord::new(2, "zram0".into(), request, 1));
        assert_eq!(r.before(r.records.len() - 1), None);
    }

    #[test]
    fn a_run_the_history_has_not_placed_matches_only_this_sessions_runs_by_path() {
        let mut r = Results::default();
        let past_run = past(&mut r, 100, "zram0", None);
        let first = session(&mut r, 300, None);
        let second = session(&mut r, 400, None);
        // Without the disk's identity a past run is not offered; a session run on the same
        // path is.
        assert_eq!(r.earlier_runs(second), [first]);
        assert!(r.earlier_runs(first).is_empty());
        assert!(r.earlier_runs(past_run).is_empty());
        // Once the history says which disk it is, the past run of that disk is offered too.
        r.identified(second, DiskIdentity::Name("zram0".into()));
        assert_eq!(r.earlier_runs(second), [first, past_run]);
        // A device that went away: its runs are not matched by path.
        r.records[first].device_gone = true;
        assert_eq!(r.earlier_runs(second), [past_run]);
    }
}
