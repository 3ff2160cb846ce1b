//! The triage's rules: one table (`RULES`) of id, verdict, what it checks in words (the table
//! in `docs/triage.md`, same order, held together by a test) and a pure check over a disk's
//! facts and its siblings'. `judge` applies them all; the verdict is the worst finding.
//!
//! Each threshold says where it comes from (smartctl and libatasmart, as `crate::smart::verdict`
//! follows; Backblaze's statistics; the NVMe spec; the scan's buckets), never the model name.
//! The SMART data are `crate::smart`'s decoding: nothing here reads a page again.

use serde::Serialize;

use super::facts::{DiskFacts, TriageVerdict};
use crate::model::{NvmeHealth, SmartHealth};
use crate::smart::meaning::Meaning;

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
    /// The measured value and the threshold it was judged against, where numbers.
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
    /// The check over the disk and its siblings (`siblings_of`, for the outlier rules);
    /// `Rule::apply` stamps its findings with the rule's id and severity.
    pub check: fn(&DiskFacts, &[&DiskFacts]) -> Vec<Finding>,
}

impl Rule {
    /// The rule's findings on `disk`, with its id and severity.
    pub fn apply(&self, disk: &DiskFacts, siblings: &[&DiskFacts]) -> Vec<Finding> {
        let mut found = (self.check)(disk, siblings);
        for f in &mut found {
            f.rule = self.id;
            f.severity = self.severity;
        }
        found
    }
}

use TriageVerdict::{Failing, Suspect, Unknown};

