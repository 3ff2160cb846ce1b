//! Every run of the session, with its device, test, parameters, scheduler, write cache and
//! figures (mean over repeats, and their spread).

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Cell, Paragraph, Row, Table, TableState, Wrap};

use super::theme;
use crate::app::App;
use crate::model::KernelWriteCache;
use crate::report::run::{RunReport, phase_engine_label};

pub(crate) fn cache_short(c: Option<KernelWriteCache>) -> &'static str {
    match c {
        Some(KernelWriteCache::WriteBack) => "back",
        Some(KernelWriteCache::WriteThrough) => "thru",
        None => "?",
    }
}

pub fn render(app: &App, frame: &mut Frame, area: Rect) {
    if app.records.is_empty() {
        frame.render_widget(
            Paragraph::new("No runs yet. Pick a device (1) and a test (2), press r.")
                .style(theme::dim())
                .block(Block::default().borders(Borders::ALL).title(" Results ")),
            area,
        );
        return;
    }
    let [table_area, detail] =
        Layout::vertical([Constraint::Min(4), Constraint::Length(5)]).areas(area);
    let header = Row::new([
        "", "#", "DEVICE", "TEST", "SCHED", "WC", "MB/s", "IOPS", "p99 ms", "n", "noise",
    ])
    .style(theme::header());
    let rows: Vec<Row> = app
        .records
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let mark = match app.marks.iter().position(|&m| m == i) {
                Some(0) => "A",
                Some(_) => "B",
                None => "",
            };
            let f = r.headline();
            let (mbps, iops, p99, noise) = match &f {
                Some(f) => (
                    format!("{:.1}", f.mbps.mean),
                    format!("{:.0}", f.iops.mean),
                    f.p99_ms.map_or("-".into(), |s| format!("{:.3}", s.mean)),
                    f.mbps.spread_pct.map_or("-".into(), |s| format!("{s:.1}%")),
                ),
                None => ("-".into(), "-".into(), "-".into(), "-".into()),
            };
            let style = if r.error.is_some() {
                theme::bad()
            } else {
                ratatui::style::Style::default()
            };
            Row::new(vec![
                Cell::from(mark).style(theme::warn()),
                Cell::from(format!("{}", r.id + 1)),
                Cell::from(r.device.clone()),
                Cell::from(r.test.id()),
                Cell::from(r.scheduler.clone().unwrap_or_else(|| "-".into())),
                Cell::from(r.drive_cache.clone().unwrap_or_else(|| "-".into())),
                Cell::from(mbps),
                Cell::from(iops),
                Cell::from(p99),
                Cell::from(format!("{}/{}", r.runs.len(), r.repeats_wanted)),
                Cell::from(noise),
            ])
            .style(style)
        })
        .collect();
    let table = Table::new(
        rows,
        [
            Constraint::Length(1),
            Constraint::Length(3),
            Constraint::Length(7),
            Constraint::Min(9),
            Constraint::Length(11),
            Constraint::Length(4),
            Constraint::Length(8),
            Constraint::Length(7),
            Constraint::Length(6),
            Constraint::Length(4),
            Constraint::Length(6),
        ],
    )
    .header(header)
    .column_spacing(1)
    .row_highlight_style(theme::selected())
    .highlight_symbol(">")
    .block(Block::default().borders(Borders::ALL).title(Span::styled(
        " Results (Space marks A/B for compare) ",
        theme::title(),
    )));
    let mut state = TableState::default().with_selected(Some(app.record_row));
    frame.render_stateful_widget(table, table_area, &mut state);

    let mut lines = Vec::new();
    if let Some(r) = app.records.get(app.record_row) {
        lines.push(Line::from(vec![
            Span::styled(format!("#{} ", r.id + 1), theme::title()),
            Span::raw(format!(
                "{} on {}: {}",
                r.test.id(),
                r.request.target.display(),
                r.params
            )),
        ]));
        if let Some(engine) = r.runs.first().and_then(engine_line) {
            lines.push(Line::from(Span::styled(engine, theme::dim())));
        }
        if let Some(e) = &r.error {
            lines.push(Line::from(Span::styled(
                format!("error: {e}"),
                theme::bad(),
            )));
        }
        let figures = r.figures();
        if figures.len() > 1 {
            let phases = figures
                .iter()
                .map(|f| format!("{} {:.1}", f.label, f.mbps.mean))
                .collect::<Vec<_>>()
                .join(" | ");
            lines.push(Line::from(Span::styled(
                format!("MB/s per phase: {phases}"),
                theme::dim(),
            )));
        }
    }
    frame.render_widget(
        Paragraph::new(lines)
            .wrap(Wrap { trim: true })
            .block(Block::default().borders(Borders::ALL)),
        detail,
    );
}

/// Which engine the run used and why, in short (the full report, Enter, has the whole
/// reason): "engine sync (4 pread threads): probe 812k vs uring 498k", or per phase when its
/// phases differ.
fn engine_line(report: &RunReport) -> Option<String> {
    let phases = &report.outcome.phases;
    let first = phases.first()?;
    let same = phases
        .iter()
        .all(|p| p.engine == first.engine && p.engine_choice.reason == first.engine_choice.reason);
    Some(if same {
        format!(
            "engine {}: {}",
            phase_engine_label(first),
            first.engine_choice.short_reason()
        )
    } else {
        let each = phases
            .iter()
            .map(|p| {
                format!(
                    "{} {} ({})",
                    p.label,
                    p.engine.as_str(),
                    p.engine_choice.short_reason()
                )
            })
            .collect::<Vec<_>>()
            .join(" | ");
        format!("engine per phase: {each}")
    })
}
