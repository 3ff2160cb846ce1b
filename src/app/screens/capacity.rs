//! The capacity probe screen (`c` on Devices, after the device's name is typed): does the
//! selected device store as much as it claims, as `disktriage capacity` finds out.
//!
//! The screen shows the job's step (`flow::capacity::CapacityJob`, in the CLI's words) and the
//! elapsed time; `x` stops it and what was written is put back. At the end: the CLI's report,
//! and, if the put-back did not finish, the kept journal and the command that completes it.

use std::path::{Path, PathBuf};
use std::time::Duration;

use ratatui::Frame;
use ratatui::crossterm::event::KeyCode;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span as TextSpan};
use ratatui::widgets::{Paragraph, Wrap};

use super::super::dialogs::Starter;
use super::super::dialogs::confirm_capacity::ConfirmCapacity;
use super::super::keys::{Action, Binding, Scope};
use super::super::{App, Overlay, Screen};
use super::{JobHook, ScreenDef};
use crate::capacity::ProbeEnd;
use crate::capacity::probe::Progress;
use crate::draw::clock;
use crate::event::{Cmd, JobMsg, JobOrder};
use crate::flow::capacity::{
    self as job, CapacityMsg, CapacityOrder, CapacityRun, default_journal, progress_words,
};
use crate::model::text::neutralize_controls;
use crate::report::capacity::render_text;
use crate::report::output::DEFAULT_WIDTH;
use crate::theme;

/// Where the probe is.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Phase {
    /// No probe this session.
    #[default]
    Idle,
    Running,
    /// Stop asked for: the job puts back what it wrote, then ends.
    Stopping,
    /// It ended with its report (a verdict, or stopped or failed mid-way, put back).
    Ended,
    /// Refused before anything was written: why.
    Refused(String),
}

/// A finished probe as the screen shows it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Ended {
    /// "real", "FAKE" or "unknown".
    pub verdict: &'static str,
    /// The report's lines, as `disktriage capacity` prints them at this width.
    pub lines: Vec<String>,
    /// What the CLI says beside the report (a journal in RAM).
    pub warnings: Vec<String>,
    /// The journal, when the put-back did not finish and it is kept.
    pub journal_kept: Option<String>,
}

/// The screen's state.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CapacityScreen {
    pub phase: Phase,
    pub device: String,
    pub journal: PathBuf,
    /// The step under way (none before the first).
    pub progress: Option<Progress>,
    /// The app's clock when it started.
    pub started: Duration,
    pub ended: Option<Box<Ended>>,
    /// The first report line shown.
    pub scroll: u16,
}

impl CapacityScreen {
    /// A probe is under way (stopping included: its job still puts back).
    pub fn running(&self) -> bool {
        matches!(self.phase, Phase::Running | Phase::Stopping)
    }
}

const KEYS: &[Binding] = &[
    Binding {
        scope: Scope::On(Screen::Capacity),
        keys: &[KeyCode::Char('x')],
        names: "x",
        label: Some("stop"),
        help: "stop the probe (every sector written is put back)",
        action: Action::Stop,
    },
    Binding {
        scope: Scope::On(Screen::Capacity),
        keys: &[
            KeyCode::Up,
            KeyCode::Char('k'),
            KeyCode::Down,
            KeyCode::Char('j'),
            KeyCode::PageUp,
            KeyCode::PageDown,
        ],
        names: "Up/Down",
        label: None,
        help: "scroll the report",
        action: Action::Page,
    },
    Binding {
        scope: Scope::On(Screen::Capacity),
        keys: &[KeyCode::Esc],
        names: "Esc",
        label: Some("back"),
        help: "back to Devices (stops a running probe)",
        action: Action::Back,
    },
];

