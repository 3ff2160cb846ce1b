//! The interactive screen on the kernel's own consoles, each in its own boot
//! (`tests/vm/lab.sh`; the guest is `tests/vm/console-guest.sh`): vgacon in the VGA's 80x25
//! text mode (disk set `console`), and fbcon on the standard VGA's DRM framebuffer at
//! 1024x768, 128x48 cells (disk set `fbcon`). Neither has an alternate screen; both keep
//! whatever was on them.
//!
//! tty1 is filled with earlier output (enough to scroll) before disktriage starts there with
//! TERM=linux. The test presses keys through QEMU's monitor (`sendkey`) and reads the screen
//! back as the kernel holds it (`/dev/vcsa1`, asked for on the guest's ttyS2), then asserts
//! what an admin at that console sees:
//!
//! - every screen visited (Devices, the help, Test, a read test running with its charts and
//!   finished, run again, Results, Compare, Health, a surface scan running and stopped, a
//!   triage, the capacity probe's dialog, the probe and its stop, the TRIM check's dialog and
//!   its verdict, the flush check's dialog and the check running) holds nothing of the
//!   earlier output: each cell is one the program drew;
//! - no glyph is the font's stand-in for a character it lacks (the console draws those as `?`);
//! - no character is drawn in its background's colour, and the selected device row differs
//!   in colour from the others;
//! - after `q`, the screen holds nothing of the frame and the shell's next line
//!   (`AFTER rc=0`) starts a line of its own.
//!
//! One screen of each is also kept as a picture (the monitor's `screendump`, as PNG) under
//! target/lab, and in `assets/` with `DISKTRIAGE_UPDATE_ASSETS=1`.

use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::time::{Duration, Instant};

use crate::{Boot, finish_boot, start_boot};

/// The earlier output's marks (console-guest.sh): none may survive on any screen.
const EARLIER: [&str; 4] = [
    "EARLIER-OUTPUT",
    "QEMU HARDDISK, 2.5+",
    "/bin/busybox",
    "UDMA/100",
];

/// CP437, vgacon's ROM font, by position: the character each glyph shows.
const CP437: &str = concat!(
    " ☺☻♥♦♣♠•◘○◙♂♀♪♫☼►◄↕‼¶§▬↨↑↓→←∟↔▲▼",
    " !\"#$%&'()*+,-./0123456789:;<=>?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_`abcdefghijklmnopqrstuvwxyz{|}~⌂",
    "ÇüéâäàåçêëèïîìÄÅÉæÆôöòûùÿÖÜ¢£¥₧ƒáíóúñÑªº¿⌐¬½¼¡«»░▒▓│┤╡╢╖╕╣║╗╝╜╛┐",
    "└┴┬├─┼╞╟╚╔╩╦╠═╬╧╨╤╥╙╘╒╓╫╪┘┌█▄▌▐▀αßΓπΣσµτΦΘΩδ∞φε∩≡±≥≤⌠⌡÷≈°∙·√ⁿ²■\u{a0}",
);

/// The console as `/dev/vcsa1` held it.
struct Screen {
    rows: usize,
    cols: usize,
    cursor: (usize, usize),
    /// The characters, row by row, decoded from the font's positions.
    text: Vec<String>,
    /// Each cell's attribute: foreground in the low 4 bits, background in the next 3.
    attrs: Vec<Vec<u8>>,
}

