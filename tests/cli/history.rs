//! The run history and the persistent scheduler rule from the command line, without root: runs
//! on files in a scratch directory, disks from the QEMU lab's captured sysfs tree (`--root`),
//! rules written under a scratch system root (`--target-root`), histories in scratch
//! directories (`--history-dir`).

#![allow(clippy::unwrap_used)] // tests may unwrap: a panic is the failure report

use crate::common;
use common::{HISTORY_ENV, history_dir, scratch};

use std::fs;
use std::path::Path;
use std::process::{Command, Output};

use disktriage::bench::PhaseFigures;
use disktriage::bench::PhaseTag;
use disktriage::bench::Stat;
use disktriage::bench::TimeBase;
use disktriage::history::{HISTORY_SCHEMA, History, HistoryEntry, RunSettings};
use disktriage::model::DiskIdentity;

fn disktriage(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_disktriage"))
        .env(HISTORY_ENV, history_dir())
        .args(args)
        .output()
        .unwrap()
}

fn lab() -> String {
    format!(
        "{}/tests/fixtures/sysfs/qemu-lab",
        env!("CARGO_MANIFEST_DIR")
    )
}

fn text(out: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The lab's SATA disk's world-wide id, as sysfs gives it.
const SATA_WWID: &str = "t10.ATA     DT SATA DISK                            DT-SATA-0";

fn entry(disk: DiskIdentity, device: &str, mbps: f64, unix: u64) -> HistoryEntry {
    HistoryEntry {
        schema: HISTORY_SCHEMA,
        id: format!("{unix}-1-{device}"),
        tool: "disktriage test".into(),
        started_unix: unix,
        host: None,
        disk,
        device: device.into(),
        model: Some("DT SATA DISK".into()),
        target: format!("/dev/{device}"),
        test: "seq-read".into(),
        settings: RunSettings {
            params: "bs 1M, QD1, 1 worker, sequential read".into(),
            bs: 1 << 20,
            qd: 1,
            jobs: 1,
            engine: "sync".into(),
            engine_asked: "auto".into(),
            direct: true,
            huge_pages: false,
            scheduler: Some("mq-deadline".into()),
            drive_cache: Some("on".into()),
            kernel_cache: Some("write back".into()),
        },
        repeats: 3,
        figures: vec![PhaseFigures {
            label: "seq-read".into(),
            tag: PhaseTag::Single,
            bs: 1 << 20,
            ops: 1200,
            seconds: 10.0,
            time_base: Default::default(),
            mbps: Stat {
                mean: mbps,
                spread_pct: Some(2.5),
            },
            iops: Stat {
                mean: mbps / 1.048576,
                spread_pct: Some(2.5),
            },
            mbps_min_max: None,
            mean_ms: None,
            p50_ms: None,
            p99_ms: Some(Stat {
                mean: 9.5,
                spread_pct: None,
            }),
            p999_ms: None,
        }],
        error: None,
        stopped: false,
        scan: None,
        triage: None,
        flush: None,
        smr: None,
        check: None,
    }
}

#[test]
fn a_run_is_recorded_with_the_figures_of_its_report() {
    let dir = scratch();
    let hist = dir.path().join("hist");
    let target = dir.path().join("t.bin");
    let (h, t) = (hist.to_str().unwrap(), target.to_str().unwrap());
    let out = disktriage(&[
        "--history-dir",
        h,
        "run",
        t,
        "--test",
        "seq-read",
        "--size",
        "8M",
        "--time",
        "300ms",
        "--warmup",
        "0",
        "--bs",
        "64k",
        "--json",
    ]);
    assert!(out.status.success(), "{:?}", text(&out));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let phase = &report["runs"][0]["outcome"]["phases"][0];
    let phase = if phase.is_null() {
        &report["outcome"]["phases"][0]
    } else {
        phase
    };
    let mbps = phase["read"]["bytes_per_sec"].as_f64().unwrap() / 1e6;

    let loaded = History::new(&hist).load().unwrap();
    assert!(loaded.problems.is_empty(), "{:?}", loaded.problems);
    let [e] = loaded.entries.as_slice() else {
        panic!("{:?}", loaded.entries)
    };
    // One truth: the history's figure is the report's, to the last bit.
    assert_eq!(e.figures[0].mbps.mean, mbps);
    assert_eq!(e.test, "seq-read");
    assert_eq!(e.settings.bs, 64 << 10);
    assert!(e.settings.direct);
    let full = fs::canonicalize(&target).unwrap();
    assert_eq!(e.disk, DiskIdentity::File(full.display().to_string()));

    // Listed, all of them and by the file's path.
    for args in [
        vec!["--history-dir", h, "history"],
        vec!["--history-dir", h, "history", t],
    ] {
        let out = disktriage(&args);
        let (stdout, stderr) = text(&out);
        assert!(out.status.success(), "{stderr}");
        assert!(stdout.contains(": 1\n"), "{stdout}");
        assert!(stdout.contains("seq-read"), "{stdout}");
        assert!(stdout.contains(&format!("{mbps:.1}")), "{stdout}");
        assert!(stdout.contains("bs 64k"), "{stdout}");
    }
    let out = disktriage(&["--history-dir", h, "history", "--json"]);
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        doc["runs"][0]["figures"][0]["mbps"]["mean"].as_f64(),
        Some(mbps)
    );
    assert_eq!(doc["runs"][0]["disk"]["by"], "file");
}

