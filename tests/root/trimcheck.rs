//! `disktriage trimcheck` on loop devices: a loop device over a file discards by punching
//! holes in it (`fallocate`), so the range reads back as zeros and nothing is claimed; one
//! over a file on ramfs (no `fallocate`) gets no discards from the kernel, and no write; the
//! refusals
//! (no or another typed name, the journal on the target's medium, a mounted device, a device
//! stacked on a mounted one) write nothing. Every device's sha256 (by sha256sum) is the same
//! before and after. A loop device over another whose `discard_max_bytes` is lowered to 0
//! takes the discard and keeps the data ("discard accepted, data still there").

use std::fs;
use std::path::Path;

use crate::common::{self, LoopDev, Mounted};

/// A directory for journals on a RAM file system: the loop devices here are over images on
/// the disk /tmp is on, and a journal there would share that disk (refused, rightly).
fn journal_dir() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("disktriage-trim-journal.")
        .tempdir_in("/dev/shm")
        .expect("a directory in /dev/shm")
}

fn sha(dev: &LoopDev) -> String {
    common::sh("sha256sum", &[dev.path_str()])[..64].to_string()
}

/// Random bytes over the whole device, so a put-back that missed a byte shows.
fn fill_random(dev: &LoopDev, mib: u64) {
    common::sh(
        "dd",
        &[
            "if=/dev/urandom",
            &format!("of={}", dev.path_str()),
            "bs=1M",
            &format!("count={mib}"),
            "oflag=direct",
            "status=none",
        ],
    );
}

/// `[writes, discards]` completed, from the device's sysfs `stat` (fields 5 and 12).
fn writes_and_discards(name: &str) -> [u64; 2] {
    let text = fs::read_to_string(format!("/sys/class/block/{name}/stat")).unwrap();
    let f: Vec<u64> = text
        .split_whitespace()
        .map(|w| w.parse().unwrap())
        .collect();
    [f[4], f.get(11).copied().unwrap_or(0)]
}

/// A ramfs mounted on a scratch directory; unmounted on drop. ramfs has no `fallocate`, so
/// a loop device over a file on it gets no discards from the kernel (discard_max_bytes 0).
struct Ramfs(tempfile::TempDir);

impl Ramfs {
    fn mount() -> Ramfs {
        let dir = common::scratch();
        common::sh(
            "mount",
            &["-t", "ramfs", "ramfs", dir.path().to_str().unwrap()],
        );
        Ramfs(dir)
    }
}

impl Drop for Ramfs {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount")
            .arg(self.0.path())
            .status();
    }
}

/// Removes loop device `name` (LOOP_CTL_REMOVE) once it is detached: a limit lowered through
/// sysfs outlives a detach, and only a new loop device gets the kernel's defaults back.
fn remove_loop(name: &str) {
    let n: u32 = name.trim_start_matches("loop").parse().unwrap();
    let script = format!(
        "import fcntl, os, time\n\
         fd = os.open('/dev/loop-control', os.O_RDWR)\n\
         for _ in range(100):\n\
         \x20   try:\n\
         \x20       fcntl.ioctl(fd, 0x4C81, {n}); break\n\
         \x20   except OSError:\n\
         \x20       time.sleep(0.05)\n"
    );
    let _ = std::process::Command::new("python3")
        .args(["-c", &script])
        .status();
}

/// Writes a random MiB at 8 MiB of `dev`, discards it with blkdiscard and says what reads
/// back: "zeros", "old" or "other".
fn witness(dev: &str, dir: &Path) -> String {
    let pat = dir.join("witness.pat");
    let back = dir.join("witness.back");
    common::sh(
        "dd",
        &[
            "if=/dev/urandom",
            &format!("of={}", pat.display()),
            "bs=1M",
            "count=1",
            "status=none",
        ],
    );
    common::sh(
        "dd",
        &[
            &format!("if={}", pat.display()),
            &format!("of={dev}"),
            "bs=1M",
            "seek=8",
            "count=1",
            "oflag=direct",
            "conv=fsync",
            "status=none",
        ],
    );
    common::sh("blkdiscard", &["-o", "8388608", "-l", "1048576", dev]);
    common::sh(
        "dd",
        &[
            &format!("if={dev}"),
            &format!("of={}", back.display()),
            "bs=1M",
            "skip=8",
            "count=1",
            "iflag=direct",
            "status=none",
        ],
    );
    let back = fs::read(back).unwrap();
    if back.iter().all(|&b| b == 0) {
        "zeros".into()
    } else if back == fs::read(pat).unwrap() {
        "old".into()
    } else {
        "other".into()
    }
}

