//! The drive-log decoders on pages captured from the QEMU lab's drives
//! (`tests/fixtures/pages/`): the SATA disk's SMART error and self-test logs before and after
//! a short self-test, with smartctl's decoding of the same drive as the witness; the NVMe
//! drives' Error Information log and the "no Device Self-test" path of their Identify
//! Controller; and every truncation of each page (an error, never a panic).

#![allow(clippy::unwrap_used)] // tests may unwrap: a panic is the failure report

use std::path::PathBuf;

use disktriage::model::{DriveLogs, LogRead, SelfTestOutcome, SmartReading, Transport, Verdict};
use disktriage::smart::parse_error_log;
use disktriage::smart::parse_smart_data;
use disktriage::smart::parse_smartctl_logs;
use disktriage::smart::{assess, judge_logs};
use disktriage::smart::{parse_health_log, parse_identify_controller};
use disktriage::smart::{parse_self_test_log, parse_summary_error_log, self_test_status};

fn path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/pages")
        .join(name)
}

fn page(name: &str) -> Vec<u8> {
    let text = std::fs::read_to_string(path(name)).unwrap();
    let hex: Vec<u8> = text.bytes().filter(u8::is_ascii_hexdigit).collect();
    hex.chunks(2)
        .map(|p| u8::from_str_radix(std::str::from_utf8(p).unwrap(), 16).unwrap())
        .collect()
}

#[test]
fn sata_logs_before_any_self_test() {
    let errors = parse_summary_error_log(&page("qemu-sata-0-ata-smart-log-error.hex")).unwrap();
    assert_eq!(errors.count, 0);
    assert!(errors.entries.is_empty());
    let tests = parse_self_test_log(&page("qemu-sata-0-ata-smart-log-selftest.hex")).unwrap();
    assert!(tests.entries.is_empty(), "{tests:?}");
    // The self-test execution status byte and the drive's estimates (smartctl: short 2 min,
    // extended 54 min).
    let data = parse_smart_data(&page("qemu-sata-0-ata-smart-data.hex")).unwrap();
    let st = self_test_status(&data);
    assert!(st.supported && !st.is_running());
    assert_eq!(st.last.as_deref(), Some("completed without error"));
    assert_eq!((st.short_minutes, st.long_minutes), (Some(2), Some(54)));
}

#[test]
fn sata_self_test_log_after_a_short_test_agrees_with_smartctl() {
    let log =
        parse_self_test_log(&page("qemu-sata-0-aftertest-ata-smart-log-selftest.hex")).unwrap();
    assert_eq!(log.entries.len(), 1);
    let e = &log.entries[0];
    assert_eq!(e.kind, "short");
    assert_eq!(e.outcome, SelfTestOutcome::Passed);
    assert_eq!(e.result, "completed without error");
    assert_eq!(e.first_failing_lba, None);
    // smartctl read the same drive: "Short offline", "Completed without error", 4660 h.
    let json = std::fs::read_to_string(path("smartctl-qemu-sata-0-aftertest.json")).unwrap();
    let witness = parse_smartctl_logs(&json, "sda", Transport::Sata).unwrap();
    let LogRead::Read(w) = &witness.self_test_log else {
        panic!("{:?}", witness.self_test_log)
    };
    assert_eq!(w.entries.len(), 1);
    assert_eq!(w.entries[0].kind, "Short offline");
    assert_eq!(w.entries[0].outcome, SelfTestOutcome::Passed);
    assert_eq!(e.power_on_hours, 4660);
    assert_eq!(w.entries[0].power_on_hours, e.power_on_hours);
    let LogRead::Read(we) = &witness.error_log else {
        panic!("{:?}", witness.error_log)
    };
    let errors =
        parse_summary_error_log(&page("qemu-sata-0-aftertest-ata-smart-log-error.hex")).unwrap();
    assert_eq!(we.count, errors.count);
    // The status byte after the test: completed, none running.
    let data = parse_smart_data(&page("qemu-sata-0-aftertest-ata-smart-data.hex")).unwrap();
    assert_eq!(data.self_test_status, 0);
    assert_eq!(
        witness.self_test.last.as_deref(),
        Some("completed without error")
    );
}

#[test]
fn nvme_error_log_and_no_device_self_test() {
    for drive in ["nvme-0", "nvme-warn"] {
        let log = parse_error_log(&page(&format!("qemu-{drive}-nvme-error-log.hex"))).unwrap();
        assert_eq!(log.count, 0, "{drive}");
        assert!(log.entries.is_empty());
        // The health log's count of error log entries agrees.
        let health = parse_health_log(&page(&format!("qemu-{drive}-nvme-smart-log.hex"))).unwrap();
        assert_eq!(health.error_log_entries, 0);
        // QEMU 7.2's controller has no Device Self-test (OACS 0x010a: bit 4 clear) and a
        // one-entry error log (ELPE 0).
        let ctrl =
            parse_identify_controller(&page(&format!("qemu-{drive}-nvme-identify-controller.hex")))
                .unwrap();
        assert_eq!(ctrl.oacs, 0x010a);
        assert!(!ctrl.supports_self_test());
        assert_eq!(ctrl.error_entries(), 1);
    }
}

#[test]
fn a_failed_last_self_test_makes_the_verdict_a_warning_once() {
    let json = std::fs::read_to_string(path("smartctl-qemu-sata-0-aftertest.json")).unwrap();
    let mut logs: DriveLogs = parse_smartctl_logs(&json, "sda", Transport::Sata).unwrap();
    let reading = disktriage::smart::parse_smartctl_json(&json, None).unwrap();
    let mut health = assess(
        "sda",
        Transport::Sata,
        SmartReading::Smartctl(Box::new(reading)),
    );
    assert_eq!(health.verdict, Verdict::Passed);
    judge_logs(&mut health, &logs);
    assert_eq!(health.verdict, Verdict::Passed, "a passed self-test");
    let LogRead::Read(l) = &mut logs.self_test_log else {
        panic!()
    };
    l.entries[0].outcome = SelfTestOutcome::Failed;
    l.entries[0].result = "failed: read element".into();
    l.entries[0].first_failing_lba = Some(1234);
    judge_logs(&mut health, &logs);
    judge_logs(&mut health, &logs);
    assert_eq!(health.verdict, Verdict::Warning);
    assert_eq!(health.findings.len(), 1, "{:?}", health.findings);
    assert_eq!(
        health.findings[0].text,
        "the last self-test (Short offline, at 4660 power-on hours) ended: failed: read element \
         (first failing LBA 1234)"
    );
}

#[test]
fn every_truncation_is_an_error_not_a_panic() {
    for name in [
        "qemu-sata-0-ata-smart-log-error.hex",
        "qemu-sata-0-aftertest-ata-smart-log-selftest.hex",
    ] {
        let p = page(name);
        for n in 0..p.len() {
            assert!(parse_summary_error_log(&p[..n]).is_err());
            assert!(parse_self_test_log(&p[..n]).is_err());
        }
    }
    let p = page("qemu-nvme-0-nvme-error-log.hex");
    for n in 0..64 {
        assert!(parse_error_log(&p[..n]).is_err());
    }
}
