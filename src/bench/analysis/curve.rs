//! The curves of a sweep and their knee. A size sweep gives MB/s against the request size (one
//! curve per pattern and direction, as diskperf's columns); a queue-depth sweep gives the small
//! I/O's IOPS, the large I/O's MB/s and the small I/O's latency against the depth. The knee
//! rule lives only here, so the CLI, the JSON and the TUI report the same knee.

use serde::Serialize;

use crate::bench::catalog::family::size_scaling::size_column;
use crate::bench::plan::Access;
use crate::bench::plan::PhaseTag;
use crate::bench::results::outcome::PhaseResult;
use crate::model::Bytes;

/// The knee: past it the figure grows by less than this many percent.
pub const KNEE_GROWTH_PCT: f64 = 10.0;

/// The rule in words, for the outputs that state it.
pub const KNEE_RULE: &str =
    "the smallest size or depth past which throughput grows by less than 10 %";

/// Where a curve levels off.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Knee {
    /// Past point `index` (in ascending x) no later point is 10 % or more above it.
    At(usize),
    /// The last point is still 10 % or more above every earlier one: no knee in the range.
    StillRising,
    /// Fewer than two points: nothing to judge.
    TooFew,
}

/// The knee of a curve in ascending x: the first point no later point exceeds by 10 % or more.
/// Every later point counts (not only the next), so a noisy dip before a further climb is no
/// plateau. A value that is not finite is never a knee nor growth.
pub fn knee(ys: &[f64]) -> Knee {
    if ys.len() < 2 {
        return Knee::TooFew;
    }
    let last = ys.len() - 1;
    // The largest later value of each point, from the right.
    let mut later_max = vec![f64::NEG_INFINITY; ys.len()];
    for i in (0..last).rev() {
        let next = if ys[i + 1].is_finite() {
            ys[i + 1]
        } else {
            f64::NEG_INFINITY
        };
        later_max[i] = later_max[i + 1].max(next);
    }
    (0..last)
        .find(|&i| {
            let y = ys[i];
            // later < y * 1.1, scaled so that exactly 10 % compares exactly.
            y.is_finite()
                && (later_max[i] <= y || later_max[i] * 100.0 < y * (100.0 + KNEE_GROWTH_PCT))
        })
        .map_or(Knee::StillRising, Knee::At)
}

/// One finished phase as the curves read it: from a run's phase (CLI) or its figures over the
/// repeats (TUI); with one repeat the same numbers.
#[derive(Debug, Clone, PartialEq)]
pub struct PhaseSample {
    pub tag: PhaseTag,
    /// Request size in bytes.
    pub bs: u64,
    /// MB/s (10^6 bytes per second).
    pub mbps: f64,
    pub iops: f64,
    pub mean_ms: Option<f64>,
    pub p99_ms: Option<f64>,
    /// Its rates rest on few I/Os (`outcome::low_count`): grids show them, marked; curves leave
    /// the phase out.
    pub low_count: bool,
}

impl PhaseSample {
    /// A phase that completed with an I/O in a measured time; else `None`.
    pub fn of(p: &PhaseResult) -> Option<PhaseSample> {
        let ops = p.read.ops + p.write.ops;
        if !p.ok() || !crate::bench::results::outcome::rate_measured(ops, p.rate_seconds) {
            return None;
        }
        Some(PhaseSample {
            tag: p.tag.clone(),
            bs: p.job.bs,
            mbps: p.bytes_per_sec() / 1e6,
            iops: p.iops(),
            mean_ms: p.latency().map(|l| l.mean_ns / 1e6),
            p99_ms: p.latency().map(|l| l.p99_ns as f64 / 1e6),
            low_count: crate::bench::results::outcome::low_count(ops, p.rate_seconds),
        })
    }
}

/// What a curve's x is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum XAxis {
    RequestSizeBytes,
    QueueDepth,
}

