//! What the headless commands say when the output or the names are odd: a report that cannot
//! be written (stdout on a full device), control characters in file names and journal values,
//! and a file name that is not UTF-8. No devices: the targets are files in a scratch
//! directory, the journal is a scratch directory.

#![allow(clippy::unwrap_used)] // tests may unwrap: a panic is the failure report

use crate::common;
use common::{HISTORY_ENV, history_dir};

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use common::scratch;
use disktriage::changes::Journal;
use disktriage::model::{DeviceId, Lifetime, Setting};

fn disktriage(args: &[&OsStr]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_disktriage"))
        .env(HISTORY_ENV, history_dir())
        .args(args)
        .output()
        .unwrap()
}

/// disktriage with its stdout on /dev/full, where every write fails with ENOSPC.
fn to_dev_full(args: &[&OsStr]) -> Output {
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .unwrap();
    Command::new(env!("CARGO_BIN_EXE_disktriage"))
        .env(HISTORY_ENV, history_dir())
        .args(args)
        .stdout(Stdio::from(full))
        .output()
        .unwrap()
}

fn os(s: &str) -> &OsStr {
    OsStr::new(s)
}

/// A quick read test of a 1 MiB file the run creates.
fn read_args(target: &Path) -> Vec<&OsStr> {
    vec![
        os("run"),
        target.as_os_str(),
        os("--test"),
        os("seq-read"),
        os("--size"),
        os("1M"),
        os("--count"),
        os("4"),
        os("--bs"),
        os("64k"),
    ]
}

#[test]
fn a_report_that_cannot_be_written_says_so() {
    let expected = "cannot write the report to standard output: No space left on device";
    let out = to_dev_full(&[os("list")]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(err.contains(expected), "{err}");

    let dir = scratch();
    let target = dir.path().join("t.img");
    let mut args = read_args(&target);
    args.push(os("--json"));
    let out = to_dev_full(&args);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(err.contains(expected), "{err}");
}

#[test]
fn control_characters_in_paths_are_escaped() {
    let dir = scratch();
    let target = dir.path().join("a\x1b[31mb\nc.img");
    let out = disktriage(&read_args(&target));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("a?[31mb?c.img"), "{text}");
    assert!(!text.contains('\x1b'), "{text:?}");
    assert!(!text.contains("b\nc"), "{text:?}");

    // In an error message too.
    let bad = dir.path().join("no-such-dir").join("x\x1b[31m\ny.img");
    let out = disktriage(&read_args(&bad));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(err.contains("x?[31m?y.img"), "{err:?}");
    assert!(!err.contains('\x1b'), "{err:?}");
}

#[test]
fn control_characters_in_journal_values_are_escaped() {
    let dir = scratch();
    let journal = dir.path().join("journal");
    Journal::open(&journal)
        .unwrap()
        .record(
            &DeviceId {
                name: "sdz\x1b[31m".into(),
                dev: None,
                serial: None,
                identity: Default::default(),
            },
            Setting::Scheduler {
                name: "bfq\x1b[2J\nrm".into(),
            },
            Lifetime::Persisted,
        )
        .unwrap();
    let jd = journal.as_os_str();
    for args in [
        vec![os("restore"), os("--list"), os("--journal-dir"), jd],
        vec![os("restore"), os("--journal-dir"), jd],
    ] {
        let out = disktriage(&args);
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(text.contains("sdz?[31m"), "{args:?}: {text:?}");
        assert!(!text.contains('\x1b'), "{args:?}: {text:?}");
        assert!(!text.contains("2J\nrm"), "{args:?}: {text:?}");
    }
}

#[test]
fn json_works_for_a_path_that_is_not_utf8() {
    let dir = scratch();
    let target = dir.path().join(OsStr::from_bytes(b"caf\xe9.img"));
    let mut args = read_args(&target);
    args.push(os("--json"));
    let out = disktriage(&args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let path = doc["target"]["path"].as_str().unwrap();
    assert!(path.ends_with("caf\u{FFFD}.img"), "{path}");
    assert_eq!(doc["outcome"]["phases"][0]["read"]["ops"], 4);
}
