//! A finished run's text report (the CLI's), scrolled: Up/Down, PageUp/PageDown and Space;
//! any other key closes it.

use ratatui::Frame;
use ratatui::crossterm::event::KeyCode;
use ratatui::text::Span;
use ratatui::widgets::{Block, Borders, Clear, Paragraph};

use super::super::{App, RunRecord};
use super::{CLOSE, DialogDef, Next, Overlay, Place, centered, no_devices, stay};
use crate::{draw, theme};

/// The record shown (its index in `App::results`) and the first line shown.
#[derive(Debug, Clone, PartialEq)]
pub struct Report {
    pub record: usize,
    pub scroll: u16,
}

pub const DIALOG: DialogDef<Report> = DialogDef {
    key,
    draw: show,
    devices: no_devices,
};

fn key(s: Report, code: KeyCode) -> Next {
    let scroll = match code {
        KeyCode::Up | KeyCode::Char('k') => s.scroll.saturating_sub(1),
        KeyCode::Down | KeyCode::Char('j') => s.scroll.saturating_add(1),
        KeyCode::PageUp => s.scroll.saturating_sub(10),
        KeyCode::PageDown | KeyCode::Char(' ') => s.scroll.saturating_add(10),
        _ => return CLOSE,
    };
    stay(Overlay::Report(Report { scroll, ..s }))
}

fn show(s: &Report, app: &App, frame: &mut Frame, at: Place) {
    let area = at.area;
    let rec = app.results.records.get(s.record);
    let text = rec.map(RunRecord::report_text).unwrap_or_default();
    let number = rec.map(RunRecord::number).unwrap_or_default();
    let rect = centered(
        area,
        area.width.saturating_sub(2),
        area.height.saturating_sub(2),
    );
    frame.render_widget(Clear, rect);
    // The CLI's tables keep their columns: a column wrapped onto its own line read as a row.
    let inner = Block::default().borders(Borders::ALL).inner(rect);
    let lines = draw::report(&text, inner.width.into());
    let rows = usize::from(inner.height);
    let top = usize::from(s.scroll).min(lines.len().saturating_sub(1));
    let more = draw::scrolled(lines.len(), top, rows);
    draw::title(&more, rect);
    frame.render_widget(
        Paragraph::new(lines).scroll((s.scroll, 0)).block(
            Block::default()
                .borders(Borders::ALL)
                .title(format!(
                    " Report of run #{number} (Up/Down scroll, Esc closes) "
                ))
                .title_bottom(Span::styled(more, theme::dim())),
        ),
        rect,
    );
}
