//! `disktriage scan --repair` on real loop devices (root): the write tests' guard refuses it,
//! before the scan reads anything, without `--destroy-data`, with another device's name, on a
//! mounted device, on a device a mounted loop device is stacked on, on a disk whose partition
//! is mounted and on a read-only device; a repair after a scan that found no unreadable sector
//! writes nothing (the device's write counter, the image).
//!
//! Unreadable sectors cannot be made on the host (no dm, no scsi_debug): which sectors are
//! written and what the re-read says are tested with a fake device in `scan::repair`.

#![allow(clippy::unwrap_used)] // tests may unwrap: a panic is the failure report

use crate::common;

use std::fs;
use std::hash::{Hash, Hasher};
use std::path::Path;
use std::process::{Command, Output};

use common::{HISTORY_ENV, LoopDev, Mounted, history_dir, root_or_skip, sparse_image};

fn shm_scratch() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("disktriage-repair.")
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

/// [reads completed, sectors read, writes completed, sectors written].
fn counters(name: &str) -> [u64; 4] {
    let text = fs::read_to_string(format!("/sys/class/block/{name}/stat")).unwrap();
    let f: Vec<u64> = text
        .split_whitespace()
        .map(|w| w.parse().unwrap())
        .collect();
    [f[0], f[2], f[4], f[6]]
}

fn checksum(path: &Path) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    fs::read(path).unwrap().hash(&mut h);
    h.finish()
}

/// The 64 MiB scan would read 131072 sectors: a refusal before the scan reads none of them
/// (udev or a mounted file system may read a few meanwhile).
const FEW_SECTORS: u64 = 2048;

/// Runs `scan DEV --repair extra...` and checks it is refused, with `words` in the refusal,
/// before the scan read the device and without a write to it.
fn assert_refused_before_reading(dev: &LoopDev, extra: &[&str], words: &str) {
    let before = counters(&dev.name);
    let mut args = vec!["scan", dev.path_str(), "--repair"];
    args.extend_from_slice(extra);
    let out = disktriage(&args);
    let err = stderr(&out);
    // No --destroy-data at all is a usage error (2); every other refusal an error (1).
    let expected = if extra.contains(&"--destroy-data") {
        1
    } else {
        2
    };
    assert_eq!(out.status.code(), Some(expected), "{args:?}: {err}");
    assert!(
        err.contains(words),
        "{args:?}: expected {words:?} in: {err}"
    );
    assert!(out.stdout.is_empty(), "a refused repair printed a report");
    let after = counters(&dev.name);
    assert!(
        after[1] - before[1] < FEW_SECTORS,
        "the refused repair read the device ({} sectors)",
        after[1] - before[1]
    );
    assert_eq!(
        after[3], before[3],
        "the refused repair wrote to the device"
    );
}

#[test]
fn a_repair_without_destroy_data_is_refused_before_any_read() {
    if !root_or_skip("a_repair_without_destroy_data_is_refused_before_any_read") {
        return;
    }
    let dir = shm_scratch();
    let dev = LoopDev::new(dir.path(), 64 << 20, 512);
    let sum = checksum(&dev.image);
    assert_refused_before_reading(
        &dev,
        &[],
        &format!("pass --destroy-data {} to confirm", dev.name),
    );
    assert_eq!(checksum(&dev.image), sum);
}

#[test]
fn a_repair_with_another_devices_name_is_refused_before_any_read() {
    if !root_or_skip("a_repair_with_another_devices_name_is_refused_before_any_read") {
        return;
    }
    let dir = shm_scratch();
    let dev = LoopDev::new(dir.path(), 64 << 20, 512);
    let other = LoopDev::new(dir.path(), 32 << 20, 512);
    let sum = checksum(&dev.image);
    // The name typed with a space after it is not the name (as the prompt of a terminal may
    // leave it when pasted).
    let spaced = format!("{} ", dev.name);
    for wrong in [other.name.as_str(), "/dev/sda", "loop", "", spaced.as_str()] {
        assert_refused_before_reading(
            &dev,
            &["--destroy-data", wrong],
            &format!("does not name the target {}", dev.name),
        );
    }
    assert_eq!(checksum(&dev.image), sum);
}

