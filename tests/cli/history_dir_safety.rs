//! The history directory holds what others may have planted: a FIFO at a history file's name
//! (the log, the lock, the rotated log), a symbolic link, or the directory itself writable by
//! anyone. A run on a small file target must still end by itself within seconds (a hang fails
//! the test, it does not hang it), write nothing through a link, refuse a directory others can
//! write, and end on SIGTERM while it waits for the history's lock. No root needed.

#![allow(clippy::unwrap_used)] // tests may unwrap: a panic is the failure report

use crate::common;
use common::{HISTORY_ENV, history_dir, scratch};

use std::fs;
use std::io::Read;
use std::os::unix::fs::{FileTypeExt, PermissionsExt, symlink};
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use disktriage::history::{FILE, ROTATE_AT, ROTATED};

/// Longer than any run here takes on a loaded machine; a hang is far longer.
const LIMIT: Duration = Duration::from_secs(20);
const LOCK: &str = "history.lock";

/// A started disktriage with its output gathered by threads (so a full pipe never blocks it).
struct Started {
    child: Child,
    stdout: Arc<Mutex<String>>,
    stderr: Arc<Mutex<String>>,
}

fn start(args: &[&str]) -> Started {
    let mut child = Command::new(env!("CARGO_BIN_EXE_disktriage"))
        .env(HISTORY_ENV, history_dir())
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let gather = |mut pipe: Box<dyn Read + Send>| {
        let text = Arc::new(Mutex::new(String::new()));
        let t = Arc::clone(&text);
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = pipe.read(&mut buf) {
                if n == 0 {
                    break;
                }
                t.lock()
                    .unwrap()
                    .push_str(&String::from_utf8_lossy(&buf[..n]));
            }
        });
        text
    };
    let stdout = gather(Box::new(child.stdout.take().unwrap()));
    let stderr = gather(Box::new(child.stderr.take().unwrap()));
    Started {
        child,
        stdout,
        stderr,
    }
}

