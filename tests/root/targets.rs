//! Writes that must reach only what the admin confirmed, on real loop devices (root): `--root`
//! never weakens the live in-use guard; a refused run creates no test file; with several
//! targets every one is checked before any is written or laid out, and two names of one
//! object are one target; a read-only device and a bare device name are refused before
//! anything starts; a captured tree (`--root TREE`) switches nothing, even one whose sys/ is a
//! link to the live /sys.

#![allow(clippy::unwrap_used)] // tests may unwrap: a panic is the failure report

use crate::common;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::{LoopDev, Mounted, RemoveOnDrop, root_or_skip, scratch, sh, sparse_image};

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// The first `len` bytes of a file or device.
fn head(path: &Path, len: usize) -> Vec<u8> {
    let mut bytes = fs::read(path).unwrap();
    bytes.truncate(len);
    bytes
}

/// A captured-tree root whose mount table and swap list are empty, with the live sysfs: under
/// it every device looks unused.
fn empty_usage_root(dir: &Path) -> PathBuf {
    let root = dir.join("root");
    fs::create_dir_all(root.join("proc/self")).unwrap();
    fs::write(root.join("proc/self/mountinfo"), "").unwrap();
    fs::write(
        root.join("proc/swaps"),
        "Filename\tType\tSize\tUsed\tPriority\n",
    )
    .unwrap();
    std::os::unix::fs::symlink("/sys", root.join("sys")).unwrap();
    root
}

/// An image with an ext4 file system mounted through a loop device over it.
struct MountedImage {
    // Field order: unmount, then detach.
    _mount: Mounted,
    device: LoopDev,
    image: PathBuf,
}

fn mounted_image(dir: &Path, name: &str) -> MountedImage {
    let image = sparse_image(dir, name, 64 << 20);
    let device = LoopDev::attach(&image, &[]);
    let mount = Mounted::ext4(device.path_str(), &dir.join(format!("{name}.mnt")));
    MountedImage {
        _mount: mount,
        device,
        image,
    }
}

/// A loop device over a fresh image whose first MiB holds a known pattern.
fn marked_loop(dir: &Path, name: &str) -> (LoopDev, Vec<u8>) {
    let image = sparse_image(dir, name, 32 << 20);
    let mark: Vec<u8> = (0..1 << 20).map(|i| (i % 251) as u8 + 1).collect();
    let mut bytes = mark.clone();
    bytes.resize(32 << 20, 0);
    fs::write(&image, &bytes).unwrap();
    (LoopDev::attach(&image, &[]), mark)
}

#[test]
fn root_targets_root_option_does_not_switch_off_the_in_use_guard() {
    if !root_or_skip("root_targets_root_option_does_not_switch_off_the_in_use_guard") {
        return;
    }
    let dir = scratch();
    let mounted = mounted_image(dir.path(), "mounted.img");
    // A second loop device over the mounted image: the same data.
    let second = LoopDev::attach(&mounted.image, &[]);
    let root = empty_usage_root(dir.path());
    let root = root.to_str().unwrap();
    let image = mounted.image.to_str().unwrap();
    let before = head(&mounted.image, 2 << 20);
    let write = |target: &str, confirm: &str| {
        common::disktriage(&[
            "--root",
            root,
            "run",
            target,
            "--test",
            "seq-write",
            "--count",
            "8",
            "--destroy-data",
            confirm,
        ])
    };
    let attempts = [
        (image, "mounted.img"),
        (mounted.device.path_str(), mounted.device.name.as_str()),
        (second.path_str(), second.name.as_str()),
    ];
    for (target, confirm) in attempts {
        let out = write(target, confirm);
        let err = stderr(&out);
        assert!(!out.status.success(), "{target} was written under --root");
        assert!(err.contains("refusing to write"), "{target}: {err}");
        assert!(err.contains("mounted at"), "{target}: {err}");
    }
    // Several targets under --root: the same guard.
    let fresh = dir.path().join("fresh.bin");
    let _fresh = RemoveOnDrop(fresh.clone());
    let out = common::disktriage(&[
        "--root",
        root,
        "run",
        second.path_str(),
        fresh.to_str().unwrap(),
        "--test",
        "seq-write",
        "--count",
        "8",
        "--size",
        "4M",
        "--destroy-data",
        &second.name,
    ]);
    assert!(!out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains("mounted at"), "{}", stderr(&out));
    assert!(
        !fresh.exists(),
        "a test file was laid out for a refused run"
    );
    assert!(
        head(&mounted.image, 2 << 20) == before,
        "the superblock was written"
    );
}

