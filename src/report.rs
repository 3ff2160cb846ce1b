//! Headless output: what the commands print, as text (80 columns) and JSON.

pub mod cache;
pub mod export;
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
pub mod table;

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
