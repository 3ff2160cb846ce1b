//! Each rule on facts that trigger it and facts that do not, several on the lab's captured
//! `smartctl -j` output and NVMe pages (`tests/fixtures/pages/`); the docs' table against `RULES`.

use std::path::PathBuf;

use super::*;
use crate::model::{
    AtaAttribute, AtaSmart, AtaSmartStatus, AttributeState, DriveLogs, ErrorEntry, ErrorLog,
    LogRead, SelfTestEntry, SelfTestLog, SelfTestOutcome, SelfTestStatus, SmartReading, Transport,
};
use crate::scan::Span;
use crate::smart::{assess, parse_health_log, parse_smartctl_json, parse_smartctl_logs};
use crate::triage::facts::{LinkState, SeqPosition, SeqRead, SurfaceSample, Unreadable};

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

fn ata_health(status: AtaSmartStatus, attributes: Vec<AtaAttribute>) -> SmartHealth {
    ata_health_on(Default::default(), status, attributes)
}

/// `ata_health` of a table from `drive` (its meaning depends on the drive).
fn ata_health_on(
    drive: crate::model::AtaDrive,
    status: AtaSmartStatus,
    attributes: Vec<AtaAttribute>,
) -> SmartHealth {
    assess(
        "sda",
        Transport::Sata,
        SmartReading::Ata(AtaSmart {
            smart_supported: true,
            smart_enabled: true,
            status,
            status_note: None,
            attributes,
            drive,
            attribute_problem: None,
        }),
    )
}

fn nvme_health(f: impl FnOnce(&mut NvmeHealth)) -> SmartHealth {
    let mut n = NvmeHealth {
        critical_warning: 0,
        critical_warnings: vec![],
        temperature_kelvin: 313,
        available_spare_pct: 100,
        available_spare_threshold_pct: 10,
        percentage_used: 3,
        data_units_read: 0,
        data_units_written: 0,
        host_read_commands: 0,
        host_write_commands: 0,
        controller_busy_minutes: 0,
        power_cycles: 0,
        power_on_hours: 100,
        unsafe_shutdowns: 0,
        media_errors: 0,
        error_log_entries: 0,
        warning_temp_minutes: 0,
        critical_temp_minutes: 0,
        temperature_sensors_kelvin: vec![],
    };
    f(&mut n);
    n.critical_warnings = crate::smart::nvme::critical_warning_names(n.critical_warning);
    assess("nvme0n1", Transport::Nvme, SmartReading::Nvme(n))
}

fn seq(mb: f64) -> Vec<SeqRead> {
    [SeqPosition::Start, SeqPosition::Middle, SeqPosition::End]
        .into_iter()
        .map(|position| SeqRead {
            position,
            offset: 0,
            bytes: 1 << 26,
            mb_per_s: mb,
        })
        .collect()
}

/// A healthy-looking disk: 1 TB, model "M1", measured (so never unknown), no SMART.
fn disk(device: &str) -> DiskFacts {
    let mut d = DiskFacts::default();
    d.identity.device = device.into();
    d.identity.model = Some("M1".into());
    d.identity.capacity_bytes = 1_000_000_000_000;
    d.identity.logical_block_size = 512;
    d.identity.transport = Some(Transport::Sata);
    d.measurements.seq = seq(200.0);
    d
}

fn with_smart(h: SmartHealth) -> DiskFacts {
    let mut d = disk("sda");
    d.smart = Some(h);
    d
}

fn judged(d: &DiskFacts) -> Judgement {
    judge(d, &[])
}

fn rules_of(j: &Judgement) -> Vec<&'static str> {
    j.findings.iter().map(|f| f.rule).collect()
}

/// The one finding of `rule` (fails when there is none or several).
fn only<'a>(j: &'a Judgement, rule: &str) -> &'a Finding {
    let of: Vec<&Finding> = j.findings.iter().filter(|f| f.rule == rule).collect();
    assert_eq!(of.len(), 1, "{rule} in {:?}", j.findings);
    of[0]
}

#[test]
fn the_table_has_unique_kebab_ids_and_every_check_is_reachable() {
    let mut ids: Vec<&str> = RULES.iter().map(|r| r.id).collect();
    assert!(
        ids.iter()
            .all(|id| { !id.is_empty() && id.chars().all(|c| c.is_ascii_lowercase() || c == '-') })
    );
    ids.sort_unstable();
    let n = ids.len();
    ids.dedup();
    assert_eq!(ids.len(), n, "duplicate rule ids");
    for r in RULES {
        assert_ne!(r.severity, TriageVerdict::Healthy, "{}", r.id);
        assert!(!r.checks.is_empty());
    }
}

#[test]
fn a_plain_measured_disk_is_healthy() {
    let j = judged(&disk("sda"));
    assert_eq!(j.verdict, TriageVerdict::Healthy);
    assert!(j.findings.is_empty());
    let j = judged(&with_smart(ata_health(
        AtaSmartStatus::Good,
        vec![
            attr(5, true, 100, 100, 36, 0),
            attr(197, false, 100, 100, 0, 0),
        ],
    )));
    assert_eq!(j.verdict, TriageVerdict::Healthy, "{:?}", j.findings);
}

#[test]
fn nothing_read_is_unknown_with_the_reason() {
    let mut d = disk("sdc");
    d.measurements = Default::default();
    d.problems = vec!["surface: cannot open /dev/sdc: No such device".into()];
    d.smart = Some(assess(
        "sdc",
        Transport::Sata,
        SmartReading::Unavailable {
            reason: "the drive refuses the command".into(),
        },
    ));
    let j = judged(&d);
    assert_eq!(j.verdict, TriageVerdict::Unknown);
    let f = only(&j, "nothing-read");
    assert!(
        f.sentence.contains("the drive refuses the command"),
        "{f:?}"
    );
    assert!(f.sentence.contains("No such device"), "{f:?}");
    // One measurement is enough to judge: not unknown.
    d.measurements.random_read_p50_ms = Some(4.0);
    assert_eq!(judged(&d).verdict, TriageVerdict::Healthy);
    // Readable SMART is enough too.
    let mut d = with_smart(ata_health(AtaSmartStatus::Good, vec![]));
    d.measurements = Default::default();
    assert_eq!(judged(&d).verdict, TriageVerdict::Healthy);
}

