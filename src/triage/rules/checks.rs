//! The checks of `RULES`, one function each, with their thresholds and where each comes from.

use super::{Finding, ata_count, dev, hit, number, nvme, plural, smart};
use crate::history::utc_minute;
use crate::model::{AttributeState, SelfTestOutcome, Verdict};
use crate::smart::meaning::{self, Meaning};
use crate::smart::verdict::{
    OLD_AGE_AT_THRESHOLD, PREFAILURE_AT_THRESHOLD, implausible_media_errors,
};
use crate::triage::counters;
use crate::triage::facts::{DiskFacts, NOT_REACHED};

/// Unknown: nothing could be read, so no rule could judge; the reasons are
/// `DiskFacts::problems`.
pub(super) fn nothing_read(disk: &DiskFacts, _: &[&DiskFacts]) -> Vec<Finding> {
    let m = &disk.measurements;
    let measured = m.surface.as_ref().is_some_and(|s| s.reads > 0)
        || !m.seq.is_empty()
        || m.random_read_p50_ms.is_some();
    if smart(disk).is_some() || measured {
        return Vec::new();
    }
    let mut why: Vec<String> = disk.problems.clone();
    if let Some(reason) = disk
        .smart
        .as_ref()
        .and_then(|h| h.unavailable_reason.clone())
        && !why.iter().any(|p| p.contains(&reason))
    {
        why.insert(0, reason);
    }
    let why = if why.is_empty() {
        "no reason was recorded".to_string()
    } else {
        why.join("; ")
    };
    let next = if disk.problems.iter().any(|p| p.starts_with(NOT_REACHED)) {
        format!(
            "triage {} again, alone or with a longer --bound: it was never read",
            dev(disk)
        )
    } else {
        format!(
            "check that {} answers (dmesg, the cable, power) and that disktriage runs as root",
            dev(disk)
        )
    };
    hit(
        format!("nothing could be read from the disk: {why}"),
        next,
        None,
        None,
    )
}

/// The drive's own verdict as `crate::smart::verdict` reads it (RETURN STATUS failing,
/// `smart_status.passed` false, or a prefailure attribute failing with the status unknown).
/// NVMe critical warnings have their own rule.
pub(super) fn smart_failed(disk: &DiskFacts, _: &[&DiskFacts]) -> Vec<Finding> {
    let Some(h) = smart(disk) else {
        return Vec::new();
    };
    let reasons: Vec<&str> = h
        .findings
        .iter()
        .filter(|f| f.severity == Verdict::Failed)
        .map(|f| f.text.as_str())
        .filter(|t| !t.starts_with("NVMe critical warning"))
        // The attribute rules below judge those, in their own words.
        .filter(|t| !t.ends_with(PREFAILURE_AT_THRESHOLD) && !t.ends_with(OLD_AGE_AT_THRESHOLD))
        .collect();
    if reasons.is_empty() {
        return Vec::new();
    }
    hit(
        format!(
            "the drive's SMART overall health is FAILED: {}",
            reasons.join("; ")
        ),
        "back up now, then replace the disk",
        None,
        None,
    )
}

/// 197: sectors the drive could not read, pending reallocation; any is data at risk now
/// (libatasmart's BAD_SECTOR; one of Backblaze's five failure predictors).
pub(super) fn ata_pending(disk: &DiskFacts, _: &[&DiskFacts]) -> Vec<Finding> {
    let device = dev(disk);
    ata_count(
        disk,
        Meaning::PendingSectors,
        |n| {
            format!(
                "{} the drive could not read (pending reallocation)",
                plural(n, "sector", "sectors")
            )
        },
        &format!("back up now, then run `disktriage scan {device}` for the full map; replace"),
    )
}

/// 198: sectors the offline scan found uncorrectable (libatasmart's BAD_SECTOR; Backblaze).
pub(super) fn ata_offline_uncorrectable(disk: &DiskFacts, _: &[&DiskFacts]) -> Vec<Finding> {
    let device = dev(disk);
    ata_count(
        disk,
        Meaning::OfflineUncorrectable,
        |n| {
            format!(
                "{} found uncorrectable by the drive's offline scan",
                plural(n, "sector", "sectors")
            )
        },
        &format!("back up now, then run `disktriage scan {device}` for the full map; replace"),
    )
}