/// A run refused by a check that needs no file (the memory check) lays out nothing: on a
/// 16 MiB tmpfs the 1 GiB layout would fail first, with its own message, and leave no file.
#[test]
fn root_targets_a_refused_run_lays_out_no_test_file() {
    if !root_or_skip("root_targets_a_refused_run_lays_out_no_test_file") {
        return;
    }
    let dir = scratch();
    let small = dir.path().join("small");
    fs::create_dir(&small).unwrap();
    sh(
        "mount",
        &[
            "-t",
            "tmpfs",
            "-o",
            "size=16m",
            "tmpfs",
            small.to_str().unwrap(),
        ],
    );
    struct Unmount<'a>(&'a Path);
    impl Drop for Unmount<'_> {
        fn drop(&mut self) {
            let _ = Command::new("umount").arg(self.0).status();
        }
    }
    let _unmount = Unmount(&small);
    let file = small.join("new.bin");
    let out = common::disktriage(&[
        "run",
        file.to_str().unwrap(),
        "--test",
        "seq-write",
        "--bs",
        "256M",
        "--qd",
        "1024",
    ]);
    let err = stderr(&out);
    assert!(!out.status.success(), "{err}");
    assert!(err.contains("of memory for its I/O buffers"), "{err}");
    assert!(
        !err.contains("cannot create"),
        "the file was laid out first: {err}"
    );
    assert!(!file.exists(), "the refused run left {}", file.display());
}

/// `run loopA IMG --one-by-one` where IMG backs a mounted loop device: IMG is refused before
/// loopA is written; in parallel mode also before a new file of a middle target is laid out.
#[test]
fn root_targets_every_target_is_checked_before_any_is_written() {
    if !root_or_skip("root_targets_every_target_is_checked_before_any_is_written") {
        return;
    }
    let dir = scratch();
    let mounted = mounted_image(dir.path(), "busy.img");
    let (first, mark) = marked_loop(dir.path(), "first.img");
    let image = mounted.image.to_str().unwrap();
    let list = format!("{},busy.img", first.name);
    let one_by_one = common::disktriage(&[
        "run",
        first.path_str(),
        image,
        "--one-by-one",
        "--test",
        "seq-write",
        "--count",
        "64",
        "--destroy-data",
        &list,
    ]);
    let err = stderr(&one_by_one);
    assert!(!one_by_one.status.success(), "{err}");
    assert!(err.contains("refusing to write"), "{err}");
    assert!(
        head(&first.image, 1 << 20) == mark,
        "{} was written",
        first.name
    );

    let middle = dir.path().join("middle.bin");
    let _middle = RemoveOnDrop(middle.clone());
    let parallel = common::disktriage(&[
        "run",
        first.path_str(),
        middle.to_str().unwrap(),
        image,
        "--test",
        "seq-write",
        "--count",
        "64",
        "--size",
        "16M",
        "--destroy-data",
        &list,
    ]);
    let err = stderr(&parallel);
    assert!(!parallel.status.success(), "{err}");
    assert!(err.contains("refusing to write"), "{err}");
    assert!(
        head(&first.image, 1 << 20) == mark,
        "{} was written",
        first.name
    );
    assert!(!middle.exists(), "the middle target's file was laid out");
    let _ = mounted.device;
}

/// Two hard links to one file, and a loop device with its own backing file, are one target.
#[test]
fn root_targets_two_names_of_one_object_are_one_target() {
    if !root_or_skip("root_targets_two_names_of_one_object_are_one_target") {
        return;
    }
    let dir = scratch();
    let file = sparse_image(dir.path(), "linked.img", 8 << 20);
    let link = dir.path().join("other-name.img");
    fs::hard_link(&file, &link).unwrap();
    let out = common::disktriage(&[
        "run",
        file.to_str().unwrap(),
        link.to_str().unwrap(),
        "--test",
        "seq-read",
        "--count",
        "4",
    ]);
    let err = stderr(&out);
    assert!(
        !out.status.success(),
        "hard links ran as two targets: {err}"
    );
    assert!(err.contains("same"), "{err}");

    let (device, mark) = marked_loop(dir.path(), "own.img");
    let list = format!("{},own.img", device.name);
    let out = common::disktriage(&[
        "run",
        device.path_str(),
        device.image.to_str().unwrap(),
        "--test",
        "seq-write",
        "--count",
        "64",
        "--destroy-data",
        &list,
    ]);
    let err = stderr(&out);
    assert!(
        !out.status.success(),
        "a loop device and its backing file ran as two targets: {err}"
    );
    assert!(err.contains("same"), "{err}");
    assert!(
        head(&device.image, 1 << 20) == mark,
        "{} was written",
        device.name
    );
}

