//! The triage screen (`v` on Devices): one verdict per disk (healthy, suspect, failing or
//! unknown) for the marked disks or else the selected one.
//!
//! While the job (`flow::triage::TriageJob`) gathers facts read-only within the bound, the
//! screen shows one line per disk with its step and a bar, and the time against the bound. At
//! the end: one line per disk, worst first, and for the selected disk every finding with its
//! next step, what could not be read, and what changed since its last triage; `h` opens its
//! Health view. Every colour goes with a word (`theme`).

use std::time::Duration;

use ratatui::Frame;
use ratatui::crossterm::event::KeyCode;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span as TextSpan};
use ratatui::widgets::{Block, Borders, Paragraph, Wrap};

use super::super::keys::{Action, Binding, Scope};
use super::super::{App, Screen};
use super::{JobHook, ScreenDef};
use crate::draw::{self, clock, elide_end as fit};
use crate::event::{Cmd, JobMsg, JobOrder, TriageMsg};
use crate::flow::triage::{self as job, TriageNews, TriageOrder};
use crate::report::triage::{DiskReport, TriageReport};
use crate::theme;
use crate::triage::{GatherOptions, Progress, TriageVerdict};

/// Where the triage is.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Phase {
    /// No triage this session.
    #[default]
    Idle,
    /// Gathering.
    Running,
    /// Stop asked for; the worker ends with what was gathered.
    Stopping,
    /// The report is in.
    Ended,
    /// Did not start: why.
    Refused(String),
}

/// One disk's line while the triage runs.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct DiskLine {
    pub device: String,
    /// What it is doing ("SMART", "surface 1200/4000", "done").
    pub step: String,
    /// 0.0 ..= 1.0 of the disk's work.
    pub fraction: f64,
    pub done: bool,
    /// The app's clock when the step began (`STEP_SHOWN_AFTER`).
    pub since: Duration,
}

/// A disk's step that has lasted this long says so: a read that hangs sends no news.
const STEP_SHOWN_AFTER: Duration = Duration::from_secs(2);

/// The screen's state.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct TriageScreen {
    pub phase: Phase,
    /// The disks asked for, in order, with their progress.
    pub lines: Vec<DiskLine>,
    /// The app's clock when it started (the elapsed time is `App::now` minus this).
    pub started: Duration,
    pub bound: Duration,
    pub report: Option<Box<TriageReport>>,
    /// The selected disk in the worst-first list.
    pub row: usize,
    /// The first row of the selected disk's findings shown.
    pub scroll: u16,
    /// Each disk as it was when the triage started (`h` refuses another under its name).
    pub chosen: Vec<(String, Option<crate::model::ChosenDevice>)>,
}

impl TriageScreen {
    /// A triage is under way (stopping included: its worker still reads).
    pub fn running(&self) -> bool {
        matches!(self.phase, Phase::Running | Phase::Stopping)
    }

    /// The report's disks, worst first, then by device name.
    pub fn order(&self) -> Vec<&DiskReport> {
        self.report.as_ref().map_or_else(Vec::new, |r| r.ordered())
    }

    /// The disk selected in the list, once the report is in.
    pub fn selected(&self) -> Option<&DiskReport> {
        let order = self.order();
        order
            .get(self.row.min(order.len().saturating_sub(1)))
            .copied()
    }
}

/// The screen's rows of the key table.
const KEYS: &[Binding] = &[
    Binding {
        scope: Scope::On(Screen::Triage),
        keys: &[KeyCode::Char('x')],
        names: "x",
        label: Some("stop"),
        help: "stop the triage (it ends with what was gathered)",
        action: Action::Stop,
    },
    Binding {
        scope: Scope::On(Screen::Triage),
        keys: &[KeyCode::Char('h')],
        names: "h",
        label: Some("health"),
        help: "the selected disk's health: SMART, error log",
        action: Action::ReadSmart,
    },
    Binding {
        scope: Scope::On(Screen::Triage),
        keys: &[
            KeyCode::Up,
            KeyCode::Char('k'),
            KeyCode::Down,
            KeyCode::Char('j'),
        ],
        names: "Up/Down",
        label: Some("disk"),
        help: "select a disk",
        action: Action::Move,
    },
    Binding {
        scope: Scope::On(Screen::Triage),
        keys: &[KeyCode::PageUp, KeyCode::PageDown],
        names: "PageUp/PageDown",
        label: None,
        help: "scroll its findings",
        action: Action::Page,
    },
    Binding {
        scope: Scope::On(Screen::Triage),
        keys: &[KeyCode::Esc],
        names: "Esc",
        label: Some("back"),
        help: "back to Devices (stops a running triage)",
        action: Action::Back,
    },
];

