//! Two runs side by side: each figure, the difference in percent, and whether it is larger than
//! the run-to-run noise (the spread of each run's repeats).

use ratatui::Frame;
use ratatui::crossterm::event::KeyCode;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Cell, Paragraph, Row, Table};

use super::super::keys::{self, Action, Binding, Scope, UP_DOWN, bind};
use super::super::records::{Delta, Significance, delta};
use super::super::{App, PhaseFigures, RunRecord, Screen, Stat, scroll};
use super::{ScreenDef, nothing};
use crate::model::KernelWriteCache;
use crate::model::cache::drive_cache_shown;
use crate::model::text::neutralize_controls;
use crate::report::table::{count, ms, rate};
use crate::theme;

const KEYS: &[Binding] = &[
    bind(
        Scope::On(Screen::Compare),
        UP_DOWN,
        "Up/Down",
        Some("scroll"),
        "scroll",
        Action::Move,
    ),
    bind(
        Scope::On(Screen::Compare),
        &[KeyCode::PageUp, KeyCode::PageDown, KeyCode::Char(' ')],
        "PageUp/PageDown",
        None,
        "scroll a page",
        Action::Page,
    ),
    bind(
        Scope::On(Screen::Compare),
        &[KeyCode::Home],
        "Home",
        None,
        "top",
        Action::Ends,
    ),
    bind(
        Scope::On(Screen::Compare),
        &[KeyCode::Esc],
        "Esc",
        Some("back"),
        "back to Results",
        Action::Back,
    ),
    bind(
        Scope::On(Screen::Compare),
        &[KeyCode::Char('r')],
        "r",
        Some("rerun"),
        "rerun; noise is the spread of each run's repeats",
        Action::Rerun,
    ),
];

pub const SCREEN: ScreenDef = ScreenDef {
    title: "Compare",
    keys: KEYS,
    act,
    works_now,
    draw,
    leave: nothing,
    job: None,
};

/// `r` reruns (`App::act`) once a run has ended and none is running.
fn works_now(app: &App, action: Action) -> bool {
    app.works_anywhere(action)
}

/// Scrolling and going back; `r` is `App::act`'s (every screen's rerun).
fn act(app: &mut App, action: Action, code: KeyCode) -> Vec<crate::event::Cmd> {
    let (s, dir) = (app.results.compare_scroll, keys::direction(code));
    match action {
        Action::Move => app.results.compare_scroll = scroll(s, dir, 1),
        Action::Page => app.results.compare_scroll = scroll(s, dir, 10),
        Action::Ends => app.results.compare_scroll = 0,
        Action::Back => app.screen = Screen::Results,
        _ => {}
    }
    Vec::new()
}

fn draw(app: &App, frame: &mut Frame, area: Rect) {
    let Some((a, b)) = app.comparison() else {
        draw_needs_two(frame, area);
        return;
    };
    let (ra, rb) = (&app.results.records[a], &app.results.records[b]);
    let body = draw_head(frame, area, ra, rb);
    let fa = ra.figures();
    let fb = rb.figures();
    let rows = figure_rows(&fa, &fb);
    draw_figures(frame, body, rows, &fa, app.results.compare_scroll);
}

/// What to do when there are not two finished runs to compare.
fn draw_needs_two(frame: &mut Frame, area: Rect) {
    frame.render_widget(
        Paragraph::new(
            "Comparing needs two finished runs. Run a test, switch the scheduler (s), rerun \
             it (R), then come back here (or mark two runs with Space on Results).",
        )
        .style(theme::dim())
        .wrap(ratatui::widgets::Wrap { trim: true })
        .block(Block::default().borders(Borders::ALL).title(" Compare ")),
        area,
    );
}

/// Draws the box naming runs A and B and what changed between them; returns the area below.
fn draw_head(frame: &mut Frame, area: Rect, ra: &RunRecord, rb: &RunRecord) -> Rect {
    let inner = (area.width as usize).saturating_sub(3).max(1);
    let what_lines = changed_lines(&changes(ra, rb), inner);
    let mut head_lines = vec![run_line("A", ra, inner), run_line("B", rb, inner)];
    head_lines.extend(
        what_lines
            .into_iter()
            .map(|l| Line::from(Span::styled(format!(" {l}"), theme::accent()))),
    );
    // A run's parameters longer than the box take a second row.
    let head_lines = crate::draw::wrap(head_lines, area.width.saturating_sub(2).into());
    let [head, body] = Layout::vertical([
        Constraint::Length(head_lines.len() as u16 + 2),
        Constraint::Min(0),
    ])
    .areas(area);
    crate::draw::lines(
        &head_lines,
        Block::default().borders(Borders::ALL).inner(head),
    );
    frame.render_widget(
        Paragraph::new(head_lines).block(
            Block::default()
                .borders(Borders::ALL)
                .title(" Compare A -> B "),
        ),
        head,
    );
    body
}

