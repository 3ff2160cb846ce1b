//! How long the TUI takes to show its device list with many devices attached (root; tmux).
//!
//!     sudo cargo bench --bench first_frame              # 64 loop devices, 5 rounds
//!     sudo cargo bench --bench first_frame -- 7 32      # 7 rounds, 32 loop devices
//!     DISKTRIAGE_BIN=/path/to/disktriage sudo -E cargo bench --bench first_frame
//!                                                       # another build (before/after)
//!
//! Attaches the loop devices over sparse files in a directory of its own under /dev/shm
//! (detached and removed again however the benchmark ends, a panic included), then starts the
//! TUI in a tmux pane of 80x25, once a round, on a tmux server of its own. Everything the pane
//! prints is copied to a file (`pipe-pane`) that is watched; the time counted is from the
//! shell's clock reading just before it `exec`s the program to the moment the first bytes of
//! a device row (the name of one of the benchmark's images, in the MODEL column) reach the
//! terminal. What tmux, the shell and the copy add is measured the same way with `printf` in
//! place of the program, and subtracted ("tmux-corrected"). Prints the median and range of
//! both. Skipped (not failed) without root or tmux.

#![allow(clippy::unwrap_used)] // a benchmark harness: a panic is the failure report

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Set by SIGINT, SIGTERM or SIGHUP: the benchmark panics at its next wait, and the panic's
/// unwinding detaches the loop devices.
static INTERRUPTED: OnceLock<Arc<AtomicBool>> = OnceLock::new();

fn check_interrupted() {
    assert!(
        !INTERRUPTED
            .get()
            .is_some_and(|flag| flag.load(Ordering::Relaxed)),
        "interrupted: the loop devices are detached"
    );
}

/// The images' names start with this: the marker of a device row in the terminal's output.
const MARK: &str = "ffbench";

/// The benchmark's loop devices and their directory; detached and removed on drop.
struct Loops {
    dir: PathBuf,
    devices: Vec<String>,
}

impl Loops {
    fn attach(count: usize) -> Loops {
        let dir = PathBuf::from(format!(
            "/dev/shm/disktriage-first-frame-{}",
            std::process::id()
        ));
        std::fs::create_dir_all(&dir).unwrap();
        let mut loops = Loops {
            dir,
            devices: Vec::new(),
        };
        for i in 0..count {
            check_interrupted();
            let image = loops.dir.join(format!("{MARK}{i:02}"));
            std::fs::File::create(&image)
                .and_then(|f| f.set_len(16 << 20))
                .unwrap();
            let out = Command::new("losetup")
                .args(["--find", "--show"])
                .arg(&image)
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "losetup: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            loops
                .devices
                .push(String::from_utf8_lossy(&out.stdout).trim().to_string());
        }
        loops
    }
}

