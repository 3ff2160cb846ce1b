//! The files in `assets/` are generated, never drawn or written by hand, and fail here when
//! they are stale:
//!
//! - screenshots of the real screens: the `App` state built from a fixture sysfs tree and
//!   synthetic run samples (as `tests/tui_screens.rs` builds them), drawn by `ui::render`
//!   through ratatui's TestBackend, and the buffer's cells (symbol, colours, bold, reverse)
//!   written as SVG;
//! - the manual page, `disktriage man`;
//! - the table of keys in `docs/screen.md`, from the key bindings.
//!
//! The documentation that shows them is checked here too: README.md stays short, and every
//! relative link in README.md and `docs/*.md` points at a file or heading that exists.
//!
//! Regenerate them all with one command:
//!
//!     DISKTRIAGE_UPDATE_ASSETS=1 cargo test --test assets
//!
//! The shell completion scripts are checked here too (they are generated at install time,
//! not kept in `assets/`).

#![allow(clippy::unwrap_used)] // tests may unwrap: a panic is the failure report

use crate::common;
use common::{HISTORY_ENV, history_dir};

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::tui::*;
use disktriage::app::App;
use disktriage::bench::TestName;
use disktriage::event::Msg;
use ratatui::buffer::Buffer;
use ratatui::crossterm::event::KeyCode;
use ratatui::style::{Color, Modifier};

const UPDATE_VAR: &str = "DISKTRIAGE_UPDATE_ASSETS";

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn assets() -> PathBuf {
    root().join("assets")
}

/// Compares a generated asset with the committed file; rewrites the file instead when
/// `DISKTRIAGE_UPDATE_ASSETS=1`. Returns the name of a stale or missing file.
fn check_or_update(name: &str, generated: &str) -> Option<String> {
    let path = assets().join(name);
    if std::env::var_os(UPDATE_VAR).is_some_and(|v| v == "1") {
        std::fs::create_dir_all(assets()).unwrap();
        if std::fs::read_to_string(&path).ok().as_deref() != Some(generated) {
            std::fs::write(&path, generated).unwrap();
            eprintln!("wrote {}", path.display());
        }
        return None;
    }
    match std::fs::read_to_string(&path) {
        Ok(committed) if committed == generated => None,
        Ok(_) => Some(format!("assets/{name} is stale")),
        Err(e) => Some(format!("assets/{name} cannot be read: {e}")),
    }
}

fn assert_current(stale: &[String]) {
    assert!(
        stale.is_empty(),
        "{}\nregenerate with: {UPDATE_VAR}=1 cargo test --test assets (and review the diff)",
        stale.join("\n")
    );
}

// ---------------------------------------------------------------------------------------
// The screens
// ---------------------------------------------------------------------------------------

/// One screenshot: the file name, the state, the terminal size.
struct Shot {
    name: &'static str,
    app: App,
    size: (u16, u16),
}

/// The device list of the QEMU lab (SATA, NVMe, SCSI, virtio), with the drive states and
/// SMART verdicts its drives report (the NVMe drive with the critical warning fails).
fn devices() -> App {
    let mut app = lab_app_with_drive_states(true);
    // The failing drive, whose reason the details give.
    key(&mut app, KeyCode::Down);
    key(&mut app, KeyCode::Down);
    app
}

/// A random-read test running on loop0, six seconds in, with the drive temperature.
fn live_run(console: bool) -> App {
    let mut app = app_with("host-loop-zram", true);
    app.console = console;
    keys(&mut app, "2");
    app.picker_test = disktriage::app::index_of(TestName::RandRead);
    keys(&mut app, "r");
    feed(&mut app, TestName::RandRead, "loop0", "none", 24, 512.0);
    for (i, c) in [41, 42, 42, 43, 44, 44].iter().enumerate() {
        app.update(Msg::Temperature {
            device: "loop0".into(),
            at: 1.0 + i as f64,
            celsius: *c,
        });
    }
    app
}

