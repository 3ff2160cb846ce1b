//! `disktriage triage --report PATH...`: saved smartctl reports judged without a device. Tiny
//! reports written to a scratch directory (a clean PASSED drive, a FAILED one, a file that is
//! no report), directories of them (one level, dot-files skipped, what is no report named),
//! the real drives' reports of `tests/fixtures/smartctl-text/`, and a few of the shared set
//! beside the repository (skipped where it is absent).

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use crate::common;
use common::{HISTORY_ENV, history_dir, scratch};

const PASSED: &str = "smartctl 7.4 2023-08-01 r5530 [x86_64-linux-6.1.0] (local build)
Copyright (C) 2002-23, Bruce Allen, Christian Franke, www.smartmontools.org

=== START OF INFORMATION SECTION ===
Device Model:     WDC WD40EFRX-68N32N0
Serial Number:    WD-WCC7K0000001
User Capacity:    4,000,787,030,016 bytes [4.00 TB]
Sector Sizes:     512 bytes logical, 4096 bytes physical
Rotation Rate:    5400 rpm

=== START OF READ SMART DATA SECTION ===
SMART overall-health self-assessment test result: PASSED

ID# ATTRIBUTE_NAME          FLAGS    VALUE WORST THRESH FAIL RAW_VALUE
  5 Reallocated_Sector_Ct   PO--CK   200   200   140    -    0
  9 Power_On_Hours          -O--CK   051   051   000    -    36000
194 Temperature_Celsius     -O---K   118   104   000    -    32
197 Current_Pending_Sector  -O--CK   200   200   000    -    0
198 Offline_Uncorrectable   ----CK   100   253   000    -    0
199 UDMA_CRC_Error_Count    -O--CK   200   200   000    -    0
";

/// The same drive, failing: its health says so and a prefailure attribute is below its
/// threshold now.
fn failed() -> String {
    PASSED
        .replace("WD-WCC7K0000001", "WD-WCC7K0000002")
        .replace("result: PASSED", "result: FAILED!")
        .replace(
            "PO--CK   200   200   140    -    0",
            "PO--CK   001   001   140    NOW  4760",
        )
}

fn triage(args: &[&str]) -> Output {
    let mut all = vec!["triage"];
    all.extend_from_slice(args);
    common::disktriage(&all)
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn json(out: &Output) -> serde_json::Value {
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", text(&out.stdout)))
}

/// The verdict of each disk of a `--json` report, by device.
fn verdicts(doc: &serde_json::Value) -> Vec<(String, String)> {
    let mut v: Vec<(String, String)> = doc["disks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (
                d["device"].as_str().unwrap().to_string(),
                d["verdict"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    v.sort();
    v
}

fn write(dir: &Path, name: &str, contents: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, contents).unwrap();
    path.to_str().unwrap().to_string()
}

/// A new directory `name` in `dir`, as a string for the command line.
fn mkdir(dir: &Path, name: &str) -> String {
    let path = dir.join(name);
    std::fs::create_dir(&path).unwrap();
    path.to_str().unwrap().to_string()
}

/// Each disk's `report` of a `--json` report, by device.
fn report_paths(doc: &serde_json::Value) -> Vec<(String, serde_json::Value)> {
    let mut v: Vec<(String, serde_json::Value)> = doc["disks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (
                d["device"].as_str().unwrap().to_string(),
                d["report"].clone(),
            )
        })
        .collect();
    v.sort_by(|a, b| a.0.cmp(&b.0));
    v
}

