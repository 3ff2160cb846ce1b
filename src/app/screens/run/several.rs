//! The Run screen of a run on several devices: one throughput line and live figure per device
//! (on one scale, so the slow device reads low at a glance), then the CLI's rows and verdict
//! (`report::several`).

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::symbols;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph, Sparkline};

use super::super::super::App;
use super::super::super::several::{SeveralRun, TargetProgress, TargetState};
use super::super::results::summary_lines;
use crate::bench::analysis::several_disks::Role;
use crate::report::table::rate;
use crate::theme;

/// The Run screen for `run`.
pub(super) fn draw(app: &App, run: &SeveralRun, frame: &mut Frame, area: Rect) {
    let title = title(run);
    crate::draw::title(&title, area);
    let block = Block::default()
        .borders(Borders::ALL)
        .title(Span::styled(title, theme::title()));
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let summary = summary_lines(run, inner.width as usize);
    let n = run.targets.len() as u16;
    // Each device gets two rows of line when they fit beside the summary, else one.
    let free = inner.height.saturating_sub(1 + summary.len() as u16);
    let per = if free >= 2 * n { 2 } else { 1 };
    let mut constraints = vec![Constraint::Length(1)];
    constraints.extend((0..n).map(|_| Constraint::Length(per)));
    constraints.push(Constraint::Min(0));
    let areas = Layout::vertical(constraints).split(inner);
    let state = state_line(app, run);
    crate::draw::lines(std::slice::from_ref(&state), areas[0]);
    frame.render_widget(Paragraph::new(state), areas[0]);
    let scale = run
        .targets
        .iter()
        .flat_map(|t| t.line.iter().copied())
        .fold(0.0_f64, f64::max)
        .max(1.0);
    // Once a device is done its figure is its report's, as the table below and Results show.
    let rows = run.result().rows();
    for (i, t) in run.targets.iter().enumerate() {
        let [name_area, line_area, figure_area] = Layout::horizontal([
            Constraint::Length(14),
            Constraint::Min(10),
            // The progress and ETA need room only while the run goes.
            Constraint::Length(if run.is_active() { FIGURE_WIDTH } else { 22 }),
        ])
        .areas(areas[1 + i]);
        let role = match t.role {
            Role::Array => " (array)",
            _ => "",
        };
        let name = format!("{}{role}", t.device);
        crate::draw::text(&name, name_area.width.into());
        frame.render_widget(Paragraph::new(name), name_area);
        let width = line_area.width as usize;
        let skip = t.line.len().saturating_sub(width);
        // The sparkline takes integers: tenths of MB/s keep small rates visible.
        let data: Vec<u64> = t
            .line
            .iter()
            .skip(skip)
            .map(|m| (m * 10.0).round() as u64)
            .collect();
        let bars = if app.console {
            symbols::bar::THREE_LEVELS
        } else {
            symbols::bar::NINE_LEVELS
        };
        frame.render_widget(
            Sparkline::default()
                .data(&data)
                .max((scale * 10.0).round() as u64)
                .bar_set(bars)
                .style(theme::accent()),
            line_area,
        );
        let done = rows
            .get(i)
            .and_then(|r| r.mbps)
            .filter(|_| t.state == TargetState::Done);
        let low = rows.get(i).is_some_and(|r| r.low_count);
        let (figure, style) = match (t.state, t.live_mbps()) {
            (TargetState::Failed, _) => ("FAILED".to_string(), theme::bad()),
            (TargetState::Done, _) if done.is_some() => (
                format!(
                    "{} MB/s{}",
                    rate(done.map_or(0.0, |s| s.mean)),
                    if low { "*" } else { "" }
                ),
                theme::title(),
            ),
            (TargetState::Waiting, _) if run.is_active() => ("waiting".into(), theme::dim()),
            (_, Some(m)) => (format!("{} MB/s", rate(m)), theme::title()),
            (TargetState::Running, None) => ("warming up".into(), theme::dim()),
            _ => ("-".into(), theme::dim()),
        };
        // Progress over all its repeats, until it ends.
        let how_far = t
            .progress(run.repeats, app.now)
            .filter(|_| run.is_active() && t.state != TargetState::Failed)
            .map(progress_text)
            .unwrap_or_default();
        let line = Line::from(vec![
            Span::styled(format!(" {figure}"), style),
            Span::styled(how_far, theme::dim()),
        ]);
        crate::draw::lines(std::slice::from_ref(&line), figure_area);
        frame.render_widget(Paragraph::new(line), figure_area);
    }
    crate::draw::lines(&summary, areas[areas.len() - 1]);
    frame.render_widget(Paragraph::new(summary), areas[areas.len() - 1]);
}

/// Columns of a device's figures: " 9999.9 MB/s*  100 %  ETA 9:59:59".
const FIGURE_WIDTH: u16 = 33;

/// "  45 %  ETA 0:12": the share done and the time to go (`run::eta_clock`).
fn progress_text(p: TargetProgress) -> String {
    let pct = (p.ratio * 100.0).floor() as u64;
    match p.eta_s {
        Some(eta) => format!("  {pct} %  ETA {}", super::eta_clock(eta)),
        None => format!("  {pct} %"),
    }
}

fn title(run: &SeveralRun) -> String {
    let how = if run.targets.iter().any(|t| t.role == Role::Array) {
        "the array, then its members"
    } else {
        "all at once"
    };
    let repeat = if run.repeats > 1 {
        format!(", repeat {}/{}", run.repeat, run.repeats)
    } else {
        String::new()
    };
    format!(
        " Run: {} on {} devices, {how}{repeat} ",
        run.test,
        run.targets.len()
    )
}

fn state_line(app: &App, run: &SeveralRun) -> Line<'static> {
    let elapsed = app.now.saturating_sub(run.started_at).as_secs_f64();
    if run.finished {
        let word = if run.stopping { "stopped" } else { "finished" };
        return Line::from(Span::styled(
            format!("{word}; r runs it again, 4 shows each device's record"),
            theme::dim(),
        ));
    }
    let word = if run.stopping { "stopping" } else { "running" };
    Line::from(vec![
        Span::styled(word.to_string(), theme::warn()),
        Span::raw(format!(" {elapsed:.0} s; MB/s of each device, one scale")),
    ])
}
