//! The status line belongs to the screen and the moment that made it: a message said on one
//! screen is gone on another and once a run starts, and it never offers a key that does
//! nothing now. Driven through `App::update` and drawn through ratatui's TestBackend.

#![allow(clippy::unwrap_used)] // tests may unwrap: a panic is the failure report

use crate::common;

use common::tui::*;
use disktriage::app::{Overlay, Screen};
use disktriage::bench::TestName;
use disktriage::event::{Cmd, Msg};
use ratatui::crossterm::event::KeyCode;

/// The status line (the screen's last row) at 80x25.
fn status_line(app: &disktriage::app::App) -> String {
    screen(app, 80, 25)
        .lines()
        .last()
        .unwrap()
        .trim_matches('"')
        .to_string()
}

#[test]
fn a_marks_message_stays_on_devices_and_is_gone_once_a_run_starts() {
    let mut app = app_with("host-loop-zram", true);
    keys(&mut app, "1");
    key(&mut app, KeyCode::Char(' '));
    key(&mut app, KeyCode::Char(' '));
    assert!(
        status_line(&app).contains("no device marked"),
        "{}",
        status_line(&app)
    );
    // Another screen: the marks' message is not its own.
    keys(&mut app, "4");
    assert!(
        !status_line(&app).contains("marked"),
        "{}",
        status_line(&app)
    );
    // Back on Devices it does not come back either: its moment passed.
    keys(&mut app, "1");
    assert!(
        !status_line(&app).contains("marked"),
        "{}",
        status_line(&app)
    );

    // Said on Devices, then a run starts: the Run screen says nothing of the marks.
    key(&mut app, KeyCode::Char(' '));
    key(&mut app, KeyCode::Char(' '));
    assert!(status_line(&app).contains("no device marked"));
    pick_rand_read(&mut app);
    let cmds = keys(&mut app, "r");
    assert!(matches!(cmds.as_slice(), [Cmd::StartRun(_)]), "{cmds:?}");
    assert_eq!(app.screen, Screen::Run);
    assert!(
        !status_line(&app).contains("marked"),
        "{}",
        status_line(&app)
    );
    tick(&mut app, 3.0);
    assert!(
        !status_line(&app).contains("marked"),
        "{}",
        status_line(&app)
    );
}

#[test]
fn a_message_made_with_a_screen_change_shows_on_the_new_screen() {
    // A run's notes come on the Run screen the run went to, and stay there.
    let mut app = app_with("host-loop-zram", true);
    pick_rand_read(&mut app);
    keys(&mut app, "r");
    let plan = plan(TestName::RandRead);
    app.update(Msg::RunStarted {
        target: Box::new(target("loop0", "none")),
        plan: Box::new(plan),
        notes: vec!["loop0 was busy before the test".into()],
    });
    assert!(
        status_line(&app).contains("loop0 was busy"),
        "{}",
        status_line(&app)
    );
}

#[test]
fn a_switch_offers_r_only_when_there_is_a_test_to_retest() {
    let mut app = app_with("host-loop-zram", true);
    keys(&mut app, "1");
    let device = app.selected_device().unwrap().name.clone();
    keys(&mut app, "s");
    key(&mut app, KeyCode::Down);
    key(&mut app, KeyCode::Enter);
    app.update(Msg::SchedulerSet {
        device: device.clone(),
        result: Ok("mq-deadline".into()),
    });
    let said = status_line(&app);
    assert!(said.contains("scheduler now mq-deadline"), "{said}");
    // Nothing ran yet: R has nothing to retest, and the line does not offer it.
    assert!(!said.contains("R retest"), "{said}");
    let cmds = keys(&mut app, "R");
    assert!(cmds.is_empty(), "{cmds:?}");
    assert!(
        matches!(&app.overlay, Some(Overlay::Error(e)) if e.contains("nothing to rerun")),
        "{:?}",
        app.overlay
    );
    key(&mut app, KeyCode::Enter);

    // Once a test ran, a switch offers its retest.
    complete_run(&mut app, "mq-deadline", 500.0, 0.06);
    keys(&mut app, "1");
    keys(&mut app, "s");
    key(&mut app, KeyCode::Down);
    key(&mut app, KeyCode::Enter);
    app.update(Msg::SchedulerSet {
        device,
        result: Ok("none".into()),
    });
    let said = status_line(&app);
    assert!(said.contains("R retests"), "{said}");
}

/// The keys the status line lists work now: a running test offers its stop, not a rerun
/// (refused while it runs) nor a comparison of runs that do not exist; a finished one offers
/// its rerun, not a stop.
#[test]
fn the_key_list_offers_only_keys_that_work_now() {
    let mut app = app_with("host-loop-zram", true);
    pick_rand_read(&mut app);
    keys(&mut app, "r");
    feed(&mut app, TestName::RandRead, "loop0", "none", 8, 300.0);
    tick(&mut app, 30.0);
    let said = status_line(&app);
    assert!(said.contains("x or Esc stop"), "{said}");
    assert!(!said.contains("r rerun"), "{said}");
    assert!(!said.contains("c compare"), "{said}");
    app.update(Msg::RunFinished(Box::new(Ok(report(
        TestName::RandRead,
        "loop0",
        "none",
        300.0,
        0.05,
    )))));
    // The end of the run is said, without the comparison a single run cannot have.
    let said = status_line(&app);
    assert!(said.contains("run #1 finished"), "{said}");
    assert!(!said.contains("c compares"), "{said}");
    tick(&mut app, 60.0);
    let said = status_line(&app);
    assert!(said.contains("r rerun"), "{said}");
    assert!(!said.contains("stop"), "{said}");
    // One run: nothing to compare it with yet.
    assert!(!said.contains("c compare"), "{said}");
}