/// One run's line of the head: its tag and number, then where and how it ran (`inner` is the
/// box's width inside).
fn run_line(tag: &str, r: &RunRecord, inner: usize) -> Line<'static> {
    let number = r.number();
    let head = format!(" {tag} #{number} ");
    let mut text = neutralize_controls(&format!(
        "{} {}, sched {}, cache {}/{}, {} x{}",
        r.device,
        r.test.id(),
        r.scheduler.clone().unwrap_or_else(|| "-".into()),
        drive_cache_shown(r.drive_cache.as_deref()),
        KernelWriteCache::short_or_unknown(r.kernel_cache),
        r.io_path().unwrap_or("?"),
        r.repeats_done(),
    ));
    // A past run (its number says h#) gives its date where the line has room for it.
    if let Some(p) = &r.past {
        let dated = format!(", past run of {}", p.when());
        let room = inner.saturating_sub(head.chars().count() + text.chars().count());
        if dated.chars().count() <= room {
            text.push_str(&dated);
        }
    }
    Line::from(vec![Span::styled(head, theme::title()), Span::raw(text)])
}

/// The head's lines on what changed (`changes`), fitted to `inner` columns; or that nothing
/// did.
fn changed_lines(changed: &[String], inner: usize) -> Vec<String> {
    if changed.is_empty() {
        return crate::app::keys::wrap_words(
            "nothing changed (scheduler, drive cache, engine, I/O path, parameters): the \
             difference is run-to-run noise",
            inner,
        );
    }
    // Each change stays on one line.
    let mut lines: Vec<String> = vec!["changed:".into()];
    for (i, c) in changed.iter().enumerate() {
        let piece = if i + 1 < changed.len() {
            format!("{c};")
        } else {
            c.clone()
        };
        let last = lines.last_mut().map(|l| (l.chars().count(), l));
        match last {
            Some((n, l)) if n + 1 + piece.chars().count() <= inner => {
                l.push(' ');
                l.push_str(&piece);
            }
            _ => lines.push(format!("  {piece}")),
        }
    }
    lines
}

/// The table's rows: for each phase both runs have, its figures side by side.
fn figure_rows(fa: &[PhaseFigures], fb: &[PhaseFigures]) -> Vec<Row<'static>> {
    let mut rows = Vec::new();
    for pa in fa {
        let Some(pb) = fb.iter().find(|p| p.label == pa.label) else {
            continue;
        };
        if fa.len() > 1 {
            rows.push(Row::new(vec![
                Cell::from(pa.label.clone()).style(theme::title()),
            ]));
        }
        phase_rows(pa, pb, &mut rows);
    }
    rows
}

/// One phase's rows: rates (or that none were timed), latencies, and a thin count's mark.
fn phase_rows(pa: &PhaseFigures, pb: &PhaseFigures, rows: &mut Vec<Row<'static>>) {
    let rates = pa.rates_measured() && pb.rates_measured();
    if !rates {
        rows.push(Row::new(vec![
            Cell::from("MB/s, IOPS"),
            Cell::from("-"),
            Cell::from("-"),
            Cell::from(""),
            Cell::from(""),
            Cell::from("no I/O timed").style(theme::dim()),
        ]));
    }
    // The same number formats as Results and the Run screen.
    let mut metric = |name: &str,
                      sa: Option<Stat>,
                      sb: Option<Stat>,
                      higher_better: bool,
                      fmt: fn(f64) -> String| {
        if let (Some(x), Some(y)) = (sa, sb) {
            rows.push(delta_row(name, &delta(x, y), higher_better, fmt));
        }
    };
    if rates {
        metric("MB/s", Some(pa.mbps), Some(pb.mbps), true, rate);
        metric("IOPS", Some(pa.iops), Some(pb.iops), true, count);
    }
    metric("lat mean ms", pa.mean_ms, pb.mean_ms, false, ms);
    metric("lat p50 ms", pa.p50_ms, pb.p50_ms, false, ms);
    metric("lat p99 ms", pa.p99_ms, pb.p99_ms, false, ms);
    metric("lat p99.9 ms", pa.p999_ms, pb.p999_ms, false, ms);
    // A rate over few I/Os is compared as any other, and said to be thin.
    if rates && (pa.low_count() || pb.low_count()) {
        let side = |f: &PhaseFigures| Cell::from(if f.low_count() { "*" } else { "" });
        rows.push(Row::new(vec![
            Cell::from("MB/s, IOPS"),
            side(pa),
            side(pb),
            Cell::from(""),
            Cell::from(""),
            Cell::from("* low count").style(theme::warn()),
        ]));
    }
}

