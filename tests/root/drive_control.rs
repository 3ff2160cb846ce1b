//! `cache`, `smart`, `sched`, `restore` and the restore paths of a session (`debug hold`:
//! SIGKILL, SIGTERM, SIGINT, panic, normal end) against loop devices this test creates (root
//! only). Loop devices have schedulers but no drive cache and no SMART, which is also checked.
//! Each test keeps its journal in a scratch directory (`--journal-dir`), never in /run.

#![allow(clippy::unwrap_used)] // tests may unwrap: a panic is the failure report

use crate::common;
use common::{HISTORY_ENV, history_dir};

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};

use common::{LoopDev, root_or_skip, scratch};

fn run(journal: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_disktriage"))
        .env(HISTORY_ENV, history_dir())
        .arg("--journal-dir")
        .arg(journal)
        .args(args)
        .output()
        .expect("run disktriage")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Whitespace runs made one space: prose checks survive word wrapping.
fn flat(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn active(name: &str) -> String {
    let text = std::fs::read_to_string(format!("/sys/block/{name}/queue/scheduler")).unwrap();
    text.split_whitespace()
        .find_map(|w| w.strip_prefix('[').and_then(|w| w.strip_suffix(']')))
        .unwrap()
        .to_string()
}

fn set_active(name: &str, sched: &str) {
    std::fs::write(format!("/sys/block/{name}/queue/scheduler"), sched).unwrap();
}

/// A scheduler other than the active one, offered by the kernel.
fn another_scheduler(name: &str) -> String {
    let text = std::fs::read_to_string(format!("/sys/block/{name}/queue/scheduler")).unwrap();
    let current = active(name);
    text.split_whitespace()
        .map(|w| w.trim_matches(|c| c == '[' || c == ']'))
        .find(|s| *s != current && *s != "none")
        .or_else(|| {
            text.split_whitespace()
                .map(|w| w.trim_matches(|c| c == '[' || c == ']'))
                .find(|s| *s != current)
        })
        .expect("a second scheduler")
        .to_string()
}

#[test]
fn root_sched_switch_journal_and_restore() {
    if !root_or_skip("root_sched_switch_journal_and_restore") {
        return;
    }
    let dir = scratch();
    let journal = dir.path().join("journal");
    let l = LoopDev::new(dir.path(), 16 << 20, 512);
    let original = active(&l.name);
    let other = another_scheduler(&l.name);

    let out = run(&journal, &["sched", &l.name]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).starts_with(&format!("{}: I/O scheduler {original} (offered:", l.name)),
        "{}",
        stdout(&out)
    );

    let out = run(&journal, &["sched", l.path_str(), &other]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(active(&l.name), other, "switched");
    let text = stdout(&out);
    assert!(
        text.contains(&format!("I/O scheduler switched to {other} (read back)")),
        "{text}"
    );
    assert!(
        flat(&text).contains("`disktriage restore` puts it back"),
        "{text}"
    );
    assert!(journal.join("journal.json").exists());

    // An unknown name: an error that lists the offered ones, nothing changed or recorded.
    let out = run(&journal, &["sched", &l.name, "nosuch"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("unknown I/O scheduler \"nosuch\"")
            && stderr(&out).contains("available: "),
        "{}",
        stderr(&out)
    );
    assert_eq!(active(&l.name), other);

    let out = run(&journal, &["restore", "--list"]);
    assert!(
        stdout(&out).contains(&format!("{}: scheduler back to {original}", l.name)),
        "{}",
        stdout(&out)
    );
    let out = run(&journal, &["restore"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        stdout(&out),
        format!(
            "{}: scheduler put back to {original} (was {other}; read back)\n",
            l.name
        )
    );
    assert_eq!(active(&l.name), original);
    assert!(!journal.join("journal.json").exists(), "journal emptied");
    let out = run(&journal, &["restore"]);
    assert!(stdout(&out).starts_with("Nothing to restore"));
}

#[test]
fn root_keep_records_nothing() {
    if !root_or_skip("root_keep_records_nothing") {
        return;
    }
    let dir = scratch();
    let journal = dir.path().join("journal");
    let l = LoopDev::new(dir.path(), 16 << 20, 512);
    let original = active(&l.name);
    let other = another_scheduler(&l.name);
    let out = run(&journal, &["sched", &l.name, &other, "--keep", "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["change"]["journal"]["kind"], "kept");
    assert!(!journal.join("journal.json").exists());
    let out = run(&journal, &["restore"]);
    assert!(stdout(&out).starts_with("Nothing to restore"));
    assert_eq!(active(&l.name), other);
    set_active(&l.name, &original);
}

#[test]
fn root_partition_resolves_to_its_disk() {
    if !root_or_skip("root_partition_resolves_to_its_disk") {
        return;
    }
    let dir = scratch();
    let journal = dir.path().join("journal");
    let image = dir.path().join("parted.img");
    std::fs::File::create(&image)
        .and_then(|f| f.set_len(32 << 20))
        .unwrap();
    let mut sfdisk = Command::new("sfdisk")
        .args(["-q", image.to_str().unwrap()])
        .stdin(Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    sfdisk
        .stdin
        .take()
        .unwrap()
        .write_all(b"label: gpt\n,8M,L\n,,L\n")
        .unwrap();
    assert!(sfdisk.wait().unwrap().success());
    let l = LoopDev::attach(&image, &["-P"]);
    let parts = l.expose_partitions();
    let p2 = parts.last().unwrap().clone();
    let other = another_scheduler(&l.name);
    let original = active(&l.name);

    let out = run(
        &journal,
        &["sched", &format!("/dev/{p2}"), &other, "--json"],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["device"], l.name.as_str());
    assert_eq!(doc["partition"], p2.as_str());
    assert_eq!(active(&l.name), other);
    let out = run(&journal, &["cache", &p2]);
    assert!(
        stdout(&out).starts_with(&format!(
            "{p2} is a partition: the cache belongs to its disk {}.",
            l.name
        )),
        "{}",
        stdout(&out)
    );
    run(&journal, &["restore"]);
    assert_eq!(active(&l.name), original);
}

#[test]
fn root_loop_has_no_drive_cache_and_no_smart() {
    if !root_or_skip("root_loop_has_no_drive_cache_and_no_smart") {
        return;
    }
    let dir = scratch();
    let journal = dir.path().join("journal");
    let l = LoopDev::new(dir.path(), 16 << 20, 512);

    let out = run(&journal, &["cache", &l.name]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.contains("Drive write cache    not supported on loop"),
        "{text}"
    );
    assert!(text.contains("Kernel flush policy  write "), "{text}");

    let out = run(&journal, &["cache", &l.name, "off"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        stderr(&out),
        format!(
            "disktriage: cannot turn the write cache of {} off: drive write cache control \
             not supported on loop\n",
            l.name
        )
    );
    assert!(!journal.join("journal.json").exists());

    // No drive answered: not a pass for a script that asks whether the disk is healthy.
    let out = run(&journal, &["smart", &l.name]);
    assert_eq!(out.status.code(), Some(5));
    assert_eq!(
        stdout(&out),
        format!("{} (loop): SMART not available on loop\n", l.name)
    );
    let out = run(&journal, &["smart", &l.name, "--json"]);
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["verdict"], "UNAVAILABLE");

    let out = run(&journal, &["cache", "no-such-disk"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("no block device \"no-such-disk\""));
}

#[test]
fn root_changes_need_root_and_say_so() {
    if !root_or_skip("root_changes_need_root_and_say_so") {
        return;
    }
    let dir = scratch();
    let l = LoopDev::new(dir.path(), 16 << 20, 512);
    let original = active(&l.name);
    let other = another_scheduler(&l.name);
    // The journal directory would be /run/disktriage; give nobody one it can write, so the
    // failure is the scheduler's.
    let journal = dir.path().join("nobody-journal");
    std::fs::create_dir(&journal).unwrap();
    Command::new("chown")
        .args(["65534:65534", journal.to_str().unwrap()])
        .status()
        .unwrap();
    std::fs::set_permissions(
        dir.path(),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let out = Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
        .arg(env!("CARGO_BIN_EXE_disktriage"))
        .env(HISTORY_ENV, history_dir())
        .arg("--journal-dir")
        .arg(&journal)
        .args(["sched", &l.name, &other])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("needs root"), "{}", stderr(&out));
    assert_eq!(active(&l.name), original, "nothing changed");
    assert!(
        !journal.join("journal.json").exists(),
        "a refused change leaves no entry"
    );
}

#[test]
fn root_a_corrupt_journal_is_left_alone() {
    if !root_or_skip("root_a_corrupt_journal_is_left_alone") {
        return;
    }
    let dir = scratch();
    let journal = dir.path().join("journal");
    std::fs::create_dir(&journal).unwrap();
    std::fs::write(journal.join("journal.json"), "garbage\x1b[2J").unwrap();
    let out = run(&journal, &["restore"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("is unreadable"), "{}", stderr(&out));
    assert_eq!(
        std::fs::read(journal.join("journal.json")).unwrap(),
        b"garbage\x1b[2J"
    );
}

/// A `debug hold` session on a loop device's scheduler, started and waited for.
struct Hold {
    child: Child,
    lines: Vec<String>,
}

impl Hold {
    fn start(journal: &Path, dev: &str, sched: &str, extra: &[&str]) -> Hold {
        let mut child = common::disktriage_with_default_signals()
            .env(HISTORY_ENV, history_dir())
            .arg("--journal-dir")
            .arg(journal)
            .args(["debug", "hold", dev, "--sched", sched])
            .args(extra)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut lines = Vec::new();
        let mut reader = BufReader::new(child.stdout.take().unwrap());
        loop {
            let mut line = String::new();
            if reader.read_line(&mut line).unwrap() == 0 {
                break;
            }
            let holding = line.starts_with("holding pid");
            lines.push(line);
            if holding {
                break;
            }
        }
        Hold { child, lines }
    }

    fn signal(&self, sig: &str) {
        let status = Command::new("kill")
            .args([&format!("-{sig}"), &self.child.id().to_string()])
            .status()
            .unwrap();
        assert!(status.success());
    }

    /// Waits; returns the exit code (None when killed by a signal) and stderr.
    fn finish(self) -> (Option<i32>, String) {
        let out = self.child.wait_with_output().unwrap();
        (out.status.code(), stderr(&out))
    }
}

#[test]
fn root_session_killed_is_restored_by_restore() {
    if !root_or_skip("root_session_killed_is_restored_by_restore") {
        return;
    }
    let dir = scratch();
    let journal = dir.path().join("journal");
    let l = LoopDev::new(dir.path(), 16 << 20, 512);
    let original = active(&l.name);
    let other = another_scheduler(&l.name);

    let hold = Hold::start(&journal, &l.name, &other, &[]);
    assert!(
        hold.lines.iter().any(|l| l.starts_with("holding pid")),
        "{:?}",
        hold.lines
    );
    assert_eq!(active(&l.name), other);
    // While it runs, `restore` leaves its change to it.
    let out = run(&journal, &["restore"]);
    assert!(
        stdout(&out).contains("is still running"),
        "{}",
        stdout(&out)
    );
    assert_eq!(active(&l.name), other);

    hold.signal("KILL");
    let (code, _) = hold.finish();
    assert_eq!(code, None, "killed");
    assert_eq!(active(&l.name), other, "SIGKILL restores nothing");
    let out = run(&journal, &["sched", &l.name]);
    assert!(
        flat(&stdout(&out)).contains("left by a disktriage that did not exit cleanly"),
        "{}",
        stdout(&out)
    );
    let out = run(&journal, &["restore"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).contains(&format!("scheduler put back to {original}")),
        "{}",
        stdout(&out)
    );
    assert_eq!(active(&l.name), original);
}

#[test]
fn root_session_restores_on_sigterm_sigint_panic_and_exit() {
    if !root_or_skip("root_session_restores_on_sigterm_sigint_panic_and_exit") {
        return;
    }
    let dir = scratch();
    let journal = dir.path().join("journal");
    let l = LoopDev::new(dir.path(), 16 << 20, 512);
    let original = active(&l.name);
    let other = another_scheduler(&l.name);

    for (how, expect_code) in [("TERM", 143), ("INT", 130), ("HUP", 129)] {
        let hold = Hold::start(&journal, &l.name, &other, &[]);
        assert_eq!(active(&l.name), other, "{how}");
        hold.signal(how);
        let (code, err) = hold.finish();
        assert_eq!(code, Some(expect_code), "SIG{how}: {err}");
        assert!(
            err.contains(&format!("SIG{how}: putting back")),
            "SIG{how}: {err}"
        );
        assert_eq!(active(&l.name), original, "SIG{how} restored");
        assert!(!journal.join("journal.json").exists(), "SIG{how}");
    }

    let hold = Hold::start(&journal, &l.name, &other, &["--panic"]);
    let (code, err) = hold.finish();
    assert_eq!(code, Some(101), "{err}");
    assert!(err.contains("panic: putting back"), "{err}");
    assert_eq!(active(&l.name), original, "restored on panic");

    let hold = Hold::start(&journal, &l.name, &other, &["--seconds", "0"]);
    let (code, err) = hold.finish();
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(active(&l.name), original, "restored at the end");
    assert!(!journal.join("journal.json").exists());
}

#[test]
fn root_nohup_keeps_sighup_ignored() {
    if !root_or_skip("root_nohup_keeps_sighup_ignored") {
        return;
    }
    let dir = scratch();
    let journal = dir.path().join("journal");
    let l = LoopDev::new(dir.path(), 16 << 20, 512);
    let original = active(&l.name);
    let other = another_scheduler(&l.name);
    // `nohup` ignores SIGHUP before exec: the session must keep ignoring it.
    let mut child = Command::new("nohup")
        .arg(env!("CARGO_BIN_EXE_disktriage"))
        .env(HISTORY_ENV, history_dir())
        .arg("--journal-dir")
        .arg(&journal)
        .args([
            "debug",
            "hold",
            &l.name,
            "--sched",
            &other,
            "--seconds",
            "2",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut reader = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    while !line.starts_with("holding pid") {
        line.clear();
        assert!(reader.read_line(&mut line).unwrap() > 0, "no holding line");
    }
    Command::new("kill")
        .args(["-HUP", &child.id().to_string()])
        .status()
        .unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(0), "SIGHUP ignored, normal end");
    assert_eq!(active(&l.name), original);
}

/// Two schedulers other than the active one (and other than each other), if offered.
fn two_other_schedulers(name: &str) -> Option<(String, String)> {
    let text = std::fs::read_to_string(format!("/sys/block/{name}/queue/scheduler")).unwrap();
    let current = active(name);
    let others: Vec<String> = text
        .split_whitespace()
        .map(|w| w.trim_matches(|c| c == '[' || c == ']').to_string())
        .filter(|s| *s != current)
        .collect();
    (others.len() >= 2).then(|| (others[0].clone(), others[1].clone()))
}

/// The case on a real loop device: a session switches the scheduler, a single-shot
/// `sched` switches it again, the session ends, then `restore`: the device ends where it
/// started, and the session said why it left the later change alone.
#[test]
fn root_a_session_leaves_a_later_change_and_restore_puts_back_the_first_original() {
    if !root_or_skip(
        "root_a_session_leaves_a_later_change_and_restore_puts_back_the_first_original",
    ) {
        return;
    }
    let dir = scratch();
    let journal = dir.path().join("journal");
    let l = LoopDev::new(dir.path(), 16 << 20, 512);
    let original = active(&l.name);
    let Some((by_session, by_single_shot)) = two_other_schedulers(&l.name) else {
        common::skip(
            "root_a_session_leaves_a_later_change_and_restore_puts_back_the_first_original",
            "the kernel offers fewer than three schedulers for loop devices",
        );
        return;
    };

    let hold = Hold::start(&journal, &l.name, &by_session, &[]);
    assert_eq!(active(&l.name), by_session);
    let out = run(&journal, &["sched", &l.name, &by_single_shot]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        flat(&stdout(&out)).contains(&format!(
            "the original ({original}) is recorded in {} by an earlier change",
            journal.display()
        )),
        "{}",
        stdout(&out)
    );
    hold.signal("TERM");
    let (code, err) = hold.finish();
    assert_eq!(code, Some(143), "{err}");
    assert!(
        flat(&err).contains(&format!(
            "{}: scheduler left as it is: it is {by_single_shot} now, set after this session \
             by someone else (this session set {by_session}); the original ({original}) stays \
             recorded for `disktriage restore`",
            l.name
        )),
        "{err}"
    );
    assert_eq!(
        active(&l.name),
        by_single_shot,
        "the later change is left alone"
    );

    let out = run(&journal, &["restore"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        stdout(&out),
        format!(
            "{}: scheduler put back to {original} (was {by_single_shot}; read back)\n",
            l.name
        )
    );
    assert_eq!(active(&l.name), original);
    assert!(!journal.join("journal.json").exists());
}

/// A loop device detached and attached to another image between the change and `restore`
/// is another device: nothing is written to it, and `restore` says why.
#[test]
fn root_a_reattached_loop_device_is_not_restored() {
    if !root_or_skip("root_a_reattached_loop_device_is_not_restored") {
        return;
    }
    let dir = scratch();
    let journal = dir.path().join("journal");
    let mut l = LoopDev::new(dir.path(), 16 << 20, 512);
    let other = another_scheduler(&l.name);
    let out = run(&journal, &["sched", &l.name, &other]);
    assert!(out.status.success(), "{}", stderr(&out));

    let second = dir.path().join("second.img");
    std::fs::File::create(&second)
        .and_then(|f| f.set_len(16 << 20))
        .unwrap();
    l.reattach(&second);
    // Whatever the re-attached device has now, `restore` must not change it.
    let before = active(&l.name);
    let out = run(&journal, &["restore"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = flat(&stdout(&out));
    assert!(
        text.starts_with(&format!(
            "{}: scheduler not restored, entry dropped: {} is a different device now (diskseq ",
            l.name, l.name
        )),
        "{text}"
    );
    assert!(
        text.contains(&format!("backing file {}", second.display()))
            && text.ends_with("not the device that was changed"),
        "{text}"
    );
    assert_eq!(active(&l.name), before, "nothing written to another device");
    assert!(!journal.join("journal.json").exists());
}

/// A journal entry whose device name leads outside /sys/block (`../../tmp/...`) is refused:
/// nothing is written there, the entry stays, `restore` fails and says why.
#[test]
fn root_a_crafted_device_name_writes_nothing_outside_sys() {
    if !root_or_skip("root_a_crafted_device_name_writes_nothing_outside_sys") {
        return;
    }
    let dir = scratch();
    let journal = dir.path().join("journal");
    std::fs::create_dir(&journal).unwrap();
    let fake = dir.path().join("x");
    std::fs::create_dir_all(fake.join("queue")).unwrap();
    std::fs::write(fake.join("dev"), "7:99\n").unwrap();
    std::fs::write(fake.join("queue/scheduler"), "none [bfq] mq-deadline\n").unwrap();
    // /sys/block/../../<scratch>/x is the scratch directory's x.
    let name = format!("../..{}", fake.display());
    let doc = serde_json::json!({
        "format": "disktriage-journal", "version": 1, "next_id": 2,
        "entries": [{
            "id": 1, "device": {"name": name, "dev": null, "serial": null},
            "original": {"setting": "scheduler", "name": "mq-deadline"},
            "lifetime": "persisted", "owner": {"pid": 99999001, "start_time": 1},
            "recorded_at": 0
        }]
    });
    std::fs::write(journal.join("journal.json"), doc.to_string()).unwrap();
    let out = run(&journal, &["restore"]);
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    assert!(
        flat(&stdout(&out)).contains(&format!(
            "NOT put back to mq-deadline: refused: {name:?} is not a kernel device name"
        )),
        "{}",
        stdout(&out)
    );
    assert_eq!(
        std::fs::read_to_string(fake.join("queue/scheduler")).unwrap(),
        "none [bfq] mq-deadline\n"
    );
    assert!(journal.join("journal.json").exists(), "the entry stays");
}

/// A journal directory others can write is refused before anything is changed.
#[test]
fn root_an_unsafe_journal_directory_is_refused() {
    if !root_or_skip("root_an_unsafe_journal_directory_is_refused") {
        return;
    }
    use std::os::unix::fs::PermissionsExt;
    let dir = scratch();
    let journal = dir.path().join("journal");
    std::fs::create_dir(&journal).unwrap();
    std::fs::set_permissions(&journal, std::fs::Permissions::from_mode(0o777)).unwrap();
    let l = LoopDev::new(dir.path(), 16 << 20, 512);
    let original = active(&l.name);
    let other = another_scheduler(&l.name);
    let refusal = format!(
        "refusing the journal directory {}: it is writable by others (mode 0777); it must be \
         owned by root and not group/world-writable",
        journal.display()
    );
    let out = run(&journal, &["sched", &l.name, &other]);
    assert_eq!(out.status.code(), Some(1));
    assert!(flat(&stderr(&out)).contains(&refusal), "{}", stderr(&out));
    assert_eq!(active(&l.name), original, "nothing changed");
    let out = run(&journal, &["restore"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(flat(&stderr(&out)).contains(&refusal), "{}", stderr(&out));
    assert_eq!(std::fs::read_dir(&journal).unwrap().count(), 0);
}

/// `restore` and a single-shot `sched` of the same device started at the same moment, as
/// separate processes: whichever wins, a change that stays is recorded. Before the journal's
/// lock covered the whole change, the entry was lost within the first 3 rounds (3 runs
/// measured); 50 rounds take about 7 s.
#[test]
fn root_restore_racing_sched_loses_no_entry() {
    if !root_or_skip("root_restore_racing_sched_loses_no_entry") {
        return;
    }
    let dir = scratch();
    let journal = dir.path().join("journal");
    let l = LoopDev::new(dir.path(), 16 << 20, 512);
    let original = active(&l.name);
    let Some((first, second)) = two_other_schedulers(&l.name) else {
        common::skip(
            "root_restore_racing_sched_loses_no_entry",
            "the kernel offers fewer than three schedulers for loop devices",
        );
        return;
    };
    let spawn = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_disktriage"))
            .env(HISTORY_ENV, history_dir())
            .arg("--journal-dir")
            .arg(&journal)
            .args(args)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap()
    };
    for round in 0..50 {
        let out = run(&journal, &["sched", &l.name, &first]);
        assert!(out.status.success(), "round {round}: {}", stderr(&out));
        let mut sched = spawn(&["sched", &l.name, &second]);
        let mut restore = spawn(&["restore"]);
        assert!(sched.wait().unwrap().success(), "round {round}");
        assert!(restore.wait().unwrap().success(), "round {round}");
        let now = active(&l.name);
        let recorded = std::fs::read_to_string(journal.join("journal.json")).ok();
        if now == original {
            assert_eq!(recorded, None, "round {round}: restored, entry left");
        } else {
            assert_eq!(now, second, "round {round}");
            let text = recorded.unwrap_or_else(|| {
                panic!("round {round}: {second} stayed and its original is not recorded")
            });
            assert!(
                text.contains(&format!("\"name\": \"{original}\"")),
                "{text}"
            );
            let out = run(&journal, &["restore"]);
            assert!(out.status.success(), "round {round}: {}", stderr(&out));
            assert_eq!(active(&l.name), original, "round {round}");
        }
    }
}
