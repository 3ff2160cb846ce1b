//! The surface scan screen (`b` on Devices). The job (`flow::scan::ScanJob`) reads the device
//! read-only, so a mounted or held device is allowed.
//!
//! While it runs: the block map (one cell per span, its worst bucket's glyph and colour:
//! `theme`), the bucket counts, throughput against position (a rotating disk's zone curve),
//! position and ETA. After the end: the unreadable, slow and TIME ranges in bytes and LBAs;
//! `h` opens the same disk's Health view.

use std::path::PathBuf;
use std::time::Duration;

use ratatui::Frame;
use ratatui::crossterm::event::KeyCode;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Style};
use ratatui::text::{Line, Span as TextSpan};
use ratatui::widgets::{Axis, Block, Borders, Chart, Dataset, GraphType, Paragraph, Wrap};

use super::super::keys::{Action, Binding, Scope};
use super::super::{App, Screen};
use super::{JobHook, ScreenDef};
use crate::draw;
use crate::event::{Cmd, JobMsg, JobOrder, ScanUpdate};
use crate::flow::scan::{self as job, ScanJob, ScanMsg};
use crate::model::Bytes;
use crate::report::scan::{errno_name, lba_range};
use crate::scan::buckets::Bucket;
use crate::scan::engine::End;
use crate::theme;

/// Where the scan is.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Phase {
    /// No scan this session.
    #[default]
    Idle,
    /// Asked for; the device is being opened and checked.
    Starting,
    Running,
    /// Stop asked for; the worker ends after the read in flight.
    Stopping,
    /// Ended (finished, stopped or device gone: `ScanUpdate::end`).
    Ended,
    /// Did not start: why.
    Refused(String),
}

/// The screen's state.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ScanScreen {
    /// The device scanned (kernel name) and its path.
    pub device: Option<String>,
    pub path: Option<PathBuf>,
    /// The device as it was when the scan started (`h` refuses another under the name).
    pub chosen: Option<crate::model::ChosenDevice>,
    pub phase: Phase,
    /// The latest news from the worker.
    pub last: Option<Box<ScanUpdate>>,
    /// The app's clock when it came: while the scan runs, the clock and a read's wait run on
    /// from there with the app's ticks (a hung read sends no news).
    pub received: std::time::Duration,
    /// The first row of the range list shown.
    pub scroll: u16,
}

impl ScanScreen {
    /// A scan is under way (stopping included: its worker still reads).
    pub fn running(&self) -> bool {
        matches!(
            self.phase,
            Phase::Starting | Phase::Running | Phase::Stopping
        )
    }
}

/// The screen's rows of the key table.
const KEYS: &[Binding] = &[
    Binding {
        scope: Scope::On(Screen::Scan),
        keys: &[KeyCode::Char('x')],
        names: "x",
        label: Some("stop"),
        help: "stop the scan (it ends with what it read)",
        action: Action::Stop,
    },
    Binding {
        scope: Scope::On(Screen::Scan),
        keys: &[KeyCode::Char('h')],
        names: "h",
        label: Some("health"),
        help: "the same disk's health: SMART, error log",
        action: Action::ReadSmart,
    },
    Binding {
        scope: Scope::On(Screen::Scan),
        keys: &[
            KeyCode::Up,
            KeyCode::Char('k'),
            KeyCode::Down,
            KeyCode::Char('j'),
        ],
        names: "Up/Down",
        label: None,
        help: "scroll the ranges",
        action: Action::Move,
    },
    Binding {
        scope: Scope::On(Screen::Scan),
        keys: &[KeyCode::PageUp, KeyCode::PageDown],
        names: "PageUp/PageDown",
        label: None,
        help: "scroll a page",
        action: Action::Page,
    },
    Binding {
        scope: Scope::On(Screen::Scan),
        keys: &[KeyCode::Esc],
        names: "Esc",
        label: Some("back"),
        help: "back to Devices (stops a running scan)",
        action: Action::Back,
    },
];

/// The registry entry.
pub const SCREEN: ScreenDef = ScreenDef {
    title: "Scan",
    keys: KEYS,
    act,
    works_now,
    draw,
    leave,
    job: Some(JobHook {
        name: job::NAME,
        on_msg,
    }),
};

