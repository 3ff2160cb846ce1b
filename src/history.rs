//! The run history: every finished run, one JSON line each, in `history.jsonl` under
//! `/var/lib/disktriage/` (or `--history-dir`), keyed by the disk's stable identity so a disk
//! renamed between boots keeps its past, with the settings it ran under and the figures the
//! report showed (`bench::analysis::figures`, the same numbers as Results and Compare).
//!
//! Writing: under an exclusive lock (`history.lock`), one `write` of one whole line to a file
//! opened with O_APPEND, so concurrent runs never interleave or lose records.
//!
//! Trust: the directory and every file in it are opened as the journal's are
//! (`sys::confined`: a checked directory, regular files only, never through a symlink, never
//! blocking). The lock is polled, so a run waiting for another's still ends on Ctrl-C, SIGTERM
//! or SIGHUP (`append_unless`), and gives up after `LOCK_WAIT`.
//!
//! Bounded: past `ROTATE_AT` bytes the file becomes `history.jsonl.1` (replacing the old one).
//! Lines are never rewritten: a bad line is reported (file and line) and kept; a torn last line
//! gets the next record on a line of its own; a `.1` with a bad line is not rotated away (the
//! file grows, with a warning). A history that cannot be written is a warning, not a failed run.

mod recorders;
mod records;

use std::fs::{self, File};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use std::time::Duration;

use anyhow::{Context, anyhow};
use serde::{Deserialize, Serialize};

use crate::bench::analysis::figures::{self, PhaseFigures};
use crate::bench::plan::Plan;
use crate::bench::results::outcome::{RunReport, TargetClass, TargetInfo};
use crate::model::DiskIdentity;
use crate::scan::snapshot::ScanUpdate;
use crate::sys::SysRoot;
use crate::sys::confined::{self, Access, DirError, FileError, open_regular_at};

/// The history's home (survives reboots, unlike the journal).
pub const DEFAULT_HISTORY_DIR: &str = "/var/lib/disktriage";
/// The history directory when `--history-dir` is not given.
pub const HISTORY_DIR_ENV: &str = "DISKTRIAGE_HISTORY_DIR";
pub const FILE: &str = "history.jsonl";
pub const ROTATED: &str = "history.jsonl.1";
const LOCK: &str = "history.lock";
/// Size at which the file is rotated (some 4000 records).
pub const ROTATE_AT: u64 = 4 << 20;
/// Longest wait for another's lock (a record takes milliseconds).
const LOCK_WAIT: Duration = Duration::from_secs(10);
/// Largest history file read; a larger one is read up to here, and said so.
const MAX_READ: u64 = 64 << 20;
/// Version of the record layout.
pub const HISTORY_SCHEMA: u32 = 1;

/// The settings a run ran under.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunSettings {
    /// "bs 4k, QD32, 1 worker, random read", or "12 phases".
    pub params: String,
    /// The first phase's request size, queue depth and workers.
    pub bs: u64,
    pub qd: u32,
    pub jobs: u32,
    /// The engine that ran ("auto" when phases differ) and the one asked.
    pub engine: String,
    pub engine_asked: String,
    /// O_DIRECT (true) or through the page cache.
    pub direct: bool,
    /// Buffers in huge pages (`--huge-pages`); absent in older records.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub huge_pages: bool,
    pub scheduler: Option<String>,
    /// The drive's write cache (spelling: `model::cache::recorded_drive_cache`).
    #[serde(default, deserialize_with = "drive_cache_in_one_spelling")]
    pub drive_cache: Option<String>,
    /// The kernel's flush policy: "write back" or "write through".
    pub kernel_cache: Option<String>,
}

/// A recorded drive cache in the one spelling (an old "-" is not known).
fn drive_cache_in_one_spelling<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<Option<String>, D::Error> {
    let word: Option<String> = Option::deserialize(d)?;
    Ok(crate::model::cache::recorded_drive_cache(word.as_deref()))
}

/// One finished run (all its repeats) as the history keeps it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HistoryEntry {
    pub schema: u32,
    /// Unique: start time, process id and a counter.
    pub id: String,
    pub tool: String,
    /// Seconds since the Unix epoch when the first repeat started.
    pub started_unix: u64,
    pub host: Option<String>,
    /// What the disk is: the key past runs are looked up by.
    pub disk: DiskIdentity,
    /// Its kernel name at the time, and the model.
    pub device: String,
    pub model: Option<String>,
    /// The path tested.
    pub target: String,
    pub test: String,
    pub settings: RunSettings,
    /// Repeats completed.
    pub repeats: u32,
    /// Per phase, the mean over the repeats and the spread: what Results shows.
    pub figures: Vec<PhaseFigures>,
    pub error: Option<String>,
    /// Stopped by the admin before the end.
    pub stopped: bool,
    /// A surface scan's map and counts (test "surface-scan").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scan: Option<ScanRecord>,
    /// A triage's verdict and key values (test "triage").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub triage: Option<TriageRecord>,
    /// A flush check's verdict (tests "flushcheck" and "flushcheck-verify").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flush: Option<FlushRecord>,
    /// A write-cliff probe's verdict (test "smrcheck"); absent elsewhere.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub smr: Option<SmrRecord>,
    /// A capacity probe's or a TRIM check's verdict (tests "capacity" and "trimcheck");
    /// absent elsewhere.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub check: Option<CheckRecord>,
}

