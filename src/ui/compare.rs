//! Two runs side by side: each figure, the difference in percent, and whether it is larger than
//! the run-to-run noise (the spread of each run's repeats).

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Cell, Paragraph, Row, Table};

use super::results::cache_short;
use super::theme;
use crate::app::records::{Delta, Verdict, delta};
use crate::app::{App, RunRecord, Stat};

pub fn render(app: &App, frame: &mut Frame, area: Rect) {
    let Some((a, b)) = app.comparison() else {
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
        return;
    };
    let (ra, rb) = (&app.records[a], &app.records[b]);
    let [head, body] = Layout::vertical([Constraint::Length(4), Constraint::Min(0)]).areas(area);
    let who = |tag: &str, r: &RunRecord| {
        Line::from(vec![
            Span::styled(format!(" {tag} #{} ", r.id + 1), theme::title()),
            Span::raw(format!(
                "{} {} sched {} cache {}/{} x{}: {}",
                r.device,
                r.test.id(),
                r.scheduler.clone().unwrap_or_else(|| "-".into()),
                r.drive_cache.clone().unwrap_or_else(|| "-".into()),
                cache_short(r.kernel_cache),
                r.runs.len(),
                r.params
            )),
        ])
    };
    frame.render_widget(
        Paragraph::new(vec![who("A", ra), who("B", rb)]).block(
            Block::default()
                .borders(Borders::ALL)
                .title(" Compare A -> B "),
        ),
        head,
    );

    let fa = ra.figures();
    let fb = rb.figures();
    let mut rows = Vec::new();
    for pa in &fa {
        let Some(pb) = fb.iter().find(|p| p.label == pa.label) else {
            continue;
        };
        if fa.len() > 1 {
            rows.push(Row::new(vec![
                Cell::from(pa.label.clone()).style(theme::title()),
            ]));
        }
        let mut metric = |name: &str, sa: Option<Stat>, sb: Option<Stat>, higher_better: bool| {
            if let (Some(x), Some(y)) = (sa, sb) {
                rows.push(delta_row(name, &delta(x, y), higher_better));
            }
        };
        metric("MB/s", Some(pa.mbps), Some(pb.mbps), true);
        metric("IOPS", Some(pa.iops), Some(pb.iops), true);
        metric("lat mean ms", pa.mean_ms, pb.mean_ms, false);
        metric("lat p50 ms", pa.p50_ms, pb.p50_ms, false);
        metric("lat p99 ms", pa.p99_ms, pb.p99_ms, false);
        metric("lat p99.9 ms", pa.p999_ms, pb.p999_ms, false);
    }
    if rows.is_empty() {
        rows.push(Row::new(vec![Cell::from(
            "the two runs have no phase in common",
        )]));
    }
    let table = Table::new(
        rows,
        [
            Constraint::Length(13),
            Constraint::Length(11),
            Constraint::Length(11),
            Constraint::Length(9),
            Constraint::Length(8),
            Constraint::Min(14),
        ],
    )
    .header(Row::new(["", "A", "B", "B vs A", "noise", "verdict"]).style(theme::header()))
    .column_spacing(1)
    .block(
        Block::default()
            .borders(Borders::ALL)
            .title(" noise = spread of each run's repeats (repeats >= 2 on the Test screen) "),
    );
    frame.render_widget(table, body);
}

fn fmt(v: f64) -> String {
    if v >= 1000.0 {
        format!("{v:.0}")
    } else if v >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.3}")
    }
}

fn delta_row(name: &str, d: &Delta, higher_better: bool) -> Row<'static> {
    let better = if higher_better {
        d.pct > 0.0
    } else {
        d.pct < 0.0
    };
    let (verdict, style) = match d.verdict {
        Verdict::Significant if better => ("better", theme::good()),
        Verdict::Significant => ("worse", theme::bad()),
        Verdict::WithinNoise => ("within noise", theme::dim()),
        Verdict::NoiseUnknown => ("noise unknown", theme::dim()),
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
