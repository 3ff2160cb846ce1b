//! Type the device's name to allow a write test: Enter with the right name starts it, Esc
//! cancels.

use ratatui::Frame;
use ratatui::crossterm::event::KeyCode;

use super::super::App;
use super::{
    DialogDef, Intent, Next, Overlay, Place, Typing, close, dialog, stay, type_name,
    typed_name_lines,
};
use crate::bench::analysis::setting_sweep::SweepKind;
use crate::bench::exec::safety;
use crate::bench::exec::session::RunRequest;

/// The write test waiting for its device's name.
#[derive(Debug, Clone, PartialEq)]
pub struct Confirm {
    pub request: Box<RunRequest>,
    pub repeats: u32,
    /// The write test is swept over this setting.
    pub sweep: Option<SweepKind>,
    pub device: String,
    pub typed: String,
    pub wrong: bool,
}

pub const DIALOG: DialogDef<Confirm> = DialogDef {
    key,
    draw: show,
    devices: |s| vec![s.device.as_str()],
};

fn key(mut s: Confirm, code: KeyCode) -> Next {
    s.wrong = match type_name(&mut s.typed, code, 64) {
        Typing::Cancel => {
            return close(Intent::Info(
                "write test cancelled: nothing was written".into(),
            ));
        }
        Typing::Enter if safety::confirms(&s.typed, &s.device) => {
            let mut request = s.request;
            request.confirmation = Some(s.typed);
            return close(Intent::Launch {
                request,
                repeats: s.repeats,
                sweep: s.sweep,
            });
        }
        Typing::Enter => true,
        Typing::Edited => false,
    };
    stay(Overlay::Confirm(s))
}

fn show(s: &Confirm, _: &App, frame: &mut Frame, at: Place) {
    let (request, device) = (&s.request, &s.device);
    let what = if request.params.preserve {
        format!(
            "{} REWRITES the data on {device} in place: each block is read and the same \
             bytes written back.",
            request.test
        )
    } else {
        format!(
            "{} WRITES to {} and destroys the data on it.",
            request.test, device
        )
    };
    dialog(
        frame,
        at.area,
        "Confirm a write test",
        typed_name_lines(&what, device, &s.typed, s.wrong),
        64,
    );
}