impl Screen {
    /// Parses vcsa's bytes (given as hex): rows, columns, cursor column and row, then a
    /// (character, attribute) pair per cell.
    fn parse(hex: &str) -> Screen {
        let bytes: Vec<u8> = (0..hex.len() / 2)
            .map(|i| u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).unwrap())
            .collect();
        let font: Vec<char> = CP437.chars().collect();
        assert_eq!(font.len(), 256, "the CP437 table");
        let (rows, cols) = (usize::from(bytes[0]), usize::from(bytes[1]));
        let cursor = (usize::from(bytes[2]), usize::from(bytes[3]));
        assert_eq!(
            bytes.len(),
            4 + 2 * rows * cols,
            "a vcsa dump of {rows}x{cols}"
        );
        let text = bytes[4..]
            .chunks(2 * cols)
            .map(|row| {
                row.chunks(2)
                    .map(|cell| font[usize::from(cell[0])])
                    .collect()
            })
            .collect();
        let attrs = bytes[4..]
            .chunks(2 * cols)
            .map(|row| row.chunks(2).map(|cell| cell[1]).collect())
            .collect();
        Screen {
            rows,
            cols,
            cursor,
            text,
            attrs,
        }
    }

    fn joined(&self) -> String {
        self.text.join("\n")
    }

    fn contains(&self, words: &str) -> bool {
        self.text.iter().any(|row| row.contains(words))
    }

    /// Where `words` first starts: (row, column in characters).
    fn find(&self, words: &str) -> Option<(usize, usize)> {
        self.text.iter().enumerate().find_map(|(y, row)| {
            let byte = row.find(words)?;
            Some((y, row[..byte].chars().count()))
        })
    }

    /// The attribute of the cell at (row, column).
    fn attr(&self, (y, x): (usize, usize)) -> u8 {
        self.attrs[y][x]
    }
}

/// The console's colours of a cell: (foreground 0-15, background 0-7).
fn colours(attr: u8) -> (u8, u8) {
    (attr & 0x0f, (attr >> 4) & 0x07)
}

/// The guest's console while it runs: its monitor for keys, its ttyS2 for screen dumps.
struct Console {
    monitor: UnixStream,
    control: BufReader<UnixStream>,
}

/// A picture of the screen as QEMU's display shows it (the monitor's `screendump`): RGB,
/// three bytes a pixel, row by row.
struct Picture {
    width: usize,
    height: usize,
    rgb: Vec<u8>,
}

impl Picture {
    /// Reads the PPM (P6) that `screendump` writes, or None while it is incomplete.
    fn read_ppm(path: &Path) -> Option<Picture> {
        let bytes = std::fs::read(path).ok()?;
        // The header: "P6", width, height, maximum value, each followed by whitespace.
        let mut fields = Vec::new();
        let mut at = 0;
        while fields.len() < 4 {
            while bytes.get(at)?.is_ascii_whitespace() {
                at += 1;
            }
            let start = at;
            while !bytes.get(at)?.is_ascii_whitespace() {
                at += 1;
            }
            fields.push(String::from_utf8_lossy(&bytes[start..at]).into_owned());
        }
        assert_eq!(fields[0], "P6", "screendump's format");
        let width: usize = fields[1].parse().ok()?;
        let height: usize = fields[2].parse().ok()?;
        let rgb = bytes.get(at + 1..at + 1 + 3 * width * height)?.to_vec();
        Some(Picture { width, height, rgb })
    }

    fn colour_count(&self) -> usize {
        let set: std::collections::BTreeSet<&[u8]> = self.rgb.chunks(3).collect();
        set.len()
    }

    fn write_png(&self, path: &Path) {
        let file = std::fs::File::create(path).unwrap();
        let mut encoder = png::Encoder::new(
            std::io::BufWriter::new(file),
            u32::try_from(self.width).unwrap(),
            u32::try_from(self.height).unwrap(),
        );
        encoder.set_color(png::ColorType::Rgb);
        encoder.set_depth(png::BitDepth::Eight);
        encoder.set_compression(png::Compression::High);
        let mut writer = encoder.write_header().unwrap();
        writer.write_image_data(&self.rgb).unwrap();
        writer.finish().unwrap();
    }
}

/// Connects to a socket QEMU serves, once QEMU has made it.
fn connect(path: &Path, until: Instant) -> UnixStream {
    loop {
        if let Ok(s) = UnixStream::connect(path) {
            return s;
        }
        assert!(Instant::now() < until, "no {} from QEMU", path.display());
        std::thread::sleep(Duration::from_millis(200));
    }
}

