//! `disktriage flushcheck DEV --record LOG` / `--verify LOG` on real loop devices: the LOG
//! refused where a power cut would take it with the records (the device itself, the file
//! system the target's image is on, a loop device stacked on the same disk), in a directory
//! anyone can write, or when it exists; a LOG of another device refused by --verify; a
//! record stopped by SIGTERM verifies with nothing lost; and the key test: a disk
//! with an honest volatile cache and one that lies about flushes (tests/fuse/cachedisk.py,
//! a FUSE file under a loop device, killed to cut the power) told apart.

use std::fs;
use std::io::Read;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::common::{
    CacheDisk, HISTORY_ENV, LoopDev, Mounted, fuse_available, history_dir, poll, root_or_skip,
    scratch, sh,
};

const MIB: u64 = 1 << 20;

/// A tmpfs mounted for one test (the file system a target's image is on); unmounted on drop.
struct Tmpfs {
    dir: PathBuf,
}

impl Tmpfs {
    fn at(dir: &Path) -> Tmpfs {
        fs::create_dir_all(dir).unwrap();
        sh(
            "mount",
            &[
                "-t",
                "tmpfs",
                "-o",
                "size=128m,mode=0755",
                "flushtest",
                dir.to_str().unwrap(),
            ],
        );
        Tmpfs {
            dir: dir.to_path_buf(),
        }
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = poll(200, || {
            let out = Command::new("umount").arg(&self.dir).output().ok()?;
            out.status.success().then_some(())
        });
    }
}

/// A loop target whose image is on a tmpfs of its own, so a LOG in the scratch directory is
/// on another device.
fn target(dir: &Path, size: u64) -> (Tmpfs, LoopDev) {
    let fs = Tmpfs::at(&dir.join("target-fs"));
    let dev = LoopDev::new(&fs.dir, size, 512);
    (fs, dev)
}

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_disktriage"))
        .env(HISTORY_ENV, history_dir())
        .args(args)
        .output()
        .expect("run disktriage")
}

/// Starts `flushcheck DEV --record LOG` with the device's name typed, its output piped.
fn start_record(dev: &LoopDev, log: &Path) -> Child {
    Command::new(env!("CARGO_BIN_EXE_disktriage"))
        .env(HISTORY_ENV, history_dir())
        .args([
            "flushcheck",
            dev.path_str(),
            "--record",
            log.to_str().unwrap(),
            "--destroy-data",
            &dev.name,
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// The first MiB of a device.
fn head(dev: &LoopDev) -> Vec<u8> {
    let mut buf = vec![0u8; MIB as usize];
    fs::File::open(&dev.path)
        .unwrap()
        .read_exact(&mut buf)
        .unwrap();
    buf
}

/// Fills the first MiB of the device with a pattern (to see that a refusal wrote nothing).
fn pattern(dev: &LoopDev) {
    let data: Vec<u8> = (0..MIB).map(|i| (i % 251) as u8).collect();
    fs::write(&dev.path, &data).unwrap();
    sh("blockdev", &["--flushbufs", dev.path_str()]);
}

/// `--record LOG` is refused: exit 1, the words expected, the device untouched and no LOG.
fn assert_record_refused(dev: &LoopDev, log: &Path, words: &str) {
    pattern(dev);
    let before = head(dev);
    let existed = log.exists();
    // A record that is not refused would run until stopped: it is killed after 20 s.
    let child = start_record(dev, log);
    let out = wait_output(child, Duration::from_secs(20));
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "LOG {}: {err}", log.display());
    assert!(err.contains(words), "LOG {}: {err}", log.display());
    assert!(!err.contains("recording on"), "{err}");
    assert_eq!(head(dev), before, "a refused record wrote to {}", dev.name);
    if !existed {
        assert!(!log.exists(), "a refused record left {}", log.display());
    }
}

/// Starts `--record`, lets it run `secs`, stops it with SIGTERM; returns its output.
fn record_for(dev: &LoopDev, log: &Path, secs: f64) -> Output {
    let child = start_record(dev, log);
    std::thread::sleep(Duration::from_secs_f64(secs));
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGTERM,
    )
    .unwrap();
    wait_output(child, Duration::from_secs(30))
}

/// Waits for `child` at most `limit` (then kills it and fails).
fn wait_output(mut child: Child, limit: Duration) -> Output {
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > limit {
            let _ = child.kill();
            let out = child.wait_with_output().unwrap();
            panic!("still running after {limit:?}: {}", text(&out.stderr));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

fn verify_json(dev: &str, log: &Path, history: &Path) -> (Option<i32>, serde_json::Value, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_disktriage"))
        .args(["--history-dir", history.to_str().unwrap()])
        .args([
            "flushcheck",
            dev,
            "--verify",
            log.to_str().unwrap(),
            "--json",
        ])
        .output()
        .unwrap();
    let err = text(&out.stderr);
    let json = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "verify --json is not JSON ({e}): {}{err}",
            text(&out.stdout)
        )
    });
    (out.status.code(), json, err)
}