#[test]
fn smart_failed_is_failing() {
    let j = judged(&with_smart(ata_health(AtaSmartStatus::Failing, vec![])));
    assert_eq!(j.verdict, TriageVerdict::Failing);
    let f = only(&j, "smart-failed");
    assert!(f.sentence.contains("predicts its own failure"), "{f:?}");
    assert!(f.next_step.contains("back up now"));
    let j = judged(&with_smart(ata_health(AtaSmartStatus::Good, vec![])));
    assert!(rules_of(&j).is_empty());
}

#[test]
fn ata_counts_give_their_verdicts() {
    for (id, rule, verdict) in [
        (197, "ata-pending-sectors", TriageVerdict::Failing),
        (198, "ata-offline-uncorrectable", TriageVerdict::Failing),
        (5, "ata-reallocated-sectors", TriageVerdict::Suspect),
        (187, "ata-reported-uncorrect", TriageVerdict::Suspect),
    ] {
        let j = judged(&with_smart(ata_health(
            AtaSmartStatus::Good,
            vec![attr(id, false, 100, 100, 0, 24)],
        )));
        assert_eq!(j.verdict, verdict, "{id}");
        let f = only(&j, rule);
        assert_eq!((f.value, f.threshold), (Some(24.0), Some(0.0)), "{id}");
        assert!(f.sentence.contains("24"), "{f:?}");
        let j = judged(&with_smart(ata_health(
            AtaSmartStatus::Good,
            vec![attr(id, false, 100, 100, 0, 0)],
        )));
        assert!(j.findings.is_empty(), "{id}: {:?}", j.findings);
    }
    // A lifetime CRC count is about the cable and never resets: a note, not a finding.
    let j = judged(&with_smart(ata_health(
        AtaSmartStatus::Good,
        vec![attr(199, false, 200, 200, 0, 12)],
    )));
    assert_eq!(j.verdict, TriageVerdict::Healthy, "{:?}", j.findings);
    assert!(
        j.notes
            .iter()
            .any(|n| n.contains("12") && n.contains("check the cable if it grows")),
        "{:?}",
        j.notes
    );
    let j = judged(&with_smart(ata_health(
        AtaSmartStatus::Good,
        vec![attr(197, false, 100, 100, 0, 1)],
    )));
    assert!(
        only(&j, "ata-pending-sectors")
            .next_step
            .contains("disktriage scan /dev/sda")
    );
}

#[test]
fn the_standards_threshold_rule_judges_every_id_by_its_flags() {
    // Prefailure at its threshold now fails, even with PASSED (the issue's
    // `184 End-to-End_Error 098 098 099 NOW` was only suspect).
    let j = judged(&with_smart(ata_health(
        AtaSmartStatus::Good,
        vec![attr(184, true, 98, 98, 99, 2)],
    )));
    assert_eq!(j.verdict, TriageVerdict::Failing, "{:?}", j.findings);
    let f = only(&j, "attribute-at-threshold");
    assert_eq!((f.value, f.threshold), (Some(98.0), Some(99.0)));
    assert!(f.sentence.contains("corrupted data"), "{f:?}");
    assert!(!rules_of(&j).contains(&"smart-failed"), "{:?}", j.findings);
    // A vendor-specific id counts too: `231 SSD_Life_Left 010 010 010` (prefailure).
    let j = judged(&with_smart(ata_health(
        AtaSmartStatus::Good,
        vec![attr(231, true, 10, 10, 10, 0)],
    )));
    assert_eq!(j.verdict, TriageVerdict::Failing, "{:?}", j.findings);
    // Old-age (`202 Percent_Lifetime_Remain 000 000 001` on a Crucial) fails too, in its
    // meaning's words.
    let crucial = crate::model::AtaDrive {
        model: Some("CT120BX500SSD1".into()),
        solid_state: Some(true),
        sectors: Some(234_441_648),
    };
    let h = ata_health_on(
        crucial,
        AtaSmartStatus::Good,
        vec![attr(202, false, 0, 0, 1, 100)],
    );
    let j = judged(&with_smart(h));
    assert_eq!(j.verdict, TriageVerdict::Failing, "{:?}", j.findings);
    let f = only(&j, "attribute-at-threshold");
    assert!(
        f.sentence.ends_with("worn past what the drive allows"),
        "{f:?}"
    );
    assert!(f.sentence.contains("used its rated life"), "{f:?}");
    assert!(f.next_step.contains("replace it soon"), "{f:?}");
    // In the past only (`190 ... In_the_past` after one hot day): a note.
    let j = judged(&with_smart(ata_health(
        AtaSmartStatus::Good,
        vec![attr(190, false, 66, 45, 45, 34)],
    )));
    assert_eq!(j.verdict, TriageVerdict::Healthy, "{:?}", j.findings);
    assert!(
        j.notes.iter().any(|n| n.contains("in the past")),
        "{:?}",
        j.notes
    );
    // A temperature at its threshold now: its own finding, not a failure.
    let j = judged(&with_smart(ata_health(
        AtaSmartStatus::Good,
        vec![attr(194, false, 40, 26, 50, 60)],
    )));
    assert_eq!(rules_of(&j), ["temperature-at-threshold"]);
    // Status unknown and a prefailure attribute failing: judged once, by the attribute rule.
    let j = judged(&with_smart(ata_health(
        AtaSmartStatus::Unknown,
        vec![attr(1, true, 5, 5, 6, 0)],
    )));
    assert_eq!(rules_of(&j), ["attribute-at-threshold"]);
}

