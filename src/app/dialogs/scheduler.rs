//! The device's I/O scheduler: Up/Down pick one, Enter switches to it (put back on exit), K
//! keeps the current choice after exit.

use ratatui::Frame;
use ratatui::crossterm::event::KeyCode;
use ratatui::text::{Line, Span};

use super::super::App;
use super::{
    CLOSE, DialogDef, Intent, Next, Overlay, Place, Setting, close, dialog_clear_of, stay,
};
use crate::event::Cmd;
use crate::theme;

/// The schedulers the device offers, one of them selected.
#[derive(Debug, Clone, PartialEq)]
pub struct Scheduler {
    pub device: String,
    pub options: Vec<String>,
    pub selected: usize,
}

pub const DIALOG: DialogDef<Scheduler> = DialogDef {
    key,
    draw: show,
    devices: |s| vec![s.device.as_str()],
};

fn key(s: Scheduler, code: KeyCode) -> Next {
    match code {
        KeyCode::Up | KeyCode::Char('k') => stay(Overlay::Scheduler(Scheduler {
            selected: s.selected.saturating_sub(1),
            ..s
        })),
        KeyCode::Down | KeyCode::Char('j') => {
            let selected = (s.selected + 1).min(s.options.len().saturating_sub(1));
            stay(Overlay::Scheduler(Scheduler { selected, ..s }))
        }
        KeyCode::Enter => match s.options.get(s.selected) {
            Some(name) => close(Intent::Cmd(Cmd::SetScheduler {
                device: s.device,
                name: name.clone(),
                chosen: None,
            })),
            None => CLOSE,
        },
        KeyCode::Char('K') => close(Intent::Keep(Setting::Scheduler, s.device)),
        _ => CLOSE,
    }
}

fn show(s: &Scheduler, app: &App, frame: &mut Frame, at: Place) {
    let current = app
        .devices
        .inventory
        .as_ref()
        .and_then(|i| i.find(&s.device))
        .and_then(|d| d.scheduler.as_ref()?.active.clone());
    let mut lines: Vec<Line> = s
        .options
        .iter()
        .enumerate()
        .map(|(i, o)| {
            let active = current.as_deref() == Some(o.as_str());
            let text = format!(
                "{}{} {o}",
                if i == s.selected { ">" } else { " " },
                if active { "*" } else { " " }
            );
            if i == s.selected {
                Line::from(Span::styled(text, theme::selected()))
            } else {
                Line::from(text)
            }
        })
        .collect();
    lines.push(Line::from(Span::styled(
        "Enter switches (put back on exit), K keeps the current choice, Esc closes",
        theme::dim(),
    )));
    dialog_clear_of(
        frame,
        at,
        &format!("Scheduler of {} (* active)", s.device),
        lines,
        60,
    );
}