impl Console {
    fn attach(work: &Path) -> Console {
        let until = Instant::now() + Duration::from_secs(120);
        let monitor = connect(&work.join("monitor.sock"), until);
        // The monitor's banner and echoes are not read: drained on a thread so it never waits.
        let mut drain = monitor.try_clone().unwrap();
        std::thread::spawn(move || {
            let mut sink = [0u8; 4096];
            while drain.read(&mut sink).is_ok_and(|n| n > 0) {}
        });
        let control = connect(&work.join("control.sock"), until);
        control
            .set_read_timeout(Some(Duration::from_secs(2)))
            .unwrap();
        let mut console = Console {
            monitor,
            control: BufReader::new(control),
        };
        // The guest answers once its script runs (after the boot and the disks' probe).
        while Instant::now() < until {
            console.send("ping");
            if console.read_line().is_some_and(|l| l == "pong") {
                return console;
            }
        }
        panic!("the guest never answered on ttyS2");
    }

    fn send(&mut self, line: &str) {
        let s = self.control.get_mut();
        s.write_all(format!("{line}\n").as_bytes()).unwrap();
    }

    /// One line from the guest, or None after the read timeout.
    fn read_line(&mut self) -> Option<String> {
        let mut line = String::new();
        match self.control.read_line(&mut line) {
            Ok(n) if n > 0 => Some(line.trim_end().to_string()),
            _ => None,
        }
    }

    /// Presses `key` (QEMU's names: `2`, `shift-slash`, `esc`, `q`).
    fn key(&mut self, key: &str) {
        self.monitor
            .write_all(format!("sendkey {key}\n").as_bytes())
            .unwrap();
        std::thread::sleep(Duration::from_millis(300));
    }

