//! The interactive screens at 80x25 and 132x43, drawn through ratatui's TestBackend from
//! fixture inventories and scripted runs, plus the key handling and state transitions of
//! `App::update` (messages in, state and commands out) without a terminal.

#![allow(clippy::unwrap_used)] // tests may unwrap: a panic is the failure report

mod common;

use common::tui::*;
use disktriage::app::{App, Overlay, Screen};
use disktriage::bench::plan::test_name::TestName;
use disktriage::event::{Cmd, Msg};
use disktriage::model::{Inventory, Transport};
use disktriage::report::export::ExportFormat;
use disktriage::sys::SysRoot;
use ratatui::crossterm::event::KeyCode;

const SIZES: [(u16, u16); 2] = [(80, 25), (132, 43)];

/// Snapshots a state at both sizes.
fn snap(name: &str, app: &App) {
    for (w, h) in SIZES {
        insta::assert_snapshot!(format!("{name}_{w}x{h}"), screen(app, w, h));
    }
}

#[test]
fn devices_screen() {
    let app = app_with("host-loop-zram", true);
    snap("devices", &app);
    let lab = app_with("qemu-lab", true);
    snap("devices_qemu_lab", &lab);
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
        for b in disktriage::app::keys::all() {
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
    for k in [
        "1-5",
        "q / Ctrl-C",
        "Space mark A/B",
        "x or Esc stop",
        "e export",
    ] {
        assert!(s.contains(k), "{k} missing:\n{s}");
    }
    snap("help", &app);
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
    use disktriage::bench::exec::run_input::RunEvent;
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
    let fields = disktriage::app::picker::fields_for(TestName::RandRead);
    let at = fields
        .iter()
        .position(|f| *f == disktriage::app::picker::Field::TempPoll)
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
        disktriage::bench::exec::session::TempPoll::Every(std::time::Duration::from_secs(1))
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
fn span(start: f64, end: f64, mb: u64) -> disktriage::bench::results::stats::IntervalPoint {
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
        app.update(Msg::Run(Box::new(
            disktriage::bench::exec::run_input::RunEvent::Point { index: 0, point: p },
        )));
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

const CDM_MBPS: [f64; 8] = [3400.0, 2900.0, 1800.0, 1700.0, 450.0, 380.0, 55.0, 160.0];

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
    let cli = disktriage::report::run::render_text(&cdm);
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
    app.picker_test = disktriage::app::picker::index_of(TestName::RandRead);
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
    b.outcome.engine = disktriage::bench::plan::params::EngineKind::Uring;
    for p in &mut b.outcome.phases {
        p.engine = disktriage::bench::plan::params::EngineKind::Uring;
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
    app.overlay = Some(Overlay::DriveCache {
        device: "sda".into(),
    });
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

#[test]
fn numbers_are_never_cut_at_80_columns() {
    use disktriage::bench::exec::run_input::RunEvent;
    use disktriage::bench::results::stats::LatencyPoint;
    let mut app = app_with("host-loop-zram", true);
    app.values.repeats = 3;
    keys(&mut app, "2");
    app.picker_test = disktriage::app::picker::index_of(TestName::Cdm);
    keys(&mut app, "r");
    let plan = plan(TestName::Cdm);
    app.update(Msg::RunStarted {
        target: Box::new(target("loop0", "mq-deadline")),
        plan: Box::new(plan.clone()),
        notes: vec![],
    });
    app.update(Msg::Run(Box::new(RunEvent::PhaseStarted {
        index: 7,
        count: 8,
        label: "RND4K Q1T1 write".into(),
        job: Box::new(plan.phases[7].job.clone()),
        probing: false,
    })));
    app.update(Msg::Run(Box::new(RunEvent::Measuring {
        index: 7,
        engine: Box::new(qd1_choice()),
    })));
    // A fast device: 8.5 GB/s at 16,7xx I/Os per 0.25 s; slow tails in milliseconds.
    for i in 0..8 {
        let mut p = span(i as f64 * 0.25, (i + 1) as f64 * 0.25, 2127);
        p.read.ops = 4186;
        p.read.latency = Some(LatencyPoint {
            p50_ns: 12_345_000,
            p99_ns: 123_456_000,
            p999_ns: 1_234_567_000,
            max_ns: 2_345_678_000,
        });
        app.update(Msg::Run(Box::new(RunEvent::Point { index: 7, point: p })));
    }
    app.update(Msg::Temperature {
        device: "loop0".into(),
        at: 1.0,
        celsius: 52,
    });
    let s = screen(&app, 80, 25);
    for whole in [
        "mean 8508.0",
        "IOPS now 16.7k mean 16.7k",
        "p99 123.5",
        "p99.9 1235",
        "max 2346",
        "52 C",
        "ph 8/8",
        "rep 1/3",
    ] {
        assert!(s.contains(whole), "{whole:?} cut or missing:\n{s}");
    }
    snap("running_big_numbers", &app);

    // Results: ten repeats of ten.
    for _ in 0..3 {
        app.update(Msg::RunFinished(Box::new(Ok(report(
            TestName::RandRead,
            "loop0",
            "none",
            500.0,
            1234.5,
        )))));
    }
    app.results.records[0].repeats_wanted = 10;
    keys(&mut app, "4");
    let s = screen(&app, 80, 25);
    // p99 1234.5 ms in a 6-wide column: whole milliseconds, not "1234.5" cut to "1234.".
    assert!(s.contains(" 1234   3/10 "), "{s}");
}

#[test]
fn typed_values_are_checked_against_the_device_and_the_eta_counts_repeats() {
    use disktriage::app::picker::{Field, fields_for};
    let mut app = app_with("host-loop-zram", true); // loop0: 64 MiB
    keys(&mut app, "2");
    app.picker_test = disktriage::app::picker::index_of(TestName::RandRead);
    key(&mut app, KeyCode::Enter);
    let fields = fields_for(TestName::RandRead);
    let type_into = |app: &mut App, field: Field, text: &str| {
        app.picker_field = fields.iter().position(|f| *f == field).unwrap();
        key(app, KeyCode::Enter);
        keys(app, text);
        key(app, KeyCode::Enter);
    };
    type_into(&mut app, Field::Qd, "0");
    let Some(Overlay::Edit { error: Some(e), .. }) = &app.overlay else {
        panic!("QD 0 accepted: {:?}", app.overlay)
    };
    assert!(e.contains("queue depth"), "{e}");
    assert_eq!(app.values.params.qd, None, "the bad value is not kept");
    snap("typed_value_refused", &app);
    key(&mut app, KeyCode::Esc);
    type_into(&mut app, Field::Size, "1G");
    let Some(Overlay::Edit { error: Some(e), .. }) = &app.overlay else {
        panic!("a region past the end accepted: {:?}", app.overlay)
    };
    assert!(e.contains("past the end"), "{e}");
    key(&mut app, KeyCode::Esc);
    type_into(&mut app, Field::Size, "32M");
    assert_eq!(app.overlay, None);
    assert_eq!(app.values.params.size, Some(32 << 20));
    // Stepping skips what the device cannot take: 64 MiB is the whole device, not more.
    app.picker_field = fields.iter().position(|f| *f == Field::Size).unwrap();
    for _ in 0..3 {
        key(&mut app, KeyCode::Right);
        assert!(
            app.values.params.size.is_none_or(|s| s <= 64 << 20),
            "{:?}",
            app.values.params.size
        );
    }

    // The ETA counts the repeats still to come.
    type_into(&mut app, Field::Time, "2s");
    type_into(&mut app, Field::Warmup, "0");
    type_into(&mut app, Field::Repeats, "3");
    let cmds = keys(&mut app, "r");
    let [Cmd::StartRun(req)] = cmds.as_slice() else {
        panic!("{cmds:?}")
    };
    let plan = disktriage::bench::catalog::build::build_plan(
        TestName::RandRead,
        &req.params,
        &disktriage::bench::plan::TargetFacts {
            size: 64 << 20,
            logical_block_size: 512,
            max_request: None,
            is_file: false,
        },
        false,
    )
    .unwrap();
    tick(&mut app, 10.0);
    app.update(Msg::RunStarted {
        target: Box::new(target("loop0", "none")),
        plan: Box::new(plan.clone()),
        notes: vec![],
    });
    app.update(Msg::Run(Box::new(
        disktriage::bench::exec::run_input::RunEvent::PhaseStarted {
            index: 0,
            count: 1,
            label: "rand-read".into(),
            job: Box::new(plan.phases[0].job.clone()),
            probing: false,
        },
    )));
    tick(&mut app, 10.5);
    let s = screen(&app, 80, 25);
    // 1.5 s of this repeat, then two more of 2 s each.
    assert!(s.contains("ETA 6 s"), "{s}");
    // 4.5 s to go is not 4 s: an ETA rounds up.
    tick(&mut app, 11.5);
    let s = screen(&app, 80, 25);
    assert!(s.contains("ETA 5 s"), "{s}");
}

#[test]
fn quit_asks_before_discarding_unexported_results() {
    let ctrl_c = || {
        Msg::Key(ratatui::crossterm::event::KeyEvent::new(
            KeyCode::Char('c'),
            ratatui::crossterm::event::KeyModifiers::CONTROL,
        ))
    };
    let mut app = app_with("host-loop-zram", true);
    complete_run(&mut app, "none", 512.0, 0.060);
    complete_run(&mut app, "none", 500.0, 0.060);
    assert!(
        keys(&mut app, "q").is_empty(),
        "q does not drop two results"
    );
    let s = screen(&app, 80, 25);
    assert!(s.contains("quit and discard 2 results?"), "{s}");
    assert!(s.contains("e exports"), "{s}");
    snap("quit_discard", &app);
    // Anything else stays.
    assert!(keys(&mut app, "n").is_empty());
    assert_eq!(app.overlay, None);
    assert!(!app.quitting);
    // e from the question goes to the export of an unsaved run.
    keys(&mut app, "q");
    keys(&mut app, "e");
    assert_eq!(app.screen, Screen::Results);
    assert!(matches!(app.overlay, Some(Overlay::Export { record: 0 })));
    let cmds = keys(&mut app, "j");
    assert!(matches!(cmds.as_slice(), [Cmd::Export { .. }]), "{cmds:?}");
    app.update(Msg::Exported(Ok("/tmp/x.json".into())));
    // One left unsaved: q asks about one; a second q confirms.
    assert!(keys(&mut app, "q").is_empty());
    assert!(screen(&app, 80, 25).contains("quit and discard 1 result?"));
    assert_eq!(keys(&mut app, "q"), [Cmd::Quit]);
    // Ctrl-C never asks (it restores and exits, like SIGTERM).
    let mut app = app_with("host-loop-zram", true);
    complete_run(&mut app, "none", 512.0, 0.060);
    assert_eq!(app.update(ctrl_c()), [Cmd::Quit]);
    // y confirms too; with everything exported q quits at once.
    let mut app = app_with("host-loop-zram", true);
    complete_run(&mut app, "none", 512.0, 0.060);
    keys(&mut app, "q");
    assert_eq!(keys(&mut app, "y"), [Cmd::Quit]);
    let mut app = app_with("host-loop-zram", true);
    complete_run(&mut app, "none", 512.0, 0.060);
    keys(&mut app, "4");
    keys(&mut app, "e");
    keys(&mut app, "c");
    app.update(Msg::Exported(Ok("/tmp/x.csv".into())));
    assert_eq!(keys(&mut app, "q"), [Cmd::Quit]);
}

#[test]
fn the_test_screen_at_80_columns_shows_every_name_value_and_mark_whole() {
    use disktriage::app::picker::fields_for;
    use disktriage::bench::catalog::CATALOG;
    let mut app = app_with("host-loop-zram", true);
    keys(&mut app, "2");
    let s = screen(&app, 80, 25);
    assert!(
        s.contains("W writes: destroys") && s.contains("w writes if asked"),
        "{s}"
    );
    for (i, t) in CATALOG.iter().enumerate() {
        let s = screen(&app, 80, 25);
        assert!(s.contains(&format!(" {} ", t.id)), "{}:\n{s}", t.id);
        // A long form scrolls: every row it shows has its value whole.
        let fields = fields_for(t.name);
        let shown: Vec<_> = fields
            .iter()
            .copied()
            .filter(|f| s.contains(&format!("{}  ", f.label())))
            .collect();
        assert!(shown.len() >= fields.len().min(5), "{}:\n{s}", t.id);
        for field in shown {
            let (value, _) = app.values.show(t.name, field);
            assert!(
                s.contains(&value),
                "{} {field:?} {value:?} is cut:\n{s}",
                t.id
            );
        }
        if i + 1 < CATALOG.len() {
            key(&mut app, KeyCode::Down);
        }
    }
}

#[test]
fn quit_says_the_history_keeps_what_it_recorded() {
    // Each finished test asks the loop to record it; the loop says when the history took it.
    let finish = |app: &mut App| {
        let device = app.selected_device().expect("a device").name.clone();
        feed(app, TestName::RandRead, &device, "none", 40, 512.0);
        let cmds = app.update(Msg::RunFinished(Box::new(Ok(report(
            TestName::RandRead,
            &device,
            "none",
            512.0,
            0.060,
        )))));
        cmds.iter()
            .find_map(|c| match c {
                Cmd::RecordHistory { record, runs, .. } => Some((*record, runs.len())),
                _ => None,
            })
            .expect("the finished test is recorded")
    };
    let mut app = app_with("host-loop-zram", true);
    pick_rand_read(&mut app);
    keys(&mut app, "r");
    let (record, runs) = finish(&mut app);
    assert_eq!((record, runs), (0, 1));
    app.update(Msg::HistoryRecorded { record, runs });
    keys(&mut app, "q");
    let s = screen(&app, 80, 25);
    assert!(
        s.contains("quit? 1 result not exported: the history keeps the figures, not")
            && s.contains("the per-interval series"),
        "{s}"
    );
    assert!(!s.contains("discard"), "{s}");
    // A second test the history did not take (it failed to write): that one is discarded.
    keys(&mut app, "n");
    assert_eq!(app.overlay, None);
    keys(&mut app, "R");
    finish(&mut app);
    keys(&mut app, "q");
    let s = screen(&app, 80, 25);
    assert!(
        s.contains("quit? 2 results not exported: 1 in the history (figures only), 1"),
        "{s}"
    );
    assert!(s.contains("discarded"), "{s}");
}

#[test]
fn a_one_io_run_shows_its_rate_marked_as_a_low_count() {
    // dd prints a rate for one block: so does every screen, and says how thin it is.
    let mut app = app_with("host-loop-zram", true);
    let one = one_io_report();
    finish_with(&mut app, TestName::RandRead, false, &one);
    let run = screen(&app, 80, 25);
    keys(&mut app, "4");
    let results = screen(&app, 80, 25);
    key(&mut app, KeyCode::Enter);
    let full = screen(&app, 132, 43);
    key(&mut app, KeyCode::Esc);
    // 4096 B in 0.896 ms: 4.6 MB/s, 1116 IOPS.
    for s in [&run, &results, &full] {
        assert!(s.contains("4.6"), "no MB/s:\n{s}");
        assert!(s.contains("1 I/O in 0.90 ms: low count"), "no mark:\n{s}");
        assert!(!s.contains("too few"), "{s}");
    }
    assert!(
        run.contains("IOPS mean 1116") && results.contains("1116*"),
        "{run}\n{results}"
    );
    assert!(full.contains("1116 IOPS"), "{full}");
    snap("one_io_results", &app);
    // Compare shows the rates of two thin runs, marked, and judges them as any other.
    finish_with(&mut app, TestName::RandRead, true, &one);
    keys(&mut app, "c");
    let s = screen(&app, 80, 25);
    assert!(s.contains("MB/s") && s.contains("4.6"), "{s}");
    assert!(s.contains("low count"), "{s}");
    assert!(!s.contains("too few"), "{s}");
}

/// rand-read that did one I/O of 4 KiB in 0.896 ms.
fn one_io_report() -> disktriage::bench::results::outcome::RunReport {
    let mut one = report(TestName::RandRead, "loop0", "none", 4.571, 0.002);
    let p = &mut one.outcome.phases[0];
    p.seconds = 0.000896;
    p.rate_seconds = p.seconds;
    let d = if p.read.ops > 0 {
        &mut p.read
    } else {
        &mut p.write
    };
    d.bytes = 4096;
    d.ops = 1;
    d.bytes_per_sec = 4096.0 / 0.000896;
    d.iops = 1.0 / 0.000896;
    if let Some(l) = &mut d.latency {
        l.count = 1;
        l.mean_ns = 2_000.0;
    }
    one
}

#[test]
fn a_repeated_run_shows_figures_over_all_its_repeats() {
    // Two repeats: the first at about 100 MB/s with every I/O at 1 ms, the second at about
    // 300 MB/s with 4 % of its I/Os at 10 ms. Over both: 2 % of the I/Os took 10 ms (p99
    // 10 ms, not the mean 5.5 of the repeats' p99s), and the intervals ran from 95 MB/s (the
    // first repeat's slowest) to 318 MB/s.
    let mut app = app_with("host-loop-zram", true);
    app.values.repeats = 2;
    pick_rand_read(&mut app);
    let cmds = keys(&mut app, "r");
    assert!(matches!(cmds.as_slice(), [Cmd::StartRun(_)]), "{cmds:?}");
    for (mbps, slow) in [(100.0, 0), (300.0, 40)] {
        feed(&mut app, TestName::RandRead, "loop0", "none", 40, mbps);
        let mut r = report(TestName::RandRead, "loop0", "none", mbps, 1.0);
        let p = &mut r.outcome.phases[0];
        let mut d = disktriage::bench::results::stats::DirStats::default();
        for i in 0..1000 {
            d.record(4096, if i < slow { 10_000_000 } else { 1_000_000 });
        }
        let bytes_per_sec = p.read.bytes_per_sec;
        p.read = disktriage::bench::results::outcome::DirTotals {
            bytes_per_sec,
            iops: bytes_per_sec / 4096.0,
            ..disktriage::bench::results::outcome::DirTotals::over(&d, p.rate_seconds)
        };
        app.update(Msg::RunFinished(Box::new(Ok(r))));
    }
    assert!(!app.running());
    let run = screen(&app, 80, 25);
    assert!(
        run.contains("MB/s mean 200.0 min 95.0 max 318.0"),
        "min/max not over both repeats:\n{run}"
    );
    assert!(
        run.contains("p99 10.00"),
        "p99 not over both repeats:\n{run}"
    );
    let f = app.results.records[0].headline().unwrap();
    assert!((f.p99_ms.unwrap().mean - 10.0).abs() < 0.01, "{f:?}");
    let (lo, hi) = f.mbps_min_max.unwrap();
    assert!(
        (lo - 95.0).abs() < 0.01 && (hi - 318.0).abs() < 0.01,
        "{f:?}"
    );
    keys(&mut app, "4");
    let results = screen(&app, 80, 25);
    assert!(
        results.contains("200.0") && results.contains("10.00"),
        "{results}"
    );
}

#[test]
fn c_on_the_run_screen_compares_the_last_two_runs_even_with_marks() {
    let mut app = app_with("host-loop-zram", true);
    complete_run(&mut app, "none", 500.0, 0.060);
    complete_run(&mut app, "none", 510.0, 0.060);
    // Runs 1 and 2 marked A and B on Results.
    keys(&mut app, "4");
    key(&mut app, KeyCode::Up);
    keys(&mut app, " ");
    key(&mut app, KeyCode::Down);
    keys(&mut app, " ");
    assert_eq!(app.results.marks, vec![0, 1]);
    complete_run(&mut app, "none", 520.0, 0.060);
    assert_eq!(app.screen, Screen::Run);
    // The help says what c does here.
    keys(&mut app, "c");
    assert_eq!(app.screen, Screen::Compare);
    assert_eq!(app.comparison(), Some((1, 2)));
    let s = screen(&app, 80, 25);
    assert!(s.contains("A #2") && s.contains("B #3"), "{s}");
    // c on Results still compares the marked runs.
    keys(&mut app, "4");
    keys(&mut app, "c");
    assert_eq!(app.comparison(), Some((0, 1)));
    let s = screen(&app, 80, 25);
    assert!(s.contains("A #1") && s.contains("B #2"), "{s}");
    assert_eq!(app.results.marks, vec![0, 1]);
}

#[test]
fn a_cdm_cell_with_few_ios_keeps_its_figure_as_the_cli_grid_does() {
    // A throttled disk's first CrystalDiskMark cell: 10 requests of 1 MiB in 85 ms. The CLI's
    // grid prints its 123.36 MB/s; the TUI's grid shows the same, marked.
    let mut app = app_with("host-loop-zram", true);
    let mut r = report_phases(TestName::Cdm, "loop0", "none", |i| (100.0 + i as f64, 0.5));
    {
        let p = &mut r.outcome.phases[0];
        p.seconds = 0.085;
        p.rate_seconds = 0.085;
        let d = if p.read.ops > 0 {
            &mut p.read
        } else {
            &mut p.write
        };
        d.ops = 10;
        d.bytes = 10 * p.job.bs;
        d.bytes_per_sec = d.bytes as f64 / 0.085;
        d.iops = 10.0 / 0.085;
    }
    let cell = disktriage::report::run::cdm_mbps(r.outcome.phases[0].bytes_per_sec() / 1e6);
    assert!(disktriage::report::run::cdm_grid(&r).contains(&cell));
    finish_with(&mut app, TestName::Cdm, false, &r);
    let run = screen(&app, 132, 43);
    keys(&mut app, "4");
    let results = screen(&app, 132, 43);
    for s in [&run, &results] {
        assert!(s.contains(&format!("{cell}*")), "{cell} missing:\n{s}");
    }
}

#[test]
fn a_cpu_bound_run_says_so_on_results_and_in_the_full_report() {
    let mut app = app_with("host-loop-zram", true);
    let mut r = report(TestName::RandRead, "loop0", "none", 512.0, 0.060);
    r.outcome.phases[0].cpu_bound = true;
    finish_with(&mut app, TestName::RandRead, false, &r);
    keys(&mut app, "4");
    let note = "CPU-bound: the figure may be the tool's, not the drive's";
    let s = screen(&app, 80, 25);
    assert!(s.contains(note), "{s}");
    key(&mut app, KeyCode::Enter);
    assert!(matches!(app.overlay, Some(Overlay::Report { .. })));
    let s = screen(&app, 132, 43);
    assert!(s.contains(&format!("       {note}")), "{s}");
    // A run that waited for the drive says nothing of the kind.
    let mut app = app_with("host-loop-zram", true);
    complete_run(&mut app, "none", 512.0, 0.060);
    keys(&mut app, "4");
    assert!(!screen(&app, 80, 25).contains("CPU-bound"));
}

/// ASCII, box drawing and the CP437 block elements: what the Linux console's fonts have.
fn console_glyph(c: char) -> bool {
    c.is_ascii() || ('\u{2500}'..='\u{257F}').contains(&c) || "█▀▄▌▐░▒▓".contains(c)
}

fn assert_console_glyphs(app: &App) {
    for (w, h) in SIZES {
        for sym in symbols(app, w, h) {
            assert!(
                sym.chars().all(console_glyph),
                "glyph {sym:?} is not on the Linux console"
            );
        }
    }
}

#[test]
fn size_sweep_chart_marks_the_knee_the_cli_reports() {
    let mut app = app_with("host-loop-zram", true);
    let sweep = disk_like_size_sweep("loop0");
    finish_with(&mut app, TestName::SizeSweep, false, &sweep);
    keys(&mut app, "4");
    let s = screen(&app, 80, 25);
    // One letter per curve, the knee of each in the legend: the knee the CLI prints.
    let cli = disktriage::report::run::render_text(&sweep);
    assert!(
        cli.contains("# knee: fwd_rd 128k, bwd_rd 128k, rnd_rd still rising at 1M"),
        "{cli}"
    );
    // The JSON (and the TUI's export, which is the same text) gives the same knees.
    let json = disktriage::report::export::render(std::slice::from_ref(&sweep), ExportFormat::Json)
        .unwrap();
    let json: serde_json::Value = serde_json::from_str(&json).unwrap();
    let knees: Vec<(String, serde_json::Value, bool)> = json["knees"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| {
            (
                k["series"].as_str().unwrap().to_string(),
                k["knee"].clone(),
                k["still_rising"].as_bool().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        knees,
        [
            ("fwd_rd".into(), 131072.into(), false),
            ("bwd_rd".into(), 131072.into(), false),
            ("rnd_rd".into(), serde_json::Value::Null, true),
        ]
    );
    for legend in [
        "F forward knee 128k",
        "B backward knee 128k",
        "R random still rising at 1M",
    ] {
        assert!(s.contains(legend), "{legend} missing:\n{s}");
    }
    // The axes say what they measure, the x labels are the request sizes.
    assert!(s.contains("Read MB/s by request size"), "{s}");
    assert!(s.contains("MB/s") && s.contains("size"), "{s}");
    assert!(s.contains("4k") && s.contains("1M"), "{s}");
    // Every measured point keeps its letter where the curves meet (all three level at 512k
    // and 1M): 9 sizes, 9 of each letter between the title and the axis.
    let chart: String = s
        .lines()
        .skip_while(|l| !l.contains("Read MB/s by request size"))
        .skip(1)
        .take_while(|l| !l.contains('└'))
        .collect::<String>()
        .replace("MB/s", "");
    for letter in ['F', 'B', 'R'] {
        assert_eq!(
            chart.matches(letter).count(),
            9,
            "{letter} points hidden:\n{s}"
        );
    }
    snap("sweep_chart", &app);
    // On the console: the same chart in half blocks and letters, no braille.
    app.console = true;
    assert_console_glyphs(&app);
    insta::assert_snapshot!("sweep_chart_console_80x25", screen(&app, 80, 25));
    insta::assert_snapshot!("sweep_chart_console_132x43", screen(&app, 132, 43));
}

#[test]
fn qd_sweep_charts_iops_mbps_and_latency_with_the_knees() {
    let mut app = app_with("host-loop-zram", true);
    let sweep = ssd_like_qd_sweep("loop0");
    finish_with(&mut app, TestName::QdSweep, false, &sweep);
    keys(&mut app, "4");
    let cli = disktriage::report::run::render_text(&sweep);
    let s = screen(&app, 132, 43);
    for (cli_line, legend) in [
        ("Knee Small IOPS=", "S IOPS knee QD "),
        ("Knee Large MBPS=", "L MB/s knee QD "),
    ] {
        let at = cli
            .lines()
            .find(|l| l.starts_with(cli_line))
            .and_then(|l| l.split("@ QD ").nth(1))
            .unwrap_or_else(|| panic!("{cli_line} missing:\n{cli}"));
        assert!(s.contains(&format!("{legend}{at}")), "{legend}{at}:\n{s}");
    }
    for title in [
        "Small random IOPS by QD",
        "Large sequential MB/s by QD",
        "latency ms",
    ] {
        assert!(s.contains(title), "{title} missing:\n{s}");
    }
    assert!(s.contains("M mean") && s.contains("P p99"), "{s}");
    snap("qd_sweep_chart", &app);
    app.console = true;
    assert_console_glyphs(&app);
    insta::assert_snapshot!("qd_sweep_chart_console_80x25", screen(&app, 80, 25));
}

/// Feeds a started multi-phase run its phases up to `upto` (exclusive), each with a few
/// points and its result, and starts the next one.
fn feed_phases(
    app: &mut App,
    report: &disktriage::bench::results::outcome::RunReport,
    upto: usize,
) {
    use disktriage::bench::exec::run_input::RunEvent;
    app.update(Msg::RunStarted {
        target: Box::new(report.target.clone()),
        plan: Box::new(report.plan.clone()),
        notes: vec![],
    });
    let count = report.plan.phases.len();
    for (index, p) in report.outcome.phases.iter().enumerate().take(upto + 1) {
        app.update(Msg::Run(Box::new(RunEvent::PhaseStarted {
            index,
            count,
            label: p.label.clone(),
            job: Box::new(p.job.clone()),
            probing: false,
        })));
        app.update(Msg::Run(Box::new(RunEvent::Measuring {
            index,
            engine: Box::new(qd1_choice()),
        })));
        for i in 0..6 {
            app.update(Msg::Run(Box::new(RunEvent::Point {
                index,
                point: point(i, p.bytes_per_sec() / 1e6),
            })));
        }
        if index < upto {
            app.update(Msg::Run(Box::new(RunEvent::PhaseFinished {
                index,
                result: Box::new(p.clone()),
            })));
        }
    }
    tick(app, 30.0);
}

#[test]
fn sweeps_and_cdm_draw_their_finished_phases_live() {
    // A size sweep 2/3 through: the sizes done are charted, the rest are not yet.
    let mut app = app_with("host-loop-zram", true);
    keys(&mut app, "2");
    app.picker_test = disktriage::app::picker::index_of(TestName::SizeSweep);
    keys(&mut app, "r");
    let sweep = disk_like_size_sweep("loop0");
    feed_phases(&mut app, &sweep, 18);
    let s = screen(&app, 80, 25);
    assert!(s.contains("phase 19/27"), "{s}");
    assert!(s.contains("Read MB/s by request size"), "{s}");
    assert!(
        s.contains("4k") && s.contains("128k") && !s.contains(" 1M"),
        "{s}"
    );
    snap("live_sweep_chart", &app);
    app.console = true;
    assert_console_glyphs(&app);
    insta::assert_snapshot!("live_sweep_chart_console_80x25", screen(&app, 80, 25));

    // CrystalDiskMark: the rows done have figures, the others wait.
    let mut app = app_with("host-loop-zram", true);
    keys(&mut app, "2");
    app.picker_test = disktriage::app::picker::index_of(TestName::CdmNvme);
    keys(&mut app, "r");
    let cdm = report_phases(TestName::CdmNvme, "loop0", "none", |i| (CDM_MBPS[i], 0.5));
    feed_phases(&mut app, &cdm, 3);
    let s = screen(&app, 80, 25);
    assert!(s.contains("CrystalDiskMark: cdm-nvme"), "{s}");
    assert!(s.contains("3400.00") && s.contains("1800.00"), "{s}");
    assert!(s.contains("SEQ128K") && !s.contains("450.00"), "{s}");
    snap("live_cdm_grid", &app);
}

#[test]
fn a_test_of_a_known_phase_kind_gets_that_kinds_drawing_whatever_its_name() {
    // seq-read stands in for a new family whose plan is of a kind already drawn: the chart or
    // grid follows the phases' kind (as the report's tables do), not the test's name.
    let mut sweep = disk_like_size_sweep("loop0");
    sweep.test = TestName::SeqRead;
    sweep.plan.test = TestName::SeqRead;
    let mut app = app_with("host-loop-zram", true);
    keys(&mut app, "2");
    app.picker_test = disktriage::app::picker::index_of(TestName::SeqRead);
    keys(&mut app, "r");
    feed_phases(&mut app, &sweep, 18);
    let s = screen(&app, 80, 25);
    assert!(s.contains("Read MB/s by request size"), "{s}");
    app.update(Msg::RunFinished(Box::new(Ok(sweep))));
    keys(&mut app, "4");
    let s = screen(&app, 80, 25);
    assert!(s.contains("seq-read"), "{s}");
    assert!(s.contains("F forward knee 128k"), "{s}");

    let mut cdm = report_phases(TestName::CdmNvme, "loop0", "none", |i| (CDM_MBPS[i], 0.5));
    cdm.test = TestName::SeqRead;
    cdm.plan.test = TestName::SeqRead;
    let mut app = app_with("host-loop-zram", true);
    keys(&mut app, "2");
    app.picker_test = disktriage::app::picker::index_of(TestName::SeqRead);
    keys(&mut app, "r");
    feed_phases(&mut app, &cdm, 3);
    let s = screen(&app, 80, 25);
    assert!(s.contains("CrystalDiskMark: seq-read"), "{s}");
    assert!(s.contains("3400.00") && s.contains("SEQ128K"), "{s}");
    app.update(Msg::RunFinished(Box::new(Ok(cdm))));
    keys(&mut app, "4");
    let s = screen(&app, 80, 25);
    assert!(s.contains("CrystalDiskMark: seq-read"), "{s}");
}

#[test]
fn full_report_of_a_repeated_sweep_gives_the_knee_the_chart_marks() {
    let mut app = app_with("host-loop-zram", true);
    app.values.repeats = 2;
    finish_with(
        &mut app,
        TestName::SizeSweep,
        false,
        &disk_like_size_sweep("loop0"),
    );
    keys(&mut app, "4");
    let chart = screen(&app, 80, 25);
    assert!(chart.contains("F forward knee 128k"), "{chart}");
    let record = &app.results.records[0];
    assert_eq!(record.runs.len(), 2);
    let report = record.report_text();
    assert!(
        report.contains("knee of the means: fwd_rd 128k, bwd_rd 128k, rnd_rd still rising at 1M"),
        "{report}"
    );
}

#[test]
fn a_size_sweep_with_writes_charts_reads_and_writes_side_by_side() {
    use disktriage::bench::catalog::build::build_plan;
    use disktriage::bench::plan::TargetFacts;
    use disktriage::bench::plan::params::TestParams;
    let params = TestParams {
        include_writes: true,
        min_bs: Some(64 << 10),
        max_bs: Some(1 << 20),
        ..Default::default()
    };
    let facts = TargetFacts {
        size: 64 << 20,
        logical_block_size: 512,
        max_request: Some(1280 << 10),
        is_file: false,
    };
    let plan = build_plan(TestName::SizeSweep, &params, &facts, true).unwrap();
    let mut sweep = report_phases(TestName::SizeSweep, "loop0", "none", |_| (1.0, 1.0));
    // Reads level off at 512k; writes, slower, are still climbing at 1M.
    sweep.outcome.phases = plan
        .phases
        .iter()
        .map(|ph| {
            let steps = (ph.job.bs >> 16).ilog2() as f64; // 64k = 0, 1M = 4
            let mbps = if ph.label.contains("_wt") {
                300.0 * (steps + 1.0)
            } else {
                2000.0 - 1000.0 * (-(steps + 1.0)).exp2() * 2.0
            };
            phase_result(ph, mbps, 0.5)
        })
        .collect();
    sweep.plan = plan;
    let mut app = app_with("host-loop-zram", true);
    finish_with(&mut app, TestName::SizeSweep, false, &sweep);
    keys(&mut app, "4");
    let cli = disktriage::report::run::render_text(&sweep);
    assert!(
        cli.contains("# knee: fwd_rd 512k, bwd_rd 512k, rnd_rd 512k, fwd_wt still rising at 1M"),
        "{cli}"
    );
    let s = screen(&app, 132, 43);
    for text in [
        "Read MB/s by request size",
        "Write MB/s by request size",
        "F forward knee 512k",
        "F forward still rising at 1M",
    ] {
        assert!(s.contains(text), "{text} missing:\n{s}");
    }
    snap("sweep_chart_writes", &app);
}

#[test]
fn cli_sweep_tables_end_with_the_knees() {
    let size = disktriage::report::run::render_text(&disk_like_size_sweep("loop0"));
    insta::assert_snapshot!("cli_size_sweep_table", size);
    let qd = disktriage::report::run::render_text(&ssd_like_qd_sweep("loop0"));
    assert!(qd.contains("Knee Small IOPS=83746 @ QD 8"), "{qd}");
    assert!(qd.contains("Knee Large MBPS=2700.11 @ QD 4"), "{qd}");
    insta::assert_snapshot!("cli_qd_sweep_table", qd);
}

#[test]
fn preserve_is_a_write_data_choice_and_every_screen_says_rewrite() {
    use disktriage::bench::catalog::build::build_plan;
    use disktriage::bench::exec::run_input::RunEvent;
    use disktriage::bench::plan::TargetFacts;
    use disktriage::bench::plan::params::TestParams;
    let mut app = app_with("host-loop-zram", true);
    keys(&mut app, "j"); // loop1: free
    keys(&mut app, "2");
    for _ in 0..8 {
        key(&mut app, KeyCode::Down); // rand-write
    }
    key(&mut app, KeyCode::Enter);
    for _ in 0..7 {
        key(&mut app, KeyCode::Down); // write data
    }
    key(&mut app, KeyCode::Right); // zeros
    key(&mut app, KeyCode::Right); // rewrite of existing data
    let s = screen(&app, 80, 25);
    assert!(s.contains("rewrite existing (--preserve)"), "{s}");
    assert!(s.contains("REWRITES loop1 in place (data kept)"), "{s}");
    snap("picker_preserve", &app);

    // The confirmation stays, worded for a rewrite.
    let cmds = keys(&mut app, "r");
    assert!(cmds.is_empty(), "nothing starts before the confirmation");
    keys(&mut app, "loop1");
    let s = screen(&app, 80, 25);
    assert!(s.contains("REWRITES the data on loop1 in place"), "{s}");
    snap("confirm_preserve", &app);
    let cmds = key(&mut app, KeyCode::Enter);
    let [Cmd::StartRun(req)] = cmds.as_slice() else {
        panic!("{cmds:?}")
    };
    assert!(req.params.preserve && !req.params.zeros);
    assert_eq!(req.confirmation.as_deref(), Some("loop1"));

    // The run as the engine reports it, with the plan that rewrites.
    let plan = build_plan(
        TestName::RandWrite,
        &req.params,
        &TargetFacts {
            size: 64 << 20,
            logical_block_size: 512,
            max_request: Some(1280 << 10),
            is_file: false,
        },
        true,
    )
    .unwrap();
    assert!(plan.rewrites());
    app.update(Msg::RunStarted {
        target: Box::new(target("loop1", "none")),
        plan: Box::new(plan.clone()),
        notes: vec![],
    });
    app.update(Msg::Run(Box::new(RunEvent::PhaseStarted {
        index: 0,
        count: 1,
        label: "rand-write".into(),
        job: Box::new(plan.phases[0].job.clone()),
        probing: false,
    })));
    tick(&mut app, 1.0);
    app.update(Msg::Run(Box::new(RunEvent::Measuring {
        index: 0,
        engine: Box::new(qd1_choice()),
    })));
    // Each interval's bytes took half of it to write (the reads took the rest): its rates
    // are over that half, twice the bytes over the interval.
    for i in 0..24 {
        let mut p = point(i, 90.0);
        p.busy_s = Some(p.seconds() / 2.0);
        app.update(Msg::Run(Box::new(RunEvent::Point { index: 0, point: p })));
    }
    tick(&mut app, 8.0);
    let s = screen(&app, 80, 25);
    assert!(
        s.contains("O_DIRECT, rewrite of existing data, bs 4k"),
        "{s}"
    );
    assert!(s.contains("Throughput MB/s over write time"), "{s}");
    let mean = app.run.as_ref().unwrap().stats.mean_rate() / 1e6;
    assert!((175.0..185.0).contains(&mean), "{mean} MB/s\n{s}");
    snap("running_preserve", &app);

    let mut r = report(TestName::RandWrite, "loop1", "none", 180.0, 0.4);
    r.plan = plan.clone();
    r.outcome.phases[0].job = plan.phases[0].job.clone();
    r.outcome.phases[0].time_base = plan.phases[0].job.time_base();
    app.update(Msg::RunFinished(Box::new(Ok(r))));
    keys(&mut app, "4");
    let s = screen(&app, 80, 25);
    assert!(s.contains("loop1: rewrite of existing data, bs 4k"), "{s}");
    assert!(
        s.contains("rewrite of existing data: MB/s and IOPS are over the time the writes took"),
        "{s}"
    );
    snap("results_preserve", &app);

    // The same rewrite in the history of an older version, whose records have no time base:
    // they rated the rewritten bytes over the whole phase, and read back so. Compare says the
    // two figures are over different times.
    let mut old = disktriage::history::HistoryEntry::of_runs(
        disktriage::model::identity::DiskIdentity::Name("loop1".into()),
        &app.results.records[0].runs,
        None,
    )
    .unwrap();
    old.id = "older-version".into();
    let mut json = serde_json::to_value(&old).unwrap();
    for f in json["figures"].as_array_mut().unwrap() {
        f.as_object_mut().unwrap().remove("time_base").unwrap();
    }
    let old: disktriage::history::HistoryEntry = serde_json::from_value(json).unwrap();
    assert!(old.figures.iter().all(|f| !f.time_base.is_busy()));
    assert_eq!(app.results.add_past(vec![old]), 1);
    app.results.marks = vec![1, 0];
    keys(&mut app, "c");
    let s = screen(&app, 80, 25);
    assert!(
        s.contains("MB/s and IOPS over elapsed -> write-busy"),
        "{s}"
    );
    let _ = TestParams::default();
}

/// loop0's partition loop0p1 is mounted at /tmp/dtcap/mnt in the host fixture.
fn file_target(free: u64) -> Box<disktriage::event::FileTarget> {
    Box::new(disktriage::event::FileTarget {
        device: "loop0p1".into(),
        mount: "/tmp/dtcap/mnt".into(),
        fstype: "ext4".into(),
        free,
        total: 4 << 30,
        file: "/tmp/dtcap/mnt/disktriage-test-1.bin".into(),
    })
}

#[test]
fn a_file_target_shows_the_free_space_first_and_runs_on_a_new_file() {
    let mut app = app_with("host-loop-zram", true);
    assert_eq!(app.selected_device().unwrap().name, "loop0");
    let cmds = keys(&mut app, "f");
    assert_eq!(
        cmds,
        [Cmd::ProbeFileTarget {
            device: "loop0p1".into(),
            mount: "/tmp/dtcap/mnt".into()
        }]
    );
    app.update(Msg::FileTarget(Ok(file_target(3 << 30))));
    let s = screen(&app, 80, 25);
    assert!(s.contains("free space 3.0 GiB of 4.0 GiB"), "{s}");
    assert!(s.contains("removed afterwards"), "{s}");
    snap("file_target_dialog", &app);
    key(&mut app, KeyCode::Enter);
    assert_eq!(app.screen, Screen::Tests);
    key(&mut app, KeyCode::Down); // seq-write: a write test
    let s = screen(&app, 80, 25);
    assert!(
        s.contains("new file /tmp/dtcap/mnt/disktriage-test-1.bin"),
        "{s}"
    );
    snap("file_target_picker", &app);
    // A new file needs no typed name (the command line's rule): the run starts at once.
    let cmds = keys(&mut app, "r");
    let [Cmd::StartRun(req)] = cmds.as_slice() else {
        panic!("{cmds:?} {:?}", app.overlay)
    };
    assert_eq!(req.test, TestName::SeqWrite);
    assert_eq!(
        req.target.to_str(),
        Some("/tmp/dtcap/mnt/disktriage-test-1.bin")
    );
    assert_eq!(req.confirmation, None);
    assert_eq!(app.results.records[0].device, "loop0p1");

    // While the file is written, the Run screen counts the bytes (a file of some GiB takes
    // minutes on a slow disk), then says it is flushed.
    let line = |app: &App| {
        screen(app, 80, 25)
            .lines()
            .find(|l| l.contains("new test file"))
            .map(|l| l.trim_matches('"').trim().to_string())
    };
    // The path is not cut: it takes the next row (a path longer than a row loses its
    // middle, never its file's name).
    let path = "   /tmp/dtcap/mnt/disktriage-test-1.bin; x stops";
    assert_eq!(
        line(&app).as_deref(),
        Some("writing the new test file (0 B of 1.0 GiB)")
    );
    assert!(
        screen(&app, 80, 25).contains(path),
        "{}",
        screen(&app, 80, 25)
    );
    app.update(Msg::LaidOut(384 << 20));
    assert_eq!(
        line(&app).as_deref(),
        Some("writing the new test file (384.0 MiB of 1.0 GiB)")
    );
    assert!(
        screen(&app, 80, 25).contains(path),
        "{}",
        screen(&app, 80, 25)
    );
    snap("file_layout", &app);
    app.update(Msg::LaidOut(1 << 30));
    assert!(
        line(&app).is_some_and(|l| l.starts_with("flushing the new test file to the device")),
        "{:?}",
        line(&app)
    );
}

#[test]
fn a_file_target_takes_the_metadata_test_and_refuses_what_does_not_fit() {
    let mut app = app_with("host-loop-zram", true);
    keys(&mut app, "f");
    app.update(Msg::FileTarget(Ok(file_target(100 << 20))));
    key(&mut app, KeyCode::Enter);
    key(&mut app, KeyCode::Down);
    // A 1 GiB region set by the admin does not fit in 100 MiB: said before anything is
    // created. (The default fits the free space: tests/tui_file_dialog.rs.)
    app.values.params.size = Some(1 << 30);
    assert!(keys(&mut app, "r").is_empty());
    let Some(Overlay::Error(e)) = &app.overlay else {
        panic!("{:?}", app.overlay)
    };
    assert!(e.contains("does not fit in the 100.0 MiB free"), "{e}");
    key(&mut app, KeyCode::Esc);
    // The metadata test runs in a scratch directory on that file system.
    while app.picker_test() != TestName::Metadata {
        key(&mut app, KeyCode::Down);
    }
    let s = screen(&app, 80, 25);
    assert!(s.contains("a scratch directory in /tmp/dtcap/mnt"), "{s}");
    let cmds = keys(&mut app, "r");
    let [Cmd::StartRun(req)] = cmds.as_slice() else {
        panic!("{cmds:?}")
    };
    assert_eq!(req.target.to_str(), Some("/tmp/dtcap/mnt"));
    // Choosing a device on Devices tests the device again.
    app.update(Msg::RunRefused("x".into()));
    key(&mut app, KeyCode::Esc);
    keys(&mut app, "1");
    key(&mut app, KeyCode::Enter);
    assert!(app.file_target.is_none());
}

#[test]
fn a_device_without_a_mounted_file_system_says_so() {
    let mut app = app_with("host-loop-zram", true);
    key(&mut app, KeyCode::Down);
    let name = app.selected_device().unwrap().name.clone();
    assert!(keys(&mut app, "f").is_empty());
    let Some(Overlay::Error(e)) = &app.overlay else {
        panic!("{:?}", app.overlay)
    };
    assert!(
        e.contains(&format!("{name} has no mounted file system")),
        "{e}"
    );
}

#[test]
fn a_metadata_run_shows_files_per_second_live_and_in_results() {
    use disktriage::bench::exec::run_input::RunEvent;
    use disktriage::bench::results::stats::{DirPoint, IntervalPoint};
    let mut app = app_with("host-loop-zram", true);
    keys(&mut app, "f");
    app.update(Msg::FileTarget(Ok(file_target(3 << 30))));
    key(&mut app, KeyCode::Enter);
    app.picker_test = disktriage::app::picker::index_of(TestName::Metadata);
    let cmds = keys(&mut app, "r");
    assert!(matches!(cmds.as_slice(), [Cmd::StartRun(_)]), "{cmds:?}");
    // The report's figures: files/s per phase, no bytes.
    let mut report = report_phases(TestName::Metadata, "loop0p1", "none", |_| (1.0, 0.05));
    report.target.path = "/tmp/dtcap/mnt".into();
    report.target.kind = disktriage::bench::results::outcome::TargetClass::Directory;
    for (i, p) in report.outcome.phases.iter_mut().enumerate() {
        let rate = [21_000.0, 250_000.0, 90_000.0, 4_000.0, 600_000.0, 150_000.0][i];
        for d in [&mut p.read, &mut p.write] {
            if d.ops > 0 {
                d.bytes = 0;
                d.bytes_per_sec = 0.0;
                d.iops = rate;
                d.ops = 16384;
            }
        }
        p.seconds = 16384.0 / rate;
        p.rate_seconds = p.seconds;
        p.engine_choice.reason = "one create system call at a time".into();
        p.engine_choice.probe = None;
    }
    app.update(Msg::RunStarted {
        target: Box::new(report.target.clone()),
        plan: Box::new(report.plan.clone()),
        notes: vec![],
    });
    let phase = &report.plan.phases[3];
    app.update(Msg::Run(Box::new(RunEvent::PhaseStarted {
        index: 3,
        count: 6,
        label: phase.label.clone(),
        job: Box::new(phase.job.clone()),
        probing: false,
    })));
    tick(&mut app, 1.0);
    app.update(Msg::Run(Box::new(RunEvent::Measuring {
        index: 3,
        engine: Box::new(report.outcome.phases[3].engine_choice.clone()),
    })));
    for i in 0..8u64 {
        app.update(Msg::Run(Box::new(RunEvent::Point {
            index: 3,
            point: IntervalPoint {
                start_s: i as f64 * 0.25,
                end_s: (i + 1) as f64 * 0.25,
                read: DirPoint::default(),
                write: DirPoint {
                    bytes: 0,
                    ops: 1000 + i * 10,
                    latency: None,
                },
                busy_s: None,
            },
        })));
    }
    tick(&mut app, 3.0);
    let s = screen(&app, 80, 25);
    assert!(s.contains("create random"), "{s}");
    assert!(
        s.contains("16384 files, one system call at a time: files/s is the IOPS chart"),
        "{s}"
    );
    snap("metadata_running", &app);
    app.update(Msg::RunFinished(Box::new(Ok(report))));
    keys(&mut app, "4");
    let s = screen(&app, 80, 25);
    assert!(s.contains("files/s"), "{s}");
    assert!(s.contains("create random"), "{s}");
    assert!(s.contains("create random           4000"), "{s}");
    snap("metadata_results", &app);
}

#[test]
fn a_figure_faster_than_the_link_is_flagged() {
    use disktriage::bench::results::guards::{faster_than_link, sata_ceiling, usb_ceiling};
    let mut r = report(TestName::SeqRead, "sda", "none", 812.0, 1.0);
    assert!(
        faster_than_link(&r).is_empty(),
        "no link known, nothing said"
    );
    r.target.link_ceiling = sata_ceiling("6.0 Gbps");
    assert_eq!(
        faster_than_link(&r),
        [
            "faster than the link: a cache answered (seq-read at 812.0 MB/s, above the SATA 6.0 \
          Gbps link's 600.0 MB/s)"
        ]
    );
    r.target.link_ceiling = usb_ceiling("10000");
    assert!(faster_than_link(&r).is_empty(), "812 MB/s fits USB 10 Gbps");
}

#[test]
fn results_say_when_a_figure_is_faster_than_the_link() {
    use disktriage::bench::results::guards::{faster_than_link, sata_ceiling};
    let mut app = app_with("host-loop-zram", true);
    let mut r = report(TestName::SeqRead, "loop0", "none", 812.0, 1.0);
    r.target.link_ceiling = sata_ceiling("6.0 Gbps");
    let notes = faster_than_link(&r);
    r.notes.extend(notes);
    finish_with(&mut app, TestName::SeqRead, false, &r);
    keys(&mut app, "4");
    for (w, h) in SIZES {
        let s = screen(&app, w, h);
        assert!(s.contains("faster than the link: a cache answered"), "{s}");
    }
    snap("results_faster_than_link", &app);
}

/// A run of an earlier session on loop0's image, as the history gives it back: rand-read at
/// `mbps` under `sched`, three repeats.
fn past_run(mbps: f64, sched: &str) -> disktriage::history::HistoryEntry {
    let mut runs: Vec<_> = [0.98, 1.0, 1.02]
        .iter()
        .map(|k| report(TestName::RandRead, "loop0", sched, mbps * k, 0.070))
        .collect();
    for r in &mut runs {
        r.started_unix = 1_795_000_000;
    }
    disktriage::history::HistoryEntry::of_runs(
        disktriage::model::DiskIdentity::LoopImage("/tmp/dtcap/a.img".into()),
        &runs,
        Some("n/a".into()),
    )
    .unwrap()
}

#[test]
fn a_finished_test_goes_to_the_history_and_past_runs_come_back_to_compare() {
    let mut app = app_with("host-loop-zram", true);
    app.values.repeats = 3;
    complete_run(&mut app, "none", 512.0, 0.060); // loop0, this session
    let past = past_run(430.0, "mq-deadline");
    let cmds = app.update(Msg::PastRuns(vec![past.clone()]));
    assert!(cmds.is_empty(), "{cmds:?}");
    // The same entry again (a second run of the session) is not shown twice.
    app.update(Msg::PastRuns(vec![past.clone()]));
    assert_eq!(app.results.records.len(), 2);
    keys(&mut app, "4");
    let rec = &app.results.records[1];
    assert_eq!(rec.repeats_done(), 3);
    assert!(rec.has_results() && rec.runs.is_empty());
    // The past run's figures are the ones recorded: the mean of its repeats, with its noise.
    let row = rec.row().unwrap();
    assert!((row.mbps.unwrap() - 430.0).abs() < 0.01, "{row:?}");
    assert!(row.noise_pct.unwrap() > 3.9, "{row:?}");
    key(&mut app, KeyCode::Down);
    let s = screen(&app, 80, 25);
    assert!(s.contains("h1"), "{s}");
    assert!(s.contains("past run of 2026-11-18 11:06 UTC"), "{s}");
    snap("results_with_a_past_run", &app);

    // Compare the past run (A) with this session's (B): before and after the cable.
    keys(&mut app, " ");
    key(&mut app, KeyCode::Up);
    keys(&mut app, " ");
    keys(&mut app, "c");
    assert_eq!(app.screen, Screen::Compare);
    let s = screen(&app, 80, 25);
    assert!(s.contains("A #h1"), "{s}");
    assert!(s.contains("scheduler mq-deadline -> none"), "{s}");
    // Beyond the past run's noise (4 %): better, across sessions.
    assert!(s.contains("+19.1%") && s.contains("better"), "{s}");
    snap("compare_with_a_past_run", &app);

    // A past run is not rerun (its parameters are not all kept) nor exported again.
    keys(&mut app, "4");
    key(&mut app, KeyCode::Down);
    let cmds = keys(&mut app, "r");
    assert!(cmds.is_empty(), "{cmds:?}");
    assert!(
        matches!(&app.overlay, Some(Overlay::Error(e)) if e.contains("cannot be rerun")),
        "{:?}",
        app.overlay
    );
    app.overlay = None;
    keys(&mut app, "e");
    assert!(
        matches!(&app.overlay, Some(Overlay::Error(e)) if e.contains("disktriage history")),
        "{:?}",
        app.overlay
    );
    app.overlay = None;
    // Enter shows what the history kept.
    key(&mut app, KeyCode::Enter);
    let s = screen(&app, 132, 43);
    assert!(s.contains("past run of 2026-11-18 11:06 UTC"), "{s}");
    assert!(s.contains("scheduler mq-deadline; drive cache n/a"), "{s}");
    assert!(s.contains("Report of run #h1"), "{s}");
    // R still retests this session's run, not the past one.
    app.overlay = None;
    let cmds = keys(&mut app, "R");
    let [Cmd::StartRun(req)] = cmds.as_slice() else {
        panic!("{cmds:?}")
    };
    assert_eq!(req.target.to_str(), Some("/dev/loop0"));
    // Nothing unsaved about a past run: q does not ask to export it.
    assert_eq!(app.unsaved().collect::<Vec<_>>(), vec![0]);
    // The session's next run is #2: the history row took no run number.
    for _ in 0..3 {
        feed(&mut app, TestName::RandRead, "loop0", "none", 40, 520.0);
        app.update(Msg::RunFinished(Box::new(Ok(report(
            TestName::RandRead,
            "loop0",
            "none",
            520.0,
            0.060,
        )))));
    }
    let s = screen(&app, 80, 25);
    assert!(s.contains("#2 rand-read on loop0"), "{s}");
    assert!(s.contains("run #2 finished"), "{s}");
}

/// Yesterday, 2026-11-18 11:06 UTC, in seconds since the epoch.
const YESTERDAY: u64 = 1_795_000_000;

/// A run of an earlier session as the history keeps it: `test` on `device`, whose loop image
/// is `image`, at `mbps` under `sched`, three repeats started at `unix`.
fn recorded_run(
    test: TestName,
    device: &str,
    image: &str,
    sched: &str,
    mbps: f64,
    unix: u64,
) -> disktriage::history::HistoryEntry {
    let mut runs: Vec<_> = [0.98, 1.0, 1.02]
        .iter()
        .map(|k| report(test, device, sched, mbps * k, 0.070))
        .collect();
    for r in &mut runs {
        r.started_unix = unix;
    }
    disktriage::history::HistoryEntry::of_runs(
        disktriage::model::DiskIdentity::LoopImage(image.into()),
        &runs,
        Some("n/a".into()),
    )
    .unwrap()
}

/// Runs `test` on the selected device from the Test screen, finishes it with `report`, and
/// does what the loop does with the finished test: hands it to `history` (a real one in a
/// temporary directory), says which disk it was on, and gives back the disk's runs of other
/// sessions (as many as the TUI keeps).
fn run_into_history(
    app: &mut App,
    history: &disktriage::history::History,
    mine: &mut std::collections::HashSet<String>,
    test: TestName,
    image: &str,
    report: &disktriage::bench::results::outcome::RunReport,
) {
    keys(app, "2");
    app.picker_test = disktriage::app::picker::index_of(test);
    let cmds = keys(app, "r");
    assert!(matches!(cmds.as_slice(), [Cmd::StartRun(_)]), "{cmds:?}");
    app.update(Msg::RunStarted {
        target: Box::new(report.target.clone()),
        plan: Box::new(report.plan.clone()),
        notes: vec![],
    });
    let cmds = app.update(Msg::RunFinished(Box::new(Ok(report.clone()))));
    let (record, runs, drive_cache) = cmds
        .into_iter()
        .find_map(|c| match c {
            Cmd::RecordHistory {
                record,
                runs,
                drive_cache,
            } => Some((record, runs, drive_cache)),
            _ => None,
        })
        .expect("the finished test goes to the history");
    let disk = disktriage::model::DiskIdentity::LoopImage(image.into());
    let recalled = history.record_and_recall(disk.clone(), &runs, drive_cache, mine, 8);
    mine.extend(recalled.recorded.clone());
    app.update(Msg::RecordDisk { record, disk });
    app.update(Msg::PastRuns(recalled.past));
}

#[test]
fn results_offer_the_earlier_runs_of_the_same_test_on_the_same_disk_and_b_compares() {
    // The history of earlier sessions: seq-read on loop0 (a.img) two days ago and yesterday
    // under mq-deadline; rand-read on loop0 after that; seq-read on loop1 (b.img) later still.
    let dir = tempfile::tempdir().unwrap();
    let history = disktriage::history::History::new(dir.path());
    let (a, b) = ("/tmp/dtcap/a.img", "/tmp/dtcap/b.img");
    let day = 86_400;
    for e in [
        recorded_run(
            TestName::SeqRead,
            "loop0",
            a,
            "mq-deadline",
            400.0,
            YESTERDAY - day,
        ),
        recorded_run(
            TestName::SeqRead,
            "loop0",
            a,
            "mq-deadline",
            430.0,
            YESTERDAY,
        ),
        recorded_run(
            TestName::RandRead,
            "loop0",
            a,
            "none",
            90.0,
            YESTERDAY + 3_600,
        ),
        recorded_run(
            TestName::SeqRead,
            "loop1",
            b,
            "none",
            700.0,
            YESTERDAY + 7_200,
        ),
    ] {
        history.append(&e).unwrap();
    }
    let mut mine = std::collections::HashSet::new();
    let mut app = app_with("host-loop-zram", true);
    // Today: seq-read on loop1 (#1), then on loop0 with the scheduler switched to none (#2).
    key(&mut app, KeyCode::Down);
    assert_eq!(app.selected_device().unwrap().name, "loop1");
    let mut today = report(TestName::SeqRead, "loop1", "none", 690.0, 0.060);
    today.started_unix = YESTERDAY + day;
    run_into_history(&mut app, &history, &mut mine, TestName::SeqRead, b, &today);
    keys(&mut app, "1");
    key(&mut app, KeyCode::Up);
    assert_eq!(app.selected_device().unwrap().name, "loop0");
    let mut today = report(TestName::SeqRead, "loop0", "none", 512.0, 0.060);
    today.started_unix = YESTERDAY + day + 600;
    run_into_history(&mut app, &history, &mut mine, TestName::SeqRead, a, &today);
    // The Run screen says that this run has a before, and which key compares the two.
    let s = screen(&app, 80, 25);
    assert!(
        s.contains("3 past run(s) of this disk in Results (h#): b there compares #2 with #h3"),
        "{s}"
    );

    // Results shows run #2; of all the runs, it offers the two earlier seq-reads on loop0,
    // yesterday's first, and not seq-read on loop1 (today's #1, or the history's) nor the
    // history's rand-read on loop0.
    keys(&mut app, "4");
    let numbers: Vec<String> = app.results.records.iter().map(|r| r.number()).collect();
    assert_eq!(numbers, ["1", "h1", "2", "h2", "h3", "h4"], "{numbers:?}");
    assert_eq!(app.results.selected().unwrap().number(), "2");
    let s = screen(&app, 80, 25);
    assert!(
        s.contains("earlier seq-read on this disk, newest first"),
        "{s}"
    );
    let line_of = |number: &str, when: &str| {
        s.lines()
            .position(|l| l.contains(number) && l.contains(when))
            .unwrap_or_else(|| panic!("{number} of {when} offered: {s}"))
    };
    let yesterday = line_of(
        "#h3 ",
        "2026-11-18 11:06 UTC  sched mq-deadline  430.0 MB/s",
    );
    let before = line_of(
        "#h2 ",
        "2026-11-17 11:06 UTC  sched mq-deadline  400.0 MB/s",
    );
    assert!(yesterday < before, "newest first: {s}");
    assert!(s.contains("b before"), "the footer offers the key: {s}");
    snap("results_offer_earlier_runs", &app);

    // One key: yesterday's run (A, from the history) against today's (B).
    keys(&mut app, "b");
    assert_eq!(app.screen, Screen::Compare);
    let s = screen(&app, 80, 25);
    assert!(s.contains("A #h3 loop0 seq-read, sched mq-deadline"), "{s}");
    assert!(s.contains("B #2 loop0 seq-read, sched none"), "{s}");
    assert!(s.contains("changed: scheduler mq-deadline -> none"), "{s}");
    // The figures compared are the ones the history stored, and this run's as recorded.
    let stored = history.load().unwrap();
    let mean = |test: &str, disk: &str, unix: u64| {
        let e = stored
            .entries
            .iter()
            .find(|e| e.test == test && e.disk.value() == disk && e.started_unix == unix)
            .unwrap();
        disktriage::report::table::rate(e.figures[0].mbps.mean)
    };
    let (was, now) = (
        mean("seq-read", a, YESTERDAY),
        mean("seq-read", a, YESTERDAY + day + 600),
    );
    assert!(
        s.lines()
            .any(|l| l.contains("MB/s") && l.contains(&was) && l.contains(&now)),
        "MB/s {was} -> {now}: {s}"
    );
    snap("compare_before_after_across_sessions", &app);

    // The oldest rand-read has nothing earlier: no key offered, and b says so.
    keys(&mut app, "4");
    while app.results.selected().unwrap().number() != "h4" {
        key(&mut app, KeyCode::Down);
    }
    let s = screen(&app, 80, 25);
    assert!(!s.contains("b before"), "{s}");
    assert!(!s.contains("earlier rand-read"), "{s}");
    keys(&mut app, "b");
    assert_eq!(app.screen, Screen::Results);
    let s = screen(&app, 80, 25);
    assert!(
        s.contains("no earlier rand-read on loop0 in this session or the history"),
        "{s}"
    );
}

#[test]
fn the_drive_cache_has_one_spelling_and_compare_lists_only_real_changes() {
    // A TUI run on a loop device (whose drive state the TUI never reads: it has no drive
    // cache) against the same test run from the CLI, which recorded "n/a", and against an
    // older record that wrote the unknown cache as "-". Nothing changed but the scheduler.
    let mut app = app_with("host-loop-zram", true);
    complete_run(&mut app, "mq-deadline", 512.0, 0.060);
    assert_eq!(app.results.records[0].drive_cache.as_deref(), Some("n/a"));
    let cli = past_run(500.0, "none");
    let mut older = past_run(505.0, "none");
    older.id = "older".into();
    let mut json = serde_json::to_value(&older).unwrap();
    json["settings"]["drive_cache"] = "-".into();
    let older: disktriage::history::HistoryEntry = serde_json::from_value(json).unwrap();
    assert_eq!(older.settings.drive_cache, None);
    assert_eq!(app.results.add_past(vec![cli, older]), 2);
    for past in [1, 2] {
        app.results.marks = vec![past, 0];
        keys(&mut app, "4");
        keys(&mut app, "c");
        let s = screen(&app, 80, 25);
        assert!(s.contains("scheduler none -> mq-deadline"), "{s}");
        assert!(!s.contains("drive cache"), "{s}");
        assert!(s.contains("cache n/a/"), "{s}");
    }
}

#[test]
fn a_test_that_is_over_is_handed_to_the_history_once() {
    let mut app = app_with("host-loop-zram", true);
    keys(&mut app, "2");
    app.picker_test = disktriage::app::picker::index_of(TestName::RandRead);
    keys(&mut app, "r");
    let rep = report(TestName::RandRead, "loop0", "none", 500.0, 0.05);
    app.update(Msg::RunStarted {
        target: Box::new(rep.target.clone()),
        plan: Box::new(rep.plan.clone()),
        notes: vec![],
    });
    let cmds = app.update(Msg::RunFinished(Box::new(Ok(rep.clone()))));
    let recorded: Vec<_> = cmds
        .iter()
        .filter_map(|c| match c {
            Cmd::RecordHistory { runs, .. } => Some(runs.len()),
            _ => None,
        })
        .collect();
    assert_eq!(recorded, [1], "{cmds:?}");
    app.update(Msg::HistoryNote(
        "the run was not added to the history: cannot create /var/lib/disktriage".into(),
    ));
    let s = screen(&app, 132, 43);
    assert!(s.contains("history: the run was not added"), "{s}");
}

#[test]
fn p_after_a_switch_shows_the_udev_rule_before_writing_it() {
    use disktriage::persist::{PersistOptions, persist_scheduler};
    let mut app = app_with("qemu-lab", true);
    keys(&mut app, "1");
    while app.selected_device().unwrap().name != "sda" {
        key(&mut app, KeyCode::Down);
    }
    keys(&mut app, "s");
    key(&mut app, KeyCode::Enter);
    app.update(Msg::SchedulerSet {
        device: "sda".into(),
        result: Ok("none".into()),
    });
    let cmds = keys(&mut app, "P");
    assert_eq!(
        cmds,
        [Cmd::PlanPersist {
            device: "sda".into(),
            scheduler: "none".into(),
            class: false,
            chosen: None,
        }]
    );
    // What the loop answers: the plan for the lab's SATA disk, by its t10 id (nothing
    // written: a dry run against this machine's /).
    let lab = SysRoot::new(fixture("qemu-lab"));
    let plan = |device: &str, class: bool| {
        persist_scheduler(
            &lab,
            device,
            "none",
            &PersistOptions {
                target_root: "/".into(),
                class,
                dry_run: true,
            },
        )
        .map(Box::new)
        .map_err(Into::into)
    };
    app.update(Msg::PersistPlanned {
        device: "sda".into(),
        scheduler: "none".into(),
        class: false,
        result: plan("sda", false),
    });
    let s = screen(&app, 132, 43);
    assert!(
        s.contains("/etc/udev/rules.d/60-disktriage-scheduler-wwid-"),
        "{s}"
    );
    // The t10 id's runs of spaces are shown as written.
    assert!(s.contains("ATTRS{wwid}==\"t10.ATA     DT SATA DISK"), "{s}");
    assert!(s.contains("unchanged"), "{s}");
    snap("persist_rule", &app);
    let cmds = keys(&mut app, "y");
    let [Cmd::WritePersist(rule)] = cmds.as_slice() else {
        panic!("{cmds:?}")
    };
    assert_eq!(rule.device, "sda");
    app.update(Msg::Persisted(Ok(
        "/etc/udev/rules.d/60-disktriage-scheduler-wwid-x.rules".into(),
    )));
    let s = screen(&app, 132, 43);
    assert!(s.contains("udev rule written"), "{s}");
    assert!(
        s.contains("/etc/udev/rules.d/60-disktriage-scheduler-wwid-x.rules"),
        "{s}"
    );
    key(&mut app, KeyCode::Esc);

    // The SCSI disk has no identity a rule can match: the reason, and the class rule offered.
    app.update(Msg::PersistPlanned {
        device: "sdb".into(),
        scheduler: "none".into(),
        class: false,
        result: plan("sdb", false),
    });
    let s = screen(&app, 80, 25);
    assert!(s.contains("no stable identity"), "{s}");
    snap("persist_refused", &app);
    let cmds = keys(&mut app, "a");
    assert_eq!(
        cmds,
        [Cmd::PlanPersist {
            device: "sdb".into(),
            scheduler: "none".into(),
            class: true,
            chosen: None,
        }]
    );
    app.update(Msg::PersistPlanned {
        device: "sdb".into(),
        scheduler: "none".into(),
        class: true,
        result: plan("sdb", true),
    });
    let s = screen(&app, 132, 43);
    assert!(s.contains("every rotational disk"), "{s}");
    assert!(
        s.contains("60-disktriage-scheduler-rotational.rules"),
        "{s}"
    );
    // Esc writes nothing.
    let cmds = key(&mut app, KeyCode::Esc);
    assert!(cmds.is_empty(), "{cmds:?}");
    assert!(app.overlay.is_none());
}

/// Answers a sweep's commands as the loop would, until none are left: a switch is reported
/// done as asked, a run is fed and finished at `mbps(value, repeat)` MB/s (p99
/// `p99(value)` ms). `at_run(app, n)` looks at the app while run `n` (from 0) is live.
/// Returns every command the app gave.
fn drive_sweep(
    app: &mut App,
    first: Vec<Cmd>,
    test: TestName,
    mbps: impl Fn(&str, u32) -> f64,
    p99: impl Fn(&str) -> f64,
    mut at_run: impl FnMut(&App, usize),
) -> Vec<Cmd> {
    use disktriage::changes::{CacheChange, JournalNote};
    use disktriage::model::DriveCache;
    let mut queue: std::collections::VecDeque<Cmd> = first.into();
    let mut seen = Vec::new();
    let mut runs = 0;
    while let Some(cmd) = queue.pop_front() {
        seen.push(cmd.clone());
        let more = match cmd {
            Cmd::StartRun(req) => {
                let sw = app.sweep.as_ref().unwrap();
                let step = sw.steps[sw.at];
                let value = sw.settings[step.setting].clone();
                let device = sw.device.clone();
                // The scheduler a run reports is the device's; a cache sweep keeps it.
                let sched = match sw.kind {
                    disktriage::bench::analysis::setting_sweep::SweepKind::Scheduler => {
                        value.clone()
                    }
                    disktriage::bench::analysis::setting_sweep::SweepKind::WriteCache => {
                        "mq-deadline".into()
                    }
                };
                let m = mbps(&value, step.repeat);
                feed(app, req.test, &device, &sched, 8, m);
                at_run(app, runs);
                runs += 1;
                app.update(Msg::RunFinished(Box::new(Ok(report(
                    test,
                    &device,
                    &sched,
                    m,
                    p99(&value),
                )))))
            }
            Cmd::ClaimSweep { device, .. } => app.update(Msg::SweepClaimed {
                device,
                result: Ok(()),
            }),
            Cmd::SetScheduler { device, name, .. } => app.update(Msg::SchedulerSet {
                device,
                result: Ok(name),
            }),
            Cmd::SetDriveCache {
                device, enabled, ..
            } => {
                let cache = |on: bool| DriveCache {
                    enabled: Some(on),
                    changeable: true,
                    fixed_reason: None,
                    source: "test".into(),
                };
                app.update(Msg::DriveCacheSet {
                    device: device.clone(),
                    result: Ok(Box::new(CacheChange {
                        device,
                        transport: Transport::Sata,
                        requested: enabled,
                        before: cache(!enabled),
                        after: cache(enabled),
                        kernel_after: None,
                        journal: JournalNote::Unchanged,
                        notes: vec![],
                    })),
                })
            }
            _ => Vec::new(),
        };
        queue.extend(more);
    }
    seen
}

/// The loop's answer to a sweep's first command, the claim of its device: taken. Returns
/// what the app asks next (its first run).
fn claimed(app: &mut App, first: Vec<Cmd>) -> Vec<Cmd> {
    let [Cmd::ClaimSweep { device, what }] = first.as_slice() else {
        panic!("a sweep claims its device first: {first:?}")
    };
    assert!(what.ends_with(&format!("sweep of {device}")), "{what}");
    app.update(Msg::SweepClaimed {
        device: device.clone(),
        result: Ok(()),
    })
}

fn switches(cmds: &[Cmd]) -> Vec<String> {
    cmds.iter()
        .filter_map(|c| match c {
            Cmd::SetScheduler { name, .. } => Some(name.clone()),
            Cmd::SetDriveCache { enabled, .. } => Some(if *enabled { "on" } else { "off" }.into()),
            _ => None,
        })
        .collect()
}

#[test]
fn scheduler_sweep_from_the_test_screen() {
    use disktriage::bench::analysis::setting_sweep::SweepKind;
    use disktriage::report::setting_sweep::{SweepEnd, render_text};
    let mut app = app_with("host-loop-zram", true);
    keys(&mut app, "2");
    app.picker_test = disktriage::app::picker::index_of(TestName::SeqRead);
    let first = keys(&mut app, "S");
    let first = claimed(&mut app, first);
    // The first run is under the scheduler found at start: nothing to switch yet.
    assert!(matches!(first.as_slice(), [Cmd::StartRun(_)]), "{first:?}");
    let sw = app.sweep.as_ref().unwrap();
    assert_eq!(sw.kind, SweepKind::Scheduler);
    assert_eq!(sw.settings, ["none", "mq-deadline", "kyber", "bfq"]);
    assert_eq!(sw.repeats, 3, "3 repeats unless the Test screen sets more");
    let figure = |s: &str, repeat: u32| {
        let base = match s {
            "none" => 500.0,
            "mq-deadline" => 510.0,
            "kyber" => 400.0,
            _ => 600.0,
        };
        base + f64::from(repeat) * 2.0
    };
    let cmds = drive_sweep(
        &mut app,
        first,
        TestName::SeqRead,
        figure,
        |_| 0.5,
        |app, n| {
            if n == 5 {
                let s = screen(app, 80, 25);
                assert!(
                    s.contains("Scheduler sweep, run 6 of 12: mq-deadline, repeat 2 of 3"),
                    "{s}"
                );
                assert!(s.contains("RUNNING"), "{s}");
                snap("sweep_running", app);
                // Nothing else starts or switches while a sweep runs.
                let mut probe = app.clone();
                assert!(keys(&mut probe, "s").is_empty());
                assert!(matches!(probe.overlay, Some(Overlay::Error(_))));
            }
        },
    );
    // Every one of the 12 runs goes to the history, one entry each, as the CLI's sweep does.
    let recorded: Vec<usize> = cmds
        .iter()
        .filter_map(|c| match c {
            Cmd::RecordHistory { runs, .. } => Some(runs.len()),
            _ => None,
        })
        .collect();
    assert_eq!(recorded, vec![1; 12]);
    // Interleaved: each repeat goes through every scheduler; the one at start comes back at
    // the end.
    assert_eq!(
        switches(&cmds),
        [
            "mq-deadline",
            "kyber",
            "bfq",
            "none",
            "mq-deadline",
            "kyber",
            "bfq",
            "none",
            "mq-deadline",
            "kyber",
            "bfq",
            "none"
        ]
    );
    let sw = app.sweep.as_ref().unwrap();
    assert!(!sw.active());
    assert!(!app.running());
    assert_eq!(app.overlay, Some(Overlay::Sweep { scroll: 0 }));
    // Each scheduler's runs are one record in Results, with its three repeats.
    assert_eq!(app.results.records.len(), 4);
    assert!(app.results.records.iter().all(|r| r.runs.len() == 3));
    assert_eq!(app.results.records[3].scheduler.as_deref(), Some("bfq"));

    let result = sw.result();
    assert_eq!(result.tests[0].verdict.winner(), Some("bfq"));
    let s = screen(&app, 80, 25);
    // The CLI's figures, word for word.
    let cli = render_text(&result, &SweepEnd::default(), 80);
    for line in cli.lines().skip(4).take(4) {
        let cells: Vec<&str> = line.split_whitespace().collect();
        let row = s
            .lines()
            .find(|l| l.contains(&format!("│{} ", cells[0])))
            .unwrap_or_else(|| panic!("no row for {line}: {s}"));
        for cell in cells
            .iter()
            .filter(|c| c.chars().any(|ch| ch.is_ascii_digit()))
        {
            assert!(row.contains(cell), "{cell} of {line:?} not in {row:?}");
        }
    }
    assert!(s.contains("winner: bfq, +19.9 % MB/s against none"), "{s}");
    assert!(s.contains("the scheduler of loop0 is back to none"), "{s}");
    assert!(s.contains("█"), "{s}");
    assert!(
        s.lines()
            .any(|l| l.contains("bfq") && l.contains(" winner")),
        "{s}"
    );
    snap("sweep_result", &app);

    // Closed, and shown again from Results.
    keys(&mut app, "q");
    assert_eq!(app.overlay, None);
    keys(&mut app, "4v");
    assert_eq!(app.overlay, Some(Overlay::Sweep { scroll: 0 }));
    // P makes the winner permanent: the rule for bfq on loop0 is planned (and shown before
    // anything is written), not for the scheduler the device has now.
    assert_eq!(
        keys(&mut app, "P"),
        [Cmd::PlanPersist {
            device: "loop0".into(),
            scheduler: "bfq".into(),
            class: false,
            chosen: None,
        }]
    );
}

#[test]
fn sweep_result_on_the_linux_console_uses_only_its_glyphs() {
    let mut app = app_with("host-loop-zram", true);
    app.console = true;
    keys(&mut app, "2");
    let first = keys(&mut app, "S");
    let first = claimed(&mut app, first);
    drive_sweep(
        &mut app,
        first,
        TestName::SeqRead,
        |s, r| if s == "kyber" { 300.0 } else { 500.0 } + f64::from(r),
        |_| 0.5,
        |_, _| {},
    );
    for line in symbols(&app, 80, 25) {
        for ch in line.chars() {
            assert!(
                ch.is_ascii() || ('\u{2500}'..='\u{259f}').contains(&ch),
                "{ch:?} is not on the Linux console: {line}"
            );
        }
    }
    let s = screen(&app, 80, 25);
    assert!(
        s.contains("no scheduler is better beyond the noise than none (the one at start)"),
        "{s}"
    );
}

#[test]
fn write_cache_sweep_confirms_once_and_puts_the_cache_back() {
    let mut app = lab_app_with_drive_states(true);
    while app.selected_device().unwrap().name != "sda" {
        key(&mut app, KeyCode::Down);
    }
    keys(&mut app, "2");
    app.picker_test = disktriage::app::picker::index_of(TestName::SyncLatency);
    assert!(keys(&mut app, "W").is_empty());
    let Some(Overlay::Confirm { sweep, .. }) = &app.overlay else {
        panic!("{:?}", app.overlay)
    };
    assert_eq!(
        *sweep,
        Some(disktriage::bench::analysis::setting_sweep::SweepKind::WriteCache)
    );
    let first = keys(&mut app, "sda");
    assert!(first.is_empty());
    let first = key(&mut app, KeyCode::Enter);
    let first = claimed(&mut app, first);
    let [Cmd::StartRun(req)] = first.as_slice() else {
        panic!("{first:?}")
    };
    assert_eq!(req.confirmation.as_deref(), Some("sda"));
    let cmds = drive_sweep(
        &mut app,
        first.clone(),
        TestName::SyncLatency,
        |_, _| 1.0,
        // The seed's laptop: 0.36 ms a write with the cache, 11.18 ms without.
        |v| if v == "on" { 0.36 * 3.0 } else { 11.18 * 3.0 },
        |_, _| {},
    );
    assert_eq!(switches(&cmds), ["off", "on", "off", "on", "off", "on"]);
    // Every run of the sweep went with the one confirmation.
    assert!(cmds.iter().all(|c| match c {
        Cmd::StartRun(r) => r.confirmation.as_deref() == Some("sda"),
        _ => true,
    }));
    let s = screen(&app, 80, 25);
    assert!(s.contains("WRITE CACHE"), "{s}");
    assert!(s.contains("ms/write"), "{s}");
    assert!(s.contains("11.180"), "{s}");
    assert!(
        s.contains("no write cache state is better beyond the noise than cache on"),
        "{s}"
    );
    assert!(
        s.contains("the write cache of sda is back to cache on"),
        "{s}"
    );
    snap("sweep_cache_result", &app);
    assert_eq!(
        app.changes.cache.len(),
        0,
        "back as found: nothing to restore"
    );
    // A cache state is no scheduler: P says so and plans no rule.
    assert!(keys(&mut app, "P").is_empty());
    assert!(screen(&app, 80, 25).contains("only a scheduler can be made permanent"));
}

#[test]
fn sweeps_are_refused_where_the_setting_cannot_change() {
    let mut app = app_with("host-loop-zram", true);
    keys(&mut app, "2");
    // Loop devices have no drive: their state is never read, and the reason is the CLI's.
    assert!(keys(&mut app, "W").is_empty());
    assert_eq!(
        app.overlay,
        Some(Overlay::Error(
            "cannot sweep the write cache of loop0: not supported on loop".into()
        ))
    );
    app.overlay = None;
    // The same once a state is read, from what the drive says.
    let fake = disktriage::sys::FakeDrives::new()
        .with(disktriage::sys::FakeDevice::new("loop0", Transport::Loop));
    use disktriage::sys::DriveControl;
    let dev = fake.device("loop0").unwrap();
    fake.update("loop0", |d| {
        if let Ok(c) = &mut d.cache {
            c.enabled = None;
        }
    });
    app.update(Msg::DriveStatus {
        device: "loop0".into(),
        cache: Ok(disktriage::drive_state::cache_status(&fake, &dev).unwrap()),
        health: None,
    });
    assert!(keys(&mut app, "W").is_empty());
    assert_eq!(
        app.overlay,
        Some(Overlay::Error(
            "cannot sweep the write cache of loop0: the drive reports no volatile write cache"
                .into()
        ))
    );
    app.overlay = None;
    // The drive state of loop0 as the loop reads it.
    let fake = disktriage::sys::FakeDrives::new()
        .with(disktriage::sys::FakeDevice::new("loop0", Transport::Loop).without_cache_control());
    let dev = fake.device("loop0").unwrap();
    app.update(Msg::DriveStatus {
        device: "loop0".into(),
        cache: Ok(disktriage::drive_state::cache_status(&fake, &dev).unwrap()),
        health: None,
    });
    assert!(keys(&mut app, "W").is_empty());
    assert_eq!(
        app.overlay,
        Some(Overlay::Error(
            "cannot sweep the write cache of loop0: not supported on loop".into()
        ))
    );
    assert!(app.sweep.is_none());
}

#[test]
fn a_stopped_sweep_puts_the_scheduler_back_and_shows_what_completed() {
    let mut app = app_with("host-loop-zram", true);
    keys(&mut app, "2");
    // Every switch of the sweep names loop0 as it was when the sweep started.
    let loop0 = app.devices.inventory.as_ref().unwrap().chosen("loop0");
    let set = |name: &str| Cmd::SetScheduler {
        device: "loop0".into(),
        name: name.into(),
        chosen: loop0.clone(),
    };
    let cmds = keys(&mut app, "S");
    let cmds = claimed(&mut app, cmds);
    assert!(matches!(cmds.as_slice(), [Cmd::StartRun(_)]), "{cmds:?}");
    // Two runs complete (none, then mq-deadline); the third (kyber) is stopped with x.
    for (sched, next) in [("none", "mq-deadline"), ("mq-deadline", "kyber")] {
        feed(&mut app, TestName::SeqRead, "loop0", sched, 8, 500.0);
        let cmds = app.update(Msg::RunFinished(Box::new(Ok(report(
            TestName::SeqRead,
            "loop0",
            sched,
            500.0,
            0.5,
        )))));
        assert!(matches!(cmds[0], Cmd::RecordHistory { .. }), "{cmds:?}");
        assert_eq!(cmds[1..], [set(next)]);
        let cmds = app.update(Msg::SchedulerSet {
            device: "loop0".into(),
            result: Ok(next.into()),
        });
        assert!(
            cmds.iter().any(|c| matches!(c, Cmd::StartRun(_))),
            "{cmds:?}"
        );
    }
    feed(&mut app, TestName::SeqRead, "loop0", "kyber", 4, 500.0);
    assert_eq!(keys(&mut app, "x"), [Cmd::StopRun]);
    // The runner reports the stopped run; the sweep puts the scheduler at start back.
    let mut stopped = report(TestName::SeqRead, "loop0", "kyber", 100.0, 0.5);
    stopped.outcome.stopped = true;
    let cmds = app.update(Msg::RunFinished(Box::new(Ok(stopped))));
    assert_eq!(cmds, [set("none")]);
    assert!(app.sweeping(), "still putting back");
    app.update(Msg::SchedulerSet {
        device: "loop0".into(),
        result: Ok("none".into()),
    });
    assert!(!app.sweeping());
    assert!(app.changes.scheduler.is_empty(), "back as found");
    let s = screen(&app, 80, 25);
    assert!(s.contains("stopped (x), after 2 of 12 runs"), "{s}");
    assert!(s.contains("the scheduler of loop0 is back to none"), "{s}");
    // The stopped run's figures are not counted.
    let r = app.sweep.as_ref().unwrap().result();
    assert_eq!(r.runs_done, 2);
    assert!(r.tests[0].rows[2].figure.is_none());
}

#[test]
fn a_refused_run_or_a_stop_during_a_switch_ends_the_sweep_and_puts_back() {
    // Every switch of the sweep names loop0 as it was when the sweep started.
    let loop0 = app_with("host-loop-zram", true)
        .devices
        .inventory
        .as_ref()
        .unwrap()
        .chosen("loop0");
    let set = |name: &str| Cmd::SetScheduler {
        device: "loop0".into(),
        name: name.into(),
        chosen: loop0.clone(),
    };
    let release = || Cmd::ReleaseSweep {
        device: "loop0".into(),
    };
    // Refused at once (under the scheduler at start): nothing to put back, the view says why.
    let mut app = app_with("host-loop-zram", true);
    keys(&mut app, "2");
    let first = keys(&mut app, "S");
    claimed(&mut app, first);
    let cmds = app.update(Msg::RunRefused("loop0 is busy".into()));
    assert_eq!(cmds, [Cmd::RefreshInventory, release()]);
    assert!(!app.sweeping() && !app.running());
    let s = screen(&app, 80, 25);
    assert!(
        s.contains("ended by an error: loop0 is busy, after 0 of 12"),
        "{s}"
    );

    // x while the loop switches to the second scheduler: no run starts, the first comes back.
    let mut app = app_with("host-loop-zram", true);
    keys(&mut app, "2");
    let first = keys(&mut app, "S");
    claimed(&mut app, first);
    feed(&mut app, TestName::SeqRead, "loop0", "none", 8, 500.0);
    let cmds = app.update(Msg::RunFinished(Box::new(Ok(report(
        TestName::SeqRead,
        "loop0",
        "none",
        500.0,
        0.5,
    )))));
    assert!(matches!(cmds[0], Cmd::RecordHistory { .. }), "{cmds:?}");
    assert_eq!(cmds[1..], [set("mq-deadline")]);
    assert!(app.running(), "between runs, a sweep is still running");
    assert!(keys(&mut app, "x").is_empty());
    let cmds = app.update(Msg::SchedulerSet {
        device: "loop0".into(),
        result: Ok("mq-deadline".into()),
    });
    assert!(cmds.contains(&set("none")), "{cmds:?}");
    assert!(
        !cmds.iter().any(|c| matches!(c, Cmd::StartRun(_))),
        "{cmds:?}"
    );
    app.update(Msg::SchedulerSet {
        device: "loop0".into(),
        result: Ok("none".into()),
    });
    assert!(!app.sweeping());
    let s = screen(&app, 80, 25);
    assert!(s.contains("stopped (x), after 1 of 12 runs"), "{s}");

    // A switch the kernel refuses ends the sweep with its reason.
    let mut app = app_with("host-loop-zram", true);
    keys(&mut app, "2");
    let first = keys(&mut app, "S");
    claimed(&mut app, first);
    feed(&mut app, TestName::SeqRead, "loop0", "none", 8, 500.0);
    app.update(Msg::RunFinished(Box::new(Ok(report(
        TestName::SeqRead,
        "loop0",
        "none",
        500.0,
        0.5,
    )))));
    let cmds = app.update(Msg::SchedulerSet {
        device: "loop0".into(),
        result: Err(disktriage::event::TaskError::Change("EBUSY".into())),
    });
    assert_eq!(
        cmds,
        [Cmd::RefreshInventory, release()],
        "still at none: nothing to put back"
    );
    let s = flat_screen(&app);
    assert!(
        s.contains("ended by an error: cannot switch the scheduler of loop0: EBUSY"),
        "{s}"
    );
}

fn flat_screen(app: &App) -> String {
    screen(app, 132, 43)
        .lines()
        .map(|l| l.trim_matches('"').trim_matches('│').trim())
        .collect::<Vec<_>>()
        .join(" ")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// The lab's SATA disk's logs as the driver assembles them from the captured pages: after
/// a short self-test, with its execution status byte and estimates.
fn sata_logs() -> disktriage::model::DriveLogs {
    use disktriage::model::{DriveLogs, LogRead, Transport};
    use disktriage::smart::{ata, ata_log};
    let data = ata::parse_smart_data(&page("qemu-sata-0-aftertest-ata-smart-data.hex")).unwrap();
    DriveLogs {
        device: "sda".into(),
        transport: Transport::Sata,
        source: "ATA SMART logs".into(),
        error_log: LogRead::Read(
            ata_log::parse_summary_error_log(&page(
                "qemu-sata-0-aftertest-ata-smart-log-error.hex",
            ))
            .unwrap(),
        ),
        self_test_log: LogRead::Read(
            ata_log::parse_self_test_log(&page("qemu-sata-0-aftertest-ata-smart-log-selftest.hex"))
                .unwrap(),
        ),
        self_test: ata_log::self_test_status(&data),
    }
}

/// What the lab's SATA disk answers to `h`: its cache and its SMART health, judged from the
/// captured pages as the driver reads them.
fn sata_status() -> Msg {
    use disktriage::model::{
        AtaSmart, CacheStatus, DriveCache, KernelWriteCache, SmartReading, Transport,
    };
    use disktriage::smart::ata;
    use disktriage::smart::sense::{AtaOutcome, ata_outcome};
    let data = ata::parse_smart_data(&page("qemu-sata-0-ata-smart-data.hex")).unwrap();
    let thresholds =
        ata::parse_smart_thresholds(&page("qemu-sata-0-ata-smart-thresholds.hex")).unwrap();
    let sense = page("qemu-sata-0-ata-smart-status-sense.hex");
    let AtaOutcome::Done(Some(regs)) = ata_outcome(sense[0], &sense[1..]) else {
        panic!("no registers")
    };
    let (status, status_note) = ata::smart_status(regs.lba_mid, regs.lba_high);
    let reading = SmartReading::Ata(AtaSmart {
        smart_supported: true,
        smart_enabled: true,
        status,
        status_note,
        attributes: ata::attribute_table(&data, Some(&thresholds)),
        attribute_problem: None,
    });
    let cache = DriveCache {
        enabled: Some(true),
        changeable: true,
        fixed_reason: None,
        source: "ATA IDENTIFY".into(),
    };
    Msg::DriveStatus {
        device: "sda".into(),
        cache: Ok(CacheStatus::new(
            "sda",
            Transport::Sata,
            Ok(cache),
            Some(KernelWriteCache::WriteBack),
        )),
        health: Some(Ok(Box::new(disktriage::smart::verdict::assess(
            "sda",
            Transport::Sata,
            reading,
        )))),
    }
}

/// The lab's NVMe drive's logs: the captured error log, and no Device Self-test.
fn nvme_logs() -> disktriage::model::DriveLogs {
    use disktriage::model::{DriveLogs, LogRead, SelfTestStatus, Transport};
    use disktriage::smart::nvme_log;
    let why = "not supported by this drive (Identify Controller: OACS bit 4, Device \
               Self-test, is clear)";
    DriveLogs {
        device: "nvme0n1".into(),
        transport: Transport::Nvme,
        source: "NVMe log pages".into(),
        error_log: LogRead::Read(
            nvme_log::parse_error_log(&page("qemu-nvme-warn-nvme-error-log.hex")).unwrap(),
        ),
        self_test_log: LogRead::NotSupported { reason: why.into() },
        self_test: SelfTestStatus::unsupported(why),
    }
}

#[test]
fn health_view_shows_smart_the_logs_and_runs_a_self_test() {
    use disktriage::model::{SelfTestKind, SelfTestProgress};
    let mut app = lab_app_with_drive_states(true);
    // sda is the fourth visible device.
    for _ in 0..3 {
        key(&mut app, KeyCode::Down);
    }
    let cmds = keys(&mut app, "h");
    assert_eq!(
        cmds,
        [Cmd::ReadDriveStatus {
            device: "sda".into(),
            health: true
        }]
    );
    assert_eq!(app.screen, Screen::Health);
    app.update(sata_status());
    app.update(Msg::DriveLogs {
        device: "sda".into(),
        result: Ok(Box::new(sata_logs())),
    });
    let s = screen(&app, 80, 25);
    assert!(s.contains("Health of sda"), "{s}");
    assert!(
        s.contains("Self-test: none running; the last one: completed without error"),
        "{s}"
    );
    assert!(
        s.contains("t short (about 2 min)  T long (about 54 min)"),
        "{s}"
    );
    let big = screen(&app, 132, 43);
    assert!(
        big.contains("Error log: 0 error(s) over the drive's life"),
        "{big}"
    );
    assert!(big.contains("SMART PASSED (from ATA SMART)"), "{big}");
    assert!(
        big.contains("1 short completed without error  4660"),
        "{big}"
    );
    snap("health_sata", &app);

    // The long test asks first and says what it costs.
    keys(&mut app, "T");
    let s = screen(&app, 80, 25);
    assert!(s.contains("about 54 min"), "{s}");
    assert!(s.contains("changes no data"), "{s}");
    snap("health_long_test_confirm", &app);
    let cmds = keys(&mut app, "y");
    assert_eq!(
        cmds,
        [Cmd::StartSelfTest {
            device: "sda".into(),
            kind: SelfTestKind::Long,
            chosen: None,
        }]
    );
    let cmds = app.update(Msg::SelfTestStarted {
        device: "sda".into(),
        kind: SelfTestKind::Long,
        result: Ok(()),
    });
    assert_eq!(
        cmds,
        [Cmd::PollSelfTest {
            device: "sda".into()
        }]
    );
    let mut running = sata_logs().self_test;
    running.last = None;
    running.running = Some(SelfTestProgress {
        kind: None,
        percent_done: 40,
    });
    app.update(Msg::SelfTestStatus {
        device: "sda".into(),
        result: Ok(running),
    });
    let s = screen(&app, 80, 25);
    assert!(s.contains("long self-test 40% done"), "{s}");
    snap("health_self_test_running", &app);
}

#[test]
fn health_view_of_a_drive_without_self_tests() {
    let mut app = lab_app_with_drive_states(true);
    key(&mut app, KeyCode::Down);
    key(&mut app, KeyCode::Down);
    keys(&mut app, "h");
    app.update(Msg::DriveLogs {
        device: "nvme0n1".into(),
        result: Ok(Box::new(nvme_logs())),
    });
    let s = screen(&app, 80, 25);
    assert!(s.contains("Self-test: not supported by this drive"), "{s}");
    // t says why instead of asking.
    assert!(keys(&mut app, "t").is_empty());
    assert!(app.overlay.is_none());
    let s = screen(&app, 80, 25);
    assert!(
        s.contains("nvme0n1: cannot start a self-test: not supported by this drive"),
        "{s}"
    );
    snap("health_nvme_no_self_test", &app);
    // Esc goes back to the list.
    key(&mut app, KeyCode::Esc);
    assert_eq!(app.screen, Screen::Devices);
}

/// The Run screen says what a phase does before it measures: probing the engines (counted
/// in the ETA), warming up, or nothing at all when there is no warm-up.
#[test]
fn the_run_screen_says_it_probes_and_counts_the_probe_in_the_eta() {
    use disktriage::bench::exec::run_input::RunEvent;
    use std::time::Duration;
    let mut app = app_with("host-loop-zram", true);
    pick_rand_read(&mut app);
    keys(&mut app, "r");
    let mut plan = plan(TestName::RandRead);
    plan.phases[0].job.time = Some(Duration::from_secs(2));
    plan.phases[0].job.warmup = Duration::from_millis(200);
    app.update(Msg::RunStarted {
        target: Box::new(target("loop0", "none")),
        plan: Box::new(plan.clone()),
        notes: vec![],
    });
    app.update(Msg::Run(Box::new(RunEvent::Probes { phases: vec![true] })));
    app.update(Msg::Run(Box::new(RunEvent::PhaseStarted {
        index: 0,
        count: 1,
        label: "rand-read".into(),
        job: Box::new(plan.phases[0].job.clone()),
        probing: true,
    })));
    let s = screen(&app, 80, 25);
    assert!(s.contains("probing engines"), "{s}");
    assert!(!s.contains("warming up"), "{s}");
    // 2 s measured after the probe (0.6 s), which outlasts the 0.2 s warm-up: 2.6 s.
    assert!(s.contains("/ 2.6 s"), "{s}");
    assert!(s.contains("ETA 3 s"), "{s}");
    app.update(Msg::Run(Box::new(RunEvent::Probed { index: 0 })));
    let s = screen(&app, 80, 25);
    assert!(s.contains("warming up"), "{s}");
    assert!(!s.contains("probing"), "{s}");

    // No warm-up: nothing is done before the measurement, and nothing says "warming up".
    let mut plan = plan.clone();
    plan.phases[0].job.warmup = Duration::ZERO;
    app.update(Msg::Run(Box::new(RunEvent::Probes {
        phases: vec![false],
    })));
    app.update(Msg::Run(Box::new(RunEvent::PhaseStarted {
        index: 0,
        count: 1,
        label: "rand-read".into(),
        job: Box::new(plan.phases[0].job.clone()),
        probing: false,
    })));
    let s = screen(&app, 80, 25);
    assert!(!s.contains("warming up") && !s.contains("probing"), "{s}");
    assert!(s.contains("/ 2.0 s"), "{s}");
}

#[test]
fn a_sweep_of_a_device_another_disktriage_holds_is_refused_before_anything() {
    let mut app = app_with("host-loop-zram", true);
    keys(&mut app, "2");
    let first = keys(&mut app, "S");
    assert_eq!(
        first,
        [Cmd::ClaimSweep {
            device: "loop0".into(),
            what: "scheduler sweep of loop0".into(),
        }]
    );
    assert!(app.sweeping(), "waiting for the claim");
    let held = "loop0's settings are held by another disktriage (pid 4242: scheduler sweep of \
                loop0), which puts them back when it ends: wait for it to end or stop it, then \
                try again. Nothing was changed";
    let cmds = app.update(Msg::SweepClaimed {
        device: "loop0".into(),
        result: Err(disktriage::event::TaskError::Change(held.into())),
    });
    // Nothing runs, nothing is switched, nothing to release.
    assert!(cmds.is_empty(), "{cmds:?}");
    assert!(!app.sweeping() && !app.running());
    let Some(Overlay::Error(e)) = &app.overlay else {
        panic!("{:?}", app.overlay)
    };
    assert!(
        e.contains("cannot sweep loop0: loop0's settings are held by"),
        "{e}"
    );
    assert!(e.contains("pid 4242"), "{e}");
    // Once the other one is done, S sweeps, and the end of the sweep releases the claim.
    keys(&mut app, "q");
    let first = keys(&mut app, "S");
    let first = claimed(&mut app, first);
    let cmds = drive_sweep(
        &mut app,
        first,
        TestName::SeqRead,
        |_, _| 500.0,
        |_| 0.5,
        |_, _| {},
    );
    let releases: Vec<&Cmd> = cmds
        .iter()
        .filter(|c| matches!(c, Cmd::ReleaseSweep { .. }))
        .collect();
    assert_eq!(
        releases,
        [&Cmd::ReleaseSweep {
            device: "loop0".into()
        }]
    );
    assert!(
        matches!(cmds.last(), Some(Cmd::ReleaseSweep { .. })),
        "after the scheduler is back: {cmds:?}"
    );
}

/// Collapses a screen's rows into one text (borders and padding out), so a line that wraps
/// reads as one.
fn flowing(screen: &str) -> String {
    screen
        .lines()
        .map(|l| {
            l.trim_matches('"')
                .trim_matches(|c| c == '│' || c == '┌' || c == '└' || c == ' ')
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Draws at 80x25 and fails on any cut, naming it.
fn assert_nothing_cut(app: &App) -> String {
    let (t, cuts) = draw_checked(app, 80, 25);
    assert!(cuts.is_empty(), "{cuts:#?}\n{}", t.backend());
    flowing(&t.backend().to_string())
}

#[test]
fn a_qd_sweep_still_rising_keeps_its_queue_depth_in_the_legend_at_80_columns() {
    let mut app = app_with("host-loop-zram", true);
    let phases = plan(TestName::QdSweep).phases;
    // IOPS that grow with every depth: the legend says where it still rises.
    let sweep = report_phases(TestName::QdSweep, "loop0", "none", |i| {
        match phases[i].tag {
            disktriage::bench::plan::PhaseTag::QdSweep { small: true, qd } => {
                (f64::from(qd) * 20.0, 0.1)
            }
            disktriage::bench::plan::PhaseTag::QdSweep { qd, .. } => (f64::from(qd) * 90.0, 0.9),
            _ => (100.0, 0.1),
        }
    });
    finish_with(&mut app, TestName::QdSweep, false, &sweep);
    keys(&mut app, "4");
    assert_nothing_cut(&app);
    let s = screen(&app, 80, 25);
    assert!(
        s.contains("S IOPS rising at QD 32") && s.contains("L MB/s rising at QD 32"),
        "{s}"
    );
    // Where the panel has room, the whole words.
    let s = screen(&app, 132, 43);
    assert!(s.contains("S IOPS still rising at QD 32"), "{s}");
}

#[test]
fn results_give_the_engine_of_every_phase_whole_at_80_columns() {
    use disktriage::bench::plan::params::EngineKind;
    let mut app = app_with("host-loop-zram", true);
    let mut cdm = report_phases(TestName::Cdm, "loop0", "none", |_| (1000.0, 0.5));
    for (i, p) in cdm.outcome.phases.iter_mut().enumerate() {
        p.engine_choice = qd1_choice();
        if i % 2 == 1 {
            p.engine = EngineKind::Uring;
            p.engine_choice.used = EngineKind::Uring;
        }
    }
    finish_with(&mut app, TestName::Cdm, false, &cdm);
    keys(&mut app, "4");
    let s = assert_nothing_cut(&app);
    assert!(s.contains("engine per phase:"), "{s}");
    // The last phase's engine and its probe's figures, whole.
    let last = cdm.outcome.phases.last().unwrap();
    assert!(
        s.contains(&format!(
            "{} io_uring (probe 219k vs sync 494k)",
            last.label
        )),
        "{s}"
    );
}

#[test]
fn a_scheduler_switch_on_a_long_device_name_says_every_key_at_80_columns() {
    let mut app = lab_app_with_drive_states(false);
    app.update(Msg::SchedulerSet {
        device: "nvme0n1".into(),
        result: Ok("none".into()),
    });
    let s = assert_nothing_cut(&app);
    // Nothing has run: R has nothing to retest and is not offered.
    assert!(
        s.contains("nvme0n1: scheduler now none (back to mq-deadline on exit); P permanent"),
        "{s}"
    );
}

#[test]
fn compare_gives_each_runs_parameters_whole_at_80_columns() {
    let mut app = lab_app_with_drive_states(false);
    // nvme0n1 is the third visible device.
    key(&mut app, KeyCode::Down);
    key(&mut app, KeyCode::Down);
    app.values.repeats = 10;
    for sched in ["mq-deadline", "none"] {
        let r = report(TestName::ConcurrentRead, "nvme0n1", sched, 900.0, 0.5);
        finish_with(&mut app, TestName::ConcurrentRead, sched == "none", &r);
    }
    // B ran deeper: the change of parameters is one change, longer than a row.
    let deeper = app.results.records[0].params.replace(
        "QD1, 2 workers, forward read",
        "QD32, 8 workers, random read",
    );
    assert_ne!(deeper, app.results.records[0].params);
    app.results.records[1].params = deeper.clone();
    keys(&mut app, "4");
    keys(&mut app, "c");
    assert_eq!(app.screen, Screen::Compare);
    let s = assert_nothing_cut(&app);
    for tag in ["A #1", "B #2"] {
        let at = s.find(tag).unwrap_or_else(|| panic!("{tag}:\n{s}"));
        assert!(s[at..].contains("O_DIRECT x10"), "{tag}:\n{s}");
    }
    let change = format!("parameters {} -> {deeper}", app.results.records[0].params);
    let words = |t: &str| t.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(words(&s).contains(&words(&change)), "{change}:\n{s}");
}

#[test]
fn results_show_every_test_name_whole_or_elided_in_its_middle_at_80_columns() {
    // seq-read-q8 was drawn "seq-read-q" at 80 columns: the TEST column is narrower than the
    // longest test names. A name may lose its middle (marked), never its end.
    let mut app = app_with("host-loop-zram", true);
    for test in [TestName::SeqReadQ8, TestName::ConcurrentRead] {
        let r = report(test, "loop0", "none", 300.0, 0.05);
        finish_with(&mut app, test, false, &r);
    }
    keys(&mut app, "4");
    let s = screen(&app, 80, 25);
    assert!(s.contains(" seq-r~d-q8 "), "{s}");
    assert!(!s.contains("seq-read-q "), "{s}");
}
