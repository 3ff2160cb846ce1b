//! Export a run: `j` JSON, `c` CSV, `f` the equivalent fio command line; any other key
//! cancels.

use ratatui::Frame;
use ratatui::crossterm::event::KeyCode;
use ratatui::text::{Line, Span};

use super::super::{App, RunRecord};
use super::{CLOSE, DialogDef, Intent, Next, Place, close, dialog, no_devices};
use crate::report::export::ExportFormat;
use crate::theme;

/// The record to export (its index in `App::results`).
#[derive(Debug, Clone, PartialEq)]
pub struct Export {
    pub record: usize,
}

pub const DIALOG: DialogDef<Export> = DialogDef {
    key,
    draw: show,
    devices: no_devices,
};

fn key(s: Export, code: KeyCode) -> Next {
    let format = match code {
        KeyCode::Char('j') => ExportFormat::Json,
        KeyCode::Char('c') => ExportFormat::Csv,
        KeyCode::Char('f') => ExportFormat::Fio,
        _ => return CLOSE,
    };
    close(Intent::Export {
        record: s.record,
        format,
    })
}

fn show(s: &Export, app: &App, frame: &mut Frame, at: Place) {
    let lines = vec![
        Line::from(format!(
            "Export run #{}:",
            app.results
                .records
                .get(s.record)
                .map(RunRecord::number)
                .unwrap_or_default()
        )),
        Line::from("  j  JSON: summary and per-interval series"),
        Line::from("  c  CSV: the per-interval series"),
        Line::from("  f  the equivalent fio command line"),
        Line::from(Span::styled(
            format!("into {}/", app.export_dir.display()),
            theme::dim(),
        )),
        Line::from(Span::styled(
            "Esc cancels; the file's path is shown after",
            theme::dim(),
        )),
    ];
    dialog(frame, at.area, "Export", lines, 56);
}
