//! `R` after a switch on a device the last test did not run on: `y` runs it there, `n`
//! reruns it where it ran.

use ratatui::Frame;
use ratatui::crossterm::event::KeyCode;
use ratatui::text::{Line, Span};

use super::super::App;
use super::{CLOSE, DialogDef, Intent, Next, Overlay, Place, close, dialog, stay};
use crate::theme;

/// The device whose setting changed and the record whose test would run there.
#[derive(Debug, Clone, PartialEq)]
pub struct Retest {
    pub device: String,
    pub record: usize,
}

pub const DIALOG: DialogDef<Retest> = DialogDef {
    key,
    draw: show,
    devices: |s| vec![s.device.as_str()],
};

fn key(s: Retest, code: KeyCode) -> Next {
    match code {
        KeyCode::Char('y') | KeyCode::Enter => close(Intent::RetestOn {
            device: s.device,
            record: s.record,
        }),
        // Rerun where it ran: the switch is not what this retest is about.
        KeyCode::Char('n') => close(Intent::RerunWhereItRan(s.record)),
        KeyCode::Esc | KeyCode::Char('q') => CLOSE,
        _ => stay(Overlay::Retest(s)),
    }
}

fn show(s: &Retest, app: &App, frame: &mut Frame, at: Place) {
    let Some(rec) = app.results.records.get(s.record) else {
        return;
    };
    let device = &s.device;
    let test = rec.test.id();
    let lines = vec![
        Line::from(format!(
            "You switched {device}; the last test ({test}) ran on {}.",
            rec.device
        )),
        Line::from(format!("{device} has not run it in this session.")),
        Line::from(Span::styled(
            format!(
                "y: run {test} on {device}   n: rerun on {}   Esc: cancel",
                rec.device
            ),
            theme::warn(),
        )),
    ];
    dialog(frame, at.area, "Retest where?", lines, 70);
}
