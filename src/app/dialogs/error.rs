//! An error to acknowledge: any key closes it.

use ratatui::Frame;
use ratatui::crossterm::event::KeyCode;
use ratatui::text::{Line, Span};

use super::super::App;
use super::{CLOSE, DialogDef, Next, Place, dialog, no_devices, wrap_text};
use crate::theme;

/// The error's state is its text.
pub const DIALOG: DialogDef<String> = DialogDef {
    key,
    draw: show,
    devices: no_devices,
};

fn key(_: String, _: KeyCode) -> Next {
    CLOSE
}

// The registry hands every dialog its state by reference, here the text the variant holds.
#[allow(clippy::ptr_arg)]
fn show(msg: &String, _: &App, frame: &mut Frame, at: Place) {
    let mut lines: Vec<Line> = wrap_text(msg, 66)
        .into_iter()
        .map(|l| Line::from(Span::styled(l, theme::bad())))
        .collect();
    lines.push(Line::from(Span::styled(
        "Enter or Esc closes",
        theme::dim(),
    )));
    dialog(frame, at.area, "Error", lines, 70);
}
