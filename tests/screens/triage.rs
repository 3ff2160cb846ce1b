//! The triage screen (`v` on Devices): snapshots at 80x25 and 132x43 of a triage running
//! (two disks, one mid-surface), finished (a failing and a healthy disk), and of a disk whose
//! verdict is unknown with its reason; fed fake progress and a fake report, as the screen only
//! takes data; a failed surface sample named by its unreadable sector. And its keys: `v` triages the marked disks or else the selected one, only on
//! Devices; stop, leave, health.

use crate::common::tui::*;
use crate::snap;
use disktriage::app::TriagePhase as Phase;
use disktriage::app::{App, Overlay, Screen};
use disktriage::bench::TestName;
use disktriage::event::{Cmd, DiskReport, Msg, TriageMsg, TriageOf, TriageReport};
use disktriage::flow::{TRIAGE_JOB, TriageNews, TriageOrder};
use disktriage::scan::Span;
use disktriage::triage::{
    Change, DiskFacts, DiskIdentityFacts, Finding, GatherOptions, Judgement, Measurements,
    Progress, SeqPosition, SeqRead, SurfaceSample, TriageVerdict, Unreadable, judge,
};
use ratatui::crossterm::event::KeyCode;

/// The app on Devices with loop0 and loop1 marked and `v` pressed: the triage asked for.
fn app_triaging_two() -> App {
    let mut app = app_with("host-loop-zram", true);
    key(&mut app, KeyCode::Char(' '));
    key(&mut app, KeyCode::Down);
    key(&mut app, KeyCode::Char(' '));
    let cmds = key(&mut app, KeyCode::Char('v'));
    let [Cmd::StartJob(order)] = cmds.as_slice() else {
        panic!("{cmds:?}")
    };
    let Some(TriageOrder { devices, .. }) = order.get() else {
        panic!("{order:?}")
    };
    assert_eq!(devices, &["loop0".to_string(), "loop1".to_string()]);
    assert_eq!(app.screen, Screen::Triage);
    app
}

/// The triage job's message, as the app hears it.
fn news(m: TriageMsg) -> Msg {
    Msg::job(TRIAGE_JOB, TriageNews::Triage(m))
}

fn progress(disk: usize, device: &str, step: &str, fraction: f64) -> Msg {
    news(TriageMsg::Progress(Box::new(Progress {
        disk,
        device: device.into(),
        step: step.into(),
        fraction,
        done: None,
    })))
}

fn facts(device: &str, model: &str) -> DiskFacts {
    DiskFacts {
        identity: DiskIdentityFacts {
            device: device.into(),
            model: Some(model.into()),
            serial: Some(format!("SN-{device}")),
            capacity_bytes: 64 << 20,
            logical_block_size: 512,
            ..Default::default()
        },
        measurements: Measurements {
            surface: Some(SurfaceSample {
                reads: 4000,
                read_bytes: 4096,
                ..Default::default()
            }),
            seq: [
                (SeqPosition::Start, 182.0),
                (SeqPosition::Middle, 150.0),
                (SeqPosition::End, 96.0),
            ]
            .into_iter()
            .map(|(position, mb_per_s)| SeqRead {
                position,
                offset: 0,
                bytes: 64 << 20,
                mb_per_s,
            })
            .collect(),
            random_read_p50_ms: Some(8.1),
            random_read_p99_ms: Some(21.5),
            temperature_min_c: Some(34),
            temperature_max_c: Some(36),
            crc_errors_after: None,
        },
        seconds: 7.5,
        ..Default::default()
    }
}

fn finding(rule: &'static str, severity: TriageVerdict, sentence: &str, next: &str) -> Finding {
    Finding {
        rule,
        severity,
        sentence: sentence.into(),
        next_step: next.into(),
        value: None,
        threshold: None,
    }
}

fn report(disks: Vec<DiskReport>) -> Msg {
    news(TriageMsg::Finished(Box::new(TriageReport {
        host: Some("web01".into()),
        started_unix: 1_795_000_000,
        seconds: 8.1,
        bound_seconds: 60.0,
        disks,
        of: TriageOf::Disks,
    })))
}

/// loop1 healthy (asked first), loop0 failing with two findings and a change.
fn failing_and_healthy() -> Msg {
    report(vec![
        DiskReport {
            facts: facts("loop1", "WDC WD40EFRX-68N32N0"),
            judgement: Judgement {
                verdict: TriageVerdict::Healthy,
                notes: Vec::new(),
                findings: Vec::new(),
            },
            changes: Vec::new(),
        },
        DiskReport {
            facts: facts("loop0", "ST4000DM004-2CV104"),
            judgement: Judgement {
                verdict: TriageVerdict::Failing,
                notes: Vec::new(),
                findings: vec![
                    finding(
                        "ata-pending-sectors",
                        TriageVerdict::Failing,
                        "24 sectors are pending: the disk could not read them",
                        "back up now, then replace the disk",
                    ),
                    finding(
                        "link-below-best",
                        TriageVerdict::Suspect,
                        "the link runs at 1.5 Gb/s on a 6 Gb/s disk",
                        "check the cable or port",
                    ),
                ],
            },
            changes: vec![Change {
                what: "pending sectors".into(),
                before: 0.0,
                after: 24.0,
                since_unix: 1_794_300_000,
            }],
        },
    ])
}

