//! The Devices screen: the device list and the selected device's details; its keys (marking,
//! the switches, the tests and views it opens) and what they do. The inventory and the
//! drives' state are `app::devices`'.

use ratatui::Frame;
use ratatui::crossterm::event::KeyCode;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Cell, HighlightSpacing, Paragraph, Row, Table, TableState};

use super::super::devices::mounted_file_system;
use super::super::keys::{self, Action, Binding, Scope, UP_DOWN, bind};
use super::super::{App, Screen, step};
use super::{ScreenDef, nothing};
use crate::event::Cmd;
use crate::model::cache::on_off;
use crate::model::{BlockDevice, InUse, KernelWriteCache};
use crate::theme;

const KEYS: &[Binding] = &[
    bind(
        Scope::On(Screen::Devices),
        UP_DOWN,
        "Up/Down",
        None,
        "select",
        Action::Move,
    ),
    bind(
        Scope::On(Screen::Devices),
        &[KeyCode::Home, KeyCode::End],
        "Home/End",
        None,
        "first/last",
        Action::Ends,
    ),
    bind(
        Scope::On(Screen::Devices),
        &[KeyCode::Enter, KeyCode::Char('t')],
        "Enter",
        Some("test"),
        "test it",
        Action::TestDevice,
    ),
    bind(
        Scope::On(Screen::Devices),
        &[KeyCode::Char('f')],
        "f",
        Some("file"),
        "test a file on its file system",
        Action::TestFile,
    ),
    bind(
        Scope::On(Screen::Devices),
        &[KeyCode::Char('b')],
        "b",
        Some("scan"),
        "surface scan (read-only)",
        Action::SurfaceScan,
    ),
    bind(
        Scope::On(Screen::Devices),
        &[KeyCode::Char(' ')],
        "Space",
        Some("mark"),
        "mark it: the test runs on all marked at once",
        Action::Mark,
    ),
    bind(
        Scope::On(Screen::Devices),
        &[KeyCode::Char('m')],
        "m",
        // In the help only: the line has room for the scan (b) instead.
        None,
        "mark an md array and its members",
        Action::Members,
    ),
    bind(
        Scope::On(Screen::Devices),
        &[KeyCode::Char('F')],
        "F",
        Some("flush"),
        "flush check (writes)",
        Action::FlushCheck,
    ),
    bind(
        Scope::On(Screen::Devices),
        &[KeyCode::Char('c')],
        "c",
        None,
        "capacity probe (writes, puts back)",
        Action::Capacity,
    ),
    bind(
        Scope::On(Screen::Devices),
        &[KeyCode::Char('T')],
        "T",
        None,
        "TRIM check (writes 4 MiB, discards, puts back)",
        Action::TrimCheck,
    ),
    bind(
        Scope::On(Screen::Devices),
        &[KeyCode::Char('h')],
        "h",
        Some("health"),
        "health: SMART, the drive's logs, self-tests",
        Action::ReadSmart,
    ),
    bind(
        Scope::On(Screen::Devices),
        &[KeyCode::Char('r')],
        "r",
        None,
        "refresh",
        Action::Refresh,
    ),
    bind(
        Scope::On(Screen::Devices),
        &[KeyCode::Char('a')],
        "a",
        None,
        "show unused too",
        Action::ShowAll,
    ),
    bind(
        Scope::On(Screen::Devices),
        &[KeyCode::Char('v')],
        "v",
        Some("triage"),
        "triage the marked disks, else this one",
        Action::Triage,
    ),
];

pub const SCREEN: ScreenDef = ScreenDef {
    title: "Devices",
    keys: KEYS,
    act,
    works_now: |app, action| app.works_anywhere(action),
    draw,
    leave: nothing,
    job: None,
};

