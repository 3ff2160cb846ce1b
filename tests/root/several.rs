//! `disktriage run TARGET TARGET...` on real loop devices this test creates (root): one
//! report per device with the kernel's witness, the rows and the verdict; a device the block
//! layer throttles (a blkio cgroup around the run) is named as the outlier; a write test
//! whose --destroy-data list misses a device writes to none of them.

#![allow(clippy::unwrap_used)] // tests may unwrap: a panic is the failure report

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::{LoopDev, root_or_skip, scratch};

/// Three loop devices over their own sparse images.
fn three_loops(dir: &Path) -> Vec<LoopDev> {
    (0..3)
        .map(|i| {
            let image = dir.join(format!("several-{i}.img"));
            std::fs::File::create(&image)
                .and_then(|f| f.set_len(64 << 20))
                .unwrap();
            LoopDev::attach(&image, &[])
        })
        .collect()
}

fn run(args: &[&str]) -> Output {
    common::disktriage(args)
}

#[test]
fn root_several_loop_devices_report_each_with_its_witness() {
    if !root_or_skip("root_several_loop_devices_report_each_with_its_witness") {
        return;
    }
    let dir = scratch();
    let loops = three_loops(dir.path());
    let paths: Vec<&str> = loops.iter().map(LoopDev::path_str).collect();
    let mut args = vec!["run"];
    args.extend(&paths);
    args.extend([
        "--test", "seq-read", "--bs", "128k", "--time", "1", "--warmup", "0.2", "--json",
    ]);
    let out = run(&args);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(doc["mode"], "parallel");
    let targets = doc["targets"].as_array().unwrap();
    assert_eq!(targets.len(), 3);
    for (t, l) in targets.iter().zip(&loops) {
        assert_eq!(t["target"], l.path_str());
        assert_eq!(t["row"]["device"], l.name.as_str());
        let report = &t["reports"][0];
        assert_eq!(report["target"]["device"], l.name.as_str());
        // The kernel's witness, read on this device's own counters.
        let witness = &report["outcome"]["phases"][0]["witness"];
        assert!(
            witness["source"].as_str().unwrap().contains(&l.name),
            "{witness}"
        );
        assert_eq!(witness["agrees"], true, "{witness}");
        assert_eq!(t["row"]["witness"]["state"], "agrees");
    }
    // Every device is compared with the median of the other two.
    let standings = doc["verdict"]["standings"].as_array().unwrap();
    assert_eq!(standings.len(), 3);
    for s in standings {
        let mine = s["mbps"].as_f64().unwrap();
        let others: Vec<f64> = standings
            .iter()
            .filter(|o| o["name"] != s["name"])
            .map(|o| o["mbps"].as_f64().unwrap())
            .collect();
        let lower = others.iter().copied().fold(f64::MAX, f64::min);
        assert_eq!(s["others_median_mbps"].as_f64().unwrap(), lower);
        let diff = (mine - lower) / lower * 100.0;
        assert!((s["diff_pct"].as_f64().unwrap() - diff).abs() < 1e-6, "{s}");
        assert_eq!(s["slower"], diff < -20.0, "{s}");
    }
}

/// A cgroup that limits reads of one device (blkio on cgroup v1, io.max on v2); removed on
/// drop.
struct Throttle {
    dir: PathBuf,
}

impl Throttle {
    fn reads(dev: &str, bytes_per_sec: u64) -> Option<Throttle> {
        let majmin = std::fs::read_to_string(format!("/sys/block/{dev}/dev")).ok()?;
        let majmin = majmin.trim();
        let name = format!("disktriage-test-{}", std::process::id());
        let v1 = Path::new("/sys/fs/cgroup/blkio");
        let v2 = Path::new("/sys/fs/cgroup");
        let (dir, file, line) = if v1.join("blkio.throttle.read_bps_device").exists() {
            (
                v1.join(name),
                "blkio.throttle.read_bps_device",
                format!("{majmin} {bytes_per_sec}"),
            )
        } else if std::fs::read_to_string(v2.join("cgroup.subtree_control"))
            .is_ok_and(|c| c.split_whitespace().any(|w| w == "io"))
        {
            (
                v2.join(name),
                "io.max",
                format!("{majmin} rbps={bytes_per_sec}"),
            )
        } else {
            return None;
        };
        std::fs::create_dir(&dir).ok()?;
        let t = Throttle { dir };
        std::fs::write(t.dir.join(file), line).ok()?;
        Some(t)
    }
}

impl Drop for Throttle {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir(&self.dir);
    }
}

