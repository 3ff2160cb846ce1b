//! `--preserve`, the rewrite of existing data, on loop devices this test creates (root only):
//! a device filled with random bytes must hold exactly those bytes (sha256 of the whole
//! device) after every write test run with `--preserve`, after the run is killed (SIGKILL) or
//! interrupted (SIGINT) at any moment, and after its device fails under it.

#![allow(clippy::unwrap_used)] // tests may unwrap: a panic is the failure report

use crate::common;

use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{LoopDev, disktriage, root_or_skip, scratch, sh, skip};
use serde_json::Value;

/// A loop device of `size` bytes over an image filled with random bytes.
fn random_loop(dir: &Path, size: usize, sector: u32) -> LoopDev {
    let image = dir.join(format!("random-{sector}.img"));
    let mut data = vec![0u8; size];
    std::fs::File::open("/dev/urandom")
        .unwrap()
        .read_exact(&mut data)
        .unwrap();
    std::fs::write(&image, &data).unwrap();
    LoopDev::attach(&image, &["--sector-size", &sector.to_string()])
}

/// sha256 of the whole device (or file), as sha256sum prints it.
fn sha256(path: &str) -> String {
    sh("sha256sum", &[path])
        .split_whitespace()
        .next()
        .unwrap()
        .to_string()
}