pub use recorders::{NOT_ADDED, Recalled};
pub use records::{
    CAPACITY_TEST, CheckRecord, FLUSH_TIMING_TEST, FLUSH_VERIFY_TEST, FlushRecord, SCAN_MAP_CELLS,
    SCAN_RANGES_KEPT, SCAN_TEST, SMR_TEST, ScanRecord, SmrRecord, TRIAGE_TEST, TRIM_TEST,
    TriageRecord,
};

/// A run target's identity: a file's path, or a device's (`SysRoot::disk_identity`).
pub fn identity_of(root: &SysRoot, target: &TargetInfo) -> DiskIdentity {
    match (target.kind, &target.device) {
        (TargetClass::File | TargetClass::Directory, _) => DiskIdentity::File(
            fs::canonicalize(&target.path)
                .unwrap_or_else(|_| target.path.clone())
                .display()
                .to_string(),
        ),
        (TargetClass::BlockDevice, Some(name)) => root.disk_identity(name),
        (TargetClass::BlockDevice, None) => DiskIdentity::Name(target.path.display().to_string()),
    }
}

/// The parameters as Results shows them ("bs 4k, QD32, 1 worker, random read").
pub fn params_text(plan: &Plan) -> String {
    match plan.phases.as_slice() {
        [one] => one.job.describe(),
        many if plan.rewrites() && plan.writes() => format!(
            "{} phases, writes: {}",
            many.len(),
            crate::bench::plan::REWRITE_LABEL
        ),
        many => format!("{} phases", many.len()),
    }
}

static SEQUENCE: AtomicU64 = AtomicU64::new(0);

impl HistoryEntry {
    /// The entry of a test's `runs` on `disk`; `None` with no finished repeat.
    pub fn of_runs(
        disk: DiskIdentity,
        runs: &[RunReport],
        drive_cache: Option<String>,
    ) -> Option<HistoryEntry> {
        let first = runs.first()?;
        let job = first.plan.phases.first().map(|p| &p.job);
        let target = &first.target;
        let n = SEQUENCE.fetch_add(1, Ordering::Relaxed);
        Some(HistoryEntry {
            schema: HISTORY_SCHEMA,
            id: format!("{}-{}-{n}", first.started_unix, std::process::id()),
            tool: first.tool.clone(),
            started_unix: first.started_unix,
            host: first.host.hostname.clone(),
            disk,
            device: target.device.clone().unwrap_or_default(),
            model: target.model.clone(),
            target: target.path.display().to_string(),
            test: first.test.id().to_string(),
            settings: RunSettings {
                params: params_text(&first.plan),
                bs: job.map_or(0, |j| j.bs),
                qd: job.map_or(0, |j| j.qd),
                jobs: job.map_or(0, |j| j.workers),
                engine: first.outcome.engine.as_str().to_string(),
                engine_asked: first.plan.engine.as_str().to_string(),
                direct: first.plan.direct,
                huge_pages: first.plan.huge_pages,
                scheduler: target.scheduler.clone(),
                drive_cache: crate::model::cache::recorded_drive_cache(drive_cache.as_deref()),
                kernel_cache: target.kernel_write_cache.map(|c| c.as_str().to_string()),
            },
            repeats: runs.len() as u32,
            figures: figures::figures(runs),
            error: runs.iter().find_map(RunReport::error),
            stopped: runs.iter().any(|r| r.outcome.stopped),
            scan: None,
            triage: None,
            flush: None,
            smr: None,
            check: None,
        })
    }

    /// The entry of a surface scan of `device` on `disk`.
    pub fn of_scan(
        disk: DiskIdentity,
        device: &str,
        target: &str,
        block: u64,
        started_unix: u64,
        record: ScanRecord,
    ) -> HistoryEntry {
        HistoryEntry {
            model: None,
            error: record.end.starts_with("gone").then(|| record.end.clone()),
            stopped: record.end == "stopped",
            scan: Some(record),
            ..HistoryEntry::read_only(
                disk,
                device,
                target,
                SCAN_TEST,
                started_unix,
                format!("read-only, {} reads", crate::model::Bytes(block)),
                block,
            )
        }
    }

    /// The entry of a triage of `device` on `disk`, taking `seconds`.
    pub fn of_triage(
        disk: DiskIdentity,
        device: &str,
        model: Option<String>,
        started_unix: u64,
        seconds: f64,
        record: TriageRecord,
    ) -> HistoryEntry {
        HistoryEntry {
            model,
            triage: Some(record),
            ..HistoryEntry::read_only(
                disk,
                device,
                &format!("/dev/{device}"),
                TRIAGE_TEST,
                started_unix,
                format!("read-only triage, {seconds:.1} s"),
                0,
            )
        }
    }

