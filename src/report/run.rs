//! Headless output of a test run: the human summary, JSON (summary plus the per-interval
//! series), CSV (the series), and the equivalent fio command lines.
//!
//! Units: throughput in MB/s (10^6 bytes per second) with MiB/s (2^20) beside it where both
//! help, latency in milliseconds in text and nanoseconds in JSON. A buffered run says BUFFERED
//! in every format.

use std::fmt::Write as _;

use serde::Serialize;

use crate::bench::catalog::TestName;
use crate::bench::plan::{Access, Mix};
use crate::bench::runner::{PhaseResult, RunOutcome};
use crate::bench::spec::{Job, PhaseTag, Plan, sweep_column};
use crate::bench::stats::LatencySummary;
use crate::bench::target::TargetInfo;
use crate::model::{Bytes, BytesPerSec};
use crate::sys::direct::SyncMode;
use crate::sys::host::HostInfo;
use crate::sys::parse::neutralize_controls;

/// Version of the JSON result layout.
pub const RUN_JSON_SCHEMA: u32 = 1;

/// Everything a result file holds.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunReport {
    pub schema: u32,
    pub tool: String,
    /// Seconds since the Unix epoch when the run started.
    pub started_unix: u64,
    pub host: HostInfo,
    pub test: TestName,
    pub target: TargetInfo,
    pub plan: Plan,
    pub outcome: RunOutcome,
    /// Notes from preparing the target (skipped writes, say).
    pub notes: Vec<String>,
}

impl RunReport {
    pub fn error(&self) -> Option<String> {
        self.outcome.error()
    }
}

fn mbps(bytes_per_sec: f64) -> f64 {
    BytesPerSec(bytes_per_sec).mb_per_sec()
}

fn ms(ns: f64) -> String {
    format!("{:.3}", ns / 1e6)
}

fn latency_line(l: &LatencySummary) -> String {
    format!(
        "min {}  mean {}  p50 {}  p90 {}  p99 {}  p99.9 {}  max {}",
        ms(l.min_ns as f64),
        ms(l.mean_ns),
        ms(l.p50_ns as f64),
        ms(l.p90_ns as f64),
        ms(l.p99_ns as f64),
        ms(l.p999_ns as f64),
        ms(l.max_ns as f64)
    )
}

fn how(plan: &Plan, job: &Job, p: Option<&PhaseResult>) -> String {
    let io = if plan.direct {
        "O_DIRECT"
    } else {
        "BUFFERED (page cache)"
    };
    let engine = match p {
        Some(r) if r.fixed_buffers => format!("{} (fixed buffers)", r.engine.as_str()),
        Some(r) => r.engine.as_str().to_string(),
        None => plan.engine.as_str().to_string(),
    };
    let sync = match job.sync {
        SyncMode::None => "",
        SyncMode::Dsync => ", O_DSYNC writes",
        SyncMode::Sync => ", O_SYNC writes",
    };
    format!("{io}, {engine}, {}{sync}", job.describe())
}

fn bounds(plan: &Plan, job: &Job) -> String {
    let mut s = String::new();
    match (job.time, job.ops_per_worker) {
        (Some(t), Some(n)) => {
            let _ = write!(s, "up to {:.1} s or {n} I/Os per worker", t.as_secs_f64());
        }
        (Some(t), None) => {
            let _ = write!(s, "{:.1} s", t.as_secs_f64());
        }
        (None, Some(n)) => {
            let _ = write!(
                s,
                "{n} I/Os ({}) per worker",
                Bytes(n.saturating_mul(job.bs)).iec()
            );
        }
        (None, None) => s.push_str("until stopped"),
    }
    if job.warmup.is_zero() {
        s.push_str(", no warm-up");
    } else {
        let _ = write!(
            s,
            " after a {:.1} s warm-up (discarded)",
            job.warmup.as_secs_f64()
        );
    }
    let _ = write!(s, "; samples every {} ms", plan.interval.as_millis());
    s
}

