//! The Test screen, the test picker: the catalogue on the left, the chosen test's parameters
//! on the right. The fields and values are `app::picker`'s, stepping and starting `app::form`'s.

use ratatui::Frame;
use ratatui::crossterm::event::KeyCode;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{
    Block, Borders, Cell, List, ListItem, ListState, Paragraph, Row, Table, TableState, Wrap,
};

use super::super::keys::{self, Action, Binding, Scope, UP_DOWN, bind};
use super::super::picker::{fields_for, writes};
use super::super::{App, Overlay, PickerFocus, Screen, step};
use super::{ScreenDef, nothing};
use crate::bench::catalog::CATALOG;
use crate::bench::plan::test_name::Writes;
use crate::event::Cmd;
use crate::theme;

const KEYS: &[Binding] = &[
    bind(
        Scope::TestList,
        UP_DOWN,
        "Up/Down",
        Some("move"),
        "tests",
        Action::Move,
    ),
    bind(
        Scope::TestList,
        &[KeyCode::Enter, KeyCode::Right],
        "Enter",
        None,
        "to the parameters",
        Action::ToParams,
    ),
    bind(
        Scope::TestForm,
        &[KeyCode::Enter],
        "Enter",
        Some("edit"),
        "type a value",
        Action::Edit,
    ),
    bind(
        Scope::TestForm,
        &[
            KeyCode::Left,
            KeyCode::Char('h'),
            KeyCode::Right,
            KeyCode::Char('l'),
        ],
        "Left/Right",
        Some("change"),
        "change it",
        Action::Step,
    ),
    bind(
        Scope::TestForm,
        &[KeyCode::Char('d')],
        "d",
        Some("default"),
        "default",
        Action::Default,
    ),
    bind(
        Scope::TestForm,
        UP_DOWN,
        "Up/Down",
        None,
        "fields",
        Action::Move,
    ),
    bind(
        Scope::TestForm,
        &[KeyCode::Home, KeyCode::End],
        "Home/End",
        None,
        "first/last field",
        Action::Ends,
    ),
    bind(
        Scope::TestForm,
        &[KeyCode::Esc],
        "Esc",
        None,
        "back to tests",
        Action::ToTests,
    ),
    bind(
        Scope::On(Screen::Tests),
        &[KeyCode::Char('r'), KeyCode::F(5)],
        "r",
        Some("run"),
        "run",
        Action::RunTest,
    ),
    bind(
        Scope::On(Screen::Tests),
        &[KeyCode::Char('S'), KeyCode::Char('W')],
        "S/W",
        Some("sweep"),
        "sweep it over every scheduler (S) or the cache on/off (W)",
        Action::Sweep,
    ),
];

pub const SCREEN: ScreenDef = ScreenDef {
    title: "Test",
    keys: KEYS,
    act,
    works_now: |app, action| app.works_anywhere(action),
    draw,
    leave: nothing,
    job: None,
};

/// The list and the form: moving, stepping and typing a value, starting the test.
fn act(app: &mut App, action: Action, code: KeyCode) -> Vec<Cmd> {
    let dir = keys::direction(code);
    let fields = fields_for(app.picker_test());
    let field = fields.get(app.picker_field).copied();
    match (app.picker_focus, action) {
        (_, Action::RunTest) => return app.start_from_picker(),
        (PickerFocus::Tests, Action::Move) => {
            app.picker_test = step(app.picker_test, dir, CATALOG.len() - 1);
            app.picker_field = 0;
        }
        (PickerFocus::Tests, Action::ToParams) => app.picker_focus = PickerFocus::Params,
        (PickerFocus::Params, Action::ToTests) => app.picker_focus = PickerFocus::Tests,
        (PickerFocus::Params, Action::Move) if dir < 0 && app.picker_field == 0 => {
            app.picker_focus = PickerFocus::Tests;
        }
        (PickerFocus::Params, Action::Move) => {
            app.picker_field = step(app.picker_field, dir, fields.len().saturating_sub(1));
        }
        (PickerFocus::Params, Action::Ends) => {
            app.picker_field = if dir < 0 {
                0
            } else {
                fields.len().saturating_sub(1)
            };
        }
        (PickerFocus::Params, Action::Step) => {
            if let Some(f) = field {
                app.step_valid(f, dir);
            }
        }
        (PickerFocus::Params, Action::Default) => {
            if let Some(f) = field {
                app.values.reset(f);
            }
        }
        (PickerFocus::Params, Action::Edit) => match field {
            Some(f) if f.typeable() => {
                app.overlay = Some(Overlay::Edit(super::super::dialogs::edit::Edit {
                    field: f,
                    text: String::new(),
                    error: None,
                }));
            }
            Some(f) => app.values.step(f, 1),
            None => {}
        },
        _ => {}
    }
    Vec::new()
}

