//! The Results screen: every run of the session with its settings and figures (mean over
//! repeats, and spread), its charts, and the rows of several devices (`summary_lines`, also on
//! the Run screen). The state is `app::records`'.

use ratatui::Frame;
use ratatui::crossterm::event::KeyCode;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Cell, Paragraph, Row, Table, TableState};

use super::super::keys::{self, Action, Binding, Scope, UP_DOWN, bind};
use super::super::several::SeveralRun;
use super::super::{App, Overlay, PhaseFigures, RunRecord, Screen, step};
use super::{ScreenDef, nothing};
use crate::bench::analysis::several_disks::Role;
use crate::bench::exec::probe::short_reason;
use crate::bench::plan::PhaseTag;
use crate::bench::results::outcome::RunReport;
use crate::draw::chart::{self, Drawing};
use crate::event::Cmd;
use crate::model::cache::drive_cache_shown;
use crate::model::text::neutralize_controls;
use crate::report::run::{CPU_BOUND_NOTE, others_line, phase_engine_label, rewrite_rates_note};
use crate::report::several as several_report;
use crate::report::table::{self, count, ms, rate};
use crate::theme;

const KEYS: &[Binding] = &[
    bind(
        Scope::On(Screen::Results),
        UP_DOWN,
        "Up/Down",
        None,
        "select",
        Action::Move,
    ),
    bind(
        Scope::On(Screen::Results),
        &[KeyCode::Home, KeyCode::End],
        "Home/End",
        None,
        "first/last",
        Action::Ends,
    ),
    bind(
        Scope::On(Screen::Results),
        &[KeyCode::Char(' ')],
        "Space",
        None,
        "mark A/B",
        Action::Mark,
    ),
    bind(
        Scope::On(Screen::Results),
        &[KeyCode::Char('c')],
        "c",
        Some("compare"),
        "compare",
        Action::Compare,
    ),
    bind(
        Scope::On(Screen::Results),
        &[KeyCode::Enter],
        "Enter",
        Some("report"),
        "full report",
        Action::Report,
    ),
    bind(
        Scope::On(Screen::Results),
        &[KeyCode::Char('e')],
        "e",
        Some("export"),
        "export (JSON, CSV series, fio command line)",
        Action::Export,
    ),
    bind(
        Scope::On(Screen::Results),
        &[KeyCode::Char('r')],
        "r",
        Some("rerun"),
        "rerun the selected",
        Action::Rerun,
    ),
    bind(
        Scope::On(Screen::Results),
        &[KeyCode::Char('v')],
        "v",
        None,
        "the last sweep's table and bars",
        Action::SweepResult,
    ),
    bind(
        Scope::On(Screen::Results),
        &[KeyCode::Char('b')],
        "b",
        Some("before"),
        "before/after: vs the previous run of this test on this disk",
        Action::Before,
    ),
];

pub const SCREEN: ScreenDef = ScreenDef {
    title: "Results",
    keys: KEYS,
    act,
    works_now: |app, action| app.works_anywhere(action),
    draw,
    leave: nothing,
    job: None,
};

/// Moving, marking, the report and export; `r`, `c`, `b` and `v` are `App::act`'s.
fn act(app: &mut App, action: Action, code: KeyCode) -> Vec<Cmd> {
    let dir = keys::direction(code);
    let n = app.results.records.len();
    let has_runs = app.results.selected().is_some_and(|r| !r.runs.is_empty());
    let past = app.results.selected().is_some_and(|r| r.past.is_some());
    let row = app.results.row;
    match action {
        Action::Move | Action::Ends => {
            let order = app.results.shown_order();
            let at = order.iter().position(|&i| i == row).unwrap_or(0);
            let to = match action {
                Action::Move => step(at, dir, n.saturating_sub(1)),
                _ if dir < 0 => 0,
                _ => n.saturating_sub(1),
            };
            app.results.row = order.get(to).copied().unwrap_or(row);
        }
        Action::Mark if n > 0 => app.results.toggle_mark(),
        Action::Export if past => app.error(
            "a past run is in the history already: `disktriage history --json DEV` prints \
             it",
        ),
        Action::Report if past => {
            app.overlay = Some(Overlay::Report(super::super::dialogs::report::Report {
                record: row,
                scroll: 0,
            }));
        }
        Action::Export if n > 0 && !has_runs => {
            app.error("this run has no results to export");
        }
        Action::Export if n > 0 => {
            app.overlay = Some(Overlay::Export(super::super::dialogs::export::Export {
                record: row,
            }))
        }
        Action::Report if has_runs => {
            app.overlay = Some(Overlay::Report(super::super::dialogs::report::Report {
                record: row,
                scroll: 0,
            }));
        }
        _ => {}
    }
    Vec::new()
}

