//! The fio export: a shell script of the fio commands equivalent to the first run.

use super::FormatRow;
use crate::bench::results::outcome::RunReport;
use crate::report::run;

pub(super) const ROW: FormatRow = FormatRow {
    key: 'f',
    name: "fio",
    offer: "the equivalent fio command line",
    extension: "fio.sh",
    render,
};

fn render(first: &RunReport, _all: &[RunReport]) -> anyhow::Result<String> {
    Ok(format!(
        "#!/bin/sh\n# fio jobs equivalent to disktriage's {}\n{}",
        first.test,
        run::fio_commands(&first.plan, &first.target.path, Some(&first.outcome))
    ))
}