#[test]
fn running_triage_shows_a_line_per_disk_the_elapsed_time_against_the_bound_and_stop() {
    let mut app = app_triaging_two();
    assert_eq!(app.screens.triage.phase, Phase::Running);
    app.update(progress(0, "loop0", "SMART", 0.05));
    app.update(progress(1, "loop1", "SMART", 0.05));
    app.update(progress(0, "loop0", "surface 1800/4000", 0.45));
    tick(&mut app, 12.0);
    let s = screen(&app, 80, 25);
    assert!(
        s.contains("Triage of 2 disks, read-only: 0:12 elapsed of at most 1:00"),
        "{s}"
    );
    assert!(s.contains("45% surface 1800/4000"), "{s}");
    assert!(s.contains("5% SMART"), "{s}");
    assert!(s.contains("x stop"), "{s}");
    assert!(
        !s.contains("h health"),
        "no health key while it gathers:\n{s}"
    );
    snap("triage_running", &app);
}

#[test]
fn finished_triage_lists_worst_first_with_findings_next_steps_and_changes() {
    let mut app = app_triaging_two();
    app.update(progress(0, "loop0", "surface 4000/4000", 1.0));
    app.update(failing_and_healthy());
    assert_eq!(app.screens.triage.phase, Phase::Ended);
    let s = screen(&app, 80, 25);
    // Worst first, whatever order they were asked in; each verdict a word, not a colour.
    let failing = s.find("loop0  FAILING").expect(&s);
    let healthy = s.find("loop1  healthy").expect(&s);
    assert!(failing < healthy, "{s}");
    assert!(s.contains("FAILING 24 sectors are pending"), "{s}");
    assert!(
        s.contains("next: back up now, then replace the disk"),
        "{s}"
    );
    assert!(s.contains("SUSPECT the link runs at 1.5 Gb/s"), "{s}");
    assert!(
        s.contains("pending sectors 0 -> 24 since 2026-11-10 08:40 UTC"),
        "{s}"
    );
    assert!(s.contains("worst FAILING"), "{s}");
    assert!(
        s.contains("measured: surface 4000 reads, 0 unreadable, 0 slow, seq read 182/150/96"),
        "{s}"
    );
    snap("triage_finished", &app);
    tick(&mut app, 20.0);
    let s = screen(&app, 80, 25);
    assert!(s.contains("h health"), "{s}");
    assert!(!s.contains("x stop"), "{s}");
    // The other disk: its own findings (none).
    key(&mut app, KeyCode::Down);
    let s = screen(&app, 80, 25);
    assert!(s.contains("healthy: no rule found anything"), "{s}");
    // h opens the Health view of the selected disk.
    key(&mut app, KeyCode::Up);
    key(&mut app, KeyCode::Char('h'));
    assert_eq!(app.screen, Screen::Health);
    assert_eq!(app.health.device.as_deref(), Some("loop0"));
}

/// The screen shows the surface finding as the rule words it, for the CLI's text and JSON
/// too: the failed sample's first unreadable sector (LBA 409600), not the sample's start
/// (409511, which reads).
#[test]
fn a_failed_sample_is_named_by_its_unreadable_sector() {
    let mut app = app_triaging_two();
    let mut f = facts("loop0", "ST4000DM004-2CV104");
    if let Some(s) = f.measurements.surface.as_mut() {
        s.unreadable = vec![Unreadable {
            sample: Span::new(409_511 * 512, 65536),
            at: Span::new(409_600 * 512, 512),
            errno: 5,
        }];
    }
    let judgement = judge(&f, &[]);
    app.update(report(vec![DiskReport {
        facts: f,
        judgement,
        changes: Vec::new(),
    }]));
    for (w, h) in [(80, 25), (132, 43)] {
        let s = screen(&app, w, h);
        let words = s.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(
            words.contains("1 of 4000 sampled reads failed: unreadable at LBA 409600"),
            "{s}"
        );
        assert!(!s.contains("409511"), "{s}");
    }
}