#[test]
fn history_of_a_disk_finds_it_under_another_kernel_name() {
    let dir = scratch();
    let h = dir.path().to_str().unwrap();
    let history = History::new(dir.path());
    let sata = DiskIdentity::Wwid(SATA_WWID.into());
    // Recorded when the disk was sdc; another disk was sda then.
    history
        .append(&entry(sata.clone(), "sdc", 180.0, 1_795_000_000))
        .unwrap();
    history
        .append(&entry(
            DiskIdentity::Serial("OTHER".into()),
            "sda",
            90.0,
            1_795_000_100,
        ))
        .unwrap();
    history
        .append(&entry(sata, "sda", 120.0, 1_795_086_400))
        .unwrap();
    let out = disktriage(&["--root", &lab(), "--history-dir", h, "history", "sda"]);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stdout.starts_with(&format!(
            "Runs of the disk with wwid \"{SATA_WWID}\" (sda now)"
        )),
        "{stdout}"
    );
    assert!(stdout.contains("2026-11-18 11:06  sdc"), "{stdout}");
    assert!(stdout.contains("2026-11-19 11:06  sda"), "{stdout}");
    assert!(
        stdout.contains("180.0") && stdout.contains("120.0"),
        "{stdout}"
    );
    assert!(!stdout.contains("90.0"), "another disk: {stdout}");
    // The figures are those Results shows: MB/s, IOPS, p99, repeats and noise.
    assert!(stdout.contains("9.500  3\n"), "{stdout}");
    assert!(stdout.contains("noise 2.5%"), "{stdout}");

    let out = disktriage(&["--root", &lab(), "--history-dir", h, "history"]);
    let (stdout, _) = text(&out);
    assert!(stdout.contains(": 3\n"), "{stdout}");
    assert!(stdout.contains("disk: serial \"OTHER\""), "{stdout}");
}

#[test]
fn a_rewrites_record_says_its_rates_are_over_the_write_time() {
    let dir = scratch();
    let h = dir.path().to_str().unwrap();
    let history = History::new(dir.path());
    let sata = DiskIdentity::Wwid(SATA_WWID.into());
    history
        .append(&entry(sata.clone(), "sda", 100.0, 1_795_000_000))
        .unwrap();
    let mut rewrite = entry(sata, "sda", 80.0, 1_795_000_500);
    rewrite.figures[0].time_base = TimeBase::WriteBusy;
    history.append(&rewrite).unwrap();
    let out = disktriage(&["--history-dir", h, "history"]);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stderr}");
    const NOTE: &str = "MB/s and IOPS are over the time the writes took";
    assert_eq!(stdout.matches(NOTE).count(), 1, "{stdout}");
    // On the rewrite's own lines, after its figures.
    let rewrite_at = stdout.find("80.0").unwrap();
    assert!(stdout.find(NOTE).unwrap() > rewrite_at, "{stdout}");
}

