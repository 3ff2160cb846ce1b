//! The TRIM check screen (`T` on Devices, after the device's name is typed): does a discard
//! do what the device claims, as `disktriage trimcheck` finds out.
//!
//! The screen lists the job's steps (`flow::trimcheck::TrimcheckJob`) with the one under way
//! and the elapsed time; `x` stops it and what was written is put back. At the end: the
//! verdict over the CLI's report, and, if the put-back did not finish, the kept journal and the
//! command that completes it.

use std::path::PathBuf;
use std::time::Duration;

use ratatui::Frame;
use ratatui::crossterm::event::KeyCode;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span as TextSpan};
use ratatui::widgets::{Paragraph, Wrap};

use super::super::dialogs::Starter;
use super::super::dialogs::confirm_trimcheck::ConfirmTrim;
use super::super::keys::{Action, Binding, Scope};
use super::super::{App, Overlay, Screen};
use super::{JobHook, ScreenDef};
use crate::draw::clock;
use crate::event::{Cmd, JobMsg, JobOrder};
use crate::flow::capacity::default_journal;
use crate::flow::trimcheck::{self as job, TrimMsg, TrimOrder, TrimRun, TrimStep};
use crate::model::text::neutralize_controls;
use crate::report::output::DEFAULT_WIDTH;
use crate::report::trimcheck::{render_text, verdict_sentence, verdict_word};
use crate::theme;

/// Where the check is.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Phase {
    /// No check this session.
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

/// A finished check as the screen shows it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Ended {
    /// `report::trimcheck::verdict_word`: "works", "kept", "broken", "refused", ...
    pub word: &'static str,
    /// The verdict's sentence.
    pub sentence: String,
    /// The report's lines, as `disktriage trimcheck` prints them at this width.
    pub lines: Vec<String>,
    /// What the CLI says beside the report (a journal in RAM, the history).
    pub warnings: Vec<String>,
    /// The journal, when the put-back did not finish and it is kept.
    pub journal_kept: Option<String>,
}

/// The screen's state.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct TrimScreen {
    pub phase: Phase,
    pub device: String,
    pub journal: PathBuf,
    /// The step under way (none before the first).
    pub step: Option<TrimStep>,
    /// The app's clock when it started.
    pub started: Duration,
    pub ended: Option<Box<Ended>>,
    /// The first report line shown.
    pub scroll: u16,
}

impl TrimScreen {
    /// A check is under way (stopping included: its job still puts back).
    pub fn running(&self) -> bool {
        matches!(self.phase, Phase::Running | Phase::Stopping)
    }
}

const KEYS: &[Binding] = &[
    Binding {
        scope: Scope::On(Screen::Trim),
        keys: &[KeyCode::Char('x')],
        names: "x",
        label: Some("stop"),
        help: "stop the TRIM check (what was written is put back)",
        action: Action::Stop,
    },
    Binding {
        scope: Scope::On(Screen::Trim),
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
        scope: Scope::On(Screen::Trim),
        keys: &[KeyCode::Esc],
        names: "Esc",
        label: Some("back"),
        help: "back to Devices (stops a running check)",
        action: Action::Back,
    },
];

/// The registry entry.
pub const SCREEN: ScreenDef = ScreenDef {
    title: "TRIM",
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
    let s = &app.screens.trim;
    match action {
        Action::Stop => s.phase == Phase::Running,
        Action::Page => s.ended.is_some(),
        _ => true,
    }
}

fn act(app: &mut App, action: Action, code: KeyCode) -> Vec<Cmd> {
    match action {
        Action::Stop => return stop(app),
        // `leave` stops a running check.
        Action::Back => app.screen = Screen::Devices,
        Action::Page => {
            let step = match code {
                KeyCode::PageUp | KeyCode::PageDown => 10,
                _ => 1,
            };
            let dir = super::super::keys::direction(code);
            let s = &mut app.screens.trim;
            let most = s.ended.as_ref().map_or(0, |e| e.lines.len()) as u16;
            s.scroll = super::super::scroll(s.scroll, dir, step).min(most);
        }
        _ => {}
    }
    Vec::new()
}

/// Leaving the screen stops a running check: nobody watches it any more.
fn leave(app: &mut App) -> Vec<Cmd> {
    if app.screens.trim.phase == Phase::Running {
        return stop(app);
    }
    Vec::new()
}