#[test]
fn a_scsi_disks_grown_defects_are_suspect() {
    let doc = serde_json::json!({
        "json_format_version": [1, 0],
        "smartctl": {"version": [7, 3], "exit_status": 0},
        "device": {"protocol": "SCSI"},
        "smart_status": {"passed": true},
        "scsi_grown_defect_list": 56
    });
    let j = judged(&from_smartctl("sdb", Transport::Scsi, &doc));
    assert_eq!(j.verdict, TriageVerdict::Suspect, "{:?}", j.findings);
    assert!(
        only(&j, "scsi-grown-defects")
            .sentence
            .starts_with("56 entries in the disk's grown defect list")
    );
}

#[test]
fn counts_are_read_by_their_meaning_sentinels_and_impossible_ones_are_notes() {
    // `197 ... 4294967295` on an HP disk: not reported.
    let j = judged(&with_smart(ata_health(
        AtaSmartStatus::Good,
        vec![attr(197, false, 100, 100, 0, 4_294_967_295)],
    )));
    assert_eq!(j.verdict, TriageVerdict::Healthy, "{:?}", j.findings);
    assert!(
        j.notes.iter().any(|n| n.contains("does not report")),
        "{:?}",
        j.notes
    );
    // `198 ... 205784768053248` on a healthy Seagate SSD: implausible, never a verdict.
    let j = judged(&with_smart(ata_health(
        AtaSmartStatus::Good,
        vec![attr(198, false, 100, 100, 0, 205_784_768_053_248)],
    )));
    assert_eq!(j.verdict, TriageVerdict::Healthy, "{:?}", j.findings);
    assert!(
        j.notes.iter().any(|n| n.contains("implausible")),
        "{:?}",
        j.notes
    );
    // `5 ... 0 (2000 0)`: the count is the low word.
    let j = judged(&with_smart(ata_health(
        AtaSmartStatus::Good,
        vec![attr(5, true, 100, 100, 36, 2000 << 16)],
    )));
    assert_eq!(j.verdict, TriageVerdict::Healthy, "{:?}", j.findings);
    // An SSD's 5 is retired NAND blocks: a note, not reallocated sectors.
    let flash = crate::model::AtaDrive {
        solid_state: Some(true),
        ..Default::default()
    };
    let h = ata_health_on(
        flash,
        AtaSmartStatus::Good,
        vec![attr(5, true, 100, 100, 10, 7)],
    );
    let j = judged(&with_smart(h));
    assert_eq!(j.verdict, TriageVerdict::Healthy, "{:?}", j.findings);
    assert!(
        j.notes.iter().any(|n| n.contains("retired")),
        "{:?}",
        j.notes
    );
}

#[test]
fn growth_since_the_previous_triage_is_a_finding_with_both_values_and_dates() {
    let previous = |pairs: &[(&str, f64)]| crate::triage::facts::PreviousTriage {
        since_unix: 1_795_000_000,
        now_unix: 1_796_500_000,
        values: pairs.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
    };
    use crate::triage::counters::{CRC_ERRORS, PENDING, REALLOCATED, SURFACE_READS, UNREADABLE};
    let mut d = with_smart(ata_health(
        AtaSmartStatus::Good,
        vec![
            attr(5, true, 100, 100, 36, 8),
            attr(197, false, 100, 100, 0, 0),
            attr(199, false, 200, 200, 0, 12),
        ],
    ));
    // The first triage: 8 reallocated sectors (suspect), 12 CRC errors (a note).
    assert_eq!(rules_of(&judged(&d)), ["ata-reallocated-sectors"]);
    // Nothing grew: nothing more.
    d.previous = Some(previous(&[
        (REALLOCATED, 8.0),
        (PENDING, 0.0),
        (CRC_ERRORS, 12.0),
    ]));
    assert_eq!(rules_of(&judged(&d)), ["ata-reallocated-sectors"]);
    // Reallocated 2 -> 8 and CRC 3 -> 12 since then.
    d.previous = Some(previous(&[
        (REALLOCATED, 2.0),
        (PENDING, 0.0),
        (CRC_ERRORS, 3.0),
    ]));
    let j = judged(&d);
    assert_eq!(
        rules_of(&j),
        [
            "ata-reallocated-sectors",
            "counters-grew",
            "crc-errors-grew"
        ]
    );
    let f = only(&j, "counters-grew");
    assert!(
        f.sentence.contains(
            "reallocated sectors 2 -> 8 between 2026-11-18 11:06 UTC and 2026-12-05 19:46 UTC"
        ),
        "{f:?}"
    );
    assert_eq!((f.value, f.threshold), (Some(8.0), Some(2.0)));
    assert!(
        only(&j, "crc-errors-grew")
            .next_step
            .contains("check the cable")
    );
    // The CRC count read again after the reads grew: the link fails now.
    let mut d = with_smart(ata_health(
        AtaSmartStatus::Good,
        vec![attr(199, false, 200, 200, 0, 12)],
    ));
    d.measurements.crc_errors_after = Some(12);
    assert!(judged(&d).findings.is_empty());
    d.measurements.crc_errors_after = Some(15);
    assert!(
        only(&judged(&d), "crc-errors-grew")
            .sentence
            .starts_with("interface CRC errors 12 -> 15 during this triage")
    );
    // Unreadable samples: 3 -> 2 of as many reads is the samples falling elsewhere.
    let mut d = disk("sda");
    d.measurements.surface = Some(surface(vec![(0, 5), (65536, 5)], vec![]));
    d.previous = Some(previous(&[(UNREADABLE, 3.0), (SURFACE_READS, 4000.0)]));
    assert!(!rules_of(&judged(&d)).contains(&"counters-grew"));
    d.previous = Some(previous(&[(UNREADABLE, 0.0), (SURFACE_READS, 4000.0)]));
    d.measurements.surface = Some(surface((0..8).map(|i| (i * 65536, 5)).collect(), vec![]));
    assert!(rules_of(&judged(&d)).contains(&"counters-grew"));
}

