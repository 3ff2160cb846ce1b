//! `run --sweep-sched` and `--sweep-cache` on loop devices this test creates (root only):
//! a sweep over every scheduler gives a row per scheduler and puts the one found at start
//! back; SIGINT and SIGTERM sent to the real binary in the middle of a sweep stop it and the
//! scheduler still comes back; after a SIGKILL `disktriage restore` puts it back from the
//! journal; a cache sweep on a loop device is refused with the reason. Each test keeps its
//! journal in a scratch directory (`--journal-dir`), never in /run.

#![allow(clippy::unwrap_used)] // tests may unwrap: a panic is the failure report

use crate::common;

use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::{LoopDev, root_or_skip, scratch};

const MIB: u64 = 1 << 20;

fn command(journal: &Path, args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_disktriage"));
    c.env(common::HISTORY_ENV, common::history_dir())
        .arg("--journal-dir")
        .arg(journal)
        .args(args);
    c
}

fn run(journal: &Path, args: &[&str]) -> Output {
    command(journal, args).output().expect("run disktriage")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Whitespace runs made one space: prose checks survive word wrapping.
fn flat(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn offered(name: &str) -> Vec<String> {
    std::fs::read_to_string(format!("/sys/block/{name}/queue/scheduler"))
        .unwrap()
        .split_whitespace()
        .map(|w| w.trim_matches(|c| c == '[' || c == ']').to_string())
        .collect()
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

/// A loop device whose scheduler at start is not the kernel's default, so that putting
/// back the default by accident would be seen.
fn device(dir: &Path) -> Option<LoopDev> {
    let l = LoopDev::new(dir, 64 * MIB, 512);
    let offered = offered(&l.name);
    if offered.len() < 2 {
        common::skip(
            "root_sweep",
            "this kernel offers a single scheduler for loop",
        );
        return None;
    }
    if offered.iter().any(|s| s == "mq-deadline") {
        set_active(&l.name, "mq-deadline");
    }
    Some(l)
}

fn journal_is_empty(journal: &Path) -> bool {
    match std::fs::read_to_string(journal.join("journal.json")) {
        Err(_) => true,
        Ok(s) => {
            let doc: serde_json::Value = serde_json::from_str(&s).unwrap();
            doc["entries"].as_array().is_none_or(|e| e.is_empty())
        }
    }
}

#[test]
fn root_sched_sweep_over_every_scheduler_puts_the_first_back() {
    if !root_or_skip("root_sched_sweep_over_every_scheduler_puts_the_first_back") {
        return;
    }
    let dir = scratch();
    let journal = dir.path().join("journal");
    let Some(l) = device(dir.path()) else { return };
    let start = active(&l.name);
    let all = offered(&l.name);

    let out = run(
        &journal,
        &[
            "run",
            l.path_str(),
            "--test",
            "seq-read",
            // Long enough for 100 I/Os of 1 MiB on a loaded machine: a run with fewer has a
            // low-count rate, which a sweep leaves out of its row (1 value instead of 2).
            "--time",
            "1s",
            "--warmup",
            "0",
            "--sweep-sched",
            "--repeats",
            "2",
            "--json",
        ],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    // Every offered scheduler, the one at start first, each measured twice.
    let settings: Vec<String> = doc["settings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap().to_string())
        .collect();
    assert_eq!(settings[0], start);
    let mut sorted = settings.clone();
    sorted.sort();
    let mut expected = all.clone();
    expected.sort();
    assert_eq!(sorted, expected, "every offered scheduler");
    assert_eq!(doc["runs_done"], 2 * all.len());
    assert_eq!(doc["complete"], true);
    let rows = doc["tests"][0]["rows"].as_array().unwrap();
    assert_eq!(rows.len(), all.len());
    for row in rows {
        let values = row["values"].as_array().unwrap();
        assert_eq!(values.len(), 2, "{row}");
        assert!(values.iter().all(|v| v.as_f64().unwrap() > 0.0), "{row}");
        assert!(row["figure"]["spread_pct"].is_number(), "{row}");
    }
    assert!(rows[0]["delta"].is_null());
    assert!(rows[1]["delta"]["significance"].is_string());
    let verdict = doc["verdicts"][0].as_str().unwrap();
    assert!(
        verdict.starts_with("winner: ")
            || verdict
                == format!(
                    "no scheduler is better beyond the noise than {start} (the one at start)"
                ),
        "{verdict}"
    );
    // Put back, read back, and nothing left in the journal.
    assert_eq!(active(&l.name), start);
    assert!(journal_is_empty(&journal));
    assert_eq!(doc["restored"][0]["result"], "restored");
    assert_eq!(doc["restored"][0]["now"], start.as_str());

    // The table as an admin reads it.
    let out = run(
        &journal,
        &[
            "run",
            l.path_str(),
            "--test",
            "rand-read",
            "--time",
            "200ms",
            "--warmup",
            "0",
            "--sweep-sched",
            "--repeats",
            "1",
        ],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let table = text(&out.stdout);
    assert!(
        table.starts_with(&format!(
            "Scheduler sweep of {}: rand-read, 1 repeat of each value, interleaved",
            l.name
        )),
        "{table}"
    );
    assert!(
        table
            .lines()
            .any(|line| flat(line) == "SCHEDULER IOPS SPREAD DELTA BEYOND NOISE"),
        "{table}"
    );
    for s in &all {
        assert!(
            table.lines().any(|line| line.starts_with(s.as_str())),
            "no row for {s}: {table}"
        );
    }
    assert!(table.contains(&format!("{start} *")), "{table}");
    assert!(
        flat(&table).contains("no winner: with 1 repeat the noise is unknown"),
        "{table}"
    );
    assert!(
        table.contains(&format!("{}: scheduler put back to {start}", l.name)),
        "{table}"
    );
    assert_eq!(active(&l.name), start);
    assert!(journal_is_empty(&journal));
}

/// Starts a long sweep and waits until it has switched away from the scheduler at start
/// (the second value's run is in progress).
fn sweep_in_progress(journal: &Path, l: &LoopDev, start: &str) -> Child {
    let child = command(
        journal,
        &[
            "run",
            l.path_str(),
            "--test",
            "seq-read",
            "--time",
            "2s",
            "--warmup",
            "0",
            "--sweep-sched",
            "--repeats",
            "3",
        ],
    )
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .spawn()
    .expect("start disktriage");
    let deadline = Instant::now() + Duration::from_secs(30);
    while active(&l.name) == start {
        assert!(Instant::now() < deadline, "the sweep never switched");
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(300));
    child
}

fn wait(child: Child) -> Output {
    let mut child = child;
    let deadline = Instant::now() + Duration::from_secs(20);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("the sweep did not end after the signal");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    child.wait_with_output().unwrap()
}

#[test]
fn root_sched_sweep_interrupted_puts_the_scheduler_back() {
    if !root_or_skip("root_sched_sweep_interrupted_puts_the_scheduler_back") {
        return;
    }
    let dir = scratch();
    let journal = dir.path().join("journal");
    let Some(l) = device(dir.path()) else { return };
    let start = active(&l.name);
    for (signal, name, code) in [
        (nix::sys::signal::Signal::SIGINT, "SIGINT", 130),
        (nix::sys::signal::Signal::SIGTERM, "SIGTERM", 143),
    ] {
        let child = sweep_in_progress(&journal, &l, &start);
        assert_ne!(active(&l.name), start);
        let pid = nix::unistd::Pid::from_raw(child.id() as i32);
        nix::sys::signal::kill(pid, signal).unwrap();
        let out = wait(child);
        let stdout = text(&out.stdout);
        assert_eq!(
            out.status.code(),
            Some(code),
            "{stdout}{}",
            text(&out.stderr)
        );
        assert_eq!(active(&l.name), start, "{name}: the scheduler is back");
        assert!(journal_is_empty(&journal), "{name}");
        // What completed is still shown, and how the sweep ended.
        assert!(
            flat(&stdout).contains(&format!("stopped by {name} after 1 of ")),
            "{stdout}"
        );
        assert!(stdout.contains(&format!("{start} *")), "{stdout}");
        assert!(
            stdout.contains(&format!("{}: scheduler put back to {start}", l.name)),
            "{stdout}"
        );
    }
}

#[test]
fn root_sched_sweep_killed_is_put_back_by_restore() {
    if !root_or_skip("root_sched_sweep_killed_is_put_back_by_restore") {
        return;
    }
    let dir = scratch();
    let journal = dir.path().join("journal");
    let Some(l) = device(dir.path()) else { return };
    let start = active(&l.name);
    let mut child = sweep_in_progress(&journal, &l, &start);
    child.kill().unwrap();
    child.wait().unwrap();
    assert_ne!(active(&l.name), start, "SIGKILL leaves the switch");
    assert!(
        !journal_is_empty(&journal),
        "the journal holds the original"
    );
    let out = run(&journal, &["restore"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(active(&l.name), start);
    assert!(journal_is_empty(&journal));
    // The killed sweep's claim died with it: the next sweep of the disk runs.
    let out = run(
        &journal,
        &[
            "run",
            l.path_str(),
            "--test",
            "seq-read",
            "--time",
            "100ms",
            "--warmup",
            "0",
            "--sweep-sched",
            "--repeats",
            "1",
        ],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(active(&l.name), start);
    assert!(
        !journal.join(format!("claim.{}.lock", l.name)).exists(),
        "a finished sweep leaves no claim file"
    );
}

#[test]
fn root_sweep_cache_on_a_loop_device_is_refused_with_the_reason() {
    if !root_or_skip("root_sweep_cache_on_a_loop_device_is_refused_with_the_reason") {
        return;
    }
    let dir = scratch();
    let journal = dir.path().join("journal");
    let Some(l) = device(dir.path()) else { return };
    let start = active(&l.name);
    for extra in [&[][..], &["--test", "seq-read"][..]] {
        let mut args = vec!["run", l.path_str(), "--sweep-cache"];
        args.extend_from_slice(extra);
        let out = run(&journal, &args);
        assert_eq!(out.status.code(), Some(1));
        assert!(out.stdout.is_empty());
        assert_eq!(
            text(&out.stderr),
            format!(
                "disktriage: cannot sweep the write cache of {}: not supported on loop\n",
                l.name
            )
        );
    }
    assert_eq!(active(&l.name), start);
    assert!(!journal.join("journal.json").exists(), "nothing journaled");
}

/// A sweep changes a setting of one disk: with several targets it is refused before anything
/// is read, run or switched, and it says why (it used to sweep the first target alone and drop
/// the others without a word).
#[test]
fn root_sweep_with_several_targets_is_refused_before_anything() {
    if !root_or_skip("root_sweep_with_several_targets_is_refused_before_anything") {
        return;
    }
    let dir = scratch();
    let journal = dir.path().join("journal");
    let Some(a) = device(dir.path()) else { return };
    let Some(b) = device(dir.path()) else { return };
    let (start_a, start_b) = (active(&a.name), active(&b.name));
    for sweep in [
        &["--sweep-sched"][..],
        &["--sweep-sched", "none"],
        &["--sweep-cache"],
    ] {
        let mut args = vec![
            "run",
            a.path_str(),
            b.path_str(),
            "--test",
            "seq-read",
            "--time",
            "200ms",
            "--warmup",
            "0",
            "--repeats",
            "1",
        ];
        args.extend_from_slice(sweep);
        let started = Instant::now();
        let out = run(&journal, &args);
        assert_eq!(
            out.status.code(),
            Some(1),
            "{sweep:?}: {}",
            text(&out.stdout)
        );
        assert!(out.stdout.is_empty(), "{sweep:?}: {}", text(&out.stdout));
        let err = flat(&text(&out.stderr));
        assert!(
            err.contains("sweeps one disk")
                && err.contains(a.path_str())
                && err.contains(b.path_str()),
            "{sweep:?}: {err}"
        );
        // Refused at once: no run of 200 ms was made.
        assert!(started.elapsed() < Duration::from_millis(150), "{sweep:?}");
        assert_eq!(active(&a.name), start_a);
        assert_eq!(active(&b.name), start_b);
        assert!(!journal.join("journal.json").exists(), "nothing journaled");
    }
}

/// Two sweeps of one disk at once: the second is refused, before it runs or switches
/// anything, while the first holds the disk's settings (from its start, before its first
/// switch, and after it); it names the first. The first goes on and puts the scheduler back.
#[test]
fn root_a_second_sweep_of_the_same_disk_is_refused() {
    if !root_or_skip("root_a_second_sweep_of_the_same_disk_is_refused") {
        return;
    }
    let dir = scratch();
    let journal = dir.path().join("journal");
    let Some(l) = device(dir.path()) else { return };
    let start = active(&l.name);
    let second = |when: &str, first: u32| {
        let started = Instant::now();
        let out = run(
            &journal,
            &[
                "run",
                l.path_str(),
                "--test",
                "seq-read",
                "--time",
                "300ms",
                "--warmup",
                "0",
                "--sweep-sched",
                "--repeats",
                "1",
            ],
        );
        let err = flat(&text(&out.stderr));
        assert_eq!(
            out.status.code(),
            Some(1),
            "{when}: {}{err}",
            text(&out.stdout)
        );
        assert!(out.stdout.is_empty(), "{when}: {}", text(&out.stdout));
        assert!(
            err.contains(&format!("pid {first}")) && err.contains(&l.name),
            "{when}: {err}"
        );
        // Refused at once: not one run of 300 ms was made.
        assert!(
            started.elapsed() < Duration::from_millis(300),
            "{when}: {err}"
        );
    };
    // The first sweep, before its first switch: it runs under the scheduler at start first.
    let first = command(
        &journal,
        &[
            "run",
            l.path_str(),
            "--test",
            "seq-read",
            "--time",
            "2s",
            "--warmup",
            "0",
            "--sweep-sched",
            "--repeats",
            "3",
        ],
    )
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .spawn()
    .expect("start disktriage");
    let pid = first.id();
    std::thread::sleep(Duration::from_millis(700));
    assert_eq!(active(&l.name), start, "the first sweep switched too early");
    second("before the first switch", pid);
    // And once it has switched.
    let deadline = Instant::now() + Duration::from_secs(30);
    while active(&l.name) == start {
        assert!(Instant::now() < deadline, "the sweep never switched");
        std::thread::sleep(Duration::from_millis(50));
    }
    second("after the first switch", pid);
    assert_ne!(active(&l.name), start, "the second sweep switched it back");
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(pid as i32),
        nix::sys::signal::Signal::SIGINT,
    )
    .unwrap();
    let out = wait(first);
    assert_eq!(out.status.code(), Some(130), "{}", text(&out.stderr));
    assert_eq!(active(&l.name), start, "the scheduler is back");
    assert!(journal_is_empty(&journal));
    // The disk is free again: a sweep now runs.
    let out = run(
        &journal,
        &[
            "run",
            l.path_str(),
            "--test",
            "seq-read",
            "--time",
            "100ms",
            "--warmup",
            "0",
            "--sweep-sched",
            "--repeats",
            "1",
        ],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(active(&l.name), start);
    assert!(!journal.join(format!("claim.{}.lock", l.name)).exists());
}

/// A FIFO planted at the history's lock while a scheduler sweep runs: the sweep's records are
/// refused with a warning instead of blocking on the open (which kept the switched scheduler
/// active until a SIGKILL), and the sweep ends by itself with the scheduler put back.
#[test]
fn root_sched_sweep_with_a_fifo_planted_in_the_history_ends_and_puts_the_scheduler_back() {
    let name =
        "root_sched_sweep_with_a_fifo_planted_in_the_history_ends_and_puts_the_scheduler_back";
    if !root_or_skip(name) {
        return;
    }
    let dir = scratch();
    let journal = dir.path().join("journal");
    let hist = dir.path().join("hist");
    std::fs::create_dir(&hist).unwrap();
    let Some(l) = device(dir.path()) else { return };
    let start = active(&l.name);
    let mut child = Command::new(env!("CARGO_BIN_EXE_disktriage"))
        .arg("--journal-dir")
        .arg(&journal)
        .arg("--history-dir")
        .arg(&hist)
        .args([
            "run",
            l.path_str(),
            "--test",
            "seq-read",
            "--time",
            "500ms",
            "--warmup",
            "0",
            "--sweep-sched",
            "--repeats",
            "1",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start disktriage");
    let deadline = Instant::now() + Duration::from_secs(30);
    while active(&l.name) == start {
        assert!(Instant::now() < deadline, "the sweep never switched");
        std::thread::sleep(Duration::from_millis(20));
    }
    // The first value's record made the lock already: replaced by the FIFO.
    let _ = std::fs::remove_file(hist.join("history.lock"));
    nix::unistd::mkfifo(
        &hist.join("history.lock"),
        nix::sys::stat::Mode::from_bits_truncate(0o600),
    )
    .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let switched = active(&l.name);
            let _ = child.kill();
            let _ = child.wait();
            set_active(&l.name, &start);
            panic!("the sweep hung on the FIFO, with {switched} active (start: {start})");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let out = child.wait_with_output().unwrap();
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{stdout}{stderr}");
    assert_eq!(active(&l.name), start, "the scheduler is back");
    assert!(journal_is_empty(&journal));
    assert!(stderr.contains("FIFO"), "{stderr}");
}
