//! A sweep: one test run under each value of one setting (every I/O scheduler the device
//! offers, or the drive's volatile write cache on and off), and which value wins.
//!
//! Plain data and pure functions shared by the CLI (`commands::setting_sweep`) and the TUI:
//! the order of the runs, a run's figure (`Metric`, the test's headline), and the result
//! (`SweepResult`): per value its mean and spread over the repeats, the difference to the
//! value found at start and whether it is beyond the noise (`compare::delta`), and the winner.
//!
//! Repeats are interleaved (a, b, c, a, b, c, ...) so a drift (a drive warming up, another
//! program, the host's page cache) hits every value alike. The value found at start comes
//! first: the first run changes nothing, so a refused run is refused before any change.

use serde::Serialize;

use crate::bench::analysis::compare::{Delta, Significance, Stat, delta};
use crate::bench::plan::metric::Metric;
use crate::bench::plan::test_name::TestName;
use crate::bench::results::outcome::{PhaseResult, RunReport, rate_settled};
use crate::model::DriveCache;
use crate::model::cache::on_off;

/// The setting a sweep goes through.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SweepKind {
    /// The I/O scheduler (`queue/scheduler`).
    Scheduler,
    /// The drive's own volatile write cache (through `DriveControl`).
    WriteCache,
}

impl SweepKind {
    /// "scheduler", "write cache state".
    pub fn noun(self) -> &'static str {
        match self {
            SweepKind::Scheduler => "scheduler",
            SweepKind::WriteCache => "write cache state",
        }
    }

    /// The heading of the setting's column.
    pub fn column(self) -> &'static str {
        match self {
            SweepKind::Scheduler => "SCHEDULER",
            SweepKind::WriteCache => "WRITE CACHE",
        }
    }

    /// "Scheduler sweep", "Write cache sweep".
    pub fn title(self) -> &'static str {
        match self {
            SweepKind::Scheduler => "Scheduler sweep",
            SweepKind::WriteCache => "Write cache sweep",
        }
    }
}

/// The most repeats a sweep takes.
pub const MAX_REPEATS: u32 = 20;
/// Repeats of each value unless asked otherwise.
pub const DEFAULT_REPEATS: u32 = 3;

/// The seed's pair (seed 000, the Thomas-Krenn dd page): a 1 GiB sequential write and a
/// thousand 512-byte synchronous writes, each with the cache on and off.
pub const CACHE_PRESET: [TestName; 2] = [TestName::SeqWrite, TestName::SyncLatency];
/// The amount the preset's sequential write transfers (dd bs=1G count=1).
pub const CACHE_PRESET_WRITE_BYTES: u64 = 1 << 30;

/// One run of a sweep: which repeat, under which value, of which test.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct SweepStep {
    /// From 0.
    pub repeat: u32,
    /// Index into the sweep's values.
    pub setting: usize,
    /// Index into the sweep's tests.
    pub test: usize,
}

/// The runs of a sweep in order: repeat by repeat, every value in turn, every test under one
/// value (so a value is set once per repeat).
pub fn order(settings: usize, repeats: u32, tests: usize) -> Vec<SweepStep> {
    let mut steps = Vec::with_capacity(settings * repeats as usize * tests);
    for repeat in 0..repeats {
        for setting in 0..settings {
            for test in 0..tests {
                steps.push(SweepStep {
                    repeat,
                    setting,
                    test,
                });
            }
        }
    }
    steps
}

/// The values of a scheduler sweep: those asked for (all offered when none), the active one
/// first. A name the device does not offer is an error listing what it offers.
pub fn scheduler_values(
    available: &[String],
    active: &str,
    asked: &[String],
) -> Result<Vec<String>, String> {
    if let Some(bad) = asked.iter().find(|a| !available.contains(a)) {
        return Err(format!(
            "the device offers no I/O scheduler {bad:?}; available: {}",
            available.join(", ")
        ));
    }
    let wanted: Vec<&String> = if asked.is_empty() {
        available.iter().collect()
    } else {
        asked.iter().collect()
    };
    let mut values = vec![active.to_string()];
    for w in wanted {
        if !values.contains(w) {
            values.push(w.clone());
        }
    }
    if values.len() < 2 {
        return Err(format!(
            "nothing to compare: {active} is the only scheduler in the sweep"
        ));
    }
    Ok(values)
}

