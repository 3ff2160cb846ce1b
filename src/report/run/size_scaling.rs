//! The request-size sweep's table, as diskperf gives it: one row per request size, MB/s per
//! pattern and direction, gnuplot-ready.

use std::fmt::Write as _;

use super::shared::{engine_lines, mbps, scaling_curves, target_line};
use crate::bench::analysis::curve;
use crate::bench::catalog::family::size_scaling::size_column;
use crate::bench::plan::Access;
use crate::bench::plan::{PhaseTag, REWRITE_LABEL};
use crate::bench::results::outcome::RunReport;

/// diskperf's table, gnuplot-ready: comment lines start with #, missing values are "-".
pub fn size_table(r: &RunReport) -> String {
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
        let _ = write!(header, " {:>9}", size_column(a, w));
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
    let knees: Vec<String> = scaling_curves(r)
        .iter()
        .map(|c| format!("{} {}", c.name, c.knee_text()))
        .collect();
    if !knees.is_empty() {
        let _ = writeln!(out, "# knee: {}", knees.join(", "));
        let _ = writeln!(out, "# (knee: {})", curve::KNEE_RULE);
    }
    out
}
