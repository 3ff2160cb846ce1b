//! The triage's outputs: the 80-column table (one line per disk, worst first), the JSON
//! report (a stable schema, `docs/triage.md`), the Prometheus text for node_exporter's textfile
//! collector, and the exit status (the worst verdict).
//!
//! SKELETON: the `h7-rules` helper's work.

use crate::triage::{Change, DiskFacts, Judgement, TriageVerdict};

/// One disk of a triage: what was gathered, the verdict, and what changed since the last one.
#[derive(Debug, Clone, PartialEq)]
pub struct DiskReport {
    pub facts: DiskFacts,
    pub judgement: Judgement,
    pub changes: Vec<Change>,
}

/// A whole triage.
#[derive(Debug, Clone, PartialEq)]
pub struct TriageReport {
    pub host: Option<String>,
    pub started_unix: u64,
    pub seconds: f64,
    pub bound_seconds: f64,
    pub disks: Vec<DiskReport>,
}

impl TriageReport {
    /// The worst verdict of the disks (healthy when there are none).
    pub fn worst(&self) -> TriageVerdict {
        self.disks
            .iter()
            .map(|d| d.judgement.verdict)
            .max()
            .unwrap_or(TriageVerdict::Healthy)
    }
}

/// The table: one line per disk, worst first, fitting `width` columns (80 at least).
pub fn render_table(report: &TriageReport, width: usize) -> String {
    let _ = width;
    report
        .disks
        .iter()
        .map(|d| {
            format!(
                "{} {}\n",
                d.facts.identity.device,
                d.judgement.verdict.as_str()
            )
        })
        .collect()
}

/// The JSON report (`docs/triage.md` documents the schema).
pub fn to_json(report: &TriageReport) -> serde_json::Value {
    serde_json::json!({ "schema": 1, "disks": report.disks.len() })
}

/// The Prometheus text exposition for node_exporter's textfile collector.
pub fn prom_text(report: &TriageReport) -> String {
    let _ = report;
    String::new()
}