/// The registry entry.
pub const SCREEN: ScreenDef = ScreenDef {
    title: "Triage",
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

/// The triage job's news, and the history's notes after its report.
fn on_msg(app: &mut App, msg: JobMsg) -> Vec<Cmd> {
    match msg.take::<TriageNews>() {
        Ok(TriageNews::Triage(m)) => app.triage_msg(m),
        Ok(TriageNews::HistoryNote(note)) => app.history_note(note),
        Err(_) => {}
    }
    Vec::new()
}

fn works_now(app: &App, action: Action) -> bool {
    let s = &app.screens.triage;
    match action {
        Action::Stop => s.phase == Phase::Running,
        Action::ReadSmart => s.phase == Phase::Ended && s.selected().is_some(),
        Action::Move | Action::Page => s.phase == Phase::Ended && s.order().len() > 1,
        _ => true,
    }
}

fn act(app: &mut App, action: Action, code: KeyCode) -> Vec<Cmd> {
    let dir = super::super::keys::direction(code);
    match action {
        Action::Stop => return app.stop_triage(),
        // `leave` stops a running triage.
        Action::Back => app.screen = Screen::Devices,
        Action::ReadSmart => {
            if app.screens.triage.running() {
                app.info("the triage still runs: x stops it, then h reads a disk's health");
                return Vec::new();
            }
            let device = app
                .screens
                .triage
                .selected()
                .map(|d| d.facts.identity.device.clone());
            if let Some(device) = device {
                let chosen = app
                    .screens
                    .triage
                    .chosen
                    .iter()
                    .find(|(d, _)| *d == device)
                    .and_then(|(_, c)| c.clone());
                return app.open_health_of(device, chosen.as_ref());
            }
        }
        Action::Move => {
            let s = &mut app.screens.triage;
            let last = s.order().len().saturating_sub(1);
            s.row = super::super::step(s.row, dir, last);
            s.scroll = 0;
        }
        Action::Page => {
            let s = &mut app.screens.triage;
            s.scroll = super::super::scroll(s.scroll, dir, 5).min(200);
        }
        _ => {}
    }
    Vec::new()
}

/// Leaving the screen stops a running triage: its measurements are nobody's any more.
fn leave(app: &mut App) -> Vec<Cmd> {
    if app.screens.triage.phase == Phase::Running {
        return app.stop_triage();
    }
    Vec::new()
}

impl App {
    /// `v` on Devices: triages the marked disks, else the selected one; while one runs, shows
    /// it.
    pub(in crate::app) fn start_triage(&mut self) -> Vec<Cmd> {
        if self.screens.triage.running() {
            self.screen = Screen::Triage;
            self.info("a triage runs: x stops it before another starts");
            return Vec::new();
        }
        if self.running() {
            // Its measurements would measure the test, and a write test changes what is read.
            self.error("a test is running (x on Run stops it): no triage meanwhile");
            return Vec::new();
        }
        let devices: Vec<String> = if self.several.marks.is_empty() {
            match self.selected_device() {
                Some(d) => vec![d.name.clone()],
                None => {
                    let why = self.no_selection();
                    self.info(why);
                    return Vec::new();
                }
            }
        } else {
            self.several.marks.clone()
        };
        let options = GatherOptions::default();
        let chosen = devices
            .iter()
            .map(|d| (d.clone(), self.devices.chosen(d)))
            .collect();
        self.screens.triage = TriageScreen {
            phase: Phase::Running,
            lines: devices
                .iter()
                .map(|d| DiskLine {
                    device: d.clone(),
                    step: "waiting".into(),
                    since: self.now,
                    ..DiskLine::default()
                })
                .collect(),
            started: self.now,
            bound: options.bound,
            report: None,
            row: 0,
            scroll: 0,
            chosen,
        };
        self.screen = Screen::Triage;
        let what = match devices.as_slice() {
            [one] => one.clone(),
            many => format!("{} disks", many.len()),
        };
        self.info(format!(
            "triage of {what}: read-only (nothing is written), at most {} s",
            options.bound.as_secs()
        ));
        vec![Cmd::StartJob(JobOrder::new(TriageOrder {
            devices,
            chosen: Vec::new(),
            options,
        }))]
    }

    fn stop_triage(&mut self) -> Vec<Cmd> {
        let s = &mut self.screens.triage;
        if s.phase != Phase::Running {
            return Vec::new();
        }
        s.phase = Phase::Stopping;
        self.info("stopping the triage: it ends with what was gathered");
        vec![Cmd::StopJob(job::NAME)]
    }

    /// The worker's news.
    fn triage_msg(&mut self, msg: TriageMsg) {
        let now = self.now;
        let s = &mut self.screens.triage;
        if !s.running() {
            return;
        }
        match msg {
            TriageMsg::Progress(p) => progress(s, &p, now),
            TriageMsg::Finished(report) => {
                let worst = report.worst();
                let any = !report.disks.is_empty();
                let stopped = s.phase == Phase::Stopping;
                s.phase = Phase::Ended;
                s.report = Some(report);
                (s.row, s.scroll) = (0, 0);
                if self.screen == Screen::Triage && any {
                    let how = if stopped { "stopped" } else { "done" };
                    self.info(format!(
                        "triage {how}: worst {}; h reads the selected disk's health",
                        verdict_word(worst)
                    ));
                }
            }
            TriageMsg::Refused(why) => {
                s.phase = Phase::Refused(why.clone());
                self.error(format!("no triage: {why}"));
            }
        }
    }
}

fn progress(s: &mut TriageScreen, p: &Progress, now: Duration) {
    let Some(line) = s.lines.get_mut(p.disk).filter(|l| l.device == p.device) else {
        return;
    };
    if line.step != p.step {
        line.since = now;
    }
    line.step.clone_from(&p.step);
    line.fraction = p.fraction.clamp(0.0, 1.0);
    if p.done.is_some() {
        line.done = true;
        line.fraction = 1.0;
    }
}

// ---- drawing (reads the app, never changes it) ----

/// The verdict as a word that says it without its colour.
pub fn verdict_word(v: TriageVerdict) -> &'static str {
    match v {
        TriageVerdict::Healthy => "healthy",
        TriageVerdict::Suspect => "SUSPECT",
        TriageVerdict::Failing => "FAILING",
        TriageVerdict::Unknown => "UNKNOWN",
    }
}

