//! The dialogs, registered in one table. A dialog is a component, as a screen is
//! (`app::screens`): its state, keys and drawing in one file under `app/dialogs/`, and one line
//! in `dialogs!` below, which declares its `Overlay` variant and hands the app its `DialogDef`.
//!
//! A dialog lists its keys in its own text. Here too: the frame every dialog draws in and the
//! lines the write confirmations share.

pub mod confirm;
pub mod confirm_capacity;
pub mod confirm_flush;
pub mod confirm_several;
pub mod confirm_trimcheck;
pub mod drive_cache;
pub mod edit;
pub mod error;
pub mod export;
pub mod file_target;
pub mod help;
pub mod message;
pub mod orphans;
pub mod persist;
pub mod quit_confirm;
pub mod quit_discard;
pub mod report;
pub mod retest;
pub mod scheduler;
pub mod self_test;
pub mod sweep;

use ratatui::Frame;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers, ModifierKeyCode};
use ratatui::layout::{Constraint, Flex, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Wrap};

use super::App;
use crate::bench::analysis::setting_sweep::SweepKind;
use crate::bench::exec::session::RunRequest;
use crate::bench::plan::params::Param as Field;
use crate::event::{Cmd, JobOrder};
use crate::report::export::ExportFormat;
use crate::{draw, theme};

/// Everything the app needs to know about one dialog, whose state is `S`.
pub struct DialogDef<S: 'static> {
    /// The dialog to show next (itself changed, or none) and what the key asks of the app.
    pub key: fn(S, KeyCode) -> Next,
    /// Draws it over the screen: reads the app, never changes it.
    pub draw: fn(&S, &App, &mut Frame, Place),
    /// The devices it would act on (withdrawn when one of them goes away).
    pub devices: for<'a> fn(&'a S) -> Vec<&'a str>,
}

/// Where a dialog draws.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Place {
    /// The whole terminal.
    pub area: Rect,
    /// The screen row of the device the dialog is about, left in sight (`clear_of`).
    pub keep: Option<u16>,
}

