//! The interactive screens at 80x25 and 132x43, drawn through ratatui's TestBackend from
//! fixture inventories and scripted runs, plus the key handling and state transitions of
//! `App::update` (messages in, state and commands out) without a terminal.

#![allow(clippy::unwrap_used)] // tests may unwrap: a panic is the failure report

use crate::common;

use common::tui::*;
use disktriage::app::{App, DriveCacheDialog, Overlay, Screen};
use disktriage::bench::RunEvent;
use disktriage::bench::TestName;
use disktriage::event::{Cmd, Msg};
use disktriage::model::{Inventory, Transport};
use disktriage::report::ExportFormat;
use ratatui::crossterm::event::KeyCode;

use crate::{SIZES, snap};

#[test]
fn devices_screen() {
    let app = app_with("host-loop-zram", true);
    snap("devices", &app);
    let lab = app_with("qemu-lab", true);
    snap("devices_qemu_lab", &lab);
}

#[test]
fn a_device_list_taller_than_its_pane_says_how_many_rows_are_out_of_sight() {
    // The lab's eleven devices and three more SCSI disks: fourteen rows, twelve fit at 80x25
    // (an admin found vda out of sight with nothing to say so).
    let mut inv = disktriage::sys::SysRoot::new(common::tui::fixture("qemu-lab"))
        .inventory()
        .unwrap();
    let sdb = inv
        .devices
        .iter()
        .find(|d| d.name == "sdb")
        .unwrap()
        .clone();
    for name in ["sdx", "sdy", "sdz"] {
        let mut d = sdb.clone();
        d.name = name.into();
        inv.devices.push(d);
    }
    let mut app = App::new(true, false);
    app.update(Msg::Inventory(Ok(inv)));
    let s = screen(&app, 80, 25);
    assert!(s.contains(" 2 more below (Up/Down, End) "), "{s}");
    key(&mut app, KeyCode::End);
    let s = screen(&app, 80, 25);
    assert!(s.contains(" 2 more above (Up/Down, Home) "), "{s}");
    assert!(s.contains(">sdz"), "{s}");
    key(&mut app, KeyCode::Up);
    let s = screen(&app, 80, 25);
    assert!(s.contains(" 1 more above, 1 below (Up/Down) "), "{s}");
    assert!(s.contains(">sdy"), "{s}");
    // The lab's eleven fit: nothing to say.
    let s = screen(&app_with("qemu-lab", true), 80, 25);
    assert!(
        !s.contains("more below") && !s.contains("more above"),
        "{s}"
    );
}

#[test]
fn the_detail_pane_keeps_the_identifying_lines_and_marks_what_it_leaves_out() {
    // Every device shown (a): the list takes the rows it needs and the detail pane is left
    // with eight; an admin found "backing file" and "in use" gone, the lines that tell two
    // loop devices with the same image name apart.
    let mut app = app_with("host-loop-zram", true);
    keys(&mut app, "a");
    let s = screen(&app, 80, 25);
    assert!(s.contains("backing file /tmp/dtcap/a.img"), "{s}");
    assert!(
        s.contains("in use loop0p1 mounted at /tmp/dtcap/mnt"),
        "{s}"
    );
    // What is left out is named on the pane's last row.
    assert!(s.contains("not shown: ") && s.contains("scheduler"), "{s}");
    snap("devices_all_details", &app);
}

#[test]
fn the_devices_footer_lists_the_triage_and_the_flush_check() {
    // v and F were only in the help: the footer had no room for them at 80 columns. The
    // device's own keys take a row, the settings' keys the next.
    let app = app_with("host-loop-zram", true);
    let s = screen(&app, 80, 25);
    let rows: Vec<&str> = s.lines().rev().take(2).collect();
    assert!(
        rows[1].contains("v triage") && rows[1].contains("F flush"),
        "{s}"
    );
    assert!(
        rows[0].contains("s sched") && rows[0].contains("P boot"),
        "{s}"
    );
    // Where one row holds them all, one row.
    let s = screen(&app, 132, 43);
    let last = s.lines().last().unwrap();
    assert!(last.contains("F flush") && last.contains("P boot"), "{s}");
}

#[test]
fn no_devices_and_not_root() {
    let mut app = App::new(false, false);
    app.update(Msg::Inventory(Ok(Inventory {
        devices: vec![],
        usage_complete: true,
        notes: vec![],
        swaps: vec![],
    })));
    let s = screen(&app, 80, 25);
    assert!(s.contains("No block devices."), "{s}");
    assert!(s.contains("not root: the list is read-only"), "{s}");
    snap("no_devices_not_root", &app);
}

#[test]
fn a_long_test_description_is_shown_whole_and_the_parameters_say_what_scrolled_away() {
    // qd-sweep's summary is four lines at 80 columns; its box had two ("...(and writes with
    // a read % below" and nothing after).
    let mut app = app_with("host-loop-zram", true);
    keys(&mut app, "2");
    for _ in 0..11 {
        key(&mut app, KeyCode::Down);
    }
    let s = screen(&app, 80, 25);
    assert!(s.contains("qd-sweep"), "{s}");
    assert!(s.contains("load of each"), "{s}");
    assert!(s.contains("from: Oracle ORION"), "{s}");
    // The parameters have the rows that are left and say how many more there are.
    key(&mut app, KeyCode::Enter);
    for _ in 0..10 {
        key(&mut app, KeyCode::Down);
    }
    let s = screen(&app, 80, 25);
    assert!(s.contains("more above (Up/Down, Home)"), "{s}");
    snap("picker_qd_sweep", &app);
    // Home goes where the mark says.
    key(&mut app, KeyCode::Home);
    assert_eq!(app.picker_field, 0);
    key(&mut app, KeyCode::End);
    // qd-sweep's eleven fields: the last.
    assert_eq!(app.picker_field, 10);
}

#[test]
fn test_picker() {
    let mut app = app_with("host-loop-zram", true);
    pick_rand_read(&mut app);
    key(&mut app, KeyCode::Enter);
    key(&mut app, KeyCode::Down);
    key(&mut app, KeyCode::Right); // queue depth 1 -> first choice
    key(&mut app, KeyCode::Right);
    key(&mut app, KeyCode::Right);
    let s = screen(&app, 80, 25);
    assert!(s.contains("rand-read"), "{s}");
    assert!(s.contains("queue depth    4"), "{s}");
    assert!(s.contains("read-only test: r runs it"), "{s}");
    snap("picker", &app);
}