/// The registry entry.
pub const SCREEN: ScreenDef = ScreenDef {
    title: "Capacity",
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

fn works_now(app: &App, action: Action) -> bool {
    let s = &app.screens.capacity;
    match action {
        Action::Stop => s.phase == Phase::Running,
        Action::Page => s.ended.is_some(),
        _ => true,
    }
}

fn act(app: &mut App, action: Action, code: KeyCode) -> Vec<Cmd> {
    match action {
        Action::Stop => return stop(app),
        // `leave` stops a running probe.
        Action::Back => app.screen = Screen::Devices,
        Action::Page => {
            let step = match code {
                KeyCode::PageUp | KeyCode::PageDown => 10,
                _ => 1,
            };
            let dir = super::super::keys::direction(code);
            let s = &mut app.screens.capacity;
            let most = s.ended.as_ref().map_or(0, |e| e.lines.len()) as u16;
            s.scroll = super::super::scroll(s.scroll, dir, step).min(most);
        }
        _ => {}
    }
    Vec::new()
}

/// Leaving the screen stops a running probe: nobody watches it any more.
fn leave(app: &mut App) -> Vec<Cmd> {
    if app.screens.capacity.phase == Phase::Running {
        return stop(app);
    }
    Vec::new()
}

fn stop(app: &mut App) -> Vec<Cmd> {
    let s = &mut app.screens.capacity;
    if s.phase != Phase::Running {
        return Vec::new();
    }
    s.phase = Phase::Stopping;
    app.info("stopping the capacity probe: every sector written is put back");
    vec![Cmd::StopJob(job::NAME)]
}

/// The history's directory (the export directory's parent), where the journal goes by
/// default, as for `disktriage capacity`.
fn state_dir(app: &App) -> &Path {
    app.export_dir
        .parent()
        .unwrap_or(Path::new(crate::history::DEFAULT_HISTORY_DIR))
}

impl App {
    /// `c` on Devices: asks for the selected device's name (the probe writes), then starts
    /// it. While one runs, the key shows it.
    pub(in crate::app) fn ask_capacity(&mut self) -> Vec<Cmd> {
        if self.screens.capacity.running() {
            self.screen = Screen::Capacity;
            self.info("a capacity probe runs: x stops it before another starts");
            return Vec::new();
        }
        if self.running() {
            self.error("a test is running (x on Run stops it): no capacity probe meanwhile");
            return Vec::new();
        }
        // One write check at a time: each puts back what it saved, over the other's writes.
        if self.screens.trim.running() {
            self.error("a TRIM check is writing (x on its screen stops it): no probe meanwhile");
            return Vec::new();
        }
        let Some(d) = self.devices.selected() else {
            let why = self.no_selection();
            self.info(why);
            return Vec::new();
        };
        let order = CapacityOrder {
            device: d.name.clone(),
            path: d.path.clone(),
            confirmation: String::new(),
            journal: default_journal(state_dir(self), "capacity", &d.name),
            chosen: None,
        };
        self.overlay = Some(Overlay::ConfirmCapacity(ConfirmCapacity {
            order,
            wrong: false,
            editing_journal: false,
            start: Starter(start),
        }));
        Vec::new()
    }
}

/// The name was typed: the screen shows the probe and the job starts.
fn start(app: &mut App, order: JobOrder) -> Vec<Cmd> {
    let Some(o) = order.get::<CapacityOrder>() else {
        return Vec::new();
    };
    app.screens.capacity = CapacityScreen {
        phase: Phase::Running,
        device: o.device.clone(),
        journal: o.journal.clone(),
        started: app.now,
        ..CapacityScreen::default()
    };
    app.screen = Screen::Capacity;
    app.info(format!(
        "capacity probe of {}: writing, every sector is put back",
        o.device
    ));
    vec![Cmd::StartJob(order)]
}

/// The probe job's news.
fn on_msg(app: &mut App, msg: JobMsg) -> Vec<Cmd> {
    let Ok(msg) = msg.take::<CapacityMsg>() else {
        return Vec::new();
    };
    let s = &mut app.screens.capacity;
    if !s.running() {
        return Vec::new();
    }
    match msg {
        CapacityMsg::Progress { progress, .. } => s.progress = Some(progress),
        CapacityMsg::Done(run) => {
            let ended = ended(&run);
            let said = match (&ended.journal_kept, run.end.clone()) {
                (Some(kept), _) => format!(
                    "capacity probe: the put-back did not finish; disktriage restore \
                     --capacity {kept}"
                ),
                (None, ProbeEnd::Done(_)) => format!("capacity probe done: {}", ended.verdict),
                (None, _) => "capacity probe ended without a verdict: all is put back".into(),
            };
            s.phase = Phase::Ended;
            s.scroll = 0;
            s.ended = Some(Box::new(ended));
            app.info(said);
        }
        CapacityMsg::Failed(why) => {
            let why = neutralize_controls(&why);
            s.phase = Phase::Refused(why.clone());
            app.info(format!("capacity probe not started: {why}"));
            app.error(format!("capacity probe: {why}"));
        }
    }
    Vec::new()
}

/// A run as the screen keeps it: the CLI's report, laid out with a column of margin.
fn ended(run: &CapacityRun) -> Ended {
    let verdict = match &run.end {
        ProbeEnd::Done(c) if c.is_real() => "real",
        ProbeEnd::Done(_) => "FAKE",
        _ => "unknown",
    };
    Ended {
        verdict,
        lines: render_text(&run.report(), DEFAULT_WIDTH - 2)
            .lines()
            .map(str::to_string)
            .collect(),
        warnings: run.warnings.clone(),
        journal_kept: run.journal_kept.clone(),
    }
}

// ---- drawing (reads the app, never changes it) ----

fn draw(app: &App, frame: &mut Frame, area: Rect) {
    let s = &app.screens.capacity;
    let title = |what: &str| {
        Line::from(TextSpan::styled(
            format!("Capacity probe of {}{what}", s.device),
            theme::title(),
        ))
    };
    let lines: Vec<Line> = match (&s.phase, &s.ended) {
        (Phase::Idle, _) => vec![Line::raw(
            "No capacity probe yet: c on Devices finds out whether the selected device \
             stores what it claims (it writes and puts back: its name is asked first).",
        )],
        (Phase::Ended, Some(e)) => ended_lines(e, s.scroll, title("")),
        (Phase::Refused(why), _) => vec![
            title(""),
            Line::from(TextSpan::styled(
                format!("not started, nothing was written: {why}"),
                theme::bad(),
            )),
        ],
        _ => {
            let elapsed = app.now.saturating_sub(s.started);
            let state = if s.phase == Phase::Stopping {
                TextSpan::styled(
                    "stopping: every sector written is put back, then it ends",
                    theme::warn(),
                )
            } else {
                TextSpan::styled(
                    "overwrites sectors, each saved first and put back at the end",
                    theme::dim(),
                )
            };
            let step = s
                .progress
                .as_ref()
                .map_or_else(|| "checking the device".to_string(), progress_words);
            vec![
                title(&format!(": {} elapsed, writes", clock(elapsed))),
                Line::from(state),
                Line::raw(""),
                Line::from(TextSpan::styled(step, theme::accent())),
                Line::raw(""),
                Line::from(TextSpan::styled(
                    format!("journal: {}", s.journal.display()),
                    theme::dim(),
                )),
            ]
        }
    };
    frame.render_widget(
        Paragraph::new(lines).wrap(Wrap { trim: false }),
        area.inner(ratatui::layout::Margin::new(1, 0)),
    );
}

/// The verdict first, what to do if the put-back did not finish, then the report.
fn ended_lines(e: &Ended, scroll: u16, title: Line<'static>) -> Vec<Line<'static>> {
    let style = match e.verdict {
        "real" => theme::good(),
        "FAKE" => theme::bad(),
        _ => theme::warn(),
    };
    let mut lines = vec![
        title,
        Line::from(vec![
            TextSpan::raw("Verdict: "),
            TextSpan::styled(e.verdict, style),
        ]),
    ];
    if let Some(kept) = &e.journal_kept {
        lines.push(Line::from(TextSpan::styled(
            format!(
                "The put-back did not finish: the saved sectors are kept in {kept}; run \
                 `disktriage restore --capacity {kept}` to put them back."
            ),
            theme::bad(),
        )));
    }
    for w in &e.warnings {
        lines.push(Line::from(TextSpan::styled(
            format!("warning: {}", neutralize_controls(w)),
            theme::warn(),
        )));
    }
    lines.push(Line::raw(""));
    lines.extend(
        e.lines
            .iter()
            .skip(usize::from(scroll))
            .map(|l| Line::raw(l.clone())),
    );
    lines
}
