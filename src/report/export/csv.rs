//! The CSV export: the per-interval series, each repeat under a `# repeat N` line.

use super::FormatRow;
use crate::bench::results::outcome::RunReport;
use crate::report::run;

pub(super) const ROW: FormatRow = FormatRow {
    key: 'c',
    name: "CSV",
    offer: "CSV: the per-interval series",
    extension: "csv",
    render,
};

fn render(_first: &RunReport, all: &[RunReport]) -> anyhow::Result<String> {
    Ok(all
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let csv = run::render_csv(r);
            if all.len() > 1 {
                format!("# repeat {}\n{csv}", i + 1)
            } else {
                csv
            }
        })
        .collect())
}
