//! A scan while a read hangs (root): a FUSE disk (`tests/fuse/cachedisk.py`, mode bad) with
//! unreadable sectors at 100 MiB whose reads from 150 MiB on are held until the test lets
//! them go, under a loop device. `disktriage scan` with stderr on a terminal (`script`) and
//! the TUI's scan screen in tmux at 80x25 (TERM=linux) must show the read in flight with a
//! growing wait, a clock that runs, and the unreadable sectors already found.

use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::common::{self, HISTORY_ENV, LoopDev, history_dir, root_or_skip, scratch};
use crate::tui_tmux::Tmux;

const MIB: u64 = 1 << 20;
const SIZE: u64 = 192 * MIB;
const BAD_AT: u64 = 100 * MIB;
const HOLD_AT: u64 = 150 * MIB;

/// The FUSE disk, the hold file in place, the loop device over it; on drop the hold file goes
/// first (a read held forever would leave the scan unkillable), then the loop device.
struct HangingDisk {
    hold: PathBuf,
    dev: Option<LoopDev>,
    _disk: common::CacheDisk,
}

impl HangingDisk {
    fn start(dir: &Path) -> HangingDisk {
        let store = dir.join("hang.store");
        fs::write(&store, vec![0xa5u8; SIZE as usize]).unwrap();
        let hold = dir.join("hold");
        fs::write(&hold, "").unwrap();
        let disk = common::CacheDisk::start(
            "bad",
            &store,
            &dir.join("hang"),
            SIZE,
            &[
                ("CACHEDISK_BAD", format!("{BAD_AT}+4096")),
                ("CACHEDISK_HOLD", format!("{}:{HOLD_AT}", hold.display())),
            ],
        );
        let dev = LoopDev::attach(&disk.file(), &[]);
        HangingDisk {
            hold,
            dev: Some(dev),
            _disk: disk,
        }
    }

    fn dev(&self) -> &LoopDev {
        self.dev.as_ref().unwrap()
    }

    fn wait_held(&self) {
        let held = self.hold.with_extension("held");
        let seen = common::poll(1500, || held.exists().then_some(()));
        assert!(seen.is_some(), "the scan never reached {HOLD_AT}");
    }

    fn release(&self) {
        let _ = fs::remove_file(&self.hold);
    }
}

impl Drop for HangingDisk {
    fn drop(&mut self) {
        self.release();
        self.dev.take();
    }
}

/// A child killed on drop (after the disk's hold is gone, it can die).
struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The progress line's redraws in what the terminal got: the text after each "\r\x1b[K".
fn redraws(out: &str) -> Vec<String> {
    out.split("\r\x1b[K")
        .skip(1)
        .map(|s| s.trim_end_matches(['\r', '\n']).to_string())
        .filter(|s| !s.is_empty())
        .collect()
}

/// "waiting N s" and the clock "M:SS" of a redraw.
fn wait_and_clock(line: &str) -> Option<(u64, u64)> {
    let waited = line
        .split("waiting ")
        .nth(1)?
        .split(' ')
        .next()?
        .parse()
        .ok()?;
    let clock = line.split("elapsed ").nth(1)?.split(' ').next()?;
    let (m, s) = clock.split_once(':')?;
    Some((waited, m.parse::<u64>().ok()? * 60 + s.parse::<u64>().ok()?))
}

