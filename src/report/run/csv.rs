//! The per-interval series of every phase as CSV, its notes in comment lines before the
//! header.

use std::fmt::Write as _;

use super::shared::{of_files, phase_engine_label, rewrite_time_base};
use crate::bench::plan::REWRITE_NOTE;
use crate::bench::results::outcome::{RunReport, low_count_note};
use crate::bench::results::stats::per_second;

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