#[test]
fn a_log_on_the_device_or_what_it_lives_on_is_refused() {
    if !root_or_skip("a_log_on_the_device_or_what_it_lives_on_is_refused") {
        return;
    }
    let dir = scratch();
    let (fs, dev) = target(dir.path(), 16 * MIB);
    // The device itself as the LOG.
    assert_record_refused(&dev, &dev.path, "already exists as a block device");
    // Beside the target's image: the file system the target lives on.
    assert_record_refused(&dev, &fs.dir.join("flush.log"), "shares a disk with");
}

#[test]
fn a_log_on_a_loop_device_stacked_on_the_targets_disk_is_refused() {
    if !root_or_skip("a_log_on_a_loop_device_stacked_on_the_targets_disk_is_refused") {
        return;
    }
    // disk = loopA (image on scratch); ext4 on it at M; the target is loopB over a file on M;
    // the LOG's file system is ext4 on loopC, whose image is also on M: loopC is stacked on
    // the disk the target lives on.
    let dir = scratch();
    let disk = LoopDev::new(dir.path(), 64 * MIB, 512);
    let m = Mounted::ext4(disk.path_str(), &dir.path().join("m"));
    let image_b = m.dir.join("target.img");
    fs::File::create(&image_b)
        .unwrap()
        .set_len(8 * MIB)
        .unwrap();
    let target = LoopDev::attach(&image_b, &[]);
    let image_c = m.dir.join("logfs.img");
    fs::File::create(&image_c)
        .unwrap()
        .set_len(16 * MIB)
        .unwrap();
    let logdev = LoopDev::attach(&image_c, &[]);
    let m2 = Mounted::ext4(logdev.path_str(), &dir.path().join("m2"));
    assert_record_refused(&target, &m2.dir.join("flush.log"), "shares a disk with");
    // And beside the image on M itself.
    assert_record_refused(&target, &m.dir.join("flush.log"), "shares a disk with");
    // The same LOG place is fine for a device on another disk (the refusal is the chain's).
    let (_fs, other) = target_on_tmpfs(dir.path());
    let log = m2.dir.join("other.log");
    let out = record_for(&other, &log, 0.5);
    assert_eq!(out.status.code(), Some(143), "{}", text(&out.stderr));
    drop(m2);
    drop(logdev);
    drop(target);
}

fn target_on_tmpfs(dir: &Path) -> (Tmpfs, LoopDev) {
    let fs = Tmpfs::at(&dir.join("other-fs"));
    let dev = LoopDev::new(&fs.dir, 8 * MIB, 512);
    (fs, dev)
}

#[test]
fn a_log_in_a_directory_anyone_can_write_or_an_existing_log_is_refused() {
    if !root_or_skip("a_log_in_a_directory_anyone_can_write_or_an_existing_log_is_refused") {
        return;
    }
    let dir = scratch();
    let (_fs, dev) = target(dir.path(), 16 * MIB);
    let open = dir.path().join("open");
    fs::create_dir(&open).unwrap();
    fs::set_permissions(&open, fs::Permissions::from_mode(0o777)).unwrap();
    assert_record_refused(&dev, &open.join("flush.log"), "anyone can write");
    let old = dir.path().join("old.log");
    fs::write(&old, "an old LOG\n").unwrap();
    assert_record_refused(&dev, &old, "already exists");
    assert_eq!(fs::read_to_string(&old).unwrap(), "an old LOG\n");
    // A symlink at the name, even to a missing file, is not created through.
    let link = dir.path().join("link.log");
    std::os::unix::fs::symlink(dir.path().join("elsewhere"), &link).unwrap();
    assert_record_refused(&dev, &link, "already exists as a symbolic link");
    assert!(!dir.path().join("elsewhere").exists());
}

