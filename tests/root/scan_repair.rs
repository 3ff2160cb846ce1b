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
use std::path::{Path, PathBuf};
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
    common::io_counters(name)
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

// ---- a disk with unreadable sectors: tests/fuse/cachedisk.py in mode `bad` ----

const BAD_DISK: u64 = 64 << 20;
/// Sectors 16384-16391 (8 MiB) read back EIO until written.
const BAD_LBA: u64 = 16384;
const BAD_COUNT: u64 = 8;
/// The scan is held (or slowed) from 60 MiB, long after it bisected the bad block to its
/// sectors, while the test acts between the scan and the repair.
const HOLD_AT: u64 = 60 << 20;
/// From there each read (of 128 KiB, FUSE's largest) is this late when slowed: 32 of them,
/// 3.2 s in all.
const SLOW_MS: u64 = 100;

/// The byte each sector of the bad disk holds before the test: never zero.
const FILL: u8 = 0xa5;

/// A FUSE disk with the bad sectors, its store filled, the hold file in place (or, `slow`,
/// every read from HOLD_AT late instead); the loop device over it. The hold file is removed
/// first on drop (a read held forever would leave the scan unkillable in D state). A loop
/// device stacked on the disk waits for a held read, so that test slows the scan instead.
struct HeldBadDisk {
    hold: PathBuf,
    store: PathBuf,
    dev: Option<LoopDev>,
    _disk: common::CacheDisk,
}

impl HeldBadDisk {
    fn start(dir: &Path, slow: bool) -> HeldBadDisk {
        let store = dir.join("bad.store");
        fs::write(&store, vec![FILL; BAD_DISK as usize]).unwrap();
        let hold = dir.join("hold");
        let pause = if slow {
            (
                "CACHEDISK_SLOW",
                format!(
                    "{}:{HOLD_AT}:{SLOW_MS}",
                    hold.with_extension("held").display()
                ),
            )
        } else {
            fs::write(&hold, "").unwrap();
            ("CACHEDISK_HOLD", format!("{}:{HOLD_AT}", hold.display()))
        };
        let disk = common::CacheDisk::start(
            "bad",
            &store,
            &dir.join("bad"),
            BAD_DISK,
            &[
                (
                    "CACHEDISK_BAD",
                    format!("{}+{}", BAD_LBA * 512, BAD_COUNT * 512),
                ),
                pause,
            ],
        );
        let dev = LoopDev::attach(&disk.file(), &[]);
        HeldBadDisk {
            hold,
            store,
            dev: Some(dev),
            _disk: disk,
        }
    }

    fn dev(&self) -> &LoopDev {
        self.dev.as_ref().unwrap()
    }

    /// Waits until the scan's read at HOLD_AT is held (or slowed).
    fn wait_held(&self) {
        let held = self.hold.with_extension("held");
        let seen = common::poll(600, || held.exists().then_some(()));
        assert!(seen.is_some(), "the scan never reached {HOLD_AT}");
    }

    fn release(&self) {
        let _ = fs::remove_file(&self.hold);
    }

    /// The store's sector `lba`.
    fn sector(&self, lba: u64) -> Vec<u8> {
        let all = fs::read(&self.store).unwrap();
        all[(lba * 512) as usize..((lba + 1) * 512) as usize].to_vec()
    }
}

impl Drop for HeldBadDisk {
    fn drop(&mut self) {
        self.release();
        self.dev.take();
    }
}

/// Starts `scan DEV --repair --destroy-data NAME --json` on the held disk.
fn start_repair(disk: &HeldBadDisk) -> std::process::Child {
    Command::new(env!("CARGO_BIN_EXE_disktriage"))
        .env(HISTORY_ENV, history_dir())
        .args([
            "scan",
            disk.dev().path_str(),
            "--repair",
            "--destroy-data",
            &disk.dev().name,
            "--json",
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run disktriage")
}

#[test]
fn a_sector_rewritten_after_the_scan_is_not_zeroed_by_the_repair() {
    let test = "a_sector_rewritten_after_the_scan_is_not_zeroed_by_the_repair";
    if !root_or_skip(test) || !common::fuse_available(test) {
        return;
    }
    let dir = shm_scratch();
    let disk = HeldBadDisk::start(dir.path(), false);
    let child = start_repair(&disk);
    disk.wait_held();
    // Meanwhile a file system writes new data over two of the sectors the scan found
    // unreadable (the drive remaps them on write): through the FUSE file, as the loop device
    // is busy with the held read.
    let new_data = vec![0x5a_u8; 1024];
    let file = fs::OpenOptions::new()
        .write(true)
        .open(disk._disk.file())
        .unwrap();
    std::os::unix::fs::FileExt::write_all_at(&file, &new_data, (BAD_LBA + 2) * 512).unwrap();
    drop(file);
    disk.release();
    let out = child.wait_with_output().unwrap();
    let err = stderr(&out);
    let doc: serde_json::Value =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {err}"));
    let repair = &doc["repair"];
    // The scan saw all 8 unreadable; the repair wrote the 6 still unreadable, left the 2.
    assert_eq!(doc["bytes_unreadable"], BAD_COUNT * 512, "{doc}");
    assert_eq!(repair["readable_again"], 2, "{repair}");
    assert_eq!(
        repair["readable_again_ranges"],
        serde_json::json!([{"offset": (BAD_LBA + 2) * 512, "length": 1024}]),
        "{repair}"
    );
    assert_eq!(repair["repaired"], 6, "{repair}");
    assert_eq!(repair["still_unreadable"], 0, "{repair}");
    assert_eq!(out.status.code(), Some(0), "{err}");
    // The new data stands; the six others are zeros; every other sector as it was.
    for lba in BAD_LBA..BAD_LBA + BAD_COUNT {
        let want = if lba == BAD_LBA + 2 || lba == BAD_LBA + 3 {
            0x5a
        } else {
            0
        };
        assert!(disk.sector(lba).iter().all(|&b| b == want), "sector {lba}");
    }
    assert!(disk.sector(BAD_LBA - 1).iter().all(|&b| b == FILL));
    assert!(disk.sector(BAD_LBA + BAD_COUNT).iter().all(|&b| b == FILL));
}

#[test]
fn a_loop_device_stacked_during_the_scan_stops_the_repair_before_any_write() {
    let test = "a_loop_device_stacked_during_the_scan_stops_the_repair_before_any_write";
    if !root_or_skip(test) || !common::fuse_available(test) {
        return;
    }
    let dir = shm_scratch();
    let disk = HeldBadDisk::start(dir.path(), true);
    let before = checksum(&disk.store);
    let child = start_repair(&disk);
    disk.wait_held();
    // A loop device over the scanned device, attached while the scan runs: O_EXCL does not
    // stop it (loop does not claim its backing device). Mounted or not, it uses the data.
    let stacked = LoopDev::attach(&disk.dev().path, &[]);
    let out = child.wait_with_output().unwrap();
    let err = stderr(&out);
    let doc: serde_json::Value =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {err}"));
    let repair = &doc["repair"];
    let stopped = repair["stopped"].as_str().unwrap_or_default();
    assert!(stopped.contains("checked again after the scan"), "{repair}");
    assert!(stopped.contains(&stacked.name), "{repair}");
    assert_eq!(repair["repaired"], 0, "{repair}");
    assert_eq!(out.status.code(), Some(4), "{err}");
    // The scan was still reading when the loop device came: it was attached in time.
    assert!(doc["seconds"].as_f64().unwrap() > 1.0, "{doc}");
    drop(stacked);
    assert_eq!(
        checksum(&disk.store),
        before,
        "the repair wrote to the disk"
    );
}
