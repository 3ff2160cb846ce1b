//! The write guard against data in use that the kernel does not mark as held (root only):
//! loop devices that share an image or sit on each other, image and swap files as targets, a
//! target path swapped between check and open, test files under /dev, and a test file whose
//! layout is interrupted. Every device, mount and swap area is removed again by its guard.

#![allow(clippy::unwrap_used)] // tests may unwrap: a panic is the failure report

use crate::common;
use common::{HISTORY_ENV, history_dir};

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::{
    FlippingLink, LoopDev, Mounted, RemoveOnDrop, SwapFile, disktriage, json_device, list_json,
    root_or_skip, scratch, sparse_image,
};
use serde_json::Value;

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn file_bytes(path: &Path, offset: u64, len: usize) -> Vec<u8> {
    use std::io::{Read, Seek, SeekFrom};
    let mut f = std::fs::File::open(path).unwrap();
    f.seek(SeekFrom::Start(offset)).unwrap();
    let mut buf = vec![0; len];
    f.read_exact(&mut buf).unwrap();
    buf
}

/// `disktriage run TARGET --test seq-write --count 1 --destroy-data CONFIRM`.
fn write_once(target: &str, confirm: &str) -> Output {
    disktriage(&[
        "run",
        target,
        "--test",
        "seq-write",
        "--bs",
        "64k",
        "--count",
        "1",
        "--destroy-data",
        confirm,
    ])
}

/// The IN USE cell of a device's row in `disktriage list`.
fn list_row(name: &str) -> String {
    let out = disktriage(&["list", "--all"]);
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .find(|r| r.starts_with(&format!("{name} ")))
        .unwrap_or_else(|| panic!("{name} not in list"))
        .to_string()
}

#[test]
fn root_second_loop_over_a_mounted_image_is_refused() {
    if !root_or_skip("root_second_loop_over_a_mounted_image_is_refused") {
        return;
    }
    let dir = scratch();
    let image = sparse_image(dir.path(), "a.img", 64 << 20);
    let first = LoopDev::attach(&image, &[]);
    let second = LoopDev::attach(&image, &[]);
    let mounted = Mounted::ext4(first.path_str(), &dir.path().join("mnt"));
    let superblock = file_bytes(&image, 1024, 1024);
    let why = format!(
        "shares a.img with {}, mounted at {}",
        first.name,
        mounted.dir.display()
    );

    let out = write_once(second.path_str(), &second.name);
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains(&format!("refusing to write to {}: {why}", second.name)),
        "{}",
        stderr(&out)
    );
    assert_eq!(
        file_bytes(&image, 1024, 1024),
        superblock,
        "the mounted file system's superblock is untouched"
    );

    // The list says why, in the table and in JSON.
    let doc = list_json();
    assert_eq!(json_device(&doc, &second.name)["in_use_summary"], why);
    assert_eq!(
        json_device(&doc, &first.name)["in_use_summary"],
        format!("mounted at {}", mounted.dir.display())
    );
    let row = list_row(&second.name);
    assert!(row.contains(&format!("shares {}", first.name)), "{row}");

    // Unmounted, both are free again.
    drop(mounted);
    let doc = list_json();
    assert_eq!(json_device(&doc, &second.name)["in_use_summary"], "free");
}

