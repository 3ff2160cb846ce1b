//! The I/O engine on real devices this test creates (root only): byte counts against the
//! request and the kernel's counters, the data a write test leaves, offsets of each pattern,
//! real queue depth, the write guard, failures mid-run, 4Kn devices and file targets.

#![allow(clippy::unwrap_used)] // tests may unwrap: a panic is the failure report

use crate::common;
use common::{HISTORY_ENV, history_dir};

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{LoopDev, Mounted, Zram, disktriage, root_or_skip, scratch, skip};
use disktriage::bench::DEFAULT_SEED;
use disktriage::bench::DataKind;
use disktriage::bench::DataPattern;
use serde_json::Value;

pub(crate) fn run_json(args: &[&str]) -> Value {
    let mut all = vec!["run"];
    all.extend_from_slice(args);
    all.push("--json");
    let out = disktriage(&all);
    assert!(
        out.status.success(),
        "disktriage {all:?} failed: {}\n{}",
        String::from_utf8_lossy(&out.stderr),
        String::from_utf8_lossy(&out.stdout)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

pub(crate) fn phase(doc: &Value, i: usize) -> &Value {
    &doc["outcome"]["phases"][i]
}

pub(crate) fn u(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a number: {v}"))
}

/// Sum of a per-interval field over a phase's series.
fn series_sum(p: &Value, dir: &str, field: &str) -> u64 {
    p["series"]["points"]
        .as_array()
        .unwrap()
        .iter()
        .map(|pt| u(&pt[dir][field]))
        .sum()
}

fn device_bytes(path: &str, offset: u64, len: usize) -> Vec<u8> {
    use std::io::{Read, Seek, SeekFrom};
    let mut f = std::fs::File::open(path).unwrap();
    f.seek(SeekFrom::Start(offset)).unwrap();
    let mut buf = vec![0; len];
    f.read_exact(&mut buf).unwrap();
    buf
}

#[test]
fn root_read_bytes_match_request_series_and_kernel() {
    if !root_or_skip("root_read_bytes_match_request_series_and_kernel") {
        return;
    }
    let dir = scratch();
    let l = LoopDev::new(dir.path(), 128 << 20, 512);
    let doc = run_json(&[l.path_str(), "--test", "seq-read", "--io-size", "64M"]);
    let p = phase(&doc, 0);
    assert_eq!(u(&p["read"]["bytes"]), 64 << 20, "64 MiB requested");
    assert_eq!(u(&p["read"]["ops"]), 64);
    assert_eq!(u(&p["write"]["bytes"]), 0);
    assert_eq!(
        series_sum(p, "read", "bytes"),
        64 << 20,
        "the series adds up to the total"
    );
    assert_eq!(series_sum(p, "read", "ops"), 64);
    let w = &p["witness"];
    assert_eq!(
        u(&w["read_bytes"]),
        64 << 20,
        "the kernel saw the same bytes"
    );
    assert_eq!(w["agrees"], true);
    assert_eq!(doc["plan"]["direct"], true);
    // Rates are bytes over measured time, in both units.
    let secs = p["seconds"].as_f64().unwrap();
    let rate = p["read"]["bytes_per_sec"].as_f64().unwrap();
    assert!((rate * secs - (64u64 << 20) as f64).abs() < 1.0);

    // Time-bounded random reads: series sums equal totals, kernel agrees, IOPS x bs = rate.
    let doc = run_json(&[
        l.path_str(),
        "--test",
        "rand-read",
        "--qd",
        "8",
        "--time",
        "1",
        "--warmup",
        "0.3",
    ]);
    let p = phase(&doc, 0);
    let bytes = u(&p["read"]["bytes"]);
    assert!(bytes > 0);
    assert_eq!(series_sum(p, "read", "bytes"), bytes);
    assert_eq!(series_sum(p, "read", "ops"), u(&p["read"]["ops"]));
    // A time-bounded run has no empty or partial last interval: 1 s at 250 ms is four
    // points, each with I/O in it, the last ending when the measurement ended.
    let points = p["series"]["points"].as_array().unwrap();
    let spans: Vec<(f64, f64, u64)> = points
        .iter()
        .map(|pt| {
            (
                pt["start_s"].as_f64().unwrap(),
                pt["end_s"].as_f64().unwrap(),
                u(&pt["read"]["ops"]),
            )
        })
        .collect();
    assert_eq!(spans.len(), 4, "{spans:?}");
    assert!(
        spans.iter().all(|s| s.2 > 0),
        "an empty interval: {spans:?}"
    );
    let last = spans.last().unwrap();
    let secs = p["seconds"].as_f64().unwrap();
    assert!(
        (last.1 - secs).abs() < 0.05 && last.1 - last.0 >= 0.25,
        "the last interval is the real end of a whole one: {last:?}, measured {secs} s"
    );
    assert_eq!(
        u(&p["witness"]["read_bytes"]),
        bytes,
        "warm-up I/O is not counted"
    );
    assert_eq!(p["witness"]["agrees"], true);
    let iops = p["read"]["iops"].as_f64().unwrap();
    let rate = p["read"]["bytes_per_sec"].as_f64().unwrap();
    assert!(
        (iops * 4096.0 - rate).abs() / rate < 1e-9,
        "IOPS x request size = throughput"
    );
    let lat = &p["read"]["latency"];
    assert!(u(&lat["min_ns"]) <= u(&lat["p50_ns"]));
    assert!(u(&lat["p50_ns"]) <= u(&lat["p99_ns"]));
    assert!(u(&lat["p99_ns"]) <= u(&lat["p999_ns"]));
    assert!(u(&lat["p999_ns"]) <= u(&lat["max_ns"]));
}

#[test]
fn root_write_test_writes_the_pattern_it_claims_where_it_claims() {
    if !root_or_skip("root_write_test_writes_the_pattern_it_claims_where_it_claims") {
        return;
    }
    let dir = scratch();
    let l = LoopDev::new(dir.path(), 64 << 20, 512);
    let pattern =
        DataPattern::new(DataKind::Random { seed: DEFAULT_SEED }, 1 << 20, false).unwrap();
    let name = l.name.clone();

    // Forward: exactly the first 8 blocks of 64 KiB.
    run_json(&[
        l.path_str(),
        "--test",
        "seq-write",
        "--bs",
        "64k",
        "--count",
        "8",
        "--destroy-data",
        &name,
    ]);
    // Read back through the image file, not through disktriage.
    let image = l.image.to_str().unwrap();
    let data = device_bytes(image, 0, 1 << 20);
    assert_eq!(
        &data[..8 * 65536],
        pattern.expected(0, 8 * 65536),
        "forward blocks hold the pattern"
    );
    assert!(
        data[8 * 65536..].iter().all(|&b| b == 0),
        "nothing past the 8th block"
    );

    // A region that starts at --offset: its first blocks, with the data for those offsets.
    run_json(&[
        l.path_str(),
        "--test",
        "seq-write",
        "--bs",
        "64k",
        "--count",
        "4",
        "--destroy-data",
        &name,
        "--offset",
        "32M",
        "--size",
        "32M",
    ]);
    assert!(
        device_bytes(image, (32 << 20) - 65536, 65536)
            .iter()
            .all(|&b| b == 0)
    );
    let data = device_bytes(image, 32 << 20, 4 * 65536);
    assert_eq!(data, pattern.expected(32 << 20, 4 * 65536));

    // Random 4k writes inside a 1 MiB region at 48 MiB: every touched block holds the pattern
    // for its own offset, untouched ones stay zero, nothing outside the region changes.
    let doc = run_json(&[
        l.path_str(),
        "--test",
        "rand-write",
        "--count",
        "100",
        "--offset",
        "48M",
        "--size",
        "1M",
        "--destroy-data",
        &name,
    ]);
    assert_eq!(u(&phase(&doc, 0)["write"]["ops"]), 100);
    let region = device_bytes(image, 48 << 20, 1 << 20);
    let mut touched = 0;
    for (i, block) in region.chunks(4096).enumerate() {
        let off = (48u64 << 20) + (i as u64) * 4096;
        if block.iter().any(|&b| b != 0) {
            assert_eq!(block, pattern.expected(off, 4096), "block at {off}");
            touched += 1;
        }
    }
    // 100 uniform draws over 256 blocks hit about 256*(1-(255/256)^100) = 84 distinct blocks.
    assert!((60..=100).contains(&touched), "{touched} blocks touched");
    assert!(
        device_bytes(image, (48 << 20) - 4096, 4096)
            .iter()
            .all(|&b| b == 0)
    );
    assert!(device_bytes(image, 49 << 20, 4096).iter().all(|&b| b == 0));

    // --zeros writes zeros over the pattern.
    run_json(&[
        l.path_str(),
        "--test",
        "seq-write",
        "--bs",
        "64k",
        "--count",
        "2",
        "--zeros",
        "--destroy-data",
        &name,
    ]);
    let data = device_bytes(image, 0, 3 * 65536);
    assert!(data[..2 * 65536].iter().all(|&b| b == 0));
    assert_eq!(&data[2 * 65536..], pattern.expected(2 * 65536, 65536));
}

/// Compares `len` bytes of `path` from `offset` with the pattern, 1 MiB at a time.
fn assert_holds_pattern(path: &str, offset: u64, len: u64, what: &str) {
    let pattern =
        DataPattern::new(DataKind::Random { seed: DEFAULT_SEED }, 1 << 20, false).unwrap();
    let mut o = offset;
    while o < offset + len {
        let n = (1u64 << 20).min(offset + len - o) as usize;
        assert!(
            device_bytes(path, o, n) == pattern.expected(o, n),
            "{what}: the bytes at {o} are not the pattern for that offset"
        );
        o += n as u64;
    }
}

#[test]
fn root_requests_larger_than_the_pattern_period() {
    if !root_or_skip("root_requests_larger_than_the_pattern_period") {
        return;
    }
    let dir = scratch();
    let l = LoopDev::new(dir.path(), 160 << 20, 512);
    let name = l.name.clone();
    let image = l.image.to_str().unwrap();
    // 32 MiB writes (32 periods of 1 MiB each) from an offset that is not a period multiple,
    // so each request starts mid-period: io_uring, then the synchronous engine further on.
    let doc = run_json(&[
        l.path_str(),
        "--test",
        "seq-write",
        "--bs",
        "32M",
        "--count",
        "2",
        "--offset",
        "1536K",
        "--size",
        "64M",
        "--destroy-data",
        &name,
    ]);
    assert_eq!(u(&phase(&doc, 0)["write"]["bytes"]), 64 << 20);
    assert_holds_pattern(image, 1536 << 10, 64 << 20, "io_uring 32M writes");
    run_json(&[
        l.path_str(),
        "--test",
        "seq-write",
        "--bs",
        "32M",
        "--count",
        "2",
        "--offset",
        "67072K",
        "--size",
        "64M",
        "--engine",
        "sync",
        "--destroy-data",
        &name,
    ]);
    assert_holds_pattern(image, 67072 << 10, 64 << 20, "sync 32M writes");
    assert!(
        device_bytes(image, 132608 << 10, 1 << 20)
            .iter()
            .all(|&b| b == 0),
        "nothing past the region"
    );
    // Reads of 32 MiB at QD2.
    let doc = run_json(&[
        l.path_str(),
        "--test",
        "seq-read",
        "--bs",
        "32M",
        "--qd",
        "2",
        "--count",
        "4",
    ]);
    assert_eq!(u(&phase(&doc, 0)["read"]["bytes"]), 128 << 20);

    // A file target: created (laid out with the pattern), then written with 32 MiB requests.
    let file = dir.path().join("big.bin");
    let f = file.to_str().unwrap();
    let doc = run_json(&[
        f,
        "--test",
        "seq-write",
        "--size",
        "64M",
        "--bs",
        "32M",
        "--count",
        "2",
    ]);
    assert_eq!(u(&phase(&doc, 0)["write"]["bytes"]), 64 << 20);
    assert_holds_pattern(f, 0, 64 << 20, "file 32M writes");
}

#[test]
fn root_buffers_larger_than_memory_are_refused_before_allocating() {
    if !root_or_skip("root_buffers_larger_than_memory_are_refused_before_allocating") {
        return;
    }
    let dir = scratch();
    let l = LoopDev::new(dir.path(), 512 << 20, 512);
    let file = dir.path().join("sparse.bin");
    std::fs::File::create(&file)
        .unwrap()
        .set_len(512 << 20)
        .unwrap();
    // A missing file is created for the run and removed again when the run is refused.
    let missing = dir.path().join("new.bin");
    for target in [
        l.path_str(),
        file.to_str().unwrap(),
        missing.to_str().unwrap(),
    ] {
        // 256 MiB x QD 1024 is 256 GiB of buffers. The address space is capped at 8 GiB, so a
        // regression fails to allocate (and this test fails) instead of waking the OOM killer.
        let started = Instant::now();
        let out = Command::new("prlimit")
            .arg(format!("--as={}", 8u64 << 30))
            .arg(env!("CARGO_BIN_EXE_disktriage"))
            .env(HISTORY_ENV, history_dir())
            .args([
                "run", target, "--test", "seq-read", "--bs", "256M", "--qd", "1024", "--time", "1",
                "--size", "256M",
            ])
            .output()
            .unwrap();
        assert!(!out.status.success(), "{target}");
        assert_eq!(
            out.status.code(),
            Some(1),
            "{target}: an error, not a signal"
        );
        let err = String::from_utf8_lossy(&out.stderr);
        // 256 GiB of buffers and, since auto may choose 1024 I/O threads, their histograms.
        assert!(
            err.contains("this test needs 256.8 GiB of memory for its I/O buffers (256 MiB x QD 1024 x 1 worker)"),
            "{target}: {err}"
        );
        assert!(err.contains(" is available"), "{err}");
        assert!(
            err.contains("lower the request size (--bs), queue depth (--qd) or workers (--jobs)"),
            "{err}"
        );
        assert!(out.stdout.is_empty(), "no report: nothing ran");
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "refused promptly, not after a test run"
        );
    }
    assert!(
        !missing.exists(),
        "the file created for the refused run is removed"
    );
}

#[test]
fn root_qd_sweep_with_writes_needs_and_takes_the_confirmation() {
    if !root_or_skip("root_qd_sweep_with_writes_needs_and_takes_the_confirmation") {
        return;
    }
    let dir = scratch();
    let l = LoopDev::new(dir.path(), 32 << 20, 512);
    let image = l.image.to_str().unwrap();
    let sweep = [
        l.path_str(),
        "--test",
        "qd-sweep",
        "--read-pct",
        "50",
        "--qds",
        "1,2",
        "--time",
        "0.2",
        "--warmup",
        "0",
    ];
    // Without the confirmation: refused before any I/O, with what to type.
    let mut args = vec!["run"];
    args.extend_from_slice(&sweep);
    let out = disktriage(&args);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!("pass --destroy-data {}", l.name)),
        "{err}"
    );
    assert!(device_bytes(image, 0, 32 << 20).iter().all(|&b| b == 0));
    // With it: every phase runs, half of its I/O writes, and the data is on the device.
    let mut args = sweep.to_vec();
    args.extend_from_slice(&["--destroy-data", &l.name]);
    let doc = run_json(&args);
    let phases = doc["outcome"]["phases"].as_array().unwrap();
    assert_eq!(phases.len(), 4);
    for p in phases {
        assert!(u(&p["write"]["ops"]) > 0, "{}", p["label"]);
        assert!(u(&p["read"]["ops"]) > 0, "{}", p["label"]);
    }
    assert!(device_bytes(image, 0, 32 << 20).iter().any(|&b| b != 0));
}

