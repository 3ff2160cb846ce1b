//! Headless output of a test run: the human summary, JSON (summary plus the per-interval
//! series), CSV (the series), and the equivalent fio command lines. A run's results are laid
//! out by the kind of its phases (`PhaseTag`, `results_text`), not by the test that planned
//! them.
//!
//! Units: throughput in MB/s (10^6 bytes per second) with MiB/s (2^20) beside it where both
//! help, latency in milliseconds in text and nanoseconds in JSON. A buffered run says BUFFERED
//! in every format.

use std::fmt::Write as _;

use serde::Serialize;

use crate::bench::curve::{self, Curve, PhaseSample};
use crate::bench::engine::{self, EngineProbe, engine_label};
use crate::bench::outcome::TargetInfo;
use crate::bench::outcome::{DirTotals, PhaseResult, RunOutcome, RunReport, TargetClass};
use crate::bench::plan::{Access, Mix};
use crate::bench::spec::{
    EngineKind, Job, PhaseTag, Plan, REWRITE_LABEL, REWRITE_NOTE, sweep_column,
};
use crate::bench::stats::{LatencySummary, TimeBase, per_second};
use crate::model::text::neutralize_controls;
use crate::model::{Bytes, BytesPerSec};
use crate::sys::direct::SyncMode;

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

/// The engine of a finished phase in words: "sync (4 pread threads)".
pub fn phase_engine_label(p: &PhaseResult) -> String {
    if matches!(p.tag, PhaseTag::Metadata { .. }) {
        return "1 thread, one system call at a time".into();
    }
    // A rewrite's threads read each block before they write it: they call both.
    let calls = if p.job.rewrite {
        Mix::Mixed { read_pct: 0 }
    } else {
        p.job.mix
    };
    engine_label(p.engine, p.io_threads, p.fixed_buffers, calls)
}

/// How the I/O went: "O_DIRECT" or "BUFFERED (page cache)", and the buffers when they were
/// in huge pages (`--huge-pages`).
fn io_path(plan: &Plan) -> String {
    let path = if plan.direct {
        "O_DIRECT"
    } else {
        "BUFFERED (page cache)"
    };
    if plan.huge_pages {
        format!("{path}, buffers in huge pages")
    } else {
        path.to_string()
    }
}

fn how(plan: &Plan, job: &Job, p: Option<&PhaseResult>) -> String {
    let io = io_path(plan);
    let engine = match p {
        Some(r) => phase_engine_label(r),
        None => plan.engine.as_str().to_string(),
    };
    let sync = match job.sync {
        SyncMode::None => "",
        SyncMode::Dsync => ", O_DSYNC writes",
        SyncMode::Sync => ", O_SYNC writes",
    };
    format!("{io}, {engine}, {}{sync}", job.describe())
}

fn bounds(plan: &Plan, job: &Job, probe: Option<&EngineProbe>) -> String {
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
    let warmup = job.warmup.as_secs_f64();
    match probe {
        None if job.warmup.is_zero() => s.push_str(", no warm-up"),
        None => {
            let _ = write!(s, " after a {warmup:.1} s warm-up (discarded)");
        }
        Some(p) if p.total_s < warmup => {
            let _ = write!(
                s,
                " after a {warmup:.1} s warm-up (discarded; its first {:.2} s probed the engines)",
                p.total_s
            );
        }
        Some(p) => {
            let _ = write!(
                s,
                " after a {:.2} s warm-up that probed the engines (discarded; {warmup:.1} s asked)",
                p.total_s
            );
        }
    }
    let _ = write!(s, "; samples every {} ms", plan.interval.as_millis());
    s
}

/// Which engine each phase used and why: one line when every phase agrees, else one per
/// phase. Each line starts with `prefix`.
fn engine_lines(r: &RunReport, prefix: &str) -> String {
    let mut out = String::new();
    let phases = &r.outcome.phases;
    let same = phases.windows(2).all(|w| {
        w[0].engine == w[1].engine && w[0].engine_choice.reason == w[1].engine_choice.reason
    });
    match phases.first() {
        Some(p) if same => {
            let _ = writeln!(
                out,
                "{prefix}engine: {} - {}",
                p.engine.as_str(),
                p.engine_choice.reason
            );
        }
        _ => {
            for p in phases {
                let _ = writeln!(
                    out,
                    "{prefix}engine of {}: {} - {}",
                    p.label,
                    phase_engine_label(p),
                    p.engine_choice.reason
                );
            }
        }
    }
    out
}

fn target_line(t: &TargetInfo) -> String {
    let mut s = neutralize_controls(&t.path.display().to_string());
    let mut facts = Vec::new();
    if t.kind == TargetClass::Directory {
        facts.push("directory".to_string());
        if let Some(d) = &t.device {
            facts.push(format!("on {d}"));
        }
    } else if t.kind == TargetClass::File {
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

pub use crate::bench::outcome::{
    MIN_RATE_OPS, MIN_RATE_SECONDS, low_count, low_count_note, rate_measured, rate_settled,
    time_base,
};

/// What a screen says of rates over a rewrite's busy time, where there is no room for the
/// seconds (`rewrite_time_base` has them); None for rates over the measured time.
pub fn rewrite_rates_note(base: TimeBase) -> Option<String> {
    match base {
        TimeBase::Elapsed => None,
        TimeBase::WriteBusy => Some(format!(
            "{REWRITE_LABEL}: MB/s and IOPS are over the time the writes took"
        )),
        TimeBase::IoBusy => Some(format!(
            "{REWRITE_LABEL}: MB/s and IOPS are over the time the timed I/O took"
        )),
    }
}

/// The time base of the Run screen's charts, for their titles: "" for the measured time.
pub fn chart_time_base(base: TimeBase) -> &'static str {
    match base {
        TimeBase::Elapsed => "",
        TimeBase::WriteBusy => " over write time",
        TimeBase::IoBusy => " over I/O time",
    }
}

/// The time base of a rewrite phase's rates, with its seconds: "rewrite of existing data: only
/// the writes are timed; rates are over the 2.000 s the writes took (the reads took 1.900 s
/// more)". None for a phase whose rates are over its measured time.
pub fn rewrite_time_base(p: &PhaseResult) -> Option<String> {
    // The rest of the measured time (of each lane, an outstanding I/O) went to the reads
    // that fetch each block, and the little between the system calls.
    let more = (p.seconds - p.rate_seconds).max(0.0);
    match p.time_base {
        TimeBase::Elapsed => None,
        TimeBase::WriteBusy => Some(format!(
            "{REWRITE_LABEL}: only the writes are timed; rates are over the {:.3} s the writes \
             took (with its reads the phase took {more:.3} s more)",
            p.rate_seconds
        )),
        TimeBase::IoBusy => Some(format!(
            "{REWRITE_LABEL}: only the writes and the mix's own reads are timed; rates are over \
             the {:.3} s they took (with the reads of the blocks to rewrite the phase took \
             {more:.3} s more)",
            p.rate_seconds
        )),
    }
}

fn dir_lines(out: &mut String, name: &str, d: &DirTotals, seconds: f64) {
    if d.ops == 0 {
        return;
    }
    if !rate_measured(d.ops, seconds) {
        let _ = writeln!(
            out,
            "{name:<6} {}: {} I/Os in no measured time",
            Bytes(d.bytes).iec(),
            d.ops
        );
        if let Some(l) = &d.latency {
            let _ = writeln!(out, "       latency (ms): {}", latency_line(l));
        }
        return;
    }
    // A rate over few I/Os is shown as dd shows one, and marked.
    let low = low_count_note(d.ops, seconds).map_or(String::new(), |n| format!(" ({n})"));
    let _ = writeln!(
        out,
        "{name:<6} {:>10.1} MB/s ({:.1} MiB/s)  {:>10.0} IOPS  {} in {:.2} s{low}",
        mbps(d.bytes_per_sec),
        BytesPerSec(d.bytes_per_sec).mib_per_sec(),
        d.iops,
        Bytes(d.bytes).iec(),
        seconds
    );
    if let Some(l) = &d.latency {
        let _ = writeln!(out, "       latency (ms, total): {}", latency_line(l));
    }
}

fn witness_lines(out: &mut String, p: &PhaseResult, kind: TargetClass) {
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
            if w.read_back_ios > 0 {
                let _ = writeln!(
                    out,
                    "       (its reads include the {} bytes in {} reads this rewrite made of the \
                     blocks it wrote back: compared, though not in the figures above)",
                    w.read_back_bytes, w.read_back_ios
                );
            }
            if w.agrees && w.ios_diff_pct > 2.0 {
                let _ = writeln!(
                    out,
                    "       (the block layer split requests: {:.1} device I/Os per test I/O)",
                    1.0 + w.ios_diff_pct / 100.0
                );
            }
            if !w.agrees && kind == TargetClass::BlockDevice {
                let _ = writeln!(
                    out,
                    "WARNING: the kernel's counters differ from this test's by more than 2 %: \
                     another program used the device, or a cache served part of the I/O"
                );
            } else if !w.agrees {
                let _ = writeln!(
                    out,
                    "WARNING: this file test's bytes differ from what the kernel counted on the \
                     disk under the file system by more than 2 %: the page cache, the file \
                     system's own writes (journal, metadata, copy-on-write), compression or \
                     another program made the difference"
                );
            }
        }
        (None, Some(note)) => {
            let _ = writeln!(out, "kernel counters: {note}");
        }
        (None, None) => {}
    }
    if let Some(line) = others_line(p) {
        let _ = writeln!(out, "{line}");
    }
}

