//! The health verdict: PASSED, WARNING or FAILED with reasons, from what a drive reported.
//!
//! The rules, and where they come from:
//! - ATA FAILED: SMART RETURN STATUS says failing; or an attribute other than a temperature,
//!   whatever its id, is at or below its nonzero threshold now (the SMART standard's own rule,
//!   which smartctl prints as FAILING_NOW; prefailure or old-age only changes the words).
//! - ATA WARNING: a temperature attribute at its limit; reallocated, pending, offline- or
//!   reported-uncorrectable counts above zero (libatasmart's BAD_SECTOR idea), each read by
//!   its meaning on this drive (`super::meaning`); an attribute table that could not be read.
//! - Notes, never a verdict: an attribute at its threshold only in the past, a lifetime
//!   interface CRC count (the cable), an SSD's retired blocks, a count the drive does not
//!   report or that cannot be true.
//! - NVMe FAILED: any critical-warning bit (smartctl: `passed = critical_warning == 0`).
//!   WARNING: percentage used at or above 100, media and data-integrity errors above zero.
//! - smartctl: its `smart_status.passed`, plus the same table rules on the data it returns;
//!   exit-status bits 0-1 mean it read nothing.
//! - The drive's logs (`judge_logs`): the newest finished self-test failed is a WARNING;
//!   errors in the error log are a note.

use super::ata::attribute_temperature;
use super::meaning::{self, Count, Meaning};
use crate::model::{
    AtaAttribute, AtaSmart, AtaSmartStatus, AttributeState, DriveLogs, Finding, NvmeHealth,
    SelfTestOutcome, SmartHealth, SmartReading, SmartctlReport, Transport, Verdict,
};

struct Judge {
    findings: Vec<Finding>,
    notes: Vec<String>,
}

impl Judge {
    fn new() -> Self {
        Judge {
            findings: Vec::new(),
            notes: Vec::new(),
        }
    }

    fn fail(&mut self, text: impl Into<String>) {
        self.findings.push(Finding {
            severity: Verdict::Failed,
            text: text.into(),
        });
    }

    fn warn(&mut self, text: impl Into<String>) {
        self.findings.push(Finding {
            severity: Verdict::Warning,
            text: text.into(),
        });
    }

    fn verdict(&self) -> Verdict {
        self.findings
            .iter()
            .map(|f| f.severity)
            .max()
            .unwrap_or(Verdict::Passed)
    }
}

/// Judges a reading of `device`.
pub fn assess(device: &str, transport: Transport, reading: SmartReading) -> SmartHealth {
    let mut health = SmartHealth {
        device: device.to_string(),
        transport,
        source: String::new(),
        verdict: Verdict::Unavailable,
        findings: Vec::new(),
        unavailable_reason: None,
        temperature_c: None,
        power_on_hours: None,
        ata: None,
        nvme: None,
        scsi_grown_defects: None,
        notes: Vec::new(),
    };
    let mut judge = Judge::new();
    match reading {
        SmartReading::Unavailable { reason } => {
            health.source = "none".into();
            health.unavailable_reason = Some(reason);
            return health;
        }
        SmartReading::Ata(ata) => {
            health.source = "ATA SMART".into();
            if let Some(reason) = ata_unavailable(&ata) {
                health.unavailable_reason = Some(reason);
                health.ata = Some(ata);
                return health;
            }
            judge_ata(&ata, &mut judge);
            health.temperature_c = ata_temperature(&ata);
            health.power_on_hours = ata_power_on_hours(&ata);
            health.ata = Some(ata);
        }
        SmartReading::Nvme(nvme) => {
            health.source = "NVMe SMART/Health log".into();
            judge_nvme(&nvme, &mut judge);
            health.temperature_c = nvme.temperature_c();
            health.power_on_hours = u64::try_from(nvme.power_on_hours).ok();
            health.nvme = Some(nvme);
        }
        SmartReading::Smartctl(report) => {
            health.source = match &report.version {
                Some(v) => format!("smartctl {v}"),
                None => "smartctl".into(),
            };
            if let Some(reason) = judge_smartctl(&report, transport, &mut judge) {
                health.unavailable_reason = Some(reason);
                return health;
            }
            health.temperature_c = report
                .temperature_c
                .or_else(|| report.ata.as_ref().and_then(ata_temperature))
                .or_else(|| report.nvme.as_ref().and_then(NvmeHealth::temperature_c));
            health.power_on_hours = report.power_on_hours;
            health.scsi_grown_defects = report.scsi_grown_defects;
            let report = *report;
            health.ata = report.ata;
            health.nvme = report.nvme;
        }
    }
    health.verdict = judge.verdict();
    health.findings = judge.findings;
    health.notes.extend(judge.notes);
    health
}

