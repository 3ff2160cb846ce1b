//! The engine against fio on the same devices in the same run (root; fio from Debian).
//!
//!     sudo cargo bench --bench vs_fio                 # 3 rounds of 5 s per job, medians
//!     sudo cargo bench --bench vs_fio -- 7 5          # 7 rounds of 5 s
//!     sudo cargo bench --bench vs_fio -- 1 1 "QD32 randread,SEQ1M QD1 read"
//!                                                     # only the jobs whose name contains one
//!                                                     # of the comma-separated filters
//!     sudo VS_FIO_KEEP=/tmp/keep cargo bench --bench vs_fio   # also keeps every disktriage
//!                                                     # JSON report there, in run order
//!
//! Jobs: 4 KiB random reads at QD1, QD4 and QD32 and random writes at QD1 and QD32 on zram
//! (filled with random data first, so reads decompress real pages instead of returning a
//! shared zero page); 1 MiB sequential reads and writes at QD1 and QD8 on a loop device over a
//! tmpfs file; 4 KiB random reads at QD32 from a file on ext4 on a loop device (over tmpfs).
//!
//! Each job runs disktriage with its default engine (`auto`) against fio in the set-ups that
//! can keep QD I/Os in flight: psync with one thread per outstanding I/O (`numjobs` = QD,
//! `--thread`), io_uring with `iodepth` = QD and registered buffers and file (`--fixedbufs
//! --registerfiles`, as disktriage registers them), and at QD > 1 the same io_uring job
//! submitting and reaping in batches
//! (`--iodepth_batch_submit` / `--iodepth_batch_complete_max` = QD). disktriage is compared
//! with the best of them. Write jobs give fio `--scramble_buffers=0`: fio's default rewrites
//! part of its buffer before every write, which on zram costs it more than half its IOPS,
//! while disktriage writes its pre-generated random pattern as it is; fio's buffer is random
//! too, so neither writes compressible data. All use O_DIRECT, a 1 s warm-up (fio's ramp_time) and uniform random
//! offsets without a random map. Each round runs every contender once, in an order that
//! rotates from round to round, each only once the CPUs are idle again; the table gives
//! medians over the rounds.
//!
//! IOPS are measured the same way for all, from outside, and that decides the verdict: the I/Os
//! the kernel completed on the device (`/sys/block/X/stat`) per second in a window that lies
//! inside every tool's measured time (from 1.5 s after the start to 0.25 s before the measured
//! time ends). Each tool's own figure is shown beside it. They differ where fio's is not the
//! device's rate: with many threads starved for CPU (psync, numjobs = 32 on zram), fio's
//! threads end their measured seconds at moments up to tens of milliseconds apart and its
//! group figure counts the last ones at the whole device's rate, 1-3 % above what the kernel
//! counts; disktriage's own figure is its threads' I/Os over one common measured time.
//!
//! CPU per I/O is measured the same way for all, from outside: the child process's whole CPU
//! time (getrusage RUSAGE_CHILDREN around its run: every thread, including the kernel's
//! io_uring workers, warm-up and start-up included) divided by the I/Os the kernel counted for
//! the device during that run (bytes / request size, from /sys/block/X/stat). Latency is total
//! latency on both sides: fio's `lat` (with `--lat_percentiles=1`) and disktriage's (the
//! same definition: from the submitting call to the completion seen), at QD1.

#![allow(clippy::unwrap_used)] // a benchmark harness: a panic is the failure report

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use disktriage::sys::privilege::children_cpu_time;
use nix::fcntl::{Flock, FlockArg};
use serde_json::Value;

/// The lock `tests/common` takes around every use of /dev/zram0.
const ZRAM_LOCK: &str = "/tmp/disktriage-tests-zram0.lock";

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
    /// A file on ext4 on a loop device.
    Ext4File,
}

/// Who runs a job.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Contender {
    Disktriage,
    FioPsync,
    FioUring,
    FioUringBatch,
}

impl Contender {
    fn name(self) -> &'static str {
        match self {
            Contender::Disktriage => "disktriage",
            Contender::FioPsync => "fio psync",
            Contender::FioUring => "fio io_uring",
            Contender::FioUringBatch => "fio io_uring batch",
        }
    }
}

