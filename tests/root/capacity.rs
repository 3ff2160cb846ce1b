//! `disktriage capacity` on fake-capacity devices no one here wrote the mapping of in Rust: a
//! loop device over `tests/fuse/cachedisk.py fake`, which claims 2 TB and stores only its
//! first REAL bytes (past them a sector wraps, is dropped or fails). Each probe must find
//! REAL to the sector and leave every stored byte as it was (sha256 before and after, by
//! sha256sum); a probe killed mid-way leaves a journal that `restore --capacity` completes.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use crate::common::{self, CacheDisk, LoopDev, Mounted};

const CLAIM: u64 = 2_000_000_000_000;

/// A directory for journals on a RAM file system: every loop device here is over an image on
/// the disk /tmp is on, and a journal there would share that disk (refused, rightly).
fn journal_dir() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("disktriage-journal.")
        .tempdir_in("/dev/shm")
        .expect("a directory in /dev/shm")
}

/// A fake stick: the FUSE daemon, the loop device over it, the scratch directory.
struct Fake {
    dev: Option<LoopDev>,
    _disk: CacheDisk,
    dir: tempfile::TempDir,
    real: u64,
}

impl Fake {
    fn new(kind: &str, real: u64) -> Fake {
        let dir = common::scratch();
        let disk = CacheDisk::start(
            "fake",
            &dir.path().join("store"),
            &dir.path().join("mnt"),
            CLAIM,
            &[("CACHEDISK_FAKE", format!("{kind}:{real}"))],
        );
        let dev = LoopDev::attach(&disk.file(), &["--direct-io=on"]);
        // What the stick stores, made distinct: random bytes over all of it.
        common::sh(
            "dd",
            &[
                "if=/dev/urandom",
                &format!("of={}", dev.path_str()),
                "bs=1M",
                &format!("count={}", real >> 20),
                "oflag=direct",
                "status=none",
            ],
        );
        Fake {
            dev: Some(dev),
            _disk: disk,
            dir,
            real,
        }
    }

    fn dev(&self) -> &LoopDev {
        self.dev.as_ref().unwrap()
    }

    /// sha256sum of the stored bytes, read through the device.
    fn stored_sha(&self) -> String {
        let out = Command::new("sh")
            .arg("-c")
            .arg(format!(
                "head -c {} {} | sha256sum",
                self.real,
                self.dev().path_str()
            ))
            .output()
            .unwrap();
        assert!(out.status.success());
        String::from_utf8_lossy(&out.stdout)[..64].to_string()
    }

    fn journal(&self) -> PathBuf {
        self.dir.path().join("probe.journal")
    }

