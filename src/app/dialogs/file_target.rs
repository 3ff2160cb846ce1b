//! `f` on Devices: the file system a test file would go on, its free space first; Enter or
//! `y` sends the Test screen's runs there.

use ratatui::Frame;
use ratatui::crossterm::event::KeyCode;
use ratatui::text::{Line, Span};

use super::super::App;
use super::{
    CLOSE, DialogDef, Intent, Next, Overlay, Place, close, dialog_clear_of, stay, wrap_text,
};
use crate::bench::exec::test_file::default_file_size_within;
use crate::event::FileTarget;
use crate::model::Bytes;
use crate::theme;

/// The dialog's state is the file target it offers.
pub const DIALOG: DialogDef<Box<FileTarget>> = DialogDef {
    key,
    draw: show,
    devices: |ft| vec![ft.device.as_str()],
};

fn key(ft: Box<FileTarget>, code: KeyCode) -> Next {
    match code {
        KeyCode::Enter | KeyCode::Char('y') => close(Intent::UseFileTarget(ft)),
        KeyCode::Esc | KeyCode::Char('n') | KeyCode::Char('q') => CLOSE,
        _ => stay(Overlay::FileTarget(ft)),
    }
}

// The registry hands every dialog its state by reference, here the box the variant holds.
#[allow(clippy::borrowed_box)]
fn show(ft: &Box<FileTarget>, _: &App, frame: &mut Frame, at: Place) {
    let text = |t: &str| wrap_text(t, 70).into_iter().map(Line::from);
    let mut lines: Vec<Line> = Vec::new();
    lines.push(Line::from(format!(
        "{} ({}) mounted at {}",
        ft.device,
        ft.fstype,
        ft.mount.display()
    )));
    lines.push(Line::from(vec![
        Span::styled("free space ", theme::dim()),
        Span::styled(
            format!("{} of {}", Bytes(ft.free).iec(), Bytes(ft.total).iec()),
            theme::title(),
        ),
    ]));
    lines.extend(text(&format!(
        "A new file {} is created (the region size: {} unless set), tested with \
         the test you choose, and removed afterwards. Nothing else on the file system \
         is touched. The metadata test uses a scratch directory there instead.",
        ft.file.display(),
        Bytes(default_file_size_within(ft.free)).iec()
    )));
    lines.push(Line::from(Span::styled(
        "Enter: choose the test   Esc: cancel",
        theme::warn(),
    )));
    dialog_clear_of(frame, at, "Test a file", lines, 74);
}