#[test]
fn a_repair_of_a_mounted_device_is_refused_before_any_read() {
    if !root_or_skip("a_repair_of_a_mounted_device_is_refused_before_any_read") {
        return;
    }
    let dir = shm_scratch();
    let image = sparse_image(dir.path(), "fs.img", 64 << 20);
    let dev = LoopDev::attach(&image, &[]);
    let _mount = Mounted::ext4(dev.path_str(), &dir.path().join("mnt"));
    assert_refused_before_reading(
        &dev,
        &["--destroy-data", &dev.name],
        &format!("refusing to write to {}: mounted at", dev.name),
    );
}

#[test]
fn a_repair_of_a_device_a_mounted_loop_is_stacked_on_is_refused_before_any_read() {
    if !root_or_skip("a_repair_of_a_device_a_mounted_loop_is_stacked_on_is_refused_before_any_read")
    {
        return;
    }
    let dir = shm_scratch();
    let image = sparse_image(dir.path(), "lower.img", 64 << 20);
    let lower = LoopDev::attach(&image, &[]);
    // A second loop device over the first, with a mounted file system: the lower device's
    // data is in use through it, though nothing mounts the lower device itself.
    let upper = LoopDev::attach(&lower.path, &[]);
    let _mount = Mounted::ext4(upper.path_str(), &dir.path().join("mnt"));
    assert_refused_before_reading(
        &lower,
        &["--destroy-data", &lower.name],
        &format!("refusing to write to {}:", lower.name),
    );
}

#[test]
fn a_repair_of_a_disk_whose_partition_is_mounted_is_refused_before_any_read() {
    if !root_or_skip("a_repair_of_a_disk_whose_partition_is_mounted_is_refused_before_any_read") {
        return;
    }
    let dir = shm_scratch();
    let image = sparse_image(dir.path(), "parted.img", 64 << 20);
    // One partition over the image (a DOS label: start at 1 MiB, to the end).
    let mut sfdisk = Command::new("sfdisk")
        .args(["--quiet", image.to_str().unwrap()])
        .stdin(std::process::Stdio::piped())
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
        common::skip(
            "a_repair_of_a_disk_whose_partition_is_mounted_is_refused_before_any_read",
            "the kernel shows no partition of the image",
        );
        return;
    };
    let _mount = Mounted::ext4(&format!("/dev/{part}"), &dir.path().join("mnt"));
    assert_refused_before_reading(
        &dev,
        &["--destroy-data", &dev.name],
        &format!("refusing to write to {}:", dev.name),
    );
}