#[test]
fn a_thin_record_shows_its_rate_marked_and_an_unknown_cache_as_elsewhere() {
    let dir = scratch();
    let h = dir.path().to_str().unwrap();
    let history = History::new(dir.path());
    let mut thin = entry(
        DiskIdentity::Wwid(SATA_WWID.into()),
        "sda",
        33.6,
        1_795_000_000,
    );
    thin.figures[0].ops = 97;
    thin.figures[0].seconds = 3.03;
    thin.settings.drive_cache = None;
    history.append(&thin).unwrap();
    let out = disktriage(&["--history-dir", h, "history"]);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stderr}");
    let line = stdout.lines().find(|l| l.contains("sda")).unwrap();
    assert!(line.contains("33.6*"), "{stdout}");
    assert!(line.contains(" ? "), "{stdout}");
    assert!(
        stdout.contains("* 97 I/Os in 3.03 s: low count"),
        "{stdout}"
    );
}

#[test]
fn a_corrupt_history_is_reported_with_its_line_and_left_alone() {
    let dir = scratch();
    let h = dir.path().to_str().unwrap();
    let history = History::new(dir.path());
    let sata = DiskIdentity::Wwid(SATA_WWID.into());
    history
        .append(&entry(sata.clone(), "sda", 100.0, 1_795_000_000))
        .unwrap();
    let file = history.file();
    let mut bytes = fs::read(&file).unwrap();
    bytes.extend_from_slice(b"{\"schema\":1, this is not json\n");
    fs::write(&file, &bytes).unwrap();
    history
        .append(&entry(sata, "sda", 110.0, 1_795_000_500))
        .unwrap();
    let before = fs::read(&file).unwrap();

    let out = disktriage(&["--history-dir", h, "history"]);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("history.jsonl line 2: not a history record"),
        "{stderr}"
    );
    assert!(stderr.contains("left as it is"), "{stderr}");
    assert!(
        stdout.contains(": 2\n"),
        "the good lines still count: {stdout}"
    );
    assert_eq!(fs::read(&file).unwrap(), before, "never rewritten");
}

#[test]
fn a_history_that_cannot_be_written_warns_and_the_run_succeeds() {
    let dir = scratch();
    // A directory below a regular file cannot be created, not even by root.
    let blocker = dir.path().join("file");
    fs::write(&blocker, "x").unwrap();
    let hist = blocker.join("hist");
    let target = dir.path().join("t.bin");
    let out = disktriage(&[
        "--history-dir",
        hist.to_str().unwrap(),
        "run",
        target.to_str().unwrap(),
        "--size",
        "4M",
        "--time",
        "100ms",
        "--warmup",
        "0",
    ]);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}{stderr}");
    assert!(stdout.contains("MB/s"), "{stdout}");
    assert!(
        stderr.contains("warning: the run was not added to the history: cannot create"),
        "{stderr}"
    );
}

/// A scratch system root with an etc/.
fn system_root() -> tempfile::TempDir {
    let root = scratch();
    fs::create_dir(root.path().join("etc")).unwrap();
    root
}

