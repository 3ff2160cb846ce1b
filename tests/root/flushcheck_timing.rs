//! `disktriage flushcheck DEV` (the timing check) on real loop devices (root): the write
//! tests' guard refuses it before anything is written (no `--destroy-data`, another name, a
//! mounted device, a disk whose partition is mounted, a read-only device, an absurd `--rpm`);
//! a loop device over a file runs end to end with `--json` (the contract's fields, the
//! verdict and its exit status, the cache-switch refusal for loop, the history entry); a loop
//! on tmpfs with `--rpm 7200` commits far below half a revolution: volatile-cache, exit 3; a
//! symlink to the device is the same device, and a second check of it under that other name
//! while the first runs is refused (EBUSY); a partition gets its own size of dirty data and
//! leaves the whole disk's cache alone; a device smaller than 64 MiB gets less dirty data,
//! said; SIGINT ends the run with 130 and no verdict; a write that fails mid-run (ENOSPC
//! under a loop on a small tmpfs) is named with its offset and errno, exit 1.

#![allow(clippy::unwrap_used)] // tests may unwrap: a panic is the failure report

use crate::common;

use std::fs;
use std::hash::{Hash, Hasher};
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use common::{HISTORY_ENV, LoopDev, Mounted, history_dir, root_or_skip, sparse_image};

fn shm_scratch() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("disktriage-flush.")
        .tempdir_in("/dev/shm")
        .expect("scratch dir in /dev/shm")
}

fn disktriage(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_disktriage"))
        .env(HISTORY_ENV, history_dir())
        .args(args)
        .output()
        .expect("run disktriage")
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Sectors written so far (field 7 of the stat file).
fn sectors_written(name: &str) -> u64 {
    let text = fs::read_to_string(format!("/sys/class/block/{name}/stat")).unwrap();
    text.split_whitespace().nth(6).unwrap().parse().unwrap()
}

fn checksum(path: &Path) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    fs::read(path).unwrap().hash(&mut h);
    h.finish()
}

/// Puts recognisable bytes in the image, so "unchanged" means something.
fn fill(image: &Path) {
    use std::os::unix::fs::FileExt;
    let f = fs::File::options().write(true).open(image).unwrap();
    for off in [0u64, 4096, 1 << 20, 16 << 20] {
        f.write_all_at(b"data that must stay", off).unwrap();
    }
    f.sync_all().unwrap();
}

/// Runs `flushcheck extra...` on `dev` and checks that it is refused (exit 1) with `words`
/// in the refusal, with nothing written to the device (its counter and its image).
fn assert_refused(dev: &LoopDev, extra: &[&str], words: &str) {
    assert_refused_with(dev, extra, words, 1);
}

/// [`assert_refused`] for a usage error: exit 2, as clap's own.
fn assert_usage_error(dev: &LoopDev, extra: &[&str], words: &str) {
    assert_refused_with(dev, extra, words, 2);
}

fn assert_refused_with(dev: &LoopDev, extra: &[&str], words: &str, code: i32) {
    let sum = checksum(&dev.image);
    let before = sectors_written(&dev.name);
    let mut args = vec!["flushcheck", dev.path_str()];
    args.extend_from_slice(extra);
    let out = disktriage(&args);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(code), "{args:?}: {err}");
    assert!(
        err.contains(words),
        "{args:?}: expected {words:?} in: {err}"
    );
    assert!(out.stdout.is_empty(), "a refused check printed a report");
    assert_eq!(
        sectors_written(&dev.name),
        before,
        "the refused check wrote to the device"
    );
    assert_eq!(checksum(&dev.image), sum, "the image changed");
}

#[test]
fn flushcheck_without_destroy_data_or_with_another_name_is_refused() {
    if !root_or_skip("flushcheck_without_destroy_data_or_with_another_name_is_refused") {
        return;
    }
    let dir = shm_scratch();
    let dev = LoopDev::new(dir.path(), 32 << 20, 512);
    let other = LoopDev::new(dir.path(), 16 << 20, 512);
    fill(&dev.image);
    assert_usage_error(
        &dev,
        &[],
        &format!("pass --destroy-data {} to confirm", dev.name),
    );
    // The name with a space after it is not the name.
    let spaced = format!("{} ", dev.name);
    for wrong in [other.name.as_str(), "/dev/sda", "loop", "", spaced.as_str()] {
        assert_refused(
            &dev,
            &["--destroy-data", wrong],
            &format!("does not name the target {}", dev.name),
        );
    }
}

