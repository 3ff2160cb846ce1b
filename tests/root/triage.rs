//! `disktriage triage` on real loop devices (root): it measures (a sampled surface read,
//! sequential reads at the start, middle and end, random read latency) and judges healthy
//! devices healthy with exit 0 and the JSON schema's fields; it writes nothing (the device's
//! write counters, the image's checksum); the bound holds even when a device is slow or its
//! reads hang (reads throttled with the blkio cgroup: a hung read cannot be abandoned, the
//! result must not wait for it); 16 devices at once finish within the default bound (the wall
//! time is printed); a device name that is not one is an error (exit 1); a mounted device is
//! triaged too; a failed sample of a FUSE disk with one unreadable sector names that sector's
//! LBA, in the JSON and the text, not the sample's start.
//!
//! Only devices these tests create are named; `triage` without DEV (every disk of the host) is
//! never run here: `every_disk` is tested on a captured sysfs tree.

#![allow(clippy::unwrap_used)] // tests may unwrap: a panic is the failure report

use crate::common;

use std::fs;
use std::hash::{Hash, Hasher};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use common::{LoopDev, Mounted, poll, root_or_skip, scratch, sparse_image};
use disktriage::sys::SysRoot;
use disktriage::triage::{self, GatherOptions};

/// A scratch directory in /dev/shm (the images are sparse files there), removed on drop.
fn shm_scratch() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("disktriage-triage.")
        .tempdir_in("/dev/shm")
        .expect("scratch dir in /dev/shm")
}

fn triage_cmd(history: &Path, args: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_disktriage"));
    cmd.arg("--history-dir")
        .arg(history)
        .arg("triage")
        .args(args);
    cmd
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn json(bytes: &[u8]) -> serde_json::Value {
    serde_json::from_slice(bytes).unwrap_or_else(|e| {
        panic!("not JSON ({e}): {}", String::from_utf8_lossy(bytes));
    })
}

/// [reads completed, sectors read, writes completed, sectors written] of `/sys/block/X/stat`.
fn counters(name: &str) -> [u64; 4] {
    let text = fs::read_to_string(format!("/sys/block/{name}/stat")).unwrap();
    let f: Vec<u64> = text
        .split_whitespace()
        .map(|w| w.parse().unwrap())
        .collect();
    [f[0], f[2], f[4], f[6]]
}

fn checksum(path: &Path) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    fs::read(path).unwrap().hash(&mut h);
    h.finish()
}

/// An image with data written over its whole length (every MiB's first bytes), attached.
fn loop_with_data(dir: &Path, name: &str, size: u64) -> LoopDev {
    let image = sparse_image(dir, name, size);
    let mut f = fs::OpenOptions::new().write(true).open(&image).unwrap();
    use std::io::{Seek, SeekFrom, Write};
    for mib in (0..size >> 20).step_by(7) {
        f.seek(SeekFrom::Start(mib << 20)).unwrap();
        f.write_all(format!("disktriage {name} MiB {mib}").as_bytes())
            .unwrap();
    }
    drop(f);
    LoopDev::attach(&image, &[])
}

/// A blkio (cgroup v1) group whose read limits apply to the processes put in it; the limits
/// are lifted and the group removed on drop (once its processes are gone).
struct Throttle {
    dir: PathBuf,
    limits: Vec<(String, String)>,
}

impl Throttle {
    fn new(test: &str) -> Option<Throttle> {
        let base = Path::new("/sys/fs/cgroup/blkio");
        if !base.join("blkio.throttle.read_bps_device").exists() {
            common::skip(test, "no blkio cgroup (v1) with read throttling");
            return None;
        }
        let dir = base.join(format!("disktriage-test-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        Some(Throttle {
            dir,
            limits: Vec::new(),
        })
    }

    /// Limits reads of `dev` (its kernel name) through `file` (`read_bps_device`,
    /// `read_iops_device`) to `value`.
    fn limit(&mut self, dev: &str, file: &str, value: u64) {
        let num = fs::read_to_string(format!("/sys/block/{dev}/dev")).unwrap();
        let num = num.trim().to_string();
        let path = format!("blkio.throttle.{file}");
        fs::write(self.dir.join(&path), format!("{num} {value}")).unwrap();
        self.limits.push((path, num));
    }