#[test]
fn root_loop_stacked_on_a_mounted_loop_is_refused_and_the_other_way_round() {
    if !root_or_skip("root_loop_stacked_on_a_mounted_loop_is_refused_and_the_other_way_round") {
        return;
    }
    let dir = scratch();
    let image = sparse_image(dir.path(), "base.img", 64 << 20);
    let lower = LoopDev::attach(&image, &[]);
    let upper = LoopDev::attach(&lower.path, &[]);

    // The lower device mounted: the loop device over it is refused.
    let mounted = Mounted::ext4(lower.path_str(), &dir.path().join("lower"));
    let out = write_once(upper.path_str(), &upper.name);
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains(&format!(
            "refusing to write to {}: backed by {}, mounted at {}",
            upper.name,
            lower.name,
            mounted.dir.display()
        )),
        "{}",
        stderr(&out)
    );

    // A loop device over a file that lives on that mounted file system is not in use merely
    // by that: writing it is allowed.
    let inner_image = sparse_image(&mounted.dir, "inner.img", 8 << 20);
    let inner = LoopDev::attach(&inner_image, &[]);
    let out = write_once(inner.path_str(), &inner.name);
    assert!(out.status.success(), "{}", stderr(&out));
    drop(inner);
    drop(mounted);

    // The upper device mounted: the device under it is refused.
    let mounted = Mounted::ext4(upper.path_str(), &dir.path().join("upper"));
    let out = write_once(lower.path_str(), &lower.name);
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains(&format!(
            "refusing to write to {}: backs {}, mounted at {}",
            lower.name,
            upper.name,
            mounted.dir.display()
        )),
        "{}",
        stderr(&out)
    );
    let doc = list_json();
    assert_eq!(
        json_device(&doc, &lower.name)["in_use_summary"],
        format!("backs {}, mounted at {}", upper.name, mounted.dir.display())
    );
}

#[test]
fn root_image_of_a_mounted_loop_and_a_swap_file_are_refused_as_file_targets() {
    if !root_or_skip("root_image_of_a_mounted_loop_and_a_swap_file_are_refused_as_file_targets") {
        return;
    }
    let dir = scratch();
    let image = sparse_image(dir.path(), "a.img", 64 << 20);
    let l = LoopDev::attach(&image, &[]);
    let mounted = Mounted::ext4(l.path_str(), &dir.path().join("mnt"));
    let superblock = file_bytes(&image, 1024, 1024);
    let out = write_once(image.to_str().unwrap(), "a.img");
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains(&format!(
            "refusing to write to {}: backing file of {}, mounted at {}",
            image.display(),
            l.name,
            mounted.dir.display()
        )),
        "{}",
        stderr(&out)
    );
    assert_eq!(file_bytes(&image, 1024, 1024), superblock);

    // An active swap file (on the mounted file system: swapon needs a real one).
    let swap_path = mounted.dir.join("swap.img");
    let swap = SwapFile::on(&swap_path, 16 << 20);
    let out = write_once(swap_path.to_str().unwrap(), "swap.img");
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains(&format!(
            "refusing to write to {}: active swap file",
            swap_path.display()
        )),
        "{}",
        stderr(&out)
    );
    drop(swap);
}

#[test]
fn root_target_swapped_between_check_and_open_writes_only_the_confirmed_device() {
    if !root_or_skip("root_target_swapped_between_check_and_open_writes_only_the_confirmed_device")
    {
        return;
    }
    const RUNS: usize = 60;
    let dir = scratch();
    let confirmed = LoopDev::new(dir.path(), 16 << 20, 512);
    let other_image = sparse_image(dir.path(), "other.img", 16 << 20);
    let marker = vec![0x5a_u8; 1 << 20];
    std::fs::write(&other_image, &marker).unwrap();
    let other = LoopDev::attach(&other_image, &[]);
    let mut link = FlippingLink::new(&dir.path().join("target"), &confirmed.path, &other.path);
    let target = link.link.to_str().unwrap().to_string();

    let started = Instant::now();
    let (mut written, mut refused) = (0, 0);
    for run in 0..RUNS {
        let out = disktriage(&[
            "run",
            &target,
            "--test",
            "seq-write",
            "--bs",
            "64k",
            "--count",
            "1",
            "--destroy-data",
            &confirmed.name,
            "--json",
        ]);
        if out.status.success() {
            written += 1;
            let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
            assert_eq!(
                doc["target"]["device"], confirmed.name,
                "run {run}: the report names the device written"
            );
        } else {
            refused += 1;
            assert!(
                stderr(&out).contains(&format!("does not name the target {}", other.name)),
                "run {run}: {}",
                stderr(&out)
            );
        }
        assert!(
            file_bytes(&other_image, 0, 1 << 20) == marker,
            "run {run}: the device that was never confirmed ({}) was written",
            other.name
        );
    }
    let flips = link.stop();
    eprintln!(
        "{RUNS} runs in {:.1} s: {written} wrote {}, {refused} refused {} ({flips} flips)",
        started.elapsed().as_secs_f64(),
        confirmed.name,
        other.name
    );
    assert!(
        written > 0 && refused > 0,
        "the link pointed at both devices"
    );
}

