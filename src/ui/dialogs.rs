//! Dialogs drawn over the screen: help, errors, the write confirmation, the scheduler menu,
//! export, typing a value, quitting during a run, and a run's full report.

use ratatui::Frame;
use ratatui::layout::{Constraint, Flex, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Wrap};

use super::theme;
use crate::app::records::RunRecord;
use crate::app::{App, Overlay, keys};
use crate::model::CacheStatus;
use crate::model::cache::on_off;

/// A centred rectangle of at most `w` x `h` inside `area`.
fn centered(area: Rect, w: u16, h: u16) -> Rect {
    let [v] = Layout::vertical([Constraint::Length(h.min(area.height))])
        .flex(Flex::Center)
        .areas(area);
    let [c] = Layout::horizontal([Constraint::Length(w.min(area.width))])
        .flex(Flex::Center)
        .areas(v);
    c
}

fn dialog(frame: &mut Frame, area: Rect, title: &str, lines: Vec<Line<'static>>, w: u16) {
    dialog_clear_of(frame, area, None, title, lines, w);
}

/// A centred rectangle as [`centered`], moved clear of the screen row `keep` (the device the
/// dialog is about: a dialog over its row left the row's start in sight beside it, and the
/// name seemed to appear twice): just below the row, else just above it.
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

