//! The sweep's result view: per test, one bar per value (the mean of its repeats) beside the
//! CLI's columns, the winner marked, and the CLI's verdict (`bench::analysis::setting_sweep`).
//! Bars use the full and left half blocks, which the Linux console's fonts have (CP437).

use ratatui::Frame;
use ratatui::crossterm::event::KeyCode;
use ratatui::layout::{Constraint, Flex, Layout};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph};

use super::super::keys::wrap_words;
use super::super::{App, SweepRun, SweepStage};
use super::{CLOSE, DialogDef, Intent, Next, Overlay, Place, close, no_devices, stay};
use crate::bench::analysis::setting_sweep::{SweepKind, SweepResult, TestSweep, label};
use crate::draw::cut;
use crate::report::setting_sweep::heading;
use crate::theme;

/// The first line shown.
#[derive(Debug, Clone, PartialEq)]
pub struct Sweep {
    pub scroll: u16,
}

pub const DIALOG: DialogDef<Sweep> = DialogDef {
    key,
    draw: show,
    devices: no_devices,
};

/// Up/Down scroll, `P` makes a scheduler winner permanent, any other key closes.
fn key(s: Sweep, code: KeyCode) -> Next {
    let scroll = match code {
        KeyCode::Up | KeyCode::Char('k') => s.scroll.saturating_sub(1),
        KeyCode::Down | KeyCode::Char('j') => s.scroll.saturating_add(1),
        KeyCode::Char('P') => return close(Intent::PersistSweepWinner),
        _ => return CLOSE,
    };
    stay(Overlay::Sweep(Sweep { scroll }))
}

/// A bar of `value` against `max` in `width` cells, to the half cell. Empty for no value or
/// no width.
pub fn bar(value: f64, max: f64, width: usize) -> String {
    // NaN fails both tests too: no bar for it.
    let measured = value > 0.0 && max > 0.0;
    if width == 0 || !measured {
        return String::new();
    }
    let halves = ((value / max).min(1.0) * width as f64 * 2.0).round() as usize;
    // Anything measured shows at least half a cell.
    let halves = halves.max(1);
    let mut s = "█".repeat(halves / 2);
    if halves % 2 == 1 {
        s.push('▌');
    }
    s
}

/// Widths of the fixed columns: setting, figure, spread, delta, beyond noise.
fn widths(r: &SweepResult, t: &TestSweep) -> [usize; 5] {
    let name = r
        .settings
        .iter()
        .map(|s| s.chars().count() + 2)
        .chain([r.kind.column().len()])
        .max()
        .unwrap_or(9);
    let figure = t
        .rows
        .iter()
        .filter_map(|row| row.figure.map(|f| t.metric.format(f.mean).len()))
        .chain([t.metric.unit().len()])
        .max()
        .unwrap_or(4);
    let delta = t
        .rows
        .iter()
        .filter_map(|row| row.delta.as_ref().map(|d| format!("{:+.1} %", d.pct).len()))
        .chain([8])
        .max()
        .unwrap_or(8);
    [name, figure, 7, delta, 11]
}

fn test_lines(r: &SweepResult, t: &TestSweep, width: usize, out: &mut Vec<Line<'static>>) {
    let [nw, fw, sw, dw, bw] = widths(r, t);
    let fixed = nw + fw + sw + dw + bw + 5;
    let bar_width = width.saturating_sub(fixed + " winner".len());
    out.push(Line::from(Span::styled(
        cut(
            &format!(
                "{}: {} (mean of the repeats; * = at start)",
                t.test.id(),
                t.metric.describe()
            ),
            width,
        ),
        theme::title(),
    )));
    out.push(Line::from(Span::styled(
        format!(
            "{:<nw$} {:>fw$} {:>sw$} {:>dw$} {:<bw$}",
            r.kind.column(),
            t.metric.unit(),
            "SPREAD",
            "DELTA",
            "BEYOND NOISE"
        ),
        theme::header(),
    )));
    let max = t
        .rows
        .iter()
        .filter_map(|row| row.figure.map(|f| f.mean))
        .fold(0.0, f64::max);
    let winner = t.verdict.winner();
    for row in &t.rows {
        let won = winner == Some(row.setting.as_str());
        let name = format!("{}{}", row.setting, if row.baseline { " *" } else { "" });
        let figure = row.figure.map_or("-".into(), |f| t.metric.format(f.mean));
        let spread = row
            .figure
            .and_then(|f| f.spread_pct)
            .map_or("-".into(), |s| format!("{s:.1} %"));
        let delta = row
            .delta
            .as_ref()
            .map_or("-".into(), |d| format!("{:+.1} %", d.pct));
        let text_style = if won { theme::good() } else { Style::default() };
        let bar_style = if won { theme::good() } else { theme::accent() };
        let mut spans = vec![
            Span::styled(
                format!(
                    "{:<nw$} {figure:>fw$} {spread:>sw$} {delta:>dw$} {:<bw$} ",
                    crate::draw::elide(&name, nw),
                    row.beyond_noise()
                ),
                text_style,
            ),
            Span::styled(
                bar(row.figure.map_or(0.0, |f| f.mean), max, bar_width),
                bar_style,
            ),
        ];
        if won {
            spans.push(Span::styled(" winner", theme::good()));
        }
        out.push(Line::from(spans));
    }
    let base = r.settings.first().map_or("", String::as_str);
    let style = if winner.is_some() {
        theme::good()
    } else {
        theme::title()
    };
    for l in wrap_words(&t.verdict.describe(r.kind, t.metric, base), width) {
        out.push(Line::from(Span::styled(l, style)));
    }
}

