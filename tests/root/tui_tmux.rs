//! The whole loop in a real terminal (root, tmux): tmux runs disktriage at 80x25 on a loop
//! device the test creates; keys select it, run a short read test, switch the scheduler,
//! rerun, open the comparison and quit; capture-pane shows each step; afterwards the device's
//! scheduler is what it was before. A scheduler sweep from the Test screen puts the scheduler
//! back at its end, and when the program is quit half-way through one.

#![allow(clippy::unwrap_used)] // tests may unwrap: a panic is the failure report

use crate::common;
use common::{HISTORY_ENV, history_dir};

use std::process::Command;
use std::time::{Duration, Instant};

use common::{LoopDev, Mounted, root_or_skip, scratch, skip};

/// The TUI tests watch the same device list: one at a time.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

pub struct Tmux {
    pub socket: String,
}

impl Tmux {
    pub fn run(&self, args: &[&str]) -> String {
        let out = Command::new("tmux")
            .args(["-L", &self.socket])
            .args(args)
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    pub fn keys(&self, keys: &[&str]) {
        for k in keys {
            self.run(&["send-keys", "-t", "dt", k]);
            std::thread::sleep(Duration::from_millis(60));
        }
    }

    /// Starts disktriage (with `args`) in session "dt" at 80x25, under `env` settings; the
    /// shell prints EXITED-<status> when it ends.
    pub fn start(&self, env: &[&str], args: &str) {
        let cmd = format!(
            "{} {args}; echo EXITED-$?; sleep 60",
            env!("CARGO_BIN_EXE_disktriage")
        );
        self.start_shell(env, &cmd);
    }

    /// Like `start`, for a terminal that goes away: the shell survives the hangup (its trap
    /// resets SIGHUP to the default for disktriage) and writes disktriage's exit status to
    /// `status`, since nobody can read the screen any more.
    fn start_recording_status(&self, args: &str, status: &std::path::Path) {
        let cmd = format!(
            "trap true HUP; {} {args}; echo $? > {}",
            env!("CARGO_BIN_EXE_disktriage"),
            status.display()
        );
        self.start_shell(&[], &cmd);
    }

    fn start_shell(&self, env: &[&str], cmd: &str) {
        let history = format!("{HISTORY_ENV}={}", history_dir().display());
        let new_session = || {
            Command::new("tmux")
                .args(["-L", &self.socket, "new-session", "-d", "-s", "dt"])
                .args(["-x", "80", "-y", "25", "env", &history])
                .args(env)
                .args(["sh", "-c", cmd])
                .output()
                .unwrap()
        };
        // After `kill-session` of the last session its server is on the way out; a
        // new-session that reaches the socket meanwhile fails with "server exited
        // unexpectedly" (CI saw it). A moment later the socket is free: try again.
        let mut out = new_session();
        for _ in 0..20 {
            if out.status.success()
                || !String::from_utf8_lossy(&out.stderr).contains("server exited unexpectedly")
            {
                break;
            }
            std::thread::sleep(Duration::from_millis(100));
            out = new_session();
        }
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        self.wait_for("DEVICE", Duration::from_secs(10), "device list");
    }

    /// Moves the device list's selection down to `name`; returns the screen.
    pub fn select(&self, name: &str) -> String {
        let title = format!("┌ {name} ");
        for _ in 0..30 {
            if self.screen().contains(&title) {
                break;
            }
            self.keys(&["Down"]);
        }
        self.wait_for(&title, Duration::from_secs(2), "device selected")
    }

    /// The pid of disktriage in session "dt".
    fn pid(&self) -> i32 {
        let shell = self.run(&["display", "-p", "-t", "dt", "#{pane_pid}"]);
        let pids = Command::new("pgrep")
            .args(["-P", shell.trim(), "disktriage"])
            .output()
            .unwrap();
        String::from_utf8_lossy(&pids.stdout)
            .trim()
            .parse()
            .unwrap()
    }

    /// The pane's text; lines the terminal wrapped are joined (-J), so a word the shell
    /// prints after the last screen line (EXITED-137) is found whole.
    pub fn screen(&self) -> String {
        self.run(&["capture-pane", "-p", "-J", "-t", "dt"])
    }

    /// Waits until the screen contains `text`; returns the screen.
    pub fn wait_for(&self, text: &str, timeout: Duration, step: &str) -> String {
        let start = Instant::now();
        loop {
            let s = self.screen();
            if s.contains(text) {
                eprintln!("--- {step}:\n{s}");
                return s;
            }
            assert!(
                start.elapsed() < timeout,
                "{step}: {text:?} did not appear within {timeout:?}; the screen:\n{s}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .args(["-L", &self.socket, "kill-server"])
            .output();
    }
}

/// Root and tmux, and the lock that keeps these tests apart; `None` (after saying why) when
/// the test must be skipped.
pub fn prerequisites(test: &str) -> Option<std::sync::MutexGuard<'static, ()>> {
    if !root_or_skip(test) {
        return None;
    }
    let guard = SERIAL
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if Command::new("tmux").arg("-V").output().is_err() {
        skip(test, "tmux is not installed");
        return None;
    }
    Some(guard)
}

fn active_scheduler(name: &str) -> String {
    let s = std::fs::read_to_string(format!("/sys/block/{name}/queue/scheduler")).unwrap();
    s.split_whitespace()
        .find(|w| w.starts_with('['))
        .unwrap()
        .trim_matches(|c| c == '[' || c == ']')
        .to_string()
}

/// The word that follows `label` on the screen.
fn word_after(screen: &str, label: &str) -> String {
    let at = screen
        .find(label)
        .unwrap_or_else(|| panic!("{label:?} not on the screen:\n{screen}"));
    screen[at + label.len()..]
        .split_whitespace()
        .next()
        .unwrap_or_default()
        .to_string()
}

#[test]
fn root_tmux_look_test_switch_retest_compare_quit() {
    let Some(_one_at_a_time) = prerequisites("root_tmux_look_test_switch_retest_compare_quit")
    else {
        return;
    };
    let dir = scratch();
    let l = LoopDev::new(dir.path(), 256 << 20, 512);
    let before = active_scheduler(&l.name);
    let other = if before == "mq-deadline" {
        "none"
    } else {
        "mq-deadline"
    };

    let tmux = Tmux {
        socket: format!("disktriage-test-{}", std::process::id()),
    };
    // Look: the device list, then select the loop device.
    // A journal of its own: the test leaves nothing in /run/disktriage.
    let journal_arg = format!("--journal-dir {}", dir.path().join("journal").display());
    tmux.start(&["TERM=linux"], &journal_arg);
    let s = tmux.select(&l.name);
    let sched_line = s
        .lines()
        .find(|x| x.contains("│scheduler "))
        .unwrap_or_default();
    assert!(sched_line.contains(&format!("[{before}]")), "{s}");

    // Test: rand-read, 2 s, no warm-up.
    tmux.keys(&["Enter"]);
    tmux.wait_for("Parameters", Duration::from_secs(2), "test picker");
    tmux.keys(&["Down", "Down", "Down", "Down", "Down", "Down", "Down"]);
    tmux.keys(&[
        // Fields: request size, queue depth, workers, duration, amount, warm-up.
        "Enter", "Down", "Down", "Down", "Enter", "2", "Enter", "Down", "Down", "Enter", "0",
        "Enter",
    ]);
    let s = tmux.wait_for(
        "duration       2s",
        Duration::from_secs(2),
        "parameters set",
    );
    assert!(s.contains("warm-up        0s"), "{s}");
    tmux.keys(&["r"]);
    let s = tmux.wait_for(
        &format!("#1 rand-read on {} finished", l.name),
        Duration::from_secs(30),
        "first run finished",
    );
    assert!(s.contains(&format!("scheduler {before}")), "{s}");
    let first_mbps = word_after(&s, "MB/s mean ");

    // Switch the scheduler.
    tmux.keys(&["s"]);
    tmux.wait_for("Scheduler of", Duration::from_secs(2), "scheduler menu");
    // The menu lists the kernel's schedulers in the kernel's order.
    let names: Vec<String> =
        std::fs::read_to_string(format!("/sys/block/{}/queue/scheduler", l.name))
            .unwrap()
            .split_whitespace()
            .map(|w| w.trim_matches(|c| c == '[' || c == ']').to_string())
            .collect();
    let from = names.iter().position(|n| *n == before).unwrap();
    let to = names.iter().position(|n| n == other).unwrap();
    let step = if to > from { "Down" } else { "Up" };
    for _ in 0..from.abs_diff(to) {
        tmux.keys(&[step]);
    }
    tmux.keys(&["Enter"]);
    tmux.wait_for(
        &format!("scheduler now {other}"),
        Duration::from_secs(3),
        "switched",
    );
    assert_eq!(active_scheduler(&l.name), other, "written to sysfs");

    // Retest with one key, then compare.
    tmux.keys(&["R"]);
    let s = tmux.wait_for(
        &format!("#2 rand-read on {} finished", l.name),
        Duration::from_secs(30),
        "second run finished",
    );
    assert!(s.contains(&format!("scheduler {other}")), "{s}");
    let second_mbps = word_after(&s, "MB/s mean ");
    // One truth: the Run screen's figures are the ones Results and Compare show.
    tmux.keys(&["4"]);
    let s = tmux.wait_for("Results (", Duration::from_secs(2), "results");
    for (n, mbps) in [(1, &first_mbps), (2, &second_mbps)] {
        let row = s
            .lines()
            .find(|line| line.contains(&format!(" {n}   {}", l.name)))
            .unwrap_or_default();
        assert!(
            row.contains(mbps.as_str()),
            "run {n}: {mbps} MB/s on Run, not here:\n{s}"
        );
    }
    tmux.keys(&["c"]);
    let s = tmux.wait_for("Compare A -> B", Duration::from_secs(2), "comparison");
    assert!(s.contains(&format!("sched {before}")), "{s}");
    assert!(s.contains(&format!("sched {other}")), "{s}");
    assert!(s.contains("B vs A"), "{s}");
    assert!(s.contains("changed: scheduler"), "{s}");
    let mbps_row = s.lines().find(|l| l.contains("│MB/s")).unwrap();
    assert!(
        mbps_row.contains(&first_mbps) && mbps_row.contains(&second_mbps),
        "{first_mbps} and {second_mbps} MB/s on Run:\n{s}"
    );

    // Quit: two results were not exported, so q asks (saying the history keeps their
    // figures); a second q confirms. The terminal comes back and the scheduler is put back.
    tmux.keys(&["q"]);
    tmux.wait_for(
        "2 results not exported: the history keeps the figures",
        Duration::from_secs(2),
        "quit asks",
    );
    tmux.keys(&["q"]);
    let s = tmux.wait_for("EXITED-0", Duration::from_secs(10), "after quit");
    assert!(
        s.contains(&format!("scheduler put back to {before}")),
        "{s}"
    );
    assert_eq!(active_scheduler(&l.name), before, "restored on exit");
}

#[test]
fn root_tmux_sigterm_restores_terminal_and_scheduler() {
    let Some(_one_at_a_time) = prerequisites("root_tmux_sigterm_restores_terminal_and_scheduler")
    else {
        return;
    };
    let dir = scratch();
    let l = LoopDev::new(dir.path(), 64 << 20, 512);
    let before = active_scheduler(&l.name);
    let tmux = Tmux {
        socket: format!("disktriage-term-{}", std::process::id()),
    };
    let journal_arg = format!("--journal-dir {}", dir.path().join("journal").display());
    tmux.start(&[], &journal_arg);
    tmux.select(&l.name);
    // Switch to another scheduler (the next one in the kernel's list).
    tmux.keys(&["s", "Down", "Enter"]);
    tmux.wait_for("scheduler now", Duration::from_secs(3), "switched");
    assert_ne!(active_scheduler(&l.name), before);

    let pid = tmux.pid();
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(pid),
        nix::sys::signal::Signal::SIGTERM,
    )
    .unwrap();
    let s = tmux.wait_for("EXITED-", Duration::from_secs(10), "after SIGTERM");
    assert!(
        s.contains(&format!("scheduler put back to {before}")),
        "{s}"
    );
    assert!(!s.contains("DEVICE"), "the alternate screen is gone:\n{s}");
    assert_eq!(active_scheduler(&l.name), before);
}

#[test]
fn root_tmux_after_sigkill_the_next_start_offers_to_restore() {
    let Some(_one_at_a_time) =
        prerequisites("root_tmux_after_sigkill_the_next_start_offers_to_restore")
    else {
        return;
    };
    let dir = scratch();
    let journal = dir.path().join("journal");
    let l = LoopDev::new(dir.path(), 64 << 20, 512);
    let before = active_scheduler(&l.name);
    let tmux = Tmux {
        socket: format!("disktriage-kill-{}", std::process::id()),
    };
    let journal_arg = format!("--journal-dir {}", journal.display());
    tmux.start(&[], &journal_arg);
    tmux.select(&l.name);
    tmux.keys(&["s", "Down", "Enter"]);
    tmux.wait_for("scheduler now", Duration::from_secs(3), "switched");
    let changed = active_scheduler(&l.name);
    assert_ne!(changed, before);

    // SIGKILL: nothing can run on the way out; the journal keeps the original.
    let pid = tmux.pid();
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(pid),
        nix::sys::signal::Signal::SIGKILL,
    )
    .unwrap();
    tmux.wait_for("EXITED-137", Duration::from_secs(10), "killed");
    assert_eq!(
        active_scheduler(&l.name),
        changed,
        "nothing restored a killed process"
    );
    tmux.run(&["kill-session", "-t", "dt"]);