fn trimcheck(dev: &str, confirm: &str, journal: &Path, json: bool) -> std::process::Output {
    let mut args = vec![
        "trimcheck",
        dev,
        "--confirm",
        confirm,
        "--journal",
        journal.to_str().unwrap(),
    ];
    if json {
        args.push("--json");
    }
    common::disktriage(&args)
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
fn a_loop_device_discards_to_zeros_and_every_byte_is_put_back() {
    if !common::root_or_skip("trimcheck::a_loop_device_discards") {
        return;
    }
    let dir = common::scratch();
    let journals = journal_dir();
    for sector in [512u32, 4096] {
        let dev = LoopDev::new(dir.path(), 64 << 20, sector);
        fill_random(&dev, 64);
        let before = sha(&dev);
        let [_, discards_before] = writes_and_discards(&dev.name);
        // What the kernel does with the discard, witnessed with the shell's tools first: the
        // middle MiB discarded reads back as zeros.
        let witness = LoopDev::attach(&dev.image, &[]);
        common::sh(
            "blkdiscard",
            &["-o", "33554432", "-l", "1048576", witness.path_str()],
        );
        let zeros = common::sh(
            "sh",
            &[
                "-c",
                &format!(
                    "dd if={} bs=1M skip=32 count=1 iflag=direct status=none | tr -d '\\0' | wc -c",
                    witness.path_str()
                ),
            ],
        );
        assert_eq!(
            zeros.trim(),
            "0",
            "blkdiscard on a loop device leaves zeros"
        );
        drop(witness);
        fill_random(&dev, 64);
        let before_check = sha(&dev);
        assert_ne!(before_check, before);

        let journal = journals.path().join(format!("loop-{sector}.journal"));
        let out = trimcheck(dev.path_str(), &dev.name, &journal, true);
        let report = json(&out);
        assert_eq!(out.status.code(), Some(0), "{report:#}");
        assert_eq!(report["verdict"], "works");
        assert_eq!(report["sentence"], "discard works, reads zeros");
        assert_eq!(report["claim"], "nothing");
        assert_eq!(report["claim_source"], "no drive to ask: a loop device");
        assert_eq!(report["read_back"], "zeros");
        assert_eq!(report["range_bytes"], 4 << 20);
        assert_eq!(report["range_offset"], 30 << 20);
        assert_eq!(
            report["put_back"]["sectors"],
            (4u64 << 20) / u64::from(sector)
        );
        assert_eq!(
            report["put_back"]["verified"],
            (4u64 << 20) / u64::from(sector)
        );
        assert_eq!(report["put_back"]["mismatched"], serde_json::json!([]));
        assert_eq!(report["journal_kept"], serde_json::Value::Null);
        assert!(!journal.exists(), "the journal goes once all is back");
        let [_, discards_after] = writes_and_discards(&dev.name);
        assert!(
            discards_after > discards_before,
            "a discard reached {}",
            dev.name
        );
        assert_eq!(sha(&dev), before_check, "{sector}: every byte is back");

        // The text says the same in the words.
        let out = trimcheck(dev.path_str(), &dev.name, &journal, false);
        let text = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(0), "{text}");
        assert!(text.contains("Read back  zeros"), "{text}");
        assert!(
            text.contains("Verdict    discard works, reads zeros"),
            "{text}"
        );
        assert!(
            text.contains("Claim      nothing promised (no drive to ask: a loop device)"),
            "{text}"
        );
        assert!(text.lines().all(|l| l.chars().count() <= 80), "{text}");
        assert_eq!(sha(&dev), before_check);
    }
}