    /// A flush check's entry; `bs` is the record or commit size.
    pub fn of_flushcheck(
        disk: DiskIdentity,
        device: &str,
        test: &str,
        started_unix: u64,
        params: String,
        bs: u64,
        record: FlushRecord,
    ) -> HistoryEntry {
        HistoryEntry {
            flush: Some(record),
            ..HistoryEntry::read_only(
                disk,
                device,
                &format!("/dev/{device}"),
                test,
                started_unix,
                params,
                bs,
            )
        }
    }

    /// A write-cliff probe's entry: `params` says what was asked ("5 min, 4 KiB random
    /// writes in 256 MiB"), `bs` the write size.
    pub fn of_smrcheck(
        disk: DiskIdentity,
        device: &str,
        started_unix: u64,
        params: String,
        bs: u64,
        record: SmrRecord,
    ) -> HistoryEntry {
        HistoryEntry {
            smr: Some(record),
            ..HistoryEntry::read_only(
                disk,
                device,
                &format!("/dev/{device}"),
                SMR_TEST,
                started_unix,
                params,
                bs,
            )
        }
    }

    /// A capacity probe's or a TRIM check's entry (`test` is `CAPACITY_TEST` or
    /// `TRIM_TEST`) of `device` on the disk `disk`, started at `started_unix`, taking
    /// `seconds`. They write, and put back what they wrote.
    pub fn of_check(
        disk: DiskIdentity,
        device: &str,
        model: Option<String>,
        test: &str,
        started_unix: u64,
        seconds: f64,
        record: CheckRecord,
    ) -> HistoryEntry {
        HistoryEntry {
            model,
            check: Some(record),
            ..HistoryEntry::read_only(
                disk,
                device,
                &format!("/dev/{device}"),
                test,
                started_unix,
                format!("writes and puts back, {seconds:.1} s"),
                0,
            )
        }
    }

    /// The common part of a read-only entry (a scan, a triage).
    fn read_only(
        disk: DiskIdentity,
        device: &str,
        target: &str,
        test: &str,
        started_unix: u64,
        params: String,
        bs: u64,
    ) -> HistoryEntry {
        let n = SEQUENCE.fetch_add(1, Ordering::Relaxed);
        HistoryEntry {
            schema: HISTORY_SCHEMA,
            id: format!("{started_unix}-{}-{n}", std::process::id()),
            tool: format!("disktriage {}", env!("CARGO_PKG_VERSION")),
            started_unix,
            host: crate::sys::host::host_info().hostname,
            disk,
            device: device.to_string(),
            model: None,
            target: target.to_string(),
            test: test.to_string(),
            settings: RunSettings {
                params,
                bs,
                qd: 1,
                jobs: 1,
                engine: "sync".into(),
                engine_asked: "sync".into(),
                direct: true,
                huge_pages: false,
                scheduler: None,
                drive_cache: None,
                kernel_cache: None,
            },
            repeats: 1,
            figures: Vec::new(),
            error: None,
            stopped: false,
            scan: None,
            triage: None,
            flush: None,
            smr: None,
            check: None,
        }
    }

    /// The time it started, "2026-11-23 14:05 UTC".
    pub fn when(&self) -> String {
        utc_minute(self.started_unix)
    }
}

/// "YYYY-MM-DD HH:MM UTC" from seconds since the epoch.
pub fn utc_minute(unix: u64) -> String {
    let (year, month, day) = civil(unix);
    let secs = unix % 86_400;
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02} UTC",
        secs / 3600,
        secs % 3600 / 60
    )
}

/// RFC 3339 UTC time ("YYYY-MM-DDTHH:MM:SSZ"), as the JSON reports write it.
pub fn utc_rfc3339(unix: u64) -> String {
    let (year, month, day) = civil(unix);
    let secs = unix % 86_400;
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        secs / 3600,
        secs % 3600 / 60,
        secs % 60
    )
}

/// The civil date of a Unix time (Howard Hinnant's days-to-civil).
fn civil(unix: u64) -> (i64, i64, i64) {
    let days = (unix / 86_400) as i64;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// What reading the history found: entries, oldest first, and bad lines.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Loaded {
    pub entries: Vec<HistoryEntry>,
    pub problems: Vec<String>,
}

impl Loaded {
    /// The entries of one disk, oldest first.
    pub fn of_disk<'a>(&'a self, disk: &'a DiskIdentity) -> impl Iterator<Item = &'a HistoryEntry> {
        self.entries.iter().filter(move |e| &e.disk == disk)
    }

    /// The newest triage of `disk` before `before_unix`. Never by kernel name alone: `sda`
    /// today may be another disk than yesterday's.
    pub fn last_triage(
        &self,
        disk: &DiskIdentity,
        before_unix: u64,
    ) -> Option<(u64, &TriageRecord)> {
        if matches!(disk, DiskIdentity::Name(_)) {
            return None;
        }
        self.entries
            .iter()
            .filter(|e| &e.disk == disk)
            .filter(|e| e.test == TRIAGE_TEST && e.started_unix < before_unix)
            .filter_map(|e| Some((e.started_unix, e.triage.as_ref()?)))
            // The last of the newest: records are appended in time order.
            .max_by_key(|(started, _)| *started)
    }
}