#[test]
fn record_then_verify_without_a_power_cut_loses_nothing() {
    if !root_or_skip("record_then_verify_without_a_power_cut_loses_nothing") {
        return;
    }
    let dir = scratch();
    let (_fs, dev) = target(dir.path(), 16 * MIB);
    let log = dir.path().join("flush.log");
    let out = record_for(&dev, &log, 1.0);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(143), "{err}");
    assert!(
        err.contains(&format!("recording on {}: cut the power now", dev.name)),
        "{err}"
    );
    assert!(err.contains("--verify"), "{err}");
    let history = dir.path().join("history");
    let (code, json, err) = verify_json(dev.path_str(), &log, &history);
    assert_eq!(code, Some(0), "{json} {err}");
    let acked = json["acknowledged"].as_u64().unwrap();
    assert!(acked > 0, "{json}");
    assert_eq!(
        json["verified"].as_u64().unwrap() + json["superseded"].as_u64().unwrap(),
        acked
    );
    assert_eq!(json["lost"], serde_json::json!([]));
    assert_eq!(json["torn"], serde_json::json!([]));
    assert_eq!(json["verdict"], "nothing-lost");
    assert_eq!(json["device"], dev.name.as_str());
    // The recording was stopped by SIGTERM, not by a power cut: the verify says so and
    // claims nothing about one.
    let sentence = json["sentence"].as_str().unwrap();
    assert!(sentence.contains("came back"), "{sentence}");
    assert!(
        sentence.contains("ended by itself (stopped by signal 15) with no power cut"),
        "{sentence}"
    );
    assert!(!sentence.contains("through this power cut"), "{sentence}");
    assert_eq!(json["ended"], "stopped by signal 15", "{json}");
    // The LOG holds exactly the acknowledged numbers, 0 upwards, then how it ended.
    let logtext = fs::read_to_string(&log).unwrap();
    assert!(logtext.starts_with("disktriage flushcheck log 1\n"));
    let lines: Vec<&str> = logtext
        .split("acknowledged:\n")
        .nth(1)
        .unwrap()
        .lines()
        .collect();
    let (end, nums) = lines.split_last().unwrap();
    assert_eq!(*end, "ended: stopped by signal 15");
    assert_eq!(nums.len() as u64, acked);
    assert_eq!(nums.last().copied(), Some((acked - 1).to_string().as_str()));
    // A LOG with one number appended that no recording wrote (the largest u64 made every
    // earlier record look superseded: "nothing lost") or an absurd block size: refused.
    let base = logtext
        .trim_end_matches("ended: stopped by signal 15\n")
        .to_string();
    let forged = [
        base.clone() + "18446744073709551615\n",
        base.replace("logical_block_size=512\n", "logical_block_size=3\n"),
        base.replace("logical_block_size=512\n", "logical_block_size=0\n"),
    ];
    for (i, forgery) in forged.iter().enumerate() {
        let bad = dir.path().join(format!("forged-{i}.log"));
        fs::write(&bad, forgery).unwrap();
        let out = run(&[
            "flushcheck",
            dev.path_str(),
            "--verify",
            bad.to_str().unwrap(),
        ]);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "forged {i}: {err}");
        assert!(
            err.contains("comes next") || err.contains("logical block size"),
            "forged {i}: {err}"
        );
        assert!(out.stdout.is_empty(), "forged {i}: a verdict was printed");
    }
    // Recorded in the history.
    let hist = fs::read_dir(&history)
        .unwrap()
        .flatten()
        .map(|e| fs::read_to_string(e.path()).unwrap_or_default())
        .collect::<String>();
    assert!(hist.contains("\"flushcheck-verify\""), "{hist}");
    assert!(hist.contains("nothing-lost"), "{hist}");
    // The text report.
    let out = run(&[
        "flushcheck",
        dev.path_str(),
        "--verify",
        log.to_str().unwrap(),
    ]);
    let report = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{report}");
    assert!(
        report.contains(&format!("acknowledged {acked}, ")),
        "{report}"
    );
    assert!(report.contains("lost 0"), "{report}");
}

