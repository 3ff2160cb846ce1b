//! Type every device's name to allow a write test on several devices at once: Enter with each
//! name once starts it, Esc cancels.

use ratatui::Frame;
use ratatui::crossterm::event::KeyCode;
use ratatui::text::{Line, Span};

use super::super::App;
use super::{DialogDef, Intent, Next, Overlay, Place, Typing, close, dialog, stay, type_name};
use crate::bench::analysis::several_disks::split_confirmation;
use crate::bench::plan::test_name::TestName;
use crate::theme;

/// The write test on several devices waiting for their names.
#[derive(Debug, Clone, PartialEq)]
pub struct ConfirmSeveral {
    pub test: TestName,
    pub devices: Vec<String>,
    pub typed: String,
    pub wrong: bool,
}

pub const DIALOG: DialogDef<ConfirmSeveral> = DialogDef {
    key,
    draw: show,
    devices: |s| s.devices.iter().map(String::as_str).collect(),
};

fn key(mut s: ConfirmSeveral, code: KeyCode) -> Next {
    s.wrong = match type_name(&mut s.typed, code, 256) {
        Typing::Cancel => {
            return close(Intent::Info(
                "write test cancelled: nothing was written".into(),
            ));
        }
        Typing::Enter => {
            let names: Vec<Option<String>> = s.devices.iter().cloned().map(Some).collect();
            if split_confirmation(&names, Some(&s.typed)).is_ok() {
                return close(Intent::LaunchSeveral(s.typed));
            }
            true
        }
        Typing::Edited => false,
    };
    stay(Overlay::ConfirmSeveral(s))
}

fn show(s: &ConfirmSeveral, _: &App, frame: &mut Frame, at: Place) {
    let (test, devices, typed) = (&s.test, &s.devices, &s.typed);
    let list = devices.join(",");
    let mut lines = vec![
        Line::from(Span::styled(
            format!(
                "{test} WRITES to {} and destroys the data on them.",
                devices.join(", ")
            ),
            theme::warn(),
        )),
        Line::from(format!("Type every device name ({list}) and press Enter:")),
        Line::from(vec![
            Span::raw("> "),
            Span::styled(format!("{typed}_"), theme::title()),
        ]),
    ];
    if s.wrong {
        lines.push(Line::from(Span::styled(
            format!("\"{typed}\" does not name each of them once: nothing was written"),
            theme::bad(),
        )));
    }
    lines.push(Line::from(Span::styled("Esc cancels", theme::dim())));
    dialog(
        frame,
        at.area,
        "Confirm a write test on several devices",
        lines,
        72,
    );
}