fn rules(root: &Path) -> Vec<String> {
    let Ok(dir) = fs::read_dir(root.join("etc/udev/rules.d")) else {
        return Vec::new();
    };
    let mut names: Vec<String> = dir
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn sched_persist_writes_one_rule_per_disk_and_changes_nothing_now() {
    let root = system_root();
    let r = root.path().to_str().unwrap();
    // --dry-run prints the rule and writes nothing.
    let out = disktriage(&[
        "--root",
        &lab(),
        "sched",
        "sda",
        "none",
        "--persist",
        "--target-root",
        r,
        "--dry-run",
    ]);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stderr}");
    assert!(stdout.starts_with("Would write "), "{stdout}");
    assert!(
        stdout.contains(&format!(
            "ATTRS{{wwid}}==\"{SATA_WWID}\", ATTR{{queue/scheduler}}=\"none\""
        )),
        "{stdout}"
    );
    let words = stdout.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        words.contains("this disk (matched by its wwid)"),
        "{stdout}"
    );
    assert!(
        words.contains("The running scheduler of sda is unchanged (mq-deadline)"),
        "{stdout}"
    );
    assert!(rules(root.path()).is_empty());

    let sched = Path::new(&lab()).join("sys/block/sda/queue/scheduler");
    let scheduler_before = fs::read(&sched).unwrap();
    let out = disktriage(&[
        "--root",
        &lab(),
        "sched",
        "sda",
        "none",
        "--persist",
        "--target-root",
        r,
    ]);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stderr}");
    assert!(stdout.starts_with("Wrote "), "{stdout}");
    let names = rules(root.path());
    let [name] = names.as_slice() else {
        panic!("{names:?}")
    };
    assert!(name.starts_with("60-disktriage-scheduler-wwid-t10.ATA_DT_SATA_DISK_DT-SATA-0-"));
    // Persisting does not switch: the (captured) scheduler file is as it was.
    assert_eq!(fs::read(&sched).unwrap(), scheduler_before);

    // Again with another scheduler: the same file, replaced.
    let out = disktriage(&[
        "--root",
        &lab(),
        "sched",
        "sda",
        "mq-deadline",
        "--persist",
        "--target-root",
        r,
    ]);
    assert!(out.status.success(), "{:?}", text(&out));
    assert_eq!(rules(root.path()), names);
    let rule = fs::read_to_string(root.path().join("etc/udev/rules.d").join(name)).unwrap();
    assert!(
        rule.contains("ATTR{queue/scheduler}=\"mq-deadline\""),
        "{rule}"
    );
    assert_eq!(
        rule.lines().filter(|l| !l.starts_with('#')).count(),
        1,
        "{rule}"
    );

    // The NVMe and virtio disks by their serial numbers; JSON says what was written.
    let out = disktriage(&[
        "--root",
        &lab(),
        "sched",
        "nvme0n1",
        "none",
        "--persist",
        "--target-root",
        r,
        "--json",
    ]);
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["written"], true);
    assert_eq!(doc["rule"]["scope"]["identity"]["by"], "serial");
    assert_eq!(doc["rule"]["scope"]["identity"]["value"], "DT-NVME-0");
    assert_eq!(rules(root.path()).len(), 2);
}

#[test]
fn sched_persist_refuses_with_the_reason() {
    let root = system_root();
    let r = root.path().to_str().unwrap();
    let refused = |args: &[&str], why: &str| {
        let mut all = vec!["--root".to_string(), lab()];
        all.extend(args.iter().map(|s| s.to_string()));
        let all: Vec<&str> = all.iter().map(String::as_str).collect();
        let out = disktriage(&all);
        let (stdout, stderr) = text(&out);
        assert!(!out.status.success(), "{args:?}: {stdout}");
        assert!(stderr.contains(why), "{args:?}: {stderr}");
    };
    // The SCSI disk's serial is only in a binary VPD page: no identity a rule can match.
    refused(
        &["sched", "sdb", "none", "--persist", "--target-root", r],
        "sdb has no stable identity a udev rule can match",
    );
    refused(
        &["sched", "sdb", "none", "--persist", "--target-root", r],
        "--persist-class sets the scheduler of every rotational disk instead",
    );
    refused(
        &["sched", "vda", "bfq", "--persist", "--target-root", r],
        "vda does not offer the I/O scheduler bfq now (offered: mq-deadline none)",
    );
    let bare = scratch();
    refused(
        &[
            "sched",
            "sda",
            "none",
            "--persist",
            "--target-root",
            bare.path().to_str().unwrap(),
        ],
        "does not look like a system root: it has no etc/ directory",
    );
    refused(&["sched", "sda", "--persist"], "<NAME>");
    refused(
        &["sched", "sda", "none", "--persist", "--keep"],
        "cannot be used with",
    );
    assert!(rules(root.path()).is_empty());
    assert!(!bare.path().join("etc").exists());

    // --persist-class: every rotational disk, as the seed's rules.
    let out = disktriage(&[
        "--root",
        &lab(),
        "sched",
        "sdb",
        "none",
        "--persist",
        "--persist-class",
        "--target-root",
        r,
    ]);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stderr}");
    assert!(stdout.contains("ATTR{queue/rotational}==\"1\""), "{stdout}");
    assert_eq!(
        rules(root.path()),
        ["60-disktriage-scheduler-rotational.rules"]
    );
}