/// What its keys do.
fn act(app: &mut App, action: Action, code: KeyCode) -> Vec<Cmd> {
    let dir = keys::direction(code);
    let n = app.devices.visible().len();
    let last = n.saturating_sub(1);
    let on_selection = matches!(
        action,
        Action::TestDevice
            | Action::TestFile
            | Action::Mark
            | Action::Members
            | Action::ReadSmart
            | Action::SurfaceScan
            | Action::Triage
            | Action::FlushCheck
            | Action::Capacity
            | Action::TrimCheck
    );
    if on_selection && app.devices.gone.is_some() {
        let why = app.no_selection();
        app.info(why);
        return Vec::new();
    }
    if matches!(action, Action::Move | Action::Ends) && app.devices.gone.is_some() {
        // The admin chose again: what was said about the gone device is over.
        app.status = None;
    }
    match action {
        Action::Move => {
            // From a gone device's row, the step is from where it was.
            let next = match app.devices.gone {
                Some(_) if dir < 0 => app.devices.row.min(last + 1).saturating_sub(1),
                Some(_) => app.devices.row.min(last),
                None => step(app.devices.row, dir, last),
            };
            app.devices.select_row(next);
            app.file_target = None;
        }
        Action::Ends => {
            app.devices.select_row(if dir < 0 { 0 } else { last });
            app.file_target = None;
        }
        Action::TestDevice if n > 0 => {
            // The device itself, not a file on it.
            app.file_target = None;
            app.screen = Screen::Tests;
        }
        Action::TestFile => {
            let Some(d) = app.devices.selected() else {
                return Vec::new();
            };
            match mounted_file_system(d) {
                Some((device, mount, _)) => {
                    return vec![Cmd::ProbeFileTarget {
                        device,
                        mount: mount.into(),
                    }];
                }
                None => {
                    let name = d.name.clone();
                    app.error(format!(
                        "{name} has no mounted file system: a file test needs one (mount \
                         it, or test the device itself with Enter)"
                    ));
                }
            }
        }
        Action::Refresh => {
            app.info("device list refreshed");
            return vec![Cmd::RefreshInventory];
        }
        Action::Mark if n > 0 => app.toggle_device_mark(),
        Action::Members if n > 0 => app.mark_members(),
        Action::ShowAll => {
            app.devices.show_all = !app.devices.show_all;
            // The selection stays on its device if still shown, else takes the row it had.
            if app.devices.gone.is_none() && app.devices.selected().is_none() {
                app.devices.select_row(app.devices.row);
            } else {
                app.devices.follow_selection();
            }
        }
        Action::ReadSmart => {
            if let Some(d) = app.devices.selected().map(|d| d.name.clone()) {
                return app.open_health(d);
            }
        }
        Action::SurfaceScan => {
            if let Some(d) = app.devices.selected() {
                let (name, path) = (d.name.clone(), d.path.clone());
                return app.open_scan(name, path);
            }
        }
        Action::Triage => return app.start_triage(),
        Action::FlushCheck => return app.ask_flushcheck(),
        Action::Capacity => return app.ask_capacity(),
        Action::TrimCheck => return app.ask_trimcheck(),
        _ => {}
    }
    Vec::new()
}

fn usage_tag(d: &BlockDevice) -> &'static str {
    match d.in_use.first() {
        None => "",
        Some(u) if u.device() != d.name => "part",
        Some(InUse::Mounted { .. }) => "mnt",
        Some(InUse::Swap { .. }) => "swap",
        Some(InUse::Held { .. }) => "held",
        Some(InUse::Loop { .. }) => "loop",
        Some(InUse::SwapFile { .. }) => "swap",
    }
}

/// The device list and the selected device's details, or why there is no list.
fn draw(app: &App, frame: &mut Frame, area: Rect) {
    let devices = app.visible_devices();
    if let Some(err) = &app.devices.inventory_error {
        let p = Paragraph::new(format!("cannot list block devices: {err}"))
            .style(theme::bad())
            .block(Block::default().borders(Borders::ALL).title(" Devices "));
        frame.render_widget(p, area);
        return;
    }
    let (list_area, detail_area) = panes(devices.len(), area);
    draw_list(app, &devices, frame, list_area);
    draw_details(app, frame, detail_area);
}

