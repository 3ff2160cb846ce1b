//! `disktriage smrcheck` on loop devices: a plain one (over an image file) shows no write
//! cliff and every byte is put back (sha256 of the whole device, by sha256sum, before and
//! after); one over `tests/fuse/cachedisk.py smr`, which answers every write late once a set
//! number of bytes has been written (a full media cache), shows the cliff at about those
//! bytes; a probe killed (SIGKILL) mid-write leaves a journal that `restore --capacity`
//! completes; the refusals (no or another typed name, a mounted device, a device stacked on
//! a mounted one, the journal on the target's medium, an absurd --minutes) write nothing.

use std::fs;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::common::{self, CacheDisk, LoopDev, Mounted};

/// A directory for journals on a RAM file system: the loop devices here are over images on
/// the disk /tmp is on, and a journal there would share that disk (refused, rightly).
fn journal_dir() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("disktriage-smr-journal.")
        .tempdir_in("/dev/shm")
        .expect("a directory in /dev/shm")
}

fn sha(dev: &LoopDev) -> String {
    common::sh("sha256sum", &[dev.path_str()])[..64].to_string()
}

/// Random bytes over the first `mib` MiB of `path` (a device or a file).
fn fill_random(path: &str, mib: u64) {
    common::sh(
        "dd",
        &[
            "if=/dev/urandom",
            &format!("of={path}"),
            "bs=1M",
            &format!("count={mib}"),
            "status=none",
            "conv=fsync",
        ],
    );
}