#[test]
fn an_unknown_verdict_says_why() {
    let mut app = app_with("host-loop-zram", true);
    assert_eq!(key(&mut app, KeyCode::Char('v')).len(), 1);
    let mut f = facts("loop0", "a.img");
    f.identity.model = None;
    f.measurements = Measurements::default();
    f.problems = vec![
        "cannot open /dev/loop0: No such device or address".into(),
        "SMART: none on loop (no drive behind it)".into(),
    ];
    app.update(report(vec![DiskReport {
        facts: f,
        judgement: Judgement {
            verdict: TriageVerdict::Unknown,
            notes: Vec::new(),
            findings: Vec::new(),
        },
        changes: Vec::new(),
    }]));
    let s = screen(&app, 80, 25);
    assert!(s.contains("UNKNOWN  -"), "{s}");
    assert!(s.contains("cannot open /dev/loop0"), "{s}");
    assert!(s.contains("not read: SMART: none on loop"), "{s}");
    assert!(s.contains("measured: nothing (see below)"), "{s}");
    snap("triage_unknown", &app);
}

#[test]
fn a_healthy_disk_shows_what_was_seen_and_not_judged_as_notes() {
    let mut app = app_with("host-loop-zram", true);
    assert_eq!(key(&mut app, KeyCode::Char('v')).len(), 1);
    app.update(report(vec![DiskReport {
        facts: facts("loop0", "ST4000DM004-2CV104"),
        judgement: Judgement {
            verdict: TriageVerdict::Healthy,
            findings: Vec::new(),
            notes: vec![
                "199 UDMA_CRC_Error_Count 12: interface CRC errors in the drive's life, \
                 usually a cable or connector; check the cable if it grows"
                    .into(),
            ],
        },
        changes: Vec::new(),
    }]));
    let s = screen(&app, 80, 25);
    assert!(s.contains("healthy: no rule found anything"), "{s}");
    assert!(s.contains("note: 199 UDMA_CRC_Error_Count 12"), "{s}");
}

#[test]
fn v_triages_the_selected_disk_when_none_is_marked_and_carries_its_identity() {
    let mut app = app_with("host-loop-zram", true);
    key(&mut app, KeyCode::Down);
    let cmds = key(&mut app, KeyCode::Char('v'));
    let stamped: Vec<Cmd> = cmds.into_iter().map(|c| app.stamp(c)).collect();
    let [Cmd::StartJob(order)] = stamped.as_slice() else {
        panic!("{stamped:?}")
    };
    let Some(TriageOrder {
        devices,
        chosen,
        options,
    }) = order.get()
    else {
        panic!("{order:?}")
    };
    assert_eq!(devices, &["loop1".to_string()]);
    assert_eq!(chosen.len(), 1);
    assert_eq!(chosen[0].as_ref().map(|c| c.name.as_str()), Some("loop1"));
    assert_eq!(options, &GatherOptions::default());
    let s = screen(&app, 80, 25);
    assert!(s.contains("triage of loop1: read-only"), "{s}");
}

#[test]
fn the_devices_panel_names_the_key_for_the_selected_or_the_marked() {
    let mut app = app_with("host-loop-zram", true);
    let s = screen(&app, 80, 25);
    assert!(s.contains("v triage: one verdict, read-only"), "{s}");
    key(&mut app, KeyCode::Char(' '));
    key(&mut app, KeyCode::Down);
    key(&mut app, KeyCode::Char(' '));
    let s = screen(&app, 80, 25);
    assert!(s.contains("v triage the 2 marked, read-only"), "{s}");
    let help = {
        key(&mut app, KeyCode::Char('?'));
        screen(&app, 132, 43)
    };
    assert!(
        help.contains("v triage the marked disks, else this one"),
        "{help}"
    );
}

#[test]
fn v_does_nothing_off_devices_and_while_a_test_runs() {
    // On Health, v is no key.
    let mut app = app_with("host-loop-zram", true);
    key(&mut app, KeyCode::Char('h'));
    assert_eq!(app.screen, Screen::Health);
    assert!(key(&mut app, KeyCode::Char('v')).is_empty());
    assert_eq!(app.screen, Screen::Health);
    // While a test runs, the triage would measure the test.
    let mut app = app_with("host-loop-zram", true);
    pick_rand_read(&mut app);
    keys(&mut app, "r");
    assert!(app.running());
    key(&mut app, KeyCode::Char('1'));
    assert!(key(&mut app, KeyCode::Char('v')).is_empty());
    assert_ne!(app.screen, Screen::Triage);
    assert!(
        matches!(&app.overlay, Some(Overlay::Error(e)) if e.contains("a test is running")),
        "{:?}",
        app.overlay
    );
    let _ = TestName::RandRead;
}