/// The scan job's news.
fn on_msg(app: &mut App, msg: JobMsg) -> Vec<Cmd> {
    match msg.take::<ScanMsg>() {
        Ok(ScanMsg::Update(update)) => app.scan_update(*update),
        Ok(ScanMsg::Refused(why)) => {
            app.scan_refused(why);
            Vec::new()
        }
        Err(_) => Vec::new(),
    }
}

fn works_now(app: &App, action: Action) -> bool {
    let s = &app.screens.scan;
    match action {
        Action::Stop => matches!(s.phase, Phase::Starting | Phase::Running),
        Action::ReadSmart => !s.running() && s.device.is_some(),
        _ => true,
    }
}

fn act(app: &mut App, action: Action, code: KeyCode) -> Vec<Cmd> {
    let dir = super::super::keys::direction(code);
    match action {
        Action::Stop => return app.stop_scan(),
        // `leave` stops a running scan.
        Action::Back => app.screen = Screen::Devices,
        Action::ReadSmart => {
            if app.screens.scan.running() {
                app.info("the scan still runs: x stops it, then h reads the disk's health");
                return Vec::new();
            }
            if let Some(device) = app.screens.scan.device.clone() {
                let chosen = app.screens.scan.chosen.clone();
                return app.open_health_of(device, chosen.as_ref());
            }
        }
        Action::Move => {
            let s = &mut app.screens.scan;
            s.scroll = super::super::scroll(s.scroll, dir, 1).min(range_count(s) as u16);
        }
        Action::Page => {
            let s = &mut app.screens.scan;
            s.scroll = super::super::scroll(s.scroll, dir, 10).min(range_count(s) as u16);
        }
        _ => {}
    }
    Vec::new()
}

/// Leaving the screen stops a running scan: a scan nobody watches is not left reading.
fn leave(app: &mut App) -> Vec<Cmd> {
    if matches!(app.screens.scan.phase, Phase::Starting | Phase::Running) {
        return app.stop_scan();
    }
    Vec::new()
}

fn range_count(s: &ScanScreen) -> usize {
    s.last
        .as_ref()
        .map_or(0, |u| u.errors.len() + u.slow.len() + u.timeouts.len())
}

impl App {
    /// Opens the scan screen on `device` and starts its scan, or shows the one running.
    pub(in crate::app) fn open_scan(&mut self, device: String, path: PathBuf) -> Vec<Cmd> {
        if self.running() {
            // Each would measure the other, and a write test would change what is read.
            self.error("a test is running (x on Run stops it): no scan meanwhile");
            return Vec::new();
        }
        self.screen = Screen::Scan;
        let s = &mut self.screens.scan;
        if s.running() {
            let other = s.device.clone().unwrap_or_default();
            self.info(format!(
                "a scan of {other} runs: x stops it before another starts"
            ));
            return Vec::new();
        }
        let chosen = self.devices.chosen(&device);
        let s = &mut self.screens.scan;
        *s = ScanScreen {
            device: Some(device.clone()),
            path: Some(path.clone()),
            chosen,
            phase: Phase::Starting,
            last: None,
            received: self.now,
            scroll: 0,
        };
        self.info(format!(
            "{device}: surface scan, read-only (nothing is written)"
        ));
        vec![Cmd::StartJob(JobOrder::new(ScanJob {
            device,
            path,
            chosen: None,
        }))]
    }

    fn stop_scan(&mut self) -> Vec<Cmd> {
        let s = &mut self.screens.scan;
        if !matches!(s.phase, Phase::Starting | Phase::Running) {
            return Vec::new();
        }
        s.phase = Phase::Stopping;
        self.info("stopping the scan: it ends with what it read");
        vec![Cmd::StopJob(job::NAME)]
    }

    /// The worker's news.
    fn scan_update(&mut self, update: ScanUpdate) -> Vec<Cmd> {
        let s = &mut self.screens.scan;
        if s.device.as_deref() != Some(update.device.as_str()) {
            return Vec::new();
        }
        let ended = update.end.clone();
        match &ended {
            Some(_) => s.phase = Phase::Ended,
            None if s.phase == Phase::Starting => s.phase = Phase::Running,
            None => {}
        }
        let record = ended.is_some().then(|| Cmd::RecordScan {
            update: Box::new(update.clone()),
            path: s.path.clone().unwrap_or_default(),
        });
        s.last = Some(Box::new(update));
        s.received = self.now;
        if let Some(end) = ended
            && self.screen == Screen::Scan
        {
            self.info(match end {
                End::Finished => "scan finished: h reads the disk's SMART and error log",
                End::Stopped => "scan stopped: what it read is shown",
                End::Gone(_) => "the device went away: the scan ends with what it read",
            });
        }
        // The map and counts go into the history, as a run does.
        record.into_iter().collect()
    }