/// The NVMe critical-warning byte (log page 02h byte 0); smartctl fails the drive on any bit.
pub(super) fn nvme_critical_warning(disk: &DiskFacts, _: &[&DiskFacts]) -> Vec<Finding> {
    let Some(n) = nvme(disk).filter(|n| n.critical_warning != 0) else {
        return Vec::new();
    };
    let names = if n.critical_warnings.is_empty() {
        format!("bits 0x{:02x}", n.critical_warning)
    } else {
        n.critical_warnings.join(", ")
    };
    // Bit 1 alone is the temperature: the room or the airflow, not yet the drive.
    let next = if n.critical_warning == 0x02 {
        "check the cooling and airflow now; back up"
    } else {
        "back up now, then replace the drive"
    };
    hit(
        format!("the NVMe drive raises a critical warning: {names}"),
        next,
        Some(f64::from(n.critical_warning)),
        Some(0.0),
    )
}

/// Available spare below the drive's own threshold (log page 02h bytes 3 and 4): it runs out
/// of blocks to remap.
pub(super) fn nvme_spare(disk: &DiskFacts, _: &[&DiskFacts]) -> Vec<Finding> {
    match nvme(disk) {
        Some(n) if n.available_spare_pct < n.available_spare_threshold_pct => hit(
            format!(
                "the NVMe drive's available spare is {} %, below its own threshold of {} %",
                n.available_spare_pct, n.available_spare_threshold_pct
            ),
            "back up now, then replace the drive",
            Some(f64::from(n.available_spare_pct)),
            Some(f64::from(n.available_spare_threshold_pct)),
        ),
        _ => Vec::new(),
    }
}

/// The newest finished self-test failed (smartctl's exit bit 7; a later pass supersedes it,
/// as in `smart::verdict::judge_logs`).
pub(super) fn self_test_failed(disk: &DiskFacts, _: &[&DiskFacts]) -> Vec<Finding> {
    let Some(t) = disk
        .logs
        .as_ref()
        .and_then(|l| l.last_finished_self_test())
        .filter(|t| t.outcome == SelfTestOutcome::Failed)
    else {
        return Vec::new();
    };
    let lba = t
        .first_failing_lba
        .map(|l| format!(", first failing LBA {l}"))
        .unwrap_or_default();
    hit(
        format!(
            "the drive's last self-test ({}, at {} power-on hours) failed: {}{lba}",
            t.kind, t.power_on_hours, t.result
        ),
        "back up now, then replace the disk",
        t.first_failing_lba.map(|l| l as f64),
        None,
    )
}

/// LBAs named in a sentence, at most.
const LBAS_NAMED: usize = 5;

/// A sampled read failed: the disk returned an error for data it holds.
pub(super) fn surface_unreadable(disk: &DiskFacts, _: &[&DiskFacts]) -> Vec<Finding> {
    let Some(s) = disk
        .measurements
        .surface
        .as_ref()
        .filter(|s| !s.unreadable.is_empty())
    else {
        return Vec::new();
    };
    let block = u64::from(disk.identity.logical_block_size.max(1));
    let n = s.unreadable.len() as u64;
    hit(
        format!(
            "{} of {} sampled reads failed: unreadable {}",
            n,
            s.reads,
            s.unreadable_words(block, LBAS_NAMED)
        ),
        format!(
            "back up now, then run `disktriage scan {}` for the full map",
            dev(disk)
        ),
        Some(n as f64),
        Some(0.0),
    )
}