/// The view's lines for a text `width` wide.
pub fn lines(sw: &SweepRun, width: usize) -> Vec<Line<'static>> {
    let r = sw.result();
    let mut out: Vec<Line<'static>> = wrap_words(&heading(&r), width)
        .into_iter()
        .map(Line::from)
        .collect();
    for t in &r.tests {
        out.push(Line::from(""));
        test_lines(&r, t, width, &mut out);
    }
    out.push(Line::from(""));
    let mut note = |text: String, style: Style| {
        for l in wrap_words(&text, width) {
            out.push(Line::from(Span::styled(l, style)));
        }
    };
    if !r.complete() {
        let why = match (&sw.error, sw.stopping) {
            (Some(e), _) => format!("ended by an error: {e}"),
            (None, true) => "stopped (x)".to_string(),
            (None, false) => "in progress".to_string(),
        };
        note(
            format!(
                "{why}, after {} of {} runs; the figures cover the runs that completed",
                r.runs_done, r.runs_planned
            ),
            theme::warn(),
        );
    }
    let base = label(sw.kind, sw.settings.first().map_or("", String::as_str));
    match (&sw.restore_error, sw.stage) {
        (Some(e), _) => note(
            format!("{} NOT put back to {base}: {e}", what(sw)),
            theme::bad(),
        ),
        (None, SweepStage::Done) => note(
            format!("{} is back to {base}, as found", what(sw)),
            theme::dim(),
        ),
        (None, _) => {}
    }
    note(
        "Up/Down scroll, P makes a scheduler winner permanent (udev rule, shown first), any \
         other key closes; v on Results shows it again; each value's runs are in Results"
            .into(),
        theme::dim(),
    );
    out
}

fn what(sw: &SweepRun) -> String {
    match sw.kind {
        SweepKind::Scheduler => format!("the scheduler of {}", sw.device),
        SweepKind::WriteCache => format!("the write cache of {}", sw.device),
    }
}

/// Draws the view over the screen, `scroll` lines down.
fn show(s: &Sweep, app: &App, frame: &mut Frame, at: Place) {
    let (area, scroll) = (at.area, s.scroll);
    let Some(sw) = &app.sweep else { return };
    let w = area.width.saturating_sub(2).min(128);
    let inner = usize::from(w.saturating_sub(2));
    let lines = lines(sw, inner);
    let h = (lines.len() as u16 + 2).min(area.height);
    let [v] = Layout::vertical([Constraint::Length(h)])
        .flex(Flex::Center)
        .areas(area);
    let [rect] = Layout::horizontal([Constraint::Length(w)])
        .flex(Flex::Center)
        .areas(v);
    frame.render_widget(Clear, rect);
    let title = format!(" {} ", sw.kind.title());
    let more = crate::draw::scrolled(lines.len(), scroll.into(), h.saturating_sub(2).into());
    crate::draw::title(&more, rect);
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bars_are_half_cells_of_the_largest() {
        assert_eq!(bar(100.0, 100.0, 4), "████");
        assert_eq!(bar(50.0, 100.0, 4), "██");
        assert_eq!(bar(62.5, 100.0, 4), "██▌");
        assert_eq!(bar(1.0, 100.0, 4), "▌", "a measured value shows");
        assert_eq!(bar(0.0, 100.0, 4), "");
        assert_eq!(bar(f64::NAN, 100.0, 4), "");
        assert_eq!(bar(5.0, 0.0, 4), "");
        assert_eq!(bar(5.0, 5.0, 0), "");
    }
}