#[test]
fn root_missing_target_under_dev_is_not_created() {
    if !root_or_skip("root_missing_target_under_dev_is_not_created") {
        return;
    }
    let dir = scratch();
    let l = LoopDev::new(dir.path(), 8 << 20, 512);
    let typo = format!("/dev/disktriage-typo-{}", std::process::id());
    let _cleanup = RemoveOnDrop(typo.clone().into());
    let out = disktriage(&["run", &typo, "--test", "seq-read", "--size", "1M"]);
    assert!(!out.status.success());
    assert!(!Path::new(&typo).exists(), "nothing was created in /dev");
    let err = stderr(&out);
    assert!(
        err.contains(&format!("{typo} does not exist")) && err.contains("not created under /dev"),
        "{err}"
    );
    assert!(err.contains("block devices: "), "{err}");
    assert!(err.contains(&l.name), "the list names the devices: {err}");

    // devtmpfs mounted somewhere else is /dev all the same.
    let devcopy = dir.path().join("devcopy");
    std::fs::create_dir(&devcopy).unwrap();
    common::sh(
        "mount",
        &["-t", "devtmpfs", "devtmpfs", devcopy.to_str().unwrap()],
    );
    let _unmount = Mounted {
        dir: devcopy.clone(),
    };
    let inside = devcopy.join(format!("disktriage-typo2-{}", std::process::id()));
    let _cleanup2 = RemoveOnDrop(inside.clone());
    let out = disktriage(&[
        "run",
        inside.to_str().unwrap(),
        "--test",
        "seq-read",
        "--size",
        "1M",
    ]);
    assert!(!out.status.success());
    assert!(!inside.exists(), "nothing was created in the devtmpfs");
    assert!(stderr(&out).contains("devtmpfs"), "{}", stderr(&out));

    // The tmpfs at /dev/shm holds files: a test file there is created, and removed by the
    // test.
    if Path::new("/dev/shm").is_dir() {
        let shm = format!("/dev/shm/disktriage-test-{}.bin", std::process::id());
        let _cleanup3 = RemoveOnDrop(shm.clone().into());
        let out = disktriage(&[
            "run", &shm, "--test", "seq-read", "--size", "1M", "--count", "1",
        ]);
        assert!(
            !stderr(&out).contains("not created under"),
            "{}",
            stderr(&out)
        );
        assert!(Path::new(&shm).exists(), "{}", stderr(&out));
    }

    // Under /proc and /sys neither.
    for parent in ["/proc", "/sys"] {
        let p = format!("{parent}/disktriage-typo");
        let out = disktriage(&["run", &p, "--test", "seq-read", "--size", "1M"]);
        assert!(!out.status.success());
        assert!(
            stderr(&out).contains(&format!("not created under {parent}")),
            "{}",
            stderr(&out)
        );
    }
}

