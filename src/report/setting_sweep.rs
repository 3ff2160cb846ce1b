//! What `disktriage run --sweep-sched` / `--sweep-cache` prints, as text and JSON: per test
//! each value's figure, spread, difference to the starting value and whether beyond the noise,
//! then the verdict.

use serde::Serialize;

use super::table::{self, Column};
use crate::bench::analysis::setting_sweep::{SweepResult, TestSweep};
use crate::changes::RestoreOutcome;
use crate::model::text::neutralize_controls;

/// Version of the JSON layout.
pub const SWEEP_JSON_SCHEMA: u32 = 1;

/// How the sweep ended, besides its figures.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct SweepEnd {
    /// The signal that stopped it ("SIGINT"), if one did.
    pub stopped_by: Option<String>,
    /// The error that ended it early, if one did.
    pub error: Option<String>,
    /// The original put back (empty when nothing had to change).
    pub restored: Vec<RestoreOutcome>,
    /// What the admin should know (a value added to the sweep, the preset used).
    pub notes: Vec<String>,
}

/// The heading line of a sweep.
pub fn heading(r: &SweepResult) -> String {
    let tests: Vec<&str> = r.tests.iter().map(|t| t.test.id()).collect();
    format!(
        "{} of {}: {}, {} repeat{} of each value, interleaved",
        r.kind.title(),
        r.device,
        tests.join(" and "),
        r.repeats,
        if r.repeats == 1 { "" } else { "s" }
    )
}

/// One test's table and verdict.
pub fn test_table(r: &SweepResult, t: &TestSweep, width: usize) -> String {
    let columns = [
        Column::left(r.kind.column()),
        Column::right(t.metric.unit()),
        Column::right("SPREAD"),
        Column::right("DELTA"),
        Column::left("BEYOND NOISE"),
    ];
    let rows: Vec<Vec<String>> = t
        .rows
        .iter()
        .map(|row| {
            vec![
                format!(
                    "{}{}",
                    neutralize_controls(&row.setting),
                    if row.baseline { " *" } else { "" }
                ),
                row.figure.map_or("-".into(), |f| t.metric.format(f.mean)),
                row.figure
                    .and_then(|f| f.spread_pct)
                    .map_or("-".into(), |s| format!("{s:.1} %")),
                row.delta
                    .as_ref()
                    .map_or("-".into(), |d| format!("{:+.1} %", d.pct)),
                row.beyond_noise().to_string(),
            ]
        })
        .collect();
    let mut out = format!(
        "{}: {} (mean of the repeats; * = at start)\n",
        t.test.id(),
        t.metric.describe()
    );
    out.push_str(&table::render(&columns, &rows, width));
    let base = r.settings.first().map_or("", String::as_str);
    out.push_str(&table::wrap(
        "",
        &neutralize_controls(&t.verdict.describe(r.kind, t.metric, base)),
        width,
    ));
    out
}

/// The whole text report.
pub fn render_text(r: &SweepResult, end: &SweepEnd, width: usize) -> String {
    let mut out = table::wrap("", &heading(r), width);
    for n in &end.notes {
        out.push_str(&table::wrap("note:  ", &neutralize_controls(n), width));
    }
    for t in &r.tests {
        out.push('\n');
        out.push_str(&test_table(r, t, width));
    }
    if !r.complete() {
        let why = match (&end.stopped_by, &end.error) {
            (Some(sig), _) => format!("stopped by {sig}"),
            (None, Some(e)) => format!("ended by an error: {}", neutralize_controls(e)),
            (None, None) => "ended early".into(),
        };
        out.push('\n');
        out.push_str(&table::wrap(
            "",
            &format!(
                "{why} after {} of {} runs; the figures cover the runs that completed",
                r.runs_done, r.runs_planned
            ),
            width,
        ));
    }
    if !end.restored.is_empty() {
        out.push('\n');
        out.push_str(&super::restore::render_text(&end.restored));
    }
    out
}

