//! The health view of one drive (`h` on Devices): the self-test state and progress, then the
//! text `disktriage smart` prints, scrolled; `t`/`T` start a self-test, `x` aborts one. The
//! state is `app::health`'s.

use ratatui::Frame;
use ratatui::crossterm::event::KeyCode;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Gauge, Paragraph, Wrap};

use super::super::devices::DriveState;
use super::super::keys::{self, Action, Binding, Scope, UP_DOWN, bind};
use super::super::{App, Screen, scroll};
use super::{ScreenDef, nothing};
use crate::event::Cmd;
use crate::model::{SelfTestKind, SelfTestStatus, Verdict};
use crate::report::smart::{render_log_entries_text, render_text, self_test_line};
use crate::theme;

const KEYS: &[Binding] = &[
    bind(
        Scope::On(Screen::Health),
        UP_DOWN,
        "Up/Down",
        None,
        "scroll",
        Action::Move,
    ),
    bind(
        Scope::On(Screen::Health),
        &[KeyCode::PageUp, KeyCode::PageDown, KeyCode::Char(' ')],
        "PageUp/PageDown",
        None,
        "scroll a page",
        Action::Page,
    ),
    bind(
        Scope::On(Screen::Health),
        &[KeyCode::Home],
        "Home",
        None,
        "top",
        Action::Ends,
    ),
    bind(
        Scope::On(Screen::Health),
        &[KeyCode::Char('t')],
        "t",
        Some("short"),
        "a short self-test, no data changed (asks first)",
        Action::SelfTestShort,
    ),
    bind(
        Scope::On(Screen::Health),
        &[KeyCode::Char('T')],
        "T",
        Some("long"),
        "a long self-test: hours, slower I/O meanwhile (asks)",
        Action::SelfTestLong,
    ),
    bind(
        Scope::On(Screen::Health),
        &[KeyCode::Char('x')],
        "x",
        Some("abort"),
        "abort the running self-test",
        Action::SelfTestAbort,
    ),
    bind(
        Scope::On(Screen::Health),
        &[KeyCode::Char('r')],
        "r",
        Some("reread"),
        "read SMART and logs again",
        Action::Refresh,
    ),
    bind(
        Scope::On(Screen::Health),
        &[KeyCode::Esc],
        "Esc",
        Some("back"),
        "back to Devices",
        Action::Back,
    ),
];

pub const SCREEN: ScreenDef = ScreenDef {
    title: "Health",
    keys: KEYS,
    act,
    works_now,
    draw,
    leave: nothing,
    job: None,
};

/// A device with no drive behind it (loop, zram, dm) has no SMART, logs or self-tests: the
/// view offers none of their keys.
fn works_now(app: &App, action: Action) -> bool {
    match action {
        Action::SelfTestShort | Action::SelfTestLong | Action::SelfTestAbort | Action::Refresh => {
            !app.health
                .device
                .as_deref()
                .and_then(|d| app.devices.find(d))
                .is_some_and(|d| d.transport.is_virtual())
        }
        _ => true,
    }
}

/// What its keys do.
fn act(app: &mut App, action: Action, code: KeyCode) -> Vec<Cmd> {
    let dir = keys::direction(code);
    let Some(device) = app.health.device.clone() else {
        app.screen = Screen::Devices;
        return Vec::new();
    };
    match action {
        Action::Move => app.health.scroll = scroll(app.health.scroll, dir, 1),
        Action::Page => app.health.scroll = scroll(app.health.scroll, dir, 10),
        Action::Ends => app.health.scroll = 0,
        Action::Refresh => return app.read_health(device),
        Action::Back => app.screen = Screen::Devices,
        Action::SelfTestShort => app.ask_self_test(device, SelfTestKind::Short),
        Action::SelfTestLong => app.ask_self_test(device, SelfTestKind::Long),
        Action::SelfTestAbort => {
            if app.self_test_refusal(&device).is_none() {
                return vec![Cmd::StartSelfTest {
                    device,
                    kind: SelfTestKind::Abort,
                    chosen: None,
                }];
            }
            app.ask_self_test(device, SelfTestKind::Abort);
        }
        _ => {}
    }
    Vec::new()
}

/// The drive's self-test line, with its progress or keys, above its SMART report and logs.
fn draw(app: &App, frame: &mut Frame, area: Rect) {
    let Some(name) = app.health.device.as_deref() else {
        return;
    };
    let dev = app.devices.find(name);
    let title = match dev {
        Some(d) => format!(
            " Health of {name} ({}{}) ",
            d.transport,
            d.description()
                .map(|m| format!(", {m}"))
                .unwrap_or_default()
        ),
        None => format!(" Health of {name} (gone from the device list) "),
    };
    crate::draw::title(&title, area);
    let block = Block::default()
        .borders(Borders::ALL)
        .title(Span::styled(title, theme::title()));
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let [top, gauge_area, _, body] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Length(1),
        Constraint::Length(1),
        Constraint::Min(0),
    ])
    .areas(inner);

    let st = app.devices.drives.get(name);
    if dev.is_some_and(|d| d.transport.is_virtual()) {
        frame.render_widget(
            Paragraph::new("No drive behind this device: no SMART, no logs, no self-tests.")
                .style(theme::dim()),
            top,
        );
        return;
    }
    draw_self_test(st, frame, top, gauge_area);
    let lines = report_lines(st, usize::from(body.width));
    draw_report(app, lines, frame, area, body);
}

