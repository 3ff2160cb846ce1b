//! Several devices at once in the TUI: Space marks devices on the Devices screen, the picker
//! runs the chosen test on every marked device at the same time, the Run screen shows one
//! throughput line and one live figure per device, and Results shows the rows and the verdict
//! that names the outlier; `m` marks an md array and its members. Drawn through ratatui's
//! TestBackend at 80x25 and 132x43, driven through `App::update` without a terminal.

#![allow(clippy::unwrap_used)] // tests may unwrap: a panic is the failure report

use crate::common;

use common::tui::*;
use disktriage::app::{App, Overlay, Screen};
use disktriage::bench::CATALOG;
use disktriage::bench::RunEvent;
use disktriage::bench::RunRequest;
use disktriage::bench::TestName;
use disktriage::event::{Cmd, Msg, SeveralMsg, TaskError};
use ratatui::crossterm::event::KeyCode;

use crate::{SIZES, snap};

/// Selects `name` on the Devices screen.
fn select(app: &mut App, name: &str) {
    keys(app, "1");
    key(app, KeyCode::Home);
    for _ in 0..20 {
        if app.selected_device().is_some_and(|d| d.name == name) {
            return;
        }
        key(app, KeyCode::Down);
    }
    panic!("{name} not in the list");
}

/// Marks each of `names` on the Devices screen (Space).
fn mark(app: &mut App, names: &[&str]) {
    for d in names {
        select(app, d);
        key(app, KeyCode::Char(' '));
    }
}

/// Picks `test` on the Test screen and runs it; the commands that came back.
fn run_test(app: &mut App, test: TestName) -> Vec<Cmd> {
    keys(app, "2");
    app.picker_test = CATALOG.iter().position(|t| t.name == test).unwrap();
    keys(app, "r")
}

/// What the commands at the end of a run do: each device's runs recorded in the history
/// ("record loop0 x1": one repeat), then the device list read again ("refresh").
fn ending(cmds: &[Cmd]) -> Vec<String> {
    cmds.iter()
        .map(|c| match c {
            Cmd::RecordHistory { runs, .. } => format!(
                "record {} x{}",
                runs[0].target.device.as_deref().unwrap_or("?"),
                runs.len()
            ),
            Cmd::RefreshInventory => "refresh".to_string(),
            other => format!("{other:?}"),
        })
        .collect()
}

fn started(cmds: &[Cmd]) -> Vec<(usize, RunRequest)> {
    match cmds {
        [Cmd::StartSeveral(batch)] => batch.clone(),
        other => panic!("expected StartSeveral, got {other:?}"),
    }
}

/// Target `index` starts and measures `n` intervals at about `mbps`.
fn feed_target(app: &mut App, index: usize, device: &str, test: TestName, n: u64, mbps: f64) {
    let plan = plan(test);
    app.update(Msg::Several(SeveralMsg::Started {
        index,
        target: Box::new(target(device, "none")),
        plan: Box::new(plan.clone()),
    }));
    let ev = |ev| {
        Msg::Several(SeveralMsg::Event {
            index,
            ev: Box::new(ev),
        })
    };
    app.update(ev(RunEvent::PhaseStarted {
        index: 0,
        count: 1,
        label: test.id().to_string(),
        job: Box::new(plan.phases[0].job.clone()),
        probing: false,
    }));
    app.update(ev(RunEvent::Measuring {
        index: 0,
        engine: Box::new(qd1_choice()),
    }));
    for i in 0..n {
        app.update(ev(RunEvent::Point {
            index: 0,
            point: point(i, mbps),
        }));
    }
}

fn finish(app: &mut App, index: usize, device: &str, test: TestName, mbps: f64) -> Vec<Cmd> {
    app.update(Msg::Several(SeveralMsg::Finished {
        index,
        result: Box::new(Ok(report(test, device, "none", mbps, 2.0))),
    }))
}