/// 5: sectors already remapped. A few are common and stable, but Backblaze sees failures rise
/// with any count above 0: watch, not failing. On an SSD it counts retired NAND: a note.
pub(super) fn ata_reallocated(disk: &DiskFacts, _: &[&DiskFacts]) -> Vec<Finding> {
    ata_count(
        disk,
        Meaning::ReallocatedSectors,
        |n| {
            format!(
                "{} already reallocated to spares",
                plural(n, "sector", "sectors")
            )
        },
        "back up, and triage it again in a few days: a growing count means replace",
    )
}

/// SCSI's grown defect list, the counterpart of ATA 5: blocks reassigned since the factory
/// (smartctl's "Elements in grown defect list"; SBC's READ DEFECT DATA).
pub(super) fn scsi_grown_defects(disk: &DiskFacts, _: &[&DiskFacts]) -> Vec<Finding> {
    match smart(disk).and_then(|h| h.scsi_grown_defects) {
        Some(n) if n > 0 => hit(
            format!(
                "{} in the disk's grown defect list (blocks reassigned to spares)",
                plural(n, "entry", "entries")
            ),
            "back up, and triage it again in a few days: a growing list means replace",
            Some(n as f64),
            Some(0.0),
        ),
        _ => Vec::new(),
    }
}

/// 187: reads the drive could not correct with ECC (Backblaze's five; libatasmart).
pub(super) fn ata_reported_uncorrect(disk: &DiskFacts, _: &[&DiskFacts]) -> Vec<Finding> {
    ata_count(
        disk,
        Meaning::ReportedUncorrect,
        |n| {
            format!(
                "the drive reported {} it could not correct",
                plural(n, "read error", "read errors")
            )
        },
        "back up, and triage it again in a few days: a growing count means replace",
    )
}

/// 199: CRC errors on the SATA link: the cable or port, not the media (smartmontools). The
/// count never falls, so a lifetime total is a note; growth since the last triage or during
/// this one is the finding.
pub(super) fn crc_grew(disk: &DiskFacts, _: &[&DiskFacts]) -> Vec<Finding> {
    let during = match (
        disk.ata_count(Meaning::CrcErrors),
        disk.measurements.crc_errors_after,
    ) {
        (Some(before), Some(after)) if after > before => Some((
            format!(
                "{} {before} -> {after} during this triage",
                counters::CRC_ERRORS
            ),
            before as f64,
            after as f64,
        )),
        _ => None,
    };
    grew(disk, &[counters::CRC_ERRORS])
        .into_iter()
        .chain(during)
        .flat_map(|(sentence, before, after)| {
            hit(
                format!("{sentence}: transfer errors on the link between disk and port"),
                "check the cable or port (reseat or replace the SATA cable); a count that \
                 grows after that is the port",
                Some(after),
                Some(before),
            )
        })
        .collect()
}

/// `counters::DAMAGE` that grew since the disk's last triage (see `triage::counters`): a drive
/// getting worse is the one to act on.
pub(super) fn counters_grew(disk: &DiskFacts, _: &[&DiskFacts]) -> Vec<Finding> {
    let mut names = counters::DAMAGE.to_vec();
    names.push(counters::UNREADABLE);
    let found = grew(disk, &names);
    let Some((_, before, after)) = found.first().cloned() else {
        return Vec::new();
    };
    let sentences: Vec<String> = found.into_iter().map(|(s, _, _)| s).collect();
    hit(
        format!("the disk got worse: {}", sentences.join("; ")),
        "back up now; a count that keeps growing means replace",
        Some(after),
        Some(before),
    )
}

/// The counters of `names` that grew since the last triage, with both values, each as
/// "pending sectors 0 -> 24 between 2026-11-20 14:05 UTC and 2026-12-07 09:12 UTC".
fn grew(disk: &DiskFacts, names: &[&str]) -> Vec<(String, f64, f64)> {
    let Some(previous) = &disk.previous else {
        return Vec::new();
    };
    let now = counters::values_of(disk);
    counters::grown(&previous.values, &now, names)
        .into_iter()
        .map(|(what, before, after)| {
            (
                format!(
                    "{what} {} -> {} between {} and {}",
                    number(before),
                    number(after),
                    utc_minute(previous.since_unix),
                    utc_minute(previous.now_unix)
                ),
                before,
                after,
            )
        })
        .collect()
}

