//! Tests on a mounted file system, on real file systems this test creates (root only): a tmpfs
//! and ext4 on a loop device.
//! - The metadata test (`run DIR --test metadata`): every file is counted, the scratch
//!   directory is gone afterwards, also after SIGINT and SIGTERM, and targets that are not
//!   writable directories are refused with the reason.
//! - The TUI's file target: a run on a new file in the file system, through the same session
//!   the TUI's executor uses, removes the file afterwards and touches nothing else.

#![allow(clippy::unwrap_used)] // tests may unwrap: a panic is the failure report

use crate::common;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{LoopDev, Mounted, disktriage, root_or_skip, scratch, sh};
use serde_json::Value;

/// A tmpfs mounted on `dir`; unmounted on drop.
struct Tmpfs(std::path::PathBuf);

impl Tmpfs {
    fn mount(dir: &Path, opts: &str) -> Tmpfs {
        std::fs::create_dir_all(dir).unwrap();
        sh(
            "mount",
            &["-t", "tmpfs", "-o", opts, "tmpfs", dir.to_str().unwrap()],
        );
        Tmpfs(dir.to_path_buf())
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

fn entries(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect()
}

/// Runs the metadata test with `--json` and checks what every run must show.
fn run_and_check(dir: &Path, files: u64) -> Value {
    let before = entries(dir);
    let out = disktriage(&[
        "run",
        dir.to_str().unwrap(),
        "--test",
        "metadata",
        "--files",
        &files.to_string(),
        "--json",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["target"]["kind"], "directory");
    let phases = doc["outcome"]["phases"].as_array().unwrap();
    let labels: Vec<&str> = phases
        .iter()
        .map(|p| p["label"].as_str().unwrap())
        .collect();
    assert_eq!(
        labels,
        [
            "create sequential",
            "stat sequential",
            "delete sequential",
            "create random",
            "stat random",
            "delete random"
        ]
    );
    for p in phases {
        let ops = p["read"]["ops"].as_u64().unwrap() + p["write"]["ops"].as_u64().unwrap();
        assert_eq!(ops, files, "{}", p["label"]);
        let secs = p["seconds"].as_f64().unwrap();
        let rate = p["read"]["iops"].as_f64().unwrap() + p["write"]["iops"].as_f64().unwrap();
        assert!(
            (rate - files as f64 / secs).abs() < 1e-6 * rate.max(1.0),
            "files/s is files over seconds: {rate} vs {files}/{secs}"
        );
        let lat = if p["read"]["ops"].as_u64().unwrap() > 0 {
            &p["read"]["latency"]
        } else {
            &p["write"]["latency"]
        };
        assert_eq!(lat["count"].as_u64().unwrap(), files);
        assert!(lat["p50_ns"].as_u64().unwrap() <= lat["p99_ns"].as_u64().unwrap());
    }
    assert_eq!(doc["fio_commands"].as_array().unwrap().len(), 6);
    assert_eq!(entries(dir), before, "the scratch directory is gone");
    doc
}

#[test]
fn root_metadata_on_tmpfs_counts_every_file_and_leaves_nothing() {
    if !root_or_skip("root_metadata_on_tmpfs_counts_every_file_and_leaves_nothing") {
        return;
    }
    let tmp = scratch();
    let mnt = Tmpfs::mount(&tmp.path().join("mnt"), "size=64m");
    std::fs::write(mnt.0.join("keep.txt"), b"the admin's file").unwrap();
    let doc = run_and_check(&mnt.0, 3000);
    assert!(
        doc["target"]["device"].is_null(),
        "tmpfs has no block device"
    );
    assert_eq!(
        std::fs::read(mnt.0.join("keep.txt")).unwrap(),
        b"the admin's file"
    );
}

#[test]
fn root_metadata_on_ext4_on_a_loop_device() {
    if !root_or_skip("root_metadata_on_ext4_on_a_loop_device") {
        return;
    }
    let tmp = scratch();
    let dev = LoopDev::new(tmp.path(), 128 << 20, 512);
    let mnt = Mounted::ext4(dev.path_str(), &tmp.path().join("mnt"));
    let doc = run_and_check(&mnt.dir, 5000);
    assert_eq!(doc["target"]["device"], dev.name.as_str());
    // The text report: one row per phase with files/s.
    let out = disktriage(&[
        "run",
        mnt.dir.to_str().unwrap(),
        "--test",
        "metadata",
        "--files",
        "500",
    ]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("files/s"), "{text}");
    assert!(text.contains("create random"), "{text}");
    assert!(text.contains(&format!("on {}", dev.name)), "{text}");
    assert_eq!(entries(&mnt.dir), ["lost+found"]);
}

#[test]
fn root_metadata_stopped_by_a_signal_removes_its_files() {
    if !root_or_skip("root_metadata_stopped_by_a_signal_removes_its_files") {
        return;
    }
    use nix::sys::signal::Signal;
    let tmp = scratch();
    let mnt = Tmpfs::mount(&tmp.path().join("mnt"), "size=256m");
    for (sig, code) in [(Signal::SIGINT, 130), (Signal::SIGTERM, 143)] {
        let child = Command::new(env!("CARGO_BIN_EXE_disktriage"))
            .env(common::HISTORY_ENV, common::history_dir())
            .args(["run", mnt.0.to_str().unwrap(), "--test", "metadata"])
            .args(["--files", "1000000", "--json"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // Wait until the scratch directory holds files: the run is in its create phase.
        let t0 = Instant::now();
        loop {
            let busy = entries(&mnt.0).iter().any(|n| {
                n.starts_with(".disktriage-metadata-")
                    && std::fs::read_dir(mnt.0.join(n)).is_ok_and(|mut d| d.next().is_some())
            });
            if busy {
                break;
            }
            assert!(t0.elapsed() < Duration::from_secs(20), "no files appeared");
            std::thread::sleep(Duration::from_millis(20));
        }
        nix::sys::signal::kill(nix::unistd::Pid::from_raw(child.id() as i32), sig).unwrap();
        let out = child.wait_with_output().unwrap();
        assert_eq!(
            out.status.code(),
            Some(code),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(doc["outcome"]["stopped"], true, "{sig}");
        assert!(entries(&mnt.0).is_empty(), "{sig}: {:?}", entries(&mnt.0));
    }
}

#[test]
fn root_metadata_refuses_what_is_not_a_writable_directory() {
    if !root_or_skip("root_metadata_refuses_what_is_not_a_writable_directory") {
        return;
    }
    let tmp = scratch();
    let ro = Tmpfs::mount(&tmp.path().join("ro"), "size=1m,ro");
    let file = tmp.path().join("plain");
    std::fs::write(&file, b"x").unwrap();
    let dev = LoopDev::new(tmp.path(), 8 << 20, 512);
    for (target, says) in [
        (ro.0.to_str().unwrap(), "the file system is read-only"),
        (file.to_str().unwrap(), "is a regular file"),
        (dev.path_str(), "is a block device"),
        ("/nonexistent/dir", "No such file or directory"),
    ] {
        let out = disktriage(&["run", target, "--test", "metadata", "--files", "10"]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{target}");
        assert!(err.contains(says), "{target}: {err}");
    }
    assert!(entries(&ro.0).is_empty());
    assert_eq!(std::fs::read(&file).unwrap(), b"x");
}

#[test]
fn root_a_file_target_run_removes_its_file_and_touches_nothing_else() {
    use disktriage::bench::TestName;
    use disktriage::bench::TestParams;
    use disktriage::bench::{RunRequest, TempPoll, start_session};
    if !root_or_skip("root_a_file_target_run_removes_its_file_and_touches_nothing_else") {
        return;
    }
    let tmp = scratch();
    let dev = LoopDev::new(tmp.path(), 96 << 20, 512);
    let mnt = Mounted::ext4(dev.path_str(), &tmp.path().join("mnt"));
    std::fs::write(mnt.dir.join("keep.txt"), b"the admin's data").unwrap();
    let before = entries(&mnt.dir);
    let file = mnt.dir.join("disktriage-test-1.bin");
    let root = disktriage::sys::SysRoot::host();
    for test in [TestName::SeqWrite, TestName::RandRead] {
        let s = start_session(
            &root,
            &RunRequest {
                target: file.clone(),
                test,
                params: TestParams {
                    size: Some(8 << 20),
                    count: Some(64),
                    ..TestParams::default()
                },
                // A new file: no confirmation, as on the command line.
                confirmation: None,
                temperature: TempPoll::Off,
                device: None,
            },
        )
        .unwrap();
        assert!(s.target.created, "{test}");
        assert!(file.exists());
        let report = s.finish_removing_test_file().unwrap();
        assert!(report.error().is_none(), "{:?}", report.error());
        assert_eq!(report.target.device.as_deref(), Some(dev.name.as_str()));
        assert!(
            report
                .notes
                .iter()
                .any(|n| n.contains("disktriage-test-1.bin was removed")),
            "{:?}",
            report.notes
        );
        assert!(!file.exists(), "{test}: the test file is gone");
        assert_eq!(entries(&mnt.dir), before, "{test}");
    }
    assert_eq!(
        std::fs::read(mnt.dir.join("keep.txt")).unwrap(),
        b"the admin's data"
    );
    // An existing file is not a new one: writing to it still needs its name.
    std::fs::write(&file, vec![7u8; 1 << 20]).unwrap();
    let refused = start_session(
        &root,
        &RunRequest {
            target: file.clone(),
            test: TestName::SeqWrite,
            params: TestParams {
                count: Some(4),
                ..TestParams::default()
            },
            confirmation: None,
            temperature: TempPoll::Off,
            device: None,
        },
    );
    let err = format!("{:#}", refused.err().expect("refused"));
    assert!(err.contains("disktriage-test-1.bin"), "{err}");
    assert_eq!(std::fs::read(&file).unwrap(), vec![7u8; 1 << 20]);
}

#[test]
fn root_a_file_tests_witness_mismatch_is_worded_for_a_file() {
    // (The dm-crypt and md notes are tested on sysfs trees and, on real arrays and mappings, in
    // the QEMU lab (qemu_lab_filesystem_layers): this machine's kernel has neither md nor
    // device-mapper.)
    if !root_or_skip("root_a_file_tests_witness_mismatch_is_worded_for_a_file") {
        return;
    }
    let tmp = scratch();
    let dev = LoopDev::new(tmp.path(), 64 << 20, 512);
    let mnt = Mounted::ext4(dev.path_str(), &tmp.path().join("mnt"));
    let file = mnt.dir.join("t.bin");
    let run = |extra: &[&str]| {
        let mut args = vec!["run", file.to_str().unwrap(), "--size", "8M"];
        args.extend_from_slice(extra);
        let out = disktriage(&args);
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(
            out.status.success(),
            "{text}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        text
    };
    // O_DIRECT reads of the file: the disk under ext4 counted the same bytes.
    let text = run(&["--test", "seq-read", "--count", "8"]);
    assert!(text.contains(&format!("({})", dev.name)), "{text}");
    assert!(text.contains("- agrees"), "{text}");
    assert!(!text.contains("WARNING"), "{text}");
    // Buffered writes reach the disk after the run: the witness differs and says why, in
    // the words for a file.
    std::fs::remove_file(&file).unwrap();
    let text = run(&[
        "--test",
        "seq-write",
        "--buffered",
        "--count",
        "4",
        "--bs",
        "64k",
    ]);
    assert!(
        text.contains("WARNING: this file test's bytes differ from what the kernel counted"),
        "{text}"
    );
    assert!(
        text.contains("the page cache, the file system's own writes"),
        "{text}"
    );
}