#[derive(Serialize)]
struct Document<'a> {
    schema: u32,
    #[serde(flatten)]
    sweep: &'a SweepResult,
    complete: bool,
    verdicts: Vec<String>,
    #[serde(flatten)]
    end: &'a SweepEnd,
}

/// The JSON document: the result, each verdict as the text says it, and how it ended.
pub fn render_json(r: &SweepResult, end: &SweepEnd) -> anyhow::Result<String> {
    let base = r.settings.first().map_or("", String::as_str);
    let doc = Document {
        schema: SWEEP_JSON_SCHEMA,
        sweep: r,
        complete: r.complete(),
        verdicts: r
            .tests
            .iter()
            .map(|t| t.verdict.describe(r.kind, t.metric, base))
            .collect(),
        end,
    };
    Ok(serde_json::to_string_pretty(&doc)? + "\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::analysis::setting_sweep::{SweepKind, SweepSample, order};
    use crate::bench::plan::test_name::TestName;

    fn result(kind: SweepKind, settings: &[&str], values: &[&[f64]], runs: usize) -> SweepResult {
        let settings: Vec<String> = settings.iter().map(|s| s.to_string()).collect();
        let repeats = values[0].len() as u32;
        let samples: Vec<SweepSample> = order(settings.len(), repeats, 1)
            .into_iter()
            .take(runs)
            .map(|step| SweepSample {
                step,
                value: Some(values[step.setting][step.repeat as usize]),
            })
            .collect();
        SweepResult::build(
            kind,
            "loop0",
            &settings,
            repeats,
            &[TestName::SeqRead],
            &samples,
        )
    }

    #[test]
    fn the_table_shows_figure_spread_delta_noise_and_verdict() {
        let r = result(
            SweepKind::Scheduler,
            &["none", "mq-deadline", "bfq"],
            &[
                &[100.0, 102.0, 98.0],
                &[99.0, 101.0, 100.0],
                &[150.0, 151.0, 152.0],
            ],
            9,
        );
        let text = render_text(&r, &SweepEnd::default(), 80);
        let expected = "\
Scheduler sweep of loop0: seq-read, 3 repeats of each value, interleaved

seq-read: MB/s, higher is better (mean of the repeats; * = at start)
SCHEDULER    MB/s SPREAD   DELTA BEYOND NOISE
none *      100.0  4.0 %       - -
mq-deadline 100.0  2.0 %  +0.0 % no
bfq         151.0  1.3 % +51.0 % yes, better
winner: bfq, +51.0 % MB/s against none (beyond the noise of 4.0 %)
";
        assert_eq!(text, expected);
        let json: serde_json::Value =
            serde_json::from_str(&render_json(&r, &SweepEnd::default()).unwrap()).unwrap();
        assert_eq!(json["kind"], "scheduler");
        assert_eq!(json["complete"], true);
        assert_eq!(json["tests"][0]["verdict"]["setting"], "bfq");
        assert_eq!(json["tests"][0]["rows"][2]["figure"]["mean"], 151.0);
        assert_eq!(
            json["verdicts"][0],
            "winner: bfq, +51.0 % MB/s against none (beyond the noise of 4.0 %)"
        );
    }

    #[test]
    fn a_stopped_sweep_says_how_far_it_got() {
        let r = result(
            SweepKind::WriteCache,
            &["on", "off"],
            &[&[5.0, 5.0], &[1.0, 1.0]],
            3,
        );
        let end = SweepEnd {
            stopped_by: Some("SIGINT".into()),
            ..SweepEnd::default()
        };
        let text = render_text(&r, &end, 80);
        assert!(text.starts_with("Write cache sweep of loop0"), "{text}");
        assert!(text.contains("WRITE CACHE"), "{text}");
        assert!(
            text.contains("stopped by SIGINT after 3 of 4 runs; the figures cover the runs"),
            "{text}"
        );
        let json: serde_json::Value =
            serde_json::from_str(&render_json(&r, &end).unwrap()).unwrap();
        assert_eq!(json["complete"], false);
        assert_eq!(json["stopped_by"], "SIGINT");
    }
}