/// Starts rand-read on loop0 (R reruns after the first run) and finishes one repeat per
/// figure in `mbps`, p99 `p99_ms`.
fn run_repeats(app: &mut App, sched: &str, mbps: &[f64], p99_ms: f64) {
    if app.results.records.is_empty() {
        keys(app, "2");
        app.picker_test = disktriage::app::index_of(TestName::RandRead);
        keys(app, "r");
    } else {
        keys(app, "R");
    }
    for figure in mbps {
        let report = report(TestName::RandRead, "loop0", sched, *figure, p99_ms);
        app.update(Msg::RunStarted {
            target: Box::new(report.target.clone()),
            plan: Box::new(report.plan.clone()),
            notes: vec![],
        });
        app.update(Msg::RunFinished(Box::new(Ok(report))));
    }
}

/// Two runs of three repeats each, before and after a scheduler switch, side by side.
fn compare() -> App {
    let mut app = app_with("host-loop-zram", true);
    app.values.repeats = 3;
    run_repeats(&mut app, "none", &[505.0, 512.0, 519.0], 0.060);
    app.update(Msg::SchedulerSet {
        device: "loop0".into(),
        result: Ok("mq-deadline".into()),
    });
    run_repeats(&mut app, "mq-deadline", &[424.0, 431.0, 435.0], 0.080);
    keys(&mut app, "c");
    app
}

/// A request-size sweep (diskperf) in Results: its chart, MB/s against the request size for
/// forward, backward and random reads, with the knees.
fn sweep() -> App {
    let mut app = app_with("host-loop-zram", true);
    finish_with(
        &mut app,
        TestName::SizeSweep,
        false,
        &disk_like_size_sweep("loop0"),
    );
    keys(&mut app, "4");
    app
}

fn shots() -> Vec<Shot> {
    vec![
        Shot {
            name: "screen-devices-80x25.svg",
            app: devices(),
            size: (80, 25),
        },
        Shot {
            name: "screen-run-80x25.svg",
            app: live_run(true),
            size: (80, 25),
        },
        Shot {
            name: "screen-run-132x43.svg",
            app: live_run(false),
            size: (132, 43),
        },
        Shot {
            name: "screen-compare-80x25.svg",
            app: compare(),
            size: (80, 25),
        },
        Shot {
            name: "screen-sweep-80x25.svg",
            app: sweep(),
            size: (80, 25),
        },
    ]
}

#[test]
fn screenshots_are_current() {
    let stale: Vec<String> = shots()
        .iter()
        .filter_map(|shot| {
            let (w, h) = shot.size;
            check_or_update(shot.name, &svg(&buffer(&shot.app, w, h)))
        })
        .collect();
    assert_current(&stale);
}

#[test]
fn the_screenshots_show_what_their_names_say() {
    let text = |shot: &Shot| screen(&shot.app, shot.size.0, shot.size.1);
    let shots = shots();
    let find = |name: &str| shots.iter().find(|s| s.name.contains(name)).unwrap();
    let devices = text(find("devices"));
    assert!(
        devices.contains("nvme0n1") && devices.contains("FAIL"),
        "{devices}"
    );
    let run = text(find("run-80x25"));
    assert!(run.contains("rand-read on loop0 measuring"), "{run}");
    let compare = text(find("compare"));
    assert!(
        compare.contains("scheduler none -> mq-deadline"),
        "{compare}"
    );
    let sweep = text(find("sweep"));
    assert!(sweep.contains("size-sweep"), "{sweep}");
    assert!(sweep.contains("Read MB/s by request size"), "{sweep}");
    assert!(sweep.contains("F forward knee 128k"), "{sweep}");
}

#[test]
fn the_docs_show_every_screenshot() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    assert!(
        readme.contains("](assets/screen-run-80x25.svg)"),
        "README.md does not show the run screen"
    );
    let screen = std::fs::read_to_string(root().join("docs/screen.md")).unwrap();
    for shot in shots() {
        assert!(
            screen.contains(&format!("](../assets/{})", shot.name)),
            "docs/screen.md does not show assets/{}",
            shot.name
        );
    }
}