fn target_line(t: &TargetInfo) -> String {
    let mut s = neutralize_controls(&t.path.display().to_string());
    let mut facts = Vec::new();
    if t.kind == "file" {
        facts.push(format!(
            "file{}",
            if t.created {
                ", created by this run"
            } else {
                ""
            }
        ));
        if let Some(d) = &t.device {
            facts.push(format!("on {d}"));
        }
    } else if let Some(tr) = t.transport {
        facts.push(tr.to_string());
    }
    if let Some(m) = &t.model {
        facts.push(m.clone());
    }
    facts.push(Bytes(t.size_bytes).iec());
    facts.push(format!("{}-byte sectors", t.logical_block_size));
    let _ = write!(s, " ({})", facts.join(", "));
    let _ = write!(
        s,
        "; scheduler {}, kernel write cache {}",
        t.scheduler.as_deref().unwrap_or("-"),
        t.kernel_write_cache.map_or("?", |c| c.as_str())
    );
    s
}

/// Fewest I/Os, and shortest measured time, over which a rate (MB/s, IOPS) is worth showing.
/// Below either, a rate mostly measures the setup around the I/O: the figures say how many
/// I/Os took how long instead.
pub const MIN_RATE_OPS: u64 = 100;
pub const MIN_RATE_SECONDS: f64 = 0.01;

/// Is a rate over `ops` I/Os in `seconds` worth showing?
pub fn rate_meaningful(ops: u64, seconds: f64) -> bool {
    ops >= MIN_RATE_OPS && seconds >= MIN_RATE_SECONDS
}

/// The time base of a rate: "1 I/O in 0.90 ms", "4096 I/Os in 2.00 s".
pub fn time_base(ops: u64, seconds: f64) -> String {
    let what = if ops == 1 { "I/O" } else { "I/Os" };
    if seconds < 1.0 {
        format!("{ops} {what} in {:.2} ms", seconds * 1e3)
    } else {
        format!("{ops} {what} in {seconds:.2} s")
    }
}

fn dir_lines(out: &mut String, name: &str, d: &crate::bench::runner::DirTotals, seconds: f64) {
    if d.ops == 0 {
        return;
    }
    if !rate_meaningful(d.ops, seconds) {
        let _ = writeln!(
            out,
            "{name:<6} {}: {} (too few for MB/s or IOPS)",
            Bytes(d.bytes).iec(),
            time_base(d.ops, seconds)
        );
        if let Some(l) = &d.latency {
            let _ = writeln!(out, "       latency (ms): {}", latency_line(l));
        }
        return;
    }
    let _ = writeln!(
        out,
        "{name:<6} {:>10.1} MB/s ({:.1} MiB/s)  {:>10.0} IOPS  {} in {:.2} s",
        mbps(d.bytes_per_sec),
        BytesPerSec(d.bytes_per_sec).mib_per_sec(),
        d.iops,
        Bytes(d.bytes).iec(),
        seconds
    );
    if let Some(l) = &d.latency {
        let _ = writeln!(out, "       latency (ms): {}", latency_line(l));
    }
}

fn witness_lines(out: &mut String, p: &PhaseResult) {
    match (&p.witness, &p.witness_note) {
        (Some(w), _) => {
            let _ = writeln!(
                out,
                "kernel {}: read {} in {} I/Os, wrote {} in {} I/Os ({:+.2} % bytes vs ours){}",
                w.source,
                w.read_bytes,
                w.read_ios + w.read_merges,
                w.write_bytes,
                w.write_ios + w.write_merges,
                w.bytes_diff_pct,
                if w.agrees { " - agrees" } else { "" }
            );
            if w.agrees && w.ios_diff_pct > 2.0 {
                let _ = writeln!(
                    out,
                    "       (the block layer split requests: {:.1} device I/Os per test I/O)",
                    1.0 + w.ios_diff_pct / 100.0
                );
            }
            if !w.agrees {
                let _ = writeln!(
                    out,
                    "WARNING: the kernel's counters differ from this test's by more than 2 %: \
                     another program used the device, or a cache served part of the I/O"
                );
            }
        }
        (None, Some(note)) => {
            let _ = writeln!(out, "kernel counters: {note}");
        }
        (None, None) => {}
    }
}