/// Every rule, in the order findings of the same severity are listed.
pub static RULES: &[Rule] = &[
    Rule {
        id: "nothing-read",
        severity: Unknown,
        checks: "neither SMART nor any measurement could be read",
        check: nothing_read,
    },
    Rule {
        id: "smart-failed",
        severity: Failing,
        checks: "the drive's SMART overall health is FAILED",
        check: smart_failed,
    },
    Rule {
        id: "ata-pending-sectors",
        severity: Failing,
        checks: "ATA 197 Current_Pending_Sector above 0 (read by its meaning on the drive: a count it does not report or that cannot be true is a note)",
        check: ata_pending,
    },
    Rule {
        id: "ata-offline-uncorrectable",
        severity: Failing,
        checks: "ATA 198 Offline_Uncorrectable above 0",
        check: ata_offline_uncorrectable,
    },
    Rule {
        id: "attribute-at-threshold",
        severity: Failing,
        checks: "an ATA attribute other than a temperature, whatever its id, at or below its nonzero threshold now: the drive's own rule says it failed (a prefailure one predicts the drive's failure; an old-age one is worn past what the drive allows: an SSD's rated life, its spare)",
        check: attribute_at_threshold,
    },
    Rule {
        id: "nvme-critical-warning",
        severity: Failing,
        checks: "an NVMe critical-warning bit is set",
        check: nvme_critical_warning,
    },
    Rule {
        id: "nvme-spare-below-threshold",
        severity: Failing,
        checks: "NVMe available spare below the drive's own threshold",
        check: nvme_spare,
    },
    Rule {
        id: "self-test-failed",
        severity: Failing,
        checks: "the newest finished self-test failed",
        check: self_test_failed,
    },
    Rule {
        id: "surface-unreadable",
        severity: Failing,
        checks: "a sampled surface read failed",
        check: surface_unreadable,
    },
    Rule {
        id: "capacity-fake",
        severity: Failing,
        checks: "the newest capacity probe (`disktriage capacity`) found it stores less than it claims",
        check: capacity_fake,
    },
    Rule {
        id: "flush-lost-writes",
        severity: Failing,
        checks: "the newest power-cut check (`flushcheck --verify`) found acknowledged writes lost or torn",
        check: flush_lost_writes,
    },
    Rule {
        id: "ata-reallocated-sectors",
        severity: Suspect,
        checks: "ATA 5 Reallocated_Sector_Ct above 0 on a hard disk (an SSD's 5 counts retired NAND blocks: a note)",
        check: ata_reallocated,
    },
    Rule {
        id: "scsi-grown-defects",
        severity: Suspect,
        checks: "the SCSI disk's grown defect list (blocks it reassigned) is not empty",
        check: scsi_grown_defects,
    },
    Rule {
        id: "ata-reported-uncorrect",
        severity: Suspect,
        checks: "ATA 187 Reported_Uncorrect above 0",
        check: ata_reported_uncorrect,
    },
    Rule {
        id: "counters-grew",
        severity: Suspect,
        checks: "reallocated, pending, offline-uncorrectable or reported-uncorrectable sectors, SCSI grown defects, NVMe media errors or error-log entries grew since the disk's previous triage, or its unreadable samples beyond the sampling's noise",
        check: counters_grew,
    },
    Rule {
        id: "crc-errors-grew",
        severity: Suspect,
        checks: "ATA 199 interface CRC errors grew since the disk's previous triage or during this one (the cable or port; a lifetime count is a note)",
        check: crc_grew,
    },
    Rule {
        id: "temperature-at-threshold",
        severity: Suspect,
        checks: "an ATA temperature attribute at or below its threshold now",
        check: temperature_at_threshold,
    },
    Rule {
        id: "nvme-media-errors",
        severity: Suspect,
        checks: "NVMe media and data integrity errors above 0",
        check: nvme_media_errors,
    },
    Rule {
        id: "nvme-percentage-used",
        severity: Suspect,
        checks: "NVMe percentage used at or above 100",
        check: nvme_percentage_used,
    },
    Rule {
        id: "error-log-recent",
        severity: Suspect,
        checks: "the drive's error log has an error from the last 168 power-on hours",
        check: error_log_recent,
    },
    Rule {
        id: "link-below-best",
        severity: Suspect,
        checks: "the link runs slower or narrower than the disk and its port both support",
        check: link_below_best,
    },
    Rule {
        id: "surface-slow",
        severity: Suspect,
        checks: "a sampled surface read took 150 ms or more",
        check: surface_slow,
    },
    Rule {
        id: "temperature-high",
        severity: Suspect,
        checks: "the temperature during the triage passed the drive's own warning threshold",
        check: temperature_high,
    },
    Rule {
        id: "outlier-seq-read",
        severity: Suspect,
        checks: "sequential read more than 20 % below the median of its siblings",
        check: outlier_seq_read,
    },
    Rule {
        id: "trim-claim-broken",
        severity: Suspect,
        checks: "the newest TRIM check (`disktriage trimcheck`) found a discarded range reading otherwise than the drive claims",
        check: trim_claim_broken,
    },
    Rule {
        id: "flush-volatile-cache",
        severity: Suspect,
        checks: "the newest flush timing check found commits acknowledged faster than half a revolution",
        check: flush_volatile_cache,
    },
    Rule {
        id: "smart-hours-reset",
        severity: Suspect,
        checks: "SMART's power-on hours far below those of the drive's FARM log (Seagate): the SMART counter was reset",
        check: fitness::smart_hours_reset,
    },
    Rule {
        id: "erc-longer-than-timeout",
        severity: Suspect,
        checks: "an md array member whose error recovery (SCT ERC) may take longer than the kernel's command timeout",
        check: fitness::erc_longer_than_timeout,
    },
    Rule {
        id: "smr-in-array",
        severity: Suspect,
        checks: "an md array member that is zoned or shingled (SMR)",
        check: fitness::smr_in_array,
    },
];

/// A disk's verdict, its findings worst first, and notes: what was seen and judged no finding
/// (a lifetime CRC count, a threshold passed only in the past, an impossible count).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Judgement {
    pub verdict: TriageVerdict,
    pub findings: Vec<Finding>,
    pub notes: Vec<String>,
}

/// Judges one disk against the rules; `siblings_of` picks its siblings from `others`.
pub fn judge(disk: &DiskFacts, others: &[&DiskFacts]) -> Judgement {
    let siblings = siblings_of(disk, others);
    let mut findings: Vec<Finding> = RULES
        .iter()
        .flat_map(|rule| rule.apply(disk, &siblings))
        .collect();
    // Stable: findings of the same severity keep the table's order.
    findings.sort_by_key(|f| std::cmp::Reverse(f.severity));
    Judgement {
        verdict: findings
            .first()
            .map_or(TriageVerdict::Healthy, |f| f.severity),
        findings,
        notes: notes_of(disk),
    }
}

