//! Type the device's name to allow the capacity probe (it overwrites sectors and puts them
//! back). Tab edits where the saved sectors go: the default may share a disk with the device.

use std::path::PathBuf;

use ratatui::Frame;
use ratatui::crossterm::event::KeyCode;
use ratatui::text::{Line, Span};

use super::super::App;
use super::{
    DialogDef, Intent, Next, Overlay, Place, Starter, Typing, close, dialog_clear_of, stay,
    type_name, typed_name_lines,
};
use crate::bench::exec::safety;
use crate::event::JobOrder;
use crate::flow::capacity::CapacityOrder;
use crate::model::text::neutralize_controls;
use crate::theme;

/// The capacity probe waiting for its device's name.
#[derive(Debug, Clone, PartialEq)]
pub struct ConfirmCapacity {
    /// The probe it starts (its `confirmation` is what was typed).
    pub order: CapacityOrder,
    pub wrong: bool,
    /// The journal's path is being edited (Tab, until Tab or Enter).
    pub editing_journal: bool,
    /// What shows the probe's screen and starts it (`screens::capacity`).
    pub start: Starter,
}

pub const DIALOG: DialogDef<ConfirmCapacity> = DialogDef {
    key,
    draw: show,
    devices: |s| vec![s.order.device.as_str()],
};

fn key(mut s: ConfirmCapacity, code: KeyCode) -> Next {
    if s.editing_journal {
        let mut path = s.order.journal.display().to_string();
        match (code, type_name(&mut path, code, 4096)) {
            (_, Typing::Cancel) => return cancelled(),
            (KeyCode::Tab, _) | (_, Typing::Enter) => s.editing_journal = false,
            _ => s.order.journal = PathBuf::from(path),
        }
        return stay(Overlay::ConfirmCapacity(s));
    }
    if code == KeyCode::Tab {
        s.editing_journal = true;
        return stay(Overlay::ConfirmCapacity(s));
    }
    s.wrong = match type_name(&mut s.order.confirmation, code, 64) {
        Typing::Cancel => return cancelled(),
        Typing::Enter if safety::confirms(&s.order.confirmation, &s.order.device) => {
            return close(Intent::StartJob {
                start: s.start,
                order: JobOrder::new(s.order),
            });
        }
        Typing::Enter => true,
        Typing::Edited => false,
    };
    stay(Overlay::ConfirmCapacity(s))
}

fn cancelled() -> Next {
    close(Intent::Info(
        "capacity probe cancelled: nothing was written".into(),
    ))
}

fn show(s: &ConfirmCapacity, _: &App, frame: &mut Frame, at: Place) {
    let device = &s.order.device;
    let what = format!(
        "The capacity probe OVERWRITES sectors of {device} (its first 64 MiB, and single \
         sectors where it looks for its end) and puts each one back from a copy saved first \
         in the journal, which must be on another disk (the probe refuses it otherwise)."
    );
    let mut lines = typed_name_lines(&what, device, &s.order.confirmation, s.wrong);
    let path = neutralize_controls(&s.order.journal.display().to_string());
    let journal = if s.editing_journal {
        [
            Line::from("Journal (Enter or Tab ends the edit):"),
            Line::from(Span::styled(format!("  {path}_"), theme::title())),
        ]
    } else {
        [
            Line::from("Journal (Tab edits):"),
            Line::from(format!("  {path}")),
        ]
    };
    let at_end = lines.len().saturating_sub(1);
    lines.splice(at_end..at_end, journal);
    dialog_clear_of(frame, at, "Confirm the capacity probe", lines, 64);
}
