//! `disktriage run TARGET TARGET...`: the argument rules of a run on several targets, the
//! one --destroy-data list, and the rows, verdict and JSON on files the runs create. No
//! devices and no root: the targets are files in a scratch directory.

#![allow(clippy::unwrap_used)] // tests may unwrap: a panic is the failure report

use crate::common;

use std::process::Output;

use common::{disktriage, scratch};

fn text(out: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Fails with `expected` in the error, having printed no report.
fn refused(args: &[&str], expected: &str) {
    let out = disktriage(args);
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(1), "{args:?}: {stdout}{stderr}");
    let flat = stderr.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(flat.contains(expected), "{args:?}: {stderr}");
    assert!(stdout.is_empty(), "{stdout}");
}

#[test]
fn flags_of_several_targets_need_several_targets() {
    let dir = scratch();
    let a = dir.path().join("a.img");
    let b = dir.path().join("b.img");
    let (a, b) = (a.to_str().unwrap(), b.to_str().unwrap());
    refused(
        &["run", a, "--one-by-one"],
        "--one-by-one needs several targets (or --members)",
    );
    refused(
        &["run", a, b, "--members"],
        "--members takes one target, the md array",
    );
    refused(
        &["run", a, b, "--fio"],
        "--fio prints the commands of one target",
    );
    refused(
        &["run", a, b, "--csv"],
        "--csv holds the series of one target",
    );
    refused(
        &["run", a, "--members"],
        "--members needs an md array (e.g. /dev/md0)",
    );
    // Nothing was created by a refused command.
    assert!(std::fs::read_dir(dir.path()).unwrap().next().is_none());

    // clap's own range check.
    let out = disktriage(&["run", a, b, "--repeats", "21"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out).1.contains("21 is not in 1..=20"),
        "{}",
        text(&out).1
    );
}

#[test]
fn the_same_target_twice_is_refused() {
    let dir = scratch();
    let a = dir.path().join("a.img");
    std::fs::write(&a, vec![0u8; 1 << 20]).unwrap();
    let link = dir.path().join("link.img");
    std::os::unix::fs::symlink(&a, &link).unwrap();
    refused(
        &[
            "run",
            a.to_str().unwrap(),
            link.to_str().unwrap(),
            "--test",
            "seq-read",
        ],
        "is given twice (or is the same device or file as another target)",
    );
}

#[test]
fn one_destroy_data_list_names_every_written_target() {
    let dir = scratch();
    let a = dir.path().join("a.img");
    let b = dir.path().join("b.img");
    for f in [&a, &b] {
        std::fs::write(f, vec![7u8; 1 << 20]).unwrap();
    }
    let (a, b) = (a.to_str().unwrap(), b.to_str().unwrap());
    let write = |extra: &[&str]| {
        let mut args = vec![
            "run",
            a,
            b,
            "--test",
            "seq-write",
            "--bs",
            "64k",
            "--count",
            "4",
        ];
        args.extend_from_slice(extra);
        args.into_iter().map(String::from).collect::<Vec<_>>()
    };
    let run = |extra: &[&str]| {
        let args = write(extra);
        disktriage(&args.iter().map(String::as_str).collect::<Vec<_>>())
    };
    let check = |extra: &[&str], expected: &str| {
        let out = run(extra);
        let (stdout, stderr) = text(&out);
        // No list at all is a usage error (2); a list that names the wrong files a refusal (1).
        let code = if extra.is_empty() { 2 } else { 1 };
        assert_eq!(out.status.code(), Some(code), "{extra:?}: {stdout}{stderr}");
        let flat = stderr.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(flat.contains(expected), "{extra:?}: {stderr}");
    };
    check(
        &[],
        "this test writes to a.img, b.img and destroys the data on them: pass --destroy-data \
         a.img,b.img",
    );
    check(
        &["--destroy-data", "a.img"],
        "--destroy-data a.img does not name b.img",
    );
    check(
        &["--destroy-data", "a.img,b.img,c.img"],
        "--destroy-data names c.img, which is not one of the targets written",
    );
    // Each name exactly: a space after the comma is not part of the list's syntax.
    check(
        &["--destroy-data", "a.img, b.img"],
        "--destroy-data a.img, b.img does not name b.img",
    );
    // Nothing was written by a refused run.
    for f in [a, b] {
        assert!(std::fs::read(f).unwrap().iter().all(|&x| x == 7), "{f}");
    }
    let out = run(&["--destroy-data", "b.img,a.img"]);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}{stderr}");
    for f in [a, b] {
        assert!(
            std::fs::read(f).unwrap()[..4096].iter().any(|&x| x != 7),
            "{f}"
        );
    }
}