/// The pictures taken on the kernel's own consoles (`tests/lab/qemu_lab_console.rs` writes
/// them from QEMU's `screendump`): each is there, a PNG of its console's size in pixels, and
/// docs/screen.md shows it.
#[test]
fn the_real_console_pictures_are_kept_and_shown() {
    let screen = std::fs::read_to_string(root().join("docs/screen.md")).unwrap();
    for (name, size) in [
        ("screen-console-vgacon-80x25.png", (720, 400)),
        ("screen-console-fbcon-128x48.png", (1024, 768)),
    ] {
        let file = std::fs::File::open(assets().join(name))
            .unwrap_or_else(|e| panic!("assets/{name}: {e}"));
        let reader = png::Decoder::new(std::io::BufReader::new(file))
            .read_info()
            .unwrap_or_else(|e| panic!("assets/{name} is not a PNG: {e}"));
        let info = reader.info();
        assert_eq!((info.width, info.height), size, "assets/{name}");
        assert!(
            screen.contains(&format!("](../assets/{name})")),
            "docs/screen.md does not show assets/{name}"
        );
    }
}

// ---------------------------------------------------------------------------------------
// Buffer to SVG
// ---------------------------------------------------------------------------------------

/// Cell size in pixels and the font size: a monospace font's advance is about 0.6 em.
const CELL_W: u32 = 9;
const CELL_H: u32 = 18;
const FONT_PX: u32 = 15;
/// Baseline within a cell.
const BASELINE: u32 = 14;

/// The VGA palette of the Linux console: the 16 named colours as the admin sees them.
fn vga(color: Color) -> Option<&'static str> {
    Some(match color {
        Color::Black => "#000000",
        Color::Red => "#aa0000",
        Color::Green => "#00aa00",
        Color::Yellow => "#aa5500",
        Color::Blue => "#0000aa",
        Color::Magenta => "#aa00aa",
        Color::Cyan => "#00aaaa",
        Color::Gray => "#aaaaaa",
        Color::DarkGray => "#555555",
        Color::LightRed => "#ff5555",
        Color::LightGreen => "#55ff55",
        Color::LightYellow => "#ffff55",
        Color::LightBlue => "#5555ff",
        Color::LightMagenta => "#ff55ff",
        Color::LightCyan => "#55ffff",
        Color::White => "#ffffff",
        // The UI uses only the 16 named colours (it must read on a 16-colour console).
        Color::Reset | Color::Indexed(_) | Color::Rgb(..) => return None,
    })
}

const DEFAULT_FG: &str = "#aaaaaa";
const DEFAULT_BG: &str = "#000000";

/// On the console, bold is drawn in the bright version of the colour.
fn brighten(color: Color) -> Color {
    match color {
        Color::Black => Color::DarkGray,
        Color::Red => Color::LightRed,
        Color::Green => Color::LightGreen,
        Color::Yellow => Color::LightYellow,
        Color::Blue => Color::LightBlue,
        Color::Magenta => Color::LightMagenta,
        Color::Cyan => Color::LightCyan,
        Color::Gray | Color::Reset => Color::White,
        other => other,
    }
}

/// How one cell looks: the colours after bold and reverse video, and the font attributes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Look {
    fg: &'static str,
    bg: &'static str,
    bold: bool,
    underline: bool,
    dim: bool,
}

