//! The flush check's history line, for the timing check (the CLI's and the TUI's) and the
//! CLI's power-cut `--record`; their write guard is `flow::write_target`'s.

use std::path::Path;

use crate::history::{History, HistoryEntry};
use crate::model::text::neutralize_controls;
use crate::report::output::write_stderr;

/// Adds a flush check's entry to the history in `dir`; says on stderr what the history warns
/// of, or that the entry is not in it (never a failed check). `stop` ends a wait for the
/// history's lock.
pub fn add_to_history(dir: &Path, entry: &HistoryEntry, stop: &dyn Fn() -> bool) {
    match History::new(dir).append_unless(entry, stop) {
        Ok(warnings) => {
            for w in warnings {
                write_stderr(&format!(
                    "disktriage: history: {}\n",
                    neutralize_controls(&w)
                ));
            }
        }
        Err(e) => write_stderr(&format!(
            "disktriage: warning: the check is not in the history: {}\n",
            neutralize_controls(&format!("{e:#}"))
        )),
    }
}