#[test]
fn a_device_the_kernel_sends_no_discards_is_reported_without_a_write() {
    if !common::root_or_skip("trimcheck::no_discards") {
        return;
    }
    let ramfs = Ramfs::mount();
    let image = ramfs.0.path().join("no-discard.img");
    fs::write(&image, vec![0x5a; 32 << 20]).unwrap();
    let dev = LoopDev::attach(&image, &[]);
    fill_random(&dev, 32);
    let max = format!("/sys/block/{}/queue/discard_max_bytes", dev.name);
    assert_eq!(fs::read_to_string(&max).unwrap().trim(), "0");
    // The witness: the kernel refuses a discard itself.
    let refused = std::process::Command::new("blkdiscard")
        .args(["-o", "0", "-l", "1048576", dev.path_str()])
        .output()
        .unwrap();
    assert!(!refused.status.success(), "blkdiscard is refused");
    let before = sha(&dev);
    let counters = writes_and_discards(&dev.name);
    let journals = journal_dir();
    let journal = journals.path().join("none.journal");
    let out = trimcheck(dev.path_str(), &dev.name, &journal, true);
    let report = json(&out);
    assert_eq!(out.status.code(), Some(0), "{report:#}");
    assert_eq!(report["verdict"], "no-discard");
    assert_eq!(report["discard_max_bytes"], 0);
    assert_eq!(report["range_bytes"], serde_json::Value::Null);
    assert_eq!(report["put_back"], serde_json::Value::Null);
    assert!(
        report["sentence"]
            .as_str()
            .unwrap()
            .starts_with("does not discard"),
        "{report:#}"
    );
    assert!(!journal.exists(), "no journal made");
    assert_eq!(writes_and_discards(&dev.name), counters, "nothing sent");
    assert_eq!(sha(&dev), before);

    // The verdict goes into the history, which `disktriage history` lists.
    let history = journals.path().join("history");
    let h = history.to_str().unwrap();
    let args = ["trimcheck", dev.path_str(), "--confirm", &dev.name];
    let out = common::disktriage(&[&args[..], &["--history-dir", h]].concat());
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let out = common::disktriage(&["history", "--history-dir", h, dev.path_str()]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("verdict no-discard: does not discard: the kernel sends it no discards"),
        "{text}"
    );
    assert!(
        !history
            .join(format!("trimcheck-{}.journal", dev.name))
            .exists()
    );
    assert_eq!(sha(&dev), before);
    drop(dev);
}

#[test]
fn refusals_write_nothing() {
    if !common::root_or_skip("trimcheck::refusals") {
        return;
    }
    let dir = common::scratch();
    // The target's data lives on a file system of another loop device: a journal there
    // would go down with the target's medium.
    let medium = LoopDev::new(dir.path(), 256 << 20, 512);
    let mounted = Mounted::ext4(medium.path_str(), &dir.path().join("m"));
    let image = common::sparse_image(&mounted.dir, "target.img", 64 << 20);
    let dev = LoopDev::attach(&image, &[]);
    fill_random(&dev, 64);
    let before = sha(&dev);
    let at_start = writes_and_discards(&dev.name);
    let journals = journal_dir();
    let journal = journals.path().join("j");
    let j = journal.to_str().unwrap();

    // No typed name: a usage error, before anything is opened.
    let out = common::disktriage(&["trimcheck", dev.path_str(), "--journal", j]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("pass --confirm NAME"), "{err}");

    // Another name typed.
    let out = trimcheck(dev.path_str(), "sdz", &journal, false);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--confirm sdz does not name the target"),
        "{err}"
    );

    // The journal on the medium the target lives on.
    let beside = mounted.dir.join("j");
    let out = trimcheck(dev.path_str(), &dev.name, &beside, false);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("shares a disk with"), "{err}");
    assert!(!beside.exists(), "no journal made");

    // The medium itself is mounted.
    let out = trimcheck(medium.path_str(), &medium.name, &journal, false);
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
    let upper_start = writes_and_discards(&upper.name);
    let out = trimcheck(upper.path_str(), &upper.name, &journal, false);
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
    assert_eq!(writes_and_discards(&upper.name), upper_start);
    assert!(!journal.exists(), "no journal made by a refusal");

    assert_eq!(
        writes_and_discards(&dev.name),
        at_start,
        "nothing was written to or discarded on {}",
        dev.name
    );
    assert_eq!(sha(&dev), before);
    drop(upper);
    drop(dev);
}

/// A loop device (`upper`) over another whose discards are turned off through sysfs: the
/// upper one still says it discards (its limit comes from the lower one's write zeroes); its
/// first discard returns success and changes nothing, and the loop driver then turns its
/// discards off. Both are removed on drop, as their lowered limits would outlive them.
struct Stack {
    upper: Option<LoopDev>,
    lower: Option<LoopDev>,
    lower_name: String,
}

