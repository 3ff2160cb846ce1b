//! The capacity probe screen (`c` on Devices): the typed-name dialog (it says what is
//! overwritten and where the saved sectors go; a wrong name starts nothing), snapshots at
//! 80x25 and 132x43 of a probe running, of a real and a fake verdict and of a refusal, nothing
//! cut; the kept journal and its command when the put-back did not finish; stop and leave.

use std::time::Duration;

use crate::common::tui::*;
use crate::snap;
use disktriage::app::{App, Overlay, Screen};
use disktriage::capacity::{Capacity, Fake, ProbeEnd, Restored};
use disktriage::event::{Cmd, Msg};
use disktriage::flow::{CAPACITY_JOB, CapacityMsg, CapacityOrder, CapacityProgress, CapacityRun};
use ratatui::crossterm::event::KeyCode;

/// The app on Devices with loop0 selected, `c` pressed and `loop0` typed: the probe asked
/// for, with its journal beside the history.
fn app_probing_loop0() -> App {
    let mut app = app_with("host-loop-zram", true);
    assert!(key(&mut app, KeyCode::Char('c')).is_empty());
    assert!(
        matches!(&app.overlay, Some(Overlay::ConfirmCapacity(c)) if c.order.device == "loop0"),
        "{:?}",
        app.overlay
    );
    assert!(keys(&mut app, "loop0").is_empty());
    let cmds: Vec<Cmd> = key(&mut app, KeyCode::Enter)
        .into_iter()
        .map(|c| app.stamp(c))
        .collect();
    let [Cmd::StartJob(order)] = cmds.as_slice() else {
        panic!("{cmds:?}")
    };
    let Some(o) = order.get::<CapacityOrder>() else {
        panic!("{order:?}")
    };
    assert_eq!(
        (o.device.as_str(), o.confirmation.as_str()),
        ("loop0", "loop0")
    );
    assert_eq!(
        o.journal.to_str(),
        Some("/var/lib/disktriage/capacity-loop0.journal")
    );
    assert_eq!(
        o.chosen.as_ref().map(|c| c.name.as_str()),
        Some("loop0"),
        "the device as chosen goes with the command"
    );
    assert_eq!(app.screen, Screen::Capacity);
    app
}

fn news(m: CapacityMsg) -> Msg {
    Msg::job(CAPACITY_JOB, m)
}

/// A 2 TB stick that stores 100 MiB and wraps, or a real 1 GiB device; put back whole
/// unless `cut_short`.
fn done(fake: bool, cut_short: bool) -> Msg {
    let capacity = if fake {
        Capacity {
            sector: 512,
            claimed: 3_906_250_000,
            real: 204_800,
            fake: Some(Fake::Wraps {
                first: 204_800,
                onto: 0,
            }),
            reads: 171,
            writes: 139,
        }
    } else {
        Capacity {
            sector: 4096,
            claimed: 262_144,
            real: 262_144,
            fake: None,
            reads: 83,
            writes: 19,
        }
    };
    let journal = "/var/lib/disktriage/capacity-loop0.journal";
    news(CapacityMsg::Done(Box::new(CapacityRun {
        device: "/dev/loop0".into(),
        name: "loop0".into(),
        model: None,
        end: ProbeEnd::Done(capacity),
        restored: Some(Restored {
            sectors: 16_400,
            verified: if cut_short { 9_000 } else { 16_400 },
            mismatched: Vec::new(),
            error: cut_short.then(|| "write error at LBA 9000: Input/output error".into()),
        }),
        elapsed: Duration::from_millis(4_300),
        journal_kept: cut_short.then(|| journal.into()),
        warnings: Vec::new(),
    })))
}

/// Drawn at both sizes, nothing was cut by the fitting helpers.
fn nothing_cut(app: &App) {
    for (w, h) in [(80, 25), (132, 43)] {
        let (_, cuts) = draw_checked(app, w, h);
        assert!(cuts.is_empty(), "{w}x{h}: {cuts:?}");
    }
}

#[test]
fn the_dialog_says_what_is_written_and_where_and_a_wrong_name_starts_nothing() {
    let mut app = app_with("host-loop-zram", true);
    key(&mut app, KeyCode::Char('c'));
    keys(&mut app, "loop1");
    assert!(key(&mut app, KeyCode::Enter).is_empty());
    let s = screen(&app, 80, 25);
    assert!(
        s.contains("\"loop1\" is not loop0: nothing was written"),
        "{s}"
    );
    for said in [
        "OVERWRITES sectors of loop0",
        "each one back from a copy saved first",
        "/var/lib/disktriage/capacity-loop0.journal",
        "another disk (the probe refuses it otherwise)",
        "Journal (Tab edits):",
    ] {
        assert!(s.contains(said), "{said}: {s}");
    }
    snap("capacity_confirm", &app);
    assert!(key(&mut app, KeyCode::Esc).is_empty());
    assert!(app.overlay.is_none());
    assert_eq!(app.screen, Screen::Devices);
    let s = screen(&app, 80, 25);
    assert!(
        s.contains("capacity probe cancelled: nothing was written"),
        "{s}"
    );
}

