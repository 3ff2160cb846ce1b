//! Information to acknowledge (what a restore did): any key closes it.

use ratatui::Frame;
use ratatui::crossterm::event::KeyCode;
use ratatui::text::{Line, Span};

use super::super::App;
use super::{CLOSE, DialogDef, Next, Place, dialog, no_devices};
use crate::theme;

/// The message: its title and its lines.
#[derive(Debug, Clone, PartialEq)]
pub struct Message {
    pub title: String,
    pub lines: Vec<String>,
}

pub const DIALOG: DialogDef<Message> = DialogDef {
    key,
    draw: show,
    devices: no_devices,
};

fn key(_: Message, _: KeyCode) -> Next {
    CLOSE
}

fn show(s: &Message, _: &App, frame: &mut Frame, at: Place) {
    let mut l: Vec<Line> = s.lines.iter().map(|x| Line::from(x.clone())).collect();
    l.push(Line::from(Span::styled("any key closes", theme::dim())));
    dialog(frame, at.area, &s.title, l, 74);
}