fn draw(app: &App, frame: &mut Frame, area: Rect) {
    if app.results.records.is_empty() {
        frame.render_widget(
            Paragraph::new("No runs yet. Pick a device (1) and a test (2), press r.")
                .style(theme::dim())
                .block(Block::default().borders(Borders::ALL).title(" Results ")),
            area,
        );
        return;
    }
    let selected = app.results.records.get(app.results.row);
    // A sweep or CrystalDiskMark record is drawn (chart or grid) under its text.
    let drawing = selected
        .and_then(|r| r.runs.first())
        .and_then(|run| Drawing::of(&run.plan));
    let lines = selected_lines(app, selected, drawing.is_none(), area.width);
    // The table keeps its header and a few rows; the detail (a multi-phase grid) gets the rest.
    let table_min = app.results.records.len().min(3) as u16 + 3;
    let room = area.height.saturating_sub(table_min).max(5);
    let detail_h = if drawing.is_some() {
        room
    } else {
        (lines.len() as u16 + 2).clamp(5, room)
    };
    let [table_area, detail] =
        Layout::vertical([Constraint::Min(table_min), Constraint::Length(detail_h)]).areas(area);
    draw_table(app, frame, table_area);
    draw_detail(app, frame, detail, drawing.zip(selected), lines);
}

/// The detail's lines of the selected record, wrapped to the screen's `width` inside the
/// border: `detail_lines`, and the rows of a run on several devices it was part of.
fn selected_lines(
    app: &App,
    selected: Option<&RunRecord>,
    with_grid: bool,
    width: u16,
) -> Vec<Line<'static>> {
    // Listed when `b` can compare with them (the shown run has figures of its own).
    let earlier: Vec<&RunRecord> = match app.results.before(app.results.row) {
        Some(_) => app
            .results
            .earlier_runs(app.results.row)
            .into_iter()
            .filter_map(|i| app.results.records.get(i))
            .collect(),
        None => Vec::new(),
    };
    let mut lines = selected
        .map(|r| detail_lines(r, &earlier, with_grid))
        .unwrap_or_default();
    // A record of a run on several devices also shows that run's rows and verdict.
    if let Some(run) = app
        .several
        .runs
        .iter()
        .find(|r| r.targets.iter().any(|t| t.record == app.results.row))
    {
        lines.extend(summary_lines(run, width.saturating_sub(2) as usize));
    }
    // A long line (the engine of every phase) wraps.
    crate::draw::wrap(lines, width.saturating_sub(2).into())
}

/// Draws the table of records, in their shown order, scrolled to the selected one.
fn draw_table(app: &App, frame: &mut Frame, table_area: Rect) {
    let widths = [
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
    ];
    // A device's or test's name may lose its middle to its column; every other cell must fit.
    let columns = crate::draw::columns(
        &widths,
        Block::default().borders(Borders::ALL).inner(table_area),
        1,
    );
    let mut shown: Vec<Vec<String>> = Vec::new();
    let header = Row::new([
        "", "#", "DEVICE", "TEST", "SCHED", "WC", "MB/s", "IOPS", "p99 ms", "n", "noise",
    ])
    .style(theme::header());
    let order = app.results.shown_order();
    let rows: Vec<Row> = order
        .iter()
        .filter_map(|&i| Some((i, app.results.records.get(i)?)))
        .map(|(i, r)| {
            let (row, texts) = record_row(app, i, r, &columns);
            shown.push(texts);
            row
        })
        .collect();
    crate::draw::cells(&shown, &columns);
    let title = if app.results.records.iter().any(|r| r.past.is_some()) {
        " Results (Space marks A/B for compare; h#: past runs from the history) "
    } else {
        " Results (Space marks A/B for compare) "
    };
    crate::draw::title(title, table_area);
    // Inside the border, under the header.
    let at = order.iter().position(|&i| i == app.results.row);
    let window = crate::draw::Window::over(
        order.len(),
        usize::from(table_area.height.saturating_sub(3)),
        at,
    );
    let more = window.mark();
    crate::draw::title(&more, table_area);
    let table = Table::new(rows, widths)
        .header(header)
        .column_spacing(1)
        .row_highlight_style(theme::selected())
        .highlight_symbol(">")
        .block(
            Block::default()
                .borders(Borders::ALL)
                .title(Span::styled(title, theme::title()))
                .title_bottom(Span::styled(more, theme::dim())),
        );
    let mut state = TableState::default()
        .with_selected(at)
        .with_offset(window.offset);
    frame.render_stateful_widget(table, table_area, &mut state);
}