#[test]
fn running_test() {
    let mut app = app_with("host-loop-zram", true);
    pick_rand_read(&mut app);
    let cmds = keys(&mut app, "r");
    let [Cmd::StartRun(req)] = cmds.as_slice() else {
        panic!("{cmds:?}")
    };
    assert_eq!(req.test, TestName::RandRead);
    assert_eq!(req.target.to_str(), Some("/dev/loop0"));
    assert_eq!(req.confirmation, None);
    assert_eq!(app.screen, Screen::Run);
    feed(&mut app, TestName::RandRead, "loop0", "none", 24, 512.0);
    let s = screen(&app, 80, 25);
    assert!(s.contains("#1 rand-read on loop0 measuring"), "{s}");
    assert!(s.contains("scheduler none"), "{s}");
    assert!(s.contains("RUNNING"), "{s}");
    snap("running", &app);
}

/// A run whose I/O hangs (a dying disk's read) goes on counting on the screen's clock and
/// says how long nothing has completed; the first I/O to complete clears it.
#[test]
fn a_run_whose_io_hangs_says_how_long_it_has_waited() {
    let mut app = app_with("host-loop-zram", true);
    pick_rand_read(&mut app);
    key(&mut app, KeyCode::Char('r'));
    start_measuring(&mut app, &plan(TestName::RandRead), "loop0", "none");
    // A point every 0.25 s for 2 s.
    for i in 0..8 {
        tick(&mut app, 1.0 + (i + 1) as f64 * 0.25);
        app.update(Msg::Run(Box::new(RunEvent::Point {
            index: 0,
            point: point(i, 500.0),
        })));
    }
    let before = screen(&app, 80, 25);
    assert!(!before.contains("waiting"), "{before}");
    // Then none for 7 s.
    tick(&mut app, 3.0 + 7.0);
    let s = screen(&app, 80, 25);
    assert!(s.contains("waiting 7 s"), "{s}");
    assert!(s.contains("/ 11.0 s"), "the clock runs on:\n{s}");
    app.update(Msg::Run(Box::new(RunEvent::Point {
        index: 0,
        point: point(9, 500.0),
    })));
    let s = screen(&app, 80, 25);
    assert!(!s.contains("waiting"), "{s}");
}

#[test]
fn finished_run_results_and_comparison() {
    let mut app = app_with("host-loop-zram", true);
    complete_run(&mut app, "none", 512.0, 0.060);
    let s = screen(&app, 80, 25);
    assert!(s.contains("finished"), "{s}");
    snap("finished", &app);

    // Switch the scheduler: the menu, then the result as the loop reports it.
    keys(&mut app, "s");
    assert!(matches!(app.overlay, Some(Overlay::Scheduler { .. })));
    // The selection is marked with the lists' `>`, not only in reverse video (which a
    // monochrome console may not show).
    key(&mut app, KeyCode::Down);
    let s = screen(&app, 80, 25);
    assert!(s.contains("│ * none"), "{s}");
    assert!(s.contains("│>  mq-deadline"), "{s}");
    key(&mut app, KeyCode::Up);
    snap("scheduler_menu", &app);
    key(&mut app, KeyCode::Down);
    let cmds = key(&mut app, KeyCode::Enter);
    assert_eq!(
        cmds,
        [Cmd::SetScheduler {
            device: "loop0".into(),
            name: "mq-deadline".into(),
            chosen: None,
        }]
    );
    app.update(Msg::SchedulerSet {
        device: "loop0".into(),
        result: Ok("mq-deadline".into()),
    });
    assert_eq!(app.changes.scheduler.len(), 1);
    assert_eq!(app.changes.scheduler[0].original, "none");

    complete_run(&mut app, "mq-deadline", 448.0, 0.075);
    keys(&mut app, "4");
    let s = screen(&app, 80, 25);
    assert!(s.contains("mq-deadline"), "{s}");
    snap("results", &app);

    keys(&mut app, "c");
    assert_eq!(app.screen, Screen::Compare);
    let s = screen(&app, 80, 25);
    assert!(s.contains("-12.5%"), "{s}");
    assert!(s.contains("noise unknown"), "{s}");
    snap("compare", &app);
}

#[test]
fn comparison_with_repeats_judges_noise() {
    let mut app = app_with("host-loop-zram", true);
    // Three repeats each: the spread of the repeats is the noise.
    app.values.repeats = 3;
    complete_run(&mut app, "none", 500.0, 0.060);
    assert_eq!(app.results.records[0].runs.len(), 3);
    complete_run(&mut app, "mq-deadline", 400.0, 0.080);
    keys(&mut app, "c");
    let s = screen(&app, 132, 43);
    assert!(s.contains("worse"), "{s}");
    assert!(s.contains("-20.0%"), "{s}");
}

#[test]
fn write_test_asks_for_the_device_name() {
    let mut app = app_with("host-loop-zram", true);
    keys(&mut app, "j"); // loop1: free
    keys(&mut app, "2");
    key(&mut app, KeyCode::Down); // seq-write
    let cmds = keys(&mut app, "r");
    assert!(cmds.is_empty(), "nothing starts before the confirmation");
    assert!(matches!(app.overlay, Some(Overlay::Confirm { .. })));
    keys(&mut app, "loop0");
    let cmds = key(&mut app, KeyCode::Enter);
    assert!(cmds.is_empty(), "the wrong name starts nothing");
    let s = screen(&app, 80, 25);
    assert!(
        s.contains("\"loop0\" is not loop1: nothing was written"),
        "{s}"
    );
    snap("confirm_wrong", &app);
    for _ in 0..5 {
        key(&mut app, KeyCode::Backspace);
    }
    keys(&mut app, "loop1");
    snap("confirm", &app);
    let cmds = key(&mut app, KeyCode::Enter);
    let [Cmd::StartRun(req)] = cmds.as_slice() else {
        panic!("{cmds:?}")
    };
    assert_eq!(req.confirmation.as_deref(), Some("loop1"));
    assert_eq!(req.test, TestName::SeqWrite);
}

