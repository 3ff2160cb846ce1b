//! The Run screen, the live run: progress, throughput, IOPS and latency p50/p99 over the last
//! `CHART_WINDOW` seconds, and the current / mean / min / max figures. A run on several
//! devices is drawn by `several`. The state is `app::live`'s.

mod header;
mod several;

use ratatui::Frame;
use ratatui::crossterm::event::KeyCode;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Axis, Block, Borders, Chart, Dataset, GraphType, Paragraph};

use super::super::keys::{Action, Binding, Scope, bind};
use super::super::{App, CHART_WINDOW, LiveRun, Screen, SweepRun};
use super::{JobHook, ScreenDef, nothing};
use crate::bench::exec::probe::expected_phase;
use crate::draw::chart::{self as sweep_chart, Drawing};
use crate::draw::cut;
use crate::event::Cmd;
use crate::model::BytesPerSec;
use crate::report::run::chart_time_base;
use crate::report::table::{count, ms, rate};
use crate::theme;
use header::header_lines;

const KEYS: &[Binding] = &[
    bind(
        Scope::On(Screen::Run),
        &[KeyCode::Char('x'), KeyCode::Esc],
        "x or Esc",
        Some("stop"),
        "stop",
        Action::Stop,
    ),
    bind(
        Scope::On(Screen::Run),
        &[KeyCode::Char('r')],
        "r",
        Some("rerun"),
        "rerun",
        Action::Rerun,
    ),
    bind(
        Scope::On(Screen::Run),
        &[KeyCode::Char('c')],
        "c",
        Some("compare"),
        "compare the last two runs",
        Action::Compare,
    ),
    bind(
        Scope::On(Screen::Run),
        &[KeyCode::Char('t')],
        "t",
        Some("temperature"),
        "drive temperature instead of IOPS",
        Action::Temperature,
    ),
];

pub const SCREEN: ScreenDef = ScreenDef {
    title: "Run",
    keys: KEYS,
    act,
    works_now: |app, action| app.works_anywhere(action),
    draw,
    leave: nothing,
    // A sweep's runs are shown here.
    job: Some(JobHook {
        name: crate::flow::sweep_job::NAME,
        on_msg: |app, msg| app.sweep_msg(msg),
    }),
};

/// Stopping and the temperature chart; `r` and `c` are `App::act`'s.
fn act(app: &mut App, action: Action, _: KeyCode) -> Vec<Cmd> {
    match action {
        Action::Stop if app.sweeping() => app.stop_sweep(),
        Action::Stop if app.running() => {
            if let Some(run) = &mut app.run {
                run.stopping = true;
            }
            if let Some(run) = app.several.runs.last_mut() {
                run.stopping = true;
            }
            app.info("stopping: the figures will cover what completed");
            vec![Cmd::StopRun]
        }
        Action::Temperature => {
            app.show_temperature = !app.show_temperature;
            Vec::new()
        }
        _ => Vec::new(),
    }
}

/// A run on several devices has its own drawing (`several`).
fn draw(app: &App, frame: &mut Frame, area: Rect) {
    match app.several_run() {
        Some(r) => several::draw(app, r, frame, area),
        None => draw_one(app, frame, area),
    }
}

