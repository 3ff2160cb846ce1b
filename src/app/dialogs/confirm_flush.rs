//! Type the device's name to allow the flush check (it writes): Enter with the right name
//! starts it, Esc cancels.

use std::path::PathBuf;

use ratatui::Frame;
use ratatui::crossterm::event::KeyCode;

use super::super::App;
use super::{
    DialogDef, Intent, Next, Overlay, Place, Typing, close, dialog_clear_of, stay, type_name,
    typed_name_lines,
};
use crate::bench::exec::safety;

/// The flush check waiting for its device's name.
#[derive(Debug, Clone, PartialEq)]
pub struct ConfirmFlush {
    pub device: String,
    pub path: PathBuf,
    pub typed: String,
    pub wrong: bool,
}

pub const DIALOG: DialogDef<ConfirmFlush> = DialogDef {
    key,
    draw: show,
    devices: |s| vec![s.device.as_str()],
};

fn key(mut s: ConfirmFlush, code: KeyCode) -> Next {
    s.wrong = match type_name(&mut s.typed, code, 64) {
        Typing::Cancel => {
            return close(Intent::Info(
                "flush check cancelled: nothing was written".into(),
            ));
        }
        Typing::Enter if safety::confirms(&s.typed, &s.device) => {
            return close(Intent::LaunchFlush {
                device: s.device,
                path: s.path,
                confirmation: s.typed,
            });
        }
        Typing::Enter => true,
        Typing::Edited => false,
    };
    stay(Overlay::ConfirmFlush(s))
}

fn show(s: &ConfirmFlush, _: &App, frame: &mut Frame, at: Place) {
    let device = &s.device;
    let what = format!(
        "The flush check WRITES to the first 64 MiB of {device} and destroys the data \
         on it; it switches the drive's write cache off and back."
    );
    dialog_clear_of(
        frame,
        at,
        "Confirm the flush check",
        typed_name_lines(&what, device, &s.typed, s.wrong),
        64,
    );
}