    fn scan_refused(&mut self, why: String) {
        let s = &mut self.screens.scan;
        if s.running() {
            s.phase = Phase::Refused(why.clone());
            self.error(format!("no scan: {why}"));
        }
    }
}

// ---- drawing (reads the app, never changes it) ----

/// A bucket's colour on the map and in the legend.
fn bucket_style(b: Bucket) -> Style {
    match b {
        Bucket::Under5 => Style::default().fg(Color::Green),
        Bucket::Under20 => Style::default().fg(Color::Cyan),
        Bucket::Under50 => Style::default().fg(Color::Blue),
        Bucket::Under150 => Style::default().fg(Color::Yellow),
        Bucket::Under500 => theme::warn(),
        Bucket::Over500 => Style::default().fg(Color::Magenta),
        Bucket::Time => Style::default()
            .fg(Color::Magenta)
            .add_modifier(ratatui::style::Modifier::BOLD),
        Bucket::Err => theme::bad(),
    }
}

fn draw(app: &App, frame: &mut Frame, area: Rect) {
    let s = &app.screens.scan;
    let Some(device) = s.device.as_deref() else {
        frame.render_widget(
            Paragraph::new(" No scan yet: b on Devices scans the selected device."),
            area,
        );
        return;
    };
    // Once ended, the ranges take the curve's room unless the screen fits both.
    let ended = !s.running();
    let tall = area.height >= 35;
    let chart_rows = match (ended, tall) {
        (false, _) => (area.height / 3).clamp(5, 14),
        (true, true) => 8,
        (true, false) => 0,
    };
    let ranges_rows = if ended { (area.height / 3).max(6) } else { 0 };
    let head_lines = header(s, device, app.now.saturating_sub(s.received));
    // Each line of the header takes the rows it wraps to (the verdict may be long).
    let width = usize::from(area.width.max(1));
    let head_rows: usize = head_lines
        .iter()
        .map(|l| l.width().div_ceil(width).max(1))
        .sum();
    let [head, map, legend, chart, ranges] = Layout::vertical([
        Constraint::Length((head_rows as u16).min(area.height / 4).max(2)),
        Constraint::Min(3),
        Constraint::Length(2),
        Constraint::Length(chart_rows),
        Constraint::Length(ranges_rows),
    ])
    .areas(area);
    frame.render_widget(Paragraph::new(head_lines).wrap(Wrap { trim: false }), head);
    draw_map(s, frame, map);
    frame.render_widget(Paragraph::new(legend_lines(s, legend.width)), legend);
    if chart_rows > 0 {
        draw_zone(app, s, frame, chart);
    }
    if ranges_rows > 0 {
        draw_ranges(s, frame, ranges);
    }
}