/// One device's live run.
fn draw_one(app: &App, frame: &mut Frame, area: Rect) {
    let Some(run) = &app.run else {
        frame.render_widget(
            Paragraph::new("No test has run yet: pick one on the Test screen (2) and press r.")
                .style(theme::dim())
                .block(Block::default().borders(Borders::ALL).title(" Run ")),
            area,
        );
        return;
    };
    // A sweep or CrystalDiskMark run draws its finished phases in place of the latency
    // chart: that chart or grid is what such a run is for.
    let drawing = run.plan.as_ref().and_then(Drawing::of);
    let rest = area.height.saturating_sub(6);
    let (charts_c, lat_c) = match drawing {
        None => (Constraint::Min(6), Constraint::Min(6)),
        // On a small screen the chart needs the rows more than the time charts (the figures
        // still give the current rate).
        Some(Drawing::Sweep) if area.height < 30 => (Constraint::Length(0), Constraint::Min(0)),
        Some(Drawing::Sweep) => (Constraint::Length((rest / 3).max(7)), Constraint::Min(0)),
        Some(Drawing::Cdm) => (
            Constraint::Min(6),
            Constraint::Length(rest.saturating_sub(6).min(11)),
        ),
    };
    // A sweep says where it is on a line of its own.
    let sweep = app.sweep.as_ref().filter(|s| s.active());
    let head_lines = header_lines(app, run, area.width);
    let head_rows = head_lines.len() as u16;
    let figure_lines = numbers(app, run, area.width);
    let [head, gauge, charts, lat, figures] = Layout::vertical([
        Constraint::Length(head_rows + u16::from(sweep.is_some())),
        Constraint::Length(1),
        charts_c,
        lat_c,
        Constraint::Length(figure_lines.len() as u16),
    ])
    .areas(area);
    draw_head(head_lines, head_rows, sweep, frame, head);
    progress(app, run, frame, gauge);
    let series = Series::of(run);
    draw_rate_charts(app, run, &series, frame, charts);
    draw_latency(app, run, drawing, &series, frame, lat);
    crate::draw::lines(&figure_lines, figures);
    frame.render_widget(Paragraph::new(figure_lines), figures);
}

/// The header's lines, then the sweep's progress on a line of its own.
fn draw_head(
    head_lines: Vec<Line<'static>>,
    head_rows: u16,
    sweep: Option<&SweepRun>,
    frame: &mut Frame,
    head: Rect,
) {
    crate::draw::lines(&head_lines, head);
    frame.render_widget(Paragraph::new(head_lines), head);
    if let Some(sw) = sweep {
        let [_, line] =
            Layout::vertical([Constraint::Length(head_rows), Constraint::Length(1)]).areas(head);
        frame.render_widget(
            Paragraph::new(Span::styled(
                cut(
                    &format!(" {}; x stops the sweep", sw.progress()),
                    line.width.into(),
                ),
                theme::warn(),
            )),
            line,
        );
    }
}

/// The charts' series over the last `CHART_WINDOW` seconds of measuring, and their time axis.
struct Series {
    window_start: f64,
    x: [f64; 2],
    rate: Vec<(f64, f64)>,
    iops: Vec<(f64, f64)>,
    p50: Vec<(f64, f64)>,
    p99: Vec<(f64, f64)>,
}

impl Series {
    /// The series of `run`'s points in the window.
    fn of(run: &LiveRun) -> Series {
        let window_start = (run.measured() - CHART_WINDOW).max(0.0);
        let recent: Vec<_> = run
            .points
            .iter()
            .filter(|p| p.end_s >= window_start)
            .collect();
        let rate: Vec<(f64, f64)> = recent
            .iter()
            .map(|p| (p.end_s, BytesPerSec(p.rate()).mb_per_sec()))
            .collect();
        let iops: Vec<(f64, f64)> = recent.iter().map(|p| (p.end_s, p.iops())).collect();
        let p50: Vec<(f64, f64)> = recent
            .iter()
            .filter_map(|p| p.latency().map(|l| (p.end_s, l.p50_ns as f64 / 1e6)))
            .collect();
        let p99: Vec<(f64, f64)> = recent
            .iter()
            .filter_map(|p| p.latency().map(|l| (p.end_s, l.p99_ns as f64 / 1e6)))
            .collect();
        let x = [
            window_start,
            window_start.max(run.measured()).max(window_start + 1.0),
        ];
        Series {
            window_start,
            x,
            rate,
            iops,
            p50,
            p99,
        }
    }
}