    fn lift(&mut self) {
        for (file, num) in self.limits.drain(..) {
            let _ = fs::write(self.dir.join(file), format!("{num} 0"));
        }
    }

    /// A command that runs `cmd` inside the group.
    fn wrap(&self, cmd: &Command) -> Command {
        let mut line = String::from("echo $$ > \"$0\" && exec");
        let mut args: Vec<String> = vec![self.dir.join("cgroup.procs").display().to_string()];
        line.push_str(" \"$1\"");
        args.push(cmd.get_program().to_string_lossy().into_owned());
        for (i, a) in cmd.get_args().enumerate() {
            line.push_str(&format!(" \"${{{}}}\"", i + 2));
            args.push(a.to_string_lossy().into_owned());
        }
        let mut sh = Command::new("sh");
        sh.arg("-c").arg(line).args(args);
        sh
    }
}

impl Drop for Throttle {
    fn drop(&mut self) {
        self.lift();
        let gone = poll(1000, || fs::remove_dir(&self.dir).ok());
        if gone.is_none() {
            eprintln!("could not remove {}", self.dir.display());
        }
    }
}

/// Waits until `child` has printed a whole JSON document on stdout (the process may not exit
/// yet: a thread stuck in a hung read keeps it), or `limit`. The document and when it was
/// complete.
fn json_when_printed(child: &mut Child, limit: Duration) -> Option<(serde_json::Value, Instant)> {
    let mut out = child.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel::<Vec<u8>>();
    std::thread::spawn(move || {
        let mut buf = [0u8; 65536];
        while let Ok(n) = out.read(&mut buf) {
            if n == 0 || tx.send(buf[..n].to_vec()).is_err() {
                break;
            }
        }
    });
    let until = Instant::now() + limit;
    let mut text = Vec::new();
    while let Some(left) = until.checked_duration_since(Instant::now()) {
        match rx.recv_timeout(left) {
            Ok(chunk) => {
                text.extend(chunk);
                if let Ok(v) = serde_json::from_slice::<serde_json::Value>(&text) {
                    return Some((v, Instant::now()));
                }
            }
            Err(_) => return None,
        }
    }
    None
}

fn assert_measured(disk: &serde_json::Value) {
    let m = &disk["measurements"];
    let surface = &m["surface"];
    assert!(surface["reads"].as_u64().unwrap() >= 500, "{disk:#}");
    assert_eq!(surface["read_bytes"], 65536, "{disk:#}");
    assert_eq!(surface["unreadable"].as_array().unwrap().len(), 0);
    let seq = m["seq_read"].as_array().unwrap();
    let positions: Vec<&str> = seq
        .iter()
        .map(|s| s["position"].as_str().unwrap())
        .collect();
    assert_eq!(positions, ["start", "middle", "end"], "{disk:#}");
    for s in seq {
        assert!(s["mb_per_s"].as_f64().unwrap() > 0.0);
        assert!(s["bytes"].as_u64().unwrap() > 0);
    }
    let random = &m["random_read_qd1"];
    assert!(random["p50_ms"].as_f64().unwrap() > 0.0, "{disk:#}");
    assert!(random["p99_ms"].as_f64().unwrap() >= random["p50_ms"].as_f64().unwrap());
    for field in [
        "model",
        "serial",
        "wwn",
        "firmware",
        "capacity_bytes",
        "logical_block_size",
        "transport",
        "rotation_rpm",
    ] {
        assert!(disk["identity"].get(field).is_some(), "identity.{field}");
    }
    for field in [
        "findings", "problems", "smart", "logs", "link", "changes", "seconds",
    ] {
        assert!(disk.get(field).is_some(), "{field} missing: {disk:#}");
    }
}

