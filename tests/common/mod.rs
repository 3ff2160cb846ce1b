//! Helpers for integration tests on real devices: loop and zram devices and mounts that are
//! removed again when the guard drops, also when the test fails (Drop runs while unwinding).
//!
//! Tests that need root call `root_or_skip`: without root they print why they are skipped and
//! pass; with `DISKTRIAGE_REQUIRE_ROOT=1` (set by `scripts/test.sh` and CI) a missing
//! prerequisite fails the test instead, so CI can never pass by skipping.

#![allow(dead_code)] // each test binary uses a different subset

pub mod tui;

use std::fs;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use nix::fcntl::{Flock, FlockArg};

/// True when the test may go on; false (after printing the reason) when it must be skipped.
pub fn root_or_skip(test: &str) -> bool {
    if nix::unistd::geteuid().is_root() {
        return true;
    }
    skip(test, "needs root to create loop and zram devices")
}

/// Skips with a printed reason, or fails when prerequisites are required.
pub fn skip(test: &str, reason: &str) -> bool {
    if std::env::var_os("DISKTRIAGE_REQUIRE_ROOT").is_some_and(|v| v == "1") {
        panic!("{test}: {reason} (DISKTRIAGE_REQUIRE_ROOT=1 forbids skipping)");
    }
    eprintln!("SKIPPED {test}: {reason}");
    false
}

/// The shared set of real smartctl reports beside the repository
/// (`../shared/data/smart-reports`: `text/`, `json/`, `MANIFEST.tsv`; its licences keep it out
/// of the repository). `None` after printing why when it is absent; with
/// `DISKTRIAGE_REQUIRE_ROOT=1` (CI) its absence fails the test instead.
pub fn smart_reports(test: &str) -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/data/smart-reports");
    if dir.join("MANIFEST.tsv").is_file() {
        return Some(dir);
    }
    skip(
        test,
        &format!(
            "the shared smartctl reports are not at {} (a checkout without ../shared)",
            dir.display()
        ),
    );
    None
}

/// Runs a command and returns stdout; panics with its stderr when it fails.
pub fn sh(cmd: &str, args: &[&str]) -> String {
    let out = Command::new(cmd)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {cmd}: {e}"));
    assert!(
        out.status.success(),
        "{cmd} {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The environment variable that points disktriage's run history elsewhere.
pub const HISTORY_ENV: &str = "DISKTRIAGE_HISTORY_DIR";

/// Where the binaries the tests start keep their run history: below the target directory,
/// never the real /var/lib/disktriage. Every test that starts disktriage sets it
/// (`.env(HISTORY_ENV, history_dir())`); tests that read the history use a directory of
/// their own (`--history-dir`).
pub fn history_dir() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join("test-history")
}

/// The disktriage binary as a child with every signal at its default, whatever the suite was
/// started under: `nohup` ignores SIGHUP (a script's background job SIGINT), and a signal
/// ignored at start stays ignored by design (`root_nohup_keeps_sighup_ignored`). For the tests
/// that send a stop signal.
pub fn disktriage_with_default_signals() -> Command {
    let mut command = Command::new("env");
    command
        .arg("--default-signal")
        .arg(env!("CARGO_BIN_EXE_disktriage"));
    command
}

/// Runs the disktriage binary built for this test run.
pub fn disktriage(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_disktriage"))
        .env(HISTORY_ENV, history_dir())
        .args(args)
        .output()
        .expect("run disktriage")
}

/// `disktriage list --json --all`, parsed; panics on failure.
pub fn list_json() -> serde_json::Value {
    let out = disktriage(&["list", "--json", "--all"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("list --json is JSON")
}

/// The entry for `name` in a `list --json` document.
pub fn json_device<'a>(doc: &'a serde_json::Value, name: &str) -> &'a serde_json::Value {
    doc["devices"]
        .as_array()
        .and_then(|d| d.iter().find(|d| d["name"] == name))
        .unwrap_or_else(|| panic!("{name} not in list --json"))
}

/// A scratch directory removed on drop.
pub fn scratch() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("disktriage-test.")
        .tempdir()
        .expect("temp dir")
}

/// Held while a test finds a free loop device or re-attaches one under its name: the root
/// tests run in parallel, and a `losetup --find` between another test's detach and re-attach
/// took the name (a re-attach failed on a loaded host).
pub fn loop_names() -> std::sync::MutexGuard<'static, ()> {
    static NAMES: std::sync::Mutex<()> = std::sync::Mutex::new(());
    NAMES
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// A loop device over a sparse file; detached on drop.
pub struct LoopDev {
    pub path: PathBuf,
    pub name: String,
    pub image: PathBuf,
}

