//! Headless output: what the commands print, as text (80 columns) and JSON.

pub mod cache;
pub mod capacity;
pub mod export;
pub mod flushcheck;
pub mod history;
pub mod list;
pub mod output;
pub mod restore;
pub mod run;
pub mod scan;
pub mod sched;
pub mod setting_sweep;
pub mod several;
pub mod smart;
pub mod smrcheck;
pub mod table;
pub mod triage;
pub mod trimcheck;

// The library's surface (the integration tests check it): `disktriage::report::Item`.
pub use cache::{render_change as render_cache_change, render_status as render_cache_status};
pub use export::{ExportFormat, render as render_export};
pub use restore::render_text as render_restore_text;
pub use run::{
    cdm_grid, cdm_mbps, render_csv as render_run_csv, render_json as render_run_json,
    render_text as render_run_text,
};
pub use sched::{render_change as render_sched_change, render_status as render_sched_status};
pub use setting_sweep::{SweepEnd, render_text as render_sweep_text};
pub use several::{
    Mode, SeveralResult, TargetResult, render_json as render_several_json,
    render_text as render_several_text,
};
pub use smart::{
    render_logs_text as render_smart_logs_text, render_text as render_smart_text, self_test_warning,
};
pub use table::{rate, wrap};

/// The lines that end a change report: how to undo it, then the change's notes.
fn change_footer(
    journal: &crate::changes::JournalNote,
    notes: &[String],
    journal_dir: &std::path::Path,
    width: usize,
) -> String {
    let mut out = table::wrap(
        "  Restore: ",
        &format!("{}.", crate::changes::describe_note(journal, journal_dir)),
        width,
    );
    for note in notes {
        out.push_str(&table::wrap("  Note: ", &format!("{note}."), width));
    }
    out
}
