//! `q` with results not exported: `y` or `q` quits and discards them, `e` exports first, any
//! other key stays.

use ratatui::Frame;
use ratatui::crossterm::event::KeyCode;
use ratatui::text::{Line, Span};

use super::super::App;
use super::{CLOSE, DialogDef, Intent, Next, Place, close, dialog, no_devices};
use crate::report::export::ExportFormat;
use crate::theme;

pub const DIALOG: DialogDef<()> = DialogDef {
    key,
    draw: show,
    devices: no_devices,
};

fn key((): (), code: KeyCode) -> Next {
    match code {
        KeyCode::Char('y') | KeyCode::Char('q') => close(Intent::Quit),
        KeyCode::Char('e') => close(Intent::ExportFirst),
        _ => CLOSE,
    }
}

fn show((): &(), app: &App, frame: &mut Frame, at: Place) {
    let n = app.unsaved().count();
    let kept = app.results.unsaved_in_history();
    let plural = |k: usize| if k == 1 { "" } else { "s" };
    let first = if kept == 0 {
        format!("quit and discard {n} result{}? (not exported)", plural(n))
    } else if kept == n {
        format!(
            "quit? {n} result{} not exported: the history keeps the figures, not \
             the per-interval series",
            plural(n)
        )
    } else {
        format!(
            "quit? {n} results not exported: {kept} in the history (figures only), \
             {} discarded",
            n - kept
        )
    };
    let lines = vec![
        Line::from(first),
        Line::from(Span::styled(
            "y or q quits (changed settings are put back)",
            theme::warn(),
        )),
        Line::from(Span::styled(
            format!(
                "e exports first ({}), any other key stays",
                ExportFormat::names()
            ),
            theme::dim(),
        )),
    ];
    dialog(frame, at.area, "Quit", lines, 66);
}