fn look(cell: &ratatui::buffer::Cell) -> Look {
    let m = cell.modifier;
    let bold = m.contains(Modifier::BOLD);
    let fg_color = if bold { brighten(cell.fg) } else { cell.fg };
    let fg = vga(fg_color).unwrap_or(if bold { "#ffffff" } else { DEFAULT_FG });
    let bg = vga(cell.bg).unwrap_or(DEFAULT_BG);
    let (fg, bg) = if m.contains(Modifier::REVERSED) {
        (bg, fg)
    } else {
        (fg, bg)
    };
    Look {
        fg,
        bg,
        bold,
        underline: m.contains(Modifier::UNDERLINED),
        dim: m.contains(Modifier::DIM),
    }
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// The screen as an SVG image: a black console, cell backgrounds as rectangles, and each run
/// of same-looking characters as one `<text>` with an x position per character, so glyphs
/// from fallback fonts (box drawing, braille) stay on the grid. Deterministic: the same
/// buffer always gives the same bytes.
fn svg(buffer: &Buffer) -> String {
    let area = buffer.area;
    let (w, h) = (u32::from(area.width), u32::from(area.height));
    let mut out = String::new();
    writeln!(
        out,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{pw}\" height=\"{ph}\" \
         viewBox=\"0 0 {pw} {ph}\" font-family=\"'DejaVu Sans Mono', 'Liberation Mono', \
         Menlo, Consolas, monospace\" font-size=\"{FONT_PX}\">",
        pw = w * CELL_W,
        ph = h * CELL_H,
    )
    .unwrap();
    writeln!(
        out,
        "<rect width=\"100%\" height=\"100%\" fill=\"{DEFAULT_BG}\"/>"
    )
    .unwrap();
    for y in 0..area.height {
        let looks: Vec<(Look, &str)> = (0..area.width)
            .map(|x| {
                let cell = &buffer[(area.x + x, area.y + y)];
                (look(cell), cell.symbol())
            })
            .collect();
        let top = u32::from(y) * CELL_H;
        // Backgrounds: one rectangle per run of the same colour.
        let mut x = 0;
        while x < looks.len() {
            let bg = looks[x].0.bg;
            let run = looks[x..].iter().take_while(|(l, _)| l.bg == bg).count();
            if bg != DEFAULT_BG {
                writeln!(
                    out,
                    "<rect x=\"{}\" y=\"{top}\" width=\"{}\" height=\"{CELL_H}\" fill=\"{bg}\"/>",
                    x as u32 * CELL_W,
                    run as u32 * CELL_W
                )
                .unwrap();
            }
            x += run;
        }
        // Text: runs of visible characters that look the same; blanks end a run.
        let blank = |s: &str| s.is_empty() || s == " ";
        let mut x = 0;
        while x < looks.len() {
            let (l, sym) = looks[x];
            if blank(sym) && !l.underline {
                x += 1;
                continue;
            }
            let run = looks[x..]
                .iter()
                .take_while(|(other, s)| *other == l && (!blank(s) || l.underline))
                .count();
            let xs: Vec<String> = (x..x + run)
                .map(|i| (i as u32 * CELL_W).to_string())
                .collect();
            let text: String = looks[x..x + run]
                .iter()
                .map(|(_, s)| if blank(s) { "\u{a0}" } else { s })
                .collect();
            let mut attrs = format!("fill=\"{}\"", l.fg);
            if l.bold {
                attrs.push_str(" font-weight=\"bold\"");
            }
            if l.underline {
                attrs.push_str(" text-decoration=\"underline\"");
            }
            if l.dim {
                attrs.push_str(" opacity=\"0.6\"");
            }
            writeln!(
                out,
                "<text x=\"{}\" y=\"{}\" {attrs}>{}</text>",
                xs.join(" "),
                top + BASELINE,
                escape(&text)
            )
            .unwrap();
            x += run;
        }
    }
    out.push_str("</svg>\n");
    out
}

#[test]
fn svg_keeps_colours_reverse_video_and_escapes_text() {
    use ratatui::layout::Rect;
    use ratatui::style::Style;
    let mut buf = Buffer::empty(Rect::new(0, 0, 6, 1));
    buf.set_string(0, 0, "<a&", Style::default().fg(Color::Red));
    buf.set_string(
        3,
        0,
        "OK",
        Style::default().add_modifier(Modifier::REVERSED),
    );
    let s = svg(&buf);
    assert!(s.contains("width=\"54\" height=\"18\""), "{s}");
    assert!(
        s.contains("<text x=\"0 9 18\" y=\"14\" fill=\"#aa0000\">&lt;a&amp;</text>"),
        "{s}"
    );
    // Reverse video: the default foreground becomes the background, and the text black.
    assert!(
        s.contains("<rect x=\"27\" y=\"0\" width=\"18\" height=\"18\" fill=\"#aaaaaa\"/>"),
        "{s}"
    );
    assert!(
        s.contains("<text x=\"27 36\" y=\"14\" fill=\"#000000\">OK</text>"),
        "{s}"
    );
    assert_eq!(s, svg(&buf), "the same buffer gives the same image");
}

// ---------------------------------------------------------------------------------------
// Man page and completions
// ---------------------------------------------------------------------------------------

/// The commands an admin can type (the hidden developer tools excluded).
fn visible_commands() -> Vec<String> {
    use clap::CommandFactory;
    disktriage::cli::Cli::command()
        .get_subcommands()
        .filter(|c| !c.is_hide_set())
        .map(|c| c.get_name().to_string())
        .collect()
}

fn bin() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_disktriage"));
    cmd.env(HISTORY_ENV, history_dir());
    cmd
}