#[test]
fn marked_devices_run_together_with_a_line_each_and_a_verdict() {
    let mut app = app_with("host-loop-zram", true);
    mark(&mut app, &["loop0", "loop1", "vda"]);
    // A mark taken back.
    select(&mut app, "vda");
    key(&mut app, KeyCode::Char(' '));
    assert_eq!(app.several.marks, ["loop0", "loop1"]);
    let s = screen(&app, 80, 25);
    assert!(s.contains("*loop0") && s.contains("*loop1"), "{s}");
    assert!(!s.contains("*vda"), "{s}");
    assert!(s.contains("2 marked *"), "{s}");
    snap("several_marked", &app);

    let batch = started(&run_test(&mut app, TestName::SeqRead));
    let targets: Vec<_> = batch
        .iter()
        .map(|(i, r)| (*i, r.target.display().to_string(), r.test))
        .collect();
    assert_eq!(
        targets,
        [
            (0, "/dev/loop0".to_string(), TestName::SeqRead),
            (1, "/dev/loop1".to_string(), TestName::SeqRead)
        ]
    );
    assert_eq!(app.screen, Screen::Run);
    assert!(app.running());

    tick(&mut app, 3.0);
    feed_target(&mut app, 0, "loop0", TestName::SeqRead, 40, 300.0);
    feed_target(&mut app, 1, "loop1", TestName::SeqRead, 40, 90.0);
    let s = screen(&app, 80, 25);
    assert!(s.contains("seq-read on 2 devices, all at once"), "{s}");
    // One live figure per device, the mean of its measured time.
    let line = |name: &str| {
        s.lines()
            .find(|l| l.contains(&format!("│{name}")))
            .unwrap_or_else(|| panic!("no line for {name}:\n{s}"))
            .to_string()
    };
    assert!(line("loop0").contains("302.2 MB/s"), "{s}");
    assert!(line("loop1").contains("90.7 MB/s"), "{s}");
    snap("several_running", &app);

    // The live line of the slow device reads lower on the one scale: at under half of the
    // fast one, its upper row stays empty.
    let bars = |l: String| l.chars().filter(|c| ('▁'..='█').contains(c)).count();
    // (The fast line fills its columns: 31 at 80, beside the rate, progress and ETA.)
    assert!(bars(line("loop0")) >= 31, "{s}");
    assert_eq!(bars(line("loop1")), 0, "{s}");

    assert!(finish(&mut app, 0, "loop0", TestName::SeqRead, 300.0).is_empty());
    assert!(app.running(), "loop1 is still running");
    let cmds = finish(&mut app, 1, "loop1", TestName::SeqRead, 90.0);
    // Each device's run goes to the history under its own disk, as a single run's does.
    assert_eq!(
        ending(&cmds),
        ["record loop0 x1", "record loop1 x1", "refresh"]
    );
    assert!(!app.running());
    let s = screen(&app, 80, 25);
    // One repeat: no noise figure, so a possible outlier, to be confirmed.
    assert!(
        s.contains("Verdict: possible outlier: loop1 is 70.0 % slower"),
        "{s}"
    );
    let slow = s
        .lines()
        .find(|l| l.contains("loop1") && l.contains("SLOWER?"));
    assert!(slow.is_some(), "{s}");
    snap("several_finished", &app);

    // Each device is a record of Results; its detail has the rows and the verdict.
    assert_eq!(app.results.records.len(), 2);
    assert_eq!(app.results.records[1].runs.len(), 1);
    keys(&mut app, "4");
    let s = screen(&app, 80, 25);
    assert!(s.contains("outlier: loop1"), "{s}");
    snap("several_results", &app);

    // r on the Run screen runs the same again.
    keys(&mut app, "3");
    let again = started(&keys(&mut app, "r"));
    assert_eq!(again.len(), 2);
    assert_eq!(app.results.records.len(), 4);
}

#[test]
fn a_write_test_on_several_devices_needs_every_name_typed() {
    let mut app = app_with("qemu-lab", true);
    mark(&mut app, &["sda", "vda"]);
    // vda of this fixture is in use (a partition is mounted): refused before any name is
    // asked for.
    let cmds = run_test(&mut app, TestName::SeqWrite);
    assert!(cmds.is_empty());
    let Some(Overlay::Error(e)) = &app.overlay else {
        panic!("{:?}", app.overlay)
    };
    assert!(e.contains("refusing to write to vda"), "{e}");
    key(&mut app, KeyCode::Enter);

    select(&mut app, "vda");
    key(&mut app, KeyCode::Char(' '));
    select(&mut app, "nvme0n1");
    key(&mut app, KeyCode::Char(' '));
    assert_eq!(app.several.marks, ["sda", "nvme0n1"]);
    assert!(run_test(&mut app, TestName::SeqWrite).is_empty());
    assert!(matches!(app.overlay, Some(Overlay::ConfirmSeveral { .. })));
    let s = screen(&app, 80, 25);
    assert!(s.contains("WRITES to sda, nvme0n1"), "{s}");
    assert!(s.contains("Type every device name (sda,nvme0n1)"), "{s}");
    // One name is not enough.
    keys(&mut app, "sda");
    assert!(key(&mut app, KeyCode::Enter).is_empty());
    let s = screen(&app, 80, 25);
    assert!(s.contains("does not name each of them once"), "{s}");
    snap("several_confirm", &app);
    keys(&mut app, ",/dev/nvme0n1");
    let batch = started(&key(&mut app, KeyCode::Enter));
    let confirmations: Vec<_> = batch
        .iter()
        .map(|(_, r)| r.confirmation.clone().unwrap())
        .collect();
    assert_eq!(confirmations, ["sda", "/dev/nvme0n1"]);
}