#[test]
fn root_backward_and_sweep_patterns_touch_their_offsets() {
    if !root_or_skip("root_backward_and_sweep_patterns_touch_their_offsets") {
        return;
    }
    let dir = scratch();
    let l = LoopDev::new(dir.path(), 16 << 20, 512);
    let name = l.name.clone();
    // A write sweep with one size: forward, backward and random each run for a short time; the
    // backward phase starts at the end of the region, so the device's last block is written.
    let doc = run_json(&[
        l.path_str(),
        "--test",
        "size-sweep",
        "--write",
        "--min-bs",
        "1M",
        "--max-bs",
        "1M",
        "--time",
        "0.2",
        "--warmup",
        "0",
        "--destroy-data",
        &name,
    ]);
    let labels: Vec<&str> = doc["outcome"]["phases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["label"].as_str().unwrap())
        .collect();
    assert_eq!(
        labels,
        [
            "1M fwd_wt",
            "1M fwd_rd",
            "1M bwd_wt",
            "1M bwd_rd",
            "1M rnd_wt",
            "1M rnd_rd"
        ]
    );
    let pattern =
        DataPattern::new(DataKind::Random { seed: DEFAULT_SEED }, 1 << 20, false).unwrap();
    let last = device_bytes(l.image.to_str().unwrap(), 15 << 20, 1 << 20);
    assert_eq!(last, pattern.expected(15 << 20, 1 << 20));

    // The text report is diskperf's gnuplot-ready table.
    let out = disktriage(&[
        "run",
        l.path_str(),
        "--test",
        "size-sweep",
        "--min-bs",
        "64k",
        "--max-bs",
        "256k",
        "--time",
        "0.2",
        "--warmup",
        "0",
    ]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    let rows: Vec<&str> = text
        .lines()
        .filter(|l| !l.starts_with('#') && l.starts_with(char::is_numeric))
        .collect();
    assert_eq!(rows.len(), 3, "{text}");
    for (row, bs) in rows.iter().zip([65536, 131072, 262144]) {
        let cols: Vec<&str> = row.split_whitespace().collect();
        assert_eq!(cols[0], bs.to_string());
        assert_eq!(cols.len(), 7);
        assert_eq!(
            (cols[1], cols[3], cols[5]),
            ("-", "-", "-"),
            "no writes without --write"
        );
        for c in [cols[2], cols[4], cols[6]] {
            assert!(c.parse::<f64>().unwrap() > 0.0, "{row}");
        }
    }
    assert!(text.contains("# req_size"));
}

/// Samples `/sys/block/<name>/inflight` while `args` run; returns the largest count seen.
fn max_inflight(name: &str, args: &[&str]) -> u64 {
    let mut child = Command::new(env!("CARGO_BIN_EXE_disktriage"))
        .env(HISTORY_ENV, history_dir())
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let path = format!("/sys/block/{name}/inflight");
    let mut max = 0;
    while child.try_wait().unwrap().is_none() {
        let s = std::fs::read_to_string(&path).unwrap();
        let total: u64 = s
            .split_whitespace()
            .map(|x| x.parse::<u64>().unwrap())
            .sum();
        max = max.max(total);
        std::thread::sleep(Duration::from_micros(200));
    }
    max
}

#[test]
fn root_queue_depth_is_real() {
    if !root_or_skip("root_queue_depth_is_real") {
        return;
    }
    let dir = scratch();
    let l = LoopDev::new(dir.path(), 256 << 20, 512);
    let base = [
        "run",
        l.path_str(),
        "--test",
        "rand-read",
        "--time",
        "1.5",
        "--warmup",
        "0",
    ];
    for qd in [1u64, 4, 16] {
        let q = qd.to_string();
        let mut args = base.to_vec();
        args.extend_from_slice(&["--qd", &q, "--engine", "uring"]);
        let seen = max_inflight(&l.name, &args);
        assert_eq!(
            seen, qd,
            "io_uring QD{qd}: the block layer saw {seen} in flight"
        );
    }
    // The synchronous engine gets its depth from threads.
    let mut args = base.to_vec();
    args.extend_from_slice(&["--qd", "4", "--engine", "sync"]);
    assert_eq!(max_inflight(&l.name, &args), 4);
    // So does auto, whichever engine its probe picks.
    let mut args = base.to_vec();
    args.extend_from_slice(&["--qd", "4"]);
    assert_eq!(max_inflight(&l.name, &args), 4);
}

#[test]
fn root_write_guard() {
    if !root_or_skip("root_write_guard") {
        return;
    }
    let dir = scratch();
    let l = LoopDev::new(dir.path(), 64 << 20, 512);
    // Without the confirmation: refused, nothing written.
    let out = disktriage(&["run", l.path_str(), "--test", "seq-write", "--count", "1"]);
    // A usage error: exit 2, as for every command that writes.
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!("pass --destroy-data {}", l.name)),
        "{err}"
    );
    let out = disktriage(&[
        "run",
        l.path_str(),
        "--test",
        "seq-write",
        "--count",
        "1",
        "--destroy-data",
        "sda",
    ]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("does not name the target"));
    assert!(
        device_bytes(l.image.to_str().unwrap(), 0, 1 << 20)
            .iter()
            .all(|&b| b == 0)
    );

    // Mounted: refused with the mount point, even with the confirmation.
    let mnt = dir.path().join("m");
    let mounted = Mounted::ext4(l.path_str(), &mnt);
    let out = disktriage(&[
        "run",
        l.path_str(),
        "--test",
        "seq-write",
        "--count",
        "1",
        "--destroy-data",
        &l.name,
    ]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!(
            "refusing to write to {}: mounted at {}",
            l.name,
            mounted.dir.display()
        )),
        "{err}"
    );
    // Reading a mounted device is allowed.
    let out = disktriage(&["run", l.path_str(), "--test", "seq-read", "--count", "4"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    drop(mounted);

    // As a normal user the kernel says no and the message says why.
    let out = Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
        .arg(env!("CARGO_BIN_EXE_disktriage"))
        .env(HISTORY_ENV, history_dir())
        .args(["run", l.path_str(), "--test", "seq-read", "--count", "1"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("needs root"));
}

#[test]
fn root_zram_swap_is_refused() {
    if !root_or_skip("root_zram_swap_is_refused") {
        return;
    }
    let Some(z) = Zram::setup("root_zram_swap_is_refused", 64 << 20) else {
        return;
    };
    common::sh("mkswap", &["/dev/zram0"]);
    common::sh("swapon", &["/dev/zram0"]);
    let out = disktriage(&[
        "run",
        "/dev/zram0",
        "--test",
        "rand-write",
        "--count",
        "1",
        "--destroy-data",
        "zram0",
    ]);
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("refusing to write to zram0: active swap")
    );
    drop(z);
}

#[test]
fn root_4kn_device() {
    if !root_or_skip("root_4kn_device") {
        return;
    }
    let dir = scratch();
    let l = LoopDev::new(dir.path(), 64 << 20, 4096);
    let doc = run_json(&[l.path_str(), "--test", "rand-read", "--count", "500"]);
    assert_eq!(u(&phase(&doc, 0)["read"]["ops"]), 500);
    assert_eq!(doc["target"]["logical_block_size"], 4096);
    // 512-byte requests cannot work with O_DIRECT here: a clear error before any I/O.
    let out = disktriage(&[
        "run",
        l.path_str(),
        "--test",
        "rand-read",
        "--bs",
        "512",
        "--count",
        "1",
    ]);
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("not a multiple of the device's 4096-byte")
    );
    // sync-latency falls back to 4 KiB writes and says so.
    let doc = run_json(&[
        l.path_str(),
        "--test",
        "sync-latency",
        "--count",
        "50",
        "--destroy-data",
        &l.name,
    ]);
    let p = phase(&doc, 0);
    assert_eq!(u(&p["job"]["bs"]), 4096);
    assert_eq!(u(&p["write"]["ops"]), 50);
    assert!(
        doc["plan"]["notes"][0]
            .as_str()
            .unwrap()
            .contains("using 4096-byte writes")
    );
}