#[test]
fn nvme_critical_warning_names_the_bits() {
    let j = judged(&with_smart(nvme_health(|n| n.critical_warning = 0x0c)));
    assert_eq!(j.verdict, TriageVerdict::Failing);
    let f = only(&j, "nvme-critical-warning");
    assert!(f.sentence.contains("reliability degraded"), "{f:?}");
    assert!(f.sentence.contains("read-only"), "{f:?}");
    assert!(!rules_of(&j).contains(&"smart-failed"), "{:?}", j.findings);
    let j = judged(&with_smart(nvme_health(|n| n.critical_warning = 0x02)));
    assert!(
        only(&j, "nvme-critical-warning")
            .sentence
            .contains("temperature")
    );
    assert!(j.findings[0].next_step.contains("cooling"));
    let j = judged(&with_smart(nvme_health(|n| n.critical_warning = 0x10)));
    assert!(
        only(&j, "nvme-critical-warning")
            .sentence
            .contains("volatile memory backup")
    );
    let j = judged(&with_smart(nvme_health(|_| {})));
    assert!(j.findings.is_empty(), "{:?}", j.findings);
}

#[test]
fn nvme_counters_and_spare() {
    let j = judged(&with_smart(nvme_health(|n| n.available_spare_pct = 5)));
    assert_eq!(j.verdict, TriageVerdict::Failing);
    let f = only(&j, "nvme-spare-below-threshold");
    assert_eq!((f.value, f.threshold), (Some(5.0), Some(10.0)));
    let j = judged(&with_smart(nvme_health(|n| n.available_spare_pct = 10)));
    assert!(j.findings.is_empty());

    let j = judged(&with_smart(nvme_health(|n| n.media_errors = 2)));
    assert_eq!(j.verdict, TriageVerdict::Suspect);
    only(&j, "nvme-media-errors");

    let j = judged(&with_smart(nvme_health(|n| n.percentage_used = 100)));
    assert_eq!(only(&j, "nvme-percentage-used").value, Some(100.0));
    let j = judged(&with_smart(nvme_health(|n| n.percentage_used = 255)));
    assert!(
        only(&j, "nvme-percentage-used")
            .sentence
            .contains("used at least 255 %")
    );
    let j = judged(&with_smart(nvme_health(|n| n.percentage_used = 99)));
    assert!(j.findings.is_empty());

    // Minutes above the warning temperature in the drive's life: a note (the
    // critical-warning bit says when it is too hot now).
    let j = judged(&with_smart(nvme_health(|n| n.warning_temp_minutes = 7)));
    assert!(j.findings.is_empty(), "{:?}", j.findings);
    assert!(
        j.notes.iter().any(|n| n.contains("7 minutes")),
        "{:?}",
        j.notes
    );
    // A temperature of 600 K, a spare and threshold both 0: implausible, said, not judged.
    let j = judged(&with_smart(nvme_health(|n| {
        n.temperature_kelvin = 600;
        n.available_spare_pct = 0;
        n.available_spare_threshold_pct = 0;
    })));
    assert!(j.findings.is_empty(), "{:?}", j.findings);
    assert!(
        j.notes.iter().any(|n| n.contains("600 K"))
            && j.notes.iter().any(|n| n.contains("both 0 %")),
        "{:?}",
        j.notes
    );
    // Media errors of exactly 2^32 with no log entry: implausible, not judged.
    let j = judged(&with_smart(nvme_health(|n| n.media_errors = 1 << 32)));
    assert!(j.findings.is_empty(), "{:?}", j.findings);
    assert!(
        j.notes.iter().any(|n| n.contains("implausible")),
        "{:?}",
        j.notes
    );
}

fn logs(errors: Vec<ErrorEntry>, count: u64, tests: Vec<SelfTestEntry>) -> DriveLogs {
    DriveLogs {
        device: "sda".into(),
        transport: Transport::Sata,
        source: "test".into(),
        error_log: LogRead::Read(ErrorLog {
            source: "ATA SMART summary error log (0x01)".into(),
            count,
            entries: errors,
        }),
        self_test_log: LogRead::Read(SelfTestLog {
            source: "test".into(),
            entries: tests,
        }),
        self_test: SelfTestStatus::unsupported("test"),
    }
}

fn error_at(hours: Option<u64>) -> ErrorEntry {
    ErrorEntry {
        number: 3,
        power_on_hours: hours,
        lba: Some(1234),
        error: "UNC: uncorrectable data".into(),
        command: None,
        state: None,
    }
}

fn self_test(outcome: SelfTestOutcome, hours: u64) -> SelfTestEntry {
    SelfTestEntry {
        kind: "short".into(),
        outcome,
        result: "read failure".into(),
        power_on_hours: hours,
        first_failing_lba: (outcome == SelfTestOutcome::Failed).then_some(777),
        remaining_pct: None,
    }
}

#[test]
fn recent_errors_are_suspect_old_ones_not() {
    // Power-on hours 1000 (attribute 9).
    let hours = || ata_health(AtaSmartStatus::Good, vec![attr(9, false, 99, 99, 0, 1000)]);
    let mut d = with_smart(hours());
    d.logs = Some(logs(vec![error_at(Some(900))], 3, vec![]));
    let j = judged(&d);
    assert_eq!(j.verdict, TriageVerdict::Suspect);
    let f = only(&j, "error-log-recent");
    assert_eq!((f.value, f.threshold), (Some(100.0), Some(168.0)));
    assert!(f.sentence.contains("3 errors"), "{f:?}");
    d.logs = Some(logs(vec![error_at(Some(800))], 3, vec![]));
    assert!(judged(&d).findings.is_empty(), "200 hours ago: old");
    d.logs = Some(logs(vec![error_at(None)], 3, vec![]));
    assert!(judged(&d).findings.is_empty(), "no age: not judged");
    d.logs = Some(logs(vec![error_at(Some(5000))], 3, vec![]));
    assert!(judged(&d).findings.is_empty(), "a wrapped hour: not judged");
}

