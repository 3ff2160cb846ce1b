//! The flush check screen (`F` on Devices, after the device's name is typed): the timing
//! check of `disktriage flushcheck` (`flow::flushcheck::FlushJob`) on the selected device.
//!
//! The screen shows the step, a bar and the elapsed time; `x` stops it and the cache is put
//! back. At the end: the verdict, what to do, and the CLI's report; `h` opens the Health view.

use std::time::Duration;

use ratatui::Frame;
use ratatui::crossterm::event::KeyCode;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span as TextSpan};
use ratatui::widgets::{Paragraph, Wrap};

use super::super::keys::{Action, Binding, Scope};
use super::super::{App, Screen};
use super::{JobHook, ScreenDef};
use crate::draw::clock;
use crate::event::{Cmd, FlushDone, FlushMsg, JobMsg, JobOrder};
use crate::flow::flushcheck::{self as job, FlushOrder};
use crate::theme;

/// Where the check is.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Phase {
    /// No check this session.
    #[default]
    Idle,
    Running,
    /// Stop asked for; the worker puts the cache back and ends.
    Stopping,
    /// The verdict is in.
    Ended,
    /// Refused, failed or stopped: why.
    Failed(String),
}

/// The screen's state.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct FlushScreen {
    pub phase: Phase,
    pub device: String,
    /// The device as it was when the check started (`h` refuses another under the name).
    pub chosen: Option<crate::model::ChosenDevice>,
    /// The step under way and how far the check is (0.0 ..= 1.0).
    pub step: String,
    pub fraction: f64,
    /// The app's clock when it started.
    pub started: Duration,
    /// The app's clock when the step or the share last moved (see `waiting`).
    pub moved: Duration,
    pub done: Option<Box<FlushDone>>,
    /// The first report line shown.
    pub scroll: u16,
}

impl FlushScreen {
    /// A check is under way (stopping included: its worker still writes or restores).
    pub fn running(&self) -> bool {
        matches!(self.phase, Phase::Running | Phase::Stopping)
    }
}

const KEYS: &[Binding] = &[
    Binding {
        scope: Scope::On(Screen::Flush),
        keys: &[KeyCode::Char('x')],
        names: "x",
        label: Some("stop"),
        help: "stop the flush check (the write cache is put back)",
        action: Action::Stop,
    },
    Binding {
        scope: Scope::On(Screen::Flush),
        keys: &[KeyCode::Char('h')],
        names: "h",
        label: Some("health"),
        help: "the device's health: SMART, error log",
        action: Action::ReadSmart,
    },
    Binding {
        scope: Scope::On(Screen::Flush),
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
        scope: Scope::On(Screen::Flush),
        keys: &[KeyCode::Esc],
        names: "Esc",
        label: Some("back"),
        help: "back to Devices (stops a running check)",
        action: Action::Back,
    },
];

/// The registry entry.
pub const SCREEN: ScreenDef = ScreenDef {
    title: "Flush",
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

/// The flush check job's news.
fn on_msg(app: &mut App, msg: JobMsg) -> Vec<Cmd> {
    if let Ok(m) = msg.take::<FlushMsg>() {
        app.flush_msg(m);
    }
    Vec::new()
}

fn works_now(app: &App, action: Action) -> bool {
    let s = &app.screens.flush;
    match action {
        Action::Stop => s.phase == Phase::Running,
        Action::ReadSmart => !s.running() && !s.device.is_empty(),
        Action::Page => s.done.is_some(),
        _ => true,
    }
}

fn act(app: &mut App, action: Action, code: KeyCode) -> Vec<Cmd> {
    match action {
        Action::Stop => return app.stop_flushcheck(),
        // `leave` stops a running check.
        Action::Back => app.screen = Screen::Devices,
        Action::ReadSmart => {
            let device = app.screens.flush.device.clone();
            let chosen = app.screens.flush.chosen.clone();
            return app.open_health_of(device, chosen.as_ref());
        }
        Action::Page => {
            let step = match code {
                KeyCode::PageUp | KeyCode::PageDown => 10,
                _ => 1,
            };
            let dir = super::super::keys::direction(code);
            let s = &mut app.screens.flush;
            s.scroll = super::super::scroll(s.scroll, dir, step).min(200);
        }
        _ => {}
    }
    Vec::new()
}

/// Leaving the screen stops a running check: nobody watches it any more.
fn leave(app: &mut App) -> Vec<Cmd> {
    if app.screens.flush.phase == Phase::Running {
        return app.stop_flushcheck();
    }
    Vec::new()
}

impl App {
    /// `F` on Devices: asks for the selected device's name (the check writes), then starts
    /// it. While one runs, the key shows it.
    pub(in crate::app) fn ask_flushcheck(&mut self) -> Vec<Cmd> {
        if self.screens.flush.running() {
            self.screen = Screen::Flush;
            self.info("a flush check runs: x stops it before another starts");
            return Vec::new();
        }
        if self.running() {
            self.error("a test is running (x on Run stops it): no flush check meanwhile");
            return Vec::new();
        }
        let Some(d) = self.devices.selected() else {
            let why = self.no_selection();
            self.info(why);
            return Vec::new();
        };
        self.overlay = Some(super::super::Overlay::ConfirmFlush(
            super::super::dialogs::confirm_flush::ConfirmFlush {
                device: d.name.clone(),
                path: d.path.clone(),
                typed: String::new(),
                wrong: false,
            },
        ));
        Vec::new()
    }

    /// The name was typed: the check starts.
    pub(in crate::app) fn start_flushcheck(
        &mut self,
        device: String,
        path: std::path::PathBuf,
        confirmation: String,
    ) -> Vec<Cmd> {
        let chosen = self.devices.chosen(&device);
        self.screens.flush = FlushScreen {
            phase: Phase::Running,
            device: device.clone(),
            chosen,
            step: "checking the device".into(),
            started: self.now,
            moved: self.now,
            ..FlushScreen::default()
        };
        self.screen = Screen::Flush;
        self.info(format!("flush check of {device}: writing"));
        vec![Cmd::StartJob(JobOrder::new(FlushOrder {
            device,
            path,
            confirmation,
            chosen: None,
        }))]
    }

    fn stop_flushcheck(&mut self) -> Vec<Cmd> {
        let s = &mut self.screens.flush;
        if s.phase != Phase::Running {
            return Vec::new();
        }
        s.phase = Phase::Stopping;
        self.info("stopping the flush check: the write cache is put back");
        vec![Cmd::StopJob(job::NAME)]
    }

    /// The worker's news.
    fn flush_msg(&mut self, msg: FlushMsg) {
        let s = &mut self.screens.flush;
        if !s.running() {
            return;
        }
        match msg {
            FlushMsg::Progress { step, fraction } => {
                let fraction = fraction.clamp(0.0, 1.0);
                if step != s.step || fraction != s.fraction {
                    s.moved = self.now;
                }
                s.step = step;
                s.fraction = fraction;
            }
            FlushMsg::Finished(done) => {
                let word = verdict_word(&done.verdict);
                s.phase = Phase::Ended;
                s.scroll = 0;
                s.done = Some(done);
                if self.screen == Screen::Flush {
                    self.info(format!("flush check done: {word}"));
                }
            }
            FlushMsg::Failed(why) => {
                s.phase = Phase::Failed(why.clone());
                // The status line said "writing" until now.
                self.info(format!("flush check ended, nothing more written: {why}"));
                self.error(format!("flush check: {why}"));
            }
        }
    }
}

// ---- drawing (reads the app, never changes it) ----

/// The verdict as words that say it without colour.
pub fn verdict_word(verdict: &str) -> &'static str {
    match verdict {
        "waits-for-medium" => "commits WAIT for the medium",
        "volatile-cache" => "a VOLATILE CACHE acknowledges commits",
        _ => "timing cannot tell (UNKNOWN)",
    }
}

