//! The metadata test's table, as bonnie++ -n gives it: files per second of each phase and
//! the latency of its operation.

use std::fmt::Write as _;

use super::shared::ms;
use crate::bench::results::outcome::{
    MIN_RATE_OPS, MIN_RATE_SECONDS, RunReport, low_count, low_count_note, rate_measured,
};
use crate::bench::results::stats::LatencySummary;

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