#[test]
fn root_sync_latency_on_512_device() {
    if !root_or_skip("root_sync_latency_on_512_device") {
        return;
    }
    let dir = scratch();
    let l = LoopDev::new(dir.path(), 16 << 20, 512);
    let out = disktriage(&[
        "run",
        l.path_str(),
        "--test",
        "sync-latency",
        "--destroy-data",
        &l.name,
    ]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(text.contains("O_DSYNC writes"), "{text}");
    assert!(text.contains("1000 I/Os of 512 bytes took"), "{text}");
    assert!(text.contains("ms per I/O on average"), "{text}");
}

#[test]
fn root_file_targets() {
    if !root_or_skip("root_file_targets") {
        return;
    }
    let dir = scratch();
    let file = dir.path().join("test.bin");
    let f = file.to_str().unwrap();
    // Missing: created at --size, filled, then written without confirmation.
    let doc = run_json(&[f, "--test", "seq-write", "--size", "16M", "--count", "4"]);
    assert_eq!(doc["target"]["kind"], "file");
    assert_eq!(doc["target"]["created"], true);
    assert_eq!(std::fs::metadata(&file).unwrap().len(), 16 << 20);
    let pattern =
        DataPattern::new(DataKind::Random { seed: DEFAULT_SEED }, 1 << 20, false).unwrap();
    assert_eq!(
        device_bytes(f, 15 << 20, 4096),
        pattern.expected(15 << 20, 4096),
        "laid out"
    );
    // Existing: reads are fine, writes need the file's name.
    let doc = run_json(&[f, "--test", "rand-read", "--count", "100"]);
    assert_eq!(u(&phase(&doc, 0)["read"]["ops"]), 100);
    let out = disktriage(&["run", f, "--test", "seq-write", "--count", "1"]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("pass --destroy-data test.bin"));
    assert_eq!(out.status.code(), Some(2));
    run_json(&[
        f,
        "--test",
        "seq-write",
        "--count",
        "1",
        "--destroy-data",
        "test.bin",
    ]);
    // Nothing else appeared next to it.
    let entries: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert_eq!(entries.len(), 1);
}

#[test]
fn root_enospc_on_a_file_is_reported_and_cleaned_up() {
    if !root_or_skip("root_enospc_on_a_file_is_reported_and_cleaned_up") {
        return;
    }
    let dir = scratch();
    let mnt = dir.path().join("small");
    std::fs::create_dir(&mnt).unwrap();
    common::sh(
        "mount",
        &[
            "-t",
            "tmpfs",
            "-o",
            "size=8M",
            "tmpfs",
            mnt.to_str().unwrap(),
        ],
    );
    struct Unmount(std::path::PathBuf);
    impl Drop for Unmount {
        fn drop(&mut self) {
            let _ = Command::new("umount").arg(&self.0).status();
        }
    }
    let _guard = Unmount(mnt.clone());
    let file = mnt.join("big.bin");
    let out = disktriage(&[
        "run",
        file.to_str().unwrap(),
        "--test",
        "seq-read",
        "--size",
        "32M",
        "--buffered",
    ]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("No space left on device (ENOSPC)"), "{err}");
    assert!(err.contains("at offset"), "{err}");
    assert!(!file.exists(), "the partial file is removed");
}

/// Unmounts the FUSE file system when dropped (the test's end, or its panic).
struct Unmount(std::path::PathBuf);

impl Drop for Unmount {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.0).status();
    }
}