/// Adds the drive's logs to a verdict: the newest finished self-test failing is a WARNING (a
/// later pass supersedes an old failure); logged errors are a note (healthy drives have a few).
/// A health not available stays so; applying it twice changes nothing.
pub fn judge_logs(health: &mut SmartHealth, logs: &DriveLogs) {
    if health.verdict == Verdict::Unavailable {
        return;
    }
    if let Some(t) = logs.last_finished_self_test()
        && t.outcome == SelfTestOutcome::Failed
    {
        let text = format!(
            "the last self-test ({}, at {} power-on hours) ended: {}{}",
            t.kind,
            t.power_on_hours,
            t.result,
            t.first_failing_lba
                .map(|l| format!(" (first failing LBA {l})"))
                .unwrap_or_default()
        );
        if !health.findings.iter().any(|f| f.text == text) {
            health.findings.push(Finding {
                severity: Verdict::Warning,
                text,
            });
        }
    }
    if let Some(log) = logs.error_log.read()
        && log.count > 0
    {
        let note = format!(
            "the drive logged {} error(s) over its life ({}); old errors are common and not              judged: see the entries and when they happened",
            log.count, log.source
        );
        if !health.notes.contains(&note) {
            health.notes.push(note);
        }
    }
    health.verdict = health
        .findings
        .iter()
        .map(|f| f.severity)
        .max()
        .unwrap_or(Verdict::Passed);
}

fn ata_unavailable(ata: &AtaSmart) -> Option<String> {
    if !ata.smart_supported {
        Some("the drive does not support SMART".into())
    } else if !ata.smart_enabled {
        Some(
            "SMART is disabled on the drive (disktriage does not enable it: that is a write; \
             `smartctl -s on` does)"
                .into(),
        )
    } else {
        None
    }
}

/// How a prefailure attribute's FAILED reason ends (the triage words its own).
pub const PREFAILURE_AT_THRESHOLD: &str =
    ": a prefailure attribute, the drive predicts its failure";
/// The same for an old-age attribute.
pub const OLD_AGE_AT_THRESHOLD: &str = ": an old-age attribute, worn past what the drive allows";

/// NVMe media errors of n * 2^32: a firmware's high word, not real errors.
pub fn implausible_media_errors(n: u128) -> bool {
    n >= 1 << 32 && n.is_multiple_of(1 << 32)
}