fn verdict_style(v: TriageVerdict) -> Style {
    match v {
        TriageVerdict::Healthy => theme::good(),
        TriageVerdict::Suspect => theme::warn(),
        TriageVerdict::Failing | TriageVerdict::Unknown => theme::bad(),
    }
}

/// "1 disk", "3 disks".
fn disks(n: usize) -> String {
    format!("{n} disk{}", if n == 1 { "" } else { "s" })
}

fn draw(app: &App, frame: &mut Frame, area: Rect) {
    let s = &app.screens.triage;
    match (&s.phase, &s.report) {
        (Phase::Idle, _) => frame.render_widget(
            Paragraph::new(
                " No triage yet: v on Devices triages the marked disks, else the selected one.",
            )
            .wrap(Wrap { trim: false }),
            area,
        ),
        (Phase::Ended, Some(report)) => draw_report(s, report, frame, area),
        _ => draw_running(app, s, frame, area),
    }
}

fn draw_running(app: &App, s: &TriageScreen, frame: &mut Frame, area: Rect) {
    let elapsed = app.now.saturating_sub(s.started);
    let n = s.lines.len();
    // A refused triage read nothing: no clock runs and no disk is waiting.
    let refused = matches!(s.phase, Phase::Refused(_));
    let mut lines = vec![Line::from(vec![
        TextSpan::styled(
            format!(" Triage of {}, read-only", disks(n)),
            theme::title(),
        ),
        TextSpan::raw(if refused {
            ": refused, nothing was read".to_string()
        } else {
            format!(": {} elapsed of at most {}", clock(elapsed), clock(s.bound))
        }),
    ])];
    lines.push(match &s.phase {
        Phase::Refused(why) => Line::from(TextSpan::styled(
            format!(" not started: {why}"),
            theme::bad(),
        )),
        Phase::Stopping => Line::from(TextSpan::styled(
            " stopping: it ends with what was gathered",
            theme::warn(),
        )),
        _ => Line::from(TextSpan::styled(
            " gathering: SMART, logs, link, surface samples, reads at start/middle/end",
            theme::dim(),
        )),
    });
    lines.push(Line::raw(""));
    let name_w = s
        .lines
        .iter()
        .map(|l| l.device.chars().count())
        .max()
        .unwrap_or(0)
        .clamp(6, 16);
    let bar_w = if area.width >= 120 { 40 } else { 20 };
    let step_w = usize::from(area.width).saturating_sub(name_w + bar_w + 10);
    for l in s.lines.iter().filter(|_| !refused) {
        let filled = ((l.fraction * bar_w as f64).round() as usize).min(bar_w);
        let (word, style) = if l.done {
            ("done", theme::good())
        } else {
            ("", theme::accent())
        };
        // On the screen's own clock (`STEP_SHOWN_AFTER`).
        let lasted = app.now.saturating_sub(l.since);
        let step = if l.done {
            word.to_string()
        } else if lasted >= STEP_SHOWN_AFTER {
            let secs = format!(" {} s", lasted.as_secs());
            format!("{}{secs}", fit(&l.step, step_w.saturating_sub(secs.len())))
        } else {
            fit(&l.step, step_w)
        };
        lines.push(Line::from(vec![
            TextSpan::raw(format!(" {:<name_w$} ", fit(&l.device, name_w))),
            TextSpan::styled("█".repeat(filled), style),
            TextSpan::styled("░".repeat(bar_w - filled), theme::dim()),
            TextSpan::raw(format!(" {:>3}% ", (l.fraction * 100.0).round() as u32)),
            TextSpan::styled(
                step,
                if l.done {
                    theme::good()
                } else {
                    Style::default()
                },
            ),
        ]));
    }
    frame.render_widget(Paragraph::new(lines).wrap(Wrap { trim: false }), area);
}