impl LoopDev {
    /// A new sparse image of `size` bytes in `dir`, attached with the given logical sector size.
    pub fn new(dir: &Path, size: u64, sector_size: u32) -> LoopDev {
        let image = dir.join(format!("loop-{sector_size}-{size}.img"));
        fs::File::create(&image)
            .and_then(|f| f.set_len(size))
            .expect("create sparse image");
        LoopDev::attach(&image, &["--sector-size", &sector_size.to_string()])
    }

    /// Attaches an existing image; `extra` goes to losetup (e.g. `-P`).
    pub fn attach(image: &Path, extra: &[&str]) -> LoopDev {
        let image_str = image.to_str().expect("utf-8 path");
        let names = loop_names();
        let mut args = vec!["--find", "--show"];
        args.extend_from_slice(extra);
        args.push(image_str);
        let path = PathBuf::from(sh("losetup", &args).trim());
        drop(names);
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .expect("loop name")
            .to_string();
        // A loop device keeps its queue settings after a detach: start every test from the
        // kernel's default scheduler, whatever an earlier user of this loopN left.
        let scheduler = PathBuf::from("/sys/block")
            .join(&name)
            .join("queue/scheduler");
        if fs::read_to_string(&scheduler).is_ok_and(|s| s.split_whitespace().any(|w| w == "none")) {
            fs::write(&scheduler, "none").expect("reset the loop device's scheduler");
        }
        LoopDev {
            path,
            name,
            image: image.to_path_buf(),
        }
    }

    pub fn path_str(&self) -> &str {
        self.path.to_str().expect("utf-8 path")
    }

    /// Makes the kernel show the image's partitions. `losetup -P` asks the kernel to scan;
    /// kernels built without partition-table parsers (like this project's dev VM) need
    /// `partx --add`, which parses in user space and adds them with BLKPG.
    pub fn expose_partitions(&self) -> Vec<String> {
        let parts = || -> Vec<String> {
            let dir = PathBuf::from("/sys/block").join(&self.name);
            let mut v: Vec<String> = fs::read_dir(&dir)
                .map(|rd| {
                    rd.filter_map(Result::ok)
                        .filter(|e| e.path().join("partition").exists())
                        .filter_map(|e| e.file_name().into_string().ok())
                        .collect()
                })
                .unwrap_or_default();
            v.sort();
            v
        };
        if parts().is_empty() {
            sh("partx", &["--add", self.path_str()]);
        }
        // devtmpfs creates the nodes asynchronously.
        poll(100, || {
            let p = parts();
            (!p.is_empty() && p.iter().all(|n| Path::new("/dev").join(n).exists())).then_some(p)
        })
        .unwrap_or_else(parts)
    }
}

impl LoopDev {
    /// Detaches the device and attaches `image` under the same name (what a script that
    /// reuses `/dev/loopN` does). Panics when the name was taken in between by someone else.
    pub fn reattach(&mut self, image: &Path) {
        let _names = loop_names();
        sh("losetup", &["-d", self.path_str()]);
        let image_str = image.to_str().expect("utf-8 path");
        // The kernel clears the device asynchronously after detach: retry briefly.
        let mut last = String::new();
        let attached = poll(50, || {
            let out = Command::new("losetup")
                .args([self.path_str(), image_str])
                .output()
                .expect("run losetup");
            if out.status.success() {
                return Some(());
            }
            last = String::from_utf8_lossy(&out.stderr).into_owned();
            None
        });
        if attached.is_some() {
            self.image = image.to_path_buf();
            return;
        }
        panic!(
            "cannot re-attach {} to {}: {last}",
            self.name,
            image.display()
        );
    }
}

impl Drop for LoopDev {
    fn drop(&mut self) {
        // `blockdev --setro` outlives the attachment: the next user of this loop device would
        // find it read-only. Clear it (a no-op on a writable device) before detaching.
        let _ = Command::new("blockdev")
            .arg("--setrw")
            .arg(&self.path)
            .output();
        let _ = Command::new("losetup").arg("-d").arg(&self.path).status();
    }
}

/// A mounted filesystem; unmounted on drop.
pub struct Mounted {
    pub dir: PathBuf,
}

impl Mounted {
    /// Makes an ext4 filesystem on `dev` and mounts it on `dir`.
    pub fn ext4(dev: &str, dir: &Path) -> Mounted {
        sh("mkfs.ext4", &["-q", "-F", dev]);
        fs::create_dir_all(dir).expect("mount point");
        sh("mount", &[dev, dir.to_str().expect("utf-8 path")]);
        Mounted {
            dir: dir.to_path_buf(),
        }
    }
}