/// The values of a write-cache sweep, the state found at start first ("on", "off"); why
/// the drive's cache cannot be swept otherwise.
pub fn cache_values(cache: &DriveCache) -> Result<Vec<String>, String> {
    let Some(on) = cache.enabled else {
        return Err("the drive reports no volatile write cache".into());
    };
    if !cache.changeable {
        return Err(cache
            .fixed_reason
            .clone()
            .unwrap_or_else(|| "the drive does not let the host switch its cache".into()));
    }
    Ok(vec![on_off(on).to_string(), on_off(!on).to_string()])
}

impl Metric {
    /// The figure of one finished run; `None` when it failed, was stopped, or has a low count (the
    /// report shows that rate, marked; no winner is named on it).
    pub fn of(self, report: &RunReport) -> Option<f64> {
        if report.outcome.stopped || report.error().is_some() {
            return None;
        }
        let phases: Vec<&PhaseResult> = report.outcome.phases.iter().filter(|p| p.ok()).collect();
        let rated = || {
            phases
                .iter()
                .filter(|p| rate_settled(p.read.ops + p.write.ops, p.rate_seconds))
        };
        match self {
            Metric::MbPerSec => rated().map(|p| p.bytes_per_sec() / 1e6).reduce(f64::max),
            Metric::Iops => rated().map(|p| p.iops()).reduce(f64::max),
            Metric::MeanLatencyMs => phases
                .first()
                .and_then(|p| p.latency())
                .map(|l| l.mean_ns / 1e6),
        }
    }
}

/// One run's contribution to a sweep.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct SweepSample {
    pub step: SweepStep,
    /// `Metric::of` the run's report.
    pub value: Option<f64>,
}

/// One value's line of a test's sweep.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SweepRow {
    /// The scheduler's name, or "on"/"off".
    pub setting: String,
    /// The value found at start (the base of the deltas).
    pub baseline: bool,
    /// Each repeat's figure, in the order they ran.
    pub values: Vec<f64>,
    /// Mean and spread over the repeats.
    pub figure: Option<Stat>,
    /// Against the value found at start (`None` for that one, or without figures).
    pub delta: Option<Delta>,
    /// The difference goes the good way (more MB/s or IOPS, less latency).
    pub better: Option<bool>,
}

impl SweepRow {
    /// "yes: better", "no", "unknown": is the difference beyond the noise?
    pub fn beyond_noise(&self) -> &'static str {
        match (&self.delta, self.better) {
            (None, _) => "-",
            (Some(d), better) => match d.significance {
                Significance::Significant if better == Some(true) => "yes, better",
                Significance::Significant => "yes, worse",
                Significance::WithinNoise => "no",
                Significance::NoiseUnknown => "unknown",
            },
        }
    }
}

/// Which value won a test's sweep.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum SweepVerdict {
    /// Better than the value at start by more than the noise (the best such one).
    Winner {
        setting: String,
        /// Its difference to the value at start, in percent.
        pct: f64,
        noise_pct: f64,
    },
    /// None is better than the value at start beyond the noise.
    NoneBetter { baseline: String },
    /// A single repeat: the noise is not measured, so no winner can be named.
    NoiseUnknown,
    /// The value at start, or every other, has no figure (the sweep stopped early).
    NoFigures,
}

/// One test's part of a sweep.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TestSweep {
    pub test: TestName,
    pub metric: Metric,
    pub rows: Vec<SweepRow>,
    pub verdict: SweepVerdict,
}

/// What a sweep found.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SweepResult {
    pub kind: SweepKind,
    /// The disk whose setting was swept.
    pub device: String,
    /// The values in sweep order; the first is the one found at start.
    pub settings: Vec<String>,
    pub repeats: u32,
    /// Runs made of the planned ones.
    pub runs_done: usize,
    pub runs_planned: usize,
    pub tests: Vec<TestSweep>,
}