/// The device table, scrolled to the selected row, its title saying what is marked or hidden;
/// a word in its place while there is no device to list.
fn draw_list(app: &App, devices: &[&BlockDevice], frame: &mut Frame, list_area: Rect) {
    let widths = [
        Constraint::Length(9),
        Constraint::Min(8),
        Constraint::Length(10),
        Constraint::Length(6),
        Constraint::Length(4),
        Constraint::Length(11),
        Constraint::Length(6),
        Constraint::Length(6),
        Constraint::Length(4),
    ];
    // Names (the device's, its model) may lose their middle to their column; the settings
    // must fit theirs.
    let columns = crate::draw::columns(
        &widths,
        Block::default().borders(Borders::ALL).inner(list_area),
        1,
    );
    let header = Row::new([
        "DEVICE", "MODEL", "SIZE", "TRAN", "TYPE", "SCHED", "WCACHE", "HEALTH", "USE",
    ])
    .style(theme::header());
    let rows = device_rows(app, devices, &columns);
    let hidden = app
        .devices
        .inventory
        .as_ref()
        .map_or(0, |i| i.devices.len() - devices.len());
    let marked = app.several.marks.len();
    let title = if marked > 0 {
        format!(" Devices ({marked} marked *: the test runs on each at once) ")
    } else if hidden > 0 && !app.devices.show_all {
        format!(" Devices ({hidden} unused hidden, a shows) ")
    } else {
        " Devices ".to_string()
    };
    crate::draw::title(&title, list_area);
    // No row out of sight without a mark: the list's lower edge says how many are.
    let row = app.selected_device().map(|_| app.devices.row);
    let window = window(devices.len(), list_area, row);
    let more = window.mark();
    crate::draw::title(&more, list_area);
    let table = Table::new(rows, widths)
        .header(header)
        .column_spacing(1)
        .row_highlight_style(theme::selected())
        .highlight_symbol(">")
        // The columns stay put while no row is selected (the selected device went away).
        .highlight_spacing(HighlightSpacing::Always)
        .block(
            Block::default()
                .borders(Borders::ALL)
                .title(Span::styled(title, theme::title()))
                .title_bottom(Span::styled(more, theme::dim())),
        );
    if devices.is_empty() {
        let msg = match (&app.devices.inventory, hidden) {
            (None, _) => "reading /sys/block ...".to_string(),
            (Some(_), 0) => "No block devices.".to_string(),
            (Some(_), n) => {
                format!("No block devices in use; {n} unused loop/zram hidden: a shows them.")
            }
        };
        frame.render_widget(
            Paragraph::new(msg).style(theme::dim()).block(
                Block::default()
                    .borders(Borders::ALL)
                    .title(Span::styled(" Devices ", theme::title())),
            ),
            list_area,
        );
    } else {
        // No `>` while the selected device is gone: its row is another device's now.
        let mut state = TableState::default()
            .with_selected(row)
            .with_offset(window.offset);
        frame.render_stateful_widget(table, list_area, &mut state);
    }
}

/// A row a device: its name (starred when marked) and model fitted to their `columns`, then
/// its settings, its health and its use.
fn device_rows(app: &App, devices: &[&BlockDevice], columns: &[usize]) -> Vec<Row<'static>> {
    devices
        .iter()
        .map(|d| {
            let sched = match &d.scheduler {
                Some(s) => s.active.clone().unwrap_or_else(|| "-".into()),
                None => "?".into(),
            };
            let use_cell = Cell::from(usage_tag(d)).style(theme::warn());
            let name = if app.several.marks.contains(&d.name) {
                Cell::from(crate::draw::elide(&format!("*{}", d.name), columns[0]))
                    .style(theme::accent())
            } else {
                Cell::from(crate::draw::elide(&d.name, columns[0]))
            };
            let model = crate::draw::elide_end(&d.description().unwrap_or_default(), columns[1]);
            let settings = [
                d.size_bytes.map_or("?".into(), |b| b.iec()),
                d.transport.as_str().to_string(),
                d.media_label().to_string(),
                sched,
                KernelWriteCache::short_or_unknown(d.kernel_write_cache).to_string(),
            ];
            crate::draw::cells(std::slice::from_ref(&settings), &columns[2..]);
            let mut cells = vec![name, Cell::from(model)];
            cells.extend(settings.into_iter().map(Cell::from));
            cells.extend([health_cell(app, d), use_cell]);
            Row::new(cells)
        })
        .collect()
}