/// Runs `disktriage run DEV --preserve --destroy-data NAME ARGS --json`; the parsed report.
fn preserve_run(l: &LoopDev, args: &[&str]) -> Value {
    let mut all = vec![
        "run",
        l.path_str(),
        "--preserve",
        "--destroy-data",
        &l.name,
        "--json",
    ];
    all.extend_from_slice(args);
    let out = disktriage(&all);
    assert!(
        out.status.success(),
        "disktriage {all:?} failed: {}\n{}",
        String::from_utf8_lossy(&out.stderr),
        String::from_utf8_lossy(&out.stdout)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn u(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a number: {v}"))
}

/// What every report of a rewrite must say, and what its figures must add up to.
fn assert_rewrite_report(doc: &Value, case: &str) {
    assert_eq!(doc["plan"]["data"]["kind"], "rewrite", "{case}");
    let notes = doc["plan"]["notes"].to_string();
    assert!(
        notes.contains("rewrite of existing data"),
        "{case}: {notes}"
    );
    let mut written = 0;
    for p in doc["outcome"]["phases"].as_array().unwrap() {
        assert!(p["failure"].is_null(), "{case}: {}", p["failure"]);
        let writes = u(&p["write"]["ops"]);
        written += writes;
        if writes == 0 {
            continue;
        }
        assert_eq!(p["job"]["rewrite"], true, "{case}: {}", p["label"]);
        if doc["plan"]["direct"] == false {
            // BUFFERED: the page cache answers, the device's counters cannot agree.
            continue;
        }
        // Every rewritten block was read first: the kernel saw those reads, and the witness
        // counts them (and still agrees with the kernel).
        let w = &p["witness"];
        let back = u(&w["read_back_bytes"]);
        assert!(
            back >= u(&p["write"]["bytes"]),
            "{case}: {back} bytes read back for {} written",
            p["write"]["bytes"]
        );
        assert!(
            u(&w["read_bytes"]) >= back + u(&p["read"]["bytes"]),
            "{case}: kernel reads {w}"
        );
        assert_eq!(w["agrees"], true, "{case}: {w}");
    }
    assert!(written > 0, "{case}: nothing was written");
    let fio = doc["fio_commands"].to_string();
    assert!(fio.contains("--readonly"), "{case}: {fio}");
    assert!(fio.contains("NOT THE SAME TEST"), "{case}: {fio}");
    for writing in ["--rw=write", "--rw=randwrite", "--rw=rw ", "--rw=randrw"] {
        assert!(!fio.contains(writing), "{case}: {fio}");
    }
}

#[test]
fn root_preserve_every_write_test_keeps_the_data() {
    if !root_or_skip("root_preserve_every_write_test_keeps_the_data") {
        return;
    }
    let dir = scratch();
    let l = random_loop(dir.path(), 32 << 20, 512);
    let before = sha256(l.path_str());
    let short = ["--time", "300ms", "--warmup", "100ms"];
    let cases: Vec<(&str, Vec<&str>)> = vec![
        ("seq-write", vec![]),
        ("seq-write-q8", vec![]),
        ("concurrent-write", vec!["--jobs", "3"]),
        ("sync-latency", vec!["--count", "200"]),
        ("rand-write", vec!["--engine", "uring", "--qd", "16"]),
        (
            "rand-write",
            vec!["--engine", "sync", "--qd", "4", "--jobs", "2"],
        ),
        ("rand-mixed", vec!["--qd", "8"]),
        ("size-sweep", vec!["--write", "--max-bs", "64k"]),
        ("qd-sweep", vec!["--read-pct", "50", "--qds", "1,8"]),
        ("cdm", vec!["--size", "16M"]),
        ("cdm-nvme", vec!["--size", "16M"]),
        ("rand-write", vec!["--buffered", "--qd", "4"]),
    ];
    for (test, extra) in &cases {
        let mut args = vec!["--test", test];
        if !extra.contains(&"--count") {
            args.extend_from_slice(&short);
        }
        args.extend_from_slice(extra);
        let case = format!("{test} {extra:?}");
        let doc = preserve_run(&l, &args);
        assert_eq!(
            sha256(l.path_str()),
            before,
            "{case}: the device no longer holds its data"
        );
        assert_rewrite_report(&doc, &case);
    }
}

#[test]
fn root_preserve_overlapping_requests_keep_the_data() {
    if !root_or_skip("root_preserve_overlapping_requests_keep_the_data") {
        return;
    }
    // Eight blocks, 4 workers x QD 32 on each engine: nearly every request overlaps others
    // in flight to the same block (read by one, written by another, in any order).
    let dir = scratch();
    let l = random_loop(dir.path(), 8 << 20, 512);
    let before = sha256(l.path_str());
    for engine in ["uring", "sync"] {
        for bs in ["4k", "8k"] {
            let doc = preserve_run(
                &l,
                &[
                    "--test",
                    "rand-write",
                    "--engine",
                    engine,
                    "--qd",
                    "32",
                    "--jobs",
                    "4",
                    "--bs",
                    bs,
                    "--size",
                    "32k",
                    "--time",
                    "1",
                    "--warmup",
                    "0",
                ],
            );
            let case = format!("{engine} {bs}");
            assert_eq!(sha256(l.path_str()), before, "{case}");
            assert_rewrite_report(&doc, &case);
            assert!(
                u(&doc["outcome"]["phases"][0]["write"]["ops"]) > 1000,
                "{case}: enough overlap to matter"
            );
        }
    }
    // 4Kn: sync-latency grows to 4 KiB requests; O_DIRECT alignment holds for the reads too.
    let l4 = random_loop(dir.path(), 8 << 20, 4096);
    let before = sha256(l4.path_str());
    for test in ["sync-latency", "rand-write"] {
        let doc = preserve_run(&l4, &["--test", test, "--time", "300ms", "--count", "300"]);
        assert_rewrite_report(&doc, test);
        assert_eq!(sha256(l4.path_str()), before, "4Kn {test}");
    }
}

/// Starts a long preserving run and sends `sig` after `after`; returns its output.
fn signalled_run(
    l: &LoopDev,
    args: &[&str],
    sig: nix::sys::signal::Signal,
    after: Duration,
) -> std::process::Output {
    let child = Command::new(env!("CARGO_BIN_EXE_disktriage"))
        .env(common::HISTORY_ENV, common::history_dir())
        .args(["run", l.path_str(), "--preserve", "--destroy-data", &l.name])
        .args(["--time", "30", "--json"])
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(after);
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(child.id() as i32), sig).unwrap();
    child.wait_with_output().unwrap()
}

#[test]
fn root_preserve_sigkill_at_any_moment_keeps_the_data() {
    if !root_or_skip("root_preserve_sigkill_at_any_moment_keeps_the_data") {
        return;
    }
    use nix::sys::signal::Signal;
    let dir = scratch();
    let l = random_loop(dir.path(), 16 << 20, 512);
    let before = sha256(l.path_str());
    // Killed during the engine probe, the warm-up and the measurement, on both engines and
    // with overlapping requests.
    let runs: [&[&str]; 4] = [
        &["--test", "rand-write", "--qd", "16", "--jobs", "2"],
        &[
            "--test",
            "rand-write",
            "--engine",
            "uring",
            "--qd",
            "32",
            "--size",
            "64k",
        ],
        &["--test", "seq-write-q8", "--engine", "sync"],
        &[
            "--test",
            "rand-mixed",
            "--engine",
            "uring",
            "--qd",
            "8",
            "--jobs",
            "2",
        ],
    ];
    for args in runs {
        for ms in [150, 700, 1900] {
            let out = signalled_run(&l, args, Signal::SIGKILL, Duration::from_millis(ms));
            assert_eq!(
                out.status.code(),
                None,
                "{args:?} at {ms} ms: killed by the signal, not ended on its own: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            assert_eq!(sha256(l.path_str()), before, "{args:?} killed at {ms} ms");
        }
    }
}

#[test]
fn root_preserve_sigint_stops_cleanly_and_keeps_the_data() {
    if !root_or_skip("root_preserve_sigint_stops_cleanly_and_keeps_the_data") {
        return;
    }
    use nix::sys::signal::Signal;
    let dir = scratch();
    let l = random_loop(dir.path(), 16 << 20, 512);
    let before = sha256(l.path_str());
    for engine in ["uring", "sync"] {
        let out = signalled_run(
            &l,
            &["--test", "rand-write", "--engine", engine, "--qd", "16"],
            Signal::SIGINT,
            Duration::from_millis(1800),
        );
        assert_eq!(
            out.status.code(),
            Some(130),
            "{engine}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
        let p = &doc["outcome"]["phases"][0];
        assert_eq!(p["stopped"], true, "{engine}");
        assert!(u(&p["write"]["ops"]) > 0, "{engine}");
        assert_eq!(doc["plan"]["data"]["kind"], "rewrite");
        assert_eq!(sha256(l.path_str()), before, "{engine}");
    }
}

#[test]
fn root_preserve_failing_device_keeps_the_data() {
    if !root_or_skip("root_preserve_failing_device_keeps_the_data") {
        return;
    }
    if Command::new("bindfs").arg("--version").output().is_err() {
        skip(
            "root_preserve_failing_device_keeps_the_data",
            "bindfs is not installed",
        );
        return;
    }
    // A loop device over a random image on a FUSE file system: killing the FUSE daemon mid-run
    // makes every further read and write fail (EIO/ENOTCONN), as a dying disk would. The
    // image itself must still hold its bytes afterwards.
    let dir = scratch();
    let src = dir.path().join("src");
    let fuse = dir.path().join("fuse");
    std::fs::create_dir_all(&src).unwrap();
    std::fs::create_dir_all(&fuse).unwrap();
    let mut data = vec![0u8; 32 << 20];
    std::fs::File::open("/dev/urandom")
        .unwrap()
        .read_exact(&mut data)
        .unwrap();
    let image = src.join("disk.img");
    std::fs::write(&image, &data).unwrap();
    drop(data);
    let before = sha256(image.to_str().unwrap());
    for engine in ["uring", "sync"] {
        let mut daemon = Command::new("bindfs")
            .args(["-f", src.to_str().unwrap(), fuse.to_str().unwrap()])
            .spawn()
            .unwrap();
        struct Unmount(std::path::PathBuf);
        impl Drop for Unmount {
            fn drop(&mut self) {
                let _ = Command::new("umount").arg("-l").arg(&self.0).status();
            }
        }
        let unmount = Unmount(fuse.clone());
        let fused = fuse.join("disk.img");
        let start = Instant::now();
        while !fused.exists() && start.elapsed() < Duration::from_secs(5) {
            std::thread::sleep(Duration::from_millis(20));
        }
        let l = LoopDev::attach(&fused, &[]);
        let child = Command::new(env!("CARGO_BIN_EXE_disktriage"))
            .env(common::HISTORY_ENV, common::history_dir())
            .args(["run", l.path_str(), "--test", "rand-write", "--preserve"])
            .args(["--destroy-data", &l.name, "--engine", engine, "--qd", "8"])
            .args(["--time", "20", "--warmup", "0", "--json"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(700));
        daemon.kill().unwrap();
        let _ = daemon.wait();
        let out = child.wait_with_output().unwrap();
        assert!(!out.status.success(), "{engine}: the run failed");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("(EIO)") || err.contains("(ENOTCONN)"),
            "{engine}: {err}"
        );
        let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert!(
            u(&doc["outcome"]["phases"][0]["write"]["ops"]) > 0,
            "{engine}"
        );
        drop(l);
        drop(unmount);
        assert_eq!(
            sha256(image.to_str().unwrap()),
            before,
            "{engine}: the image lost its data"
        );
    }
}

#[test]
fn root_preserve_still_needs_the_name_and_a_free_device() {
    if !root_or_skip("root_preserve_still_needs_the_name_and_a_free_device") {
        return;
    }
    let dir = scratch();
    let l = random_loop(dir.path(), 8 << 20, 512);
    let before = sha256(l.path_str());
    // No confirmation: refused before any I/O, and the message says what a rewrite risks.
    let out = disktriage(&["run", l.path_str(), "--test", "rand-write", "--preserve"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("rewrites the data on"), "{err}");
    assert!(err.contains(&format!("--destroy-data {}", l.name)), "{err}");
    assert_eq!(sha256(l.path_str()), before);
    // In use (a file system mounted from a loop device stacked on it): refused even when
    // confirmed, exactly as a plain write test.
    let over = LoopDev::attach(&l.path, &[]);
    let _m = common::Mounted::ext4(over.path_str(), &dir.path().join("mnt"));
    let out = disktriage(&[
        "run",
        l.path_str(),
        "--test",
        "rand-write",
        "--preserve",
        "--destroy-data",
        &l.name,
    ]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("refusing to write"), "{err}");
}

#[test]
fn preserve_never_writes_a_block_it_could_not_read_whole() {
    // A file target cut in half mid-run: reads past the new end return nothing. A rewrite
    // that wrote its buffer anyway would write another block's bytes there (the buffer's
    // last contents); it must stop with the short read instead. A block whose read completed
    // before the cut may still be written back after it (the truncation is someone else's
    // change, made between our read and our write): that block then holds its own bytes
    // again, and the file's hole before it reads as zeros. (A file needs no root.)
    let dir = scratch();
    let file = dir.path().join("data.img");
    let mut data = vec![0u8; 16 << 20];
    std::fs::File::open("/dev/urandom")
        .unwrap()
        .read_exact(&mut data)
        .unwrap();
    let half = 8 << 20;
    for engine in ["uring", "sync"] {
        std::fs::write(&file, &data).unwrap();
        let child = Command::new(env!("CARGO_BIN_EXE_disktriage"))
            .env(common::HISTORY_ENV, common::history_dir())
            .args(["run", file.to_str().unwrap(), "--test", "rand-write"])
            .args([
                "--preserve",
                "--destroy-data",
                "data.img",
                "--engine",
                engine,
            ])
            .args(["--qd", "8", "--time", "20", "--warmup", "0", "--json"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(800));
        std::fs::OpenOptions::new()
            .write(true)
            .open(&file)
            .unwrap()
            .set_len(half)
            .unwrap();
        let out = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        let now = std::fs::read(&file).unwrap();
        assert!(now.len() >= half as usize, "{engine}");
        assert!(
            now[..half as usize] == data[..half as usize],
            "{engine}: the data changed"
        );
        for (i, block) in now.chunks(4096).enumerate().skip(half as usize / 4096) {
            let own = &data[i * 4096..i * 4096 + block.len()];
            assert!(
                block == own || block.iter().all(|&b| b == 0),
                "{engine}: block {i} holds bytes that were never its own"
            );
        }
        assert_eq!(out.status.code(), Some(1), "{engine}: {err}");
        assert!(
            err.contains("read of 4096 bytes at offset")
                && err.contains("(to rewrite them; they were not written) failed")
                && err.contains("returned no data"),
            "{engine}: {err}"
        );
    }
}

/// A number of the JSON report, as f64.
fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

/// Asserts that `a` is within `pct` percent of `b`.
fn close(a: f64, b: f64, pct: f64, what: &str) {
    assert!(
        b > 0.0 && ((a - b) / b).abs() * 100.0 <= pct,
        "{what}: {a} vs {b} (more than {pct} % apart)"
    );
}

#[test]
fn root_preserve_rates_are_over_the_time_the_writes_took() {
    if !root_or_skip("root_preserve_rates_are_over_the_time_the_writes_took") {
        return;
    }
    // Only a rewrite's writes are timed, and its MB/s and IOPS are the rewritten bytes over
    // the time those writes took, not over the whole phase with its reads. That time is known
    // from the JSON alone, on either engine and at any depth: each lane (an outstanding I/O: a
    // pread/pwrite thread, or a slot of an io_uring queue) is busy for the sum of its
    // latencies, and the time base is their mean over the lanes, workers x QD of them.
    let dir = scratch();
    let l = random_loop(dir.path(), 32 << 20, 512);
    let before = sha256(l.path_str());
    let short = ["--time", "600ms", "--warmup", "100ms"];
    let cases: [(&str, &[&str]); 7] = [
        ("seq-write", &["--engine", "sync", "--qd", "1"]),
        ("rand-write", &["--engine", "sync", "--qd", "4"]),
        ("rand-write", &["--engine", "uring", "--qd", "1"]),
        ("rand-write", &["--engine", "uring", "--qd", "16"]),
        (
            "rand-write",
            &["--engine", "uring", "--qd", "4", "--jobs", "2"],
        ),
        ("rand-mixed", &["--engine", "sync", "--qd", "2"]),
        ("sync-latency", &["--count", "300"]),
    ];
    for (test, extra) in cases {
        let mut args = vec!["--test", test];
        if !extra.contains(&"--count") {
            args.extend_from_slice(&short);
        }
        args.extend_from_slice(extra);
        let case = format!("{test} {extra:?}");
        let doc = preserve_run(&l, &args);
        assert_eq!(sha256(l.path_str()), before, "{case}: the data changed");
        assert_rewrite_report(&doc, &case);
        let p = &doc["outcome"]["phases"][0];
        let w = &p["write"];
        let timed = |d: &Value| {
            if u(&d["ops"]) == 0 {
                return 0.0;
            }
            f(&d["latency"]["mean_ns"]) * f(&d["latency"]["count"]) / 1e9
        };
        let lanes = f(&p["job"]["workers"]) * f(&p["job"]["qd"]);
        let write_s = (timed(w) + timed(&p["read"])) / lanes;
        let bytes = f(&w["bytes"]);
        close(
            f(&w["bytes_per_sec"]),
            bytes / write_s,
            1.0,
            &format!("{case}: write bytes/s vs bytes / write time"),
        );
        close(
            f(&w["iops"]),
            f(&w["ops"]) / write_s,
            1.0,
            &format!("{case}: write IOPS vs ops / write time"),
        );
        // The reads took time too: the phase lasted longer than its writes.
        let seconds = f(&p["seconds"]);
        assert!(
            write_s < seconds,
            "{case}: {write_s} s of writes in {seconds} s"
        );
        // The JSON names the time base and gives its seconds.
        let mixed = test == "rand-mixed";
        assert_eq!(
            p["time_base"],
            if mixed { "io-busy" } else { "write-busy" },
            "{case}"
        );
        close(
            f(&p["rate_seconds"]),
            write_s,
            1.0,
            &format!("{case}: rate_seconds"),
        );
        // Each interval of the series is rated by the same rule: their busy times add up to
        // the phase's (every thread writes in every interval of a run this busy).
        let points = p["series"]["points"].as_array().unwrap();
        let busy: f64 = points.iter().map(|pt| f(&pt["busy_s"])).sum();
        close(busy, write_s, 5.0, &format!("{case}: the series' busy_s"));
    }
    // The text report says what the rates are over.
    let out = disktriage(&[
        "run",
        l.path_str(),
        "--preserve",
        "--destroy-data",
        &l.name,
        "--test",
        "sync-latency",
        "--count",
        "200",
    ]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(
        text.contains("rewrite of existing data: only the writes are timed; rates are over the "),
        "{text}"
    );
    assert_eq!(sha256(l.path_str()), before, "text run: the data changed");
}

/// A process (`sh` exec'd into `sleep`) that holds `path` open on descriptor 3, for writing
/// (`<>`) or for reading only (`<`); killed on drop.
struct Holder(std::process::Child);

impl Holder {
    fn open(path: &str, redirect: &str) -> Holder {
        let child = Command::new("sh")
            .args([
                "-c",
                &format!("exec 3{redirect}\"$0\"; exec sleep 60"),
                path,
            ])
            .spawn()
            .unwrap();
        let pid = child.id();
        // Wait until the exec is done and the descriptor is there.
        let fd = format!("/proc/{pid}/fd/3");
        common::poll(100, || {
            let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).ok()?;
            (comm.trim() == "sleep" && std::fs::read_link(&fd).is_ok()).then_some(())
        })
        .expect("the holder never opened its descriptor");
        Holder(child)
    }

    fn pid(&self) -> u32 {
        self.0.id()
    }
}

impl Drop for Holder {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A rewrite puts back the bytes it read: another program writing the same device or file
/// meanwhile gets its writes undone. A target another process holds open for writing is
/// refused before anything is read or written, naming the process; one held open for reading
/// only is not.
#[test]
fn root_preserve_refuses_a_target_another_process_has_open_for_writing() {
    if !root_or_skip("root_preserve_refuses_a_target_another_process_has_open_for_writing") {
        return;
    }
    let dir = scratch();
    let l = random_loop(dir.path(), 8 << 20, 512);
    let file = dir.path().join("data.img");
    let mut data = vec![0u8; 8 << 20];
    std::fs::File::open("/dev/urandom")
        .unwrap()
        .read_exact(&mut data)
        .unwrap();
    std::fs::write(&file, &data).unwrap();
    // A hard link: the same file under another name is still the same file.
    let other_name = dir.path().join("other-name.img");
    std::fs::hard_link(&file, &other_name).unwrap();
    let file_str = file.to_str().unwrap();
    let cases = [
        (l.path_str(), l.path_str(), l.name.as_str()),
        (file_str, file_str, "data.img"),
        (file_str, other_name.to_str().unwrap(), "data.img"),
    ];
    for (target, held, name) in cases {
        let before = sha256(target);
        let args = [
            "run",
            target,
            "--test",
            "rand-write",
            "--preserve",
            "--destroy-data",
            name,
            "--time",
            "300ms",
            "--warmup",
            "0",
        ];
        let writer = Holder::open(held, "<>");
        let out = disktriage(&args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            !out.status.success(),
            "{target} held via {held}: ran: {err}"
        );
        assert!(
            err.contains(&format!("pid {} (sleep)", writer.pid())),
            "{target}: {err}"
        );
        assert!(err.contains("--preserve"), "{target}: {err}");
        assert_eq!(sha256(target), before, "{target}: touched");
        drop(writer);
        // Open for reading only: a rewrite cannot undo what it never writes.
        let reader = Holder::open(held, "<");
        let out = disktriage(&args);
        assert!(
            out.status.success(),
            "{target}: a reader refused: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        drop(reader);
        assert_eq!(sha256(target), before, "{target}: the data changed");
    }
}
