//! The engine against fio on the same devices in the same run (root; fio from Debian).
//!
//!     sudo cargo bench --bench vs_fio            # 3 rounds of every job, medians
//!     sudo cargo bench --bench vs_fio -- 5 10    # 5 rounds, 10 s per job
//!     sudo cargo bench --bench vs_fio -- 7 5 "SEQ1M QD1"   # only the jobs whose name matches
//!
//! Jobs: 4 KiB random reads at QD1 and QD32 on zram (filled with random data first, so reads
//! decompress real pages instead of returning a shared zero page), and 1 MiB sequential reads
//! and writes at QD1 and QD8 on a loop device over a tmpfs file. Both tools run as child
//! processes with io_uring, O_DIRECT, registered buffers (fio's --fixedbufs, its fastest
//! io_uring set-up and the same kernel path as disktriage's), a 1 s warm-up and the same
//! offsets model (uniform random, no random map). Each round runs fio and disktriage back to
//! back, in alternating order.
//!
//! CPU per I/O is measured the same way for both, from outside: the child process's whole CPU
//! time (getrusage RUSAGE_CHILDREN around its run: every thread, including the kernel's
//! io_uring workers, warm-up and start-up included) divided by the I/Os the kernel counted for
//! the device during that run (bytes / request size, from /sys/block/X/stat). Latency is fio's
//! clat against disktriage's completion latency (the same definition: submission to reaped
//! completion).

#![allow(clippy::unwrap_used)] // a benchmark harness: a panic is the failure report

use std::path::Path;
use std::process::Command;

use disktriage::sys::privilege::children_cpu_time;
use serde_json::Value;

struct Job {
    name: &'static str,
    device: Dev,
    rw: &'static str,
    bs: u64,
    qd: u32,
}

#[derive(Clone, Copy, PartialEq)]
enum Dev {
    Zram,
    Loop,
}

#[derive(Debug, Default, Clone, Copy)]
struct Measure {
    iops: f64,
    mbps: f64,
    cpu_us_per_io: f64,
    p50_us: f64,
    p99_us: f64,
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let rounds: usize = args.first().and_then(|a| a.parse().ok()).unwrap_or(3);
    let secs: u64 = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(5);
    let only: Option<&str> = args.get(2).map(String::as_str);
    if !nix::unistd::geteuid().is_root() {
        eprintln!("vs_fio: needs root (creates zram and loop devices); skipped");
        return;
    }
    if Command::new("fio").arg("--version").output().is_err() {
        eprintln!("vs_fio: fio is not installed (apt-get install fio); skipped");
        return;
    }
    let fio_version = String::from_utf8_lossy(
        &Command::new("fio")
            .arg("--version")
            .output()
            .unwrap()
            .stdout,
    )
    .trim()
    .to_string();