/// Runs the binary and returns its stdout; panics with stderr when it fails.
fn output(args: &[&str]) -> String {
    let out = bin().args(args).output().unwrap();
    assert!(
        out.status.success(),
        "disktriage {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn man_page_is_current_and_documents_every_command() {
    let page = output(&["man"]);
    assert_eq!(page, disktriage::install::man_page().unwrap());
    let commands = visible_commands();
    assert!(commands.len() >= 9, "{commands:?}");
    for name in &commands {
        assert!(
            page.contains(&format!(".SS \"disktriage {name}\"")),
            "the man page has no section for `disktriage {name}`"
        );
    }
    for hidden in ["disktriage debug", "journal\\-dir"] {
        assert!(!page.contains(hidden), "{hidden} is in the man page");
    }
    // Every option of run, the command with the most.
    for opt in [
        "\\-\\-destroy\\-data",
        "\\-\\-qd",
        "\\-\\-engine",
        "\\-\\-fio",
    ] {
        assert!(page.contains(opt), "{opt} missing from the man page");
    }
    assert_eq!(page.matches(".ie \\n(.g .ds Aq").count(), 1, "one preamble");
    assert_current(check_or_update("disktriage.1", &page).as_slice());
}

#[test]
fn man_page_formats_without_warnings() {
    use std::io::Write as _;
    let Ok(mut groff) = Command::new("groff")
        .args(["-man", "-Tutf8", "-ww", "-z"])
        .stdin(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
    else {
        common::skip(
            "man_page_formats_without_warnings",
            "groff is not installed",
        );
        return;
    };
    let page = disktriage::install::man_page().unwrap();
    groff
        .stdin
        .take()
        .unwrap()
        .write_all(page.as_bytes())
        .unwrap();
    let out = groff.wait_with_output().unwrap();
    assert!(out.status.success());
    let warnings = String::from_utf8_lossy(&out.stderr);
    assert!(warnings.is_empty(), "groff warns:\n{warnings}");
}

#[test]
fn bash_completion_parses_and_completes_commands_and_options() {
    let script = output(&["completions", "bash"]);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("disktriage.bash");
    std::fs::write(&path, &script).unwrap();
    let check = Command::new("bash").arg("-n").arg(&path).output().unwrap();
    assert!(
        check.status.success(),
        "bash -n: {}",
        String::from_utf8_lossy(&check.stderr)
    );
    // What bash offers after `disktriage ` and after `disktriage run --q`.
    let complete = |words: &str, cword: usize| {
        let out = Command::new("bash")
            .arg("-c")
            .arg(format!(
                "source {}; COMP_WORDS=({words}); COMP_CWORD={cword}; \
                 COMP_LINE='{words}'; COMP_POINT=${{#COMP_LINE}}; \
                 _disktriage disktriage \"${{COMP_WORDS[$COMP_CWORD]}}\" \
                 \"${{COMP_WORDS[$COMP_CWORD-1]}}\"; printf '%s\\n' \"${{COMPREPLY[@]}}\"",
                path.display()
            ))
            .output()
            .unwrap();
        String::from_utf8(out.stdout).unwrap()
    };
    let commands = complete("disktriage ''", 1);
    for name in visible_commands() {
        assert!(
            commands.lines().any(|l| l == name),
            "{name} not offered:\n{commands}"
        );
    }
    assert!(!commands.lines().any(|l| l == "debug"), "{commands}");
    let options = complete("disktriage run --q", 2);
    assert_eq!(
        options.split_whitespace().collect::<Vec<_>>(),
        ["--qd", "--qds"]
    );
}

#[test]
fn zsh_and_fish_completions_name_every_command() {
    let zsh = output(&["completions", "zsh"]);
    assert!(zsh.starts_with("#compdef disktriage"), "{zsh}");
    let fish = output(&["completions", "fish"]);
    for name in visible_commands() {
        assert!(zsh.contains(&format!("'{name}:")), "zsh: {name} missing");
        assert!(
            fish.contains(&format!("-f -a \"{name}\"")),
            "fish: {name} missing"
        );
    }
    for script in [&zsh, &fish] {
        assert!(
            !script.contains("journal-dir"),
            "a hidden option is offered"
        );
        assert!(script.contains("destroy-data"));
    }
}

#[test]
fn an_unknown_shell_is_refused_with_the_choices() {
    let out = bin().args(["completions", "tcsh"]).output().unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("[possible values: bash, zsh, fish]"), "{err}");
}

// ---------------------------------------------------------------------------------------
// The key table in docs/screen.md, generated from the bindings
// ---------------------------------------------------------------------------------------

const KEYS_BEGIN: &str = "<!-- keys: generated from BINDINGS (src/app/keys.rs) and the screens' rows (src/app/screens/) by tests/assets/ -->";
const KEYS_END: &str = "<!-- end of the generated keys -->";

/// Every key binding as a Markdown table, in the help screen's order: the keys that work
/// everywhere, then each screen's own.
fn keys_markdown() -> String {
    use disktriage::app::Screen;
    use disktriage::app::{Binding, Scope, all_bindings};
    let cell = |text: &str| text.replace('|', "\\|");
    let row = |out: &mut String, b: &Binding| {
        let place = match b.scope {
            Scope::Global => "everywhere",
            Scope::NotOnTest => "everywhere but Test",
            Scope::On(screen) => screen.title(),
            Scope::TestList => "Test, on the list of tests",
            Scope::TestForm => "Test, on the parameters",
        };
        writeln!(out, "| {place} | `{}` | {} |", cell(b.names), cell(b.help)).unwrap();
    };
    let screen_of = |scope: Scope| match scope {
        Scope::Global | Scope::NotOnTest => None,
        Scope::On(screen) => Some(screen),
        Scope::TestList | Scope::TestForm => Some(Screen::Tests),
    };
    let mut out = String::from("| where | keys | what they do |\n|---|---|---|\n");
    for b in all_bindings().filter(|b| screen_of(b.scope).is_none()) {
        row(&mut out, b);
    }
    for &screen in Screen::WITH_KEYS {
        for b in all_bindings().filter(|b| screen_of(b.scope) == Some(screen)) {
            row(&mut out, b);
        }
    }
    out
}

/// Compares the generated part of a Markdown file (between `begin` and `end`) with
/// `generated`, or rewrites that part when `DISKTRIAGE_UPDATE_ASSETS=1`.
fn check_or_update_region(file: &str, begin: &str, end: &str, generated: &str) -> Option<String> {
    let path = root().join(file);
    let text = std::fs::read_to_string(&path).unwrap();
    let (Some(start), Some(stop)) = (text.find(begin), text.find(end)) else {
        return Some(format!("{file} lacks the markers {begin} ... {end}"));
    };
    let inner = start + begin.len();
    assert!(
        inner <= stop,
        "{file}: the end marker comes before the start"
    );
    let wanted = format!("\n{generated}");
    if text[inner..stop] == wanted {
        return None;
    }
    if std::env::var_os(UPDATE_VAR).is_some_and(|v| v == "1") {
        std::fs::write(
            &path,
            format!("{}{wanted}{}", &text[..inner], &text[stop..]),
        )
        .unwrap();
        eprintln!("wrote {}", path.display());
        return None;
    }
    Some(format!(
        "{file}: the generated part between {begin} and {end} is stale"
    ))
}

const EXITS_BEGIN: &str = "<!-- exit statuses: generated from model::exit::TABLE (src/model/exit.rs) by tests/assets/ -->";
const EXITS_END: &str = "<!-- end of the generated exit statuses -->";

#[test]
fn the_exit_status_table_in_the_docs_is_current() {
    let mut table = String::from("| status | means |\n|---|---|\n");
    for (status, meaning) in disktriage::model::EXIT_STATUSES {
        writeln!(table, "| {status} | {meaning} |").unwrap();
    }
    assert!(table.contains("| 2 | A usage error"), "{table}");
    assert_current(
        check_or_update_region("docs/commands.md", EXITS_BEGIN, EXITS_END, &table).as_slice(),
    );
}

#[test]
fn the_key_table_in_the_docs_is_current() {
    let table = keys_markdown();
    assert!(table.contains("| everywhere | `? or F1` |"), "{table}");
    assert!(table.contains("| Health |"), "{table}");
    assert_current(
        check_or_update_region("docs/screen.md", KEYS_BEGIN, KEYS_END, &table).as_slice(),
    );
}

// ---------------------------------------------------------------------------------------
// The documentation: README.md's size, and every relative link in it and in docs/
// ---------------------------------------------------------------------------------------

/// README.md is for the admin; everything longer goes into `docs/`.
const README_MAX_BYTES: u64 = 20_000;

/// README.md and every Markdown file in `docs/`.
fn markdown_files() -> Vec<PathBuf> {
    let mut files = vec![root().join("README.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root().join("docs"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|e| e == "md"))
        .collect();
    docs.sort();
    assert!(!docs.is_empty(), "docs/ holds no Markdown file");
    files.extend(docs);
    files
}

/// The lines of a Markdown text outside fenced code blocks.
fn prose_lines(text: &str) -> impl Iterator<Item = &str> {
    let mut fenced = false;
    text.lines().filter(move |line| {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            return false;
        }
        !fenced
    })
}

/// The anchor GitHub gives a heading: the text as shown (code marks and link syntax dropped),
/// lower case, with everything but letters, digits, spaces, `-` and `_` removed and spaces
/// turned into `-`.
fn heading_anchor(heading: &str) -> String {
    heading
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, ' ' | '-' | '_'))
        .flat_map(char::to_lowercase)
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// Every anchor of a Markdown text; a repeated heading gets `-1`, `-2` ... as on GitHub.
fn anchors(text: &str) -> Vec<String> {
    let mut seen: Vec<String> = Vec::new();
    for line in prose_lines(text) {
        let hashes = line.chars().take_while(|&c| c == '#').count();
        if hashes == 0 || hashes > 6 || !line[hashes..].starts_with(' ') {
            continue;
        }
        let base = heading_anchor(line[hashes..].trim());
        let repeats = seen
            .iter()
            .filter(|a| {
                **a == base
                    || a.strip_prefix(&format!("{base}-"))
                        .is_some_and(|n| n.parse::<u32>().is_ok())
            })
            .count();
        seen.push(if repeats == 0 {
            base.clone()
        } else {
            format!("{base}-{repeats}")
        });
    }
    seen
}

/// The targets of the inline links and images of a Markdown text, outside fenced code.
fn link_targets(text: &str) -> Vec<String> {
    let prose: Vec<&str> = prose_lines(text).collect();
    let prose = prose.join("\n");
    let mut targets = Vec::new();
    let mut rest = prose.as_str();
    while let Some(at) = rest.find("](") {
        rest = &rest[at + 2..];
        let end = rest.find([')', '\n']).unwrap_or(rest.len());
        // `[text](target "title")`: the target is the first word.
        if let Some(target) = rest[..end].split_whitespace().next() {
            targets.push(target.to_string());
        }
        rest = &rest[end..];
    }
    targets
}

/// Why a link from `file` to `target` is broken, or None when its file and anchor exist.
/// Links that leave the repository (a scheme such as `https:`) are not checked here.
fn broken_link(file: &Path, target: &str) -> Option<String> {
    if target.contains("://") || target.starts_with("mailto:") {
        return None;
    }
    let (path, anchor) = match target.split_once('#') {
        Some((path, anchor)) => (path, Some(anchor)),
        None => (target, None),
    };
    let linked = if path.is_empty() {
        file.to_path_buf()
    } else {
        file.parent().unwrap().join(path)
    };
    if !linked.exists() {
        return Some(format!("{target}: {} does not exist", linked.display()));
    }
    let anchor = anchor?;
    if linked.extension().is_none_or(|e| e != "md") {
        return Some(format!(
            "{target}: an anchor into a file that is not Markdown"
        ));
    }
    let text = std::fs::read_to_string(&linked).unwrap();
    if anchors(&text).iter().any(|a| a == anchor) {
        None
    } else {
        Some(format!(
            "{target}: {} has no heading #{anchor}",
            linked.display()
        ))
    }
}

/// The broken links of the given Markdown files, one line each.
fn broken_links(files: &[PathBuf]) -> Vec<String> {
    let mut broken = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(file).unwrap();
        for target in link_targets(&text) {
            if let Some(why) = broken_link(file, &target) {
                let name = file.strip_prefix(root()).unwrap_or(file);
                broken.push(format!("{}: {why}", name.display()));
            }
        }
    }
    broken
}

