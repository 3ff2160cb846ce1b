//! The values a triage keeps of each disk (`TriageRecord::values`), by name, and which of them
//! growing since the previous triage is a finding (`grown`).
//!
//! Damage counters are judged by growth: one new pending sector between two triages says more
//! than a lifetime total. Each triage samples other places, so unreadable samples count only
//! beyond the sampling's noise (`beyond_sampling_noise`). `MEASURES` are never compared.

use std::collections::BTreeMap;

use super::facts::DiskFacts;
use crate::smart::meaning::Meaning;

/// The names of the values a record keeps (the JSON's and the sentences' words).
pub const PENDING: &str = "pending sectors";
pub const REALLOCATED: &str = "reallocated sectors";
pub const RETIRED: &str = "retired NAND blocks";
pub const OFFLINE_UNCORRECTABLE: &str = "offline-uncorrectable sectors";
pub const REPORTED_UNCORRECT: &str = "reported uncorrectable errors";
pub const GROWN_DEFECTS: &str = "SCSI grown defects";
pub const CRC_ERRORS: &str = "interface CRC errors";
pub const CRITICAL_WARNING: &str = "NVMe critical warning";
pub const MEDIA_ERRORS: &str = "NVMe media errors";
pub const AVAILABLE_SPARE: &str = "NVMe available spare %";
pub const PERCENTAGE_USED: &str = "NVMe percentage used %";
pub const ERROR_LOG: &str = "error log entries";
pub const UNREADABLE: &str = "unreadable samples";
pub const SURFACE_READS: &str = "surface samples";
pub const SLOW: &str = "slow samples";
pub const SEQ_READ: &str = "sequential read MB/s";
pub const RANDOM_P99: &str = "random read p99 ms";
pub const TEMPERATURE: &str = "highest temperature °C";

/// Measurements: kept, never reported as a change. They move with the host's load (one disk
/// alone and nine in parallel read the same disk at 1,042 and 198 MB/s); a slow disk is a
/// finding of its own (`surface-slow`, `outlier-seq-read`), judged on the run itself.
pub const MEASURES: [&str; 5] = [SEQ_READ, RANDOM_P99, TEMPERATURE, SLOW, SURFACE_READS];

/// Counters whose growth says the disk got worse (the `counters-grew` rule); the interface
/// CRC count has a rule of its own (`crc-errors-grew`: the cable, not the disk).
pub const DAMAGE: [&str; 7] = [
    REALLOCATED,
    GROWN_DEFECTS,
    PENDING,
    OFFLINE_UNCORRECTABLE,
    REPORTED_UNCORRECT,
    MEDIA_ERRORS,
    ERROR_LOG,
];

/// Every key value of `facts` that could be read (one that could not is left out, not 0).
pub fn values_of(facts: &DiskFacts) -> BTreeMap<String, f64> {
    let mut values = BTreeMap::new();
    let mut put = |name: &str, v: Option<f64>| {
        if let Some(v) = v.filter(|v| v.is_finite()) {
            values.insert(name.to_string(), v);
        }
    };
    let count = |meaning| facts.ata_count(meaning).map(|v| v as f64);
    put(PENDING, count(Meaning::PendingSectors));
    put(REALLOCATED, count(Meaning::ReallocatedSectors));
    put(RETIRED, count(Meaning::RetiredBlocks));
    put(OFFLINE_UNCORRECTABLE, count(Meaning::OfflineUncorrectable));
    put(REPORTED_UNCORRECT, count(Meaning::ReportedUncorrect));
    put(CRC_ERRORS, count(Meaning::CrcErrors));
    put(
        GROWN_DEFECTS,
        facts
            .readable_smart()
            .and_then(|h| h.scsi_grown_defects)
            .map(|n| n as f64),
    );
    let nvme = facts.nvme_health();
    put(
        CRITICAL_WARNING,
        nvme.map(|n| f64::from(n.critical_warning)),
    );
    put(MEDIA_ERRORS, nvme.map(|n| n.media_errors as f64));
    put(
        AVAILABLE_SPARE,
        nvme.map(|n| f64::from(n.available_spare_pct)),
    );
    put(PERCENTAGE_USED, nvme.map(|n| f64::from(n.percentage_used)));
    put(
        ERROR_LOG,
        facts
            .logs
            .as_ref()
            .and_then(|l| l.error_log.read())
            .map(|l| l.count as f64),
    );
    let m = &facts.measurements;
    let surface = m.surface.as_ref();
    put(UNREADABLE, surface.map(|s| s.unreadable.len() as f64));
    put(SURFACE_READS, surface.map(|s| s.reads as f64));
    put(
        SLOW,
        surface.map(|s| {
            s.slow
                .iter()
                .filter(|(_, ms)| *ms >= super::facts::SLOW_MS)
                .count() as f64
        }),
    );
    put(
        SEQ_READ,
        facts.seq_mean().map(|v| (v * 10.0).round() / 10.0),
    );
    put(RANDOM_P99, m.random_read_p99_ms);
    put(
        TEMPERATURE,
        m.temperature_max_c
            .or_else(|| facts.readable_smart().and_then(|h| h.temperature_c))
            .map(|t| t as f64),
    );
    values
}

/// A difference of sampled counts is one when sampling alone gives it by 2.5 % chance each
/// way (5 % in all).
const NOISE_P: f64 = 0.025;