#[test]
fn verify_refuses_a_log_of_another_device_and_a_file_that_is_no_log() {
    if !root_or_skip("verify_refuses_a_log_of_another_device_and_a_file_that_is_no_log") {
        return;
    }
    let dir = scratch();
    let (_fs, dev) = target(dir.path(), 16 * MIB);
    let log = dir.path().join("flush.log");
    let out = record_for(&dev, &log, 0.5);
    assert_eq!(out.status.code(), Some(143), "{}", text(&out.stderr));
    let (_fs2, other) = target_on_tmpfs(dir.path());
    let out = run(&[
        "flushcheck",
        other.path_str(),
        "--verify",
        log.to_str().unwrap(),
    ]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("not the device recorded"), "{err}");
    assert!(out.stdout.is_empty());
    let bogus = dir.path().join("bogus.log");
    fs::write(&bogus, "hello\n").unwrap();
    let out = run(&[
        "flushcheck",
        dev.path_str(),
        "--verify",
        bogus.to_str().unwrap(),
    ]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("not a disktriage flushcheck LOG"), "{err}");
}

#[test]
fn a_small_ring_wraps_and_a_later_recording_overwrites_an_older_logs_records() {
    if !root_or_skip("a_small_ring_wraps_and_a_later_recording_overwrites_an_older_logs_records") {
        return;
    }
    let dir = scratch();
    // 64 KiB: a ring of 16 records, overwritten many times in a second.
    let (_fs, dev) = target(dir.path(), 64 * 1024);
    let first = dir.path().join("first.log");
    let out = record_for(&dev, &first, 1.0);
    assert_eq!(out.status.code(), Some(143), "{}", text(&out.stderr));
    let (code, json, err) = verify_json(dev.path_str(), &first, &dir.path().join("h"));
    assert_eq!(code, Some(0), "{json} {err}");
    let acked = json["acknowledged"].as_u64().unwrap();
    assert!(acked > 16, "the ring did not wrap: {json}");
    assert_eq!(json["verified"], 16, "{json}");
    assert_eq!(json["superseded"].as_u64().unwrap(), acked - 16, "{json}");
    // A second recording on the same device: the first LOG's records are gone.
    let second = dir.path().join("second.log");
    let out = record_for(&dev, &second, 1.0);
    assert_eq!(out.status.code(), Some(143), "{}", text(&out.stderr));
    let (_, json, _) = verify_json(dev.path_str(), &second, &dir.path().join("h"));
    // The slots the second recording wrote (all 16 unless the machine was very slow).
    let overwritten = json["acknowledged"].as_u64().unwrap().min(16);
    assert!(overwritten > 0, "{json}");
    // A later recording overwrote them: not the drive's loss, and no verdict (exit 5).
    let (code, json, err) = verify_json(dev.path_str(), &first, &dir.path().join("h"));
    assert_eq!(code, Some(5), "{json} {err}");
    assert_eq!(json["lost"], serde_json::json!([]), "{json}");
    assert_eq!(
        json["overwritten_later"].as_array().unwrap().len() as u64,
        overwritten,
        "{json}"
    );
    assert_eq!(json["other_run"], 0, "{json}");
    assert_eq!(json["verdict"], "cannot-tell");
    assert!(
        json["sentence"]
            .as_str()
            .unwrap()
            .contains("overwritten by a later --record on this device, not lost by it"),
        "{json}"
    );
}

// ---- the FUSE disk: an honest volatile cache and a liar ----

const FUSE_SIZE: u64 = 16 * MIB;