/// A loop device over a file on a FUSE file system (bindfs); killing the FUSE daemon makes
/// every further I/O fail with EIO, as a dying disk would. (`losetup -d` cannot do this: the
/// kernel defers the detach while the device is open.) `None` (skipped) without bindfs.
/// Dropped in the order returned: the loop device is detached before the unmount.
fn failing_loop(
    test: &str,
    dir: &std::path::Path,
) -> Option<(LoopDev, std::process::Child, Unmount)> {
    if Command::new("bindfs").arg("--version").output().is_err() {
        skip(test, "bindfs is not installed");
        return None;
    }
    let src = dir.join("src");
    let fuse = dir.join("fuse");
    std::fs::create_dir_all(&src).unwrap();
    std::fs::create_dir_all(&fuse).unwrap();
    let image = src.join("disk.img");
    std::fs::File::create(&image)
        .unwrap()
        .set_len(256 << 20)
        .unwrap();
    let daemon = Command::new("bindfs")
        .args(["-f", src.to_str().unwrap(), fuse.to_str().unwrap()])
        .spawn()
        .unwrap();
    let unmount = Unmount(fuse.clone());
    let fused = fuse.join("disk.img");
    let start = Instant::now();
    while !fused.exists() && start.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(20));
    }
    let l = LoopDev::attach(&fused, &[]);
    Some((l, daemon, unmount))
}

