//! Drawing: `render(&App, &mut Frame)` turns the state into a screen. It reads the state and
//! never changes it, and it never reads the clock (the app's `now` is its time).

// The library's surface (docs/development.md): `disktriage::ui::Item`.
pub use crate::draw::Cut;

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use crate::app::{App, Place, Screen};
use crate::draw;
/// Colours and glyphs, below the app so screens draw with them.
pub use crate::theme;

/// The smallest terminal the screens are laid out for.
pub const MIN_WIDTH: u16 = 80;
pub const MIN_HEIGHT: u16 = 24;

pub fn render(app: &App, frame: &mut Frame) {
    let area = frame.area();
    if area.width < MIN_WIDTH || area.height < MIN_HEIGHT {
        let msg = format!(
            "disktriage needs at least {MIN_WIDTH}x{MIN_HEIGHT}; this terminal is {}x{}. q quits.",
            area.width, area.height
        );
        frame.render_widget(
            Paragraph::new(msg).wrap(ratatui::widgets::Wrap { trim: true }),
            area,
        );
        return;
    }
    // A long message takes up to three rows rather than lose its end.
    let status_lines = status_lines(app, area.width);
    let status_rows = (status_lines.len() as u16).clamp(1, 3);
    let [top, body, status] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Min(0),
        Constraint::Length(status_rows),
    ])
    .areas(area);
    top_bar(app, frame, top);
    (app.screen.def().draw)(app, frame, body);
    draw::lines(&status_lines, status);
    frame.render_widget(Paragraph::new(status_lines), status);
    if let Some(dialog) = &app.overlay {
        // A dialog about the selected device keeps its row in sight.
        let keep = match app.screen {
            Screen::Devices => crate::app::screens::devices::selected_row_y(app, body),
            _ => None,
        };
        dialog.draw(app, frame, Place { area, keep });
    }
}

fn top_bar(app: &App, frame: &mut Frame, area: Rect) {
    let mut spans = vec![Span::styled(" disktriage ", theme::title())];
    for (i, s) in Screen::ALL.iter().enumerate() {
        let text = format!("{} {}", i + 1, s.title());
        spans.push(Span::raw(" "));
        if *s == app.screen {
            spans.push(Span::styled(text, theme::selected()));
        } else {
            spans.push(Span::raw(text));
        }
    }
    if !app.screen.is_tab() {
        spans.push(Span::raw(" "));
        spans.push(Span::styled(app.screen.title(), theme::selected()));
    }
    if app.running() {
        spans.push(Span::styled("  RUNNING", theme::warn()));
    }
    let right = " ?:help q:quit ";
    let used: usize = spans.iter().map(|s| s.content.chars().count()).sum();
    let pad = (area.width as usize).saturating_sub(used + right.len());
    spans.push(Span::raw(" ".repeat(pad)));
    spans.push(Span::styled(right, theme::dim()));
    draw::lines(&[Line::from(spans.clone())], area);
    frame.render_widget(Paragraph::new(Line::from(spans)), area);
}

/// Keys of the current screen, or the latest message, wrapped to `width`.
fn status_lines(app: &App, width: u16) -> Vec<Line<'static>> {
    let line = if let Some((msg, _)) = &app.status {
        Line::from(Span::styled(format!(" {msg}"), theme::accent()))
    } else if !app.is_root {
        Line::from(Span::styled(
            " not root: the list is read-only; tests and settings need root (sudo disktriage)",
            theme::warn(),
        ))
    } else {
        let keys = crate::app::keys::status_keys_now(app);
        if keys.chars().count() < usize::from(width) {
            Line::from(Span::styled(format!(" {keys}"), theme::dim()))
        } else {
            // Too many for a row: the screen's keys on one, the switches on the next.
            let lines = crate::app::keys::status_key_groups_now(app)
                .into_iter()
                .filter(|g| !g.is_empty())
                .map(|g| Line::from(Span::styled(format!(" {g}"), theme::dim())))
                .collect();
            return draw::wrap(lines, width.into());
        }
    };
    draw::wrap(vec![line], width.into())
}

/// Draws as [`render`] does and returns every text that was cut.
pub fn render_checked(app: &App, frame: &mut Frame) -> Vec<Cut> {
    crate::draw::recording(|| render(app, frame))
}
