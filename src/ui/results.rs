//! Every run of the session, with its device, test, parameters, scheduler, write cache and
//! figures (mean over repeats, and their spread).

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Cell, Paragraph, Row, Table, TableState};

use super::{count, ms, rate, theme};
use crate::app::{App, PhaseFigures, RunRecord};
use crate::bench::outcome::RunReport;
use crate::bench::plan::Access;
use crate::bench::spec::{PhaseTag, sweep_column};
use crate::model::Bytes;
use crate::model::text::neutralize_controls;
use crate::report::run::phase_engine_label;

pub fn render(app: &App, frame: &mut Frame, area: Rect) {
    if app.results.records.is_empty() {
        frame.render_widget(
            Paragraph::new("No runs yet. Pick a device (1) and a test (2), press r.")
                .style(theme::dim())
                .block(Block::default().borders(Borders::ALL).title(" Results ")),
            area,
        );
        return;
    }
    let lines = app
        .results
        .records
        .get(app.results.row)
        .map(detail_lines)
        .unwrap_or_default();
    // The table keeps its header and a few rows; the detail (a multi-phase grid) gets the rest.
    let table_min = app.results.records.len().min(3) as u16 + 3;
    let detail_h = (lines.len() as u16 + 2).clamp(5, area.height.saturating_sub(table_min).max(5));
    let [table_area, detail] =
        Layout::vertical([Constraint::Min(table_min), Constraint::Length(detail_h)]).areas(area);
    let header = Row::new([
        "", "#", "DEVICE", "TEST", "SCHED", "WC", "MB/s", "IOPS", "p99 ms", "n", "noise",
    ])
    .style(theme::header());
    let rows: Vec<Row> = app
        .results
        .records
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let mark = match app.results.marks.iter().position(|&m| m == i) {
                Some(0) => "A",
                Some(_) => "B",
                None => "",
            };
            let (mbps, iops, p99, noise) = match r.row() {
                Some(f) => (
                    f.mbps.map_or("-".into(), rate),
                    f.iops.map_or("-".into(), count),
                    f.p99_ms.map_or("-".into(), ms),
                    f.noise_pct.map_or("-".into(), |s| format!("{s:.1}%")),
                ),
                None => ("-".into(), "-".into(), "-".into(), "-".into()),
            };
            let style = if r.error.is_some() {
                theme::bad()
            } else if r.past.is_some() {
                theme::dim()
            } else {
                ratatui::style::Style::default()
            };
            Row::new(vec![
                Cell::from(mark).style(theme::warn()),
                Cell::from(match r.past {
                    Some(_) => format!("h{}", r.id + 1),
                    None => format!("{}", r.id + 1),
                }),
                Cell::from(r.device.clone()),
                Cell::from(r.test.id()),
                Cell::from(r.scheduler.clone().unwrap_or_else(|| "-".into())),
                Cell::from(r.drive_cache.clone().unwrap_or_else(|| "-".into())),
                Cell::from(mbps),
                Cell::from(iops),
                Cell::from(p99),
                Cell::from(format!("{}/{}", r.repeats_done(), r.repeats_wanted)),
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
            Constraint::Length(3),
            Constraint::Length(8),
            Constraint::Length(7),
            Constraint::Length(6),
            Constraint::Length(5),
            Constraint::Length(6),
        ],
    )
    .header(header)
    .column_spacing(1)
    .row_highlight_style(theme::selected())
    .highlight_symbol(">")
    .block(Block::default().borders(Borders::ALL).title(Span::styled(
        if app.results.records.iter().any(|r| r.past.is_some()) {
            " Results (Space marks A/B for compare; h#: past runs from the history) "
        } else {
            " Results (Space marks A/B for compare) "
        },
        theme::title(),
    )));
    let mut state = TableState::default().with_selected(Some(app.results.row));
    frame.render_stateful_widget(table, table_area, &mut state);
    frame.render_widget(
        Paragraph::new(lines).block(Block::default().borders(Borders::ALL)),
        detail,
    );
}