fn phase_text(out: &mut String, plan: &Plan, p: &PhaseResult) {
    let _ = writeln!(out, "how:   {}", how(plan, &p.job, Some(p)));
    let _ = writeln!(out, "       {}", bounds(plan, &p.job));
    dir_lines(out, "read", &p.read, p.seconds);
    dir_lines(out, "write", &p.write, p.seconds);
    let ops = p.read.ops + p.write.ops;
    if ops > 0 && p.seconds > 0.0 {
        let _ = writeln!(
            out,
            "cpu    {:.2} s for the process ({:.0} % of a core), {:.2} us per I/O",
            p.cpu_seconds,
            p.cpu_seconds / p.seconds * 100.0,
            p.cpu_seconds / ops as f64 * 1e6
        );
    }
    if p.workers.len() > 1 && p.job.split_region {
        for w in &p.workers {
            let _ = writeln!(
                out,
                "  worker {} (offset {}, {}): {:.1} MB/s, {} in {:.2} s",
                w.worker,
                Bytes(w.region_start).iec(),
                Bytes(w.region_len).iec(),
                mbps(w.bytes_per_sec),
                Bytes(w.bytes).iec(),
                w.seconds
            );
        }
        let _ = writeln!(out, "  total: {:.1} MB/s", mbps(p.bytes_per_sec()));
    }
    if p.job.ops_per_worker.is_some()
        && p.job.qd == 1
        && p.job.workers == 1
        && let Some(l) = p.latency()
    {
        let _ = writeln!(
            out,
            "       {} I/Os of {} bytes took {:.3} s: {} ms per I/O on average",
            l.count,
            p.job.bs,
            p.seconds,
            ms(l.mean_ns)
        );
    }
    witness_lines(out, p);
    if let Some(f) = &p.failure {
        let _ = writeln!(
            out,
            "ERROR: {} (what completed before it is reported above)",
            f.describe()
        );
    }
    if let Some(e) = &p.setup_error {
        let _ = writeln!(out, "ERROR: {e}");
    }
    if p.stopped {
        let _ = writeln!(
            out,
            "stopped by the admin; the figures cover what completed"
        );
    }
}

/// The human summary `disktriage run` prints.
pub fn render_text(r: &RunReport) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{} on {}", r.test, target_line(&r.target));
    for n in r.plan.notes.iter().chain(&r.notes).chain(&r.outcome.notes) {
        // Notes may name the target file, whose name may hold control characters.
        let _ = writeln!(out, "note:  {}", neutralize_controls(n));
    }
    match r.test {
        TestName::SizeSweep => {
            out.push_str(&sweep_table(r));
            for p in r
                .outcome
                .phases
                .iter()
                .filter(|p| !p.ok() || p.witness.as_ref().is_some_and(|w| !w.agrees))
            {
                let _ = writeln!(out, "{}:", p.label);
                witness_lines(&mut out, p);
                if let Some(f) = &p.failure {
                    let _ = writeln!(out, "ERROR: {}", f.describe());
                }
            }
        }
        TestName::QdSweep => out.push_str(&qd_table(r)),
        TestName::Cdm | TestName::CdmNvme => out.push_str(&cdm_grid(r)),
        _ => {
            for p in &r.outcome.phases {
                phase_text(&mut out, &r.plan, p);
            }
        }
    }
    if let Some(e) = r.error()
        && matches!(
            r.test,
            TestName::SizeSweep | TestName::QdSweep | TestName::Cdm | TestName::CdmNvme
        )
    {
        let _ = writeln!(out, "ERROR: {e}");
    }
    out
}