    let zram = Path::new("/sys/block/zram0");
    if std::fs::read_to_string(zram.join("disksize"))
        .unwrap_or_default()
        .trim()
        != "0"
    {
        eprintln!("vs_fio: /dev/zram0 is in use by someone else; skipped");
        return;
    }
    std::fs::write(zram.join("disksize"), (1u64 << 30).to_string()).expect("configure zram0");
    let tmp = tempfile::Builder::new()
        .prefix("vs-fio.")
        .tempdir_in("/dev/shm")
        .expect("tmpfs dir");
    let image = tmp.path().join("loop.img");
    std::fs::File::create(&image)
        .unwrap()
        .set_len(2 << 30)
        .unwrap();
    let loopdev = String::from_utf8(
        Command::new("losetup")
            .args(["--find", "--show", image.to_str().unwrap()])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap()
    .trim()
    .to_string();
    let _cleanup = Cleanup {
        loopdev: loopdev.clone(),
    };

    // Fill both devices with incompressible data so reads are real.
    let bin = env!("CARGO_BIN_EXE_disktriage");
    for (dev, name) in [
        ("/dev/zram0", "zram0"),
        (loopdev.as_str(), loopdev.trim_start_matches("/dev/")),
    ] {
        let st = Command::new(bin)
            .args([
                "run",
                dev,
                "--test",
                "seq-write",
                "--qd",
                "8",
                "--time",
                "0",
                "--io-size",
            ])
            .arg(if dev.contains("zram") { "1G" } else { "2G" })
            .args(["--destroy-data", name])
            .stdout(std::process::Stdio::null())
            .status()
            .unwrap();
        assert!(st.success(), "prefill {dev}");
    }

    let jobs = [
        Job {
            name: "RND4K QD1 randread",
            device: Dev::Zram,
            rw: "randread",
            bs: 4096,
            qd: 1,
        },
        Job {
            name: "RND4K QD32 randread",
            device: Dev::Zram,
            rw: "randread",
            bs: 4096,
            qd: 32,
        },
        Job {
            name: "SEQ1M QD1 read",
            device: Dev::Loop,
            rw: "read",
            bs: 1 << 20,
            qd: 1,
        },
        Job {
            name: "SEQ1M QD1 write",
            device: Dev::Loop,
            rw: "write",
            bs: 1 << 20,
            qd: 1,
        },
        Job {
            name: "SEQ1M QD8 read",
            device: Dev::Loop,
            rw: "read",
            bs: 1 << 20,
            qd: 8,
        },
        Job {
            name: "SEQ1M QD8 write",
            device: Dev::Loop,
            rw: "write",
            bs: 1 << 20,
            qd: 8,
        },
    ];
    println!(
        "disktriage vs {fio_version}: {rounds} rounds x {secs} s per job, medians; kernel {}",
        String::from_utf8_lossy(&Command::new("uname").arg("-r").output().unwrap().stdout).trim()
    );
    println!(
        "{:<20} {:>11} {:>11} {:>6} | {:>9} {:>9} {:>6} | {:>8} {:>8} {:>8} {:>8}",
        "job",
        "fio IOPS",
        "dt IOPS",
        "ratio",
        "fio us/IO",
        "dt us/IO",
        "ratio",
        "fio p50",
        "dt p50",
        "fio p99",
        "dt p99"
    );
    for job in jobs
        .iter()
        .filter(|j| only.is_none_or(|o| j.name.contains(o)))
    {
        let dev = match job.device {
            Dev::Zram => "/dev/zram0".to_string(),
            Dev::Loop => loopdev.clone(),
        };
        let mut fio = Vec::new();
        let mut dt = Vec::new();
        for round in 0..rounds {
            if round % 2 == 0 {
                fio.push(run_fio(job, &dev, secs));
                dt.push(run_dt(bin, job, &dev, secs));
            } else {
                dt.push(run_dt(bin, job, &dev, secs));
                fio.push(run_fio(job, &dev, secs));
            }
        }
        let (f, d) = (median(&fio), median(&dt));
        let lat = |v: f64| {
            if job.qd == 1 {
                format!("{v:.1}")
            } else {
                "-".to_string()
            }
        };
        println!(
            "{:<20} {:>11.0} {:>11.0} {:>6.2} | {:>9.2} {:>9.2} {:>6.2} | {:>8} {:>8} {:>8} {:>8}",
            job.name,
            f.iops,
            d.iops,
            d.iops / f.iops,
            f.cpu_us_per_io,
            d.cpu_us_per_io,
            d.cpu_us_per_io / f.cpu_us_per_io,
            lat(f.p50_us),
            lat(d.p50_us),
            lat(f.p99_us),
            lat(d.p99_us),
        );
    }
    println!(
        "ratio = disktriage / fio (IOPS: >= 1.00 is at least as fast; us/IO: <= 1.00 is at most as costly); latencies in microseconds at QD1"
    );
}

struct Cleanup {
    loopdev: String,
}

impl Drop for Cleanup {
    fn drop(&mut self) {
        let _ = Command::new("losetup").args(["-d", &self.loopdev]).status();
        let _ = std::fs::write("/sys/block/zram0/reset", "1");
    }
}

fn median(v: &[Measure]) -> Measure {
    let pick = |f: fn(&Measure) -> f64| {
        let mut x: Vec<f64> = v.iter().map(f).collect();
        x.sort_by(f64::total_cmp);
        x[x.len() / 2]
    };
    Measure {
        iops: pick(|m| m.iops),
        mbps: pick(|m| m.mbps),
        cpu_us_per_io: pick(|m| m.cpu_us_per_io),
        p50_us: pick(|m| m.p50_us),
        p99_us: pick(|m| m.p99_us),
    }
}

/// Runs `cmd` and returns its output, its CPU time, and the I/Os the kernel counted on `dev`.
fn measured(mut cmd: Command, dev: &str, bs: u64) -> (std::process::Output, f64, f64) {
    let name = dev.trim_start_matches("/dev/");
    let stat = || -> u64 {
        let s = std::fs::read_to_string(format!("/sys/block/{name}/stat")).unwrap();
        let v: Vec<u64> = s.split_whitespace().map(|x| x.parse().unwrap()).collect();
        (v[2] + v[6]) * 512
    };
    let (b0, c0) = (stat(), children_cpu_time());
    let out = cmd.output().expect("run benchmark child");
    let (b1, c1) = (stat(), children_cpu_time());
    ((out), (c1 - c0).as_secs_f64(), (b1 - b0) as f64 / bs as f64)
}

fn run_fio(job: &Job, dev: &str, secs: u64) -> Measure {
    let mut cmd = Command::new("fio");
    cmd.args([
        "--name=bench",
        &format!("--filename={dev}"),
        "--ioengine=io_uring",
        "--direct=1",
        &format!("--rw={}", job.rw),
        &format!("--bs={}", job.bs),
        &format!("--iodepth={}", job.qd),
        "--numjobs=1",
        "--time_based",
        &format!("--runtime={secs}"),
        "--ramp_time=1",
        "--randrepeat=1",
        "--norandommap",
        "--output-format=json",
    ]);
    let (out, cpu_s, ios) = measured(cmd, dev, job.bs);
    assert!(
        out.status.success(),
        "fio failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: Value = serde_json::from_slice(&out.stdout).expect("fio JSON");
    let j = &doc["jobs"][0];
    let dir = if job.rw.contains("write") {
        &j["write"]
    } else {
        &j["read"]
    };
    let pct = &dir["clat_ns"]["percentile"];
    Measure {
        iops: dir["iops"].as_f64().unwrap(),
        mbps: dir["bw_bytes"].as_f64().unwrap() / 1e6,
        cpu_us_per_io: cpu_s / ios * 1e6,
        p50_us: pct["50.000000"].as_f64().unwrap_or(0.0) / 1e3,
        p99_us: pct["99.000000"].as_f64().unwrap_or(0.0) / 1e3,
    }
}

fn run_dt(bin: &str, job: &Job, dev: &str, secs: u64) -> Measure {
    let (test, name) = match job.rw {
        "randread" => ("rand-read", None),
        "read" => ("seq-read", None),
        _ => ("seq-write", Some(dev.trim_start_matches("/dev/"))),
    };
    let mut cmd = Command::new(bin);
    cmd.args([
        "run",
        dev,
        "--test",
        test,
        "--bs",
        &job.bs.to_string(),
        "--qd",
        &job.qd.to_string(),
    ])
    .args(["--time", &secs.to_string(), "--warmup", "1", "--json"]);
    if let Some(n) = name {
        cmd.args(["--destroy-data", n]);
    }
    let (out, cpu_s, ios) = measured(cmd, dev, job.bs);
    assert!(
        out.status.success(),
        "disktriage failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: Value = serde_json::from_slice(&out.stdout).expect("disktriage JSON");
    let p = &doc["outcome"]["phases"][0];
    let dir = if job.rw.contains("write") {
        &p["write"]
    } else {
        &p["read"]
    };
    Measure {
        iops: dir["iops"].as_f64().unwrap(),
        mbps: dir["bytes_per_sec"].as_f64().unwrap() / 1e6,
        cpu_us_per_io: cpu_s / ios * 1e6,
        p50_us: dir["latency"]["p50_ns"].as_f64().unwrap_or(0.0) / 1e3,
        p99_us: dir["latency"]["p99_ns"].as_f64().unwrap_or(0.0) / 1e3,
    }
}