/// Throughput on the left; IOPS or the drive's temperature (`t` switches) on the right.
fn draw_rate_charts(app: &App, run: &LiveRun, series: &Series, frame: &mut Frame, charts: Rect) {
    let x = series.x;
    let [left, right] =
        Layout::horizontal([Constraint::Percentage(50), Constraint::Percentage(50)]).areas(charts);
    // A rewrite's interval rates are over the time its writes took in the interval.
    let over = chart_time_base(
        run.job
            .as_ref()
            .map_or(Default::default(), |j| j.time_base()),
    );
    chart(
        frame,
        left,
        app.console,
        &format!(" Throughput MB/s{over} "),
        x,
        &[("MB/s", &series.rate)],
        true,
    );
    if app.show_temperature {
        let temps: Vec<(f64, f64)> = run
            .temps
            .iter()
            .map(|&(t, c)| (t - warmup_offset(run), c as f64))
            .filter(|p| p.0 >= series.window_start)
            .collect();
        let title = if temps.is_empty() {
            " Drive temperature C (not read: see the Test screen) "
        } else {
            " Drive temperature C (t: IOPS) "
        };
        chart(frame, right, app.console, title, x, &[("C", &temps)], false);
    } else {
        chart(
            frame,
            right,
            app.console,
            &format!(" IOPS{over} (t: temperature) "),
            x,
            &[("IOPS", &series.iops)],
            true,
        );
    }
}

/// The latency chart, or in its place the finished phases of a sweep or CrystalDiskMark run.
fn draw_latency(
    app: &App,
    run: &LiveRun,
    drawing: Option<Drawing>,
    series: &Series,
    frame: &mut Frame,
    lat: Rect,
) {
    let x = series.x;
    match drawing {
        Some(d) => {
            // Live: this repeat's finished phases; once done, what Results shows.
            let samples = match app.results.records.get(run.record) {
                Some(r) if run.finished && !r.runs.is_empty() => r.samples(),
                _ => run.done.clone(),
            };
            let plan = run.plan.as_ref();
            sweep_chart::draw(frame, lat, app.console, d, run.test, plan, &samples);
        }
        None => chart(
            frame,
            lat,
            app.console,
            " Latency ms: p99 (upper line), p50 (lower line) ",
            x,
            &[("p50", &series.p50), ("p99", &series.p99)],
            true,
        ),
    }
}

/// Seconds from the run's start (when temperature polling starts) to the measured phase's
/// start (the charts' zero).
fn warmup_offset(run: &LiveRun) -> f64 {
    run.job.as_ref().map_or(0.0, |j| j.warmup.as_secs_f64())
}

/// For a run bounded by a count of I/Os: the I/Os done so far and the count (never 0).
fn ops_share(run: &LiveRun) -> Option<(u64, u64)> {
    let want = run
        .job
        .as_ref()
        .and_then(|j| j.ops_per_worker.map(|n| n * u64::from(j.workers)))
        .filter(|&w| w > 0)?;
    Some((run.points.iter().map(|p| p.ops()).sum(), want))
}