#[test]
fn root_scan_cli_shows_the_hanging_read_with_a_running_clock_on_one_80_column_line() {
    let test = "root_scan_cli_shows_the_hanging_read_with_a_running_clock_on_one_80_column_line";
    if !root_or_skip(test) || !common::fuse_available(test) {
        return;
    }
    let dir = scratch();
    let disk = HangingDisk::start(dir.path());
    // stderr on a terminal: `script` runs the scan on a pty and copies what it wrote.
    let cmd = format!(
        "{} scan {}",
        env!("CARGO_BIN_EXE_disktriage"),
        disk.dev().path_str()
    );
    let mut child = Killed(
        Command::new("script")
            .args(["-qfec", &cmd, "/dev/null"])
            .env(HISTORY_ENV, history_dir())
            .env("COLUMNS", "80")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("script"),
    );
    let out = Arc::new(Mutex::new(String::new()));
    let mut stdout = child.0.stdout.take().unwrap();
    let sink = Arc::clone(&out);
    let reader = std::thread::spawn(move || {
        let mut buf = [0u8; 4096];
        while let Ok(n) = stdout.read(&mut buf) {
            if n == 0 {
                break;
            }
            sink.lock()
                .unwrap()
                .push_str(&String::from_utf8_lossy(&buf[..n]));
        }
    });
    disk.wait_held();
    let text = || out.lock().unwrap().clone();
    // Two redraws while it hangs, seconds apart: the wait and the clock both grow.
    let held_since = Instant::now();
    let waiting = |min: u64| {
        common::poll(1000, || {
            redraws(&text())
                .into_iter()
                .rev()
                .find_map(|l| wait_and_clock(&l).filter(|w| w.0 >= min).map(|w| (l, w)))
        })
    };
    let (first, (w1, c1)) = waiting(2).unwrap_or_else(|| panic!("no waiting line:\n{:?}", text()));
    let (second, (w2, c2)) =
        waiting(w1 + 2).unwrap_or_else(|| panic!("the wait did not grow:\n{:?}", text()));
    assert!(held_since.elapsed() < Duration::from_secs(30));
    disk.release();
    let status = child.0.wait().unwrap();
    reader.join().unwrap();
    let all = text();
    assert!(w2 > w1 && c2 > c1, "{first}\n{second}");
    for line in [&first, &second] {
        assert!(
            line.contains("waiting") && line.contains("at 150.0 MiB"),
            "{line}"
        );
        // What was found before the hang: the 4 KiB unreadable at 100 MiB.
        assert!(line.contains("unreadable 4.0 KiB"), "{line}");
    }
    // Every redraw on one line of at most 80 columns (the last "\r\x1b[K" clears the line for
    // the report).
    let lines = redraws(&all);
    assert!(lines.len() > 3, "{all:?}");
    for line in &lines[..lines.len() - 1] {
        assert!(!line.contains('\n'), "{line:?}");
        assert!(
            line.chars().count() <= 80,
            "{} columns: {line}",
            line.chars().count()
        );
    }
    assert_eq!(status.code(), Some(4), "unreadable sectors: exit 4\n{all}");
}

#[test]
fn root_tmux_scan_screen_shows_the_hanging_read_and_a_running_clock() {
    let test = "root_tmux_scan_screen_shows_the_hanging_read_and_a_running_clock";
    let Some(_one_at_a_time) = crate::tui_tmux::prerequisites(test) else {
        return;
    };
    if !common::fuse_available(test) {
        return;
    }
    let dir = scratch();
    let journal = scratch();
    let disk = HangingDisk::start(dir.path());
    let tmux = Tmux {
        socket: format!("disktriage-test-scan-live-{}", std::process::id()),
    };
    tmux.start(
        &["TERM=linux"],
        &format!("--journal-dir {}", journal.path().display()),
    );
    tmux.select(&disk.dev().name);
    tmux.keys(&["b"]);
    disk.wait_held();
    let first = tmux.wait_for(
        "waiting 2 s at 150.0 MiB",
        Duration::from_secs(10),
        "waiting",
    );
    let second = tmux.wait_for(
        "waiting 4 s at 150.0 MiB",
        Duration::from_secs(10),
        "waiting",
    );
    let clock = |s: &str| {
        s.split("elapsed ")
            .nth(1)
            .and_then(|t| t.split_whitespace().next())
            .map(str::to_string)
            .unwrap_or_default()
    };
    assert_ne!(
        clock(&first),
        clock(&second),
        "the clock runs:\n{first}\n{second}"
    );
    // The unreadable sectors before the hang are on the map and counted.
    assert!(second.contains("X ERR   1"), "{second}");
    disk.release();
    tmux.wait_for("finished", Duration::from_secs(60), "the scan finished");
    tmux.keys(&["q"]);
    tmux.wait_for("EXITED-0", Duration::from_secs(10), "after quit");
}