fn draw_report(s: &TriageScreen, report: &TriageReport, frame: &mut Frame, area: Rect) {
    let order = s.order();
    let worst = report.worst();
    let head = Line::from(vec![
        TextSpan::styled(
            format!(" Triage of {}: worst ", disks(order.len())),
            theme::title(),
        ),
        TextSpan::styled(verdict_word(worst), verdict_style(worst)),
        TextSpan::raw(format!(
            ", {:.1} s of at most {:.0} s, read-only",
            report.seconds, report.bound_seconds
        )),
    ]);
    let list_rows = (order.len() as u16 + 1).min(area.height / 2);
    let [head_area, list_area, detail_area] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Length(list_rows),
        Constraint::Min(3),
    ])
    .areas(area);
    frame.render_widget(Paragraph::new(head), head_area);

    let width = usize::from(area.width);
    let name_w = order
        .iter()
        .map(|d| d.facts.identity.device.chars().count())
        .max()
        .unwrap_or(0)
        .clamp(6, 12);
    let model_w = if width >= 120 { 28 } else { 20 };
    let find_w = width.saturating_sub(name_w + model_w + 12);
    let mut rows = vec![Line::from(TextSpan::styled(
        format!(
            " {:<name_w$} {:<7}  {:<model_w$} {}",
            "DEVICE", "VERDICT", "MODEL", "FIRST FINDING"
        ),
        theme::header(),
    ))];
    let selected = s.row.min(order.len().saturating_sub(1));
    // The list keeps the selected disk in view; when the disks do not all fit, its last row
    // says how many are out of sight (`draw::scrolled`).
    let room = usize::from(list_rows.saturating_sub(1)).max(1);
    let shown = if order.len() > room {
        room.saturating_sub(1).max(1)
    } else {
        room
    };
    let first = selected.saturating_sub(shown - 1);
    let more = draw::scrolled(order.len(), first, shown);
    for (i, d) in order.iter().enumerate().skip(first).take(shown) {
        let v = d.judgement.verdict;
        let model = d.facts.identity.model.as_deref().unwrap_or("-");
        let marker = if i == selected { ">" } else { " " };
        let mut line = Line::from(vec![
            TextSpan::raw(format!(
                "{marker}{:<name_w$} ",
                fit(&d.facts.identity.device, name_w)
            )),
            TextSpan::styled(format!("{:<7}", verdict_word(v)), verdict_style(v)),
            TextSpan::raw(format!(
                "  {:<model_w$} {}",
                fit(model, model_w),
                fit(&d.first_finding(), find_w)
            )),
        ]);
        if i == selected {
            line = line.style(theme::selected());
        }
        rows.push(line);
    }
    if !more.is_empty() {
        rows.push(Line::from(TextSpan::styled(
            more.trim_end().to_string(),
            theme::dim(),
        )));
    }
    frame.render_widget(Paragraph::new(rows), list_area);

    let Some(d) = order.get(selected) else {
        return;
    };
    let v = d.judgement.verdict;
    let title = format!(
        " {} {}: findings, next steps, changes since the last triage ",
        d.facts.identity.device,
        verdict_word(v)
    );
    frame.render_widget(
        Paragraph::new(detail_lines(d))
            .block(Block::default().borders(Borders::ALL).title(title))
            .wrap(Wrap { trim: false })
            .scroll((s.scroll, 0)),
        detail_area,
    );
}

