//! What `disktriage restore` (and a session's guard on exit) prints: one line per recorded
//! change and what became of it.

use serde::Serialize;

use crate::changes::guard::{Restoration, RestoreNews};
use crate::changes::{RestoreOutcome, RestoreResult};
use crate::model::JournalEntry;
use crate::model::text::neutralize_controls;
use crate::report::output::write_stderr;

/// Version of the JSON layout.
pub const RESTORE_JSON_SCHEMA: u32 = 1;

fn subject(e: &JournalEntry) -> String {
    format!("{}: {}", e.device.name, e.original.kind())
}

/// Tells the admin on stderr what a session's guard put back on the way out, the only channel
/// left then (`output::write_stderr`).
pub fn announce(news: RestoreNews) {
    match news {
        RestoreNews::Signal {
            signal,
            restoration,
        } => {
            write_stderr(&format!(
                "disktriage: {signal}: putting back the settings this session changed\n"
            ));
            announce_outcomes(restoration);
        }
        RestoreNews::Panic(Some(restoration)) => {
            write_stderr("disktriage: panic: putting back the settings this session changed\n");
            announce_outcomes(restoration);
        }
        RestoreNews::Panic(None) => write_stderr(
            "disktriage: panic while changing a setting; if it is not put back on exit, \
             run `disktriage restore`\n",
        ),
        RestoreNews::Dropped(restoration) => announce_outcomes(restoration),
    }
}

/// Prints outcomes on stderr, if there are any.
fn announce_outcomes(restoration: Restoration) {
    match restoration {
        Ok(outcomes) if outcomes.is_empty() => {}
        Ok(outcomes) => write_stderr(&render_text(&outcomes)),
        Err(e) => write_stderr(&format!(
            "disktriage: could not restore this session's changes: {e}; run `disktriage \
             restore`\n"
        )),
    }
}

/// One line per outcome (wrapped at 80 columns).
pub fn render_text(outcomes: &[RestoreOutcome]) -> String {
    let mut out = String::new();
    for o in outcomes {
        let e = &o.entry;
        let original = e.original.value();
        let line = match &o.result {
            RestoreResult::Restored { was, now } => {
                format!("{} put back to {now} (was {was}; read back)", subject(e))
            }
            RestoreResult::AlreadyOriginal => {
                format!("{} already {original}, nothing to do", subject(e))
            }
            RestoreResult::Skipped { reason } => {
                format!("{} left as it is: {reason}", subject(e))
            }
            RestoreResult::Dropped { reason } => {
                format!("{} not restored, entry dropped: {reason}", subject(e))
            }
            RestoreResult::Failed { error } => format!(
                "{} NOT put back to {original}: {error} (still recorded)",
                subject(e)
            ),
        };
        // Journal values come from a file and may hold control characters.
        out.push_str(&super::table::wrap(
            "",
            &neutralize_controls(&line),
            super::output::DEFAULT_WIDTH,
        ));
        if let Some(note) = &o.note {
            out.push_str(&super::table::wrap(
                "  note: ",
                &neutralize_controls(note),
                super::output::DEFAULT_WIDTH,
            ));
        }
    }
    out
}

/// The entries a journal holds, for `restore --list`.
pub fn render_list(entries: &[JournalEntry], journal: &std::path::Path) -> String {
    if entries.is_empty() {
        return format!(
            "Nothing to restore: no changes recorded in {}.\n",
            journal.display()
        );
    }
    let mut out = format!(
        "Recorded in {}, restored newest first:\n",
        journal.display()
    );
    for e in entries.iter().rev() {
        // Journal values come from a file and may hold control characters.
        let line = format!(
            "  #{} {} back to {} ({}, pid {})",
            e.id,
            subject(e),
            e.original.value(),
            match e.lifetime {
                crate::model::Lifetime::Session => "session change",
                crate::model::Lifetime::Persisted => "single-shot change",
            },
            e.owner.pid
        );
        out.push_str(&neutralize_controls(&line));
        out.push('\n');
    }
    out
}

#[derive(Serialize)]
struct RestoreJson<'a> {
    schema: u32,
    journal: String,
    outcomes: &'a [RestoreOutcome],
}

pub fn render_json(
    outcomes: &[RestoreOutcome],
    journal: &std::path::Path,
) -> anyhow::Result<String> {
    let mut text = serde_json::to_string_pretty(&RestoreJson {
        schema: RESTORE_JSON_SCHEMA,
        journal: journal.display().to_string(),
        outcomes,
    })?;
    text.push('\n');
    Ok(text)
}