impl Loaded {
    /// The newest flush check of `disk`, like `last_triage`.
    pub fn last_flushcheck(&self, disk: &DiskIdentity) -> Option<(u64, &str, &FlushRecord)> {
        if matches!(disk, DiskIdentity::Name(_)) {
            return None;
        }
        self.entries
            .iter()
            .filter(|e| &e.disk == disk)
            .filter_map(|e| Some((e.started_unix, e.test.as_str(), e.flush.as_ref()?)))
            .max_by_key(|(started, _, _)| *started)
    }
}

impl Loaded {
    /// The newest write-cliff probe of `disk`: when it started and what it kept. Like
    /// `last_triage`, never by kernel name alone.
    pub fn last_smrcheck(&self, disk: &DiskIdentity) -> Option<(u64, &SmrRecord)> {
        if matches!(disk, DiskIdentity::Name(_)) {
            return None;
        }
        self.entries
            .iter()
            .filter(|e| &e.disk == disk)
            .filter_map(|e| Some((e.started_unix, e.smr.as_ref()?)))
            .max_by_key(|(started, _)| *started)
    }

    /// The newest entry of `test` (`CAPACITY_TEST`, `TRIM_TEST`) on `disk` with its verdict:
    /// when it started and what it kept. Like `last_triage`, never by kernel name alone.
    pub fn last_check(&self, disk: &DiskIdentity, test: &str) -> Option<(u64, &CheckRecord)> {
        if matches!(disk, DiskIdentity::Name(_)) {
            return None;
        }
        self.entries
            .iter()
            .filter(|e| &e.disk == disk && e.test == test)
            .filter_map(|e| Some((e.started_unix, e.check.as_ref()?)))
            .max_by_key(|(started, _)| *started)
    }
}

/// Parses one history file's text: `name` says which file in the problems.
pub fn parse(name: &str, text: &str, out: &mut Loaded) {
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let n = i + 1;
        match serde_json::from_str::<HistoryEntry>(line) {
            Ok(e) if e.schema > HISTORY_SCHEMA => out.problems.push(format!(
                "{name} line {n}: written by a newer disktriage (schema {}), skipped",
                e.schema
            )),
            Ok(e) => out.entries.push(e),
            Err(e) => out.problems.push(format!(
                "{name} line {n}: not a history record ({e}); left as it is"
            )),
        }
    }
}

/// The history in one directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct History {
    dir: PathBuf,
    rotate_at: u64,
}