#[test]
fn qd_sweep_with_writes_asks_for_the_device_name() {
    let mut app = app_with("host-loop-zram", true);
    keys(&mut app, "j"); // loop1: free
    keys(&mut app, "2");
    for _ in 0..11 {
        key(&mut app, KeyCode::Down);
    }
    assert_eq!(app.picker_test(), TestName::QdSweep);
    // Reads only by default: it starts at once.
    let s = screen(&app, 132, 43);
    assert!(s.contains("read-only test: r runs it"), "{s}");
    let cmds = keys(&mut app, "r");
    assert!(matches!(cmds.as_slice(), [Cmd::StartRun(_)]), "{cmds:?}");
    key(&mut app, KeyCode::Char('x'));

    // 50 % reads: it writes, says so, and asks for the name like any write test.
    let mut app = app_with("host-loop-zram", true);
    keys(&mut app, "j");
    keys(&mut app, "2");
    for _ in 0..11 {
        key(&mut app, KeyCode::Down);
    }
    app.values.params.read_pct = Some(50);
    let s = screen(&app, 132, 43);
    assert!(s.contains("this test WRITES to loop1"), "{s}");
    let cmds = keys(&mut app, "r");
    assert!(cmds.is_empty(), "nothing starts before the confirmation");
    assert!(matches!(app.overlay, Some(Overlay::Confirm { .. })));
    keys(&mut app, "loop1");
    let cmds = key(&mut app, KeyCode::Enter);
    let [Cmd::StartRun(req)] = cmds.as_slice() else {
        panic!("{cmds:?}")
    };
    assert_eq!(req.confirmation.as_deref(), Some("loop1"));
    assert_eq!(req.params.read_pct, Some(50));
}

#[test]
fn in_use_devices_are_refused_with_the_reason() {
    let mut app = app_with("host-loop-zram", true);
    // loop0 has a mounted partition.
    keys(&mut app, "2");
    key(&mut app, KeyCode::Down); // seq-write
    // The Test screen says so before r, with the way out.
    let s = screen(&app, 80, 25);
    assert!(
        s.contains("this test writes: r is refused: refusing to write to"),
        "{s}"
    );
    assert!(s.contains("tests a file on /tmp/dtcap/mnt instead"), "{s}");
    let cmds = keys(&mut app, "r");
    assert!(cmds.is_empty());
    let Some(Overlay::Error(e)) = &app.overlay else {
        panic!("{:?}", app.overlay)
    };
    assert!(
        e.contains("refusing to write to loop0: loop0p1 mounted at /tmp/dtcap/mnt"),
        "{e}"
    );
    assert!(
        e.contains("f on Devices (1) tests a file on /tmp/dtcap/mnt instead"),
        "{e}"
    );
    snap("error_in_use", &app);
}

/// The text inside the help box, one string per row of the box, without its border.
fn help_box_rows(screen: &str) -> Vec<String> {
    let lines: Vec<Vec<char>> = screen
        .lines()
        .map(|l| l.trim_matches('"').chars().collect())
        .collect();
    let Some((top, left)) = lines.iter().enumerate().find_map(|(i, l)| {
        let s: String = l.iter().collect();
        s.find("┌ Keys").map(|b| (i, s[..b].chars().count()))
    }) else {
        return Vec::new();
    };
    let right = (left + 1..lines[top].len())
        .find(|&c| lines[top][c] == '┐')
        .unwrap();
    lines[top + 1..]
        .iter()
        .take_while(|l| l.get(left) == Some(&'│'))
        .map(|l| l[left + 1..right].iter().collect())
        .collect()
}