fn stop(app: &mut App) -> Vec<Cmd> {
    let s = &mut app.screens.trim;
    if s.phase != Phase::Running {
        return Vec::new();
    }
    s.phase = Phase::Stopping;
    app.info("stopping the TRIM check: what was written is put back");
    vec![Cmd::StopJob(job::NAME)]
}

impl App {
    /// `T` on Devices: asks for the selected device's name (the check writes), then starts
    /// it. While one runs, the key shows it.
    pub(in crate::app) fn ask_trimcheck(&mut self) -> Vec<Cmd> {
        if self.screens.trim.running() {
            self.screen = Screen::Trim;
            self.info("a TRIM check runs: x stops it before another starts");
            return Vec::new();
        }
        if self.running() {
            self.error("a test is running (x on Run stops it): no TRIM check meanwhile");
            return Vec::new();
        }
        // One write check at a time: each puts back what it saved, over the other's writes.
        if self.screens.capacity.running() || self.screens.flush.running() {
            self.error(
                "a capacity probe or a flush check is writing (x on its screen stops it): \
                 no TRIM check meanwhile",
            );
            return Vec::new();
        }
        let Some(d) = self.devices.selected() else {
            let why = self.no_selection();
            self.info(why);
            return Vec::new();
        };
        // The journal goes beside the history, as for `disktriage trimcheck`.
        let state_dir = self
            .export_dir
            .parent()
            .unwrap_or(std::path::Path::new(crate::history::DEFAULT_HISTORY_DIR));
        let order = TrimOrder {
            device: d.name.clone(),
            path: d.path.clone(),
            confirmation: String::new(),
            journal: default_journal(state_dir, "trimcheck", &d.name),
            chosen: None,
        };
        self.overlay = Some(Overlay::ConfirmTrim(ConfirmTrim {
            order,
            wrong: false,
            editing_journal: false,
            start: Starter(start),
        }));
        Vec::new()
    }
}

/// The name was typed: the screen shows the check and the job starts.
fn start(app: &mut App, order: JobOrder) -> Vec<Cmd> {
    let Some(o) = order.get::<TrimOrder>() else {
        return Vec::new();
    };
    app.screens.trim = TrimScreen {
        phase: Phase::Running,
        device: o.device.clone(),
        journal: o.journal.clone(),
        started: app.now,
        ..TrimScreen::default()
    };
    app.screen = Screen::Trim;
    app.info(format!(
        "TRIM check of {}: writing a scratch range, put back at the end",
        o.device
    ));
    vec![Cmd::StartJob(order)]
}

/// The check job's news.
fn on_msg(app: &mut App, msg: JobMsg) -> Vec<Cmd> {
    let Ok(msg) = msg.take::<TrimMsg>() else {
        return Vec::new();
    };
    let s = &mut app.screens.trim;
    if !s.running() {
        return Vec::new();
    }
    match msg {
        TrimMsg::Step(step) => s.step = Some(step),
        TrimMsg::Done(run) => {
            let ended = ended(&run);
            let said = match &ended.journal_kept {
                Some(kept) => format!(
                    "TRIM check: the put-back did not finish; disktriage restore --capacity \
                     {kept}"
                ),
                None => format!("TRIM check done: {}", ended.sentence),
            };
            s.phase = Phase::Ended;
            s.scroll = 0;
            s.ended = Some(Box::new(ended));
            app.info(neutralize_controls(&said));
        }
        TrimMsg::Failed(why) => {
            let why = neutralize_controls(&why);
            s.phase = Phase::Refused(why.clone());
            app.info(format!("TRIM check not started: {why}"));
            app.error(format!("TRIM check: {why}"));
        }
    }
    Vec::new()
}

/// A run as the screen keeps it: the CLI's report, laid out with a column of margin.
fn ended(run: &TrimRun) -> Ended {
    Ended {
        word: verdict_word(&run.end),
        sentence: verdict_sentence(&run.end),
        lines: render_text(&run.report(), DEFAULT_WIDTH - 2)
            .lines()
            .map(str::to_string)
            .collect(),
        warnings: run.warnings.clone(),
        journal_kept: run.journal_kept.clone(),
    }
}