/// diskperf's table: one row per request size, MB/s per pattern and direction, gnuplot-ready
/// (comment lines start with #, missing values are "-").
pub fn sweep_table(r: &RunReport) -> String {
    let mut out = String::new();
    let phases = &r.outcome.phases;
    let mut sizes: Vec<u64> = r.plan.phases.iter().map(|p| p.job.bs).collect();
    sizes.dedup();
    let job = r.plan.phases.first().map(|p| &p.job);
    let _ = writeln!(
        out,
        "#---------------------------------------------------------"
    );
    let _ = writeln!(out, "# Test name : {}", r.test);
    let _ = writeln!(out, "# Target : {}", target_line(&r.target));
    let _ = writeln!(
        out,
        "# Request sizes : min={} max={}",
        sizes.first().copied().unwrap_or(0),
        sizes.last().copied().unwrap_or(0)
    );
    if let Some(j) = job {
        let _ = writeln!(
            out,
            "# Parameters : direct={} engine={} qd={} time={} warmup={}",
            u8::from(r.plan.direct),
            r.outcome.engine.as_str(),
            j.qd,
            j.time.map_or(0.0, |t| t.as_secs_f64()),
            j.warmup.as_secs_f64()
        );
    }
    let _ = writeln!(
        out,
        "# Missing values are \"-\" (gnuplot: set datafile missing \"-\")"
    );
    let _ = writeln!(
        out,
        "#---------------------------------------------------------"
    );
    let cols = [
        (Access::Forward, true),
        (Access::Forward, false),
        (Access::Backward, true),
        (Access::Backward, false),
        (Access::Random, true),
        (Access::Random, false),
    ];
    let mut header = format!("# {:<10}", "req_size");
    let mut units = format!("# {:<10}", "(bytes)");
    for (a, w) in cols {
        let _ = write!(header, " {:>9}", sweep_column(a, w));
        let _ = write!(units, " {:>9}", "(MB/s)");
    }
    let _ = writeln!(out, "{header}\n{units}");
    let _ = writeln!(
        out,
        "#---------------------------------------------------------"
    );
    for bs in sizes {
        let mut line = format!("{bs:<12}");
        for (a, w) in cols {
            let cell = phases
                .iter()
                .find(|p| {
                    p.job.bs == bs
                        && p.tag
                            == PhaseTag::Sweep {
                                access: a,
                                write: w,
                            }
                })
                .filter(|p| p.ok())
                .map_or("-".to_string(), |p| {
                    format!("{:.2}", mbps(p.bytes_per_sec()))
                });
            let _ = write!(line, " {cell:>9}");
        }
        let _ = writeln!(out, "{}", line.trim_end());
    }
    out
}

/// ORION-style: per queue depth the small-I/O IOPS and latency and the large-I/O MB/s, then
/// the maxima and the load at which each was reached.
pub fn qd_table(r: &RunReport) -> String {
    let mut out = String::new();
    let phases = &r.outcome.phases;
    let small: Vec<&PhaseResult> = phases
        .iter()
        .filter(|p| matches!(p.tag, PhaseTag::QdSweep { small: true, .. }) && p.ok())
        .collect();
    let large: Vec<&PhaseResult> = phases
        .iter()
        .filter(|p| matches!(p.tag, PhaseTag::QdSweep { small: false, .. }) && p.ok())
        .collect();
    let small_bs = small.first().map_or(8192, |p| p.job.bs);
    let _ = writeln!(
        out,
        "{:>5}  {:>12} {:>10} {:>12} {:>12}  {:>12}",
        "QD",
        format!("{} IOPS", Bytes(small_bs).short()),
        "MB/s",
        "mean lat ms",
        "p99 lat ms",
        "1M seq MB/s"
    );
    let qd_of = |p: &PhaseResult| match p.tag {
        PhaseTag::QdSweep { qd, .. } => qd,
        _ => 0,
    };
    let mut qds: Vec<u32> = phases.iter().map(qd_of).collect();
    qds.sort_unstable();
    qds.dedup();
    for q in qds {
        let s = small.iter().find(|p| qd_of(p) == q);
        let l = large.iter().find(|p| qd_of(p) == q);
        let _ = writeln!(
            out,
            "{q:>5}  {:>12} {:>10} {:>12} {:>12}  {:>12}",
            s.map_or("-".into(), |p| format!("{:.0}", p.iops())),
            s.map_or("-".into(), |p| format!("{:.1}", mbps(p.bytes_per_sec()))),
            s.and_then(|p| p.latency())
                .map_or("-".into(), |l| ms(l.mean_ns)),
            s.and_then(|p| p.latency())
                .map_or("-".into(), |l| ms(l.p99_ns as f64)),
            l.map_or("-".into(), |p| format!("{:.1}", mbps(p.bytes_per_sec()))),
        );
    }
    if let Some(p) = large
        .iter()
        .max_by(|a, b| a.bytes_per_sec().total_cmp(&b.bytes_per_sec()))
    {
        let _ = writeln!(
            out,
            "Maximum Large MBPS={:.2} @ QD {}",
            mbps(p.bytes_per_sec()),
            qd_of(p)
        );
    }
    if let Some(p) = small.iter().max_by(|a, b| a.iops().total_cmp(&b.iops())) {
        let _ = writeln!(out, "Maximum Small IOPS={:.0} @ QD {}", p.iops(), qd_of(p));
    }
    if let Some((p, l)) = small
        .iter()
        .filter_map(|p| p.latency().map(|l| (p, l)))
        .min_by(|a, b| a.1.mean_ns.total_cmp(&b.1.mean_ns))
    {
        let _ = writeln!(
            out,
            "Minimum Small Latency={} ms @ QD {}",
            ms(l.mean_ns),
            qd_of(p)
        );
    }
    out
}