#[test]
fn a_failed_last_self_test_is_failing_a_later_pass_supersedes() {
    let mut d = with_smart(ata_health(AtaSmartStatus::Good, vec![]));
    d.logs = Some(logs(
        vec![],
        0,
        vec![self_test(SelfTestOutcome::Failed, 50)],
    ));
    let j = judged(&d);
    assert_eq!(j.verdict, TriageVerdict::Failing);
    assert!(
        only(&j, "self-test-failed")
            .sentence
            .contains("first failing LBA 777")
    );
    d.logs = Some(logs(
        vec![],
        0,
        vec![
            self_test(SelfTestOutcome::Passed, 60),
            self_test(SelfTestOutcome::Failed, 50),
        ],
    ));
    assert!(judged(&d).findings.is_empty());
}

fn link(kind: &str, now: f64, best: Option<f64>) -> LinkState {
    LinkState {
        kind: kind.into(),
        current: format!("{now}"),
        current_rate: Some(now),
        best: best.map(|b| format!("{b}")),
        best_rate: best,
        width: None,
        max_width: None,
    }
}

#[test]
fn a_link_below_its_best_is_suspect_and_says_so() {
    let mut d = disk("sdb");
    d.link = Some(link("sata", 1.5, Some(6.0)));
    let j = judged(&d);
    assert_eq!(j.verdict, TriageVerdict::Suspect);
    let f = only(&j, "link-below-best");
    assert_eq!(
        f.next_step,
        "check the cable or port: the link runs at 1.5 Gb/s on a 6 Gb/s disk"
    );
    assert_eq!((f.value, f.threshold), (Some(1.5), Some(6.0)));
    d.link = Some(link("sata", 6.0, Some(6.0)));
    assert!(judged(&d).findings.is_empty());
    d.link = Some(link("sata", 1.5, None));
    assert!(judged(&d).findings.is_empty(), "best unknown: not judged");
    let mut pcie = link("pcie", 8.0, Some(8.0));
    pcie.width = Some(2);
    pcie.max_width = Some(4);
    d.link = Some(pcie);
    let f = judged(&d).findings.remove(0);
    assert!(f.sentence.contains("x2"), "{f:?}");
    assert!(f.next_step.contains("x4"), "{f:?}");
}

fn surface(unreadable: Vec<(u64, i32)>, slow: Vec<(u64, f64)>) -> SurfaceSample {
    SurfaceSample {
        reads: 4000,
        read_bytes: 4096,
        unreadable: unreadable
            .into_iter()
            .map(|(offset, errno)| Unreadable {
                sample: Span::new(offset, 4096),
                at: Span::new(offset, 512),
                errno,
            })
            .collect(),
        slow,
        slow_once: 0,
        ..Default::default()
    }
}

#[test]
fn unreadable_samples_are_failing_with_the_lbas_named() {
    let mut d = disk("sdb");
    d.measurements.surface = Some(surface(
        (1..=7).map(|i| (i * 512 * 1000, 5)).collect(),
        vec![],
    ));
    let j = judged(&d);
    assert_eq!(j.verdict, TriageVerdict::Failing);
    let f = only(&j, "surface-unreadable");
    assert!(
        f.sentence
            .contains("7 of 4000 sampled reads failed: unreadable at LBA 1000, 2000, 3000, 4000, 5000 and 2 more"),
        "{f:?}"
    );
    assert!(f.next_step.contains("disktriage scan /dev/sdb"));
    d.measurements.surface = Some(surface(vec![], vec![]));
    assert!(judged(&d).findings.is_empty());
}

#[test]
fn slow_samples_from_150_ms_are_suspect() {
    let mut d = disk("sdb");
    d.measurements.surface = Some(surface(vec![], vec![(512 * 10, 149.9)]));
    assert!(judged(&d).findings.is_empty());
    d.measurements.surface = Some(surface(vec![], vec![(512 * 10, 149.9), (512 * 20, 310.0)]));
    let j = judged(&d);
    assert_eq!(j.verdict, TriageVerdict::Suspect);
    let f = only(&j, "surface-slow");
    assert!(f.sentence.contains("slowest 310 ms, at LBA 20"), "{f:?}");
    assert_eq!((f.value, f.threshold), (Some(310.0), Some(150.0)));
}

#[test]
fn temperature_only_against_the_drives_own_threshold() {
    let mut d = disk("nvme0n1");
    d.measurements.temperature_max_c = Some(90);
    assert!(judged(&d).findings.is_empty(), "no threshold: no guess");
    d.temperature_warning_c = Some(70);
    let j = judged(&d);
    assert_eq!(
        only(&j, "temperature-high").value,
        Some(90.0),
        "{:?}",
        j.findings
    );
    d.measurements.temperature_max_c = Some(70);
    assert!(judged(&d).findings.is_empty());
}

fn fleet(speeds: &[f64]) -> Vec<DiskFacts> {
    speeds
        .iter()
        .enumerate()
        .map(|(i, &mb)| {
            let mut d = disk(&format!("sd{}", (b'a' + i as u8) as char));
            d.measurements.seq = seq(mb);
            d
        })
        .collect()
}

