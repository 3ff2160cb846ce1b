//! What changed since the disk's last triage: the history keeps each verdict and key values
//! (`record_of`); the next triage compares them (`changes`). The caller finds the earlier
//! record with `history::Loaded::last_triage` (by WWN or serial, never the kernel name alone).
//!
//! Counters are reported on any change (one new pending sector matters); unreadable samples
//! only beyond the sampling's noise; measurements never (see `super::counters`).

use std::fmt;

use serde::Serialize;

use super::counters::{sampled_change, values_of};
use super::facts::DiskFacts;
use super::rules::{Judgement, number};
use crate::history::{TriageRecord, utc_minute};

/// One value that changed: "pending sectors 0 -> 24 since 2026-11-20 14:05 UTC".
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Change {
    pub what: String,
    pub before: f64,
    pub after: f64,
    /// When the earlier triage ran (seconds since the epoch).
    pub since_unix: u64,
}

impl fmt::Display for Change {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} {} -> {} since {}",
            self.what,
            number(self.before),
            number(self.after),
            utc_minute(self.since_unix)
        )
    }
}

pub use super::counters::{
    AVAILABLE_SPARE, CRC_ERRORS, CRITICAL_WARNING, ERROR_LOG, MEASURES, MEDIA_ERRORS,
    OFFLINE_UNCORRECTABLE, PENDING, PERCENTAGE_USED, RANDOM_P99, REALLOCATED, REPORTED_UNCORRECT,
    RETIRED, SEQ_READ, SLOW, SURFACE_READS, TEMPERATURE, UNREADABLE,
};

/// What the history keeps of a triage: the verdict, the rule ids and the key values read.
pub fn record_of(facts: &DiskFacts, judgement: &Judgement) -> TriageRecord {
    TriageRecord {
        verdict: judgement.verdict.as_str().to_string(),
        values: values_of(facts),
        rules: judgement
            .findings
            .iter()
            .map(|f| f.rule.to_string())
            .collect(),
    }
}

/// The values that changed since an earlier record (made at `since_unix`), by name. A value
/// known on one side only is no change.
pub fn changes(previous: &TriageRecord, since_unix: u64, now: &TriageRecord) -> Vec<Change> {
    now.values
        .iter()
        .filter_map(|(what, &after)| {
            let before = *previous.values.get(what)?;
            let changed = if what == UNREADABLE {
                // Each triage samples other places.
                sampled_change(&previous.values, &now.values)
            } else {
                !MEASURES.contains(&what.as_str()) && after != before
            };
            changed.then(|| Change {
                what: what.clone(),
                before,
                after,
                since_unix,
            })
        })
        .collect()
}

/// A change as the JSON report writes it: `since` in RFC 3339.
#[derive(Debug, Serialize)]
pub struct ChangeJson<'a> {
    pub what: &'a str,
    pub before: f64,
    pub after: f64,
    pub since: String,
}

impl Change {
    pub fn to_json(&self) -> ChangeJson<'_> {
        ChangeJson {
            what: &self.what,
            before: self.before,
            after: self.after,
            since: crate::history::utc_rfc3339(self.since_unix),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{
        AtaAttribute, AtaSmart, AtaSmartStatus, AttributeState, SmartReading, Transport,
    };
    use crate::triage::facts::{SeqPosition, SeqRead, SurfaceSample};
    use crate::triage::rules::judge;

    fn attribute(id: u8, raw: u64) -> AtaAttribute {
        AtaAttribute {
            id,
            name: crate::smart::ata::attribute_name(id).unwrap_or("?").into(),
            known: crate::smart::ata::attribute_name(id).is_some(),
            flags: 0,
            prefailure: false,
            value: 100,
            worst: 100,
            threshold: Some(0),
            raw,
            raw_text: None,
            decoded: None,
            state: AttributeState::NoThreshold,
        }
    }

    fn facts(pending: u64, mb: f64) -> DiskFacts {
        let mut d = DiskFacts::default();
        d.identity.device = "sdb".into();
        d.smart = Some(crate::smart::assess(
            "sdb",
            Transport::Sata,
            SmartReading::Ata(AtaSmart {
                smart_supported: true,
                smart_enabled: true,
                status: AtaSmartStatus::Good,
                status_note: None,
                attributes: vec![attribute(197, pending), attribute(5, 0)],
                drive: Default::default(),
                attribute_problem: None,
            }),
        ));
        d.measurements.seq = vec![SeqRead {
            position: SeqPosition::Start,
            offset: 0,
            bytes: 1 << 26,
            mb_per_s: mb,
        }];
        d.measurements.surface = Some(SurfaceSample {
            reads: 100,
            ..Default::default()
        });
        d
    }

    fn record(d: &DiskFacts) -> TriageRecord {
        record_of(d, &judge(d, &[]))
    }

    #[test]
    fn the_record_keeps_the_verdict_the_rules_and_what_was_read() {
        let r = record(&facts(24, 180.0));
        assert_eq!(r.verdict, "failing");
        assert_eq!(r.rules, ["ata-pending-sectors"]);
        assert_eq!(r.values[PENDING], 24.0);
        assert_eq!(r.values[REALLOCATED], 0.0);
        assert_eq!(r.values[SEQ_READ], 180.0);
        assert_eq!(r.values[UNREADABLE], 0.0);
        // Not read: left out, not 0.
        assert!(!r.values.contains_key(CRC_ERRORS));
        assert!(!r.values.contains_key(MEDIA_ERRORS));
        assert!(!r.values.contains_key(RANDOM_P99));
        let mut d = facts(0, 180.0);
        d.smart = None;
        d.measurements.surface = None;
        let r = record(&d);
        assert!(!r.values.contains_key(PENDING));
        assert!(!r.values.contains_key(UNREADABLE));
    }

    #[test]
    fn counters_change_on_any_difference_measurements_never() {
        let since = 1_795_000_000;
        let before = record(&facts(0, 200.0));
        let now = record(&facts(24, 190.0));
        let found = changes(&before, since, &now);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(
            found[0].to_string(),
            "pending sectors 0 -> 24 since 2026-11-18 11:06 UTC"
        );
        assert_eq!(found[0].to_json().since, "2026-11-18T11:06:40Z");
        // Five times slower under another load is still the same disk: no change said.
        let now = record(&facts(0, 40.0));
        assert_eq!(now.values[SEQ_READ], 40.0);
        assert!(changes(&before, since, &now).is_empty());
        // Nothing changed: nothing said.
        assert!(changes(&before, since, &before).is_empty());
        // Known on one side only: no change.
        let mut d = facts(5, 200.0);
        d.smart = None;
        assert!(changes(&before, since, &record(&d)).is_empty());
        assert!(changes(&record(&d), since, &before).is_empty());
    }
}
