//! What the live TUI costs a test (root; tmux from Debian).
//!
//!     sudo cargo bench --bench tui_overhead            # 3 rounds, 10 s runs
//!     sudo cargo bench --bench tui_overhead -- 5 20    # 5 rounds, 20 s runs
//!
//! The same test (4 KiB random reads, QD32, on zram filled with random data) runs headless
//! (`disktriage run --json`) and in the TUI (driven through tmux at 132x43: select zram0,
//! pick rand-read, set QD and duration, run, export the JSON, quit), in alternating order, and
//! the median IOPS of each are compared. tmux's own CPU time (the terminal's rendering) is
//! printed for each TUI run. The TUI reports its UI thread's CPU time while the test ran
//! (`DISKTRIAGE_UI_STATS`), as a share of one core.

#![allow(clippy::unwrap_used)] // a benchmark harness: a panic is the failure report

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::Value;

struct Tmux(String);

impl Tmux {
    fn cmd(&self, args: &[&str]) -> String {
        let out = Command::new("tmux")
            .args(["-L", &self.0])
            .args(args)
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    }
    fn keys(&self, keys: &[&str]) {
        for k in keys {
            self.cmd(&["send-keys", "-t", "b", k]);
            std::thread::sleep(Duration::from_millis(80));
        }
    }
    fn wait(&self, text: &str, secs: u64) {
        let start = Instant::now();
        while !self.cmd(&["capture-pane", "-p", "-t", "b"]).contains(text) {
            assert!(
                start.elapsed() < Duration::from_secs(secs),
                "{text:?} never appeared:\n{}",
                self.cmd(&["capture-pane", "-p", "-t", "b"])
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .args(["-L", &self.0, "kill-server"])
            .output();
    }
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let rounds: usize = args.first().and_then(|a| a.parse().ok()).unwrap_or(3);
    let secs: u64 = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(10);
    if !nix::unistd::geteuid().is_root() {
        eprintln!("tui_overhead: needs root (configures zram); skipped");
        return;
    }
    if Command::new("tmux").arg("-V").output().is_err() {
        eprintln!("tui_overhead: tmux is not installed; skipped");
        return;
    }
    let zram = Path::new("/sys/block/zram0");
    if std::fs::read_to_string(zram.join("disksize"))
        .unwrap_or_default()
        .trim()
        != "0"
    {
        eprintln!("tui_overhead: /dev/zram0 is in use by someone else; skipped");
        return;
    }
    std::fs::write(zram.join("disksize"), (1u64 << 30).to_string()).unwrap();
    struct Reset;
    impl Drop for Reset {
        fn drop(&mut self) {
            let _ = std::fs::write("/sys/block/zram0/reset", "1");
        }
    }
    let _reset = Reset;
    let bin = env!("CARGO_BIN_EXE_disktriage");
    let st = Command::new(bin)
        .env(
            "DISKTRIAGE_HISTORY_DIR",
            concat!(env!("CARGO_TARGET_TMPDIR"), "/bench-history"),
        )
        .args([
            "run",
            "/dev/zram0",
            "--test",
            "seq-write",
            "--qd",
            "8",
            "--time",
            "0",
            "--io-size",
            "1G",
            "--destroy-data",
            "zram0",
        ])
        .stdout(std::process::Stdio::null())
        .status()
        .unwrap();
    assert!(st.success(), "prefill");

    let mut headless = Vec::new();
    let mut tui = Vec::new();
    let mut ui_share = Vec::new();
    // Alternate which goes first: zram and the VM drift over a session.
    for round in 0..rounds {
        if round % 2 == 1 {
            headless.push(run_headless(bin, secs));
        }
        let (iops, share) = run_tui(bin, secs);
        tui.push(iops);
        ui_share.push(share);
        if round % 2 == 0 {
            headless.push(run_headless(bin, secs));
        }
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let (h, t, u) = (
        median(&mut headless),
        median(&mut tui),
        median(&mut ui_share),
    );
    println!("rand-read 4k QD32 on zram, {secs} s runs, {rounds} rounds, medians:");
    println!("  headless  {h:>10.0} IOPS   (all: {headless:.0?})");
    println!("  TUI live  {t:>10.0} IOPS   (all: {tui:.0?})");
    println!(
        "  difference {:+.2} %   (goal: within 2 %)",
        (t - h) / h * 100.0
    );
    let shares: Vec<String> = ui_share
        .iter()
        .map(|s| format!("{:.2}", s * 100.0))
        .collect();
    println!(
        "  UI thread {:.2} % of a core while the test ran (goal: under 3 %)   (all: {})",
        u * 100.0,
        shares.join(", ")
    );
}

fn run_headless(bin: &str, secs: u64) -> f64 {
    let out = Command::new(bin)
        .env(
            "DISKTRIAGE_HISTORY_DIR",
            concat!(env!("CARGO_TARGET_TMPDIR"), "/bench-history"),
        )
        .args([
            "run",
            "/dev/zram0",
            "--test",
            "rand-read",
            "--qd",
            "32",
            "--time",
            &secs.to_string(),
            "--warmup",
            "1",
            "--json",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    describe("headless", &doc)
}

/// Prints what one run did and returns its IOPS.
fn describe(mode: &str, doc: &Value) -> f64 {
    let p = &doc["outcome"]["phases"][0];
    let job = &p["job"];
    eprintln!(
        "{mode}: {:.0} IOPS, QD{} {} s after {} s warm-up, process CPU {:.2} s over {:.2} s",
        p["read"]["iops"].as_f64().unwrap(),
        job["qd"],
        job["time"],
        job["warmup"],
        p["cpu_seconds"].as_f64().unwrap(),
        p["seconds"].as_f64().unwrap()
    );
    p["read"]["iops"].as_f64().unwrap()
}

fn run_tui(bin: &str, secs: u64) -> (f64, f64) {
    let dir = tempfile::tempdir().unwrap();
    let stats = dir.path().join("ui.json");
    // A tmux server of its own per run: the previous one may still be shutting down.
    static RUNS: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = RUNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let tmux = Tmux(format!("dt-bench-{}-{n}", std::process::id()));
    let cmd = format!(
        "cd {} && DISKTRIAGE_UI_STATS={} DISKTRIAGE_HISTORY_DIR={} {bin}; sleep 30",
        dir.path().display(),
        stats.display(),
        concat!(env!("CARGO_TARGET_TMPDIR"), "/bench-history")
    );
    let ok = Command::new("tmux")
        .args([
            "-L",
            &tmux.0,
            "new-session",
            "-d",
            "-s",
            "b",
            "-x",
            "132",
            "-y",
            "43",
            "sh",
            "-c",
            &cmd,
        ])
        .status()
        .unwrap();
    assert!(ok.success());
    tmux.wait("DEVICE", 10);
    for _ in 0..30 {
        if tmux
            .cmd(&["capture-pane", "-p", "-t", "b"])
            .contains("┌ zram0 ")
        {
            break;
        }
        tmux.keys(&["Down"]);
    }
    tmux.wait("┌ zram0 ", 2);
    tmux.keys(&["Enter"]);
    tmux.wait("Parameters", 2);
    tmux.keys(&["Down"; 7]);
    // Parameters: queue depth 32, duration `secs`, warm-up 1 s.
    tmux.keys(&[
        "Enter", "Down", "Enter", "3", "2", "Enter", "Down", "Down", "Enter",
    ]);
    for c in secs.to_string().chars() {
        tmux.keys(&[&c.to_string()]);
    }
    // Past the amount field to the warm-up.
    tmux.keys(&["Enter", "Down", "Down", "Enter", "1", "Enter"]);
    let server = tmux.cmd(&["display", "-p", "#{pid}"]).trim().to_string();
    let cpu = || -> f64 {
        let stat = std::fs::read_to_string(format!("/proc/{server}/stat")).unwrap_or_default();
        let fields: Vec<&str> = stat
            .rsplit(") ")
            .next()
            .unwrap_or("")
            .split_whitespace()
            .collect();
        let ticks: f64 = fields.get(11).and_then(|v| v.parse().ok()).unwrap_or(0.0)
            + fields.get(12).and_then(|v| v.parse().ok()).unwrap_or(0.0);
        ticks / 100.0
    };
    let tmux_cpu0 = cpu();
    let t0 = Instant::now();
    tmux.keys(&["r"]);
    // No polling while the test runs: every capture-pane starts a tmux client, and that CPU
    // would be charged to the TUI. Wait out warm-up and run, then look.
    std::thread::sleep(Duration::from_secs(secs + 1) + Duration::from_millis(500));
    tmux.wait("finished", 30);
    eprintln!(
        "tmux server used {:.1} % of a core while the TUI ran the test",
        (cpu() - tmux_cpu0) / t0.elapsed().as_secs_f64() * 100.0
    );
    tmux.keys(&["4", "e", "j"]);
    tmux.wait("exported to", 5);
    tmux.keys(&["q"]);
    let start = Instant::now();
    while !stats.exists() && start.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(100));
    }
    let ui: Value = serde_json::from_str(&std::fs::read_to_string(&stats).unwrap()).unwrap();
    let share = ui["ui_cpu_during_runs_seconds"].as_f64().unwrap()
        / ui["run_wall_seconds"].as_f64().unwrap();
    let export = std::fs::read_dir(dir.path())
        .unwrap()
        .filter_map(Result::ok)
        .find(|e| e.file_name().to_string_lossy().ends_with(".json") && e.file_name() != "ui.json")
        .expect("exported JSON");
    let doc: Value =
        serde_json::from_str(&std::fs::read_to_string(export.path()).unwrap()).unwrap();
    let job = &doc["outcome"]["phases"][0]["job"];
    assert_eq!(
        job["qd"], 32,
        "the TUI runs what the headless run runs: {job}"
    );
    assert_eq!(job["time"].as_f64(), Some(secs as f64), "{job}");
    assert_eq!(job["warmup"].as_f64(), Some(1.0), "{job}");
    (describe("TUI", &doc), share)
}