/// Runs rand-read on `l` with `args`, kills the FUSE `daemon` after `after`; returns the
/// output and how long the run went on after the kill.
fn run_until_failure(
    l: &LoopDev,
    daemon: &mut std::process::Child,
    args: &[&str],
    after: Duration,
) -> (std::process::Output, Duration) {
    let mut all = vec!["run", l.path_str(), "--test", "rand-read", "--json"];
    all.extend_from_slice(args);
    let child = Command::new(env!("CARGO_BIN_EXE_disktriage"))
        .env(HISTORY_ENV, history_dir())
        .args(&all)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(after);
    daemon.kill().unwrap();
    let _ = daemon.wait();
    let killed_at = Instant::now();
    let out = child.wait_with_output().unwrap();
    (out, killed_at.elapsed())
}

#[test]
fn root_failing_device_ends_the_run_with_the_error() {
    let test = "root_failing_device_ends_the_run_with_the_error";
    if !root_or_skip(test) {
        return;
    }
    let dir = scratch();
    let Some((l, mut daemon, _unmount)) = failing_loop(test, dir.path()) else {
        return;
    };
    let (out, after_kill) = run_until_failure(
        &l,
        &mut daemon,
        &["--time", "20", "--warmup", "0"],
        Duration::from_millis(700),
    );
    assert!(
        after_kill < Duration::from_secs(5),
        "the run ended promptly"
    );
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("failed: I/O error (EIO)") || err.contains("(ENOTCONN)"),
        "{err}"
    );
    assert!(err.contains("at offset"), "{err}");
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let p = phase(&doc, 0);
    assert!(
        u(&p["read"]["ops"]) > 0,
        "what completed before the failure is reported"
    );
    assert!(p["failure"]["offset"].is_u64());
    // No warm-up was asked for: nothing was done before the measurement, no probe either.
    assert!(
        p["engine_choice"]["probe"].is_null(),
        "{}",
        p["engine_choice"]
    );
}