/// What the TUI's loop does when a test is over: the test goes in (all its repeats, as one
/// record), and the same disk's runs of other sessions come back, the newest few, never the
/// session's own.
#[test]
fn a_tui_test_is_recorded_and_the_disks_other_runs_come_back() {
    use common::tui::report;
    use disktriage::bench::TestName;
    use std::collections::HashSet;

    let dir = scratch();
    let history = History::new(dir.path());
    let disk = DiskIdentity::LoopImage("/tmp/dtcap/a.img".into());
    let other = DiskIdentity::LoopImage("/tmp/dtcap/b.img".into());
    for i in 0..5u32 {
        history
            .append(&entry(
                disk.clone(),
                "loop0",
                100.0 + f64::from(i),
                1_795_000_000 + u64::from(i),
            ))
            .unwrap();
    }
    history
        .append(&entry(other, "loop1", 50.0, 1_795_000_000))
        .unwrap();
    let runs: Vec<_> = [500.0, 520.0]
        .iter()
        .map(|&m| report(TestName::RandRead, "loop0", "none", m, 0.06))
        .collect();
    let mut mine = HashSet::new();
    let got = history.record_and_recall(disk.clone(), &runs, Some("n/a".into()), &mine, 3);
    assert!(got.notes.is_empty(), "{:?}", got.notes);
    let id = got.recorded.clone().unwrap();
    // The newest three of the disk's other runs, oldest first; not the one just added.
    let mbps: Vec<f64> = got.past.iter().map(|e| e.figures[0].mbps.mean).collect();
    assert_eq!(mbps, [102.0, 103.0, 104.0]);
    let loaded = history.load().unwrap();
    let added = loaded.entries.iter().find(|e| e.id == id).unwrap();
    assert_eq!(added.repeats, 2);
    assert_eq!(added.figures[0].mbps.mean, 510.0);
    assert_eq!(added.figures[0].mbps.spread_pct, Some(20.0 / 510.0 * 100.0));
    assert_eq!(added.settings.drive_cache.as_deref(), Some("n/a"));
    assert_eq!(added.settings.scheduler.as_deref(), Some("none"));
    assert_eq!(added.disk, disk);

    // The next test of the session: its earlier record is not offered back as past.
    mine.insert(id.clone());
    let got = history.record_and_recall(disk, &runs[..1], None, &mine, 10);
    assert_eq!(got.past.len(), 5);
    assert!(got.past.iter().all(|e| e.id != id));

    // A history that cannot be written is a note, never a failure.
    let blocker = dir.path().join("history.jsonl.d");
    fs::write(&blocker, "x").unwrap();
    let broken = History::new(blocker.join("sub"));
    let got = broken.record_and_recall(
        DiskIdentity::Name("loop9".into()),
        &runs,
        None,
        &HashSet::new(),
        3,
    );
    assert!(got.recorded.is_none());
    assert!(
        got.notes[0].starts_with("the run was not added to the history: cannot create"),
        "{:?}",
        got.notes
    );
}

