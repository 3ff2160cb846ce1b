//! The help: every key, from the one table of bindings, in rows that never wrap; Up/Down
//! scroll it when the terminal is shorter than the list, any other key closes it.

use ratatui::Frame;
use ratatui::crossterm::event::KeyCode;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph};

use super::super::{App, keys};
use super::{CLOSE, DialogDef, Next, Overlay, Place, centered, no_devices, stay};
use crate::{draw, theme};

/// The help's state: `scroll` is the first row shown.
#[derive(Debug, Clone, PartialEq)]
pub struct Help {
    pub scroll: u16,
}

pub const DIALOG: DialogDef<Help> = DialogDef {
    key,
    draw: show,
    devices: no_devices,
};

fn key(s: Help, code: KeyCode) -> Next {
    if !matches!(
        code,
        KeyCode::Up | KeyCode::Down | KeyCode::Char('k') | KeyCode::Char('j')
    ) {
        return CLOSE;
    }
    let rows = keys::help_rows(keys::HELP_TEXT_WIDTH).len() as u16;
    let scroll =
        super::super::scroll(s.scroll, keys::direction(code), 1).min(rows.saturating_sub(1));
    stay(Overlay::Help(Help { scroll }))
}

/// The help box: its two columns and the border.
const HELP_WIDTH: u16 = (keys::HELP_KEY_WIDTH + keys::HELP_TEXT_WIDTH + 2) as u16;

fn show(s: &Help, _: &App, frame: &mut Frame, at: Place) {
    let area = at.area;
    let rows = keys::help_rows(keys::HELP_TEXT_WIDTH);
    let w = HELP_WIDTH;
    let h = (rows.len() as u16 + 2).min(area.height);
    let visible = h.saturating_sub(2);
    let scroll = s.scroll.min((rows.len() as u16).saturating_sub(visible));
    let title = if rows.len() as u16 > visible {
        " Keys (Up/Down scroll) "
    } else {
        " Keys "
    };
    let more = draw::scrolled(rows.len(), scroll.into(), visible.into());
    let lines: Vec<Line> = rows
        .into_iter()
        .map(|(k, v)| {
            Line::from(vec![
                Span::styled(
                    format!("{k:<width$}", width = keys::HELP_KEY_WIDTH),
                    theme::title(),
                ),
                Span::raw(v),
            ])
        })
        .collect();
    let rect = centered(area, w, h);
    frame.render_widget(Clear, rect);
    frame.render_widget(
        Paragraph::new(lines).scroll((scroll, 0)).block(
            Block::default()
                .borders(Borders::ALL)
                .title(Span::styled(title, theme::title()))
                .title_bottom(Span::styled(more, theme::dim())),
        ),
        rect,
    );
}