fn progress(app: &App, run: &LiveRun, frame: &mut Frame, area: Rect) {
    let elapsed = app.now.saturating_sub(run.phase_started_at).as_secs_f64();
    // A probing phase takes the longer of its warm-up and the probe before it measures.
    let probes = |phase: usize| run.probes.get(phase).copied().unwrap_or(false);
    let this_phase = run
        .job
        .as_ref()
        .and_then(|j| expected_phase(j, probes(run.phase)));
    let (ratio, label) = match this_phase {
        Some(total) if !run.finished => {
            let total = total.as_secs_f64();
            let done = elapsed.min(total);
            (
                (done / total).clamp(0.0, 1.0),
                format!(
                    "{:.1} / {:.1} s  ETA {}{}",
                    done,
                    total,
                    eta_clock(
                        (total - done).max(0.0) + remaining_phases(run) + remaining_runs(app, run)
                    ),
                    waiting(app, run)
                ),
            )
        }
        // A failed or stopped run keeps its bar where it ended: a full "done" bar over an
        // error is a surprise.
        _ if run.finished && (run.error.is_some() || run.stopping) => {
            let word = if run.error.is_some() {
                "failed"
            } else {
                "stopped"
            };
            let ended = match (run.job.as_ref().and_then(|j| j.time), ops_share(run)) {
                (Some(t), _) if !t.is_zero() => run.measured() / t.as_secs_f64(),
                (_, Some((ops, want))) => ops as f64 / want as f64,
                _ if run.points.is_empty() => 0.0,
                _ => 1.0,
            };
            (ended.clamp(0.0, 1.0), word.to_string())
        }
        _ if run.finished => (1.0, "done".to_string()),
        _ => match ops_share(run) {
            Some((ops, want)) => (
                (ops as f64 / want as f64).clamp(0.0, 1.0),
                format!("{ops} / {want} I/Os  {:.1} s{}", elapsed, waiting(app, run)),
            ),
            None => (0.0, format!("{:.1} s{}", elapsed, waiting(app, run))),
        },
    };
    // The label goes beside the bar: drawn on it, it hid cells and the bar read wrong.
    let label_width = (label.chars().count() as u16 + 1).min(area.width / 2);
    let [bar, text] =
        Layout::horizontal([Constraint::Min(0), Constraint::Length(label_width)]).areas(area);
    // Whole cells only (as the gauge drew it without its unicode eighths).
    let filled = (ratio.clamp(0.0, 1.0) * f64::from(bar.width)).floor() as usize;
    frame.render_widget(
        Paragraph::new(Span::styled("█".repeat(filled), theme::accent())),
        bar,
    );
    let label = format!(" {label}");
    crate::draw::text(&label, text.width.into());
    frame.render_widget(Paragraph::new(label), text);
}

/// "  waiting 7 s" while a measuring run has seen no I/O complete for 2 s or more (a hung
/// disk sends no rate); empty otherwise.
fn waiting(app: &App, run: &LiveRun) -> String {
    let waited = app.now.saturating_sub(run.last_io_at);
    if run.measuring && !run.finished && waited >= std::time::Duration::from_secs(2) {
        format!("  waiting {} s", waited.as_secs())
    } else {
        String::new()
    }
}

/// Whole seconds an ETA shows: rounded up (1.5 s reads 2 s), after rounding to the tenth so
/// float noise (1.0000001 s) still reads 1 s.
fn eta_seconds(seconds: f64) -> u64 {
    if !seconds.is_finite() || seconds <= 0.0 {
        return 0;
    }
    ((seconds * 10.0).round() / 10.0).ceil() as u64
}

/// An ETA as every progress line shows one ("0:48", "1:02:03"), from the whole seconds
/// `eta_seconds` rounds it up to.
fn eta_clock(seconds: f64) -> String {
    crate::draw::clock(std::time::Duration::from_secs(eta_seconds(seconds)))
}

/// Seconds of the phases after the current one, when they are time-bounded.
fn remaining_phases(run: &LiveRun) -> f64 {
    run.plan.as_ref().map_or(0.0, |p| {
        p.phases
            .iter()
            .enumerate()
            .skip(run.phase + 1)
            .map(|(i, ph)| {
                let probes = run.probes.get(i).copied().unwrap_or(false);
                expected_phase(&ph.job, probes).map_or(0.0, |d| d.as_secs_f64())
            })
            .sum()
    })
}

/// Seconds of the runs still to come (repeats, or a sweep's runs), when the plan is
/// time-bounded. They probe nothing: this run's choice is remembered.
fn remaining_runs(app: &App, run: &LiveRun) -> f64 {
    let whole: f64 = run.plan.as_ref().map_or(0.0, |p| {
        p.phases
            .iter()
            .map(|ph| {
                ph.job
                    .time
                    .map_or(0.0, |t| (t + ph.job.warmup).as_secs_f64())
            })
            .sum()
    });
    let runs = match app.sweep.as_ref().filter(|s| s.active()) {
        Some(sw) => sw.steps.len().saturating_sub(sw.at + 1) as f64,
        None => f64::from(run.repeats.saturating_sub(run.repeat)),
    };
    runs * whole
}