/// "others: dd (pid 812): 1.2 GiB read - they have the device open and did I/O meanwhile",
/// for a phase during which other processes did I/O; every screen words it so.
pub fn others_line(p: &PhaseResult) -> Option<String> {
    (!p.others.is_empty()).then(|| {
        format!(
            "others: {} - they have the device open and did I/O during the test",
            crate::model::activity::describe_busy(&p.others)
        )
    })
}

/// What a CPU-bound phase means, in the words every screen uses.
pub const CPU_BOUND_NOTE: &str = "CPU-bound: the figure may be the tool's, not the drive's";

fn phase_text(out: &mut String, plan: &Plan, p: &PhaseResult, kind: TargetClass) {
    let _ = writeln!(out, "how:   {}", how(plan, &p.job, Some(p)));
    let _ = writeln!(out, "engine {}", p.engine_choice.reason);
    // A choice reused from an earlier probe: this phase's warm-up probed nothing.
    let probe = p
        .engine_choice
        .probe
        .as_ref()
        .filter(|_| !p.engine_choice.reused);
    let mut asked = bounds(plan, &p.job, probe);
    // The bounds are what was asked: a phase that failed before it measured did none of it.
    if p.failure.is_some() && p.seconds == 0.0 {
        asked.push_str("; it ended at the error, before measuring");
    }
    let _ = writeln!(out, "       {asked}");
    dir_lines(out, "read", &p.read, p.rate_seconds);
    dir_lines(out, "write", &p.write, p.rate_seconds);
    if let Some(line) = rewrite_time_base(p) {
        let _ = writeln!(out, "       {line}");
    }
    let ops = p.read.ops + p.write.ops;
    if ops > 0 && p.seconds > 0.0 {
        let _ = writeln!(
            out,
            "cpu    {:.2} s for the process ({:.0} % of a core), {:.2} us per I/O",
            p.cpu_seconds,
            p.cpu_seconds / p.seconds * 100.0,
            p.cpu_seconds / ops as f64 * 1e6
        );
        // Waiting for a CPU is worth a word once it is a twentieth of the run.
        if p.cpu_wait_seconds >= 0.05 * p.seconds {
            let _ = writeln!(
                out,
                "       the I/O threads waited {:.2} s for a CPU (other load, or more threads \
                 than cores)",
                p.cpu_wait_seconds
            );
        }
        if p.cpu_bound {
            let _ = writeln!(out, "       {CPU_BOUND_NOTE}");
        }
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
        if p.job.rewrite {
            // The writes' time and the whole time differ by the reads: say which is which.
            let _ = writeln!(
                out,
                "       {} rewrites of {} bytes: {:.3} s of writes, {} ms per write on \
                 average ({:.3} s with their reads)",
                l.count,
                p.job.bs,
                p.rate_seconds,
                ms(l.mean_ns),
                p.seconds
            );
        } else {
            let _ = writeln!(
                out,
                "       {} I/Os of {} bytes took {:.3} s: {} ms per I/O on average",
                l.count,
                p.job.bs,
                p.seconds,
                ms(l.mean_ns)
            );
        }
    }
    witness_lines(out, p, kind);
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

/// Are the plan's phases the metadata test's (files, not bytes: their own CSV note and fio
/// script)?
fn of_files(plan: &Plan) -> bool {
    matches!(plan.kind(), Some(PhaseTag::Metadata { .. }))
}

/// A run's results, laid out by the kind of its phases, not by its test: a new family whose
/// phases are of a kind already here gets that kind's table, and a new kind of phase is one
/// arm. True when the results are one table, after which the run's error is said (phase by
/// phase, each phase says its own).
fn results_text(out: &mut String, r: &RunReport) -> bool {
    match r.plan.kind() {
        Some(PhaseTag::Sweep { .. }) => {
            out.push_str(&sweep_table(r));
            for p in r
                .outcome
                .phases
                .iter()
                .filter(|p| !p.ok() || p.witness.as_ref().is_some_and(|w| !w.agrees))
            {
                let _ = writeln!(out, "{}:", p.label);
                witness_lines(out, p, r.target.kind);
                if let Some(f) = &p.failure {
                    let _ = writeln!(out, "ERROR: {}", f.describe());
                }
            }
            true
        }
        Some(PhaseTag::QdSweep { .. }) => {
            out.push_str(&qd_table(r));
            out.push_str(&engine_lines(r, ""));
            true
        }
        Some(PhaseTag::Cdm { .. }) => {
            out.push_str(&cdm_grid(r));
            out.push_str(&engine_lines(r, ""));
            true
        }
        Some(PhaseTag::Metadata { .. }) => {
            out.push_str(&metadata_table(r));
            true
        }
        Some(PhaseTag::Single) | None => {
            for p in &r.outcome.phases {
                phase_text(out, &r.plan, p, r.target.kind);
            }
            false
        }
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
    if results_text(&mut out, r)
        && let Some(e) = r.error()
    {
        let _ = writeln!(out, "ERROR: {e}");
    }
    out
}

/// bonnie++ -n's figures: files per second of each phase and the latency of its operation.
pub fn metadata_table(r: &RunReport) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:<18} {:>7} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9}",
        "phase", "files", "files/s", "mean ms", "p50 ms", "p99 ms", "p99.9 ms", "max ms"
    );
    for p in &r.outcome.phases {
        let ops = p.read.ops + p.write.ops;
        let rate = if !rate_measured(ops, p.rate_seconds) {
            "-".into()
        } else if low_count(ops, p.rate_seconds) {
            format!("{:.0}*", p.iops())
        } else {
            format!("{:.0}", p.iops())
        };
        let l = p.latency();
        let lat = |f: fn(&LatencySummary) -> f64| l.map_or("-".into(), |l| ms(f(l)));
        let _ = writeln!(
            out,
            "{:<18} {ops:>7} {rate:>9} {:>9} {:>9} {:>9} {:>9} {:>9}",
            p.label,
            lat(|l| l.mean_ns),
            lat(|l| l.p50_ns as f64),
            lat(|l| l.p99_ns as f64),
            lat(|l| l.p999_ns as f64),
            lat(|l| l.max_ns as f64),
        );
    }
    for p in &r.outcome.phases {
        if let Some(note) = low_count_note(p.read.ops + p.write.ops, p.rate_seconds) {
            let _ = writeln!(
                out,
                "* {}: {note} (a settled files/s needs {MIN_RATE_OPS} files and {:.0} ms)",
                p.label,
                MIN_RATE_SECONDS * 1e3,
            );
        }
    }
    let _ = writeln!(
        out,
        "each operation is one system call, timed from just before it to its return: create = \
         open(O_CREAT|O_EXCL) + close, stat = fstatat, delete = unlinkat; empty files, no \
         fsync (bonnie++ -n); random phases use a permutation from the seed"
    );
    for p in r.outcome.phases.iter().filter(|p| p.stopped) {
        let _ = writeln!(
            out,
            "{}: stopped by the admin; the figures cover what completed",
            p.label
        );
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
    out.push_str(&engine_lines(r, "# "));
    if r.plan.rewrites() && r.plan.writes() {
        let _ = writeln!(
            out,
            "# Writes : {REWRITE_LABEL} (each block read first, not timed; write MB/s are over \
             the time the writes took)"
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
    let knees: Vec<String> = sweep_curves(r)
        .iter()
        .map(|c| format!("{} {}", c.name, c.knee_text()))
        .collect();
    if !knees.is_empty() {
        let _ = writeln!(out, "# knee: {}", knees.join(", "));
        let _ = writeln!(out, "# (knee: {})", curve::KNEE_RULE);
    }
    out
}

/// The curves of a sweep run (none for other tests), from the phases that completed with
/// enough I/Os for a rate: the knees the table, the JSON and the TUI's charts give.
pub fn sweep_curves(r: &RunReport) -> Vec<Curve> {
    let samples: Vec<PhaseSample> = r
        .outcome
        .phases
        .iter()
        .filter(|p| rate_settled(p.read.ops + p.write.ops, p.rate_seconds))
        .filter_map(PhaseSample::of)
        .collect();
    curve::curves(&samples)
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
    let curves = sweep_curves(r);
    let with_knee: Vec<&Curve> = curves.iter().filter(|c| c.knee.is_some()).collect();
    for c in &with_knee {
        let (figure, value) = match c.panel {
            curve::Panel::QdIops => ("Small IOPS", c.knee_point().map(|p| format!("{:.0}", p.1))),
            _ => ("Large MBPS", c.knee_point().map(|p| format!("{:.2}", p.1))),
        };
        let _ = match (c.knee_point(), value) {
            (Some((qd, _)), Some(v)) => writeln!(out, "Knee {figure}={v} @ QD {qd}"),
            _ => writeln!(out, "Knee {figure}: {}", c.knee_text()),
        };
    }
    if !with_knee.is_empty() {
        let _ = writeln!(out, "(knee: {})", curve::KNEE_RULE);
    }
    out
}

/// A CrystalDiskMark cell's MB/s as CrystalDiskMark writes it (two decimals); the TUI's grid
/// uses the same, so both give the same figure.
pub fn cdm_mbps(mbps: f64) -> String {
    format!("{mbps:.2}")
}

/// A CrystalDiskMark cell's IOPS, whole.
pub fn cdm_iops(iops: f64) -> String {
    format!("{iops:.0}")
}

/// A CrystalDiskMark cell's mean latency in milliseconds.
pub fn cdm_ms(ms: f64) -> String {
    format!("{ms:.3}")
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
        let rate =
            |p: Option<&PhaseResult>| p.map_or("-".into(), |p| cdm_mbps(mbps(p.bytes_per_sec())));
        let iops = |p: Option<&PhaseResult>| p.map_or("-".into(), |p| cdm_iops(p.iops()));
        let lat = |p: Option<&PhaseResult>| {
            p.and_then(|p| p.latency())
                .map_or("-".into(), |l| cdm_ms(l.mean_ns / 1e6))
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
            "each {} after a {:.1} s warm-up; {}; region {}{}",
            j.time.map_or("bounded by count".into(), |t| format!(
                "{:.1} s",
                t.as_secs_f64()
            )),
            j.warmup.as_secs_f64(),
            io_path(&r.plan),
            Bytes(j.region_len).iec(),
            if r.plan.rewrites() && r.plan.writes() {
                format!("; writes: {REWRITE_LABEL}, rated over the time the writes took")
            } else {
                String::new()
            }
        );
    }
    for p in r
        .outcome
        .phases
        .iter()
        .filter(|p| p.witness.as_ref().is_some_and(|w| !w.agrees))
    {
        let _ = writeln!(out, "{}:", p.label);
        witness_lines(&mut out, p, r.target.kind);
    }
    out
}

/// The result as JSON: the summary of every phase and its per-interval series.
pub fn render_json(r: &RunReport) -> anyhow::Result<String> {
    /// The report plus the fio command line of each phase, with the engine it used.
    #[derive(Serialize)]
    struct WithFio<'a> {
        #[serde(flatten)]
        report: &'a RunReport,
        fio_commands: Vec<String>,
        /// A sweep's knees, the same the table and the TUI's charts show.
        #[serde(skip_serializing_if = "Vec::is_empty")]
        knees: Vec<curve::KneeReport>,
    }
    let safe = json_safe(r);
    let mut s = serde_json::to_string_pretty(&WithFio {
        report: &safe,
        fio_commands: report_fio_commands(r),
        knees: curve::knee_reports(&sweep_curves(r)),
    })?;
    s.push('\n');
    Ok(s)
}

