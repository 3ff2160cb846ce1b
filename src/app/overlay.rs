//! Dialogs over the screen. Each takes the keys while open: `Overlay::key` returns the dialog
//! to show next (itself changed, or none) and what the key asks of the rest of the app, which
//! `App` carries out. A dialog's keys are listed in its own text (`ui/dialogs.rs`).

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers, ModifierKeyCode};

use super::changes::Setting;
use super::keys;
use super::picker::Field;
use crate::bench::analysis::setting_sweep::SweepKind;
use crate::bench::exec::safety;
use crate::bench::exec::session::RunRequest;
use crate::event::Cmd;
use crate::persist::Persisted;
use crate::report::export::ExportFormat;

/// A dialog over the screen; it takes the keys while open.
#[derive(Debug, Clone, PartialEq)]
pub enum Overlay {
    /// Every key (`keys::BINDINGS`); `scroll` is the first row shown.
    Help {
        scroll: u16,
    },
    Error(String),
    /// Type the device's name to allow a write test.
    Confirm {
        request: Box<RunRequest>,
        repeats: u32,
        /// The write test is swept over this setting.
        sweep: Option<SweepKind>,
        device: String,
        typed: String,
        wrong: bool,
    },
    Scheduler {
        device: String,
        options: Vec<String>,
        selected: usize,
    },
    Export {
        record: usize,
    },
    /// Typing a value for a field of the test form.
    Edit {
        field: Field,
        text: String,
        error: Option<String>,
    },
    QuitConfirm,
    /// `q` with results not exported: quit and discard them?
    QuitDiscard,
    /// The drive's own write cache: state, kernel view, switch.
    DriveCache {
        device: String,
    },
    /// Changes a killed or crashed session left behind: restore them?
    Orphans {
        lines: Vec<String>,
    },
    /// Information to acknowledge (what a restore did).
    Message {
        title: String,
        lines: Vec<String>,
    },
    /// `R` after a switch on a device the last test did not run on: run it there?
    Retest {
        /// The device whose setting changed.
        device: String,
        /// The record whose test would run there.
        record: usize,
    },
    /// A finished run's text report, scrolled.
    Report {
        record: usize,
        scroll: u16,
    },
    /// `f` on Devices: the file system a test file would go on, its free space first.
    FileTarget(Box<crate::event::FileTarget>),
    /// Type every device's name to allow a write test on several devices at once.
    ConfirmSeveral {
        test: crate::bench::plan::test_name::TestName,
        devices: Vec<String>,
        typed: String,
        wrong: bool,
    },
    /// Make a scheduler permanent: the udev rule and where it goes (or why there can be
    /// none), to confirm.
    Persist {
        device: String,
        scheduler: String,
        /// Every disk of the device's class instead of the device alone.
        class: bool,
        plan: Result<Box<Persisted>, String>,
    },
    /// The last sweep's table and bars (`App::sweep`), scrolled.
    Sweep {
        scroll: u16,
    },
    /// Type the device's name to allow the flush check (it writes).
    ConfirmFlush {
        device: String,
        path: std::path::PathBuf,
        typed: String,
        wrong: bool,
    },
    /// Start a self-test? What it costs, and y/Enter to start it.
    SelfTest {
        device: String,
        kind: crate::model::SelfTestKind,
    },
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

/// The dialog after a key, and what the key asks for.
pub type Next = (Option<Overlay>, Option<Intent>);

fn stay(o: Overlay) -> Next {
    (Some(o), None)
}

fn close(intent: Intent) -> Next {
    (None, Some(intent))
}

const CLOSE: Next = (None, None);

/// What a key does to a typed device name (the write dialogs).
enum Typing {
    Cancel,
    Enter,
    /// Edited (or a key the field ignores).
    Edited,
}

/// Edits `typed` with `code`: Backspace, Ctrl-U (`Null`), printable characters up to
/// `limit` bytes; Esc cancels and Enter submits.
fn type_name(typed: &mut String, code: KeyCode, limit: usize) -> Typing {
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

impl Overlay {
    /// The dialog's answer to a key.
    pub fn key(self, k: KeyEvent) -> Next {
        // In the text fields a letter with Ctrl or Alt is a command, never text: Ctrl-U clears
        // the field as in a shell, the others do nothing.
        let command = k
            .modifiers
            .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT);
        let code = match k.code {
            KeyCode::Char('u') if k.modifiers == KeyModifiers::CONTROL => KeyCode::Null,
            KeyCode::Char(_) if command => KeyCode::Modifier(ModifierKeyCode::LeftControl),
            other => other,
        };
        match self {
            Overlay::Help { scroll } => {
                // Up/Down scroll a help taller than the terminal; any other key closes it.
                if !matches!(
                    code,
                    KeyCode::Up | KeyCode::Down | KeyCode::Char('k') | KeyCode::Char('j')
                ) {
                    return CLOSE;
                }
                let rows = keys::help_rows(keys::HELP_TEXT_WIDTH).len() as u16;
                let scroll =
                    super::scroll(scroll, keys::direction(code), 1).min(rows.saturating_sub(1));
                stay(Overlay::Help { scroll })
            }
            Overlay::Error(_) | Overlay::Message { .. } => CLOSE,
            Overlay::FileTarget(ft) => match code {
                KeyCode::Enter | KeyCode::Char('y') => close(Intent::UseFileTarget(ft)),
                KeyCode::Esc | KeyCode::Char('n') | KeyCode::Char('q') => CLOSE,
                _ => stay(Overlay::FileTarget(ft)),
            },
            Overlay::Persist {
                device,
                scheduler,
                class,
                plan,
            } => match (code, plan) {
                (KeyCode::Char('y') | KeyCode::Enter, Ok(p)) => {
                    close(Intent::Cmd(Cmd::WritePersist(Box::new(p.rule))))
                }
                (KeyCode::Char('a'), _) if class || crate::persist::in_class_kernels(&device) => {
                    close(Intent::Cmd(Cmd::PlanPersist {
                        device,
                        scheduler,
                        class: !class,
                        chosen: None,
                    }))
                }
                (KeyCode::Esc | KeyCode::Char('n') | KeyCode::Char('q'), _) => {
                    close(Intent::Info("no udev rule written".into()))
                }
                (_, plan) => stay(Overlay::Persist {
                    device,
                    scheduler,
                    class,
                    plan,
                }),
            },
            Overlay::Retest { device, record } => match code {
                KeyCode::Char('y') | KeyCode::Enter => close(Intent::RetestOn { device, record }),
                // Rerun where it ran: the switch is not what this retest is about.
                KeyCode::Char('n') => close(Intent::RerunWhereItRan(record)),
                KeyCode::Esc | KeyCode::Char('q') => CLOSE,
                _ => stay(Overlay::Retest { device, record }),
            },
            Overlay::Orphans { lines } => match code {
                KeyCode::Char('y') => close(Intent::Cmd(Cmd::RestoreOrphans)),
                KeyCode::Char('n') | KeyCode::Esc => close(Intent::Info(
                    "left as they are: `disktriage restore` puts them back later".into(),
                )),
                _ => stay(Overlay::Orphans { lines }),
            },
            Overlay::DriveCache { device } => match code {
                KeyCode::Char('o') | KeyCode::Char('0') => close(Intent::Cmd(Cmd::SetDriveCache {
                    device,
                    enabled: false,
                    chosen: None,
                })),
                KeyCode::Char('n') | KeyCode::Char('1') => close(Intent::Cmd(Cmd::SetDriveCache {
                    device,
                    enabled: true,
                    chosen: None,
                })),
                KeyCode::Char('K') => close(Intent::Keep(Setting::DriveCache, device)),
                KeyCode::Esc | KeyCode::Enter | KeyCode::Char('q') => CLOSE,
                _ => stay(Overlay::DriveCache { device }),
            },
            Overlay::QuitDiscard => match code {
                KeyCode::Char('y') | KeyCode::Char('q') => close(Intent::Quit),
                KeyCode::Char('e') => close(Intent::ExportFirst),
                _ => CLOSE,
            },
            Overlay::SelfTest { device, kind } => match code {
                KeyCode::Char('y') | KeyCode::Enter => close(Intent::Cmd(Cmd::StartSelfTest {
                    device,
                    kind,
                    chosen: None,
                })),
                _ => close(Intent::Info("no self-test started".into())),
            },
            Overlay::QuitConfirm => match code {
                KeyCode::Char('y') | KeyCode::Char('q') => close(Intent::Quit),
                _ => CLOSE,
            },
            Overlay::Sweep { scroll } => {
                let scroll = match code {
                    KeyCode::Up | KeyCode::Char('k') => scroll.saturating_sub(1),
                    KeyCode::Down | KeyCode::Char('j') => scroll.saturating_add(1),
                    KeyCode::Char('P') => return close(Intent::PersistSweepWinner),
                    _ => return CLOSE,
                };
                stay(Overlay::Sweep { scroll })
            }
            Overlay::Report { record, scroll } => {
                let scroll = match code {
                    KeyCode::Up | KeyCode::Char('k') => scroll.saturating_sub(1),
                    KeyCode::Down | KeyCode::Char('j') => scroll.saturating_add(1),
                    KeyCode::PageUp => scroll.saturating_sub(10),
                    KeyCode::PageDown | KeyCode::Char(' ') => scroll.saturating_add(10),
                    _ => return CLOSE,
                };
                stay(Overlay::Report { record, scroll })
            }
            Overlay::Confirm {
                request,
                repeats,
                sweep,
                device,
                mut typed,
                ..
            } => {
                let wrong = match type_name(&mut typed, code, 64) {
                    Typing::Cancel => {
                        return close(Intent::Info(
                            "write test cancelled: nothing was written".into(),
                        ));
                    }
                    Typing::Enter if safety::confirms(&typed, &device) => {
                        let mut request = request;
                        request.confirmation = Some(typed);
                        return close(Intent::Launch {
                            request,
                            repeats,
                            sweep,
                        });
                    }
                    Typing::Enter => true,
                    Typing::Edited => false,
                };
                stay(Overlay::Confirm {
                    request,
                    repeats,
                    sweep,
                    device,
                    typed,
                    wrong,
                })
            }
            Overlay::ConfirmFlush {
                device,
                path,
                mut typed,
                ..
            } => {
                let wrong = match type_name(&mut typed, code, 64) {
                    Typing::Cancel => {
                        return close(Intent::Info(
                            "flush check cancelled: nothing was written".into(),
                        ));
                    }
                    Typing::Enter if safety::confirms(&typed, &device) => {
                        return close(Intent::LaunchFlush {
                            device,
                            path,
                            confirmation: typed,
                        });
                    }
                    Typing::Enter => true,
                    Typing::Edited => false,
                };
                stay(Overlay::ConfirmFlush {
                    device,
                    path,
                    typed,
                    wrong,
                })
            }
            Overlay::ConfirmSeveral {
                test,
                devices,
                mut typed,
                ..
            } => {
                let wrong = match type_name(&mut typed, code, 256) {
                    Typing::Cancel => {
                        return close(Intent::Info(
                            "write test cancelled: nothing was written".into(),
                        ));
                    }
                    Typing::Enter => {
                        let names: Vec<Option<String>> =
                            devices.iter().cloned().map(Some).collect();
                        if crate::bench::analysis::several_disks::split_confirmation(
                            &names,
                            Some(&typed),
                        )
                        .is_ok()
                        {
                            return close(Intent::LaunchSeveral(typed));
                        }
                        true
                    }
                    Typing::Edited => false,
                };
                stay(Overlay::ConfirmSeveral {
                    test,
                    devices,
                    typed,
                    wrong,
                })
            }
            Overlay::Scheduler {
                device,
                options,
                selected,
            } => match code {
                KeyCode::Up | KeyCode::Char('k') => stay(Overlay::Scheduler {
                    device,
                    selected: selected.saturating_sub(1),
                    options,
                }),
                KeyCode::Down | KeyCode::Char('j') => {
                    let selected = (selected + 1).min(options.len().saturating_sub(1));
                    stay(Overlay::Scheduler {
                        device,
                        options,
                        selected,
                    })
                }
                KeyCode::Enter => match options.get(selected) {
                    Some(name) => close(Intent::Cmd(Cmd::SetScheduler {
                        device,
                        name: name.clone(),
                        chosen: None,
                    })),
                    None => CLOSE,
                },
                KeyCode::Char('K') => close(Intent::Keep(Setting::Scheduler, device)),
                _ => CLOSE,
            },
            Overlay::Export { record } => {
                let KeyCode::Char(key) = code else {
                    return CLOSE;
                };
                let Some(format) = ExportFormat::for_key(key) else {
                    return CLOSE;
                };
                close(Intent::Export { record, format })
            }
            Overlay::Edit {
                field,
                mut text,
                error,
            } => match code {
                KeyCode::Esc => CLOSE,
                KeyCode::Enter => close(Intent::SetValue { field, text }),
                KeyCode::Backspace => {
                    text.pop();
                    stay(Overlay::Edit {
                        field,
                        text,
                        error: None,
                    })
                }
                KeyCode::Null => {
                    text.clear();
                    stay(Overlay::Edit {
                        field,
                        text,
                        error: None,
                    })
                }
                KeyCode::Char(c) if text.len() < 32 && c.is_ascii_graphic() => {
                    text.push(c);
                    stay(Overlay::Edit {
                        field,
                        text,
                        error: None,
                    })
                }
                _ => stay(Overlay::Edit { field, text, error }),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn press(o: Overlay, code: KeyCode) -> Next {
        o.key(KeyEvent::new(code, KeyModifiers::NONE))
    }

    #[test]
    fn help_scrolls_with_up_down_and_any_other_key_closes_it() {
        let down = press(Overlay::Help { scroll: 0 }, KeyCode::Down);
        assert_eq!(down, (Some(Overlay::Help { scroll: 1 }), None));
        let up = press(Overlay::Help { scroll: 0 }, KeyCode::Up);
        assert_eq!(up, (Some(Overlay::Help { scroll: 0 }), None));
        assert_eq!(press(Overlay::Help { scroll: 3 }, KeyCode::Esc), CLOSE);
        assert_eq!(
            press(Overlay::Help { scroll: 0 }, KeyCode::Char('x')),
            CLOSE
        );
    }

    #[test]
    fn a_dialog_returns_the_next_dialog_and_what_to_do() {
        let menu = Overlay::Scheduler {
            device: "sda".into(),
            options: vec!["none".into(), "bfq".into()],
            selected: 0,
        };
        let (next, intent) = press(menu.clone(), KeyCode::Down);
        assert!(matches!(next, Some(Overlay::Scheduler { selected: 1, .. })));
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
        let cache = Overlay::DriveCache {
            device: "sda".into(),
        };
        assert_eq!(press(cache.clone(), KeyCode::Char('z')), stay(cache));
    }

    #[test]
    fn ctrl_letters_are_commands_in_text_fields_not_text() {
        let edit = |text: &str| Overlay::Edit {
            field: Field::Time,
            text: text.into(),
            error: None,
        };
        let ctrl = |c| KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL);
        // Ctrl-U clears the field; Ctrl-A is ignored; Shift types.
        assert_eq!(edit("10s").key(ctrl('u')).0, Some(edit("")));
        assert_eq!(edit("10s").key(ctrl('a')).0, Some(edit("10s")));
        let shifted = KeyEvent::new(KeyCode::Char('M'), KeyModifiers::SHIFT);
        assert_eq!(edit("1").key(shifted).0, Some(edit("1M")));
    }
}