/// The catalogue and its legend on the left; the chosen test's description, parameters and
/// target on the right.
fn draw(app: &App, frame: &mut Frame, area: Rect) {
    // The longest name (concurrent-write, 16) after the cursor and the write mark, whole.
    let [left_column, right] =
        Layout::horizontal([Constraint::Length(21), Constraint::Min(0)]).areas(area);
    draw_catalogue(app, frame, left_column);

    let test = app.picker_test();
    let info = test.info();
    let fields = fields_for(test);
    // The target box is as tall as its words (a refusal with its way out is long); the
    // parameters scroll in what is left.
    let target_lines = target_lines(app, test);
    let inner = usize::from(right.width.saturating_sub(2)).max(1);
    let rows: usize = target_lines
        .iter()
        .map(|l| {
            crate::app::keys::wrap_words(&l.to_string(), inner)
                .len()
                .max(1)
        })
        .sum();
    // The description whole (qd-sweep's is four lines at 80 columns); the parameters scroll.
    let about_text = crate::draw::wrap(
        vec![
            Line::from(Span::styled(info.summary, theme::title())),
            Line::from(Span::styled(format!("from: {}", info.origin), theme::dim())),
        ],
        inner,
    );
    let [about, form, target] = Layout::vertical([
        Constraint::Length(about_text.len() as u16 + 2),
        Constraint::Min(0),
        Constraint::Length((rows as u16 + 2).max(5)),
    ])
    .areas(right);

    crate::draw::lines(
        &about_text,
        Block::default().borders(Borders::ALL).inner(about),
    );
    frame.render_widget(
        Paragraph::new(about_text).block(
            Block::default()
                .borders(Borders::ALL)
                .title(format!(" {} ", info.id)),
        ),
        about,
    );

    draw_parameters(app, test, &fields, frame, form);

    frame.render_widget(
        Paragraph::new(target_lines)
            .wrap(Wrap { trim: true })
            .block(Block::default().borders(Borders::ALL)),
        target,
    );
}

/// The test list, scrolled to the chosen test, with the legend of its write marks below.
fn draw_catalogue(app: &App, frame: &mut Frame, left_column: Rect) {
    let [left, legend] =
        Layout::vertical([Constraint::Min(0), Constraint::Length(4)]).areas(left_column);
    let items: Vec<ListItem> = CATALOG
        .iter()
        .map(|t| {
            let mark = match t.writes {
                Writes::Never => " ",
                Writes::Always => "W",
                Writes::Optional => "w",
            };
            let item = format!("{mark} {}", t.id);
            // Inside the border, after the cursor's column.
            crate::draw::text(&item, usize::from(left.width.saturating_sub(3)));
            ListItem::new(item)
        })
        .collect();
    let focus_tests = app.picker_focus == PickerFocus::Tests;
    let list = List::new(items)
        .highlight_symbol(">")
        .highlight_style(if focus_tests {
            theme::selected()
        } else {
            theme::title()
        });
    let window = crate::draw::Window::over(
        CATALOG.len(),
        usize::from(left.height.saturating_sub(2)),
        Some(app.picker_test),
    );
    let more = window.mark();
    crate::draw::title(&more, left);
    let list = list.block(
        Block::default()
            .borders(Borders::ALL)
            .title(Span::styled(" Tests ", theme::title()))
            .title_bottom(Span::styled(more, theme::dim())),
    );
    let mut state = ListState::default()
        .with_selected(Some(app.picker_test))
        .with_offset(window.offset);
    frame.render_stateful_widget(list, left, &mut state);
    frame.render_widget(
        Paragraph::new(vec![
            Line::from("W writes: destroys"),
            Line::from("w writes if asked"),
        ])
        .style(theme::dim())
        .block(Block::default().borders(Borders::ALL)),
        legend,
    );
}

/// The parameter table: each field's value, marked when it is the default; the cursor shows
/// only while the form has the focus.
fn draw_parameters(
    app: &App,
    test: crate::bench::plan::test_name::TestName,
    fields: &[crate::app::picker::Field],
    frame: &mut Frame,
    form: Rect,
) {
    let focus_tests = app.picker_focus == PickerFocus::Tests;
    let widths = [
        Constraint::Length(14),
        Constraint::Min(12),
        Constraint::Length(7),
    ];
    let columns = crate::draw::columns(
        &widths,
        Block::default().borders(Borders::ALL).inner(form),
        1,
    );
    let rows: Vec<Row> = fields
        .iter()
        .map(|&f| {
            let (mut value, is_default) = app.values.show(test, f);
            if f == crate::app::picker::Field::Size
                && is_default
                && let Some(ft) = &app.file_target
            {
                value = format!(
                    "{} (the new file)",
                    crate::model::Bytes(crate::bench::exec::test_file::default_file_size_within(
                        ft.free
                    ))
                    .iec()
                );
            }
            crate::draw::cells(&[[f.label(), value.as_str()]], &columns);
            Row::new(vec![
                Cell::from(f.label()),
                Cell::from(value),
                Cell::from(if is_default { "default" } else { "" }).style(theme::dim()),
            ])
        })
        .collect();
    let selected = (app.picker_focus == PickerFocus::Params).then_some(app.picker_field);
    let window = crate::draw::Window::over(
        fields.len(),
        usize::from(form.height.saturating_sub(2)),
        selected,
    );
    let more = window.mark();
    crate::draw::title(&more, form);
    let table = Table::new(rows, widths)
        .column_spacing(1)
        .highlight_symbol(">")
        .row_highlight_style(if focus_tests {
            theme::dim()
        } else {
            theme::selected()
        })
        .block(
            Block::default()
                .borders(Borders::ALL)
                .title(" Parameters (Enter type, Left/Right change, d default) ")
                .title_bottom(Span::styled(more, theme::dim())),
        );
    let mut ts = TableState::default()
        .with_selected(selected)
        .with_offset(window.offset);
    frame.render_stateful_widget(table, form, &mut ts);
}