#[test]
fn a_repair_after_a_scan_without_bad_sectors_writes_nothing() {
    if !root_or_skip("a_repair_after_a_scan_without_bad_sectors_writes_nothing") {
        return;
    }
    let dir = shm_scratch();
    let dev = LoopDev::new(dir.path(), 64 << 20, 512);
    {
        use std::os::unix::fs::FileExt;
        let f = fs::File::options().write(true).open(&dev.image).unwrap();
        f.write_all_at(b"data that must stay", 12345).unwrap();
        f.sync_all().unwrap();
    }
    let sum = checksum(&dev.image);
    let before = counters(&dev.name);
    let out = disktriage(&[
        "scan",
        dev.path_str(),
        "--repair",
        "--destroy-data",
        &dev.name,
        "--json",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["bytes_read"], 64 << 20);
    let repair = &doc["repair"];
    assert_eq!(repair["sectors_attempted"], 0, "{repair}");
    assert_eq!(repair["repaired"], 0);
    assert_eq!(repair["still_unreadable"], 0);
    // A loop device has no SMART: "not available", said as null with the reason.
    assert!(repair["smart_before"]["reallocated"].is_null(), "{repair}");
    assert!(repair["smart_after"]["pending"].is_null(), "{repair}");
    let after = counters(&dev.name);
    assert_eq!(after[2], before[2], "writes completed changed");
    assert_eq!(after[3], before[3], "sectors written changed");
    assert_eq!(checksum(&dev.image), sum);
    // The text names the repair in a section of its own.
    let out = disktriage(&[
        "scan",
        dev.path_str(),
        "--repair",
        "--destroy-data",
        &dev.name,
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("no unreadable sector: nothing written"),
        "{text}"
    );
    assert_eq!(counters(&dev.name)[3], before[3]);
}

#[test]
fn a_repair_of_a_read_only_device_is_refused_before_any_read() {
    if !root_or_skip("a_repair_of_a_read_only_device_is_refused_before_any_read") {
        return;
    }
    let dir = shm_scratch();
    let image = sparse_image(dir.path(), "ro.img", 64 << 20);
    let dev = LoopDev::attach(&image, &["--read-only"]);
    assert_refused_before_reading(
        &dev,
        &["--destroy-data", &dev.name],
        &format!("refusing to write to {}: the device is read-only", dev.name),
    );
}

#[test]
fn a_repair_of_an_unused_partition_runs_beside_a_mounted_one_and_a_mounted_one_is_refused() {
    let test =
        "a_repair_of_an_unused_partition_runs_beside_a_mounted_one_and_a_mounted_one_is_refused";
    if !root_or_skip(test) {
        return;
    }
    let dir = shm_scratch();
    let image = sparse_image(dir.path(), "two.img", 96 << 20);
    // Two partitions: p1 32 MiB (mounted below), p2 the rest.
    let mut sfdisk = Command::new("sfdisk")
        .args(["--quiet", image.to_str().unwrap()])
        .stdin(std::process::Stdio::piped())
        .spawn()
        .expect("sfdisk");
    {
        use std::io::Write;
        sfdisk
            .stdin
            .take()
            .unwrap()
            .write_all(b"label: dos\n,32M,L\n,,L\n")
            .unwrap();
    }
    assert!(sfdisk.wait().unwrap().success(), "sfdisk failed");
    let dev = LoopDev::attach(&image, &["-P"]);
    let parts = dev.expose_partitions();
    let [p1, p2] = parts.as_slice() else {
        common::skip(test, "the kernel shows not two partitions of the image");
        return;
    };
    let _mount = Mounted::ext4(&format!("/dev/{p1}"), &dir.path().join("mnt"));
    // The mounted partition: refused before anything is read.
    let before = counters(p1);
    let out = disktriage(&[
        "scan",
        &format!("/dev/{p1}"),
        "--repair",
        "--destroy-data",
        p1,
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains(&format!("refusing to write to {p1}: mounted at")),
        "{}",
        stderr(&out)
    );
    assert_eq!(
        counters(p1)[3],
        before[3],
        "the refused repair wrote to {p1}"
    );
    // Its unused sibling: the repair runs (only the sectors of p2 could be written; none is
    // bad here, so nothing is), the disk's other partition untouched.
    let (b1, b2) = (counters(p1), counters(p2));
    let out = disktriage(&[
        "scan",
        &format!("/dev/{p2}"),
        "--repair",
        "--destroy-data",
        p2,
        "--json",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["repair"]["sectors_attempted"], 0, "{doc}");
    let p2_sectors: u64 = fs::read_to_string(format!("/sys/class/block/{p2}/size"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert_eq!(doc["bytes_read"], p2_sectors * 512, "{doc}");
    assert_eq!(counters(p2)[3], b2[3], "sectors written to {p2}");
    assert_eq!(counters(p2)[1] - b2[1], p2_sectors, "{p2} read whole");
    assert_eq!(counters(p1)[1], b1[1], "{p1} was read");
}

#[test]
fn a_repair_of_a_device_another_process_holds_exclusively_is_refused_before_any_read() {
    let test = "a_repair_of_a_device_another_process_holds_exclusively_is_refused_before_any_read";
    if !root_or_skip(test) {
        return;
    }
    let dir = shm_scratch();
    let dev = LoopDev::new(dir.path(), 64 << 20, 512);
    // Held as mkfs, a mount or another write test holds a device: opened with O_EXCL. Nothing
    // in /proc says so (no mount, no holder), only the kernel's claim.
    use std::os::unix::fs::OpenOptionsExt;
    let _held = fs::File::options()
        .read(true)
        .custom_flags(libc::O_EXCL)
        .open(&dev.path)
        .unwrap();
    let sum = checksum(&dev.image);
    assert_refused_before_reading(
        &dev,
        &["--destroy-data", &dev.name],
        &format!(
            "cannot open {} for writing (O_DIRECT, exclusively)",
            dev.name
        ),
    );
    assert_eq!(checksum(&dev.image), sum);
}
