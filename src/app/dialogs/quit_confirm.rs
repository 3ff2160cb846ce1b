//! `q` during a run: `y` or `q` stops it and quits, any other key stays.

use ratatui::Frame;
use ratatui::crossterm::event::KeyCode;
use ratatui::text::{Line, Span};

use super::super::App;
use super::{CLOSE, DialogDef, Intent, Next, Place, close, dialog, no_devices};
use crate::theme;

pub const DIALOG: DialogDef<()> = DialogDef {
    key,
    draw: show,
    devices: no_devices,
};

fn key((): (), code: KeyCode) -> Next {
    match code {
        KeyCode::Char('y') | KeyCode::Char('q') => close(Intent::Quit),
        _ => CLOSE,
    }
}

fn show((): &(), app: &App, frame: &mut Frame, at: Place) {
    let n = app.unsaved().count();
    let kept = app.results.unsaved_in_history();
    let discard = match (n, kept) {
        (0, _) => String::new(),
        (n, k) if k == n => {
            format!(" The history keeps the figures of the {n} result(s) not exported.")
        }
        (n, 0) => format!(" The {n} result(s) not exported are discarded."),
        (n, k) => {
            format!(" Of the {n} result(s) not exported, the history keeps {k} (figures only).")
        }
    };
    let lines = vec![
        Line::from(format!("A test is running. Stop it and quit?{discard}")),
        Line::from(Span::styled(
            "y quits (changed schedulers are put back), any other key stays",
            theme::dim(),
        )),
    ];
    dialog(frame, at.area, "Quit", lines, 66);
}