/// A read-only device is refused for a write test before the test starts, saying so.
#[test]
fn root_targets_a_read_only_device_is_refused_before_the_run() {
    if !root_or_skip("root_targets_a_read_only_device_is_refused_before_the_run") {
        return;
    }
    let dir = scratch();
    let image = sparse_image(dir.path(), "ro.img", 16 << 20);
    for how in ["losetup -r", "blockdev --setro"] {
        let device = if how == "losetup -r" {
            LoopDev::attach(&image, &["-r"])
        } else {
            let d = LoopDev::attach(&image, &[]);
            sh("blockdev", &["--setro", d.path_str()]);
            d
        };
        let out = common::disktriage(&[
            "run",
            device.path_str(),
            "--test",
            "seq-write",
            "--count",
            "8",
            "--destroy-data",
            &device.name,
        ]);
        let err = stderr(&out);
        assert!(!out.status.success(), "{how}: {err}");
        assert!(err.contains("read-only"), "{how}: {err}");
        // Refused, not a run that failed: no report.
        assert!(
            out.stdout.is_empty(),
            "{how}: a run started: {}",
            String::from_utf8_lossy(&out.stdout)
        );
    }
}

/// `run loopN` in a directory without `./loopN` does not create a test file named like the
/// device: it says which device was meant.
#[test]
fn root_targets_a_bare_device_name_is_not_a_new_file() {
    if !root_or_skip("root_targets_a_bare_device_name_is_not_a_new_file") {
        return;
    }
    let dir = scratch();
    let image = sparse_image(dir.path(), "bare.img", 16 << 20);
    let device = LoopDev::attach(&image, &[]);
    let cwd = dir.path().join("cwd");
    fs::create_dir(&cwd).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_disktriage"))
        .env(common::HISTORY_ENV, common::history_dir())
        .current_dir(&cwd)
        .args([
            "run",
            &device.name,
            "--test",
            "seq-read",
            "--count",
            "4",
            "--size",
            "1M",
        ])
        .output()
        .unwrap();
    let err = stderr(&out);
    assert!(!out.status.success(), "{err}");
    assert!(err.contains(&format!("/dev/{}", device.name)), "{err}");
    assert!(
        !cwd.join(&device.name).exists(),
        "a file named {} was created",
        device.name
    );
    // A path that names a directory (./loopN) is a file, as asked.
    let out = Command::new(env!("CARGO_BIN_EXE_disktriage"))
        .env(common::HISTORY_ENV, common::history_dir())
        .current_dir(&cwd)
        .args([
            "run",
            &format!("./{}", device.name),
            "--test",
            "seq-read",
            "--count",
            "4",
            "--size",
            "1M",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(cwd.join(&device.name).exists());
}

#[test]
fn root_targets_a_captured_tree_never_switches_the_live_disk() {
    if !root_or_skip("root_targets_a_captured_tree_never_switches_the_live_disk") {
        return;
    }
    let dir = scratch();
    let dev = LoopDev::new(dir.path(), 16 << 20, 512);
    let live = PathBuf::from("/sys/block")
        .join(&dev.name)
        .join("queue/scheduler");
    let before = fs::read_to_string(&live).unwrap();
    let other = before
        .split_whitespace()
        .find(|w| !w.starts_with('['))
        .expect("a second scheduler on a loop device")
        .to_string();
    // The attack: a tree whose sys/ is a link to the live /sys, so a scheduler written "into
    // the tree" lands on the live disk, journaled for a later plain `restore`.
    let tree = dir.path().join("tree");
    fs::create_dir_all(&tree).unwrap();
    std::os::unix::fs::symlink("/sys", tree.join("sys")).unwrap();
    let journal = dir.path().join("journal");
    let sysimage = dir.path().join("sysimage");
    fs::create_dir_all(sysimage.join("etc/udev/rules.d")).unwrap();
    let (tree_s, journal_s, sysimage_s) = (
        tree.to_str().unwrap(),
        journal.to_str().unwrap(),
        sysimage.to_str().unwrap(),
    );
    let name = dev.name.as_str();
    let attempts: [&[&str]; 8] = [
        &["sched", name, &other],
        // A boot rule for this very system (the default --target-root /).
        &["sched", name, &other, "--persist"],
        &["cache", name, "off"],
        &["smart", name, "--self-test", "short"],
        &["restore"],
        &[
            "run",
            dev.path_str(),
            "--test",
            "rand-read",
            "--sweep-sched",
            "--time",
            "1",
        ],
        &["flushcheck", dev.path_str(), "--destroy-data", name],
        &["debug", "hold", name, "--sched", &other, "--seconds", "1"],
    ];
    for args in attempts {
        let mut full = vec!["--root", tree_s, "--journal-dir", journal_s];
        full.extend_from_slice(args);
        let out = common::disktriage(&full);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.contains("is a captured tree, read-only"),
            "{args:?}: {err}"
        );
        assert_eq!(
            fs::read_to_string(&live).unwrap(),
            before,
            "{args:?} switched {name}"
        );
    }
    assert!(
        !journal.exists(),
        "a journal was made under a captured tree"
    );
    // A boot rule for an installed system's image (--target-root elsewhere) reaches nothing
    // live: not refused as a switch (a loop device has no serial or WWN to match, so no rule).
    let out = common::disktriage(&[
        "--root",
        tree_s,
        "--journal-dir",
        journal_s,
        "sched",
        name,
        &other,
        "--persist",
        "--target-root",
        sysimage_s,
    ]);
    assert!(
        !stderr(&out).contains("is a captured tree"),
        "{}",
        stderr(&out)
    );
    assert_eq!(fs::read_to_string(&live).unwrap(), before);
    assert!(!journal.exists(), "a boot rule journaled");
    // Reading the tree is what it is for: the same device is listed.
    let out = common::disktriage(&["--root", tree_s, "list"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains(name));
    // And the running system itself (`--root /`) still switches.
    let slash = [
        "--root",
        "/",
        "--journal-dir",
        journal_s,
        "sched",
        name,
        &other,
        "--keep",
    ];
    let out = common::disktriage(&slash);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        fs::read_to_string(&live)
            .unwrap()
            .contains(&format!("[{other}]"))
    );
}

#[test]
fn root_targets_a_device_node_anywhere_is_the_device_of_its_number() {
    if !root_or_skip("root_targets_a_device_node_anywhere_is_the_device_of_its_number") {
        return;
    }
    let dir = scratch();
    let dev = LoopDev::new(dir.path(), 16 << 20, 512);
    // As a rescue system without udev has them: a node dmsetup or mknod made, no link.
    let numbers = fs::read_to_string(format!("/sys/block/{}/dev", dev.name)).unwrap();
    let (major, minor) = numbers.trim().split_once(':').unwrap();
    let node = dir.path().join("mapper-like-node");
    sh("mknod", &[node.to_str().unwrap(), "b", major, minor]);
    let node_s = node.to_str().unwrap();
    let out = common::disktriage(&["sched", node_s, "--json"]);
    assert!(out.status.success(), "sched: {}", stderr(&out));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["device"], dev.name.as_str(), "{doc}");
    let out = common::disktriage(&["triage", "--quick", "--json", node_s]);
    let doc: serde_json::Value =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", stderr(&out)));
    assert_eq!(doc["disks"][0]["device"], dev.name.as_str(), "{doc}");
    // A node of no block device (a character device) is still refused.
    let out = common::disktriage(&["triage", "--quick", "/dev/null"]);
    assert!(!out.status.success(), "{}", stderr(&out));
}