/// The self-test state on `top`; below it, on `gauge_area`, the running test's progress or
/// the keys that start one.
fn draw_self_test(st: Option<&DriveState>, frame: &mut Frame, top: Rect, gauge_area: Rect) {
    // The drive's status byte does not say which test runs; what this session started does.
    let self_test = st.and_then(|s| s.self_test.as_ref()).map(|r| {
        r.as_ref().map(|status| {
            let mut status = status.clone();
            if let (Some(r), Some(w)) = (&mut status.running, st.and_then(|s| s.watch.as_ref()))
                && r.kind.is_none()
            {
                r.kind = w.kind.map(|k| k.to_string());
            }
            status
        })
    });
    let line = match &self_test {
        None if st.is_some_and(|s| s.reading) => {
            Span::styled("Self-test: reading ...", theme::dim())
        }
        None => Span::styled("Self-test: not read (r reads it)", theme::dim()),
        Some(Err(e)) => Span::styled(format!("Self-test: {e}"), theme::warn()),
        Some(Ok(s)) => Span::raw(format!("Self-test: {}", self_test_line(s))),
    };
    match &self_test {
        Some(Ok(s)) if s.is_running() => {
            crate::draw::text(&line.content, top.width.into());
            frame.render_widget(Paragraph::new(Line::from(line)), top);
            progress(s, frame, gauge_area);
        }
        Some(Ok(s)) if s.supported => {
            crate::draw::text(&line.content, top.width.into());
            frame.render_widget(Paragraph::new(Line::from(line)), top);
            let est = |m: Option<u32>| m.map_or(String::new(), |m| format!(" (about {m} min)"));
            frame.render_widget(
                Paragraph::new(format!(
                    "t short{}  T long{}  x abort",
                    est(s.short_minutes),
                    est(s.long_minutes)
                ))
                .style(theme::dim()),
                gauge_area,
            );
        }
        // No keys to show: the reason may take both lines.
        _ => {
            let both = Rect { height: 2, ..top };
            frame.render_widget(
                Paragraph::new(Line::from(line)).wrap(Wrap { trim: false }),
                both,
            );
        }
    }
}

/// The SMART report (its first line in the verdict's colour), a blank line, then the drive's
/// logs, each `width` wide or a word on where it stands.
fn report_lines(st: Option<&DriveState>, width: usize) -> Vec<Line<'static>> {
    let mut lines: Vec<Line<'static>> = Vec::new();
    match st.and_then(|s| s.health.as_ref()) {
        None if st.is_some_and(|s| s.reading) => {
            lines.push(Line::from(Span::styled("reading SMART ...", theme::dim())))
        }
        None => lines.push(Line::from(Span::styled(
            "SMART not read (r reads it)",
            theme::dim(),
        ))),
        Some(Err(e)) => lines.push(Line::from(Span::styled(
            format!("SMART: {e}"),
            theme::warn(),
        ))),
        Some(Ok(h)) => {
            let style = match h.verdict {
                Verdict::Passed => theme::good(),
                Verdict::Warning => theme::warn(),
                Verdict::Failed => theme::bad(),
                Verdict::Unavailable => theme::dim(),
            };
            for (i, l) in render_text(h, None, width).lines().enumerate() {
                if i == 0 {
                    lines.push(Line::from(Span::styled(l.to_string(), style)));
                } else {
                    lines.push(Line::from(l.to_string()));
                }
            }
        }
    }
    lines.push(Line::from(""));
    match st.and_then(|s| s.logs.as_ref()) {
        None if st.is_some_and(|s| s.reading) => lines.push(Line::from(Span::styled(
            "reading the logs ...",
            theme::dim(),
        ))),
        None => {}
        Some(Err(e)) => lines.push(Line::from(Span::styled(
            format!("Drive logs: {e}"),
            theme::warn(),
        ))),
        Some(Ok(logs)) => {
            // The self-test state is drawn above, with its keys and progress.
            for l in render_log_entries_text(logs, width).lines() {
                lines.push(Line::from(l.to_string()));
            }
        }
    }
    lines
}

/// The report in `body`, scrolled as far as it goes, with how much is out of sight on the lower
/// edge of `area`.
fn draw_report(app: &App, lines: Vec<Line<'static>>, frame: &mut Frame, area: Rect, body: Rect) {
    let max_scroll = (lines.len() as u16).saturating_sub(body.height);
    let top = app.health.scroll.min(max_scroll);
    // The lower edge says how many lines are out of sight (`draw::scrolled`).
    let more = crate::draw::scrolled(lines.len(), top.into(), body.height.into());
    crate::draw::title(&more, area);
    if !more.is_empty() {
        let edge = Rect {
            x: area.x + 1,
            y: area.bottom().saturating_sub(1),
            width: (more.chars().count() as u16).min(area.width.saturating_sub(2)),
            height: 1,
        };
        frame.render_widget(Paragraph::new(Span::styled(more, theme::dim())), edge);
    }
    frame.render_widget(
        Paragraph::new(lines)
            .wrap(Wrap { trim: false })
            .scroll((top, 0)),
        body,
    );
}

/// The running self-test's progress bar (ATA reports it in steps of 10 %).
fn progress(s: &SelfTestStatus, frame: &mut Frame, area: Rect) {
    let Some(r) = &s.running else { return };
    let label = format!(
        "{} self-test {}% done, read every 5 s; x aborts",
        r.kind.as_deref().unwrap_or("a"),
        r.percent_done
    );
    let gauge = Gauge::default()
        .ratio((f64::from(r.percent_done) / 100.0).clamp(0.0, 1.0))
        .label(label)
        .use_unicode(false)
        .gauge_style(theme::accent());
    frame.render_widget(gauge, area);
}