    /// The monitor's picture of the display, saved by QEMU into `path` (a PPM).
    fn picture(&mut self, path: &Path) -> Picture {
        let _ = std::fs::remove_file(path);
        self.monitor
            .write_all(format!("screendump {}\n", path.display()).as_bytes())
            .unwrap();
        let until = Instant::now() + Duration::from_secs(30);
        loop {
            if let Some(picture) = Picture::read_ppm(path) {
                return picture;
            }
            assert!(
                Instant::now() < until,
                "no screendump in {}",
                path.display()
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    fn dump(&mut self, name: &str) -> Screen {
        self.send(&format!("dump {name}"));
        let until = Instant::now() + Duration::from_secs(30);
        let mut hex = None;
        while Instant::now() < until {
            match self.read_line() {
                Some(l) if l == format!("end {name}") => break,
                Some(l) if l.starts_with("screen ") => {}
                Some(l) if !l.is_empty() && l != "pong" => hex = Some(l),
                _ => {}
            }
        }
        Screen::parse(&hex.unwrap_or_else(|| panic!("no dump {name}")))
    }

    /// Dumps the screen until `ready` holds (the program draws under emulation slowly).
    fn wait_for(&mut self, name: &str, ready: impl Fn(&Screen) -> bool) -> Screen {
        let until = Instant::now() + Duration::from_secs(90);
        loop {
            let screen = self.dump(name);
            if ready(&screen) {
                // One more frame's time, then the screen as it stays.
                std::thread::sleep(Duration::from_millis(500));
                return self.dump(name);
            }
            assert!(
                Instant::now() < until,
                "{name}: not there after 90 s; the console holds:\n{}",
                screen.joined()
            );
            std::thread::sleep(Duration::from_millis(500));
        }
    }
}

/// One kind of kernel console the lab boots.
struct Kind {
    /// The test's name (for the skip message and the kept pictures).
    test: &'static str,
    diskset: &'static str,
    label: &'static str,
    /// The console's size in cells, as vcsa says it.
    size: (usize, usize),
    /// What /sys/class/vtconsole names the console driver bound to tty1.
    driver: &'static str,
    /// The display's size in pixels, as `screendump` draws it.
    pixels: (usize, usize),
    /// The screen kept as a picture in `assets/` (when DISKTRIAGE_UPDATE_ASSETS=1) and its name.
    asset: (&'static str, &'static str),
}

const VGACON: Kind = Kind {
    test: "qemu_lab_console_every_screen_is_drawn_whole_and_quit_leaves_a_clean_console",
    diskset: "console",
    label: "-console",
    size: (25, 80),
    driver: "VGA",
    // The VGA's text mode: 80x25 cells of the ROM font's 9x16 pixels.
    pixels: (720, 400),
    asset: ("devices", "screen-console-vgacon-80x25.png"),
};

const FBCON: Kind = Kind {
    test: "qemu_lab_fbcon_every_screen_is_drawn_whole_and_quit_leaves_a_clean_console",
    diskset: "fbcon",
    label: "-fbcon",
    size: (48, 128),
    driver: "frame buffer",
    pixels: (1024, 768),
    asset: ("run", "screen-console-fbcon-128x48.png"),
};

/// What every screen the program drew must satisfy on the console.
fn assert_clean(kind: &Kind, name: &str, screen: &Screen) {
    let all = screen.joined();
    eprintln!("{name} on the kernel's console ({}):\n{all}\n", kind.driver);
    assert_eq!(
        (screen.rows, screen.cols),
        kind.size,
        "{name}: the console's size"
    );
    for mark in EARLIER {
        assert!(
            !all.contains(mark),
            "{name}: the console's earlier output ({mark:?}) shows through:\n{all}"
        );
    }
    // The console draws a character its font lacks as `?`; the program's own are the help
    // key in the header ("?:help"), the help's first line ("? or F1") and the quit dialog.
    let own: usize = ["?:help", "? or F1", "quit?"]
        .iter()
        .map(|own| all.matches(own).count())
        .sum();
    assert_eq!(
        all.matches('?').count(),
        own,
        "{name}: a glyph the console's font does not have:\n{all}"
    );
    // Readable in the console's 16 colours: no character drawn in its background's colour.
    // (A block is a picture, not a character: a chart's two points in one cell are a full
    // block in the curve's colour on the same colour.)
    let picture = |c: char| matches!(c, ' ' | '\u{a0}' | '█' | '▀' | '▄' | '▌' | '▐');
    for (y, row) in screen.text.iter().enumerate() {
        for (x, c) in row.chars().enumerate() {
            let (fg, bg) = colours(screen.attr((y, x)));
            assert!(
                picture(c) || fg != bg,
                "{name}: {c:?} at row {y} column {x} is drawn in its background's colour \
                 ({fg} on {bg}):\n{}",
                row
            );
        }
    }
}

/// The selected row stands out in colour, not only by its `>`: its name's cells differ from
/// another row's.
fn assert_selection_shows(name: &str, screen: &Screen, selected: &str, other: &str) {
    let at = |words: &str| {
        screen
            .find(words)
            .unwrap_or_else(|| panic!("{name}: no {words:?}:\n{}", screen.joined()))
    };
    // The rows of the list: the name after the selection's `>`, or after a blank.
    let (sel, oth) = (at(&format!(">{selected}")), at(&format!(" {other}")));
    assert_ne!(
        colours(screen.attr((sel.0, sel.1 + 1))),
        colours(screen.attr((oth.0, oth.1 + 1))),
        "{name}: the selected row {selected} has the colours of {other}"
    );
}

/// A picture of the console as QEMU shows it, kept under target/lab (and in `assets/` for
/// the kind's chosen screen when DISKTRIAGE_UPDATE_ASSETS=1): the display's size, and no
/// more colours than the console has.
fn keep_picture(console: &mut Console, work: &Path, kind: &Kind, name: &str) {
    let picture = console.picture(&work.join(format!("{name}.ppm")));
    assert_eq!(
        (picture.width, picture.height),
        kind.pixels,
        "{name}: the display's size in pixels"
    );
    let colours = picture.colour_count();
    assert!(
        (2..=16).contains(&colours),
        "{name}: {colours} colours in the picture of a 16-colour console"
    );
    let keep = crate::repo().join("target/lab");
    picture.write_png(&keep.join(format!("console{}-{name}.png", kind.label)));
    if name == kind.asset.0
        && std::env::var_os("DISKTRIAGE_UPDATE_ASSETS").is_some_and(|v| v == "1")
    {
        let asset = crate::repo().join("assets").join(kind.asset.1);
        picture.write_png(&asset);
        eprintln!("wrote {}", asset.display());
    }
}

/// Boots the kind's console, visits every screen and quits, asserting each screen on the
/// console as the kernel holds it.
fn every_screen_on(kind: &Kind) {
    if !crate::lab_or_skip(kind.test, None, &[]) {
        return;
    }
    let work = tempfile::tempdir().unwrap();
    let boot = Boot {
        script: "console-guest.sh",
        diskset: kind.diskset,
        label: kind.label,
        tools: &[],
        prepare: None,
        timeout_s: 900,
    };
    let mut lab = start_boot(work.path(), &boot);
    let mut console = Console::attach(work.path());
    // `words`: what the screen shows once drawn (one of them, `|` between).
    let visit = |console: &mut Console, name: &str, key: Option<&str>, words: &str| {
        if let Some(key) = key {
            console.key(key);
        }
        let screen = console.wait_for(name, |s| words.split('|').any(|w| s.contains(w)));
        assert_clean(kind, name, &screen);
        if name == kind.asset.0 {
            keep_picture(console, work.path(), kind, name);
        }
        screen
    };
    let devices = visit(&mut console, "devices", None, "┌ Devices");
    for disk in ["sda", "sdb", "nvme0n1", "vda"] {
        assert!(devices.contains(disk), "{disk}:\n{}", devices.joined());
    }
    assert_selection_shows("devices", &devices, "nvme0n1", "sda       ");
    visit(&mut console, "help", Some("shift-slash"), "┌ Keys");
    visit(&mut console, "devices-again", Some("esc"), "┌ Devices");
    visit(&mut console, "test", Some("2"), "┌ Tests");
    // A read test on the selected disk, live (the charts drawn), then the same again.
    visit(
        &mut console,
        "run-starting",
        Some("r"),
        "#1 seq-read on nvme0n1",
    );
    visit(&mut console, "run-measuring", None, "measuring");
    // A few seconds of samples: the charts hold curves.
    std::thread::sleep(Duration::from_secs(4));
    let run = visit(&mut console, "run", None, "measuring|finished");
    let chart_rows = &run.text[5..run.rows - 4];
    assert!(
        chart_rows.iter().any(|row| row.contains(['▀', '▄', '█'])),
        "the charts draw no curve:\n{}",
        run.joined()
    );
    visit(
        &mut console,
        "run-finished",
        None,
        "#1 seq-read on nvme0n1 finished",
    );
    visit(
        &mut console,
        "run-again",
        Some("r"),
        "#2 seq-read on nvme0n1 finished",
    );
    let results = visit(&mut console, "results", Some("4"), "#2");
    assert!(results.contains("#1"), "{}", results.joined());
    visit(&mut console, "compare", Some("5"), "┌ Compare A -> B");
    visit(&mut console, "devices-selected", Some("1"), "┌ Devices");
    visit(&mut console, "health", Some("h"), "Health of nvme0n1");
    visit(
        &mut console,
        "devices-from-health",
        Some("esc"),
        "┌ Devices",
    );
    // The surface scan, read-only, while it reads and once stopped.
    visit(&mut console, "scan", Some("b"), "Surface scan of nvme0n1");
    visit(
        &mut console,
        "scan-stopped",
        Some("x"),
        "scan stopped|scan finished",
    );
    visit(&mut console, "devices-from-scan", Some("1"), "┌ Devices");
    visit(&mut console, "triage", Some("v"), "Triage of 1 disk");
    let triage = visit(&mut console, "triage-done", None, "Triage of 1 disk: worst");
    // The verdict stands out from the row it is on, in the console's colours.
    let verdict = ["FAILING", "SUSPECT", "healthy", "unknown"]
        .iter()
        .find_map(|v| Some((v, triage.find(&format!(" {v} "))?)))
        .unwrap_or_else(|| panic!("no verdict:\n{}", triage.joined()));
    let (word, (y, x)) = verdict;
    let name = triage.find(">nvme0n1").unwrap();
    assert_eq!(name.0, y, "the verdict {word} is not on nvme0n1's row");
    assert_ne!(
        colours(triage.attr((y, x + 1))),
        colours(triage.attr((y, name.1 + 1))),
        "the verdict {word} has the colours of the disk's name"
    );
    visit(&mut console, "devices-from-triage", Some("1"), "┌ Devices");
    // A scheduler switch, put back on exit (and said so below the cleared screen).
    visit(
        &mut console,
        "sched-menu",
        Some("s"),
        "Scheduler of nvme0n1",
    );
    console.key("down");
    visit(&mut console, "switched", Some("ret"), "scheduler now none");
    // The capacity probe writes: its dialog, the name typed, the probe, and x (put back).
    visit(
        &mut console,
        "capacity-dialog",
        Some("c"),
        "Confirm the capacity probe",
    );
    for key in ["n", "v", "m", "e", "0", "n", "1"] {
        console.key(key);
    }
    visit(
        &mut console,
        "capacity",
        Some("ret"),
        "Capacity probe of nvme0n1:",
    );
    visit(
        &mut console,
        "capacity-stopped",
        Some("x"),
        "the probe was stopped|Verdict",
    );
    visit(
        &mut console,
        "devices-from-capacity",
        Some("1"),
        "┌ Devices",
    );
    // The TRIM check writes too: its dialog, the name typed, the check to its verdict.
    visit(
        &mut console,
        "trim-dialog",
        Some("shift-t"),
        "Confirm the TRIM check",
    );
    for key in ["n", "v", "m", "e", "0", "n", "1"] {
        console.key(key);
    }
    visit(&mut console, "trim", Some("ret"), "Verdict:");
    visit(&mut console, "devices-from-trim", Some("1"), "┌ Devices");
    // The flush check writes: its dialog, the name typed, the check running.
    visit(
        &mut console,
        "flush-dialog",
        Some("shift-f"),
        "WRITES to the first 64 MiB",
    );
    for key in ["n", "v", "m", "e", "0", "n", "1"] {
        console.key(key);
    }
    visit(&mut console, "flush", Some("ret"), "Flush check of nvme0n1");
    // q while the check writes stops it (the cache put back); the runs were not exported,
    // so q asks first, and y quits.
    console.key("q");
    let asked = console.wait_for("quit", |s| s.contains("quit?") || s.contains("AFTER rc="));
    if asked.contains("quit?") {
        assert_clean(kind, "quit", &asked);
        console.key("y");
    }
    let after = console.wait_for("after-quit", |s| s.contains("AFTER rc=0"));
    let all = after.joined();
    eprintln!("after q on the kernel's console:\n{all}\n");
    for mark in EARLIER
        .iter()
        .chain(&["disktriage", "Devices", "│", "─", "┌", "└"])
    {
        assert!(!all.contains(mark), "after q, {mark:?} is left:\n{all}");
    }
    let line = after
        .text
        .iter()
        .position(|row| row.contains("AFTER rc=0"))
        .unwrap();
    let put_back = after
        .text
        .iter()
        .position(|row| row.contains("put back to mq-deadline"))
        .unwrap_or_else(|| panic!("no word of the scheduler put back:\n{all}"));
    assert!(
        put_back < line && after.text[put_back].starts_with("nvme0n1"),
        "the restore report is not on a line of its own above the shell's:\n{all}"
    );
    assert!(
        after.text[line].starts_with("AFTER rc=0"),
        "the shell's line is glued to what was there:\n{all}"
    );
    assert!(
        after.cursor.1 > line,
        "the cursor is below the shell's line"
    );
    console.send("done");
    let status = lab.wait().unwrap();
    let results = finish_boot(work.path(), &boot, status);
    let header = results.text("CONSOLE");
    assert!(
        header.contains(kind.driver),
        "the console is not the {} console:\n{header}",
        kind.driver
    );
}

#[test]
fn qemu_lab_console_every_screen_is_drawn_whole_and_quit_leaves_a_clean_console() {
    every_screen_on(&VGACON);
}

#[test]
fn qemu_lab_fbcon_every_screen_is_drawn_whole_and_quit_leaves_a_clean_console() {
    every_screen_on(&FBCON);
}
