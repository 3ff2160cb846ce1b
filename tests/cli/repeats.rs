//! `disktriage run TARGET --repeats N`: one target, the test run N times, each repeat's
//! report and the figures over them (mean and spread, the run-to-run noise a scripted A/B
//! weighs a difference against), and one history entry for the whole run. No root: the target
//! is a file in a scratch directory.

#![allow(clippy::unwrap_used)] // tests may unwrap: a panic is the failure report

use crate::common;

use std::process::Output;

use common::scratch;

fn text(out: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

const JOB: [&str; 8] = [
    "--test", "seq-read", "--size", "4M", "--bs", "64k", "--count", "2000",
];

#[test]
fn one_target_runs_its_repeats_and_reports_mean_and_spread() {
    let dir = scratch();
    let history = dir.path().join("history");
    let h = history.to_str().unwrap();
    let disktriage = |args: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_disktriage"))
            .current_dir(dir.path())
            .arg("--history-dir")
            .arg(h)
            .args(args)
            .output()
            .unwrap()
    };

    // JSON: every repeat's full report, and the figures over them.
    let mut args = vec!["run", "a.img", "--repeats", "3", "--json"];
    args.extend_from_slice(&JOB);
    let out = disktriage(&args);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}{stderr}");
    let doc: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(doc["repeats"], 3, "{doc}");
    let reports = doc["reports"].as_array().unwrap();
    assert_eq!(reports.len(), 3, "one full report per repeat");
    let mut each = Vec::new();
    for r in reports {
        assert_eq!(r["test"], "seq-read");
        assert_eq!(r["outcome"]["phases"][0]["read"]["ops"], 2000);
        assert!(r["fio_commands"].is_array());
        each.push(
            r["outcome"]["phases"][0]["read"]["bytes_per_sec"]
                .as_f64()
                .unwrap()
                / 1e6,
        );
    }
    let fig = &doc["figures"][0];
    let mean = fig["mbps"]["mean"].as_f64().unwrap();
    assert!(
        (mean - each.iter().sum::<f64>() / 3.0).abs() < 1e-6,
        "the figure is the mean of the repeats: {fig}"
    );
    assert!(fig["mbps"]["spread_pct"].is_f64(), "{fig}");

    // Text: the mean and spread over the repeats, then each repeat's report.
    let mut args = vec!["run", "a.img", "--repeats", "2"];
    args.extend_from_slice(&JOB);
    let out = disktriage(&args);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}{stderr}");
    assert!(stdout.starts_with("mean of 2 repeats"), "{stdout}");
    assert!(stdout.contains("spread"), "{stdout}");
    assert!(stdout.contains("--- repeat 1 of 2 ---"), "{stdout}");
    assert!(stdout.contains("--- repeat 2 of 2 ---"), "{stdout}");
    // The summary over the repeats fits 80 columns (each repeat's report is `run`'s own).
    for line in stdout.lines().take_while(|l| !l.is_empty()) {
        assert!(line.chars().count() <= 80, "{line}");
    }

    // The history holds each repeated run as one entry with its repeats.
    let out = disktriage(&["history", "--json"]);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}{stderr}");
    let doc: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let entries = doc
        .as_array()
        .or_else(|| doc["runs"].as_array())
        .unwrap_or_else(|| panic!("{doc}"));
    let mut repeats: Vec<u64> = entries
        .iter()
        .map(|e| e["repeats"].as_u64().unwrap())
        .collect();
    repeats.sort_unstable();
    assert_eq!(repeats, [2, 3], "{doc}");
}