fn chart(
    frame: &mut Frame,
    area: Rect,
    console: bool,
    title: &str,
    x: [f64; 2],
    series: &[(&str, &Vec<(f64, f64)>)],
    zero_based: bool,
) {
    let values = || series.iter().flat_map(|(_, d)| d.iter().map(|p| p.1));
    let max_y = values().fold(0.0f64, f64::max);
    // Rates start at zero; a temperature reads better between round numbers around it.
    let (bottom, top) = if zero_based {
        (0.0, nice_ceiling(max_y))
    } else {
        let min_y = values().fold(f64::MAX, f64::min);
        if min_y > max_y {
            (0.0, 1.0)
        } else {
            (
                (min_y / 5.0).floor() * 5.0 - 5.0,
                (max_y / 5.0).ceil() * 5.0 + 5.0,
            )
        }
    };
    let styles = [theme::series_a(), theme::series_b()];
    let datasets: Vec<Dataset> = series
        .iter()
        .zip(styles)
        .map(|((name, data), style)| {
            Dataset::default()
                .name(*name)
                .marker(theme::marker(console))
                .graph_type(GraphType::Line)
                .style(style)
                .data(data)
        })
        .collect();
    let fmt = |v: f64| {
        if v >= 100.0 {
            format!("{v:.0}")
        } else if v >= 1.0 {
            format!("{v:.1}")
        } else {
            format!("{v:.3}")
        }
    };
    crate::draw::title(title, area);
    let chart = Chart::new(datasets)
        .block(
            Block::default()
                .borders(Borders::ALL)
                .title(title.to_string()),
        )
        .hidden_legend_constraints((Constraint::Ratio(0, 1), Constraint::Ratio(0, 1)))
        .x_axis(
            Axis::default()
                .bounds(x)
                .labels([format!("{:.0}s", x[0]), format!("{:.0}s", x[1])]),
        )
        .y_axis(Axis::default().bounds([bottom, top]).labels([
            if bottom == 0.0 {
                "0".to_string()
            } else {
                fmt(bottom)
            },
            fmt(top),
        ]));
    frame.render_widget(chart, area);
}

/// 1, 2 or 5 times a power of ten at or above `v` (axis tops that read well).
fn nice_ceiling(v: f64) -> f64 {
    if v <= 0.0 || !v.is_finite() {
        return 1.0;
    }
    let mag = 10f64.powf(v.log10().floor());
    for m in [1.0, 2.0, 5.0, 10.0] {
        if v <= m * mag {
            return m * mag;
        }
    }
    10.0 * mag
}