/// The report of a test's repeats: `heading`, then per phase the figures over the repeats
/// (`bench::figures`: the mean MB/s with each repeat's value and their spread, the run-to-run
/// noise; IOPS; p99 over every repeat's I/Os), a sweep's knees of the means, then every
/// repeat's own report. With one repeat, that repeat's report alone.
pub fn render_repeats_text(runs: &[RunReport], heading: &str) -> String {
    let n = runs.len();
    if n <= 1 {
        return runs.first().map(render_text).unwrap_or_default();
    }
    let figures = crate::bench::figures::figures(runs);
    let mut out = format!("{heading}\n");
    for f in &figures {
        let each: Vec<String> = runs
            .iter()
            .filter_map(|r| r.outcome.phases.iter().find(|p| p.label == f.label))
            .filter(|p| p.ok())
            .map(|p| format!("{:.1}", p.bytes_per_sec() / 1e6))
            .collect();
        let _ = writeln!(
            out,
            "  {}: {:.1} MB/s = mean of {}{}",
            f.label,
            f.mbps.mean,
            each.join(", "),
            f.mbps
                .spread_pct
                .map_or(String::new(), |s| format!(" (spread {s:.1} %)")),
        );
        let _ = writeln!(
            out,
            "    {:.0} IOPS{}",
            f.iops.mean,
            f.p99_ms.map_or(String::new(), |p| format!(
                ", p99 {:.3} ms over every repeat's I/Os",
                p.mean
            ))
        );
    }
    // A sweep's knee over the means: the one the charts mark.
    let samples: Vec<PhaseSample> = figures
        .iter()
        .filter_map(crate::bench::figures::PhaseFigures::sample)
        .collect();
    let knees: Vec<String> = curve::curves(&samples)
        .iter()
        .filter(|c| c.knee.is_some())
        .map(|c| format!("{} {}", c.name, c.knee_text()))
        .collect();
    if !knees.is_empty() {
        let _ = writeln!(out, "  knee of the means: {}", knees.join(", "));
        let _ = writeln!(out, "  (knee: {})", curve::KNEE_RULE);
    }
    for (i, r) in runs.iter().enumerate() {
        let _ = write!(out, "\n--- repeat {} of {n} ---\n{}", i + 1, render_text(r));
    }
    out
}