/// What the Test screen says about where `r` runs the test: the target, and whether the test
/// writes there, may not, or only reads.
fn target_lines(app: &App, test: crate::bench::plan::test_name::TestName) -> Vec<Line<'static>> {
    let mut lines = Vec::new();
    let directory = test.info().family.runs_in_directory();
    let marks = &app.several.marks;
    match (app.selected_device(), &app.file_target) {
        (Some(_), _) if marks.len() >= 2 => {
            lines.push(Line::from(vec![
                Span::styled("targets ", theme::dim()),
                Span::raw(format!(
                    "the {} marked devices at once: {}",
                    marks.len(),
                    marks.join(", ")
                )),
            ]));
            if writes(test, &app.values) {
                lines.push(Line::from(Span::styled(
                    "this test WRITES to each of them and destroys their data: r asks you to \
                     type every name",
                    theme::warn(),
                )));
            } else {
                lines.push(Line::from(Span::styled(
                    "read-only test: r runs it on each",
                    theme::good(),
                )));
            }
        }
        (_, Some(ft)) => {
            let free = crate::model::Bytes(ft.free).iec();
            lines.push(Line::from(vec![
                Span::styled("target ", theme::dim()),
                Span::raw(if directory {
                    format!(
                        "a scratch directory in {} ({} on {}, {free} free)",
                        ft.mount.display(),
                        ft.fstype,
                        ft.device
                    )
                } else {
                    format!(
                        "new file {} ({} on {}, {free} free)",
                        ft.file.display(),
                        ft.fstype,
                        ft.device
                    )
                }),
            ]));
            lines.push(Line::from(Span::styled(
                "removed after the run; nothing else is touched: r runs it",
                theme::good(),
            )));
        }
        (Some(d), None) if directory => {
            lines.push(Line::from(vec![
                Span::styled("target ", theme::dim()),
                Span::raw(format!("{}: a block device", d.path.display())),
            ]));
            lines.push(Line::from(Span::styled(
                "this test runs in a directory: f on Devices chooses the device's mounted \
                 file system",
                theme::warn(),
            )));
        }
        (Some(d), None) => {
            lines.push(Line::from(vec![
                Span::styled("target ", theme::dim()),
                Span::raw(format!(
                    "{}: {} {}, scheduler {}, kernel write cache {}",
                    d.path.display(),
                    d.size_bytes.map_or("?".into(), |b| b.iec()),
                    d.transport,
                    d.scheduler
                        .as_ref()
                        .and_then(|s| s.active.clone())
                        .unwrap_or_else(|| "-".into()),
                    d.kernel_write_cache.map_or("?", |c| c.as_str()),
                )),
            ]));
            if writes(test, &app.values)
                && let Some(why) = app.write_refusal(&d.name)
            {
                lines.push(Line::from(Span::styled(
                    format!("this test writes: r is refused: {why}"),
                    theme::bad(),
                )));
            } else if writes(test, &app.values) && app.values.params(test).preserve {
                lines.push(Line::from(Span::styled(
                    format!(
                        "this test REWRITES {} in place (data kept): r asks for its name",
                        d.name
                    ),
                    theme::warn(),
                )));
            } else if writes(test, &app.values) {
                lines.push(Line::from(Span::styled(
                    format!(
                        "this test WRITES to {} and destroys its data: r asks you to type its name",
                        d.name
                    ),
                    theme::warn(),
                )));
            } else {
                lines.push(Line::from(Span::styled(
                    "read-only test: r runs it",
                    theme::good(),
                )));
            }
        }
        (None, None) => lines.push(Line::from(Span::styled(
            match &app.devices.gone {
                Some(name) => format!(
                    "no target: {name} is gone (detached or unplugged); choose a device on \
                     the Devices screen (1)"
                ),
                None => "no device selected: choose one on the Devices screen (1)".to_string(),
            },
            theme::warn(),
        ))),
    }
    lines
}
