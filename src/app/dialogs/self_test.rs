//! Start a self-test? What it costs; `y` or Enter starts it, any other key cancels.

use ratatui::Frame;
use ratatui::crossterm::event::KeyCode;
use ratatui::text::{Line, Span};

use super::super::App;
use super::{DialogDef, Intent, Next, Place, close, dialog, wrap_text};
use crate::event::Cmd;
use crate::model::SelfTestKind;
use crate::theme;

/// The device and the self-test it would start.
#[derive(Debug, Clone, PartialEq)]
pub struct SelfTest {
    pub device: String,
    pub kind: SelfTestKind,
}

pub const DIALOG: DialogDef<SelfTest> = DialogDef {
    key,
    draw: show,
    devices: |s| vec![s.device.as_str()],
};

fn key(s: SelfTest, code: KeyCode) -> Next {
    match code {
        KeyCode::Char('y') | KeyCode::Enter => close(Intent::Cmd(Cmd::StartSelfTest {
            device: s.device,
            kind: s.kind,
            chosen: None,
        })),
        _ => close(Intent::Info("no self-test started".into())),
    }
}

fn show(s: &SelfTest, app: &App, frame: &mut Frame, at: Place) {
    let status = app
        .devices
        .drives
        .get(&s.device)
        .and_then(|s| s.self_test.as_ref())
        .and_then(|r| r.as_ref().ok());
    let text = crate::report::smart::self_test_warning(s.kind, status);
    let mut lines: Vec<Line> = wrap_text(&text, 66).into_iter().map(Line::from).collect();
    lines.push(Line::from(Span::styled(
        format!(
            "y or Enter starts it on {}, any other key cancels",
            s.device
        ),
        theme::warn(),
    )));
    let title = match s.kind {
        SelfTestKind::Short => "Short self-test",
        SelfTestKind::Long => "Long self-test",
        SelfTestKind::Abort => "Abort the self-test",
    };
    dialog(frame, at.area, title, lines, 70);
}
