//! The history and the persistent scheduler rule on real loop devices (root): a loop device
//! has no world-wide id and no serial, so a rule for it is refused with the reason, and its
//! runs are kept under its image; the test suite's runs never touch /var/lib/disktriage.

#![allow(clippy::unwrap_used)] // tests may unwrap: a panic is the failure report

use crate::common;
use common::history_dir;

use std::fs;
use std::path::Path;

use common::{LoopDev, disktriage, root_or_skip, scratch};
use disktriage::history::{DEFAULT_HISTORY_DIR, FILE, History};
use disktriage::model::DiskIdentity;

/// What /var/lib/disktriage holds now: the history file's size and time, if any.
fn real_history() -> Option<(u64, std::time::SystemTime)> {
    let m = fs::metadata(Path::new(DEFAULT_HISTORY_DIR).join(FILE)).ok()?;
    Some((m.len(), m.modified().ok()?))
}

#[test]
fn a_loop_device_gets_no_rule_and_its_runs_are_kept_under_its_image() {
    if !root_or_skip("a_loop_device_gets_no_rule_and_its_runs_are_kept_under_its_image") {
        return;
    }
    let dir = scratch();
    let dev = LoopDev::new(dir.path(), 16 << 20, 512);
    let system = dir.path().join("sysimage");
    fs::create_dir_all(system.join("etc")).unwrap();

    // No WWN, no serial: refused, with the class rule as the way out; nothing written.
    let out = disktriage(&[
        "sched",
        &dev.name,
        "none",
        "--persist",
        "--target-root",
        system.to_str().unwrap(),
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains(&format!(
            "{} has no stable identity a udev rule can match",
            dev.name
        )),
        "{stderr}"
    );
    // No class rule covers loop devices either: no hint that leads nowhere.
    assert!(!stderr.contains("--persist-class"), "{stderr}");
    let out = disktriage(&[
        "sched",
        &dev.name,
        "none",
        "--persist",
        "--persist-class",
        "--target-root",
        system.to_str().unwrap(),
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(stderr.contains(&format!("not {}", dev.name)), "{stderr}");
    assert!(!system.join("etc/udev").exists());
    // Nor was the running scheduler touched.
    let sched = fs::read_to_string(format!("/sys/block/{}/queue/scheduler", dev.name)).unwrap();
    let before = sched.clone();

    // A run through the suite's helper (no --history-dir): it lands in the suite's history,
    // under the loop device's image, and /var/lib/disktriage stays as it was.
    let real_before = real_history();
    let out = disktriage(&[
        "run",
        dev.path_str(),
        "--test",
        "rand-read",
        "--time",
        "200ms",
        "--warmup",
        "0",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let image = dev.image.display().to_string();
    let loaded = History::new(history_dir()).load().unwrap();
    let mine: Vec<_> = loaded
        .entries
        .iter()
        .filter(|e| e.disk == DiskIdentity::LoopImage(image.clone()))
        .collect();
    assert_eq!(mine.len(), 1, "{:?}", loaded.entries);
    assert_eq!(mine[0].device, dev.name);
    assert_eq!(mine[0].test, "rand-read");
    assert_eq!(mine[0].settings.drive_cache.as_deref(), Some("n/a"));
    assert!(mine[0].figures[0].iops.mean > 0.0);
    assert_eq!(real_history(), real_before, "the real history was written");
    assert_eq!(
        fs::read_to_string(format!("/sys/block/{}/queue/scheduler", dev.name)).unwrap(),
        before
    );

    // `history DEV` finds it by the image, whatever loop number it gets next.
    let out = common::disktriage(&["history", &dev.name]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.starts_with(&format!("Runs of the disk with loop image \"{image}\"")),
        "{stdout}"
    );
    assert!(stdout.contains(": 1\n"), "{stdout}");
}