/// A drive's serial is what its firmware says. One with a quote and a line break, as a
/// hostile or broken drive could report, must not end the match and add a rule of its own:
/// it is refused, and nothing is written.
#[test]
fn a_hostile_serial_in_sysfs_never_becomes_a_rule() {
    let tree = scratch();
    let dev = tree.path().join("sys/block/nvme9n1");
    fs::create_dir_all(dev.join("queue")).unwrap();
    fs::create_dir_all(dev.join("device")).unwrap();
    fs::create_dir_all(tree.path().join("proc/self")).unwrap();
    fs::write(dev.join("dev"), "259:9\n").unwrap();
    fs::write(dev.join("size"), "1000\n").unwrap();
    fs::write(dev.join("queue/scheduler"), "[none] mq-deadline\n").unwrap();
    fs::write(dev.join("queue/rotational"), "0\n").unwrap();
    fs::write(
        dev.join("device/serial"),
        "S1\", ATTR{queue/scheduler}=\"none\"\nACTION==\"add\", RUN+=\"/bin/sh -c evil\"  \n",
    )
    .unwrap();
    fs::write(tree.path().join("proc/self/mountinfo"), "").unwrap();
    fs::write(tree.path().join("proc/swaps"), "").unwrap();
    let root = system_root();
    let out = disktriage(&[
        "--root",
        tree.path().to_str().unwrap(),
        "sched",
        "nvme9n1",
        "none",
        "--persist",
        "--target-root",
        root.path().to_str().unwrap(),
    ]);
    let (stdout, stderr) = text(&out);
    assert!(!out.status.success(), "{stdout}");
    assert!(
        stderr.contains("holds a double quote, which a udev rule cannot match safely"),
        "{stderr}"
    );
    assert_eq!(
        stderr.lines().count(),
        1,
        "one line, the newline shown as ?: {stderr}"
    );
    assert!(rules(root.path()).is_empty());
    assert!(!root.path().join("etc/udev").exists());
}

/// Every file below `dir` (links not followed), as paths relative to it.
fn files_below(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = fs::read_dir(&d) else {
            continue;
        };
        for e in entries {
            let e = e.unwrap();
            let ft = e.file_type().unwrap();
            if ft.is_dir() {
                stack.push(e.path());
            } else if ft.is_file() {
                out.push(
                    e.path()
                        .strip_prefix(dir)
                        .unwrap()
                        .to_string_lossy()
                        .into_owned(),
                );
            }
        }
    }
    out.sort();
    out
}

/// The path after "Wrote " or "Would write " on the first line, up to the colon.
fn reported_path(stdout: &str) -> std::path::PathBuf {
    let first = stdout.lines().next().unwrap_or_default();
    let rest = first
        .strip_prefix("Wrote ")
        .or_else(|| first.strip_prefix("Would write "))
        .unwrap_or_else(|| panic!("{stdout}"));
    let rest = rest.strip_suffix(':').unwrap_or(rest);
    rest.strip_suffix(" (--dry-run: nothing written)")
        .unwrap_or(rest)
        .into()
}

/// Links below a target root never lead out of it: an absolute link (`etc/udev -> /abs/dir`,
/// `etc -> /abs/etc`) is read as the installed system would read it booted, inside the root;
/// a relative one that climbs above the root (`rules.d -> ../../..`) stops at the root. The
/// rule is written inside the root or refused, nothing reaches the directory outside, and the
/// path said is the one really written (no link in it).
#[test]
fn sched_persist_never_writes_through_a_link_out_of_the_target_root() {
    use std::os::unix::fs::symlink;
    let mut problems = Vec::new();
    for form in [
        "etc/udev -> /abs/dir",
        "etc -> /abs/etc",
        "rules.d -> ../../..",
    ] {
        // outside/ holds the target root, so a relative link that climbs out of it lands in
        // outside/ too.
        let scratch_dir = scratch();
        let outside = scratch_dir.path().join("outside");
        let root = outside.join("root");
        fs::create_dir_all(&root).unwrap();
        match form {
            "etc/udev -> /abs/dir" => {
                fs::create_dir(root.join("etc")).unwrap();
                fs::create_dir_all(outside.join("udev/rules.d")).unwrap();
                symlink(outside.join("udev"), root.join("etc/udev")).unwrap();
            }
            "etc -> /abs/etc" => {
                fs::create_dir_all(outside.join("etc/udev/rules.d")).unwrap();
                symlink(outside.join("etc"), root.join("etc")).unwrap();
            }
            _ => {
                fs::create_dir_all(root.join("etc/udev")).unwrap();
                symlink("../../..", root.join("etc/udev/rules.d")).unwrap();
            }
        }
        let out = disktriage(&[
            "--root",
            &lab(),
            "sched",
            "sda",
            "none",
            "--persist",
            "--target-root",
            root.to_str().unwrap(),
        ]);
        let (stdout, stderr) = text(&out);
        let leaked: Vec<String> = files_below(&outside)
            .into_iter()
            .filter(|f| !f.starts_with("root/"))
            .collect();
        if !leaked.is_empty() {
            problems.push(format!("{form}: written outside: {leaked:?}"));
        }
        if out.status.success() {
            let said = reported_path(&stdout);
            if !said.is_file() {
                problems.push(format!("{form}: {said:?} said but not written"));
            } else if fs::canonicalize(&said).unwrap() != said || !said.starts_with(&root) {
                problems.push(format!(
                    "{form}: said {said:?}, not the real path in the root"
                ));
            }
        } else {
            assert!(!stderr.is_empty(), "{form}");
            if !files_below(&root).is_empty() {
                problems.push(format!(
                    "{form}: refused but wrote {:?}",
                    files_below(&root)
                ));
            }
        }
    }
    assert!(problems.is_empty(), "{problems:#?}");
}