/// Starts a read test on the new file `file` (768 MiB to lay out) and returns once its
/// layout has begun (8 MiB written).
fn start_layout(file: &std::path::Path) -> std::process::Child {
    let child = common::disktriage_with_default_signals()
        .env(HISTORY_ENV, history_dir())
        .args([
            "run",
            file.to_str().unwrap(),
            "--test",
            "seq-read",
            "--size",
            "768M",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while std::fs::metadata(file).map_or(0, |m| m.len()) < (8 << 20)
        && start.elapsed() < Duration::from_secs(20)
    {
        std::thread::sleep(Duration::from_millis(5));
    }
    child
}

#[test]
fn root_interrupted_layout_removes_the_new_file() {
    if !root_or_skip("root_interrupted_layout_removes_the_new_file") {
        return;
    }
    let dir = scratch();
    let l = LoopDev::new(dir.path(), 1 << 30, 512);
    let mounted = Mounted::ext4(l.path_str(), &dir.path().join("mnt"));
    let file = mounted.dir.join("test.bin");
    let f = file.to_str().unwrap().to_string();
    for sig in [
        nix::sys::signal::Signal::SIGINT,
        nix::sys::signal::Signal::SIGTERM,
        nix::sys::signal::Signal::SIGHUP,
    ] {
        let child = start_layout(&file);
        let len = std::fs::metadata(&file).map_or(0, |m| m.len());
        assert!(
            len > 0 && len < 768 << 20,
            "{sig}: interrupted mid-layout ({len})"
        );
        nix::sys::signal::kill(nix::unistd::Pid::from_raw(child.id() as i32), sig).unwrap();
        let out = child.wait_with_output().unwrap();
        let err = stderr(&out);
        // 128 + the signal, as for a stop during the run.
        assert_eq!(out.status.code(), Some(128 + sig as i32), "{sig}: {err}");
        assert!(
            err.contains(&format!(
                "interrupted while creating the test file {f}: it was removed"
            )),
            "{sig}: {err}"
        );
        assert!(!file.exists(), "{sig}: the partial file is gone");
    }

    // A layout stopped after its file was renamed: the renamed file is left under its new
    // name, and the message says so (it said "it was removed").
    let moved = mounted.dir.join("moved.bin");
    let child = start_layout(&file);
    std::fs::rename(&file, &moved).unwrap();
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGINT,
    )
    .unwrap();
    let out = child.wait_with_output().unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(130), "{err}");
    assert!(
        err.contains("it is no longer at that path (renamed or replaced meanwhile)"),
        "{err}"
    );
    assert!(!err.contains("it was removed"), "{err}");
    assert!(moved.exists(), "the renamed file was removed");
    std::fs::remove_file(&moved).unwrap();

    // The next run creates its own file again and writes it without --destroy-data.
    let out = disktriage(&[
        "run",
        &f,
        "--test",
        "seq-write",
        "--size",
        "16M",
        "--count",
        "1",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    drop(mounted);
}

/// Another program's exclusive claim on the target (`O_EXCL`, as mkfs, a mount or a run of
/// ours takes it). A claim released within moments, as the kernel releases a killed io_uring
/// run's after tearing down its rings, is waited for: the rerun right after a kill was refused
/// as "busy" about once in four in the SIGKILL test. A claim that stays is refused after the
/// wait, saying so, and nothing is written.
#[test]
fn root_a_claim_released_in_moments_is_waited_for_and_one_that_stays_refused() {
    if !root_or_skip("root_a_claim_released_in_moments_is_waited_for_and_one_that_stays_refused") {
        return;
    }
    let dir = scratch();
    let l = LoopDev::new(dir.path(), 8 << 20, 512);
    let claim = || claim_exclusively(l.path_str());

    let held = claim();
    let started = Instant::now();
    let releaser = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(400));
        drop(held);
    });
    let out = write_once(l.path_str(), &l.name);
    releaser.join().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(started.elapsed() >= Duration::from_millis(400));

    std::fs::write(l.path_str(), vec![0u8; 65536]).unwrap();
    let held = claim();
    let started = Instant::now();
    let out = write_once(l.path_str(), &l.name);
    let waited = started.elapsed();
    drop(held);
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(
        err.contains("exclusively: it is busy") && err.contains("stayed busy for 2 s"),
        "{err}"
    );
    assert!(waited >= Duration::from_secs(2), "refused after {waited:?}");
    assert_eq!(
        file_bytes(Path::new(l.path_str()), 0, 65536),
        vec![0u8; 65536]
    );
}