/// Version of the layout of a repeated run's JSON (`render_repeats_json`).
pub const REPEATS_JSON_SCHEMA: u32 = 1;

/// A test's repeats as JSON: the figures over them (per phase the mean and spread, as the
/// text and the history show them) and every repeat's full report as `render_json` prints it.
/// `asked` is how many were asked for (more than ran when a signal or a failure ended them).
pub fn render_repeats_json(runs: &[RunReport], asked: u32) -> anyhow::Result<String> {
    #[derive(Serialize)]
    struct Repeats {
        schema: u32,
        test: String,
        target: String,
        /// The repeats that ran (each has its report below).
        repeats: usize,
        repeats_asked: u32,
        figures: Vec<crate::bench::figures::PhaseFigures>,
        reports: Vec<serde_json::Value>,
    }
    let first = runs
        .first()
        .ok_or_else(|| anyhow::anyhow!("no repeat ran"))?;
    let reports = runs
        .iter()
        .map(|r| Ok(serde_json::from_str(&render_json(r)?)?))
        .collect::<anyhow::Result<Vec<serde_json::Value>>>()?;
    let mut s = serde_json::to_string_pretty(&Repeats {
        schema: REPEATS_JSON_SCHEMA,
        test: first.test.to_string(),
        target: first.target.path.to_string_lossy().into_owned(),
        repeats: runs.len(),
        repeats_asked: asked,
        figures: crate::bench::figures::figures(runs),
        reports,
    })?;
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
    if r.plan.huge_pages {
        out.push_str(
            "# buffers in huge pages (--huge-pages): large requests reach the device in fewer \
             pieces than dd's and fio's\n",
        );
    }
    if r.plan.rewrites() && r.plan.writes() {
        let _ = writeln!(out, "# {REWRITE_NOTE}");
        let _ = writeln!(
            out,
            "# rates of a rewrite's intervals are over the time its writes were in flight in \
             the interval (rate_s), not over the interval's length"
        );
    }
    let _ = writeln!(out, "# latency: {}", r.outcome.latency_definition);
    if of_files(&r.plan) {
        out.push_str(
            "# metadata: ops are files (iops = files/s); stat counts as read, create and delete \
             as write; no bytes move\n",
        );
    }
    for (i, p) in r.outcome.phases.iter().enumerate() {
        let _ = writeln!(
            out,
            "# phase {i} {}: engine {} - {}",
            p.label,
            phase_engine_label(p),
            p.engine_choice.reason
        );
        if let Some(line) = rewrite_time_base(p) {
            let _ = writeln!(out, "# phase {i} {}: {line}", p.label);
        }
        if let Some(note) = low_count_note(p.read.ops + p.write.ops, p.rate_seconds) {
            let _ = writeln!(out, "# phase {i} {}: {note}", p.label);
        }
    }
    out.push_str(
        "phase,label,engine,start_s,end_s,read_bytes,read_ops,read_MBps,read_iops,read_p50_us,\
         read_p99_us,read_p999_us,read_max_us,write_bytes,write_ops,write_MBps,write_iops,\
         write_p50_us,write_p99_us,write_p999_us,write_max_us,rate_s\n",
    );
    for (i, p) in r.outcome.phases.iter().enumerate() {
        for pt in &p.series.points {
            // The interval's length, or a rewrite's write-busy time in it.
            let secs = pt.rate_seconds();
            let _ = write!(
                out,
                "{i},{},{},{:.3},{:.3}",
                csv_field(&p.label),
                p.engine.as_str(),
                pt.start_s,
                pt.end_s
            );
            for d in [&pt.read, &pt.write] {
                let rate = per_second(d.bytes as f64, secs);
                let iops = per_second(d.ops as f64, secs);
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
            let _ = writeln!(out, ",{secs:.6}");
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

/// How fio issues a phase's I/O.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum FioEngine {
    /// io_uring with `iodepth` = QD per job; `fixed`: registered buffers and file
    /// (`--fixedbufs --registerfiles`).
    Uring { fixed: bool },
    /// One pread/pwrite thread per outstanding I/O: psync with `numjobs` = workers x QD.
    Psync,
}

/// The fio command lines that repeat a run, one per phase: with `outcome`, each phase's command
/// uses the engine, depth and options that phase actually ran with. Without it (`--fio`, which
/// runs nothing), an engine `auto` leaves undecided until its probe gets both commands, the
/// second commented out.
pub fn fio_commands(plan: &Plan, target: &std::path::Path, outcome: Option<&RunOutcome>) -> String {
    let mut out = String::new();
    if of_files(plan) {
        return metadata_fio_script(plan, target);
    }
    for (i, p) in plan.phases.iter().enumerate() {
        let j = &p.job;
        let ran = outcome
            .and_then(|o| o.phases.get(i))
            .filter(|r| r.label == p.label);
        // disktriage registers its buffers wherever the kernel allows, as root it always does.
        let planned = |kind: EngineKind| match kind {
            EngineKind::Uring => FioEngine::Uring { fixed: true },
            _ => FioEngine::Psync,
        };
        let (engine, alternative) = match ran {
            Some(r) if r.engine == EngineKind::Uring => (
                FioEngine::Uring {
                    fixed: r.fixed_buffers,
                },
                None,
            ),
            Some(_) => (FioEngine::Psync, None),
            None => match engine::static_choice(plan.engine, j, &Ok(())) {
                Some(c) => (planned(c.used), None),
                None => (FioEngine::Uring { fixed: true }, Some(FioEngine::Psync)),
            },
        };
        if let Some(r) = ran {
            let _ = writeln!(
                out,
                "# {}: disktriage used {} - {}",
                p.label,
                phase_engine_label(r),
                r.engine_choice.reason
            );
        }
        if alternative.is_some() {
            let _ = writeln!(
                out,
                "# {}: --engine auto chooses io_uring or one pread/pwrite thread per I/O by a \
                 probe when it runs; the run's report (JSON fio_commands, the TUI's export) has \
                 the command of the engine it used. The sync alternative is commented out.",
                p.label
            );
        }
        out.push_str(&fio_command(plan, p, target, engine));
        if let Some(alt) = alternative {
            // Every line of the alternative is commented out: its command, not only the
            // first of its lines (which may be a note of its own).
            for line in fio_command(plan, p, target, alt).lines() {
                if !line.starts_with('#') {
                    out.push_str("# ");
                }
                out.push_str(line);
                out.push('\n');
            }
        }
    }
    out
}

/// fio's file engines (filecreate, filestat, filedelete) time one open(O_CREAT), stat or
/// unlink per file as the metadata test does; they run in an empty directory of their own.
fn metadata_fio_script(plan: &Plan, target: &std::path::Path) -> String {
    let dir = shell_quote(&target.join("fio-metadata").to_string_lossy());
    let mut out = String::from(
        "# fio's filecreate/filestat/filedelete engines time one open(O_CREAT)/stat/unlink per \
         file, as disktriage does; fio names the files itself, lays files out before a stat \
         or delete job, and its random file service picks files at random (with repeats), not \
         a permutation\n",
    );
    let _ = writeln!(out, "mkdir {dir}");
    for p in &plan.phases {
        out.push_str(&metadata_fio_command(p, target));
        out.push('\n');
    }
    let _ = writeln!(out, "rmdir {dir}");
    out
}

/// One metadata phase's fio command.
fn metadata_fio_command(p: &crate::bench::spec::Phase, target: &std::path::Path) -> String {
    let PhaseTag::Metadata { op, random } = p.tag else {
        return String::new();
    };
    let engine = match op {
        crate::bench::family::metadata::MetaOp::Create => "filecreate",
        crate::bench::family::metadata::MetaOp::Stat => "filestat",
        crate::bench::family::metadata::MetaOp::Delete => "filedelete",
    };
    format!(
        "fio --name={} --directory={} --ioengine={engine} --nrfiles={} --filesize=4k --bs=4k \
         --openfiles=1 --fallocate=none --file_service_type={}",
        p.label.replace(' ', "-"),
        shell_quote(&target.join("fio-metadata").to_string_lossy()),
        p.job.ops_per_worker.unwrap_or(0),
        if random { "random" } else { "sequential" }
    )
}

/// The fio command lines of the phases a report ran, one per phase.
pub fn report_fio_commands(r: &RunReport) -> Vec<String> {
    if of_files(&r.plan) {
        return r
            .plan
            .phases
            .iter()
            .take(r.outcome.phases.len())
            .map(|p| metadata_fio_command(p, &r.target.path))
            .collect();
    }
    r.outcome
        .phases
        .iter()
        .enumerate()
        .filter_map(|(i, ran)| {
            let p = r.plan.phases.get(i).filter(|p| p.label == ran.label)?;
            let engine = match ran.engine {
                EngineKind::Uring => FioEngine::Uring {
                    fixed: ran.fixed_buffers,
                },
                _ => FioEngine::Psync,
            };
            Some(
                fio_command(&r.plan, p, &r.target.path, engine)
                    .trim_end()
                    .to_string(),
            )
        })
        .collect()
}

/// One phase's fio command line (with comment lines before it where fio differs).
fn fio_command(
    plan: &Plan,
    p: &crate::bench::spec::Phase,
    target: &std::path::Path,
    engine: FioEngine,
) -> String {
    let mut out = String::new();
    let j = &p.job;
    // fio has no read-then-rewrite mode: its write jobs write their own data. A rewrite is
    // shown as the read-only job over the same blocks, which destroys nothing and is not the
    // same test (it says so); --readonly makes fio itself refuse to write.
    let mix = if j.rewrite { Mix::Read } else { j.mix };
    if j.rewrite {
        let _ = writeln!(
            out,
            "# {REWRITE_LABEL}: fio has no read-then-rewrite mode, and its write jobs destroy the \
             data. NOT THE SAME TEST: the line below only reads the blocks this phase rewrites \
             (--readonly), with no write at all"
        );
    }
    let rw = match (j.access, mix) {
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
    // fio jobs: one per worker with io_uring, one thread per outstanding I/O with psync.
    let (ioengine, iodepth, jobs) = match engine {
        FioEngine::Uring { .. } => ("io_uring", j.qd, j.workers),
        FioEngine::Psync => ("psync", 1, j.workers.saturating_mul(j.qd)),
    };
    let mut cmd = format!(
        "fio --name={name} --filename={} --ioengine={ioengine} --direct={} --rw={rw} --bs={} \
         --iodepth={iodepth} --numjobs={jobs}",
        shell_quote(&target.to_string_lossy()),
        u8::from(plan.direct),
        j.bs,
    );
    match engine {
        FioEngine::Uring { fixed: true } => cmd.push_str(" --fixedbufs --registerfiles"),
        FioEngine::Uring { fixed: false } => {}
        FioEngine::Psync => cmd.push_str(" --thread"),
    }
    if plan.huge_pages {
        // fio's buffers in huge pages as disktriage's were: its own hugetlb pages, which the
        // system must have reserved (each job maps bs x iodepth, plus a page for O_DIRECT's
        // alignment, rounded up to 2 MiB).
        let per_job =
            j.bs.saturating_mul(u64::from(iodepth))
                .saturating_add(4096)
                .div_ceil(2 << 20);
        let _ = writeln!(
            out,
            "# buffers in huge pages (disktriage --huge-pages): fio's --mem=mmaphuge takes {} \
             huge page(s) of 2 MiB, which must be free (HugePages_Free in /proc/meminfo; \
             reserve them with sysctl vm.nr_hugepages)",
            per_job.saturating_mul(u64::from(jobs)),
        );
        cmd.push_str(" --mem=mmaphuge");
    }
    // disktriage submits one I/O at a time, as fio's io_uring does by default; when no
    // completion is ready it waits for an eighth of the queue, fio's batch_complete_min.
    let per_wait = engine::completions_per_wait(iodepth);
    if matches!(engine, FioEngine::Uring { .. }) && per_wait > 1 {
        let _ = write!(cmd, " --iodepth_batch_complete_min={per_wait}");
    }
    cmd.push_str(" --group_reporting --randrepeat=1 --norandommap");
    if j.split_region && jobs > 1 {
        if engine == FioEngine::Psync && j.qd > 1 {
            let _ = writeln!(
                out,
                "# disktriage's {} threads per worker share one sequential stream; fio gives \
                 each thread its own slice",
                j.qd
            );
        }
        let slice = (j.region_len / u64::from(jobs)) / j.bs * j.bs;
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
        // psync: the worker's I/Os spread over its threads.
        let per_job = match engine {
            FioEngine::Psync => n.div_ceil(u64::from(j.qd.max(1))),
            FioEngine::Uring { .. } => n,
        };
        let _ = write!(cmd, " --number_ios={per_job}");
    }
    if j.rewrite {
        cmd.push_str(" --readonly");
    } else {
        match j.sync {
            SyncMode::None => {}
            SyncMode::Dsync => cmd.push_str(" --sync=dsync"),
            SyncMode::Sync => cmd.push_str(" --sync=sync"),
        }
    }
    if j.writes() {
        match plan.data {
            crate::bench::pattern::DataKind::Zeros => cmd.push_str(" --zero_buffers"),
            // disktriage writes its random pattern as it is; fio's default scrambles part of
            // the buffer before every write, which costs it more than half its IOPS on zram.
            crate::bench::pattern::DataKind::Random { .. } => {
                cmd.push_str(" --scramble_buffers=0");
            }
            // The line for a rewrite only reads (see above): no write data.
            crate::bench::pattern::DataKind::Rewrite => {}
        }
    }
    let _ = writeln!(out, "{cmd}");
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

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::bench::catalog::TestName;
    use crate::bench::engine::{EngineProbe, ProbeFigures};
    use crate::bench::outcome::RUN_JSON_SCHEMA;
    use crate::sys::host::HostInfo;

    use crate::bench::spec::{TargetFacts, TestParams, build_plan};
    use crate::bench::stats::{BoundedSeries, LATENCY_DEFINITION};
    use std::path::PathBuf;

    /// A 1 GiB block device of 512-byte sectors.
    fn gib_device() -> TargetFacts {
        TargetFacts {
            size: 1 << 30,
            logical_block_size: 512,
            max_request: None,
            is_file: false,
        }
    }

    /// A finished rand-read at `qd` that ran with `engine` (on zram0; other modules' tests
    /// use it too).
    pub(crate) fn report(qd: u32, engine: EngineKind, fixed_buffers: bool) -> RunReport {
        let facts = gib_device();
        let params = TestParams {
            qd: Some(qd),
            ..TestParams::default()
        };
        let plan = build_plan(TestName::RandRead, &params, &facts, false).unwrap();
        let phase = &plan.phases[0];
        let figures = |iops| {
            Some(ProbeFigures {
                iops,
                cpu_us_per_io: 2.0,
            })
        };
        let choice = engine::choose(EngineProbe {
            window_s: 0.2,
            total_s: 0.6,
            set_aside: 0,
            uring: figures(if engine == EngineKind::Uring {
                9e5
            } else {
                1e5
            }),
            sync: figures(if engine == EngineKind::Sync { 9e5 } else { 1e5 }),
        });
        let none = DirTotals::default();
        let result = PhaseResult {
            label: phase.label.clone(),
            tag: phase.tag.clone(),
            job: phase.job.clone(),
            engine,
            engine_choice: choice,
            io_threads: if engine == EngineKind::Sync { qd } else { 1 },
            fixed_buffers,
            seconds: 10.0,
            time_base: TimeBase::Elapsed,
            rate_seconds: 10.0,
            cpu_seconds: 1.0,
            cpu_wait_seconds: 0.0,
            cpu_bound: false,
            read: none.clone(),
            write: none,
            workers: Vec::new(),
            series: BoundedSeries::new(4),
            witness: None,
            witness_note: None,
            others: Vec::new(),
            failure: None,
            setup_error: None,
            stopped: false,
        };
        RunReport {
            schema: RUN_JSON_SCHEMA,
            tool: "test".into(),
            started_unix: 0,
            host: HostInfo::default(),
            test: TestName::RandRead,
            target: TargetInfo {
                path: PathBuf::from("/dev/zram0"),
                kind: TargetClass::BlockDevice,
                device: Some("zram0".into()),
                size_bytes: 1 << 30,
                logical_block_size: 4096,
                physical_block_size: None,
                model: None,
                transport: None,
                rotational: None,
                scheduler: None,
                kernel_write_cache: None,
                created: false,
                link_ceiling: None,
            },
            plan,
            outcome: RunOutcome {
                engine,
                latency_definition: LATENCY_DEFINITION,
                notes: Vec::new(),
                background: None,
                phases: vec![result],
                stopped: false,
            },
            notes: Vec::new(),
        }
    }

    /// `report` turned into a finished rand-write with `--preserve`, with its witness.
    fn rewrite_report() -> RunReport {
        let mut r = report(4, EngineKind::Sync, false);
        let params = TestParams {
            qd: Some(4),
            preserve: true,
            ..TestParams::default()
        };
        let facts = gib_device();
        r.test = TestName::RandWrite;
        r.plan = build_plan(TestName::RandWrite, &params, &facts, true).unwrap();
        let p = &mut r.outcome.phases[0];
        p.label = r.plan.phases[0].label.clone();
        p.job = r.plan.phases[0].job.clone();
        // 10 s in all, the writes in flight for 5 of them: the rates are over those 5.
        p.time_base = TimeBase::WriteBusy;
        p.rate_seconds = 5.0;
        p.write = DirTotals {
            bytes: 4096 * 1000,
            ops: 1000,
            bytes_per_sec: 819_200.0,
            iops: 200.0,
            ..DirTotals::default()
        };
        p.witness = Some(crate::bench::outcome::Witness {
            source: "/sys/dev/block/7:0/stat (loop0)".into(),
            read_bytes: 4096 * 1000,
            write_bytes: 4096 * 1000,
            read_ios: 1000,
            write_ios: 1000,
            read_merges: 0,
            write_merges: 0,
            read_back_bytes: 4096 * 1000,
            read_back_ios: 1000,
            bytes_diff_pct: 0.0,
            ios_diff_pct: 0.0,
            agrees: true,
        });
        r
    }

    #[test]
    fn a_rewrite_says_so_in_every_output_and_its_fio_line_only_reads() {
        let r = rewrite_report();
        let text = render_text(&r);
        assert!(
            text.contains("note:  rewrite of existing data (--preserve)"),
            "{text}"
        );
        assert!(
            text.contains("rewrite of existing data, bs 4k, QD4, 1 worker, random write"),
            "{text}"
        );
        assert!(
            text.contains(
                "(its reads include the 4096000 bytes in 1000 reads this rewrite made of the \
                 blocks it wrote back: compared, though not in the figures above)"
            ),
            "{text}"
        );
        let csv = render_csv(&r);
        assert!(
            csv.starts_with("# rewrite of existing data (--preserve)"),
            "{csv}"
        );
        let json: serde_json::Value = serde_json::from_str(&render_json(&r).unwrap()).unwrap();
        assert_eq!(json["plan"]["data"]["kind"], "rewrite");
        assert_eq!(json["plan"]["phases"][0]["job"]["rewrite"], true);
        assert_eq!(
            json["outcome"]["phases"][0]["witness"]["read_back_ios"],
            1000
        );
        // fio cannot rewrite in place: the export says so and never prints a writing job.
        // Planned with --engine auto (two commands, the second commented out), every line
        // that is not a comment is the read-only job.
        let planned = fio_commands(&r.plan, &r.target.path, None);
        let commands: Vec<&str> = planned.lines().filter(|l| !l.starts_with('#')).collect();
        assert_eq!(commands.len(), 1, "{planned}");
        assert!(planned.contains("\n# fio --name=rand-write"), "{planned}");
        for fio in [
            fio_commands(&r.plan, &r.target.path, Some(&r.outcome)),
            planned.clone(),
            report_fio_commands(&r).join("\n"),
        ] {
            assert!(
                fio.contains(
                    "# rewrite of existing data: fio has no read-then-rewrite mode, and its \
                     write jobs destroy the data. NOT THE SAME TEST"
                ),
                "{fio}"
            );
            let cmd = fio.lines().find(|l| l.starts_with("fio ")).unwrap();
            assert!(cmd.contains("--rw=randread"), "{cmd}");
            assert!(cmd.ends_with(" --readonly"), "{cmd}");
            assert!(!cmd.contains("--sync="), "{cmd}");
        }
        // A plain write test's fio line is unchanged: it writes.
        let plain = fio_commands(
            &build_plan(
                TestName::RandWrite,
                &TestParams::default(),
                &TargetFacts {
                    size: 1 << 30,
                    logical_block_size: 512,
                    max_request: None,
                    is_file: false,
                },
                true,
            )
            .unwrap(),
            std::path::Path::new("/dev/loop0"),
            None,
        );
        assert!(
            plain.contains("--rw=randwrite") && !plain.contains("readonly"),
            "{plain}"
        );
    }

    #[test]
    fn a_rewrite_is_rated_over_its_write_time_in_every_output() {
        let mut r = rewrite_report();
        // One interval of the series: 1 MB rewritten in 0.25 s, its writes in flight for
        // 0.125 s of it.
        let p = &mut r.outcome.phases[0];
        p.series = crate::bench::stats::BoundedSeries::new(4);
        p.series.push(crate::bench::stats::IntervalPoint {
            start_s: 0.0,
            end_s: 0.25,
            read: Default::default(),
            write: crate::bench::stats::DirPoint {
                bytes: 1_000_000,
                ops: 250,
                latency: None,
            },
            busy_s: Some(0.125),
        });
        let text = render_text(&r);
        // 4096000 bytes over the 5 s of writes, not over the 10 s of the phase.
        assert!(
            text.contains("write         0.8 MB/s (0.8 MiB/s)         200 IOPS  3.9 MiB in 5.00 s"),
            "{text}"
        );
        assert!(
            text.contains(
                "       rewrite of existing data: only the writes are timed; rates are over the \
                 5.000 s the writes took (with its reads the phase took 5.000 s more)"
            ),
            "{text}"
        );
        let json: serde_json::Value = serde_json::from_str(&render_json(&r).unwrap()).unwrap();
        let phase = &json["outcome"]["phases"][0];
        assert_eq!(phase["time_base"], "write-busy");
        assert_eq!(phase["rate_seconds"], 5.0);
        assert_eq!(phase["seconds"], 10.0);
        assert_eq!(phase["write"]["bytes_per_sec"], 819_200.0);
        assert_eq!(phase["series"]["points"][0]["busy_s"], 0.125);
        // The CSV's interval: 1 MB over its 0.125 s of writes, 8 MB/s, with that time base.
        let csv = render_csv(&r);
        assert!(
            csv.contains(
                "# phase 0 rand-write: rewrite of existing data: only the writes are timed; \
                 rates are over the 5.000 s"
            ),
            "{csv}"
        );
        let row = csv
            .lines()
            .find(|l| l.starts_with("0,rand-write,"))
            .unwrap();
        let cols: Vec<&str> = row.split(',').collect();
        assert_eq!(cols[13..17], ["1000000", "250", "8.000", "2000.0"], "{row}");
        assert_eq!(cols.last(), Some(&"0.125000"), "{row}");
        // Results, the history and Compare read the figures from here: the same 0.8192 MB/s.
        let f = crate::bench::figures::figures(std::slice::from_ref(&r));
        assert_eq!(f[0].mbps.mean, 0.8192);
        assert_eq!(f[0].iops.mean, 200.0);
        assert_eq!((f[0].seconds, f[0].time_base), (5.0, TimeBase::WriteBusy));
        // A plain phase says nothing of a time base.
        let plain = report(4, EngineKind::Sync, false);
        assert!(!render_text(&plain).contains("only the writes are timed"));
        assert!(rewrite_time_base(&plain.outcome.phases[0]).is_none());
    }

    #[test]
    fn a_counted_rewrite_says_its_time_includes_the_reads_and_its_mean_does_not() {
        let mut r = rewrite_report();
        let p = &mut r.outcome.phases[0];
        p.job.qd = 1;
        p.job.ops_per_worker = Some(1000);
        p.write.latency = Some(LatencySummary {
            count: 1000,
            min_ns: 100_000,
            mean_ns: 4_000_000.0,
            p50_ns: 3_000_000,
            p90_ns: 5_000_000,
            p99_ns: 9_000_000,
            p999_ns: 9_500_000,
            max_ns: 10_000_000,
        });
        let text = render_text(&r);
        assert!(
            text.contains(
                "1000 rewrites of 4096 bytes: 5.000 s of writes, 4.000 ms per write on average \
                 (10.000 s with their reads)"
            ),
            "{text}"
        );
    }

    #[test]
    fn a_short_run_shows_its_rate_and_says_the_count_is_low_in_every_output() {
        // "read 10.0 MiB: 10 I/Os in 11.12 ms (too few for MB/s or IOPS)" hid the rate.
        let mut r = report(1, EngineKind::Sync, false);
        let p = &mut r.outcome.phases[0];
        p.seconds = 0.01112;
        p.rate_seconds = 0.01112;
        let mut d = crate::bench::stats::DirStats::default();
        for _ in 0..10 {
            d.record(1 << 20, 1_100_000);
        }
        p.read = DirTotals::over(&d, p.rate_seconds);
        p.series
            .push(crate::bench::stats::IntervalPoint::from_stats(
                0.0,
                0.01112,
                &crate::bench::stats::IoStats::default(),
                None,
            ));
        let text = render_text(&r);
        let read = text.lines().find(|l| l.starts_with("read")).unwrap();
        // 10 MiB in 11.12 ms: 943.0 MB/s, 899 IOPS.
        assert!(
            read.contains("943.0 MB/s") && read.contains("899 IOPS"),
            "{text}"
        );
        assert!(read.contains("(10 I/Os in 11.12 ms: low count)"), "{text}");
        assert!(!text.contains("too few"), "{text}");
        let json: serde_json::Value = serde_json::from_str(&render_json(&r).unwrap()).unwrap();
        let read = &json["outcome"]["phases"][0]["read"];
        assert_eq!(read["low_count"], true, "{read}");
        assert!(read["bytes_per_sec"].as_f64().unwrap() > 9e8, "{read}");
        assert!(read.get("latency_buckets").is_none(), "{read}");
        let csv = render_csv(&r);
        assert!(
            csv.contains("# phase 0 rand-read: 10 I/Os in 11.12 ms: low count"),
            "{csv}"
        );
        // Enough I/Os: no mark anywhere.
        let mut d = crate::bench::stats::DirStats::default();
        for _ in 0..100 {
            d.record(1 << 20, 1_100_000);
        }
        r.outcome.phases[0].read = DirTotals::over(&d, 0.01112);
        assert!(!render_text(&r).contains("low count"));
        assert!(!render_csv(&r).contains("low count"));
        assert!(!render_json(&r).unwrap().contains("\"low_count\": true"));
    }

    #[test]
    fn the_results_table_follows_the_kind_of_phases_not_the_test() {
        // A test of a new family that plans queue-depth sweep phases: its report is the
        // queue-depth table, with no arm for the test.
        let mut r = report(1, EngineKind::Sync, false);
        let facts = gib_device();
        let params = TestParams {
            qds: Some(vec![1, 4]),
            ..TestParams::default()
        };
        r.plan = build_plan(TestName::QdSweep, &params, &facts, false).unwrap();
        let ran = r.outcome.phases[0].clone();
        r.outcome.phases = r
            .plan
            .phases
            .iter()
            .map(|ph| PhaseResult {
                label: ph.label.clone(),
                tag: ph.tag.clone(),
                job: ph.job.clone(),
                ..ran.clone()
            })
            .collect();
        assert_eq!(r.test, TestName::RandRead);
        let text = render_text(&r);
        assert!(text.contains("Maximum Small IOPS"), "{text}");
        assert!(!text.contains("how:"), "not a phase at a time: {text}");
    }

    #[test]
    fn the_commented_out_alternative_is_commented_out_whole() {
        // seq-read at QD4 under auto: the psync alternative has a note line of its own (its
        // threads share one stream). Its command must be commented out too, or a pasted
        // script runs both jobs.
        let plan = build_plan(
            TestName::SeqRead,
            &TestParams {
                qd: Some(4),
                ..TestParams::default()
            },
            &TargetFacts {
                size: 1 << 30,
                logical_block_size: 512,
                max_request: None,
                is_file: false,
            },
            false,
        )
        .unwrap();
        let fio = fio_commands(&plan, std::path::Path::new("/dev/loop0"), None);
        let commands: Vec<&str> = fio.lines().filter(|l| !l.starts_with('#')).collect();
        assert_eq!(commands.len(), 1, "{fio}");
        assert!(commands[0].contains("--ioengine=io_uring"), "{fio}");
        assert!(
            fio.contains("\n# fio --name=seq-read --filename=/dev/loop0 --ioengine=psync"),
            "{fio}"
        );
    }

    #[test]
    fn fio_export_repeats_the_engine_that_ran() {
        // Sync threads: fio's psync, one thread per outstanding I/O.
        let r = report(8, EngineKind::Sync, false);
        let fio = fio_commands(&r.plan, &r.target.path, Some(&r.outcome));
        let lines: Vec<&str> = fio.lines().collect();
        assert!(
            lines[0]
                .starts_with("# rand-read: disktriage used sync (8 pread threads) - auto: sync"),
            "{fio}"
        );
        assert!(
            lines[1].starts_with(
                "fio --name=rand-read --filename=/dev/zram0 --ioengine=psync --direct=1 \
                 --rw=randread --bs=4096 --iodepth=1 --numjobs=8 --thread --group_reporting"
            ),
            "{fio}"
        );
        assert_eq!(report_fio_commands(&r), vec![lines[1].to_string()]);
        // io_uring: the same depth, --fixedbufs --registerfiles only when they were registered.
        let r = report(32, EngineKind::Uring, false);
        let fio = report_fio_commands(&r).join("\n");
        assert!(
            fio.contains("--ioengine=io_uring --direct=1 --rw=randread --bs=4096 --iodepth=32 --numjobs=1 --iodepth_batch_complete_min=4 --group_reporting"),
            "{fio}"
        );
        assert!(!fio.contains("fixedbufs"), "{fio}");
        let r = report(32, EngineKind::Uring, true);
        let fio = report_fio_commands(&r).join("\n");
        assert!(
            fio.contains(
                "--iodepth=32 --numjobs=1 --fixedbufs --registerfiles \
                 --iodepth_batch_complete_min=4 --group_reporting"
            ),
            "{fio}"
        );
        // Submission stays one I/O at a time.
        assert!(!fio.contains("--iodepth_batch_submit"), "{fio}");
        assert!(
            fio.contains("--time_based --runtime=10000ms --ramp_time=1000ms"),
            "{fio}"
        );
    }

    #[test]
    fn huge_page_buffers_are_named_in_every_output_and_in_the_fio_line() {
        // The default: ordinary pages, as dd's and fio's; nothing to say, fio's default memory.
        let plain = report(32, EngineKind::Uring, true);
        assert!(!plain.plan.huge_pages);
        assert!(!render_text(&plain).contains("huge"));
        assert!(!report_fio_commands(&plain).join("\n").contains("--mem="));
        let mut r = report(32, EngineKind::Uring, true);
        r.plan.huge_pages = true;
        let text = render_text(&r);
        assert!(
            text.contains("O_DIRECT, buffers in huge pages, io_uring (fixed buffers)"),
            "{text}"
        );
        assert!(render_csv(&r).contains("# buffers in huge pages (--huge-pages)"));
        let json: serde_json::Value = serde_json::from_str(&render_json(&r).unwrap()).unwrap();
        assert_eq!(json["plan"]["huge_pages"], true);
        // fio's own huge pages, and how many it needs: 4 KiB x QD32 + a page, in one 2 MiB
        // page per job.
        let fio = report_fio_commands(&r).join("\n");
        assert!(
            fio.contains("--fixedbufs --registerfiles --mem=mmaphuge"),
            "{fio}"
        );
        assert!(fio.contains("--mem=mmaphuge takes 1 huge page(s)"), "{fio}");
        // 1 MiB requests on 8 pread threads: 8 jobs of 1 MiB + a page, a 2 MiB page each.
        let facts = gib_device();
        let params = TestParams {
            bs: Some(1 << 20),
            qd: Some(8),
            engine: EngineKind::Sync,
            huge_pages: true,
            ..TestParams::default()
        };
        let plan = build_plan(TestName::SeqRead, &params, &facts, false).unwrap();
        assert!(
            plan.notes
                .iter()
                .any(|n| n == crate::bench::spec::HUGE_PAGES_NOTE),
            "{:?}",
            plan.notes
        );
        let fio = fio_commands(&plan, std::path::Path::new("/dev/sdx"), None);
        assert!(fio.contains("takes 8 huge page(s)"), "{fio}");
        assert!(fio.contains("--thread --mem=mmaphuge"), "{fio}");
    }

    #[test]
    fn every_output_names_the_engine_and_why() {
        let r = report(8, EngineKind::Sync, false);
        let text = render_text(&r);
        assert!(
            text.contains("how:   O_DIRECT, sync (8 pread threads), bs 4k, QD8"),
            "{text}"
        );
        assert!(
            text.contains("engine auto: sync (pread/pwrite threads) 900k IOPS at 2.00 us CPU/IO vs io_uring 100k IOPS"),
            "{text}"
        );
        assert!(
            text.contains("after a 1.0 s warm-up (discarded; its first 0.60 s probed the engines)"),
            "{text}"
        );
        let csv = render_csv(&r);
        assert!(
            csv.contains("# phase 0 rand-read: engine sync (8 pread threads) - auto: sync"),
            "{csv}"
        );
        assert!(csv.contains("# latency: total: "), "{csv}");
        let json: serde_json::Value = serde_json::from_str(&render_json(&r).unwrap()).unwrap();
        let p = &json["outcome"]["phases"][0];
        assert_eq!(p["engine"], "sync");
        assert_eq!(p["engine_choice"]["asked"], "auto");
        assert_eq!(p["engine_choice"]["probe"]["sync"]["iops"], 9e5);
        assert!(
            json["outcome"]["latency_definition"]
                .as_str()
                .unwrap()
                .starts_with("total")
        );
        assert!(
            json["fio_commands"][0]
                .as_str()
                .unwrap()
                .contains("--ioengine=psync")
        );
    }
}