/// In rescue mode the installed system's absolute links (`etc -> /sysimage-etc`, as a system
/// whose /etc lives elsewhere has) resolve inside its root, where that system will read them
/// when booted, never into the rescue system running disktriage.
#[test]
fn sched_persist_reads_an_absolute_link_of_the_installed_system_inside_its_root() {
    use std::os::unix::fs::symlink;
    let scratch_dir = scratch();
    // The same absolute path exists twice: on the running system (outside the root) and
    // inside the root. Only the second is the installed system's.
    let abs = scratch_dir.path().join("real-etc");
    fs::create_dir_all(&abs).unwrap();
    let root = scratch_dir.path().join("sysimage");
    let inside = root.join(abs.strip_prefix("/").unwrap());
    fs::create_dir_all(&inside).unwrap();
    symlink(&abs, root.join("etc")).unwrap();
    let r = root.to_str().unwrap();
    let args = |dry: bool| {
        let mut a = vec![
            "--root".to_string(),
            lab(),
            "sched".into(),
            "sda".into(),
            "none".into(),
            "--persist".into(),
            "--target-root".into(),
            r.into(),
        ];
        if dry {
            a.push("--dry-run".into());
        }
        a
    };
    let run = |a: Vec<String>| disktriage(&a.iter().map(String::as_str).collect::<Vec<_>>());
    let out = run(args(true));
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stderr}");
    let planned = reported_path(&stdout);
    assert!(
        planned.starts_with(inside.join("udev/rules.d")),
        "{planned:?}"
    );
    let out = run(args(false));
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stderr}");
    let said = reported_path(&stdout);
    assert_eq!(said, planned);
    assert!(said.is_file());
    assert_eq!(fs::canonicalize(&said).unwrap(), said);
    assert!(
        files_below(&abs).is_empty(),
        "the running system's etc was written"
    );
}

/// An error says its cause once ("cannot ... : File exists", not "...: File exists: File
/// exists").
#[test]
fn sched_persist_says_the_cause_of_an_error_once() {
    let root = system_root();
    fs::create_dir(root.path().join("etc/udev")).unwrap();
    fs::write(root.path().join("etc/udev/rules.d"), "not a directory").unwrap();
    let out = disktriage(&[
        "--root",
        &lab(),
        "sched",
        "sda",
        "none",
        "--persist",
        "--target-root",
        root.path().to_str().unwrap(),
    ]);
    let (stdout, stderr) = text(&out);
    assert!(!out.status.success(), "{stdout}");
    let line = stderr.trim_end();
    assert_eq!(line.lines().count(), 1, "{stderr}");
    let cause = line.rsplit(": ").next().unwrap();
    assert_eq!(line.matches(cause).count(), 1, "the cause twice: {line}");
}