    fn probe(&self, extra: &[&str]) -> std::process::Output {
        let journal = self.journal();
        let mut args = vec![
            "capacity",
            self.dev().path_str(),
            "--json",
            "--journal",
            journal.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        common::disktriage(&args)
    }
}

impl Drop for Fake {
    fn drop(&mut self) {
        // The loop device goes before the daemon that serves it.
        self.dev.take();
    }
}

fn json(out: &std::process::Output) -> serde_json::Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{e}: {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

#[test]
fn each_fake_is_found_to_the_sector_and_every_stored_byte_is_as_before() {
    if !common::root_or_skip("capacity::each_fake") || !common::fuse_available("capacity") {
        return;
    }
    // A 2 TB stick with 100 MiB, a wrap of no power of two, a dropped tail, a failing tail.
    for (kind, real, shown) in [
        ("wrap", 100u64 << 20, "wraps"),
        ("wrap", 12_345 * 4096 + 512, "wraps"),
        ("drop", 123_456_512, "drops"),
        ("fail", 300_000_256, "fails"),
    ] {
        let fake = Fake::new(kind, real);
        let before = fake.stored_sha();
        let name = fake.dev().name.clone();
        let out = fake.probe(&["--confirm", &name]);
        let report = json(&out);
        assert_eq!(out.status.code(), Some(4), "{kind}:{real}: fake is exit 4");
        assert_eq!(report["verdict"], "fake", "{kind}:{real}");
        assert_eq!(report["real_bytes"], real, "{kind}:{real}: {report:#}");
        assert_eq!(report["last_good_lba"], real / 512 - 1);
        assert_eq!(report["fake"]["kind"], shown);
        if kind == "wrap" {
            assert_eq!(report["fake"]["onto_lba"], 0);
        }
        assert_eq!(report["put_back"]["mismatched"], serde_json::json!([]));
        assert_eq!(report["put_back"]["error"], serde_json::Value::Null);
        let region = (real / 512).min(64 << 11);
        assert!(report["put_back"]["verified"].as_u64().unwrap() >= region);
        assert_eq!(
            fake.stored_sha(),
            before,
            "{kind}:{real}: every stored byte is back"
        );
        assert!(
            !fake.journal().exists(),
            "the journal goes once all is back"
        );
    }
}

#[test]
fn a_real_device_is_real_and_left_as_it_was() {
    if !common::root_or_skip("capacity::a_real_device") {
        return;
    }
    let dir = common::scratch();
    let dev = LoopDev::new(dir.path(), 1 << 30, 4096);
    common::sh(
        "dd",
        &[
            "if=/dev/urandom",
            &format!("of={}", dev.path_str()),
            "bs=1M",
            "count=1024",
            "oflag=direct",
            "status=none",
        ],
    );
    let sha = || common::sh("sha256sum", &[dev.path_str()])[..64].to_string();
    let before = sha();
    let journals = journal_dir();
    let journal = journals.path().join("real.journal");
    let history = journals.path().join("history");
    let out = common::disktriage(&[
        "capacity",
        dev.path_str(),
        "--confirm",
        &dev.name,
        "--journal",
        journal.to_str().unwrap(),
        "--history-dir",
        history.to_str().unwrap(),
    ]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(text.contains("Verdict    real"), "{text}");
    assert!(text.contains("of 4096 bytes"), "{text}");
    assert_eq!(sha(), before);
    // The verdict is in the history, and `disktriage history` lists it.
    let out = common::disktriage(&[
        "history",
        "--history-dir",
        history.to_str().unwrap(),
        dev.path_str(),
    ]);
    let listed = String::from_utf8_lossy(&out.stdout);
    assert!(listed.contains("verdict real: real"), "{listed}");
}

#[test]
fn a_probe_killed_mid_way_leaves_a_journal_that_restore_completes() {
    if !common::root_or_skip("capacity::a_probe_killed") || !common::fuse_available("capacity") {
        return;
    }
    let fake = Fake::new("wrap", 100 << 20);
    let before = fake.stored_sha();
    let journal = fake.journal();
    let mut child = Command::new(env!("CARGO_BIN_EXE_disktriage"))
        .env(common::HISTORY_ENV, common::history_dir())
        .args([
            "capacity",
            fake.dev().path_str(),
            "--confirm",
            &fake.dev().name,
        ])
        .args(["--journal", journal.to_str().unwrap()])
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Killed once 8 MiB are saved (the region is 64 MiB): stamps are on the device then.
    let saved = common::poll(400, || {
        std::thread::sleep(Duration::from_millis(5));
        (fs::metadata(&journal).map_or(0, |m| m.len()) > 8 << 20).then_some(())
    });
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(saved.is_some(), "the journal grew");
    assert_ne!(
        fake.stored_sha(),
        before,
        "the kill left stamps on the device"
    );
    assert_eq!(
        fs::metadata(&journal).unwrap().permissions().mode() & 0o777,
        0o600,
        "copies of the disk's data are root's alone"
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
    assert_eq!(fake.stored_sha(), before, "every byte is back");
    assert!(!journal.exists());
}

#[test]
fn refusals_write_nothing() {
    if !common::root_or_skip("capacity::refusals") {
        return;
    }
    let dir = common::scratch();
    // The target's data lives on a file system of another loop device: a journal there
    // would go down with the target's medium.
    let medium = LoopDev::new(dir.path(), 256 << 20, 512);
    let mounted = Mounted::ext4(medium.path_str(), &dir.path().join("m"));
    let image = common::sparse_image(&mounted.dir, "target.img", 128 << 20);
    let dev = LoopDev::attach(&image, &[]);
    let writes = || common::io_counters(&dev.name)[2];
    let at_start = writes();
    let journals = journal_dir();
    let journal = journals.path().join("j");
    let j = journal.to_str().unwrap();

    // No typed name: a usage error, before anything is opened.
    let out = common::disktriage(&["capacity", dev.path_str(), "--journal", j]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("pass --confirm NAME"));

    // Another name typed.
    let out = common::disktriage(&[
        "capacity",
        dev.path_str(),
        "--confirm",
        "sdz",
        "--journal",
        j,
    ]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--confirm sdz does not name the target"),
        "{err}"
    );

    // The journal on the medium the target lives on.
    let beside = mounted.dir.join("j");
    let out = common::disktriage(&[
        "capacity",
        dev.path_str(),
        "--confirm",
        &dev.name,
        "--journal",
        beside.to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("shares a disk with"), "{err}");
    assert!(!beside.exists(), "no journal made");

    // An existing journal is never written over: it may hold another probe's sectors.
    fs::write(&journal, b"another probe's").unwrap();
    let out = common::disktriage(&[
        "capacity",
        dev.path_str(),
        "--confirm",
        &dev.name,
        "--journal",
        j,
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("it already exists"), "{err}");
    assert_eq!(fs::read(&journal).unwrap(), b"another probe's");

    assert_eq!(writes(), at_start, "nothing was written to {}", dev.name);
    drop(dev);
}

/// `c` on Devices in the real program at 80x25 (tmux): the typed name, then the fake
/// verdict with the size the stick really stores, and every stored byte as before.
#[test]
fn root_tmux_c_probes_a_fake_stick_and_puts_every_byte_back() {
    let Some(_one_at_a_time) =
        crate::tui_tmux::prerequisites("root_tmux_c_probes_a_fake_stick_and_puts_every_byte_back")
    else {
        return;
    };
    if !common::fuse_available("capacity") {
        return;
    }
    let fake = Fake::new("wrap", 100 << 20);
    let before = fake.stored_sha();
    let name = fake.dev().name.clone();
    let history = fake.dir.path().join("history");
    let journal = history.join(format!("capacity-{name}.journal"));
    let tmux = crate::tui_tmux::Tmux {
        socket: format!("disktriage-test-capacity-{}", std::process::id()),
    };
    tmux.start(
        &["TERM=linux"],
        &format!(
            "--journal-dir {} --history-dir {}",
            fake.dir.path().join("changes").display(),
            history.display()
        ),
    );
    tmux.select(&name);
    tmux.keys(&["c"]);
    let s = tmux.wait_for(
        &format!("Type the device name ({name})"),
        Duration::from_secs(5),
        "the name is asked",
    );
    assert!(s.contains(&format!("OVERWRITES sectors of {name}")), "{s}");
    assert!(s.contains(&format!("capacity-{name}.journal")), "{s}");
    tmux.keys(&[name.as_str(), "Enter"]);
    // The report's last line ends the frame: once it is on the pane, the frame is whole.
    let s = tmux.wait_for("Put back", Duration::from_secs(120), "the verdict");
    assert!(s.contains("Verdict: FAKE"), "{s}");
    assert!(
        s.contains("Verdict    fake: stores 100.0 MiB (104.9 MB) of the 2.0 TB"),
        "{s}"
    );
    assert!(
        s.contains("Stores     100.0 MiB (104.9 MB): the last good LBA is 204799"),
        "{s}"
    );
    assert!(s.contains("read back as saved"), "{s}");
    assert!(!s.contains("did not finish"), "{s}");
    tmux.keys(&["q"]);
    tmux.wait_for("EXITED-0", Duration::from_secs(10), "after quit");
    assert_eq!(fake.stored_sha(), before, "every stored byte is back");
    assert!(!journal.exists(), "the journal goes once all is back");
    let loaded = disktriage::history::History::new(&history).load().unwrap();
    let verdicts: Vec<_> = loaded
        .entries
        .iter()
        .filter(|e| e.test == disktriage::history::CAPACITY_TEST)
        .filter_map(|e| e.check.as_ref())
        .map(|c| c.verdict.as_str())
        .collect();
    assert_eq!(verdicts, ["fake"], "the screen's verdict is in the history");
}

/// The probe as the screen orders it (`CapacityOrder`, the device stamped as chosen),
/// through the runner's path: its messages are what the screen hears.
fn run_order(order: disktriage::flow::CapacityOrder) -> Vec<disktriage::flow::CapacityMsg> {
    use disktriage::flow::{JobEnv, Order};
    use disktriage::sys::{LinuxDrives, SysRoot};
    let env = JobEnv::new(
        SysRoot::host(),
        std::sync::Arc::new(LinuxDrives::new(SysRoot::host())),
        disktriage::tui::INTERVAL,
    );
    let (tx, rx) = std::sync::mpsc::channel();
    // The screen hears only the messages; the outcome is the CLI's.
    let _outcome = disktriage::tui::run_here(
        order.job(&env),
        &std::sync::atomic::AtomicBool::new(false),
        &tx,
    );
    drop(tx);
    rx.try_iter()
        .map(|m| match m {
            disktriage::event::Msg::Job(j) => j.take().expect("a capacity probe's message"),
            other => panic!("{other:?}"),
        })
        .collect()
}

fn device_sha(dev: &LoopDev) -> String {
    common::sh("sha256sum", &[dev.path_str()])[..64].to_string()
}

/// A wrong name, and another device under the chosen name by the time it runs, are refused
/// before any write, in the words the screen shows.
#[test]
fn root_the_screens_probe_refuses_a_wrong_name_and_another_device_writing_nothing() {
    use disktriage::flow::{CapacityMsg, CapacityOrder};
    if !common::root_or_skip("capacity::root_the_screens_probe_refuses") {
        return;
    }
    let dir = common::scratch();
    let journals = journal_dir();
    let mut dev = LoopDev::new(dir.path(), 64 << 20, 512);
    common::sh(
        "dd",
        &[
            "if=/dev/urandom",
            &format!("of={}", dev.path_str()),
            "bs=1M",
            "count=64",
            "oflag=direct",
            "status=none",
        ],
    );
    let order = |dev: &LoopDev, typed: &str| CapacityOrder {
        device: dev.name.clone(),
        path: dev.path.clone(),
        confirmation: typed.into(),
        journal: journals.path().join("probe.journal"),
        chosen: disktriage::sys::SysRoot::host()
            .inventory()
            .unwrap()
            .chosen(&dev.name),
    };
    let before = device_sha(&dev);
    let msgs = run_order(order(&dev, "loop999"));
    let [CapacityMsg::Failed(why)] = msgs.as_slice() else {
        panic!("{msgs:?}")
    };
    assert!(why.contains(&dev.name), "{why}");
    assert_eq!(device_sha(&dev), before, "a wrong name wrote");

    // The admin chose this device; another image is under its name by the time it runs.
    let chosen = order(&dev, &dev.name);
    let other = common::sparse_image(dir.path(), "other.img", 64 << 20);
    dev.reattach(&other);
    let before = device_sha(&dev);
    let msgs = run_order(chosen);
    let [CapacityMsg::Failed(why)] = msgs.as_slice() else {
        panic!("the probe ran on another device: {msgs:?}")
    };
    assert!(why.contains("no longer the device you chose"), "{why}");
    assert_eq!(device_sha(&dev), before, "the other device was written");
    assert!(!journals.path().join("probe.journal").exists());
}
