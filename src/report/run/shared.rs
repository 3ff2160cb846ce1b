//! The words every format of a run report shares: a phase's engine and I/O path, the target,
//! the kernel's counters beside the test's, a rewrite's time base, a sweep's curves.

use std::fmt::Write as _;

use crate::bench::analysis::curve::{self, Curve, PhaseSample};
use crate::bench::plan::Mix;
use crate::bench::plan::TimeBase;
use crate::bench::plan::{PhaseTag, Plan, REWRITE_LABEL};
use crate::bench::results::engine_choice::engine_label;
use crate::bench::results::outcome::{
    PhaseResult, RunReport, TargetClass, TargetInfo, rate_settled,
};
use crate::model::text::neutralize_controls;
use crate::model::{Bytes, BytesPerSec};

pub(super) fn mbps(bytes_per_sec: f64) -> f64 {
    BytesPerSec(bytes_per_sec).mb_per_sec()
}

pub(super) fn ms(ns: f64) -> String {
    format!("{:.3}", ns / 1e6)
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

/// "O_DIRECT" or "BUFFERED (page cache)", and huge-page buffers (`--huge-pages`).
pub(super) fn io_path(plan: &Plan) -> String {
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

/// Which engine each phase used and why: one `prefix`ed line if all agree, else one per phase.
pub(super) fn engine_lines(r: &RunReport, prefix: &str) -> String {
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

pub(super) fn target_line(t: &TargetInfo) -> String {
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

/// A rewrite's time base where there is no room for the seconds (`rewrite_time_base` has
/// them); None for rates over the measured time.
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

/// A rewrite phase's time base with its seconds: "...; rates are over the 2.000 s the writes
/// took (the reads took 1.900 s more)". None for rates over the measured time.
pub fn rewrite_time_base(p: &PhaseResult) -> Option<String> {
    // The rest went to the reads of each block and the gaps between system calls.
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

pub(super) fn witness_lines(out: &mut String, p: &PhaseResult, kind: TargetClass) {
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

/// "others: dd (pid 812): 1.2 GiB read - they have the device open and did I/O ...", for a
/// phase during which other processes did I/O; every screen words it so.
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

/// Whether the phases are the metadata test's (files, not bytes: own CSV note, fio script).
pub(super) fn of_files(plan: &Plan) -> bool {
    matches!(plan.kind(), Some(PhaseTag::Metadata { .. }))
}

/// A sweep's curves from the phases with enough I/Os for a rate: the knees every output gives.
pub fn scaling_curves(r: &RunReport) -> Vec<Curve> {
    let samples: Vec<PhaseSample> = r
        .outcome
        .phases
        .iter()
        .filter(|p| rate_settled(p.read.ops + p.write.ops, p.rate_seconds))
        .filter_map(PhaseSample::of)
        .collect();
    curve::curves(&samples)
}