fn verdict_style(verdict: &str) -> ratatui::style::Style {
    match verdict {
        "waits-for-medium" => theme::good(),
        "volatile-cache" => theme::bad(),
        _ => theme::warn(),
    }
}

/// "  waiting 8 s" once nothing has moved for 2 s (a write or flush the device does not
/// answer); empty before.
fn waiting(still: Duration) -> String {
    if still >= Duration::from_secs(2) {
        format!("  waiting {} s", still.as_secs())
    } else {
        String::new()
    }
}

fn draw(app: &App, frame: &mut Frame, area: Rect) {
    let s = &app.screens.flush;
    let title = |what: &str| {
        Line::from(TextSpan::styled(
            format!("Flush check of {}{what}", s.device),
            theme::title(),
        ))
    };
    let lines: Vec<Line> = match (&s.phase, &s.done) {
        (Phase::Idle, _) => vec![Line::raw(
            "No flush check yet: F on Devices times durable commits on the selected device \
             (it writes: its name is asked first).",
        )],
        (Phase::Ended, Some(done)) => {
            let mut lines = vec![
                title(""),
                Line::from(vec![
                    TextSpan::raw("Verdict: "),
                    TextSpan::styled(verdict_word(&done.verdict), verdict_style(&done.verdict)),
                ]),
                Line::raw(done.sentence.clone()),
                Line::from(TextSpan::styled(
                    format!("Next: {}", done.next_step),
                    theme::accent(),
                )),
                Line::raw(""),
            ];
            lines.extend(
                done.lines
                    .iter()
                    .skip(usize::from(s.scroll))
                    .map(|l| Line::raw(l.clone())),
            );
            lines
        }
        (Phase::Failed(why), _) => vec![
            title(""),
            Line::from(TextSpan::styled(why.clone(), theme::bad())),
        ],
        _ => {
            let elapsed = app.now.saturating_sub(s.started);
            let bar_w = if area.width >= 120 { 40 } else { 20 };
            let filled = ((s.fraction * bar_w as f64).round() as usize).min(bar_w);
            let state = if s.phase == Phase::Stopping {
                TextSpan::styled(
                    "stopping: the write cache is put back, then it ends",
                    theme::warn(),
                )
            } else {
                TextSpan::styled(
                    "durable 4 KiB commits, 64 MiB then a flush, the write cache off and back",
                    theme::dim(),
                )
            };
            vec![
                title(&format!(": {} elapsed, writes", clock(elapsed))),
                Line::from(state),
                Line::raw(""),
                Line::from(vec![
                    TextSpan::styled("█".repeat(filled), theme::accent()),
                    TextSpan::styled("░".repeat(bar_w - filled), theme::dim()),
                    TextSpan::raw(format!(
                        " {:>3}% {}{}",
                        (s.fraction * 100.0).round() as u32,
                        s.step,
                        waiting(app.now.saturating_sub(s.moved))
                    )),
                ]),
            ]
        }
    };
    // One column of margin on each side, so wrapped lines keep the indent of the first.
    let inner = Rect {
        x: area.x.saturating_add(1),
        width: area.width.saturating_sub(2),
        ..area
    };
    frame.render_widget(Paragraph::new(lines).wrap(Wrap { trim: false }), inner);
}