/// Attack 4 (options for captured trees): a triage of a captured tree (`--root`) read the
/// tree's files, not a disk of this machine; it says so (unknown, exit 5) and adds nothing to
/// the history, where it would be the "earlier triage" of a real disk.
#[test]
fn a_triage_of_a_captured_tree_is_not_kept_in_the_history() {
    let dir = scratch();
    let h = dir.path().to_str().unwrap();
    let out = disktriage(&[
        "--root",
        &lab(),
        "--history-dir",
        h,
        "triage",
        "--quick",
        "--json",
        "sda",
    ]);
    assert_eq!(
        out.status.code(),
        Some(5),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["disks"][0]["verdict"], "unknown");
    assert!(
        !dir.path().join("history.jsonl").exists(),
        "{:?}",
        fs::read_to_string(dir.path().join("history.jsonl"))
    );
}

#[test]
fn a_scan_a_triage_a_flush_capacity_and_trim_check_say_what_they_found() {
    use disktriage::history::{CheckRecord, FlushRecord, ScanRecord, TriageRecord};
    let dir = scratch();
    let h = dir.path().to_str().unwrap();
    let history = History::new(dir.path());
    let sata = DiskIdentity::Wwid(SATA_WWID.into());
    let bare = |test: &str, unix: u64| HistoryEntry {
        test: test.into(),
        figures: Vec::new(),
        ..entry(sata.clone(), "sda", 0.0, unix)
    };
    let mut scan = bare("surface-scan", 1_795_000_000);
    scan.scan = Some(ScanRecord {
        planned: 1 << 30,
        bytes_read: 1 << 30,
        bytes_bad: 17 * 512,
        seconds: 12.0,
        buckets: Vec::new(),
        map: String::new(),
        unreadable: vec![(4096, 17 * 512, 61)],
        unreadable_ranges: 1,
        slow_ranges: 2,
        time_ranges: 0,
        end: "finished".into(),
        verdict: "17 unreadable sectors at LBA 8-24".into(),
    });
    let mut triage = bare("triage", 1_795_000_100);
    triage.triage = Some(TriageRecord {
        verdict: "suspect".into(),
        values: Default::default(),
        rules: vec!["pending-sectors".into(), "outlier-seq-read".into()],
    });
    let mut flush = bare("flushcheck", 1_795_000_200);
    flush.flush = Some(FlushRecord {
        verdict: "volatile-cache".into(),
        sentence: "commits in 0.08 ms on a 7,200 rpm disk".into(),
        ..FlushRecord::default()
    });
    let mut capacity = bare("capacity", 1_795_000_300);
    capacity.check = Some(CheckRecord {
        verdict: "fake".into(),
        sentence: "fake: stores 100.0 MiB (104.9 MB) of the 2.0 TB (1.8 TiB) it claims".into(),
    });
    let mut trim = bare("trimcheck", 1_795_000_400);
    trim.check = Some(CheckRecord {
        verdict: "broken".into(),
        sentence: "claims zeros (NVMe DLFEAT 1), returns old data".into(),
    });
    for e in [&scan, &triage, &flush, &capacity, &trim] {
        history.append(e).unwrap();
    }
    let out = disktriage(&["--history-dir", h, "history"]);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stderr}");
    for words in [
        "read 1.0 GiB of 1.0 GiB; unreadable 8.5 KiB in 1 range; slow ranges 2, TIME 0; \
         finished in 12 s: 17 unreadable sectors at LBA 8-24",
        "verdict suspect; first finding pending-sectors",
        "verdict volatile-cache: commits in 0.08 ms on a 7,200 rpm disk",
        "verdict fake: fake: stores 100.0 MiB (104.9 MB) of the 2.0 TB (1.8 TiB) it claims",
        "verdict broken: claims zeros (NVMe DLFEAT 1), returns old data",
    ] {
        assert!(stdout.contains(words), "{words:?} in:\n{stdout}");
    }
    // No "?" for a drive cache none of them read, no test parameters.
    for line in stdout.lines().filter(|l| l.contains(" sda ")) {
        assert!(!line.contains(" ? "), "{line}");
    }
    assert!(!stdout.contains("engine sync"), "{stdout}");
}