/// Draws the figures' table in `body`, scrolled to `scroll`, or that the runs share no phase.
fn draw_figures(
    frame: &mut Frame,
    body: Rect,
    rows: Vec<Row<'static>>,
    fa: &[PhaseFigures],
    scroll: u16,
) {
    let block = |title: String| Block::default().borders(Borders::ALL).title(title);
    let noise = " noise = spread of each run's repeats (repeats >= 2 on the Test screen) ";
    if rows.is_empty() {
        frame.render_widget(
            Paragraph::new(
                "the two runs have no phase in common: compare runs of the same test (mark \
                 two with Space on Results)",
            )
            .wrap(ratatui::widgets::Wrap { trim: true })
            .block(block(noise.to_string())),
            body,
        );
        return;
    }
    // The header and border take three lines.
    let visible = (body.height as usize).saturating_sub(3).max(1);
    let total = rows.len();
    let offset = (scroll as usize).min(total.saturating_sub(visible));
    let title = if total > visible {
        format!(
            " rows {}-{} of {total}, Up/Down/PgDn scroll; noise = spread of the repeats ",
            offset + 1,
            (offset + visible).min(total)
        )
    } else {
        noise.to_string()
    };
    let rows: Vec<Row> = rows.into_iter().skip(offset).collect();
    // Phase labels ("SEQ128K Q32T1 write", "large sequential QD32") are never cut.
    let label_w = fa
        .iter()
        .map(|f| f.label.chars().count())
        .max()
        .unwrap_or(0)
        .clamp(13, 22) as u16;
    if fa.len() > 1 {
        for f in fa {
            crate::draw::text(&f.label, label_w.into());
        }
    }
    let table = Table::new(
        rows,
        [
            Constraint::Length(label_w),
            Constraint::Length(10),
            Constraint::Length(10),
            Constraint::Length(9),
            Constraint::Length(8),
            Constraint::Min(14),
        ],
    )
    .header(Row::new(["", "A", "B", "B vs A", "noise", "verdict"]).style(theme::header()))
    .column_spacing(1)
    .block(block(title));
    frame.render_widget(table, body);
}

fn delta_row(name: &str, d: &Delta, higher_better: bool, fmt: fn(f64) -> String) -> Row<'static> {
    let better = if higher_better {
        d.pct > 0.0
    } else {
        d.pct < 0.0
    };
    let (verdict, style) = match d.significance {
        Significance::Significant if better => ("better", theme::good()),
        Significance::Significant => ("worse", theme::bad()),
        Significance::WithinNoise => ("within noise", theme::dim()),
        Significance::NoiseUnknown => ("noise unknown", theme::dim()),
    };
    Row::new(vec![
        Cell::from(name.to_string()),
        Cell::from(fmt(d.a)),
        Cell::from(fmt(d.b)),
        Cell::from(format!("{:+.1}%", d.pct)),
        Cell::from(d.noise_pct.map_or("-".into(), |n| format!("{n:.1}%"))),
        Cell::from(verdict).style(style),
    ])
}

/// What differs between two records' runs, "what A -> B" each: the device, test and
/// parameters, scheduler, drive cache, kernel flush policy, engine and I/O path.
pub(crate) fn changes(a: &RunRecord, b: &RunRecord) -> Vec<String> {
    let mut out = Vec::new();
    let mut differ = |what: &str, x: Option<String>, y: Option<String>| {
        if x != y {
            let show = |v: Option<String>| v.unwrap_or_else(|| "?".into());
            out.push(format!("{what}{} -> {}", show(x), show(y)));
        }
    };
    differ("device ", Some(a.device.clone()), Some(b.device.clone()));
    differ(
        "test ",
        Some(a.test.id().to_string()),
        Some(b.test.id().to_string()),
    );
    differ(
        "parameters ",
        Some(a.params.clone()),
        Some(b.params.clone()),
    );
    differ("scheduler ", a.scheduler.clone(), b.scheduler.clone());
    // A cache not known on one side (not read, or a record of an older version) is no change.
    if a.drive_cache.is_some() && b.drive_cache.is_some() {
        differ("drive cache ", a.drive_cache.clone(), b.drive_cache.clone());
    }
    differ(
        "kernel flush policy ",
        a.kernel_cache.map(|c| c.as_str().to_string()),
        b.kernel_cache.map(|c| c.as_str().to_string()),
    );
    differ("engine ", a.engine(), b.engine());
    // A rewrite's rates are over its writes' time; an older record (or a destructive write
    // test) rated the same bytes over the whole phase.
    let base = |r: &RunRecord| Some(r.time_base().unwrap_or_else(|| "elapsed".into()));
    differ("MB/s and IOPS over ", base(a), base(b));
    differ(
        "",
        a.io_path().map(str::to_string),
        b.io_path().map(str::to_string),
    );
    out
}
