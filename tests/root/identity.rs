//! The device an action lands on is the device the admin chose, not whatever holds its name
//! when the action runs. A loop device is detached and attached (under the same name) to
//! another image between the moment its identity was taken (the TUI's last inventory) and the
//! action: the scheduler switch, the read test and the write test are refused, and nothing
//! reaches the other image (its bytes, its scheduler and its I/O counters stay as they were).
//!
//! Root only (loop devices over files in /dev/shm); skipped otherwise.

#![allow(clippy::unwrap_used)] // tests may unwrap: a panic is the failure report

use crate::common;

use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::*;
use disktriage::bench::TestName;
use disktriage::bench::TestParams;
use disktriage::bench::{RunRequest, TempPoll, start_session, start_session_watched};
use disktriage::changes::{Changer, Journal};
use disktriage::event::{Cmd, Msg};
use disktriage::model::{ChosenDevice, Lifetime};
use disktriage::sys::{DriveControl, LinuxDrives, SysRoot};
use disktriage::tui::{Executor, RunStarter};

/// A scratch directory in /dev/shm (tmpfs, as the brief's images), removed on drop.
fn shm_scratch() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("disktriage-identity-")
        .tempdir_in("/dev/shm")
        .unwrap_or_else(|_| scratch())
}

/// An image of `size` bytes filled with a pattern of `seed` (so a write shows).
fn image(dir: &Path, name: &str, size: usize, seed: u8) -> PathBuf {
    let path = dir.join(name);
    let bytes: Vec<u8> = (0..size)
        .map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed))
        .collect();
    std::fs::write(&path, bytes).unwrap();
    path
}

/// The admin's choice: the device of that name in an inventory read now.
fn chosen(name: &str) -> ChosenDevice {
    SysRoot::host()
        .inventory()
        .unwrap()
        .chosen(name)
        .unwrap_or_else(|| panic!("{name} is not in the inventory"))
}

fn active(name: &str) -> String {
    let text = std::fs::read_to_string(format!("/sys/block/{name}/queue/scheduler")).unwrap();
    text.split_whitespace()
        .find_map(|w| w.strip_prefix('[').and_then(|w| w.strip_suffix(']')))
        .unwrap()
        .to_string()
}

fn another_scheduler(name: &str) -> String {
    let text = std::fs::read_to_string(format!("/sys/block/{name}/queue/scheduler")).unwrap();
    let current = active(name);
    text.split_whitespace()
        .map(|w| w.trim_matches(|c| c == '[' || c == ']'))
        .find(|s| *s != current)
        .expect("a second scheduler")
        .to_string()
}

/// The read and write I/O counts of `/sys/block/NAME/stat` (fields 1 and 5).
fn io_counts(name: &str) -> (u64, u64) {
    let text = std::fs::read_to_string(format!("/sys/class/block/{name}/stat")).unwrap();
    let f: Vec<u64> = text
        .split_whitespace()
        .map(|w| w.parse().unwrap())
        .collect();
    (f[0], f[4])
}

/// Loop device over A, its identity taken, then detached and attached to B under the same
/// name: the situation between the TUI's last refresh and the admin's key.
struct Swapped {
    _dir: tempfile::TempDir,
    l: LoopDev,
    chosen: ChosenDevice,
    b: PathBuf,
    b_bytes: Vec<u8>,
}

fn swapped() -> Swapped {
    let dir = shm_scratch();
    let a = image(dir.path(), "a.img", 8 << 20, 1);
    let b = image(dir.path(), "b.img", 8 << 20, 2);
    let mut l = LoopDev::attach(&a, &[]);
    let chosen = chosen(&l.name);
    assert_eq!(chosen.backing_file.as_deref(), a.to_str());
    l.reattach(&b);
    // The name and the number are the same: only the identity tells.
    let now = self::chosen(&l.name);
    assert_eq!(now.dev, chosen.dev);
    let b_bytes = std::fs::read(&b).unwrap();
    Swapped {
        _dir: dir,
        l,
        chosen,
        b,
        b_bytes,
    }
}

fn refusal_words(text: &str, s: &Swapped) {
    assert!(
        text.contains(&format!(
            "{} is no longer the device you chose ({} backing {}",
            s.l.name,
            s.chosen.dev.unwrap(),
            s.chosen.backing_file.as_deref().unwrap()
        )) && text.contains(&format!("now backing {}", s.b.display()))
            && text.contains("nothing was done"),
        "{text}"
    );
}