#[test]
fn flushcheck_of_a_mounted_device_is_refused() {
    if !root_or_skip("flushcheck_of_a_mounted_device_is_refused") {
        return;
    }
    let dir = shm_scratch();
    let image = sparse_image(dir.path(), "fs.img", 64 << 20);
    let dev = LoopDev::attach(&image, &[]);
    let _mount = Mounted::ext4(dev.path_str(), &dir.path().join("mnt"));
    assert_refused(
        &dev,
        &["--destroy-data", &dev.name],
        &format!("refusing to write to {}: mounted at", dev.name),
    );
}

#[test]
fn flushcheck_of_a_disk_whose_partition_is_mounted_is_refused() {
    let test = "flushcheck_of_a_disk_whose_partition_is_mounted_is_refused";
    if !root_or_skip(test) {
        return;
    }
    let dir = shm_scratch();
    let image = sparse_image(dir.path(), "parted.img", 64 << 20);
    let mut sfdisk = Command::new("sfdisk")
        .args(["--quiet", image.to_str().unwrap()])
        .stdin(Stdio::piped())
        .spawn()
        .expect("sfdisk");
    {
        use std::io::Write;
        sfdisk
            .stdin
            .take()
            .unwrap()
            .write_all(b"label: dos\n,,L\n")
            .unwrap();
    }
    assert!(sfdisk.wait().unwrap().success(), "sfdisk failed");
    let dev = LoopDev::attach(&image, &["-P"]);
    let parts = dev.expose_partitions();
    let Some(part) = parts.first() else {
        common::skip(test, "the kernel shows no partition of the image");
        return;
    };
    let _mount = Mounted::ext4(&format!("/dev/{part}"), &dir.path().join("mnt"));
    assert_refused(
        &dev,
        &["--destroy-data", &dev.name],
        &format!("refusing to write to {}:", dev.name),
    );
}

#[test]
fn flushcheck_of_a_read_only_device_is_refused() {
    if !root_or_skip("flushcheck_of_a_read_only_device_is_refused") {
        return;
    }
    let dir = shm_scratch();
    let image = sparse_image(dir.path(), "ro.img", 32 << 20);
    fill(&image);
    let dev = LoopDev::attach(&image, &["-r"]);
    assert_refused(&dev, &["--destroy-data", &dev.name], "read-only");
}