#[test]
fn rows_verdict_and_json_on_files_the_run_creates() {
    let dir = scratch();
    // Relative names, so the table shows them whole.
    let (a, b) = ("a.img", "b.img");
    let disktriage = |args: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_disktriage"))
            .env(common::HISTORY_ENV, common::history_dir())
            .current_dir(dir.path())
            .args(args)
            .output()
            .unwrap()
    };
    let common = [
        "--test", "seq-read", "--size", "4M", "--bs", "64k", "--count", "4000",
    ];
    let mut args = vec!["run", a, b];
    args.extend_from_slice(&common);
    let out = disktriage(&args);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}{stderr}");
    assert!(
        stdout.starts_with("seq-read on 2 targets in parallel, 1 repeat each\n"),
        "{stdout}"
    );
    let header = stdout.lines().nth(1).unwrap();
    assert!(
        header.starts_with("TARGET") && header.contains("MB/s") && header.contains("vs others"),
        "{stdout}"
    );
    for f in [a, b] {
        let row = stdout.lines().find(|l| l.starts_with(f)).unwrap();
        // A figure in the MB/s column, and the comparison with the other.
        assert!(
            row.split_whitespace()
                .nth(1)
                .unwrap()
                .parse::<f64>()
                .is_ok(),
            "{row}"
        );
        assert!(row.contains(" %"), "{row}");
    }
    assert!(stdout.contains("\nVerdict: "), "{stdout}");
    for line in stdout.lines() {
        assert!(line.chars().count() <= 80, "{line}");
    }

    let mut args = vec!["run", a, b, "--one-by-one", "--repeats", "2", "--json"];
    args.extend_from_slice(&common);
    let out = disktriage(&args);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}{stderr}");
    let doc: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(doc["mode"], "one-by-one");
    assert_eq!(doc["repeats"], 2);
    let targets = doc["targets"].as_array().unwrap();
    assert_eq!(targets.len(), 2);
    for (t, path) in targets.iter().zip([a, b]) {
        assert_eq!(t["target"], path);
        let reports = t["reports"].as_array().unwrap();
        assert_eq!(reports.len(), 2, "one full report per repeat");
        for r in reports {
            assert_eq!(r["test"], "seq-read");
            assert_eq!(r["outcome"]["phases"][0]["read"]["ops"], 4000);
            assert!(r["fio_commands"].is_array());
        }
        // The row's figure is the mean of its repeats' own.
        let mbps: Vec<f64> = reports
            .iter()
            .map(|r| {
                r["outcome"]["phases"][0]["read"]["bytes_per_sec"]
                    .as_f64()
                    .unwrap()
                    / 1e6
            })
            .collect();
        let mean = t["row"]["mbps"]["mean"].as_f64().unwrap();
        assert!((mean - (mbps[0] + mbps[1]) / 2.0).abs() < 1e-6, "{t}");
        assert!(t["row"]["mbps"]["spread_pct"].is_f64(), "{t}");
    }
    // With repeats the line is the noise, and the sentence says which.
    let standings = doc["verdict"]["standings"].as_array().unwrap();
    assert_eq!(standings.len(), 2);
    assert!(standings.iter().all(|s| s["threshold_is_noise"] == true));
    assert!(
        doc["verdict"]["sentence"]
            .as_str()
            .unwrap()
            .contains("noise")
    );
}

#[test]
fn a_target_that_cannot_start_is_named_and_the_others_report() {
    let dir = scratch();
    // Relative names, so the table shows them whole.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_disktriage"))
        .env(common::HISTORY_ENV, common::history_dir())
        .current_dir(dir.path())
        .args([
            "run",
            "good.img",
            "missing-dir/bad.img",
            "--test",
            "seq-read",
            "--size",
            "1M",
            "--bs",
            "64k",
            // Enough I/Os to last well over the 10 ms a rate needs, however fast the disk.
            "--count",
            "4000",
        ])
        .output()
        .unwrap();
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(1), "{stdout}{stderr}");
    let row = |name: &str| {
        stdout
            .lines()
            .find(|l| l.starts_with(name))
            .unwrap_or_else(|| panic!("no row {name}:\n{stdout}"))
    };
    assert!(!row("good.img").contains("FAILED"), "{stdout}");
    assert!(row("missing-dir/bad.img").ends_with("FAILED"), "{stdout}");
    let flat = stdout.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        flat.contains("missing-dir/bad.img FAILED: cannot create the test file"),
        "{stdout}"
    );
    assert!(
        flat.contains("Verdict: no verdict: a verdict needs two targets with figures, 1 had them"),
        "{stdout}"
    );
}