/// The selected record: what ran where, its error, and for several phases all of them (a
/// CrystalDiskMark grid, a size-sweep table, a queue-depth table).
fn detail_lines(r: &RunRecord) -> Vec<Line<'static>> {
    let number = match r.past {
        Some(_) => format!("#h{} ", r.id + 1),
        None => format!("#{} ", r.id + 1),
    };
    let mut lines = vec![Line::from(vec![
        Span::styled(number, theme::title()),
        Span::raw(neutralize_controls(&format!(
            "{} on {}: {}",
            r.test.id(),
            r.request.target.display(),
            r.params
        ))),
    ])];
    if let Some(p) = &r.past {
        lines.push(Line::from(Span::styled(
            format!(
                "past run of {} (history): engine {}, {}",
                p.when(),
                neutralize_controls(&p.settings.engine),
                r.io_path().unwrap_or("?"),
            ),
            theme::accent(),
        )));
        lines.push(Line::from(Span::styled(
            format!("disk: {}", p.disk),
            theme::dim(),
        )));
    }
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
    if let [f] = figures.as_slice()
        && !f.rates_meaningful()
    {
        lines.push(Line::from(Span::styled(
            format!("{}: too few for MB/s or IOPS", f.time_base()),
            theme::warn(),
        )));
    }
    if figures.len() > 1 {
        lines.push(Line::from(Span::styled(
            "the row shows the peak MB/s and IOPS and the worst p99 of the phases",
            theme::dim(),
        )));
        let grid = match figures[0].tag {
            PhaseTag::Cdm { .. } => cdm_grid(&figures),
            PhaseTag::Sweep { .. } => sweep_grid(&figures),
            PhaseTag::QdSweep { .. } => qd_grid(&figures),
            PhaseTag::Single => figures
                .iter()
                .map(|f| format!("{:<24} {:>9} MB/s", f.label, rate(f.mbps.mean)))
                .collect(),
        };
        let mut grid = grid.into_iter();
        if let Some(head) = grid.next() {
            lines.push(Line::from(Span::styled(head, theme::header())));
        }
        lines.extend(grid.map(Line::from));
    }
    lines
}

/// CrystalDiskMark's grid: one row per test, read and write side by side.
fn cdm_grid(figures: &[PhaseFigures]) -> Vec<String> {
    let mut out = vec![format!(
        "{:<13} {:>10} {:>10} {:>10} {:>10}",
        "", "Read MB/s", "Write MB/s", "Read IOPS", "Write IOPS"
    )];
    let mut rows: Vec<&str> = Vec::new();
    for f in figures {
        if let PhaseTag::Cdm { row, .. } = &f.tag
            && !rows.contains(&row.as_str())
        {
            rows.push(row);
        }
    }
    for row in rows {
        let find = |write: bool| {
            figures.iter().find(|f| {
                f.tag
                    == PhaseTag::Cdm {
                        row: row.to_string(),
                        write,
                    }
            })
        };
        let (rd, wr) = (find(false), find(true));
        let mb = |f: Option<&PhaseFigures>| f.map_or("-".into(), |f| rate(f.mbps.mean));
        let io = |f: Option<&PhaseFigures>| f.map_or("-".into(), |f| count(f.iops.mean));
        out.push(format!(
            "{row:<13} {:>10} {:>10} {:>10} {:>10}",
            mb(rd),
            mb(wr),
            io(rd),
            io(wr)
        ));
    }
    out
}

/// MB/s by request size, one column per pattern and direction.
fn sweep_grid(figures: &[PhaseFigures]) -> Vec<String> {
    let mut cols: Vec<(Access, bool)> = Vec::new();
    let mut sizes: Vec<u64> = Vec::new();
    for f in figures {
        if let PhaseTag::Sweep { access, write } = f.tag
            && !cols.contains(&(access, write))
        {
            cols.push((access, write));
        }
        if !sizes.contains(&f.bs) {
            sizes.push(f.bs);
        }
    }
    let mut head = format!("{:<10}", "MB/s");
    for (a, w) in &cols {
        head.push_str(&format!(" {:>9}", sweep_column(*a, *w)));
    }
    let mut out = vec![head];
    for bs in sizes {
        let mut line = format!("{:<10}", Bytes(bs).short());
        for &(access, write) in &cols {
            let cell = figures
                .iter()
                .find(|f| f.bs == bs && f.tag == PhaseTag::Sweep { access, write })
                .map_or("-".into(), |f| rate(f.mbps.mean));
            line.push_str(&format!(" {cell:>9}"));
        }
        out.push(line);
    }
    out
}

/// Per queue depth: the small random I/O's IOPS and p99, the large sequential MB/s.
fn qd_grid(figures: &[PhaseFigures]) -> Vec<String> {
    let mut qds: Vec<u32> = figures
        .iter()
        .filter_map(|f| match f.tag {
            PhaseTag::QdSweep { qd, .. } => Some(qd),
            _ => None,
        })
        .collect();
    qds.sort_unstable();
    qds.dedup();
    let mut out = vec![format!(
        "{:<6} {:>11} {:>11} {:>11} {:>11}",
        "QD", "small IOPS", "small MB/s", "small p99", "large MB/s"
    )];
    for q in qds {
        let find = |small: bool| {
            figures
                .iter()
                .find(|f| f.tag == PhaseTag::QdSweep { small, qd: q })
        };
        let (s, l) = (find(true), find(false));
        out.push(format!(
            "{q:<6} {:>11} {:>11} {:>11} {:>11}",
            s.map_or("-".into(), |f| count(f.iops.mean)),
            s.map_or("-".into(), |f| rate(f.mbps.mean)),
            s.and_then(|f| f.p99_ms).map_or("-".into(), |p| ms(p.mean)),
            l.map_or("-".into(), |f| rate(f.mbps.mean)),
        ));
    }
    out
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