/// The SMART standard's rule, whatever the id: a normalized value at or below its nonzero
/// threshold now is failed. Prefailure predicts failure; old-age is worn past what the drive
/// allows (an SSD at 0 % life, 184 at its limit). Temperatures have their own rule; "in the
/// past" is a note (one hot day long ago).
pub(super) fn attribute_at_threshold(disk: &DiskFacts, _: &[&DiskFacts]) -> Vec<Finding> {
    let Some(ata) = smart(disk).and_then(|h| h.ata.as_ref()) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for a in &ata.attributes {
        let threshold = a.threshold.unwrap_or(0);
        if a.state != AttributeState::FailingNow || threshold == 0 {
            continue;
        }
        let m = meaning::meaning_of(a, &ata.drive);
        if m == Meaning::Temperature {
            continue;
        }
        let next = match m {
            Meaning::LifeLeft | Meaning::SpareLeft => "back up, and replace it soon",
            _ => "back up now, then replace the disk",
        };
        let why = if a.prefailure {
            PREFAILURE_AT_THRESHOLD
        } else {
            OLD_AGE_AT_THRESHOLD
        };
        out.extend(hit(
            format!("{}{why}", meaning::failing_now_words(a, m)),
            next,
            Some(f64::from(a.value)),
            Some(f64::from(threshold)),
        ));
    }
    out
}

/// A temperature attribute at its threshold now: too hot now, whatever its flags.
pub(super) fn temperature_at_threshold(disk: &DiskFacts, _: &[&DiskFacts]) -> Vec<Finding> {
    let Some(ata) = smart(disk).and_then(|h| h.ata.as_ref()) else {
        return Vec::new();
    };
    ata.attributes
        .iter()
        .filter(|a| a.state == AttributeState::FailingNow && a.threshold.unwrap_or(0) > 0)
        .filter(|a| meaning::meaning_of(a, &ata.drive) == Meaning::Temperature)
        .flat_map(|a| {
            hit(
                meaning::failing_now_words(a, Meaning::Temperature),
                "check the cooling and airflow now",
                Some(f64::from(a.value)),
                a.threshold.map(f64::from),
            )
        })
        .collect()
}

/// NVMe Media and Data Integrity Errors: unrecovered data errors (log page 02h bytes
/// 160-175; `crate::smart::verdict` warns on any).
pub(super) fn nvme_media_errors(disk: &DiskFacts, _: &[&DiskFacts]) -> Vec<Finding> {
    match nvme(disk) {
        Some(n) if n.media_errors > 0 && !implausible_media_errors(n.media_errors) => hit(
            format!(
                "the NVMe drive counted {} media and data integrity errors",
                n.media_errors
            ),
            "back up, and triage it again in a few days: a growing count means replace",
            Some(n.media_errors as f64),
            Some(0.0),
        ),
        _ => Vec::new(),
    }
}

/// Percentage Used: the vendor's estimate of rated endurance used, 100 reached (log page 02h
/// byte 5; it may pass 100).
pub(super) fn nvme_percentage_used(disk: &DiskFacts, _: &[&DiskFacts]) -> Vec<Finding> {
    match nvme(disk) {
        Some(n) if n.percentage_used >= 100 => hit(
            format!(
                "the NVMe drive has used {}{} % of its rated write endurance",
                // The field stops at 255.
                if n.percentage_used == u8::MAX {
                    "at least "
                } else {
                    ""
                },
                n.percentage_used
            ),
            "plan to replace the drive; back up",
            Some(f64::from(n.percentage_used)),
            Some(100.0),
        ),
        _ => Vec::new(),
    }
}

/// "Recent" errors: within this many power-on hours (a week). Older ones are common on
/// healthy drives; `crate::smart::verdict` only notes them.
pub const RECENT_ERROR_HOURS: u64 = 168;