// ---- drawing (reads the app, never changes it) ----

/// The steps in their order, each with the first `TrimStep` that begins it (save and write
/// go together, a MiB at a time).
const STEPS: [&str; 6] = [
    "save the range in the journal",
    "write the pattern",
    "read the pattern back",
    "discard the range",
    "read the range back",
    "put back what was saved",
];

/// The steps under way now (indices into `STEPS`).
fn under_way(step: Option<TrimStep>) -> std::ops::Range<usize> {
    match step {
        None => 0..0,
        Some(TrimStep::SaveAndWrite { .. }) => 0..2,
        Some(TrimStep::ReadPattern) => 2..3,
        Some(TrimStep::Discard) => 3..4,
        Some(TrimStep::ReadBack) => 4..5,
        Some(TrimStep::PutBack) => 5..6,
    }
}

fn draw(app: &App, frame: &mut Frame, area: Rect) {
    let s = &app.screens.trim;
    let title = |what: &str| {
        Line::from(TextSpan::styled(
            format!("TRIM check of {}{what}", s.device),
            theme::title(),
        ))
    };
    let lines: Vec<Line> = match (&s.phase, &s.ended) {
        (Phase::Idle, _) => vec![Line::raw(
            "No TRIM check yet: T on Devices finds out whether a discard on the selected \
             device does what it claims (it writes and puts back: its name is asked first).",
        )],
        (Phase::Ended, Some(e)) => ended_lines(e, s.scroll, title("")),
        (Phase::Refused(why), _) => vec![
            title(""),
            Line::from(TextSpan::styled(
                format!("not started, nothing was written: {why}"),
                theme::bad(),
            )),
        ],
        _ => running_lines(app, s, title),
    };
    frame.render_widget(
        Paragraph::new(lines).wrap(Wrap { trim: false }),
        area.inner(ratatui::layout::Margin::new(1, 0)),
    );
}

fn running_lines(
    app: &App,
    s: &TrimScreen,
    title: impl Fn(&str) -> Line<'static>,
) -> Vec<Line<'static>> {
    let elapsed = app.now.saturating_sub(s.started);
    let state = if s.phase == Phase::Stopping {
        TextSpan::styled(
            "stopping: what was written is put back, then it ends",
            theme::warn(),
        )
    } else {
        TextSpan::styled(
            "overwrites a scratch range, saved first and put back at the end",
            theme::dim(),
        )
    };
    let now = under_way(s.step);
    let mut lines = vec![
        title(&format!(": {} elapsed, writes", clock(elapsed))),
        Line::from(state),
        Line::raw(""),
    ];
    for (i, what) in STEPS.iter().enumerate() {
        let (mark, style) = if now.contains(&i) {
            ("now ", theme::accent())
        } else if i < now.start {
            ("done", theme::good())
        } else {
            ("    ", theme::dim())
        };
        lines.push(Line::from(vec![
            TextSpan::styled(format!("  {mark}  "), style),
            TextSpan::styled((*what).to_string(), style),
        ]));
    }
    let step = s
        .step
        .map_or_else(|| "checking the device".to_string(), TrimStep::words);
    lines.extend([
        Line::raw(""),
        Line::from(TextSpan::styled(step, theme::accent())),
        Line::raw(""),
        Line::from(TextSpan::styled(
            format!("journal: {}", s.journal.display()),
            theme::dim(),
        )),
    ]);
    lines
}

/// The verdict's colour: a broken claim or a refused discard is bad, an unknown a warning.
fn verdict_style(word: &str) -> Style {
    match word {
        "works" | "kept" | "no-discard" => theme::good(),
        "broken" | "refused" => theme::bad(),
        _ => theme::warn(),
    }
}

/// The verdict first, what to do if the put-back did not finish, then the report.
fn ended_lines(e: &Ended, scroll: u16, title: Line<'static>) -> Vec<Line<'static>> {
    let mut lines = vec![
        title,
        Line::from(vec![
            TextSpan::raw("Verdict: "),
            TextSpan::styled(neutralize_controls(&e.sentence), verdict_style(e.word)),
        ]),
    ];
    if let Some(kept) = &e.journal_kept {
        lines.push(Line::from(TextSpan::styled(
            format!(
                "The put-back did not finish: the saved bytes are kept in {kept}; run \
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