/// The run waits for a busy device (above), and whatever held it may leave behind something
/// that does not claim the device: here a loop device stacked over it, with a mounted file
/// system, set up while the run waits. The in-use check is made again once the run holds the
/// device, so the write is refused and the file system's first blocks stay as they were.
#[test]
fn root_a_device_put_in_use_while_the_run_waits_for_it_is_refused() {
    if !root_or_skip("root_a_device_put_in_use_while_the_run_waits_for_it_is_refused") {
        return;
    }
    let dir = scratch();
    let image = sparse_image(dir.path(), "base.img", 64 << 20);
    let lower = LoopDev::attach(&image, &[]);
    let held = claim_exclusively(lower.path_str());
    let child = spawn_write_once(lower.path_str(), &lower.name);
    // The run has checked the device and is waiting for the claim.
    std::thread::sleep(Duration::from_millis(300));
    let upper = LoopDev::attach(&lower.path, &[]);
    let mounted = Mounted::ext4(upper.path_str(), &dir.path().join("upper"));
    let before = file_bytes(&image, 0, 65536);
    drop(held);
    let out = child.wait_with_output().unwrap();
    let err = stderr(&out);
    assert!(!out.status.success(), "the write ran: {err}");
    assert!(
        err.contains(&format!(
            "refusing to write to {}: backs {}, mounted at {}",
            lower.name,
            upper.name,
            mounted.dir.display()
        )),
        "{err}"
    );
    assert_eq!(file_bytes(&image, 0, 65536), before);
}

/// A signal while the run waits for a busy device ends the wait at once, not after the 2 s
/// patience: the admin who presses Ctrl-C (or `x` in the TUI) is not kept waiting, and nothing
/// is written.
#[test]
fn root_a_signal_ends_the_wait_for_a_busy_device() {
    if !root_or_skip("root_a_signal_ends_the_wait_for_a_busy_device") {
        return;
    }
    let dir = scratch();
    let l = LoopDev::new(dir.path(), 8 << 20, 512);
    std::fs::write(l.path_str(), vec![0u8; 65536]).unwrap();
    let held = claim_exclusively(l.path_str());
    let child = spawn_write_once(l.path_str(), &l.name);
    // The run has checked the device and is waiting for the claim.
    std::thread::sleep(Duration::from_millis(400));
    let signalled = Instant::now();
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGINT,
    )
    .unwrap();
    let out = child.wait_with_output().unwrap();
    let ended_after = signalled.elapsed();
    drop(held);
    let err = stderr(&out);
    assert!(!out.status.success(), "{err}");
    assert!(
        err.contains(&format!(
            "cannot open {}: it is busy (mounted, held by md/dm/LVM, or opened exclusively by \
             another program); stopped while waiting for it",
            l.path_str()
        )),
        "{err}"
    );
    assert!(
        ended_after < Duration::from_millis(1000),
        "ended {ended_after:?} after the signal: {err}"
    );
    assert_eq!(
        file_bytes(Path::new(l.path_str()), 0, 65536),
        vec![0u8; 65536]
    );
}

/// Another program's exclusive claim on `dev` (`O_EXCL`, as mkfs or a mount takes it), held
/// until dropped.
fn claim_exclusively(dev: &str) -> std::fs::File {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_EXCL)
        .open(dev)
        .unwrap()
}

/// `disktriage run DEV --test seq-write --bs 64k --count 1 --destroy-data NAME`, started in
/// the background with its output captured.
fn spawn_write_once(dev: &str, name: &str) -> std::process::Child {
    Command::new(env!("CARGO_BIN_EXE_disktriage"))
        .env(HISTORY_ENV, history_dir())
        .args(["run", dev, "--test", "seq-write", "--bs", "64k"])
        .args(["--count", "1", "--destroy-data", name])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}