impl History {
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        History {
            dir: dir.into(),
            rotate_at: ROTATE_AT,
        }
    }

    /// The same with another rotation size (tests).
    pub fn rotating_at(mut self, bytes: u64) -> Self {
        self.rotate_at = bytes;
        self
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub fn file(&self) -> PathBuf {
        self.dir.join(FILE)
    }

    /// Appends one entry (see the module docs); returns warnings worth showing.
    pub fn append(&self, entry: &HistoryEntry) -> anyhow::Result<Vec<String>> {
        self.append_unless(entry, &|| false)
    }

    /// `append`, giving up the lock wait on `stop` or after `LOCK_WAIT`.
    pub fn append_unless(
        &self,
        entry: &HistoryEntry,
        stop: &dyn Fn() -> bool,
    ) -> anyhow::Result<Vec<String>> {
        self.append_all_unless(std::slice::from_ref(entry), stop)
    }

    /// `append_unless` for several entries: one lock, write and sync.
    pub fn append_all_unless(
        &self,
        entries: &[HistoryEntry],
        stop: &dyn Fn() -> bool,
    ) -> anyhow::Result<Vec<String>> {
        let mut line = String::new();
        for entry in entries {
            line += &serde_json::to_string(entry).context("cannot encode the history record")?;
            line.push('\n');
        }
        let dir = self
            .open_dir(true)?
            .with_context(|| format!("cannot create {}", self.dir.display()))?;
        let lock_path = self.dir.join(LOCK);
        let lock_file = open_regular_at(&dir, LOCK, Access::Lock { mode: 0o644 })
            .map_err(|e| anyhow!("cannot open {}: {e}", lock_path.display()))?;
        let _lock = confined::lock_exclusive(lock_file, stop, LOCK_WAIT)
            .map_err(|e| anyhow!("cannot lock {}: {e}", lock_path.display()))?;
        let path = self.file();
        let mut warnings = Vec::new();
        let size = confined::regular_size_at(&dir, FILE)
            .map_err(|e| anyhow!("cannot open {}: {e}", path.display()))?
            .unwrap_or(0);
        if size > 0 && size + line.len() as u64 > self.rotate_at {
            match self.bad_line_in(&dir, ROTATED) {
                Err(e) => warnings.push(format!(
                    "{} is left alone: {e}. Until then {FILE} is not rotated and grows past {} \
                     MiB",
                    self.dir.join(ROTATED).display(),
                    self.rotate_at >> 20,
                )),
                Ok(Some(problem)) => warnings.push(format!(
                    "{problem}: it is kept, so {FILE} was not rotated and grows past {} MiB; \
                     move {} away",
                    self.rotate_at >> 20,
                    self.dir.join(ROTATED).display()
                )),
                Ok(None) => {
                    confined::rename_at(&dir, FILE, ROTATED)
                        .with_context(|| format!("cannot rotate {}", path.display()))?;
                }
            }
        }
        let mut file = open_regular_at(&dir, FILE, Access::Append { mode: 0o644 })
            .map_err(|e| anyhow!("cannot open {}: {e}", path.display()))?;
        // A last line cut short stays; this record starts on a line of its own.
        if ends_without_newline(&mut file)? {
            line.insert(0, '\n');
        }
        file.write_all(line.as_bytes())
            .and_then(|()| file.sync_data())
            .with_context(|| format!("cannot write {}", path.display()))?;
        Ok(warnings)
    }

    /// Creates and checks the history directory, for a file kept beside it.
    pub fn prepare_dir(&self) -> anyhow::Result<()> {
        self.open_dir(true).map(|_| ())
    }

    /// The directory, opened, checked, created if `create`; `None` if absent.
    fn open_dir(&self, create: bool) -> anyhow::Result<Option<File>> {
        if create && fs::symlink_metadata(&self.dir).is_err() {
            fs::DirBuilder::new()
                .recursive(true)
                .mode(0o755)
                .create(&self.dir)
                .with_context(|| format!("cannot create {}", self.dir.display()))?;
        }
        match confined::open_checked_dir(&self.dir) {
            Ok(dir) => Ok(Some(dir)),
            Err(DirError::Io(e)) if e.kind() == io::ErrorKind::NotFound && !create => Ok(None),
            Err(DirError::Io(e)) => {
                Err(e).with_context(|| format!("cannot open {}", self.dir.display()))
            }
            Err(DirError::Unsafe(problem)) => Err(anyhow!(
                "refusing the history directory {}: {problem}; it must be owned by {} and not \
                 group/world-writable",
                self.dir.display(),
                confined::allowed_owners().1
            )),
        }
    }

    /// The first bad line of a history file; `None` when all parse.
    fn bad_line_in(&self, dir: &File, name: &str) -> Result<Option<String>, FileError> {
        let Some((text, _)) = read_capped(dir, name)? else {
            return Ok(None);
        };
        let mut loaded = Loaded::default();
        parse(name, &text, &mut loaded);
        Ok(loaded.problems.into_iter().next())
    }

    /// Every entry, the rotated file's first, and the lines that did not parse.
    pub fn load(&self) -> anyhow::Result<Loaded> {
        let mut out = Loaded::default();
        let Some(dir) = self.open_dir(false)? else {
            return Ok(out);
        };
        for name in [ROTATED, FILE] {
            let path = self.dir.join(name);
            let Some((text, cut)) = read_capped(&dir, name)
                .map_err(|e| anyhow!("cannot read {}: {e}", path.display()))?
            else {
                continue;
            };
            if cut {
                out.problems.push(format!(
                    "{name} is larger than {} MiB: only its start was read",
                    MAX_READ >> 20
                ));
            }
            parse(name, &text, &mut out);
        }
        Ok(out)
    }
}

fn ends_without_newline(file: &mut File) -> anyhow::Result<bool> {
    let len = file.metadata()?.len();
    if len == 0 {
        return Ok(false);
    }
    let mut last = [0u8; 1];
    file.seek(SeekFrom::Start(len - 1))?;
    file.read_exact(&mut last)?;
    Ok(last[0] != b'\n')
}

/// `name`'s text up to `MAX_READ` bytes, and whether it was cut.
fn read_capped(dir: &File, name: &str) -> Result<Option<(String, bool)>, FileError> {
    let file = match open_regular_at(dir, name, Access::Read) {
        Ok(f) => f,
        Err(e) if e.is_not_found() => return Ok(None),
        Err(e) => return Err(e),
    };
    let mut buf = Vec::new();
    file.take(MAX_READ + 1)
        .read_to_end(&mut buf)
        .map_err(FileError::Io)?;
    let cut = buf.len() as u64 > MAX_READ;
    if cut {
        buf.truncate(MAX_READ as usize);
        // The last (partial) line is not a record.
        if let Some(end) = buf.iter().rposition(|&b| b == b'\n') {
            buf.truncate(end + 1);
        }
    }
    Ok(Some((String::from_utf8_lossy(&buf).into_owned(), cut)))
}

#[cfg(test)]
mod tests {
    use super::recorders::recall;
    use super::*;
    use crate::bench::analysis::compare::Stat;
    use crate::bench::plan::PhaseTag;