impl XAxis {
    /// An x value as the screens write it: "128k" or "8".
    pub fn label(self, x: u64) -> String {
        match self {
            XAxis::RequestSizeBytes => Bytes(x).short(),
            XAxis::QueueDepth => x.to_string(),
        }
    }
}

/// Which chart a curve belongs in: curves of one panel share a unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Panel {
    SizeRead,
    SizeWrite,
    QdIops,
    QdMbps,
    QdLatency,
}

impl Panel {
    /// The chart's title; `short` for a narrow panel.
    pub fn title(self, short: bool) -> &'static str {
        match (self, short) {
            (Panel::SizeRead, false) => "Read MB/s by request size",
            (Panel::SizeRead, true) => "Read MB/s by size",
            (Panel::SizeWrite, false) => "Write MB/s by request size",
            (Panel::SizeWrite, true) => "Write MB/s by size",
            (Panel::QdIops, false) => "Small random IOPS by QD",
            (Panel::QdIops, true) => "Small rnd IOPS",
            (Panel::QdMbps, false) => "Large sequential MB/s by QD",
            (Panel::QdMbps, true) => "Large seq MB/s",
            (Panel::QdLatency, false) => "Small random latency ms by QD",
            (Panel::QdLatency, true) => "Small rnd latency",
        }
    }

    /// The y unit.
    pub fn unit(self) -> &'static str {
        match self {
            Panel::SizeRead | Panel::SizeWrite | Panel::QdMbps => "MB/s",
            Panel::QdIops => "IOPS",
            Panel::QdLatency => "ms",
        }
    }
}

/// One line of a sweep chart.
#[derive(Debug, Clone, PartialEq)]
pub struct Curve {
    pub panel: Panel,
    /// diskperf's column name or ORION's figure: "fwd_rd", "small IOPS", "p99 ms".
    pub name: &'static str,
    /// A word for the legend: "forward", "p99".
    pub legend: &'static str,
    /// The letter that marks its points, so lines read apart without colour.
    pub letter: char,
    pub x: XAxis,
    /// (x, y) in ascending x.
    pub points: Vec<(u64, f64)>,
    /// None for a curve the rule does not apply to (latency).
    pub knee: Option<Knee>,
}

impl Curve {
    fn new(
        panel: Panel,
        name: &'static str,
        legend: &'static str,
        letter: char,
        x: XAxis,
        mut points: Vec<(u64, f64)>,
        with_knee: bool,
    ) -> Curve {
        points.sort_by_key(|p| p.0);
        points.dedup_by_key(|p| p.0);
        let knee = with_knee.then(|| knee(&points.iter().map(|p| p.1).collect::<Vec<_>>()));
        Curve {
            panel,
            name,
            legend,
            letter,
            x,
            points,
            knee,
        }
    }

    /// The knee's point, when the curve has one.
    pub fn knee_point(&self) -> Option<(u64, f64)> {
        match self.knee {
            Some(Knee::At(i)) => self.points.get(i).copied(),
            _ => None,
        }
    }

    /// The knee in words: "128k", "QD 8", "still rising at 1M", or "-".
    pub fn knee_text(&self) -> String {
        let at = |x: u64| match self.x {
            XAxis::RequestSizeBytes => XAxis::RequestSizeBytes.label(x),
            XAxis::QueueDepth => format!("QD {x}"),
        };
        match (self.knee, self.points.last()) {
            (Some(Knee::At(_)), _) => self.knee_point().map_or("-".into(), |(x, _)| at(x)),
            (Some(Knee::StillRising), Some(&(x, _))) => format!("still rising at {}", at(x)),
            _ => "-".into(),
        }
    }
}

