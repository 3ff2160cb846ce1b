//! The figures a run's report shows over its repeats: per phase the mean MB/s, IOPS and
//! latency percentiles with their spread. Every screen, export and the history take them from
//! here, so a figure is the same wherever it is read.

use serde::{Deserialize, Serialize};

use crate::bench::plan::PhaseTag;
use crate::bench::results::outcome::{PhaseResult, RunReport};

use crate::bench::analysis::compare::Stat;
use crate::bench::plan::TimeBase;
use crate::bench::results::stats::{LatencyHistogram, LatencySummary};

/// A phase's figures over the repeats.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PhaseFigures {
    pub label: String,
    pub tag: PhaseTag,
    /// Request size in bytes.
    pub bs: u64,
    /// I/Os and seconds of a repeat (the mean over the repeats): the rates' time base
    /// (`time_base`).
    pub ops: u64,
    pub seconds: f64,
    /// What `seconds` is: the measured time, or a rewrite's write-busy time. Older records
    /// measured every rate over the elapsed time.
    #[serde(default)]
    pub time_base: TimeBase,
    /// MB/s (10^6 bytes per second): the mean of the repeats' MB/s, their spread the noise.
    pub mbps: Stat,
    pub iops: Stat,
    /// The slowest and fastest MB/s of a whole interval over every repeat (a sliver at a phase's
    /// end left out, as live). None in older records and for phases with no whole interval.
    #[serde(default)]
    pub mbps_min_max: Option<(f64, f64)>,
    /// Latencies over every I/O of every repeat (histograms merged): `mean` is that figure,
    /// `spread_pct` the spread of the repeats' own.
    pub mean_ms: Option<Stat>,
    pub p50_ms: Option<Stat>,
    pub p99_ms: Option<Stat>,
    pub p999_ms: Option<Stat>,
}

impl PhaseFigures {
    /// The phase as the sweep charts and the CrystalDiskMark grid read it: the means over the
    /// repeats. None when it has no rate.
    pub fn sample(&self) -> Option<crate::bench::analysis::curve::PhaseSample> {
        self.rates_measured()
            .then(|| crate::bench::analysis::curve::PhaseSample {
                tag: self.tag.clone(),
                bs: self.bs,
                mbps: self.mbps.mean,
                iops: self.iops.mean,
                mean_ms: self.mean_ms.map(|s| s.mean),
                p99_ms: self.p99_ms.map(|s| s.mean),
                low_count: self.low_count(),
            })
    }

    /// Are there MB/s and IOPS at all? Every screen shows them then, marked when `low_count`.
    pub fn rates_measured(&self) -> bool {
        crate::bench::results::outcome::rate_measured(self.ops, self.seconds)
    }

    /// Are the rates settled? Sweep charts and knees use only these.
    pub fn rates_settled(&self) -> bool {
        crate::bench::results::outcome::rate_settled(self.ops, self.seconds)
    }

    /// The rates rest on few I/Os or little time: shown, and marked.
    pub fn low_count(&self) -> bool {
        crate::bench::results::outcome::low_count(self.ops, self.seconds)
    }

    /// "10 I/Os in 11.12 ms: low count", the mark of thin rates; None for settled ones.
    pub fn low_count_note(&self) -> Option<String> {
        crate::bench::results::outcome::low_count_note(self.ops, self.seconds)
    }

    /// "1 I/O in 0.90 ms": what the rates are computed over.
    pub fn time_base(&self) -> String {
        crate::bench::results::outcome::time_base(self.ops, self.seconds)
    }
}

