//! The queue-depth sweep's table, as ORION gives it: per queue depth the small-I/O IOPS and
//! latency and the large-I/O MB/s, then the maxima and the knees.

use std::fmt::Write as _;

use super::shared::{mbps, ms, scaling_curves};
use crate::bench::analysis::curve::{self, Curve};
use crate::bench::plan::PhaseTag;
use crate::bench::results::outcome::{PhaseResult, RunReport};
use crate::model::Bytes;

/// ORION-style, with the load at which each maximum was reached.
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
    let curves = scaling_curves(r);
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
