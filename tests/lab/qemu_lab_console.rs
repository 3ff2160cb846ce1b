//! The interactive screen on the kernel's own console, in its own boot (`tests/vm/lab.sh`,
//! disk set `console`; the guest is `tests/vm/console-guest.sh`): vgacon in the VGA's 80x25
//! text mode, which has no alternate screen and keeps whatever was on it.
//!
//! tty1 is filled with earlier output (enough to scroll) before disktriage starts there with
//! TERM=linux. The test presses keys through QEMU's monitor (`sendkey`) and reads the screen
//! back as the kernel holds it (`/dev/vcsa1`, asked for on the guest's ttyS2), then asserts
//! what an admin at that console sees:
//!
//! - every screen visited (Devices, the help, Test, Run, Results, Compare, Health, a surface
//!   scan running and stopped, a triage, the flush check's dialog and the check running)
//!   holds nothing of the earlier output: each cell is one the program drew;
//! - no glyph is the font's stand-in for a character it lacks (vgacon draws those as `?`);
//! - after `q`, the screen holds nothing of the frame and the shell's next line
//!   (`AFTER rc=0`) starts a line of its own.

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
        Screen {
            rows,
            cols,
            cursor,
            text,
        }
    }

    fn joined(&self) -> String {
        self.text.join("\n")
    }

    fn contains(&self, words: &str) -> bool {
        self.text.iter().any(|row| row.contains(words))
    }
}

/// The guest's console while it runs: its monitor for keys, its ttyS2 for screen dumps.
struct Console {
    monitor: UnixStream,
    control: BufReader<UnixStream>,
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

/// What every screen the program drew must satisfy on the console.
fn assert_clean(name: &str, screen: &Screen) {
    let all = screen.joined();
    eprintln!("{name} on the kernel's console:\n{all}\n");
    assert_eq!(
        (screen.rows, screen.cols),
        (25, 80),
        "{name}: vgacon's text mode"
    );
    for mark in EARLIER {
        assert!(
            !all.contains(mark),
            "{name}: the console's earlier output ({mark:?}) shows through:\n{all}"
        );
    }
    // vgacon draws a character its font lacks as `?`; the program's own are the help key in
    // the header ("?:help") and the help's first line ("? or F1").
    let own: usize = ["?:help", "? or F1"]
        .iter()
        .map(|own| all.matches(own).count())
        .sum();
    assert_eq!(
        all.matches('?').count(),
        own,
        "{name}: a glyph the console's font does not have:\n{all}"
    );
}

#[test]
fn qemu_lab_console_every_screen_is_drawn_whole_and_quit_leaves_a_clean_console() {
    if !crate::lab_or_skip(
        "qemu_lab_console_every_screen_is_drawn_whole_and_quit_leaves_a_clean_console",
        None,
        &[],
    ) {
        return;
    }
    let work = tempfile::tempdir().unwrap();
    let boot = Boot {
        script: "console-guest.sh",
        diskset: "console",
        label: "-console",
        tools: &[],
        prepare: None,
        timeout_s: 600,
    };
    let mut lab = start_boot(work.path(), &boot);
    let mut console = Console::attach(work.path());
    // `words`: what the screen shows once drawn (one of them, `|` between).
    let visit = |console: &mut Console, name: &str, key: Option<&str>, words: &str| {
        if let Some(key) = key {
            console.key(key);
        }
        let screen = console.wait_for(name, |s| words.split('|').any(|w| s.contains(w)));
        assert_clean(name, &screen);
        screen
    };
    let devices = visit(&mut console, "devices", None, "┌ Devices");
    for disk in ["sda", "sdb", "nvme0n1", "vda"] {
        assert!(devices.contains(disk), "{disk}:\n{}", devices.joined());
    }
    visit(
        &mut console,
        "help",
        Some("shift-slash"),
        "Keys (Up/Down scroll)",
    );
    visit(&mut console, "devices-again", Some("esc"), "┌ Devices");
    visit(&mut console, "test", Some("2"), "┌ Tests");
    visit(&mut console, "run", Some("3"), "No test has run yet");
    visit(&mut console, "results", Some("4"), "No runs yet");
    visit(&mut console, "compare", Some("5"), "┌ Compare");
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
    visit(&mut console, "devices-from-triage", Some("1"), "┌ Devices");
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
    // q while the check writes: it is stopped (the cache put back) and the program ends.
    console.key("q");
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
        header.contains("VGA"),
        "the console is not vgacon's text mode:\n{header}"
    );
}