/// The header; `since` is the app's time since the last update came.
fn header(s: &ScanScreen, device: &str, since: std::time::Duration) -> Vec<Line<'static>> {
    let Some(u) = &s.last else {
        let path = s
            .path
            .as_ref()
            .map_or_else(String::new, |p| p.display().to_string());
        let second = match &s.phase {
            Phase::Refused(why) => TextSpan::styled(format!(" not started: {why}"), theme::bad()),
            _ => TextSpan::raw(" opening the device (read-only)..."),
        };
        return vec![
            Line::from(TextSpan::styled(
                format!(" Surface scan of {device} ({path}), read-only"),
                theme::title(),
            )),
            Line::from(second),
        ];
    };
    let first = Line::from(vec![
        TextSpan::styled(format!(" Surface scan of {device}"), theme::title()),
        TextSpan::raw(format!(
            ", read-only: {}, {}-byte sectors, {} reads",
            Bytes(u.size),
            u.sector,
            Bytes(u.block)
        )),
    ]);
    // The clock runs on between updates (a read may hang for minutes).
    let running = u.end.is_none();
    let elapsed = if running {
        u.elapsed.saturating_add(since)
    } else {
        u.elapsed
    };
    let secs = elapsed.as_secs_f64();
    let mbps = if secs > 0.0 {
        u.done as f64 / secs / 1e6
    } else {
        0.0
    };
    let pct = if u.planned > 0 {
        u.done as f64 * 100.0 / u.planned as f64
    } else {
        100.0
    };
    let second = match &u.end {
        None => {
            let state = if s.phase == Phase::Stopping {
                "stopping"
            } else {
                "reading"
            };
            let mut spans = vec![TextSpan::styled(
                format!(" {state} {pct:.0}%"),
                theme::warn(),
            )];
            let waiting = u.in_flight.map(|f| f.later(since)).filter(|f| f.shown());
            match waiting {
                // A hanging read: where and how long, instead of a meaningless rate and ETA.
                Some(f) => spans.push(TextSpan::styled(format!("  {}", f.text()), theme::bad())),
                None => {
                    let left = u.planned - u.done.min(u.planned);
                    let eta = if mbps > 0.0 {
                        draw::clock(Duration::from_secs((left as f64 / (mbps * 1e6)) as u64))
                    } else {
                        "-".into()
                    };
                    spans.push(TextSpan::raw(format!(
                        "  at {} of {}  {mbps:.0} MB/s  ETA {eta}",
                        Bytes(u.position),
                        Bytes(u.size),
                    )));
                }
            }
            spans.push(TextSpan::raw(format!("  elapsed {}", draw::clock(elapsed))));
            Line::from(spans)
        }
        Some(end) => {
            let (word, style) = match end {
                End::Finished => ("finished".to_string(), theme::good()),
                End::Stopped => ("stopped".to_string(), theme::warn()),
                // The verdict says why.
                End::Gone(_) => ("device gone".to_string(), theme::bad()),
            };
            let verdict = u.verdict.clone().unwrap_or_default();
            Line::from(vec![
                TextSpan::styled(format!(" {word}"), style),
                TextSpan::raw(format!(
                    ": {} of {} in {} ({mbps:.0} MB/s). {verdict}",
                    Bytes(u.done),
                    Bytes(u.planned),
                    draw::clock(elapsed)
                )),
            ])
        }
    };
    vec![first, second]
}

fn draw_map(s: &ScanScreen, frame: &mut Frame, area: Rect) {
    let span_text = s.last.as_ref().map_or_else(String::new, |u| {
        let cells =
            u64::from(area.width.saturating_sub(2)) * u64::from(area.height.saturating_sub(2));
        let cells = cells.min(u.map.cells().len() as u64).max(1);
        format!(
            " Map: a cell is {}, its worst read (ms); blank: not read yet ",
            Bytes(u.size.div_ceil(cells))
        )
    });
    let block = Block::default().borders(Borders::ALL).title(span_text);
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let Some(u) = &s.last else { return };
    let (w, h) = (usize::from(inner.width), usize::from(inner.height));
    let line = u.map.line(w * h);
    let glyphs: Vec<char> = line.chars().collect();
    let lines: Vec<Line> = glyphs
        .chunks(w.max(1))
        .map(|row| {
            Line::from(
                row.iter()
                    .map(|&c| {
                        let style = Bucket::ALL
                            .iter()
                            .find(|b| b.glyph() == c)
                            .map_or_else(Style::default, |b| bucket_style(*b));
                        TextSpan::styled(c.to_string(), style)
                    })
                    .collect::<Vec<_>>(),
            )
        })
        .collect();
    frame.render_widget(Paragraph::new(lines), inner);
}

/// The buckets' glyphs, names and counts, over two rows.
fn legend_lines(s: &ScanScreen, width: u16) -> Vec<Line<'static>> {
    let count = |b: Bucket| s.last.as_ref().map_or(0, |u| u.buckets.get(b));
    let entry = |b: Bucket| {
        vec![
            TextSpan::styled(b.glyph().to_string(), bucket_style(b)),
            TextSpan::raw(format!(" {:<5} {:<7}", b.label(), count(b))),
        ]
    };
    let per_row = if width >= 120 { 8 } else { 4 };
    Bucket::ALL
        .chunks(per_row)
        .map(|row| {
            let mut spans = vec![TextSpan::raw(" ")];
            for &b in row {
                spans.extend(entry(b));
            }
            Line::from(spans)
        })
        .collect()
}