#[test]
fn tab_edits_the_journal_the_probe_is_ordered_with() {
    let mut app = app_with("host-loop-zram", true);
    key(&mut app, KeyCode::Char('c'));
    key(&mut app, KeyCode::Tab);
    let default = "/var/lib/disktriage/capacity-loop0.journal";
    for _ in 0.."capacity-loop0.journal".len() {
        key(&mut app, KeyCode::Backspace);
    }
    keys(&mut app, "elsewhere.journal");
    let s = screen(&app, 80, 25);
    assert!(s.contains("Journal (Enter or Tab ends the edit):"), "{s}");
    assert!(s.contains("/var/lib/disktriage/elsewhere.journal_"), "{s}");
    // Enter ends the edit, not the dialog: the name is still to be typed.
    assert!(key(&mut app, KeyCode::Enter).is_empty());
    assert!(app.overlay.is_some());
    let s = screen(&app, 80, 25);
    assert!(s.contains("Journal (Tab edits):"), "{s}");
    assert!(!s.contains(default), "{s}");
    keys(&mut app, "loop0");
    let cmds: Vec<Cmd> = key(&mut app, KeyCode::Enter)
        .into_iter()
        .map(|c| app.stamp(c))
        .collect();
    let [Cmd::StartJob(order)] = cmds.as_slice() else {
        panic!("{cmds:?}")
    };
    let Some(o) = order.get::<CapacityOrder>() else {
        panic!("{order:?}")
    };
    assert_eq!(
        o.journal.to_str(),
        Some("/var/lib/disktriage/elsewhere.journal")
    );
}

#[test]
fn running_shows_the_step_the_clock_and_stop() {
    let mut app = app_probing_loop0();
    tick(&mut app, 11.5);
    app.update(news(CapacityMsg::Progress {
        progress: CapacityProgress::Stamping {
            done: 12 << 20,
            of: 64 << 20,
        },
        elapsed: Duration::from_secs(11),
    }));
    tick(&mut app, 12.0);
    let s = screen(&app, 80, 25);
    for said in [
        "Capacity probe of loop0: 0:12 elapsed, writes",
        "saving and stamping 12.0 of 64.0 MiB",
        "journal: /var/lib/disktriage/capacity-loop0.journal",
        "x stop",
    ] {
        assert!(s.contains(said), "{said}: {s}");
    }
    nothing_cut(&app);
    snap("capacity_running", &app);
}

#[test]
fn a_fake_verdict_is_the_clis_report() {
    let mut app = app_probing_loop0();
    app.update(done(true, false));
    assert!(!app.screens.capacity.running());
    tick(&mut app, 12.0);
    let s = screen(&app, 80, 25);
    for said in [
        "Verdict: FAKE",
        "Verdict    fake: stores 100.0 MiB (104.9 MB) of the 2.0 TB (1.8 TiB) it claims",
        "a write to LBA 204800 lands on LBA 0",
        "Put back   16,400 sectors written back, 16,400 read back as saved",
    ] {
        assert!(s.contains(said), "{said}: {s}");
    }
    assert!(!s.contains("did not finish"), "{s}");
    nothing_cut(&app);
    snap("capacity_done_fake", &app);
}

#[test]
fn a_real_verdict_is_the_clis_report() {
    let mut app = app_probing_loop0();
    app.update(done(false, false));
    let s = screen(&app, 80, 25);
    assert!(s.contains("capacity probe done: real"), "{s}");
    tick(&mut app, 12.0);
    let s = screen(&app, 80, 25);
    for said in [
        "Verdict: real",
        "Verdict    real",
        "of 4096 bytes",
        "nothing to do: it stores every sector it claims",
    ] {
        assert!(s.contains(said), "{said}: {s}");
    }
    nothing_cut(&app);
    snap("capacity_done_real", &app);
}

#[test]
fn a_put_back_cut_short_keeps_the_journal_and_says_the_command() {
    let mut app = app_probing_loop0();
    app.update(done(true, true));
    let s = screen(&app, 132, 43);
    for said in [
        "The put-back did not finish: the saved sectors are kept in \
         /var/lib/disktriage/capacity-loop0.journal; run `disktriage restore",
        "--capacity /var/lib/disktriage/capacity-loop0.journal` to put them back.",
    ] {
        assert!(s.contains(said), "{said}: {s}");
    }
    nothing_cut(&app);
}

#[test]
fn a_refusal_is_said_and_shown() {
    let mut app = app_probing_loop0();
    app.update(news(CapacityMsg::Failed(
        "the journal /var/lib/disktriage/capacity-loop0.journal is on loop0, the device \
         probed: a failure of the disk would take the saved sectors with it"
            .into(),
    )));
    assert!(
        matches!(&app.overlay, Some(Overlay::Error(e)) if e.contains("is on loop0")),
        "{:?}",
        app.overlay
    );
    app.overlay = None;
    tick(&mut app, 12.0);
    let s = screen(&app, 80, 25);
    assert!(
        s.contains("not started, nothing was written: the journal"),
        "{s}"
    );
    nothing_cut(&app);
    snap("capacity_refused", &app);
}

#[test]
fn x_and_leaving_stop_it_and_c_again_shows_the_running_one() {
    let mut app = app_probing_loop0();
    assert_eq!(
        key(&mut app, KeyCode::Char('x')),
        vec![Cmd::StopJob(CAPACITY_JOB)]
    );
    let s = screen(&app, 80, 25);
    assert!(
        s.contains("stopping: every sector written is put back"),
        "{s}"
    );
    assert!(key(&mut app, KeyCode::Char('x')).is_empty());
    for leave in [KeyCode::Esc, KeyCode::Char('1')] {
        let mut app = app_probing_loop0();
        assert_eq!(
            key(&mut app, leave),
            vec![Cmd::StopJob(CAPACITY_JOB)],
            "{leave:?}"
        );
        assert_ne!(app.screen, Screen::Capacity);
        // Until the job says it ended, c shows that probe and starts no other.
        key(&mut app, KeyCode::Char('1'));
        assert!(key(&mut app, KeyCode::Char('c')).is_empty());
        assert_eq!(app.screen, Screen::Capacity);
        assert!(app.overlay.is_none());
    }
}
