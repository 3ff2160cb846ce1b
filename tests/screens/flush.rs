//! The flush check screen (`F` on Devices): the typed-name dialog (a wrong name starts
//! nothing), snapshots at 80x25 and 132x43 of a check running and of its verdict, a failed
//! check, and its keys: stop, leave, health; no check while a test runs.

use crate::common::tui::*;
use crate::snap;
use disktriage::app::FlushPhase as Phase;
use disktriage::app::{App, Overlay, Screen};
use disktriage::event::{Cmd, FlushDone, FlushMsg, Msg};
use disktriage::flow::{FLUSHCHECK_JOB, FlushOrder};
use ratatui::crossterm::event::KeyCode;

/// The app on Devices with loop0 selected, `F` pressed and `loop0` typed: the check asked
/// for.
fn app_checking_loop0() -> App {
    let mut app = app_with("host-loop-zram", true);
    assert!(key(&mut app, KeyCode::Char('F')).is_empty());
    assert!(
        matches!(&app.overlay, Some(Overlay::ConfirmFlush(c)) if c.device == "loop0"),
        "{:?}",
        app.overlay
    );
    let cmds = keys(&mut app, "loop0");
    assert!(cmds.is_empty());
    // The loop stamps each command with the device as chosen (`App::stamp`).
    let cmds: Vec<Cmd> = key(&mut app, KeyCode::Enter)
        .into_iter()
        .map(|c| app.stamp(c))
        .collect();
    let [Cmd::StartJob(order)] = cmds.as_slice() else {
        panic!("{cmds:?}")
    };
    let Some(FlushOrder {
        device,
        confirmation,
        chosen,
        ..
    }) = order.get()
    else {
        panic!("{order:?}")
    };
    assert_eq!((device.as_str(), confirmation.as_str()), ("loop0", "loop0"));
    assert_eq!(
        chosen.as_ref().map(|c| c.name.as_str()),
        Some("loop0"),
        "the device as chosen goes with the command"
    );
    assert_eq!(app.screen, Screen::Flush);
    app
}

fn progress(step: &str, fraction: f64) -> Msg {
    Msg::job(
        FLUSHCHECK_JOB,
        FlushMsg::Progress {
            step: step.into(),
            fraction,
        },
    )
}

fn volatile() -> Msg {
    Msg::job(
        FLUSHCHECK_JOB,
        FlushMsg::Finished(Box::new(FlushDone {
            verdict: "volatile-cache".into(),
            sentence: "commits in 0.08 ms on a 7,200 rpm disk: a volatile cache acknowledges them"
                .into(),
            next_step: "safe only with a battery- or capacitor-backed cache (check the \
                    controller), otherwise turn the write cache off for databases"
                .into(),
            lines: vec![
                "  durable 4 KiB commit (O_DSYNC)     0.08 ms median".into(),
                "  one revolution (7,200 rpm)         8.33 ms".into(),
            ],
        })),
    )
}

#[test]
fn a_wrong_name_starts_nothing_and_esc_cancels() {
    let mut app = app_with("host-loop-zram", true);
    key(&mut app, KeyCode::Char('F'));
    keys(&mut app, "loop1");
    assert!(key(&mut app, KeyCode::Enter).is_empty());
    let s = screen(&app, 80, 25);
    assert!(
        s.contains("\"loop1\" is not loop0: nothing was written"),
        "{s}"
    );
    assert!(s.contains("WRITES to the first 64 MiB of loop0"), "{s}");
    assert!(key(&mut app, KeyCode::Esc).is_empty());
    assert!(app.overlay.is_none());
    assert_eq!(app.screen, Screen::Devices);
    let s = screen(&app, 80, 25);
    assert!(
        s.contains("flush check cancelled: nothing was written"),
        "{s}"
    );
}

#[test]
fn the_name_with_a_trailing_space_starts_nothing() {
    let mut app = app_with("host-loop-zram", true);
    key(&mut app, KeyCode::Char('F'));
    keys(&mut app, "loop0 ");
    assert!(key(&mut app, KeyCode::Enter).is_empty());
    let s = screen(&app, 80, 25);
    assert!(
        s.contains("\"loop0 \" is not loop0: nothing was written"),
        "{s}"
    );
    assert_eq!(app.screen, Screen::Devices);
}

#[test]
fn running_shows_the_step_a_bar_and_stop() {
    let mut app = app_checking_loop0();
    // (The status line's news gives way to the keys after a few seconds.)
    tick(&mut app, 11.5);
    app.update(progress(
        "commits with the write cache as found 120/200",
        0.3,
    ));
    tick(&mut app, 12.0);
    let s = screen(&app, 80, 25);
    assert!(
        s.contains("Flush check of loop0: 0:12 elapsed, writes"),
        "{s}"
    );
    assert!(
        s.contains("30% commits with the write cache as found 120/200"),
        "{s}"
    );
    assert!(s.contains("x stop"), "{s}");
    snap("flush_running", &app);
}