/// A value as a count where it is one ("24"), else with one decimal ("41.5").
fn number(x: f64) -> String {
    if x.fract() == 0.0 && x.abs() < 1e15 {
        format!("{x:.0}")
    } else {
        format!("{x:.1}")
    }
}

/// What was measured on the disk, in one line: the evidence behind a "healthy".
fn measured(f: &crate::triage::DiskFacts) -> String {
    let m = &f.measurements;
    let mut parts = Vec::new();
    if let Some(s) = &m.surface {
        parts.push(format!(
            "surface {} reads, {} unreadable, {} slow",
            s.reads,
            s.unreadable.len(),
            s.slow.len()
        ));
    }
    if !m.seq.is_empty() {
        let rates: Vec<String> = m.seq.iter().map(|r| format!("{:.0}", r.mb_per_s)).collect();
        parts.push(format!("seq read {} MB/s", rates.join("/")));
    }
    if let Some(p99) = m.random_read_p99_ms {
        parts.push(format!("QD1 p99 {p99:.2} ms"));
    }
    match (m.temperature_min_c, m.temperature_max_c) {
        (Some(lo), Some(hi)) if lo != hi => parts.push(format!("{lo}-{hi} C")),
        (_, Some(t)) | (Some(t), None) => parts.push(format!("{t} C")),
        (None, None) => {}
    }
    if parts.is_empty() {
        "nothing (see below)".to_string()
    } else {
        format!("{}; {:.1} s", parts.join(", "), f.seconds)
    }
}

/// The selected disk's findings (each a sentence and its next step), what could not be read,
/// the notes (seen, not judged) and what changed since its last triage.
pub fn detail_lines(d: &DiskReport) -> Vec<Line<'static>> {
    let mut out = Vec::new();
    if d.judgement.findings.is_empty() {
        let v = d.judgement.verdict;
        let why = match v {
            TriageVerdict::Unknown => ": too little could be read to judge this disk (below)",
            _ => ": no rule found anything on this disk",
        };
        out.push(Line::from(vec![
            TextSpan::styled(verdict_word(v), verdict_style(v)),
            TextSpan::raw(why),
        ]));
    }
    for f in &d.judgement.findings {
        out.push(Line::from(vec![
            TextSpan::styled(verdict_word(f.severity), verdict_style(f.severity)),
            TextSpan::raw(format!(" {}", f.sentence)),
        ]));
        out.push(Line::from(vec![
            TextSpan::styled("  next: ", theme::title()),
            TextSpan::raw(f.next_step.clone()),
        ]));
    }
    out.push(Line::from(vec![
        TextSpan::styled("measured: ", theme::title()),
        TextSpan::raw(measured(&d.facts)),
    ]));
    for p in &d.facts.problems {
        out.push(Line::from(vec![
            TextSpan::styled("not read: ", theme::dim()),
            TextSpan::raw(p.clone()),
        ]));
    }
    for n in &d.judgement.notes {
        out.push(Line::from(vec![
            TextSpan::styled("note: ", theme::title()),
            TextSpan::raw(n.clone()),
        ]));
    }
    if d.changes.is_empty() {
        out.push(Line::from(TextSpan::styled(
            "no change since the last triage (or no earlier triage of this disk)",
            theme::dim(),
        )));
    } else {
        out.push(Line::from(TextSpan::styled(
            "changed since the last triage:",
            theme::title(),
        )));
        for c in &d.changes {
            out.push(Line::raw(format!(
                "  {} {} -> {} since {}",
                c.what,
                number(c.before),
                number(c.after),
                crate::history::utc_minute(c.since_unix)
            )));
        }
    }
    out
}