impl Started {
    /// Waits up to `limit`; on a hang the process is killed and the test fails with what it
    /// printed.
    fn finish(mut self, what: &str, limit: Duration) -> (ExitStatus, String, String) {
        let t0 = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                // Let the reader threads drain the pipes.
                std::thread::sleep(Duration::from_millis(100));
                let out = self.stdout.lock().unwrap().clone();
                let err = self.stderr.lock().unwrap().clone();
                return (status, out, err);
            }
            if t0.elapsed() > limit {
                let _ = self.child.kill();
                let _ = self.child.wait();
                panic!(
                    "{what}: still running after {limit:?} (hung); stdout: {} stderr: {}",
                    self.stdout.lock().unwrap(),
                    self.stderr.lock().unwrap()
                );
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

/// A short read test of a 4 MiB file, recorded in `hist`.
fn run_args(hist: &Path, target: &Path) -> Vec<String> {
    [
        "--history-dir",
        hist.to_str().unwrap(),
        "run",
        target.to_str().unwrap(),
        "--size",
        "4M",
        "--time",
        "100ms",
        "--warmup",
        "0",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

fn run(what: &str, hist: &Path, target: &Path) -> (ExitStatus, String, String) {
    let args = run_args(hist, target);
    start(&args.iter().map(String::as_str).collect::<Vec<_>>()).finish(what, LIMIT)
}

fn fifo(path: &Path) {
    nix::unistd::mkfifo(path, nix::sys::stat::Mode::from_bits_truncate(0o644)).unwrap();
}

fn history_dir_in(dir: &Path) -> std::path::PathBuf {
    let hist = dir.join("hist");
    fs::create_dir(&hist).unwrap();
    fs::set_permissions(&hist, fs::Permissions::from_mode(0o755)).unwrap();
    hist
}

/// A history file just past the rotation size, so the next record rotates it (and looks at
/// the rotated name first).
fn full_log(hist: &Path) {
    let line = "{\"not\":\"a record\"}\n";
    let n = ROTATE_AT as usize / line.len() + 1;
    fs::write(hist.join(FILE), line.repeat(n)).unwrap();
}

#[test]
fn a_fifo_at_any_history_name_never_hangs_a_run() {
    for name in [FILE, LOCK, ROTATED] {
        let dir = scratch();
        let hist = history_dir_in(dir.path());
        if name == ROTATED {
            full_log(&hist);
        }
        fifo(&hist.join(name));
        let (status, stdout, stderr) = run(name, &hist, &dir.path().join("t.bin"));
        assert!(status.success(), "{name}: {stdout}{stderr}");
        assert!(stdout.contains("MB/s"), "{name}: {stdout}");
        assert!(
            stderr.contains("FIFO"),
            "{name}: the FIFO is not named: {stderr}"
        );
        assert!(
            fs::symlink_metadata(hist.join(name))
                .unwrap()
                .file_type()
                .is_fifo(),
            "{name}: the FIFO was replaced"
        );
    }
}

#[test]
fn a_fifo_in_the_history_never_hangs_reading_it() {
    for name in [FILE, ROTATED] {
        let dir = scratch();
        let hist = history_dir_in(dir.path());
        fifo(&hist.join(name));
        let (status, stdout, stderr) = start(&["--history-dir", hist.to_str().unwrap(), "history"])
            .finish(&format!("history with a FIFO at {name}"), LIMIT);
        assert!(!status.success(), "{name}: {stdout}");
        assert!(stderr.contains("FIFO"), "{name}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
    }
}

#[test]
fn a_symlink_at_any_history_name_is_never_written_through() {
    for name in [FILE, LOCK, ROTATED] {
        let dir = scratch();
        let hist = history_dir_in(dir.path());
        let victim = dir.path().join("victim");
        fs::write(&victim, "precious\n").unwrap();
        if name == ROTATED {
            full_log(&hist);
        }
        symlink(&victim, hist.join(name)).unwrap();
        let (status, stdout, stderr) = run(name, &hist, &dir.path().join("t.bin"));
        assert!(status.success(), "{name}: {stdout}{stderr}");
        assert_eq!(
            fs::read_to_string(&victim).unwrap(),
            "precious\n",
            "{name}: written through the link"
        );
        assert!(
            stderr.contains("symbolic link"),
            "{name}: the link is not said: {stderr}"
        );
    }
}

#[test]
fn a_history_directory_others_can_write_is_refused() {
    let dir = scratch();
    let hist = history_dir_in(dir.path());
    fs::set_permissions(&hist, fs::Permissions::from_mode(0o777)).unwrap();
    let (status, stdout, stderr) = run("world-writable", &hist, &dir.path().join("t.bin"));
    assert!(status.success(), "{stdout}{stderr}");
    assert!(
        stderr.contains("refusing the history directory")
            && stderr.contains("writable by others (mode 0777)"),
        "{stderr}"
    );
    assert_eq!(fs::read_dir(&hist).unwrap().count(), 0, "written anyway");
}

/// Another process holds the history's lock: the run's report is out, its record waits, and
/// SIGTERM still ends it at once with 128 + 15.
#[test]
fn sigterm_ends_a_run_waiting_for_the_history_lock() {
    use nix::fcntl::{Flock, FlockArg};
    let dir = scratch();
    let hist = history_dir_in(dir.path());
    let held = Flock::lock(
        fs::File::create(hist.join(LOCK)).unwrap(),
        FlockArg::LockExclusive,
    )
    .unwrap();
    let args = run_args(&hist, &dir.path().join("t.bin"));
    let started = start(&args.iter().map(String::as_str).collect::<Vec<_>>());
    // The report is printed before the record is written.
    let t0 = Instant::now();
    while !started.stdout.lock().unwrap().contains("MB/s") {
        assert!(t0.elapsed() < LIMIT, "no report");
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(500));
    let pid = nix::unistd::Pid::from_raw(started.child.id() as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).unwrap();
    let (status, _, stderr) = started.finish("waiting for the lock", Duration::from_secs(3));
    drop(held);
    assert_eq!(status.code(), Some(143), "{status:?} {:?}", status.signal());
    assert!(stderr.contains("not added to the history"), "{stderr}");
}

/// A hard link planted as the log (another name of a file elsewhere on the same file system)
/// is not appended to: O_NOFOLLOW does not see it, the link count does.
#[test]
fn a_hard_link_planted_as_the_log_is_never_appended_to() {
    let dir = scratch();
    let hist = history_dir_in(dir.path());
    let victim = dir.path().join("victim");
    fs::write(&victim, "precious\n").unwrap();
    fs::hard_link(&victim, hist.join(FILE)).unwrap();
    let (status, stdout, stderr) = run("hard link", &hist, &dir.path().join("t.bin"));
    assert!(status.success(), "{stdout}{stderr}");
    assert_eq!(fs::read_to_string(&victim).unwrap(), "precious\n");
    assert!(stderr.contains("hard links"), "{stderr}");
}