#[test]
fn a_clean_report_is_healthy_and_a_failed_one_failing() {
    let dir = scratch();
    let ok = write(dir.path(), "ok.txt", PASSED);
    let bad = write(dir.path(), "bad.txt", &failed());
    let out = triage(&["--report", &ok]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let table = text(&out.stdout);
    assert!(
        table.starts_with("Triage of 1 saved smartctl report: healthy\n"),
        "{table}"
    );
    assert!(table.contains("not recorded in the history"), "{table}");
    assert!(
        table.contains("\nok.txt "),
        "named by its file name: {table}"
    );

    let out = triage(&["--report", &ok, &bad]);
    assert_eq!(out.status.code(), Some(4), "{}", text(&out.stderr));
    let table = text(&out.stdout);
    assert!(
        table.contains("\nbad.txt: failing (WDC WD40EFRX-68N32N0"),
        "{table}"
    );
    assert!(!table.contains("/dev/bad.txt:"), "{table}");

    // --report twice is the same as one --report with two files.
    let out = triage(&["--json", "--report", &ok, "--report", &bad]);
    assert_eq!(out.status.code(), Some(4), "{}", text(&out.stderr));
    let doc = json(&out);
    assert_eq!(doc["source"], "saved-reports");
    assert_eq!(doc["verdict"], "failing");
    assert_eq!(doc["exit_status"], 4);
    assert_eq!(
        verdicts(&doc),
        [
            ("bad.txt".to_string(), "failing".to_string()),
            ("ok.txt".to_string(), "healthy".to_string())
        ]
    );
    let bad_disk = &doc["disks"][0];
    assert_eq!(bad_disk["identity"]["serial"], "WD-WCC7K0000002");
    assert_eq!(bad_disk["identity"]["capacity_bytes"], 4_000_787_030_016u64);
    assert_eq!(bad_disk["smart"]["reallocated_sectors"], 4760);
    let rules: Vec<&str> = bad_disk["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["rule"].as_str().unwrap())
        .collect();
    assert!(rules.contains(&"smart-failed"), "{rules:?}");
}

#[test]
fn a_file_that_is_no_report_is_named_and_the_others_are_still_judged() {
    let dir = scratch();
    let ok = write(dir.path(), "ok.txt", PASSED);
    let junk = write(dir.path(), "x.txt", "Hello, this is no smartctl output.\n");
    let missing = dir.path().join("gone.txt");
    let missing = missing.to_str().unwrap();
    let out = triage(&["--json", "--report", &junk, &ok, missing]);
    assert_eq!(out.status.code(), Some(1), "an error, after the report");
    let err = text(&out.stderr);
    assert!(
        err.contains(&format!("{junk}: not a smartctl report: ")),
        "{err}"
    );
    assert!(
        err.contains(&format!("{missing}: cannot read it: No such file")),
        "{err}"
    );
    assert!(err.contains("2 of 3 files were not judged"), "{err}");
    let doc = json(&out);
    assert_eq!(
        verdicts(&doc),
        [("ok.txt".to_string(), "healthy".to_string())]
    );
    // Nothing judged at all: the error alone, no empty report.
    let out = triage(&["--report", &junk]);
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty(), "{}", text(&out.stdout));
    assert!(text(&out.stderr).contains("no report could be judged"));
}

#[test]
fn a_directory_is_read_one_level_deep_without_its_dot_files() {
    let dir = scratch();
    let reports = mkdir(dir.path(), "reports");
    let r = Path::new(&reports);
    write(r, "web01__sda.txt", PASSED);
    write(r, "web01__sdb.txt", &failed());
    // An editor's swap file of a failing report: were it read, a third disk would be judged.
    write(r, ".web01__sdc.txt.swp", &failed());
    // A subdirectory is not entered (one level only) and is said to be skipped; a symlink to
    // a directory (here to its own: a loop) neither.
    let old = mkdir(r, "old");
    write(Path::new(&old), "web01__sdd.txt", &failed());
    std::os::unix::fs::symlink(r, r.join("self")).unwrap();
    // A symlink to a report in the directory is read.
    let elsewhere = write(dir.path(), "db01__nvme0n1.txt", PASSED);
    std::os::unix::fs::symlink(&elsewhere, r.join("db01__nvme0n1.txt")).unwrap();

    let out = triage(&["--json", "--report", &reports]);
    let err = text(&out.stderr);
    // Nothing was refused: the exit status is the worst verdict's.
    assert_eq!(out.status.code(), Some(4), "{err}");
    let doc = json(&out);
    assert_eq!(
        verdicts(&doc),
        [
            ("db01__nvme0n1.txt".to_string(), "healthy".to_string()),
            ("web01__sda.txt".to_string(), "healthy".to_string()),
            ("web01__sdb.txt".to_string(), "failing".to_string()),
        ]
    );
    assert!(
        err.contains(&format!(
            "{old}: skipped: a directory (only the files directly in "
        )),
        "{err}"
    );
    assert!(err.contains("/self: skipped: a directory"), "{err}");
    assert!(!err.contains("swp"), "a dot-file is skipped quietly: {err}");

    // Named through a symlink, and with a trailing slash: the same directory.
    let link = dir.path().join("latest");
    std::os::unix::fs::symlink(r, &link).unwrap();
    let out = triage(&["--report", &format!("{}/", link.display())]);
    assert_eq!(out.status.code(), Some(4), "{}", text(&out.stderr));
    let table = text(&out.stdout);
    assert!(
        table.starts_with("Triage of 3 saved smartctl reports: failing\n"),
        "{table}"
    );
}

#[test]
fn a_file_in_a_directory_that_is_no_report_is_named_and_the_rest_judged() {
    let dir = scratch();
    let reports = mkdir(dir.path(), "reports");
    let r = Path::new(&reports);
    write(r, "a.txt", PASSED);
    write(r, "notes.md", "Collected on Tuesday.\n");
    std::fs::write(
        r.join("photo.png"),
        b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\xff\xfe",
    )
    .unwrap();
    // A FIFO with no writer: refused at once, never waited on.
    nix::unistd::mkfifo(
        &r.join("pipe"),
        nix::sys::stat::Mode::from_bits_truncate(0o600),
    )
    .unwrap();
    write(r, "z.txt", &failed());

    let out = triage(&["--json", "--report", &reports]);
    assert_eq!(out.status.code(), Some(1), "an error, after the report");
    let err = text(&out.stderr);
    for why in [
        format!("{reports}/notes.md: not a smartctl report: "),
        format!("{reports}/photo.png: not a smartctl report: "),
        format!("{reports}/pipe: cannot read it: it is a FIFO (named pipe), not a file"),
        "3 of 5 files were not judged".to_string(),
    ] {
        assert!(err.contains(&why), "no {why:?} in {err}");
    }
    // In name order.
    let at = |s: &str| err.find(s).unwrap();
    assert!(at("notes.md") < at("photo.png") && at("photo.png") < at("/pipe"));
    let doc = json(&out);
    assert_eq!(
        verdicts(&doc),
        [
            ("a.txt".to_string(), "healthy".to_string()),
            ("z.txt".to_string(), "failing".to_string()),
        ]
    );
}

#[test]
fn an_empty_directory_is_an_error_in_words() {
    let dir = scratch();
    let empty = mkdir(dir.path(), "empty");
    let out = triage(&["--report", &empty]);
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty(), "{}", text(&out.stdout));
    let err = text(&out.stderr);
    assert!(
        err.contains(&format!("{empty}: no report in it: the directory is empty")),
        "{err}"
    );
    assert!(err.contains("no report could be judged"), "{err}");

    // Only a dot-file and a subdirectory: nothing to read either, and it says what it skipped.
    let skipped = mkdir(dir.path(), "skipped");
    write(Path::new(&skipped), ".a.txt", PASSED);
    let sub = mkdir(Path::new(&skipped), "sub");
    write(Path::new(&sub), "b.txt", PASSED);
    let out = triage(&["--report", &skipped]);
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(
        err.contains(&format!(
            "{skipped}: no report in it: 1 dot-file and 1 directory skipped \
             (only the files directly in a directory are read)"
        )),
        "{err}"
    );

    // Beside a report: the report is judged, the empty directory named, and the exit is 1.
    let ok = write(dir.path(), "ok.txt", PASSED);
    let out = triage(&["--json", "--report", &empty, &ok]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        verdicts(&json(&out)),
        [("ok.txt".to_string(), "healthy".to_string())]
    );
    let err = text(&out.stderr);
    assert!(
        err.contains(&format!(
            "1 of 2 files and directories were not judged: {empty}"
        )),
        "{err}"
    );
}