    #[test]
    fn the_newest_smrcheck_of_a_disk_is_found_by_its_identity_only() {
        let disk = DiskIdentity::Wwid("naa.5000".into());
        let record = |verdict: &str| SmrRecord {
            verdict: verdict.into(),
            sentence: "s".into(),
            medium: "rotating".into(),
            minutes: 5.0,
        };
        let mut loaded = Loaded::default();
        for (at, verdict) in [(100, "no-cliff"), (300, "cliff"), (200, "no-cliff")] {
            let e = HistoryEntry::of_smrcheck(
                disk.clone(),
                "sda",
                at,
                "5 min".into(),
                4096,
                record(verdict),
            );
            let line = serde_json::to_string(&e).unwrap();
            parse("h", &line, &mut loaded);
        }
        let (at, r) = loaded.last_smrcheck(&disk).expect("found");
        assert_eq!((at, r.verdict.as_str()), (300, "cliff"));
        assert!(
            loaded
                .last_smrcheck(&DiskIdentity::Wwid("other".into()))
                .is_none()
        );
        assert!(
            loaded
                .last_smrcheck(&DiskIdentity::Name("sda".into()))
                .is_none()
        );
    }

    #[test]
    fn the_last_check_is_the_newest_of_its_test_and_never_by_kernel_name() {
        let check = |disk: DiskIdentity, test: &str, at: u64, verdict: &str| {
            HistoryEntry::of_check(
                disk,
                "sdb",
                None,
                test,
                at,
                1.0,
                CheckRecord {
                    verdict: verdict.into(),
                    sentence: format!("{verdict} sentence"),
                },
            )
        };
        let disk = DiskIdentity::Wwid("w".into());
        let loaded = Loaded {
            entries: vec![
                check(disk.clone(), CAPACITY_TEST, 100, "real"),
                check(disk.clone(), TRIM_TEST, 200, "works"),
                check(disk.clone(), CAPACITY_TEST, 300, "fake"),
                check(DiskIdentity::Wwid("x".into()), TRIM_TEST, 400, "broken"),
                check(DiskIdentity::Name("sdb".into()), TRIM_TEST, 500, "kept"),
            ],
            problems: Vec::new(),
        };
        let verdict = |disk: &DiskIdentity, test| {
            loaded
                .last_check(disk, test)
                .map(|(at, c)| (at, c.verdict.clone()))
        };
        assert_eq!(verdict(&disk, CAPACITY_TEST), Some((300, "fake".into())));
        assert_eq!(verdict(&disk, TRIM_TEST), Some((200, "works".into())));
        assert_eq!(verdict(&DiskIdentity::Name("sdb".into()), TRIM_TEST), None);
        let e = &loaded.entries[0];
        assert_eq!(e.settings.params, "writes and puts back, 1.0 s");
        assert!(e.scan.is_none() && e.triage.is_none() && e.flush.is_none());
    }

    fn entry(disk: &str, mbps: f64) -> HistoryEntry {
        HistoryEntry {
            schema: HISTORY_SCHEMA,
            id: format!("1-2-{mbps}"),
            tool: "disktriage test".into(),
            started_unix: 1_795_000_000,
            host: Some("h".into()),
            disk: DiskIdentity::Wwid(disk.into()),
            device: "sda".into(),
            model: None,
            target: "/dev/sda".into(),
            test: "seq-read".into(),
            settings: RunSettings {
                params: "bs 1M, QD1, 1 worker, sequential read".into(),
                bs: 1 << 20,
                qd: 1,
                jobs: 1,
                engine: "sync".into(),
                engine_asked: "auto".into(),
                direct: true,
                huge_pages: false,
                scheduler: Some("mq-deadline".into()),
                drive_cache: Some("on".into()),
                kernel_cache: Some("write back".into()),
            },
            repeats: 1,
            figures: vec![PhaseFigures {
                label: "seq-read".into(),
                tag: PhaseTag::Single,
                bs: 1 << 20,
                ops: 1000,
                seconds: 10.0,
                time_base: Default::default(),
                mbps: Stat {
                    mean: mbps,
                    spread_pct: None,
                },
                iops: Stat {
                    mean: mbps,
                    spread_pct: None,
                },
                mbps_min_max: None,
                mean_ms: None,
                p50_ms: None,
                p99_ms: Some(Stat {
                    mean: 1.5,
                    spread_pct: Some(2.0),
                }),
                p999_ms: None,
            }],
            error: None,
            stopped: false,
            scan: None,
            triage: None,
            flush: None,
            smr: None,
            check: None,
        }
    }

    #[test]
    fn records_round_trip_one_line_each() {
        let dir = tempfile::tempdir().unwrap();
        let h = History::new(dir.path().join("sub"));
        assert_eq!(h.load().unwrap(), Loaded::default(), "no directory yet");
        h.append(&entry("naa.1", 100.0)).unwrap();
        h.append(&entry("naa.2", 200.0)).unwrap();
        let text = fs::read_to_string(h.file()).unwrap();
        assert_eq!(text.lines().count(), 2);
        let loaded = h.load().unwrap();
        assert!(loaded.problems.is_empty(), "{:?}", loaded.problems);
        assert_eq!(
            loaded.entries,
            [entry("naa.1", 100.0), entry("naa.2", 200.0)]
        );
        let disk = DiskIdentity::Wwid("naa.2".into());
        assert_eq!(loaded.of_disk(&disk).count(), 1);
    }

