//! What `cache`, `sched`, `smart`, `restore` and `run` print, driven through `FakeDrives` (the same
//! stand-in the TUI's snapshot tests will use) with readings built from the captured lab
//! pages. Snapshots live in `tests/snapshots/`.

#![allow(clippy::unwrap_used)] // tests may unwrap: a panic is the failure report

use crate::common;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use disktriage::bench::TestName;
use disktriage::bench::TestParams;
use disktriage::bench::build_plan;
use disktriage::bench::{PhaseTag, TargetFacts};
use disktriage::bench::{RunReport, TargetClass};

use disktriage::changes::{Changer, Journal, RestoreScope};
use disktriage::drive_state;
use disktriage::model::{
    AtaSmart, AtaSmartStatus, CacheStatus, Lifetime, Owner, SmartReading, Transport,
};
use disktriage::report;
use disktriage::smart::parse_health_log;
use disktriage::smart::{
    attribute_table, parse_identify, parse_smart_data, parse_smart_thresholds,
};
use disktriage::sys::{DriveControl, FakeDevice, FakeDrives};

/// What the reports name as the journal (the real one lives in a temporary directory).
const SHOWN_JOURNAL: &str = "/run/disktriage";

fn page(name: &str) -> Vec<u8> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/pages")
        .join(name);
    let text = std::fs::read_to_string(path).unwrap();
    let hex: Vec<u8> = text.bytes().filter(u8::is_ascii_hexdigit).collect();
    hex.chunks(2)
        .map(|p| u8::from_str_radix(std::str::from_utf8(p).unwrap(), 16).unwrap())
        .collect()
}

fn lab_sata_smart() -> AtaSmart {
    let id = parse_identify(&page("qemu-sata-0-ata-identify.hex")).unwrap();
    let data = parse_smart_data(&page("qemu-sata-0-ata-smart-data.hex")).unwrap();
    let thresholds = parse_smart_thresholds(&page("qemu-sata-0-ata-smart-thresholds.hex")).unwrap();
    AtaSmart {
        smart_supported: id.smart_supported,
        smart_enabled: id.smart_enabled,
        status: AtaSmartStatus::Good,
        status_note: None,
        attributes: attribute_table(&data, Some(&thresholds)),
        drive: Default::default(),
        attribute_problem: None,
    }
}

fn drives() -> Arc<FakeDrives> {
    let mut sda = FakeDevice::new("sda", Transport::Sata);
    sda.smart = Ok(SmartReading::Ata(lab_sata_smart()));
    sda.partitions = vec!["sda1".into()];
    let mut nvme = FakeDevice::new("nvme1n1", Transport::Nvme);
    nvme.smart = Ok(SmartReading::Nvme(
        parse_health_log(&page("qemu-nvme-warn-nvme-smart-log.hex")).unwrap(),
    ));
    Arc::new(
        FakeDrives::new()
            .with(sda)
            .with(nvme)
            .with(FakeDevice::new("loop0", Transport::Loop).without_cache_control()),
    )
}

fn changer(drives: &Arc<FakeDrives>, dir: &Path) -> Changer {
    let owner = Owner {
        pid: 99_999_123,
        start_time: 1,
    };
    Changer::new(
        drives.clone(),
        Journal::open_as(dir, owner).unwrap(),
        Lifetime::Persisted,
    )
}

#[test]
fn smart_sata_lab_drive() {
    let d = drives();
    let target = d.resolve("/dev/sda1").unwrap();
    let h = drive_state::smart_health(d.as_ref(), &target.device).unwrap();
    insta::assert_snapshot!(report::render_smart_text(
        &h,
        target.partition.as_deref(),
        80
    ));
}

#[test]
fn smart_nvme_critical_warning() {
    let d = drives();
    let dev = d.device("nvme1n1").unwrap();
    let h = drive_state::smart_health(d.as_ref(), &dev).unwrap();
    insta::assert_snapshot!(report::render_smart_text(&h, None, 80));
}

#[test]
fn smart_ata_with_bad_sectors_and_a_vendor_attribute() {
    let d = drives();
    let mut smart = lab_sata_smart();
    for a in &mut smart.attributes {
        if a.id == 5 {
            a.raw = 12;
            a.decoded = Some("12 sectors".into());
        }
    }
    // A vendor-specific attribute at its threshold: shown raw, noted, not judged.
    let mut vendor = smart.attributes[0].clone();
    vendor.id = 231;
    vendor.name = "Unknown_Attribute".into();
    vendor.known = false;
    vendor.value = 5;
    vendor.worst = 5;
    vendor.threshold = Some(10);
    vendor.raw = 0x0102_0304_0506;
    vendor.decoded = None;
    vendor.state = disktriage::model::AttributeState::FailingNow;
    smart.attributes.push(vendor);
    d.update("sda", |dev| dev.smart = Ok(SmartReading::Ata(smart)));
    let dev = d.device("sda").unwrap();
    let h = drive_state::smart_health(d.as_ref(), &dev).unwrap();
    insta::assert_snapshot!(report::render_smart_text(&h, None, 80));
}