fn judge_ata(ata: &AtaSmart, judge: &mut Judge) {
    if let Some(note) = &ata.status_note {
        judge.notes.push(note.clone());
    }
    match ata.status {
        AtaSmartStatus::Failing => {
            judge.fail("SMART RETURN STATUS: the drive predicts its own failure");
        }
        AtaSmartStatus::Unknown => judge
            .notes
            .push("SMART status unknown: judged by the attribute table".into()),
        AtaSmartStatus::Good => {}
    }
    if let Some(problem) = &ata.attribute_problem {
        judge.warn(format!("attribute table not checked: {problem}"));
    }
    for a in &ata.attributes {
        let reading = meaning::read(a, &ata.drive);
        let threshold = a.threshold.unwrap_or(0);
        match a.state {
            // The standard's rule, whatever the id; a temperature is only a warning.
            AttributeState::FailingNow if threshold > 0 => {
                let words = meaning::failing_now_words(a, reading.meaning);
                if reading.meaning == Meaning::Temperature {
                    judge.warn(words);
                } else if a.prefailure {
                    judge.fail(format!("{words}{PREFAILURE_AT_THRESHOLD}"));
                } else {
                    judge.fail(format!("{words}{OLD_AGE_AT_THRESHOLD}"));
                }
            }
            // One hot day or one bad hour long ago: a note, not a finding.
            AttributeState::FailedInPast if threshold > 0 => judge.notes.push(format!(
                "{} {} was at or below its threshold {} in the past (worst {}); fine now",
                a.id, a.name, threshold, a.worst
            )),
            _ => {}
        }
        match (reading.meaning, &reading.count) {
            (m, Count::NotReported) if m.is_count() => judge.notes.push(format!(
                "{} {}: the drive does not report it (raw {})",
                a.id,
                a.name,
                raw_shown(a)
            )),
            (m, Count::Implausible(why)) if m.is_count() => judge.notes.push(format!(
                "{} {} {}: implausible ({why}), not judged",
                a.id,
                a.name,
                raw_shown(a)
            )),
            (
                Meaning::ReallocatedSectors
                | Meaning::PendingSectors
                | Meaning::OfflineUncorrectable
                | Meaning::ReportedUncorrect,
                Count::Value(n),
            ) if *n > 0 => judge.warn(format!("{} {} {} > 0", a.id, a.name, n)),
            (Meaning::RetiredBlocks, Count::Value(n)) if *n > 0 => judge.notes.push(format!(
                "{} {} {}: NAND blocks the SSD retired (wear, not unreadable sectors)",
                a.id, a.name, n
            )),
            (Meaning::CrcErrors, Count::Value(n)) if *n > 0 => judge.notes.push(format!(
                "{} {} {}: interface CRC errors in the drive's life, usually a cable or \
                 connector; check the cable if it grows",
                a.id, a.name, n
            )),
            _ => {}
        }
    }
}

/// The raw value as the drive's report printed it, else the 48-bit number.
fn raw_shown(a: &AtaAttribute) -> String {
    a.raw_text.clone().unwrap_or_else(|| a.raw.to_string())
}

/// Temperature from the attribute table.
fn ata_temperature(ata: &AtaSmart) -> Option<i64> {
    attribute_temperature(&ata.attributes)
}

/// Power-on hours from attribute 9 (low 32 bits).
fn ata_power_on_hours(ata: &AtaSmart) -> Option<u64> {
    ata.attributes
        .iter()
        .find(|a| a.id == 9)
        .map(|a| a.raw & 0xffff_ffff)
}

fn judge_nvme(nvme: &NvmeHealth, judge: &mut Judge) {
    // Values no working drive reports: said, and left out of the verdict.
    if nvme.temperature_kelvin != 0 && nvme.temperature_c().is_none() {
        judge.notes.push(format!(
            "NVMe composite temperature {} K ({} C): implausible, not judged",
            nvme.temperature_kelvin,
            i64::from(nvme.temperature_kelvin) - 273
        ));
    }
    if nvme.available_spare_pct == 0 && nvme.available_spare_threshold_pct == 0 {
        judge.notes.push(
            "NVMe available spare and its threshold both 0 %: not reported (implausible), \
             not judged"
                .into(),
        );
    }
    for name in &nvme.critical_warnings {
        judge.fail(format!("NVMe critical warning: {name}"));
    }
    if nvme.warning_temp_minutes > 0 || nvme.critical_temp_minutes > 0 {
        judge.notes.push(format!(
            "the NVMe drive ran {} minutes above its warning temperature and {} above its \
             critical one in its life (a note: the critical-warning bit says when it is too \
             hot now)",
            nvme.warning_temp_minutes, nvme.critical_temp_minutes
        ));
    }
    if nvme.percentage_used >= 100 {
        judge.warn(format!(
            "NVMe percentage used {}% >= 100% (rated endurance reached)",
            nvme.percentage_used
        ));
    }
    if implausible_media_errors(nvme.media_errors) {
        judge.notes.push(format!(
            "NVMe media and data integrity errors {}: implausible (exactly a multiple of \
             2^32), not judged",
            nvme.media_errors
        ));
    } else if nvme.media_errors > 0 {
        judge.warn(format!(
            "NVMe media and data integrity errors: {}",
            nvme.media_errors
        ));
    }
}