#[test]
fn triage_of_loop_devices_measures_judges_healthy_and_writes_nothing() {
    if !root_or_skip("triage_of_loop_devices_measures_judges_healthy_and_writes_nothing") {
        return;
    }
    let dir = shm_scratch();
    let history = scratch();
    let a = loop_with_data(dir.path(), "a.img", 512 << 20);
    let b = loop_with_data(dir.path(), "b.img", 256 << 20);
    let sums = [checksum(&a.image), checksum(&b.image)];
    let before = [counters(&a.name), counters(&b.name)];
    let prom = history.path().join("disktriage.prom");
    let out = triage_cmd(
        history.path(),
        &[
            &a.name,
            b.path_str(),
            "--json",
            "--bound",
            "30",
            "--prom",
            prom.to_str().unwrap(),
        ],
    )
    .output()
    .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let doc = json(&out.stdout);
    assert_eq!(doc["schema"], 1);
    assert_eq!(doc["verdict"], "healthy");
    assert_eq!(doc["exit_status"], 0);
    assert_eq!(doc["bound_seconds"], 30.0);
    assert!(doc["seconds"].as_f64().unwrap() < 30.0 + 2.0);
    let disks = doc["disks"].as_array().unwrap();
    let names: Vec<&str> = disks
        .iter()
        .map(|d| d["device"].as_str().unwrap())
        .collect();
    let mut want = [a.name.as_str(), b.name.as_str()];
    want.sort();
    assert_eq!(names, want);
    for d in disks {
        assert_eq!(d["verdict"], "healthy", "{d:#}");
        assert_measured(d);
    }
    let cap = |name: &str| {
        disks.iter().find(|d| d["device"] == name).unwrap()["identity"]["capacity_bytes"].clone()
    };
    assert_eq!(cap(&a.name), 512u64 << 20);
    assert_eq!(cap(&b.name), 256u64 << 20);
    // Read, never written: the write counters and the images are as they were.
    for (dev, before) in [(&a, before[0]), (&b, before[1])] {
        let now = counters(&dev.name);
        assert!(now[1] > before[1], "{} was not read", dev.name);
        assert_eq!(
            [now[2], now[3]],
            [before[2], before[3]],
            "{} was written",
            dev.name
        );
    }
    assert_eq!([checksum(&a.image), checksum(&b.image)], sums);
    // The Prometheus file is there, and no temporary file is left beside it.
    assert!(prom.is_file());
    let leftovers: Vec<String> = fs::read_dir(history.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".tmp"))
        .collect();
    assert_eq!(leftovers, Vec::<String>::new());
    // Each disk is in the history, as a triage.
    let text = fs::read_to_string(history.path().join("history.jsonl")).unwrap();
    let entries: Vec<serde_json::Value> = text.lines().map(|l| json(l.as_bytes())).collect();
    assert_eq!(entries.len(), 2);
    assert!(
        entries
            .iter()
            .all(|e| e["test"] == "triage" && e["triage"].is_object())
    );
}

#[test]
fn gather_measures_a_loop_device_and_says_nothing_went_wrong() {
    if !root_or_skip("gather_measures_a_loop_device_and_says_nothing_went_wrong") {
        return;
    }
    let dir = shm_scratch();
    let dev = loop_with_data(dir.path(), "g.img", 256 << 20);
    let before = counters(&dev.name);
    let facts = triage::gather(
        &SysRoot::host(),
        std::slice::from_ref(&dev.name),
        &GatherOptions {
            bound: Duration::from_secs(20),
            quick: true,
            since: None,
        },
        None,
    );
    let f = &facts[0];
    assert_eq!(f.problems, Vec::<String>::new());
    assert_eq!(f.identity.capacity_bytes, 256 << 20);
    assert_eq!(f.identity.logical_block_size, 512);
    let surface = f.measurements.surface.as_ref().unwrap();
    assert_eq!(surface.reads, 500);
    assert_eq!(surface.buckets.total(), 500);
    assert!(surface.unreadable.is_empty());
    assert_eq!(f.measurements.seq.len(), 3);
    assert!(f.measurements.random_read_p50_ms.is_some());
    assert!(
        f.smart.is_some(),
        "SMART (unavailable on a loop device) is still said"
    );
    // The kernel counted the reads: 500 samples of 64 KiB, three sequential reads and the
    // random ones at least.
    let now = counters(&dev.name);
    assert!(now[1] - before[1] >= 500 * 128, "{before:?} -> {now:?}");
    assert_eq!([now[2], now[3]], [before[2], before[3]]);
}

