//! Typing a value for a field of the test form: Enter sets it (checked against the device),
//! Esc cancels, Backspace and Ctrl-U edit.

use ratatui::Frame;
use ratatui::crossterm::event::KeyCode;
use ratatui::text::{Line, Span};

use super::super::App;
use super::{
    CLOSE, DialogDef, Field, Intent, Next, Overlay, Place, close, dialog, no_devices, stay,
};
use crate::theme;

/// The field, what has been typed, and why the last value was refused.
#[derive(Debug, Clone, PartialEq)]
pub struct Edit {
    pub field: Field,
    pub text: String,
    pub error: Option<String>,
}

pub const DIALOG: DialogDef<Edit> = DialogDef {
    key,
    draw: show,
    devices: no_devices,
};

fn key(mut s: Edit, code: KeyCode) -> Next {
    match code {
        KeyCode::Esc => return CLOSE,
        KeyCode::Enter => {
            return close(Intent::SetValue {
                field: s.field,
                text: s.text,
            });
        }
        KeyCode::Backspace => {
            s.text.pop();
        }
        KeyCode::Null => s.text.clear(),
        KeyCode::Char(c) if s.text.len() < 32 && c.is_ascii_graphic() => s.text.push(c),
        // A key the field ignores keeps the reason on show.
        _ => return stay(Overlay::Edit(s)),
    }
    s.error = None;
    stay(Overlay::Edit(s))
}

fn show(s: &Edit, _: &App, frame: &mut Frame, at: Place) {
    let mut lines = vec![
        Line::from(format!("{} (empty = default):", s.field.label())),
        Line::from(vec![
            Span::raw("> "),
            Span::styled(format!("{}_", s.text), theme::title()),
        ]),
        Line::from(Span::styled(
            "sizes: 4k, 1M, 1G; times: 500ms, 10s, 2m; Enter sets, Esc cancels",
            theme::dim(),
        )),
    ];
    if let Some(e) = &s.error {
        lines.push(Line::from(Span::styled(e.clone(), theme::bad())));
    }
    dialog(frame, at.area, "Set a value", lines, 70);
}