/// Per phase (in the first repeat's order), the figures over the repeats of one test; a phase
/// that failed in a repeat is left out of that repeat's share. The one place such figures are
/// computed.
pub fn figures(runs: &[RunReport]) -> Vec<PhaseFigures> {
    let Some(first) = runs.first() else {
        return Vec::new();
    };
    first
        .outcome
        .phases
        .iter()
        .filter_map(|p0| {
            // Each repeat's share of the phase, with the length of a whole interval of its plan.
            let shares: Vec<(&PhaseResult, f64)> = runs
                .iter()
                .filter_map(|r| {
                    let p = r.outcome.phases.iter().find(|p| p.label == p0.label)?;
                    Some((p, r.plan.interval.as_secs_f64()))
                })
                .filter(|(p, _)| p.ok())
                .collect();
            let phases: Vec<&PhaseResult> = shares.iter().map(|(p, _)| *p).collect();
            let pick = |f: &dyn Fn(&PhaseResult) -> Option<f64>| {
                Stat::of(&phases.iter().filter_map(|p| f(p)).collect::<Vec<_>>())
            };
            let n = phases.len().max(1);
            let merged = merged_latency(&phases);
            // A latency figure over all the repeats' I/Os, its spread the repeats' own.
            let lat = |f: &dyn Fn(&LatencySummary) -> f64| {
                let each = pick(&|p| p.latency().map(f))?;
                Some(Stat {
                    mean: merged.as_ref().map_or(each.mean, f),
                    spread_pct: each.spread_pct,
                })
            };
            let ms = 1e6;
            Some(PhaseFigures {
                label: p0.label.clone(),
                tag: p0.tag.clone(),
                bs: p0.job.bs,
                ops: phases.iter().map(|p| p.read.ops + p.write.ops).sum::<u64>() / n as u64,
                seconds: phases.iter().map(|p| p.rate_seconds).sum::<f64>() / n as f64,
                time_base: p0.time_base,
                mbps: pick(&|p| Some(p.bytes_per_sec() / 1e6))?,
                iops: pick(&|p| Some(p.iops()))?,
                mbps_min_max: interval_mbps_min_max(&shares),
                mean_ms: lat(&|l| l.mean_ns / ms),
                p50_ms: lat(&|l| l.p50_ns as f64 / ms),
                p99_ms: lat(&|l| l.p99_ns as f64 / ms),
                p999_ms: lat(&|l| l.p999_ns as f64 / ms),
            })
        })
        .collect()
}

/// The main direction's latency over all the phases' I/Os (histograms merged). None when a
/// phase kept no histogram: then the repeats' own figures are averaged.
fn merged_latency(phases: &[&PhaseResult]) -> Option<LatencySummary> {
    if let [one] = phases {
        return one.latency().copied();
    }
    let mut merged = LatencyHistogram::new();
    for p in phases {
        let d = p.latency_direction()?;
        if d.latency_buckets.is_empty() {
            return None;
        }
        for &(value, count) in &d.latency_buckets {
            merged.record_n(value, count);
        }
    }
    merged.summary()
}

/// The slowest and fastest MB/s of a whole interval (at least half the plan's interval, as
/// the live figures count one) over every repeat's series.
fn interval_mbps_min_max(shares: &[(&PhaseResult, f64)]) -> Option<(f64, f64)> {
    shares
        .iter()
        .flat_map(|(p, interval)| {
            p.series
                .points
                .iter()
                .filter(move |pt| pt.seconds() > 0.0 && pt.seconds() >= interval / 2.0)
                .map(|pt| pt.rate() / 1e6)
        })
        .fold(None, |acc, r| match acc {
            None => Some((r, r)),
            Some((lo, hi)) => Some((f64::min(lo, r), f64::max(hi, r))),
        })
}

/// A run's figures in one row (Results, `disktriage history`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RowFigures {
    pub phases: usize,
    /// None when no phase completed an I/O in a measured time.
    pub mbps: Option<f64>,
    pub iops: Option<f64>,
    pub p99_ms: Option<f64>,
    pub noise_pct: Option<f64>,
    /// The rates come from phases with a low count (no phase had a settled one).
    pub low_count: bool,
}

/// A run's row: a single phase's figures, or for several the peak MB/s and IOPS and the worst
/// p99, with the largest spread. Phases with settled rates make it when there are any; else
/// those with a low count, and the row says so.
pub fn row(all: &[PhaseFigures]) -> Option<RowFigures> {
    let settled: Vec<&PhaseFigures> = all.iter().filter(|f| f.rates_settled()).collect();
    let low_count = settled.is_empty();
    let figures = if low_count {
        all.iter().filter(|f| f.rates_measured()).collect()
    } else {
        settled
    };
    if figures.is_empty() {
        return all.first().map(|f| RowFigures {
            phases: all.len(),
            mbps: None,
            iops: None,
            p99_ms: f.p99_ms.map(|s| s.mean),
            noise_pct: None,
            low_count: false,
        });
    }
    let max = |v: &mut dyn Iterator<Item = f64>| v.reduce(f64::max);
    Some(RowFigures {
        phases: figures.len(),
        mbps: max(&mut figures.iter().map(|f| f.mbps.mean)),
        iops: max(&mut figures.iter().map(|f| f.iops.mean)),
        p99_ms: max(&mut figures.iter().filter_map(|f| f.p99_ms.map(|s| s.mean))),
        noise_pct: max(&mut figures.iter().filter_map(|f| f.mbps.spread_pct)),
        low_count,
    })
}
