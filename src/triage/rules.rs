//! The triage's rules: one table (`RULES`), each rule an id, the verdict it gives, what it
//! checks in words (the docs' table is this one) and a pure check over a disk's facts and its
//! siblings'. `judge` applies every rule; the disk's verdict is its worst finding.
//!
//! SKELETON: the table and the checks are the `h7-rules` helper's work.

use serde::Serialize;

use super::facts::{DiskFacts, TriageVerdict};

/// What one rule found on one disk.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Finding {
    /// The rule's id ("ata-pending-sectors", "link-below-best", "outlier-seq-read").
    pub rule: &'static str,
    /// `Suspect` or `Failing` (or `Unknown` for "nothing could be read").
    pub severity: TriageVerdict,
    /// What was found, in words an admin understands.
    pub sentence: String,
    /// What to do next ("back up now", "replace", "check the cable or port").
    pub next_step: String,
    /// The measured value and the threshold it was judged against, as numbers where they are.
    pub value: Option<f64>,
    pub threshold: Option<f64>,
}

/// A rule of the table.
pub struct Rule {
    pub id: &'static str,
    /// The verdict a finding of this rule gives.
    pub severity: TriageVerdict,
    /// What it checks, in the words of the docs' table.
    pub checks: &'static str,
    /// The check: the disk, and its siblings of the same model in the same host (for the
    /// outlier rules; the disk itself is not among them).
    pub check: fn(&DiskFacts, &[&DiskFacts]) -> Vec<Finding>,
}

/// Every rule, in the order findings are listed.
pub static RULES: &[Rule] = &[];

/// A disk's verdict with the findings behind it, worst first.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Judgement {
    pub verdict: TriageVerdict,
    pub findings: Vec<Finding>,
}

/// Judges one disk against the rules, its siblings being every other disk of the same triage.
pub fn judge(disk: &DiskFacts, others: &[&DiskFacts]) -> Judgement {
    let _ = (disk, others);
    Judgement {
        verdict: TriageVerdict::Healthy,
        findings: Vec::new(),
    }
}

/// Judges every disk of one triage (each against the others), in the disks' order.
pub fn judge_all(disks: &[DiskFacts]) -> Vec<Judgement> {
    disks
        .iter()
        .enumerate()
        .map(|(i, disk)| {
            let others: Vec<&DiskFacts> = disks
                .iter()
                .enumerate()
                .filter(|(j, _)| *j != i)
                .map(|(_, d)| d)
                .collect();
            judge(disk, &others)
        })
        .collect()
}