#[test]
fn the_bound_holds_when_reads_are_slow_or_hang() {
    let test = "the_bound_holds_when_reads_are_slow_or_hang";
    if !root_or_skip(test) {
        return;
    }
    let Some(mut throttle) = Throttle::new(test) else {
        return;
    };
    let dir = shm_scratch();
    let history = scratch();
    let devs: Vec<LoopDev> = (0..4)
        .map(|i| loop_with_data(dir.path(), &format!("bound{i}.img"), 256 << 20))
        .collect();
    // One disk slow (20 reads a second), one whose reads hang (a byte a second: a 64 KiB
    // read takes 18 hours), two plain.
    throttle.limit(&devs[1].name, "read_iops_device", 20);
    throttle.limit(&devs[2].name, "read_bps_device", 1);
    let mut args: Vec<&str> = devs.iter().map(|d| d.name.as_str()).collect();
    args.extend(["--json", "--bound", "5"]);
    let cmd = throttle.wrap(&triage_cmd(history.path(), &args));
    let mut cmd = cmd;
    let started = Instant::now();
    let mut child = cmd.stdout(Stdio::piped()).spawn().unwrap();
    let printed = json_when_printed(&mut child, Duration::from_secs(30));
    // Let the stuck read finish so the process can end, whatever the outcome.
    throttle.lift();
    let status = child.wait().unwrap();
    let (doc, at) = printed.expect("no report within 30 s");
    let wall = at - started;
    eprintln!("triage --bound 5 of 4 loop devices (one slow, one hung): report after {wall:?}");
    assert!(
        wall < Duration::from_millis(5000 + 2500),
        "the report came after {wall:?}"
    );
    assert!(status.code().is_some(), "{status:?}");
    let disks = doc["disks"].as_array().unwrap();
    assert_eq!(disks.len(), 4);
    let disk = |name: &str| disks.iter().find(|d| d["device"] == name).unwrap();
    let hung = disk(&devs[2].name);
    let problems = hung["problems"].to_string();
    assert!(
        problems.contains("did not finish within the 5 s bound"),
        "{hung:#}"
    );
    let slow = disk(&devs[1].name);
    assert!(
        slow["problems"]
            .to_string()
            .contains("stopped at the time bound"),
        "{slow:#}"
    );
    for plain in [&devs[0], &devs[3]] {
        assert_measured(disk(&plain.name));
    }
}

#[test]
fn ctrl_c_ends_the_triage_with_what_was_gathered() {
    let test = "ctrl_c_ends_the_triage_with_what_was_gathered";
    if !root_or_skip(test) {
        return;
    }
    let Some(mut throttle) = Throttle::new(test) else {
        return;
    };
    let dir = shm_scratch();
    let history = scratch();
    let plain = loop_with_data(dir.path(), "plain.img", 256 << 20);
    let hung = loop_with_data(dir.path(), "hung.img", 256 << 20);
    throttle.limit(&hung.name, "read_bps_device", 1);
    let cmd = throttle.wrap(&triage_cmd(
        history.path(),
        &[&plain.name, &hung.name, "--json"],
    ));
    let mut cmd = cmd;
    let mut child = cmd.stdout(Stdio::piped()).spawn().unwrap();
    std::thread::sleep(Duration::from_secs(2));
    let signalled = Instant::now();
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGINT,
    )
    .unwrap();
    let printed = json_when_printed(&mut child, Duration::from_secs(20));
    throttle.lift();
    let status = child.wait().unwrap();
    let (doc, at) = printed.expect("no report within 20 s of the signal");
    let after = at - signalled;
    assert!(
        after < Duration::from_secs(3),
        "the report came {after:?} after SIGINT"
    );
    assert_eq!(status.code(), Some(130), "{status:?}");
    let disks = doc["disks"].as_array().unwrap();
    let disk = |name: &str| disks.iter().find(|d| d["device"] == name).unwrap();
    assert_measured(disk(&plain.name));
    assert!(
        disk(&hung.name)["problems"]
            .to_string()
            .contains("stopped by the admin"),
        "{:#}",
        disk(&hung.name)
    );
}