#[derive(Debug, Default, Clone)]
struct Measure {
    iops: f64,
    cpu_us_per_io: f64,
    p50_us: f64,
    p99_us: f64,
    /// The I/Os per second the kernel counted on the device in the common window (NaN when
    /// the runs are too short for one): the same yardstick for every contender.
    kernel_iops: f64,
    /// disktriage: the engine it used and why.
    engine: String,
}

/// Where a job runs: the path to test and the block device whose counters see its I/O.
struct Place {
    path: String,
    stat_dev: String,
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let rounds: usize = args.first().and_then(|a| a.parse().ok()).unwrap_or(3);
    let secs: u64 = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(5);
    let filters: Vec<String> = args
        .get(2)
        .map(|f| f.split(',').map(|s| s.trim().to_string()).collect())
        .unwrap_or_default();
    if !nix::unistd::geteuid().is_root() {
        eprintln!("vs_fio: needs root (creates zram and loop devices); skipped");
        return;
    }
    if Command::new("fio").arg("--version").output().is_err() {
        eprintln!("vs_fio: fio is not installed (apt-get install fio); skipped");
        return;
    }
    let fio_version = output("fio", &["--version"]);
    let jobs = jobs();
    let selected: Vec<&Job> = jobs
        .iter()
        .filter(|j| filters.is_empty() || filters.iter().any(|f| j.name.contains(f.as_str())))
        .collect();
    if selected.is_empty() {
        eprintln!("vs_fio: no job matches {filters:?}");
        return;
    }
    let bin = env!("CARGO_BIN_EXE_disktriage");
    let mut env = Env::default();
    let uses = |d: Dev| selected.iter().any(|j| j.device == d);
    if uses(Dev::Zram) {
        env.zram(bin);
    }
    if uses(Dev::Loop) {
        env.loop_dev(bin);
    }
    if uses(Dev::Ext4File) {
        env.ext4_file(bin);
    }