impl Drop for Mounted {
    fn drop(&mut self) {
        // A program the test started may still be closing its files (a failed test's tmux is
        // killed just before): try again for up to 15 s rather than leave the mount behind.
        let unmounted = poll(750, || {
            let out = Command::new("umount").arg(&self.dir).output().ok()?;
            out.status.success().then_some(())
        });
        if unmounted.is_none() {
            eprintln!("could not unmount {}", self.dir.display());
        }
    }
}

/// `/dev/zram0` configured to a size, exclusively for this test (a file lock serialises the
/// tests that use it, across test binaries too); reset on drop.
pub struct Zram {
    pub name: String,
    pub path: PathBuf,
    _lock: Flock<fs::File>,
}

impl Zram {
    /// None (with the reason printed) when zram is missing or used by someone else.
    pub fn setup(test: &str, size: u64) -> Option<Zram> {
        let sys = Path::new("/sys/block/zram0");
        if !sys.exists() {
            skip(test, "no /sys/block/zram0 (modprobe zram)");
            return None;
        }
        let lock_file = fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .mode(0o600)
            .open("/tmp/disktriage-tests-zram0.lock")
            .expect("lock file");
        let lock = Flock::lock(lock_file, FlockArg::LockExclusive).expect("flock zram lock");
        let disksize = fs::read_to_string(sys.join("disksize")).unwrap_or_default();
        if disksize.trim() != "0" {
            skip(
                test,
                "zram0 is already configured by someone else; not touching it",
            );
            return None;
        }
        fs::write(sys.join("disksize"), size.to_string()).expect("set zram disksize");
        Some(Zram {
            name: "zram0".into(),
            path: "/dev/zram0".into(),
            _lock: lock,
        })
    }
}

impl Drop for Zram {
    fn drop(&mut self) {
        let _ = Command::new("swapoff").arg(&self.path).output();
        // The kernel refuses a reset (EBUSY) while the device is open, and a process that used
        // io_uring on it (ours or fio's) keeps it open until its rings are torn down, after
        // it has exited. Left configured, the next test would find zram0 "configured by
        // someone else".
        if poll(150, || fs::write("/sys/block/zram0/reset", "1").ok()).is_none() {
            eprintln!("zram0 stayed busy for 3 s: not reset");
        }
    }
}