impl SweepResult {
    /// Builds the result from the samples of the runs made. `settings[0]` is the value found
    /// at start.
    pub fn build(
        kind: SweepKind,
        device: &str,
        settings: &[String],
        repeats: u32,
        tests: &[TestName],
        samples: &[SweepSample],
    ) -> SweepResult {
        let planned = settings.len() * repeats as usize * tests.len();
        let tests = tests
            .iter()
            .enumerate()
            .map(|(ti, &test)| test_sweep(test, ti, settings, samples))
            .collect();
        SweepResult {
            kind,
            device: device.to_string(),
            settings: settings.to_vec(),
            repeats,
            runs_done: samples.len(),
            runs_planned: planned,
            tests,
        }
    }

    /// Every planned run was made.
    pub fn complete(&self) -> bool {
        self.runs_done >= self.runs_planned
    }
}

fn test_sweep(
    test: TestName,
    ti: usize,
    settings: &[String],
    samples: &[SweepSample],
) -> TestSweep {
    let metric = Metric::for_test(test);
    let values_of = |si: usize| -> Vec<f64> {
        samples
            .iter()
            .filter(|s| s.step.test == ti && s.step.setting == si)
            .filter_map(|s| s.value)
            .collect()
    };
    let base = Stat::of(&values_of(0));
    let rows: Vec<SweepRow> = settings
        .iter()
        .enumerate()
        .map(|(si, name)| {
            let values = values_of(si);
            let figure = Stat::of(&values);
            let d = match (si, base, figure) {
                (0, ..) => None,
                (_, Some(b), Some(f)) => Some(delta(b, f)),
                _ => None,
            };
            let better = d.as_ref().map(|d| {
                if metric.higher_is_better() {
                    d.pct > 0.0
                } else {
                    d.pct < 0.0
                }
            });
            SweepRow {
                setting: name.clone(),
                baseline: si == 0,
                values,
                figure,
                delta: d,
                better,
            }
        })
        .collect();
    let verdict = verdict(metric, &rows);
    TestSweep {
        test,
        metric,
        rows,
        verdict,
    }
}

/// The best value that beats the one at start beyond the noise; else why there is none.
fn verdict(metric: Metric, rows: &[SweepRow]) -> SweepVerdict {
    let Some(base) = rows.first() else {
        return SweepVerdict::NoFigures;
    };
    if base.figure.is_none() || rows[1..].iter().all(|r| r.figure.is_none()) {
        return SweepVerdict::NoFigures;
    }
    let winners = rows[1..].iter().filter_map(|r| match &r.delta {
        Some(d) if d.significance == Significance::Significant && r.better == Some(true) => {
            Some((r, d))
        }
        _ => None,
    });
    let best = winners.reduce(|a, b| {
        let b_wins = if metric.higher_is_better() {
            b.1.b > a.1.b
        } else {
            b.1.b < a.1.b
        };
        if b_wins { b } else { a }
    });
    if let Some((r, d)) = best {
        return SweepVerdict::Winner {
            setting: r.setting.clone(),
            pct: d.pct,
            noise_pct: d.noise_pct.unwrap_or(0.0),
        };
    }
    if rows[1..].iter().any(|r| {
        r.delta
            .as_ref()
            .is_some_and(|d| d.significance == Significance::NoiseUnknown)
    }) {
        return SweepVerdict::NoiseUnknown;
    }
    SweepVerdict::NoneBetter {
        baseline: base.setting.clone(),
    }
}