/// Judges every disk of one triage, in order. Disks are grouped by `SiblingKey` first, so a
/// thousand disks are not a million pairs.
pub fn judge_all(disks: &[DiskFacts]) -> Vec<Judgement> {
    let mut groups: std::collections::HashMap<SiblingKey<'_>, Vec<&DiskFacts>> =
        std::collections::HashMap::new();
    for disk in disks {
        if let Some(key) = sibling_key(disk) {
            groups.entry(key).or_default().push(disk);
        }
    }
    disks
        .iter()
        .map(|disk| {
            let group = sibling_key(disk)
                .and_then(|key| groups.get(&key))
                .map_or(&[][..], Vec::as_slice);
            judge(disk, group)
        })
        .collect()
}

/// What makes two disks equals, as `siblings_of` says; `None`: a disk with none.
type SiblingKey<'a> = (u64, Option<&'a str>, Option<crate::model::Transport>);

fn sibling_key(disk: &DiskFacts) -> Option<SiblingKey<'_>> {
    let me = &disk.identity;
    match (&me.model, me.transport) {
        _ if me.capacity_bytes == 0 => None,
        (Some(model), _) => Some((me.capacity_bytes, Some(model.as_str()), None)),
        (None, Some(transport)) => Some((me.capacity_bytes, None, Some(transport))),
        (None, None) => None,
    }
}

/// The equals of `disk` in `others`: same model and capacity; without a model (virtio), same
/// transport and capacity among disks with none. Unknown capacity: no siblings.
pub fn siblings_of<'a>(disk: &DiskFacts, others: &[&'a DiskFacts]) -> Vec<&'a DiskFacts> {
    let me = &disk.identity;
    if me.capacity_bytes == 0 {
        return Vec::new();
    }
    others
        .iter()
        .copied()
        .filter(|o| {
            let them = &o.identity;
            them.device != me.device
                && them.capacity_bytes == me.capacity_bytes
                && match (&me.model, &them.model) {
                    (Some(a), Some(b)) => a == b,
                    (None, None) => me.transport.is_some() && me.transport == them.transport,
                    _ => false,
                }
        })
        .collect()
}

// ---- helpers ----

/// A finding before `Rule::apply` stamps the rule's id and severity on it.
fn hit(
    sentence: String,
    next_step: impl Into<String>,
    value: Option<f64>,
    threshold: Option<f64>,
) -> Vec<Finding> {
    vec![Finding {
        rule: "",
        severity: TriageVerdict::Healthy,
        sentence,
        next_step: next_step.into(),
        value,
        threshold,
    }]
}

/// The device path the next steps name; a placeholder for a saved report (another host).
fn dev(disk: &DiskFacts) -> String {
    if disk.identity.from_saved_report {
        "/dev/<its disk>".to_string()
    } else {
        format!("/dev/{}", disk.identity.device)
    }
}

/// SMART data that could be read (not `Verdict::Unavailable`).
pub fn smart(disk: &DiskFacts) -> Option<&SmartHealth> {
    disk.readable_smart()
}

/// The NVMe health log of the readable SMART data.
pub fn nvme(disk: &DiskFacts) -> Option<&NvmeHealth> {
    disk.nvme_health()
}

/// A rule on an ATA count: a finding when `meaning` reads above 0 on this drive
/// (`crate::smart::meaning`, as `smart::verdict` judges it); unreported or implausible: a note.
fn ata_count(
    disk: &DiskFacts,
    meaning: Meaning,
    sentence: impl Fn(u64) -> String,
    next_step: &str,
) -> Vec<Finding> {
    match disk.ata_count(meaning) {
        Some(n) if n > 0 => hit(sentence(n), next_step, Some(n as f64), Some(0.0)),
        _ => Vec::new(),
    }
}

fn plural(n: u64, one: &str, many: &str) -> String {
    if n == 1 {
        format!("{n} {one}")
    } else {
        format!("{n} {many}")
    }
}

/// The SMART notes as `crate::smart::verdict` words them, then `fitness::notes`.
fn notes_of(disk: &DiskFacts) -> Vec<String> {
    let mut notes = disk
        .readable_smart()
        .map(|h| h.notes.clone())
        .unwrap_or_default();
    notes.extend(fitness::notes(disk));
    notes
}

/// A number as an admin reads it: no ".0" on whole numbers.
pub fn number(v: f64) -> String {
    if (v.fract() == 0.0 && v.abs() < 1e15) || v.abs() >= 100.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.1}")
    }
}

mod checks;
mod fitness;

use checks::*;
pub use checks::{OUTLIER_FRACTION, OUTLIER_MIN_SIBLINGS, RECENT_ERROR_HOURS, SLOW_MS, seq_mean};

#[cfg(test)]
mod tests;