#[test]
fn root_an_error_in_the_probe_is_the_runs_error() {
    let test = "root_an_error_in_the_probe_is_the_runs_error";
    if !root_or_skip(test) {
        return;
    }
    let dir = scratch();
    let Some((l, mut daemon, _unmount)) = failing_loop(test, dir.path()) else {
        return;
    };
    // A 5 s warm-up starts with the probe (after the 0.2 s look for other I/O): the device
    // fails in the probe's first rounds.
    let (out, after_kill) = run_until_failure(
        &l,
        &mut daemon,
        &["--qd", "4", "--time", "20", "--warmup", "5"],
        Duration::from_millis(400),
    );
    assert!(
        after_kill < Duration::from_secs(3),
        "the run ended at the error, not after the warm-up or the run: {after_kill:?}"
    );
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("failed: I/O error (EIO)") || err.contains("(ENOTCONN)"),
        "{err}"
    );
    assert!(err.contains("at offset"), "{err}");
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let p = phase(&doc, 0);
    assert!(p["failure"]["offset"].is_u64(), "{}", p["failure"]);
    let reason = p["engine_choice"]["reason"].as_str().unwrap();
    assert!(!reason.contains("both engines failed"), "{reason}");
    assert!(
        reason.contains("the engine probe") && reason.contains("met an I/O error"),
        "{reason}"
    );
    assert!(reason.contains("completed before it"), "{reason}");
    // Nothing was measured after the probe's error.
    assert_eq!(u(&p["read"]["ops"]), 0);
    assert_eq!(p["seconds"].as_f64(), Some(0.0));
}