#[test]
fn the_outlier_among_equal_siblings_is_suspect() {
    let disks = fleet(&[200.0, 210.0, 190.0, 150.0]);
    let js = judge_all(&disks);
    assert_eq!(
        js.iter().map(|j| j.verdict).collect::<Vec<_>>(),
        [
            TriageVerdict::Healthy,
            TriageVerdict::Healthy,
            TriageVerdict::Healthy,
            TriageVerdict::Suspect
        ]
    );
    let f = only(&js[3], "outlier-seq-read");
    assert!(
        f.sentence
            .contains("the 200 MB/s median of its 3 siblings (sda, sdb, sdc)"),
        "{f:?}"
    );
    assert_eq!((f.value, f.threshold), (Some(150.0), Some(160.0)));
    // Slow at one position only (a moment of contention while all disks are read at once,
    // here the start at 40 MB/s): the mean is 27 % below, but it is no slow disk.
    let mut disks = fleet(&[200.0, 200.0, 200.0, 200.0]);
    disks[3].measurements.seq[0].mb_per_s = 40.0;
    assert!(
        judge_all(&disks).iter().all(|j| j.findings.is_empty()),
        "{:?}",
        judge_all(&disks)[3]
    );
    // 15 % below: not an outlier.
    let js = judge_all(&fleet(&[200.0, 200.0, 170.0]));
    assert!(js.iter().all(|j| j.findings.is_empty()));
    // One sibling is no median.
    let js = judge_all(&fleet(&[200.0, 100.0]));
    assert!(js.iter().all(|j| j.findings.is_empty()));
    // Another model or capacity is no sibling.
    let mut disks = fleet(&[200.0, 200.0, 100.0]);
    disks[0].identity.model = Some("M2".into());
    assert!(judge_all(&disks).iter().all(|j| j.findings.is_empty()));
    let mut disks = fleet(&[200.0, 200.0, 100.0]);
    disks[1].identity.capacity_bytes += 1;
    assert!(judge_all(&disks).iter().all(|j| j.findings.is_empty()));
    // No model (virtio): the same transport and capacity.
    let mut disks = fleet(&[200.0, 200.0, 100.0]);
    for d in &mut disks {
        d.identity.model = None;
        d.identity.transport = Some(Transport::Virtio);
    }
    assert_eq!(judge_all(&disks)[2].verdict, TriageVerdict::Suspect);
    disks[0].identity.transport = Some(Transport::Scsi);
    assert_eq!(judge_all(&disks)[2].verdict, TriageVerdict::Healthy);
}

#[test]
fn the_verdict_is_the_worst_finding_and_findings_come_worst_first() {
    let mut d = with_smart(ata_health(
        AtaSmartStatus::Good,
        vec![
            attr(5, true, 100, 100, 36, 8),
            attr(197, false, 100, 100, 0, 2),
        ],
    ));
    d.link = Some(link("sata", 3.0, Some(6.0)));
    let j = judged(&d);
    assert_eq!(j.verdict, TriageVerdict::Failing);
    assert_eq!(
        rules_of(&j),
        [
            "ata-pending-sectors",
            "ata-reallocated-sectors",
            "link-below-best"
        ]
    );
}

// ---- on the lab's captured pages ----

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/pages")
        .join(name)
}

fn json(name: &str) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(fixture(name)).unwrap()).unwrap()
}

fn page(name: &str) -> Vec<u8> {
    let text = std::fs::read_to_string(fixture(name)).unwrap();
    let hex: Vec<u8> = text.bytes().filter(u8::is_ascii_hexdigit).collect();
    hex.chunks(2)
        .map(|p| u8::from_str_radix(std::str::from_utf8(p).unwrap(), 16).unwrap())
        .collect()
}

/// The facts of a disk whose SMART and logs are smartctl's output `doc`.
fn from_smartctl(device: &str, transport: Transport, doc: &serde_json::Value) -> DiskFacts {
    let text = doc.to_string();
    let report = parse_smartctl_json(&text, None).unwrap();
    let mut d = disk(device);
    d.identity.transport = Some(transport);
    d.smart = Some(assess(
        device,
        transport,
        SmartReading::Smartctl(Box::new(report)),
    ));
    d.logs = parse_smartctl_logs(&text, device, transport).ok();
    d
}

/// Adds a row to the ATA attribute table of smartctl's output.
fn add_attribute(doc: &mut serde_json::Value, id: u8, name: &str, raw: u64) {
    doc["ata_smart_attributes"]["table"]
        .as_array_mut()
        .unwrap()
        .push(serde_json::json!({
            "id": id, "name": name, "value": 100, "worst": 100, "thresh": 0,
            "flags": {"value": 50, "prefailure": false},
            "raw": {"value": raw, "string": raw.to_string()}
        }));
}

#[test]
fn the_lab_sata_disk_is_healthy_and_its_page_with_pending_sectors_fails() {
    let mut doc = json("smartctl-qemu-sata-0.json");
    let j = judged(&from_smartctl("sda", Transport::Sata, &doc));
    assert_eq!(j.verdict, TriageVerdict::Healthy, "{:?}", j.findings);
    add_attribute(&mut doc, 197, "Current_Pending_Sector", 24);
    add_attribute(&mut doc, 199, "UDMA_CRC_Error_Count", 0);
    let j = judged(&from_smartctl("sda", Transport::Sata, &doc));
    assert_eq!(j.verdict, TriageVerdict::Failing);
    assert_eq!(rules_of(&j), ["ata-pending-sectors"]);
    assert!(j.findings[0].sentence.starts_with("24 sectors"));
    let rows = doc["ata_smart_attributes"]["table"].as_array_mut().unwrap();
    let crc = rows.iter_mut().find(|r| r["id"] == 199).unwrap();
    crc["raw"] = serde_json::json!({"value": 5, "string": "5"});
    let j = judged(&from_smartctl("sda", Transport::Sata, &doc));
    assert_eq!(rules_of(&j), ["ata-pending-sectors"]);
    assert!(
        j.notes
            .iter()
            .any(|n| n.contains("199 UDMA_CRC_Error_Count 5"))
    );
}

