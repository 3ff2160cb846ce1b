//! The human summary `disktriage run` prints (target, notes, results laid out by the kind of
//! the phases) and the summary of a test's repeats.

use std::fmt::Write as _;

use super::cdm::cdm_grid;
use super::metadata::metadata_table;
use super::qd_scaling::qd_table;
use super::shared::{
    CPU_BOUND_NOTE, engine_lines, io_path, mbps, ms, phase_engine_label, rewrite_time_base,
    target_line, witness_lines,
};
use super::size_scaling::size_table;
use crate::bench::analysis::curve::{self, PhaseSample};
use crate::bench::plan::{Job, PhaseTag, Plan};
use crate::bench::results::engine_choice::EngineProbe;
use crate::bench::results::outcome::{
    DirTotals, PhaseResult, RunReport, TargetClass, low_count_note, rate_measured,
};
use crate::bench::results::stats::LatencySummary;
use crate::model::text::neutralize_controls;
use crate::model::{Bytes, BytesPerSec};
use crate::sys::direct::SyncMode;

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
    // The bounds are what was asked: a phase that failed before measuring did none of it.
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

/// A run's results by the kind of its phases, not its test: a new kind of phase is one arm.
/// True when the results are one table, so the caller says the run's error.
fn results_text(out: &mut String, r: &RunReport) -> bool {
    match r.plan.kind() {
        Some(PhaseTag::Sweep { .. }) => {
            out.push_str(&size_table(r));
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

/// The report of a test's repeats: `heading`, per phase the figures over the repeats
/// (`bench::analysis::figures`), a sweep's knees of the means, then every repeat's report.
/// One repeat: its report alone.
pub fn render_repeats_text(runs: &[RunReport], heading: &str) -> String {
    let n = runs.len();
    if n <= 1 {
        return runs.first().map(render_text).unwrap_or_default();
    }
    let figures = crate::bench::analysis::figures::figures(runs);
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
        .filter_map(crate::bench::analysis::figures::PhaseFigures::sample)
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
