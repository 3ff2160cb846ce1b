//! Make a scheduler permanent: the udev rule and where it goes, or why there can be none;
//! Enter writes it, `a` switches between this disk and every disk of its kind.

use ratatui::Frame;
use ratatui::crossterm::event::KeyCode;
use ratatui::text::{Line, Span};

use super::super::App;
use super::{DialogDef, Intent, Next, Overlay, Place, close, dialog, stay, wrap_text};
use crate::event::Cmd;
use crate::persist::{Persisted, RuleScope, in_class_kernels};
use crate::theme;

/// The device, the scheduler, the rule's reach and the rule planned (or why there is none).
#[derive(Debug, Clone, PartialEq)]
pub struct Persist {
    pub device: String,
    pub scheduler: String,
    /// Every disk of the device's class instead of the device alone.
    pub class: bool,
    pub plan: Result<Box<Persisted>, String>,
}

pub const DIALOG: DialogDef<Persist> = DialogDef {
    key,
    draw: show,
    devices: |s| vec![s.device.as_str()],
};

fn key(s: Persist, code: KeyCode) -> Next {
    match (code, s.plan) {
        (KeyCode::Char('y') | KeyCode::Enter, Ok(p)) => {
            close(Intent::Cmd(Cmd::WritePersist(Box::new(p.rule))))
        }
        (KeyCode::Char('a'), _) if s.class || in_class_kernels(&s.device) => {
            close(Intent::Cmd(Cmd::PlanPersist {
                device: s.device,
                scheduler: s.scheduler,
                class: !s.class,
                chosen: None,
            }))
        }
        (KeyCode::Esc | KeyCode::Char('n') | KeyCode::Char('q'), _) => {
            close(Intent::Info("no udev rule written".into()))
        }
        (_, plan) => stay(Overlay::Persist(Persist { plan, ..s })),
    }
}

/// The planned rule, its path and the keys; or why there can be none.
fn show(s: &Persist, _: &App, frame: &mut Frame, at: Place) {
    let (area, device, scheduler) = (at.area, s.device.as_str(), s.scheduler.as_str());
    let w: u16 = if area.width >= 110 { 104 } else { 76 };
    let inner = usize::from(w.min(area.width).saturating_sub(2)).max(20);
    let mut lines = Vec::new();
    let other = if s.class {
        "a: for this disk only, "
    } else if in_class_kernels(device) {
        "a: for every disk of its kind instead, "
    } else {
        ""
    };
    match &s.plan {
        Ok(p) => {
            let what = match &p.rule.scope {
                RuleScope::Disk { identity } => format!(
                    "{scheduler} at every boot for this disk ({device} now), matched by its {}:",
                    identity.kind()
                ),
                scope => format!(
                    "{scheduler} at every boot for {} (chosen on {device}):",
                    crate::report::sched::rule_scope_words(scope)
                ),
            };
            for l in wrap_text(&what, inner) {
                lines.push(Line::from(Span::styled(l, theme::title())));
            }
            // The path and the rule exactly as written: cut at the width, never re-spaced (a
            // t10 id holds runs of spaces that are part of the match).
            lines.push(Line::from("Writes:"));
            for l in chunks(&p.path.display().to_string(), inner) {
                lines.push(Line::from(l));
            }
            for rule_line in p.rule.text.lines().filter(|l| !l.starts_with('#')) {
                for l in chunks(rule_line, inner) {
                    lines.push(Line::from(Span::styled(l, theme::accent())));
                }
            }
            for l in wrap_text(
                &format!(
                    "The running scheduler is unchanged ({} now).",
                    p.active_now.as_deref().unwrap_or("none")
                ),
                inner,
            ) {
                lines.push(Line::from(Span::styled(l, theme::dim())));
            }
            lines.push(Line::from(Span::styled(
                format!("Enter writes it, {other}Esc cancels"),
                theme::dim(),
            )));
        }
        Err(why) => {
            for l in wrap_text(why, inner) {
                lines.push(Line::from(Span::styled(l, theme::bad())));
            }
            lines.push(Line::from(Span::styled(
                format!("{other}Esc closes"),
                theme::dim(),
            )));
        }
    }
    dialog(frame, area, "Make the scheduler permanent", lines, w);
}

/// `text` in pieces of `width` characters, control characters shown as `?`.
fn chunks(text: &str, width: usize) -> Vec<String> {
    let chars: Vec<char> = crate::model::text::neutralize_controls(text)
        .chars()
        .collect();
    chars
        .chunks(width.max(1))
        .map(|c| c.iter().collect())
        .collect()
}
