//! The JSON export: one report, or an array of the repeats.

use super::FormatRow;
use crate::bench::results::outcome::RunReport;
use crate::report::run;

pub(super) const ROW: FormatRow = FormatRow {
    key: 'j',
    name: "JSON",
    offer: "JSON: summary and per-interval series",
    extension: "json",
    render,
};

fn render(first: &RunReport, all: &[RunReport]) -> anyhow::Result<String> {
    if all.len() == 1 {
        return run::render_json(first);
    }
    let safe: Vec<_> = all.iter().map(run::json_safe).collect();
    let mut s = serde_json::to_string_pretty(&safe)?;
    s.push('\n');
    Ok(s)
}