/// Record `i`'s row of the table, and its cells' texts (the mark's as empty) for
/// `draw::cells`.
fn record_row(
    app: &App,
    i: usize,
    r: &RunRecord,
    columns: &[usize],
) -> (Row<'static>, Vec<String>) {
    let mark = match app.results.marks.iter().position(|&m| m == i) {
        Some(0) => "A",
        Some(_) => "B",
        None => "",
    };
    let (mbps, iops, p99, noise) = match r.row() {
        // A rate over few I/Os is marked where it stands (the detail says how few).
        Some(f) => (
            f.mbps
                .map_or("-".into(), |m| low_mark(rate(m), f.low_count)),
            f.iops
                .map_or("-".into(), |i| low_mark(count(i), f.low_count)),
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
    let mut row = vec![Cell::from(mark).style(theme::warn())];
    let texts = vec![
        r.number(),
        crate::draw::elide(&r.device, columns[2]),
        // concurrent-read is wider than the column at 80 columns; its ends still tell.
        crate::draw::elide(r.test.id(), columns[3]),
        r.scheduler.clone().unwrap_or_else(|| "-".into()),
        drive_cache_shown(r.drive_cache.as_deref()).to_string(),
        mbps,
        iops,
        p99,
        format!("{}/{}", r.repeats_done(), r.repeats_wanted),
        noise,
    ];
    row.extend(texts.iter().cloned().map(Cell::from));
    let shown = std::iter::once(String::new()).chain(texts).collect();
    (Row::new(row).style(style), shown)
}

/// Draws the selected record's text in `detail`; with a drawing (a sweep's charts, a
/// CrystalDiskMark grid) the text goes on top and the drawing under it.
fn draw_detail(
    app: &App,
    frame: &mut Frame,
    detail: Rect,
    drawing: Option<(Drawing, &RunRecord)>,
    lines: Vec<Line<'static>>,
) {
    let (text, drawn, lines) = match drawing {
        Some((d, r)) => {
            // A sweep's charts keep their rows; the text above names what has no room. (A
            // CrystalDiskMark grid says so itself.)
            let keep = if d == Drawing::Sweep { CHART_ROWS } else { 0 };
            let text_h = (lines.len() as u16 + 2)
                .min(detail.height.saturating_sub(keep))
                .max(3);
            let [text, drawn] =
                Layout::vertical([Constraint::Length(text_h), Constraint::Min(0)]).areas(detail);
            let lines = crate::draw::pane_or(
                lines,
                Block::default().borders(Borders::ALL).inner(text),
                Some("a taller terminal shows them"),
            );
            (text, Some((d, r, drawn)), lines)
        }
        None => (detail, None, lines),
    };
    crate::draw::lines(&lines, Block::default().borders(Borders::ALL).inner(text));
    frame.render_widget(
        Paragraph::new(lines).block(Block::default().borders(Borders::ALL)),
        text,
    );
    if let Some((d, r, area)) = drawn {
        let plan = r.runs.first().map(|run| &run.plan);
        chart::draw(frame, area, app.console, d, r.test, plan, &r.samples());
    }
}

/// The rows a sweep's charts keep under the record's text: the border, the legend and a plot
/// of eight rows (six of them the graph's).
const CHART_ROWS: u16 = 11;

/// How many earlier runs of the same test the detail lists (the rest are in the table).
const EARLIER_SHOWN: usize = 3;

/// The earlier runs of the selected record's test on its disk, most recent first (the first
/// is `b`'s), each with its date, scheduler and headline figure.
fn earlier_lines(r: &RunRecord, earlier: &[&RunRecord]) -> Vec<Line<'static>> {
    if earlier.is_empty() {
        return Vec::new();
    }
    let mut lines = vec![Line::from(Span::styled(
        format!(
            "earlier {} on this {}, newest first (b compares with the first):",
            r.test.id(),
            if r.request.target.starts_with("/dev") {
                "disk"
            } else {
                "file"
            }
        ),
        theme::accent(),
    ))];
    for e in earlier.iter().take(EARLIER_SHOWN) {
        // A session run is told by its number; a past run by its date.
        let when = match (&e.past, e.started_unix()) {
            (None, _) => "this session".to_string(),
            (Some(_), Some(unix)) => crate::history::utc_minute(unix),
            (Some(_), None) => "?".to_string(),
        };
        let figure = match e.row() {
            Some(f) => match (f.mbps, f.iops) {
                (Some(m), _) => format!("{} MB/s", low_mark(rate(m), f.low_count)),
                (None, Some(i)) => format!("{} IOPS", low_mark(count(i), f.low_count)),
                (None, None) => "-".into(),
            },
            None => "-".into(),
        };
        lines.push(Line::from(neutralize_controls(&format!(
            "  #{:<3} {when}  sched {}  {figure}",
            e.number(),
            e.scheduler.as_deref().unwrap_or("-"),
        ))));
    }
    if earlier.len() > EARLIER_SHOWN {
        lines.push(Line::from(Span::styled(
            format!("  and {} older in the list", earlier.len() - EARLIER_SHOWN),
            theme::dim(),
        )));
    }
    lines
}

/// The selected record: what ran where, its error, its earlier runs, and for several phases
/// all of them (a CrystalDiskMark grid, a size-sweep or queue-depth table).
fn detail_lines(r: &RunRecord, earlier: &[&RunRecord], with_grid: bool) -> Vec<Line<'static>> {
    let mut lines = what_ran_lines(r);
    lines.extend(warning_lines(r));
    let figures = r.figures();
    lines.extend(low_count_line(&figures));
    lines.extend(earlier_lines(r, earlier));
    if figures.len() > 1 {
        lines.extend(phases_lines(&figures, with_grid));
    }
    lines
}