/// Starts a 30 s rand-read on `l`, sends `sig` after 1.8 s, returns what the run printed.
fn interrupted_run(l: &LoopDev, sig: nix::sys::signal::Signal) -> std::process::Output {
    let child = common::disktriage_with_default_signals()
        .env(HISTORY_ENV, history_dir())
        .args([
            "run",
            l.path_str(),
            "--test",
            "rand-read",
            "--time",
            "30",
            "--json",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1800));
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(child.id() as i32), sig).unwrap();
    child.wait_with_output().unwrap()
}

#[test]
fn root_interrupt_reports_what_completed() {
    if !root_or_skip("root_interrupt_reports_what_completed") {
        return;
    }
    let dir = scratch();
    let l = LoopDev::new(dir.path(), 64 << 20, 512);
    // Ctrl-C, SIGTERM and a hangup (SSH dropped) all stop the run and print what completed;
    // the exit status is 128 + the signal, as after any signal.
    use nix::sys::signal::Signal;
    for (sig, code) in [
        (Signal::SIGINT, 130),
        (Signal::SIGTERM, 143),
        (Signal::SIGHUP, 129),
    ] {
        let out = interrupted_run(&l, sig);
        assert_eq!(
            out.status.code(),
            Some(code),
            "{sig}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let doc: Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{sig}: the report is not JSON ({e}): {out:?}"));
        let p = phase(&doc, 0);
        assert_eq!(p["stopped"], true, "{sig}");
        assert!(u(&p["read"]["ops"]) > 0, "{sig}");
        assert!(p["seconds"].as_f64().unwrap() < 5.0, "{sig}");
        assert_eq!(series_sum(p, "read", "bytes"), u(&p["read"]["bytes"]));
    }
}