/// The figures under the charts (and a failed run's error), wrapped to `width`. While a run
/// goes: the current interval and the means so far. Once finished: what Results shows, so
/// every screen gives the same number for the same run.
fn numbers(app: &App, run: &LiveRun, width: u16) -> Vec<Line<'static>> {
    let s = &run.stats;
    let mb = |b: f64| BytesPerSec(b).mb_per_sec();
    let ms = |ns: f64| ms(ns / 1e6);
    let finished = run
        .finished
        .then(|| app.results.records.get(run.record))
        .flatten()
        .and_then(|r| {
            let figures = r.figures();
            let n = r.runs.len();
            figures
                .into_iter()
                .find(|f| f.label == run.label)
                .map(|f| (f, n))
        });
    // Once finished, min and max cover every repeat (`bench::analysis::figures`); while
    // running, this repeat so far.
    let min_max = match &finished {
        Some((f, _)) => f.mbps_min_max,
        None => (s.count > 0).then(|| (mb(s.min_rate), mb(s.max_rate))),
    };
    let minmax = min_max.map_or(String::new(), |(lo, hi)| {
        format!(" min {} max {}", rate(lo), rate(hi))
    });
    let (l1, l2) = match &finished {
        Some((f, n)) => {
            let over = if *n > 1 {
                format!(" ({n} repeats)")
            } else {
                String::new()
            };
            let l1 = if f.rates_measured() {
                let mut spans = vec![
                    Span::styled(" MB/s ", theme::dim()),
                    Span::raw(format!("mean {}{minmax}", rate(f.mbps.mean))),
                    Span::styled("  IOPS ", theme::dim()),
                    Span::raw(format!("mean {}{over}", count(f.iops.mean))),
                ];
                // A rate over few I/Os is shown, as dd shows one, and said to be thin.
                if let Some(note) = f.low_count_note() {
                    spans.push(Span::styled(format!("  ({note})"), theme::warn()));
                }
                Line::from(spans)
            } else {
                Line::from(Span::styled(
                    format!(" {}{over}: no I/O in a measured time", f.time_base()),
                    theme::warn(),
                ))
            };
            let lat = |name: &str, st: Option<crate::app::Stat>| {
                st.map(|x| format!("{name} {}", crate::report::table::ms(x.mean)))
            };
            let parts: Vec<String> = [
                lat("mean", f.mean_ms),
                lat("p50", f.p50_ms),
                lat("p99", f.p99_ms),
                lat("p99.9", f.p999_ms),
            ]
            .into_iter()
            .flatten()
            .collect();
            let l2 = Line::from(vec![
                Span::styled(" ms ", theme::dim()),
                Span::raw(if parts.is_empty() {
                    "-".to_string()
                } else {
                    parts.join(" ")
                }),
                // A run of several phases shows its last phase's figures; Results has all.
                Span::styled(
                    if run.phases > 1 {
                        "  last phase"
                    } else {
                        "  whole run"
                    },
                    theme::dim(),
                ),
            ]);
            (l1, l2)
        }
        None => {
            let cur = run.points.back();
            let l1 = Line::from(vec![
                Span::styled(" MB/s ", theme::dim()),
                Span::raw(format!(
                    "now {} mean {}{minmax}",
                    rate(cur.map_or(0.0, |p| mb(p.rate()))),
                    rate(mb(s.mean_rate())),
                )),
                Span::styled("  IOPS ", theme::dim()),
                Span::raw(format!(
                    "now {} mean {}",
                    count(cur.map_or(0.0, |p| p.iops())),
                    count(s.mean_iops())
                )),
            ]);
            let lat = cur.and_then(|p| p.latency());
            let l2 = Line::from(vec![
                Span::styled(" ms ", theme::dim()),
                Span::raw(lat.map_or("-".into(), |l| {
                    format!(
                        "p50 {} p99 {} p99.9 {} max {}",
                        ms(l.p50_ns as f64),
                        ms(l.p99_ns as f64),
                        ms(l.p999_ns as f64),
                        ms(l.max_ns as f64)
                    )
                })),
                Span::styled("  p99 min/max ", theme::dim()),
                Span::raw(format!(
                    "{}/{}",
                    ms(s.min_p99_ns as f64),
                    ms(s.max_p99_ns as f64)
                )),
            ]);
            (l1, l2)
        }
    };
    let l2 = match &run.error {
        Some(e) => Line::from(Span::styled(format!(" ERROR: {e}"), theme::bad())),
        None => l2,
    };
    crate::draw::wrap(vec![l1, l2], width.into())
}

#[cfg(test)]
mod tests {
    use super::{eta_clock, eta_seconds, nice_ceiling};

    #[test]
    fn an_eta_rounds_up() {
        assert_eq!(eta_seconds(1.5), 2);
        assert_eq!(eta_seconds(2.5), 3);
        assert_eq!(eta_seconds(1.4999999), 2);
        assert_eq!(eta_seconds(1.0000001), 1);
        assert_eq!(eta_seconds(0.0), 0);
        assert_eq!(eta_seconds(f64::NAN), 0);
        assert_eq!(eta_seconds(-3.0), 0);
        assert_eq!(eta_clock(47.2), "0:48");
        assert_eq!(eta_clock(3599.5), "1:00:00");
    }

    #[test]
    fn axis_tops() {
        assert_eq!(nice_ceiling(0.0), 1.0);
        assert_eq!(nice_ceiling(3.2), 5.0);
        assert_eq!(nice_ceiling(1234.0), 2000.0);
        assert_eq!(nice_ceiling(0.042), 0.05);
        assert_eq!(nice_ceiling(10.0), 10.0);
    }
}