#[test]
fn a_failing_device_is_named_and_the_others_still_report() {
    let mut app = app_with("qemu-lab", true);
    mark(&mut app, &["sda", "sdb", "nvme0n1"]);
    started(&run_test(&mut app, TestName::SeqRead));
    app.update(Msg::Several(SeveralMsg::Refused {
        index: 1,
        error: "cannot open /dev/sdb: No such device".into(),
    }));
    feed_target(&mut app, 0, "sda", TestName::SeqRead, 8, 100.0);
    finish(&mut app, 0, "sda", TestName::SeqRead, 100.0);
    app.update(Msg::Several(SeveralMsg::Finished {
        index: 2,
        result: Box::new(Err(TaskError::Failed("the device is gone".into()))),
    }));
    assert!(!app.running());
    let Some(Overlay::Error(e)) = &app.overlay else {
        panic!("{:?}", app.overlay)
    };
    assert!(
        e.starts_with("failed on /dev/sdb, /dev/nvme0n1; no verdict"),
        "{e}"
    );
    key(&mut app, KeyCode::Enter);
    let s = screen(&app, 80, 25);
    assert!(
        s.lines().any(|l| l.contains("sdb") && l.contains("FAILED")),
        "{s}"
    );
    assert!(s.contains("100.0"), "sda's figures are kept:\n{s}");
    assert_eq!(
        app.results.records[1].error.as_deref(),
        Some("cannot open /dev/sdb: No such device")
    );
}

#[test]
fn the_run_screen_says_why_a_device_failed_where_it_says_failed() {
    // The reason was only on Results: the Run screen said "FAILED" and no more.
    let mut app = app_with("qemu-lab", true);
    mark(&mut app, &["sda", "sdb", "nvme0n1"]);
    started(&run_test(&mut app, TestName::SeqRead));
    feed_target(&mut app, 0, "sda", TestName::SeqRead, 8, 100.0);
    app.update(Msg::Several(SeveralMsg::Finished {
        index: 1,
        result: Box::new(Err(TaskError::Failed(
            "read error at byte 104857600: Input/output error (os error 5)".into(),
        ))),
    }));
    // While the others still run, and after.
    let s = screen(&app, 80, 25);
    assert!(
        s.contains("sdb FAILED: read error at byte 104857600: Input/output error"),
        "{s}"
    );
    finish(&mut app, 0, "sda", TestName::SeqRead, 100.0);
    finish(&mut app, 2, "nvme0n1", TestName::SeqRead, 100.0);
    key(&mut app, KeyCode::Enter);
    let s = screen(&app, 80, 25);
    assert!(
        s.contains("sdb FAILED: read error at byte 104857600: Input/output error"),
        "{s}"
    );
    snap("several_failed_reason", &app);
}

#[test]
fn an_md_array_then_each_member() {
    let mut app = app_with("qemu-lab", true);
    select(&mut app, "md0");
    key(&mut app, KeyCode::Char('m'));
    assert_eq!(app.several.marks, ["md0", "vdb", "vdc"]);
    // Not an array.
    select(&mut app, "sda");
    key(&mut app, KeyCode::Char('m'));
    assert!(
        matches!(&app.overlay, Some(Overlay::Error(e)) if e.contains("not an assembled md array"))
    );
    key(&mut app, KeyCode::Enter);
    assert_eq!(app.several.marks, ["md0", "vdb", "vdc"]);

    // Writes are refused: the members are held.
    assert!(run_test(&mut app, TestName::SeqWrite).is_empty());
    assert!(
        matches!(&app.overlay, Some(Overlay::Error(e)) if e.contains("held by it")),
        "{:?}",
        app.overlay
    );
    key(&mut app, KeyCode::Enter);

    // The array runs alone, then the members together.
    let first = started(&run_test(&mut app, TestName::SeqRead));
    assert_eq!(first.len(), 1);
    assert_eq!(first[0].1.target.to_str(), Some("/dev/md0"));
    feed_target(&mut app, 0, "md0", TestName::SeqRead, 8, 200.0);
    let next = started(&finish(&mut app, 0, "md0", TestName::SeqRead, 200.0));
    let members: Vec<_> = next.iter().map(|(i, _)| *i).collect();
    assert_eq!(members, [1, 2]);
    finish(&mut app, 1, "vdb", TestName::SeqRead, 100.0);
    finish(&mut app, 2, "vdc", TestName::SeqRead, 98.0);
    let s = screen(&app, 80, 25);
    assert!(s.contains("the array, then its members"), "{s}");
    assert!(s.contains("x2.0 member"), "{s}");
    assert!(s.contains("Verdict: no outlier"), "{s}");
    snap("several_md_members", &app);
}