/// An error logged within `RECENT_ERROR_HOURS`. ATA only: an NVMe error log has no age.
pub(super) fn error_log_recent(disk: &DiskFacts, _: &[&DiskFacts]) -> Vec<Finding> {
    let Some(log) = disk.logs.as_ref().and_then(|l| l.error_log.read()) else {
        return Vec::new();
    };
    let (Some(now), Some(newest)) = (
        smart(disk).and_then(|h| h.power_on_hours),
        log.entries.first(),
    ) else {
        return Vec::new();
    };
    let Some(at) = newest.power_on_hours else {
        return Vec::new();
    };
    // The ATA log's hours wrap at 65536; an hour "in the future" is not judged.
    let Some(age) = now.checked_sub(at).filter(|a| *a <= RECENT_ERROR_HOURS) else {
        return Vec::new();
    };
    hit(
        format!(
            "the drive logged {} over its life, the newest {age} power-on hours ago: {}",
            plural(log.count, "error", "errors"),
            newest.error
        ),
        format!(
            "look at the error log (`disktriage smart {}`) and run a long self-test",
            dev(disk)
        ),
        Some(age as f64),
        Some(RECENT_ERROR_HOURS as f64),
    )
}

fn rate_words(rate: f64, kind: &str) -> String {
    let unit = if kind == "pcie" { "GT/s" } else { "Gb/s" };
    format!("{} {unit}", number(rate))
}

/// The negotiated link against the best disk and port both support (`triage::link`);
/// judged only where the best is known.
pub(super) fn link_below_best(disk: &DiskFacts, _: &[&DiskFacts]) -> Vec<Finding> {
    let Some(link) = &disk.link else {
        return Vec::new();
    };
    let slower = match (link.current_rate, link.best_rate) {
        // A hundredth of slack for rates read as decimals ("1.5 Gbps").
        (Some(now), Some(best)) if now < best * 0.99 => Some((now, best)),
        _ => None,
    };
    let narrower = match (link.width, link.max_width) {
        (Some(now), Some(most)) if now < most => Some((now, most)),
        _ => None,
    };
    if slower.is_none() && narrower.is_none() {
        return Vec::new();
    }
    let mut runs = Vec::new();
    let mut could = Vec::new();
    if let Some((now, best)) = slower {
        runs.push(rate_words(now, &link.kind));
        could.push(rate_words(best, &link.kind));
    }
    if let Some((now, most)) = narrower {
        runs.push(format!("x{now}"));
        could.push(format!("x{most}"));
    }
    let (runs, could) = (runs.join(" "), could.join(" "));
    let next = if link.kind == "pcie" {
        format!(
            "check the slot and riser: the link runs at {runs} where {could} is possible \
             (reseat the drive or use another slot)"
        )
    } else {
        format!("check the cable or port: the link runs at {runs} on a {could} disk")
    };
    let (value, threshold) = match slower {
        Some((now, best)) => (now, best),
        None => narrower.map_or((0.0, 0.0), |(n, m)| (f64::from(n), f64::from(m))),
    };
    hit(
        format!(
            "the {} link runs at {runs}, below the {could} the disk and its port support",
            match link.kind.as_str() {
                "pcie" => "PCIe".to_string(),
                other => other.to_uppercase(),
            }
        ),
        next,
        Some(value),
        Some(threshold),
    )
}

pub use crate::triage::facts::SLOW_MS;

/// Sampled reads at or above `SLOW_MS`: a weak area the drive reads only with retries.
pub(super) fn surface_slow(disk: &DiskFacts, _: &[&DiskFacts]) -> Vec<Finding> {
    let Some(s) = disk.measurements.surface.as_ref() else {
        return Vec::new();
    };
    let slow: Vec<&(u64, f64)> = s.slow.iter().filter(|(_, ms)| *ms >= SLOW_MS).collect();
    let Some(slowest) = slow.iter().copied().max_by(|a, b| a.1.total_cmp(&b.1)) else {
        return Vec::new();
    };
    let block = u64::from(disk.identity.logical_block_size.max(1));
    hit(
        format!(
            "{} of {} sampled reads took {} ms or more (the slowest {} ms, at LBA {})",
            slow.len(),
            s.reads,
            number(SLOW_MS),
            number(slowest.1),
            slowest.0 / block
        ),
        format!(
            "run `disktriage scan {}` for the full map of slow blocks; back up",
            dev(disk)
        ),
        Some(slowest.1),
        Some(SLOW_MS),
    )
}