#[test]
fn the_readme_is_at_most_20000_bytes() {
    let size = std::fs::metadata(root().join("README.md")).unwrap().len();
    assert!(
        size <= README_MAX_BYTES,
        "README.md is {size} bytes, more than {README_MAX_BYTES}: move the details into docs/"
    );
}

#[test]
fn every_relative_link_in_the_docs_points_at_a_file_and_heading_that_exist() {
    let files = markdown_files();
    let linked: usize = files
        .iter()
        .map(|f| link_targets(&std::fs::read_to_string(f).unwrap()).len())
        .sum();
    assert!(
        linked > 20,
        "only {linked} links found: is the parser blind?"
    );
    let broken = broken_links(&files);
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn the_link_check_finds_a_missing_file_and_a_missing_heading() {
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("page.md");
    std::fs::write(
        dir.path().join("other.md"),
        "# Other\n\n## Write speed: `--preserve`\n",
    )
    .unwrap();
    std::fs::write(
        &page,
        "# Page\n\n## Same\n\n## Same\n\n[ok](other.md#write-speed---preserve) \
         [ok](#same-1) [ok](other.md)\n[missing](gone.md) [no heading](other.md#nowhere)\n\
         [no heading](#same-2) ![image](missing.svg)\n\n```\n[in code](nowhere.md)\n```\n",
    )
    .unwrap();
    let broken = broken_links(&[page]);
    assert_eq!(broken.len(), 4, "{broken:#?}");
    for target in ["gone.md", "other.md#nowhere", "#same-2", "missing.svg"] {
        assert!(
            broken.iter().any(|b| b.contains(&format!("{target}:"))),
            "{target} not reported: {broken:#?}"
        );
    }
}