/// Tries `attempt` up to `tries` times, 20 ms apart, until it gives a value: for what the
/// kernel finishes asynchronously (device nodes, a detach, a ring's teardown).
pub fn poll<T>(tries: u32, mut attempt: impl FnMut() -> Option<T>) -> Option<T> {
    for _ in 0..tries {
        if let Some(v) = attempt() {
            return Some(v);
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    None
}

/// A sparse file of `size` bytes at `dir/name`, for `LoopDev::attach`.
pub fn sparse_image(dir: &Path, name: &str, size: u64) -> PathBuf {
    let image = dir.join(name);
    fs::File::create(&image)
        .and_then(|f| f.set_len(size))
        .expect("create sparse image");
    image
}

/// An active swap file (made with mkswap, turned on with swapon); swapoff on drop.
pub struct SwapFile {
    pub path: PathBuf,
}

impl SwapFile {
    /// A swap file of `size` bytes written out in full (swapon refuses holes) at `path`.
    pub fn on(path: &Path, size: u64) -> SwapFile {
        let data = vec![0u8; size as usize];
        fs::write(path, data).expect("write swap file");
        fs::set_permissions(path, std::os::unix::fs::PermissionsExt::from_mode(0o600))
            .expect("chmod swap file");
        let p = path.to_str().expect("utf-8 path");
        sh("mkswap", &["-q", p]);
        sh("swapon", &[p]);
        SwapFile {
            path: path.to_path_buf(),
        }
    }
}

impl Drop for SwapFile {
    fn drop(&mut self) {
        let _ = Command::new("swapoff").arg(&self.path).status();
    }
}

/// Removes a path on drop (a file a failing test may have left in the wrong place).
pub struct RemoveOnDrop(pub PathBuf);

impl Drop for RemoveOnDrop {
    fn drop(&mut self) {
        let _ = fs::remove_file(&self.0);
    }
}

/// A symlink flipped continuously between two targets by a background thread (each flip an
/// atomic rename), until dropped.
pub struct FlippingLink {
    pub link: PathBuf,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    thread: Option<std::thread::JoinHandle<u64>>,
}

impl FlippingLink {
    pub fn new(link: &Path, a: &Path, b: &Path) -> FlippingLink {
        use std::sync::atomic::{AtomicBool, Ordering};
        let stop = std::sync::Arc::new(AtomicBool::new(false));
        std::os::unix::fs::symlink(a, link).expect("symlink");
        let (link_c, a, b, stop_c) = (
            link.to_path_buf(),
            a.to_path_buf(),
            b.to_path_buf(),
            std::sync::Arc::clone(&stop),
        );
        let thread = std::thread::spawn(move || {
            let tmp = link_c.with_extension("flip");
            let mut flips = 0u64;
            while !stop_c.load(Ordering::Relaxed) {
                let target = if flips.is_multiple_of(2) { &b } else { &a };
                let _ = fs::remove_file(&tmp);
                if std::os::unix::fs::symlink(target, &tmp).is_ok()
                    && fs::rename(&tmp, &link_c).is_ok()
                {
                    flips += 1;
                }
                std::thread::sleep(std::time::Duration::from_micros(200));
            }
            flips
        });
        FlippingLink {
            link: link.to_path_buf(),
            stop,
            thread: Some(thread),
        }
    }

    /// Stops flipping; returns how many flips were made.
    pub fn stop(&mut self) -> u64 {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        self.thread.take().map_or(0, |t| t.join().unwrap_or(0))
    }
}

impl Drop for FlippingLink {
    fn drop(&mut self) {
        self.stop();
        let _ = fs::remove_file(&self.link);
    }
}

/// Can a FUSE disk (`tests/fuse/cachedisk.py`) run here? Skips (or, where required, fails)
/// the test when not.
pub fn fuse_available(test: &str) -> bool {
    if !Path::new("/dev/fuse").exists() {
        let _ = Command::new("modprobe").arg("fuse").status();
    }
    if !Path::new("/dev/fuse").exists() {
        return skip(test, "no /dev/fuse (the fuse module)");
    }
    if Command::new("python3").arg("-c").arg("1").output().is_err() {
        return skip(test, "no python3 (scripts/install-test-deps.sh)");
    }
    true
}

/// tests/fuse/cachedisk.py serving one file, `disk`, of `size` bytes over `store` at `mnt`;
/// killed (SIGKILL: for the cache modes the power cut) and lazily unmounted on drop.
pub struct CacheDisk {
    child: Option<std::process::Child>,
    pub mnt: PathBuf,
}

impl CacheDisk {
    /// Starts it in `mode` (honest, liar, bad) with `env` set, and waits until it is mounted.
    pub fn start(
        mode: &str,
        store: &Path,
        mnt: &Path,
        size: u64,
        env: &[(&str, String)],
    ) -> CacheDisk {
        fs::create_dir_all(mnt).unwrap();
        let ready = mnt.with_extension("ready");
        let _ = fs::remove_file(&ready);
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fuse/cachedisk.py");
        let child = Command::new("python3")
            .arg(script)
            .args([mode, store.to_str().unwrap(), mnt.to_str().unwrap()])
            .arg(size.to_string())
            .arg(&ready)
            .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
            .stderr(std::process::Stdio::inherit())
            .spawn()
            .expect("python3");
        let mut disk = CacheDisk {
            child: Some(child),
            mnt: mnt.to_path_buf(),
        };
        let up = poll(250, || {
            if let Some(c) = disk.child.as_mut()
                && let Ok(Some(status)) = c.try_wait()
            {
                panic!("cachedisk.py {mode} exited: {status}");
            }
            ready.exists().then_some(())
        });
        assert!(up.is_some(), "cachedisk.py {mode} did not mount");
        disk
    }

    /// The file the loop device goes over.
    pub fn file(&self) -> PathBuf {
        self.mnt.join("disk")
    }

    /// The power cut: SIGKILL (its cache is gone), then a lazy unmount.
    pub fn cut(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
        let _ = Command::new("umount")
            .arg("-l")
            .arg(&self.mnt)
            .stderr(std::process::Stdio::null())
            .status();
    }
}

impl Drop for CacheDisk {
    fn drop(&mut self) {
        self.cut();
    }
}

/// `[reads, sectors read, writes, sectors written]` of a block device (its sysfs `stat`).
pub fn io_counters(name: &str) -> [u64; 4] {
    let text = fs::read_to_string(format!("/sys/class/block/{name}/stat")).unwrap();
    let f: Vec<u64> = text
        .split_whitespace()
        .map(|w| w.parse().unwrap())
        .collect();
    [f[0], f[2], f[4], f[6]]
}
