//! Changes a killed or crashed session left behind: `y` puts them back now, `n` leaves them.

use ratatui::Frame;
use ratatui::crossterm::event::KeyCode;
use ratatui::text::{Line, Span};

use super::super::App;
use super::{DialogDef, Intent, Next, Overlay, Place, close, dialog, no_devices, stay};
use crate::event::Cmd;
use crate::theme;

/// The changes left behind, one line each.
#[derive(Debug, Clone, PartialEq)]
pub struct Orphans {
    pub lines: Vec<String>,
}

pub const DIALOG: DialogDef<Orphans> = DialogDef {
    key,
    draw: show,
    devices: no_devices,
};

fn key(s: Orphans, code: KeyCode) -> Next {
    match code {
        KeyCode::Char('y') => close(Intent::Cmd(Cmd::RestoreOrphans)),
        KeyCode::Char('n') | KeyCode::Esc => close(Intent::Info(
            "left as they are: `disktriage restore` puts them back later".into(),
        )),
        _ => stay(Overlay::Orphans(s)),
    }
}

fn show(s: &Orphans, _: &App, frame: &mut Frame, at: Place) {
    let mut l: Vec<Line> = vec![Line::from(
        "A disktriage that did not exit cleanly left these changes:",
    )];
    l.extend(s.lines.iter().map(|x| Line::from(format!("  {x}"))));
    l.push(Line::from(Span::styled(
        "y: put them back now   n: leave them (`disktriage restore` later)",
        theme::warn(),
    )));
    dialog(frame, at.area, "Settings left changed", l, 74);
}