#[test]
fn flushcheck_with_an_absurd_rpm_is_refused_before_anything() {
    if !root_or_skip("flushcheck_with_an_absurd_rpm_is_refused_before_anything") {
        return;
    }
    let dir = shm_scratch();
    let dev = LoopDev::new(dir.path(), 32 << 20, 512);
    fill(&dev.image);
    for rpm in ["1", "1024", "30001", "4294967295"] {
        assert_usage_error(
            &dev,
            &["--destroy-data", &dev.name, "--rpm", rpm],
            "--rpm takes 0 (the disk does not rotate) or a rate from 1025 to 30000",
        );
    }
    // Not a number at all: a usage error.
    let out = disktriage(&[
        "flushcheck",
        dev.path_str(),
        "--destroy-data",
        &dev.name,
        "--rpm",
        "-5",
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
}

/// Runs the timing check with `--json`; the document and the exit status.
fn run_json(path: &str, name: &str, extra: &[&str], history: &Path) -> (serde_json::Value, i32) {
    let mut args = vec!["flushcheck", path, "--destroy-data", name, "--json"];
    args.extend_from_slice(extra);
    let out = Command::new(env!("CARGO_BIN_EXE_disktriage"))
        .env(HISTORY_ENV, history)
        .args(&args)
        .output()
        .expect("run disktriage");
    let code = out.status.code().unwrap_or(-1);
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{args:?}: not JSON ({e}): {}", stderr(&out)));
    (doc, code)
}

#[test]
fn flushcheck_of_a_loop_over_a_file_runs_end_to_end() {
    if !root_or_skip("flushcheck_of_a_loop_over_a_file_runs_end_to_end") {
        return;
    }
    // On /tmp (the root file system): the loop device's flush is the image's fsync.
    let dir = common::scratch();
    let dev = LoopDev::new(dir.path(), 128 << 20, 512);
    let history = dir.path().join("history");
    let before = sectors_written(&dev.name);
    let (doc, code) = run_json(dev.path_str(), &dev.name, &[], &history);
    for key in [
        "device",
        "model",
        "serial",
        "commit_ms",
        "write_flush_ms",
        "cache_off_commit_ms",
        "floor_ms",
        "rpm",
        "rpm_source",
        "flush_after_dirty_ms",
        "dirty_bytes",
        "kernel_write_cache",
        "verdict",
        "sentence",
        "next_step",
    ] {
        assert!(doc.get(key).is_some(), "{key} missing: {doc}");
    }
    assert_eq!(doc["device"], dev.path_str());
    assert_eq!(doc["name"], dev.name.as_str());
    assert!(doc["commit_ms"].as_f64().unwrap() > 0.0, "{doc}");
    assert!(doc["write_flush_ms"].as_f64().unwrap() > 0.0, "{doc}");
    assert!(
        doc["flush_after_dirty_ms"].as_f64().unwrap() >= 0.0,
        "{doc}"
    );
    assert_eq!(doc["dirty_bytes"], 64 << 20);
    assert_eq!(doc["commit"]["count"], 200);
    assert_eq!(doc["kernel_write_cache"], "write back");
    // A loop device rotates at no known rate: no floor, the flush after dirty data judges.
    assert!(doc["floor_ms"].is_null(), "{doc}");
    assert!(
        doc["rpm_source"].as_str().unwrap().contains(&dev.name),
        "{doc}"
    );
    // A loop device's cache cannot be switched: said, and the check carries on.
    assert!(doc["cache_off_commit_ms"].is_null());
    assert_eq!(
        doc["cache_off_note"],
        "drive write cache control not supported on loop"
    );
    // A loop device has no drive of its own: the check says where its flushes go (the file
    // system of its image, and that one's disk) and judges nothing, nor offers a power cut.
    let sentence = doc["sentence"].as_str().unwrap();
    assert_eq!(doc["verdict"], "unknown", "{doc}");
    assert_eq!(code, 5);
    assert!(
        sentence.contains(&format!(
            "{} is a loop device over {} on ",
            dev.name,
            dev.image.display()
        )) && sentence.contains("it has no drive of its own"),
        "{sentence}"
    );
    assert!(
        doc["rotational"].is_null(),
        "no rotation read from a loop device: {doc}"
    );
    let next = doc["next_step"].as_str().unwrap();
    assert!(!next.contains("--record"), "{next}");
    // It wrote: 400 commits and 64 MiB (131072 sectors).
    assert!(sectors_written(&dev.name) - before >= 131_072);
    // The history holds the check, under the flush check's test name, with its verdict.
    let text: String = fs::read_dir(&history)
        .unwrap()
        .filter_map(Result::ok)
        .map(|e| fs::read_to_string(e.path()).unwrap_or_default())
        .collect();
    let entry: serde_json::Value = text
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .find(|e| e["test"] == "flushcheck")
        .unwrap_or_else(|| panic!("no flushcheck entry in the history: {text}"));
    assert_eq!(entry["flush"]["verdict"], doc["verdict"]);
    assert_eq!(entry["flush"]["commit_ms"], doc["commit_ms"]);
}

#[test]
fn flushcheck_on_tmpfs_with_7200_rpm_is_a_volatile_cache() {
    if !root_or_skip("flushcheck_on_tmpfs_with_7200_rpm_is_a_volatile_cache") {
        return;
    }
    let dir = shm_scratch();
    let dev = LoopDev::new(dir.path(), 96 << 20, 512);
    let history = dir.path().join("history");
    let (doc, code) = run_json(dev.path_str(), &dev.name, &["--rpm", "7200"], &history);
    let commit = doc["commit_ms"].as_f64().unwrap();
    eprintln!("loop on tmpfs: commit {commit} ms, {doc}");
    assert!(commit < 60_000.0 / 7200.0 / 2.0, "{doc}");
    assert_eq!(doc["verdict"], "volatile-cache", "{doc}");
    assert_eq!(code, 3);
    assert_eq!(doc["rpm"], 7200);
    assert_eq!(doc["rpm_source"], "--rpm");
    assert!(
        (doc["floor_ms"].as_f64().unwrap() - 8.333).abs() < 0.01,
        "{doc}"
    );
    let sentence = doc["sentence"].as_str().unwrap();
    assert!(
        sentence.contains("on a 7,200 rpm disk: a volatile cache acknowledges them"),
        "{sentence}"
    );

    // The text says the same for 80 columns, with the reason the cache was not switched.
    let out = disktriage(&[
        "flushcheck",
        dev.path_str(),
        "--destroy-data",
        &dev.name,
        "--rpm",
        "7200",
    ]);
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    let text = String::from_utf8_lossy(&out.stdout);
    for line in text.lines() {
        assert!(line.chars().count() <= 80, "too wide: {line:?}");
    }
    for words in [
        "not measured: drive write cache control not",
        "7,200 rpm (from --rpm)",
        "8.33 ms (one revolution)",
        "Verdict: volatile-cache: commits in",
    ] {
        assert!(text.contains(words), "{words:?} not in:\n{text}");
    }
}

#[test]
fn flushcheck_through_a_symlink_checks_the_device_it_names() {
    if !root_or_skip("flushcheck_through_a_symlink_checks_the_device_it_names") {
        return;
    }
    let dir = shm_scratch();
    let dev = LoopDev::new(dir.path(), 8 << 20, 512);
    let link = dir.path().join("disk");
    std::os::unix::fs::symlink(&dev.path, &link).unwrap();
    let link = link.to_str().unwrap();
    // The link's own name is not the device's: refused.
    let out = disktriage(&["flushcheck", link, "--destroy-data", "disk"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains(&format!("does not name the target {}", dev.name)),
        "{}",
        stderr(&out)
    );
    let history = dir.path().join("history");
    let (doc, code) = run_json(link, &dev.name, &["--rpm", "0"], &history);
    assert!(code == 0 || code == 5, "{doc}");
    assert_eq!(doc["name"], dev.name.as_str());
    // An 8 MiB device gets 8 MiB of dirty data, and the text says so.
    assert_eq!(doc["dirty_bytes"], 8 << 20);
    assert_eq!(doc["rpm"], 0);
    assert!(doc["floor_ms"].is_null());
    let out = disktriage(&["flushcheck", link, "--destroy-data", &dev.name]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("(the device is smaller than 64 MiB: 8 MiB written)"),
        "{text}"
    );
}

#[test]
fn flushcheck_stops_on_sigint_without_a_verdict() {
    if !root_or_skip("flushcheck_stops_on_sigint_without_a_verdict") {
        return;
    }
    // On the root file system each commit is an fsync of the image: the run lasts long
    // enough to be interrupted in its first phases.
    let dir = common::scratch();
    let dev = LoopDev::new(dir.path(), 128 << 20, 512);
    let child = Command::new(env!("CARGO_BIN_EXE_disktriage"))
        .env(HISTORY_ENV, dir.path().join("history"))
        .args([
            "flushcheck",
            dev.path_str(),
            "--destroy-data",
            &dev.name,
            "--json",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(300));
    let pid = nix::unistd::Pid::from_raw(i32::try_from(child.id()).unwrap());
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGINT).unwrap();
    let out = child.wait_with_output().unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", stderr(&out)));
    // 400 commits at about 4 ms each (an fsync of the image each) and 64 MiB: seconds, so
    // the signal comes mid-run; a run that finishes anyway did not stop on it.
    assert!(
        !doc["ended"].is_null(),
        "the run did not stop on SIGINT: {doc}"
    );
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    assert_eq!(doc["ended"], "stopped by SIGINT");
    assert!(doc["verdict"].is_null(), "{doc}");
    // No verdict, no history entry.
    assert!(
        fs::read_dir(dir.path().join("history"))
            .map(|rd| rd.count() == 0)
            .unwrap_or(true)
    );
}

/// A small tmpfs mounted for one test; unmounted on drop.
struct SmallTmpfs {
    dir: tempfile::TempDir,
}

impl SmallTmpfs {
    fn new(size: &str) -> SmallTmpfs {
        let dir = common::scratch();
        common::sh(
            "mount",
            &[
                "-t",
                "tmpfs",
                "-o",
                &format!("size={size}"),
                "tmpfs",
                dir.path().to_str().unwrap(),
            ],
        );
        SmallTmpfs { dir }
    }
}

impl Drop for SmallTmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(self.dir.path()).status();
    }
}

#[test]
fn flushcheck_names_the_write_that_failed_and_what_completed() {
    if !root_or_skip("flushcheck_names_the_write_that_failed_and_what_completed") {
        return;
    }
    // A 128 MiB image on a 6 MiB tmpfs: the commits (in the first MiB) fit, the 64 MiB of
    // dirty data runs out of space at 6 MiB and the loop device fails the write.
    let fs = SmallTmpfs::new("6m");
    let dev = LoopDev::new(fs.dir.path(), 128 << 20, 512);
    let history = fs.dir.path().join("history");
    let (doc, code) = run_json(dev.path_str(), &dev.name, &[], &history);
    assert_eq!(code, 1, "{doc}");
    let ended = doc["ended"].as_str().unwrap();
    assert!(
        ended.starts_with("the write of 1048576 bytes at offset ")
            && ended.contains("failed: No space left on device (ENOSPC)"),
        "{ended}"
    );
    assert!(doc["verdict"].is_null(), "{doc}");
    // What completed is reported: the commits and the write + flush.
    assert_eq!(doc["commit"]["count"], 200);
    assert_eq!(doc["write_flush"]["count"], 200);
    assert!(doc["flush_after_dirty_ms"].is_null());
    assert_eq!(
        doc["cache_off_note"],
        "drive write cache control not supported on loop"
    );
    // No verdict, no history entry.
    assert!(!history.exists() || fs::read_dir(&history).unwrap().count() == 0);
}

#[test]
fn a_second_flushcheck_of_the_same_device_under_another_name_is_refused() {
    if !root_or_skip("a_second_flushcheck_of_the_same_device_under_another_name_is_refused") {
        return;
    }
    // On the root file system, so the first run lasts seconds.
    let dir = common::scratch();
    let dev = LoopDev::new(dir.path(), 128 << 20, 512);
    let link = dir.path().join("same-disk");
    std::os::unix::fs::symlink(&dev.path, &link).unwrap();
    let mut first = Command::new(env!("CARGO_BIN_EXE_disktriage"))
        .env(HISTORY_ENV, dir.path().join("history"))
        .args(["flushcheck", dev.path_str(), "--destroy-data", &dev.name])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(300));
    let out = disktriage(&[
        "flushcheck",
        link.to_str().unwrap(),
        "--destroy-data",
        &dev.name,
    ]);
    let still_running = first.try_wait().unwrap().is_none();
    let _ = first.wait();
    assert!(
        still_running,
        "the first check ended before the second started"
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("Device or resource busy"),
        "{}",
        stderr(&out)
    );
    assert!(out.stdout.is_empty());
}