/// The binomial tail: the chance that `at_least` of `n` events fall on one side, each with
/// probability `p`. In log space so thousands of samples do not underflow.
fn tail_at_least(n: u64, at_least: u64, p: f64) -> f64 {
    if at_least == 0 {
        return 1.0;
    }
    if at_least > n || p <= 0.0 {
        return 0.0;
    }
    if p >= 1.0 {
        return 1.0;
    }
    let (lp, lq) = (p.ln(), (1.0 - p).ln());
    // ln C(n, k), built up from k = 0.
    let mut ln_choose = 0.0;
    let mut sum = 0.0;
    for k in 0..=n {
        if k > 0 {
            ln_choose += ((n - k + 1) as f64).ln() - (k as f64).ln();
        }
        if k >= at_least {
            sum += (ln_choose + k as f64 * lp + (n - k) as f64 * lq).exp();
        }
    }
    sum.min(1.0)
}

/// Whether unreadable counts `before` and `after` differ beyond sampling: each of the
/// `before + after` falls in the newer triage with its share of the reads (equal without read
/// counts); a split that far happens by chance less than `NOISE_P`. "3 -> 2" and "0 -> 4" are
/// noise; "0 -> 6" is not.
pub fn beyond_sampling_noise(
    before: u64,
    reads_before: Option<u64>,
    after: u64,
    reads_after: Option<u64>,
) -> bool {
    let n = before + after;
    if n == 0 {
        return false;
    }
    let p = match (reads_before, reads_after) {
        (Some(b), Some(a)) if a + b > 0 => a as f64 / (a + b) as f64,
        _ => 0.5,
    };
    let more = tail_at_least(n, after, p);
    let fewer = tail_at_least(n, before, 1.0 - p);
    more < NOISE_P || fewer < NOISE_P
}

/// A value that grew: (name, before, after).
pub type Growth = (String, f64, f64);

/// The counters of `names` that grew from `previous` to `now`, in order; unreadable samples
/// only beyond the sampling's noise.
pub fn grown(
    previous: &BTreeMap<String, f64>,
    now: &BTreeMap<String, f64>,
    names: &[&str],
) -> Vec<Growth> {
    names
        .iter()
        .filter_map(|&name| {
            let (before, after) = (*previous.get(name)?, *now.get(name)?);
            let grew = if name == UNREADABLE {
                after > before && sampled_change(previous, now)
            } else {
                after > before
            };
            grew.then(|| (name.to_string(), before, after))
        })
        .collect()
}

/// Whether the unreadable samples of two records differ beyond the sampling's noise.
pub fn sampled_change(previous: &BTreeMap<String, f64>, now: &BTreeMap<String, f64>) -> bool {
    let get = |m: &BTreeMap<String, f64>, k: &str| m.get(k).map(|v| v.max(0.0) as u64);
    match (get(previous, UNREADABLE), get(now, UNREADABLE)) {
        (Some(before), Some(after)) => beyond_sampling_noise(
            before,
            get(previous, SURFACE_READS),
            after,
            get(now, SURFACE_READS),
        ),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_binomial_tail() {
        assert!((tail_at_least(5, 5, 0.5) - 1.0 / 32.0).abs() < 1e-12);
        assert!((tail_at_least(4, 0, 0.5) - 1.0).abs() < 1e-12);
        assert!((tail_at_least(2, 1, 0.5) - 0.75).abs() < 1e-12);
        assert_eq!(tail_at_least(3, 4, 0.5), 0.0);
        // Thousands of samples neither underflow nor pass 1.
        let t = tail_at_least(5000, 2500, 0.5);
        assert!(t > 0.49 && t < 0.52, "{t}");
    }

    #[test]
    fn sampled_counts_differ_only_beyond_their_noise() {
        let same = Some(1000);
        // The example: 3 -> 2 is the samples falling elsewhere.
        assert!(!beyond_sampling_noise(3, same, 2, same));
        assert!(!beyond_sampling_noise(2, same, 3, same));
        assert!(!beyond_sampling_noise(0, same, 4, same));
        assert!(beyond_sampling_noise(0, same, 6, same));
        assert!(beyond_sampling_noise(1, same, 12, same));
        assert!(beyond_sampling_noise(12, same, 1, same));
        assert!(!beyond_sampling_noise(0, same, 0, same));
        // Ten times the reads: ten times the unreadable samples is no change.
        assert!(!beyond_sampling_noise(2, Some(100), 20, Some(1000)));
        assert!(beyond_sampling_noise(2, Some(1000), 20, Some(1000)));
    }

    #[test]
    fn growth_is_of_damage_counters_and_of_samples_beyond_noise() {
        let map = |pairs: &[(&str, f64)]| -> BTreeMap<String, f64> {
            pairs.iter().map(|(k, v)| (k.to_string(), *v)).collect()
        };
        let before = map(&[
            (PENDING, 0.0),
            (REALLOCATED, 8.0),
            (UNREADABLE, 3.0),
            (SURFACE_READS, 1000.0),
        ]);
        let now = map(&[
            (PENDING, 24.0),
            (REALLOCATED, 8.0),
            (UNREADABLE, 2.0),
            (SURFACE_READS, 1000.0),
        ]);
        let names = [PENDING, REALLOCATED, UNREADABLE];
        assert_eq!(
            grown(&before, &now, &names),
            [(PENDING.to_string(), 0.0, 24.0)]
        );
        let now = map(&[(UNREADABLE, 14.0), (SURFACE_READS, 1000.0)]);
        assert_eq!(
            grown(&before, &now, &names),
            [(UNREADABLE.to_string(), 3.0, 14.0)]
        );
        // A counter that fell (a pending sector reallocated) did not grow.
        let now = map(&[(PENDING, 0.0)]);
        assert!(grown(&map(&[(PENDING, 2.0)]), &now, &names).is_empty());
    }
}