fn words(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[test]
fn help_lists_every_binding_at_both_sizes() {
    for (w, h) in SIZES {
        let mut app = app_with("host-loop-zram", true);
        keys(&mut app, "?");
        // Every view of the help as it scrolls down a row at a time.
        let mut pages = Vec::new();
        for _ in 0..40 {
            if !matches!(app.overlay, Some(Overlay::Help { .. })) {
                break;
            }
            let page = words(&help_box_rows(&screen(&app, w, h)).join(" "));
            if pages.last() == Some(&page) {
                break;
            }
            pages.push(page);
            key(&mut app, KeyCode::Down);
        }
        for b in disktriage::app::all_bindings() {
            let entry = words(&format!("{} {}", b.names, b.help));
            assert!(
                pages.iter().any(|p| p.contains(&entry)),
                "{w}x{h}: \"{entry}\" is not in the help:\n{}",
                pages.join("\n")
            );
        }
    }
}

#[test]
fn help_overlay_lists_every_key() {
    let mut app = app_with("host-loop-zram", true);
    keys(&mut app, "?");
    let s = screen(&app, 80, 25);
    for k in ["1-5", "q / Ctrl-C", "x or Esc stop"] {
        assert!(s.contains(k), "{k} missing:\n{s}");
    }
    // How much more there is to scroll.
    assert!(s.contains("more below (Up/Down)"), "{s}");
    snap("help", &app);
    // The Results keys are a few rows further down at 80x25.
    for _ in 0..6 {
        key(&mut app, KeyCode::Down);
    }
    let s = screen(&app, 80, 25);
    for k in ["Space mark A/B", "e export", "Home/End first/last"] {
        assert!(s.contains(k), "{k} missing:\n{s}");
    }
    key(&mut app, KeyCode::Esc);
    assert_eq!(app.overlay, None);
}

#[test]
fn failed_run_shows_the_error_in_the_screen() {
    let mut app = app_with("host-loop-zram", true);
    pick_rand_read(&mut app);
    keys(&mut app, "r");
    app.update(Msg::RunRefused(
        "cannot open /dev/loop0: permission denied - needs root (run as root, e.g. with sudo)"
            .into(),
    ));
    let s = screen(&app, 80, 25);
    assert!(s.contains("permission denied - needs root"), "{s}");
    // The progress bar says how the run ended, empty: it never started.
    let bar = s.lines().nth(4).unwrap_or_default();
    assert_eq!(bar.trim_matches(|c| c == '"' || c == ' '), "failed", "{s}");
    snap("run_refused", &app);
}

/// A background thread's panic (a bug) is said on the screen, which goes on.
#[test]
fn a_background_panic_is_said_on_the_screen() {
    let mut app = app_with("host-loop-zram", true);
    let cmds = app.update(Msg::ThreadPanicked(
        "thread 'io-runner' panicked at src/bench/runner.rs:10:5: boom".into(),
    ));
    assert!(cmds.is_empty(), "{cmds:?}");
    let s = screen(&app, 80, 25);
    assert!(s.contains("internal error (a bug in disktriage)"), "{s}");
    assert!(s.contains("io-runner"), "{s}");
    assert!(s.contains("put back when you quit"), "{s}");
}

#[test]
fn too_small_terminal_says_so() {
    let app = app_with("host-loop-zram", true);
    let s = screen(&app, 60, 20);
    assert!(s.contains("needs at least 80x24"), "{s}");
}

#[test]
fn console_glyphs_only_on_the_linux_console() {
    let mut app = app_with("host-loop-zram", true);
    app.console = true;
    pick_rand_read(&mut app);
    keys(&mut app, "r");
    feed(&mut app, TestName::RandRead, "loop0", "none", 24, 512.0);
    // ASCII, box drawing and the CP437 block elements only: what the console fonts have.
    let allowed =
        |c: char| c.is_ascii() || ('\u{2500}'..='\u{257F}').contains(&c) || "█▀▄▌▐░▒▓".contains(c);
    for (w, h) in SIZES {
        for sym in symbols(&app, w, h) {
            assert!(
                sym.chars().all(allowed),
                "glyph {sym:?} is not on the Linux console"
            );
        }
    }
    insta::assert_snapshot!("running_console_80x25", screen(&app, 80, 25));
    // Elsewhere the charts use braille for finer lines.
    app.console = false;
    assert!(
        symbols(&app, 80, 25)
            .iter()
            .any(|s| s.chars().any(|c| ('\u{2800}'..='\u{28FF}').contains(&c)))
    );
}

#[test]
fn transitions_without_a_terminal() {
    let mut app = app_with("host-loop-zram", true);
    // Screens by number and Tab.
    keys(&mut app, "3");
    assert_eq!(app.screen, Screen::Run);
    key(&mut app, KeyCode::Tab);
    assert_eq!(app.screen, Screen::Results);
    key(&mut app, KeyCode::BackTab);
    key(&mut app, KeyCode::BackTab);
    assert_eq!(app.screen, Screen::Tests);
    // Device selection is bounded.
    keys(&mut app, "1");
    for _ in 0..10 {
        key(&mut app, KeyCode::Down);
    }
    assert_eq!(app.devices.row, 3, "four visible devices");
    keys(&mut app, "a");
    assert_eq!(app.visible_devices().len(), 10);
    // Refresh asks the loop for a new inventory.
    assert_eq!(keys(&mut app, "r"), [Cmd::RefreshInventory]);
    // Ticks refresh it while idle, every 10 s.
    assert!(tick(&mut app, 5.0).is_empty());
    assert_eq!(tick(&mut app, 10.5), [Cmd::RefreshInventory]);
    // Schedulers of bio-based devices cannot be chosen.
    keys(&mut app, "a");
    key(&mut app, KeyCode::End); // zram0
    keys(&mut app, "s");
    let Some(Overlay::Error(e)) = &app.overlay else {
        panic!("{:?}", app.overlay)
    };
    assert!(e.contains("no scheduler to choose"), "{e}");
    key(&mut app, KeyCode::Enter);
    // Compare needs two runs.
    keys(&mut app, "4");
    keys(&mut app, "c");
    assert!(matches!(app.overlay, Some(Overlay::Error(_))));
    key(&mut app, KeyCode::Esc);
    // Quit without a run: at once.
    assert_eq!(keys(&mut app, "q"), [Cmd::Quit]);
}

/// Between r and the run's start (the safety checks, an open that waits for a busy device, the
/// writing of a new test file) the Run screen says so and x stops it; a start stopped that way
/// is shown as stopped, not failed, and Results keeps why it has no figures.
#[test]
fn a_run_that_is_starting_says_so_and_x_stops_it() {
    let mut app = app_with("host-loop-zram", true);
    pick_rand_read(&mut app);
    keys(&mut app, "r");
    assert!(app.running());
    let s = screen(&app, 80, 25);
    assert!(s.contains("#1 rand-read on loop0 starting"), "{s}");
    assert!(
        s.contains("checking and opening /dev/loop0; x stops"),
        "{s}"
    );
    // Before the target is opened, the settings line shows what the device list read.
    assert!(
        s.contains(" scheduler none   drive cache n/a   kernel flush policy write back"),
        "{s}"
    );
    snap("starting", &app);
    // The start answers once it is done: then the run goes as any other.
    feed(&mut app, TestName::RandRead, "loop0", "none", 4, 300.0);
    assert!(screen(&app, 80, 25).contains("#1 rand-read on loop0 measuring"));
    app.update(Msg::RunFinished(Box::new(Ok(report(
        TestName::RandRead,
        "loop0",
        "none",
        300.0,
        0.05,
    )))));

    // A rerun stopped while it starts.
    assert_eq!(keys(&mut app, "R").len(), 1);
    assert!(screen(&app, 80, 25).contains("#2 rand-read on loop0 starting"));
    assert_eq!(keys(&mut app, "x"), [Cmd::StopRun]);
    app.update(Msg::RunRefused(
        "interrupted while opening /dev/loop0 (nothing was tested)".into(),
    ));
    assert!(!app.running());
    let s = screen(&app, 80, 25);
    assert!(s.contains("#2 rand-read on loop0 stopped"), "{s}");
    assert!(!s.contains("FAILED"), "{s}");
    assert!(s.contains("stopped before it started"), "{s}");
    assert!(s.contains("it never started: nothing was tested"), "{s}");
    let bar = s.lines().nth(4).unwrap_or_default();
    assert_eq!(bar.trim_matches(|c| c == '"' || c == ' '), "stopped", "{s}");
    assert_eq!(
        app.results.records[1].error.as_deref(),
        Some("interrupted while opening /dev/loop0 (nothing was tested)")
    );
}

/// A run bounded by a count of I/Os and stopped part way: its bar ends at the share of the
/// count it did, and says it was stopped.
#[test]
fn a_stopped_count_bound_run_ends_its_bar_at_the_share_it_did() {
    use disktriage::bench::RunEvent;
    let mut app = app_with("host-loop-zram", true);
    pick_rand_read(&mut app);
    keys(&mut app, "r");
    let points: Vec<_> = (0..4).map(|i| point(i, 300.0)).collect();
    let done: u64 = points.iter().map(|p| p.ops()).sum();
    let mut plan = plan(TestName::RandRead);
    let job = &mut plan.phases[0].job;
    assert_eq!(job.workers, 1);
    job.time = None;
    job.ops_per_worker = Some(done * 4);
    start_measuring(&mut app, &plan, "loop0", "none");
    for p in points {
        app.update(Msg::Run(Box::new(RunEvent::Point { index: 0, point: p })));
    }
    let bar = |app: &App| {
        screen(app, 80, 25)
            .lines()
            .nth(4)
            .unwrap_or_default()
            .to_string()
    };
    assert!(
        bar(&app).contains(&format!("{done} / {} I/Os", done * 4)),
        "{}",
        bar(&app)
    );
    assert_eq!(keys(&mut app, "x"), [Cmd::StopRun]);
    app.update(Msg::RunFinished(Box::new(Ok(report(
        TestName::RandRead,
        "loop0",
        "none",
        300.0,
        0.05,
    )))));
    let stopped = bar(&app);
    assert!(stopped.contains("stopped"), "{stopped}");
    // A quarter of the bar: 80 columns less its label beside it (" stopped").
    assert_eq!(stopped.matches('█').count(), (80 - 8) / 4, "{stopped}");
}

#[test]
fn run_controls_stop_rerun_export_and_quit() {
    let mut app = app_with("host-loop-zram", true);
    pick_rand_read(&mut app);
    keys(&mut app, "r");
    feed(&mut app, TestName::RandRead, "loop0", "none", 8, 300.0);
    // q during a run asks first; x stops.
    assert!(keys(&mut app, "q").is_empty());
    assert_eq!(app.overlay, Some(Overlay::QuitConfirm));
    keys(&mut app, "n");
    assert_eq!(keys(&mut app, "x"), [Cmd::StopRun]);
    assert!(app.run.as_ref().unwrap().stopping);
    // A second run cannot start while the first is alive.
    keys(&mut app, "2");
    assert!(keys(&mut app, "r").is_empty());
    key(&mut app, KeyCode::Esc);
    app.update(Msg::RunFinished(Box::new(Ok(report(
        TestName::RandRead,
        "loop0",
        "none",
        300.0,
        0.05,
    )))));
    assert!(!app.running());
    // The end of the run is said on the screen the admin is on (the Test screen)...
    let s = screen(&app, 80, 25);
    assert!(
        s.contains("run #1 stopped; what completed is kept, R reruns"),
        "{s}"
    );
    // ...and stays there. Stopped after 2 s of a longer run: the bar ends part way and says
    // so.
    keys(&mut app, "3");
    let s = screen(&app, 80, 25);
    let bar = s.lines().nth(4).unwrap_or_default();
    assert!(bar.contains("stopped") && bar.contains('█'), "{s}");
    assert!(bar.contains("  "), "a partly filled bar: {s}");
    // Rerun: the same request again.
    let cmds = keys(&mut app, "R");
    let [Cmd::StartRun(req)] = cmds.as_slice() else {
        panic!("{cmds:?}")
    };
    assert_eq!(req.test, TestName::RandRead);
    app.update(Msg::RunFinished(Box::new(Ok(report(
        TestName::RandRead,
        "loop0",
        "none",
        310.0,
        0.05,
    )))));
    // Export from results: the format is chosen, the loop writes the file.
    keys(&mut app, "4");
    keys(&mut app, "e");
    assert!(matches!(app.overlay, Some(Overlay::Export { .. })));
    assert!(screen(&app, 80, 25).contains("into /var/lib/disktriage/exports/"));
    let cmds = keys(&mut app, "j");
    let [
        Cmd::Export {
            reports,
            format,
            stem,
            dir,
        },
    ] = cmds.as_slice()
    else {
        panic!("{cmds:?}")
    };
    assert_eq!(*format, ExportFormat::Json);
    assert_eq!(reports.len(), 1);
    assert_eq!(stem, "disktriage-loop0-rand-read-2");
    // One known place, named in the dialog, whatever directory the program started in.
    assert_eq!(
        dir,
        &std::path::PathBuf::from("/var/lib/disktriage/exports")
    );
    app.update(Msg::Exported(Ok(
        "/tmp/disktriage-loop0-rand-read-2.json".into()
    )));
    assert!(screen(&app, 80, 25).contains("exported to /tmp/disktriage-loop0-rand-read-2.json"));
    // Ctrl-C quits from anywhere.
    let cmds = app.update(Msg::Key(ratatui::crossterm::event::KeyEvent::new(
        KeyCode::Char('c'),
        ratatui::crossterm::event::KeyModifiers::CONTROL,
    )));
    assert_eq!(cmds, [Cmd::Quit]);
}

#[test]
fn drive_state_health_badges_and_cache_dialog() {
    let mut app = lab_app_with_drive_states(false);
    // nvme0n1 is the third visible device.
    key(&mut app, KeyCode::Down);
    key(&mut app, KeyCode::Down);
    assert!(screen(&app, 80, 25).contains("FAIL"));
    // The details beside the list (a wider terminal) give the reason.
    let s = screen(&app, 132, 43);
    assert!(s.contains("reliability degraded"), "{s}");
    snap("devices_drive_state", &app);

    key(&mut app, KeyCode::Down); // sda: cache off, kernel says write back
    let cmds = keys(&mut app, "w");
    assert!(cmds.is_empty(), "already read: no new read");
    let s = screen(&app, 80, 25);
    assert!(s.contains("drive's own write cache: off"), "{s}");
    assert!(s.contains("kernel flush policy:     write back"), "{s}");
    snap("drive_cache_dialog", &app);
    let cmds = keys(&mut app, "n");
    assert_eq!(
        cmds,
        [Cmd::SetDriveCache {
            device: "sda".into(),
            enabled: true,
            chosen: None,
        }]
    );
}

#[test]
fn a_loop_device_is_not_offered_a_drive_cache_switch() {
    use disktriage::model::{CacheStatus, KernelWriteCache};
    let mut app = app_with("host-loop-zram", true);
    let device = app.selected_device().expect("a device").name.clone();
    let cmds = keys(&mut app, "w");
    assert!(
        matches!(cmds.as_slice(), [Cmd::ReadDriveStatus { .. }]),
        "{cmds:?}"
    );
    app.update(Msg::DriveStatus {
        device: device.clone(),
        cache: Ok(CacheStatus::new(
            &device,
            Transport::Loop,
            Err("drive write cache control not supported on loop".into()),
            Some(KernelWriteCache::WriteBack),
        )),
        health: None,
    });
    let s = screen(&app, 80, 25);
    assert!(
        s.contains("drive write cache control not supported on"),
        "{s}"
    );
    assert!(s.contains("nothing to switch here"), "{s}");
    assert!(!s.contains("hdparm -W0"), "{s}");
    // o and n send nothing to the device: the dialog's reason is said instead.
    assert!(keys(&mut app, "o").is_empty());
    assert!(
        screen(&app, 80, 25).contains("drive write cache control not supported on loop"),
        "{}",
        screen(&app, 80, 25)
    );
}

#[test]
fn orphans_are_offered_at_start() {
    let mut app = app_with("host-loop-zram", true);
    app.update(Msg::Orphans(vec![
        "loop0: scheduler back to none (set by disktriage pid 4242)".into(),
    ]));
    let s = screen(&app, 80, 25);
    assert!(s.contains("did not exit cleanly"), "{s}");
    snap("orphans", &app);
    assert_eq!(keys(&mut app, "y"), [Cmd::RestoreOrphans]);
    let cmds = app.update(Msg::Restored(vec![
        "loop0: scheduler put back to none (was mq-deadline; read back)".into(),
    ]));
    assert!(cmds.contains(&Cmd::RefreshInventory));
    assert!(screen(&app, 80, 25).contains("put back to none"));
}

#[test]
fn drive_temperature_on_the_run_time_axis() {
    let mut app = app_with("host-loop-zram", true);
    pick_rand_read(&mut app);
    // The temperature field: every 1 s.
    key(&mut app, KeyCode::Enter);
    let fields = disktriage::app::fields_for(TestName::RandRead);
    let at = fields
        .iter()
        .position(|f| *f == disktriage::app::Field::TempPoll)
        .unwrap();
    for _ in 0..at {
        key(&mut app, KeyCode::Down);
    }
    key(&mut app, KeyCode::Right);
    key(&mut app, KeyCode::Right);
    let cmds = keys(&mut app, "r");
    let [Cmd::StartRun(req)] = cmds.as_slice() else {
        panic!("{cmds:?}")
    };
    assert_eq!(
        req.temperature,
        disktriage::bench::TempPoll::Every(std::time::Duration::from_secs(1))
    );
    feed(&mut app, TestName::RandRead, "loop0", "none", 24, 512.0);
    for (i, c) in [41, 42, 42, 44, 45, 47, 48].iter().enumerate() {
        app.update(Msg::Temperature {
            device: "loop0".into(),
            at: 1.0 + i as f64,
            celsius: *c,
        });
    }
    let s = screen(&app, 80, 25);
    assert!(s.contains("temp 48 C (max 48)"), "{s}");
    keys(&mut app, "t");
    let s = screen(&app, 80, 25);
    assert!(s.contains("Drive temperature C"), "{s}");
    snap("run_temperature", &app);
}

/// An interval of `mb` megabytes read from `start` to `end` seconds.
pub(crate) fn span(start: f64, end: f64, mb: u64) -> disktriage::bench::IntervalPoint {
    let mut p = common::tui::point(0, 100.0);
    p.start_s = start;
    p.end_s = end;
    p.read.bytes = mb * 1_000_000;
    p.read.ops = p.read.bytes / 4096;
    p
}

#[test]
fn run_screen_mean_is_the_total_over_the_time_and_the_results_figure() {
    let mut app = app_with("host-loop-zram", true);
    pick_rand_read(&mut app);
    keys(&mut app, "r");
    feed(&mut app, TestName::RandRead, "loop0", "none", 0, 0.0);
    // Two whole intervals at 200 MB/s, then the last one (folded, 0.35 s) at 100 MB/s: the
    // mean is 135 MB over 0.85 s, not the average of the three rates (166.7).
    for p in [
        span(0.0, 0.25, 50),
        span(0.25, 0.5, 50),
        span(0.5, 0.85, 35),
    ] {
        app.update(Msg::Run(Box::new(disktriage::bench::RunEvent::Point {
            index: 0,
            point: p,
        })));
    }
    let live = screen(&app, 80, 25);
    assert!(live.contains("mean 158.8"), "{live}");
    assert!(live.contains("min 100.0 max 200.0"), "{live}");

    // Finished: the Run screen shows the figures Results shows for the same run.
    let mut app = app_with("host-loop-zram", true);
    complete_run(&mut app, "none", 512.0, 0.060);
    let run = screen(&app, 80, 25);
    keys(&mut app, "4");
    let results = screen(&app, 80, 25);
    assert!(
        results.contains("512.0") && results.contains("0.060"),
        "{results}"
    );
    assert!(run.contains("mean 512.0"), "{run}");
    assert!(run.contains("p99 0.060"), "{run}");
}

pub(crate) const CDM_MBPS: [f64; 8] = [3400.0, 2900.0, 1800.0, 1700.0, 450.0, 380.0, 55.0, 160.0];

#[test]
fn results_summarise_every_phase_of_a_cdm_and_a_sweep() {
    let mut app = app_with("host-loop-zram", true);
    let cdm = report_phases(TestName::Cdm, "loop0", "none", |i| (CDM_MBPS[i], 0.5));
    finish_with(&mut app, TestName::Cdm, false, &cdm);
    keys(&mut app, "4");
    let s = screen(&app, 80, 25);
    // CrystalDiskMark's grid: each row's read and write side by side, IOPS and latency under
    // the MB/s.
    for row in [
        "│                          Read MB/s                 Write MB/s                │",
        "│SEQ1M                       3400.00                    2900.00                │",
        "│Q8T1             3242 IOPS 0.167 ms         2766 IOPS 0.167 ms                │",
        "│RND4K                         55.00                     160.00                │",
        "│Q1T1            13428 IOPS 0.167 ms        39062 IOPS 0.167 ms                │",
    ] {
        assert!(s.contains(row), "{row} missing:\n{s}");
    }
    // Figure for figure the CLI's grid (MB/s, IOPS, mean ms of read and write).
    let cli = disktriage::report::render_run_text(&cdm);
    let rows: Vec<&str> = cli
        .lines()
        .filter(|l| l.starts_with("SEQ") || l.starts_with("RND"))
        .collect();
    assert_eq!(rows.len(), 4, "{cli}");
    for (w, h) in SIZES {
        let s = screen(&app, w, h);
        for row in &rows {
            for figure in row.split_whitespace().skip(2) {
                let whole = [" ", "│"]
                    .iter()
                    .any(|end| s.contains(&format!(" {figure}{end}")));
                assert!(whole, "{figure} of {row}:\n{s}");
            }
        }
    }
    // The row summarises all phases, and says so.
    assert!(s.contains("cdm on /dev/loop0: 8 phases"), "{s}");
    assert!(s.contains("the row shows the peak MB/s"), "{s}");
    snap("results_cdm", &app);

    let mut app = app_with("host-loop-zram", true);
    let sweep = report_phases(TestName::SizeSweep, "loop0", "none", |i| {
        (50.0 * (i + 1) as f64, 1.0)
    });
    finish_with(&mut app, TestName::SizeSweep, false, &sweep);
    keys(&mut app, "4");
    let s = screen(&app, 80, 25);
    let last = sweep.outcome.phases.last().unwrap();
    assert!(s.contains("1M"), "{s}");
    // The row's peak; the curves are in the chart.
    assert!(
        s.contains(&format!("{:.1}", last.bytes_per_sec() / 1e6)),
        "{s}"
    );
    assert!(s.contains("Read MB/s by request size"), "{s}");
    snap("results_sweep", &app);
}

#[test]
fn full_report_of_a_repeated_run_shows_every_repeat_and_the_mean() {
    let mut app = app_with("host-loop-zram", true);
    app.values.repeats = 3;
    keys(&mut app, "2");
    app.picker_test = disktriage::app::index_of(TestName::RandRead);
    keys(&mut app, "r");
    for mbps in [480.0, 500.0, 520.0] {
        app.update(Msg::RunFinished(Box::new(Ok(report(
            TestName::RandRead,
            "loop0",
            "none",
            mbps,
            0.060,
        )))));
    }
    keys(&mut app, "4");
    let table = screen(&app, 80, 25);
    assert!(table.contains("500.0"), "{table}");
    key(&mut app, KeyCode::Enter);
    let s = screen(&app, 80, 25);
    // The figure the table uses, and what it is made of.
    assert!(s.contains("mean of 3 repeats"), "{s}");
    assert!(s.contains("500.0 MB/s"), "{s}");
    assert!(s.contains("480.0, 500.0, 520.0"), "{s}");
    assert!(s.contains("rand-read: 500.0 MB/s"), "{s}");
    // The box says how much more there is to scroll.
    assert!(s.contains(" 21 more below (Up/Down) "), "{s}");
    snap("report_repeats", &app);
    // Every repeat's own report follows.
    let mut text = s;
    for _ in 0..6 {
        key(&mut app, KeyCode::PageDown);
        text.push_str(&screen(&app, 80, 25));
    }
    for i in 1..=3 {
        assert!(text.contains(&format!("repeat {i} of 3")), "{text}");
    }
}

#[test]
fn retest_runs_on_the_device_whose_setting_changed() {
    let mut app = app_with("host-loop-zram", true);
    complete_run(&mut app, "none", 512.0, 0.060); // on loop0
    // Switch loop1's scheduler from the device list.
    keys(&mut app, "1");
    keys(&mut app, "j");
    assert_eq!(app.selected_device().unwrap().name, "loop1");
    keys(&mut app, "s");
    key(&mut app, KeyCode::Down);
    key(&mut app, KeyCode::Enter);
    app.update(Msg::SchedulerSet {
        device: "loop1".into(),
        result: Ok("mq-deadline".into()),
    });
    // R does not silently rerun on loop0: loop1 never ran this test, so it asks.
    let cmds = keys(&mut app, "R");
    assert!(cmds.is_empty(), "{cmds:?}");
    let s = screen(&app, 80, 25);
    assert!(s.contains("loop1"), "{s}");
    snap("retest_where", &app);
    let cmds = keys(&mut app, "y");
    let [Cmd::StartRun(req)] = cmds.as_slice() else {
        panic!("{cmds:?}")
    };
    assert_eq!(req.target.to_str(), Some("/dev/loop1"));
    assert_eq!(req.test, TestName::RandRead);
    app.update(Msg::RunFinished(Box::new(Ok(report(
        TestName::RandRead,
        "loop1",
        "mq-deadline",
        400.0,
        0.08,
    )))));

    // Switching loop0 now: R reruns loop0's last test without asking.
    keys(&mut app, "1");
    keys(&mut app, "k");
    keys(&mut app, "s");
    key(&mut app, KeyCode::Down);
    key(&mut app, KeyCode::Enter);
    app.update(Msg::SchedulerSet {
        device: "loop0".into(),
        result: Ok("mq-deadline".into()),
    });
    let cmds = keys(&mut app, "R");
    let [Cmd::StartRun(req)] = cmds.as_slice() else {
        panic!("{cmds:?}")
    };
    assert_eq!(req.target.to_str(), Some("/dev/loop0"));
    // The retest starts before the device list is read again: the Run screen shows the
    // scheduler just switched to, not the one the last reading had.
    let s = screen(&app, 80, 25);
    assert!(s.contains("#3 rand-read on loop0 starting"), "{s}");
    assert!(s.contains(" scheduler mq-deadline   drive cache"), "{s}");
}

#[test]
fn compare_says_what_changed_between_the_runs() {
    let mut app = app_with("host-loop-zram", true);
    complete_run(&mut app, "none", 512.0, 0.060);
    app.update(Msg::SchedulerSet {
        device: "loop0".into(),
        result: Ok("mq-deadline".into()),
    });
    // The second run also went through the page cache, on io_uring (the first used sync
    // threads, as auto chooses on this device).
    let mut b = report(TestName::RandRead, "loop0", "mq-deadline", 448.0, 0.075);
    b.plan.direct = false;
    b.outcome.engine = disktriage::bench::URING;
    for p in &mut b.outcome.phases {
        p.engine = disktriage::bench::URING;
    }
    finish_with(&mut app, TestName::RandRead, true, &b);
    app.results.records[1].drive_cache = Some("off".into());
    app.results.records[0].drive_cache = Some("on".into());
    keys(&mut app, "c");
    let s = screen(&app, 80, 25);
    for what in [
        "scheduler none -> mq-deadline",
        "drive cache on -> off",
        "engine sync -> io_uring",
        "O_DIRECT -> BUFFERED",
    ] {
        assert!(s.contains(what), "{what} missing:\n{s}");
    }
    snap("compare_changes", &app);
}

#[test]
fn a_switch_after_keep_is_put_back_to_the_kept_choice_and_says_so() {
    let mut app = app_with("host-loop-zram", true);
    let set = |app: &mut App, name: &str| {
        app.update(Msg::SchedulerSet {
            device: "loop0".into(),
            result: Ok(name.into()),
        })
    };
    set(&mut app, "mq-deadline");
    keys(&mut app, "s");
    assert_eq!(
        keys(&mut app, "K"),
        [Cmd::KeepScheduler {
            device: "loop0".into()
        }]
    );
    assert!(app.changes.scheduler[0].keep);
    // The inventory now shows the kept scheduler; the admin switches again.
    let mut inv = app.devices.inventory.clone().unwrap();
    for d in &mut inv.devices {
        if d.name == "loop0" {
            d.scheduler.as_mut().unwrap().active = Some("mq-deadline".into());
        }
    }
    app.update(Msg::Inventory(Ok(inv)));
    set(&mut app, "kyber");
    let status = app.status.clone().unwrap().0;
    assert!(
        status.contains("back to mq-deadline on exit"),
        "the journal puts back the kept choice, and the screen says so: {status}"
    );
    let c = &app.changes.scheduler[0];
    assert_eq!(
        (c.original.as_str(), c.current.as_str(), c.keep),
        ("mq-deadline", "kyber", false)
    );

    // The same for the drive's write cache.
    use disktriage::model::DriveCache;
    let cache = |enabled: bool| DriveCache {
        enabled: Some(enabled),
        changeable: true,
        fixed_reason: None,
        source: "test".into(),
    };
    let change = |before: bool, after: bool| disktriage::changes::CacheChange {
        device: "sda".into(),
        transport: disktriage::model::Transport::Sata,
        requested: after,
        before: cache(before),
        after: cache(after),
        kernel_after: None,
        journal: disktriage::changes::JournalNote::Kept { dropped: vec![] },
        notes: vec![],
    };
    app.update(Msg::DriveCacheSet {
        device: "sda".into(),
        result: Ok(Box::new(change(true, false))),
    });
    app.overlay = Some(Overlay::DriveCache(DriveCacheDialog {
        device: "sda".into(),
    }));
    keys(&mut app, "K");
    assert!(app.changes.cache[0].keep);
    app.update(Msg::DriveCacheSet {
        device: "sda".into(),
        result: Ok(Box::new(change(false, true))),
    });
    let status = app.status.clone().unwrap().0;
    assert!(status.contains("back to off on exit"), "{status}");
    let c = &app.changes.cache[0];
    assert_eq!((c.original, c.current, c.keep), (false, true, false));
}

/// A switch's read-back is the device list's value at once: a retest started before the
/// list is read again shows the new setting, not the last reading's.
#[test]
fn a_switch_shows_in_the_device_list_before_the_next_reading() {
    use disktriage::model::{DriveCache, KernelWriteCache};
    let mut app = app_with("qemu-lab", true);
    let flush = |app: &App| app.devices.find("sda").and_then(|d| d.kernel_write_cache);
    let active = |app: &App| {
        app.devices
            .find("sda")
            .and_then(|d| d.scheduler.as_ref()?.active.clone())
    };
    assert_eq!(flush(&app), Some(KernelWriteCache::WriteBack));
    let cache = |enabled: bool| DriveCache {
        enabled: Some(enabled),
        changeable: true,
        fixed_reason: None,
        source: "test".into(),
    };
    let change = |kernel_after| disktriage::changes::CacheChange {
        device: "sda".into(),
        transport: disktriage::model::Transport::Sata,
        requested: false,
        before: cache(true),
        after: cache(false),
        kernel_after,
        journal: disktriage::changes::JournalNote::Kept { dropped: vec![] },
        notes: vec![],
    };
    let cmds = app.update(Msg::DriveCacheSet {
        device: "sda".into(),
        result: Ok(Box::new(change(Some(KernelWriteCache::WriteThrough)))),
    });
    assert!(cmds.contains(&Cmd::RefreshInventory), "{cmds:?}");
    assert_eq!(flush(&app), Some(KernelWriteCache::WriteThrough));
    // Not read back: unknown until the list is read again, never the old value.
    app.update(Msg::DriveCacheSet {
        device: "sda".into(),
        result: Ok(Box::new(change(None))),
    });
    assert_eq!(flush(&app), None);

    assert_eq!(active(&app).as_deref(), Some("mq-deadline"));
    app.update(Msg::SchedulerSet {
        device: "sda".into(),
        result: Ok("none".into()),
    });
    assert_eq!(active(&app).as_deref(), Some("none"));
}

#[test]
fn compare_scrolls_keeps_the_marks_and_says_when_nothing_matches() {
    let mut app = app_with("host-loop-zram", true);
    let a = report_phases(TestName::Cdm, "loop0", "none", |i| (CDM_MBPS[i], 0.5));
    let b = report_phases(TestName::Cdm, "loop0", "mq-deadline", |i| {
        (CDM_MBPS[i] * 0.9, 0.6)
    });
    finish_with(&mut app, TestName::Cdm, false, &a);
    finish_with(&mut app, TestName::Cdm, true, &b);
    keys(&mut app, "c");
    let first = screen(&app, 80, 25);
    assert!(first.contains("SEQ1M Q8T1 read"), "{first}");
    assert!(!first.contains("RND4K Q1T1 write"), "{first}");
    snap("compare_cdm_top", &app);
    // Every phase can be reached.
    let mut seen = first.clone();
    for _ in 0..8 {
        key(&mut app, KeyCode::PageDown);
        seen.push_str(&screen(&app, 80, 25));
    }
    for label in ["SEQ1M Q1T1 write", "RND4K Q32T1 read", "RND4K Q1T1 write"] {
        assert!(seen.contains(label), "{label} never shown:\n{seen}");
    }
    snap("compare_cdm_bottom", &app);

    // A and B are what Results marked, in marking order.
    let c = report(TestName::RandRead, "loop0", "none", 500.0, 0.05);
    keys(&mut app, "1");
    finish_with(&mut app, TestName::RandRead, false, &c);
    keys(&mut app, "4");
    app.results.row = 2;
    keys(&mut app, " ");
    app.results.row = 0;
    keys(&mut app, " ");
    let results = screen(&app, 80, 25);
    assert!(results.contains("A 3   loop0"), "{results}");
    assert!(results.contains("B 1   loop0"), "{results}");
    keys(&mut app, "c");
    let s = screen(&app, 80, 25);
    assert!(s.contains(" A #3 loop0 rand-read"), "{s}");
    assert!(s.contains(" B #1 loop0 cdm"), "{s}");
    // A rand-read and a CDM run share no phase: the screen says so, whole.
    assert!(s.contains("the two runs have no phase in common"), "{s}");
    snap("compare_nothing_in_common", &app);
}