impl SweepVerdict {
    /// The verdict as a sentence: "winner: bfq, +12.3 % MB/s against none, beyond the noise
    /// (3.1 %)" or "no scheduler is better beyond the noise than none (the one at start)".
    pub fn describe(&self, kind: SweepKind, metric: Metric, baseline: &str) -> String {
        match self {
            SweepVerdict::Winner {
                setting,
                pct,
                noise_pct,
            } => format!(
                "winner: {}, {pct:+.1} % {} against {} (beyond the noise of {noise_pct:.1} %)",
                label(kind, setting),
                metric.unit(),
                label(kind, baseline)
            ),
            SweepVerdict::NoneBetter { baseline } => format!(
                "no {} is better beyond the noise than {} (the one at start)",
                kind.noun(),
                label(kind, baseline)
            ),
            SweepVerdict::NoiseUnknown => {
                "no winner: with 1 repeat the noise is unknown (2 or more repeats name one)".into()
            }
            SweepVerdict::NoFigures => "no winner: a value has no figure (the sweep ended \
                                          early, or its runs did too few I/Os for a rate)"
                .into(),
        }
    }

    /// The winning value, if any.
    pub fn winner(&self) -> Option<&str> {
        match self {
            SweepVerdict::Winner { setting, .. } => Some(setting),
            _ => None,
        }
    }
}