/// The executor the TUI runs, with the program's drives, a journaled changer and the
/// program's run starter.
fn executor(journal: &Path) -> (Executor, mpsc::Receiver<Msg>) {
    let (tx, rx) = mpsc::channel();
    let drives: Arc<dyn DriveControl> = Arc::new(LinuxDrives::host());
    let changer = Changer::new(
        Arc::clone(&drives),
        Journal::open(journal).unwrap(),
        Lifetime::Session,
    );
    let start: RunStarter = Arc::new(|root, request, stop, laid_out| {
        start_session_watched(root, request, Some(stop), Some(laid_out))
    });
    let exec = Executor::new(
        SysRoot::host(),
        tx,
        drives,
        Ok(Arc::new(Mutex::new(changer))),
        start,
    );
    (exec, rx)
}

#[test]
fn root_a_scheduler_switch_for_a_reattached_loop_device_is_refused() {
    if !root_or_skip("root_a_scheduler_switch_for_a_reattached_loop_device_is_refused") {
        return;
    }
    let s = swapped();
    let before = active(&s.l.name);
    let other = another_scheduler(&s.l.name);
    let journal = s._dir.path().join("journal");
    let (mut exec, rx) = executor(&journal);
    exec.execute(Cmd::SetScheduler {
        device: s.l.name.clone(),
        name: other.clone(),
        chosen: Some(s.chosen.clone()),
    });
    let msg = rx.recv_timeout(Duration::from_secs(10)).unwrap();
    let Msg::SchedulerSet { result, .. } = msg else {
        panic!("unexpected {msg:?}")
    };
    let e = result.expect_err("the scheduler of another device was switched");
    refusal_words(&e.to_string(), &s);
    assert_eq!(active(&s.l.name), before, "the scheduler of B was switched");
    assert_eq!(std::fs::read(&s.b).unwrap(), s.b_bytes);
    exec.shutdown();
}

/// The CLI's path (and the executor's after its check): a device read, then swapped before
/// the write reaches sysfs. The write goes through the device's sysfs directory once that is
/// found to be the device read.
#[test]
fn root_a_scheduler_write_checks_the_device_it_reaches() {
    if !root_or_skip("root_a_scheduler_write_checks_the_device_it_reaches") {
        return;
    }
    let dir = shm_scratch();
    let a = image(dir.path(), "a.img", 8 << 20, 1);
    let b = image(dir.path(), "b.img", 8 << 20, 2);
    let mut l = LoopDev::attach(&a, &[]);
    let drives = LinuxDrives::host();
    let read = drives.device(&l.name).unwrap();
    l.reattach(&b);
    let before = active(&l.name);
    let other = another_scheduler(&l.name);
    let e = drives
        .set_scheduler(&read, &other)
        .expect_err("the scheduler of another device was switched");
    assert!(
        e.to_string().contains("is no longer the device you chose"),
        "{e}"
    );
    assert_eq!(active(&l.name), before);
    // The device as it is now is switched: the check refuses only another device.
    let now = drives.device(&l.name).unwrap();
    drives.set_scheduler(&now, &other).unwrap();
    assert_eq!(active(&l.name), other);
}

fn short(test: TestName, s: &Swapped, confirm: bool) -> RunRequest {
    RunRequest {
        target: s.l.path.clone(),
        test,
        params: TestParams {
            time: Some(Duration::from_millis(200)),
            warmup: Some(Duration::ZERO),
            ..TestParams::default()
        },
        confirmation: confirm.then(|| s.l.name.clone()),
        temperature: TempPoll::Off,
        device: Some(s.chosen.clone()),
    }
}

/// Runs `request` as the TUI does (its executor, the program's starter) and returns what
/// the run answered: the refusal's words, or None when it started.
fn run_through_executor(s: &Swapped, request: RunRequest) -> Option<String> {
    let journal = s._dir.path().join("journal");
    let (mut exec, rx) = executor(&journal);
    exec.execute(Cmd::StartRun(Box::new(request)));
    let answer = loop {
        match rx.recv_timeout(Duration::from_secs(30)).unwrap() {
            Msg::RunRefused(why) => break Some(why),
            Msg::RunStarted { .. } => {
                exec.execute(Cmd::StopRun);
                break None;
            }
            _ => {}
        }
    };
    exec.shutdown();
    answer
}