fn smrcheck(dev: &LoopDev, confirm: &str, journal: &Path, extra: &[&str]) -> Output {
    let mut args = vec![
        "smrcheck",
        dev.path_str(),
        "--confirm",
        confirm,
        "--journal",
        journal.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    common::disktriage(&args)
}

fn json(out: &Output) -> serde_json::Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{e}: {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

#[test]
fn a_plain_loop_device_has_no_cliff_and_every_byte_is_put_back() {
    if !common::root_or_skip("smrcheck::a_plain_loop_device") {
        return;
    }
    let dir = common::scratch();
    let dev = LoopDev::new(dir.path(), 64 << 20, 512);
    fill_random(dev.path_str(), 64);
    let before = sha(&dev);
    let writes_before = common::io_counters(&dev.name)[2];
    let journals = journal_dir();
    let journal = journals.path().join("plain.journal");
    let started = Instant::now();
    let out = smrcheck(&dev, &dev.name, &journal, &["--minutes", "0.3", "--json"]);
    let took = started.elapsed();
    let report = json(&out);
    assert_eq!(out.status.code(), Some(0), "{report:#}");
    assert_eq!(report["verdict"], "no-cliff", "{report:#}");
    assert!(
        report["sentence"]
            .as_str()
            .unwrap()
            .starts_with("no write cliff in 18 s ("),
        "{report:#}"
    );
    // A quarter of the device, in its middle.
    assert_eq!(report["range_bytes"], 16 << 20);
    assert_eq!(report["range_offset"], 24 << 20);
    assert_eq!(report["block_bytes"], 4096);
    assert_eq!(report["medium"], "unknown", "a loop device has no drive");
    let series = report["series"].as_array().unwrap();
    assert!((16..=19).contains(&series.len()), "{}", series.len());
    let written: u64 = series.iter().map(|s| s["bytes"].as_u64().unwrap()).sum();
    assert_eq!(report["written_bytes"], written);
    assert!(written > 16 << 20, "the writes ran: {written}");
    assert!(
        common::io_counters(&dev.name)[2] - writes_before >= written / 4096,
        "the device saw every write"
    );
    assert_eq!(report["put_back"]["mismatched"], serde_json::json!([]));
    assert_eq!(report["put_back"]["verified"], 32_768);
    assert!(!journal.exists(), "the journal goes once all is back");
    assert_eq!(sha(&dev), before, "every byte is back");
    assert!(took < Duration::from_secs(60), "{took:?}");
    eprintln!("plain loop device: {took:?}\n{report:#}");

    // The text, as the admin reads it.
    let out = smrcheck(&dev, &dev.name, &journal, &["--minutes", "0.3"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(
        text.contains("Verdict    no write cliff in 18 s ("),
        "{text}"
    );
    assert!(text.contains("MB/s       each 10 s: "), "{text}");
    assert!(text.contains("32,768 sectors written back, 32,768 read back as saved"));
    assert_eq!(sha(&dev), before);
    eprintln!("{text}");
}

/// A loop device over the FUSE disk whose writes are answered 20 ms late once `cliff` bytes
/// have been written (counted by the daemon from its start; the store is filled before).
struct SmrDisk {
    dev: Option<LoopDev>,
    _disk: CacheDisk,
    _dir: tempfile::TempDir,
}

impl SmrDisk {
    fn new(size: u64, cliff: u64) -> SmrDisk {
        let dir = common::scratch();
        let store = dir.path().join("store");
        fill_random(store.to_str().unwrap(), size >> 20);
        let disk = CacheDisk::start(
            "smr",
            &store,
            &dir.path().join("mnt"),
            size,
            &[("CACHEDISK_SMR", format!("{cliff}:20"))],
        );
        let dev = LoopDev::attach(&disk.file(), &["--direct-io=on"]);
        SmrDisk {
            dev: Some(dev),
            _disk: disk,
            _dir: dir,
        }
    }

    fn dev(&self) -> &LoopDev {
        self.dev.as_ref().unwrap()
    }
}

impl Drop for SmrDisk {
    fn drop(&mut self) {
        // The loop device goes before the daemon under it.
        self.dev.take();
    }
}

#[test]
fn a_disk_whose_writes_slow_after_its_cache_shows_the_cliff_there() {
    if !common::root_or_skip("smrcheck::a_disk_whose_writes_slow")
        || !common::fuse_available("smrcheck")
    {
        return;
    }
    const CLIFF: u64 = 64 << 20;
    let disk = SmrDisk::new(128 << 20, CLIFF);
    let dev = disk.dev();
    let before = sha(dev);
    let journals = journal_dir();
    let journal = journals.path().join("smr.journal");
    let started = Instant::now();
    let out = smrcheck(dev, &dev.name, &journal, &["--minutes", "2", "--json"]);
    let took = started.elapsed();
    let report = json(&out);
    assert_eq!(out.status.code(), Some(3), "a cliff is exit 3: {report:#}");
    assert_eq!(report["verdict"], "cliff", "{report:#}");
    let f = &report["finding"];
    assert_eq!(f["kind"], "cliff");
    // The daemon slows the writes from the one that passes CLIFF on: the first slow
    // interval is that one (when the slow writes fill most of it) or the next, so the
    // bytes before it are CLIFF to within one interval's.
    let before_cliff = f["written_before"].as_u64().unwrap();
    let onset = f["onset"].as_u64().unwrap() as usize;
    let bytes = |i: usize| report["series"][i]["bytes"].as_u64().unwrap();
    assert!(
        before_cliff + bytes(onset) >= CLIFF && before_cliff <= CLIFF + bytes(onset - 1),
        "the cliff at {before_cliff} bytes: {report:#}"
    );
    assert!(
        f["after_mbps"].as_f64().unwrap() * 5.0 < f["before_mbps"].as_f64().unwrap(),
        "{report:#}"
    );
    let sentence = report["sentence"].as_str().unwrap();
    assert!(
        sentence.starts_with("write cliff after 6") && sentence.contains("MiB written: "),
        "{sentence}"
    );
    assert!(sentence.ends_with("(what the device is cannot be told here)"));
    // Stopped early: well before the two minutes asked.
    let seconds = report["series"].as_array().unwrap().len();
    assert!(seconds < 60, "{seconds} s of writes");
    assert_eq!(report["put_back"]["mismatched"], serde_json::json!([]));
    assert!(!journal.exists());
    assert_eq!(sha(dev), before, "every byte is back");
    // In the history under the device's identity, for the triage's smr-in-array rule.
    let history = fs::read_to_string(common::history_dir().join("history.jsonl")).unwrap();
    let entry = history
        .lines()
        .rev()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .find(|e| e["test"] == "smrcheck" && e["device"] == dev.name.as_str())
        .expect("the probe is in the history");
    assert_eq!(entry["smr"]["verdict"], "cliff", "{entry:#}");
    assert_eq!(entry["smr"]["sentence"], report["sentence"]);
    assert_eq!(entry["smr"]["medium"], "unknown");
    eprintln!("cliff fixture: {took:?}\n{report:#}");
}

#[test]
fn a_probe_killed_mid_write_leaves_a_journal_that_restore_completes() {
    if !common::root_or_skip("smrcheck::a_probe_killed") {
        return;
    }
    let dir = common::scratch();
    let dev = LoopDev::new(dir.path(), 64 << 20, 4096);
    fill_random(dev.path_str(), 64);
    let before = sha(&dev);
    let journals = journal_dir();
    let journal = journals.path().join("killed.journal");
    let mut child = Command::new(env!("CARGO_BIN_EXE_disktriage"))
        .env(common::HISTORY_ENV, common::history_dir())
        .args(["smrcheck", dev.path_str(), "--confirm", &dev.name])
        .args(["--journal", journal.to_str().unwrap(), "--minutes", "1"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // The whole 16 MiB range is in the journal before the first write; then 2 s of writes.
    let saved = common::poll(400, || {
        std::thread::sleep(Duration::from_millis(25));
        (fs::metadata(&journal).map_or(0, |m| m.len()) >= 16 << 20).then_some(())
    });
    assert!(saved.is_some(), "the journal holds the range");
    std::thread::sleep(Duration::from_secs(2));
    child.kill().unwrap();
    child.wait().unwrap();
    assert_ne!(
        sha(&dev),
        before,
        "the kill left random blocks on the device"
    );

    let out = common::disktriage(&["restore", "--capacity", journal.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        text.contains("read back as saved; the journal is removed"),
        "{text}"
    );
    assert_eq!(sha(&dev), before, "every byte is back after the restore");
    assert!(!journal.exists());
}

#[test]
fn refusals_write_nothing() {
    if !common::root_or_skip("smrcheck::refusals") {
        return;
    }
    let dir = common::scratch();
    // The target's data lives on a file system of another loop device: a journal there
    // would go down with the target's medium.
    let medium = LoopDev::new(dir.path(), 256 << 20, 512);
    let mounted = Mounted::ext4(medium.path_str(), &dir.path().join("m"));
    let image = common::sparse_image(&mounted.dir, "target.img", 64 << 20);
    let dev = LoopDev::attach(&image, &[]);
    fill_random(dev.path_str(), 64);
    let before = sha(&dev);
    let writes = |d: &LoopDev| common::io_counters(&d.name)[2];
    let at_start = writes(&dev);
    let journals = journal_dir();
    let journal = journals.path().join("j");
    let j = journal.to_str().unwrap();

    // No typed name: a usage error, before anything is opened.
    let out = common::disktriage(&["smrcheck", dev.path_str(), "--journal", j]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("pass --confirm NAME"), "{err}");

    // Absurd times: usage errors.
    for minutes in ["0", "-1", "NaN", "inf", "1e12"] {
        let out = smrcheck(
            &dev,
            &dev.name,
            &journal,
            &[&format!("--minutes={minutes}")],
        );
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{minutes}: {err}");
        assert!(err.contains("is not a time to write for"), "{err}");
    }

    // Another name typed.
    let out = smrcheck(&dev, "sdz", &journal, &[]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--confirm sdz does not name the target"),
        "{err}"
    );

    // The journal on the medium the target lives on.
    let beside = mounted.dir.join("j");
    let out = smrcheck(&dev, &dev.name, &beside, &[]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("shares a disk with"), "{err}");
    assert!(!beside.exists(), "no journal made");

    // The medium itself is mounted.
    let out = smrcheck(&medium, &medium.name, &journal, &[]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains(&format!(
            "refusing to write to {}: mounted at {}",
            medium.name,
            mounted.dir.display()
        )),
        "{err}"
    );

    // A loop device stacked on a mounted one (the medium, through its device node).
    let upper = LoopDev::attach(&medium.path, &[]);
    let upper_start = writes(&upper);
    let out = smrcheck(&upper, &upper.name, &journal, &[]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains(&format!(
            "refusing to write to {}: backed by {}, mounted at {}",
            upper.name,
            medium.name,
            mounted.dir.display()
        )),
        "{err}"
    );
    assert_eq!(writes(&upper), upper_start);
    assert!(!journal.exists(), "no journal made by a refusal");

    assert_eq!(
        writes(&dev),
        at_start,
        "nothing was written to {}",
        dev.name
    );
    assert_eq!(sha(&dev), before);
    drop(upper);
    drop(dev);
}

#[test]
fn a_probe_stopped_by_a_signal_mid_write_puts_every_byte_back() {
    if !common::root_or_skip("smrcheck::a_probe_stopped") {
        return;
    }
    let dir = common::scratch();
    let dev = LoopDev::new(dir.path(), 64 << 20, 512);
    fill_random(dev.path_str(), 64);
    let before = sha(&dev);
    let journals = journal_dir();
    for (signal, code) in [("TERM", 143), ("INT", 130), ("HUP", 129)] {
        let journal = journals.path().join(format!("{signal}.journal"));
        let child = common::disktriage_with_default_signals()
            .env(common::HISTORY_ENV, common::history_dir())
            .args(["smrcheck", dev.path_str(), "--confirm", &dev.name, "--json"])
            .args(["--journal", journal.to_str().unwrap(), "--minutes", "1"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let saved = common::poll(400, || {
            std::thread::sleep(Duration::from_millis(25));
            (fs::metadata(&journal).map_or(0, |m| m.len()) >= 16 << 20).then_some(())
        });
        assert!(saved.is_some(), "the journal holds the range");
        std::thread::sleep(Duration::from_secs(2));
        common::sh("kill", &[&format!("-{signal}"), &child.id().to_string()]);
        let out = child.wait_with_output().unwrap();
        let report = json(&out);
        assert_eq!(out.status.code(), Some(code), "SIG{signal}: {report:#}");
        assert_eq!(report["verdict"], "unknown");
        assert_eq!(report["sentence"], "unknown: the probe was stopped");
        assert!(report["written_bytes"].as_u64().unwrap() > 0, "it wrote");
        assert_eq!(report["put_back"]["mismatched"], serde_json::json!([]));
        assert!(
            !journal.exists(),
            "SIG{signal}: the journal goes once all is back"
        );
        assert_eq!(sha(&dev), before, "SIG{signal}: every byte is back");
    }
}