/// A value as a sentence names it: "bfq", "cache off".
pub fn label(kind: SweepKind, setting: &str) -> String {
    match kind {
        SweepKind::Scheduler => setting.to_string(),
        SweepKind::WriteCache => format!("cache {setting}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn the_order_interleaves_repeats_and_sets_a_value_once_per_repeat() {
        let steps = order(3, 2, 1);
        let settings: Vec<usize> = steps.iter().map(|s| s.setting).collect();
        assert_eq!(settings, [0, 1, 2, 0, 1, 2]);
        let repeats: Vec<u32> = steps.iter().map(|s| s.repeat).collect();
        assert_eq!(repeats, [0, 0, 0, 1, 1, 1]);
        // Two tests under one value: both run before the value changes.
        let steps = order(2, 1, 2);
        let pairs: Vec<(usize, usize)> = steps.iter().map(|s| (s.setting, s.test)).collect();
        assert_eq!(pairs, [(0, 0), (0, 1), (1, 0), (1, 1)]);
        assert!(order(0, 3, 1).is_empty());
    }

    #[test]
    fn scheduler_values_start_with_the_active_one() {
        let avail = names(&["none", "mq-deadline", "kyber", "bfq"]);
        assert_eq!(
            scheduler_values(&avail, "mq-deadline", &[]).unwrap(),
            names(&["mq-deadline", "none", "kyber", "bfq"])
        );
        // Asked for two without the active one: it is added first, as the base.
        assert_eq!(
            scheduler_values(&avail, "none", &names(&["bfq", "kyber", "bfq"])).unwrap(),
            names(&["none", "bfq", "kyber"])
        );
        let e = scheduler_values(&avail, "none", &names(&["cfq"])).unwrap_err();
        assert!(
            e.contains("\"cfq\"") && e.contains("none, mq-deadline"),
            "{e}"
        );
        let e = scheduler_values(&names(&["none"]), "none", &[]).unwrap_err();
        assert!(e.contains("only scheduler"), "{e}");
    }

    fn samples(values: &[&[f64]]) -> Vec<SweepSample> {
        // values[setting][repeat], laid out in sweep order.
        let repeats = values[0].len() as u32;
        order(values.len(), repeats, 1)
            .into_iter()
            .map(|step| SweepSample {
                step,
                value: values[step.setting].get(step.repeat as usize).copied(),
            })
            .collect()
    }

    fn build(test: TestName, values: &[&[f64]]) -> SweepResult {
        let settings = names(&["none", "mq-deadline", "bfq"][..values.len()]);
        SweepResult::build(
            SweepKind::Scheduler,
            "loop0",
            &settings,
            values[0].len() as u32,
            &[test],
            &samples(values),
        )
    }

    #[test]
    fn the_winner_beats_the_start_beyond_the_noise() {
        let r = build(
            TestName::SeqRead,
            &[
                &[100.0, 102.0, 98.0],
                &[120.0, 121.0, 119.0],
                &[130.0, 131.0, 129.0],
            ],
        );
        let t = &r.tests[0];
        assert_eq!(t.metric, Metric::MbPerSec);
        assert_eq!(t.rows[0].figure.unwrap().mean, 100.0);
        assert!(t.rows[0].delta.is_none());
        assert_eq!(t.rows[2].delta.as_ref().unwrap().pct, 30.0);
        assert_eq!(t.rows[2].beyond_noise(), "yes, better");
        assert_eq!(t.verdict.winner(), Some("bfq"));
        assert!(r.complete());
        assert!(
            t.verdict
                .describe(r.kind, t.metric, "none")
                .starts_with("winner: bfq, +30.0 % MB/s against none"),
        );
    }

    #[test]
    fn within_the_noise_there_is_no_winner() {
        // mq-deadline is 5 % faster, but the start's repeats spread 20 %.
        let r = build(
            TestName::SeqRead,
            &[&[90.0, 110.0, 100.0], &[105.0, 105.0, 105.0]],
        );
        let t = &r.tests[0];
        assert_eq!(t.rows[1].beyond_noise(), "no");
        assert_eq!(
            t.verdict,
            SweepVerdict::NoneBetter {
                baseline: "none".into()
            }
        );
        assert_eq!(
            t.verdict.describe(r.kind, t.metric, "none"),
            "no scheduler is better beyond the noise than none (the one at start)"
        );
    }

    #[test]
    fn worse_beyond_the_noise_is_not_a_winner() {
        let r = build(TestName::RandRead, &[&[1000.0, 1001.0], &[500.0, 501.0]]);
        let t = &r.tests[0];
        assert_eq!(t.metric, Metric::Iops);
        assert_eq!(t.rows[1].beyond_noise(), "yes, worse");
        assert!(t.verdict.winner().is_none());
    }

    #[test]
    fn lower_latency_wins() {
        let r = build(
            TestName::SyncLatency,
            &[&[11.0, 11.2, 11.1], &[0.36, 0.37, 0.36]],
        );
        let t = &r.tests[0];
        assert_eq!(t.metric, Metric::MeanLatencyMs);
        assert_eq!(t.rows[1].better, Some(true));
        assert_eq!(t.verdict.winner(), Some("mq-deadline"));
    }

    #[test]
    fn one_repeat_names_no_winner_and_an_early_end_says_so() {
        let r = build(TestName::SeqRead, &[&[100.0], &[150.0]]);
        assert_eq!(r.tests[0].verdict, SweepVerdict::NoiseUnknown);
        assert_eq!(r.tests[0].rows[1].beyond_noise(), "unknown");

        // Interrupted after the first run: the others have no figure.
        let settings = names(&["none", "bfq"]);
        let first = order(2, 3, 1)[0];
        let r = SweepResult::build(
            SweepKind::Scheduler,
            "loop0",
            &settings,
            3,
            &[TestName::SeqRead],
            &[SweepSample {
                step: first,
                value: Some(1.0),
            }],
        );
        assert!(!r.complete());
        assert_eq!((r.runs_done, r.runs_planned), (1, 6));
        assert_eq!(r.tests[0].verdict, SweepVerdict::NoFigures);
    }

    #[test]
    fn a_cache_sweep_needs_a_switchable_cache() {
        let mut c = DriveCache {
            enabled: Some(false),
            changeable: true,
            fixed_reason: None,
            source: "test".into(),
        };
        assert_eq!(cache_values(&c).unwrap(), names(&["off", "on"]));
        c.changeable = false;
        c.fixed_reason = Some("cache_type is read-only".into());
        assert_eq!(cache_values(&c).unwrap_err(), "cache_type is read-only");
        c.enabled = None;
        assert_eq!(
            cache_values(&c).unwrap_err(),
            "the drive reports no volatile write cache"
        );
    }

    #[test]
    fn figures_print_the_same_everywhere() {
        assert_eq!(Metric::MbPerSec.format(812.349), "812.3");
        assert_eq!(Metric::Iops.format(16733.6), "16734");
        assert_eq!(Metric::MeanLatencyMs.format(11.18), "11.180");
        assert_eq!(label(SweepKind::WriteCache, "off"), "cache off");
    }
}