#[test]
fn stop_stops_every_device() {
    let mut app = app_with("host-loop-zram", true);
    mark(&mut app, &["loop0", "loop1"]);
    app.values.repeats = 3;
    started(&run_test(&mut app, TestName::SeqRead));
    assert_eq!(key(&mut app, KeyCode::Char('x')), [Cmd::StopRun]);
    finish(&mut app, 0, "loop0", TestName::SeqRead, 100.0);
    // No second repeat after a stop; what completed is kept in the history.
    assert_eq!(
        ending(&finish(&mut app, 1, "loop1", TestName::SeqRead, 100.0)),
        ["record loop0 x1", "record loop1 x1", "refresh"]
    );
    assert!(!app.running());
    assert!(screen(&app, 80, 25).contains("stopped"));
}

/// One truth: a device's row on the several-devices results and its row in Results are the
/// same runs, and show the same MB/s. A thin repeat (47 I/Os in 10 s) counts in both; the
/// several rows once left it out of their mean (100.0 MB/s against Results' 52.5).
#[test]
fn a_devices_several_row_and_its_results_row_show_one_figure() {
    let mut app = app_with("host-loop-zram", true);
    mark(&mut app, &["loop0", "loop1"]);
    app.values.repeats = 2;
    started(&run_test(&mut app, TestName::SeqRead));
    finish(&mut app, 0, "loop0", TestName::SeqRead, 100.0);
    started(&finish(&mut app, 1, "loop1", TestName::SeqRead, 100.0));
    finish(&mut app, 0, "loop0", TestName::SeqRead, 5.0);
    let cmds = finish(&mut app, 1, "loop1", TestName::SeqRead, 100.0);
    assert!(!app.running());
    assert_eq!(
        ending(&cmds),
        ["record loop0 x2", "record loop1 x2", "refresh"]
    );
    // The first line of `screen` naming loop0 after `header`.
    let row = |screen: &str, header: &str| {
        screen
            .lines()
            .skip_while(|l| !l.contains(header))
            .find(|l| l.contains("loop0"))
            .unwrap_or_else(|| panic!("no loop0 row after {header}:\n{screen}"))
            .to_string()
    };
    let several = screen(&app, 80, 25);
    assert!(
        row(&several, "Run: seq-read").contains("52.5 MB/s"),
        "{several}"
    );
    assert!(
        row(&several, "TARGET").contains("loop0   52.5"),
        "{several}"
    );
    keys(&mut app, "4");
    let results = screen(&app, 80, 25);
    assert!(row(&results, "DEVICE").contains("52.5"), "{results}");
    assert!(
        row(&results, "TARGET").contains("loop0   52.5"),
        "{results}"
    );
}