    println!(
        "disktriage vs {fio_version}: {rounds} round(s) x {secs} s per job and contender, \
         medians; kernel {}, {} CPUs",
        output("uname", &["-r"]),
        std::thread::available_parallelism().map_or(0, |n| n.get())
    );
    println!();
    println!(
        "| job | disktriage IOPS | us/IO | fio psync IOPS | us/IO | fio io_uring IOPS | us/IO | \
         fio io_uring batch IOPS | us/IO | IOPS ratio vs best fio | us/IO ratio vs it | \
         per-round ratios: median (min-max) | kernel-counted IOPS dt / best fio | \
         kernel-counted per-round ratios: median (min-max) | verdict | p50 us dt / fio | \
         p99 us dt / fio |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    let mut engines = String::new();
    let mut by_round = String::new();
    let window = kernel_window(secs);
    for job in selected {
        let place = env.place(job.device);
        let mut contenders = vec![
            Contender::Disktriage,
            Contender::FioPsync,
            Contender::FioUring,
        ];
        if job.qd > 1 {
            contenders.push(Contender::FioUringBatch);
        }
        let mut results: Vec<Vec<Measure>> = vec![Vec::new(); contenders.len()];
        for round in 0..rounds {
            for k in 0..contenders.len() {
                let i = (k + round) % contenders.len();
                settle();
                let m = match contenders[i] {
                    Contender::Disktriage => run_dt(bin, job, &place, secs, window),
                    c => run_fio(c, job, &place, secs, window),
                };
                results[i].push(m);
            }
        }
        let med: Vec<Measure> = results.iter().map(|v| median(v)).collect();
        let dt = &med[0];
        let (best_i, best) = med
            .iter()
            .enumerate()
            .skip(1)
            .max_by(|a, b| a.1.iops.total_cmp(&b.1.iops))
            .unwrap();
        let mut row = format!(
            "| {} | {:.0} | {:.2} |",
            job.name, dt.iops, dt.cpu_us_per_io
        );
        for c in [
            Contender::FioPsync,
            Contender::FioUring,
            Contender::FioUringBatch,
        ] {
            match contenders.iter().position(|&x| x == c) {
                Some(i) => {
                    let _ = write!(row, " {:.0} | {:.2} |", med[i].iops, med[i].cpu_us_per_io);
                }
                None => row.push_str(" - | - |"),
            }
        }
        let lat = |dt: f64, fio: f64| {
            if job.qd == 1 {
                format!("{dt:.1} / {fio:.1}")
            } else {
                "-".to_string()
            }
        };
        // The noise: disktriage against that same fio set-up round by round (each round runs
        // both back to back), so a median below 1.00 can be told from one the rounds disagree on.
        let paired = |of: fn(&Measure) -> f64, fio: usize| {
            let per_round: Vec<f64> = results[0]
                .iter()
                .zip(&results[fio])
                .map(|(d, f)| of(d) / of(f))
                .collect();
            let lo = per_round.iter().copied().fold(f64::INFINITY, f64::min);
            let hi = per_round.iter().copied().fold(0.0, f64::max);
            // The median of the paired ratios: each round's pair ran back to back, so the
            // slow drift of this machine's speed over minutes cancels within a pair.
            (middle(per_round), lo, hi)
        };
        let (reported, lo, hi) = paired(|m| m.iops, best_i);
        let ratio = dt.iops / best.iops;
        let _ = write!(
            row,
            " **{ratio:.2}** ({}) | {:.2} | {reported:.2} ({lo:.2}-{hi:.2}) |",
            contenders[best_i].name(),
            dt.cpu_us_per_io / best.cpu_us_per_io,
        );
        // The verdict is the kernel's count, the same for every contender: the fio set-up the
        // device completed the most I/Os for, against disktriage round by round. Without a
        // window (runs shorter than 2 s), the tools' own figures decide.
        let (k_best_i, k_best) = med
            .iter()
            .enumerate()
            .skip(1)
            .max_by(|a, b| a.1.kernel_iops.total_cmp(&b.1.kernel_iops))
            .unwrap();
        let (decides, hi) = if dt.kernel_iops.is_nan() {
            row.push_str(" - | - |");
            (reported, hi)
        } else {
            let (k, klo, khi) = paired(|m| m.kernel_iops, k_best_i);
            let _ = write!(
                row,
                " {:.0} / {:.0} ({}) | **{k:.2}** ({klo:.2}-{khi:.2}) |",
                dt.kernel_iops,
                k_best.kernel_iops,
                contenders[k_best_i].name(),
            );
            (k, khi)
        };
        let _ = write!(
            row,
            " {} | {} | {} |",
            verdict(decides, hi),
            lat(dt.p50_us, best.p50_us),
            lat(dt.p99_us, best.p99_us),
        );
        println!("{row}");
        let _ = writeln!(engines, "- {}: {}", job.name, dt.engine);
        // Each round's figures in the order they ran, so an outlier can be placed in time.
        let (of, fio_i, what): (fn(&Measure) -> f64, usize, &str) = if dt.kernel_iops.is_nan() {
            (|m| m.iops, best_i, "own IOPS")
        } else {
            (|m| m.kernel_iops, k_best_i, "kernel-counted IOPS")
        };
        let per_round: Vec<String> = results[0]
            .iter()
            .zip(&results[fio_i])
            .map(|(d, f)| format!("{:.0}/{:.0} = {:.2}", of(d), of(f), of(d) / of(f)))
            .collect();
        let _ = writeln!(
            by_round,
            "- {}: {what}, disktriage / {}, rounds 1-{rounds}: {}",
            job.name,
            contenders[fio_i].name(),
            per_round.join("; ")
        );
    }
    println!();
    println!(
        "IOPS = each tool's own figure; IOPS ratio = disktriage's median / the best fio \
         set-up's median; us/IO ratio = disktriage's CPU per I/O / that set-up's (<= 1.00: at \
         most as costly). Per-round ratios: disktriage / that set-up in each round, run back to \
         back. Kernel-counted: the I/Os the kernel completed on the device per second from \
         {:.2} s to {:.2} s after each tool started (inside every tool's measured time), the \
         same yardstick for all; the fio set-up with the most is compared. The verdict is the \
         median of the kernel-counted per-round ratios (>= 1.00: at least as fast), their \
         spread this machine's noise; \"level within noise\" means some rounds put disktriage \
         ahead and some behind. Latency: total (fio's lat), QD1 only.",
        window.map_or(f64::NAN, |w| w.0.as_secs_f64()),
        window.map_or(f64::NAN, |w| w.1.as_secs_f64()),
    );
    println!();
    println!("disktriage's engine (the last round's choice, or every round's if they differ):");
    print!("{engines}");
    println!();
    println!("Round by round (the figures the verdict pairs):");
    print!("{by_round}");
}

/// What the median of the per-round ratios and their highest say: at least as fast, level
/// within the round-to-round noise (the rounds disagree on which is faster), or slower in every
/// round.
fn verdict(ratio: f64, hi: f64) -> &'static str {
    if ratio >= 0.995 {
        "as fast or faster"
    } else if hi >= 1.0 {
        "level within noise"
    } else {
        "slower in every round"
    }
}