/// The highest temperature seen (measured or in SMART) above the drive's own warning threshold
/// (`DiskFacts::temperature_warning_c`).
pub(super) fn temperature_high(disk: &DiskFacts, _: &[&DiskFacts]) -> Vec<Finding> {
    let Some(limit) = disk.temperature_warning_c else {
        return Vec::new();
    };
    let seen = disk
        .measurements
        .temperature_max_c
        .into_iter()
        .chain(smart(disk).and_then(|h| h.temperature_c))
        .max();
    match seen {
        Some(t) if t > limit => hit(
            format!("the drive reached {t} °C, above its own warning threshold of {limit} °C"),
            "check the cooling and airflow (a heatsink, the fans)",
            Some(t as f64),
            Some(limit as f64),
        ),
        _ => Vec::new(),
    }
}

/// The outlier limit below the siblings' median. Equal disks on one host read within a few
/// percent; 20 % is well past that spread and a short read's noise.
pub const OUTLIER_FRACTION: f64 = 0.20;

/// Siblings an outlier's sentence names; the rest are counted.
const NAMED_SIBLINGS: usize = 5;

/// Siblings needed for a median worth comparing with.
pub const OUTLIER_MIN_SIBLINGS: usize = 2;

/// The mean of a disk's sequential reads (start, middle, end) in MB/s.
pub fn seq_mean(disk: &DiskFacts) -> Option<f64> {
    disk.seq_mean()
}

/// The median, by selection rather than a sort (a disk among a thousand equals).
fn median(mut values: Vec<f64>) -> Option<f64> {
    let n = values.len();
    if n == 0 {
        return None;
    }
    let (below, mid, _) = values.select_nth_unstable_by(n / 2, f64::total_cmp);
    let upper = *mid;
    if n % 2 == 1 {
        return Some(upper);
    }
    // The lower middle is the largest of the half below.
    let lower = below
        .iter()
        .copied()
        .max_by(f64::total_cmp)
        .unwrap_or(upper);
    Some((lower + upper) / 2.0)
}

/// A disk much slower than its equals: its mean sequential read more than
/// `OUTLIER_FRACTION` below the median of at least `OUTLIER_MIN_SIBLINGS` siblings'.
pub(super) fn outlier_seq_read(disk: &DiskFacts, siblings: &[&DiskFacts]) -> Vec<Finding> {
    let Some(mine) = seq_mean(disk) else {
        return Vec::new();
    };
    let measured: Vec<(&str, f64)> = siblings
        .iter()
        .filter_map(|s| Some((s.identity.device.as_str(), seq_mean(s)?)))
        .collect();
    if measured.len() < OUTLIER_MIN_SIBLINGS {
        return Vec::new();
    }
    let Some(mid) = median(measured.iter().map(|(_, v)| *v).collect()) else {
        return Vec::new();
    };
    let limit = mid * (1.0 - OUTLIER_FRACTION);
    if mine >= limit || mid <= 0.0 {
        return Vec::new();
    }
    // Slower at every position, against the median there: contention on the shared host
    // (CPU for loop and zram, a controller) slows one read, not all three.
    let slow_everywhere = disk.measurements.seq.iter().all(|own| {
        let there: Vec<f64> = siblings
            .iter()
            .flat_map(|s| s.measurements.seq.iter())
            .filter(|s| s.position == own.position && s.mb_per_s.is_finite())
            .map(|s| s.mb_per_s)
            .collect();
        median(there).is_none_or(|m| own.mb_per_s < m * (1.0 - OUTLIER_FRACTION))
    });
    if !slow_everywhere {
        return Vec::new();
    }
    // A host of a thousand equal disks names a few of them, not all.
    let mut names = measured
        .iter()
        .take(NAMED_SIBLINGS)
        .map(|(n, _)| *n)
        .collect::<Vec<_>>()
        .join(", ");
    if measured.len() > NAMED_SIBLINGS {
        names += &format!(" and {} more", measured.len() - NAMED_SIBLINGS);
    }
    hit(
        format!(
            "it reads {} MB/s sequentially, {} % below the {} MB/s median of its {} \
             siblings ({})",
            number(mine),
            number(((1.0 - mine / mid) * 100.0).round()),
            number(mid),
            measured.len(),
            names
        ),
        format!(
            "check its link and cable, then run `disktriage scan {}`: a disk slower than its \
             equals often retries reads",
            dev(disk)
        ),
        Some(mine),
        Some(limit),
    )
}