#[test]
fn the_json_gives_each_disks_report_as_named_or_found() {
    let dir = scratch();
    let reports = mkdir(dir.path(), "reports");
    write(Path::new(&reports), "sda.txt", PASSED);
    write(Path::new(&reports), "sdb.txt", &failed());
    let other = mkdir(dir.path(), "other");
    write(Path::new(&other), "sda.txt", PASSED);
    // Relative to the working directory, as given; the directory's files joined to the
    // directory as given; two `sda.txt` are named by their paths.
    let out = Command::new(env!("CARGO_BIN_EXE_disktriage"))
        .env(HISTORY_ENV, history_dir())
        .current_dir(dir.path())
        .args(["triage", "--json", "--report", "reports", "./other/sda.txt"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(4), "{}", text(&out.stderr));
    let doc = json(&out);
    assert_eq!(
        report_paths(&doc),
        [
            ("./other/sda.txt".to_string(), "./other/sda.txt".into()),
            ("reports/sda.txt".to_string(), "reports/sda.txt".into()),
            ("sdb.txt".to_string(), "reports/sdb.txt".into()),
        ]
    );
    // Standard input is "-", as given.
    let mut child = Command::new(env!("CARGO_BIN_EXE_disktriage"))
        .env(HISTORY_ENV, history_dir())
        .args(["triage", "--json", "--report", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(PASSED.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        report_paths(&json(&out)),
        [("stdin".to_string(), "-".into())]
    );
}

#[test]
fn reports_are_never_recorded_and_take_no_device_arguments() {
    let dir = scratch();
    let ok = write(dir.path(), "ok.txt", PASSED);
    let history = dir.path().join("history");
    let out = common::disktriage(&[
        "--history-dir",
        history.to_str().unwrap(),
        "triage",
        "--report",
        &ok,
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let recorded = std::fs::read_dir(&history).map(|d| d.count()).unwrap_or(0);
    assert_eq!(recorded, 0, "the history was written");
    // (After --report, every word up to the next option is a FILE: `--report a b`.)
    for conflicting in [&["sda"][..], &["--quick"], &["--bound", "5"]] {
        let mut args = conflicting.to_vec();
        args.extend(["--report", ok.as_str()]);
        let out = triage(&args);
        assert_eq!(out.status.code(), Some(2), "{conflicting:?}");
    }
}

#[test]
fn standard_input_and_the_prometheus_text() {
    let dir = scratch();
    let prom = dir.path().join("t.prom");
    let mut child = Command::new(env!("CARGO_BIN_EXE_disktriage"))
        .env(HISTORY_ENV, history_dir())
        .args(["triage", "--report", "-", "--prom", prom.to_str().unwrap()])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(failed().as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(4), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("\nstdin: failing"));
    let prom = std::fs::read_to_string(prom).unwrap();
    assert!(
        prom.contains(
            "disktriage_verdict{device=\"stdin\",model=\"WDC WD40EFRX-68N32N0\",\
             serial=\"WD-WCC7K0000002\"} 2"
        ),
        "{prom}"
    );
}

#[test]
fn real_drives_reports_from_the_fixtures() {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/smartctl-text");
    let f = |name: &str| fixtures.join(name).to_str().unwrap().to_string();
    let hdd = f("HDD__HGST__HCC545050A7E380__0F10E45DEEEE.txt");
    let nvme = f("NVMe__Crucial__CT500P1SSD8__1AA37AE5B55C.txt");
    let ssd = f("SSD__Crucial__CT750MX300SSD1__27CAF7DC753C.txt");
    let out = triage(&["--json", "--report", &hdd, &nvme, &ssd]);
    assert_eq!(out.status.code(), Some(4), "{}", text(&out.stderr));
    let doc = json(&out);
    let disks = doc["disks"].as_array().unwrap();
    assert_eq!(disks.len(), 3);
    let disk = |name: &str| {
        disks
            .iter()
            .find(|d| d["device"] == name)
            .unwrap_or_else(|| panic!("no {name}"))
    };
    let hdd = disk("HDD__HGST__HCC545050A7E380__0F10E45DEEEE.txt");
    assert_eq!(hdd["smart"]["pending_sectors"], 24);
    assert_eq!(hdd["logs"]["errors"], 14);
    assert_eq!(hdd["identity"]["rotation_rpm"], 5400);
    let nvme = disk("NVMe__Crucial__CT500P1SSD8__1AA37AE5B55C.txt");
    assert_eq!(nvme["verdict"], "failing");
    assert_eq!(nvme["smart"]["critical_warning"], 4);
    assert_eq!(nvme["identity"]["transport"], "nvme");
    let ssd = disk("SSD__Crucial__CT750MX300SSD1__27CAF7DC753C.txt");
    assert_eq!(ssd["verdict"], "failing");
}

#[test]
fn the_shared_reports_text_and_json() {
    let Some(dir) = common::smart_reports("triage_reports::the_shared_reports_text_and_json")
    else {
        return;
    };
    let f = |name: &str| dir.join(name).to_str().unwrap().to_string();
    let cases = [
        ("json/AnalogJ_scrutiny__smart-ata.json", "healthy"),
        (
            "text/SSD__Apacer__Apacer_AS340_240GB__pysmart-sata_ssd_1_issue_72.txt",
            "healthy",
        ),
        (
            "text/HDD__Hitachi__HDS5C3020ALA632__6E9416759DB2.txt",
            "failing",
        ),
        (
            "text/SCSI__AVAGO__MR9361-16i__pysmart-unsupported_0.txt",
            "unknown",
        ),
        ("json/AnalogJ_scrutiny__smart-fail.json", "unknown"),
    ];
    let paths: Vec<String> = cases.iter().map(|(n, _)| f(n)).collect();
    let mut args = vec!["--json", "--report"];
    args.extend(paths.iter().map(String::as_str));
    let out = triage(&args);
    assert_eq!(out.status.code(), Some(5), "{}", text(&out.stderr));
    let doc = json(&out);
    let got = verdicts(&doc);
    for (name, verdict) in cases {
        let file = Path::new(name).file_name().unwrap().to_str().unwrap();
        assert!(
            got.contains(&(file.to_string(), verdict.to_string())),
            "{file}: {got:?}"
        );
    }
}

/// Seagate's FARM log as `smartctl -x -l farm` prints it (farmprint.cpp), with `hours`.
fn farm_section(hours: u64) -> String {
    format!(
        "\nSeagate Field Access Reliability Metrics log (FARM) (GP Log 0xa6)\n\
         \tFARM Log Page 0: Log Header\n\t\tFARM Log Version: 3.7\n\
         \tFARM Log Page 1: Drive Information\n\t\tSerial Number: ZL2ABCDE\n\
         \t\tPower on Hours: {hours}\n\t\tSpindle Power on Hours: {hours}\n\
         \t\tDrive Recording Type: CMR\n"
    )
}

#[test]
fn a_reset_smart_hour_counter_beside_farms_is_suspect_and_erc_a_note() {
    let dir = scratch();
    // SMART says 36000 hours; FARM agrees, then FARM says 52000 (SMART was reset).
    let agree = write(
        dir.path(),
        "agree.txt",
        &(PASSED.to_string() + &farm_section(36010)),
    );
    let reset = write(
        dir.path(),
        "reset.txt",
        &(PASSED.to_string() + &farm_section(52000)),
    );
    let out = triage(&["--json", "--report", &agree, &reset]);
    assert_eq!(out.status.code(), Some(3), "{}", text(&out.stderr));
    let doc = json(&out);
    let got = verdicts(&doc);
    assert!(
        got.contains(&("agree.txt".into(), "healthy".into())),
        "{got:?}"
    );
    assert!(
        got.contains(&("reset.txt".into(), "suspect".into())),
        "{got:?}"
    );
    let disk = doc["disks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["device"] == "reset.txt")
        .unwrap();
    let finding = &disk["findings"][0];
    assert_eq!(finding["rule"], "smart-hours-reset");
    assert_eq!(
        finding["sentence"],
        "SMART counts 36000 power-on hours, the drive's FARM log 52000: its SMART hour \
         counter was reset (sold as new?)"
    );
    // The table says it too, with the next step.
    let out = triage(&["--report", &reset]);
    let table = text(&out.stdout);
    assert!(
        table.contains("[suspect] SMART counts 36000 power-on hours"),
        "{table}"
    );
    assert!(
        table.contains("next: ask the seller: the drive has run 52000 hours"),
        "{table}"
    );
    // ERC disabled in a saved report: no array is known, so a note, not a finding.
    let off = PASSED.to_string()
        + "\nSCT Error Recovery Control:\n           Read: Disabled\n          Write: Disabled\n";
    let off = write(dir.path(), "off.txt", &off);
    let out = triage(&["--json", "--report", &off]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let doc = json(&out);
    assert_eq!(
        doc["disks"][0]["fitness"]["erc"],
        serde_json::json!({"state": "timers", "read": 0, "write": 0})
    );
    assert_eq!(
        doc["disks"][0]["fitness"]["timeout_s"],
        serde_json::Value::Null
    );
    let notes = doc["disks"][0]["notes"].to_string();
    assert!(
        notes.contains("SCT Error Recovery Control is disabled: it may retry a sector for minutes, the kernel's default timeout is 30 s; as a RAID member, set ERC to 7 s"),
        "{notes}"
    );
}

#[test]
fn the_shared_reports_erc_and_shingles_are_notes() {
    let Some(dir) =
        common::smart_reports("triage_reports::the_shared_reports_erc_and_shingles_are_notes")
    else {
        return;
    };
    let f = |name: &str| dir.join("text").join(name).to_str().unwrap().to_string();
    let cases = [
        // ERC 7.0 s: within the kernel's default 30 s, nothing said.
        ("HDD__Seagate__ST14000NM001G-2KJ103__0911C30B4CDF.txt", None),
        (
            "HDD__Hitachi__HDS723020BLA642__F9FC304731B2.txt",
            Some("SCT Error Recovery Control is disabled"),
        ),
        // SCT capabilities without Error Recovery Control.
        (
            "HDD__Seagate__ST2000DM006-2DM164__609A945D538D.txt",
            Some("the drive has no SCT Error Recovery Control"),
        ),
        // A USB bridge that says 7200 rpm and TRIM.
        (
            "HDD__ASMedia__ASMT109x-_Fast__6FE2909B2F41.txt",
            Some("most likely a drive-managed shingled (SMR) disk (it rotates and supports TRIM)"),
        ),
    ];
    let paths: Vec<String> = cases.iter().map(|(n, _)| f(n)).collect();
    let mut args = vec!["--json", "--report"];
    args.extend(paths.iter().map(String::as_str));
    let out = triage(&args);
    let doc = json(&out);
    for (name, note) in cases {
        let disk = doc["disks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|d| d["device"] == name)
            .unwrap_or_else(|| panic!("{name} judged"));
        assert_eq!(disk["verdict"], "healthy", "{name}: {disk}");
        let notes = disk["notes"].to_string();
        match note {
            Some(n) => assert!(notes.contains(n), "{name}: {notes}"),
            None => assert!(!notes.contains("Error Recovery"), "{name}: {notes}"),
        }
    }
}