#[test]
fn x_stops_it_and_it_ends_with_what_was_gathered() {
    let mut app = app_triaging_two();
    app.update(progress(0, "loop0", "surface 100/4000", 0.1));
    tick(&mut app, 3.0);
    let cmds = key(&mut app, KeyCode::Char('x'));
    assert_eq!(cmds, vec![Cmd::StopJob(TRIAGE_JOB)]);
    assert_eq!(app.screens.triage.phase, Phase::Stopping);
    let s = screen(&app, 80, 25);
    assert!(
        s.contains("stopping: it ends with what was gathered"),
        "{s}"
    );
    // x again asks nothing more.
    assert!(key(&mut app, KeyCode::Char('x')).is_empty());
    app.update(failing_and_healthy());
    assert_eq!(app.screens.triage.phase, Phase::Ended);
    let s = screen(&app, 80, 25);
    assert!(s.contains("triage stopped: worst FAILING"), "{s}");
}

#[test]
fn leaving_while_it_runs_stops_it_and_a_second_v_shows_the_running_one() {
    for leave in [KeyCode::Esc, KeyCode::Char('1'), KeyCode::Tab] {
        let mut app = app_triaging_two();
        let cmds = key(&mut app, leave);
        assert_eq!(cmds, vec![Cmd::StopJob(TRIAGE_JOB)], "{leave:?}");
        assert_ne!(app.screen, Screen::Triage);
    }
    let mut app = app_triaging_two();
    key(&mut app, KeyCode::Esc);
    // Until the worker says it ended, v shows that triage and starts no other.
    assert!(key(&mut app, KeyCode::Char('v')).is_empty());
    assert_eq!(app.screen, Screen::Triage);
    // Once it ended, leaving sends nothing.
    app.update(failing_and_healthy());
    assert!(key(&mut app, KeyCode::Esc).is_empty());
}

#[test]
fn a_refused_triage_says_why() {
    let mut app = app_triaging_two();
    app.update(news(TriageMsg::Refused(
        "loop1 is no longer the device you chose: nothing was done".into(),
    )));
    assert!(
        matches!(&app.overlay, Some(Overlay::Error(e)) if e.contains("no longer the device")),
        "{:?}",
        app.overlay
    );
    assert!(matches!(app.screens.triage.phase, Phase::Refused(_)));
    // Under the error: nothing was read, so no clock runs on and no disk waits.
    app.overlay = None;
    tick(&mut app, 5.0);
    let text = screen(&app, 80, 25);
    assert!(text.contains("refused, nothing was read"), "{text}");
    assert!(
        text.contains("nothing was done"),
        "the whole reason, wrapped: {text}"
    );
    assert!(!text.contains("elapsed"), "{text}");
    assert!(!text.contains("waiting"), "{text}");
}

#[test]
fn a_triage_of_more_disks_than_its_list_shows_says_how_many_more() {
    let mut app = app_triaging_two();
    let disks = (0..14)
        .map(|i| DiskReport {
            facts: facts(&format!("sd{}", (b'a' + i) as char), "ST4000DM004-2CV104"),
            judgement: Judgement {
                verdict: TriageVerdict::Healthy,
                notes: Vec::new(),
                findings: Vec::new(),
            },
            changes: Vec::new(),
        })
        .collect();
    app.update(report(disks));
    let s = screen(&app, 80, 25);
    assert!(s.contains("more below (Up/Down)"), "{s}");
    for _ in 0..6 {
        key(&mut app, KeyCode::Down);
    }
    for _ in 0..7 {
        key(&mut app, KeyCode::Down);
    }
    let s = screen(&app, 80, 25);
    assert!(s.contains("more above (Up/Down)"), "{s}");
    for _ in 0..3 {
        key(&mut app, KeyCode::Up);
    }
    snap("triage_more_disks", &app);
}

#[test]
fn a_step_that_lasts_says_how_long_on_the_screens_own_clock() {
    let mut app = app_triaging_two();
    tick(&mut app, 1.0);
    app.update(progress(0, "loop0", "SMART", 0.05));
    app.update(progress(1, "loop1", "seq read middle", 0.5));
    tick(&mut app, 2.5);
    let s = screen(&app, 80, 25);
    assert!(!s.contains("SMART 1 s"), "a short step says nothing:\n{s}");
    // loop1 hangs in its read: no news, but the screen's clock runs.
    app.update(progress(0, "loop0", "surface 1800/4000", 0.45));
    tick(&mut app, 7.0);
    let s = screen(&app, 80, 25);
    assert!(s.contains("seq read middle 6 s"), "{s}");
    assert!(s.contains("surface 1800/4000 4 s"), "{s}");
    // The same step again is no new step.
    app.update(progress(1, "loop1", "seq read middle", 0.5));
    tick(&mut app, 9.0);
    let s = screen(&app, 80, 25);
    assert!(s.contains("seq read middle 8 s"), "{s}");
}