#[test]
fn the_lab_sata_self_test_log_passes_and_a_failed_one_fails() {
    let mut doc = json("smartctl-qemu-sata-0-aftertest.json");
    let j = judged(&from_smartctl("sda", Transport::Sata, &doc));
    assert_eq!(j.verdict, TriageVerdict::Healthy, "{:?}", j.findings);
    doc["ata_smart_self_test_log"]["standard"]["table"][0]["status"] = serde_json::json!({
        "value": 0x74, "string": "Completed: read failure", "passed": false
    });
    doc["ata_smart_self_test_log"]["standard"]["table"][0]["lba"] = 4242.into();
    let j = judged(&from_smartctl("sda", Transport::Sata, &doc));
    assert_eq!(j.verdict, TriageVerdict::Failing, "{:?}", j.findings);
    let f = only(&j, "self-test-failed");
    assert!(f.sentence.contains("first failing LBA 4242"), "{f:?}");
}

#[test]
fn the_lab_nvme_with_a_critical_warning_fails_naming_it() {
    let d = from_smartctl(
        "nvme1n1",
        Transport::Nvme,
        &json("smartctl-qemu-nvme-warn.json"),
    );
    let j = judged(&d);
    assert_eq!(j.verdict, TriageVerdict::Failing);
    assert_eq!(rules_of(&j), ["nvme-critical-warning"]);
    assert_eq!(
        j.findings[0].sentence,
        "the NVMe drive raises a critical warning: reliability degraded"
    );
    let d = from_smartctl(
        "nvme0n1",
        Transport::Nvme,
        &json("smartctl-qemu-nvme-0.json"),
    );
    assert_eq!(judged(&d).verdict, TriageVerdict::Healthy);
    // The same from the native SMART/Health log pages.
    for (name, verdict) in [
        ("qemu-nvme-warn-nvme-smart-log.hex", TriageVerdict::Failing),
        ("qemu-nvme-0-nvme-smart-log.hex", TriageVerdict::Healthy),
    ] {
        let n = parse_health_log(&page(name)).unwrap();
        let d = with_smart(assess("nvme0n1", Transport::Nvme, SmartReading::Nvme(n)));
        assert_eq!(judged(&d).verdict, verdict, "{name}");
    }
}

#[test]
fn the_lab_virtio_disk_unmeasured_is_unknown_with_smartctls_reason() {
    let mut d = from_smartctl(
        "vda",
        Transport::Virtio,
        &json("smartctl-qemu-virtio-0.json"),
    );
    d.measurements = Default::default();
    let j = judged(&d);
    assert_eq!(j.verdict, TriageVerdict::Unknown);
    assert!(
        j.findings[0]
            .sentence
            .contains("Unable to detect device type"),
        "{:?}",
        j.findings
    );
    // Measured, it is healthy: SMART missing is no finding.
    d.measurements.seq = seq(300.0);
    assert_eq!(judged(&d).verdict, TriageVerdict::Healthy);
}

#[test]
fn the_docs_rules_table_lists_exactly_the_rules_in_order() {
    let docs =
        std::fs::read_to_string(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("docs/triage.md"))
            .unwrap();
    // Rows "| `id` | severity | ..." of the section "## The rules".
    let section = docs
        .split("\n## ")
        .find(|s| s.starts_with("The rules"))
        .expect("docs/triage.md has a section \"## The rules\"");
    let rows: Vec<(String, String)> = section
        .lines()
        .filter_map(|l| {
            let cells: Vec<&str> = l.split('|').map(str::trim).collect();
            let id = cells.get(1)?.strip_prefix('`')?.strip_suffix('`')?;
            Some((id.to_string(), cells.get(2)?.to_string()))
        })
        .collect();
    let ours: Vec<(String, String)> = RULES
        .iter()
        .map(|r| (r.id.to_string(), r.severity.as_str().to_string()))
        .collect();
    assert_eq!(rows, ours);
}

/// A disk of this host with `erc`, the kernel's `timeout` and the md arrays that hold it.
fn fit(erc: Option<crate::model::Erc>, timeout: u32, arrays: &[&str]) -> DiskFacts {
    let mut d = disk("sdb");
    d.identity.rotation_rpm = Some(7200);
    d.fitness.drive.erc = erc;
    d.fitness.timeout_s = Some(timeout);
    d.fitness.arrays = arrays.iter().map(|a| a.to_string()).collect();
    d
}

#[test]
fn erc_against_the_kernels_timeout_is_a_finding_only_in_an_array() {
    use crate::model::Erc;
    let seven = Erc::Timers {
        read: 70,
        write: 70,
    };
    let off = Erc::Timers { read: 0, write: 0 };
    // 7 s within the kernel's 30 s: nothing, in an array or not.
    let j = judged(&fit(Some(seven), 30, &["md0"]));
    assert_eq!(j.verdict, TriageVerdict::Healthy, "{:?}", j.findings);
    assert!(j.notes.is_empty(), "{:?}", j.notes);
    // Disabled in md0 at 30 s: suspect, with both numbers and what to do.
    let j = judged(&fit(Some(off), 30, &["md0"]));
    let f = only(&j, "erc-longer-than-timeout");
    assert_eq!(f.severity, TriageVerdict::Suspect);
    assert_eq!(
        f.sentence,
        "SCT Error Recovery Control is disabled: it may retry a sector for minutes, the \
         kernel waits 30 s: md may fail it out of md0 at a bad sector instead of rewriting \
         the sector"
    );
    assert!(
        f.next_step
            .starts_with("set ERC to 7 s (`smartctl -l scterc,70,70 /dev/sdb`"),
        "{}",
        f.next_step
    );
    assert!(
        f.next_step
            .contains("`echo 180 > /sys/block/sdb/device/timeout`"),
        "{}",
        f.next_step
    );
    assert_eq!(f.threshold, Some(30.0));
    // The kernel waits 180 s: the drive gives up first.
    assert!(judged(&fit(Some(off), 180, &["md0"])).findings.is_empty());
    // A timer longer than the timeout, named in seconds.
    let long = Erc::Timers {
        read: 450,
        write: 70,
    };
    let j = judged(&fit(Some(long), 30, &["md0", "md1"]));
    let f = only(&j, "erc-longer-than-timeout");
    assert!(
        f.sentence
            .contains("for 45 s (read 45.0 s, write 7.0 s), longer than the kernel waits 30 s"),
        "{}",
        f.sentence
    );
    assert!(f.sentence.contains("out of md0, md1"), "{}", f.sentence);
    assert_eq!(f.value, Some(45.0));
    // No ERC at all: the next step is the kernel's timeout alone.
    let j = judged(&fit(Some(Erc::NotSupported), 30, &["md0"]));
    let f = only(&j, "erc-longer-than-timeout");
    assert!(
        f.sentence
            .starts_with("the drive has no SCT Error Recovery Control")
    );
    assert!(
        f.next_step
            .starts_with("set the kernel timeout above 120 s"),
        "{}",
        f.next_step
    );
    // In no array: a note, not a finding; ERC not known: nothing at all.
    let j = judged(&fit(Some(off), 30, &[]));
    assert_eq!(j.verdict, TriageVerdict::Healthy);
    assert_eq!(j.notes.len(), 1, "{:?}", j.notes);
    assert!(
        j.notes[0].contains("as a RAID member, set ERC to 7 s"),
        "{}",
        j.notes[0]
    );
    let j = judged(&fit(None, 30, &["md0"]));
    assert!(j.findings.is_empty() && j.notes.is_empty(), "{j:?}");
}