fn jobs() -> Vec<Job> {
    let j = |name, device, rw, bs, qd| Job {
        name,
        device,
        rw,
        bs,
        qd,
    };
    vec![
        j("RND4K QD1 randread, zram", Dev::Zram, "randread", 4096, 1),
        j("RND4K QD4 randread, zram", Dev::Zram, "randread", 4096, 4),
        j("RND4K QD32 randread, zram", Dev::Zram, "randread", 4096, 32),
        j("RND4K QD1 randwrite, zram", Dev::Zram, "randwrite", 4096, 1),
        j(
            "RND4K QD32 randwrite, zram",
            Dev::Zram,
            "randwrite",
            4096,
            32,
        ),
        j("SEQ1M QD1 read, loop", Dev::Loop, "read", 1 << 20, 1),
        j("SEQ1M QD1 write, loop", Dev::Loop, "write", 1 << 20, 1),
        j("SEQ1M QD8 read, loop", Dev::Loop, "read", 1 << 20, 8),
        j("SEQ1M QD8 write, loop", Dev::Loop, "write", 1 << 20, 8),
        j(
            "RND4K QD32 randread, ext4 file",
            Dev::Ext4File,
            "randread",
            4096,
            32,
        ),
    ]
}

/// Waits (up to 3 s) until the CPUs are idle, so no contender starts while the kernel is
/// still busy after the one before: freeing a zram device's pages, a loop worker finishing,
/// writeback. Each 100 ms look must find at least 95 % of the CPU time idle.
fn settle() {
    let cpu_times = || -> (u64, u64) {
        let stat = std::fs::read_to_string("/proc/stat").unwrap_or_default();
        let v: Vec<u64> = stat
            .lines()
            .next()
            .unwrap_or_default()
            .split_whitespace()
            .skip(1)
            .filter_map(|x| x.parse().ok())
            .collect();
        // user nice system idle iowait irq softirq steal: idle and iowait are idle.
        let idle = v.get(3).copied().unwrap_or(0) + v.get(4).copied().unwrap_or(0);
        (v.iter().take(8).sum(), idle)
    };
    let until = std::time::Instant::now() + std::time::Duration::from_secs(3);
    while std::time::Instant::now() < until {
        let (t0, i0) = cpu_times();
        std::thread::sleep(std::time::Duration::from_millis(100));
        let (t1, i1) = cpu_times();
        if t1 > t0 && (i1 - i0) as f64 >= 0.95 * (t1 - t0) as f64 {
            return;
        }
    }
}