/// What ran where: the test, target and parameters, a past run's date and disk, the engine,
/// and a rewrite's time base.
fn what_ran_lines(r: &RunRecord) -> Vec<Line<'static>> {
    let number = format!("#{} ", r.number());
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
    // A rewrite's time base (`RunRecord::time_base`), said where the figures are.
    if let Some(note) = r
        .figures()
        .iter()
        .find_map(|f| rewrite_rates_note(f.time_base))
    {
        lines.push(Line::from(Span::styled(note, theme::dim())));
    }
    lines
}

/// What skews or voids the figures: a CPU-bound phase, others' I/O, the run's error, and a
/// figure faster than the link.
fn warning_lines(r: &RunRecord) -> Vec<Line<'static>> {
    let mut lines = Vec::new();
    if r.runs
        .iter()
        .flat_map(|run| &run.outcome.phases)
        .any(|p| p.cpu_bound)
    {
        lines.push(Line::from(Span::styled(CPU_BOUND_NOTE, theme::warn())));
    }
    // Others' I/O on the device, before the run or during a phase: the figures are skewed.
    let last = r.runs.last();
    for line in last
        .and_then(|run| run.outcome.background.as_ref())
        .map(|b| b.short())
        .into_iter()
        .chain(
            last.into_iter()
                .flat_map(|run| run.outcome.phases.iter().filter_map(others_line))
                .take(1),
        )
    {
        lines.push(Line::from(Span::styled(line, theme::warn())));
    }
    if let Some(e) = &r.error {
        lines.push(Line::from(Span::styled(
            format!("error: {e}"),
            theme::bad(),
        )));
    }
    // A figure the link cannot carry is said where the figure is (once, whatever the repeats).
    let mut faster: Vec<&String> = r
        .runs
        .iter()
        .flat_map(|run| &run.notes)
        .filter(|n| n.starts_with("faster than the link"))
        .collect();
    faster.dedup();
    for n in faster {
        // Two lines, so the figures fit 80 columns whole.
        let (head, why) = n.split_once(" (").unwrap_or((n.as_str(), ""));
        lines.push(Line::from(Span::styled(head.to_string(), theme::warn())));
        if !why.is_empty() {
            lines.push(Line::from(Span::styled(format!("({why}"), theme::warn())));
        }
    }
    lines
}

/// The phases with a low count of I/Os: the one phase's note, or how many phases.
fn low_count_line(figures: &[PhaseFigures]) -> Option<Line<'static>> {
    let thin: Vec<String> = figures
        .iter()
        .filter_map(PhaseFigures::low_count_note)
        .collect();
    match thin.as_slice() {
        [] => None,
        [one] if figures.len() == 1 => {
            Some(Line::from(Span::styled(format!("* {one}"), theme::warn())))
        }
        _ => Some(Line::from(Span::styled(
            format!("* {} phases with a low count of I/Os", thin.len()),
            theme::warn(),
        ))),
    }
}