#[test]
fn root_targets_odd_requests_are_refused_in_words_and_a_read_only_mix_asks_nothing() {
    if !root_or_skip(
        "root_targets_odd_requests_are_refused_in_words_and_a_read_only_mix_asks_nothing",
    ) {
        return;
    }
    let dir = scratch();
    let dev = LoopDev::new(dir.path(), 64 << 20, 512);
    let target = dev.path_str();
    // A --time too short to measure: a usage error, not a run of 0 I/Os called a result.
    let out = common::disktriage(&["run", target, "--test", "seq-read", "--time", "0.0000001"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("too short to measure"),
        "{}",
        stderr(&out)
    );
    // A read test with --destroy-data naming another device: the admin meant another target.
    let out = common::disktriage(&[
        "run",
        target,
        "--test",
        "seq-read",
        "--time",
        "0.2",
        "--destroy-data",
        "sdz",
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains(&format!("does not name the target {}", dev.name)),
        "{}",
        stderr(&out)
    );
    // rand-mixed at --read-pct 100 only reads: it runs without --destroy-data, writes nothing.
    let before = common::io_counters(&dev.name);
    let out = common::disktriage(&[
        "run",
        target,
        "--test",
        "rand-mixed",
        "--read-pct",
        "100",
        "--time",
        "0.3",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let after = common::io_counters(&dev.name);
    assert_eq!(after[3], before[3], "rand-mixed --read-pct 100 wrote");
    assert!(
        after[1] > before[1],
        "rand-mixed --read-pct 100 read nothing"
    );
    // The metadata test on two directories: it runs in one, said so.
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    fs::create_dir_all(&a).unwrap();
    fs::create_dir_all(&b).unwrap();
    let out = common::disktriage(&[
        "run",
        a.to_str().unwrap(),
        b.to_str().unwrap(),
        "--test",
        "metadata",
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("runs in one directory at a time"),
        "{}",
        stderr(&out)
    );
    // history with a name that is not UTF-8: said in words, not a parser's error.
    let out = Command::new(env!("CARGO_BIN_EXE_disktriage"))
        .env(common::HISTORY_ENV, common::history_dir())
        .arg("history")
        .arg(<std::ffi::OsStr as std::os::unix::ffi::OsStrExt>::from_bytes(b"\xff"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("is not UTF-8"), "{}", stderr(&out));
}