/// A dialog as [`dialog`], clear of the screen row `keep` (see [`clear_of`]).
fn dialog_clear_of(
    frame: &mut Frame,
    area: Rect,
    keep: Option<u16>,
    title: &str,
    lines: Vec<Line<'static>>,
    w: u16,
) {
    // Tall enough for the wrapped lines: nothing in a dialog is cut off.
    let inner = usize::from(w.min(area.width).saturating_sub(2)).max(1);
    let rows: usize = lines.iter().map(|l| l.width().max(1).div_ceil(inner)).sum();
    let h = rows as u16 + 2;
    let rect = clear_of(area, w, h, keep);
    crate::draw::title(&format!(" {title} "), rect);
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

/// Draws the open dialog over the screen; `body` is the screen's area under the top bar, where
/// the Devices list is (a dialog about the selected device leaves its row in sight).
pub fn render(app: &App, frame: &mut Frame, area: Rect, body: Rect) {
    let Some(overlay) = &app.overlay else { return };
    let keep = if app.screen == crate::app::Screen::Devices {
        super::devices::selected_row_y(app, body)
    } else {
        None
    };
    match overlay {
        Overlay::Help { scroll } => help(frame, area, *scroll),
        Overlay::Sweep { scroll } => super::setting_sweep::render(app, frame, area, *scroll),
        Overlay::Error(msg) => {
            let mut lines: Vec<Line> = wrap_text(msg, 66)
                .into_iter()
                .map(|l| Line::from(Span::styled(l, theme::bad())))
                .collect();
            lines.push(Line::from(Span::styled(
                "Enter or Esc closes",
                theme::dim(),
            )));
            dialog(frame, area, "Error", lines, 70);
        }
        Overlay::Confirm {
            request,
            device,
            typed,
            wrong,
            ..
        } => {
            let what = if request.params.preserve {
                format!(
                    "{} REWRITES the data on {device} in place: each block is read and the same \
                     bytes written back.",
                    request.test
                )
            } else {
                format!(
                    "{} WRITES to {} and destroys the data on it.",
                    request.test, device
                )
            };
            dialog(
                frame,
                area,
                "Confirm a write test",
                typed_name_lines(&what, device, typed, *wrong),
                64,
            );
        }
        Overlay::ConfirmFlush {
            device,
            typed,
            wrong,
            ..
        } => {
            let what = format!(
                "The flush check WRITES to the first 64 MiB of {device} and destroys the data \
                 on it; it switches the drive's write cache off and back."
            );
            dialog_clear_of(
                frame,
                area,
                keep,
                "Confirm the flush check",
                typed_name_lines(&what, device, typed, *wrong),
                64,
            );
        }
        Overlay::ConfirmSeveral {
            test,
            devices,
            typed,
            wrong,
        } => {
            let list = devices.join(",");
            let mut lines = vec![
                Line::from(Span::styled(
                    format!(
                        "{test} WRITES to {} and destroys the data on them.",
                        devices.join(", ")
                    ),
                    theme::warn(),
                )),
                Line::from(format!("Type every device name ({list}) and press Enter:")),
                Line::from(vec![
                    Span::raw("> "),
                    Span::styled(format!("{typed}_"), theme::title()),
                ]),
            ];
            if *wrong {
                lines.push(Line::from(Span::styled(
                    format!("\"{typed}\" does not name each of them once: nothing was written"),
                    theme::bad(),
                )));
            }
            lines.push(Line::from(Span::styled("Esc cancels", theme::dim())));
            dialog(
                frame,
                area,
                "Confirm a write test on several devices",
                lines,
                72,
            );
        }
        Overlay::Scheduler {
            device,
            options,
            selected,
        } => {
            let current = app
                .devices
                .inventory
                .as_ref()
                .and_then(|i| i.find(device))
                .and_then(|d| d.scheduler.as_ref()?.active.clone());
            let mut lines: Vec<Line> = options
                .iter()
                .enumerate()
                .map(|(i, o)| {
                    let active = current.as_deref() == Some(o.as_str());
                    let text = format!(
                        "{}{} {o}",
                        if i == *selected { ">" } else { " " },
                        if active { "*" } else { " " }
                    );
                    if i == *selected {
                        Line::from(Span::styled(text, theme::selected()))
                    } else {
                        Line::from(text)
                    }
                })
                .collect();
            lines.push(Line::from(Span::styled(
                "Enter switches (put back on exit), K keeps the current choice, Esc closes",
                theme::dim(),
            )));
            dialog_clear_of(
                frame,
                area,
                keep,
                &format!("Scheduler of {device} (* active)"),
                lines,
                60,
            );
        }
        Overlay::Export { record } => {
            let lines = vec![
                Line::from(format!(
                    "Export run #{}:",
                    app.results
                        .records
                        .get(*record)
                        .map(RunRecord::number)
                        .unwrap_or_default()
                )),
                Line::from("  j  JSON: summary and per-interval series"),
                Line::from("  c  CSV: the per-interval series"),
                Line::from("  f  the equivalent fio command line"),
                Line::from(Span::styled(
                    format!("into {}/", app.export_dir.display()),
                    theme::dim(),
                )),
                Line::from(Span::styled(
                    "Esc cancels; the file's path is shown after",
                    theme::dim(),
                )),
            ];
            dialog(frame, area, "Export", lines, 56);
        }
        Overlay::Edit { field, text, error } => {
            let mut lines = vec![
                Line::from(format!("{} (empty = default):", field.label())),
                Line::from(vec![
                    Span::raw("> "),
                    Span::styled(format!("{text}_"), theme::title()),
                ]),
                Line::from(Span::styled(
                    "sizes: 4k, 1M, 1G; times: 500ms, 10s, 2m; Enter sets, Esc cancels",
                    theme::dim(),
                )),
            ];
            if let Some(e) = error {
                lines.push(Line::from(Span::styled(e.clone(), theme::bad())));
            }
            dialog(frame, area, "Set a value", lines, 70);
        }
        Overlay::DriveCache { device } => {
            let st = app.devices.drives.get(device);
            let mut lines = Vec::new();
            match st.and_then(|s| s.cache.as_ref()) {
                None => lines.push(Line::from("reading the drive ...")),
                Some(Err(e)) => lines.push(Line::from(Span::styled(e.to_string(), theme::bad()))),
                Some(Ok(c)) => {
                    let drive = match (&c.drive, &c.drive_unavailable) {
                        (Some(d), _) => match d.enabled {
                            Some(enabled) => on_off(enabled).to_string(),
                            None => "no volatile cache reported".to_string(),
                        },
                        (None, Some(why)) => why.clone(),
                        (None, None) => "unknown".to_string(),
                    };
                    lines.push(Line::from(vec![
                        Span::styled("drive's own write cache: ", theme::dim()),
                        Span::styled(drive, theme::title()),
                    ]));
                    lines.push(Line::from(vec![
                        Span::styled("kernel flush policy:     ", theme::dim()),
                        Span::raw(
                            c.kernel_flush_policy
                                .map_or("?", |k| k.as_str())
                                .to_string(),
                        ),
                    ]));
                    if let Some(d) = &c.disagreement {
                        lines.push(Line::from(Span::styled(d.clone(), theme::warn())));
                    }
                }
            }
            if let Some(c) = app.changes.cache.iter().find(|c| &c.device == device) {
                lines.push(Line::from(Span::styled(
                    if c.keep {
                        format!("kept: stays {} after exit", on_off(c.current))
                    } else {
                        format!("put back to {} on exit", on_off(c.original))
                    },
                    theme::accent(),
                )));
            }
            // Only what can work is offered: a loop device has no drive cache to turn off.
            let unavailable = st
                .and_then(|s| s.cache.as_ref())
                .and_then(|c| c.as_ref().ok())
                .and_then(CacheStatus::switch_unavailable);
            lines.push(Line::from(Span::styled(
                match unavailable {
                    Some(_) => "nothing to switch here  Esc: close",
                    None => "o: turn off (hdparm -W0)  n: turn on (-W1)  K: keep  Esc: close",
                },
                theme::dim(),
            )));
            dialog_clear_of(
                frame,
                area,
                keep,
                &format!("Write cache of {device}"),
                lines,
                70,
            );
        }
        Overlay::Orphans { lines } => {
            let mut l: Vec<Line> = vec![Line::from(
                "A disktriage that did not exit cleanly left these changes:",
            )];
            l.extend(lines.iter().map(|x| Line::from(format!("  {x}"))));
            l.push(Line::from(Span::styled(
                "y: put them back now   n: leave them (`disktriage restore` later)",
                theme::warn(),
            )));
            dialog(frame, area, "Settings left changed", l, 74);
        }
        Overlay::FileTarget(ft) => {
            let text = |t: &str| wrap_text(t, 70).into_iter().map(Line::from);
            let mut lines: Vec<Line> = Vec::new();
            lines.push(Line::from(format!(
                "{} ({}) mounted at {}",
                ft.device,
                ft.fstype,
                ft.mount.display()
            )));
            lines.push(Line::from(vec![
                Span::styled("free space ", theme::dim()),
                Span::styled(
                    format!(
                        "{} of {}",
                        crate::model::Bytes(ft.free).iec(),
                        crate::model::Bytes(ft.total).iec()
                    ),
                    theme::title(),
                ),
            ]));
            lines.extend(text(&format!(
                "A new file {} is created (the region size: {} unless set), tested with \
                 the test you choose, and removed afterwards. Nothing else on the file system \
                 is touched. The metadata test uses a scratch directory there instead.",
                ft.file.display(),
                crate::model::Bytes(crate::bench::exec::test_file::default_file_size_within(
                    ft.free
                ))
                .iec()
            )));
            lines.push(Line::from(Span::styled(
                "Enter: choose the test   Esc: cancel",
                theme::warn(),
            )));
            dialog_clear_of(frame, area, keep, "Test a file", lines, 74);
        }
        Overlay::Message { title, lines } => {
            let mut l: Vec<Line> = lines.iter().map(|x| Line::from(x.clone())).collect();
            l.push(Line::from(Span::styled("any key closes", theme::dim())));
            dialog(frame, area, title, l, 74);
        }
        Overlay::Retest { device, record } => {
            let Some(rec) = app.results.records.get(*record) else {
                return;
            };
            let test = rec.test.id();
            let lines = vec![
                Line::from(format!(
                    "You switched {device}; the last test ({test}) ran on {}.",
                    rec.device
                )),
                Line::from(format!("{device} has not run it in this session.")),
                Line::from(Span::styled(
                    format!(
                        "y: run {test} on {device}   n: rerun on {}   Esc: cancel",
                        rec.device
                    ),
                    theme::warn(),
                )),
            ];
            dialog(frame, area, "Retest where?", lines, 70);
        }
        Overlay::QuitDiscard => {
            let n = app.unsaved().count();
            let kept = app.results.unsaved_in_history();
            let plural = |k: usize| if k == 1 { "" } else { "s" };
            let first = if kept == 0 {
                format!("quit and discard {n} result{}? (not exported)", plural(n))
            } else if kept == n {
                format!(
                    "quit? {n} result{} not exported: the history keeps the figures, not \
                     the per-interval series",
                    plural(n)
                )
            } else {
                format!(
                    "quit? {n} results not exported: {kept} in the history (figures only), \
                     {} discarded",
                    n - kept
                )
            };
            let lines = vec![
                Line::from(first),
                Line::from(Span::styled(
                    "y or q quits (changed settings are put back)",
                    theme::warn(),
                )),
                Line::from(Span::styled(
                    "e exports first (JSON, CSV, fio), any other key stays",
                    theme::dim(),
                )),
            ];
            dialog(frame, area, "Quit", lines, 66);
        }
        Overlay::SelfTest { device, kind } => {
            let status = app
                .devices
                .drives
                .get(device)
                .and_then(|s| s.self_test.as_ref())
                .and_then(|r| r.as_ref().ok());
            let text = crate::report::smart::self_test_warning(*kind, status);
            let mut lines: Vec<Line> = wrap_text(&text, 66).into_iter().map(Line::from).collect();
            lines.push(Line::from(Span::styled(
                format!("y or Enter starts it on {device}, any other key cancels"),
                theme::warn(),
            )));
            let title = match kind {
                crate::model::SelfTestKind::Short => "Short self-test",
                crate::model::SelfTestKind::Long => "Long self-test",
                crate::model::SelfTestKind::Abort => "Abort the self-test",
            };
            dialog(frame, area, title, lines, 70);
        }
        Overlay::QuitConfirm => {
            let n = app.unsaved().count();
            let kept = app.results.unsaved_in_history();
            let discard = match (n, kept) {
                (0, _) => String::new(),
                (n, k) if k == n => {
                    format!(" The history keeps the figures of the {n} result(s) not exported.")
                }
                (n, 0) => format!(" The {n} result(s) not exported are discarded."),
                (n, k) => format!(
                    " Of the {n} result(s) not exported, the history keeps {k} (figures only)."
                ),
            };
            let lines = vec![
                Line::from(format!("A test is running. Stop it and quit?{discard}")),
                Line::from(Span::styled(
                    "y quits (changed schedulers are put back), any other key stays",
                    theme::dim(),
                )),
            ];
            dialog(frame, area, "Quit", lines, 66);
        }
        Overlay::Persist {
            device,
            scheduler,
            class,
            plan,
        } => persist(frame, area, device, scheduler, *class, plan),
        Overlay::Report { record, scroll } => {
            let rec = app.results.records.get(*record);
            let text = rec
                .map(crate::app::RunRecord::report_text)
                .unwrap_or_default();
            let number = rec.map(RunRecord::number).unwrap_or_default();
            let rect = centered(
                area,
                area.width.saturating_sub(2),
                area.height.saturating_sub(2),
            );
            frame.render_widget(Clear, rect);
            // The CLI's tables keep their columns in the box (a column wrapped onto a line
            // of its own read as another row).
            let inner = Block::default().borders(Borders::ALL).inner(rect);
            let lines = crate::draw::report(&text, inner.width.into());
            let rows = usize::from(inner.height);
            let top = usize::from(*scroll).min(lines.len().saturating_sub(1));
            let more = crate::draw::scrolled(lines.len(), top, rows);
            crate::draw::title(&more, rect);
            frame.render_widget(
                Paragraph::new(lines).scroll((*scroll, 0)).block(
                    Block::default()
                        .borders(Borders::ALL)
                        .title(format!(
                            " Report of run #{number} (Up/Down scroll, Esc closes) "
                        ))
                        .title_bottom(Span::styled(more, theme::dim())),
                ),
                rect,
            );
        }
    }
}

/// The udev rule that would make a scheduler permanent, where it goes, and the keys; or why
/// there can be none.
fn persist(
    frame: &mut Frame,
    area: Rect,
    device: &str,
    scheduler: &str,
    class: bool,
    plan: &Result<Box<crate::persist::Persisted>, String>,
) {
    let w: u16 = if area.width >= 110 { 104 } else { 76 };
    let inner = usize::from(w.min(area.width).saturating_sub(2)).max(20);
    let mut lines = Vec::new();
    let other = if class {
        "a: for this disk only, "
    } else if crate::persist::in_class_kernels(device) {
        "a: for every disk of its kind instead, "
    } else {
        ""
    };
    match plan {
        Ok(p) => {
            let what = match &p.rule.scope {
                crate::persist::RuleScope::Disk { identity } => format!(
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

/// Every key, from the one table of bindings, in rows that never wrap; it scrolls when the
/// terminal is shorter than the list.
fn help(frame: &mut Frame, area: Rect, scroll: u16) {
    let rows = keys::help_rows(keys::HELP_TEXT_WIDTH);
    let w = HELP_WIDTH;
    let h = (rows.len() as u16 + 2).min(area.height);
    let visible = h.saturating_sub(2);
    let scroll = scroll.min((rows.len() as u16).saturating_sub(visible));
    let title = if rows.len() as u16 > visible {
        " Keys (Up/Down scroll) "
    } else {
        " Keys "
    };
    let more = crate::draw::scrolled(rows.len(), scroll.into(), visible.into());
    let lines: Vec<Line> = rows
        .into_iter()
        .map(|(k, v)| {
            Line::from(vec![
                Span::styled(
                    format!("{k:<width$}", width = keys::HELP_KEY_WIDTH),
                    theme::title(),
                ),
                Span::raw(v),
            ])
        })
        .collect();
    let rect = centered(area, w, h);
    frame.render_widget(Clear, rect);
    frame.render_widget(
        Paragraph::new(lines).scroll((scroll, 0)).block(
            Block::default()
                .borders(Borders::ALL)
                .title(Span::styled(title, theme::title()))
                .title_bottom(Span::styled(more, theme::dim())),
        ),
        rect,
    );
}

/// The help box: its two columns and the border.
const HELP_WIDTH: u16 = (keys::HELP_KEY_WIDTH + keys::HELP_TEXT_WIDTH + 2) as u16;

/// Splits text into lines of at most `width` characters at spaces.
pub(crate) fn wrap_text(text: &str, width: usize) -> Vec<String> {
    keys::wrap_words(text, width)
}

/// A write dialog's lines: what it writes (in the warning colour), the field for the
/// device's name, and, after a wrong name, that nothing was written.
fn typed_name_lines(what: &str, device: &str, typed: &str, wrong: bool) -> Vec<Line<'static>> {
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