impl Stack {
    fn new(dir: &Path, image: &str) -> Stack {
        let image = common::sparse_image(dir, image, 64 << 20);
        let lower = LoopDev::attach(&image, &["--sector-size", "512"]);
        let lower_name = lower.name.clone();
        fs::write(
            format!("/sys/block/{lower_name}/queue/discard_max_bytes"),
            "0",
        )
        .expect("lower discard_max_bytes to 0");
        let upper = LoopDev::attach(&lower.path, &[]);
        fill_random(&upper, 64);
        Stack {
            upper: Some(upper),
            lower: Some(lower),
            lower_name,
        }
    }

    fn upper(&self) -> &LoopDev {
        self.upper.as_ref().unwrap()
    }

    fn discard_max(&self) -> String {
        let q = format!("/sys/block/{}/queue/discard_max_bytes", self.upper().name);
        fs::read_to_string(q).unwrap().trim().to_string()
    }
}

impl Drop for Stack {
    fn drop(&mut self) {
        // The upper device's discards are off once it took one, and that outlives a detach
        // too: both go, and no parallel `losetup --find` takes either between its detach and
        // its removal (a test got the upper one and read "does not discard").
        let upper = self.upper.as_ref().map(|u| u.name.clone());
        let _names = common::loop_names();
        self.upper.take();
        self.lower.take();
        if let Some(name) = upper {
            remove_loop(&name);
        }
        remove_loop(&self.lower_name);
    }
}

#[test]
fn a_loop_device_over_one_that_takes_no_discards_keeps_the_data() {
    if !common::root_or_skip("trimcheck::keeps_the_data") {
        return;
    }
    let dir = common::scratch();
    // The witness, on a stack of its own: blkdiscard succeeds, the data stays, and the
    // upper device takes no discards after it.
    let witnessed = Stack::new(dir.path(), "witness.img");
    assert_ne!(
        witnessed.discard_max(),
        "0",
        "the upper device says it discards"
    );
    assert_eq!(witness(witnessed.upper().path_str(), dir.path()), "old");
    assert_eq!(
        witnessed.discard_max(),
        "0",
        "and says so no more after one"
    );
    drop(witnessed);

    let stack = Stack::new(dir.path(), "checked.img");
    let upper = stack.upper();
    let journals = journal_dir();
    let journal = journals.path().join("kept.journal");
    let before = sha(upper);
    let out = trimcheck(upper.path_str(), &upper.name, &journal, true);
    let report = json(&out);
    assert_eq!(out.status.code(), Some(0), "{report:#}");
    assert_eq!(report["verdict"], "kept");
    assert_eq!(report["read_back"], "unchanged");
    assert_eq!(
        report["sentence"],
        "discard accepted, data still there (nothing promised otherwise: no drive to ask: a \
         loop device)"
    );
    assert_eq!(report["put_back"]["mismatched"], serde_json::json!([]));
    assert!(!journal.exists());
    assert_eq!(sha(upper), before, "every byte is back");
    // The next check finds what the witness found after its discard.
    let out = trimcheck(upper.path_str(), &upper.name, &journal, true);
    assert_eq!(json(&out)["verdict"], "no-discard");
    assert_eq!(sha(upper), before);
}

#[test]
fn a_check_killed_mid_way_leaves_a_journal_that_restore_completes() {
    if !common::root_or_skip("trimcheck::killed_mid_way") {
        return;
    }
    let dir = common::scratch();
    let dev = LoopDev::new(dir.path(), 64 << 20, 512);
    fill_random(&dev, 64);
    let before = sha(&dev);
    let journals = journal_dir();
    let journal = journals.path().join("killed.journal");
    // The check takes well under a second: the kill lands after the first saved MiB, when
    // the journal holds it, or later; a try whose kill came after the end is tried again.
    for attempt in 1..=20 {
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_disktriage"))
            .env(common::HISTORY_ENV, common::history_dir())
            .args(["trimcheck", dev.path_str(), "--confirm", &dev.name])
            .args(["--journal", journal.to_str().unwrap()])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let started = std::time::Instant::now();
        while fs::metadata(&journal).map_or(0, |m| m.len()) < 1 << 20
            && started.elapsed() < std::time::Duration::from_secs(10)
        {
            std::hint::spin_loop();
        }
        child.kill().unwrap();
        child.wait().unwrap();
        if !journal.exists() {
            assert_eq!(
                sha(&dev),
                before,
                "attempt {attempt}: a check that ended put all back"
            );
            continue;
        }
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
        return;
    }
    panic!("no kill of 20 landed while the check ran");
}