impl Drop for Loops {
    fn drop(&mut self) {
        for dev in &self.devices {
            let _ = Command::new("losetup").arg("-d").arg(dev).status();
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A tmux server of its own; killed on drop.
struct Tmux(String);

impl Tmux {
    fn cmd(&self, args: &[&str]) -> std::process::Output {
        Command::new("tmux")
            .args(["-L", &self.0])
            .args(args)
            .output()
            .unwrap()
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .args(["-L", &self.0, "kill-server"])
            .output();
    }
}

fn now_ns() -> u128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_nanos()
}

/// Runs `program` (a shell command) in a new 80x25 pane and returns the milliseconds from its
/// start to the first output that holds `MARK`.
fn time_to_mark(work: &Path, round: usize, program: &str) -> f64 {
    let go = work.join(format!("go-{round}"));
    let t0 = work.join(format!("t0-{round}"));
    let out = work.join(format!("out-{round}"));
    let tmux = Tmux(format!("dt-first-frame-{}-{round}", std::process::id()));
    let shell = format!(
        "while [ ! -e {go} ]; do sleep 0.01; done; date +%s%N > {t0}; exec {program}",
        go = go.display(),
        t0 = t0.display()
    );
    let st = tmux.cmd(&[
        "new-session",
        "-d",
        "-s",
        "b",
        "-x",
        "80",
        "-y",
        "25",
        "sh",
        "-c",
        &shell,
    ]);
    assert!(
        st.status.success(),
        "{}",
        String::from_utf8_lossy(&st.stderr)
    );
    let st = tmux.cmd(&[
        "pipe-pane",
        "-t",
        "b",
        "-O",
        &format!("cat > {}", out.display()),
    ]);
    assert!(
        st.status.success(),
        "{}",
        String::from_utf8_lossy(&st.stderr)
    );
    // Until the copy is open, the program's first bytes would be lost.
    for _ in 0..500 {
        check_interrupted();
        if out.exists() {
            break;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    assert!(out.exists(), "pipe-pane never started");
    std::thread::sleep(Duration::from_millis(100));
    std::fs::write(&go, "").unwrap();
    let deadline = now_ns() + 20_000_000_000;
    let seen = loop {
        let text = std::fs::read(&out).unwrap_or_default();
        if text.windows(MARK.len()).any(|w| w == MARK.as_bytes()) {
            break now_ns();
        }
        assert!(
            now_ns() < deadline,
            "no device row in 20 s:\n{}",
            String::from_utf8_lossy(&tmux.cmd(&["capture-pane", "-p", "-t", "b"]).stdout)
        );
        check_interrupted();
        std::thread::sleep(Duration::from_micros(500));
    };
    let started: u128 = std::fs::read_to_string(&t0)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    // Let the program end as the admin would (q), then the server goes.
    tmux.cmd(&["send-keys", "-t", "b", "q"]);
    std::thread::sleep(Duration::from_millis(200));
    (seen - started) as f64 / 1e6
}

fn summary(v: &[f64]) -> (f64, f64, f64) {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    (s[s.len() / 2], s[0], s[s.len() - 1])
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let rounds: usize = args.first().and_then(|a| a.parse().ok()).unwrap_or(5);
    let count: usize = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(64);
    if !nix::unistd::geteuid().is_root() {
        eprintln!("first_frame: needs root (attaches loop devices); skipped");
        return;
    }
    if Command::new("tmux").arg("-V").output().is_err() {
        eprintln!("first_frame: tmux is not installed; skipped");
        return;
    }
    let flag = Arc::new(AtomicBool::new(false));
    for sig in [
        signal_hook::consts::SIGINT,
        signal_hook::consts::SIGTERM,
        signal_hook::consts::SIGHUP,
    ] {
        signal_hook::flag::register(sig, Arc::clone(&flag)).unwrap();
    }
    let _ = INTERRUPTED.set(flag);
    let bin = std::env::var("DISKTRIAGE_BIN")
        .unwrap_or_else(|_| env!("CARGO_BIN_EXE_disktriage").to_string());
    let loops = Loops::attach(count);
    let work = tempfile::tempdir().unwrap();
    let history = work.path().join("history");
    let tui = format!("env DISKTRIAGE_HISTORY_DIR={} {bin}", history.display());
    let mut raw = Vec::new();
    let mut base = Vec::new();
    for round in 0..rounds {
        // The bare cost of the set-up: a program that prints a row at once.
        base.push(time_to_mark(
            work.path(),
            2 * round,
            &format!("printf '{MARK}\\n'; sleep 5"),
        ));
        raw.push(time_to_mark(work.path(), 2 * round + 1, &tui));
    }
    let corrected: Vec<f64> = raw.iter().zip(&base).map(|(r, b)| r - b).collect();
    let all = |v: &[f64]| {
        v.iter()
            .map(|x| format!("{x:.1}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    println!(
        "first frame listing the devices, {} loop devices attached ({} block devices in all), \
         80x25, {rounds} rounds, ms:",
        loops.devices.len(),
        std::fs::read_dir("/sys/block").map_or(0, Iterator::count)
    );
    for (what, v) in [
        ("tmux-corrected", &corrected),
        ("raw", &raw),
        ("set-up alone", &base),
    ] {
        let (median, min, max) = summary(v);
        println!(
            "  {what:<15} median {median:>6.1}  range {min:.1}-{max:.1}   (all: {})",
            all(v)
        );
    }
    println!("  goal: tmux-corrected median under 50 ms");
    drop(loops);
}
