//! Export a run: one key per export format (`ExportFormat::ALL`'s rows); any other key
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
    let KeyCode::Char(key) = code else {
        return CLOSE;
    };
    let Some(format) = ExportFormat::for_key(key) else {
        return CLOSE;
    };
    close(Intent::Export {
        record: s.record,
        format,
    })
}

fn show(s: &Export, app: &App, frame: &mut Frame, at: Place) {
    let mut lines = vec![
        Line::from(format!(
            "Export run #{}:",
            app.results
                .records
                .get(s.record)
                .map(RunRecord::number)
                .unwrap_or_default()
        )),
        Line::from(Span::styled(
            format!("into {}/", app.export_dir.display()),
            theme::dim(),
        )),
        Line::from(Span::styled(
            "Esc cancels; the file's path is shown after",
            theme::dim(),
        )),
    ];
    lines.splice(
        1..1,
        ExportFormat::ALL.iter().map(|f| f.dialog_line().into()),
    );
    dialog(frame, at.area, "Export", lines, 56);
}