/// The details panel: the selected device's fields, or a word on the one that went away; the
/// triage key on its lower edge.
fn draw_details(app: &App, frame: &mut Frame, detail_area: Rect) {
    let detail = match (app.selected_device(), &app.devices.gone) {
        (Some(d), _) => details(app, d, detail_area.width.saturating_sub(2) as usize),
        (None, Some(name)) => vec![
            Line::from(Span::styled(
                format!(
                    "{name} is gone: detached, unplugged, or its name is another device's now."
                ),
                theme::warn(),
            )),
            Line::from(
                "Nothing is selected and no key acts on another device in its place: \
                 Up/Down chooses one.",
            ),
        ],
        (None, None) => vec![Line::from("")],
    };
    let title = match (app.selected_device(), &app.devices.gone) {
        (Some(d), _) => format!(" {} ", d.name),
        (None, Some(name)) => format!(" {name} (gone) "),
        (None, None) => " Details ".to_string(),
    };
    crate::draw::title(&title, detail_area);
    // The triage key on the panel's lower edge: the status line has no room left for it.
    let triage = match (app.several.marks.len(), app.selected_device()) {
        (0, Some(_)) => " v triage: one verdict, read-only ".to_string(),
        (0, None) => String::new(),
        (n, _) => format!(" v triage the {n} marked, read-only "),
    };
    crate::draw::title(&triage, detail_area);
    let detail = crate::draw::pane(
        detail,
        Block::default().borders(Borders::ALL).inner(detail_area),
    );
    frame.render_widget(
        Paragraph::new(detail).block(
            Block::default()
                .borders(Borders::ALL)
                .title(Span::styled(title, theme::title()))
                .title_bottom(Span::styled(triage, theme::dim())),
        ),
        detail_area,
    );
}

/// The list's and the details' areas: side by side on a wide screen, else the list above,
/// leaving the details at least 8 rows (the identifying lines and `draw::pane`'s mark).
fn panes(rows: usize, area: Rect) -> (Rect, Rect) {
    if area.width >= 120 {
        let [a, b] = Layout::horizontal([Constraint::Percentage(62), Constraint::Percentage(38)])
            .areas(area);
        (a, b)
    } else {
        let rows = (rows as u16 + 3).clamp(4, area.height.saturating_sub(8).max(4));
        let [a, b] = Layout::vertical([Constraint::Length(rows), Constraint::Min(0)]).areas(area);
        (a, b)
    }
}

/// The rows of the list in sight (inside the border, under the header).
fn window(rows: usize, list: Rect, row: Option<usize>) -> crate::draw::Window {
    crate::draw::Window::over(rows, usize::from(list.height.saturating_sub(3)), row)
}

/// The screen row of the selected device in the list drawn into `area` (`Place::keep`).
pub(crate) fn selected_row_y(app: &App, area: Rect) -> Option<u16> {
    app.selected_device()?;
    let rows = app.visible_devices().len();
    let (list, _) = panes(rows, area);
    let w = window(rows, list, Some(app.devices.row));
    // The border and the header above the first row.
    let y = list.y + 2 + u16::try_from(app.devices.row.checked_sub(w.offset)?).ok()?;
    (y < list.bottom().saturating_sub(1)).then_some(y)
}

/// The HEALTH column: the SMART verdict in a word once read.
fn health_cell(app: &App, d: &BlockDevice) -> Cell<'static> {
    use crate::model::Verdict;
    let Some(st) = app.devices.drives.get(&d.name) else {
        return Cell::from("");
    };
    match &st.health {
        _ if st.reading => Cell::from("..").style(theme::dim()),
        Some(Ok(h)) => match h.verdict {
            Verdict::Passed => Cell::from("ok").style(theme::good()),
            Verdict::Warning => Cell::from("WARN").style(theme::warn()),
            Verdict::Failed => Cell::from("FAIL").style(theme::bad()),
            Verdict::Unavailable => Cell::from("n/a").style(theme::dim()),
        },
        Some(Err(_)) => Cell::from("?").style(theme::warn()),
        None => Cell::from(""),
    }
}