/// CrystalDiskMark's grid: one row per test, read and write side by side.
pub fn cdm_grid(r: &RunReport) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:<14} {:>11} {:>11} {:>10} {:>10} {:>10} {:>10}",
        "", "Read MB/s", "Write MB/s", "Read IOPS", "Write IOPS", "Read ms", "Write ms"
    );
    let mut rows: Vec<&str> = Vec::new();
    for p in &r.plan.phases {
        if let PhaseTag::Cdm { row, .. } = &p.tag
            && !rows.contains(&row.as_str())
        {
            rows.push(row);
        }
    }
    for row in rows {
        let find = |write: bool| {
            r.outcome.phases.iter().find(|p| {
                p.ok()
                    && p.tag
                        == PhaseTag::Cdm {
                            row: row.to_string(),
                            write,
                        }
            })
        };
        let (rd, wr) = (find(false), find(true));
        let rate = |p: Option<&PhaseResult>| {
            p.map_or("-".into(), |p| format!("{:.2}", mbps(p.bytes_per_sec())))
        };
        let iops = |p: Option<&PhaseResult>| p.map_or("-".into(), |p| format!("{:.0}", p.iops()));
        let lat = |p: Option<&PhaseResult>| {
            p.and_then(|p| p.latency())
                .map_or("-".into(), |l| ms(l.mean_ns))
        };
        let _ = writeln!(
            out,
            "{row:<14} {:>11} {:>11} {:>10} {:>10} {:>10} {:>10}",
            rate(rd),
            rate(wr),
            iops(rd),
            iops(wr),
            lat(rd),
            lat(wr)
        );
    }
    if let Some(j) = r.plan.phases.first().map(|p| &p.job) {
        let _ = writeln!(
            out,
            "each {} after a {:.1} s warm-up; {}; region {}",
            j.time.map_or("bounded by count".into(), |t| format!(
                "{:.1} s",
                t.as_secs_f64()
            )),
            j.warmup.as_secs_f64(),
            if r.plan.direct {
                "O_DIRECT"
            } else {
                "BUFFERED (page cache)"
            },
            Bytes(j.region_len).iec()
        );
    }
    for p in r
        .outcome
        .phases
        .iter()
        .filter(|p| p.witness.as_ref().is_some_and(|w| !w.agrees))
    {
        let _ = writeln!(out, "{}:", p.label);
        witness_lines(&mut out, p);
    }
    out
}

/// The result as JSON: the summary of every phase and its per-interval series.
pub fn render_json(r: &RunReport) -> anyhow::Result<String> {
    let mut s = serde_json::to_string_pretty(&json_safe(r))?;
    s.push('\n');
    Ok(s)
}

/// The report with a target path JSON can hold. JSON strings are Unicode and a Linux path is
/// bytes: a path that is not UTF-8 is written with U+FFFD for each byte sequence that is not
/// (as `to_string_lossy` does), so the result of a finished run is never lost to its name.
/// The text report shows the same name.
pub fn json_safe(r: &RunReport) -> std::borrow::Cow<'_, RunReport> {
    if r.target.path.to_str().is_some() {
        return std::borrow::Cow::Borrowed(r);
    }
    let mut owned = r.clone();
    owned.target.path = r.target.path.to_string_lossy().into_owned().into();
    std::borrow::Cow::Owned(owned)
}