#[test]
fn sixteen_loop_devices_at_once_within_the_default_bound() {
    if !root_or_skip("sixteen_loop_devices_at_once_within_the_default_bound") {
        return;
    }
    let dir = shm_scratch();
    let history = scratch();
    let devs: Vec<LoopDev> = (0..16)
        .map(|i| loop_with_data(dir.path(), &format!("many{i}.img"), 1 << 30))
        .collect();
    let mut args: Vec<&str> = devs.iter().map(|d| d.name.as_str()).collect();
    args.push("--json");
    let started = Instant::now();
    let out = triage_cmd(history.path(), &args).output().unwrap();
    let wall = started.elapsed();
    eprintln!("triage of 16 loop devices (1 GiB each, default bound): {wall:?}");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(wall < Duration::from_secs(60 + 3), "{wall:?}");
    let doc = json(&out.stdout);
    let disks = doc["disks"].as_array().unwrap();
    assert_eq!(disks.len(), 16);
    for d in disks {
        assert_eq!(d["verdict"], "healthy", "{d:#}");
        assert_measured(d);
    }
}

#[test]
fn an_unknown_device_is_an_error() {
    if !root_or_skip("an_unknown_device_is_an_error") {
        return;
    }
    let history = scratch();
    for name in ["nosuchdisk9", "/dev/nosuchdisk9", "../sda"] {
        let out = triage_cmd(history.path(), &[name]).output().unwrap();
        assert_eq!(out.status.code(), Some(1), "{name}: {}", stderr(&out));
        assert!(stderr(&out).contains("nosuchdisk9") || name == "../sda");
        assert!(out.stdout.is_empty());
    }
    // A bound of nothing is a usage error.
    let out = triage_cmd(history.path(), &["loop0", "--bound", "0"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
}

#[test]
fn a_prom_path_that_is_no_file_to_write_is_refused_in_words_before_any_read() {
    if !root_or_skip("a_prom_path_that_is_no_file_to_write_is_refused_in_words_before_any_read") {
        return;
    }
    let dir = shm_scratch();
    let history = scratch();
    let dev = loop_with_data(dir.path(), "p.img", 64 << 20);
    let target = history.path().join("elsewhere");
    fs::write(&target, "keep me\n").unwrap();
    let link = history.path().join("link.prom");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let fifo = history.path().join("fifo.prom");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
    let dot = PathBuf::from(".");
    let drop_caches = PathBuf::from("/proc/sys/vm/drop_caches");
    // Each refused with what is wrong in words: a kernel interface is not "needs root", a
    // directory is not "not a file name (UTF-8)".
    for (prom, words) in [
        (&link, "a symbolic link, not a regular file"),
        (&fifo, "a FIFO (named pipe), not a regular file"),
        (&dot, "it is a directory: name a file in it"),
        (&drop_caches, "is procfs (/proc), a kernel interface"),
    ] {
        let before = counters(&dev.name);
        let started = Instant::now();
        let out = triage_cmd(
            history.path(),
            &[&dev.name, "--quick", "--prom", prom.to_str().unwrap()],
        )
        .output()
        .unwrap();
        assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
        assert!(stderr(&out).contains("--prom"), "{}", stderr(&out));
        assert!(stderr(&out).contains(words), "{prom:?}: {}", stderr(&out));
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "it waited on the FIFO"
        );
        assert_eq!(counters(&dev.name)[1], before[1], "the disk was read first");
    }
    assert_eq!(fs::read_to_string(&target).unwrap(), "keep me\n");
    assert!(
        fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
}

#[test]
fn a_mounted_device_is_triaged() {
    if !root_or_skip("a_mounted_device_is_triaged") {
        return;
    }
    let dir = shm_scratch();
    let history = scratch();
    let image = sparse_image(dir.path(), "fs.img", 128 << 20);
    let dev = LoopDev::attach(&image, &[]);
    let mnt = dir.path().join("mnt");
    let _mount = Mounted::ext4(dev.path_str(), &mnt);
    // Read-only from here, so the file system's own writes (ext4's lazy inode-table zeroing,
    // a journal commit) cannot blur the count: every write now would be the triage's.
    let remount = Command::new("mount")
        .args(["-o", "remount,ro"])
        .arg(&mnt)
        .status()
        .unwrap();
    assert!(remount.success());
    let before = counters(&dev.name);
    let out = triage_cmd(history.path(), &[dev.path_str(), "--json", "--quick"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let doc = json(&out.stdout);
    assert_measured(&doc["disks"][0]);
    // The triage read it, mounted, and wrote nothing.
    let now = counters(&dev.name);
    assert!(now[1] > before[1]);
    assert_eq!(now[2], before[2], "{before:?} -> {now:?}");
}

/// Attack 5 (files in directories the program does not own): a directory anyone can write
/// without the sticky bit lets another user swap the file after it is written, so `--prom`
/// (and the scan's mapfile, through the same opener) refuses it before any read; a sticky one
/// (/tmp's shape) is fine.
#[test]
fn prom_into_a_directory_anyone_can_write_is_refused_before_any_read() {
    use std::os::unix::fs::PermissionsExt;
    if !root_or_skip("prom_into_a_directory_anyone_can_write_is_refused_before_any_read") {
        return;
    }
    let dir = shm_scratch();
    let history = scratch();
    let dev = loop_with_data(dir.path(), "ww.img", 64 << 20);
    let open_dir = dir.path().join("open");
    fs::create_dir(&open_dir).unwrap();
    fs::set_permissions(&open_dir, fs::Permissions::from_mode(0o777)).unwrap();
    let prom = open_dir.join("disktriage.prom");
    let before = counters(&dev.name);
    let out = triage_cmd(
        history.path(),
        &[dev.path_str(), "--quick", "--prom", prom.to_str().unwrap()],
    )
    .output()
    .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("anyone can write") && stderr(&out).contains("sticky"),
        "{}",
        stderr(&out)
    );
    assert!(!prom.exists());
    assert_eq!(counters(&dev.name)[0], before[0], "read before refusing");
    let map = open_dir.join("scan.map");
    let out = Command::new(env!("CARGO_BIN_EXE_disktriage"))
        .args(["scan", "--size", "1M", "--mapfile", map.to_str().unwrap()])
        .arg(dev.path_str())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("anyone can write"),
        "{}",
        stderr(&out)
    );
    assert!(!map.exists());
    // With the sticky bit others cannot rename or delete what root wrote: allowed.
    fs::set_permissions(&open_dir, fs::Permissions::from_mode(0o1777)).unwrap();
    let out = triage_cmd(
        history.path(),
        &[dev.path_str(), "--quick", "--prom", prom.to_str().unwrap()],
    )
    .output()
    .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        fs::read_to_string(&prom)
            .unwrap()
            .contains("disktriage_verdict{")
    );
}

/// Sectors of the FUSE disk of `a_failed_sample_names_its_first_unreadable_sector`.
const SPLIT_DISK_SECTORS: u64 = 15 << 11;
/// Its one unreadable sector: not at a sample's start (a sample starts on any 512-byte
/// boundary), so only a split of the sample names it.
const SPLIT_BAD_LBA: u64 = 20_011;

/// A failed 64 KiB sample is split down to its first unreadable sector, and that sector's LBA
/// is what the JSON and the text name, not the sample's start. The disk is a FUSE disk
/// (`tests/fuse/cachedisk.py`, mode bad) with LBA 20011 unreadable under a loop device, 15 MiB:
/// `--quick`'s 500 samples then fall in strata of at most 62 start positions, so at least one
/// 128-sector sample covers the bad sector whatever the random offsets. The sequential reads
/// cover the whole disk and fail there too: their problems are not what is checked.
#[test]
fn a_failed_sample_names_its_first_unreadable_sector() {
    let test = "a_failed_sample_names_its_first_unreadable_sector";
    if !root_or_skip(test) || !common::fuse_available(test) {
        return;
    }
    let dir = shm_scratch();
    let history = scratch();
    let size = SPLIT_DISK_SECTORS * 512;
    let store = dir.path().join("bad.store");
    fs::write(&store, vec![0x5au8; size as usize]).unwrap();
    // Declared in this order so that the loop device is detached before the daemon under it
    // is killed, also when an assertion fails.
    let disk = common::CacheDisk::start(
        "bad",
        &store,
        &dir.path().join("bad"),
        size,
        &[("CACHEDISK_BAD", format!("{}+512", SPLIT_BAD_LBA * 512))],
    );
    let dev = LoopDev::attach(&disk.file(), &[]);
    // The disk is what the test says: the bad sector fails alone, its neighbours read.
    let read_sector = |lba: u64| {
        Command::new("dd")
            .arg(format!("if={}", dev.path_str()))
            .args(["of=/dev/null", "bs=512", "count=1", "iflag=direct"])
            .arg(format!("skip={lba}"))
            .output()
            .unwrap()
            .status
            .success()
    };
    assert!(!read_sector(SPLIT_BAD_LBA), "LBA {SPLIT_BAD_LBA} reads");
    for lba in [SPLIT_BAD_LBA - 1, SPLIT_BAD_LBA + 1] {
        assert!(read_sector(lba), "LBA {lba} does not read");
    }

    let out = triage_cmd(history.path(), &[dev.path_str(), "--json", "--quick"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(4), "failing: {}", stderr(&out));
    let doc = json(&out.stdout);
    let d = &doc["disks"][0];
    let unreadable = d["measurements"]["surface"]["unreadable"]
        .as_array()
        .unwrap_or_else(|| panic!("no surface sample: {d:#}"));
    assert!(!unreadable.is_empty(), "no sample failed: {d:#}");
    let lbas: Vec<u64> = unreadable
        .iter()
        .map(|u| u["lba"].as_u64().unwrap())
        .collect();
    assert!(
        lbas.iter().all(|&lba| lba == SPLIT_BAD_LBA),
        "the failed samples name LBA {lbas:?}, not {SPLIT_BAD_LBA}: {unreadable:#?}"
    );
    for u in unreadable {
        assert_eq!(u["offset"], SPLIT_BAD_LBA * 512, "{u}");
        assert_eq!(u["sectors"], 1, "found to the sector: {u}");
        assert_eq!(u["errno"], 5, "{u}");
        let sample = u["sample_lba"].as_u64().unwrap();
        assert!(
            sample <= SPLIT_BAD_LBA && SPLIT_BAD_LBA < sample + 128,
            "the sample {sample} holds the sector: {u}"
        );
    }
    let finding = d["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["rule"] == "surface-unreadable")
        .unwrap_or_else(|| panic!("no surface-unreadable finding: {d:#}"));
    assert_eq!(
        finding["sentence"],
        format!(
            "{} of 500 sampled reads failed: unreadable at LBA {SPLIT_BAD_LBA}",
            unreadable.len()
        ),
        "{finding:#}"
    );

    // The text says the same (its lines wrapped at 80 columns, so read as words).
    let out = triage_cmd(history.path(), &[dev.path_str(), "--quick"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(4), "failing: {}", stderr(&out));
    let text = String::from_utf8_lossy(&out.stdout);
    let words = text.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        words.contains(&format!(
            "sampled reads failed: unreadable at LBA {SPLIT_BAD_LBA} next:"
        )),
        "{text}"
    );
    for neighbour in [SPLIT_BAD_LBA - 1, SPLIT_BAD_LBA + 1] {
        assert!(!words.contains(&neighbour.to_string()), "{text}");
    }
}