    #[test]
    fn a_bad_line_is_reported_with_its_number_and_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        let h = History::new(dir.path());
        h.append(&entry("naa.1", 100.0)).unwrap();
        let mut f = fs::OpenOptions::new().append(true).open(h.file()).unwrap();
        f.write_all(b"{\"schema\":1,\"garbage\n").unwrap();
        drop(f);
        let before = fs::read(h.file()).unwrap();
        let loaded = h.load().unwrap();
        assert_eq!(loaded.entries.len(), 1);
        assert_eq!(loaded.problems.len(), 1, "{:?}", loaded.problems);
        assert!(
            loaded.problems[0].starts_with("history.jsonl line 2: not a history record"),
            "{:?}",
            loaded.problems
        );
        assert_eq!(
            fs::read(h.file()).unwrap(),
            before,
            "reading changes nothing"
        );
        // Appending keeps the bad line byte for byte and adds after it.
        h.append(&entry("naa.1", 300.0)).unwrap();
        let after = fs::read(h.file()).unwrap();
        assert!(after.starts_with(&before));
        let loaded = h.load().unwrap();
        assert_eq!(loaded.entries.len(), 2);
        assert_eq!(loaded.problems.len(), 1);
    }

    #[test]
    fn a_torn_last_line_does_not_swallow_the_next_record() {
        let dir = tempfile::tempdir().unwrap();
        let h = History::new(dir.path());
        h.append(&entry("naa.1", 100.0)).unwrap();
        let mut f = fs::OpenOptions::new().append(true).open(h.file()).unwrap();
        f.write_all(b"{\"schema\":1,\"id\":\"cut sh").unwrap();
        drop(f);
        h.append(&entry("naa.1", 200.0)).unwrap();
        let loaded = h.load().unwrap();
        assert_eq!(loaded.entries.len(), 2, "{:?}", loaded.problems);
        assert_eq!(loaded.entries[1].figures[0].mbps.mean, 200.0);
        assert_eq!(loaded.problems.len(), 1);
        assert!(
            loaded.problems[0].contains("line 2"),
            "{:?}",
            loaded.problems
        );
    }

    #[test]
    fn the_file_rotates_and_stays_bounded() {
        let dir = tempfile::tempdir().unwrap();
        let one = serde_json::to_string(&entry("naa.1", 1.0)).unwrap().len() as u64 + 1;
        let h = History::new(dir.path()).rotating_at(one * 3);
        for i in 0..10 {
            h.append(&entry("naa.1", f64::from(i))).unwrap();
        }
        let size = |name: &str| fs::metadata(dir.path().join(name)).unwrap().len();
        assert!(size(FILE) <= one * 3, "{}", size(FILE));
        assert!(size(ROTATED) <= one * 3, "{}", size(ROTATED));
        let loaded = h.load().unwrap();
        let kept: Vec<f64> = loaded
            .entries
            .iter()
            .map(|e| e.figures[0].mbps.mean)
            .collect();
        // The newest records, oldest first; the oldest rotated away.
        assert_eq!(kept.last(), Some(&9.0));
        assert!(kept.windows(2).all(|w| w[0] < w[1]), "{kept:?}");
        assert!(kept.len() >= 4 && kept.len() <= 6, "{kept:?}");
        let names: Vec<String> = fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names.len(), 3, "file, .1 and the lock: {names:?}");
    }

    #[test]
    fn a_corrupt_rotated_file_is_never_rotated_away() {
        let dir = tempfile::tempdir().unwrap();
        let one = serde_json::to_string(&entry("naa.1", 1.0)).unwrap().len() as u64 + 1;
        let h = History::new(dir.path()).rotating_at(one * 2);
        fs::write(dir.path().join(ROTATED), "not json\n").unwrap();
        let mut warned = Vec::new();
        for i in 0..4 {
            warned.extend(h.append(&entry("naa.1", f64::from(i))).unwrap());
        }
        assert_eq!(
            fs::read_to_string(dir.path().join(ROTATED)).unwrap(),
            "not json\n"
        );
        assert!(!warned.is_empty());
        assert!(
            warned[0].contains("history.jsonl.1 line 1") && warned[0].contains("not rotated"),
            "{warned:?}"
        );
        assert_eq!(h.load().unwrap().entries.len(), 4, "nothing lost");
    }

    #[test]
    fn concurrent_appends_lose_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let h = History::new(dir.path());
        std::thread::scope(|s| {
            for t in 0..4 {
                let h = h.clone();
                s.spawn(move || {
                    for i in 0..25 {
                        h.append(&entry("naa.1", f64::from(t * 100 + i))).unwrap();
                    }
                });
            }
        });
        let loaded = h.load().unwrap();
        assert!(loaded.problems.is_empty(), "{:?}", loaded.problems);
        assert_eq!(loaded.entries.len(), 100);
    }

    #[test]
    fn a_symlink_planted_as_the_file_is_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim");
        fs::write(&victim, "precious\n").unwrap();
        std::os::unix::fs::symlink(&victim, dir.path().join(FILE)).unwrap();
        let h = History::new(dir.path());
        assert!(h.append(&entry("naa.1", 1.0)).is_err());
        assert_eq!(fs::read_to_string(&victim).unwrap(), "precious\n");
    }

    #[test]
    fn newer_schemas_are_skipped_and_said() {
        let mut loaded = Loaded::default();
        let mut e = serde_json::to_value(entry("naa.1", 1.0)).unwrap();
        e["schema"] = 2.into();
        parse("history.jsonl", &format!("{e}\n"), &mut loaded);
        assert!(loaded.entries.is_empty());
        assert!(
            loaded.problems[0].contains("newer disktriage"),
            "{:?}",
            loaded.problems
        );
    }

    #[test]
    fn the_recall_keeps_the_newest_run_of_the_same_test_however_old() {
        let disk = DiskIdentity::Wwid("naa.1".into());
        let mut loaded = Loaded::default();
        let mut add = |id: &str, test: &str, disk: &str| {
            let mut e = entry(disk, 1.0);
            e.id = id.into();
            e.test = test.into();
            loaded.entries.push(e);
        };
        add("old-seq", "seq-read", "naa.1");
        add("seq", "seq-read", "naa.1");
        for i in 0..8 {
            add(&format!("rand{i}"), "rand-read", "naa.1");
        }
        add("other-disk-seq", "seq-read", "naa.2");
        add("mine", "seq-read", "naa.1");
        let ids = |past: Vec<HistoryEntry>| past.into_iter().map(|e| e.id).collect::<Vec<_>>();
        let past = ids(recall(&loaded, &disk, "seq-read", 8, |id| id == "mine"));
        // The disk's 8 newest (rand-read) and its newest seq-read, oldest first; nothing else.
        assert_eq!(past.len(), 9, "{past:?}");
        assert_eq!(past[0], "seq");
        assert_eq!(past[8], "rand7");
        // Among the newest anyway, nothing is added.
        let past = ids(recall(&loaded, &disk, "rand-read", 8, |id| id == "mine"));
        assert_eq!(past.len(), 8, "{past:?}");
        assert_eq!(past[0], "rand0");
    }

    #[test]
    fn dates_in_utc() {
        assert_eq!(utc_minute(0), "1970-01-01 00:00 UTC");
        assert_eq!(utc_minute(951_782_400), "2000-02-29 00:00 UTC");
        assert_eq!(utc_minute(1_795_000_000), "2026-11-18 11:06 UTC");
        assert_eq!(utc_rfc3339(1_795_000_000), "2026-11-18T11:06:40Z");
        assert_eq!(utc_rfc3339(951_782_399), "2000-02-28T23:59:59Z");
    }

    fn triage_entry(disk: DiskIdentity, started: u64, pending: f64) -> HistoryEntry {
        let mut record = TriageRecord {
            verdict: "healthy".into(),
            ..Default::default()
        };
        record.values.insert("pending sectors".into(), pending);
        HistoryEntry::of_triage(disk, "sdb", Some("M1".into()), started, 9.5, record)
    }

    #[test]
    fn the_last_triage_of_a_disk_is_its_newest_earlier_one() {
        let disk = DiskIdentity::Serial("S1".into());
        let other = DiskIdentity::Serial("S2".into());
        let mut loaded = Loaded::default();
        loaded.entries.push(triage_entry(disk.clone(), 100, 1.0));
        loaded.entries.push(entry("S1", 5.0)); // a test run of the same disk: not a triage
        loaded.entries.push(triage_entry(disk.clone(), 200, 2.0));
        loaded.entries.push(triage_entry(other.clone(), 250, 9.0));
        loaded.entries.push(triage_entry(disk.clone(), 300, 3.0));
        let pending = |found: Option<(u64, &TriageRecord)>| {
            found.map(|(at, r)| (at, r.values["pending sectors"]))
        };
        assert_eq!(pending(loaded.last_triage(&disk, 300)), Some((200, 2.0)));
        assert_eq!(pending(loaded.last_triage(&disk, 301)), Some((300, 3.0)));
        assert_eq!(pending(loaded.last_triage(&disk, 100)), None);
        assert_eq!(pending(loaded.last_triage(&other, 999)), Some((250, 9.0)));
        // A kernel name is no identity to compare a past with.
        let name = DiskIdentity::Name("sdb".into());
        loaded.entries.push(triage_entry(name.clone(), 100, 1.0));
        assert_eq!(pending(loaded.last_triage(&name, 999)), None);
    }

    #[test]
    fn a_triage_entry_round_trips_through_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let h = History::new(dir.path());
        let e = triage_entry(DiskIdentity::Wwid("naa.9".into()), 1_795_000_000, 24.0);
        assert_eq!(e.test, TRIAGE_TEST);
        h.append(&e).unwrap();
        let loaded = h.load().unwrap();
        assert_eq!(loaded.entries, [e]);
        // A record without values or rules (an older writer) still reads.
        let mut v = serde_json::to_value(&loaded.entries[0]).unwrap();
        v["triage"] = serde_json::json!({"verdict": "suspect"});
        let mut again = Loaded::default();
        parse("history.jsonl", &format!("{v}\n"), &mut again);
        assert!(again.problems.is_empty(), "{:?}", again.problems);
        assert_eq!(again.entries[0].triage.as_ref().unwrap().verdict, "suspect");
    }
}