fn draw_zone(app: &App, s: &ScanScreen, frame: &mut Frame, area: Rect) {
    let Some(u) = &s.last else { return };
    let (unit, shift) = if u.size >= 4 << 30 {
        ("GiB", 30)
    } else {
        ("MiB", 20)
    };
    let at = |b: u64| b as f64 / (1u64 << shift) as f64;
    let points: Vec<(f64, f64)> = u.zone.iter().map(|&(p, mbps)| (at(p), mbps)).collect();
    let top = points.iter().map(|p| p.1).fold(1.0_f64, f64::max) * 1.1;
    let right = at(u.size).max(f64::MIN_POSITIVE);
    let data = Dataset::default()
        .marker(theme::marker(app.console))
        .graph_type(GraphType::Line)
        .style(theme::series_a())
        .data(&points);
    let chart = Chart::new(vec![data])
        .block(
            Block::default()
                .borders(Borders::ALL)
                .title(format!(" Throughput (MB/s) against position ({unit}) ")),
        )
        .x_axis(Axis::default().bounds([0.0, right]).labels(vec![
            TextSpan::raw("0"),
            TextSpan::raw(format!("{right:.0}")),
        ]))
        .y_axis(
            Axis::default()
                .bounds([0.0, top])
                .labels(vec![TextSpan::raw("0"), TextSpan::raw(format!("{top:.0}"))]),
        );
    frame.render_widget(chart, area);
}

/// The ranges as `disktriage scan` lists them: offset +length in bytes, the LBAs, and why.
pub fn range_lines(u: &ScanUpdate) -> Vec<Line<'static>> {
    let mut out = Vec::new();
    for (span, errno) in &u.errors {
        out.push(Line::from(vec![
            TextSpan::styled("bad  ", theme::bad()),
            TextSpan::raw(format!(
                "{} +{}  {}  {}",
                span.offset,
                span.length,
                lba_range(*span, u.sector),
                errno_name(*errno)
            )),
        ]));
    }
    for (span, t) in &u.slow {
        let again = match (t.reread_ms, t.reread_errno) {
            (Some(ms), _) => format!("{ms} ms"),
            (None, Some(e)) => format!("failed ({})", errno_name(e)),
            (None, None) => "not read again".into(),
        };
        out.push(Line::from(vec![
            TextSpan::styled("slow ", theme::warn()),
            TextSpan::raw(format!(
                "{} +{}  {}  {} ms, then {again}",
                span.offset,
                span.length,
                lba_range(*span, u.sector),
                t.ms
            )),
        ]));
    }
    for span in &u.timeouts {
        out.push(Line::from(vec![
            TextSpan::styled("TIME ", bucket_style(Bucket::Time)),
            TextSpan::raw(format!(
                "{} +{}  {}",
                span.offset,
                span.length,
                lba_range(*span, u.sector)
            )),
        ]));
    }
    out
}

fn draw_ranges(s: &ScanScreen, frame: &mut Frame, area: Rect) {
    let Some(u) = &s.last else {
        frame.render_widget(
            Block::default().borders(Borders::ALL).title(" Ranges "),
            area,
        );
        return;
    };
    let lines = range_lines(u);
    let title = format!(
        " {} unreadable, {} slow (>= {} ms), {} TIME: offset +length in bytes, LBAs ",
        u.errors.len(),
        u.slow.len(),
        u.slow_ms,
        u.timeouts.len()
    );
    let body: Vec<Line> = if lines.is_empty() {
        vec![Line::from(TextSpan::styled(
            match u.end {
                Some(End::Finished) => " every block read, none slow",
                _ => " none in what was read",
            },
            theme::good(),
        ))]
    } else {
        lines
    };
    // A long line wraps (a large disk at 80 columns): an offset or LBA is never cut.
    let inner = usize::from(area.width.saturating_sub(2).max(1));
    let rows: usize = body.iter().map(|l| l.width().div_ceil(inner).max(1)).sum();
    let visible = usize::from(area.height.saturating_sub(2));
    let max_scroll = (rows as u16).saturating_sub(visible as u16);
    let top = s.scroll.min(max_scroll);
    // The lower edge says how many lines are out of sight (`draw::scrolled`).
    let more = draw::scrolled(rows, top.into(), visible);
    frame.render_widget(
        Paragraph::new(body)
            .block(
                Block::default()
                    .borders(Borders::ALL)
                    .title(title)
                    .title_bottom(TextSpan::styled(more, theme::dim())),
            )
            .wrap(Wrap { trim: false })
            .scroll((top, 0)),
        area,
    );
}