#[test]
fn cache_status_and_changes() {
    let d = drives();
    let dir = tempfile::tempdir().unwrap();
    let shown = Path::new(SHOWN_JOURNAL);
    let mut out = String::new();

    let sda = d.device("sda").unwrap();
    let status = drive_state::cache_status(d.as_ref(), &sda).unwrap();
    out += &report::render_cache_status(&status, None, 80);

    let loop0 = d.device("loop0").unwrap();
    let status = drive_state::cache_status(d.as_ref(), &loop0).unwrap();
    out += &report::render_cache_status(&status, None, 80);

    let c = changer(&d, dir.path());
    let change = c.set_write_cache(&sda, false, false).unwrap();
    let status = CacheStatus::new(
        &sda.name,
        sda.transport,
        Ok(change.after.clone()),
        change.kernel_after,
    );
    out += &report::render_cache_change(&change, &status, Some("sda1"), shown, 80);

    let nvme = d.device("nvme1n1").unwrap();
    let change = c.set_write_cache(&nvme, false, true).unwrap();
    let status = CacheStatus::new(
        &nvme.name,
        nvme.transport,
        Ok(change.after.clone()),
        change.kernel_after,
    );
    out += &report::render_cache_change(&change, &status, None, shown, 80);

    // A drive that acknowledges but keeps its cache: the report says what the drive says.
    d.update("sda", |dev| dev.cache_ignores_set = true);
    let change = c.set_write_cache(&sda, true, false).unwrap();
    let status = CacheStatus::new(
        &sda.name,
        sda.transport,
        Ok(change.after.clone()),
        change.kernel_after,
    );
    out += &report::render_cache_change(&change, &status, None, shown, 80);
    insta::assert_snapshot!(out);
}

#[test]
fn sched_change_and_restore() {
    let d = drives();
    let dir = tempfile::tempdir().unwrap();
    let shown = Path::new(SHOWN_JOURNAL);
    let c = changer(&d, dir.path());
    let sda = d.device("sda").unwrap();
    let mut out = report::render_sched_status(&sda.name, &d.scheduler(&sda).unwrap(), None);
    let change = c.set_scheduler(&sda, "bfq", false).unwrap();
    out += &report::render_sched_change(&change, None, shown, 80);
    let change = c.set_scheduler(&sda, "kyber", false).unwrap();
    out += &report::render_sched_change(&change, Some("sda1"), shown, 80);
    c.set_write_cache(&sda, false, false).unwrap();
    d.remove("nvme1n1");
    let outcomes = c.restore(RestoreScope::All { force: false }).unwrap();
    out += &report::render_restore_text(&outcomes);
    insta::assert_snapshot!(out);
}

/// `disktriage smart` with the drive's logs: a SATA disk whose error log holds two read
/// errors and whose last (extended) self-test failed at a known LBA, judged WARNING by the
/// logs alone; what `--self-test long` says before it starts.
#[test]
fn smart_with_logs_a_failed_self_test_and_errors() {
    use disktriage::model::{
        DriveLogs, ErrorEntry, ErrorLog, LogRead, SelfTestEntry, SelfTestKind, SelfTestLog,
        SelfTestOutcome, SelfTestStatus, Verdict,
    };
    let d = drives();
    d.update("sda", |dev| {
        dev.smart = Ok(SmartReading::Ata(lab_sata_smart()))
    });
    let error = |number, hours, lba| ErrorEntry {
        number,
        power_on_hours: Some(hours),
        lba: Some(lba),
        error: "UNC: uncorrectable data (error register 0x40)".into(),
        command: Some("READ FPDMA QUEUED (0x60)".into()),
        state: Some("active or idle".into()),
    };
    let test = |kind: &str, outcome, result: &str, hours, lba| SelfTestEntry {
        kind: kind.into(),
        outcome,
        result: result.into(),
        power_on_hours: hours,
        first_failing_lba: lba,
        remaining_pct: None,
    };
    let status = SelfTestStatus {
        supported: true,
        unsupported_reason: None,
        running: None,
        last: Some("failed: read element".into()),
        short_minutes: Some(2),
        long_minutes: Some(254),
    };
    let logs = DriveLogs {
        device: "sda".into(),
        transport: Transport::Sata,
        source: "ATA SMART logs".into(),
        error_log: LogRead::Read(ErrorLog {
            source: "ATA extended comprehensive error log (0x03)".into(),
            count: 2,
            entries: vec![error(2, 20512, 123_456_789), error(1, 20510, 123_456_788)],
        }),
        self_test_log: LogRead::Read(SelfTestLog {
            source: "ATA extended self-test log (0x07)".into(),
            entries: vec![
                test(
                    "extended",
                    SelfTestOutcome::Failed,
                    "failed: read element",
                    20513,
                    Some(123_456_789),
                ),
                test(
                    "short",
                    SelfTestOutcome::Passed,
                    "completed without error",
                    20400,
                    None,
                ),
            ],
        }),
        self_test: status.clone(),
    };
    d.update("sda", |dev| {
        dev.logs = Ok(logs);
        dev.self_test = Ok(status.clone());
    });
    let dev = d.device("sda").unwrap();
    let (h, logs) = drive_state::smart_report(d.as_ref(), &dev).unwrap();
    assert_eq!(h.verdict, Verdict::Warning);
    let logs = logs.unwrap();
    let mut text = report::render_smart_text(&h, None, 80);
    text.push('\n');
    text.push_str(&report::render_smart_logs_text(&logs, 80));
    text.push_str("\n--self-test long says:\n");
    text.push_str(&report::wrap(
        "",
        &report::self_test_warning(SelfTestKind::Long, Some(&status)),
        80,
    ));
    for line in text.lines() {
        assert!(line.chars().count() <= 80, "{line}");
    }
    insta::assert_snapshot!(text);
}

