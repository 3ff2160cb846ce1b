//! Type the device's name to allow the TRIM check (it overwrites a scratch range, discards it
//! and puts it back). Tab edits where the saved bytes go: the default may share a disk with
//! the device.

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
use crate::flow::trimcheck::TrimOrder;
use crate::model::text::neutralize_controls;
use crate::theme;

/// The TRIM check waiting for its device's name.
#[derive(Debug, Clone, PartialEq)]
pub struct ConfirmTrim {
    /// The check it starts (its `confirmation` is what was typed).
    pub order: TrimOrder,
    pub wrong: bool,
    /// The journal's path is being edited (Tab, until Tab or Enter).
    pub editing_journal: bool,
    /// What shows the check's screen and starts it (`screens::trimcheck`).
    pub start: Starter,
}

pub const DIALOG: DialogDef<ConfirmTrim> = DialogDef {
    key,
    draw: show,
    devices: |s| vec![s.order.device.as_str()],
};

fn key(mut s: ConfirmTrim, code: KeyCode) -> Next {
    if s.editing_journal {
        let mut path = s.order.journal.display().to_string();
        match (code, type_name(&mut path, code, 4096)) {
            (_, Typing::Cancel) => return cancelled(),
            (KeyCode::Tab, _) | (_, Typing::Enter) => s.editing_journal = false,
            _ => s.order.journal = PathBuf::from(path),
        }
        return stay(Overlay::ConfirmTrim(s));
    }
    if code == KeyCode::Tab {
        s.editing_journal = true;
        return stay(Overlay::ConfirmTrim(s));
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
    stay(Overlay::ConfirmTrim(s))
}

fn cancelled() -> Next {
    close(Intent::Info(
        "TRIM check cancelled: nothing was written".into(),
    ))
}

fn show(s: &ConfirmTrim, _: &App, frame: &mut Frame, at: Place) {
    let device = &s.order.device;
    let what = format!(
        "The TRIM check OVERWRITES 4 MiB near the middle of {device} (more where its discard \
         granule is larger) with a pattern, DISCARDS that range and reads it back, then puts \
         back what was there from a copy saved first in the journal, which must be on another \
         disk (the check refuses it otherwise). A device the kernel sends no discards is \
         answered without a write."
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
    dialog_clear_of(frame, at, "Confirm the TRIM check", lines, 64);
}