/// A run of several phases: what its row shows, then (`with_grid`, when nothing draws them)
/// each phase's figures.
fn phases_lines(figures: &[PhaseFigures], with_grid: bool) -> Vec<Line<'static>> {
    let mut lines = vec![Line::from(Span::styled(
        "the row shows the peak MB/s and IOPS and the worst p99 of the phases",
        theme::dim(),
    ))];
    if !with_grid {
        return lines;
    }
    // Sweeps and CrystalDiskMark are drawn (see `chart`); other phases list here.
    let grid: Vec<String> = match figures[0].tag {
        PhaseTag::Metadata { .. } => metadata_grid(figures),
        _ => figures
            .iter()
            .map(|f| {
                format!(
                    "{:<24} {:>9} MB/s",
                    f.label,
                    low_mark(rate(f.mbps.mean), f.low_count())
                )
            })
            .collect(),
    };
    let mut grid = grid.into_iter();
    if let Some(head) = grid.next() {
        lines.push(Line::from(Span::styled(head, theme::header())));
    }
    lines.extend(grid.map(Line::from));
    lines
}

/// A rate with a low count of I/Os behind it, marked "*" (`PhaseFigures::low_count_note` says
/// how few).
fn low_mark(figure: String, low_count: bool) -> String {
    if low_count { figure + "*" } else { figure }
}

/// The metadata test: files per second and p99 of each of its six phases.
fn metadata_grid(figures: &[PhaseFigures]) -> Vec<String> {
    let mut out = vec![format!("{:<18} {:>9} {:>9}", "", "files/s", "p99 ms")];
    out.extend(figures.iter().map(|f| {
        format!(
            "{:<18} {:>9} {:>9}",
            f.label,
            low_mark(count(f.iops.mean), f.low_count()),
            f.p99_ms.map_or("-".into(), |p| ms(p.mean))
        )
    }));
    out
}

/// Which engine the run used and why, in short (Enter shows the full reason): "engine sync (4
/// pread threads): probe 812k vs uring 498k", or per phase when they differ.
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
            short_reason(&first.engine_choice)
        )
    } else {
        let each = phases
            .iter()
            .map(|p| {
                format!(
                    "{} {} ({})",
                    p.label,
                    p.engine.as_str(),
                    short_reason(&p.engine_choice)
                )
            })
            .collect::<Vec<_>>()
            .join(" | ");
        format!("engine per phase: {each}")
    })
}

/// The rows and the verdict once any device has a report: the same table as
/// `disktriage run TARGET TARGET...` prints, fitted to `width`.
pub(crate) fn summary_lines(run: &SeveralRun, width: usize) -> Vec<Line<'static>> {
    if run
        .targets
        .iter()
        .all(|t| t.reports.is_empty() && t.error.is_none())
    {
        return Vec::new();
    }
    let result = run.result();
    let rows = result.rows();
    let verdict = several_report::verdict_of_rows(&rows);
    let ratio = several_report::array_ratio(&rows);
    let mut cells: Vec<Vec<String>> = rows
        .iter()
        .map(|r| several_report::row_cells(r, &verdict, ratio))
        .collect();
    let mut columns = several_report::COLUMNS.to_vec();
    if rows.iter().all(|r| r.role == Role::Target) {
        columns.remove(1);
        for c in &mut cells {
            c.remove(1);
        }
    }
    let mut lines: Vec<Line<'static>> = table::render(&columns, &cells, width)
        .lines()
        .enumerate()
        .map(|(i, l)| {
            if i == 0 {
                Line::from(Span::styled(l.to_string(), theme::header()))
            } else if l.ends_with("SLOWER") || l.ends_with("SLOWER?") || l.ends_with("FAILED") {
                Line::from(Span::styled(l.to_string(), theme::bad()))
            } else {
                Line::from(l.to_string())
            }
        })
        .collect();
    // Why a device failed, where the table says it did (as the CLI's report says it).
    for row in &rows {
        if let Some(e) = &row.error {
            let why = table::wrap(
                &format!("{} FAILED: ", row.name()),
                &crate::model::text::neutralize_controls(e),
                width,
            );
            lines.extend(
                why.lines()
                    .map(|l| Line::from(Span::styled(l.to_string(), theme::bad()))),
            );
        }
    }
    for note in rows
        .iter()
        .filter_map(|r| several_report::low_count_line(r, width))
    {
        lines.extend(
            note.lines()
                .map(|l| Line::from(Span::styled(l.to_string(), theme::warn()))),
        );
    }
    if run.finished {
        for l in table::wrap("Verdict: ", &verdict.sentence(), width).lines() {
            lines.push(Line::from(Span::styled(l.to_string(), theme::title())));
        }
    }
    lines
}