/// Judges smartctl's report; `Some(reason)` when it has no health data.
fn judge_smartctl(
    report: &SmartctlReport,
    transport: Transport,
    judge: &mut Judge,
) -> Option<String> {
    let messages = if report.messages.is_empty() {
        String::new()
    } else {
        format!(": {}", report.messages.join("; "))
    };
    if report.exit_status & 0x03 != 0 {
        return Some(format!(
            "SMART not available on {transport}: smartctl could not read it (exit status \
             {}){messages}",
            report.exit_status
        ));
    }
    match report.passed {
        None if report.smart_available == Some(false) => {
            return Some(format!(
                "SMART not available on {transport} (smartctl: the device has no SMART \
                 support){messages}"
            ));
        }
        None if report.ata.is_none() && report.nvme.is_none() => {
            return Some(format!(
                "smartctl gave no health status for this {transport} device{messages}"
            ));
        }
        None => judge
            .notes
            .push("smartctl gave no overall health status: judged by the data".into()),
        Some(false) => {
            let detail = report
                .scsi_ie_string
                .as_ref()
                .map(|s| format!(" ({s})"))
                .unwrap_or_default();
            // For NVMe the critical-warning bits below give the reasons by name.
            if report.nvme.as_ref().is_none_or(|n| n.critical_warning == 0) {
                judge.fail(format!("smartctl: SMART overall-health FAILED{detail}"));
            }
        }
        Some(true) => {}
    }
    if let Some(ata) = &report.ata {
        judge_ata(ata, judge);
    }
    if let Some(nvme) = &report.nvme {
        judge_nvme(nvme, judge);
    }
    if let Some(n) = report.scsi_grown_defects.filter(|n| *n > 0) {
        judge.warn(format!("SCSI grown defect list: {n} entries"));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::AtaAttribute;

    fn attr(id: u8, prefailure: bool, value: u8, worst: u8, thresh: u8, raw: u64) -> AtaAttribute {
        let state = match thresh {
            0 => AttributeState::NoThreshold,
            t if value <= t => AttributeState::FailingNow,
            t if worst <= t => AttributeState::FailedInPast,
            _ => AttributeState::Ok,
        };
        let name = crate::smart::ata::attribute_name(id);
        AtaAttribute {
            id,
            name: name.unwrap_or("Unknown_Attribute").into(),
            known: name.is_some(),
            flags: u16::from(prefailure),
            prefailure,
            value,
            worst,
            threshold: Some(thresh),
            raw,
            raw_text: None,
            decoded: None,
            state,
        }
    }

    fn ata(status: AtaSmartStatus, attributes: Vec<AtaAttribute>) -> SmartReading {
        SmartReading::Ata(AtaSmart {
            smart_supported: true,
            smart_enabled: true,
            status,
            status_note: None,
            attributes,
            drive: Default::default(),
            attribute_problem: None,
        })
    }

    fn texts(h: &SmartHealth) -> Vec<&str> {
        h.findings.iter().map(|f| f.text.as_str()).collect()
    }

    #[test]
    fn healthy_ata_passes() {
        let h = assess(
            "sda",
            Transport::Sata,
            ata(
                AtaSmartStatus::Good,
                vec![
                    attr(5, true, 100, 100, 36, 0),
                    attr(194, false, 100, 100, 0, 31),
                ],
            ),
        );
        assert_eq!(h.verdict, Verdict::Passed);
        assert!(h.findings.is_empty());
        assert_eq!(h.temperature_c, Some(31));
    }

    #[test]
    fn failing_status_fails() {
        let h = assess("sda", Transport::Sata, ata(AtaSmartStatus::Failing, vec![]));
        assert_eq!(h.verdict, Verdict::Failed);
        assert!(texts(&h)[0].contains("predicts its own failure"));
    }

    #[test]
    fn reallocated_sectors_warn_with_the_count() {
        let h = assess(
            "sda",
            Transport::Sata,
            ata(AtaSmartStatus::Good, vec![attr(5, true, 100, 100, 36, 12)]),
        );
        assert_eq!(h.verdict, Verdict::Warning);
        assert_eq!(texts(&h), ["5 Reallocated_Sector_Ct 12 > 0"]);
        for id in [197, 198, 187] {
            let h = assess(
                "sda",
                Transport::Sata,
                ata(AtaSmartStatus::Good, vec![attr(id, false, 100, 100, 0, 1)]),
            );
            assert_eq!(h.verdict, Verdict::Warning, "{id}");
        }
    }

    #[test]
    fn crc_errors_are_a_note_not_a_warning() {
        let h = assess(
            "sda",
            Transport::Sata,
            ata(AtaSmartStatus::Good, vec![attr(199, false, 200, 200, 0, 3)]),
        );
        assert_eq!(h.verdict, Verdict::Passed);
        assert!(h.notes[0].contains("cable"));
    }

    #[test]
    fn the_standards_threshold_rule_judges_every_id() {
        // A prefailure attribute failing now: the drive predicts its failure.
        let h = assess(
            "sda",
            Transport::Sata,
            ata(AtaSmartStatus::Good, vec![attr(1, true, 10, 10, 50, 0)]),
        );
        assert_eq!(h.verdict, Verdict::Failed);
        assert!(texts(&h)[0].contains("at 10, threshold 50, now): a prefailure"));
        // An old-age attribute failing now: failed too.
        let h = assess(
            "sda",
            Transport::Usb,
            ata(AtaSmartStatus::Unknown, vec![attr(9, false, 10, 10, 50, 0)]),
        );
        assert_eq!(h.verdict, Verdict::Failed);
        assert!(
            texts(&h)[0].ends_with(OLD_AGE_AT_THRESHOLD),
            "{:?}",
            texts(&h)
        );
        // Failed in the past only: a note, the verdict stays PASSED.
        let h = assess(
            "sda",
            Transport::Sata,
            ata(AtaSmartStatus::Good, vec![attr(3, true, 100, 20, 21, 0)]),
        );
        assert_eq!(h.verdict, Verdict::Passed);
        assert!(h.notes.iter().any(|n| n.contains("in the past")));
        // Vendor ids count too: Kingston's 231 (prefailure) at its threshold, Crucial's 202
        // (old-age) at 0.
        let h = assess(
            "sda",
            Transport::Sata,
            ata(
                AtaSmartStatus::Good,
                vec![
                    attr(231, true, 10, 10, 10, 0),
                    attr(202, false, 0, 0, 1, 100),
                ],
            ),
        );
        assert_eq!(h.verdict, Verdict::Failed);
        assert!(texts(&h)[0].contains("231 Unknown_Attribute at 10, threshold 10"));
        assert!(texts(&h)[1].contains("202"));
        // A temperature at its limit is a warning, whatever its flags.
        let h = assess(
            "sda",
            Transport::Sata,
            ata(AtaSmartStatus::Good, vec![attr(194, true, 40, 26, 50, 60)]),
        );
        assert_eq!(h.verdict, Verdict::Warning);
        assert!(texts(&h)[0].contains("temperature at its limit"));
    }

    #[test]
    fn disabled_or_unsupported_smart_is_unavailable() {
        let mut a = AtaSmart {
            smart_supported: true,
            smart_enabled: false,
            status: AtaSmartStatus::Unknown,
            status_note: None,
            attributes: vec![],
            drive: Default::default(),
            attribute_problem: None,
        };
        let h = assess("sda", Transport::Sata, SmartReading::Ata(a.clone()));
        assert_eq!(h.verdict, Verdict::Unavailable);
        assert!(h.unavailable_reason.unwrap().contains("disabled"));
        a.smart_supported = false;
        let h = assess("sda", Transport::Sata, SmartReading::Ata(a));
        assert!(h.unavailable_reason.unwrap().contains("does not support"));
    }

    #[test]
    fn unreadable_table_warns() {
        let SmartReading::Ata(mut a) = ata(AtaSmartStatus::Good, vec![]) else {
            unreachable!()
        };
        a.attribute_problem = Some("SMART READ DATA page: checksum mismatch".into());
        let h = assess("sda", Transport::Sata, SmartReading::Ata(a));
        assert_eq!(h.verdict, Verdict::Warning);
        assert!(texts(&h)[0].contains("checksum"));
    }

    fn nvme(critical: u8, used: u8, media_errors: u128) -> NvmeHealth {
        NvmeHealth {
            critical_warning: critical,
            critical_warnings: crate::smart::nvme::critical_warning_names(critical),
            temperature_kelvin: 323,
            available_spare_pct: 100,
            available_spare_threshold_pct: 10,
            percentage_used: used,
            data_units_read: 0,
            data_units_written: 0,
            host_read_commands: 0,
            host_write_commands: 0,
            controller_busy_minutes: 0,
            power_cycles: 0,
            power_on_hours: 5,
            unsafe_shutdowns: 0,
            media_errors,
            error_log_entries: 0,
            warning_temp_minutes: 0,
            critical_temp_minutes: 0,
            temperature_sensors_kelvin: vec![],
        }
    }

    #[test]
    fn nvme_rules() {
        let h = assess(
            "nvme0n1",
            Transport::Nvme,
            SmartReading::Nvme(nvme(0, 3, 0)),
        );
        assert_eq!(h.verdict, Verdict::Passed);
        assert_eq!(h.temperature_c, Some(50));
        assert_eq!(h.power_on_hours, Some(5));
        let h = assess(
            "nvme0n1",
            Transport::Nvme,
            SmartReading::Nvme(nvme(4, 3, 0)),
        );
        assert_eq!(h.verdict, Verdict::Failed);
        assert_eq!(texts(&h), ["NVMe critical warning: reliability degraded"]);
        let h = assess(
            "nvme0n1",
            Transport::Nvme,
            SmartReading::Nvme(nvme(0, 100, 0)),
        );
        assert_eq!(h.verdict, Verdict::Warning);
        let h = assess(
            "nvme0n1",
            Transport::Nvme,
            SmartReading::Nvme(nvme(0, 99, 1)),
        );
        assert_eq!(h.verdict, Verdict::Warning);
        assert!(texts(&h)[0].contains("media"));
        let h = assess(
            "nvme0n1",
            Transport::Nvme,
            SmartReading::Nvme(nvme(0x09, 120, 1)),
        );
        assert_eq!(h.verdict, Verdict::Failed);
        assert_eq!(h.findings.len(), 4);
    }

    fn smartctl(exit: i32, passed: Option<bool>, available: Option<bool>) -> SmartctlReport {
        SmartctlReport {
            version: Some("7.3".into()),
            exit_status: exit,
            passed,
            smart_available: available,
            protocol: Some("SCSI".into()),
            temperature_c: None,
            power_on_hours: None,
            scsi_grown_defects: None,
            scsi_ie_string: None,
            ata: None,
            nvme: None,
            messages: vec![],
        }
    }

    #[test]
    fn smartctl_rules() {
        let h = assess(
            "sdb",
            Transport::Scsi,
            SmartReading::Smartctl(Box::new(smartctl(4, None, Some(false)))),
        );
        assert_eq!(h.verdict, Verdict::Unavailable);
        assert!(
            h.unavailable_reason
                .unwrap()
                .starts_with("SMART not available on scsi")
        );
        let h = assess(
            "sdb",
            Transport::Scsi,
            SmartReading::Smartctl(Box::new(smartctl(2, Some(true), Some(true)))),
        );
        assert_eq!(h.verdict, Verdict::Unavailable, "bit 1 means no data");
        assert!(
            h.unavailable_reason
                .unwrap()
                .starts_with("SMART not available on scsi: smartctl could not read it")
        );
        let h = assess(
            "sdb",
            Transport::Scsi,
            SmartReading::Smartctl(Box::new(smartctl(0, Some(true), Some(true)))),
        );
        assert_eq!(h.verdict, Verdict::Passed);
        assert_eq!(h.source, "smartctl 7.3");
        let mut r = smartctl(8, Some(false), Some(true));
        r.scsi_ie_string = Some("FAILURE PREDICTION THRESHOLD EXCEEDED".into());
        let h = assess("sdb", Transport::Scsi, SmartReading::Smartctl(Box::new(r)));
        assert_eq!(h.verdict, Verdict::Failed);
        assert!(texts(&h)[0].contains("THRESHOLD"));
        let mut r = smartctl(0, Some(true), Some(true));
        r.scsi_grown_defects = Some(4);
        let h = assess("sdb", Transport::Scsi, SmartReading::Smartctl(Box::new(r)));
        assert_eq!(h.verdict, Verdict::Warning);
        // NVMe through smartctl: the reasons come from the bits, not a generic line.
        let mut r = smartctl(8, Some(false), Some(true));
        r.nvme = Some(nvme(4, 0, 0));
        let h = assess("sdb", Transport::Usb, SmartReading::Smartctl(Box::new(r)));
        assert_eq!(texts(&h), ["NVMe critical warning: reliability degraded"]);
    }
}