fn opt(v: &Option<String>) -> String {
    v.clone().unwrap_or_else(|| "-".into())
}

fn num<T: ToString>(v: Option<T>) -> String {
    v.map_or("?".into(), |x| x.to_string())
}

/// The drive's own cache state and SMART verdict, as far as read.
fn drive_lines(app: &App, d: &BlockDevice, lines: &mut Vec<Line<'static>>) {
    let label = |k: &str| Span::styled(format!("{k} "), theme::dim());
    if d.transport.is_virtual() {
        lines.push(Line::from(vec![
            label("drive cache / SMART"),
            Span::raw(format!("none on {} (no drive behind it)", d.transport)),
        ]));
        return;
    }
    let st = app.devices.drives.get(&d.name);
    let cache = match st.and_then(|s| s.cache.as_ref()) {
        _ if st.is_some_and(|s| s.reading) => "reading ...".to_string(),
        None => "not read (h reads it)".to_string(),
        Some(Err(e)) => e.to_string(),
        Some(Ok(c)) => match (&c.drive, &c.drive_unavailable) {
            (Some(dc), _) => match dc.enabled {
                Some(enabled) => {
                    format!("{} (as the drive reports it; w switches)", on_off(enabled))
                }
                None => "the drive reports no volatile cache".into(),
            },
            (None, Some(why)) => why.clone(),
            (None, None) => "unknown".into(),
        },
    };
    lines.push(Line::from(vec![
        label("drive write cache"),
        Span::raw(cache),
    ]));
    if let Some(Ok(c)) = st.and_then(|s| s.cache.as_ref())
        && let Some(dis) = &c.disagreement
    {
        lines.push(Line::from(Span::styled(dis.clone(), theme::warn())));
    }
    let health = match st.and_then(|s| s.health.as_ref()) {
        None => Span::raw("not read (h reads it)"),
        Some(Err(e)) => Span::styled(e.to_string(), theme::warn()),
        Some(Ok(h)) => {
            let mut text = h.verdict.as_str().to_string();
            if let Some(t) = h.temperature_c {
                text.push_str(&format!(", {t} C"));
            }
            if let Some(p) = h.power_on_hours {
                text.push_str(&format!(", {p} h powered on"));
            }
            if let Some(why) = &h.unavailable_reason {
                text.push_str(&format!(" ({why})"));
            }
            let findings: Vec<String> = h.findings.iter().map(|f| f.text.clone()).collect();
            if !findings.is_empty() {
                text.push_str(&format!(": {}", findings.join("; ")));
            }
            let style = match h.verdict {
                crate::model::Verdict::Passed => theme::good(),
                crate::model::Verdict::Warning => theme::warn(),
                crate::model::Verdict::Failed => theme::bad(),
                crate::model::Verdict::Unavailable => theme::dim(),
            };
            Span::styled(text, style)
        }
    };
    lines.push(Line::from(vec![label("SMART"), health]));
}

/// Every inventory field of the device, a line each group, the identifying ones first.
fn details(app: &App, d: &BlockDevice, width: usize) -> Vec<Line<'static>> {
    let mut lines = Vec::new();
    identity_lines(d, width, &mut lines);
    queue_lines(d, &mut lines);
    drive_lines(app, d, &mut lines);
    for n in &d.notes {
        lines.push(Line::from(Span::styled(format!("note: {n}"), theme::dim())));
    }
    // Last, so it never pushes a fact of the device out of the panel.
    if let Some((_, mount, _)) = crate::app::devices::mounted_file_system(d) {
        lines.push(Line::from(vec![
            Span::styled("f ", theme::title()),
            Span::raw(format!("test a file on {mount} (removed afterwards)")),
        ]));
    }
    lines
}

/// A field's name dimmed, its value, and the gap before the next field.
fn kv(k: &str, v: String) -> Vec<Span<'static>> {
    vec![
        Span::styled(format!("{k} "), theme::dim()),
        Span::raw(v),
        Span::raw("  "),
    ]
}