/// A finished run of `test` on a 64 MiB device (the metadata test: in a directory on it),
/// every phase at its own figures, each phase's series cut to two intervals (the CSV and JSON
/// stay readable).
fn family_run(test: TestName, params: &TestParams) -> RunReport {
    let mut r = common::tui::report_phases(test, "sdb", "mq-deadline", |_| (0.0, 0.0));
    r.plan = build_plan(
        test,
        params,
        &TargetFacts {
            size: 64 << 20,
            logical_block_size: 512,
            max_request: Some(1280 << 10),
            is_file: false,
        },
        true,
    )
    .unwrap();
    r.outcome.phases = r
        .plan
        .phases
        .iter()
        .enumerate()
        .map(|(i, ph)| {
            let mut p = common::tui::phase_result(ph, 100.0 + 10.0 * i as f64, 1.0 + i as f64);
            p.series.points.truncate(2);
            if matches!(ph.tag, PhaseTag::Metadata { .. }) {
                // Files, not bytes: every file of the phase, none of them moved a byte.
                let files = ph.job.ops_per_worker.unwrap_or(0);
                for d in [&mut p.read, &mut p.write] {
                    if d.latency.is_some() {
                        d.ops = files;
                        d.iops = files as f64 / p.seconds;
                    }
                    d.bytes = 0;
                    d.bytes_per_sec = 0.0;
                }
                for pt in &mut p.series.points {
                    pt.read.bytes = 0;
                    pt.read.ops = files / 40;
                }
            }
            p
        })
        .collect();
    if test == TestName::Metadata {
        r.target.kind = TargetClass::Directory;
        r.target.path = PathBuf::from("/mnt/data");
        r.target.device = Some("sdb".into());
    }
    r
}

/// Pins what `run` prints for one run of each test family (text, CSV and JSON), and the text
/// of the same run whose last phase failed: the report lays out each family's table by the
/// kind of its phases, and that must not change what is printed.
#[test]
fn one_run_of_each_family_in_text_csv_and_json() {
    let narrow_sweep = TestParams {
        min_bs: Some(64 << 10),
        max_bs: Some(128 << 10),
        include_writes: true,
        ..TestParams::default()
    };
    let few_depths = TestParams {
        qds: Some(vec![1, 8]),
        ..TestParams::default()
    };
    let files = TestParams {
        files: Some(1024),
        ..TestParams::default()
    };
    let runs = [
        (TestName::RandMixed, TestParams::default()),
        (TestName::SizeSweep, narrow_sweep),
        (TestName::QdSweep, few_depths),
        (TestName::Cdm, TestParams::default()),
        (TestName::Metadata, files),
    ];
    for (test, params) in runs {
        let r = family_run(test, &params);
        let mut out = report::render_run_text(&r);
        out += "--- csv ---\n";
        out += &report::render_run_csv(&r);
        out += "--- json ---\n";
        out += &report::render_run_json(&r).unwrap();
        let mut failed = r.clone();
        if let Some(last) = failed.outcome.phases.last_mut() {
            last.setup_error = Some("the device went away".into());
        }
        out += "--- text, the last phase failed ---\n";
        out += &report::render_run_text(&failed);
        insta::assert_snapshot!(format!("family_run_{}", test.id()), out);
    }
}