/// Records on a loop device over the FUSE disk in `mode`, cuts the power mid-record, then
/// "reboots" (a new daemon over the same store, a new loop device) and verifies.
/// A record, the power cut, the reboot and the verify on the cache disk in `mode`: verify's
/// exit status, JSON and stderr, and then the JSON of `disktriage triage` of the same disk
/// with the same history (the triage reads the disk's newest flush check from it).
fn power_cut(mode: &str) -> (Option<i32>, serde_json::Value, String, serde_json::Value) {
    let dir = scratch();
    let store = dir.path().join(format!("{mode}.store"));
    let log = dir.path().join(format!("{mode}.log"));
    let mut disk = CacheDisk::start(
        mode,
        &store,
        &dir.path().join(format!("{mode}-1")),
        FUSE_SIZE,
        &[],
    );
    let dev = LoopDev::attach(&disk.mnt.join("disk"), &[]);
    let child = start_record(&dev, &log);
    std::thread::sleep(Duration::from_millis(1500));
    disk.cut();
    let out = wait_output(child, Duration::from_secs(60));
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{mode}: {err}");
    assert!(
        err.contains("the device stopped answering after"),
        "{mode}: {err}"
    );
    drop(dev);
    drop(disk);
    // The reboot.
    let disk = CacheDisk::start(
        mode,
        &store,
        &dir.path().join(format!("{mode}-2")),
        FUSE_SIZE,
        &[],
    );
    let dev = LoopDev::attach(&disk.mnt.join("disk"), &[]);
    let history = dir.path().join("history");
    let (code, json, err) = verify_json(dev.path_str(), &log, &history);
    eprintln!("{mode}: {json}");
    let triage = Command::new(env!("CARGO_BIN_EXE_disktriage"))
        .args(["--history-dir", history.to_str().unwrap()])
        .args(["triage", dev.path_str(), "--quick", "--json"])
        .output()
        .unwrap();
    let triage: serde_json::Value = serde_json::from_slice(&triage.stdout)
        .unwrap_or_else(|e| panic!("{mode}: triage JSON: {e}: {}", text(&triage.stderr)));
    drop(dev);
    drop(disk);
    (code, json, err, triage)
}

/// The rule ids of the triage's (only) disk.
fn triage_rules(triage: &serde_json::Value) -> Vec<String> {
    triage["disks"][0]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["rule"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn an_honest_volatile_cache_and_a_lying_one_are_told_apart() {
    let test = "an_honest_volatile_cache_and_a_lying_one_are_told_apart";
    if !root_or_skip(test) || !fuse_available(test) {
        return;
    }
    let (code, honest, err, triage) = power_cut("honest");
    let acked = honest["acknowledged"].as_u64().unwrap();
    assert!(acked > 0, "honest: nothing acknowledged: {honest} {err}");
    assert_eq!(code, Some(0), "honest: {honest} {err}");
    assert_eq!(honest["lost"], serde_json::json!([]), "{honest}");
    assert_eq!(honest["verdict"], "nothing-lost");
    assert!(
        !triage_rules(&triage)
            .iter()
            .any(|r| r.starts_with("flush-")),
        "{triage}"
    );

    let (code, liar, err, triage) = power_cut("liar");
    let acked = liar["acknowledged"].as_u64().unwrap();
    assert_eq!(code, Some(4), "liar: {liar} {err}");
    assert_eq!(liar["verdict"], "lost");
    let lost: Vec<u64> = liar["lost"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap())
        .collect();
    assert!(!lost.is_empty(), "{liar}");
    // What the liar kept in memory: the acknowledged tail (at most 65 blocks of it).
    assert!(lost.iter().all(|&s| s < acked && s + 65 >= acked), "{liar}");
    assert_eq!(
        liar["verified"].as_u64().unwrap()
            + liar["superseded"].as_u64().unwrap()
            + lost.len() as u64,
        acked
    );
    assert!(
        liar["sentence"].as_str().unwrap().contains("lost"),
        "{liar}"
    );
    // The next triage of the disk says it: a cache that lies about flushes is failing.
    assert!(
        triage_rules(&triage).contains(&"flush-lost-writes".to_string()),
        "{triage}"
    );
    assert_eq!(triage["disks"][0]["verdict"], "failing", "{triage}");
}
