//! Type the device's name to allow the capacity probe (it overwrites sectors and puts them
//! back): the dialog says what will be written and where the saved sectors go; Enter with
//! the right name starts it, Esc cancels.

use ratatui::Frame;
use ratatui::crossterm::event::KeyCode;

use super::super::App;
use super::{
    DialogDef, Intent, Next, Overlay, Place, Starter, Typing, close, dialog_clear_of, stay,
    type_name, typed_name_lines,
};
use crate::bench::exec::safety;
use crate::event::JobOrder;
use crate::flow::capacity::CapacityOrder;

/// The capacity probe waiting for its device's name.
#[derive(Debug, Clone, PartialEq)]
pub struct ConfirmCapacity {
    /// The probe it starts (its `confirmation` is what was typed).
    pub order: CapacityOrder,
    pub wrong: bool,
    /// What shows the probe's screen and starts it (`screens::capacity`).
    pub start: Starter,
}

pub const DIALOG: DialogDef<ConfirmCapacity> = DialogDef {
    key,
    draw: show,
    devices: |s| vec![s.order.device.as_str()],
};

fn key(mut s: ConfirmCapacity, code: KeyCode) -> Next {
    s.wrong = match type_name(&mut s.order.confirmation, code, 64) {
        Typing::Cancel => {
            return close(Intent::Info(
                "capacity probe cancelled: nothing was written".into(),
            ));
        }
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

fn show(s: &ConfirmCapacity, _: &App, frame: &mut Frame, at: Place) {
    let device = &s.order.device;
    let what = format!(
        "The capacity probe OVERWRITES sectors of {device} (its first 64 MiB, and single \
         sectors where it looks for its end) and puts each one back from a copy saved first \
         in the journal {}, which must be on another disk (the probe refuses it otherwise).",
        s.order.journal.display()
    );
    dialog_clear_of(
        frame,
        at,
        "Confirm the capacity probe",
        typed_name_lines(&what, device, &s.order.confirmation, s.wrong),
        64,
    );
}
