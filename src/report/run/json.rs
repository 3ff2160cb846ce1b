//! A run's report as JSON (every phase's summary, series and fio command, a sweep's knees),
//! and a test's repeats as JSON.

use serde::Serialize;

use super::fio::report_fio_commands;
use super::shared::scaling_curves;
use crate::bench::analysis::curve;
use crate::bench::results::outcome::RunReport;

/// The result as JSON: the summary of every phase and its per-interval series.
pub fn render_json(r: &RunReport) -> anyhow::Result<String> {
    /// The report plus the fio command line of each phase, with the engine it used.
    #[derive(Serialize)]
    struct WithFio<'a> {
        #[serde(flatten)]
        report: &'a RunReport,
        fio_commands: Vec<String>,
        /// A sweep's knees, the same the table and the TUI's charts show.
        #[serde(skip_serializing_if = "Vec::is_empty")]
        knees: Vec<curve::KneeReport>,
    }
    let safe = json_safe(r);
    let mut s = serde_json::to_string_pretty(&WithFio {
        report: &safe,
        fio_commands: report_fio_commands(r),
        knees: curve::knee_reports(&scaling_curves(r)),
    })?;
    s.push('\n');
    Ok(s)
}

/// Version of the layout of a repeated run's JSON (`render_repeats_json`).
pub const REPEATS_JSON_SCHEMA: u32 = 1;

/// A test's repeats as JSON: the figures over them, as text and history show them, and every
/// repeat's `render_json`. `asked` may exceed those run (a signal or a failure).
pub fn render_repeats_json(runs: &[RunReport], asked: u32) -> anyhow::Result<String> {
    #[derive(Serialize)]
    struct Repeats {
        schema: u32,
        test: String,
        target: String,
        /// The repeats that ran (each has its report below).
        repeats: usize,
        repeats_asked: u32,
        figures: Vec<crate::bench::analysis::figures::PhaseFigures>,
        reports: Vec<serde_json::Value>,
    }
    let first = runs
        .first()
        .ok_or_else(|| anyhow::anyhow!("no repeat ran"))?;
    let reports = runs
        .iter()
        .map(|r| Ok(serde_json::from_str(&render_json(r)?)?))
        .collect::<anyhow::Result<Vec<serde_json::Value>>>()?;
    let mut s = serde_json::to_string_pretty(&Repeats {
        schema: REPEATS_JSON_SCHEMA,
        test: first.test.to_string(),
        target: first.target.path.to_string_lossy().into_owned(),
        repeats: runs.len(),
        repeats_asked: asked,
        figures: crate::bench::analysis::figures::figures(runs),
        reports,
    })?;
    s.push('\n');
    Ok(s)
}

/// The report with a target path JSON can hold: a non-UTF-8 path gets U+FFFD per bad sequence
/// (`to_string_lossy`), so a finished run is never lost to its name. The text shows the same.
pub fn json_safe(r: &RunReport) -> std::borrow::Cow<'_, RunReport> {
    if r.target.path.to_str().is_some() {
        return std::borrow::Cow::Borrowed(r);
    }
    let mut owned = r.clone();
    owned.target.path = r.target.path.to_string_lossy().into_owned().into();
    std::borrow::Cow::Owned(owned)
}