fn output(cmd: &str, args: &[&str]) -> String {
    let out = Command::new(cmd).args(args).output().unwrap();
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// The devices the jobs use; everything is removed again on drop, also after a panic.
#[derive(Default)]
struct Env {
    zram_lock: Option<Flock<std::fs::File>>,
    tmp: Option<tempfile::TempDir>,
    loopdev: Option<String>,
    ext4_loop: Option<String>,
    mount: Option<PathBuf>,
    file: Option<PathBuf>,
}

impl Env {
    fn tmp(&mut self) -> PathBuf {
        self.tmp
            .get_or_insert_with(|| {
                tempfile::Builder::new()
                    .prefix("vs-fio.")
                    .tempdir_in("/dev/shm")
                    .expect("tmpfs dir")
            })
            .path()
            .to_path_buf()
    }

    fn zram(&mut self, bin: &str) {
        let lock_file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(ZRAM_LOCK)
            .unwrap();
        self.zram_lock = Some(Flock::lock(lock_file, FlockArg::LockExclusive).expect("lock zram0"));
        let zram = Path::new("/sys/block/zram0");
        let size = std::fs::read_to_string(zram.join("disksize")).unwrap_or_default();
        if size.trim() != "0" {
            self.zram_lock = None;
            panic!("vs_fio: /dev/zram0 is in use by someone else");
        }
        std::fs::write(zram.join("disksize"), (1u64 << 30).to_string()).expect("configure zram0");
        prefill(bin, "/dev/zram0", "zram0", "1G");
    }

    fn loop_dev(&mut self, bin: &str) {
        let image = self.tmp().join("loop.img");
        std::fs::File::create(&image)
            .unwrap()
            .set_len(2 << 30)
            .unwrap();
        let dev = output("losetup", &["--find", "--show", image.to_str().unwrap()]);
        assert!(dev.starts_with("/dev/loop"), "losetup: {dev}");
        self.loopdev = Some(dev.clone());
        prefill(bin, &dev, dev.trim_start_matches("/dev/"), "2G");
    }

    fn ext4_file(&mut self, bin: &str) {
        let image = self.tmp().join("ext4.img");
        std::fs::File::create(&image)
            .unwrap()
            .set_len(1536 << 20)
            .unwrap();
        let dev = output("losetup", &["--find", "--show", image.to_str().unwrap()]);
        assert!(dev.starts_with("/dev/loop"), "losetup: {dev}");
        self.ext4_loop = Some(dev.clone());
        let st = Command::new("mkfs.ext4")
            .args(["-q", "-F", &dev])
            .status()
            .unwrap();
        assert!(st.success(), "mkfs.ext4 {dev}");
        let mnt = self.tmp().join("mnt");
        std::fs::create_dir_all(&mnt).unwrap();
        let st = Command::new("mount").arg(&dev).arg(&mnt).status().unwrap();
        assert!(st.success(), "mount {dev}");
        self.mount = Some(mnt.clone());
        // disktriage creates a missing file at --size and fills it with random data.
        let file = mnt.join("data.bin");
        let st = Command::new(bin)
            .env(
                "DISKTRIAGE_HISTORY_DIR",
                concat!(env!("CARGO_TARGET_TMPDIR"), "/bench-history"),
            )
            .args(["run", file.to_str().unwrap(), "--test", "seq-read"])
            .args(["--size", "1G", "--count", "1"])
            .stdout(std::process::Stdio::null())
            .status()
            .unwrap();
        assert!(st.success(), "create {}", file.display());
        self.file = Some(file);
    }

    fn place(&self, dev: Dev) -> Place {
        let block = |p: &str| Place {
            path: p.to_string(),
            stat_dev: p.trim_start_matches("/dev/").to_string(),
        };
        match dev {
            Dev::Zram => block("/dev/zram0"),
            Dev::Loop => block(self.loopdev.as_deref().unwrap()),
            Dev::Ext4File => Place {
                path: self.file.as_ref().unwrap().to_string_lossy().into_owned(),
                stat_dev: self
                    .ext4_loop
                    .as_deref()
                    .unwrap()
                    .trim_start_matches("/dev/")
                    .to_string(),
            },
        }
    }
}

impl Drop for Env {
    fn drop(&mut self) {
        if let Some(m) = &self.mount {
            // A ring with a registered file (fio's `--registerfiles`) is torn down by the
            // kernel after its process exits, holding the file a moment longer: try again.
            for _ in 0..10 {
                let unmounted = Command::new("umount")
                    .arg(m)
                    .stderr(std::process::Stdio::null())
                    .status()
                    .is_ok_and(|s| s.success());
                if unmounted {
                    break;
                }
                std::thread::sleep(std::time::Duration::from_millis(500));
            }
        }
        for dev in [&self.ext4_loop, &self.loopdev].into_iter().flatten() {
            let _ = Command::new("losetup").args(["-d", dev]).status();
        }
        if self.zram_lock.is_some() {
            let _ = std::fs::write("/sys/block/zram0/reset", "1");
        }
    }
}

/// Fills a device with incompressible data so reads are real.
fn prefill(bin: &str, dev: &str, name: &str, size: &str) {
    let st = Command::new(bin)
        .env(
            "DISKTRIAGE_HISTORY_DIR",
            concat!(env!("CARGO_TARGET_TMPDIR"), "/bench-history"),
        )
        .args([
            "run",
            dev,
            "--test",
            "seq-write",
            "--qd",
            "8",
            "--time",
            "0",
        ])
        .args(["--io-size", size, "--destroy-data", name])
        .stdout(std::process::Stdio::null())
        .status()
        .unwrap();
    assert!(st.success(), "prefill {dev}");
}

/// The middle value (the upper one of an even count), as every median in this table.
fn middle(mut x: Vec<f64>) -> f64 {
    x.sort_by(f64::total_cmp);
    x[x.len() / 2]
}

fn median(v: &[Measure]) -> Measure {
    let pick = |f: fn(&Measure) -> f64| middle(v.iter().map(f).collect());
    Measure {
        iops: pick(|m| m.iops),
        cpu_us_per_io: pick(|m| m.cpu_us_per_io),
        p50_us: pick(|m| m.p50_us),
        p99_us: pick(|m| m.p99_us),
        kernel_iops: pick(|m| m.kernel_iops),
        engine: engines_of_rounds(v),
    }
}

/// disktriage's engine over the rounds: the last round's choice when every round used the
/// same engine, else every round's, so a round that probed its way to the slower engine shows.
fn engines_of_rounds(v: &[Measure]) -> String {
    let used = |m: &Measure| m.engine.split(" - ").next().unwrap_or("").to_string();
    let Some(last) = v.last() else {
        return String::new();
    };
    if v.iter().all(|m| used(m) == used(last)) {
        return format!("{} (every round)", last.engine);
    }
    let rounds: Vec<String> = v
        .iter()
        .enumerate()
        .map(|(i, m)| format!("round {}: {}", i + 1, m.engine))
        .collect();
    format!("the rounds differ: {}", rounds.join("; "))
}

/// Where the kernel's count is read, as offsets from a tool's start: from half a second after
/// the 1 s warm-up (fio's ramp_time) to a quarter second before the measured `secs` end, so the
/// window lies inside every tool's measured time whatever its start-up takes. None below 2 s.
fn kernel_window(secs: u64) -> Option<(Duration, Duration)> {
    (secs >= 2).then(|| {
        (
            Duration::from_millis(1500),
            Duration::from_millis(1000 + secs * 1000 - 250),
        )
    })
}

/// What a contender's run gives, measured from outside the same way for every tool.
struct Run {
    out: std::process::Output,
    cpu_s: f64,
    /// I/Os the kernel counted on the device over the whole run.
    ios: f64,
    /// I/Os per second the kernel counted in the window (NaN without one).
    kernel_iops: f64,
}

/// Runs `cmd` and returns its output, its CPU time, the I/Os the kernel counted on `dev`, and
/// the kernel's rate in `window` (offsets from the start).
fn measured(mut cmd: Command, dev: &str, bs: u64, window: Option<(Duration, Duration)>) -> Run {
    let stat = || -> u64 {
        let s = std::fs::read_to_string(format!("/sys/block/{dev}/stat")).unwrap();
        let v: Vec<u64> = s.split_whitespace().map(|x| x.parse().unwrap()).collect();
        (v[2] + v[6]) * 512
    };
    let (b0, c0) = (stat(), children_cpu_time());
    let started = Instant::now();
    let child = cmd
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run benchmark child");
    let mut kernel_iops = f64::NAN;
    if let Some((from, to)) = window {
        std::thread::sleep(from.saturating_sub(started.elapsed()));
        let (w0, t0) = (stat(), Instant::now());
        std::thread::sleep(to.saturating_sub(started.elapsed()));
        let (w1, t1) = (stat(), Instant::now());
        kernel_iops = (w1 - w0) as f64 / bs as f64 / (t1 - t0).as_secs_f64();
    }
    // Reads both pipes while waiting: a large JSON report does not block the child.
    let out = child.wait_with_output().expect("wait for benchmark child");
    let (b1, c1) = (stat(), children_cpu_time());
    Run {
        out,
        cpu_s: (c1 - c0).as_secs_f64(),
        ios: (b1 - b0) as f64 / bs as f64,
        kernel_iops,
    }
}

fn run_fio(
    who: Contender,
    job: &Job,
    place: &Place,
    secs: u64,
    window: Option<(Duration, Duration)>,
) -> Measure {
    let mut cmd = Command::new("fio");
    cmd.args([
        "--name=bench",
        &format!("--filename={}", place.path),
        "--direct=1",
        &format!("--rw={}", job.rw),
        &format!("--bs={}", job.bs),
        "--group_reporting",
        "--time_based",
        &format!("--runtime={secs}"),
        "--ramp_time=1",
        "--randrepeat=1",
        "--norandommap",
        "--lat_percentiles=1",
        "--output-format=json",
    ]);
    if place.path.starts_with("/dev/") {
        // A sequential psync job per thread reads its own slice, as disktriage's export says.
        if who == Contender::FioPsync && !job.rw.starts_with("rand") && job.qd > 1 {
            let size = std::fs::read_to_string(format!("/sys/block/{}/size", place.stat_dev))
                .unwrap()
                .trim()
                .parse::<u64>()
                .unwrap()
                * 512;
            let slice = size / u64::from(job.qd) / job.bs * job.bs;
            cmd.arg(format!("--size={slice}"))
                .arg(format!("--offset_increment={slice}"));
        }
    } else {
        cmd.arg("--size=1G");
    }
    match who {
        Contender::FioPsync => {
            cmd.args(["--ioengine=psync", "--iodepth=1", "--thread"])
                .arg(format!("--numjobs={}", job.qd));
        }
        Contender::FioUring | Contender::FioUringBatch => {
            cmd.args([
                "--ioengine=io_uring",
                "--fixedbufs",
                "--registerfiles",
                "--numjobs=1",
            ])
            .arg(format!("--iodepth={}", job.qd));
            if who == Contender::FioUringBatch {
                cmd.arg(format!("--iodepth_batch_submit={}", job.qd))
                    .arg(format!("--iodepth_batch_complete_max={}", job.qd));
            }
        }
        Contender::Disktriage => unreachable!("not a fio set-up"),
    }
    if job.rw.contains("write") {
        cmd.arg("--scramble_buffers=0");
    }
    let Run {
        out,
        cpu_s,
        ios,
        kernel_iops,
    } = measured(cmd, &place.stat_dev, job.bs, window);
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
    let pct = &dir["lat_ns"]["percentile"];
    Measure {
        iops: dir["iops"].as_f64().unwrap(),
        cpu_us_per_io: cpu_s / ios * 1e6,
        p50_us: pct["50.000000"].as_f64().unwrap_or(0.0) / 1e3,
        p99_us: pct["99.000000"].as_f64().unwrap_or(0.0) / 1e3,
        kernel_iops,
        engine: String::new(),
    }
}

/// With `VS_FIO_KEEP=DIR`, every disktriage report is kept there (`<job>-<n>.json`, in the
/// order they ran), so a round far from the rest can be read interval by interval.
fn keep_report(job: &Job, json: &[u8]) {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static RUNS: AtomicUsize = AtomicUsize::new(0);
    let Some(dir) = std::env::var_os("VS_FIO_KEEP") else {
        return;
    };
    let n = RUNS.fetch_add(1, Ordering::Relaxed) + 1;
    let name: String = job
        .name
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    let dir = PathBuf::from(dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join(format!("{name}-{n:03}.json")), json).unwrap();
}

fn run_dt(
    bin: &str,
    job: &Job,
    place: &Place,
    secs: u64,
    window: Option<(Duration, Duration)>,
) -> Measure {
    let test = match job.rw {
        "randread" => "rand-read",
        "randwrite" => "rand-write",
        "read" => "seq-read",
        _ => "seq-write",
    };
    let mut cmd = Command::new(bin);
    cmd.env(
        "DISKTRIAGE_HISTORY_DIR",
        concat!(env!("CARGO_TARGET_TMPDIR"), "/bench-history"),
    );
    cmd.args(["run", &place.path, "--test", test])
        .args(["--bs", &job.bs.to_string(), "--qd", &job.qd.to_string()])
        .args(["--time", &secs.to_string(), "--warmup", "1", "--json"]);
    if job.rw.contains("write") {
        cmd.args(["--destroy-data", &place.stat_dev]);
    }
    let Run {
        out,
        cpu_s,
        ios,
        kernel_iops,
    } = measured(cmd, &place.stat_dev, job.bs, window);
    assert!(
        out.status.success(),
        "disktriage failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    keep_report(job, &out.stdout);
    let doc: Value = serde_json::from_slice(&out.stdout).expect("disktriage JSON");
    let p = &doc["outcome"]["phases"][0];
    let dir = if job.rw.contains("write") {
        &p["write"]
    } else {
        &p["read"]
    };
    Measure {
        iops: dir["iops"].as_f64().unwrap(),
        cpu_us_per_io: cpu_s / ios * 1e6,
        p50_us: dir["latency"]["p50_ns"].as_f64().unwrap_or(0.0) / 1e3,
        p99_us: dir["latency"]["p99_ns"].as_f64().unwrap_or(0.0) / 1e3,
        kernel_iops,
        engine: format!(
            "{} - {}",
            p["engine"].as_str().unwrap_or("?"),
            p["engine_choice"]["reason"].as_str().unwrap_or("?")
        ),
    }
}
