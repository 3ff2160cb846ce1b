//! CrystalDiskMark's grid (one row per test, read and write side by side) and the cell
//! formats the TUI's grid shares with it.

use std::fmt::Write as _;

use super::shared::{io_path, mbps, witness_lines};
use crate::bench::plan::{PhaseTag, REWRITE_LABEL};
use crate::bench::results::outcome::{PhaseResult, RunReport};
use crate::model::Bytes;

/// A CrystalDiskMark cell's MB/s, two decimals as it writes them; the TUI's grid shares it.
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