#[test]
fn flushcheck_of_a_partition_leaves_the_disks_cache_alone() {
    let test = "flushcheck_of_a_partition_leaves_the_disks_cache_alone";
    if !root_or_skip(test) {
        return;
    }
    let dir = shm_scratch();
    let image = sparse_image(dir.path(), "parted.img", 96 << 20);
    let mut sfdisk = Command::new("sfdisk")
        .args(["--quiet", image.to_str().unwrap()])
        .stdin(Stdio::piped())
        .spawn()
        .expect("sfdisk");
    {
        use std::io::Write;
        sfdisk
            .stdin
            .take()
            .unwrap()
            .write_all(b"label: dos\n,40M,L\n,,L\n")
            .unwrap();
    }
    assert!(sfdisk.wait().unwrap().success(), "sfdisk failed");
    let dev = LoopDev::attach(&image, &["-P"]);
    let parts = dev.expose_partitions();
    let Some(part) = parts.first() else {
        common::skip(test, "the kernel shows no partition of the image");
        return;
    };
    let path = format!("/dev/{part}");
    let (doc, code) = run_json(&path, part, &[], &dir.path().join("history"));
    assert!(code == 0 || code == 5, "{doc}");
    assert_eq!(doc["name"], part.as_str());
    assert_eq!(
        doc["cache_off_note"],
        format!(
            "{part} is a partition: the write cache is the whole disk {}'s, which a \
             partition's check does not switch",
            dev.name
        )
    );
    // 40 MiB partition: 40 MiB of dirty data.
    assert_eq!(doc["dirty_bytes"], 40 << 20);
    assert!(
        doc["rpm_source"]
            .as_str()
            .unwrap()
            .contains(&format!("of {} under {part}", dev.name)),
        "{doc}"
    );
}