/// A check whose write or flush hangs says how long nothing has moved, on the screen's own
/// clock; the next step clears it.
#[test]
fn a_check_that_hangs_says_how_long_it_has_waited() {
    let mut app = app_checking_loop0();
    tick(&mut app, 1.0);
    app.update(progress("one flush after 64 MiB of dirty data", 0.6));
    tick(&mut app, 2.5);
    let s = screen(&app, 80, 25);
    assert!(!s.contains("waiting"), "{s}");
    tick(&mut app, 9.0);
    let s = screen(&app, 80, 25);
    assert!(
        s.contains("60% one flush after 64 MiB of dirty data  waiting 8 s"),
        "{s}"
    );
    assert!(s.contains("0:09 elapsed"), "{s}");
    app.update(progress("commits with the write cache off 1/200", 0.7));
    let s = screen(&app, 80, 25);
    assert!(!s.contains("waiting"), "{s}");
}

#[test]
fn the_verdict_is_a_word_a_sentence_and_the_next_step() {
    let mut app = app_checking_loop0();
    app.update(volatile());
    assert_eq!(app.screens.flush.phase, Phase::Ended);
    let s = screen(&app, 80, 25);
    assert!(
        s.contains("flush check done: a VOLATILE CACHE acknowledges commits"),
        "{s}"
    );
    tick(&mut app, 12.0);
    let s = screen(&app, 80, 25);
    assert!(
        s.contains("Verdict: a VOLATILE CACHE acknowledges commits"),
        "{s}"
    );
    assert!(s.contains("commits in 0.08 ms on a 7,200 rpm disk"), "{s}");
    assert!(s.contains("Next: safe only with a battery"), "{s}");
    assert!(s.contains("one revolution (7,200 rpm)"), "{s}");
    assert!(s.contains("h health"), "{s}");
    snap("flush_volatile", &app);
    // h opens the same device's Health view.
    key(&mut app, KeyCode::Char('h'));
    assert_eq!(app.screen, Screen::Health);
}

#[test]
fn a_refusal_is_said_and_shown() {
    let mut app = app_checking_loop0();
    app.update(Msg::job(
        FLUSHCHECK_JOB,
        FlushMsg::Failed("loop0 is mounted on /mnt: nothing was written".into()),
    ));
    assert!(
        matches!(&app.overlay, Some(Overlay::Error(e)) if e.contains("mounted on /mnt")),
        "{:?}",
        app.overlay
    );
    app.overlay = None;
    let s = screen(&app, 80, 25);
    assert!(
        s.contains("loop0 is mounted on /mnt: nothing was written"),
        "{s}"
    );
    // The status line no longer says it is writing.
    let status = app
        .status
        .as_ref()
        .map(|(t, _)| t.clone())
        .unwrap_or_default();
    assert!(!status.contains("writing"), "{status}");
    assert!(status.contains("flush check ended"), "{status}");
}

#[test]
fn x_and_leaving_stop_it_and_f_again_shows_the_running_one() {
    let mut app = app_checking_loop0();
    assert_eq!(
        key(&mut app, KeyCode::Char('x')),
        vec![Cmd::StopJob(FLUSHCHECK_JOB)]
    );
    assert_eq!(app.screens.flush.phase, Phase::Stopping);
    let s = screen(&app, 80, 25);
    assert!(s.contains("stopping: the write cache is put back"), "{s}");
    assert!(key(&mut app, KeyCode::Char('x')).is_empty());
    for leave in [KeyCode::Esc, KeyCode::Char('1')] {
        let mut app = app_checking_loop0();
        assert_eq!(
            key(&mut app, leave),
            vec![Cmd::StopJob(FLUSHCHECK_JOB)],
            "{leave:?}"
        );
        assert_ne!(app.screen, Screen::Flush);
        // Until the worker says it ended, F shows that check and starts no other.
        key(&mut app, KeyCode::Char('1'));
        assert!(key(&mut app, KeyCode::Char('F')).is_empty());
        assert_eq!(app.screen, Screen::Flush);
        assert!(app.overlay.is_none());
    }
}

#[test]
fn no_flush_check_while_a_test_runs() {
    let mut app = app_with("host-loop-zram", true);
    pick_rand_read(&mut app);
    keys(&mut app, "r");
    assert!(app.running());
    key(&mut app, KeyCode::Char('1'));
    assert!(key(&mut app, KeyCode::Char('F')).is_empty());
    assert!(
        matches!(&app.overlay, Some(Overlay::Error(e)) if e.contains("a test is running")),
        "{:?}",
        app.overlay
    );
}

#[test]
fn the_confirmation_leaves_the_selected_row_in_sight() {
    // Every device shown and a loop device in the middle of the list selected: the centred
    // dialog covered its row, and the name showed twice, once in the row's remains and once
    // in the dialog.
    let mut app = app_with("host-loop-zram", true);
    keys(&mut app, "a");
    for _ in 0..6 {
        key(&mut app, KeyCode::Down);
    }
    let name = app.selected_device().unwrap().name.clone();
    assert!(key(&mut app, KeyCode::Char('F')).is_empty());
    for (w, h) in crate::SIZES {
        let s = screen(&app, w, h);
        let row = s
            .lines()
            .find(|l| l.contains(&format!(">{name} ")))
            .unwrap_or_else(|| panic!("no selected row >{name} at {w}x{h}:\n{s}"));
        // The whole row, up to its last cells.
        assert!(
            row.contains("loop   SSD  none        thru"),
            "covered at {w}x{h}:\n{s}"
        );
    }
    snap("flush_confirm_clear_of_the_row", &app);
}
