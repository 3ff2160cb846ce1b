//! What changed since the last triage of the same disk: the history keeps each disk's verdict
//! and key values (`history::TriageRecord`); the next triage compares them.
//!
//! SKELETON: the `h7-rules` helper's work.

use super::facts::DiskFacts;
use super::rules::Judgement;
use crate::history::TriageRecord;

/// One value that changed: "pending sectors 0 -> 24 since 2026-11-20 14:05 UTC".
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Change {
    pub what: String,
    pub before: f64,
    pub after: f64,
    /// When the earlier triage ran (seconds since the epoch).
    pub since_unix: u64,
}

/// What the history keeps of this disk's triage.
pub fn record_of(facts: &DiskFacts, judgement: &Judgement) -> TriageRecord {
    let _ = facts;
    TriageRecord {
        verdict: judgement.verdict.as_str().to_string(),
        values: Default::default(),
        rules: judgement
            .findings
            .iter()
            .map(|f| f.rule.to_string())
            .collect(),
    }
}

/// The values that changed between an earlier record (made at `since_unix`) and now.
pub fn changes(previous: &TriageRecord, since_unix: u64, now: &TriageRecord) -> Vec<Change> {
    let _ = (previous, since_unix, now);
    Vec::new()
}