#[test]
fn root_a_read_test_of_a_reattached_loop_device_is_refused_without_io() {
    if !root_or_skip("root_a_read_test_of_a_reattached_loop_device_is_refused_without_io") {
        return;
    }
    let s = swapped();
    let before = io_counts(&s.l.name);
    let why = run_through_executor(&s, short(TestName::SeqRead, &s, false))
        .expect("a read test ran on another device");
    refusal_words(&why, &s);
    assert_eq!(io_counts(&s.l.name), before, "I/O reached B");
}

#[test]
fn root_a_write_test_of_a_reattached_loop_device_is_refused() {
    if !root_or_skip("root_a_write_test_of_a_reattached_loop_device_is_refused") {
        return;
    }
    let s = swapped();
    let before = io_counts(&s.l.name);
    let why = run_through_executor(&s, short(TestName::SeqWrite, &s, true))
        .expect("a write test ran on another device");
    refusal_words(&why, &s);
    assert_eq!(io_counts(&s.l.name), before, "I/O reached B");
    assert_eq!(std::fs::read(&s.b).unwrap(), s.b_bytes, "B was written");
    // The same request through the CLI's entry (session::start) is refused the same way.
    let e = start_session(&SysRoot::host(), &short(TestName::SeqWrite, &s, true))
        .err()
        .expect("a write test ran on another device");
    refusal_words(&format!("{e:#}"), &s);
    assert_eq!(std::fs::read(&s.b).unwrap(), s.b_bytes, "B was written");
}

/// The device as chosen still there: the checks let the run start (they refuse only another
/// device).
#[test]
fn root_the_chosen_device_still_runs() {
    if !root_or_skip("root_the_chosen_device_still_runs") {
        return;
    }
    let dir = shm_scratch();
    let a = image(dir.path(), "a.img", 8 << 20, 1);
    let l = LoopDev::attach(&a, &[]);
    let request = RunRequest {
        target: l.path.clone(),
        test: TestName::SeqRead,
        params: TestParams {
            time: Some(Duration::from_millis(100)),
            warmup: Some(Duration::ZERO),
            ..TestParams::default()
        },
        confirmation: None,
        temperature: TempPoll::Off,
        device: Some(chosen(&l.name)),
    };
    let report = start_session(&SysRoot::host(), &request)
        .unwrap()
        .finish()
        .unwrap();
    assert!(report.error().is_none(), "{:?}", report.error());
}

/// An image with one partition (the rest of the image), its bytes a pattern of `seed`.
fn partitioned(dir: &Path, name: &str, seed: u8) -> PathBuf {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let path = image(dir, name, 16 << 20, seed);
    let mut sfdisk = Command::new("sfdisk")
        .args(["-q", path.to_str().unwrap()])
        .stdin(Stdio::piped())
        .spawn()
        .unwrap();
    sfdisk
        .stdin
        .take()
        .unwrap()
        .write_all(b"label: dos\n,,L\n")
        .unwrap();
    assert!(sfdisk.wait().unwrap().success());
    path
}

/// A partition chosen on one disk is not the partition of the same name on the disk attached
/// under the disk's name since: a read test of it is refused, no I/O reaches the new one. The
/// partition of the disk chosen still runs.
#[test]
fn root_a_partition_of_a_replaced_disk_is_another_partition() {
    if !root_or_skip("root_a_partition_of_a_replaced_disk_is_another_partition") {
        return;
    }
    let dir = shm_scratch();
    let a = partitioned(dir.path(), "a.img", 1);
    let b = partitioned(dir.path(), "b.img", 2);
    let mut l = LoopDev::attach(&a, &["-P"]);
    let parts = l.expose_partitions();
    let p1 = parts.first().expect("a partition").clone();
    let chosen_part = chosen(&p1);
    assert_eq!(chosen_part.disk.as_deref(), Some(l.name.as_str()));
    let request = RunRequest {
        target: PathBuf::from("/dev").join(&p1),
        test: TestName::SeqRead,
        params: TestParams {
            time: Some(Duration::from_millis(100)),
            warmup: Some(Duration::ZERO),
            ..TestParams::default()
        },
        confirmation: None,
        temperature: TempPoll::Off,
        device: Some(chosen_part.clone()),
    };
    // The partition chosen, still there: it runs.
    let report = start_session(&SysRoot::host(), &request)
        .unwrap()
        .finish()
        .unwrap();
    assert!(report.error().is_none(), "{:?}", report.error());

    l.reattach(&b);
    let parts = l.expose_partitions();
    assert!(parts.contains(&p1), "{parts:?}");
    let b_bytes = std::fs::read(&b).unwrap();
    let before = io_counts(&p1);
    let e = start_session(&SysRoot::host(), &request)
        .err()
        .expect("a read test ran on the new disk's partition");
    let text = format!("{e:#}");
    assert!(
        text.contains(&format!("{p1} is no longer the device you chose")),
        "{text}"
    );
    assert!(text.contains("nothing was done"), "{text}");
    assert_eq!(io_counts(&p1), before, "I/O reached the new partition");
    assert_eq!(std::fs::read(&b).unwrap(), b_bytes);
}