#[test]
fn root_several_a_throttled_loop_device_is_the_outlier() {
    if !root_or_skip("root_several_a_throttled_loop_device_is_the_outlier") {
        return;
    }
    let dir = scratch();
    let loops = three_loops(dir.path());
    let slow = &loops[1];
    let Some(throttle) = Throttle::reads(&slow.name, 5_000_000) else {
        // A kernel feature, not a package the suite could install: said, not failed.
        eprintln!(
            "SKIPPED root_several_a_throttled_loop_device_is_the_outlier: no blkio or io \
             cgroup controller to throttle a device with (the QEMU lab's throttled disk \
             covers the verdict)"
        );
        return;
    };
    // The run joins the throttling group before it starts (its threads inherit it).
    let paths: Vec<&str> = loops.iter().map(LoopDev::path_str).collect();
    let script = format!(
        "echo $$ > {}/cgroup.procs && exec {} run {} --test seq-read --bs 64k --time 2 \
         --warmup 0.3",
        throttle.dir.display(),
        env!("CARGO_BIN_EXE_disktriage"),
        paths.join(" ")
    );
    let out = Command::new("sh")
        .args(["-c", &script])
        .env(common::HISTORY_ENV, common::history_dir())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let row = |name: &str| {
        stdout
            .lines()
            .find(|l| l.starts_with(&format!("{name} ")))
            .unwrap_or_else(|| panic!("no row for {name}:\n{stdout}"))
    };
    // One repeat: no noise figure, so the verdict asks to confirm it (`SLOWER?`).
    assert!(row(&slow.name).ends_with("SLOWER?"), "{stdout}");
    for fast in [&loops[0], &loops[2]] {
        assert!(!row(&fast.name).contains("SLOWER"), "{stdout}");
    }
    let flat = stdout.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        flat.contains(&format!("Verdict: possible outlier: {} is", slow.name)),
        "{stdout}"
    );
    // The throttle's rate is what the slow device's row shows (5 MB/s, give or take a burst).
    // It is low enough that the others stay well above it on a loaded machine.
    let mbps: f64 = row(&slow.name)
        .split_whitespace()
        .nth(1)
        .unwrap()
        .parse()
        .unwrap();
    assert!((3.5..=6.5).contains(&mbps), "{stdout}");
}

#[test]
fn root_several_a_list_that_misses_a_device_writes_nothing() {
    if !root_or_skip("root_several_a_list_that_misses_a_device_writes_nothing") {
        return;
    }
    let dir = scratch();
    let loops = three_loops(dir.path());
    let (a, b) = (&loops[0], &loops[1]);
    let out = run(&[
        "run",
        a.path_str(),
        b.path_str(),
        "--test",
        "seq-write",
        "--count",
        "4",
        "--destroy-data",
        &a.name,
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(&format!("does not name {}", b.name)),
        "{stderr}"
    );
    for l in [a, b] {
        let bytes = std::fs::read(&l.image).unwrap();
        assert!(bytes.iter().all(|&x| x == 0), "{} was written", l.name);
    }
    // Named both: both are written.
    let list = format!("{},{}", b.name, a.name);
    let out = run(&[
        "run",
        a.path_str(),
        b.path_str(),
        "--test",
        "seq-write",
        "--count",
        "4",
        "--destroy-data",
        &list,
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for l in [a, b] {
        let bytes = std::fs::read(&l.image).unwrap();
        assert!(
            bytes[..1 << 20].iter().any(|&x| x != 0),
            "{} was not written",
            l.name
        );
    }
}

/// A run on several devices with repeats files each device's repeats as one test in the
/// history (as the TUI does), with the mean the report gives, not one entry per repeat.
#[test]
fn root_several_repeats_are_one_history_entry_per_device() {
    if !root_or_skip("root_several_repeats_are_one_history_entry_per_device") {
        return;
    }
    let dir = scratch();
    let history = dir.path().join("history");
    let loops: Vec<LoopDev> = three_loops(dir.path()).into_iter().take(2).collect();
    let out = Command::new(env!("CARGO_BIN_EXE_disktriage"))
        .env(common::HISTORY_ENV, &history)
        .args(["run", loops[0].path_str(), loops[1].path_str()])
        .args(["--test", "seq-read", "--bs", "128k", "--time", "300ms"])
        .args(["--warmup", "0", "--repeats", "2", "--json"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let loaded = disktriage::history::History::new(&history).load().unwrap();
    assert_eq!(loaded.entries.len(), 2, "{:?}", loaded.entries);
    for (l, t) in loops.iter().zip(doc["targets"].as_array().unwrap()) {
        let image = l.image.display().to_string();
        let mine: Vec<_> = loaded
            .entries
            .iter()
            .filter(|e| e.disk == disktriage::model::DiskIdentity::LoopImage(image.clone()))
            .collect();
        assert_eq!(mine.len(), 1, "{:?}", loaded.entries);
        assert_eq!(mine[0].repeats, 2);
        // The history's figure is the mean of the two repeats the report lists.
        let reports = t["reports"].as_array().unwrap();
        assert_eq!(reports.len(), 2);
        let mean: f64 = reports
            .iter()
            .map(|r| r["outcome"]["phases"][0]["read"]["iops"].as_f64().unwrap())
            .sum::<f64>()
            / 2.0;
        let filed = mine[0].figures[0].iops.mean;
        assert!((filed - mean).abs() < 1e-6 * mean, "{filed} vs {mean}");
    }
}
