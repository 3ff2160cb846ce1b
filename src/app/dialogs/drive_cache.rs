//! The drive's own write cache: its state and the kernel's view; `o` turns it off, `n` on
//! (put back on exit), `K` keeps the current state after exit.

use ratatui::Frame;
use ratatui::crossterm::event::KeyCode;
use ratatui::text::{Line, Span};

use super::super::App;
use super::{
    CLOSE, DialogDef, Intent, Next, Overlay, Place, Setting, close, dialog_clear_of, stay,
};
use crate::event::Cmd;
use crate::model::CacheStatus;
use crate::model::cache::on_off;
use crate::theme;

/// The device whose cache the dialog shows.
#[derive(Debug, Clone, PartialEq)]
pub struct DriveCache {
    pub device: String,
}

pub const DIALOG: DialogDef<DriveCache> = DialogDef {
    key,
    draw: show,
    devices: |s| vec![s.device.as_str()],
};

fn key(s: DriveCache, code: KeyCode) -> Next {
    let set = |device, enabled| {
        close(Intent::Cmd(Cmd::SetDriveCache {
            device,
            enabled,
            chosen: None,
        }))
    };
    match code {
        KeyCode::Char('o') | KeyCode::Char('0') => set(s.device, false),
        KeyCode::Char('n') | KeyCode::Char('1') => set(s.device, true),
        KeyCode::Char('K') => close(Intent::Keep(Setting::DriveCache, s.device)),
        KeyCode::Esc | KeyCode::Enter | KeyCode::Char('q') => CLOSE,
        _ => stay(Overlay::DriveCache(s)),
    }
}

fn show(s: &DriveCache, app: &App, frame: &mut Frame, at: Place) {
    let device = &s.device;
    let st = app.devices.drives.get(device);
    let mut lines = Vec::new();
    match st.and_then(|s| s.cache.as_ref()) {
        None => lines.push(Line::from("reading the drive ...")),
        Some(Err(e)) => lines.push(Line::from(Span::styled(e.to_string(), theme::bad()))),
        Some(Ok(c)) => {
            let drive = match (&c.drive, &c.drive_unavailable) {
                (Some(d), _) => match d.enabled {
                    Some(enabled) => on_off(enabled).to_string(),
                    None => "no volatile cache reported".to_string(),
                },
                (None, Some(why)) => why.clone(),
                (None, None) => "unknown".to_string(),
            };
            lines.push(Line::from(vec![
                Span::styled("drive's own write cache: ", theme::dim()),
                Span::styled(drive, theme::title()),
            ]));
            lines.push(Line::from(vec![
                Span::styled("kernel flush policy:     ", theme::dim()),
                Span::raw(
                    c.kernel_flush_policy
                        .map_or("?", |k| k.as_str())
                        .to_string(),
                ),
            ]));
            if let Some(d) = &c.disagreement {
                lines.push(Line::from(Span::styled(d.clone(), theme::warn())));
            }
        }
    }
    if let Some(c) = app.changes.cache.iter().find(|c| &c.device == device) {
        lines.push(Line::from(Span::styled(
            if c.keep {
                format!("kept: stays {} after exit", on_off(c.current))
            } else {
                format!("put back to {} on exit", on_off(c.original))
            },
            theme::accent(),
        )));
    }
    // Only what can work is offered: a loop device has no drive cache to turn off.
    let unavailable = st
        .and_then(|s| s.cache.as_ref())
        .and_then(|c| c.as_ref().ok())
        .and_then(CacheStatus::switch_unavailable);
    lines.push(Line::from(Span::styled(
        match unavailable {
            Some(_) => "nothing to switch here  Esc: close",
            None => "o: turn off (hdparm -W0)  n: turn on (-W1)  K: keep  Esc: close",
        },
        theme::dim(),
    )));
    dialog_clear_of(frame, at, &format!("Write cache of {device}"), lines, 70);
}