#[test]
fn a_write_cliff_the_probe_found_makes_a_rotating_member_suspect() {
    use crate::triage::facts::SmrFact;
    let mut d = fit(None, 30, &["md0"]);
    d.smr = Some(SmrFact {
        verdict: "no-cliff".into(),
        medium: "rotating".into(),
        when: "2026-12-07 21:00 UTC".into(),
    });
    assert!(judged(&d).findings.is_empty(), "no cliff, no finding");
    let smr = d.smr.as_mut().expect("set above");
    smr.verdict = "cliff".into();
    let f = only(&judged(&d), "smr-in-array").clone();
    assert_eq!(f.severity, TriageVerdict::Suspect);
    assert_eq!(
        f.sentence,
        "a disk whose random writes fell off a cliff (disktriage smrcheck, 2026-12-07 21:00 \
         UTC): drive-managed SMR behaviour, in md0: a rebuild's long writes can slow it to a \
         crawl or time out"
    );
    // On a disk that does not rotate a cliff is its write cache running out, not SMR.
    let smr = d.smr.as_mut().expect("set above");
    smr.medium = "solid-state".into();
    assert!(judged(&d).findings.is_empty());
    let smr = d.smr.as_mut().expect("set above");
    smr.medium = "unknown".into();
    d.identity.rotation_rpm = Some(0);
    assert!(judged(&d).findings.is_empty());
}

#[test]
fn a_shingled_or_zoned_disk_is_suspect_in_an_array_and_a_note_elsewhere() {
    use crate::model::ZoneModel;
    let mut d = fit(None, 30, &["md0"]);
    assert!(judged(&d).findings.is_empty());
    d.fitness.drive.trim = Some(true);
    let f = only(&judged(&d), "smr-in-array").clone();
    assert_eq!(f.severity, TriageVerdict::Suspect);
    assert_eq!(
        f.sentence,
        "most likely a drive-managed shingled (SMR) disk (it rotates and supports TRIM), in \
         md0: a rebuild's long writes can slow it to a crawl or time out"
    );
    // TRIM on an SSD says nothing of shingles.
    d.identity.rotation_rpm = Some(0);
    assert!(judged(&d).findings.is_empty());
    d.fitness.drive.farm_recording = Some("SMR".into());
    assert!(
        only(&judged(&d), "smr-in-array")
            .sentence
            .contains("FARM log's recording type")
    );
    d.fitness.drive.zoned = Some(ZoneModel::DriveManaged);
    assert!(
        only(&judged(&d), "smr-in-array")
            .sentence
            .contains("as its zoned capabilities say")
    );
    d.fitness.kernel_zoned = Some(ZoneModel::HostManaged);
    d.fitness.nr_zones = Some(256);
    assert!(
        only(&judged(&d), "smr-in-array")
            .sentence
            .starts_with("a zoned disk (host-managed, 256 zones, as the kernel says), in md0"),
    );
    d.fitness.arrays.clear();
    let j = judged(&d);
    assert_eq!(j.verdict, TriageVerdict::Healthy);
    assert_eq!(
        j.notes,
        vec![
            "a zoned disk (host-managed, 256 zones, as the kernel says): unfit for a RAID \
             array (a rebuild's long writes can slow it to a crawl)"
        ]
    );
}

#[test]
fn smart_hours_far_below_farms_are_a_reset_counter() {
    let mut hours = attr(9, false, 100, 100, 0, 12);
    hours.name = "Power_On_Hours".into();
    let mut d = with_smart(ata_health(AtaSmartStatus::Good, vec![hours]));
    assert_eq!(d.smart.as_ref().unwrap().power_on_hours, Some(12));
    assert!(
        judged(&d).findings.is_empty(),
        "no FARM: nothing to compare"
    );
    d.fitness.drive.farm_power_on_hours = Some(31245);
    let j = judged(&d);
    let f = only(&j, "smart-hours-reset");
    assert_eq!(f.severity, TriageVerdict::Suspect);
    assert_eq!(
        f.sentence,
        "SMART counts 12 power-on hours, the drive's FARM log 31245: its SMART hour counter \
         was reset (sold as new?)"
    );
    assert_eq!((f.value, f.threshold), (Some(12.0), Some(31245.0)));
    // FARM is saved every few hours: a small lag either way is not a reset.
    d.fitness.drive.farm_power_on_hours = Some(12 + 48);
    assert!(judged(&d).findings.is_empty());
    d.fitness.drive.farm_power_on_hours = Some(5);
    assert!(judged(&d).findings.is_empty());
}
