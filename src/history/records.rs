//! What the history keeps of a surface scan (its map and counts), of a triage (each disk's
//! verdict and key values), of a flush check, and of a capacity probe or a TRIM check (the
//! verdict and its sentence), beside the figures of a run.

use serde::{Deserialize, Serialize};

use crate::scan::engine::End;
use crate::scan::snapshot::ScanUpdate;

/// The test name a triage is recorded under.
pub const TRIAGE_TEST: &str = "triage";

/// What the history keeps of a triage, to say what changed the next time.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct TriageRecord {
    /// "healthy", "suspect", "failing", "unknown".
    pub verdict: String,
    /// Key values by name, for `triage::changes`; one not read is left out.
    #[serde(default)]
    pub values: std::collections::BTreeMap<String, f64>,
    /// The ids of the rules that fired, worst first.
    #[serde(default)]
    pub rules: Vec<String>,
}

/// The test name the flush check's timing is recorded under.
pub const FLUSH_TIMING_TEST: &str = "flushcheck";
/// The test name the power-cut check's verify is recorded under.
pub const FLUSH_VERIFY_TEST: &str = "flushcheck-verify";

/// What the history keeps of a flush check (the triage reads it).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct FlushRecord {
    /// Timing: "waits-for-medium", "volatile-cache", "unknown"; or "nothing-lost", "lost".
    pub verdict: String,
    /// The sentence the admin was shown.
    pub sentence: String,
    /// Timing: median durable 4 KiB commit with the write cache as found (ms).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit_ms: Option<f64>,
    /// Timing: one revolution (ms), where known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub floor_ms: Option<f64>,
    /// Timing: the flush after 64 MiB of dirty data (ms).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flush_after_dirty_ms: Option<f64>,
    /// Verify: checked, verified, the first 64 lost (`lost_count` whole).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub acknowledged: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verified: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lost_count: Option<u64>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub lost: Vec<u64>,
}

/// The test name the write-cliff probe (`disktriage smrcheck`) is recorded under.
pub const SMR_TEST: &str = "smrcheck";

/// What the history keeps of a write-cliff probe that reached a verdict. The triage's
/// `smr-in-array` rule reads the newest one of a disk (a cliff on a rotating disk is
/// drive-managed SMR behaviour).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct SmrRecord {
    /// "no-cliff" or "cliff".
    pub verdict: String,
    /// The sentence the admin was shown.
    pub sentence: String,
    /// What the device was: "rotating", "solid-state" or "unknown".
    pub medium: String,
    /// The time asked for, in minutes.
    pub minutes: f64,
}

/// The test name the capacity probe is recorded under.
pub const CAPACITY_TEST: &str = "capacity";
/// The test name the TRIM check is recorded under.
pub const TRIM_TEST: &str = "trimcheck";

/// What the history keeps of a capacity probe or a TRIM check that reached a verdict (a
/// stopped or refused one is not kept).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct CheckRecord {
    /// Capacity: "real" or "fake". TRIM: "works", "kept", "broken", "refused" or
    /// "no-discard" (`report::trimcheck::verdict_word`).
    pub verdict: String,
    /// The verdict's sentence as the report shows it.
    pub sentence: String,
}

/// The test name a surface scan is recorded under.
pub const SCAN_TEST: &str = "surface-scan";

/// Cells of a scan's map in the history.
pub const SCAN_MAP_CELLS: usize = 512;

/// Unreadable ranges a scan's record keeps (the count is whole).
pub const SCAN_RANGES_KEPT: usize = 64;

/// What the history keeps of a surface scan: its map and its counts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScanRecord {
    /// Bytes planned, read, unreadable; seconds it took.
    pub planned: u64,
    pub bytes_read: u64,
    pub bytes_bad: u64,
    pub seconds: f64,
    /// Blocks per latency bucket, by its label ("<5", ..., "ERR", "TIME").
    pub buckets: Vec<(String, u64)>,
    /// The block map: `SCAN_MAP_CELLS` glyphs (a space: not read).
    pub map: String,
    /// Unreadable ranges (offset, length, errno), the first `SCAN_RANGES_KEPT`.
    pub unreadable: Vec<(u64, u64, i32)>,
    pub unreadable_ranges: usize,
    pub slow_ranges: usize,
    pub time_ranges: usize,
    /// "finished", "stopped", or "gone: why".
    pub end: String,
    pub verdict: String,
}

impl ScanRecord {
    /// What the history keeps of a scan: map, counts, first unreadable ranges.
    pub fn of(u: &ScanUpdate) -> ScanRecord {
        let mut map = u.map.line(SCAN_MAP_CELLS);
        // A map of fewer cells (a small device) is spread over the record's cells.
        let glyphs: Vec<char> = map.chars().collect();
        if !glyphs.is_empty() && glyphs.len() < SCAN_MAP_CELLS {
            map = (0..SCAN_MAP_CELLS)
                .map(|i| glyphs[i * glyphs.len() / SCAN_MAP_CELLS])
                .collect();
        }
        ScanRecord {
            planned: u.planned,
            bytes_read: u.bytes_read,
            bytes_bad: u.bytes_bad,
            seconds: u.elapsed.as_secs_f64(),
            buckets: u
                .buckets
                .iter()
                .map(|(b, n)| (b.label().to_string(), n))
                .collect(),
            map,
            unreadable: u
                .errors
                .iter()
                .take(SCAN_RANGES_KEPT)
                .map(|(s, e)| (s.offset, s.length, *e))
                .collect(),
            unreadable_ranges: u.errors.len(),
            slow_ranges: u.slow.len(),
            time_ranges: u.timeouts.len(),
            end: match &u.end {
                Some(End::Finished) | None => "finished".into(),
                Some(End::Stopped) => "stopped".into(),
                Some(End::Gone(why)) => format!("gone: {why}"),
            },
            verdict: u.verdict.clone().unwrap_or_default(),
        }
    }
}
