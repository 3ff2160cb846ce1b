//! A triage of a thousand disks keeps its bound (root): a thousand loop devices at once.

use std::time::{Duration, Instant};

use crate::common::{self, LoopDev, root_or_skip};

const DISKS: usize = 1000;
const BOUND_S: u64 = 5;

#[test]
fn a_triage_of_a_thousand_disks_keeps_its_bound_and_says_which_it_did_not_reach() {
    let _alone = crate::alone();
    if !root_or_skip("a_triage_of_a_thousand_disks_keeps_its_bound_and_says_which_it_did_not_reach")
    {
        return;
    }
    let dir = tempfile::Builder::new()
        .prefix("disktriage-many.")
        .tempdir_in("/dev/shm")
        .unwrap();
    // Declared first, dropped last: after the loop devices are detached, they are removed.
    let _removed = RemoveLoops(std::cell::RefCell::new(Vec::new()));
    let disks: Vec<LoopDev> = (0..DISKS)
        .map(|i| {
            LoopDev::attach(
                &common::sparse_image(dir.path(), &format!("{i}.img"), 16 << 20),
                &[],
            )
        })
        .collect();
    _removed.0.borrow_mut().extend(
        disks
            .iter()
            .filter_map(|d| d.name.strip_prefix("loop")?.parse::<u32>().ok()),
    );
    let history = dir.path().join("history");
    let mut args = vec![
        "--history-dir".to_string(),
        history.display().to_string(),
        "triage".into(),
        "--json".into(),
        "--bound".into(),
        BOUND_S.to_string(),
    ];
    args.extend(disks.iter().map(|d| d.path_str().to_string()));
    let started = Instant::now();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_disktriage"))
        .args(&args)
        .output()
        .unwrap();
    let wall = started.elapsed();
    let err = String::from_utf8_lossy(&out.stderr);
    let doc: serde_json::Value =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {err}"));
    let reported = Duration::from_secs_f64(doc["seconds"].as_f64().unwrap());
    eprintln!(
        "{DISKS} disks, --bound {BOUND_S}: {:.2} s wall, {:.2} s in the report",
        wall.as_secs_f64(),
        reported.as_secs_f64()
    );
    // Every disk has its line, within the bound and the margin the gathering allows for its
    // last facts; the time reported is the time taken, less the report's own writing.
    assert_eq!(doc["disks"].as_array().unwrap().len(), DISKS, "{err}");
    let bound = Duration::from_secs(BOUND_S);
    assert!(
        reported <= bound + Duration::from_secs(2),
        "the report says {reported:?} for a {bound:?} bound"
    );
    assert!(
        wall <= reported + Duration::from_secs(3),
        "{wall:?} taken, {reported:?} in the report"
    );
    // A disk not reached is unknown, with the reason.
    for disk in doc["disks"].as_array().unwrap() {
        let problems = disk["problems"].to_string();
        if problems.contains("not reached within the") {
            assert_eq!(disk["verdict"], "unknown", "{disk}");
        }
    }
    assert!(
        matches!(out.status.code(), Some(0 | 3 | 4 | 5)),
        "{:?}: {err}",
        out.status
    );
}

/// Removes the loop devices of these numbers (LOOP_CTL_REMOVE, through python3's ioctl: the
/// tests use no unsafe code) once they are detached. A detached loop device stays in
/// /sys/block: a thousand of them made every later command read a thousand devices' sysfs
/// (1.5 s a run), and the root tests after this binary missed their timings.
struct RemoveLoops(std::cell::RefCell<Vec<u32>>);

impl Drop for RemoveLoops {
    fn drop(&mut self) {
        let numbers: Vec<String> = self.0.borrow().iter().map(u32::to_string).collect();
        let script = format!(
            "import fcntl, os\nfd = os.open('/dev/loop-control', os.O_RDWR)\nfor n in [{}]:\n    \
             try:\n        fcntl.ioctl(fd, 0x4C81, n)\n    except OSError:\n        pass\n",
            numbers.join(",")
        );
        let _ = std::process::Command::new("python3")
            .arg("-c")
            .arg(script)
            .status();
    }
}