    // The next start finds the journal and offers to put it back.
    tmux.start(&[], &journal_arg);
    let s = tmux.wait_for("did not exit cleanly", Duration::from_secs(10), "offer");
    assert!(
        s.contains(&format!("{}: scheduler back to {before}", l.name)),
        "{s}"
    );
    tmux.keys(&["y"]);
    let s = tmux.wait_for("Restored", Duration::from_secs(5), "restored");
    assert!(
        s.contains(&format!("scheduler put back to {before}")),
        "{s}"
    );
    assert_eq!(active_scheduler(&l.name), before);
    // Ctrl-C quits at once, with the status a shell gives an interrupt.
    tmux.keys(&["Escape", "C-c"]);
    tmux.wait_for("EXITED-130", Duration::from_secs(10), "Ctrl-C");
}

/// The text inside the box whose top line starts with `title`, its lines joined by spaces.
fn box_text(screen: &str, title: &str) -> String {
    let lines: Vec<Vec<char>> = screen.lines().map(|l| l.chars().collect()).collect();
    let title: Vec<char> = title.chars().collect();
    let Some((top, left)) = lines.iter().enumerate().find_map(|(i, l)| {
        l.windows(title.len())
            .position(|w| w == title.as_slice())
            .map(|c| (i, c))
    }) else {
        return String::new();
    };
    let right = (left + 1..lines[top].len())
        .find(|&c| lines[top][c] == '┐')
        .unwrap_or(lines[top].len());
    let mut words = Vec::new();
    for l in &lines[top + 1..] {
        if l.get(left) != Some(&'│') {
            break;
        }
        let inner: String = l[left + 1..right.min(l.len())].iter().collect();
        words.push(inner.trim().to_string());
    }
    words.join(" ")
}