/// Drive commands (cache switch, self-test, SMART: SG_IO and NVMe ioctls) open the device node
/// first: a node that is another device than the one read is refused before any command
/// reaches it. `raw_pages` (`debug pages`) is the one such open a loop device gets to.
#[test]
fn root_a_drive_command_opens_only_the_device_read() {
    if !root_or_skip("root_a_drive_command_opens_only_the_device_read") {
        return;
    }
    let dir = shm_scratch();
    let a = image(dir.path(), "a.img", 8 << 20, 1);
    let b = image(dir.path(), "b.img", 8 << 20, 2);
    let mut l = LoopDev::attach(&a, &[]);
    let drives = LinuxDrives::host();
    let read = drives.device(&l.name).unwrap();
    let pages = drives.raw_pages(&read);
    assert!(
        !pages
            .iter()
            .any(|p| p.bytes.as_ref().is_err_and(|e| e.contains("no longer"))),
        "{pages:?}"
    );
    l.reattach(&b);
    let pages = drives.raw_pages(&read);
    let [page] = pages.as_slice() else {
        panic!("{pages:?}")
    };
    assert_eq!(page.name, "open");
    let e = page
        .bytes
        .as_ref()
        .expect_err("the other device was opened");
    assert!(
        e.contains(&format!("{} is no longer the device you chose", l.name))
            && e.contains(&format!("now backing {}", b.display())),
        "{e}"
    );
}

/// Between the check of a loop device's sysfs directory and the write through it, the loop
/// device cannot be attached to another file: its node is held open, so a detach waits for
/// the last close and an attach to another file is refused as busy. (A loop device keeps its
/// sysfs directory across a re-attach: the directory alone would not tell.)
#[test]
fn root_a_loop_device_checked_for_a_write_cannot_be_reattached_before_it() {
    if !root_or_skip("root_a_loop_device_checked_for_a_write_cannot_be_reattached_before_it") {
        return;
    }
    use std::process::Command;
    let dir = shm_scratch();
    let a = image(dir.path(), "a.img", 8 << 20, 1);
    let b = image(dir.path(), "b.img", 8 << 20, 2);
    let l = LoopDev::attach(&a, &[]);
    let root = SysRoot::host();
    let checked = root.open_chosen_dir(&chosen(&l.name)).unwrap();
    // The racer: detach and attach to B under the same name.
    let names = common::loop_names();
    let _ = Command::new("losetup").args(["-d", l.path_str()]).status();
    let attach_b = Command::new("losetup")
        .args([l.path_str(), b.to_str().unwrap()])
        .output()
        .unwrap();
    drop(names);
    assert!(
        !attach_b.status.success(),
        "{} was attached to B while checked",
        l.name
    );
    let backing = std::fs::read_to_string(format!("/sys/block/{}/loop/backing_file", l.name))
        .unwrap_or_default();
    assert_eq!(backing.trim(), a.to_str().unwrap());
    let other = another_scheduler(&l.name);
    checked.write("queue/scheduler", &other).unwrap();
    drop(checked);
    // The deferred detach happens at the last close.
    let gone = poll(50, || {
        std::fs::read_to_string(format!("/sys/block/{}/loop/backing_file", l.name))
            .is_err()
            .then_some(())
    });
    assert!(gone.is_some(), "the detach did not follow the close");
}