#[test]
fn a_throttled_device_shows_its_rate_marked_as_a_low_count() {
    // loop1 is throttled: 97 requests of 1 MiB in 3.03 s. Its MB/s is the figure the admin
    // needs; it is shown on every row, and said to rest on few I/Os.
    let mut app = app_with("host-loop-zram", true);
    mark(&mut app, &["loop0", "loop1"]);
    started(&run_test(&mut app, TestName::SeqRead));
    finish(&mut app, 0, "loop0", TestName::SeqRead, 300.0);
    let mut slow = report(TestName::SeqRead, "loop1", "none", 33.6, 2.0);
    {
        let p = &mut slow.outcome.phases[0];
        p.seconds = 3.03;
        p.rate_seconds = 3.03;
        p.read.ops = 97;
        p.read.bytes = 97 << 20;
        p.read.bytes_per_sec = (97u64 << 20) as f64 / 3.03;
        p.read.iops = 97.0 / 3.03;
    }
    app.update(Msg::Several(SeveralMsg::Finished {
        index: 1,
        result: Box::new(Ok(slow)),
    }));
    assert!(!app.running());
    let s = screen(&app, 80, 25);
    let row = |s: &str, header: &str| {
        s.lines()
            .skip_while(|l| !l.contains(header))
            .find(|l| l.contains("loop1"))
            .unwrap_or_else(|| panic!("no loop1 row after {header}:\n{s}"))
            .to_string()
    };
    // 97 MiB in 3.03 s: 33.6 MB/s, 32 IOPS.
    assert!(row(&s, "Run: seq-read").contains("33.6 MB/s"), "{s}");
    assert!(row(&s, "TARGET").contains("33.6"), "{s}");
    assert!(s.contains("97 I/Os in 3.03 s: low count"), "{s}");
    assert!(!s.contains("too few"), "{s}");
    keys(&mut app, "4");
    let s = screen(&app, 80, 25);
    assert!(row(&s, "DEVICE").contains("33.6"), "{s}");
    assert!(row(&s, "TARGET").contains("33.6"), "{s}");
    // The CLI's text and JSON say the same.
    let multi = disktriage::report::SeveralResult {
        test: TestName::SeqRead,
        mode: disktriage::report::Mode::Parallel,
        repeats: 1,
        targets: app.results.records[..2]
            .iter()
            .map(|r| disktriage::report::TargetResult {
                target: format!("/dev/{}", r.device),
                role: disktriage::bench::Role::Target,
                reports: r.runs.clone(),
                error: None,
            })
            .collect(),
        stopped: false,
    };
    let text = disktriage::report::render_several_text(&multi, 80);
    assert!(text.contains("97 I/Os in 3.03 s: low count"), "{text}");
    assert!(!text.contains("too few"), "{text}");
    let line = text.lines().find(|l| l.starts_with("loop1")).unwrap();
    assert!(line.contains("33.6") && line.contains("32"), "{text}");
    let json: serde_json::Value =
        serde_json::from_str(&disktriage::report::render_several_json(&multi).unwrap()).unwrap();
    let row = &json["targets"][1]["row"];
    assert!(
        (row["mbps"]["mean"].as_f64().unwrap() - 33.57).abs() < 0.01,
        "{row}"
    );
    assert_eq!(row["low_count"], true, "{row}");
    assert_eq!(json["targets"][0]["row"]["low_count"], false);
}

/// Collapses a screen's rows into one text (borders and padding out), so a message that wraps
/// reads as one.
fn flowing(screen: &str) -> String {
    screen
        .lines()
        .map(|l| l.trim_matches('"').trim_matches(|c| c == '│' || c == ' '))
        .collect::<Vec<_>>()
        .join(" ")
}

#[test]
fn the_several_disk_status_line_is_never_cut_at_80_columns() {
    let mut app = app_with("host-loop-zram", true);
    mark(&mut app, &["loop0", "loop1", "vda", "zram0"]);
    let (t, cuts) = draw_checked(&app, 80, 25);
    assert!(cuts.is_empty(), "{cuts:?}\n{}", t.backend());
    let s = flowing(&screen(&app, 80, 25));
    assert!(
        s.contains(
            "4 marked (loop0, loop1, vda, zram0): the test you run (2, r) runs on all of them at once"
        ),
        "{s}"
    );
}

/// The live view shows each device's rate, how far its run is and its ETA (counting the
/// repeats still to come), whole at 80 columns: not only a line of bars.
#[test]
fn the_live_view_shows_each_devices_rate_progress_and_eta() {
    let mut app = app_with("host-loop-zram", true);
    mark(&mut app, &["loop0", "loop1"]);
    app.values.repeats = 2;
    started(&run_test(&mut app, TestName::SeqRead));
    tick(&mut app, 3.0);
    feed_target(&mut app, 0, "loop0", TestName::SeqRead, 12, 300.0);
    feed_target(&mut app, 1, "loop1", TestName::SeqRead, 12, 90.0);
    tick(&mut app, 7.0);
    // A repeat of seq-read takes its warm-up and its time; 4 s of the first are done.
    let whole = plan(TestName::SeqRead)
        .expected_duration()
        .unwrap()
        .as_secs_f64();
    let pct = (4.0 / (2.0 * whole) * 100.0).floor() as u64;
    let eta = (2.0 * whole - 4.0).ceil() as u64;
    for (w, h) in SIZES {
        let s = screen(&app, w, h);
        for (name, mbps) in [("loop0", "303.2 MB/s"), ("loop1", "91.0 MB/s")] {
            let line = s
                .lines()
                .find(|l| l.contains(&format!("│{name}")))
                .unwrap_or_else(|| panic!("no line for {name}:\n{s}"));
            assert!(line.contains(mbps), "{w}x{h} {name}: {s}");
            assert!(line.contains(&format!("{pct} %")), "{w}x{h} {name}: {s}");
            assert!(
                line.contains(&format!("ETA {}:{:02}", eta / 60, eta % 60)),
                "{w}x{h} {name}: {s}"
            );
        }
    }
}