/// The curves of a sweep's phases in drawing order: a size sweep's reads (forward, backward,
/// random) then writes; a queue-depth sweep's IOPS, MB/s and latency. Other phases give none.
pub fn curves(samples: &[PhaseSample]) -> Vec<Curve> {
    // A rate over few I/Os would bend a curve and move its knee: only settled ones.
    let settled: Vec<PhaseSample> = samples.iter().filter(|s| !s.low_count).cloned().collect();
    let samples = settled.as_slice();
    let mut out = Vec::new();
    for write in [false, true] {
        for (access, legend, letter) in [
            (Access::Forward, "forward", 'F'),
            (Access::Backward, "backward", 'B'),
            (Access::Random, "random", 'R'),
        ] {
            let points: Vec<(u64, f64)> = samples
                .iter()
                .filter(|s| s.tag == PhaseTag::Sweep { access, write })
                .map(|s| (s.bs, s.mbps))
                .collect();
            if points.is_empty() {
                continue;
            }
            let panel = if write {
                Panel::SizeWrite
            } else {
                Panel::SizeRead
            };
            out.push(Curve::new(
                panel,
                size_column(access, write),
                legend,
                letter,
                XAxis::RequestSizeBytes,
                points,
                true,
            ));
        }
    }
    let qd = |small: bool, f: &dyn Fn(&PhaseSample) -> Option<f64>| -> Vec<(u64, f64)> {
        samples
            .iter()
            .filter_map(|s| match s.tag {
                PhaseTag::QdSweep { small: sm, qd } if sm == small => {
                    f(s).map(|y| (u64::from(qd), y))
                }
                _ => None,
            })
            .collect()
    };
    let qd_curves = [
        (
            Panel::QdIops,
            "small IOPS",
            "IOPS",
            'S',
            qd(true, &|s| Some(s.iops)),
            true,
        ),
        (
            Panel::QdMbps,
            "large MB/s",
            "MB/s",
            'L',
            qd(false, &|s| Some(s.mbps)),
            true,
        ),
        (
            Panel::QdLatency,
            "mean ms",
            "mean",
            'M',
            qd(true, &|s| s.mean_ms),
            false,
        ),
        (
            Panel::QdLatency,
            "p99 ms",
            "p99",
            'P',
            qd(true, &|s| s.p99_ms),
            false,
        ),
    ];
    for (panel, name, legend, letter, points, with_knee) in qd_curves {
        if !points.is_empty() {
            out.push(Curve::new(
                panel,
                name,
                legend,
                letter,
                XAxis::QueueDepth,
                points,
                with_knee,
            ));
        }
    }
    out
}

/// A curve's knee as the JSON gives it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct KneeReport {
    /// The curve: diskperf's column ("fwd_rd") or ORION's figure ("small IOPS").
    pub series: &'static str,
    pub x: XAxis,
    /// The figure the rule watches: "MB/s" or "IOPS".
    pub unit: &'static str,
    /// The knee's x (bytes or depth); null when there is none.
    pub knee: Option<u64>,
    /// The figure at the knee.
    pub value: Option<f64>,
    /// The last point still grows by 10 % or more: no knee in the range swept.
    pub still_rising: bool,
    pub rule: &'static str,
}