#[test]
fn root_tmux_buffers_larger_than_memory_are_refused() {
    let Some(_one_at_a_time) = prerequisites("root_tmux_buffers_larger_than_memory_are_refused")
    else {
        return;
    };
    let dir = scratch();
    let l = LoopDev::new(dir.path(), 512 << 20, 512);
    let tmux = Tmux {
        socket: format!("disktriage-test-mem-{}", std::process::id()),
    };
    let journal_arg = format!("--journal-dir {}", dir.path().join("journal").display());
    // The address space is capped at 8 GiB: a regression fails to allocate (and this test
    // fails) instead of waking the OOM killer.
    let cap = format!("--as={}", 8u64 << 30);
    tmux.start(&["TERM=linux", "prlimit", &cap], &journal_arg);
    tmux.select(&l.name);
    // seq-read with a typed request size of 256M and queue depth 1024.
    tmux.keys(&["Enter"]);
    tmux.wait_for("Parameters", Duration::from_secs(2), "test picker");
    tmux.keys(&[
        "Enter", "Enter", "256M", "Enter", "Down", "Enter", "1024", "Enter",
    ]);
    tmux.wait_for("1024", Duration::from_secs(2), "parameters set");
    tmux.keys(&["r"]);
    let start = Instant::now();
    let text = loop {
        // The error box wraps its text: compare it as one line.
        let s = tmux.screen();
        let flat = box_text(&s, "┌ Error ");
        if flat.contains("lower the request size") {
            eprintln!("--- refused:\n{s}");
            break flat;
        }
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "no refusal within 30 s; the screen:\n{s}"
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    assert!(
        // 256 GiB of buffers and, since auto may choose 1024 I/O threads, their histograms.
        text.contains("this test needs 256.8 GiB of memory for its I/O buffers"),
        "{text}"
    );
    assert!(text.contains("(256 MiB x QD 1024 x 1 worker)"), "{text}");
    // Still running, not killed: q quits normally.
    tmux.keys(&["Escape", "q"]);
    tmux.wait_for("EXITED-0", Duration::from_secs(10), "after quit");
}

/// The entries left in a test's journal directory.
fn journal_entries(dir: &std::path::Path) -> Vec<disktriage::model::JournalEntry> {
    disktriage::changes::Journal::existing(dir)
        .map(|j| j.entries().unwrap())
        .unwrap_or_default()
}

#[test]
fn root_tmux_hangup_restores_the_scheduler_without_aborting() {
    let Some(_one_at_a_time) =
        prerequisites("root_tmux_hangup_restores_the_scheduler_without_aborting")
    else {
        return;
    };
    let dir = scratch();
    let journal = dir.path().join("journal");
    let status = dir.path().join("status");
    let l = LoopDev::new(dir.path(), 64 << 20, 512);
    let before = active_scheduler(&l.name);
    let tmux = Tmux {
        socket: format!("disktriage-hup-{}", std::process::id()),
    };
    tmux.start_recording_status(&format!("--journal-dir {}", journal.display()), &status);
    tmux.select(&l.name);
    tmux.keys(&["s", "Down", "Enter"]);
    tmux.wait_for("scheduler now", Duration::from_secs(3), "switched");
    assert_ne!(active_scheduler(&l.name), before);
    assert_eq!(
        journal_entries(&journal).len(),
        1,
        "the change is journaled"
    );

    // The window closes (an SSH connection drops): the terminal hangs up under disktriage,
    // and every later write to it fails.
    tmux.run(&["kill-session", "-t", "dt"]);
    let start = Instant::now();
    let code = loop {
        if let Ok(s) = std::fs::read_to_string(&status)
            && s.ends_with('\n')
        {
            break s.trim().parse::<i32>().unwrap();
        }
        assert!(
            start.elapsed() < Duration::from_secs(15),
            "disktriage did not exit within 15 s of the hangup"
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    assert_ne!(code, 128 + 6, "disktriage aborted (SIGABRT) on the hangup");
    assert_eq!(code, 128 + 1, "exit status 128 + SIGHUP");
    assert_eq!(active_scheduler(&l.name), before, "scheduler put back");
    assert!(
        journal_entries(&journal).is_empty(),
        "the journal is empty: {:?}",
        journal_entries(&journal)
    );
}

#[test]
fn root_tmux_size_sweep_is_charted_live_and_its_export_gives_the_same_knees() {
    let test = "root_tmux_size_sweep_is_charted_live_and_its_export_gives_the_same_knees";
    let Some(_one_at_a_time) = prerequisites(test) else {
        return;
    };
    let dir = scratch();
    let l = LoopDev::new(dir.path(), 64 << 20, 512);
    let tmux = Tmux {
        socket: format!("disktriage-test-sweep-{}", std::process::id()),
    };
    // Exports go to `exports/` beside the history: a history of its own in the scratch
    // directory, so the export found is this test's.
    let cmd = format!(
        "cd {dir} && {bin} --journal-dir {dir}/journal --history-dir {dir}/history; \
         echo EXITED-$?; sleep 60",
        dir = dir.path().display(),
        bin = env!("CARGO_BIN_EXE_disktriage"),
    );
    tmux.start_shell(&["TERM=linux"], &cmd);
    tmux.select(&l.name);
    tmux.keys(&["Enter"]);
    tmux.wait_for("Parameters", Duration::from_secs(2), "test picker");
    // size-sweep is the 11th test; 64k..256k, 1 s a point, no warm-up.
    for _ in 0..10 {
        tmux.keys(&["Down"]);
    }
    tmux.wait_for("┌ size-sweep ", Duration::from_secs(2), "size-sweep chosen");
    tmux.keys(&[
        // Fields: smallest size, largest size, queue depth, duration, warm-up.
        "Enter", "Enter", "6", "4", "k", "Enter", "Down", "Enter", "2", "5", "6", "k", "Enter",
        "Down", "Down", "Enter", "1", "Enter", "Down", "Enter", "0", "Enter",
    ]);
    let s = tmux.wait_for("largest size   256k", Duration::from_secs(2), "sizes set");
    assert!(s.contains("smallest size  64k"), "{s}");
    assert!(s.contains("warm-up        0s"), "{s}");
    tmux.keys(&["r"]);
    // Live: the chart grows as the sizes finish.
    let s = tmux.wait_for(
        "Read MB/s by request size",
        Duration::from_secs(30),
        "the chart while the sweep runs",
    );
    assert!(s.contains("RUNNING") || s.contains("finished"), "{s}");
    let s = tmux.wait_for(
        &format!("#1 256k rnd_rd on {} finished", l.name),
        Duration::from_secs(60),
        "sweep finished",
    );
    // On the console: letters and half blocks, never braille.
    assert!(
        !s.chars().any(|c| ('\u{2800}'..='\u{28FF}').contains(&c)),
        "{s}"
    );
    for letter in ["F forward", "B backward", "R random"] {
        assert!(s.contains(letter), "{letter}:\n{s}");
    }

    // Results draws the same chart; its legend's knees are the export's.
    tmux.keys(&["4"]);
    let s = tmux.wait_for("Results (", Duration::from_secs(2), "results");
    assert!(s.contains("Read MB/s by request size"), "{s}");
    tmux.keys(&["e"]);
    tmux.keys(&["j"]);
    tmux.wait_for("exported to", Duration::from_secs(5), "exported");
    let file = std::fs::read_dir(dir.path().join("history/exports"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|x| x == "json"))
        .expect("the export");
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    let knees = json["knees"].as_array().expect("knees in the export");
    assert_eq!(knees.len(), 3, "{json}");
    for (k, name) in knees.iter().zip(["forward", "backward", "random"]) {
        let legend = match k["knee"].as_u64() {
            Some(bytes) => format!("{name} knee {}", disktriage::model::Bytes(bytes).short()),
            None if k["still_rising"] == true => format!("{name} still rising at 256k"),
            None => panic!("{k}"),
        };
        assert!(s.contains(&legend), "{legend} (from the export):\n{s}");
    }
    tmux.keys(&["q"]);
    tmux.wait_for("EXITED-0", Duration::from_secs(10), "after quit");
}

#[test]
fn root_tmux_preserve_rewrite_keeps_the_data_when_killed() {
    let Some(_one_at_a_time) =
        prerequisites("root_tmux_preserve_rewrite_keeps_the_data_when_killed")
    else {
        return;
    };
    // A loop device full of random bytes; the TUI rewrites it (write data: rewrite existing)
    // and is killed while measuring: the device holds exactly its bytes afterwards.
    use std::io::Read;
    let dir = scratch();
    let image = dir.path().join("random.img");
    let mut data = vec![0u8; 32 << 20];
    std::fs::File::open("/dev/urandom")
        .unwrap()
        .read_exact(&mut data)
        .unwrap();
    std::fs::write(&image, &data).unwrap();
    let l = LoopDev::attach(&image, &[]);
    let sha = || common::sh("sha256sum", &[l.path_str()]);
    let before = sha();
    let tmux = Tmux {
        socket: format!("disktriage-preserve-{}", std::process::id()),
    };
    let journal_arg = format!("--journal-dir {}", dir.path().join("journal").display());
    tmux.start(&[], &journal_arg);
    tmux.select(&l.name);
    tmux.keys(&["2"]);
    for _ in 0..8 {
        tmux.keys(&["Down"]); // rand-write
    }
    tmux.keys(&["Enter", "Down", "Right", "Right"]); // queue depth 4
    for _ in 0..6 {
        tmux.keys(&["Down"]); // write data
    }
    tmux.keys(&["Right", "Right"]); // random -> zeros -> rewrite existing
    tmux.wait_for(
        "rewrite existing (--preserve)",
        Duration::from_secs(2),
        "rewrite chosen",
    );
    tmux.keys(&["r"]);
    tmux.wait_for("REWRITES the data on", Duration::from_secs(2), "confirm");
    tmux.keys(&[&l.name, "Enter"]);
    tmux.wait_for(
        "rewrite of existing data",
        Duration::from_secs(5),
        "running",
    );
    tmux.wait_for("measuring", Duration::from_secs(5), "measuring");
    std::thread::sleep(Duration::from_millis(1500));
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(tmux.pid()),
        nix::sys::signal::Signal::SIGKILL,
    )
    .unwrap();
    tmux.wait_for("EXITED-137", Duration::from_secs(10), "killed");
    assert_eq!(sha(), before, "the device no longer holds its data");
}

/// Several devices at once in a real terminal (TERM=linux, 80x25): Space marks two loop
/// devices, the test runs on both, the Run screen shows a line and a figure for each, then the
/// rows (the kernel's witness agreeing on each) and the verdict.
#[test]
fn root_tmux_two_marked_loop_devices_run_together() {
    let Some(_one_at_a_time) = prerequisites("root_tmux_two_marked_loop_devices_run_together")
    else {
        return;
    };
    let dir = scratch();
    let mut loops = [
        LoopDev::new(dir.path(), 64 << 20, 512),
        LoopDev::new(dir.path(), 96 << 20, 512),
    ];
    // The list is in natural order: mark the one higher up first.
    let number = |l: &LoopDev| l.name.trim_start_matches("loop").parse::<u32>().unwrap();
    loops.sort_by_key(number);
    let tmux = Tmux {
        socket: format!("disktriage-test-several-{}", std::process::id()),
    };
    let journal_arg = format!("--journal-dir {}", dir.path().join("journal").display());
    tmux.start(&["TERM=linux"], &journal_arg);
    for l in &loops {
        tmux.select(&l.name);
        tmux.keys(&["Space"]);
        tmux.wait_for(&format!("*{}", l.name), Duration::from_secs(2), "marked");
    }
    tmux.wait_for("2 marked", Duration::from_secs(2), "two marked");
    // seq-read for 1 s on both.
    tmux.keys(&["2"]);
    tmux.wait_for(
        "the 2 marked devices at once",
        Duration::from_secs(2),
        "picker",
    );
    tmux.keys(&["Enter", "Down", "Down", "Down", "Enter", "1s", "Enter"]);
    tmux.keys(&["r"]);
    let live = tmux.wait_for("MB/s of each device", Duration::from_secs(10), "running");
    assert!(
        live.contains("seq-read on 2 devices, all at once"),
        "{live}"
    );
    let done = tmux.wait_for("Verdict:", Duration::from_secs(60), "finished");
    for l in &loops {
        // Its line with the live figure, and its row in the table with the witness.
        assert!(
            done.lines()
                .any(|s| s.starts_with(&format!("│{} ", l.name)) && s.contains("MB/s")),
            "{done}"
        );
        let row = done
            .lines()
            .find(|s| s.starts_with(&format!("│{} ", l.name)) && !s.contains("MB/s"))
            .unwrap_or_else(|| panic!("no row for {}:\n{done}", l.name));
        assert!(row.contains(" ok"), "{row}");
    }
    tmux.keys(&["q"]);
    tmux.wait_for(
        "2 results not exported: the history keeps the figures",
        Duration::from_secs(2),
        "quit asks",
    );
    tmux.keys(&["y"]);
    tmux.wait_for("EXITED-0", Duration::from_secs(10), "after quit");
}

/// A file test writes its whole test file before it runs (here 3 GiB, some seconds). The
/// screen goes on meanwhile and says so, and quitting then stops the writing: the half-written
/// file is removed and the program ends at once, instead of a frozen screen until the file is
/// complete.
#[test]
fn root_tmux_quit_while_the_test_file_is_written_removes_it() {
    let Some(_one_at_a_time) =
        prerequisites("root_tmux_quit_while_the_test_file_is_written_removes_it")
    else {
        return;
    };
    // In memory: the layout writes gigabytes.
    let shm = tempfile::Builder::new()
        .prefix("disktriage-test.")
        .tempdir_in("/dev/shm")
        .unwrap();
    let lo = LoopDev::new(shm.path(), 4 << 30, 512);
    let mnt = Mounted::ext4(lo.path.to_str().unwrap(), &shm.path().join("mnt"));
    let test_files = || -> Vec<std::path::PathBuf> {
        std::fs::read_dir(&mnt.dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| {
                p.file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with("disktriage-test"))
            })
            .collect()
    };
    let tmux = Tmux {
        socket: format!("disktriage-test-layout-{}", std::process::id()),
    };
    let journal_arg = format!("--journal-dir {}", shm.path().join("journal").display());
    tmux.start(&["TERM=linux"], &journal_arg);
    tmux.select(&lo.name);
    tmux.keys(&["f"]);
    tmux.wait_for("Test a file", Duration::from_secs(2), "file dialog");
    tmux.keys(&["Enter"]);
    tmux.wait_for(
        "tests now run on a new file",
        Duration::from_secs(2),
        "test screen",
    );
    // seq-read, region size 3 GiB.
    tmux.keys(&["Right", "Down", "Down", "Down", "Down", "Down", "Down"]);
    tmux.keys(&["Enter", "C-u", "3G", "Enter"]);
    tmux.wait_for("region size    3.0 GiB", Duration::from_secs(2), "region");
    tmux.keys(&["r"]);
    let s = tmux.wait_for(
        "writing the new test file",
        Duration::from_secs(5),
        "starting",
    );
    assert!(s.contains("seq-read on "), "{s}");
    assert!(s.contains(" starting"), "{s}");
    // The bytes written so far are counted on the screen as the file grows.
    let start = Instant::now();
    let mut s = tmux.screen();
    let counted = |s: &str| s.contains(" of 3.0 GiB)") && !s.contains("(0 B of");
    while !counted(&s) {
        assert!(
            start.elapsed() < Duration::from_secs(5),
            "no bytes counted: {s}"
        );
        std::thread::sleep(Duration::from_millis(100));
        s = tmux.screen();
    }
    let [file] = test_files().try_into().unwrap();
    let written = std::fs::metadata(&file).unwrap().len();
    assert!(
        written < 3 << 30,
        "the file was complete before the test could quit ({written} bytes): inconclusive"
    );
    tmux.keys(&["q"]);
    tmux.wait_for("Stop it and quit?", Duration::from_secs(2), "quit asks");
    tmux.keys(&["y"]);
    tmux.wait_for("EXITED-0", Duration::from_secs(10), "after quit");
    assert_eq!(test_files(), Vec::<std::path::PathBuf>::new());
}

/// Detaches a loop device the test attached, now; nothing is left for its drop to do (which
/// would detach whatever another user attached under that name meanwhile).
fn detach_now(l: LoopDev) {
    let status = Command::new("losetup")
        .arg("-d")
        .arg(&l.path)
        .status()
        .unwrap();
    assert!(status.success(), "losetup -d {}", l.name);
    std::mem::forget(l);
}

/// The device list's row that has the selection's `>`, if any: the first cell of each row is
/// the selection column, then the name.
fn arrow_row(screen: &str) -> Option<String> {
    screen
        .lines()
        .find(|l| l.starts_with("│>"))
        .map(str::to_string)
}

/// The selection follows the device, not its row: three loop devices attached, the third
/// selected; detaching the first (the next refresh, asked for with r) leaves the `>` on the
/// third; detaching the third (the idle refresh, 10 s) says it is gone, puts the `>` on no
/// other device, and `s` then switches nothing on a neighbour.
#[test]
fn root_tmux_the_selection_follows_the_device_when_loop_devices_go() {
    let Some(_one_at_a_time) =
        prerequisites("root_tmux_the_selection_follows_the_device_when_loop_devices_go")
    else {
        return;
    };
    let dir = scratch();
    let number = |l: &LoopDev| l.name.trim_start_matches("loop").parse::<u32>().unwrap();
    let mut loops: Vec<LoopDev> = (1..=3u64)
        .map(|i| {
            let image = common::sparse_image(dir.path(), &format!("sel{i}.img"), (32 + i) << 20);
            LoopDev::attach(&image, &[])
        })
        .collect();
    loops.sort_by_key(number);
    let third = loops.pop().unwrap();
    let first = loops.remove(0);
    let _second = loops.pop().unwrap();
    let (first_name, third_name) = (first.name.clone(), third.name.clone());
    let before = active_scheduler(&third_name);

    let tmux = Tmux {
        socket: format!("disktriage-test-select-{}", std::process::id()),
    };
    let journal_arg = format!("--journal-dir {}", dir.path().join("journal").display());
    tmux.start(&["TERM=linux"], &journal_arg);
    let s = tmux.select(&third_name);
    let row = arrow_row(&s).unwrap_or_default();
    assert!(row.contains(&format!("{third_name} ")), "{s}");

    // A device above it goes; r reads the list again.
    detach_now(first);
    tmux.keys(&["r"]);
    let start = Instant::now();
    let s = loop {
        let s = tmux.screen();
        if !s.contains(&format!("│ {first_name} ")) && !s.contains(&format!("│>{first_name} "))
        {
            break s;
        }
        assert!(
            start.elapsed() < Duration::from_secs(5),
            "{first_name} still listed:\n{s}"
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    eprintln!("--- {first_name} detached:\n{s}");
    let row = arrow_row(&s).unwrap_or_default();
    assert!(
        row.contains(&format!("{third_name} ")),
        "the > left {third_name}:\n{s}"
    );
    assert!(s.contains(&format!("┌ {third_name} ")), "{s}");

    // The selected device goes; the idle refresh (every 10 s) finds it gone.
    detach_now(third);
    let s = tmux.wait_for(
        &format!("{third_name} is gone"),
        Duration::from_secs(15),
        "the selected device gone",
    );
    assert_eq!(arrow_row(&s), None, "the > moved to another device:\n{s}");
    // s switches nothing on the device that took the row.
    let schedulers: Vec<(String, String)> = ["vda", "loop0", &_second.name]
        .iter()
        .filter_map(|n| {
            std::fs::read_to_string(format!("/sys/block/{n}/queue/scheduler"))
                .ok()
                .map(|s| (n.to_string(), s))
        })
        .collect();
    tmux.keys(&["s"]);
    let s = tmux.wait_for(
        "is gone: nothing was done",
        Duration::from_secs(2),
        "s refused",
    );
    assert!(!s.contains("Scheduler of"), "a scheduler menu opened:\n{s}");
    tmux.keys(&["Enter", "Down", "Enter"]);
    for (n, sched) in &schedulers {
        let now = std::fs::read_to_string(format!("/sys/block/{n}/queue/scheduler")).unwrap();
        assert_eq!(&now, sched, "{n}'s scheduler changed");
    }
    assert_eq!(active_scheduler(&third_name), before);
    tmux.keys(&["q"]);
    tmux.wait_for("EXITED-0", Duration::from_secs(10), "after quit");
}

/// Sets seq-read (the first test) to 1 s without warm-up on the Test screen and runs it;
/// returns the Run screen's mean MB/s once `#1 seq-read on NAME finished` shows.
fn seq_read_one_second(tmux: &Tmux, name: &str) -> String {
    tmux.keys(&["Enter"]);
    tmux.wait_for("Parameters", Duration::from_secs(2), "test picker");
    tmux.keys(&[
        // Fields: request size, queue depth, workers, duration, amount, warm-up.
        "Enter", "Down", "Down", "Down", "Enter", "1", "Enter", "Down", "Down", "Enter", "0",
        "Enter",
    ]);
    tmux.wait_for(
        "duration       1s",
        Duration::from_secs(2),
        "parameters set",
    );
    tmux.keys(&["r"]);
    let s = tmux.wait_for(
        &format!("#1 seq-read on {name} finished"),
        Duration::from_secs(30),
        "run finished",
    );
    word_after(&s, "MB/s mean ")
}

#[test]
fn root_tmux_a_before_after_across_sessions_is_one_key() {
    let test = "root_tmux_a_before_after_across_sessions_is_one_key";
    let Some(_one_at_a_time) = prerequisites(test) else {
        return;
    };
    let dir = scratch();
    let l = LoopDev::new(dir.path(), 256 << 20, 512);
    let tmux = Tmux {
        socket: format!("disktriage-test-before-{}", std::process::id()),
    };
    // A journal and a history of its own: the second session finds only the first's run.
    let args = format!(
        "--journal-dir {} --history-dir {}",
        dir.path().join("journal").display(),
        dir.path().join("history").display()
    );

    // Yesterday: seq-read, nothing earlier to compare with, quit.
    tmux.start(&["TERM=linux"], &args);
    tmux.select(&l.name);
    let before = seq_read_one_second(&tmux, &l.name);
    tmux.keys(&["4"]);
    let s = tmux.wait_for("Results (", Duration::from_secs(2), "results");
    assert!(!s.contains("b before"), "nothing earlier, no key:\n{s}");
    tmux.keys(&["b"]);
    tmux.wait_for(
        &format!(
            "no earlier seq-read on {} in this session or the history",
            l.name
        ),
        Duration::from_secs(2),
        "b says why not",
    );
    tmux.keys(&["q"]);
    tmux.wait_for("quit?", Duration::from_secs(2), "quit asks");
    tmux.keys(&["q"]);
    tmux.wait_for("EXITED-0", Duration::from_secs(10), "first session over");
    tmux.run(&["kill-session", "-t", "dt"]);

    // Today: seq-read again; Results offers yesterday's run and b compares the two.
    tmux.start(&["TERM=linux"], &args);
    tmux.select(&l.name);
    let after = seq_read_one_second(&tmux, &l.name);
    tmux.keys(&["4"]);
    let s = tmux.wait_for(
        "earlier seq-read on this disk, newest first",
        Duration::from_secs(5),
        "results offer the earlier run",
    );
    let offered = s
        .lines()
        .find(|line| line.contains("#h1 "))
        .unwrap_or_default();
    assert!(offered.contains(&format!("{before} MB/s")), "{s}");
    assert!(s.contains("b before"), "{s}");
    tmux.keys(&["b"]);
    let s = tmux.wait_for("Compare A -> B", Duration::from_secs(2), "before/after");
    assert!(s.contains(&format!("A #h1 {} seq-read", l.name)), "{s}");
    assert!(s.contains(&format!("B #1 {} seq-read", l.name)), "{s}");
    // The figures compared are the ones each Run screen showed (and the history kept).
    let mbps_row = s.lines().find(|l| l.contains("│MB/s")).unwrap();
    assert!(
        mbps_row.contains(&before) && mbps_row.contains(&after),
        "{before} and {after} MB/s on Run:\n{s}"
    );
    tmux.keys(&["q"]);
    tmux.wait_for("quit?", Duration::from_secs(2), "quit asks");
    tmux.keys(&["q"]);
    tmux.wait_for("EXITED-0", Duration::from_secs(10), "second session over");
}

#[test]
fn root_tmux_the_earlier_run_is_the_same_data_not_the_same_name() {
    let test = "root_tmux_the_earlier_run_is_the_same_data_not_the_same_name";
    let Some(_one_at_a_time) = prerequisites(test) else {
        return;
    };
    let dir = scratch();
    let first = LoopDev::new(dir.path(), 256 << 20, 512);
    let image = first.image.clone();
    let tmux = Tmux {
        socket: format!("disktriage-test-same-data-{}", std::process::id()),
    };
    let args = format!(
        "--journal-dir {} --history-dir {}",
        dir.path().join("journal").display(),
        dir.path().join("history").display()
    );
    tmux.start(&["TERM=linux"], &args);
    tmux.select(&first.name);
    let before = seq_read_one_second(&tmux, &first.name);
    tmux.keys(&["q"]);
    tmux.wait_for("quit?", Duration::from_secs(2), "quit asks");
    tmux.keys(&["q"]);
    tmux.wait_for("EXITED-0", Duration::from_secs(10), "first session over");
    tmux.run(&["kill-session", "-t", "dt"]);

    // The next session: the same loop device over another image (the same name, other
    // data), and the first image on another loop device (another name, the same data).
    let node = first.path.clone();
    let name = first.name.clone();
    let names = common::loop_names();
    drop(first);
    let other = dir.path().join("other.img");
    std::fs::File::create(&other)
        .and_then(|f| f.set_len(256 << 20))
        .unwrap();
    let attached = Command::new("losetup")
        .arg(&node)
        .arg(&other)
        .status()
        .unwrap();
    drop(names);
    if !attached.success() {
        skip(test, "another test took the loop device in between");
        return;
    }
    let _same_name = LoopDev {
        path: node,
        name: name.clone(),
        image: other,
    };
    let same_data = LoopDev::attach(&image, &[]);
    tmux.start(&["TERM=linux"], &args);
    tmux.select(&name);
    seq_read_one_second(&tmux, &name);
    tmux.keys(&["4"]);
    tmux.wait_for("Results (", Duration::from_secs(2), "results");
    // Whatever the history sends back in a moment: the run of this name was on other data.
    std::thread::sleep(Duration::from_millis(500));
    let s = tmux.screen();
    assert!(!s.contains("earlier seq-read"), "{s}");
    assert!(!s.contains("b before"), "{s}");
    tmux.keys(&["b"]);
    tmux.wait_for(
        &format!("no earlier seq-read on {name} in this session or the history"),
        Duration::from_secs(2),
        "b says why not",
    );

    // seq-read on the first image under its new name: yesterday's run is its before.
    tmux.keys(&["1"]);
    tmux.select(&same_data.name);
    tmux.keys(&["Enter"]);
    tmux.wait_for("duration       1s", Duration::from_secs(2), "test picker");
    tmux.keys(&["r"]);
    let s = tmux.wait_for(
        &format!("#2 seq-read on {} finished", same_data.name),
        Duration::from_secs(30),
        "run on the same data finished",
    );
    let after = word_after(&s, "MB/s mean ");
    tmux.keys(&["4"]);
    let s = tmux.wait_for(
        "earlier seq-read on this disk, newest first",
        Duration::from_secs(5),
        "the same data's run offered",
    );
    let offered: Vec<&str> = s.lines().filter(|l| l.contains("│  #")).collect();
    assert_eq!(offered.len(), 1, "only yesterday's run on this image:\n{s}");
    assert!(
        offered[0].contains("#h1 ") && offered[0].contains(&format!("{before} MB/s")),
        "{s}"
    );
    tmux.keys(&["b"]);
    let s = tmux.wait_for("Compare A -> B", Duration::from_secs(2), "before/after");
    assert!(s.contains(&format!("A #h1 {name} seq-read")), "{s}");
    assert!(
        s.contains(&format!("B #2 {} seq-read", same_data.name)),
        "{s}"
    );
    let mbps_row = s.lines().find(|l| l.contains("│MB/s")).unwrap();
    assert!(
        mbps_row.contains(&before) && mbps_row.contains(&after),
        "{before} and {after} MB/s on Run:\n{s}"
    );
    tmux.keys(&["q"]);
    tmux.wait_for("quit?", Duration::from_secs(2), "quit asks");
    tmux.keys(&["q"]);
    tmux.wait_for("EXITED-0", Duration::from_secs(10), "second session over");
}

/// A scheduler sweep from the Test screen is the CLI's sweep job: `x` half-way stops it and
/// the job puts the scheduler at start back while the program runs on; a SIGTERM half-way
/// stops it and the scheduler is back when the program has ended; after a SIGKILL half-way
/// the journal still holds it, and `disktriage restore` puts it back.
#[test]
fn root_tmux_a_sweep_ended_by_a_signal_or_killed_puts_the_scheduler_back() {
    let test = "root_tmux_a_sweep_ended_by_a_signal_or_killed_puts_the_scheduler_back";
    let Some(_one_at_a_time) = prerequisites(test) else {
        return;
    };
    let dir = scratch();
    let journal = dir.path().join("journal");
    let l = LoopDev::new(dir.path(), 64 << 20, 512);
    let before = active_scheduler(&l.name);
    let tmux = Tmux {
        socket: format!("disktriage-sweep-sig-{}", std::process::id()),
    };
    let journal_arg = format!("--journal-dir {}", journal.display());
    // Until the second run of the sweep, under the second scheduler; returns it.
    let sweep_to_the_second_run = || {
        tmux.start(&[], &journal_arg);
        tmux.select(&l.name);
        tmux.keys(&["2", "S"]);
        tmux.wait_for("sweep, run 2 of", Duration::from_secs(120), "second run");
        let now = active_scheduler(&l.name);
        assert_ne!(now, before, "switched for the second run");
        now
    };
    let signal = |sig| {
        nix::sys::signal::kill(nix::unistd::Pid::from_raw(tmux.pid()), sig).unwrap();
    };

    // x: the job stops its run and puts the scheduler back itself, the program still running.
    sweep_to_the_second_run();
    tmux.keys(&["x"]);
    let s = tmux.wait_for("is back to", Duration::from_secs(30), "stopped with x");
    assert!(s.contains(&format!("is back to {before}")), "{s}");
    assert_eq!(active_scheduler(&l.name), before, "{s}");
    tmux.keys(&["Escape", "C-c"]);
    tmux.wait_for("EXITED-", Duration::from_secs(10), "Ctrl-C");
    tmux.run(&["kill-session", "-t", "dt"]);

    sweep_to_the_second_run();
    signal(nix::sys::signal::Signal::SIGTERM);
    let s = tmux.wait_for("EXITED-", Duration::from_secs(30), "after SIGTERM");
    assert!(!s.contains("DEVICE"), "the alternate screen is gone:\n{s}");
    assert_eq!(active_scheduler(&l.name), before, "{s}");
    // The screen that said so is gone: the way out says what the stopped sweep put back.
    assert!(
        s.contains(&format!("{}: scheduler put back to {before}", l.name)),
        "nothing says the scheduler was put back:\n{s}"
    );
    tmux.run(&["kill-session", "-t", "dt"]);

    // SIGKILL: nothing runs on the way out; the journal keeps the value at start.
    let changed = sweep_to_the_second_run();
    signal(nix::sys::signal::Signal::SIGKILL);
    tmux.wait_for("EXITED-137", Duration::from_secs(10), "killed");
    assert_eq!(
        active_scheduler(&l.name),
        changed,
        "nothing restored a killed process"
    );
    let out = Command::new(env!("CARGO_BIN_EXE_disktriage"))
        .arg("--journal-dir")
        .arg(&journal)
        .arg("restore")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        text.contains(&format!("scheduler put back to {before}")),
        "{text}"
    );
    assert_eq!(active_scheduler(&l.name), before);
}