/// The power-cut check lost acknowledged writes: what a database was told is safe did not
/// survive. Only the newest flush check counts.
pub(super) fn flush_lost_writes(disk: &DiskFacts, _: &[&DiskFacts]) -> Vec<Finding> {
    let Some(f) = disk.flush.as_ref().filter(|f| f.verify && f.lost > 0) else {
        return Vec::new();
    };
    hit(
        format!(
            "the power-cut check of {} lost {}: the drive's cache lies about flushes ({})",
            f.when,
            plural(f.lost, "acknowledged write", "acknowledged writes"),
            f.sentence.trim_end_matches('.')
        ),
        format!(
            "turn the write cache off (`disktriage cache {} off`) and check again, or keep \
             databases off this disk",
            dev(disk)
        ),
        Some(f.lost as f64),
        Some(0.0),
    )
}

/// The newest capacity probe found a fake: data written past its real end is lost.
pub(super) fn capacity_fake(disk: &DiskFacts, _: &[&DiskFacts]) -> Vec<Finding> {
    let Some(c) = disk.capacity.as_ref().filter(|c| c.verdict == "fake") else {
        return Vec::new();
    };
    hit(
        format!("the capacity probe of {}: {}", c.when, c.sentence),
        "do not store data on it past what it really stores: replace it".to_string(),
        None,
        None,
    )
}

/// The TRIM claim is broken: a file system or array relying on zeros after a discard reads
/// stale blocks.
pub(super) fn trim_claim_broken(disk: &DiskFacts, _: &[&DiskFacts]) -> Vec<Finding> {
    let Some(t) = disk.trim.as_ref().filter(|t| t.verdict == "broken") else {
        return Vec::new();
    };
    hit(
        format!("the TRIM check of {}: {}", t.when, t.sentence),
        "do not let an array or a file system rely on zeros after a discard here (no \
         discard-based resync skip)"
            .to_string(),
        None,
        None,
    )
}

/// Commits acknowledged by a volatile cache: safe only with a battery- or capacitor-backed
/// cache, which timing cannot see.
pub(super) fn flush_volatile_cache(disk: &DiskFacts, _: &[&DiskFacts]) -> Vec<Finding> {
    let Some(f) = disk
        .flush
        .as_ref()
        .filter(|f| !f.verify && f.verdict == "volatile-cache")
    else {
        return Vec::new();
    };
    hit(
        format!(
            "the flush timing check of {}: {}",
            f.when,
            f.sentence.trim_end_matches('.')
        ),
        format!(
            "run the power-cut check (`disktriage flushcheck {} --record LOG`) or turn the \
             write cache off for databases",
            dev(disk)
        ),
        None,
        None,
    )
}

#[cfg(test)]
mod median_tests {
    use super::median;

    #[test]
    fn the_median_by_selection_is_the_sorted_middle() {
        assert_eq!(median(vec![]), None);
        assert_eq!(median(vec![3.0]), Some(3.0));
        assert_eq!(median(vec![5.0, 1.0, 3.0]), Some(3.0));
        assert_eq!(median(vec![4.0, 1.0, 3.0, 2.0]), Some(2.5));
        assert_eq!(median(vec![2.0, 2.0, 9.0, 1.0]), Some(2.0));
    }
}