/// The knees of a sweep's curves (none for a test that is not a sweep).
pub fn knee_reports(curves: &[Curve]) -> Vec<KneeReport> {
    curves
        .iter()
        .filter_map(|c| {
            let k = c.knee?;
            let point = c.knee_point();
            Some(KneeReport {
                series: c.name,
                x: c.x,
                unit: c.panel.unit(),
                knee: point.map(|p| p.0),
                value: point.map(|p| p.1),
                still_rising: k == Knee::StillRising,
                rule: KNEE_RULE,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn knee_is_where_growth_drops_below_ten_percent() {
        // diskperf's example, fwd_rd: 88.94 at 1M, and no later size is 10 % above it.
        let fwd_rd = [
            10.71, 19.30, 32.32, 48.97, 65.90, 79.62, 88.94, 88.86, 88.90, 88.81, 88.84,
        ];
        assert_eq!(knee(&fwd_rd), Knee::At(6));
        // 79.62 -> 88.94 is 11.7 %: 512k is not the knee.
        assert_eq!(knee(&fwd_rd[..7]), Knee::StillRising);
        // Growth of exactly 10 % still counts as growth.
        assert_eq!(knee(&[100.0, 110.0, 110.0]), Knee::At(1));
        assert_eq!(knee(&[100.0, 109.9, 109.9]), Knee::At(0));
    }

    #[test]
    fn a_dip_before_a_further_climb_is_no_knee() {
        // A noisy step down at 3 does not hide the climb that follows.
        assert_eq!(knee(&[10.0, 20.0, 40.0, 38.0, 60.0, 61.0]), Knee::At(4));
        // Small steps that add up past 10 % are growth too.
        assert_eq!(knee(&[100.0, 106.0, 112.0, 118.0, 119.0]), Knee::At(2));
    }

    #[test]
    fn flat_falling_short_and_odd_curves() {
        assert_eq!(knee(&[]), Knee::TooFew);
        assert_eq!(knee(&[5.0]), Knee::TooFew);
        assert_eq!(knee(&[50.0, 50.0, 50.0]), Knee::At(0));
        assert_eq!(knee(&[90.0, 60.0, 30.0]), Knee::At(0));
        assert_eq!(knee(&[0.0, 0.0]), Knee::At(0));
        assert_eq!(knee(&[0.0, 1.0]), Knee::StillRising);
        assert_eq!(knee(&[f64::NAN, 10.0, 10.5]), Knee::At(1));
        assert_eq!(knee(&[10.0, f64::INFINITY, 10.5]), Knee::At(0));
    }

    fn sample(tag: PhaseTag, bs: u64, mbps: f64) -> PhaseSample {
        PhaseSample {
            tag,
            bs,
            mbps,
            iops: mbps * 1e6 / bs as f64,
            mean_ms: Some(1000.0 / mbps),
            p99_ms: Some(3000.0 / mbps),
            low_count: false,
        }
    }

    #[test]
    fn size_sweep_curves_and_their_knees() {
        let mut samples = Vec::new();
        for (i, bs) in [4096u64, 8192, 16384, 32768].into_iter().enumerate() {
            let fwd = [100.0, 200.0, 300.0, 310.0][i];
            let rnd = [10.0, 20.0, 40.0, 80.0][i];
            for (access, v) in [(Access::Forward, fwd), (Access::Random, rnd)] {
                samples.push(sample(
                    PhaseTag::Sweep {
                        access,
                        write: false,
                    },
                    bs,
                    v,
                ));
            }
        }
        let c = curves(&samples);
        let names: Vec<&str> = c.iter().map(|c| c.name).collect();
        assert_eq!(names, ["fwd_rd", "rnd_rd"]);
        assert_eq!(c[0].knee_point(), Some((16384, 300.0)));
        assert_eq!(c[0].knee_text(), "16k");
        assert_eq!(c[1].knee, Some(Knee::StillRising));
        assert_eq!(c[1].knee_text(), "still rising at 32k");
        let json = knee_reports(&c);
        assert_eq!(json[0].knee, Some(16384));
        assert!(json[1].still_rising && json[1].knee.is_none());
    }

    #[test]
    fn qd_sweep_curves_have_knees_on_throughput_only() {
        let mut samples = Vec::new();
        for (qd, iops, mb) in [
            (1u32, 1000.0, 100.0),
            (2, 1900.0, 180.0),
            (4, 2000.0, 185.0),
        ] {
            let mut s = sample(PhaseTag::QdSweep { small: true, qd }, 8192, 1.0);
            s.iops = iops;
            samples.push(s);
            samples.push(sample(PhaseTag::QdSweep { small: false, qd }, 1 << 20, mb));
        }
        let c = curves(&samples);
        let names: Vec<&str> = c.iter().map(|c| c.name).collect();
        assert_eq!(names, ["small IOPS", "large MB/s", "mean ms", "p99 ms"]);
        assert_eq!(c[0].knee_text(), "QD 2");
        assert_eq!(c[1].knee_point(), Some((2, 180.0)));
        assert_eq!(c[2].knee, None);
        assert_eq!(knee_reports(&c).len(), 2);
    }
}