/// The per-interval series of every phase as CSV, one row per interval.
pub fn render_csv(r: &RunReport) -> String {
    let mut out = String::new();
    if !r.plan.direct {
        out.push_str("# BUFFERED (page cache): figures may not reflect the device\n");
    }
    out.push_str(
        "phase,label,start_s,end_s,read_bytes,read_ops,read_MBps,read_iops,read_p50_us,\
         read_p99_us,read_p999_us,read_max_us,write_bytes,write_ops,write_MBps,write_iops,\
         write_p50_us,write_p99_us,write_p999_us,write_max_us\n",
    );
    for (i, p) in r.outcome.phases.iter().enumerate() {
        for pt in &p.series.points {
            let secs = pt.seconds();
            let _ = write!(
                out,
                "{i},{},{:.3},{:.3}",
                csv_field(&p.label),
                pt.start_s,
                pt.end_s
            );
            for d in [&pt.read, &pt.write] {
                let rate = if secs > 0.0 {
                    d.bytes as f64 / secs
                } else {
                    0.0
                };
                let iops = if secs > 0.0 { d.ops as f64 / secs } else { 0.0 };
                let _ = write!(out, ",{},{},{:.3},{:.1}", d.bytes, d.ops, rate / 1e6, iops);
                match d.latency {
                    Some(l) => {
                        let _ = write!(
                            out,
                            ",{:.3},{:.3},{:.3},{:.3}",
                            l.p50_ns as f64 / 1e3,
                            l.p99_ns as f64 / 1e3,
                            l.p999_ns as f64 / 1e3,
                            l.max_ns as f64 / 1e3
                        );
                    }
                    None => out.push_str(",,,,"),
                }
            }
            out.push('\n');
        }
    }
    out
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// The fio command line that runs the same job, one per phase.
pub fn fio_commands(plan: &Plan, target: &std::path::Path) -> String {
    let mut out = String::new();
    for p in &plan.phases {
        let j = &p.job;
        let rw = match (j.access, j.mix) {
            (Access::Random, Mix::Read) => "randread".to_string(),
            (Access::Random, Mix::Write) => "randwrite".to_string(),
            (Access::Random, Mix::Mixed { read_pct }) => format!("randrw --rwmixread={read_pct}"),
            (_, Mix::Read) => "read".to_string(),
            (_, Mix::Write) => "write".to_string(),
            (_, Mix::Mixed { read_pct }) => format!("rw --rwmixread={read_pct}"),
        };
        if j.access == Access::Backward {
            let _ = writeln!(
                out,
                "# fio has no backward sequential pattern; forward shown"
            );
        }
        let name: String = p
            .label
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        let mut cmd = format!(
            "fio --name={name} --filename={} --ioengine={} --direct={} --rw={rw} --bs={} \
             --iodepth={} --numjobs={} --group_reporting --randrepeat=1 --norandommap",
            shell_quote(&target.to_string_lossy()),
            match plan.engine {
                crate::bench::spec::EngineKind::Uring => "io_uring",
                crate::bench::spec::EngineKind::Sync => "psync",
            },
            u8::from(plan.direct),
            j.bs,
            j.qd,
            j.workers
        );
        let (_, slice) = j.worker_region(0);
        if j.split_region && j.workers > 1 {
            let _ = write!(
                cmd,
                " --offset={} --size={slice} --offset_increment={slice}",
                j.region_start
            );
        } else {
            let _ = write!(cmd, " --offset={} --size={}", j.region_start, j.region_len);
        }
        if let Some(t) = j.time {
            let _ = write!(cmd, " --time_based --runtime={}ms", t.as_millis());
        }
        if !j.warmup.is_zero() {
            let _ = write!(cmd, " --ramp_time={}ms", j.warmup.as_millis());
        }
        if let Some(n) = j.ops_per_worker {
            let _ = write!(cmd, " --number_ios={n}");
        }
        match j.sync {
            SyncMode::None => {}
            SyncMode::Dsync => cmd.push_str(" --sync=dsync"),
            SyncMode::Sync => cmd.push_str(" --sync=sync"),
        }
        if matches!(plan.data, crate::bench::pattern::DataKind::Zeros) && j.writes() {
            cmd.push_str(" --zero_buffers");
        }
        let _ = writeln!(out, "{cmd}");
    }
    out
}

fn shell_quote(s: &str) -> String {
    if s.chars()
        .all(|c| c.is_ascii_alphanumeric() || "/._-+:@".contains(c))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}