/// What tells the device from another: its path, size and model, whether it is in use, what
/// backs it, its partitions and holders.
fn identity_lines(d: &BlockDevice, width: usize, lines: &mut Vec<Line<'static>>) {
    let mut l1 = kv("path", d.path.display().to_string());
    l1.extend(kv("dev", d.dev.map_or("?".into(), |x| x.to_string())));
    l1.extend(kv(
        "size",
        d.size_bytes
            .map_or("?".into(), |b| format!("{} ({} bytes)", b.iec(), b.0)),
    ));
    lines.push(Line::from(l1));
    let mut l2 = kv("model", opt(&d.model));
    l2.extend(kv("vendor", opt(&d.vendor)));
    l2.extend(kv("serial", opt(&d.serial)));
    l2.extend(kv("firmware", opt(&d.firmware)));
    lines.push(Line::from(l2));
    // What tells this device from another of the same model comes first: a short pane keeps
    // these (`draw::pane`).
    let usage = d.usage_summary();
    lines.push(Line::from(vec![
        Span::styled("in use ", theme::dim()),
        if d.is_in_use() {
            Span::styled(usage, theme::warn())
        } else {
            Span::styled(usage, theme::good())
        },
    ]));
    if let Some(f) = &d.backing_file {
        lines.push(Line::from(kv(
            "backing file",
            crate::draw::elide(f, width.saturating_sub(14)),
        )));
    }
    if !d.partitions.is_empty() {
        let parts = d
            .partitions
            .iter()
            .map(|p| {
                format!(
                    "{} {}",
                    p.name,
                    p.size_bytes.map_or("?".into(), |b| b.iec())
                )
            })
            .collect::<Vec<_>>()
            .join(", ");
        lines.push(Line::from(kv("partitions", parts)));
    }
    if !d.holders.is_empty() {
        let h = d
            .holders
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(", ");
        lines.push(Line::from(kv("holders", h)));
    }
}

/// How the kernel queues the device's I/O: transport and media, zoning, block and request
/// sizes, the scheduler and the flush policy.
fn queue_lines(d: &BlockDevice, lines: &mut Vec<Line<'static>>) {
    let mut l3 = kv("transport", d.transport.to_string());
    l3.extend(kv(
        "rotational",
        d.rotational.map_or("?".into(), |r| {
            if r {
                "yes (HDD)".into()
            } else {
                "no (SSD)".into()
            }
        }),
    ));
    l3.extend(kv(
        "removable",
        d.removable
            .map_or("?".into(), |r| if r { "yes".into() } else { "no".into() }),
    ));
    l3.extend(kv(
        "read-only",
        d.read_only
            .map_or("?".into(), |r| if r { "yes".into() } else { "no".into() }),
    ));
    lines.push(Line::from(l3));
    if let Some((label, words)) = d.zoning.words() {
        lines.push(Line::from(kv(label, words)));
    }
    let mut l4 = kv(
        "blocks",
        format!(
            "{}/{}",
            num(d.logical_block_size),
            num(d.physical_block_size)
        ),
    );
    l4.extend(kv("nr_requests", num(d.nr_requests)));
    l4.extend(kv(
        "read-ahead",
        d.read_ahead_kb.map_or("?".into(), |k| format!("{k} KiB")),
    ));
    l4.extend(kv(
        "max request",
        d.max_sectors_kb.map_or("?".into(), |k| format!("{k} KiB")),
    ));
    lines.push(Line::from(l4));
    let sched = match &d.scheduler {
        Some(s) if s.available.is_empty() => "none applies (bio-based device)".to_string(),
        Some(s) => s
            .available
            .iter()
            .map(|n| {
                if s.active.as_deref() == Some(n) {
                    format!("[{n}]")
                } else {
                    n.clone()
                }
            })
            .collect::<Vec<_>>()
            .join(" "),
        None => "?".into(),
    };
    lines.push(Line::from(kv("scheduler", sched)));
    lines.push(Line::from(kv(
        "kernel flush policy",
        format!(
            "{} (queue/write_cache: whether the kernel sends flushes)",
            d.kernel_write_cache.map_or("?", |c| c.as_str())
        ),
    )));
}