#[test]
fn root_presets_and_sweeps_on_zram() {
    if !root_or_skip("root_presets_and_sweeps_on_zram") {
        return;
    }
    let Some(_z) = Zram::setup("root_presets_and_sweeps_on_zram", 256 << 20) else {
        return;
    };
    let out = disktriage(&[
        "run",
        "/dev/zram0",
        "--test",
        "cdm",
        "--time",
        "0.3",
        "--warmup",
        "0.1",
        "--destroy-data",
        "zram0",
    ]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    for row in ["SEQ1M Q8T1", "SEQ1M Q1T1", "RND4K Q32T1", "RND4K Q1T1"] {
        let line = text
            .lines()
            .find(|l| l.starts_with(row))
            .unwrap_or_else(|| panic!("{row}\n{text}"));
        let cells: Vec<&str> = line[14..].split_whitespace().collect();
        assert_eq!(cells.len(), 6, "{line}");
        assert!(
            cells.iter().all(|c| c.parse::<f64>().is_ok()),
            "read and write filled: {line}"
        );
    }
    let out = disktriage(&[
        "run",
        "/dev/zram0",
        "--test",
        "qd-sweep",
        "--qds",
        "1,4",
        "--time",
        "0.3",
        "--warmup",
        "0",
    ]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(text.contains("Maximum Large MBPS="), "{text}");
    assert!(text.contains("Maximum Small IOPS="), "{text}");
    assert!(text.contains("Minimum Small Latency="), "{text}");
    let doc = run_json(&[
        "/dev/zram0",
        "--test",
        "concurrent-read",
        "--jobs",
        "3",
        "--io-size",
        "16M",
    ]);
    let workers = phase(&doc, 0)["workers"].as_array().unwrap().clone();
    assert_eq!(workers.len(), 3);
    for (i, w) in workers.iter().enumerate() {
        assert_eq!(u(&w["bytes"]), 16 << 20);
        assert_eq!(u(&w["region_start"]), i as u64 * u(&w["region_len"]));
    }
    // --fio prints the equivalent command without running anything.
    let out = disktriage(&[
        "run",
        "/dev/zram0",
        "--test",
        "rand-read",
        "--qd",
        "32",
        "--engine",
        "uring",
        "--fio",
    ]);
    let fio = String::from_utf8_lossy(&out.stdout);
    assert!(fio.starts_with("fio --name=rand-read --filename=/dev/zram0 --ioengine=io_uring --direct=1 --rw=randread --bs=4096 --iodepth=32"), "{fio}");
}

#[test]
fn root_a_read_only_device_is_not_a_missing_privilege() {
    if !root_or_skip("root_a_read_only_device_is_not_a_missing_privilege") {
        return;
    }
    let dir = scratch();
    // Made read-only after attaching (blockdev --setro; LoopDev's drop clears it again), and
    // attached read-only (losetup -r).
    let setro = LoopDev::new(dir.path(), 16 << 20, 512);
    common::sh("blockdev", &["--setro", setro.path_str()]);
    let image = dir.path().join("ro.img");
    std::fs::File::create(&image)
        .and_then(|f| f.set_len(16 << 20))
        .unwrap();
    let attached_ro = LoopDev::attach(&image, &["-r"]);
    for l in [&setro, &attached_ro] {
        let out = disktriage(&[
            "run",
            l.path_str(),
            "--test",
            "seq-write",
            "--count",
            "1",
            "--destroy-data",
            &l.name,
        ]);
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(!out.status.success(), "{text}");
        // Refused before the run starts, with the way to make it writable.
        assert!(
            text.contains("refusing to write to") && text.contains("the device is read-only"),
            "{text}"
        );
        assert!(text.contains("blockdev --setrw"), "{text}");
        assert!(!text.contains("needs root"), "running as root: {text}");
    }
}

#[test]
fn root_fio_for_a_write_test_on_a_mounted_device_warns() {
    if !root_or_skip("root_fio_for_a_write_test_on_a_mounted_device_warns") {
        return;
    }
    let dir = scratch();
    let l = LoopDev::new(dir.path(), 64 << 20, 512);
    let mnt = dir.path().join("mnt");
    let _m = Mounted::ext4(l.path_str(), &mnt);
    let out = disktriage(&[
        "run",
        l.path_str(),
        "--test",
        "seq-write",
        "--fio",
        "--destroy-data",
        &l.name,
    ]);
    let text = String::from_utf8_lossy(&out.stdout);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    // Still a pasteable script: the warning is a comment, before the command.
    let warning = text
        .lines()
        .find(|l| l.contains("WARNING"))
        .unwrap_or_else(|| panic!("no warning line:\n{text}"));
    assert!(warning.starts_with('#'), "{text}");
    assert!(
        warning.contains("mounted") && warning.contains(mnt.to_str().unwrap()),
        "names why the device is in use: {text}"
    );
    let fio = text.lines().position(|l| l.starts_with("fio ")).unwrap();
    let warn = text.lines().position(|l| l.contains("WARNING")).unwrap();
    assert!(warn < fio, "the warning comes first:\n{text}");
    assert!(err.contains("WARNING"), "and on stderr: {err}");
    // Every line is a comment or the command.
    assert!(
        text.lines()
            .all(|l| l.starts_with('#') || l.starts_with("fio ")),
        "{text}"
    );
}
