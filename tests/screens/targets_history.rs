//! Write-data choices, file targets, the metadata test, figures faster than the link and the run history, on the screens at 80x25 and 132x43.

#![allow(clippy::unwrap_used)] // tests may unwrap: a panic is the failure report

use crate::common;

use common::tui::*;
use disktriage::app::{App, Overlay, Screen};
use disktriage::bench::TestName;
use disktriage::event::{Cmd, Msg};
use disktriage::sys::SysRoot;
use ratatui::crossterm::event::KeyCode;

use crate::{SIZES, snap};

#[test]
fn preserve_is_a_write_data_choice_and_every_screen_says_rewrite() {
    use disktriage::bench::RunEvent;
    use disktriage::bench::TargetFacts;
    use disktriage::bench::TestParams;
    use disktriage::bench::build_plan;
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
        tick(&mut app, 1.0 + (i + 1) as f64 * 0.25);
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
        disktriage::model::DiskIdentity::Name("loop1".into()),
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
    use disktriage::bench::RunEvent;
    use disktriage::bench::{DirPoint, IntervalPoint};
    let mut app = app_with("host-loop-zram", true);
    keys(&mut app, "f");
    app.update(Msg::FileTarget(Ok(file_target(3 << 30))));
    key(&mut app, KeyCode::Enter);
    app.picker_test = disktriage::app::index_of(TestName::Metadata);
    let cmds = keys(&mut app, "r");
    assert!(matches!(cmds.as_slice(), [Cmd::StartRun(_)]), "{cmds:?}");
    // The report's figures: files/s per phase, no bytes.
    let mut report = report_phases(TestName::Metadata, "loop0p1", "none", |_| (1.0, 0.05));
    report.target.path = "/tmp/dtcap/mnt".into();
    report.target.kind = disktriage::bench::TargetClass::Directory;
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
        tick(&mut app, 1.0 + (i + 1) as f64 * 0.25);
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
    use disktriage::bench::{faster_than_link, sata_ceiling, usb_ceiling};
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
    use disktriage::bench::{faster_than_link, sata_ceiling};
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
    report: &disktriage::bench::RunReport,
) {
    keys(app, "2");
    app.picker_test = disktriage::app::index_of(test);
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
        disktriage::report::rate(e.figures[0].mbps.mean)
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
    app.picker_test = disktriage::app::index_of(TestName::RandRead);
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

#[test]
fn the_sessions_runs_come_first_and_the_history_after_them() {
    // A run, the history's run of the same test, a second run: the history's row sat
    // between the session's two.
    let mut app = app_with("host-loop-zram", true);
    complete_run(&mut app, "none", 512.0, 0.060);
    app.update(Msg::PastRuns(vec![past_run(430.0, "mq-deadline")]));
    complete_run(&mut app, "none", 520.0, 0.060);
    keys(&mut app, "4");
    let s = screen(&app, 80, 25);
    let order: Vec<&str> = s
        .lines()
        .filter_map(|l| {
            let cells: Vec<&str> = l
                .trim_matches(['"', '│', '>', ' ', 'A', 'B'])
                .split_whitespace()
                .collect();
            cells
                .first()
                .copied()
                .filter(|c| *c == "1" || *c == "2" || *c == "h1")
        })
        .collect();
    assert_eq!(order, ["1", "2", "h1"], "{s}");
    // Up/Down and Home/End go in the order shown.
    assert_eq!(app.results.selected().unwrap().number(), "2");
    key(&mut app, KeyCode::Down);
    assert_eq!(app.results.selected().unwrap().number(), "h1");
    key(&mut app, KeyCode::Home);
    assert_eq!(app.results.selected().unwrap().number(), "1");
    key(&mut app, KeyCode::Down);
    assert_eq!(app.results.selected().unwrap().number(), "2");
    key(&mut app, KeyCode::End);
    assert_eq!(app.results.selected().unwrap().number(), "h1");
    snap("results_history_after_the_session", &app);
}