/// Declares the dialogs: each line `Variant[(State)] => its DialogDef,` makes the `Overlay`
/// variant and its arm of `Overlay::key`, `Overlay::draw` and `Overlay::devices`.
macro_rules! dialogs {
    (@bind $variant:ident $s:ident $state:ty) => { Overlay::$variant($s) };
    (@bind $variant:ident $s:ident) => { Overlay::$variant };
    (@val $s:ident $state:ty) => { $s };
    (@val $s:ident) => { () };
    (@ref $s:ident $state:ty) => { $s };
    (@ref $s:ident) => { &() };
    ($( $(#[$doc:meta])* $variant:ident $(($state:ty))? => $def:expr, )*) => {
        /// A dialog over the screen; it takes the keys while open.
        #[derive(Debug, Clone, PartialEq)]
        pub enum Overlay {
            $( $(#[$doc])* $variant $(($state))?, )*
        }

        impl Overlay {
            /// The dialog's answer to a key.
            pub fn key(self, k: KeyEvent) -> Next {
                let code = text_key(k);
                match self {
                    $( dialogs!(@bind $variant state $($state)?) =>
                        ($def.key)(dialogs!(@val state $($state)?), code), )*
                }
            }

            /// Draws the dialog over the screen.
            pub fn draw(&self, app: &App, frame: &mut Frame, at: Place) {
                match self {
                    $( dialogs!(@bind $variant state $($state)?) =>
                        ($def.draw)(dialogs!(@ref state $($state)?), app, frame, at), )*
                }
            }

            /// The devices the dialog would act on.
            pub fn devices(&self) -> Vec<&str> {
                match self {
                    $( dialogs!(@bind $variant state $($state)?) =>
                        ($def.devices)(dialogs!(@ref state $($state)?)), )*
                }
            }
        }
    };
}

dialogs! {
    /// Every key (`keys::BINDINGS`), scrolled.
    Help(help::Help) => help::DIALOG,
    /// An error to acknowledge.
    Error(String) => error::DIALOG,
    /// Type the device's name to allow a write test.
    Confirm(confirm::Confirm) => confirm::DIALOG,
    /// The device's I/O scheduler: pick one.
    Scheduler(scheduler::Scheduler) => scheduler::DIALOG,
    /// Export a run: JSON, CSV or the fio command line.
    Export(export::Export) => export::DIALOG,
    /// Typing a value for a field of the test form.
    Edit(edit::Edit) => edit::DIALOG,
    /// `q` during a run: stop it and quit?
    QuitConfirm => quit_confirm::DIALOG,
    /// `q` with results not exported: quit and discard them?
    QuitDiscard => quit_discard::DIALOG,
    /// The drive's own write cache: state, kernel view, switch.
    DriveCache(drive_cache::DriveCache) => drive_cache::DIALOG,
    /// Changes a killed or crashed session left behind: restore them?
    Orphans(orphans::Orphans) => orphans::DIALOG,
    /// Information to acknowledge (what a restore did).
    Message(message::Message) => message::DIALOG,
    /// `R` after a switch on a device the last test did not run on: run it there?
    Retest(retest::Retest) => retest::DIALOG,
    /// A finished run's text report, scrolled.
    Report(report::Report) => report::DIALOG,
    /// `f` on Devices: the file system a test file would go on, its free space first.
    FileTarget(Box<crate::event::FileTarget>) => file_target::DIALOG,
    /// Type every device's name to allow a write test on several devices at once.
    ConfirmSeveral(confirm_several::ConfirmSeveral) => confirm_several::DIALOG,
    /// Make a scheduler permanent: the udev rule and its path (or why none), to confirm.
    Persist(persist::Persist) => persist::DIALOG,
    /// The last sweep's table and bars (`App::sweep`), scrolled.
    Sweep(sweep::Sweep) => sweep::DIALOG,
    /// Type the device's name to allow the flush check (it writes).
    ConfirmFlush(confirm_flush::ConfirmFlush) => confirm_flush::DIALOG,
    /// The capacity probe: type the device's name.
    ConfirmCapacity(confirm_capacity::ConfirmCapacity) => confirm_capacity::DIALOG,
    /// The TRIM check: type the device's name.
    ConfirmTrim(confirm_trimcheck::ConfirmTrim) => confirm_trimcheck::DIALOG,
    /// Start a self-test? What it costs, and y/Enter to start it.
    SelfTest(self_test::SelfTest) => self_test::DIALOG,
}

/// The setting a dialog switches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Setting {
    Scheduler,
    DriveCache,
}

/// What a dialog's key asks the app to do once the dialog is closed or changed.
#[derive(Debug, Clone, PartialEq)]
pub enum Intent {
    /// Hand a command to the loop.
    Cmd(Cmd),
    /// A line for the status bar.
    Info(String),
    /// Start (or confirm) a run.
    Launch {
        request: Box<RunRequest>,
        repeats: u32,
        /// Swept over this setting.
        sweep: Option<SweepKind>,
    },
    /// Start the write test on several devices waiting for these typed names.
    LaunchSeveral(String),
    /// Start the flush check: the device's name was typed.
    LaunchFlush {
        device: String,
        path: std::path::PathBuf,
        confirmation: String,
    },
    /// Start a confirmed job: `start` shows its screen and sends the order.
    StartJob {
        start: Starter,
        order: JobOrder,
    },
    /// Make the last scheduler sweep's winner permanent (the udev rule dialog).
    PersistSweepWinner,
    /// Run a record's test on the device whose setting changed.
    RetestOn {
        device: String,
        record: usize,
    },
    /// Rerun a record where it ran.
    RerunWhereItRan(usize),
    /// Keep a switched setting after exit.
    Keep(Setting, String),
    /// Export a record.
    Export {
        record: usize,
        format: ExportFormat,
    },
    /// Export the first unsaved record before quitting.
    ExportFirst,
    /// Send the Test screen's runs to a new file on a mounted file system.
    UseFileTarget(Box<crate::event::FileTarget>),
    /// Set a field of the test form to a typed value (checked against the device).
    SetValue {
        field: Field,
        text: String,
    },
    Quit,
}

/// What shows a confirmed job's screen and sends its order: handed to the dialog, which
/// cannot import the screen that opens it (a cycle).
#[derive(Clone, Copy)]
pub struct Starter(pub fn(&mut super::App, JobOrder) -> Vec<Cmd>);

impl PartialEq for Starter {
    /// The order says what is started; the function only shows it.
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl std::fmt::Debug for Starter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Starter")
    }
}

/// The dialog after a key, and what the key asks for.
pub type Next = (Option<Overlay>, Option<Intent>);

/// The dialog stays open, as `o`.
pub(super) fn stay(o: Overlay) -> Next {
    (Some(o), None)
}

/// The dialog closes and asks for `intent`.
pub(super) fn close(intent: Intent) -> Next {
    (None, Some(intent))
}

/// The dialog closes and asks for nothing.
pub(super) const CLOSE: Next = (None, None);

/// A dialog that acts on no device.
pub(super) fn no_devices<S>(_: &S) -> Vec<&str> {
    Vec::new()
}

/// The key as the text fields see it: a letter with Ctrl or Alt is a command, never text;
/// Ctrl-U (`Null`) clears the field as in a shell, the others do nothing.
fn text_key(k: KeyEvent) -> KeyCode {
    let command = k
        .modifiers
        .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT);
    match k.code {
        KeyCode::Char('u') if k.modifiers == KeyModifiers::CONTROL => KeyCode::Null,
        KeyCode::Char(_) if command => KeyCode::Modifier(ModifierKeyCode::LeftControl),
        other => other,
    }
}

/// What a key does to a typed device name (the write dialogs).
pub(super) enum Typing {
    Cancel,
    Enter,
    /// Edited (or a key the field ignores).
    Edited,
}

/// Edits `typed` with `code`: Backspace, Ctrl-U (`Null`), printable characters up to
/// `limit` bytes; Esc cancels and Enter submits.
pub(super) fn type_name(typed: &mut String, code: KeyCode, limit: usize) -> Typing {
    match code {
        KeyCode::Esc => return Typing::Cancel,
        KeyCode::Enter => return Typing::Enter,
        KeyCode::Backspace => {
            typed.pop();
        }
        KeyCode::Null => typed.clear(),
        KeyCode::Char(c) if typed.len() < limit && !c.is_control() => typed.push(c),
        _ => {}
    }
    Typing::Edited
}

/// A centred rectangle of at most `w` x `h` inside `area`.
pub(super) fn centered(area: Rect, w: u16, h: u16) -> Rect {
    let [v] = Layout::vertical([Constraint::Length(h.min(area.height))])
        .flex(Flex::Center)
        .areas(area);
    let [c] = Layout::horizontal([Constraint::Length(w.min(area.width))])
        .flex(Flex::Center)
        .areas(v);
    c
}

/// A dialog box of `lines` at most `w` wide, centred in `area`.
pub(super) fn dialog(
    frame: &mut Frame,
    area: Rect,
    title: &str,
    lines: Vec<Line<'static>>,
    w: u16,
) {
    dialog_clear_of(frame, Place { area, keep: None }, title, lines, w);
}

/// A centred rectangle as [`centered`], just below the screen row `keep`, else just above it:
/// a dialog over the device's row left its start in sight, and the name seemed shown twice.
fn clear_of(area: Rect, w: u16, h: u16, keep: Option<u16>) -> Rect {
    let rect = centered(area, w, h);
    let Some(y) = keep.filter(|&y| y >= rect.y && y < rect.bottom()) else {
        return rect;
    };
    if y + 1 + rect.height <= area.bottom() {
        Rect { y: y + 1, ..rect }
    } else if y >= area.y + rect.height {
        Rect {
            y: y - rect.height,
            ..rect
        }
    } else {
        rect
    }
}

/// A dialog as [`dialog`], clear of the screen row `at.keep` (see [`clear_of`]).
pub(super) fn dialog_clear_of(
    frame: &mut Frame,
    at: Place,
    title: &str,
    lines: Vec<Line<'static>>,
    w: u16,
) {
    let area = at.area;
    // Tall enough that no wrapped line is cut off.
    let inner = usize::from(w.min(area.width).saturating_sub(2)).max(1);
    let rows: usize = lines.iter().map(|l| l.width().max(1).div_ceil(inner)).sum();
    let h = rows as u16 + 2;
    let rect = clear_of(area, w, h, at.keep);
    draw::title(&format!(" {title} "), rect);
    frame.render_widget(Clear, rect);
    frame.render_widget(
        Paragraph::new(lines).wrap(Wrap { trim: false }).block(
            Block::default()
                .borders(Borders::ALL)
                .title(Span::styled(format!(" {title} "), theme::title())),
        ),
        rect,
    );
}

/// Splits text into lines of at most `width` characters at spaces.
pub(super) fn wrap_text(text: &str, width: usize) -> Vec<String> {
    super::keys::wrap_words(text, width)
}

/// A write dialog's lines: what it writes (in the warning colour), the field for the
/// device's name, and, after a wrong name, that nothing was written.
pub(super) fn typed_name_lines(
    what: &str,
    device: &str,
    typed: &str,
    wrong: bool,
) -> Vec<Line<'static>> {
    let mut lines: Vec<Line> = wrap_text(what, 60)
        .into_iter()
        .map(|l| Line::from(Span::styled(l, theme::warn())))
        .collect();
    lines.extend([
        Line::from(format!("Type the device name ({device}) and press Enter:")),
        Line::from(vec![
            Span::raw("> "),
            Span::styled(format!("{typed}_"), theme::title()),
        ]),
    ]);
    if wrong {
        lines.push(Line::from(Span::styled(
            format!("\"{typed}\" is not {device}: nothing was written"),
            theme::bad(),
        )));
    }
    lines.push(Line::from(Span::styled("Esc cancels", theme::dim())));
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    fn press(o: Overlay, code: KeyCode) -> Next {
        o.key(KeyEvent::new(code, KeyModifiers::NONE))
    }

    #[test]
    fn help_scrolls_with_up_down_and_any_other_key_closes_it() {
        let down = press(Overlay::Help(help::Help { scroll: 0 }), KeyCode::Down);
        assert_eq!(down, (Some(Overlay::Help(help::Help { scroll: 1 })), None));
        let up = press(Overlay::Help(help::Help { scroll: 0 }), KeyCode::Up);
        assert_eq!(up, (Some(Overlay::Help(help::Help { scroll: 0 })), None));
        assert_eq!(
            press(Overlay::Help(help::Help { scroll: 3 }), KeyCode::Esc),
            CLOSE
        );
        assert_eq!(
            press(Overlay::Help(help::Help { scroll: 0 }), KeyCode::Char('x')),
            CLOSE
        );
    }

    #[test]
    fn a_dialog_returns_the_next_dialog_and_what_to_do() {
        let menu = Overlay::Scheduler(scheduler::Scheduler {
            device: "sda".into(),
            options: vec!["none".into(), "bfq".into()],
            selected: 0,
        });
        let (next, intent) = press(menu.clone(), KeyCode::Down);
        assert!(matches!(
            next,
            Some(Overlay::Scheduler(scheduler::Scheduler { selected: 1, .. }))
        ));
        assert_eq!(intent, None);
        let (next, intent) = press(next.unwrap(), KeyCode::Enter);
        assert_eq!(next, None);
        assert_eq!(
            intent,
            Some(Intent::Cmd(Cmd::SetScheduler {
                device: "sda".into(),
                name: "bfq".into(),
                chosen: None,
            }))
        );
        assert_eq!(
            press(menu, KeyCode::Char('K')),
            close(Intent::Keep(Setting::Scheduler, "sda".into()))
        );
        let cache = Overlay::DriveCache(drive_cache::DriveCache {
            device: "sda".into(),
        });
        assert_eq!(press(cache.clone(), KeyCode::Char('z')), stay(cache));
    }

    #[test]
    fn ctrl_letters_are_commands_in_text_fields_not_text() {
        let edit = |text: &str| {
            Overlay::Edit(edit::Edit {
                field: Field::Time,
                text: text.into(),
                error: None,
            })
        };
        let ctrl = |c| KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL);
        // Ctrl-U clears the field; Ctrl-A is ignored; Shift types.
        assert_eq!(edit("10s").key(ctrl('u')).0, Some(edit("")));
        assert_eq!(edit("10s").key(ctrl('a')).0, Some(edit("10s")));
        let shifted = KeyEvent::new(KeyCode::Char('M'), KeyModifiers::SHIFT);
        assert_eq!(edit("1").key(shifted).0, Some(edit("1M")));
    }
}
